"""The sigpar study as a class (`parbench.studies.benchmark.Benchmark`): what it is, how a
cell is measured and checked, its figures. parbench's runner does the rest of a cell's life
(`parbench.runner`). The study keeps its own rules (`workflow/rules/sigpar.smk`), commands
(`run_cell.py`, `commands.py`) and paper module (`paper.py`): its cells' files have the
paths they had before the runner, so no cell is measured again because of it."""

from __future__ import annotations

import sys
from pathlib import Path

from parbench.progress import run_id as current_run_id
from parbench.studies.base import Header, SystemPackage
from parbench.studies.benchmark import Figure, StudyWithOwnRules, Unavailable
from parbench.studies.sigpar import algorithms, plan
from parbench.studies.sigpar.plan import Cell
from parbench.studies.sigpar.run_cell import console_line, record_failure, shim_unavailable
from parbench.words import counted


class Sigpar(StudyWithOwnRules):
    """Sign and verify throughput of classical and post-quantum signatures across worker
    counts, threading against multiprocessing (seed 000), per backend, beside a native
    runner. A cell is measured by `cell.measure` and checked by
    `cell.correctness_verdict`; the seed's CSV and system samples are written beside its
    record."""

    name = "sigpar"
    title = "Signature throughput across workers"
    summary = ("sign/verify throughput of classical and post-quantum signatures across worker counts, "
               "threads against processes against native threads, per backend")
    Cell = Cell
    SIDE_FILES = {"csv": ".csv", "system": "_system.json"}
    MEASURED = ("Measured by the sigpar study: each cell is one algorithm, operation (sign, verify), mode "
                "(threading, multiprocess, native-threads), backend and worker count; workers start together on a "
                "barrier, and every cell verifies its own signatures and checks that a tampered one is rejected. "
                "Cells that failed those checks are not drawn.")
    PLAN = plan
    COMMANDS = {
        "sigpar-cell": "parbench.studies.sigpar.run_cell",
        "sigpar-sweep-token": "parbench.studies.sigpar.commands",
        "sigpar-algorithm": "parbench.studies.sigpar.commands",
    }
    TABLES = ("cells", "reps", "workers", "latency")
    SEED_FILES = ("parallelism_summary.csv",)
    OVERRIDE_ALIASES = {"algorithms": "sigpar/algorithms"}
    SYSTEM_PACKAGES = (
        SystemPackage("libssl-dev", Header("openssl/evp.h"),
                      "the crypto shim of the openssl-cffi backend and the native-threads mode; without it those "
                      "cells are recorded as unavailable", required=False, brew="openssl@3"),
    )
    CELL_RULES = {"sigpar_cell": Cell}
    FIGURES = (
        Figure("sigpar_scaling", "scaling", ("sigpar_cells",), "fig-sigpar-scaling"),
        Figure("sigpar_efficiency", "efficiency", ("sigpar_cells",), "fig-sigpar-efficiency"),
        Figure("sigpar_latency", "latency", ("sigpar_cells",), "fig-sigpar-latency"),
        Figure("sigpar_gil_ratio", "gil_ratio", ("sigpar_cells",), "fig-sigpar-gil"),
        Figure("sigpar_python_cost", "python_cost", ("sigpar_cells",), "fig-sigpar-python-cost"),
        Figure("sigpar_energy", "energy", ("sigpar_cells",), "fig-sigpar-energy"),
    )

    def __init__(self, shim_dir: str | None = None) -> None:
        self.shim_dir = shim_dir

    # --- the run's header, its estimate, the config's checks, failures ---------------------------

    def header(self, cfg: dict, jobs: list[tuple[str, dict]]) -> list[str]:
        """The seed's run header, with how many cells this run measures and how long."""
        from parbench.progress import format_duration

        sp = cfg["sigpar"]
        todo = sum(1 for name, _ in jobs if name == self.cell_rule)
        total = len(self.cells(cfg))
        named = sp["algorithm_set"]["name"] if sp["algorithms"] == sp["algorithm_set"]["names"] else "custom list"
        return [
            f"PARALLELISM THROUGHPUT BENCHMARK (sigpar) - modes: {', '.join(sp['modes'])}; "
            f"classical backends: {', '.join(sp['classical_backends'])}",
            f"Testing {len(sp['algorithms'])} algorithms ({named})",
            f"Worker counts: {sorted(sp['workers'])}; each cell {counted(sp['repetitions'], 'time')}, interleaved",
            f"Duration per config: {sp['duration_sec']:g}s (analysis window: {sp['analysis_window_sec']:g}s, "
            f"warmup: {sp['warmup_sec']:g}s)",
            f"Cells to measure: {todo} of {total} ({total - todo} already measured)",
            f"Measuring time: ~{format_duration(todo * plan.cell_estimate_sec(cfg))} "
            f"({format_duration(plan.cell_estimate_sec(cfg))} per cell)",
        ]

    def config_errors(self, cfg: dict) -> list[str]:
        """Checks that span keys of the sigpar config (the schema checks each key)."""
        errors = []
        sp = cfg.get("sigpar", {})
        window, duration = sp.get("analysis_window_sec"), sp.get("duration_sec")
        if isinstance(window, (int, float)) and isinstance(duration, (int, float)) and window > duration:
            errors.append(f"sigpar.analysis_window_sec: {window!r} is longer than sigpar.duration_sec "
                          f"({duration!r}); allowed: 0 < analysis_window_sec <= duration_sec")
        workers = sp.get("workers")
        if isinstance(workers, list) and workers and all(isinstance(w, int) for w in workers) and 1 not in workers:
            errors.append(f"sigpar.workers: {workers!r} must include 1, the base of scaling efficiency "
                          f"(ops(N) / (N x ops(1)))")
        return errors

    def failures(self, cfg: dict, run_id: str | None) -> list[str]:
        """The algorithms whose cells failed their checks in run `run_id` (the rest of an
        algorithm's cells are skipped after one fails), each with `make rerun`."""
        import json

        lines = []
        for path in sorted(Path(plan.FAILURES.format(profile=cfg["profile"])).glob("*.json")):
            record = json.loads(path.read_text())
            if record.get("run_id") == run_id:
                algorithm = record["cell"].split()[0]
                lines += [f"FAILED: {record['cell']}: {record['failure']}",
                          f"  its remaining cells were skipped; after fixing, rerun: "
                          f"make rerun ALG={algorithm} PROFILE={cfg['profile']}"]
        return lines

    # --- the sweep and its plan -----------------------------------------------------------------

    def aggregate_inputs(self, cfg: dict) -> dict[str, list[str]]:
        """Every algorithm's cells table (its block printed as it finished) and every record."""
        return {"algorithms": plan.algorithm_tables(cfg), "records": plan.cell_records(cfg)}

    def other_outputs(self, cfg: dict) -> list[str]:
        """The seed's files of each mode: its JSON document and its summary."""
        return [name for variant in plan.variants(cfg)
                for name in (f"parallelism_{variant}.json", f"parallelism_summary_{variant}.csv")]

    def aggregate(self, cfg: dict, inputs: dict[str, list[str]], out_dir: Path) -> None:
        """The tidy tables and the seed's processed files (`parallelism_<mode>.json`, the
        summaries)."""
        import json

        import pandas as pd

        from parbench.processed import write_csv, write_tables
        from parbench.records import read_records, write_atomic
        from parbench.studies.sigpar import aggregate

        tables = aggregate.study_tables(read_records(inputs["records"]), cfg["sigpar"]["min_ops_per_worker"])
        # the algorithms' tables, written as each algorithm finished, make the cells table
        cells = tables["cells"] = pd.concat([pd.read_parquet(p) for p in inputs["algorithms"]], ignore_index=True)
        write_tables("sigpar", tables, out_dir)
        meta = aggregate.metadata(cells)
        for variant in cells["variant"].unique():
            doc = aggregate.seed_json(cells, variant, meta)
            write_atomic(out_dir / f"parallelism_{variant}.json", json.dumps(doc, indent=2) + "\n")
            write_csv(aggregate.seed_summary(cells, variant), out_dir / f"parallelism_summary_{variant}.csv")
        write_csv(aggregate.seed_summary(cells), out_dir / self.SEED_FILES[0])
        print(f"sigpar: {len(cells)} cells ({(cells['status'] == 'ok').sum()} ok) from {len(tables['reps'])} "
              f"repetitions, {len(tables['workers'])} worker rows, {len(tables['latency'])} latency samples "
              f"-> {out_dir}")

    def caption_values(self, cfg: dict) -> dict[str, str]:
        """The level of the intervals, and how many latencies a worker keeps at most
        (`sigpar.max_latency_samples`, the latency figure's sample)."""
        from parbench.paper.format import fmt_num

        samples = (cfg.get("sigpar") or {}).get("max_latency_samples")
        return {**super().caption_values(cfg), "max_latency_samples": "a configured number of" if samples is None
                else fmt_num(samples)}

    def complete_schema(self, schema: dict) -> dict:
        schema["$defs"]["sigpar_algorithm"]["enum"] = list(algorithms.CATALOG)
        return schema

    def rerun_tokens(self, cfg: dict, name: str) -> list[str]:
        return plan.rerun_tokens(cfg, name)

    def rerun_names(self, cfg: dict) -> list[str]:
        return plan.rerun_names(cfg)

    def liboqs_ids(self, cfg: dict) -> list[str]:
        return algorithms.liboqs_cmake_ids(cfg["sigpar"]["algorithms"])

    def liboqs_names(self) -> dict:
        return {a.oqs_cmake_id: a.oqs_name for a in algorithms.CATALOG.values() if a.oqs_cmake_id}

    # --- one cell ---------------------------------------------------------------------------------

    def measure(self, cfg: dict, cell: Cell) -> dict:
        from parbench.studies.sigpar import cell as cellmod

        unavailable = shim_unavailable(cell, self.shim_dir)
        if unavailable:
            raise Unavailable(unavailable, cellmod.empty_result(cell))
        return cellmod.measure(cfg, cell, shim_dir=self.shim_dir)

    def check(self, cfg: dict, cell: Cell, result: dict) -> list[str]:
        """Every worker's own checks: the signatures it kept verify (or its verifications
        succeeded), a tampered signature is rejected, and something was kept to check."""
        from parbench.studies.sigpar import cell as cellmod

        verdict = cellmod.correctness_verdict(result["workers"])
        return [verdict] if verdict else []

    def empty_result(self, cfg: dict, cell: Cell) -> dict:
        from parbench.studies.sigpar import cell as cellmod

        return cellmod.empty_result(cell)

    def side_files(self, record: dict) -> dict[str, str]:
        from parbench.studies.sigpar import cell as cellmod

        return cellmod.side_files(record)

    def written(self, cfg: dict, cell: Cell, record: dict) -> None:
        """A failed cell stops its algorithm for the rest of the run: noted before anything is
        printed, so that no later cell of it is measured."""
        if record["status"] == "failed":
            where = record_failure(cfg["profile"], cell, record["failure"], current_run_id())
            print(f"  The failure is noted in {where}: the remaining cells of {cell.algorithm} in this run are\n"
                  f"  skipped. After fixing, rerun the algorithm with:\n"
                  f"    make rerun ALG={cell.algorithm} PROFILE={cfg['profile']}\n", file=sys.stderr, flush=True)

    def lines(self, cfg: dict, cell: Cell, record: dict) -> list[str]:
        for warning in record.get("warnings", []):
            print(f"  warning: {warning}", file=sys.stderr)
        return [console_line(record, cfg["sigpar"]["repetitions"])]
