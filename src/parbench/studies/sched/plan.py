"""The cells of the sched study, the driver command of each, and time estimates.

One cell = one (workload, scheduler, threads) point, measured `sched.repetitions` times:
one Snakemake job per repetition, which runs the `parbench-sched` driver (native/sched)
for `runs_per_cell` consecutive timed sorts (quicksort) or `frames` frames (Mandelbrot).
The run interleaves the repetitions (parbench.pipeline.run_order: every cell once, then
again, each repetition shuffled). The sequential sort / render is measured at one thread
only: it is the baseline of speedup. Peers (OpenMP, TBB) exist for quicksort only.
Beside the cells, one job replays the fracsteal explorer's zoom (`fracsteal.py`), once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from parbench import paths
from parbench.studies.base import CellPaths

# One folder per workload, one record per (scheduler, threads), under data/raw/<profile>/.
RAW = paths.RAW + "/sched"
CELL = RAW + "/{workload}/{scheduler}_t{threads:02d}_r{rep}"
HISTORY = RAW + "/history"
IMAGE = RAW + "/mandelbrot/sched_image.ppm"
# The driver and the record of which peers it was built with.
BUILD = "native/build/sched"
DRIVER = BUILD + "/parbench-sched"
PEERS_RECORD = BUILD + "/peers.json"
# Seconds to build the driver from scratch (make is incremental), for the estimate.
BUILD_SEC = 20.0

WORKLOADS = ("quicksort", "mandelbrot")
SCHEDULER_ORDER = ["sequential", "lifo", "ws", "ws_sync", "openmp", "tbb", "tbb_parallel_sort"]
# Peers of other runtimes: the same quicksort on OpenMP tasks and on a TBB task_group, and
# tbb::parallel_sort, another algorithm, as a reference drawn and named apart.
PEERS = ("openmp", "tbb", "tbb_parallel_sort")
REFERENCES = ("tbb_parallel_sort",)


@dataclass(frozen=True, order=True)
class SchedCell(CellPaths):
    workload: str
    scheduler: str
    threads: int
    # which repetition of the point (from 0)
    rep: int = 0

    @property
    def label(self) -> str:
        return f"{self.workload} {self.scheduler} t{self.threads} r{self.rep}"

    def stem(self, profile: str) -> str:
        return CELL.format(profile=profile, workload=self.workload, scheduler=self.scheduler,
                           threads=self.threads, rep=self.rep)

    def outputs(self, profile: str) -> dict[str, str]:
        return {**super().outputs(profile), "console": f"{self.stem(profile)}.txt"}

    def history(self, profile: str) -> Path:
        return Path(HISTORY.format(profile=profile)) / self.workload / f"{self.scheduler}_t{self.threads:02d}_r{self.rep}"


def schedulers_of(cfg: dict, workload: str) -> list[str]:
    sc = cfg["sched"]
    names = ["sequential", *sc["schedulers"], *(sc["peers"] if workload == "quicksort" else [])]
    return sorted(dict.fromkeys(names), key=SCHEDULER_ORDER.index)


def cells(cfg: dict) -> list[SchedCell]:
    sc = cfg["sched"]
    out = []
    for rep in range(sc["repetitions"]):
        for workload in WORKLOADS:
            for scheduler in schedulers_of(cfg, workload):
                threads = [1] if scheduler == "sequential" else sorted(sc["threads"])
                out += [SchedCell(workload, scheduler, t, rep) for t in threads]
    return out


def cell_records(cfg: dict) -> list[str]:
    """The record (`.json`) of every cell."""
    return [c.outputs(cfg["profile"])["record"] for c in cells(cfg)]


def cell_parameters(cfg: dict, cell: SchedCell) -> dict:
    """Everything that decides what a cell measures: Snakemake reruns a cell when this
    changes. The number of repetitions is not among them: more repetitions add cells and
    leave the measured ones as they are."""
    sc = cfg["sched"]
    params = {"workload": cell.workload, "scheduler": cell.scheduler, "threads": cell.threads,
              "backoff": sc["backoff"]}
    if cell.workload == "quicksort":
        params.update(runs_per_cell=sc["runs_per_cell"],
                      **{k: v for k, v in sc["quicksort"].items() if k != "estimate_sec"})
    else:
        params.update({k: v for k, v in sc["mandelbrot"].items() if k != "estimate_sec"})
    return params


def driver_command(cfg: dict, cell: SchedCell, driver: str, json_path: str | None = None,
                   image_path: str | None = None, frames: int | None = None) -> list[str]:
    sc = cfg["sched"]
    cmd = [str(driver), cell.workload, "--scheduler", cell.scheduler, "--threads", str(cell.threads),
           "--backoff-min-ns", str(sc["backoff"]["min_ns"]), "--backoff-max-ns", str(sc["backoff"]["max_ns"])]
    if json_path:
        cmd += ["--json", str(json_path)]
    if cell.workload == "quicksort":
        q = sc["quicksort"]
        cmd += ["--size", str(q["size"]), "--cutoff", str(q["cutoff"]), "--seed", str(q["seed"]),
                "--reps", str(sc["runs_per_cell"])]
    else:
        m = sc["mandelbrot"]
        cmd += ["--width", str(m["width"]), "--height", str(m["height"]), "--threshold", str(m["threshold_pixels"]),
                "--max-iter", str(m["max_iter"]), "--frames", str(frames or m["frames"])]
        if image_path:
            cmd += ["--image", str(image_path)]
    return cmd


def cell_estimate_sec(cfg: dict, cell: SchedCell) -> float:
    """Seconds the cell takes, from the profile's sequential figures assuming linear
    speedup (an estimate, printed before the run)."""
    sc = cfg["sched"]
    if cell.workload == "quicksort":
        one = sc["quicksort"]["estimate_sec"]
        # input generation and the verification cost about a third of a sort each run
        timed = sc["runs_per_cell"] * (one / cell.threads + one / 3)
    else:
        one = sc["mandelbrot"]["estimate_sec"]
        # every frame is compared with a sequential render of the same view
        timed = sc["mandelbrot"]["frames"] * (one / cell.threads + one)
    return sc["cell_overhead_sec"] + timed
