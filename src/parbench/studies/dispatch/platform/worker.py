"""A worker: one process with a pool of N processes (the seed: 5) that runs tasks for
the dispatcher, in the dispatcher's mode.

- `push`: a DEALER socket; says READY with one credit per free process, runs each chunk
  it is sent in one pool process, returns finished results (and the credit they free) as
  soon as they are done, several in one message when they finish together; sends a
  HEARTBEAT every interval; on SIGTERM or Ctrl+C it finishes what it runs, returns the
  results and says BYE.
- `push-naive`: the seed's worker: a DEALER socket; READY once, then each task it is
  sent goes to the pool on its own and its result goes back in its own message;
  heartbeats; stopped, it simply ends (the dispatcher learns of it when its heartbeats
  lapse).
- `pull`: a REQ socket; asks for work with its finished results, its free processes and
  how many chunks it still runs; asks at once while it has results to return or is
  idle, otherwise when a chunk finishes, and at least once per heartbeat interval (a
  request is its heartbeat); BYE on SIGTERM like push. A request the dispatcher does not
  answer within the heartbeat expiry (it died, and a new one took its place) is sent
  again on a new socket (ZeroMQ's "lazy pirate"), as a REQ socket would wait forever.

In every mode a worker the dispatcher does not know (a dispatcher started again) is told
REGISTER and says READY again; the tasks it still runs for the old dispatcher finish, and
their results are offered to the new one (which stores only those of attempts it
dispatched itself).

The pool (`pool.TaskPool`) outlives any task: a task that crashes its process or runs
past its time limit fails alone, its process is replaced and the worker goes on. Its
processes are started (and say hello) before the worker says READY. A pool process dies
with its worker (Linux: PR_SET_PDEATHSIG), so a killed worker leaves nothing behind.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time

from parbench.studies.dispatch.platform import executor, protocol
from parbench.studies.dispatch.platform.lifecycle import run_until_stopped
from parbench.studies.dispatch.platform.pool import TaskPool

MODES = ("pull", "push", "push-naive")
STOP_GRACE_SEC = 5.0


class Worker:
    def __init__(self, worker_id: str, mode: str, endpoint: str, processes: int, heartbeat_interval: float,
                 limits: executor.Limits, heartbeat_liveness: int = 3):
        import zmq
        import zmq.asyncio

        self.zmq = zmq
        self.worker_id = worker_id
        self.mode = mode
        self.endpoint = endpoint
        self.processes = processes
        self.interval = heartbeat_interval
        self.reply_timeout = heartbeat_interval * heartbeat_liveness
        self.pool = TaskPool(processes, limits, self._pool_done, name=f"worker {worker_id}",
                             on_broken=self._pool_broken)
        self.context = zmq.asyncio.Context()
        self.bodies: dict[str, bytes] = {}
        self.running = 0  # chunks in the pool
        self.results: list = []
        self.credit_back = 0
        self.changed = asyncio.Event()
        self.stopping = asyncio.Event()
        self.failure: str | None = None

    def socket(self, kind):
        sock = self.context.socket(kind)
        sock.setsockopt(self.zmq.LINGER, 1000)
        if kind == self.zmq.DEALER:
            sock.setsockopt(self.zmq.IDENTITY, self.worker_id.encode())
        sock.connect(self.endpoint)
        return sock

    def message(self, kind: str, **fields) -> bytes:
        return protocol.pack({"kind": kind, "worker": self.worker_id, **fields})

    # --- running chunks --------------------------------------------------------------
    def submit(self, items: list, on_done=None) -> None:
        """Run a chunk in the pool; `on_done(results)` (default: `chunk_done`) when it is done."""
        bodies = {fid: self.bodies[fid] for fid in {item[2] for item in items}}
        self.running += 1
        self.pool.submit(items, bodies, on_done or self.chunk_done)

    @staticmethod
    def _pool_done(on_done, results: list) -> None:
        on_done(results)

    def chunk_done(self, results: list) -> None:
        self.running -= 1
        self.credit_back += 1
        self.results.extend(results)
        self.changed.set()

    def _pool_broken(self, reason: str) -> None:
        self.failure = reason
        self.stopping.set()

    async def drain(self) -> None:
        deadline = time.monotonic() + STOP_GRACE_SEC
        while self.running and time.monotonic() < deadline:
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), deadline - time.monotonic())
            except asyncio.TimeoutError:
                break

    # --- push (credit) -------------------------------------------------------------
    def ready(self) -> bytes:
        """READY with the credit free now (the credit of chunks still running comes back
        with their results)."""
        self.credit_back = 0
        return self.message(protocol.READY, processes=self.processes, credit=self.processes - self.running)

    async def run_push(self) -> None:
        sock = self.socket(self.zmq.DEALER)
        await sock.send(self.ready())

        async def receive():
            while True:
                message = protocol.unpack(await sock.recv())
                self.bodies.update(message.get("functions") or {})
                if message["kind"] == protocol.TASKS:
                    for chunk in message["chunks"]:
                        self.submit(chunk)
                elif message["kind"] == protocol.REGISTER:
                    await sock.send(self.ready())

        async def send_results():
            last_heartbeat = time.monotonic()
            while True:
                try:
                    await asyncio.wait_for(self.changed.wait(), self.interval)
                except asyncio.TimeoutError:
                    pass
                self.changed.clear()
                if self.results:
                    results, self.results = self.results, []
                    credit, self.credit_back = self.credit_back, 0
                    await sock.send(self.message(protocol.RESULTS, results=results, credit=credit))
                    last_heartbeat = time.monotonic()
                if time.monotonic() - last_heartbeat >= self.interval:
                    await sock.send(self.message(protocol.HEARTBEAT))
                    last_heartbeat = time.monotonic()

        tasks = [asyncio.create_task(receive()), asyncio.create_task(send_results())]
        await run_until_stopped(self.stopping, tasks)
        if not self.failure:  # a broken pool finishes nothing more: say BYE at once
            await self.drain()
        results, self.results = self.results, []
        if results:
            await sock.send(self.message(protocol.RESULTS, results=results, credit=self.credit_back))
        await sock.send(self.message(protocol.BYE))
        sock.close(linger=1000)

    # --- push-naive (the seed's) ---------------------------------------------------------
    async def run_push_naive(self) -> None:
        sock = self.socket(self.zmq.DEALER)
        await sock.send(self.message(protocol.READY, processes=self.processes))

        def one_done(results) -> None:
            self.chunk_done(results)
            results, self.results = self.results, []
            asyncio.ensure_future(sock.send(self.message(protocol.RESULTS, results=results)))

        async def receive():
            while True:
                message = protocol.unpack(await sock.recv())
                if message["kind"] == protocol.TASK:
                    task = message["task"]
                    self.bodies[task[2]] = message["function"]
                    self.submit([task], one_done)
                elif message["kind"] == protocol.REGISTER:
                    await sock.send(self.message(protocol.READY, processes=self.processes))

        async def heartbeat():
            while True:
                await asyncio.sleep(self.interval)
                await sock.send(self.message(protocol.HEARTBEAT))

        await run_until_stopped(self.stopping, [asyncio.create_task(receive()), asyncio.create_task(heartbeat())])
        sock.close(linger=0)

    # --- pull -------------------------------------------------------------------------
    async def run_pull(self) -> None:
        sock = self.socket(self.zmq.REQ)
        last_sent = 0.0
        got_tasks = False
        stop = asyncio.create_task(self.stopping.wait())
        while not self.stopping.is_set():
            free = self.processes - self.running
            ask = (self.results or (free > 0 and (self.running == 0 or got_tasks))
                   or time.monotonic() - last_sent >= self.interval)
            if not ask:
                self.changed.clear()
                wake = asyncio.create_task(self.changed.wait())
                await asyncio.wait([wake, stop], timeout=max(0.0, self.interval - (time.monotonic() - last_sent)),
                                   return_when=asyncio.FIRST_COMPLETED)
                wake.cancel()
                continue
            results, self.results = self.results, []
            request = self.message(protocol.PULL, processes=self.processes, results=results, free=free,
                                   busy=self.running)
            while True:
                await sock.send(request)
                last_sent = time.monotonic()
                reply = asyncio.ensure_future(sock.recv())
                await asyncio.wait([reply, stop], timeout=self.reply_timeout, return_when=asyncio.FIRST_COMPLETED)
                if reply.done() or self.stopping.is_set():
                    break
                # no answer within the expiry: the dispatcher is gone (or was started
                # again); ask again on a new socket, as a REQ socket cannot send twice
                reply.cancel()
                sock.close(linger=0)
                sock = self.socket(self.zmq.REQ)
                print(f"worker {self.worker_id}: no answer from the dispatcher within {self.reply_timeout:g} s; "
                      f"asking again", file=sys.stderr, flush=True)
            if not reply.done():
                # stopping while a request is held: leave the socket; BYE goes on a new one
                reply.cancel()
                self.results = results + self.results
                break
            message = protocol.unpack(reply.result())
            self.bodies.update(message.get("functions") or {})
            got_tasks = bool(message["chunks"])
            for chunk in message["chunks"]:
                self.submit(chunk)
        sock.close(linger=0)
        if not self.failure:
            await self.drain()
        bye = self.socket(self.zmq.REQ)
        results, self.results = self.results, []
        await bye.send(self.message(protocol.BYE, results=results))
        try:
            await asyncio.wait_for(bye.recv(), 2.0)
        except asyncio.TimeoutError:
            pass
        bye.close(linger=0)

    # --- life -----------------------------------------------------------------------------
    async def run(self) -> None:
        if self.mode != "push-naive":
            # SIGTERM (how the harness stops a worker) is a graceful stop; Ctrl+C (SIGINT,
            # sent to the whole group when everything goes down) ends it at once
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, self.stopping.set)
        try:
            await self.pool.start()
            print(f"worker {self.worker_id}: {self.processes} pool processes; {self.pool.memory_limit()}",
                  file=sys.stderr, flush=True)
            await {"push": self.run_push, "push-naive": self.run_push_naive, "pull": self.run_pull}[self.mode]()
        finally:
            self.context.destroy(linger=0)  # closes sockets left open (e.g. after a Ctrl+C)
            self.pool.close(grace_sec=0.5)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="a worker of the dispatch platform")
    parser.add_argument("--mode", required=True, choices=MODES)
    parser.add_argument("--endpoint", required=True, help="the dispatcher's tcp://127.0.0.1:PORT")
    parser.add_argument("--worker-id", required=True)
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--heartbeat-interval", type=float, default=1.0)
    parser.add_argument("--heartbeat-liveness", type=int, default=3)
    parser.add_argument("--max-result-bytes", type=int, default=8 << 20)
    parser.add_argument("--memory-limit-mb", type=int, default=4096, help="address space of each pool process, MiB "
                        "(Linux: RLIMIT_AS; 0: none)")
    args = parser.parse_args(argv)
    if args.processes < 1:
        raise SystemExit(f"worker: --processes must be >= 1 (got {args.processes})")
    executor.die_with_parent()
    limits = executor.Limits(args.max_result_bytes, args.memory_limit_mb * executor.MIB)
    worker = Worker(args.worker_id, args.mode, args.endpoint, args.processes, args.heartbeat_interval, limits,
                    args.heartbeat_liveness)
    try:
        try:
            import uvloop

            uvloop.run(worker.run())
        except ImportError:
            asyncio.run(worker.run())
    except KeyboardInterrupt:
        pass
    if worker.failure:
        print(f"worker {args.worker_id}: {worker.failure}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
