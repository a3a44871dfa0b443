"""`parbench resume-check`: a lock left by a killed run is removed, one held by a working
Snakemake is respected and named."""

import subprocess
import sys
import time

from parbench import locks


def test_no_lock_no_work(tmp_path):
    assert locks.resume_check(tmp_path) == (True, "")


def test_a_stale_lock_is_removed(tmp_path):
    lock_dir = tmp_path / ".snakemake" / "locks"
    lock_dir.mkdir(parents=True)
    (lock_dir / "0.input.lock").write_text("x")
    (lock_dir / "0.output.lock").write_text("x")
    ok, message = locks.resume_check(tmp_path)
    assert ok and "removed the lock a killed run left behind (2 file(s)" in message
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
