"""`parbench resume-check`: let `make paper` and `make rerun` resume after a run that was
killed outright.

Snakemake locks the checkout while it runs (`.snakemake/locks/`). A run killed with
SIGKILL (power loss, the OOM killer, a closed terminal) cannot remove its lock, and the
next run then refuses to start until someone runs `snakemake --unlock`. Before starting,
`make` asks this module: when lock files exist but no Snakemake process works in this
checkout, the locks are stale and are removed (what `snakemake --unlock` does), and the
new run resumes (rerun-incomplete is on in profiles/default); when one does, the command
refuses, naming it, instead of breaking into its run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


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
    return True, (f"removed the lock a killed run left behind ({len(locks)} file(s) in .snakemake/locks); "
                  f"the run resumes where it stopped")


def main(args) -> int:
    ok, message = resume_check(Path(args.root))
    if message:
        print(f"parbench: {message}", file=sys.stdout if ok else sys.stderr, flush=True)
    return 0 if ok else 3


def add_commands(sub) -> None:
    p = sub.add_parser("resume-check", help="remove the lock of a killed run, refuse when another run is working")
    p.add_argument("--root", default=".", help="the checkout (default: the current folder)")
    p.set_defaults(func=main)
