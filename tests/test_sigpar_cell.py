"""Real sigpar cells, run as the pipeline runs them (`parbench sigpar-cell`), with tiny
windows: the seed's output files, the correctness checks, the failure path and Ctrl+C."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from parbench.studies.sigpar.cell import BREAK_VERIFY_ENV, CSV_COLUMNS

REPO = Path(__file__).resolve().parents[1]
# one attempt per cell: on a busy test machine a disturbed attempt would be measured again
# and leave a copy of its own in the history the tests count (tests/test_disturbance.py
# tests the measuring again)
TINY = ["sigpar.warmup_sec=0.05", "sigpar.duration_sec=0.5", "sigpar.analysis_window_sec=0.3",
        "telemetry.sample_interval_sec=0.1", "disturbance.max_attempts=1"]


def cell_command(tmp_path, algorithm="Ed25519", operation="sign", mode="threading", workers=2, extra=()):
    stem = tmp_path / f"{algorithm}_{operation}_{mode}_t{workers}"
    cmd = [sys.executable, "-m", "parbench", "sigpar-cell", "--profile", "smoke", "--algorithm", algorithm,
           "--operation", operation, "--mode", mode, "--workers", str(workers), "--out-stem", str(stem),
           *TINY, f"sigpar.cache_dir={tmp_path / 'cache'}", *extra]
    return cmd, stem


def run_cell(tmp_path, env_extra=None, **kw):
    cmd, stem = cell_command(tmp_path, **kw)
    env = dict(os.environ, PARBENCH_ROOT=str(REPO), **(env_extra or {}))
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    return proc, stem


@pytest.mark.parametrize("mode", ["threading", "multiprocess"])
@pytest.mark.parametrize("operation", ["sign", "verify"])
def test_a_cell_writes_the_seed_files_and_checks_itself(tmp_path, mode, operation):
    proc, stem = run_cell(tmp_path, operation=operation, mode=mode, workers=2)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(Path(f"{stem}_cell.json").read_text())
    assert record["status"] == "ok", record["failure"]
    result = record["result"]
    assert result["analysis_ops"] > 0 and result["ops_per_sec"] == pytest.approx(result["analysis_ops"] / 0.3)
    assert len(record["workers"]) == 2
    for worker in record["workers"]:
        assert worker["analysis_ops"] > 0
        assert worker["correctness"]["checked"] > 0 and worker["correctness"]["failed"] == 0
        assert worker["correctness"]["tamper_rejected"] is True
    # the seed's per-worker CSV
    with open(f"{stem}.csv") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == CSV_COLUMNS
    assert {r[1] for r in rows[1:]} == {"0", "1"}
    assert all(int(r[2]) >= int(r[3]) for r in rows[1:])  # ops_total >= analysis_ops
    # the seed's system JSON
    system = json.loads(Path(f"{stem}_system.json").read_text())
    assert set(system) == {"cpu_samples", "power"}
    assert {"energy_joules", "avg_power_w", "avg_temperature_c", "log_path", "sample_count"} <= set(system["power"])
    assert system["cpu_samples"] and len(system["cpu_samples"][0]["percpu"]) == psutil.cpu_count()
    # provenance travels with the result
    assert record["provenance"]["cryptography_version"] and record["provenance"]["config_hash"]
    assert "2t →" in proc.stdout and "ops/sec" in proc.stdout


def test_threading_workers_each_own_their_keys_and_pin_to_their_core(tmp_path):
    proc, stem = run_cell(tmp_path, workers=2)
    record = json.loads(Path(f"{stem}_cell.json").read_text())
    pinned = [w["pinned_cpus"] for w in record["workers"]]
    cpus = sorted(os.sched_getaffinity(0))
    assert pinned == [[cpus[0]], [cpus[1 % len(cpus)]]]


def test_a_failed_check_marks_the_cell_and_stops_the_algorithms_sweep(tmp_path):
    broken = {BREAK_VERIFY_ENV: "Ed25519", "PARBENCH_RUN_ID": "run-1"}
    proc, stem = run_cell(tmp_path, env_extra=broken, operation="sign")
    assert proc.returncode == 0
    record = json.loads(Path(f"{stem}_cell.json").read_text())
    assert record["status"] == "failed" and "tampered signature was accepted" in record["failure"]
    assert "failed its checks: " in proc.stderr and f"recorded as failed in {stem}_cell.json" in proc.stderr
    assert "make rerun ALG=Ed25519" in proc.stderr
    assert "FAILED" in proc.stdout
    failure = json.loads((tmp_path / "data/raw/smoke/parallelism/failures/Ed25519.json").read_text())
    assert failure["run_id"] == "run-1"
    # the next cell of the same algorithm in the same run is skipped, not measured
    proc, stem = run_cell(tmp_path, env_extra=broken, operation="verify")
    skipped = json.loads(Path(f"{stem}_cell.json").read_text())
    assert skipped["status"] == "skipped" and "Ed25519 sign threading t2 r0 failed" in skipped["failure"]
    # another algorithm is unaffected; a later run measures Ed25519 again
    proc, stem = run_cell(tmp_path, env_extra={"PARBENCH_RUN_ID": "run-1"}, algorithm="Ed448")
    assert json.loads(Path(f"{stem}_cell.json").read_text())["status"] == "ok"
    proc, stem = run_cell(tmp_path, env_extra={"PARBENCH_RUN_ID": "run-2"}, operation="verify")
    assert json.loads(Path(f"{stem}_cell.json").read_text())["status"] == "ok"


def test_every_measurement_is_kept_in_the_history(tmp_path):
    run_cell(tmp_path)
    proc, _ = run_cell(tmp_path)
    history = tmp_path / "data/raw/smoke/parallelism/history/threading/Ed25519_sign_t2_r0"
    copies = sorted(history.iterdir())
    assert len(copies) == 2
    assert all((c / "Ed25519_sign_threading_t2_cell.json").exists() for c in copies)
    assert "replaced the measurement" in proc.stderr


def test_ctrl_c_stops_every_worker_at_once_and_writes_nothing(tmp_path):
    cmd, stem = cell_command(tmp_path, mode="multiprocess", workers=2)
    cmd = [c if not c.startswith("sigpar.duration_sec") else "sigpar.duration_sec=60" for c in cmd]
    cmd = [c if not c.startswith("sigpar.analysis_window_sec") else "sigpar.analysis_window_sec=50" for c in cmd]
    env = dict(os.environ, PARBENCH_ROOT=str(REPO))
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    parent = psutil.Process(proc.pid)
    deadline = time.monotonic() + 60
    workers = []
    while time.monotonic() < deadline:  # wait until both spawned workers are running
        workers = [p for p in parent.children(recursive=True) if "spawn" in " ".join(p.cmdline())]
        if len(workers) >= 2 and all(p.cpu_percent(interval=0.2) > 0 for p in workers):
            break
    assert len(workers) >= 2, "workers never started"
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl+C in a terminal does
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    gone, alive = psutil.wait_procs(workers, timeout=5)
    assert not alive
    assert not Path(f"{stem}_cell.json").exists() and not Path(f"{stem}.csv").exists()


@pytest.mark.parametrize("args, words", [
    (["--workers", "0"], "--workers must be >= 1 (got 0)"),
    (["--mode", "threads"], "'threads' is not allowed; allowed: threading, multiprocess, native-threads"),
    (["--algorithm", "RSA-1"], "'RSA-1' is not allowed; allowed: RSA-2048"),
])
def test_bad_arguments_are_refused_before_measuring(tmp_path, args, words):
    cmd, _ = cell_command(tmp_path)
    for flag, value in zip(args[::2], args[1::2]):
        cmd[cmd.index(flag) + 1] = value
    proc = subprocess.run(cmd, cwd=tmp_path, env=dict(os.environ, PARBENCH_ROOT=str(REPO)),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and words in proc.stderr


def test_the_openssl_cffi_backend_measures_and_checks_itself(tmp_path, shim_dir):
    for mode in ("threading", "multiprocess"):
        proc, stem = run_cell(tmp_path, mode=mode, operation="sign",
                              extra=("--backend", "openssl-cffi", "--shim", str(shim_dir)))
        assert proc.returncode == 0, proc.stderr
        record = json.loads(Path(f"{stem}_cell.json").read_text())
        assert record["status"] == "ok", record["failure"]
        assert record["cell"]["backend"] == "openssl-cffi"
        assert record["backend"]["version"].startswith("OpenSSL 3")  # the system OpenSSL, not pyca's
        assert all(w["correctness"]["checked"] > 0 and w["correctness"]["tamper_rejected"] for w in record["workers"])
        assert "threading-openssl-cffi" in proc.stdout or "multiprocess-openssl-cffi" in proc.stdout


@pytest.mark.parametrize("algorithm, operation", [("Ed25519", "verify"), ("ML-DSA-44", "sign")])
def test_the_native_runner_writes_the_same_files(tmp_path, shim_dir, liboqs_dir, algorithm, operation):
    extra = ["--shim", str(shim_dir)] + (["--liboqs", str(liboqs_dir)] if algorithm.startswith("ML") else [])
    proc, stem = run_cell(tmp_path, algorithm=algorithm, operation=operation, mode="native-threads", extra=extra)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(Path(f"{stem}_cell.json").read_text())
    assert record["status"] == "ok", record["failure"]
    assert record["cell"]["backend"] == "native" and len(record["workers"]) == 2
    result = record["result"]
    assert result["analysis_ops"] > 0 and result["ops_per_sec"] == pytest.approx(result["analysis_ops"] / 0.3)
    assert result["p50_latency_ms"] > 0
    for worker in record["workers"]:
        assert worker["correctness"]["checked"] > 0 and worker["correctness"]["failed"] == 0
        assert worker["correctness"]["tamper_rejected"] is True
        assert worker["snapshots"] and worker["cpu_time_window_sec"] > 0
    with open(f"{stem}.csv") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == CSV_COLUMNS and {r[1] for r in rows[1:]} == {"0", "1"}


def test_a_backend_without_its_shim_is_recorded_unavailable(tmp_path):
    (tmp_path / "shim").mkdir()
    (tmp_path / "shim" / "shim.json").write_text(json.dumps(
        {"available": False, "reason": "the system OpenSSL's headers are missing (Debian: apt-get install libssl-dev)"}))
    proc, stem = run_cell(tmp_path, extra=("--backend", "openssl-cffi", "--shim", str(tmp_path / "shim")))
    assert proc.returncode == 0, proc.stderr
    record = json.loads(Path(f"{stem}_cell.json").read_text())
    assert record["status"] == "unavailable" and "libssl-dev" in record["failure"]
    assert "UNAVAILABLE" in proc.stdout


@pytest.mark.parametrize("extra, words", [
    (("--backend", "openssl-cffi"), "backend openssl-cffi needs the crypto shim: pass --shim"),
    (("--backend", "liboqs-python"), "'liboqs-python' is not allowed; allowed: pyca, openssl-cffi"),
])
def test_a_backend_needs_its_build_and_must_fit_the_algorithm(tmp_path, extra, words):
    proc, _ = run_cell(tmp_path, extra=extra)
    assert proc.returncode != 0 and words in proc.stderr
