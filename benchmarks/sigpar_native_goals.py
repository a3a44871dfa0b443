#!/usr/bin/env python3
"""How close sigpar's native runner and its openssl-cffi backend come to what the
machine can do, measured on this machine in one run.

1. RSA-2048 sign per second on one thread: the native runner (a sigpar cell in mode
   native-threads: RSA-PSS, the seed's RSA) against `openssl speed -seconds N rsa2048`
   of the same (system) OpenSSL. Goal: ratio >= 0.95.
2. ML-DSA-44 sign per second on one thread: the native runner against liboqs's own
   speed loop (`tests/speed_sig.c` of the same liboqs source, built against the same
   liboqs library the pipeline uses). Goal: ratio >= 0.95.
3. Scaling efficiency ops(2) / (2 x ops(1)) of the openssl-cffi backend in threading
   mode (ECDSA-P256 and Ed25519 sign), beside pyca/cryptography's. Goal: cffi >= 0.9.

Each comparison alternates its two sides for --rounds rounds and compares medians, so
drift of a shared machine hits both alike.

    .venv/bin/python benchmarks/sigpar_native_goals.py [--seconds 3] [--rounds 3]

Run it from the checkout's root. It builds what it needs (a liboqs with ML-DSA-44 in the
pipeline's build folder, the crypto shim and liboqs's speed_sig in a temporary folder).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from parbench import config as pbconfig
from parbench import paths
from parbench.native import liboqs
from parbench.studies.sigpar import shim
from parbench.studies.sigpar.cell import measure
from parbench.studies.sigpar.plan import Cell

GOAL_RATIO = 0.95
GOAL_EFFICIENCY = 0.9


def cell_rate(cfg: dict, algorithm: str, mode: str, workers: int, shim_dir: Path, backend: str | None = None) -> float:
    record = measure(cfg, Cell.of(algorithm, "sign", mode, workers, backend), log=lambda m: None, shim_dir=shim_dir)
    if record["status"] != "ok":
        raise SystemExit(f"{algorithm} {mode} {backend} {workers}w failed: {record['failure']}")
    return record["result"]["ops_per_sec"]


def openssl_speed_rsa2048(seconds: float) -> float:
    proc = subprocess.run(["openssl", "speed", "-seconds", str(max(1, round(seconds))), "rsa2048"],
                          capture_output=True, text=True, check=True)
    line = next(l for l in proc.stdout.splitlines() if l.startswith("rsa 2048 bits"))
    return float(line.split()[5])  # "rsa 2048 bits <sign s> <verify s> <sign/s> <verify/s>"


def build_speed_sig(oqs_dir: Path, out: Path) -> Path:
    doc = json.loads((oqs_dir / liboqs.DESCRIPTOR).read_text())
    tests = Path(doc["source_tree"]) / "tests"
    include = next(p for p in (oqs_dir / "build" / "include", oqs_dir / "include") if p.exists())
    binary = out / "speed_sig"
    subprocess.run(["gcc", "-O2", f"-I{include}", f"-I{tests}", str(tests / "speed_sig.c"), "-o", str(binary),
                    f"-L{oqs_dir / 'lib'}", "-loqs", f"-Wl,-rpath,{oqs_dir / 'lib'}", "-lm"], check=True)
    return binary


def liboqs_speed(binary: Path, method: str, seconds: float) -> float:
    proc = subprocess.run([str(binary), "--duration", str(max(1, round(seconds))), method],
                          capture_output=True, text=True, check=True)
    row = next(l for l in proc.stdout.splitlines() if re.match(r"sign\s+\|", l))
    mean_us = float(row.split("|")[3])
    return 1e6 / mean_us


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="analysis window of each run")
    parser.add_argument("--rounds", type=int, default=3, help="alternating pairs per comparison")
    args = parser.parse_args()
    if shutil.which("openssl") is None:
        raise SystemExit("the openssl command is missing (Debian: apt-get install openssl)")
    work = Path(tempfile.mkdtemp(prefix="parbench-native-goals-"))
    oqs_dir = Path(paths.liboqs_build_dir(["SIG_ml_dsa_44"]))
    if not (oqs_dir / liboqs.DESCRIPTOR).exists():
        liboqs.provide(oqs_dir, ["SIG_ml_dsa_44"], jobs=2)
    shim_doc = shim.build(work / "shim", oqs_dir, jobs=2)
    if not shim_doc["available"]:
        raise SystemExit(f"the crypto shim could not be built: {shim_doc['reason']}")
    shim_dir = work / "shim"
    from parbench.oqs_loader import load_oqs

    load_oqs(str(oqs_dir))
    speed_sig = build_speed_sig(oqs_dir, work)
    cfg = pbconfig.load("local", [f"sigpar.duration_sec={args.seconds + 0.5}",
                                  f"sigpar.analysis_window_sec={args.seconds}", "sigpar.warmup_sec=0.5",
                                  f"sigpar.cache_dir={work / 'cache'}"])
    cfg["_log_dir"] = str(work)
    from parbench.provenance import collect_machine

    machine = collect_machine()
    print(f"sigpar native goals on {machine['cpu_model']} ({machine['logical_cores']} logical cores), "
          f"{shim_doc['openssl_version']}, liboqs at {oqs_dir}; {args.rounds} alternating rounds of "
          f"{args.seconds:g} s")
    print()
    results = []
    for label, ours, theirs, their_name in (
        ("RSA-2048 sign, 1 thread", lambda: cell_rate(cfg, "RSA-2048", "native-threads", 1, shim_dir),
         lambda: openssl_speed_rsa2048(args.seconds), "openssl speed rsa2048"),
        ("ML-DSA-44 sign, 1 thread", lambda: cell_rate(cfg, "ML-DSA-44", "native-threads", 1, shim_dir),
         lambda: liboqs_speed(speed_sig, "ML-DSA-44", args.seconds), "liboqs speed_sig"),
    ):
        a, b = [], []
        for _ in range(args.rounds):
            a.append(ours())
            b.append(theirs())
        ratio = statistics.median(a) / statistics.median(b)
        results.append(ratio >= GOAL_RATIO)
        print(f"{label}: native runner {statistics.median(a):,.1f} ops/s, {their_name} {statistics.median(b):,.1f} "
              f"ops/s, ratio {ratio:.3f} (goal >= {GOAL_RATIO}: {'ok' if ratio >= GOAL_RATIO else 'BELOW GOAL'})")
    print()
    print("threading scaling efficiency at 2 workers, sign (median ops(2) / (2 x median ops(1))):")
    print(f"{'algorithm':<12} {'openssl-cffi':>13} {'pyca':>8}")
    for name in ("ECDSA-P256", "Ed25519"):
        eff = {}
        for backend in ("openssl-cffi", "pyca"):
            one, two = [], []
            for _ in range(args.rounds):
                one.append(cell_rate(cfg, name, "threading", 1, shim_dir, backend))
                two.append(cell_rate(cfg, name, "threading", 2, shim_dir, backend))
            eff[backend] = statistics.median(two) / (2 * statistics.median(one))
        results.append(eff["openssl-cffi"] >= GOAL_EFFICIENCY)
        print(f"{name:<12} {eff['openssl-cffi']:>13.3f} {eff['pyca']:>8.3f}   "
              f"(goal for openssl-cffi >= {GOAL_EFFICIENCY}: {'ok' if eff['openssl-cffi'] >= GOAL_EFFICIENCY else 'BELOW GOAL'})")
    print()
    print(f"{sum(results)} of {len(results)} goals met")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
