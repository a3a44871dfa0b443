"""The dispatch platform as a real service: a real redis-server, the uvicorn gateway,
the dispatcher in each mode and worker processes, on loopback sockets. Each mode runs
the three workloads; the seed's push anomaly appears in push-naive and not in push; every
bad request gets its status code; nothing listens beyond loopback; Ctrl+C and SIGTERM
leave no process and no Redis behind; a missing redis-server says how to install it.
(What no task, worker, dispatcher or Redis failure may do: tests/test_dispatch_reliability.py.)"""

import base64
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import httpx
import psutil
import pytest

from parbench.studies.dispatch import workloads
from parbench.studies.dispatch.platform import launcher, serialization, store
from parbench.studies.dispatch.platform.client import TaskFailed
from parbench.studies.dispatch.platform.launcher import Platform, PlatformSettings

# the functions below travel by value, as a user's would (workers cannot import tests/)
import cloudpickle  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])

FAST = PlatformSettings(heartbeat_interval_sec=0.2, heartbeat_liveness=3)
PARAMS = {"cpu_iterations": 1000, "io_sleep_sec": 0.1}


def boom():
    raise ValueError("boom on purpose")


def group_processes(pgid: int) -> list[psutil.Process]:
    out = []
    for proc in psutil.process_iter(["pid"]):
        try:
            if os.getpgid(proc.pid) == pgid:
                out.append(proc)
        except (ProcessLookupError, psutil.Error):
            pass
    return out


@pytest.fixture(scope="module")
def push_platform():
    with Platform("push", FAST) as platform:
        platform.start_workers(2, 2)
        yield platform


@pytest.mark.parametrize("mode", ["local", "pull", "push", "push-naive"])
def test_each_mode_runs_the_three_workloads(mode):
    workloads.by_value()
    with Platform(mode, FAST) as platform:
        platform.start_workers(2, 2)
        with platform.client() as client:
            for name, fn in workloads.FUNCTIONS.items():
                fid = client.register(fn, name)
                args, kwargs = workloads.arguments(name, PARAMS)
                values = [client.call(fid, *args, **kwargs) for _ in range(3)]
                assert all(workloads.check(name, PARAMS, v) for v in values), (name, values)
            batch = client.batch(client.register(workloads.cpu), [((1000,), {})] * 50, wait_sec=30)
            assert batch["statuses"] == ["COMPLETED"] * 50
            values = {serialization.deserialize(base64.b64decode(r)) for r in batch["results"]}
            assert values == {workloads.expected("cpu", PARAMS)} == {332833500}
        rows = store.read_tasks(platform.redis, batch["task_ids"])
        assert all(r["completions"] == 1 and r["status"] == "COMPLETED" for r in rows)
        # every stage was timed, in order
        for r in rows:
            assert r["t_queued"] <= r["t_first_dispatched"] <= r["t_started"] <= r["t_finished"] <= r["t_stored"]


def test_a_function_that_raises_fails_its_task_with_the_error(push_platform):
    with push_platform.client() as client:
        fid = client.register(boom)
        with pytest.raises(TaskFailed, match="ValueError: boom on purpose"):
            client.call(fid)
        task = client.submit(fid)["task_id"]
        client.outcome(task, wait_sec=10)
        assert client.status(task) == "FAILED"
        # the worker survived: the next task runs
        assert client.call(client.register(workloads.cpu), 10) == 285


def test_push_naive_reproduces_the_seeds_cliff_and_push_does_not():
    """The seed's protocol in small: one worker, then two new ones on the same platform,
    then no-op tasks at once."""
    def first_run_after_change(mode):
        with Platform(mode, PlatformSettings(heartbeat_interval_sec=1.0, heartbeat_liveness=3)) as platform:
            platform.start_workers(1, 1)
            with platform.client() as client:
                fid = client.register(workloads.noop)
                client.call(fid)
                platform.stop_workers()
                new = platform.start_workers(2, 1)
                stale = set(platform.registered_workers()) - set(new)
                start = time.monotonic()
                tasks = [client.submit(fid)["task_id"] for _ in range(10)]
                assert [client.result(t, wait_sec=20) for t in tasks] == [None] * 10
                took = time.monotonic() - start
            rows = store.read_tasks(platform.redis, tasks)
            return stale, took, [r for r in rows if r["attempts"] > 1]

    stale, took, again = first_run_after_change("push-naive")
    assert len(stale) == 1 and again and took > 1.0
    assert all(r["workers"][0] in stale for r in again)  # sent to the stopped worker first
    stale, took, again = first_run_after_change("push")
    assert not stale and not again and took < 1.0


def test_every_bad_request_gets_its_status_code_never_a_500(push_platform):
    url, token = push_platform.base_url, push_platform.token
    auth = {"Authorization": f"Bearer {token}"}
    fid = push_platform.client().register(workloads.noop)
    ok_payload = serialization.serialize_call()
    big = "A" * (push_platform.settings.max_request_bytes + 10)
    cases = [
        ("POST", "/execute_function", {}, {"function_id": fid, "payload": ok_payload}, 401),
        ("POST", "/execute_function", {"Authorization": "Bearer wrong"}, {"function_id": fid, "payload": ok_payload},
         401),
        ("GET", "/status/abc", {"Authorization": token}, None, 401),
        ("POST", "/execute_function", auth, b"{not json", 400),
        ("POST", "/execute_function", auth, [1, 2], 400),
        ("POST", "/execute_function", auth, {"payload": ok_payload}, 400),
        ("POST", "/execute_function", auth, {"function_id": 5, "payload": ok_payload}, 400),
        ("POST", "/execute_function", auth, {"function_id": fid, "payload": "***"}, 400),
        ("POST", "/execute_function", auth, {"function_id": fid, "payload": ""}, 400),
        ("POST", "/execute_function", auth, {"function_id": fid, "payload": ok_payload, "wait_sec": "x"}, 400),
        ("POST", "/execute_function", auth, {"function_id": fid, "payload": ok_payload, "wait_sec": 1e9}, 400),
        ("POST", "/execute_batch", auth, {"function_id": fid, "payloads": []}, 400),
        ("POST", "/execute_batch", auth, {"function_id": fid, "payloads": "x"}, 400),
        ("POST", "/register_function", auth, {"name": "", "payload": ok_payload}, 400),
        ("GET", "/result/abc?wait_sec=soon", auth, None, 400),
        ("POST", "/execute_function", auth, {"function_id": "nosuch", "payload": ok_payload}, 404),
        ("GET", "/status/nosuch", auth, None, 404),
        ("GET", "/result/nosuch", auth, None, 404),
        ("GET", "/nosuch", auth, None, 404),
        ("POST", "/register_function", auth, {"name": "big", "payload": big}, 413),
        ("POST", "/execute_function", auth, {"function_id": fid, "payload": big}, 413),
    ]
    with httpx.Client(base_url=url, timeout=10) as http:
        for method, path, headers, body, expected in cases:
            kw = {"content": body} if isinstance(body, bytes) else {"json": body} if body is not None else {}
            response = http.request(method, path, headers=headers, **kw)
            assert response.status_code == expected, (method, path, body if not isinstance(body, dict) else
                                                      {k: str(v)[:20] for k, v in body.items()}, response.text[:200])
            assert response.json()["error"], (path, response.text)  # a message, in JSON
        # a body over the limit without Content-Length (chunked) is refused while it is read
        chunks = (b"x" * 65536 for _ in range(200))
        response = http.post("/register_function", headers=auth, content=chunks)
        assert response.status_code == 413
        # and the gateway is still fine
        good = http.post("/execute_function", headers=auth, json={"function_id": fid, "payload": ok_payload,
                                                                  "wait_sec": 10})
        assert good.status_code == 200 and good.json()["status"] == "COMPLETED"
        assert http.get(f"/status/{good.json()['task_id']}", headers=auth).json()["status"] == "COMPLETED"


def test_nothing_listens_beyond_loopback(push_platform):
    pids = {p.pid for p in group_processes(push_platform.pgid)}
    listening = [c for c in psutil.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN and c.pid in pids]
    assert {c.laddr.port for c in listening} >= {push_platform.redis_port, push_platform.gateway_port}
    assert len(listening) >= 3  # redis, the gateway, the dispatcher's ZeroMQ socket
    assert all(c.laddr.ip == "127.0.0.1" for c in listening), listening


INTERRUPTED = textwrap.dedent("""
    import json, sys, time
    from parbench.studies.dispatch.platform.launcher import Platform
    from parbench.studies.dispatch import workloads
    platform = Platform("push")
    with platform:
        platform.start_workers(2, 2)
        client = platform.client()
        fid = client.register(workloads.io)
        for _ in range(8):
            client.submit(fid, 5.0)
        print(json.dumps({"pgid": platform.pgid, "redis_port": platform.redis_port, "dir": str(platform.dir)}),
              flush=True)
        time.sleep(60)
""")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_and_sigterm_leave_no_process_and_no_redis(sig, tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPTED], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    info = json.loads(proc.stdout.readline())
    assert len(group_processes(info["pgid"])) >= 1 + 1 + 1 + 2 * 3  # redis, gateway, dispatcher, 2 x (1 + 2)
    os.killpg(proc.pid, sig) if sig == signal.SIGINT else proc.send_signal(sig)
    proc.wait(30)
    deadline = time.monotonic() + 10  # exited processes of the group may wait a moment to be reaped
    while group_processes(info["pgid"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert group_processes(info["pgid"]) == []
    import redis

    with pytest.raises(redis.exceptions.ConnectionError):
        redis.Redis(port=info["redis_port"], socket_connect_timeout=0.5).ping()
    assert not os.path.exists(info["dir"])


def test_a_missing_redis_server_names_the_install_command(monkeypatch):
    monkeypatch.setattr(launcher.shutil, "which", lambda name: None)
    with pytest.raises(launcher.MissingRedis, match="apt-get install redis-server"):
        Platform("local").start()
