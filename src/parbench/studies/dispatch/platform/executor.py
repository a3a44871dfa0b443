"""What a pool process runs: the tasks it is sent, one after another, each timed around
the call of its function and checked, each result sent back as soon as it is ready.

A task's failure is never the process's: whatever the function raises (SystemExit and
KeyboardInterrupt too) fails the task with the error and its traceback; a result that
cannot be serialized or is over the size limit fails it too; a MemoryError under the
process's memory limit fails it as `memory`. What a process cannot report itself (its
death, a task running past its time limit) the pool that owns it reports
(`pool.TaskPool`). Every failure carries one of `ERROR_KINDS`, so that a client can
tell which it was.

Functions are deserialized once per process and kept by id (a function's body never
changes once registered).

The memory limit is RLIMIT_AS (the address space) on Linux, where the kernel enforces
it: an allocation past it fails and Python raises MemoryError. macOS defines RLIMIT_AS
as the resident-set limit (RLIMIT_RSS), which its kernel treats as a hint, not a limit;
there the limit is not set, `memory_limit()` says so, and a runaway task is stopped only
by the operating system (the process dies and the task fails as `crashed`).
"""

from __future__ import annotations

import os
import pickle
import signal
import socket
import struct
import sys
import time
import traceback
from dataclasses import dataclass

from parbench.studies.dispatch.platform import serialization

COMPLETED, FAILED = "COMPLETED", "FAILED"

# Why a task FAILED (the `error_kind` of a task; its `error` says it in words):
RAISED = "raised"                        # the function raised an exception
CRASHED = "crashed"                      # the process running it died (os._exit, a crash, a kill)
TIMEOUT = "timeout"                      # it ran past its time limit (hung, or slept too long)
MEMORY = "memory"                        # it allocated past the process's memory limit
RESULT_TOO_LARGE = "result_too_large"    # its serialized result is over the size limit
RESULT_UNSERIALIZABLE = "result_unserializable"  # its result cannot be serialized
WORKER_LOST = "worker_lost"              # the workers it was sent to were lost max_task_attempts times
UNREGISTERED = "unregistered"            # its function is not registered
ERROR_KINDS = (RAISED, CRASHED, TIMEOUT, MEMORY, RESULT_TOO_LARGE, RESULT_UNSERIALIZABLE, WORKER_LOST, UNREGISTERED)

# A task item is [task_id, attempt, function_id, payload, time_limit_sec]; a result item
# is [task_id, attempt, status, value, error, started, finished, pid, error_kind].
ITEM_TIME_LIMIT = 4

MIB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """What a pool process may use: the largest result it may return (bytes) and its
    address space (bytes; 0 for no limit)."""

    max_result_bytes: int = 8 << 20
    memory_limit_bytes: int = 4096 * MIB


_functions: dict[str, object] = {}
_max_result_bytes = serialization.DEFAULT_MAX_PAYLOAD_BYTES
_memory_limit_bytes = 0  # 0: none in force in this process


def memory_limit_supported() -> bool:
    """Whether this operating system enforces a per-process memory limit that the pool
    sets (RLIMIT_AS on Linux)."""
    return sys.platform.startswith("linux")


def memory_limit(limit_bytes: int) -> tuple[int, str]:
    """Set this process's memory limit: (the limit in force in bytes, 0 for none; a
    sentence saying what was done)."""
    if limit_bytes <= 0:
        return 0, "no per-process memory limit (configured 0)"
    if not memory_limit_supported():
        return 0, (f"no per-process memory limit on {sys.platform}: its RLIMIT_AS is the resident-set limit, "
                   f"which the kernel does not enforce")
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY and hard < limit_bytes:
        limit_bytes = hard
    resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, hard))
    return limit_bytes, f"RLIMIT_AS {limit_bytes // MIB} MiB per pool process"


def init_process(limits: Limits) -> str:
    """A pool process's setup: its limits; Ctrl+C and SIGTERM left to its owner (the
    pool stops it); on Linux, it dies with its parent. Returns what memory limit is in
    force, in words."""
    global _max_result_bytes, _memory_limit_bytes
    _max_result_bytes = limits.max_result_bytes
    # a pool process must not take the Ctrl+C meant for its worker, nor write a signal
    # into a wakeup file descriptor it inherited from an event loop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        signal.set_wakeup_fd(-1)
    except ValueError:
        pass
    die_with_parent()
    _memory_limit_bytes, words = memory_limit(limits.memory_limit_bytes)
    return words


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


def _memory_words() -> str:
    if _memory_limit_bytes:
        return f"the task allocated past the memory limit of {_memory_limit_bytes // MIB} MiB per process (RLIMIT_AS)"
    return "the task ran out of memory"


def run_task(item, bodies: dict) -> list:
    """One task item `[task_id, attempt, function_id, payload, time_limit_sec]` -> its
    result item `[task_id, attempt, status, value, error, started, finished, pid,
    error_kind]`."""
    task_id, attempt, function_id, payload = item[:4]
    pid = os.getpid()
    started = time.monotonic()

    def failed(kind: str, error: str, finished: float) -> list:
        return [task_id, attempt, FAILED, None, error, started, finished, pid, kind]

    # On a MemoryError nothing is built inside the handler: the traceback still holds
    # what the task allocated until the handler ends.
    out_of_memory = False
    try:
        fn = _function(function_id, bodies)
        args, kwargs = serialization.call_arguments(payload)
        started = time.monotonic()
        value = fn(*args, **kwargs)
        finished = time.monotonic()
    except MemoryError:
        out_of_memory = True
    except BaseException as exc:  # the task's failure, whatever it raised (SystemExit too)
        finished = time.monotonic()
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return failed(RAISED, f"{text}\n{traceback.format_exc(limit=-3)}", finished)
    if out_of_memory:
        return failed(MEMORY, f"MemoryError: {_memory_words()}", time.monotonic())
    try:
        data = serialization.serialize(value)
    except MemoryError:
        out_of_memory = True
    except BaseException as exc:
        return failed(RESULT_UNSERIALIZABLE, f"the result cannot be serialized: {exc!r}", finished)
    if out_of_memory:
        value = None
        return failed(MEMORY, f"MemoryError while serializing the result: {_memory_words()}", finished)
    if len(data) > _max_result_bytes:
        return failed(RESULT_TOO_LARGE, f"the result is {len(data)} bytes, larger than the limit of "
                                        f"{_max_result_bytes} bytes", finished)
    return [task_id, attempt, COMPLETED, data, None, started, finished, pid, None]


# --- the pool process's loop -------------------------------------------------------------------

HELLO, RESULT = "hello", "result"
_HEADER = struct.Struct("<I")


class Channel:
    """Messages (pickles with a 4-byte length in front) over a connected stream socket.
    A message is written in one call; the reading side of a pool takes everything that
    has arrived in one call (`ready`) and splits it, so that a chunk of tiny tasks, one
    result message each, costs its owner one read per wakeup, not three per task."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buffer = bytearray()
        self.eof = False

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, obj) -> None:
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        self.sock.sendall(_HEADER.pack(len(data)) + data)

    def recv(self):
        """The next message, waiting for it (EOFError when the other side is gone)."""
        while True:
            messages = self._split(limit=1)
            if messages:
                return messages[0]
            data = self.sock.recv(1 << 16)
            if not data:
                raise EOFError("the other side closed the connection")
            self.buffer += data

    def ready(self) -> list:
        """Every whole message that has arrived, without waiting; `eof` tells whether the
        other side is gone."""
        while not self.eof:
            try:
                data = self.sock.recv(1 << 20, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self.eof = True
                break
            if not data:
                self.eof = True
                break
            self.buffer += data
        return self._split()

    def _split(self, limit: int | None = None) -> list:
        out, at, size = [], 0, len(self.buffer)
        while size - at >= 4 and (limit is None or len(out) < limit):
            n = _HEADER.unpack_from(self.buffer, at)[0]
            if size - at - 4 < n:
                break
            out.append(pickle.loads(memoryview(self.buffer)[at + 4:at + 4 + n]))
            at += 4 + n
        if at:
            del self.buffer[:at]
        return out

    def close(self) -> None:
        self.sock.close()


def serve(sock: socket.socket, limits: Limits) -> None:
    """The life of a pool process (forked by the pool's fork server): say hello (its pid
    and its memory limit), then run each chunk `(items, new function bodies)` it is sent,
    sending every task's result back as soon as it is ready (so that the pool always
    knows which task is running), until the pool closes the connection."""
    words = init_process(limits)
    channel = Channel(sock)
    bodies: dict[str, bytes] = {}
    try:
        channel.send((HELLO, os.getpid(), words))
        while True:
            items, new = channel.recv()
            bodies.update(new)
            for item in items:
                result = run_task(item, bodies)
                channel.send((RESULT, result))
    except (EOFError, OSError):
        os._exit(0)  # the pool closed the connection: it wants no more of this process


# --- a plain pool (the processpool peer) ---------------------------------------------------------

def warm_up(_i: int = 0) -> int:
    """Run once per pool process at start, so that a pool is ready before it is
    measured (its processes exist and have imported what tasks need)."""
    return os.getpid()


def make_pool(processes: int, max_result_bytes: int, warm: bool = True):
    """A `concurrent.futures.ProcessPoolExecutor` of `processes` processes (the
    processpool peer). On Linux they are forked, all at once on the first submission."""
    import concurrent.futures
    import multiprocessing

    method = "fork" if sys.platform.startswith("linux") else None
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=processes, mp_context=multiprocessing.get_context(method),
        initializer=init_process, initargs=(Limits(max_result_bytes, 0),))
    if warm:
        list(pool.map(warm_up, range(processes * 2)))
    return pool
