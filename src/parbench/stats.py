"""Statistics shared by the studies: percentiles, latency summaries, scaling efficiency.

A percentile is reported only when there are enough samples for it to mean something:
the q-th percentile needs at least 1 / (1 - q/100) samples (2 for p50, 20 for p95, 100
for p99), otherwise it would merely repeat the maximum. Below that it is None (null in
the data), never a made-up number.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

PERCENTILES = (50, 95, 99)


def min_samples_for(q: float) -> int:
    """Fewest samples for which the q-th percentile is not just the maximum."""
    if not 0 < q < 100:
        raise ValueError(f"percentile {q} must lie strictly between 0 and 100")
    return math.ceil(round(1 / (1 - q / 100), 9))


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (linear interpolation between closest ranks), or None when
    there are too few values."""
    if len(values) < min_samples_for(q):
        return None
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)
    lo = math.floor(rank)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo)


def latency_summary_ms(samples_sec: Iterable[float]) -> dict:
    """p50/p95/p99/mean latency in milliseconds of the given samples (seconds)."""
    ms = [s * 1e3 for s in samples_sec]
    out = {f"p{q}_latency_ms": percentile(ms, q) for q in PERCENTILES}
    out["mean_latency_ms"] = sum(ms) / len(ms) if ms else None
    out["latency_samples"] = len(ms)
    return out


def scaling_efficiency(ops_per_sec: float | None, workers: int, ops_per_sec_one: float | None) -> float | None:
    """ops(N) / (N x ops(1)): 1.0 is perfect scaling. None when either side is missing."""
    if ops_per_sec is None or not ops_per_sec_one or workers < 1:
        return None
    return ops_per_sec / (workers * ops_per_sec_one)


def mean_or_none(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def interval_rate_cv(workers_snapshots: list[list[dict]], min_ops_per_interval: float = 10) -> float | None:
    """How steady throughput was inside the analysis window: the coefficient of
    variation (std / mean) of operations per second over the snapshot intervals that lie
    wholly inside the window, pooled over workers. Each worker's snapshots carry
    `timestamp` and `analysis_ops` (the window's count so far). None when there are
    fewer than two such intervals or too few operations per interval (below
    `min_ops_per_interval`) for a rate to mean anything."""
    rates, counts = [], []
    for snaps in workers_snapshots:
        final = snaps[-1]["analysis_ops"] if snaps else 0
        for a, b in zip(snaps, snaps[1:]):
            # inside the window: counting had started at a and had not finished at b
            if a["analysis_ops"] > 0 and b["analysis_ops"] < final and b["timestamp"] > a["timestamp"]:
                done = b["analysis_ops"] - a["analysis_ops"]
                counts.append(done)
                rates.append(done / (b["timestamp"] - a["timestamp"]))
    if len(rates) < 2 or sum(counts) / len(counts) < min_ops_per_interval:
        return None
    mean = sum(rates) / len(rates)
    return (sum((r - mean) ** 2 for r in rates) / len(rates)) ** 0.5 / mean if mean else None
