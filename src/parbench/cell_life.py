"""The life cycle every study's cell shares, written once: the study's command checks its
arguments and builds its cell, then hands `run` what is its own (how to measure, how to
write the record, where its history goes) and prints its own progress line.

`run` ends the cell on SIGTERM as on Ctrl+C (Snakemake stopping a job), measures it again
while it is disturbed (`disturbance.measure_undisturbed`), writes every attempt
atomically, keeps a copy of each measurement in the cell's history (saying so when it
replaces an earlier one: nothing measured is lost), and writes nothing for an
interrupted cell.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path, PurePath
from typing import Any, Callable, Mapping

from parbench.disturbance import measure_undisturbed
from parbench.records import keep_history, write_atomic
from parbench.telemetry.load import LoadMeter

# A record that was not measured (a cell skipped after its algorithm failed) has no
# measurement to keep.
NOT_MEASURED = ("skipped",)


def interrupt_on_sigterm() -> None:
    """SIGTERM raises KeyboardInterrupt, so a stopped job ends as Ctrl+C ends it (every
    `finally` runs: whatever the cell started is stopped)."""
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))


def _path_text(value):
    if isinstance(value, PurePath):
        return str(value)
    raise TypeError(f"a record holds {value!r} ({type(value).__name__}), which JSON cannot store")


def write_json(path: str | Path, record: dict, compact: bool = False) -> list[Path]:
    """The record as JSON at `path`, written atomically; the files written. A path is
    written as its text; any other value JSON has no type for is an error."""
    text = (json.dumps(record, separators=(",", ":"), default=_path_text) if compact
            else json.dumps(record, indent=1, default=_path_text))
    write_atomic(Path(path), text + "\n")
    return [Path(path)]


def run(study: str, cell, cfg: dict, measure: Callable[[], dict], write: Callable[[dict], Any],
        *, command: str | None = None, ready: dict | None = None, interrupted: str = "no output written",
        meter_factory=LoadMeter) -> tuple[dict, Any] | None:
    """Measure `cell` (a `studies.base.CellPaths`) and write its record with
    `write(record)`, which returns the files it wrote (a list, or a mapping whose values
    are paths, the record's under "record"); (record, what `write` returned), or None when it
    was interrupted (the command then exits 130). A record that failed its checks is said on
    stderr with where it was recorded. `ready` is a
    record known without measuring (the cell skipped or not available here), written as
    it is. The load meter (`meter_factory`) makes this
    process a child subreaper: run it in the cell's own process, never in a long-lived one."""
    interrupt_on_sigterm()
    history = cell.history(cfg["profile"])
    # the cell as messages name it: its study, then its label (which may name the study already)
    who = cell.label if cell.label.startswith(f"{study} ") else f"{study} {cell.label}"

    def save(record: dict):
        written = write(record)
        files = list(written.values()) if isinstance(written, Mapping) else list(written)
        if record.get("status") not in NOT_MEASURED:
            dest, earlier = keep_history(history, files)
            if earlier:
                print(f"  note: replaced the measurement of {earlier[-1].name} for {who}; every "
                      f"measurement stays in {dest.parent}", file=sys.stderr)
        return written

    try:
        record = ready if ready is not None else measure_undisturbed(
            cfg, measure, save, who, cell=(study, cell), meter_factory=meter_factory)
    except KeyboardInterrupt:
        print(f"parbench {command or study + '-cell'}: {cell.label} interrupted; {interrupted}", file=sys.stderr)
        return None
    written = save(record)
    if record.get("status") == "failed":
        files = written if isinstance(written, Mapping) else {"record": next(iter(written), "?")}
        print(f"\nERROR {who} failed its checks: {record['failure']}\n  recorded as failed in {files['record']}",
              file=sys.stderr, flush=True)
    return record, written
