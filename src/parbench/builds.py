"""`parbench builds-done`: the barrier between the run's builds and its cells.

Every build of a run (liboqs, each study's native code) is an input of the rule
`builds_done`, and every measured cell waits for its output (as an `ancient` input, so
that a rebuilt library does not by itself measure a cell again). A cell therefore never
runs while a build loads the machine, and once the builds are done every cell is ready
at once, so that the run follows the planned, shuffled order across all studies
(`parbench.pipeline.run_order`) instead of running first whatever needs no build.

The barrier's file records what the cells were measured on: each build output with its
size and SHA-256.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from parbench.records import write_atomic
from parbench.words import counted


def describe(path: Path) -> dict:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return {"path": str(path), "bytes": path.stat().st_size, "sha256": digest.hexdigest()}


def main(args) -> int:
    builds = [describe(Path(p)) for p in args.builds]
    doc = {"finished_unix": time.time(), "builds": builds}
    write_atomic(Path(args.out), json.dumps(doc, indent=1) + "\n")
    print(f"parbench: {counted(len(builds), 'build')} done; cells may start")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("builds-done", help="record the run's builds: the cells start after this")
    p.add_argument("--out", required=True)
    p.add_argument("builds", nargs="*", help="every build output of the run")
    p.set_defaults(func=main)
