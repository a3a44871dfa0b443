"""The golden check's comparison (tests/golden.py): what it reports, and what it lets by."""

import golden

GOLDEN = {"tables": {"t_cells": {"study": "object", "ops_per_sec": "float64", "energy_j": "null"}},
          "figures": ["t_scaling"], "labels": {"sec": ["sec-t"], "fig": ["fig-t-scaling"], "tbl": ["tbl-t"]}}


def test_the_same_shape_has_no_differences():
    assert golden.differences(GOLDEN, GOLDEN) == []


def test_a_column_all_null_in_one_run_is_not_a_dtype_change():
    now = {**GOLDEN, "tables": {"t_cells": {"study": "object", "ops_per_sec": "float64", "energy_j": "float64"}}}
    assert golden.differences(GOLDEN, now) == []


def test_every_change_of_shape_is_reported():
    now = {"tables": {"t_cells": {"study": "object", "ops_per_sec": "int64"}, "t_new": {}},
           "figures": ["t_scaling_v2"], "labels": {"sec": ["sec-t"], "fig": [], "tbl": ["tbl-t"]}}
    found = golden.differences(GOLDEN, now)
    assert any("t_new: new" in d for d in found)
    assert any("columns" in d and "energy_j" in d for d in found)
    assert any("ops_per_sec was float64, is int64" in d for d in found)
    assert any("figures" in d and "t_scaling_v2" in d for d in found)
    assert any("fig labels" in d for d in found)
    assert len(found) == 5


def test_a_part_only_some_machines_have_may_come_or_go():
    now = {**GOLDEN, "labels": {**GOLDEN["labels"], "fig": ["fig-t-scaling", "fig-sigpar-energy"]}}
    assert golden.differences(GOLDEN, now) == []
