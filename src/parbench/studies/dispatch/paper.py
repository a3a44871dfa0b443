"""The generated parts of the dispatch section (`paper/sections/dispatch.qmd` includes
them from `paper/_generated/dispatch/`): this run's parameters, the seed's tables, the
figures, and every sentence that states a finding, computed here from the study's tables
and naming the mode or peer it speaks of. The fixed prose (the platform, its modes, the
protocol, the checks) is in the section file."""

from __future__ import annotations

import pandas as pd

from parbench.paper.format import figure, findings, fmt_ci, fmt_num, fmt_pct, join, md_table
from parbench.stats import distinguishable
from parbench.studies.dispatch.aggregate import dose_slope, main_only, mode_metrics, systems_table
from parbench.studies.dispatch import plan
from parbench.studies.dispatch.plan import MAIN, MODES, SYSTEMS

TABLES = ["dispatch_summary", "dispatch_runs", "dispatch_tasks", "dispatch_cells", "dispatch_anomaly"]
FRAGMENTS = ["setup", "modes", "latency", "scaling", "anomaly", "dose", "order", "verdict", "saturation", "summary"]
REPORT_TABLES = ["dispatch_modes_table", "dispatch_anomaly_table", "dispatch_dose_table", "dispatch_order_table",
                 "dispatch_saturation_table"]

NAMES = {"local": "local mode", "pull": "pull mode", "push": "push mode (credit-based)",
         "push-naive": "push-naive (the seed's push design)", "processpool": "ProcessPoolExecutor",
         "dask": "Dask", "celery": "Celery", "ray": "Ray"}
WORKLOAD_NAMES = {"noop": "no-op", "cpu": "CPU", "io": "I/O"}
# The seed's own numbers (its report), quoted beside ours: per mode, each workload's
# throughput averaged over its worker counts (weak scaling; the seed ran no saturation).
SEED = {"local": {"noop": 58.80, "cpu": 83.59, "io": 29.65}, "pull": {"noop": 20.37, "cpu": 19.00, "io": 15.63},
        "push": {"noop": 11.51, "cpu": 24.83, "io": 21.98}}
# The seed's push: completion time (s) of its 5 no-op tasks per worker, per worker count.
SEED_ANOMALY = {1: 0.13, 2: 7.67, 4: 9.13, 8: 8.25}


def _systems(frame: pd.DataFrame) -> list[str]:
    present = set(frame["system"])
    return [s for s in SYSTEMS if s in present]


def _config(machine: dict) -> dict:
    return machine.get("config", {}).get("dispatch", {})


def _ci(row, column: str) -> tuple:
    return row[f"{column}_ci_low"], row[f"{column}_ci_high"]


def ranked(frame: pd.DataFrame, column: str, name, unit: str = "") -> str:
    """The highest `column` of the frame's rows, named by `name(row)`, with its 95%
    interval; when the runner-up's interval overlaps it, the two are said to be not
    distinguishable on this machine instead of ranked."""
    f = frame.dropna(subset=[column]).sort_values(column, ascending=False)
    if f.empty:
        return ""
    best = f.iloc[0]
    text = f"{name(best)} with {fmt_ci(best[column], *_ci(best, column))}{unit}"
    if len(f) > 1:
        second = f.iloc[1]
        if not distinguishable(_ci(best, column), _ci(second, column)):
            text += (f", not distinguishable on this machine from {name(second)} with "
                     f"{fmt_ci(second[column], *_ci(second, column))}{unit}")
    return text


def local_processes(dc: dict) -> int | None:
    """Processes per worker in local mode (null in the config: the same as the others)."""
    return dc.get("local_processes_per_worker") or dc.get("processes_per_worker")


def setup(cells: pd.DataFrame, summary: pd.DataFrame, machine: dict) -> str:
    dc = _config(machine)
    experiments = cells[cells["experiment"] != MAIN] if "experiment" in cells else cells.iloc[0:0]
    cells = systems_table(main_only(cells))
    platform = dc.get("platform", {})
    sat = dc.get("saturation", {})
    expiry = platform.get("heartbeat_interval_sec", 1) * platform.get("heartbeat_liveness", 3)
    local, processes = local_processes(dc), dc.get("processes_per_worker")
    pool = (f"local mode's pool as many: workers x {processes} processes" if local == processes else
            f"local mode: {local} process(es) per worker, fewer than the other modes' {processes}, which alone caps "
            f"its I/O throughput")
    text = (f"This run measured {len(cells)} systems ({', '.join(NAMES[s] for s in _systems(cells))}) at "
            f"{', '.join(str(w) for w in dc.get('workers', []))} workers of {processes} processes "
            f"each ({pool}), "
            f"{dc.get('tasks_per_worker')} tasks per worker, each workload {dc.get('runs_per_worker_count')} time(s) per "
            f"worker count, and saturation runs of {sat.get('tasks', 0):,} no-op tasks at {sat.get('workers')} workers "
            f"({sat.get('runs')} run(s)); each system's whole protocol was measured "
            f"{int(cells['repetitions'].max()) if len(cells) else 0} time(s), "
            f"each time on a fresh platform or cluster, the repetitions interleaved across the systems. Tables and "
            f"figures give the median over the repetitions with its 95% percentile-bootstrap interval "
            f"(in parentheses; none with a single repetition). Workers sent a heartbeat every "
            f"{fmt_num(platform.get('heartbeat_interval_sec'))} s and were dropped after "
            f"{platform.get('heartbeat_liveness')} silent intervals ({fmt_num(expiry)} s). ")
    failed = cells[cells["status"] == "failed"]
    if len(failed):
        text += (f"{len(failed)} system(s) failed a check and are listed, not drawn: "
                 + "; ".join(f"{NAMES[r.system]} ({r.failure})" for r in failed.itertuples()) + ".")
    else:
        measured = cells[cells["status"] == "ok"]
        text += (f"Every task of the {len(measured)} measured system(s) completed with the expected value, and every "
                 f"platform task's result was stored exactly once.")
    parts = [text]
    if len(experiments):
        bad = experiments[experiments["status"] != "ok"]
        settings = {name: e["setting"] for name, e in plan.experiments({"dispatch": dc}).items()} \
            if dc.get("anomaly") else {}
        parts.append(f"The push anomaly's experiments (@sec-dispatch-anomaly-test) ran "
                     f"{experiments['experiment'].nunique()} more setting(s) as {len(experiments)} cell(s) of their "
                     f"own, without saturation runs: "
                     + "; ".join(f"{', '.join(sorted(set(g['system'])))} with {settings.get(name, name)}"
                                 for name, g in experiments.groupby("experiment", sort=True)) + ". "
                     + (f"{len(bad)} of them failed a check: " + "; ".join(
                         f"{r.system}@{r.experiment} r{r.rep} ({r.failure})" for r in bad.itertuples()) + "."
                        if len(bad) else "Every task of theirs completed with the expected value, once."))
    unavailable = cells[cells["status"] == "unavailable"]
    if len(unavailable):
        parts.append("::: {.callout-note title=\"Peers that could not run here\"}\n"
                     + " ".join(f"{NAMES[r.system]}: {r.failure}." for r in unavailable.itertuples()) + "\n:::")
    return join(*parts)


def modes_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The seed's per-mode key metrics, one row per system."""
    rows = []
    for system in _systems(summary):
        m = mode_metrics(summary, system)
        if m is None:
            continue
        row = {"system": system}
        for w in ("noop", "cpu", "io"):
            row[f"{WORKLOAD_NAMES[w]} tasks/s"] = fmt_num(m["throughput"].get(w))
        for w in ("noop", "cpu", "io"):
            row[f"{WORKLOAD_NAMES[w]} latency, ms"] = fmt_num(m["latency"].get(w))
        row["success"] = fmt_pct(m["success_rate"])
        row["weak-scaling efficiency"] = fmt_pct(m["efficiency"])
        rows.append(row)
    return pd.DataFrame(rows) if rows else pd.DataFrame({"system": []})


def modes(ok: pd.DataFrame, machine: dict) -> str:
    profile = machine["profile"]
    fig = figure(profile, "dispatch_throughput", "Weak scaling: throughput of each system against workers, per "
                 "workload (median of the repetitions, 95% bootstrap interval bars, log scales).", "fig-dispatch-throughput")
    table = md_table(modes_table(ok), "The seed's key metrics per mode and peer: throughput averaged over the worker "
                     "counts, mean latency, success rate and weak-scaling efficiency (mean over workloads and worker "
                     "counts above 1 of T(1)/T(N)).", "tbl-dispatch-modes")
    sentences = []
    for system in [s for s in ("local", "pull", "push") if s in set(ok["system"])]:
        m = mode_metrics(ok, system)
        if m is None:
            continue
        sentences.append(f"{NAMES[system]} averaged {fmt_num(m['throughput'].get('noop'))} no-op tasks/s over the "
                         f"worker counts, against the seed's {fmt_num(SEED[system]['noop'])}")
    weak = ok[ok["phase"] == "weak_scaling"]
    top = weak[weak["workers"] == weak["workers"].max()]
    best = []
    for workload, f in top.groupby("workload", sort=False):
        best.append(f"on {WORKLOAD_NAMES[workload]} tasks "
                    + ranked(f, "median_throughput_tasks_per_sec", lambda r: NAMES[r["system"]], " tasks/s"))
    text = ""
    if sentences:
        text += "; ".join(sentences) + " (@tbl-dispatch-modes). "
    if best:
        text += (f"At {int(top['workers'].max())} workers the highest weak-scaling throughput was, "
                 + "; ".join(best) + " (@fig-dispatch-throughput). ")
    text += ("A weak-scaling run is small (a few tasks per worker), so its throughput is mostly the fixed cost "
             "of a round trip through each system; the saturation runs below measure peak throughput.")
    return join(table, fig, text)


def latency(ok: pd.DataFrame, machine: dict) -> str:
    profile = machine["profile"]
    fig = figure(profile, "dispatch_latency", "Latency of every task (submission to the result seen by the client) "
                 "at the largest worker count, as an ECDF per workload.", "fig-dispatch-latency")
    weak = ok[(ok["phase"] == "weak_scaling") & (ok["workload"] == "noop")]
    top = weak[weak["workers"] == weak["workers"].max()].dropna(subset=["p50_latency_ms"])
    if top.empty:
        return join(fig)
    parts = [f"{NAMES[r.system]} {fmt_num(r.p50_latency_ms)} ms (max {fmt_num(r.max_latency_ms)} ms)"
             for r in top.itertuples()]
    return join(fig, f"At {int(top['workers'].max())} workers the median no-op latency was " + ", ".join(parts)
                + " (@fig-dispatch-latency); the seed measured 6.5 ms for local mode, 146 ms for pull and 1,190 ms "
                  "for push.")


def scaling(ok: pd.DataFrame, machine: dict) -> str:
    profile = machine["profile"]
    fig = figure(profile, "dispatch_weak_scaling", "Weak scaling: completion time of every run against workers; the "
                 "line joins the medians, diamonds mark the first run after the workers changed.",
                 "fig-dispatch-weak-scaling")
    weak = ok[(ok["phase"] == "weak_scaling") & (ok["workers"] > 1)].dropna(subset=["weak_scaling_efficiency"])
    if weak.empty:
        return join(fig)
    top = weak[weak["workers"] == weak["workers"].max()]
    eff = top.groupby("system", sort=False)["weak_scaling_efficiency"].mean().sort_values(ascending=False)
    per_workload = []
    for workload, f in top.groupby("workload", sort=False):
        per_workload.append(f"on {WORKLOAD_NAMES[workload]} tasks the highest was "
                            + ranked(f, "weak_scaling_efficiency", lambda r: NAMES[r["system"]]))
    text = (f"Weak-scaling efficiency (T(1)/T(N) of the medians over repetitions, mean over workloads) at "
            f"{int(top['workers'].max())} workers: " + ", ".join(f"{NAMES[s]} {fmt_pct(v)}" for s, v in eff.items())
            + " (@fig-dispatch-weak-scaling). Per workload, with 95% bootstrap intervals of the ratio (both worker "
              "counts' repetitions resampled), " + "; ".join(per_workload) + ". Ideal weak scaling keeps the "
              "completion time flat; on a machine with fewer cores than processes, more workers share the same cores.")
    return join(fig, text)


def scale_experiment(frame: pd.DataFrame, system: str) -> str:
    """Where a system's runs at the seed's worker counts are: the `workers-...`
    experiment when the profile ran one for it (the main sweep has fewer counts), else
    the main sweep."""
    names = sorted({e for e in frame.loc[frame["system"] == system, "experiment"].unique()
                    if str(e).startswith("workers-")})
    return names[0] if names else MAIN


def anomaly_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The seed's anomaly table beside ours at each worker count: the first no-op run
    after the workers changed, for push-naive and push (from the seed's worker counts
    where the profile ran them)."""
    s = summary[(summary["phase"] == "weak_scaling") & (summary["workload"] == "noop") & (summary["status"] == "ok")]
    s = pd.concat([s[(s["system"] == system) & (s["experiment"] == scale_experiment(s, system))]
                   for system in ("push-naive", "push")]) if len(s) else s
    rows = []
    for workers in sorted(s["workers"].unique()):
        seed = SEED_ANOMALY.get(int(workers))
        row = {"workers": str(int(workers)), "seed push, s": fmt_num(seed),
               "seed vs 1 worker": f"{fmt_num(seed / SEED_ANOMALY[1])}x" if seed else "n/a"}
        for system in ("push-naive", "push"):
            f = s[s["system"] == system].set_index("workers")
            if workers not in f.index:
                continue
            first = f.loc[workers, "first_run_completion_time_sec"]
            one = f["first_run_completion_time_sec"].get(1)
            row[f"{system} first run, s"] = fmt_ci(first, *_ci(f.loc[workers], "first_run_completion_time_sec"))
            row[f"{system} vs 1 worker"] = f"{fmt_num(first / one)}x" if one and first else "n/a"
            row[f"{system} later runs, s"] = fmt_num(f.loc[workers, "later_median_completion_time_sec"])
            row[f"{system} stale workers"] = fmt_num(f.loc[workers, "stale_workers_first_run"])
        rows.append(row)
    frame = pd.DataFrame(rows) if rows else pd.DataFrame({"workers": []})
    # with one run per worker count (runs_per_worker_count 1) there are no later runs
    empty = [c for c in frame.columns if c.endswith("later runs, s") and (frame[c] == "n/a").all()]
    return frame.drop(columns=empty)


def cause(runs: pd.DataFrame, tasks: pd.DataFrame, machine: dict) -> str:
    """The anomaly's cause, read from the recorded runs and task stages."""
    platform = _config(machine).get("platform", {})
    expiry = platform.get("heartbeat_interval_sec", 1) * platform.get("heartbeat_liveness", 3)
    naive = runs[(runs["system"] == "push-naive") & (runs["phase"] == "weak_scaling") & (runs["status"] == "ok")
                 & (runs["workers"] > 1)]
    if naive.empty:
        return ""
    first = naive[naive["first_after_change"] == True]  # noqa: E712
    later = naive[naive["first_after_change"] != True]  # noqa: E712
    t = tasks[tasks["system"] == "push-naive"].merge(first[["rep", "run_index"]], on=["rep", "run_index"])
    again = t[t["attempts"] > 1]
    gap = (again["dispatched_ms"] - again["first_dispatched_ms"]).median() if len(again) else None
    runs_with_stale = first[first["stale_workers"] > 0]
    fresh = t[t["attempts"] == 1]
    text = (f"In push-naive, the first run after each change of workers ({len(first)} run(s)) found "
            f"{fmt_num(first['stale_workers'].mean())} stale worker(s) on average still registered: the workers of the "
            f"previous count, stopped without a word, whose heartbeats had not yet lapsed. Round-robin sent them "
            f"{len(again)} task(s) in those runs; ZeroMQ's ROUTER dropped them without an error because their peers "
            f"were gone, and nothing ran them until the dispatcher dropped those workers and dispatched the tasks "
            f"again, a median {fmt_num(gap / 1000 if gap is not None else None)} s after their first dispatch "
            f"(the heartbeat expiry is {fmt_num(expiry)} s, counted from the stale worker's last heartbeat). The "
            f"other {len(fresh)} task(s) of those runs had a median latency of "
            f"{fmt_num(fresh['latency_ms'].median())} ms. ")
    if len(later):
        text += (f"The other runs at the same worker counts ({len(later)} run(s), whatever their workload) found "
                 f"{fmt_num(later['stale_workers'].max())} stale workers at most, dispatched "
                 f"{fmt_num(later['requeued_tasks'].sum())} task(s) again, and took a median "
                 f"{fmt_num(later['completion_time_sec'].median())} s: the cliff is a transient of the change of "
                 f"workers, and it hits whichever workload runs first after it. The seed ran its no-op tasks first, "
                 f"and its cliff has this mechanism's signature: no-op runs only, from 2 workers on, a height (7.7 to "
                 f"9.1 s) that does not grow with the workers, as a heartbeat expiry of about 8 s would give. None of "
                 f"its own guesses (message queuing, synchronization, socket buffers, load balancing) singles out "
                 f"the first run after a change of workers. ")
    if len(runs_with_stale) < len(first):
        text += (f"In {len(first) - len(runs_with_stale)} of those first runs the stale workers had already expired "
                 f"when the run began (starting the new workers took longer than the expiry). ")
    fixed = runs[(runs["system"] == "push") & (runs["phase"] == "weak_scaling") & (runs["status"] == "ok")
                 & (runs["workers"] > 1) & (runs["first_after_change"] == True)]  # noqa: E712
    if len(fixed):
        text += (f"Push mode's first runs after a change found {fmt_num(fixed['stale_workers'].max())} stale "
                 f"worker(s) and dispatched {fmt_num(fixed['requeued_tasks'].sum())} task(s) again: its workers say "
                 f"BYE when they stop, its dispatcher sends only against credit a live worker granted and with "
                 f"ROUTER_MANDATORY (an unroutable worker is an error at once, and its tasks go back to the queue), "
                 f"so nothing waits for a heartbeat to lapse unless a worker dies outright")
    return text


def anomaly(ok: pd.DataFrame, machine: dict, runs: pd.DataFrame, tasks: pd.DataFrame) -> str:
    profile = machine["profile"]
    fig = figure(profile, "dispatch_anomaly", "Where the time goes in the first no-op run after the change to the "
                 "most workers of the main sweep, push-naive above, push below: each task's stages (from its "
                 "submission to the moment the client saw its result) and the tasks each worker held.",
                 "fig-dispatch-anomaly")
    table = md_table(anomaly_table(ok), "No-op completion time at each of the seed's worker counts, the seed's push "
                     "beside push-naive and push: the first run after the workers changed (median over the "
                     "repetitions, 95% bootstrap interval in parentheses), how many times slower than at 1 worker (the "
                     "seed's ratio beside), the later runs' median (with runs_per_worker_count above 1), and stale "
                     "workers registered when the first run began (median over the repetitions).",
                     "tbl-dispatch-anomaly")
    text = cause(main_only(runs), main_only(tasks), machine)
    return join(table, (text + " (@tbl-dispatch-anomaly, @fig-dispatch-anomaly).") if text else "", fig)


# --- the anomaly's experiments: prediction against measurement --------------------------------------

def _interval(row, column: str) -> tuple:
    """A median's 95% interval, or the median alone (one repetition) as a point."""
    low, high = row[f"median_{column}_ci_low"], row[f"median_{column}_ci_high"]
    if low is None or pd.isna(low):
        value = row[f"median_{column}"]
        return value, value
    return low, high


def _fmt_row(row, column: str) -> str:
    return fmt_ci(row[f"median_{column}"], row[f"median_{column}_ci_low"], row[f"median_{column}_ci_high"])


def against_prediction(row) -> str:
    """Whether a group's measured stall is what the explanation predicts: its interval
    against the predicted one widened by the dispatcher's check (a quarter heartbeat
    interval) and 50 ms of dispatching; "as predicted" when they overlap."""
    measured = _interval(row, "stall_sec")
    low, high = _interval(row, "predicted_stall_sec")
    window = (low, high + row["heartbeat_interval_sec"] / 4 + 0.05)
    if None in measured or None in window or any(pd.isna(v) for v in (*measured, *window)):
        return "n/a"
    if measured[1] < window[0]:
        return "shorter than predicted"
    if measured[0] > window[1]:
        return "longer than predicted"
    return "as predicted"


def _is_dose(experiment: str) -> bool:
    return experiment == MAIN or str(experiment).startswith("expiry-")


def dose_rows(anomaly: pd.DataFrame, system: str = "push-naive") -> pd.DataFrame:
    """The dose-response: the first run after each change of workers, at each heartbeat
    expiry (the main sweep and the expiry experiments)."""
    a = anomaly[(anomaly["system"] == system) & (anomaly["first_after_change"] == True)  # noqa: E712
                & anomaly["experiment"].map(_is_dose)]
    return a.sort_values(["from_workers", "workers", "expiry_sec"]).reset_index(drop=True)


def dose_table(anomaly: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for system in ("push-naive", "push"):
        for r in dose_rows(anomaly, system).to_dict("records"):
            rows.append({"system": system, "expiry, s": f"{fmt_num(r['expiry_sec'])} ({fmt_num(r['heartbeat_interval_sec'])} x "
                                                        f"{fmt_num(r['expiry_sec'] / r['heartbeat_interval_sec'])})",
                         "workers": f"{r['from_workers']} → {int(r['workers'])}",
                         "first workload": WORKLOAD_NAMES.get(r["workload"], r["workload"]),
                         "stale workers": fmt_num(r["stale_workers"]),
                         "predicted stall, s": _fmt_row(r, "predicted_stall_sec"),
                         "measured stall, s": _fmt_row(r, "stall_sec"),
                         "first run, s": _fmt_row(r, "completion_time_sec"),
                         "verdict": against_prediction(r)})
    return pd.DataFrame(rows) if rows else pd.DataFrame({"system": []})


def dose_findings(anomaly: pd.DataFrame, runs: pd.DataFrame) -> dict:
    """What the dose-response says about prediction 1, computed from the tables."""
    rows = dose_rows(anomaly).to_dict("records")
    if not rows:
        return {}
    first_change = [r for r in rows if (r["from_workers"], r["workers"]) == (rows[0]["from_workers"], rows[0]["workers"])]
    verdicts = [against_prediction(r) for r in rows]
    low, high = first_change[0], first_change[-1]
    grows = (len(first_change) > 1 and distinguishable(_interval(low, "completion_time_sec"),
                                                       _interval(high, "completion_time_sec"))
             and high["median_completion_time_sec"] > low["median_completion_time_sec"])
    experiments = sorted({r["experiment"] for r in rows})
    return {"rows": rows, "first_change": first_change, "as_predicted": verdicts.count("as predicted"),
            "grows": grows, "slope": dose_slope(runs, "push-naive", experiments)}


def dose(ok: pd.DataFrame, machine: dict, anomaly: pd.DataFrame, runs: pd.DataFrame) -> str:
    profile = machine["profile"]
    found = dose_findings(anomaly, runs)
    if not found:
        return join("This run has no push-naive first run after a change of workers to read the dose-response from.")
    fig = figure(profile, "dispatch_dose_response", "Dose-response of push-naive's cliff: left, the first run "
                 "after each change of workers against the heartbeat expiry (every repetition; the line joins the "
                 "medians); right, each such run's measured stall against the stall the explanation predicts for "
                 "it (on the diagonal: as predicted; the band above it is the dispatcher's check, a quarter "
                 "interval).", "fig-dispatch-dose")
    table = md_table(dose_table(anomaly), "The dose-response: the first run after each change of workers at each "
                     "heartbeat expiry (interval x liveness): stale workers when it began, the stall the "
                     "explanation predicts (when the last stale worker's heartbeats lapse, after the run's start), "
                     "the stall measured (the longest a task waited from its first dispatch to its last), and the "
                     "run's completion time (median over the repetitions, 95% bootstrap interval); as predicted "
                     "where the measured interval overlaps the predicted one widened by the dispatcher's check.",
                     "tbl-dispatch-dose")
    c = found["first_change"]
    change = f"{c[0]['from_workers']} to {int(c[0]['workers'])} workers"
    text = (f"At heartbeat expiries of {', '.join(fmt_num(r['expiry_sec']) for r in c)} s, push-naive's first "
            f"{WORKLOAD_NAMES.get(c[0]['workload'], c[0]['workload'])} run after the change from {change} took "
            + ", ".join(f"{_fmt_row(r, 'completion_time_sec')} s" for r in c)
            + "; its tasks waited at stale workers " + ", ".join(f"{_fmt_row(r, 'stall_sec')} s" for r in c)
            + " where the explanation predicts " + ", ".join(f"{_fmt_row(r, 'predicted_stall_sec')} s" for r in c)
            + f". Over every change of workers, {found['as_predicted']} of {len(found['rows'])} measured stalls are "
              f"as predicted (@tbl-dispatch-dose). ")
    if len(c) > 1:
        text += (f"The first run at the longest expiry is {'distinguishably longer than' if found['grows'] else 'not distinguishable from'} "
                 f"the one at the shortest. ")
    slope = found["slope"]
    if slope:
        text += (f"Across the {slope['runs']} first runs after a change, the stall rose "
                 f"{fmt_ci(slope['slope'], slope['slope_ci_low'], slope['slope_ci_high'])} s per second of expiry "
                 f"(least squares, 95% interval from resampling the runs; the explanation predicts 1 while the "
                 f"stopped workers are still registered when the run begins) (@fig-dispatch-dose).")
    return join(table, text, fig)


def _is_order(experiment: str) -> bool:
    return experiment == MAIN or str(experiment).startswith("order-")


def order_rows(anomaly: pd.DataFrame, system: str = "push-naive") -> pd.DataFrame:
    """Every workload's run after the first change of workers, in the main order and in
    each order experiment."""
    a = anomaly[(anomaly["system"] == system) & anomaly["experiment"].map(_is_order)]
    if a.empty:
        return a
    first = a.groupby("experiment")["workers"].transform("min")
    a = a[a["workers"] == first].copy()
    a["position"] = [str(o).split(",").index(w) if isinstance(o, str) and w in str(o).split(",") else 99
                     for o, w in zip(a["workload_order"], a["workload"])]
    return a.sort_values(["experiment", "position"]).reset_index(drop=True)


def order_table(anomaly: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for system in ("push-naive", "push"):
        for r in order_rows(anomaly, system).to_dict("records"):
            rows.append({"system": system, "order": str(r["workload_order"]).replace(",", ", "),
                         "workers": f"{r['from_workers']} → {int(r['workers'])}",
                         "workload": WORKLOAD_NAMES.get(r["workload"], r["workload"]),
                         "run": "first after the change" if r["first_after_change"] else "later",
                         "stale workers": fmt_num(r["stale_workers"]),
                         "measured stall, s": _fmt_row(r, "stall_sec"),
                         "completion, s": _fmt_row(r, "completion_time_sec")})
    return pd.DataFrame(rows) if rows else pd.DataFrame({"system": []})


def order_findings(anomaly: pd.DataFrame) -> list[dict]:
    """Per order: its first workload's stall, and whether it is distinguishably above the
    stall of every later workload at the same change of workers."""
    out = []
    for experiment, group in order_rows(anomaly).groupby("experiment", sort=False):
        rows = group.to_dict("records")
        first = [r for r in rows if r["first_after_change"]]
        later = [r for r in rows if not r["first_after_change"]]
        if not first:
            continue
        head = first[0]
        above = all(distinguishable(_interval(head, "stall_sec"), _interval(r, "stall_sec"))
                    and head["median_stall_sec"] > r["median_stall_sec"] for r in later)
        out.append({"experiment": experiment, "order": head["workload_order"], "first": head, "later": later,
                    "follows": above and bool(later)})
    return out


def order(ok: pd.DataFrame, machine: dict, anomaly: pd.DataFrame) -> str:
    profile = machine["profile"]
    found = order_findings(anomaly)
    if len(found) < 2:
        return join("This run has no second order of the workloads to compare the cliff with.")
    fig = figure(profile, "dispatch_order", "The order experiment: the stall of every workload's run after the first "
                 "change of workers, push-naive, in the main order and with the workloads in another order (every "
                 "repetition; the bar is the median).", "fig-dispatch-order")
    table = md_table(order_table(anomaly), "The order experiment: each workload's run after the first change of "
                     "workers, in the main order and in the others: the stall measured and the completion time "
                     "(median over the repetitions, 95% bootstrap interval).", "tbl-dispatch-order")
    parts = []
    for f in found:
        head = f["first"]
        parts.append(f"with the workloads in the order {str(f['order']).replace(',', ', ')} the "
                     f"{WORKLOAD_NAMES.get(head['workload'], head['workload'])} run, first after the change, stalled "
                     f"{_fmt_row(head, 'stall_sec')} s and the later ones "
                     + ", ".join(f"{_fmt_row(r, 'stall_sec')} s ({WORKLOAD_NAMES.get(r['workload'], r['workload'])})"
                                 for r in f["later"])
                     + f" ({'distinguishably more' if f['follows'] else 'not distinguishable from every later one'})")
    return join(table, "In push-naive, " + "; ".join(parts) + " (@tbl-dispatch-order, @fig-dispatch-order).", fig)


def scale_findings(anomaly: pd.DataFrame) -> dict:
    """Prediction 3: a stall at every change of workers in push-naive, none in push."""
    out = {}
    for system in ("push-naive", "push"):
        a = anomaly[(anomaly["system"] == system) & (anomaly["experiment"] == scale_experiment(anomaly, system))
                    & (anomaly["first_after_change"] == True)].sort_values("workers")  # noqa: E712
        if len(a):
            out[system] = a.to_dict("records")
    return out


def verdict(ok: pd.DataFrame, machine: dict, anomaly: pd.DataFrame, runs: pd.DataFrame) -> str:
    """Whether the data confirmed each prediction, computed from the tables."""
    parts = []
    dose_found = dose_findings(anomaly, runs)
    if dose_found:
        n, total = dose_found["as_predicted"], len(dose_found["rows"])
        slope = dose_found["slope"]
        slope_ok = bool(slope) and slope["slope_ci_low"] <= 1 <= slope["slope_ci_high"]
        confirmed = n == total and (dose_found["grows"] or len(dose_found["first_change"]) < 2)
        parts.append(f"**Prediction 1 (dose-response): {'confirmed' if confirmed else 'not confirmed'}.** "
                     f"{n} of {total} measured stalls lie where the heartbeat expiry puts them"
                     + (f"; the stall's slope against the expiry, {fmt_ci(slope['slope'], slope['slope_ci_low'], slope['slope_ci_high'])}, "
                        f"{'includes' if slope_ok else 'excludes'} the predicted 1" if slope else "")
                     + (f"; the cliff at the longest expiry is {'distinguishably higher than' if dose_found['grows'] else 'not distinguishable from'} "
                        f"the one at the shortest" if len(dose_found["first_change"]) > 1 else "") + ".")
    order_found = order_findings(anomaly)
    if len(order_found) > 1:
        follows = [f for f in order_found if f["follows"]]
        parts.append(f"**Prediction 2 (order): {'confirmed' if len(follows) == len(order_found) else 'not confirmed'}.** "
                     f"In {len(follows)} of {len(order_found)} orders the stall fell on the workload that ran first after "
                     f"the change ("
                     + ", ".join(f"{WORKLOAD_NAMES.get(f['first']['workload'], f['first']['workload'])} first: "
                                 f"{_fmt_row(f['first'], 'stall_sec')} s" for f in order_found)
                     + ") and was distinguishably longer than every later workload's.")
    scale_found = scale_findings(anomaly)
    if "push-naive" in scale_found:
        naive = scale_found["push-naive"]
        stalled = [r for r in naive if _interval(r, "stall_sec")[0] > 0]
        push = scale_found.get("push", [])
        push_clean = all(r["median_stall_sec"] == 0 and (r["stale_workers"] or 0) == 0 for r in push)
        parts.append(f"**Prediction 3 (every change of workers, and not in push): "
                     f"{'confirmed' if len(stalled) == len(naive) and push and push_clean else 'not confirmed'}.** "
                     f"Push-naive's first run stalled at {len(stalled)} of its {len(naive)} changes of workers ("
                     + ", ".join(f"to {int(r['workers'])}: {_fmt_row(r, 'stall_sec')} s, predicted "
                                 f"{_fmt_row(r, 'predicted_stall_sec')} s ({against_prediction(r)})" for r in naive)
                     + "; the stale workers were last heard from "
                     + ", ".join(f"{fmt_num(r['median_stale_lag_sec'])} s" for r in naive)
                     + " before the run began, the time the new workers took to start, which the expiry no longer "
                       "has to wait)"
                     + (f"; push's first runs found {fmt_num(max(r['stale_workers'] or 0 for r in push))} stale "
                        f"workers at most and stalled {fmt_num(max(r['median_stall_sec'] for r in push))} s at most"
                        if push else "; push was not run at these worker counts") + ".")
    if not parts:
        return join("This run has no anomaly experiment to judge the explanation by.")
    return join(*parts)


def saturation_table(summary: pd.DataFrame) -> pd.DataFrame:
    s = summary[(summary["phase"] == "saturation") & (summary["status"] == "ok")]
    rows = [{"system": r.system, "workers": str(int(r.workers)), "submission": r.submission,
             "tasks": f"{int(r.tasks_per_run):,}",
             "tasks/s (median, 95% CI)": fmt_ci(r.median_throughput_tasks_per_sec,
                                                r.median_throughput_tasks_per_sec_ci_low,
                                                r.median_throughput_tasks_per_sec_ci_high),
             "repetitions": str(int(r.repetitions)), "p99 latency, ms": fmt_num(r.p99_latency_ms)}
            for r in s.itertuples()]
    return pd.DataFrame(rows) if rows else pd.DataFrame({"system": []})


def saturation(ok: pd.DataFrame, machine: dict) -> str:
    profile = machine["profile"]
    fig = figure(profile, "dispatch_saturation", "Peak throughput on many no-op tasks: one request (or call) per "
                 "task, and batched (median over the repetitions, 95% bootstrap interval).", "fig-dispatch-saturation")
    table = md_table(saturation_table(ok), "Saturation runs: no-op tasks per second per system, submission and "
                     "worker count (median over the repetitions with its 95% bootstrap interval).",
                     "tbl-dispatch-saturation")
    s = ok[ok["phase"] == "saturation"]
    if s.empty:
        return join(fig)
    rate = s.set_index(["system", "submission", "workers"])["median_throughput_tasks_per_sec"]
    parts = []
    for workers in sorted(s["workers"].unique()):
        per = [f"{NAMES[m]} {fmt_num(rate[(m, 'per_task', workers)])}" for m in MODES
               if (m, "per_task", workers) in rate.index]
        if per:
            parts.append(f"At {int(workers)} workers, one HTTP request per task, the platform reached "
                         + ", ".join(per) + " no-op tasks/s")
        batch = [(m, rate[(m, "batch", workers)]) for m in SYSTEMS if (m, "batch", workers) in rate.index]
        if batch:
            rows = s[(s["submission"] == "batch") & (s["workers"] == workers)]
            parts.append("batched, " + ", ".join(f"{NAMES[m]} {fmt_num(v)}" for m, v in batch)
                         + " (the fastest: " + ranked(rows, "median_throughput_tasks_per_sec",
                                                      lambda r: NAMES[r["system"]], " tasks/s") + ")")
    return join(table, fig, "; ".join(parts) + " (@tbl-dispatch-saturation, @fig-dispatch-saturation).")


def summary(ok: pd.DataFrame, machine: dict, runs: pd.DataFrame) -> str:
    lines = []
    main = main_only(ok)
    sat = main[(main["phase"] == "saturation") & (main["submission"] == "per_task")]
    for system in ("local", "pull", "push"):
        m = mode_metrics(main, system)
        f = sat[sat["system"] == system]
        if m is None:
            continue
        line = (f"- {NAMES[system]}: {fmt_num(m['throughput'].get('noop'))} no-op tasks/s averaged over the "
                f"weak-scaling runs (the seed's same average: {fmt_num(SEED[system]['noop'])})")
        if len(f):
            best = f.loc[f["median_throughput_tasks_per_sec"].idxmax()]
            line += (f"; at saturation {fmt_num(best['median_throughput_tasks_per_sec'])} no-op tasks/s through the "
                     f"gateway, one request per task, at {int(best['workers'])} workers (the seed ran no saturation)")
        lines.append(line + ".")
    noop = ok[(ok["phase"] == "weak_scaling") & (ok["workload"] == "noop") & (ok["status"] == "ok")]
    for system in ("push-naive", "push"):
        f = noop[(noop["system"] == system) & (noop["experiment"] == scale_experiment(noop, system))].set_index("workers")
        if 1 in f.index and len(f) > 1:
            top = int(f.index.max())
            ratio = f.loc[top, "first_run_completion_time_sec"] / f.loc[1, "first_run_completion_time_sec"]
            seed = (f"the seed's push at {top} workers: {fmt_num(SEED_ANOMALY[top] / SEED_ANOMALY[1])}x"
                    if top in SEED_ANOMALY else "the seed ran no such worker count")
            lines.append(f"- {NAMES[system]}: the first no-op run at {top} workers took {fmt_num(ratio)}x as long "
                         f"as at 1 worker ({fmt_num(ratio / top)}x per task; {seed}).")
    return join("What this run found, against the seed:", "\n".join(lines)) if lines else join("")


def report_tables(tables: dict[str, pd.DataFrame]) -> dict:
    s, anomaly = tables["dispatch_summary"], tables["dispatch_anomaly"]
    main = main_only(s)
    return {"dispatch_modes_table": (modes_table(main[main["status"] == "ok"]), "dispatch: the seed's key metrics per mode"),
            "dispatch_anomaly_table": (anomaly_table(s), "dispatch: the push anomaly, no-op completion times"),
            "dispatch_dose_table": (dose_table(anomaly), "dispatch: the anomaly's dose-response"),
            "dispatch_order_table": (order_table(anomaly), "dispatch: the anomaly's order experiment"),
            "dispatch_saturation_table": (saturation_table(main), "dispatch: saturation throughput")}


def fragments(tables: dict[str, pd.DataFrame], machine: dict) -> dict[str, str]:
    s, runs, tasks, cells, anomaly_rows = (tables["dispatch_summary"], tables["dispatch_runs"], tables["dispatch_tasks"],
                                           tables["dispatch_cells"], tables["dispatch_anomaly"])
    main = main_only(s)
    writers = {"modes": modes, "latency": latency, "scaling": scaling,
               "anomaly": lambda ok, m: anomaly(s[s["status"] == "ok"], m, runs, tasks),
               "dose": lambda ok, m: dose(ok, m, anomaly_rows, runs),
               "order": lambda ok, m: order(ok, m, anomaly_rows),
               "verdict": lambda ok, m: verdict(ok, m, anomaly_rows, runs),
               "saturation": saturation, "summary": lambda ok, m: summary(s[s["status"] == "ok"], m, runs)}
    return {"setup": setup(cells, main, machine), **findings(main[main["status"] == "ok"], machine, writers)}
