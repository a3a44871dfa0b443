"""Per-core CPU utilisation sampled by a background thread.

``CpuSampler`` calls ``psutil.cpu_percent(percpu=True, interval=None)`` every
``interval_sec``. The first call (in ``start``) only primes psutil's counters; each
later sample is the utilisation of every logical CPU over the interval that *ends* at
its ``timestamp`` (``time.time()``). psutil keeps that baseline per process, so another
``cpu_percent(percpu=True)`` caller in the same process shortens the interval a sample
covers; it does not corrupt it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

try:
    import psutil
except ImportError:  # telemetry degrades to no samples
    psutil = None

__all__ = ["CpuSampler", "mean_avg", "cpu_sampling_available"]

Sample = dict[str, Any]  # {"timestamp": float, "percpu": list[float], "avg": float}


def cpu_sampling_available() -> tuple[bool, str | None]:
    """(True, None) when psutil can report per-CPU utilisation, else (False, reason)."""
    if psutil is None:
        return False, "psutil is not installed; per-core CPU samples are empty"
    try:
        psutil.cpu_percent(percpu=True, interval=None)
    except Exception as exc:  # noqa: BLE001 - any failure means "unavailable"
        return False, f"psutil.cpu_percent(percpu=True) failed: {exc}"
    return True, None


class CpuSampler:
    """Samples per-core CPU percent on a daemon thread.

    Usage::

        with CpuSampler(0.25) as sampler:
            run_workload()
        samples = sampler.samples

    ``stop()`` returns the samples taken so far (also kept in ``samples``); ``error``
    holds the reason when sampling stopped early or psutil is missing.
    """

    def __init__(self, interval_sec: float = 0.25) -> None:
        if interval_sec <= 0:
            raise ValueError(f"interval_sec must be > 0, got {interval_sec!r}")
        self.interval_sec = float(interval_sec)
        self.samples: list[Sample] = []
        self.error: str | None = None
        self._stop_event = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> "CpuSampler":
        if self._thread is not None:
            raise RuntimeError("CpuSampler already started")
        if psutil is None:
            self.error = "psutil is not installed"
            return self
        psutil.cpu_percent(percpu=True, interval=None)  # prime the baseline
        self._thread = threading.Thread(
            target=self._run, name="parbench-cpu-sampler", daemon=True
        )
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop_event.wait(self.interval_sec):
            try:
                percpu = [float(v) for v in psutil.cpu_percent(percpu=True, interval=None)]
            except Exception as exc:  # noqa: BLE001 - record and stop sampling
                self.error = f"psutil.cpu_percent failed: {exc}"
                return
            sample = {
                "timestamp": time.time(),
                "percpu": percpu,
                "avg": sum(percpu) / len(percpu) if percpu else 0.0,
            }
            with self._lock:
                self.samples.append(sample)

    def stop(self) -> list[Sample]:
        """Stop the thread (waits at most one interval) and return all samples."""
        self._stop_event.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval_sec + 5.0)
        with self._lock:
            return list(self.samples)

    def __enter__(self) -> "CpuSampler":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def mean_avg(
    samples: Iterable[Sample],
    t_start: float | None = None,
    t_end: float | None = None,
) -> float | None:
    """Mean of ``avg`` over samples whose ``timestamp`` lies in [t_start, t_end]
    (open-ended when a bound is None); None when no sample qualifies."""
    values = [
        s["avg"]
        for s in samples
        if (t_start is None or s["timestamp"] >= t_start)
        and (t_end is None or s["timestamp"] <= t_end)
    ]
    if not values:
        return None
    return sum(values) / len(values)
