"""The window and throughput arithmetic of the sigpar worker loop, on a fake clock."""

import pytest

from parbench.studies.sigpar.harness import Schedule, run_worker, sample_latencies


class FakeClock:
    """A clock that advances only when an operation runs: each op takes `cost` seconds."""

    def __init__(self, cost):
        self.now = 100.0
        self.cost = cost

    def __call__(self):
        return self.now

    def op(self):
        self.now += self.cost
        return round(self.now, 9)


def run(cost, warmup=1.0, duration=10.0, window=6.0, interval=0.5, **kw):
    clock = FakeClock(cost)
    schedule = Schedule(warmup, duration, window, interval)
    result = run_worker(clock.op, schedule, clock=clock, cpu_clock=clock, wall_clock=clock, **kw)
    return schedule, result


def test_schedule_puts_the_window_in_the_middle_of_the_run():
    s = Schedule(warmup_sec=1, duration_sec=12, analysis_window_sec=10, sample_interval_sec=0.25)
    assert (s.run_start, s.window_start, s.window_end, s.run_end) == (1, 2, 12, 13)


@pytest.mark.parametrize("window, duration", [(0, 5), (6, 5), (-1, 5)])
def test_schedule_refuses_a_window_outside_the_run(window, duration):
    with pytest.raises(ValueError, match="window"):
        Schedule(0, duration, window, 0.25)


def test_counts_operations_completing_inside_the_window():
    # ops of 0.25 s complete at 0.25, 0.5, ...; window [1 + 2, 1 + 8) = [3, 9)
    schedule, r = run(cost=0.25)
    assert r.analysis_ops == 24  # completions at 3.0, 3.25, ..., 8.75
    assert r.analysis_ops / schedule.analysis_window_sec == pytest.approx(4.0)  # ops/s = 1 / cost
    assert r.ops_total == 44  # the loop stops at the first completion >= run_end (11.0)
    assert len(r.window_latencies_sec()) == 24
    assert all(lat == pytest.approx(0.25) for lat in r.window_latencies_sec())


def test_operation_straddling_the_window_start_counts_by_completion():
    # ops of 0.7 s complete at 0.7, 1.4, 2.1, 2.8, 3.5, ...: 3.5 is the first inside [3, 9)
    _, r = run(cost=0.7)
    first = r.window_first
    assert (first + 1) * 0.7 == pytest.approx(3.5)
    # last one inside: 8.4; next 9.1 is outside
    assert (r.window_stop) * 0.7 == pytest.approx(8.4)
    assert r.analysis_ops == 8  # 3.5, 4.2, ..., 8.4


def test_an_operation_longer_than_the_window_counts_nothing():
    _, r = run(cost=7.0)  # completes at 7 (inside) then 14 (after the end)
    assert r.analysis_ops == 1
    _, r = run(cost=9.5)  # completes at 9.5 (after the window) -> nothing counted
    assert r.analysis_ops == 0
    assert r.ops_total == 2


def test_cpu_utilisation_is_cpu_time_over_window_wall_time():
    _, r = run(cost=0.25)
    # the fake CPU clock equals the wall clock: a saturated worker
    assert r.cpu_utilization == pytest.approx(1.0)


def test_snapshots_are_taken_every_interval_and_at_the_end():
    _, r = run(cost=0.25, interval=1.0, rss=lambda: 4096)
    assert [s.ops_total for s in r.snapshots] == [4 * k for k in range(1, 12)]
    assert r.snapshots[-1].analysis_ops == r.analysis_ops
    assert r.snapshots[0].analysis_ops == 0
    assert all(s.rss_bytes == 4096 for s in r.snapshots)
    assert len(r.kept_outputs) == len(r.snapshots)


def test_without_latencies_counts_are_the_same():
    _, with_lat = run(cost=0.3)
    _, without = run(cost=0.3, collect_latencies=False)
    assert without.analysis_ops == with_lat.analysis_ops
    assert without.window_latencies_sec() == []


def test_latency_sampling_is_bounded_and_drawn_from_the_input():
    data = [float(i) for i in range(5000)]
    sample = sample_latencies(data, 1024, seed=7)
    assert len(sample) == 1024 and len(set(sample)) == 1024 and set(sample) <= set(data)
    assert sample_latencies(data[:10], 1024, seed=7) == data[:10]
