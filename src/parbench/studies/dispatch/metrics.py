"""The seed's metrics from per-task observations: throughput, completion time, latency
(average, min, max, p95, p99), success rate, and weak-scaling efficiency.

- completion time of a run: from the first submission to the last result the client
  saw; throughput = tasks / completion time;
- latency of a task: from its submission to the moment the client saw its result;
- percentiles by linear interpolation between order statistics (numpy's default;
  `parbench.stats.percentile`, q from 0 to 100); p95 / p99 need at least 20 / 100
  tasks and are null below that, like sigpar's;
- success rate: tasks that COMPLETED with the expected value / tasks submitted;
- weak-scaling efficiency at N workers: completion time at 1 worker / completion time
  at N (the same tasks per worker: ideally 1).
"""

from __future__ import annotations


from parbench.stats import percentile  # q in 0..100, as everywhere in parbench


def latency_summary(latencies_ms: list[float]) -> dict:
    if not latencies_ms:
        return {"avg_latency_ms": None, "min_latency_ms": None, "max_latency_ms": None,
                "p50_latency_ms": None, "p95_latency_ms": None, "p99_latency_ms": None}
    return {"avg_latency_ms": sum(latencies_ms) / len(latencies_ms), "min_latency_ms": min(latencies_ms),
            "max_latency_ms": max(latencies_ms), "p50_latency_ms": percentile(latencies_ms, 50),
            "p95_latency_ms": percentile(latencies_ms, 95), "p99_latency_ms": percentile(latencies_ms, 99)}


def run_summary(submitted: list[float], seen: list[float | None], ok: list[bool]) -> dict:
    """A run's metrics from each task's submission time, the time its result was seen
    (None: never) and whether it succeeded (COMPLETED with the right value)."""
    n = len(submitted)
    seen_times = [s for s in seen if s is not None]
    start = min(submitted) if submitted else None
    end = max(seen_times) if seen_times else None
    completion = (end - start) if (start is not None and end is not None and len(seen_times) == n) else None
    latencies = [1000 * (s - t) for t, s, good in zip(submitted, seen, ok) if s is not None and good]
    succeeded = sum(1 for good in ok if good)
    return {"tasks": n, "succeeded": succeeded, "success_rate": succeeded / n if n else None,
            "completion_time_sec": completion,
            "throughput_tasks_per_sec": n / completion if completion else None,
            **latency_summary(latencies)}


def efficiency(one_worker_sec: float | None, n_workers_sec: float | None) -> float | None:
    """Weak-scaling efficiency: T(1) / T(N)."""
    if not one_worker_sec or not n_workers_sec:
        return None
    return one_worker_sec / n_workers_sec
