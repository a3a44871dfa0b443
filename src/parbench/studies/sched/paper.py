"""The facts of the sched section, computed from the study's tables; the words are the
templates in `paper/sections/sched/` (one per generated part), which
`paper/sections/sched.qmd` includes from `paper/_generated/sched/`.

Times, speedups and efficiencies are medians over a cell's repetitions with their 95%
bootstrap intervals. Python computes numbers and verdicts, never sentences: who had the
lowest time is a fact, whether the others can be told apart from it is a verdict
("slower than", or "not distinguishable on this machine from") from the two intervals.
`tbb_parallel_sort` is TBB's own sort, another algorithm than the schedulers' quicksort:
it is stated apart as a reference, never ranked with them.
"""

from __future__ import annotations

import re

import pandas as pd

from parbench.paper.facts import SAME, SEED_SAME, Fact, Facts
from parbench.paper.format import fmt_ci, fmt_num
from parbench.studies.sched.plan import REFERENCES, SCHEDULER_ORDER

# The processed tables the facts read.
TABLES = ["sched_summary", "sched_fracsteal_frames", "sched_load"]
ZOOM = "parbench.studies.sched.fracsteal_tables:summary_frame"
ZOOM_FRAMES = "parbench.studies.sched.fracsteal_tables:speedups"
# The columns that name one row of each table (and of the tables derived from it).
KEYS = {
    "sched_summary": ["workload", "scheduler", "threads", "hostname"],
    "sched_fracsteal_frames": ["status"],  # a failed zoom: its one row
    f"sched_fracsteal_frames|{ZOOM}": [],  # one row: the zoom
    f"sched_fracsteal_frames|{ZOOM_FRAMES}": ["frame"],
}
# The generated parts (templates in paper/sections/sched/), in the order the section
# includes them; `headline` and `limitations` go to the paper's summary and limitations.
FRAGMENTS = ["setup", "quicksort", "speedup", "steals", "mandelbrot", "fracsteal", "summary", "headline",
             "limitations"]
# The paper's tables, also written as HTML and CSV for Snakemake's report.
REPORT_TABLES = ["sched_summary_table"]
SEED = "sched.txt"
CONFIDENCE = "parbench.studies.sched.aggregate:CONFIDENCE"
# The seed's console names for its schedulers (its make targets).
SEED_PROGRAMS = {"ws": "quicksteal", "lifo": "quicklifo"}

# How the text names each scheduler (the figures and tables use the codes).
NAMES = {"sequential": "the sequential code", "lifo": "LIFO", "ws": "work stealing",
         "ws_sync": "synchronizing work stealing", "openmp": "OpenMP", "tbb": "the TBB task_group",
         "tbb_parallel_sort": "TBB's parallel_sort"}


def _id(*parts) -> str:
    return ".".join(str(p).replace(" ", "_") for p in parts)


def _t(row) -> str:
    return f"t{int(row['threads'])}"


def _about(row) -> tuple[str, ...]:
    return ("sequential",) if row["scheduler"] == "sequential" else (NAMES[row["scheduler"]],)


def cell_fact(f: Facts, row, column: str, short: str, *, fmt: str = "num", unit: str | None = None,
              interval: bool = True) -> Fact:
    """A column of one cell (a row of sched_summary)."""
    return f.lookup(_id(short, row["workload"], row["scheduler"], _t(row)), "sched_summary", row, column, fmt=fmt,
                    unit=unit, interval=interval, about=_about(row))


def time_fact(f: Facts, row) -> Fact:
    return cell_fact(f, row, "median_time_s", "time", unit="s")


def _ranked(rows: pd.DataFrame) -> pd.DataFrame:
    """The schedulers and peers that ran the same algorithm: no sequential code, no
    reference."""
    return rows[~rows["scheduler"].isin(["sequential", *REFERENCES])]


def _order(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.sort_values("scheduler", key=lambda s: s.map(SCHEDULER_ORDER.index))


# --- setup ----------------------------------------------------------------------------------

def setup(f: Facts, summary: pd.DataFrame, machine: dict) -> dict:
    f.config("qs_size", "sched.quicksort.size", fmt="int")
    f.config("qs_seed", "sched.quicksort.seed", fmt="int")
    f.config("qs_cutoff", "sched.quicksort.cutoff", fmt="int")
    f.config("mb_width", "sched.mandelbrot.width", fmt="int")
    f.config("mb_height", "sched.mandelbrot.height", fmt="int")
    f.config("mb_max_iter", "sched.mandelbrot.max_iter", fmt="int")
    f.config("mb_threshold", "sched.mandelbrot.threshold_pixels", fmt="int")
    f.config("mb_frames", "sched.mandelbrot.frames", fmt="int")
    f.config("runs_per_cell", "sched.runs_per_cell", fmt="int")
    f.config("backoff_min", "sched.backoff.min_ns", fmt="int", unit="ns")
    f.config("backoff_max", "sched.backoff.max_ns", fmt="int", unit="ns")
    f.config("order_seed", "run_order_seed", fmt="plain")
    f.constant("confidence", CONFIDENCE, fmt="pct")
    f.aggregate("threads", "sched_summary", "values", "threads", fmt="list")
    f.aggregate("n_cells", "sched_summary", "count")
    reps = f.aggregate("repetitions", "sched_summary", "max", "repetitions", fmt="int")
    failed = summary[summary["status"] == "failed"]
    f.aggregate("n_failed", "sched_summary", "count", where={"status": "failed"})
    failed_rows = [{"row": r, "label": f"{r['workload']} {r['scheduler']} {_t(r)}",
                    "failure": cell_fact(f, r, "failure", "failure", fmt="text", interval=False)}
                   for _, r in failed.iterrows()]
    unavailable = summary[summary["status"] == "unavailable"].drop_duplicates("scheduler")
    unavailable_rows = [{"row": r, "name": NAMES[r["scheduler"]],
                         "failure": cell_fact(f, r, "failure", "failure", fmt="text", interval=False)}
                        for _, r in unavailable.iterrows()]
    return {"several_reps": (reps.value or 0) > 1, "failed": failed_rows, "unavailable": unavailable_rows}


# --- rankings -------------------------------------------------------------------------------

def ranking(f: Facts, rows: pd.DataFrame, prefix: str) -> dict | None:
    """Who had the lowest median time among `rows` (one workload, one thread count), and
    how each other one compares with it: a verdict from the two intervals."""
    rows = rows.dropna(subset=["median_time_s"]).sort_values("median_time_s")
    if rows.empty:
        return None
    best = rows.iloc[0]
    best_time = time_fact(f, best)
    others = []
    for _, r in _order(rows.iloc[1:]).iterrows():
        t = time_fact(f, r)
        v = f.verdict(_id(prefix, "vs_lowest", r["scheduler"]), t, best_time, better="faster than",
                      worse="slower than", higher_is_better=False)
        others.append({"name": NAMES[r["scheduler"]], "scheduler": r["scheduler"], "time": t, "verdict": v})
    verdicts = [o["verdict"] for o in others]
    return {"best": {"name": NAMES[best["scheduler"]], "scheduler": best["scheduler"], "time": best_time},
            "others": others,
            "highest": max(others, key=lambda o: o["time"].value, default=None),
            "n_others": f.count_of(_id(prefix, "n_others"), verdicts),
            "n_same": f.count_of(_id(prefix, "n_same"), verdicts, SAME),
            "n_spread": f.count_within_spread(_id(prefix, "n_within_spread"), verdicts),
            "n_slower": f.count_of(_id(prefix, "n_slower"), verdicts, "slower than"),
            "same": [o for o in others if o["verdict"].value == SAME],
            "slower": [o for o in others if o["verdict"].value == "slower than"]}


def _at(ok: pd.DataFrame, workload: str, threads: int) -> pd.DataFrame:
    return ok[(ok["workload"] == workload) & (ok["threads"] == threads)]


def _row(ok: pd.DataFrame, workload: str, scheduler: str, threads: int):
    rows = ok[(ok["workload"] == workload) & (ok["scheduler"] == scheduler) & (ok["threads"] == threads)]
    return rows.iloc[0] if len(rows) else None


def quicksort(f: Facts, ok: pd.DataFrame, tmax: int) -> dict:
    out: dict = {"qs": None}
    seq = _row(ok, "quicksort", "sequential", 1)
    top = _at(ok, "quicksort", tmax)
    rank = ranking(f, _ranked(top), "qs_rank") if tmax > 1 else None
    if seq is None or rank is None:
        return out
    qs = {"seq": time_fact(f, seq), "rank": rank, "peers": []}
    ws = _row(ok, "quicksort", "ws", tmax)
    if ws is not None:
        ws_speedup = cell_fact(f, ws, "speedup_vs_sequential", "speedup")
        qs["ws_speedup"] = ws_speedup
        # work stealing against the peers that run the same quicksort on their runtimes
        for peer in ("openmp", "tbb"):
            r = _row(ok, "quicksort", peer, tmax)
            if r is not None:
                s = cell_fact(f, r, "speedup_vs_sequential", "speedup")
                qs["peers"].append({"name": NAMES[peer], "speedup": s,
                                    "verdict": f.verdict(_id("qs_ws_vs", peer), ws_speedup, s, better="higher than",
                                                         worse="lower than")})
        lifo = _row(ok, "quicksort", "lifo", tmax)
        if lifo is not None:
            qs["lifo"] = {"time": time_fact(f, lifo), "ws_time": time_fact(f, ws),
                          "speedup": cell_fact(f, lifo, "speedup_vs_sequential", "speedup"),
                          "verdict": f.verdict("qs_ws_vs_lifo", time_fact(f, ws), time_fact(f, lifo),
                                               better="faster than", worse="slower than", higher_is_better=False)}
    ref = ok[(ok["workload"] == "quicksort") & ok["scheduler"].isin(REFERENCES)]
    qs["references"] = [{"name": NAMES[s], "one": time_fact(f, g[g["threads"] == 1].iloc[0])
                         if (g["threads"] == 1).any() else None,
                         "top": time_fact(f, g[g["threads"] == tmax].iloc[0]) if (g["threads"] == tmax).any() else None}
                        for s, g in ref.groupby("scheduler", sort=False)]
    out["qs"] = qs
    return out


def mandelbrot(f: Facts, ok: pd.DataFrame, tmax: int) -> dict:
    seq = _row(ok, "mandelbrot", "sequential", 1)
    rank = ranking(f, _ranked(_at(ok, "mandelbrot", tmax)), "mb_rank") if tmax > 1 else None
    if seq is None or rank is None:
        return {"mb": None}
    # ws and ws_sync differ in where their threads start (inside the timed frame, or once
    # before the timer), which the run does not time apart: a gap between them is not
    # put down to it
    start_apart = rank["best"]["scheduler"] == "ws_sync" and any(o["scheduler"] == "ws" for o in rank["slower"])
    # the quicksort's runs start their threads the same two ways: where ws and ws_sync were
    # not told apart there, the start alone did not make a gap the intervals show
    sort = None
    qs_ws, qs_sync = _row(ok, "quicksort", "ws", tmax), _row(ok, "quicksort", "ws_sync", tmax)
    if start_apart and qs_ws is not None and qs_sync is not None:
        ws_time, sync_time = time_fact(f, qs_ws), time_fact(f, qs_sync)
        sort = {"ws": ws_time, "ws_sync": sync_time,
                     "verdict": f.verdict("qs_ws_vs_ws_sync", ws_time, sync_time, better="faster than",
                                          worse="slower than", higher_is_better=False)}
    return {"mb": {"seq": time_fact(f, seq), "rank": rank, "start_apart": start_apart, "sort": sort}}


# --- speedup and efficiency -----------------------------------------------------------------

def efficiency(f: Facts, ok: pd.DataFrame, tmax: int) -> dict:
    """Per workload, the efficiency of each scheduler and peer at the most threads against
    full efficiency: counts, and the smaller group by name (the exceptions)."""
    if tmax == 1:
        return {"efficiency": []}
    out = []
    for workload in ("quicksort", "mandelbrot"):
        rows = _order(_ranked(_at(ok, workload, tmax)).dropna(subset=["efficiency"]))
        if rows.empty:
            continue
        where = {"status": "ok", "workload": workload, "threads": tmax, "scheduler": list(rows["scheduler"])}
        cells = []
        for _, r in rows.iterrows():
            e = cell_fact(f, r, "efficiency", "eff", fmt="pct")
            cells.append({"name": NAMES[r["scheduler"]], "eff": e,
                          "verdict": f.bound_verdict(_id("eff_vs_full", workload, r["scheduler"]), e, 1.0,
                                                     better="above", worse="below")})
        verdicts = [c["verdict"] for c in cells]
        same = [c for c in cells if c["verdict"].value == SAME]
        below = [c for c in cells if c["verdict"].value == "below"]
        # a split by full efficiency is no ranking among cells that cannot be told apart
        # from one another: the highest against the lowest says whether they can (the text
        # writes it either way, as the split reads as a ranking where it says nothing)
        split = None
        if same and len(same) < len(cells):
            high, low = (max(cells, key=lambda c: c["eff"].value), min(cells, key=lambda c: c["eff"].value))
            v = f.verdict(_id("eff_highest_vs_lowest", workload), high["eff"], low["eff"], better="higher than",
                          worse="lower than")
            split = {"high": high, "low": low, "verdict": v, "untold": v.value == SAME}
        out.append({"workload": workload, "split": split,
                    "min": f.aggregate(_id("eff_min", workload), "sched_summary", "min", "efficiency", where=where,
                                       fmt="pct"),
                    "max": f.aggregate(_id("eff_max", workload), "sched_summary", "max", "efficiency", where=where,
                                       fmt="pct"),
                    "n": f.count_of(_id("eff_n", workload), verdicts),
                    "n_same": f.count_of(_id("eff_same", workload), verdicts, SAME),
                    "n_below": f.count_of(_id("eff_below", workload), verdicts, "below"),
                    "n_spread": f.count_within_spread(_id("eff_within_spread", workload), verdicts),
                    "same": same, "below": below, "above": [c for c in cells if c["verdict"].value == "above"],
                    # name the smaller group: the exceptions
                    "list_same": 0 < len(same) < len(below),
                    **one_thread_gains(f, ok, workload, list(rows["scheduler"]))})
    return {"efficiency": out}


def one_thread_gains(f: Facts, ok: pd.DataFrame, workload: str, schedulers: list[str]) -> dict:
    """The schedulers and peers whose run on one thread was faster than the sequential
    code, beyond the intervals and the machine's spread: their speedups and efficiencies
    over the sequential code hold that gain (their own code path on one core) as well as
    the work of more threads. Judged only for a run whose median is below the sequential
    code's, the only ones the list can hold: the text says nothing of the others."""
    seq = _row(ok, workload, "sequential", 1)
    ones = [(s, _row(ok, workload, s, 1)) for s in schedulers]
    ones = [(s, one) for s, one in ones if one is not None]
    if seq is None or not ones:
        return {"one_thread_gains": [], "seq_time": None}
    seq_time = time_fact(f, seq)
    gains = []
    for scheduler, one in ones:
        time = time_fact(f, one)
        if time.value is None or seq_time.value is None or not time.value < seq_time.value:
            continue
        verdict = f.verdict(_id("one_thread_vs_seq", workload, scheduler), time, seq_time,
                            better="faster than", worse="slower than", higher_is_better=False)
        if verdict.value == "faster than":
            gains.append({"name": NAMES[scheduler], "time": time, "verdict": verdict})
    return {"one_thread_gains": gains, "seq_time": seq_time if gains else None}


# --- steals and the task split ----------------------------------------------------------------

STEALERS = ("ws", "ws_sync")


def steals(f: Facts, ok: pd.DataFrame, tmax: int) -> dict:
    out = []
    if tmax == 1:  # one thread steals from nobody
        return {"steals": out}
    for workload in ("quicksort", "mandelbrot"):
        rows = _order(_at(ok, workload, tmax))
        items = []
        for _, r in rows.iterrows():
            if r["scheduler"] in STEALERS and pd.notna(r["steal_success"]):
                items.append({"name": NAMES[r["scheduler"]],
                              "steals": cell_fact(f, r, "steal_success", "steals"),
                              "rate": cell_fact(f, r, "steal_success_rate", "steal_rate", fmt="pct", interval=False),
                              "cv": cell_fact(f, r, "task_share_cv", "task_cv", fmt="pct1")
                              if pd.notna(r["task_share_cv"]) else None})
        lifo = rows[(rows["scheduler"] == "lifo") & rows["task_share_cv"].notna()]
        if items:
            out.append({"workload": workload, "stealers": items,
                        "lifo_cv": cell_fact(f, lifo.iloc[0], "task_share_cv", "task_cv", fmt="pct1")
                        if len(lifo) else None})
    return {"steals": out}


def drawn(summary: pd.DataFrame) -> dict:
    """Which figures draw data (a figure with none is not shown; the text says why):
    the time figures draw each workload's passed parallel cells, the speedup figure
    every passed parallel cell with a speedup."""
    ok = summary[(summary["status"] == "ok") & (summary["scheduler"] != "sequential")]
    return {"quicksort": bool((ok["workload"] == "quicksort").any()),
            "mandelbrot": bool((ok["workload"] == "mandelbrot").any()),
            "speedup": bool(ok[["speedup_vs_sequential", "speedup_vs_one_thread"]].notna().any().any())}


def steals_drawn(ok: pd.DataFrame) -> bool:
    """Whether `sched_steals` draws data (figures.steals draws the work-stealing cells
    with more than one thread and steal counters)."""
    return bool((ok["scheduler"].isin(STEALERS) & (ok["threads"] > 1) & ok["steal_success"].notna()).any())


def tasks_drawn(ok: pd.DataFrame) -> bool:
    """Whether `sched_tasks` draws data: per-thread counters at more than one thread."""
    return bool(((ok["threads"] > 1) & ok["task_share_cv"].notna()).any())


# --- the explorer's zoom ---------------------------------------------------------------------

def fracsteal(f: Facts, frames: pd.DataFrame) -> dict:
    from parbench.studies.sched.fracsteal_tables import summary_frame

    f.constant("confidence", CONFIDENCE, fmt="pct")
    # what the seed says of its explorer (its frame times, its machine)
    f.seed("seed_frame_parallel", SEED, "the frame time is around 0.08s", 0.08, unit="s")
    f.seed("seed_frame_sequential", SEED, "the frame time is around 0.3s", 0.3, unit="s")
    f.seed("seed_frame_times", SEED, "Parallel version is around 4 times faster", 4)
    f.derived("seed_frame_ratio", "ratio", f["seed_frame_sequential"], f["seed_frame_parallel"])
    seed = seed_cores(f)
    # its README gives its explorer's frame times as "benchmarks on my machine (specs below)"
    f.seed("seed_cpu", SEED, "AMD Ryzen 9 3900X 12-Core Processor", "AMD Ryzen 9 3900X", fmt="plain")
    zoom = summary_frame(frames)
    if zoom.empty:
        failed = frames[frames["status"] != "ok"].dropna(subset=["failure"]).drop_duplicates("status")
        return {"zoom": None, "zoom_failure": f.lookup("zoom_failure", "sched_fracsteal_frames", failed.iloc[0],
                                                       "failure", fmt="text", interval=False)
                if len(failed) == 1 else None}
    r = zoom.iloc[0]

    def z(key: str, column: str, *, fmt: str = "num", unit: str | None = None, interval: bool = False) -> Fact:
        return f.lookup(_id("zoom", key), "sched_fracsteal_frames", r, column, via=ZOOM, fmt=fmt, unit=unit,
                        interval=interval)

    ratio = z("ratio", "ratio", interval=True)
    return {"zoom": {
        "script": str(r["script"]).rsplit("/", 1)[-1], "identical": bool(r["all_identical"]),
        "frames": z("frames", "frames", fmt="int"), "rounds": z("rounds", "rounds", fmt="int"),
        "several_rounds": int(r["rounds"]) > 1, "threads_differ": int(r["threads"]) != seed.value,
        "threads": z("threads", "threads", fmt="int"), "width": z("width", "width", fmt="int"),
        "height": z("height", "height", fmt="int"), "magnification": z("magnification", "magnification_max"),
        "parallel": z("parallel", "parallel_median_s", unit="s", interval=True),
        "sequential": z("sequential", "sequential_median_s", unit="s", interval=True),
        "ratio": ratio,
        "verdict": f.bound_verdict("zoom.ratio_vs_1", ratio, 1.0, better="above", worse="below"),
        "ratio_min": f.aggregate("zoom.ratio_min", "sched_fracsteal_frames", "min", "ratio", via=ZOOM_FRAMES),
        "ratio_max": f.aggregate("zoom.ratio_max", "sched_fracsteal_frames", "max", "ratio", via=ZOOM_FRAMES)}}


def seed_cores(f: Facts) -> Fact:
    """The seed machine's hardware threads (its "Detected 24 cores")."""
    return f.seed("seed_cores", SEED, "Detected 24 cores", 24, fmt="int")


# --- the headline and the seed --------------------------------------------------------------

def seed_times(program: str, text: str | None = None) -> dict[int, tuple[str, float]]:
    """The seed's `[NN] Time taken: X seconds` lines of one of its programs (quicksteal:
    work stealing, quicklifo: LIFO): threads -> (the quote, from the program's command
    line down to the line, and the seconds)."""
    from parbench.paper.check import seeds_dir

    text = text if text is not None else (seeds_dir() / SEED).read_text(errors="replace")
    start = text.index(f"./{program} -t num_cores")
    block = text[start:text.index("Minimum time taken", start)]
    out = {}
    for m in re.finditer(r"\[(\d+)\] Time taken: ([\d.]+) seconds", block):
        out[int(m.group(1))] = (block[:m.end()], float(m.group(2)))
    return out


def seed_size(f: Facts) -> Fact:
    return f.seed("seed_qs_size", SEED, "Running benchmarks for ./quicksteal -t num_cores -n 104857600", 104857600,
                  fmt="int")


def headline(f: Facts, ok: pd.DataFrame) -> dict:
    """Work stealing's sort speedup over its own one-thread run at the most threads this
    run and the seed both measured, beside the seed's own at that thread count (its
    quicksteal console lines), and its efficiency over the sequential sort there."""
    seed = seed_times(SEED_PROGRAMS["ws"])
    ws = ok[(ok["workload"] == "quicksort") & (ok["scheduler"] == "ws") & ok["threads"].isin(list(seed))
            & (ok["threads"] > 1) & ok["speedup_vs_one_thread"].notna()]
    if ws.empty:
        return {"headline": None}
    r = ws.sort_values("threads").iloc[-1]
    threads = int(r["threads"])
    ours = cell_fact(f, r, "speedup_vs_one_thread", "speedup_one")
    seed_one = f.seed("seed_ws_t1", SEED, seed[1][0], seed[1][1], fmt="fixed2", unit="s")
    seed_top = f.seed(_id("seed_ws", f"t{threads}"), SEED, seed[threads][0], seed[threads][1], fmt="fixed2",
                      unit="s")
    seed_speedup = f.derived("seed_ws_speedup", "ratio", seed_one, seed_top)
    threads_fact = f.lookup("headline_threads", "sched_summary", r, "threads", fmt="int", interval=False,
                            about=("work stealing",))
    # how low the interval reaches, and that share of linear: how large a loss "not told
    # from linear" leaves open (over its own one-thread run, not §4.3's efficiency over the
    # sequential code)
    low = cell_fact(f, r, "speedup_vs_one_thread_ci_low", "speedup_one_low", interval=False)
    # the same sort against the sequential code (§4.3's efficiency): a loss its own one-thread
    # run hides (a one-thread run faster than the sequential sort) shows there
    eff = cell_fact(f, r, "efficiency", "eff", fmt="pct") if pd.notna(r.get("efficiency")) else None
    vs_linear = f.bound_verdict("headline_vs_linear", ours, float(threads), better="above", worse="below")
    # repetitions that stayed disturbed, of the two cells the speedup divides: an end of its
    # interval may be theirs, not the sort's (the text says so beside it)
    one = ok[(ok["workload"] == "quicksort") & (ok["scheduler"] == "ws") & (ok["threads"] == 1)]
    disturbed = [{"n": cell_fact(f, row, "disturbed_reps", "headline_disturbed", fmt="int", interval=False),
                  "of": cell_fact(f, row, "repetitions", "headline_repetitions", fmt="int", interval=False),
                  "one": int(row["threads"]) == 1}
                 for row in [*(one.iloc[:1].to_dict("records")), r] if (row.get("disturbed_reps") or 0) > 0]
    # the text sets it against full efficiency only as a loss, and only where the speedup
    # is not below linear: judged only there, so that no verdict is left unwritten
    eff_verdict = f.bound_verdict("headline_eff_vs_full", eff, 1.0, better="above", worse="below") \
        if eff is not None and eff.value < 1.0 and vs_linear.value != "below" else None
    return {"headline": {
        "eff": eff, "eff_verdict": eff_verdict, "disturbed": disturbed,
        "threads": threads_fact, "low": low,
        "least_efficiency": f.derived("headline_least_efficiency", "ratio", low, threads_fact, fmt="pct",
                                      about=("work stealing",)) if low.known else None,
        "speedup": ours, "seed_one": seed_one, "seed_top": seed_top, "seed_speedup": seed_speedup,
        "seed_size": seed_size(f),
        "vs_linear": vs_linear,
        "vs_seed": f.bound_verdict("headline_vs_seed", ours, seed_speedup.value, better="above", worse="below",
                                   same=SEED_SAME)}}


def limitations(f: Facts, summary: pd.DataFrame, machine: dict) -> dict:
    cores = f.machine_value("cores", "machine.logical_cores", fmt="int")
    tmax = f.aggregate("threads_max", "sched_summary", "max", "threads", fmt="int")
    seed = seed_cores(f)
    f.seed("seed_lifo_best", SEED, "Minimum time taken: 3.742197 seconds for cores = 8", 8, fmt="int")
    f.seed("seed_ws_best", SEED, "Minimum time taken: 2.193738 seconds for cores = 20", 20, fmt="int")
    return {"oversubscribed": cores.value is not None and tmax.value is not None and tmax.value > cores.value,
            "short_of_seed": tmax.value is not None and tmax.value < seed.value}


# --- the summary table ------------------------------------------------------------------------

def _cell_text(g: pd.DataFrame, threads: int, column: str) -> str:
    """A cell's median and, on a second line, its 95% interval (the table stays narrow)."""
    if threads not in g.index or pd.isna(g.loc[threads, column]):
        return ""
    r = g.loc[threads]
    text = fmt_ci(r[column], r.get(f"{column}_ci_low"), r.get(f"{column}_ci_high"), fmt_num)
    return text.replace(" (", "<br>(") if "(" in text else text


def summary_frame(summary: pd.DataFrame) -> pd.DataFrame:
    """The paper's summary: per workload and scheduler, the median time on one thread and
    on the most threads, and the speedups there over the sequential code and over its own
    one-thread run; the reference says what it is; a cell with a disturbed repetition
    says how many."""
    ok = summary[summary["status"] == "ok"]
    if ok.empty:
        return pd.DataFrame({"workload": [], "scheduler": []})
    tmax = int(ok["threads"].max())
    disturbed = "disturbed_reps" in ok and bool((ok["disturbed_reps"].fillna(0) > 0).any())
    rows = []
    for (workload, scheduler), g in ok.groupby(["workload", "scheduler"], sort=False):
        g = g.set_index("threads")
        label = f"{scheduler}<br>(reference, another algorithm)" if scheduler in REFERENCES else scheduler
        seq = scheduler == "sequential"  # measured on one thread only: the rest does not apply
        row = {"workload": workload, "scheduler": label, "1 thread, s": _cell_text(g, 1, "median_time_s"),
               f"{tmax} threads, s": "n/a" if seq else _cell_text(g, tmax, "median_time_s"),
               f"speedup at {tmax}, vs sequential": "n/a" if seq else _cell_text(g, tmax, "speedup_vs_sequential"),
               f"speedup at {tmax}, vs 1 thread": "n/a" if seq or tmax == 1
               else _cell_text(g, tmax, "speedup_vs_one_thread")}
        if disturbed:
            row["disturbed repetitions"] = str(int(g["disturbed_reps"].fillna(0).sum()))
        rows.append(row)
    return pd.DataFrame(rows)


def report_tables(tables: dict[str, pd.DataFrame]) -> dict:
    """The paper's tables as Snakemake's report shows them, {name: frame}; each one's caption is
    in captions.yml beside the templates, under `tables:`."""
    frame = summary_frame(tables["sched_summary"]).replace({"<br>": " "}, regex=True)
    return {"sched_summary_table": frame}


# --- the context ------------------------------------------------------------------------------

def _main_host(summary: pd.DataFrame, machine: dict) -> tuple[pd.DataFrame, list[str]]:
    """The rows of the machine most cells ran on (a ranking compares cells of one machine
    only), and the other machines' names."""
    hosts = summary["hostname"].dropna()
    if hosts.nunique() <= 1:
        return summary, []
    main = hosts.value_counts().index[0]
    return summary[summary["hostname"].isna() | (summary["hostname"] == main)], sorted(set(hosts) - {main})


def facts(f: Facts, tables: dict[str, pd.DataFrame]) -> dict:
    """The section's facts, registered on `f`, and the rest of its templates' context."""
    machine = f.machine
    summary = tables["sched_summary"]
    mine, other_hosts = _main_host(summary, machine)
    ok = mine[mine["status"] == "ok"]
    ctx: dict = {"any_ok": not ok.empty, "other_hosts": other_hosts, "drawn": drawn(summary),
                 "tables": {"sched_summary": summary_frame(summary)}}
    ctx.update(setup(f, summary, machine))
    ctx.update(limitations(f, summary, machine))
    ctx.update(fracsteal(f, tables["sched_fracsteal_frames"]))
    if ok.empty:
        ctx.update({"qs": None, "mb": None, "efficiency": [], "steals": [], "steals_drawn": False,
                    "tasks_drawn": False, "headline": None})
        return ctx
    tmax = int(ok["threads"].max())
    f.aggregate("tmax", "sched_summary", "max", "threads", where={"status": "ok"}, fmt="int")
    ctx.update(quicksort(f, ok, tmax))
    ctx.update(mandelbrot(f, ok, tmax))
    ctx.update(efficiency(f, ok, tmax))
    ctx.update(steals(f, ok, tmax))
    ctx.update(headline(f, ok))
    # the figures draw the cells of every machine
    passed = summary[summary["status"] == "ok"]
    ctx.update(steals_drawn=steals_drawn(passed), tasks_drawn=tasks_drawn(passed))
    return ctx
