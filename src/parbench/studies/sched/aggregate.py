"""Turn sched cell records into tidy tables and the seed's console blocks.

Tables (Parquet; schema in docs/data.md):
- runs:    one row per timed repetition (quicksort) or frame (Mandelbrot);
- workers: one row per worker per repetition / frame (the scheduler's counters);
- summary: one row per cell, with median time, speedups and counter summaries.

Speedup against the sequential baseline = median sequential time / median time;
speedup against one thread = median time of the same scheduler at one thread / median
time; efficiency = speedup against the sequential baseline / threads.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pandas as pd

from parbench.provenance import SLURM_KEYS
from parbench.studies.sched.plan import SCHEDULER_ORDER, WORKLOADS

KEYS = ["workload", "scheduler", "threads"]
PROVENANCE = ["cpu_model", "logical_cores", "os_release", "kernel", "hostname", "git_commit", "config_hash",
              "timestamp_utc", *SLURM_KEYS]
COUNTERS = ["steal_success", "steal_fail_empty", "steal_fail_race"]


def read_records(paths) -> list[dict]:
    return [json.loads(Path(p).read_text()) for p in paths]


def _key(record: dict) -> dict:
    return {"study": "sched", "profile": record["profile"], **{k: record["cell"][k] for k in KEYS}}


def _sum_or_none(workers: list[dict], field: str):
    values = [w.get(field) for w in workers]
    if not values or any(v is None for v in values):
        return None
    return sum(values)


def run_rows(record: dict) -> list[dict]:
    doc = record.get("driver") or {}
    params = record["parameters"]
    base = {**_key(record), "status": record["status"], "failure": record["failure"],
            "size": params.get("size"), "cutoff": params.get("cutoff"), "width": params.get("width"),
            "height": params.get("height"), "max_iter": params.get("max_iter"),
            "sequential_reference_time_s": doc.get("sequential_time_s"),
            **{c: record.get("provenance", {}).get(c) for c in PROVENANCE}}
    if record["status"] != "ok":
        return [dict(base, rep=None, time_s=None, verified=None, tasks_spawned=None, tasks_executed=None,
                     **{c: None for c in COUNTERS})]
    rows = []
    for rep in doc.get("reps", []):
        workers = rep.get("counters", {}).get("per_worker", [])
        rows.append(dict(base, rep=rep.get("rep", rep.get("frame")), time_s=rep["time_s"], verified=rep["verified"],
                         tasks_spawned=rep.get("counters", {}).get("tasks_spawned"),
                         tasks_executed=_sum_or_none(workers, "tasks_executed"),
                         **{c: _sum_or_none(workers, c) for c in COUNTERS}))
    return rows


def worker_rows(record: dict) -> list[dict]:
    if record["status"] != "ok":
        return []
    rows = []
    for rep in (record.get("driver") or {}).get("reps", []):
        for w in rep.get("counters", {}).get("per_worker", []):
            rows.append({**_key(record), "rep": rep.get("rep", rep.get("frame")), "worker": w["worker"],
                         "tasks_executed": w.get("tasks_executed"),
                         **{c: w.get(c) for c in COUNTERS}})
    return rows


def summary_table(records: list[dict], runs: pd.DataFrame, workers: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for record in records:
        key = _key(record)
        row = {**key, "status": record["status"], "failure": record["failure"],
               "elapsed_sec": record["elapsed_sec"],
               # the machine the cell ran on: speedups compare cells of one machine only
               "hostname": record.get("provenance", {}).get("hostname")}
        mine = runs[(runs["workload"] == key["workload"]) & (runs["scheduler"] == key["scheduler"])
                    & (runs["threads"] == key["threads"])
                    & (runs["hostname"].fillna("") == (row["hostname"] or ""))].dropna(subset=["time_s"])
        times = mine["time_s"].tolist()
        row.update(repetitions=len(times),
                   median_time_s=statistics.median(times) if times else None,
                   min_time_s=min(times) if times else None, max_time_s=max(times) if times else None)
        for c in ("tasks_spawned", "tasks_executed", *COUNTERS):
            row[c] = mine[c].median() if len(mine) and mine[c].notna().all() else None
        attempts = [row[c] for c in COUNTERS]
        row["steal_success_rate"] = (row["steal_success"] / sum(attempts)
                                     if None not in attempts and sum(attempts) else None)
        w = workers[(workers["workload"] == key["workload"]) & (workers["scheduler"] == key["scheduler"])
                    & (workers["threads"] == key["threads"])]
        if len(w) and key["threads"] > 1:
            per_worker = w.groupby("worker")["tasks_executed"].mean()
            row["task_share_cv"] = float(per_worker.std(ddof=0) / per_worker.mean()) if per_worker.mean() else None
        else:
            row["task_share_cv"] = None
        rows.append(row)
    summary = pd.DataFrame(rows)
    # (a cell that recorded no hostname is compared with others that recorded none)
    summary["host_key"] = summary["hostname"].astype(object).where(summary["hostname"].notna(), "")
    ok = summary[summary["status"] == "ok"]
    # baselines per machine (hostname): a cell is compared with the sequential and
    # 1-thread cells measured on the same machine (several with SLURM nodes)
    seq = ok[ok["scheduler"] == "sequential"].set_index(["workload", "host_key"])["median_time_s"]
    one = ok[ok["threads"] == 1].set_index(["workload", "scheduler", "host_key"])["median_time_s"]
    summary["speedup_vs_sequential"] = [
        (seq.get((r.workload, r.host_key)) / r.median_time_s)
        if r.status == "ok" and r.median_time_s and (r.workload, r.host_key) in seq.index else None
        for r in summary.itertuples()]
    summary["speedup_vs_one_thread"] = [
        (one.get((r.workload, r.scheduler, r.host_key)) / r.median_time_s)
        if r.status == "ok" and r.median_time_s and (r.workload, r.scheduler, r.host_key) in one.index else None
        for r in summary.itertuples()]
    summary = summary.drop(columns="host_key")
    summary["efficiency"] = [s / t if s is not None and not pd.isna(s) else None
                             for s, t in zip(summary["speedup_vs_sequential"], summary["threads"])]
    order = {"scheduler": {s: i for i, s in enumerate(SCHEDULER_ORDER)},
             "workload": {w: i for i, w in enumerate(WORKLOADS)}}
    return summary.sort_values(["workload", "scheduler", "threads"],
                               key=lambda s: s.map(order[s.name]) if s.name in order else s).reset_index(drop=True)


def study_tables(records: list[dict]) -> dict[str, pd.DataFrame]:
    runs = pd.DataFrame([r for rec in records for r in run_rows(rec)])
    workers = pd.DataFrame([r for rec in records for r in worker_rows(rec)],
                           columns=["study", "profile", *KEYS, "rep", "worker", "tasks_executed", *COUNTERS])
    return {"runs": runs, "workers": workers, "summary": summary_table(records, runs, workers)}


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
