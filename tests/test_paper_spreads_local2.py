"""No machine spread stops the paper, on a second quiet run's tables (`local2`, a 2.3%
spread, measured at 6d56f51): the test of test_paper_spreads.py, in a file of its own so
that the suite's workers share the sweep. Its shapes found what the other two runs' did
not: sigpar's threading cells below the seed's 85% mark listed without the note of one
just past it, and gil's report counting runtimes' workloads the spread alone decided
without giving the spread."""

import pytest

from parbench import studies
from test_paper_spreads import assert_no_spread_leaves_a_verdict_unsaid


@pytest.mark.parametrize("study", studies.registered(), ids=lambda s: s.name)
def test_no_spread_leaves_a_verdict_unsaid_on_a_second_quiet_run(study):
    assert_no_spread_leaves_a_verdict_unsaid("local2", study)
