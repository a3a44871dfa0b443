"""Turn gil cell records into tidy tables and the seed's report.

Tables (Parquet; schema in docs/data.md):
- runs:     one row per run (warm-up or timed repetition) of every point;
- summary:  one row per point (runtime, workload, execution, workers): median wall time
            with its confidence interval, CPU use, speedup against the same runtime's
            sequential run, and the ratio to the baseline runtime in the seed's words;
- runtimes: one row per configured runtime: measured or not (and why), what it is.

Speedup = median sequential time / median time of the point (same runtime and
workload); its bounds come from the two medians' intervals (`stats.ratio_interval`).
Ratio to the baseline = median time of the point / the baseline runtime's median time of
the same workload, execution and workers (the seed's Ratio: below 1 the runtime is faster).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from parbench import stats
from parbench.studies.gil import report
from parbench.studies.gil import workloads as wl
from parbench.studies.gil.plan import EXECUTIONS

KEYS = ["runtime", "workload", "execution", "workers"]
RUNTIME_FACTS = {"implementation": "implementation", "version": "runtime_version", "host_version": "host_version",
                 "has_gil": "has_gil"}
PROVENANCE = ["cpu_model", "logical_cores", "os_release", "kernel", "hostname", "git_commit", "config_hash",
              "timestamp_utc"]


def read_records(paths) -> list[dict]:
    return [json.loads(Path(p).read_text()) for p in paths]


def _points(record: dict) -> list[dict]:
    """The record's points; a cell that measured none (its runtime could not run, it timed
    out) stands for every point it was to measure, with its own status and reason."""
    if record["points"]:
        return record["points"]
    return [{"execution": e, "workers": w, "status": record["status"], "failure": record["failure"],
             "warmup": [], "runs": []} for e, w in record["parameters"]["spec"]["configs"]]


def _base(record: dict, point: dict) -> dict:
    facts = record["runtime"]
    return {"study": "gil", "profile": record["profile"], "runtime": record["cell"]["runtime"],
            "workload": record["cell"]["workload"], "execution": point["execution"], "workers": point["workers"],
            "status": point["status"], "failure": point["failure"],
            "chunks": record["parameters"]["spec"]["chunks"],
            **{column: facts.get(key) for key, column in RUNTIME_FACTS.items()}}


def run_rows(record: dict) -> list[dict]:
    rows = []
    for point in _points(record):
        base = _base(record, point)
        runs = [("warmup", r) for r in point["warmup"]] + [("timed", r) for r in point["runs"]]
        if point["status"] != "ok" or not runs:
            rows.append(dict(base, phase=None, rep=None, wall_sec=None, cpu_sec=None))
            continue
        for phase, run in runs:
            rows.append(dict(base, phase=phase, rep=run["rep"], wall_sec=run["wall_sec"], cpu_sec=run["cpu_sec"]))
    return rows


def point_row(record: dict, point: dict, confidence: float) -> dict:
    row = _base(record, point)
    times = [r["wall_sec"] for r in point["runs"]] if point["status"] == "ok" else []
    cpus = [r["cpu_sec"] for r in point["runs"] if r.get("cpu_sec") is not None] if times else []
    lo, hi, coverage = stats.median_ci(times, confidence) if times else (None, None, None)
    utilization = [r["cpu_sec"] / r["wall_sec"] for r in point["runs"]
                   if times and r.get("cpu_sec") is not None and r["wall_sec"] > 0]
    row.update(repetitions=len(times), median_wall_sec=stats.median(times), ci_low_wall_sec=lo,
               ci_high_wall_sec=hi, ci_coverage=coverage, min_wall_sec=min(times) if times else None,
               max_wall_sec=max(times) if times else None,
               median_cpu_sec=stats.median(cpus) if len(cpus) == len(times) and cpus else None,
               cpu_sec_per_wall_sec=stats.median(utilization) if len(utilization) == len(times) and times else None,
               start_method=record["worker"].get("start_method") if point["execution"] == "processes" else None,
               wall_clock=record["worker"].get("wall_clock"), cpu_clock=record["worker"].get("cpu_clock"),
               **{c: record.get("provenance", {}).get(c) for c in PROVENANCE})
    return row


def summary_table(records: list[dict], confidence: float, baseline: str) -> pd.DataFrame:
    rows = [point_row(r, p, confidence) for r in records for p in _points(r)]
    columns = ["study", "profile", *KEYS, "status", "failure", "chunks", "repetitions", "median_wall_sec",
               "ci_low_wall_sec", "ci_high_wall_sec", "ci_coverage", "min_wall_sec", "max_wall_sec",
               "median_cpu_sec", "cpu_sec_per_wall_sec", *RUNTIME_FACTS.values(), "start_method", "wall_clock",
               "cpu_clock", *PROVENANCE]
    summary = pd.DataFrame(rows, columns=columns)
    ok = summary[summary["status"] == "ok"]
    seq = {(r.runtime, r.workload): (r.median_wall_sec, r.ci_low_wall_sec, r.ci_high_wall_sec)
           for r in ok[ok["execution"] == "sequential"].itertuples()}
    base = {(r.workload, r.execution, r.workers): r.median_wall_sec for r in ok[ok["runtime"] == baseline].itertuples()}
    speedup, s_lo, s_hi, ratio = [], [], [], []
    for r in summary.itertuples():
        ref = seq.get((r.runtime, r.workload)) if r.status == "ok" else None
        if ref and r.median_wall_sec:
            speedup.append(ref[0] / r.median_wall_sec)
            lo, hi = stats.ratio_interval((ref[1], ref[2]), (r.ci_low_wall_sec, r.ci_high_wall_sec))
        else:
            speedup.append(None)
            lo = hi = None
        s_lo.append(lo)
        s_hi.append(hi)
        b = base.get((r.workload, r.execution, r.workers)) if r.status == "ok" else None
        ratio.append(r.median_wall_sec / b if b and r.median_wall_sec else None)
    summary["speedup_vs_sequential"] = speedup
    summary["speedup_ci_low"] = s_lo
    summary["speedup_ci_high"] = s_hi
    summary["efficiency"] = [s / w if s is not None else None for s, w in zip(speedup, summary["workers"])]
    summary["ratio_vs_baseline"] = ratio
    summary["ratio_text"] = [report.ratio_text(x) if x is not None else None for x in ratio]
    summary["baseline"] = baseline
    order = {"workload": {w: i for i, w in enumerate(wl.ORDER)},
             "execution": {e: i for i, e in enumerate(EXECUTIONS)}}
    runtime_order = list(dict.fromkeys(r["cell"]["runtime"] for r in records))
    order["runtime"] = {name: i for i, name in enumerate(runtime_order)}
    return summary.sort_values(["runtime", "workload", "execution", "workers"],
                               key=lambda s: s.map(order[s.name]) if s.name in order else s).reset_index(drop=True)


def _first_line(text: str | None) -> str | None:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else None


def runtime_rows(records: list[dict], resolutions: list[dict]) -> pd.DataFrame:
    """One row per configured runtime, in `gil.measure` order."""
    by_runtime: dict[str, list[dict]] = {}
    for record in records:
        by_runtime.setdefault(record["cell"]["runtime"], []).append(record)
    rows = []
    for res in resolutions:
        mine = by_runtime.get(res["name"], [])
        ran = [r for r in mine if r["status"] != "unavailable"]
        facts = ran[0]["runtime"] if ran else (mine[0]["runtime"] if mine else {})
        if not res["argv"]:
            status, reason = "not measured", res["reason"]
        elif not ran:
            status = "not measured"
            reason = mine[0]["failure"] if mine else "no cell of this runtime in the run"
        else:
            status, reason = "measured", None
        processes = [p for r in ran for p in r["points"] if p["execution"] == "processes"]
        unavailable = [p["failure"] for p in processes if p["status"] == "unavailable"]
        rows.append({
            "study": "gil", "runtime": res["name"], "status": status, "reason": reason,
            "command": " or ".join(res["alternatives"]), "resolved_command": " ".join(res["argv"] or []) or None,
            "implementation": facts.get("implementation"), "runtime_version": facts.get("version"),
            "host_version": facts.get("host_version"),
            "sys_version": _first_line(facts.get("sys_version")),
            "executable": facts.get("executable"), "gil_declared": res["gil_declared"],
            "gil_detected": facts.get("gil_enabled"),
            "has_gil": facts.get("has_gil") if ran else None,
            "free_threaded_build": facts.get("free_threaded_build"),
            "multiprocessing": (None if not processes else not unavailable),
            "processes_unavailable_reason": unavailable[0] if unavailable else None,
            "start_method": next((r["worker"]["start_method"] for r in ran if r["worker"].get("start_method")), None),
            "wall_clock": next((r["worker"]["wall_clock"] for r in ran), None),
            "cpu_clock": next((r["worker"]["cpu_clock"] for r in ran), None),
            "cells_ok": sum(r["status"] == "ok" for r in mine),
            "cells_failed": sum(r["status"] == "failed" for r in mine),
            "cells_unavailable": sum(r["status"] == "unavailable" for r in mine),
        })
    return pd.DataFrame(rows)


def study_tables(records: list[dict], resolutions: list[dict], confidence: float, baseline: str) -> dict:
    runs = pd.DataFrame([row for r in records for row in run_rows(r)],
                        columns=["study", "profile", *KEYS, "status", "failure", "chunks",
                                 *RUNTIME_FACTS.values(), "phase", "rep", "wall_sec", "cpu_sec"])
    return {"runs": runs, "summary": summary_table(records, confidence, baseline),
            "runtimes": runtime_rows(records, resolutions)}


# --- the seed's report -----------------------------------------------------------------------------

def seed_point(summary: pd.DataFrame) -> tuple[str, int] | None:
    """The point the seed's table shows: threads at the most workers measured."""
    threads = summary[summary["execution"] == "threads"]
    return ("threads", int(threads["workers"].max())) if len(threads) else None


def seed_rows(summary: pd.DataFrame, runtime: str, baseline: str, point: tuple[str, int]) -> list[dict]:
    """Rows of the seed's table for one runtime against the baseline: one per workload
    measured on both; a time that is not there is written as its status."""
    execution, workers = point
    at = summary[(summary["execution"] == execution) & (summary["workers"] == workers)]

    def value(name: str, workload: str):
        row = at[(at["runtime"] == name) & (at["workload"] == workload)]
        if row.empty:
            return None
        row = row.iloc[0]
        return row["median_wall_sec"] * 1e3 if row["status"] == "ok" else str(row["status"])

    rows = []
    for workload in [w for w in wl.ORDER if w in set(at["workload"])]:
        a, b = value(runtime, workload), value(baseline, workload)
        if a is not None and b is not None:
            rows.append({"benchmark": workload, "runtime_ms": a, "baseline_ms": b})
    return rows


def seed_report(summary: pd.DataFrame, runtimes: pd.DataFrame, baseline: str, profile: str) -> str:
    """The seed's report (`multithread_cpu_report.md`): one box-drawn table per runtime
    against the baseline, at the seed's execution (threads, the most workers)."""
    point = seed_point(summary)
    measured = runtimes[runtimes["status"] == "measured"]["runtime"].tolist()
    others = [r for r in measured if r != baseline]
    title = f"{', '.join(others)} vs {baseline}" if others else baseline
    lines = [f"# Multithreaded CPU benchmark: {title}", ""]
    if point is None or baseline not in measured:
        lines.append(f"No threads execution of {baseline} was measured in this run (profile {profile}): no table.")
        return "\n".join(lines) + "\n"
    reps = summary.loc[summary["status"] == "ok", "repetitions"]
    lines += [f"Profile {profile}. Each row: one workload run in {point[1]} threads, the median wall time of "
              f"{int(reps.max()) if len(reps) else 0} repetitions after warm-up, in milliseconds. Ratio = the "
              f"runtime's time / {baseline}'s: below 1 the runtime is faster (threads that run in parallel), above "
              f"1 slower.", ""]
    if not others:
        lines += [f"Only {baseline} was measured in this run: there is no other runtime to set beside it.", ""]
    for name in others:
        lines += [f"## {name} vs {baseline}", "", "```",
                  report.box_table(seed_rows(summary, name, baseline, point), name, baseline), "```", ""]
    absent = runtimes[runtimes["status"] != "measured"]
    if len(absent):
        lines += ["Not measured: " + "; ".join(f"{r.runtime} ({r.reason})" for r in absent.itertuples()) + "."]
    return "\n".join(lines).rstrip() + "\n"
