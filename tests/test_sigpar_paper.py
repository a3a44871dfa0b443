"""The generated parts of the sigpar section: numbers come from the table, and every
finding names the mode it speaks of."""

import pandas as pd

from parbench.studies.sigpar import paper

MACHINE = {
    "profile": "test",
    "config": {"sigpar": {"warmup_sec": 0.25, "duration_sec": 2.0, "analysis_window_sec": 1.5},
               "telemetry": {"sample_interval_sec": 0.25}},
    "libraries": {"cryptography_version": "50.0.2"},
    "capabilities": {"energy": {"available": False, "reason": "no RAPL"}},
}


def cells(status="ok"):
    rows = []
    rates = {("RSA-2048", "threading", "pyca"): 100.0, ("RSA-2048", "multiprocess", "pyca"): 110.0,
             ("Ed25519", "threading", "pyca"): 900.0, ("Ed25519", "multiprocess", "pyca"): 1000.0,
             ("Ed25519", "threading", "openssl-cffi"): 950.0, ("Ed25519", "native-threads", "native"): 1000.0}
    for (algorithm, mode, backend), rate in rates.items():
        variant = f"{mode}-{backend}" if backend == "openssl-cffi" else mode
        for op in ("sign", "verify"):
            for workers, eff in ((1, 1.0), (2, 0.9 if mode != "threading" else 0.6)):
                rows.append({"algorithm": algorithm, "family": algorithm.split("-")[0], "operation": op,
                             "mode": mode, "backend": backend, "variant": variant, "workers": workers,
                             "status": status, "failure": None,
                             "ops_per_sec": rate * workers * eff, "scaling_efficiency": eff,
                             "p99_latency_ms": 1.0 * workers, "window_rate_cv": 0.1,
                             "energy_per_op_j": None, "energy_source": None,
                             "security_bits": 112 if algorithm == "RSA-2048" else 128})
    return pd.DataFrame(rows)


def test_every_throughput_finding_names_its_mode():
    text = paper.fragments({"sigpar_cells": cells()}, MACHINE)["throughput"]
    assert "in threading mode Ed25519 signs fastest (900 ops/s)" in text
    assert "in multiprocess mode Ed25519 signs fastest (1,000 ops/s)" in text
    assert "RSA-2048 slowest (110 ops/s)" in text
    assert "in native-threads mode Ed25519 signs fastest (1,000 ops/s)" in text
    assert "![" in text and "{#fig-sigpar-scaling}" in text


def test_efficiency_latency_and_ratio_per_mode():
    parts = paper.fragments({"sigpar_cells": cells()}, MACHINE)
    assert "multiprocess cells reached a median efficiency of 90%" in parts["efficiency"]
    assert "threading cells reached a median efficiency of 60%" in parts["efficiency"]
    assert "threading-openssl-cffi cells reached a median efficiency of 60%" in parts["efficiency"]
    assert "Below 70%" in parts["efficiency"] and "(threading)" in parts["efficiency"]
    assert "100% in threading mode, 100% in multiprocess mode" in parts["latency"]
    # threads / processes at 2 workers: 0.6 x 900 / (0.9 x 1000) for Ed25519, 0.6 x 100 / (0.9 x 110) for RSA
    assert "with pyca a median 0.603" in parts["gil"]
    assert "no RAPL" in parts["energy"]
    assert set(parts) == set(paper.FRAGMENTS)


def test_python_backends_are_compared_with_the_native_runner():
    text = paper.fragments({"sigpar_cells": cells()}, MACHINE)["backends"]
    # Ed25519 with one thread: pyca 900 and openssl-cffi 950 ops/s against native 1000
    assert "openssl-cffi reached a median 95% of the native rate" in text
    assert "pyca reached a median 90% of the native rate (111 µs per operation more than the native runner's" in text
    assert "{#fig-sigpar-python-cost}" in text


def test_a_run_where_nothing_passed_says_so_instead_of_failing():
    parts = paper.fragments({"sigpar_cells": cells(status="failed")}, MACHINE)
    assert "24 of 24 cells did not pass" in parts["setup"]
    assert all("nothing to report" in parts[name] for name in paper.FRAGMENTS if name != "setup")
    assert paper.report_tables({"sigpar_cells": cells(status="failed")})["sigpar_summary"][0].empty


def test_the_summary_table_has_both_modes():
    frame, caption = paper.report_tables({"sigpar_cells": cells()})["sigpar_summary"]
    assert list(frame.columns) == ["algorithm", "bits", "operation", "backend", "thr 1w ops/s", "thr 2w ops/s",
                                   "thr eff.", "mp 1w ops/s", "mp 2w ops/s", "mp eff."]
    assert frame.iloc[0]["algorithm"] == "RSA-2048"  # catalog order
    ed = frame[(frame["algorithm"] == "Ed25519") & (frame["operation"] == "sign")]
    assert list(ed["backend"]) == ["pyca", "openssl-cffi", "native"]
    assert list(ed["thr 1w ops/s"]) == ["900", "950", "1,000"] and list(ed["mp 1w ops/s"]) == ["1,000", "", ""]
    assert "per backend and mode" in caption


def test_table_views_are_html_and_csv(tmp_path):
    from parbench.render.tables import write_table_views

    frame, caption = paper.report_tables({"sigpar_cells": cells()})["sigpar_summary"]
    html_path, csv_path = write_table_views(frame, tmp_path / "sigpar_summary", caption)
    page = html_path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<caption>sigpar: throughput" in page
    assert '<td class="num">1,000</td>' in page and "<td>Ed25519</td>" in page
    assert pd.read_csv(csv_path).shape == frame.shape


def test_overlapping_intervals_are_not_ranked():
    frame = cells()
    frame["repetitions"] = 3
    frame["ops_per_sec_ci_low"], frame["ops_per_sec_ci_high"] = frame["ops_per_sec"] * 0.9, frame["ops_per_sec"] * 1.1
    frame["scaling_efficiency_ci_low"] = frame["scaling_efficiency"] - 0.2
    frame["scaling_efficiency_ci_high"] = frame["scaling_efficiency"] + 0.2
    machine = {**MACHINE, "config": {**MACHINE["config"], "run_order_seed": 5}}
    parts = paper.fragments({"sigpar_cells": frame}, machine)
    # multiprocess, one worker: Ed25519 1,000 (900-1,100) and RSA-2048 110: told apart; in
    # native-threads mode only Ed25519 was measured
    assert "in multiprocess mode Ed25519 signs fastest (1,000 (900–1,100) ops/s)" in parts["throughput"]
    assert "not distinguishable" not in parts["throughput"]
    # threading at 2 workers: efficiency 0.6 with an interval reaching 0.8
    assert "not distinguishable from 70% on this machine" in parts["efficiency"]
    assert "Each cell was measured 3 times, interleaved" in parts["setup"] and "seed 5" in parts["setup"]
    close = frame.copy()
    close.loc[close["algorithm"] == "RSA-2048", ["ops_per_sec_ci_low", "ops_per_sec_ci_high"]] = (0.0, 1e9)
    text = paper.fragments({"sigpar_cells": close}, machine)["throughput"]
    assert "are not distinguishable on this machine as the fastest" in text


def test_cells_with_few_operations_are_named():
    frame = cells()
    frame["few_ops"] = False
    frame["ops_per_worker"] = 100.0
    frame.loc[(frame["algorithm"] == "RSA-2048") & (frame["workers"] == 2), ["few_ops", "ops_per_worker"]] = (True, 5.0)
    text = paper.fragments({"sigpar_cells": frame}, {**MACHINE, "config": {**MACHINE["config"], "sigpar": {
        **MACHINE["config"]["sigpar"], "min_ops_per_worker": 30}}})["setup"]
    assert "fewer than 30 operations per worker" in text and "RSA-2048 sign threading 2w (5 per worker)" in text
