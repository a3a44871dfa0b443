"""The run's page of Snakemake's report: the machine and the composed configuration."""

import json

from parbench import cli


def test_the_run_page_holds_the_machine_and_the_configuration(tmp_path):
    machine = {"profile": "smoke", "description": "a <test> run",
               "config": {"profile": "smoke", "run_order_seed": 11, "sigpar": {"workers": [1, 2]}}}
    (tmp_path / "machine.json").write_text(json.dumps(machine))
    (tmp_path / "run.md").write_text("Measured on an **AMD EPYC** with 2 logical cores (@tbl-machines).\n\n| a | b |\n|--|--|\n| 1 | 2 |\n")
    out = tmp_path / "tables" / "run.html"
    assert cli.main(["report-run", "--machine", str(tmp_path / "machine.json"), "--run-md",
                     str(tmp_path / "run.md"), "--out", str(out)]) == 0
    page = out.read_text()
    assert "<strong>AMD EPYC</strong>" in page and "<table>" in page
    assert "run_order_seed: 11" in page and "workers:" in page
    assert "profile smoke" in page and "@tbl" not in page
