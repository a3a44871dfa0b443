"""No machine spread stops the paper. Three fresh runs stopped at the paper check on a
verdict decided just past its bar that no text wrote (a cell the text left out of a list,
a verdict computed for every row but written for some): data shapes the study tests did
not have. Here every study's parts are rendered from the tables of three real runs (two
quiet ones, `local` and `local2`, and one at a 20% spread, `noisy`; each file its own so
that the suite's workers share them) at machine spreads from 0.5% to 100%, each
10% above the last, so that every verdict those tables hold falls just past its bar (its
two values apart by no more than 10% beyond the spread) at one of them, and decided by the
spread alone at the ones above; the texts must then still give every such verdict's note
and the spread beside it (`check.whole_text_problems`).

Refresh each like `local` (tools/refresh_paper_fixtures.py, with the fixture's name), or
add another, from a run whose tables give shapes the others lack."""

import copy
import json
from pathlib import Path

import pandas as pd
import pytest

from parbench import studies
from parbench.paper import check, render_study
from parbench.paper.facts import EDGE_MARGIN, SPREAD_PATH

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "paper_tables"
# each spread EDGE_MARGIN above the last: a verdict's window just past its bar (its two
# values apart by more than the spread, by no more than EDGE_MARGIN beyond it) holds one
SPREADS = [0.005 * (1 + EDGE_MARGIN) ** i for i in range(57)]


def _tables(name: str):
    folder = FIXTURES / name
    machine = json.loads((folder / "machine.json").read_text())
    return machine, {p.stem: pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))}


def problems_at_each_spread(name: str, study) -> dict[str, float]:
    """Each problem the study's texts show at some spread, with the first spread it shows at."""
    machine, tables = _tables(name)
    paper = study.paper()
    inputs = {t: tables[t] for t in paper.TABLES}
    found: dict[str, float] = {}
    for spread in SPREADS:
        at = copy.deepcopy(machine)
        section, key = SPREAD_PATH.split(".")
        at[section][key] = spread
        parts, facts, _ = render_study(study.name, paper, inputs, at)
        for problem in check.whole_text_problems(check.study_texts(study.name, parts), facts):
            found.setdefault(problem, spread)
    return found


def assert_no_spread_leaves_a_verdict_unsaid(name: str, study) -> None:
    if not (FIXTURES / name / "machine.json").exists():
        pytest.skip(f"no fixture tables {name}")
    found = problems_at_each_spread(name, study)
    assert not found, "\n".join(f"at a {spread:.2%} spread: {p}" for p, spread in found.items())


# the quiet run's tables here, the noisy run's in test_paper_spreads_noisy.py: two files,
# which the suite's workers take one each
@pytest.mark.parametrize("study", studies.registered(), ids=lambda s: s.name)
def test_no_spread_leaves_a_verdict_unsaid(study):
    assert_no_spread_leaves_a_verdict_unsaid("local", study)


def test_the_spreads_reach_every_window_just_past_a_bar():
    # consecutive spreads EDGE_MARGIN apart: a margin anywhere in the range is just past one
    for low, high in zip(SPREADS, SPREADS[1:]):
        assert high <= low * (1 + EDGE_MARGIN) * (1 + 1e-12)
    assert SPREADS[0] <= 0.005 and SPREADS[-1] >= 1.0
