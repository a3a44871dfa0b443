"""The paper's studies, whose cells parbench's runner measures (parbench.runner.run_cell):
a cell whose measurement raised is recorded as failed with the error, keeps every field
its study reads of a record, is printed as FAILED, and its study's tables are still made
(one broken cell never stops a study's aggregate)."""

import pytest

from parbench import config as pbconfig
from parbench import runner


def broken(*args, **kwargs):
    raise RuntimeError("the measured system broke")


def sched(monkeypatch, cfg):
    from parbench.studies.sched import aggregate, plan, run_cell

    monkeypatch.setattr(plan, "driver_command", broken)
    cell = plan.cells(cfg)[0]
    return run_cell.Sched(), cell, lambda records: aggregate.console_blocks(
        aggregate.study_tables(records)["summary"], records)


def kem(monkeypatch, cfg):
    from parbench.studies.kem import aggregate, plan, study

    monkeypatch.setattr(study, "run_binary", broken)
    cycles, throughput = plan.cycles_cells(cfg)[0], plan.throughput_cells(cfg)[0]
    bench = study.Kem("kem-cell", "parbench-kem", None)
    counters = {"selected": {"name": "TIMER", "unit": "ns", "core_cycles": False}, "counters": []}

    def tables(records):
        thread_sweep = [runner.measured_record(bench, cfg, throughput)]
        assert thread_sweep[0]["status"] == "failed"
        bench.lines(cfg, throughput, thread_sweep[0])
        aggregate.study_tables(records, thread_sweep, counters)
        return aggregate.seed_results(records)

    return bench, cycles, tables


def gil(monkeypatch, cfg):
    from parbench.studies.gil import aggregate, plan, study
    from parbench.studies.gil import runtimes as rt

    monkeypatch.setattr(study, "run_worker", broken)
    cell = next(c for c in plan.cells(cfg) if c.runtime == "cpython")
    resolutions = [r.summary() for r in rt.resolve_all(cfg)]
    return study.Gil(), cell, lambda records: aggregate.study_tables(records, resolutions, 0.95, "cpython")


def dispatch(monkeypatch, cfg):
    from parbench.studies.dispatch import aggregate, plan, study

    monkeypatch.setattr(study, "make_runner", broken)
    cell = next(c for c in plan.cells(cfg) if c.kind == "platform")

    def tables(records):
        made = aggregate.study_tables(records)
        return aggregate.seed_report(made["summary"], made["cells"])

    return study.Dispatch(), cell, tables


def sigpar(monkeypatch, cfg):
    from parbench.studies.sigpar import aggregate, plan, study
    from parbench.studies.sigpar import cell as cellmod

    monkeypatch.setattr(cellmod, "measure", broken)
    cell = next(c for c in plan.cells(cfg) if not c.needs_shim)
    return study.Sigpar(), cell, lambda records: aggregate.study_tables(records)


@pytest.mark.parametrize("study", [sigpar, sched, kem, gil, dispatch], ids=lambda s: s.__name__)
def test_a_cell_whose_measurement_raised_is_failed_and_its_study_still_aggregates(study, monkeypatch):
    monkeypatch.setattr("parbench.provenance.collect", lambda cfg, where: {"hostname": "h"})
    cfg = pbconfig.load("smoke")
    bench, cell, tables = study(monkeypatch, cfg)
    record = runner.measured_record(bench, cfg, cell)
    assert record["status"] == "failed" and record["failure"] == "RuntimeError: the measured system broke"
    assert set(bench.empty_result(cfg, cell)) <= set(record)
    assert any("FAILED" in line for line in bench.lines(cfg, cell, record))
    tables([record])
