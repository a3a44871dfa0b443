"""Turn dispatch cell records into tidy tables and the seed's report.

Tables (Parquet; schemas in docs/data.md):
- cells:   one row per cell (system x experiment x rep) with its status and software versions;
- runs:    one row per run (system, experiment, rep, workers, workload, submission, run in
           the rep), with the anomaly's prediction for it (`predicted_stall_sec`) beside
           what was measured (`stall_sec`);
- tasks:   one row per task, with its stage times relative to the run's first submission;
- depth:   one row per queue-depth sample of a worker (platform modes);
- summary: one row per (experiment, system, phase, workload, submission, workers) over
           the repetitions: each repetition's value is the median of its runs, the row
           holds the median over repetitions with its 95% percentile-bootstrap interval
           (`_ci_low/_ci_high`), min and max over every run, the first run after the
           workers changed apart from the later ones, latency pooled over every task,
           success rate and weak-scaling efficiency;
- anomaly: one row per (experiment, system, expiry, workload order, workers, workload,
           first run after the change or not) of the modes with heartbeats, at every
           worker count after the first: completion time, measured and predicted stall,
           and their difference, each the median over repetitions with its interval;
- load:    one row per record (a cell's repetition): when it started, the load on the
           machine outside it and whether it stayed disturbed (`disturbance.load_table`);
           runs carry their record's `disturbed` flag, and every summary and anomaly row
           counts its repetitions that stayed disturbed (`disturbed_reps`), which the
           figures mark and the paper names.

`experiment` is `main` for the main sweep, else the name of one of the push anomaly's
experiments (plan.experiments); the seed's tables and the main figures read `main` only.

Weak-scaling efficiency at N workers = median completion time at 1 worker / median
completion time at N (same system and workload), its interval the bootstrap of that
ratio with both worker counts' repetitions resampled; `efficiency_first_run` uses the
first run after the change of workers instead of the median.
"""

from __future__ import annotations

import statistics

import pandas as pd

from parbench.disturbance import load_columns, load_table
from parbench.stats import bootstrap_median_ci, bootstrap_ratio_ci
from parbench.studies.dispatch import metrics
from parbench.studies.dispatch.plan import MAIN, SYSTEMS

# the confidence of every interval of the tables (percentile bootstrap)
CONFIDENCE = 0.95

PROVENANCE = ["cpu_model", "logical_cores", "os_release", "kernel", "hostname", "git_commit", "config_hash",
              "timestamp_utc"]
KEYS = ["experiment", "system", "kind", "phase", "workload", "submission", "workers"]
WORKLOAD_ORDER = ["noop", "cpu", "io"]
RUN_COLUMNS = ["study", "profile", "system", "kind", "experiment", "rep", "cell_status", "workers", "processes_per_worker",
               "workload", "workload_order", "submission", "phase", "repetition", "run_index", "first_after_change",
               "status", "failure", "tasks", "succeeded", "success_rate", "completion_time_sec",
               "throughput_tasks_per_sec", "avg_latency_ms", "min_latency_ms", "max_latency_ms", "p50_latency_ms",
               "p95_latency_ms", "p99_latency_ms", "exactly_once", "requests", "registered_workers", "stale_workers",
               "requeued_tasks", "workers_dropped", "max_tasks_held", "heartbeat_interval_sec", "heartbeat_liveness",
               "expiry_sec", "stale_lag_sec", "predicted_stall_sec", "stall_sec", "errors", "disturbed"]
TASK_COLUMNS = ["study", "profile", "system", "kind", "experiment", "rep", "cell_status", "workers", "workload",
                "submission", "phase", "repetition",
                "run_index", "first_after_change", "task_index", "task_id", "status", "correct", "error", "attempts",
                "worker", "first_worker", "workers_tried", "completions", "latency_ms", "submitted_ms", "queued_ms",
                "first_dispatched_ms", "dispatched_ms", "started_ms", "finished_ms", "stored_ms", "seen_ms"]
DEPTH_COLUMNS = ["study", "profile", "system", "experiment", "rep", "workers", "workload", "submission", "phase",
                 "repetition", "run_index", "t_ms", "worker", "tasks_held"]
ANOMALY_KEYS = ["experiment", "system", "heartbeat_interval_sec", "expiry_sec", "workload_order", "workers", "workload",
                "first_after_change"]
_INTERVAL = ("", "_ci_low", "_ci_high")
# the columns of the summary and anomaly tables, also when no run was measured
SUMMARY_COLUMNS = [*KEYS, "status", "failure", "repetitions", "disturbed_reps", "runs", "tasks_per_run",
                   *(f"median_completion_time_sec{e}" for e in _INTERVAL), "min_completion_time_sec",
                   "max_completion_time_sec", *(f"first_run_completion_time_sec{e}" for e in _INTERVAL),
                   "later_median_completion_time_sec", *(f"median_throughput_tasks_per_sec{e}" for e in _INTERVAL),
                   "min_throughput_tasks_per_sec", "max_throughput_tasks_per_sec", "mean_throughput_tasks_per_sec",
                   "success_rate", "stale_workers_first_run", "requeued_tasks", "avg_latency_ms", "min_latency_ms",
                   "max_latency_ms", "p50_latency_ms", "p95_latency_ms", "p99_latency_ms",
                   *(f"weak_scaling_efficiency{e}" for e in _INTERVAL),
                   *(f"efficiency_first_run{e}" for e in _INTERVAL)]
ANOMALY_COLUMNS = [*ANOMALY_KEYS, "from_workers", "repetitions", "disturbed_reps",
                   *(f"median_{c}{e}" for c in ("completion_time_sec", "stall_sec", "predicted_stall_sec",
                                                "residual_sec", "stale_lag_sec") for e in _INTERVAL),
                   "stale_workers", "requeued_tasks"]


def _base(record: dict) -> dict:
    return {"study": "dispatch", "profile": record["profile"], "system": record["cell"]["system"],
            "kind": record["cell"]["kind"], "experiment": record["cell"].get("experiment") or MAIN,
            "rep": int(record["cell"].get("rep", 0))}


def load_label(record: dict) -> str:
    """A cell's name in the load table: its key, `push-naive` or `push-naive@expiry-1x6`."""
    experiment = record["cell"].get("experiment") or MAIN
    system = record["cell"]["system"]
    return system if experiment == MAIN else f"{system}@{experiment}"


def load_group(record: dict) -> str:
    """What the run order must spread over the run: the system."""
    return record["cell"]["system"]


def disturbed_reps(rows: pd.DataFrame) -> int:
    """How many of the repetitions behind `rows` (runs that passed) stayed disturbed: a
    repetition is one record, measured again while the machine was busy elsewhere."""
    if rows.empty or "disturbed" not in rows:
        return 0
    return int(rows.loc[rows["disturbed"].fillna(False).astype(bool), "rep"].nunique())


def main_only(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the main sweep (not of the anomaly's experiments)."""
    return frame[frame["experiment"] == MAIN] if "experiment" in frame else frame


def _frame(columnar: dict, base: dict, columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(columnar)
    if frame.empty:
        return pd.DataFrame(columns=columns)
    frame = frame.rename(columns={"mode": "system"})
    for key, value in base.items():
        frame[key] = value
    for column in columns:
        if column not in frame:
            frame[column] = None
    return frame[columns]


def cell_table(records: list[dict]) -> pd.DataFrame:
    rows = []
    for record in records:
        runs = record["runs"]
        rows.append({**_base(record), "status": record["status"], "failure": record["failure"],
                     "runs": len(runs), "failed_runs": sum(1 for r in runs if r.get("status") == "failed"),
                     "tasks": sum(r.get("tasks") or 0 for r in runs if r.get("status") != "unavailable"),
                     "elapsed_sec": record["elapsed_sec"], **load_columns(record),
                     **{f"{k}_version": v for k, v in record.get("versions", {}).items()},
                     **{c: record.get("provenance", {}).get(c) for c in PROVENANCE}})
    return pd.DataFrame(rows)


def run_table(records: list[dict]) -> pd.DataFrame:
    frames = []
    for record in records:
        base = {**_base(record), "cell_status": record["status"], "disturbed": bool(record.get("disturbed", False))}
        params = record.get("parameters", {})
        platform = params.get("platform") or {}
        base.update(heartbeat_interval_sec=platform.get("heartbeat_interval_sec"),
                    heartbeat_liveness=platform.get("heartbeat_liveness"),
                    workload_order=",".join(params.get("workloads") or []) or None)
        frames.append(_frame({k: [r.get(k) for r in record["runs"]] for k in
                              dict.fromkeys(k for r in record["runs"] for k in r)}, base, RUN_COLUMNS))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=RUN_COLUMNS)


def task_table(records: list[dict]) -> pd.DataFrame:
    frames = [_frame(r["tasks"], {**_base(r), "cell_status": r["status"]}, TASK_COLUMNS) for r in records
              if r.get("tasks")]
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=TASK_COLUMNS)


def depth_table(records: list[dict]) -> pd.DataFrame:
    frames = [_frame(r["depth"], _base(r), DEPTH_COLUMNS) for r in records if r.get("depth")]
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=DEPTH_COLUMNS)


def _median(values) -> float | None:
    values = [v for v in values if v is not None and not pd.isna(v)]
    return statistics.median(values) if values else None


def per_rep(ok: pd.DataFrame, column: str) -> list[float]:
    """One value per repetition: the median of that repetition's runs (ok runs only)."""
    values = ok.dropna(subset=[column]).groupby("rep")[column].median()
    return values.tolist()


def summary_table(runs: pd.DataFrame, tasks: pd.DataFrame) -> pd.DataFrame:
    rows = []
    if runs.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    samples = {}  # (experiment, system, ..., workers) -> per-repetition completion times (weak scaling)
    for key, group in runs.groupby(KEYS, sort=False, dropna=False):
        row = dict(zip(KEYS, key))
        statuses = set(group["status"])
        row["status"] = ("unavailable" if statuses == {"unavailable"} else "failed"
                         if ("failed" in statuses or (group["cell_status"] == "failed").any()) else "ok")
        failures = group["failure"].dropna()
        row["failure"] = failures.iloc[0] if len(failures) else None
        ok = group[group["status"] == "ok"]
        times, rates = ok["completion_time_sec"].tolist(), ok["throughput_tasks_per_sec"].tolist()
        first = ok[ok["first_after_change"] == True]  # noqa: E712
        later = ok[ok["first_after_change"] != True]  # noqa: E712
        rep_times, rep_rates = per_rep(ok, "completion_time_sec"), per_rep(ok, "throughput_tasks_per_sec")
        rep_first = per_rep(first, "completion_time_sec")
        samples[(row["experiment"], row["system"], row["phase"], row["workload"], row["submission"], row["workers"])] = \
            {"median_completion_time_sec": rep_times, "first_run_completion_time_sec": rep_first}
        time_ci, rate_ci, first_ci = (bootstrap_median_ci(values, CONFIDENCE)
                                      for values in (rep_times, rep_rates, rep_first))
        row.update(repetitions=int(ok["rep"].nunique()), disturbed_reps=disturbed_reps(ok), runs=len(ok),
                   tasks_per_run=int(group["tasks"].iloc[0]),
                   median_completion_time_sec=_median(rep_times),
                   median_completion_time_sec_ci_low=time_ci[0], median_completion_time_sec_ci_high=time_ci[1],
                   min_completion_time_sec=min(times, default=None), max_completion_time_sec=max(times, default=None),
                   first_run_completion_time_sec=_median(rep_first),
                   first_run_completion_time_sec_ci_low=first_ci[0], first_run_completion_time_sec_ci_high=first_ci[1],
                   later_median_completion_time_sec=_median(later["completion_time_sec"]),
                   median_throughput_tasks_per_sec=_median(rep_rates),
                   median_throughput_tasks_per_sec_ci_low=rate_ci[0], median_throughput_tasks_per_sec_ci_high=rate_ci[1],
                   min_throughput_tasks_per_sec=min(rates, default=None),
                   max_throughput_tasks_per_sec=max(rates, default=None),
                   mean_throughput_tasks_per_sec=sum(rates) / len(rates) if rates else None,
                   success_rate=(ok["succeeded"].sum() / ok["tasks"].sum()) if len(ok) else None,
                   stale_workers_first_run=_median(first["stale_workers"]) if len(first) else None,
                   requeued_tasks=ok["requeued_tasks"].sum() if ok["requeued_tasks"].notna().any() else None)
        if not tasks.empty and len(ok):
            mine = tasks[(tasks["system"] == row["system"]) & (tasks["experiment"] == row["experiment"])] \
                .merge(ok[["rep", "run_index"]], on=["rep", "run_index"])
            latencies = mine["latency_ms"].dropna().tolist()
        else:
            latencies = []
        row.update(metrics.latency_summary(latencies))
        rows.append(row)
    summary = pd.DataFrame(rows)
    weak = summary["phase"] == "weak_scaling"
    for column, source in (("weak_scaling_efficiency", "median_completion_time_sec"),
                           ("efficiency_first_run", "first_run_completion_time_sec")):
        one = summary[weak & (summary["workers"] == 1) & (summary["status"] == "ok")] \
            .set_index(["experiment", "system", "workload"])[source]
        summary[column] = [metrics.efficiency(one.get((r.experiment, r.system, r.workload)), getattr(r, source))
                           if r.phase == "weak_scaling" and r.status == "ok" else None for r in summary.itertuples()]
        # T(1) / T(N), both worker counts' repetitions resampled
        bounds = []
        for r in summary.itertuples():
            key = (r.experiment, r.system, r.phase, r.workload, r.submission)
            if r.phase != "weak_scaling" or r.status != "ok" or (r.experiment, r.system, r.workload) not in one.index:
                bounds.append((None, None))
                continue
            bounds.append(bootstrap_ratio_ci(samples[(*key, 1)][source], samples[(*key, r.workers)][source],
                                             confidence=CONFIDENCE))
        summary[f"{column}_ci_low"] = [b[0] for b in bounds]
        summary[f"{column}_ci_high"] = [b[1] for b in bounds]
    order = {"system": {s: i for i, s in enumerate(SYSTEMS)}, "workload": {w: i for i, w in enumerate(WORKLOAD_ORDER)},
             "phase": {"weak_scaling": 0, "saturation": 1}, "submission": {"per_task": 0, "batch": 1}}

    def rank(column: pd.Series) -> pd.Series:
        if column.name == "experiment":  # the main sweep first, then the experiments by name
            return column.map(lambda v: "" if v == MAIN else v)
        return column.map(order[column.name]) if column.name in order else column

    return summary.sort_values(["experiment", "phase", "system", "workload", "submission", "workers"],
                               key=rank).reset_index(drop=True)


def previous_count(workers: pd.Series) -> pd.Series:
    """For runs in the order they ran, the worker count before the one each ran at
    (None at the first count)."""
    out, before, current = [], None, None
    for w in workers:
        if w != current:
            before, current = current, w
        out.append(before)
    return pd.Series(out, index=workers.index, dtype="object")


def anomaly_table(runs: pd.DataFrame) -> pd.DataFrame:
    """The push anomaly's evidence, from every weak-scaling run of the modes with
    heartbeats at a worker count after its cell's first: per group (ANOMALY_KEYS) the
    medians over repetitions, each with its 95% bootstrap interval, of the completion
    time, the measured stall, the predicted stall and their difference (measured -
    predicted), and the stale workers and tasks dispatched again."""
    columns = ANOMALY_COLUMNS
    if runs.empty or "stall_sec" not in runs:
        return pd.DataFrame(columns=columns)
    r = runs[(runs["phase"] == "weak_scaling") & (runs["status"] == "ok") & runs["expiry_sec"].notna()].copy()
    if r.empty:
        return pd.DataFrame(columns=columns)
    r = r.sort_values("run_index")
    r["from_workers"] = r.groupby(["experiment", "system", "rep"])["workers"].transform(previous_count)
    r = r[r["from_workers"].notna()]
    r["residual_sec"] = r["stall_sec"] - r["predicted_stall_sec"]
    rows = []
    for key, group in r.groupby([*ANOMALY_KEYS, "from_workers"], sort=False, dropna=False):
        row = dict(zip([*ANOMALY_KEYS, "from_workers"], key))
        row["from_workers"] = int(row["from_workers"])
        row["repetitions"] = int(group["rep"].nunique())
        row["disturbed_reps"] = disturbed_reps(group)
        for column in ("completion_time_sec", "stall_sec", "predicted_stall_sec", "residual_sec", "stale_lag_sec"):
            values = per_rep(group, column)
            low, high = bootstrap_median_ci(values, CONFIDENCE)
            row.update({f"median_{column}": _median(values), f"median_{column}_ci_low": low,
                        f"median_{column}_ci_high": high})
        row["stale_workers"] = _median(group["stale_workers"])
        row["requeued_tasks"] = group["requeued_tasks"].sum()
        rows.append(row)
    return pd.DataFrame(rows)


def dose_slope(runs: pd.DataFrame, system: str = "push-naive", experiments=None, resamples: int = 2000) -> dict | None:
    """The dose-response of the cliff: the least-squares slope of the measured stall of
    the first run after each change of workers against the heartbeat expiry, over every
    such run of `system` (of the `experiments` named, or all; every worker count), with its 95%
    interval from resampling the runs; None with fewer than two expiries. The interval
    needs two runs or more at every expiry (repetitions): with one run per expiry,
    resampling only redraws the same line, so the slope has no interval (null), as a
    single repetition has none. The explanation predicts about 1 (s of stall per s of
    expiry) where the stale workers are still registered when the run begins."""
    import numpy as np

    r = runs[(runs["system"] == system) & (runs["phase"] == "weak_scaling") & (runs["status"] == "ok")
             & (runs["first_after_change"] == True)].dropna(subset=["stall_sec", "expiry_sec"])  # noqa: E712
    if r.empty:
        return None
    first_count = runs[runs["system"] == system].groupby(["experiment", "rep"])["workers"].transform("first")
    r = r[r["workers"] != first_count.reindex(r.index)]
    if experiments is not None:
        r = r[r["experiment"].isin(experiments)]
    if r.empty or r["expiry_sec"].nunique() < 2:
        return None
    x, y = r["expiry_sec"].to_numpy(float), r["stall_sec"].to_numpy(float)
    slope = float(np.polyfit(x, y, 1)[0])
    rng = np.random.default_rng(0)
    boot = []
    for _ in range(resamples):
        pick = rng.integers(0, len(x), len(x))
        if len(set(x[pick])) > 1:
            boot.append(np.polyfit(x[pick], y[pick], 1)[0])
    tail = (1 - CONFIDENCE) / 2 * 100
    low = high = None
    if boot and r.groupby("expiry_sec").size().min() >= 2:
        low, high = (float(v) for v in np.percentile(boot, [tail, 100 - tail]))
    return {"system": system, "slope": slope, "slope_ci_low": low, "slope_ci_high": high,
            "runs": len(r), "expiries": sorted(r["expiry_sec"].unique().tolist())}


def study_tables(records: list[dict]) -> dict[str, pd.DataFrame]:
    runs = run_table(records)
    tasks = task_table(records)
    return {"cells": cell_table(records), "runs": runs, "tasks": tasks, "depth": depth_table(records),
            "summary": summary_table(runs, tasks), "anomaly": anomaly_table(runs),
            "load": load_table("dispatch", records, load_label, load_group)}


# --- the seed's report ----------------------------------------------------------------------

def _fmt(x, digits: int = 2) -> str:
    return "n/a" if x is None or pd.isna(x) else f"{x:.{digits}f}"


def mode_metrics(summary: pd.DataFrame, system: str) -> dict | None:
    """The seed's per-mode numbers: per workload the average throughput over worker
    counts, mean latency; success rate; throughput and completion time at the fewest
    and most workers; mean weak-scaling efficiency over workloads and N > 1."""
    summary = main_only(summary)
    s = summary[(summary["system"] == system) & (summary["phase"] == "weak_scaling") & (summary["status"] == "ok")]
    if s.empty:
        return None
    out = {"throughput": {}, "latency": {}}
    for workload, f in s.groupby("workload", sort=False):
        out["throughput"][workload] = f["mean_throughput_tasks_per_sec"].mean()
        out["latency"][workload] = f["avg_latency_ms"].mean()
    lo, hi = s["workers"].min(), s["workers"].max()
    out["workers"] = (int(lo), int(hi))
    out["throughput_range"] = (s[s["workers"] == lo]["median_throughput_tasks_per_sec"].mean(),
                               s[s["workers"] == hi]["median_throughput_tasks_per_sec"].mean())
    out["time_range"] = (s[s["workers"] == lo]["median_completion_time_sec"].mean(),
                         s[s["workers"] == hi]["median_completion_time_sec"].mean())
    eff = s[s["workers"] > 1]["weak_scaling_efficiency"].dropna()
    out["efficiency"] = eff.mean() if len(eff) else None
    out["success_rate"] = (s["success_rate"] * s["repetitions"]).sum() / s["repetitions"].sum()
    return out


def systems_table(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per system over its repetitions: `failed` if any repetition failed a check,
    `unavailable` only if none could run (a system that could not start in some
    repetitions but ran in others is `ok`, its numbers from those: `repetitions_ok` of
    `repetitions`), with the failure of its worst repetition (failed over unavailable)."""
    rank = {"failed": 0, "unavailable": 1, "ok": 2}
    rows = []
    for system, group in cells.groupby("system", sort=False):
        worst = group.sort_values("status", key=lambda s: s.map(rank).fillna(-1)).iloc[0]
        statuses = set(group["status"])
        status = "failed" if "failed" in statuses else "ok" if "ok" in statuses else worst["status"]
        rows.append({"system": system, "kind": worst["kind"], "status": status, "failure": worst["failure"],
                     "repetitions": len(group), "repetitions_ok": int((group["status"] == "ok").sum())})
    return pd.DataFrame(rows, columns=["system", "kind", "status", "failure", "repetitions", "repetitions_ok"])


def trend(lo: float, hi: float, up: str, down: str) -> str:
    """The seed's word for a change from `lo` to `hi` as printed (2 decimals): `up`,
    `down`, or "stays the same" when the two print alike."""
    if f"{lo:.2f}" == f"{hi:.2f}":
        return "stays the same"
    return up if hi > lo else down


def seed_report(summary: pd.DataFrame, cells: pd.DataFrame) -> str:
    """The seed's report blocks ("Key Metrics", "Scaling Behavior" per mode, and the
    push anomaly), from this run's data."""
    names = {"noop": "No-op", "cpu": "CPU", "io": "I/O"}
    summary, cells = main_only(summary), main_only(cells)
    lines = ["# Performance Report - MPCSFaaS Evaluation Results (measured by parbench)", "",
             "Worded as the seed words its report, from the medians alone (its \"good\", \"moderate\", \"poor\" "
             "and \"x slower\"): no interval stands behind a word here. The paper's text says what the intervals "
             "can tell.", ""]
    systems = systems_table(cells)
    for system in [s for s in SYSTEMS if s in set(cells["system"])]:
        cell = systems[systems["system"] == system].iloc[0]
        lines.append(f"### {system} {'mode' if cell['kind'] == 'platform' else '(peer)'}")
        lines.append("")
        if cell["status"] == "unavailable":
            lines += [f"Not measured: {cell['failure']}", ""]
            continue
        m = mode_metrics(summary, system)
        if m is None:
            lines += [f"No run passed its checks ({cell['failure']}).", ""]
            continue
        lines.append("**Key Metrics**:")
        for i, (workload, rate) in enumerate(m["throughput"].items()):
            lines.append(f"- **{names[workload]} Throughput**: {rate:.2f} tasks/s" + (" (average)" if i == 0 else ""))
        lines.append("- **Average Latency**: " + ", ".join(f"{_fmt(v, 1)}ms ({names[w].lower()})"
                                                           for w, v in m["latency"].items()))
        rate = m["success_rate"]
        lines.append(f"- **Success Rate**: {100 * rate:.0f}% across all tests" if rate == 1 else
                     f"- **Success Rate**: {100 * rate:.1f}%")
        lines += ["", "**Scaling Behavior**:"]
        (t_lo, t_hi), (r_lo, r_hi) = m["time_range"], m["throughput_range"]
        lines.append(f"- Throughput {trend(r_lo, r_hi, 'increases', 'decreases')} with more workers "
                     f"({r_lo:.2f} → {r_hi:.2f} tasks/s)")
        lines.append(f"- Completion time {trend(t_lo, t_hi, 'increases', 'decreases')} ({t_lo:.2f}s → {t_hi:.2f}s)")
        if m["efficiency"] is not None:
            verdict = "good" if m["efficiency"] >= 0.8 else "moderate" if m["efficiency"] >= 0.4 else "poor"
            lines.append(f"- Scaling efficiency: {100 * m['efficiency']:.1f}% ({verdict} weak scaling)")
        lines.append("")
    for system in ("push-naive", "push"):
        noop = summary[(summary["system"] == system) & (summary["phase"] == "weak_scaling")
                       & (summary["workload"] == "noop") & (summary["status"] == "ok")]
        if noop.empty:
            continue
        base = noop[noop["workers"] == 1]["first_run_completion_time_sec"]
        lines += [f"### {system}: no-op tasks, first run after the workers changed", ""]
        for r in noop.itertuples():
            t = r.first_run_completion_time_sec
            ratio = t / base.iloc[0] if len(base) and base.iloc[0] and t else None
            note = "normal" if r.workers == 1 else (f"{ratio:.0f}x slower" if ratio and ratio >= 1.5 else
                                                    f"{ratio:.1f}x" if ratio else "n/a")
            lines.append(f"- {r.workers} worker{'s' if r.workers > 1 else ''}: {_fmt(t)}s completion ({note})")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
