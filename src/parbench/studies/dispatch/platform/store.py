"""The platform's state in Redis: registered functions, tasks with their status and
timestamps, results, and two channels (new task ids; finished tasks).

Keys (all under one prefix, so that one redis-server could host several platforms):

- `<p>fn:<id>`: hash `name`, `body` (cloudpickle bytes), `registered_unix`, and
  `time_limit_sec` when the function was registered with its own time limit;
- `<p>task:<id>`: hash `function_id`, `payload`, `status`, `attempts`, `worker`,
  `workers` (every worker it was sent to, in order, comma-separated), `result` or `error`
  and `error_kind` (one of `executor.ERROR_KINDS`), `completions` (how many results were
  stored: exactly 1 for a finished task), `pid` (the process that ran it), and the
  stage times `t_queued`, `t_dispatched` (last dispatch), `t_first_dispatched`,
  `t_started`, `t_finished`, `t_stored` (`time.monotonic()` seconds);
- `<p>tasks:open`: set of the ids of tasks not finished yet (QUEUED or RUNNING): what a
  dispatcher that starts (or restarts, or lost Redis for a while) must still run;
- `<p>tasks:new`: channel; a message is a comma-separated batch of new task ids;
- `<p>tasks:done`: channel; a message is a msgpack list of `[task_id, status, value,
  error_kind]` (value: the serialized result, or the error text), of results that were
  stored;
- `<p>workers`: hash worker id -> msgpack of the dispatcher's view of it (written by the
  dispatcher on every change and at least every heartbeat interval: registered, last
  seen, credit, tasks held, state);
- `<p>depth`: list of msgpack `[t, worker, tasks held]` samples of each worker's queue
  depth (the dispatcher appends one whenever a worker's count changes);
- `<p>events`: list of msgpack `[t, event, worker, detail]` (registered, expired, left,
  unroutable, requeued, recovered).

Status moves QUEUED -> RUNNING -> COMPLETED or FAILED; a task whose worker is lost goes
RUNNING -> QUEUED and is dispatched again (a new attempt). Only the dispatcher writes a
task after it is queued, and the script that stores a result stores it only when the task
is still open and the result is the current attempt's (and only then announces it), so a
task ends COMPLETED (or FAILED) exactly once whatever happens to its workers, to the
dispatcher (killed and started again) or to the connection to Redis.
"""

from __future__ import annotations

import time

from parbench.studies.dispatch.platform import protocol

QUEUED, RUNNING, COMPLETED, FAILED = "QUEUED", "RUNNING", "COMPLETED", "FAILED"
STATES = (QUEUED, RUNNING, COMPLETED, FAILED)
TERMINAL = (COMPLETED, FAILED)
TRANSITIONS = {QUEUED: {RUNNING}, RUNNING: {QUEUED, COMPLETED, FAILED}, COMPLETED: set(), FAILED: set()}

PREFIX = "pb:"
STAGE_FIELDS = ("t_queued", "t_first_dispatched", "t_dispatched", "t_started", "t_finished", "t_stored")


class TransitionError(ValueError):
    """A status change the state machine does not allow."""


def check_transition(old: str, new: str) -> None:
    if old not in TRANSITIONS:
        raise TransitionError(f"unknown status {old!r}; allowed: {', '.join(STATES)}")
    if new not in TRANSITIONS[old]:
        allowed = ", ".join(sorted(TRANSITIONS[old])) or "none (it is final)"
        raise TransitionError(f"a task cannot go from {old} to {new}; from {old}: {allowed}")


class Keys:
    def __init__(self, prefix: str = PREFIX):
        self.prefix = prefix
        self.new_channel = f"{prefix}tasks:new"
        self.open = f"{prefix}tasks:open"
        self.done_channel = f"{prefix}tasks:done"
        self.workers = f"{prefix}workers"
        self.depth = f"{prefix}depth"
        self.events = f"{prefix}events"

    def function(self, function_id: str) -> str:
        return f"{self.prefix}fn:{function_id}"

    def task(self, task_id: str) -> str:
        return f"{self.prefix}task:{task_id}"


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


# Batched writes run as Lua scripts: one command for a whole batch of tasks instead of
# one or two per task (the batch is written atomically, and the client spends its time
# on the batch, not on each command). Keys are built from the prefix in ARGV[1].
# Several ids go into one SADD/SREM (at most 1000 per call: Lua's unpack has a limit).
ADD_TASKS = """
local p = ARGV[1]
local ids = {}
for b = 2, #ARGV, 4 do
  redis.call('HSET', p .. 'task:' .. ARGV[b], 'function_id', ARGV[b + 1], 'payload', ARGV[b + 2],
             'status', 'QUEUED', 'attempts', 0, 'completions', 0, 't_queued', ARGV[b + 3])
  ids[#ids + 1] = ARGV[b]
end
for i = 1, #ids, 1000 do
  redis.call('SADD', p .. 'tasks:open', unpack(ids, i, math.min(i + 999, #ids)))
end
redis.call('PUBLISH', p .. 'tasks:new', table.concat(ids, ','))
return #ids
"""

LOAD_TASKS = """
local p = ARGV[1]
local out = {}
for i = 2, #ARGV do
  local v = redis.call('HMGET', p .. 'task:' .. ARGV[i], 'function_id', 'payload', 'status', 'attempts')
  for j = 1, 4 do out[#out + 1] = v[j] or false end
end
return out
"""

# marks only open tasks (a finished task is never made RUNNING again)
MARK_RUNNING = """
local p = ARGV[1]
for b = 2, #ARGV, 4 do
  local key = p .. 'task:' .. ARGV[b]
  local v = redis.call('HMGET', key, 'status', 'workers')
  if v[1] == 'QUEUED' or v[1] == 'RUNNING' then
    local attempt, worker, t = ARGV[b + 1], ARGV[b + 2], ARGV[b + 3]
    if attempt == '1' then
      redis.call('HSET', key, 'status', 'RUNNING', 'worker', worker, 'attempts', attempt, 't_dispatched', t,
                 'workers', worker, 't_first_dispatched', t)
    else
      redis.call('HSET', key, 'status', 'RUNNING', 'worker', worker, 'attempts', attempt, 't_dispatched', t,
                 'workers', v[2] and (v[2] .. ',' .. worker) or worker)
    end
  end
end
return 1
"""

REQUEUE = """
local p = ARGV[1]
for i = 2, #ARGV do
  local key = p .. 'task:' .. ARGV[i]
  if redis.call('HGET', key, 'status') == 'RUNNING' then redis.call('HSET', key, 'status', 'QUEUED') end
end
return 1
"""

# Stores a result only when its task is RUNNING and the result is of the task's current
# attempt (never a late one of an attempt given up, never a second one), then announces the stored ones in one message: ARGV[b + 10] is each result's
# [task_id, status, value, error_kind] packed with msgpack, and the message is a msgpack
# array of them (its header written here). Returns how many were stored.
STORE_RESULTS = """
local p = ARGV[1]
local done, ids = {}, {}
for b = 2, #ARGV, 11 do
  local key = p .. 'task:' .. ARGV[b]
  local v = redis.call('HMGET', key, 'status', 'attempts', 'completions')
  if v[1] == 'RUNNING' and v[2] == ARGV[b + 1] then
    local status = ARGV[b + 3]
    if status == 'COMPLETED' then
      redis.call('HSET', key, 'status', status, 'worker', ARGV[b + 2], 'result', ARGV[b + 4], 't_started', ARGV[b + 6],
                 't_finished', ARGV[b + 7], 't_stored', ARGV[b + 8], 'pid', ARGV[b + 9],
                 'completions', tonumber(v[3] or 0) + 1)
    else
      redis.call('HSET', key, 'status', status, 'worker', ARGV[b + 2], 'error', ARGV[b + 4], 'error_kind', ARGV[b + 5],
                 't_started', ARGV[b + 6], 't_finished', ARGV[b + 7], 't_stored', ARGV[b + 8], 'pid', ARGV[b + 9],
                 'completions', tonumber(v[3] or 0) + 1)
    end
    ids[#ids + 1] = ARGV[b]
    done[#done + 1] = ARGV[b + 10]
  end
end
for i = 1, #ids, 1000 do
  redis.call('SREM', p .. 'tasks:open', unpack(ids, i, math.min(i + 999, #ids)))
end
local n = #done
if n > 0 then
  local header
  if n < 16 then
    header = string.char(0x90 + n)
  elseif n < 65536 then
    header = string.char(0xdc, math.floor(n / 256), n % 256)
  else
    header = string.char(0xdd, math.floor(n / 16777216) % 256, math.floor(n / 65536) % 256,
                         math.floor(n / 256) % 256, n % 256)
  end
  redis.call('PUBLISH', p .. 'tasks:done', header .. table.concat(done))
end
return n
"""


def _in_pipeline(pipe, script, args: list) -> None:
    """Queue a registered script in an asyncio pipeline (calling the script object with
    `client=pipe` would return a coroutine that queues nothing); the pipeline loads it
    into Redis first if Redis does not know it."""
    pipe.scripts.add(script)
    pipe.evalsha(script.sha, 0, *args)


class Store:
    """The state, through an asyncio Redis client (`redis.asyncio.Redis`, bytes replies)."""

    def __init__(self, redis, prefix: str = PREFIX):
        self.redis = redis
        self.keys = Keys(prefix)
        self.add_script = redis.register_script(ADD_TASKS)
        self.load_script = redis.register_script(LOAD_TASKS)
        self.running_script = redis.register_script(MARK_RUNNING)
        self.requeue_script = redis.register_script(REQUEUE)
        self.results_script = redis.register_script(STORE_RESULTS)

    # --- functions ---------------------------------------------------------------------
    async def register_function(self, function_id: str, name: str, body: bytes,
                                time_limit_sec: float | None = None) -> None:
        mapping = {"name": name, "body": body, "registered_unix": time.time()}
        if time_limit_sec is not None:
            mapping["time_limit_sec"] = repr(float(time_limit_sec))
        await self.redis.hset(self.keys.function(function_id), mapping=mapping)

    async def function_exists(self, function_id: str) -> bool:
        return bool(await self.redis.exists(self.keys.function(function_id)))

    async def function_info(self, function_id: str) -> tuple[bytes, float | None] | None:
        """(body, its own time limit or None) of a registered function; None if unknown."""
        body, limit = await self.redis.hmget(self.keys.function(function_id), "body", "time_limit_sec")
        if body is None:
            return None
        return body, float(limit) if limit is not None else None

    # --- tasks: the gateway ------------------------------------------------------------
    async def add_tasks(self, tasks: list[tuple[str, str, bytes, float]]) -> None:
        """Queue tasks `(task_id, function_id, payload, t_queued)` and announce their ids
        in one message, in one command."""
        args = [self.keys.prefix]
        for task_id, function_id, payload, t_queued in tasks:
            args += [task_id, function_id, payload, repr(t_queued)]
        await self.add_script(keys=[], args=args)

    async def status(self, task_id: str) -> str | None:
        return _text(await self.redis.hget(self.keys.task(task_id), "status"))

    async def result(self, task_id: str) -> tuple[str | None, bytes | None, str | None, str | None]:
        """(status, result, error, error_kind) of a task (status None: unknown task)."""
        status, result, error, kind = await self.redis.hmget(self.keys.task(task_id), "status", "result", "error",
                                                             "error_kind")
        return _text(status), result, _text(error), _text(kind)

    # --- tasks: the dispatcher ---------------------------------------------------------
    async def load_tasks(self, task_ids: list[str]) -> list[tuple[str, bytes, str, int] | None]:
        """(function_id, payload, status, attempts) of each task (None for an unknown id)."""
        flat = await self.load_script(keys=[], args=[self.keys.prefix, *task_ids])
        out = []
        for i in range(0, len(flat), 4):
            function_id, payload, status, attempts = flat[i:i + 4]
            out.append(None if function_id is None else
                       (_text(function_id), payload, _text(status), int(attempts or 0)))
        return out

    async def open_tasks(self) -> list[str]:
        """The ids of every task not finished yet."""
        return [_text(t) for t in await self.redis.smembers(self.keys.open)]

    def mark_running(self, pipe, marks: list[tuple[str, int, str, float]]) -> None:
        """RUNNING for each `(task_id, attempt, worker, t_dispatched)` of an open task;
        the worker is appended to the task's `workers`."""
        args = [self.keys.prefix]
        for task_id, attempt, worker, t in marks:
            args += [task_id, attempt, worker, repr(t)]
        _in_pipeline(pipe, self.running_script, args)

    def mark_queued_again(self, pipe, task_ids: list[str]) -> None:
        """QUEUED again for each RUNNING task of `task_ids` (its worker was lost)."""
        _in_pipeline(pipe, self.requeue_script, [self.keys.prefix, *task_ids])

    def store_results(self, pipe, results: list[tuple]) -> None:
        """Each `(task_id, attempt, worker, status, value or error, error_kind, started,
        finished, stored, pid)`: the outcome, its stage times, one more completion and
        its announcement, for each one that is its task's current attempt (see
        STORE_RESULTS)."""
        args = [self.keys.prefix]
        for task_id, attempt, worker, status, value, kind, started, finished, stored, pid in results:
            if value is None:
                value = b"" if status == COMPLETED else "failed"
            args += [task_id, attempt, worker, status, value, kind or "", repr(started), repr(finished),
                     repr(stored), pid, protocol.pack([task_id, status, value, kind])]
        _in_pipeline(pipe, self.results_script, args)

    def record_depth(self, pipe, samples: list) -> None:
        if samples:
            pipe.rpush(self.keys.depth, *(protocol.pack(s) for s in samples))

    def record_events(self, pipe, events: list) -> None:
        if events:
            pipe.rpush(self.keys.events, *(protocol.pack(e) for e in events))

    def record_worker(self, pipe, worker: str, view: dict) -> None:
        pipe.hset(self.keys.workers, worker, protocol.pack(view))

    def forget_worker(self, pipe, worker: str) -> None:
        pipe.hdel(self.keys.workers, worker)


# --- synchronous reads, for the measuring client and the tests ------------------------------

TASK_FIELDS = ("function_id", "status", "attempts", "worker", "workers", "pid", "completions", "error",
               "error_kind", *STAGE_FIELDS)


def read_tasks(redis, task_ids: list[str], prefix: str = PREFIX) -> list[dict]:
    """Each task's fields (without payload and result) and the workers it was sent to,
    through a synchronous `redis.Redis` client, in batches of pipelined reads."""
    keys = Keys(prefix)
    out = []
    for start in range(0, len(task_ids), 1000):
        batch = task_ids[start:start + 1000]
        pipe = redis.pipeline(transaction=False)
        for task_id in batch:
            pipe.hmget(keys.task(task_id), *TASK_FIELDS)
        for task_id, values in zip(batch, pipe.execute()):
            row = {"task_id": task_id}
            for name, value in zip(TASK_FIELDS, values):
                value = _text(value)
                if name.startswith("t_") and value is not None:
                    value = float(value)
                elif name in ("attempts", "completions", "pid") and value is not None:
                    value = int(value)
                elif name == "workers":
                    value = value.split(",") if value else []
                row[name] = value
            out.append(row)
    return out


def read_workers(redis, prefix: str = PREFIX) -> dict[str, dict]:
    return {_text(k): protocol.unpack(v) for k, v in redis.hgetall(Keys(prefix).workers).items()}


def drain_list(redis, key: str) -> list:
    """Every entry of a list of msgpack samples, removing what was read."""
    pipe = redis.pipeline(transaction=True)
    pipe.lrange(key, 0, -1)
    pipe.delete(key)
    entries, _ = pipe.execute()
    return [protocol.unpack(e) for e in entries]
