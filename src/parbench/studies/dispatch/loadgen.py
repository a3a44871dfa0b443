"""The measuring client: submits tasks to the gateway over HTTP and times each one from
submission to the moment it sees the result.

Two ways to submit, reported apart:

- `per_task`: one request per task (POST /execute_function with `wait_sec`, which
  returns the result when the task is done), up to `concurrency` requests in flight on
  keep-alive connections; a task not finished when the wait ends is asked for again with
  GET /result;
- `batch`: the tasks in POST /execute_batch requests of up to `batch_size` tasks each,
  waiting for all their results in the same request.

The client is aiohttp on uvloop: on this project's 2-core machine httpx's asyncio client
managed 150-440 requests/s against an empty FastAPI endpoint where aiohttp managed
1,300-2,400 (measured while choosing), and the client shares the cores with what it
measures.

Times are `time.monotonic()` seconds, the clock every process of the machine shares,
so they line up with the stage times the platform stores for each task.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field


@dataclass
class Observation:
    """What the client saw of one task."""

    index: int
    t_submitted: float
    t_seen: float | None = None
    task_id: str | None = None
    status: str | None = None
    result: str | None = None  # base64 of the serialized result
    error: str | None = None
    http_status: int | None = None
    requests: int = 0


@dataclass
class RunOutcome:
    observations: list[Observation]
    t_start: float
    t_end: float
    requests: int = 0
    errors: list[str] = field(default_factory=list)


def _run(coro):
    try:
        import uvloop

        return uvloop.run(coro)
    except ImportError:
        return asyncio.run(coro)


def run_tasks(base_url: str, token: str, function_id: str, payloads: list[str], submission: str = "per_task",
              concurrency: int = 64, batch_size: int = 1000, wait_sec: float = 30.0,
              timeout_sec: float = 300.0) -> RunOutcome:
    """Submit one task per payload and wait for every result (or `timeout_sec`)."""
    if submission not in ("per_task", "batch"):
        raise ValueError(f"unknown submission {submission!r}; allowed: per_task, batch")
    return _run(_run_tasks(base_url, token, function_id, payloads, submission, concurrency, batch_size, wait_sec,
                           timeout_sec))


async def _run_tasks(base_url, token, function_id, payloads, submission, concurrency, batch_size, wait_sec,
                     timeout_sec) -> RunOutcome:
    import aiohttp

    headers = {"Authorization": f"Bearer {token}"}
    connector = aiohttp.TCPConnector(limit=concurrency, force_close=False)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=wait_sec + 30)
    observations = [Observation(i, 0.0) for i in range(len(payloads))]
    outcome = RunOutcome(observations, 0.0, 0.0)
    async with aiohttp.ClientSession(base_url, headers=headers, connector=connector, timeout=timeout) as session:

        async def answer(obs: Observation, request) -> dict | None:
            """One request of a task, counted on it: the gateway's answer, or None (with the
            gateway's error on the task) when it refused."""
            async with request as resp:
                obs.requests += 1
                obs.http_status = resp.status
                doc = await resp.json()
            if resp.status != 200:
                obs.error = doc.get("error")
                return None
            return doc

        async def follow_up(obs: Observation) -> None:
            """A task the wait did not cover: ask for its result until it is finished."""
            while obs.status not in ("COMPLETED", "FAILED"):
                doc = await answer(obs, session.get(f"/result/{obs.task_id}", params={"wait_sec": str(wait_sec)}))
                if doc is None:
                    return
                obs.status, obs.result, obs.error = doc["status"], doc.get("result"), doc.get("error")
            obs.t_seen = time.monotonic()

        async def one(obs: Observation, semaphore: asyncio.Semaphore) -> None:
            async with semaphore:
                obs.t_submitted = time.monotonic()
                body = {"function_id": function_id, "payload": payloads[obs.index], "wait_sec": wait_sec}
                doc = await answer(obs, session.post("/execute_function", json=body))
                if doc is None:
                    return
                obs.task_id, obs.status = doc["task_id"], doc["status"]
                obs.result, obs.error = doc.get("result"), doc.get("error")
                if obs.status in ("COMPLETED", "FAILED"):
                    obs.t_seen = time.monotonic()
                else:
                    await follow_up(obs)

        async def batch(chunk: list[Observation]) -> None:
            now = time.monotonic()
            for obs in chunk:
                obs.t_submitted = now
            body = {"function_id": function_id, "payloads": [payloads[o.index] for o in chunk], "wait_sec": wait_sec}
            async with session.post("/execute_batch", json=body) as resp:
                doc = await resp.json()
                seen = time.monotonic()
            for obs in chunk:
                obs.requests += 1
                obs.http_status = resp.status
            if resp.status != 200:
                for obs in chunk:
                    obs.error = doc.get("error")
                return
            later = []
            for obs, task_id, status, result, error in zip(chunk, doc["task_ids"], doc["statuses"], doc["results"],
                                                           doc["errors"]):
                obs.task_id, obs.status, obs.result, obs.error = task_id, status, result, error
                if status in ("COMPLETED", "FAILED"):
                    obs.t_seen = seen
                else:
                    later.append(follow_up(obs))
            await asyncio.gather(*later)

        outcome.t_start = time.monotonic()
        if submission == "per_task":
            semaphore = asyncio.Semaphore(concurrency)
            jobs = [one(obs, semaphore) for obs in observations]
        else:
            jobs = [batch(observations[i:i + batch_size]) for i in range(0, len(observations), batch_size)]
        try:
            results = await asyncio.wait_for(asyncio.gather(*jobs, return_exceptions=True), timeout_sec)
            outcome.errors = [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]
        except asyncio.TimeoutError:
            outcome.errors.append(f"the run did not finish within {timeout_sec} s")
        outcome.t_end = time.monotonic()
    outcome.requests = sum(o.requests for o in observations)
    return outcome
