"""The dispatch study as a class (`parbench.studies.benchmark.Benchmark`): what it is, how
a cell is measured and checked, its figures. parbench's runner does the rest of a cell's
life (`parbench.runner`). The study keeps its own cell rule (`workflow/rules/dispatch.smk`),
cell command (`run_cell.py`) and paper module (`paper.py`): its cells' files have the
paths they had before the runner, so no cell is measured again because of it."""

from __future__ import annotations

from pathlib import Path

from parbench.records import read_records
from parbench.studies.base import Command, SystemPackage
from parbench.studies.benchmark import Figure, StudyWithOwnRules, Unavailable
from parbench.studies.dispatch import plan
from parbench.studies.dispatch.plan import DispatchCell
from parbench.studies.dispatch.run_cell import (columnar, console_line, make_runner, rep_suffix, repetitions_of,
                                                versions)
from parbench.words import counted


class Dispatch(StudyWithOwnRules):
    """The seed's function-as-a-service platform (HTTP gateway, Redis, ZeroMQ workers) in
    local, pull and push modes, the seed's push design (push-naive) with its anomaly
    explained, against ProcessPoolExecutor, Dask, Celery and Ray. A cell is one repetition
    of one system's run through the seed's protocol; every task's result is checked."""

    name = "dispatch"
    title = "Function dispatch"
    summary = ("a function-as-a-service platform (HTTP gateway, Redis, ZeroMQ workers) in local, pull and push "
               "modes against ProcessPoolExecutor, Dask, Celery and Ray on no-op, CPU and I/O tasks")
    Cell = DispatchCell
    # a cell's record holds every task's row
    COMPACT_RECORD = True
    INTERRUPTED = "everything it started is stopped, no output written"
    MEASURED = ("Measured by the dispatch study: each cell is one platform mode (measured through its HTTP "
                "gateway) or one peer (through its own API), run through the seed's protocol (the worker counts "
                "of dispatch.workers in turn, the seed's 1, 2, 4, 8 by default; no-op, CPU and I/O tasks; "
                "saturation runs), dispatch.repetitions times, the repetitions interleaved across the systems in "
                "a shuffled order kept with its seed. Every task's result is checked against the expected value; "
                "runs that failed a check, and peers that could not run on the machine, are not drawn, and "
                "legends list only the systems drawn. A point or run of a repetition that stayed disturbed (the "
                "machine busy elsewhere after every attempt, dispatch_load) carries an open red diamond; the "
                "anomaly figure says so in its panel's title, and the latency ECDF pools such tasks unmarked. "
                "Log axes are labelled at powers of ten.")
    PLAN = plan
    TABLES = ("summary", "runs", "tasks", "depth", "anomaly", "cells")
    SEED_FILES = ("dispatch_report.md",)
    COMMANDS = {"dispatch-cell": "parbench.studies.dispatch.run_cell"}
    SYSTEM_PACKAGES = (
        SystemPackage("redis-server", Command("redis-server"),
                      "the platform's state store and the Celery peer's broker (started per cell on a "
                      "loopback port, no persistence)", brew="redis"),
    )
    FIGURES = (
        Figure("dispatch_throughput", "throughput", ("dispatch_summary",), "fig-dispatch-throughput"),
        Figure("dispatch_latency", "latency", ("dispatch_tasks",), "fig-dispatch-latency"),
        Figure("dispatch_weak_scaling", "weak_scaling", ("dispatch_runs",), "fig-dispatch-weak-scaling"),
        Figure("dispatch_anomaly", "anomaly", ("dispatch_tasks", "dispatch_depth", "dispatch_runs"),
               "fig-dispatch-anomaly"),
        Figure("dispatch_dose_response", "dose_response", ("dispatch_runs",), "fig-dispatch-dose"),
        Figure("dispatch_order", "order_figure", ("dispatch_runs",), "fig-dispatch-order"),
        Figure("dispatch_saturation", "saturation", ("dispatch_summary",), "fig-dispatch-saturation"),
    )

    CELL_RULES = {"dispatch_cell": DispatchCell}

    # --- the run's header and the config's checks -------------------------------------------------

    def describe(self, cfg: dict, jobs: list[tuple[str, dict]]) -> list[str]:
        dc = cfg["dispatch"]
        sat = dc["saturation"]
        local = dc["local_processes_per_worker"] or dc["processes_per_worker"]
        exps = plan.experiments(cfg)
        lines = [
            "FUNCTION DISPATCH BENCHMARK (dispatch) - the MPCSFaaS platform against Dask, Celery and Ray",
            f"Modes: {', '.join(dc['modes']) or 'none'}; peers: {', '.join(dc['peers']) or 'none'}",
            f"Workers: {dc['workers']} x {dc['processes_per_worker']} processes "
            f"(local: x {local}); {dc['tasks_per_worker']} tasks per worker; "
            f"workloads {', '.join(dc['workloads'])}; {counted(dc['runs_per_worker_count'], 'run')} per worker count",
            f"Saturation: {sat['tasks']:,} no-op tasks at {sat['workers'] or 'no'} workers, "
            f"{', '.join(sat['submissions'])}, {counted(sat['runs'], 'run')}",
            f"Each system {counted(dc['repetitions'], 'time')}, a fresh platform or cluster each time, interleaved",
        ]
        if exps:
            lines.append(f"Anomaly experiments ({counted(dc['anomaly']['repetitions'], 'time')} each): "
                         + "; ".join(f"{', '.join(e['systems'])} with {e['setting']}" for e in exps.values()))
        return lines

    def config_errors(self, cfg: dict) -> list[str]:
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
        return errors + anomaly_errors(dc)

    # --- one cell ---------------------------------------------------------------------------------

    def aggregate(self, cfg: dict, inputs: dict[str, list[str]], out_dir: Path) -> None:
        """The tables (the anomaly's experiments in dispatch_anomaly) and the seed's report:
        key metrics, scaling behaviour, the push anomaly."""
        from parbench.processed import status_counts, write_study
        from parbench.studies.dispatch import aggregate

        tables = aggregate.study_tables(read_records(inputs["records"]))
        cells = tables["cells"]
        write_study("dispatch", tables, out_dir, self.SEED_FILES[0], aggregate.seed_report(tables["summary"], cells),
                    f"dispatch: {len(cells)} cells ({status_counts(cells)}), {len(tables['runs'])} runs, "
                    f"{len(tables['tasks'])} tasks")

    def cell_fields(self, cell: DispatchCell) -> dict:
        return {"system": cell.system, "kind": cell.kind, "rep": cell.rep, "experiment": cell.experiment or plan.MAIN}

    def measure(self, cfg: dict, cell: DispatchCell) -> dict:
        """Start the system, run the seed's protocol on it (its progress printed as it
        goes), stop everything; Unavailable for a peer that cannot start or run here."""
        from parbench.studies.dispatch import peers, sweep

        params = plan.protocol(cfg, cell)
        anchor = sweep.wall_clock_anchor()
        line: list[str] = []
        current = {"workers": None}
        rep = rep_suffix(cell, repetitions_of(cfg, cell))

        def progress(row: dict) -> None:
            if row["phase"] != "weak_scaling" or row["repetition"] != 0:
                return
            if current["workers"] != row["workers"]:
                flush()
                current["workers"] = row["workers"]
            line.append(console_line(row))

        def flush() -> None:
            if line:
                print(f"  {cell.key:<12} workers {current['workers']}: " + "  ".join(line) + rep, flush=True)
                line.clear()

        unavailable, swept = None, {"runs": [], "tasks": [], "depth": [], "failures": []}
        try:
            swept = sweep.sweep(make_runner(cell, params), params, progress)
        except peers.PeerUnavailable as exc:
            unavailable = str(exc)
        except ImportError as exc:
            unavailable = f"a package it needs is missing ({exc})"
        except Exception as exc:
            if cell.kind != "peer":
                raise
            unavailable = f"{cell.system} failed to start or run here: {type(exc).__name__}: {exc}"
        flush()
        result = {**self.empty_result(cfg, cell), "runs": swept["runs"], "tasks": columnar(swept["tasks"]),
                  "depth": columnar(swept["depth"]), "failures": swept["failures"], "clock_anchor": anchor,
                  "versions": versions()}
        if unavailable:
            raise Unavailable(unavailable, result)
        return result

    def empty_result(self, cfg: dict, cell: DispatchCell) -> dict:
        return {"record_version": plan.RECORD_VERSION, "parameters": plan.cell_parameters(cfg, cell), "runs": [],
                "tasks": columnar([]), "depth": columnar([]), "failures": [], "clock_anchor": None, "versions": {}}

    def check(self, cfg: dict, cell: DispatchCell, result: dict) -> list[str]:
        """Every run's own checks (each task completed once with the expected value, no
        run timed out), as the sweep collected them."""
        return ["; ".join(result["failures"][:5])] if result["failures"] else []

    def lines(self, cfg: dict, cell: DispatchCell, record: dict) -> list[str]:
        head = f"  {cell.key:<12}"
        rep = rep_suffix(cell, repetitions_of(cfg, cell))
        if record["status"] == "unavailable":
            return [f"{head} not measured: {record['failure']}{rep}"]
        if record["status"] == "failed":
            return [f"{head} FAILED: {record['failure'][:300]}{rep}"]
        best: dict = {}
        for r in record["runs"]:
            if r.get("phase") == "saturation" and r.get("status") == "ok":
                best[r["submission"]] = max(best.get(r["submission"], 0), r["throughput_tasks_per_sec"] or 0)
        sat = ", ".join(f"{k} {v:,.0f} tasks/s" for k, v in best.items())
        return [f"{head} done in {record['elapsed_sec']:.1f} s" + (f"; saturation peak {sat}" if sat else "") + rep]


def anomaly_errors(dc: dict) -> list[str]:
    """What the schema cannot check of `dispatch.anomaly`: each experiment with systems
    names its worker counts, an expiry or an order that is not the main one's, and orders
    of the main workloads."""
    an = dc.get("anomaly")
    if not isinstance(an, dict):
        return []
    errors = []
    for kind, setting in (("scale", None), ("expiry", "heartbeats"), ("order", "orders")):
        part = an.get(kind) or {}
        if not part.get("systems"):
            continue
        if "workers" not in part:
            errors.append(f"dispatch.anomaly.{kind}.workers is missing; allowed: worker counts in the order they run "
                          f"(at least 2)")
        if setting and not part.get(setting):
            errors.append(f"dispatch.anomaly.{kind}.{setting} is missing or empty while {kind}.systems is "
                          f"{part['systems']}; allowed: at least one entry, or systems: []")
    platform = dc.get("platform", {})
    main = [platform.get("heartbeat_interval_sec"), platform.get("heartbeat_liveness")]
    for hb in (an.get("expiry") or {}).get("heartbeats") or []:
        if isinstance(hb, list) and len(hb) == 2 and [float(hb[0]), hb[1]] == [float(main[0] or 0), main[1]]:
            errors.append(f"dispatch.anomaly.expiry.heartbeats: {hb} is the main setting (dispatch.platform); "
                          f"allowed: other settings (the main cells measure this one)")
    workloads = dc.get("workloads") or []
    for order in (an.get("order") or {}).get("orders") or []:
        if sorted(order) != sorted(workloads):
            errors.append(f"dispatch.anomaly.order.orders: {order} is not an order of dispatch.workloads {workloads}; "
                          f"allowed: the same workloads in another order")
        elif list(order) == list(workloads):
            errors.append(f"dispatch.anomaly.order.orders: {order} is the main order; allowed: another order")
    return errors
