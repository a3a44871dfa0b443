"""The CPU stability check, on a fake clock."""

import pytest

from parbench.telemetry.stability import cpu_stability


class Clock:
    def __init__(self, costs):
        self.now, self.costs, self.i = 0.0, costs, 0

    def __call__(self):
        return self.now

    def work(self):
        self.now += self.costs[min(self.i, len(self.costs) - 1)]
        self.i += 1


def test_a_steady_machine_has_no_spread():
    clock = Clock([0.01])
    out = cpu_stability(seconds=1.0, slice_sec=0.1, clock=clock, work=clock.work)
    assert out["slices"] == 10
    assert out["median_chunks_per_sec"] == pytest.approx(100)
    assert out["cv"] == pytest.approx(0, abs=1e-9)
    assert out["slowest_fraction_of_median"] == pytest.approx(1.0)


def test_a_slow_phase_shows_up_as_spread():
    clock = Clock([0.01] * 80 + [0.02] * 1000)  # half the speed for the last 0.2 s
    out = cpu_stability(seconds=1.0, slice_sec=0.1, clock=clock, work=clock.work)
    assert out["slowest_fraction_of_median"] < 0.6 and out["cv"] > 0.2


def test_it_runs_here():
    out = cpu_stability(seconds=0.3, slice_sec=0.05)
    assert out["slices"] >= 3 and out["median_chunks_per_sec"] > 0
