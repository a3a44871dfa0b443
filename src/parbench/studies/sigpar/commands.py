"""The sigpar commands Snakemake runs around the cells: the sweep token and the
per-algorithm aggregation (which prints the seed's block)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from parbench.processed import write_parquet
from parbench.records import read_records, write_atomic


def sweep_token(args) -> int:
    write_atomic(Path(args.out), json.dumps({"algorithm": args.algorithm, "created_unix": time.time()}) + "\n")
    return 0


def algorithm(args) -> int:
    from parbench.studies.sigpar import aggregate

    records = read_records(args.cells)
    cells = aggregate.cells_table(records, args.min_ops_per_worker)
    print(aggregate.algorithm_block(cells, args.index, args.total), flush=True)
    write_parquet(cells, args.out)
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("sigpar-sweep-token", help="write an algorithm's sweep token")
    p.add_argument("--algorithm", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(func=sweep_token)

    p = sub.add_parser("sigpar-algorithm", help="aggregate one algorithm's cells and print its block")
    p.add_argument("--index", type=int, required=True)
    p.add_argument("--total", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--min-ops-per-worker", type=int, default=30, help="flag cells below it (few_ops)")
    p.add_argument("cells", nargs="+")
    p.set_defaults(func=algorithm)
