"""`parbench kem-aggregate`: the study's tables and the seed's output blocks."""

from __future__ import annotations

from pathlib import Path

TABLES = ("counters", "cycles", "percentiles", "samples", "throughput", "throughput_reps", "threads", "load")


def study(args) -> int:
    from parbench.processed import status_counts, write_tables
    from parbench.records import read_records, write_atomic
    from parbench.studies.kem import aggregate

    out = Path(args.out_dir)
    cycles = read_records(args.cycles)
    throughput = read_records(args.throughput or [])
    tables = aggregate.study_tables(cycles, throughput, read_records([args.counters])[0])
    write_tables("kem", tables, out, TABLES)
    text = aggregate.seed_results(cycles)
    write_atomic(out / "kem_seed_results.txt", text)
    print(text, flush=True)
    summary = tables["cycles"]
    sweep = tables["throughput"]
    print(f"kem: {len(summary)} cycles cells ({status_counts(summary)}), {len(sweep)} thread-sweep points from "
          f"{len(tables['throughput_reps'])} "
          f"repetitions -> {out}")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("kem-aggregate", help="write the kem study's tables and the seed's output blocks")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--counters", required=True, help="the counter probe's record (counters.json)")
    p.add_argument("--cycles", nargs="+", required=True, help="the cycles cells' records")
    p.add_argument("--throughput", nargs="*", help="the thread-sweep cells' records")
    p.set_defaults(func=study)
