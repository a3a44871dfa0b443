"""The cell life cycle every study shares (parbench.cell_life): the record written, each
measurement kept in the cell's history, an interrupted cell (Ctrl+C or SIGTERM) writing
nothing, a record known without measuring written as it is."""

import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from parbench import cell_life
from parbench.studies.base import CellPaths

# one attempt: whatever else the machine runs, the test's cell is measured once
CFG = {"profile": "toy", "disturbance": {"max_other_cores": 1e9, "max_attempts": 1, "settle_sec": 0},
       "studies": [], "run_order_seed": 0}


@dataclass(frozen=True)
class ToyCell(CellPaths):
    root: str
    label: str = "toy x1"

    def stem(self, profile):
        return f"{self.root}/{profile}/cell"

    def history(self, profile):
        return Path(self.root) / "history"


class QuietMeter:
    """A load meter that reads no load. The real one makes its process a child subreaper,
    which in pytest's own process would leave every later test's orphans unreaped."""

    def __call__(self, **options):
        return self

    def start(self):
        return self

    def stop(self):
        return {"other_cores": 0.0, "steal_cores": 0.0}


def run(tmp_path, measure, **options):
    cell = ToyCell(str(tmp_path))
    return cell_life.run("toy", cell, CFG, measure, lambda r: cell_life.write_json(cell.record("toy"), r),
                         meter_factory=QuietMeter(), **options)


def test_a_cell_is_written_and_every_measurement_kept(tmp_path, capsys):
    out = tmp_path / "toy" / "cell.json"
    for value in (1, 2):
        record, written = run(tmp_path, lambda: {"status": "ok", "value": value})
        assert written == [out] and json.loads(out.read_text())["value"] == value == record["value"]
    kept = sorted((tmp_path / "history").iterdir())
    assert [json.loads((d / "cell.json").read_text())["value"] for d in kept] == [1, 2]
    err = capsys.readouterr().err
    assert "replaced the measurement of" in err  # said, not silently overwritten
    assert "for toy x1;" in err  # a label that names its study already is not prefixed twice


def test_a_cell_that_failed_its_checks_is_said_with_where_it_was_recorded(tmp_path, capsys):
    run(tmp_path, lambda: {"status": "ok"})
    assert "ERROR" not in capsys.readouterr().err
    record, _ = run(tmp_path, lambda: {"status": "failed", "failure": "the sum is 22, not 21"})
    assert record["status"] == "failed"
    assert (f"ERROR toy x1 failed its checks: the sum is 22, not 21\n  recorded as failed in "
            f"{tmp_path / 'toy' / 'cell.json'}") in capsys.readouterr().err


def test_an_interrupted_cell_writes_nothing(tmp_path, capsys):
    def interrupted():
        raise KeyboardInterrupt

    assert run(tmp_path, interrupted) is None
    assert not (tmp_path / "toy").exists() and not (tmp_path / "history").exists()
    assert "parbench toy-cell: toy x1 interrupted; no output written" in capsys.readouterr().err


def test_sigterm_ends_the_cell_as_ctrl_c_does(tmp_path):
    def stopped():
        os.kill(os.getpid(), signal.SIGTERM)
        return {"status": "ok"}

    before = signal.getsignal(signal.SIGTERM)
    try:
        assert run(tmp_path, stopped) is None
    finally:
        signal.signal(signal.SIGTERM, before)
    assert not (tmp_path / "toy").exists()


def test_a_record_known_without_measuring_is_written_as_it_is(tmp_path):
    def never():
        raise AssertionError("measured a cell that was skipped")

    record, _ = run(tmp_path, never, ready={"status": "skipped"})
    assert record == {"status": "skipped"} == json.loads((tmp_path / "toy" / "cell.json").read_text())
    assert not (tmp_path / "history").exists()  # nothing was measured, so nothing to keep


def test_a_mapping_of_outputs_is_kept_whole(tmp_path):
    def write(record):
        files = {"record": tmp_path / "c.json", "console": tmp_path / "c.txt"}
        cell_life.write_json(files["record"], record)
        files["console"].write_text("line\n")
        return files

    _, written = cell_life.run("toy", ToyCell(str(tmp_path)), CFG, lambda: {"status": "ok"}, write,
                               meter_factory=QuietMeter())
    assert set(written) == {"record", "console"}
    (kept,) = (tmp_path / "history").iterdir()
    assert sorted(p.name for p in kept.iterdir()) == ["c.json", "c.txt"]


def test_every_studys_cell_names_its_files_alike():
    from parbench import studies

    for study in studies.registered():
        cell = study.cells(_smoke())[0]
        assert isinstance(cell, CellPaths), study.name
        assert cell.record("smoke").endswith(".json") and cell.outputs("smoke")["record"] == cell.record("smoke")
        assert cell.record("smoke").startswith(cell.stem("smoke"))
        assert "history" in str(cell.history("smoke"))


def _smoke():
    from parbench import config

    return config.load("smoke")



def test_a_record_writes_a_path_as_text_and_refuses_what_json_cannot_store(tmp_path):
    import pytest

    cell_life.write_json(tmp_path / "r.json", {"log": tmp_path / "power.log"})
    assert json.loads((tmp_path / "r.json").read_text()) == {"log": str(tmp_path / "power.log")}
    with pytest.raises(TypeError, match=r"a record holds \{1\} \(set\)"):
        cell_life.write_json(tmp_path / "s.json", {"cores": {1}})
    assert not (tmp_path / "s.json").exists()
