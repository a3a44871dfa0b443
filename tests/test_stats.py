import pytest

from parbench import stats


def test_minimum_samples_per_percentile():
    assert [stats.min_samples_for(q) for q in (50, 95, 99)] == [2, 20, 100]


def test_percentile_interpolates_between_ranks():
    values = list(range(1, 101))  # 1..100
    assert stats.percentile(values, 50) == pytest.approx(50.5)
    assert stats.percentile(values, 99) == pytest.approx(99.01)
    assert stats.percentile(list(reversed(values)), 95) == pytest.approx(95.05)


def test_too_few_samples_give_none_not_a_number():
    assert stats.percentile([1.0] * 99, 99) is None
    assert stats.percentile([1.0] * 19, 95) is None
    assert stats.percentile([3.0], 50) is None
    summary = stats.latency_summary_ms([0.002] * 30)
    assert summary["p50_latency_ms"] == pytest.approx(2.0)
    assert summary["p95_latency_ms"] == pytest.approx(2.0)
    assert summary["p99_latency_ms"] is None
    assert summary["mean_latency_ms"] == pytest.approx(2.0)
    assert summary["latency_samples"] == 30


def test_empty_latencies():
    assert stats.latency_summary_ms([]) == {"p50_latency_ms": None, "p95_latency_ms": None,
                                           "p99_latency_ms": None, "mean_latency_ms": None,
                                           "latency_samples": 0}


def test_scaling_efficiency_matches_the_seed_definition():
    # seed example: 10 workers, 1480 ops/s, 149.8 ops/s at one worker
    assert stats.scaling_efficiency(1480.0, 10, 149.8) == pytest.approx(0.988, abs=1e-3)
    assert stats.scaling_efficiency(100.0, 1, 100.0) == 1.0
    assert stats.scaling_efficiency(None, 2, 100.0) is None
    assert stats.scaling_efficiency(100.0, 2, 0.0) is None


@pytest.mark.parametrize("q", [0, 100, -5, 150])
def test_percentile_range_is_checked(q):
    with pytest.raises(ValueError):
        stats.min_samples_for(q)


def snaps(times_and_counts):
    return [{"timestamp": t, "analysis_ops": c} for t, c in times_and_counts]


def test_interval_rate_cv_uses_intervals_wholly_inside_the_window():
    # counting starts after t=1 and ends before t=5; inside: 100 ops/s then 300 ops/s
    worker = snaps([(0, 0), (1, 10), (2, 110), (3, 410), (4, 510), (5, 600)])
    cv = stats.interval_rate_cv([worker])
    rates = [100, 300, 100]  # intervals 1-2, 2-3, 3-4 (4-5 reaches the final count)
    mean = sum(rates) / 3
    expected = (sum((r - mean) ** 2 for r in rates) / 3) ** 0.5 / mean
    assert cv == pytest.approx(expected)


def test_interval_rate_cv_is_zero_for_a_steady_rate_and_none_without_data():
    steady = snaps([(0, 0), (1, 50), (2, 150), (3, 250), (4, 350), (5, 400)])
    assert stats.interval_rate_cv([steady, steady]) == pytest.approx(0.0)
    assert stats.interval_rate_cv([snaps([(0, 0), (1, 5)])]) is None
    slow = snaps([(0, 0), (1, 2), (2, 4), (3, 6), (4, 8)])  # 2 ops per interval: too few
    assert stats.interval_rate_cv([slow]) is None


def test_median_of_odd_even_and_empty():
    assert stats.median([3.0, 1.0, 2.0]) == 2.0
    assert stats.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert stats.median([]) is None


def test_ratio_interval_takes_the_extreme_quotients():
    assert stats.ratio_interval((8.0, 10.0), (4.0, 5.0)) == (1.6, 2.5)
    assert stats.ratio_interval((None, 10.0), (4.0, 5.0)) == (None, None)
    assert stats.ratio_interval((1.0, 2.0), (0.0, 5.0)) == (None, None)


# ------------------------------------------------------------ bootstrap of repetitions

def test_bootstrap_median_ci_is_seeded_and_inside_the_values_range():
    values = [100.0, 104.0, 97.0, 101.0, 99.0]
    lo, hi = stats.bootstrap_median_ci(values)
    assert min(values) <= lo <= stats.median(values) <= hi <= max(values)
    assert stats.bootstrap_median_ci(values) == (lo, hi)  # same data, same interval
    assert stats.bootstrap_median_ci([5.0]) == (None, None)  # one repetition has no interval
    assert stats.bootstrap_median_ci([1.0, float("nan")]) == (None, None)
    with pytest.raises(ValueError):
        stats.bootstrap_median_ci(values, confidence=1.0)


def test_bootstrap_median_ci_covers_the_median_about_as_often_as_it_says():
    import numpy as np

    rng = np.random.default_rng(7)
    hits = 0
    for trial in range(300):
        lo, hi = stats.bootstrap_median_ci(rng.normal(10, 1, size=25).tolist(), seed=trial, resamples=500)
        hits += lo <= 10 <= hi
    # the percentile bootstrap of a median runs a little below nominal with 25 values
    assert 0.88 <= hits / 300 <= 0.99


def test_bootstrap_ratio_ci_brackets_the_ratio_of_medians():
    at_two = [190.0, 180.0, 185.0, 178.0]
    at_one = [100.0, 98.0, 103.0, 101.0]
    lo, hi = stats.bootstrap_ratio_ci(at_two, at_one, scale=2)
    point = stats.median(at_two) / (2 * stats.median(at_one))
    assert lo <= point <= hi and hi - lo < 0.1
    assert stats.bootstrap_ratio_ci([1.0], at_one) == (None, None)
    assert stats.bootstrap_ratio_ci(at_two, [0.0, 0.0]) == (None, None)


def test_median_ratio_is_the_ratio_of_medians_with_the_seeded_interval():
    base, mine = [4.0, 4.2, 3.9, 4.1], [1.0, 1.1, 0.9, 1.05]
    value, lo, hi = stats.median_ratio(base, mine, 2, 0.9, ("speedup", "quicksort", 2))
    assert value == stats.median(base) / (2 * stats.median(mine))
    assert (lo, hi) == stats.bootstrap_ratio_ci(base, mine, scale=2, confidence=0.9,
                                               seed=stats.bootstrap_seed("speedup", "quicksort", 2))
    assert lo <= value <= hi
    assert stats.median_ratio([], mine) == (None, None, None)
    assert stats.median_ratio(None, mine) == (None, None, None)
    assert stats.median_ratio([2.0], [1.0])[0] == 2.0  # one repetition each: a ratio, no interval
    assert stats.median_ratio([2.0], [1.0])[1:] == (None, None)


def test_distinguishable_only_when_intervals_are_disjoint():
    assert stats.distinguishable((1.0, 2.0), (2.5, 3.0))
    assert stats.distinguishable((2.5, 3.0), (1.0, 2.0))
    assert not stats.distinguishable((1.0, 2.6), (2.5, 3.0))
    assert not stats.distinguishable((None, None), (2.5, 3.0))


def test_a_paired_ratio_resamples_whole_pairs():
    # each round measured both sides; the second side tracks the first (a slow round is
    # slow for both), so the ratio holds steady where the sides alone do not
    first = [1.0, 2.0, 3.0, 4.0, 5.0]
    second = [2.0 * v for v in first]
    lo, hi = stats.bootstrap_paired_ratio_ci(second, first)
    assert lo == pytest.approx(2.0) and hi == pytest.approx(2.0)
    # resampled independently, the same rounds give a wide interval
    lo, hi = stats.bootstrap_ratio_ci(second, first)
    assert lo < 1.5 and hi > 3.0
    # a pair with a missing side is left out; too few pairs, or unequal lengths, refused
    assert stats.bootstrap_paired_ratio_ci([2.0, None, 4.0], [1.0, 1.0, 2.0]) == pytest.approx((2.0, 2.0))
    assert stats.bootstrap_paired_ratio_ci([2.0, None], [1.0, 1.0]) == (None, None)
    assert stats.bootstrap_paired_ratio_ci([2.0, 3.0], [0.0, 1.0]) == (None, None)
    with pytest.raises(ValueError, match="not pairs"):
        stats.bootstrap_paired_ratio_ci([1.0, 2.0], [1.0])
