"""`parbench dispatch-aggregate`: the study's tables and the seed's report."""

from __future__ import annotations

from pathlib import Path


def study(args) -> int:
    from parbench.processed import status_counts, write_tables
    from parbench.records import read_records, write_atomic
    from parbench.studies.dispatch import aggregate

    out = Path(args.out_dir)
    records = read_records(args.cells)
    tables = aggregate.study_tables(records)
    write_tables("dispatch", tables, out)
    report = aggregate.seed_report(tables["summary"], tables["cells"])
    write_atomic(out / "dispatch_report.md", report)
    print(report, flush=True)
    cells = tables["cells"]
    print(f"dispatch: {len(cells)} cells ({status_counts(cells)}), {len(tables['runs'])} runs, "
          f"{len(tables['tasks'])} tasks -> {out}")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("dispatch-aggregate", help="write the dispatch study's tables and the seed's report")
    p.add_argument("--out-dir", required=True)
    p.add_argument("cells", nargs="+")
    p.set_defaults(func=study)
