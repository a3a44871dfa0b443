"""Real gil cells: the worker script under every installed runtime, `PROTOPY_BIN` naming
an interpreter (this CPython) measured as a runtime of its own, a configured runtime that
is missing or broken reported and not fatal, a wrong chunk result caught, and a cell that
runs out of time stopped with everything it started."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import psutil
import pytest

from parbench import config as pbconfig
from parbench.studies.gil import aggregate, plan, run_cell
from parbench.studies.gil import runtimes as rt
from parbench.studies.gil import workloads as wl

TINY = ["gil.workers=[1,2]", "gil.warmup_runs=1", "gil.runs_per_cell=2",
        "gil.workloads.multithread_cpu_scaled.repeat=2", "gil.workloads.multithread_alloc.items=2000",
        "gil.workloads.multithread_hashlib.updates=1", "gil.workloads.multithread_hashlib.buffer_kib=64"]


def tiny_cfg(*extra):
    return pbconfig.load("smoke", [*TINY, *extra])


def run_worker_directly(argv, spec, tmp_path):
    spec_path, out_path = tmp_path / "spec.json", tmp_path / "out.json"
    spec_path.write_text(json.dumps(spec))
    proc = subprocess.run([*argv, str(plan.WORKER), str(spec_path), str(out_path)], capture_output=True, text=True,
                          timeout=300, env=rt.worker_environment(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(out_path.read_text())


INSTALLED = [pytest.param("{python}", "CPython", True, id="cpython"),
             pytest.param("pypy3", "PyPy", True, id="pypy", marks=pytest.mark.skipif(
                 not shutil.which("pypy3"), reason="pypy3 is not installed (apt-get install pypy3)")),
             pytest.param("jython", "Jython", False, id="jython", marks=pytest.mark.skipif(
                 not shutil.which("jython"), reason="jython is not installed (apt-get install jython)"))]


@pytest.mark.parametrize("command, implementation, gil", INSTALLED)
def test_the_worker_runs_every_workload_under_each_installed_runtime(command, implementation, gil, tmp_path):
    """One launch per runtime (Jython takes seconds to start): every workload kind through
    the worker's chunk functions, and every execution the runtime has on one of them."""
    argv = list(rt.resolve_alternative(command)[0])
    cfg = tiny_cfg()
    spec = plan.worker_spec(cfg, "cpython", "multithread_hashlib", repetitions=2, warmups=1,
                            config_points=[("sequential", 1), ("threads", 2), ("processes", 2)])
    out = run_worker_directly(argv, spec, tmp_path)
    info = out["runtime"]
    assert info["implementation"] == implementation and info["gil_enabled"] is gil and info["version"]
    expected = wl.expected_chunk("multithread_hashlib", spec["params"])
    by = {c["execution"]: c for c in out["configs"]}
    for execution in ("sequential", "threads"):
        assert by[execution]["status"] == "ok"
        assert [r["results"] for r in by[execution]["runs"]] == [[expected] * spec["chunks"]] * 2
        assert all(r["wall_sec"] > 0 for r in by[execution]["runs"] + by[execution]["warmup"])
    if implementation == "Jython":
        assert by["processes"]["status"] == "unavailable" and "multiprocessing" in by["processes"]["reason"]
        assert out["wall_clock"] == "java.lang.System.nanoTime"
    else:
        assert by["processes"]["status"] == "ok" and out["start_method"] == "fork"
        assert by["processes"]["runs"][0]["results"] == [expected] * spec["chunks"]
    # the other kinds, sequentially, in the same interpreter's chunk functions
    for workload in ("multithread_cpu", "multithread_alloc"):
        s = plan.worker_spec(cfg, "cpython", workload, repetitions=1, warmups=0, config_points=[("sequential", 1)])
        got = run_worker_directly(argv, s, tmp_path) if implementation != "Jython" else None
        if got:
            assert got["configs"][0]["runs"][0]["results"] == [wl.expected_chunk(workload, s["params"])] * s["chunks"]


def test_protopy_bin_naming_cpython_is_measured_as_a_runtime_of_its_own(monkeypatch, tmp_path):
    monkeypatch.setenv("PROTOPY_BIN", sys.executable)
    cfg = tiny_cfg("gil.measure=[cpython,protopy]")
    cells = plan.cells(cfg)
    assert {c.runtime for c in cells} == {"cpython", "protopy"}
    records = [run_cell.measure(cfg, plan.GilCell(runtime, "multithread_cpu")) for runtime in ("cpython", "protopy")]
    for record in records:
        assert record["status"] == "ok", record["failure"]
        assert record["runtime"]["implementation"] == "CPython"
        assert all(p["status"] == "ok" for p in record["points"])
    protopy = records[1]
    assert protopy["cell"]["runtime"] == "protopy" and protopy["runtime"]["chosen"] == "$PROTOPY_BIN"
    # the config declares protoPython GIL-less; the interpreter says otherwise and is believed
    assert protopy["runtime"]["has_gil"] is True and "declares False" in protopy["warnings"][0]
    tables = aggregate.study_tables(records, [r.summary() for r in rt.resolve_all(cfg)], 0.95, "cpython")
    text = aggregate.seed_report(tables["summary"], tables["runtimes"], "cpython", "smoke")
    # the columns, whatever width the measured ratio's words give the last one
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in text.splitlines() if line.startswith("│")]
    assert rows[0] == ["Benchmark", "protopy (ms)", "cpython (ms)", "Ratio"]
    assert rows[1][0] == "multithread_cpu" and len(rows[1]) == 4


def test_a_configured_runtime_that_is_not_here_is_reported_not_fatal(monkeypatch, tmp_path):
    monkeypatch.delenv("PROTOPY_BIN", raising=False)
    cfg = tiny_cfg("gil.measure=[cpython,protopy,cpython_ft]", "gil.runtimes.cpython_ft.command=[python9.99t]")
    assert {c.runtime for c in plan.cells(cfg)} == {"cpython"}
    record = run_cell.measure(cfg, plan.GilCell("protopy", "multithread_cpu"))
    assert record["status"] == "unavailable" and record["failure"] == "PROTOPY_BIN is not set"
    tables = aggregate.study_tables([], [r.summary() for r in rt.resolve_all(cfg)], 0.95, "cpython")
    runtimes = tables["runtimes"].set_index("runtime")
    assert runtimes.loc["cpython_ft", "reason"] == "python9.99t is not on PATH"
    assert runtimes.loc["protopy", "status"] == "not measured"


def fake_interpreter(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(body)
    path.chmod(0o755)
    return path


def run_cli(tmp_path, *args, env=None):
    return subprocess.run([sys.executable, "-m", "parbench", "gil-cell", "--profile", "smoke", *args, *TINY],
                          capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})},
                          cwd=tmp_path)


def test_an_interpreter_that_cannot_run_the_worker_is_unavailable_with_its_message(tmp_path):
    shim = fake_interpreter(tmp_path, "python3.13t", "#!/bin/sh\necho 'pyenv: python3.13t: command not found' >&2\n"
                                                     "exit 127\n")
    proc = run_cli(tmp_path, "--runtime", "protopy", "--workload", "multithread_cpu", "--out-stem", "out/cell",
                   "gil.measure=[cpython,protopy]", env={"PROTOPY_BIN": str(shim)})
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / "out/cell.json").read_text())
    assert record["status"] == "unavailable" and "exit code 127" in record["failure"]
    assert "pyenv: python3.13t: command not found" in record["failure"]
    assert "not measured: " in proc.stdout


def test_a_wrong_chunk_result_fails_the_cell(tmp_path):
    # a real CPython running the real worker, whose output is then altered in one chunk
    liar = fake_interpreter(tmp_path, "liar", textwrap.dedent(f"""\
        #!{sys.executable}
        import json, subprocess, sys
        rc = subprocess.call([{sys.executable!r}, *sys.argv[1:]])
        out = json.load(open(sys.argv[-1]))
        out["configs"][1]["runs"][1]["results"][2] += 1
        json.dump(out, open(sys.argv[-1], "w"))
        sys.exit(rc)
        """))
    cfg = tiny_cfg("gil.measure=[cpython,protopy]")
    os.environ["PROTOPY_BIN"] = str(liar)
    try:
        record = run_cell.measure(cfg, plan.GilCell("protopy", "multithread_cpu"))
    finally:
        del os.environ["PROTOPY_BIN"]
    assert record["status"] == "failed"
    assert record["failure"] == "threads x1: timed run 1: chunk 2 returned 1249975001, expected 1249975000"
    points = {(p["execution"], p["workers"]): p["status"] for p in record["points"]}
    assert points[("threads", 1)] == "failed" and points[("sequential", 1)] == "ok"


def test_a_cell_out_of_time_is_failed_and_leaves_no_process(tmp_path):
    marker = tmp_path / "pids"
    hang = fake_interpreter(tmp_path, "hang", f"#!/bin/sh\nsleep 300 &\necho $$ $! > {marker}\nwait\n")
    cfg = tiny_cfg("gil.measure=[cpython,protopy]", "gil.timeout_sec=2")
    os.environ["PROTOPY_BIN"] = str(hang)
    try:
        record = run_cell.measure(cfg, plan.GilCell("protopy", "multithread_cpu"))
    finally:
        del os.environ["PROTOPY_BIN"]
    assert record["status"] == "failed" and record["failure"] == "timed out after 2 s (gil.timeout_sec)"
    pids = [int(p) for p in marker.read_text().split()]
    assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]


def test_the_cell_command_refuses_what_the_config_does_not_measure(tmp_path):
    proc = run_cli(tmp_path, "--runtime", "graalpy", "--workload", "multithread_cpu")
    assert proc.returncode != 0
    assert "--runtime 'graalpy' is not measured by this config; allowed: cpython" in proc.stderr
    proc = run_cli(tmp_path, "--runtime", "cpython", "--workload", "multithread_sleep")
    assert proc.returncode != 0 and "--workload 'multithread_sleep' is not in this config; allowed: multithread_cpu" \
        in proc.stderr
