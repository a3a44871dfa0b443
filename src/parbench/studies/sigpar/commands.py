"""The sigpar commands Snakemake runs around the cells: the sweep token, the
per-algorithm aggregation (which prints the seed's block) and the study aggregation."""

from __future__ import annotations

import json
import time
from pathlib import Path

from parbench.processed import write_csv, write_parquet, write_tables
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


def study(args) -> int:
    import pandas as pd

    from parbench.studies.sigpar import aggregate

    out = Path(args.out_dir)
    records = read_records(args.cells)
    tables = aggregate.study_tables(records, args.min_ops_per_worker)
    cells = pd.concat([pd.read_parquet(p) for p in args.algorithms], ignore_index=True)
    tables["cells"] = cells
    write_tables("sigpar", tables, out)
    meta = aggregate.metadata(cells)
    for variant in cells["variant"].unique():
        doc = aggregate.seed_json(cells, variant, meta)
        write_atomic(out / f"parallelism_{variant}.json", json.dumps(doc, indent=2) + "\n")
        write_csv(aggregate.seed_summary(cells, variant), out / f"parallelism_summary_{variant}.csv")
    write_csv(aggregate.seed_summary(cells), out / "parallelism_summary.csv")
    print(f"sigpar: {len(cells)} cells ({(cells['status'] == 'ok').sum()} ok) from {len(tables['reps'])} repetitions, "
          f"{len(tables['workers'])} worker rows, {len(tables['latency'])} latency samples -> {out}")
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

    p = sub.add_parser("sigpar-aggregate", help="write the study's tables and the seed's files")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--algorithms", nargs="+", required=True)
    p.add_argument("--cells", nargs="+", required=True)
    p.add_argument("--min-ops-per-worker", type=int, default=30, help="flag cells below it (few_ops)")
    p.set_defaults(func=study)
