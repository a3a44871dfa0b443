"""The generated parts of the kem section (`paper/sections/kem.qmd` includes them from
`paper/_generated/kem/`): this run's parameters and counter, its figures, the seed's
table, and every sentence that states a finding, computed here from the study's tables.
The fixed prose (what is measured, how a cell works, what is checked) is in the section
file.

Every sentence names the implementation and parameter set it speaks of, and every
count names its unit: TSC ticks and nanoseconds are never called core cycles.
"""

from __future__ import annotations

import pandas as pd

from parbench.paper.format import figure, fmt_ci, fmt_interval, fmt_num, fmt_pct, join, md_table
from parbench.stats import distinguishable, ratio_interval
from parbench.studies.kem import published
from parbench.studies.kem.aggregate import OPERATION_ORDER, SET_ORDER, seed_name

TABLES = ["kem_counters", "kem_cycles", "kem_percentiles", "kem_throughput"]
FRAGMENTS = ["setup", "cycles", "seed_table", "distribution", "throughput", "published"]
REPORT_TABLES = ["kem_seed_table", "kem_published_table"]

UNIT_WORDS = {"cycles": "core cycles", "tsc_ticks": "TSC ticks", "ns": "ns"}
SIMD = ("libcrux-avx2", "libcrux-neon")


def _ok(cycles: pd.DataFrame) -> pd.DataFrame:
    return cycles[(cycles["status"] == "ok") & cycles["median_ticks"].notna()]


def _unit(frame: pd.DataFrame) -> str:
    units = frame["counter_unit"].dropna().unique().tolist()
    return UNIT_WORDS.get(units[0], units[0]) if len(units) == 1 else "counter ticks"


def _median(ok: pd.DataFrame, imp: str, pset: str, op: str):
    row = ok[(ok["implementation"] == imp) & (ok["parameter_set"] == pset) & (ok["operation"] == op)]
    return row["median_ticks"].iloc[0] if len(row) else None


def _interval(ok: pd.DataFrame, imp: str, pset: str, op: str) -> tuple:
    """The 95% bootstrap interval of a cell's median (over its calls): (low, high), or
    (None, None) where the table has none."""
    row = ok[(ok["implementation"] == imp) & (ok["parameter_set"] == pset) & (ok["operation"] == op)]
    if not len(row) or "median_ci_low_ticks" not in row or pd.isna(row["median_ci_low_ticks"].iloc[0]):
        return None, None
    return float(row["median_ci_low_ticks"].iloc[0]), float(row["median_ci_high_ticks"].iloc[0])


def _ratio(ok: pd.DataFrame, num: tuple[str, str, str], den: tuple[str, str, str], where: str) -> str:
    """median(num) / median(den) as `2.1x (where; 2.0–2.2x)`: the bounds from both medians'
    intervals, and a flag where the two cells cannot be told apart."""
    ia, ib = _interval(ok, *num), _interval(ok, *den)
    bounds = fmt_interval(*ratio_interval(ia, ib), fmt=_two_places)
    notes = [where] + ([f"{bounds}x"] if bounds else []) + (
        [] if distinguishable(ia, ib) else ["not distinguishable on this machine"])
    return f"{_two_places(_median(ok, *num) / _median(ok, *den))}x ({'; '.join(notes)})"


def _two_places(ratio: float) -> str:
    return f"{ratio:.2f}"


def seed_implementation(ok: pd.DataFrame) -> str | None:
    """The implementation the seed's benchmark runs by default: the SIMD backend of the
    machine (AVX2 or NEON), else the portable code, among those measured."""
    measured = set(ok["implementation"])
    return next((i for i in (*SIMD, "libcrux-portable") if i in measured), None)


# --- setup ------------------------------------------------------------------------------------

def counter_sentence(counters: pd.DataFrame) -> str:
    selected = counters[counters["selected"]]
    if selected.empty:
        return "No cycle counter was selected."
    c = selected.iloc[0]
    text = f"Every count below comes from the **{c['counter']}** counter: {c['describe']}"
    if c["counter"] == "TSC" and pd.notna(c["tsc_hz"]):
        invariant = " (invariant TSC)" if c["tsc_invariant"] is True else ""
        text += f", measured at {c['tsc_hz'] / 1e9:.3f} GHz against CLOCK_MONOTONIC{invariant}"
    text += (" (forced with CYCLE_COUNTER)." if pd.notna(c["requested"]) and c["requested"]
             else " (the best this machine offered).")
    missing = counters[~counters["available"]].sort_values("preference")
    if len(missing):
        text += " Not available here: " + "; ".join(f"{r.counter}: {r.reason}" for r in missing.itertuples()) + "."
    if c["unit"] != "cycles":
        text += (f" No core-cycle counter was available, so the counts are {UNIT_WORDS[c['unit']]}, not core "
                 f"cycles: they compare implementations measured on this machine with each other, and convert to "
                 f"time, but not to the cycles a machine with a PMU reports.")
    return text


def setup(cycles: pd.DataFrame, throughput: pd.DataFrame, counters: pd.DataFrame, machine: dict) -> str:
    # the cells' own parameters (the machine record holds the config of the run that
    # probed the machine, which may be older)
    iterations = ", ".join(f"{int(n):,}" for n in sorted(cycles["iterations"].dropna().unique()))
    sweep = ""
    if len(throughput):
        windows = throughput[["warmup_sec", "duration_sec"]].dropna().drop_duplicates()
        sweep = " (" + "; ".join(f"{fmt_num(w.warmup_sec)} s of warm-up, {fmt_num(w.duration_sec)} s counted"
                                 for w in windows.itertuples()) + ")" if len(windows) else ""
    parts = [
        f"This run measured {', '.join(dict.fromkeys(cycles['implementation']))} on "
        f"{', '.join(s for s in SET_ORDER if s in set(cycles['parameter_set']))}: {len(cycles)} cycles cells of "
        f"{iterations} timed calls each, and {len(throughput)} thread-sweep points{sweep}, each measured "
        f"{int(throughput['repetitions'].max()) if len(throughput) else 0} time(s), the repetitions interleaved "
        f"across the sweep; the sweep's numbers are medians over the repetitions with their 95% "
        f"percentile-bootstrap intervals.",
        counter_sentence(counters),
    ]
    both = pd.concat([cycles.assign(kind="cycles"), throughput.assign(kind="throughput")], ignore_index=True)
    failed = both[both["status"] == "failed"]
    if len(failed):
        parts.append("::: {.callout-warning title=\"Cells that failed their checks\"}\n"
                     + "; ".join(f"{r.kind} {r.implementation} {r.parameter_set} {r.operation}"
                                 + (f" t{int(r.threads)}" if r.kind == "throughput" else "") + f": {r.failure}"
                                 for r in failed.itertuples())
                     + ". They are left out of every figure and number below.\n:::")
    else:
        checked = int(cycles["pairs_checked"].fillna(0).sum() + throughput["pairs_checked"].fillna(0).sum())
        parts.append(f"Every cell passed its checks: {checked:,} shared secrets compared, every one matching, and "
                     f"every tampered ciphertext rejected implicitly (a different secret).")
    unavailable = both[both["status"] == "unavailable"].drop_duplicates("implementation")
    if len(unavailable):
        parts.append("::: {.callout-note title=\"Implementations this machine cannot run\"}\n"
                     + " ".join(f"{r.implementation}: {r.failure}." for r in unavailable.itertuples()) + "\n:::")
    return join(*parts)


# --- cycles -----------------------------------------------------------------------------------

def cycles_part(cycles: pd.DataFrame, machine: dict) -> str:
    profile = machine["profile"]
    ok = _ok(cycles)
    unit = _unit(ok) if len(ok) else "counter ticks"
    fig = figure(profile, "kem_cycles", f"Median {unit} per call of each operation, by parameter set and "
                 "implementation, with its 95% bootstrap interval over the cell's calls (black); grey whiskers "
                 "from the 10th to the 90th percentile.", "fig-kem-cycles")
    if ok.empty:
        return join(fig, "No cycles cell passed its checks.")
    sentences = []
    simd = next((i for i in SIMD if i in set(ok["implementation"])), None)
    ml = ok[ok["parameter_set"] != "X25519"]
    if simd and "libcrux-portable" in set(ok["implementation"]):
        ratios = []
        for pset in [s for s in SET_ORDER if s in set(ml["parameter_set"])]:
            for op in [o for o in OPERATION_ORDER if o in set(ml["operation"])]:
                fast, slow = _median(ok, simd, pset, op), _median(ok, "libcrux-portable", pset, op)
                if fast and slow:
                    ratios.append((pset, op, slow / fast))
        if ratios:
            lo, hi = min(ratios, key=lambda r: r[2]), max(ratios, key=lambda r: r[2])

            def vs_portable(ratio: tuple) -> str:
                pset, op, _ = ratio
                return _ratio(ok, ("libcrux-portable", pset, op), (simd, pset, op), f"{pset} {op}")

            sentences.append(
                f"The {simd.removeprefix('libcrux-').upper()} code of libcrux-ml-kem was {vs_portable(lo)} to "
                f"{vs_portable(hi)} faster than its portable code, in {unit} (the bounds come from both medians' "
                f"95% intervals).")
    if simd and "liboqs" in set(ok["implementation"]):
        parts = []
        for pset in [s for s in SET_ORDER if s in set(ml["parameter_set"])]:
            parts += [_ratio(ok, ("liboqs", pset, op), (simd, pset, op), f"{pset} {op}")
                      for op in ("encaps", "decaps") if _median(ok, "liboqs", pset, op) and _median(ok, simd, pset, op)]
        if parts:
            sentences.append(f"liboqs needed, in {unit} per call relative to {simd}: " + ", ".join(parts)
                             + " (below 1: liboqs faster).")
    for pset in [s for s in SET_ORDER if s in set(ml["parameter_set"])]:
        best = ml[(ml["parameter_set"] == pset) & (ml["operation"] == "encaps")].sort_values("median_ticks")
        if len(best):
            r = best.iloc[0]
            mine = _interval(ok, r["implementation"], pset, "encaps")
            ties = [o for o in best["implementation"].iloc[1:]
                    if not distinguishable(mine, _interval(ok, o, pset, "encaps"))]
            sentences.append(f"The fastest {pset} encapsulation was {r['implementation']}'s, "
                             f"{fmt_ci(r['median_ticks'], *mine)} {unit}"
                             + (f" ({fmt_num(r['median_ns'] / 1000)} µs)" if pd.notna(r["median_ns"]) else "")
                             + (f"; not distinguishable on this machine from {', '.join(ties)}'s" if ties else "")
                             + ".")
    keygen, derive = _median(ok, "x25519", "X25519", "keypair"), _median(ok, "x25519", "X25519", "derive")
    if keygen and derive:
        text = (f"X25519 through OpenSSL took {fmt_num(keygen)} {unit} per key generation and {fmt_num(derive)} per "
                f"derivation, so a Diffie-Hellman KEM over it would encapsulate for about {fmt_num(keygen + derive)} "
                f"and decapsulate for about {fmt_num(derive)}")
        if simd and (enc := _median(ok, simd, "ML-KEM-768", "encaps")) and (dec := _median(ok, simd, "ML-KEM-768", "decaps")):
            text += f", against {fmt_num(enc)} and {fmt_num(dec)} for {simd} ML-KEM-768"
        sentences.append(text + ".")
    return join(fig, " ".join(sentences) + " (@fig-kem-cycles)")


# --- the seed's table -------------------------------------------------------------------------

def seed_rows(cycles: pd.DataFrame, percentiles: pd.DataFrame, imp: str, pset: str) -> list[tuple[str, int, dict]]:
    ok = _ok(cycles)
    rows = []
    for op in [o for o in OPERATION_ORDER if o in set(ok["operation"])]:
        med = _median(ok, imp, pset, op)
        pc = percentiles[(percentiles["implementation"] == imp) & (percentiles["parameter_set"] == pset)
                         & (percentiles["operation"] == op)]
        if med is not None and len(pc):
            rows.append((op, int(med), {int(p): int(v) for p, v in zip(pc["percentile"], pc["value_ticks"])}))
    return rows


def seed_choice(cycles: pd.DataFrame) -> tuple[str | None, str | None]:
    ok = _ok(cycles)
    imp = seed_implementation(ok)
    if imp is None:
        return None, None
    sets = [s for s in SET_ORDER if s in set(ok.loc[ok["implementation"] == imp, "parameter_set"])]
    return imp, sets[0] if sets else None


def _whole(value: float) -> str:
    return f"{round(value):,}"


def seed_table_frame(cycles: pd.DataFrame, percentiles: pd.DataFrame) -> pd.DataFrame:
    imp, pset = seed_choice(cycles)
    if imp is None or pset is None:
        return pd.DataFrame({"operation": []})
    rows = seed_rows(cycles, percentiles, imp, pset)
    ok = _ok(cycles)
    return pd.DataFrame([{"operation": op, "median": f"{med:,}",
                          "95% CI": fmt_interval(*_interval(ok, imp, pset, op), fmt=_whole) or "–",
                          **{f"p{p}": f"{v:,}" for p, v in pcts.items()}}
                         for op, med, pcts in rows])


def seed_table(cycles: pd.DataFrame, percentiles: pd.DataFrame, machine: dict) -> str:
    from parbench.studies.kem.seed_format import block_from_statistics

    imp, pset = seed_choice(cycles)
    if imp is None or pset is None:
        return "No libcrux-ml-kem cell passed its checks, so the seed's table cannot be shown.\n"
    ok = _ok(cycles)
    row = ok[ok["implementation"] == imp].iloc[0]
    unit = UNIT_WORDS.get(row["counter_unit"], row["counter_unit"])
    block = block_from_statistics(pset, seed_rows(cycles, percentiles, imp, pset))
    return join(
        f"The seed's output for {imp} (the seed's `{seed_name(imp)}`, its default on this machine) on {pset}, "
        f"{int(row['iterations']):,} iterations, exactly as its benchmark prints it; the numbers are "
        f"**{unit} of the {row['counter']} counter**, although the seed's format calls them cycles:",
        # one line per row, as the seed prints it: no wrapping, a smaller font
        "```{.text style=\"font-size: 0.72em; white-space: pre; overflow-x: auto\"}\n" + block + "```",
        f"@tbl-kem-seed holds the same numbers. The seed's blocks for every implementation and parameter set are "
        f"in `data/processed/{machine['profile']}/kem_seed_results.txt`.",
        md_table(seed_table_frame(cycles, percentiles),
                 f"{pset} Benchmark Results of {imp}: median (with its 95% bootstrap interval over the "
                 f"calls) and percentiles per call, in {unit} ({row['counter']}).", "tbl-kem-seed"),
    )


# --- distribution -----------------------------------------------------------------------------

def _above(ratio: float) -> str:
    """How far a percentile lies above the median, from their ratio."""
    return f"{fmt_num(ratio)}x the median" if ratio >= 2 else f"{fmt_pct(ratio - 1)} above the median"


def distribution(cycles: pd.DataFrame, percentiles: pd.DataFrame, machine: dict) -> str:
    profile = machine["profile"]
    fig = figure(profile, "kem_distribution", "The seed's percentiles of the per-call counts, per parameter set and "
                 "operation.", "fig-kem-distribution")
    pc = percentiles.dropna(subset=["value_ticks"])
    if pc.empty:
        return join(fig)
    wide = pc.pivot_table(index=["implementation", "parameter_set", "operation"], columns="percentile",
                          values="value_ticks")
    if 50 not in wide.columns or 99 not in wide.columns:
        return join(fig)
    tail = (wide[99] / wide[50]).sort_values()
    spread = (wide[90] / wide[10]) if 10 in wide.columns and 90 in wide.columns else None
    calm, wild = tail.index[0], tail.index[-1]
    text = (f"The 99th percentile ranged from {_above(tail.iloc[0])} ({' '.join(calm)}) to "
            f"{_above(tail.iloc[-1])} ({' '.join(wild)})")
    if spread is not None:
        text += (f"; between the 10th and the 90th percentile, the counts of a cell differed by a median of "
                 f"{fmt_pct(spread.median() - 1)} over all cells")
    return join(fig, text + ": the tails are the machine's interruptions as much as the code (@fig-kem-distribution).")


# --- throughput -------------------------------------------------------------------------------

def throughput_part(throughput: pd.DataFrame, machine: dict) -> str:
    profile = machine["profile"]
    fig = figure(profile, "kem_throughput", "Encapsulations and decapsulations per second on 1, 2, ... threads, each "
                 "thread with its own key pair: the median of the repetitions with its 95% bootstrap interval; "
                 "dashed: linear scaling from one thread.", "fig-kem-throughput")
    ok = throughput[(throughput["status"] == "ok") & throughput["ops_per_sec"].notna()]
    if ok.empty:
        return join(fig, "No thread-sweep cell passed its checks.")
    tmax = int(ok["threads"].max())
    top = ok[ok["threads"] == tmax]
    parts = [f"{r.implementation} {r.parameter_set} {r.operation} "
             f"{fmt_ci(r.ops_per_sec, r.ops_per_sec_ci_low, r.ops_per_sec_ci_high)} ops/s (efficiency "
             f"{fmt_ci(r.scaling_efficiency, r.scaling_efficiency_ci_low, r.scaling_efficiency_ci_high)})"
             for r in top.itertuples()]
    reps = int(ok["repetitions"].max())
    text = (f"At {tmax} threads (median of {reps} repetition(s), 95% bootstrap interval in parentheses): "
            + "; ".join(parts) + ".")
    for (pset, op), f in top.groupby(["parameter_set", "operation"], sort=False):
        f = f.sort_values("ops_per_sec", ascending=False)
        if len(f) < 2:
            continue
        a, b = f.iloc[0], f.iloc[1]
        if distinguishable((a["ops_per_sec_ci_low"], a["ops_per_sec_ci_high"]),
                           (b["ops_per_sec_ci_low"], b["ops_per_sec_ci_high"])):
            text += f" On {pset} {op}, {a['implementation']} was the fastest, ahead of {b['implementation']}."
        else:
            text += (f" On {pset} {op}, {a['implementation']} and {b['implementation']} are not distinguishable on "
                     f"this machine (their intervals overlap, or there is a single repetition).")
    if tmax > 1:
        eff = top["scaling_efficiency"].dropna()
        if len(eff):
            text += (f" Efficiency is ops(N) / (N x ops(1)) against the same cell on one thread; it ranged from "
                     f"{fmt_num(eff.min())} to {fmt_num(eff.max())}.")
        if not top["pinned"].all():
            text += " Some threads could not be pinned to their own core."
    return join(fig, text + " (@fig-kem-throughput)")


# --- published figures ------------------------------------------------------------------------

def _measured_us(ok: pd.DataFrame, imp: str, op: str) -> str:
    values = []
    for pset in ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"):
        row = ok[(ok["implementation"] == imp) & (ok["parameter_set"] == pset) & (ok["operation"] == op)]
        if len(row) and pd.notna(row["median_ns"].iloc[0]):
            values.append(f"{pset.removeprefix('ML-KEM-')}: {fmt_num(row['median_ns'].iloc[0] / 1000)}")
    return ", ".join(values) + " µs" if values else "n/a (no time conversion for this counter)"


def published_table(cycles: pd.DataFrame) -> pd.DataFrame:
    ok = _ok(cycles)
    imp = seed_implementation(ok)
    rows = []
    for p in published.FIGURES:
        if p.unit == "cycles":
            med = _median(ok, imp, p.parameter_set, p.operation) if imp else None
            here = f"{fmt_num(med)} {_unit(ok)} ({imp})" if med is not None else "n/a"
            value = f"{p.value:,.0f} cycles"
        else:
            here = f"{_measured_us(ok, imp, p.operation)} ({imp})" if imp else "n/a"
            value = f"{p.value:g} µs"
        rows.append({"source": p.source, "machine": p.machine, "parameter set": p.parameter_set or "not stated",
                     "operation": p.operation, "published": value, "measured here": here})
    return pd.DataFrame(rows)


def published_part(cycles: pd.DataFrame, machine: dict) -> str:
    ok = _ok(cycles)
    unit = _unit(ok) if len(ok) else "counter ticks"
    return join(
        "@tbl-kem-published sets this run beside figures published with the library, cited as published and not "
        "measured here. They come from other machines (one not even stated), other counters, and in one case an "
        f"unstated parameter set; this run's numbers are {unit}, so only the order of magnitude and the ratios "
        "between operations are comparable.",
        md_table(published_table(cycles), "Published libcrux-ml-kem figures (cited, not measured) beside this run's "
                 "measurements.", "tbl-kem-published"),
    )


def report_tables(tables: dict[str, pd.DataFrame]) -> dict:
    return {
        "kem_seed_table": (seed_table_frame(tables["kem_cycles"], tables["kem_percentiles"]),
                           "kem: the seed's Benchmark Results table (median and percentiles per call)"),
        "kem_published_table": (published_table(tables["kem_cycles"]),
                                "kem: published libcrux-ml-kem figures (cited) beside this run's measurements"),
    }


def fragments(tables: dict[str, pd.DataFrame], machine: dict) -> dict[str, str]:
    cycles, percentiles = tables["kem_cycles"], tables["kem_percentiles"]
    throughput, counters = tables["kem_throughput"], tables["kem_counters"]
    return {
        "setup": setup(cycles, throughput, counters, machine),
        "cycles": cycles_part(cycles, machine),
        "seed_table": seed_table(cycles, percentiles, machine),
        "distribution": distribution(cycles, percentiles, machine),
        "throughput": throughput_part(throughput, machine),
        "published": published_part(cycles, machine),
    }
