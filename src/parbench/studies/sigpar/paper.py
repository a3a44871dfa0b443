"""The generated parts of the sigpar section (`paper/sections/sigpar.qmd` includes
them from `paper/_generated/sigpar/`): this run's parameters, its figures, and every
sentence that states a finding, computed here from the study's tables. The fixed prose
(what is measured and why) is in the section file, where an author edits it.

Every sentence names the mode (and backend) it speaks of: a number from threading cells
and one from multiprocess cells, or from pyca and from openssl-cffi, are never mixed up
in one claim. Numbers are medians over a cell's repetitions with their 95% bootstrap
intervals; a ranking whose intervals overlap is reported as "not distinguishable on this
machine" instead. A variant is a mode, or a mode with an extra backend
(`threading-openssl-cffi`); `native-threads` is the native runner, no Python in the loop.
"""

from __future__ import annotations

import pandas as pd

from parbench import stats
from parbench.paper.format import figure, findings, fmt_ci, fmt_num, fmt_pct, join, md_table
from parbench.studies.sigpar.algorithms import CATALOG
from parbench.studies.sigpar.figures import VARIANT_ORDER, python_cost_table, thread_process_ratio

# The processed tables the text reads.
TABLES = ["sigpar_cells"]
# The generated parts, in the order the section includes them.
FRAGMENTS = ["setup", "throughput", "efficiency", "latency", "gil", "backends", "energy", "summary"]
# The paper's tables, also written as HTML and CSV for Snakemake's report.
REPORT_TABLES = ["sigpar_summary"]
MODES = ("threading", "multiprocess")
# The variants of the library bindings and of the native runner (the extra backends are
# compared in their own part).
MAIN_VARIANTS = ("threading", "multiprocess", "native-threads")


def _modes(frame: pd.DataFrame) -> list[str]:
    present = set(frame["mode"])
    return [m for m in MODES if m in present]


def _variants(frame: pd.DataFrame, among=VARIANT_ORDER) -> list[str]:
    present = set(frame["variant"])
    return [v for v in VARIANT_ORDER if v in present and v in among]


def _ci(row, column: str = "ops_per_sec") -> tuple:
    return row.get(f"{column}_ci_low"), row.get(f"{column}_ci_high")


def _overlap(a, b, column: str = "ops_per_sec") -> bool:
    """Whether two cells both have intervals and these overlap."""
    both = all(pd.notna(x) for x in (*_ci(a, column), *_ci(b, column)) if x is not None) and \
        None not in (*_ci(a, column), *_ci(b, column))
    return both and not stats.distinguishable(_ci(a, column), _ci(b, column))


def _rate(row) -> str:
    """A cell's median throughput with its interval."""
    return fmt_ci(row["ops_per_sec"], *_ci(row))


def setup(cells: pd.DataFrame, machine: dict) -> str:
    cfg = machine["config"]["sigpar"]
    ok, bad = cells[cells["status"] == "ok"], cells[cells["status"] != "ok"]
    families = ", ".join(dict.fromkeys(cells["family"]))
    modes = [m for m in ("threading", "multiprocess", "native-threads") if m in set(cells["mode"])]
    extra = sorted(set(cells["backend"]) - {"pyca", "liboqs-python", "native"})
    parts = [
        f"This run measured {cells['algorithm'].nunique()} algorithms ({families}), "
        f"{' and '.join(cells['operation'].unique())}, in {', '.join(modes)} mode"
        + (f" (the classical algorithms in the Python modes also through {', '.join(extra)})" if extra else "")
        + f", with {', '.join(str(w) for w in sorted(cells['workers'].unique()))} workers: {len(cells)} cells, "
        f"each with {fmt_num(cfg['warmup_sec'])} s of warm-up, {fmt_num(cfg['duration_sec'])} s measured and a "
        f"{fmt_num(cfg['analysis_window_sec'])} s analysis window."
    ]
    reps = int(cells["repetitions"].max()) if "repetitions" in cells else 1
    if reps > 1:
        parts.append(f"Each cell was measured {reps} times, interleaved: every cell once, then every cell again, each "
                     f"round in a shuffled order (seed {machine['config'].get('run_order_seed')}), so that drift of "
                     f"the machine hits every cell alike. Numbers are medians over the repetitions with their 95% "
                     f"percentile-bootstrap intervals in parentheses; where two intervals overlap, the two are called "
                     f"not distinguishable on this machine rather than ranked. With {reps} repetitions an interval "
                     f"cannot be wider than their range: it shows how far they disagree.")
    else:
        parts.append("Each cell was measured once (`sigpar.repetitions: 1`), so no number carries an interval and "
                     "no ranking below can be told apart from noise.")
    few = ok[ok["few_ops"].fillna(False).astype(bool)] if "few_ops" in ok else ok.iloc[0:0]
    if len(few):
        floor = cfg.get("min_ops_per_worker", 30)
        parts.append(f"{len(few)} cell(s) held fewer than {floor} operations per worker in a window, so their rate "
                     f"and efficiency are mostly quantization, not scaling: "
                     + "; ".join(f"{r.algorithm} {r.operation} {r.variant} {int(r.workers)}w "
                                 f"({fmt_num(r.ops_per_worker)} per worker)" for r in few.itertuples())
                     + ". Longer windows (`sigpar.duration_sec`, `sigpar.analysis_window_sec`) measure them properly.")
    if len(bad):
        parts.append("::: {.callout-warning title=\"Cells not measured\"}\n"
                     f"{len(bad)} of {len(cells)} cells did not pass: "
                     + "; ".join(f"{r.algorithm} {r.operation} {r.variant} {r.workers}w ({r.status}: {r.failure})"
                                 for r in bad.itertuples())
                     + ". They are left out of every figure and number below.\n:::")
    else:
        parts.append(f"All {len(cells)} cells passed their correctness checks.")
    steady = ok["window_rate_cv"].dropna() if "window_rate_cv" in ok else pd.Series(dtype=float)
    if len(steady):
        interval = machine["config"]["telemetry"]["sample_interval_sec"]
        parts.append(
            f"Inside the windows, throughput measured over {fmt_num(interval)} s intervals varied by a median of "
            f"{fmt_pct(steady.median())} (coefficient of variation, over the cells of every mode with enough "
            f"operations per interval to tell: {len(steady)}; at most {fmt_pct(steady.max())}): the figures below "
            f"carry that much noise from the machine itself.")
    return join(*parts)


def throughput(ok: pd.DataFrame, machine: dict) -> str:
    profile, wmax = machine["profile"], int(ok["workers"].max())
    one = ok[ok["workers"] == 1]
    sentences = []
    for op in ("sign", "verify"):
        verb = "signs" if op == "sign" else "verifies"
        clauses = []
        for variant in _variants(one, MAIN_VARIANTS):
            f = one[(one["operation"] == op) & (one["variant"] == variant)]
            if f.empty:
                continue
            ranked = f.sort_values("ops_per_sec", ascending=False)
            hi, lo = ranked.iloc[0], ranked.iloc[-1]
            # with intervals (repetitions), a lead inside the noise is not a ranking; a single
            # repetition has none, and the setup paragraph says that no ranking is sure then
            if len(ranked) > 1 and _overlap(ranked.iloc[0], ranked.iloc[1]):
                second = ranked.iloc[1]
                clause = (f"in {variant} mode {hi['algorithm']} ({_rate(hi)} ops/s) and {second['algorithm']} "
                          f"({_rate(second)} ops/s) are not distinguishable on this machine as the fastest (their "
                          f"95% intervals overlap)")
                if len(ranked) > 2:
                    clause += f"; {lo['algorithm']} {verb} slowest ({_rate(lo)} ops/s)"
            else:
                clause = (f"in {variant} mode {hi['algorithm']} {verb} fastest ({_rate(hi)} ops/s) and "
                          f"{lo['algorithm']} slowest ({_rate(lo)} ops/s), a factor of "
                          f"{fmt_num(hi['ops_per_sec'] / lo['ops_per_sec'])}")
            clauses.append(clause)
        if clauses:
            sentences.append(f"With one worker ({op}), " + "; ".join(clauses) + ".")
    return join(
        figure(profile, "sigpar_scaling", "Throughput against worker count, per family; one dash pattern per "
               "mode and backend, the native runner long-dashed (log scale).", "fig-sigpar-scaling"),
        " ".join(sentences) + f" @fig-sigpar-scaling shows every algorithm from 1 to {wmax} workers in every "
                              f"mode and backend; the native runner is the upper bound of the Python modes.",
    )


def efficiency(ok: pd.DataFrame, machine: dict) -> str:
    profile, wmax = machine["profile"], int(ok["workers"].max())
    top = ok[ok["workers"] == wmax].dropna(subset=["scaling_efficiency"])
    fig = figure(profile, "sigpar_efficiency", "Scaling efficiency ops(N) / (N × ops(1)) per algorithm, "
                 "worker count, operation and mode.", "fig-sigpar-efficiency")
    if wmax == 1 or top.empty:
        return join(fig, "The sweep had a single worker count, so efficiency is 1 by definition "
                         "(@fig-sigpar-efficiency).")
    parts = []
    for variant in _variants(top):
        f = top[top["variant"] == variant]["scaling_efficiency"]
        parts.append(f"{variant} cells reached a median efficiency of {fmt_pct(f.median())} "
                     f"(from {fmt_pct(f.min())} to {fmt_pct(f.max())})")
    label = lambda r: f"{r.algorithm} {r.operation} ({r.variant})"  # noqa: E731
    lows = [r for r in top.itertuples() if r.scaling_efficiency < 0.7]
    sure = [label(r) for r in lows if _upper(r) is not None and _upper(r) < 0.7]
    unsure = [label(r) for r in lows if _upper(r) is None or _upper(r) >= 0.7]
    below = (f"Below 70%, with the whole interval: {', '.join(sure)}." if sure else "")
    if unsure:
        below += (f" Below 70% by the median but not distinguishable from 70% on this machine (interval reaches it, "
                  f"or one repetition): {', '.join(unsure)}.")
    if not lows:
        below = "No cell of any mode fell below 70%."
    above = [r for r in top.itertuples() if r.scaling_efficiency > 1]
    if above:
        told = [label(r) for r in above if r.scaling_efficiency_ci_low is not None and not pd.isna(r.scaling_efficiency_ci_low)
                and r.scaling_efficiency_ci_low > 1]
        untold = [label(r) for r in above if label(r) not in told]
        if untold:
            below += (f" Above 100% but not distinguishable from 100% on this machine: {', '.join(untold)} "
                      f"(noise, not super-linear scaling).")
        if told:
            below += f" Above 100% with the whole interval: {', '.join(told)}."
    return join(fig, f"At {wmax} workers, " + "; ".join(parts) + f" (@fig-sigpar-efficiency; the small numbers are "
                     f"each cell's 95% interval). {below.strip()}")


def _upper(row) -> float | None:
    hi = getattr(row, "scaling_efficiency_ci_high", None)
    return None if hi is None or pd.isna(hi) else float(hi)


def latency(ok: pd.DataFrame, machine: dict) -> str:
    profile, wmax = machine["profile"], int(ok["workers"].max())
    fig = figure(profile, "sigpar_latency", "p99 latency against worker count (log scale).", "fig-sigpar-latency")
    lat = ok.pivot_table(index=["algorithm", "operation", "variant"], columns="workers", values="p99_latency_ms")
    if wmax == 1 or 1 not in lat.columns or wmax not in lat.columns:
        return join(fig, "@fig-sigpar-latency shows p99 latency.")
    change = (lat[wmax] / lat[1] - 1).dropna()
    if change.empty:
        return join(fig, "@fig-sigpar-latency shows p99 latency; no cell had enough samples at both ends of the "
                         "sweep to compare.")
    by_variant = [f"{fmt_pct(change.xs(v, level='variant').median())} in {v} mode"
                  for v in _variants(ok) if v in change.index.get_level_values("variant")]
    worst = change.idxmax()
    return join(fig, f"From 1 to {wmax} workers the p99 latency changed by a median of {', '.join(by_variant)}; "
                     f"the largest rise was {worst[0]} {worst[1]} in {worst[2]} mode ({fmt_pct(change.max())}) "
                     f"(@fig-sigpar-latency).")


def gil(ok: pd.DataFrame, machine: dict) -> str:
    profile, wmax = machine["profile"], int(ok["workers"].max())
    fig = figure(profile, "sigpar_gil_ratio", "Threading throughput divided by multiprocess throughput at the "
                 "same worker count; 1.0 means threads lose nothing.", "fig-sigpar-gil")
    ratio = thread_process_ratio(ok)
    if ratio.empty:
        return join(fig, "This run measured only one Python mode, so there is no ratio to draw (@fig-sigpar-gil).")
    at_max = ratio[ratio["workers"] == wmax]
    clauses = []
    for backend, f in at_max.groupby("backend"):
        worst = f.loc[f["ratio"].idxmin()]
        clauses.append(f"with {backend} a median {fmt_num(f['ratio'].median())} (lowest {worst['algorithm']} "
                       f"{worst['operation']}, {fmt_ci(worst['ratio'], worst['ratio_ci_low'], worst['ratio_ci_high'])})")
    same = [f"{r.algorithm} {r.operation} ({r.backend})" for r in at_max.itertuples()
            if pd.notna(r.ratio_ci_low) and pd.notna(r.ratio_ci_high)
            and not stats.distinguishable((r.ratio_ci_low, r.ratio_ci_high), (1.0, 1.0))]
    if same:
        clauses[-1] += (f"; threads and processes are not distinguishable on this machine (the ratio's 95% interval "
                        f"contains 1) for {', '.join(same)}")
    lib = machine["libraries"]
    return join(fig, f"At {wmax} workers, threading cells reached, of the multiprocess throughput of the same "
                     f"backend, " + "; ".join(clauses) + f" (@fig-sigpar-gil). pyca/cryptography "
                     f"{lib.get('cryptography_version')} releases the GIL inside OpenSSL, and cffi around every C "
                     f"call.")


def backends(ok: pd.DataFrame, machine: dict) -> str:
    profile, wmax = machine["profile"], int(ok["workers"].max())
    fig = figure(profile, "sigpar_python_cost", "Each Python backend's throughput with one thread against the "
                 "native runner's on the same algorithm and operation.", "fig-sigpar-python-cost")
    cost = python_cost_table(ok)
    if cost.empty:
        return join(fig, "This run did not measure both the native runner and a Python mode, so there is no "
                         "comparison (@fig-sigpar-python-cost).")
    clauses = []
    for backend, f in cost.groupby("backend", sort=False):
        us = f["python_cost_us"].median()
        clauses.append(f"{backend} reached a median {fmt_pct(f['fraction_of_native'].median())} of the native rate "
                       f"({fmt_num(abs(us))} µs per operation {'more' if us >= 0 else 'less'} than the native "
                       f"runner's, over {f['algorithm'].nunique()} algorithm(s))")
    text = ("With one worker in threading mode, " + "; ".join(clauses)
            + " (@fig-sigpar-python-cost). The time above the native runner is what the Python side of a call "
              "costs: the interpreter, the binding and, for pyca, its own OpenSSL against the system one.")
    top = ok[(ok["workers"] == wmax) & (ok["mode"] == "threading")].dropna(subset=["scaling_efficiency"])
    if wmax > 1 and top["backend"].nunique() > 1:
        eff = top.groupby("backend")["scaling_efficiency"].median()
        text += (f" At {wmax} threads the median scaling efficiency was "
                 + ", ".join(f"{fmt_pct(v)} with {b}" for b, v in eff.items()) + ".")
    return join(fig, text)


def energy(ok: pd.DataFrame, machine: dict) -> str:
    profile = machine["profile"]
    fig = figure(profile, "sigpar_energy", "Energy per operation where the machine measures it.", "fig-sigpar-energy")
    measured = ok.dropna(subset=["energy_per_op_j"])
    if measured.empty:
        reason = machine["capabilities"].get("energy", {}).get("reason") or "no energy source"
        return join(fig, f"This machine offers no energy counter ({reason}), so energy per operation is null in "
                         f"the data (@fig-sigpar-energy says so too).")
    ranges = []
    for variant in _variants(measured):
        f = measured[(measured["workers"] == 1) & (measured["variant"] == variant)]
        if len(f):
            ranges.append(f"from {fmt_num(f['energy_per_op_j'].min() * 1e3)} mJ to "
                          f"{fmt_num(f['energy_per_op_j'].max() * 1e3)} mJ in {variant} mode")
    return join(fig, f"Energy came from {measured['energy_source'].iloc[0]}; with one worker it ranged "
                     + " and ".join(ranges) + " per operation (@fig-sigpar-energy).")


BACKEND_ORDER = {"pyca": 0, "liboqs-python": 0, "openssl-cffi": 1, "native": 2}


def _summary_table(ok: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm, operation and backend: throughput with 1 and the most workers and
    efficiency, in threads (the native runner's threads for backend native) and in
    processes."""
    if ok.empty:
        return pd.DataFrame({"algorithm": [], "operation": []})
    wmax = int(ok["workers"].max())
    rows = []
    for (algorithm, op, backend), f in ok.groupby(["algorithm", "operation", "backend"], sort=False):
        row = {"algorithm": algorithm, "bits": int(f["security_bits"].iloc[0]), "operation": op, "backend": backend}
        for short, modes in (("thr", ("threading", "native-threads")), ("mp", ("multiprocess",))):
            g = f[f["mode"].isin(modes)].set_index("workers")
            row[f"{short} 1w ops/s"] = _cell_text(g, 1, "ops_per_sec", fmt_num)
            row[f"{short} {wmax}w ops/s"] = _cell_text(g, wmax, "ops_per_sec", fmt_num)
            row[f"{short} eff."] = _cell_text(g, wmax, "scaling_efficiency", fmt_pct)
        rows.append(row)
    order = {a: i for i, a in enumerate(CATALOG)}
    frame = pd.DataFrame(rows)
    keys = {"algorithm": lambda s: s.map(order), "backend": lambda s: s.map(BACKEND_ORDER)}
    return frame.sort_values(["algorithm", "operation", "backend"],
                             key=lambda s: keys.get(s.name, lambda x: x)(s)).reset_index(drop=True)


def _cell_text(g: pd.DataFrame, workers: int, column: str, fmt) -> str:
    """A cell's median with its 95% interval, for the summary table."""
    if workers not in g.index:
        return ""
    r = g.loc[workers]
    lo, hi = r.get(f"{column}_ci_low"), r.get(f"{column}_ci_high")
    return fmt_ci(r[column], lo, hi, fmt)


def summary_table(cells: pd.DataFrame) -> pd.DataFrame:
    """The paper's summary table (also written for the Snakemake report)."""
    return _summary_table(cells[cells["status"] == "ok"])


def summary(ok: pd.DataFrame, machine: dict) -> str:
    wmax = int(ok["workers"].max())
    return join(
        f"@tbl-sigpar-summary lists, per algorithm, operation and backend, the throughput with one and with {wmax} "
        f"workers in each mode and the efficiency at {wmax} workers (thr = threads: Python threads, or the native "
        f"runner's threads for backend native; mp = multiprocess; bits = classical-equivalent security strength); in "
        f"parentheses, the 95% bootstrap interval over the cell's repetitions.",
        md_table(_summary_table(ok), f"Throughput with 1 and {wmax} workers and efficiency at {wmax}, per backend and "
                                     f"mode.", "tbl-sigpar-summary"),
    )


def report_tables(tables: dict[str, pd.DataFrame]) -> dict:
    cells = tables["sigpar_cells"]
    wmax = int(cells["workers"].max())
    return {"sigpar_summary": (summary_table(cells), f"sigpar: throughput with 1 and {wmax} workers and "
                                                     f"efficiency at {wmax}, per backend and mode (thr = threads, "
                                                     f"mp = multiprocess)")}


def fragments(tables: dict[str, pd.DataFrame], machine: dict) -> dict[str, str]:
    cells = tables["sigpar_cells"]
    writers = {"throughput": throughput, "efficiency": efficiency, "latency": latency, "gil": gil,
               "backends": backends, "energy": energy, "summary": summary}
    return {"setup": setup(cells, machine), **findings(cells[cells["status"] == "ok"], machine, writers)}
