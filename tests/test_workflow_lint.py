"""The workflow passes `snakemake --lint` for every profile, with no lint at all, and
plans the full M4 sweep."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


@pytest.mark.parametrize("profile", ["local", "m4", "smoke"])
def test_lint_is_clean(profile):
    proc = subprocess.run([*SNAKEMAKE, "--lint", "--configfile", f"conf/{profile}.yaml"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Lints for" not in out, out
    assert "Congratulations, your workflow is in a good condition!" in out


def test_m4_dry_run_plans_every_cell():
    proc = subprocess.run([*SNAKEMAKE, "-n", "--quiet", "rules", "--configfile", "conf/m4.yaml"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    counts = dict(line.split()[:2] for line in proc.stdout.splitlines() if line.startswith("sigpar_"))
    assert int(counts["sigpar_cell"]) == (8 * (2 * 2 + 1) + 13 * (2 + 1)) * 2 * 6 * 5  # 5 repetitions
    # the parbench header, which a dry run prints before Snakemake's summary
    assert "parbench: profile m4" in proc.stdout and "Plan only (dry run): nothing is measured" in proc.stdout
    assert proc.stdout.index("Estimated total time: ~") < proc.stdout.index("Job stats:")


def test_a_dry_run_prints_the_plan_under_the_quiet_workflow_profile():
    """`snakemake -n` as the README gives it: profiles/default quiets Snakemake's summary
    and job blocks; the plan still shows the header and the jobs per rule, once."""
    proc = subprocess.run([*SNAKEMAKE, "-n", "--forceall", "--configfile", "conf/smoke.yaml"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "Using workflow specific profile profiles/default" in proc.stdout + proc.stderr
    for line in ("parbench: profile smoke", "Plan only (dry run): nothing is measured", "Cells to measure: 32 of 32",
                 "Estimated total time: ~"):
        assert line in out, (line, out[-3000:])
    assert out.count("Job stats:") == 1 and out.index("Estimated total time") < out.index("Job stats:")
    counts = {line.split()[0]: int(line.split()[1]) for line in out[out.index("Job stats:"):].splitlines()
              if len(line.split()) == 2 and line.split()[1].isdigit()}
    assert counts["sigpar_cell"] == 32 and counts["render_paper"] == 1 and counts["total"] == sum(
        n for rule, n in counts.items() if rule != "total")
    assert "rule sigpar_cell:" not in out  # the job blocks stay quiet


@pytest.mark.parametrize("override, words", [
    ("sigpar.workers=[0,1]", "sigpar.workers[0]: 0 is too small; allowed: >= 1"),
    ("sigpar.algorithms=[RSA-1024]", "'RSA-1024' is not allowed; allowed: RSA-2048"),
    ("sigpar.analysis_window_sec=99", "is longer than sigpar.duration_sec"),
    ("sigpar.modes=[threads]", "'threads' is not allowed; allowed: threading, multiprocess"),
    ("studies=[nosuch]", "'nosuch' is not allowed; allowed: sigpar, sched"),
])
def test_a_bad_config_stops_snakemake_before_any_job(override, words):
    proc = subprocess.run([*SNAKEMAKE, "-n", "--configfile", "conf/local.yaml", "--config",
                           f"overrides=['{override}']"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert words in proc.stdout + proc.stderr
    assert "Job stats" not in proc.stdout
