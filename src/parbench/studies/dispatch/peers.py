"""The peers, measured on the same workloads, worker counts and task counts as the
platform, in the same run, with their own submission APIs (no HTTP):

- `processpool`: `concurrent.futures.ProcessPoolExecutor` with workers x processes
  processes: the floor, nothing but a pool;
- `dask`: a Dask distributed `LocalCluster` of `workers` worker processes with
  `processes` threads each (Dask's unit of parallelism in a worker), on 127.0.0.1;
- `celery`: `workers` Celery workers, each a prefork pool of `processes` processes,
  with a redis-server of the run as broker and result backend;
- `ray`: one local Ray cluster of max(workers) x processes CPUs for the cell; a run at
  N workers asks each task for max(workers) / N CPUs, so that at most N x processes run
  at once.

Per task: one submission call (`submit`, `apply_async`, `.remote`); batched: one call
for all tasks (`executor.map`, `client.map`, a Celery `group`); Ray has no batch call
and records batched runs as unavailable. The time a task is "seen" is when its result
reaches the client (a done callback, Dask's `as_completed`, Celery's native join).

A peer that cannot start here (not installed, fails to start) is recorded with status
`unavailable` and the reason, never replaced by anything else.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time

from parbench.studies.dispatch import workloads
from parbench.studies.dispatch.sweep import RunData, Runner, TaskOutcome
from parbench.words import counted

PEERS = ("processpool", "dask", "celery", "ray")


class PeerUnavailable(RuntimeError):
    """The peer cannot run on this machine; the message says why."""


def _seen_recorder(outcomes: list[TaskOutcome], index: int, event: threading.Event, remaining: list):
    lock = threading.Lock()

    def record(future) -> None:
        now = time.monotonic()
        outcome = outcomes[index]
        try:
            outcome.value, outcome.status = future.result(), "COMPLETED"
        except Exception as exc:
            outcome.status, outcome.error = "FAILED", repr(exc)
        outcome.t_seen = now
        with lock:
            remaining[0] -= 1
            if remaining[0] == 0:
                event.set()

    return record


class ProcessPoolRunner(Runner):
    name, kind = "processpool", "peer"

    def __init__(self, params: dict):
        self.timeout = params["client"]["run_timeout_sec"]
        self.pool = None
        self.slots = 1

    def set_workers(self, count: int, processes: int) -> None:
        from parbench.studies.dispatch.platform import executor

        self.slots = count * processes
        self.pool = executor.make_pool(self.slots, 1 << 30)

    def stop_workers(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None

    def run(self, workload, calls, submission) -> RunData:
        fn = workloads.FUNCTIONS[workload]
        outcomes = [TaskOutcome(0.0, None, None) for _ in calls]
        if submission == "per_task":
            done, remaining = threading.Event(), [len(calls)]
            for i, (args, kwargs) in enumerate(calls):
                outcomes[i].t_submitted = time.monotonic()
                self.pool.submit(fn, *args, **kwargs).add_done_callback(
                    _seen_recorder(outcomes, i, done, remaining))
            finished = done.wait(self.timeout)
            errors = [] if finished else [f"the run did not finish within {self.timeout} s"]
        else:
            start = time.monotonic()
            for o in outcomes:
                o.t_submitted = start
            chunk = max(1, len(calls) // (4 * self.slots))
            columns = [list(c) for c in zip(*[args for args, _ in calls])]
            results = (self.pool.map(fn, *columns, chunksize=chunk) if columns
                       else self.pool.map(_call_noargs, [fn] * len(calls), chunksize=chunk))
            for o, value in zip(outcomes, results):
                o.value, o.status, o.t_seen = value, "COMPLETED", time.monotonic()
            errors = []
        return RunData(outcomes, errors=errors)

    def close(self) -> None:
        self.stop_workers()


def _call_noargs(fn):
    return fn()


class DaskRunner(Runner):
    name, kind = "dask", "peer"

    def __init__(self, params: dict):
        self.timeout = params["client"]["run_timeout_sec"]
        self.cluster = self.client = None

    def start(self) -> None:
        try:
            import dask.distributed  # noqa: F401
        except ImportError as exc:
            raise PeerUnavailable(f"dask.distributed is not installed ({exc})") from None

    def set_workers(self, count: int, processes: int) -> None:
        from dask.distributed import Client, LocalCluster

        self.cluster = LocalCluster(n_workers=count, threads_per_worker=processes, processes=True,
                                    host="127.0.0.1", dashboard_address="127.0.0.1:0",
                                    worker_dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR)
        self.client = Client(self.cluster)
        self.client.wait_for_workers(count, timeout=120)

    def stop_workers(self) -> None:
        if self.client is not None:
            self.client.close()
            self.cluster.close()
            self.client = self.cluster = None

    def run(self, workload, calls, submission) -> RunData:
        from dask.distributed import as_completed

        fn = workloads.FUNCTIONS[workload]
        outcomes = [TaskOutcome(0.0, None, None) for _ in calls]
        index = {}
        if submission == "per_task":
            futures = []
            for i, (args, kwargs) in enumerate(calls):
                outcomes[i].t_submitted = time.monotonic()
                future = self.client.submit(fn, *args, pure=False, **kwargs)
                index[future.key] = i
                futures.append(future)
        else:
            start = time.monotonic()
            for o in outcomes:
                o.t_submitted = start
            columns = [list(c) for c in zip(*[args for args, _ in calls])]
            futures = (self.client.map(fn, *columns, pure=False) if columns
                       else self.client.map(_call_noargs, [fn] * len(calls), pure=False))
            index = {f.key: i for i, f in enumerate(futures)}
        errors = []
        try:
            for future in as_completed(futures, timeout=self.timeout):
                o = outcomes[index[future.key]]
                o.t_seen = time.monotonic()
                try:
                    o.value, o.status = future.result(), "COMPLETED"
                except Exception as exc:
                    o.status, o.error = "FAILED", repr(exc)
        except Exception as exc:  # dask's TimeoutError
            errors.append(f"{type(exc).__name__}: {exc}")
        return RunData(outcomes, errors=errors)

    def close(self) -> None:
        self.stop_workers()


class CeleryRunner(Runner):
    name, kind = "celery", "peer"

    def __init__(self, params: dict):
        self.timeout = params["client"]["run_timeout_sec"]
        self.group = None
        self.app = None
        self.workers: list[str] = []

    def start(self) -> None:
        from parbench.studies.dispatch import celery_app
        from parbench.studies.dispatch.platform.launcher import ProcessGroup, start_redis

        try:
            import celery  # noqa: F401
        except ImportError as exc:
            raise PeerUnavailable(f"celery is not installed ({exc})") from None
        self.group = ProcessGroup(prefix="parbench-celery-")
        self.group._guard()
        self.group.procs["redis"], self.redis, port = start_redis(self.group._spawn, self.group._wait)
        self.url = f"redis://127.0.0.1:{port}/0"
        os.environ[celery_app.REDIS_ENV] = self.url
        celery_app.app.conf.broker_url = celery_app.app.conf.result_backend = self.url
        self.app = celery_app.app
        self.tasks = celery_app.TASKS

    def set_workers(self, count: int, processes: int) -> None:
        from parbench.studies.dispatch import celery_app

        self.workers = []
        for i in range(count):
            name = f"w{i}"
            self.group.procs[name] = self.group._spawn(name, [
                sys.executable, "-m", "celery", "-A", "parbench.studies.dispatch.celery_app", "worker",
                "--pool", "prefork", "--concurrency", str(processes), "-n", f"{name}@parbench",
                "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel", "WARNING"],
                env={celery_app.REDIS_ENV: self.url})
            self.workers.append(name)

        def all_up() -> bool:
            replies = self.app.control.ping(timeout=0.5) or []
            return len(replies) >= count

        self.group._wait(counted(count, "Celery worker"), all_up, {n: self.group.procs[n] for n in self.workers})

    def stop_workers(self) -> None:
        self.group._stop(self.workers, self.group.procs, timeout=15.0)
        for name in self.workers:
            self.group.procs.pop(name, None)
        self.workers = []

    def run(self, workload, calls, submission) -> RunData:
        from celery import group
        from celery.result import ResultSet

        task = self.tasks[workload]
        outcomes = [TaskOutcome(0.0, None, None) for _ in calls]
        if submission == "per_task":
            results = []
            for i, (args, kwargs) in enumerate(calls):
                outcomes[i].t_submitted = time.monotonic()
                results.append(task.apply_async(args=args, kwargs=kwargs))
            result_set = ResultSet(results)
        else:
            start = time.monotonic()
            for o in outcomes:
                o.t_submitted = start
            result_set = group(task.s(*args, **kwargs) for args, kwargs in calls).apply_async()
            results = result_set.results
        index = {r.id: i for i, r in enumerate(results)}

        def seen(task_id, value):
            o = outcomes[index[task_id]]
            o.t_seen, o.value, o.status = time.monotonic(), value, "COMPLETED"

        errors = []
        try:
            # Celery polls the Redis backend for results every `interval` seconds (0.5 by
            # default, which would add up to half a second to every run): 5 ms
            result_set.join_native(timeout=self.timeout, callback=seen, propagate=True, interval=0.005)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
        return RunData(outcomes, errors=errors)

    def close(self) -> None:
        if self.group is not None:
            self.group.close()


class RayRunner(Runner):
    name, kind = "ray", "peer"

    def __init__(self, params: dict):
        self.timeout = params["client"]["run_timeout_sec"]
        self.max_workers = max(params["workers"])
        self.processes = params["processes_per_worker"]
        self.cpus_per_task = 1.0

    def start(self) -> None:
        try:
            import ray
        except ImportError as exc:
            raise PeerUnavailable(f"ray is not installed ({exc})") from None
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        self.ray = ray
        ray.init(num_cpus=self.max_workers * self.processes, include_dashboard=False, log_to_driver=False,
                 configure_logging=False, _node_ip_address="127.0.0.1")
        self.remote = {w: ray.remote(fn) for w, fn in workloads.FUNCTIONS.items()}

    def set_workers(self, count: int, processes: int) -> None:
        self.cpus_per_task = (self.max_workers * self.processes) / (count * processes)

    def supports(self, submission: str) -> str | None:
        return None if submission == "per_task" else "Ray has no call that submits many tasks at once"

    def run(self, workload, calls, submission) -> RunData:
        remote = self.remote[workload].options(num_cpus=self.cpus_per_task)
        outcomes = [TaskOutcome(0.0, None, None) for _ in calls]
        done, remaining = threading.Event(), [len(calls)]
        for i, (args, kwargs) in enumerate(calls):
            outcomes[i].t_submitted = time.monotonic()
            remote.remote(*args, **kwargs).future().add_done_callback(_seen_recorder(outcomes, i, done, remaining))
        finished = done.wait(self.timeout)
        return RunData(outcomes, errors=[] if finished else [f"the run did not finish within {self.timeout} s"])

    def close(self) -> None:
        if getattr(self, "ray", None) is not None and self.ray.is_initialized():
            self.ray.shutdown()


RUNNERS = {"processpool": ProcessPoolRunner, "dask": DaskRunner, "celery": CeleryRunner, "ray": RayRunner}
