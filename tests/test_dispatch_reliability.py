"""No task can wedge the dispatch platform, in any mode: tasks that raise, end their own
process, hang, sleep past their time limit, allocate without bound or return what cannot
be returned each end FAILED once with the kind of failure, never retried, while every
other task completes with its result and the workers stay; a worker killed mid-batch, the
dispatcher killed and started again and Redis restarting lose no task and finish none
twice; no request outlasts its wait, even with Redis stalled. Each platform test runs a
real platform (redis-server, gateway, dispatcher, workers) on loopback sockets."""

import asyncio
import os
import signal
import sys
import time
from dataclasses import replace

import pytest

from parbench.studies.dispatch import workloads
from parbench.studies.dispatch.platform import executor, serialization, store
from parbench.studies.dispatch.platform.client import ApiError, TaskFailed
from parbench.studies.dispatch.platform.launcher import Platform, PlatformSettings
from parbench.studies.dispatch.platform.pool import TaskPool

# the functions below travel by value, as a user's would (workers cannot import tests/)
import cloudpickle  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])

MODES = ["local", "pull", "push", "push-naive"]
FAST = PlatformSettings(heartbeat_interval_sec=0.2, heartbeat_liveness=3, memory_limit_mb=256,
                        max_result_bytes=1 << 20)
TIME_LIMIT = 0.5
# poison kind -> (the error kind it must fail with, words its error must hold)
POISON = {
    "raise": ("raised", "ValueError: bad input"),
    "exit": ("crashed", "exited with status 3"),
    "hang": ("timeout", f"time limit of {TIME_LIMIT:g} s"),
    "sleep": ("timeout", f"time limit of {TIME_LIMIT:g} s"),
    "memory": ("memory", "memory limit of 256 MiB"),
    "big": ("result_too_large", "larger than the limit of 1048576 bytes"),
    "unpicklable": ("result_unserializable", "cannot be serialized"),
}


def mixed(kind, x=0):
    """A normal task (`ok`: 2x) or one of the poisons."""
    import os
    import threading
    import time

    if kind == "ok":
        return 2 * x
    if kind == "raise":
        raise ValueError(f"bad input {x}")
    if kind == "exit":
        os._exit(3)
    if kind == "hang":
        while True:  # holds the GIL: only a kill from outside ends it
            pass
    if kind == "sleep":
        time.sleep(600)
    if kind == "memory":
        hoard = []
        while True:  # bytes(n) is calloc'd: address space without touching the pages
            hoard.append(bytes(32 << 20))
    if kind == "big":
        return b"x" * (2 << 20)
    if kind == "unpicklable":
        return threading.Lock()
    raise AssertionError(kind)


def sleepy(seconds):
    import time as t

    t.sleep(seconds)
    return seconds


def kill_my_worker(local: bool):
    """Kills the worker that runs it (the parent of its pool's fork server); in local mode
    the local pool's fork server (the dispatcher's own death is another test)."""
    import os
    import signal
    import time

    import psutil

    server = os.getppid()
    os.kill(server if local else psutil.Process(server).ppid(), signal.SIGKILL)
    time.sleep(60)  # dies with them, never returns


def poisoned_calls() -> list[tuple]:
    """Normal tasks before, between and after one task of each poison."""
    calls = [("ok", i) for i in range(3)]
    for i, kind in enumerate(POISON):
        calls += [(kind, i)] + [("ok", 100 * (i + 1) + j) for j in range(3)]
    return calls


def check_outcomes(calls, doc) -> None:
    for (kind, x), status, result, error, error_kind in zip(calls, doc["statuses"], doc["results"], doc["errors"],
                                                           doc["error_kinds"]):
        if kind == "ok":
            assert status == "COMPLETED", (x, status, error)
            assert serialization.deserialize(serialization.decode(result, "r", 1 << 30)) == 2 * x
        else:
            want_kind, words = POISON[kind]
            assert (status, error_kind) == ("FAILED", want_kind), (kind, status, error_kind, error)
            assert words in error, (kind, error)


def wait_until(what, predicate, timeout=15.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout} s"
        time.sleep(0.02)


# --- the pool, on its own ----------------------------------------------------------------------

def test_the_pool_replaces_a_process_and_fails_only_the_poison_task():
    """One process, one chunk: normal tasks before and after each poison still complete,
    in the same process or the one that replaced it; each poison fails once."""
    calls = poisoned_calls()
    body = serialization.serialize(mixed)
    items = [[f"t{i}", 1, "f", serialization.serialize((call, {})), TIME_LIMIT] for i, call in enumerate(calls)]

    async def run():
        done = asyncio.get_running_loop().create_future()
        pool = TaskPool(1, executor.Limits(1 << 20, 256 * executor.MIB),
                        lambda token, results: done.set_result(results))
        await pool.start()
        first = pool.slots[0].pid
        try:
            pool.submit(items, {"f": body}, "chunk")
            results = await asyncio.wait_for(done, 60)
            return results, first, pool.slots[0].pid, dict(pool.counters)
        finally:
            pool.close()

    results, first, last, counters = asyncio.run(run())
    by_id = {r[0]: r for r in results}
    assert sorted(by_id) == sorted(item[0] for item in items)  # every task once
    doc = {"statuses": [], "results": [], "errors": [], "error_kinds": []}
    for item in items:
        r = by_id[item[0]]
        doc["statuses"].append(r[2])
        doc["results"].append(serialization.encode(r[3]) if r[3] else None)
        doc["errors"].append(r[4])
        doc["error_kinds"].append(r[8])
    check_outcomes(calls, doc)
    # the crash and the two timeouts each cost the process; the others did not
    assert counters["crashes"] == 1 and counters["timeouts"] == 2 and counters["replaced"] == 3
    assert first != last


def test_the_pool_under_stress_ends_every_task_once():
    """400 tasks in chunks of 1 to 7 on 3 processes, one in ten ending its process and
    one in ten raising, chunks submitted while processes die: every task ends once,
    every normal one with its value, every poison with its kind."""
    import random

    rng = random.Random(7)
    kinds = ["exit" if r < 0.1 else "raise" if r < 0.2 else "ok" for r in (rng.random() for _ in range(400))]
    items = [[f"t{i}", 1, "f", serialization.serialize(((kind, i), {})), 30.0] for i, kind in enumerate(kinds)]
    chunks, start = [], 0
    while start < len(items):
        size = rng.randint(1, 7)
        chunks.append(items[start:start + size])
        start += size

    async def run():
        results, done = [], asyncio.get_running_loop().create_future()

        def on_done(token, chunk_results):
            results.extend(chunk_results)
            if len(results) == len(items) and not done.done():
                done.set_result(None)

        pool = TaskPool(3, executor.Limits(1 << 20, 0), on_done)
        await pool.start()
        try:
            for chunk in chunks:
                pool.submit(chunk, {"f": serialization.serialize(mixed)}, None)
                await asyncio.sleep(0)  # let deaths and results interleave with submissions
            await asyncio.wait_for(done, 120)
            return results, dict(pool.counters)
        finally:
            pool.close()

    results, counters = asyncio.run(run())
    assert sorted(r[0] for r in results) == sorted(item[0] for item in items)  # each task exactly once
    for r in results:
        i = int(r[0][1:])
        if kinds[i] == "ok":
            assert r[2] == "COMPLETED" and serialization.deserialize(r[3]) == 2 * i, r
        else:
            assert (r[2], r[8]) == ("FAILED", {"exit": "crashed", "raise": "raised"}[kinds[i]]), r
    assert counters["crashes"] == counters["replaced"] == kinds.count("exit")


# --- the platform, in each mode ------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_no_task_wedges_the_platform(mode):
    with Platform(mode, FAST) as platform:
        workers = platform.start_workers(2, 2)
        with platform.client() as client:
            fid = client.register(mixed, "mixed", time_limit_sec=TIME_LIMIT)
            # the dispatcher learns the function's run time: the next chunks hold many tasks,
            # so poisons share chunks with normal tasks
            warm = client.batch(fid, [(("ok", i), {}) for i in range(40)], wait_sec=30)
            assert warm["statuses"] == ["COMPLETED"] * 40
            calls = poisoned_calls()
            doc = client.batch(fid, [(call, {}) for call in calls], wait_sec=30)
            check_outcomes(calls, doc)
            # exact accounting: every task stored once, none dispatched twice (no worker was lost)
            rows = store.read_tasks(platform.redis, doc["task_ids"])
            assert [r["completions"] for r in rows] == [1] * len(calls)
            assert [r["attempts"] for r in rows] == [1] * len(calls)
            failed = [r for r in rows if r["status"] == "FAILED"]
            assert sorted(r["error_kind"] for r in failed) == sorted(kind for kind, _ in POISON.values())
            # the workers are the same processes, still registered, and serve on
            if mode != "local":
                assert all(proc.poll() is None for proc in platform.workers.values())
                assert set(workers) <= set(platform.registered_workers())
            assert platform.procs["dispatcher"].poll() is None
            assert client.call(fid, "ok", 21) == 42
            again = client.batch(fid, [(("ok", i), {}) for i in range(20)], wait_sec=30)
            assert again["statuses"] == ["COMPLETED"] * 20


@pytest.mark.parametrize("mode", ["pull", "push", "push-naive"])
def test_a_worker_killed_mid_batch_loses_no_task(mode):
    with Platform(mode, FAST) as platform:
        victim, survivor = platform.start_workers(2, 2)
        with platform.client() as client:
            fid = client.register(sleepy)
            tasks = [client.submit(fid, 0.4)["task_id"] for _ in range(12)]
            wait_until("the victim runs a task", lambda: any(
                r["worker"] == victim and r["status"] == "RUNNING" for r in store.read_tasks(platform.redis, tasks)))
            platform.kill_worker(victim, signal.SIGKILL)
            values = [client.result(t, wait_sec=20) for t in tasks]
        assert values == [0.4] * 12
        rows = store.read_tasks(platform.redis, tasks)
        assert all(r["status"] == "COMPLETED" and r["completions"] == 1 for r in rows)
        moved = [r for r in rows if r["attempts"] > 1]
        assert moved and all(r["workers"][0] == victim and r["worker"] == survivor for r in moved)


@pytest.mark.parametrize("mode", MODES)
def test_the_dispatcher_killed_and_started_again_loses_no_task(mode):
    with Platform(mode, FAST) as platform:
        workers = platform.start_workers(2, 2)
        with platform.client() as client:
            fid = client.register(sleepy)
            before = [client.submit(fid, 0.4)["task_id"] for _ in range(12)]
            wait_until("a task runs", lambda: any(r["status"] == "RUNNING"
                                                  for r in store.read_tasks(platform.redis, before)))
            platform.kill_dispatcher()
            # the gateway takes tasks while no dispatcher runs
            during = [client.submit(fid, 0.1)["task_id"] for _ in range(4)]
            platform.start_dispatcher_again()
            values = [client.result(t, wait_sec=20) for t in before + during]
            assert client.call(fid, 0.05) == 0.05
        assert values == [0.4] * 12 + [0.1] * 4
        rows = store.read_tasks(platform.redis, before + during)
        assert all(r["status"] == "COMPLETED" and r["completions"] == 1 for r in rows)
        assert any(r["attempts"] > 1 for r in rows[:12])  # what it held was dispatched again
        events = [e[1] for e in store.drain_list(platform.redis, store.Keys().events)]
        assert "recovered" in events
        if mode != "local":
            assert set(workers) <= set(platform.registered_workers())  # they registered again
            assert all(proc.poll() is None for proc in platform.workers.values())


@pytest.mark.parametrize("mode", MODES)
def test_redis_restarting_under_the_platform(mode):
    with Platform(mode, replace(FAST, store_timeout_sec=1.0)) as platform:
        platform.start_workers(2, 2)
        with platform.client() as client:
            fid = client.register(sleepy)
            before = [client.submit(fid, 0.3)["task_id"] for _ in range(8)]
            # a restart, not a crash: SIGTERM, so Redis writes out its append-only file. Killed
            # outright, it may lose an answered write it held back behind a slow fsync (up to
            # two seconds with `appendfsync everysec`): on a busy machine one task went missing
            platform.stop_redis(signal.SIGTERM)
            for call in (lambda: client.submit(fid, 0.1), lambda: client.status(before[0]),
                         lambda: client.outcome(before[0], wait_sec=1.0)):
                started = time.monotonic()
                with pytest.raises(ApiError) as info:
                    call()
                # promptly, not after a client's whole wait: the store's timeout (1 s) and
                # slack for a machine busy with the rest of the suite
                took = time.monotonic() - started
                assert info.value.status == 503 and took < 2.5, (info.value, took)
            time.sleep(0.5)  # tasks finish meanwhile: their results wait in the dispatcher
            platform.start_redis_again()
            back = time.monotonic()
            values = [client.result(t, wait_sec=20) for t in before]
            # no result waits out a client's whole wait for an announcement nobody heard
            assert time.monotonic() - back < 10
            assert client.call(fid, 0.05) == 0.05  # served again, the platform never restarted
        assert values == [0.3] * 8
        rows = store.read_tasks(platform.redis, before)
        assert all(r["status"] == "COMPLETED" and r["completions"] == 1 for r in rows)


def test_no_request_outlasts_its_wait_even_with_redis_stalled():
    with Platform("push", replace(FAST, store_timeout_sec=0.5, max_wait_sec=2.0)) as platform:
        platform.start_workers(1, 1)
        with platform.client() as client:
            fid = client.register(sleepy)

            def timed(call):
                started = time.monotonic()
                try:
                    return call(), time.monotonic() - started
                except ApiError as exc:
                    return exc, time.monotonic() - started

            doc, took = timed(lambda: client.submit(fid, 2.0, wait_sec=0.5))
            assert doc["status"] in ("QUEUED", "RUNNING") and took < 0.5 + 0.3, (doc, took)
            task = doc["task_id"]
            doc, took = timed(lambda: client.outcome(task, wait_sec=0.7))
            assert doc["status"] == "RUNNING" and took < 0.7 + 0.3, (doc, took)
            redis_pid = platform.procs["redis"].pid
            os.kill(redis_pid, signal.SIGSTOP)  # Redis stalls: it accepts and never answers
            try:
                for call, wait in [(lambda: client.status(task), 0.5),
                                   (lambda: client.outcome(task, wait_sec=1.0), 1.0),
                                   (lambda: client.submit(fid, 0.1, wait_sec=1.5), 1.5),
                                   (lambda: client.register(sleepy), 0.5)]:
                    answer, took = timed(call)
                    assert isinstance(answer, ApiError) and answer.status == 503, answer
                    assert took < wait + 0.5, (answer, took)
            finally:
                os.kill(redis_pid, signal.SIGCONT)
            assert client.result(task, wait_sec=2) == 2.0
            assert client.call(fid, 0.05, wait_sec=2) == 0.05
        # a client that sends its body slowly holds its request no longer than max_wait_sec
        import socket

        with socket.create_connection(("127.0.0.1", platform.gateway_port), timeout=5) as sock:
            started = time.monotonic()
            sock.sendall(b"POST /execute_function HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + platform.token.encode()
                         + b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"function_id\"")
            answer = sock.recv(4096)
            assert answer.startswith(b"HTTP/1.1 408") and time.monotonic() - started < 2.0 + 0.5, answer[:200]


@pytest.mark.parametrize("mode", ["local", "push"])
def test_a_task_that_kills_its_worker_is_dispatched_a_bounded_number_of_times(mode):
    with Platform(mode, replace(FAST, max_task_attempts=2)) as platform:
        first = platform.start_workers(2, 1)
        with platform.client() as client:
            fid = client.register(kill_my_worker)
            with pytest.raises(TaskFailed) as info:
                client.call(fid, mode == "local", wait_sec=20)
            assert info.value.kind == "worker_lost" and "dispatched 2 times" in info.value.error
            if mode == "local":
                assert platform.procs["dispatcher"].poll() is None  # a new pool took the broken one's place
            else:
                assert all(platform.workers[w].poll() is not None for w in first)  # it took both down
                platform.start_workers(1, 1)
            workloads.by_value()
            assert client.call(client.register(workloads.cpu), 10) == 285  # and the platform serves on
