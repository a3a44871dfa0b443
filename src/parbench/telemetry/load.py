"""What else the machine did while a cell measured: the CPU time spent outside the cell.

A benchmark on a shared machine must notice when something else ran. ``LoadMeter``
reads, at the start and the end of a cell:

- the machine's busy CPU time, from ``psutil.cpu_times()`` (``/proc/stat`` on Linux:
  user + nice + system + irq + softirq + steal; guest time is already inside user and is
  not counted twice; on macOS user + nice + system), and the steal time on its own: the
  time the hypervisor gave this machine's CPUs to someone else while they wanted to run;
- the cell's own CPU time: this process and every descendant it reaped
  (``getrusage(RUSAGE_SELF)`` + ``getrusage(RUSAGE_CHILDREN)``), plus the descendants
  still alive at the end (psutil). On Linux the cell process becomes a child subreaper
  (``prctl(PR_SET_CHILD_SUBREAPER)``), so that a descendant whose parent exits first (a
  daemon a peer started, a pool process) is reparented to the cell and its CPU time is
  still the cell's once reaped; ``LoadMeter`` reaps such orphans when it stops. A
  subreaper also owes its orphans a ``wait`` when it exits (Ctrl+C mid-cell, say): at exit
  it stops the descendants still alive and reaps every child, so that none is left to the
  machine's init, which (in containers and micro-VMs) may never reap it.

  A descendant whose own parent reaps it automatically (a daemon that ignores SIGCHLD:
  Ray's raylet does, for its workers) leaves no trace in any ``RUSAGE_CHILDREN``: its CPU
  time vanishes when it ends. With ``sample_sec`` the meter also notes, every that many
  seconds and at the end, each descendant's own CPU time (``DescendantTracker``); the
  cell's CPU time is then the larger of the two counts (each can only miss time, never
  count it twice): a descendant that ended unseen since its last sample loses at most
  ``sample_sec`` of CPU time.

The time the machine was busy outside the cell is the difference; divided by the wall
time it is the number of cores kept busy elsewhere on average (``other_cores``), steal
included: never less than the steal, which a guest kernel may have charged to the cell's
own CPU time. It also holds the pipeline's own small share (Snakemake waiting for the job,
the ``tee`` of its console) and the kernel's housekeeping, a few hundredths of a core.

The two clocks differ in resolution (``/proc/stat`` counts in ticks of 1/USER_HZ s, the
process times are exact), so a difference within a few ticks is noise: a negative
difference is recorded as 0.

Where a source is missing (no psutil, an OS without system-wide CPU times) the reading
says why and every value is null.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import resource
import sys
import threading
import time
from dataclasses import dataclass

try:
    import psutil
except ImportError:  # the reading degrades to null, with the reason
    psutil = None

__all__ = ["LoadMeter", "become_subreaper", "end_descendants", "BUSY_FIELDS"]

# Fields of psutil.cpu_times() that count as busy (those a platform lacks are skipped).
BUSY_FIELDS = ("user", "nice", "system", "irq", "softirq", "steal")
# Linux prctl option: orphaned descendants are reparented to this process.
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper(platform: str = sys.platform) -> str | None:
    """Make this process the reaper of its orphaned descendants (Linux); None on success,
    else why not (their CPU time then counts as load from elsewhere)."""
    if not platform.startswith("linux"):
        return f"no child subreaper on {platform}: CPU time of descendants orphaned before the end counts as other load"
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return f"prctl(PR_SET_CHILD_SUBREAPER) failed: {os.strerror(ctypes.get_errno())}"
    except (OSError, AttributeError) as exc:
        return f"prctl is not available: {exc}"
    if _EXIT_HANDLER_FOR.get(os.getpid()) is None:
        _EXIT_HANDLER_FOR[os.getpid()] = atexit.register(end_descendants, os.getpid())
    return None


_EXIT_HANDLER_FOR: dict[int, object] = {}  # pid -> the exit handler registered in that process


def end_descendants(owner_pid: int, grace_sec: float = 2.0) -> int:
    """At the exit of the subreaper ``owner_pid``: SIGTERM its live descendants, SIGKILL
    those still alive after ``grace_sec``, and reap every child (orphans reparented here
    included); how many were reaped. A forked child that inherited the handler does nothing."""
    if psutil is None or os.getpid() != owner_pid:
        return 0
    try:
        descendants = psutil.Process().children(recursive=True)
    except psutil.Error:
        return 0
    live = [p for p in descendants if _alive(p)]
    for proc in live:
        _signal(proc, signal.SIGTERM)
    _, still = psutil.wait_procs(live, timeout=grace_sec)
    for proc in still:
        _signal(proc, signal.SIGKILL)
    psutil.wait_procs(still, timeout=grace_sec)
    reaped = 0
    while True:  # children psutil did not wait for: zombies already, orphans that came late
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:  # none has ended (one is in uninterruptible sleep, say): leave it
            break
        reaped += 1
    return reaped + len(live)


def _alive(proc) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _signal(proc, sig) -> None:
    try:
        proc.send_signal(sig)
    except psutil.Error:
        pass


@dataclass(frozen=True)
class Snapshot:
    monotonic: float
    busy_sec: float | None
    steal_sec: float | None
    own_cpu_sec: float
    self_cpu_sec: float = 0.0  # this process alone (RUSAGE_SELF)


def _machine_times(cpu_times) -> tuple[float | None, float | None, str | None]:
    """(busy seconds, steal seconds or None, why not) of the whole machine."""
    if cpu_times is None:
        return None, None, "psutil is not installed"
    try:
        times = cpu_times()
    except Exception as exc:  # noqa: BLE001 - any failure: no reading
        return None, None, f"psutil.cpu_times() failed: {exc}"
    fields = getattr(times, "_fields", ())
    busy = sum(getattr(times, f) for f in BUSY_FIELDS if f in fields)
    steal = getattr(times, "steal") if "steal" in fields else None
    return busy, steal, None


def _own_cpu(rusage=resource.getrusage) -> tuple[float, float]:
    """(this process alone, with the descendants it reaped) in CPU seconds."""
    me, children = rusage(resource.RUSAGE_SELF), rusage(resource.RUSAGE_CHILDREN)
    alone = me.ru_utime + me.ru_stime
    return alone, alone + children.ru_utime + children.ru_stime


def _live_descendants_cpu() -> float:
    """CPU seconds of the descendants still running (their own and what they reaped)."""
    if psutil is None:
        return 0.0
    total = 0.0
    try:
        children = psutil.Process().children(recursive=True)
    except psutil.Error:
        return 0.0
    for child in children:
        try:
            t = child.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + getattr(t, "children_user", 0.0) + getattr(t, "children_system", 0.0)
    return total


def reap_orphans() -> int:
    """Reap the zombie children of this process (orphans reparented to it, children nobody
    waited for), so that their CPU time joins RUSAGE_CHILDREN; how many were reaped."""
    if psutil is None:
        return 0
    reaped = 0
    try:
        children = psutil.Process().children()
    except psutil.Error:
        return 0
    for child in children:
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                continue
            if os.waitpid(child.pid, os.WNOHANG)[0]:
                reaped += 1
        except (psutil.Error, ChildProcessError, OSError):
            continue
    return reaped


class DescendantTracker:
    """Each descendant's own CPU time (user + system, without what it reaped), as last
    seen: `sample()` notes the live ones; `total_sec()` is what they spent since `start()`
    (a descendant alive at the start counts from its reading then). A process is known by
    its pid and start time, so that a reused pid is another process. Sampling runs in a
    daemon thread every `every_sec`; it reads /proc and never blocks the measured code for
    long (a few descendants: well under a millisecond)."""

    def __init__(self, every_sec: float, children=None) -> None:
        self.every_sec = every_sec
        self._children = children or (lambda: psutil.Process().children(recursive=True))
        self._baseline: dict[tuple, float] = {}
        self._last: dict[tuple, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _read(self) -> dict[tuple, float]:
        seen = {}
        try:
            children = self._children()
        except Exception:  # noqa: BLE001 - psutil.Error, or this process is going away
            return seen
        for child in children:
            try:
                with child.oneshot():
                    t = child.cpu_times()
                    key = (child.pid, child.create_time())
            except Exception:  # noqa: BLE001 - ended meanwhile
                continue
            seen[key] = t.user + t.system
        return seen

    def sample(self) -> None:
        seen = self._read()
        with self._lock:
            self._last.update(seen)

    def start(self) -> "DescendantTracker":
        self._baseline = self._read()
        self._last = dict(self._baseline)
        if self.every_sec > 0:
            self._thread = threading.Thread(target=self._loop, name="parbench-descendants", daemon=True)
            self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.every_sec):
            self.sample()

    def stop(self) -> float:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()
        return self.total_sec()

    def total_sec(self) -> float:
        with self._lock:
            return sum(max(0.0, cpu - self._baseline.get(key, 0.0)) for key, cpu in self._last.items())


class LoadMeter:
    """Measures the CPU time the machine spent outside the cell between ``start`` and
    ``stop`` (or inside a ``with`` block)::

        with LoadMeter() as meter:
            record = measure()
        record["load"] = meter.reading()
    """

    def __init__(self, cpu_times=None, logical_cores: int | None = None, rusage=resource.getrusage,
                 clock=time.monotonic, sample_sec: float | None = None) -> None:
        self._cpu_times = cpu_times if cpu_times is not None else (psutil.cpu_times if psutil else None)
        self._rusage = rusage
        self._clock = clock
        self.logical_cores = logical_cores or os.cpu_count()
        self.subreaper_reason = become_subreaper()
        self._tracker = DescendantTracker(sample_sec) if sample_sec and psutil is not None else None
        self._tracked_sec: float | None = None
        self._start: Snapshot | None = None
        self._end: Snapshot | None = None
        self._reason: str | None = None

    def _snapshot(self, live: float = 0.0) -> Snapshot:
        busy, steal, reason = _machine_times(self._cpu_times)
        self._reason = self._reason or reason
        alone, with_reaped = _own_cpu(self._rusage)
        return Snapshot(self._clock(), busy, steal, with_reaped + live, alone)

    def start(self) -> "LoadMeter":
        if self._tracker is not None:
            self._tracker.start()
        self._start = self._snapshot(_live_descendants_cpu())
        return self

    def stop(self) -> dict:
        if self._tracker is not None:
            self._tracked_sec = self._tracker.stop()
        reap_orphans()
        self._end = self._snapshot(_live_descendants_cpu())
        return self.reading()

    def __enter__(self) -> "LoadMeter":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def reading(self) -> dict:
        """The cell's load record (seconds and cores; null with `reason` when unreadable)."""
        if self._start is None or self._end is None:
            raise RuntimeError("LoadMeter.reading() before start() and stop()")
        return reading(self._start, self._end, self.logical_cores, self._reason, self.subreaper_reason,
                       self._tracked_sec)


def reading(start: Snapshot, end: Snapshot, logical_cores: int | None, reason: str | None = None,
            subreaper_reason: str | None = None, tracked_sec: float | None = None) -> dict:
    """The load between two snapshots: the machine's busy CPU seconds, the cell's own, the
    difference (`other_cpu_sec`, never below 0) and the same per second of wall time
    (`other_cores`, `steal_cores`). With `tracked_sec` (the descendants' own CPU time as
    sampled), the cell's is the larger of the two counts of its descendants."""
    wall = end.monotonic - start.monotonic
    cell = max(0.0, end.own_cpu_sec - start.own_cpu_sec)
    if tracked_sec is not None:
        cell = max(cell, max(0.0, end.self_cpu_sec - start.self_cpu_sec) + tracked_sec)
    out = {"wall_sec": wall, "cell_cpu_sec": cell, "logical_cores": logical_cores,
           "machine_busy_cpu_sec": None, "steal_cpu_sec": None, "other_cpu_sec": None,
           "other_cores": None, "steal_cores": None, "source": None, "reason": reason,
           "subreaper": subreaper_reason is None, "notes": [subreaper_reason] if subreaper_reason else [],
           "sampled_descendants_cpu_sec": tracked_sec}
    if start.busy_sec is None or end.busy_sec is None or wall <= 0:
        out["reason"] = reason or "no system-wide CPU times on this machine"
        return out
    busy = max(0.0, end.busy_sec - start.busy_sec)
    other = max(0.0, busy - cell)
    if start.steal_sec is not None and end.steal_sec is not None:
        steal = max(0.0, end.steal_sec - start.steal_sec)
        out.update(steal_cpu_sec=steal, steal_cores=steal / wall)
        # Steal is time the hypervisor gave to others, never the cell's work, yet a guest
        # kernel may charge it to the task it took it from: the cell's CPU time then holds
        # the steal it suffered and the difference above falls short of the steal, which
        # the other load includes. It is at least the steal.
        other = max(other, steal)
    out.update(machine_busy_cpu_sec=busy, other_cpu_sec=other, other_cores=other / wall,
               source="/proc/stat" if sys.platform.startswith("linux") else "psutil.cpu_times")
    return out
