"""`parbench resume-check`: a lock left by a killed run is removed, one held by a working
Snakemake is respected and named."""

import subprocess
import sys
import time

from parbench import locks
from parbench.studies.sched import plan as sched_plan


def test_no_lock_no_work(tmp_path):
    assert locks.resume_check(tmp_path) == (True, "")


def test_a_stale_lock_is_removed(tmp_path):
    lock_dir = tmp_path / ".snakemake" / "locks"
    lock_dir.mkdir(parents=True)
    (lock_dir / "0.input.lock").write_text("x")
    (lock_dir / "0.output.lock").write_text("x")
    ok, message = locks.resume_check(tmp_path)
    assert ok and "removed the lock a killed run left behind (2 files in" in message
    assert not list(lock_dir.glob("*.lock"))


def test_a_working_snakemake_keeps_its_lock(tmp_path):
    lock_dir = tmp_path / ".snakemake" / "locks"
    lock_dir.mkdir(parents=True)
    (lock_dir / "0.input.lock").write_text("x")
    # a process that looks like Snakemake, working in the checkout
    fake = tmp_path / "snakemake"
    fake.write_text("import time; time.sleep(30)\n")
    proc = subprocess.Popen([sys.executable, str(fake)], cwd=tmp_path)
    try:
        for _ in range(50):
            if locks.snakemake_processes(tmp_path):
                break
            time.sleep(0.1)
        ok, message = locks.resume_check(tmp_path)
        assert not ok and f"another Snakemake (pid {proc.pid}" in message and "wait for it" in message
        assert (lock_dir / "0.input.lock").exists()
    finally:
        proc.kill()
        proc.wait()


def _wait_for(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_snakemake_itself_resumes_after_sigkill_and_names_a_working_run(fresh_checkout):
    """The card's `snakemake report` (any snakemake command of the workflow), with no `make`
    in front: a real run holds its lock; a second run is refused, naming the first; the first
    is SIGKILLed, leaving its lock; the next run removes the stale lock and resumes."""
    import os
    import signal

    checkout = fresh_checkout()
    lock_dir = checkout / ".snakemake" / "locks"
    # `snakemake report`, only as far as sched's native build (a real job of a few seconds;
    # the machine probe waits for every build, the crates and liboqs among them: minutes)
    command = [sys.executable, "-m", "snakemake", "report", "--until", "sched_build",
               "--configfile", "conf/smoke.yaml"]
    first = subprocess.Popen(command, cwd=checkout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        _wait_for(lambda: list(lock_dir.glob("*.lock")) or first.poll() is not None, 120, "the first run's lock")
        os.killpg(first.pid, signal.SIGSTOP)  # frozen while it holds its lock: a run that works
        assert first.poll() is None, "the first run ended before it could be stopped"
        second = subprocess.run([*command[:3], "--configfile", "conf/smoke.yaml"], cwd=checkout,
                                capture_output=True, text=True, timeout=120)
        out = second.stdout + second.stderr
        assert second.returncode != 0, out[-3000:]
        assert "Directory cannot be locked" in out, out[-3000:]
        assert f"parbench: another Snakemake (pid {first.pid}: " in out and "wait for it to finish" in out, out[-3000:]
        os.killpg(first.pid, signal.SIGKILL)  # power loss, the OOM killer: nothing cleans up
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=30)
    assert list(lock_dir.glob("*.lock")), "SIGKILL should leave the lock"
    resumed = subprocess.run(command, cwd=checkout, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert "parbench: removed the lock a killed run left behind" in resumed.stdout
    assert (checkout / sched_plan.DRIVER).is_file()
    assert not list(lock_dir.glob("*.lock"))
