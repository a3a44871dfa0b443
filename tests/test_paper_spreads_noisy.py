"""No machine spread stops the paper, on the noisy run's tables (a 20.2% spread): the
test of test_paper_spreads.py, in a file of its own so that the suite's two workers share
the sweep."""

import pytest

from parbench import studies
from test_paper_spreads import assert_no_spread_leaves_a_verdict_unsaid


@pytest.mark.parametrize("study", studies.registered(), ids=lambda s: s.name)
def test_no_spread_leaves_a_verdict_unsaid_on_a_noisy_run(study):
    assert_no_spread_leaves_a_verdict_unsaid("noisy", study)
