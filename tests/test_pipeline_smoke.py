"""The whole pipeline on the smoke profile, in a temporary copy of the checkout:
interrupted and resumed, then checked end to end (Parquet schema, real non-zero
throughput in every cell, the seed's files, figures, the rendered paper), then one
algorithm rerun while every other cell stays untouched."""

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import run_snakemake
from parbench import studies

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[1]
PROFILE = "smoke"
RAW = Path("data/raw") / PROFILE / "parallelism"
PROCESSED = Path("data/processed") / PROFILE
SIGPAR_FIGURES = ["sigpar_scaling", "sigpar_efficiency", "sigpar_latency", "sigpar_gil_ratio", "sigpar_python_cost",
                  "sigpar_energy"]
SCHED_FIGURES = ["sched_time", "sched_speedup", "sched_steals", "sched_tasks", "sched_mandelbrot_frames",
                 "sched_mandelbrot_image"]
FIGURE_IDS = {"sigpar_gil_ratio": "fig-sigpar-gil", "sched_mandelbrot_frames": "fig-sched-frames",
              "sched_mandelbrot_image": "fig-sched-image"}
# conf/sigpar/smoke.yaml: ECDSA-P256 in 5 variants (threading and multiprocess with pyca
# and openssl-cffi, native-threads) and ML-DSA-44 in 3 (threading and multiprocess with
# liboqs-python, native-threads), each x 2 operations x 2 worker counts
CELLS = (5 + 3) * 2 * 2
# Columns docs/data.md promises in sigpar_cells.parquet.
CELL_COLUMNS = {
    "study", "profile", "algorithm", "operation", "mode", "workers", "family", "kind", "library",
    "security_bits", "nist_level", "status", "failure", "analysis_ops", "ops_per_sec", "scaling_efficiency",
    "p50_latency_ms", "p95_latency_ms", "p99_latency_ms", "mean_latency_ms", "avg_cpu_utilization",
    "avg_rss_bytes", "system_cpu_percent", "cpu_temperature_c", "energy_per_op_j", "energy_source",
    "duration_sec", "analysis_window_sec", "cpu_model", "logical_cores", "os_release", "kernel",
    "python_version", "cryptography_version", "openssl_version", "liboqs_version", "git_commit",
    "config_hash",
}


def cell_files(workdir):
    return sorted((workdir / RAW).glob("*/*_cell.json"))


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def checkout(smoke_checkout):
    return smoke_checkout


@pytest.fixture(scope="module")
def full_run(smoke_run):
    return smoke_run["resumed"], smoke_run["kept"]


def test_an_interrupted_run_leaves_no_process_and_keeps_whole_cells(smoke_run):
    interrupted = smoke_run["interrupted"]
    assert interrupted["returncode"] != 0
    assert not interrupted["left"], interrupted["left"]  # no worker, cell or Snakemake process
    finished = interrupted["finished"]
    assert 3 <= len(finished) < CELLS
    assert all(status == "ok" for status in finished.values())  # every kept cell is whole
    # the unfinished cells, plus the one that was running when Ctrl+C came (its outputs
    # may be whole, but Snakemake never saw it finish: it is measured again)
    assert CELLS - len(finished) <= interrupted["planned"]["sigpar_cell"] <= CELLS - len(finished) + 1


def test_the_run_resumes_with_the_unfinished_cells_only(checkout, full_run):
    proc, before = full_run
    assert any(f"Cells to measure: {CELLS - kept} of {CELLS} ({kept} already measured)" in proc.stdout
               for kept in (before, before - 1)), proc.stdout[:3000]
    assert "parbench: finished in" in proc.stdout


def test_every_cell_has_real_nonzero_throughput(checkout, full_run):
    cells = pd.read_parquet(checkout / PROCESSED / "sigpar_cells.parquet")
    assert CELL_COLUMNS <= set(cells.columns), CELL_COLUMNS - set(cells.columns)
    assert len(cells) == CELLS
    assert (cells["status"] == "ok").all()
    assert (cells["ops_per_sec"] > 0).all() and (cells["analysis_ops"] > 0).all()
    assert cells["ops_per_sec"].nunique() == CELLS  # measured, not a constant
    one = cells[cells["workers"] == 1]
    assert (one["scaling_efficiency"] == 1.0).all()
    # every backend measured: the library bindings, the shim through cffi, the native runner
    assert set(cells["backend"]) == {"pyca", "liboqs-python", "openssl-cffi", "native"}
    native = cells[cells["backend"] == "native"]
    assert native["backend_version"].str.contains(r"OpenSSL \d|liboqs").all()
    assert cells["liboqs_version"].dropna().eq("0.13.0").any() or cells["liboqs_version"].notna().any()
    workers = pd.read_parquet(checkout / PROCESSED / "sigpar_workers.parquet")
    assert len(workers) == sum(cells["workers"])
    assert workers["tamper_rejected"].all() and (workers["correctness_failed"] == 0).all()
    latency = pd.read_parquet(checkout / PROCESSED / "sigpar_latency.parquet")
    assert (latency["latency_ms"] > 0).all()


def test_the_seed_files_are_there(checkout, full_run):
    for mode in ("threading", "multiprocess", "native-threads"):
        assert (checkout / RAW / mode / "ECDSA-P256_sign_t2_r0.csv").exists()
        assert (checkout / RAW / mode / "ML-DSA-44_verify_t1_r0_system.json").exists()
        doc = json.loads((checkout / PROCESSED / f"parallelism_{mode}.json").read_text())
        assert set(doc["algorithms"]) == {"ECDSA-P256", "ML-DSA-44"}
        assert set(doc["algorithms"]["ML-DSA-44"]["sign_ops_per_sec"]) == {"1", "2"}
    for variant in ("threading-openssl-cffi", "multiprocess-openssl-cffi"):
        assert (checkout / RAW / variant / "ECDSA-P256_verify_t2_r0.csv").exists()
        doc = json.loads((checkout / PROCESSED / f"parallelism_{variant}.json").read_text())
        assert set(doc["algorithms"]) == {"ECDSA-P256"} and doc["metadata"]["backends"] == ["openssl-cffi"]
    summary = pd.read_csv(checkout / PROCESSED / "parallelism_summary.csv")
    assert list(summary.columns[:6]) == ["algorithm", "operation", "worker_count", "ops_per_sec",
                                        "scaling_efficiency", "p99_latency_ms"]


def test_sched_cells_are_measured_and_verified(checkout, full_run):
    summary = pd.read_parquet(checkout / PROCESSED / "sched_summary.parquet")
    # quicksort: 6 schedulers and peers (lifo, ws, ws_sync, openmp, tbb, tbb_parallel_sort) x 2 threads
    # + sequential; mandelbrot: 3 schedulers x 2 threads + sequential
    assert len(summary) == 6 * 2 + 1 + 3 * 2 + 1
    peers = summary["scheduler"].isin(["openmp", "tbb", "tbb_parallel_sort"])
    assert (summary.loc[~peers, "status"] == "ok").all()
    assert summary.loc[peers, "status"].isin(["ok", "unavailable"]).all()  # a missing peer is noted
    ok = summary[summary["status"] == "ok"]
    assert (ok["median_time_s"] > 0).all() and ok["speedup_vs_sequential"].notna().all()
    runs = pd.read_parquet(checkout / PROCESSED / "sched_runs.parquet")
    assert runs.loc[runs["status"] == "ok", "verified"].all()
    ws = summary[(summary["scheduler"] == "ws") & (summary["threads"] == 2)]
    assert (ws["tasks_executed"] > 0).all() and ws["steal_success"].notna().all()
    console = (checkout / PROCESSED / "sched_console.txt").read_text()
    assert "[02] Time taken:" in console and "Minimum time taken:" in console
    assert (summary["repetitions"] == 1).all() and summary["median_time_s_ci_low"].isna().all()  # smoke: 1 repetition
    assert set(runs["rep"].dropna()) == {0}
    raw = (checkout / "data/raw" / PROFILE / "sched/quicksort/ws_t02_r0.txt").read_text()
    assert raw.startswith("[02] Time taken: ") and raw.rstrip().endswith(" seconds")


def test_figures_exist_in_every_format(checkout, full_run):
    for name in SIGPAR_FIGURES + SCHED_FIGURES:
        for ext in ("svg", "png", "html"):
            path = checkout / "figures" / PROFILE / f"{name}.{ext}"
            assert path.exists() and path.stat().st_size > 1000, path
        assert (checkout / "figures" / PROFILE / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_paper_reads_nothing_outside_its_quarto_project(checkout, full_run):
    """Quarto typesets the PDF with Typst rooted at paper/ (so does the fallback that made
    this run's PDF): every figure the generated text shows is a file inside paper/."""
    import re

    paper = (checkout / "paper").resolve()
    shown = []
    for fragment in sorted((paper / "_generated").rglob("*.md")):
        # an image's target (its caption may hold facts' [text]{.fact} spans, so brackets)
        shown += re.findall(r"\]\(([^)\s]+\.(?:svg|png))\)", fragment.read_text())
    assert len(shown) >= len(SIGPAR_FIGURES + SCHED_FIGURES), shown
    for target in shown:
        path = (paper / target).resolve()
        assert path.is_relative_to(paper) and path.is_file(), target
        assert path.read_bytes() == (checkout / "figures" / PROFILE / path.name).read_bytes()  # the figure, copied


def test_the_paper_holds_the_figures_and_numbers_from_the_data(checkout, full_run):
    """The paper rendered, its every number a fact that holds against the tables (the
    paper check ran before rendering), and its PDF on its pages (the layout check)."""
    proc, _ = full_run
    assert "rendered paper/_output/index.html and paper/_output/index.pdf with" in proc.stdout + proc.stderr
    pdf = checkout / "paper/_output/index.pdf"
    assert pdf.read_bytes().startswith(b"%PDF-") and pdf.stat().st_size > 100_000  # the figures are in it
    html = (checkout / "paper/_output/index.html").read_text()
    assert "data:image/svg+xml" in html
    check = json.loads((checkout / "paper/_generated/check.json").read_text())
    assert check["ok"] and check["facts"] > 100 and check["problems"] == []
    layout = json.loads((checkout / PROCESSED / "paper_layout.json").read_text())
    assert layout["ok"], layout["problems"]
    for section in ("sec-summary", "sec-method", "sec-limitations", "sec-conclusion"):
        assert f'id="{section}"' in html, section
    # a number of the text is the table's: every sigpar fact the text quotes from a cell
    facts = json.loads((checkout / "paper/_generated/sigpar/facts.json").read_text())
    quoted = {key for md in (checkout / "paper/_generated/sigpar").glob("*.md")
              for key in re.findall(r'key="([^"]+)"', md.read_text())}
    cells = pd.read_parquet(checkout / PROCESSED / "sigpar_cells.parquet")
    checked = 0
    for key, fact in facts.items():
        source = fact["source"]
        if key in quoted and source["kind"] == "lookup" and source["table"] == "sigpar_cells" and not source.get("via"):
            row = cells
            for column, value in source["where"].items():
                row = row[row[column].isna()] if value is None else row[row[column] == value]
            assert len(row) == 1 and row[source["column"]].iloc[0] == fact["value"]
            assert fact["text"] in html.replace("\n", " "), key
            checked += 1
    assert checked, "the sigpar text quotes no number straight from a cell"


def test_the_run_makes_the_same_tables_figures_and_labels_as_the_golden_record(checkout, full_run):
    """The golden check: a rework of the code leaves every table's columns and dtypes, every
    figure's name and the paper's section, figure and table labels as recorded
    (tests/fixtures/golden/smoke.json; `python tests/golden.py record` writes it)."""
    import golden

    assert golden.differences(golden.load(PROFILE), golden.shape(checkout, PROFILE)) == []


def test_every_studys_records_name_the_configuration_the_paper_names(checkout, full_run):
    """The paper names one configuration hash (machine.json's, the composed config of the
    run): every table that carries its cells' `config_hash` holds that one. A cell that
    added a key of its own to the config before its record was written (sigpar's power-log
    folder did) gave its study a hash no other had."""
    machine = json.loads((checkout / PROCESSED / "machine.json").read_text())["config_hash"]
    carried = {}
    for path in sorted((checkout / PROCESSED).glob("*.parquet")):
        frame = pd.read_parquet(path)
        if "config_hash" in frame:
            carried[path.stem] = set(frame["config_hash"].dropna())
    assert {"sigpar_cells", "sched_runs", "kem_cycles", "gil_summary", "dispatch_cells"} <= set(carried)
    assert {table: hashes for table, hashes in carried.items() if hashes != {machine}} == {}


def test_the_cells_ran_in_the_planned_order_after_every_build(checkout, full_run):
    """From the recorded start times: the resumed run measured its cells in the order the
    plan put them (all studies shuffled together), and none before the builds were done."""
    loads = pd.concat([pd.read_parquet(p) for p in sorted((checkout / PROCESSED).glob("*_load.parquet"))],
                      ignore_index=True)
    assert set(loads["study"]) == {s.name for s in studies.registered()}
    last = loads[loads["run_id"] == loads.loc[loads["started_unix"].idxmax(), "run_id"]]
    last = last.dropna(subset=["planned_position"]).sort_values("started_unix")
    assert len(last) >= 5 and last["study"].nunique() >= 3
    assert last["planned_position"].is_monotonic_increasing, last[["study", "cell", "planned_position"]]
    builds = json.loads((checkout / RAW.parent / "builds.json").read_text())
    assert loads["started_unix"].min() > builds["finished_unix"]  # no cell before the last build was done


def _embedded(report, name):
    text = report.read_text()
    start = text.index(f'<script id="{name}">')
    return json.loads(text[start:text.index("</script>", start)].split(f"var {name} = ", 1)[1].strip().rstrip(";"))


def test_snakemakes_report_holds_every_figure_and_table_by_study(checkout, full_run):
    before = {p: p.stat().st_mtime_ns for p in cell_files(checkout)}
    proc = run_snakemake(checkout, "--report", "report.html", "--configfile", f"conf/{PROFILE}.yaml", timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert {p: p.stat().st_mtime_ns for p in cell_files(checkout)} == before  # nothing measured again
    report = checkout / "report.html"
    results, categories = _embedded(report, "results"), _embedded(report, "categories")
    # the run's machine and configuration first, then one category per study, in paper order
    expected = ["0. The run", *(f"{i}. {s.title}" for i, s in enumerate(studies.registered(), start=1))]
    # numbered: the report's reader finds them in this order whatever order Snakemake met them in
    assert sorted(categories) == expected
    assert [c for c in categories if c != "0. The run"] == expected[1:]
    by_category = {c: {p for paths in subs.values() for p in paths} for c, subs in categories.items()}
    assert by_category["0. The run"] == {f"{PROCESSED}/tables/run.html"}
    run_page = (checkout / PROCESSED / "tables/run.html").read_text()
    machine = json.loads((checkout / PROCESSED / "machine.json").read_text())
    assert "The configuration" in run_page and "run_order_seed" in run_page
    assert machine["description"] in run_page
    sigpar, sched = by_category["1. " + studies.get("sigpar").title], by_category["2. " + studies.get("sched").title]
    for name in SIGPAR_FIGURES + SCHED_FIGURES:
        held = sigpar if name.startswith("sigpar") else sched
        for ext in ("svg", "html"):
            assert f"figures/{PROFILE}/{name}.{ext}" in held, (name, ext)
    for table in ("sigpar_cells.parquet", "sigpar_reps.parquet", "sigpar_workers.parquet", "sigpar_latency.parquet",
                  "parallelism_summary.csv", "tables/sigpar_summary.html"):
        assert f"{PROCESSED}/{table}" in sigpar, table
    for table in ("sched_summary.parquet", "sched_runs.parquet", "sched_workers.parquet", "sched_console.txt",
                  "tables/sched_summary_table.html"):
        assert f"{PROCESSED}/{table}" in sched, table
    for path, entry in results.items():
        assert entry["caption"].strip(), path  # every result says what was measured and how
    assert results[f"figures/{PROFILE}/sigpar_scaling.svg"]["mime_type"] == "image/svg+xml"
    assert results[f"{PROCESSED}/sigpar_cells.parquet"]["mime_type"] == "application/vnd.apache.parquet"
    assert "Throughput against worker count" in results[f"figures/{PROFILE}/sigpar_scaling.svg"]["caption"]


def test_rerun_of_one_algorithm_leaves_other_cells_untouched(checkout, full_run):
    before = {p: (p.stat().st_mtime_ns, digest(p)) for p in cell_files(checkout)}
    parquet_before = (checkout / PROCESSED / "sigpar_cells.parquet").stat().st_mtime_ns
    proc = subprocess.run([sys.executable, "-m", "parbench", "rerun", "--profile", PROFILE, "--cores", "2",
                           "ECDSA-P256"], cwd=checkout, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for path, (mtime, sha) in before.items():
        changed = (path.stat().st_mtime_ns, digest(path)) != (mtime, sha)
        assert changed == path.name.startswith("ECDSA-P256"), path
    assert (checkout / PROCESSED / "sigpar_cells.parquet").stat().st_mtime_ns > parquet_before
    history = checkout / RAW / "history" / "threading" / "ECDSA-P256_sign_t1_r0"
    assert len(list(history.iterdir())) == 2  # the replaced measurement is kept
    again = run_snakemake(checkout, "-n", "report", "--configfile", f"conf/{PROFILE}.yaml")
    assert "Nothing to be done" in again.stdout + again.stderr


def test_a_killed_run_resumes_with_the_readmes_command(checkout, full_run):
    """SIGKILL leaves Snakemake's lock behind; `make paper` removes it (no Snakemake works in
    the checkout) and resumes, measuring what the killed run did not finish."""
    import os
    import signal
    import time

    token = RAW / "sweeps" / "ML-DSA-44.json"
    before = {p: p.stat().st_mtime_ns for p in cell_files(checkout) if p.name.startswith("ML-DSA-44")}
    proc = subprocess.Popen([sys.executable, "-m", "snakemake", "-c2", "report", "--forcerun", str(token),
                             "--configfile", f"conf/{PROFILE}.yaml"], cwd=checkout, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    def touched(path, mtime):  # rewritten, or removed by Snakemake before measuring it again
        return not path.exists() or path.stat().st_mtime_ns != mtime

    while time.monotonic() < deadline and proc.poll() is None:
        if any(touched(p, t) for p, t in before.items()):
            break
        time.sleep(0.2)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # power loss, the OOM killer: nothing cleans up
    proc.wait()
    assert list((checkout / ".snakemake" / "locks").glob("*.lock")), "SIGKILL should leave the lock"
    venv = Path(sys.executable).parent.parent
    # the README's command, with the test's environment taken as it is (-o: never reinstall
    # it from this copy of the checkout)
    resumed = subprocess.run(["make", "paper", f"PROFILE={PROFILE}", f"VENV={venv}", "-o", f"{venv}/.installed"],
                             cwd=checkout, capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert "removed the lock a killed run left behind" in resumed.stdout
    again = run_snakemake(checkout, "-n", "report", "--configfile", f"conf/{PROFILE}.yaml")
    assert "Nothing to be done" in again.stdout + again.stderr
