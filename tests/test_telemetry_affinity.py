"""Affinity plans and per-thread pinning."""

from __future__ import annotations

import os
import threading

import pytest

from parbench.telemetry.affinity import (
    affinity_available,
    available_cpus,
    pin_current_thread,
    plan_affinity,
)

linux_only = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux only")

P = [0, 1, 2, 3, 4, 5]
E = [6, 7, 8, 9]


def test_performance_first_fills_performance_then_efficiency():
    assert plan_affinity("performance_first", P, E, 4) == [[0], [1], [2], [3]]
    assert plan_affinity("performance_first", P, E, 8) == [[c] for c in range(8)]
    assert plan_affinity("performance_first", P, E, 10) == [[c] for c in range(10)]


def test_performance_first_wraps_around():
    plan = plan_affinity("performance_first", [0, 1], [2], 7)
    assert plan == [[0], [1], [2], [0], [1], [2], [0]]
    assert plan_affinity("performance_first", [], [3], 2) == [[3], [3]]
    assert plan_affinity("performance_first", P, E, 0) == []


def test_none_strategy_means_no_pinning():
    assert plan_affinity("none", P, E, 3) == [[], [], []]
    assert plan_affinity("none", [], [], 2) == [[], []]


def test_bad_strategy_names_allowed_values():
    with pytest.raises(ValueError) as info:
        plan_affinity("round_robin", P, E, 2)
    message = str(info.value)
    assert "'round_robin'" in message
    assert "'performance_first'" in message and "'none'" in message


def test_performance_first_needs_cores():
    with pytest.raises(ValueError, match="performance_cores"):
        plan_affinity("performance_first", [], [], 2)
    with pytest.raises(ValueError, match="n_workers"):
        plan_affinity("none", P, E, -1)


def test_available_cpus_here():
    cpus = available_cpus()
    assert cpus and cpus == sorted(cpus)
    assert all(isinstance(c, int) and c >= 0 for c in cpus)


def run_in_thread(fn):
    out = {}

    def target():
        out["value"] = fn()

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(timeout=10)
    return out["value"]


@linux_only
def test_pin_current_thread_pins_only_that_thread():
    before_main = os.sched_getaffinity(0)
    target = available_cpus()[-1]

    def pin_and_check():
        original = os.sched_getaffinity(0)
        try:
            result = pin_current_thread([target])
            return result, os.sched_getaffinity(0)
        finally:
            os.sched_setaffinity(0, original)

    (ok, reason), inside = run_in_thread(pin_and_check)
    assert ok and reason is None
    assert inside == {target}
    assert os.sched_getaffinity(0) == before_main  # main thread untouched


@linux_only
def test_pin_current_thread_to_missing_cpu_fails_cleanly():
    missing = max(available_cpus()) + 1000

    def attempt():
        original = os.sched_getaffinity(0)
        try:
            return pin_current_thread([missing]), os.sched_getaffinity(0) == original
        finally:
            os.sched_setaffinity(0, original)

    (ok, reason), unchanged = run_in_thread(attempt)
    assert not ok and "sched_setaffinity" in reason
    assert unchanged


def test_pin_empty_list_is_no_pinning():
    ok, reason = pin_current_thread([])
    assert not ok and reason


def test_macos_reports_no_strict_pinning():
    ok, reason = pin_current_thread([0], system="Darwin")
    assert not ok
    assert reason.startswith("macOS does not expose strict per-core pinning;")
    assert affinity_available("Darwin")[0] is False
