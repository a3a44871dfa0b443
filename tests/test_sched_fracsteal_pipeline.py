"""The explorer's zoom in the one shared smoke run (tests/conftest.py): the job ran
headless, its table joined the sched study's data, its figures were drawn, and the
paper's sched section shows the zoom with the frame-time ratio computed from the table."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from parbench.paper.format import fmt_num
from parbench.studies.sched import fracsteal, fracsteal_tables

pytestmark = pytest.mark.integration

PROFILE = "smoke"
PROCESSED = Path("data/processed") / PROFILE


@pytest.fixture(scope="module")
def run(smoke_checkout, smoke_run):
    return smoke_checkout


def test_the_zoom_was_measured_and_checked(run):
    record = json.loads((run / fracsteal.RECORD.format(profile=PROFILE)).read_text())
    assert record["status"] == "ok", record["failure"]
    assert [r["rep"] for r in record["runs"]] == [0]  # smoke: one repetition, one round
    assert record["runs"][0]["fracsteal"]["verified"] and record["runs"][0]["fracsteal"]["frame_count"] == 8
    assert record["provenance"]["config_hash"] and record["parameters"]["width"] == 320
    console = (run / fracsteal.CONSOLE.format(profile=PROFILE)).read_text()
    assert console.count("identical") == 8 and "Parallel version is" in console
    assert (run / fracsteal.STRIP.format(profile=PROFILE)).stat().st_size > 1000


def test_its_frame_times_join_the_sched_data(run):
    table = pd.read_parquet(run / PROCESSED / "sched_fracsteal_frames.parquet")
    assert list(table.columns) == fracsteal_tables.COLUMNS
    assert len(table) == 2 * 8 and (table["status"] == "ok").all() and table["verified"].all()
    assert set(table["scheduler"]) == {"ws_sync", "sequential"} and (table["time_s"] > 0).all()
    assert table["magnification"].max() == pytest.approx(280, rel=1e-6)


def test_the_paper_shows_the_zoom_and_the_ratio_from_the_data(run):
    s = fracsteal_tables.summary(pd.read_parquet(run / PROCESSED / "sched_fracsteal_frames.parquet"))
    html = (run / "paper/_output/index.html").read_text()
    assert 'id="fig-sched-fracsteal-strip"' in html and 'id="fig-sched-fracsteal-times"' in html
    # the text's frame times and ratio are the table's, each a checked fact
    facts = json.loads((run / "paper/_generated/sched/facts.json").read_text())
    for key, value in (("parallel", f"{fmt_num(s['parallel_median_s'])} s"),
                       ("sequential", f"{fmt_num(s['sequential_median_s'])} s"), ("ratio", fmt_num(s["ratio"]))):
        assert facts[f"sched.zoom.{key}"]["text"] == value
        assert f'data-key="sched.zoom.{key}">{value}</span>' in html, key
    assert "a frame took" in html and "and sequentially" in html
    for name in ("sched_fracsteal_strip", "sched_fracsteal_times"):
        for ext in ("svg", "png", "html"):
            assert (run / "figures" / PROFILE / f"{name}.{ext}").stat().st_size > 1000, (name, ext)
