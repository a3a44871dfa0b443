"""The explorer zoom's record -> the tidy table `sched_fracsteal_frames` (docs/data.md).

One row per timed render: in every round of the zoom (`rep`), every frame twice,
rendered in parallel (`scheduler` "ws_sync", its thread count) and sequentially
(`scheduler` "sequential", 1 thread), with the frame's view, whether the two renders were
byte-identical, and, for the parallel render, the scheduler's counters. A record whose
check failed gives one row of nulls with its status and reason.

`speedups` and `summary` reduce the rounds to medians with 95% percentile-bootstrap
intervals: per frame, and for the seed's summary (median frame time over the frames,
taken in each round).

`parbench sched-fracsteal-aggregate` (commands.py) writes it.
"""

from __future__ import annotations

import pandas as pd

from parbench.stats import bootstrap_median_ci, bootstrap_paired_ratio_ci

PROVENANCE = ["cpu_model", "logical_cores", "os_release", "kernel", "hostname", "git_commit", "config_hash",
              "timestamp_utc"]
COUNTERS = ["tasks_spawned", "tasks_executed", "steal_success", "steal_fail_empty", "steal_fail_race"]
FRAME = ["frame", "script_line", "command", "center_x", "center_y", "view_width", "magnification", "max_iter",
         "scheme", "image"]
COLUMNS = ["study", "profile", "status", "failure", "script", "width", "height", "threshold_pixels", *FRAME,
           "scheduler", "threads", "rep", "time_s", "verified", *COUNTERS, *PROVENANCE]


def frame_rows(record: dict) -> list[dict]:
    params = record["parameters"]
    base = {"study": "sched", "profile": record["profile"], "status": record["status"],
            "failure": record["failure"], "script": params["script"], "width": params["width"],
            "height": params["height"], "threshold_pixels": params["threshold_pixels"],
            **{c: record.get("provenance", {}).get(c) for c in PROVENANCE}}
    if record["status"] != "ok":
        return [dict(base, **{c: None for c in COLUMNS if c not in base})]
    rows = []
    for run in record["runs"]:
        for f in run["fracsteal"]["frames"]:
            frame = {"frame": f["frame"], "script_line": f["line"], "command": f["command"],
                     "center_x": f["center_x"], "center_y": f["center_y"], "view_width": f["view_width"],
                     "magnification": f["magnification"], "max_iter": f["max_iter"], "scheme": f["scheme"],
                     "image": f["image"], "verified": f["identical"]}
            rows.append(dict(base, **frame, scheduler="ws_sync", threads=params["threads"], rep=run["rep"],
                             time_s=f["parallel_time_s"], **{c: f["counters"][c] for c in COUNTERS}))
            rows.append(dict(base, **frame, scheduler="sequential", threads=1, rep=run["rep"],
                             time_s=f["sequential_time_s"], **{c: None for c in COUNTERS}))
    return rows


def frames_table(record: dict) -> pd.DataFrame:
    table = pd.DataFrame(frame_rows(record), columns=COLUMNS)
    for c in [*COUNTERS, "rep"]:  # integers, null where not measured
        table[c] = table[c].astype("Int64")
    return table


def _times(ok: pd.DataFrame, scheduler: str) -> pd.DataFrame:
    """frame x rep -> that render's time."""
    return ok[ok["scheduler"] == scheduler].pivot_table(index="frame", columns="rep", values="time_s",
                                                        aggfunc="first")


def _paired(sequential: pd.Series, parallel: pd.Series) -> tuple[list, list]:
    """The two renders' times of the rounds that have both (indexed by round)."""
    both = pd.concat([sequential, parallel], axis=1, keys=["sequential", "parallel"]).dropna()
    return both["sequential"].tolist(), both["parallel"].tolist()


def speedups(table: pd.DataFrame) -> pd.DataFrame:
    """Per frame: its parallel and sequential time (median over the rounds, `_ci_low` /
    `_ci_high` its interval) and their ratio sequential / parallel, with the interval of
    the ratio from the rounds, each round's two renders resampled together (null
    intervals with one round)."""
    ok = table[table["status"] == "ok"]
    par, seq = _times(ok, "ws_sync"), _times(ok, "sequential")
    rows = []
    for frame in par.index:
        p, q = par.loc[frame].dropna().tolist(), seq.loc[frame].dropna().tolist()
        row = {"frame": frame, "parallel_time_s": pd.Series(p).median(), "sequential_time_s": pd.Series(q).median()}
        row["parallel_time_s_ci_low"], row["parallel_time_s_ci_high"] = bootstrap_median_ci(p)
        row["sequential_time_s_ci_low"], row["sequential_time_s_ci_high"] = bootstrap_median_ci(q)
        row["ratio"] = row["sequential_time_s"] / row["parallel_time_s"]
        # a round renders each frame in parallel, then sequentially: the ratio's interval
        # resamples the rounds, each with its two renders
        row["ratio_ci_low"], row["ratio_ci_high"] = bootstrap_paired_ratio_ci(*_paired(seq.loc[frame], par.loc[frame]))
        rows.append(row)
    columns = ["frame", "parallel_time_s", "sequential_time_s", "parallel_time_s_ci_low", "parallel_time_s_ci_high",
               "sequential_time_s_ci_low", "sequential_time_s_ci_high", "ratio", "ratio_ci_low", "ratio_ci_high"]
    return pd.DataFrame(rows, columns=columns).astype({c: "float64" for c in columns[1:]})


def summary(table: pd.DataFrame) -> dict | None:
    """The zoom in numbers (None when it was not measured or failed its check): frames,
    rounds, the seed's median parallel and sequential frame times (over the frames; the
    median over the rounds, with its interval), their ratio (with the interval from the
    rounds, each round's two medians resampled together), and the range of the per-frame
    ratios."""
    ok = table[table["status"] == "ok"]
    if ok.empty:
        return None
    per = speedups(table)
    par_by_round = _times(ok, "ws_sync").median(axis=0)  # one seed median per round
    seq_by_round = _times(ok, "sequential").median(axis=0)
    par_rounds, seq_rounds = par_by_round.tolist(), seq_by_round.tolist()
    par, seq = pd.Series(par_rounds).median(), pd.Series(seq_rounds).median()
    first = ok.iloc[0]
    return {"frames": len(per), "rounds": len(par_rounds),
            "threads": int(ok.loc[ok["scheduler"] == "ws_sync", "threads"].iloc[0]),
            "width": int(first["width"]), "height": int(first["height"]), "script": first["script"],
            "parallel_median_s": par, "sequential_median_s": seq,
            "parallel_median_s_ci": bootstrap_median_ci(par_rounds),
            "sequential_median_s_ci": bootstrap_median_ci(seq_rounds),
            "ratio": seq / par, "ratio_ci": bootstrap_paired_ratio_ci(*_paired(seq_by_round, par_by_round)),
            "ratio_min": per["ratio"].min(), "ratio_max": per["ratio"].max(),
            "magnification_max": ok["magnification"].max(), "all_identical": bool(ok["verified"].all())}


def summary_frame(table: pd.DataFrame) -> pd.DataFrame:
    """`summary` as a table of one row (none when the zoom was not measured or failed),
    each interval as `<column>_ci_low` / `_ci_high`: what the paper's facts about the
    zoom are looked up in, so that the paper check can compute them again."""
    s = summary(table)
    if s is None:
        return pd.DataFrame()
    row = {k: v for k, v in s.items() if not k.endswith("_ci")}
    for name in ("parallel_median_s", "sequential_median_s", "ratio"):
        row[f"{name}_ci_low"], row[f"{name}_ci_high"] = s[f"{name}_ci"]
    return pd.DataFrame([row])
