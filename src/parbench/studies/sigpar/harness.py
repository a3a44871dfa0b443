"""The timed loop every sigpar worker runs, and the window arithmetic around it.

Timeline of a worker, in seconds after the start barrier releases all workers together:

    0 ........ warmup ........ run_start ........................... run_end
                                   |<- (d - w)/2 ->|<--- window w --->|<- (d - w)/2 ->|
                                               window_start      window_end

`duration_sec` d is the measured run, `analysis_window_sec` w its middle part. Every
worker keeps calling the operation from 0 to run_end, so the machine is equally loaded
throughout the window; an operation counts for throughput when it *completes* inside
[window_start, window_end). Throughput = operations counted / w (the seed's definition).

The loop does the least possible per operation: two clock reads, the call, one append
of the latency, one comparison against the next event. Everything else (window marks,
CPU-time marks, snapshots, keeping a result for the later correctness check) happens
only when an operation completes past the next event time. Latencies of every operation
are kept (8 bytes each) and the window's slice is sampled down afterwards, which is a
uniform sample without a random draw per operation.
"""

from __future__ import annotations

import random
import time
from array import array
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class Schedule:
    warmup_sec: float
    duration_sec: float
    analysis_window_sec: float
    sample_interval_sec: float

    def __post_init__(self):
        if not (0 < self.analysis_window_sec <= self.duration_sec):
            raise ValueError(f"analysis window {self.analysis_window_sec} s must lie in (0, duration "
                             f"{self.duration_sec} s]")
        if self.warmup_sec < 0 or self.sample_interval_sec <= 0:
            raise ValueError("warmup must be >= 0 and the sample interval > 0")

    @property
    def run_start(self) -> float:
        return self.warmup_sec

    @property
    def window_start(self) -> float:
        return self.warmup_sec + (self.duration_sec - self.analysis_window_sec) / 2

    @property
    def window_end(self) -> float:
        return self.window_start + self.analysis_window_sec

    @property
    def run_end(self) -> float:
        return self.warmup_sec + self.duration_sec


@dataclass
class Snapshot:
    timestamp: float  # wall clock (time.time())
    ops_total: int  # operations completed since the start barrier
    analysis_ops: int  # operations counted in the window so far
    rss_bytes: int | None


@dataclass
class WorkerRun:
    """What one worker measured. Index bounds refer to the sequence of operations."""

    ops_total: int
    window_first: int | None  # index of the first operation completing in the window
    window_stop: int | None  # index one past the last one
    latencies_sec: array  # every operation's latency (empty when not collected)
    cpu_time_window_sec: float | None
    wall_window_sec: float | None
    snapshots: list[Snapshot]
    kept_outputs: list[Any] = field(default_factory=list)
    start_wall: float = 0.0

    @property
    def analysis_ops(self) -> int:
        if self.window_first is None or self.window_stop is None:
            return 0
        return self.window_stop - self.window_first

    @property
    def cpu_utilization(self) -> float | None:
        """CPU time of this worker over the window, divided by the window's wall time."""
        if not self.cpu_time_window_sec or not self.wall_window_sec:
            return None
        return self.cpu_time_window_sec / self.wall_window_sec

    def window_latencies_sec(self) -> list[float]:
        if self.window_first is None or self.window_stop is None or not self.latencies_sec:
            return []
        return self.latencies_sec[self.window_first:self.window_stop].tolist()


def sample_latencies(latencies: list[float], max_samples: int, seed: int) -> list[float]:
    """At most `max_samples` of `latencies`, drawn uniformly without replacement."""
    if len(latencies) <= max_samples:
        return list(latencies)
    return random.Random(seed).sample(latencies, max_samples)


class _Events:
    """State changed only when an operation completes past the next event time."""

    def __init__(self, t0: float, schedule: Schedule, cpu_clock, wall_clock, rss, keep_outputs: int):
        self.window_start = t0 + schedule.window_start
        self.window_end = t0 + schedule.window_end
        self.run_end = t0 + schedule.run_end
        self.interval = schedule.sample_interval_sec
        self.next_sample = t0 + self.interval
        self.cpu_clock, self.wall_clock, self.rss = cpu_clock, wall_clock, rss
        self.window_first = self.window_stop = None
        self.cpu_first = self.cpu_stop = self.wall_first = self.wall_stop = None
        self.snapshots: list[Snapshot] = []
        self.kept: list[Any] = []
        self.keep_outputs = keep_outputs

    def next_time(self) -> float:
        pending = [self.next_sample, self.run_end]
        if self.window_first is None:
            pending.append(self.window_start)
        elif self.window_stop is None:
            pending.append(self.window_end)
        return min(pending)

    def _counted(self, n: int) -> int:
        """Operations counted so far, when n operations have completed."""
        if self.window_first is None:
            return 0
        return (n if self.window_stop is None else self.window_stop) - self.window_first

    def fire(self, now: float, n: int, output) -> float | None:
        """Handle every event due at `now`, when the n-th operation has just completed.
        Returns the next event time, or None when the run is over."""
        if self.window_first is None and now >= self.window_start:
            # This operation completed inside the window: it is the first one counted.
            self.window_first = n - 1
            self.cpu_first, self.wall_first = self.cpu_clock(), now
        if self.window_first is not None and self.window_stop is None and now >= self.window_end:
            # This operation completed after the window: counting stops before it.
            self.window_stop = n - 1
            self.cpu_stop, self.wall_stop = self.cpu_clock(), now
        if now >= self.next_sample or now >= self.run_end:
            self.snapshots.append(Snapshot(self.wall_clock(), n, self._counted(n), self.rss()))
            if len(self.kept) < self.keep_outputs:
                self.kept.append(output)
            while self.next_sample <= now:
                self.next_sample += self.interval
        if now >= self.run_end:
            return None
        return self.next_time()


def run_worker(op: Callable[[], Any], schedule: Schedule, *,
               collect_latencies: bool = True,
               rss: Callable[[], int | None] = lambda: None,
               keep_outputs: int = 64,
               clock: Callable[[], float] = time.perf_counter,
               cpu_clock: Callable[[], float] = time.thread_time,
               wall_clock: Callable[[], float] = time.time) -> WorkerRun:
    """Call `op()` from now until `schedule.run_end` seconds from now; see module doc.

    `op` is a zero-argument callable (the library call with its arguments bound). Up to
    `keep_outputs` of its results, one per snapshot, are kept for the correctness check
    that runs after the loop.
    """
    start_wall = wall_clock()
    t0 = clock()
    events = _Events(t0, schedule, cpu_clock, wall_clock, rss, keep_outputs)
    next_event = events.next_time()
    latencies = array("d")
    n = 0
    if collect_latencies:
        append = latencies.append
        while True:
            a = clock()
            out = op()
            b = clock()
            append(b - a)
            n += 1
            if b >= next_event:
                next_event = events.fire(b, n, out)
                if next_event is None:
                    break
    else:
        while True:
            out = op()
            b = clock()
            n += 1
            if b >= next_event:
                next_event = events.fire(b, n, out)
                if next_event is None:
                    break
    return WorkerRun(
        ops_total=n,
        window_first=events.window_first,
        window_stop=events.window_stop,
        latencies_sec=latencies,
        cpu_time_window_sec=None if events.cpu_stop is None else events.cpu_stop - events.cpu_first,
        wall_window_sec=None if events.wall_stop is None else events.wall_stop - events.wall_first,
        snapshots=events.snapshots,
        kept_outputs=events.kept,
        start_wall=start_wall,
    )
