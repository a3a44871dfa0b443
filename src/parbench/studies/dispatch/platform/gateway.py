"""The platform's HTTP gateway: a FastAPI app, served by uvicorn on a loopback address.

    POST /register_function   {"name": str, "payload": base64 cloudpickle of the function,
                               "time_limit_sec": optional, the function's own time limit per task}
                              -> {"function_id": str}
    POST /execute_function    {"function_id": str, "payload": base64 cloudpickle of (args, kwargs),
                               "wait_sec": optional seconds to wait for the result}
                              -> {"task_id": str, "status": str[, "result": base64 | "error": str, "error_kind": str]}
    POST /execute_batch       {"function_id": str, "payloads": [base64, ...], "wait_sec": optional}
                              -> {"task_ids": [...], "statuses": [...], "results": [...], "errors": [...],
                                  "error_kinds": [...]}
    GET  /status/{task_id}    -> {"task_id": str, "status": str}
    GET  /result/{task_id}?wait_sec=S
                              -> {"task_id": str, "status": str[, "result": base64 | "error": str, "error_kind": str]}

Every request needs `Authorization: Bearer <token>`, the token generated for the run
(401 otherwise). A body over the size limit gets 413, one that has not all arrived within
`max_wait_sec` 408, a malformed one 400 (with what is wrong), an unknown function or task
404; Redis being unreachable (or not answering in
time) is a 503, and the gateway serves again as soon as Redis is back, without a
restart. The gateway never unpickles what it is sent: it checks sizes and base64 and
stores the bytes. A FAILED task's answer carries `error_kind`, one of
`executor.ERROR_KINDS` (raised, crashed, timeout, memory, result_too_large,
result_unserializable, worker_lost, unregistered), and the error in words.

Waiting (`wait_sec`): the gateway holds the request until the task is finished or the
time is up, woken by the channel of finished tasks, so a client can submit a task and
see its result in one request; when the time is up it answers with the current status
and the client asks GET /result later. No request is held longer than
max(its `wait_sec`, `store_timeout_sec`): every call to Redis is bounded by what is left
of that budget. New tasks that arrive together are written to Redis in one pipelined
round trip (and announced in one message).

Run by the launcher as `python -m parbench.studies.dispatch.platform.gateway`, configured
by environment variables (see `Settings.from_environment`).
"""

from __future__ import annotations

import asyncio
import hmac
import os
import time
import uuid
from dataclasses import dataclass

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from parbench.studies.dispatch.platform import protocol, serialization
from parbench.studies.dispatch.platform.store import COMPLETED, TERMINAL, Store

TOKEN_ENV = "PARBENCH_DISPATCH_TOKEN"
REDIS_ENV = "PARBENCH_DISPATCH_REDIS"
LIMIT_ENV = "PARBENCH_DISPATCH_MAX_REQUEST_BYTES"
MAX_WAIT_ENV = "PARBENCH_DISPATCH_MAX_WAIT_SEC"
MAX_BATCH_ENV = "PARBENCH_DISPATCH_MAX_BATCH_TASKS"
STORE_TIMEOUT_ENV = "PARBENCH_DISPATCH_STORE_TIMEOUT_SEC"
# The longest time limit a function may ask for (s).
MAX_TIME_LIMIT_SEC = 86400.0


@dataclass
class Settings:
    token: str
    redis_url: str
    max_request_bytes: int = 8 << 20
    max_wait_sec: float = 60.0
    max_batch_tasks: int = 100_000
    # the longest a request without a wait may take on Redis before it gets a 503 (s)
    store_timeout_sec: float = 2.0

    @classmethod
    def from_environment(cls) -> "Settings":
        token = os.environ.get(TOKEN_ENV, "")
        if len(token) < 16:
            raise SystemExit(f"gateway: {TOKEN_ENV} must hold the run's bearer token (at least 16 characters)")
        return cls(token=token, redis_url=os.environ[REDIS_ENV],
                   max_request_bytes=int(os.environ.get(LIMIT_ENV, 8 << 20)),
                   max_wait_sec=float(os.environ.get(MAX_WAIT_ENV, 60.0)),
                   max_batch_tasks=int(os.environ.get(MAX_BATCH_ENV, 100_000)),
                   store_timeout_sec=float(os.environ.get(STORE_TIMEOUT_ENV, 2.0)))


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def json_response(body, status: int = 200, headers: dict | None = None) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


def error_response(status: int, message: str) -> Response:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return json_response({"error": message, "status": status}, status, headers)


class BearerAndSizeGuard:
    """ASGI middleware: refuses a request without the run's token (401) and one whose
    declared body is over the limit (413) before any endpoint runs."""

    def __init__(self, app, token: str, max_request_bytes: int):
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.max_request_bytes = max_request_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        if not hmac.compare_digest(headers.get(b"authorization", b""), self.expected):
            return await error_response(401, "missing or wrong bearer token (Authorization: Bearer <token>)")(
                scope, receive, send)
        length = headers.get(b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                return await error_response(400, "Content-Length is not a number")(scope, receive, send)
            if declared > self.max_request_bytes:
                return await error_response(
                    413, f"request body of {declared} bytes is over the limit of {self.max_request_bytes} bytes")(
                    scope, receive, send)
        return await self.app(scope, receive, send)


class TaskWriter:
    """Coalesces the tasks of concurrent requests into one pipelined write: a request
    adds its tasks and waits; one flush writes everything added since the last one."""

    def __init__(self, store: Store):
        self.store = store
        self.pending: list[tuple[list, asyncio.Future]] = []
        self.flushing = False

    async def add(self, tasks: list) -> None:
        done = asyncio.get_running_loop().create_future()
        self.pending.append((tasks, done))
        if not self.flushing:
            self.flushing = True
            asyncio.get_running_loop().create_task(self._flush())
        await done

    async def _flush(self) -> None:
        try:
            while self.pending:
                batch, self.pending = self.pending, []
                try:
                    await self.store.add_tasks([t for tasks, _ in batch for t in tasks])
                except Exception as exc:
                    for _, done in batch:
                        if not done.done():
                            done.set_exception(exc)
                else:
                    for _, done in batch:
                        if not done.done():
                            done.set_result(None)
        finally:
            self.flushing = False


class Waiters:
    """Futures of requests waiting for tasks to finish, woken by the channel of finished
    tasks (one subscription for the whole gateway). Requests waiting for the same task
    share its future; it is forgotten when the last of them stops waiting."""

    def __init__(self):
        self.entries: dict[str, list] = {}  # task id -> [future, requests waiting]

    def future(self, task_id: str) -> asyncio.Future:
        entry = self.entries.get(task_id)
        if entry is None:
            entry = self.entries[task_id] = [asyncio.get_running_loop().create_future(), 0]
        entry[1] += 1
        return entry[0]

    def release(self, task_ids) -> None:
        for task_id in task_ids:
            entry = self.entries.get(task_id)
            if entry is not None:
                entry[1] -= 1
                if entry[1] <= 0:
                    del self.entries[task_id]

    def finished(self, items) -> None:
        for task_id, status, value, kind in items:
            entry = self.entries.pop(task_id, None)
            if entry is not None and not entry[0].done():
                entry[0].set_result((status, value, kind))

    async def listen(self, redis, channel: str, store: Store | None = None) -> None:
        """Wake waiting requests from the channel of finished tasks. After every
        subscription (the first, and each one after Redis came back) the tasks still
        waited for are read from the store, so that none waits out its whole wait for an
        announcement made while nobody listened."""
        while True:
            pubsub = redis.pubsub()
            try:
                await pubsub.subscribe(channel)
                if store is not None and self.entries:
                    await self.catch_up(store)
                async for message in pubsub.listen():
                    if message["type"] == "message":
                        self.finished(protocol.unpack(message["data"]))
            except asyncio.CancelledError:
                raise
            except Exception:
                # Redis gone for a moment: waiting requests fall back to reading the state
                # when their wait ends; subscribe again.
                await asyncio.sleep(0.2)
            finally:
                try:
                    await pubsub.aclose()
                except Exception:  # the connection is gone already
                    pass


    async def catch_up(self, store: Store) -> None:
        ids = list(self.entries)
        outcomes = await asyncio.gather(*(store.result(t) for t in ids))
        self.finished([(t, status, value if status == COMPLETED else error, kind)
                       for t, (status, value, error, kind) in zip(ids, outcomes) if status in TERMINAL])


class Budget:
    """The time a request may still take: every call to Redis is bounded by it."""

    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return max(0.0, self.end - time.monotonic())


def _body_fields(body: bytes, required: dict) -> dict:
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, f"the body is not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ApiError(400, "the body must be a JSON object")
    for name, kind in required.items():
        if name not in doc:
            raise ApiError(400, f"missing field {name!r}")
        if not isinstance(doc[name], kind):
            raise ApiError(400, f"field {name!r} must be {kind.__name__ if isinstance(kind, type) else kind}")
    return doc


def _wait_sec(value, settings: Settings) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ApiError(400, "wait_sec must be a number of seconds")
    try:
        wait = float(value)
    except ValueError:
        raise ApiError(400, f"wait_sec must be a number of seconds, got {value!r}") from None
    if not 0 <= wait <= settings.max_wait_sec:
        raise ApiError(400, f"wait_sec {wait} is out of range; allowed: 0 to {settings.max_wait_sec}")
    return wait


def _time_limit(value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_TIME_LIMIT_SEC:
        raise ApiError(400, f"time_limit_sec must be a number of seconds above 0 and at most {MAX_TIME_LIMIT_SEC:g}, "
                            f"got {value!r}")
    return float(value)


def _outcome(task_id: str, status: str, value, kind=None) -> dict:
    doc = {"task_id": task_id, "status": status}
    if status == COMPLETED:
        doc["result"] = serialization.encode(value or b"")
    elif status in TERMINAL:
        doc["error"] = value.decode() if isinstance(value, bytes) else value
        doc["error_kind"] = kind
    return doc


def create_app(settings: Settings) -> FastAPI:
    import redis.asyncio as aioredis

    state: dict = {}

    async def lifespan(app):
        timeout = settings.store_timeout_sec
        client = aioredis.Redis.from_url(settings.redis_url, max_connections=64, socket_timeout=timeout,
                                         socket_connect_timeout=timeout)
        # the subscription's own client: it waits for announcements as long as it takes
        subscriber = aioredis.Redis.from_url(settings.redis_url, socket_connect_timeout=timeout)
        state["store"] = store = Store(client)
        state["writer"] = TaskWriter(store)
        state["waiters"] = waiters = Waiters()
        state["functions"] = set()
        listener = asyncio.get_running_loop().create_task(waiters.listen(subscriber, store.keys.done_channel, store))
        try:
            yield
        finally:
            listener.cancel()
            await client.aclose()
            await subscriber.aclose()

    app = FastAPI(title="parbench dispatch gateway", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None)

    @app.exception_handler(ApiError)
    async def _api_error(request, exc: ApiError):
        return error_response(exc.status, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request, exc: RequestValidationError):
        where = "; ".join(f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}" for e in exc.errors())
        return error_response(400, f"malformed request: {where}")

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request, exc: StarletteHTTPException):
        message = {404: f"no such endpoint: {request.method} {request.url.path}",
                   405: f"method {request.method} is not allowed on {request.url.path}"}.get(exc.status_code, exc.detail)
        return error_response(exc.status_code, message)

    async def read_body(request: Request) -> bytes:
        """The body, refused past the size limit (413) or when it has not all arrived
        within max_wait_sec (408): a slow client holds no request longer than that."""
        chunks, size = [], 0

        async def read() -> None:
            nonlocal size
            async for chunk in request.stream():
                size += len(chunk)
                if size > settings.max_request_bytes:
                    raise ApiError(413, f"request body is over the limit of {settings.max_request_bytes} bytes")
                chunks.append(chunk)

        try:
            await asyncio.wait_for(read(), settings.max_wait_sec)
        except asyncio.TimeoutError:
            raise ApiError(408, f"the request body did not arrive within {settings.max_wait_sec:g} s") from None
        return b"".join(chunks)

    async def known_function(function_id: str, budget: Budget) -> None:
        if function_id in state["functions"]:
            return
        if not await redis_call(state["store"].function_exists(function_id), budget):
            raise ApiError(404, f"unknown function id {function_id!r}; register it with POST /register_function")
        state["functions"].add(function_id)

    def budget(wait: float = 0.0) -> Budget:
        """A request's budget: its wait, and at least the store's timeout."""
        return Budget(max(wait, settings.store_timeout_sec))

    async def redis_call(coro, budget: Budget):
        """A call to Redis within what is left of the request's budget: a 503 when Redis
        is unreachable, fails or does not answer in time."""
        left = budget.left()
        try:
            if left <= 0:
                raise asyncio.TimeoutError
            return await asyncio.wait_for(coro, left)
        except ApiError:
            raise
        except asyncio.TimeoutError:
            raise ApiError(503, "the state store did not answer in time (within the request's "
                                f"{max(settings.store_timeout_sec, left):g} s)") from None
        except (OSError, ConnectionError) as exc:
            raise ApiError(503, f"the state store is unreachable: {exc}") from None
        except Exception as exc:
            if exc.__class__.__module__.startswith("redis"):
                raise ApiError(503, f"the state store failed: {exc}") from None
            raise
        finally:
            if asyncio.iscoroutine(coro):
                coro.close()  # never awaited when the budget was spent already

    async def wait_for(task_ids: list[str], futures: list, until: float) -> dict:
        """task id -> (status, value, kind) for those that finished before `until`
        (time.monotonic())."""
        done = {}
        if futures:
            # asyncio.wait never cancels what it waits for: other requests may share a future
            await asyncio.wait(futures, timeout=max(0.0, until - time.monotonic()))
            for task_id, fut in zip(task_ids, futures):
                if fut.done() and not fut.cancelled():
                    done[task_id] = fut.result()
            state["waiters"].release(task_ids)
        return done

    def wait_until(wait: float, budget: Budget) -> float:
        """When a request stops waiting for its tasks: at the end of its wait, leaving a
        moment of the budget to read the current status."""
        reserve = min(0.5, settings.store_timeout_sec / 4, wait / 4)
        return min(time.monotonic() + wait, budget.end - reserve)

    @app.post("/register_function")
    async def register_function(request: Request):
        doc = _body_fields(await read_body(request), {"name": str, "payload": str})
        if not doc["name"].strip() or len(doc["name"]) > 200:
            raise ApiError(400, "name must be 1 to 200 characters")
        time_limit = _time_limit(doc.get("time_limit_sec"))
        try:
            body = serialization.decode(doc["payload"], "payload", settings.max_request_bytes)
        except serialization.PayloadTooLarge as exc:
            raise ApiError(413, str(exc)) from None
        except serialization.PayloadError as exc:
            raise ApiError(400, str(exc)) from None
        function_id = uuid.uuid4().hex
        await redis_call(state["store"].register_function(function_id, doc["name"], body, time_limit), budget())
        state["functions"].add(function_id)
        return json_response({"function_id": function_id})

    def decode_payload(text, what: str) -> bytes:
        try:
            return serialization.decode(text, what, settings.max_request_bytes)
        except serialization.PayloadTooLarge as exc:
            raise ApiError(413, str(exc)) from None
        except serialization.PayloadError as exc:
            raise ApiError(400, str(exc)) from None

    @app.post("/execute_function")
    async def execute_function(request: Request):
        doc = _body_fields(await read_body(request), {"function_id": str, "payload": str})
        wait = _wait_sec(doc.get("wait_sec"), settings)
        limit = budget(wait)
        payload = decode_payload(doc["payload"], "payload")
        await known_function(doc["function_id"], limit)
        task_id = uuid.uuid4().hex
        futures = [state["waiters"].future(task_id)] if wait > 0 else []
        try:
            await redis_call(state["writer"].add([(task_id, doc["function_id"], payload, time.monotonic())]), limit)
        except ApiError:
            state["waiters"].release([task_id])
            raise
        done = await wait_for([task_id], futures, wait_until(wait, limit))
        if task_id in done:
            return json_response(_outcome(task_id, *done[task_id]))
        if wait == 0:
            return json_response({"task_id": task_id, "status": "QUEUED"})
        return json_response(_outcome(task_id, *await current(task_id, limit)))

    @app.post("/execute_batch")
    async def execute_batch(request: Request):
        doc = _body_fields(await read_body(request), {"function_id": str, "payloads": list})
        wait = _wait_sec(doc.get("wait_sec"), settings)
        limit = budget(wait)
        if not doc["payloads"]:
            raise ApiError(400, "payloads is empty")
        if len(doc["payloads"]) > settings.max_batch_tasks:
            raise ApiError(413, f"{len(doc['payloads'])} tasks in one batch; the limit is {settings.max_batch_tasks}")
        payloads = [decode_payload(p, f"payloads[{i}]") for i, p in enumerate(doc["payloads"])]
        await known_function(doc["function_id"], limit)
        task_ids = [uuid.uuid4().hex for _ in payloads]
        futures = [state["waiters"].future(t) for t in task_ids] if wait > 0 else []
        now = time.monotonic()
        try:
            await redis_call(state["writer"].add(
                [(t, doc["function_id"], p, now) for t, p in zip(task_ids, payloads)]), limit)
        except ApiError:
            state["waiters"].release(task_ids)
            raise
        done = await wait_for(task_ids, futures, wait_until(wait, limit))
        outcomes = [_outcome(t, *done[t]) if t in done else {"task_id": t, "status": "QUEUED"} for t in task_ids]
        return json_response({"task_ids": task_ids, "statuses": [o["status"] for o in outcomes],
                              "results": [o.get("result") for o in outcomes],
                              "errors": [o.get("error") for o in outcomes],
                              "error_kinds": [o.get("error_kind") for o in outcomes]})

    async def current(task_id: str, limit: Budget) -> tuple:
        """(status, result or error, error_kind) of a task as stored now (404 if unknown)."""
        status, value, error, kind = await redis_call(state["store"].result(task_id), limit)
        if status is None:
            raise ApiError(404, f"unknown task id {task_id!r}")
        return status, value if status == COMPLETED else error, kind

    @app.get("/status/{task_id}")
    async def status(task_id: str):
        current = await redis_call(state["store"].status(task_id), budget())
        if current is None:
            raise ApiError(404, f"unknown task id {task_id!r}")
        return json_response({"task_id": task_id, "status": current})

    @app.get("/result/{task_id}")
    async def result(task_id: str, wait_sec: str | None = None):
        wait = _wait_sec(wait_sec, settings)
        limit = budget(wait)
        fut = state["waiters"].future(task_id) if wait > 0 else None
        try:
            now = await current(task_id, limit)
        except ApiError:
            if fut is not None:
                state["waiters"].release([task_id])
            raise
        if now[0] in TERMINAL or fut is None:
            if fut is not None:
                state["waiters"].release([task_id])
            return json_response(_outcome(task_id, *now))
        done = await wait_for([task_id], [fut], wait_until(wait, limit))
        if task_id in done:
            return json_response(_outcome(task_id, *done[task_id]))
        return json_response(_outcome(task_id, *await current(task_id, limit)))

    return BearerAndSizeGuard(app, settings.token, settings.max_request_bytes)


def main(argv=None) -> int:
    import argparse

    import uvicorn

    parser = argparse.ArgumentParser(description="the dispatch platform's HTTP gateway")
    parser.add_argument("--fd", type=int, help="an already bound listening socket (from the launcher)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    settings = Settings.from_environment()
    try:
        import uvloop  # noqa: F401
        loop = "uvloop"
    except ImportError:
        loop = "asyncio"
    config = uvicorn.Config(create_app(settings), host=args.host, port=args.port, loop=loop, log_level="warning",
                            access_log=False, lifespan="on", timeout_keep_alive=60)
    server = uvicorn.Server(config)
    if args.fd is None:
        server.run()
    else:
        # uvicorn's own `fd` option takes the socket for a UNIX one; ours is TCP, and
        # asyncio sets TCP_NODELAY on its connections only when it knows that (without
        # it, every response waits ~40 ms for a delayed ACK)
        import socket

        server.run(sockets=[socket.socket(fileno=args.fd)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
