"""Which core each worker runs on, and pinning the calling thread there.

``plan_affinity`` is pure: it maps worker indices to CPU lists from the configured
performance/efficiency core ids. ``pin_current_thread`` applies one entry with
``os.sched_setaffinity(0, ...)``, which on Linux affects only the calling thread (a
spawned worker process pins itself the same way, from its main thread). macOS has no
strict per-core pinning (only QoS and affinity-tag hints), so there it reports
(False, reason) and the run goes on unpinned.

``core_topology`` reads which cores are performance and which efficiency cores, as the
machine reports them (the profiles' ``${performance_cpus:}`` and ``${efficiency_cpus:}``).
"""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Callable, Sequence

__all__ = [
    "STRATEGIES",
    "MACOS_REASON",
    "plan_affinity",
    "pin_current_thread",
    "available_cpus",
    "affinity_available",
    "core_topology",
]

STRATEGIES = ("performance_first", "none")
MACOS_REASON = (
    "macOS does not expose strict per-core pinning; threads are placed by the scheduler"
    " (QoS hints only), so workers run unpinned"
)


def plan_affinity(
    strategy: str,
    performance_cores: Sequence[int],
    efficiency_cores: Sequence[int],
    n_workers: int,
) -> list[list[int]]:
    """One CPU list per worker.

    "performance_first": worker i gets the i-th core of performance_cores followed by
    efficiency_cores, wrapping around when there are more workers than cores.
    "none": every worker gets [] (no pinning). Any other strategy raises ValueError.
    """
    if strategy not in STRATEGIES:
        allowed = ", ".join(repr(s) for s in STRATEGIES)
        raise ValueError(f"unknown cpu_affinity.strategy {strategy!r}; allowed: {allowed}")
    if n_workers < 0:
        raise ValueError(f"n_workers must be >= 0, got {n_workers}")
    if strategy == "none":
        return [[] for _ in range(n_workers)]
    order = [int(c) for c in performance_cores] + [int(c) for c in efficiency_cores]
    if not order and n_workers:
        raise ValueError(
            "cpu_affinity.strategy 'performance_first' needs at least one core in"
            " cpu_affinity.performance_cores or cpu_affinity.efficiency_cores"
        )
    return [[order[i % len(order)]] for i in range(n_workers)]


def available_cpus() -> list[int]:
    """CPUs the calling thread may run on (sched_getaffinity), else 0..cpu_count-1."""
    if hasattr(os, "sched_getaffinity"):
        try:
            return sorted(os.sched_getaffinity(0))
        except OSError:
            pass
    return list(range(os.cpu_count() or 1))


def affinity_available(system: str | None = None) -> tuple[bool, str | None]:
    """(True, None) where per-thread pinning works, else (False, reason)."""
    system = system or platform.system()
    if system == "Darwin":
        return False, MACOS_REASON
    if not hasattr(os, "sched_setaffinity"):
        return False, f"os.sched_setaffinity is not available on {system}; workers run unpinned"
    return True, None


def pin_current_thread(
    cpus: Sequence[int], *, system: str | None = None
) -> tuple[bool, str | None]:
    """Pin the calling thread to ``cpus``; (True, None) on success, else (False, reason).

    An empty list means "no pinning" and returns (False, reason) without touching the
    thread. When the kernel narrows the set (offline CPUs, cpusets) the result is
    (True, note) naming the CPUs actually allowed.
    """
    ok, reason = affinity_available(system)
    if not ok:
        return False, reason
    wanted = {int(c) for c in cpus}
    if not wanted:
        return False, "no CPUs given; thread left unpinned"
    try:
        os.sched_setaffinity(0, wanted)
    except (OSError, ValueError, OverflowError) as exc:
        return False, f"sched_setaffinity({sorted(wanted)}) failed: {exc}"
    actual = os.sched_getaffinity(0)
    if actual != wanted:
        return True, f"kernel restricted the thread to CPUs {sorted(actual)}"
    return True, None


def _sysctl(name: str) -> str | None:
    try:
        proc = subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    value = proc.stdout.strip()
    return value if proc.returncode == 0 and value else None


def core_topology(
    *,
    system: str | None = None,
    root: str | os.PathLike = "/",
    sysctl: Callable[[str], "str | None"] | None = None,
    available: Sequence[int] | None = None,
) -> dict:
    """{"performance": [CPU ids], "efficiency": [CPU ids], "source": how it was read}.

    macOS: the counts ``sysctl hw.perflevel0.logicalcpu`` (the performance cluster) and
    ``hw.perflevel1.logicalcpu`` (the efficiency cluster, Apple silicon only) report,
    numbered performance first (macOS cannot pin a thread to a core, so there the numbers
    only count and order the workers; an Apple M4 reports 4 + 6). Linux: Intel's hybrid
    split (``/sys/devices/cpu_core/cpus``, ``cpu_atom/cpus``) within the CPUs this process
    may run on; elsewhere every available CPU is a performance core. ``system``, ``root``,
    ``sysctl`` (name -> value) and ``available`` inject canned facts for tests."""
    from parbench.telemetry.procfs import parse_cpulist, read_text

    system = system or platform.system()
    cpus = list(available) if available is not None else available_cpus()
    if system == "Darwin":
        read = sysctl or _sysctl

        def count(name: str) -> int | None:
            try:
                return int(read(name))
            except (TypeError, ValueError):
                return None

        perf, eff = count("hw.perflevel0.logicalcpu"), count("hw.perflevel1.logicalcpu")
        if perf:
            return {"performance": list(range(perf)), "efficiency": list(range(perf, perf + (eff or 0))),
                    "source": "sysctl hw.perflevel0/1.logicalcpu"}
        return {"performance": cpus, "efficiency": [], "source": "no hw.perflevel sysctl: every CPU"}
    p_cpus = parse_cpulist(read_text(root, "/sys/devices/cpu_core/cpus"))
    e_cpus = parse_cpulist(read_text(root, "/sys/devices/cpu_atom/cpus"))
    if p_cpus or e_cpus:
        allowed = set(cpus)
        return {"performance": [c for c in p_cpus or [] if c in allowed],
                "efficiency": [c for c in e_cpus or [] if c in allowed],
                "source": "/sys/devices/cpu_core, cpu_atom"}
    return {"performance": cpus, "efficiency": [], "source": "every available CPU"}
