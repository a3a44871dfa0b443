"""The generated parts of the sigpar section (`paper/sections/sigpar.qmd` includes
them from `paper/_generated/sigpar/`): this run's parameters, its figures, and every
sentence that states a finding, computed here from the study's tables. The fixed prose
(what is measured and why) is in the section file, where an author edits it.

Every sentence names the mode (and backend) it speaks of: a number from threading cells
and one from multiprocess cells, or from pyca and from openssl-cffi, are never mixed up
in one claim. A variant is a mode, or a mode with an extra backend
(`threading-openssl-cffi`); `native-threads` is the native runner, no Python in the loop.
"""

from __future__ import annotations

import pandas as pd

from parbench.paper.format import figure, findings, fmt_num, fmt_pct, join, md_table
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
            hi, lo = f.loc[f["ops_per_sec"].idxmax()], f.loc[f["ops_per_sec"].idxmin()]
            clauses.append(f"in {variant} mode {hi['algorithm']} {verb} fastest ({fmt_num(hi['ops_per_sec'])} ops/s) "
                           f"and {lo['algorithm']} slowest ({fmt_num(lo['ops_per_sec'])} ops/s), a factor of "
                           f"{fmt_num(hi['ops_per_sec'] / lo['ops_per_sec'])}")
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
    low = top[top["scaling_efficiency"] < 0.7]
    below = (f"Below 70%: {', '.join(sorted(set(low['algorithm'] + ' ' + low['operation'] + ' (' + low['variant'] + ')')))}."
             if len(low) else "No cell of any mode fell below 70%.")
    return join(fig, f"At {wmax} workers, " + "; ".join(parts) + f" (@fig-sigpar-efficiency). {below}")


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
                       f"{worst['operation']}, {fmt_num(worst['ratio'])})")
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
            row[f"{short} 1w ops/s"] = fmt_num(g["ops_per_sec"].get(1)) if len(g) else ""
            row[f"{short} {wmax}w ops/s"] = fmt_num(g["ops_per_sec"].get(wmax)) if len(g) else ""
            row[f"{short} eff."] = fmt_pct(g["scaling_efficiency"].get(wmax)) if len(g) else ""
        rows.append(row)
    order = {a: i for i, a in enumerate(CATALOG)}
    frame = pd.DataFrame(rows)
    keys = {"algorithm": lambda s: s.map(order), "backend": lambda s: s.map(BACKEND_ORDER)}
    return frame.sort_values(["algorithm", "operation", "backend"],
                             key=lambda s: keys.get(s.name, lambda x: x)(s)).reset_index(drop=True)


def summary_table(cells: pd.DataFrame) -> pd.DataFrame:
    """The paper's summary table (also written for the Snakemake report)."""
    return _summary_table(cells[cells["status"] == "ok"])


def summary(ok: pd.DataFrame, machine: dict) -> str:
    wmax = int(ok["workers"].max())
    return join(
        f"@tbl-sigpar-summary lists, per algorithm, operation and backend, the throughput with one and with {wmax} "
        f"workers in each mode and the efficiency at {wmax} workers (thr = threads: Python threads, or the native "
        f"runner's threads for backend native; mp = multiprocess; bits = classical-equivalent security strength).",
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
