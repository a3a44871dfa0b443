"""Starts the platform (redis-server, the gateway, the dispatcher, the workers) and
stops it again, whatever happens.

    with Platform("push", PlatformSettings()) as platform:
        platform.start_workers(2, processes=5)
        client = platform.client()
        ...

- redis-server runs on a free 127.0.0.1 port, in its own temporary folder, with its
  append-only file there (`redis_persistence: aof`, the default: every write goes to the
  file, fsynced once a second, so that a redis-server stopped and started again on the
  same port and folder resumes with every function and task; `restart_redis()` does
  that; one killed outright may lose a write it held back behind a slow fsync, up to two
  seconds' worth) or with no persistence at all (`none`); a missing
  `redis-server` is a `MissingRedis` error that names `apt-get install redis-server`;
- the gateway listens on a socket the launcher binds on 127.0.0.1 and hands over (no
  race for the port); the dispatcher binds its ZeroMQ socket on 127.0.0.1 and says where
  in a ready file; nothing listens on any other address;
- the gateway's bearer token is generated here for the run (`secrets`) and passed in the
  environment, never on a command line;
- every process is started in one process group of its own, with a parent-death signal
  (Linux), so that `close()` (run on success, on an error, on Ctrl+C and on SIGTERM,
  through the context manager) ends them all, and a launcher killed outright takes them
  with it. The temporary folder is removed at the end.

In `local` mode the "workers" are the dispatcher's own pool: `start_workers(n, p)`
restarts the dispatcher with a pool of n x p processes.

`kill_dispatcher()` and `start_dispatcher_again()` (a dispatcher dies and a new one takes
its place, on the same ZeroMQ port) and `restart_redis()` are how the tests make the
platform survive its parts failing.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from parbench.studies.dispatch.platform import store as pbstore
from parbench.studies.dispatch.platform.dispatcher import MODES
from parbench.words import counted

HOST = "127.0.0.1"
REDIS_INSTALL = "apt-get install redis-server"


class MissingRedis(RuntimeError):
    """redis-server is not installed."""


class PlatformError(RuntimeError):
    """A part of the platform did not start or died; the message holds its log's tail."""


PERSISTENCE = ("aof", "none")


@dataclass
class PlatformSettings:
    heartbeat_interval_sec: float = 1.0
    heartbeat_liveness: int = 3
    max_chunk_tasks: int = 64
    chunk_target_sec: float = 0.002
    max_request_bytes: int = 8 << 20
    max_result_bytes: int = 8 << 20
    max_wait_sec: float = 120.0
    startup_timeout_sec: float = 60.0
    # a task's time limit when its function has none of its own (s)
    task_time_limit_sec: float = 300.0
    # address space of each pool process, MiB (Linux: RLIMIT_AS; 0: none)
    memory_limit_mb: int = 4096
    # dispatches of one task at most (the first and the retries after lost workers)
    max_task_attempts: int = 10
    # "aof" (state survives a restart of redis-server) or "none"
    redis_persistence: str = "aof"
    # the longest a request without a wait may take on Redis before it gets a 503 (s)
    store_timeout_sec: float = 2.0


def redis_server_path() -> str:
    path = shutil.which("redis-server")
    if path is None:
        raise MissingRedis(f"redis-server is not installed; the dispatch platform keeps its state in Redis. "
                           f"Install it with: sudo {REDIS_INSTALL}")
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _die_with_launcher() -> None:
    """preexec_fn: the child gets SIGTERM when the launcher dies (Linux)."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def start_redis(spawn, wait, attempts: int = 5, persistence: str = "none", port: int | None = None):
    """redis-server on a free loopback port (or `port`), in the spawner's folder, with an
    append-only file there (`persistence` "aof") or none; returns (process, a client,
    port). `spawn(name, cmd)` starts a process, `wait(what, ready, procs)` waits for
    `ready()`."""
    import redis

    if persistence not in PERSISTENCE:
        raise ValueError(f"unknown Redis persistence {persistence!r}; allowed: {', '.join(PERSISTENCE)}")
    # aof: appended as Redis answers (held back up to two seconds behind a slow fsync),
    # fsynced once a second, never rewritten while the platform runs (a rewrite forks
    # Redis in the middle of a measurement)
    keep = (["--appendonly", "yes", "--appendfsync", "everysec", "--auto-aof-rewrite-percentage", "0"]
            if persistence == "aof" else ["--appendonly", "no"])
    server = redis_server_path()
    fixed = port
    for _ in range(attempts if fixed is None else 1):
        port = fixed or free_port()
        proc = spawn("redis", [server, "--port", str(port), "--bind", HOST, "--protected-mode", "yes",
                               "--save", "", *keep, "--dir", ".", "--daemonize", "no", "--loglevel", "warning"])
        client = redis.Redis(host=HOST, port=port, socket_connect_timeout=1)

        def ping() -> bool:
            try:
                return bool(client.ping())
            except (redis.exceptions.ConnectionError, redis.exceptions.BusyLoadingError):
                return False

        try:
            wait("redis-server", ping, {"redis": proc})
        except PlatformError as exc:
            if "Address already in use" in str(exc) and fixed is None:
                continue  # another process took the port between our probe and its bind
            raise
        return proc, client, port
    raise PlatformError(f"redis-server found no free port in {attempts} tries")


class ProcessGroup:
    """Processes started in one process group of their own, each with its log in a
    temporary folder and a parent-death signal; `close()` stops them all (SIGTERM, then
    SIGKILL to the group) and removes the folder. Used as a context manager, it turns
    SIGTERM into an exception while it is open, so that it is closed on SIGTERM too."""

    def __init__(self, workdir: str | Path | None = None, startup_timeout_sec: float = 60.0, prefix: str = "parbench-"):
        self._own_dir = workdir is None
        self.dir = Path(tempfile.mkdtemp(prefix=prefix) if workdir is None else workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.startup_timeout_sec = startup_timeout_sec
        self.pgid: int | None = None
        self.procs: dict[str, subprocess.Popen] = {}
        self._previous_sigterm = None
        self._closed = False

    def _spawn(self, name: str, cmd: list[str], env: dict | None = None, pass_fds=()) -> subprocess.Popen:
        log = open(self.dir / f"{name}.log", "ab")
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=self.dir,
                                    env={**os.environ, **(env or {})}, pass_fds=pass_fds,
                                    process_group=0 if self.pgid is None else self.pgid,
                                    preexec_fn=_die_with_launcher)
        finally:
            log.close()
        if self.pgid is None:
            self.pgid = proc.pid
        return proc

    def log_tail(self, name: str, lines: int = 20) -> str:
        path = self.dir / f"{name}.log"
        if not path.exists():
            return "(no log)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def _check_alive(self, name: str, proc: subprocess.Popen) -> None:
        if proc.poll() is not None:
            raise PlatformError(f"{name} exited with status {proc.returncode}; its log ends with:\n"
                                f"{self.log_tail(name)}")

    def _wait(self, what: str, ready, procs: dict) -> None:
        deadline = time.monotonic() + self.startup_timeout_sec
        while True:
            for name, proc in procs.items():
                self._check_alive(name, proc)
            if ready():
                return
            if time.monotonic() > deadline:
                raise PlatformError(f"{what} was not ready after {self.startup_timeout_sec:.0f} s; logs: "
                                    + "; ".join(f"{n}: {self.log_tail(n, 5)}" for n in procs))
            time.sleep(0.02)

    @staticmethod
    def _stop(names: list[str], procs: dict, timeout: float = 10.0, sig: int = signal.SIGTERM) -> None:
        """Signal each process (SIGTERM by default), wait up to `timeout` for them all,
        then SIGKILL what is left."""
        for name in names:
            if procs[name].poll() is None:
                procs[name].send_signal(sig)
        deadline = time.monotonic() + timeout
        for name in names:
            try:
                procs[name].wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                procs[name].kill()
                procs[name].wait(5)

    def _guard(self) -> None:
        self._previous_sigterm = _raise_on_sigterm()

    def _stop_all(self) -> None:
        self._stop(list(self.procs), self.procs, timeout=5.0)

    def close(self) -> None:
        """Stop everything (SIGTERM, then SIGKILL to the whole group after a grace
        period) and remove the folder."""
        if self._closed:
            return
        self._closed = True
        try:
            self._stop_all()
        finally:
            if self.pgid is not None:
                try:
                    os.killpg(self.pgid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            self._release()
            if self._own_dir:
                shutil.rmtree(self.dir, ignore_errors=True)
            if self._previous_sigterm is not None:
                signal.signal(signal.SIGTERM, self._previous_sigterm)

    def _release(self) -> None:
        pass


class Platform(ProcessGroup):
    def __init__(self, mode: str, settings: PlatformSettings | None = None, workdir: str | Path | None = None):
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; allowed: {', '.join(MODES)}")
        self.settings = settings or PlatformSettings()
        super().__init__(workdir, self.settings.startup_timeout_sec, "parbench-dispatch-")
        self.mode = mode
        self.token = secrets.token_urlsafe(32)
        self.workers: dict[str, subprocess.Popen] = {}
        self.redis = None
        self.redis_port = None
        self.gateway_port = None
        self.dispatcher_info: dict = {}
        self.pool_processes = 1

    # --- the parts ----------------------------------------------------------------------
    def _start_redis(self) -> None:
        if self.redis is not None:
            self.redis.close()
        self.procs["redis"], self.redis, self.redis_port = start_redis(
            self._spawn, self._wait, persistence=self.settings.redis_persistence, port=self.redis_port)

    def restart_redis(self, down_sec: float = 0.0, sig: int = signal.SIGKILL) -> None:
        """Stop redis-server (SIGKILL by default: it ends at once, as a crash would), leave
        it down for `down_sec`, and start it again on the same port and folder (with
        `redis_persistence: aof` it reads its append-only file back)."""
        self.stop_redis(sig)
        time.sleep(down_sec)
        self.start_redis_again()

    def stop_redis(self, sig: int = signal.SIGKILL) -> None:
        self._stop(["redis"], self.procs, timeout=5.0, sig=sig)

    def start_redis_again(self) -> None:
        self._start_redis()

    @property
    def redis_url(self) -> str:
        return f"redis://{HOST}:{self.redis_port}/0"

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.gateway_port}"

    def _spawn_gateway(self) -> None:
        from parbench.studies.dispatch.platform import gateway

        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((HOST, 0))
        listener.listen(1024)
        self.gateway_port = listener.getsockname()[1]
        env = {gateway.TOKEN_ENV: self.token, gateway.REDIS_ENV: self.redis_url,
               gateway.LIMIT_ENV: str(self.settings.max_request_bytes),
               gateway.MAX_WAIT_ENV: str(self.settings.max_wait_sec),
               gateway.STORE_TIMEOUT_ENV: str(self.settings.store_timeout_sec)}
        try:
            proc = self._spawn("gateway", [sys.executable, "-m", "parbench.studies.dispatch.platform.gateway",
                                           "--fd", str(listener.fileno())], env=env, pass_fds=(listener.fileno(),))
        finally:
            listener.close()
        self.procs["gateway"] = proc

    def _gateway_answers(self) -> bool:
        import httpx

        try:
            return httpx.get(f"{self.base_url}/status/none", timeout=1,
                             headers={"Authorization": f"Bearer {self.token}"}).status_code == 404
        except httpx.HTTPError:
            return False

    def _children_env(self) -> dict:
        """The environment of the dispatcher and the workers: their temporary files (and
        their tasks') in the platform's folder, removed with it."""
        return {"TMPDIR": str(self.dir)}

    def _start_dispatcher(self, pool_processes: int = 1, also=None, port: int | None = None) -> None:
        """Start the dispatcher and wait until it listens (and until `also`, a
        (what, ready, procs) of something started before it, is ready too)."""
        ready = self.dir / "dispatcher.json"
        ready.unlink(missing_ok=True)
        s = self.settings
        cmd = [sys.executable, "-m", "parbench.studies.dispatch.platform.dispatcher", "--mode", self.mode,
               "--redis", self.redis_url, "--pool-processes", str(pool_processes),
               "--heartbeat-interval", str(s.heartbeat_interval_sec), "--heartbeat-liveness", str(s.heartbeat_liveness),
               "--max-chunk-tasks", str(s.max_chunk_tasks), "--chunk-target-sec", str(s.chunk_target_sec),
               "--max-result-bytes", str(s.max_result_bytes), "--task-time-limit", str(s.task_time_limit_sec),
               "--memory-limit-mb", str(s.memory_limit_mb), "--max-task-attempts", str(s.max_task_attempts),
               "--ready-file", str(ready)]
        if port:
            cmd += ["--port", str(port)]
        proc = self._spawn("dispatcher", cmd, env=self._children_env())
        self.procs["dispatcher"] = proc
        if also is not None:
            self._wait(*also)
        self._wait(f"the {self.mode} dispatcher", ready.exists, {"dispatcher": proc})
        self.dispatcher_info = json.loads(ready.read_text())
        self.pool_processes = pool_processes

    def start(self) -> "Platform":
        self._guard()
        try:
            self._start_redis()
            # the gateway and the dispatcher start side by side (each imports for a while)
            self._spawn_gateway()
            self._start_dispatcher(1, also=("the gateway", self._gateway_answers, {"gateway": self.procs["gateway"]}))
        except BaseException:
            self.close()
            raise
        return self

    # --- workers -----------------------------------------------------------------------
    def start_workers(self, count: int, processes: int) -> list[str]:
        """Start `count` workers of `processes` processes each and wait until the
        dispatcher has registered every one of them (local mode: restart the dispatcher
        with a pool of count x processes)."""
        if self.mode == "local":
            self._stop(["dispatcher"], self.procs)
            self._start_dispatcher(count * processes)
            return [f"local-{i}" for i in range(count)]
        new = {}
        for _ in range(count):
            worker_id = f"w-{uuid.uuid4().hex[:8]}"
            s = self.settings
            cmd = [sys.executable, "-m", "parbench.studies.dispatch.platform.worker", "--mode", self.mode,
                   "--endpoint", self.dispatcher_info["endpoint"], "--worker-id", worker_id,
                   "--processes", str(processes), "--heartbeat-interval", str(s.heartbeat_interval_sec),
                   "--heartbeat-liveness", str(s.heartbeat_liveness), "--max-result-bytes", str(s.max_result_bytes),
                   "--memory-limit-mb", str(s.memory_limit_mb)]
            new[worker_id] = self._spawn(worker_id, cmd, env=self._children_env())
        self.workers.update(new)
        self._wait(counted(count, f"{self.mode} worker"), lambda: set(new) <= set(self.registered_workers()),
                   {**new, "dispatcher": self.procs["dispatcher"]})
        return list(new)

    def registered_workers(self) -> dict[str, dict]:
        """The dispatcher's registry of workers (stale entries included)."""
        return pbstore.read_workers(self.redis)

    def stop_workers(self, timeout: float = 10.0) -> None:
        """SIGTERM every worker (each then does what its mode does on a stop) and wait."""
        self._stop(list(self.workers), self.workers, timeout)
        self.workers.clear()

    def kill_worker(self, worker_id: str, sig: int = signal.SIGKILL) -> None:
        proc = self.workers.pop(worker_id)
        proc.send_signal(sig)
        proc.wait(10)

    def kill_dispatcher(self, sig: int = signal.SIGKILL) -> None:
        """End the dispatcher (SIGKILL by default: no goodbye, as a crash would)."""
        self._stop(["dispatcher"], self.procs, timeout=5.0, sig=sig)

    def start_dispatcher_again(self) -> None:
        """A new dispatcher in place of one that died: on the same ZeroMQ port (workers
        reconnect by themselves), with the same pool in local mode; it recovers every
        task not finished from the store."""
        endpoint = self.dispatcher_info.get("endpoint")
        port = int(endpoint.rsplit(":", 1)[1]) if endpoint else None
        self._start_dispatcher(self.pool_processes, port=port)

    # --- clients ------------------------------------------------------------------------
    def client(self, timeout: float = 30.0):
        from parbench.studies.dispatch.platform.client import Client

        return Client(self.base_url, self.token, timeout)

    # --- the end -------------------------------------------------------------------------
    def _stop_all(self) -> None:
        """Workers first, with SIGINT (they stop at once, without finishing what they
        run: everything is going down), then the dispatcher and the gateway, redis-server
        last."""
        self._stop(list(self.workers), self.workers, timeout=5.0, sig=signal.SIGINT)
        rest = {n: p for n, p in self.procs.items() if n != "redis"}
        self._stop(list(rest), rest, timeout=5.0)
        if "redis" in self.procs:
            self._stop(["redis"], self.procs, timeout=5.0)

    def _release(self) -> None:
        if self.redis is not None:
            self.redis.close()

    def __enter__(self) -> "Platform":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so that `finally` blocks run (like Ctrl+C)."""


def _raise_on_sigterm():
    """In the main thread: SIGTERM raises `Terminated`; returns the handler it replaced."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        raise Terminated(f"signal {signum}")

    return signal.signal(signal.SIGTERM, handler)
