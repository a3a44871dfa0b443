"""The facts of the dispatch section, computed from the study's tables; the words are the
templates in `paper/sections/dispatch/` (one per generated part), which
`paper/sections/dispatch.qmd` includes from `paper/_generated/dispatch/`.

Every fact names the system it belongs to (a platform mode or a peer), and every
sentence the system, workload and worker count it speaks of. Times and throughputs are
medians over the repetitions of a system's protocol with their 95% bootstrap intervals.
Python computes numbers and verdicts, never sentences: who had the highest throughput is a
fact, whether another can be told apart from it a verdict from the two intervals ("lower
than", or "not distinguishable on this machine from"). A list of findings names the
largest group by its count and the others (the exceptions) one by one.

The seed's numbers are quoted from it (seed facts) and set beside this run's only for the
same quantity at the same worker counts: its per-mode averages are over 1, 2, 4 and 8
workers, so they stand beside this run's averages over those counts (the main sweep, or
the scale experiment for push and push-naive), never beside a saturation run or another
sweep; its push mode is push-naive's design, so its anomaly stands beside push-naive's at
each of its worker counts. The anomaly's explanation is tested by three predictions, each
judged from intervals; "confirmed" is said only where every interval agrees.
"""

from __future__ import annotations

import re

import pandas as pd

from parbench.disturbance import NUMBERED, disturbed_ends
from parbench.paper.facts import SAME, Fact, Facts
from parbench.paper.format import fmt_ci, fmt_num, fmt_pct, pct_format
from parbench.studies.dispatch import figures as figs
from parbench.studies.dispatch.aggregate import dose_slope, main_only, mode_metrics, systems_table
from parbench.studies.dispatch.plan import MAIN, MODES, SYSTEMS

# The processed tables the facts read.
TABLES = ["dispatch_summary", "dispatch_runs", "dispatch_tasks", "dispatch_cells", "dispatch_anomaly", "dispatch_load"]
# Tables derived from those (`via`), which the check computes again the same way.
SYSTEMS_OF = "parbench.studies.dispatch.paper:systems_frame"
CELLS_OF = "parbench.studies.dispatch.paper:cells_frame"
PREDICTIONS = "parbench.studies.dispatch.paper:predictions"
SLOPES = "parbench.studies.dispatch.paper:slopes"
GAPS = "parbench.studies.dispatch.paper:redispatch_gaps"
TASK_RUNS = "parbench.studies.dispatch.paper:task_run_times"
RUNS_MS = "parbench.studies.dispatch.paper:run_times_ms"
SUMMARY = ["experiment", "system", "phase", "workload", "submission", "workers"]
ANOMALY = ["experiment", "system", "workers", "from_workers", "workload", "first_after_change"]
# The columns that name one row of each table (and of the tables derived from it).
KEYS = {
    "dispatch_summary": SUMMARY,
    "dispatch_anomaly": ANOMALY,
    f"dispatch_anomaly|{PREDICTIONS}": ANOMALY,
    f"dispatch_runs|{SLOPES}": ["system"],
    "dispatch_cells": ["experiment", "system", "rep"],
    f"dispatch_cells|{NUMBERED}": ["experiment", "system", "rep"],
    f"dispatch_cells|{SYSTEMS_OF}": ["system"],
}
# The generated parts (templates in paper/sections/dispatch/), in the order the section
# includes them; `headline` and `limitations` go to the paper's summary and limitations.
FRAGMENTS = ["setup", "modes", "latency", "scaling", "anomaly", "dose", "order", "verdict", "saturation", "summary",
             "headline", "limitations"]
# The paper's tables, also written as HTML and CSV for Snakemake's report.
REPORT_TABLES = ["dispatch_modes_table", "dispatch_anomaly_table", "dispatch_dose_table", "dispatch_order_table",
                 "dispatch_saturation_table"]
SEED = "dispatch.txt"
CONFIDENCE = "parbench.studies.dispatch.aggregate:CONFIDENCE"
# A system's runs at the main sweep's most workers disagree widely when the longest took more
# than this many times the shortest: the text then gives their range beside the efficiency.
WIDE_RUNS = 2.0

# How the text names each system; `ABOUT`: the word a sentence stating a fact of the
# system must contain.
NAMES = {"local": "local mode", "pull": "pull mode", "push": "push mode", "push-naive": "push-naive",
         "processpool": "ProcessPoolExecutor", "dask": "Dask", "celery": "Celery", "ray": "Ray"}
ABOUT = {"local": "local", "pull": "pull", "push": "push", "push-naive": "push-naive",
         "processpool": "ProcessPoolExecutor", "dask": "Dask", "celery": "Celery", "ray": "Ray"}
WORKLOAD_NAMES = figs.WORKLOAD_NAMES
# How a footnote names a row (`Facts.note_names`): its workload as the text does, batched
# submission as the saturation part does; the phase, the main sweep and one request per task
# go without saying (each sentence gives them)
NOTE_NAMES = {"phase": None, "experiment": {MAIN: None}, "submission": {"per_task": None, "batch": "batched"},
              "workload": {w: f"{name} tasks" for w, name in WORKLOAD_NAMES.items()}}
# The seed's modes, and this run's system of the same design: the seed's push is
# push-naive (push is the fixed design, which the seed never ran).
SEED_OF = {"local": "local", "pull": "pull", "push-naive": "push"}


def _id(*parts) -> str:
    return ".".join(str(p).replace(" ", "_") for p in parts)


def _w(row) -> str:
    return f"w{int(row['workers'])}"


def _config(machine: dict) -> dict:
    return machine.get("config", {}).get("dispatch", {})


# --- derived tables (`via`) ------------------------------------------------------------------

def cells_frame(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per cell (experiment and system), where dispatch_cells has one per
    repetition of each."""
    return cells.drop_duplicates(["experiment", "system"])


def systems_frame(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per system of the main sweep: its worst status over its repetitions, that
    repetition's failure, and how many repetitions (`aggregate.systems_table`)."""
    return systems_table(main_only(cells))


def against_prediction(row) -> str:
    """Whether a group's measured stall is what the explanation predicts: its interval
    (the median alone with one repetition) against the predicted one widened by the
    dispatcher's check and the dispatching (`figures.prediction_top`); "as
    predicted" when they overlap."""
    measured = _interval(row, "stall_sec")
    low, high = _interval(row, "predicted_stall_sec")
    if None in measured or None in (low, high) or any(pd.isna(v) for v in (*measured, low, high)):
        return "n/a"
    window = (low, figs.prediction_top(high, row["heartbeat_interval_sec"]))
    if measured[1] < window[0]:
        return "shorter than predicted"
    if measured[0] > window[1]:
        return "longer than predicted"
    return "as predicted"


def predictions(anomaly: pd.DataFrame) -> pd.DataFrame:
    """The anomaly table with each group's verdict against the explanation's prediction
    (`against_prediction`) in `verdict`."""
    out = anomaly.copy()
    out["verdict"] = [against_prediction(r) for r in out.to_dict("records")] if len(out) else []
    return out


def slopes(runs: pd.DataFrame) -> pd.DataFrame:
    """Per system with heartbeats, the dose-response slope (`aggregate.dose_slope`) over
    the main sweep and the expiry experiments: `slope` with its interval, `runs`, and
    `expiries` (how many expiries); no row without two expiries."""
    experiments = sorted({e for e in runs["experiment"].unique() if figs._is_dose(e)}) if len(runs) else []
    rows = []
    for system in ("push-naive", "push"):
        found = dose_slope(runs, system, experiments)
        if found:
            rows.append({"system": system, "slope": found["slope"], "slope_ci_low": found["slope_ci_low"],
                         "slope_ci_high": found["slope_ci_high"], "runs": found["runs"],
                         "expiries": len(found["expiries"])})
    return pd.DataFrame(rows, columns=["system", "slope", "slope_ci_low", "slope_ci_high", "runs", "expiries"])


def redispatch_gaps(tasks: pd.DataFrame) -> pd.DataFrame:
    """The tasks table with `redispatch_sec`: how long after its first dispatch a task was
    dispatched the last time (0 for a task dispatched once)."""
    out = tasks.copy()
    out["redispatch_sec"] = (out["dispatched_ms"] - out["first_dispatched_ms"]) / 1000
    return out


# --- the seed ------------------------------------------------------------------------------------

def seed_text() -> str:
    from parbench.paper.check import seeds_dir

    return (seeds_dir() / SEED).read_text(errors="replace")


def seed_anomaly(text: str | None = None) -> dict[int, dict]:
    """The seed's push anomaly lines, `- 2 workers: 7.67s completion (59x slower)`:
    workers -> {"quote", "seconds", "times" (None for its one-worker baseline)}."""
    text = text if text is not None else seed_text()
    out = {}
    for m in re.finditer(r"- ((\d+) workers?: ([\d.]+)s completion \((?:normal|(\d+)x slower)\))", text):
        out[int(m.group(2))] = {"quote": m.group(1), "seconds": float(m.group(3)),
                                "times": int(m.group(4)) if m.group(4) else None}
    return out


SEED_METRICS = {"noop": r"\*\*No-op Throughput\*\*: ([\d.]+) tasks/s",
                "cpu": r"\*\*CPU Throughput\*\*: ([\d.]+) tasks/s",
                "io": r"\*\*I/O Throughput\*\*: ([\d.]+) tasks/s",
                "latency": r"\*\*Average Latency\*\*: ([\d.]+)ms \(no-op\)",
                "efficiency": r"Scaling efficiency: ([\d.]+)%"}


def seed_modes(text: str | None = None) -> dict[str, dict[str, tuple[str, float]]]:
    """The seed's per-mode numbers (its "Performance Results by Mode" blocks): mode ->
    metric -> (the quote, its value)."""
    text = text if text is not None else seed_text()
    out = {}
    blocks = re.split(r"^### \d+\. ", text, flags=re.M)
    for block in blocks[1:]:
        mode = block.split()[0].lower()
        if mode not in ("local", "pull", "push") or mode in out:  # the first block of each mode
            continue
        block = block.split("\n## ")[0]
        out[mode] = {k: (m.group(0), float(m.group(1))) for k, pattern in SEED_METRICS.items()
                     if (m := re.search(pattern, block))}
    return out


# The seed's protocol, as its report words it: (fact, pattern whose first group is the number)
SEED_PROTOCOL = {"seed_processes": r"Each worker runs (\d+) processes \(except Local mode\)",
                 "seed_tasks_per_worker": r"(\d+) tasks per worker configuration",
                 "seed_cpu_iterations": r"Quadratic computation \((\d+) iterations\)",
                 "seed_io_sleep": r"(\d+)ms sleep \(concurrency testing\)"}


def seed_setup(f: Facts, text: str | None = None) -> dict:
    """The seed's protocol, read from its report: its worker counts (the fewest and the
    most as facts), processes and tasks per worker, its CPU loop and its sleep."""
    text = text if text is not None else seed_text()
    m = re.search(r"Worker configurations: ([\d, ]+) workers", text)
    counts = [int(w) for w in re.findall(r"\d+", m.group(1))]
    f.seed("seed_workers_min", SEED, m.group(0), min(counts), fmt="int")
    f.seed("seed_workers_max", SEED, m.group(0), max(counts), fmt="int")
    for key, pattern in SEED_PROTOCOL.items():
        found = re.search(pattern, text)
        f.seed(key, SEED, found.group(0), int(found.group(1)), fmt="int", unit="ms" if key == "seed_io_sleep" else None)
    return {"seed_counts": counts}


def seed_anomaly_facts(f: Facts) -> dict[int, dict]:
    """The seed's anomaly, one entry per worker count: its workers, its completion time
    and (after the first) how many times its one-worker time it took and the seconds it
    added to it."""
    out = {}
    for workers, line in sorted(seed_anomaly().items()):
        entry = {"workers": f.seed(_id("seed_anomaly", f"w{workers}", "workers"), SEED, line["quote"], workers,
                                   fmt="int"),
                 "time": f.seed(_id("seed_anomaly", f"w{workers}", "time"), SEED, line["quote"], line["seconds"],
                                unit="s"),
                 "times": None}
        if line["times"] is not None:
            entry["times"] = f.seed(_id("seed_anomaly", f"w{workers}", "times"), SEED, line["quote"], line["times"],
                                    fmt="int")
        out[workers] = entry
    seed_added(f, out)
    return out


# --- facts of one row ---------------------------------------------------------------------------

def row_fact(f: Facts, row, column: str, short: str, *, fmt: str = "num", unit: str | None = None,
             interval: bool = True) -> Fact:
    """A column of one row of dispatch_summary (`row` one of its rows), about its system."""
    key = _id(short, row["experiment"], row["system"], row["phase"], row["workload"], row["submission"], _w(row))
    return f.lookup(key, "dispatch_summary", row, column, fmt=fmt, unit=unit, interval=interval,
                    about=(ABOUT[row["system"]],))


def anomaly_fact(f: Facts, row, column: str, short: str, *, fmt: str = "num", unit: str | None = None,
                 interval: bool = True, via: str | None = None) -> Fact:
    """A column of one row of dispatch_anomaly (or of `predictions` of it), about its system."""
    key = _id(short, row["experiment"], row["system"], f"{int(row['from_workers'])}to{int(row['workers'])}",
              row["workload"], "first" if row["first_after_change"] else "later")
    return f.lookup(key, "dispatch_anomaly", row, column, fmt=fmt, unit=unit, interval=interval, via=via,
                    about=(ABOUT[row["system"]],))


# --- rankings and groups -------------------------------------------------------------------------

def ranking(f: Facts, rows: pd.DataFrame, column: str, prefix: str, *, unit: str, fmt: str = "num") -> dict | None:
    """The highest `column` among `rows` (one row per system) and each other system's
    against it: a verdict from the two intervals ("lower than", or not distinguishable).
    The smaller group is the one the text names (the exceptions)."""
    rows = rows.dropna(subset=[column]).sort_values(column, ascending=False)
    if rows.empty:
        return None
    best = rows.iloc[0]
    top = row_fact(f, best, column, prefix, fmt=fmt, unit=unit)
    others = []
    for _, r in rows.iloc[1:].sort_values("system", key=lambda s: s.map(SYSTEMS.index)).iterrows():
        value = row_fact(f, r, column, prefix, fmt=fmt, unit=unit)
        verdict = f.verdict(_id(prefix, "vs_highest", r["experiment"], r["system"], r["workload"], r["submission"],
                                _w(r)), value, top, better="higher than", worse="lower than")
        others.append({"name": NAMES[r["system"]], "value": value, "verdict": verdict})
    verdicts = [o["verdict"] for o in others]
    same = [o for o in others if o["verdict"].value == SAME]
    lower = [o for o in others if o["verdict"].value == "lower than"]
    key = _id(prefix, best["experiment"], best["workload"], best["submission"], _w(best))
    return {"best": {"name": NAMES[best["system"]], "value": top}, "others": others, "same": same, "lower": lower,
            "n_others": f.count_of(_id(key, "n_others"), verdicts),
            "n_same": f.count_of(_id(key, "n_same"), verdicts, SAME),
            "n_lower": f.count_of(_id(key, "n_lower"), verdicts, "lower than"),
            "n_spread": f.count_within_spread(_id(key, "n_within_spread"), verdicts),
            "name_same": len(same) <= len(lower)}


def grouped(f: Facts, prefix: str, items: list[dict], words: tuple[str, ...]) -> dict:
    """Items (each with a `verdict` fact) by verdict: the counts of each of `words` (facts)
    and the members, so the text can state the largest group by its count and name the
    others."""
    verdicts = [i["verdict"] for i in items]
    out = {"n": f.count_of(_id(prefix, "n"), verdicts), "items": items,
           "n_spread": f.count_within_spread(_id(prefix, "n_within_spread"), verdicts)}
    for word in words:
        tag = word.split()[0]
        out[f"n_{tag}"] = f.count_of(_id(prefix, f"n_{tag}"), verdicts, word)
        out[tag] = [i for i in items if i["verdict"].value == word]
    return out


# --- setup ---------------------------------------------------------------------------------------

def setup(f: Facts, tables: dict, machine: dict) -> dict:
    dc = _config(machine)
    cells = tables["dispatch_cells"]
    f.config("workers", "dispatch.workers", fmt="list")
    processes = f.config("processes", "dispatch.processes_per_worker", fmt="int")
    local = dc.get("local_processes_per_worker")
    if local is not None and local != processes.value:
        f.config("local_processes", "dispatch.local_processes_per_worker", fmt="int")
    f.config("tasks_per_worker", "dispatch.tasks_per_worker", fmt="int")
    f.config("runs_per_count", "dispatch.runs_per_worker_count", fmt="int")
    f.config("cpu_iterations", "dispatch.cpu_iterations", fmt="int")
    f.config("io_sleep", "dispatch.io_sleep_sec", unit="s")
    f.config("sat_tasks", "dispatch.saturation.tasks", fmt="int")
    f.config("sat_workers", "dispatch.saturation.workers", fmt="list")
    f.config("sat_runs", "dispatch.saturation.runs", fmt="int")
    interval = f.config("hb_interval", "dispatch.platform.heartbeat_interval_sec", unit="s")
    liveness = f.config("hb_liveness", "dispatch.platform.heartbeat_liveness", fmt="int")
    f.derived("expiry", "product", interval, liveness, unit="s")
    f.constant("confidence", CONFIDENCE, fmt="pct")
    f.config("order_seed", "run_order_seed", fmt="plain")

    systems = systems_frame(cells)
    f.aggregate("n_systems", "dispatch_cells", "count", via=SYSTEMS_OF)
    f.aggregate("n_measured", "dispatch_cells", "count", where={"status": "ok"}, via=SYSTEMS_OF)
    reps = f.aggregate("repetitions", "dispatch_cells", "max", "repetitions", via=SYSTEMS_OF, fmt="int")
    f.aggregate("n_failed", "dispatch_cells", "count", where={"status": "failed"}, via=SYSTEMS_OF)

    def failure(r) -> Fact:
        return f.lookup(_id("failure", r["system"]), "dispatch_cells", r, "failure", fmt="text", interval=False,
                        via=SYSTEMS_OF, about=(ABOUT[r["system"]],))

    failed = [{"name": NAMES[r["system"]], "failure": failure(r)} for _, r in systems.iterrows()
              if r["status"] == "failed"]
    unavailable = [{"name": NAMES[r["system"]], "failure": failure(r)} for _, r in systems.iterrows()
                   if r["status"] == "unavailable"]

    def count(r, column: str) -> Fact:
        return f.lookup(_id(column, r["system"]), "dispatch_cells", r, column, fmt="int", interval=False,
                        via=SYSTEMS_OF, about=(ABOUT[r["system"]],))

    # ran in some repetitions, could not start in the others: measured, on fewer repetitions
    partial = [{"name": NAMES[r["system"]], "failure": failure(r), "ran": count(r, "repetitions_ok"),
                "of": count(r, "repetitions"), **busy_failures(f, tables, r["system"])} for _, r in systems.iterrows()
               if r["status"] == "ok" and r["repetitions_ok"] < r["repetitions"]]
    names = [NAMES[s] for s in SYSTEMS if s in set(systems["system"])]
    local_note = {"differs": "local_processes" in f.view()}
    return {"systems": names, "several_reps": (reps.value or 0) > 1, "failed": failed, "unavailable": unavailable,
            "partial": partial, "local": local_note, "experiments": experiments(f, tables)}


def busy_failures(f: Facts, tables: dict, system: str) -> dict:
    """Of a system's repetitions that could not run, those measured again first because
    the machine was busy elsewhere (`retried`), and how busy it was on their earlier
    attempts and their last: a failure that may be the load's."""
    load = tables.get("dispatch_load")
    if load is None or "attempts" not in load:
        return {"retried": None}
    where = {"cell": system, "status": {"!=": "ok"}, "attempts": {">=": 2}}
    retried = f.aggregate(_id("failed_retried", system), "dispatch_load", "count", where=where,
                          about=(ABOUT[system],))
    if not retried.value:
        return {"retried": None}
    return {"retried": retried,
            "earlier": f.aggregate(_id("failed_earlier_load", system), "dispatch_load", "max",
                                   "earlier_other_cores_max", where=where, fmt="fixed2", about=(ABOUT[system],)),
            "last": f.aggregate(_id("failed_last_load", system), "dispatch_load", "max", "load_other_cores",
                                where=where, fmt="fixed2", about=(ABOUT[system],))}


def experiments(f: Facts, tables: dict) -> dict | None:
    """The push anomaly's experiments that ran: what each changed, its systems, and the
    cells that failed a check."""
    cells = tables["dispatch_cells"]
    exp = cells[cells["experiment"] != MAIN]
    if exp.empty:
        return None
    names = sorted(exp["experiment"].unique())
    where = {"experiment": names}
    f.aggregate("n_experiments", "dispatch_cells", "nunique", "experiment", where=where)
    f.aggregate("n_experiment_cells", "dispatch_cells", "count", where=where, via=CELLS_OF, fmt="int")
    f.aggregate("n_experiment_runs", "dispatch_cells", "count", where=where, fmt="int")
    f.aggregate("n_experiment_failed", "dispatch_cells", "count", where={**where, "status": "failed"})
    runs = tables["dispatch_runs"]
    items = []
    for name in names:
        systems = [NAMES[s] for s in SYSTEMS if s in set(exp.loc[exp["experiment"] == name, "system"])]
        item = {"name": name, "systems": systems, "kind": name.split("-")[0]}
        if item["kind"] == "workers":
            item["workers"] = f.aggregate(_id("exp", name, "workers"), "dispatch_runs", "values", "workers",
                                          where={"experiment": name}, fmt="list")
        elif item["kind"] == "expiry":
            item["interval"] = f.aggregate(_id("exp", name, "interval"), "dispatch_runs", "max",
                                           "heartbeat_interval_sec", where={"experiment": name}, unit="s")
            item["liveness"] = f.aggregate(_id("exp", name, "liveness"), "dispatch_runs", "max", "heartbeat_liveness",
                                           where={"experiment": name}, fmt="int")
            item["expiry"] = f.aggregate(_id("exp", name, "expiry"), "dispatch_runs", "max", "expiry_sec",
                                         where={"experiment": name}, unit="s")
        elif item["kind"] == "order":
            order = runs.loc[runs["experiment"] == name, "workload_order"].dropna()
            item["order"] = figs.order_words(order.iloc[0]) if len(order) else name
        items.append(item)
    bad = exp[exp["status"] != "ok"]
    failed = [{"name": NAMES[r["system"]], "label": f"{r['system']}@{r['experiment']}",
               "rep": f.lookup(_id("exp_rep", r["system"], r["experiment"], r["rep"]), "dispatch_cells",
                               {**r, "repetition": int(r["rep"]) + 1}, "repetition", fmt="int", interval=False,
                               via=NUMBERED, about=(ABOUT[r["system"]],)),
               "failure": f.lookup(_id("exp_failure", r["system"], r["experiment"], r["rep"]), "dispatch_cells", r,
                                   "failure", fmt="text", interval=False, about=(ABOUT[r["system"]],))}
              for _, r in bad.iterrows()]
    return {"settings": items, "failed": failed}


# --- the main sweep: throughput, latency, weak scaling ---------------------------------------------

def _weak(summary: pd.DataFrame, experiment: str = MAIN) -> pd.DataFrame:
    s = summary[(summary["experiment"] == experiment) & (summary["phase"] == "weak_scaling")
                & (summary["status"] == "ok")]
    return s


def modes(f: Facts, summary: pd.DataFrame, machine: dict) -> dict:
    """At the main sweep's most workers, per workload, the highest weak-scaling throughput
    and each other system's against it."""
    weak = _weak(summary)
    if weak.empty:
        return {"throughput": [], "top": None}
    top = f.aggregate("top_workers", "dispatch_summary", "max", "workers",
                      where={"experiment": MAIN, "phase": "weak_scaling", "status": "ok"}, fmt="int")
    titles = figs.workload_titles(machine)
    out = []
    for workload in figs.WORKLOAD_ORDER:
        rows = weak[(weak["workload"] == workload) & (weak["workers"] == top.value)]
        rank = ranking(f, rows, "median_throughput_tasks_per_sec", "rate", unit="tasks/s")
        if rank:
            out.append({"workload": WORKLOAD_NAMES[workload], "title": titles[workload], "rank": rank})
    return {"throughput": out, "top": top, "first": first_workload(f.tables.get("dispatch_runs"))}


def first_workload(runs: pd.DataFrame | None) -> str | None:
    """The workload every system of the main sweep ran first at each worker count, where one
    order held for all of them (its run is the first after each change of workers, and pays
    what that run pays), named as the text names it; None where the orders differ."""
    if runs is None or "workload_order" not in runs:
        return None
    orders = set(runs.loc[runs["experiment"] == MAIN, "workload_order"].dropna())
    if len(orders) != 1:
        return None
    first = next(iter(orders)).split(",")[0]
    return WORKLOAD_NAMES.get(first)


def seed_averages(f: Facts, summary: pd.DataFrame, machine: dict, seed_counts: list[int]) -> dict:
    """The seed's per-mode averages (over its worker counts) beside this run's over the
    same counts: the main sweep where it ran them, else the scale experiment (push and
    push-naive); the seed's modes this run did not measure at its counts, named."""
    seed = seed_modes()
    weak = summary[(summary["phase"] == "weak_scaling") & (summary["status"] == "ok")]
    rows, missing = [], []
    for system in ("local", "pull", "push-naive", "push"):
        mine = weak[weak["system"] == system]
        if mine.empty:
            continue
        at_seed = [e for e, g in mine.groupby("experiment") if sorted(g["workers"].unique()) == seed_counts]
        experiment = MAIN if MAIN in at_seed else (at_seed[0] if at_seed else None)
        seed_mode = SEED_OF.get(system)
        if experiment is None:
            if seed_mode in seed and (mine["experiment"] == MAIN).any():
                missing.append({"name": NAMES[system], "seed": _seed_mode_facts(f, seed_mode, seed)})
            continue
        where = {"experiment": experiment, "system": system, "phase": "weak_scaling", "status": "ok"}
        about = (ABOUT[system],)

        def avg(metric: str, column: str, extra: dict, unit: str | None, fmt: str = "num") -> Fact:
            return f.aggregate(_id("avg", metric, experiment, system), "dispatch_summary", "mean", column,
                               where={**where, **extra}, fmt=fmt, unit=unit, about=about)

        row = {"name": NAMES[system], "system": system, "experiment": experiment,
               **{w: avg(w, "mean_throughput_tasks_per_sec", {"workload": w}, None) for w in ("noop", "cpu", "io")},
               "latency": avg("latency", "avg_latency_ms", {"workload": "noop"}, "ms"),
               "efficiency": avg("efficiency", "weak_scaling_efficiency", {"workers": {">": 1}}, None, "pct1"),
               "seed": _seed_mode_facts(f, seed_mode, seed) if seed_mode in seed else None}
        rows.append(row)
    dc = _config(machine)
    return {"rows": rows, "missing": missing,
            "fewer_processes": bool(rows) and dc.get("processes_per_worker") != f["seed_processes"].value}


def _seed_mode_facts(f: Facts, mode: str, seed: dict) -> dict:
    out = {"name": f"{mode} mode"}
    for metric, (quote, value) in seed[mode].items():
        unit = {"latency": "ms", "efficiency": "%"}.get(metric)
        out[metric] = f.seed(_id("seed", mode, metric), SEED, quote, value, unit=unit)
    return out


def latency(f: Facts, summary: pd.DataFrame, top: Fact | None) -> dict:
    """The median no-op latency at the main sweep's most workers: its lowest and highest,
    among every system and among the platform's modes; push-naive's slowest task when its
    first run there found stale workers."""
    if top is None:
        return {"latency": None}
    weak = _weak(summary)
    rows = weak[(weak["workload"] == "noop") & (weak["workers"] == top.value)].dropna(subset=["p50_latency_ms"])
    if rows.empty:
        return {"latency": None}

    def at(r) -> dict:
        # a range, no ranking: the latency percentiles have no interval
        return {"name": NAMES[r["system"]], "value": row_fact(f, r, "p50_latency_ms", "p50", unit="ms", interval=False)}

    ordered = rows.sort_values("p50_latency_ms")
    out = {"low": at(ordered.iloc[0]), "high": at(ordered.iloc[-1]), "several": len(rows) > 1, "platform": None,
           "naive": None}
    platform = ordered[ordered["system"].isin(MODES)]
    if len(platform) > 1 and len(platform) < len(rows):
        out["platform"] = {"low": at(platform.iloc[0]), "high": at(platform.iloc[-1])}
    naive = rows[rows["system"] == "push-naive"]
    if len(naive) and (naive.iloc[0]["stale_workers_first_run"] or 0) > 0:
        out["naive"] = row_fact(f, naive.iloc[0], "max_latency_ms", "max_latency", unit="ms", interval=False)
    return {"latency": out}


def scaling(f: Facts, summary: pd.DataFrame, top: Fact | None, machine: dict) -> dict:
    """Weak-scaling efficiency at the main sweep's most workers, per workload, against full
    efficiency (a verdict per system), and whether the processes outnumber the cores."""
    cores = f.machine_value("cores", "machine.logical_cores", fmt="int")
    if top is None or top.value is None or top.value <= 1:
        return {"efficiency": [], "crowded": None}
    weak = _weak(summary)
    out = []
    titles = figs.workload_titles(machine)
    for workload in figs.WORKLOAD_ORDER:
        rows = weak[(weak["workload"] == workload) & (weak["workers"] == top.value)].dropna(
            subset=["weak_scaling_efficiency"])
        if rows.empty:
            continue
        rows = rows.sort_values("system", key=lambda s: s.map(SYSTEMS.index))
        items = []
        for _, r in rows.iterrows():
            e = row_fact(f, r, "weak_scaling_efficiency", "eff",
                         fmt=pct_format(*(r.get(f"weak_scaling_efficiency{end}") for end in ("", "_ci_low", "_ci_high"))))
            items.append({"name": NAMES[r["system"]], "eff": e,
                          "verdict": f.bound_verdict(_id("eff_vs_full", workload, r["system"]), e, 1.0,
                                                     better="above", worse="below")})
        where = {"experiment": MAIN, "phase": "weak_scaling", "status": "ok", "workload": workload,
                 "workers": int(top.value), "system": list(rows["system"])}
        g = grouped(f, _id("eff", workload), items, ("above", "below", SAME))
        ends = rows["weak_scaling_efficiency"].min(), rows["weak_scaling_efficiency"].max()
        # near ends in one precision ("99% to 99.94%" read as uneven); ends a factor of ten
        # apart or more each in its own ("0.51% to 136%", not "136.09%")
        shared = not (ends[0] > 0 and ends[1] >= 10 * ends[0])
        fmt_min, fmt_max = (pct_format(*ends),) * 2 if shared else (pct_format(ends[0]), pct_format(ends[1]))
        g.update(workload=WORKLOAD_NAMES[workload], title=titles[workload], wide=wide_runs(f, where, items),
                 min=f.aggregate(_id("eff_min", workload), "dispatch_summary", "min", "weak_scaling_efficiency",
                                 where=where, fmt=fmt_min),
                 max=f.aggregate(_id("eff_max", workload), "dispatch_summary", "max", "weak_scaling_efficiency",
                                 where=where, fmt=fmt_max),
                 same=g["not"])
        out.append(g)
    processes = f["processes"]
    crowded = None
    if cores.value and processes.value and top.value * processes.value > cores.value:
        crowded = {"processes": f.derived("top_processes", "product", top, processes, fmt="int"), "task": None,
                   "idle": False}
        crowded.update(cpu_busy(f, int(top.value)))
    return {"efficiency": out, "crowded": crowded}


def wide_runs(f: Facts, where: dict, items: list[dict]) -> list[dict]:
    """The systems (of `items`, in `where`'s system order) whose runs on one worker or at
    `where`'s workers, the two counts an efficiency divides, disagreed widely from one
    repetition to the next: their shortest, median and longest completion times, so the text
    can say what an efficiency's wide interval rests on; a system with both, once (its
    `ranges`, one worker first)."""
    runs = f.tables["dispatch_runs"]
    runs = runs[(runs["experiment"] == where["experiment"]) & (runs["phase"] == where["phase"])
                & (runs["status"] == "ok") & (runs["workload"] == where["workload"])]
    out = []
    for system, item in zip(where["system"], items):
        ranges = []
        for workers in (1, where["workers"]):
            these = runs[(runs["system"] == system) & (runs["workers"] == workers)].dropna(
                subset=["completion_time_sec"])
            times = these["completion_time_sec"]
            if len(times) < 2 or not times.min() > 0 or times.max() <= WIDE_RUNS * times.min():
                continue
            at, about = {**where, "system": system, "workers": workers}, (ABOUT[system],)
            key = _id("runs", where["workload"], system, f"w{workers}")
            # runs of a repetition that stayed disturbed: an end of the range may be theirs
            disturbed = f.aggregate(_id(key, "n_disturbed"), "dispatch_runs", "count", "completion_time_ms",
                                    where={**at, "disturbed": True}, via=RUNS_MS, fmt="int", about=about) \
                if "disturbed" in these and these["disturbed"].fillna(False).astype(bool).any() else None
            ranges.append({"one": workers == 1, "disturbed": disturbed,
                           "disturbed_ends": disturbed_ends(times, these["disturbed"]) if disturbed else "",
                           "n": f.aggregate(_id(key, "n"), "dispatch_runs", "count", "completion_time_ms", where=at,
                                            via=RUNS_MS, fmt="int", about=about), **{
                end: f.aggregate(_id(key, op), "dispatch_runs", op, "completion_time_ms", where=at, unit="ms",
                                 via=RUNS_MS, about=about)
                for end, op in (("low", "min"), ("median", "median"), ("high", "max"))}})
        if ranges:
            out.append({"name": item["name"], "eff": item["eff"], "ranges": ranges})
    if out:
        f.constant("wide_runs", "parbench.studies.dispatch.paper:WIDE_RUNS", fmt="num")
    return out


def run_times_ms(runs: pd.DataFrame) -> pd.DataFrame:
    """Each run's completion time in milliseconds (`completion_time_ms`), to stand beside a
    task's."""
    return runs.assign(completion_time_ms=runs["completion_time_sec"] * 1e3)


def task_run_times(tasks: pd.DataFrame) -> pd.DataFrame:
    """Each task's running time in milliseconds (`run_ms`: its finish less its start),
    where the system records both."""
    timed = tasks.dropna(subset=["started_ms", "finished_ms"])
    return timed.assign(run_ms=timed["finished_ms"] - timed["started_ms"])


def cpu_busy(f: Facts, workers: int) -> dict:
    """How much of a CPU run at `workers` its tasks kept the cores busy, over the systems
    that record when a task started and finished (the platform's modes; the peers do not):
    a task's median running time, the tasks of a run, a run's median completion time, and
    the share of the cores' time in a run the tasks' running filled (`cpu_task_share`). Where
    that is under half, the tasks did not crowd the cores: processes that outnumber the
    cores did not share them much (the platform's own processes ran too, untimed)."""
    where = {"experiment": MAIN, "phase": "weak_scaling", "workload": "cpu", "workers": workers}
    tasks = f.tables.get("dispatch_tasks")
    if tasks is None or tasks["started_ms"].isna().all():
        return {}
    timed = task_run_times(tasks)
    systems = sorted(set(timed.loc[(timed["experiment"] == MAIN) & (timed["workload"] == "cpu")
                                   & (timed["workers"] == workers), "system"]))
    if not systems:
        return {}
    where = {**where, "system": systems}
    task = f.aggregate("cpu_task_ms", "dispatch_tasks", "median", "run_ms", where=where, via=TASK_RUNS, unit="ms")
    run = f.aggregate("cpu_run_ms", "dispatch_runs", "median", "completion_time_ms",
                      where={**where, "status": "ok"}, via=RUNS_MS, unit="ms")
    n = f.aggregate("cpu_run_tasks", "dispatch_runs", "median", "tasks", where={**where, "status": "ok"}, fmt="int")
    if None in (task.value, run.value, n.value) or not run.value:
        return {}
    busy = f.derived("cpu_tasks_busy_ms", "product", n, task, unit="ms")
    cores_time = f.derived("cpu_cores_time_ms", "product", run, f["cores"], unit="ms")
    share = f.derived("cpu_task_share", "ratio", busy, cores_time, fmt="pct")
    return {"task": task, "run": run, "tasks": n, "share": share, "systems": [NAMES[s] for s in systems],
            "idle": share.value < 0.5}


# --- the anomaly -----------------------------------------------------------------------------------

def _first_count(frame: pd.DataFrame, system: str, experiment: str) -> int | None:
    w = frame.loc[(frame["system"] == system) & (frame["experiment"] == experiment), "workers"]
    return int(w.min()) if len(w) else None


def scale_experiment(frame: pd.DataFrame, system: str) -> str:
    """Where a system's runs at the seed's worker counts are: the `workers-...`
    experiment when the profile ran one for it (the main sweep has fewer counts), else
    the main sweep."""
    names = sorted({e for e in frame.loc[frame["system"] == system, "experiment"].unique()
                    if str(e).startswith("workers-")})
    return names[0] if names else MAIN


def cause(f: Facts, tables: dict) -> dict | None:
    """What the stage times of push-naive's first runs after each change of workers (main
    sweep) say, and push's beside them."""
    runs = tables["dispatch_runs"]
    wmin = _first_count(runs[runs["phase"] == "weak_scaling"], "push-naive", MAIN)
    if wmin is None:
        return None
    base = {"experiment": MAIN, "system": "push-naive", "phase": "weak_scaling", "status": "ok",
            "workers": {">": wmin}}
    first = {**base, "first_after_change": True}
    n_first = f.aggregate("cause.n_first", "dispatch_runs", "count", where=first, about=("push-naive",))
    if not n_first.value:
        return None
    about = ("push-naive",)
    tasks = {k: v for k, v in first.items() if k != "status"} | {"cell_status": "ok"}
    out = {"n_first": n_first,
           "stale": f.aggregate("cause.stale_mean", "dispatch_runs", "mean", "stale_workers", where=first, about=about),
           "expired": f.aggregate("cause.n_expired", "dispatch_runs", "count", where={**first, "stale_workers": 0},
                                  about=about),
           "n_resent": f.aggregate("cause.n_resent", "dispatch_tasks", "count", where={**tasks, "attempts": {">": 1}},
                                   via=GAPS, about=about),
           "n_once": f.aggregate("cause.n_once", "dispatch_tasks", "count", where={**tasks, "attempts": 1}, via=GAPS,
                                 about=about)}
    out["gap"] = f.aggregate("cause.gap", "dispatch_tasks", "median", "redispatch_sec",
                             where={**tasks, "attempts": {">": 1}}, via=GAPS, unit="s", about=about) \
        if out["n_resent"].value else None
    out["once_latency"] = f.aggregate("cause.once_latency", "dispatch_tasks", "median", "latency_ms",
                                      where={**tasks, "attempts": 1}, via=GAPS, unit="ms", about=about) \
        if out["n_once"].value else None
    later = {**base, "first_after_change": False}
    n_later = f.aggregate("cause.n_later", "dispatch_runs", "count", where=later, about=about)
    out["later"] = None
    if n_later.value:
        out["later"] = {"n": n_later,
                        "stale_max": f.aggregate("cause.later_stale_max", "dispatch_runs", "max", "stale_workers",
                                                 where=later, fmt="int", about=about),
                        "requeued": f.aggregate("cause.later_requeued", "dispatch_runs", "sum", "requeued_tasks",
                                                where=later, fmt="int", about=about)}
    pmin = _first_count(runs[runs["phase"] == "weak_scaling"], "push", MAIN)
    out["push"] = None
    if pmin is not None:
        pfirst = {**first, "system": "push", "workers": {">": pmin}}
        n_push = f.aggregate("cause.push_n", "dispatch_runs", "count", where=pfirst, about=("push",))
        if n_push.value:
            out["push"] = {"stale_max": f.aggregate("cause.push_stale_max", "dispatch_runs", "max", "stale_workers",
                                                    where=pfirst, fmt="int", about=("push",)),
                           "requeued": f.aggregate("cause.push_requeued", "dispatch_runs", "sum", "requeued_tasks",
                                                   where=pfirst, fmt="int", about=("push",))}
    return out


def anomaly_rows(summary: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """push-naive's and push's no-op rows (first run after each change) at the seed's worker
    counts where the profile ran them."""
    s = summary[(summary["phase"] == "weak_scaling") & (summary["workload"] == "noop") & (summary["status"] == "ok")]
    out = {}
    for system in ("push-naive", "push"):
        rows = s[(s["system"] == system) & (s["experiment"] == scale_experiment(s, system))]
        rows = rows.dropna(subset=["first_run_completion_time_sec"])
        if len(rows):
            out[system] = rows.sort_values("workers")
    return out


def anomaly(f: Facts, tables: dict, seed: dict[int, dict]) -> dict:
    summary = tables["dispatch_summary"]
    rows = anomaly_rows(summary)
    seed_counts = [w for w in sorted(seed) if w > 1]
    signature = None
    if seed_counts:
        times = sorted(seed_counts, key=lambda w: seed[w]["time"].value)
        signature = {"low": seed[times[0]]["time"], "high": seed[times[-1]]["time"]}
    return {"seed": [seed[w] for w in sorted(seed)], "seed_after": [seed[w] for w in seed_counts],
            "signature": signature, "cause": cause(f, tables), "anomaly_table": bool(rows)}


def cliff(f: Facts, rows: pd.DataFrame, seed: dict[int, dict]) -> list[dict]:
    """A system's first no-op run at each worker count above one against its run at one
    worker: the seconds it added and how many times as long (a ratio of the medians),
    beside the seed's at the same count. The added seconds compare across machines; the
    multiples do not, as each divides by its own machine's one-worker run."""
    one = rows[rows["workers"] == 1]
    if one.empty:
        return []
    base = row_fact(f, one.iloc[0], "first_run_completion_time_sec", "first_run", unit="s")
    out = []
    for _, r in rows[rows["workers"] > 1].iterrows():
        t = row_fact(f, r, "first_run_completion_time_sec", "first_run", unit="s")
        ratio = f.derived(_id("cliff", r["experiment"], r["system"], _w(r)), "ratio", t, base,
                          about=(ABOUT[r["system"]],))
        added = f.derived(_id("cliff_added", r["experiment"], r["system"], _w(r)), "difference", t, base, unit="s",
                          about=(ABOUT[r["system"]],))
        s = seed.get(int(r["workers"]))
        out.append({"workers": row_fact(f, r, "workers", "workers", fmt="int", interval=False), "time": t,
                    "ratio": ratio, "added": added, "one": base, "seed": s})
    return out


def seed_added(f: Facts, seed: dict[int, dict]) -> None:
    """The seconds the seed's push mode added at each worker count above one over its own
    one-worker run (`added` of each seed entry)."""
    if 1 not in seed:
        return
    for workers, entry in seed.items():
        if workers > 1:
            entry["added"] = f.derived(_id("seed_anomaly", f"w{workers}", "added"), "difference", entry["time"],
                                       seed[1]["time"], unit="s")


# --- the experiments: prediction against measurement ---------------------------------------------

def _interval(row, column: str) -> tuple:
    """A median's 95% interval, or the median alone (one repetition) as a point."""
    low, high = row[f"median_{column}_ci_low"], row[f"median_{column}_ci_high"]
    if low is None or pd.isna(low):
        value = row[f"median_{column}"]
        return value, value
    return low, high


def dose_rows(anomaly: pd.DataFrame, system: str = "push-naive") -> pd.DataFrame:
    """The dose-response: the first run after each change of workers, at each heartbeat
    expiry (the main sweep and the expiry experiments)."""
    a = anomaly[(anomaly["system"] == system) & (anomaly["first_after_change"] == True)  # noqa: E712
                & anomaly["experiment"].map(figs._is_dose).astype(bool)]
    return a.sort_values(["from_workers", "workers", "expiry_sec"]).reset_index(drop=True)


def dose(f: Facts, tables: dict) -> dict:
    """Prediction one: every measured stall where the expiry puts it, the cliff growing
    with the expiry, one second of stall per second of expiry."""
    rows = dose_rows(predictions(tables["dispatch_anomaly"]))
    if rows.empty:
        return {"dose": None}
    items = []
    for r in rows.to_dict("records"):
        items.append({"expiry": anomaly_fact(f, r, "expiry_sec", "expiry", unit="s", interval=False),
                      "from": anomaly_fact(f, r, "from_workers", "from", fmt="int", interval=False),
                      "to": anomaly_fact(f, r, "workers", "to", fmt="int", interval=False),
                      "workload": WORKLOAD_NAMES.get(r["workload"], r["workload"]),
                      "time": anomaly_fact(f, r, "median_completion_time_sec", "time", unit="s"),
                      "stall": anomaly_fact(f, r, "median_stall_sec", "stall", unit="s"),
                      "predicted": anomaly_fact(f, r, "median_predicted_stall_sec", "predicted", unit="s"),
                      "verdict": anomaly_fact(f, r, "verdict", "verdict", fmt="text", interval=False, via=PREDICTIONS),
                      "row": r})
        # how far the measured stall's median lay past the predicted one's: the verdict's
        # tolerance (the dispatcher's check, the dispatching) can hide an offset of one sign
        item = items[-1]
        item["over"] = f.derived(_id("stall_over", r["experiment"], r["system"],
                                     f"{int(r['from_workers'])}to{int(r['workers'])}", r["workload"],
                                     "first" if r["first_after_change"] else "later"),
                                 "difference", item["stall"], item["predicted"], unit="s",
                                 about=(ABOUT[r["system"]],))
    verdicts = [i["verdict"] for i in items]
    first_change = [i for i in items if (i["row"]["from_workers"], i["row"]["workers"])
                    == (items[0]["row"]["from_workers"], items[0]["row"]["workers"])]
    out = {"rows": items, "first": first_change, "workload": first_change[0]["workload"],
           "n": f.count_of("dose.n", verdicts), "n_as": f.count_of("dose.n_as_predicted", verdicts, "as predicted"),
           "exceptions": [i for i in items if i["verdict"].value != "as predicted"], "grows": None, "slope": None,
           "all_over": all(i["over"].known and i["over"].value > 0 for i in first_change)}
    if len(first_change) > 1:
        out["grows"] = f.verdict("dose.longest_vs_shortest", first_change[-1]["time"], first_change[0]["time"],
                                 better="longer than", worse="shorter than")
    sl = slopes(tables["dispatch_runs"])
    sl = sl[sl["system"] == "push-naive"]
    if len(sl):
        r = sl.iloc[0]
        slope = f.lookup("dose.slope", "dispatch_runs", r, "slope", via=SLOPES, about=("push-naive",))
        out["slope"] = {"value": slope,
                        "runs": f.lookup("dose.slope_runs", "dispatch_runs", r, "runs", via=SLOPES, fmt="int",
                                         interval=False, about=("push-naive",)),
                        "verdict": f.bound_verdict("dose.slope_vs_one", slope, 1.0, better="above", worse="below")}
    # confirmed only where the cliff was seen to grow with the expiry (two expiries at
    # least, told apart by their intervals), every stall was where the expiry puts it and
    # the slope, where there is one, is not distinguishable from one
    out["confirmed"] = (out["n_as"].value == out["n"].value
                        and out["grows"] is not None and out["grows"].value == "longer than"
                        and (out["slope"] is None or out["slope"]["verdict"].value == SAME))
    return {"dose": out}


def order_rows(anomaly: pd.DataFrame, system: str = "push-naive") -> pd.DataFrame:
    """Every workload's run after the first change of workers, in the main order and in
    each order experiment."""
    a = anomaly[(anomaly["system"] == system) & anomaly["experiment"].map(figs._is_order).astype(bool)]
    if a.empty:
        return a
    first = a.groupby("experiment")["workers"].transform("min")
    a = a[a["workers"] == first].copy()
    a["position"] = [str(o).split(",").index(w) if isinstance(o, str) and w in str(o).split(",") else 99
                     for o, w in zip(a["workload_order"], a["workload"])]
    return a.sort_values(["experiment", "position"]).reset_index(drop=True)


def order(f: Facts, tables: dict) -> dict:
    """Prediction two: per order of the workloads, the stall of the run first after the
    change against each later run's (a verdict from the intervals)."""
    rows = order_rows(tables["dispatch_anomaly"])
    found = []
    experiments = sorted(rows["experiment"].unique(), key=lambda e: (e != MAIN, e)) if len(rows) else []
    for experiment in experiments:
        group = rows[rows["experiment"] == experiment].to_dict("records")
        first = [r for r in group if r["first_after_change"]]
        if not first:
            continue
        head = first[0]
        stall = anomaly_fact(f, head, "median_stall_sec", "stall", unit="s")
        later = []
        for r in group:
            if r["first_after_change"]:
                continue
            s = anomaly_fact(f, r, "median_stall_sec", "stall", unit="s")
            later.append({"workload": WORKLOAD_NAMES.get(r["workload"], r["workload"]), "stall": s,
                          "verdict": f.verdict(_id("order", experiment, "head_vs", r["workload"]), stall, s,
                                               better="longer than", worse="shorter than")})
        verdicts = [x["verdict"] for x in later]
        n_longer = f.count_of(_id("order", experiment, "n_longer"), verdicts, "longer than")
        found.append({"experiment": experiment,
                      "order": figs.order_words(head["workload_order"]),
                      "workload": WORKLOAD_NAMES.get(head["workload"], head["workload"]), "stall": stall,
                      "later": later, "n_later": f.count_of(_id("order", experiment, "n_later"), verdicts),
                      "n_longer": n_longer, "one_verdict": len({v.value for v in verdicts}) == 1,
                      "follows": bool(later) and n_longer.value == len(later)})
    if len(found) < 2:
        return {"order": None}
    return {"order": {"orders": found, "confirmed": all(o["follows"] for o in found)}}


def scale(f: Facts, tables: dict) -> dict:
    """Prediction three: push-naive's first run stalls at every change of workers (its
    stall's interval above zero), by what the expiry and the new workers' start say; push's
    never does."""
    anomaly = predictions(tables["dispatch_anomaly"])
    naive_exp = scale_experiment(anomaly, "push-naive")
    naive = anomaly[(anomaly["system"] == "push-naive") & (anomaly["experiment"] == naive_exp)
                    & (anomaly["first_after_change"] == True)].sort_values("workers")  # noqa: E712
    if naive.empty:
        return {"scale": None}
    items = []
    for r in naive.to_dict("records"):
        stall = anomaly_fact(f, r, "median_stall_sec", "stall", unit="s")
        items.append({"to": anomaly_fact(f, r, "workers", "to", fmt="int", interval=False), "stall": stall,
                      "predicted": anomaly_fact(f, r, "median_predicted_stall_sec", "predicted", unit="s"),
                      "verdict": anomaly_fact(f, r, "verdict", "verdict", fmt="text", interval=False, via=PREDICTIONS),
                      "lag": anomaly_fact(f, r, "median_stale_lag_sec", "lag", unit="s", interval=False),
                      "stalled": f.bound_verdict(_id("scale.stalled", f"w{int(r['workers'])}"), stall, 0.0,
                                                 better="above", worse="below")})
    stalled = [i["stalled"] for i in items]
    out = {"changes": items, "n": f.count_of("scale.n", stalled), "n_stalled": f.count_of("scale.n_stalled", stalled,
                                                                                       "above"),
           "experiment": naive_exp, "push": None}
    push_exp = scale_experiment(anomaly, "push")
    where = {"system": "push", "experiment": push_exp, "first_after_change": True}
    push = anomaly[(anomaly["system"] == "push") & (anomaly["experiment"] == push_exp)
                   & (anomaly["first_after_change"] == True)]  # noqa: E712
    if len(push):
        out["push"] = {"stale": f.aggregate("scale.push_stale_max", "dispatch_anomaly", "max", "stale_workers",
                                            where=where, fmt="int", about=("push",)),
                       "stall": f.aggregate("scale.push_stall_max", "dispatch_anomaly", "max", "median_stall_sec",
                                            where=where, unit="s", about=("push",))}
    out["confirmed"] = (out["n_stalled"].value == out["n"].value and out["push"] is not None
                        and out["push"]["stale"].value == 0 and out["push"]["stall"].value == 0)
    return {"scale": out}


# --- saturation -------------------------------------------------------------------------------------

def saturation(f: Facts, summary: pd.DataFrame) -> dict:
    """Per worker count of the saturation runs: the highest per-task throughput among the
    platform's modes and the highest batched one among every system, each other against it."""
    s = figs.saturation_data(summary)
    out = []
    for workers in sorted(s["workers"].unique()):
        at = s[s["workers"] == workers]
        per_task = at[(at["submission"] == "per_task") & at["system"].isin(MODES)]
        batch = at[at["submission"] == "batch"]
        item = {"workers": f.aggregate(_id("sat_workers", f"w{int(workers)}"), "dispatch_summary", "max", "workers",
                                       where={"experiment": MAIN, "phase": "saturation", "status": "ok",
                                              "workers": int(workers)}, fmt="int"),
                "per_task": ranking(f, per_task, "median_throughput_tasks_per_sec", "sat", unit="tasks/s"),
                "batch": ranking(f, batch, "median_throughput_tasks_per_sec", "sat", unit="tasks/s")}
        if item["per_task"] or item["batch"]:
            out.append(item)
    main = main_only(summary)
    absent = main[(main["phase"] == "saturation") & (main["status"] == "unavailable")]
    missing = [{"name": NAMES[r["system"]], "submission": "batched" if r["submission"] == "batch" else "one per task",
                "why": row_fact(f, r, "failure", "sat_failure", fmt="text", interval=False)}
               for _, r in absent.iterrows()]
    return {"saturation": out, "saturation_missing": missing}


# --- the headline, the summary and the limitations ------------------------------------------------

def headline(f: Facts, tables: dict, seed: dict[int, dict], found: dict) -> dict:
    """push-naive's first no-op run after the change to the seed's first multi-worker count
    (its `2 workers: 7.67s completion (59x slower)`), with its interval, beside the seed's;
    what it means from the dose-response."""
    rows = anomaly_rows(tables["dispatch_summary"]).get("push-naive")
    counts = [w for w in sorted(seed) if w > 1]
    if rows is None or not counts or 1 not in seed:
        return {"headline": None}
    two = rows[rows["workers"] == counts[0]]
    one = rows[rows["workers"] == 1]
    if two.empty or one.empty:
        return {"headline": None}
    r2, r1 = two.iloc[0], one.iloc[0]
    t2 = row_fact(f, r2, "first_run_completion_time_sec", "first_run", unit="s")
    t1 = row_fact(f, r1, "first_run_completion_time_sec", "first_run", unit="s")
    push = anomaly_rows(tables["dispatch_summary"]).get("push")
    push2 = push[push["workers"] == counts[0]] if push is not None else pd.DataFrame()
    return {"headline": {
        "workers": row_fact(f, r2, "workers", "workers", fmt="int", interval=False),
        "one_worker": row_fact(f, r1, "workers", "workers", fmt="int", interval=False),
        "time": t2, "one": t1, "scale": r2["experiment"] != MAIN,
        "ratio": f.derived(_id("cliff", r2["experiment"], "push-naive", _w(r2)), "ratio", t2, t1,
                           about=("push-naive",)),
        "added": f.derived(_id("cliff_added", r2["experiment"], "push-naive", _w(r2)), "difference", t2, t1,
                           unit="s", about=("push-naive",)),
        "seed": seed[counts[0]], "seed_one": seed[1],
        "push": row_fact(f, push2.iloc[0], "first_run_completion_time_sec", "first_run", unit="s")
        if len(push2) else None,
        "dose": found.get("dose")}}


def cliffs(f: Facts, tables: dict, seed: dict[int, dict]) -> dict:
    """The cliff of push-naive and of push at each of the seed's worker counts measured,
    beside the seed's at the same counts."""
    out = []
    for system, rows in anomaly_rows(tables["dispatch_summary"]).items():
        steps = cliff(f, rows, seed)
        if steps:
            out.append({"name": NAMES[system], "system": system, "steps": steps,
                        "seed": [s["seed"] for s in steps if s["seed"] and s["seed"]["times"] is not None]})
    return {"cliffs": out}


def limitations(f: Facts, tables: dict, machine: dict) -> dict:
    """What this machine and profile leave to another: the seed's worker and process
    counts against the cores, the main sweep's largest count, the peers not measured."""
    cores = f["cores"]
    processes = f["processes"]
    seed_total = f.derived("seed_process_total", "product", f["seed_workers_max"], f["seed_processes"], fmt="int")
    runs = tables["dispatch_runs"]
    most = f.aggregate("most_workers", "dispatch_runs", "max", "workers", where={"phase": "weak_scaling"}, fmt="int")
    main_max = f.aggregate("main_max_workers", "dispatch_runs", "max", "workers",
                           where={"phase": "weak_scaling", "experiment": MAIN}, fmt="int")
    scale_systems = sorted({s for e, s in zip(runs["experiment"], runs["system"]) if str(e).startswith("workers-")},
                           key=SYSTEMS.index)
    return {"lim": {
        "oversubscribed": bool(cores.value and seed_total.value and seed_total.value > cores.value),
        "most_fits": bool(most.value and processes.value and cores.value),
        "main_short": bool(main_max.value is not None and main_max.value < f["seed_workers_max"].value),
        "crowded_main": bool(main_max.value and processes.value and cores.value
                             and main_max.value * processes.value > cores.value),
        "main_processes": f.derived("main_process_total", "product", main_max, processes, fmt="int"),
        "scale_systems": [NAMES[s] for s in scale_systems],
        "fewer_processes": processes.value is not None and processes.value < f["seed_processes"].value}}


# --- the paper's tables ---------------------------------------------------------------------------

def _two_lines(value, low, high, fmt=fmt_num) -> str:
    """A median over its interval on a second line (the table stays narrow)."""
    text = fmt_ci(value, low, high, fmt)
    return text.replace(" (", "<br>(") if "(" in text else text


def _ci_cell(row, column: str) -> str:
    return _two_lines(row[column], row.get(f"{column}_ci_low"), row.get(f"{column}_ci_high"))


def _median_cell(row, column: str) -> str:
    return _two_lines(row[f"median_{column}"], row[f"median_{column}_ci_low"], row[f"median_{column}_ci_high"])


def _disturbed_column(frame: pd.DataFrame, rows: list[dict], disturbed: list[int]) -> pd.DataFrame:
    """A column of each row's repetitions that stayed disturbed, when any row has one."""
    if any(disturbed):
        frame["disturbed repetitions"] = [str(d) for d in disturbed]
    return frame


def modes_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The seed's per-mode key metrics, one row per system (main sweep)."""
    summary = main_only(summary)
    ok = summary[summary["status"] == "ok"]
    rows, disturbed = [], []
    for system in [s for s in SYSTEMS if s in set(ok["system"])]:
        m = mode_metrics(ok, system)
        if m is None:
            continue
        row = {"system": system}
        for w in ("noop", "cpu", "io"):
            row[f"{WORKLOAD_NAMES[w]} tasks/s"] = fmt_num(m["throughput"].get(w))
        for w in ("noop", "cpu", "io"):
            row[f"{WORKLOAD_NAMES[w]} ms"] = fmt_num(m["latency"].get(w))
        row["success"] = fmt_pct(m["success_rate"])
        row["weak-scaling efficiency"] = fmt_pct(m["efficiency"])
        rows.append(row)
        weak = ok[(ok["system"] == system) & (ok["phase"] == "weak_scaling")]
        disturbed.append(int(weak["disturbed_reps"].max()) if "disturbed_reps" in weak and len(weak) else 0)
    frame = pd.DataFrame(rows) if rows else pd.DataFrame({"system": []})
    return _disturbed_column(frame, rows, disturbed)


def anomaly_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The seed's anomaly beside push-naive's and push's at each worker count: the first
    no-op run after the workers changed, and the seconds it added to the one-worker run
    (which compare across machines, where multiples of each machine's one-worker run do
    not)."""
    found = anomaly_rows(summary)
    seed = seed_anomaly()
    counts = sorted({int(w) for rows in found.values() for w in rows["workers"]})
    seed_one = seed.get(1, {}).get("seconds")
    table, disturbed = [], []
    for workers in counts:
        s = seed.get(workers)
        row = {"workers": str(workers), "seed push, s": fmt_num(s["seconds"]) if s else "n/a",
               "seed<br>added, s": fmt_num(s["seconds"] - seed_one) if s and seed_one is not None else "n/a"}
        d = 0
        for system, rows in found.items():
            rows = rows.set_index("workers")
            if workers not in rows.index:
                row[f"{system}<br>first run, s"] = row[f"{system}<br>added, s"] = "n/a"
                continue
            r = rows.loc[workers]
            one = rows["first_run_completion_time_sec"].get(1)
            row[f"{system}<br>first run, s"] = _ci_cell(r, "first_run_completion_time_sec")
            row[f"{system}<br>added, s"] = (fmt_num(r["first_run_completion_time_sec"] - one)
                                            if one is not None and not pd.isna(one) else "n/a")
            row[f"{system}<br>stale workers"] = fmt_num(r["stale_workers_first_run"])
            d = max(d, int(r.get("disturbed_reps", 0) or 0))
        table.append(row)
        disturbed.append(d)
    frame = pd.DataFrame(table) if table else pd.DataFrame({"workers": []})
    return _disturbed_column(frame, table, disturbed)


def dose_table(anomaly: pd.DataFrame) -> pd.DataFrame:
    rows, disturbed = [], []
    for system in ("push-naive", "push"):
        for r in dose_rows(anomaly, system).to_dict("records"):
            rows.append({"system": system,
                         "expiry, s": f"{fmt_num(r['expiry_sec'])}<br>({fmt_num(r['heartbeat_interval_sec'])} x "
                                      f"{fmt_num(r['expiry_sec'] / r['heartbeat_interval_sec'])})",
                         "workers": f"{r['from_workers']} → {int(r['workers'])}",
                         "first<br>workload": WORKLOAD_NAMES.get(r["workload"], r["workload"]),
                         "stale<br>workers": fmt_num(r["stale_workers"]),
                         "predicted<br>stall, s": _median_cell(r, "predicted_stall_sec"),
                         "measured<br>stall, s": _median_cell(r, "stall_sec"),
                         "first run, s": _median_cell(r, "completion_time_sec"),
                         "verdict": against_prediction(r)})
            disturbed.append(int(r.get("disturbed_reps", 0) or 0))
    frame = pd.DataFrame(rows) if rows else pd.DataFrame({"system": []})
    return _disturbed_column(frame, rows, disturbed)


def order_table(anomaly: pd.DataFrame) -> pd.DataFrame:
    rows, disturbed = [], []
    for system in ("push-naive", "push"):
        for r in order_rows(anomaly, system).to_dict("records"):
            rows.append({"system": system, "order": figs.order_words(r["workload_order"]),
                         "workers": f"{r['from_workers']} → {int(r['workers'])}",
                         "workload": WORKLOAD_NAMES.get(r["workload"], r["workload"]),
                         "run": "first after<br>the change" if r["first_after_change"] else "later",
                         "stale<br>workers": fmt_num(r["stale_workers"]),
                         "measured<br>stall, s": _median_cell(r, "stall_sec"),
                         "completion, s": _median_cell(r, "completion_time_sec")})
            disturbed.append(int(r.get("disturbed_reps", 0) or 0))
    frame = pd.DataFrame(rows) if rows else pd.DataFrame({"system": []})
    return _disturbed_column(frame, rows, disturbed)


def saturation_table(summary: pd.DataFrame) -> pd.DataFrame:
    s = figs.saturation_data(summary)
    rows = [{"system": r["system"], "workers": str(int(r["workers"])), "submission": r["submission"],
             "tasks": f"{int(r['tasks_per_run']):,}",
             "tasks/s": _ci_cell(r, "median_throughput_tasks_per_sec"),
             "repetitions": str(int(r["repetitions"])), "p99 latency, ms": fmt_num(r["p99_latency_ms"])}
            for _, r in s.iterrows()]
    disturbed = [int(r.get("disturbed_reps", 0) or 0) for _, r in s.iterrows()]
    frame = pd.DataFrame(rows) if rows else pd.DataFrame({"system": []})
    return _disturbed_column(frame, rows, disturbed)


def report_tables(tables: dict[str, pd.DataFrame]) -> dict:
    """The paper's tables as Snakemake's report shows them, {name: frame}; each one's caption is
    in captions.yml beside the templates, under `tables:`."""
    s, anomaly = tables["dispatch_summary"], tables["dispatch_anomaly"]

    def flat(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.replace({"<br>": " "}, regex=True)
        frame.columns = [str(c).replace("<br>", " ") for c in frame.columns]
        return frame

    return {"dispatch_modes_table": flat(modes_table(s)),
            "dispatch_anomaly_table": flat(anomaly_table(s)),
            "dispatch_dose_table": flat(dose_table(anomaly)),
            "dispatch_order_table": flat(order_table(anomaly)),
            "dispatch_saturation_table": flat(saturation_table(s))}


# --- the context ----------------------------------------------------------------------------------

def _figure_data(tables: dict) -> dict[str, pd.DataFrame]:
    return {"throughput": figs.throughput_data(tables["dispatch_summary"]),
            "latency": figs.latency_data(tables["dispatch_tasks"]),
            "weak_scaling": figs.weak_scaling_data(tables["dispatch_runs"]),
            "dose": figs.dose_data(tables["dispatch_runs"]),
            "order": figs.order_data(tables["dispatch_runs"]),
            "saturation": figs.saturation_data(tables["dispatch_summary"])}


def drawn(tables: dict) -> dict:
    """Which figures draw data (a figure with none is not shown; the text says why)."""
    out = {name: not frame.empty for name, frame in _figure_data(tables).items()}
    out["anomaly"] = bool(figs.anomaly_data(tables["dispatch_tasks"], tables["dispatch_runs"]))
    return out


def facts(f: Facts, tables: dict[str, pd.DataFrame]) -> dict:
    """The section's facts, registered on `f`, and the rest of its templates' context."""
    machine = f.machine
    summary = tables["dispatch_summary"]
    frames = {"dispatch_modes": modes_table(summary), "dispatch_anomaly": anomaly_table(summary),
              "dispatch_dose": dose_table(tables["dispatch_anomaly"]),
              "dispatch_order": order_table(tables["dispatch_anomaly"]),
              "dispatch_saturation": saturation_table(summary)}
    ctx: dict = {"drawn": drawn(tables), "tables": frames,
                 "disturbed_columns": {name: "disturbed repetitions" in frame for name, frame in frames.items()},
                 "anomaly_scale": any(scale_experiment(summary, s) != MAIN for s in ("push-naive", "push"))}
    ctx.update(seed_setup(f))
    ctx.update(setup(f, tables, machine))
    found = modes(f, summary, machine)
    ctx.update(found)
    ctx["seed_avg"] = seed_averages(f, summary, machine, ctx["seed_counts"])
    ctx.update(latency(f, summary, found["top"]))
    ctx.update(scaling(f, summary, found["top"], machine))
    seed = seed_anomaly_facts(f)
    ctx.update(anomaly(f, tables, seed))
    ctx.update(dose(f, tables))
    ctx.update(order(f, tables))
    ctx.update(scale(f, tables))
    ctx.update(saturation(f, summary))
    ctx.update(cliffs(f, tables, seed))
    ctx.update(headline(f, tables, seed, ctx))
    ctx.update(limitations(f, tables, machine))
    return ctx
