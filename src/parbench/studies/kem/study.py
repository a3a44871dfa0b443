"""The kem study as a class (`parbench.studies.benchmark.Benchmark`): what it is, how a
cell is measured and checked, its figures. parbench's runner does the rest of a cell's life
(`parbench.runner`). The study keeps its own rules (`workflow/rules/kem.smk`: the build,
the counter probe, its cells), cell commands (`run_cell.py`) and paper module (`paper.py`):
its cells' files have the paths they had before the runner, so no cell is measured again
because of it."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from parbench.studies.benchmark import Figure, StudyWithOwnRules, Unavailable
from parbench.studies.kem import plan
from parbench.studies.kem.plan import CyclesCell
from parbench.words import counted

RECORD_VERSION = 1
# The binary's exit statuses.
EXIT_USAGE, EXIT_COUNTER = 2, 4


class BinaryError(RuntimeError):
    """The binary refused its arguments or could not select a counter."""


def run_binary(cmd: list[str], env: dict) -> dict:
    """Run `parbench-kem` with `--json PATH` last in `cmd` replaced by a temporary file;
    return the record it wrote."""
    with tempfile.TemporaryDirectory(prefix="parbench-kem-") as tmp:
        out = Path(tmp) / "record.json"
        cmd = [*cmd[:-1], str(out)] if cmd[-2:-1] == ["--json"] else [*cmd, "--json", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode in (EXIT_USAGE, EXIT_COUNTER):
            raise BinaryError(proc.stderr.strip() or f"exit {proc.returncode}")
        if proc.returncode != 0 or not out.exists():
            raise BinaryError(f"`{' '.join(cmd)}` exited with {proc.returncode}: {proc.stderr.strip()[-2000:]}")
        return json.loads(out.read_text())


class Kem(StudyWithOwnRules):
    """ML-KEM-512/768/1024 keypair, encaps and decaps per call with their percentile
    distributions, from the seed's own library (libcrux-ml-kem, portable and AVX2 or NEON)
    beside liboqs' ML-KEM and OpenSSL's X25519, counted by a chosen counter (core cycles
    where the machine has one, else TSC ticks or nanoseconds); and encaps or decaps per
    second across threads (seed 002). A cell (cycles or thread sweep) is one run of the
    `parbench-kem` binary, which checks every call itself (secrets that match, a tampered
    ciphertext that does not decapsulate to the original secret) and says so in its JSON,
    `result`."""

    name = "kem"
    # unit-neutral: a machine without a core-cycle counter counts TSC ticks or nanoseconds
    title = "ML-KEM key exchange: cost per call and throughput"
    summary = ("ML-KEM keypair/encaps/decaps cost per call of libcrux-ml-kem (portable, AVX2/NEON) beside liboqs "
               "and X25519, in the counter's unit (core cycles, TSC ticks or ns), with percentile distributions, "
               "and encaps/decaps throughput across threads")
    Cell = CyclesCell
    MEASURED = ("Measured by the kem study: each cycles cell times one call at a time of libcrux-ml-kem (portable, "
                "AVX2 or NEON), liboqs or OpenSSL's X25519 with the run's counter (core cycles, TSC ticks or "
                "nanoseconds; native/kem), the seed's loop; every result is checked (matching shared secrets, "
                "implicit rejection of a tampered ciphertext). Cells that failed, and implementations the machine "
                "cannot run, are not drawn.")
    PLAN = plan
    TABLES = ("counters", "cycles", "percentiles", "samples", "throughput", "throughput_reps", "threads")
    SEED_FILES = ("kem_seed_results.txt",)
    COMMANDS = {
        "kem-counters": "parbench.studies.kem.run_cell",
        "kem-cell": "parbench.studies.kem.run_cell",
        "kem-throughput": "parbench.studies.kem.run_cell",
    }
    FIGURES = (
        Figure("kem_cycles", "cycles", ("kem_cycles", "kem_percentiles"), "fig-kem-cycles"),
        Figure("kem_distribution", "distribution", ("kem_percentiles",), "fig-kem-distribution"),
        Figure("kem_throughput", "throughput", ("kem_throughput",), "fig-kem-throughput"),
    )

    def __init__(self, command: str = "kem-cell", binary: str = plan.BINARY, liboqs: str | None = None) -> None:
        self.command, self.binary, self.liboqs = command, binary, liboqs

    CELL_RULES = {"kem_cell": plan.CyclesCell, "kem_throughput": plan.ThroughputCell}

    # --- the run's header, its estimate and the config's checks ----------------------------------

    def describe(self, cfg: dict, jobs: list[tuple[str, dict]]) -> list[str]:
        kc = cfg["kem"]
        tc = kc["throughput"]
        requested = plan.requested_counter(cfg)
        return [
            "ML-KEM CYCLE BENCHMARK (kem) - libcrux-ml-kem (the seed's library), liboqs, X25519",
            f"Implementations: {', '.join(kc['implementations'])}; levels: {sorted(kc['levels'])}; "
            f"operations: {', '.join(kc['operations'])}; iterations per cell: {kc['iterations']:,}",
            f"Cycle counter: {requested or 'the best available'}"
            + (" (CYCLE_COUNTER from the environment)" if kc["cycle_counter"] == "auto" and requested else ""),
            f"Thread sweep: {', '.join(tc['implementations']) or 'none'} {sorted(tc['levels'])} "
            f"{'/'.join(tc['operations'])} at threads {sorted(tc['threads'])}, "
            f"{tc['warmup_sec']} s warmup + {tc['duration_sec']} s window, "
            f"each point {counted(kc['repetitions'], 'time')}, "
            f"interleaved",
        ]

    def other_job_seconds(self) -> dict:
        return {"kem_build": lambda cfg, wc: plan.BUILD_SEC, "kem_counters": lambda cfg, wc: 1.5}

    def config_errors(self, cfg: dict) -> list[str]:
        tc = cfg.get("kem", {}).get("throughput", {})
        threads = tc.get("threads")
        if isinstance(threads, list) and threads and tc.get("implementations") and 1 not in threads:
            return [f"kem.throughput.threads: {threads} lacks 1; allowed: a list that includes 1 "
                    f"(scaling efficiency is measured against one thread)"]
        return []

    # --- the sweep and its plan -----------------------------------------------------------------

    def aggregate_inputs(self, cfg: dict) -> dict[str, list[str]]:
        """The counter probe's record, and the records of the cycles and thread-sweep cells."""
        return {"counters": [plan.COUNTERS.format(profile=cfg["profile"])], "cycles": plan.cycles_records(cfg),
                "throughput": plan.throughput_records(cfg)}

    def aggregate(self, cfg: dict, inputs: dict[str, list[str]], out_dir: Path) -> None:
        """The tables and the seed's blocks: one `ML-KEM-<level> Benchmark Results` per
        implementation and level."""
        from parbench.processed import status_counts, write_study
        from parbench.records import read_records
        from parbench.studies.kem import aggregate

        cycles = read_records(inputs["cycles"])
        tables = aggregate.study_tables(cycles, read_records(inputs["throughput"]), read_records(inputs["counters"])[0])
        summary = tables["cycles"]
        write_study("kem", tables, out_dir, self.SEED_FILES[0], aggregate.seed_results(cycles),
                    f"kem: {len(summary)} cycles cells ({status_counts(summary)}), {len(tables['throughput'])} "
                    f"thread-sweep points from {len(tables['throughput_reps'])} repetitions")

    def liboqs_ids(self, cfg: dict) -> list[str]:
        return plan.liboqs_ids(cfg)

    def liboqs_names(self) -> dict:
        return dict(plan.LIBOQS_NAMES)

    # --- one cell ---------------------------------------------------------------------------------

    def measure(self, cfg: dict, cell) -> dict:
        cmd = plan.binary_command(cfg, cell, self.binary, "-", self.liboqs)
        try:
            doc = run_binary(cmd, plan.binary_environment(cfg))
        except BinaryError as exc:  # a bug of the pipeline or a counter it cannot have: stop, not a result
            raise SystemExit(f"parbench {self.command}: {cell.label}: {exc}") from None
        result = {**self.empty_result(cfg, cell), "command": cmd, "result": doc}
        if doc["status"] == "unavailable":  # AVX2 on arm64, a liboqs without the level
            raise Unavailable(doc["failure"], result)
        return result

    def empty_result(self, cfg: dict, cell) -> dict:
        return {"record_version": RECORD_VERSION, "kind": "cycles" if isinstance(cell, CyclesCell) else "throughput",
                "parameters": plan.cell_parameters(cfg, cell), "command": None, "result": {}}

    def check(self, cfg: dict, cell, result: dict) -> list[str]:
        doc = result["result"]
        return [doc["failure"] or "the binary says its checks failed"] if doc["status"] != "ok" else []

    def lines(self, cfg: dict, cell, record: dict) -> list[str]:
        return [progress_line(record, cfg["kem"]["repetitions"])]


def progress_line(record: dict, repetitions: int = 1) -> str:
    """One console line per cell, in the seed's words (`encaps cycles = 38331`); a
    throughput cell's line names its repetition after the seed's fields when there are
    several."""
    cell, result = record["cell"], record["result"]
    rep = f" [rep {cell.get('rep', 0) + 1}/{repetitions}]" if record["kind"] == "throughput" and repetitions > 1 else ""
    head = f"  {cell['implementation']:<17} {cell['parameter_set']:<11}"
    if record["status"] == "unavailable":
        return f"{head} {cell['operation']}: not measured: {record['failure']}{rep}"
    if record["status"] == "failed":
        return f"{head} {cell['operation']}: FAILED: {record['failure']}{rep}"
    if record["kind"] == "cycles":
        unit = result["counter"]["unit"]
        note = "" if unit == "cycles" else f" ({unit}, {result['counter']['name']})"
        return f"{head} {cell['operation']} cycles = {result['median']}{note}"
    threads = result["per_thread"]
    rate = sum(t["ops_in_window"] / t["window_sec"] for t in threads if t["window_sec"] > 0)
    return f"{head} {cell['operation']} [{cell['threads']:02d}] {rate:,.0f} ops/s{rep}"
