"""CPU sampler, mean_avg and RSS helpers."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

from parbench.telemetry.cpu import CpuSampler, cpu_sampling_available, mean_avg
from parbench.telemetry.memory import maxrss_to_bytes, peak_rss_bytes, rss_bytes


def test_cpu_sampler_collects_percpu_samples():
    with CpuSampler(0.1) as sampler:
        time.sleep(0.6)
    samples = sampler.samples
    assert samples, "expected at least one sample in 0.6 s"
    assert sampler.error is None
    ncpu = psutil.cpu_count()
    for sample in samples:
        assert set(sample) == {"timestamp", "percpu", "avg"}
        assert len(sample["percpu"]) == ncpu
        assert all(0.0 <= v <= 100.0 for v in sample["percpu"])
        assert sample["avg"] == pytest.approx(sum(sample["percpu"]) / ncpu)
    stamps = [s["timestamp"] for s in samples]
    assert stamps == sorted(stamps)


def test_cpu_sampler_stop_returns_samples_and_is_idempotent():
    sampler = CpuSampler(0.05).start()
    time.sleep(0.2)
    first = sampler.stop()
    assert first == sampler.stop()
    with pytest.raises(RuntimeError):
        sampler.start()


def test_cpu_sampler_rejects_bad_interval():
    with pytest.raises(ValueError, match="interval_sec"):
        CpuSampler(0)


def test_cpu_sampling_available_here():
    ok, reason = cpu_sampling_available()
    assert ok and reason is None


def test_mean_avg_window():
    samples = [
        {"timestamp": 10.0, "percpu": [10.0, 30.0], "avg": 20.0},
        {"timestamp": 11.0, "percpu": [50.0, 50.0], "avg": 50.0},
        {"timestamp": 12.0, "percpu": [90.0, 70.0], "avg": 80.0},
    ]
    assert mean_avg(samples) == pytest.approx(50.0)
    assert mean_avg(samples, 11.0, 12.0) == pytest.approx(65.0)  # bounds inclusive
    assert mean_avg(samples, t_start=11.5) == pytest.approx(80.0)
    assert mean_avg(samples, t_end=10.0) == pytest.approx(20.0)
    assert mean_avg(samples, 20.0, 30.0) is None
    assert mean_avg([]) is None


def test_rss_bytes():
    assert rss_bytes() > 0
    assert rss_bytes(os.getpid()) > 0
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert rss_bytes(child.pid) is None  # reaped process


def test_maxrss_units():
    assert maxrss_to_bytes(1000, "Linux") == 1024000  # KiB on Linux
    assert maxrss_to_bytes(1000, "darwin") == 1000  # bytes on macOS
    assert peak_rss_bytes() > 0
