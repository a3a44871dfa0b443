#!/usr/bin/env python3
"""Finding a Benchmark study's cell by its key, as Snakemake does for every job of the run
(the cell rule's params, priority and time estimate each ask): `Benchmark.cell_of`, which
lists the cells once per config, against scanning the list on every call (what it did
before). Both sides find every key of one sweep, in the same run.

    .venv/bin/python benchmarks/benchmark_cell_lookup.py [--cells N]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

from parbench.studies.benchmark import Benchmark, SweepCell


@dataclass(frozen=True)
class Cell(SweepCell):
    size: int
    rep: int


class Sweep(Benchmark):
    name = "sweep"
    title = "A sweep"
    summary = "cells to look up"
    Cell = Cell

    def cells(self, cfg):
        return [Cell(size, rep) for rep in range(cfg["sweep"]["reps"]) for size in range(cfg["sweep"]["sizes"])]


def seconds(find, keys) -> float:
    start = time.perf_counter()
    for key in keys:
        assert find(key).key == key
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=3000, help="cells in the sweep (default 3000)")
    args = parser.parse_args()
    cfg = {"profile": "bench", "sweep": {"sizes": args.cells // 5, "reps": 5}}
    bench = Sweep()
    keys = bench.keys(cfg)
    listed = seconds(lambda key: bench.cell_of(cfg, key), keys)
    scanned = seconds(lambda key: next(c for c in bench.cells(cfg) if c.key == key), keys)
    print(f"{len(keys)} cells, every key looked up once: listed once per config {listed:.3f} s, "
          f"scanned per call {scanned:.3f} s ({scanned / listed:.0f}x)")


if __name__ == "__main__":
    main()
