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
- runtimes: one row per configured runtime: measured or not (and why), what it is;
- load:     one row per launch (a record): when it started, the load on the machine
            outside it and whether it stayed disturbed (`disturbance.load_table`); a
            point counts its launches that stayed disturbed (`disturbed_reps`).

Speedup = median sequential time / median time of the point (same runtime and
workload); ratio to the baseline = median time of the point / the baseline runtime's
median time of the same workload, execution and workers (the seed's Ratio: below 1 the
runtime is faster). Their intervals resample the repetitions of both points
(`stats.bootstrap_ratio_ci`).
"""

from __future__ import annotations


import pandas as pd

from parbench import stats
from parbench.disturbance import load_columns, load_table
from parbench.studies.gil import report
from parbench.studies.gil import workloads as wl
from parbench.studies.gil.plan import EXECUTIONS
from parbench.words import counted

KEYS = ["runtime", "workload", "execution", "workers"]
RUNTIME_FACTS = {"implementation": "implementation", "version": "runtime_version", "host_version": "host_version",
                 "has_gil": "has_gil", "control": "control"}
# A point's status over its repetitions, worst first: the point takes its worst one's.
STATUS_ORDER = ["failed", "unavailable", "ok"]
PROVENANCE = ["cpu_model", "logical_cores", "os_release", "kernel", "hostname", "git_commit", "config_hash",
              "timestamp_utc"]


def _points(record: dict) -> list[dict]:
    """The record's points; a cell that measured none (its runtime could not run, it timed
    out) stands for every point it was to measure, with its own status and reason."""
    if record["points"]:
        return record["points"]
    return [{"execution": e, "workers": w, "status": record["status"], "failure": record["failure"],
             "warmup": [], "runs": []} for e, w in record["parameters"]["spec"]["configs"]]


def _rep(record: dict) -> int:
    return int(record["cell"].get("rep", 0))


def _base(record: dict, point: dict) -> dict:
    facts = record["runtime"]
    return {"study": "gil", "profile": record["profile"], "runtime": record["cell"]["runtime"],
            "workload": record["cell"]["workload"], "execution": point["execution"], "workers": point["workers"],
            "status": point["status"], "failure": point["failure"],
            "chunks": record["parameters"]["spec"]["chunks"],
            **{column: facts.get(key) for key, column in RUNTIME_FACTS.items()}}


# A CPU reading is not used when its clock steps by more than this share of its run.
CLOCK_SHARE = 0.1


def cpu_reading(record: dict, point: dict, run: dict) -> tuple[float | None, str | None]:
    """A run's CPU seconds, or (None, why) when the reading is impossible: its clock steps
    by more than a tenth of the run (a JVM's process CPU time steps by 10 ms; the
    processes execution adds its children's CPU in clock ticks), or it exceeds the cores
    the interpreter could use. The raw reading stays in the cell's record."""
    cpu, wall = run.get("cpu_sec"), run["wall_sec"]
    if cpu is None:
        return None, None
    worker = record.get("worker", {})
    if "cpu_clock_resolution_sec" in worker:  # records of worker 3 and later say it
        steps = [worker.get("cpu_clock_resolution_sec")]
        if point["execution"] == "processes":
            steps.append(worker.get("children_cpu_resolution_sec"))
        if any(step is None for step in steps):
            return None, f"the CPU clock ({worker.get('cpu_clock')}) never moved while it was watched"
        step = max(steps)
        if step > CLOCK_SHARE * wall:
            share = "longer than the whole" if step > wall else "more than a tenth of the"
            return None, f"the CPU clock steps by {step * 1e3:.3g} ms, {share} {wall * 1e3:.3g} ms run"
    cores = record["runtime"].get("cores_available") or record.get("provenance", {}).get("logical_cores")
    if cores and wall > 0 and cpu / wall > cores:
        return None, f"{cpu / wall:.2f} CPU seconds per wall second, more than the {cores} cores available"
    return cpu, None


def run_rows(record: dict) -> list[dict]:
    rows = []
    for point in _points(record):
        base = _base(record, point)
        runs = [("warmup", r) for r in point["warmup"]] + [("timed", r) for r in point["runs"]]
        base.update(rep=_rep(record), started_unix=record.get("started_unix"))
        if point["status"] != "ok" or not runs:
            rows.append(dict(base, phase=None, run=None, wall_sec=None, cpu_sec=None, cpu_null_reason=None,
                             jit_sec=None))
            continue
        for phase, run in runs:
            cpu, why = cpu_reading(record, point, run)
            rows.append(dict(base, phase=phase, run=run["rep"], wall_sec=run["wall_sec"], cpu_sec=cpu,
                             cpu_null_reason=why, jit_sec=run.get("jit_sec")))
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
    # every timed run with its CPU reading (None where impossible, with the reason)
    readings = [(r, p, run, *cpu_reading(r, p, run)) for r, p in ok for run in p["runs"]]
    runs = [run for _, _, run, _, _ in readings]
    times = [run["wall_sec"] for run in runs]
    reasons = [why for *_, why in readings if why]
    cpu_of = {id(run): cpu for _, _, run, cpu, _ in readings}
    cpus = [cpu_of[id(run)] for run in runs if cpu_of[id(run)] is not None]
    utilization = [cpu_of[id(run)] / run["wall_sec"] for run in runs
                   if cpu_of[id(run)] is not None and run["wall_sec"] > 0]
    # each launch's median CPU use, for the interval of the CPU use
    util_per_launch = [stats.median([cpu_of[id(run)] / run["wall_sec"] for run in p["runs"]]) for _, p in ok
                       if p["runs"] and all(cpu_of[id(run)] is not None and run["wall_sec"] > 0
                                            for run in p["runs"])]
    key = tuple(row[k] for k in KEYS)
    lo, hi = stats.bootstrap_median_ci(per_launch, confidence, seed=stats.bootstrap_seed("wall", *key))
    util_lo, util_hi = (stats.bootstrap_median_ci(util_per_launch, confidence, seed=stats.bootstrap_seed("cpu", *key))
                        if len(utilization) == len(times) and times else (None, None))
    worker = record["worker"]
    # the JIT (where the runtime tells its compile time): what the timed runs overlapped,
    # and how the warm-up ended in each launch
    jits = [run.get("jit_sec") for run in runs]
    timed_jit = stats.median(jits) if jits and None not in jits else None
    workers_of = [r["worker"] for r, _ in ok]
    has_jit_clock = bool(workers_of) and all(w.get("jit_clock") for w in workers_of)
    rounds = [w["warmup_rounds"] for w in workers_of if w.get("warmup_rounds") is not None]
    # a point is marked disturbed (figures, tables, text) when one of its launches that
    # measured stayed disturbed after every attempt (the launch measures every point)
    measured = [load_columns(r) for r, p in launches if p["status"] == "ok"]
    loads = [m["load_other_cores"] for m in measured if m["load_other_cores"] is not None]
    row.update(repetitions=len(launches), repetitions_ok=sum(p["status"] == "ok" for _, p in launches),
               disturbed_reps=sum(1 for m in measured if m["disturbed"]),
               load_other_cores_max=max(loads) if loads else None,
               runs=len(times), median_wall_sec=stats.median(per_launch) if per_launch else None,
               median_wall_sec_ci_low=lo, median_wall_sec_ci_high=hi,
               min_wall_sec=min(times) if times else None, max_wall_sec=max(times) if times else None,
               median_cpu_sec=stats.median(cpus) if len(cpus) == len(times) and cpus else None,
               cpu_sec_per_wall_sec=stats.median(utilization) if len(utilization) == len(times) and times else None,
               cpu_sec_per_wall_sec_ci_low=util_lo, cpu_sec_per_wall_sec_ci_high=util_hi,
               cpu_null_reason=(f"{len(reasons)} of {len(times)} timed runs: {reasons[0]}" if reasons else None),
               start_method=worker.get("start_method") if row["execution"] == "processes" else None,
               wall_clock=worker.get("wall_clock"), cpu_clock=worker.get("cpu_clock"),
               jit_clock=worker.get("jit_clock"), median_jit_sec=timed_jit if has_jit_clock else None,
               median_warmup_rounds=stats.median(rounds) if rounds else None,
               jit_quiet_launches=sum(bool(w.get("jit_quiet")) for w in workers_of) if has_jit_clock else None,
               started_unix=min(r.get("started_unix") or 0 for r, _ in launches),
               **{c: record.get("provenance", {}).get(c) for c in PROVENANCE})
    return row, per_launch


def _by_point(records: list[dict], confidence: float) -> tuple[list[dict], dict]:
    """Every point's row, and each ok point's launch times (for the ratios' intervals)."""
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
    return rows, launch_times


# The comparisons of two runtimes point by point (name -> (runtime, against, what it tells)):
# the time of `runtime` over the time of `against` at the same workload, execution and
# workers, with a bootstrap interval resampling both points' launches.
COMPARISONS = {
    "gil_cost": ("cpython_ft_gil", "cpython_ft",
                 "the same free-threaded binary with its GIL on (PYTHON_GIL=1) against off (PYTHON_GIL=0)"),
    "freethreading_overhead": ("cpython_ft", "cpython_src",
                               "the free-threaded build (GIL off) against the default build"),
}


def comparison_table(records: list[dict], confidence: float) -> pd.DataFrame:
    """One row per comparison and point measured by both runtimes: the ratio of their
    median times (above 1: `runtime` slower) with its interval, whether the interval
    excludes 1 (not a verdict: the paper's verdicts also ask for a difference larger than the
    machine's own spread), and both runtimes' versions (a comparison of different versions says so)."""
    _, launch_times = _by_point(records, confidence)
    facts = {}
    for r in records:
        if r["status"] != "unavailable":
            facts.setdefault(r["cell"]["runtime"], r["runtime"])
    rows = []
    for name, (runtime, against, what) in COMPARISONS.items():
        for key, mine in launch_times.items():
            if key[0] != runtime:
                continue
            base = launch_times.get((against, *key[1:]))
            if not base:
                continue
            value, lo, hi = stats.median_ratio(mine, base, 1, confidence, (name, *key))
            a, b = facts.get(runtime, {}), facts.get(against, {})
            rows.append({"study": "gil", "comparison": name, "meaning": what, "runtime": runtime, "against": against,
                         "workload": key[1], "execution": key[2], "workers": key[3],
                         "runtime_median_wall_sec": stats.median(mine), "against_median_wall_sec": stats.median(base),
                         "launches": min(len(mine), len(base)), "time_ratio": value, "time_ratio_ci_low": lo,
                         "time_ratio_ci_high": hi,
                         "ci_excludes_one": None if lo is None or hi is None or pd.isna(lo) else not lo <= 1 <= hi,
                         "runtime_version": a.get("version"), "against_version": b.get("version"),
                         "runtime_origin": a.get("origin"), "against_origin": b.get("origin"),
                         "same_version": a.get("version") == b.get("version") if a and b else None})
    columns = ["study", "comparison", "meaning", "runtime", "against", "workload", "execution", "workers",
               "runtime_median_wall_sec", "against_median_wall_sec", "launches", "time_ratio", "time_ratio_ci_low",
               "time_ratio_ci_high", "ci_excludes_one", "runtime_version", "against_version", "runtime_origin",
               "against_origin", "same_version"]
    out = pd.DataFrame(rows, columns=columns)
    for column in ("time_ratio_ci_low", "time_ratio_ci_high"):
        out[column] = pd.to_numeric(out[column], errors="coerce").astype(float)
    return out


def summary_table(records: list[dict], confidence: float, baseline: str) -> pd.DataFrame:
    rows, launch_times = _by_point(records, confidence)
    columns = ["study", "profile", *KEYS, "status", "failure", "chunks", "repetitions", "repetitions_ok", "runs",
               "median_wall_sec", "median_wall_sec_ci_low", "median_wall_sec_ci_high", "min_wall_sec",
               "max_wall_sec", "median_cpu_sec", "cpu_sec_per_wall_sec", "cpu_sec_per_wall_sec_ci_low",
               "cpu_sec_per_wall_sec_ci_high", "cpu_null_reason", "disturbed_reps", "load_other_cores_max",
               *RUNTIME_FACTS.values(), "start_method",
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
                                 stats.median_ratio(seq, mine, 1, confidence, ("speedup", *key)))
        values["efficiency"].append((1.0 / r.workers, None, None) if itself and mine else
                                    stats.median_ratio(seq, mine, r.workers, confidence, ("efficiency", *key)))
        # the native control's work is scaled: its times are never compared with the runtimes'
        values["ratio"].append((None, None, None) if r.control is True else
                               (1.0, None, None) if r.runtime == baseline and mine else
                               stats.median_ratio(mine, base, 1, confidence, ("ratio", *key)))
    for name, column in (("speedup", "speedup_vs_sequential"), ("efficiency", "efficiency"),
                         ("ratio", "ratio_vs_baseline")):
        triples = values[name]
        summary[column] = [t[0] for t in triples]
        summary[f"{name}_ci_low"] = [t[1] for t in triples]
        summary[f"{name}_ci_high"] = [t[2] for t in triples]
    # intervals are numbers (NaN, not None, where there is none: a single launch)
    for column in [c for c in summary.columns if c.endswith(("_ci_low", "_ci_high"))] + ["load_other_cores_max"]:
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
        if not res["argv"] and not res.get("build"):  # a build has no command until it is built
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
            "control": bool(res.get("control")),
            # where the interpreter came from: path, uv, environment, this, or build (made
            # here from source, with the source's origin, version and checksum)
            "origin": res.get("origin"),
            "environment": " ".join(f"{k}={v}" for k, v in sorted((res.get("env") or {}).items())) or None,
            "python_gil_env": facts.get("python_gil_env"),
            "build_version": facts.get("build_version"), "source_origin": facts.get("source_origin"),
            "source_package": facts.get("source_package"),
            "source_debian_version": facts.get("source_debian_version"),
            "source_sha256": facts.get("source_sha256"), "source_pinned": facts.get("source_pinned"),
            "multiprocessing": (None if not processes else not unavailable),
            "processes_unavailable_reason": unavailable[0] if unavailable else None,
            "start_method": next((r["worker"]["start_method"] for r in ran if r["worker"].get("start_method")), None),
            "wall_clock": next((r["worker"]["wall_clock"] for r in ran), None),
            "cpu_clock": next((r["worker"]["cpu_clock"] for r in ran), None),
            # the interpreter's start-up (spawn to the worker's first line), median over its launches:
            # never inside a timed run
            "median_startup_sec": (stats.median(ups) if (ups := [r["startup_sec"] for r in ran
                                                                  if r.get("startup_sec") is not None]) else None),
            "cells_ok": sum(r["status"] == "ok" for r in mine),
            "cells_failed": sum(r["status"] == "failed" for r in mine),
            "cells_unavailable": sum(r["status"] == "unavailable" for r in mine),
        })
    return pd.DataFrame(rows)


def study_tables(records: list[dict], resolutions: list[dict], confidence: float, baseline: str) -> dict:
    runs = pd.DataFrame([row for r in records for row in run_rows(r)],
                        columns=["study", "profile", *KEYS, "status", "failure", "chunks",
                                 *RUNTIME_FACTS.values(), "rep", "started_unix", "phase", "run", "wall_sec",
                                 "cpu_sec", "cpu_null_reason", "jit_sec"])
    # the order the repetitions ran in (0-based, by start time; all rows of one launch share it)
    runs["run_position"] = (runs["started_unix"].rank(method="dense") - 1).astype("Int64")
    return {"runs": runs, "summary": summary_table(records, confidence, baseline),
            "runtimes": runtime_rows(records, resolutions), "comparisons": comparison_table(records, confidence),
            "load": load_table("gil", records, load_label, load_group)}


def load_label(record: dict) -> str:
    """A cell's name in the load table: `cpython_ft multithread_cpu`."""
    return f"{record['cell']['runtime']} {record['cell']['workload']}"


def load_group(record: dict) -> str:
    """What the run order must spread over the run: the runtime."""
    return record["cell"]["runtime"]


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
    real = runtimes[runtimes["control"] != True]  # noqa: E712  (the native control is no runtime)
    measured = real[real["status"] == "measured"]["runtime"].tolist()
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
              f"{counted(reps, 'interleaved interpreter launch', 'interleaved interpreter launches')} of each "
              f"launch's median of {counted(runs, 'timed run')} after "
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
