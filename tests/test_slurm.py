"""The pipeline on a real SLURM cluster: tests/slurm/cluster.sh starts a single-node
cluster with accounting (munge, MariaDB, slurmdbd, slurmctld, slurmd), and the smoke
profile runs through Snakemake's SLURM executor (`--profile profiles/slurm`) in a fresh
copy of the checkout: every cell a SLURM job of its own (`--exclusive`), then the
aggregation, figures and paper as SLURM jobs too.

The first run cancels one cell's job with `scancel` while it measures: that run must
report the cell failed, with SLURM's reason, and stop; the second run must measure that
cell (and nothing finished) again and finish the paper. The cluster is stopped when the
runs are done, whatever happened, and leaves no process behind.

Reduced by default (what CI runs): the sched study with the sequential baseline and one
scheduler (`ws`) on 2 threads, no peers (4 cells), and the paper. PARBENCH_SLURM_FULL=1 runs the
whole smoke profile instead (every study; builds liboqs in the copy: about 15 minutes).
Needs root and Debian's slurm-wlm, slurmdbd, munge and mariadb-server (cluster.sh
installs them with apt-get when missing); elsewhere the tests skip, saying why.
"""

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest

from parbench.pipeline import executor_logs

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[1]
CLUSTER = REPO / "tests/slurm/cluster.sh"
PROFILE = "smoke"
# cluster.sh's exit status when this machine cannot run a cluster (not root, no packages)
CANNOT = 3
FULL = os.environ.get("PARBENCH_SLURM_FULL") == "1"
# CI's form: one study; per workload the sequential baseline and work stealing on 2 threads
REDUCED = ["studies=[sched]", "sched.schedulers=[ws]", "sched.peers=[]", "sched.threads=[2]"]
OVERRIDES = [] if FULL else REDUCED
# seconds a run may take (the whole profile builds liboqs and measures every study)
RUN_TIMEOUT = 3600 if FULL else 600
# the cells' rules are `<study>_cell`; the executor names a job's rule in its log path
# and its SLURM comment (rule_<rule>_wildcards_...)
CELL_LOG = re.compile(r"submitted with SLURM jobid (\d+) \(log: \S*/slurm_logs/rule_(\w+_cell)/")


def _command(*extra):
    config = ["--config", "overrides=" + json.dumps(OVERRIDES)] if OVERRIDES else []
    return [sys.executable, "-m", "snakemake", "--profile", "profiles/slurm", "report",
            "--configfile", f"conf/{PROFILE}.yaml", *config, *extra]


def _cluster(action: str, env: dict, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(CLUSTER), action], env=env, capture_output=True, text=True, timeout=timeout)


def _leftovers(state: str) -> list[str]:
    """Processes of the cluster in `state`: daemons name their configuration, socket or
    data folder there on their command line."""
    left = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if state in cmdline:
            left.append(f"{proc.info['pid']}: {cmdline}")
    return left


def _running_cells(env: dict) -> list[str]:
    """SLURM job ids of the cell jobs running now (squeue: id and comment)."""
    out = subprocess.run(["squeue", "-h", "-t", "R", "-o", "%i %k"], env=env, capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines()
            if len(line.split()) == 2 and re.match(r"rule_\w+_cell(_|$)", line.split()[1])]


def _job_state(env: dict, job_id: str) -> str:
    out = subprocess.run(["sacct", "-X", "-n", "-P", "-j", job_id, "-o", "State"], env=env, capture_output=True,
                         text=True).stdout.split()
    return out[0] if out else ""


def _cancel_second_cell(proc: subprocess.Popen, env: dict, timeout: float = RUN_TIMEOUT) -> str:
    """Once the first cell's job has ended and another cell's job runs, `scancel` that one
    (again with the next one if it ended before the signal); returns its job id."""
    first = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        running = _running_cells(env)
        if first is None and running:
            first = running[0]
        victims = [j for j in running if first is not None and j != first and int(j) > int(first)]
        if victims:
            job = victims[0]
            subprocess.run(["scancel", job], env=env, capture_output=True)
            for _ in range(100):
                state = _job_state(env, job)
                if state and state not in ("RUNNING", "PENDING", "COMPLETING"):
                    break
                time.sleep(0.2)
            if state.startswith("CANCELLED"):
                return job
            first = job  # it finished before the signal: take the next one
        time.sleep(0.2)
    raise AssertionError(f"no second cell job ran to cancel (run ended: {proc.poll() is not None})")


def _stop_run(proc: subprocess.Popen) -> None:
    """Ctrl+C, then SIGKILL, the whole process group of a run that is still going."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _cell_records(workdir: Path) -> dict[str, dict]:
    """Every measured cell's record (a JSON file with provenance, outside history/)."""
    found = {}
    for path in sorted((workdir / "data/raw" / PROFILE).rglob("*.json")):
        if "history" in path.relative_to(workdir / "data/raw" / PROFILE).parts:
            continue
        doc = json.loads(path.read_text())
        if isinstance(doc, dict) and "provenance" in doc:
            found[str(path.relative_to(workdir))] = doc
    return found


@pytest.fixture(scope="module")
def slurm_run(fresh_checkout):
    """Start the cluster, run the profile twice (the first with a cell cancelled), stop the
    cluster. Returns what the tests check, with each step's seconds."""
    state = f"/tmp/parbench-slurm-test-{os.getpid()}"
    env = dict(os.environ, PARBENCH_SLURM_DIR=state)
    seconds = {}

    def terminated(signum, frame):  # SIGTERM (a CI timeout): unwind, so that `finally` stops the cluster
        raise SystemExit(f"terminated by signal {signum}")

    previous = signal.signal(signal.SIGTERM, terminated)
    result = {"seconds": seconds, "overrides": OVERRIDES}
    try:
        t0 = time.monotonic()
        started = _cluster("start", env)
        seconds["start"] = time.monotonic() - t0
        if started.returncode == CANNOT:  # cluster.sh started nothing (or undid it)
            pytest.skip("no SLURM cluster on this machine: " + started.stderr.strip().splitlines()[-1])
        assert started.returncode == 0, started.stdout + started.stderr
        conf = re.search(r"export SLURM_CONF=(\S+)", started.stdout).group(1)
        env["SLURM_CONF"] = conf
        workdir = fresh_checkout()
        result["workdir"] = workdir

        t0 = time.monotonic()
        first = subprocess.Popen(_command(), cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, start_new_session=True)
        try:
            result["cancelled"] = _cancel_second_cell(first, env)
            out, _ = first.communicate(timeout=RUN_TIMEOUT)
        finally:
            _stop_run(first)
        seconds["first_run"] = time.monotonic() - t0
        result["first"] = {"returncode": first.returncode, "output": out}
        result["after_first"] = _snapshot(workdir / "data/raw" / PROFILE)

        t0 = time.monotonic()
        second = subprocess.run(_command(), cwd=workdir, env=env, capture_output=True, text=True,
                                timeout=RUN_TIMEOUT)
        seconds["second_run"] = time.monotonic() - t0
        result["second"] = {"returncode": second.returncode, "output": second.stdout + second.stderr}
        result["after_second"] = _snapshot(workdir / "data/raw" / PROFILE)
    finally:
        t0 = time.monotonic()
        stopped = _cluster("stop", env, timeout=300)
        seconds["stop"] = time.monotonic() - t0
        left = _leftovers(state)
        signal.signal(signal.SIGTERM, previous)
    print("\nSLURM test seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in seconds.items()))
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert not left, f"the cluster left processes behind: {left}"
    assert not Path(state).exists()
    return result


def test_cancelled_cell_is_reported_failed_with_the_reason(slurm_run):
    first = slurm_run["first"]
    job = slurm_run["cancelled"]
    assert first["returncode"] != 0, first["output"][-3000:]
    out = first["output"]
    # parbench's explanation names the cell and shows SLURM's word on why it ended
    assert re.search(r"parbench: job \w+_cell \(.+\) failed", out), out[-3000:]
    assert re.search(rf"log: \S*slurm_logs/rule_\w+_cell/\S+/{job}\.log", out), out[-3000:]
    assert re.search(rf"\*\*\* JOB {job} ON \S+ CANCELLED AT ", out), out[-3000:]
    assert "finished cells keep their results" in out


def test_second_run_measures_only_the_cancelled_cell_and_keeps_the_rest(slurm_run):
    second = slurm_run["second"]
    assert second["returncode"] == 0, second["output"][-4000:]
    # exactly one cell job in the second run: the cancelled cell, measured again
    measured_again = CELL_LOG.findall(second["output"])
    assert len(measured_again) == 1, measured_again
    # every file the first run left under data/raw is byte-identical after the second
    before, after = slurm_run["after_first"], slurm_run["after_second"]
    assert before and all(after.get(name) == digest for name, digest in before.items()), \
        [name for name, digest in before.items() if after.get(name) != digest]
    assert len(after) > len(before)  # the cancelled cell's record (and its history copy)


def test_every_cell_ran_as_a_slurm_job_of_its_own(slurm_run):
    records = _cell_records(slurm_run["workdir"])
    assert records
    jobs = {}
    for path, doc in records.items():
        prov = doc["provenance"]
        assert prov["slurm_job_id"], path
        assert prov["slurm_node"] and prov["slurm_cluster"] == "parbench", (path, prov)
        # --exclusive: the job held every CPU of the node
        assert prov["slurm_cpus_on_node"] == os.cpu_count(), (path, prov)
        jobs.setdefault(prov["slurm_job_id"], []).append(path)
    assert all(len(paths) == 1 for paths in jobs.values()), jobs
    # the cell measured again carries the job of the second run, not the cancelled one
    assert slurm_run["cancelled"] not in jobs


def test_tables_hold_the_job_of_every_row(slurm_run):
    processed = slurm_run["workdir"] / "data/processed" / PROFILE
    tables = sorted(processed.glob("*.parquet"))
    assert tables
    with_jobs = 0
    for path in tables:
        frame = pd.read_parquet(path)
        if "slurm_job_id" in frame.columns:
            with_jobs += 1
            assert frame["slurm_job_id"].notna().all(), path.name
            assert frame["hostname"].notna().all(), path.name
    assert with_jobs


def test_tables_have_the_columns_of_a_local_run(slurm_run, smoke_run, smoke_checkout):
    slurm = slurm_run["workdir"] / "data/processed" / PROFILE
    local = smoke_checkout / "data/processed" / PROFILE
    for path in sorted(slurm.glob("*.parquet")):
        assert (local / path.name).exists(), path.name
        assert list(pd.read_parquet(path).columns) == list(pd.read_parquet(local / path.name).columns), path.name


def test_paper_is_rendered_through_slurm(slurm_run):
    workdir = slurm_run["workdir"]
    assert (workdir / "paper/_output/index.html").stat().st_size > 0
    assert (workdir / "paper/_output/index.pdf").stat().st_size > 0
    # the render job itself ran on the cluster
    assert re.search(r"slurm_logs/rule_render_paper/", slurm_run["second"]["output"])


def test_executor_logs_name_the_newest_slurm_log_of_a_failed_job(tmp_path):
    folder = tmp_path / "rule_sched_cell" / "quicksort_ws_02"
    folder.mkdir(parents=True)
    (folder / "4.log").write_text("an earlier run")
    os.utime(folder / "4.log", (1, 1))
    (folder / "9.log").write_text("*** JOB 9 ON vm CANCELLED AT 2026-01-01T00:00:00 ***")
    assert executor_logs("slurm", "sched_cell", ["quicksort", "ws", "02"], root=tmp_path) == [str(folder / "9.log")]
    assert executor_logs("slurm", "paper", [], root=tmp_path) == []
    # a local run's job has its own log only, whatever an earlier SLURM run left
    assert executor_logs("local", "sched_cell", ["quicksort", "ws", "02"], root=tmp_path) == []
