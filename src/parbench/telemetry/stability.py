"""How steady this machine's CPU is: a fixed single-thread loop, timed in short slices.

On a shared or virtualised host the same work can run at quite different speeds from
one second to the next (other tenants, host frequency scaling). The spread measured
here says how large a difference between two cells must be before it means anything.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

CHUNK = 2000  # loop iterations between clock reads


def _chunk() -> int:
    x = 0
    for i in range(CHUNK):
        x ^= i
    return x


def cpu_stability(seconds: float = 3.0, slice_sec: float = 0.1,
                  clock: Callable[[], float] = time.perf_counter, work: Callable[[], object] = _chunk) -> dict:
    """Run `work` back to back for `seconds`; return how many chunks each `slice_sec`
    slice completed, summarised: median rate (chunks/s), the slowest and fastest slice
    as fractions of the median, and the coefficient of variation."""
    rates = []
    end = clock() + seconds
    while clock() < end:
        n, start = 0, clock()
        while clock() - start < slice_sec:
            work()
            n += 1
        rates.append(n / (clock() - start))
    median = statistics.median(rates)
    mean = statistics.fmean(rates)
    return {"seconds": seconds, "slice_sec": slice_sec, "slices": len(rates),
            "median_chunks_per_sec": median,
            "slowest_fraction_of_median": min(rates) / median,
            "fastest_fraction_of_median": max(rates) / median,
            "cv": statistics.pstdev(rates) / mean if mean else None}
