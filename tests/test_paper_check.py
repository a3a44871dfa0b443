"""The paper check: facts computed again from their sources, the prose held to its facts,
templates without numbers or comparisons of their own, figures against their data, the
PDF against its page."""

from pathlib import Path

import altair as alt
import pandas as pd
import pytest

from parbench.paper import check, figure_check, templates
from parbench.paper.facts import Facts, finer_format, judge, margin_as_written, write_value

REPO = Path(__file__).resolve().parents[1]
SAME = "not distinguishable on this machine from"


def cells():
    return pd.DataFrame({
        "algorithm": ["RSA-2048", "RSA-2048", "Ed25519", "Ed25519"],
        "workers": [1, 2, 1, 2],
        "ops_per_sec": [100.0, 190.0, 500.0, 900.0],
        "ops_per_sec_ci_low": [95.0, 180.0, 480.0, 700.0],
        "ops_per_sec_ci_high": [105.0, 200.0, 520.0, 1000.0],
        "status": ["ok", "ok", "ok", "ok"],
    })


def facts(frame=None):
    return Facts("t", {"cells": cells() if frame is None else frame}, {"cells": ["algorithm", "workers"]},
                 {"config": {"t": {"duration_sec": 2.0}}, "machine": {"logical_cores": 2}})


def test_a_lookup_whose_interval_columns_do_not_exist_is_refused():
    # the interval looked up under another name read as none, and a verdict on it said
    # "not distinguishable" where the data could tell
    frame = cells().rename(columns={"ops_per_sec_ci_low": "rate_ci_low", "ops_per_sec_ci_high": "rate_ci_high"})
    f = facts(frame)
    with pytest.raises(KeyError, match="ops_per_sec_ci_low"):
        f.lookup("rate", "cells", frame.iloc[1], "ops_per_sec")
    assert f.lookup("rate_alone", "cells", frame.iloc[1], "ops_per_sec", interval=False).ci is None


def test_a_lookup_names_its_row_and_writes_its_interval():
    f = facts()
    row = cells().iloc[1]
    fact = f.lookup("rate", "cells", row, "ops_per_sec", unit="ops/s", about=("RSA-2048",))
    assert fact.text == "190 (180–200) ops/s"
    assert fact.source["where"] == {"algorithm": "RSA-2048", "workers": 2}
    assert str(fact) == '[190 (180–200) ops/s]{.fact key="t.rate"}'


def test_an_interval_end_is_never_written_as_parity_when_it_is_not():
    # an upper end of 0.9996 beside "below parity" must not read 1.00
    assert write_value(0.95, "fixed2", ci=(0.88, 0.9996)) == "0.95 (0.88–0.9996)"
    assert write_value(0.95, "fixed2", ci=(0.88, 1.0)) == "0.95 (0.88–1.00)"  # parity itself stays
    assert write_value(0.99, "pct", ci=(0.97, 0.9996)) == "99% (97%–99.96%)"
    assert write_value(1.2, "num", "x", ci=(1.0004, 1.3)) == "1.2 (1.0004–1.3)x"
    assert write_value(110, "num", "ms", ci=(100, 120)) == "110 (100–120) ms"  # 100 is not 100%
    # the tables write their intervals by the same rule (a table's "1.12 (1.00–1.19)" beside
    # a verdict that the ratio lies above one read as a contradiction)
    from parbench.paper.format import fmt_ci

    def two(x):
        return f"{x:.2f}"

    assert fmt_ci(1.12, 1.003, 1.19, two) == "1.12 (1.003–1.19)"
    assert fmt_ci(0.5, 0.45, 0.999, two) == "0.50 (0.45–0.999)"
    assert fmt_ci(0.5, 0.45, 1.0, two) == "0.50 (0.45–1.00)"
    # and the median by the same rule where it has an interval
    assert fmt_ci(1.0023, 1.002, 1.003, two) == "1.002 (1.002–1.003)"
    assert write_value(0.9995, "fixed2", ci=(0.99, 0.9996)) == "0.9995 (0.99–0.9996)"
    # only there: a median that its written interval holds keeps its digits
    assert fmt_ci(0.9991, 0.93, 1.05, two) == "1.00 (0.93–1.05)"
    assert write_value(0.9991, "pct", ci=(0.93, 1.05)) == "100% (93%–105%)"


def test_an_interval_end_never_drops_the_digits_that_set_it_apart_from_a_whole_number():
    # 3 significant digits drop the zeros after the point: 1.9986 and 2.0001 both read "2",
    # linear speedup at 2 threads, beside a verdict that the speedup lies below it or not
    assert write_value(1.91, "num", ci=(1.83, 1.9986)) == "1.91 (1.83–1.999)"
    assert write_value(1.91, "num", ci=(1.83, 2.0001)) == "1.91 (1.83–2.0001)"
    assert write_value(1.91, "num", ci=(1.83, 2.0)) == "1.91 (1.83–2)"  # the whole number itself stays
    assert write_value(68, "num", "ms", ci=(65.012, 71.2)) == "68 (65.01–71.2) ms"  # no more digits than needed
    assert write_value(500, "num", ci=(499.6, 512)) == "500 (500–512)"  # three digits shown: nothing dropped
    assert write_value(4, "num", ci=(4, 4)) == "4 (4–4)"


def test_a_median_and_its_interval_keep_the_zeros_of_their_three_digits():
    # "1 (0.933–1.02) s": a median rounded onto a whole number read to fewer digits than its
    # interval's ends; its three digits keep their zeros, and so do the ends
    assert write_value(0.99985, "num", "s", ci=(0.933, 1.02)) == "1.00 (0.933–1.02) s"
    assert write_value(2.0996, "num", ci=(2.09, 2.0999)) == "2.10 (2.09–2.10)"
    assert write_value(32.998, "num", "tasks/s", ci=(32.97, 33.04)) == "33.0 (32.97–33.04) tasks/s"
    # an exact value is as it is, and one with three digits, and one without an interval
    assert write_value(2.0, "num", ci=(1.9, 2.1)) == "2 (1.9–2.1)"
    assert write_value(1234.4, "num", ci=(1200, 1260)) == "1,234 (1,200–1,260)"
    assert write_value(0.99985, "num", "s") == "1 s"


def test_angle_brackets_in_a_fact_or_a_table_survive_markdown():
    # perf's own words: Markdown would take <not supported> for an HTML tag and drop it
    f = Facts("t", {}, {}, {"capabilities": {"cycle_counter": {"reason": "perf reports <not supported>"}}})
    fact = f.machine_value("why", "capabilities.cycle_counter.reason", fmt="plain")
    assert str(fact).startswith("[perf reports \\<not supported\\>]")
    assert check.prose_problems(f"The counter is missing: {fact}.", f.records(), "x") == []
    from parbench.paper.format import md_table

    table = md_table(pd.DataFrame({"why": ["reports <not supported>"], "n": ["1<br>(0–2)"]}), "C.", "tbl-x")
    assert "reports \\<not supported\\>" in table and "1\\" in table  # the line break stays one


def test_verdicts_say_faster_only_where_the_intervals_are_apart():
    assert judge(500, (480, 520), 100, (95, 105), better="faster than", worse="slower than", same=SAME) == "faster than"
    assert judge(100, (95, 105), 500, (480, 520), better="faster than", worse="slower than",
                 same=SAME) == "slower than"
    assert judge(190, (180, 200), 195, (185, 205), better="faster than", worse="slower than", same=SAME) == SAME
    # no interval (one repetition): never ranked
    assert judge(500, None, 100, (95, 105), better="faster than", worse="slower than", same=SAME) == SAME
    # lower is better (a time)
    assert judge(1.0, (0.9, 1.1), 2.0, (1.9, 2.1), better="faster than", worse="slower than", same=SAME,
                 higher_is_better=False) == "faster than"


def test_a_difference_within_the_machines_spread_is_no_verdict():
    # disjoint intervals 2% apart (a quicksort's 26 microseconds): the machine's own spread
    # of 2.45% could make it, so no ranking
    assert judge(1.300, (1.298, 1.302), 1.274, (1.270, 1.276), better="faster than", worse="slower than",
                 same=SAME, higher_is_better=False, min_relative=0.0245) == SAME
    assert judge(1.300, (1.298, 1.302), 1.274, (1.270, 1.276), better="faster than", worse="slower than",
                 same=SAME, higher_is_better=False) == "slower than"
    # 10% apart: a finding
    assert judge(1.40, (1.39, 1.41), 1.274, (1.270, 1.276), better="faster than", worse="slower than",
                 same=SAME, higher_is_better=False, min_relative=0.0245) == "slower than"


def test_verdicts_take_the_spread_from_the_machine_and_the_check_recomputes_it():
    frame = pd.DataFrame([{"name": "a", "ops_per_sec": 102.0, "ops_per_sec_ci_low": 101.5, "ops_per_sec_ci_high": 102.5},
                          {"name": "b", "ops_per_sec": 100.0, "ops_per_sec_ci_low": 99.5, "ops_per_sec_ci_high": 100.5}])
    steady = {"cpu_stability": {"cv": 0.005}}
    shaky = {"cpu_stability": {"cv": 0.05}}
    for machine, word in ((steady, "faster than"), (shaky, SAME)):
        f = Facts("t", {"cells": frame}, {"cells": ["name"]}, machine)
        v = f.verdict("v", f.lookup("a", "cells", frame.iloc[0], "ops_per_sec"),
                      f.lookup("b", "cells", frame.iloc[1], "ops_per_sec"), better="faster than", worse="slower than")
        assert v.value == word
        records = f.records()
        assert check.fact_problems(records, check.Sources({"cells": frame}, machine, check.seeds_dir())) == []
    # a verdict written on a steady machine's spread fails against the shaky one's record
    problems = check.fact_problems(records, check.Sources({"cells": frame}, steady, check.seeds_dir()))
    assert any("t.v" in p for p in problems), problems


def _spread_facts(machine):
    """Three cells against full efficiency (1.0): one whose interval holds it, one whose
    interval misses it by less than the machine's spread, one far below it."""
    frame = pd.DataFrame([{"name": n, "eff": v, "eff_ci_low": lo, "eff_ci_high": hi}
                          for n, v, lo, hi in (("holds", 0.99, 0.96, 1.01), ("near", 0.98, 0.96, 0.99),
                                               ("far", 0.80, 0.78, 0.82))])
    f = Facts("t", {"cells": frame}, {"cells": ["name"]}, machine)
    verdicts = [f.bound_verdict(f"v.{r['name']}", f.lookup(r["name"], "cells", r, "eff", fmt="pct"), 1.0,
                                better="above", worse="below") for _, r in frame.iterrows()]
    return f, frame, verdicts


def test_a_verdict_the_machines_spread_alone_decided_says_so_and_is_checked():
    machine = {"cpu_stability": {"cv": 0.024}}
    f, frame, (holds, near, far) = _spread_facts(machine)
    # "near" is called not distinguishable though its interval misses 100%: the spread
    # decided it, and the fact carries the spread for the note the sentence owes
    assert (holds.value, near.value, far.value) == (SAME, SAME, "below")
    assert holds.spread is None and far.spread is None and near.spread.text == "2.4%"
    n = f.count_within_spread("n_spread", [holds, near, far])
    assert n.value == 1 and n.spread.key == near.spread.key == "t.machine_spread"
    records = f.records()
    assert records["t.v.near"]["within_spread"] and not records["t.v.holds"]["within_spread"]
    src = check.Sources({"cells": frame}, machine, check.seeds_dir())
    assert check.fact_problems(records, src) == []
    # a record that hides the spread's part, or a count that leaves it out, is caught
    hidden = {**records, "t.v.near": {**records["t.v.near"], "within_spread": False}}
    assert any("t.v.near" in p and "spread" in p for p in check.fact_problems(hidden, src))
    miscounted = {**records, "t.n_spread": {**records["t.n_spread"], "value": 0, "text": "0"}}
    assert any("t.n_spread" in p for p in check.fact_problems(miscounted, src))
    # on a machine with no measured spread the same cell is below, and nothing is noted
    f, _, (_, near, _) = _spread_facts({})
    assert near.value == "below" and near.spread is None
    assert f.count_within_spread("n_spread", [near]).spread is None


def test_a_verdict_with_a_floor_needs_a_difference_beyond_its_cells_own_drift():
    # two cells run once: tight intervals over their calls, 3% apart; the machine's spread
    # (1%) would rank them, but one drifted 4% within its run
    frame = pd.DataFrame([{"name": "a", "t": 103.0, "t_ci_low": 102.9, "t_ci_high": 103.1, "drift": 0.04},
                          {"name": "b", "t": 100.0, "t_ci_low": 99.9, "t_ci_high": 100.1, "drift": 0.005}])
    machine = {"cpu_stability": {"cv": 0.01}}
    f = Facts("t", {"cells": frame}, {"cells": ["name"]}, machine)
    a, b = (f.lookup(n, "cells", frame.iloc[i], "t") for i, n in enumerate("ab"))
    drifts = tuple(f.lookup(f"drift.{n}", "cells", frame.iloc[i], "drift", fmt="pct1", interval=False)
                   for i, n in enumerate("ab"))
    v = f.verdict("v", a, b, better="faster than", worse="slower than", higher_is_better=False, floor=drifts)
    plain = f.verdict("plain", a, b, better="faster than", worse="slower than", higher_is_better=False)
    assert v.value == SAME and plain.value == "slower than"
    assert v.spread.key == "t.drift.a" and v.spread.text == "4.0%"  # what decided it, for the note
    src = check.Sources({"cells": frame}, machine, check.seeds_dir())
    records = f.records()
    assert check.fact_problems(records, src) == []
    # the floor is read from the tables: a drift the table no longer holds moves the verdict
    steady = frame.assign(drift=[0.001, 0.001])
    problems = check.fact_problems(records, check.Sources({"cells": steady}, machine, check.seeds_dir()))
    assert any(p.startswith("t.v:") for p in problems) and any(p.startswith("t.drift.a:") for p in problems)
    # such a verdict is not counted with those the machine's spread decided
    with pytest.raises(ValueError, match="drift"):
        f.count_within_spread("n", [v])


def test_a_bound_verdict_with_a_floor_needs_a_difference_beyond_its_cells_own_drift():
    # a ratio of two cells run once, 3% above a published 1.0; one of its cells drifted 4%
    frame = pd.DataFrame([{"name": "r", "ratio": 1.03, "ratio_ci_low": 1.029, "ratio_ci_high": 1.031,
                           "drift": 0.04}])
    machine = {"cpu_stability": {"cv": 0.01}}
    f = Facts("t", {"cells": frame}, {"cells": ["name"]}, machine)
    r = f.lookup("r", "cells", frame.iloc[0], "ratio", fmt="fixed3")
    drift = f.lookup("drift.r", "cells", frame.iloc[0], "drift", fmt="pct1", interval=False)
    v = f.bound_verdict("v", r, 1.0, better="above", worse="below", floor=(drift,))
    plain = f.bound_verdict("plain", r, 1.0, better="above", worse="below")
    assert (v.value, plain.value) == (SAME, "above") and v.spread.key == "t.drift.r" and plain.spread is None
    src = check.Sources({"cells": frame}, machine, check.seeds_dir())
    records = f.records()
    assert records["t.v"]["within_spread"] and check.fact_problems(records, src) == []
    # checked against the tables: once the cell no longer drifts, the stated verdict is caught
    steady = check.Sources({"cells": frame.assign(drift=0.001)}, machine, check.seeds_dir())
    assert any(p.startswith("t.v:") for p in check.fact_problems(records, steady))


def test_the_spread_macros_write_the_note_only_where_the_spread_decided(tmp_path):
    f, _, (holds, near, far) = _spread_facts({"cpu_stability": {"cv": 0.024}})
    n = f.count_within_spread("n_spread", [holds, near, far])
    zero = f.count_within_spread("n_zero", [holds, far])
    part = tmp_path / "study" / "part.md"
    part.parent.mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "_spread.md").write_text((REPO / "paper/sections/shared/_spread.md").read_text())
    part.write_text('{% from "shared/_spread.md" import spread_note, spread_count %}'
                    '{% for v in vs %}[{{ spread_note(v, "full efficiency") }}]{% endfor %}'
                    '{{ spread_count(n, "full efficiency") }}|{{ spread_count(zero, "full efficiency") }}\n')
    out = templates.render(part.parent, "part", {"vs": [holds, near, far], "n": n, "zero": zero})
    assert out == ("[][, its median within the machine's " + str(near.spread) + " spread of full efficiency][]"
                   " (" + str(n) + " of them only because its median lies within the machine's " + str(n.spread)
                   + " spread of full efficiency, its interval apart from it)|\n")


def test_a_count_the_spread_alone_decided_says_which_side_its_members_lie(tmp_path):
    # 12 efficiencies not told from full only by the spread, 11 of them below it: the count
    # hid the direction they share
    rows = [("a", 0.97, 0.96, 0.98), ("b", 0.98, 0.97, 0.99), ("c", 1.02, 1.01, 1.03), ("d", 0.96, 0.955, 0.965)]
    frame = pd.DataFrame([{"name": n, "eff": v, "eff_ci_low": lo, "eff_ci_high": hi} for n, v, lo, hi in rows])
    machine = {"cpu_stability": {"cv": 0.05}}
    f = Facts("t", {"cells": frame}, {"cells": ["name"]}, machine)
    vs = [f.bound_verdict(f"v.{r['name']}", f.lookup(r["name"], "cells", r, "eff", fmt="pct"), 1.0, better="above",
                          worse="below") for _, r in frame.iterrows()]
    n = f.count_within_spread("n", vs)
    few = f.count_within_spread("few", vs[2:3])
    assert n.value == 4 and [s.value for s in n.sides] == [3, 1] and few.value == 1
    src = check.Sources({"cells": frame}, machine, check.seeds_dir())
    records = f.records()
    assert check.fact_problems(records, src) == []
    moved = {**records, "t.n.below": {**records["t.n.below"], "value": 4, "text": "4"}}
    assert any(p.startswith("t.n.below:") for p in check.fact_problems(moved, src))
    part = tmp_path / "study" / "part.md"
    part.parent.mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "_spread.md").write_text((REPO / "paper/sections/shared/_spread.md").read_text())
    part.write_text('{% from "shared/_spread.md" import spread_count %}{{ spread_count(n, "full efficiency") }}|'
                    '{{ spread_count(low, "full efficiency") }}\n')
    low = f.count_within_spread("low", [vs[0], vs[1]])
    out = templates.render(part.parent, "part", {"n": n, "low": low})
    below, above = n.sides
    # each of the 4 not told apart was so only by the spread: "all 4", not "4 of them"
    assert out.lstrip().startswith(f"(all {n} only because their medians lie within the machine's {n.spread} spread of "
                          f"full efficiency, their intervals apart from it, {below} below it and {above} above)|")
    assert out.endswith("their intervals apart from it, all below it)\n")
    # among more that are not distinguishable, "of them"; one alone, "only because"
    some = f.count_within_spread("some", [*vs, f.bound_verdict("v.same", f["a"], 0.975, better="above", worse="below")])
    alone = f.count_within_spread("alone", vs[3:])
    out = templates.render(part.parent, "part", {"n": some, "low": alone})
    assert out.lstrip().startswith(f"({some} of them only because") and "| (only because its median lies" in out


def _edge_facts(machine, floor_drift=None):
    """Three cells against a reference of 100: 2.43% below it (just past a 2.425% spread),
    5% below it (well past) and 1% below it (within); tight intervals, all apart."""
    rows = [("ref", 100.0), ("edge", 97.57), ("clear", 95.0), ("within", 99.0)]
    frame = pd.DataFrame([{"name": n, "rate": v, "rate_ci_low": v - 0.01, "rate_ci_high": v + 0.01,
                           "drift": floor_drift or 0.0} for n, v in rows])
    f = Facts("t", {"cells": frame}, {"cells": ["name"]}, machine)
    ref = f.lookup("ref", "cells", frame.iloc[0], "rate")
    floor = () if floor_drift is None else (f.lookup("drift", "cells", frame.iloc[1], "drift", fmt="pct1",
                                                     interval=False),)
    verdicts = [f.verdict(f"v.{n}", f.lookup(n, "cells", frame.iloc[i], "rate", about=(n,)), ref,
                          better="higher than", worse="lower than", floor=floor)
                for i, n in enumerate(("edge", "clear", "within"), 1)]
    return f, frame, verdicts


def test_a_verdict_just_past_its_bar_carries_its_margin_and_bar_and_is_checked():
    machine = {"cpu_stability": {"cv": 0.02425}}
    f, frame, (edge, clear, within) = _edge_facts(machine)
    assert (edge.value, clear.value, within.value) == ("lower than", "lower than", SAME)
    assert clear.edge is None and within.edge is None
    # written to the digit that tells the two apart: 2.4% and 2.4% would read alike
    assert (edge.edge.margin.text, edge.edge.bar.text) == ("2.430%", "2.425%")
    assert edge.edge.machine and edge.edge.names == {"shared": [], "a": ["edge"], "b": ["ref"]}
    records = f.records()
    assert records["t.v.edge"]["near_bar"] and not records["t.v.clear"]["near_bar"]
    src = check.Sources({"cells": frame}, machine, check.seeds_dir())
    assert check.fact_problems(records, src) == []
    # a record that hides the edge is caught, and so is a margin the tables do not give
    hidden = {**records, "t.v.edge": {**records["t.v.edge"], "near_bar": False}}
    assert any(p.startswith("t.v.edge:") and "just past" in p for p in check.fact_problems(hidden, src))
    moved = check.Sources({"cells": frame.assign(rate=frame["rate"].where(frame["name"] != "edge", 97.0))},
                          machine, check.seeds_dir())
    assert any(p.startswith("t.v.edge.margin:") for p in check.fact_problems(records, moved))
    # a steadier machine's record makes the same verdict a clear one: caught
    steady = check.Sources({"cells": frame}, {"cpu_stability": {"cv": 0.01}}, check.seeds_dir())
    problems = check.fact_problems(records, steady)
    assert any(p.startswith("t.v.edge:") for p in problems) and any(p.startswith("t.v.edge.bar:") for p in problems)
    # no bar measured, no edge
    _, _, (edge, _, _) = _edge_facts({})
    assert edge.value == "lower than" and edge.edge is None


def test_a_notes_names_are_its_two_rows_what_they_share_then_each_ones_own():
    # the footnote said "For ECDSA-P256," of openssl-cffi's sign against the native runner's
    keys = ["algorithm", "operation", "mode", "backend", "workers", "hostname"]
    rows = pd.DataFrame([
        {"algorithm": "ECDSA-P256", "operation": "sign", "mode": m, "backend": b, "workers": 1, "hostname": "vm",
         "rate": r, "rate_ci_low": r - 1, "rate_ci_high": r + 1}
        for m, b, r in (("threading", "openssl-cffi", 62523.0), ("native-threads", "native", 68484.0))])
    f = Facts("t", {"cells": rows}, {"cells": keys}, {"cpu_stability": {"cv": 0.0866}})
    a, b = (f.lookup(f"r{i}", "cells", rows.iloc[i], "rate", about=("ECDSA-P256",)) for i in (0, 1))
    edge = f.verdict("v", a, b, better="higher than", worse="lower than")
    assert edge.value == "lower than" and edge.edge is not None
    # no hostname, no worker count (a number the prose may not state), "native" held by "native-threads"
    assert edge.edge.names == {"shared": ["ECDSA-P256", "sign"], "a": ["threading", "openssl-cffi"],
                               "b": ["native-threads"]}
    # against a fixed mark: the row's names alone
    mark = f.bound_verdict("m", a, 68484.0, better="higher than", worse="lower than")
    assert mark.edge.names == {"shared": ["ECDSA-P256", "sign", "threading", "openssl-cffi"], "a": [], "b": []}
    # a value about a name its row does not spell (sched's "the TBB task_group", row key tbb):
    # that name first, as the paper check holds the footnote's sentence to naming it
    sched = pd.DataFrame([{"workload": "quicksort", "scheduler": s, "eff": e, "eff_ci_low": e - 0.01,
                           "eff_ci_high": e + 0.01} for s, e in (("tbb", 0.962), ("openmp", 1.0))])
    h = Facts("t", {"cells": sched}, {"cells": ["workload", "scheduler"]}, {"cpu_stability": {"cv": 0.036}})
    tbb, omp = (h.lookup(f"e{i}", "cells", sched.iloc[i], "eff", about=(n,))
                for i, n in ((0, "the TBB task_group"), (1, "OpenMP tasks")))
    assert h.verdict("s", tbb, omp, better="above", worse="below").edge.names == \
        {"shared": ["quicksort"], "a": ["the TBB task_group"], "b": ["OpenMP tasks"]}
    assert h.bound_verdict("m", tbb, 1.0, better="above", worse="below").edge.names["shared"] == \
        ["the TBB task_group", "quicksort"]
    # a computed comparison's identifier is no name a reader knows: the sentence says it in words
    ratios = pd.DataFrame([{"comparison": "freethreading_overhead", "workload": "multithread_cpu", "ratio": 0.88,
                            "ratio_ci_low": 0.82, "ratio_ci_high": 0.95}])
    g = Facts("t", {"ratios": ratios}, {"ratios": ["comparison", "workload"]}, {"cpu_stability": {"cv": 0.115}})
    overhead = g.bound_verdict("o", g.lookup("r", "ratios", ratios.iloc[0], "ratio"), 1.0, better="below",
                               worse="above", higher_is_better=False)
    assert overhead.edge.names["shared"] == ["multithread_cpu"]


def test_a_notes_two_values_are_written_to_the_digit_that_gives_its_margin():
    # "96% (95%–97%) and 100% differ by 4.3%": 96 against 100 reads 4.0%, so the reader
    # could not redo the margin from the note's own digits
    cells = pd.DataFrame([{"workload": "quicksort", "scheduler": "tbb", "eff": 0.9574, "eff_ci_low": 0.9474,
                           "eff_ci_high": 0.9674}])
    machine = {"cpu_stability": {"cv": 0.04}}
    f = Facts("t", {"cells": cells}, {"cells": ["workload", "scheduler"]}, machine)
    tbb = f.lookup("e", "cells", cells.iloc[0], "eff", fmt="pct", about=("the TBB task_group",))
    edge = f.bound_verdict("m", tbb, 1.0, better="above", worse="below").edge
    assert tbb.text == "96% (95%–97%)" and edge.margin.text == "4.3%"
    assert (edge.a_text.text, edge.b_text.text) == ("95.7% (94.7%–96.7%)", "100.0%")
    assert margin_as_written(tbb.text, "100%", None, "pct1") == "4.0%"
    records = f.records()
    src = check.Sources({"cells": cells}, machine, check.seeds_dir())
    assert check.fact_problems(records, src) == []
    # a note written with the study's digits is caught, and so is one that drops a value
    coarse = {**records, "t.m.a": {**records["t.m.a"], "fmt": "pct", "text": tbb.text}}
    assert any(p.startswith("t.m.margin:") and "a digit more" in p for p in check.fact_problems(coarse, src))
    dropped = {k: v for k, v in records.items() if k != "t.m.mark"}
    assert any(p.startswith("t.m.margin:") for p in check.fact_problems(dropped, src))
    # each value is its verdict's side again, interval included: another value is caught
    moved = {**records, "t.m.a": {**records["t.m.a"], "ci": [0.94, 0.9674]}}
    assert any(p.startswith("t.m.a:") for p in check.fact_problems(moved, src))
    # two measured values: each written with the same digits, its own interval kept
    _, _, (near, _, _) = _edge_facts({"cpu_stability": {"cv": 0.02425}})
    assert (near.edge.a_text.text, near.edge.b_text.text) == ("97.57 (97.56–97.58)", "100.00 (99.99–100.01)")
    assert finer_format("text", None, ("x", None), ("y", None), "1%", "pct") == "text"
    # a plain number takes decimals first, the same for a median and its ends; a tiny one
    # significant digits
    hashlib = ((10.022, (9.6747, 10.125)), (10.321, (10.265, 10.331)))
    assert finer_format("num", "ms", *hashlib, "2.90%", "pct2") == "fixed3"
    assert write_value(10.022, "fixed3", "ms", (9.6747, 10.125)) == "10.022 (9.675–10.125) ms"
    assert finer_format("num", "s", (0.009753, None), (0.0100, None), "2.47%", "pct2") == "num4"
    # the margin and the bar show it just past as written: 2.9% against 2.6% reads a ninth past
    cells = cells.assign(eff=0.97118, eff_ci_low=0.93, eff_ci_high=0.991)
    g = Facts("t", {"cells": cells}, {"cells": ["workload", "scheduler"]}, {"cpu_stability": {"cv": 0.02647}})
    edge = g.bound_verdict("m", g.lookup("e", "cells", cells.iloc[0], "eff", fmt="pct"), 1.0, better="above",
                           worse="below").edge
    assert (edge.margin.text, edge.bar.text) == ("2.88%", "2.65%")
    assert (edge.a_text.text, edge.b_text.text) == ("97.12% (93.00%–99.10%)", "100.00%")


def test_a_study_names_its_rows_in_a_note_as_its_text_does():
    # "For main weak_scaling io per_task, Ray against ProcessPoolExecutor": the identifiers of
    # the row's keys, where the sentence says "on I/O tasks" and gives the sweep and phase
    keys = ["experiment", "system", "phase", "workload", "submission"]
    rows = pd.DataFrame([{"experiment": "main", "system": s, "phase": "weak_scaling", "workload": "io",
                          "submission": "per_task", "tps": v, "tps_ci_low": lo, "tps_ci_high": hi}
                         for s, v, lo, hi in (("ray", 32.2, 32.08, 32.3), ("processpool", 33.14, 33.13, 33.145))])
    words = {"phase": None, "experiment": {"main": None}, "submission": {"per_task": None, "batch": "batched"},
             "workload": {"io": "I/O tasks"}}
    f = Facts("t", {"cells": rows}, {"cells": keys}, {"cpu_stability": {"cv": 0.026}}, words)
    ray, pool = (f.lookup(f"r{i}", "cells", rows.iloc[i], "tps", unit="tasks/s", about=(n,))
                 for i, n in ((0, "Ray"), (1, "ProcessPoolExecutor")))
    edge = f.verdict("v", ray, pool, better="higher than", worse="lower than").edge
    assert edge.names == {"shared": ["I/O tasks"], "a": ["Ray"], "b": ["ProcessPoolExecutor"]}
    # the digit more keeps its trailing zeros, so the median and the ends show the same digits
    assert (edge.a_text.text, edge.b_text.text) == ("32.20 (32.08–32.30) tasks/s", "33.14 (33.13–33.15) tasks/s")
    # a value the words do not list is named as it is
    other = rows.assign(experiment="expiry-1x2")
    g = Facts("t", {"cells": other}, {"cells": keys}, {"cpu_stability": {"cv": 0.026}}, words)
    a, b = (g.lookup(f"r{i}", "cells", other.iloc[i], "tps", about=(n,)) for i, n in ((0, "Ray"), (1, "pool")))
    assert g.verdict("v", a, b, better="higher", worse="lower").edge.names["shared"] == ["expiry-1x2", "I/O tasks"]

    # sigpar names a mode with its backend as its text does ("in threading mode"); set
    # against each other, two modes stand as nouns
    from parbench.studies.sigpar.paper import NOTE_NAMES as SIGPAR

    keys = ["algorithm", "operation", "mode", "backend", "workers", "hostname"]
    cells = pd.DataFrame([{"algorithm": "Ed25519", "operation": "sign", "mode": m, "backend": b, "workers": 1,
                           "hostname": "vm", "rate": r, "rate_ci_low": r - 1, "rate_ci_high": r + 1}
                          for m, b, r in (("threading", "openssl-cffi", 62523.0), ("native-threads", "native", 68484.0),
                                          ("threading", "pyca", 60000.0))])
    h = Facts("t", {"cells": cells}, {"cells": keys}, {"cpu_stability": {"cv": 0.0866}}, SIGPAR)
    cffi, native, pyca = (h.lookup(f"r{i}", "cells", cells.iloc[i], "rate") for i in range(3))
    assert h.verdict("v", cffi, native, better="higher", worse="lower").edge.names == \
        {"shared": ["Ed25519", "sign"], "a": ["threading-openssl-cffi mode"], "b": ["native-threads mode"]}
    assert h.bound_verdict("m", pyca, 66000.0, better="higher", worse="lower").edge.names["shared"] == \
        ["Ed25519", "sign", "in threading mode"]


def test_a_verdict_just_past_a_cells_drift_names_the_drift_as_its_bar():
    f, frame, (edge, clear, _) = _edge_facts({"cpu_stability": {"cv": 0.01}}, floor_drift=0.02425)
    assert edge.value == "lower than" and not edge.edge.machine and edge.edge.bar.text == "2.425%"
    assert check.fact_problems(f.records(), check.Sources({"cells": frame}, f.machine, check.seeds_dir())) == []


def _edge_part(tmp_path, text):
    part = tmp_path / "study" / "part.md"
    part.parent.mkdir(exist_ok=True)
    (tmp_path / "shared").mkdir(exist_ok=True)
    (tmp_path / "shared" / "_edge.md").write_text((REPO / "paper/sections/shared/_edge.md").read_text())
    part.write_text(text)
    return part.parent


def test_every_template_writes_a_verdict_just_past_its_bar_with_its_note(tmp_path):
    f, _, (edge, clear, within) = _edge_facts({"cpu_stability": {"cv": 0.02425}})
    # a group of the same verdict states its word once: the member just past its bar gives it
    folder = _edge_part(tmp_path, "a {{ one }} b; c {{ group | weakest }} d; e {{ other }} f\n")
    note = (f" (decided just past its bar^[For edge against ref, {edge.edge.a_text} and {edge.edge.b_text} differ by "
            f"{edge.edge.margin} of the "
            f"larger, just past the machine's {edge.edge.bar} spread: the bar a difference must pass to count; "
            f"another run could as well have found them not distinguishable.])")
    out = templates.render(folder, "part", {"one": edge, "other": clear,
                                            "group": [{"verdict": clear}, {"verdict": edge}]})
    # at the end of its clause, and once in a part
    assert out == f"a {edge} b{note}; c {edge} d; e {clear} f\n"
    out = templates.render(folder, "part", {"one": clear, "other": clear,
                                            "group": [{"verdict": clear}, {"verdict": edge}]})
    # beside a group's word, the note says one of the group was decided just past its bar
    # (it said "decided just past its bar" of "each of the two speedups was above one")
    group_note = note.replace(" (decided just past its bar", " (one of them decided just past its bar")
    assert out == f"a {clear} b; c {edge} d{group_note}; e {clear} f\n"
    alone = templates.render(folder, "part", {"one": clear, "other": clear, "group": [{"verdict": edge}]})
    assert alone == f"a {clear} b; c {edge} d{note}; e {clear} f\n"
    assert templates.lint(REPO / "paper/sections/shared/_edge.md") == []
    # without a member just past its bar, the group's word is its first member's
    assert templates.weakest([{"verdict": clear}, {"verdict": within}]) is clear


def test_a_groups_word_notes_every_member_just_past_its_bar(tmp_path):
    # "each of the 3 was lower than it": the word stands for every member, so its note gives
    # each one decided just past its bar, not only the first (the check refuses a margin no
    # text writes)
    f, frame, (edge, clear, _) = _edge_facts({"cpu_stability": {"cv": 0.02425}})
    twin = f.verdict("v.twin", f.lookup("twin", "cells", frame.iloc[1], "rate", about=("twin",)), f["ref"],
                     better="higher than", worse="lower than")
    assert twin.edge is not None
    word = templates.weakest([clear, edge, twin])
    assert word.members == 3 and word.member_edges == (edge.edge, twin.edge)
    folder = _edge_part(tmp_path, "c {{ group | weakest }} d.\n")
    out = templates.render(folder, "part", {"group": [clear, edge, twin]})
    assert out.startswith(f"c {edge} d (some of them decided just past their bar^[For edge against ref, ")
    assert f"; for twin edge against ref, {twin.edge.a_text}" in out
    assert out.endswith("each pair not distinguishable.]).\n")
    written = {"part": out}
    assert check.unnoted_edge_problems(written, f.records()) == []
    # every member just past its bar: "all of them"; one noted before in the part: only the other
    out = templates.render(folder, "part", {"group": [edge, twin]})
    assert out.startswith(f"c {edge} d (all of them decided just past their bar^[For edge against ref, ")
    out = templates.render(_edge_part(tmp_path, "a {{ one }} b; c {{ group | weakest }} d.\n"), "part",
                           {"one": edge, "group": [clear, edge, twin]})
    assert out.count("^[") == 2 and "(one of them decided just past its bar^[For twin edge against ref" in out
    # the first-noted-only word this replaced left the twin's margin unwritten
    lone = templates.render(_edge_part(tmp_path, "c {{ group | weakest }} d.\n"), "part", {"group": [edge]})
    assert check.unnoted_edge_problems({"part": lone}, f.records())


def test_a_count_of_verdicts_notes_the_ones_just_past_their_bar(tmp_path):
    # "2 lie below it": a group stated by its count, its members' verdicts never written
    f, _, (edge, clear, within) = _edge_facts({"cpu_stability": {"cv": 0.02425}})
    lower = f.count_of("n_lower", [edge, clear, within], "lower than")
    same = f.count_of("n_same", [edge, clear, within], SAME)
    every = f.count_of("n", [edge, clear, within])
    assert lower.counted_edges == (edge.edge,) and same.counted_edges == () and every.counted_edges == ()
    out = templates.render(_edge_part(tmp_path, "{{ n }}: {{ lower }} lower (of {{ n }}), {{ same }} not\n"), "part",
                           {"n": every, "lower": lower, "same": same})
    # right after the count, in words that say what it counts: no mark glued to a digit
    assert out.startswith(f"{every}: {lower} (one of them decided just past its bar^[For edge against ref, "
                          f"{edge.edge.a_text} and {edge.edge.b_text} differ by {edge.edge.margin}")
    assert out.endswith(f"found them not distinguishable.]) lower (of {every}), {same} not\n")
    # written with its noun (`share`, `counted`): the note after the noun
    out = templates.render(_edge_part(tmp_path, '{{ lower | share(n, "comparison") }} and {{ lower | counted("x") }}\n'),
                           "part", {"n": every, "lower": lower})
    assert out.startswith(f"{lower} of the {every} comparisons (one of them decided just past its bar^[For edge against ref, ")
    assert out.endswith(f"not distinguishable.]) and {lower} xs\n")  # noted once in a part
    # a count of one is that verdict: "1 (decided just past its bar)", not "1 (one of them ...)"
    one = f.count_of("n_one", [edge, within], "lower than")
    out = templates.render(_edge_part(tmp_path, "{{ one }} lower\n"), "part", {"one": one})
    assert out.startswith(f"{one} (decided just past its bar^[For edge against ref") and "one of them" not in out
    # several in one note: each with its values, margin and bar, then what they share
    both = str(templates.environment(tmp_path / "study").get_template("shared/_edge.md").module.note(
        [edge.edge, edge.edge], True))
    assert both.startswith(" (some of them decided just past their bar^[For edge")
    assert f"spread; for edge against ref, {edge.edge.a_text} and {edge.edge.b_text} differ by {edge.edge.margin}" in both
    assert both.endswith("found each pair not distinguishable.])")


def test_a_listed_member_carries_its_own_note_and_the_groups_word_none(tmp_path):
    # "faster than it on a (0.57), b (0.91)": the note beside b, whose verdict is just past
    # its bar, not at the end of a's clause
    f, _, (edge, clear, _) = _edge_facts({"cpu_stability": {"cv": 0.02425}})
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "_spread.md").write_text((REPO / "paper/sections/shared/_spread.md").read_text())
    folder = _edge_part(tmp_path, '{% from "shared/_spread.md" import spread_note %}'
                                  "{{ items | weakest | unnoted }} it on {% for i in items %}{{ i.name }} "
                                  '({{ i.v }}{{ spread_note(i.verdict, "it") }}){{ ", " if not loop.last }}'
                                  "{% endfor %}.\n")
    items = [{"name": "clear", "v": f["clear"], "verdict": clear}, {"name": "edge", "v": f["edge"], "verdict": edge}]
    out = templates.render(folder, "part", {"items": items})
    assert out.startswith(f"{edge} it on clear ({f['clear']}), edge ({f['edge']}, decided just past its bar^[For edge")
    assert out.endswith("not distinguishable.]).\n") and out.count("^[") == 1


def test_a_note_goes_where_its_clause_ends():
    notes = ["^[n0]", "^[n1]"]
    assert templates.place_notes("a [x]{.k}\x000\x00 y (z), w\n", notes) == "a [x]{.k} y (z)^[n0], w\n"
    assert templates.place_notes("(a [x]\x000\x00 y) z. [b]\x001\x00 1.5 c", notes) == "(a [x] y^[n0]) z. [b] 1.5 c^[n1]"


def test_every_kind_of_fact_holds_against_its_source():
    f = facts()
    frame = cells()
    a = f.lookup("a", "cells", frame.iloc[2], "ops_per_sec")
    b = f.lookup("b", "cells", frame.iloc[0], "ops_per_sec")
    f.verdict("v", a, b, better="faster than", worse="slower than")
    f.derived("ratio", "ratio", a, b, unit="x")
    f.aggregate("n", "cells", "count", where={"status": "ok"})
    f.aggregate("most", "cells", "max", "workers", where={"workers": {">=": 2}}, fmt="int")
    f.aggregate("w", "cells", "values", "workers", fmt="list")
    f.config("d", "t.duration_sec", unit="s")
    f.machine_value("cores", "machine.logical_cores", fmt="int")
    f.count_of("above", [f["v"]], "faster than")
    f.total("sum", [f["n"], f["most"]])
    records = f.records()
    src = check.Sources({"cells": frame}, f.machine, check.seeds_dir())
    assert check.fact_problems(records, src) == []
    assert records["t.v"]["value"] == "faster than" and records["t.w"]["text"] == "1 and 2"


def test_a_fact_the_table_no_longer_supports_is_caught():
    f = facts()
    fact = f.lookup("rate", "cells", cells().iloc[0], "ops_per_sec")
    f.verdict("v", f.lookup("a", "cells", cells().iloc[2], "ops_per_sec"), fact, better="faster than",
              worse="slower than")
    records = f.records()
    changed = cells()
    changed.loc[0, "ops_per_sec"] = 101.0  # the table moved under the text
    changed.loc[0, "ops_per_sec_ci_high"] = 600.0  # and its interval now overlaps the other's
    problems = check.fact_problems(records, check.Sources({"cells": changed}, f.machine, check.seeds_dir()))
    assert any("t.rate" in p and "101" in p for p in problems), problems
    assert any("t.v" in p for p in problems), problems  # the verdict no longer follows


def test_a_tampered_text_or_verdict_is_caught():
    f = facts()
    a = f.lookup("a", "cells", cells().iloc[1], "ops_per_sec")
    b = f.lookup("b", "cells", cells().iloc[0], "ops_per_sec")
    f.verdict("v", a, b, better="faster than", worse="slower than")
    records = f.records()
    records["t.a"]["text"] = "290 (180–200)"
    records["t.v"]["value"] = SAME  # the intervals are apart: the text hides a ranking
    problems = check.fact_problems(records, check.Sources({"cells": cells()}, f.machine, check.seeds_dir()))
    assert any("t.a" in p and "290" in p for p in problems), problems
    assert any("t.v" in p for p in problems), problems


def test_a_seed_quote_must_be_in_the_seed_and_hold_the_value():
    f = facts()
    f.seed("ok", "sigpar.txt", "1t â†’      124.3 ops/sec", 124.3, fmt="fixed1")
    f.seed("wrong_value", "sigpar.txt", "1t â†’      124.3 ops/sec", 125.0)
    f.seed("not_there", "sigpar.txt", "1t → 999 ops/sec", 999)
    # a name the seed gives holds when its quote holds it
    f.seed("named", "sched.txt", "AMD Ryzen 9 3900X 12-Core Processor", "AMD Ryzen 9 3900X", fmt="plain")
    f.seed("misnamed", "sched.txt", "AMD Ryzen 9 3900X 12-Core Processor", "AMD Ryzen 7 5800X", fmt="plain")
    problems = check.fact_problems(f.records(), check.Sources({}, {}, check.seeds_dir()))
    assert not any("t.ok" in p for p in problems) and not any("t.named" in p for p in problems)
    assert any("t.wrong_value" in p for p in problems) and any("t.not_there" in p for p in problems)
    assert any("t.misnamed" in p for p in problems)


def test_the_prose_states_no_number_outside_a_fact():
    f = facts()
    fact = f.lookup("rate", "cells", cells().iloc[0], "ops_per_sec", about=("RSA-2048",))
    records = f.records()
    good = f"RSA-2048 signs at {fact} ops/s on x86-64 with ML-KEM-768 (@fig-sigpar-x)."
    assert check.prose_problems(good, records, "good") == []
    bad = f"RSA-2048 signs at {fact} ops/s, 12% above the 0.5 s mark."
    problems = check.prose_problems(bad, records, "bad")
    assert any("'12'" in p for p in problems) and any("'0.5'" in p for p in problems)


def test_a_comparison_outside_a_verdict_and_a_number_under_another_name_are_caught():
    f = facts()
    rsa = f.lookup("rate", "cells", cells().iloc[0], "ops_per_sec", about=("RSA-2048",))
    records = f.records()
    problems = check.prose_problems(f"Ed25519 is faster here: {rsa} ops/s.", records, "x")
    assert any("'faster'" in p for p in problems)
    assert any("about RSA-2048" in p for p in problems)  # the sentence names Ed25519 only


def test_a_span_must_show_its_facts_text():
    f = facts()
    fact = f.lookup("rate", "cells", cells().iloc[0], "ops_per_sec", about=("RSA-2048",))
    text = str(fact).replace("100", "150")
    problems = check.prose_problems(f"RSA-2048: {text}.", f.records(), "x")
    assert any("shows" in p for p in problems)
    assert any("not computed" in p for p in check.prose_problems('[1]{.fact key="t.none"}', {}, "x"))


def test_tables_code_and_labels_are_not_prose():
    md = ("Text.\n\n| a | b |\n|--:|--:|\n| 12 | 13 |\n\n: Caption {#tbl-x}\n\n```\n42\n```\n\n"
          "+---+\n| 7 |\n+===+\n| 8 |\n+---+\n")
    assert check.prose_problems(md, {}, "x") == []


def test_every_template_of_the_paper_passes_its_lint():
    problems = [p for path in sorted((REPO / "paper" / "sections").rglob("*.md")) for p in templates.lint(path)]
    assert problems == []


def test_the_lint_refuses_a_number_or_a_comparison(tmp_path):
    path = tmp_path / "part.md"
    path.write_text("{{ f.rate }} ops/s, 3 times more, and faster than {{ f.other }} on ML-KEM-768.\n")
    problems = templates.lint(path)
    assert any("'3'" in p for p in problems) and any("'faster'" in p for p in problems)
    assert not any("768" in p for p in problems)


def test_a_names_possessive_is_the_filters_so_a_final_digit_keeps_an_apostrophe(tmp_path):
    # a fresh run failed its layout check: "libcrux-avx2's rate" set as "avx2′s"
    path = tmp_path / "part.md"
    path.write_text("{{ a }}'s rate and {{ b ~ \"'s rate\" }}\n")
    assert sum("possessive" in p for p in templates.lint(path)) == 2
    path.write_text("{{ a | possessive }} rate and {{ (b | possessive) ~ \" rate\" }}\n")
    assert templates.lint(path) == []
    # escaped after a digit, which pandoc passes to Typst as a literal apostrophe
    assert templates.render(tmp_path, "part", {"a": "ws", "b": "libcrux-avx2"}) == \
        "ws's rate and libcrux-avx2\\'s rate\n"


def test_a_count_names_its_noun_in_the_form_the_count_asks_for(tmp_path):
    path = tmp_path / "part.md"
    path.write_text("Each cell ran {{ n }} time(s).\n")
    assert any("'time(s)'" in p and "counted" in p for p in templates.lint(path))
    path.write_text("Each cell ran {{ n | counted(\"time\") }}; {{ f.reps | counted(\"run\") }}.\n")
    assert templates.lint(path) == []
    f = facts()
    one = f.literal("one", 1, "a test")
    rendered = templates.render(tmp_path, "part", {"n": 1, "f": {"reps": one}})
    assert rendered == "Each cell ran 1 time; " + str(one) + " run.\n"
    assert templates.render(tmp_path, "part", {"n": 3, "f": {"reps": one}}).startswith("Each cell ran 3 times;")


def test_a_count_that_may_be_zero_reads_as_a_word(tmp_path):
    # "the rate lay below the runner's in 0": a zero count in a sentence reads "none"
    path = tmp_path / "part.md"
    path.write_text("below it in {{ f.below | or_none }} and above it in {{ f.above | or_none }}\n")
    f = facts()
    zero, two = f.literal("zero", 0, "a test"), f.literal("two", 2, "a test")
    assert templates.render(tmp_path, "part", {"f": {"below": zero, "above": two}}) == \
        f"below it in none and above it in {two}\n"
    # a count of verdicts just past their bar keeps its note when it is not zero
    f, _, (edge, clear, within) = _edge_facts({"cpu_stability": {"cv": 0.02425}})
    lower = f.count_of("n_lower", [edge, clear, within], "lower than")
    out = templates.render(_edge_part(tmp_path, "{{ lower | or_none }} lower\n"), "part", {"lower": lower})
    assert out.startswith(f"{lower} (one of them decided just past its bar^[For edge against ref")


def test_a_share_of_a_whole_reads_as_english():
    from parbench.paper.format import mid_sentence, sentence_start, share

    assert share(2, 3, "stall") == "2 of the 3 stalls" and share(0, 1, "stall") == "0 of the 1 stall"
    assert share(3, 3, "stall") == "all 3 stalls" and share(2, 2, "stall") == "both stalls"
    assert share(1, 1, "stall") == "the one stall"
    f = facts()
    part, whole = f.literal("part", 4, "a test"), f.literal("whole", 4, "a test")
    assert share(part, whole, "row") == f"all {part} rows"
    assert mid_sentence("Native schedulers") == "native schedulers"
    assert mid_sentence("The GIL across Python runtimes") == "the GIL across Python runtimes"
    assert mid_sentence("ML-KEM key exchange") == "ML-KEM key exchange"
    assert sentence_start("push mode") == "Push mode" and sentence_start("ProcessPoolExecutor") == "ProcessPoolExecutor"


def test_a_template_naming_a_fact_never_computed_fails(tmp_path):
    (tmp_path / "part.md").write_text("{{ f.missing }}\n")
    with pytest.raises(Exception, match="missing"):
        templates.render(tmp_path, "part", {"f": facts().view()})


def test_fixed_prose_of_every_section_passes_the_check():
    for qmd in sorted((REPO / "paper" / "sections").glob("*.qmd")):
        assert check.prose_problems(qmd.read_text(), {}, str(qmd)) == []


# --- figures -----------------------------------------------------------------------------------

def _svg(chart) -> str:
    import vl_convert as vlc

    return vlc.vegalite_to_svg(chart.to_json())


def _facet_frame():
    rows = []
    for i, a in enumerate(["RSA-2048", "ECDSA-P256", "Ed25519"]):
        for op in ("sign", "verify"):
            rows.append({"algorithm": a, "operation": op, "backend": "pyca", "ratio": 0.5 + i / 10})
    return pd.DataFrame(rows)


def test_a_facet_whose_headers_are_sorted_apart_from_its_panels_is_caught():
    """Vega-Lite sorts a custom-sorted facet's headers apart from its panels when the y
    scale is independent: every row labelled with another algorithm (sigpar's Figure 4)."""
    data = _facet_frame().sort_values("algorithm")  # the data in another order than the facet's sort
    base = alt.Chart().encode(y=alt.Y("backend:N"), yOffset=alt.YOffset("operation:N"))
    bars = base.mark_bar().encode(x="ratio:Q", tooltip=["algorithm", "operation", "ratio"])
    rule = base.mark_rule().encode(x="ratio:Q")
    order = ["RSA-2048", "ECDSA-P256", "Ed25519"]
    grid = {"row": alt.Row("algorithm:N", sort=order), "column": alt.Column("operation:N", sort=["sign", "verify"])}
    bad = alt.layer(bars, rule, data=data).facet(**grid).resolve_scale(y="independent")
    good = alt.layer(bars, rule, data=data).facet(**grid)
    assert any("labelled" in p for p in figure_check.problems(_svg(bad), "bad"))
    assert figure_check.problems(_svg(good), "good") == []


def test_a_log_axis_with_ticks_left_unlabelled_is_caught():
    from parbench.figures import log_axis

    # less than a decade: the log scale's own format labels a few mantissas only, and the
    # upper half of this axis, where the data is, had ticks and no numbers
    data = pd.DataFrame({"x": [1, 2, 3], "y": [0.071, 0.082, 0.094]})
    plain = alt.Chart(data).mark_point().encode(x="x:Q", y=alt.Y("y:Q", scale=alt.Scale(type="log", nice=False)))
    assert any("without a label" in p for p in figure_check.problems(_svg(plain), "plain"))
    labelled = plain.encode(y=alt.Y("y:Q", scale=alt.Scale(type="log", nice=False), axis=log_axis()))
    assert figure_check.problems(_svg(labelled), "labelled") == []


def test_a_log_axis_whose_numbers_stop_short_of_its_data_is_caught():
    from parbench.figures import log_axis

    # a little past a power of ten: Vega's log ticks stop at 100,000, the data goes on to
    # 160,000 with no number beside it
    data = pd.DataFrame({"x": [1, 2, 3], "y": [57_000.0, 110_000.0, 160_000.0]})
    scale = alt.Scale(type="log", nice=False, zero=False)
    short = alt.Chart(data).mark_point().encode(x="x:Q", y=alt.Y("y:Q", scale=scale, axis=alt.Axis(tickCount=4)))
    assert any("of its length only" in p for p in figure_check.problems(_svg(short), "short"))
    spread = short.encode(y=alt.Y("y:Q", scale=scale, axis=log_axis([data["y"].tolist()])))
    assert figure_check.problems(_svg(spread), "spread") == []


def test_log_ticks_give_each_panel_numbers_over_its_own_values():
    from parbench.figures import log_ticks

    narrow, wide = [0.36, 0.41], [120.0, 9_000.0]
    ticks = log_ticks([narrow, wide])
    assert [t for t in ticks if 0.3 <= t <= 0.5] == [0.36, 0.37, 0.38, 0.39, 0.4, 0.41]
    assert {200, 300, 500, 1000, 2000, 5000} <= set(ticks)
    assert log_ticks([[]]) == []
    # 3 to 10 times: numbers in the bottom third too (even steps of 0.25 began at 0.5)
    assert [t for t in log_ticks([[0.27, 2.6]]) if 0.27 <= t <= 2.6] == [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1, 1.5, 2]


def test_a_padded_log_scale_ends_at_numbers_where_the_data_would_pass_them():
    from parbench.figures import padded_log_scale, without_hidden_text

    # dispatch's latency panels, 180 px over 0.5 to 2,600 ms: an axis rounded out to
    # 10,000 dropped that last number for crowding 1,000; over three decades the numbers
    # are 1s and 3s, and each end reaches on to the next number past the data
    values = [0.5, 3.0, 40.0, 2_600.0]
    scale, axis = padded_log_scale(values, ",~g")
    assert scale.domain == [0.3, 3_000.0] and axis.values == [0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1_000.0,
                                                              3_000.0]
    data = pd.DataFrame({"x": values, "y": [0.25, 0.5, 0.75, 1.0]})
    svg = without_hidden_text(_svg(alt.Chart(data).mark_line().encode(x=alt.X("x:Q", scale=scale, axis=axis),
                                                                      y="y:Q").properties(width=180)))
    assert figure_check.problems(svg, "latency") == [] and ">0.3<" in svg and ">1,000<" in svg
    # too narrow for 3s: the powers of ten only, the last number centred on its tick
    scale, axis = padded_log_scale(values, ",~g", mantissas=(1,), labelFlush=False)
    assert scale.domain == [0.1, 10_000.0] and axis.values == [0.1, 1.0, 10.0, 100.0, 1_000.0, 10_000.0]
    svg = without_hidden_text(_svg(alt.Chart(data).mark_line().encode(x=alt.X("x:Q", scale=scale, axis=axis),
                                                                      y="y:Q").properties(width=180)))
    assert all(f">{n}<" in svg for n in ("0.1", "1", "10", "100", "1,000", "10,000"))
    # dispatch's no-op throughput: 3.6 to 7,000 tasks/s had no number below 10 nor above 1,000
    scale, axis = padded_log_scale([3.6, 80.0, 7_000.0])
    assert scale.domain == [3.0, 10_000.0] and axis.values == [3.0, 10.0, 30.0, 100.0, 300.0, 1_000.0, 3_000.0,
                                                               10_000.0]
    # completion times 0.3017 to 0.3231 s: the axis had no number at either end
    scale, axis = padded_log_scale([0.3017, 0.3231])
    assert scale.domain == [0.3, 0.325] and axis.values[0] == 0.3 and axis.values[-1] == 0.325
    # an end within NEAR_SHARE of a number is left as it is (0.493 s beside 0.5)
    scale, axis = padded_log_scale([0.493, 3.166])
    assert 0.42 < scale.domain[0] < 0.493 and 0.5 in axis.values
    # fewer than three decades keep the 2s, 3s and 5s between them; nothing to draw, no domain
    assert 200.0 in padded_log_scale([120.0, 9_000.0])[1].values
    assert padded_log_scale([float("nan")])[0].domain is alt.Undefined


def test_a_panel_grid_gives_each_panel_its_own_log_axis_and_level_titles():
    from parbench.figures import PANEL_END_PX, panel_grid, panel_log_scale, panel_x_axis

    # dispatch's throughput: no-op rates over three decades, I/O rates a few percent apart;
    # on one domain for both, the I/O panel's lines lay on each other, and a facet's one
    # list of numbers gave each panel the other's
    data = pd.DataFrame({"w": ["noop"] * 3 + ["io"] * 3, "s": ["a", "b", "c"] * 2, "x": [1, 2, 3] * 2,
                         "y": [3.7, 300.0, 7_000.0, 15.8, 16.5, 17.0]})
    axes = {}

    def draw(rows, bottom):
        scale, axis = panel_log_scale(rows["y"], ",~g", title="rate")
        axes[rows["w"].iloc[0]] = (scale, axis)
        return alt.Chart(rows).mark_point().encode(x=alt.X("x:Q", axis=panel_x_axis([1, 2, 3], "x", bottom)),
                                                   y=alt.Y("y:Q", scale=scale, axis=axis), tooltip=["w", "s"])

    chart = panel_grid(data.assign(r="all"), "r", "w", draw, ["all"], ["noop", "io"])
    noop, io = axes["noop"], axes["io"]
    assert noop[0].padding == io[0].padding == PANEL_END_PX
    assert {10.0, 100.0, 1_000.0} <= set(noop[1].values) and not {16.0, 17.0} & set(noop[1].values)
    assert 16.0 in io[1].values and 100.0 not in io[1].values
    for scale, axis in axes.values():  # no number in the margin past the domain
        assert all(scale.domain[0] <= v <= scale.domain[1] for v in axis.values)
    svg = _svg(chart)
    assert figure_check.problems(svg, "panels") == []
    # the top row's titles level, whether or not a panel's end carries a number
    _, _, texts = figure_check.parse(svg)
    heights = {t.text: t.y for t in texts if "role-title-text" in t.role and t.text in ("noop", "io")}
    assert len(heights) == 2 and abs(heights["noop"] - heights["io"]) < 0.5


def test_labels_hidden_for_overlap_leave_the_saved_svg():
    from parbench.figures import log_axis, without_hidden_text

    # a decade and more on a short axis: greedy overlap removal hides labels (opacity 0),
    # which a PDF would still carry as text printed over their neighbours
    data = pd.DataFrame({"x": [1, 2, 3], "y": [1.2e4, 9e4, 9e5]})
    chart = alt.Chart(data).mark_point().encode(
        x="x:Q", y=alt.Y("y:Q", scale=alt.Scale(type="log"), axis=log_axis(number_format="~s"))).properties(height=60)
    svg = _svg(chart)
    assert 'opacity="0"' in svg
    kept = without_hidden_text(svg)
    assert 'opacity="0"' not in kept and figure_check.problems(kept, "c") == []


def test_a_legend_listing_what_is_not_drawn_is_caught():
    data = pd.DataFrame({"x": [1, 2], "y": [3, 4], "s": ["ws", "lifo"]})
    chart = alt.Chart(data).mark_point().encode(
        x="x:Q", y="y:Q", color=alt.Color("s:N", scale=alt.Scale(domain=["ws", "lifo", "tbb"])))
    assert any("'tbb'" in p for p in figure_check.problems(_svg(chart), "c"))


def test_a_figure_without_data_is_caught():
    from parbench.figures import note

    assert any("draws no data" in p for p in figure_check.problems(_svg(note("Energy", "not measured")), "n"))


def test_hairline_bars_are_caught():
    """Grouped bars in faceted panels of a fixed width, x scales independent: Vega-Lite gave
    the offset scale no range and drew every bar a quarter pixel wide (the gil CPU figure)."""
    data = pd.DataFrame({"w": ["a", "a", "b", "b"], "r": ["x", "y", "x", "y"], "e": ["t", "p", "t", "p"],
                         "v": [1.0, 1.6, 1.9, 1.8]})
    bars = alt.Chart(data).mark_bar().encode(x="r:N", xOffset="e:N", y="v:Q", color="e:N",
                                             tooltip=["w", "r", "e", "v"])
    rule = alt.Chart(data).mark_rule().encode(y=alt.datum(2))
    broken = alt.layer(bars, rule, data=data).properties(width=140).facet(column="w:N").resolve_scale(x="independent")
    stepped = alt.layer(bars, rule, data=data).properties(width=alt.Step(17)).facet(column="w:N").resolve_scale(
        x="independent")
    assert any("hairlines" in p for p in figure_check.problems(_svg(broken), "broken"))
    assert figure_check.problems(_svg(stepped), "stepped") == []


def test_a_unit_the_data_is_not_in_is_caught():
    data = pd.DataFrame({"x": ["a", "b"], "y": [3, 4]})
    chart = alt.Chart(data).mark_bar().encode(x="x:N", y=alt.Y("y:Q", title="median cycles per call"))
    assert figure_check.unit_problems(_svg(chart), "c", {"tsc_ticks"})
    ok = alt.Chart(data).mark_bar().encode(x="x:N", y=alt.Y("y:Q", title="median TSC ticks per call"))
    assert figure_check.unit_problems(_svg(ok), "c", {"tsc_ticks"}) == []


def test_a_sentence_run_into_the_next_is_caught():
    # a template's loop ended its sentence just before a block tag, whose line break Jinja drops
    problems = check.prose_problems("Below the threshold: RSA-2048 verify.Below that, none.", {}, "x")
    assert any("runs into the next" in p and "verify.Below" in p for p in problems), problems
    assert check.prose_problems("Below the threshold: RSA-2048 verify. Below that, e.g. none.", {}, "x") == []


# --- the PDF's layout --------------------------------------------------------------------------

def _pdf(tmp_path, typ: str) -> Path:
    import typst

    (tmp_path / "doc.typ").write_text('#set page(paper: "a4", margin: (x: 2cm, y: 2.2cm))\n' + typ)
    typst.compile(str(tmp_path / "doc.typ"), output=str(tmp_path / "doc.pdf"))
    return tmp_path / "doc.pdf"


def test_a_table_wider_than_the_page_is_caught(tmp_path):
    wide = "#table(columns: 12, " + ", ".join(f"[value-{i:03d}-{j}]" for i in range(3) for j in range(12)) + ")"
    from parbench.paper import layout_check

    problems = layout_check.problems(_pdf(tmp_path, wide), REPO / "paper" / "_quarto.yml")
    assert any("outside the text area" in p for p in problems), problems


def test_text_printed_over_text_is_caught(tmp_path):
    from parbench.paper import layout_check

    over = "#place(dx: 1cm, dy: 1cm)[Overprinted words here]\n#place(dx: 1cm, dy: 1cm)[Overprinted words here]"
    problems = layout_check.problems(_pdf(tmp_path, over), REPO / "paper" / "_quarto.yml")
    assert any("printed over" in p for p in problems), problems
    assert layout_check.problems(_pdf(tmp_path, "Plain words that fit the page."),
                                 REPO / "paper" / "_quarto.yml") == []


def test_type_too_small_to_read_is_caught(tmp_path):
    from parbench.paper import layout_check

    # a figure shrunk to fit the page: its 10 px labels end up at 4 pt
    tiny = "#text(size: 4pt)[Tick labels of a shrunk figure]\n\nBody text at its own size."
    problems = layout_check.problems(_pdf(tmp_path, tiny), REPO / "paper" / "_quarto.yml")
    assert any("smaller than 6 pt" in p and "Tick" in p for p in problems), problems
    # 5.7 pt, what a reviewer read under four figures, is too small too
    shrunk = "#text(size: 5.7pt)[Tick labels of a shrunk figure]"
    assert any("smaller than 6 pt" in p for p in layout_check.problems(_pdf(tmp_path, shrunk),
                                                                        REPO / "paper" / "_quarto.yml"))
    # rotated type (a y axis's title) is judged by nothing here: its glyph boxes mislead
    rotated = "#rotate(-90deg)[#text(size: 8pt)[speedup against sequential]]"
    assert layout_check.problems(_pdf(tmp_path, rotated), REPO / "paper" / "_quarto.yml") == []
    fine = "#text(size: 6pt)[Small but readable labels]"
    assert layout_check.problems(_pdf(tmp_path, fine), REPO / "paper" / "_quarto.yml") == []


def test_an_apostrophe_typeset_as_a_prime_after_a_digit_is_caught(tmp_path):
    from parbench.paper import layout_check

    problems = layout_check.problems(_pdf(tmp_path, "faster than libcrux-avx2's count"), REPO / "paper" / "_quarto.yml")
    assert any("typeset as a prime" in p and "avx2" in p for p in problems), problems
    assert layout_check.problems(_pdf(tmp_path, "faster than that of libcrux-avx2, and liboqs' own"),
                                 REPO / "paper" / "_quarto.yml") == []


def test_a_grid_table_keeps_a_median_over_its_interval():
    from parbench.paper.format import md_table

    frame = pd.DataFrame({"algorithm": ["RSA-2048"], "rate": ["4,636<br>(4,595–4,684)"]})
    text = md_table(frame, "Caption.", "tbl-x")
    assert text.lstrip("\n").startswith("+") and "4,636\\" in text and "(4,595–4,684)" in text
    assert "{#tbl-x}" in text
    assert write_value(0.5, "pct") == "50%" and write_value(3, "int", "cores") == "3 cores"


def test_log_ticks_span_well_over_half_of_any_range_below_a_decade():
    """The paper check refuses a log axis whose numbers span less than half of it: the
    ticks span at least 55% of any range up to a decade (1.0 to 4.0 had 1.5, 2 and 3 only)."""
    import math

    from parbench.figures import log_ticks

    for lo in (0.0308, 0.27, 1.0001, 4.5, 33.0, 900.0, 12_345.0):
        for ratio in (1.05, 1.3, 1.55, 2.0, 2.9, 3.0, 3.99, 5.0, 7.5, 9.9):
            hi = lo * ratio
            inside = [t for t in log_ticks([[lo, hi]]) if lo <= t <= hi]
            assert len(inside) >= 2 and math.log(inside[-1] / inside[0]) >= 0.55 * math.log(ratio), (lo, hi, inside)


def test_a_concatenated_panel_titled_with_another_panels_value_is_caught():
    """Panels drawn one by one and set side by side carry their titles themselves: a
    title given to the wrong panel is the facet's mislabelled header again."""
    data = _facet_frame()

    def panel(rows, title):
        return alt.Chart(rows).mark_bar().encode(x="ratio:Q", y="algorithm:N",
                                                 tooltip=["algorithm", "operation", "ratio"]).properties(title=title)

    sign, verify = data[data["operation"] == "sign"], data[data["operation"] == "verify"]
    good = alt.hconcat(panel(sign, "sign"), panel(verify, "verify")).properties(title="Ratios by operation")
    bad = alt.hconcat(panel(sign, "verify"), panel(verify, "sign")).properties(title="Ratios by operation")
    assert figure_check.problems(_svg(good), "good") == []
    problems = figure_check.problems(_svg(bad), "bad")
    assert "bad: the panel titled 'verify' draws operation ['sign']" in problems
    # a title that is no field's value (a sentence) is left alone
    prose = alt.hconcat(panel(sign, "Signing, per algorithm"), panel(verify, "Verifying"))
    assert figure_check.problems(_svg(prose), "prose") == []


def test_a_padded_log_axis_keeps_the_numbers_it_checked_its_ends_against():
    from parbench.figures import padded_log_scale

    # the bottom reached on to 8,000; numbered again over 8,000..27,421, the axis lost
    # 25,000 and its top number was 20,000 under data at 25,301
    scale, axis = padded_log_scale([9_253.0, 25_301.0])
    assert scale.domain[0] == 8_000.0 and 25_000.0 in axis.values


def test_a_panels_numbers_stand_apart_ends_and_round_numbers_first():
    import math

    from parbench.figures import MIN_NUMBER_GAP_PX, panel_log_scale, spaced_ticks

    # 50k and 60k, 70k and 80k: 10 px apart on a 150 px panel, and Vega dropped some of
    # them for overlap, leaving ticks without a number
    values = [20_000.0, 30_000.0, 40_000.0, 50_000.0, 60_000.0, 70_000.0, 80_000.0, 100_000.0, 150_000.0,
              200_000.0]
    kept = spaced_ticks(values, (20_000.0, 200_000.0), 130)
    at = [130 * math.log(v / 20_000.0) / math.log(10) for v in kept]
    assert all(b - a >= MIN_NUMBER_GAP_PX for a, b in zip(at, at[1:]))
    assert kept[0] == 20_000.0 and kept[-1] == 200_000.0 and 100_000.0 in kept and 50_000.0 in kept
    assert 80_000.0 not in kept and 150_000.0 in kept
    # a tall panel keeps them all
    assert spaced_ticks(values, (20_000.0, 200_000.0), 600) == values
    scale, axis = panel_log_scale([26_396.0, 54_000.0, 169_277.0], "~s", height=150)
    drawn = axis.values
    assert drawn == spaced_ticks(drawn, scale.domain, 130)


def test_a_bound_verdict_just_past_its_bar_gives_the_mark_as_a_checked_fact():
    # an efficiency of 97.57% against full efficiency, on a 2.425% spread
    frame = pd.DataFrame([{"name": "a", "eff": 0.9757, "eff_ci_low": 0.975, "eff_ci_high": 0.976}])
    machine = {"cpu_stability": {"cv": 0.02425}}
    f = Facts("t", {"cells": frame}, {"cells": ["name"]}, machine)
    v = f.bound_verdict("v", f.lookup("eff", "cells", frame.iloc[0], "eff", fmt="pct2"), 1.0, better="above",
                        worse="below")
    assert v.value == "below" and v.edge.b.text == "100.00%" and v.edge.b.key == "t.v.mark"
    src = check.Sources({"cells": frame}, machine, check.seeds_dir())
    records = f.records()
    assert check.fact_problems(records, src) == []
    wrong = {**records, "t.v.mark": {**records["t.v.mark"], "value": 0.9, "text": "90.00%"}}
    assert any(p.startswith("t.v.mark:") for p in check.fact_problems(wrong, src))


def test_a_figure_or_table_the_text_never_cites_is_a_problem():
    # seven of the paper's figures and tables stood uncited: a reader was never sent to them
    texts = {"a.md": "![Speedup](x.svg){#fig-speedup}\n\n| a |\n|---|\n| 1 |\n: Times {#tbl-times}\n",
             "b.qmd": "As @fig-speedup shows, ...\n"}
    assert check.uncited_problems(texts) == ["a.md: tbl-times is drawn but the text never cites it (@tbl-times)"]
    texts["b.qmd"] += "@tbl-times gives the times.\n"
    assert check.uncited_problems(texts) == []


def test_a_verdict_just_past_its_bar_that_no_text_writes_is_a_problem():
    # gil's wall-time list named the runtimes not distinguishable from the lowest time and
    # left out pypy, told apart just past the bar: its note was never given
    frame = pd.DataFrame([{"name": "a", "eff": 0.9757, "eff_ci_low": 0.975, "eff_ci_high": 0.976}])
    f = Facts("t", {"cells": frame}, {"cells": ["name"]}, {"cpu_stability": {"cv": 0.02425}})
    v = f.bound_verdict("v", f.lookup("eff", "cells", frame.iloc[0], "eff", fmt="pct2"), 1.0, better="above",
                        worse="below")
    records = f.records()
    problems = check.unnoted_edge_problems({"a.md": f"Cell a ran at {f['eff']} of full efficiency.\n"}, records)
    assert problems == ["t.v: decided just past its bar, but no text writes it or a count holding it, so its "
                        "note (t.v.margin) is never given"]
    # written with its note (as `templates` writes a verdict), it is told
    written = f"Cell a was {v} full efficiency^[{v.edge.a_text} and {v.edge.b_text} differ by {v.edge.margin}].\n"
    assert check.unnoted_edge_problems({"a.md": written}, records) == []
    # a verdict not near its bar owes no note
    assert check.unnoted_edge_problems({}, {k: r for k, r in records.items() if not k.startswith("t.v.")}) == []


def test_a_counts_note_says_how_many_of_the_counted_it_names(tmp_path):
    # "9 of the 18 cells (some of them decided just past their bar)" named 7 of the 9
    rows = [("ref", 100.0), ("e1", 97.57), ("e2", 97.56), ("clear", 95.0)]
    frame = pd.DataFrame([{"name": n, "rate": v, "rate_ci_low": v - 0.01, "rate_ci_high": v + 0.01} for n, v in rows])
    machine = {"cpu_stability": {"cv": 0.02425}}
    f = Facts("t", {"cells": frame}, {"cells": ["name"]}, machine)
    ref = f.lookup("ref", "cells", frame.iloc[0], "rate")
    e1, e2, clear = (f.verdict(f"v.{n}", f.lookup(n, "cells", frame.iloc[i], "rate", about=(n,)), ref,
                               better="higher than", worse="lower than") for i, n in enumerate(("e1", "e2", "clear"), 1))
    assert e1.edge and e2.edge and clear.edge is None
    lower = f.count_of("n_lower", [e1, e2, clear], "lower than")
    assert lower.near_bar.value == 2 and lower.near_bar.text == "2"
    out = templates.render(_edge_part(tmp_path, "{{ lower }} lower\n"), "part", {"lower": lower})
    assert out.startswith(f"{lower} ({lower.near_bar} of them decided just past their bar^[For e1 against ref")
    # every one counted: "all of them"
    both = f.count_of("n_edges", [e1, e2], "lower than")
    out = templates.render(_edge_part(tmp_path, "{{ both }} lower\n"), "part", {"both": both})
    assert out.startswith(f"{both} (all of them decided just past their bar^[")
    # some noted before in the part: the note names the rest, and cannot count them
    out = templates.render(_edge_part(tmp_path, "{{ one }} lower; {{ both }} lower\n"), "part",
                           {"one": e1, "both": both})
    assert "(some of them" not in out and "(one of them decided just past its bar^[For e2 against ref" in out
    # the paper check recomputes the count from the verdicts as their tables give them
    src = check.Sources({"cells": frame}, machine, check.seeds_dir())
    records = f.records()
    assert check.fact_problems(records, src) == []
    moved = {**records, "t.n_lower.near_bar": {**records["t.n_lower.near_bar"], "value": 3, "text": "3"}}
    assert any(p.startswith("t.n_lower.near_bar:") for p in check.fact_problems(moved, src))


def test_a_verdict_the_spread_alone_decided_is_written_with_the_spread(tmp_path):
    # "the stall grew 1.03 (1.02-1.05) s per second, not distinguishable from one": its
    # interval lies apart from one, and the paragraph never said the spread decided it
    f, frame, (_, _, within) = _edge_facts({"cpu_stability": {"cv": 0.02425}})
    assert within.spread is not None
    records = f.records()
    bare = {"a.md": f"Within was {within} the reference.\n\nThe spread was {within.spread}.\n"}
    assert check.unnoted_spread_problems(bare, records) == [
        "a.md: t.v.within (not distinguishable on this machine from) was decided by the spread alone, the "
        "intervals apart, but its paragraph never gives the spread (shared/_spread.md)"]
    # a count of such verdicts likewise ("not distinguishable on 3 of the 4 workloads")
    same = f.count_of("n_same", [within], within.value)
    assert check.unnoted_spread_problems({"a.md": f"{same} were not.\n"}, f.records()) == [
        "a.md: t.n_same (1) counts verdicts decided by the spread alone, the intervals apart, but its paragraph "
        "never gives the spread (shared/_spread.md)"]
    assert check.unnoted_spread_problems({"a.md": f"{same} were not, {within.spread} spread.\n"}, f.records()) == []
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "_spread.md").write_text((REPO / "paper/sections/shared/_spread.md").read_text())
    folder = _edge_part(tmp_path, '{% from "shared/_spread.md" import spread_note %}'
                                  'Within was {{ v }} the reference{{ spread_note(v, "it") }}.\n')
    noted = templates.render(folder, "part", {"v": within})
    assert check.unnoted_spread_problems({"a.md": noted}, f.records()) == []


def test_a_verdict_the_spread_alone_decided_written_bare_gets_the_plain_note(tmp_path):
    # kem's "liboqs had the lowest count, not distinguishable from the next, libcrux-avx2
    # (45,422)" stood bare on a run where a cell's drift alone decided it: the paper check
    # stopped the run. A template that gives no note of its own now gets the plain one.
    f, _, (_, clear, within) = _edge_facts({"cpu_stability": {"cv": 0.02425}})
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "_spread.md").write_text((REPO / "paper/sections/shared/_spread.md").read_text())
    bare = templates.render(_edge_part(tmp_path, "Within was {{ v }} the reference, and clear {{ c }} it.\n"), "part",
                            {"v": within, "c": clear})
    assert bare == (f"Within was {within} the reference (only because the two medians lie within the machine's "
                    f"{within.spread} spread of each other, their intervals apart), and clear {clear} it.\n")
    assert check.unnoted_spread_problems({"a.md": bare}, f.records()) == []
    # against a fixed mark (no median, no interval of its own): its one median and interval
    mark = f.bound_verdict("v.mark", f["within"], 100.0, better="above", worse="below")
    assert mark.spread is not None
    bare = templates.render(tmp_path / "study", "part", {"v": mark, "c": clear})
    assert bare.startswith(f"Within was {mark} the reference (only because its median lies within the machine's "
                           f"{mark.spread} spread of that mark, its interval apart from it), and")
    # the template's own note, anywhere in the part, stands alone
    own = templates.render(_edge_part(tmp_path, '{% from "shared/_spread.md" import spread_note %}'
                                                'Within was {{ v }} the reference{{ spread_note(v, "it") }}.\n'),
                           "part", {"v": within})
    assert "only because" not in own and f"its median within the machine's {within.spread} spread of it" in own
