"""Background load: the CPU time the machine spent outside a cell, and the cells measured
again (or flagged) when it was too much."""

import collections
import multiprocessing as mp
import os
import subprocess
import sys
import time

import pytest

from parbench import disturbance
from parbench.telemetry import load


@pytest.fixture(autouse=True)
def _no_subreaper_after():
    """Some tests here run the real load meter in pytest's process, which makes it a child
    subreaper (as it makes a cell's process): undone after each, so that later tests'
    orphans are reaped (conftest checks)."""
    yield
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(36, 0, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER, off


LinuxTimes = collections.namedtuple("LinuxTimes", "user nice system idle iowait irq softirq steal guest guest_nice")
MacTimes = collections.namedtuple("MacTimes", "user nice system idle")
Usage = collections.namedtuple("Usage", "ru_utime ru_stime")
ProcTimes = collections.namedtuple("ProcTimes", "user system")


def test_busy_time_counts_steal_but_not_guest_or_idle():
    times = LinuxTimes(user=10, nice=1, system=2, idle=100, iowait=5, irq=0.5, softirq=0.5, steal=3, guest=4,
                       guest_nice=1)
    busy, steal, reason = load._machine_times(lambda: times)
    assert (busy, steal, reason) == (17.0, 3, None)  # guest is inside user already


def test_a_machine_without_steal_reports_none_for_it():
    busy, steal, reason = load._machine_times(lambda: MacTimes(user=1, nice=0, system=2, idle=9))
    assert (busy, steal, reason) == (3, None, None)


def test_no_source_says_why():
    assert load._machine_times(None) == (None, None, "psutil is not installed")

    def broken():
        raise OSError("no /proc/stat")

    busy, steal, reason = load._machine_times(broken)
    assert busy is None and "no /proc/stat" in reason


def test_other_load_is_the_machine_busy_time_outside_the_cell():
    start = load.Snapshot(monotonic=100.0, busy_sec=50.0, steal_sec=1.0, own_cpu_sec=2.0)
    end = load.Snapshot(monotonic=102.0, busy_sec=54.0, steal_sec=1.5, own_cpu_sec=5.0)
    r = load.reading(start, end, logical_cores=2)
    assert r["wall_sec"] == 2.0 and r["cell_cpu_sec"] == 3.0 and r["machine_busy_cpu_sec"] == 4.0
    assert r["other_cpu_sec"] == 1.0 and r["other_cores"] == 0.5
    assert r["steal_cpu_sec"] == 0.5 and r["steal_cores"] == 0.25
    assert r["reason"] is None


def test_tick_noise_never_makes_the_other_load_negative():
    start = load.Snapshot(0.0, 10.0, None, 0.0)
    end = load.Snapshot(1.0, 10.98, None, 1.0)  # /proc/stat counted a tick less than the process clock
    r = load.reading(start, end, logical_cores=2)
    assert r["other_cpu_sec"] == 0.0 and r["other_cores"] == 0.0 and r["steal_cores"] is None


def test_an_unreadable_machine_gives_null_with_the_reason():
    start = load.Snapshot(0.0, None, None, 0.0)
    end = load.Snapshot(1.0, None, None, 1.0)
    r = load.reading(start, end, logical_cores=2, reason="psutil is not installed")
    assert r["other_cores"] is None and r["reason"] == "psutil is not installed" and r["cell_cpu_sec"] == 1.0


def test_the_meter_reads_injected_sources():
    ticks = iter([LinuxTimes(10, 0, 0, 0, 0, 0, 0, 1, 0, 0), LinuxTimes(13, 0, 0, 0, 0, 0, 0, 1.5, 0, 0)])
    usage = iter([Usage(1.0, 0.0), Usage(0.0, 0.0), Usage(2.0, 0.0), Usage(0.0, 0.0)])
    clock = iter([0.0, 2.0])
    meter = load.LoadMeter(cpu_times=lambda: next(ticks), rusage=lambda who: next(usage), clock=lambda: next(clock),
                           logical_cores=2)
    meter._start = meter._snapshot()
    meter._end = meter._snapshot()
    r = meter.reading()
    assert r["cell_cpu_sec"] == 1.0 and r["other_cpu_sec"] == 2.5 and r["other_cores"] == 1.25


def test_no_subreaper_outside_linux_says_so():
    assert "darwin" in load.become_subreaper("darwin")


BURN_CPU_SEC = 0.6
# burns BURN_CPU_SEC of its own CPU time (not wall time: the machine may be loaded), then
# sleeps until killed
BURNER = ("import time\nwhile time.process_time() < %r: pass\nprint('burnt', flush=True)\ntime.sleep(600)"
          % BURN_CPU_SEC)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: /proc/stat")
def test_a_live_child_is_the_cells():
    with load.LoadMeter() as meter:
        burner = subprocess.Popen([sys.executable, "-c", BURNER], stdout=subprocess.PIPE, text=True)
        try:
            assert burner.stdout.readline().strip() == "burnt"
            r = meter.stop()
        finally:
            burner.kill()
            burner.wait()
    assert r["cell_cpu_sec"] >= BURN_CPU_SEC * 0.9, r  # a child still running at the end: its CPU is the cell's


def _burn_orphan(seconds):
    """A grandchild that outlives its parent: orphaned, it is reparented to the cell."""
    pid = os.fork()
    if pid == 0:
        while time.process_time() < seconds:
            pass
        os._exit(0)
    os._exit(0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: a child subreaper")
def test_an_orphaned_descendant_is_still_the_cells():
    import psutil

    ctx = mp.get_context("fork")
    with load.LoadMeter() as meter:
        p = ctx.Process(target=_burn_orphan, args=(BURN_CPU_SEC,))
        p.start()
        p.join()
        deadline = time.time() + 60
        while time.time() < deadline:  # wait for the orphan (now our child) to end
            time.sleep(0.05)
            if not [c for c in psutil.Process().children() if c.status() != psutil.STATUS_ZOMBIE]:
                break
    r = meter.reading()
    assert r["subreaper"] is True
    assert r["cell_cpu_sec"] >= BURN_CPU_SEC * 0.9, r  # the orphan's CPU, reaped by the meter


# A parent that reaps its children automatically (SIGCHLD ignored, as Ray's raylet does):
# the grandchild's CPU time reaches no RUSAGE_CHILDREN; the parent waits until it is gone
AUTO_REAPER = ("import os, signal, time\nsignal.signal(signal.SIGCHLD, signal.SIG_IGN)\npid = os.fork()\n"
               "if pid == 0:\n    while time.process_time() < %r: pass\n    os._exit(0)\n"
               "while os.path.exists(f'/proc/{pid}'): time.sleep(0.01)\n" % BURN_CPU_SEC)


def _auto_reaped_cell(sample_sec):
    with load.LoadMeter(sample_sec=sample_sec) as meter:
        subprocess.run([sys.executable, "-c", AUTO_REAPER], check=True, timeout=120)
    return meter.reading()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: SIGCHLD ignored reaps at once")
def test_a_descendant_its_parent_reaped_unseen_is_the_cells_when_sampled():
    unsampled = _auto_reaped_cell(None)
    assert unsampled["cell_cpu_sec"] < BURN_CPU_SEC * 0.5, unsampled  # lost without sampling: the case exists
    assert unsampled["sampled_descendants_cpu_sec"] is None
    sampled = _auto_reaped_cell(0.05)
    # at most one sample interval of CPU time lost
    assert sampled["cell_cpu_sec"] >= BURN_CPU_SEC - 0.1, sampled
    assert sampled["sampled_descendants_cpu_sec"] >= BURN_CPU_SEC - 0.1


def test_the_tracker_counts_each_process_once_and_from_its_start_reading():
    class Child:
        def __init__(self, pid, cpu):
            self.pid, self.cpu = pid, cpu

        def oneshot(self):
            import contextlib
            return contextlib.nullcontext()

        def cpu_times(self):
            return ProcTimes(self.cpu, 0.0)

        def create_time(self):
            return 1.0

    live = [Child(1, 2.0)]  # alive at the start with 2 s already spent
    tracker = load.DescendantTracker(0, children=lambda: list(live)).start()
    live[0].cpu = 2.5
    live.append(Child(2, 0.3))
    tracker.sample()
    live[1].cpu = 0.4
    tracker.sample()
    live.pop()  # pid 2 ended: its last reading stays
    assert tracker.stop() == pytest.approx(0.5 + 0.4)


def test_a_process_outside_the_cell_counts_as_other_load():
    """Measured in a child process (the cell), while its parent (outside the cell) burns
    a core."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    cell = ctx.Process(target=_meter_cell, args=(queue, 1.5))
    cell.start()
    t = time.time()
    while time.time() - t < 2.5:
        pass
    reading = queue.get(timeout=30)
    cell.join(30)
    if reading["other_cores"] is None:
        pytest.skip(reading["reason"])
    assert reading["other_cores"] >= 0.5, reading  # this process burnt about one core outside it


def _meter_cell(queue, seconds):
    time.sleep(0.3)
    with load.LoadMeter() as meter:
        time.sleep(seconds)
    queue.put(meter.reading())


# --- measured again when disturbed ---------------------------------------------------------------

CFG = {"disturbance": {"max_other_cores": 0.25, "max_attempts": 3, "settle_sec": 0}}


class FakeMeter:
    def __init__(self, loads):
        self.loads = loads

    def __call__(self, **options):
        return self

    def start(self):
        return self

    def stop(self):
        other = self.loads.pop(0)
        return {"other_cores": other, "steal_cores": 0.0}


def test_a_disturbed_cell_is_measured_again_and_the_attempt_kept():
    saved, measured = [], []
    meter = FakeMeter([0.9, 0.05])

    def measure():
        measured.append(1)
        return {"status": "ok", "value": len(measured)}

    record = disturbance.measure_undisturbed(CFG, measure, saved.append, "cell", meter_factory=meter,
                                             quiet=lambda *a: True, out=open(os.devnull, "w"))
    assert len(measured) == 2 and len(saved) == 1
    assert saved[0]["disturbed"] is True and saved[0]["attempt"] == 1 and saved[0]["value"] == 1
    assert record["disturbed"] is False and record["attempt"] == 2 and record["value"] == 2
    assert record["earlier_attempts"] == [{"attempt": 1, "load": {"other_cores": 0.9, "steal_cores": 0.0}}]


def test_a_cell_disturbed_every_time_is_recorded_as_disturbed():
    saved = []
    record = disturbance.measure_undisturbed(CFG, lambda: {"status": "ok"}, saved.append, "cell",
                                             meter_factory=FakeMeter([1.0, 0.8, 0.6]), quiet=lambda *a: True,
                                             out=open(os.devnull, "w"))
    assert record["disturbed"] is True and record["attempt"] == 3 and len(saved) == 2
    assert [a["attempt"] for a in record["earlier_attempts"]] == [1, 2]


def test_a_failed_or_unmeasurable_cell_is_not_measured_again_for_its_load():
    for status in ("failed", "unavailable"):
        saved = []
        record = disturbance.measure_undisturbed(CFG, lambda: {"status": status}, saved.append, "cell",
                                                 meter_factory=FakeMeter([2.0]), quiet=lambda *a: True)
        assert record["disturbed"] is False and record["attempt"] == 1 and not saved


def test_one_attempt_only_when_configured():
    cfg = {"disturbance": {**CFG["disturbance"], "max_attempts": 1}}
    record = disturbance.measure_undisturbed(cfg, lambda: {"status": "ok"}, lambda r: None, "cell",
                                             meter_factory=FakeMeter([1.0]), quiet=lambda *a: True,
                                             out=open(os.devnull, "w"))
    assert record["disturbed"] is True and record["attempt"] == 1


def test_waiting_for_quiet_gives_up_after_the_settle_time():
    clock = iter(range(100))
    quiet = disturbance.wait_until_quiet(0.25, settle_sec=3, meter_factory=FakeMeter([1.0] * 10),
                                         sleep=lambda s: None, clock=lambda: next(clock))
    assert quiet is False
    assert disturbance.wait_until_quiet(0.25, settle_sec=3, meter_factory=FakeMeter([1.0, 0.1]),
                                        sleep=lambda s: None, clock=lambda: 0) is True


def test_a_bad_threshold_is_refused():
    from parbench import config as pbconfig

    with pytest.raises(pbconfig.ConfigError, match="max_other_cores"):
        pbconfig.load("smoke", ["disturbance.max_other_cores=-1"])
    with pytest.raises(pbconfig.ConfigError, match="max_attempts"):
        pbconfig.load("smoke", ["disturbance.max_attempts=0"])


SUBREAPER_THAT_EXITS = """
import os, sys, time
from parbench.telemetry import load
assert load.become_subreaper() is None
if os.fork() == 0:           # a child that starts a daemon and exits: the daemon is orphaned
    if os.fork() == 0:
        time.sleep(600)
        os._exit(0)
    os._exit(0)
os.wait()
time.sleep(0.5)              # the daemon now has the subreaper as its parent
print(" ".join(str(c.pid) for c in __import__("psutil").Process().children()), flush=True)
sys.exit(130)                # as a cell does on Ctrl+C
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: a child subreaper")
def test_a_subreaper_leaves_no_orphan_when_it_exits():
    import psutil

    done = subprocess.run([sys.executable, "-c", SUBREAPER_THAT_EXITS], capture_output=True, text=True, timeout=60)
    assert done.returncode == 130, done.stderr
    orphans = [int(pid) for pid in done.stdout.split()]
    assert orphans, "the daemon was not reparented to the subreaper"
    for pid in orphans:  # neither running nor a zombie left to init
        assert not psutil.pid_exists(pid), psutil.Process(pid).status()


def test_the_machines_stability_check_is_measured_again_while_something_else_runs():
    # its spread is every verdict's bar: measured beside a render job it read 8.7% where
    # the quiet machine's is 2.4%
    from parbench.probe import steady_cpu

    readings = iter([{"cv": 0.087}, {"cv": 0.024}])
    devnull = open(os.devnull, "w")
    record = steady_cpu(CFG, devnull, lambda: next(readings), meter_factory=FakeMeter([1.9, 0.02]),
                        quiet=lambda *a: True)
    assert record["cv"] == 0.024 and record["attempt"] == 2 and record["disturbed"] is False
    assert record["earlier_attempts"][0]["load"]["other_cores"] == 1.9
    assert "status" not in record and "planned_position" not in record
    # busy every time: kept, and said so
    record = steady_cpu(CFG, devnull, lambda: {"cv": 0.09}, meter_factory=FakeMeter([1.0, 0.8, 0.6]),
                        quiet=lambda *a: True)
    assert record["disturbed"] is True and record["attempt"] == 3 and record["load"]["other_cores"] == 0.6


def test_the_other_load_is_never_less_than_the_steal_the_cell_was_charged_for():
    """A guest kernel may charge the time stolen from the cell's task to the task: the
    cell's CPU time then holds it, and busy less the cell fell below the steal (a run
    recorded 0.000 cores elsewhere beside 0.005 of steal; a disturbed one 0.285 beside
    0.295). The other load includes the steal, so it is at least the steal."""
    start = load.Snapshot(monotonic=100.0, busy_sec=50.0, steal_sec=1.0, own_cpu_sec=2.0)
    end = load.Snapshot(monotonic=102.0, busy_sec=52.6, steal_sec=1.6, own_cpu_sec=4.6)  # 0.6 s stolen, charged
    r = load.reading(start, end, logical_cores=2)
    assert r["steal_cpu_sec"] == pytest.approx(0.6) and r["other_cpu_sec"] == pytest.approx(0.6)
    assert r["other_cores"] == pytest.approx(0.3) and r["other_cores"] >= r["steal_cores"]
