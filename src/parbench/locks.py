"""Resume after a run that was killed outright: `parbench resume-check` (what `make paper`
and `make rerun` call first), and the same check in every `snakemake` command of this
workflow (`snakemake report`, ...: `resume_in_snakemake`, called by common.smk).

Snakemake locks the checkout while it runs (`.snakemake/locks/`). A run killed with
SIGKILL (power loss, the OOM killer, a closed terminal) cannot remove its lock, and the
next run then refuses to start until someone runs `snakemake --unlock`. This module
checks first: when lock files exist but no Snakemake process works in this checkout, the
locks are stale and are removed (what `snakemake --unlock` does), and the new run resumes
(rerun-incomplete is on in profiles/default); when one does, its lock stays and the
command refuses, naming it, instead of breaking into its run.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from parbench.words import counted


def lock_files(root: Path) -> list[Path]:
    return sorted((Path(root) / ".snakemake" / "locks").glob("*.lock"))


def snakemake_processes(root: Path) -> list[tuple[int, str]]:
    """(pid, command line) of the Snakemake processes working in `root`, this one and its
    ancestors excluded."""
    import psutil

    root = Path(root).resolve()
    mine = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
    found = []
    for proc in psutil.process_iter(["pid", "cmdline", "cwd"]):
        try:
            cmdline = proc.info["cmdline"] or []
            cwd = proc.info["cwd"]
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if proc.info["pid"] in mine or not cwd or Path(cwd).resolve() != root:
            continue
        if any(Path(part).name == "snakemake" or part == "snakemake" for part in cmdline[:3]):
            found.append((proc.info["pid"], " ".join(cmdline)))
    return found


def resume_check(root: Path) -> tuple[bool, str]:
    """(may start, what was done or why not)."""
    locks = lock_files(root)
    if not locks:
        return True, ""
    running = snakemake_processes(root)
    if running:
        pid, cmdline = running[0]
        return False, (f"another Snakemake (pid {pid}: {cmdline}) is working in {root}; wait for it to finish "
                       f"or stop it (Ctrl+C, or kill {pid}), then run the command again")
    for lock in locks:
        lock.unlink(missing_ok=True)
    return True, (f"removed the lock a killed run left behind ({counted(len(locks), 'file')} in .snakemake/locks); "
                  f"the run resumes where it stopped")


class NameTheLockHolder(logging.Filter):
    """Adds to Snakemake's refusal to start on a held lock ("Directory cannot be locked",
    which suggests --unlock) which Snakemake holds it, and what to do instead."""

    def __init__(self, message: str):
        super().__init__()
        self.message = message

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if getattr(record, "exception", None) == "LockException" or "Directory cannot be locked" in text:
            record.msg, record.args = f"{text}\nparbench: {self.message}", None
        return True


def resume_in_snakemake(workflow, root: Path | None = None) -> None:
    """The resume check for any `snakemake` command of this workflow. common.smk calls it
    while Snakemake parses the Snakefile, which Snakemake 9 does before it checks its lock
    (Workflow.execute builds the DAG, then takes the lock in `persistence.lock()`): a stale
    lock is removed, saying so, and the command resumes; a lock held by a working
    Snakemake stays, and if Snakemake then refuses to start on it, the refusal names the
    working one. Only the command's own process checks: the jobs it starts parse the
    Snakefile too (exec mode subprocess or remote) while it works."""
    from snakemake_interface_executor_plugins.settings import ExecMode

    if workflow.exec_mode != ExecMode.DEFAULT:
        return
    ok, message = resume_check(Path(root) if root is not None else Path.cwd())
    if ok and message:
        print(f"parbench: {message}", flush=True)
    elif not ok:
        logging.getLogger("snakemake.logging").addFilter(NameTheLockHolder(message))


def main(args) -> int:
    ok, message = resume_check(Path(args.root))
    if message:
        print(f"parbench: {message}", file=sys.stdout if ok else sys.stderr, flush=True)
    return 0 if ok else 3


def add_commands(sub) -> None:
    p = sub.add_parser("resume-check", help="remove the lock of a killed run, refuse when another run is working")
    p.add_argument("--root", default=".", help="the checkout (default: the current folder)")
    p.set_defaults(func=main)
