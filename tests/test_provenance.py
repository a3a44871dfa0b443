"""Provenance probes on canned /proc, /sys, /etc trees and canned macOS command output."""

from __future__ import annotations

import datetime as dt
import hashlib
import platform
import shutil
import subprocess
import sys
import types
from pathlib import Path

import psutil
import pytest

from parbench import provenance
from parbench.provenance import (
    GIT_KEYS,
    LIBRARY_KEYS,
    MACHINE_KEYS,
    SLURM_KEYS,
    collect,
    collect_git,
    collect_libraries,
    collect_machine,
    collect_slurm,
    config_hash,
)

FIXTURES = Path(__file__).parent / "fixtures" / "telemetry"


def canned_darwin_runner(sysctl_file: Path, product_version: str | None):
    values = {}
    for line in sysctl_file.read_text().splitlines():
        if line and not line.startswith("#"):
            name, value = line.split("\t", 1)
            values[name] = value
    calls = []

    def run(argv):
        calls.append(argv)
        if argv[:2] == ["sysctl", "-n"]:
            return values.get(argv[2])
        if argv == ["sw_vers", "-productVersion"]:
            return product_version
        return None

    run.calls = calls
    return run


# ---------------------------------------------------------------- collect_machine


def test_machine_intel_bare_metal():
    md = collect_machine(FIXTURES / "intel", system="Linux")
    assert set(md) == set(MACHINE_KEYS)
    assert md["cpu_model"] == "Intel(R) Core(TM) i7-7700K CPU @ 4.20GHz"
    assert md["cpu_vendor"] == "GenuineIntel"
    assert md["logical_cores"] == 8
    assert md["physical_cores"] == 4
    assert md["smt_active"] is True
    assert md["cpufreq_governor"] == "performance"
    assert md["turbo_enabled"] is False  # intel_pstate/no_turbo = 1
    assert md["virtualized"] is False
    assert md["memory_total_bytes"] == 32795428 * 1024
    assert md["os_name"] == "Linux"
    assert md["os_release"] == "Ubuntu 24.04.1 LTS"
    assert md["kernel"] == "6.8.0-49-generic"
    assert md["hostname"] == "bench-intel"
    assert md["performance_cores"] is None and md["efficiency_cores"] is None


def test_machine_amd_guest():
    md = collect_machine(FIXTURES / "amd", system="Linux")
    assert md["cpu_model"] == "AMD EPYC 7B13"
    assert md["cpu_vendor"] == "AuthenticAMD"
    assert md["logical_cores"] == 2
    assert md["physical_cores"] == 1
    assert md["virtualized"] is True
    assert md["turbo_enabled"] is True  # cpufreq/boost = 1, no intel_pstate
    assert md["cpufreq_governor"] == "schedutil"
    assert md["memory_total_bytes"] == 8145316 * 1024
    # no PRETTY_NAME: NAME + VERSION
    assert md["os_release"] == "Debian GNU/Linux 12 (bookworm)"


def test_machine_arm_uses_sysfs_topology_and_implementer():
    md = collect_machine(FIXTURES / "arm", system="Linux")
    assert md["cpu_model"] == "Raspberry Pi 4 Model B Rev 1.4"
    assert md["cpu_vendor"] == "ARM"
    assert md["logical_cores"] == 4
    assert md["physical_cores"] == 4  # from topology/core_id, cpuinfo has none
    assert md["smt_active"] is None
    assert md["virtualized"] is None  # arm cpuinfo has no x86 flags line
    assert md["turbo_enabled"] is False  # cpufreq/policy0/boost = 0
    assert md["cpufreq_governor"] == "ondemand"


def test_machine_intel_hybrid_core_counts():
    md = collect_machine(FIXTURES / "hybrid", system="Linux")
    assert md["performance_cores"] == 12
    assert md["efficiency_cores"] == 8


def test_machine_missing_files_give_none(tmp_path):
    md = collect_machine(tmp_path, system="Linux")
    assert set(md) == set(MACHINE_KEYS)
    for key in MACHINE_KEYS:
        if key not in ("os_name", "arch"):
            assert md[key] is None, key
    assert md["os_name"] == "Linux"


def test_machine_darwin_from_canned_sysctl():
    run = canned_darwin_runner(FIXTURES / "darwin" / "sysctl_m4.txt", "15.1")
    md = collect_machine("/", system="Darwin", run=run)
    assert md["os_name"] == "Darwin"
    assert md["cpu_model"] == "Apple M4"
    assert md["cpu_vendor"] == "Apple"
    assert md["logical_cores"] == 10
    assert md["physical_cores"] == 10
    assert md["performance_cores"] == 4
    assert md["efficiency_cores"] == 6
    assert md["smt_active"] is False
    assert md["memory_total_bytes"] == 17179869184
    assert md["virtualized"] is False
    assert md["os_release"] == "macOS 15.1"
    assert md["cpufreq_governor"] is None and md["turbo_enabled"] is None
    assert ["sysctl", "-n", "hw.perflevel1.logicalcpu"] in run.calls


def test_machine_darwin_without_commands(tmp_path):
    md = collect_machine(tmp_path, system="Darwin", run=lambda argv: None)
    assert md["cpu_model"] is None
    assert md["performance_cores"] is None and md["efficiency_cores"] is None
    assert md["os_release"] is None


def test_machine_live_runs():
    md = collect_machine()
    assert set(md) == set(MACHINE_KEYS)
    assert isinstance(md["logical_cores"], int) and md["logical_cores"] >= 1
    assert isinstance(md["memory_total_bytes"], int) and md["memory_total_bytes"] > 0
    assert md["os_name"] == platform.system()
    assert md["hostname"]


def test_run_command_tolerates_missing_binary():
    assert provenance.run_command(["/nonexistent/definitely-not-here"]) is None
    assert provenance.run_command([sys.executable, "-c", "import sys; sys.exit(3)"]) is None
    assert provenance.run_command([sys.executable, "-c", "print(' hi ')"]) == "hi"


# -------------------------------------------------------------- collect_libraries


def test_libraries_keys_and_versions(monkeypatch):
    monkeypatch.delitem(sys.modules, "oqs", raising=False)
    md = collect_libraries()
    assert set(md) == set(LIBRARY_KEYS)
    assert md["python_version"] == platform.python_version()
    assert md["python_implementation"] == platform.python_implementation()
    assert md["psutil_version"] == psutil.__version__
    if md["cryptography_version"] is not None:
        assert isinstance(md["openssl_version"], str) and md["openssl_version"]
    assert md["liboqs_version"] is None
    assert "oqs" not in sys.modules, "collect_libraries must never import oqs"


def test_libraries_liboqs_version_only_from_imported_module(monkeypatch):
    fake = types.ModuleType("oqs")
    fake.oqs_version = lambda: "0.12.0"
    monkeypatch.setitem(sys.modules, "oqs", fake)
    assert collect_libraries()["liboqs_version"] == "0.12.0"

    def broken():
        raise RuntimeError("liboqs not loaded")

    fake.oqs_version = broken
    assert collect_libraries()["liboqs_version"] is None


def test_libraries_missing_distribution(monkeypatch):
    monkeypatch.setitem(
        provenance._DISTRIBUTIONS, "pandas_version", "no-such-distribution-parbench"
    )
    assert collect_libraries()["pandas_version"] is None


# -------------------------------------------------------------------- collect_git

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


def _git(repo, *args):
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org",
         "-c", "commit.gpgsign=false", *args],
        check=True,
        capture_output=True,
    )


@needs_git
def test_git_commit_and_dirty(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    md = collect_git(repo)
    assert set(md) == set(GIT_KEYS)
    assert md == {"git_commit": None, "git_dirty": False}  # no commits yet, clean

    (repo / "a.txt").write_text("one\n")
    assert collect_git(repo)["git_dirty"] is True  # untracked file
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "first")
    md = collect_git(repo)
    assert len(md["git_commit"]) == 40 and int(md["git_commit"], 16) >= 0
    assert md["git_dirty"] is False

    (repo / "a.txt").write_text("two\n")
    assert collect_git(repo)["git_dirty"] is True
    assert collect_git(repo / ".")["git_commit"] == md["git_commit"]


@needs_git
def test_git_not_a_repo(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert collect_git(tmp_path) == {"git_commit": None, "git_dirty": None}


def test_git_missing_binary(tmp_path):
    md = collect_git(tmp_path, git=str(tmp_path / "no-git-here"))
    assert md == {"git_commit": None, "git_dirty": None}


# ------------------------------------------------------------- config_hash, collect


def test_config_hash_canonical():
    a = {"b": [1, 2], "a": {"y": 1, "x": "é"}}
    b = {"a": {"x": "é", "y": 1}, "b": [1, 2]}
    canonical = '{"a":{"x":"é","y":1},"b":[1,2]}'
    expected = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    assert config_hash(a) == config_hash(b) == expected
    assert config_hash({"a": 1}) != config_hash({"a": 2})
    assert len(config_hash({})) == 16
    assert config_hash({"p": Path("x/y")}) == config_hash({"p": "x/y"})


def test_collect_is_flat_and_complete(tmp_path):
    cfg = {"workers": [1, 2], "name": "t"}
    md = collect(cfg, tmp_path)
    for key in (*MACHINE_KEYS, *LIBRARY_KEYS, *GIT_KEYS, *SLURM_KEYS, "timestamp_utc", "config_hash"):
        assert key in md, key
    assert not any(isinstance(v, (dict, list)) for v in md.values())
    stamp = dt.datetime.fromisoformat(md["timestamp_utc"])
    assert stamp.utcoffset() == dt.timedelta(0)
    assert md["config_hash"] == config_hash(cfg)


def test_collect_on_this_checkout():
    repo = Path(__file__).resolve().parents[1]
    md = collect({}, repo)
    if shutil.which("git") and (repo / ".git").exists():
        assert md["git_dirty"] in (True, False)
    assert isinstance(md["logical_cores"], int)


# ---------------------------------------------------------------------- collect_slurm

# what srun gives a job step (the cell's process under Snakemake's SLURM executor)
SLURM_STEP_ENV = {"SLURM_JOB_ID": "4711", "SLURMD_NODENAME": "node07", "SLURM_JOB_PARTITION": "compute",
                  "SLURM_CLUSTER_NAME": "hpc", "SLURM_CPUS_ON_NODE": "64", "SLURM_STEP_ID": "0", "PATH": "/usr/bin"}


def test_slurm_job_and_node_of_a_job_step():
    md = collect_slurm(SLURM_STEP_ENV)
    assert md == {"slurm_job_id": "4711", "slurm_node": "node07", "slurm_partition": "compute",
                  "slurm_cluster": "hpc", "slurm_cpus_on_node": 64}


def test_slurm_keys_are_null_outside_slurm():
    assert collect_slurm({"PATH": "/usr/bin"}) == dict.fromkeys(SLURM_KEYS)
    # a variable left over without a job id (a login shell's SLURM_CLUSTER_NAME) says nothing
    assert collect_slurm({"SLURM_CLUSTER_NAME": "hpc", "SLURMD_NODENAME": ""}) == dict.fromkeys(SLURM_KEYS)


def test_slurm_partial_environment_keeps_what_it_has():
    md = collect_slurm({"SLURM_JOB_ID": "12", "SLURM_CPUS_ON_NODE": "not-a-number"})
    assert md["slurm_job_id"] == "12" and md["slurm_node"] is None and md["slurm_cpus_on_node"] is None


def test_collect_records_the_slurm_job_it_runs_in(tmp_path, monkeypatch):
    for var in ("SLURM_JOB_ID", "SLURMD_NODENAME", "SLURM_JOB_PARTITION", "SLURM_CLUSTER_NAME", "SLURM_CPUS_ON_NODE"):
        monkeypatch.delenv(var, raising=False)
    assert collect({}, tmp_path)["slurm_job_id"] is None
    monkeypatch.setenv("SLURM_JOB_ID", "99")
    monkeypatch.setenv("SLURMD_NODENAME", "n1")
    md = collect({}, tmp_path)
    assert (md["slurm_job_id"], md["slurm_node"]) == ("99", "n1")
