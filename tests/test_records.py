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


def test_write_atomic_writes_text_and_bytes_whole(tmp_path):
    from parbench.records import write_atomic

    write_atomic(tmp_path / "a" / "t.txt", "héllo\n")
    write_atomic(tmp_path / "a" / "b.ppm", b"P6\n1 1\n255\n\xff\x00\x80")
    assert (tmp_path / "a" / "t.txt").read_text() == "héllo\n"
    assert (tmp_path / "a" / "b.ppm").read_bytes() == b"P6\n1 1\n255\n\xff\x00\x80"
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["b.ppm", "t.txt"]  # no temporary left


def test_a_check_writes_its_verdict_and_says_each_problem(tmp_path, capsys):
    from parbench.records import finish_check

    out = tmp_path / "check.json"
    assert finish_check(str(out), {"facts": 3}, ["a number is not a fact"], "2 problems:", "all held") == 1
    assert json.loads(out.read_text()) == {"facts": 3, "problems": ["a number is not a fact"], "ok": False}
    err = capsys.readouterr().err
    assert err == "2 problems:\n  a number is not a fact\n"
    assert finish_check(None, {}, [], "problems:", "all held") == 0 and capsys.readouterr().out == "all held\n"
