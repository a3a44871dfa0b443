"""The dispatch figures, from the study's tables (`dispatch_summary`, `dispatch_runs`,
`dispatch_tasks`, `dispatch_depth`) and the machine record. Runs whose checks failed
and peers that could not run are not drawn. The main figures draw the main sweep; the
dose-response and the order figures draw the push anomaly's experiments beside it.

Each figure's data comes from a `<figure>_data` function, which the paper module also
asks whether the figure draws anything (a figure without data is a sentence instead).
Legends list only the systems drawn, each in its fixed colour; every faceted mark carries
its panel's workload in its tooltip; a point whose repetition stayed disturbed (the
machine busy elsewhere) is marked with a red diamond; log axes reach a little past the
values they draw (`parbench.figures.padded_log_scale`)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from parbench.figures import (PANEL_END_PX, count_axis, disturbed_layer, note, ok_rows, padded_log_scale, palette_scale,
                              panel_log_scale, present)
from parbench.paper.format import counted
from parbench.studies.dispatch.aggregate import main_only, previous_count
from parbench.studies.dispatch.plan import MAIN, SYSTEMS

COLORS = dict(zip(SYSTEMS, ["#4c78a8", "#72b7b2", "#54a24b", "#e45756", "#444444", "#f58518", "#b279a2", "#9d755d"]))
WORKLOAD_ORDER = ["noop", "cpu", "io"]


# A workload's panel, three side by side: at 230 px the figures were up to 1,086 px wide,
# which the PDF shrinks to the text's width, their labels under 5 pt.
PANEL_WIDTH = 180


def system_color(frame: pd.DataFrame) -> alt.Color:
    """The systems `frame` draws, each in its colour: the legend lists no other."""
    return alt.Color("system:N", title="system", sort=present(frame, "system", list(SYSTEMS)),
                     scale=palette_scale(frame, "system", list(SYSTEMS), COLORS))


# the workloads as the paper, its tables and its figures name them
WORKLOAD_NAMES = {"noop": "no-op", "cpu": "CPU", "io": "I/O"}
# Seconds of dispatching a measured stall may take beyond its prediction and the
# dispatcher's check (`prediction_top`).
DISPATCHING_SEC = 0.05


def prediction_top(predicted, heartbeat_interval):
    """The longest stall still "as predicted": the prediction, the dispatcher's check (a
    quarter heartbeat interval) and `DISPATCHING_SEC`; the verdict and Figure 18's bar both."""
    return predicted + heartbeat_interval / 4 + DISPATCHING_SEC


def order_words(workload_order) -> str:
    """An order of the workloads (`noop,cpu,io`) in those names: "no-op, CPU, I/O"."""
    return ", ".join(WORKLOAD_NAMES.get(w, w) for w in str(workload_order).split(","))


def workload_titles(machine: dict) -> dict[str, str]:
    """Each workload's panel title, with what it did in this run (its config)."""
    dc = (machine or {}).get("config", {}).get("dispatch", {})
    cpu, io = dc.get("cpu_iterations"), dc.get("io_sleep_sec")
    names = WORKLOAD_NAMES
    return {"noop": names["noop"],
            "cpu": f"{names['cpu']} ({cpu:,}-iteration loop)" if cpu else names["cpu"],
            "io": f"{names['io']} ({1000 * io:g} ms sleep)" if io else names["io"]}


def log_scale(values, panel_height: int | None = None, **options) -> tuple[alt.Scale, alt.Axis]:
    """A padded log scale over `values` and its axis, numbers with thousands separators
    and a grid (`options`: more of `padded_log_scale`'s and the axis's); with
    `panel_height`, for one of the panels `_panels` sets side by side, that high
    (`figures.panel_log_scale`: titles level, numbers apart)."""
    values = [v for v in values if not pd.isna(v)]
    if panel_height:
        return panel_log_scale(values, ",~g", height=panel_height, grid=True, **options)
    return padded_log_scale(values, ",~g", grid=True, **options)


STAGES = [("waiting to be dispatched", "submitted_ms", "first_dispatched_ms", "#bab0ac"),
          ("sent to a worker that is gone", "first_dispatched_ms", "dispatched_ms", "#e45756"),
          ("in transit to a process", "dispatched_ms", "started_ms", "#f58518"),
          ("running", "started_ms", "finished_ms", "#54a24b"),
          ("result on its way to the client", "finished_ms", "seen_ms", "#4c78a8")]


def _workers_axis(frame: pd.DataFrame) -> alt.X:
    return count_axis("workers", frame["workers"].unique().tolist(), "workers", log2=True)


def _facet_workload(chart, title: str, frame: pd.DataFrame, machine: dict):
    """Panels per workload, in the seed's order; the marks carry `workload_title`."""
    titles = workload_titles(machine)
    order = [titles[w] for w in WORKLOAD_ORDER if w in set(frame["workload"])]
    return (chart.facet(column=alt.Column("workload_title:N", title=None, sort=order))
            .resolve_scale(y="independent").properties(title=title))


def _panels(draw, frame: pd.DataFrame, title: str, machine: dict) -> alt.HConcatChart:
    """A panel per workload, in the seed's order, side by side: `draw(rows)` draws one
    from its workload's rows, on a log axis of its own. (A facet's panels share one list
    of tick values: the I/O panel's fine ticks, a few percent apart, crowded the no-op
    panel's decades with lines and numbers.) The marks carry `workload_title`."""
    titles = workload_titles(machine)
    header = {"fontSize": 11, "fontWeight": "normal", "anchor": "middle"}
    return alt.hconcat(*(draw(frame[frame["workload"] == w]).properties(title=alt.TitleParams(titles[w], **header))
                         for w in WORKLOAD_ORDER if w in set(frame["workload"]))).properties(title=title)


def local_note(machine: dict) -> str:
    """What a figure of every mode must say when local mode ran fewer processes per worker."""
    dc = (machine or {}).get("config", {}).get("dispatch", {})
    local, others = dc.get("local_processes_per_worker"), dc.get("processes_per_worker")
    if local and others and local != others:
        return f" (local mode: {counted(local, 'process', 'processes')} per worker, the others {others})"
    return ""


def _disturbed(frame: pd.DataFrame) -> pd.DataFrame:
    """`disturbed_reps` as a number (0 where a table from before loads were recorded has none)."""
    frame = frame.copy()
    frame["disturbed_reps"] = frame["disturbed_reps"].fillna(0).astype(int) if "disturbed_reps" in frame else 0
    return frame


def phase_rows(summary: pd.DataFrame, phase: str) -> pd.DataFrame:
    """The main sweep's rows of one phase that passed and have a throughput."""
    summary = main_only(summary)
    return ok_rows(summary[summary["phase"] == phase]).dropna(subset=["median_throughput_tasks_per_sec"])


def throughput_data(summary: pd.DataFrame) -> pd.DataFrame:
    """The main sweep's weak-scaling rows that passed: what `throughput` draws."""
    return phase_rows(summary, "weak_scaling")


def throughput(summary: pd.DataFrame, machine: dict) -> alt.Chart:
    s = _disturbed(throughput_data(summary))
    if s.empty:
        return note("Throughput", "no weak-scaling run passed its checks")
    s["workload_title"] = s["workload"].map(workload_titles(machine))
    y_title = "tasks/s (median of repetitions; log)"
    median, low, high = ("median_throughput_tasks_per_sec", "median_throughput_tasks_per_sec_ci_low",
                         "median_throughput_tasks_per_sec_ci_high")

    height = 220

    def panel(rows: pd.DataFrame) -> alt.LayerChart:
        scale, axis = log_scale(pd.concat([rows[median], rows[low], rows[high]]), panel_height=height)
        base = alt.Chart(rows).encode(x=_workers_axis(s), color=system_color(s))
        lines = base.mark_line(point=True).encode(
            y=alt.Y(f"{median}:Q", title=y_title, scale=scale, axis=axis),
            tooltip=["system", "workload_title", "workers", "repetitions", "disturbed_reps",
                     alt.Tooltip(f"{median}:Q", format=",.1f"),
                     alt.Tooltip(f"{low}:Q", title="95% CI low", format=",.1f"),
                     alt.Tooltip(f"{high}:Q", title="95% CI high", format=",.1f")])
        # the 95% bootstrap interval of the median (none with a single repetition)
        bars = base.transform_filter(f"isValid(datum.{low})").mark_errorbar().encode(
            y=alt.Y(f"{low}:Q", title=y_title), y2=f"{high}:Q")
        # the diamonds' own colour: a chart without the system colour encoding (which would win)
        marked = disturbed_layer(alt.Chart(rows).encode(
            x=_workers_axis(s), y=f"{median}:Q", tooltip=["system", "workload_title", "workers", "disturbed_reps"]),
            rows)
        return alt.layer(bars, lines, *marked).properties(width=PANEL_WIDTH, height=height)

    return _panels(panel, s, "Weak scaling: throughput against workers (median of repetitions, 95% bootstrap "
                              "interval bars; log scales)" + local_note(machine), machine)


def weak_scaling_data(runs: pd.DataFrame) -> pd.DataFrame:
    """The main sweep's weak-scaling runs that passed: what `weak_scaling` draws."""
    runs = main_only(runs)
    return ok_rows(runs[runs["phase"] == "weak_scaling"]).dropna(subset=["completion_time_sec"])


RUN_KINDS = ["first after the workers changed", "later runs"]


def weak_scaling(runs: pd.DataFrame, machine: dict) -> alt.Chart:
    r = weak_scaling_data(runs)
    if r.empty:
        return note("Weak scaling", "no weak-scaling run passed its checks")
    r["workload_title"] = r["workload"].map(workload_titles(machine))
    r["run"] = r["first_after_change"].map({True: RUN_KINDS[0], False: RUN_KINDS[1]})
    r["disturbed"] = r["disturbed"].fillna(False).astype(bool).astype(int) if "disturbed" in r else 0
    r = r[["system", "workload", "workload_title", "workers", "rep", "repetition", "run", "completion_time_sec",
           "stale_workers", "requeued_tasks", "disturbed"]]
    y_title = "completion time, s (log)"
    shape = alt.Shape("run:N", title="run", sort=present(r, "run", RUN_KINDS),
                      scale=palette_scale(r, "run", RUN_KINDS, dict(zip(RUN_KINDS, ["diamond", "circle"]))))

    height = 230

    def panel(rows: pd.DataFrame) -> alt.LayerChart:
        scale, axis = log_scale(rows["completion_time_sec"], panel_height=height)
        line = alt.Chart(rows).mark_line().encode(
            x=_workers_axis(r), y=alt.Y("median(completion_time_sec):Q", title=y_title, scale=scale, axis=axis),
            color=system_color(r))
        points = alt.Chart(rows).mark_point(filled=True, size=45, opacity=0.8).encode(
            x=_workers_axis(r), y=alt.Y("completion_time_sec:Q", title=y_title), color=system_color(r), shape=shape,
            tooltip=["system", "workload_title", "workers", "rep", "repetition", "run",
                     alt.Tooltip("completion_time_sec:Q", format=".4f"), "stale_workers", "requeued_tasks",
                     "disturbed"])
        marked = disturbed_layer(alt.Chart(rows).encode(
            x=_workers_axis(r), y="completion_time_sec:Q",
            tooltip=["system", "workload_title", "workers", "rep", "disturbed"]), rows, "disturbed")
        return alt.layer(line, points, *marked).properties(width=PANEL_WIDTH, height=height)

    return _panels(panel, r, "Weak scaling: completion time of every run of every repetition against workers "
                             "(line: median)", machine)


def latency_data(tasks: pd.DataFrame) -> pd.DataFrame:
    """The correct tasks of the main sweep's weak-scaling runs at its largest worker
    count: what `latency` draws."""
    tasks = main_only(tasks)
    t = tasks[(tasks["phase"] == "weak_scaling") & (tasks["correct"] == True)].dropna(subset=["latency_ms"])  # noqa: E712
    if "cell_status" in t:
        t = t[t["cell_status"] == "ok"]
    return t[t["workers"] == t["workers"].max()].copy() if len(t) else t


def latency(tasks: pd.DataFrame, machine: dict) -> alt.Chart:
    top = latency_data(tasks)
    if top.empty:
        return note("Latency", "no task latencies in this run")
    top = top.sort_values("latency_ms")
    top["fraction"] = top.groupby(["system", "workload"]).cumcount() + 1
    top["fraction"] = top["fraction"] / top.groupby(["system", "workload"])["latency_ms"].transform("count")
    top["workload_title"] = top["workload"].map(workload_titles(machine))
    # numbered at the powers of ten only, the last one centred on its tick: four decades
    # and more on a 180 px panel leave no room for 3s, and a flush last number crowded
    # its neighbour out
    x_scale, x_axis = log_scale(top["latency_ms"], mantissas=(1,), labelFlush=False)
    chart = alt.Chart(top[["system", "workload", "workload_title", "latency_ms", "fraction"]]).mark_line(
        interpolate="step-after").encode(
        x=alt.X("latency_ms:Q", title="latency, ms (submission to result seen; log)",
                scale=x_scale, axis=x_axis),
        y=alt.Y("fraction:Q", title="fraction of tasks", scale=alt.Scale(domain=[0, 1])),
        color=system_color(top), tooltip=["system", "workload_title", alt.Tooltip("latency_ms:Q", format=".2f"),
                                          alt.Tooltip("fraction:Q", format=".2f")])
    return _facet_workload(chart.properties(width=PANEL_WIDTH, height=220),
                           f"Latency ECDF at {int(top['workers'].max())} workers, every repetition's tasks", top,
                           machine)


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


def _repetitions(runs: pd.DataFrame, system: str) -> int:
    """How many repetitions of a system's main sweep ran (its runs' `rep` counts from 0)."""
    return int(main_only(runs).loc[lambda r: r["system"] == system, "rep"].nunique())


def anomaly_segments(tasks: pd.DataFrame, run: pd.Series, system: str) -> pd.DataFrame:
    """The stages of every task of one run (a bar each: task, stage, from, to); empty when
    its tasks carry no stage times (peers)."""
    t = tasks[(tasks["system"] == system) & (tasks["rep"] == run["rep"])
              & (tasks["run_index"] == run["run_index"])].copy()
    t = t.sort_values("submitted_ms").reset_index(drop=True)
    t["task"] = t.index + 1
    segments = []
    for name, start, end, _ in STAGES:
        part = t[["task", "worker", "attempts", start, end]].dropna(subset=[start, end]).rename(
            columns={start: "from_ms", end: "to_ms"})
        part = part[part["to_ms"] > part["from_ms"]]
        if name == "sent to a worker that is gone":
            part = part[t.loc[part.index, "attempts"] > 1]
        part["stage"] = name
        segments.append(part)
    return pd.concat(segments, ignore_index=True)


def anomaly_data(tasks: pd.DataFrame, runs: pd.DataFrame) -> dict[str, tuple[pd.Series, pd.DataFrame]]:
    """For push-naive and for push (those of the main sweep with a run whose tasks carry
    stage times): the run `anomaly` draws and its tasks' stages."""
    runs, tasks = main_only(runs), main_only(tasks)
    out = {}
    for system in ("push-naive", "push"):
        run = anomaly_run(runs, system)
        if run is None:
            continue
        seg = anomaly_segments(tasks, run, system)
        if not seg.empty:
            out[system] = (run, seg)
    return out


def anomaly(tasks: pd.DataFrame, depth: pd.DataFrame, runs: pd.DataFrame, machine: dict) -> alt.Chart:
    depth = main_only(depth)
    panels = []
    for system, (run, seg) in anomaly_data(tasks, runs).items():
        disturbed = ["(a repetition that stayed disturbed)"] if bool(run.get("disturbed", False)) else []
        # a line each, none wider than the panel: a title wider than it widens the figure,
        # which the PDF then shrinks below legible type
        title = [f"{system}: the first no-op run after the change to {int(run['workers'])} workers, "
                 f"repetition {int(run['rep']) + 1} of {_repetitions(runs, system)}", *disturbed,
                 f"({run['completion_time_sec']:.3f} s; {counted(int(run['stale_workers'] or 0), 'stale worker')} "
                 f"registered, {counted(int(run['requeued_tasks'] or 0), 'task')} dispatched again)"]
        # one time axis for the tasks and the queue depths below them, from 0 to the last
        # result (Vega's nice end drew the tasks on 0 to 2,800 ms, the depths on 0 to 2,688)
        span = alt.Scale(domain=[0, float(seg["to_ms"].max()) if len(seg) else 1], nice=False)
        x = alt.X("from_ms:Q", title="ms since the run's first submission", scale=span)
        # this panel's legend: only the stages its tasks went through
        drawn = [st for st in STAGES if st[0] in set(seg["stage"])]
        bars = alt.Chart(seg).mark_bar(height=5).encode(
            x=x, x2="to_ms:Q", y=alt.Y("task:O", title="task (in submission order)", axis=alt.Axis(labels=False, ticks=False)),
            color=alt.Color("stage:N", title="stage", sort=[st[0] for st in drawn],
                            scale=alt.Scale(domain=[st[0] for st in drawn], range=[st[3] for st in drawn])),
            tooltip=["task", "stage", "worker", "attempts", alt.Tooltip("from_ms:Q", format=".2f"),
                     alt.Tooltip("to_ms:Q", format=".2f")])
        # a tick where each task's time ends: a task of a few milliseconds is a sliver on
        # an axis of seconds, its tick still shows
        ends = alt.Chart(seg.groupby("task", as_index=False)["to_ms"].max()).mark_tick(
            color="black", thickness=1.5, size=7).encode(
            x="to_ms:Q", y="task:O", tooltip=["task", alt.Tooltip("to_ms:Q", title="result seen, ms", format=".2f")])
        bars = alt.layer(bars, ends).properties(width=620, height=max(120, 7 * seg["task"].nunique()), title=title)
        d = depth[(depth["system"] == system) & (depth["rep"] == run["rep"]) & (depth["run_index"] == run["run_index"])]
        if len(d):
            # a dash per worker, in black: the default colours were the stages' above (the
            # points are a layer of their own: as the line's overlay, they hid its legend)
            depth_base = alt.Chart(d).encode(
                x=alt.X("t_ms:Q", title="ms since the run's first submission", scale=span),
                y=alt.Y("tasks_held:Q", title="tasks held"),
                tooltip=["worker", alt.Tooltip("t_ms:Q", format=".2f"), "tasks_held"])
            held = alt.layer(
                depth_base.mark_line(interpolate="step-after", color="#333333").encode(
                    strokeDash=alt.StrokeDash("worker:N", title="worker", legend=alt.Legend(
                        symbolType="stroke", symbolStrokeColor="#333333", symbolStrokeWidth=2, symbolSize=300))),
                depth_base.mark_point(filled=True, size=20, color="#333333")).properties(
                width=620, height=90, title=f"{system}: tasks each worker holds (sent, not yet returned)")
            panels.append(alt.vconcat(bars, held).resolve_scale(color="independent", strokeDash="independent"))
        else:
            panels.append(bars)
    if not panels:
        return note("The push anomaly", "no push or push-naive run in this run")
    return alt.vconcat(*panels).resolve_scale(color="independent", strokeDash="independent").properties(
        title="Where the time goes: each task's stages, and each worker's queue depth")


SUBMISSIONS = {"per_task": "one request (call) per task", "batch": "batched"}


def saturation_data(summary: pd.DataFrame) -> pd.DataFrame:
    """The main sweep's saturation rows that passed: what `saturation` draws."""
    return phase_rows(summary, "saturation")


def saturation(summary: pd.DataFrame, machine: dict) -> alt.Chart:
    s = _disturbed(saturation_data(summary))
    if s.empty:
        return note("Saturation", "no saturation run in this run")
    s["submission_title"] = s["submission"].map(SUBMISSIONS)
    s["label"] = s["system"] + " x" + s["workers"].astype(str)
    s = s[["label", "system", "workers", "submission", "submission_title", "tasks_per_run", "repetitions",
           "disturbed_reps", "median_throughput_tasks_per_sec", "median_throughput_tasks_per_sec_ci_low",
           "median_throughput_tasks_per_sec_ci_high"]]
    order = list(dict.fromkeys(s["label"]))
    y = alt.Y("label:N", title=None, sort=order)
    values = pd.concat([s["median_throughput_tasks_per_sec"], s["median_throughput_tasks_per_sec_ci_low"],
                        s["median_throughput_tasks_per_sec_ci_high"]])
    x_scale, x_axis = log_scale(values)
    drawn = present(s, "submission_title", list(SUBMISSIONS.values()))
    color = alt.Color("submission_title:N", title="submission", sort=drawn,
                      scale=palette_scale(s, "submission_title", list(SUBMISSIONS.values()),
                                          dict(zip(SUBMISSIONS.values(), ["#4c78a8", "#f58518"]))))
    # a dot per median (bars cannot start at zero on a log scale), its 95% bootstrap
    # interval as a rule (none with a single repetition)
    base = alt.Chart(s).encode(y=y, yOffset=alt.YOffset("submission_title:N", sort=drawn))
    dots = base.mark_point(filled=True, size=90).encode(
        x=alt.X("median_throughput_tasks_per_sec:Q", title="no-op tasks/s (median of repetitions, 95% interval; log)",
                scale=x_scale, axis=x_axis),
        color=color,
        tooltip=["system", "workers", "submission_title", "tasks_per_run", "repetitions", "disturbed_reps",
                 alt.Tooltip("median_throughput_tasks_per_sec:Q", format=",.0f"),
                 alt.Tooltip("median_throughput_tasks_per_sec_ci_low:Q", title="95% CI low", format=",.0f"),
                 alt.Tooltip("median_throughput_tasks_per_sec_ci_high:Q", title="95% CI high", format=",.0f")])
    spread = base.transform_filter("isValid(datum.median_throughput_tasks_per_sec_ci_low)").mark_rule(
        strokeWidth=2).encode(
        x=alt.X("median_throughput_tasks_per_sec_ci_low:Q", scale=x_scale),
        x2="median_throughput_tasks_per_sec_ci_high:Q", color=color)
    marked = disturbed_layer(base.encode(x=alt.X("median_throughput_tasks_per_sec:Q", scale=x_scale),
                                         tooltip=["system", "workers", "submission_title", "disturbed_reps"]), s)
    tasks = int(s["tasks_per_run"].max())
    return alt.layer(spread, dots, *marked).properties(
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


def _is_dose(experiment) -> bool:
    return experiment == MAIN or str(experiment).startswith("expiry-")


def _is_order(experiment) -> bool:
    return experiment == MAIN or str(experiment).startswith("order-")


def dose_data(runs: pd.DataFrame) -> pd.DataFrame:
    """push-naive's first runs after a change of workers, in the main sweep and the
    expiry experiments, with a measured stall: what `dose_response` draws."""
    r = after_change(runs, "push-naive")
    r = r[(r["first_after_change"] == True) & r["experiment"].map(_is_dose).astype(bool)]  # noqa: E712
    return r.dropna(subset=["stall_sec"])


def dose_response(runs: pd.DataFrame, machine: dict) -> alt.Chart:
    r = dose_data(runs)
    if r.empty:
        return note("Dose-response", "no push-naive first run after a change of workers in this run")
    r = r.assign(disturbed=r["disturbed"].fillna(False).astype(bool).astype(int) if "disturbed" in r else 0)
    r = r[["experiment", "rep", "change", "workers", "expiry_sec", "heartbeat_interval_sec", "completion_time_sec",
           "stall_sec", "predicted_stall_sec", "stale_workers", "stale_lag_sec", "disturbed"]].copy()
    r["check_sec"] = prediction_top(r["predicted_stall_sec"], r["heartbeat_interval_sec"])
    changes = sorted(r["change"].unique(), key=lambda c: int(c.split()[0]))
    color = alt.Color("change:N", title="change of workers", sort=changes)
    tooltip = ["experiment", "rep", "change", alt.Tooltip("expiry_sec:Q", title="expiry, s"),
               alt.Tooltip("completion_time_sec:Q", format=".3f"), alt.Tooltip("stall_sec:Q", format=".3f"),
               alt.Tooltip("predicted_stall_sec:Q", format=".3f"), "stale_workers",
               alt.Tooltip("stale_lag_sec:Q", format=".3f"), "disturbed"]
    # padded: the longest expiry's points sat on the frame
    x = alt.X("expiry_sec:Q", title="heartbeat expiry (interval x liveness), s",
              scale=alt.Scale(zero=True, padding=PANEL_END_PX))
    points = alt.Chart(r).mark_circle(size=55, opacity=0.8).encode(
        x=x, y=alt.Y("completion_time_sec:Q", title="first run after the change: completion time, s"),
        color=color, tooltip=tooltip)
    line = alt.Chart(r).mark_line().encode(x=x, y="median(completion_time_sec):Q", color=color)
    marked_left = disturbed_layer(alt.Chart(r).encode(x=x, y="completion_time_sec:Q", tooltip=tooltip), r,
                                  "disturbed")
    left = alt.layer(line, points, *marked_left).properties(width=300, height=260, title="The cliff against the expiry")
    top = float(max(r["stall_sec"].max(), r["check_sec"].max(), 0.1))
    diagonal = alt.Chart(pd.DataFrame({"a": [0.0, top], "b": [0.0, top]})).mark_line(
        color="#888", strokeDash=[4, 3]).encode(x="a:Q", y="b:Q")
    # wider than a dot, so that it shows around the dot it usually holds
    band = alt.Chart(r).mark_rule(strokeWidth=16, opacity=0.3).encode(
        x=alt.X("predicted_stall_sec:Q", title="predicted stall, s (the stale workers' heartbeats lapse)"),
        y="predicted_stall_sec:Q", y2="check_sec:Q", color=color)
    measured = alt.Chart(r).mark_circle(size=55, opacity=0.8).encode(
        x="predicted_stall_sec:Q",
        y=alt.Y("stall_sec:Q", title="measured stall, s (a task's first to last dispatch)"),
        color=color, tooltip=tooltip)
    marked_right = disturbed_layer(alt.Chart(r).encode(x="predicted_stall_sec:Q", y="stall_sec:Q", tooltip=tooltip),
                                   r, "disturbed")
    right = alt.layer(diagonal, band, measured, *marked_right).properties(
        width=300, height=260, title="Measured against predicted, run by run")
    return alt.hconcat(left, right).properties(
        title="push-naive: the first run after a change of workers at each heartbeat expiry")


def order_data(runs: pd.DataFrame) -> pd.DataFrame:
    """push-naive's runs at the first change of workers, in the main order and the order
    experiments; empty unless there are two orders: what `order_figure` draws."""
    r = after_change(runs, "push-naive")
    r = r[r["experiment"].map(_is_order).astype(bool)].dropna(subset=["stall_sec"])
    if r.empty or r["workload_order"].nunique() < 2:
        return r.iloc[0:0]
    first = r.groupby("experiment")["workers"].transform("min")
    return r[r["workers"] == first].copy()


def order_figure(runs: pd.DataFrame, machine: dict) -> alt.Chart:
    r = order_data(runs)
    if r.empty:
        return note("Order", "no second order of the workloads in this run")
    # each order in the words the x axis uses ("no-op, CPU, I/O", not "noop, cpu, io")
    r["order"] = r["workload_order"].map(order_words)
    r["workload_title"] = r["workload"].map(WORKLOAD_NAMES)
    r["run"] = r["first_after_change"].map({True: "first after the change", False: "later"})
    r["disturbed"] = r["disturbed"].fillna(False).astype(bool).astype(int) if "disturbed" in r else 0
    r = r[["experiment", "order", "workload", "workload_title", "run", "rep", "change", "stall_sec",
           "completion_time_sec", "stale_workers", "disturbed"]]
    sort = list(WORKLOAD_NAMES.values())
    main_order = set(r.loc[r["experiment"] == MAIN, "order"])
    orders = sorted(r["order"].unique(), key=lambda o: (o not in main_order, o))  # the main order first
    runs_drawn = present(r, "run", ["first after the change", "later"])
    run_color = alt.Color("run:N", title="run", sort=runs_drawn,
                          scale=palette_scale(r, "run", ["first after the change", "later"],
                                              {"first after the change": "#e45756", "later": "#4c78a8"}))
    tooltip = ["order", "workload_title", "run", "rep", "change", alt.Tooltip("stall_sec:Q", format=".3f"),
               alt.Tooltip("completion_time_sec:Q", format=".3f"), "stale_workers", "disturbed"]
    base = alt.Chart(r).encode(x=alt.X("workload_title:N", title=None, sort=sort, axis=alt.Axis(labelAngle=0)))
    bars = base.mark_bar(opacity=0.35).encode(
        # unstacked: a workload's first and later runs each have their own median
        y=alt.Y("median(stall_sec):Q", title="stall, s (a task's first to last dispatch)", stack=None),
        color=run_color)
    dots = base.mark_circle(size=50).encode(y="stall_sec:Q", color=run_color, tooltip=tooltip)
    marked = disturbed_layer(base.encode(y="stall_sec:Q", tooltip=tooltip), r, "disturbed")
    return (alt.layer(bars, dots, *marked).properties(width=200, height=240)
            # the header's title just above its labels (by default a label's height apart)
            .facet(column=alt.Column("order:N", title="workloads in the order", sort=orders,
                                     header=alt.Header(titlePadding=0)))
            .properties(title=f"push-naive, {r['change'].iloc[0]}: the stall of each workload's run, in each order"))
