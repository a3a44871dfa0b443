"""`parbench gil-aggregate`: the study's tables and the seed's report.

    parbench gil-aggregate --profile local --out-dir data/processed/local [OVERRIDE ...] \\
        --cells data/raw/local/gil/*/*.json

The config (profile and overrides) says which runtimes were configured, so that one not
found on this machine, which has no cells, is still listed with the reason.
"""

from __future__ import annotations

REPORT_NAME = "multithread_cpu_report.md"


def study(args) -> int:
    from parbench import config as pbconfig
    from parbench.processed import status_counts, write_study
    from parbench.records import read_records
    from parbench.studies.gil import aggregate, runtimes

    cfg = pbconfig.load_for_command("gil-aggregate", args.profile, args.overrides)
    gc = cfg["gil"]
    records = read_records(args.cells)
    resolutions = [r.summary() for r in runtimes.resolve_all(cfg)]
    tables = aggregate.study_tables(records, resolutions, gc["confidence"], gc["baseline"])
    summary, rt = tables["summary"], tables["runtimes"]
    write_study("gil", tables, args.out_dir, REPORT_NAME,
                aggregate.seed_report(summary, rt, gc["baseline"], cfg["profile"]),
                f"gil: {len(records)} cells, {len(summary)} points ({status_counts(summary)}); runtimes measured: "
                f"{', '.join(rt.loc[rt['status'] == 'measured', 'runtime']) or 'none'}")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("gil-aggregate", help="write the gil study's tables and the seed's report")
    p.add_argument("--profile", default="local", help="profile in conf/ (default: local)")
    p.add_argument("--out-dir", required=True)
    p.add_argument("overrides", nargs="*", help="Hydra overrides the run used")
    p.add_argument("--cells", nargs="*", default=[], help="the cells' records (.json)")
    p.set_defaults(func=study)
