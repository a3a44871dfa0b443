"""`parbench cell STUDY` and `parbench aggregate STUDY`: the one runner of every study that is
a `parbench.studies.benchmark.Benchmark`. A study says how to measure, check and table
its cells; this module does the rest alike for all of them.

- `cell`: check the study and the cell (a bad value is named with what is allowed, before
  any work), then `cell_life.run` (SIGTERM as Ctrl+C, measured again while disturbed,
  atomic writes, history), the record marked `failed` with its problems when the check
  finds any, and one progress line.
- `aggregate`: the records into the study's tables plus its `<study>_load` table, each
  written whole as `<study>_<name>.parquet` (`parbench.processed`).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path


def _benchmark(command: str, name: str):
    from parbench import studies

    if name not in studies.names():
        raise SystemExit(f"parbench {command}: unknown study {name!r}; allowed: {', '.join(studies.names())}")
    study = studies.get(name)
    if study.benchmark is None:
        allowed = [s.name for s in studies.registered() if s.benchmark is not None]
        raise SystemExit(f"parbench {command}: the study {name!r} has commands of its own (parbench {name}-...); "
                         f"this runner measures {', '.join(allowed) or 'no registered study'}")
    return study.benchmark


def measured_record(benchmark, cfg: dict, cell) -> dict:
    """One measurement of `cell` as its record: what `measure` returned, under `result`, and
    whether its check passed (`status` ok or failed, with the problems)."""
    from parbench import provenance

    started = time.time()
    try:
        result = benchmark.measure(cfg, cell)
        problems = list(benchmark.check(cfg, cell, result))
    except Exception as exc:  # the measured system failed: a failed cell, not a crashed run (Ctrl+C passes)
        result, problems = None, [f"{type(exc).__name__}: {exc}"]
    return {"study": benchmark.name, "cell": dataclasses.asdict(cell), "status": "failed" if problems else "ok",
            "failure": "; ".join(problems) or None, "result": result, "started_unix": started,
            "elapsed_sec": time.time() - started, "provenance": provenance.collect(cfg, Path.cwd())}


def cell_main(args) -> int:
    from parbench import cell_life
    from parbench import config as pbconfig
    from parbench.progress import progress_suffix

    command = "cell"
    benchmark = _benchmark(command, args.study)
    cfg = pbconfig.load_for_command(command, args.profile, args.overrides)
    cell = benchmark.cell_of(cfg, args.cell)
    if cell is None:
        raise SystemExit(f"parbench cell {args.study}: --cell {args.cell!r} is not a cell of profile "
                         f"{cfg['profile']}; allowed: {', '.join(benchmark.keys(cfg))}")
    out = Path(args.out or cell.record(cfg["profile"]))
    done = cell_life.run(benchmark.name, cell, cfg, lambda: measured_record(benchmark, cfg, cell),
                         lambda record: cell_life.write_json(out, record), command=f"cell {benchmark.name}")
    if done is None:
        return 130
    record, _ = done
    if record["status"] == "failed":
        print(f"\nERROR {cell.label} failed its checks: {record['failure']}\n  recorded as failed in {out}",
              file=sys.stderr)
    print(f"{cell.label}: {record['status']} in {record['elapsed_sec']:.3g} s" + progress_suffix(), flush=True)
    return 0


def aggregate_main(args) -> int:
    from parbench import processed
    from parbench.disturbance import load_table
    from parbench.records import read_records

    benchmark = _benchmark("aggregate", args.study)
    records = read_records(args.records)
    tables = benchmark.tables(records)
    if sorted(tables) != sorted(benchmark.TABLES):
        raise SystemExit(f"parbench aggregate {benchmark.name}: tables() made {sorted(tables)}, but TABLES "
                         f"declares {sorted(benchmark.TABLES)}")
    tables["load"] = load_table(benchmark.name, records, lambda r: benchmark.Cell(**r["cell"]).label,
                                lambda r: benchmark.name)
    for path in processed.write_tables(benchmark.name, tables, args.out_dir):
        print(f"{benchmark.name}: wrote {path}")
    print(f"{benchmark.name}: {len(records)} records, {processed.status_counts(tables['load'])}")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("cell", help="measure one cell of a study parbench's runner measures",
                       usage="parbench cell [-h] --cell KEY [--profile P] [--out PATH] STUDY [overrides ...]")
    p.add_argument("study")
    p.add_argument("--cell", required=True, help="the cell's key (its file name: size-1000_workers-2)")
    p.add_argument("--profile", default="local", help="profile in conf/ (default: local)")
    p.add_argument("--out", help="the record's path (default: the pipeline's path)")
    p.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. toy.size=1000")
    p.set_defaults(func=cell_main)
    p = sub.add_parser("aggregate", help="a study's records into its tidy Parquet tables",
                       usage="parbench aggregate [-h] --out-dir DIR STUDY [records ...]")
    p.add_argument("study")
    p.add_argument("--out-dir", required=True, help="data/processed/<profile>")
    p.add_argument("records", nargs="*", help="the cells' JSON records")
    p.set_defaults(func=aggregate_main)
