"""The paper's generated text, written by two commands the Snakemake rules run:

- `parbench paper-sources`: the shared parts (Method section, the list of the run's
  study sections, how to reproduce) into `paper/_generated/`;
- `parbench paper-fragments STUDY`: one study's generated parts into
  `paper/_generated/<study>/`, and the study's report tables (HTML and CSV) beside its
  processed data.

The fixed prose lives in `paper/index.qmd` and `paper/sections/<study>.qmd`, which
include these files; rendering the paper runs no benchmark.
"""

from __future__ import annotations

import json
from pathlib import Path


def _write(path: Path, text: str) -> Path:
    from parbench.records import write_atomic

    write_atomic(path, text.rstrip() + "\n")
    return path


def sources(args) -> int:
    from parbench.paper.sources import shared_parts

    machine = json.loads(Path(args.machine).read_text())
    for name, text in shared_parts(machine, study_tables(args.tables)).items():
        print(f"paper: wrote {_write(Path(args.out_dir) / name, text)}")
    return 0


def study_tables(paths: list[str]) -> dict:
    """study -> the rows of its tables among `paths` (processed Parquet files, named by
    the studies' paper modules' TABLES), concatenated; for the machines the cells ran on."""
    import pandas as pd

    from parbench import studies

    owner = {table: s.name for s in studies.registered() for table in s.paper().TABLES}
    frames: dict[str, list] = {}
    for path in paths:
        study = owner.get(Path(path).stem)
        if study is not None:
            frames.setdefault(study, []).append(pd.read_parquet(path))
    return {study: pd.concat(f, ignore_index=True) for study, f in frames.items()}


def fragments(args) -> int:
    import pandas as pd

    from parbench import studies
    from parbench.render.tables import write_table_views

    study = studies.get(args.study)
    module = study.paper()
    machine = json.loads(Path(args.machine).read_text())
    tables = {Path(p).stem: pd.read_parquet(p) for p in args.tables}
    missing = [t for t in module.TABLES if t not in tables]
    if missing:
        raise SystemExit(f"parbench paper-fragments {study.name}: missing table(s) {', '.join(missing)}")
    parts = module.fragments(tables, machine)
    if sorted(parts) != sorted(module.FRAGMENTS):
        raise SystemExit(f"parbench paper-fragments {study.name}: the paper module wrote {sorted(parts)}, "
                         f"but declares FRAGMENTS {sorted(module.FRAGMENTS)}")
    for name in module.FRAGMENTS:
        print(f"paper: wrote {_write(Path(args.out_dir) / f'{name}.md', parts[name])}")
    views = module.report_tables(tables)
    if sorted(views) != sorted(module.REPORT_TABLES):
        raise SystemExit(f"parbench paper-fragments {study.name}: report_tables wrote {sorted(views)}, "
                         f"but REPORT_TABLES declares {sorted(module.REPORT_TABLES)}")
    for name, (frame, caption) in views.items():
        for path in write_table_views(frame, Path(args.tables_dir) / name, caption):
            print(f"paper: wrote {path}")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("paper-sources", help="write the paper's shared generated parts")
    p.add_argument("--machine", required=True, help="machine.json of the run")
    p.add_argument("--out-dir", required=True)
    p.add_argument("tables", nargs="*", help="the studies' processed tables: the machines their cells ran on")
    p.set_defaults(func=sources)

    p = sub.add_parser("paper-fragments", help="write one study's generated parts of the paper")
    p.add_argument("study")
    p.add_argument("--machine", required=True, help="machine.json of the run")
    p.add_argument("--out-dir", required=True, help="paper/_generated/<study>")
    p.add_argument("--tables-dir", required=True, help="where the study's report tables go (HTML and CSV)")
    p.add_argument("tables", nargs="*", help="the processed Parquet tables the text reads")
    p.set_defaults(func=fragments)
