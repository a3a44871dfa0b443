#!/usr/bin/env python3
"""run_test.py: one native test command under a time limit, for the Makefiles' test targets.

    python3 native/run_test.py --timeout SEC --log-dir DIR [--emulator 'CMD ARGS'] -- COMMAND [ARGS...]

Runs COMMAND (after the emulator's words, e.g. 'qemu-aarch64-static -L /usr/aarch64-linux-gnu'
for a cross build), keeps its output in DIR, prints it, and fails if the command failed, ran
past the time limit, or printed a sanitizer report (even one that did not change the exit
status). The time limit is Python's own (coreutils' `timeout` is not on macOS): SIGTERM to
the command's process group at the limit, SIGKILL 10 s later. Ctrl+C stops the command too.
Any Python 3 runs it (3.6 and later: macOS's /usr/bin/python3 included).
"""
import argparse
import os
import re
import shlex
import signal
import subprocess
import sys

SANITIZER = re.compile(r"ThreadSanitizer|AddressSanitizer|LeakSanitizer|runtime error:")
KILL_AFTER_SEC = 10.0


def stop(proc):
    """SIGTERM the command's process group, SIGKILL it when it is still there 10 s later."""
    for sig, wait in ((signal.SIGTERM, KILL_AFTER_SEC), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, required=True, help="seconds the command may run")
    parser.add_argument("--log-dir", required=True, help="folder of the command's log")
    parser.add_argument("--emulator", default="", help="words run before the command (a cross build's emulator)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command and its arguments (after --)")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    if args.timeout <= 0:
        parser.error("--timeout %r is not allowed; allowed: > 0 seconds" % args.timeout)
    os.makedirs(args.log_dir, exist_ok=True)
    log = os.path.join(args.log_dir, "%s-%d.log" % (os.path.basename(command[0]), os.getpid()))
    argv_run = shlex.split(args.emulator) + command
    print("-- " + " ".join(argv_run), flush=True)
    timed_out = False
    with open(log, "wb") as out:
        # a session of its own: the limit stops the command's children too
        proc = subprocess.Popen(argv_run, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            stop(proc)
        except KeyboardInterrupt:
            stop(proc)
            raise
    with open(log, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    sys.stdout.write(text)
    what = " ".join(command)
    if timed_out:
        print("FAIL: timed out after %gs: %s" % (args.timeout, what))
        return 1
    if proc.returncode != 0:
        print("FAIL (exit status %d): %s" % (proc.returncode, what))
        return 1
    if SANITIZER.search(text):
        print("FAIL: sanitizer report in the output of: %s" % what)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
