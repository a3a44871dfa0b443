#!/usr/bin/env python3
"""The gil study's goals, measured in one run and printed beside their expectations.

* CPython, pure-Python workload (multithread_cpu_scaled): thread speedup at 2 threads
  near 1.0 (the GIL serializes the threads);
* CPython, native-call workload (multithread_hashlib): thread speedup at 2 threads of at
  least 1.8 (hashlib releases the GIL);
* Jython, pure-Python workload (multithread_cpu_scaled): thread speedup at 2 threads of
  at least 1.7 (JVM threads, no GIL).

Each goal is `--launches` launches of the runtime's interpreter running the study's worker
script (the same code the pipeline's cells run, with the local profile's workloads),
sequential and 2 threads, warm-up runs first (under Jython, more while the JVM's JIT is
still compiling: `gil.jit_quiet`), then `--reps` repetitions alternating between the two.
A JIT (the JVM under Jython) compiles differently in every launch, so one launch says
little: each launch gives its median sequential and threaded time, and the speedup is
the median over launches of the sequential medians over that of the threaded ones; the
bracket is its 95% percentile-bootstrap interval from the launches (with one launch, the
bound from that launch's two medians' intervals). CPU seconds per wall second of the
threaded runs say whether the threads ran at once. This is a benchmark, not a test: it
prints the figures, and exits 0 unless a run fails or returns a wrong result; a goal
missed is printed as MISSED. On a shared machine, the other load caps every speedup:
the script also prints how much CPU the sequential runs got.

Beside the Jython goal, in the same run, the JVM's own ceiling: after each Jython launch,
one launch of `benchmarks/jvm/BoxedSum.java` (plain Java, no Python) with the workload's
shape (its chunks of n elements, sequential in the main thread against the same threads
started and joined inside the timed region, warm-up first, the repetitions alternating)
and each run as long as that Jython launch's sequential runs. Its `primitive` loop
allocates nothing: what two JVM threads gain on this machine at that run length. Its
`boxed` loop allocates a new object per element and per partial sum, as Jython's
integers do. The script prints both speedups and reads Jython's against them: below the
goal in `primitive` means the machine caps the goal in this run; Jython below `boxed`
means the rest of the shortfall is Jython's own. The control needs a JDK (Java 11 or
later with the jdk.compiler module, which runs a source file directly); without one it
is reported as not measured. `--no-jvm-control` skips it.

    .venv/bin/python benchmarks/gil_goals.py [--reps N] [--launches N] [--threads N] [--no-jvm-control]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from parbench import config as pbconfig  # noqa: E402
from parbench.cli import positive_int  # noqa: E402
from parbench import stats  # noqa: E402
from parbench.studies.gil import plan, run_cell  # noqa: E402

# A sequential run that got less than this many CPU seconds per wall second shared its
# core with other load: the machine was busy.
BUSY_BELOW = 0.85
JYTHON_GOAL = 1.7
# (runtime, workload, what is expected, check on the speedup)
GOALS = [
    ("cpython", "multithread_cpu_scaled", "near 1.0 (0.8 .. 1.25): the GIL serializes the threads",
     lambda s: 0.8 <= s <= 1.25),
    ("cpython", "multithread_hashlib", ">= 1.8: hashlib releases the GIL", lambda s: s >= 1.8),
    ("jython", "multithread_cpu_scaled", f">= {JYTHON_GOAL}: JVM threads, no GIL", lambda s: s >= JYTHON_GOAL),
]
# The JVM control: plain Java with the Jython goal's workload shape (benchmarks/jvm)
CONTROL = REPO / "benchmarks" / "jvm" / "BoxedSum.java"
CONTROL_VARIANTS = ("primitive", "boxed")
CONTROL_WARMUP = 8


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=positive_int, default=15, help="timed repetitions per execution (default 15)")
    p.add_argument("--launches", type=positive_int, default=5,
                   help="interpreter launches per goal (default 5; a JIT compiles differently in each)")
    p.add_argument("--threads", type=positive_int, default=2, help="threads of the threaded runs (default 2)")
    p.add_argument("--profile", default="local", help="profile whose workloads are used (default local)")
    p.add_argument("--no-jvm-control", dest="jvm_control", action="store_false",
                   help="skip the plain-Java control measured beside the Jython goal")
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


def measure_launches(cfg: dict, runtime: str, workload: str, reps: int, threads: int, launches: int,
                     after_each=None) -> dict:
    """`launches` launches: the speedup over launches with its bootstrap interval.
    `after_each(launch)`, when given, runs after every launch (the JVM control)."""
    each = []
    for _ in range(launches):
        each.append(measure(cfg, runtime, workload, reps, threads))
        if after_each:
            after_each(each[-1])
    seq, thr = [m["seq"] for m in each], [m["thr"] for m in each]
    bounds = stats.bootstrap_ratio_ci(seq, thr) if launches > 1 else each[0]["bounds"]
    return {"seq_ms": stats.median(seq) * 1e3, "thr_ms": stats.median(thr) * 1e3,
            "speedup": stats.median(seq) / stats.median(thr), "bounds": bounds,
            "per_launch": [m["seq"] / m["thr"] for m in each],
            "cpu_seq": stats.median([m["cpu_seq"] for m in each]), "cpu_thr": stats.median([m["cpu_thr"] for m in each]),
            "version": each[0]["version"], "host_version": each[0]["host_version"],
            "warmup_rounds": [m["warmup_rounds"] for m in each], "jit_quiet": [m["jit_quiet"] for m in each],
            "jit_ms": [m["jit_ms"] for m in each]}


# --- the JVM control ------------------------------------------------------------------------------

def control_java(env=None) -> tuple[str | None, str | None]:
    """(the `java` that runs the control, None) or (None, why none can): JAVA_HOME's, else
    PATH's (as the jython launcher picks it). A source file runs directly only on a JDK
    (Java 11+ with the jdk.compiler module)."""
    env = os.environ if env is None else env
    if env.get("JAVA_HOME"):
        java = str(Path(env["JAVA_HOME"]) / "bin" / "java")
        if not os.access(java, os.X_OK):
            return None, f"JAVA_HOME={env['JAVA_HOME']} has no bin/java"
    else:
        java = shutil.which("java", path=env.get("PATH"))
        if not java:
            return None, "java is not on PATH"
    try:
        modules = subprocess.run([java, "--list-modules"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{java} --list-modules failed: {exc}"
    if modules.returncode != 0:
        return None, f"{java} --list-modules exited {modules.returncode} (Java 11 or later is needed)"
    if not any(line.startswith("jdk.compiler@") for line in modules.stdout.splitlines()):
        return None, f"{java} has no jdk.compiler module (a JRE, not a JDK): it cannot run a source file"
    return java, None


def control_launch(java: str, chunks: int, n: int, target_ms: float, reps: int, threads: int,
                   warmup: int = CONTROL_WARMUP) -> dict:
    """One launch of the control: per variant the repeat it calibrated and its median
    sequential and threaded wall seconds. RuntimeError when it fails (a wrong sum included)."""
    cmd = [java, str(CONTROL), str(chunks), str(n), f"{target_ms:.3f}", str(warmup), str(reps), str(threads)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    doc = json.loads(proc.stdout)
    out = {"java_version": doc["java_version"]}
    for variant in CONTROL_VARIANTS:
        v = doc[variant]
        out[variant] = {"repeat": v["repeat"], "seq": stats.median(v["sequential_ms"]) / 1e3,
                        "thr": stats.median(v["threads_ms"]) / 1e3}
    return out


def summarize_control(launches: list[dict]) -> dict:
    """Per variant, over the control's launches: each launch's speedup, their median and
    its bootstrap interval. (Each launch calibrates its own run length, so the speedups
    are taken per launch and not from times pooled across launches.)"""
    out = {"java_version": launches[0]["java_version"]}
    for variant in CONTROL_VARIANTS:
        each = [launch[variant]["seq"] / launch[variant]["thr"] for launch in launches]
        out[variant] = {"speedup": stats.median(each), "bounds": stats.bootstrap_median_ci(each),
                        "per_launch": each}
    return out


def read_against_control(jython_speedup: float, control: dict, goal: float = JYTHON_GOAL) -> str:
    """What the control says about Jython's speedup (the median of its launches' speedups,
    as the control's is), in one sentence. Jython counts as below plain Java only when it
    is below the lower bound of the boxed control's interval (or below its median when
    there is no interval)."""
    primitive, boxed = control["primitive"]["speedup"], control["boxed"]["speedup"]
    boxed_low = control["boxed"]["bounds"][0]
    if jython_speedup >= goal:
        return (f"Jython gained {jython_speedup:.2f}x per launch, at or above the goal; plain Java gained "
                f"{primitive:.2f}x allocating nothing and {boxed:.2f}x doing Jython's allocations")
    if primitive < goal:
        return (f"plain Java threads that allocate nothing gained only {primitive:.2f}x here in this run: "
                f"the machine caps this goal below {goal}, whatever Jython does")
    if jython_speedup < (boxed if boxed_low is None else boxed_low):
        return (f"plain Java doing Jython's allocations gained {boxed:.2f}x and Jython {jython_speedup:.2f}x: "
                f"the rest of the shortfall is Jython's own")
    return (f"Jython gained as much as plain Java doing its allocations ({boxed:.2f}x), less than the "
            f"{primitive:.2f}x of threads that allocate nothing: the allocations cost the rest, not Jython")


def print_control(control: dict, jython: dict) -> None:
    """The control's lines under the Jython goal's."""
    parts = []
    for variant in CONTROL_VARIANTS:
        c = control[variant]
        lo, hi = c["bounds"]
        parts.append(f"{variant} {c['speedup']:.2f}x" + (f" [{lo:.2f}, {hi:.2f}]" if lo is not None else ""))
    print(f"{'':<10} JVM control, plain Java with the same shape and run length (Java {control['java_version']}), "
          f"median of the launches' speedups: " + ", ".join(parts))
    print(f"{'':<10}   per launch: " + "; ".join(
        f"{variant} " + ", ".join(f"{x:.2f}x" for x in control[variant]["per_launch"]) for variant in CONTROL_VARIANTS))
    if jython.get("host_version") and jython["host_version"] != f"Java {control['java_version']}":
        print(f"{'':<10}   note: Jython ran on {jython['host_version']}, the control on Java {control['java_version']}")
    print(f"{'':<10}   reading: {read_against_control(stats.median(jython['per_launch']), control)}")


def main(argv=None) -> int:
    args = parse_args(argv)
    os.chdir(REPO)
    cfg = pbconfig.load(args.profile, ["gil.measure=[cpython,jython]"])
    found = {r.name: r for r in plan.measured_runtimes(cfg)}
    print(f"gil goals: {args.threads} threads against sequential, {args.launches} launch(es) of {args.reps} "
          f"repetitions each, profile "
          f"{args.profile}; {os.cpu_count()} CPUs, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'runtime':<10} {'workload':<23} {'seq ms':>9} {'thr ms':>9} {'speedup':>8} {'bounds':>14} "
          f"{'CPU s/s seq':>11} {'thr':>5}  expectation")
    missed = busy = 0
    started = time.time()
    for runtime, workload, expectation, ok in GOALS:
        if runtime not in found:
            print(f"{runtime:<10} {workload:<23} not measured: "
                  f"{next(r.reason for r in plan.resolved(cfg) if r.name == runtime)}   {expectation}")
            missed += 1
            continue
        control_runs, control_why, java = [], None, None
        if runtime == "jython" and args.jvm_control:
            java, control_why = control_java()
        shape = cfg["gil"]["workloads"][workload]

        def control(launch):  # one control launch as long as this Jython launch's sequential runs
            control_runs.append(control_launch(java, shape["chunks"], shape["n"], launch["seq"] * 1e3,
                                               args.reps, args.threads))
        try:
            m = measure_launches(cfg, runtime, workload, args.reps, args.threads, args.launches,
                                 control if java else None)
        except RuntimeError as exc:
            sys.exit(f"gil_goals: the JVM control failed: {exc}")
        lo, hi = m["bounds"]
        verdict = "met" if ok(m["speedup"]) else "MISSED"
        missed += verdict != "met"
        bounds = f"[{lo:.2f}, {hi:.2f}]" if lo is not None else "n/a"
        print(f"{runtime:<10} {workload:<23} {m['seq_ms']:>9.2f} {m['thr_ms']:>9.2f} {m['speedup']:>7.2f}x "
              f"{bounds:>14} {m['cpu_seq']:>11.2f} {m['cpu_thr']:>5.2f}  {expectation}: {verdict} ({m['version']})")
        if args.launches > 1:
            print(f"{'':<10} per launch: " + ", ".join(f"{x:.2f}x" for x in m["per_launch"]))
        if any(ms is not None for ms in m["jit_ms"]):
            print(f"{'':<10} JIT: warm-up rounds per launch " + ", ".join(
                f"{r}{'' if q else ' (still busy)'}" for r, q in zip(m["warmup_rounds"], m["jit_quiet"]))
                + "; compiling overlapped by all timed runs, ms per launch: "
                + ", ".join("n/a" if ms is None else f"{ms:.0f}" for ms in m["jit_ms"]))
        if control_runs:
            print_control(summarize_control(control_runs), m)
        elif control_why:
            print(f"{'':<10} JVM control not measured: {control_why}")
        if m["cpu_seq"] is not None and m["cpu_seq"] < BUSY_BELOW:
            busy += 1
            print(f"{'':<10} note: the sequential runs got only {m['cpu_seq']:.2f} CPU seconds per wall second: "
                  f"other load held the cores, and caps what {args.threads} threads can gain here")
    print(f"{len(GOALS) - missed} of {len(GOALS)} goals met in {time.time() - started:.0f} s; load average now "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}"
          + (f"; {busy} measurement(s) on a busy machine (see the notes)" if busy else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
