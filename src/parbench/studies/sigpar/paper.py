"""The generated parts of the sigpar section (`paper/sections/sigpar.qmd` includes
them from `paper/_generated/sigpar/`): this run's parameters, its figures, and every
sentence that states a finding, computed here from the study's tables. The fixed prose
(what is measured and why) is in the section file, where an author edits it.

Every sentence names the mode it speaks of: a number from threading cells and one from
multiprocess cells are never mixed up in one claim.
"""

from __future__ import annotations

import pandas as pd

from parbench.paper.format import figure, findings, fmt_num, fmt_pct, join, md_table
from parbench.studies.sigpar.algorithms import CATALOG

# The processed tables the text reads.
TABLES = ["sigpar_cells"]
# The generated parts, in the order the section includes them.
FRAGMENTS = ["setup", "throughput", "efficiency", "latency", "gil", "energy", "summary"]
# The paper's tables, also written as HTML and CSV for Snakemake's report.
REPORT_TABLES = ["sigpar_summary"]
MODES = ("threading", "multiprocess")


def _modes(frame: pd.DataFrame) -> list[str]:
    present = set(frame["mode"])
    return [m for m in MODES if m in present]


def setup(cells: pd.DataFrame, machine: dict) -> str:
    cfg = machine["config"]["sigpar"]
    ok, bad = cells[cells["status"] == "ok"], cells[cells["status"] != "ok"]
    families = ", ".join(dict.fromkeys(cells["family"]))
    parts = [
        f"This run measured {cells['algorithm'].nunique()} algorithms ({families}), "
        f"{' and '.join(cells['operation'].unique())}, in {' and '.join(_modes(cells))} mode, with "
        f"{', '.join(str(w) for w in sorted(cells['workers'].unique()))} workers: {len(cells)} cells, each with "
        f"{fmt_num(cfg['warmup_sec'])} s of warm-up, {fmt_num(cfg['duration_sec'])} s measured and a "
        f"{fmt_num(cfg['analysis_window_sec'])} s analysis window."
    ]
    if len(bad):
        parts.append("::: {.callout-warning title=\"Cells not measured\"}\n"
                     f"{len(bad)} of {len(cells)} cells did not pass: "
                     + "; ".join(f"{r.algorithm} {r.operation} {r.mode} {r.workers}w ({r.status}: {r.failure})"
                                 for r in bad.itertuples())
                     + ". They are left out of every figure and number below.\n:::")
    else:
        parts.append(f"All {len(cells)} cells passed their correctness checks.")
    steady = ok["window_rate_cv"].dropna() if "window_rate_cv" in ok else pd.Series(dtype=float)
    if len(steady):
        interval = machine["config"]["telemetry"]["sample_interval_sec"]
        parts.append(
            f"Inside the windows, throughput measured over {fmt_num(interval)} s intervals varied by a median of "
            f"{fmt_pct(steady.median())} (coefficient of variation, over the cells of both modes with enough "
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
        for mode in _modes(one):
            f = one[(one["operation"] == op) & (one["mode"] == mode)]
            if f.empty:
                continue
            hi, lo = f.loc[f["ops_per_sec"].idxmax()], f.loc[f["ops_per_sec"].idxmin()]
            clauses.append(f"in {mode} mode {hi['algorithm']} {verb} fastest ({fmt_num(hi['ops_per_sec'])} ops/s) "
                           f"and {lo['algorithm']} slowest ({fmt_num(lo['ops_per_sec'])} ops/s), a factor of "
                           f"{fmt_num(hi['ops_per_sec'] / lo['ops_per_sec'])}")
        if clauses:
            sentences.append(f"With one worker ({op}), " + "; ".join(clauses) + ".")
    return join(
        figure(profile, "sigpar_scaling", "Throughput against worker count, per family; threading solid, "
               "multiprocess dashed (log scale).", "fig-sigpar-scaling"),
        " ".join(sentences) + f" @fig-sigpar-scaling shows every algorithm from 1 to {wmax} workers in both modes.",
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
    for mode in ("multiprocess", "threading"):
        f = top[top["mode"] == mode]["scaling_efficiency"]
        if len(f):
            parts.append(f"{mode} cells reached a median efficiency of {fmt_pct(f.median())} "
                         f"(from {fmt_pct(f.min())} to {fmt_pct(f.max())})")
    low = top[top["scaling_efficiency"] < 0.7]
    below = (f"Below 70%: {', '.join(sorted(set(low['algorithm'] + ' ' + low['operation'] + ' (' + low['mode'] + ')')))}."
             if len(low) else "No cell of either mode fell below 70%.")
    return join(fig, f"At {wmax} workers, " + " and ".join(parts) + f" (@fig-sigpar-efficiency). {below}")


def latency(ok: pd.DataFrame, machine: dict) -> str:
    profile, wmax = machine["profile"], int(ok["workers"].max())
    fig = figure(profile, "sigpar_latency", "p99 latency against worker count (log scale).", "fig-sigpar-latency")
    lat = ok.pivot_table(index=["algorithm", "operation", "mode"], columns="workers", values="p99_latency_ms")
    if wmax == 1 or 1 not in lat.columns or wmax not in lat.columns:
        return join(fig, "@fig-sigpar-latency shows p99 latency.")
    change = (lat[wmax] / lat[1] - 1).dropna()
    if change.empty:
        return join(fig, "@fig-sigpar-latency shows p99 latency; no cell had enough samples at both ends of the "
                         "sweep to compare.")
    by_mode = [f"{fmt_pct(change.xs(mode, level='mode').median())} in {mode} mode"
               for mode in _modes(ok) if mode in change.index.get_level_values("mode")]
    worst = change.idxmax()
    return join(fig, f"From 1 to {wmax} workers the p99 latency changed by a median of {' and '.join(by_mode)}; "
                     f"the largest rise was {worst[0]} {worst[1]} in {worst[2]} mode ({fmt_pct(change.max())}) "
                     f"(@fig-sigpar-latency).")


def gil(ok: pd.DataFrame, machine: dict) -> str:
    profile, wmax = machine["profile"], int(ok["workers"].max())
    fig = figure(profile, "sigpar_gil_ratio", "Threading throughput divided by multiprocess throughput at the "
                 "same worker count; 1.0 means threads lose nothing.", "fig-sigpar-gil")
    wide = ok.pivot_table(index=["algorithm", "operation", "workers"], columns="mode", values="ops_per_sec")
    if not {"threading", "multiprocess"} <= set(wide.columns):
        return join(fig, "This run measured only one mode, so there is no ratio to draw (@fig-sigpar-gil).")
    ratio = (wide["threading"] / wide["multiprocess"]).dropna()
    at_max = ratio[ratio.index.get_level_values("workers") == wmax]
    lib = machine["libraries"]
    text = f"At {wmax} workers, threading cells reached a median {fmt_num(at_max.median())} of the multiprocess throughput"
    if len(at_max):
        worst = at_max.idxmin()
        text += f", the lowest being {worst[0]} {worst[1]} ({fmt_num(at_max.min())})"
    return join(fig, text + f" (@fig-sigpar-gil). The classical algorithms ran on pyca/cryptography "
                            f"{lib.get('cryptography_version')}, which releases the GIL inside OpenSSL.")


def energy(ok: pd.DataFrame, machine: dict) -> str:
    profile = machine["profile"]
    fig = figure(profile, "sigpar_energy", "Energy per operation where the machine measures it.", "fig-sigpar-energy")
    measured = ok.dropna(subset=["energy_per_op_j"])
    if measured.empty:
        reason = machine["capabilities"].get("energy", {}).get("reason") or "no energy source"
        return join(fig, f"This machine offers no energy counter ({reason}), so energy per operation is null in "
                         f"the data (@fig-sigpar-energy says so too).")
    ranges = []
    for mode in _modes(measured):
        f = measured[(measured["workers"] == 1) & (measured["mode"] == mode)]
        if len(f):
            ranges.append(f"from {fmt_num(f['energy_per_op_j'].min() * 1e3)} mJ to "
                          f"{fmt_num(f['energy_per_op_j'].max() * 1e3)} mJ in {mode} mode")
    return join(fig, f"Energy came from {measured['energy_source'].iloc[0]}; with one worker it ranged "
                     + " and ".join(ranges) + " per operation (@fig-sigpar-energy).")


def _summary_table(ok: pd.DataFrame) -> pd.DataFrame:
    if ok.empty:
        return pd.DataFrame({"algorithm": [], "operation": []})
    wmax = int(ok["workers"].max())
    rows = []
    for (algorithm, op), f in ok.groupby(["algorithm", "operation"], sort=False):
        row = {"algorithm": algorithm, "bits": int(f["security_bits"].iloc[0]), "operation": op}
        for mode in MODES:
            g = f[f["mode"] == mode].set_index("workers")
            short = "thr" if mode == "threading" else "mp"
            row[f"{short} 1w ops/s"] = fmt_num(g["ops_per_sec"].get(1))
            row[f"{short} {wmax}w ops/s"] = fmt_num(g["ops_per_sec"].get(wmax))
            row[f"{short} eff."] = fmt_pct(g["scaling_efficiency"].get(wmax))
        rows.append(row)
    order = {a: i for i, a in enumerate(CATALOG)}
    frame = pd.DataFrame(rows)
    return frame.sort_values(["algorithm", "operation"], key=lambda s: s.map(order) if s.name == "algorithm" else s)


def summary_table(cells: pd.DataFrame) -> pd.DataFrame:
    """The paper's summary table (also written for the Snakemake report)."""
    return _summary_table(cells[cells["status"] == "ok"])


def summary(ok: pd.DataFrame, machine: dict) -> str:
    wmax = int(ok["workers"].max())
    return join(
        f"@tbl-sigpar-summary lists, per algorithm and operation, the throughput with one and with {wmax} workers "
        f"in each mode and the efficiency at {wmax} workers (thr = threading, mp = multiprocess, bits = "
        f"classical-equivalent security strength).",
        md_table(_summary_table(ok), f"Throughput with 1 and {wmax} workers and efficiency at {wmax}, per mode.",
                 "tbl-sigpar-summary"),
    )


def report_tables(tables: dict[str, pd.DataFrame]) -> dict:
    cells = tables["sigpar_cells"]
    wmax = int(cells["workers"].max())
    return {"sigpar_summary": (summary_table(cells), f"sigpar: throughput with 1 and {wmax} workers and "
                                                     f"efficiency at {wmax}, per mode (thr = threading, "
                                                     f"mp = multiprocess)")}


def fragments(tables: dict[str, pd.DataFrame], machine: dict) -> dict[str, str]:
    cells = tables["sigpar_cells"]
    writers = {"throughput": throughput, "efficiency": efficiency, "latency": latency, "gil": gil,
               "energy": energy, "summary": summary}
    return {"setup": setup(cells, machine), **findings(cells[cells["status"] == "ok"], machine, writers)}
