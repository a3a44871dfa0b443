"""Turn sigpar cell records into tidy tables and the seed's processed files.

Tables (Parquet, one row per observation; the schema is documented in docs/data.md):

- reps:    one row per repetition of a cell (algorithm x operation x mode x workers x
           backend x rep), with its throughput, latency percentiles, telemetry, status,
           operations per worker (flagged `few_ops` below `sigpar.min_ops_per_worker`)
           and provenance;
- cells:   one row per cell: the median over its repetitions of each measure, the 95%
           percentile-bootstrap interval of the throughput and of the scaling efficiency
           (resampling the repetitions of both cells it compares), the status of its
           worst repetition;
- workers: one row per worker of a repetition;
- latency: one row per retained latency sample.

Seed files: `parallelism_<variant>.json` (nested by algorithm, keyed by worker count),
`parallelism_summary.csv` (the seed's columns plus `mode` and `backend`), and one
`parallelism_summary_<variant>.csv` per variant with exactly the seed's columns. A
variant is a mode (`threading`, `multiprocess`, `native-threads`), or a mode with an
extra backend (`threading-openssl-cffi`): the folder its cells' raw files are in.

"""

from __future__ import annotations


import pandas as pd

from parbench import stats
from parbench.disturbance import LOAD_COLUMNS, load_columns, load_table
from parbench.hosts import host_labels
from parbench.progress import format_duration
from parbench.provenance import SLURM_KEYS
from parbench.studies.sigpar.plan import MODES, variant_of
from parbench.words import counted

KEYS = ["algorithm", "operation", "mode", "workers", "backend"]
# Scaling efficiency compares a cell with the one-worker cell of the same group.
GROUP = ["algorithm", "operation", "mode", "backend"]
PROVENANCE_COLUMNS = [
    "timestamp_utc", "config_hash", "git_commit", "git_dirty", "hostname", "cpu_model", "cpu_vendor", "arch",
    "logical_cores", "physical_cores", "performance_cores", "efficiency_cores", "smt_active", "cpufreq_governor",
    "turbo_enabled", "virtualized", "memory_total_bytes", "os_name", "os_release", "kernel", "python_version",
    "python_implementation", "cryptography_version", "openssl_version", "liboqs_version", "liboqs_python_version",
    "psutil_version", *SLURM_KEYS,
]
RESULT_COLUMNS = [
    "analysis_ops", "ops_total", "ops_per_sec", "p50_latency_ms", "p95_latency_ms", "p99_latency_ms",
    "mean_latency_ms", "latency_samples", "avg_cpu_utilization", "avg_rss_bytes", "system_cpu_percent",
    "cpu_temperature_c", "energy_joules", "avg_power_w", "energy_per_op_j", "energy_source",
    "window_rate_cv",
]
SEED_SUMMARY_COLUMNS = ["algorithm", "operation", "worker_count", "ops_per_sec", "scaling_efficiency",
                        "p99_latency_ms"]
# The fewest operations per worker a window must hold for its rate to count (the config's
# sigpar.min_ops_per_worker; this is its default).
MIN_OPS_PER_WORKER = 30
# A repetition's status, worst first: a cell takes its worst repetition's.
STATUS_ORDER = ["failed", "skipped", "unavailable", "ok"]
CONFIDENCE = 0.95
# The measures whose median over the repetitions carries a bootstrap interval
# (<column>_ci_low, <column>_ci_high).
INTERVAL_COLUMNS = ["ops_per_sec", "p99_latency_ms"]


def cell_row(record: dict) -> dict:
    cell, algo, params, result = record["cell"], record["algorithm"], record.get("parameters", {}), record["result"]
    prov = record.get("provenance", {})
    backend = record.get("backend", {})
    row = {
        "study": "sigpar", "profile": record["profile"],
        **{k: cell[k] for k in KEYS}, "variant": variant_of(cell["mode"], cell["backend"]),
        "family": algo["family"], "kind": algo["kind"], "library": algo["library"],
        "library_version": algo.get("library_version"), "backend_version": backend.get("version"),
        "security_bits": algo["security_bits"], "nist_level": algo["nist_level"],
        "status": record["status"], "failure": record["failure"],
        **{c: result.get(c) for c in RESULT_COLUMNS},
        "warmup_sec": params.get("warmup_sec"), "duration_sec": params.get("duration_sec"),
        "analysis_window_sec": params.get("analysis_window_sec"),
        "message_bytes": params.get("message_bytes"), "max_latency_samples": params.get("max_latency_samples"),
        "sample_interval_sec": params.get("sample_interval_sec"),
        "started_unix": record["started_unix"], "elapsed_sec": record["elapsed_sec"],
        **{c: prov.get(c) for c in PROVENANCE_COLUMNS},
    }
    row["rep"] = int(cell.get("rep", 0))
    row.update(load_columns(record))
    if record["status"] != "ok":  # a failed, skipped or unavailable cell contributes no measurement
        for c in RESULT_COLUMNS:
            row[c] = None
    ops = row["analysis_ops"]
    row["ops_per_worker"] = None if ops is None else ops / cell["workers"]
    return row


def reps_table(records: list[dict], min_ops_per_worker: int = MIN_OPS_PER_WORKER) -> pd.DataFrame:
    """One row per repetition, with `run_position` (the order the repetitions of these
    records ran in, by start time) and `few_ops` (fewer than `min_ops_per_worker`
    operations per worker in the window)."""
    df = pd.DataFrame([cell_row(r) for r in records])
    df["run_position"] = df["started_unix"].rank(method="first").astype(int) - 1
    df["few_ops"] = df["ops_per_worker"].map(
        lambda v: None if v is None or pd.isna(v) else bool(v < min_ops_per_worker))
    return _sorted(df, [*KEYS, "rep"])


def _sorted(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return df.sort_values(keys, key=lambda s: s.map(_order_key(s.name))).reset_index(drop=True)


def _summarize(group: pd.DataFrame) -> dict:
    """One cell from its repetitions: medians of the measures over the repetitions that
    passed, the throughput's bootstrap interval, the worst status."""
    worst = min(group["status"], key=STATUS_ORDER.index)
    first_bad = group[group["status"] == worst].iloc[0]
    ok = group[group["status"] == "ok"]
    row = group.iloc[0].to_dict()
    failure = None if worst == "ok" else first_bad["failure"]
    if failure is not None and len(group) > 1:
        failure = f"repetition {int(first_bad['rep'])}: {failure}"
    row.update({"status": worst, "failure": failure,
                "repetitions": len(group), "repetitions_ok": len(ok),
                "started_unix": group["started_unix"].min(), "elapsed_sec": group["elapsed_sec"].sum()})
    for c in RESULT_COLUMNS:
        values = ok[c].dropna() if c in ok else pd.Series(dtype=float)
        if worst != "ok" or values.empty:
            row[c] = None
        elif c == "energy_source":
            row[c] = values.iloc[0]
        else:
            row[c] = float(values.median())
    for c in INTERVAL_COLUMNS:
        values = ok[c].dropna().tolist() if worst == "ok" else []
        lo, hi = stats.bootstrap_median_ci(values, CONFIDENCE, seed=stats.bootstrap_seed(c, *(row[k] for k in KEYS)))
        row[f"{c}_ci_low"], row[f"{c}_ci_high"] = lo, hi
    # every repetition's rate, for intervals of ratios between cells (figures, paper)
    row["ops_per_sec_reps"] = [float(v) for v in ok["ops_per_sec"].dropna()] if worst == "ok" else []
    per_worker = ok["ops_per_worker"].dropna()
    row["ops_per_worker"] = float(per_worker.min()) if worst == "ok" and len(per_worker) else None
    row["few_ops"] = bool(ok["few_ops"].fillna(False).any()) if worst == "ok" else None
    row.pop("rep", None)
    row.pop("run_position", None)
    # a cell is disturbed when one of its repetitions stayed disturbed (figures mark it)
    for c in LOAD_COLUMNS:
        row.pop(c, None)
    row["disturbed_reps"] = int(ok["disturbed"].fillna(False).astype(bool).sum()) if "disturbed" in ok else 0
    loads = ok["load_other_cores"].dropna() if "load_other_cores" in ok else pd.Series(dtype=float)
    row["load_other_cores_max"] = float(loads.max()) if len(loads) else None
    return row


def add_efficiency(cells: pd.DataFrame, reps: pd.DataFrame | None = None) -> pd.DataFrame:
    """scaling_efficiency = median ops(N) / (N x median ops(1)) within each (algorithm,
    operation, mode, backend), with its 95% bootstrap interval from the repetitions of
    both cells (`reps`; none with a single repetition)."""
    cells = cells.copy()
    # a cell is compared with the 1-worker cell of its own machine (cells of one profile
    # can run on several SLURM nodes)
    cells["host_key"] = host_labels(cells)
    ok = cells["status"] == "ok"
    base = cells[ok & (cells["workers"] == 1)].set_index([*GROUP, "host_key"])["ops_per_sec"]
    cells["scaling_efficiency"] = [
        stats.scaling_efficiency(r.ops_per_sec if r.status == "ok" else None, r.workers,
                                 base.get((r.algorithm, r.operation, r.mode, r.backend, r.host_key)))
        for r in cells.itertuples()
    ]
    lows, highs = [], []
    rates = {}
    if reps is not None:
        good = reps[reps["status"] == "ok"].assign(host_key=lambda f: host_labels(f))
        rates = {key: f["ops_per_sec"].dropna().tolist() for key, f in good.groupby([*KEYS, "host_key"])}
    for r in cells.itertuples():
        lo = hi = None
        if r.status == "ok" and r.workers > 1 and r.scaling_efficiency is not None:
            at_n = rates.get((r.algorithm, r.operation, r.mode, r.workers, r.backend, r.host_key), [])
            at_1 = rates.get((r.algorithm, r.operation, r.mode, 1, r.backend, r.host_key), [])
            lo, hi = stats.bootstrap_ratio_ci(at_n, at_1, scale=r.workers, confidence=CONFIDENCE,
                                              seed=stats.bootstrap_seed(r.algorithm, r.operation, r.mode, r.workers, r.backend))
        lows.append(lo)
        highs.append(hi)
    cells["scaling_efficiency_ci_low"], cells["scaling_efficiency_ci_high"] = lows, highs
    return cells.drop(columns="host_key")



def cells_table(records: list[dict], min_ops_per_worker: int = MIN_OPS_PER_WORKER) -> pd.DataFrame:
    """One row per cell, summarizing its repetitions (see the module's docstring)."""
    reps = reps_table(records, min_ops_per_worker)
    # one cell per machine it was measured on
    groups = reps.assign(host_key=host_labels(reps)).groupby([*KEYS, "host_key"], sort=False)
    cells = pd.DataFrame([_summarize(f.drop(columns="host_key")) for _, f in groups])
    return _sorted(add_efficiency(cells, reps), KEYS)


def _order_key(column: str):
    if column == "operation":
        return {"sign": 0, "verify": 1}.get
    if column == "mode":
        return {m: i for i, m in enumerate(MODES)}.get
    return lambda v: v


def worker_rows(record: dict) -> list[dict]:
    window = record.get("parameters", {}).get("analysis_window_sec")
    rows = []
    for w in record["workers"]:
        c = w.get("correctness", {})
        rows.append({
            "study": "sigpar", "profile": record["profile"], **{k: record["cell"][k] for k in KEYS},
            "rep": record["cell"].get("rep", 0), "status": record["status"], "worker_id": w["worker_id"],
            "pinned_cpus": ",".join(map(str, w.get("pinned_cpus", []))),
            "ops_total": w.get("ops_total"), "analysis_ops": w.get("analysis_ops"),
            "ops_per_sec": w["analysis_ops"] / window if "analysis_ops" in w and window else None,
            "cpu_utilization": w.get("cpu_utilization"), "cpu_time_window_sec": w.get("cpu_time_window_sec"),
            "avg_rss_bytes": w.get("avg_rss_bytes"), "window_latency_count": w.get("window_latency_count"),
            "correctness_checked": c.get("checked"), "correctness_failed": c.get("failed"),
            "tamper_rejected": c.get("tamper_rejected"), "error": w.get("error"),
        })
    return rows


def latency_rows(record: dict) -> list[dict]:
    if record["status"] != "ok":
        return []
    keys = {k: record["cell"][k] for k in KEYS}
    keys["rep"] = record["cell"].get("rep", 0)
    return [{"study": "sigpar", "profile": record["profile"], **keys, "worker_id": w["worker_id"],
             "latency_ms": x} for w in record["workers"] for x in w.get("latencies_ms", [])]


WORKER_COLUMNS = ["study", "profile", *KEYS, "rep", "status", "worker_id", "pinned_cpus", "ops_total", "analysis_ops",
                  "ops_per_sec", "cpu_utilization", "cpu_time_window_sec", "avg_rss_bytes", "window_latency_count",
                  "correctness_checked", "correctness_failed", "tamper_rejected", "error"]
LATENCY_COLUMNS = ["study", "profile", *KEYS, "rep", "worker_id", "latency_ms"]


def study_tables(records: list[dict], min_ops_per_worker: int = MIN_OPS_PER_WORKER) -> dict[str, pd.DataFrame]:
    return {
        "reps": reps_table(records, min_ops_per_worker),
        "cells": cells_table(records, min_ops_per_worker),
        "workers": pd.DataFrame([r for rec in records for r in worker_rows(rec)], columns=WORKER_COLUMNS),
        "latency": pd.DataFrame([r for rec in records for r in latency_rows(rec)], columns=LATENCY_COLUMNS),
        "load": load_table("sigpar", records, load_label, load_group),
    }


def load_label(record: dict) -> str:
    c = record["cell"]
    return f"{c['algorithm']} {c['operation']} {variant_of(c['mode'], c.get('backend', ''))} {c['workers']}w"


def load_group(record: dict) -> str:
    """What the run order must spread over the run: each mode and backend."""
    c = record["cell"]
    return f"{c['mode']}/{c.get('backend', '')}"


# --- the seed's processed files ---------------------------------------------------------------

def _by_workers(frame: pd.DataFrame, column: str) -> dict:
    return {str(int(r.workers)): (None if pd.isna(getattr(r, column)) else float(getattr(r, column)))
            for r in frame.itertuples()}


def seed_json(cells: pd.DataFrame, variant: str, metadata: dict) -> dict:
    """The seed's `parallelism_<mode>.json` layout (plus security columns and all
    percentiles), for one variant (a mode, or a mode with an extra backend)."""
    sub = cells[cells["variant"] == variant]
    out = {"metadata": dict(metadata, mode=sub["mode"].iloc[0] if len(sub) else variant, variant=variant,
                            backends=sorted(sub["backend"].unique().tolist())), "algorithms": {}}
    for algorithm, frame in sub.groupby("algorithm", sort=False):
        entry = {"security_bits": int(frame["security_bits"].iloc[0]),
                 "nist_level": None if pd.isna(frame["nist_level"].iloc[0]) else int(frame["nist_level"].iloc[0]),
                 "status": {f"{r.operation}_t{int(r.workers)}": r.status for r in frame.itertuples()}}
        for op, f in frame.groupby("operation", sort=False):
            f = f.sort_values("workers")
            entry[f"{op}_ops_per_sec"] = _by_workers(f, "ops_per_sec")
            entry[f"{op}_scaling_efficiency"] = _by_workers(f, "scaling_efficiency")
            entry[f"{op}_latency_ms"] = _by_workers(f, "p99_latency_ms")
            for q in (50, 95, 99):
                entry[f"{op}_p{q}_latency_ms"] = _by_workers(f, f"p{q}_latency_ms")
            entry[f"{op}_energy_per_op"] = _by_workers(f, "energy_per_op_j")
        out["algorithms"][algorithm] = entry
    return out


def seed_summary(cells: pd.DataFrame, variant: str | None = None) -> pd.DataFrame:
    """`parallelism_summary.csv`: the seed's columns, plus `mode` and `backend` when
    covering every variant."""
    sub = cells if variant is None else cells[cells["variant"] == variant]
    extra = ["mode", "backend"] if variant is None else []
    return sub.rename(columns={"workers": "worker_count"})[SEED_SUMMARY_COLUMNS + extra].reset_index(drop=True)


def metadata(cells: pd.DataFrame) -> dict:
    first = cells.iloc[0]
    return {
        "timestamp": pd.Timestamp.now().isoformat(timespec="seconds"),
        "profile": first["profile"],
        "platform": {"cpu": first["cpu_model"], "logical_cores": _plain(first["logical_cores"]),
                     "os": first["os_release"], "kernel": first["kernel"], "hostname": first["hostname"]},
        "thread_counts": sorted(int(w) for w in cells["workers"].unique()),
        "duration_sec": _plain(cells["duration_sec"].dropna().iloc[0]) if cells["duration_sec"].notna().any() else None,
        "analysis_window_sec": (_plain(cells["analysis_window_sec"].dropna().iloc[0])
                                if cells["analysis_window_sec"].notna().any() else None),
    }


def _plain(value):
    return None if pd.isna(value) else value.item() if hasattr(value, "item") else value


# --- the seed's console block --------------------------------------------------------------

def _pct(x) -> str:
    return "N/A" if x is None or pd.isna(x) else f"{100 * x:.1f}%"


def algorithm_block(cells: pd.DataFrame, index: int, total: int) -> str:
    """The seed's per-algorithm console block, for one algorithm's cells (every variant)."""
    first = cells.iloc[0]
    level = f"Level {int(first['security_bits'])}"
    if not pd.isna(first["nist_level"]) and first["kind"] == "pqc":
        level += f", NIST category {int(first['nist_level'])}"
    lines = [f"[{index}/{total}] {first['algorithm']} ({level})"]
    for variant, by_variant in cells.groupby("variant", sort=False):
        lines.append(f"  {variant}")
        for op, f in by_variant.groupby("operation", sort=False):
            lines.append(f"    {op.capitalize()}:")
            for r in f.sort_values("workers").itertuples():
                if r.status != "ok":
                    lines.append(f"    {int(r.workers):>4}t → {r.status.upper()}: {r.failure}")
                    continue
                p99 = "N/A" if pd.isna(r.p99_latency_ms) else f"{r.p99_latency_ms:.2f} ms"
                lines.append(f"    {int(r.workers):>4}t → {r.ops_per_sec:>12.1f} ops/sec | p99: {p99}")
    failed = cells[cells["status"] != "ok"]
    span = (cells["started_unix"] + cells["elapsed_sec"]).max() - cells["started_unix"].min()
    mark = "✗" if len(failed) else "✓"
    lines.append(f"  {mark} Completed in {format_duration(span)}"
                 + (f" with {counted(len(failed), 'cell')} not measured" if len(failed) else ""))
    for variant, by_variant in cells.groupby("variant", sort=False):
        for op, f in by_variant.groupby("operation", sort=False):
            f = f[f["status"] == "ok"].sort_values("workers")
            if f.empty:
                continue
            lo, hi = f.iloc[0], f.iloc[-1]
            lines.append(f"    {variant:<25} {op.capitalize():<6}: {lo['ops_per_sec']:>10.1f} → {hi['ops_per_sec']:>10.1f} "
                         f"ops/sec (efficiency: {_pct(hi['scaling_efficiency'])})")
    ok = cells[cells["status"] == "ok"]
    cpu = ok["system_cpu_percent"].dropna()
    temp = ok["cpu_temperature_c"].dropna()
    energy = ok["energy_per_op_j"].dropna()
    lines.append("    Avg CPU (system): " + (f"{cpu.mean():.1f}%" if len(cpu) else "N/A")
                 + " | Avg Temp: " + (f"{temp.mean():.1f} °C" if len(temp) else "N/A")
                 + " | Energy/op: " + (f"{energy.mean() * 1e3:.2f} mJ" if len(energy) else "N/A"))
    return "\n".join(lines)
