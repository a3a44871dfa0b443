"""The pool of processes that runs tasks, for a worker (and for the dispatcher in local
mode): N processes, each running one chunk of tasks at a time, driven from the owner's
asyncio event loop. Unlike `concurrent.futures.ProcessPoolExecutor`, whose pool is broken
for good once one of its processes dies, this pool outlives any task:

- a pool process sends each task's result as soon as it has it, so the pool always knows
  which task a process is running: the first of its chunk without a result;
- a process that dies (the task called `os._exit`, crashed in native code, was killed by
  the OOM killer) fails that task as `crashed`, is replaced by a new process, and the
  rest of its chunk runs on the new one;
- a task running past its time limit (each task item carries its own, see
  `executor`) has its process killed (SIGKILL) and fails as `timeout`; the same
  replacement follows. The limit is counted from the moment the pool knew the task had
  started at the latest (the chunk's dispatch, or the previous task's result), so a task
  is never killed before its limit;
- the memory limit and the result checks are the process's own (`executor.serve`).

No task is retried for its own failure: the failing task ends FAILED once, and only the
tasks that had not started (or had finished without their result reaching the pool) run
again. Chunks wait in the pool's queue while every process is busy.

Processes are forked by the pool's own fork server (`zygote`: a clean interpreter
started once per pool, which also reports how each process ended), never from the owner
itself: the owner runs an event loop and ZeroMQ's threads by then, which a fork must not
copy. A process's death shows as its exit report from the fork server, after which the
pool reads whatever the process sent before it died.
"""

from __future__ import annotations

import asyncio
import collections
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

from parbench.studies.dispatch.platform import executor
from parbench.studies.dispatch.platform.executor import CRASHED, FAILED, TIMEOUT, Limits

# A process that dies before it says hello this many times in a row means the pool
# cannot start processes at all (a memory limit too small to start Python, say).
MAX_START_FAILURES = 3


class PoolError(RuntimeError):
    """The pool cannot start its processes; the message says why."""


def _death(exitcode: int | None) -> str:
    if exitcode is None:
        return "it ended"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"it was killed by {name}"
    return f"it exited with status {exitcode}"


@dataclass
class Chunk:
    """Tasks that run one after another in one process; done when every item has a
    result. `token` is the owner's (what `on_done` is called with)."""

    items: collections.deque
    token: object
    results: list = field(default_factory=list)


class Slot:
    """One pool process and the chunk it runs."""

    def __init__(self, index: int):
        self.index = index
        self.conn = None
        self.pid: int | None = None
        self.ready = False          # said hello
        self.chunk: Chunk | None = None
        self.head_since = 0.0       # when the first item without a result started, at the latest
        self.timer = None
        self.killed_for: str | None = None  # task id whose time limit had the process killed
        self.functions: set = set()  # function ids the process has been sent
        self.memory = ""


class TaskPool:
    """`processes` pool processes under `limits`; `on_done(token, results)` is called
    (in the event loop) once per submitted chunk with a result item for each of its
    tasks, in any order."""

    def __init__(self, processes: int, limits: Limits, on_done, name: str = "pool", on_broken=None):
        if processes < 1:
            raise ValueError(f"a pool needs at least 1 process (got {processes})")
        self.limits = limits
        self.on_done = on_done
        self.on_broken = on_broken  # called with the reason when no process can be started any more
        self.name = name
        self.slots = [Slot(i) for i in range(processes)]
        self.by_pid: dict[int, Slot] = {}
        self.queue: collections.deque[Chunk] = collections.deque()
        self.bodies: dict[str, bytes] = {}
        self.counters = collections.Counter()
        self.start_failures = 0
        self.loop: asyncio.AbstractEventLoop | None = None
        self.closed = False
        self.broken: str | None = None
        self.zygote: subprocess.Popen | None = None
        self.control: socket.socket | None = None
        self.reports: Connection | None = None
        self.started: collections.deque[int] = collections.deque()  # pids reported, not yet taken
        self.deferred: list = []  # exit reports read while a spawn waited for its pid
        self.exits: dict[int, int] = {}  # pid -> exit code, of processes not known to a slot yet

    # --- life ---------------------------------------------------------------------------
    async def start(self, timeout: float = 60.0) -> None:
        """Start the fork server and every process, and wait until each has said hello."""
        self.loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.zygote = subprocess.Popen(
            [sys.executable, "-m", "parbench.studies.dispatch.platform.zygote", "--fd", str(theirs.fileno()),
             "--max-result-bytes", str(self.limits.max_result_bytes),
             "--memory-limit-mb", str(self.limits.memory_limit_bytes // executor.MIB)],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
        theirs.close()
        self.control = ours
        self.reports = Connection(os.dup(ours.fileno()), writable=False)
        deadline = time.monotonic() + timeout
        while not self.reports.poll(0.05):
            if self.zygote.poll() is not None:
                raise PoolError(f"{self.name}: its fork server exited with status {self.zygote.returncode} "
                                f"(see the log above)")
            if time.monotonic() > deadline:
                raise PoolError(f"{self.name}: its fork server did not start within {timeout:.0f} s")
            await asyncio.sleep(0.01)
        kind, _ = self.reports.recv()
        if kind != "ready":
            raise PoolError(f"{self.name}: its fork server said {kind!r} instead of ready")
        self.loop.add_reader(self.reports.fileno(), self._reported)
        for slot in self.slots:
            self._spawn(slot)
        while not all(s.ready for s in self.slots):
            if self.broken:
                raise PoolError(self.broken)
            if time.monotonic() > deadline:
                raise PoolError(f"{self.name}: its processes did not start within {timeout:.0f} s")
            await asyncio.sleep(0.01)

    def memory_limit(self) -> str:
        """The memory limit in force in the pool's processes, in words."""
        return next((s.memory for s in self.slots if s.memory), "")

    def _spawn(self, slot: Slot) -> None:
        """A new process for the slot, forked by the fork server (a few milliseconds)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            socket.send_fds(self.control, [b"s"], [theirs.fileno()])
        finally:
            theirs.close()
        pid = self._wait_started()
        slot.conn = executor.Channel(ours)
        slot.pid = pid
        slot.ready, slot.functions, slot.killed_for = False, set(), None
        self.by_pid[pid] = slot
        self.loop.add_reader(slot.conn.fileno(), self._readable, slot)
        if pid in self.exits:  # it died at once
            self._exited(slot, self.exits.pop(pid))

    def _wait_started(self) -> int:
        """The pid of the process just forked. Reports of exits that come first wait
        until this spawn is done: handling one here would start another spawn inside
        this one, which would take this one's pid."""
        while not self.started:
            if not self.reports.poll(10):
                raise PoolError(f"{self.name}: the fork server did not answer within 10 s")
            message = self.reports.recv()
            if message[0] == "started":
                self.started.append(message[1])
            else:
                self.deferred.append(message)
                self.loop.call_soon(self._handle_deferred)
        return self.started.popleft()

    def _handle_deferred(self) -> None:
        while self.deferred:
            self._report(self.deferred.pop(0))

    def _reported(self) -> None:
        self._handle_deferred()
        while True:
            try:
                if not self.reports.poll():
                    return
                message = self.reports.recv()
            except (EOFError, OSError):
                self.loop.remove_reader(self.reports.fileno())
                if not self.closed:
                    self._broken(f"{self.name}: its fork server died (status {self.zygote.poll()})")
                return
            self._report(message)

    def _report(self, message) -> None:
        if message[0] == "started":
            self.started.append(message[1])
        elif message[0] == "exited":
            _, pid, code = message
            slot = self.by_pid.pop(pid, None)
            if slot is None:
                self.exits[pid] = code
            elif slot.pid == pid:
                self._exited(slot, code)

    def _broken(self, reason: str) -> None:
        self.broken = reason
        print(reason, file=sys.stderr, flush=True)
        if self.on_broken is not None:
            self.on_broken(reason)

    def close(self, grace_sec: float = 2.0) -> None:
        """Stop every process: each ends at its next chunk (its connection closed), those
        still running after `grace_sec` are killed with the fork server; none is left
        behind."""
        if self.closed:
            return
        self.closed = True
        for slot in self.slots:
            self._forget(slot)
            if slot.conn is not None:
                slot.conn.close()
                slot.conn = None
        if self.reports is not None:
            try:
                self.loop.remove_reader(self.reports.fileno())
            except (ValueError, RuntimeError):
                pass
        deadline = time.monotonic() + grace_sec
        alive = {s.pid for s in self.slots if s.pid is not None}
        while alive and self.reports is not None and time.monotonic() < deadline:
            try:
                if self.reports.poll(max(0.0, deadline - time.monotonic())):
                    message = self.reports.recv()
                    if message[0] == "exited":
                        alive.discard(message[1])
            except (EOFError, OSError):
                break
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.control is not None:
            self.control.close()  # the fork server ends (and takes what is left with it)
            self.reports.close()
        if self.zygote is not None:
            try:
                self.zygote.wait(5)
            except subprocess.TimeoutExpired:
                self.zygote.kill()
                self.zygote.wait(5)

    def _forget(self, slot: Slot) -> None:
        if self.loop is None:
            return
        if slot.conn is not None:
            try:
                self.loop.remove_reader(slot.conn.fileno())
            except (ValueError, RuntimeError):
                pass
        if slot.timer is not None:
            slot.timer.cancel()
            slot.timer = None

    # --- chunks -------------------------------------------------------------------------
    def submit(self, items: list, bodies: dict, token) -> None:
        """Queue a chunk of task items (`bodies`: function id -> body for every function
        they call); it runs as soon as a process is free."""
        self.bodies.update(bodies)
        self.queue.append(Chunk(collections.deque(items), token))
        self._assign()

    @property
    def busy(self) -> int:
        """Chunks submitted and not done yet."""
        return len(self.queue) + sum(1 for s in self.slots if s.chunk is not None)

    def _assign(self) -> None:
        for slot in self.slots:
            if not self.queue:
                return
            if slot.chunk is None and slot.conn is not None:
                self._send(slot, self.queue.popleft())

    def _send(self, slot: Slot, chunk: Chunk) -> None:
        needed = {item[2] for item in chunk.items} - slot.functions
        try:
            slot.conn.send((list(chunk.items), {fid: self.bodies[fid] for fid in needed}))
        except OSError:
            # the process is gone (its exit report will say so): the chunk waits for the
            # next process, none of it started
            self.queue.appendleft(chunk)
            return
        slot.functions |= needed
        slot.chunk = chunk
        slot.head_since = time.monotonic()
        self._arm(slot)

    def _arm(self, slot: Slot) -> None:
        """Make sure a timer will look at the running task's time limit."""
        if slot.timer is None and slot.chunk is not None and slot.chunk.items:
            limit = slot.chunk.items[0][executor.ITEM_TIME_LIMIT]
            slot.timer = self.loop.call_at(self._loop_time(slot.head_since + limit), self._check_time, slot)

    def _loop_time(self, monotonic: float) -> float:
        return self.loop.time() + (monotonic - time.monotonic())

    def _check_time(self, slot: Slot) -> None:
        slot.timer = None
        chunk = slot.chunk
        if chunk is None or not chunk.items or slot.killed_for is not None:
            return
        head = chunk.items[0]
        if time.monotonic() >= slot.head_since + head[executor.ITEM_TIME_LIMIT]:
            slot.killed_for = head[0]
            self.counters["timeouts"] += 1
            try:
                os.kill(slot.pid, signal.SIGKILL)  # its exit report comes to _exited
            except ProcessLookupError:
                pass
        else:
            self._arm(slot)

    # --- what the processes say ----------------------------------------------------------
    def _readable(self, slot: Slot) -> None:
        conn = slot.conn
        for message in conn.ready():
            self._message(slot, message)
            if slot.conn is not conn:
                return
        if conn.eof:
            # the process is gone; its exit report (from the fork server) handles it
            self.loop.remove_reader(conn.fileno())

    def _message(self, slot: Slot, message) -> None:
        kind = message[0]
        if kind == executor.HELLO:
            slot.ready, slot.memory = True, message[2]
            self.start_failures = 0
            return
        result = message[1]
        chunk = slot.chunk
        if chunk is None or not chunk.items or chunk.items[0][0] != result[0]:
            self.counters["unexpected_results"] += 1
            return
        chunk.items.popleft()
        chunk.results.append(result)
        slot.head_since = time.monotonic()
        if not chunk.items:
            slot.chunk = None
            self._done(chunk)
            self._assign()

    def _done(self, chunk: Chunk) -> None:
        self.on_done(chunk.token, chunk.results)

    def _exited(self, slot: Slot, exitcode: int) -> None:
        """A slot's process ended: fail the task it was running (crashed, or timeout when
        the pool killed it for its time limit), start a new process, and run the rest of
        the chunk on it."""
        conn = slot.conn
        if conn is not None:
            # what the process sent before it died counts: read it all first
            try:
                self.loop.remove_reader(conn.fileno())
            except (ValueError, RuntimeError):
                pass
            for message in conn.ready():
                self._message(slot, message)
            conn.close()
        slot.conn = None
        self._forget(slot)
        if self.closed:
            return
        chunk, slot.chunk = slot.chunk, None
        if not slot.ready:
            self.start_failures += 1
            self.counters["start_failures"] += 1
            print(f"{self.name}: a pool process died before it started ({_death(exitcode)})", file=sys.stderr,
                  flush=True)
        else:
            self.counters["replaced"] += 1
        if chunk is not None and chunk.items:
            head = chunk.items[0]
            now = time.monotonic()
            if slot.killed_for == head[0]:
                limit = head[executor.ITEM_TIME_LIMIT]
                error = (f"the task ran past its time limit of {limit:g} s (it hung or took too long); its process "
                         f"was killed and replaced")
                chunk.results.append(self._failure(head, TIMEOUT, error, slot, now))
                chunk.items.popleft()
            elif slot.killed_for is None and slot.ready:
                self.counters["crashes"] += 1
                error = (f"the process running the task died while it ran ({_death(exitcode)}): the task ended it "
                         f"(os._exit, a crash in native code) or something killed it (the OOM killer); the "
                         f"process was replaced")
                chunk.results.append(self._failure(head, CRASHED, error, slot, now))
                chunk.items.popleft()
            # the rest had not started (or its results were lost with the process): they
            # run on the new process
            if chunk.items:
                self.queue.appendleft(chunk)
            else:
                self._done(chunk)
        if self.start_failures >= MAX_START_FAILURES:
            self._broken(f"{self.name}: {self.start_failures} pool processes in a row died before they started "
                         f"(the last: {_death(exitcode)}); see the log above")
            return
        self._spawn(slot)
        self._assign()

    @staticmethod
    def _failure(item, kind: str, error: str, slot: Slot, now: float) -> list:
        return [item[0], item[1], FAILED, None, error, slot.head_since, now, slot.pid, kind]
