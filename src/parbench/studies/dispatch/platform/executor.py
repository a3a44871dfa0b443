"""What a pool process runs: a chunk of tasks, one after another, each timed around the
call of its function and checked.

A function raising is the task's failure (status FAILED, the error and its traceback
as the error text), never the process's; a result that cannot be serialized or is over
the size limit fails the task too. Functions are deserialized once per process and
kept by id (a function's body never changes once registered).
"""

from __future__ import annotations

import os
import signal
import sys
import time
import traceback

from parbench.studies.dispatch.platform import serialization

COMPLETED, FAILED = "COMPLETED", "FAILED"

_functions: dict[str, object] = {}
_max_result_bytes = serialization.DEFAULT_MAX_PAYLOAD_BYTES


def init_process(max_result_bytes: int) -> None:
    """Pool initializer: the result limit, and on Linux, die with the worker that
    started the pool (a killed worker leaves no orphaned processes behind)."""
    global _max_result_bytes
    _max_result_bytes = max_result_bytes
    # A pool process must not take the Ctrl+C meant for its worker: the worker stops it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()


def die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass


def _function(function_id: str, bodies: dict):
    fn = _functions.get(function_id)
    if fn is None:
        fn = serialization.deserialize(bodies[function_id])
        if not callable(fn):
            raise TypeError(f"function {function_id} is not callable ({type(fn).__name__})")
        _functions[function_id] = fn
    return fn


def run_task(item, bodies: dict) -> list:
    """One task item `[task_id, attempt, function_id, payload]` -> its result item
    `[task_id, attempt, status, value, error, started, finished, pid]`."""
    task_id, attempt, function_id, payload = item
    pid = os.getpid()
    started = time.monotonic()
    try:
        fn = _function(function_id, bodies)
        args, kwargs = serialization.call_arguments(payload)
        started = time.monotonic()
        value = fn(*args, **kwargs)
        finished = time.monotonic()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the task's failure, whatever it raised (SystemExit too)
        finished = time.monotonic()
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return [task_id, attempt, FAILED, None, f"{text}\n{traceback.format_exc(limit=-3)}", started, finished, pid]
    try:
        data = serialization.serialize(value)
    except Exception as exc:
        return [task_id, attempt, FAILED, None, f"the result cannot be serialized: {exc!r}", started, finished, pid]
    if len(data) > _max_result_bytes:
        return [task_id, attempt, FAILED, None,
                f"the result is {len(data)} bytes, larger than the limit of {_max_result_bytes} bytes",
                started, finished, pid]
    return [task_id, attempt, COMPLETED, data, None, started, finished, pid]


def run_chunk(items: list, bodies: dict) -> list:
    """A chunk of task items, run in order in this process."""
    return [run_task(item, bodies) for item in items]


def warm_up(_i: int = 0) -> int:
    """Run once per pool process at start, so that a worker is ready before it asks for
    work (its processes exist and have imported what tasks need)."""
    return os.getpid()


def make_pool(processes: int, max_result_bytes: int, warm: bool = True):
    """A pool of `processes` processes that run chunks. On Linux they are forked, and
    all at once on the first submission, so warming the pool up before the caller creates
    its event loop and sockets means no fork ever copies those."""
    import concurrent.futures
    import multiprocessing

    method = "fork" if sys.platform.startswith("linux") else None
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=processes, mp_context=multiprocessing.get_context(method),
        initializer=init_process, initargs=(max_result_bytes,))
    if warm:
        list(pool.map(warm_up, range(processes * 2)))
    return pool


def stop_pool(pool, grace_sec: float = 2.0) -> None:
    """Shut a pool down and reap its processes, so that none is left behind, not even
    as a zombie: those still running after `grace_sec` are killed."""
    import psutil

    pool.shutdown(wait=False, cancel_futures=True)
    children = psutil.Process().children()
    _, alive = psutil.wait_procs(children, timeout=grace_sec)
    for child in alive:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=grace_sec)
