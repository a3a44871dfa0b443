"""`parbench sched-cell`: run one sched cell (the `parbench-sched` driver) and record it.

    parbench sched-cell --profile local --workload quicksort --scheduler ws --threads 2 \\
        --rep 0 --driver native/build/sched/parbench-sched [HYDRA_OVERRIDE ...]

Outputs (stem = data/raw/<profile>/sched/<workload>/<scheduler>_t<NN>_r<k>, k the
repetition from 0):
- `<stem>.txt`: the driver's stdout, the seed's `[NN] Time taken: X seconds` lines;
- `<stem>.json`: the record: cell, parameters, status, the driver's JSON (times,
  verification, per-worker counters), the console lines, provenance.

Status: "ok"; "failed" when the driver's verification failed (sorted output not sorted
or not a permutation, a frame differing from the sequential render), with its message;
"unavailable" when a peer was not built on this machine, with the reason. A bad
argument is a bug of the pipeline and stops the cell with the driver's message.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from parbench.cli import check_choice
from parbench.studies.benchmark import Benchmark, Unavailable
from parbench.studies.sched import plan
from parbench.studies.sched.plan import SchedCell

RECORD_VERSION = 1


class SchedCells(Benchmark):
    """How a sched cell is measured and checked; parbench's runner (`parbench.runner`)
    does the rest: the life cycle, the record and the console file beside it, the history,
    the failed and unavailable statuses, the ERROR line."""

    name = "sched"
    title = "Native schedulers"
    summary = "native C schedulers and their peers on parallel quicksort and Mandelbrot rendering"
    Cell = SchedCell
    SIDE_FILES = {"console": ".txt"}

    def __init__(self, driver: str = plan.DRIVER) -> None:
        self.driver = driver

    def cells(self, cfg: dict) -> list[SchedCell]:
        return plan.cells(cfg)

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


def main(args) -> int:
    from parbench import config as pbconfig
    from parbench import runner

    check_choice("sched-cell", "workload", args.workload, plan.WORKLOADS)
    check_choice("sched-cell", "scheduler", args.scheduler, plan.SCHEDULER_ORDER)
    if args.threads < 1:
        raise SystemExit(f"parbench sched-cell: --threads must be >= 1 (got {args.threads})")
    if args.rep < 0:
        raise SystemExit(f"parbench sched-cell: --rep must be >= 0 (got {args.rep})")
    if not Path(args.driver).exists():
        raise SystemExit(f"parbench sched-cell: the driver {args.driver} is not built; build it with "
                         f"`snakemake -c1 sched_build` (or make -C native/sched)")
    cfg = pbconfig.load_for_command("sched-cell", args.profile, args.overrides)
    cell = SchedCell(args.workload, args.scheduler, args.threads, args.rep)
    return runner.exit_code(runner.run_cell(SchedCells(args.driver), cfg, cell, args.out_stem, command="sched-cell"))


def add_commands(sub) -> None:
    add_arguments(sub.add_parser("sched-cell", help="measure one sched cell with the parbench-sched driver"))


def add_arguments(parser) -> None:
    parser.set_defaults(func=main)
    parser.add_argument("--profile", default="local", help="profile in conf/ (default: local)")
    parser.add_argument("--workload", required=True, help="quicksort or mandelbrot")
    parser.add_argument("--scheduler", required=True, help="sequential, lifo, ws, ws_sync, openmp, tbb or tbb_parallel_sort")
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--rep", type=int, default=0, help="which repetition of the cell this is (from 0; default 0)")
    parser.add_argument("--driver", default=plan.DRIVER, help="the parbench-sched binary")
    parser.add_argument("--out-stem", help="output path stem (default: the pipeline's path for the cell)")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. sched.repetitions=5")
