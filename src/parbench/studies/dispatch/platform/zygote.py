"""The fork server of a task pool: a clean Python process, started once per pool, that
forks pool processes on request and reports their exits.

A pool's owner (a worker, or the dispatcher in local mode) runs an event loop and
ZeroMQ's threads, which a fork must not copy, and starting a fresh interpreter for every
pool process is slow; this process has imported what a pool process needs and nothing
else, so forking it is quick and safe.

    python -m parbench.studies.dispatch.platform.zygote --fd N --max-result-bytes B --memory-limit-mb M

The control socket (a UNIX stream socket inherited as fd N):

- owner -> zygote: the byte `s` carrying one file descriptor (SCM_RIGHTS), a connected
  socket: fork a pool process that serves on it (`executor.serve`);
- zygote -> owner: `multiprocessing.connection` messages: `("ready", pid)` once,
  `("started", pid)` after each fork, `("exited", pid, exitcode)` when a pool process
  ends (exitcode negative: the signal that killed it).

It ends when its owner closes the control socket (and, on Linux, when its owner dies:
PR_SET_PDEATHSIG); its pool processes die with it (the same on Linux; elsewhere they end
at their next chunk, when they find their connection closed).
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import socket
import sys
from multiprocessing.connection import Connection

from parbench.studies.dispatch.platform import executor

SPAWN = b"s"


def serve(control_fd: int, limits: executor.Limits) -> int:
    control = socket.socket(fileno=control_fd)
    replies = Connection(os.dup(control_fd), readable=False)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the loop (the wakeup fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    replies.send(("ready", os.getpid()))
    while True:
        try:
            readable, _, _ = select.select([control, wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in readable:
            os.read(wake_r, 4096)
        if control in readable:
            data, fds, _, _ = socket.recv_fds(control, 1, 1)
            if not data:
                return 0  # the owner is gone: so are we (and, on Linux, our children)
            if data == SPAWN and fds:
                pid = os.fork()
                if pid == 0:
                    _child(fds[0], limits, [control.fileno(), replies.fileno(), wake_r, wake_w])
                os.close(fds[0])
                replies.send(("started", pid))
            else:
                for fd in fds:
                    os.close(fd)
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            replies.send(("exited", pid, os.waitstatus_to_exitcode(status)))


def _child(fd: int, limits: executor.Limits, close: list[int]) -> None:
    """In the forked child: drop the server's descriptors and signal handling, then be a
    pool process on `fd` until told to stop; never returns."""
    code = 0
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for other in close:
            os.close(other)
        executor.serve(socket.socket(fileno=fd), limits)
    except BaseException:  # a pool process must never run the server's loop
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="the fork server of a dispatch task pool")
    parser.add_argument("--fd", type=int, required=True, help="the control socket, inherited")
    parser.add_argument("--max-result-bytes", type=int, required=True)
    parser.add_argument("--memory-limit-mb", type=int, required=True)
    args = parser.parse_args(argv)
    executor.die_with_parent()
    return serve(args.fd, executor.Limits(args.max_result_bytes, args.memory_limit_mb * executor.MIB))


if __name__ == "__main__":
    sys.exit(main())
