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

from pathlib import Path

from parbench.cli import check_choice
from parbench.studies.sched import plan
from parbench.studies.sched.plan import SchedCell
from parbench.studies.sched.study import Sched


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
    return runner.exit_code(runner.run_cell(Sched(args.driver), cfg, cell, args.out_stem, command="sched-cell"))


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
