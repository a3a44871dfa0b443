"""`parbench sched-fracsteal-aggregate`: the explorer zoom's frame-time table."""

from __future__ import annotations

from pathlib import Path


def fracsteal_frames(args) -> int:
    import json

    from parbench.processed import write_parquet
    from parbench.studies.sched import fracsteal, fracsteal_tables

    record = json.loads(Path(args.record).read_text())
    table = fracsteal_tables.frames_table(record)
    path = write_parquet(table, Path(args.out_dir) / f"{fracsteal.TABLE}.parquet")
    s = fracsteal_tables.summary(table)
    if s is None:
        print(f"sched fracsteal: zoom {record['status']}: {record['failure']} -> {path}")
    else:
        print(f"sched fracsteal: {s['frames']} frames, median {s['parallel_median_s']:.6f} s parallel against "
              f"{s['sequential_median_s']:.6f} s sequential ({s['ratio']:.2f}x) -> {path}")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("sched-fracsteal-aggregate", help="write the explorer zoom's frame-time table")
    p.add_argument("--out-dir", required=True)
    p.add_argument("record", help="the zoom's record (zoom.json)")
    p.set_defaults(func=fracsteal_frames)
