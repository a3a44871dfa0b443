"""The order cells run in: repeated cells interleaved, repetition by repetition, the cells
of all studies shuffled together by the config's seed; the planned order kept with the
seed; and, in the pipeline, no cell before every build is done."""

import json

import pytest

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


def _group(study, cell):
    """What drift must not hit alone: a study, and within sigpar each mode and backend."""
    if study == "sigpar":
        return f"sigpar/{cell.mode}/{cell.backend}"
    return study


@pytest.mark.parametrize("profile", ["local", "m4"])
def test_every_quarter_of_the_run_holds_cells_of_every_study_and_backend(profile):
    """Drift of the machine over the run hits every study, mode and backend alike: each
    quarter of the planned order holds cells of each of them (with the local profile's
    three and the m4 profile's five repetitions)."""
    order = pipeline.run_order(pbconfig.load(profile))
    groups = {_group(s, c) for s, c in order}
    n = len(order)
    for q in range(4):
        quarter = order[q * n // 4:(q + 1) * n // 4]
        missing = groups - {_group(s, c) for s, c in quarter}
        assert not missing, f"quarter {q + 1} of {n} cells lacks {sorted(missing)}"


def test_every_cell_of_the_pipeline_waits_for_every_build():
    """The rules: each measured job takes the builds barrier as an input, and the barrier
    takes every build of the run."""
    import re
    from pathlib import Path

    rules = Path(__file__).resolve().parents[1] / "workflow" / "rules"
    measured = {"sigpar_cell", "sched_cell", "sched_fracsteal_zoom", "dispatch_cell", "kem_cell", "kem_throughput",
                "kem_counters", "gil_cell", "machine_probe"}
    for path in rules.glob("*.smk"):
        for name, body in re.findall(r"^rule (\w+):\n(.*?)(?=^rule |\Z)", path.read_text(), re.S | re.M):
            if name in measured:
                assert "builds=after_builds()" in body, f"{path.name}: rule {name} does not wait for the builds"
                measured.discard(name)
    assert not measured, f"rules not found: {measured}"
