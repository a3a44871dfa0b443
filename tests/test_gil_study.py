"""The gil study's Python side on canned inputs: the seed's ratio wording and box-drawn
table, finding runtimes, the plan and its config refusals, the workloads' expected
results, the checks of a point, the aggregation and the paper's generated text."""

import importlib.util
import json
import os
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from parbench import config as pbconfig
from parbench.paper.facts import plain
from parbench.studies.gil import STUDY, aggregate, paper, plan, report
from parbench.studies.gil import runtimes as rt
from parbench.studies.gil import workloads as wl
from parbench.studies.gil.run_cell import check_point, console_line

# --- the seed's wording and table ---------------------------------------------------------------

SEED_TABLE = """\
│ Benchmark              │ protopy (ms) │ cpython (ms) │ Ratio        │
├────────────────────────┼──────────────┼──────────────┼──────────────┤
│ multithread_cpu        │       120.00 │       380.00 │ 0.32x faster │"""


@pytest.mark.parametrize("ratio, words", [
    (120 / 380, "0.32x faster"),   # the seed's example
    (215 / 65, "3.3x slower"),     # the seed's result after the allocator fixes
    (2300 / 32, "71.9x slower"),   # the seed's ~70x before them
    (1.0, "1.00x same"),
    (0.999, "0.999x faster"),      # never "1.00x faster" or "1.0x slower": the digits show the word
    (1.04, "1.04x slower"),
    (None, "n/a"),
    (0.0, "n/a"),
    (float("nan"), "n/a"),
])
def test_ratio_is_worded_as_the_seed_words_it(ratio, words):
    assert report.ratio_text(ratio) == words


def test_a_ratio_the_data_cannot_tell_from_one_has_no_word():
    assert report.ratio_text(0.88, distinguishable=False) == "0.88x n.d."
    rows = [{"benchmark": "multithread_cpu", "runtime_ms": 120.0, "baseline_ms": 380.0, "distinguishable": False}]
    assert report.box_table(rows, "protopy", "cpython").splitlines()[2].endswith("│ 0.32x n.d.   │")


def test_the_box_table_is_the_seeds_byte_for_byte():
    rows = [{"benchmark": "multithread_cpu", "runtime_ms": 120.0, "baseline_ms": 380.0}]
    assert report.box_table(rows, "protopy", "cpython") == SEED_TABLE


def test_the_box_table_widens_for_long_names_and_writes_a_status_for_a_missing_time():
    rows = [{"benchmark": "multithread_cpu_scaled", "runtime_ms": 1234567.0, "baseline_ms": 3.0},
            {"benchmark": "multithread_alloc", "runtime_ms": "failed", "baseline_ms": 2.0}]
    lines = report.box_table(rows, "cpython_ft", "cpython").splitlines()
    assert lines[0] == "│ Benchmark              │ cpython_ft (ms) │ cpython (ms) │ Ratio            │"
    assert lines[1] == "├" + "┼".join("─" * n for n in (24, 17, 14, 18)) + "┤"
    assert lines[2] == "│ multithread_cpu_scaled │      1234567.00 │         3.00 │ 411522.3x slower │"
    assert lines[3] == "│ multithread_alloc      │          failed │         2.00 │ n/a              │"


# --- finding runtimes ---------------------------------------------------------------------------

def entry(*command, gil="auto"):
    return {"command": list(command), "gil": gil, "warmup_runs": None, "startup_sec": 0.0, "speed_factor": 1.0}


def test_the_project_python_resolves_to_this_interpreter():
    r = rt.resolve("cpython", entry("{python}"))
    assert r.found and r.argv == (sys.executable,) and r.gil_declared is None


def test_an_unset_seed_variable_is_a_reason_not_an_error():
    r = rt.resolve("protopy", entry("$PROTOPY_BIN", gil=False), env={"PATH": os.environ["PATH"]})
    assert not r.found and r.reason == "PROTOPY_BIN is not set" and r.gil_declared is False


def test_the_seed_variable_may_name_any_interpreter_with_arguments(tmp_path):
    env = {"PATH": os.environ["PATH"], "PROTOPY_BIN": f"{sys.executable} -X dev"}
    r = rt.resolve("protopy", entry("$PROTOPY_BIN"), env=env)
    assert r.argv == (sys.executable, "-X", "dev") and r.chosen == "$PROTOPY_BIN"
    missing = rt.resolve("protopy", entry("$PROTOPY_BIN"), env={"PATH": "", "PROTOPY_BIN": "./build/protopy"})
    assert not missing.found and "PROTOPY_BIN='./build/protopy'" in missing.reason
    assert "does not exist" in missing.reason


def test_alternatives_are_tried_in_order(tmp_path):
    exe = tmp_path / "python3.13t"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    env = {"PATH": str(tmp_path)}
    r = rt.resolve("cpython_ft", entry("python3.14t", "python3.13t"), env=env)
    assert r.argv == (str(exe),) and r.chosen == "python3.13t"
    none = rt.resolve("cpython_ft", entry("python3.14t", "python3.12t"), env=env)
    assert none.reason == "python3.14t is not on PATH; python3.12t is not on PATH"
    plain = tmp_path / "not-executable"
    plain.write_text("")
    assert rt.resolve("x", entry(str(plain)), env=env).reason.endswith("is not executable")


def test_the_worker_environment_drops_what_points_at_this_project():
    env = rt.worker_environment({"PATH": "/bin", "PYTHONPATH": "/src", "JYTHONPATH": "/j", "HOME": "/root"})
    assert env == {"PATH": "/bin", "HOME": "/root"}


# --- plan and config ----------------------------------------------------------------------------

def test_cells_cover_the_found_runtimes_baseline_first(monkeypatch):
    monkeypatch.setenv("PROTOPY_BIN", sys.executable)
    monkeypatch.delenv("CPYTHON_BIN", raising=False)
    cfg = pbconfig.load("local", ["gil.measure=[protopy,cpython,cpython_bin]", "gil.repetitions=3"])
    cells = plan.cells(cfg)
    # repetition by repetition (the run shuffles each), every launch a cell of its own
    assert [c.rep for c in cells] == [0] * 8 + [1] * 8 + [2] * 8 and len(set(cells)) == 24
    assert [c.runtime for c in cells[:8]] == ["cpython"] * 4 + ["protopy"] * 4
    assert [c.workload for c in cells[:4]] == wl.ORDER
    assert cells[0].outputs("local")["record"] == "data/raw/local/gil/cpython/multithread_cpu_r0.json"
    assert cells[9].label == "cpython multithread_cpu_scaled r1"
    header = "\n".join(STUDY.header(cfg, []))
    assert "warning: gil: runtime cpython_bin is not measured: CPYTHON_BIN is not set" in header
    assert "Cells to measure: 0 of 24 (24 already measured)" in header
    assert "each cell 3 times, interleaved" in header


def test_a_cell_comes_back_from_its_wildcards_and_more_repetitions_rerun_nothing():
    class Wildcards:
        runtime, workload, rep = "pypy", "multithread_alloc", "2"

    assert plan.GilCell.from_wildcards(Wildcards) == plan.GilCell("pypy", "multithread_alloc", 2)
    cfg = pbconfig.load("local")
    cell = plan.GilCell("cpython", "multithread_cpu")
    assert plan.cell_parameters(pbconfig.load("local", ["gil.repetitions=9"]), cell) == plan.cell_parameters(cfg, cell)
    # the worker's timed runs per point are the runs of one launch
    assert plan.worker_spec(cfg, "cpython", "multithread_cpu")["repetitions"] == cfg["gil"]["runs_per_cell"]


def test_points_are_sequential_once_then_threads_and_processes_per_worker_count():
    cfg = pbconfig.load("local", ["gil.workers=[2,1,4]"])
    assert plan.configs(cfg) == [("sequential", 1), ("threads", 1), ("threads", 2), ("threads", 4),
                                 ("processes", 1), ("processes", 2), ("processes", 4)]
    no_processes = pbconfig.load("local", ["gil.executions=[sequential,threads]", "gil.workers=[2]"])
    assert plan.configs(no_processes) == [("sequential", 1), ("threads", 2)]


def test_the_seed_workload_is_the_seeds_in_every_profile():
    for profile in ("local", "m4", "smoke"):
        seed = pbconfig.load(profile)["gil"]["workloads"]["multithread_cpu"]
        assert (seed["chunks"], seed["n"], seed["repeat"]) == (4, 50000, 1), profile
    assert pbconfig.load("smoke")["gil"]["measure"] == ["cpython"]


def test_cell_parameters_carry_the_spec_the_command_and_the_worker():
    cfg = pbconfig.load("local")
    params = plan.cell_parameters(cfg, plan.GilCell("cpython", "multithread_alloc"))
    assert params["command"] == [sys.executable]
    assert params["spec"]["params"] == {"items": 64000, "batch": 64} and params["spec"]["kind"] == "alloc"
    assert params["worker_sha256"] == plan.worker_digest()
    jython = plan.worker_spec(cfg, "jython", "multithread_cpu")
    assert jython["warmup_runs"] == cfg["gil"]["runtimes"]["jython"]["warmup_runs"] > cfg["gil"]["warmup_runs"]
    other = pbconfig.load("local", ["gil.workloads.multithread_alloc.estimate_sec=9"])
    assert plan.cell_parameters(other, plan.GilCell("cpython", "multithread_alloc")) == params


def test_the_estimate_counts_start_up_warm_up_and_every_point():
    cfg = pbconfig.load("local", ["gil.workers=[1,2]"])
    gc = cfg["gil"]
    cell = plan.GilCell("jython", "multithread_cpu_scaled")
    one = gc["workloads"]["multithread_cpu_scaled"]["estimate_sec"] * gc["runtimes"]["jython"]["speed_factor"]
    runs = gc["runtimes"]["jython"]["warmup_runs"] + gc["runs_per_cell"]
    timed = 3 * one + (one + gc["process_start_sec"]) + (one / 2 + 2 * gc["process_start_sec"])
    expected = gc["cell_overhead_sec"] + gc["runtimes"]["jython"]["startup_sec"] + runs * timed
    assert plan.cell_estimate_sec(cfg, cell) == pytest.approx(expected)


@pytest.mark.parametrize("override, words", [
    ("gil.measure=[cpython,graalpy]", "gil.measure[1]: 'graalpy' is not a configured runtime; allowed: cpython"),
    ("gil.baseline=graalpy", "gil.baseline: 'graalpy' is not measured; allowed: cpython, cpython_src, cpython_ft"),
    ("gil.executions=[threads,processes]", "lacks 'sequential'"),
    ("gil.executions=[sequential,fibers]", "'fibers' is not allowed; allowed: sequential, threads, processes"),
    ("gil.workers=[0,1]", "gil.workers[0]: 0 is too small; allowed: >= 1"),
    ("gil.repetitions=0", "gil.repetitions: 0 is too small; allowed: >= 1"),
    ("gil.repetitions=101", "gil.repetitions: 101 is too large"),
    ("gil.runs_per_cell=0", "gil.runs_per_cell: 0 is too small; allowed: >= 1"),
    ("gil.runtimes.pypy.gil=maybe", "gil.runtimes.pypy.gil: 'maybe' is not allowed; allowed: auto"),
    ("+gil.runtimes.pypy.comand=[x]", "unknown key 'comand' (did you mean 'command'?); allowed keys: command, env, gil"),
    ("+gil.runtimes.Bad-Name={command: [x], gil: auto, warmup_runs: null, startup_sec: 0, speed_factor: 1}",
     "gil.runtimes: 'Bad-Name' does not match"),
    ("gil.workloads.multithread_hashlib.buffer_kib=1", "buffer_kib: 1 is too small; allowed: >= 4"),
    ("+gil.workloads.multithread_sleep={chunks: 1}", "allowed keys: multithread_alloc, multithread_cpu,"),
    ("gil.confidence=1.5", "gil.confidence: 1.5 is too large"),
    ("gil.cpython.versions=[3.13]", "gil.cpython.versions[0]: 3.13 has the wrong type; allowed: string"),
    ("gil.cpython.versions=['3']", "gil.cpython.versions[0]: '3' does not match"),
    ("gil.cpython.pins={3.13.5: abc}", "does not match"),
    ("+gil.runtimes.pypy.env={PYTHON_GIL: 0}", "gil.runtimes.pypy.env.PYTHON_GIL: 0 has the wrong type; allowed: string"),
    ("+gil.runtimes.pypy.require={gil: true}", "unknown key 'gil'"),
    ("gil.runtimes.native.work_scale=0", "gil.runtimes.native.work_scale: 0 is too small"),
])
def test_bad_gil_parameters_are_refused(override, words):
    with pytest.raises(pbconfig.ConfigError) as info:
        pbconfig.load("local", [override])
    assert words in str(info.value)


# --- workloads ----------------------------------------------------------------------------------

def load_worker():
    spec = importlib.util.spec_from_file_location("gil_worker", plan.WORKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, params", [
    ("multithread_cpu", {"n": 50000, "repeat": 1}),
    ("multithread_cpu_scaled", {"n": 1000, "repeat": 7}),
    ("multithread_alloc", {"items": 1000, "batch": 64}),
    ("multithread_hashlib", {"buffer_kib": 8, "updates": 3}),
])
def test_expected_results_match_what_the_worker_computes(name, params):
    worker = load_worker()
    assert worker.CHUNKS[wl.get(name).kind](params) == wl.expected_chunk(name, params)


def test_the_seeds_chunk_is_sum_of_range_50000():
    assert wl.expected_chunk("multithread_cpu", {"n": 50000, "repeat": 1}) == sum(range(50_000)) == 1249975000


def test_results_are_checked_chunk_by_chunk():
    assert wl.check_results([5, 5, 5, 5], 4, 5) is None
    assert wl.check_results([5, 5, 6, 5], 4, 5) == "chunk 2 returned 6, expected 5"
    assert wl.check_results([5, 5, 5], 4, 5) == "expected 4 chunk results, got 3"
    assert wl.check_results(None, 4, 5) == "expected 4 chunk results, got NoneType"


SPEC = {"chunks": 2, "warmup_runs": 1, "repetitions": 2}


def run(rep, wall, results=(7, 7), cpu=None):
    return {"rep": rep, "wall_sec": wall, "cpu_sec": cpu, "results": list(results)}


def test_a_point_with_a_wrong_chunk_fails_and_says_where():
    point = {"execution": "threads", "workers": 2, "status": "ok", "reason": None,
             "warmup": [run(0, 0.1)], "runs": [run(0, 0.1), run(1, 0.1, results=(7, 8))]}
    checked = check_point(point, SPEC, 7)
    assert checked["status"] == "failed" and checked["failure"] == "timed run 1: chunk 1 returned 8, expected 7"
    point["runs"][1]["results"] = [7, 7]
    point["warmup"][0]["results"] = [0, 7]
    assert check_point(point, SPEC, 7)["failure"] == "warm-up run 0: chunk 0 returned 0, expected 7"


def test_a_point_that_raised_or_ran_short_fails_and_an_unavailable_one_stays():
    raised = {"execution": "processes", "workers": 2, "status": "error",
              "reason": "Traceback (most recent call last):\n  ...\nOSError: [Errno 24] Too many open files\n"}
    assert check_point(raised, SPEC, 7) == {**check_point(raised, SPEC, 7), "status": "failed"}
    assert "Too many open files" in check_point(raised, SPEC, 7)["failure"]
    short = {"execution": "threads", "workers": 1, "status": "ok", "warmup": [run(0, 0.1)], "runs": [run(0, 0.1)]}
    assert check_point(short, SPEC, 7)["failure"] == "1 runs instead of 2"
    gone = {"execution": "processes", "workers": 1, "status": "unavailable", "reason": "no multiprocessing"}
    assert check_point(gone, SPEC, 7)["status"] == "unavailable"


# --- aggregation --------------------------------------------------------------------------------

def point(execution, workers, walls, status="ok", failure=None, cpu_factor=1.0):
    return {"execution": execution, "workers": workers, "status": status, "failure": failure, "warmup": [],
            "runs": [run(i, w, cpu=w * cpu_factor) for i, w in enumerate(walls)] if status == "ok" else []}


def record(runtime, workload, points, status="ok", failure=None, implementation="CPython", gil=True):
    configs = [[p["execution"], p["workers"]] for p in points] or [["sequential", 1], ["threads", 2]]
    return {"profile": "test", "status": status, "failure": failure,
            "cell": {"runtime": runtime, "workload": workload},
            "parameters": {"spec": {"chunks": 4, "configs": configs}},
            "runtime": {"implementation": implementation, "version": "3.11.7", "host_version": None,
                        "sys_version": "3.11.7 (main)\n[GCC]", "executable": "/x", "gil_enabled": gil,
                        "has_gil": gil, "free_threaded_build": None},
            "worker": {"start_method": "fork", "wall_clock": "time.perf_counter", "cpu_clock": "time.process_time"},
            "points": points, "provenance": {"cpu_model": "canned"}}


RESOLUTIONS = [
    {"name": "cpython", "alternatives": ["{python}"], "argv": ["/usr/bin/python3"], "chosen": "{python}",
     "reason": None, "gil_declared": None},
    {"name": "jython", "alternatives": ["jython"], "argv": ["/usr/bin/jython"], "chosen": "jython",
     "reason": None, "gil_declared": None},
    {"name": "protopy", "alternatives": ["$PROTOPY_BIN"], "argv": None, "chosen": None,
     "reason": "PROTOPY_BIN is not set", "gil_declared": False},
]


def launches(recs: list[dict]) -> list[dict]:
    """Each canned record as 3 repetitions (interpreter launches, rep 0..2): launch k
    holds the k-th timed run of every point that ran, so that the launches' medians are
    the canned runs."""
    out = []
    for rec in recs:
        for k in range(3):
            pts = [dict(p, runs=[dict(p["runs"][k], rep=0)] if p["runs"] else []) for p in rec["points"]]
            out.append(dict(rec, cell={**rec["cell"], "rep": k}, points=pts, started_unix=100.0 * k + len(out)))
    return out


@pytest.fixture
def records():
    return launches([
        record("cpython", "multithread_cpu", [point("sequential", 1, [0.10, 0.12, 0.11]),
                                              point("threads", 2, [0.11, 0.13, 0.12], cpu_factor=1.0),
                                              point("processes", 2, [0.06, 0.07, 0.065], cpu_factor=1.8)]),
        record("cpython", "multithread_hashlib", [point("sequential", 1, [0.20, 0.20, 0.20]),
                                                  point("threads", 2, [0.10, 0.11, 0.105], cpu_factor=1.9),
                                                  point("processes", 2, [0.12, 0.12, 0.12])]),
        record("jython", "multithread_cpu", [point("sequential", 1, [0.30, 0.31, 0.29]),
                                             point("threads", 2, [0.16, 0.15, 0.17], cpu_factor=1.9),
                                             point("processes", 2, [], status="unavailable",
                                                   failure="this runtime has no multiprocessing module")],
               implementation="Jython", gil=False),
        record("jython", "multithread_hashlib", [point("sequential", 1, [0.4, 0.4, 0.4]),
                                                 point("threads", 2, [0.1, 0.1, 0.1], status="failed",
                                                       failure="timed run 0: chunk 1 returned 'x'"),
                                                 point("processes", 2, [], status="unavailable",
                                                       failure="this runtime has no multiprocessing module")],
               status="failed", failure="threads x2: timed run 0: chunk 1 returned 'x'",
               implementation="Jython", gil=False),
    ])


def tables(records):
    return aggregate.study_tables(records, RESOLUTIONS, 0.95, "cpython")


def test_medians_intervals_speedups_and_ratios(records):
    s = tables(records)["summary"].set_index(["runtime", "workload", "execution", "workers"])
    thr = s.loc[("cpython", "multithread_hashlib", "threads", 2)]
    # three launches of one run each: 0.10, 0.11, 0.105
    assert thr["median_wall_sec"] == 0.105 and thr["repetitions"] == 3 and thr["runs"] == 3
    # the bootstrap interval of the median of three cannot leave their range
    assert (thr["median_wall_sec_ci_low"], thr["median_wall_sec_ci_high"]) == (0.10, 0.11)
    assert thr["speedup_vs_sequential"] == pytest.approx(0.20 / 0.105)
    assert (thr["speedup_ci_low"], thr["speedup_ci_high"]) == pytest.approx((0.20 / 0.11, 0.20 / 0.10))
    assert thr["efficiency"] == pytest.approx(0.20 / 0.105 / 2)
    assert (thr["efficiency_ci_low"], thr["efficiency_ci_high"]) == pytest.approx((0.10 / 0.11, 0.10 / 0.10))
    assert thr["cpu_sec_per_wall_sec"] == pytest.approx(1.9)
    assert (thr["cpu_sec_per_wall_sec_ci_low"], thr["cpu_sec_per_wall_sec_ci_high"]) == pytest.approx((1.9, 1.9))
    jy = s.loc[("jython", "multithread_cpu", "threads", 2)]
    assert jy["ratio_vs_baseline"] == pytest.approx(0.16 / 0.12) and jy["ratio_text"] == "1.3x slower"
    assert jy["ratio_ci_low"] <= jy["ratio_vs_baseline"] <= jy["ratio_ci_high"]
    assert s.loc[("cpython", "multithread_cpu", "threads", 2), "ratio_text"] == "1.00x same"
    # a point against itself is exactly 1, with no interval
    base = s.loc[("cpython", "multithread_cpu", "threads", 2)]
    assert base["ratio_vs_baseline"] == 1.0 and pd.isna(base["ratio_ci_low"])
    seq = s.loc[("jython", "multithread_cpu", "sequential", 1)]
    assert seq["speedup_vs_sequential"] == 1.0 and pd.isna(seq["speedup_ci_low"]) and pd.notna(seq["ratio_ci_low"])
    failed = s.loc[("jython", "multithread_hashlib", "threads", 2)]
    assert failed["status"] == "failed" and pd.isna(failed["median_wall_sec"]) and pd.isna(failed["ratio_vs_baseline"])
    assert failed["failure"] == "repetition 0: timed run 0: chunk 1 returned 'x'"
    gone = s.loc[("jython", "multithread_cpu", "processes", 2)]
    assert gone["status"] == "unavailable" and "multiprocessing" in gone["failure"]


def test_runs_keep_every_repetition_and_a_row_for_what_did_not_run(records):
    runs = tables(records)["runs"]
    assert len(runs[runs["phase"] == "timed"]) == 3 * 3 + 3 * 3 + 2 * 3 + 3
    assert runs["wall_sec"].notna().sum() == 27
    assert set(runs.loc[runs["phase"].isna(), "status"]) == {"failed", "unavailable"}
    assert set(runs["rep"]) == {0, 1, 2} and set(runs["run"].dropna()) == {0}
    # every launch's rows share its place in the run order
    assert runs.groupby(["runtime", "workload", "rep"])["run_position"].nunique().max() == 1
    assert sorted(runs["run_position"].unique()) == list(range(12))


def test_a_launch_that_failed_fails_its_point_and_says_which(records):
    bad = [dict(r, points=[dict(p, status="failed", failure="chunk 0 returned 1", runs=[]) if p["execution"] ==
                           "threads" else p for p in r["points"]])
           if r["cell"] == {"runtime": "cpython", "workload": "multithread_cpu", "rep": 2} else r for r in records]
    s = tables(bad)["summary"].set_index(["runtime", "workload", "execution", "workers"])
    thr = s.loc[("cpython", "multithread_cpu", "threads", 2)]
    assert thr["status"] == "failed" and thr["failure"] == "repetition 2: chunk 0 returned 1"
    assert thr["repetitions"] == 3 and thr["repetitions_ok"] == 2 and pd.isna(thr["median_wall_sec"])
    assert s.loc[("cpython", "multithread_cpu", "sequential", 1), "status"] == "ok"


def test_a_single_launch_has_medians_but_no_intervals(records):
    one = [r for r in records if r["cell"]["rep"] == 0]
    s = tables(one)["summary"]
    ok = s[s["status"] == "ok"]
    assert ok["median_wall_sec"].notna().all() and ok["median_wall_sec_ci_low"].isna().all()
    assert ok["speedup_ci_low"].isna().all() and ok["cpu_sec_per_wall_sec_ci_low"].isna().all()


def test_a_cell_that_never_ran_stands_for_each_of_its_points():
    dead = record("pypy", "multithread_cpu", [], status="unavailable", failure="exit 127: no such interpreter")
    s = aggregate.study_tables([dead], RESOLUTIONS, 0.95, "cpython")["summary"]
    assert list(zip(s["execution"], s["workers"])) == [("sequential", 1), ("threads", 2)]
    assert set(s["status"]) == {"unavailable"} and set(s["failure"]) == {"exit 127: no such interpreter"}


def test_the_runtimes_table_lists_what_was_not_measured_and_why(records):
    r = tables(records)["runtimes"].set_index("runtime")
    assert list(r.index) == ["cpython", "jython", "protopy"]
    assert r.loc["cpython", "status"] == "measured" and r.loc["cpython", "multiprocessing"]
    assert r.loc["jython", "has_gil"] == False  # noqa: E712
    assert r.loc["jython", "multiprocessing"] == False  # noqa: E712
    # counted per repetition of a cell
    assert r.loc["jython", "cells_failed"] == 3 and r.loc["jython", "sys_version"] == "3.11.7 (main)"
    assert r.loc["protopy", "status"] == "not measured" and r.loc["protopy", "reason"] == "PROTOPY_BIN is not set"
    assert r.loc["protopy", "gil_declared"] == False and pd.isna(r.loc["protopy", "runtime_version"])  # noqa: E712


def test_the_seed_report_sets_each_runtime_beside_the_baseline_in_threads(records):
    t = tables(records)
    text = aggregate.seed_report(t["summary"], t["runtimes"], "cpython", "test")
    assert text.startswith("# Multithreaded CPU benchmark: jython vs cpython")
    assert "│ Benchmark              │ jython (ms)  │ cpython (ms) │ Ratio        │" in text
    assert "│ multithread_cpu        │       160.00 │       120.00 │ 1.3x slower  │" in text
    assert "│ multithread_hashlib    │       failed │       105.00 │ n/a          │" in text
    assert "Not measured: protopy (PROTOPY_BIN is not set)." in text
    assert "protopy (ms)" not in text  # no row invented for a runtime that was not there


# --- the paper ----------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]


def machine(studies=("gil",), reps=3, cores=2):
    cfg = pbconfig.load("smoke")
    cfg["studies"] = list(studies)
    cfg["gil"]["workers"] = [1, 2]
    cfg["gil"]["repetitions"] = reps
    return {"profile": "test", "config": {**cfg, "run_order_seed": 7}, "machine": {"logical_cores": cores},
            "capabilities": {}}


def paper_tables(recs, resolutions=RESOLUTIONS, baseline="cpython"):
    t = aggregate.study_tables(recs, resolutions, 0.95, baseline)
    return {"gil_summary": t["summary"], "gil_runtimes": t["runtimes"], "gil_comparisons": t["comparisons"],
            "gil_load": t["load"], "gil_runs": t["runs"]}


def render(tables, m):
    from parbench.paper import render_parts

    return render_parts("gil", paper, tables, m)


def check(tables, m, parts, facts):
    """Every problem the paper check finds in the gil parts and the section's fixed prose."""
    from parbench.paper.check import study_problems

    return study_problems("gil", parts, facts, tables, m)


def test_the_gil_parts_hold_against_their_tables(records):
    from parbench.paper import templates

    tables, m = paper_tables(records), machine()
    parts, facts = render(tables, m)
    assert sorted(parts) == sorted(paper.FRAGMENTS)
    assert check(tables, m, parts, facts) == []
    # the templates state no number or comparison of their own
    assert [p for t in sorted((REPO / "paper/sections/gil").glob("*.md")) for p in templates.lint(t)] == []
    speed = parts["speedup"]
    # threads at 2 workers: cpython's multithread_cpu gains nothing (0.92 (0.85-1.09)), its hashlib does
    assert "On the runtime with a GIL (cpython), on the workloads that hold the GIL: the one speedup was [not " \
           "distinguishable on this machine from]" in speed
    assert "On the runtime with a GIL (cpython), on the native-call workload: the one speedup was [above]" in speed
    assert "On the runtime without a GIL (jython), on the workloads that hold the GIL: the one speedup was [above]" \
        in speed
    assert '[1.90 (1.82–2.00)]{.fact key="gil.speedup.cpython.multithread_hashlib.threads.w2"}' not in speed
    assert "1.90<br>(1.82–2.00)" in paper.speedup_table(tables["gil_summary"]).to_string()
    # the paper's copy: runtime over workload in one column, no header line wider than
    # the intervals under it, so that the PDF's page holds it
    narrow = paper.paper_speedup_table(tables["gil_summary"])
    assert narrow.columns[0] == "runtime<br>workload" and narrow.iloc[0, 0].count("<br>") == 1
    assert max(len(line) for c in narrow.columns for line in c.split("<br>")) <= 13
    assert "protopy ([PROTOPY_BIN is not set]{.fact" in parts["runtimes"] and "{#tbl-gil-runtimes}" in parts["runtimes"]
    assert "│ multithread_cpu        │       160.00 │       120.00 │ 1.3x slower  │" in parts["report"]
    # each runtime's name stays on the page of its block
    assert re.search(r'::: \{\.block breakable="false"\}\n\w+ against cpython:\n\n```text\n', parts["report"])
    assert "jython multithread_hashlib in threads at [2]{.fact" in parts["setup"]
    assert "([repetition 0: timed run 0: chunk 1 returned 'x']{.fact" in parts["setup"]
    assert "The sigpar study did not run in this run" in parts["related"]
    assert "launched [3]{.fact" in parts["setup"] and "{#tbl-gil-speedup}" in parts["summary"]
    assert "{#fig-gil-wall-time}" in parts["wall_time"] and "{#fig-gil-speedup}" in parts["speedup"]
    # no free-threaded build here: the headline says so, the limitations name what was not measured
    assert parts["headline"].startswith("**The GIL (@sec-gil).** This run did not measure")
    assert "[2]{.fact key=\"gil.cores\"} logical cores" in parts["limitations"]
    assert "protopy ([PROTOPY_BIN is not set]{.fact" in parts["limitations"]


def test_a_gain_whose_cpu_use_the_run_cannot_place_is_not_called_one_at_a_time():
    # pypy and jython both gain in threads; pypy's launches kept 1.0 CPU s/s each (one at a
    # time), jython's 1.0, 1.3 and 1.6 (its median's interval holds the 1.25 bound): only
    # pypy's threads are said to have run one at a time
    def threads(walls, factors):
        return {"execution": "threads", "workers": 2, "status": "ok", "failure": None, "warmup": [],
                "runs": [run(i, w, cpu=w * c) for i, (w, c) in enumerate(zip(walls, factors))]}

    recs = launches([
        record("pypy", "multithread_cpu", [point("sequential", 1, [0.30, 0.31, 0.29]),
                                           threads([0.15, 0.16, 0.14], [1.0, 1.0, 1.0])], implementation="PyPy"),
        record("jython", "multithread_cpu", [point("sequential", 1, [0.30, 0.31, 0.29]),
                                             threads([0.15, 0.16, 0.14], [1.0, 1.3, 1.6])],
               implementation="Jython", gil=False),
    ])
    tables, m = paper_tables(recs, baseline="pypy"), machine()
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    speed = plain(parts["speedup"])
    assert "The threads of pypy on multithread_cpu ran one at a time" in speed, speed
    assert ("Whether the threads of jython on multithread_cpu ran at once this run cannot tell: a CPU use not "
            "distinguishable from that bound may lie on either side of it, so that gain may or may not be threads "
            "running at once.") in speed
    assert "Their threads ran one at a time" not in speed


def test_threads_found_running_at_once_only_just_past_the_bar_are_counted_with_the_note():
    """A gain whose threads kept more than PARALLEL_CORES busy is left out of the list of
    those that did not; decided just past the bar, its verdict went unwritten and stopped
    the paper check: the text counts those points, and the count gives the note."""
    def threads(walls, factors):
        return {"execution": "threads", "workers": 2, "status": "ok", "failure": None, "warmup": [],
                "runs": [run(i, w, cpu=w * c) for i, (w, c) in enumerate(zip(walls, factors))]}

    recs = launches([record("jython", "multithread_cpu", [point("sequential", 1, [0.30, 0.31, 0.29]),
                                                           threads([0.16, 0.17, 0.15], [1.39, 1.40, 1.41])],
                            implementation="Jython", gil=False)])
    tables = paper_tables(recs, baseline="jython")
    # 1.40 CPU s/s against 1.25: 10.7% apart, past the 10% spread by less than a tenth of it
    m = {**machine(), "cpu_stability": {"cv": 0.10}}
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    key = "gil.cpu_vs_parallel.jython.multithread_cpu.threads"
    assert facts[key]["value"] == "above" and facts[key]["near_bar"]
    assert re.search(r"A speedup above one is not yet parallel work: at the one point \(decided just past its bar"
                     r"\^\[For jython multithread_cpu in threads, [^]]*\]\{[^}]+\} and \[1\.25\]\{[^}]+\} differ by "
                     r"\[10\.7%\]\{\.fact key=\"" + re.escape(key) + r"\.margin\"\}", parts["speedup"]), \
        parts["speedup"]
    assert "so they ran at once." in parts["speedup"] and "at the others" not in parts["speedup"]
    # well past the bar: counted all the same, with no note
    m = {**machine(), "cpu_stability": {"cv": 0.05}}
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == [] and "decided just past" not in parts["speedup"]
    assert re.search(r"at the one point whose speedup in threads at \[2\]\{[^}]+\} workers lay above one",
                     parts["speedup"]), parts["speedup"]


def test_a_speedup_beyond_the_worker_count_is_not_said_to_be_threads_alone():
    # jython's threads at 2 workers took a third of its sequential time (a speedup of 3,
    # the launches agreeing) and pypy's a third to a seventh (its interval reaching below 2):
    # more than 2 threads can give; the first is a finding, the second is not
    def threads(walls, workers=2):
        return {"execution": "threads", "workers": workers, "status": "ok", "failure": None, "warmup": [],
                "runs": [run(i, w, cpu=w * 1.9) for i, w in enumerate(walls)]}

    recs = launches([
        record("jython", "multithread_cpu", [point("sequential", 1, [0.30, 0.31, 0.29]),
                                             threads([0.25, 0.255, 0.245], workers=1),
                                             threads([0.10, 0.103, 0.097])], implementation="Jython", gil=False),
        record("pypy", "multithread_cpu", [point("sequential", 1, [0.30, 0.31, 0.29]),
                                           threads([0.16, 0.10, 0.043])], implementation="PyPy"),
    ])
    tables, m = paper_tables(recs, baseline="pypy"), machine()
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    speed = plain(parts["speedup"])
    # one thread taking less time than the sequential run is beyond its worker count too
    assert re.search(r"More than its workers can give: the median speedup in threads of jython on multithread_cpu at "
                     r"1 worker, 1\.\d\d \([^)]*\), was above that count; of jython on multithread_cpu at "
                     r"2 workers, 3\.\d\d \([^)]*\), was above that count; of pypy on multithread_cpu at 2 workers, "
                     r"3\.\d\d \([^)]*\), was not distinguishable on this machine from that count\.", speed), speed
    assert ("the sequential run paid for something the threaded one did not (for a JIT runtime, code not yet "
            "warm, say); where the intervals cannot tell it from the worker count, its median is no finding.") in speed
    assert facts["gil.speedup_vs_workers.jython.multithread_cpu.w2"]["source"]["bound"] == 2.0
    # above its worker count by no more than the machine's spread: nothing to say
    near = launches([record("jython", "multithread_cpu", [point("sequential", 1, [0.30, 0.31, 0.29]),
                                                          threads([0.29, 0.295, 0.285], workers=1)],
                            implementation="Jython", gil=False)])
    tables = paper_tables(near, baseline="jython")
    parts, facts = render(tables, {**m, "cpu_stability": {"cv": 0.05}})
    assert "More than" not in parts["speedup"]
    # within the worker count: no such sentence
    slow = launches([record("jython", "multithread_cpu", [point("sequential", 1, [0.30, 0.31, 0.29]),
                                                          threads([0.16, 0.17, 0.15])],
                            implementation="Jython", gil=False)])
    tables = paper_tables(slow, baseline="jython")
    parts, facts = render(tables, m)
    assert "More than" not in parts["speedup"] and check(tables, m, parts, facts) == []


def _ft_headline(ft_threads: list, gil_seq: list, gil_threads: list, **ft_point) -> dict:
    """The headline of a run of cpython, cpython_ft and cpython_ft_gil on the scaled
    workload (cpython_ft's sequential run fixed), checked against its tables."""
    ft = {"name": "cpython_ft", "alternatives": ["python3.13t"], "argv": ["/x/python3.13t"], "chosen": "python3.13t",
          "reason": None, "gil_declared": None}
    resolutions = [*RESOLUTIONS, ft, dict(ft, name="cpython_ft_gil")]
    scaled = "multithread_cpu_scaled"
    recs = launches([
        record("cpython", scaled, [point("sequential", 1, [0.10, 0.11, 0.12]), point("threads", 2, [0.11, 0.12, 0.13])]),
        record("cpython_ft", scaled, [point("sequential", 1, [0.044, 0.045, 0.046]),
                                      point("threads", 2, ft_threads, **ft_point)], gil=False),
        record("cpython_ft_gil", scaled, [point("sequential", 1, gil_seq), point("threads", 2, gil_threads)]),
    ])
    tables, m = paper_tables(recs, resolutions), machine()
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    return parts["headline"]


def test_the_headline_compares_the_times_where_the_two_speedups_overlap():
    """GIL off against on in threads: each speedup is over its own sequential run, so two
    speedups may overlap where the times themselves are set apart; the headline then
    states the time ratio (the GIL's cost at that point) and its verdict."""
    head = _ft_headline([0.022, 0.023, 0.024], [0.088, 0.090, 0.092], [0.048, 0.050, 0.052], cpu_factor=1.9)
    assert "[not distinguishable on this machine from]" in head  # 1.96 against 1.80
    assert "so the headline cannot say" not in head and "With the two speedups not told apart" not in head
    assert "with its GIL on, the same binary took [2.17 (" in head
    assert '[slower with the GIL on]{.fact key="gil.time_ratio_vs_one.gil_cost.' in head
    assert "yet its run was" not in head and "does not show that the GIL cost nothing" not in head
    assert "no gain that its interval can show" not in head  # 1.96: above one
    assert "Nor does cpython_ft's CPU use" not in head  # its threads kept 1.9 cores busy: they ran at once
    # where the speedups are not told apart, how far each one's launches ranged there
    assert re.search(r"\(its launches there took from \[[^]]+ ms\]\{\.fact key=\"gil\.launch\.min\.cpython_ft_gil\.[^\"]+\"\} "
                     r"to \[[^]]+ ms\]\{[^}]+\} as cpython_ft_gil, from \[[^]]+ ms\]\{\.fact key=\"gil\.launch\.min\.cpython_ft\.", head), head


def test_a_gil_cost_not_told_apart_is_not_said_to_be_none():
    """"took 1.92 (0.98-2.20) times as long as with it off, not distinguishable from the run
    with the GIL off" read as no cost: the headline says the run could not tell them apart."""
    head = _ft_headline([0.022, 0.040, 0.050], [0.044, 0.045, 0.046], [0.030, 0.045, 0.052])
    assert "times as long as with it off, yet its run was [not distinguishable on this machine from the run" in head
    assert "this run could not tell the two apart, which does not show that the GIL cost nothing." in head, head
    # its own speedup's interval holds one: the headline says so beside it
    assert re.search(r"over its own sequential run \(\[not distinguishable on this machine from\]\{[^}]*\} one: no "
                     r"gain that its interval can show\)", head), head
    # no gain, where its GIL-less threads did not run at once either: the headline says so (its
    # 1.03 rested on launches that kept one core busy)
    assert re.search(r"Nor does cpython_ft's CPU use show its threads running at once here: they kept "
                     r"\[[^]]+\]\{[^}]+\} CPU seconds per wall second busy, "
                     r"\[(below|not distinguishable on this machine from)\]", head), head


def test_a_tampered_fact_verdict_or_span_is_caught(records):
    tables, m = paper_tables(records), machine()
    parts, facts = render(tables, m)
    key = "gil.time.jython.multithread_cpu.sequential.w1"
    wrong = {k: dict(v) for k, v in facts.items()}
    wrong[key]["value"] = 200.0
    assert any(p.startswith(f"{key}: the paper says 200.0") for p in check(tables, m, parts, wrong))
    # a verdict that calls a gain where the interval holds one
    verdict = "gil.speedup_vs_one.cpython.multithread_cpu.threads"
    wrong = {k: dict(v) for k, v in facts.items()}
    wrong[verdict]["value"] = wrong[verdict]["text"] = "above"
    assert any(p.startswith(f"{verdict}: the paper says 'above'") for p in check(tables, m, parts, wrong))
    # a span showing another number, a number outside any fact, a comparison outside a verdict
    text = facts[key]["text"]
    edited = dict(parts, wall_time=parts["wall_time"].replace(f"[{text}]", "[250 ms]", 1))
    assert any("shows '250 ms'" in p for p in check(tables, m, edited, facts))
    edited = dict(parts, setup=parts["setup"] + "\nJython took 4.2 ms and was slower.\n")
    problems = check(tables, m, edited, facts)
    assert any("the number '4.2' is not a fact" in p for p in problems)
    assert any("the comparison 'slower' is not a verdict fact" in p for p in problems)


def test_a_single_launch_ranks_nothing(records):
    one = [r for r in records if r["cell"]["rep"] == 0]
    tables, m = paper_tables(one), machine(reps=1)
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    assert "launched once" in parts["setup"]
    verdicts = [f for f in facts.values() if f["kind"] == "verdict"]
    assert verdicts and all(f["value"].startswith("not distinguishable") for f in verdicts)


def test_the_paper_sets_sigpar_threading_beside_the_native_workload_when_it_ran(records):
    tables, m = paper_tables(records), machine(("sigpar", "gil"))
    tables["sigpar_cells"] = pd.DataFrame({
        "status": ["ok", "ok", "ok", "failed", "ok"], "mode": ["threading"] * 5, "workers": [2, 2, 1, 2, 2],
        "variant": ["threading"] * 4 + ["threading-openssl-cffi"], "backend": ["pyca"] * 4 + ["openssl-cffi"],
        "kind": ["classical", "pqc", "pqc", "pqc", "classical"], "algorithm": ["RSA", "ML", "ML", "SLH", "RSA"],
        "operation": ["sign"] * 5, "hostname": ["h"] * 5, "scaling_efficiency": [0.9, 0.8, 1.0, None, 0.5],
        "scaling_efficiency_ci_low": [0.85, 0.6, 0.95, None, 0.4],
        "scaling_efficiency_ci_high": [0.93, 1.05, 1.02, None, 0.6]})
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    text = parts["related"]
    # the cells of the study's own bindings only: openssl-cffi's 50% is another backend's
    assert "sigpar's threading cells (Python threads calling pyca) at [2]{.fact" in text
    assert "a median scaling efficiency of [90%]{.fact" in text and "for classical signatures ([1]{.fact" in text
    # how many reached full efficiency, as the related study judges it: the classical
    # cell's interval ends below full, the pqc cell's holds it
    # and the rest by side: a verdict just past its bar there is counted, so it gets its note
    assert 'cell, [0]{.fact key="gil.related_full.classical"} of them not distinguishable on this machine ' \
        'from full, [1]{.fact key="gil.related.below.classical"} below it)' in text
    assert 'cell, not distinguishable on this machine from full)' in text.split("pqc signatures")[1]
    assert "cpython in threads at [2]{.fact" in text and "[95% (91%–100%)]{.fact" in text
    assert "on multithread_hashlib, its speedup [above]{.fact" in text


def test_a_launchs_time_is_the_median_of_its_runs_only_when_it_has_several(records):
    tables, m = paper_tables(records), machine()
    for runs, said in ((1, "a launch's time for a point is that run's."),
                       (3, "a launch's time for a point is the median of its runs.")):
        m["config"]["gil"]["runs_per_cell"] = runs
        parts, _ = render(tables, m)
        assert said in parts["setup"], parts["setup"]


def test_runtimes_whose_intervals_overlap_are_not_ranked(records):
    tables, m = paper_tables(records), machine()
    parts, _ = render(tables, m)
    # sequential multithread_cpu: cpython 0.10-0.12 s against jython 0.29-0.31 s: told apart
    assert "on multithread_cpu cpython had the lowest median time, [110 (100–120) ms]{.fact" in parts["wall_time"]
    assert "jython the highest, [300 (290–310) ms]{.fact" in parts["wall_time"]
    assert '[slower than]{.fact key="gil.seq_high_vs_low.multithread_cpu"} cpython' in parts["wall_time"]
    close = {**tables, "gil_summary": tables["gil_summary"].copy()}
    s = close["gil_summary"]
    jy = (s["runtime"] == "jython") & (s["workload"] == "multithread_cpu") & (s["execution"] == "sequential")
    s.loc[jy, ["median_wall_sec", "median_wall_sec_ci_low", "median_wall_sec_ci_high"]] = (0.115, 0.09, 0.13)
    parts, facts = render(close, m)
    assert check(close, m, parts, facts) == []
    assert '[not distinguishable on this machine from]{.fact key="gil.seq_high_vs_low.multithread_cpu"}' in \
        parts["wall_time"]


def test_console_line_shows_every_point_in_ms():
    rec = record("jython", "multithread_cpu", [point("sequential", 1, [0.3]), point("threads", 2, [0.15]),
                                               point("processes", 2, [], status="unavailable")])
    rec["cell"] = {"runtime": "jython", "workload": "multithread_cpu", "rep": 1}
    line = console_line(rec)
    assert line.endswith("sequential 300.00 | threads 2: 150.00 | processes 2: unavailable ms")
    assert console_line(rec, 3).endswith(" ms [rep 2/3]")
    json.dumps(rec)  # records are plain JSON


def test_a_free_threaded_cpython_is_believed_when_it_says_its_gil_is_off():
    from parbench.studies.gil.run_cell import runtime_facts

    found = rt.Resolution("cpython_ft", ("python3.14t", "python3.13t"), ("/opt/bin/python3.14t",), "python3.14t",
                          None, None)
    said = {"implementation": "CPython", "version": "3.14.0", "gil_enabled": False, "free_threaded_build": True}
    facts = runtime_facts(found, said)
    assert facts["has_gil"] is False and facts["free_threaded_build"] is True and facts["version"] == "3.14.0"
    # protoPython cannot say: the config's declaration stands
    proto = rt.Resolution("protopy", ("$PROTOPY_BIN",), ("/opt/protopy",), "$PROTOPY_BIN", None, False)
    assert runtime_facts(proto, {"implementation": "protoPython", "gil_enabled": None})["has_gil"] is False


# --- the JIT's warm-up (worker version 2) -------------------------------------------------------

JIT_SPEC = {"workload": "multithread_cpu_scaled", "kind": "sum_range", "chunks": 2, "params": {"n": 200, "repeat": 1},
            "configs": [["sequential", 1], ["threads", 2]], "warmup_runs": 2, "repetitions": 2,
            "jit_quiet": {"fraction": 0.5, "max_warmup_runs": 6}}


def busy_jit(calls_busy):
    """A JIT clock that adds 10 s of compiling per reading for the first `calls_busy`
    readings, then stands still (each run reads it twice)."""
    readings = []

    def clock():
        readings.append(None)
        return 10.0 * min(len(readings), calls_busy)
    return "fake", clock


def test_the_warm_up_goes_on_while_the_jit_is_busy_and_stops_when_it_is_quiet():
    worker = load_worker()
    # busy for the first 3 rounds (2 points x 2 readings per round), quiet from the 4th
    out = worker.measure(JIT_SPEC, jit_clock=busy_jit(12))
    assert out["warmup_rounds"] == 4 and out["jit_quiet"] is True and out["jit_clock"] == "fake"
    seq = out["configs"][0]
    assert [r["rep"] for r in seq["warmup"]] == [0, 1, 2, 3] and len(seq["runs"]) == 2
    assert [r["jit_sec"] for r in seq["warmup"]] == [10.0, 10.0, 10.0, 0.0]
    assert all(r["jit_sec"] == 0.0 for r in seq["runs"])
    assert all(r["results"] == [sum(range(200))] * 2 for r in seq["warmup"] + seq["runs"])


def test_the_warm_up_stops_at_its_cap_and_says_the_jit_never_went_quiet():
    out = load_worker().measure(JIT_SPEC, jit_clock=busy_jit(10 ** 6))
    assert out["warmup_rounds"] == 6 and out["jit_quiet"] is False
    assert all(len(c["warmup"]) == 6 for c in out["configs"])


def test_without_a_jit_clock_the_warm_up_is_the_fixed_number_of_rounds():
    out = load_worker().measure(JIT_SPEC, jit_clock=(None, None))
    assert out["warmup_rounds"] == 2 and out["jit_quiet"] is None and out["jit_clock"] is None
    assert all(r["jit_sec"] is None for c in out["configs"] for r in c["warmup"] + c["runs"])
    # and without jit_quiet in the spec, a clock only records
    fixed = load_worker().measure(dict(JIT_SPEC, jit_quiet=None), jit_clock=busy_jit(10 ** 6))
    assert fixed["warmup_rounds"] == 2 and fixed["jit_quiet"] is None


def test_a_round_is_busy_when_its_compiling_exceeds_the_fraction_of_its_wall_time():
    worker = load_worker()
    runs = [{"wall_sec": 0.1, "jit_sec": 0.004}, {"wall_sec": 0.1, "jit_sec": 0.0}]
    assert worker.jit_still_busy(runs, 0.01) and not worker.jit_still_busy(runs, 0.05)
    assert not worker.jit_still_busy([{"wall_sec": 0.1, "jit_sec": None}], 0.01)


def test_a_point_may_have_more_warm_ups_up_to_the_cap_but_not_beyond():
    spec = dict(SPEC, jit_quiet={"fraction": 0.02, "max_warmup_runs": 3})
    pt = {"execution": "threads", "workers": 2, "status": "ok", "reason": None,
          "warmup": [run(i, 0.1) for i in range(3)], "runs": [run(0, 0.1), run(1, 0.1)]}
    assert check_point(pt, spec, 7)["status"] == "ok"
    pt["warmup"].append(run(3, 0.1))
    assert check_point(pt, spec, 7)["failure"] == "4 warmup instead of 1 to 3"
    assert check_point(dict(pt, warmup=[]), spec, 7)["failure"] == "0 warmup instead of 1 to 3"


def test_the_summary_and_the_paper_say_how_the_jit_warm_up_ended(records):
    jy = [r for r in records if r["cell"]["runtime"] == "jython" and r["status"] == "ok"]
    for k, rec in enumerate(jy):
        rec["worker"] = dict(rec["worker"], jit_clock="CompilationMXBean.getTotalCompilationTime",
                             warmup_rounds=10 + k, jit_quiet=k != 0)
        for p in rec["points"]:
            # the launch whose warm-up did not end quiet compiled through its timed runs too
            p["runs"] = [dict(r, jit_sec=0.002 if k else r["wall_sec"] / 2) for r in p["runs"]]
    t = tables(records)
    s = t["summary"].set_index(["runtime", "workload", "execution", "workers"])
    seq = s.loc[("jython", "multithread_cpu", "sequential", 1)]
    assert seq["median_jit_sec"] == pytest.approx(0.002) and seq["median_warmup_rounds"] == 11
    assert seq["jit_quiet_launches"] == 2
    cpy = s.loc[("cpython", "multithread_cpu", "sequential", 1)]
    assert pd.isna(cpy["jit_clock"]) and pd.isna(cpy["median_jit_sec"]) and pd.isna(cpy["jit_quiet_launches"])
    assert t["runs"]["jit_sec"].notna().any()
    tables_, m = paper_tables(records), machine()
    parts, facts = render(tables_, m)
    assert check(tables_, m, parts, facts) == []
    line = parts["setup"]
    assert "(CompilationMXBean.getTotalCompilationTime)" in line and "at most [40]{.fact" in line
    assert "jython ran a median of [11]{.fact" in line and "with the JIT quiet in [2]{.fact" in line
    assert "of [3]{.fact" in line and "a median of [2 ms]{.fact" in line
    # a warm-up that ended quiet does not keep the timed runs free of compiling: the timed
    # runs that overlapped more than the quiet fraction are counted (2 ms of a short run)
    fraction = m["config"]["gil"]["jit_quiet"]["fraction"]
    timed = t["runs"][(t["runs"]["phase"] == "timed") & (t["runs"]["runtime"] == "jython")]
    busy = int((timed["jit_sec"] / timed["wall_sec"] > fraction).sum())
    assert busy > 0 and "timed runs overlapped more than [" in line and "(the JIT's time summed over its threads, read off a clock whose smallest reading above zero was [" in line
    assert facts["gil.jit_timed_busy.jython"]["value"] == busy
    m["config"]["gil"]["jit_quiet"] = None
    assert "`gil.jit_quiet` is off" in render(tables_, m)[0]["setup"]
    only = paper_tables([r for r in records if r["cell"]["runtime"] == "cpython"])
    assert "JIT" not in render(only, machine())[0]["setup"]


# --- load, disturbed launches and the figures ---------------------------------------------------

def disturbed(records, runtime="cpython", workload="multithread_cpu", rep=1):
    """Every launch with a load reading; one still disturbed after its third attempt."""
    recs = [dict(r) for r in records]
    for k, rec in enumerate(recs):
        rec.update(load={"other_cores": 0.01 * (k + 1), "steal_cores": 0.0, "cell_cpu_sec": 0.5}, disturbed=False,
                   attempt=1)
        if rec["cell"] == {"runtime": runtime, "workload": workload, "rep": rep}:
            rec.update(load={"other_cores": 0.9, "steal_cores": 0.1, "cell_cpu_sec": 0.4}, disturbed=True, attempt=3)
    return recs


def test_the_load_of_each_launch_is_tabled_and_a_disturbed_one_marks_its_points(records):
    recs = disturbed(records)
    t = tables(recs)
    load = t["load"]
    assert len(load) == len(recs) and set(load["group"]) == {"cpython", "jython"}
    row = load[(load["cell"] == "cpython multithread_cpu") & (load["rep"] == 1)].iloc[0]
    assert row["disturbed"] and row["attempts"] == 3 and row["load_other_cores"] == 0.9
    assert list(load["started_unix"]) == sorted(load["started_unix"])  # the order they ran in
    s = t["summary"].set_index(["runtime", "workload", "execution", "workers"])
    # the launch measured every point of its cell: each carries it
    assert (s.loc[("cpython", "multithread_cpu"), "disturbed_reps"] == 1).all()
    assert s.loc[("cpython", "multithread_cpu", "threads", 2), "load_other_cores_max"] == 0.9
    assert (s.loc[("cpython", "multithread_hashlib"), "disturbed_reps"] == 0).all()
    # the paper names it, the captions say how it is marked, the table counts it
    tables_, m = paper_tables(recs), machine()
    parts, facts = render(tables_, m)
    assert check(tables_, m, parts, facts) == []
    assert "cpython multithread_cpu (repetition [2]{.fact" in parts["setup"]  # rep 1: counted from 1
    assert "An open red diamond marks a point with a launch that stayed disturbed" in parts["speedup"]
    frame = paper.speedup_table(tables_["gil_summary"])
    assert frame["disturbed launches"].astype(int).tolist().count(1) == 1
    # records from before loads were measured: null load, nothing disturbed
    old = tables(records)
    assert old["load"]["load_other_cores"].isna().all() and not old["load"]["disturbed"].any()
    assert (old["summary"]["disturbed_reps"] == 0).all() and old["summary"]["load_other_cores_max"].isna().all()


def test_every_drawn_gil_figure_passes_the_figure_check(records):
    """Facet headers are the data under them, legends list only what is drawn, no title
    states a comparison; a disturbed point is marked; a CPU reading recorded null as
    impossible is never drawn."""
    import vl_convert as vlc

    from parbench.figures import DISTURBED_COLOR
    from parbench.paper import figure_check
    from parbench.studies.gil import figures

    recs = disturbed(records)
    for rec in recs:  # jython's CPU clock steps by 50 ms: every reading is impossible
        if rec["cell"]["runtime"] == "jython":
            rec["worker"] = dict(rec["worker"], cpu_clock_resolution_sec=0.05)
    s = tables(recs)["summary"]
    assert s.loc[s["runtime"] == "jython", "cpu_null_reason"].notna().any()
    for name, (draw, _) in STUDY.figures().items():
        svg = vlc.vegalite_to_svg(draw(s, machine()).to_json())
        assert figure_check.problems(svg, name) == [], name
        assert DISTURBED_COLOR in svg, name
        if name == "gil_cpu_utilization":
            assert "runtime: jython" not in svg and "runtime: cpython" in svg
    # titles and tooltips name the run's level of the intervals, as the captions do
    at_90 = {"config": {"gil": {"confidence": 0.9}}}
    for draw in (figures.wall_time, figures.thread_speedup, figures.cpu_utilization):
        spec = draw(s, at_90).to_json()
        assert "90% " in spec and "95%" not in spec, draw.__name__
    # no processes point: neither legend nor title speaks of processes
    threads_only = s[s["execution"] != "processes"]
    for draw in (figures.wall_time, figures.thread_speedup, figures.cpu_utilization):
        svg = vlc.vegalite_to_svg(draw(threads_only, {}).to_json())
        assert figure_check.problems(svg, draw.__name__) == [] and "processes" not in svg, draw.__name__


def test_the_speedup_points_clear_the_panel_frame_and_the_cpu_title_counts_cores(records):
    """A point at the fewest or most workers sat on the frame, half outside: the worker
    axis is padded. The CPU title names the busy cores in words ("both cores"), and its
    axis reaches past them."""
    from parbench.figures import PANEL_END_PX
    from parbench.studies.gil import figures

    s = tables(records)["summary"]
    spec = figures.thread_speedup(s, machine()).to_dict()
    assert spec["spec"]["layer"][0]["encoding"]["x"]["scale"]["padding"] == PANEL_END_PX
    cpu = figures.cpu_utilization(s, machine()).to_dict()
    top = int(s.loc[s["execution"] != "sequential", "workers"].max())
    assert {1: "the one core busy", 2: "both cores busy"}.get(top, f"all {top} cores busy") in cpu["title"]
    # the dashed line of every core busy lies under the axis's top, not on the frame
    bars = cpu["spec"]["layer"][0]["encoding"]["y"]
    assert bars["scale"]["domain"][1] > top
    # processes drawn paler than threads, in the lines and their bars alike, and the
    # execution legend kept (an opacity without a title had dropped it)
    opacities = [layer["encoding"]["opacity"] for layer in spec["spec"]["layer"] if "opacity" in layer["encoding"]]
    assert len(opacities) == 2 and all(o["title"] == "execution" for o in opacities)
    assert all(dict(zip(o["scale"]["domain"], o["scale"]["range"])) == {"threads": 1.0, "processes": 0.45}
               for o in opacities)


def test_a_launch_whose_threads_ran_one_at_a_time_is_named_beside_the_medians():
    """cpython_ft kept two cores busy in two launches and one in the third: the median
    over the launches hid that run, which the interval (and a verdict) holds."""
    from parbench.paper.facts import Facts

    def run(runtime, rep, cores, execution="threads"):
        return {"runtime": runtime, "workload": "multithread_cpu_scaled", "execution": execution, "workers": 2,
                "rep": rep, "phase": "timed", "status": "ok", "wall_sec": 0.01, "cpu_sec": 0.01 * cores}

    runs = pd.DataFrame([run("cpython_ft", 0, 1.0), run("cpython_ft", 1, 1.97), run("cpython_ft", 2, 1.96),
                         run("cpython", 0, 1.0), run("cpython", 1, 1.01), run("cpython", 2, 1.0),
                         run("cpython_ft", 0, 1.0, "sequential")])
    parallel = paper.runs_of_parallel_points(runs)
    assert set(parallel["runtime"]) == {"cpython_ft"} and len(parallel) == 3  # cpython's point never ran at once
    f = Facts("gil", {"gil_runs": runs}, paper.KEYS)
    serial = paper.serial_runs(f, 2)
    assert (serial["n"].value, serial["k"].value) == (3, 1)
    assert serial["names"] == ["cpython_ft on multithread_cpu_scaled"]
    assert paper.serial_runs(Facts("gil", {"gil_runs": runs.assign(cpu_sec=0.0197)}, paper.KEYS), 2) is None
    # a point with a run whose CPU time was not read has no CPU use in gil_summary: its one
    # read run (two cores busy) is not counted among the parallel points' runs (it was: 28
    # runs named where the points the text names held 27)
    unread = [{**run("jython", rep, 2.0), "cpu_sec": None if rep else 0.02} for rep in range(3)]
    counted = paper.runs_of_parallel_points(pd.concat([runs, pd.DataFrame(unread)], ignore_index=True))
    assert set(counted["runtime"]) == {"cpython_ft"} and len(counted) == 3


def test_an_extreme_median_says_when_its_neighbours_interval_overlaps_it(records):
    tables, m = paper_tables(records), machine()
    s = tables["gil_summary"].copy()
    seq = (s["workload"] == "multithread_cpu") & (s["execution"] == "sequential") & (s["runtime"] != "native")
    assert s[seq]["runtime"].nunique() >= 2
    # a third runtime between cpython (0.10-0.12 s) and jython (0.29-0.31 s), its interval overlapping cpython's
    third = s[seq & (s["runtime"] == "cpython")].assign(
        runtime="pypy", median_wall_sec=0.118, median_wall_sec_ci_low=0.105, median_wall_sec_ci_high=0.2)
    close = {**tables, "gil_summary": pd.concat([s, third], ignore_index=True)}
    parts, facts = render(close, m)
    assert check(close, m, parts, facts) == []
    text = parts["wall_time"]
    assert ('[110 (100–120) ms]{.fact key="gil.time.cpython.multithread_cpu.sequential.w1"} '
            '([not distinguishable on this machine from]{.fact key="gil.seq_low_vs.pypy.multithread_cpu"} '
            'that of pypy), and jython') in text, text
    assert facts["gil.seq_low_vs.pypy.multithread_cpu"]["value"] == "not distinguishable on this machine from"
    # jython's interval lies apart from pypy's: no tie said after the highest
    assert ('jython the highest, [300 (290–310) ms]{.fact key="gil.time.jython.multithread_cpu.sequential.w1"}, '
            '[slower than]{.fact key="gil.seq_high_vs_low.multithread_cpu"}') in text, text


def test_the_speedup_tables_caption_says_the_native_controls_times_are_not_the_interpreters(records):
    tables, m = paper_tables(records), machine()
    assert "runs scaled work" not in render(tables, m)[0]["summary"]
    # jython standing in for the native control: its times are of other work
    runtimes = tables["gil_runtimes"].assign(control=lambda r: r["runtime"] == "jython")
    parts, facts = render({**tables, "gil_runtimes": runtimes}, m)
    assert "; the native control (jython) runs scaled work, so its times compare with no interpreter's, only its " \
           "speedups do. {#tbl-gil-speedup}" in parts["summary"]


def _sequential_hashlib(protopy_walls: list) -> list[dict]:
    """cpython at 10 ms, protopy at `protopy_walls`, jython at 12.5 ms, run sequentially on
    multithread_hashlib (and in threads, which the section needs)."""
    def rec(runtime, walls, **kw):
        return record(runtime, "multithread_hashlib",
                      [point("sequential", 1, walls), point("threads", 2, [0.006, 0.006, 0.006])], **kw)
    return launches([rec("cpython", [0.01000, 0.01001, 0.00999]), rec("protopy", protopy_walls),
                     rec("jython", [0.0124, 0.0125, 0.0126], implementation="Jython")])


def test_a_lowest_time_told_from_another_only_just_past_its_bar_says_so():
    """"cpython_ft had the lowest median time (not distinguishable from those of cpython_src,
    cpython_ft_gil and cpython)" left pypy out unsaid: it was told apart from it only just
    past the bar, and that verdict's note was lost with its word."""
    m = {**machine(), "cpu_stability": {"cv": 0.0265}}
    tables = paper_tables(_sequential_hashlib([0.01029, 0.01030, 0.01031]))
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    text = parts["wall_time"]
    # 10.00 against 10.30 ms: 2.9% apart, past the 2.65% spread by less than a tenth of it
    assert re.search(r"cpython had the lowest median time, \[[^]]+\]\{[^}]+\} \(\[faster than\]\{[^}]+\} protopy's, "
                     r"decided just past its bar\^\[For multithread_hashlib sequential, cpython against protopy, ",
                     text), text
    # told apart well past the bar: no such clause
    tables = paper_tables(_sequential_hashlib([0.0110, 0.0111, 0.0112]))
    parts, facts = render(tables, m)
    assert "decided just past its bar" not in parts["wall_time"] and check(tables, m, parts, facts) == []


def test_a_speedup_resting_on_launches_that_disagree_says_so():
    """Like dispatch's runs, a point whose launches took more than WIDE_LAUNCHES times apart
    (a JIT's launch that warmed up, one that did not) is named with their range where the
    speedups that divide it stand: its median alone reads as a finding."""
    agree = launches([record("jython", "multithread_cpu", [point("sequential", 1, [0.30, 0.31, 0.29]),
                                                           point("threads", 2, [0.16, 0.15, 0.17], cpu_factor=1.9)],
                             implementation="Jython", gil=False)])
    tables, m = paper_tables(agree), machine()
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == [] and "launches disagreed" not in parts["speedup"]
    apart = launches([record("jython", "multithread_cpu", [point("sequential", 1, [0.30, 0.31, 0.29]),
                                                           point("threads", 2, [0.10, 0.15, 0.25], cpu_factor=1.9)],
                             implementation="Jython", gil=False)])
    tables = paper_tables(apart)
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    text = parts["speedup"]
    assert "One of these speedups divides a point whose launches disagreed by more than a factor of [2]" in text, text
    assert re.search(r"jython on multithread_cpu in threads at \[2\]\{[^}]+\} workers took from \[100 ms\]\{[^}]+\} "
                     r"to \[250 ms\]\{[^}]+\} over its \[3\]\{[^}]+\} launches \(median \[150 ms\]\{[^}]+\}\)\.", text)
    assert "run sequentially took" not in text  # its sequential launches agreed


def test_an_extreme_medians_tie_the_spread_alone_decided_says_so(records):
    """"cpython the highest, 2.26 (2.24–2.57) ms (not distinguishable on this machine from
    those of jython, cpython_ft_gil, ...)" where cpython_ft_gil's interval lay apart, only
    the machine's 20.5% spread holding the two: the tie now says so, as every verdict does."""
    tables, m = paper_tables(records), machine()
    s = tables["gil_summary"].copy()
    seq = (s["workload"] == "multithread_cpu") & (s["execution"] == "sequential")
    third = s[seq & (s["runtime"] == "cpython")].assign(
        runtime="pypy", median_wall_sec=0.13, median_wall_sec_ci_low=0.125, median_wall_sec_ci_high=0.14)
    apart = {**tables, "gil_summary": pd.concat([s, third], ignore_index=True)}
    m["cpu_stability"] = {"cv": 0.5}
    parts, facts = render(apart, m)
    assert check(apart, m, parts, facts) == []
    assert facts["gil.seq_low_vs.pypy.multithread_cpu"]["value"] == "not distinguishable on this machine from"
    assert re.search(r"that of pypy \(only because its median lies within the machine's \[50\.0%\]\{[^}]+\} spread of "
                     r"cpython's, its interval apart from it\)\)", parts["wall_time"]), parts["wall_time"]
    # two such: counted, without the side their medians lie on, which "the lowest" says already
    # (the verdicts hold the extreme first: "all below it" would read as theirs below cpython's)
    fourth = third.assign(runtime="graalpy", median_wall_sec=0.132, median_wall_sec_ci_low=0.126)
    apart = {**apart, "gil_summary": pd.concat([apart["gil_summary"], fourth], ignore_index=True)}
    parts, facts = render(apart, m)
    assert check(apart, m, parts, facts) == []
    assert re.search(r"those of pypy and graalpy \(all \[2\]\{[^}]+\} only because their medians lie within the "
                     r"machine's \[50\.0%\]\{[^}]+\} spread of cpython's, their intervals apart from it\)\)",
                     parts["wall_time"]), parts["wall_time"]


def test_a_launch_range_a_disturbed_launch_may_have_set_says_so():
    """"cpython on multithread_alloc in processes at 2 workers took from 30.1 ms to 95.7 ms":
    the 95.7 ms launch was the one that stayed disturbed, which only the setup said."""
    apart = launches([record("jython", "multithread_cpu", [point("sequential", 1, [0.30, 0.31, 0.29]),
                                                           point("threads", 2, [0.10, 0.15, 0.25], cpu_factor=1.9)],
                             implementation="Jython", gil=False)])
    for rec in apart:
        rec["load"] = {"other_cores": 0.02, "steal_cores": 0.0, "cell_cpu_sec": 1.0}
        rec["disturbed"], rec["attempt"] = False, 1
    apart[2].update(load={"other_cores": 0.9, "steal_cores": 0.0, "cell_cpu_sec": 1.0}, disturbed=True, attempt=3)
    tables, m = paper_tables(apart), machine()
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    assert re.search(r"over its \[3\]\{[^}]+\} launches \(median \[150 ms\]\{[^}]+\}, \[1\]\{[^}]+\} of them in a launch "
                     r"that stayed disturbed: the longest\)\.", parts["speedup"]), parts["speedup"]
