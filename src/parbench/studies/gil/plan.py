"""The cells of the gil study, what each measures, and how long they take.

One cell = one (runtime, workload) point, measured `gil.repetitions` times: one
Snakemake job and one launch of the interpreter per repetition, running the worker
script (`worker.py`), which measures the workload in every configured execution and
worker count (sequential once; threads and processes at each worker count), warm-up runs
first, then `gil.runs_per_cell` timed runs of every point, round-robin. The run
interleaves the repetitions (parbench.pipeline.run_order: every cell once, then again,
each repetition shuffled), so that drift of the machine hits every runtime alike. One
launch measuring every point keeps a JIT's warm-up (PyPy, the JVM under Jython) inside
the interpreter that is measured and outside the timed runs, and pays Jython's seconds
of start-up once per workload and repetition rather than once per point.

Runtimes are resolved when the cells are planned (`runtimes.resolve_all`): one that does
not resolve (its command is not on this machine, its environment variable is unset)
gets no cells and is listed as not measured, with the reason.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from parbench import paths
from parbench.studies.gil import runtimes as rt
from parbench.studies.gil import workloads as wl
from parbench.studies.base import CellPaths

# One record per (runtime, workload) under data/raw/<profile>/gil/.
RAW = paths.RAW + "/gil"
CELL = RAW + "/{runtime}/{workload}_r{rep}"
HISTORY = RAW + "/history"
# The script every interpreter runs (the rules name it relative to the checkout, so that
# a change to it reruns the cells).
WORKER = Path(__file__).resolve().parent / "worker.py"
WORKER_SOURCE = "src/parbench/studies/gil/worker.py"
EXECUTIONS = ("sequential", "threads", "processes")
# A study that measured threads on native calls in the same run: its table, when it ran,
# is set beside this study's native-call workload in the paper.
RELATED_STUDY, RELATED_TABLE = "sigpar", "sigpar_cells"


@dataclass(frozen=True, order=True)
class GilCell(CellPaths):
    runtime: str
    workload: str
    # which repetition (interpreter launch) of the point, from 0
    rep: int = 0

    @property
    def label(self) -> str:
        return f"{self.runtime} {self.workload} r{self.rep}"

    def stem(self, profile: str) -> str:
        return CELL.format(profile=profile, runtime=self.runtime, workload=self.workload, rep=self.rep)

    def history(self, profile: str) -> Path:
        return Path(HISTORY.format(profile=profile)) / self.runtime / f"{self.workload}_r{self.rep}"


def resolved(cfg: dict) -> list[rt.Resolution]:
    return rt.resolve_all(cfg)


def measured_runtimes(cfg: dict) -> list[rt.Resolution]:
    """The configured runtimes found on this machine, in `gil.measure` order."""
    return [r for r in resolved(cfg) if r.found]


def cells(cfg: dict) -> list[GilCell]:
    """Repetition by repetition; in each, runtime by runtime (the baseline first), each
    workload in catalog order (the run shuffles each repetition's cells)."""
    gc = cfg["gil"]
    runtimes = measured_runtimes(cfg)
    found = [r.name for r in runtimes]
    # the native control has only the sum workloads
    control = {r.name for r in runtimes if r.control}
    order = sorted(found, key=lambda name: (name != gc["baseline"], found.index(name)))
    return [GilCell(name, w, rep) for rep in range(gc["repetitions"])
            for name in order for w in wl.ORDER if w in gc["workloads"]
            and (name not in control or wl.get(w).kind == "sum_range")]


def cell_records(cfg: dict) -> list[str]:
    return [c.outputs(cfg["profile"])["record"] for c in cells(cfg)]


def configs(cfg: dict) -> list[tuple[str, int]]:
    """The (execution, workers) points each cell measures: sequential once, then threads
    and processes at every worker count."""
    gc = cfg["gil"]
    out = [("sequential", 1)] if "sequential" in gc["executions"] else []
    for execution in ("threads", "processes"):
        if execution in gc["executions"]:
            out += [(execution, w) for w in sorted(gc["workers"])]
    return out


@cache
def worker_digest() -> str:
    return hashlib.sha256(WORKER.read_bytes()).hexdigest()[:16]


def warmup_runs(cfg: dict, runtime: str) -> int:
    """The runtime's own warm-up count (a JIT may need more), else the study's."""
    own = cfg["gil"]["runtimes"][runtime]["warmup_runs"]
    return cfg["gil"]["warmup_runs"] if own is None else own


def worker_spec(cfg: dict, runtime: str, workload: str, repetitions: int | None = None,
                warmups: int | None = None, config_points: list | None = None) -> dict:
    """What the worker script is asked to do for one repetition of a cell (its
    `repetitions` are the timed runs of every point in this launch: `gil.runs_per_cell`)."""
    gc = cfg["gil"]
    section = gc["workloads"][workload]
    params = wl.params_of(workload, section)
    scale = gc["runtimes"][runtime].get("work_scale", 1)
    if scale != 1 and "repeat" in params:  # the native control: its loop is far faster than Python's
        params = {**params, "repeat": params["repeat"] * scale}
    return {"workload": workload, "kind": wl.get(workload).kind, "chunks": section["chunks"],
            "params": params,
            "configs": [list(c) for c in (config_points or configs(cfg))],
            "warmup_runs": warmup_runs(cfg, runtime) if warmups is None else warmups,
            "jit_quiet": gc["jit_quiet"],
            "repetitions": gc["runs_per_cell"] if repetitions is None else repetitions}


def cell_parameters(cfg: dict, cell: GilCell) -> dict:
    """Everything that decides what a cell measures (Snakemake reruns it when this
    changes): the runtime's command as resolved here, the worker's spec and the worker
    script itself. The number of repetitions is not among them: more repetitions add
    cells and leave the measured ones as they are."""
    gc = cfg["gil"]
    resolution = rt.resolve(cell.runtime, gc["runtimes"][cell.runtime], cpython_cfg=gc["cpython"])
    return {"runtime": cell.runtime, "command": list(resolution.argv or []), "build": resolution.build,
            "env": resolution.env, "require": resolution.require,
            "gil": gc["runtimes"][cell.runtime]["gil"], "spec": worker_spec(cfg, cell.runtime, cell.workload),
            "timeout_sec": gc["timeout_sec"], "worker_sha256": worker_digest()}


# --- CPython built from source ----------------------------------------------------------------

def builds(cfg: dict) -> list[str]:
    """The flavours of CPython the measured runtimes need built (cpython.FLAVOURS order)."""
    from parbench.studies.gil import cpython

    wanted = {r.build for r in measured_runtimes(cfg) if r.build}
    return [f for f in cpython.FLAVOURS if f in wanted]


def cell_inputs(cfg: dict, runtime: str) -> dict:
    """The cell rule's inputs beside the worker: the build's record for a runtime the
    study builds (a rebuilt interpreter reruns its cells)."""
    resolution = next((r for r in resolved(cfg) if r.name == runtime), None)
    return {"needs": resolution.needs} if resolution and resolution.needs else {}


def source_parameters(cfg: dict) -> dict:
    """What decides the CPython source (the source rule reruns when it changes): the
    versions, suites and pins, the tarball PARBENCH_CPYTHON_SOURCE names (path, size,
    time), and, when the last fetch found nothing, a fresh token so that it is tried again."""
    import os
    import time

    from parbench.studies.gil import cpython

    named = os.environ.get(cpython.SOURCE_ENV, "").strip()
    tarball = None
    if named and os.path.isfile(named):
        st = os.stat(named)
        tarball = [os.path.abspath(named), st.st_size, int(st.st_mtime)]
    record = Path(cpython.SOURCE_RECORD)
    retry = None
    if record.exists():
        try:
            available = json.loads(record.read_text()).get("available")
        except ValueError:
            available = False
        retry = None if available else f"retry {int(time.time())}"
    c = cfg["gil"]["cpython"]
    return {"versions": c["versions"], "debian_suites": c["debian_suites"], "pins": c["pins"],
            "tarball": tarball or named or None, "retry": retry}


def build_parameters(cfg: dict) -> dict:
    """What a CPython build is made with (the build rule reruns when it changes)."""
    from parbench.studies.gil import cpython

    c = cfg["gil"]["cpython"]
    return {"configure_args": c["configure_args"], "skip_modules": sorted(c["skip_modules"]),
            "build_version": cpython.BUILD_VERSION}


def build_estimate_sec(cfg: dict, flavour: str) -> float:
    """Seconds one flavour's build takes on the profile's machine (a cached one: seconds)."""
    return cfg["gil"]["cpython"]["build_estimate_sec"]


def resolution_summary(cfg: dict) -> str:
    """The runtimes as resolved here, as one line (the aggregation reruns when it changes)."""
    return json.dumps([r.summary() for r in resolved(cfg)], sort_keys=True)


def related_tables(cfg: dict, processed: str) -> list[str]:
    """Input function of the paper rule: the related study's table when it is in the run."""
    return [f"{processed}/{RELATED_TABLE}.parquet"] if RELATED_STUDY in cfg["studies"] else []


# --- time estimates -------------------------------------------------------------------------

def config_estimate_sec(cfg: dict, runtime: str, workload: str, execution: str, workers: int) -> float:
    """Seconds one run of a point takes: the workload's sequential time on this profile's
    machine, scaled by the runtime's speed; threads counted as sequential (a GIL
    serializes them), processes as divided among the workers plus their start."""
    gc = cfg["gil"]
    one = gc["workloads"][workload]["estimate_sec"] * gc["runtimes"][runtime]["speed_factor"]
    if execution == "processes":
        return one / workers + gc["process_start_sec"] * workers
    return one


def cell_estimate_sec(cfg: dict, cell: GilCell) -> float:
    gc = cfg["gil"]
    runs = warmup_runs(cfg, cell.runtime) + gc["runs_per_cell"]
    timed = sum(config_estimate_sec(cfg, cell.runtime, cell.workload, e, w) for e, w in configs(cfg))
    return gc["cell_overhead_sec"] + gc["runtimes"][cell.runtime]["startup_sec"] + runs * timed
