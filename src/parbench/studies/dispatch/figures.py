"""The dispatch figures, from the study's tables (`dispatch_summary`, `dispatch_runs`,
`dispatch_tasks`, `dispatch_depth`) and the machine record. Runs whose checks failed
and peers that could not run are not drawn. The main figures draw the main sweep; the
dose-response and the order figures draw the push anomaly's experiments beside it."""

from __future__ import annotations

import altair as alt
import pandas as pd

from parbench.figures import note, ok_rows
from parbench.studies.dispatch.aggregate import main_only, previous_count
from parbench.studies.dispatch.plan import MAIN, SYSTEMS

COLORS = ["#4c78a8", "#72b7b2", "#54a24b", "#e45756", "#444444", "#f58518", "#b279a2", "#9d755d"]
SYSTEM_COLOR = alt.Color("system:N", title="system", sort=list(SYSTEMS),
                         scale=alt.Scale(domain=list(SYSTEMS), range=COLORS))
WORKLOAD_TITLES = {"noop": "no-op", "cpu": "CPU (1000-iteration loop)", "io": "I/O (100 ms sleep)"}
STAGES = [("waiting to be dispatched", "submitted_ms", "first_dispatched_ms", "#bab0ac"),
          ("sent to a worker that is gone", "first_dispatched_ms", "dispatched_ms", "#e45756"),
          ("in transit to a process", "dispatched_ms", "started_ms", "#f58518"),
          ("running", "started_ms", "finished_ms", "#54a24b"),
          ("result on its way to the client", "finished_ms", "seen_ms", "#4c78a8")]


def _workers_axis(frame: pd.DataFrame) -> alt.X:
    workers = sorted(frame["workers"].unique().tolist())
    return alt.X("workers:Q", title="workers", scale=alt.Scale(type="log", base=2, domain=[min(workers), max(workers)]),
                 axis=alt.Axis(values=workers, format="d"))


def _facet_workload(chart, title: str):
    return (chart.facet(column=alt.Column("workload_title:N", title=None,
                                          sort=[WORKLOAD_TITLES[w] for w in WORKLOAD_TITLES]))
            .resolve_scale(y="independent").properties(title=title))


def local_note(machine: dict) -> str:
    """What a figure of every mode must say when local mode ran fewer processes per worker."""
    dc = (machine or {}).get("config", {}).get("dispatch", {})
    local, others = dc.get("local_processes_per_worker"), dc.get("processes_per_worker")
    if local and others and local != others:
        return f" (local mode: {local} process(es) per worker, the others {others})"
    return ""


def throughput(summary: pd.DataFrame, machine: dict) -> alt.Chart:
    summary = main_only(summary)
    s = ok_rows(summary[summary["phase"] == "weak_scaling"])
    if s.empty:
        return note("Throughput", "no weak-scaling run passed its checks")
    s["workload_title"] = s["workload"].map(WORKLOAD_TITLES)
    base = alt.Chart(s).encode(x=_workers_axis(s), color=SYSTEM_COLOR)
    lines = base.mark_line(point=True).encode(
        y=alt.Y("median_throughput_tasks_per_sec:Q", title="tasks/s (median of repetitions)",
                scale=alt.Scale(type="log")),
        tooltip=["system", "workload", "workers", "repetitions",
                 alt.Tooltip("median_throughput_tasks_per_sec:Q", format=",.1f"),
                 alt.Tooltip("median_throughput_tasks_per_sec_ci_low:Q", title="95% CI low", format=",.1f"),
                 alt.Tooltip("median_throughput_tasks_per_sec_ci_high:Q", title="95% CI high", format=",.1f")])
    # the 95% bootstrap interval of the median (none with a single repetition)
    bars = base.transform_filter("isValid(datum.median_throughput_tasks_per_sec_ci_low)").mark_errorbar().encode(
        y=alt.Y("median_throughput_tasks_per_sec_ci_low:Q", title="tasks/s (median of repetitions)"),
        y2="median_throughput_tasks_per_sec_ci_high:Q")
    return _facet_workload(alt.layer(bars, lines).properties(width=230, height=220),
                           "Weak scaling: throughput against workers (median of repetitions, 95% bootstrap "
                           "interval bars; log scales)" + local_note(machine))


def weak_scaling(runs: pd.DataFrame, machine: dict) -> alt.Chart:
    runs = main_only(runs)
    r = ok_rows(runs[runs["phase"] == "weak_scaling"]).dropna(subset=["completion_time_sec"])
    if r.empty:
        return note("Weak scaling", "no weak-scaling run passed its checks")
    r["workload_title"] = r["workload"].map(WORKLOAD_TITLES)
    r["run"] = r["first_after_change"].map({True: "first after the workers changed", False: "later repetitions"})
    r = r[["system", "workload", "workload_title", "workers", "rep", "repetition", "run", "completion_time_sec",
           "stale_workers", "requeued_tasks"]]
    line = alt.Chart(r).mark_line().encode(
        x=_workers_axis(r), y=alt.Y("median(completion_time_sec):Q", title="completion time, s (log)",
                                    scale=alt.Scale(type="log")),
        color=SYSTEM_COLOR)
    points = alt.Chart(r).mark_point(filled=True, size=45, opacity=0.8).encode(
        x=_workers_axis(r), y=alt.Y("completion_time_sec:Q", title="completion time, s (log)"), color=SYSTEM_COLOR,
        shape=alt.Shape("run:N", title="run", sort=["first after the workers changed", "later repetitions"],
                        scale=alt.Scale(range=["diamond", "circle"])),
        tooltip=["system", "workload", "workers", "rep", "repetition", "run",
                 alt.Tooltip("completion_time_sec:Q", format=".4f"), "stale_workers", "requeued_tasks"])
    return _facet_workload(alt.layer(line, points).properties(width=230, height=230),
                           "Weak scaling: completion time of every run of every repetition against workers "
                           "(line: median)")


def latency(tasks: pd.DataFrame, machine: dict) -> alt.Chart:
    tasks = main_only(tasks)
    t = tasks[(tasks["phase"] == "weak_scaling") & (tasks["correct"] == True)].dropna(subset=["latency_ms"])  # noqa: E712
    if t.empty:
        return note("Latency", "no task latencies in this run")
    top = t[t["workers"] == t["workers"].max()].copy()
    top = top.sort_values("latency_ms")
    top["fraction"] = top.groupby(["system", "workload"]).cumcount() + 1
    top["fraction"] = top["fraction"] / top.groupby(["system", "workload"])["latency_ms"].transform("count")
    top["workload_title"] = top["workload"].map(WORKLOAD_TITLES)
    chart = alt.Chart(top[["system", "workload", "workload_title", "latency_ms", "fraction"]]).mark_line(
        interpolate="step-after").encode(
        x=alt.X("latency_ms:Q", title="latency, ms (submission to result seen; log)", scale=alt.Scale(type="log")),
        y=alt.Y("fraction:Q", title="fraction of tasks", scale=alt.Scale(domain=[0, 1])),
        color=SYSTEM_COLOR, tooltip=["system", "workload", alt.Tooltip("latency_ms:Q", format=".2f"),
                                     alt.Tooltip("fraction:Q", format=".2f")])
    return _facet_workload(chart.properties(width=230, height=220),
                           f"Latency ECDF at {int(top['workers'].max())} workers, every repetition's tasks")


def anomaly_run(runs: pd.DataFrame, system: str) -> pd.Series | None:
    """The run the anomaly figure shows for a system: its first no-op run after the
    workers changed to the largest count (the seed's worst case), in the repetition
    whose run took the median time (the slower of the middle two)."""
    r = ok_rows(runs[(runs["system"] == system) & (runs["phase"] == "weak_scaling") & (runs["workload"] == "noop")
                     & (runs["first_after_change"] == True)])  # noqa: E712
    if r.empty:
        return None
    top = r[r["workers"] == r["workers"].max()].sort_values("completion_time_sec").reset_index(drop=True)
    return top.iloc[len(top) // 2]


def anomaly(tasks: pd.DataFrame, depth: pd.DataFrame, runs: pd.DataFrame, machine: dict) -> alt.Chart:
    tasks, depth, runs = main_only(tasks), main_only(depth), main_only(runs)
    panels = []
    for system in ("push-naive", "push"):
        run = anomaly_run(runs, system)
        if run is None:
            continue
        t = tasks[(tasks["system"] == system) & (tasks["rep"] == run["rep"])
                  & (tasks["run_index"] == run["run_index"])].copy()
        t = t.sort_values("submitted_ms").reset_index(drop=True)
        t["task"] = t.index + 1
        segments = []
        for name, start, end, _ in STAGES:
            part = t[["task", "worker", "attempts", start, end]].dropna().rename(columns={start: "from_ms", end: "to_ms"})
            part = part[part["to_ms"] > part["from_ms"]]
            if name == "sent to a worker that is gone":
                part = part[t.loc[part.index, "attempts"] > 1]
            part["stage"] = name
            segments.append(part)
        seg = pd.concat(segments, ignore_index=True)
        title = (f"{system}: the first no-op run after the change to {int(run['workers'])} workers, rep "
                 f"{int(run['rep']) + 1} "
                 f"({run['completion_time_sec']:.3f} s; {int(run['stale_workers'] or 0)} stale worker(s) "
                 f"registered, {int(run['requeued_tasks'] or 0)} task(s) dispatched again)")
        x = alt.X("from_ms:Q", title="ms since the run's first submission")
        bars = alt.Chart(seg).mark_bar(height=5).encode(
            x=x, x2="to_ms:Q", y=alt.Y("task:O", title="task (in submission order)", axis=alt.Axis(labels=False, ticks=False)),
            color=alt.Color("stage:N", title="stage", sort=[s[0] for s in STAGES],
                            scale=alt.Scale(domain=[s[0] for s in STAGES], range=[s[3] for s in STAGES])),
            tooltip=["task", "stage", "worker", "attempts", alt.Tooltip("from_ms:Q", format=".2f"),
                     alt.Tooltip("to_ms:Q", format=".2f")]).properties(width=620, height=max(120, 7 * len(t)),
                                                                        title=title)
        d = depth[(depth["system"] == system) & (depth["rep"] == run["rep"]) & (depth["run_index"] == run["run_index"])]
        if len(d):
            held = alt.Chart(d).mark_line(interpolate="step-after", point=True).encode(
                x=alt.X("t_ms:Q", title="ms since the run's first submission",
                        scale=alt.Scale(domain=[0, float(seg["to_ms"].max()) if len(seg) else 1])),
                y=alt.Y("tasks_held:Q", title="tasks held"),
                color=alt.Color("worker:N", title="worker", legend=None),
                tooltip=["worker", alt.Tooltip("t_ms:Q", format=".2f"), "tasks_held"]).properties(
                width=620, height=90, title=f"{system}: tasks each worker holds (sent, not yet returned)")
            panels.append(alt.vconcat(bars, held).resolve_scale(color="independent"))
        else:
            panels.append(bars)
    if not panels:
        return note("The push anomaly", "no push or push-naive run in this run")
    return alt.vconcat(*panels).resolve_scale(color="independent").properties(
        title="Where the time goes: each task's stages, and each worker's queue depth")


def saturation(summary: pd.DataFrame, machine: dict) -> alt.Chart:
    summary = main_only(summary)
    s = ok_rows(summary[summary["phase"] == "saturation"])
    if s.empty:
        return note("Saturation", "no saturation run in this run")
    s["submission_title"] = s["submission"].map({"per_task": "one request (call) per task", "batch": "batched"})
    s["label"] = s["system"] + " x" + s["workers"].astype(str)
    s = s[["label", "system", "workers", "submission", "submission_title", "tasks_per_run", "repetitions",
           "median_throughput_tasks_per_sec", "median_throughput_tasks_per_sec_ci_low",
           "median_throughput_tasks_per_sec_ci_high"]]
    order = list(dict.fromkeys(s["label"]))
    y = alt.Y("label:N", title=None, sort=order)
    x_scale = alt.Scale(type="log")
    # a dot per median (bars cannot start at zero on a log scale), its 95% bootstrap
    # interval as a rule (none with a single repetition)
    dots = alt.Chart(s).mark_point(filled=True, size=90).encode(
        y=y, yOffset=alt.YOffset("submission_title:N"),
        x=alt.X("median_throughput_tasks_per_sec:Q", title="no-op tasks/s (median of repetitions, 95% interval; log)",
                scale=x_scale),
        color=alt.Color("submission_title:N", title="submission", scale=alt.Scale(range=["#f58518", "#4c78a8"])),
        tooltip=["system", "workers", "submission", "tasks_per_run", "repetitions",
                 alt.Tooltip("median_throughput_tasks_per_sec:Q", format=",.0f"),
                 alt.Tooltip("median_throughput_tasks_per_sec_ci_low:Q", title="95% CI low", format=",.0f"),
                 alt.Tooltip("median_throughput_tasks_per_sec_ci_high:Q", title="95% CI high", format=",.0f")])
    spread = alt.Chart(s).transform_filter("isValid(datum.median_throughput_tasks_per_sec_ci_low)").mark_rule(
        strokeWidth=2).encode(
        y=y, yOffset=alt.YOffset("submission_title:N"),
        x=alt.X("median_throughput_tasks_per_sec_ci_low:Q", scale=x_scale),
        x2="median_throughput_tasks_per_sec_ci_high:Q", color=alt.Color("submission_title:N"))
    tasks = int(s["tasks_per_run"].max())
    return alt.layer(spread, dots).properties(
        width=520, height=alt.Step(16),
        title=f"Saturation: {tasks:,} no-op tasks, peak throughput per system and worker count")


def after_change(runs: pd.DataFrame, system: str | None = None) -> pd.DataFrame:
    """Weak-scaling runs of the modes with heartbeats at every worker count after a
    cell's first, with the count before (`from_workers`)."""
    r = ok_rows(runs[(runs["phase"] == "weak_scaling")])
    if "expiry_sec" not in r or "stall_sec" not in r:
        return r.iloc[0:0]
    r = r[r["expiry_sec"].notna()]
    if system is not None:
        r = r[r["system"] == system]
    r = r.sort_values("run_index")
    r["from_workers"] = r.groupby(["experiment", "system", "rep"])["workers"].transform(previous_count)
    r = r[r["from_workers"].notna()].copy()
    r["change"] = r["from_workers"].astype(int).astype(str) + " → " + r["workers"].astype(int).astype(str) + " workers"
    return r


def dose_response(runs: pd.DataFrame, machine: dict) -> alt.Chart:
    r = after_change(runs, "push-naive")
    r = r[(r["first_after_change"] == True)  # noqa: E712
          & r["experiment"].map(lambda e: e == MAIN or str(e).startswith("expiry-")).astype(bool)]
    r = r.dropna(subset=["stall_sec"])
    if r.empty:
        return note("Dose-response", "no push-naive first run after a change of workers in this run")
    r = r[["experiment", "rep", "change", "workers", "expiry_sec", "heartbeat_interval_sec", "completion_time_sec",
           "stall_sec", "predicted_stall_sec", "stale_workers", "stale_lag_sec"]].copy()
    r["check_sec"] = r["predicted_stall_sec"] + r["heartbeat_interval_sec"] / 4
    changes = sorted(r["change"].unique(), key=lambda c: int(c.split()[0]))
    color = alt.Color("change:N", title="change of workers", sort=changes)
    tooltip = ["experiment", "rep", "change", alt.Tooltip("expiry_sec:Q", title="expiry, s"),
               alt.Tooltip("completion_time_sec:Q", format=".3f"), alt.Tooltip("stall_sec:Q", format=".3f"),
               alt.Tooltip("predicted_stall_sec:Q", format=".3f"), "stale_workers",
               alt.Tooltip("stale_lag_sec:Q", format=".3f")]
    x = alt.X("expiry_sec:Q", title="heartbeat expiry (interval x liveness), s", scale=alt.Scale(zero=True))
    points = alt.Chart(r).mark_circle(size=55, opacity=0.8).encode(
        x=x, y=alt.Y("completion_time_sec:Q", title="first run after the change: completion time, s"),
        color=color, tooltip=tooltip)
    line = alt.Chart(r).mark_line().encode(x=x, y="median(completion_time_sec):Q", color=color)
    left = alt.layer(line, points).properties(width=300, height=260, title="The cliff against the expiry")
    top = float(max(r["stall_sec"].max(), r["check_sec"].max(), 0.1))
    diagonal = alt.Chart(pd.DataFrame({"a": [0.0, top], "b": [0.0, top]})).mark_line(
        color="#888", strokeDash=[4, 3]).encode(x="a:Q", y="b:Q")
    band = alt.Chart(r).mark_rule(strokeWidth=6, opacity=0.25).encode(
        x=alt.X("predicted_stall_sec:Q", title="predicted stall, s (the stale workers' heartbeats lapse)"),
        y="predicted_stall_sec:Q", y2="check_sec:Q", color=color)
    measured = alt.Chart(r).mark_point(filled=True, size=55, shape="diamond").encode(
        x="predicted_stall_sec:Q",
        y=alt.Y("stall_sec:Q", title="measured stall, s (a task's first to last dispatch)"),
        color=color, tooltip=tooltip)
    right = alt.layer(diagonal, band, measured).properties(width=300, height=260,
                                                           title="Measured against predicted, run by run")
    return alt.hconcat(left, right).properties(
        title="push-naive: the first run after a change of workers at each heartbeat expiry")


def order_figure(runs: pd.DataFrame, machine: dict) -> alt.Chart:
    r = after_change(runs, "push-naive")
    r = r[r["experiment"].map(lambda e: e == MAIN or str(e).startswith("order-")).astype(bool)]
    r = r.dropna(subset=["stall_sec"])
    if r.empty or r["workload_order"].nunique() < 2:
        return note("Order", "no second order of the workloads in this run")
    first = r.groupby("experiment")["workers"].transform("min")
    r = r[r["workers"] == first].copy()
    r["order"] = r["workload_order"].str.replace(",", ", ")
    r["workload_title"] = r["workload"].map({"noop": "no-op", "cpu": "CPU", "io": "I/O"})
    r["run"] = r["first_after_change"].map({True: "first after the change", False: "later"})
    r = r[["experiment", "order", "workload", "workload_title", "run", "rep", "change", "stall_sec",
           "completion_time_sec", "stale_workers"]]
    sort = ["no-op", "CPU", "I/O"]
    main_order = set(r.loc[r["experiment"] == MAIN, "order"])
    orders = sorted(r["order"].unique(), key=lambda o: (o not in main_order, o))  # the main order first
    base = alt.Chart(r).encode(x=alt.X("workload_title:N", title=None, sort=sort, axis=alt.Axis(labelAngle=0)))
    bars = base.mark_bar(opacity=0.35).encode(
        y=alt.Y("median(stall_sec):Q", title="stall, s (a task's first to last dispatch)"),
        color=alt.Color("run:N", title="run", sort=["first after the change", "later"],
                        scale=alt.Scale(range=["#e45756", "#4c78a8"])))
    dots = base.mark_circle(size=50).encode(
        y="stall_sec:Q", color=alt.Color("run:N"),
        tooltip=["order", "workload", "run", "rep", "change", alt.Tooltip("stall_sec:Q", format=".3f"),
                 alt.Tooltip("completion_time_sec:Q", format=".3f"), "stale_workers"])
    return (alt.layer(bars, dots).properties(width=200, height=240)
            .facet(column=alt.Column("order:N", title="workloads in the order", sort=orders))
            .properties(title=f"push-naive, {r['change'].iloc[0]}: the stall follows whichever workload runs first"))


# name -> (function, the tables it draws from)
FIGURES = {
    "dispatch_throughput": (throughput, ["dispatch_summary"]),
    "dispatch_latency": (latency, ["dispatch_tasks"]),
    "dispatch_weak_scaling": (weak_scaling, ["dispatch_runs"]),
    "dispatch_anomaly": (anomaly, ["dispatch_tasks", "dispatch_depth", "dispatch_runs"]),
    "dispatch_dose_response": (dose_response, ["dispatch_runs"]),
    "dispatch_order": (order_figure, ["dispatch_runs"]),
    "dispatch_saturation": (saturation, ["dispatch_summary"]),
}
