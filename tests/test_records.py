"""parbench.records: atomic writes and the failed records a run lists at its end."""

import json

from parbench.records import failed_in_run


def test_failed_in_run_names_only_this_runs_failures(tmp_path):
    path = tmp_path / "cell.json"
    assert failed_in_run(path, "run-1") is None  # not measured
    path.write_text(json.dumps({"run_id": "run-0", "status": "failed", "failure": "x"}))
    assert failed_in_run(path, "run-1") is None  # an earlier run's failure
    path.write_text(json.dumps({"run_id": "run-1", "status": "ok", "failure": None}))
    assert failed_in_run(path, "run-1") is None  # passed
    path.write_text(json.dumps({"run_id": "run-1", "status": "failed", "failure": "tampered signature verified"}))
    assert failed_in_run(str(path), "run-1")["failure"] == "tampered signature verified"
