#!/usr/bin/env python3
"""How much the sigpar harness costs, measured on this machine in one run.

For RSA-2048, ECDSA-P256 and Ed25519 (single worker, sign) it prints the throughput of
the full cell harness (threading mode, telemetry on: what the pipeline measures) beside
the same call timed in a bare loop with no harness at all (`for _ in range(n):
sign(message)`), and their ratio; the goal is a ratio of at least 0.97. Bare and
harness runs alternate (bare, harness, bare, harness, ...) and the medians are
compared, so drift of a shared machine hits both sides alike. Then it prints the
2-worker scaling efficiency of each mode for the same algorithms.

    .venv/bin/python benchmarks/sigpar_harness_overhead.py [--seconds 2] [--rounds 3]

Run it from the checkout's root.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

from parbench import config as pbconfig
from parbench.studies.sigpar import algorithms, keys, signers
from parbench.studies.sigpar.cell import measure
from parbench.studies.sigpar.plan import Cell

ALGORITHMS = ["RSA-2048", "ECDSA-P256", "Ed25519"]
GOAL = 0.97


def bare_rate(sign, message: bytes, seconds: float) -> float:
    """Operations per second of a plain counted loop, sized to last about `seconds`."""
    n = 1
    while True:  # size the loop on a short calibration run
        t0 = time.perf_counter()
        for _ in range(n):
            sign(message)
        elapsed = time.perf_counter() - t0
        if elapsed > 0.2:
            break
        n *= 2
    n = max(1, int(n * seconds / elapsed))
    t0 = time.perf_counter()
    for _ in range(n):
        sign(message)
    return n / (time.perf_counter() - t0)


def harness_rate(cfg: dict, algorithm: str, mode: str = "threading", workers: int = 1) -> float:
    record = measure(cfg, Cell.of(algorithm, "sign", mode, workers), log=lambda m: None)
    if record["status"] != "ok":
        raise SystemExit(f"{algorithm} {mode} {workers}w failed: {record['failure']}")
    return record["result"]["ops_per_sec"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="analysis window of each run")
    parser.add_argument("--rounds", type=int, default=9, help="bare/harness pairs per algorithm")
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="parbench-bench-")
    cfg = pbconfig.load("local", [f"sigpar.duration_sec={args.seconds + 0.5}",
                                  f"sigpar.analysis_window_sec={args.seconds}", "sigpar.warmup_sec=0.25",
                                  f"sigpar.cache_dir={cache}"])
    cfg["_log_dir"] = cache
    from parbench.provenance import collect_machine

    machine = collect_machine()
    print(f"sigpar harness overhead on {machine['cpu_model']} ({machine['logical_cores']} logical cores), "
          f"{args.rounds} alternating rounds of {args.seconds:g} s, single worker, sign")
    print(f"{'algorithm':<12} {'bare loop ops/s':>16} {'harness ops/s':>14} {'ratio':>7}  goal >= {GOAL}")
    worst = 1.0
    for name in ALGORITHMS:
        algo = algorithms.get(name)
        cached = keys.load_or_create(algo, cache, cfg["sigpar"]["message_bytes"])
        ops = signers.make_ops(algo, cached.material)
        bare, harness = [], []
        for _ in range(args.rounds):
            bare.append(bare_rate(ops.sign, cached.message, args.seconds))
            harness.append(harness_rate(cfg, name))
        b, h = statistics.median(bare), statistics.median(harness)
        worst = min(worst, h / b)
        print(f"{name:<12} {b:>16,.1f} {h:>14,.1f} {h / b:>7.3f}  {'ok' if h / b >= GOAL else 'BELOW GOAL'}")

    rounds = max(1, args.rounds // 3)
    print()
    print(f"2-worker scaling efficiency, sign: median ops(2) / (2 x median ops(1)), {rounds} alternating rounds")
    print(f"{'algorithm':<12} {'threading':>10} {'multiprocess':>13}")
    for name in ALGORITHMS:
        row = []
        for mode in ("threading", "multiprocess"):
            one, two = [], []
            for _ in range(rounds):
                one.append(harness_rate(cfg, name, mode, 1))
                two.append(harness_rate(cfg, name, mode, 2))
            row.append(statistics.median(two) / (2 * statistics.median(one)))
        print(f"{name:<12} {row[0]:>10.3f} {row[1]:>13.3f}")
    print()
    print(f"lowest harness / bare ratio: {worst:.3f} ({'meets' if worst >= GOAL else 'misses'} the goal of {GOAL})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
