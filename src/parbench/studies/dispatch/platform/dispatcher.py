"""The task dispatcher: takes the tasks the gateway announces and has them run, in one
of four modes chosen at start.

- `local`: a process pool inside the dispatcher (the seed's local mode);
- `pull`: workers ask for work over ZeroMQ REQ/REP; the dispatcher answers each request
  with tasks, holds the request of an idle worker until there are some (or until a
  heartbeat interval has passed), and answers a busy one at once, so that no finished
  result waits behind a held request;
- `push`: workers register over ZeroMQ DEALER/ROUTER and grant credit, one unit per
  free process; the dispatcher sends a worker only as many chunks as it has credit for,
  sends with ROUTER_MANDATORY (a worker that is gone is noticed at the first send, not
  after its heartbeats lapse), and a worker that stops says so (BYE);
- `push-naive`: the seed's push design, kept to show its anomaly: each task is sent, on
  its own, to the next registered worker in round-robin order as soon as it is
  announced, with no flow control; a worker stays registered until its heartbeats
  lapse, and the ROUTER drops what it cannot route without a word.

In the three modes with workers, a worker silent for `liveness` heartbeat intervals is
dropped and the tasks it held are queued again (a new attempt), at most
`max_task_attempts` dispatches in all (then the task FAILS as `worker_lost`): a worker
lost is an infrastructure fault, retried; a task's own failure (it raised, crashed its
process, ran past its time limit, ...) is never retried. Only the first result of a
task's current attempt is stored (the store's script checks it), so each task ends
COMPLETED or FAILED exactly once. A worker the dispatcher does not know is told to
REGISTER.

The dispatcher survives what happens around it:

- Redis going away (restarting): writes wait in the outbox and are sent again until
  Redis is back; the subscription to new tasks is made again;
- its own death: the launcher starts a new one on the same port, which loads every task
  not finished yet from the store's index of open tasks (`tasks:open`; those that were
  RUNNING are dispatched again as a new attempt), and workers register again when told
  to. The same recovery runs after every new subscription, so that no task announced
  while the dispatcher could not listen is left behind.

Small tasks travel in chunks: one credit (a free process) takes a chunk of tasks that it
runs one after the other. A chunk is as long as the smallest of: `max_chunk_tasks`; the
queue spread over every process (`ceil(queued / processes)`, so that the queue is shared
out, not handed to the first free process); and `chunk_target_sec` divided by how long
a task of that function has taken so far (an exponential average of the run times the
workers report; 1 until one is known), so that long tasks travel one by one and tiny
ones by the dozen.

Every change is written to Redis in one pipelined transaction per turn of the event
loop: the RUNNING marks, results (with the announcement of those stored), the registry
of workers and the queue depth of each worker (tasks sent to it and not yet returned).

Each task carries its time limit (its function's own, from registration, or
`task_time_limit_sec`) to the pool process that runs it; `pool.TaskPool` enforces it.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import math
import os
import signal
import sys
import time
from dataclasses import dataclass, field

from parbench.studies.dispatch.platform import executor, protocol
from parbench.studies.dispatch.platform.executor import UNREGISTERED, WORKER_LOST
from parbench.studies.dispatch.platform.lifecycle import run_until_stopped
from parbench.studies.dispatch.platform.pool import TaskPool
from parbench.studies.dispatch.platform.store import COMPLETED, FAILED, QUEUED, RUNNING, Store
from parbench.words import counted

MODES = ("local", "pull", "push", "push-naive")
LOCAL_WORKER = "local"
# Seconds a Redis command may take before the dispatcher counts Redis as unreachable.
REDIS_TIMEOUT_SEC = 5.0


@dataclass
class Settings:
    mode: str
    redis_url: str
    # local: processes of the dispatcher's own pool
    pool_processes: int = 1
    heartbeat_interval_sec: float = 1.0
    heartbeat_liveness: int = 3
    max_chunk_tasks: int = 64
    chunk_target_sec: float = 0.002
    max_result_bytes: int = 8 << 20
    # a task's time limit when its function has none of its own (s)
    task_time_limit_sec: float = 300.0
    # local: address space of each pool process (MiB; 0: none)
    memory_limit_mb: int = 4096
    # dispatches of one task at most (the first and the retries after lost workers)
    max_task_attempts: int = 10
    # the port of the ZeroMQ socket (None: a free one)
    port: int | None = None


@dataclass
class Task:
    task_id: str
    function_id: str
    payload: bytes
    attempt: int = 0
    worker: str | None = None


@dataclass
class Worker:
    worker_id: str
    identity: bytes
    processes: int
    credit: int = 0
    held: dict = field(default_factory=dict)  # task id -> Task
    last_seen: float = 0.0
    registered: float = 0.0
    published: float = 0.0
    functions_sent: set = field(default_factory=set)
    state: str = "ready"

    def view(self) -> dict:
        return {"worker": self.worker_id, "processes": self.processes, "credit": self.credit,
                "held": len(self.held), "last_seen": self.last_seen, "registered": self.registered,
                "state": self.state}


def redis_errors() -> tuple:
    """What a Redis call raises when Redis is unreachable, restarting or too slow."""
    import redis

    return (OSError, ConnectionError, TimeoutError, asyncio.TimeoutError, redis.exceptions.ConnectionError,
            redis.exceptions.TimeoutError, redis.exceptions.BusyLoadingError)


class Outbox:
    """What changes during one turn of the event loop goes to Redis in one transaction,
    in the order it happened: consecutive RUNNING marks are one script call, consecutive
    results another (a task's mark always comes before its result); depth samples and
    events in one push each. While Redis is unreachable the writes wait here and are sent
    again, in order, until it answers: nothing the dispatcher learnt is lost."""

    MARKS, RESULTS, OP = "marks", "results", "op"

    def __init__(self, store: Store):
        self.store = store
        self.steps: list[list] = []  # [kind, items]
        self.depth: list = []
        self.events: list = []
        self.flushing = False
        self.failures = 0

    def _append(self, kind: str, item) -> None:
        if self.steps and self.steps[-1][0] == kind and kind != self.OP:
            self.steps[-1][1].append(item)
        else:
            self.steps.append([kind, [item]])
        self._schedule()

    def mark(self, task_id: str, attempt: int, worker: str, t: float) -> None:
        self._append(self.MARKS, (task_id, attempt, worker, t))

    def result(self, task_id: str, attempt: int, worker: str, status: str, value, kind: str | None, started: float,
               finished: float, stored: float, pid: int) -> None:
        self._append(self.RESULTS, (task_id, attempt, worker, status, value, kind, started, finished, stored, pid))

    def add(self, op) -> None:
        """Any other write: a function of the pipeline."""
        self._append(self.OP, op)

    def sample(self, entry) -> None:
        self.depth.append(entry)
        self._schedule()

    def event(self, entry) -> None:
        self.events.append(entry)
        self._schedule()

    def _schedule(self) -> None:
        if not self.flushing:
            self.flushing = True
            asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        errors = redis_errors()
        try:
            while self.steps or self.depth or self.events:
                steps, self.steps = self.steps, []
                depth, self.depth = self.depth, []
                events, self.events = self.events, []
                pipe = self.store.redis.pipeline(transaction=True)
                for kind, items in steps:
                    if kind == self.MARKS:
                        self.store.mark_running(pipe, items)
                    elif kind == self.RESULTS:
                        self.store.store_results(pipe, items)
                    else:
                        for op in items:
                            op(pipe)
                self.store.record_depth(pipe, depth)
                self.store.record_events(pipe, events)
                try:
                    await pipe.execute()
                except errors as exc:
                    # put everything back in front of what came meanwhile, and try again
                    self.steps, self.depth, self.events = steps + self.steps, depth + self.depth, events + self.events
                    self.failures += 1
                    if self.failures == 1:
                        print(f"dispatcher: Redis write failed ({exc!r}); keeping the writes and retrying until it "
                              f"answers", file=sys.stderr, flush=True)
                    await asyncio.sleep(min(1.0, 0.05 * self.failures))
                    continue
                if self.failures:
                    print(f"dispatcher: Redis answers again after {counted(self.failures, 'failed write')}",
                          file=sys.stderr, flush=True)
                    self.failures = 0
        finally:
            self.flushing = False


class Dispatcher:
    """What every mode shares: intake from Redis, the queue, tasks in flight, results,
    the registry of workers and their heartbeats."""

    def __init__(self, settings: Settings, store: Store, listener=None):
        self.settings = settings
        self.store = store
        # the subscription's own client (no read timeout: it waits for announcements)
        self.listener = listener if listener is not None else store.redis
        self.outbox = Outbox(store)
        self.queue: collections.deque[Task] = collections.deque()
        self.queued: set[str] = set()  # ids of the tasks in the queue
        self.inflight: dict[str, Task] = {}
        self.functions: dict[str, bytes] = {}
        self.time_limits: dict[str, float] = {}  # function id -> its tasks' time limit (s)
        self.durations: dict[str, float] = {}  # function id -> average run time of its tasks (s)
        self.workers: dict[str, Worker] = {}
        self.counters = collections.Counter()
        self.work_ready = asyncio.Event()
        self.stopping = asyncio.Event()
        self.subscribed = asyncio.Event()

    # --- intake ---------------------------------------------------------------------
    async def intake(self) -> None:
        """Listen for announced tasks; after every (re)subscription load every open task
        not known yet (those announced while nobody listened, those of a dispatcher that
        died)."""
        errors = redis_errors()
        outage = 0
        while True:
            pubsub = self.listener.pubsub()
            try:
                await pubsub.subscribe(self.store.keys.new_channel)
                await self.recover()
                if outage:
                    print("dispatcher: subscribed again", file=sys.stderr, flush=True)
                    outage = 0
                self.subscribed.set()
                async for message in pubsub.listen():
                    if message["type"] != "message":
                        continue
                    ids = message["data"].decode().split(",")
                    # announcements that arrived meanwhile are loaded with this one, in one round trip
                    while True:
                        more = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0)
                        if more is None:
                            break
                        ids += more["data"].decode().split(",")
                    self.counters["announced"] += len(ids)
                    await self.load(ids)
                    self.dispatch()
            except errors as exc:
                outage += 1
                if outage == 1:
                    print(f"dispatcher: lost Redis ({exc!r}); subscribing again until it answers", file=sys.stderr,
                          flush=True)
                await asyncio.sleep(min(1.0, 0.05 * outage))
            finally:
                try:
                    await pubsub.aclose()
                except Exception:  # the connection is gone already
                    pass

    async def recover(self) -> None:
        """Load every open task (QUEUED or RUNNING in the store) this dispatcher does not
        hold: a task RUNNING there was dispatched by a dispatcher that is gone, and is
        dispatched again as a new attempt."""
        ids = [t for t in await self.store.open_tasks() if t not in self.queued and t not in self.inflight]
        if ids:
            recovered = await self.load(ids)
            if recovered:
                self.event("recovered", "none", f"{recovered} tasks")
                self.counters["recovered"] += recovered
            self.dispatch()

    async def load(self, ids: list[str]) -> int:
        """Queue the open tasks among `ids` that are not queued or in flight here;
        returns how many of them had been dispatched before (attempts > 0)."""
        ids = [t for t in dict.fromkeys(ids) if t not in self.queued and t not in self.inflight]
        if not ids:
            return 0
        loaded = await self.store.load_tasks(ids)
        missing = {item[0] for item in loaded if item is not None and item[0] not in self.functions}
        for function_id in missing:
            info = await self.store.function_info(function_id)
            if info is not None:
                self.functions[function_id] = info[0]
                self.time_limits[function_id] = info[1] or self.settings.task_time_limit_sec
        before = 0
        for task_id, item in zip(ids, loaded):
            if item is None or item[2] not in (QUEUED, RUNNING) or task_id in self.queued or task_id in self.inflight:
                continue
            function_id, payload, status, attempts = item
            task = Task(task_id, function_id, payload, attempt=attempts)
            if attempts:
                before += 1
            if function_id not in self.functions:
                self.finish_unrunnable(task, f"function {function_id} is not registered")
            elif attempts >= self.settings.max_task_attempts:
                self.fail(task, WORKER_LOST, self.lost_error(task, "the dispatcher that held it"))
            else:
                self.enqueue(task)
        return before

    def enqueue(self, task: Task, front: bool = False) -> None:
        (self.queue.appendleft if front else self.queue.append)(task)
        self.queued.add(task.task_id)

    def finish_unrunnable(self, task: Task, error: str) -> None:
        now = time.monotonic()
        task.attempt += 1
        self.outbox.mark(task.task_id, task.attempt, "none", now)
        self.outbox.result(task.task_id, task.attempt, "none", FAILED, error, UNREGISTERED, now, now, now, 0)

    def fail(self, task: Task, kind: str, error: str) -> None:
        """End a task FAILED here (its current attempt), without running it again."""
        now = time.monotonic()
        if task.attempt == 0:  # never dispatched: it needs a RUNNING mark first
            task.attempt = 1
            self.outbox.mark(task.task_id, 1, "none", now)
        self.outbox.result(task.task_id, task.attempt, task.worker or "none", FAILED, error, kind, now, now, now, 0)
        self.counters["failed"] += 1

    def lost_error(self, task: Task, what: str) -> str:
        return (f"the task was dispatched {task.attempt} times and each time lost with its worker (the last: "
                f"{what}); a task is dispatched at most max_task_attempts = {self.settings.max_task_attempts} times")

    # --- dispatching ----------------------------------------------------------------
    def total_processes(self) -> int:
        return sum(w.processes for w in self.workers.values())

    def chunk_size(self, free: int) -> int:
        """Tasks in the next chunk (see the module's docstring)."""
        if free <= 0 or not self.queue:
            return 0
        spread = math.ceil(len(self.queue) / max(1, self.total_processes()))
        average = self.durations.get(self.queue[0].function_id)
        if average is None:
            by_time = 1
        elif average <= 0:
            by_time = self.settings.max_chunk_tasks
        else:
            by_time = int(self.settings.chunk_target_sec / average)
        return max(1, min(self.settings.max_chunk_tasks, spread, by_time))

    def take_chunk(self, size: int, worker: str) -> list[Task]:
        chunk = []
        now = time.monotonic()
        while self.queue and len(chunk) < size:
            task = self.queue.popleft()
            self.queued.discard(task.task_id)
            task.attempt += 1
            task.worker = worker
            self.inflight[task.task_id] = task
            chunk.append(task)
        for task in chunk:
            self.outbox.mark(task.task_id, task.attempt, worker, now)
        return chunk

    def items(self, chunk: list[Task]) -> list:
        return [[t.task_id, t.attempt, t.function_id, t.payload,
                 self.time_limits.get(t.function_id, self.settings.task_time_limit_sec)] for t in chunk]

    def bodies_for(self, worker: Worker | None, chunks: list[list[Task]]) -> dict:
        needed = {t.function_id for chunk in chunks for t in chunk}
        if worker is not None:
            needed -= worker.functions_sent
            worker.functions_sent |= needed
        return {fid: self.functions[fid] for fid in needed}

    def dispatch(self) -> None:
        raise NotImplementedError

    # --- results --------------------------------------------------------------------
    def accept_results(self, results: list, worker: Worker | None) -> None:
        stored = time.monotonic()
        for task_id, attempt, status, value, error, started, finished, pid, kind in results:
            task = self.inflight.get(task_id)
            if task is None or task.attempt != attempt:
                # a result of an attempt that was given up (its worker was dropped and the
                # task dispatched again, or a dispatcher before this one sent it)
                self.counters["stale_results"] += 1
                continue
            del self.inflight[task_id]
            if worker is not None:
                worker.held.pop(task_id, None)
            took = max(0.0, finished - started)
            before = self.durations.get(task.function_id)
            self.durations[task.function_id] = took if before is None else 0.8 * before + 0.2 * took
            outcome = value if status == COMPLETED else error
            self.outbox.result(task_id, attempt, task.worker, status, outcome, kind, started, finished, stored, pid)
            self.counters["completed" if status == COMPLETED else "failed"] += 1
        if worker is not None:
            self.sample_depth(worker)

    def requeue(self, tasks: list[Task], reason: str, worker_id: str) -> None:
        """Tasks whose worker is lost go back to the front of the queue (a new attempt),
        unless they were dispatched `max_task_attempts` times already: those fail."""
        again = []
        for task in reversed(tasks):
            if self.inflight.get(task.task_id) is not task:
                continue
            del self.inflight[task.task_id]
            if task.attempt >= self.settings.max_task_attempts:
                self.fail(task, WORKER_LOST, self.lost_error(task, f"{worker_id}, {reason}"))
                continue
            self.enqueue(task, front=True)
            again.append(task.task_id)
        if again:
            self.outbox.add(lambda pipe: self.store.mark_queued_again(pipe, again))
            self.event("requeued", worker_id, f"{len(again)} tasks ({reason})")
        self.counters["requeued"] += len(again)

    # --- workers ----------------------------------------------------------------------
    def event(self, name: str, worker_id: str, detail: str = "") -> None:
        self.outbox.event([time.monotonic(), name, worker_id, detail])

    def sample_depth(self, worker: Worker) -> None:
        self.outbox.sample([time.monotonic(), worker.worker_id, len(worker.held)])

    def publish_worker(self, worker: Worker) -> None:
        view = worker.view()
        worker.published = time.monotonic()
        self.outbox.add(lambda pipe: self.store.record_worker(pipe, worker.worker_id, view))

    def register(self, worker_id: str, identity: bytes, processes: int, credit: int) -> Worker:
        now = time.monotonic()
        worker = Worker(worker_id, identity, processes, credit=credit, last_seen=now, registered=now)
        self.workers[worker_id] = worker
        self.event("registered", worker_id, f"{processes} processes")
        self.publish_worker(worker)
        return worker

    def drop(self, worker: Worker, reason: str) -> None:
        if self.workers.get(worker.worker_id) is not worker:
            return
        del self.workers[worker.worker_id]
        worker.state = reason
        self.event(reason, worker.worker_id, f"last seen {worker.last_seen!r}")
        held = list(worker.held.values())
        worker.held.clear()
        self.requeue(held, reason, worker.worker_id)
        self.sample_depth(worker)
        self.outbox.add(lambda pipe: self.store.forget_worker(pipe, worker.worker_id))
        self.on_drop(worker)
        # not from here: drop() may be called from inside dispatch()
        asyncio.get_running_loop().call_soon(self.dispatch)

    def on_drop(self, worker: Worker) -> None:
        pass

    async def monitor_heartbeats(self) -> None:
        interval = self.settings.heartbeat_interval_sec
        expiry = interval * self.settings.heartbeat_liveness
        while True:
            await asyncio.sleep(interval / 4)
            now = time.monotonic()
            for worker in list(self.workers.values()):
                if now - worker.last_seen > expiry:
                    self.drop(worker, "expired")

    # --- life -----------------------------------------------------------------------
    async def serve(self) -> None:
        raise NotImplementedError

    async def prepare(self) -> None:
        """What must be ready before the dispatcher says it is (local: its pool)."""

    def close(self) -> None:
        """Release what the dispatcher holds beyond its event loop."""

    async def run(self, ready_callback=None) -> None:
        await self.prepare()
        tasks = [asyncio.create_task(self.intake()), asyncio.create_task(self.serve())]
        if self.settings.mode != "local":
            tasks.append(asyncio.create_task(self.monitor_heartbeats()))
        subscribed = asyncio.create_task(self.subscribed.wait())
        await asyncio.wait([subscribed, *tasks], return_when=asyncio.FIRST_COMPLETED)
        if subscribed.done():
            if ready_callback:
                await ready_callback(self)
        else:
            subscribed.cancel()
        await run_until_stopped(self.stopping, tasks)

    def describe(self) -> dict:
        return {"mode": self.settings.mode, "pid": os.getpid()}


class LocalDispatcher(Dispatcher):
    """A process pool inside the dispatcher; one credit per process."""

    def __init__(self, settings: Settings, store: Store, listener=None):
        super().__init__(settings, store, listener)
        self.pool: TaskPool | None = None
        self.worker = Worker(LOCAL_WORKER, b"", settings.pool_processes)
        self.failure: str | None = None

    def total_processes(self) -> int:
        return self.settings.pool_processes

    def new_pool(self) -> TaskPool:
        limits = executor.Limits(self.settings.max_result_bytes, self.settings.memory_limit_mb * executor.MIB)
        return TaskPool(self.settings.pool_processes, limits, self.chunk_done, name="local pool",
                        on_broken=self.pool_broken)

    async def prepare(self) -> None:
        self.pool = self.new_pool()
        await self.pool.start()
        print(f"dispatcher: local pool of {self.settings.pool_processes} processes; {self.pool.memory_limit()}",
              file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close(grace_sec=0.5)

    def pool_broken(self, reason: str) -> None:
        """The pool's fork server died (a task killed it) or no process would start: the
        tasks it held go back to the queue (an infrastructure fault, retried at most
        max_task_attempts times, like those of a lost worker) and a new pool takes its
        place."""
        broken, self.pool = self.pool, None
        held = list(self.worker.held.values())
        self.worker.held.clear()
        self.event("pool_failed", LOCAL_WORKER, reason)
        self.requeue(held, "the local pool failed", LOCAL_WORKER)
        asyncio.get_running_loop().create_task(self.replace_pool(broken))

    async def replace_pool(self, broken: TaskPool) -> None:
        broken.close(grace_sec=0)
        pool = self.new_pool()
        try:
            await pool.start()
        except Exception as exc:  # no pool can start here: the dispatcher cannot go on
            pool.close(grace_sec=0)
            self.failure = f"the local pool failed and a new one did not start: {exc}"
            self.stopping.set()
            return
        self.pool = pool
        self.dispatch()

    def dispatch(self) -> None:
        if self.pool is None:
            return  # a new pool is starting
        while self.queue and self.pool.busy < self.settings.pool_processes:
            free = self.settings.pool_processes - self.pool.busy
            chunk = self.take_chunk(self.chunk_size(free), LOCAL_WORKER)
            for task in chunk:
                self.worker.held[task.task_id] = task
            self.sample_depth(self.worker)
            self.pool.submit(self.items(chunk), self.bodies_for(None, [chunk]), chunk)

    def chunk_done(self, chunk: list[Task], results: list) -> None:
        self.accept_results(results, self.worker)
        self.dispatch()

    async def serve(self) -> None:
        await self.stopping.wait()


class ZmqDispatcher(Dispatcher):
    """The modes with workers: one ROUTER socket bound to a loopback port."""

    mandatory = False

    def __init__(self, settings: Settings, store: Store, listener=None, host: str = "127.0.0.1"):
        import zmq
        import zmq.asyncio

        super().__init__(settings, store, listener)
        self.zmq = zmq
        self.context = zmq.asyncio.Context()
        self.socket = self.context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        # no high-water mark: the naive design has no flow control; the real push's
        # credits bound what it queues
        self.socket.setsockopt(zmq.SNDHWM, 0)
        self.socket.setsockopt(zmq.RCVHWM, 0)
        if self.mandatory:
            self.socket.setsockopt(zmq.ROUTER_MANDATORY, 1)
        if settings.port:
            # a dispatcher started again takes its predecessor's port: the workers'
            # sockets reconnect to it by themselves
            self.socket.bind(f"tcp://{host}:{settings.port}")
            port = settings.port
        else:
            port = self.socket.bind_to_random_port(f"tcp://{host}")
        self.endpoint = f"tcp://{host}:{port}"

    def describe(self) -> dict:
        return {**super().describe(), "endpoint": self.endpoint}

    def send(self, worker: Worker, message: dict, envelope: tuple = ()) -> bool:
        """Send to a worker; False (and the worker dropped) when ZeroMQ cannot route it."""
        try:
            self.socket.send_multipart([worker.identity, *envelope, protocol.pack(message)],
                                       flags=self.zmq.NOBLOCK)
            return True
        except self.zmq.ZMQError as exc:
            if exc.errno in (self.zmq.EHOSTUNREACH, self.zmq.EAGAIN):
                self.event("unroutable", worker.worker_id, exc.strerror)
                self.drop(worker, "unroutable")
                return False
            raise

    async def serve(self) -> None:
        while True:
            frames = await self.socket.recv_multipart()
            try:
                message = protocol.worker_message(frames[-1])
            except protocol.ProtocolError as exc:
                self.counters["bad_messages"] += 1
                print(f"dispatcher: ignored a message: {exc}", file=sys.stderr, flush=True)
                continue
            self.handle(frames[0], frames[1:-1], message)

    def seen(self, message: dict) -> Worker | None:
        worker = self.workers.get(message["worker"])
        if worker is not None:
            worker.last_seen = now = time.monotonic()
            if now - worker.published >= self.settings.heartbeat_interval_sec / 2:
                self.publish_worker(worker)  # the registry shows when each worker was last heard
        return worker

    def ask_to_register(self, identity: bytes, message: dict) -> None:
        """A worker this dispatcher does not know (dropped after a silence, or known to a
        dispatcher before this one): take its results, and tell it to say READY again."""
        self.counters["unregistered_messages"] += 1
        if message["kind"] == protocol.RESULTS:
            self.accept_results(message["results"], None)
        try:
            self.socket.send_multipart([identity, protocol.pack({"kind": protocol.REGISTER})], flags=self.zmq.NOBLOCK)
        except self.zmq.ZMQError:
            pass  # gone already

    def handle(self, identity: bytes, envelope: list, message: dict) -> None:
        raise NotImplementedError


class PushDispatcher(ZmqDispatcher):
    """Credit-based push: a worker is sent at most as many chunks as it has free
    processes; several chunks for one worker go in one message."""

    mandatory = True

    def handle(self, identity, envelope, message) -> None:
        kind = message["kind"]
        worker = self.seen(message)
        if kind == protocol.READY:
            if worker is None:
                worker = self.register(message["worker"], identity, int(message["processes"]),
                                       int(message["credit"]))
            else:
                worker.credit = int(message["credit"])
        elif worker is None:
            if kind != protocol.BYE:
                self.ask_to_register(identity, message)
            return
        elif kind == protocol.RESULTS:
            self.accept_results(message["results"], worker)
            worker.credit += int(message.get("credit", 0))
        elif kind == protocol.BYE:
            self.drop(worker, "left")
            return
        self.dispatch()

    def dispatch(self) -> None:
        while self.queue:
            ready = [w for w in self.workers.values() if w.credit > 0]
            if not ready:
                return
            free = sum(w.credit for w in ready)
            size = self.chunk_size(free)
            # the worker with the most credit first: an even spread over free processes
            worker = max(ready, key=lambda w: (w.credit, -w.last_seen))
            chunks = []
            while self.queue and worker.credit > 0 and len(chunks) < worker.credit:
                chunks.append(self.take_chunk(size, worker.worker_id))
            worker.credit -= len(chunks)
            for chunk in chunks:
                for task in chunk:
                    worker.held[task.task_id] = task
            message = {"kind": protocol.TASKS, "chunks": [self.items(c) for c in chunks],
                       "functions": self.bodies_for(worker, chunks)}
            self.sample_depth(worker)
            if not self.send(worker, message):
                continue  # dropped; its tasks are queued again


class PushNaiveDispatcher(ZmqDispatcher):
    """The seed's push: every task, on its own, to the next registered worker in turn."""

    mandatory = False

    def __init__(self, settings, store, listener=None, host="127.0.0.1"):
        super().__init__(settings, store, listener, host)
        self.turn = 0

    def handle(self, identity, envelope, message) -> None:
        kind = message["kind"]
        worker = self.seen(message)
        if kind == protocol.READY:
            if worker is None:
                self.register(message["worker"], identity, int(message["processes"]), 0)
        elif worker is None:
            self.ask_to_register(identity, message)
            return
        elif kind == protocol.RESULTS:
            self.accept_results(message["results"], worker)
        self.dispatch()

    def dispatch(self) -> None:
        order = list(self.workers.values())
        while self.queue and order:
            worker = order[self.turn % len(order)]
            self.turn += 1
            task = self.take_chunk(1, worker.worker_id)[0]
            worker.held[task.task_id] = task
            self.sample_depth(worker)
            # the whole function travels with every task
            self.send(worker, {"kind": protocol.TASK, "task": self.items([task])[0],
                               "function": self.functions[task.function_id]})


class PullDispatcher(ZmqDispatcher):
    """Workers ask (REQ); the dispatcher answers each request (ROUTER speaking REP's
    envelope), at once when it has work or the worker is busy, else when work arrives or
    a heartbeat interval has passed."""

    def __init__(self, settings, store, listener=None, host="127.0.0.1"):
        super().__init__(settings, store, listener, host)
        self.waiting: collections.OrderedDict[str, tuple] = collections.OrderedDict()

    def handle(self, identity, envelope, message) -> None:
        kind = message["kind"]
        worker = self.seen(message)
        if worker is None and kind in (protocol.PULL, protocol.READY):
            worker = self.register(message["worker"], identity, int(message.get("processes", 1)), 0)
        if worker is None:
            self.reply(identity, envelope, [], None)
            return
        worker.identity = identity
        if message.get("results"):
            self.accept_results(message["results"], worker)
        if kind == protocol.BYE:
            self.reply(identity, envelope, [], None)
            self.drop(worker, "left")
            return
        worker.credit = int(message.get("free", 0))
        busy = int(message.get("busy", 0))
        self.waiting.pop(worker.worker_id, None)
        if self.queue and worker.credit > 0:
            self.serve_worker(worker, envelope)
        elif busy > 0 or worker.credit == 0:
            self.reply(identity, envelope, [], worker)
        else:
            self.waiting[worker.worker_id] = (envelope, time.monotonic())
        self.dispatch()

    def reply(self, identity: bytes, envelope: list, chunks: list, worker: Worker | None) -> None:
        message = {"kind": protocol.TASKS, "chunks": [self.items(c) for c in chunks],
                   "functions": self.bodies_for(worker, chunks) if chunks else {}}
        try:
            self.socket.send_multipart([identity, *envelope, protocol.pack(message)], flags=self.zmq.NOBLOCK)
        except self.zmq.ZMQError:
            if worker is not None:
                self.drop(worker, "unroutable")

    def serve_worker(self, worker: Worker, envelope: list) -> None:
        size = self.chunk_size(worker.credit)
        chunks = []
        while self.queue and len(chunks) < worker.credit:
            chunks.append(self.take_chunk(size, worker.worker_id))
        for chunk in chunks:
            for task in chunk:
                worker.held[task.task_id] = task
        worker.credit -= len(chunks)
        self.sample_depth(worker)
        self.reply(worker.identity, envelope, chunks, worker)

    def dispatch(self) -> None:
        while self.queue and self.waiting:
            worker_id, (envelope, _) = self.waiting.popitem(last=False)
            worker = self.workers.get(worker_id)
            if worker is not None:
                self.serve_worker(worker, envelope)

    def on_drop(self, worker: Worker) -> None:
        self.waiting.pop(worker.worker_id, None)

    async def monitor_heartbeats(self) -> None:
        interval = self.settings.heartbeat_interval_sec
        monitor = asyncio.create_task(super().monitor_heartbeats())
        try:
            while True:
                await asyncio.sleep(interval / 4)
                now = time.monotonic()
                for worker_id, (envelope, since) in list(self.waiting.items()):
                    if now - since >= interval:
                        # a held request is answered empty after one interval: the worker
                        # asks again, which is its heartbeat
                        del self.waiting[worker_id]
                        worker = self.workers.get(worker_id)
                        if worker is not None:
                            self.reply(worker.identity, envelope, [], worker)
        finally:
            monitor.cancel()


DISPATCHERS = {"local": LocalDispatcher, "pull": PullDispatcher, "push": PushDispatcher,
               "push-naive": PushNaiveDispatcher}


async def serve(settings: Settings, ready_file: str | None = None) -> int:
    import redis.asyncio as aioredis

    # commands time out (Redis stalled counts as unreachable, the outbox retries); the
    # subscription waits as long as it takes
    client = aioredis.Redis.from_url(settings.redis_url, socket_timeout=REDIS_TIMEOUT_SEC,
                                     socket_connect_timeout=REDIS_TIMEOUT_SEC)
    listener = aioredis.Redis.from_url(settings.redis_url, socket_connect_timeout=REDIS_TIMEOUT_SEC)
    store = Store(client)
    dispatcher = DISPATCHERS[settings.mode](settings, store, listener)

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, dispatcher.stopping.set)

    async def announce(d: Dispatcher) -> None:
        info = d.describe()
        await client.hset(f"{store.keys.prefix}dispatcher", mapping={k: str(v) for k, v in info.items()})
        if ready_file:
            import json

            tmp = f"{ready_file}.tmp"
            with open(tmp, "w") as fh:
                json.dump(info, fh)
            os.replace(tmp, ready_file)

    try:
        await dispatcher.run(announce)
    finally:
        dispatcher.close()
        await client.aclose()
        await listener.aclose()
        if isinstance(dispatcher, ZmqDispatcher):
            dispatcher.socket.close(0)
            dispatcher.context.destroy(linger=0)
    if getattr(dispatcher, "failure", None):
        print(f"dispatcher: {dispatcher.failure}", file=sys.stderr, flush=True)
        return 1
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="the dispatch platform's task dispatcher")
    parser.add_argument("--mode", required=True, choices=MODES)
    parser.add_argument("--redis", required=True, help="redis://127.0.0.1:PORT/0")
    parser.add_argument("--port", type=int, help="the port of the ZeroMQ socket (default: a free one)")
    parser.add_argument("--pool-processes", type=int, default=1)
    parser.add_argument("--heartbeat-interval", type=float, default=1.0)
    parser.add_argument("--heartbeat-liveness", type=int, default=3)
    parser.add_argument("--max-chunk-tasks", type=int, default=64)
    parser.add_argument("--chunk-target-sec", type=float, default=0.002)
    parser.add_argument("--max-result-bytes", type=int, default=8 << 20)
    parser.add_argument("--task-time-limit", type=float, default=300.0,
                        help="a task's time limit (s) when its function has none of its own")
    parser.add_argument("--memory-limit-mb", type=int, default=4096,
                        help="local: address space of each pool process, MiB (Linux: RLIMIT_AS; 0: none)")
    parser.add_argument("--max-task-attempts", type=int, default=10,
                        help="dispatches of one task at most (retries after lost workers)")
    parser.add_argument("--ready-file", help="written (JSON: mode, endpoint, pid) once the dispatcher listens")
    args = parser.parse_args(argv)
    settings = Settings(mode=args.mode, redis_url=args.redis, pool_processes=args.pool_processes,
                        heartbeat_interval_sec=args.heartbeat_interval, heartbeat_liveness=args.heartbeat_liveness,
                        max_chunk_tasks=args.max_chunk_tasks, chunk_target_sec=args.chunk_target_sec,
                        max_result_bytes=args.max_result_bytes, task_time_limit_sec=args.task_time_limit,
                        memory_limit_mb=args.memory_limit_mb, max_task_attempts=args.max_task_attempts,
                        port=args.port)
    try:
        try:
            import uvloop

            return uvloop.run(serve(settings, args.ready_file))
        except ImportError:
            return asyncio.run(serve(settings, args.ready_file))
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
