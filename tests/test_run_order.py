"""The order cells run in: repeated cells interleaved, repetition by repetition, each
repetition shuffled by the config's seed; the planned order kept with the seed."""

import json

from parbench import config as pbconfig
from parbench import pipeline
from parbench.studies.sigpar import plan


def sigpar_order(cfg):
    return [cell for study, cell in pipeline.run_order(cfg) if study == "sigpar"]


def test_every_cell_runs_once_before_any_runs_again():
    cfg = pbconfig.load("smoke", ["studies=[sigpar]", "sigpar.repetitions=3"])
    order = sigpar_order(cfg)
    assert sorted(order) == sorted(plan.cells(cfg))
    reps = [c.rep for c in order]
    assert reps == sorted(reps)  # all of repetition 0, then 1, then 2
    per_rep = len(order) // 3
    first, second = order[:per_rep], order[per_rep:2 * per_rep]
    # each repetition is shuffled on its own: not the plan's order, and not the same twice
    planned = [c for c in plan.cells(cfg) if c.rep == 0]
    assert first != planned
    assert [(c.algorithm, c.operation, c.mode, c.workers, c.backend) for c in first] != \
           [(c.algorithm, c.operation, c.mode, c.workers, c.backend) for c in second]


def test_the_seed_decides_the_order():
    one = pbconfig.load("smoke", ["studies=[sigpar]", "sigpar.repetitions=2"])
    again = pbconfig.load("smoke", ["studies=[sigpar]", "sigpar.repetitions=2"])
    other = pbconfig.load("smoke", ["studies=[sigpar]", "sigpar.repetitions=2", "run_order_seed=7"])
    assert sigpar_order(one) == sigpar_order(again)
    assert sigpar_order(one) != sigpar_order(other)
    assert sorted(sigpar_order(one)) == sorted(sigpar_order(other))


def test_priorities_follow_the_run_order():
    cfg = pbconfig.load("smoke", ["studies=[sigpar]", "sigpar.repetitions=2"])
    priorities = pipeline.cell_priorities(cfg)
    ranked = sorted(priorities, key=priorities.get, reverse=True)
    assert ranked == pipeline.run_order(cfg)


def test_the_planned_order_is_kept_with_its_seed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = pbconfig.load("smoke", ["studies=[sigpar]", "sigpar.repetitions=2"])
    path = pipeline.write_run_order(cfg, [], "run-1")
    doc = json.loads(path.read_text())
    assert doc["seed"] == cfg["run_order_seed"] and doc["run_id"] == "run-1"
    assert [d["cell"]["rep"] for d in doc["cells"]][:1] == [0] and len(doc["cells"]) == len(plan.cells(cfg))
    # a second run writes a file of its own
    assert pipeline.write_run_order(cfg, [], "run-2") != path


def test_a_bad_seed_is_refused():
    import pytest

    with pytest.raises(pbconfig.ConfigError, match="run_order_seed"):
        pbconfig.load("smoke", ["run_order_seed=soon"])
