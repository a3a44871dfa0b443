"""The Benchmark contract (parbench.studies.benchmark) and its runner (parbench.runner):
cell keys and paths, the Study record it gives, the checked record of a measurement, and
the runner's errors. The toy study's run through the pipeline: tests/test_toy_study.py."""

import argparse
import json
from dataclasses import dataclass

import altair as alt
import pandas as pd
import pytest

from parbench import runner
from parbench.studies.benchmark import Benchmark, BenchmarkPaper, Figure, SweepCell, Unavailable


@dataclass(frozen=True)
class Cell(SweepCell):
    size: int
    rep: int


def draw(frame, machine):
    return alt.Chart(frame).mark_point().encode(x="size:Q")


class Sample(Benchmark):
    name = "sample"
    title = "A sample"
    summary = "what a test measures"
    Cell = Cell
    TABLES = ("rows",)
    FIGURES = (Figure("sample_rows", draw, ("sample_rows",), "fig-sample-rows"),)

    def captions(self):  # a study's are in paper/sections/<study>/captions.yml
        return {"sample_rows": "Rows by size."}

    def cells(self, cfg):
        return [Cell(size, 0) for size in cfg["sample"]["sizes"]]

    def measure(self, cfg, cell):
        if cell.size < 0:
            raise RuntimeError("the system under test broke")
        return {"total": sum(range(cell.size)) + (1 if cell.size == 7 else 0)}

    def check(self, cfg, cell, result):
        want = sum(range(cell.size))
        return [] if result["total"] == want else [f"total {result['total']}, want {want}"]

    def tables(self, records):
        return {"rows": pd.DataFrame([r["cell"] for r in records])}


CFG = {"profile": "unit", "sample": {"sizes": [3, 7]}}


def test_a_cell_names_its_files_by_its_coordinates():
    cell = Cell(1000, 2)
    assert cell.key == "size-1000_rep-2"
    assert cell.label == "sample size=1000 rep=2"
    assert cell.record("unit") == "data/raw/unit/sample/size-1000_rep-2.json"
    assert str(cell.history("unit")) == "data/raw/unit/sample/history/size-1000_rep-2"


def test_keys_must_be_file_names():
    assert Sample().keys(CFG) == ["size-3_rep-0", "size-7_rep-0"]

    @dataclass(frozen=True)
    class Spaced(SweepCell):
        name: str

    class Bad(Sample):
        def cells(self, cfg):
            return [Spaced("two words")]

    with pytest.raises(ValueError, match="'name-two words'"):
        Bad().keys(CFG)


def test_a_cell_is_found_by_its_key_listing_the_cells_once_per_config():
    calls = []

    class Counted(Sample):
        def cells(self, cfg):
            calls.append(1)
            return super().cells(cfg)

    bench = Counted()
    for _ in range(3):
        assert bench.cell_of(CFG, "size-7_rep-0") == Cell(7, 0) and bench.cell_of(CFG, "size-8_rep-0") is None
    assert len(calls) == 1
    # another config (or this one changed) is listed again, never answered from the old list
    assert bench.cell_of({"profile": "unit", "sample": {"sizes": [8]}}, "size-8_rep-0") == Cell(8, 0)
    assert bench.cell_of(CFG, "size-8_rep-0") is None and len(calls) == 3


def test_the_study_record_comes_from_the_class():
    study = Sample().study()
    assert study.benchmark is not None and study.cell_rule == "sample_cell"
    assert study.cells(CFG) == [Cell(3, 0), Cell(7, 0)]
    assert study.job_seconds["sample_cell"](CFG, {"cell": "size-3_rep-0"}) == 1.0
    function, inputs = study.figures()["sample_rows"]
    assert inputs == ["sample_rows"]
    # the caption, written once, describes the chart too
    assert function(pd.DataFrame({"size": [1]}), {}).to_dict()["description"] == "Rows by size."
    paper = study.paper()
    assert isinstance(paper, BenchmarkPaper)
    assert paper.TABLES == ["sample_rows", "sample_load"] and paper.FRAGMENTS == ["headline", "limitations"]
    lines = study.header(CFG, [("sample_cell", {"cell": "size-7_rep-0"}), ("other", {})])
    assert lines[0].startswith("A SAMPLE (sample)") and lines[1].startswith("Cells to measure: 1 of 2")


def test_a_measurement_that_fails_its_check_is_recorded_as_failed(monkeypatch):
    monkeypatch.setattr("parbench.provenance.collect", lambda cfg, where: {"hostname": "h"})
    ok = runner.measured_record(Sample(), CFG, Cell(3, 0))
    assert ok["status"] == "ok" and ok["failure"] is None and ok["total"] == 3 and ok["profile"] == "unit"
    assert ok["cell"] == {"size": 3, "rep": 0} and ok["provenance"] == {"hostname": "h"}
    wrong = runner.measured_record(Sample(), CFG, Cell(7, 0))
    assert wrong["status"] == "failed" and wrong["failure"] == "total 22, want 21"
    broken = runner.measured_record(Sample(), CFG, Cell(-1, 0))
    assert broken["status"] == "failed" and "the system under test broke" in broken["failure"]
    assert "total" not in broken


class Peers(Sample):
    """A study whose cells write the seed's console beside the record, and whose peer this
    machine lacks."""

    name = "peers"
    SIDE_FILES = {"console": ".txt"}

    @dataclass(frozen=True)
    class Cell(SweepCell):
        peer: str

    def measure(self, cfg, cell):
        if cell.peer == "tbb":
            raise Unavailable("TBB was not built here", {"command": ["driver", "--scheduler", "tbb"]})
        return {"console": ["[02] Time taken: 1.0 seconds"]}

    def check(self, cfg, cell, result):
        return []

    def side_files(self, record):
        return {"console": "".join(f"{line}\n" for line in record.get("console", []))}


def test_a_cell_this_machine_cannot_measure_is_unavailable_not_failed(monkeypatch):
    monkeypatch.setattr("parbench.provenance.collect", lambda cfg, where: {})
    record = runner.measured_record(Peers(), CFG, Peers.Cell("tbb"))
    assert record["status"] == "unavailable" and record["failure"] == "TBB was not built here"
    assert record["command"] == ["driver", "--scheduler", "tbb"]
    assert runner.measured_record(Peers(), CFG, Peers.Cell("ws"))["status"] == "ok"

    class Reasonless(Peers):
        def measure(self, cfg, cell):
            raise Unavailable(None)

    assert runner.measured_record(Reasonless(), CFG, Peers.Cell("ws"))["failure"] is None


def test_a_measurement_may_not_write_the_runners_fields(monkeypatch):
    monkeypatch.setattr("parbench.provenance.collect", lambda cfg, where: {})

    class Clashing(Sample):
        def measure(self, cfg, cell):
            return {"status": "great"}

    with pytest.raises(ValueError, match=r"returned \['status'\], which the runner writes itself"):
        runner.measured_record(Clashing(), CFG, Cell(3, 0))


def test_side_files_are_written_beside_the_record(tmp_path, monkeypatch):
    monkeypatch.setattr("parbench.provenance.collect", lambda cfg, where: {})
    cell = Peers.Cell("ws")
    assert cell.outputs("unit") == {"record": "data/raw/unit/peers/peer-ws.json",
                                    "console": "data/raw/unit/peers/peer-ws.txt"}
    record = runner.measured_record(Peers(), CFG, cell)
    written = runner.write_cell(Peers(), record, str(tmp_path / "peer-ws"))
    assert written == {"console": str(tmp_path / "peer-ws.txt"), "record": str(tmp_path / "peer-ws.json")}
    assert (tmp_path / "peer-ws.txt").read_text() == "[02] Time taken: 1.0 seconds\n"
    assert json.loads((tmp_path / "peer-ws.json").read_text())["console"] == ["[02] Time taken: 1.0 seconds"]
    assert Peers().lines(CFG, cell, record)[0].startswith("peers peer=ws: ok in ")

    class Undeclared(Peers):
        def side_files(self, record):
            return {}

    with pytest.raises(ValueError, match=r"side_files gave \[\], but SIDE_FILES declares \['console'\]"):
        runner.write_cell(Undeclared(), record, str(tmp_path / "x"))


def test_the_run_lists_the_cells_it_recorded_as_failed(tmp_path, monkeypatch):
    monkeypatch.setattr("parbench.provenance.collect", lambda cfg, where: {"hostname": "h"})
    monkeypatch.chdir(tmp_path)
    for cell in Sample().cells(CFG):
        # the life cycle marks each record with its run (parbench.disturbance)
        record = {**runner.measured_record(Sample(), CFG, cell), "run_id": "run-1"}
        path = tmp_path / cell.record("unit")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record))
    [line] = Sample().failures(CFG, "run-1")
    assert line.startswith("FAILED: sample size=7 rep=0: total 22, want 21")
    assert Sample().failures(CFG, "another-run") == []


def test_the_runner_names_the_studies_it_measures():
    with pytest.raises(SystemExit, match="unknown study 'nope'; allowed: sigpar, sched"):
        runner._benchmark("cell", "nope")
    with pytest.raises(SystemExit, match="'sigpar' has commands of its own"):
        runner._benchmark("cell", "sigpar")


def _aggregate(monkeypatch, benchmark, out, inputs):
    """`parbench aggregate sample` with these --input groups, on the unit config."""
    from parbench import config

    monkeypatch.setattr(runner, "_benchmark", lambda command, name, runner_rules=True: benchmark)
    monkeypatch.setattr(config, "load_for_command", lambda command, profile, overrides: CFG)
    args = argparse.Namespace(study="sample", profile="unit", overrides=[], input=inputs, out_dir=str(out))
    return runner.aggregate_main(args)


def test_aggregate_refuses_tables_the_study_does_not_declare(tmp_path, monkeypatch):
    class Undeclared(Sample):
        def tables(self, records):
            return {"other": pd.DataFrame()}

    record = tmp_path / "r.json"
    record.write_text(json.dumps({"cell": {"size": 3, "rep": 0}, "status": "ok"}))
    with pytest.raises(SystemExit, match=r"tables\(\) made \['other'\], but TABLES declares \['rows'\]"):
        _aggregate(monkeypatch, Undeclared(), tmp_path, [["records", str(record)]])


def test_aggregate_writes_the_tables_and_the_load(tmp_path, monkeypatch):
    record = tmp_path / "r.json"
    record.write_text(json.dumps({"cell": {"size": 3, "rep": 0}, "status": "ok", "started_unix": 1.0,
                                  "load": {"other_cores": 0.1}, "attempt": 1}))
    assert _aggregate(monkeypatch, Sample(), tmp_path / "out", [["records", str(record)]]) == 0
    assert pd.read_parquet(tmp_path / "out" / "sample_rows.parquet").to_dict("records") == [{"size": 3, "rep": 0}]
    load = pd.read_parquet(tmp_path / "out" / "sample_load.parquet")
    assert list(load["cell"]) == ["sample size=3 rep=0"] and list(load["load_other_cores"]) == [0.1]


def test_aggregate_names_the_inputs_the_study_reads(tmp_path, monkeypatch):
    class TwoInputs(Sample):
        def aggregate_inputs(self, cfg):
            return {"records": [], "counters": ["counters.json"]}

    with pytest.raises(SystemExit, match=r"--input names \['records'\]; the study reads counters, records"):
        _aggregate(monkeypatch, TwoInputs(), tmp_path, [["records"]])
    with pytest.raises(SystemExit, match=r"--input names none; the study reads counters, records"):
        _aggregate(monkeypatch, TwoInputs(), tmp_path, None)
    with pytest.raises(SystemExit, match=r"\['counters', 'records', 'records'\]; the study reads counters, records"):
        _aggregate(monkeypatch, TwoInputs(), tmp_path, [["records"], ["counters", "c.json"], ["records", "r.json"]])


def test_aggregate_serves_the_studies_with_their_own_cell_rules():
    """`parbench aggregate` takes every registered study (each writes its own seed files);
    `parbench cell` only those on the runner's rules."""
    assert runner._benchmark("aggregate", "sigpar", runner_rules=False).name == "sigpar"
    with pytest.raises(SystemExit, match="unknown study 'nope'"):
        runner._benchmark("aggregate", "nope", runner_rules=False)


def test_a_figure_function_may_be_named_and_is_imported_only_when_drawn():
    frame = pd.DataFrame({"size": [1, 2]})
    here = Figure("sample_rows", f"{__name__}:draw", ("sample_rows",), "fig-sample-rows")
    assert here.draw(frame, {}).to_dict()["mark"]["type"] == "point"

    class Named(Sample):
        FIGURES = (Figure("sample_rows", "draw", ("sample_rows",), "fig-sample-rows"),)

        @property
        def FIGURES_MODULE(self):
            return __name__

    function, inputs = Named().figures()["sample_rows"]
    chart = function(frame, {})
    assert inputs == ["sample_rows"] and chart.description == "Rows by size."
    with pytest.raises(AttributeError):  # a name its figures module lacks
        Figure("sample_rows", "nosuch", ("sample_rows",), "fig-sample-rows").draw(frame, {}, module=__name__)


def test_a_study_with_its_own_rules_reads_its_plan_and_paper_module():
    import types

    from parbench.studies.benchmark import StudyWithOwnRules

    seen = []
    plan = types.SimpleNamespace(
        cells=lambda cfg: [Cell(1, 0), Cell(2, 0)], cell_estimate_sec=lambda cfg, cell: 2.0 * cell.size,
        cell_parameters=lambda cfg, cell: seen.append(cell) or {"size": cell.size})

    class OwnCell(Cell):
        @classmethod
        def from_wildcards(cls, wc):
            return cls(int(wc.size), int(wc.rep))

    class Own(StudyWithOwnRules):
        name = "sched"  # its paper module is sched's
        title, summary, Cell, PLAN = "Own", "its own rules", Cell, plan
        CELL_RULES = {"own_cell": OwnCell}

        def other_job_seconds(self):
            return {"own_build": lambda cfg, wc: 7.0}

    own = Own()
    study = own.study()
    assert not own.RUNNER_RULES and study.cells({}) == [Cell(1, 0), Cell(2, 0)]
    # a job of its cell rule is the cell its wildcards name (rep 0 where the rule has none)
    assert study.job_seconds["own_cell"]({}, {"size": "2"}) == 4.0 and study.job_seconds["own_build"]({}, {}) == 7.0
    assert study.header({}, [("own_cell", {"size": "2", "rep": "0"}), ("own_build", {})]) == [
        "OWN (sched): its own rules", "Cells to measure: 1 of 2 (1 already measured), ~4s"]
    assert own.cell_parameters({}, Cell(3, 0)) == {"size": 3} and seen
    assert study.paper().__name__ == "parbench.studies.sched.paper"
    with pytest.raises(SystemExit, match="this runner measures"):  # `parbench cell` is not its command
        runner._benchmark("cell", "sched")
    # a failed cell is named after the study, once, whatever its own label says
    assert own.failure_label(types.SimpleNamespace(label="quicksort ws t2 r0")) == "sched quicksort ws t2 r0"
    assert own.failure_label(types.SimpleNamespace(label="sched zoom")) == "sched zoom"
