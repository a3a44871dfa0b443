"""Cells of one profile measured on several machines (SLURM nodes, or hosts measuring
into one data/ tree): the machines are read from the cells' provenance, the Method
section names each, figures tell them apart, and baselines (speedup, efficiency) are
taken on the cell's own machine. Canned frames and records of two hosts."""

import json

import pandas as pd
import pytest

from parbench import hosts
from parbench.paper.sources import shared_parts
from parbench.studies.sched import aggregate as sched_aggregate
from parbench.studies.sched import figures as sched_figures
from parbench.studies.sigpar import aggregate as sigpar_aggregate
from parbench.studies.sigpar import figures as sigpar_figures

from test_sched_study import record as sched_record
from test_sigpar_aggregate import record as sigpar_record

NODE_A = {"hostname": "node-a", "cpu_model": "AMD EPYC 9654", "logical_cores": 192}
NODE_B = {"hostname": "node-b", "cpu_model": "Intel Xeon Platinum 8480+", "logical_cores": 112}


def two_host_frame():
    return pd.DataFrame([{**NODE_A, "status": "ok", "threads": 1}, {**NODE_A, "status": "ok", "threads": 2},
                         {**NODE_B, "status": "ok", "threads": 1}])


def machine_record(hostname="node-a", studies=("sched",)):
    return {"profile": "cluster", "description": "two node types", "config_hash": "abc",
            "machine": {"hostname": hostname, "cpu_model": "AMD EPYC 9654", "logical_cores": 192,
                        "physical_cores": 96, "memory_total_bytes": 2**38, "os_release": "Debian 12",
                        "kernel": "6.1"},
            "libraries": {}, "git": {}, "capabilities": {}, "config": {"studies": list(studies)}}


def method(machine, tables) -> str:
    """The Method section the paper would show, from tables by name."""
    return shared_parts(machine, tables)[0]["run.md"]


def test_machines_lists_every_host_with_its_cpu_cores_and_studies():
    one_b = pd.DataFrame([{**NODE_B, "status": "ok"}])
    found = hosts.machines({"sched": two_host_frame(), "sigpar": one_b, "other": pd.DataFrame({"x": [1]})})
    assert found.to_dict("records") == [
        {"host": "node-a", "cpu_model": "AMD EPYC 9654", "logical_cores": 192, "studies": "sched"},
        {"host": "node-b", "cpu_model": "Intel Xeon Platinum 8480+", "logical_cores": 112, "studies": "sched, sigpar"},
    ]


def test_rows_without_a_hostname_are_no_machine():
    # e.g. a peer that could not start, or a table of the run: it says nothing of where cells ran
    frame = pd.DataFrame([{**NODE_A, "status": "ok"}, {"hostname": None, "status": "unavailable"}])
    found = hosts.machines({"dispatch": frame, "kem": pd.DataFrame({"hostname": [None], "status": ["ok"]})})
    assert found["host"].tolist() == ["node-a"] and found["studies"].tolist() == ["dispatch"]
    assert "Every cell ran on this machine (host `node-a`)." in method(machine_record("node-a", ["dispatch"]),
                                                                       {"dispatch_cells": frame})


def test_a_cell_without_a_hostname_is_an_unknown_host():
    frame = pd.DataFrame({"hostname": ["node-a", None], "status": ["ok", "ok"]})
    assert hosts.host_labels(frame).tolist() == ["node-a", hosts.UNKNOWN_HOST]
    assert hosts.several_hosts(frame)
    assert hosts.host_labels(pd.DataFrame({"status": ["ok"]})).tolist() == [hosts.UNKNOWN_HOST]


def test_method_names_every_machine_a_cell_ran_on():
    text = method(machine_record("node-a"), {"sched_summary": two_host_frame()})
    assert "machines (@tbl-machines)" in text and '[2]{.fact key="paper.n_machines"}' in text
    assert "probed on (host `node-a`)" in text
    assert "`node-a`" in text and "Intel Xeon Platinum 8480+" in text
    assert "{#tbl-machines}" in text
    # the Method section names the probed machine first, then the machines the cells ran on
    assert text.index("AMD EPYC 9654") < text.index("machines (@tbl-machines)")


def test_method_of_a_one_machine_run_says_so_in_one_sentence():
    frame = pd.DataFrame([{**NODE_A, "status": "ok"}])
    assert "Every cell ran on this machine (host `node-a`)." in method(machine_record("node-a"),
                                                                       {"sched_summary": frame})
    # cells that ran on another machine than the probed one are named even when alone
    assert "`node-a`" in method(machine_record("login-1"), {"sched_summary": frame})
    assert "Every cell ran" not in method(machine_record(), {})


def test_method_names_rows_measured_under_another_configuration():
    """Rows measured under another composed configuration (an earlier run's, or one the
    cell changed) are counted by table and hash; a run whose rows all carry its hash says
    nothing of it."""
    rows = [{**NODE_A, "status": "ok", "config_hash": h} for h in ("abc", "old1", "old1", None)]
    text = method(machine_record("node-a"), {"sched_fracsteal_frames": pd.DataFrame(rows)})
    assert "Not every row carries that hash:" in text
    assert '[2]{.fact key="paper.other_config.sched_fracsteal_frames.old1"} of the [4]{.fact ' in text
    assert "rows of `sched_fracsteal_frames` (sched) carry `old1`. A row carries the hash" in text
    assert "these tables cannot tell which" in text
    every = [{**NODE_A, "status": "ok", "config_hash": "old1"}] * 3
    text = method(machine_record("node-a"), {"sched_fracsteal_frames": pd.DataFrame(every)})
    assert 'all [3]{.fact key="paper.other_config.sched_fracsteal_frames.old1"} rows of `sched_fracsteal_frames`' in text
    assert "`abc`" in text and "hash `abc`" not in text
    same = [{**NODE_A, "status": "ok", "config_hash": "abc"}]
    assert "Not every row" not in method(machine_record("node-a"), {"sched_fracsteal_frames": pd.DataFrame(same)})


def test_method_names_rows_measured_with_the_code_of_another_commit():
    machine = {**machine_record("node-a"), "git": {"git_commit": "a" * 40, "git_dirty": False}}
    rows = [{**NODE_A, "status": "ok", "git_commit": c} for c in ("a" * 40, "b" * 40, None)]
    text = method(machine, {"sched_fracsteal_frames": pd.DataFrame(rows)})
    assert "The machine was probed at git commit `aaaaaaaaaaaa`" in text
    assert "Not every row was measured with the code of that commit:" in text
    assert "`sched_fracsteal_frames` (sched) was measured at commit `bbbbbbbbbbbb`." in text
    assert '[1]{.fact key="paper.other_commit.sched_fracsteal_frames.' + "b" * 40 + '"}' in text
    rows = [{**NODE_A, "status": "ok", "git_commit": "a" * 40}]
    assert "with the code of" not in method(machine, {"sched_fracsteal_frames": pd.DataFrame(rows)})


def test_figures_tell_hosts_apart_only_when_there_are_several():
    frame = hosts.with_host(two_host_frame())
    assert set(hosts.host_encoding(frame)) == {"shape", "detail"}
    assert hosts.host_encoding(frame[frame["host"] == "node-a"]) == {}
    split = hosts.split_by_host(two_host_frame().assign(operation="sign"), "operation")
    assert split["operation"].tolist() == ["sign on node-a", "sign on node-a", "sign on node-b"]
    one = two_host_frame()[lambda f: f["hostname"] == "node-a"].assign(operation="sign")
    assert hosts.split_by_host(one, "operation")["operation"].tolist() == ["sign", "sign"]


def _on(rec, node):
    rec["provenance"] = dict(rec["provenance"], **node)
    return rec


def test_sched_speedups_compare_cells_of_one_machine():
    records = [_on(sched_record("quicksort", "sequential", 1, [8.0]), NODE_A),
               _on(sched_record("quicksort", "ws", 2, [4.0]), NODE_A),
               _on(sched_record("quicksort", "sequential", 1, [2.0]), NODE_B),
               _on(sched_record("quicksort", "ws", 2, [0.5]), NODE_B)]
    summary = sched_aggregate.study_tables(records)["summary"]
    ws = summary[summary["scheduler"] == "ws"].set_index("hostname")
    assert ws.loc["node-a", "speedup_vs_sequential"] == pytest.approx(2.0)
    assert ws.loc["node-b", "speedup_vs_sequential"] == pytest.approx(4.0)
    assert "host_key" not in summary.columns


def test_sched_figures_draw_each_host_apart():
    records = [_on(sched_record("quicksort", "sequential", 1, [8.0]), NODE_A),
               _on(sched_record("quicksort", "ws", 1, [8.0]), NODE_A),
               _on(sched_record("quicksort", "ws", 2, [4.0]), NODE_B),
               _on(sched_record("quicksort", "sequential", 1, [2.0]), NODE_B),
               _on(sched_record("quicksort", "ws_sync", 2, [4.0]), NODE_A)]
    tables = sched_aggregate.study_tables(records)
    for chart in (sched_figures.time(tables["summary"], tables["runs"], {}),
                  sched_figures.speedup(tables["summary"], {})):
        spec = json.dumps(chart.to_dict())
        assert '"shape": {"field": "host"' in spec and "node-b" in spec
    spec = json.dumps(sched_figures.time(tables["summary"], tables["runs"], {}).to_dict())
    assert "sequential on node-a" in spec and "sequential on node-b" in spec
    steals = json.dumps(sched_figures.steals(tables["summary"], {}).to_dict())
    assert "quicksort on node-b" in steals


def test_sched_figures_of_one_machine_are_unchanged():
    records = [sched_record("quicksort", "sequential", 1, [8.0]), sched_record("quicksort", "ws", 2, [4.0])]
    tables = sched_aggregate.study_tables(records)
    spec = json.dumps(sched_figures.time(tables["summary"], tables["runs"], {}).to_dict())
    assert '"shape": {"field": "host"' not in spec
    assert "sequential on" not in spec


def test_sigpar_efficiency_and_figures_per_machine():
    records = [_on(sigpar_record(workers=1, ops=100), NODE_A), _on(sigpar_record(workers=2, ops=180), NODE_A),
               _on(sigpar_record(workers=1, ops=400), NODE_B), _on(sigpar_record(workers=2, ops=400), NODE_B)]
    cells = sigpar_aggregate.cells_table(records)
    eff = cells.set_index(["hostname", "workers"])["scaling_efficiency"]
    assert eff[("node-a", 2)] == pytest.approx(0.9) and eff[("node-b", 2)] == pytest.approx(0.5)
    assert "host_key" not in cells.columns
    spec = json.dumps(sigpar_figures.scaling(cells, {}).to_dict())
    assert "sign on node-a" in spec and "sign on node-b" in spec
    assert "sign on node-a" in json.dumps(sigpar_figures.efficiency(cells, {}).to_dict())
