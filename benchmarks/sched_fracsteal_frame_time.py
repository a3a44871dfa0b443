#!/usr/bin/env python3
"""The fractal explorer's frame time: parallel (ws_sync) against sequential, as the seed reports it.

The seed's fracsteal renders a frame in about 0.08 s with its parallel render and 0.3 s
with the sequential one, "around 4 times faster", on a 24-thread Ryzen 9 3900X. This
script builds ``fracsteal-headless`` if needed (``make -C native/sched/fracsteal
headless``, a no-op when it is up to date) and replays the seahorse zoom (24 frames,
from the whole set to 280x) ``--reps`` times at ``--width`` x ``--height``. Within a run,
every frame is rendered on the persistent ws_sync scheduler with ``--threads`` threads
and then sequentially, so both sides are measured in the same run on the same views,
one right after the other; every frame is checked byte for byte.

It prints, per run, the median frame time of both sides and their ratio, then over all
runs the median of the per-run medians and the best run. A benchmark, not a test: it
exits 0 unless a run fails or a frame differs.

    .venv/bin/python benchmarks/sched_fracsteal_frame_time.py [--width W] [--height H] [--threads N] [--reps R]
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
from parbench.words import counted

REPO = Path(__file__).resolve().parents[1]
FRACSTEAL_DIR = REPO / "native" / "sched" / "fracsteal"
DEFAULT_OUT_DIR = REPO / "native" / "build" / "sched"
SCRIPT = FRACSTEAL_DIR / "scripts" / "seahorse_zoom.fss"
SEED = {"parallel_s": 0.08, "sequential_s": 0.3}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--width", type=positive_int, default=960, help="frame width in pixels (default 960)")
    p.add_argument("--height", type=positive_int, default=540, help="frame height in pixels (default 540)")
    p.add_argument("--threads", type=positive_int, default=os.cpu_count() or 1,
                   help="threads of ws_sync (default: this machine's CPUs)")
    p.add_argument("--reps", type=positive_int, default=3, help="runs of the whole zoom (default 3)")
    p.add_argument("--script", type=Path, default=SCRIPT, help="the zoom (default: the seahorse zoom)")
    p.add_argument("--out-dir", type=Path, default=DEFAULT_OUT_DIR,
                   help="where fracsteal-headless is built (default native/build/sched)")
    return p.parse_args(argv)


def build(out_dir: Path) -> Path:
    proc = subprocess.run(["make", "-C", str(FRACSTEAL_DIR), f"OUT_DIR={out_dir}", "headless"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"building fracsteal-headless failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return out_dir / "fracsteal-headless"


def one_run(binary: Path, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory(prefix="fracsteal-bench-") as tmp:
        report = Path(tmp) / "report.json"
        proc = subprocess.run([str(binary), "--script", str(args.script), "--width", str(args.width),
                               "--height", str(args.height), "--threads", str(args.threads), "--json", str(report)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"fracsteal failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
        doc = json.loads(report.read_text())
    if not doc["verified"]:
        sys.exit("a frame differed from its sequential render")
    return doc


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    binary = build(args.out_dir.resolve())
    print(f"fracsteal frame time: {args.script.name}, {args.width}x{args.height}, ws_sync with {args.threads} "
          f"threads against the sequential render, {counted(args.reps, 'run')}, {os.cpu_count()} CPUs online")
    runs = []
    for rep in range(1, args.reps + 1):
        doc = one_run(binary, args)
        runs.append(doc)
        print(f"  run {rep}: {doc['frame_count']} frames, median parallel {doc['parallel_median_s']:.4f} s, "
              f"median sequential {doc['sequential_median_s']:.4f} s, ratio {doc['speedup']:.2f}x "
              f"(every frame identical)")
    par = statistics.median(d["parallel_median_s"] for d in runs)
    seq = statistics.median(d["sequential_median_s"] for d in runs)
    best = max(runs, key=lambda d: d["speedup"])
    print(f"median of the runs: parallel {par:.4f} s, sequential {seq:.4f} s per frame: {seq / par:.2f}x")
    print(f"best run:           parallel {best['parallel_median_s']:.4f} s, sequential "
          f"{best['sequential_median_s']:.4f} s per frame: {best['speedup']:.2f}x")
    print(f"the seed (24 threads, its own frame size): parallel {SEED['parallel_s']} s, sequential "
          f"{SEED['sequential_s']} s: about {SEED['sequential_s'] / SEED['parallel_s']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
