"""Turn gil cell records into tidy tables and the seed's report.

A cell (runtime, workload) is measured `gil.repetitions` times, interleaved with the other
cells: one record per repetition, each one interpreter launch measuring every point
(execution, workers) with warm-up runs and `gil.runs_per_cell` timed runs.

Tables (Parquet; schema in docs/data.md):
- runs:     one row per run (warm-up or timed) of every point of every repetition (`rep`,
            the launch; `run`, the run within it);
- summary:  one row per point (runtime, workload, execution, workers): the median over the
            repetitions of each launch's median wall time, with its percentile-bootstrap
            interval, CPU use, speedup against the same runtime's sequential run, and the
            ratio to the baseline runtime in the seed's words, both with bootstrap
            intervals over the two points' repetitions;
- runtimes: one row per configured runtime: measured or not (and why), what it is.

Speedup = median sequential time / median time of the point (same runtime and
workload); ratio to the baseline = median time of the point / the baseline runtime's
median time of the same workload, execution and workers (the seed's Ratio: below 1 the
runtime is faster). Their intervals resample the repetitions of both points
(`stats.bootstrap_ratio_ci`).
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pandas as pd

from parbench import stats
from parbench.studies.gil import report
from parbench.studies.gil import workloads as wl
from parbench.studies.gil.plan import EXECUTIONS

KEYS = ["runtime", "workload", "execution", "workers"]
RUNTIME_FACTS = {"implementation": "implementation", "version": "runtime_version", "host_version": "host_version",
                 "has_gil": "has_gil"}
# A point's status over its repetitions, worst first: the point takes its worst one's.
STATUS_ORDER = ["failed", "unavailable", "ok"]
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


def _rep(record: dict) -> int:
    return int(record["cell"].get("rep", 0))


def _seed(*key) -> int:
    """A bootstrap seed of its own for every point, the same in every aggregation."""
    return zlib.crc32(" ".join(map(str, key)).encode())


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
        base.update(rep=_rep(record), started_unix=record.get("started_unix"))
        if point["status"] != "ok" or not runs:
            rows.append(dict(base, phase=None, run=None, wall_sec=None, cpu_sec=None, jit_sec=None))
            continue
        for phase, run in runs:
            rows.append(dict(base, phase=phase, run=run["rep"], wall_sec=run["wall_sec"], cpu_sec=run["cpu_sec"],
                             jit_sec=run.get("jit_sec")))
    return rows


def point_row(launches: list[tuple[dict, dict]], confidence: float) -> tuple[dict, list[float]]:
    """One point from its repetitions ((record, point) per launch): the median over the
    launches of each launch's median wall time with its bootstrap interval, and the
    launches' times (for the ratios' intervals). A point takes its worst launch's status."""
    launches = sorted(launches, key=lambda rp: _rep(rp[0]))
    worst = min((p["status"] for _, p in launches), key=STATUS_ORDER.index)
    record, first_bad = next((r, p) for r, p in launches if p["status"] == worst)
    row = _base(record, first_bad)
    if worst != "ok" and len(launches) > 1:
        row["failure"] = f"repetition {_rep(record)}: {first_bad['failure']}"
    ok = [(r, p) for r, p in launches if p["status"] == "ok"] if worst == "ok" else []
    per_launch = [stats.median([run["wall_sec"] for run in p["runs"]]) for _, p in ok if p["runs"]]
    runs = [run for _, p in ok for run in p["runs"]]
    times = [run["wall_sec"] for run in runs]
    cpus = [run["cpu_sec"] for run in runs if run.get("cpu_sec") is not None]
    utilization = [run["cpu_sec"] / run["wall_sec"] for run in runs
                   if run.get("cpu_sec") is not None and run["wall_sec"] > 0]
    # each launch's median CPU use, for the interval of the CPU use
    util_per_launch = [stats.median([run["cpu_sec"] / run["wall_sec"] for run in p["runs"]]) for _, p in ok
                       if p["runs"] and all(run.get("cpu_sec") is not None and run["wall_sec"] > 0
                                            for run in p["runs"])]
    key = tuple(row[k] for k in KEYS)
    lo, hi = stats.bootstrap_median_ci(per_launch, confidence, seed=_seed("wall", *key))
    util_lo, util_hi = (stats.bootstrap_median_ci(util_per_launch, confidence, seed=_seed("cpu", *key))
                        if len(utilization) == len(times) and times else (None, None))
    worker = record["worker"]
    # the JIT (where the runtime tells its compile time): what the timed runs overlapped,
    # and how the warm-up ended in each launch
    jits = [run.get("jit_sec") for run in runs]
    timed_jit = stats.median(jits) if jits and None not in jits else None
    workers_of = [r["worker"] for r, _ in ok]
    has_jit_clock = bool(workers_of) and all(w.get("jit_clock") for w in workers_of)
    rounds = [w["warmup_rounds"] for w in workers_of if w.get("warmup_rounds") is not None]
    row.update(repetitions=len(launches), repetitions_ok=sum(p["status"] == "ok" for _, p in launches),
               runs=len(times), median_wall_sec=stats.median(per_launch) if per_launch else None,
               median_wall_sec_ci_low=lo, median_wall_sec_ci_high=hi,
               min_wall_sec=min(times) if times else None, max_wall_sec=max(times) if times else None,
               median_cpu_sec=stats.median(cpus) if len(cpus) == len(times) and cpus else None,
               cpu_sec_per_wall_sec=stats.median(utilization) if len(utilization) == len(times) and times else None,
               cpu_sec_per_wall_sec_ci_low=util_lo, cpu_sec_per_wall_sec_ci_high=util_hi,
               start_method=worker.get("start_method") if row["execution"] == "processes" else None,
               wall_clock=worker.get("wall_clock"), cpu_clock=worker.get("cpu_clock"),
               jit_clock=worker.get("jit_clock"), median_jit_sec=timed_jit if has_jit_clock else None,
               median_warmup_rounds=stats.median(rounds) if rounds else None,
               jit_quiet_launches=sum(bool(w.get("jit_quiet")) for w in workers_of) if has_jit_clock else None,
               started_unix=min(r.get("started_unix") or 0 for r, _ in launches),
               **{c: record.get("provenance", {}).get(c) for c in PROVENANCE})
    return row, per_launch


def _ratio(numerator: list[float], denominator: list[float], scale: float, confidence: float, *key):
    """median(numerator) / (scale x median(denominator)) and its bootstrap interval."""
    if not numerator or not denominator:
        return None, None, None
    value = stats.median(numerator) / (scale * stats.median(denominator))
    lo, hi = stats.bootstrap_ratio_ci(numerator, denominator, scale=scale, confidence=confidence, seed=_seed(*key))
    return value, lo, hi


def summary_table(records: list[dict], confidence: float, baseline: str) -> pd.DataFrame:
    by_point: dict[tuple, list[tuple[dict, dict]]] = {}
    for record in records:
        for point in _points(record):
            key = (record["cell"]["runtime"], record["cell"]["workload"], point["execution"], point["workers"])
            by_point.setdefault(key, []).append((record, point))
    rows, launch_times = [], {}
    for key, launches in by_point.items():
        row, per_launch = point_row(launches, confidence)
        rows.append(row)
        if row["status"] == "ok":
            launch_times[key] = per_launch
    columns = ["study", "profile", *KEYS, "status", "failure", "chunks", "repetitions", "repetitions_ok", "runs",
               "median_wall_sec", "median_wall_sec_ci_low", "median_wall_sec_ci_high", "min_wall_sec",
               "max_wall_sec", "median_cpu_sec", "cpu_sec_per_wall_sec", "cpu_sec_per_wall_sec_ci_low",
               "cpu_sec_per_wall_sec_ci_high", *RUNTIME_FACTS.values(), "start_method",
               "wall_clock", "cpu_clock", "jit_clock", "median_jit_sec", "median_warmup_rounds",
               "jit_quiet_launches", "started_unix", *PROVENANCE]
    summary = pd.DataFrame(rows, columns=columns)
    values: dict[str, list] = {name: [] for name in ("speedup", "efficiency", "ratio")}
    for r in summary.itertuples():
        key = (r.runtime, r.workload, r.execution, r.workers)
        mine = launch_times.get(key, [])
        seq = launch_times.get((r.runtime, r.workload, "sequential", 1), [])
        base = launch_times.get((baseline, r.workload, r.execution, r.workers), [])
        # a speedup is the sequential time over the point's: the sequential launches are the
        # numerator; a point against itself is exactly 1 (no interval: nothing was compared)
        itself = r.execution == "sequential"
        values["speedup"].append((1.0, None, None) if itself and mine else
                                 _ratio(seq, mine, 1, confidence, "speedup", *key))
        values["efficiency"].append((1.0 / r.workers, None, None) if itself and mine else
                                    _ratio(seq, mine, r.workers, confidence, "efficiency", *key))
        values["ratio"].append((1.0, None, None) if r.runtime == baseline and mine else
                               _ratio(mine, base, 1, confidence, "ratio", *key))
    for name, column in (("speedup", "speedup_vs_sequential"), ("efficiency", "efficiency"),
                         ("ratio", "ratio_vs_baseline")):
        triples = values[name]
        summary[column] = [t[0] for t in triples]
        summary[f"{name}_ci_low"] = [t[1] for t in triples]
        summary[f"{name}_ci_high"] = [t[2] for t in triples]
    # intervals are numbers (NaN, not None, where there is none: a single launch)
    for column in [c for c in summary.columns if c.endswith(("_ci_low", "_ci_high"))]:
        summary[column] = pd.to_numeric(summary[column], errors="coerce").astype(float)
    ratio = summary["ratio_vs_baseline"].tolist()
    summary["ratio_text"] = [report.ratio_text(x) if x is not None else None for x in ratio]
    summary["baseline"] = baseline
    order = {"workload": {w: i for i, w in enumerate(wl.ORDER)},
             "execution": {e: i for i, e in enumerate(EXECUTIONS)}}
    runtime_order = list(dict.fromkeys(r["cell"]["runtime"] for r in sorted(records, key=_rep)))
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
                                 *RUNTIME_FACTS.values(), "rep", "started_unix", "phase", "run", "wall_sec",
                                 "cpu_sec", "jit_sec"])
    # the order the repetitions ran in (0-based, by start time; all rows of one launch share it)
    runs["run_position"] = (runs["started_unix"].rank(method="dense") - 1).astype("Int64")
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
    ok = summary[summary["status"] == "ok"]
    reps = int(ok["repetitions"].max()) if len(ok) else 0
    runs = int((ok["runs"] / ok["repetitions"]).max()) if len(ok) else 0
    lines += [f"Profile {profile}. Each row: one workload run in {point[1]} threads, the median wall time over "
              f"{reps} interleaved interpreter launch(es) of each launch's median of {runs} timed run(s) after "
              f"warm-up, in milliseconds. Ratio = the "
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
