"""The cells of the dispatch study, their parameters, outputs and time estimates.

One cell = one system = one Snakemake job per repetition: a platform mode (local,
pull, push, push-naive) or a peer (processpool, dask, celery, ray), run through the
whole protocol of `sweep` (every worker count and workload, `runs_per_worker_count`
times each, and the saturation runs). A platform mode must be one cell: its anomaly
lives in what happens between worker counts, on one platform that stays up. Each cell
is measured `dispatch.repetitions` times, each repetition a job of its own on a fresh
platform; the run interleaves them (parbench.pipeline.run_order: every system once,
then every system again, each repetition shuffled).
"""

from __future__ import annotations

from dataclasses import dataclass

from parbench import paths
from parbench.progress import cells_to_measure
from parbench.records import failed_in_run

MODES = ("local", "pull", "push", "push-naive")
PEERS = ("processpool", "dask", "celery", "ray")
SYSTEMS = MODES + PEERS
RAW = paths.RAW + "/dispatch"
CELL = RAW + "/{system}_r{rep}"
HISTORY = RAW + "/history"
# What a cell's record must keep to be read back (bump when its layout changes).
RECORD_VERSION = 2


@dataclass(frozen=True, order=True)
class DispatchCell:
    system: str
    # which repetition of the system's protocol (from 0)
    rep: int = 0

    @classmethod
    def from_wildcards(cls, wildcards) -> "DispatchCell":
        return cls(wildcards.system, int(wildcards.rep))

    @property
    def kind(self) -> str:
        return "platform" if self.system in MODES else "peer"

    @property
    def label(self) -> str:
        return f"dispatch {self.system} r{self.rep}"

    def record(self, profile: str) -> str:
        return f"{CELL.format(profile=profile, system=self.system, rep=self.rep)}.json"


def cells(cfg: dict) -> list[DispatchCell]:
    dc = cfg["dispatch"]
    return [DispatchCell(s, rep) for rep in range(dc["repetitions"]) for s in [*dc["modes"], *dc["peers"]]]


def cell_records(cfg: dict) -> list[str]:
    return [c.record(cfg["profile"]) for c in cells(cfg)]


def sweep_parameters(cfg: dict) -> dict:
    """What the protocol needs (everything but the estimate and the number of
    repetitions: adding repetitions adds cells and reruns none)."""
    dc = cfg["dispatch"]
    return {k: v for k, v in dc.items() if k not in ("modes", "peers", "repetitions", "estimate", "cell_overhead_sec")}


def cell_parameters(cfg: dict, cell: DispatchCell) -> dict:
    """Everything that decides what a cell measures: Snakemake reruns a cell when it
    changes (the platform's settings do not concern peers)."""
    params = {"system": cell.system, **sweep_parameters(cfg)}
    if cell.kind == "peer":
        params.pop("platform")
        params.pop("local_processes_per_worker")
    return params


def runs_of(cfg: dict) -> list[tuple[int, str, str, int]]:
    """(workers, workload or 'saturation', submission, tasks) of every run of one cell
    (one repetition)."""
    dc = cfg["dispatch"]
    out = []
    for workers in dc["workers"]:
        for _ in range(dc["runs_per_worker_count"]):
            out += [(workers, w, "per_task", dc["tasks_per_worker"] * workers) for w in dc["workloads"]]
        if workers in dc["saturation"]["workers"]:
            for _ in range(dc["saturation"]["runs"]):
                out += [(workers, "saturation", s, dc["saturation"]["tasks"]) for s in dc["saturation"]["submissions"]]
    return out


def cell_estimate_sec(cfg: dict, cell: DispatchCell) -> float:
    """Seconds a cell (one repetition) takes by the profile's estimate figures (printed
    before the run)."""
    dc = cfg["dispatch"]
    est = dc["estimate"]
    slots = lambda w: w * (dc["local_processes_per_worker"] if cell.system == "local" else dc["processes_per_worker"])  # noqa: E731
    seconds = dc["cell_overhead_sec"]
    if cell.kind == "platform":
        seconds += est["platform_start_sec"] + len(dc["workers"]) * est["worker_start_sec"]
    else:
        # Ray starts one cluster for the cell, the others one per worker count
        starts = 1 if cell.system == "ray" else len(dc["workers"])
        seconds += starts * est["peer_start_sec"][cell.system]
    rate = est["saturation_tasks_per_sec"]["platform" if cell.kind == "platform" else cell.system]
    for workers, workload, submission, tasks in runs_of(cfg):
        if workload == "saturation":
            seconds += tasks / rate / (4 if submission == "batch" else 1)
        elif workload == "io":
            seconds += 0.05 + dc["io_sleep_sec"] * -(-tasks // slots(workers))
        else:
            seconds += 0.05
    if cell.system == "push-naive":
        # the anomaly: the first run after each change of workers waits for the heartbeats
        # of the previous workers to lapse
        p = dc["platform"]
        seconds += (len(dc["workers"]) - 1) * p["heartbeat_interval_sec"] * p["heartbeat_liveness"]
    return seconds


def job_seconds() -> dict:
    return {"dispatch_cell": lambda cfg, wildcards: cell_estimate_sec(cfg, DispatchCell(wildcards["system"],
                                                                                         int(wildcards.get("rep", 0))))}


def header(cfg: dict, jobs: list[tuple[str, dict]]) -> list[str]:
    dc = cfg["dispatch"]
    todo = [DispatchCell(w["system"], int(w.get("rep", 0))) for name, w in jobs if name == "dispatch_cell"]
    total = len(cells(cfg))
    sat = dc["saturation"]
    return [
        "FUNCTION DISPATCH BENCHMARK (dispatch) - the MPCSFaaS platform against Dask, Celery and Ray",
        f"Modes: {', '.join(dc['modes']) or 'none'}; peers: {', '.join(dc['peers']) or 'none'}",
        f"Workers: {dc['workers']} x {dc['processes_per_worker']} processes "
        f"(local: x {dc['local_processes_per_worker']}); {dc['tasks_per_worker']} tasks per worker; "
        f"workloads {', '.join(dc['workloads'])}; {dc['runs_per_worker_count']} run(s) per worker count",
        f"Saturation: {sat['tasks']:,} no-op tasks at {sat['workers'] or 'no'} workers, "
        f"{', '.join(sat['submissions'])}, {sat['runs']} run(s)",
        f"Each system {dc['repetitions']} time(s), a fresh platform or cluster each time, interleaved",
        cells_to_measure(len(todo), total, sum(cell_estimate_sec(cfg, c) for c in todo)),
    ]


def failures(cfg: dict, run_id: str | None) -> list[str]:
    return [f"FAILED: {cell.label}: {record['failure']}" for cell in cells(cfg)
            if (record := failed_in_run(cell.record(cfg["profile"]), run_id))]


def config_errors(cfg: dict) -> list[str]:
    dc = cfg.get("dispatch", {})
    errors = []
    workers = dc.get("workers") or []
    if isinstance(workers, list) and workers and 1 not in workers:
        errors.append(f"dispatch.workers: {workers} has no 1; allowed: a list of worker counts that includes 1 "
                      f"(the baseline of weak-scaling efficiency)")
    sat = dc.get("saturation", {})
    extra = [w for w in sat.get("workers", []) if isinstance(workers, list) and w not in workers]
    if extra:
        errors.append(f"dispatch.saturation.workers: {extra} not in dispatch.workers {workers}; allowed: "
                      f"worker counts of the sweep")
    if not dc.get("modes") and not dc.get("peers"):
        errors.append("dispatch.modes and dispatch.peers are both empty; allowed: at least one mode or peer")
    client = dc.get("client", {})
    if isinstance(client.get("wait_sec"), (int, float)) and isinstance(client.get("run_timeout_sec"), (int, float)) \
            and client["wait_sec"] > client["run_timeout_sec"]:
        errors.append(f"dispatch.client.wait_sec: {client['wait_sec']} is longer than dispatch.client.run_timeout_sec "
                      f"({client['run_timeout_sec']}); allowed: wait_sec <= run_timeout_sec")
    return errors
