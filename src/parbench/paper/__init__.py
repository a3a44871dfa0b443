"""The paper's generated text, written by two commands the Snakemake rules run:

- `parbench paper-sources`: the shared parts (summary, Method section, the list of the
  run's study sections, limitations, conclusion, how to reproduce) into
  `paper/_generated/`;
- `parbench paper-fragments STUDY`: one study's generated parts into
  `paper/_generated/<study>/`, and the study's report tables (HTML and CSV) beside its
  processed data.

The fixed prose lives in `paper/index.qmd` and `paper/sections/<study>.qmd`, which
include these files; the generated prose is the templates of `paper/sections/<study>/`
and `paper/sections/shared/`, filled from facts (`parbench.paper.facts`) that `parbench
paper-check` holds against the tables. Rendering the paper runs no benchmark.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from parbench.words import counted

# The columns naming one row of every study's `<study>_load` table.
LOAD_KEY = ["cell", "rep"]


def _write(path: Path, text: str) -> Path:
    from parbench.records import write_atomic

    write_atomic(path, text.rstrip() + "\n")
    return path


def sources(args) -> int:
    import pandas as pd

    from parbench.paper.sources import shared_parts

    machine = json.loads(Path(args.machine).read_text())
    tables = {Path(p).stem: pd.read_parquet(p) for p in args.tables}
    parts, facts = shared_parts(machine, tables)
    for name, text in parts.items():
        print(f"paper: wrote {_write(Path(args.out_dir) / name, text)}")
    print(f"paper: wrote {_write(Path(args.out_dir) / 'facts.json', json.dumps(facts, indent=1))}")
    return 0


def place_figure(benchmark, name: str, facts, machine: dict) -> str:
    """A study's figure in its paper: its declared label and its one caption
    (paper/sections/<study>/captions.yml), what the caption names in braces written as the
    study's fact of that name where it has one (`facts`), so that the paper check holds the
    caption's numbers too."""
    from parbench.paper.format import figure

    cfg = machine.get("config", {})
    view = facts.view()
    values = {key: str(view[key]) if key in view else text for key, text in benchmark.caption_values(cfg).items()}
    return figure(machine["profile"], name, benchmark.caption(name, cfg, values), benchmark.figure(name).label)


def study_facts(study_name: str, module, tables: dict, machine: dict) -> tuple[Any, dict]:
    """A study's facts (a `Facts` over `tables`) and the rest of its templates' context:
    what every study states about load (`<study>_load`), then what its paper module's
    `facts(f, tables)` registers and returns."""
    from parbench.disturbance import NUMBERED, load_facts
    from parbench.paper.facts import Facts

    load = f"{study_name}_load"
    keys = {**module.KEYS, load: LOAD_KEY, f"{load}|{NUMBERED}": LOAD_KEY}
    f = Facts(study_name, tables, keys, machine, getattr(module, "NOTE_NAMES", {}))
    ctx: dict = {"tables": {}}
    ctx.update(load_facts(f, tables[load], load))
    ctx.update(module.facts(f, tables))
    return f, ctx


def render_study(study_name: str, module, tables: dict, machine: dict) -> tuple[dict[str, str], dict, dict[str, str]]:
    """A study's generated parts ({part: Markdown}), its facts ({key: record}) and the
    captions of its report tables ({REPORT_TABLES name: plain text}): the paper module computes
    the facts (`study_facts`), its templates (`paper/sections/<study>/<part>.md`) write the
    words, and each table caption under `tables:` in its captions.yml is a template filled
    from the same context, once, for the paper (`table_caption(name)`) and the report."""
    from parbench import studies
    from parbench.paper import templates
    from parbench.paper.facts import plain
    from parbench.paper.format import md_table

    facts, ctx = study_facts(study_name, module, tables, machine)
    frames = ctx["tables"]
    benchmark = studies.get(study_name).benchmark
    folder = templates.sections_dir() / study_name
    written = benchmark.table_captions()
    captions: dict[str, str] = {}

    def table(name: str, label: str, caption: str) -> str:
        return md_table(frames[name], caption, label)

    def table_caption(name: str) -> str:
        if name not in written:
            raise templates.TemplateError(f"{folder / 'captions.yml'}: the table {name} has no caption under tables:")
        if name not in captions:
            captions[name] = templates.render_text(folder, written[name], context, f"{folder / 'captions.yml'}: {name}")
        return captions[name]

    context = {"figure": lambda name: place_figure(benchmark, name, facts, machine), "table": table,
               "table_caption": table_caption, "profile": machine["profile"], **ctx, "f": facts.view()}
    parts = {part: templates.render(folder, part, context) for part in module.FRAGMENTS}
    return parts, facts.records(), {name: plain(table_caption(name)) for name in module.REPORT_TABLES}


def render_parts(study_name: str, module, tables: dict, machine: dict) -> tuple[dict[str, str], dict]:
    """A study's generated parts and its facts (`render_study` without the report's captions)."""
    parts, facts, _ = render_study(study_name, module, tables, machine)
    return parts, facts


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
        raise SystemExit(f"parbench paper-fragments {study.name}: missing {counted(len(missing), 'table')}: "
                         f"{', '.join(missing)}")
    parts, facts, captions = render_study(study.name, module, tables, machine)
    for name in module.FRAGMENTS:
        print(f"paper: wrote {_write(Path(args.out_dir) / f'{name}.md', parts[name])}")
    print(f"paper: wrote {_write(Path(args.out_dir) / 'facts.json', json.dumps(facts, indent=1))}")
    views = module.report_tables(tables)
    if sorted(views) != sorted(module.REPORT_TABLES):
        raise SystemExit(f"parbench paper-fragments {study.name}: report_tables wrote {sorted(views)}, "
                         f"but REPORT_TABLES declares {sorted(module.REPORT_TABLES)}")
    for name, frame in views.items():
        for path in write_table_views(frame, Path(args.tables_dir) / name, captions[name]):
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
