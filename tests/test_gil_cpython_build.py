"""The free-threaded CPython the gil study builds from source, built once per checkout
(native/build/cpython/, as the pipeline builds it: a second run reuses it) and measured
in one smoke gil cell with its GIL off and one with it on. Its source comes as in the
pipeline (PARBENCH_CPYTHON_SOURCE, else the Debian source archive of this machine's apt
configuration); where there is none the test skips, saying why, as the pipeline lists
the runtime as not measured."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parbench import config as pbconfig
from parbench.studies.gil import cpython

pytestmark = pytest.mark.native

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def freethreaded_build():
    """The build's record (the build made or reused in the checkout's own folder)."""
    cfg = pbconfig.load("smoke")["gil"]["cpython"]
    root = REPO / cpython.ROOT
    source = cpython.fetch(cfg, root)
    if not source["available"]:
        pytest.skip(f"no CPython source here: {source['reason']}")
    record = cpython.build(source, "freethreaded", cfg, root, os.cpu_count() or 1)
    assert record["available"] and record["interpreter"]["py_gil_disabled"] is True
    return record


@pytest.mark.parametrize("runtime, gil_enabled, env", [("cpython_ft", False, "0"), ("cpython_ft_gil", True, "1")])
def test_a_smoke_cell_runs_on_the_free_threaded_build(freethreaded_build, runtime, gil_enabled, env, tmp_path):
    # the cell reads the build's record where the pipeline writes it, relative to where it
    # runs: here a folder of the test's own (the checkout's record stays the pipeline's)
    record_path = tmp_path / cpython.build_record("freethreaded")
    record_path.parent.mkdir(parents=True)
    record_path.write_text(json.dumps(freethreaded_build, indent=1) + "\n")
    proc = subprocess.run([sys.executable, "-m", "parbench", "gil-cell", "--profile", "smoke", "--runtime", runtime,
                           "--workload", "multithread_cpu_scaled", "--out-stem", str(tmp_path / "cell"),
                           f"gil.measure=[cpython,{runtime}]"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads((tmp_path / "cell.json").read_text())
    assert record["status"] == "ok", record["failure"]
    facts = record["runtime"]
    assert facts["free_threaded_build"] is True and facts["gil_enabled"] is gil_enabled
    assert facts["python_gil_env"] == env and facts["build_flavour"] == "freethreaded"
    assert facts["version"] == freethreaded_build["version"] and facts["source_sha256"]
    assert all(p["status"] == "ok" for p in record["points"])


def test_a_second_build_with_the_same_inputs_reuses_the_first(freethreaded_build):
    cfg = pbconfig.load("smoke")["gil"]["cpython"]
    again = cpython.build(freethreaded_build["source"], "freethreaded", cfg, REPO / cpython.ROOT, 1)
    assert again["reused"] is True and again["key"] == freethreaded_build["key"]
