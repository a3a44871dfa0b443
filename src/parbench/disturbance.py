"""Cells measured while something else ran: caught, measured again, and shown.

Every cell is measured inside a ``LoadMeter`` (``parbench.telemetry.load``). A cell
during which other work kept more than ``disturbance.max_other_cores`` cores busy on
average (steal time included) is *disturbed*: it is saved (so that the attempt stays in
the cell's history), the run waits for the machine to be quiet again (at most
``disturbance.settle_sec``) and measures it again, up to ``disturbance.max_attempts``
attempts in all. A cell still disturbed after the last attempt keeps ``disturbed:
true``; the tables carry the flag and the figures and the paper show it, never hide it.

The meter also samples each descendant's own CPU time every
``disturbance.sample_descendants_sec`` (``LoadMeter``'s ``sample_sec``), so that the work
of a descendant its own parent reaped unseen (Ray's workers) is not taken for load.

Only a cell that measured (status "ok") is judged: a failed or unavailable cell is not
measured again for its load.

The record of a cell gains:
- ``load``: this attempt's reading (``LoadMeter.reading``);
- ``disturbed``: whether this attempt was disturbed;
- ``attempt``: which attempt it is (from 1);
- ``earlier_attempts``: the load of each earlier, disturbed attempt;
- ``planned_position``: where the run's plan put the cell (parbench.pipeline.run_order);
- ``run_id``: the pipeline run that measured it.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Callable

from parbench.progress import run_id
from parbench.telemetry.load import LoadMeter
from parbench.words import counted

if TYPE_CHECKING:  # pandas is imported where a table is built, not by every cell that imports this
    import pandas as pd


def settings(cfg: dict) -> dict:
    return cfg["disturbance"]


def is_disturbed(load: dict, max_other_cores: float) -> bool:
    other = load.get("other_cores")
    return other is not None and other > max_other_cores


def describe(load: dict) -> str:
    """`0.62 cores busy elsewhere (steal 0.10)` for the console."""
    steal = load.get("steal_cores")
    return (f"{load['other_cores']:.2f} cores busy elsewhere"
            + (f" (steal {steal:.2f})" if steal is not None else ""))


def wait_until_quiet(max_other_cores: float, settle_sec: float, slice_sec: float = 0.5,
                     meter_factory=LoadMeter, sleep=time.sleep, clock=time.monotonic) -> bool:
    """Wait, at most `settle_sec`, for one `slice_sec` during which the machine was busy
    elsewhere below the threshold; True when it was quiet, False when time ran out."""
    deadline = clock() + settle_sec
    while True:
        meter = meter_factory().start()
        sleep(slice_sec)
        if not is_disturbed(meter.stop(), max_other_cores):
            return True
        if clock() >= deadline:
            return False


def measure_undisturbed(cfg: dict, measure: Callable[[], dict], save: Callable[[dict], None], label: str,
                        out=None, meter_factory=LoadMeter, quiet=wait_until_quiet, cell: tuple | None = None) -> dict:
    """Measure a cell (``measure()`` returns its record) until an attempt is not disturbed
    or ``max_attempts`` were made. Each disturbed attempt but the last is given to
    ``save`` (which writes it and keeps it in the cell's history) before the next one;
    the last record is returned, for the caller to save as usual."""
    out = out or sys.stderr
    conf = settings(cfg)
    position = None
    if cell is not None:  # (study, cell): where the plan put it
        from parbench.pipeline import planned_position

        position = planned_position(cfg, *cell)
    limit, attempts = conf["max_other_cores"], conf["max_attempts"]
    earlier: list[dict] = []
    for attempt in range(1, attempts + 1):
        meter = meter_factory(sample_sec=conf.get("sample_descendants_sec", 0)).start()
        try:
            record = measure()
        finally:
            load = meter.stop()
        disturbed = record.get("status") == "ok" and is_disturbed(load, limit)
        record.update(load=load, disturbed=disturbed, attempt=attempt, earlier_attempts=list(earlier),
                      planned_position=position)
        record.setdefault("run_id", run_id())
        if not disturbed:
            return record
        if attempt == attempts:
            print(f"  warning: {label} was disturbed in all {counted(attempts, 'attempt')} "
                  f"({describe(load)}, more than "
                  f"{limit:g}); recorded as disturbed", file=out, flush=True)
            return record
        save(record)
        earlier.append({"attempt": attempt, "load": load})
        print(f"  note: {label} was disturbed ({describe(load)}, more than {limit:g}); kept in its history, "
              f"measuring again (attempt {attempt + 1}/{attempts})", file=out, flush=True)
        quiet(limit, conf["settle_sec"])
    raise AssertionError("unreachable")


# The columns a study's per-repetition table takes from a record (docs/data.md).
LOAD_COLUMNS = ["load_other_cores", "load_steal_cores", "cell_cpu_sec", "disturbed", "attempts", "load_reason"]


def load_columns(record: dict) -> dict:
    """A record's load as table columns: the cores busy outside the cell on average (steal
    included) and steal alone, the cell's own CPU seconds, whether it was disturbed, and
    how many attempts it took. Null for a record measured before loads were recorded."""
    load = record.get("load")
    reason = (NOT_RECORDED if load is None else
              None if load.get("other_cores") is not None else load.get("reason") or "no reading")
    load = load or {}
    return {"load_other_cores": load.get("other_cores"), "load_steal_cores": load.get("steal_cores"),
            "cell_cpu_sec": load.get("cell_cpu_sec"), "disturbed": bool(record.get("disturbed", False)),
            "attempts": record.get("attempt"), "load_reason": reason}


# why a record has no load reading when it was measured before readings were recorded
NOT_RECORDED = "measured before parbench recorded the load"


def earlier_load(record: dict) -> float | None:
    """The most cores busy outside the cell in any of the record's earlier, disturbed
    attempts (what made it measure again); None when it took one attempt."""
    loads = [a.get("load", {}).get("other_cores") for a in record.get("earlier_attempts") or []]
    return max((x for x in loads if x is not None), default=None)


def load_table(study: str, records: list[dict], label, group) -> pd.DataFrame:
    """One row per measured record (a cell's repetition) of a study: when it started, the
    load during it and whether it was disturbed (`<study>_load.parquet`, docs/data.md).
    `label(record)` names the cell, `group(record)` what drift must hit alike (sigpar:
    the mode and backend; sched: the scheduler; ...)."""
    import pandas as pd

    rows = []
    for record in records:
        rows.append({"study": study, "cell": label(record), "group": group(record),
                     "rep": int(record.get("cell", {}).get("rep", 0) or 0), "status": record.get("status"),
                     "started_unix": record.get("started_unix"), "elapsed_sec": record.get("elapsed_sec"),
                     "planned_position": record.get("planned_position"), "run_id": record.get("run_id"),
                     **load_columns(record), "earlier_other_cores_max": earlier_load(record)})
    columns = ["study", "cell", "group", "rep", "status", "started_unix", "elapsed_sec", "planned_position", "run_id",
               *LOAD_COLUMNS, "earlier_other_cores_max"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["disturbed"] = frame["disturbed"].astype(bool)
    frame["attempts"] = pd.to_numeric(frame["attempts"], errors="coerce").astype("Int64")
    frame["planned_position"] = pd.to_numeric(frame["planned_position"], errors="coerce").astype("Int64")
    frame["run_id"] = frame["run_id"].astype(object)
    for c in ("load_other_cores", "load_steal_cores", "cell_cpu_sec", "started_unix", "elapsed_sec",
              "earlier_other_cores_max"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce").astype(float)
    return frame.sort_values(["started_unix", "cell", "rep"]).reset_index(drop=True)


# A repetition as the paper and the figures name it ("repetition 3 of 3"): `rep` counts from 0.
NUMBERED = "parbench.disturbance:numbered_reps"


def numbered_reps(table: pd.DataFrame) -> pd.DataFrame:
    """A load table with `repetition`, each row's repetition counted from 1."""
    return table.assign(repetition=table["rep"].astype(int) + 1)


def disturbed_ends(times: pd.Series, disturbed: pd.Series) -> str:
    """Which ends of a range of times ("the shortest", "the longest", both) come from a
    repetition that stayed disturbed (`disturbed`, aligned with `times`): "" for neither."""
    flags = disturbed.fillna(False).astype(bool)
    ends = [word for word, at in (("the shortest", times.idxmin()), ("the longest", times.idxmax())) if flags[at]]
    return " and ".join(ends)


def load_facts(f, table: pd.DataFrame, name: str) -> dict:
    """The facts a study's setup states about load: how many of its repetitions were
    measured, were measured again (and the most load their earlier attempts saw), stayed
    disturbed, and how busy the machine was elsewhere (median and most), and the disturbed
    ones by name."""
    measured = table[table["status"] == "ok"]
    f.aggregate("load_reps", name, "count", where={"status": "ok"})
    retried = f.aggregate("load_retried", name, "count", where={"status": "ok", "attempts": {">=": 2}})
    earlier_known = bool(retried.value) and "earlier_other_cores_max" in measured \
        and measured["earlier_other_cores_max"].notna().any()
    if earlier_known:
        f.aggregate("load_earlier_max", name, "max", "earlier_other_cores_max", where={"status": "ok"},
                    fmt="fixed2", unit="cores")
    f.aggregate("load_disturbed", name, "count", where={"status": "ok", "disturbed": True})
    known = measured.dropna(subset=["load_other_cores"])
    if len(known):
        f.aggregate("load_median", name, "median", "load_other_cores", where={"status": "ok"}, fmt="fixed2",
                    unit="cores")
        f.aggregate("load_max", name, "max", "load_other_cores", where={"status": "ok"}, fmt="fixed2",
                    unit="cores")
    disturbed = [{"cell": r.cell, "rep": f.lookup(f"disturbed_rep.{r.cell}.{r.rep}", name, r,
                                                  "repetition", fmt="int", interval=False, via=NUMBERED),
                  "load": f.lookup(f"disturbed_load.{r.cell}.{r.rep}", name, r, "load_other_cores", fmt="fixed2",
                                   unit="cores", interval=False)}
                 for r in numbered_reps(measured[measured["disturbed"]]).itertuples()]
    reasons = measured["load_reason"].dropna() if "load_reason" in measured else measured["load_other_cores"].iloc[0:0]
    if not len(known) and len(reasons):
        f.aggregate("load_reason", name, "values", "load_reason", where={"status": "ok"}, fmt="list")
    return {"load_known": bool(len(known)), "disturbed_cells": disturbed, "load_unknown_reason": bool(len(reasons)),
            "load_earlier_known": earlier_known}
