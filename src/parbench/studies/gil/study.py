"""The gil study as a class (`parbench.studies.benchmark.Benchmark`): what it is, how a
cell is measured and checked, its figures. parbench's runner does the rest of a cell's life
(`parbench.runner`). The study keeps its own rules (`workflow/rules/gil.smk`: CPython's
builds, the native control, its cells), commands (`run_cell.py`, `cpython.py`) and paper
module (`paper.py`): its cells' files have the paths they had before the runner, so no
cell is measured again because of it."""

from __future__ import annotations

import sys
from pathlib import Path

from parbench.studies.base import Command, SystemPackage
from parbench.studies.benchmark import Figure, StudyWithOwnRules, Unavailable
from parbench.studies.gil import plan
from parbench.studies.gil import runtimes as rt
from parbench.studies.gil import workloads as wl
from parbench.studies.gil.plan import GilCell
from parbench.studies.gil.run_cell import (RECORD_VERSION, WORKER_FIELDS, build_of, check_point, console_line,
                                           run_worker, runtime_facts)
from parbench.words import counted


class Gil(StudyWithOwnRules):
    """The same CPU-bound Python work run sequentially, in threads and in processes, on
    several Python runtimes (CPython, CPython's default and free-threaded builds made from
    source here when the machine has none, PyPy, Jython, the seed's protoPython) beside a
    native control: what the GIL costs and what a GIL-free runtime gains (seed 001). A
    cell is one launch of a runtime's interpreter running the worker script
    (`run_cell.run_worker`), every chunk's result checked against CPython's."""

    name = "gil"
    title = "The GIL across Python runtimes"
    summary = ("the same CPU-bound Python work sequential, in threads and in processes on CPython, PyPy, Jython "
               "and other interpreters: what the GIL costs and what a GIL-free runtime gains")
    Cell = GilCell
    MEASURED = ("Measured by the gil study: each cell is one runtime and one workload, measured gil.repetitions "
                "times, interleaved with the other cells in a shuffled order (run_order_seed); each repetition is "
                "one launch of the interpreter running the worker script for every execution and worker count, "
                "warm-up runs first, then gil.runs_per_cell timed runs round-robin. Every chunk's result is "
                "checked against the value computed under CPython; points that failed, and runtimes or "
                "executions not available on the machine, are not drawn. A point with a launch that stayed "
                "disturbed (more of the machine busy elsewhere than disturbance.max_other_cores after every "
                "attempt) carries an open red diamond. Legends list only what is drawn.")
    PLAN = plan
    TABLES = ("summary", "runs", "runtimes", "comparisons")
    SEED_FILES = ("multithread_cpu_report.md",)
    COMMANDS = {
        "gil-cell": "parbench.studies.gil.run_cell",
        "gil-cpython-source": "parbench.studies.gil.cpython",
        "gil-cpython-build": "parbench.studies.gil.cpython",
    }
    SYSTEM_PACKAGES = (
        SystemPackage("pypy3", Command("pypy3"), "the PyPy runtime (a GIL and a JIT); without it PyPy is listed "
                      "as not measured", required=False, brew="pypy3"),
        SystemPackage("jython", Command("jython"), "the Jython runtime (JVM threads, no GIL); without it Jython "
                      "is listed as not measured", required=False, brew="jython"),
        SystemPackage("build-essential", Command("make"), "gcc and make: the study builds CPython from source (its "
                      "default and free-threaded builds) and its native control; without them those runtimes are "
                      "listed as not measured", required=False),
    )
    CELL_RULES = {"gil_cell": GilCell}
    FIGURES = (
        Figure("gil_wall_time", "wall_time", ("gil_summary",), "fig-gil-wall-time"),
        Figure("gil_thread_speedup", "thread_speedup", ("gil_summary",), "fig-gil-speedup"),
        Figure("gil_cpu_utilization", "cpu_utilization", ("gil_summary",), "fig-gil-cpu"),
    )

    def __init__(self, spec: dict | None = None) -> None:
        self.spec = spec

    # --- the run's header, its estimate and the config's checks ----------------------------------

    def describe(self, cfg: dict, jobs: list[tuple[str, dict]]) -> list[str]:
        """The sweep, the runtimes found here (and why the others are not measured), and the
        CPython builds this run makes."""
        gc = cfg["gil"]
        all_runtimes = plan.resolved(cfg)
        found = [f"{r.name} ({' '.join(r.argv) if r.argv else f'built here from source, {r.source}'}"
                 + (f", {' '.join(f'{k}={v}' for k, v in r.env.items())}" if r.env else "") + ")"
                 for r in all_runtimes if r.found]
        seed = gc["workloads"].get("multithread_cpu")
        lines = [
            "GIL BENCHMARK (gil) - the same CPU-bound Python work, sequential, in threads and in processes, "
            "on several interpreters",
            f"Workloads: {', '.join(w for w in wl.ORDER if w in gc['workloads'])}"
            + (f" (the seed's: {seed['chunks']} x sum(range({seed['n']:,})))" if seed else ""),
            f"Runtimes: {', '.join(found) or 'none found'}; baseline {gc['baseline']}",
            f"Executions: {', '.join(gc['executions'])} at workers {sorted(gc['workers'])}; "
            f"each cell {counted(gc['repetitions'], 'time')}, interleaved, one interpreter launch each: "
            f"{counted(gc['warmup_runs'], 'warm-up run')} (a runtime may ask for more) and "
            f"{counted(gc['runs_per_cell'], 'timed run')} "
            f"per point per launch",
        ]
        lines += [f"warning: gil: runtime {r.name} is not measured: {r.reason}" for r in all_runtimes if not r.found]
        builds = [w.get("flavour") for name, w in jobs if name == "gil_cpython_build"]
        if builds:
            lines.append(f"CPython from source: {counted(len(builds), 'build')} ({', '.join(builds)}) to make or "
                         f"reuse, about "
                         f"{sum(plan.build_estimate_sec(cfg, f) for f in builds) / 60:.0f} min if nothing is cached")
        return lines

    def other_job_seconds(self) -> dict:
        return {"gil_cpython_source": lambda cfg, wc: 15.0,
                "gil_cpython_build": lambda cfg, wc: plan.build_estimate_sec(cfg, wc.get("flavour"))}

    def config_errors(self, cfg: dict) -> list[str]:
        gc = cfg.get("gil", {})
        runtimes, measure = gc.get("runtimes", {}), gc.get("measure", [])
        errors = []
        if isinstance(runtimes, dict) and isinstance(measure, list):
            for i, name in enumerate(measure):
                if name not in runtimes:
                    errors.append(f"gil.measure[{i}]: {name!r} is not a configured runtime; "
                                  f"allowed: {', '.join(runtimes)} (gil.runtimes)")
            baseline = gc.get("baseline")
            if baseline is not None and baseline not in measure:
                errors.append(f"gil.baseline: {baseline!r} is not measured; allowed: {', '.join(map(str, measure))} "
                              f"(gil.measure)")
        executions = gc.get("executions", [])
        if isinstance(executions, list) and executions and "sequential" not in executions:
            errors.append(f"gil.executions: {executions} lacks 'sequential', the baseline of every speedup; "
                          f"allowed: a list of {', '.join(plan.EXECUTIONS)} that includes sequential")
        return errors

    # --- the sweep and its plan -----------------------------------------------------------------

    def related_tables(self, cfg: dict, processed: str) -> list[str]:
        return plan.related_tables(cfg, processed)

    def confidence(self, cfg: dict) -> float:
        """The level of the intervals: the config's `gil.confidence` (the default config's
        95% for a machine record without the run's config)."""
        return cfg.get("gil", {}).get("confidence", 0.95)

    def aggregate_parameters(self, cfg: dict) -> str:
        """The runtimes as resolved on this machine: one that appears or goes re-aggregates."""
        return plan.resolution_summary(cfg)

    def aggregate(self, cfg: dict, inputs: dict[str, list[str]], out_dir: Path) -> None:
        """The tables and the seed's box-drawn table(s), each runtime's threads time beside the
        baseline's. The config says which runtimes were configured, so one not found on this
        machine, which has no cells, is still listed with the reason."""
        from parbench.processed import status_counts, write_study
        from parbench.records import read_records
        from parbench.studies.gil import aggregate

        gc = cfg["gil"]
        records = read_records(inputs["records"])
        resolutions = [r.summary() for r in rt.resolve_all(cfg)]
        tables = aggregate.study_tables(records, resolutions, gc["confidence"], gc["baseline"])
        summary, runtimes = tables["summary"], tables["runtimes"]
        write_study("gil", tables, out_dir, self.SEED_FILES[0],
                    aggregate.seed_report(summary, runtimes, gc["baseline"], cfg["profile"]),
                    f"gil: {len(records)} cells, {len(summary)} points ({status_counts(summary)}); runtimes measured: "
                    f"{', '.join(runtimes.loc[runtimes['status'] == 'measured', 'runtime']) or 'none'}")

    # --- one cell ---------------------------------------------------------------------------------

    def measure(self, cfg: dict, cell: GilCell) -> dict:
        """Run the worker under the runtime's interpreter; Unavailable when the runtime is not
        here or cannot run the worker at all."""
        gc = cfg["gil"]
        spec = self.spec or plan.worker_spec(cfg, cell.runtime, cell.workload)
        resolution = rt.resolve(cell.runtime, gc["runtimes"][cell.runtime], cpython_cfg=gc["cpython"])
        build, unbuilt = build_of(resolution)
        argv = [build["python"]] if build else list(resolution.argv or [])
        expected = wl.expected_chunk(cell.workload, spec["params"])
        run = {"exit_code": None, "output": None, "stderr": None, "timed_out": False, "command": None}
        if resolution.found and not unbuilt:
            run = run_worker(argv, spec, gc["timeout_sec"], resolution.env)
        output = run["output"]
        points = [check_point(p, spec, expected) for p in (output or {}).get("configs", [])]
        facts = runtime_facts(resolution, (output or {}).get("runtime"), build)
        warnings = []
        if facts["gil_enabled"] is not None and resolution.gil_declared is not None \
                and facts["gil_enabled"] != resolution.gil_declared:
            warnings.append(f"gil.runtimes.{cell.runtime}.gil declares {resolution.gil_declared}, but the "
                            f"interpreter says its GIL is {'enabled' if facts['gil_enabled'] else 'disabled'}; "
                            f"recorded as it says")
        result = {
            "record_version": RECORD_VERSION,
            "parameters": {**plan.cell_parameters(cfg, cell), "spec": spec},
            "warnings": warnings,
            "runtime": facts,
            "command": run["command"],
            "exit_code": run["exit_code"],
            "timed_out": run["timed_out"],
            "partial": bool((output or {}).get("partial")),
            # the interpreter is not what the runtime promises (a free-threaded build that
            # runs with its GIL, a default build where a free-threaded one was asked for)
            "runtime_mismatch": rt.check_required(resolution.require, output.get("runtime")) if output else None,
            "runtime_env": resolution.env,
            "startup_sec": run.get("startup_sec"),
            "stderr_tail": run["stderr"],
            "worker": {k: (output or {}).get(k) for k in WORKER_FIELDS},
            "expected_chunk": expected,
            "points": [] if (output or {}).get("partial") else points,
        }
        if not resolution.found:
            raise Unavailable(resolution.reason, result)
        if unbuilt:
            raise Unavailable(unbuilt, result)
        if output is None and not run["timed_out"]:
            raise Unavailable(f"{' '.join(argv)} could not run the worker script (exit code {run['exit_code']}): "
                              f"{run['stderr'] or 'no message'}", result)
        return result

    def empty_result(self, cfg: dict, cell: GilCell) -> dict:
        gc = cfg["gil"]
        spec = self.spec or plan.worker_spec(cfg, cell.runtime, cell.workload)
        resolution = rt.resolve(cell.runtime, gc["runtimes"][cell.runtime], cpython_cfg=gc["cpython"])
        return {"record_version": RECORD_VERSION, "parameters": {**plan.cell_parameters(cfg, cell), "spec": spec},
                "warnings": [], "runtime": runtime_facts(resolution, None, build_of(resolution)[0]), "command": None,
                "exit_code": None, "timed_out": False, "partial": False, "runtime_mismatch": None,
                "runtime_env": resolution.env, "startup_sec": None, "stderr_tail": None,
                "worker": {k: None for k in WORKER_FIELDS}, "expected_chunk": None, "points": []}

    def check(self, cfg: dict, cell: GilCell, result: dict) -> list[str]:
        """Every chunk result right (checked per point against this CPython's), the
        interpreter alive to the end and in time, and the runtime it promised to be."""
        if result["timed_out"]:
            return [f"timed out after {cfg['gil']['timeout_sec']} s (gil.timeout_sec)"]
        if result["partial"] or result["exit_code"] != 0:
            return [f"the interpreter exited with code {result['exit_code']} while measuring: "
                    f"{result['stderr_tail'] or 'no message'}"]
        if result["runtime_mismatch"]:
            return [f"{result['runtime_mismatch']} (gil.runtimes.{cell.runtime}.require; environment "
                    f"{result['runtime_env'] or 'none set'})"]
        bad = next((p for p in result["points"] if p["status"] == "failed"), None)
        return [f"{bad['execution']} x{bad['workers']}: {bad['failure']}"] if bad else []

    def lines(self, cfg: dict, cell, record: dict) -> list[str]:
        for warning in record.get("warnings", []):
            print(f"  warning: {warning}", file=sys.stderr)
        return [console_line(record, cfg["gil"]["repetitions"])]
