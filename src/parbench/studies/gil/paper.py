"""The generated parts of the gil section (`paper/sections/gil.qmd` includes them from
`paper/_generated/gil/`): this run's setup, the runtimes found and not found, the seed's
table, the figures, and every sentence that states a finding, computed here from the
study's tables. The fixed prose (what is measured and why) is in the section file.

Every finding names the execution (threads, processes) and worker count it speaks of.
Times, speedups and ratios are medians over the interleaved repetitions (interpreter
launches) with 95% bootstrap intervals; where two intervals overlap, or a speedup's
interval reaches 1, the text says "not distinguishable on this machine" instead of
ranking.
When the related study (sigpar) ran in the same run, its threading results are set
beside this study's native-call workload; otherwise the text says that it did not run.
"""

from __future__ import annotations

import pandas as pd

from parbench import stats
from parbench.paper.format import figure, fmt_ci, fmt_num, fmt_pct, join, md_table
from parbench.studies.gil import aggregate, report
from parbench.studies.gil import workloads as wl
from parbench.studies.gil.plan import RELATED_STUDY, RELATED_TABLE

TABLES = ["gil_summary", "gil_runtimes", "gil_comparisons"]
FRAGMENTS = ["setup", "runtimes", "report", "freethreading", "wall_time", "speedup", "utilization", "related",
             "summary"]
REPORT_TABLES = ["gil_speedup_table", "gil_runtimes_table", "gil_comparisons_table"]

# The seed's published numbers (not measured here): its multithread_cpu row, CPython 3.14
# against protoPython after the allocator fixes, and CPython's time in its earlier run.
SEED_CPYTHON_MS, SEED_PROTOPY_MS, SEED_CPYTHON_EARLIER_MS = 65.0, 215.0, 32.0
# where a build's source came from, in words
ORIGINS = {"debian": "the Debian archive's", "tarball": "a tarball's"}
# the runtimes of the free-threading findings
SRC, FT, FT_GIL = "cpython_src", "cpython_ft", "cpython_ft_gil"


# --- helpers ----------------------------------------------------------------------------------

def _ok(summary: pd.DataFrame) -> pd.DataFrame:
    return summary[summary["status"] == "ok"]


def _top_workers(summary: pd.DataFrame) -> int | None:
    par = summary[summary["execution"] != "sequential"]
    return int(par["workers"].max()) if len(par) else None


def _x(value) -> str:
    return "n/a" if value is None or pd.isna(value) else f"{float(value):.2f}x"


def _bounds(row) -> str:
    lo, hi = row.get("speedup_ci_low"), row.get("speedup_ci_high")
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return ""
    return f" [{lo:.2f}, {hi:.2f}]"


def _ci(row, column: str) -> tuple:
    """(low, high) of a column's interval (`<column>_ci_low/high`), (None, None) without one."""
    lo, hi = row.get(f"{column}_ci_low"), row.get(f"{column}_ci_high")
    return (None if lo is None or pd.isna(lo) else float(lo), None if hi is None or pd.isna(hi) else float(hi))


def _ms(row) -> str:
    """A point's median wall time in ms, with its interval."""
    lo, hi = _ci(row, "median_wall_sec")
    return fmt_ci(row["median_wall_sec"] * 1e3, None if lo is None else lo * 1e3, None if hi is None else hi * 1e3)


def _reaches_one(row) -> bool:
    """Whether a speedup's interval holds 1: no gain cannot be ruled out."""
    lo, hi = _ci(row, "speedup")
    return lo is not None and hi is not None and lo <= 1 <= hi


def _text(value) -> str:
    return value if isinstance(value, str) and value else ""


def verdict(speedup: float, workers: int) -> str:
    """How much N workers helped, in words (the rule is stated in the section):
    helped: at least 1 + 0.4 (N - 1); no gain: within 0.85 .. 1 + 0.15 (N - 1);
    slower: below 0.85; in between: helped a little."""
    if speedup >= 1 + 0.4 * (workers - 1):
        return "helped"
    if speedup < 0.85:
        return "slowed it down"
    if speedup < 1 + 0.15 * (workers - 1):
        return "made no difference"
    return "helped a little"


def _point(ok: pd.DataFrame, runtime: str, workload: str, execution: str, workers: int):
    f = ok[(ok["runtime"] == runtime) & (ok["workload"] == workload) & (ok["execution"] == execution)
           & (ok["workers"] == workers)]
    return f.iloc[0] if len(f) else None


def _has_gil(runtimes: pd.DataFrame) -> dict:
    return {r.runtime: r.has_gil for r in runtimes.itertuples()}


def _controls(runtimes: pd.DataFrame) -> set:
    """The native control's names (drawn as the machine's ceiling, never ranked)."""
    if "control" not in runtimes:
        return set()
    return set(runtimes.loc[runtimes["control"] == True, "runtime"])  # noqa: E712


def _times(value, lo, hi) -> str:
    """A ratio of times with its interval: `1.23x [1.10, 1.31]`."""
    if value is None or pd.isna(value):
        return "n/a"
    bounds = "" if lo is None or hi is None or pd.isna(lo) or pd.isna(hi) else f" [{lo:.2f}, {hi:.2f}]"
    return f"{value:.2f}x{bounds}"


def _point_name(execution: str, workers: int) -> str:
    return "sequential" if execution == "sequential" else f"{execution} x{workers}"


# --- fragments --------------------------------------------------------------------------------

def jit_warmup(summary: pd.DataFrame, quiet: dict | None) -> str:
    """How the warm-up of the runtimes that tell their JIT's compile time ended, and how
    much compiling their timed runs still overlapped ('' when none tells)."""
    if "jit_clock" not in summary:
        return ""
    ok = summary[(summary["status"] == "ok") & summary["jit_clock"].notna()]
    if not len(ok):
        return ""
    said = []
    for runtime, rows in ok.groupby("runtime", sort=False):
        rounds = stats.median(rows["median_warmup_rounds"].dropna().tolist())
        jit_ms = stats.median((rows["median_jit_sec"].dropna() * 1e3).tolist())
        cells = rows.drop_duplicates("workload")  # one launch measures every point of its workload
        launches = int(cells["repetitions_ok"].sum())
        quiet_launches = int(cells["jit_quiet_launches"].fillna(0).sum())
        said.append(f"{runtime} ran a median of {fmt_num(rounds)} warm-up round(s), ended with its JIT quiet in "
                    f"{quiet_launches} of {launches} launches, and its timed runs overlapped a median of "
                    f"{fmt_num(jit_ms)} ms of compiling")
    if quiet:
        rule = (f"the warm-up went on while the JIT was busy: another round of every point as long as the last one "
                f"overlapped more compiling than {fmt_pct(quiet['fraction'])} of its wall time, at most "
                f"{quiet['max_warmup_runs']} rounds (compiling during a timed run takes a core from the threads, "
                f"not from a sequential run)")
    else:
        rule = "the warm-up ran its fixed number of rounds (`gil.jit_quiet` is off)"
    return (f"Where a runtime tells how long its JIT has compiled ({', '.join(sorted(set(ok['jit_clock'])))}), "
            f"{rule}. " + "; ".join(said) + ".")


def setup(summary: pd.DataFrame, runtimes: pd.DataFrame, machine: dict) -> str:
    cfg = machine["config"]["gil"]
    loads = cfg["workloads"]
    parts = []
    described = []
    for name in [w for w in wl.ORDER if w in loads]:
        s = loads[name]
        kind = wl.get(name).kind
        if kind == "sum_range":
            what = f"{s['chunks']} chunks of `sum(range({s['n']:_}))`" + (f", each {s['repeat']} times"
                                                                       if s["repeat"] > 1 else "")
        elif kind == "alloc":
            what = (f"{s['chunks']} chunks each building {s['items']:,} small dicts with lists, in batches of "
                    f"{s['batch']}")
        else:
            what = f"{s['chunks']} chunks each hashing {s['updates']} x {s['buffer_kib']:,} KiB with SHA-256"
        described.append(f"{name} ({what})")
    workers = sorted(cfg["workers"])
    parts.append(
        f"This run measured {len(described)} workloads: " + "; ".join(described) + ". Executions: "
        f"{', '.join(cfg['executions'])}; threads and processes at {', '.join(map(str, workers))} workers. Each "
        f"point ran {cfg['warmup_runs']} warm-up run(s) (more where a runtime asks for them: "
        + ", ".join(f"{n} {r['warmup_runs']}" for n, r in cfg["runtimes"].items()
                    if r["warmup_runs"] is not None and n in set(runtimes["runtime"]))
        + f") and then {cfg['runs_per_cell']} timed run(s), round-robin over the points, in one launch of the "
        f"interpreter; a launch's time for a point is the median of its runs.")
    jit_line = jit_warmup(summary, cfg.get("jit_quiet"))
    if jit_line:
        parts.append(jit_line)
    reps = int(summary["repetitions"].max()) if "repetitions" in summary and len(summary) else 1
    if reps > 1:
        parts.append(f"Each cell (runtime and workload) was launched {reps} times, interleaved: every cell once, then "
                     f"every cell again, each round in a shuffled order (seed "
                     f"{machine['config'].get('run_order_seed')}), so that drift of the machine hits every runtime "
                     f"alike. Times, speedups and ratios are medians over the launches with their "
                     f"{fmt_pct(cfg['confidence'])} percentile-bootstrap intervals (a speedup's resamples the "
                     f"launches of both points it compares); where two intervals overlap, or a speedup's interval "
                     f"holds 1, the difference is called not distinguishable on this machine. With {reps} "
                     f"launches an interval cannot be wider than their range: it shows how far they disagree.")
    else:
        parts.append("Each cell was launched once (`gil.repetitions: 1`), so no number carries an interval and no "
                     "difference below can be told apart from noise.")
    failed = summary[summary["status"] == "failed"]
    if len(failed):
        parts.append("::: {.callout-warning title=\"Points that failed their checks\"}\n"
                     + "; ".join(f"{r.runtime} {r.workload} {r.execution} x{r.workers}: {r.failure}"
                                 for r in failed.itertuples())
                     + ". They are left out of every figure and number below.\n:::")
    else:
        n_ok = int((summary["status"] == "ok").sum())
        parts.append(f"Every chunk of every run of the {n_ok} measured points returned the expected result.")
    return join(*parts)


def runtimes_table(runtimes: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for r in runtimes.itertuples():
        if r.status == "measured":
            gil = {True: "yes", False: "no"}.get(r.has_gil, "unknown")
            processes = "yes" if r.multiprocessing else ("no" if r.multiprocessing is False else "n/a")
            origin = getattr(r, "origin", None)
            if origin == "build":
                where = (f"built here from {ORIGINS.get(r.source_origin, r.source_origin)} source of {r.build_version}"
                         + (f" ({r.source_package} {r.source_debian_version})" if _text(r.source_package) else "")
                         + ("" if r.source_pinned else ", not pinned"))
            else:
                where = f"`{r.resolved_command}`" if _text(r.resolved_command) else ""
            env = _text(getattr(r, "environment", None))
            rows.append({"runtime": r.runtime, "status": "measured",
                         "implementation": f"{r.implementation} {r.runtime_version}",
                         "host": _text(r.host_version), "GIL": gil, "multiprocessing": processes,
                         "command": where + (f", {env}" if env else "")})
        else:
            rows.append({"runtime": r.runtime, "status": "not measured", "implementation": "", "host": "",
                         "GIL": "", "multiprocessing": "", "command": f"`{r.command}`: {r.reason}".replace("|", "/")})
    return pd.DataFrame(rows, columns=["runtime", "status", "implementation", "host", "GIL", "multiprocessing",
                                       "command"])


def runtimes_part(summary: pd.DataFrame, runtimes: pd.DataFrame, machine: dict) -> str:
    measured = runtimes[runtimes["status"] == "measured"]
    absent = runtimes[runtimes["status"] != "measured"]
    text = (f"{len(measured)} of the {len(runtimes)} configured runtimes were measured"
            + (": " + ", ".join(f"{r.runtime} ({r.implementation} {r.runtime_version}, "
                                f"{'with' if r.has_gil else 'without' if r.has_gil is False else 'GIL unknown,'} a GIL)"
                                for r in measured.itertuples()) if len(measured) else "")
            + " (@tbl-gil-runtimes).")
    if len(absent):
        text += (" Not measured, and not in any figure or table of results: "
                 + "; ".join(f"{r.runtime} ({r.reason})" for r in absent.itertuples()) + ".")
    no_mp = measured[measured["multiprocessing"] == False]  # noqa: E712  (None: unknown)
    if len(no_mp):
        text += (" " + ", ".join(no_mp["runtime"]) + " could not run the processes execution: "
                 + "; ".join(f"{r.processes_unavailable_reason}" for r in no_mp.itertuples()) + ".")
    return join(text, md_table(runtimes_table(runtimes), "The runtimes: what was found and measured, and what was "
                               "not, with the reason.", "tbl-gil-runtimes"))


def report_part(summary: pd.DataFrame, runtimes: pd.DataFrame, machine: dict) -> str:
    cfg = machine["config"]["gil"]
    baseline = cfg["baseline"]
    point = aggregate.seed_point(summary)
    controls = _controls(runtimes)
    measured = [r for r in runtimes.loc[runtimes["status"] == "measured", "runtime"] if r not in controls]
    others = [r for r in measured if r != baseline]
    if point is None or baseline not in measured:
        return f"No threads execution of {baseline} was measured in this run, so the seed's table is empty.\n"
    seed = seed_row(summary, runtimes, point)
    if not others:
        return join(f"Only {baseline} was measured in this run, so the seed's table, which sets another runtime "
                    f"beside {baseline}, has no row here.", seed)
    blocks, sentences = [], []
    for name in others:
        rows = aggregate.seed_rows(summary, name, baseline, point)
        blocks.append(f"{name} against {baseline}:\n\n```text\n{report.box_table(rows, name, baseline)}\n```")
        numeric = [r for r in rows if isinstance(r["runtime_ms"], float) and isinstance(r["baseline_ms"], float)]
        if numeric:
            best = min(numeric, key=lambda r: r["runtime_ms"] / r["baseline_ms"])
            worst = max(numeric, key=lambda r: r["runtime_ms"] / r["baseline_ms"])
            def took(row):
                ratio = row["runtime_ms"] / row["baseline_ms"]
                return f"{ratio:.2f} times {baseline}'s time on {row['benchmark']} (\"{report.ratio_text(ratio)}\")"

            sentences.append(f"{name} took {took(best)}" + (f" and {took(worst)}" if worst is not best else ""))
    intro = (f"The seed's report, as its runner prints it: each workload in threads at {point[1]} workers, the "
             f"median wall time in milliseconds, and the ratio of the runtime's time to {baseline}'s (below 1 the "
             f"runtime is faster). The same tables are in `multithread_cpu_report.md` beside the data.")
    return join(intro, *blocks, "In threads at " + f"{point[1]} workers, " + "; ".join(sentences) + "."
                if sentences else "", seed)


def seed_row(summary: pd.DataFrame, runtimes: pd.DataFrame, point: tuple[str, int]) -> str:
    """The seed's row reproduced: the CPython runtimes on its own workload (4 chunks of
    sum(range(50_000)) in threads), in ms, beside the seed's CPython 3.14 and protoPython,
    and whether the seed's times can have included interpreter start-up, which ours
    exclude (each runtime's start-up is measured apart, from its launches)."""
    ok = _ok(summary)
    rt = runtimes.set_index("runtime")
    cpythons = [r for r in rt.index if r.startswith("cpython") and rt.loc[r, "status"] == "measured"
                and rt.loc[r, "implementation"] == "CPython"]
    rows, said = [], []
    for name in cpythons:
        row = _point(ok, name, "multithread_cpu", *point)
        if row is None:
            continue
        startup = rt.loc[name, "median_startup_sec"] if "median_startup_sec" in rt.columns else None
        up = None if startup is None or pd.isna(startup) else float(startup) * 1e3
        rows.append({"runtime": name, "version": f"{rt.loc[name, 'implementation']} {rt.loc[name, 'runtime_version']}",
                     f"threads ({point[1]}), ms": _ms(row), "start-up, ms": fmt_num(up),
                     "start-up + run, ms": fmt_num(None if up is None else up + row["median_wall_sec"] * 1e3)})
        said.append((name, row["median_wall_sec"] * 1e3, up))
    if not rows:
        return "No CPython runtime measured the seed's workload in threads in this run.\n"
    table = md_table(pd.DataFrame(rows), f"The seed's row: 4 chunks of `sum(range(50_000))` in threads at "
                     f"{point[1]} workers, medians over the launches (95% interval), beside each interpreter's "
                     f"start-up measured apart; the seed reported CPython 3.14 at {SEED_CPYTHON_MS:.0f} ms and "
                     f"protoPython at {SEED_PROTOPY_MS:.0f} ms.", "tbl-gil-seed-row")
    base, run_ms, up = next((x for x in said if x[2] is not None), said[0])
    text = (f"The seed reported {SEED_CPYTHON_MS:.0f} ms for CPython 3.14 and {SEED_PROTOPY_MS:.0f} ms for "
            f"protoPython on this workload ({SEED_CPYTHON_EARLIER_MS:.0f} ms for CPython in an earlier run). Here the "
            f"work itself took {base} {fmt_num(run_ms)} ms: the seed's CPython time is "
            f"{fmt_num(SEED_CPYTHON_MS / run_ms)} times that.")
    if up is not None:
        total = up + run_ms
        near = SEED_CPYTHON_EARLIER_MS / 2 <= total <= SEED_CPYTHON_MS * 2
        text += (f" Starting {base} took {fmt_num(up)} ms, so start-up and run together come to {fmt_num(total)} ms"
                 + (", the order of the seed's times: the seed timed whole interpreter runs, start-up included "
                    "(its runner launches each interpreter on the script), while every time here excludes start-up."
                    if near and SEED_CPYTHON_EARLIER_MS > 3 * run_ms else
                    "; the seed's times cannot be told apart into start-up and work from these numbers. Every time "
                    "here excludes start-up."))
    return join(text, table)


def freethreading(summary: pd.DataFrame, runtimes: pd.DataFrame, comparisons: pd.DataFrame | None,
                  machine: dict) -> str:
    """The GIL's cost on one binary (PYTHON_GIL=1 against 0), the free-threaded build's
    overhead against the default build, and allocation under free-threading, from the
    comparisons table: every ratio with its interval, "not distinguishable" where it holds 1."""
    rt = runtimes.set_index("runtime")
    absent = [n for n in (SRC, FT, FT_GIL) if n not in rt.index or rt.loc[n, "status"] != "measured"]
    if absent:
        reasons = "; ".join(f"{n} ({rt.loc[n, 'reason'] if n in rt.index else 'not configured'})" for n in absent)
        lead = f"Not measured in this run: {reasons}."
        if {FT, FT_GIL, SRC} <= set(absent):
            return lead + " So this run cannot say what the GIL costs within one binary, nor what free-threading costs.\n"
    else:
        lead = ""
    versions = ", ".join(f"{n} is {rt.loc[n, 'implementation']} {rt.loc[n, 'runtime_version']}"
                         + (f" ({rt.loc[n, 'environment']})" if _text(rt.loc[n, 'environment']) else "")
                         for n in (SRC, FT, FT_GIL) if n not in absent)
    parts = [join(lead, f"The free-threaded runtimes: {versions}." if versions else "")]
    comp = comparisons if comparisons is not None else pd.DataFrame()
    rows = []
    for name, title in (("gil_cost", "GIL on / off (same binary)"),
                        ("freethreading_overhead", "free-threaded / default build")):
        f = comp[comp["comparison"] == name] if len(comp) else comp
        for r in f.itertuples():
            rows.append({"comparison": title, "workload": r.workload, "execution": _point_name(r.execution, r.workers),
                         "time ratio": _times(r.time_ratio, r.time_ratio_ci_low, r.time_ratio_ci_high),
                         "distinguishable": {True: "yes", False: "no"}.get(r.distinguishable, "n/a")})
    if not rows:
        return join(*parts, "No point was measured by both runtimes of a comparison in this run.")
    gil = comp[comp["comparison"] == "gil_cost"]
    if len(gil):
        told = gil[gil["distinguishable"] == True]  # noqa: E712

        def listed(rows):
            return ", ".join(f"{r.workload} {_point_name(r.execution, r.workers)} "
                             f"{_times(r.time_ratio, r.time_ratio_ci_low, r.time_ratio_ci_high)}"
                             for r in rows.sort_values("time_ratio", ascending=False).itertuples())

        slower, faster = told[told["time_ratio"] > 1], told[told["time_ratio"] < 1]
        text = (f"The GIL's cost within one binary ({FT_GIL} against {FT}, the same free-threaded interpreter with "
                f"PYTHON_GIL=1 and 0): the GIL changed the time distinguishably at {len(told)} of {len(gil)} points"
                + (f"; it made the runs slower at {listed(slower)}" if len(slower) else "")
                + (f"; faster at {listed(faster)}" if len(faster) else "")
                + ("; at every other point the two are not distinguishable on this machine" if len(told) else ""))
        seq = gil[gil["execution"] == "sequential"]
        if len(seq):
            text += ("; sequentially, where no thread waits for another, " + ", ".join(
                f"{r.workload} {_times(r.time_ratio, r.time_ratio_ci_low, r.time_ratio_ci_high)}"
                + ("" if r.distinguishable else " (not distinguishable)") for r in seq.itertuples()))
        parts.append(text + ".")
    over = comp[(comp["comparison"] == "freethreading_overhead") & (comp["execution"] == "sequential")]
    if len(over):
        text = ("The free-threaded build's single-thread overhead (sequential runs of {ft} over {src}): ".format(
            ft=FT, src=SRC) + "; ".join(
            f"{r.workload} {_times(r.time_ratio, r.time_ratio_ci_low, r.time_ratio_ci_high)}"
            + (f", {fmt_pct(abs(r.time_ratio - 1))} {'slower' if r.time_ratio > 1 else 'faster'}"
               if r.distinguishable else ", not distinguishable on this machine") for r in over.itertuples()) + ".")
        if not over["same_version"].fillna(False).all():
            text += (f" The two are not the same version ({over['runtime_version'].iloc[0]} and "
                     f"{over['against_version'].iloc[0]}): the ratio includes what changed between them.")
        elif set(over["runtime_origin"]) != set(over["against_origin"]):
            text += (f" They come from different places ({over['runtime_origin'].iloc[0]} and "
                     f"{over['against_origin'].iloc[0]}), which may have used other build options.")
        parts.append(text)
    top = _top_workers(summary)
    alloc = [_point(_ok(summary), n, "multithread_alloc", "threads", top) for n in (SRC, FT, FT_GIL)] if top else []
    said = [f"{n} {_x(r['speedup_vs_sequential'])}{_bounds(r)}" for n, r in zip((SRC, FT, FT_GIL), alloc)
            if r is not None]
    if said:
        parts.append(f"Allocation under free-threading (multithread_alloc, threads at {top} workers against the same "
                     f"runtime's sequential run), where the seed's protoPython first lost 70x to a shared allocator: "
                     + ", ".join(said) + ".")
    parts.append(md_table(pd.DataFrame(rows), "Time ratios of the free-threaded runtimes, point by point (medians "
                          "over the launches; brackets: 95% bootstrap interval resampling both points' launches; "
                          "above 1 the first runtime is slower).", "tbl-gil-freethreading"))
    return join(*parts)


def comparisons_table(comparisons: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame([{"comparison": r.comparison, "runtime": r.runtime, "against": r.against,
                          "workload": r.workload, "point": _point_name(r.execution, r.workers),
                          "time ratio": _times(r.time_ratio, r.time_ratio_ci_low, r.time_ratio_ci_high),
                          "distinguishable": r.distinguishable} for r in comparisons.itertuples()],
                        columns=["comparison", "runtime", "against", "workload", "point", "time ratio",
                                 "distinguishable"])


def wall_time(summary: pd.DataFrame, runtimes: pd.DataFrame, machine: dict) -> str:
    profile = machine["profile"]
    ok, top = _ok(summary), _top_workers(summary)
    ok = ok[~ok["runtime"].isin(_controls(runtimes))]  # the control's work is scaled: not a time to rank
    fig = figure(profile, "gil_wall_time", "Wall time by runtime and execution, per workload: sequential, and "
                 f"threads and processes at {top} workers (median of the launches; whiskers: 95% bootstrap "
                 "interval).", "fig-gil-wall-time")
    seq = ok[ok["execution"] == "sequential"]
    clauses = []
    for workload in [w for w in wl.ORDER if w in set(seq["workload"])]:
        f = seq[seq["workload"] == workload].sort_values("median_wall_sec")
        if len(f) > 1:
            fast, slow = f.iloc[0], f.iloc[-1]
            if stats.distinguishable(_ci(fast, "median_wall_sec"), _ci(slow, "median_wall_sec")):
                clauses.append(f"on {workload} {fast['runtime']} was fastest ({_ms(fast)} ms) and {slow['runtime']} "
                               f"slowest ({_ms(slow)} ms)")
            else:
                clauses.append(f"on {workload} the runtimes were not distinguishable on this machine ("
                               + ", ".join(f"{r['runtime']} {_ms(r)} ms" for _, r in f.iterrows()) + ")")
        elif len(f):
            only = f.iloc[0]
            clauses.append(f"on {workload} {only['runtime']} took {_ms(only)} ms")
    text = ("Run sequentially, " + "; ".join(clauses) + " (@fig-gil-wall-time).") if clauses else ""
    return join(fig, text)


def speedup(summary: pd.DataFrame, runtimes: pd.DataFrame, machine: dict) -> str:
    profile = machine["profile"]
    ok, top = _ok(summary), _top_workers(summary)
    fig = figure(profile, "gil_thread_speedup", "Speedup against the same runtime's sequential run, per workload: "
                 "threads solid, processes dashed (median of the launches; bars: 95% bootstrap interval from both "
                 "points' launches); dotted: linear speedup.", "fig-gil-speedup")
    if top is None:
        return join(fig)
    gil = _has_gil(runtimes)
    controls = _controls(runtimes)
    every = ok[(ok["execution"] == "threads") & (ok["workers"] == top)].dropna(subset=["speedup_vs_sequential"])
    threads = every[~every["runtime"].isin(controls)]
    groups: dict[tuple, list[str]] = {}
    for r in threads.itertuples():
        pure = wl.get(r.workload).pure_python
        key = (gil.get(r.runtime), pure, verdict(r.speedup_vs_sequential, top))
        row = r._asdict()
        flag = (" (its interval holds 1: not distinguishable from no gain on this machine)"
                if key[2] != "made no difference" and _reaches_one(row) else "")
        groups.setdefault(key, []).append(f"{r.runtime} on {r.workload} {_x(r.speedup_vs_sequential)}"
                                          + _bounds(row) + flag)
    bullets = []
    for has_gil in (True, False, None):
        lock = {True: "with a GIL", False: "without a GIL", None: "whose GIL is unknown"}[has_gil]
        for pure in (True, False):
            kind = "the pure-Python workloads" if pure else "the native-call workload"
            for word in ("helped", "helped a little", "made no difference", "slowed it down"):
                items = groups.get((has_gil, pure, word))
                if items:
                    bullets.append(f"- On runtimes {lock}, {top} threads {word} on {kind}: " + ", ".join(items) + ".")
    rule = (f"A speedup of at least {fmt_num(1 + 0.4 * (top - 1))} counts as helped, below "
            f"{fmt_num(1 + 0.15 * (top - 1))} (down to 0.85) as no difference, below 0.85 as slower.")
    text = (f"When do threads help? Threads at {top} workers against the same runtime's sequential run (speedup, "
            f"with its 95% bootstrap interval in brackets):\n\n" + "\n".join(bullets) + f"\n\n{rule}") if bullets else ""
    ceiling = ceiling_text(every, controls, top)
    procs = ok[(ok["execution"] == "processes") & (ok["workers"] == top)].dropna(subset=["speedup_vs_sequential"])
    ptext = ""
    if len(procs):
        ptext = (f"Processes at {top} workers, which share no interpreter, reached " + ", ".join(
            f"{r.runtime} on {r.workload} {_x(r.speedup_vs_sequential)}{_bounds(r._asdict())}"
            for r in procs.itertuples()) + "; they "
            "pay for starting the workers inside the timed run, which the seed's short multithread_cpu cannot "
            "hide.")
    alloc = threads[threads["workload"] == "multithread_alloc"]
    atext = ""
    if len(alloc):
        atext = (f"Allocation under threads (multithread_alloc, threads at {top} workers), where the seed's "
                 "protoPython first lost 70x to its shared allocator: " + ", ".join(
                     f"{r.runtime} {_x(r.speedup_vs_sequential)}{_bounds(r._asdict())}" for r in alloc.itertuples())
                 + " (@fig-gil-speedup).")
    return join(fig, text, ceiling, ptext, atext)


def ceiling_text(threads: pd.DataFrame, controls: set, top: int) -> str:
    """The native control's speedup at `top` threads (the machine's ceiling for the sum
    workloads at this run length), and which runtimes reach it: their speedup's interval
    overlaps the control's."""
    if not controls:
        return ""
    control = threads[threads["runtime"].isin(controls)]
    if control.empty:
        return (f"The native control ({', '.join(sorted(controls))}) has no threads point at {top} workers in this "
                "run, so the machine's own ceiling is not drawn.")
    said, readable = [], False
    for r in control.itertuples():
        row = r._asdict()
        others = threads[(threads["workload"] == r.workload) & ~threads["runtime"].isin(controls)]
        reach = [o.runtime for o in others.itertuples()
                 if not stats.distinguishable(_ci(o._asdict(), "speedup"), _ci(row, "speedup"))
                 or o.speedup_vs_sequential >= r.speedup_vs_sequential]
        if _reaches_one(row):
            said.append(f"{_x(r.speedup_vs_sequential)}{_bounds(row)} on {r.workload}, an interval that holds 1: in "
                        f"this run the machine's own {top} threads were not distinguishable from one, so no runtime's "
                        f"speedup on it can be read against the machine")
            continue
        readable = True
        said.append(f"{_x(r.speedup_vs_sequential)}{_bounds(row)} on {r.workload}"
                    + (f" (reached, within the intervals, by {', '.join(reach)})" if reach else
                       " (no runtime reached it)"))
    return (f"The machine's own ceiling: the native control ({', '.join(sorted(controls))}: the same chunks summed "
            f"in C by POSIX threads, no interpreter, each run about as long as CPython's, measured in the same run) "
            f"gained, with {top} threads, " + "; ".join(said) + "."
            + (" A runtime at that line is capped by the machine, not by its design; below it, by the runtime."
               if readable else ""))


def utilization(summary: pd.DataFrame, runtimes: pd.DataFrame, machine: dict) -> str:
    profile = machine["profile"]
    ok, top = _ok(summary), _top_workers(summary)
    fig = figure(profile, "gil_cpu_utilization", f"CPU seconds per wall second of threads and processes at {top} "
                 "workers, per workload; 1 is one busy core. Bars: 95% bootstrap intervals over the launches.",
                 "fig-gil-cpu")
    if top is None:
        return join(fig)
    threads = ok[(ok["execution"] == "threads") & (ok["workers"] == top)].dropna(subset=["cpu_sec_per_wall_sec"])
    threads = threads[~threads["runtime"].isin(_controls(runtimes))]
    if threads.empty:
        return join(fig, "No runtime could measure its CPU time in this run.")
    by_runtime = threads.groupby("runtime", sort=False)["cpu_sec_per_wall_sec"]
    text = (f"With threads at {top} workers the interpreter used " + ", ".join(
        f"{name} {fmt_num(v.min())} to {fmt_num(v.max())}" for name, v in by_runtime)
        + f" CPU seconds per wall second across the workloads (@fig-gil-cpu): a value near 1 means one thread ran "
          f"at a time, near {top} that all ran at once. It shows what a GIL does independently of how fast the "
          f"machine happened to be; on a JVM it also counts the JIT compiler and garbage collector threads.")
    seq = ok[ok["execution"] == "sequential"]["cpu_sec_per_wall_sec"].dropna()
    if len(seq) and seq.median() < 0.9:
        text += (f" Sequential runs themselves got a median of {fmt_num(seq.median())} CPU seconds per wall second "
                 f"({fmt_num(seq.min())} to {fmt_num(seq.max())}): other load on the machine held the cores for the "
                 f"rest of the time, and the speedups above are limited by it, not only by the runtimes.")
    dropped = ok[ok["cpu_null_reason"].notna()] if "cpu_null_reason" in ok else ok.iloc[0:0]
    if len(dropped):
        shown = list(dropped.itertuples())[:4]
        text += (f" CPU readings that cannot be right are recorded null and not drawn, at {len(dropped)} point(s)"
                 + (", among them " if len(dropped) > len(shown) else ": ") + "; ".join(
                     f"{r.runtime} {r.workload} {_point_name(r.execution, r.workers)} ({r.cpu_null_reason})"
                     for r in shown) + ".")
    return join(fig, text)


def related(summary: pd.DataFrame, runtimes: pd.DataFrame, machine: dict, other: pd.DataFrame | None) -> str:
    studies = machine["config"].get("studies", [])
    if RELATED_STUDY not in studies or other is None:
        return (f"The {RELATED_STUDY} study did not run in this run, so its threading results cannot be set beside "
                "the native-call workload here.\n")
    ok, top = _ok(summary), _top_workers(summary)
    cells = other[(other["status"] == "ok") & (other["mode"] == "threading")]
    if cells.empty or top is None:
        return f"The {RELATED_STUDY} study ran, but none of its threading cells passed their checks.\n"
    w = int(cells["workers"].max())
    at = cells[cells["workers"] == w]
    parts = []
    for kind, f in at.groupby("kind", sort=False):
        eff = f["scaling_efficiency"].dropna()
        if len(eff):
            parts.append(f"{kind} signatures a median scaling efficiency of {fmt_pct(eff.median())} "
                         f"({len(eff)} cells, {fmt_pct(eff.min())} to {fmt_pct(eff.max())})")
    baseline = machine["config"]["gil"]["baseline"]
    native = _point(ok, baseline, "multithread_hashlib", "threads", w)
    pure = _point(ok, baseline, "multithread_cpu_scaled", "threads", w)
    here = []
    if native is not None:
        here.append(f"{fmt_pct(native['efficiency'])} for multithread_hashlib")
    if pure is not None:
        here.append(f"{fmt_pct(pure['efficiency'])} for the pure-Python multithread_cpu_scaled")
    text = (f"In the same run, {RELATED_STUDY}'s threading cells at {w} workers reached " + "; ".join(parts)
            + f" (@sec-{RELATED_STUDY}-efficiency). Its signing and verifying run in C with the GIL released, like "
              f"hashlib here")
    if here:
        text += (f": {baseline} threads at {w} workers reached an efficiency (speedup / workers) of "
                 + " and ".join(here))
    return text + ". Threads in CPython scale when the work is a native call that releases the GIL, and not when it " \
                  "is Python bytecode.\n"


def speedup_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The paper's table: per runtime and workload, sequential time and what threads and
    processes at the most workers did (also written for the Snakemake report)."""
    ok = _ok(summary)
    top = _top_workers(summary)
    rows = []
    for (runtime, workload), f in ok.groupby(["runtime", "workload"], sort=False):
        seq = _point(f, runtime, workload, "sequential", 1)
        thr = _point(f, runtime, workload, "threads", top) if top else None
        prc = _point(f, runtime, workload, "processes", top) if top else None
        rows.append({
            "runtime": runtime, "workload": workload,
            "sequential, ms": _ms(seq) if seq is not None else "n/a",
            f"threads ({top}), ms": _ms(thr) if thr is not None else "n/a",
            "threads speedup": (_x(thr["speedup_vs_sequential"]) + _bounds(thr)) if thr is not None else "n/a",
            "threads CPU s/s": fmt_num(thr["cpu_sec_per_wall_sec"]) if thr is not None else "n/a",
            f"processes ({top}) speedup": (_x(prc["speedup_vs_sequential"]) + _bounds(prc)) if prc is not None
            else "n/a",
            f"vs {summary['baseline'].iloc[0]} (threads)": (thr["ratio_text"] or "n/a") if thr is not None else "n/a",
        })
    return pd.DataFrame(rows)


def summary_part(summary: pd.DataFrame, runtimes: pd.DataFrame, machine: dict) -> str:
    top = _top_workers(summary)
    return join(
        f"@tbl-gil-speedup gives, per runtime and workload, the sequential time, the time in threads at {top} "
        "workers with its speedup and CPU use, the speedup in processes, and the seed's ratio to the baseline in "
        "threads; times carry their 95% bootstrap interval in parentheses, speedups in brackets. Points not "
        "measured (n/a) are listed above with the reason.",
        md_table(speedup_table(summary), f"Sequential time and what {top} threads and {top} processes did, per "
                 "runtime and workload (medians over the launches, 95% bootstrap intervals).", "tbl-gil-speedup"))


def report_tables(tables: dict[str, pd.DataFrame]) -> dict:
    return {"gil_speedup_table": (speedup_table(tables["gil_summary"]),
                                  "gil: sequential time, threads and processes at the most workers, per runtime and "
                                  "workload"),
            "gil_runtimes_table": (runtimes_table(tables["gil_runtimes"]),
                                   "gil: the runtimes measured and not measured, with the reason"),
            "gil_comparisons_table": (comparisons_table(tables["gil_comparisons"]),
                                      "gil: the GIL's cost on one binary and the free-threaded build's overhead, "
                                      "point by point")}


def fragments(tables: dict[str, pd.DataFrame], machine: dict) -> dict[str, str]:
    summary, runtimes = tables["gil_summary"], tables["gil_runtimes"]
    parts = {"setup": setup(summary, runtimes, machine), "runtimes": runtimes_part(summary, runtimes, machine)}
    if _ok(summary).empty:
        nothing = "No point passed its checks in this run, so there is nothing to report here.\n"
        return {**parts, **{name: nothing for name in FRAGMENTS if name not in parts}}
    parts.update(report=report_part(summary, runtimes, machine),
                 freethreading=freethreading(summary, runtimes, tables.get("gil_comparisons"), machine),
                 wall_time=wall_time(summary, runtimes, machine),
                 speedup=speedup(summary, runtimes, machine), utilization=utilization(summary, runtimes, machine),
                 related=related(summary, runtimes, machine, tables.get(RELATED_TABLE)),
                 summary=summary_part(summary, runtimes, machine))
    return parts
