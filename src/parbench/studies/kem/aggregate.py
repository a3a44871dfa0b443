"""Turn kem cell records into tidy tables and the seed's output blocks.

Tables (Parquet; schema in docs/data.md):
- counters:    one row per cycle counter of the HAL: available or why not, and which one
               the cells used;
- cycles:      one row per cycles cell (implementation, parameter set, operation), its
               median with the 95% percentile-bootstrap interval of the median over the
               cell's timed calls (`median_ci_low/high_*`);
- percentiles: one row per cell and percentile of the seed's table;
- samples:     one row per timed call;
- throughput_reps: one row per repetition of a thread-sweep point (`rep`);
- throughput:  one row per thread-sweep point over its repetitions: the median
               operations per second with its 95% percentile-bootstrap interval
               (`_ci_low/_ci_high`), speedup and scaling efficiency against one thread
               with the bootstrap interval of the ratio (both points' repetitions
               resampled);
- threads:     one row per thread of a thread-sweep cell (with `rep`);
- load:        one row per measured record (a cycles cell, or a repetition of a
               thread-sweep point): when it started, how busy the machine was outside it
               and whether it stayed disturbed (`parbench.disturbance.load_table`).

A cycles cell is one record: its `disturbed` says whether it stayed disturbed after every
attempt. A thread-sweep point counts its repetitions that did (`disturbed_reps`), and the
figures mark them.

Counter readings are `*_ticks` in the counter's unit (`counter_unit`: cycles, tsc_ticks
or ns); `*_cycles` holds them only where the counter counts core cycles (null
otherwise: TSC ticks are never reported as core cycles); `*_ns` holds them converted to
nanoseconds where the conversion is known (the TIMER's own unit, TSC ticks by the
measured TSC rate; null for core cycles, whose clock is not known).
"""

from __future__ import annotations

import math
import statistics

import pandas as pd

from parbench.disturbance import load_columns, load_table
from parbench.stats import bootstrap_median_ci, bootstrap_ratio_ci
from parbench.studies.kem import plan, seed_format

PROVENANCE = ["cpu_model", "logical_cores", "os_release", "kernel", "hostname", "git_commit", "config_hash",
              "timestamp_utc"]
KEYS = ["implementation", "parameter_set", "level", "operation"]
CHECKS = ["pairs_checked", "secrets_mismatched", "tamper_checked", "tamper_accepted"]
IMPLEMENTATION_ORDER = list(plan.IMPLEMENTATIONS)
OPERATION_ORDER = ["keypair", "encaps", "decaps", "derive"]
SET_ORDER = ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "X25519"]
# The confidence of every interval the study computes (medians over calls or
# repetitions, ratios of medians).
CONFIDENCE = 0.95


def _key(record: dict) -> dict:
    cell = record["cell"]
    return {"study": "kem", "profile": record["profile"], "implementation": cell["implementation"],
            "parameter_set": cell["parameter_set"], "level": plan.level_of(cell["parameter_set"]),
            "operation": cell["operation"]}


def _library(result: dict) -> dict:
    lib = result.get("library") or {}
    return {"library": lib.get("name"), "library_version": lib.get("version")}


def _counter(result: dict) -> dict:
    c = result.get("counter") or {}
    return {"counter": c.get("name"), "counter_unit": c.get("unit"), "counter_forced": c.get("forced"),
            "core_cycles": c.get("core_cycles"), "tsc_hz": c.get("tsc_hz"), "ns_per_tick": c.get("ns_per_tick"),
            "counter_read_overhead_ticks": c.get("read_overhead")}


def _converted(ticks, counter: dict) -> tuple:
    """(cycles, ns) of a reading in counter ticks: each null where it does not apply."""
    if ticks is None or pd.isna(ticks):
        return None, None
    cycles = ticks if counter.get("core_cycles") else None
    ns = ticks * counter["ns_per_tick"] if counter.get("ns_per_tick") else None
    return cycles, ns


def _provenance(record: dict) -> dict:
    return {c: record.get("provenance", {}).get(c) for c in PROVENANCE}


def cycles_row(record: dict) -> dict:
    result = record["result"]
    counter = _counter(result)
    samples = result.get("samples") or []
    ok = record["status"] == "ok" and samples
    med = result.get("median") if ok else None
    cycles, ns = _converted(med, counter)
    # The interval resamples the cell's calls (as Criterion bootstraps its samples): the
    # cycles cells are measured once, their 1,000 calls being the seed's sample.
    ci_low, ci_high = bootstrap_median_ci(samples, CONFIDENCE) if ok else (None, None)
    (low_cycles, low_ns), (high_cycles, high_ns) = _converted(ci_low, counter), _converted(ci_high, counter)
    checks = result.get("checks") or {}
    return {
        **_key(record), **_library(result),
        "nist_level": plan.NIST_LEVEL.get(record["cell"]["parameter_set"]),
        "security_bits": plan.SECURITY_BITS.get(record["cell"]["parameter_set"]),
        "status": record["status"], "failure": record["failure"],
        "iterations": record["parameters"]["iterations"], "samples": len(samples),
        **counter,
        "median_ticks": med,
        "mean_ticks": statistics.fmean(samples) if ok else None,
        "min_ticks": min(samples) if ok else None,
        "max_ticks": max(samples) if ok else None,
        "median_cycles": cycles, "median_ns": ns,
        "median_ci_low_ticks": ci_low, "median_ci_high_ticks": ci_high,
        "median_ci_low_cycles": low_cycles, "median_ci_high_cycles": high_cycles,
        "median_ci_low_ns": low_ns, "median_ci_high_ns": high_ns,
        "half_drift": half_drift(samples) if ok else None,
        "tick_step": tick_step(samples) if ok else None,
        **{c: checks.get(c) for c in CHECKS}, "call_errors": checks.get("errors"),
        # a cycles cell runs once: whether it stayed disturbed after every attempt
        "disturbed": load_columns(record)["disturbed"],
        "elapsed_sec": record["elapsed_sec"], **_provenance(record),
    }


def half_drift(samples: list) -> float | None:
    """How far the median of a cell's first half of calls lies from that of its second
    half, over the cell's median: the drift within its one run, which the bootstrap over
    its calls does not see (None with fewer than 2 calls)."""
    if len(samples) < 2:
        return None
    half = len(samples) // 2
    first, second = statistics.median(samples[:half]), statistics.median(samples[half:])
    return abs(first - second) / statistics.median(samples)


def tick_step(samples: list) -> int | None:
    """The counter's step in this cell: the greatest common divisor of its counts (a
    counter that advances by more than one tick per step, as a virtual TSC may, makes
    every count a multiple of it; 1 for a counter that counts every tick)."""
    counts = [int(s) for s in samples if s]
    return math.gcd(*counts) if counts else None


def percentile_rows(record: dict) -> list[dict]:
    result = record["result"]
    if record["status"] != "ok" or not result.get("percentiles"):
        return []
    counter = _counter(result)
    rows = []
    for p, value in sorted(((int(p), v) for p, v in result["percentiles"].items())):
        cycles, ns = _converted(value, counter)
        rows.append({**_key(record), "counter": counter["counter"], "counter_unit": counter["counter_unit"],
                     "percentile": p, "value_ticks": value, "value_cycles": cycles, "value_ns": ns})
    return rows


def sample_rows(record: dict) -> list[dict]:
    result = record["result"]
    if record["status"] != "ok":
        return []
    counter = _counter(result)
    key = _key(record)
    rows = []
    for i, ticks in enumerate(result.get("samples") or []):
        cycles, ns = _converted(ticks, counter)
        rows.append({**key, "counter": counter["counter"], "counter_unit": counter["counter_unit"],
                     "iteration": i, "ticks": ticks, "cycles": cycles, "ns": ns})
    return rows


def _thread_rate(t: dict) -> float | None:
    return t["ops_in_window"] / t["window_sec"] if t["window_sec"] > 0 else None


def throughput_row(record: dict) -> dict:
    result = record["result"]
    threads = result.get("per_thread") or []
    ok = record["status"] == "ok" and threads
    rates = [r for t in threads if (r := _thread_rate(t)) is not None]
    total = sum(rates) if ok and rates else None
    checks = result.get("checks") or {}
    return {
        **_key(record), **_library(result), "threads": record["cell"]["threads"],
        "rep": int(record["cell"].get("rep", 0)), "status": record["status"], "failure": record["failure"],
        "warmup_sec": result.get("warmup_sec"), "duration_sec": result.get("duration_sec"),
        "clock": result.get("clock"),
        "ops_in_window": sum(t["ops_in_window"] for t in threads) if ok else None,
        "ops_per_sec": total,
        "ops_per_sec_per_thread": total / record["cell"]["threads"] if total is not None else None,
        "min_thread_ops_per_sec": min(rates) if ok and rates else None,
        "max_thread_ops_per_sec": max(rates) if ok and rates else None,
        "pinned": bool(threads) and all(t["cpu"] is not None and not t["pin_error"] for t in threads),
        **{c: checks.get(c) for c in CHECKS}, "call_errors": checks.get("errors"),
        "disturbed": load_columns(record)["disturbed"],
        "elapsed_sec": record["elapsed_sec"], **_provenance(record),
    }


def thread_rows(record: dict) -> list[dict]:
    if record["status"] != "ok":
        return []
    key = {**_key(record), "threads": record["cell"]["threads"], "rep": int(record["cell"].get("rep", 0))}
    return [{**key, "thread": t["thread"], "cpu": t["cpu"], "pin_error": t["pin_error"],
             "ops_in_window": t["ops_in_window"], "ops_total": t["ops_total"], "window_sec": t["window_sec"],
             "ops_per_sec": _thread_rate(t)} for t in record["result"]["per_thread"]]


def _order(frame: pd.DataFrame, extra: list[str]) -> pd.DataFrame:
    if frame.empty:
        return frame
    ranks = {"implementation": IMPLEMENTATION_ORDER, "operation": OPERATION_ORDER, "parameter_set": SET_ORDER}

    def key(col: pd.Series) -> pd.Series:
        if col.name in ranks:
            return col.map({v: i for i, v in enumerate(ranks[col.name])})
        return col

    return frame.sort_values(["implementation", "parameter_set", "operation", *extra], key=key,
                             kind="stable").reset_index(drop=True)


def throughput_summary(reps: pd.DataFrame) -> pd.DataFrame:
    """One row per thread-sweep point over its repetitions. Status: the worst
    repetition's ("failed" over "unavailable" over "ok", with its failure); every
    measure the median of the repetitions that passed, the checks' counts their sum; `ops_per_sec` with its 95%
    percentile-bootstrap interval; speedup ops(N) / ops(1) and efficiency
    ops(N) / (N x ops(1)) from the medians, their intervals from both points'
    repetitions resampled (`bootstrap_ratio_ci`)."""
    point = [*KEYS, "threads"]
    columns = [c for c in THROUGHPUT_COLUMNS if c not in ("rep", "disturbed")] + [
        "repetitions", "disturbed_reps", "ops_per_sec_ci_low", "ops_per_sec_ci_high", "speedup_vs_one_thread",
        "speedup_vs_one_thread_ci_low", "speedup_vs_one_thread_ci_high", "scaling_efficiency",
        "scaling_efficiency_ci_low", "scaling_efficiency_ci_high"]
    if reps.empty:
        return pd.DataFrame(columns=columns)
    rank = {"failed": 0, "unavailable": 1, "ok": 2}
    numeric = ["ops_in_window", "ops_per_sec", "ops_per_sec_per_thread", "min_thread_ops_per_sec",
               "max_thread_ops_per_sec", "elapsed_sec"]
    samples, rows = {}, []
    for key, group in reps.groupby(point, sort=False, dropna=False):
        worst = group.sort_values("status", key=lambda s: s.map(rank).fillna(-1), kind="stable").iloc[0]
        ok = group[group["status"] == "ok"]
        row = {c: worst[c] for c in THROUGHPUT_COLUMNS if c not in ("rep", "disturbed") and c in group}
        for c in numeric:
            values = pd.to_numeric(ok[c], errors="coerce").dropna() if c in ok else pd.Series(dtype=float)
            row[c] = float(values.median()) if len(values) else None
        for c in CHECKS:  # the checks' counts add up over the repetitions
            values = pd.to_numeric(group[c], errors="coerce").dropna()
            row[c] = float(values.sum()) if len(values) else None
        rates = pd.to_numeric(ok["ops_per_sec"], errors="coerce").dropna().tolist()
        samples[tuple(key)] = rates
        row["repetitions"] = len(ok)
        # repetitions that stayed disturbed after every attempt: counted in the median,
        # and marked wherever the point is drawn
        row["disturbed_reps"] = int(ok["disturbed"].fillna(False).astype(bool).sum())
        row["ops_per_sec_ci_low"], row["ops_per_sec_ci_high"] = bootstrap_median_ci(rates, CONFIDENCE)
        row["pinned"] = bool(len(ok)) and bool(ok["pinned"].all())
        rows.append(row)
    out = pd.DataFrame(rows)
    speedup, low, high = [], [], []
    for r in out.itertuples():
        base = samples.get((r.implementation, r.parameter_set, r.level, r.operation, 1), [])
        mine = samples[(r.implementation, r.parameter_set, r.level, r.operation, r.threads)]
        if r.status == "ok" and base and mine:
            speedup.append(statistics.median(mine) / statistics.median(base))
            lo, hi = bootstrap_ratio_ci(mine, base, confidence=CONFIDENCE)
        else:
            speedup.append(None)
            lo, hi = None, None
        low.append(lo)
        high.append(hi)
    out["speedup_vs_one_thread"], out["speedup_vs_one_thread_ci_low"], out["speedup_vs_one_thread_ci_high"] = \
        speedup, low, high
    for suffix in ("", "_ci_low", "_ci_high"):
        out[f"scaling_efficiency{suffix}"] = [s / t if s is not None and not pd.isna(s) else None
                                              for s, t in zip(out[f"speedup_vs_one_thread{suffix}"], out["threads"])]
    return out[columns]


THROUGHPUT_COLUMNS = ["study", "profile", *KEYS, "library", "library_version", "threads", "rep", "status", "failure",
                      "warmup_sec", "duration_sec", "clock", "ops_in_window", "ops_per_sec",
                      "ops_per_sec_per_thread", "min_thread_ops_per_sec", "max_thread_ops_per_sec", "pinned",
                      *CHECKS, "call_errors", "disturbed", "elapsed_sec", *PROVENANCE]


def counters_table(probe: dict) -> pd.DataFrame:
    """The counter probe: one row per counter of the HAL."""
    selected = (probe.get("selected") or {}).get("name")
    rank = {name: i + 1 for i, name in enumerate(probe.get("preference", []))}
    return pd.DataFrame([{"study": "kem", "profile": probe["profile"], "counter": c["name"], "unit": c["unit"],
                          "describe": c["describe"], "available": c["available"], "reason": c["reason"],
                          "preference": rank.get(c["name"]), "selected": c["name"] == selected,
                          "requested": probe.get("requested") or probe.get("parameters", {}).get("requested"),
                          "tsc_hz": (probe.get("selected") or {}).get("tsc_hz"),
                          "tsc_invariant": (probe.get("selected") or {}).get("tsc_invariant"),
                          "arch": probe.get("arch"), "os": probe.get("os"),
                          **_provenance(probe)} for c in probe["counters"]])


def study_tables(cycles_records: list[dict], throughput_records: list[dict], counters: dict) -> dict[str, pd.DataFrame]:
    cycles = _order(pd.DataFrame([cycles_row(r) for r in cycles_records]), [])
    percentiles = _order(pd.DataFrame([row for r in cycles_records for row in percentile_rows(r)],
                                      columns=[*["study", "profile"], *KEYS, "counter", "counter_unit", "percentile",
                                               "value_ticks", "value_cycles", "value_ns"]), ["percentile"])
    samples = _order(pd.DataFrame([row for r in cycles_records for row in sample_rows(r)],
                                  columns=[*["study", "profile"], *KEYS, "counter", "counter_unit", "iteration",
                                           "ticks", "cycles", "ns"]), ["iteration"])
    reps = _order(pd.DataFrame([throughput_row(r) for r in throughput_records], columns=THROUGHPUT_COLUMNS),
                  ["threads", "rep"])
    throughput = _order(throughput_summary(reps), ["threads"])
    threads = _order(pd.DataFrame([row for r in throughput_records for row in thread_rows(r)],
                                  columns=[*["study", "profile"], *KEYS, "threads", "rep", "thread", "cpu", "pin_error",
                                           "ops_in_window", "ops_total", "window_sec", "ops_per_sec"]),
                     ["threads", "rep", "thread"])
    # numeric columns stay numeric when a whole column is null (all cells unavailable)
    for frame in (cycles, percentiles, samples):
        for col in [c for c in frame.columns if c.endswith(("_ticks", "_cycles", "_ns"))
                    or c in ("ticks", "cycles", "ns", "tick_step")]:
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
    load = load_table("kem", [*cycles_records, *throughput_records], load_label, load_group)
    return {"counters": counters_table(counters), "cycles": cycles, "percentiles": percentiles, "samples": samples,
            "throughput": throughput, "throughput_reps": reps, "threads": threads, "load": load}


def load_label(record: dict) -> str:
    """A record's cell by name: `libcrux-avx2 ML-KEM-512 encaps` (a cycles cell),
    `liboqs ML-KEM-768 decaps 2t` (a thread-sweep point; its repetition is the load
    table's `rep`)."""
    c = record["cell"]
    name = f"{c['implementation']} {c['parameter_set']} {c['operation']}"
    return f"{name} {c['threads']}t" if "threads" in c else name


def load_group(record: dict) -> str:
    """What drift must hit alike: each implementation."""
    return record["cell"]["implementation"]


def seed_name(implementation: str) -> str:
    """The seed's name of an implementation (its architecture argument for libcrux)."""
    return implementation.removeprefix("libcrux-") if implementation.startswith("libcrux-") else \
        {"x25519": "OpenSSL X25519"}.get(implementation, implementation)


def seed_results(cycles_records: list[dict]) -> str:
    """The seed's output, implementation by implementation: its two lines, the counter
    line, then one `<set> Benchmark Results` block per parameter set whose operations
    all passed their checks; a set that did not is named with the reason instead."""
    by_imp: dict[str, list[dict]] = {}
    for r in cycles_records:
        by_imp.setdefault(r["cell"]["implementation"], []).append(r)
    parts = []
    for imp in sorted(by_imp, key=IMPLEMENTATION_ORDER.index):
        records = by_imp[imp]
        counter = next((r["result"]["counter"] for r in records if r["result"].get("counter")), None)
        line = seed_format.counter_line(counter) if counter else "Cycle counter: none"
        text = seed_format.preamble(seed_name(imp), records[0]["parameters"]["iterations"], line) + "\n"
        sets: dict[str, list[dict]] = {}
        for r in records:
            sets.setdefault(r["cell"]["parameter_set"], []).append(r)
        for name in sorted(sets, key=SET_ORDER.index):
            recs = sorted(sets[name], key=lambda r: OPERATION_ORDER.index(r["cell"]["operation"]))
            bad = [r for r in recs if r["status"] != "ok"]
            if bad:
                text += "".join(f"{name} {r['cell']['operation']}: {r['status']}: {r['failure']}\n" for r in bad) + "\n"
                continue
            ops = [(r["cell"]["operation"], r["result"]["median"],
                    {int(p): v for p, v in r["result"]["percentiles"].items()}) for r in recs]
            text += seed_format.block_from_statistics(name, ops) + "\n"
        parts.append(text)
    return "\n".join(parts)
