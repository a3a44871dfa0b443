"""Writing measured records so that nothing is half-written, lost or silently replaced.

- `write_atomic`: a reader sees the old file or the new one, whole, never a mix.
- `keep_history`: every finished measurement is also copied into a timestamped folder
  that Snakemake never deletes, so rerunning a cell replaces its outputs but not the
  earlier measurement.
- `failed_in_run`: a cell's record, when this run wrote it and its checks failed (what
  the end of a run lists).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path


def replace_atomically(path: Path, write) -> Path:
    """Make `path` by `write(tmp)` into a temporary file beside it, then a rename: a
    reader sees the old file or the whole new one, never half of it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    write(tmp)
    os.replace(tmp, path)
    return path


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write `text` (or bytes) to `path` through a temporary file and a rename."""

    def write(tmp: Path) -> None:
        with open(tmp, "wb" if isinstance(text, bytes) else "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())

    replace_atomically(path, write)


def keep_history(folder: Path, outputs) -> tuple[Path, list[Path]]:
    """Copy the files `outputs` into a new `folder/<UTC time>/`; returns (that folder,
    the copies made before it, oldest first)."""
    folder = Path(folder)
    earlier = sorted(p for p in folder.glob("*") if p.is_dir())
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    dest, n = folder / stamp, 1
    while dest.exists():
        n += 1
        dest = folder / f"{stamp}-{n}"
    dest.mkdir(parents=True)
    for path in outputs:
        shutil.copy2(path, dest / Path(path).name)
    return dest, earlier


def failed_in_run(path, run_id: str | None) -> dict | None:
    """The record at `path` if run `run_id` wrote it and its status is "failed"; None when
    there is no record, an earlier run wrote it, or it passed."""
    path = Path(path)
    if not path.exists():
        return None
    record = json.loads(path.read_text())
    return record if record.get("run_id") == run_id and record["status"] == "failed" else None


def read_records(paths) -> list[dict]:
    """The cell records (JSON) at `paths`, in that order: what every study aggregates."""
    return [json.loads(Path(p).read_text()) for p in paths]


def finish_check(out: str | None, doc: dict, problems: list[str], failed: str, passed: str) -> int:
    """The end of a check command: its verdict (`doc` with `problems` and `ok`) written to
    `out` as JSON when asked for, then the problems under the line `failed` on stderr, or the
    line `passed`; the command's exit status (1 with problems)."""
    import sys

    doc = {**doc, "problems": problems, "ok": not problems}
    if out:
        write_atomic(Path(out), json.dumps(doc, indent=1) + "\n")
    if problems:
        print(failed, file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(passed)
    return 0
