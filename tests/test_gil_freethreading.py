"""The gil study's free-threaded CPython and its native control, on injected facts and
small real runs: where the source comes from (an interpreter on PATH, a tarball the user
names, the Debian archive of the machine's apt configuration, none), the interpreter
confirming what it is, PYTHON_GIL passed to the cell, a missing source or build recorded
as not measured, impossible CPU readings recorded null, the comparisons and the paper's
free-threading findings, and the native control's C program. (The real build of the
free-threaded CPython is tests/test_gil_cpython_build.py.)"""

import io
import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

from parbench import config as pbconfig
from parbench.studies.gil import aggregate, cpython, plan, run_cell
from parbench.studies.gil import runtimes as rt

SHOWSRC = """\
Package: python3.14
Version: 3.14.8-1
Checksums-Sha256:
 a8655ce0f97165b8da573eb351579bd1f16baeb6104dc4aeef1de233f2d15127 4089 python3.14_3.14.8-1.dsc
 c2215904f02b175596dc49351585104f4bc20341e1c47378b26a2c274360ce73 24130644 python3.14_3.14.8.orig.tar.xz
 2e1e12e1c62b4b182fa5acbd4e8bf1ac87c38f927bdff6b347e16372d3052e1d 261244 python3.14_3.14.8-1.debian.tar.xz

Package: python3.14
Version: 3.14.0-2
Checksums-Sha256:
 0000000000000000000000000000000000000000000000000000000000000001 24000000 python3.14_3.14.0.orig.tar.xz
"""


def entry(*command, env=None, require=None):
    return {"command": list(command), "gil": "auto", "warmup_runs": None, "startup_sec": 0.0, "speed_factor": 1.0,
            "env": env or {}, "require": require or {}}


def fake_tarball(path, version="3.99.1", name=None):
    """A tar.xz holding Python-X/configure and Include/patchlevel.h, nothing else."""
    target = path / (name or "source.tar.xz")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for member, text in ((f"Python-{version}/configure", "#!/bin/sh\n"),
                             (f"Python-{version}/Include/patchlevel.h", f'#define PY_VERSION "{version}+"\n')):
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    target.write_bytes(lzma.compress(buf.getvalue()))
    return target


@pytest.fixture
def no_apt(tmp_path, monkeypatch):
    """A machine whose apt configuration names no Debian archive, and no earlier fetch."""
    apt = tmp_path / "apt"
    (apt / "sources.list.d").mkdir(parents=True)
    monkeypatch.setattr(cpython, "APT_DIR", str(apt))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(cpython.SOURCE_ENV, raising=False)
    return apt


# --- where the source comes from ----------------------------------------------------------------

def test_an_interpreter_on_path_comes_first_then_the_build(tmp_path, no_apt):
    exe = tmp_path / "bin" / "python3.13t"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    tarball = fake_tarball(tmp_path)
    env = {"PATH": str(exe.parent), cpython.SOURCE_ENV: str(tarball)}
    ft = rt.resolve("cpython_ft", entry("python3.14t", "python3.13t", "{uv:3.13t}", "{build:freethreaded}"), env, {})
    assert ft.argv == (str(exe),) and ft.origin == "path" and ft.build is None
    # without it on PATH (and no uv), the build from the tarball the user names
    env["PATH"] = str(tmp_path / "empty")
    ft = rt.resolve("cpython_ft", entry("python3.13t", "{uv:3.13t}", "{build:freethreaded}"), env, {})
    assert ft.found and ft.build == "freethreaded" and ft.origin == "build" and ft.argv is None
    assert ft.source == f"tarball {tarball.resolve()}" and ft.needs == cpython.build_record("freethreaded")


def test_no_source_is_not_measured_with_the_reason_and_the_fix(tmp_path, no_apt):
    env = {"PATH": os.environ["PATH"]}
    r = rt.resolve("cpython_src", entry("{build:default}"), env, {"debian_suites": ["trixie"]})
    assert not r.found
    assert "names no Debian archive" in r.reason and "PARBENCH_CPYTHON_SOURCE=/path/to/Python-3.14.x" in r.reason
    assert "uv python install 3.14t" in r.reason
    missing = rt.resolve("cpython_src", entry("{build:default}"), {**env, cpython.SOURCE_ENV: "/no/such.tar.xz"}, {})
    assert missing.reason.startswith("PARBENCH_CPYTHON_SOURCE=/no/such.tar.xz is not a file")
    # in the study's tables: not measured, with that reason
    cfg = pbconfig.load("smoke", ["gil.measure=[cpython,cpython_src]"])
    resolutions = [x.summary() for x in rt.resolve_all(cfg, env)]
    runtimes = aggregate.study_tables([], resolutions, 0.95, "cpython")["runtimes"].set_index("runtime")
    assert runtimes.loc["cpython_src", "status"] == "not measured"
    assert "PARBENCH_CPYTHON_SOURCE" in runtimes.loc["cpython_src", "reason"]


def test_uv_is_asked_only_where_it_is_installed(tmp_path):
    argv, why = rt.resolve_alternative("{uv:3.14t}", {"PATH": str(tmp_path)})
    if rt.uv_command({"PATH": str(tmp_path)}) is None:
        assert argv is None and why.startswith("uv is not installed") and "uv python install 3.14t" in why
    fake = tmp_path / "uv"
    fake.write_text(f"#!/bin/sh\necho {sys.executable}\n")
    fake.chmod(0o755)
    assert rt.resolve_alternative("{uv:3.14t}", {"PATH": str(tmp_path)}) == ((sys.executable,), None)
    fake.write_text("#!/bin/sh\nexit 2\n")
    assert "uv finds no 3.14t" in rt.resolve_alternative("{uv:3.14t}", {"PATH": str(tmp_path)})[1]


def test_a_tarball_the_user_names_is_read_checked_against_the_pins_and_recorded(tmp_path, no_apt):
    tarball = fake_tarball(tmp_path)
    assert cpython.tarball_version(tarball) == "3.99.1"  # from Include/patchlevel.h
    assert cpython.tarball_version(tmp_path / "Python-3.14.2.tar.xz") == "3.14.2"  # from the name
    assert cpython.tarball_version(tmp_path / "python3.13_3.13.5.orig.tar.xz") == "3.13.5"
    env = {"PATH": os.environ["PATH"], cpython.SOURCE_ENV: str(tarball)}
    doc = cpython.fetch({"pins": {}}, tmp_path / "build", env)
    assert doc["available"] and doc["origin"] == "tarball" and doc["version"] == "3.99.1"
    assert doc["sha256"] == cpython.sha256_of(tarball) and doc["pinned"] is False
    pinned = cpython.fetch({"pins": {"3.99.1": doc["sha256"]}}, tmp_path / "build", env)
    assert pinned["available"] and pinned["pinned"] is True
    wrong = cpython.fetch({"pins": {"3.99.1": "0" * 64}}, tmp_path / "build", env)
    assert not wrong["available"] and f"not the pinned {'0' * 64}" in wrong["reason"]


def test_the_debian_mirror_comes_from_the_machines_own_apt_configuration(tmp_path):
    apt = tmp_path / "apt"
    (apt / "sources.list.d").mkdir(parents=True)
    (apt / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\n# a comment\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n")
    (apt / "sources.list.d" / "vendor.list").write_text(
        "deb [arch=amd64 signed-by=/k.gpg] https://vendor.example/apt stable main\n")
    (apt / "sources.list").write_text("# deb http://old.example/debian bookworm main\n"
                                      "deb [signed-by=/other.gpg] http://local.example/debian/ bookworm main\n")
    mirrors = cpython.debian_mirrors(apt)
    assert mirrors == [{"uri": "http://local.example/debian", "keyring": "/other.gpg"},
                       {"uri": "http://mirror.example/debian",
                        "keyring": "/usr/share/keyrings/debian-archive-keyring.gpg"}]
    how, why = cpython.source_plan({"debian_suites": ["trixie"]}, {"PATH": os.environ["PATH"]}, apt,
                                   record=tmp_path / "none.json")
    if shutil.which("apt-get"):
        assert how == "debian http://local.example/debian" and why is None


def test_debian_source_packages_are_read_from_showsrc():
    found = cpython.debian_candidates(SHOWSRC)
    assert [(c["package"], c["debian_version"], c["version"]) for c in found] == [
        ("python3.14", "3.14.8-1", "3.14.8"), ("python3.14", "3.14.0-2", "3.14.0")]
    assert found[0]["orig"] == "python3.14_3.14.8.orig.tar.xz" and found[0]["sha256"].startswith("c2215904")


def test_the_build_is_keyed_by_its_inputs_and_configured_without_what_the_worker_never_imports():
    cfg = pbconfig.load("local")["gil"]["cpython"]
    source = {"sha256": "a" * 64}
    key = cpython.build_key(source, "freethreaded", cfg)
    assert key == cpython.build_key(dict(source), "freethreaded", dict(cfg))
    assert key != cpython.build_key(source, "default", cfg)
    assert key != cpython.build_key({"sha256": "b" * 64}, "freethreaded", cfg)
    assert key != cpython.build_key(source, "freethreaded", {**cfg, "skip_modules": ["_decimal"]})
    cmd = cpython.configure_command(cpython.Path("/src"), "freethreaded", cfg)
    assert cmd[:2] == ["/src/configure", "--disable-gil"] and "py_cv_module__decimal=n/a" in cmd
    assert not any("lto" in c or "optimizations" in c for c in cmd)  # no LTO, no PGO
    assert cpython.check_probe({"py_gil_disabled": False, "modules": {}}, "freethreaded").endswith(
        "says Py_GIL_DISABLED=False")
    assert "hashlib: ImportError" in cpython.check_probe(
        {"py_gil_disabled": True, "modules": {"hashlib": "ImportError('x')"}}, "freethreaded")
    assert cpython.build({"available": False, "reason": "no source"}, "default", cfg, cpython.Path("/x"), 1) == {
        "available": False, "flavour": "default", "reason": "no source",
        "source": {"available": False, "reason": "no source"}}


def test_a_failed_fetch_is_tried_again_and_a_found_one_is_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = pbconfig.load("local")
    record = tmp_path / cpython.SOURCE_RECORD
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"available": False, "reason": "offline"}))
    assert plan.source_parameters(cfg)["retry"].startswith("retry ")
    record.write_text(json.dumps({"available": True}))
    assert plan.source_parameters(cfg)["retry"] is None


# --- the interpreter confirms what it is --------------------------------------------------------

TINY = ["gil.workers=[1,2]", "gil.warmup_runs=0", "gil.runs_per_cell=1"]


def test_an_interpreter_that_is_not_what_its_runtime_requires_fails_the_cell(monkeypatch):
    monkeypatch.setenv("PROTOPY_BIN", sys.executable)
    cfg = pbconfig.load("smoke", [*TINY, "gil.measure=[cpython,protopy]",
                                  "+gil.runtimes.protopy.require={free_threaded_build: true, gil_enabled: false}"])
    record = run_cell.measure(cfg, plan.GilCell("protopy", "multithread_cpu"))
    assert record["status"] == "failed"
    flag = __import__("sysconfig").get_config_var("Py_GIL_DISABLED")
    said = None if flag is None else bool(flag)  # what the worker reports
    assert f"the interpreter says free_threaded_build={said!r}, required True" in record["failure"]
    assert "gil.runtimes.protopy.require" in record["failure"]
    assert rt.check_required({"gil_enabled": True}, {"gil_enabled": True}) is None
    assert rt.check_required({}, None) is None


def test_python_gil_is_set_for_the_runtime_and_never_inherited(monkeypatch):
    monkeypatch.setenv("PROTOPY_BIN", sys.executable)
    monkeypatch.setenv("PYTHON_GIL", "0")  # the caller's own: not the runtime's
    cfg = pbconfig.load("smoke", [*TINY, "gil.measure=[cpython,protopy]", "+gil.runtimes.protopy.env={PYTHON_GIL: '1'}"])
    assert plan.cell_parameters(cfg, plan.GilCell("protopy", "multithread_cpu"))["env"] == {"PYTHON_GIL": "1"}
    given = run_cell.measure(cfg, plan.GilCell("protopy", "multithread_cpu"))
    assert given["status"] == "ok" and given["runtime"]["python_gil_env"] == "1"
    plain = run_cell.measure(cfg, plan.GilCell("cpython", "multithread_cpu"))
    assert plain["runtime"]["python_gil_env"] is None
    assert plain["startup_sec"] > 0 and plain["runtime"]["cores_available"] >= 1


def test_a_runtime_whose_build_is_not_available_is_unavailable_with_its_reason(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tarball = fake_tarball(tmp_path)
    monkeypatch.setenv(cpython.SOURCE_ENV, str(tarball))
    cfg = pbconfig.load("smoke", [*TINY, "gil.measure=[cpython,cpython_ft]"])
    cell = plan.GilCell("cpython_ft", "multithread_cpu")
    assert plan.cell_inputs(cfg, "cpython_ft") == {"needs": cpython.build_record("freethreaded")}
    record = run_cell.measure(cfg, cell)
    assert record["status"] == "unavailable" and "has no record" in record["failure"]
    path = tmp_path / cpython.build_record("freethreaded")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"available": False, "reason": "no source of python3.14 downloads"}))
    record = run_cell.measure(cfg, cell)
    assert record["status"] == "unavailable" and record["failure"] == "no source of python3.14 downloads"
    runtimes = aggregate.study_tables([record], [r.summary() for r in rt.resolve_all(cfg)], 0.95,
                                      "cpython")["runtimes"].set_index("runtime")
    assert runtimes.loc["cpython_ft", "status"] == "not measured"
    assert runtimes.loc["cpython_ft", "reason"] == "no source of python3.14 downloads"
    # a build that is there: its interpreter runs the cell (this CPython stands in for it)
    path.write_text(json.dumps({"available": True, "python": sys.executable, "flavour": "freethreaded",
                                "version": "3.99.1", "key": "k", "source": {"origin": "tarball", "sha256": "s"}}))
    cfg = pbconfig.load("smoke", [*TINY, "gil.measure=[cpython,cpython_ft]",
                                  "gil.runtimes.cpython_ft.require={free_threaded_build: null, gil_enabled: null}"])
    record = run_cell.measure(cfg, cell)
    assert record["status"] == "ok" and record["runtime"]["build_version"] == "3.99.1"
    assert record["runtime"]["python_gil_env"] == "0" and record["command"][0] == sys.executable


# --- impossible CPU readings ----------------------------------------------------------------------

def reading_record(step, cores=2):
    return {"runtime": {"cores_available": cores}, "worker": {"cpu_clock": "x", "cpu_clock_resolution_sec": step,
                                                             "children_cpu_resolution_sec": 0.01}}


@pytest.mark.parametrize("step, execution, wall, cpu, why", [
    (1e-6, "threads", 0.05, 0.09, None),
    (0.01, "threads", 0.05, 0.05, "steps by 10 ms, more than a tenth of the 50 ms run"),
    (1e-6, "processes", 0.05, 0.05, "steps by 10 ms, more than a tenth of the 50 ms run"),
    # a step longer than the run is no tenth of it: said as it is
    (0.01, "threads", 0.000775, 0.000775, "steps by 10 ms, longer than the whole 0.775 ms run"),
    (1e-6, "processes", 0.5, 0.9, None),
    (1e-6, "threads", 0.05, 0.1175, "2.35 CPU seconds per wall second, more than the 2 cores available"),
    (None, "threads", 0.05, 0.05, "never moved"),
])
def test_impossible_cpu_readings_are_null_with_the_reason(step, execution, wall, cpu, why):
    got, reason = aggregate.cpu_reading(reading_record(step), {"execution": execution}, {"wall_sec": wall,
                                                                                         "cpu_sec": cpu})
    if why is None:
        assert got == cpu and reason is None
    else:
        assert got is None and why in reason


# --- comparisons and the paper ------------------------------------------------------------------

def launch(runtime, workload, rep, times, version="3.13.15", origin="build"):
    """One canned launch: {(execution, workers): wall seconds, or (wall, CPU) seconds}."""
    def run(t):
        wall, cpu = t if isinstance(t, tuple) else (t, t)
        return {"rep": 0, "wall_sec": wall, "cpu_sec": cpu, "results": [1]}

    points = [{"execution": e, "workers": w, "status": "ok", "failure": None, "warmup": [],
               "runs": [run(t)]} for (e, w), t in times.items()]
    return {"profile": "test", "status": "ok", "failure": None, "startup_sec": 0.02,
            "cell": {"runtime": runtime, "workload": workload, "rep": rep},
            "parameters": {"spec": {"chunks": 4, "configs": [list(k) for k in times]}},
            "runtime": {"implementation": "CPython", "version": version, "gil_enabled": runtime != "cpython_ft",
                        "has_gil": runtime != "cpython_ft", "origin": origin, "cores_available": 2},
            "worker": {"wall_clock": "time.perf_counter", "cpu_clock": "time.process_time",
                       "cpu_clock_resolution_sec": 1e-6, "start_method": "fork"},
            "points": points, "provenance": {}, "started_unix": rep}


def canned(ft_seq=(0.050, 0.052, 0.051), src_seq=(0.040, 0.041, 0.042), ft_threads_cpu=0.051):
    """Three launches of each build; the GIL-less build's two threads keep `ft_threads_cpu`
    CPU seconds busy in their 0.027 s (0.051: both cores, 1.9 per wall second)."""
    out = []
    for rep in range(3):
        for workload in ("multithread_cpu", "multithread_alloc"):
            out += [launch("cpython_src", workload, rep, {("sequential", 1): src_seq[rep], ("threads", 2): 0.043}),
                    launch("cpython_ft", workload, rep, {("sequential", 1): ft_seq[rep],
                                                         ("threads", 2): (0.027, ft_threads_cpu)}),
                    launch("cpython_ft_gil", workload, rep, {("sequential", 1): 0.050, ("threads", 2): 0.052})]
    return out


def resolutions():
    return [{"name": n, "alternatives": [f"{{build:{b}}}"], "argv": None, "chosen": f"{{build:{b}}}",
             "reason": None, "gil_declared": None, "origin": "build", "build": b, "env": env}
            for n, b, env in (("cpython_src", "default", {}), ("cpython_ft", "freethreaded", {"PYTHON_GIL": "0"}),
                              ("cpython_ft_gil", "freethreaded", {"PYTHON_GIL": "1"}))]


def test_comparisons_give_each_ratio_its_interval_and_say_when_it_holds_one():
    c = aggregate.comparison_table(canned(), 0.95).set_index(["comparison", "workload", "execution", "workers"])
    over = c.loc[("freethreading_overhead", "multithread_cpu", "sequential", 1)]
    assert over["time_ratio"] == pytest.approx(0.051 / 0.041) and over["ci_excludes_one"] == True  # noqa: E712
    assert over["time_ratio_ci_low"] > 1 and over["same_version"] == True  # noqa: E712
    gil = c.loc[("gil_cost", "multithread_cpu", "threads", 2)]
    assert gil["time_ratio"] == pytest.approx(0.052 / 0.027) and gil["runtime"] == "cpython_ft_gil"
    # the same time with the GIL on and off: its interval holds 1
    assert c.loc[("gil_cost", "multithread_cpu", "sequential", 1), "ci_excludes_one"] == False  # noqa: E712


def ft_machine():
    from test_gil_study import machine

    m = machine()
    m["config"]["gil"]["baseline"] = "cpython_src"
    return m


def control_launches(threads=(0.0205, 0.021, 0.0208), seq=(0.040, 0.041, 0.042)):
    """The native control on the seed's workload: its sum in C, in threads."""
    out = []
    for rep in range(3):
        rec = launch("native", "multithread_cpu", rep, {("sequential", 1): seq[rep], ("threads", 2): threads[rep]})
        rec["runtime"].update(implementation="native", version="gcc 12.2.0", has_gil=False, gil_enabled=False,
                              control=True, origin="control")
        out.append(rec)
    return out


def control_resolution():
    return {"name": "native", "alternatives": ["{control}"], "argv": ["/x/gil-control"], "chosen": "{control}",
            "reason": None, "gil_declared": False, "origin": "control", "control": True}


def test_the_paper_states_the_gils_cost_and_the_free_threaded_overhead_from_the_tables():
    from test_gil_study import check, paper_tables, render

    records = canned(ft_seq=(0.040, 0.043, 0.041))
    tables, m = paper_tables(records, resolutions(), "cpython_src"), ft_machine()
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    text = parts["freethreading"]
    assert 'cpython_ft is CPython [3.13.15]{.fact key="gil.version.cpython_ft"} run with [PYTHON_GIL=0]{.fact' in text
    # the GIL on against off: threads at 2 workers took longer with it on, on both workloads
    assert "at both points the run was [slower with the GIL on]{.fact" in text and "at all [2]" not in text
    # sequentially too here: 0.050 s with the GIL on against 0.040-0.043 s off
    assert "Run sequentially, where no thread waits for another, at both workloads" in text
    assert text.count("the run was [slower with the GIL on]{.fact") == 2
    # the free-threaded build's single-thread overhead, from its interval against one
    assert ("on multithread_cpu it took [1.00 (0.95–1.07)]{.fact" in text
            and "[not distinguishable on this machine from]{.fact" in text)
    assert "cpython_ft reached a speedup of [1.52 (1.48–1.59)]{.fact" in text and "[above]{.fact" in text
    assert "[higher than]{.fact key=\"gil.alloc_ft_vs.cpython_ft_gil\"} that of cpython_ft_gil" in text
    assert "{#tbl-gil-freethreading}" in text
    # the headline: the free-threaded build's speedup beside the same binary's with the GIL on, and the
    # seed's time ratio, which is another quantity
    head = parts["headline"]
    assert head.startswith("**The GIL (@sec-gil).**") and "[higher than]{.fact key=\"gil.headline_ft_vs_gil\"}" in head
    assert "its launches there took" not in head  # told apart: no launches' range
    assert "[3.3]{.fact key=\"gil.seed_ratio\"}" in head and "another quantity" in head
    # this run's ratio beside it carries its verdict against one, never a bare number
    assert re.search(r"start-up excluded\), is \[[^]]+\]\{\.fact key=\"gil\.time_ratio\.freethreading_overhead"
                     r"\.multithread_cpu\.threads\.w2\"\}: cpython_ft was \[[a-z ]+\]\{\.fact "
                     r"key=\"gil\.time_ratio_vs_one\.freethreading_overhead\.multithread_cpu\.threads\.w2\"\} "
                     r"cpython_src there", head)
    # the claim rests on the CPU time: two cores busy
    # named with its workload: the sentence before it speaks of another (the seed's row)
    assert "On multithread_cpu, without its GIL, CPython's threads ran that GIL-holding work in parallel on this " \
           "machine: cpython_ft's threads kept [1.89 (1.89–1.89)]{.fact" in head and "[above]{.fact key=\"gil.headline_ft_cpu_vs_parallel\"}" in head
    assert "with the GIL on, the same binary's threads took turns, its speedup [below]{.fact" in head
    # the same speedup on one core's CPU time: no claim of parallel threads
    one_core = paper_tables(canned(ft_seq=(0.040, 0.043, 0.041), ft_threads_cpu=0.027), resolutions(),
                            "cpython_src")
    one_head = render(one_core, m)[0]["headline"]
    assert "cannot say they ran in parallel" in one_head and "ran pure-Python code in parallel" not in one_head
    # a run without the three builds says what it cannot say
    rt_ = tables["gil_runtimes"]
    none = dict(tables, gil_runtimes=rt_[rt_["runtime"] == "cpython_src"].assign(status="not measured",
                                                                                  reason="no source"),
                gil_comparisons=tables["gil_comparisons"].iloc[0:0],
                gil_summary=tables["gil_summary"].iloc[0:0])
    parts, facts = render(none, m)
    assert check(none, m, parts, facts) == []
    assert "Not measured in this run: cpython_src ([no source]{.fact" in parts["freethreading"]
    assert "cpython_ft (not configured)" in parts["freethreading"]
    assert "cannot say what the GIL costs within one binary" in parts["freethreading"]
    assert "there is no headline to set beside the seed's" in parts["headline"]


def test_the_seed_row_sets_our_times_beside_the_seeds_and_says_what_start_up_explains():
    from test_gil_study import check, machine, paper_tables, render

    records = [launch("cpython", "multithread_cpu", rep, {("sequential", 1): 0.004, ("threads", 2): 0.005},
                      version="3.11.2", origin="this") for rep in range(3)]
    for r in records:
        r["startup_sec"] = 0.030
    tables = paper_tables(records, [{"name": "cpython", "alternatives": ["{python}"], "argv": ["/p"],
                                     "chosen": "{python}", "reason": None, "gil_declared": None}])
    m = machine()
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    text = parts["report"]
    assert "the work itself took cpython (CPython [3.11.2]{.fact" in text and "[5 (5–5) ms]{.fact" in text
    assert "the seed's CPython time is [13]{.fact" in text
    assert "start-up and work together come to [35 ms]{.fact" in text and "start-up included" in text
    assert "| cpython  | CPython 3.11.2" in text and "{#tbl-gil-seed-row}" in text
    assert facts["gil.seed_cpython_ms"]["source"] == {"kind": "seed", "file": "gil.txt",
                                                      "quote": "215 ms vs 65 ms CPython"}
    # a start-up that cannot explain the seed's times
    for r in records:
        r["startup_sec"] = 0.300
    tables = paper_tables(records, [{"name": "cpython", "alternatives": ["{python}"], "argv": ["/p"],
                                     "chosen": "{python}", "reason": None, "gil_declared": None}])
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == [] and "cannot be split into start-up and work" in parts["report"]


# --- the native control ---------------------------------------------------------------------------

@pytest.mark.native
@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (apt-get install build-essential)")
def test_the_native_control_runs_the_sum_in_threads_and_its_results_are_checked(tmp_path, monkeypatch):
    binary = tmp_path / "gil-control"
    build = subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", str(binary),
                            rt.CONTROL_SOURCE], capture_output=True, text=True, cwd=plan.WORKER.parents[4])
    assert build.returncode == 0, build.stderr
    monkeypatch.setattr(rt, "CONTROL_BINARY", str(binary))
    cfg = pbconfig.load("smoke", [*TINY, "gil.measure=[cpython,native]", "gil.runtimes.native.work_scale=3"])
    assert [c.workload for c in plan.cells(cfg) if c.runtime == "native"] == ["multithread_cpu",
                                                                              "multithread_cpu_scaled"]
    spec = plan.worker_spec(cfg, "native", "multithread_cpu_scaled")
    assert spec["params"]["repeat"] == 3 * cfg["gil"]["workloads"]["multithread_cpu_scaled"]["repeat"]
    record = run_cell.measure(cfg, plan.GilCell("native", "multithread_cpu_scaled"))
    assert record["status"] == "ok", record["failure"]
    points = {(p["execution"], p["workers"]): p for p in record["points"]}
    assert points[("threads", 2)]["status"] == "ok" and points[("processes", 2)]["status"] == "unavailable"
    assert all(r["cpu_sec"] > 0 for r in points[("threads", 2)]["runs"])
    assert record["runtime"]["implementation"] == "native" and record["worker"]["cpu_clock_resolution_sec"] < 1e-3
    other = run_cell.measure(cfg, plan.GilCell("native", "multithread_alloc"))
    assert {p["status"] for p in other["points"]} == {"unavailable"}
    # a wrong sum is caught like any runtime's
    bad = run_cell.check_point(points[("threads", 2)], spec, record["expected_chunk"] + 1)
    assert bad["status"] == "failed" and "expected" in bad["failure"]
    # the study's tables keep it apart: no ratio to the baseline, drawn as the machine's ceiling
    tables = aggregate.study_tables([record], [r.summary() for r in rt.resolve_all(cfg)], 0.95, "cpython")
    s = tables["summary"]
    assert s["control"].all() and s["ratio_vs_baseline"].isna().all()
    assert tables["runtimes"].set_index("runtime").loc["native", "control"] == True  # noqa: E712


def test_the_ceiling_is_read_only_where_the_controls_own_interval_excludes_one():
    from test_gil_study import check, paper_tables, render

    records = canned() + control_launches()
    tables, m = paper_tables(records, [*resolutions(), control_resolution()], "cpython_src"), ft_machine()
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    text = parts["speedup"]
    # the control: 1.97 (1.90-2.05) on multithread_cpu; cpython_ft's 1.89 (1.85-1.93) reaches it, the
    # builds with a GIL stay below it
    assert "the native control (native:" in text and "on multithread_cpu [1.97 (1.90–2.05)]{.fact" in text
    assert "and cpython_ft ([1.89 (1.85–1.93)]{.fact" in text and "was [not distinguishable on this machine " \
           "from]{.fact" in text
    assert re.search(r"while the speedups of cpython_src \(\[[^]]+\]\{[^}]+\}\) and cpython_ft_gil \(\[[^]]+\]\{[^}]+\}\) "
                     r"were \[below\]\{\.fact", text), text
    assert "held back by itself, not by the machine" in text and "their CPU use says whether they did" in text
    assert "[1.97 (1.90–2.05)]{.fact" in parts["limitations"]
    # the control is no runtime: never in the time ranking, the seed's table or the runtimes' groups
    assert "native" not in parts["wall_time"].split("(@fig")[0].split("](")[1]
    assert "native against" not in parts["report"] and "(native," not in text
    # a runtime above the control and one not distinguishable from it: each group's word is
    # said of its own members only (one group word once called both "not distinguishable")
    slow = canned() + control_launches(threads=(0.0275, 0.028, 0.0278))
    tables = paper_tables(slow, [*resolutions(), control_resolution()], "cpython_src")
    s = tables["gil_summary"]
    at = (s["runtime"] == "cpython_ft_gil") & (s["execution"] == "threads") & (s["workload"] == "multithread_cpu")
    s.loc[at, ["speedup_vs_sequential", "speedup_ci_low", "speedup_ci_high"]] = [1.48, 1.45, 1.52]
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    assert "cpython_ft_gil ([1.48 (1.45–1.52)]{.fact" in parts["speedup"] and "} were [not" not in parts["speedup"]
    assert re.search(r"\) was \[not distinguishable on this machine from\]\{\.fact "
                     r"key=\"gil\.vs_ceiling\.cpython_ft_gil", parts["speedup"]), parts["speedup"]
    assert re.search(r"and cpython_ft \(\[1\.89 \(1\.85–1\.93\)\]\{[^}]+\}\) was \[above\]\{\.fact", parts["speedup"]), \
        parts["speedup"]
    # a control whose own interval holds one: no speedup can be read against the machine
    noisy = canned() + control_launches(threads=(0.0205, 0.060, 0.021))
    tables = paper_tables(noisy, [*resolutions(), control_resolution()], "cpython_src")
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    assert "no runtime's speedup there can be read against the machine" in parts["speedup"]
    assert "held back by itself" not in parts["speedup"]
    # the figure's legend names the control for what it is, not a ceiling it may not be
    from parbench.studies.gil import figures

    legend = str(figures.thread_speedup(tables["gil_summary"], m).to_dict()["datasets"])
    assert "native (no interpreter)" in legend and "ceiling" not in legend


@pytest.mark.native
@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (apt-get install build-essential)")
@pytest.mark.parametrize("sanitizer", ["thread", "address,undefined"])
def test_the_native_control_is_clean_under_the_sanitizers(sanitizer, tmp_path):
    from conftest import assert_clean

    binary = tmp_path / "gil-control"
    build = subprocess.run(["cc", "-O1", "-g", f"-fsanitize={sanitizer}", "-fno-omit-frame-pointer", "-pthread",
                            "-o", str(binary), rt.CONTROL_SOURCE], capture_output=True, text=True,
                           cwd=plan.WORKER.parents[4])
    assert_clean(build, f"building the control with -fsanitize={sanitizer}")
    spec = {"workload": "multithread_cpu", "kind": "sum_range", "chunks": 5, "params": {"n": 20000, "repeat": 2},
            "configs": [["sequential", 1], ["threads", 2], ["threads", 3], ["processes", 2]], "warmup_runs": 1,
            "repetitions": 2}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    run = subprocess.run([str(binary), "worker.py", str(tmp_path / "spec.json"), str(tmp_path / "out.json")],
                         capture_output=True, text=True, timeout=120)
    assert_clean(run, f"the control under -fsanitize={sanitizer}")
    out = json.loads((tmp_path / "out.json").read_text())
    want = sum(range(20000)) * 2
    for c in out["configs"][:3]:
        assert c["status"] == "ok" and all(r["results"] == [want] * 5 for r in c["runs"] + c["warmup"])
    # a spec it cannot read is refused with the keys it needs
    (tmp_path / "bad.json").write_text("{}")
    bad = subprocess.run([str(binary), "worker.py", str(tmp_path / "bad.json"), str(tmp_path / "o.json")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "cannot read the spec" in bad.stderr


def test_the_one_thread_overhead_gives_the_one_worker_runs_where_they_disagree():
    """The free-threaded build's one-thread cost stood on its sequential run alone ("faster
    than the default build"), where its runs with one worker in threads said otherwise."""
    from test_gil_study import check, paper_tables, render

    def launches(ft_one):
        out = []
        for rep in range(3):
            for runtime, seq, one in (("cpython_src", (0.040, 0.041, 0.042), (0.040, 0.041, 0.042)),
                                      ("cpython_ft", (0.040, 0.043, 0.041), ft_one)):
                out.append(launch(runtime, "multithread_cpu", rep, {("sequential", 1): seq[rep],
                                                                   ("threads", 1): one[rep], ("threads", 2): 0.043}))
            out.append(launch("cpython_ft_gil", "multithread_cpu", rep, {("sequential", 1): 0.050,
                                                                        ("threads", 1): 0.050, ("threads", 2): 0.052}))
        return out

    m = ft_machine()
    tables = paper_tables(launches((0.060, 0.061, 0.062)), resolutions(), "cpython_src")
    parts, facts = render(tables, m)
    assert check(tables, m, parts, facts) == []
    text = parts["freethreading"]
    assert re.search(r"on multithread_cpu it took \[[^]]+\]\{[^}]+\} times the default build's time, \[not "
                     r"distinguishable on this machine from\]\{[^}]+\} the default build, though with one worker in "
                     r"threads it took \[1\.49 \([^)]+\)\]\{[^}]+\} times its time, \[slower than\]", text), text
    assert "Where those readings of one thread of work disagree, this run does not pin that cost down." in text
    # where they agree, the sequential run speaks for them
    tables = paper_tables(launches((0.040, 0.043, 0.041)), resolutions(), "cpython_src")
    parts, facts = render(tables, m)
    assert "though with one worker" not in parts["freethreading"] and check(tables, m, parts, facts) == []
