"""Statistics shared by the studies: percentiles, latency summaries, scaling efficiency,
the median, bounds of a ratio, and percentile-bootstrap intervals of the median of
repetitions and of ratios of medians.

A percentile is reported only when there are enough samples for it to mean something:
the q-th percentile needs at least 1 / (1 - q/100) samples (2 for p50, 20 for p95, 100
for p99), otherwise it would merely repeat the maximum. Below that it is None (null in
the data), never a made-up number.
"""

from __future__ import annotations

import math
import zlib
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


def median(values: Sequence[float]) -> float | None:
    """The median (the mean of the two middle values for an even count), None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def ratio_interval(numerator: tuple[float | None, float | None],
                   denominator: tuple[float | None, float | None]) -> tuple[float | None, float | None]:
    """Bounds of a ratio of two positive quantities from their intervals: (num_low /
    den_high, num_high / den_low). Conservative: when each interval covers its quantity
    with probability c, these bounds cover the ratio with probability at least 2c - 1.
    (None, None) when a bound is missing or not positive."""
    (nl, nh), (dl, dh) = numerator, denominator
    if None in (nl, nh, dl, dh) or min(nl, nh, dl, dh) <= 0:
        return None, None
    return nl / dh, nh / dl


# --- repetitions: the percentile bootstrap --------------------------------------------------

BOOTSTRAP_RESAMPLES = 2000


def _bootstrap_medians(values: Sequence[float], resamples: int, rng) -> "list[float]":
    import numpy as np

    data = np.asarray(values, dtype=float)
    picks = rng.integers(0, len(data), size=(resamples, len(data)))
    return np.median(data[picks], axis=1)


def _interval(samples, confidence: float) -> tuple[float, float]:
    import numpy as np

    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(samples, [tail, 100 - tail])
    return float(lo), float(hi)


def bootstrap_median_ci(values: Sequence[float], confidence: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES,
                        seed: int = 0) -> tuple[float | None, float | None]:
    """The percentile-bootstrap confidence interval of the median of repetitions:
    `resamples` resamples with replacement, the (1-c)/2 and (1+c)/2 percentiles of their
    medians. Seeded, so that the same data give the same interval. With a handful of
    repetitions the interval cannot be wider than the values' range and covers less
    than asked: it says how far the repetitions disagree, no more. Fewer than 2 values:
    (None, None), as one repetition has no interval."""
    import numpy as np

    if not 0 < confidence < 1:
        raise ValueError(f"confidence {confidence} must lie strictly between 0 and 1")
    clean = [float(v) for v in values if v is not None and not math.isnan(v)]
    if len(clean) < 2:
        return None, None
    return _interval(_bootstrap_medians(clean, resamples, np.random.default_rng(seed)), confidence)


def bootstrap_ratio_ci(numerator: Sequence[float], denominator: Sequence[float], scale: float = 1.0,
                       confidence: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES,
                       seed: int = 0) -> tuple[float | None, float | None]:
    """The percentile-bootstrap interval of median(numerator) / (scale x median(denominator)),
    the two groups of repetitions resampled independently (e.g. scaling efficiency:
    ops(N) over N x ops(1), or a speedup). (None, None) unless both groups have at least
    2 values and every resampled denominator is positive."""
    import numpy as np

    num = [float(v) for v in numerator if v is not None and not math.isnan(v)]
    den = [float(v) for v in denominator if v is not None and not math.isnan(v)]
    if len(num) < 2 or len(den) < 2:
        return None, None
    rng = np.random.default_rng(seed)
    top, bottom = _bootstrap_medians(num, resamples, rng), _bootstrap_medians(den, resamples, rng)
    if (bottom <= 0).any():
        return None, None
    return _interval(top / (scale * bottom), confidence)


def bootstrap_paired_ratio_ci(numerator: Sequence[float], denominator: Sequence[float],
                              confidence: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES,
                              seed: int = 0) -> tuple[float | None, float | None]:
    """The percentile-bootstrap interval of median(numerator) / median(denominator) where
    the two were measured in pairs (`numerator[i]` and `denominator[i]` in one round, one
    after the other): a resample draws whole pairs, so what a round shares (the machine's
    state then) stays shared, which two independent resamples would break. Pairs with a
    missing side are left out; (None, None) with fewer than 2 pairs or a resampled
    denominator that is not positive."""
    import numpy as np

    if len(numerator) != len(denominator):
        raise ValueError(f"{len(numerator)} numerators against {len(denominator)} denominators: not pairs")
    pairs = [(float(a), float(b)) for a, b in zip(numerator, denominator)
             if a is not None and b is not None and not math.isnan(a) and not math.isnan(b)]
    if len(pairs) < 2:
        return None, None
    data = np.asarray(pairs)
    picks = np.random.default_rng(seed).integers(0, len(data), size=(resamples, len(data)))
    top, bottom = np.median(data[picks, 0], axis=1), np.median(data[picks, 1], axis=1)
    if (bottom <= 0).any():
        return None, None
    return _interval(top / bottom, confidence)


def median_ratio(numerator: Sequence[float] | None, denominator: Sequence[float], scale: float = 1.0,
                 confidence: float = 0.95, key: tuple = ()) -> tuple[float | None, float | None, float | None]:
    """median(numerator) / (scale x median(denominator)) and its bootstrap interval
    (`bootstrap_ratio_ci`, seeded by `key`: the point's name, `bootstrap_seed`); (None,
    None, None) when either group is empty."""
    if not numerator or not denominator:
        return None, None, None
    value = median(numerator) / (scale * median(denominator))
    lo, hi = bootstrap_ratio_ci(numerator, denominator, scale=scale, confidence=confidence, seed=bootstrap_seed(*key))
    return value, lo, hi


def distinguishable(a: tuple[float | None, float | None], b: tuple[float | None, float | None]) -> bool:
    """Whether two intervals (low, high) are disjoint, i.e. the two quantities can be told
    apart on this machine. Overlapping intervals, or a missing interval (one repetition),
    are not distinguishable."""
    (al, ah), (bl, bh) = a, b
    if None in (al, ah, bl, bh) or any(isinstance(x, float) and math.isnan(x) for x in (al, ah, bl, bh)):
        return False
    return ah < bl or bh < al


def bootstrap_seed(*key) -> int:
    """A bootstrap seed of its own for every cell (or point) named by `key`, the same in
    every aggregation: a table made again from the same records has the same intervals."""
    return zlib.crc32(" ".join(map(str, key)).encode())
