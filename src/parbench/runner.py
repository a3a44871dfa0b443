"""`parbench cell STUDY` and `parbench aggregate STUDY`: the one runner of every study that is
a `parbench.studies.benchmark.Benchmark`. A study says how to measure, check and table
its cells; this module does the rest alike for all of them.

- `cell`: check the study and the cell (a bad value is named with what is allowed, before
  any work), then `cell_life.run` (SIGTERM as Ctrl+C, measured again while disturbed,
  atomic writes, history), the record marked `failed` with its problems when the check
  finds any, and one progress line.
- `aggregate`: for every study, what its `aggregate_inputs` names (the cells' records,
  and whatever else it reads) into its tables, each written whole as
  `<study>_<name>.parquet` (`parbench.processed`), and the seed's own files.

`run_cell` is that life cycle for one cell. The cell commands of the paper's studies
(`parbench sigpar-cell`, `sched-cell`, `kem-cell`, `kem-throughput`, `gil-cell`,
`dispatch-cell`) call it
with a Benchmark that measures and checks their cells, so that their rules, command lines
and record paths stay as they were and no cell measured before is measured again.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def _benchmark(command: str, name: str, runner_rules: bool = True):
    """The study `name`'s Benchmark; an unknown study, or (`runner_rules`) one whose cells
    have commands of their own, is named with the allowed ones."""
    from parbench import studies

    if name not in studies.names():
        raise SystemExit(f"parbench {command}: unknown study {name!r}; allowed: {', '.join(studies.names())}")
    study = studies.get(name)
    if runner_rules and not study.benchmark.RUNNER_RULES:
        allowed = [s.name for s in studies.registered() if s.benchmark.RUNNER_RULES]
        raise SystemExit(f"parbench {command}: the study {name!r} has commands of its own (parbench {name}-...); "
                         f"this runner measures {', '.join(allowed) or 'no registered study'}")
    return study.benchmark


def measured_record(benchmark, cfg: dict, cell) -> dict:
    """One measurement of `cell` as its record: the runner's fields (`RECORD_FIELDS`: the
    status is ok, failed with the check's problems, or unavailable with the reason) beside
    what `measure` returned."""
    from parbench import provenance
    from parbench.studies.benchmark import RECORD_FIELDS, Unavailable

    started = time.time()
    result, status, problems = {}, "ok", []
    try:
        result = benchmark.measure(cfg, cell)
    except Unavailable as exc:
        result, status, problems = exc.result, "unavailable", [exc.reason] if exc.reason else []
    except Exception as exc:  # the measured system failed: a failed cell, not a crashed run (Ctrl+C passes)
        result, status, problems = benchmark.empty_result(cfg, cell), "failed", [f"{type(exc).__name__}: {exc}"]
    finished = time.time()
    clash = sorted(set(result) & set(RECORD_FIELDS))
    if clash:  # a bug of the study, not of the system it measures
        raise ValueError(f"{benchmark.name}.measure returned {clash}, which the runner writes itself "
                         f"(RECORD_FIELDS: {', '.join(RECORD_FIELDS)}); name them otherwise")
    if status == "ok":
        try:
            problems = list(benchmark.check(cfg, cell, result))
        except Exception as exc:  # what was measured is not what the check expects
            problems = [f"the check raised {type(exc).__name__}: {exc}"]
        status = "failed" if problems else "ok"
    return {"study": benchmark.name, "profile": cfg["profile"], "cell": benchmark.cell_fields(cell), "status": status,
            "failure": "; ".join(problems) or None, **result, "started_unix": started, "finished_unix": finished,
            "elapsed_sec": finished - started, "provenance": provenance.collect(cfg, Path.cwd())}


def write_cell(benchmark, record: dict, stem: str, record_suffix: str = ".json") -> dict[str, str]:
    """The cell's side files, then its record `<stem><record_suffix>` (each written whole;
    the record last, so that its presence means the cell is complete): {name: path}."""
    from parbench import cell_life
    from parbench.records import write_atomic

    files = benchmark.side_files(record)
    if sorted(files) != sorted(benchmark.SIDE_FILES):
        raise ValueError(f"{benchmark.name}.side_files gave {sorted(files)}, but SIDE_FILES declares "
                         f"{sorted(benchmark.SIDE_FILES)}")
    out = {}
    for name, text in files.items():
        out[name] = f"{stem}{benchmark.SIDE_FILES[name]}"
        write_atomic(Path(out[name]), text)
    out["record"] = f"{stem}{record_suffix}"
    cell_life.write_json(Path(out["record"]), record, compact=benchmark.COMPACT_RECORD)
    return out


def run_cell(benchmark, cfg: dict, cell, stem: str | None = None, command: str | None = None,
             ready: dict | None = None) -> dict | None:
    """Measure `cell` through the life cycle (`cell_life.run`; `ready`: a record known
    without measuring, e.g. a cell skipped, written as it is), write it (at `stem`, default
    the pipeline's path) and print its lines; the record, None when it was interrupted
    (the command then exits 130: `exit_code`)."""
    from parbench import cell_life
    from parbench.progress import progress_suffix

    stem = stem or cell.stem(cfg["profile"])
    done = cell_life.run(benchmark.name, cell, cfg, lambda: measured_record(benchmark, cfg, cell),
                         lambda record: write_cell(benchmark, record, stem, cell.RECORD_SUFFIX),
                         command=command or f"cell {benchmark.name}", interrupted=benchmark.INTERRUPTED, ready=ready)
    if done is None:
        return None
    record, _ = done
    benchmark.written(cfg, cell, record)
    lines = benchmark.lines(cfg, cell, record)
    for i, line in enumerate(lines):
        print(line + (progress_suffix() if i == len(lines) - 1 else ""))
    sys.stdout.flush()
    return record


def exit_code(record: dict | None) -> int:
    """A cell command's exit code: 0 once its record is written, 130 when interrupted."""
    return 0 if record is not None else 130


def cell_main(args) -> int:
    from parbench import config as pbconfig

    benchmark = _benchmark("cell", args.study)
    cfg = pbconfig.load_for_command("cell", args.profile, args.overrides)
    cell = benchmark.cell_of(cfg, args.cell)
    if cell is None:
        raise SystemExit(f"parbench cell {args.study}: --cell {args.cell!r} is not a cell of profile "
                         f"{cfg['profile']}; allowed: {', '.join(benchmark.keys(cfg))}")
    if args.out and not args.out.endswith(".json"):
        raise SystemExit(f"parbench cell {args.study}: --out {args.out!r} must be the record's path, ending in .json")
    return exit_code(run_cell(benchmark, cfg, cell, args.out[: -len(".json")] if args.out else None))


def aggregate_main(args) -> int:
    from parbench import config as pbconfig

    benchmark = _benchmark("aggregate", args.study, runner_rules=False)
    cfg = pbconfig.load_for_command("aggregate", args.profile, args.overrides)
    names = sorted(name for name, *_ in args.input or [])
    expected = sorted(benchmark.aggregate_inputs(cfg))
    if names != expected:
        raise SystemExit(f"parbench aggregate {benchmark.name}: --input names {names or 'none'}; the study "
                         f"reads {', '.join(expected)} (each once: --input NAME PATH ...)")
    Path(args.out_dir).mkdir(parents=True, exist_ok=True)
    benchmark.aggregate(cfg, {name: files for name, *files in args.input}, Path(args.out_dir))
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
                       usage="parbench aggregate [-h] --out-dir DIR [--profile P] STUDY [overrides ...] "
                             "--input NAME [PATH ...] [--input ...]")
    p.add_argument("study")
    p.add_argument("--out-dir", required=True, help="data/processed/<profile>")
    p.add_argument("--profile", default="local", help="profile in conf/ (default: local)")
    p.add_argument("overrides", nargs="*", help="Hydra overrides the run used")
    p.add_argument("--input", nargs="+", action="append", metavar=("NAME", "PATH"),
                   help="what the study's aggregate reads, by name: --input records a.json b.json")
    p.set_defaults(func=aggregate_main)
