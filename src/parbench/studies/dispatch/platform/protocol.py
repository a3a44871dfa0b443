"""The platform's own messages (between dispatcher and workers, and on the Redis
channel of finished tasks), packed with msgpack. Functions, arguments and results
inside them are opaque cloudpickle bytes.

Dispatcher <-> worker messages are dicts with a `kind`:

- worker -> dispatcher: `READY` (a worker joins: its id, processes and the credit it
  grants, i.e. how many chunks it can take now), `HEARTBEAT`, `RESULTS` (finished
  tasks, and the credit they free), `BYE` (a worker leaves; the tasks it still holds),
  `PULL` (pull mode: results, free slots and tasks still running, on a REQ socket);
- dispatcher -> worker: `TASKS` (chunks of tasks, each chunk run by one process, and the
  bodies of functions the worker has not been sent yet), `TASK` (push-naive: one task
  with its function body), `REGISTER` (the dispatcher does not know the worker, e.g. it
  was started again: the worker says READY again, with the credit it has free now).

A task item is `[task_id, attempt, function_id, payload, time_limit_sec]`; a result item
is `[task_id, attempt, status, value, error, started, finished, pid, error_kind]` where
value is the serialized result (COMPLETED) and error the error text and error_kind why it
failed (FAILED, see `executor.ERROR_KINDS`); times are `time.monotonic()` seconds, which
every process of one machine shares.
"""

from __future__ import annotations

import msgpack

READY, HEARTBEAT, RESULTS, BYE, PULL, TASKS, TASK, REGISTER = ("READY", "HEARTBEAT", "RESULTS", "BYE", "PULL", "TASKS",
                                                               "TASK", "REGISTER")
WORKER_KINDS = (READY, HEARTBEAT, RESULTS, BYE, PULL)


def pack(message) -> bytes:
    return msgpack.packb(message, use_bin_type=True)


def unpack(data: bytes):
    return msgpack.unpackb(data, raw=False, strict_map_key=False)


class ProtocolError(ValueError):
    """A message that is not one of the platform's."""


def worker_message(data: bytes) -> dict:
    """A message from a worker, checked for its kind and its worker id."""
    try:
        message = unpack(data)
    except Exception as exc:  # msgpack raises several types on garbage
        raise ProtocolError(f"undecodable message ({exc.__class__.__name__})") from None
    if not isinstance(message, dict) or message.get("kind") not in WORKER_KINDS:
        raise ProtocolError(f"unknown message kind {message.get('kind') if isinstance(message, dict) else message!r}")
    if not isinstance(message.get("worker"), str):
        raise ProtocolError("a worker message must carry its worker id")
    return message
