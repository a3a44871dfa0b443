"""The seed's protocol, for one platform mode or one peer: for each worker count in
turn (1, 2, 4, 8), start that many workers, run every workload (no-op, CPU, I/O, in the
seed's order) with `tasks_per_worker` tasks per worker, `runs_per_worker_count` times,
then (at the worker counts named for it, `saturation.runs` times) the saturation runs of many no-op tasks, submitted one
request per task and in batches; then stop the workers.

The platform (redis-server, gateway, dispatcher) stays up for the whole sweep and only
the workers change, as when the seed ran it: that is what shows push-naive's anomaly.
Peers are started anew for each worker count.

Each run yields one row of metrics and one row per task, with the stage times the
platform stored for it (relative to the run's first submission, in ms) and each
worker's queue depth over the run.

The push anomaly's hypothesis (the first run after a change of workers waits for the
heartbeats of the workers stopped before it to lapse) gives each run a prediction,
recorded beside what was measured:

- `predicted_stall_sec`: how long after the run's first submission the last stale worker
  (registered when the run began, no longer running) expires: its last heartbeat +
  `heartbeat_interval_sec` x `heartbeat_liveness` - the first submission, 0 without
  stale workers (the dispatcher checks every quarter interval, so the drop comes up to
  that much later);
- `stall_sec`: the longest a task of the run waited from its first dispatch to its
  last (0 when no task was dispatched twice): the time lost to workers that were gone.
  The explanation predicts `predicted_stall_sec` to `predicted_stall_sec` + a quarter
  interval (both count from the run's start: its first dispatch comes a few ms after
  its first submission).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from parbench.studies.dispatch import metrics, workloads

STAGES = ("submitted", "queued", "first_dispatched", "dispatched", "started", "finished", "stored", "seen")


@dataclass
class TaskOutcome:
    """One task as a runner saw it (times are time.monotonic() seconds)."""

    t_submitted: float
    t_seen: float | None
    status: str | None
    value: object = None
    error: str | None = None
    task_id: str | None = None


@dataclass
class RunData:
    outcomes: list[TaskOutcome]
    requests: int | None = None
    stages: list[dict] | None = None  # per task: stored fields (platform only)
    depth: list = field(default_factory=list)  # [t, worker, depth]
    events: list = field(default_factory=list)  # [t, name, worker, detail]
    registered_workers: int | None = None
    stale_workers: int | None = None
    # stale worker -> when it was last heard from (time.monotonic(); from the registry
    # when the run began)
    stale_last_seen: dict = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


class Runner:
    """What the protocol needs of a mode or a peer."""

    name = ""
    kind = ""

    def start(self) -> None: ...

    def set_workers(self, count: int, processes: int) -> None: ...

    def stop_workers(self) -> None: ...

    def run(self, workload: str, calls: list[tuple[tuple, dict]], submission: str) -> RunData:
        raise NotImplementedError

    def supports(self, submission: str) -> str | None:
        """None when the runner can submit this way, else why not."""
        return None

    def close(self) -> None: ...


class PlatformRunner(Runner):
    """The platform in one mode, measured through its HTTP gateway."""

    kind = "platform"

    def __init__(self, mode: str, params: dict):
        from parbench.studies.dispatch.platform.launcher import Platform, PlatformSettings

        self.name = mode
        p = params["platform"]
        self.client_params = params["client"]
        self.platform = Platform(mode, PlatformSettings(
            heartbeat_interval_sec=p["heartbeat_interval_sec"], heartbeat_liveness=p["heartbeat_liveness"],
            max_chunk_tasks=p["max_chunk_tasks"], chunk_target_sec=p["chunk_target_sec"],
            max_request_bytes=p["max_request_bytes"], max_result_bytes=p["max_result_bytes"],
            task_time_limit_sec=p["task_time_limit_sec"], memory_limit_mb=p["memory_limit_mb"],
            max_task_attempts=p["max_task_attempts"], redis_persistence=p["redis_persistence"]))
        self.functions: dict[str, str] = {}
        self.live: list[str] = []

    def start(self) -> None:
        self.platform.start()
        workloads.by_value()
        with self.platform.client() as client:
            self.functions = {w: client.register(fn, w) for w, fn in workloads.FUNCTIONS.items()}

    def set_workers(self, count: int, processes: int) -> None:
        self.live = self.platform.start_workers(count, processes)

    def stop_workers(self) -> None:
        self.platform.stop_workers()
        self.live = []

    def run(self, workload: str, calls, submission: str) -> RunData:
        from parbench.studies.dispatch import loadgen
        from parbench.studies.dispatch.platform import serialization, store

        redis = self.platform.redis
        keys = store.Keys()
        store.drain_list(redis, keys.depth)
        store.drain_list(redis, keys.events)
        registry = store.read_workers(redis) if self.name != "local" else {}
        payloads = [serialization.serialize_text(call) for call in calls]
        c = self.client_params
        outcome = loadgen.run_tasks(self.platform.base_url, self.platform.token, self.functions[workload], payloads,
                                    submission, concurrency=c["concurrency"], batch_size=c["batch_size"],
                                    wait_sec=c["wait_sec"], timeout_sec=c["run_timeout_sec"])
        tasks = []
        for obs in outcome.observations:
            value, error = None, obs.error
            if obs.status == "COMPLETED" and obs.result is not None:
                try:
                    value = serialization.deserialize(serialization.decode(obs.result, "result", 1 << 40)
                                                      if obs.result else serialization.serialize(None))
                except Exception as exc:  # a result that does not decode is a wrong result
                    error = f"undecodable result: {exc!r}"
            tasks.append(TaskOutcome(obs.t_submitted, obs.t_seen, obs.status, value, error, obs.task_id))
        ids = [t.task_id for t in tasks if t.task_id]
        stored = {row["task_id"]: row for row in store.read_tasks(redis, ids)}
        return RunData(
            outcomes=tasks, requests=outcome.requests,
            stages=[stored.get(t.task_id) for t in tasks],
            depth=store.drain_list(redis, keys.depth), events=store.drain_list(redis, keys.events),
            registered_workers=len(registry) if self.name != "local" else None,
            stale_workers=len(set(registry) - set(self.live)) if self.name != "local" else None,
            stale_last_seen={w: v.get("last_seen") for w, v in registry.items() if w not in self.live},
            errors=outcome.errors)

    def close(self) -> None:
        self.platform.close()


def _ms(t: float | None, origin: float) -> float | None:
    return None if t is None else 1000.0 * (t - origin)


def expiry_sec(params: dict) -> float:
    """When the dispatcher drops a silent worker: the heartbeat interval x liveness."""
    p = params["platform"]
    return p["heartbeat_interval_sec"] * p["heartbeat_liveness"]


def stale_prediction(data: RunData, origin: float, params: dict) -> tuple[float | None, float | None]:
    """(the stale workers' lag: the run's first submission - the last time the latest of
    them was heard from; the predicted stall, see the module's docstring). The time a
    worker was last heard from is the one its expiry event records (exact) or else the
    registry's when the run began. (None, 0.0) without stale workers."""
    if not data.stale_last_seen:
        return None, 0.0
    last = dict(data.stale_last_seen)
    for _, name, worker, detail in data.events:
        if name == "expired" and worker in last and str(detail).startswith("last seen "):
            last[worker] = float(str(detail).split()[-1])
    seen = [t for t in last.values() if t is not None]
    if not seen:
        return None, None
    lag = origin - max(seen)
    return lag, max(0.0, expiry_sec(params) - lag)


def measured_stall(stages: list | None) -> float | None:
    """The time lost to gone workers: the longest a task dispatched more than once waited
    from its first dispatch to its last (0 when none was dispatched twice; None when the
    stages are not known)."""
    if not stages or any(not s or s.get("attempts") is None for s in stages):
        return None
    waits = [s["t_dispatched"] - s["t_first_dispatched"] for s in stages
             if s["attempts"] > 1 and s.get("t_dispatched") is not None and s.get("t_first_dispatched") is not None]
    return max(waits, default=0.0)


def run_rows(run_key: dict, data: RunData, workload: str, params: dict) -> tuple[dict, list[dict], list[dict]]:
    """The run's row, its task rows and its queue-depth rows."""
    outcomes = data.outcomes
    ok = [o.status == "COMPLETED" and o.error is None and workloads.check(workload, params, o.value)
          for o in outcomes]
    summary = metrics.run_summary([o.t_submitted for o in outcomes], [o.t_seen for o in outcomes], ok)
    origin = min((o.t_submitted for o in outcomes), default=0.0)
    tasks, completions = [], []
    for index, (o, good) in enumerate(zip(outcomes, ok)):
        stage = (data.stages[index] if data.stages else None) or {}
        if stage:
            completions.append(stage.get("completions"))
        tasks.append({**run_key, "task_index": index, "task_id": o.task_id, "status": o.status, "correct": good,
                      "error": (o.error or stage.get("error") or None) if not good else None,
                      "attempts": stage.get("attempts"), "worker": stage.get("worker"),
                      "workers_tried": len(stage["workers"]) if stage.get("workers") is not None else None,
                      "first_worker": (stage.get("workers") or [None])[0],
                      "completions": stage.get("completions"),
                      "latency_ms": _ms(o.t_seen, o.t_submitted) if good else None,
                      "submitted_ms": _ms(o.t_submitted, origin),
                      "queued_ms": _ms(stage.get("t_queued"), origin),
                      "first_dispatched_ms": _ms(stage.get("t_first_dispatched"), origin),
                      "dispatched_ms": _ms(stage.get("t_dispatched"), origin),
                      "started_ms": _ms(stage.get("t_started"), origin),
                      "finished_ms": _ms(stage.get("t_finished"), origin),
                      "stored_ms": _ms(stage.get("t_stored"), origin),
                      "seen_ms": _ms(o.t_seen, origin)})
    depth = [{**run_key, "t_ms": _ms(t, origin), "worker": worker, "tasks_held": held}
             for t, worker, held in data.depth]
    requeued = sum(int(str(detail).split()[0]) for _, name, _, detail in data.events if name == "requeued")
    dropped = sorted({worker for _, name, worker, _ in data.events if name in ("expired", "unroutable", "left")})
    max_depth = max((d["tasks_held"] for d in depth), default=None)
    heartbeats = data.stale_workers is not None  # a mode with workers and heartbeats
    lag, predicted = stale_prediction(data, origin, params) if heartbeats else (None, None)
    row = {**run_key, **summary,
           "exactly_once": all(c == 1 for c in completions) if data.stages else None,
           "requests": data.requests,
           "registered_workers": data.registered_workers, "stale_workers": data.stale_workers,
           "requeued_tasks": requeued if data.stages else None,
           "workers_dropped": ",".join(dropped) if dropped else None,
           "max_tasks_held": max_depth,
           "expiry_sec": expiry_sec(params) if heartbeats else None,
           "stale_lag_sec": lag, "predicted_stall_sec": predicted,
           "stall_sec": measured_stall(data.stages) if heartbeats else None,
           "errors": "; ".join(data.errors) or None}
    return row, tasks, depth


def processes_per_worker(params: dict, system: str) -> int:
    """A worker's processes: `processes_per_worker`, and in local mode
    `local_processes_per_worker` when it is set (null: the same as the others)."""
    if system == "local" and params.get("local_processes_per_worker"):
        return params["local_processes_per_worker"]
    return params["processes_per_worker"]


def sweep(runner: Runner, params: dict, progress=None) -> dict:
    """Run the protocol; returns {"runs", "tasks", "depth", "failures"}."""
    runs, tasks, depth, failures = [], [], [], []
    processes = processes_per_worker(params, runner.name)
    order = params["workloads"]
    run_index = 0

    def one(workers: int, workload: str, submission: str, phase: str, repetition: int, count: int,
            first_after_change: bool) -> None:
        nonlocal run_index
        key = {"mode": runner.name, "kind": runner.kind, "workers": workers, "processes_per_worker": processes,
               "workload": workload, "submission": submission, "phase": phase, "repetition": repetition,
               "run_index": run_index, "first_after_change": first_after_change}
        run_index += 1
        why_not = runner.supports(submission)
        if why_not:
            runs.append({**key, "tasks": count, "status": "unavailable", "failure": why_not})
            return
        calls = [workloads.arguments(workload, params)] * count
        data = runner.run(workload, calls, submission)
        row, task_rows, depth_rows = run_rows(key, data, workload, params)
        problems = []
        if row["success_rate"] != 1.0:
            bad = [t for t in task_rows if not t["correct"]]
            problems.append(f"{len(bad)} of {count} tasks did not complete with the expected value"
                            + (f" (first: {bad[0]['status']}: {str(bad[0]['error'])[:200]})" if bad else ""))
        if row["exactly_once"] is False:
            problems.append("a task's result was stored more than once")
        if data.errors:
            problems.append("; ".join(data.errors))
        row.update(status="failed" if problems else "ok", failure="; ".join(problems) or None)
        if problems:
            failures.append(f"{runner.name} {workload} {submission} x{workers} rep {repetition}: {row['failure']}")
        runs.append(row)
        tasks.extend(task_rows)
        depth.extend(depth_rows)
        if progress:
            progress(row)

    runner.start()
    try:
        for workers in params["workers"]:
            runner.set_workers(workers, processes)
            first = True
            for repetition in range(params["runs_per_worker_count"]):
                for workload in order:
                    one(workers, workload, "per_task", "weak_scaling", repetition, params["tasks_per_worker"] * workers,
                        first)
                    first = False
            sat = params["saturation"]
            if workers in sat["workers"]:
                for repetition in range(sat["runs"]):
                    for submission in sat["submissions"]:
                        one(workers, "noop", submission, "saturation", repetition, sat["tasks"], False)
            runner.stop_workers()
    finally:
        runner.close()
    return {"runs": runs, "tasks": tasks, "depth": depth, "failures": failures}


def wall_clock_anchor() -> dict:
    """The pair (time.time(), time.monotonic()) that maps stage times to wall time."""
    return {"unix": time.time(), "monotonic": time.monotonic()}
