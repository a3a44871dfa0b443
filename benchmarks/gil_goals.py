#!/usr/bin/env python3
"""The gil study's goals, measured in one run and printed beside their expectations.

* CPython, pure-Python workload (multithread_cpu_scaled): thread speedup at 2 threads
  near 1.0 (the GIL serializes the threads);
* CPython, native-call workload (multithread_hashlib): thread speedup at 2 threads of at
  least 1.8 (hashlib releases the GIL);
* free-threaded CPython with its GIL off (cpython_ft, PYTHON_GIL=0), pure-Python
  workload: thread speedup at 2 threads of at least 1.8;
* the same binary with its GIL on (cpython_ft_gil, PYTHON_GIL=1): at most 1.1.

Beside them, in the same run, the machine's own ceiling: the study's native control
(`native`: the same chunks summed in C by POSIX threads, no interpreter, each run about
as long as CPython's) on the pure-Python workload's shape. A goal missed while the
control also stays below it is the machine's, not the runtime's.

Each goal is `--launches` launches of the runtime's interpreter running the study's worker
script (the same code the pipeline's cells run, with the local profile's workloads),
sequential and 2 threads, warm-up runs first, then `--reps` repetitions alternating
between the two. Each launch gives its median sequential and threaded time, and the
speedup is the median over launches of the sequential medians over that of the threaded
ones; the bracket is its 95% percentile-bootstrap interval from the launches (with one
launch, the bound from that launch's two medians' intervals). CPU seconds per wall second
of the threaded runs say whether the threads ran at once. This is a benchmark, not a
test: it prints the figures, and exits 0 unless a run fails or returns a wrong result; a
goal missed is printed as MISSED. On a shared machine, the other load caps every speedup:
the script also prints how much CPU the sequential runs got.

The free-threaded runtimes and the control are the ones the pipeline builds
(native/build/cpython/, native/build/gilcontrol/), or a python3.14t/python3.13t the
machine has; without them they are reported as not measured, with the command that
builds them.

    .venv/bin/python benchmarks/gil_goals.py [--reps N] [--launches N] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from parbench import config as pbconfig  # noqa: E402
from parbench.cli import positive_int  # noqa: E402
from parbench import stats  # noqa: E402
from parbench.studies.gil import plan, run_cell  # noqa: E402
from parbench.words import counted  # noqa: E402

# A sequential run that got less than this many CPU seconds per wall second shared its
# core with other load: the machine was busy.
BUSY_BELOW = 0.85
# (runtime, workload, what is expected, check on the speedup)
GOALS = [
    ("cpython", "multithread_cpu_scaled", "near 1.0 (0.8 .. 1.25): the GIL serializes the threads",
     lambda s: 0.8 <= s <= 1.25),
    ("cpython", "multithread_hashlib", ">= 1.8: hashlib releases the GIL", lambda s: s >= 1.8),
    ("cpython_ft", "multithread_cpu_scaled", ">= 1.8: free-threaded, GIL off (PYTHON_GIL=0)", lambda s: s >= 1.8),
    ("cpython_ft_gil", "multithread_cpu_scaled", "<= 1.1: the same binary with PYTHON_GIL=1", lambda s: s <= 1.1),
]
# The machine's ceiling, measured beside the goals (not a goal: what threads gain here at all)
CONTROL = ("native", "multithread_cpu_scaled")
MEASURED = ["cpython", "cpython_ft", "cpython_ft_gil", "native"]
BUILD_HINT = ("build them with: .venv/bin/snakemake -c2 native/build/cpython/freethreaded.json "
              "native/build/gilcontrol/gil-control --configfile conf/local.yaml")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=positive_int, default=15, help="timed repetitions per execution (default 15)")
    p.add_argument("--launches", type=positive_int, default=5,
                   help="interpreter launches per goal (default 5)")
    p.add_argument("--threads", type=positive_int, default=2, help="threads of the threaded runs (default 2)")
    p.add_argument("--profile", default="local", help="profile whose workloads are used (default local)")
    return p.parse_args(argv)


def measure(cfg: dict, runtime: str, workload: str, reps: int, threads: int) -> dict:
    """One launch: its median sequential and threaded wall time and CPU use."""
    points = [("sequential", 1), ("threads", threads)]
    spec = plan.worker_spec(cfg, runtime, workload, repetitions=reps, config_points=points)
    record = run_cell.measure(cfg, plan.GilCell(runtime, workload), spec=spec)
    if record["status"] != "ok":
        sys.exit(f"gil_goals: {runtime} {workload}: {record['status']}: {record['failure']}")
    by = {p["execution"]: p for p in record["points"]}
    walls = {e: [r["wall_sec"] for r in by[e]["runs"]] for e in by}
    cpu = {e: [r["cpu_sec"] / r["wall_sec"] for r in by[e]["runs"] if r["cpu_sec"] is not None] for e in by}
    lo_s, hi_s, _ = stats.median_ci(walls["sequential"], 0.95)
    lo_t, hi_t, _ = stats.median_ci(walls["threads"], 0.95)
    jits = [r["jit_sec"] for e in by for r in by[e]["runs"] if r.get("jit_sec") is not None]
    return {"seq": stats.median(walls["sequential"]), "thr": stats.median(walls["threads"]),
            "warmup_rounds": record["worker"].get("warmup_rounds"), "jit_quiet": record["worker"].get("jit_quiet"),
            "jit_ms": sum(jits) * 1e3 if jits else None,
            "bounds": stats.ratio_interval((lo_s, hi_s), (lo_t, hi_t)),
            "cpu_seq": stats.median(cpu["sequential"]), "cpu_thr": stats.median(cpu["threads"]),
            "version": f"{record['runtime']['implementation']} {record['runtime']['version']}",
            "host_version": record["runtime"].get("host_version")}


def measure_launches(cfg: dict, runtime: str, workload: str, reps: int, threads: int, launches: int) -> dict:
    """`launches` launches: the speedup over launches with its bootstrap interval."""
    each = [measure(cfg, runtime, workload, reps, threads) for _ in range(launches)]
    seq, thr = [m["seq"] for m in each], [m["thr"] for m in each]
    bounds = stats.bootstrap_ratio_ci(seq, thr) if launches > 1 else each[0]["bounds"]
    return {"seq_ms": stats.median(seq) * 1e3, "thr_ms": stats.median(thr) * 1e3,
            "speedup": stats.median(seq) / stats.median(thr), "bounds": bounds,
            "per_launch": [m["seq"] / m["thr"] for m in each],
            "cpu_seq": stats.median([m["cpu_seq"] for m in each]), "cpu_thr": stats.median([m["cpu_thr"] for m in each]),
            "version": each[0]["version"], "host_version": each[0]["host_version"],
            "warmup_rounds": [m["warmup_rounds"] for m in each], "jit_quiet": [m["jit_quiet"] for m in each],
            "jit_ms": [m["jit_ms"] for m in each]}


def line(runtime: str, workload: str, m: dict, tail: str) -> str:
    lo, hi = m["bounds"]
    bounds = f"[{lo:.2f}, {hi:.2f}]" if lo is not None else "n/a"
    return (f"{runtime:<14} {workload:<23} {m['seq_ms']:>9.2f} {m['thr_ms']:>9.2f} {m['speedup']:>7.2f}x "
            f"{bounds:>14} {m['cpu_seq']:>11.2f} {m['cpu_thr']:>5.2f}  {tail}")


def main(argv=None) -> int:
    args = parse_args(argv)
    os.chdir(REPO)
    cfg = pbconfig.load(args.profile, [f"gil.measure=[{','.join(MEASURED)}]"])
    resolved = {r.name: r for r in plan.resolved(cfg)}
    print(f"gil goals: {args.threads} threads against sequential, "
          f"{counted(args.launches, 'launch', 'launches')} of {args.reps} "
          f"repetitions each, profile "
          f"{args.profile}; {os.cpu_count()} CPUs, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'runtime':<14} {'workload':<23} {'seq ms':>9} {'thr ms':>9} {'speedup':>8} {'bounds':>14} "
          f"{'CPU s/s seq':>11} {'thr':>5}  expectation")
    missed = busy = 0
    started = time.time()
    for runtime, workload, expectation, ok in [*GOALS, (*CONTROL, None, None)]:
        r = resolved[runtime]
        why = r.reason if not r.found else None
        if r.needs and not Path(r.needs).exists():
            why = f"{r.needs} is not built yet; {BUILD_HINT}"
        if why:
            print(f"{runtime:<14} {workload:<23} not measured: {why}   {expectation or ''}")
            missed += ok is not None
            continue
        m = measure_launches(cfg, runtime, workload, args.reps, args.threads, args.launches)
        if ok is None:
            print(line(runtime, workload, m, "the machine's ceiling: the same chunks in C, POSIX threads, no "
                                              "interpreter (not a goal)"))
        else:
            verdict = "met" if ok(m["speedup"]) else "MISSED"
            missed += verdict != "met"
            print(line(runtime, workload, m, f"{expectation}: {verdict} ({m['version']})"))
        if args.launches > 1:
            print(f"{'':<14} per launch: " + ", ".join(f"{x:.2f}x" for x in m["per_launch"]))
        if m["cpu_seq"] is not None and m["cpu_seq"] < BUSY_BELOW:
            busy += 1
            print(f"{'':<14} note: the sequential runs got only {m['cpu_seq']:.2f} CPU seconds per wall second: "
                  f"other load held the cores, and caps what {args.threads} threads can gain here")
    print(f"{len(GOALS) - missed} of {len(GOALS)} goals met in {time.time() - started:.0f} s; load average now "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}"
          + (f"; {counted(busy, 'measurement')} on a busy machine (see the notes)" if busy else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
