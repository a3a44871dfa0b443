"""Tolerant /proc and /sys readers."""

from __future__ import annotations

from pathlib import Path

from parbench.telemetry.procfs import (
    cpuinfo_flags,
    is_live_root,
    join_root,
    parse_cpuinfo,
    parse_cpulist,
    parse_key_value_lines,
    read_int,
    read_text,
)

FIXTURES = Path(__file__).parent / "fixtures" / "telemetry"


def test_join_root_and_live_root(tmp_path):
    assert join_root(tmp_path, "/proc/cpuinfo") == str(tmp_path / "proc" / "cpuinfo")
    assert is_live_root("/")
    assert not is_live_root(tmp_path)


def test_read_text_and_int(tmp_path):
    (tmp_path / "n").write_text(" 42\n")
    (tmp_path / "bad").write_text("forty-two\n")
    (tmp_path / "hex").write_text("0x41\n")
    assert read_text(tmp_path, "/n") == "42"
    assert read_int(tmp_path, "/n") == 42
    assert read_int(tmp_path, "/hex") == 0x41
    assert read_int(tmp_path, "/bad") is None
    assert read_text(tmp_path, "/missing") is None
    assert read_int(tmp_path, "/missing") is None
    assert read_text(tmp_path, "/") is None  # a directory is "unreadable", not an error


def test_parse_cpuinfo_blocks():
    blocks = parse_cpuinfo((FIXTURES / "intel" / "proc" / "cpuinfo").read_text())
    assert len(blocks) == 8
    assert blocks[3]["core id"] == "3"
    arm = parse_cpuinfo((FIXTURES / "arm" / "proc" / "cpuinfo").read_text())
    assert len(arm) == 5 and arm[-1]["Hardware"] == "BCM2835"


def test_cpuinfo_flags(tmp_path):
    assert {"constant_tsc", "nonstop_tsc"} <= cpuinfo_flags(FIXTURES / "intel")
    assert "hypervisor" in cpuinfo_flags(FIXTURES / "amd")
    assert "asimd" in cpuinfo_flags(FIXTURES / "arm")  # arm "Features" line
    assert cpuinfo_flags(tmp_path) is None


def test_parse_cpulist():
    assert parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpulist("5") == [5]
    assert parse_cpulist("") == []
    assert parse_cpulist(None) is None
    assert parse_cpulist("a-b") is None


def test_parse_key_value_lines():
    text = '# comment\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\nID=ubuntu\nNAME=\'x y\'\n\nnoequals\n'
    assert parse_key_value_lines(text) == {
        "PRETTY_NAME": "Ubuntu 24.04.1 LTS",
        "ID": "ubuntu",
        "NAME": "x y",
    }
