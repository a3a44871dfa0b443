#!/usr/bin/env python3
"""Quicksort speedup of the work-stealing scheduler next to OpenMP tasks (and TBB).

Builds ``parbench-sched`` if needed (``make -C native/sched all``, a no-op when it
is up to date), then sorts the same input (``--size`` random 32-bit integers,
seed 42) with:

* ``sequential`` (1 thread): the reference every speedup is relative to;
* ``ws`` at 1 and ``--threads`` threads (pbs work stealing);
* ``openmp`` at 1 and ``--threads`` threads (OpenMP tasks), if it was built;
* ``tbb`` at ``--threads`` threads (``tbb::parallel_sort``), if it was built.

Each configuration runs ``--reps`` times. The runs are interleaved (round 1 of
every configuration, then round 2, ...) so that a burst of load from other
processes hits all configurations alike. Speedups are reported from the best and
from the median time of each configuration; the best time is the least disturbed
one on a shared machine. This is a benchmark, not a test: it prints figures and
exits 0 unless a run fails or a result does not verify.

    .venv/bin/python benchmarks/sched_quicksort_speedup.py [--size N] [--threads N] [--reps R]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from parbench.cli import positive_int

REPO = Path(__file__).resolve().parents[1]
SCHED_DIR = REPO / "native" / "sched"
DEFAULT_BUILD_DIR = REPO / "native" / "build" / "sched"
SEED_SIZE = 104_857_600  # the seed's N: 10 * 10 Mi elements


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=positive_int, default=SEED_SIZE,
                   help=f"elements to sort (default {SEED_SIZE}, the seed's size)")
    p.add_argument("--threads", type=positive_int, default=2,
                   help="threads of the parallel runs (default 2)")
    p.add_argument("--reps", type=positive_int, default=5,
                   help="repetitions of every configuration (default 5)")
    p.add_argument("--cutoff", type=positive_int, default=None,
                   help="sequential cutoff for ws and openmp (default: the driver's)")
    p.add_argument("--build-dir", type=Path, default=DEFAULT_BUILD_DIR,
                   help="build directory of native/sched (default native/build/sched)")
    return p.parse_args(argv)


def build(build_dir: Path) -> Path:
    subprocess.run(["make", "-s", "-C", str(SCHED_DIR), f"BUILD_DIR={build_dir}", "all"],
                   check=True, stdout=subprocess.DEVNULL)
    driver = build_dir / "parbench-sched"
    if not driver.exists():
        sys.exit(f"{driver} was not built")
    return driver


def run_once(driver: Path, scheduler: str, threads: int, size: int,
             cutoff: int | None, tmp: Path) -> dict:
    out = tmp / f"{scheduler}-{threads}.json"
    cmd = [str(driver), "quicksort", "--scheduler", scheduler, "--threads", str(threads),
           "--size", str(size), "--reps", "1", "--json", str(out)]
    if cutoff is not None:
        cmd += ["--cutoff", str(cutoff)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed with exit status {proc.returncode}:\n{proc.stderr}")
    report = json.loads(out.read_text())
    if not report["verified"]:
        sys.exit(f"{' '.join(cmd)}: result not verified")
    return report


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    driver = build(args.build_dir.resolve())
    peers = json.loads(subprocess.run([str(driver), "peers"], check=True,
                                      capture_output=True, text=True).stdout)
    t = args.threads
    configs: list[tuple[str, int]] = [("sequential", 1), ("ws", 1), ("ws", t)]
    for peer in ("openmp", "tbb"):
        if not peers[peer]["available"]:
            print(f"note: {peer} not available: {peers[peer]['note']}")
        elif peer == "openmp":
            configs += [(peer, 1), (peer, t)]
        else:
            # TBB has its own sequential algorithm (about 3x slower than the shared
            # kernel at 1 thread); only its parallel run is part of the comparison.
            configs += [(peer, t)]
    configs = list(dict.fromkeys(configs))  # --threads 1: no duplicates

    print(f"quicksort of {args.size} random 32-bit integers, {t} threads, "
          f"{args.reps} interleaved repetitions, cpus={os.cpu_count()}, "
          f"load average before: {loadavg()}")
    times: dict[tuple[str, int], list[float]] = {c: [] for c in configs}
    with tempfile.TemporaryDirectory(prefix="sched-speedup-") as tmpdir:
        tmp = Path(tmpdir)
        for rep in range(args.reps):
            # Rotate the order each round so that no configuration always runs first.
            order = configs[rep % len(configs):] + configs[:rep % len(configs)]
            for sched, threads in order:
                report = run_once(driver, sched, threads, args.size, args.cutoff, tmp)
                seconds = report["reps"][0]["time_s"]
                times[(sched, threads)].append(seconds)
                print(f"  round {rep + 1}: {sched:<10} [{threads:02d}] Time taken: "
                      f"{seconds:.6f} seconds", flush=True)
    print(f"load average after: {loadavg()}")

    seq = times[("sequential", 1)]
    seq_best, seq_median = min(seq), statistics.median(seq)

    def speedups(c: tuple[str, int]) -> tuple[float, float]:
        return seq_best / min(times[c]), seq_median / statistics.median(times[c])

    print()
    print(f"{'configuration':<16}{'best [s]':>10}{'median [s]':>12}"
          f"{'speedup (best)':>16}{'speedup (median)':>18}")
    for c in configs:
        sb, sm = speedups(c)
        name = f"{c[0]} x{c[1]}"
        print(f"{name:<16}{min(times[c]):>10.3f}{statistics.median(times[c]):>12.3f}"
              f"{sb:>15.2f}x{sm:>17.2f}x")

    print()
    if ("openmp", t) in times:
        ws_b, ws_m = speedups(("ws", t))
        omp_b, omp_m = speedups(("openmp", t))
        line = f"at {t} threads: ws {ws_b:.2f}x | openmp {omp_b:.2f}x (best)"
        line += f";  ws {ws_m:.2f}x | openmp {omp_m:.2f}x (median)"
        if ("tbb", t) in times:
            tbb_b, tbb_m = speedups(("tbb", t))
            line += f";  tbb {tbb_b:.2f}x (best) {tbb_m:.2f}x (median)"
        print(line)
        print(f"ws >= openmp: best {'yes' if ws_b >= omp_b else 'no'}, "
              f"median {'yes' if ws_m >= omp_m else 'no'}")
    else:
        ws_b, ws_m = speedups(("ws", t))
        print(f"at {t} threads: ws {ws_b:.2f}x (best), {ws_m:.2f}x (median); "
              "openmp not available, no comparison")
    return 0


if __name__ == "__main__":
    sys.exit(main())
