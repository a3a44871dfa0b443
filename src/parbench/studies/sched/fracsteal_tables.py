"""The explorer zoom's record -> the tidy table `sched_fracsteal_frames` (docs/data.md).

One row per timed render: every frame twice, rendered in parallel (`scheduler` "ws_sync",
its thread count) and sequentially (`scheduler` "sequential", 1 thread), with the frame's
view, whether the two renders were byte-identical, and, for the parallel render, the
scheduler's counters. A record whose check failed gives one row of nulls with its
status and reason.

`parbench sched-fracsteal-aggregate` (commands.py) writes it.
"""

from __future__ import annotations

import pandas as pd

PROVENANCE = ["cpu_model", "logical_cores", "os_release", "kernel", "hostname", "git_commit", "config_hash",
              "timestamp_utc"]
COUNTERS = ["tasks_spawned", "tasks_executed", "steal_success", "steal_fail_empty", "steal_fail_race"]
FRAME = ["frame", "script_line", "command", "center_x", "center_y", "view_width", "magnification", "max_iter",
         "scheme", "image"]
COLUMNS = ["study", "profile", "status", "failure", "script", "width", "height", "threshold_pixels", *FRAME,
           "scheduler", "threads", "time_s", "verified", *COUNTERS, *PROVENANCE]


def frame_rows(record: dict) -> list[dict]:
    params = record["parameters"]
    base = {"study": "sched", "profile": record["profile"], "status": record["status"],
            "failure": record["failure"], "script": params["script"], "width": params["width"],
            "height": params["height"], "threshold_pixels": params["threshold_pixels"],
            **{c: record.get("provenance", {}).get(c) for c in PROVENANCE}}
    if record["status"] != "ok":
        return [dict(base, **{c: None for c in COLUMNS if c not in base})]
    rows = []
    for f in record["fracsteal"]["frames"]:
        frame = {"frame": f["frame"], "script_line": f["line"], "command": f["command"],
                 "center_x": f["center_x"], "center_y": f["center_y"], "view_width": f["view_width"],
                 "magnification": f["magnification"], "max_iter": f["max_iter"], "scheme": f["scheme"],
                 "image": f["image"], "verified": f["identical"]}
        rows.append(dict(base, **frame, scheduler="ws_sync", threads=params["threads"],
                         time_s=f["parallel_time_s"], **{c: f["counters"][c] for c in COUNTERS}))
        rows.append(dict(base, **frame, scheduler="sequential", threads=1, time_s=f["sequential_time_s"],
                         **{c: None for c in COUNTERS}))
    return rows


def frames_table(record: dict) -> pd.DataFrame:
    table = pd.DataFrame(frame_rows(record), columns=COLUMNS)
    for c in COUNTERS:  # integers, null where not measured
        table[c] = table[c].astype("Int64")
    return table


def speedups(table: pd.DataFrame) -> pd.DataFrame:
    """Per frame: its parallel and sequential time and their ratio (sequential / parallel)."""
    ok = table[table["status"] == "ok"]
    wide = ok.pivot_table(index="frame", columns="scheduler", values="time_s", aggfunc="first")
    wide = wide.rename(columns={"ws_sync": "parallel_time_s", "sequential": "sequential_time_s"})
    wide["ratio"] = wide["sequential_time_s"] / wide["parallel_time_s"]
    return wide.reset_index()


def summary(table: pd.DataFrame) -> dict | None:
    """The zoom in numbers (None when it was not measured or failed its check): frames,
    median parallel and sequential frame times, their ratio, and the range of the
    per-frame ratios."""
    ok = table[table["status"] == "ok"]
    if ok.empty:
        return None
    per = speedups(table)
    par, seq = per["parallel_time_s"].median(), per["sequential_time_s"].median()
    first = ok.iloc[0]
    return {"frames": len(per), "threads": int(ok.loc[ok["scheduler"] == "ws_sync", "threads"].iloc[0]),
            "width": int(first["width"]), "height": int(first["height"]), "script": first["script"],
            "parallel_median_s": par, "sequential_median_s": seq, "ratio": seq / par,
            "ratio_min": per["ratio"].min(), "ratio_max": per["ratio"].max(),
            "magnification_max": ok["magnification"].max(), "all_identical": bool(ok["verified"].all())}
