"""The cell life cycle every study shares (parbench.cell_life): the record written, each
measurement kept in the history, an interrupted cell (Ctrl+C or SIGTERM) writing nothing,
a record known without measuring written as it is."""

import json
import os
import signal
from dataclasses import dataclass

from parbench import cell_life

# one attempt: whatever else the machine runs, the test's cell is measured once
CFG = {"disturbance": {"max_other_cores": 1e9, "max_attempts": 1, "settle_sec": 0}, "studies": [],
       "run_order_seed": 0}


@dataclass(frozen=True)
class ToyCell:
    label: str = "toy x1"


def test_a_cell_is_written_and_every_measurement_kept(tmp_path, capsys):
    out, history = tmp_path / "cell.json", tmp_path / "history"
    for value in (1, 2):
        record, written = cell_life.run("toy", ToyCell(), CFG, lambda: {"status": "ok", "value": value},
                                        lambda r: cell_life.write_json(out, r), history)
        assert written == [out] and json.loads(out.read_text())["value"] == value == record["value"]
    kept = sorted(history.iterdir())
    assert [json.loads((d / "cell.json").read_text())["value"] for d in kept] == [1, 2]
    assert "replaced the measurement of" in capsys.readouterr().err  # said, not silently overwritten


def test_an_interrupted_cell_writes_nothing(tmp_path, capsys):
    out = tmp_path / "cell.json"

    def interrupted():
        raise KeyboardInterrupt

    assert cell_life.run("toy", ToyCell(), CFG, interrupted, lambda r: cell_life.write_json(out, r),
                         tmp_path / "history") is None
    assert not out.exists() and not (tmp_path / "history").exists()
    assert "parbench toy-cell: toy x1 interrupted; no output written" in capsys.readouterr().err


def test_sigterm_ends_the_cell_as_ctrl_c_does(tmp_path):
    out = tmp_path / "cell.json"

    def stopped():
        os.kill(os.getpid(), signal.SIGTERM)
        return {"status": "ok"}

    before = signal.getsignal(signal.SIGTERM)
    try:
        assert cell_life.run("toy", ToyCell(), CFG, stopped, lambda r: cell_life.write_json(out, r),
                             tmp_path / "history") is None
    finally:
        signal.signal(signal.SIGTERM, before)
    assert not out.exists()


def test_a_record_known_without_measuring_is_written_as_it_is(tmp_path):
    out = tmp_path / "cell.json"

    def never():
        raise AssertionError("measured a cell that was skipped")

    record, _ = cell_life.run("toy", ToyCell(), CFG, never, lambda r: cell_life.write_json(out, r),
                              tmp_path / "history", ready={"status": "skipped"})
    assert record == {"status": "skipped"} == json.loads(out.read_text())
    assert not (tmp_path / "history").exists()  # nothing was measured, so nothing to keep


def test_a_mapping_of_outputs_is_kept_whole(tmp_path):
    def write(record):
        files = {"record": tmp_path / "c.json", "console": tmp_path / "c.txt"}
        cell_life.write_json(files["record"], record)
        files["console"].write_text("line\n")
        return files

    _, written = cell_life.run("toy", ToyCell(), CFG, lambda: {"status": "ok"}, write, tmp_path / "history")
    assert set(written) == {"record", "console"}
    (kept,) = (tmp_path / "history").iterdir()
    assert sorted(p.name for p in kept.iterdir()) == ["c.json", "c.txt"]
