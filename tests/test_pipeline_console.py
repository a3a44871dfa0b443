"""The run's console: Snakemake's scheduler chatter is filtered, and a failed job is
explained with its command, its log's path and the log's last lines."""

import io
import os
import logging

from parbench import pipeline


def test_the_scheduler_chatter_is_dropped_and_the_rest_kept():
    chatter = pipeline.SchedulerChatter()
    record = lambda msg: logging.LogRecord("snakemake.logging", logging.INFO, "", 0, msg, None, None)  # noqa: E731
    assert not chatter.filter(record("Select jobs to execute..."))
    assert not chatter.filter(record("Execute 12 jobs..."))
    assert chatter.filter(record("Execute the plan"))
    assert chatter.filter(record("Error in rule sigpar_cell:"))


def test_a_failed_job_is_explained(tmp_path):
    log = tmp_path / "cell.log"
    log.write_text("\n".join(f"line {i}" for i in range(40)) + "\nValueError: boom\n")
    out = io.StringIO()
    pipeline.explain_failures([("sigpar_cell", {"algorithm": "Ed25519", "workers": "2"},
                                "python -m parbench sigpar-cell   --algorithm Ed25519", [str(log)]),
                               ("sched_build", {}, "make -C native/sched", [str(tmp_path / "missing.log")])], out)
    text = out.getvalue()
    assert "parbench: job sigpar_cell (algorithm=Ed25519 workers=2) failed" in text
    assert "  command: python -m parbench sigpar-cell --algorithm Ed25519" in text
    assert f"  log: {log}" in text and "    | ValueError: boom" in text
    assert "line 25" not in text and "line 26" in text  # the last 15 lines
    assert "parbench: job sched_build failed" in text and "(the log was not written)" in text


def test_a_plan_prints_the_header_and_starts_nothing(tmp_path, monkeypatch):
    """`snakemake -n`: the header, but no run id, no estimate exported to cells and no
    recorded run order (nothing runs)."""
    from parbench import config as pbconfig
    from parbench.progress import RUN_ESTIMATE_ENV, RUN_ID_ENV

    monkeypatch.chdir(tmp_path)
    for name in (RUN_ID_ENV, RUN_ESTIMATE_ENV):
        monkeypatch.delenv(name, raising=False)
    out = io.StringIO()
    cell = {"algorithm": "Ed25519", "operation": "sign", "variant": "threading", "workers": "1", "rep": "0"}
    pipeline.start_run(pbconfig.load("smoke"), [("sigpar_cell", cell), ("all", {})], [], out=out, plan_only=True)
    text = out.getvalue()
    assert "parbench: profile smoke" in text and "Plan only (dry run): nothing is measured" in text
    assert "Started at" not in text and "Estimated total time: ~" in text
    assert RUN_ID_ENV not in os.environ and RUN_ESTIMATE_ENV not in os.environ
    assert not (tmp_path / "data").exists()
