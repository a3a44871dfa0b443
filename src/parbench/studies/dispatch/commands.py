"""`parbench dispatch-aggregate`: the study's tables and the seed's report."""

from __future__ import annotations


def study(args) -> int:
    from parbench.processed import status_counts, write_study
    from parbench.records import read_records
    from parbench.studies.dispatch import aggregate

    tables = aggregate.study_tables(read_records(args.cells))
    cells = tables["cells"]
    write_study("dispatch", tables, args.out_dir, "dispatch_report.md", aggregate.seed_report(tables["summary"], cells),
                f"dispatch: {len(cells)} cells ({status_counts(cells)}), {len(tables['runs'])} runs, "
                f"{len(tables['tasks'])} tasks")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("dispatch-aggregate", help="write the dispatch study's tables and the seed's report")
    p.add_argument("--out-dir", required=True)
    p.add_argument("cells", nargs="+")
    p.set_defaults(func=study)
