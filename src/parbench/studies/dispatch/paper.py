"""The generated parts of the dispatch section (`paper/sections/dispatch.qmd` includes
them from `paper/_generated/dispatch/`): this run's parameters, the seed's tables, the
figures, and every sentence that states a finding, computed here from the study's tables
and naming the mode or peer it speaks of. The fixed prose (the platform, its modes, the
protocol, the checks) is in the section file."""

from __future__ import annotations

import pandas as pd

from parbench.paper.format import figure, findings, fmt_ci, fmt_num, fmt_pct, join, md_table
from parbench.stats import distinguishable
from parbench.studies.dispatch.aggregate import mode_metrics, systems_table
from parbench.studies.dispatch.plan import MODES, SYSTEMS

TABLES = ["dispatch_summary", "dispatch_runs", "dispatch_tasks", "dispatch_cells"]
FRAGMENTS = ["setup", "modes", "latency", "scaling", "anomaly", "saturation", "summary"]
REPORT_TABLES = ["dispatch_modes_table", "dispatch_anomaly_table", "dispatch_saturation_table"]

NAMES = {"local": "local mode", "pull": "pull mode", "push": "push mode (credit-based)",
         "push-naive": "push-naive (the seed's push design)", "processpool": "ProcessPoolExecutor",
         "dask": "Dask", "celery": "Celery", "ray": "Ray"}
WORKLOAD_NAMES = {"noop": "no-op", "cpu": "CPU", "io": "I/O"}
# The seed's own numbers (its report), quoted beside ours.
SEED = {"local": {"noop": 58.80, "cpu": 83.59, "io": 29.65}, "pull": {"noop": 20.37, "cpu": 19.00, "io": 15.63},
        "push": {"noop": 11.51, "cpu": 24.83, "io": 21.98}}
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


def setup(cells: pd.DataFrame, summary: pd.DataFrame, machine: dict) -> str:
    dc = _config(machine)
    cells = systems_table(cells)
    platform = dc.get("platform", {})
    sat = dc.get("saturation", {})
    expiry = platform.get("heartbeat_interval_sec", 1) * platform.get("heartbeat_liveness", 3)
    text = (f"This run measured {len(cells)} systems ({', '.join(NAMES[s] for s in _systems(cells))}) at "
            f"{', '.join(str(w) for w in dc.get('workers', []))} workers of {dc.get('processes_per_worker')} processes "
            f"each (local mode: a pool of {dc.get('local_processes_per_worker')} process(es) per worker), "
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


def anomaly_table(summary: pd.DataFrame) -> pd.DataFrame:
    s = summary[(summary["phase"] == "weak_scaling") & (summary["workload"] == "noop") & (summary["status"] == "ok")]
    rows = []
    for workers in sorted(s["workers"].unique()):
        row = {"workers": str(int(workers)), "seed push, s": fmt_num(SEED_ANOMALY.get(int(workers)))}
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
                 "most workers, push-naive above, push below: each task's stages (from its submission to the moment "
                 "the client saw its result) and the tasks each worker held.", "fig-dispatch-anomaly")
    table = md_table(anomaly_table(ok), "No-op completion time at each worker count, the seed's push beside "
                     "push-naive and push: the first run after the workers changed (median over the repetitions, "
                     "95% bootstrap interval in parentheses), how many times slower than at 1 worker, the later "
                     "runs' median (with runs_per_worker_count above 1), and stale workers registered when the first run began (median over the "
                     "repetitions).", "tbl-dispatch-anomaly")
    return join(table, cause(runs, tasks, machine) + " (@tbl-dispatch-anomaly, @fig-dispatch-anomaly).", fig)


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
    sat = ok[(ok["phase"] == "saturation") & (ok["submission"] == "per_task")]
    for system in ("local", "pull", "push"):
        f = sat[sat["system"] == system]
        if len(f):
            best = f.loc[f["median_throughput_tasks_per_sec"].idxmax()]
            lines.append(f"- {NAMES[system]}: {fmt_num(best['median_throughput_tasks_per_sec'])} no-op tasks/s "
                         f"through the gateway, one request per task, at {int(best['workers'])} workers (the seed: "
                         f"{fmt_num(SEED[system]['noop'])}).")
    noop = ok[(ok["phase"] == "weak_scaling") & (ok["workload"] == "noop")]
    for system in ("push-naive", "push"):
        f = noop[noop["system"] == system].set_index("workers")
        if 1 in f.index and len(f) > 1:
            top = f.index.max()
            ratio = f.loc[top, "first_run_completion_time_sec"] / f.loc[1, "first_run_completion_time_sec"]
            per_task = ratio / top
            lines.append(f"- {NAMES[system]}: the first no-op run at {int(top)} workers took {fmt_num(ratio)}x as long "
                         f"as at 1 worker ({fmt_num(per_task)}x per task; the seed's push: 63x).")
    return join("What this run found, against the seed:", "\n".join(lines)) if lines else join("")


def report_tables(tables: dict[str, pd.DataFrame]) -> dict:
    s = tables["dispatch_summary"]
    return {"dispatch_modes_table": (modes_table(s[s["status"] == "ok"]), "dispatch: the seed's key metrics per mode"),
            "dispatch_anomaly_table": (anomaly_table(s), "dispatch: the push anomaly, no-op completion times"),
            "dispatch_saturation_table": (saturation_table(s), "dispatch: saturation throughput")}


def fragments(tables: dict[str, pd.DataFrame], machine: dict) -> dict[str, str]:
    s, runs, tasks, cells = (tables["dispatch_summary"], tables["dispatch_runs"], tables["dispatch_tasks"],
                             tables["dispatch_cells"])
    writers = {"modes": modes, "latency": latency, "scaling": scaling,
               "anomaly": lambda ok, m: anomaly(ok, m, runs, tasks),
               "saturation": saturation, "summary": lambda ok, m: summary(ok, m, runs)}
    return {"setup": setup(cells, s, machine), **findings(s[s["status"] == "ok"], machine, writers)}
