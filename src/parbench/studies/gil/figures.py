"""The gil figures, from the study's summary table (`gil_summary`) and the machine record.
Only points with status "ok" are drawn; the paper lists the others. A value is the median
over the point's repetitions (interleaved interpreter launches); its whiskers, the 95%
bootstrap interval (none with a single repetition)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from parbench.figures import note, ok_rows, with_columns
from parbench.studies.gil import workloads as wl

EXECUTION_ORDER = ["sequential", "threads", "processes"]
EXECUTION_COLOR = alt.Scale(domain=EXECUTION_ORDER, range=["#444444", "#4c78a8", "#f58518"])
PALETTE = ["#4c78a8", "#e45756", "#54a24b", "#b279a2", "#f58518", "#72b7b2", "#9d755d", "#bab0ac"]


def _runtime_order(frame: pd.DataFrame) -> list[str]:
    """Runtimes in the table's order (the baseline first, then `gil.measure`)."""
    return list(dict.fromkeys(frame["runtime"]))


def _workload_order(frame: pd.DataFrame) -> list[str]:
    present = set(frame["workload"])
    return [w for w in wl.ORDER if w in present]


def _runtime_color(frame: pd.DataFrame) -> alt.Color:
    order = _runtime_order(frame)
    return alt.Color("runtime:N", sort=order, title="runtime",
                     scale=alt.Scale(domain=order, range=PALETTE[:len(order)] or PALETTE))


def _at_most_workers(summary: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Sequential points and the parallel points at the most workers measured."""
    top = int(summary["workers"].max())
    keep = (summary["execution"] == "sequential") | (summary["workers"] == top)
    return summary[keep].copy(), top


def _is_control(frame: pd.DataFrame) -> pd.Series:
    """The native control's rows (tables from before it have no `control` column)."""
    return frame["control"].fillna(False).astype(bool) if "control" in frame else pd.Series(False, frame.index)


def wall_time(summary: pd.DataFrame, machine: dict) -> alt.Chart:
    s = ok_rows(summary)
    s = s[~_is_control(s)]  # the control's work is scaled: its times are not comparable
    if s.empty:
        return note("Wall time by runtime and execution", "no point passed its checks in this run")
    s, top = _at_most_workers(s)
    s["wall_ms"] = s["median_wall_sec"] * 1e3
    s["ci_low_ms"] = s["median_wall_sec_ci_low"] * 1e3
    s["ci_high_ms"] = s["median_wall_sec_ci_high"] * 1e3
    s["label"] = [e if e == "sequential" else f"{e} ({w})" for e, w in zip(s["execution"], s["workers"])]
    runtimes = _runtime_order(s)
    x = alt.X("runtime:N", sort=runtimes, title=None, axis=alt.Axis(labelAngle=-30))
    base = alt.Chart(s).encode(x=x, xOffset=alt.XOffset("execution:N", sort=EXECUTION_ORDER))
    bars = base.mark_bar().encode(
        y=alt.Y("wall_ms:Q", title="wall time, ms (median)"),
        color=alt.Color("execution:N", sort=EXECUTION_ORDER, scale=EXECUTION_COLOR, title="execution"),
        tooltip=["runtime", "workload", "label", alt.Tooltip("wall_ms:Q", format=".2f", title="median ms"),
                 alt.Tooltip("ci_low_ms:Q", format=".2f", title="95% CI low ms"),
                 alt.Tooltip("ci_high_ms:Q", format=".2f", title="95% CI high ms"),
                 alt.Tooltip("repetitions:Q", title="repetitions"),
                 alt.Tooltip("speedup_vs_sequential:Q", format=".2f", title="speedup")])
    whiskers = base.transform_filter("isValid(datum.ci_low_ms)").mark_errorbar(color="#222222", thickness=1).encode(
        y=alt.Y("ci_low_ms:Q", title="wall time, ms (median)"), y2="ci_high_ms:Q")
    return (alt.layer(bars, whiskers, data=s).properties(width=alt.Step(16), height=200)
            .facet(column=alt.Column("workload:N", sort=_workload_order(s), title=None))
            .resolve_scale(y="independent")
            .properties(title=f"Wall time by runtime and execution: sequential, and threads and processes at {top} "
                              f"workers (median of the repetitions; whiskers: 95% bootstrap interval)"))


def thread_speedup(summary: pd.DataFrame, machine: dict) -> alt.Chart:
    s = ok_rows(summary)
    s = s[s["execution"] != "sequential"].dropna(subset=["speedup_vs_sequential"])
    if s.empty:
        return note("Speedup against sequential", "no threads or processes point passed its checks in this run")
    # the native control is drawn as the machine's ceiling, named so in the legend
    s = s.assign(runtime=s["runtime"].where(~_is_control(s), s["runtime"] + " (machine ceiling)"))
    workers = sorted(s["workers"].unique().tolist())
    x = alt.X("workers:Q", title="workers", scale=alt.Scale(domain=[min(workers), max(workers)]),
              axis=alt.Axis(values=workers, format="d"))
    y_title = "speedup against sequential (median)"
    # the axis ends a little above the medians and linear speedup: a wide interval (a few
    # noisy launches) is cut at the top instead of flattening every line
    top = max(float(max(workers)), float(s["speedup_vs_sequential"].max())) * 1.25
    y_scale = alt.Scale(domain=[0, top], clamp=True)
    # every layer reads the one data set of the facet (a layer with data of its own would
    # not be split by workload)
    base = alt.Chart().encode(x=x)
    lines = base.mark_line(point=True).encode(
        y=alt.Y("speedup_vs_sequential:Q", title=y_title, scale=y_scale),
        color=_runtime_color(s),
        strokeDash=alt.StrokeDash("execution:N", sort=["threads", "processes"], title="execution",
                                  scale=alt.Scale(domain=["threads", "processes"], range=[[1, 0], [5, 3]])),
        shape=alt.Shape("execution:N", sort=["threads", "processes"], title="execution",
                        scale=alt.Scale(domain=["threads", "processes"], range=["circle", "square"])),
        detail="execution:N",
        tooltip=["runtime", "workload", "execution", "workers",
                 alt.Tooltip("speedup_vs_sequential:Q", format=".2f", title="speedup"),
                 alt.Tooltip("speedup_ci_low:Q", format=".2f", title="95% CI low"),
                 alt.Tooltip("speedup_ci_high:Q", format=".2f", title="95% CI high"),
                 alt.Tooltip("cpu_sec_per_wall_sec:Q", format=".2f", title="CPU s per wall s")])
    bounds = base.transform_filter("isValid(datum.speedup_ci_low)").mark_errorbar(thickness=1).encode(
        y=alt.Y("speedup_ci_low:Q", title=y_title, scale=y_scale), y2="speedup_ci_high:Q", color=_runtime_color(s))
    linear = base.transform_calculate(linear="datum.workers").mark_line(
        strokeDash=[2, 2], color="#999999").encode(y=alt.Y("linear:Q", title=y_title, scale=y_scale))
    one = alt.Chart().mark_rule(color="#bbbbbb").encode(y=alt.datum(1))
    return (alt.layer(linear, one, bounds, lines, data=s).properties(width=190, height=190)
            .facet(column=alt.Column("workload:N", sort=_workload_order(s), title=None))
            .properties(title="Speedup against the same runtime's sequential run: threads (solid, circles) and "
                              "processes (dashed, squares); bars: 95% bootstrap interval, cut at the top of the "
                              "axis; dotted: linear"))


def cpu_utilization(summary: pd.DataFrame, machine: dict) -> alt.Chart:
    s = ok_rows(summary)
    s = s[s["execution"] != "sequential"].dropna(subset=["cpu_sec_per_wall_sec"])
    if s.empty:
        return note("CPU use", "no runtime could measure its CPU time in this run")
    s, top = _at_most_workers(s)
    s = with_columns(s, "cpu_sec_per_wall_sec_ci_low", "cpu_sec_per_wall_sec_ci_high")  # old tables
    runtimes = _runtime_order(s)
    y_title = "CPU seconds per wall second (median)"
    place = alt.Chart(s).encode(
        x=alt.X("runtime:N", sort=runtimes, title=None, axis=alt.Axis(labelAngle=-30)),
        xOffset=alt.XOffset("execution:N", sort=["threads", "processes"]))
    bars = place.mark_bar().encode(
        y=alt.Y("cpu_sec_per_wall_sec:Q", title=y_title),
        color=alt.Color("execution:N", sort=["threads", "processes"], title="execution",
                        scale=alt.Scale(domain=EXECUTION_ORDER[1:], range=EXECUTION_COLOR.range[1:])),
        tooltip=["runtime", "workload", "execution", "workers",
                 alt.Tooltip("cpu_sec_per_wall_sec:Q", format=".2f", title="CPU s per wall s"),
                 alt.Tooltip("cpu_sec_per_wall_sec_ci_low:Q", format=".2f", title="95% CI low"),
                 alt.Tooltip("cpu_sec_per_wall_sec_ci_high:Q", format=".2f", title="95% CI high"),
                 alt.Tooltip("speedup_vs_sequential:Q", format=".2f", title="speedup")])
    # the bars are drawn only where there is an interval (two launches or more)
    whiskers = place.transform_filter("isValid(datum.cpu_sec_per_wall_sec_ci_low)").mark_errorbar(
        color="#222222", thickness=1).encode(y=alt.Y("cpu_sec_per_wall_sec_ci_low:Q", title=y_title),
                                             y2="cpu_sec_per_wall_sec_ci_high:Q")
    ceiling = alt.Chart(s).mark_rule(strokeDash=[4, 3], color="#999999").encode(y=alt.datum(top))
    return (alt.layer(bars, whiskers, ceiling, data=s).properties(width=alt.Step(16), height=180)
            .facet(column=alt.Column("workload:N", sort=_workload_order(s), title=None))
            .properties(title=f"CPU use of threads and processes at {top} workers (1 = one core busy; dashed: "
                              f"all {top} busy; bars: 95% interval over the launches)"))


# name -> (function, the tables it draws from)
FIGURES = {
    "gil_wall_time": (wall_time, ["gil_summary"]),
    "gil_thread_speedup": (thread_speedup, ["gil_summary"]),
    "gil_cpu_utilization": (cpu_utilization, ["gil_summary"]),
}
