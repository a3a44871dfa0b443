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
