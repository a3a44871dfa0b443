"""The seed's three workloads, and the check of each result.

- `noop`: returns at once (what the platform itself costs);
- `cpu`: the seed's quadratic loop, `sum(i * i for i in range(n))` written as a loop of
  `n` = 1000 iterations; its value is checked against (n - 1) n (2n - 1) / 6;
- `io`: sleeps 100 ms (what concurrency hides), returns the time it slept.

The functions travel by value (cloudpickle registers this module "by value"), as a
user's functions would: a worker runs the bytes it is sent, not its own copy.
"""

from __future__ import annotations

import time

WORKLOADS = ("noop", "cpu", "io")


def noop():
    return None


def cpu(n: int = 1000) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def io(seconds: float = 0.1) -> float:
    time.sleep(seconds)
    return seconds


FUNCTIONS = {"noop": noop, "cpu": cpu, "io": io}


def arguments(workload: str, params: dict) -> tuple[tuple, dict]:
    """The (args, kwargs) of one task of `workload`."""
    if workload == "cpu":
        return (params["cpu_iterations"],), {}
    if workload == "io":
        return (params["io_sleep_sec"],), {}
    return (), {}


def expected(workload: str, params: dict):
    if workload == "cpu":
        n = params["cpu_iterations"]
        return (n - 1) * n * (2 * n - 1) // 6
    if workload == "io":
        return params["io_sleep_sec"]
    return None


def check(workload: str, params: dict, value) -> bool:
    want = expected(workload, params)
    if workload == "noop":
        return value is None
    return type(value) is type(want) and value == want


def by_value() -> None:
    """Make cloudpickle carry this module's functions by value."""
    import sys

    import cloudpickle

    try:
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
    except ValueError:
        pass  # already registered
