"""Aggregation: tidy tables, efficiency, the seed's JSON and CSV layouts, and that
failed cells never count as measurements."""

import pandas as pd
import pytest

from parbench.studies.sigpar import aggregate


def record(algorithm="RSA-2048", operation="sign", mode="threading", workers=1, ops=100, status="ok",
           latencies=(1.0, 2.0), backend="pyca"):
    window = 2.0
    return {
        "profile": "test", "status": status, "failure": None if status == "ok" else "boom",
        "cell": {"algorithm": algorithm, "operation": operation, "mode": mode, "workers": workers,
                 "backend": backend},
        "backend": {"name": backend, "version": "OpenSSL 3" if backend != "pyca" else "50"},
        "algorithm": {"name": algorithm, "family": "RSA", "kind": "classical", "library": "cryptography",
                      "library_version": "50", "security_bits": 112, "nist_level": None},
        "parameters": {"analysis_window_sec": window, "duration_sec": 3.0, "warmup_sec": 0.5,
                       "message_bytes": 64, "max_latency_samples": 16, "sample_interval_sec": 0.25},
        "result": {"analysis_ops": ops, "ops_per_sec": ops / window, "p99_latency_ms": 9.0,
                   "p50_latency_ms": 1.0, "p95_latency_ms": 5.0, "mean_latency_ms": 2.0,
                   "energy_per_op_j": None, "energy_source": "none"},
        "workers": [{"worker_id": i, "analysis_ops": ops // workers, "ops_total": ops, "cpu_utilization": 0.9,
                     "latencies_ms": list(latencies), "correctness": {"checked": 3, "failed": 0,
                                                                      "tamper_rejected": True}}
                    for i in range(workers)],
        "started_unix": 1000.0 + workers, "elapsed_sec": 1.0,
        "provenance": {"cpu_model": "Test CPU", "hostname": "h", "logical_cores": 2, "config_hash": "abc"},
    }


@pytest.fixture
def records():
    return [record(workers=1, ops=100), record(workers=2, ops=180), record(workers=4, ops=200),
            record(mode="multiprocess", workers=1, ops=100), record(mode="multiprocess", workers=2, ops=200),
            record(mode="multiprocess", workers=4, ops=1, status="failed")]


def test_efficiency_is_relative_to_one_worker_of_the_same_mode(records):
    cells = aggregate.cells_table(records).set_index(["mode", "workers"])
    assert cells.loc[("threading", 1), "scaling_efficiency"] == 1.0
    assert cells.loc[("threading", 2), "scaling_efficiency"] == pytest.approx(0.9)
    assert cells.loc[("threading", 4), "scaling_efficiency"] == pytest.approx(0.5)
    assert cells.loc[("multiprocess", 2), "scaling_efficiency"] == pytest.approx(1.0)


def test_efficiency_is_relative_to_one_worker_of_the_same_backend(records):
    records += [record(backend="openssl-cffi", workers=1, ops=200), record(backend="openssl-cffi", workers=2, ops=360),
                record(mode="native-threads", backend="native", workers=1, ops=400),
                record(mode="native-threads", backend="native", workers=2, ops=800)]
    cells = aggregate.cells_table(records).set_index(["variant", "workers"])
    assert cells.loc[("threading-openssl-cffi", 2), "scaling_efficiency"] == pytest.approx(0.9)
    assert cells.loc[("native-threads", 2), "scaling_efficiency"] == pytest.approx(1.0)
    assert cells.loc[("threading", 2), "scaling_efficiency"] == pytest.approx(0.9)
    assert cells.loc[("threading-openssl-cffi", 1), "backend_version"] == "OpenSSL 3"
    doc = aggregate.seed_json(aggregate.cells_table(records), "threading-openssl-cffi", {})
    assert doc["metadata"]["mode"] == "threading" and doc["metadata"]["backends"] == ["openssl-cffi"]
    assert doc["algorithms"]["RSA-2048"]["sign_ops_per_sec"] == {"1": 100.0, "2": 180.0}


def test_a_failed_cell_contributes_no_measurement(records):
    cells = aggregate.cells_table(records).set_index(["mode", "workers"])
    failed = cells.loc[("multiprocess", 4)]
    assert failed["status"] == "failed" and failed["failure"] == "boom"
    assert pd.isna(failed["ops_per_sec"]) and pd.isna(failed["scaling_efficiency"])
    latency = aggregate.study_tables(records)["latency"]
    at_four = latency[latency["workers"] == 4]
    assert set(at_four["mode"]) == {"threading"}  # none from the failed multiprocess cell
    assert len(at_four) == 4 * 2


def test_tables_have_one_row_per_observation_with_units_in_names(records):
    tables = aggregate.study_tables(records)
    assert len(tables["cells"]) == 6
    assert len(tables["workers"]) == 1 + 2 + 4 + 1 + 2 + 4
    for column in ("ops_per_sec", "p99_latency_ms", "energy_per_op_j", "avg_rss_bytes", "elapsed_sec"):
        assert column in tables["cells"].columns
    assert {"cpu_model", "config_hash", "hostname"} <= set(tables["cells"].columns)


def test_seed_json_layout(records):
    cells = aggregate.cells_table(records)
    doc = aggregate.seed_json(cells, "threading", aggregate.metadata(cells))
    entry = doc["algorithms"]["RSA-2048"]
    assert entry["sign_ops_per_sec"] == {"1": 50.0, "2": 90.0, "4": 100.0}
    assert entry["sign_scaling_efficiency"]["2"] == pytest.approx(0.9)
    assert entry["sign_latency_ms"]["1"] == 9.0  # the seed's latency column is p99
    assert entry["security_bits"] == 112
    assert doc["metadata"]["thread_counts"] == [1, 2, 4] and doc["metadata"]["mode"] == "threading"


def test_seed_summary_columns(records):
    cells = aggregate.cells_table(records)
    assert list(aggregate.seed_summary(cells, "threading").columns) == [
        "algorithm", "operation", "worker_count", "ops_per_sec", "scaling_efficiency", "p99_latency_ms"]
    assert list(aggregate.seed_summary(cells).columns)[-2:] == ["mode", "backend"]


def test_console_block_in_the_seeds_style(records):
    block = aggregate.algorithm_block(aggregate.cells_table(records), 1, 17)
    assert block.splitlines()[0] == "[1/17] RSA-2048 (Level 112)"
    assert "1t →         50.0 ops/sec | p99: 9.00 ms" in block
    assert "FAILED: boom" in block
    assert "✗ Completed in" in block and "1 cell not measured" in block
    assert "Avg Temp: N/A" in block and "Energy/op: N/A" in block


# -------------------------------------------------------------------------- repetitions

def repeated(rates_by_workers: dict[int, list[int]]) -> list[dict]:
    """Records of threading cells, several repetitions each: workers -> analysis ops per rep."""
    out = []
    for workers, reps in rates_by_workers.items():
        for rep, ops in enumerate(reps):
            r = record(workers=workers, ops=ops)
            r["cell"]["rep"] = rep
            r["started_unix"] = 1000.0 + 10 * rep + workers
            out.append(r)
    return out


def test_a_cell_is_the_median_of_its_repetitions_with_an_interval():
    recs = repeated({1: [100, 110, 90], 2: [180, 200, 170]})
    reps = aggregate.reps_table(recs)
    assert len(reps) == 6 and sorted(reps["rep"].unique()) == [0, 1, 2]
    # repetitions ran interleaved: the run position follows the start times
    assert reps.set_index(["workers", "rep"]).loc[(1, 1), "run_position"] == 2
    cells = aggregate.cells_table(recs).set_index("workers")
    assert cells.loc[1, "ops_per_sec"] == pytest.approx(50.0)  # median of 100, 110, 90 ops in 2 s
    assert cells.loc[1, "repetitions"] == 3
    lo, hi = cells.loc[1, "ops_per_sec_ci_low"], cells.loc[1, "ops_per_sec_ci_high"]
    assert 45.0 <= lo <= 50.0 <= hi <= 55.0
    # efficiency from the medians, its interval from both cells' repetitions
    assert cells.loc[2, "scaling_efficiency"] == pytest.approx(90.0 / (2 * 50.0))
    assert cells.loc[2, "scaling_efficiency_ci_low"] <= 0.9 <= cells.loc[2, "scaling_efficiency_ci_high"]
    assert pd.isna(cells.loc[1, "scaling_efficiency_ci_low"])  # 1 by definition


def test_one_failed_repetition_fails_the_cell():
    recs = repeated({1: [100, 110, 90]})
    recs[1]["status"], recs[1]["failure"] = "failed", "a tampered signature was accepted"
    cell = aggregate.cells_table(recs).iloc[0]
    assert cell["status"] == "failed" and cell["failure"] == "repetition 1: a tampered signature was accepted"
    assert pd.isna(cell["ops_per_sec"])


def test_a_window_with_few_operations_per_worker_is_flagged():
    recs = repeated({1: [40, 41, 39], 2: [50, 52, 48]})  # 2 workers: 25 ops each
    cells = aggregate.cells_table(recs, min_ops_per_worker=30).set_index("workers")
    assert not cells.loc[1, "few_ops"] and cells.loc[2, "few_ops"]
    assert cells.loc[2, "ops_per_worker"] == pytest.approx(24.0)
