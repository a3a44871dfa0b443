"""Turn sched cell records into tidy tables and the seed's console blocks.

A cell (workload, scheduler, threads) is measured `sched.repetitions` times, interleaved
with the other cells; each repetition is one record holding `runs_per_cell` timed sorts
(quicksort) or `frames` frames (Mandelbrot).

Tables (Parquet; schema in docs/data.md):
- runs:    one row per timed sort or frame, with its repetition `rep` and its place `run`
           within the repetition;
- workers: one row per worker per timed sort / frame (the scheduler's counters);
- summary: one row per cell: the median over its repetitions of the repetition's time
           (the median of its runs) with its 95% percentile-bootstrap interval, speedups
           and efficiency with bootstrap intervals over both cells' repetitions, counter
           summaries, the worst repetition's status, and how many of its repetitions
           stayed disturbed (`disturbed_reps`, parbench.disturbance);
- load:    one row per repetition: when it started, the load outside it, whether it
           stayed disturbed (`disturbance.load_table`).

Speedup against the sequential baseline = median sequential time / median time;
speedup against one thread = median time of the same scheduler at one thread / median
time; efficiency = speedup against the sequential baseline / threads.
"""

from __future__ import annotations

import statistics

import pandas as pd

from parbench import stats
from parbench.disturbance import load_columns, load_table
from parbench.hosts import UNKNOWN_HOST, host_labels
from parbench.provenance import SLURM_KEYS
from parbench.studies.sched.plan import SCHEDULER_ORDER, WORKLOADS

KEYS = ["workload", "scheduler", "threads"]
PROVENANCE = ["cpu_model", "logical_cores", "os_release", "kernel", "hostname", "git_commit", "config_hash",
              "timestamp_utc", *SLURM_KEYS]
COUNTERS = ["steal_success", "steal_fail_empty", "steal_fail_race"]
# A repetition's status, worst first: a cell takes its worst repetition's.
STATUS_ORDER = ["failed", "unavailable", "ok"]
CONFIDENCE = 0.95


def _key(record: dict) -> dict:
    return {"study": "sched", "profile": record["profile"], **{k: record["cell"][k] for k in KEYS}}


def _rep(record: dict) -> int:
    return int(record["cell"].get("rep", 0))


def _sum_or_none(workers: list[dict], field: str):
    values = [w.get(field) for w in workers]
    if not values or any(v is None for v in values):
        return None
    return sum(values)


def run_rows(record: dict) -> list[dict]:
    doc = record.get("driver") or {}
    params = record["parameters"]
    base = {**_key(record), "rep": _rep(record), "status": record["status"], "failure": record["failure"],
            "size": params.get("size"), "cutoff": params.get("cutoff"), "width": params.get("width"),
            "height": params.get("height"), "max_iter": params.get("max_iter"),
            "sequential_reference_time_s": doc.get("sequential_time_s"),
            "started_unix": record.get("started_unix"),
            # the repetition's load: every run of it shares it
            **load_columns(record),
            **{c: record.get("provenance", {}).get(c) for c in PROVENANCE}}
    if record["status"] != "ok":
        return [dict(base, run=None, time_s=None, verified=None, tasks_spawned=None, tasks_executed=None,
                     **{c: None for c in COUNTERS})]
    rows = []
    for run in doc.get("reps", []):
        workers = run.get("counters", {}).get("per_worker", [])
        rows.append(dict(base, run=run.get("rep", run.get("frame")), time_s=run["time_s"], verified=run["verified"],
                         tasks_spawned=run.get("counters", {}).get("tasks_spawned"),
                         tasks_executed=_sum_or_none(workers, "tasks_executed"),
                         **{c: _sum_or_none(workers, c) for c in COUNTERS}))
    return rows


def worker_rows(record: dict) -> list[dict]:
    if record["status"] != "ok":
        return []
    rows = []
    for run in (record.get("driver") or {}).get("reps", []):
        for w in run.get("counters", {}).get("per_worker", []):
            rows.append({**_key(record), "rep": _rep(record), "run": run.get("rep", run.get("frame")),
                         "worker": w["worker"], "tasks_executed": w.get("tasks_executed"),
                         **{c: w.get(c) for c in COUNTERS}})
    return rows


# A cell per machine: cells of one profile can run on several SLURM nodes, and a cell is
# compared with the baselines measured on its own machine (parbench.hosts' label).
CELL = [*KEYS, "host_key"]


def rep_times(runs: pd.DataFrame) -> dict[tuple, list[float]]:
    """(workload, scheduler, threads, host) -> the time of each repetition that passed:
    the median of its timed sorts or frames."""
    ok = runs[runs["status"] == "ok"].dropna(subset=["time_s"]).assign(host_key=lambda f: host_labels(f))
    per_rep = ok.groupby([*CELL, "rep"])["time_s"].median().reset_index()
    return {key: f["time_s"].tolist() for key, f in per_rep.groupby(CELL)}


def _cell_row(key: tuple, group: list[dict], runs: pd.DataFrame, workers: pd.DataFrame,
              times_by_cell: dict) -> dict:
    workload, scheduler, threads, host = key
    statuses = [r["status"] for r in group]
    worst = min(statuses, key=STATUS_ORDER.index)
    first_bad = next(r for r in sorted(group, key=_rep) if r["status"] == worst)
    failure = first_bad["failure"] if worst != "ok" else None
    if failure is not None and len(group) > 1:
        failure = f"repetition {_rep(first_bad)}: {failure}"
    row = {**_key(group[0]), "hostname": None if host == UNKNOWN_HOST else host, "status": worst, "failure": failure,
           "repetitions": len(group), "repetitions_ok": statuses.count("ok"),
           "started_unix": min(r.get("started_unix") or 0 for r in group),
           "elapsed_sec": sum(r["elapsed_sec"] for r in group)}
    # a cell is marked disturbed (figures, tables, text) when one of its repetitions that
    # measured stayed disturbed after every attempt
    measured = [load_columns(r) for r in group if r["status"] == "ok"]
    row["disturbed_reps"] = sum(1 for m in measured if m["disturbed"])
    loads = [m["load_other_cores"] for m in measured if m["load_other_cores"] is not None]
    row["load_other_cores_max"] = max(loads) if loads else None
    mine = runs[(runs["workload"] == workload) & (runs["scheduler"] == scheduler) & (runs["threads"] == threads)
                & (runs["status"] == "ok") & (host_labels(runs) == host)].dropna(subset=["time_s"])
    per_rep = times_by_cell.get(key, []) if worst == "ok" else []
    times = mine["time_s"].tolist() if worst == "ok" else []
    lo, hi = stats.bootstrap_median_ci(per_rep, CONFIDENCE, seed=stats.bootstrap_seed("time", *key))
    row.update(runs=len(times),
               median_time_s=statistics.median(per_rep) if per_rep else None,
               median_time_s_ci_low=lo, median_time_s_ci_high=hi,
               min_time_s=min(times) if times else None, max_time_s=max(times) if times else None)
    for c in ("tasks_spawned", "tasks_executed", *COUNTERS):
        row[c] = mine[c].median() if len(times) and mine[c].notna().all() else None
    for c in COUNTERS:  # the steal counts' intervals, from each repetition's median
        per_rep_counts = mine.groupby("rep")[c].median().tolist() if row[c] is not None else []
        row[f"{c}_ci_low"], row[f"{c}_ci_high"] = stats.bootstrap_median_ci(per_rep_counts, CONFIDENCE,
                                                                            seed=stats.bootstrap_seed(c, *key))
    attempts = [row[c] for c in COUNTERS]
    row["steal_success_rate"] = (row["steal_success"] / sum(attempts)
                                 if None not in attempts and sum(attempts) else None)
    w = workers[(workers["workload"] == workload) & (workers["scheduler"] == scheduler)
                & (workers["threads"] == threads)]
    cvs = task_share_cvs(w) if worst == "ok" and threads > 1 else []
    row["task_share_cv"] = statistics.median(cvs) if cvs else None
    row["task_share_cv_ci_low"], row["task_share_cv_ci_high"] = stats.bootstrap_median_ci(
        cvs, CONFIDENCE, seed=stats.bootstrap_seed("task_share_cv", *key))
    return row


def task_share_cvs(workers: pd.DataFrame) -> list[float]:
    """How unevenly the threads shared the tasks, run by run: in each timed run (a
    repetition's sort or frame), the coefficient of variation of the tasks each thread
    executed (population standard deviation over the mean). A cell's spread is the
    median of these, with its interval; averaging each thread's tasks over the runs
    first would hide a split that changes from run to run."""
    if workers.empty:
        return []
    cvs = []
    for _, run in workers.groupby(["rep", "run"]):
        tasks = run["tasks_executed"].dropna().astype(float)
        if len(tasks) > 1 and tasks.mean() > 0:
            cvs.append(float(tasks.std(ddof=0) / tasks.mean()))
    return cvs


def summary_table(records: list[dict], runs: pd.DataFrame, workers: pd.DataFrame) -> pd.DataFrame:
    by_cell: dict[tuple, list[dict]] = {}
    for record in records:
        host = record.get("provenance", {}).get("hostname") or UNKNOWN_HOST
        by_cell.setdefault((*(record["cell"][k] for k in KEYS), host), []).append(record)
    times_by_cell = rep_times(runs)
    summary = pd.DataFrame([_cell_row(key, group, runs, workers, times_by_cell) for key, group in by_cell.items()])
    summary["host_key"] = host_labels(summary)
    ok = {tuple(k) for k in summary.loc[summary["status"] == "ok", CELL].itertuples(index=False)}
    columns = {"speedup_vs_sequential": [], "speedup_vs_one_thread": [], "efficiency": []}
    for r in summary.itertuples():
        key = (r.workload, r.scheduler, r.threads, r.host_key)
        mine = times_by_cell.get(key) if key in ok else None
        seq_key, one_key = (r.workload, "sequential", 1, r.host_key), (r.workload, r.scheduler, 1, r.host_key)
        seq = times_by_cell.get(seq_key, []) if seq_key in ok else []
        one = times_by_cell.get(one_key, []) if one_key in ok else []
        # a speedup is base / time: the base's repetitions are the numerator; a cell
        # against itself is exactly 1 (no interval: nothing was compared)
        for name, base_key, base, scale in (("speedup_vs_sequential", seq_key, seq, 1),
                                            ("speedup_vs_one_thread", one_key, one, 1),
                                            ("efficiency", seq_key, seq, r.threads)):
            if not mine:
                columns[name].append((None, None, None))
            elif base_key == key:
                columns[name].append((1.0 / scale, None, None))
            else:
                columns[name].append(stats.median_ratio(base, mine, scale, CONFIDENCE, (name, *key)))
    summary = summary.drop(columns="host_key")
    for name, values in columns.items():
        summary[name] = [v[0] for v in values]
        summary[f"{name}_ci_low"] = [v[1] for v in values]
        summary[f"{name}_ci_high"] = [v[2] for v in values]
    # intervals and loads are numbers (NaN, not None, where there is none: a single
    # repetition, a record from before loads were measured)
    for column in [c for c in summary.columns if c.endswith(("_ci_low", "_ci_high"))] + ["load_other_cores_max"]:
        summary[column] = pd.to_numeric(summary[column], errors="coerce").astype(float)
    order = {"scheduler": {s: i for i, s in enumerate(SCHEDULER_ORDER)},
             "workload": {w: i for i, w in enumerate(WORKLOADS)}}
    return summary.sort_values(["workload", "scheduler", "threads"],
                               key=lambda s: s.map(order[s.name]) if s.name in order else s).reset_index(drop=True)


def study_tables(records: list[dict]) -> dict[str, pd.DataFrame]:
    runs = pd.DataFrame([r for rec in records for r in run_rows(rec)])
    # the order the repetitions ran in (0-based, by start time; all runs of one repetition share it)
    runs["run_position"] = (runs["started_unix"].rank(method="dense") - 1).astype("Int64")
    workers = pd.DataFrame([r for rec in records for r in worker_rows(rec)],
                           columns=["study", "profile", *KEYS, "rep", "run", "worker", "tasks_executed", *COUNTERS])
    return {"runs": runs, "workers": workers, "summary": summary_table(records, runs, workers),
            "load": load_table("sched", records, load_label, load_group)}


def load_label(record: dict) -> str:
    """A cell's name in the load table: `quicksort ws t2`."""
    c = record["cell"]
    return f"{c['workload']} {c['scheduler']} t{c['threads']}"


def load_group(record: dict) -> str:
    """What the run order must spread over the run alike: each scheduler."""
    return record["cell"]["scheduler"]


def console_blocks(summary: pd.DataFrame, records: list[dict]) -> str:
    """The seed's console output, per workload and scheduler: one `[NN] Time taken`
    line per thread count (the median repetition) and the minimum."""
    params = {(r["cell"]["workload"]): r["parameters"] for r in records}
    blocks = []
    for (workload, scheduler), f in summary.groupby(["workload", "scheduler"], sort=False):
        p = params.get(workload, {})
        size = f"-n {p['size']}" if workload == "quicksort" else f"{p.get('width')}x{p.get('height')}"
        lines = [f"Running benchmarks for parbench-sched {workload} --scheduler {scheduler} -t num_threads {size}"]
        ok = f[f["status"] == "ok"]
        for r in f.itertuples():
            if r.status == "ok":
                lines.append(f"[{int(r.threads):02d}] Time taken: {r.median_time_s:.6f} seconds")
            else:
                lines.append(f"[{int(r.threads):02d}] {r.status}: {r.failure}")
        if len(ok):
            best = ok.loc[ok["median_time_s"].idxmin()]
            lines.append(f"Minimum time taken: {best['median_time_s']:.6f} seconds for cores = {int(best['threads'])}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"
