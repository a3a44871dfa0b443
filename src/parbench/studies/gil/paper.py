"""The facts of the gil section, computed from the study's tables; the words are the
templates in `paper/sections/gil/` (one per generated part), which
`paper/sections/gil.qmd` includes from `paper/_generated/gil/`.

Every fact names the runtime (or, for a comparison of two runtimes, the workload) it
belongs to, and every sentence the execution and worker count it speaks of. Times,
speedups and ratios are medians over the interleaved launches of a point with their 95%
bootstrap intervals. Python computes numbers and verdicts, never sentences: whether a
speedup is a gain is a verdict against one, whether the GIL changed a time a verdict of
the ratio's interval against one, whether a runtime reached the machine's own ceiling (the
native control) a verdict of the two speedups' intervals; where they overlap the verdict is
"not distinguishable on this machine". A list of findings names the largest group by its
count and the others (the exceptions) one by one. The native control's work is scaled,
so its times are never set beside the runtimes'; only its speedup is, as the ceiling.
When the related study (sigpar) ran in the same run, its threading results are set beside
this study's native-call workload; otherwise the text says that it did not run.
"""

from __future__ import annotations

import pandas as pd

from parbench.disturbance import disturbed_ends
from parbench.paper.facts import SAME, Fact, Facts, relative_difference, weakest
from parbench.paper.facts import _where as factmod_where
from parbench.paper.format import fmt_ci, fmt_num
from parbench.studies.gil import aggregate, report
from parbench.studies.gil import workloads as wl
from parbench.studies.gil.plan import RELATED_STUDY, RELATED_TABLE
from parbench.studies.sigpar.paper import KEYS as RELATED_KEYS

# The processed tables the facts read (the related study's table joins them when it ran).
TABLES = ["gil_summary", "gil_runtimes", "gil_comparisons", "gil_load", "gil_runs"]
# gil_summary as the text reads it: times in milliseconds, and each speedup's and ratio's
# interval under its column's name (`speedup_vs_sequential_ci_low`, ...).
POINTS = "parbench.studies.gil.paper:points"
RUNTIMES_MS = "parbench.studies.gil.paper:runtimes_in_ms"
TIMED_JIT = "parbench.studies.gil.paper:timed_jit"
PARALLEL_RUNS = "parbench.studies.gil.paper:runs_of_parallel_points"
LAUNCHES = "parbench.studies.gil.paper:launch_times"
POINT = ["runtime", "workload", "execution", "workers"]
# The columns that name one row of each table (and of the tables derived from it).
KEYS = {
    "gil_summary": POINT,
    f"gil_summary|{POINTS}": POINT,
    "gil_runtimes": ["runtime"],
    f"gil_runtimes|{RUNTIMES_MS}": ["runtime"],
    "gil_comparisons": ["comparison", "workload", "execution", "workers"],
    f"gil_runs|{LAUNCHES}": [*POINT, "rep"],
    RELATED_TABLE: RELATED_KEYS[RELATED_TABLE],  # its cells, looked up where they are set beside gil's
}
# How a footnote names a row (`Facts.note_names`): an execution as the text says it ("in
# threads"); the related study's cells are all Python threads calling its bindings, which
# their sentence says, so their mode and backend go unsaid
NOTE_NAMES = {"execution": {"threads": "in threads", "processes": "in processes"}, "mode": None, "backend": None}
# The generated parts (templates in paper/sections/gil/), in the order the section
# includes them; `headline` and `limitations` go to the paper's summary and limitations.
FRAGMENTS = ["setup", "runtimes", "report", "freethreading", "wall_time", "speedup", "utilization", "related",
             "summary", "headline", "limitations"]
# The paper's tables, also written as HTML and CSV for Snakemake's report.
REPORT_TABLES = ["gil_speedup_table", "gil_runtimes_table", "gil_comparisons_table"]
SEED = "gil.txt"
# Threads ran at once only where they kept more than this many cores busy (CPU seconds per
# wall second above it, by its interval): a thread speedup on one core is the runtime's
# path under threads (a JIT's warm-up, an allocator), not parallel work.
PARALLEL_CORES = 1.25
# A point's launches disagree widely when its slowest took more than this many times its
# fastest: the text then gives their range, on which every speedup dividing that point rests.
WIDE_LAUNCHES = 2.0
# the runtimes of the free-threading findings: the default build, the free-threaded
# build with its GIL off, the same binary with its GIL on
SRC, FT, FT_GIL = "cpython_src", "cpython_ft", "cpython_ft_gil"
# the workloads of the headline, the first measured: pure Python, the scaled one's runs long
# enough for two threads to show, else the seed's own
HEADLINE_WORKLOADS = ("multithread_cpu_scaled", "multithread_cpu")
# the runtime set beside the seed's CPython 3.14 in the seed's row: the default build
# made here, else the project's CPython
SEED_ROW_RUNTIMES = (SRC, "cpython")
# where a build's source came from, in words
ORIGINS = {"debian": "the Debian archive's", "tarball": "a tarball's"}
# what a runtime the text names only by its config name is, for a reader of the seed
WHAT = {"protopy": "the seed's protoPython", "cpython_bin": "the seed's CPYTHON_BIN interpreter"}


def _id(*parts) -> str:
    return ".".join(str(p).replace(" ", "_") for p in parts)


def _w(row) -> str:
    return f"w{int(row['workers'])}"


# --- the tables in the text's units -----------------------------------------------------------

# a column of gil_summary -> the name its interval has there
INTERVALS = {"speedup_vs_sequential": "speedup", "ratio_vs_baseline": "ratio"}


def _timed_ok(runs: pd.DataFrame, seconds: str) -> pd.DataFrame:
    """gil_runs' timed runs that passed and tell their wall time and `seconds`."""
    return runs[(runs["phase"] == "timed") & (runs["status"] == "ok")].dropna(subset=[seconds, "wall_sec"])


def timed_jit(runs: pd.DataFrame) -> pd.DataFrame:
    """The timed runs that passed and tell their JIT's compile time, with `jit_share`: the
    compile time they overlapped over their wall time (summed over the JIT's threads, so
    it can exceed one), and both times in milliseconds (`jit_ms`, `wall_ms`)."""
    timed = _timed_ok(runs, "jit_sec")
    return timed.assign(jit_share=timed["jit_sec"] / timed["wall_sec"], jit_ms=timed["jit_sec"] * 1e3,
                        wall_ms=timed["wall_sec"] * 1e3)


def runs_of_parallel_points(runs: pd.DataFrame) -> pd.DataFrame:
    """The timed runs in threads of the points whose median over the launches kept more
    than PARALLEL_CORES cores busy, each with its own `cores_busy` (CPU over wall
    seconds): a run among them at one core ran its threads one at a time in that launch.
    A point with a run whose CPU time could not be read has no CPU use in gil_summary (the
    text says so), so none of its runs is counted here either."""
    timed = _timed_ok(runs, "wall_sec")
    timed = timed[timed["execution"] == "threads"]
    timed = timed.assign(cores_busy=timed["cpu_sec"] / timed["wall_sec"])
    point = timed.groupby(POINT)["cores_busy"]
    read = point.transform("count") == point.transform("size")
    return timed[read & (point.transform("median") > PARALLEL_CORES)]


def launch_times(runs: pd.DataFrame) -> pd.DataFrame:
    """Each launch's time at each point (`launch_ms`): the median wall time of its timed
    runs that passed, in milliseconds; the point's time is the median of these."""
    timed = _timed_ok(runs, "wall_sec")
    launches = timed.groupby([*POINT, "rep"], as_index=False)["wall_sec"].median()
    return launches.assign(launch_ms=launches["wall_sec"] * 1e3)


def points(summary: pd.DataFrame) -> pd.DataFrame:
    """gil_summary with its wall and JIT times in milliseconds, and the intervals of the
    speedup and the ratio to the baseline also under their columns' names (a fact reads
    `<column>_ci_low/high`)."""
    out = summary.copy()
    for column in ("median_wall_sec", "median_wall_sec_ci_low", "median_wall_sec_ci_high", "median_jit_sec"):
        if column in out:
            out[column.replace("_sec", "_ms")] = out[column] * 1e3
    for column, short in INTERVALS.items():
        for end in ("ci_low", "ci_high"):
            if f"{short}_{end}" in out:
                out[f"{column}_{end}"] = out[f"{short}_{end}"]
    return out


def runtimes_in_ms(runtimes: pd.DataFrame) -> pd.DataFrame:
    """gil_runtimes with the interpreters' start-up in milliseconds."""
    out = runtimes.copy()
    if "median_startup_sec" in out:
        out["median_startup_ms"] = out["median_startup_sec"] * 1e3
    return out


# --- facts of one point or runtime --------------------------------------------------------------

def point_fact(f: Facts, row, column: str, short: str, *, fmt: str = "num", unit: str | None = None,
               interval: bool = True) -> Fact:
    """A column of one point (a row of gil_summary read through `points`: `row` must be
    one of its rows), about its runtime."""
    return f.lookup(_id(short, row["runtime"], row["workload"], row["execution"], _w(row)), "gil_summary", row,
                    column, fmt=fmt, unit=unit, interval=interval, via=POINTS, about=(row["runtime"],))


def time_fact(f: Facts, row) -> Fact:
    return point_fact(f, row, "median_wall_ms", "time", unit="ms")


def speedup_fact(f: Facts, row) -> Fact:
    return point_fact(f, row, "speedup_vs_sequential", "speedup", fmt="fixed2")


def workers_fact(f: Facts, row, table: str = "gil_summary", about: str | None = None) -> Fact:
    """The worker count of a point, to name it in a sentence."""
    if table == "gil_summary":
        return point_fact(f, row, "workers", "workers", fmt="int", interval=False)
    return f.lookup(_id("workers", row["comparison"], row["workload"], row["execution"], _w(row)), table, row,
                    "workers", fmt="int", interval=False, about=(about or row["workload"],))


def runtime_fact(f: Facts, row, column: str, short: str, *, fmt: str = "text", unit: str | None = None,
                 via: str | None = None) -> Fact:
    """A column of one runtime (a row of gil_runtimes), about it."""
    return f.lookup(_id(short, row["runtime"]), "gil_runtimes", row, column, fmt=fmt, unit=unit, interval=False,
                    via=via, about=(row["runtime"],))


def vs_one(f: Facts, key: str, fact: Fact) -> Fact:
    """A speedup against one (no gain): above, below, or not distinguishable."""
    return f.bound_verdict(key, fact, 1.0, better="above", worse="below")


def grouped(f: Facts, prefix: str, items: list[dict]) -> dict:
    """Items (each with a `verdict` fact) in groups of the same verdict, the largest first:
    the text states the largest by its count and names the others (the exceptions)."""
    verdicts = [i["verdict"] for i in items]
    groups: dict[str, list[dict]] = {}
    for item in items:
        groups.setdefault(item["verdict"].value, []).append(item)
    order = sorted(groups, key=lambda word: -len(groups[word]))
    out = [{"word": word, "first": weakest(groups[word]), "members": groups[word],
            "n": f.count_of(_id(prefix, "n", word), verdicts, word),
            "n_spread": f.count_within_spread(_id(prefix, "n_within_spread", word),
                                              [i["verdict"] for i in groups[word]])} for word in order]
    return {"n": f.count_of(_id(prefix, "n"), verdicts), "groups": out, "major": out[0] if out else None,
            "minor": out[1:], "all_one": len(out) == 1}


def _ok(summary: pd.DataFrame) -> pd.DataFrame:
    return summary[summary["status"] == "ok"]


def _controls(runtimes: pd.DataFrame) -> set:
    """The native control's names (drawn as the machine's ceiling, never ranked)."""
    if "control" not in runtimes:
        return set()
    return set(runtimes.loc[runtimes["control"].fillna(False).astype(bool), "runtime"])


def _point(ok: pd.DataFrame, runtime: str, workload: str, execution: str, workers: int):
    rows = ok[(ok["runtime"] == runtime) & (ok["workload"] == workload) & (ok["execution"] == execution)
              & (ok["workers"] == workers)]
    return rows.iloc[0] if len(rows) else None


def _measured(runtimes: pd.DataFrame, name: str) -> bool:
    rows = runtimes[runtimes["runtime"] == name]
    return bool(len(rows)) and rows.iloc[0]["status"] == "measured"


def _text(value) -> str:
    return value if isinstance(value, str) and value else ""


def point_name(execution: str, workers: int) -> str:
    """`sequential`, `threads x2` (the report's tables)."""
    return "sequential" if execution == "sequential" else f"{execution} x{workers}"


# --- setup ----------------------------------------------------------------------------------------

def setup(f: Facts, summary: pd.DataFrame, runtimes: pd.DataFrame, machine: dict) -> dict:
    cfg = machine["config"]["gil"]
    loads = cfg["workloads"]
    described = []
    for name in [w for w in wl.ORDER if w in loads]:
        spec, kind = loads[name], wl.get(name).kind

        def c(key: str, unit: str | None = None) -> Fact:
            return f.config(_id("wl", name, key), f"gil.workloads.{name}.{key}", fmt="int", unit=unit)

        item = {"name": name, "kind": kind, "chunks": c("chunks")}
        if kind == "sum_range":
            item.update(n=c("n"), repeat=c("repeat"), repeated=spec["repeat"] > 1)
        elif kind == "alloc":
            item.update(n_items=c("items"), batch=c("batch"))
        else:
            item.update(updates=c("updates"), kib=c("buffer_kib", unit="KiB"))
        described.append(item)
    f.config("workers", "gil.workers", fmt="list")
    f.config("warmup_runs", "gil.warmup_runs", fmt="int")
    f.config("runs_per_cell", "gil.runs_per_cell", fmt="int")
    f.config("order_seed", "run_order_seed", fmt="plain")
    f.config("confidence", "gil.confidence", fmt="pct")
    measured = set(runtimes.loc[runtimes["status"] == "measured", "runtime"])
    warmups = [{"name": n, "runs": f.config(_id("warmup", n), f"gil.runtimes.{n}.warmup_runs", fmt="int")}
               for n, r in cfg["runtimes"].items() if r.get("warmup_runs") is not None and n in measured]
    f.aggregate("n_points", "gil_summary", "count")
    f.aggregate("n_ok", "gil_summary", "count", where={"status": "ok"})
    f.aggregate("n_failed", "gil_summary", "count", where={"status": "failed"})
    reps = f.aggregate("repetitions", "gil_summary", "max", "repetitions", fmt="int")
    failed = [{"row": r, "workers": workers_fact(f, r),
               "failure": point_fact(f, r, "failure", "failure", fmt="text", interval=False)}
              for _, r in summary[summary["status"] == "failed"].iterrows()]
    return {"workloads": described, "executions": list(cfg["executions"]), "warmups": warmups,
            "several_reps": (reps.value or 0) > 1, "failed": failed, **jit(f, summary, cfg.get("jit_quiet"))}


def jit(f: Facts, summary: pd.DataFrame, quiet: dict | None) -> dict:
    """How the warm-up of the runtimes that tell their JIT's compile time ended, and how
    much compiling their timed runs still overlapped."""
    if "jit_clock" not in summary:
        return {"jit": []}
    ok = _ok(summary).dropna(subset=["jit_clock"])
    said = []
    clocks = sorted(set(ok["jit_clock"]))
    for runtime in dict.fromkeys(ok["runtime"]):
        # the points that tell their JIT's compile time
        mine = {"runtime": runtime, "status": "ok", "jit_clock": clocks}
        # one launch measures every point of its workload: its sequential point counts it once
        first = {**mine, "execution": "sequential"}
        said.append({"runtime": runtime,
                     "rounds": f.aggregate(_id("jit_rounds", runtime), "gil_summary", "median",
                                           "median_warmup_rounds", where=mine, about=(runtime,)),
                     "jit_ms": f.aggregate(_id("jit_ms", runtime), "gil_summary", "median", "median_jit_ms",
                                           where=mine, via=POINTS, unit="ms", about=(runtime,)),
                     "quiet": f.aggregate(_id("jit_quiet", runtime), "gil_summary", "sum", "jit_quiet_launches",
                                          where=first, fmt="int", about=(runtime,)),
                     "launches": f.aggregate(_id("jit_launches", runtime), "gil_summary", "sum", "repetitions_ok",
                                             where=first, fmt="int", about=(runtime,)),
                     "timed": None})
    if said and quiet:
        fraction = f.config("jit_fraction", "gil.jit_quiet.fraction", fmt="pct")
        f.config("jit_max_rounds", "gil.jit_quiet.max_warmup_runs", fmt="int")
        if "gil_runs" in f.tables and "jit_sec" in f.tables["gil_runs"]:
            # a quiet end of the warm-up does not keep the JIT quiet through the timed runs
            for item in said:
                mine = {"runtime": item["runtime"]}
                item["timed"] = {
                    "n": f.aggregate(_id("jit_timed_n", item["runtime"]), "gil_runs", "count", where=mine,
                                     via=TIMED_JIT, about=(item["runtime"],)),
                    "busy": f.aggregate(_id("jit_timed_busy", item["runtime"]), "gil_runs", "count",
                                        where={**mine, "jit_share": {">": fraction.value}}, via=TIMED_JIT,
                                        about=(item["runtime"],)),
                    "most": f.aggregate(_id("jit_timed_most", item["runtime"]), "gil_runs", "max", "jit_share",
                                        where=mine, via=TIMED_JIT, fmt="pct", about=(item["runtime"],)),
                    # how coarse the JIT's clock is beside those runs: its smallest reading
                    # above zero, and the shortest run that overlapped too much compiling
                    "step": f.aggregate(_id("jit_timed_step", item["runtime"]), "gil_runs", "min", "jit_ms",
                                        where={**mine, "jit_sec": {">": 0}}, via=TIMED_JIT, unit="ms",
                                        about=(item["runtime"],)),
                    "shortest": f.aggregate(_id("jit_timed_shortest", item["runtime"]), "gil_runs", "min",
                                            "wall_ms", where={**mine, "jit_share": {">": fraction.value}},
                                            via=TIMED_JIT, unit="ms", about=(item["runtime"],))}
    return {"jit": said, "jit_clocks": clocks, "jit_quiet": bool(quiet)}


# --- the runtimes ---------------------------------------------------------------------------------

def runtimes_part(f: Facts, summary: pd.DataFrame, runtimes: pd.DataFrame) -> dict:
    f.aggregate("n_runtimes", "gil_runtimes", "count")
    f.aggregate("n_measured", "gil_runtimes", "count", where={"status": "measured"})
    gil_word = {True: "with a GIL", False: "without a GIL"}
    measured = [{"name": r["runtime"], "implementation": _text(r["implementation"]),
                 "version": runtime_fact(f, r, "runtime_version", "version"),
                 "gil": gil_word.get(r["has_gil"] if isinstance(r["has_gil"], bool) else None,
                                     "its GIL unknown"),
                 "control": bool(r.get("control")),
                 "env": runtime_fact(f, r, "environment", "env") if _text(r.get("environment")) else None}
                for _, r in runtimes[runtimes["status"] == "measured"].iterrows()]
    absent = [{"name": r["runtime"], "what": WHAT.get(r["runtime"]), "reason": runtime_fact(f, r, "reason", "reason")}
              for _, r in runtimes[runtimes["status"] != "measured"].iterrows()]
    no_mp = runtimes[(runtimes["status"] == "measured") & (runtimes["multiprocessing"] == False)]  # noqa: E712
    no_processes = [{"name": r["runtime"], "control": bool(r.get("control")),
                     "reason": runtime_fact(f, r, "processes_unavailable_reason", "no_processes")}
                    for _, r in no_mp.iterrows()]
    return {"measured": measured, "absent": absent, "no_processes": no_processes}


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


# --- the seed's table and row ---------------------------------------------------------------------

def seed_facts(f: Facts) -> dict:
    """What the seed says of its runtimes' times on its workload (4 chunks of
    sum(range(50_000)) in threads)."""
    return {"cpython": f.seed("seed_cpython_ms", SEED, "215 ms vs 65 ms CPython", 65, unit="ms"),
            "protopy": f.seed("seed_protopy_ms", SEED, "215 ms vs 65 ms CPython", 215, unit="ms"),
            "ratio": f.seed("seed_ratio", SEED, "from ~70× to ~3.3× slower", 3.3),
            "before": f.seed("seed_ratio_before", SEED, "from ~70× to ~3.3× slower", 70),
            "cpython_before": f.seed("seed_cpython_before_ms", SEED, "2300 ms vs 32 ms", 32, unit="ms"),
            "protopy_before": f.seed("seed_protopy_before_ms", SEED, "2300 ms vs 32 ms", 2300, unit="ms"),
            "chunks": f.seed("seed_chunks", SEED, "4 chunks of `sum(range(50_000))`", 4, fmt="int"),
            "threads": f.seed("seed_threads", SEED, "With 4 workers each doing ~50k allocations", 4, fmt="int"),
            "version": f.seed("seed_cpython_version", SEED, "protoPython vs CPython 3.14", 3.14, fmt="plain")}


def report_part(f: Facts, summary: pd.DataFrame, runtimes: pd.DataFrame, machine: dict) -> dict:
    """The seed's report (its box-drawn tables, as code), and per runtime how its time in
    threads at the most workers compares with the baseline's, workload by workload."""
    baseline = machine["config"]["gil"]["baseline"]
    point = aggregate.seed_point(summary)
    controls = _controls(runtimes)
    measured = [r for r in runtimes.loc[runtimes["status"] == "measured", "runtime"] if r not in controls]
    out = {"baseline": baseline, "blocks": [], "seed_point": None}
    if point is None or baseline not in measured:
        return out
    out["seed_point"] = True
    ok = _ok(summary)
    for name in [r for r in measured if r != baseline]:
        rows = aggregate.seed_rows(summary, name, baseline, point)
        at = ok[(ok["runtime"] == name) & (ok["execution"] == point[0]) & (ok["workers"] == point[1])]
        at = at.dropna(subset=["ratio_vs_baseline"])
        items = []
        for _, r in at.iterrows():
            ratio = point_fact(f, r, "ratio_vs_baseline", "ratio", fmt="fixed2")
            items.append({"workload": r["workload"], "ratio": ratio,
                          "verdict": f.bound_verdict(_id("ratio_vs_baseline", name, r["workload"]), ratio, 1.0,
                                                     better="slower than", worse="faster than")})
        told = {i["workload"]: i["verdict"].value != SAME for i in items}
        rows = [{**row, "distinguishable": told.get(row["benchmark"], False)} for row in rows]
        out["blocks"].append({"name": name, "table": report.box_table(rows, name, baseline),
                              "said": grouped(f, _id("report", name), items) if items else None})
    return out


def seed_row(f: Facts, summary: pd.DataFrame, runtimes: pd.DataFrame, seed: dict) -> dict:
    """The seed's row reproduced: the CPython runtimes on its own workload in threads at
    the most workers, in ms, beside each interpreter's start-up measured apart, and the
    seed's times; whether the seed's times look like whole interpreter runs."""
    point = aggregate.seed_point(summary)
    if point is None:
        return {"seed_row": None}
    ok = _ok(summary)
    rt = runtimes_in_ms(runtimes).set_index("runtime", drop=False)
    rows, found = [], {}
    for name in rt.index:
        r = rt.loc[name]
        if r["status"] != "measured" or r["implementation"] != "CPython":
            continue
        p = _point(ok, name, "multithread_cpu", *point)
        if p is None:
            continue
        up = r.get("median_startup_ms")
        up = None if up is None or pd.isna(up) else float(up)
        run = float(p["median_wall_sec"]) * 1e3
        rows.append({"runtime": name, "version": f"{r['implementation']} {r['runtime_version']}",
                     f"threads ({point[1]}), ms": _ms_cell(p), "start-up, ms": fmt_num(up),
                     "start-up + run, ms": fmt_num(None if up is None else up + run)})
        found[name] = (p, r, up)
    if not rows:
        return {"seed_row": None}
    name = next((n for n in SEED_ROW_RUNTIMES if n in found and found[n][2] is not None),
                next((n for n in found if found[n][2] is not None), next(iter(found))))
    p, r, up = found[name]
    run = time_fact(f, p)
    out = {"name": name, "version": runtime_fact(f, r, "runtime_version", "version"), "run": run,
           "workers": workers_fact(f, p), "seed_over_run": f.derived("seed_over_run", "ratio", seed["cpython"], run,
                                                                      about=(name,)),
           "frame": pd.DataFrame(rows), "startup": None, "total": None, "whole_run": False}
    if up is not None:
        startup = runtime_fact(f, r, "median_startup_ms", "startup", fmt="num", unit="ms", via=RUNTIMES_MS)
        total = f.derived("seed_row_total", "sum", startup, run, unit="ms", about=(name,))
        # the seed's times are many times the work alone and of the order of a whole
        # interpreter run (start-up included)
        whole = (seed["cpython_before"].value > 3 * run.value
                 and seed["cpython_before"].value / 2 <= total.value <= seed["cpython"].value * 2)
        out.update(startup=startup, total=total, whole_run=whole)
    return {"seed_row": out}


def _ms_cell(row) -> str:
    """A point's median wall time in ms, its interval on a second line."""
    lo, hi = row.get("median_wall_sec_ci_low"), row.get("median_wall_sec_ci_high")
    text = fmt_ci(row["median_wall_sec"] * 1e3, None if lo is None or pd.isna(lo) else lo * 1e3,
                  None if hi is None or pd.isna(hi) else hi * 1e3)
    return text.replace(" (", "<br>(")


# --- the GIL and the free-threaded build ----------------------------------------------------------

# the verdicts of the GIL's cost (a time ratio, GIL on over off, against one)
GIL_COST_WORDS = ("slower with the GIL on", "faster with the GIL on",
                  "not distinguishable on this machine from the run with the GIL off")


def comparison_fact(f: Facts, row, short: str) -> Fact:
    return f.lookup(_id(short, row["comparison"], row["workload"], row["execution"], _w(row)), "gil_comparisons",
                    row, "time_ratio", fmt="fixed2", about=(row["workload"],))


def _comparison_item(f: Facts, row, better: str, worse: str, same: str = SAME) -> dict:
    ratio = comparison_fact(f, row, "time_ratio")
    key = _id("time_ratio_vs_one", row["comparison"], row["workload"], row["execution"], _w(row))
    verdict = f.bound_verdict(key, ratio, 1.0, better=better, worse=worse, same=same)
    return {"workload": row["workload"], "execution": row["execution"], "ratio": ratio,
            "workers": workers_fact(f, row, "gil_comparisons"), "verdict": verdict, "same": verdict.value == same}


def _overhead_item(f: Facts, row, every: pd.DataFrame) -> dict:
    """The free-threaded build's time over the default build's run sequentially, and the
    same with one worker in threads and in processes, which also run one thread of the
    work: where their verdicts differ from the sequential one, `differ` (the text gives
    them, so that one of three readings does not stand for all); where they agree but one
    was decided just past its bar, `near` (the text gives them with its note)."""
    item = _comparison_item(f, row, "slower than", "faster than")
    ones = every[(every["workload"] == row["workload"]) & (every["workers"] == 1)
                 & (every["execution"] != "sequential")]
    item["one_worker"] = [_comparison_item(f, r, "slower than", "faster than") for _, r in ones.iterrows()]
    item["differ"] = any(o["verdict"].value != item["verdict"].value for o in item["one_worker"])
    # readings that agree with the sequential one, but one of them only just past its bar: the
    # text gives them too, each with its note, where the sequential reading would speak for them
    item["near"] = not item["differ"] and any(o["verdict"].edge is not None for o in item["one_worker"])
    return item


def freethreading(f: Facts, summary: pd.DataFrame, runtimes: pd.DataFrame, comparisons: pd.DataFrame,
                  seed: dict) -> dict:
    """The GIL's cost on one binary (PYTHON_GIL=1 against 0), the free-threaded build's
    overhead against the default build, and allocation under free-threading."""
    rt = runtimes.set_index("runtime", drop=False)
    names = (SRC, FT, FT_GIL)
    absent = []
    for n in names:
        if n not in rt.index:
            absent.append({"name": n, "reason": None})
        elif rt.loc[n, "status"] != "measured":
            absent.append({"name": n, "reason": runtime_fact(f, rt.loc[n], "reason", "reason")})
    present = [{"name": n, "version": runtime_fact(f, rt.loc[n], "runtime_version", "version"),
                "env": runtime_fact(f, rt.loc[n], "environment", "env") if _text(rt.loc[n, "environment"]) else None}
               for n in names if _measured(runtimes, n)]
    out = {"ft_absent": absent, "ft_present": present, "gil_cost": None, "gil_cost_seq": None, "overhead": [],
           "overhead_versions": None, "overhead_origins": None, "alloc": None, "ft_table": bool(len(comparisons))}
    gil = comparisons[comparisons["comparison"] == "gil_cost"]
    if len(gil):
        items = [_comparison_item(f, r, *GIL_COST_WORDS) for _, r in gil.iterrows()]
        seq = [i for i in items if i["execution"] == "sequential"]
        out["gil_cost"] = grouped(f, "gil_cost", [i for i in items if i["execution"] != "sequential"])
        out["gil_cost_seq"] = grouped(f, "gil_cost_seq", seq) if seq else None
    every = comparisons[comparisons["comparison"] == "freethreading_overhead"]
    over = every[every["execution"] == "sequential"]
    if len(over):
        out["overhead"] = [_overhead_item(f, r, every) for _, r in over.iterrows()]
        first = over.iloc[0]
        if not over["same_version"].fillna(False).astype(bool).all():
            out["overhead_versions"] = {
                "ft": f.lookup("overhead_ft_version", "gil_comparisons", first, "runtime_version", fmt="text",
                               interval=False, about=(FT,)),
                "src": f.lookup("overhead_src_version", "gil_comparisons", first, "against_version", fmt="text",
                                interval=False, about=(SRC,))}
        elif set(over["runtime_origin"]) != set(over["against_origin"]):
            out["overhead_origins"] = {"ft": first["runtime_origin"], "src": first["against_origin"]}
    out.update(alloc_part(f, summary, seed))
    return out


def alloc_part(f: Facts, summary: pd.DataFrame, seed: dict) -> dict:
    """Allocation in threads at the most workers, on the three CPython builds: where the
    seed's protoPython lost to its shared allocator."""
    ok = _ok(summary)
    par = ok[ok["execution"] == "threads"]
    if par.empty:
        return {"alloc": None}
    top = int(par["workers"].max())
    rows = {n: _point(ok, n, "multithread_alloc", "threads", top) for n in (SRC, FT, FT_GIL)}
    items = {n: {"name": n, "speedup": speedup_fact(f, r)} for n, r in rows.items() if r is not None}
    if FT not in items:
        return {"alloc": None}
    ft = items[FT]
    ft["verdict"] = vs_one(f, "alloc_ft_vs_one", ft["speedup"])
    others = []
    for n in (FT_GIL, SRC):
        if n in items:
            items[n]["verdict"] = f.verdict(_id("alloc_ft_vs", n), ft["speedup"], items[n]["speedup"],
                                            better="higher than", worse="lower than")
            others.append(items[n])
    # each speedup is over its own build's sequential run, and those differ: the times in
    # threads say which build finished the work first
    ft["time"] = time_fact(f, rows[FT])
    for o in others:
        o["time"] = time_fact(f, rows[o["name"]])
        o["time_verdict"] = f.verdict(_id("alloc_ft_time_vs", o["name"]), ft["time"], o["time"],
                                      better="faster than", worse="slower than", higher_is_better=False)
    return {"alloc": {"ft": ft, "others": others, "workers": workers_fact(f, rows[FT])}}


def comparisons_frame(comparisons: pd.DataFrame) -> pd.DataFrame:
    """The paper's table of the free-threading comparisons: one row per workload and point,
    the GIL's cost and the free-threaded build's overhead side by side (median over its
    interval)."""
    titles = {"gil_cost": f"GIL on / off ({FT_GIL} / {FT})", "freethreading_overhead": f"free-threaded / default "
                                                                                        f"({FT} / {SRC})"}
    rows: dict[tuple, dict] = {}
    for r in comparisons.itertuples():
        key = (r.workload, r.execution, r.workers)
        row = rows.setdefault(key, {"workload": r.workload, "point": point_name(r.execution, r.workers),
                                    **{t: "n/a" for t in titles.values()}})
        row[titles[r.comparison]] = fmt_ci(r.time_ratio, r.time_ratio_ci_low, r.time_ratio_ci_high,
                                           lambda x: f"{x:.2f}").replace(" (", "<br>(")
    return pd.DataFrame(list(rows.values()), columns=["workload", "point", *titles.values()])


def comparisons_table(comparisons: pd.DataFrame) -> pd.DataFrame:
    """Every comparison, point by point (Snakemake's report)."""
    return pd.DataFrame([{"comparison": r.comparison, "runtime": r.runtime, "against": r.against,
                          "workload": r.workload, "point": point_name(r.execution, r.workers),
                          "time ratio": fmt_ci(r.time_ratio, r.time_ratio_ci_low, r.time_ratio_ci_high,
                                               lambda x: f"{x:.2f}"),
                          "interval excludes 1": r.ci_excludes_one} for r in comparisons.itertuples()],
                        columns=["comparison", "runtime", "against", "workload", "point", "time ratio",
                                 "interval excludes 1"])


# --- wall time, speedup, CPU --------------------------------------------------------------------

def wall_time(f: Facts, ok: pd.DataFrame, controls: set) -> dict:
    """Per workload, the sequential runs' lowest and highest median time among the runtimes
    (the control's work is scaled: not a time to rank), and the verdict between them. A
    median is the lowest or highest of the medians, not a rank: with three runtimes or more,
    each extreme also has its verdict against every other runtime but the other extreme,
    `ties` holds those it does not tell apart and `n_spread` counts those of them the
    machine's spread alone did not tell apart."""
    seq = ok[(ok["execution"] == "sequential") & ~ok["runtime"].isin(controls)].dropna(subset=["median_wall_sec"])
    out = []

    def time_verdict(key: str, a: Fact, b: Fact) -> Fact:
        return f.verdict(key, a, b, better="faster than", worse="slower than", higher_is_better=False)

    for workload in [w for w in wl.ORDER if w in set(seq["workload"])]:
        rows = seq[seq["workload"] == workload].sort_values("median_wall_sec")
        names = list(rows["runtime"])

        def time_at(i: int) -> Fact:  # a fact for only the medians the text names
            return time_fact(f, rows.iloc[i])

        low = {"name": names[0], "time": time_at(0), "ties": [], "near": []}
        item = {"workload": workload, "low": low, "high": None}
        if len(rows) > 1:
            item["high"] = {"name": names[-1], "time": time_at(-1), "ties": [], "near": [],
                            "verdict": time_verdict(_id("seq_high_vs_low", workload), time_at(-1), low["time"])}
        if len(rows) > 2:
            middle = range(1, len(rows) - 1)
            for extreme, key in ((low, "seq_low_vs"), (item["high"], "seq_high_vs")):
                verdicts = [(names[i], time_verdict(_id(key, names[i], workload), extreme["time"], time_at(i)))
                            for i in middle]
                # those it does not tell apart, counted where the spread alone decided it
                extreme["ties"] = [{"name": name, "verdict": v} for name, v in verdicts if v.value == SAME]
                extreme["n_spread"] = f.count_within_spread(_id(key, "n_within_spread", workload),
                                                            [t["verdict"] for t in extreme["ties"]])
                # the others it is told apart from only just past the bar: named with their
                # verdict, whose note would otherwise be lost with the word left unsaid
                extreme["near"] = [{"name": name, "verdict": v} for name, v in verdicts
                                   if v.value != SAME and v.edge is not None]
        out.append(item)
    return {"sequential": out}


def _pure(workload: str) -> bool:
    return wl.get(workload).pure_python


def speedup(f: Facts, ok: pd.DataFrame, runtimes: pd.DataFrame, controls: set, top: int) -> dict:
    """Threads at the most workers, per runtime kind (with a GIL or without) and workload
    kind (pure Python or a native call), each point's speedup against one; processes the
    same; the native control's speedup (the machine's ceiling) and who reached it."""
    gil = {r.runtime: r.has_gil if isinstance(r.has_gil, bool) else None for r in runtimes.itertuples()}
    every = ok[(ok["workers"] == top) & (ok["execution"] != "sequential")].dropna(subset=["speedup_vs_sequential"])
    threads = every[(every["execution"] == "threads") & ~every["runtime"].isin(controls)]
    groups, judged = [], []
    for has_gil in (True, False, None):
        for pure in (True, False):
            rows = threads[threads["runtime"].map(gil.get).eq(has_gil) if has_gil is not None
                           else threads["runtime"].map(gil.get).isna()]
            rows = rows[rows["workload"].map(_pure) == pure]
            if rows.empty:
                continue
            items = []
            for _, r in rows.iterrows():
                s = speedup_fact(f, r)
                items.append({"runtime": r["runtime"], "workload": r["workload"], "speedup": s,
                              "verdict": vs_one(f, _id("speedup_vs_one", r["runtime"], r["workload"], "threads"), s),
                              "row": r})
            key = _id("threads", {True: "gil", False: "nogil", None: "unknown"}[has_gil], "pure" if pure else "native")
            found, cpu_judged = parallel(f, items)
            judged += cpu_judged
            groups.append({"gil": has_gil, "pure": pure, "runtimes": list(dict.fromkeys(rows["runtime"])),
                           **grouped(f, key, items), **found})
    procs = every[every["execution"] == "processes"]
    processes = []
    for workload in [w for w in wl.ORDER if w in set(procs["workload"])]:
        items = []
        for _, r in procs[procs["workload"] == workload].iterrows():
            s = speedup_fact(f, r)
            items.append({"runtime": r["runtime"], "workload": r["workload"], "speedup": s,
                          "verdict": vs_one(f, _id("speedup_vs_one", r["runtime"], r["workload"], "processes"), s)})
        processes.append({"workload": workload, **grouped(f, _id("processes", workload), items)})
    divided = [(r["runtime"], r["workload"], r["execution"]) for _, r in pd.concat([threads, procs]).iterrows()]
    # every thread speedup above one whose CPU use was read, judged against PARALLEL_CORES: those
    # whose threads ran at once are left out of the list of the others (`one_core`), so the text
    # counts them, and the count carries the note of any decided just past its bar
    at_once = {"n": f.count_of("threads_cpu_judged", judged),
               "above": f.count_of("threads_at_once", judged, "above")} if judged else None
    return {"thread_groups": groups, "processes": processes, "beyond_workers": beyond_workers(f, ok, controls),
            "at_once": at_once, "wide_launches": wide_launches(f, divided, top), **ceiling(f, every, controls)}


def wide_launches(f: Facts, divided: list[tuple], top: int) -> list[dict]:
    """Of the points the speedups `divided` (runtime, workload, execution at `top` workers)
    divide, each point and its runtime's sequential one once, those whose launches
    disagreed widely (the slowest more than WIDE_LAUNCHES times the fastest): their count
    and their fastest, median and slowest times, so the text can say what a speedup's median
    rests on."""
    if "gil_runs" not in f.tables:
        return []
    launches = launch_times(f.tables["gil_runs"])
    points = dict.fromkeys(point for runtime, workload, execution in divided
                           for point in ((runtime, workload, "sequential", 1), (runtime, workload, execution, top)))
    out = []
    for point in points:
        where = dict(zip(POINT, point))
        rows = factmod_where(launches, where)
        times = rows["launch_ms"]
        if len(times) < 2 or not times.min() > 0 or times.max() <= WIDE_LAUNCHES * times.min():
            continue
        runtime, workload, execution, workers = point
        key = ("launch", runtime, workload, execution, f"w{workers}")
        ends = {end: f.aggregate(_id(key[0], op, *key[1:]), "gil_runs", op, "launch_ms", where=where, via=LAUNCHES,
                                 unit="ms", about=(runtime,)) for end, op in (("low", "min"), ("median", "median"),
                                                                             ("high", "max"))}
        # its launches that stayed disturbed (a launch runs every point of its cell): an end
        # of the range may be theirs
        load = f.tables.get("gil_load")
        cell = aggregate.load_label({"cell": {"runtime": runtime, "workload": workload}})
        disturbed, disturbed_at = None, ""
        of_cell = load[(load["cell"] == cell) & (load["status"] == "ok")] if load is not None else None
        if of_cell is not None and bool(of_cell["disturbed"].any()):
            disturbed = f.aggregate(_id("launch_disturbed", runtime, workload), "gil_load", "count",
                                    where={"cell": cell, "status": "ok", "disturbed": True}, fmt="int",
                                    about=(runtime,))
            disturbed_at = disturbed_ends(times, rows["rep"].isin(of_cell.loc[of_cell["disturbed"], "rep"]))
        out.append({"runtime": runtime, "workload": workload, "execution": execution, **ends, "disturbed": disturbed,
                    "disturbed_ends": disturbed_at,
                    "n": f.aggregate(_id(key[0], "count", *key[1:]), "gil_runs", "count", "launch_ms", where=where,
                                     via=LAUNCHES, fmt="int", about=(runtime,))})
    if out:
        f.constant("wide_launches", "parbench.studies.gil.paper:WIDE_LAUNCHES", fmt="num")
    return out


def beyond_workers(f: Facts, ok: pd.DataFrame, controls: set) -> list[dict]:
    """The runtimes' thread points, at any worker count the figure draws, whose median
    speedup exceeds their worker count by more than the machine's spread (nearer, a median
    says nothing the spread could not): more than threads can give, so either the
    sequential run paid for something the threaded one did not (a JIT not yet warm, say)
    or the median is noise; its verdict against the worker count says which the intervals
    can tell."""
    threads = ok[(ok["execution"] == "threads") & ~ok["runtime"].isin(controls)]
    beyond = threads[[s > w and relative_difference(s, w) > f.min_relative
                      for s, w in zip(threads["speedup_vs_sequential"], threads["workers"])]]
    out = []
    for _, r in beyond.iterrows():
        s = speedup_fact(f, r)
        out.append({"runtime": r["runtime"], "workload": r["workload"], "speedup": s, "workers": workers_fact(f, r),
                    "verdict": f.bound_verdict(_id("speedup_vs_workers", r["runtime"], r["workload"], _w(r)), s,
                                               float(r["workers"]), better="above", worse="below")})
    return out


def parallel(f: Facts, items: list[dict]) -> tuple[dict, list[Fact]]:
    """Of the thread speedups above one, those whose threads did not keep more than
    PARALLEL_CORES cores busy (`one_core`: gained on one core at a time) and those whose
    CPU time could not be read (`cpu_unknown`); beside them, the verdict against
    PARALLEL_CORES of each whose CPU time was read (the text counts those)."""
    one_core, unknown, judged = [], [], []
    for item in items:
        if item["verdict"].value != "above":
            continue
        row = item["row"]
        if pd.isna(row.get("cpu_sec_per_wall_sec")):
            unknown.append(item)
            continue
        cpu, at_once = ran_at_once(f, row, _id("cpu_vs_parallel", row["runtime"], row["workload"], "threads"))
        judged.append(at_once)
        if at_once.value != "above":
            one_core.append({**item, "cpu": cpu, "at_once": at_once})
    return {"one_core": one_core, "cpu_unknown": unknown}, judged


def ran_at_once(f: Facts, row, key: str) -> tuple[Fact, Fact]:
    """A point's CPU use (CPU seconds per wall second) and its verdict against
    PARALLEL_CORES (`above`: its threads ran at once), with the bound as the fact
    `parallel_cores` for the text."""
    f.constant("parallel_cores", "parbench.studies.gil.paper:PARALLEL_CORES", fmt="fixed2")
    cpu = point_fact(f, row, "cpu_sec_per_wall_sec", "cpu", fmt="fixed2")
    return cpu, f.bound_verdict(key, cpu, PARALLEL_CORES, better="above", worse="below")


def ceiling(f: Facts, every: pd.DataFrame, controls: set) -> dict:
    """The native control's speedup in threads at the most workers, per workload (the
    machine's own ceiling at this run length), and which runtimes reached it: their
    speedup above the control's (`beyond`), not distinguishable from it (`reached`), or
    below it (`missed`)."""
    if not controls:
        return {"ceiling": None, "controls": []}
    threads = every[every["execution"] == "threads"]
    control = threads[threads["runtime"].isin(controls)]
    out = []
    for _, c in control.iterrows():
        s = speedup_fact(f, c)
        item = {"name": c["runtime"], "workload": c["workload"], "speedup": s,
                "verdict": vs_one(f, _id("ceiling_vs_one", c["workload"]), s), "beyond": [], "reached": [],
                "missed": []}
        if item["verdict"].value == "above":
            others = threads[(threads["workload"] == c["workload"]) & ~threads["runtime"].isin(controls)]
            for _, o in others.iterrows():
                v = f.verdict(_id("vs_ceiling", o["runtime"], o["workload"]), speedup_fact(f, o), s, better="above",
                              worse="below")
                entry = {"name": o["runtime"], "speedup": speedup_fact(f, o), "verdict": v}
                # one group per verdict: a group's word is said of all its members
                item[{"below": "missed", "above": "beyond"}.get(v.value, "reached")].append(entry)
        out.append(item)
    return {"ceiling": out, "controls": sorted(controls)}


def utilization(f: Facts, ok: pd.DataFrame, runtimes: pd.DataFrame, controls: set, top: int) -> dict:
    """CPU seconds per wall second in threads at the most workers, by runtime kind and
    workload kind (ranges over the readings that can be right), and the readings recorded
    null as impossible, by runtime."""
    gil = {r.runtime: r.has_gil if isinstance(r.has_gil, bool) else None for r in runtimes.itertuples()}
    threads = ok[(ok["execution"] == "threads") & (ok["workers"] == top) & ~ok["runtime"].isin(controls)]
    readable = threads.dropna(subset=["cpu_sec_per_wall_sec"])
    ranges = []
    for pure in (True, False):
        kind = readable[readable["workload"].map(_pure) == pure]
        for has_gil in (True, False, None):
            rows = kind[kind["runtime"].map(gil.get).eq(has_gil) if has_gil is not None
                        else kind["runtime"].map(gil.get).isna()]
            if rows.empty:
                continue
            names, loads = list(dict.fromkeys(rows["runtime"])), list(dict.fromkeys(rows["workload"]))
            where = {"status": "ok", "execution": "threads", "workers": top, "runtime": names, "workload": loads}
            key = _id("cpu", "pure" if pure else "native", {True: "gil", False: "nogil", None: "unknown"}[has_gil])
            ranges.append({"pure": pure, "gil": has_gil, "runtimes": names,
                           "min": f.aggregate(_id(key, "min"), "gil_summary", "min", "cpu_sec_per_wall_sec",
                                              where=where, fmt="fixed2", about=tuple(names)),
                           "max": f.aggregate(_id(key, "max"), "gil_summary", "max", "cpu_sec_per_wall_sec",
                                              where=where, fmt="fixed2", about=tuple(names))})
    nulled = []
    if "cpu_null_reason" in ok:
        for runtime in dict.fromkeys(ok.loc[ok["cpu_null_reason"].notna(), "runtime"]):
            mine = ok[(ok["runtime"] == runtime) & ok["cpu_null_reason"].notna()]
            nulled.append({"name": runtime,
                           "n": f.aggregate(_id("cpu_null", runtime), "gil_summary", "count", "cpu_null_reason",
                                            where={"status": "ok", "runtime": runtime}, about=(runtime,)),
                           "of": f.aggregate(_id("points_ok", runtime), "gil_summary", "count",
                                             where={"status": "ok", "runtime": runtime}, about=(runtime,)),
                           "example": point_fact(f, mine.iloc[0], "cpu_null_reason", "cpu_null_reason", fmt="text",
                                                 interval=False)})
    seq = ok[ok["execution"] == "sequential"]["cpu_sec_per_wall_sec"].dropna()
    low = None
    if len(seq) and seq.median() < 0.9:
        where = {"status": "ok", "execution": "sequential"}
        low = {"median": f.aggregate("cpu_seq_median", "gil_summary", "median", "cpu_sec_per_wall_sec", where=where,
                                     fmt="fixed2"),
               "min": f.aggregate("cpu_seq_min", "gil_summary", "min", "cpu_sec_per_wall_sec", where=where,
                                  fmt="fixed2"),
               "max": f.aggregate("cpu_seq_max", "gil_summary", "max", "cpu_sec_per_wall_sec", where=where,
                                  fmt="fixed2")}
    return {"cpu_ranges": ranges, "cpu_nulled": nulled, "cpu_seq_low": low, "cpu_drawn": cpu_drawn(ok),
            "cpu_serial": serial_runs(f, top)}


def serial_runs(f: Facts, top: int) -> dict | None:
    """The timed runs at the most workers in threads that kept no more than PARALLEL_CORES
    busy, of points whose median kept more: a median over the launches sets such a run
    aside, the point's interval (and a verdict drawn from it) holds it."""
    if "gil_runs" not in f.tables or "cpu_sec" not in f.tables["gil_runs"]:
        return None
    runs = f.table("gil_runs", PARALLEL_RUNS)
    runs = runs[runs["workers"] == top]
    serial = runs[runs["cores_busy"] <= PARALLEL_CORES]
    if serial.empty:
        return None
    f.constant("parallel_cores", "parbench.studies.gil.paper:PARALLEL_CORES", fmt="fixed2")
    names = [f"{r} on {w}" for r, w in dict.fromkeys(zip(serial["runtime"], serial["workload"]))]
    return {"n": f.aggregate("serial_runs_of", "gil_runs", "count", where={"workers": top}, via=PARALLEL_RUNS),
            "k": f.aggregate("serial_runs", "gil_runs", "count",
                             where={"workers": top, "cores_busy": {"<=": PARALLEL_CORES}}, via=PARALLEL_RUNS),
            "names": names}


def cpu_drawn(ok: pd.DataFrame) -> bool:
    """Whether `gil_cpu_utilization` draws data: a parallel point with a CPU reading."""
    return bool(ok[ok["execution"] != "sequential"]["cpu_sec_per_wall_sec"].notna().any())


# --- the related study ------------------------------------------------------------------------------

def related(f: Facts, ok: pd.DataFrame, machine: dict, other: pd.DataFrame | None, baseline: str) -> dict:
    """The related study's threading cells at its most workers (their scaling efficiency
    by kind of signature) beside the baseline's threads on the native-call and the
    pure-Python workload at that worker count."""
    studies = machine["config"].get("studies", [])
    if RELATED_STUDY not in studies or other is None:
        return {"related": None, "related_study": RELATED_STUDY, "related_ran": False}
    # the Python threads of the related study's own bindings (its `threading` variant), never
    # mixed with another backend's
    threading = {"variant": "threading"} if "variant" in other else {"mode": "threading"}
    cells = factmod_where(other[other["status"] == "ok"], threading)
    out = {"related_study": RELATED_STUDY, "related_ran": True, "related": None}
    if cells.empty or ok.empty:
        return out
    w = int(cells["workers"].max())
    kinds = []
    for kind in dict.fromkeys(cells.loc[cells["workers"] == w, "kind"]):
        where = {"status": "ok", **threading, "workers": w, "kind": kind}
        mine = cells[(cells["workers"] == w) & (cells["kind"] == kind)].dropna(subset=["scaling_efficiency"])
        if not mine.empty:
            # each cell against full efficiency, as the related study judges it: the text
            # that says "not distinguishable from full means threads ran at once" says how
            # many were, so that a range's low end is not read as one of them
            full = [f.bound_verdict(_id("related_vs_full", kind, r.algorithm, r.operation),
                                    f.lookup(_id("related_eff", kind, r.algorithm, r.operation), RELATED_TABLE, r,
                                             "scaling_efficiency", fmt="pct", about=(kind,)),
                                    1.0, better="above", worse="below")
                    for r in mine.itertuples()]
            kinds.append({"kind": kind, **{op: f.aggregate(_id("related", kind, op), RELATED_TABLE, op,
                                                             "scaling_efficiency", where=where,
                                                             fmt="int" if op == "count" else "pct",
                                                             about=(kind,))
                                         for op in ("median", "min", "max", "count")},
                          "full": f.count_of(_id("related_full", kind), full, SAME, about=(kind,)),
                          "n_spread": f.count_within_spread(_id("related_within_spread", kind), full, about=(kind,)),
                          **{f"n_{side}": f.count_of(_id("related", side, kind), full, side, about=(kind,))
                             for side in ("below", "above")}})
    here = {}
    for workload in ("multithread_hashlib", "multithread_cpu_scaled"):
        r = _point(ok, baseline, workload, "threads", w)
        if r is not None:
            eff = point_fact(f, r, "efficiency", "efficiency", fmt="pct")
            s = speedup_fact(f, r)
            here[workload] = {"efficiency": eff, "verdict": vs_one(f, _id("related_vs_one", workload), s)}
    out["related"] = {"workers": f.aggregate("related_workers", RELATED_TABLE, "max", "workers",
                                             where={"status": "ok", **threading}, fmt="int"),
                      "backends": sorted(set(cells["backend"])) if "backend" in cells else [],
                      "kinds": kinds, "here": here, "baseline": baseline}
    return out


# --- the summary table ------------------------------------------------------------------------------

def _cell(value, lo, hi, digits: str = "num") -> str:
    fmt = (lambda x: f"{x:.2f}") if digits == "fixed2" else fmt_num
    if value is None or pd.isna(value):
        return "n/a"
    return fmt_ci(value, lo, hi, fmt).replace(" (", "<br>(")


def speedup_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The paper's table: per runtime and workload, the sequential time and what threads
    and processes at the most workers did, each median over its interval; a point with a
    launch that stayed disturbed says how many."""
    ok = _ok(summary)
    par = summary[summary["execution"] != "sequential"]
    top = int(par["workers"].max()) if len(par) else 1
    baseline = summary["baseline"].iloc[0] if len(summary) else "baseline"
    disturbed = "disturbed_reps" in ok and bool((ok["disturbed_reps"].fillna(0) > 0).any())
    rows = []
    for (runtime, workload), g in ok.groupby(["runtime", "workload"], sort=False):
        seq = _point(g, runtime, workload, "sequential", 1)
        thr = _point(g, runtime, workload, "threads", top)
        prc = _point(g, runtime, workload, "processes", top)

        def ms(r):
            return "n/a" if r is None else _cell(r["median_wall_sec"] * 1e3, r["median_wall_sec_ci_low"] * 1e3,
                                                 r["median_wall_sec_ci_high"] * 1e3)

        def col(r, column, digits="fixed2"):
            return "n/a" if r is None else _cell(r[column], r.get(f"{column.split('_vs_')[0]}_ci_low"),
                                                 r.get(f"{column.split('_vs_')[0]}_ci_high"), digits)

        row = {"runtime": runtime, "workload": workload, "sequential, ms": ms(seq), f"threads ({top}), ms": ms(thr),
               "threads speedup": col(thr, "speedup_vs_sequential"),
               "threads CPU s/s": "n/a" if thr is None or pd.isna(thr["cpu_sec_per_wall_sec"])
               else _cell(thr["cpu_sec_per_wall_sec"], thr["cpu_sec_per_wall_sec_ci_low"],
                          thr["cpu_sec_per_wall_sec_ci_high"], "fixed2"),
               f"processes ({top}) speedup": col(prc, "speedup_vs_sequential"),
               f"threads time / {baseline}'s": col(thr, "ratio_vs_baseline")}
        if disturbed:
            row["disturbed launches"] = str(int(g["disturbed_reps"].fillna(0).max()))
        rows.append(row)
    return pd.DataFrame(rows)


# The paper's copy of the table, narrow enough for the PDF's page: runtime over workload in
# one column, each header on lines no longer than the intervals under it.
PAPER_HEADERS = {"sequential, ms": "sequential,<br>ms", "threads speedup": "threads<br>speedup",
                 "threads CPU s/s": "threads<br>CPU s/s", "disturbed launches": "disturbed<br>launches"}


def paper_speedup_table(summary: pd.DataFrame) -> pd.DataFrame:
    """`speedup_table` as the paper prints it (the report keeps one column per key)."""
    frame = speedup_table(summary)
    if frame.empty:
        return frame
    frame.insert(0, "runtime<br>workload", frame.pop("runtime") + "<br>" + frame.pop("workload"))
    headers = {}
    for column in frame.columns[1:]:
        if column in PAPER_HEADERS:
            headers[column] = PAPER_HEADERS[column]
        elif column.endswith(", ms"):  # threads (2), ms
            headers[column] = column.replace(", ms", ",<br>ms")
        elif column.endswith(" speedup"):  # processes (2) speedup
            headers[column] = column.replace(" speedup", "<br>speedup")
        elif " / " in column:  # threads time / cpython's
            headers[column] = column.replace(" / ", "<br>/ ")
    return frame.rename(columns=headers)


def report_tables(tables: dict[str, pd.DataFrame]) -> dict:
    """The paper's tables as Snakemake's report shows them, {name: frame}; each one's caption is
    in captions.yml beside the templates, under `tables:`."""
    flat = {"<br>": " "}
    return {"gil_speedup_table": speedup_table(tables["gil_summary"]).replace(flat, regex=True),
            "gil_runtimes_table": runtimes_table(tables["gil_runtimes"]),
            "gil_comparisons_table": comparisons_table(tables["gil_comparisons"])}


# --- the headline and the limitations ---------------------------------------------------------------

def headline(f: Facts, ok: pd.DataFrame, comparisons: pd.DataFrame, seed: dict, top: int | None) -> dict:
    """The free-threaded build's thread speedup at the most workers on the scaled pure-Python
    workload beside the same binary's with its GIL on; the seed's own figure (a time
    ratio of its GIL-less runtime to CPython on its workload in threads) beside the same
    ratio here, which is not the same quantity."""
    if top is None or top < 2:
        return {"headline": None}
    for workload in HEADLINE_WORKLOADS:
        ft = _point(ok, FT, workload, "threads", top)
        on = _point(ok, FT_GIL, workload, "threads", top)
        if ft is not None and on is not None and pd.notna(ft["speedup_vs_sequential"]) \
                and pd.notna(on["speedup_vs_sequential"]):
            break
    else:
        return {"headline": None}
    s_ft, s_on = speedup_fact(f, ft), speedup_fact(f, on)
    out = {"workload": workload, "workers": workers_fact(f, ft), "ft": s_ft, "on": s_on,
           "verdict": f.verdict("headline_ft_vs_gil", s_ft, s_on, better="higher than", worse="lower than"),
           "ft_vs_one": vs_one(f, "headline_ft_vs_one", s_ft), "on_vs_one": None, "seed": None, "cpu": None}
    # the same point's times compared directly (the GIL's cost: on over off), where two
    # speedups, each over its own sequential run, may not tell the two apart
    cost = comparisons[(comparisons["comparison"] == "gil_cost") & (comparisons["workload"] == workload)
                       & (comparisons["execution"] == "threads") & (comparisons["workers"] == top)]
    out["cost"] = _comparison_item(f, cost.iloc[0], *GIL_COST_WORDS) if len(cost) else None
    out["launches"] = None
    if out["verdict"].value == SAME and "gil_runs" in f.tables:
        # where the two are not told apart, how far each one's launches ranged
        def launches(point) -> dict:
            where = {"runtime": point["runtime"], "workload": workload, "execution": "threads", "workers": top}
            return {end: f.aggregate(_id("launch", end, point["runtime"], workload, "threads", f"w{top}"),
                                     "gil_runs", end, "launch_ms", where=where, via=LAUNCHES, unit="ms",
                                     about=(point["runtime"],)) for end in ("min", "max")}
        ranged = {"ft": launches(ft), "on": launches(on)}
        out["launches"] = ranged if all(r["min"].value is not None for r in ranged.values()) else None
    if out["verdict"].value != "lower than" and pd.notna(ft.get("cpu_sec_per_wall_sec")):
        # the threads ran at once only if they kept more than one core busy: the CPU time
        # says so, whatever the speedup's interval (no sentence asks it where the GIL-less threads gained less)
        cpu, at_once = ran_at_once(f, ft, "headline_ft_cpu_vs_parallel")
        out["cpu"] = {"value": cpu, "verdict": at_once}
        if out["verdict"].value == "higher than" and at_once.value == "above":
            # the GIL-on speedup against one: only the sentence of threads run at once sets it there
            out["on_vs_one"] = vs_one(f, "headline_on_vs_one", s_on)
    row = comparisons[(comparisons["comparison"] == "freethreading_overhead")
                      & (comparisons["workload"] == "multithread_cpu") & (comparisons["execution"] == "threads")
                      & (comparisons["workers"] == top)]
    if len(row):
        # the ratio's verdict against one: set beside the seed's 3.3, a ratio alone would
        # read as a finding whatever its interval
        out["seed"] = _comparison_item(f, row.iloc[0], "slower than", "faster than")
    return {"headline": out}


def limitations(f: Facts, summary: pd.DataFrame, runtimes: pd.DataFrame, machine: dict, ceil: list) -> dict:
    cores = f.machine_value("cores", "machine.logical_cores", fmt="int")
    par = summary[summary["execution"] != "sequential"]
    top = f.aggregate("workers_max", "gil_summary", "max", "workers", where={"execution": ["threads", "processes"]},
                      fmt="int") if len(par) else None
    absent = [{"name": r["runtime"], "what": WHAT.get(r["runtime"]), "reason": runtime_fact(f, r, "reason", "reason")}
              for _, r in runtimes[runtimes["status"] != "measured"].iterrows()]
    # the free-threaded build: the newest CPython the config looks for, and what was built
    versions = machine["config"]["gil"].get("cpython", {}).get("versions") or []
    built = runtimes[(runtimes["runtime"] == FT) & (runtimes["status"] == "measured")]
    older = None
    if versions and len(built) and built.iloc[0].get("origin") == "build" and not str(
            built.iloc[0]["runtime_version"]).startswith(f"{versions[0]}."):
        older = {"versions": f.config("cpython_versions", "gil.cpython.versions", fmt="list"),
                 "version": runtime_fact(f, built.iloc[0], "runtime_version", "version")}
    readable = [c for c in (ceil or []) if c["verdict"].value == "above"]
    nulled = summary[(summary["status"] == "ok") & summary["cpu_null_reason"].notna()] \
        if "cpu_null_reason" in summary else summary.iloc[0:0]
    # the baseline every time ratio divides by: which CPython it is, beside the seed's
    name = machine["config"]["gil"]["baseline"]
    base = runtimes[(runtimes["runtime"] == name) & (runtimes["status"] == "measured")]
    baseline = None
    if len(base) and pd.notna(base.iloc[0].get("runtime_version")):
        baseline = {"name": name, "version": runtime_fact(f, base.iloc[0], "runtime_version", "version"),
                    "seed": f.seed("seed_cpython_version", SEED, "protoPython vs CPython 3.14", 3.14, fmt="plain")}
    return {"lim": {"cores": cores, "top": top, "absent": absent, "older": older, "ceiling": readable,
                    "cpu_nulled": list(dict.fromkeys(nulled["runtime"])), "baseline": baseline}}


# --- the context ------------------------------------------------------------------------------------

def facts(f: Facts, tables: dict[str, pd.DataFrame]) -> dict:
    """The section's facts, registered on `f`, and the rest of its templates' context."""
    machine = f.machine
    runtimes, comparisons = tables["gil_runtimes"], tables["gil_comparisons"]
    # the rows the facts read are rows of gil_summary through POINTS
    summary = points(tables["gil_summary"])
    ok = _ok(summary)
    controls = _controls(runtimes)
    par = ok[ok["execution"] != "sequential"]
    top = int(par["workers"].max()) if len(par) else None
    baseline = machine["config"]["gil"]["baseline"]
    ctx: dict = {"any_ok": not ok.empty, "baseline": baseline,
                 "controls": sorted(controls),
                 "tables": {"gil_runtimes": runtimes_table(runtimes), "gil_speedup": paper_speedup_table(summary),
                            "gil_freethreading": comparisons_frame(comparisons) if len(comparisons) else None}}
    if top is not None:
        f.aggregate("top", "gil_summary", "max", "workers", where={"status": "ok",
                                                                   "execution": ["threads", "processes"]}, fmt="int")
    seed = seed_facts(f)
    ctx.update(setup(f, summary, runtimes, machine))
    ctx.update(runtimes_part(f, summary, runtimes))
    ctx.update(report_part(f, summary, runtimes, machine))
    ctx.update(seed_row(f, summary, runtimes, seed))
    if ctx["seed_row"]:
        ctx["tables"]["gil_seed_row"] = ctx["seed_row"]["frame"]
    ctx.update(freethreading(f, summary, runtimes, comparisons, seed))
    ctx.update(wall_time(f, ok, controls))
    ctx["wall_drawn"] = bool(len(ok[~ok["runtime"].isin(controls)]))
    ctx["speedup_drawn"] = bool(par["speedup_vs_sequential"].notna().any())
    if top is not None:
        ctx.update(speedup(f, ok, runtimes, controls, top))
        ctx.update(utilization(f, ok, runtimes, controls, top))
    else:
        ctx.update(thread_groups=[], processes=[], beyond_workers=[], at_once=None, wide_launches=[], ceiling=None,
                   cpu_ranges=[],
                   cpu_nulled=[], cpu_seq_low=None, cpu_serial=None, cpu_drawn=False)
    ctx.update(related(f, ok, machine, tables.get(RELATED_TABLE), baseline))
    ctx.update(headline(f, ok, comparisons, seed, top))
    ctx.update(limitations(f, summary, runtimes, machine, ctx.get("ceiling")))
    return ctx
