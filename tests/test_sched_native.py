"""The native scheduler library (native/sched): its make targets and the driver contract.

Builds into pytest temporary directories (never into the source tree), runs each
``make check`` target as its own test (unit + stress, AddressSanitizer + UBSan,
ThreadSanitizer), then drives the release ``parbench-sched`` on small inputs and
checks the contract the Python study parses: the stdout lines, the JSON fields,
verification, counters that add up, bad arguments (exit 2, value named) and
missing peers (exit 3, Debian package named).

Run from the repository root:  .venv/bin/python -m pytest tests/test_sched_native.py
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import assert_clean

REPO = Path(__file__).resolve().parents[1]
SCHED_DIR = REPO / "native" / "sched"

_missing = [tool for tool in ("make", "gcc") if shutil.which(tool) is None]
pytestmark = [
    pytest.mark.native,
    pytest.mark.skipif(bool(_missing), reason=f"native toolchain missing: {', '.join(_missing)} not on PATH"),
]

TIME_LINE = re.compile(r"^\[(\d{2})\] Time taken: \d+\.\d{6} seconds$")
PBS_SCHEDULERS = ("lifo", "ws", "ws_sync")


def make(build_dir: Path, target: str, *extra: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "-j2", "-C", str(SCHED_DIR), f"BUILD_DIR={build_dir}", *extra, target],
        capture_output=True, text=True, timeout=timeout,
    )


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sched-build")


@pytest.fixture(scope="module")
def driver(build_dir: Path) -> Path:
    proc = make(build_dir, "all")
    assert_clean(proc, "make all")
    path = build_dir / "parbench-sched"
    assert path.is_file()
    return path


@pytest.fixture(scope="module")
def peers(driver: Path) -> dict:
    proc = subprocess.run([str(driver), "peers"], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def run(driver: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(driver), *args], capture_output=True, text=True, timeout=timeout)


# ---- make check, one test per target ------------------------------------------

@pytest.mark.parametrize("target", ["test", "test-asan", "test-tsan"])
def test_make_target(build_dir: Path, target: str) -> None:
    assert_clean(make(build_dir, target), f"make {target}")


# ---- driver: help and peers --------------------------------------------------------

def test_help_goes_to_stdout(driver: Path) -> None:
    proc = run(driver, "--help")
    assert proc.returncode == 0
    for word in ("quicksort", "mandelbrot", "peers", "--scheduler", "--json"):
        assert word in proc.stdout


def test_peers_json(peers: dict) -> None:
    assert set(peers) == {"openmp", "tbb", "tbb_parallel_sort"}
    for peer in peers.values():
        assert isinstance(peer["available"], bool)
        assert isinstance(peer["note"], str) and peer["note"]


# ---- driver: quicksort ---------------------------------------------------------

def quicksort_schedulers() -> list[str]:
    return ["sequential", *PBS_SCHEDULERS, "openmp", "tbb", "tbb_parallel_sort"]


@pytest.mark.parametrize("scheduler", quicksort_schedulers())
def test_quicksort_contract(driver: Path, peers: dict, tmp_path: Path, scheduler: str) -> None:
    if scheduler in peers and not peers[scheduler]["available"]:
        pytest.skip(f"{scheduler} not built here: {peers[scheduler]['note']}")
    threads = 1 if scheduler == "sequential" else 3
    out = tmp_path / "qs.json"
    proc = run(driver, "quicksort", "--scheduler", scheduler, "--threads", str(threads),
               "--size", "300000", "--cutoff", "1000", "--seed", "7", "--reps", "2",
               "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2, proc.stdout
    for line in lines:
        m = TIME_LINE.match(line)
        assert m and m.group(1) == f"{threads:02d}", line

    report = json.loads(out.read_text())
    for key in ("workload", "scheduler", "threads", "size", "cutoff", "seed", "reps", "verified"):
        assert key in report, key
    assert report["workload"] == "quicksort"
    assert report["scheduler"] == scheduler
    assert (report["threads"], report["size"], report["cutoff"], report["seed"]) == (threads, 300000, 1000, 7)
    assert report["verified"] is True
    assert len(report["reps"]) == 2
    for rep in report["reps"]:
        assert isinstance(rep["time_s"], float) and rep["time_s"] > 0
        assert rep["verified"] is True
        counters = rep["counters"]
        per_worker = counters["per_worker"]
        if scheduler in PBS_SCHEDULERS:
            assert [w["worker"] for w in per_worker] == list(range(threads))
            executed = sum(w["tasks_executed"] for w in per_worker)
            assert counters["tasks_spawned"] > 0
            assert executed == counters["tasks_spawned"], counters
            for w in per_worker:
                for key in ("steal_success", "steal_fail_empty", "steal_fail_race"):
                    assert isinstance(w[key], int) and w[key] >= 0
                if scheduler == "lifo":
                    assert w["steal_success"] == w["steal_fail_empty"] == w["steal_fail_race"] == 0
        else:
            assert per_worker == []
            if scheduler == "tbb_parallel_sort":
                assert counters["tasks_spawned"] is None  # unknown, not 0
            elif scheduler == "sequential":
                assert counters["tasks_spawned"] == 0
            else:  # the same quicksort on OpenMP tasks or a TBB task_group: its tasks counted
                assert isinstance(counters["tasks_spawned"], int) and counters["tasks_spawned"] > 0


# ---- driver: mandelbrot ----------------------------------------------------------

@pytest.mark.parametrize("scheduler", ["sequential", *PBS_SCHEDULERS])
def test_mandelbrot_contract(driver: Path, tmp_path: Path, scheduler: str) -> None:
    threads = 1 if scheduler == "sequential" else 2
    out, image = tmp_path / "mb.json", tmp_path / "frame.ppm"
    proc = run(driver, "mandelbrot", "--scheduler", scheduler, "--threads", str(threads),
               "--width", "160", "--height", "90", "--threshold", "100", "--max-iter", "300",
               "--frames", "3", "--image", str(image), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 3 and all(TIME_LINE.match(line) for line in lines), proc.stdout

    report = json.loads(out.read_text())
    assert report["workload"] == "mandelbrot" and report["scheduler"] == scheduler
    assert (report["width"], report["height"], report["threshold"], report["max_iter"]) == (160, 90, 100, 300)
    assert report["matches_sequential"] is True and report["verified"] is True
    assert isinstance(report["sequential_time_s"], float)
    assert len(report["frames"]) == 3 and all(isinstance(f["time_s"], float) for f in report["frames"])
    assert len(report["reps"]) == 3
    for rep in report["reps"]:
        counters = rep["counters"]
        if scheduler == "sequential":
            assert counters["per_worker"] == []
        else:
            assert sum(w["tasks_executed"] for w in counters["per_worker"]) == counters["tasks_spawned"] > 0

    data = image.read_bytes()
    header = b"P6\n160 90\n255\n"
    assert data.startswith(header) and len(data) == len(header) + 160 * 90 * 3


# ---- driver: bad arguments and missing peers ---------------------------------------

QS = ["quicksort", "--scheduler", "ws", "--size", "1000"]
MB = ["mandelbrot", "--scheduler", "ws", "--threads", "2", "--width", "10", "--height", "10"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (QS + ["--threads", "0"], "--threads must be >= 1 (got 0)"),
        (QS + ["--threads", "-3"], "--threads must be >= 1 (got -3)"),
        (QS + ["--threads", "two"], "--threads must be a non-negative integer (got 'two')"),
        (QS + ["--threads", "100000"], "--threads must be <= 256 (got 100000)"),
        (["quicksort", "--scheduler", "ws", "--threads", "2", "--size", "0"], "--size must be >= 1 (got 0)"),
        (QS + ["--threads", "2", "--cutoff", "0"], "--cutoff must be >= 1 (got 0)"),
        (QS + ["--threads", "2", "--reps", "0"], "--reps must be >= 1 (got 0)"),
        (QS + ["--threads", "2", "--backoff-min-ns", "0"], "--backoff-min-ns must be >= 1 (got 0)"),
        (QS + ["--threads", "2", "--backoff-min-ns", "5000", "--backoff-max-ns", "10"],
         "--backoff-max-ns must be >= --backoff-min-ns (5000) (got 10)"),
        (["quicksort", "--scheduler", "fifo", "--threads", "2", "--size", "10"],
         "--scheduler must be one of sequential, lifo, ws, ws_sync, openmp, tbb, tbb_parallel_sort (got 'fifo')"),
        (["quicksort", "--scheduler", "sequential", "--threads", "2", "--size", "10"],
         "--threads must be 1 for --scheduler sequential (got 2)"),
        (QS + ["--threads", "2", "--bogus", "1"], "unknown option '--bogus'"),
        (["quicksort", "--scheduler", "ws", "--threads", "2"], "quicksort needs --size"),
        (QS + ["--threads"], "--threads needs a value"),
        (MB + ["--threshold", "0"], "--threshold must be >= 1 (got 0)"),
        (MB + ["--frames", "0"], "--frames must be >= 1 (got 0)"),
        (MB + ["--max-iter", "0"], "--max-iter must be >= 1 (got 0)"),
        (["mandelbrot", "--scheduler", "ws", "--threads", "2", "--width", "0", "--height", "5"],
         "--width must be >= 1 (got 0)"),
        (["mandelbrot", "--scheduler", "openmp", "--threads", "2", "--width", "5", "--height", "5"],
         "--scheduler must be one of sequential, lifo, ws, ws_sync for mandelbrot (got 'openmp')"),
        (["sort"], "unknown command 'sort'"),
    ],
)
def test_bad_arguments_exit_2(driver: Path, args: list[str], expected: str) -> None:
    proc = run(driver, *args)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert expected in proc.stderr
    assert proc.stderr.startswith("parbench-sched: ")
    assert proc.stdout == ""


def test_missing_peers_exit_3(tmp_path: Path) -> None:
    """A build without the peers (as on a machine without libtbb-dev) still works."""
    build = tmp_path / "no-peers"
    proc = make(build, "all", "PBS_WITH_OPENMP=0", "PBS_WITH_TBB=0")
    assert_clean(proc, "make all without peers")
    bare = build / "parbench-sched"
    peers = json.loads(run(bare, "peers").stdout)
    assert not any(peer["available"] for peer in peers.values())
    for scheduler, package in (("openmp", "libgcc-12-dev"), ("tbb", "libtbb-dev"),
                               ("tbb_parallel_sort", "libtbb-dev")):
        proc = run(bare, "quicksort", "--scheduler", scheduler, "--threads", "2", "--size", "1000")
        assert proc.returncode == 3, proc.stderr
        assert scheduler in proc.stderr and package in proc.stderr
        assert proc.stdout == ""
    proc = run(bare, "quicksort", "--scheduler", "ws", "--threads", "2", "--size", "1000")
    assert proc.returncode == 0 and TIME_LINE.match(proc.stdout.strip())


FAKE_DRIVER = """#!/bin/sh
# a stand-in for parbench-sched: {what}
{body}
"""


def sched_cell(tmp_path: Path, driver: Path, scheduler: str = "ws") -> tuple[subprocess.CompletedProcess, dict, str]:
    """`parbench sched-cell` as the pipeline runs it (smoke profile), in `tmp_path`."""
    import os
    import sys

    env = dict(os.environ, PARBENCH_ROOT=str(REPO), PARBENCH_RUN_ID="run-1")
    proc = subprocess.run([sys.executable, "-m", "parbench", "sched-cell", "--profile", "smoke", "--workload",
                           "quicksort", "--scheduler", scheduler, "--threads", "2", "--driver", str(driver)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    stem = tmp_path / f"data/raw/smoke/sched/quicksort/{scheduler}_t02_r0"
    record = json.loads(Path(f"{stem}.json").read_text()) if Path(f"{stem}.json").exists() else {}
    console = Path(f"{stem}.txt").read_text() if Path(f"{stem}.txt").exists() else None
    return proc, record, console


def fake_driver(tmp_path: Path, what: str, body: str) -> Path:
    path = tmp_path / "fake-driver"
    path.write_text(FAKE_DRIVER.format(what=what, body=body))
    path.chmod(0o755)
    return path


def test_the_cell_command_records_a_cell_through_the_runner(driver: Path, tmp_path: Path) -> None:
    """A real cell: the record (the runner's fields beside the driver's), the seed's console
    beside it, the seed's line printed, the history kept."""
    proc, record, console = sched_cell(tmp_path, driver)
    assert proc.returncode == 0, proc.stderr
    assert record["status"] == "ok" and record["failure"] is None and record["study"] == "sched"
    assert record["profile"] == "smoke" and record["run_id"] == "run-1" and record["exit_code"] == 0
    assert record["cell"] == {"workload": "quicksort", "scheduler": "ws", "threads": 2, "rep": 0}
    assert record["driver"]["verified"] is True and record["parameters"]["size"] == 1000000
    assert TIME_LINE.match(console.strip()) and console.splitlines() == record["console"]
    assert re.search(r"^  quicksort  ws         \[02\] Time taken: \d+\.\d{6} seconds", proc.stdout, re.M)
    # every attempt kept (a disturbed one is measured again), each with both files
    kept = list((tmp_path / "data/raw/smoke/sched/history/quicksort/ws_t02_r0").iterdir())
    assert len(kept) == record["attempt"]
    assert all(sorted(p.name for p in d.iterdir()) == ["ws_t02_r0.json", "ws_t02_r0.txt"] for d in kept)


def test_the_cell_command_records_a_peer_not_built_and_a_failed_verification(tmp_path: Path) -> None:
    missing = fake_driver(tmp_path, "a build without TBB",
                          'echo "parbench-sched: tbb was not built (install libtbb-dev)" >&2; exit 3')
    proc, record, console = sched_cell(tmp_path, missing, "tbb")
    assert proc.returncode == 0, proc.stderr
    assert record["status"] == "unavailable" and "install libtbb-dev" in record["failure"]
    assert record["parameters"]["size"] == 1000000 and console == ""
    assert "[02] not measured: parbench-sched: tbb was not built" in proc.stdout and "ERROR" not in proc.stderr

    unverified = fake_driver(tmp_path, "a driver that does not say verified",
                             'echo "[02] Time taken: 1.000000 seconds"; exit 0')
    (tmp_path / "b").mkdir()
    proc, record, console = sched_cell(tmp_path / "b", unverified)
    assert proc.returncode == 0, proc.stderr
    assert record["status"] == "failed"
    assert record["failure"] == "the driver reported success but its JSON does not say verified"
    assert "ERROR sched quicksort ws t2 r0 failed its checks" in proc.stderr and "FAILED" in proc.stdout

    crashed = fake_driver(tmp_path, "a driver that crashes", 'echo "frame 1 differs" >&2; exit 1')
    (tmp_path / "c").mkdir()
    proc, record, _ = sched_cell(tmp_path / "c", crashed)
    assert record["status"] == "failed" and record["failure"] == "exit 1: frame 1 differs"
