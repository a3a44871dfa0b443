"""The dispatch study in the shared smoke run (tests/conftest.py: `smoke_run`): its
cells measured (the anomaly's experiments too), the tidy tables and the seed's report
written, the anomaly recorded with its cause and its prediction, every figure drawn and
the section in the rendered paper."""

from pathlib import Path

import pandas as pd
import pytest

from parbench.studies.dispatch import STUDY, aggregate, paper

pytestmark = pytest.mark.integration

PROFILE = "smoke"
PROCESSED = Path("data/processed") / PROFILE
SYSTEMS = ["local", "push", "push-naive", "processpool"]  # conf/dispatch/smoke.yaml
EXPERIMENTS = ["expiry-1x2", "order-io-noop-cpu"]  # push-naive only


@pytest.fixture(scope="module")
def tables(smoke_run, smoke_checkout):
    return {name: pd.read_parquet(smoke_checkout / PROCESSED / f"dispatch_{name}.parquet")
            for name in ("cells", "runs", "tasks", "depth", "summary", "anomaly", "load")}


def test_every_cell_is_measured_and_checked(tables, smoke_checkout):
    every = tables["cells"]
    assert (every["status"] == "ok").all(), every[["system", "experiment", "status", "failure"]]
    assert sorted(every.loc[every["experiment"] != "main", "experiment"]) == EXPERIMENTS
    assert (smoke_checkout / "data/raw" / PROFILE / "dispatch/push-naive@expiry-1x2_r0.json").exists()
    cells = aggregate.main_only(every).set_index("system")
    assert sorted(cells.index) == sorted(SYSTEMS)
    assert (smoke_checkout / "data/raw" / PROFILE / "dispatch/push_r0.json").exists()
    runs = aggregate.main_only(tables["runs"])
    assert set(aggregate.RUN_COLUMNS) <= set(runs.columns)
    # workers 1 and 2, three workloads, one run each, then two saturation runs at 2 workers (smoke: 1 repetition)
    assert (runs.groupby("system").size() == 2 * 3 + 2).all()
    assert (runs["status"] == "ok").all() and (runs["success_rate"] == 1.0).all()
    assert (runs["throughput_tasks_per_sec"] > 0).all() and runs["completion_time_sec"].nunique() > 10
    platform = runs[runs["kind"] == "platform"]
    assert platform["exactly_once"].all() and (platform["requests"] > 0).all()


def test_platform_tasks_carry_every_stage_in_order(tables):
    tasks = tables["tasks"]
    assert set(aggregate.TASK_COLUMNS) <= set(tasks.columns)
    mine = tasks[tasks["kind"] == "platform"]
    assert mine["correct"].all() and (mine["completions"] == 1).all()
    stages = ["submitted_ms", "queued_ms", "first_dispatched_ms", "started_ms", "finished_ms", "stored_ms", "seen_ms"]
    assert mine[stages].notna().all().all()
    for earlier, later in zip(stages[1:], stages[2:]):
        assert (mine[later] >= mine[earlier] - 1e-6).all(), (earlier, later)
    peers = tasks[tasks["kind"] == "peer"]
    assert peers["queued_ms"].isna().all() and peers["latency_ms"].notna().all()
    assert len(tables["depth"]) > 0


def test_the_anomaly_is_recorded_with_its_cause(tables):
    every = tables["runs"]
    # every run of a mode with heartbeats carries its prediction beside its measurement
    heartbeats = every[every["kind"] == "platform"]
    assert heartbeats["expiry_sec"].isna().eq(heartbeats["system"] == "local").all()
    naive = heartbeats[heartbeats["system"] == "push-naive"]
    assert naive[["stall_sec", "predicted_stall_sec"]].notna().all().all()
    assert set(naive.loc[naive["experiment"] == "expiry-1x2", "expiry_sec"]) == {2.0}
    assert set(tables["anomaly"]["experiment"]) == {"main", *EXPERIMENTS}
    runs = aggregate.main_only(every)
    first = runs[(runs["phase"] == "weak_scaling") & (runs["workload"] == "noop") & (runs["workers"] == 2)
                 & runs["first_after_change"]].set_index("system")
    # the fixed push never finds a stale worker nor dispatches a task twice
    assert first.loc["push", "stale_workers"] == 0 and first.loc["push", "requeued_tasks"] == 0
    naive = first.loc["push-naive"]
    if naive["stale_workers"] > 0:  # the stopped worker had not expired yet when the run began (the usual case)
        assert naive["requeued_tasks"] > 0
        assert naive["completion_time_sec"] > 5 * first.loc["push", "completion_time_sec"]


def test_every_record_has_its_load_row(tables):
    load = tables["load"]
    assert len(load) == len(tables["cells"]) and set(load["group"]) <= set(SYSTEMS)
    assert "push-naive@expiry-1x2" in set(load["cell"])


def test_the_seed_report_and_the_figures(smoke_checkout, tables):
    report = (smoke_checkout / PROCESSED / "dispatch_report.md").read_text()
    assert "### push mode" in report and "**Key Metrics**:" in report and "- 2 workers:" in report
    for name in STUDY.figures():
        for ext in ("svg", "png", "html"):
            path = smoke_checkout / "figures" / PROFILE / f"{name}.{ext}"
            assert path.exists() and path.stat().st_size > 1000, path


def test_the_paper_has_the_section_its_tables_and_figures(smoke_checkout, tables):
    html = (smoke_checkout / "paper/_output/index.html").read_text()
    assert 'id="sec-dispatch"' in html
    for label in ("fig-dispatch-throughput", "fig-dispatch-latency", "fig-dispatch-weak-scaling",
                  "fig-dispatch-anomaly", "fig-dispatch-dose", "fig-dispatch-order", "fig-dispatch-saturation",
                  "tbl-dispatch-modes", "tbl-dispatch-anomaly", "tbl-dispatch-dose", "tbl-dispatch-order",
                  "tbl-dispatch-saturation"):
        assert f'id="{label}"' in html, label
    for name in paper.FRAGMENTS:
        assert (smoke_checkout / "paper/_generated/dispatch" / f"{name}.md").exists()
    assert "stale worker" in html and "ROUTER_MANDATORY" in html
    assert "Dose-response:" in html and "Order:" in html
    # the section's numbers are facts the paper check holds against these tables
    facts = (smoke_checkout / "paper/_generated/dispatch/facts.json").read_text()
    assert '"dispatch.seed_anomaly.w2.time"' in facts and '"dispatch.expiry"' in facts
