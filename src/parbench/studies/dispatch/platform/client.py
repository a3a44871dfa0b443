"""A small synchronous client of the gateway's API (httpx, one keep-alive connection).

    client = platform.client()
    fid = client.register(my_function)
    value = client.call(fid, 3, 4)               # submit, wait, return the result
    task = client.submit(fid, 3, 4)              # -> task id
    client.status(task), client.result(task, wait_sec=5)

A task that FAILED raises `TaskFailed` with the error text and its kind (`timeout`,
`crashed`, ... see `executor.ERROR_KINDS`); an HTTP error raises `ApiError` with the
status code and the gateway's message.
"""

from __future__ import annotations

import httpx

from parbench.studies.dispatch.platform import serialization


class ApiError(RuntimeError):
    def __init__(self, status: int, message: str):
        super().__init__(f"{status}: {message}")
        self.status, self.message = status, message


class TaskFailed(RuntimeError):
    def __init__(self, task_id: str, error: str, kind: str | None = None):
        super().__init__(f"task {task_id} failed ({kind}): {error}")
        self.task_id, self.error, self.kind = task_id, error, kind


class Client:
    def __init__(self, base_url: str, token: str, timeout: float = 30.0):
        self.http = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout)

    def close(self) -> None:
        self.http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _json(self, response: httpx.Response) -> dict:
        if response.status_code != 200:
            try:
                message = response.json().get("error", response.text)
            except ValueError:
                message = response.text
            raise ApiError(response.status_code, message)
        return response.json()

    def register(self, fn, name: str | None = None, time_limit_sec: float | None = None) -> str:
        """Register a function; `time_limit_sec`: its tasks' own time limit (default: the
        platform's)."""
        body = {"name": name or getattr(fn, "__name__", "function"), "payload": serialization.serialize_text(fn)}
        if time_limit_sec is not None:
            body["time_limit_sec"] = time_limit_sec
        return self._json(self.http.post("/register_function", json=body))["function_id"]

    def submit(self, function_id: str, *args, wait_sec: float = 0.0, **kwargs) -> dict:
        body = {"function_id": function_id, "payload": serialization.serialize_call(*args, **kwargs)}
        if wait_sec:
            body["wait_sec"] = wait_sec
        return self._json(self.http.post("/execute_function", json=body))

    def status(self, task_id: str) -> str:
        return self._json(self.http.get(f"/status/{task_id}"))["status"]

    def outcome(self, task_id: str, wait_sec: float = 0.0) -> dict:
        params = {"wait_sec": wait_sec} if wait_sec else None
        return self._json(self.http.get(f"/result/{task_id}", params=params))

    @staticmethod
    def value(doc: dict):
        """The result of a finished task's document (raises TaskFailed for a failed one)."""
        if doc["status"] == "COMPLETED":
            return serialization.deserialize(serialization.decode(doc["result"], "result", 1 << 62)
                                             if doc["result"] else serialization.serialize(None))
        if doc["status"] == "FAILED":
            raise TaskFailed(doc["task_id"], doc.get("error") or "", doc.get("error_kind"))
        raise ValueError(f"task {doc['task_id']} is {doc['status']}, not finished")

    def result(self, task_id: str, wait_sec: float = 30.0):
        """Wait for a task and return its result."""
        doc = self.outcome(task_id, wait_sec)
        while doc["status"] not in ("COMPLETED", "FAILED"):
            doc = self.outcome(task_id, wait_sec)
        return self.value(doc)

    def call(self, function_id: str, *args, wait_sec: float = 30.0, **kwargs):
        """Submit and wait in one request (and more if the wait runs out)."""
        doc = self.submit(function_id, *args, wait_sec=wait_sec, **kwargs)
        if doc["status"] not in ("COMPLETED", "FAILED"):
            return self.result(doc["task_id"], wait_sec)
        return self.value(doc)

    def batch(self, function_id: str, calls: list[tuple[tuple, dict]], wait_sec: float = 30.0) -> dict:
        body = {"function_id": function_id, "payloads": [serialization.serialize_text(c) for c in calls],
                "wait_sec": wait_sec}
        return self._json(self.http.post("/execute_batch", json=body))
