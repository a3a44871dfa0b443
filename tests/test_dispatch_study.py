"""The dispatch study's parts that need no running platform: serialization and its
size checks, the task state machine, the metrics, a pool process's task runner, the
plan and the config's refusals, the aggregation and the seed's report on canned
records, the paper's parts rendered from canned tables and held against them by the paper
check, the figures against the figure check, and a peer measured for real (the process
pool) or recorded as unavailable."""

import base64
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from parbench import config as pbconfig
from parbench.studies.dispatch import STUDY, aggregate, metrics, paper, plan, run_cell, sweep, workloads
from parbench.studies.dispatch.platform import executor, protocol, serialization, store

REPO = Path(__file__).resolve().parents[1]


# --- serialization --------------------------------------------------------------------------

def test_functions_and_calls_round_trip_through_base64():
    workloads.by_value()
    text = serialization.serialize_text(workloads.cpu)
    fn = serialization.deserialize(serialization.decode(text, "payload"))
    assert fn(1000) == 332833500
    args, kwargs = serialization.call_arguments(serialization.decode(serialization.serialize_call(3, x=4), "p"))
    assert args == (3,) and kwargs == {"x": 4}


@pytest.mark.parametrize("value, error, words", [
    (5, serialization.PayloadError, "must be a base64 string, got int"),
    ("not base64!", serialization.PayloadError, "not valid base64"),
    ("", serialization.PayloadError, "is empty"),
    (base64.b64encode(b"x" * 2000).decode(), serialization.PayloadTooLarge, "larger than the limit of 1024 bytes"),
])
def test_bad_payloads_are_refused_before_any_unpickling(value, error, words):
    with pytest.raises(error, match=words):
        serialization.decode(value, "payload", limit=1024)


def test_a_payload_that_is_not_args_and_kwargs_is_refused():
    with pytest.raises(ValueError, match=r"serialized pair \(args, kwargs\)"):
        serialization.call_arguments(serialization.serialize([1, 2, 3]))


# --- the state machine and the messages ---------------------------------------------------------

def test_task_states_move_only_forward_or_back_to_the_queue():
    for old, new in [("QUEUED", "RUNNING"), ("RUNNING", "COMPLETED"), ("RUNNING", "FAILED"), ("RUNNING", "QUEUED")]:
        store.check_transition(old, new)
    for old, new, words in [("QUEUED", "COMPLETED", "from QUEUED: RUNNING"),
                            ("COMPLETED", "RUNNING", "none \\(it is final\\)"),
                            ("FAILED", "QUEUED", "none"), ("DONE", "RUNNING", "unknown status 'DONE'")]:
        with pytest.raises(store.TransitionError, match=words):
            store.check_transition(old, new)


def test_worker_messages_are_checked():
    message = protocol.worker_message(protocol.pack({"kind": "READY", "worker": "w1", "processes": 5}))
    assert message["processes"] == 5
    for bad in (b"\xc1garbage", protocol.pack({"kind": "NOPE", "worker": "w"}), protocol.pack({"kind": "READY"})):
        with pytest.raises(protocol.ProtocolError):
            protocol.worker_message(bad)


# --- a pool process's runner ----------------------------------------------------------------------

def _item(fn, *args, task_id="t1"):
    return [task_id, 1, "f1", serialization.serialize((args, {})), 300.0], {"f1": serialization.serialize(fn)}


def test_the_executor_times_runs_and_fails_tasks():
    workloads.by_value()
    executor._functions.clear()
    item, bodies = _item(workloads.cpu, 1000)
    task_id, attempt, status, value, error, started, finished, pid, kind = executor.run_task(item, bodies)
    assert status == "COMPLETED" and serialization.deserialize(value) == 332833500 and started <= finished
    assert kind is None

    def raises():
        raise KeyError("missing")

    executor._functions.clear()
    item, bodies = _item(raises)
    result = executor.run_task(item, bodies)
    assert result[2] == "FAILED" and "KeyError: 'missing'" in result[4] and result[8] == "raised"

    def exits():
        raise SystemExit(3)  # a task's own SystemExit is its failure, never the process's

    executor._functions.clear()
    assert executor.run_task(*_item(exits))[8] == "raised"

    def unpicklable():
        import threading

        return threading.Lock()

    executor._functions.clear()
    result = executor.run_task(*_item(unpicklable))
    assert result[8] == "result_unserializable" and "cannot be serialized" in result[4]

    def huge():
        return b"x" * 5000

    executor._functions.clear()
    executor._max_result_bytes = 1024
    try:
        result = executor.run_task(*_item(huge))
    finally:
        executor._max_result_bytes = serialization.DEFAULT_MAX_PAYLOAD_BYTES
    assert result[2] == "FAILED" and "larger than the limit of 1024 bytes" in result[4]
    assert result[8] == "result_too_large"
    executor._functions.clear()
    bodies = {"f1": serialization.serialize(workloads.noop)}
    chunk = [executor.run_task(_item(workloads.noop, task_id=f"t{i}")[0], bodies) for i in range(3)]
    assert [r[0] for r in chunk] == ["t0", "t1", "t2"] and {r[2] for r in chunk} == {"COMPLETED"}


def test_workload_checks():
    params = {"cpu_iterations": 1000, "io_sleep_sec": 0.1}
    assert workloads.expected("cpu", params) == sum(i * i for i in range(1000)) == 332833500
    assert workloads.check("cpu", params, 332833500) and not workloads.check("cpu", params, 332833501)
    assert workloads.check("noop", params, None) and not workloads.check("noop", params, 0)
    assert workloads.check("io", params, 0.1) and not workloads.check("io", params, "0.1")
    assert workloads.arguments("io", params) == ((0.1,), {})


# --- metrics -----------------------------------------------------------------------------------------

def test_percentiles_interpolate_and_need_enough_samples():
    import numpy as np

    values = [float(v) for v in range(1, 201)]
    for q in (50, 95, 99):  # on stats' scale, 0..100, as every study's
        assert metrics.percentile(values, q) == pytest.approx(np.percentile(values, q))
    assert metrics.percentile(values[:19], 95) is None and metrics.percentile(values[:20], 95) is not None
    assert metrics.percentile(values[:99], 99) is None
    assert metrics.percentile([], 50) is None
    summary = metrics.latency_summary(values)
    assert summary["p95_latency_ms"] == pytest.approx(np.percentile(values, 95))


def test_run_summary_counts_only_correct_tasks():
    summary = metrics.run_summary([10.0, 10.0, 10.5, 10.5], [10.1, 10.2, 10.9, None], [True, True, False, False])
    assert summary["tasks"] == 4 and summary["succeeded"] == 2 and summary["success_rate"] == 0.5
    assert summary["completion_time_sec"] is None  # a task was never seen: no completion time
    summary = metrics.run_summary([10.0, 10.0], [10.1, 10.5], [True, True])
    assert summary["completion_time_sec"] == pytest.approx(0.5)
    assert summary["throughput_tasks_per_sec"] == pytest.approx(4.0)
    assert summary["avg_latency_ms"] == pytest.approx(300) and summary["max_latency_ms"] == pytest.approx(500)
    assert metrics.efficiency(0.1, 0.4) == pytest.approx(0.25) and metrics.efficiency(None, 1) is None


# --- plan and config ---------------------------------------------------------------------------------

def test_cells_are_the_modes_then_the_peers_then_the_anomaly_experiments():
    cfg = pbconfig.load("m4")
    systems = ["local", "pull", "push", "push-naive", "processpool", "dask", "celery", "ray"]
    reps = cfg["dispatch"]["repetitions"]
    main = [plan.DispatchCell(s, r) for r in range(reps) for s in systems]
    cells = plan.cells(cfg)
    assert reps == 5 and cells[:len(main)] == main
    assert cfg["dispatch"]["workers"] == [1, 2, 4, 8] and cfg["dispatch"]["processes_per_worker"] == 5
    # m4: every point of the experiments, push-naive and push; the seed's worker counts are the main sweep's
    names = ["expiry-1x2", "expiry-1x6", "expiry-2x4", "order-io-noop-cpu", "order-cpu-io-noop"]
    assert list(plan.experiments(cfg)) == names
    assert cells[len(main):] == [plan.DispatchCell(s, r, n) for r in range(5) for n in names
                                 for s in ("push-naive", "push")]
    local = pbconfig.load("local")
    assert list(plan.experiments(local)) == ["workers-1-2-4-8", "expiry-1x2", "expiry-1x6", "order-io-noop-cpu"]
    cell = plan.DispatchCell.parse("push-naive@expiry-1x6", 2)
    assert (cell.system, cell.rep, cell.experiment, cell.key) == ("push-naive", 2, "expiry-1x6", "push-naive@expiry-1x6")
    assert cell.record("local") == "data/raw/local/dispatch/push-naive@expiry-1x6_r2.json"
    cell = plan.DispatchCell("push")
    assert cell.record("local") == "data/raw/local/dispatch/push_r0.json" and cell.kind == "platform"
    assert plan.DispatchCell("push", 2).record("local") == "data/raw/local/dispatch/push_r2.json"
    assert pbconfig.load("local")["dispatch"]["repetitions"] == 3
    assert pbconfig.load("smoke")["dispatch"]["repetitions"] == 1


def test_repetitions_run_interleaved_and_change_no_cells_parameters():
    from parbench import pipeline

    cfg = pbconfig.load("local", ["studies=[dispatch]"])
    order = [cell for study, cell in pipeline.run_order(cfg) if study == "dispatch"]
    n = len(plan.cells(cfg)) // 3  # the main cells and the experiments' cells, 3 repetitions each
    assert [c.rep for c in order] == [r for r in range(3) for _ in range(n)]
    assert sorted(c.key for c in order[:n]) == sorted(c.key for c in order[n:2 * n])
    more = pbconfig.load("local", ["dispatch.repetitions=4"])
    assert plan.cell_parameters(more, plan.DispatchCell("push", 3)) == plan.cell_parameters(cfg, plan.DispatchCell("push"))
    assert plan.DispatchCell("dask").kind == "peer"


def test_cell_parameters_follow_what_the_cell_measures():
    cfg = pbconfig.load("local")
    push = plan.cell_parameters(cfg, plan.DispatchCell("push"))
    dask = plan.cell_parameters(cfg, plan.DispatchCell("dask"))
    assert "platform" in push and "platform" not in dask
    slower = pbconfig.load("local", ["dispatch.platform.heartbeat_interval_sec=2.0"])
    assert plan.cell_parameters(slower, plan.DispatchCell("dask")) == dask
    assert plan.cell_parameters(slower, plan.DispatchCell("push")) != push
    estimate = pbconfig.load("local", ["dispatch.estimate.saturation_tasks_per_sec.platform=1"])
    assert plan.cell_parameters(estimate, plan.DispatchCell("push")) == push  # the estimate measures nothing


def test_an_experiments_protocol_changes_one_thing_and_runs_no_saturation():
    cfg = pbconfig.load("local")
    main = plan.protocol(cfg, plan.DispatchCell("push-naive"))
    dose = plan.protocol(cfg, plan.DispatchCell("push-naive", 0, "expiry-1x6"))
    order = plan.protocol(cfg, plan.DispatchCell("push-naive", 0, "order-io-noop-cpu"))
    scale = plan.protocol(cfg, plan.DispatchCell("push", 0, "workers-1-2-4-8"))
    assert main["saturation"]["workers"] == [2] and dose["saturation"]["workers"] == []
    assert (dose["platform"]["heartbeat_interval_sec"], dose["platform"]["heartbeat_liveness"]) == (1.0, 6)
    assert {k: v for k, v in dose.items() if k not in ("platform", "saturation")} == \
        {k: v for k, v in main.items() if k not in ("platform", "saturation")}
    assert order["workloads"] == ["io", "noop", "cpu"] and order["platform"] == main["platform"]
    assert scale["workers"] == [1, 2, 4, 8] and main["workers"] == [1, 2]
    assert plan.cell_parameters(cfg, plan.DispatchCell("push-naive", 0, "expiry-1x6"))["experiment"] == "expiry-1x6"
    with pytest.raises(ValueError, match="unknown dispatch experiment 'expiry-9x9'; allowed with this profile"):
        plan.protocol(cfg, plan.DispatchCell("push-naive", 0, "expiry-9x9"))
    # local mode runs as many processes per worker as the others unless told otherwise
    assert cfg["dispatch"]["local_processes_per_worker"] is None
    assert sweep.processes_per_worker(main, "local") == sweep.processes_per_worker(main, "push") == 2
    assert sweep.processes_per_worker({**main, "local_processes_per_worker": 1}, "local") == 1


def test_the_estimate_counts_every_run_and_the_naive_cliff():
    cfg = pbconfig.load("local")
    runs = plan.runs_of(plan.sweep_parameters(cfg))
    dc = cfg["dispatch"]
    sat = dc["saturation"]
    assert len(runs) == sum(dc["runs_per_worker_count"] * 3 for _ in dc["workers"]) \
        + len(sat["workers"]) * sat["runs"] * len(sat["submissions"])
    naive = plan.cell_estimate_sec(cfg, plan.DispatchCell("push-naive"))
    push = plan.cell_estimate_sec(cfg, plan.DispatchCell("push"))
    assert naive - push == pytest.approx((len(dc["workers"]) - 1) * 3.0)


@pytest.mark.parametrize("override, words", [
    ("dispatch.workers=[2,4]", "has no 1"),
    ("dispatch.workers=[0,1]", "dispatch.workers[0]: 0 is too small"),
    ("dispatch.modes=[fast]", "'fast' is not allowed; allowed: local, pull, push, push-naive"),
    ("dispatch.peers=[spark]", "'spark' is not allowed; allowed: processpool, dask, celery, ray"),
    ("dispatch.saturation.workers=[3]", "dispatch.saturation.workers: [3] not in dispatch.workers"),
    ("dispatch.client.wait_sec=100", "longer than dispatch.client.run_timeout_sec"),
    ("dispatch.workloads=[sleep]", "'sleep' is not allowed; allowed: noop, cpu, io"),
    ("dispatch.platform.heartbeat_liveness=0", "heartbeat_liveness: 0 is too small"),
    ("dispatch.repetitions=0", "dispatch.repetitions: 0 is too small"),
    ("dispatch.runs_per_worker_count=0", "dispatch.runs_per_worker_count: 0 is too small"),
    ("+dispatch.platform.heartbeats=3", "unknown key 'heartbeats'"),
    ("dispatch.platform.memory_limit_mb=10", "memory_limit_mb"),
    ("dispatch.platform.task_time_limit_sec=0", "task_time_limit_sec: 0 is too small"),
    ("dispatch.platform.redis_persistence=rdb", "'rdb' is not allowed; allowed: aof, none"),
    ("dispatch.anomaly.expiry.heartbeats=[[1.0,3]]", "[1.0, 3] is the main setting"),
    ("dispatch.anomaly.order.orders=[[io,noop]]", "is not an order of dispatch.workloads"),
    ("dispatch.anomaly.order.orders=[[noop,cpu,io]]", "is the main order"),
    ("dispatch.anomaly.expiry.workers=[2]", "dispatch.anomaly.expiry.workers: [2] must have at least 2 entries"),
])
def test_bad_dispatch_parameters_are_refused(override, words):
    with pytest.raises(pbconfig.ConfigError) as info:
        pbconfig.load("local", [override, "dispatch.client.run_timeout_sec=60"])
    assert words in str(info.value)


def test_the_header_names_the_systems_and_the_estimate():
    cfg = pbconfig.load("smoke")
    lines = STUDY.header(cfg, [("dispatch_cell", {"system": "push"})])
    assert lines[0].startswith("FUNCTION DISPATCH BENCHMARK (dispatch)")
    assert "Cells to measure: 1 of 6 (5 already measured)" in lines[-1]  # 4 main cells, 2 experiments' cells
    assert "Anomaly experiments (1 time each): push-naive with heartbeat 1 s x 2 = 2 s; push-naive with workloads " \
        "io, noop, cpu" in lines


# --- aggregation on canned records ---------------------------------------------------------------------

def _run(system, workers, workload, rep, seconds, first=False, stale=0, requeued=0, phase="weak_scaling",
         submission="per_task", status="ok", index=0):
    tasks = 5 * workers
    return {"mode": system, "kind": "platform", "workers": workers, "processes_per_worker": 2, "workload": workload,
            "submission": submission, "phase": phase, "repetition": rep, "run_index": index,
            "first_after_change": first, "tasks": tasks, "succeeded": tasks if status == "ok" else tasks - 1,
            "success_rate": 1.0 if status == "ok" else (tasks - 1) / tasks, "completion_time_sec": seconds,
            "throughput_tasks_per_sec": tasks / seconds, "avg_latency_ms": 1000 * seconds / 2,
            "min_latency_ms": 1.0, "max_latency_ms": 1000 * seconds, "p50_latency_ms": None, "p95_latency_ms": None,
            "p99_latency_ms": None, "exactly_once": True, "requests": tasks, "registered_workers": workers + stale,
            "stale_workers": stale, "requeued_tasks": requeued, "workers_dropped": None, "max_tasks_held": 2,
            "errors": None, "status": status, "failure": None if status == "ok" else "1 of 10 tasks"}


def _record(system, runs, status="ok", failure=None):
    return {"profile": "test", "cell": {"system": system, "kind": "platform"}, "status": status, "failure": failure,
            "runs": runs, "tasks": {"mode": [system], "run_index": [0], "workers": [1], "workload": ["noop"],
                                    "phase": ["weak_scaling"], "latency_ms": [12.0], "correct": [True]},
            "depth": {}, "elapsed_sec": 3.0, "versions": {"fastapi": "0.1"}, "provenance": {}}


@pytest.fixture
def records():
    naive = [_run("push-naive", 1, "noop", 0, 0.02, first=True, index=0),
             _run("push-naive", 1, "noop", 1, 0.03, index=1),
             _run("push-naive", 2, "noop", 0, 2.5, first=True, stale=1, requeued=4, index=2),
             _run("push-naive", 2, "noop", 1, 0.04, index=3),
             _run("push-naive", 2, "noop", 2, 0.05, index=4),
             _run("push-naive", 2, "noop", 0, 0.5, phase="saturation", index=5)]
    push = [_run("push", 1, "noop", 0, 0.02, first=True), _run("push", 2, "noop", 0, 0.03, first=True),
            _run("push", 2, "noop", 1, 0.05, status="failed")]
    return [_record("push-naive", naive), _record("push", push, status="failed", failure="1 of 10 tasks"),
            {**_record("ray", []), "cell": {"system": "ray", "kind": "peer"}, "status": "unavailable",
             "failure": "ray is not installed"}]


def test_the_summary_keeps_the_first_run_after_a_change_apart(records):
    tables = aggregate.study_tables(records)
    s = tables["summary"].set_index(["system", "phase", "workload", "workers"])
    naive2 = s.loc[("push-naive", "weak_scaling", "noop", 2)]
    assert naive2["repetitions"] == 1 and naive2["runs"] == 3
    assert naive2["median_completion_time_sec"] == pytest.approx(0.05)
    assert pd.isna(naive2["median_completion_time_sec_ci_low"])  # one repetition: no interval
    assert naive2["first_run_completion_time_sec"] == pytest.approx(2.5)
    assert naive2["later_median_completion_time_sec"] == pytest.approx(0.045)
    assert naive2["stale_workers_first_run"] == 1 and naive2["requeued_tasks"] == 4
    assert naive2["weak_scaling_efficiency"] == pytest.approx(0.025 / 0.05)
    assert naive2["efficiency_first_run"] == pytest.approx(0.02 / 2.5)
    assert s.loc[("push-naive", "saturation", "noop", 2), "weak_scaling_efficiency"] is None or \
        pd.isna(s.loc[("push-naive", "saturation", "noop", 2), "weak_scaling_efficiency"])
    # a failed run makes its group failed; it is never a result
    assert s.loc[("push", "weak_scaling", "noop", 2), "status"] == "failed"
    cells = tables["cells"].set_index("system")
    assert cells.loc["ray", "status"] == "unavailable" and cells.loc["push", "failed_runs"] == 1
    assert cells.loc["push-naive", "fastapi_version"] == "0.1"


def test_the_seed_report_has_its_blocks(records):
    tables = aggregate.study_tables(records)
    report = aggregate.seed_report(tables["summary"], tables["cells"])
    assert "### push-naive mode" in report and "**Key Metrics**:" in report
    assert "- **No-op Throughput**:" in report and "(average)" in report
    assert "- **Success Rate**: 100% across all tests" in report
    assert "- 1 worker: 0.02s completion (normal)" in report
    assert "- 2 workers: 2.50s completion (125x slower)" in report
    assert "### ray (peer)\n\nNot measured: ray is not installed" in report


# --- the paper, on canned tables ---------------------------------------------------------------

def machine(cores=2, **dispatch):
    cfg = pbconfig.load("smoke")
    cfg["dispatch"].update(dispatch)
    return {"profile": "test", "config": {**cfg, "run_order_seed": 7}, "machine": {"logical_cores": cores},
            "capabilities": {}}


def paper_tables(records):
    return {f"dispatch_{k}": v for k, v in aggregate.study_tables(records).items()}


def render(tables, m):
    from parbench.paper import render_parts

    return render_parts("dispatch", paper, tables, m)


def check(tables, m, parts, facts):
    """Every problem the paper check finds in the dispatch parts and the section's fixed prose."""
    from parbench.paper.check import study_problems

    return study_problems("dispatch", parts, facts, tables, m)


def test_the_dispatch_parts_hold_against_their_tables(records):
    from parbench.paper import templates

    tables, m = paper_tables(records), machine()
    parts, facts = render(tables, m)
    assert sorted(parts) == sorted(paper.FRAGMENTS)
    assert check(tables, m, parts, facts) == []
    # the templates state no number or comparison of their own
    assert [p for t in sorted((REPO / "paper/sections/dispatch").glob("*.md")) for p in templates.lint(t)] == []
    setup = parts["setup"]
    assert "[1]{.fact key=\"dispatch.n_failed\"} of [3]{.fact key=\"dispatch.n_systems\"} systems failed" in setup
    assert "push mode ([1 of 10 tasks]{.fact" in setup and "Ray ([ray is not installed]{.fact" in setup
    # the seed's anomaly beside push-naive's at the same worker count, in seconds added to the
    # one-worker run (7.67 - 0.13 for the seed; the multiples, 59x and 125x, would not compare)
    row = paper.anomaly_table(tables["dispatch_summary"]).set_index("workers").loc["2"]
    assert (row["seed push, s"], row["seed<br>added, s"]) == ("7.67", "7.54")
    assert (row["push-naive<br>first run, s"], row["push-naive<br>added, s"]) == ("2.5", "2.48")
    anomaly = parts["anomaly"]
    assert "The seed's push mode took [0.13 s]{.fact" in anomaly and "[7.67 s]{.fact" in anomaly
    assert "found [1]{.fact key=\"dispatch.cause.stale_mean\"} stale worker on average" in anomaly
    assert "{#tbl-dispatch-anomaly}" in anomaly
    # one repetition: no interval, so nothing is ranked and no headline cause is claimed
    assert all(v["value"].startswith("not distinguishable") for v in facts.values() if v["kind"] == "verdict")
    assert parts["headline"].startswith("**Dispatch (@sec-dispatch).** After the change from [1]{.fact")
    assert "This run did not confirm that the cliff is the heartbeat expiry" in parts["headline"]
    assert "[2]{.fact key=\"dispatch.cores\"} logical cores" in parts["limitations"]
    assert "Ray ([ray is not installed]{.fact" in parts["limitations"]


def test_a_run_where_nothing_was_measured_says_so_in_every_part():
    recs = [{**_record("ray", []), "cell": {"system": "ray", "kind": "peer"}, "status": "unavailable",
             "failure": "ray is not installed"}]
    tables, m = paper_tables(recs), machine()
    assert list(tables["dispatch_summary"].columns) == aggregate.SUMMARY_COLUMNS
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    assert "No system was measured in this run." in parts["setup"]
    for name in ("modes", "latency", "scaling", "saturation", "dose", "order", "verdict", "summary", "headline"):
        assert parts[name].strip() and "{#fig-" not in parts[name] and "@tbl-" not in parts[name], name
    assert "Not measured here: Ray ([ray is not installed]{.fact" in parts["limitations"]


def test_a_tampered_dispatch_fact_verdict_or_span_is_caught(repeated):
    tables, m = paper_tables(repeated), machine()
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    key = "dispatch.first_run.main.push-naive.weak_scaling.noop.per_task.w2"
    wrong = {k: dict(v) for k, v in facts.items()}
    wrong[key]["value"] = 0.7
    assert any(p.startswith(f"{key}: the paper says 0.7") for p in check(tables, m, parts, wrong))
    # a verdict that calls push-naive's throughput not lower where the intervals are apart
    verdict = "dispatch.rate.vs_highest.main.push-naive.noop.per_task.w2"
    assert facts[verdict]["value"] == "lower than"
    wrong = {k: dict(v) for k, v in facts.items()}
    wrong[verdict]["value"] = wrong[verdict]["text"] = "higher than"
    assert any(p.startswith(f"{verdict}: the paper says 'higher than'") for p in check(tables, m, parts, wrong))
    # a span showing another number, a number outside any fact, a comparison outside a verdict
    text = facts[key]["text"]
    assert f"[{text}]" in parts["headline"]
    edited = dict(parts, headline=parts["headline"].replace(f"[{text}]", "[1.9 s]", 1))
    assert any("shows '1.9 s'" in p for p in check(tables, m, edited, facts))
    edited = dict(parts, modes=parts["modes"] + "\nPush-naive took 7.7 s and was slower.\n")
    problems = check(tables, m, edited, facts)
    assert any("the number '7.7' is not a fact" in p for p in problems)
    assert any("the comparison 'slower' is not a verdict fact" in p for p in problems)


def test_the_paper_ranks_only_what_the_intervals_tell_apart(repeated):
    tables, m = paper_tables(repeated), machine()
    parts, facts = render(tables, m)
    # weak scaling at 2 workers: push's throughput interval lies far above push-naive's
    assert "on no-op tasks push mode had the highest median throughput, [" in parts["modes"]
    assert "and the other was [lower than]{.fact" in parts["modes"]
    # saturation (batched): the two systems' repetitions overlap
    assert "and the other was [not distinguishable on this machine from]{.fact" in parts["saturation"]
    assert "measured [3]{.fact key=\"dispatch.repetitions\"} times" in parts["setup"]
    assert "[95%]{.fact key=\"dispatch.confidence\"} percentile-bootstrap interval" in parts["setup"]
    assert "took [2.7 (2.5–2.9) s]{.fact" in parts["headline"]
    # the seed ran no saturation: none of its numbers stands beside a saturation run
    assert "The seed ran no saturation runs" in parts["saturation"] and "seed." not in parts["saturation"]


def test_the_paper_confirms_the_explanation_only_when_the_data_do():
    tables, m = paper_tables(_experiments()), machine()
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    verdict = parts["verdict"]
    assert "**Dose-response: confirmed.** In push-naive, all [3]{.fact key=\"dispatch.dose.n_as_predicted\"" in verdict
    assert "**Order: confirmed.**" in verdict and "**Scale: confirmed.**" in verdict
    assert "was [above]{.fact key=\"dispatch.scale.stalled.w8\"} zero" in verdict
    assert "at every expiry, all [3]{.fact key=\"dispatch.dose.n_as_predicted\"} median stalls were" in parts["dose"]
    assert "{#tbl-dispatch-dose}" in parts["dose"] and "| as predicted " in parts["dose"]
    # an offset of one sign, which the verdict's tolerance allows, is said where it holds
    dose = paper.dose_rows(paper.predictions(tables["dispatch_anomaly"]))
    first = dose[(dose["from_workers"] == dose["from_workers"].iloc[0]) & (dose["workers"] == dose["workers"].iloc[0])]
    above = bool((first["median_stall_sec"] > first["median_predicted_stall_sec"]).all())
    assert ("each median stall exceeded its prediction, by [" in parts["dose"]) == above
    assert "with the workloads in the order I/O, no-op, CPU, the I/O run, first after the change" in parts["order"]
    assert "Here push-naive's cliff is the heartbeat expiry" in parts["headline"]
    # the seed's anomaly at each of its worker counts beside push-naive's at the same count
    assert "where the seed's push mode took [7.54 s]{.fact" in parts["summary"]
    row = paper.anomaly_table(tables["dispatch_summary"]).set_index("workers").loc["8"]
    assert (row["seed push, s"], row["seed<br>added, s"]) == ("8.25", "8.12")
    # the same experiments, where the cliff ignores the expiry and sticks to the no-op runs
    tables = paper_tables(_experiments(False))
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    verdict = parts["verdict"]
    assert "**Dose-response: not confirmed.** In push-naive, [0]{.fact" in verdict
    assert "was [above]{.fact key=\"dispatch.dose.slope_vs_one\"} the predicted one second" not in verdict
    assert "**Order: not confirmed.**" in verdict
    assert "[longer than predicted]{.fact" in parts["dose"]
    assert "This run did not confirm that the cliff is the heartbeat expiry" in parts["headline"]
    # one repetition: no interval, so no prediction is confirmed whatever the medians say
    one = paper_tables([r for r in _experiments() if r["cell"]["rep"] == 0])
    parts, facts = render(one, m)
    assert check(one, m, parts, facts) == []
    assert "confirmed.**" in parts["verdict"] and ": confirmed.**" not in parts["verdict"]


def test_the_seed_s_averages_stand_only_beside_the_same_worker_counts():
    tables, m = paper_tables(_experiments()), machine()
    parts, _ = render(tables, m)
    modes = parts["modes"]
    # the main sweep ran 1 and 2 workers: push-naive's average comes from its scale experiment
    assert "push-naive (its scale experiment) averaged [" in modes
    assert "where the seed's push mode, push-naive's design, averaged [11.5]{.fact" in modes
    assert "(the fixed design, which the seed did not run)" in modes
    assert "push-naive (its scale experiment) reached [" in parts["scaling"] and "[26.2%]{.fact" in parts["scaling"]
    # a main sweep at the seed's worker counts (the m4 profile's): the averages come from it
    main = [r for r in _experiments() if r["cell"]["experiment"] == "main"]
    for r in main:
        r["runs"] = _exp_record(r["cell"]["system"], "main", r["cell"]["rep"], ["noop", "cpu", "io"], 1.0, 3, [2, 4, 8],
                                lambda w, wl, first: (2.0, 1.9, 1) if first and r["cell"]["system"] == "push-naive"
                                else (0.0, 0.0, 0))["runs"]
    tables = paper_tables(main)
    parts, facts = render(tables, machine(workers=[1, 2, 4, 8]))
    assert check(tables, machine(workers=[1, 2, 4, 8]), parts, facts) == []
    assert "push-naive averaged [" in parts["modes"] and "scale experiment" not in parts["modes"]
    assert "The seed's averages for" not in parts["modes"]


def _loaded(records, disturbed: tuple[str, int] | None = None):
    """The records with load readings; `disturbed` (system, rep) stayed disturbed."""
    out = []
    for r in records:
        r = dict(r, load={"other_cores": 0.02, "steal_cores": 0.0, "cell_cpu_sec": 1.0}, disturbed=False, attempt=1)
        r["cell"] = dict(r["cell"])
        if disturbed and (r["cell"]["system"], r["cell"].get("rep", 0)) == disturbed:
            r.update(load={"other_cores": 0.8, "steal_cores": 0.1, "cell_cpu_sec": 1.0}, disturbed=True, attempt=3)
        out.append(r)
    return out


def test_a_disturbed_repetition_is_tabled_named_and_drawn(repeated):
    recs = _loaded(repeated, ("push", 1))
    t = aggregate.study_tables(recs)
    load = t["load"]
    assert len(load) == len(recs) and set(load["group"]) == {"push", "push-naive"}
    row = load[(load["cell"] == "push") & (load["rep"] == 1)].iloc[0]
    assert row["disturbed"] and row["attempts"] == 3 and row["load_other_cores"] == 0.8
    s = t["summary"].set_index(["system", "phase", "workload", "submission", "workers"])
    assert s.loc[("push", "weak_scaling", "noop", "per_task", 2), "disturbed_reps"] == 1
    assert s.loc[("push-naive", "weak_scaling", "noop", "per_task", 2), "disturbed_reps"] == 0
    assert t["runs"].loc[t["runs"]["system"] == "push", "disturbed"].sum() == 3  # its three runs
    tables, m = paper_tables(recs), machine()
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    assert "push (repetition [2]{.fact" in parts["setup"]  # rep 1, the second: counted from 1 as the figures do
    # the figures' captions say how a disturbed repetition is marked
    assert "Open red diamonds mark points with a repetition that stayed disturbed" in parts["modes"]
    assert "open red diamonds mark runs of a repetition that stayed disturbed" in parts["scaling"]
    assert paper.modes_table(tables["dispatch_summary"])["disturbed repetitions"].tolist() == ["1", "0"]
    # records from before loads were measured: null load, nothing disturbed, no column
    old = aggregate.study_tables(repeated)
    assert old["load"]["load_other_cores"].isna().all() and not old["load"]["disturbed"].any()
    assert (old["summary"]["disturbed_reps"] == 0).all()
    assert "disturbed repetitions" not in paper.modes_table(old["summary"])


def test_the_anomaly_figure_stays_legible_when_its_run_stayed_disturbed(repeated):
    """The panel titles say the shown run was disturbed on a line of their own: one long
    line widened the figure past what the PDF prints at 5 pt (a smoke run on a busy
    machine, 1,044 px)."""
    import vl_convert as vlc

    from parbench.figures import legible
    from parbench.paper import figure_check
    from parbench.studies.dispatch import figures

    tables = paper_tables(_loaded(repeated, ("push-naive", 2)))  # the median run push-naive shows
    assert bool(figures.anomaly_run(tables["dispatch_runs"], "push-naive")["disturbed"])
    chart = figures.anomaly(tables["dispatch_tasks"], tables["dispatch_depth"], tables["dispatch_runs"], machine())
    svg = vlc.vegalite_to_svg(chart.to_json())
    assert "(a repetition that stayed disturbed)" in svg
    assert float(re.search(r'<svg[^>]*width="([\d.]+)', svg).group(1)) < 900  # the long line made it 1,044 px
    _, printed = legible.for_print(chart.to_dict(), vlc.vegalite_to_svg, 482)
    assert figure_check.type_problems(printed, "dispatch_anomaly", text_width=482) == []
    # the repetition is counted from 1, of how many ran ("rep 2" alone read as an index)
    run = figures.anomaly_run(tables["dispatch_runs"], "push-naive")
    reps = tables["dispatch_runs"].query("system == 'push-naive'")["rep"].nunique()
    assert f"repetition {int(run['rep']) + 1} of {reps}" in svg and reps > 1


def test_the_anomaly_figure_marks_where_each_task_ends(repeated):
    """A task of a few milliseconds is a sliver on an axis of seconds: a tick marks its end."""
    from parbench.studies.dispatch import figures

    tables = paper_tables(_loaded(repeated, ("push-naive", 2)))
    spec = figures.anomaly(tables["dispatch_tasks"], tables["dispatch_depth"], tables["dispatch_runs"],
                           machine()).to_dict()
    ticks = [layer for panel in spec["vconcat"] for part in panel.get("vconcat", [panel])
             for layer in part.get("layer", []) if layer["mark"]["type"] == "tick"]
    shown = figures.anomaly_data(tables["dispatch_tasks"], tables["dispatch_runs"])
    assert len(ticks) == len(shown)
    for tick, (run, seg) in zip(ticks, shown.values()):
        ends = pd.DataFrame(spec["datasets"][tick["data"]["name"]]).set_index("task")["to_ms"]
        assert ends.to_dict() == seg.groupby("task")["to_ms"].max().to_dict()


def test_every_drawn_dispatch_figure_passes_the_figure_check(repeated):
    """Panel headers are the data under them (the workload in every tooltip), legends list
    only the systems drawn, no title states a comparison, every log axis tick has its
    number; a disturbed repetition is marked."""
    import vl_convert as vlc

    from parbench.figures import DISTURBED_COLOR
    from parbench.paper import figure_check

    main = paper_tables(_loaded(repeated, ("push", 1)))
    experiments = paper_tables(_loaded(_experiments(), ("push-naive", 1)))
    m = machine()
    for name, (draw, inputs) in STUDY.figures().items():
        tables = experiments if name in ("dispatch_dose_response", "dispatch_order") else main
        svg = vlc.vegalite_to_svg(draw(*(tables[i] for i in inputs), m).to_json())
        assert figure_check.problems(svg, name) == [], name
        assert paper.drawn(tables)[name.replace("dispatch_", "").replace("_response", "")], name
        if name != "dispatch_latency" and name != "dispatch_anomaly":
            assert DISTURBED_COLOR in svg, name
        # only the systems drawn: no peer ran in these records
        assert ">processpool<" not in svg and ">ray<" not in svg and "system: ray" not in svg, name
    # nothing to draw: the paper leaves the figure out and says so in words
    assert paper.drawn(paper_tables(repeated))["order"] is False
    parts, _ = render(paper_tables(repeated), m)
    assert "fig-dispatch-order" not in parts["order"] and "no second order" in parts["order"]


# --- peers -----------------------------------------------------------------------------------------------

PEER_PARAMS = {"workers": [1, 2], "processes_per_worker": 1, "local_processes_per_worker": 1, "tasks_per_worker": 3,
               "runs_per_worker_count": 1, "workloads": ["noop", "cpu", "io"], "cpu_iterations": 1000,
               "io_sleep_sec": 0.05, "saturation": {"workers": [2], "tasks": 200, "runs": 1, "submissions": ["per_task", "batch"]},
               "client": {"concurrency": 8, "batch_size": 100, "wait_sec": 10.0, "run_timeout_sec": 30.0}}


def test_the_process_pool_peer_is_measured_for_real():
    from parbench.studies.dispatch import peers

    out = sweep.sweep(peers.ProcessPoolRunner(PEER_PARAMS), PEER_PARAMS)
    assert not out["failures"]
    runs = pd.DataFrame(out["runs"])
    assert len(runs) == 2 * 3 + 2 and (runs["status"] == "ok").all()
    assert (runs["success_rate"] == 1.0).all() and (runs["throughput_tasks_per_sec"] > 0).all()
    io = runs[(runs["workload"] == "io") & (runs["workers"] == 2)].iloc[0]
    assert io["completion_time_sec"] >= 0.05 * math.ceil(6 / 2) * 0.9  # 6 sleeps on 2 processes


def test_a_peer_that_cannot_start_is_recorded_unavailable(monkeypatch):
    from parbench.studies.dispatch import peers

    def unavailable(self):
        raise peers.PeerUnavailable("celery is not installed (test)")

    monkeypatch.setattr(peers.CeleryRunner, "start", unavailable)
    cfg = pbconfig.load("smoke", ["dispatch.peers=[celery]"])
    record = run_cell.measure(cfg, plan.DispatchCell("celery"))
    assert record["status"] == "unavailable" and record["failure"] == "celery is not installed (test)"
    assert record["runs"] == [] and record["versions"]["redis_server"]


# --- repetitions -----------------------------------------------------------------------------------------

def _rep_record(system, rep, t1, t2, sat):
    record = _record(system, [_run(system, 1, "noop", 0, t1, first=True, index=0),
                              _run(system, 2, "noop", 0, t2, first=True, index=1),
                              _run(system, 2, "noop", 0, sat, phase="saturation", submission="batch", index=2)])
    record["cell"] = {"system": system, "kind": "platform", "rep": rep}
    record["tasks"] = {"mode": [system] * 2, "run_index": [0, 1], "workers": [1, 2], "workload": ["noop"] * 2,
                       "phase": ["weak_scaling"] * 2, "latency_ms": [10.0 + rep, 20.0 + rep], "correct": [True] * 2,
                       "first_after_change": [True] * 2, "attempts": [1, 2 if system == "push-naive" else 1],
                       "worker": ["w0", "w1"], "submitted_ms": [0.0, 0.0], "queued_ms": [0.5, 0.5],
                       "first_dispatched_ms": [1.0, 1.0], "dispatched_ms": [1.0, 1000.0 * t2 - 5],
                       "started_ms": [2.0, 1000.0 * t2 - 4], "finished_ms": [2.5, 1000.0 * t2 - 3],
                       "stored_ms": [3.0, 1000.0 * t2 - 2], "seen_ms": [4.0, 1000.0 * t2 - 1]}
    return record


@pytest.fixture
def repeated():
    """push 3 times, clearly faster at 2 workers than push-naive; saturation of the two
    indistinguishable (overlapping repetitions)."""
    push = [_rep_record("push", r, t1, t2, sat) for r, (t1, t2, sat) in
            enumerate([(0.020, 0.030, 0.10), (0.022, 0.031, 0.12), (0.021, 0.029, 0.11)])]
    naive = [_rep_record("push-naive", r, t1, t2, sat) for r, (t1, t2, sat) in
             enumerate([(0.020, 2.5, 0.105), (0.023, 2.9, 0.125), (0.021, 2.7, 0.115)])]
    return push + naive


def test_the_summary_is_the_median_of_repetitions_with_bootstrap_intervals(repeated):
    from parbench.stats import bootstrap_median_ci, bootstrap_ratio_ci

    tables = aggregate.study_tables(repeated)
    assert sorted(tables["runs"]["rep"].unique()) == [0, 1, 2] and "rep" in tables["tasks"]
    assert len(tables["cells"]) == 6 and set(tables["cells"]["rep"]) == {0, 1, 2}
    s = tables["summary"].set_index(["system", "phase", "workload", "submission", "workers"])
    push2 = s.loc[("push", "weak_scaling", "noop", "per_task", 2)]
    assert push2["repetitions"] == 3 and push2["median_completion_time_sec"] == pytest.approx(0.030)
    low, high = bootstrap_median_ci([0.030, 0.031, 0.029])
    assert (push2["median_completion_time_sec_ci_low"], push2["median_completion_time_sec_ci_high"]) == \
        pytest.approx((low, high))
    assert push2["first_run_completion_time_sec_ci_low"] <= 0.030 <= push2["first_run_completion_time_sec_ci_high"]
    # efficiency T(1)/T(2) with both worker counts' repetitions resampled, not from medians alone
    assert push2["weak_scaling_efficiency"] == pytest.approx(0.021 / 0.030)
    low, high = bootstrap_ratio_ci([0.020, 0.022, 0.021], [0.030, 0.031, 0.029])
    assert (push2["weak_scaling_efficiency_ci_low"], push2["weak_scaling_efficiency_ci_high"]) == \
        pytest.approx((low, high))
    # latency pooled over the tasks of every repetition's runs, matched by (rep, run)
    assert push2["max_latency_ms"] == pytest.approx(22.0)


def test_console_lines_name_the_repetition():
    assert run_cell.rep_suffix(plan.DispatchCell("push", 1), 3) == " [rep 2/3]"
    assert run_cell.rep_suffix(plan.DispatchCell("push", 0), 1) == ""


def test_a_negative_repetition_is_refused(capsys):
    from parbench import cli

    with pytest.raises(SystemExit) as info:
        cli.main(["dispatch-cell", "--profile", "smoke", "--system", "push", "--rep", "-1"])
    assert "--rep must be >= 0" in str(info.value)


def test_every_figure_draws_repetitions_and_a_single_one(repeated, records):
    from parbench.studies.dispatch import figures

    for canned in (repeated, records):
        tables = {f"dispatch_{k}": v for k, v in aggregate.study_tables(canned).items()}
        for name, (fn, inputs) in STUDY.figures().items():
            spec = fn(*(tables[i] for i in inputs), {"profile": "test"}).to_dict()
            assert spec, name
    spec = str(figures.throughput(aggregate.study_tables(repeated)["summary"], {}).to_dict())
    assert "median_throughput_tasks_per_sec_ci_low" in spec and "95% bootstrap" in spec

def test_each_workload_panel_has_a_log_axis_of_its_own(repeated):
    """The I/O panel's systems, a few percent apart, were one line on the decades the no-op
    panel needs; and a facet's shared tick list crowded the no-op panel with the I/O
    panel's fine ticks. Each panel now spans its own values, numbered its own way."""
    from parbench.studies.dispatch import figures

    summary = aggregate.study_tables(repeated)["summary"]
    weak = summary[summary["phase"] == "weak_scaling"]  # push and push-naive, no-op, 1 and 2 workers
    rates = {"noop": [3.7, 40.0, 700.0, 7_000.0], "io": [15.8, 16.0, 16.2, 16.5]}
    panels = []
    for workload, values in rates.items():
        median = pd.Series(values, index=weak.index)
        panels.append(weak.assign(workload=workload, median_throughput_tasks_per_sec=median,
                                  median_throughput_tasks_per_sec_ci_low=median * 0.99,
                                  median_throughput_tasks_per_sec_ci_high=median * 1.01))
    summary = pd.concat(panels, ignore_index=True)
    spec = figures.throughput(summary, {}).to_dict()
    axes = {panel["title"]["text"]: next(layer["encoding"]["y"]["axis"]["values"] for layer in panel["layer"]
                                          if "axis" in layer["encoding"]["y"])
            for panel in spec["hconcat"]}
    assert axes["no-op"] == [3.0, 10.0, 30.0, 100.0, 300.0, 1_000.0, 3_000.0, 10_000.0]
    assert all(15.0 <= t <= 17.0 for t in axes["I/O"]) and len(axes["I/O"]) >= 3
    import vl_convert as vlc

    from parbench.paper import figure_check

    assert figure_check.problems(vlc.vegalite_to_svg(spec), "throughput") == []



# --- the push anomaly's experiments, on canned records -------------------------------------------------

def _exp_record(system, experiment, rep, workloads, interval, liveness, changes, stall_of):
    """One cell of push-naive or push: 1 worker, then each count of `changes`, every
    workload in `workloads` order; `stall_of(workers, workload, first)` -> (stall,
    predicted, stale) of a run."""
    runs, index = [], 0
    for workers in [1, *changes]:
        for position, workload in enumerate(workloads):
            first = position == 0
            stall, predicted, stale = stall_of(workers, workload, first) if workers > 1 else (0.0, 0.0, 0)
            run = _run(system, workers, workload, rep, 0.02 + stall, first=first, stale=stale,
                       requeued=3 if stall else 0, index=index)
            run.update(expiry_sec=interval * liveness, stall_sec=stall, predicted_stall_sec=predicted,
                       stale_lag_sec=(interval * liveness - predicted) if stale else None)
            runs.append(run)
            index += 1
    record = _record(system, runs)
    record["cell"] = {"system": system, "kind": "platform", "rep": rep, "experiment": experiment}
    record["parameters"] = {"workloads": list(workloads),
                            "platform": {"heartbeat_interval_sec": interval, "heartbeat_liveness": liveness}}
    record["tasks"] = {}
    return record


def _experiments(track: bool = True) -> list[dict]:
    """push-naive (and push) through the main sweep and the experiments, 3 repetitions.
    With `track`, push-naive's first run after a change stalls until the stale workers'
    expiry (1.2 s after the run's start less than the expiry, +/- jitter), as the
    explanation says; without, it stalls 7 s whatever the expiry and the order."""
    records = []
    for rep in range(3):
        jitter = 0.02 * rep

        def naive(expiry):
            def stall_of(workers, workload, first):
                if not first:
                    return 0.0, 0.0, 0
                predicted = expiry - 1.2
                return ((predicted + 0.05 + jitter) if track else 7.0), predicted, workers // 2
            return stall_of

        def push(workers, workload, first):
            return 0.0, 0.0, 0

        main = ["noop", "cpu", "io"]
        records.append(_exp_record("push-naive", "main", rep, main, 1.0, 3, [2], naive(3.0)))
        records.append(_exp_record("push", "main", rep, main, 1.0, 3, [2], push))
        records.append(_exp_record("push-naive", "expiry-1x2", rep, main, 1.0, 2, [2], naive(2.0)))
        records.append(_exp_record("push-naive", "expiry-1x6", rep, main, 1.0, 6, [2], naive(6.0)))
        if track:
            order_stall = naive(3.0)
        else:
            def order_stall(workers, workload, first):  # the cliff stays on the no-op run whatever the order
                return (7.0, 1.8, 1) if workload == "noop" else (0.0, 1.8 if first else 0.0, 1 if first else 0)
        records.append(_exp_record("push-naive", "order-io-noop-cpu", rep, ["io", "noop", "cpu"], 1.0, 3, [2],
                                   order_stall))
        records.append(_exp_record("push-naive", "workers-1-2-4-8", rep, main, 1.0, 3, [2, 4, 8], naive(3.0)))
        records.append(_exp_record("push", "workers-1-2-4-8", rep, main, 1.0, 3, [2, 4, 8], push))
    return records


def test_the_anomaly_table_groups_every_run_after_a_change():
    tables = aggregate.study_tables(_experiments())
    a = tables["anomaly"]
    row = a[(a["experiment"] == "expiry-1x6") & (a["workload"] == "noop")].iloc[0]
    assert (row["from_workers"], row["workers"], row["expiry_sec"], row["repetitions"]) == (1, 2, 6.0, 3)
    assert row["median_stall_sec"] == pytest.approx(4.8 + 0.05 + 0.02)
    assert row["median_predicted_stall_sec"] == pytest.approx(4.8)
    assert row["median_residual_sec"] == pytest.approx(0.07)
    assert row["median_stall_sec_ci_low"] <= row["median_stall_sec"] <= row["median_stall_sec_ci_high"]
    scale = a[(a["experiment"] == "workers-1-2-4-8") & (a["system"] == "push-naive") & a["first_after_change"]]
    assert sorted(zip(scale["from_workers"], scale["workers"])) == [(1, 2), (2, 4), (4, 8)]
    # the main tables keep to the main sweep
    assert set(aggregate.main_only(tables["summary"])["experiment"]) == {"main"}
    slope = aggregate.dose_slope(tables["runs"], "push-naive", ["main", "expiry-1x2", "expiry-1x6"])
    assert slope["slope"] == pytest.approx(1.0) and slope["slope_ci_low"] <= 1 <= slope["slope_ci_high"]
    assert slope["expiries"] == [2.0, 3.0, 6.0]
    # one run per expiry: resampling redraws the same line, so no interval
    one = aggregate.study_tables([r for r in _experiments() if r["cell"]["rep"] == 0])["runs"]
    single = aggregate.dose_slope(one, "push-naive", ["main", "expiry-1x2", "expiry-1x6"])
    assert single["slope"] == pytest.approx(1.0) and single["slope_ci_low"] is None


def test_the_experiments_figures_draw_the_experiments():
    from parbench.studies.dispatch import figures

    runs = aggregate.study_tables(_experiments())["runs"]
    dose = str(figures.dose_response(runs, {"profile": "test"}).to_dict())
    assert "predicted_stall_sec" in dose and "1 → 2 workers" in dose and "expiry-1x6" in dose
    spec = figures.order_figure(runs, {"profile": "test"}).to_dict()
    order = str(spec)
    # each order named as the x axis names the workloads
    assert "I/O, no-op, CPU" in order and "io, noop, cpu" not in order and "first after the change" in order
    # a workload's first and later runs have a median bar each, drawn from zero, never
    # stacked into one taller bar
    [bars] = [layer for layer in spec["spec"]["layer"] if layer["mark"]["type"] == "bar"]
    assert bars["encoding"]["y"]["stack"] is None
    # the header's title just above the orders it heads, not a label's height away
    assert spec["facet"]["column"]["header"]["titlePadding"] == 0


def test_each_run_gets_the_stall_its_stale_workers_predict():
    from parbench.studies.dispatch.sweep import RunData, TaskOutcome, measured_stall, stale_prediction

    params = {"platform": {"heartbeat_interval_sec": 1.0, "heartbeat_liveness": 3}}
    # two stale workers, last heard 0.5 s and 1.0 s before the run began; the expiry event of
    # the later one records when it was really last heard (1.1 s before)
    data = RunData([TaskOutcome(100.0, 101.0, "COMPLETED")], stale_last_seen={"a": 99.5, "b": 99.0},
                   events=[[102.0, "expired", "a", "last seen 98.9"]])
    lag, predicted = stale_prediction(data, 100.0, params)
    assert lag == pytest.approx(1.0) and predicted == pytest.approx(2.0)
    assert stale_prediction(RunData([]), 100.0, params) == (None, 0.0)
    stages = [{"attempts": 1, "t_first_dispatched": 100.0, "t_dispatched": 100.0},
              {"attempts": 2, "t_first_dispatched": 100.01, "t_dispatched": 102.1},
              {"attempts": 3, "t_first_dispatched": 100.02, "t_dispatched": 101.0}]
    assert measured_stall(stages) == pytest.approx(2.09)
    assert measured_stall(stages[:1]) == 0.0 and measured_stall(None) is None


def test_a_system_that_could_not_start_in_one_repetition_is_measured_on_the_others(repeated):
    """Celery could not start in its first repetition and ran in the other two: it was
    said to be left out of every figure and sentence while its numbers were in them."""
    recs = [dict(r) for r in repeated]
    first = next(i for i, r in enumerate(recs) if r["cell"]["system"] == "push-naive" and r["cell"]["rep"] == 0)
    recs[first] = {**_record("push-naive", []), "cell": {"system": "push-naive", "kind": "platform", "rep": 0},
                   "status": "unavailable", "failure": "the platform could not start (test)"}
    systems = aggregate.systems_table(aggregate.study_tables(recs)["cells"]).set_index("system")
    assert systems.loc["push-naive", "status"] == "ok"
    assert (systems.loc["push-naive", "repetitions_ok"], systems.loc["push-naive", "repetitions"]) == (2, 3)
    tables, m = paper_tables(recs), machine(reps=3)
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    setup = parts["setup"]
    assert "left out of every figure" not in setup and "Not measured here" not in parts["limitations"]
    assert re.search(r"push-naive ran in \[2\]\{[^}]*\} of its \[3\]\{[^}]*\} repetitions and could not start in the "
                     r"other \(\[the platform could not start \(test\)\]", setup), setup
    assert "measured [3]{.fact key=\"dispatch.repetitions\"} times (but for push-naive, below)" in setup
    assert "measured again because the machine was busy" not in setup
    # the repetition that could not start had been measured again for the machine's load:
    # its failure may be that load's, and the text says so
    recs[first] = {**recs[first], "attempt": 2, "disturbed": False,
                   "load": {"other_cores": 0.95, "steal_cores": 0.0, "cell_cpu_sec": 0.07},
                   "earlier_attempts": [{"attempt": 1, "load": {"other_cores": 1.14, "steal_cores": 0.0}}]}
    tables = paper_tables(recs)
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    assert re.search(r"\(test\)\]\{[^}]*\}\), a repetition that had been measured again because the machine was busy "
                     r"elsewhere \(\[1\.14\]\{[^}]*\} cores busy outside it on an earlier attempt, "
                     r"\[0\.95\]\{[^}]*\} on the last, which lasted until it failed\), so that the failure may be that load's rather than the "
                     r"system's; its numbers", parts["setup"]), parts["setup"]
    # a system none of whose repetitions ran is still left out
    none_ran = [r for r in recs if r["cell"]["system"] != "push-naive" or r["cell"]["rep"] == 0]
    parts, _ = render(paper_tables(none_ran), m)
    assert "left out of every figure, table and sentence below" in parts["setup"]


def test_crowded_cores_are_said_to_share_only_where_the_cpu_tasks_kept_them_busy():
    tables, m = paper_tables(_experiments()), machine()
    parts, facts = render(tables, m)
    text = parts["scaling"]
    if "outnumber the cores" not in text:
        pytest.skip("the fixture's processes do not outnumber its cores")
    tasks = tables["dispatch_tasks"]
    for run_ms, idle in ((0.01, True), (1e4, False)):
        rows = [{"experiment": "main", "phase": "weak_scaling", "workload": "cpu", "workers": 2, "system": "push",
                 "started_ms": 10.0 * i, "finished_ms": 10.0 * i + run_ms} for i in range(10)]
        t = pd.concat([tasks, pd.DataFrame(rows).reindex(columns=tasks.columns)], ignore_index=True)
        cut = {**tables, "dispatch_tasks": t}
        parts, facts = render(cut, m)
        assert check(cut, m, parts, facts) == []
        said = parts["scaling"]
        assert ("so they did not crowd the cores" in said) == idle, said
        assert "\n\nThe seed gives one weak-scaling efficiency" in said or "The seed gives one" not in said, said
        assert ("so they shared the cores through much of each run" in said) == (not idle), said


def test_an_efficiency_on_runs_that_disagree_widely_gives_their_range():
    """Ray's CPU efficiency at 2 workers, 6% (4.6%-82%), was the median of runs of 141, 10
    and 130 ms, which the text did not give."""
    tables, m = paper_tables(_experiments()), machine(reps=3)
    parts, _ = render(tables, m)
    assert "from one repetition to the next" not in parts["scaling"]
    runs = tables["dispatch_runs"]
    at = ((runs["experiment"] == "main") & (runs["phase"] == "weak_scaling") & (runs["workload"] == "cpu")
          & (runs["system"] == "push") & (runs["status"] == "ok"))
    top = runs.loc[at, "workers"].max()
    if top <= 1 or runs.loc[at & (runs["workers"] == top)].shape[0] < 2:
        pytest.skip("the fixture has no repeated runs of push at more than one worker")
    wide = runs.copy()
    first = wide.index[at & (wide["workers"] == top)][0]
    wide.loc[first, "completion_time_sec"] = 100 * wide.loc[at & (wide["workers"] == top), "completion_time_sec"].max()
    cut = {**tables, "dispatch_runs": wide}
    parts, facts = render(cut, m)
    assert check(cut, m, parts, facts) == []
    said = parts["scaling"]
    assert re.search(r"Push mode's \[\d+\]\{[^}]*\} runs at \[\d+\]\{[^}]*\} workers disagreed by "
                     r"more than a factor of \[2\]", said), said
    assert facts["dispatch.runs.cpu.push.w%d.max" % top]["value"] == pytest.approx(1e3 * wide.loc[first, "completion_time_sec"])
    # each workload's paragraph, and the crowded cores' after them, stands on its own
    assert "spans them. At " not in said and "spans them. With " not in said, said


def test_the_workload_every_system_ran_first_is_said_to_hold_the_first_runs_cost():
    """Every platform mode showed more CPU than no-op tasks/s: the no-op run came first at
    each worker count, which the text did not say."""
    from parbench.studies.dispatch.paper import first_workload

    runs = pd.DataFrame({"experiment": ["main", "main", "order"], "workload_order": ["noop,cpu,io"] * 2 + ["io,noop"]})
    assert first_workload(runs) == "no-op"
    assert first_workload(runs.assign(workload_order=["noop,cpu,io", "cpu,noop,io", "x"])) is None
    assert first_workload(None) is None
    tables, m = paper_tables(_experiments()), machine()
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    order = tables["dispatch_runs"].query("experiment == 'main'")["workload_order"].dropna().unique()
    said = "workload first at each worker count, so that run is the first after each change" in parts["modes"]
    assert said == (len(order) == 1)


def test_a_stall_is_as_predicted_within_the_check_and_the_dispatching_and_the_figure_draws_that_window():
    from parbench.studies.dispatch import figures as figs

    def row(stall):
        return {"median_stall_sec": stall, "median_stall_sec_ci_low": stall, "median_stall_sec_ci_high": stall,
                "median_predicted_stall_sec": 2.0, "median_predicted_stall_sec_ci_low": 2.0,
                "median_predicted_stall_sec_ci_high": 2.0, "heartbeat_interval_sec": 1.0}

    # 2 s predicted, a quarter of the 1 s interval for the check, 0.05 s of dispatching
    assert figs.prediction_top(2.0, 1.0) == pytest.approx(2.3)
    assert paper.against_prediction(row(2.29)) == "as predicted"
    assert paper.against_prediction(row(2.31)) == "longer than predicted"
    assert paper.against_prediction(row(1.9)) == "shorter than predicted"


def test_every_member_of_a_group_stated_by_its_word_gets_its_note_just_past_the_bar():
    """Two systems' throughputs lower than the highest, both just past the machine's spread,
    written "each of the 2 others was lower than it": only the first one's note was given,
    and the paper check stopped the run on the other's (the same for efficiencies all below
    full efficiency)."""
    base = {"push": (0.015, 0.030), "push-naive": (0.030, 0.0605), "local": (0.030, 0.061)}
    recs = [_rep_record(s, r, t1 * (1 + d), t2 * (1 + d), 0.1 + d) for s, (t1, t2) in base.items()
            for r, d in enumerate((0.0, 0.02, -0.02))]
    tables, m = paper_tables(recs), machine(reps=3)
    # throughputs 50.4% and 50.8% below push's, efficiencies 50% to 50.8% below full: all just past 46.5%
    m["cpu_stability"] = {"cv": 0.465}
    parts, facts = render(tables, m)
    margins = [k for k in facts if k.endswith(".margin")]
    assert sorted(k.split(".")[1] for k in margins) == ["eff_vs_full"] * 3 + ["rate"] * 2
    assert check(tables, m, parts, facts) == []
    for key in margins:
        assert f'{{.fact key="{key}"}}' in parts["modes" if ".rate." in key else "scaling"], key
    assert re.search(r"each of the \[2\]\{[^}]*n_lower\"\} others \(all of them decided just past their bar\^\[",
                     parts["modes"]), parts["modes"]
    assert re.search(r"each of the \[3\]\{[^}]*n_below\"\} \(all of them decided just past their bar\^\[",
                     parts["scaling"]), parts["scaling"]


def test_the_experiments_count_their_cells_apart_from_their_repetitions():
    """"ran 4 more settings as 15 cells of their own": 5 cells (an experiment and a system)
    measured 3 times each; a cell is the first, not the second."""
    tables, m = paper_tables(_experiments()), machine()
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    assert re.search(r"ran \[4\]\{[^}]+\} more settings as \[5\]\{[^}]+\} cells of their own, measured "
                     r"\[15\]\{[^}]+\} times in all, without saturation runs", parts["setup"]), parts["setup"]


def test_a_range_of_efficiencies_a_factor_of_ten_apart_gives_each_end_its_own_precision():
    """"ranged from 0.51% to 136.09%": the low end needs two decimals (below one percent),
    the high one does not; ends close together still share theirs ("98.01% to 100.11%")."""
    recs = [_rep_record(s, r, 0.015 * (1 + d), t2 * (1 + d), 0.1) for s, t2 in (("push", 0.0148), ("local", 3.0))
            for r, d in enumerate((0.0, 0.02, -0.02))]
    tables, m = paper_tables(recs), machine(reps=3)
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    assert re.search(r"efficiencies ranged from \[0\.50%\]\{[^}]+\} to \[101%\]\{", parts["scaling"]), parts["scaling"]
    near = [_rep_record(s, r, 0.015 * (1 + d), t2 * (1 + d), 0.1) for s, t2 in (("push", 0.01498), ("local", 0.0153))
            for r, d in enumerate((0.0, 0.02, -0.02))]
    tables = paper_tables(near)
    parts, facts = render(tables, m)
    assert re.search(r"efficiencies ranged from \[98\.04%\]\{[^}]+\} to \[100\.13%\]\{",
                     parts["scaling"]), parts["scaling"]


def test_a_systems_runs_that_disagree_at_both_worker_counts_are_given_in_one_sentence():
    """The clause "its efficiency of 82% (31%–126%) rests on runs that do not agree" was
    written twice, once for the runs on one worker and once at the most workers: one
    sentence now gives both ranges."""
    times = ((0.010, 0.010), (0.030, 0.035), (0.012, 0.012))
    recs = [_rep_record("push", r, t1, t2, 0.1) for r, (t1, t2) in enumerate(times)]
    recs += [_rep_record("local", r, 0.015 * (1 + d), 0.016 * (1 + d), 0.1) for r, d in enumerate((0.0, 0.02, -0.02))]
    tables, m = paper_tables(recs), machine(reps=3)
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    text = re.sub(r'\[([^\[\]]*)\]\{\.fact key="[^"]+"\}', r"\1", parts["scaling"])
    assert ("Push mode's 3 runs on one worker disagreed by more than a factor of 2, taking from 10 ms to 30 ms "
            "(median 12 ms), and its 3 runs at 2 workers from 10 ms to 35 ms (median 12 ms): its efficiency of "
            "100% (") in text, text
    assert text.count("rests on runs that do not agree") == 1
    assert "in a repetition that stayed disturbed" not in text
    # the repetition of the longest runs stayed disturbed: the range says so
    tables = paper_tables(_loaded(recs, ("push", 1)))
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    text = re.sub(r'\[([^\[\]]*)\]\{\.fact key="[^"]+"\}', r"\1", parts["scaling"])
    assert ("taking from 10 ms to 30 ms (median 12 ms, 1 of them in a repetition that stayed disturbed: the longest), "
            "and its 3 runs at 2 workers from 10 ms to 35 ms (median 12 ms, 1 of them") in text, text
