"""The facts of the kem section, computed from the study's tables; the words are the
templates in `paper/sections/kem/` (one per generated part), which
`paper/sections/kem.qmd` includes from `paper/_generated/kem/`.

Every count names its unit, the one the table's `counter_unit` holds: TSC ticks and
nanoseconds are never called core cycles. A cycles cell's median carries the bootstrap
interval over its calls, a thread-sweep point's the one over its repetitions; a ratio of
two medians carries the bounds both intervals give (`stats.ratio_interval`). Every
ranking ("faster than", "not distinguishable on this machine from") is a verdict from
two intervals, never a template's word.
"""

from __future__ import annotations

import pandas as pd

from parbench.paper.facts import SAME, SEED_SAME, Fact, Facts, weakest
from parbench.paper.format import fmt_interval, fmt_num
from parbench.stats import ratio_interval
from parbench.studies.kem import published
from parbench.studies.kem.aggregate import CONFIDENCE, OPERATION_ORDER, SET_ORDER, seed_name

# The processed tables the facts read.
TABLES = ["kem_counters", "kem_cycles", "kem_percentiles", "kem_throughput", "kem_load"]
# Views of the tables the facts read through (the check computes them again).
CELLS = "parbench.studies.kem.paper:cells_view"
RATIOS = "parbench.studies.kem.paper:ratios_view"
TAILS = "parbench.studies.kem.paper:tails_view"
COUNTERS = "parbench.studies.kem.paper:counters_view"
CELL_KEY = ["implementation", "parameter_set", "operation"]
# The columns that name one row of each table (and of the views made of it).
KEYS = {
    "kem_cycles": CELL_KEY,
    f"kem_cycles|{CELLS}": CELL_KEY,
    f"kem_cycles|{RATIOS}": [*CELL_KEY, "over_implementation", "over_operation"],
    f"kem_percentiles|{TAILS}": CELL_KEY,
    "kem_throughput": [*CELL_KEY, "threads"],
    "kem_counters": ["counter"],
    f"kem_counters|{COUNTERS}": ["counter"],
}
# The generated parts (templates in paper/sections/kem/), in the order the section
# includes them; `headline` and `limitations` go to the paper's summary and limitations.
FRAGMENTS = ["setup", "cycles", "seed_table", "distribution", "throughput", "published", "headline", "limitations"]
# The paper's tables, also written as HTML and CSV for Snakemake's report.
REPORT_TABLES = ["kem_seed_table", "kem_published_table"]
SEED = "kem.txt"
CONFIDENCE_REF = "parbench.studies.kem.aggregate:CONFIDENCE"

UNIT_WORDS = {"cycles": "core cycles", "tsc_ticks": "TSC ticks", "ns": "nanoseconds"}
SIMD = ("libcrux-avx2", "libcrux-neon")
ML_KEM = [s for s in SET_ORDER if s.startswith("ML-KEM")]
OPERATION_NOUNS = {"keypair": "key generations", "encaps": "encapsulations", "decaps": "decapsulations",
                   "derive": "derivations"}
# The words of a verdict between two counts per call (fewer is faster) or two rates.
FASTER, SLOWER = "faster than", "slower than"


# --- views of the tables (the facts' sources) ---------------------------------------------

def _ok(cycles: pd.DataFrame) -> pd.DataFrame:
    return cycles[(cycles["status"] == "ok") & cycles["median_ticks"].notna()]


def cells_view(cycles: pd.DataFrame) -> pd.DataFrame:
    """The cycles cells that passed, with their median per call and its interval under
    the names a fact reads (`per_call`, `per_call_ci_low`, `per_call_ci_high`, and `ns`
    with its interval where the counter converts to time)."""
    ok = _ok(cycles)
    out = ok[CELL_KEY + ["counter", "counter_unit"]].copy()
    for name, column in (("per_call", "median_ticks"), ("per_call_ci_low", "median_ci_low_ticks"),
                         ("per_call_ci_high", "median_ci_high_ticks"), ("ns", "median_ns"),
                         ("ns_ci_low", "median_ci_low_ns"), ("ns_ci_high", "median_ci_high_ns"),
                         ("drift", "half_drift")):
        out[name] = pd.to_numeric(ok[column], errors="coerce") if column in ok else float("nan")
    return out.reset_index(drop=True)


def ratios_view(cycles: pd.DataFrame) -> pd.DataFrame:
    """Every ratio of two passed cells of the same parameter set: `ratio` = the median
    per call of (implementation, operation) over that of (over_implementation,
    over_operation), with the bounds of both medians' intervals (`stats.ratio_interval`;
    conservative: each interval at 95% gives the ratio at least 90%)."""
    cells = cells_view(cycles)
    rows = []
    for pset, group in cells.groupby("parameter_set", sort=False):
        for a in group.itertuples():
            for b in group.itertuples():
                if (a.implementation, a.operation) == (b.implementation, b.operation):
                    continue
                lo, hi = ratio_interval((_num(a.per_call_ci_low), _num(a.per_call_ci_high)),
                                        (_num(b.per_call_ci_low), _num(b.per_call_ci_high)))
                rows.append({"implementation": a.implementation, "parameter_set": pset, "operation": a.operation,
                             "over_implementation": b.implementation, "over_operation": b.operation,
                             "ratio": a.per_call / b.per_call, "ratio_ci_low": lo, "ratio_ci_high": hi})
    columns = [*CELL_KEY, "over_implementation", "over_operation", "ratio", "ratio_ci_low", "ratio_ci_high"]
    return pd.DataFrame(rows, columns=columns).astype({"ratio_ci_low": float, "ratio_ci_high": float})


def tails_view(percentiles: pd.DataFrame) -> pd.DataFrame:
    """Per cell, the seed's p99 over its median (`p99_over_median`) and how far p90 lies
    above p10 (`p10_to_p90`, a fraction)."""
    pc = percentiles.dropna(subset=["value_ticks"])
    wide = pc.pivot_table(index=CELL_KEY, columns="percentile", values="value_ticks")
    if wide.empty or not {10, 50, 90, 99} <= set(wide.columns):
        return pd.DataFrame(columns=[*CELL_KEY, "p99_over_median", "p10_to_p90"])
    out = pd.DataFrame({"p99_over_median": wide[99] / wide[50], "p10_to_p90": wide[90] / wide[10] - 1}).reset_index()
    return out


def counters_view(counters: pd.DataFrame) -> pd.DataFrame:
    """The counter table with the TSC rate in GHz (`tsc_ghz`)."""
    return counters.assign(tsc_ghz=pd.to_numeric(counters["tsc_hz"], errors="coerce") / 1e9)


def _num(x):
    return None if x is None or pd.isna(x) else float(x)


# --- helpers --------------------------------------------------------------------------------

def _id(*parts) -> str:
    return ".".join(str(p).replace(" ", "_") for p in parts)


def _in_order(values, order) -> list:
    present = set(values)
    return [v for v in order if v in present] + sorted(v for v in present if v not in order)


def _series(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1] if words else ""


def unit_word(frame: pd.DataFrame) -> str:
    """The unit of a frame's counter readings in words ("TSC ticks")."""
    units = frame["counter_unit"].dropna().unique().tolist()
    return UNIT_WORDS.get(units[0], units[0]) if len(units) == 1 else "counter ticks"


def seed_implementation(ok: pd.DataFrame) -> str | None:
    """The implementation of the seed's table: the SIMD backend of the machine (AVX2 or
    NEON, which the seed's usage selects by name with its SIMD feature on, as this study
    builds it), else the portable code (the seed's default), among those measured."""
    measured = set(ok["implementation"])
    return next((i for i in (*SIMD, "libcrux-portable") if i in measured), None)


def cell(f: Facts, row):
    """A cycles cell's median per call with its interval (its sentence names the
    implementation)."""
    return f.lookup(_id("cell", row["implementation"], row["parameter_set"], row["operation"]), "kem_cycles", row,
                    "per_call", via=CELLS, about=(row["implementation"],))


def drift(f: Facts, row):
    """How far a cycles cell drifted within its one run (`half_drift`): a difference
    between two cells smaller than that is no finding (the `floor` of their verdict)."""
    return f.lookup(_id("drift", row["implementation"], row["parameter_set"], row["operation"]), "kem_cycles", row,
                    "drift", via=CELLS, fmt="pct1", interval=False, about=(row["implementation"],))


def cycles_verdict(f: Facts, key: str, a_row, b_row, a: Fact, b: Fact) -> Fact:
    """Two cycles cells compared (fewer counts per call: faster): each ran once, so their
    own drift within the run bars a ranking as the machine's spread does."""
    return f.verdict(key, a, b, better=FASTER, worse=SLOWER, higher_is_better=False,
                     floor=(drift(f, a_row), drift(f, b_row)))


def ratio(f: Facts, a: dict, b: dict, about: str, fmt: str = "fixed3"):
    """median(a) / median(b) of two cells of one parameter set, with its bounds."""
    row = {"implementation": a["implementation"], "parameter_set": a["parameter_set"], "operation": a["operation"],
           "over_implementation": b["implementation"], "over_operation": b["operation"]}
    frame = f.table("kem_cycles", RATIOS)
    match = frame[(frame[list(row)] == pd.Series(row)).all(axis=1)].iloc[0]
    return f.lookup(_id("ratio", a["implementation"], a["operation"], "over", b["implementation"], b["operation"],
                        a["parameter_set"]), "kem_cycles", match, "ratio", via=RATIOS, fmt=fmt, about=(about,))


def _row(cells: pd.DataFrame, imp: str, pset: str, op: str) -> dict | None:
    hit = cells[(cells["implementation"] == imp) & (cells["parameter_set"] == pset) & (cells["operation"] == op)]
    return hit.iloc[0].to_dict() if len(hit) else None


def compare(f: Facts, cells: pd.DataFrame, name: str, imp: str, other: str, operations: list[str]) -> list[dict]:
    """`imp` against `other` on every ML-KEM parameter set and operation both passed:
    both medians, the verdict (fewer counts per call: faster) and the ratio of the
    medians with its bounds."""
    rows = []
    for pset in [s for s in ML_KEM if s in set(cells["parameter_set"])]:
        for op in operations:
            a, b = _row(cells, imp, pset, op), _row(cells, other, pset, op)
            if a is None or b is None:
                continue
            fa, fb = cell(f, a), cell(f, b)
            rows.append({"pset": pset, "op": op, "a": fa, "b": fb,
                         "verdict": cycles_verdict(f, _id(name, pset, op), a, b, fa, fb),
                         "ratio": ratio(f, a, b, pset)})
    return rows


def grouped(f: Facts, name: str, rows: list[dict]) -> dict:
    """Rows by verdict (faster, not distinguishable, slower), each group with its count,
    the smallest and the largest ratio."""
    verdicts = [r["verdict"] for r in rows]
    f.count_of(_id(name, "n"), verdicts)
    groups = []
    for word in (FASTER, SAME, SLOWER):
        mine = [r for r in rows if r["verdict"].value == word]
        if not mine:
            continue
        ranked = sorted(mine, key=lambda r: r["ratio"].value)
        groups.append({"verdict": weakest(mine), "rows": mine, "lo": ranked[0], "hi": ranked[-1],
                       "count": f.count_of(_id(name, "count", word.split()[0]), verdicts, word)})
    return {"rows": rows, "groups": groups, "n": f[_id(name, "n")]}


# --- setup ----------------------------------------------------------------------------------

def setup(f: Facts, cycles: pd.DataFrame, throughput: pd.DataFrame, counters: pd.DataFrame) -> dict:
    f.constant("confidence", CONFIDENCE_REF, fmt="pct")
    f.aggregate("n_cycles", "kem_cycles", "count")
    f.aggregate("n_cycles_ok", "kem_cycles", "count", where={"status": "ok"})
    f.aggregate("iterations", "kem_cycles", "values", "iterations", where={"status": "ok"}, fmt="list")
    # how far each cell drifted within its one run, which its interval over the calls does
    # not show: the median cell and the one that drifted most (`half_drift`)
    drifted = {}
    view = cells_view(cycles)
    if view["drift"].notna().any():
        worst = view.loc[view["drift"].idxmax()]
        drifted = {"median": f.aggregate("drift_median", "kem_cycles", "median", "half_drift",
                                         where={"status": "ok"}, fmt="pct1"),
                   "worst": worst, "max": drift(f, worst),
                   "spread": f.spread() if f.min_relative else None}
    libraries = []
    for lib, group in cycles.dropna(subset=["library_version"]).groupby("library", sort=False):
        r = group.iloc[0]
        version = f.lookup(_id("version", lib), "kem_cycles", r, "library_version", fmt="text", interval=False)
        libraries.append({"name": "" if str(r["library_version"]).startswith(str(lib)) else lib, "version": version})
    ctx = {"implementations": _series(list(dict.fromkeys(cycles["implementation"]))),
           "sets": _series(_in_order(cycles["parameter_set"], SET_ORDER)), "libraries": libraries,
           "sweep": len(throughput) > 0, "x25519_ran": "x25519" in set(cycles["implementation"]),
           "drifted": drifted}
    if len(throughput):
        f.aggregate("n_points", "kem_throughput", "count")
        f.aggregate("n_points_ok", "kem_throughput", "count", where={"status": "ok"})
        f.aggregate("sweep_threads", "kem_throughput", "values", "threads", fmt="list")
        f.aggregate("warmup", "kem_throughput", "values", "warmup_sec", fmt="list", unit="s")
        f.aggregate("window", "kem_throughput", "values", "duration_sec", fmt="list", unit="s")
        reps = f.aggregate("repetitions", "kem_throughput", "max", "repetitions", fmt="int")
        ctx.update(several_reps=(reps.value or 0) > 1,
                   sweep_sets=_series(_in_order(throughput["parameter_set"], SET_ORDER)),
                   sweep_ops=_series([OPERATION_NOUNS.get(o, o) for o in
                                      _in_order(throughput["operation"], OPERATION_ORDER)]))
    ctx.update(counter_facts(f, counters))
    both = pd.concat([cycles.assign(kind="cycles", threads=None), throughput.assign(kind="throughput")],
                     ignore_index=True)
    failed = []
    for r in cycles[cycles["status"] == "failed"].itertuples():
        failed.append({"kind": "cycles", "name": f"{r.implementation} {r.parameter_set} {r.operation}",
                       "failure": f.lookup(_id("failure", r.implementation, r.parameter_set, r.operation),
                                           "kem_cycles", r, "failure", fmt="text", interval=False)})
    for r in throughput[throughput["status"] == "failed"].itertuples():
        failed.append({"kind": "thread-sweep", "name": f"{r.implementation} {r.parameter_set} {r.operation}",
                       "threads": f.lookup(_id("failed_threads", r.implementation, r.parameter_set, r.operation,
                                               f"t{int(r.threads)}"), "kem_throughput", r, "threads", fmt="int",
                                           interval=False),
                       "failure": f.lookup(_id("failure", r.implementation, r.parameter_set, r.operation,
                                               f"t{int(r.threads)}"), "kem_throughput", r, "failure", fmt="text",
                                           interval=False)})
    ctx["failed"] = failed
    if not failed:
        tables = ["kem_cycles", "kem_throughput"] if len(throughput) else "kem_cycles"
        for column in ("pairs_checked", "secrets_mismatched", "tamper_checked", "tamper_accepted"):
            f.aggregate(column, tables, "sum", column, fmt="int")
    unavailable = []
    for imp, group in both[both["status"] == "unavailable"].groupby("implementation", sort=False):
        r = group.iloc[0]
        table = "kem_cycles" if r["kind"] == "cycles" else "kem_throughput"
        unavailable.append({"implementation": imp,
                            "reason": f.lookup(_id("unavailable", imp), table, r, "failure", fmt="text",
                                               interval=False)})
    ctx["unavailable"] = unavailable
    return ctx


def counter_facts(f: Facts, counters: pd.DataFrame) -> dict:
    """The counter the cells used, and why each preferred one was not available."""
    selected = counters[counters["selected"].fillna(False).astype(bool)]
    if selected.empty:
        return {"counter": None, "unit": "counter ticks", "core_cycles": False, "missing": [], "no_core_reason": None}
    c = selected.iloc[0]
    out = {"counter": c["counter"], "counter_unit": c["unit"], "unit": UNIT_WORDS.get(c["unit"], c["unit"]),
           "describe": f.lookup("counter_describe", "kem_counters", c, "describe", fmt="text", interval=False),
           "forced": bool(pd.notna(c["requested"]) and c["requested"]),
           "invariant": bool(pd.notna(c.get("tsc_invariant")) and c.get("tsc_invariant")),
           "core_cycles": c["unit"] == "cycles"}
    if c["counter"] == "TSC" and pd.notna(c["tsc_hz"]):
        view = counters_view(selected).iloc[0]
        out["tsc_ghz"] = f.lookup("tsc_ghz", "kem_counters", view, "tsc_ghz", via=COUNTERS, fmt="fixed2", unit="GHz",
                                  interval=False)
    missing = counters[~counters["available"].fillna(False).astype(bool)].sort_values("preference")
    # counters that failed for the same reason are named together, the reason once
    out["missing"] = []
    for reason, group in missing.groupby("reason", sort=False, dropna=False):
        first = group.iloc[0]
        out["missing"].append({"counter": _series(group["counter"].tolist()), "cycles": first["unit"] == "cycles",
                               "reason": f.lookup(_id("counter_reason", first["counter"]), "kem_counters", first,
                                                  "reason", fmt="text", interval=False)})
    # why the machine has no core-cycle counter: the most preferred one's reason
    core = [m for m in out["missing"] if m["cycles"]]
    out["no_core_reason"] = core[0] if core and not out["core_cycles"] else None
    return out


def resolution(f: Facts, cycles: pd.DataFrame) -> dict:
    """What a count is made of: the counter's step (`tick_step`, where it advanced by more
    than one tick, an interval one step wide is its resolution) and the read of the
    counter every count includes once (`counter_read_overhead_ticks`), each over the cells
    that passed, from its least to its most."""
    ok = _ok(cycles)
    out = {}
    for name, column in (("step", "tick_step"), ("read", "counter_read_overhead_ticks")):
        if column not in ok or ok[column].isna().all():
            out[name] = None
            continue
        out[name] = {end: f.aggregate(_id(name, end), "kem_cycles", end, column, where={"status": "ok"}, fmt="int")
                     for end in ("min", "max")}
    if out["step"] and (out["step"]["max"].value or 0) <= 1:
        out["step"] = None  # a counter that counts every tick: nothing to say
    return {"resolution": out}


# --- cycles -----------------------------------------------------------------------------------

def cycles_part(f: Facts, cycles: pd.DataFrame) -> dict:
    ok = _ok(cycles)
    if ok.empty:
        return {"any_cycles": False}
    cells = cells_view(cycles)
    ops = [o for o in OPERATION_ORDER if o in set(cells["operation"]) and o != "derive"]
    simd = next((i for i in SIMD if i in set(ok["implementation"])), None)
    ctx = {"any_cycles": True, "unit": unit_word(ok), "simd": simd,
           "simd_name": simd.removeprefix("libcrux-").upper() if simd else None,
           "simd_vs_portable": None, "oqs_vs_simd": None, "x25519": None}
    if simd and "libcrux-portable" in set(ok["implementation"]):
        ctx["simd_vs_portable"] = grouped(f, "simd_vs_portable",
                                          compare(f, cells, "simd_vs_portable", simd, "libcrux-portable", ops))
    if simd and "liboqs" in set(ok["implementation"]):
        ctx["oqs_vs_simd"] = grouped(f, "oqs_vs_simd", compare(f, cells, "oqs_vs_simd", "liboqs", simd, ops))
    lowest = []
    for pset in [s for s in ML_KEM if s in set(cells["parameter_set"])]:
        enc = cells[(cells["parameter_set"] == pset) & (cells["operation"] == "encaps")].sort_values("per_call")
        if len(enc) < 2:
            continue
        best, second = enc.iloc[0].to_dict(), enc.iloc[1].to_dict()
        fb, fs = cell(f, best), cell(f, second)
        entry = {"pset": pset, "best": best["implementation"], "second": second["implementation"], "value": fb,
                 "other": fs, "verdict": cycles_verdict(f, _id("lowest_encaps", pset), best, second, fb, fs)}
        if pd.notna(best["ns"]) and best["counter_unit"] != "ns":
            entry["ns"] = f.lookup(_id("ns", best["implementation"], pset, "encaps"), "kem_cycles", best, "ns",
                                   via=CELLS, unit="ns", interval=False, about=(best["implementation"],))
        lowest.append(entry)
    ctx["lowest_encaps"] = lowest
    keygen, derive = _row(cells, "x25519", "X25519", "keypair"), _row(cells, "x25519", "X25519", "derive")
    if keygen and derive:
        fk, fd = cell(f, keygen), cell(f, derive)
        x = {"keygen": fk, "derive": fd, "encaps": f.total("x25519_kem_encaps", [fk, fd], fmt="num")}
        enc, dec = (_row(cells, simd, "ML-KEM-768", op) if simd else None for op in ("encaps", "decaps"))
        if enc and dec:
            fe, fdec = cell(f, enc), cell(f, dec)
            x.update(ml_encaps=fe, ml_decaps=fdec,
                     verdict=cycles_verdict(f, "decaps_vs_x25519_derive", dec, derive, fdec, fd))
        ctx["x25519"] = x
    return ctx


# --- the seed's table -------------------------------------------------------------------------

def seed_choice(cycles: pd.DataFrame) -> tuple[str | None, str | None]:
    ok = _ok(cycles)
    imp = seed_implementation(ok)
    if imp is None:
        return None, None
    sets = [s for s in SET_ORDER if s in set(ok.loc[ok["implementation"] == imp, "parameter_set"])]
    return imp, sets[0] if sets else None


def seed_rows(cycles: pd.DataFrame, percentiles: pd.DataFrame, imp: str, pset: str) -> list[tuple[str, int, dict]]:
    ok = _ok(cycles)
    rows = []
    for op in [o for o in OPERATION_ORDER if o in set(ok["operation"])]:
        hit = ok[(ok["implementation"] == imp) & (ok["parameter_set"] == pset) & (ok["operation"] == op)]
        pc = percentiles[(percentiles["implementation"] == imp) & (percentiles["parameter_set"] == pset)
                         & (percentiles["operation"] == op)]
        if len(hit) and len(pc):
            rows.append((op, int(hit["median_ticks"].iloc[0]),
                         {int(p): int(v) for p, v in zip(pc["percentile"], pc["value_ticks"])}))
    return rows


def _whole(value: float) -> str:
    return f"{round(value):,}"


def seed_table_frame(cycles: pd.DataFrame, percentiles: pd.DataFrame) -> pd.DataFrame:
    imp, pset = seed_choice(cycles)
    if imp is None or pset is None:
        return pd.DataFrame({"operation": []})
    ok = _ok(cycles)
    out = []
    for op, med, pcts in seed_rows(cycles, percentiles, imp, pset):
        r = ok[(ok["implementation"] == imp) & (ok["parameter_set"] == pset) & (ok["operation"] == op)].iloc[0]
        out.append({"operation": op, "median": f"{med:,}",
                    f"{CONFIDENCE:.0%} CI": fmt_interval(r["median_ci_low_ticks"], r["median_ci_high_ticks"],
                                                         fmt=_whole) or "–",
                    **{f"p{p}": f"{v:,}" for p, v in pcts.items()}})
    return pd.DataFrame(out)


def seed_table(f: Facts, cycles: pd.DataFrame, percentiles: pd.DataFrame) -> dict:
    from parbench.studies.kem.seed_format import block_from_statistics

    imp, pset = seed_choice(cycles)
    if imp is None or pset is None:
        return {"seed": None}
    ok = _ok(cycles)
    rows = ok[(ok["implementation"] == imp) & (ok["parameter_set"] == pset)]
    row = rows.iloc[0]
    # the shown cells that drifted within their one run by more than the machine's spread:
    # their intervals over the calls do not show it
    shown = f.table("kem_cycles", CELLS)
    shown = shown[(shown["implementation"] == imp) & (shown["parameter_set"] == pset)]
    drifted = [{"operation": r["operation"], "drift": drift(f, r)} for _, r in shown.iterrows()
               if pd.notna(r["drift"]) and r["drift"] > f.min_relative > 0]
    return {"seed": {"implementation": imp, "name": seed_name(imp), "pset": pset, "counter": row["counter"],
                     "drifted": drifted, "spread": f.spread() if drifted else None,
                     "unit": UNIT_WORDS.get(row["counter_unit"], row["counter_unit"]),
                     "iterations": f.lookup("seed_iterations", "kem_cycles", row, "iterations", fmt="int",
                                            interval=False),
                     "block": block_from_statistics(pset, seed_rows(cycles, percentiles, imp, pset))}}


# --- distribution -----------------------------------------------------------------------------

def distribution(f: Facts, percentiles: pd.DataFrame) -> dict:
    tails = tails_view(percentiles)
    tails = tails[tails["parameter_set"].isin(ML_KEM)]
    if tails.empty:
        return {"tails": None}
    ranked = tails.sort_values("p99_over_median")
    out = {}
    for name, r in (("calm", ranked.iloc[0]), ("wild", ranked.iloc[-1])):
        out[name] = {"name": f"{r['implementation']} {r['parameter_set']} {r['operation']}",
                     "ratio": f.lookup(_id("p99_over_median", name), "kem_percentiles", r, "p99_over_median",
                                       via=TAILS, fmt="fixed2", interval=False, about=(r["parameter_set"],))}
    where = {"parameter_set": ML_KEM}
    f.aggregate("tail_cells", "kem_percentiles", "count", where=where, via=TAILS)
    f.aggregate("spread_median", "kem_percentiles", "median", "p10_to_p90", where=where, via=TAILS, fmt="pct1")
    f.aggregate("spread_max", "kem_percentiles", "max", "p10_to_p90", where=where, via=TAILS, fmt="pct1")
    return {"tails": out}


# --- throughput -------------------------------------------------------------------------------

def throughput_part(f: Facts, throughput: pd.DataFrame) -> dict:
    ok = throughput[(throughput["status"] == "ok") & throughput["ops_per_sec"].notna()]
    if ok.empty:
        return {"any_sweep": False}
    where = {"status": "ok"}
    tmax = f.aggregate("tmax", "kem_throughput", "max", "threads", where=where, fmt="int")
    f.aggregate("tmin", "kem_throughput", "min", "threads", where=where, fmt="int")
    ctx = {"any_sweep": True, "all_pinned": bool(ok["pinned"].all()), "efficiency": False}

    def rate(r):
        return f.lookup(_id("rate", r["implementation"], r["parameter_set"], r["operation"], f"t{int(r['threads'])}"),
                        "kem_throughput", r, "ops_per_sec", unit="ops/s", about=(r["implementation"],))

    top = []
    for r in ok[ok["threads"] == tmax.value].to_dict("records"):
        entry = {"row": r, "rate": rate(r)}
        if tmax.value > 1 and pd.notna(r["scaling_efficiency"]):
            eff = f.lookup(_id("eff", r["implementation"], r["parameter_set"], r["operation"], f"t{int(r['threads'])}"),
                           "kem_throughput", r, "scaling_efficiency", fmt="pct1", about=(r["implementation"],))
            entry.update(eff=eff, eff_verdict=f.bound_verdict(_id("eff_vs_full", r["implementation"],
                                                                  r["parameter_set"], r["operation"]), eff, 1.0,
                                                              better="above", worse="below"))
        top.append(entry)
    ctx["top"] = top
    rankings = []
    for threads in sorted({int(ok["threads"].min()), int(tmax.value)}):
        at = ok[ok["threads"] == threads]
        for (pset, op), g in at.groupby(["parameter_set", "operation"], sort=False):
            g = g.sort_values("ops_per_sec", ascending=False)
            if len(g) < 2:
                continue
            a, b = g.iloc[0].to_dict(), g.iloc[1].to_dict()
            fa, fb = rate(a), rate(b)
            rankings.append({"threads": f["tmin"] if threads == f["tmin"].value else tmax, "pset": pset, "op": op,
                             "a": a["implementation"], "b": b["implementation"], "a_rate": fa, "b_rate": fb,
                             "verdict": f.verdict(_id("sweep_rank", pset, op, f"t{threads}"), fa, fb, better=FASTER,
                                                  worse=SLOWER)})
    ctx["rankings"] = rankings
    if tmax.value > 1 and any("eff" in t for t in top):
        where_top = {"status": "ok", "threads": tmax.value}
        f.aggregate("eff_min", "kem_throughput", "min", "scaling_efficiency", where=where_top, fmt="pct1")
        f.aggregate("eff_max", "kem_throughput", "max", "scaling_efficiency", where=where_top, fmt="pct1")
        ctx["efficiency"] = True
    return ctx


def disagreements(ctx: dict) -> list[dict]:
    """The sweep's rankings at its fewest threads (one: what a cycles cell runs) whose
    verdict on two implementations differs from the cost per call's on the same parameter
    set and operation: the text sets the two side by side and says how they were measured.
    Each entry is the cost per call's comparison (`first` against `second`, its verdict and
    ratio) with the ranking (`rank`)."""
    simd = ctx.get("simd")
    cycles = {}
    for name, first, second in (("oqs_vs_simd", "liboqs", simd), ("simd_vs_portable", simd, "libcrux-portable")):
        for group in (ctx.get(name) or {}).get("groups", []):
            for row in group["rows"]:
                cycles[(row["pset"], row["op"], frozenset((first, second)))] = {"first": first, "second": second,
                                                                              **row}
    flipped = {FASTER: SLOWER, SLOWER: FASTER, SAME: SAME}
    out = []
    for rank in ctx.get("rankings", []):
        found = cycles.get((rank["pset"], rank["op"], frozenset((rank["a"], rank["b"]))))
        if found is None or rank["threads"].value != 1:
            continue
        word = found["verdict"].value if found["first"] == rank["a"] else flipped[found["verdict"].value]
        if word != rank["verdict"].value:
            out.append({**found, "rank": rank})
    return out


# --- published figures ------------------------------------------------------------------------

def _measured_us(ok: pd.DataFrame, imp: str, op: str) -> str:
    values = []
    for pset in ML_KEM:
        row = ok[(ok["implementation"] == imp) & (ok["parameter_set"] == pset) & (ok["operation"] == op)]
        if len(row) and pd.notna(row["median_ns"].iloc[0]):
            values.append(f"{pset.removeprefix('ML-KEM-')}: {row['median_ns'].iloc[0] / 1000:.1f}")
    return ", ".join(values) + " µs" if values else "n/a (no time conversion for this counter)"


def published_table(cycles: pd.DataFrame) -> pd.DataFrame:
    ok = _ok(cycles)
    imp = seed_implementation(ok)
    rows = []
    for p in published.FIGURES:
        if p.unit == "cycles":
            hit = ok[(ok["implementation"] == imp) & (ok["parameter_set"] == p.parameter_set)
                     & (ok["operation"] == p.operation)] if imp else ok.iloc[0:0]
            here = f"{fmt_num(hit['median_ticks'].iloc[0])} {unit_word(ok)} ({imp})" if len(hit) else "n/a"
            value = f"{p.value:,.0f} cycles"
        else:
            # an M1 runs the portable or NEON code, never AVX2: the portable code beside ours
            shown = list(dict.fromkeys(i for i in (imp, "libcrux-portable") if i and i in set(ok["implementation"])))
            here = "; ".join(f"{_measured_us(ok, i, p.operation)} ({i})" for i in shown) or "n/a"
            value = f"{p.value:g} µs"
        rows.append({"source": p.source, "machine": p.machine, "parameter set": p.parameter_set or "not stated",
                     "operation": p.operation, "published": value, "measured here": here})
    return pd.DataFrame(rows)


# --- the headline and the seed --------------------------------------------------------------

def headline(f: Facts, cycles: pd.DataFrame) -> dict:
    """The seed's own example, ML-KEM-512 with libcrux-ml-kem (backend, machine and
    counter not stated; its 38,331 and 43,913 cycles per encapsulation and
    decapsulation), against the same cells here. Core cycles and TSC ticks are different
    units, so the quantity compared is unit-free: decapsulation over encapsulation. Each
    cell ran once: their drift within the run bars the verdict as the machine's spread does."""
    cells = cells_view(cycles)
    seed_enc = f.seed("seed_encaps", SEED, "encaps cycles = 38331", 38331, fmt="int", unit="cycles")
    seed_dec = f.seed("seed_decaps", SEED, "decaps cycles = 43913", 43913, fmt="int", unit="cycles")
    seed_ratio = f.derived("seed_decaps_over_encaps", "ratio", seed_dec, seed_enc, fmt="fixed3")
    rows = []
    for imp in [i for i in (*SIMD, "libcrux-portable") if i in set(cells["implementation"])]:
        enc, dec = _row(cells, imp, "ML-KEM-512", "encaps"), _row(cells, imp, "ML-KEM-512", "decaps")
        if enc is None or dec is None:
            continue
        r = ratio(f, dec, enc, "ML-KEM-512")
        rows.append({"implementation": imp, "code": "portable" if imp == "libcrux-portable" else
                     imp.removeprefix("libcrux-").upper(), "ratio": r, "enc": cell(f, enc),
                     "dec": cell(f, dec),
                     "verdict": f.bound_verdict(_id("headline_vs_seed", imp), r, seed_ratio.value, better="above",
                                                worse="below", same=SEED_SAME, floor=(drift(f, dec), drift(f, enc)))})
    if not rows:
        return {"headline": None}
    return {"headline": {"main": rows[0], "others": rows[1:], "seed_ratio": seed_ratio, "seed_enc": seed_enc,
                         "seed_dec": seed_dec, "unit": unit_word(_ok(cycles))}}


def limitations(f: Facts, throughput: pd.DataFrame) -> dict:
    """What this machine cannot show: its cores bound the thread sweep (the counter and
    the implementations it cannot run come from the setup's facts)."""
    out = {}
    cores = f.machine_value("cores", "machine.logical_cores", fmt="int")
    ok = throughput[throughput["status"] == "ok"]
    if len(ok):
        tmax = f.aggregate("sweep_tmax", "kem_throughput", "max", "threads", where={"status": "ok"}, fmt="int")
        out["sweep_at_cores"] = cores.value is not None and tmax.value >= cores.value
    out["any_sweep_ok"] = bool(len(ok))
    return out


# --- the context ------------------------------------------------------------------------------

def report_tables(tables: dict[str, pd.DataFrame]) -> dict:
    """The paper's tables as Snakemake's report shows them, {name: frame}; each one's caption is
    in captions.yml beside the templates, under `tables:`."""
    return {"kem_seed_table": seed_table_frame(tables["kem_cycles"], tables["kem_percentiles"]),
            "kem_published_table": published_table(tables["kem_cycles"])}


def facts(f: Facts, tables: dict[str, pd.DataFrame]) -> dict:
    """The section's facts, registered on `f`, and the rest of its templates' context."""
    cycles, percentiles = tables["kem_cycles"], tables["kem_percentiles"]
    throughput, counters = tables["kem_throughput"], tables["kem_counters"]
    ctx = {"tables": {"kem_seed": seed_table_frame(cycles, percentiles),
                              "kem_published": published_table(cycles)}}
    ctx.update(setup(f, cycles, throughput, counters))
    ctx.update(resolution(f, cycles))
    ctx.update(cycles_part(f, cycles))
    ctx.update(seed_table(f, cycles, percentiles))
    ctx.update(distribution(f, percentiles))
    ctx.update(throughput_part(f, throughput))
    ctx["disagreements"] = disagreements(ctx)
    ctx.update(headline(f, cycles))
    ctx.update(limitations(f, throughput))
    return ctx
