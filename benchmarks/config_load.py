#!/usr/bin/env python3
"""Loading the config, as every cell and every job of a run does: the composed config kept
in data/cache/config/ against composing it with Hydra, both measured in the same run, in
a new process each time (what a cell pays: Python, parbench's imports and `load`) and
within one process.

    .venv/bin/python benchmarks/config_load.py [--profile local] [--runs 7]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from parbench import config, project

LOAD = "import sys; from parbench import config; config.load(sys.argv[1], conf_dir=sys.argv[2])"


def process_sec(profile: str, conf: Path, kept: bool) -> float:
    """Seconds for a new Python process to import parbench's config and load `profile`."""
    if not kept:
        shutil.rmtree(conf.parent / config.COMPOSED_CACHE, ignore_errors=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", LOAD, profile, str(conf)], check=True)
    return time.perf_counter() - t0


def in_process_sec(profile: str, conf: Path, kept: bool) -> float:
    if not kept:
        shutil.rmtree(conf.parent / config.COMPOSED_CACHE, ignore_errors=True)
    t0 = time.perf_counter()
    config.load(profile, conf_dir=conf)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="local")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "conf"
        shutil.copytree(project.conf_dir(), conf)
        for label, measure in (("new process", process_sec), ("in process", in_process_sec)):
            composed, kept = [], []
            for _ in range(args.runs):  # alternated, so that both sides see the same machine
                composed.append(measure(args.profile, conf, kept=False))
                kept.append(measure(args.profile, conf, kept=True))
            c, k = statistics.median(composed), statistics.median(kept)
            print(f"{label:12s} composed with Hydra: {c * 1000:7.1f} ms   kept: {k * 1000:7.1f} ms   "
                  f"saved {1000 * (c - k):6.1f} ms per load (median of {args.runs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
