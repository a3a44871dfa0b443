"""The cells of the dispatch study, their parameters, outputs and time estimates.

One cell = one system = one Snakemake job per repetition: a platform mode (local,
pull, push, push-naive) or a peer (processpool, dask, celery, ray), run through the
whole protocol of `sweep` (every worker count and workload, `runs_per_worker_count`
times each, and the saturation runs). A platform mode must be one cell: its anomaly
lives in what happens between worker counts, on one platform that stays up. Each cell
is measured `dispatch.repetitions` times, each repetition a job of its own on a fresh
platform; the run interleaves them (parbench.pipeline.run_order: every system once,
then every system again, each repetition shuffled).

The push anomaly's experiments (`dispatch.anomaly`) are cells too: a platform mode run
through the protocol with one thing changed (the worker counts, the heartbeat expiry,
the order of the workloads) and no saturation runs, `anomaly.repetitions` times. Their
key is `<system>@<experiment>` (`push-naive@expiry-1x6`, `push-naive@order-io-noop-cpu`,
`push@workers-1-2-4-8`); the main sweep's cells are the system alone (experiment
`main`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

from parbench import paths
from parbench.studies.base import CellPaths

MODES = ("local", "pull", "push", "push-naive")
PEERS = ("processpool", "dask", "celery", "ray")
SYSTEMS = MODES + PEERS
MAIN = "main"
RAW = paths.RAW + "/dispatch"
CELL = RAW + "/{system}_r{rep}"
HISTORY = RAW + "/history"
# What a cell's record must keep to be read back (bump when its layout changes).
RECORD_VERSION = 3
# The `system` wildcard of a cell's record: a system, and an experiment after an @.
SYSTEM_PATTERN = r"(?:" + "|".join(SYSTEMS) + r")(?:@[A-Za-z0-9.-]+)?"


@dataclass(frozen=True, order=True)
class DispatchCell(CellPaths):
    system: str
    # which repetition of the system's protocol (from 0)
    rep: int = 0
    # the anomaly experiment this cell belongs to ("" for the main sweep)
    experiment: str = ""

    @classmethod
    def parse(cls, key: str, rep: int = 0) -> "DispatchCell":
        """The cell of a key `system` or `system@experiment`."""
        system, _, experiment = key.partition("@")
        return cls(system, rep, experiment)

    @classmethod
    def from_wildcards(cls, wildcards) -> "DispatchCell":
        return cls.parse(wildcards.system, int(wildcards.rep))

    @property
    def key(self) -> str:
        return f"{self.system}@{self.experiment}" if self.experiment else self.system

    @property
    def kind(self) -> str:
        return "platform" if self.system in MODES else "peer"

    @property
    def label(self) -> str:
        return f"dispatch {self.key} r{self.rep}"

    def stem(self, profile: str) -> str:
        return CELL.format(profile=profile, system=self.key, rep=self.rep)

    def history(self, profile: str) -> Path:
        return Path(HISTORY.format(profile=profile)) / f"{self.key}_r{self.rep}"


def _num(x: float) -> str:
    return f"{x:g}"


def experiments(cfg: dict) -> dict[str, dict]:
    """The anomaly's experiments of the profile: name -> {"kind": scale | expiry | order,
    "systems", "overrides" (of the protocol's parameters), "setting" (what changed, in
    words)}. A scale experiment whose worker counts are the main sweep's has no cells
    (the main cells are it)."""
    dc = cfg["dispatch"]
    an = dc["anomaly"]
    out = {}
    scale = an["scale"]
    if scale["systems"] and scale.get("workers") and list(scale["workers"]) != list(dc["workers"]):
        name = "workers-" + "-".join(str(w) for w in scale["workers"])
        out[name] = {"kind": "scale", "systems": list(scale["systems"]), "setting": f"workers {scale['workers']}",
                     "overrides": {"workers": list(scale["workers"])}}
    expiry = an["expiry"]
    for interval, liveness in (expiry.get("heartbeats") or []) if expiry["systems"] else []:
        name = f"expiry-{_num(interval)}x{liveness}"
        out[name] = {"kind": "expiry", "systems": list(expiry["systems"]),
                     "setting": f"heartbeat {_num(interval)} s x {liveness} = {_num(interval * liveness)} s",
                     "overrides": {"workers": list(expiry["workers"]),
                                   "platform": {"heartbeat_interval_sec": float(interval),
                                                "heartbeat_liveness": int(liveness)}}}
    order = an["order"]
    for workloads in (order.get("orders") or []) if order["systems"] else []:
        name = "order-" + "-".join(workloads)
        out[name] = {"kind": "order", "systems": list(order["systems"]), "setting": f"workloads {', '.join(workloads)}",
                     "overrides": {"workers": list(order["workers"]), "workloads": list(workloads)}}
    return out


def cells(cfg: dict) -> list[DispatchCell]:
    dc = cfg["dispatch"]
    main = [DispatchCell(s, rep) for rep in range(dc["repetitions"]) for s in [*dc["modes"], *dc["peers"]]]
    exps = experiments(cfg)
    extra = [DispatchCell(system, rep, name) for rep in range(dc["anomaly"]["repetitions"])
             for name, exp in exps.items() for system in exp["systems"]]
    return main + extra


def cell_records(cfg: dict) -> list[str]:
    return [c.record(cfg["profile"]) for c in cells(cfg)]


def sweep_parameters(cfg: dict) -> dict:
    """What the main protocol needs (everything but the estimate, the number of
    repetitions and the experiments: adding repetitions adds cells and reruns none)."""
    dc = cfg["dispatch"]
    return {k: v for k, v in dc.items()
            if k not in ("modes", "peers", "repetitions", "estimate", "cell_overhead_sec", "anomaly")}


def protocol(cfg: dict, cell: DispatchCell) -> dict:
    """What one cell's protocol needs: the main one, or an experiment's (its overrides,
    and no saturation runs)."""
    params = copy.deepcopy(sweep_parameters(cfg))
    if cell.experiment:
        exps = experiments(cfg)
        if cell.experiment not in exps:
            raise ValueError(f"unknown dispatch experiment {cell.experiment!r}; allowed with this profile: "
                             f"{', '.join(exps) or 'none'}")
        overrides = exps[cell.experiment]["overrides"]
        for key, value in overrides.items():
            if isinstance(value, dict):
                params[key].update(value)
            else:
                params[key] = value
        params["saturation"]["workers"] = []
    return params


def cell_parameters(cfg: dict, cell: DispatchCell) -> dict:
    """Everything that decides what a cell measures: Snakemake reruns a cell when it
    changes (the platform's settings do not concern peers)."""
    params = {"system": cell.system, "experiment": cell.experiment or MAIN, **protocol(cfg, cell)}
    if cell.kind == "peer":
        params.pop("platform")
        params.pop("local_processes_per_worker")
    return params


def runs_of(params: dict) -> list[tuple[int, str, str, int]]:
    """(workers, workload or 'saturation', submission, tasks) of every run of one cell
    (one repetition), from its protocol's parameters."""
    out = []
    for workers in params["workers"]:
        for _ in range(params["runs_per_worker_count"]):
            out += [(workers, w, "per_task", params["tasks_per_worker"] * workers) for w in params["workloads"]]
        if workers in params["saturation"]["workers"]:
            for _ in range(params["saturation"]["runs"]):
                out += [(workers, "saturation", s, params["saturation"]["tasks"])
                        for s in params["saturation"]["submissions"]]
    return out


def cell_estimate_sec(cfg: dict, cell: DispatchCell) -> float:
    """Seconds a cell (one repetition) takes by the profile's estimate figures (printed
    before the run)."""
    dc = cfg["dispatch"]
    params = protocol(cfg, cell)
    est = dc["estimate"]
    from parbench.studies.dispatch.sweep import processes_per_worker

    slots = lambda w: w * processes_per_worker(params, cell.system)  # noqa: E731
    seconds = dc["cell_overhead_sec"]
    if cell.kind == "platform":
        seconds += est["platform_start_sec"] + len(params["workers"]) * est["worker_start_sec"]
    else:
        # Ray starts one cluster for the cell, the others one per worker count
        starts = 1 if cell.system == "ray" else len(params["workers"])
        seconds += starts * est["peer_start_sec"][cell.system]
    rate = est["saturation_tasks_per_sec"]["platform" if cell.kind == "platform" else cell.system]
    for workers, workload, submission, tasks in runs_of(params):
        if workload == "saturation":
            seconds += tasks / rate / (4 if submission == "batch" else 1)
        elif workload == "io":
            seconds += 0.05 + params["io_sleep_sec"] * -(-tasks // slots(workers))
        else:
            seconds += 0.05
    if cell.system == "push-naive":
        # the anomaly: the first run after each change of workers waits for the heartbeats
        # of the previous workers to lapse
        p = params["platform"]
        seconds += (len(params["workers"]) - 1) * p["heartbeat_interval_sec"] * p["heartbeat_liveness"]
    return seconds
