"""The facts of the sigpar section, computed from the study's tables; the words are the
templates in `paper/sections/sigpar/` (one per generated part), which
`paper/sections/sigpar.qmd` includes from `paper/_generated/sigpar/`.

Every fact names the mode (and backend) it belongs to: a number from threading cells and
one from multiprocess cells, or from pyca and from openssl-cffi, are never mixed in one
claim. Numbers are medians over a cell's repetitions with their 95% bootstrap intervals;
a ranking whose intervals overlap is a verdict of "not distinguishable on this machine".
"""

from __future__ import annotations

import pandas as pd

from parbench import stats
from parbench.paper.facts import SAME, Facts
from parbench.paper.format import fmt_ci, fmt_num, fmt_pct, pct_format
from parbench.studies.sigpar.algorithms import CATALOG
from parbench.studies.sigpar.figures import VARIANT_ORDER
from parbench.studies.sigpar.plan import variant_of

# The processed tables the facts read.
TABLES = ["sigpar_cells", "sigpar_load"]
RATIO = "parbench.studies.sigpar.figures:thread_process_ratio"
COST = "parbench.studies.sigpar.figures:python_cost_table"
# The columns that name one row of each table (and of the tables derived from it).
KEYS = {
    "sigpar_cells": ["algorithm", "operation", "mode", "backend", "workers", "hostname"],
    f"sigpar_cells|{RATIO}": ["algorithm", "operation", "workers", "backend"],
    f"sigpar_cells|{COST}": ["algorithm", "operation", "backend"],
}
# How a footnote names a row (`Facts.note_names`) as the text does: a mode with its extra
# backend as one ("in threading-openssl-cffi mode"), the backend alone only where no mode
# picked the row (a ratio of one backend to the native runner)
NOTE_NAMES = {"mode": lambda where: f"in {variant_of(where['mode'], where.get('backend', ''))} mode",
              "backend": lambda where: None if "mode" in where else where["backend"]}
# The generated parts (templates in paper/sections/sigpar/), in the order the section
# includes them; `headline` and `limitations` go to the paper's summary and limitations.
FRAGMENTS = ["setup", "throughput", "efficiency", "latency", "gil", "backends", "energy", "summary", "headline",
             "limitations"]
# The paper's tables, also written as HTML and CSV for Snakemake's report.
REPORT_TABLES = ["sigpar_summary"]
SEED = "sigpar.txt"
MAIN_VARIANTS = ("threading", "multiprocess", "native-threads")
CONFIDENCE = "parbench.studies.sigpar.aggregate:CONFIDENCE"
# The seed's reading of an efficiency: below this, "investigate".
INVESTIGATE_BELOW = "parbench.studies.sigpar.paper:SEED_INVESTIGATE"
SEED_INVESTIGATE = 0.70
# The worker counts at which the seed reads an efficiency above 85% in threads as "confirms
# GIL is released" (its 2-4 threads).
GIL_RELEASED_COUNTS = range(2, 5)


def _variants(frame: pd.DataFrame, among=VARIANT_ORDER) -> list[str]:
    present = set(frame["variant"])
    return [v for v in VARIANT_ORDER if v in present and v in among]


def _id(*parts) -> str:
    return ".".join(str(p).replace(" ", "_") for p in parts)


def rate(f: Facts, row, name: str = "rate"):
    """A cell's median throughput with its interval."""
    return f.lookup(_id(name, row.algorithm, row.operation, row.variant, f"t{int(row.workers)}"), "sigpar_cells", row,
                    "ops_per_sec", unit="ops/s", about=(row.algorithm,))


def efficiency_fact(f: Facts, row):
    return f.lookup(_id("eff", row.algorithm, row.operation, row.variant, f"t{int(row.workers)}"), "sigpar_cells",
                    row, "scaling_efficiency", fmt="pct", about=(row.algorithm,))


# --- setup ----------------------------------------------------------------------------------

def setup(f: Facts, cells: pd.DataFrame, ok: pd.DataFrame, machine: dict) -> dict:
    bad = cells[cells["status"] != "ok"]
    extra = sorted(set(cells["backend"]) - {"pyca", "liboqs-python", "native"})
    few = ok[ok["few_ops"].fillna(False).astype(bool)] if "few_ops" in ok else ok.iloc[0:0]
    steady = ok.dropna(subset=["window_rate_cv"]) if "window_rate_cv" in ok else ok.iloc[0:0]
    f.aggregate("n_algorithms", "sigpar_cells", "nunique", "algorithm")
    f.aggregate("workers", "sigpar_cells", "values", "workers", fmt="list")
    f.aggregate("n_cells", "sigpar_cells", "count")
    f.aggregate("n_failed", "sigpar_cells", "count", where={"status": ["failed", "skipped", "unavailable"]})
    f.config("warmup", "sigpar.warmup_sec", unit="s")
    f.config("duration", "sigpar.duration_sec", unit="s")
    f.config("window", "sigpar.analysis_window_sec", unit="s")
    f.aggregate("repetitions", "sigpar_cells", "max", "repetitions", fmt="int")
    f.config("seed", "run_order_seed", fmt="plain")
    f.constant("confidence", CONFIDENCE, fmt="pct")
    f.config("min_ops", "sigpar.min_ops_per_worker", fmt="int")
    f.config("max_latency_samples", "sigpar.max_latency_samples", fmt="int")  # the latency figure's caption
    f.config("sample_interval", "telemetry.sample_interval_sec", unit="s")
    few_rows = [{"row": r, "per_worker": f.lookup(_id("per_worker", r.algorithm, r.operation, r.variant,
                                                      f"t{int(r.workers)}"), "sigpar_cells", r, "ops_per_worker",
                                                  interval=False, about=(r.algorithm,))}
                for r in few.itertuples()]
    f.count_of("n_few", [c["per_worker"] for c in few_rows])
    bad_rows = [{"row": r, "failure": f.lookup(_id("failure", r.algorithm, r.operation, r.variant,
                                                   f"t{int(r.workers)}"), "sigpar_cells", r, "failure",
                                               fmt="text", interval=False)} for r in bad.itertuples()]
    if len(steady):
        f.aggregate("cv_median", "sigpar_cells", "median", "window_rate_cv", where={"status": "ok"}, fmt="pct1")
        f.aggregate("cv_max", "sigpar_cells", "max", "window_rate_cv", where={"status": "ok"}, fmt="pct1")
        f.aggregate("cv_cells", "sigpar_cells", "count", "window_rate_cv", where={"status": "ok"})
    return {"families": ", ".join(dict.fromkeys(cells["family"])),
            "operations": " and ".join(dict.fromkeys(cells["operation"])),
            "modes": ", ".join(m for m in MAIN_VARIANTS if m in set(cells["mode"])),
            "extra_backends": ", ".join(extra),
            "extra_variants": sorted(v for v in set(cells["variant"]) if any(v.endswith(f"-{b}") for b in extra)),
            "python_modes": [m for m in ("threading", "multiprocess") if m in set(cells["variant"])],
            "python_backends": [b for b in ("pyca", "liboqs-python") if b in set(cells["backend"])],
            "few": few_rows, "bad": bad_rows, "steady": bool(len(steady))}


# --- throughput -----------------------------------------------------------------------------

def throughput(f: Facts, ok: pd.DataFrame) -> dict:
    one = ok[ok["workers"] == 1]
    ops = []
    for op in [o for o in ("sign", "verify") if o in set(one["operation"])]:
        variants = []
        for variant in _variants(one, MAIN_VARIANTS):
            ranked = one[(one["operation"] == op) & (one["variant"] == variant)].sort_values(
                "ops_per_sec", ascending=False)
            if len(ranked) < 2:
                continue
            hi, second, lo = ranked.iloc[0], ranked.iloc[1], ranked.iloc[-1]
            best, runner_up, worst = (rate(f, r) for r in (hi, second, lo))
            variants.append({
                "variant": variant, "best": hi.algorithm, "best_rate": best, "second": second.algorithm,
                "second_rate": runner_up, "worst": lo.algorithm, "worst_rate": worst,
                "lead": f.verdict(_id("lead", op, variant), best, runner_up, better="ahead of", worse="behind"),
                "factor": f.derived(_id("factor", op, variant), "ratio", best, worst, fmt="num", unit="x",
                                    about=(hi.algorithm,)),
                "several": len(ranked) > 2})
        if variants:
            ops.append({"operation": op, "variants": variants})
    f.aggregate("wmax", "sigpar_cells", "max", "workers", where={"status": "ok"}, fmt="int")
    native_bound = _native_bound(f, ok)
    return {"one_worker": ops, "native_bound": native_bound,
            "native_exceptions": [r for r in native_bound if r["verdict"].value == "faster than"]}


def _native_bound(f: Facts, ok: pd.DataFrame) -> list[dict]:
    """Where a Python backend with one worker is not below the native runner: the claim
    "the native runner is the upper bound" holds only where every verdict says below."""
    one = ok[ok["workers"] == 1]
    native = one[one["mode"] == "native-threads"].set_index(["algorithm", "operation"])
    rows = []
    for r in one[one["mode"] == "threading"].itertuples():
        if (r.algorithm, r.operation) not in native.index:
            continue
        nat = native.loc[(r.algorithm, r.operation)]
        nat_row = nat.to_dict() | {"algorithm": r.algorithm, "operation": r.operation, "workers": 1}
        a, b = rate(f, r), f.lookup(_id("rate", r.algorithm, r.operation, "native-threads", "t1"), "sigpar_cells",
                                    nat_row, "ops_per_sec", unit="ops/s", about=(r.algorithm,))
        v = f.verdict(_id("vs_native", r.algorithm, r.operation, r.backend), a, b, better="faster than",
                      worse="slower than")
        rows.append({"row": r, "rate": a, "native": b, "verdict": v})
    verdicts = [r["verdict"] for r in rows]
    f.count_of("vs_native_n", verdicts)
    f.count_of("vs_native_slower", verdicts, "slower than")
    f.count_of("vs_native_same", verdicts, SAME)
    f.count_within_spread("vs_native_within_spread", verdicts)
    f.count_of("vs_native_faster", verdicts, "faster than")
    return rows


# --- efficiency -----------------------------------------------------------------------------

def efficiency(f: Facts, ok: pd.DataFrame) -> dict:
    wmax = int(ok["workers"].max())
    top = ok[ok["workers"] == wmax].dropna(subset=["scaling_efficiency"])
    if wmax == 1 or top.empty:
        return {"efficiency_variants": []}
    f.constant("investigate", INVESTIGATE_BELOW, fmt="pct")
    variants = []
    for variant in _variants(top):
        where = {"status": "ok", "workers": wmax, "variant": variant}
        # one precision for the median and its range, fine enough that none reads 100% unless it is
        effs = top.loc[top["variant"] == variant, "scaling_efficiency"]
        fmt = pct_format(effs.median(), effs.min(), effs.max())
        variants.append({"variant": variant,
                         "median": f.aggregate(_id("eff_median", variant), "sigpar_cells", "median",
                                               "scaling_efficiency", where=where, fmt=fmt),
                         "min": f.aggregate(_id("eff_min", variant), "sigpar_cells", "min", "scaling_efficiency",
                                            where=where, fmt=fmt),
                         "max": f.aggregate(_id("eff_max", variant), "sigpar_cells", "max", "scaling_efficiency",
                                            where=where, fmt=fmt)})
    rows = []
    for r in top.itertuples():
        e = efficiency_fact(f, r)
        # against the seed's "investigate" only where the text lists the cell: below it by the
        # median (a verdict just past its bar above it would be one no text writes)
        low = f.bound_verdict(_id("eff_vs_investigate", r.algorithm, r.operation, r.variant), e, SEED_INVESTIGATE,
                              better="above", worse="below") if r.scaling_efficiency < SEED_INVESTIGATE else None
        full = f.bound_verdict(_id("eff_vs_full", r.algorithm, r.operation, r.variant), e, 1.0,
                               better="above", worse="below")
        rows.append({"row": r, "efficiency": e, "vs_investigate": low, "vs_full": full})
    f.count_of("eff_n", [r["vs_full"] for r in rows])
    f.count_of("eff_above", [r["vs_full"] for r in rows], "above")
    f.count_of("eff_full", [r["vs_full"] for r in rows], SAME)
    f.count_of("eff_below", [r["vs_full"] for r in rows], "below")
    f.count_within_spread("eff_within_spread", [r["vs_full"] for r in rows])
    return {"efficiency_variants": variants, "seed_expectations": seed_expectations(f, ok),
            "efficiency_below": [r for r in rows if r["vs_full"].value == "below"],
            "efficiency_above": [r for r in rows if r["vs_full"].value == "above"],
            "efficiency_investigate": [r for r in rows if r["vs_investigate"] and r["vs_investigate"].value == "below"],
            "efficiency_low_unsure": [r for r in rows if r["vs_investigate"] and r["vs_investigate"].value != "below"]}


def seed_expectations(f: Facts, ok: pd.DataFrame) -> dict:
    """The seed's two expectations, each judged like any other mark: threading cells at the
    most workers from 2 to 4 against its 85% ("confirms GIL is released"), and SPHINCS+
    cells at the most workers against the top of its expected 0.65 to 0.8."""
    out = {"gil": None, "sphincs": None}
    counts = [w for w in sorted(set(ok["workers"])) if w in GIL_RELEASED_COUNTS]
    threads = ok[(ok["mode"] == "threading") & (ok["workers"] == counts[-1])] if counts else ok.iloc[0:0]
    threads = threads.dropna(subset=["scaling_efficiency"])
    if len(threads):
        mark = f.seed("seed_gil_released", SEED, "Efficiency >85% confirms GIL is released", 85, fmt="int",
                      unit="%")
        items = _against(f, threads, "eff_vs_gil_released", mark.value / 100)
        verdicts = [i["verdict"] for i in items]
        # every variant of Python threads (threading and threading-openssl-cffi), named as such:
        # "threading mode" alone names one of them
        out["gil"] = {"variants": list(dict.fromkeys(threads["variant"])),
                      "workers": f.literal("gil_released_workers", counts[-1], "the most workers from 2 to 4"),
                      "n": f.count_of("gil_released_n", verdicts),
                      "above": f.count_of("gil_released_above", verdicts, "above"),
                      "below": [i for i in items if i["verdict"].value == "below"],
                      "same": [i for i in items if i["verdict"].value not in ("above", "below")]}
    top = int(ok["workers"].max())
    sphincs = ok[(ok["family"] == "SPHINCS+") & (ok["workers"] == top)].dropna(subset=["scaling_efficiency"])
    if top > 1 and len(sphincs):
        where = {"status": "ok", "family": "SPHINCS+", "workers": top}
        low = f.seed("seed_sphincs_low", SEED, "For SPHINCS+, expect 0.65", 0.65, fmt="fixed2")
        high = f.seed("seed_sphincs_high", SEED, "0.8 due to hash-tree memory churn", 0.8, fmt="fixed2")
        items = _against(f, sphincs, "eff_vs_sphincs_high", high.value)
        verdicts = [i["verdict"] for i in items]
        out["sphincs"] = {"low": low, "high": high, "n": f.count_of("sphincs_n", verdicts),
                          "above": f.count_of("sphincs_above", verdicts, "above"),
                          **{end: f.aggregate(f"sphincs_eff_{end}", "sigpar_cells", end, "scaling_efficiency",
                                              where=where, fmt="fixed2", about=("SPHINCS+",))
                             for end in ("min", "max")}}
    return out


def _against(f: Facts, cells: pd.DataFrame, short: str, mark: float) -> list[dict]:
    """Each cell's efficiency and its verdict against a fixed mark."""
    out = []
    for r in cells.itertuples():
        e = efficiency_fact(f, r)
        out.append({"row": r, "efficiency": e, "verdict": f.bound_verdict(
            _id(short, r.algorithm, r.operation, r.variant), e, mark, better="above", worse="below")})
    return out


# --- latency --------------------------------------------------------------------------------

def latency(f: Facts, ok: pd.DataFrame) -> dict:
    wmax = int(ok["workers"].max())
    rows = []
    if wmax > 1:
        for variant in _variants(ok):
            for op in ("sign", "verify"):
                mine = ok[(ok["variant"] == variant) & (ok["operation"] == op)].dropna(subset=["p99_latency_ms"])
                for alg, g in mine.groupby("algorithm", sort=False):
                    g = g.set_index("workers")
                    if 1 in g.index and wmax in g.index:
                        one = f.lookup(_id("p99", alg, op, variant, "t1"), "sigpar_cells",
                                       g.loc[1].to_dict() | {"workers": 1, "algorithm": alg, "operation": op},
                                       "p99_latency_ms", unit="ms", about=(alg,))
                        top = f.lookup(_id("p99", alg, op, variant, f"t{wmax}"), "sigpar_cells",
                                       g.loc[wmax].to_dict() | {"workers": wmax, "algorithm": alg, "operation": op},
                                       "p99_latency_ms", unit="ms", about=(alg,))
                        rows.append({"algorithm": alg, "operation": op, "variant": variant, "one": one, "top": top,
                                     "verdict": f.verdict(_id("p99_change", alg, op, variant), top, one,
                                                          better="higher than", worse="lower than")})
    rising = [r for r in rows if r["verdict"].value == "higher than"]
    f.count_of("latency_compared", [r["verdict"] for r in rows])
    f.count_of("latency_rising", [r["verdict"] for r in rows], "higher than")
    f.count_of("latency_falling", [r["verdict"] for r in rows], "lower than")
    f.count_within_spread("latency_within_spread", [r["verdict"] for r in rows])
    samples = bool(rows) and "latency_samples" in ok and ok["latency_samples"].notna().any()
    if samples:
        # what a compared p99 rests on: the cells' latency samples (each the median over
        # its repetitions) at both ends, where there were enough for a p99 at all
        where = {"status": "ok", "workers": [1, wmax], "latency_samples": {">=": stats.min_samples_for(99)}}
        for end in ("min", "max"):
            f.aggregate(_id("latency_samples", end), "sigpar_cells", end, "latency_samples", where=where, fmt="int")
    largest = max(rising, key=lambda r: r["top"].value / r["one"].value, default=None)
    if largest is not None:
        f.derived("latency_largest_rise", "ratio", largest["top"], largest["one"], unit="x",
                  about=(largest["algorithm"],))
    falling = [r for r in rows if r["verdict"].value == "lower than"]
    return {"latency_rows": rows, "latency_rising": rising, "latency_largest": largest, "latency_samples": samples,
            "latency_falling": falling}


# --- threads against processes ----------------------------------------------------------------

def gil(f: Facts, ok: pd.DataFrame) -> dict:
    from parbench.studies.sigpar.figures import thread_process_ratio

    ratio = thread_process_ratio(ok)
    if ratio.empty:
        return {"ratio_rows": []}
    wmax = int(ratio["workers"].max())
    rows = []
    for r in ratio[ratio["workers"] == wmax].itertuples():
        value = f.lookup(_id("ratio", r.algorithm, r.operation, r.backend, f"t{wmax}"), "sigpar_cells", r, "ratio",
                         via=RATIO, fmt="fixed2", about=(r.algorithm,))
        row = {"row": r, "ratio": value, "below": None,
               "verdict": f.bound_verdict(_id("ratio_vs_1", r.algorithm, r.operation, r.backend), value, 1.0,
                                          better="above", worse="below")}
        if row["verdict"].value == "below":
            # what the text sets beside a ratio below parity: how far the threading
            # repetitions ranged, and how busy each mode kept its CPU (a thread waiting on
            # a lock idles)
            def look(column: str, unit: str | None, fmt: str = "num") -> object:
                return f.lookup(_id(column, r.algorithm, r.operation, r.backend, f"t{wmax}"), "sigpar_cells", r,
                                column, via=RATIO, unit=unit, fmt=fmt, interval=False, about=(r.algorithm,))
            row["below"] = {"low": look("threading_reps_min", "ops/s"), "high": look("threading_reps_max", "ops/s"),
                            "processes": look("multiprocess", "ops/s"), "threads_cpu": None}
            if pd.notna(getattr(r, "threading_cpu", None)) and pd.notna(getattr(r, "multiprocess_cpu", None)):
                threads_cpu, processes_cpu = look("threading_cpu", None, "pct"), look("multiprocess_cpu", None, "pct")
                # the ratio the idle CPU alone would make, were every busy second as productive
                idle = f.derived(_id("busy_ratio", r.algorithm, r.operation, r.backend, f"t{wmax}"), "ratio",
                                 threads_cpu, processes_cpu, fmt="fixed2", about=(r.algorithm,))
                row["below"].update(threads_cpu=threads_cpu, processes_cpu=processes_cpu, busy_ratio=idle)
        rows.append(row)
    verdicts = [r["verdict"] for r in rows]
    f.count_of("ratio_n", verdicts)
    f.count_of("ratio_below", verdicts, "below")
    f.count_of("ratio_same", verdicts, SAME)
    f.count_of("ratio_above", verdicts, "above")
    f.count_within_spread("ratio_within_spread", verdicts)
    return {"ratio_rows": rows, "ratio_below": [r for r in rows if r["verdict"].value == "below"],
            "ratio_above": [r for r in rows if r["verdict"].value == "above"]}


# --- backends against the native runner -------------------------------------------------------

def backends(f: Facts, ok: pd.DataFrame) -> dict:
    from parbench.studies.sigpar.figures import python_cost_table

    cost = python_cost_table(ok)
    rows = []
    for r in cost.itertuples():
        frac = f.lookup(_id("fraction", r.algorithm, r.operation, r.backend), "sigpar_cells", r, "fraction_of_native",
                        via=COST, fmt="pct", about=(r.algorithm,))
        us = f.lookup(_id("cost_us", r.algorithm, r.operation, r.backend), "sigpar_cells", r, "python_cost_us",
                      via=COST, interval=False, unit="µs", about=(r.algorithm,))
        rows.append({"row": r, "fraction": frac, "cost_us": us})
    by_backend = []
    for backend in [b for b in ("pyca", "liboqs-python", "openssl-cffi") if b in set(cost["backend"])]:
        where = {"backend": backend}
        by_backend.append({"backend": backend,
                           "median": f.aggregate(_id("fraction_median", backend), "sigpar_cells", "median",
                                                 "fraction_of_native", where=where, via=COST, fmt="pct"),
                           "cost": f.aggregate(_id("cost_median", backend), "sigpar_cells", "median",
                                               "python_cost_us", where=where, via=COST, unit="µs"),
                           "n": f.aggregate(_id("cost_n", backend), "sigpar_cells", "count", where=where,
                                            via=COST), "less": None})
        cost_us = by_backend[-1]["cost"]
        if cost_us.value is not None and cost_us.value < 0:  # the Python path took less time: "less", not "−x more"
            by_backend[-1]["less"] = f.derived(_id("cost_median_less", backend), "magnitude", cost_us, cost_us,
                                               unit="µs")
    negative = [r for r in rows if r["cost_us"].value is not None and r["cost_us"].value < 0]
    for r in negative:  # a median above the native rate: a finding only if the data can tell
        x = r["row"]
        r["vs_parity"] = f.bound_verdict(_id("fraction_vs_parity", x.algorithm, x.operation, x.backend), r["fraction"],
                                         1.0, better="above", worse="below")
        r["less"] = f.derived(_id("cost_us_less", x.algorithm, x.operation, x.backend), "magnitude", r["cost_us"],
                              r["cost_us"], unit="µs", about=(x.algorithm,))
    return {"cost_rows": rows, "cost_backends": by_backend, "cost_negative": negative,
            "cost_above": [r for r in negative if r["vs_parity"].value == "above"]}


def versions(f: Facts, cells: pd.DataFrame) -> dict:
    """The OpenSSL each backend ran on: pyca/cryptography's own (provenance) and the
    shim's (its backend_version)."""
    out = {}
    pyca = cells[cells["backend"] == "pyca"].dropna(subset=["openssl_version"])
    shim = cells[cells["backend"].isin(["openssl-cffi", "native"]) & cells["family"].isin(["RSA", "ECDSA", "EdDSA"])]
    shim = shim.dropna(subset=["backend_version"])
    if len(pyca):
        out["pyca_openssl"] = f.lookup("pyca_openssl", "sigpar_cells", pyca.iloc[0], "openssl_version", fmt="text",
                                       interval=False)
        out["cryptography"] = f.lookup("cryptography", "sigpar_cells", pyca.iloc[0], "cryptography_version",
                                       fmt="text", interval=False)
    if len(shim):
        out["shim_openssl"] = f.lookup("shim_openssl", "sigpar_cells", shim.iloc[0], "backend_version", fmt="text",
                                       interval=False)
    # the post-quantum algorithms' C library, which liboqs-python's own version does not name
    oqs = cells[cells["backend"].isin(["liboqs-python", "native"])].dropna(subset=["liboqs_version"]) \
        if "liboqs_version" in cells else cells.iloc[:0]
    if len(oqs):
        out["liboqs"] = f.aggregate("liboqs", "sigpar_cells", "values", "liboqs_version",
                                    where={"backend": ["liboqs-python", "native"]}, fmt="list")
        py = oqs[oqs["backend"] == "liboqs-python"]
        py = py.dropna(subset=["liboqs_python_version"]) if "liboqs_python_version" in py else py.iloc[:0]
        if len(py):
            out["liboqs_python"] = f.lookup("liboqs_python", "sigpar_cells", py.iloc[0], "liboqs_python_version",
                                            fmt="text", interval=False)
    out["same_openssl"] = bool(len(pyca) and len(shim)) and \
        str(pyca.iloc[0]["openssl_version"]).split()[:2] == str(shim.iloc[0]["backend_version"]).split()[:2]
    return out


# --- energy -----------------------------------------------------------------------------------

def energy(f: Facts, ok: pd.DataFrame, machine: dict) -> dict:
    measured = ok.dropna(subset=["energy_per_op_j"])
    if measured.empty:
        return {"energy": None}
    rows = []
    for variant in _variants(measured):
        where = {"status": "ok", "workers": 1, "variant": variant}
        rows.append({"variant": variant,
                     "min": f.aggregate(_id("energy_min", variant), "sigpar_cells", "min", "energy_per_op_j",
                                        where=where, unit="J"),
                     "max": f.aggregate(_id("energy_max", variant), "sigpar_cells", "max", "energy_per_op_j",
                                        where=where, unit="J")})
    return {"energy": rows, "energy_source": measured["energy_source"].iloc[0]}


# --- the headline and the seed --------------------------------------------------------------

# The headline's backend, first that was measured: the seed's own approach for classical
# signatures (OpenSSL called directly through CFFI), then pyca/cryptography.
HEADLINE_BACKENDS = ("openssl-cffi", "pyca")


def headline(f: Facts, ok: pd.DataFrame) -> dict:
    """The seed's own example: RSA-2048 signing in processes, scaling from 1 to 2 workers
    (the output-format example of the seed's README, for its M4 reference host: 124.3 and
    247.8 ops/sec), beside the same cell here, on the seed's CFFI approach if it ran."""
    signing = ok[(ok["algorithm"] == "RSA-2048") & (ok["operation"] == "sign")]
    processes = signing[signing["mode"] == "multiprocess"]
    mp = processes[processes["workers"] == 2]
    measured = [b for b in HEADLINE_BACKENDS if b in set(mp["backend"])]
    if not measured:
        return {"headline": None}
    r = mp[mp["backend"] == measured[0]].iloc[0]
    seed_one = f.seed("seed_rsa2048_t1", SEED, "1t â†’      124.3 ops/sec", 124.3, fmt="fixed1", unit="ops/s")
    seed_two = f.seed("seed_rsa2048_t2", SEED, "2t â†’      247.8 ops/sec", 247.8, fmt="fixed1", unit="ops/s")
    # one decimal, or two where one would print the seed's efficiency and an end of ours alike
    # (99.66% and 99.68% both read 99.7%, as if the seed's lay inside our interval)
    ends = [r.get(f"scaling_efficiency{end}") for end in ("", "_ci_low", "_ci_high")]
    seed_value = seed_two.value / (2 * seed_one.value)
    fmt = "pct2" if any(v is not None and not pd.isna(v) and f"{100 * v:.1f}" == f"{100 * seed_value:.1f}"
                        for v in ends) else "pct1"
    seed_eff = f.derived("seed_rsa2048_eff2", "ratio", seed_two, _twice(f, seed_one), fmt=fmt)
    eff = f.lookup("headline_eff", "sigpar_cells", r, "scaling_efficiency", fmt=fmt, about=("RSA-2048",))
    # the same operation with no Python at all, where it ran: how near full efficiency
    # this machine lets signing come at that worker count
    runner = signing[(signing["variant"] == "native-threads") & (signing["workers"] == 2)] \
        .dropna(subset=["scaling_efficiency"])
    native = None
    if len(runner):
        n_eff = f.lookup("headline_native_eff", "sigpar_cells", runner.iloc[0], "scaling_efficiency", fmt=fmt,
                         about=("RSA-2048",))
        # and against the processes' efficiency: where the native runner reaches full
        # efficiency and the processes do not, the two may still not be told apart
        native = {"efficiency": n_eff, "verdict": f.bound_verdict("headline_native_vs_full", n_eff, 1.0,
                                                                  better="above", worse="below"),
                  "vs_processes": f.verdict("headline_native_vs_processes", n_eff, eff, better="above",
                                            worse="below")}
    # the example's rates beside this run's one worker: only its efficiency is compared
    one = processes[(processes["backend"] == r["backend"]) & (processes["workers"] == 1)]
    rate = None
    if len(one):
        here = f.lookup("headline_one_rate", "sigpar_cells", one.iloc[0], "ops_per_sec", unit="ops/s",
                        about=("RSA-2048",))
        rate = {"here": here, "times": f.derived("headline_one_over_seed", "ratio", here, seed_one, fmt="fixed1")}
    return {"headline": {"row": r, "backend": r["backend"], "seed_approach": r["backend"] == "openssl-cffi",
                         "rate": rate,
                         "efficiency": eff, "seed_one": seed_one, "seed_two": seed_two, "seed_efficiency": seed_eff,
                         "verdict": f.bound_verdict("headline_vs_full", eff, 1.0, better="above", worse="below"),
                         "native": native}}


def _twice(f: Facts, fact):
    """Two workers' worth of a one-worker rate: the denominator of an efficiency at 2."""
    two = f.literal("two_workers", 2, "the worker count the efficiency compares")
    return f.derived(fact.key.split(".", 1)[1] + "_x2", "product", fact, two, unit="ops/s")


def limitations(f: Facts, cells: pd.DataFrame, machine: dict) -> dict:
    f.machine_value("cores", "machine.logical_cores", fmt="int")
    f.seed("seed_workers_max", SEED, "Worker counts: [1, 2, 4, 6, 8, 10]", 10, fmt="int")
    f.seed("seed_contention_threads", SEED, "degradation at 8+ threads", 8, fmt="int")
    f.seed("seed_window", SEED, "Duration per config: 12s (analysis window: 10s", 10, unit="s")
    caps = machine.get("capabilities", {})
    hw = machine.get("machine", {})
    out = {"no_energy": not caps.get("energy", {}).get("available", False),
           "no_temperature": not caps.get("temperature", {}).get("available", False),
           # the seed fills performance cores first, then efficiency cores: a machine
           # without the two kinds cannot show that order's effect
           "one_kind_of_core": not (hw.get("performance_cores") and hw.get("efficiency_cores"))}
    # the machine's own words for what it lacks (they may hold paths and numbers: facts)
    if out["no_energy"]:
        out["energy_reason"] = f.machine_value("energy_reason", "capabilities.energy.reason", fmt="plain")
    if out["no_temperature"]:
        out["temperature_reason"] = f.machine_value("temperature_reason", "capabilities.temperature.reason",
                                                    fmt="plain")
    return out


# --- the summary table ------------------------------------------------------------------------

BACKEND_ORDER = {"pyca": 0, "liboqs-python": 0, "openssl-cffi": 1, "native": 2}


def _cell_text(g: pd.DataFrame, workers: int, column: str, fmt) -> str:
    """A cell's median and, on a second line, its 95% interval (the table stays narrow)."""
    if workers not in g.index:
        return ""
    r = g.loc[workers]
    text = fmt_ci(r[column], r.get(f"{column}_ci_low"), r.get(f"{column}_ci_high"), fmt)
    return text.replace(" (", "<br>(") if "(" in text else text


def summary_frames(ok: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The paper's summary, one table per way of running (threads, processes): per
    algorithm, operation and backend, the rate with one and the most workers and the
    efficiency; narrow enough for a page."""
    if ok.empty:
        return {}
    wmax = int(ok["workers"].max())
    order = {a: i for i, a in enumerate(CATALOG)}
    frames = {}
    for name, modes in (("threads", ("threading", "native-threads")), ("processes", ("multiprocess",))):
        rows = []
        mine = ok[ok["mode"].isin(modes)]
        for (algorithm, op, backend), g in mine.groupby(["algorithm", "operation", "backend"], sort=False):
            g = g.set_index("workers")
            rows.append({"algorithm": algorithm, "op.": op, "backend": backend,
                         "1 worker, ops/s": _cell_text(g, 1, "ops_per_sec", fmt_num),
                         f"{wmax} workers, ops/s": _cell_text(g, wmax, "ops_per_sec", fmt_num),
                         "efficiency": _cell_text(g, wmax, "scaling_efficiency", fmt_pct)})
        if rows:
            frame = pd.DataFrame(rows)
            keys = {"algorithm": lambda s: s.map(order), "backend": lambda s: s.map(BACKEND_ORDER)}
            frames[name] = frame.sort_values(["algorithm", "op.", "backend"],
                                             key=lambda s: keys.get(s.name, lambda x: x)(s)).reset_index(drop=True)
    return frames


def summary_table(cells: pd.DataFrame) -> pd.DataFrame:
    """The paper's summary tables as one (for Snakemake's report)."""
    frames = summary_frames(cells[cells["status"] == "ok"])
    if not frames:
        return pd.DataFrame({"algorithm": []})
    return pd.concat([fr.assign(run=name) for name, fr in frames.items()], ignore_index=True).replace(
        {"<br>": " "}, regex=True)


def report_tables(tables: dict[str, pd.DataFrame]) -> dict:
    """The paper's tables as Snakemake's report shows them, {name: frame}; each one's caption is
    in captions.yml beside the templates, under `tables:`."""
    cells = tables["sigpar_cells"]
    return {"sigpar_summary": summary_table(cells)}


def facts(f: Facts, tables: dict[str, pd.DataFrame]) -> dict:
    """The section's facts, registered on `f`, and the rest of its templates' context."""
    machine = f.machine
    cells = tables["sigpar_cells"]
    ok = cells[cells["status"] == "ok"]
    ctx = {"any_ok": not ok.empty, "headline": None,
           "tables": {f"sigpar_summary_{k}": v for k, v in summary_frames(ok).items()}}
    ctx.update(setup(f, cells, ok, machine))
    ctx.update(versions(f, cells))
    ctx.update(limitations(f, cells, machine))
    if ok.empty:
        return ctx
    for part in (throughput, efficiency, latency, gil, backends, headline):
        ctx.update(part(f, ok))
    ctx.update(energy(f, ok, machine))
    return ctx
