"""The run's page in Snakemake's report: the machine it measured on and the configuration
it ran with, beside the figures and tables of every study.

`parbench report-run` turns the paper's generated Method part (`run.md`: machine,
software, steadiness, telemetry) into HTML and appends the composed configuration
(machine.json's `config`, the values every cell ran with) as YAML.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import yaml

from parbench.records import write_atomic


def page(run_md: str, machine: dict) -> str:
    """The HTML page: the run's description, then its configuration."""
    import pypandoc

    # the paper's cross-references (@tbl-..., @fig-...) mean nothing on this page
    run_md = re.sub(r"\s*\(@(?:tbl|fig|sec)-[\w-]+\)", "", run_md)
    body = pypandoc.convert_text(run_md, "html", format="markdown")
    config = yaml.safe_dump(machine.get("config", {}), sort_keys=False, allow_unicode=True)
    return "\n".join([
        "<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\"><title>The run</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:1em auto;line-height:1.4}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
        "pre{background:#f6f6f6;padding:1em;overflow:auto}</style></head><body>",
        f"<h1>The run: profile {html.escape(str(machine.get('profile')))}</h1>",
        "<h2>The machine</h2>", body,
        "<h2>The configuration</h2>",
        "<p>The composed configuration every cell of this run was measured with (conf/, the profile and its "
        "overrides, after Hydra; its hash is in every record's provenance).</p>",
        f"<pre>{html.escape(config)}</pre>",
        "</body></html>", ""])


def main(args) -> int:
    machine = json.loads(Path(args.machine).read_text())
    write_atomic(Path(args.out), page(Path(args.run_md).read_text(), machine))
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("report-run", help="the run's machine and configuration, as a page of Snakemake's report")
    p.add_argument("--machine", required=True, help="machine.json of the run")
    p.add_argument("--run-md", required=True, help="the paper's generated run.md")
    p.add_argument("--out", required=True, help="the HTML page")
    p.set_defaults(func=main)
