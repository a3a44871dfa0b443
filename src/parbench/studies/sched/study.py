"""The sched study as a class (`parbench.studies.benchmark.Benchmark`): what it is, how a
cell is measured and checked, its tables and figures. parbench's runner does the rest of a
cell's life (`parbench.runner`). The study keeps its own rules (`workflow/rules/sched.smk`)
and its paper module (`paper.py`): its cells' files have the paths they had before the
runner, so no cell is measured again because of it."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from parbench.studies.base import Command, Header, SystemPackage
from parbench.studies.benchmark import Figure, StudyWithOwnRules, Unavailable
from parbench.studies.sched import fracsteal, plan
from parbench.studies.sched.plan import SchedCell
from parbench.words import counted

RECORD_VERSION = 1


class Sched(StudyWithOwnRules):
    """Native C schedulers (LIFO, work stealing, synchronizing work stealing) and their peers
    (OpenMP tasks, TBB) on parallel quicksort and Mandelbrot rendering (seed 004), and the
    seed's fractal explorer (fracsteal) replaying a zoom on ws_sync."""

    name = "sched"
    title = "Native schedulers"
    summary = ("native C schedulers against OpenMP tasks and TBB on parallel quicksort and Mandelbrot "
               "rendering, across thread counts, and the seed's fractal explorer zooming on ws_sync")
    Cell = SchedCell
    SIDE_FILES = {"console": ".txt"}
    MEASURED = ("Measured by the sched study: each cell is one workload, scheduler and thread count, measured "
                "sched.repetitions times, interleaved with the other cells in a shuffled order (run_order_seed), each "
                "repetition one run of the parbench-sched driver (native/sched); every sorted array is checked to be "
                "sorted and a permutation of the input, every frame against the sequential render. Cells that failed, "
                "and peers not built on the machine, are not drawn.")
    TABLES = ("summary", "runs", "workers")
    SEED_FILES = ("sched_console.txt",)
    PLAN = plan
    COMMANDS = {
        "sched-cell": "parbench.studies.sched.run_cell",
        "sched-fracsteal": "parbench.studies.sched.fracsteal_cell",
        "sched-fracsteal-aggregate": "parbench.studies.sched.commands",
    }
    SYSTEM_PACKAGES = (
        SystemPackage("libtbb-dev", Header("tbb/parallel_sort.h", cxx=True),
                      "the TBB peers (the quicksort on a task_group, tbb::parallel_sort); without it they are "
                      "recorded as unavailable", required=False, brew="tbb"),
        # OpenMP comes with gcc on Linux; Apple clang has no runtime: Homebrew's libomp
        SystemPackage(None, Header("omp.h"), "the OpenMP peer (Apple clang with -Xpreprocessor -fopenmp -lomp); "
                      "without it OpenMP is recorded as unavailable", required=False, brew="libomp"),
        # the fracsteal explorer: its window and the test that drives it (the scripted
        # mode, which the pipeline runs, needs none of them)
        SystemPackage("libsdl2-dev", Header("SDL2/SDL.h"),
                      "the fracsteal explorer's window (make -C native/sched/fracsteal); without it only "
                      "the scripted mode builds", required=False, brew="sdl2"),
        # the window's test drives an X display: Linux only (no brew name)
        SystemPackage("xvfb", Command("Xvfb"), "a virtual X display for the test that drives the fracsteal "
                      "window; without it that test is skipped", required=False),
        SystemPackage("xdotool", Command("xdotool"), "sends keys and mouse moves to the fracsteal window in its "
                      "test", required=False),
        SystemPackage("imagemagick", Command("import"), "screenshots of the fracsteal window in its test (import)",
                      required=False),
    )
    FIGURES = (
        Figure("sched_time", "time", ("sched_summary", "sched_runs"), "fig-sched-time"),
        Figure("sched_speedup", "speedup", ("sched_summary",), "fig-sched-speedup"),
        Figure("sched_steals", "steals", ("sched_summary",), "fig-sched-steals"),
        Figure("sched_tasks", "tasks", ("sched_summary", "sched_workers", "sched_runs"), "fig-sched-tasks"),
        Figure("sched_mandelbrot_frames", "mandelbrot_frames", ("sched_summary", "sched_runs"), "fig-sched-frames"),
        Figure("sched_mandelbrot_image", "mandelbrot_image", ("sched_image",), "fig-sched-image"),
        Figure("sched_fracsteal_strip", "fracsteal_strip", ("sched_fracsteal_frames", "sched_fracsteal_strip"),
               "fig-sched-fracsteal-strip"),
        Figure("sched_fracsteal_times", "fracsteal_times", ("sched_fracsteal_frames",), "fig-sched-fracsteal-times"),
    )

    def __init__(self, driver: str = plan.DRIVER) -> None:
        self.driver = driver

    CELL_RULES = {"sched_cell": SchedCell}

    # --- the run's header, its estimate and the config's checks ----------------------------------

    def describe(self, cfg: dict, jobs: list[tuple[str, dict]]) -> list[str]:
        sc = cfg["sched"]
        return [
            f"SCHEDULER BENCHMARK (sched) - quicksort of {sc['quicksort']['size']:,} ints, "
            f"Mandelbrot {sc['mandelbrot']['width']}x{sc['mandelbrot']['height']}",
            f"Schedulers: sequential, {', '.join(sc['schedulers'])}; peers: {', '.join(sc['peers']) or 'none'}",
            f"Thread counts: {sorted(sc['threads'])}; each cell {counted(sc['repetitions'], 'time')}, interleaved; "
            f"per repetition {counted(sc['runs_per_cell'], 'sort')} or {counted(sc['mandelbrot']['frames'], 'frame')}",
        ]

    def header(self, cfg: dict, jobs: list[tuple[str, dict]]) -> list[str]:
        """The cells, then the fractal explorer's zoom."""
        return super().header(cfg, jobs) + [fracsteal.header_line(cfg, jobs)]

    def other_job_seconds(self) -> dict:
        return {"sched_build": lambda cfg, wc: plan.BUILD_SEC, **fracsteal.job_seconds()}

    def config_errors(self, cfg: dict) -> list[str]:
        backoff = cfg.get("sched", {}).get("backoff", {})
        lo, hi = backoff.get("min_ns"), backoff.get("max_ns")
        errors = fracsteal.config_errors(cfg)
        if isinstance(lo, int) and isinstance(hi, int) and lo > hi:
            errors.insert(0, f"sched.backoff.min_ns: {lo} is larger than sched.backoff.max_ns ({hi}); "
                             f"allowed: 1 <= min_ns <= max_ns")
        return errors

    # --- one cell ---------------------------------------------------------------------------------

    def measure(self, cfg: dict, cell: SchedCell) -> dict:
        with tempfile.TemporaryDirectory(prefix="parbench-sched-") as tmp:
            json_path = Path(tmp) / "driver.json"
            cmd = plan.driver_command(cfg, cell, self.driver, str(json_path))
            proc = subprocess.run(cmd, capture_output=True, text=True)
            driver_doc = json.loads(json_path.read_text()) if json_path.exists() else None
        stderr_tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        if proc.returncode == 2:  # a bug of the pipeline, not a result: stop the cell
            raise SystemExit(f"parbench sched-cell: the driver refused its arguments ({' '.join(cmd)}):\n{stderr_tail}")
        result = {**self.empty_result(cfg, cell), "command": cmd, "exit_code": proc.returncode,
                  "stderr_tail": stderr_tail, "driver": driver_doc, "console": proc.stdout.splitlines()}
        if proc.returncode == 3:  # a peer not built on this machine
            raise Unavailable(stderr_tail, result)
        return result

    def empty_result(self, cfg: dict, cell: SchedCell) -> dict:
        return {"record_version": RECORD_VERSION, "parameters": plan.cell_parameters(cfg, cell), "command": None,
                "exit_code": None, "stderr_tail": None, "driver": None, "console": []}

    def check(self, cfg: dict, cell: SchedCell, result: dict) -> list[str]:
        """The driver's own verification: the sorted output sorted and a permutation of the
        input, every frame equal to the sequential render."""
        if result["exit_code"] != 0:
            return [f"exit {result['exit_code']}: {result['stderr_tail']}"]
        if not (result["driver"] and result["driver"].get("verified")):
            return ["the driver reported success but its JSON does not say verified"]
        return []

    def side_files(self, record: dict) -> dict[str, str]:
        console = record.get("console", [])
        return {"console": "\n".join(console) + ("\n" if console else "")}

    def lines(self, cfg: dict, cell, record: dict) -> list[str]:
        return console_lines(record, cfg["sched"]["repetitions"])

    # --- tables, figures, paper -------------------------------------------------------------------

    def tables(self, records: list[dict]) -> dict:
        """summary, runs and workers, and the load table."""
        from parbench.studies.sched import aggregate

        return aggregate.study_tables(records)

    def aggregate(self, cfg: dict, inputs: dict[str, list[str]], out_dir: Path) -> None:
        """The tables and the seed's console blocks: one `[NN] Time taken` line per thread
        count."""
        from parbench.processed import write_study
        from parbench.records import read_records
        from parbench.studies.sched import aggregate

        records = read_records(inputs["records"])
        tables = self.tables(records)
        summary = tables["summary"]
        write_study("sched", tables, out_dir, self.SEED_FILES[0], aggregate.console_blocks(summary, records),
                    f"sched: {len(summary)} cells ({(summary['status'] == 'ok').sum()} ok, "
                    f"{(summary['status'] == 'unavailable').sum()} peers unavailable, "
                    f"{(summary['status'] == 'failed').sum()} failed)")

    def failures(self, cfg: dict, run_id: str | None) -> list[str]:
        """Cells whose sort or frames failed verification, and the explorer's zoom."""
        return super().failures(cfg, run_id) + fracsteal.failures(cfg, run_id)

    def figure_files(self, profile: str) -> dict[str, str]:
        return {"sched_image": plan.IMAGE.format(profile=profile),
                "sched_fracsteal_strip": fracsteal.STRIP.format(profile=profile)}


def console_lines(record: dict, repetitions: int = 1) -> list[str]:
    """The seed's lines of one repetition of a cell, as printed: the driver's `[NN] Time
    taken` lines (which repetition, when there are several, after the seed's fields), or
    why the cell was not measured."""
    c = record["cell"]
    head = f"  {c['workload']:<10} {c['scheduler']:<10}"
    rep = f" [rep {c.get('rep', 0) + 1}/{repetitions}]" if repetitions > 1 else ""
    if record["status"] == "ok":
        return [f"{head} {line}{rep}" for line in record["console"]]
    if record["status"] == "unavailable":
        return [f"{head} [{c['threads']:02d}] not measured: {record['failure']}{rep}"]
    return [f"{head} [{c['threads']:02d}] FAILED: {record['failure']}{rep}"]
