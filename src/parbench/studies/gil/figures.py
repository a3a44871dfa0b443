"""The gil figures, from the study's summary table (`gil_summary`) and the machine record.
Only points with status "ok" are drawn; the paper lists the others. A value is the median
over the point's repetitions (interleaved interpreter launches); its whiskers, the
bootstrap interval at the run's level, `gil.confidence` (none with a single repetition). A
point with a launch that stayed disturbed (`disturbed_reps`) carries an open red diamond; a
CPU reading recorded null as impossible (`cpu_null_reason`) is never drawn. Legends list
only what is drawn, and every mark's tooltip names the panel's workload (the paper check
reads the panels from it)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from parbench.figures import count_axis, disturbed_layer, note, ok_rows, palette_scale, present, with_columns
from parbench.paper.format import share
from parbench.studies.gil import workloads as wl

EXECUTION_ORDER = ["sequential", "threads", "processes"]
EXECUTION_COLORS = {"sequential": "#444444", "threads": "#4c78a8", "processes": "#f58518"}
EXECUTION_DASH = {"threads": [1, 0], "processes": [5, 3]}
EXECUTION_SHAPE = {"threads": "circle", "processes": "square"}
# processes drawn paler than threads: seven runtimes in two executions crowd a panel, and
# the threads (the GIL's question) come first
EXECUTION_OPACITY = {"threads": 1.0, "processes": 0.45}
PALETTE = ["#4c78a8", "#e45756", "#54a24b", "#b279a2", "#f58518", "#72b7b2", "#9d755d", "#bab0ac"]


# Workload panels two to a row: four in one row made the figures 1,100-1,800 px wide, which
# the PDF shrinks to the text's width, their labels to 3-4 pt.
FACET_COLUMNS = 2

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


def _disturbed(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with `disturbed_reps` (0 in a table from before loads were recorded)."""
    return frame.assign(disturbed_reps=frame["disturbed_reps"].fillna(0).astype(int) if "disturbed_reps" in frame
                        else 0)


DISTURBED_TIP = alt.Tooltip("disturbed_reps:Q", title="disturbed launches")


def _level(machine: dict) -> str:
    """The level of the run's intervals, as titles and tooltips name it (`gil.confidence`;
    the default config's 95% for a machine record without the run's config)."""
    from parbench.paper.format import fmt_pct

    return fmt_pct(machine.get("config", {}).get("gil", {}).get("confidence", 0.95))


def _executions_at(frame: pd.DataFrame, top: int) -> str:
    """`sequential, and threads and processes at 2 workers`: the executions drawn."""
    drawn = present(frame, "execution", EXECUTION_ORDER)
    parallel = " and ".join(e for e in drawn if e != "sequential")
    seq = "sequential" if "sequential" in drawn else ""
    return ", and ".join(p for p in (seq, f"{parallel} at {top} workers" if parallel else "") if p)


def wall_time(summary: pd.DataFrame, machine: dict) -> alt.Chart:
    s = ok_rows(summary)
    s = s[~_is_control(s)]  # the control's work is scaled: its times are not comparable
    if s.empty:
        return note("Wall time by runtime and execution", "no point passed its checks in this run")
    s, top = _at_most_workers(_disturbed(s))
    s["wall_ms"] = s["median_wall_sec"] * 1e3
    s["ci_low_ms"] = s["median_wall_sec_ci_low"] * 1e3
    s["ci_high_ms"] = s["median_wall_sec_ci_high"] * 1e3
    s["label"] = [e if e == "sequential" else f"{e} ({w})" for e, w in zip(s["execution"], s["workers"])]
    runtimes = _runtime_order(s)
    x = alt.X("runtime:N", sort=runtimes, title=None, axis=alt.Axis(labelAngle=-30))
    base = alt.Chart(s).encode(x=x, xOffset=alt.XOffset("execution:N", sort=EXECUTION_ORDER))
    y = alt.Y("wall_ms:Q", title="wall time, ms (median)")
    bars = base.mark_bar().encode(
        y=y,
        color=alt.Color("execution:N", sort=EXECUTION_ORDER, title="execution",
                        scale=palette_scale(s, "execution", EXECUTION_ORDER, EXECUTION_COLORS)),
        tooltip=["runtime", "workload", "execution", "label",
                 alt.Tooltip("wall_ms:Q", format=".2f", title="median ms"),
                 alt.Tooltip("ci_low_ms:Q", format=".2f", title=f"{_level(machine)} CI low ms"),
                 alt.Tooltip("ci_high_ms:Q", format=".2f", title=f"{_level(machine)} CI high ms"),
                 alt.Tooltip("repetitions:Q", title="repetitions"),
                 alt.Tooltip("speedup_vs_sequential:Q", format=".2f", title="speedup"), DISTURBED_TIP])
    whiskers = base.transform_filter("isValid(datum.ci_low_ms)").mark_errorbar(color="#222222", thickness=1).encode(
        y=alt.Y("ci_low_ms:Q", title="wall time, ms (median)"), y2="ci_high_ms:Q")
    marks = disturbed_layer(base.encode(y=y, tooltip=["runtime", "workload", "execution", DISTURBED_TIP]), s)
    return (alt.layer(bars, whiskers, *marks, data=s).properties(width=alt.Step(16), height=200)
            .facet(facet=alt.Facet("workload:N", sort=_workload_order(s), title=None), columns=FACET_COLUMNS)
            .resolve_scale(x="independent", y="independent")
            .properties(title=f"Wall time by runtime and execution: {_executions_at(s, top)} (median of the "
                              f"repetitions; whiskers: {_level(machine)} bootstrap interval"
                              + ("; red diamonds: a launch that stayed disturbed)" if marks else ")")))


def thread_speedup(summary: pd.DataFrame, machine: dict) -> alt.Chart:
    s = ok_rows(summary)
    s = _disturbed(s[s["execution"] != "sequential"].dropna(subset=["speedup_vs_sequential"]))
    if s.empty:
        return note("Speedup against sequential", "no threads or processes point passed its checks in this run")
    # the native control named in the legend for what it is: the machine's ceiling only
    # where it gained (the text says where), so the legend does not call it one
    s = s.assign(runtime=s["runtime"].where(~_is_control(s), s["runtime"] + " (no interpreter)"))
    workers = sorted(s["workers"].unique().tolist())
    x = count_axis("workers", workers, "workers")
    y_title = "speedup against sequential (median)"
    # the axis ends a little above the medians and linear speedup: a wide interval (a few
    # noisy launches) is cut at the top instead of flattening every line
    top = max(float(max(workers)), float(s["speedup_vs_sequential"].max())) * 1.25
    y_scale = alt.Scale(domain=[0, top], clamp=True)
    # every layer reads the one data set of the facet (a layer with data of its own would
    # not be split by workload)
    base = alt.Chart().encode(x=x)
    parallel = ["threads", "processes"]
    y = alt.Y("speedup_vs_sequential:Q", title=y_title, scale=y_scale)
    lines = base.mark_line(point=True).encode(
        y=y,
        color=_runtime_color(s),
        strokeDash=alt.StrokeDash("execution:N", sort=parallel, title="execution",
                                  scale=palette_scale(s, "execution", parallel, EXECUTION_DASH)),
        shape=alt.Shape("execution:N", sort=parallel, title="execution",
                        scale=palette_scale(s, "execution", parallel, EXECUTION_SHAPE)),
        opacity=alt.Opacity("execution:N", sort=parallel, title="execution",
                            scale=palette_scale(s, "execution", parallel, EXECUTION_OPACITY)),
        detail="execution:N",
        tooltip=["runtime", "workload", "execution", "workers",
                 alt.Tooltip("speedup_vs_sequential:Q", format=".2f", title="speedup"),
                 alt.Tooltip("speedup_ci_low:Q", format=".2f", title=f"{_level(machine)} CI low"),
                 alt.Tooltip("speedup_ci_high:Q", format=".2f", title=f"{_level(machine)} CI high"),
                 alt.Tooltip("cpu_sec_per_wall_sec:Q", format=".2f", title="CPU s per wall s"), DISTURBED_TIP])
    marks = disturbed_layer(base.encode(y=y, tooltip=["runtime", "workload", "execution", "workers",
                                                      DISTURBED_TIP]), s)
    bounds = base.transform_filter("isValid(datum.speedup_ci_low)").mark_errorbar(thickness=1).encode(
        y=alt.Y("speedup_ci_low:Q", title=y_title, scale=y_scale), y2="speedup_ci_high:Q", color=_runtime_color(s),
        opacity=alt.Opacity("execution:N", sort=parallel, title="execution",
                            scale=palette_scale(s, "execution", parallel, EXECUTION_OPACITY)))
    linear = base.transform_calculate(linear="datum.workers").mark_line(
        strokeDash=[2, 2], color="#999999").encode(y=alt.Y("linear:Q", title=y_title, scale=y_scale))
    one = alt.Chart().mark_rule(color="#bbbbbb").encode(y=alt.datum(1))
    executions = present(s, "execution", parallel)
    drawn = " and ".join({"threads": "threads (solid, circles)", "processes": "processes (dashed, pale squares)"}[e]
                         for e in executions)
    return (alt.layer(linear, one, bounds, lines, *marks, data=s).properties(width=190, height=190)
            .facet(facet=alt.Facet("workload:N", sort=_workload_order(s), title=None), columns=FACET_COLUMNS)
            .properties(title=f"Speedup against the same runtime's sequential run: {drawn}; bars: {_level(machine)} "
                              "bootstrap interval, cut at the axis top; dotted: linear"
                              + ("; red diamonds: a launch that stayed disturbed" if marks else "")))


def cpu_utilization(summary: pd.DataFrame, machine: dict) -> alt.Chart:
    s = ok_rows(summary)
    # a reading recorded null as impossible (cpu_null_reason) is not drawn: dropped here
    s = _disturbed(s[s["execution"] != "sequential"].dropna(subset=["cpu_sec_per_wall_sec"]))
    if s.empty:
        return note("CPU use", "no runtime could measure its CPU time in this run")
    s, top = _at_most_workers(s)
    s = with_columns(s, "cpu_sec_per_wall_sec_ci_low", "cpu_sec_per_wall_sec_ci_high")  # old tables
    runtimes = _runtime_order(s)
    y_title = "CPU seconds per wall second (median)"
    place = alt.Chart(s).encode(
        x=alt.X("runtime:N", sort=runtimes, title=None, axis=alt.Axis(labelAngle=-40)),
        xOffset=alt.XOffset("execution:N", sort=["threads", "processes"]))
    # the axis ends a little above every core busy (the dashed line) and the whiskers: the
    # line at its very top lay on the panel's frame
    readings = s[["cpu_sec_per_wall_sec", "cpu_sec_per_wall_sec_ci_high"]].to_numpy(dtype=float).ravel()
    y_scale = alt.Scale(domain=[0, 1.08 * max([float(top), *readings[~np.isnan(readings)]])])
    y = alt.Y("cpu_sec_per_wall_sec:Q", title=y_title, scale=y_scale)
    bars = place.mark_bar().encode(
        y=y,
        color=alt.Color("execution:N", sort=["threads", "processes"], title="execution",
                        scale=palette_scale(s, "execution", EXECUTION_ORDER, EXECUTION_COLORS)),
        tooltip=["runtime", "workload", "execution", "workers",
                 alt.Tooltip("cpu_sec_per_wall_sec:Q", format=".2f", title="CPU s per wall s"),
                 alt.Tooltip("cpu_sec_per_wall_sec_ci_low:Q", format=".2f", title=f"{_level(machine)} CI low"),
                 alt.Tooltip("cpu_sec_per_wall_sec_ci_high:Q", format=".2f", title=f"{_level(machine)} CI high"),
                 alt.Tooltip("speedup_vs_sequential:Q", format=".2f", title="speedup"), DISTURBED_TIP])
    # the bars are drawn only where there is an interval (two launches or more)
    whiskers = place.transform_filter("isValid(datum.cpu_sec_per_wall_sec_ci_low)").mark_errorbar(
        color="#222222", thickness=1).encode(y=alt.Y("cpu_sec_per_wall_sec_ci_low:Q", title=y_title, scale=y_scale),
                                             y2="cpu_sec_per_wall_sec_ci_high:Q")
    ceiling = alt.Chart(s).mark_rule(strokeDash=[4, 3], color="#999999").encode(y=alt.datum(top))
    marks = disturbed_layer(place.encode(y=y, tooltip=["runtime", "workload", "execution", "workers",
                                                       DISTURBED_TIP]), s)
    executions = " and ".join(present(s, "execution", EXECUTION_ORDER))
    # sized by the step of each execution's bar: a fixed width with an xOffset inside faceted
    # panels whose x scales are independent left every bar a hairline (Vega-Lite gives the
    # offset scale no range then). At least 17 px a bar, and a panel at least 150 px wide for
    # its header (the workload's name): narrower panels printed their headers over each other
    bars_per_panel = len(runtimes) * max(1, s["execution"].nunique())
    step = max(17, -(-150 // bars_per_panel))
    every_core = share(top, top, "core")  # "both cores", "all 8 cores"
    return (alt.layer(bars, whiskers, ceiling, *marks, data=s).properties(width=alt.Step(step), height=180)
            .facet(facet=alt.Facet("workload:N", sort=_workload_order(s), title=None), columns=FACET_COLUMNS)
            .resolve_scale(x="independent")
            .properties(title=f"CPU use of {executions} at {top} workers (1 = one core busy; dashed: {every_core} "
                              f"busy; whiskers: {_level(machine)} interval over the launches"
                              + ("; red diamonds: a launch that stayed disturbed)" if marks else ")")))
