"""The sched figures, from the study's tables (`sched_summary`, `sched_runs`,
`sched_workers`), the rendered frame (`sched_image`, a PPM) and the machine record.
Only cells with status "ok" are drawn. Cells from several machines (SLURM nodes) are
told apart by host (parbench.hosts): dash and point shape, or panels of their own."""

from __future__ import annotations

import altair as alt
import pandas as pd

from parbench.figures import note, ok_rows
from parbench.hosts import HOST, host_encoding, several_hosts, split_by_host, with_host

from parbench.studies.sched.plan import SCHEDULER_ORDER

SCHEDULER_COLOR = alt.Color("scheduler:N", sort=SCHEDULER_ORDER, title="scheduler",
                            scale=alt.Scale(domain=SCHEDULER_ORDER,
                                            range=["#444444", "#e45756", "#4c78a8", "#72b7b2", "#f58518", "#b279a2"]))


def _thread_axis(frame: pd.DataFrame) -> alt.X:
    threads = sorted(frame["threads"].unique().tolist())
    return alt.X("threads:Q", title="threads", scale=alt.Scale(domain=[min(threads), max(threads)]),
                 axis=alt.Axis(values=threads, format="d"))


def _time_against_threads(summary: pd.DataFrame, runs: pd.DataFrame, workload: str, title: str,
                          y_title: str) -> alt.Chart:
    s = with_host(ok_rows(summary[summary["workload"] == workload]))
    parallel = s[s["scheduler"] != "sequential"]
    seq = s[s["scheduler"] == "sequential"]
    by_host = host_encoding(s)
    line = alt.Chart(parallel).mark_line(point=True).encode(
        x=_thread_axis(parallel), y=alt.Y("median_time_s:Q", title=y_title), color=SCHEDULER_COLOR, **by_host,
        tooltip=["scheduler", "threads", HOST, alt.Tooltip("median_time_s:Q", format=".4f"),
                 alt.Tooltip("min_time_s:Q", format=".4f"), alt.Tooltip("max_time_s:Q", format=".4f"),
                 alt.Tooltip("speedup_vs_sequential:Q", format=".2f")])
    bars = alt.Chart(parallel).mark_errorbar().encode(
        x=_thread_axis(parallel), y=alt.Y("min_time_s:Q", title=y_title), y2="max_time_s:Q", color=SCHEDULER_COLOR,
        detail=f"{HOST}:N")
    layers = [line, bars]
    if len(seq):
        # one dashed line per machine's sequential run, named by its host when several
        seq = seq.assign(label=("sequential on " + seq[HOST]) if several_hosts(s) else "sequential")
        rule = alt.Chart(seq).mark_rule(strokeDash=[6, 4], color="#444444").encode(
            y="median_time_s:Q", tooltip=[alt.Tooltip("median_time_s:Q", title="sequential", format=".4f"), HOST])
        text = alt.Chart(seq).mark_text(align="left", dx=4, dy=-6, color="#444444").encode(
            y="median_time_s:Q", x=alt.value(0), text="label:N")
        layers += [rule, text]
    return alt.layer(*layers).properties(width=420, height=260, title=title)


def time(summary: pd.DataFrame, runs: pd.DataFrame, machine: dict) -> alt.Chart:
    size = runs.loc[runs["workload"] == "quicksort", "size"].dropna()
    n = f"{int(size.iloc[0]):,}" if len(size) else "?"
    return _time_against_threads(summary, runs, "quicksort",
                                 f"Quicksort of {n} ints: time against threads (median, min-max bars)",
                                 "time, s")


def mandelbrot_frames(summary: pd.DataFrame, runs: pd.DataFrame, machine: dict) -> alt.Chart:
    m = runs[runs["workload"] == "mandelbrot"].dropna(subset=["width"])
    size = f"{int(m['width'].iloc[0])}x{int(m['height'].iloc[0])}" if len(m) else ""
    return _time_against_threads(summary, runs, "mandelbrot",
                                 f"Mandelbrot {size}: frame time, sequential (dashed) against parallel",
                                 "frame time, s")


def speedup(summary: pd.DataFrame, machine: dict) -> alt.Chart:
    s = with_host(ok_rows(summary))
    s = s[s["scheduler"] != "sequential"]
    long = pd.concat([
        s.assign(baseline="against the sequential baseline", speedup=s["speedup_vs_sequential"]),
        s.assign(baseline="against its own 1-thread run", speedup=s["speedup_vs_one_thread"]),
    ])
    # rows without a speedup stay (they draw nothing): a (workload, baseline) panel with
    # none at all would otherwise be missing from the facet grid and shift its headers
    # (e.g. no baseline on a cell's own machine)
    base = alt.Chart(long).encode(x=_thread_axis(long))
    lines = base.mark_line(point=True).encode(
        y=alt.Y("speedup:Q", title="speedup"), color=SCHEDULER_COLOR, **host_encoding(long),
        tooltip=["workload", "scheduler", "threads", HOST, alt.Tooltip("speedup:Q", format=".2f")])
    # linear speedup, drawn from the same rows so that every facet gets its own
    diagonal = base.transform_calculate(linear="datum.threads").mark_line(
        strokeDash=[4, 4], color="#999999").encode(y="linear:Q", detail="scheduler:N")
    return (alt.layer(diagonal, lines).properties(width=260, height=200)
            .facet(column=alt.Column("baseline:N", title=None, sort=["against the sequential baseline"]),
                   row=alt.Row("workload:N", title=None, sort=["quicksort", "mandelbrot"]))
            .properties(title="Speedup against threads (dashed: linear)"))


def steals(summary: pd.DataFrame, machine: dict) -> alt.Chart:
    s = ok_rows(summary)
    # LIFO shares one stack and never steals: only the work-stealing schedulers
    s = s[s["scheduler"].isin(["ws", "ws_sync"]) & (s["threads"] > 1)].dropna(subset=["steal_success"])
    if s.empty:
        return note("Steals", "no multi-threaded work-stealing cell in this run")
    s = split_by_host(s, "workload")  # a row of panels per machine when several
    long = s.melt(id_vars=["workload", "scheduler", "threads"],
                  value_vars=["steal_success", "steal_fail_empty", "steal_fail_race"],
                  var_name="outcome", value_name="count")
    long["outcome"] = long["outcome"].map({"steal_success": "success", "steal_fail_empty": "failed: victim empty",
                                           "steal_fail_race": "failed: lost race"})
    return (alt.Chart(long).mark_bar().encode(
        x=alt.X("threads:O", title="threads"), y=alt.Y("count:Q", title="steal attempts per run (median)"),
        color=alt.Color("outcome:N", sort=["success", "failed: victim empty", "failed: lost race"],
                        scale=alt.Scale(range=["#54a24b", "#bab0ac", "#e45756"])),
        tooltip=["workload", "scheduler", "threads", "outcome", alt.Tooltip("count:Q", format=",.0f")])
        .properties(width=alt.Step(22), height=180)
        .facet(column=alt.Column("scheduler:N", sort=SCHEDULER_ORDER, title=None),
               row=alt.Row("workload:N", title=None, sort=["quicksort", "mandelbrot"]))
        .resolve_scale(y="independent")
        .properties(title="Steal attempts per run: successes and failures"))


def tasks(summary: pd.DataFrame, workers: pd.DataFrame, machine: dict) -> alt.Chart:
    if workers.empty:
        return note("Tasks per thread", "no per-thread counters in this run")
    top = workers[workers["threads"] == workers["threads"].max()]
    per = top.groupby(["workload", "scheduler", "worker"], as_index=False)["tasks_executed"].median()
    per["thread"] = per["worker"] + 1
    return (alt.Chart(per).mark_bar().encode(
        x=alt.X("thread:O", title="thread"), y=alt.Y("tasks_executed:Q", title="tasks executed per run (median)"),
        color=SCHEDULER_COLOR, tooltip=["workload", "scheduler", "thread", alt.Tooltip("tasks_executed:Q", format=",.0f")])
        .properties(width=alt.Step(18), height=160)
        .facet(column=alt.Column("scheduler:N", sort=SCHEDULER_ORDER, title=None),
               row=alt.Row("workload:N", title=None, sort=["quicksort", "mandelbrot"]))
        .resolve_scale(y="independent")
        .properties(title=f"Task distribution across threads at {int(top['threads'].max())} threads"))


def mandelbrot_image(image_path: str, machine: dict) -> alt.Chart:
    from parbench.figures.ppm import png_data_url

    url, width, height = png_data_url(image_path)
    scale = min(1.0, 900 / width)
    w, h = int(width * scale), int(height * scale)
    return (alt.Chart(pd.DataFrame({"url": [url]})).mark_image(width=w, height=h, align="left", baseline="top")
            .encode(url="url:N", x=alt.value(0), y=alt.value(0))
            .properties(width=w, height=h, title=f"The rendered frame ({width}x{height}, seahorse valley)"))


# name -> (function, the tables it draws from)
FIGURES = {
    "sched_time": (time, ["sched_summary", "sched_runs"]),
    "sched_speedup": (speedup, ["sched_summary"]),
    "sched_steals": (steals, ["sched_summary"]),
    "sched_tasks": (tasks, ["sched_summary", "sched_workers"]),
    "sched_mandelbrot_frames": (mandelbrot_frames, ["sched_summary", "sched_runs"]),
    "sched_mandelbrot_image": (mandelbrot_image, ["sched_image"]),
}
