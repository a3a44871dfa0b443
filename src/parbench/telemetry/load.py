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

The time the machine was busy outside the cell is the difference; divided by the wall
time it is the number of cores kept busy elsewhere on average (``other_cores``), steal
included. It also holds the pipeline's own small share (Snakemake waiting for the job,
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


def _own_cpu(rusage=resource.getrusage) -> float:
    me, children = rusage(resource.RUSAGE_SELF), rusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


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


class LoadMeter:
    """Measures the CPU time the machine spent outside the cell between ``start`` and
    ``stop`` (or inside a ``with`` block)::

        with LoadMeter() as meter:
            record = measure()
        record["load"] = meter.reading()
    """

    def __init__(self, cpu_times=None, logical_cores: int | None = None, rusage=resource.getrusage,
                 clock=time.monotonic) -> None:
        self._cpu_times = cpu_times if cpu_times is not None else (psutil.cpu_times if psutil else None)
        self._rusage = rusage
        self._clock = clock
        self.logical_cores = logical_cores or os.cpu_count()
        self.subreaper_reason = become_subreaper()
        self._start: Snapshot | None = None
        self._end: Snapshot | None = None
        self._reason: str | None = None

    def _snapshot(self, live: float = 0.0) -> Snapshot:
        busy, steal, reason = _machine_times(self._cpu_times)
        self._reason = self._reason or reason
        return Snapshot(self._clock(), busy, steal, _own_cpu(self._rusage) + live)

    def start(self) -> "LoadMeter":
        self._start = self._snapshot(_live_descendants_cpu())
        return self

    def stop(self) -> dict:
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
        return reading(self._start, self._end, self.logical_cores, self._reason, self.subreaper_reason)


def reading(start: Snapshot, end: Snapshot, logical_cores: int | None, reason: str | None = None,
            subreaper_reason: str | None = None) -> dict:
    """The load between two snapshots: the machine's busy CPU seconds, the cell's own, the
    difference (`other_cpu_sec`, never below 0) and the same per second of wall time
    (`other_cores`, `steal_cores`)."""
    wall = end.monotonic - start.monotonic
    cell = max(0.0, end.own_cpu_sec - start.own_cpu_sec)
    out = {"wall_sec": wall, "cell_cpu_sec": cell, "logical_cores": logical_cores,
           "machine_busy_cpu_sec": None, "steal_cpu_sec": None, "other_cpu_sec": None,
           "other_cores": None, "steal_cores": None, "source": None, "reason": reason,
           "subreaper": subreaper_reason is None, "notes": [subreaper_reason] if subreaper_reason else []}
    if start.busy_sec is None or end.busy_sec is None or wall <= 0:
        out["reason"] = reason or "no system-wide CPU times on this machine"
        return out
    busy = max(0.0, end.busy_sec - start.busy_sec)
    other = max(0.0, busy - cell)
    out.update(machine_busy_cpu_sec=busy, other_cpu_sec=other, other_cores=other / wall,
               source="/proc/stat" if sys.platform.startswith("linux") else "psutil.cpu_times")
    if start.steal_sec is not None and end.steal_sec is not None:
        steal = max(0.0, end.steal_sec - start.steal_sec)
        out.update(steal_cpu_sec=steal, steal_cores=steal / wall)
    return out
