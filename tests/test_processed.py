"""What every study's aggregate writes (parbench.processed): its tables named
`<study>_<name>.parquet`, written whole (through a rename), and its counts by status."""

import pandas as pd
import pytest

from parbench import processed


def test_tables_are_named_by_study_and_written_whole(tmp_path):
    tables = {"cells": pd.DataFrame({"status": ["ok", "failed"], "x": [1.0, 2.0]}), "load": pd.DataFrame({"y": [1]})}
    written = processed.write_tables("toy", tables, tmp_path / "out")
    assert [p.name for p in written] == ["toy_cells.parquet", "toy_load.parquet"]
    assert pd.read_parquet(written[0]).equals(tables["cells"])
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["toy_cells.parquet", "toy_load.parquet"]
    assert [p.name for p in processed.write_tables("toy", tables, tmp_path / "some", ["load"])] == ["toy_load.parquet"]


def test_a_table_that_fails_to_write_leaves_the_earlier_one(tmp_path):
    path = processed.write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "t.parquet")

    class Broken(pd.DataFrame):
        def to_parquet(self, *args, **kwargs):
            raise OSError("disk full")

    with pytest.raises(OSError):
        processed.write_parquet(Broken({"a": [2]}), path)
    assert pd.read_parquet(path)["a"].tolist() == [1]


def test_status_counts_name_every_status_even_when_none_has_it():
    frame = pd.DataFrame({"status": ["ok", "ok", "failed"]})
    assert processed.status_counts(frame) == "2 ok, 0 unavailable, 1 failed"
    assert processed.status_counts(frame.iloc[:0]) == "0 ok, 0 unavailable, 0 failed"


def test_an_aggregate_writes_its_tables_and_seed_file_and_prints_the_seed_then_its_count(tmp_path, capsys):
    from parbench.processed import write_study

    tables = {"cells": pd.DataFrame({"status": ["ok", "failed"]}), "extra": pd.DataFrame({"x": [1]})}
    write_study("toy", tables, tmp_path, "toy_seed.txt", "SEED BLOCK\n", "toy: 2 cells", names=["cells"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy_cells.parquet", "toy_seed.txt"]
    assert (tmp_path / "toy_seed.txt").read_text() == "SEED BLOCK\n"
    assert capsys.readouterr().out == f"SEED BLOCK\n\ntoy: 2 cells -> {tmp_path}\n"
