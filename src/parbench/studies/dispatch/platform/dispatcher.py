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
dropped and the tasks it held are queued again (a new attempt); only the first result
of a task's current attempt is stored, so each task ends COMPLETED or FAILED exactly
once.

Small tasks travel in chunks: one credit (a free process) takes a chunk of tasks that it
runs one after the other. A chunk is as long as the smallest of: `max_chunk_tasks`; the
queue spread over every process (`ceil(queued / processes)`, so that the queue is shared
out, not handed to the first free process); and `chunk_target_sec` divided by how long
a task of that function has taken so far (an exponential average of the run times the
workers report; 1 until one is known), so that long tasks travel one by one and tiny
ones by the dozen.

Every change is written to Redis in one pipelined round trip per turn of the event
loop: the RUNNING marks, results, the announcement of finished tasks, the registry of
workers and the queue depth of each worker (tasks sent to it and not yet returned).
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
from parbench.studies.dispatch.platform.lifecycle import run_until_stopped
from parbench.studies.dispatch.platform.store import COMPLETED, FAILED, QUEUED, Store

MODES = ("local", "pull", "push", "push-naive")
LOCAL_WORKER = "local"


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
    functions_sent: set = field(default_factory=set)
    state: str = "ready"

    def view(self) -> dict:
        return {"worker": self.worker_id, "processes": self.processes, "credit": self.credit,
                "held": len(self.held), "last_seen": self.last_seen, "registered": self.registered,
                "state": self.state}


class Outbox:
    """What changes during one turn of the event loop goes to Redis in one pipeline, in
    the order it happened: consecutive RUNNING marks are one script call, consecutive
    results another (a task's mark always comes before its result); finished tasks are
    announced in one message, depth samples and events in one push each."""

    MARKS, RESULTS, OP = "marks", "results", "op"

    def __init__(self, store: Store):
        self.store = store
        self.steps: list[list] = []  # [kind, items]
        self.finished: list = []
        self.depth: list = []
        self.events: list = []
        self.flushing = False

    def _append(self, kind: str, item) -> None:
        if self.steps and self.steps[-1][0] == kind and kind != self.OP:
            self.steps[-1][1].append(item)
        else:
            self.steps.append([kind, [item]])
        self._schedule()

    def mark(self, task_id: str, attempt: int, worker: str, t: float) -> None:
        self._append(self.MARKS, (task_id, attempt, worker, t))

    def result(self, task_id: str, worker: str, status: str, value, started: float, finished: float,
               stored: float, pid: int) -> None:
        self._append(self.RESULTS, (task_id, worker, status, value, started, finished, stored, pid))

    def add(self, op) -> None:
        """Any other write: a function of the pipeline."""
        self._append(self.OP, op)

    def done(self, item) -> None:
        self.finished.append(item)
        self._schedule()

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
        try:
            while self.steps or self.finished or self.depth or self.events:
                steps, self.steps = self.steps, []
                finished, self.finished = self.finished, []
                depth, self.depth = self.depth, []
                events, self.events = self.events, []
                pipe = self.store.redis.pipeline(transaction=False)
                for kind, items in steps:
                    if kind == self.MARKS:
                        self.store.mark_running(pipe, items)
                    elif kind == self.RESULTS:
                        self.store.store_results(pipe, items)
                    else:
                        for op in items:
                            op(pipe)
                if finished:
                    self.store.announce_done(pipe, finished)
                self.store.record_depth(pipe, depth)
                self.store.record_events(pipe, events)
                for attempt in range(5):
                    try:
                        await pipe.execute()
                        break
                    except (OSError, ConnectionError) as exc:
                        if attempt == 4:
                            raise
                        print(f"dispatcher: Redis write failed ({exc}); retrying", file=sys.stderr, flush=True)
                        await asyncio.sleep(0.1 * (attempt + 1))
        finally:
            self.flushing = False


class Dispatcher:
    """What every mode shares: intake from Redis, the queue, tasks in flight, results,
    the registry of workers and their heartbeats."""

    def __init__(self, settings: Settings, store: Store):
        self.settings = settings
        self.store = store
        self.outbox = Outbox(store)
        self.queue: collections.deque[Task] = collections.deque()
        self.inflight: dict[str, Task] = {}
        self.functions: dict[str, bytes] = {}
        self.durations: dict[str, float] = {}  # function id -> average run time of its tasks (s)
        self.workers: dict[str, Worker] = {}
        self.counters = collections.Counter()
        self.work_ready = asyncio.Event()
        self.stopping = asyncio.Event()

    # --- intake ---------------------------------------------------------------------
    async def intake(self) -> None:
        pubsub = self.store.redis.pubsub()
        await pubsub.subscribe(self.store.keys.new_channel)
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
            await self.load(ids)
            self.counters["announced"] += len(ids)
            self.dispatch()

    async def load(self, ids: list[str]) -> None:
        loaded = await self.store.load_tasks(ids)
        missing = {item[0] for item in loaded if item is not None and item[0] not in self.functions}
        for function_id in missing:
            body = await self.store.function_body(function_id)
            if body is not None:
                self.functions[function_id] = body
        for task_id, item in zip(ids, loaded):
            if item is None or item[2] != QUEUED:
                continue
            function_id, payload, _ = item
            task = Task(task_id, function_id, payload)
            if function_id not in self.functions:
                self.finish_unrunnable(task, f"function {function_id} is not registered")
                continue
            self.queue.append(task)

    def finish_unrunnable(self, task: Task, error: str) -> None:
        now = time.monotonic()
        self.outbox.mark(task.task_id, 1, "none", now)
        self.outbox.result(task.task_id, "none", FAILED, error, now, now, now, 0)
        self.outbox.done([task.task_id, FAILED, error])

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
            task.attempt += 1
            task.worker = worker
            self.inflight[task.task_id] = task
            chunk.append(task)
        for task in chunk:
            self.outbox.mark(task.task_id, task.attempt, worker, now)
        return chunk

    @staticmethod
    def items(chunk: list[Task]) -> list:
        return [[t.task_id, t.attempt, t.function_id, t.payload] for t in chunk]

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
        for task_id, attempt, status, value, error, started, finished, pid in results:
            task = self.inflight.get(task_id)
            if task is None or task.attempt != attempt:
                # a result of an attempt that was given up (its worker was dropped and the
                # task dispatched again): the task's result is the current attempt's
                self.counters["stale_results"] += 1
                continue
            del self.inflight[task_id]
            if worker is not None:
                worker.held.pop(task_id, None)
            took = max(0.0, finished - started)
            before = self.durations.get(task.function_id)
            self.durations[task.function_id] = took if before is None else 0.8 * before + 0.2 * took
            outcome = value if status == COMPLETED else error
            self.outbox.result(task_id, task.worker, status, outcome, started, finished, stored, pid)
            self.outbox.done([task_id, status, outcome])
            self.counters["completed" if status == COMPLETED else "failed"] += 1
        if worker is not None:
            self.sample_depth(worker)

    def requeue(self, tasks: list[Task], reason: str, worker_id: str) -> None:
        """Tasks whose worker is lost go back to the front of the queue."""
        for task in reversed(tasks):
            if self.inflight.get(task.task_id) is task:
                del self.inflight[task.task_id]
                self.queue.appendleft(task)
        ids = [t.task_id for t in tasks]
        self.outbox.add(lambda pipe: [self.store.mark_queued_again(pipe, tid) for tid in ids])
        if tasks:
            self.event("requeued", worker_id, f"{len(tasks)} tasks ({reason})")
        self.counters["requeued"] += len(tasks)

    # --- workers ----------------------------------------------------------------------
    def event(self, name: str, worker_id: str, detail: str = "") -> None:
        self.outbox.event([time.monotonic(), name, worker_id, detail])

    def sample_depth(self, worker: Worker) -> None:
        self.outbox.sample([time.monotonic(), worker.worker_id, len(worker.held)])

    def publish_worker(self, worker: Worker) -> None:
        view = worker.view()
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
        self.event(reason, worker.worker_id)
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

    async def run(self, ready_callback=None) -> None:
        self.subscribed = asyncio.Event()
        tasks = [asyncio.create_task(self.intake()), asyncio.create_task(self.serve())]
        if self.settings.mode != "local":
            tasks.append(asyncio.create_task(self.monitor_heartbeats()))
        await self.subscribed.wait()
        if ready_callback:
            await ready_callback(self)
        await run_until_stopped(self.stopping, tasks)

    def describe(self) -> dict:
        return {"mode": self.settings.mode, "pid": os.getpid()}


class LocalDispatcher(Dispatcher):
    """A process pool inside the dispatcher; one credit per process."""

    def __init__(self, settings: Settings, store: Store, pool):
        super().__init__(settings, store)
        self.pool = pool
        self.generation = 0  # a new pool after a broken one is a new generation
        self.free = settings.pool_processes
        self.worker = Worker(LOCAL_WORKER, b"", settings.pool_processes)

    def total_processes(self) -> int:
        return self.settings.pool_processes

    def dispatch(self) -> None:
        while self.queue and self.free > 0:
            chunk = self.take_chunk(self.chunk_size(self.free), LOCAL_WORKER)
            self.free -= 1
            for task in chunk:
                self.worker.held[task.task_id] = task
            self.sample_depth(self.worker)
            future = self.pool.submit(executor.run_chunk, self.items(chunk), self.bodies_for(None, [chunk]))
            asyncio.wrap_future(future).add_done_callback(
                lambda f, c=chunk, g=self.generation: self.chunk_done(f, c, g))

    def chunk_done(self, future, chunk: list[Task], generation: int) -> None:
        try:
            results = future.result()
        except Exception as exc:  # a pool process died (BrokenProcessPool): run the chunk again
            self.counters["pool_failures"] += 1
            for task in chunk:
                self.worker.held.pop(task.task_id, None)
            self.requeue(chunk, "pool failed", LOCAL_WORKER)
            if generation == self.generation:
                self.event("pool_failed", LOCAL_WORKER, repr(exc))
                self.pool = self.replace_pool()
                self.generation += 1
                self.free = self.settings.pool_processes
        else:
            if generation == self.generation:
                self.free += 1
            self.accept_results(results, self.worker)
        self.dispatch()

    def replace_pool(self):
        try:
            self.pool.shutdown(wait=False, cancel_futures=True)
        except Exception:
            pass
        return make_pool(self.settings, warm=False)

    async def serve(self) -> None:
        await self.stopping.wait()


class ZmqDispatcher(Dispatcher):
    """The modes with workers: one ROUTER socket bound to a loopback port."""

    mandatory = False

    def __init__(self, settings: Settings, store: Store, host: str = "127.0.0.1"):
        import zmq
        import zmq.asyncio

        super().__init__(settings, store)
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
            worker.last_seen = time.monotonic()
        return worker

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
            # not registered (dropped after a silence, or never said READY): it must
            # register again before it gets work
            self.counters["unregistered_messages"] += 1
            if kind == protocol.RESULTS:
                self.accept_results(message["results"], None)
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

    def __init__(self, settings, store, host="127.0.0.1"):
        super().__init__(settings, store, host)
        self.turn = 0

    def handle(self, identity, envelope, message) -> None:
        kind = message["kind"]
        worker = self.seen(message)
        if kind == protocol.READY:
            if worker is None:
                self.register(message["worker"], identity, int(message["processes"]), 0)
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

    def __init__(self, settings, store, host="127.0.0.1"):
        super().__init__(settings, store, host)
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


def make_pool(settings: Settings, warm: bool = True):
    return executor.make_pool(settings.pool_processes, settings.max_result_bytes, warm)


DISPATCHERS = {"pull": PullDispatcher, "push": PushDispatcher, "push-naive": PushNaiveDispatcher}


async def serve(settings: Settings, pool=None, ready_file: str | None = None) -> int:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(settings.redis_url)
    store = Store(client)
    if settings.mode == "local":
        dispatcher = LocalDispatcher(settings, store, pool)
    else:
        dispatcher = DISPATCHERS[settings.mode](settings, store)

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
        await client.aclose()
        if isinstance(dispatcher, ZmqDispatcher):
            dispatcher.socket.close(0)
            dispatcher.context.destroy(linger=0)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="the dispatch platform's task dispatcher")
    parser.add_argument("--mode", required=True, choices=MODES)
    parser.add_argument("--redis", required=True, help="redis://127.0.0.1:PORT/0")
    parser.add_argument("--pool-processes", type=int, default=1)
    parser.add_argument("--heartbeat-interval", type=float, default=1.0)
    parser.add_argument("--heartbeat-liveness", type=int, default=3)
    parser.add_argument("--max-chunk-tasks", type=int, default=64)
    parser.add_argument("--chunk-target-sec", type=float, default=0.002)
    parser.add_argument("--max-result-bytes", type=int, default=8 << 20)
    parser.add_argument("--ready-file", help="written (JSON: mode, endpoint, pid) once the dispatcher listens")
    args = parser.parse_args(argv)
    settings = Settings(mode=args.mode, redis_url=args.redis, pool_processes=args.pool_processes,
                        heartbeat_interval_sec=args.heartbeat_interval, heartbeat_liveness=args.heartbeat_liveness,
                        max_chunk_tasks=args.max_chunk_tasks, chunk_target_sec=args.chunk_target_sec,
                        max_result_bytes=args.max_result_bytes)
    pool = make_pool(settings) if args.mode == "local" else None
    try:
        try:
            import uvloop

            return uvloop.run(serve(settings, pool, args.ready_file))
        except ImportError:
            return asyncio.run(serve(settings, pool, args.ready_file))
    except KeyboardInterrupt:
        return 0
    finally:
        if pool is not None:
            executor.stop_pool(pool, grace_sec=0.5)


if __name__ == "__main__":
    raise SystemExit(main())
