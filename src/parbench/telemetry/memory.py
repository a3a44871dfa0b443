"""Resident set size of a process (psutil), for per-worker memory telemetry."""

from __future__ import annotations

import os
import sys

try:
    import psutil
except ImportError:
    psutil = None

__all__ = ["rss_bytes", "peak_rss_bytes", "maxrss_to_bytes"]


def rss_bytes(pid: int | None = None) -> int | None:
    """Current RSS of ``pid`` (default: this process) in bytes; None when psutil is
    missing or the process is gone or inaccessible."""
    if psutil is None:
        return None
    try:
        return int(psutil.Process(pid or os.getpid()).memory_info().rss)
    except (psutil.Error, OSError):
        return None


def maxrss_to_bytes(ru_maxrss: int, system: str | None = None) -> int:
    """``getrusage().ru_maxrss`` in bytes: Linux reports KiB, macOS bytes."""
    system = system or sys.platform
    return int(ru_maxrss) if system in ("darwin", "Darwin") else int(ru_maxrss) * 1024


def peak_rss_bytes(children: bool = False) -> int:
    """Peak RSS of this process (or of its waited-for children) in bytes."""
    import resource  # POSIX only; imported here so the module loads everywhere

    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return maxrss_to_bytes(resource.getrusage(who).ru_maxrss)
