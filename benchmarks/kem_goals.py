#!/usr/bin/env python3
"""The kem study's goals, each comparison measured on both sides in this one run.

1. The harness's cost: the median count of libcrux encaps in the study's loop (fresh
   key pair and randomness per iteration, every result checked) against a bare loop of
   the same calls (the seed's loop and nothing else), with the same counter. The two
   loops alternate in blocks so that a change of the machine's speed weighs on both.
   Goal: ratio <= 1.02.
2. AVX2 (NEON on arm64) against portable, per parameter set and operation: the ratio of
   the portable median to the SIMD median (above 1: the SIMD code is faster). Both
   implementations are measured in turn, level by level, in this run.
3. Thread scaling of encaps: operations per second on 1 and on 2 threads (each thread
   with its own key pair), measured in turn, `--rounds` times, the median of each;
   efficiency = ops(2) / (2 x ops(1)). Goal: >= 0.9 on this machine.

Uses the binary the pipeline builds (`snakemake -c1 kem_build`, or cargo build
--release --no-default-features in native/kem); the counter is $CYCLE_COUNTER's or the
best available, and is printed with every count. This is a benchmark, not a test: it
prints the figures and whether each goal was met, and exits 0 unless a run fails.

    .venv/bin/python benchmarks/kem_goals.py [--level 768] [--iterations 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BINARY = REPO / "native" / "build" / "kem" / "parbench-kem"
HARNESS_GOAL = 1.02
EFFICIENCY_GOAL = 0.9


def run(binary: Path, *args: str) -> dict:
    proc = subprocess.run([str(binary), *args, "--json", "-"], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"kem_goals: {binary.name} {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def simd_backend(binary: Path) -> str | None:
    """libcrux-avx2 or libcrux-neon, whichever this CPU runs."""
    for imp in ("libcrux-avx2", "libcrux-neon"):
        doc = run(binary, "cycles", "--implementation", imp, "--level", "512", "--operation", "encaps",
                  "--iterations", "10")
        if doc["status"] == "ok":
            return imp
    return None


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", type=Path, default=BINARY)
    p.add_argument("--level", type=int, default=768, choices=[512, 768, 1024],
                   help="parameter set of the harness and scaling goals (default 768)")
    p.add_argument("--iterations", type=int, default=20000, help="timed calls per side of the harness goal")
    p.add_argument("--blocks", type=int, default=100, help="alternating blocks of the harness goal")
    p.add_argument("--ratio-iterations", type=int, default=3000, help="timed calls per cell of the AVX2 goal")
    p.add_argument("--duration-sec", type=float, default=3.0, help="window of each scaling run")
    p.add_argument("--rounds", type=int, default=3, help="1-thread/2-thread pairs of the scaling goal")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.binary.exists():
        sys.exit(f"kem_goals: {args.binary} is not built; run `snakemake -c1 kem_build` first")
    counters = run(args.binary, "counters")
    sel = counters["selected"]
    print(f"machine: {os.cpu_count()} logical CPUs, shared with other work (numbers are noisy)")
    print(f"counter: {sel['name']} - {sel['describe']} (unit: {sel['unit']})")
    simd = simd_backend(args.binary)
    if simd is None:
        sys.exit("kem_goals: neither libcrux-avx2 nor libcrux-neon runs on this CPU")
    unit = sel["unit"]

    # 1. harness cost
    h = run(args.binary, "harness", "--implementation", simd, "--level", str(args.level),
            "--iterations", str(args.iterations), "--blocks", str(args.blocks))
    if h["checks"]["secrets_mismatched"] or h["checks"]["tamper_accepted"]:
        sys.exit(f"kem_goals: the harness run failed its checks: {h['checks']}")
    verdict = "met" if h["ratio"] <= HARNESS_GOAL else "NOT met"
    print(f"\n1. harness cost, {simd} ML-KEM-{args.level} encaps, {h['iterations_per_side']:,} calls per side "
          f"in {h['blocks']} alternating blocks:")
    print(f"   study's loop (with checks) median {h['bench_median']:,} {unit}; bare loop median "
          f"{h['bare_median']:,} {unit}; ratio {h['ratio']:.4f} (goal <= {HARNESS_GOAL}: {verdict})")

    # 2. SIMD against portable
    print(f"\n2. {simd} against libcrux-portable ({args.ratio_iterations:,} calls per cell; "
          f"ratio = portable median / SIMD median):")
    for level in (512, 768, 1024):
        cells = []
        for op in ("keypair", "encaps", "decaps"):
            med = {}
            for imp in ("libcrux-portable", simd):
                doc = run(args.binary, "cycles", "--implementation", imp, "--level", str(level), "--operation", op,
                          "--iterations", str(args.ratio_iterations))
                if doc["status"] != "ok":
                    sys.exit(f"kem_goals: {imp} ML-KEM-{level} {op}: {doc['status']}: {doc['failure']}")
                med[imp] = doc["median"]
            cells.append(f"{op} {med['libcrux-portable']:,} / {med[simd]:,} = "
                         f"{med['libcrux-portable'] / med[simd]:.2f}x")
        print(f"   ML-KEM-{level}: " + "; ".join(cells))

    # 3. thread scaling of encaps
    rates = {1: [], 2: []}
    for _ in range(args.rounds):
        for threads in (1, 2):
            doc = run(args.binary, "throughput", "--implementation", simd, "--level", str(args.level),
                      "--operation", "encaps", "--threads", str(threads), "--warmup-sec", "0.5",
                      "--duration-sec", str(args.duration_sec), "--cpus", ",".join(str(c) for c in range(threads)))
            if doc["status"] != "ok":
                sys.exit(f"kem_goals: throughput t{threads}: {doc['status']}: {doc['failure']}")
            rates[threads].append(sum(t["ops_in_window"] / t["window_sec"] for t in doc["per_thread"]))
    one, two = statistics.median(rates[1]), statistics.median(rates[2])
    efficiency = two / (2 * one)
    verdict = "met" if efficiency >= EFFICIENCY_GOAL else "NOT met"
    print(f"\n3. encaps scaling, {simd} ML-KEM-{args.level}, {args.rounds} rounds of {args.duration_sec} s windows:")
    print(f"   1 thread {one:,.0f} ops/s (rounds: {', '.join(f'{r:,.0f}' for r in rates[1])}); "
          f"2 threads {two:,.0f} ops/s (rounds: {', '.join(f'{r:,.0f}' for r in rates[2])})")
    print(f"   efficiency {efficiency:.3f} (goal >= {EFFICIENCY_GOAL}: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
