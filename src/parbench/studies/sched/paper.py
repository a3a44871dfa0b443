"""The generated parts of the sched section (`paper/sections/sched.qmd` includes them
from `paper/_generated/sched/`): this run's parameters, its figures, and every sentence
that states a finding, computed here from the study's tables. The fixed prose (the
schedulers, the workloads, the checks) is in the section file.

Times, speedups and efficiencies are medians over a cell's repetitions with their 95%
bootstrap intervals; a ranking whose intervals overlap is reported as "not
distinguishable on this machine" instead."""

from __future__ import annotations

import pandas as pd

from parbench import stats
from parbench.paper.format import figure, findings, fmt_ci, fmt_num, fmt_pct, join, md_table

TABLES = ["sched_summary", "sched_runs", "sched_fracsteal_frames"]
FRAGMENTS = ["setup", "quicksort", "speedup", "steals", "mandelbrot", "fracsteal", "summary"]
REPORT_TABLES = ["sched_summary_table"]

SCHEDULER_NAMES = {"sequential": "the sequential baseline", "lifo": "LIFO (one shared stack)",
                   "ws": "work stealing", "ws_sync": "synchronizing work stealing",
                   "openmp": "OpenMP tasks", "tbb": "a TBB task_group",
                   "tbb_parallel_sort": "TBB parallel_sort (another algorithm: a reference)"}


def _ci(row, column: str) -> tuple:
    """(low, high) of a column's interval in a summary row, (None, None) without one."""
    lo, hi = row.get(f"{column}_ci_low"), row.get(f"{column}_ci_high")
    return (None if lo is None or pd.isna(lo) else lo, None if hi is None or pd.isna(hi) else hi)


def _value(row, column: str, fmt=fmt_num) -> str:
    """A median with its interval: `3.1 (2.9–3.4)`."""
    return fmt_ci(row[column], *_ci(row, column), fmt=fmt)


def _fastest(rows: pd.DataFrame, what: str) -> str:
    """Who was fastest among `rows` (sorted by median time), or, when the first two
    times' intervals overlap, which ones cannot be told apart."""
    best = rows.iloc[0]
    tied = [r for _, r in rows.iloc[1:].iterrows()
            if not stats.distinguishable(_ci(best, "median_time_s"), _ci(r, "median_time_s"))]
    if not tied:
        return (f"the fastest {what} was {SCHEDULER_NAMES[best['scheduler']]} "
                f"({_value(best, 'median_time_s')} s, {_value(best, 'speedup_vs_sequential')}x the sequential code)")
    names = [SCHEDULER_NAMES[r["scheduler"]] for r in [best, *tied]]
    return (f"{', '.join(names[:-1])} and {names[-1]} were not distinguishable on this machine as the fastest "
            f"{what} (" + "; ".join(f"{r['scheduler']} {_value(r, 'median_time_s')} s" for r in [best, *tied]) + ")")


def setup(summary: pd.DataFrame, machine: dict) -> str:
    cfg = machine["config"]["sched"]
    q, m = cfg["quicksort"], cfg["mandelbrot"]
    failed = summary[summary["status"] == "failed"]
    unavailable = summary[summary["status"] == "unavailable"].drop_duplicates("scheduler")
    text = (f"This run sorted {q['size']:,} random 32-bit ints (seed {q['seed']}, sequential below "
            f"{q['cutoff']:,} elements) and rendered {m['width']}x{m['height']} frames ({m['max_iter']} iterations, "
            f"tasks of at most {m['threshold_pixels']:,} pixels); idle thieves backed off from "
            f"{cfg['backoff']['min_ns']:,} ns to {cfg['backoff']['max_ns']:,} ns, at "
            f"{', '.join(str(t) for t in sorted(summary['threads'].unique()))} threads. ")
    reps = int(summary["repetitions"].max()) if "repetitions" in summary and len(summary) else 1
    per_rep = (f"each repetition ran {cfg['runs_per_cell']} timed sort(s) or {m['frames']} frame(s), and its time is "
               f"their median")
    if reps > 1:
        text += (f"Each cell was measured {reps} times, interleaved: every cell once, then every cell again, each "
                 f"round in a shuffled order (seed {machine['config'].get('run_order_seed')}), so that drift of the "
                 f"machine hits every scheduler alike; {per_rep}. Times, speedups and efficiencies are medians over "
                 f"the repetitions with their 95% percentile-bootstrap intervals in parentheses (a speedup's interval "
                 f"resamples the repetitions of both cells it compares); where two intervals overlap, the two are "
                 f"called not distinguishable on this machine rather than ranked. With {reps} repetitions an "
                 f"interval cannot be wider than their range: it shows how far they disagree. ")
    else:
        text += (f"Each cell was measured once (`sched.repetitions: 1`; {per_rep}), so no number carries an "
                 f"interval and no ranking below can be told apart from noise. ")
    if len(failed):
        text += (f"{len(failed)} cell(s) failed verification: "
                 + "; ".join(f"{r.workload} {r.scheduler} t{r.threads} ({r.failure})" for r in failed.itertuples())
                 + ".")
    else:
        text += "Every sort and every frame passed verification."
    parts = [text]
    if len(unavailable):
        parts.append("::: {.callout-note title=\"Peers not built on this machine\"}\n"
                     + " ".join(f"{r.scheduler}: {r.failure}." for r in unavailable.itertuples()) + "\n:::")
    return join(*parts)


def quicksort(ok: pd.DataFrame, machine: dict) -> str:
    profile, tmax = machine["profile"], int(ok["threads"].max())
    qs = ok[ok["workload"] == "quicksort"]
    seq = qs[qs["scheduler"] == "sequential"]["median_time_s"]
    top = qs[(qs["threads"] == tmax) & (qs["scheduler"] != "sequential")].sort_values("median_time_s")
    fig = figure(profile, "sched_time", "Quicksort time against threads: median of the repetitions with its 95% "
                 "bootstrap interval; the dashed line is the sequential sort.", "fig-sched-time")
    if not (len(seq) and len(top)):
        return join(fig)
    seq_row = qs[qs["scheduler"] == "sequential"].iloc[0]
    text = (f"The sequential sort took {_value(seq_row, 'median_time_s')} s. At {tmax} threads "
            + _fastest(top, "sort"))
    ws = top.set_index("scheduler")
    if "ws" in ws.index and "openmp" in ws.index:
        a, b = ws.loc["ws"], ws.loc["openmp"]
        if not stats.distinguishable(_ci(a, "speedup_vs_sequential"), _ci(b, "speedup_vs_sequential")):
            verdict = "not distinguishable from them on this machine"
        else:
            verdict = "ahead of them" if a["speedup_vs_sequential"] > b["speedup_vs_sequential"] else "behind them"
        text += (f"; work stealing reached {_value(a, 'speedup_vs_sequential')}x against "
                 f"{_value(b, 'speedup_vs_sequential')}x for OpenMP tasks, {verdict}")
    if "lifo" in ws.index:
        text += f", and LIFO {_value(ws.loc['lifo'], 'speedup_vs_sequential')}x"
    return join(fig, text + " (@fig-sched-time).")


def speedup(ok: pd.DataFrame, machine: dict) -> str:
    profile, tmax = machine["profile"], int(ok["threads"].max())
    fig = figure(profile, "sched_speedup", "Speedup against the sequential baseline and against the same "
                 "scheduler on one thread: median of the repetitions, band: 95% bootstrap interval; dashed: linear "
                 "speedup.", "fig-sched-speedup")
    par = ok[(ok["threads"] == tmax) & (ok["scheduler"] != "sequential")].dropna(subset=["efficiency"])
    if par.empty:
        return join(fig)
    best = par.loc[par.groupby("workload", sort=False)["efficiency"].idxmax()]
    return join(fig, f"@fig-sched-speedup compares each scheduler with the sequential code and with itself on one "
                     f"thread. The best efficiency (speedup over the sequential code per thread) at {tmax} threads "
                     f"was " + " and ".join(f"{_value(r, 'efficiency', fmt_pct)} for {r['workload']} "
                                            f"({r['scheduler']})" for _, r in best.iterrows()) + ".")


def _steals(r) -> str:
    """A cell's successful steals per run with their interval (none in a table from
    before the steal intervals)."""
    return fmt_ci(r.steal_success, getattr(r, "steal_success_ci_low", None), getattr(r, "steal_success_ci_high", None))


def steals(ok: pd.DataFrame, machine: dict) -> str:
    profile, tmax = machine["profile"], int(ok["threads"].max())
    figs = [figure(profile, "sched_steals", "Steal attempts per run: successes, failures on an empty victim and "
                   "lost races (medians over the repetitions, bars their 95% bootstrap intervals).",
                   "fig-sched-steals"),
            figure(profile, "sched_tasks", f"Tasks executed by each thread at {tmax} threads (medians over the "
                   "repetitions, bars their 95% bootstrap intervals).", "fig-sched-tasks")]
    st = ok[ok["scheduler"].isin(["ws", "ws_sync"]) & (ok["threads"] == tmax)].dropna(subset=["steal_success_rate"])
    if st.empty:
        return join(*figs, "@fig-sched-steals and @fig-sched-tasks need more than one thread.")
    parts = []
    for workload, f in st.groupby("workload", sort=False):
        parts.append(f"on {workload}, " + " and ".join(
            f"{SCHEDULER_NAMES[r.scheduler]} stole {_steals(r)} tasks per run "
            f"({fmt_pct(r.steal_success_rate)} of its attempts"
            + (f"; tasks per thread varied by {fmt_pct(r.task_share_cv)}" if r.task_share_cv is not None
               and not pd.isna(r.task_share_cv) else "") + ")" for r in f.itertuples()))
    return join(*figs, f"At {tmax} threads, " + "; ".join(parts) + " (@fig-sched-steals; the variation of tasks "
                       "per thread is their coefficient of variation, @fig-sched-tasks).")


def mandelbrot(ok: pd.DataFrame, machine: dict) -> str:
    profile, tmax = machine["profile"], int(ok["threads"].max())
    figs = [figure(profile, "sched_mandelbrot_frames", "Mandelbrot frame time against threads; the dashed line "
                   "is the sequential render.", "fig-sched-frames"),
            figure(profile, "sched_mandelbrot_image", "The rendered frame; every parallel frame was "
                   "byte-identical to it.", "fig-sched-image")]
    mb = ok[ok["workload"] == "mandelbrot"]
    mseq = mb[mb["scheduler"] == "sequential"]
    mpar = mb[(mb["scheduler"] != "sequential") & (mb["threads"] == tmax)].sort_values("median_time_s")
    if not (len(mseq) and len(mpar)):
        return join(*figs)
    return join(*figs, f"A sequential frame took {_value(mseq.iloc[0], 'median_time_s')} s; on {tmax} threads "
                       + _fastest(mpar, "renderer") + " (@fig-sched-frames, @fig-sched-image).")


def fracsteal(frames: pd.DataFrame, machine: dict) -> str:
    """The explorer's zoom: its strip of frames, its frame times, and the parallel /
    sequential frame-time ratio, from `sched_fracsteal_frames`."""
    from parbench.studies.sched.fracsteal_tables import summary as zoom_summary

    profile = machine["profile"]
    s = zoom_summary(frames)
    threads = f"{s['threads']} threads" if s else "its threads"
    figs = [figure(profile, "sched_fracsteal_strip", f"Frames of the explorer's scripted zoom, rendered by "
                   f"synchronizing work stealing with {threads}; under each, its magnification and its parallel "
                   f"and sequential frame times.", "fig-sched-fracsteal-strip"),
            figure(profile, "sched_fracsteal_times", "Frame time of every frame of the zoom, in parallel "
                   "(synchronizing work stealing) and sequentially, and their ratio: medians over the rounds of "
                   "the zoom, bars their 95% bootstrap intervals.", "fig-sched-fracsteal-times")]
    if s is None:
        failure = frames["failure"].dropna()
        return join(*figs, "The explorer's zoom failed its check and is not drawn: "
                           f"{failure.iloc[0] if len(failure) else 'it was not measured'}.")
    lo, hi = s["ratio_ci"]
    if lo is not None and lo <= 1 <= hi:
        verdict = "not distinguishable on this machine from"
    else:
        verdict = "faster than" if s["ratio"] > 1 else "no faster than"
    checked = ("Every frame was byte-identical to its sequential render." if s["all_identical"]
               else "Some frames differed from their sequential render.")
    rounds = (f"medians over the frames, each the median of {s['rounds']} rounds of the zoom with its 95% "
              f"interval" if s["rounds"] > 1 else "medians over the frames, one round of the zoom")
    return join(*figs, f"fracsteal replayed `{s['script'].rsplit('/', 1)[-1]}`: {s['frames']} frames of "
                       f"{s['width']}x{s['height']} pixels, from the whole set to {fmt_num(s['magnification_max'])} "
                       f"times closer. With synchronizing work stealing on {s['threads']} threads a frame took "
                       f"{fmt_ci(s['parallel_median_s'], *s['parallel_median_s_ci'])} s against "
                       f"{fmt_ci(s['sequential_median_s'], *s['sequential_median_s_ci'])} s for the sequential "
                       f"render ({rounds}): the parallel render was "
                       f"{fmt_ci(s['ratio'], *s['ratio_ci'])} times as fast, {verdict} the sequential one (per "
                       f"frame from {fmt_num(s['ratio_min'])} to {fmt_num(s['ratio_max'])} times; "
                       f"@fig-sched-fracsteal-strip, @fig-sched-fracsteal-times). {checked}")


def summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The paper's summary table (also written for the Snakemake report)."""
    ok = summary[summary["status"] == "ok"]
    if ok.empty:
        return pd.DataFrame({"workload": [], "scheduler": []})
    rows = []
    tmax = int(ok["threads"].max())
    for (workload, scheduler), f in ok.groupby(["workload", "scheduler"], sort=False):
        f = f.set_index("threads")
        best = f["median_time_s"].idxmin()
        fastest = f.loc[f["speedup_vs_sequential"].idxmax()] if f["speedup_vs_sequential"].notna().any() else None
        rows.append({"workload": workload, "scheduler": scheduler,
                     "1 thread, s": _value(f.loc[1], "median_time_s") if 1 in f.index else "n/a",
                     f"{tmax} threads, s": _value(f.loc[tmax], "median_time_s")
                     if scheduler != "sequential" and tmax in f.index else "",
                     "minimum, s": fmt_num(f.loc[best, "median_time_s"]),
                     "at threads": str(int(best)),
                     "speedup vs sequential": _value(fastest, "speedup_vs_sequential") if fastest is not None
                     else "n/a"})
    return pd.DataFrame(rows)


def summary(ok: pd.DataFrame, machine: dict) -> str:
    return join(
        "@tbl-sched-summary gives each scheduler's median time on one thread and on the most threads, its fastest "
        "median time and where it occurred (the seed's \"minimum time taken ... for cores = N\"), and its best "
        "speedup over the sequential code; in parentheses, 95% bootstrap intervals over the repetitions.",
        md_table(summary_table(ok), "Median times (95% bootstrap interval), minimum and speedup per workload and "
                 "scheduler.",
                 "tbl-sched-summary"),
    )


def report_tables(tables: dict[str, pd.DataFrame]) -> dict:
    return {"sched_summary_table": (summary_table(tables["sched_summary"]),
                                    "sched: median times, minimum and speedup per workload and scheduler")}


def fragments(tables: dict[str, pd.DataFrame], machine: dict) -> dict[str, str]:
    cells = tables["sched_summary"]
    writers = {"quicksort": quicksort, "speedup": speedup, "steals": steals, "mandelbrot": mandelbrot,
               "summary": summary}
    parts = {"setup": setup(cells, machine), **findings(cells[cells["status"] == "ok"], machine, writers),
             "fracsteal": fracsteal(tables["sched_fracsteal_frames"], machine)}
    return {name: parts[name] for name in FRAGMENTS}
