"""The sched figures, from the study's tables (`sched_summary`, `sched_runs`,
`sched_workers`, `sched_fracsteal_frames`), the rendered frame (`sched_image`, a PPM), the
explorer zoom's strip of frames (`sched_fracsteal_strip`, a PPM) and the machine record.
Only cells with status "ok" are drawn. A point is the median over the cell's repetitions;
its bar or band, the 95% bootstrap interval (none with a single repetition). The
explorer's zoom is replayed once per repetition and drawn frame by frame, with intervals
from its rounds. Cells from several machines (SLURM nodes) are told apart by host
(parbench.hosts): point shape and a line each, or panels of their own. The study's
FIGURES (`study.Sched`) name each figure's function, inputs and label."""

from __future__ import annotations

import altair as alt
import pandas as pd

from parbench.figures import (DISTURBED_COLOR, count_axis, disturbed_layer, note, ok_rows,
                              padded_log_scale, palette_scale, with_columns)
from parbench.hosts import HOST, host_encoding, several_hosts, split_by_host, with_host
from parbench.stats import bootstrap_median_ci
from parbench.studies.sched.plan import REFERENCES, SCHEDULER_ORDER

# Each scheduler's colour, the same in every figure; a legend lists only the schedulers a
# figure draws. tbb::parallel_sort is another algorithm than the schedulers' quicksort: a
# reference, drawn grey and dotted.
SCHEDULER_COLORS = dict(zip(SCHEDULER_ORDER, ["#444444", "#e45756", "#4c78a8", "#72b7b2", "#f58518", "#b279a2",
                                              "#9d9d9d"]))
SCHEDULER_DASHES = {s: ([2, 2] if s in REFERENCES else [1, 0]) for s in SCHEDULER_ORDER}


# lines in the legend, so that the reference's dots show there as on the chart
# (opaque: a band drawn in the same colour would fade the legend's symbols; the legends of
# one field merge, and switching one of them off switches all of them off)
LINE_LEGEND = alt.Legend(symbolType="stroke", symbolStrokeWidth=2.5, symbolSize=300, symbolOpacity=1)


def scheduler_color(frame: pd.DataFrame, legend: alt.Legend | None = None) -> alt.Color:
    return alt.Color("scheduler:N", sort=SCHEDULER_ORDER, title="scheduler",
                     scale=palette_scale(frame, "scheduler", SCHEDULER_ORDER, SCHEDULER_COLORS),
                     **({"legend": legend} if legend is not None else {}))


def scheduler_dash(frame: pd.DataFrame) -> alt.StrokeDash:
    # the same title and values as the colour: Vega-Lite merges the two into one legend
    # (a legend of its own switched off would take the colours' with it)
    return alt.StrokeDash("scheduler:N", sort=SCHEDULER_ORDER, title="scheduler", legend=LINE_LEGEND,
                          scale=palette_scale(frame, "scheduler", SCHEDULER_ORDER, SCHEDULER_DASHES))
# the steal counters and how the figure names them
OUTCOMES = {"steal_success": "success", "steal_fail_empty": "failed: victim empty",
            "steal_fail_race": "failed: lost race"}


def _thread_axis(frame: pd.DataFrame) -> alt.X:
    return count_axis("threads", frame["threads"].unique().tolist(), "threads")


def _with_intervals(frame: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """The frame with `<column>_ci_low/_ci_high` for each column (null where a table from
    before repetitions has none)."""
    return with_columns(frame, *(f"{c}_ci_{bound}" for c in columns for bound in ("low", "high")))


def _time_against_threads(summary: pd.DataFrame, runs: pd.DataFrame, workload: str, title: str,
                          y_title: str) -> alt.Chart:
    """Median time against threads, one line per scheduler (log scale: halving the time
    is the same step wherever it happens), the sequential run as a dashed rule with its
    band, and an open red diamond on every cell with a repetition that stayed disturbed."""
    s = with_host(_with_intervals(ok_rows(summary[summary["workload"] == workload]), "median_time_s"))
    parallel = s[s["scheduler"] != "sequential"]
    seq = s[s["scheduler"] == "sequential"]
    width = 420
    values = pd.concat([s[c] for c in ("median_time_s", "median_time_s_ci_low", "median_time_s_ci_high")]).dropna()
    scale, axis = padded_log_scale(values.tolist())
    y = alt.Y("median_time_s:Q", title=f"{y_title} (log scale)", scale=scale, axis=axis)
    line = alt.Chart(parallel).mark_line(point=True).encode(
        x=_thread_axis(parallel), y=y, color=scheduler_color(parallel, LINE_LEGEND),
        strokeDash=scheduler_dash(parallel), **host_encoding(s),
        tooltip=["workload", "scheduler", "threads", HOST, alt.Tooltip("repetitions:Q", title="repetitions"),
                 alt.Tooltip("median_time_s:Q", format=".4f"),
                 alt.Tooltip("median_time_s_ci_low:Q", format=".4f", title="95% CI low"),
                 alt.Tooltip("median_time_s_ci_high:Q", format=".4f", title="95% CI high"),
                 alt.Tooltip("min_time_s:Q", format=".4f"), alt.Tooltip("max_time_s:Q", format=".4f"),
                 alt.Tooltip("speedup_vs_sequential:Q", format=".2f"),
                 alt.Tooltip("disturbed_reps:Q", title="disturbed repetitions")])
    # the bars are drawn only where there is an interval (two repetitions or more)
    bars = alt.Chart(parallel).transform_filter("isValid(datum.median_time_s_ci_low)").mark_errorbar(
        ticks=True).encode(x=_thread_axis(parallel), y=alt.Y("median_time_s_ci_low:Q", title=f"{y_title} (log scale)"),
                           y2="median_time_s_ci_high:Q", color=scheduler_color(parallel), detail=f"{HOST}:N")
    layers = [line, bars, *disturbed_layer(alt.Chart(parallel).encode(x=_thread_axis(parallel), y=y), parallel)]
    if len(seq):
        # one dashed line per machine's sequential run, named by its host when several
        seq = seq.assign(label=("sequential on " + seq[HOST]) if several_hosts(s) else "sequential")
        band = alt.Chart(seq).transform_filter("isValid(datum.median_time_s_ci_low)").mark_rect(
            color="#444444", opacity=0.12).encode(y="median_time_s_ci_low:Q", y2="median_time_s_ci_high:Q")
        rule = alt.Chart(seq).mark_rule(strokeDash=[6, 4], color="#444444").encode(
            y="median_time_s:Q", tooltip=["workload", "label",
                                          alt.Tooltip("median_time_s:Q", title="sequential", format=".4f"),
                                          alt.Tooltip("median_time_s_ci_low:Q", title="95% CI low", format=".4f"),
                                          alt.Tooltip("median_time_s_ci_high:Q", title="95% CI high",
                                                      format=".4f")])
        # the label at the right end of the rule, clear of the lines' one-thread points
        text = alt.Chart(seq).mark_text(align="right", dx=-4, dy=-6, color="#444444").encode(
            y="median_time_s:Q", x=alt.value(width), text="label:N")
        layers += [band, rule, text]
    return alt.layer(*layers).properties(width=width, height=260, title=title)


def time(summary: pd.DataFrame, runs: pd.DataFrame, machine: dict) -> alt.Chart:
    size = runs.loc[runs["workload"] == "quicksort", "size"].dropna()
    n = f"{int(size.iloc[0]):,}" if len(size) else "?"
    return _time_against_threads(summary, runs, "quicksort",
                                 f"Quicksort of {n} ints: time against threads (median of the repetitions, "
                                 f"bars: 95% bootstrap interval)",
                                 "time, s")


def mandelbrot_frames(summary: pd.DataFrame, runs: pd.DataFrame, machine: dict) -> alt.Chart:
    m = runs[runs["workload"] == "mandelbrot"].dropna(subset=["width"])
    size = f"{int(m['width'].iloc[0])}x{int(m['height'].iloc[0])}" if len(m) else ""
    return _time_against_threads(summary, runs, "mandelbrot",
                                 f"Mandelbrot {size}: frame time against threads (median of the repetitions, "
                                 f"bars: 95% bootstrap interval)",
                                 "frame time, s")


def speedup(summary: pd.DataFrame, machine: dict) -> alt.Chart:
    s = with_host(_with_intervals(ok_rows(summary), "speedup_vs_sequential", "speedup_vs_one_thread"))
    s = s[s["scheduler"] != "sequential"]
    long = pd.concat([
        s.assign(baseline="against the sequential baseline", speedup=s["speedup_vs_sequential"],
                 speedup_ci_low=s["speedup_vs_sequential_ci_low"], speedup_ci_high=s["speedup_vs_sequential_ci_high"]),
        s.assign(baseline="against its own 1-thread run", speedup=s["speedup_vs_one_thread"],
                 speedup_ci_low=s["speedup_vs_one_thread_ci_low"], speedup_ci_high=s["speedup_vs_one_thread_ci_high"]),
    ]).dropna(subset=["speedup"])
    base = alt.Chart(long).encode(x=_thread_axis(long))
    lines = base.mark_line(point=True).encode(
        y=alt.Y("speedup:Q", title="speedup"), color=scheduler_color(long, LINE_LEGEND),
        strokeDash=scheduler_dash(long), **host_encoding(long),
        tooltip=["workload", "baseline", "scheduler", "threads", HOST, alt.Tooltip("speedup:Q", format=".2f"),
                 alt.Tooltip("speedup_ci_low:Q", format=".2f", title="95% CI low"),
                 alt.Tooltip("speedup_ci_high:Q", format=".2f", title="95% CI high"),
                 alt.Tooltip("disturbed_reps:Q", title="disturbed repetitions")])
    with_ci = base.transform_filter("isValid(datum.speedup_ci_low)")
    bands = with_ci.mark_area(opacity=0.18).encode(
        y="speedup_ci_low:Q", y2="speedup_ci_high:Q", color=scheduler_color(long, LINE_LEGEND), detail=f"{HOST}:N")
    # whiskers too: against its own 1-thread run a speedup at one thread is one, with no
    # interval, so a band there would join nothing and show no interval at all
    whiskers = with_ci.mark_errorbar(ticks=True).encode(
        y=alt.Y("speedup_ci_low:Q", title="speedup"), y2="speedup_ci_high:Q",
        color=scheduler_color(long, LINE_LEGEND), detail=f"{HOST}:N")
    # linear speedup, drawn from the same rows so that every facet gets its own
    diagonal = base.transform_calculate(linear="datum.threads").mark_line(
        strokeDash=[4, 4], color="#999999").encode(y="linear:Q", detail="scheduler:N")
    marks = disturbed_layer(base.encode(y="speedup:Q"), long)
    return (alt.layer(diagonal, bands, whiskers, lines, *marks).properties(width=260, height=200)
            .facet(column=alt.Column("baseline:N", title=None, sort=["against the sequential baseline"]),
                   row=alt.Row("workload:N", title=None, sort=["quicksort", "mandelbrot"]))
            .properties(title="Speedup against threads: median of the repetitions, band and whiskers: 95% "
                              "bootstrap interval from both cells' repetitions (dashed: linear)"))


def steals(summary: pd.DataFrame, machine: dict) -> alt.Chart:
    s = ok_rows(summary)
    # LIFO shares one stack and never steals: only the work-stealing schedulers
    s = s[s["scheduler"].isin(["ws", "ws_sync"]) & (s["threads"] > 1)].dropna(subset=["steal_success"])
    if s.empty:
        return note("Steals", "no multi-threaded work-stealing cell in this run")
    s = split_by_host(_with_intervals(s, *OUTCOMES), "workload")  # a row of panels per machine when several
    s = s.assign(disturbed_reps=s["disturbed_reps"] if "disturbed_reps" in s else 0)
    # an outcome no cell ever had draws bars of no height: its legend entry says so, or a
    # reader looks for a colour that is not there (no steal lost a race on 2 threads)
    titles = {c: title if s[c].fillna(0).ne(0).any() else f"{title} (none in this run)"
              for c, title in OUTCOMES.items()}
    long = pd.concat([s[["workload", "scheduler", "threads", "disturbed_reps"]].assign(
        outcome=titles[c], count=s[c], ci_low=s[f"{c}_ci_low"], ci_high=s[f"{c}_ci_high"])
        for c in OUTCOMES], ignore_index=True)
    outcome_order = list(titles.values())
    # a row's panels share one y scale (ws beside ws_sync on one workload compare by bar
    # height); rows keep their own: an invisible mark at the row's highest end in every panel
    top = long[["count", "ci_high"]].max(axis=1)
    long = long.assign(row_top=top.groupby(long["workload"]).transform("max"))
    place = alt.Chart(long).encode(x=alt.X("threads:O", title="threads", axis=alt.Axis(labelAngle=0)),
                                   xOffset=alt.XOffset("outcome:N", sort=outcome_order))
    bars = place.mark_bar().encode(
        y=alt.Y("count:Q", title="steal attempts per run (median)"),
        color=alt.Color("outcome:N", sort=outcome_order, scale=alt.Scale(range=["#54a24b", "#bab0ac", "#f58518"])),
        tooltip=["workload", "scheduler", "threads", "outcome", alt.Tooltip("count:Q", format=",.0f"),
                 alt.Tooltip("ci_low:Q", title="95% CI low", format=",.0f"),
                 alt.Tooltip("ci_high:Q", title="95% CI high", format=",.0f"),
                 alt.Tooltip("disturbed_reps:Q", title="disturbed repetitions")])
    # the bars are drawn only where there is an interval (two repetitions or more)
    interval = place.transform_filter("isValid(datum.ci_low)").mark_errorbar(ticks=True, color="#222222").encode(
        y=alt.Y("ci_low:Q", title="steal attempts per run (median)"), y2="ci_high:Q")
    marks = disturbed_layer(place.encode(y="count:Q"), long)
    row_scale = place.mark_point(opacity=0).encode(y="row_top:Q")
    return (alt.layer(bars, interval, row_scale, *marks).properties(width=alt.Step(12), height=180)
            .facet(column=alt.Column("scheduler:N", sort=SCHEDULER_ORDER, title=None),
                   row=alt.Row("workload:N", title=None, sort=["quicksort", "mandelbrot"]))
            .resolve_scale(y="independent")
            .properties(title="Steal attempts per run: successes and failures (median over the timed runs, "
                              "whiskers: 95% interval)"))


def tasks(summary: pd.DataFrame, workers: pd.DataFrame, runs: pd.DataFrame, machine: dict) -> alt.Chart:
    """Tasks each thread executed at the most threads: every timed run's count (ticks: the
    split of one run; red: a run of a repetition that stayed disturbed) and their median
    per thread (bars) with its interval; a split that changes from run to run shows as
    ticks far apart, which the medians alone would hide."""
    # the counters of cells that passed their checks: a cell with a failed repetition is
    # not drawn, though its other repetitions wrote counters
    workers = workers.merge(ok_rows(summary)[["workload", "scheduler", "threads"]].drop_duplicates())
    if workers.empty:
        return note("Tasks per thread", "no cell with per-thread counters passed its checks in this run")
    top = workers[workers["threads"] == workers["threads"].max()]
    if "rep" not in top:  # a table from before repetitions: one repetition
        top = top.assign(rep=0)
    top = top.assign(thread=top["worker"].astype(int) + 1)
    # whether each run's repetition stayed disturbed (false for a table from before loads)
    cell = ["workload", "scheduler", "threads", "rep"]
    if "disturbed" in runs and "rep" in runs:
        flags = runs[[*cell, "disturbed"]].drop_duplicates(cell)
        top = top.merge(flags, on=cell, how="left")
    top = top.assign(disturbed=top["disturbed"].fillna(False).astype(bool) if "disturbed" in top else False)
    rows = []
    for (workload, scheduler, thread), f in top.groupby(["workload", "scheduler", "thread"]):
        lo, hi = bootstrap_median_ci(f["tasks_executed"].tolist())
        rows.append({"workload": workload, "scheduler": scheduler, "thread": int(thread),
                     "tasks_executed": f["tasks_executed"].median(), "ci_low": lo, "ci_high": hi})
    per = pd.DataFrame(rows).astype({"ci_low": float, "ci_high": float})
    x = alt.X("thread:O", title="thread", axis=alt.Axis(labelAngle=0))
    y_title = "tasks executed in one run"
    bars = alt.Chart(per).mark_bar(opacity=0.55).encode(
        x=x, y=alt.Y("tasks_executed:Q", title=y_title), color=scheduler_color(per),
        tooltip=["workload", "scheduler", "thread", alt.Tooltip("tasks_executed:Q", format=",.0f", title="median"),
                 alt.Tooltip("ci_low:Q", title="95% CI low", format=",.0f"),
                 alt.Tooltip("ci_high:Q", title="95% CI high", format=",.0f")])
    ticks = alt.Chart(top).mark_tick(thickness=1.5, size=14).encode(
        x=x, y=alt.Y("tasks_executed:Q", title=y_title),
        color=alt.condition("datum.disturbed", alt.value(DISTURBED_COLOR), alt.value("#222222")),
        tooltip=["workload", "scheduler", "thread", "rep", "run", alt.Tooltip("tasks_executed:Q", format=",.0f"),
                 "disturbed"])
    charts = []
    for workload in [w for w in ("quicksort", "mandelbrot") if w in set(per["workload"])]:
        row = []
        for scheduler in [s for s in SCHEDULER_ORDER if s in set(per.loc[per["workload"] == workload, "scheduler"])]:
            keep = f"datum.workload == '{workload}' && datum.scheduler == '{scheduler}'"
            row.append(alt.layer(bars.transform_filter(keep), ticks.transform_filter(keep))
                       .properties(width=alt.Step(22), height=150, title=f"{workload}, {scheduler}"))
        charts.append(alt.hconcat(*row))
    # one chart per panel (concatenated, not faceted): each panel's title comes with its
    # own data, and its y scale is its own
    return alt.vconcat(*charts).properties(
        title=f"Tasks executed by each thread at {int(top['threads'].max())} threads: every run's count (ticks) "
              f"and their median (bars)")


def mandelbrot_image(image_path: str, machine: dict) -> alt.Chart:
    from parbench.figures.ppm import png_data_url

    url, width, height = png_data_url(image_path)
    scale = min(1.0, 900 / width)
    w, h = int(width * scale), int(height * scale)
    return (alt.Chart(pd.DataFrame({"url": [url]})).mark_image(width=w, height=h, align="left", baseline="top")
            .encode(url="url:N", x=alt.value(0), y=alt.value(0))
            .properties(width=w, height=h, title=f"The rendered frame ({width}x{height}, seahorse valley)"))


def _zoom_frames(frames: pd.DataFrame) -> pd.DataFrame:
    """The explorer zoom's frames, one row each: view and both times."""
    from parbench.studies.sched.fracsteal_tables import speedups

    ok = ok_rows(frames)
    per = speedups(ok)
    # the view of each frame, from the round that saved the images (the first)
    views = (ok[ok["scheduler"] == "ws_sync"].sort_values("rep")
             .drop_duplicates("frame")[["frame", "command", "magnification", "image", "threads"]])
    return views.merge(per, on="frame").sort_values("frame")


def fracsteal_strip(frames: pd.DataFrame, strip_path: str, machine: dict) -> alt.Chart:
    from parbench.figures.ppm import png_data_url
    from parbench.studies.sched.fracsteal import STRIP_GAP

    if ok_rows(frames).empty:
        return note("The explorer's zoom", "not drawn: the zoom failed its check "
                    f"({frames['failure'].dropna().iloc[0] if frames['failure'].notna().any() else 'not measured'})")
    per = _zoom_frames(frames)
    shown = per[per["image"].notna()].reset_index(drop=True)
    url, width, height = png_data_url(strip_path)
    n = len(shown)
    thumb = (width - STRIP_GAP * (n - 1)) / n
    scale = min(1.0, 900 / width)
    w, h = int(width * scale), int(height * scale)
    shown["x"] = [(i * (thumb + STRIP_GAP) + thumb / 2) * scale for i in range(n)]
    shown["label"] = [f"frame {r.frame}, {r.magnification:.3g}x\n{r.parallel_time_s:.3f} s parallel\n"
                      f"{r.sequential_time_s:.3f} s sequential" for r in shown.itertuples()]
    image = (alt.Chart(pd.DataFrame({"url": [url]})).mark_image(width=w, height=h, align="left", baseline="top")
             .encode(url="url:N", x=alt.value(0), y=alt.value(0)))
    labels = alt.Chart(shown).mark_text(baseline="top", lineBreak="\n", fontSize=10).encode(
        x=alt.X("x:Q", scale=alt.Scale(domain=[0, w], range=[0, w]), axis=None), y=alt.value(h + 6),
        text="label:N")
    threads = int(shown["threads"].iloc[0])
    return (alt.layer(image, labels).properties(
        width=w, height=h + 46,
        title=f"The explorer's zoom: {n} of its {len(per)} frames, ws_sync with {threads} threads against "
              f"the sequential render"))


def fracsteal_times(frames: pd.DataFrame, machine: dict) -> alt.Chart:
    if ok_rows(frames).empty:
        return note("The explorer's frame times", "not drawn: the zoom failed its check")
    per = _zoom_frames(frames)
    threads = int(per["threads"].iloc[0])
    rounds = int(frames["rep"].nunique()) if "rep" in frames else 1
    long = pd.concat([per.assign(scheduler=name, time_s=per[f"{col}_time_s"], ci_low=per[f"{col}_time_s_ci_low"],
                                 ci_high=per[f"{col}_time_s_ci_high"])
                      for name, col in (("ws_sync", "parallel"), ("sequential", "sequential"))])
    tooltip = ["frame", "command", alt.Tooltip("magnification:Q", format=".3g"),
               alt.Tooltip("parallel_time_s:Q", format=".4f"), alt.Tooltip("sequential_time_s:Q", format=".4f"),
               alt.Tooltip("ratio:Q", format=".2f"),
               alt.Tooltip("ratio_ci_low:Q", title="ratio 95% CI low", format=".2f"),
               alt.Tooltip("ratio_ci_high:Q", title="ratio 95% CI high", format=".2f")]
    # ordinal frames: the points above and the bars below share their places
    x = alt.X("frame:O", title="frame of the zoom", axis=alt.Axis(labelAngle=0))
    color = alt.Color("scheduler:N", title="render", sort=["ws_sync", "sequential"],
                      scale=alt.Scale(domain=["ws_sync", "sequential"], range=["#72b7b2", "#444444"]))
    how = (f"median of {rounds} rounds, bars: its 95% interval" if rounds > 1 else "one round")
    line = alt.Chart(long).mark_line(point=True).encode(
        x=x, y=alt.Y("time_s:Q", title="frame time, s"), color=color, tooltip=tooltip)
    # the bars are drawn only where there is an interval (two rounds or more)
    bars = alt.Chart(long).transform_filter("isValid(datum.ci_low)").mark_errorbar(ticks=True).encode(
        x=x, y=alt.Y("ci_low:Q", title="frame time, s"), y2="ci_high:Q", color=color)
    times = alt.layer(line, bars).properties(
        width=520, height=200, title=f"Frame time: ws_sync with {threads} threads against the sequential render "
                                     f"({how})")
    ratio = alt.Chart(per).mark_bar(color="#72b7b2", width=alt.RelativeBandSize(0.6)).encode(
        x=x, y=alt.Y("ratio:Q", title="sequential / parallel"), tooltip=tooltip)
    ratio_bars = alt.Chart(per).transform_filter("isValid(datum.ratio_ci_low)").mark_errorbar(
        ticks=True, color="#222222").encode(x=x, y=alt.Y("ratio_ci_low:Q", title="sequential / parallel"),
                                            y2="ratio_ci_high:Q")
    one = alt.Chart(pd.DataFrame({"one": [1.0]})).mark_rule(strokeDash=[4, 4], color="#444444").encode(y="one:Q")
    return alt.vconcat(times, alt.layer(ratio, ratio_bars, one).properties(
        width=520, height=110, title="Each frame's sequential time over its parallel time (dashed: equal times)"))

