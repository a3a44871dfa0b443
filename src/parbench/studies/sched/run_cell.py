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
import sys
import tempfile
import time
from pathlib import Path

from parbench.cli import check_choice
from parbench import cell_life
from parbench.progress import progress_suffix, run_id
from parbench.records import write_atomic
from parbench.studies.sched import plan
from parbench.studies.sched.plan import SchedCell

RECORD_VERSION = 1


def measure(cfg: dict, cell: SchedCell, driver: str) -> dict:
    from parbench import provenance

    started = time.time()
    with tempfile.TemporaryDirectory(prefix="parbench-sched-") as tmp:
        json_path = Path(tmp) / "driver.json"
        cmd = plan.driver_command(cfg, cell, driver, str(json_path))
        proc = subprocess.run(cmd, capture_output=True, text=True)
        driver_doc = json.loads(json_path.read_text()) if json_path.exists() else None
    finished = time.time()
    stderr_tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
    if proc.returncode == 2:
        raise SystemExit(f"parbench sched-cell: the driver refused its arguments ({' '.join(cmd)}):\n{stderr_tail}")
    status, failure = {0: ("ok", None), 3: ("unavailable", stderr_tail)}.get(
        proc.returncode, ("failed", f"exit {proc.returncode}: {stderr_tail}"))
    if status == "ok" and not (driver_doc and driver_doc.get("verified")):
        status, failure = "failed", "the driver reported success but its JSON does not say verified"
    return {
        "record_version": RECORD_VERSION,
        "study": "sched",
        "profile": cfg["profile"],
        "run_id": run_id(),
        "cell": {"workload": cell.workload, "scheduler": cell.scheduler, "threads": cell.threads, "rep": cell.rep},
        "parameters": plan.cell_parameters(cfg, cell),
        "status": status,
        "failure": failure,
        "command": cmd,
        "driver": driver_doc,
        "console": proc.stdout.splitlines(),
        "started_unix": started,
        "finished_unix": finished,
        "elapsed_sec": finished - started,
        "provenance": provenance.collect(cfg, Path.cwd()),
    }


def write_outputs(record: dict, stem: str) -> dict[str, str]:
    out = {"record": f"{stem}.json", "console": f"{stem}.txt"}
    write_atomic(Path(out["console"]), "\n".join(record["console"]) + ("\n" if record["console"] else ""))
    write_atomic(Path(out["record"]), json.dumps(record, indent=1) + "\n")
    return out



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
    stem = args.out_stem or cell.stem(cfg["profile"])
    done = cell_life.run("sched", cell, cfg, lambda: measure(cfg, cell, args.driver),
                         lambda r: write_outputs(r, stem))
    if done is None:
        return 130
    record, _ = done
    lines = console_lines(record, cfg["sched"]["repetitions"])
    for i, line in enumerate(lines):
        print(line + (progress_suffix() if record["status"] == "ok" and i == len(lines) - 1 else ""))
    sys.stdout.flush()
    return 0


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
