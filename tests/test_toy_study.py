"""docs/adding-a-study.md, proven: the toy study of tests/fixtures/studies/toy/ (a few dozen
lines: cells, measure, check, one table, one figure, templates) is added to a fresh copy
of the checkout exactly as the page says (its files, and one line in the registry), and
runs through the smoke pipeline: measured by `parbench cell`, tabled by `parbench
aggregate`, drawn, and rendered into the paper with its section, figure and facts."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import run_snakemake

REPO = Path(__file__).resolve().parents[1]
TOY = REPO / "tests/fixtures/studies/toy"
DOC = REPO / "docs/adding-a-study.md"
REGISTRY = "src/parbench/studies/__init__.py"


def toy_files() -> list[str]:
    return sorted(str(p.relative_to(TOY)) for p in TOY.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def add_toy(checkout: Path) -> None:
    """What docs/adding-a-study.md asks for: the study's files, and its name in the registry."""
    for rel in toy_files():
        (checkout / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(TOY / rel, checkout / rel)
    registry = checkout / REGISTRY
    text = registry.read_text()
    assert '    "gil",\n)' in text
    registry.write_text(text.replace('    "gil",\n)', '    "gil",\n    "toy",\n)'))


def test_the_page_lists_exactly_the_toy_files():
    """Every file the page's example tree names is in the toy study, and every file of the
    toy study is named there: the page is the recipe the test follows."""
    tree = re.search(r"```text\n(.*?)```", DOC.read_text(), re.S).group(1)
    named = sorted(line.split("#")[0].strip().replace("NAME", "toy") for line in tree.splitlines()
                   if line.split("#")[0].strip())
    assert named == toy_files()


def test_the_toy_study_is_a_few_dozen_lines():
    lines = sum(len((TOY / rel).read_text().splitlines()) for rel in toy_files())
    assert lines <= 100, lines


def test_the_toy_study_keeps_every_rule_a_study_keeps(fresh_checkout):
    """tests/test_studies.py (its places exist and agree, its names are prefixed, the shared
    parts name it nowhere, its config is validated) and the templates' lint, run in the
    copy where the toy is registered."""
    checkout = fresh_checkout()
    add_toy(checkout)
    env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_studies.py",
                           "tests/test_paper_subset.py", "tests/test_paper_check.py::test_every_template_of_the_paper_passes_its_lint",
                           "-k", "toy or paper_subset or lint"], cwd=checkout, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert re.search(r"\b(\d+) passed", proc.stdout) and int(re.search(r"(\d+) passed", proc.stdout).group(1)) >= 10


@pytest.mark.integration
def test_the_toy_study_runs_through_the_smoke_pipeline(fresh_checkout):
    checkout = fresh_checkout()
    add_toy(checkout)
    # Snakemake itself imports the copy's parbench, whose registry names the toy
    env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
    proc = run_snakemake(checkout, "-c2", "report", "--configfile", "conf/smoke.yaml",
                         "--config", 'overrides=["studies=[toy]"]', env=env)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "SUMMING INTEGERS IN THREADS (toy)" in proc.stdout
    assert "Cells to measure: 2 of 2" in proc.stdout
    # the records: measured by the runner, checked, with their load and provenance
    raw = checkout / "data/raw/smoke/toy"
    records = [json.loads(p.read_text()) for p in sorted(raw.glob("*.json"))]
    assert [r["cell"] for r in records] == [{"workers": 1, "rep": 0}, {"workers": 2, "rep": 0}]
    assert all(r["status"] == "ok" and r["total"] == 1000 * 999 // 2 for r in records)
    assert all("other_cores" in r["load"] for r in records)
    assert (raw / "history/workers-2_rep-0").is_dir()
    # the tables
    processed = checkout / "data/processed/smoke"
    sums = pd.read_parquet(processed / "toy_sums.parquet")
    assert list(sums["workers"]) == [1, 2] and (sums["seconds"] > 0).all() and (sums["status"] == "ok").all()
    assert len(pd.read_parquet(processed / "toy_load.parquet")) == 2
    # the figure, its caption the interactive chart's description
    assert (checkout / "figures/smoke/toy_seconds.svg").is_file()
    assert "Wall time of each sum, by threads." in (checkout / "figures/smoke/toy_seconds.html").read_text()
    # the paper: the section, its figure with the declared label and caption, the facts
    html = (checkout / "paper/_output/index.html").read_text()
    assert 'id="sec-toy"' in html and 'id="fig-toy-seconds"' in html
    assert "Wall time of each sum, by threads." in html
    # the command that reproduces the paper repeats the run's overrides
    reproduce = (checkout / "paper/_generated/reproduce.md").read_text()
    assert """--configfile conf/smoke.yaml --config 'overrides=["studies=[toy]"]'""" in reproduce
    facts = json.loads((checkout / "paper/_generated/toy/facts.json").read_text())
    assert facts["toy.cells"]["value"] == 2
    assert facts["toy.fastest"]["value"] == pytest.approx(sums["seconds"].min())
    # a cell the profile does not have is named with the allowed ones, before any work
    bad = subprocess.run([sys.executable, "-m", "parbench", "cell", "--cell", "workers-3_rep-0", "--profile",
                          "smoke", "toy", "studies=[toy]"], cwd=checkout, capture_output=True, text=True, env=env)
    assert bad.returncode != 0
    assert "'workers-3_rep-0' is not a cell of profile smoke; allowed: workers-1_rep-0, workers-2_rep-0" in bad.stderr
