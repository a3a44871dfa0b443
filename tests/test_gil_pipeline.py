"""The gil study in the one shared smoke run (tests/conftest.py: `smoke_run`): CPython
only, every workload in every execution, checked results, the tables, the seed's report,
the figures and the paper section."""

import json
import re
import platform
import sys

import pandas as pd
import pytest

from parbench.studies.gil import workloads as wl

pytestmark = pytest.mark.integration

PROFILE = "smoke"
PROCESSED = f"data/processed/{PROFILE}"
FIGURES = ["gil_wall_time", "gil_thread_speedup", "gil_cpu_utilization"]
POINTS = [("sequential", 1), ("threads", 1), ("threads", 2), ("processes", 1), ("processes", 2)]


@pytest.fixture(scope="module")
def run(smoke_checkout, smoke_run):
    return smoke_checkout, smoke_run["resumed"]


def test_the_header_announces_the_study_and_the_runtimes_not_measured(run):
    _, proc = run
    assert "GIL BENCHMARK (gil)" in proc.stdout
    assert f"Runtimes: cpython ({sys.executable}); baseline cpython" in proc.stdout
    assert "  gil cpython      multithread_cpu " in proc.stdout  # one line per cell


def test_every_cpython_point_is_measured_and_checked(run):
    checkout, _ = run
    summary = pd.read_parquet(checkout / PROCESSED / "gil_summary.parquet")
    assert len(summary) == len(wl.ORDER) * len(POINTS)
    assert set(summary["runtime"]) == {"cpython"} and (summary["status"] == "ok").all()
    assert set(zip(summary["execution"], summary["workers"])) == set(POINTS)
    assert (summary["median_wall_sec"] > 0).all() and summary["median_wall_sec"].nunique() == len(summary)
    # smoke: one launch per cell, so a median of its runs and no interval
    assert (summary["repetitions"] == 1).all() and (summary["runs"] == 3).all()
    assert summary["median_wall_sec_ci_low"].isna().all() and summary["speedup_ci_low"].isna().all()
    seq = summary[summary["execution"] == "sequential"]
    assert (seq["speedup_vs_sequential"] == 1.0).all()
    assert (summary["ratio_text"] == "1.00x same").all()  # cpython is its own baseline
    assert (summary["runtime_version"] == platform.python_version()).all() and summary["has_gil"].all()
    runs = pd.read_parquet(checkout / PROCESSED / "gil_runs.parquet")
    timed = runs[runs["phase"] == "timed"]
    assert len(timed) == len(summary) * 3 and (timed["wall_sec"] > 0).all()
    for path in (checkout / "data/raw" / PROFILE / "gil/cpython").glob("*.json"):
        record = json.loads(path.read_text())
        expected = record["expected_chunk"]
        assert all(result == expected for p in record["points"] for r in p["runs"] for result in r["results"])


def test_the_runtimes_table_and_the_seed_report(run):
    checkout, _ = run
    runtimes = pd.read_parquet(checkout / PROCESSED / "gil_runtimes.parquet")
    assert runtimes["runtime"].tolist() == ["cpython"] and runtimes["status"].tolist() == ["measured"]
    assert runtimes["multiprocessing"].tolist() == [True] and runtimes["start_method"].tolist() == ["fork"]
    report = (checkout / PROCESSED / "multithread_cpu_report.md").read_text()
    assert report.startswith("# Multithreaded CPU benchmark: cpython")
    assert "Only cpython was measured in this run" in report


def test_figures_exist_in_every_format(run):
    checkout, _ = run
    for name in FIGURES:
        for ext in ("svg", "png", "html"):
            path = checkout / "figures" / PROFILE / f"{name}.{ext}"
            assert path.exists() and path.stat().st_size > 1000, path


def test_the_paper_holds_the_gil_section_from_the_data(run):
    checkout, _ = run
    html = (checkout / "paper/_output/index.html").read_text()
    for anchor in ("sec-gil", "fig-gil-wall-time", "fig-gil-speedup", "fig-gil-cpu", "tbl-gil-runtimes",
                   "tbl-gil-speedup"):
        assert f'id="{anchor}"' in html, anchor
    # a number of the text is the table's: cpython's sequential time on the seed's workload
    summary = pd.read_parquet(checkout / PROCESSED / "gil_summary.parquet")
    seq = summary[(summary["execution"] == "sequential") & (summary["workload"] == "multithread_cpu")].iloc[0]
    facts = json.loads((checkout / "paper/_generated/gil/facts.json").read_text())
    fact = facts["gil.time.cpython.multithread_cpu.sequential.w1"]
    assert fact["value"] == pytest.approx(seq["median_wall_sec"] * 1e3)
    text = html.replace("\n", " ")
    assert fact["text"] in text and "on multithread_cpu cpython took" in text
    assert "When do threads help? In threads at" in text
    # sigpar ran in the same smoke run: its threading results are set beside hashlib's
    # (pandoc sets the apostrophe typographically)
    assert re.search(r"sigpar(?:'|\u2019|&#8217;|&rsquo;)s threading cells", text) and "sec-sigpar-efficiency" in html
