"""`parbench kem-aggregate`: the study's tables and the seed's output blocks."""

from __future__ import annotations

TABLES = ("counters", "cycles", "percentiles", "samples", "throughput", "throughput_reps", "threads", "load")


def study(args) -> int:
    from parbench.processed import status_counts, write_study
    from parbench.records import read_records
    from parbench.studies.kem import aggregate

    cycles = read_records(args.cycles)
    throughput = read_records(args.throughput or [])
    tables = aggregate.study_tables(cycles, throughput, read_records([args.counters])[0])
    summary = tables["cycles"]
    write_study("kem", tables, args.out_dir, "kem_seed_results.txt", aggregate.seed_results(cycles),
                f"kem: {len(summary)} cycles cells ({status_counts(summary)}), {len(tables['throughput'])} "
                f"thread-sweep points from {len(tables['throughput_reps'])} repetitions", TABLES)
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("kem-aggregate", help="write the kem study's tables and the seed's output blocks")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--counters", required=True, help="the counter probe's record (counters.json)")
    p.add_argument("--cycles", nargs="+", required=True, help="the cycles cells' records")
    p.add_argument("--throughput", nargs="*", help="the thread-sweep cells' records")
    p.set_defaults(func=study)
