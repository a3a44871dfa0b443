"""`parbench sched-aggregate`: the study's tables and the seed's console blocks."""

from __future__ import annotations

from pathlib import Path

def study(args) -> int:
    from parbench.studies.sched import aggregate

    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    records = aggregate.read_records(args.cells)
    tables = aggregate.study_tables(records)
    for name, frame in tables.items():
        frame.to_parquet(out / f"sched_{name}.parquet", index=False)
    console = aggregate.console_blocks(tables["summary"], records)
    (out / "sched_console.txt").write_text(console)
    print(console, flush=True)
    summary = tables["summary"]
    print(f"sched: {len(summary)} cells ({(summary['status'] == 'ok').sum()} ok, "
          f"{(summary['status'] == 'unavailable').sum()} peers unavailable, "
          f"{(summary['status'] == 'failed').sum()} failed) -> {out}")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("sched-aggregate", help="write the sched study's tables and console blocks")
    p.add_argument("--out-dir", required=True)
    p.add_argument("cells", nargs="+")
    p.set_defaults(func=study)
