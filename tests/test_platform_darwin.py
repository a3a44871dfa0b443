"""macOS branches, run here with injected Darwin facts: the powermetrics samplers the Mac
has (canned `powermetrics -h`: Apple silicon has no smc), the P/E core split as sysctl
reports it (an M4: 4 + 6), the profiles' resolvers built on it, and the start method of
the gil study's processes (CPython's default on each platform)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from parbench import config as pbconfig
from parbench.studies.gil import worker
from parbench.telemetry import powermetrics as pm
from parbench.telemetry.affinity import core_topology
from parbench.telemetry.capabilities import probe, warnings
from parbench.telemetry.energy import EnergyMeter

FIXTURES = Path(__file__).parent / "fixtures" / "telemetry"
HELP_ARM = (FIXTURES / "powermetrics" / "help_apple_silicon.txt").read_text()
HELP_INTEL = (FIXTURES / "powermetrics" / "help_intel.txt").read_text()


def canned_sysctl(path: Path):
    values = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            name, value = line.split("\t", 1)
            values[name] = value
    return values.get


def help_run(text, calls=None):
    def run(argv):
        if calls is not None:
            calls.append(argv)
        return 0, text
    return run


# --- powermetrics: the samplers this Mac has ----------------------------------------------

def test_the_sampler_list_is_read_from_powermetrics_help():
    assert pm.parse_sampler_list(HELP_ARM) == ["tasks", "battery", "network", "disk", "interrupts", "cpu_power",
                                               "thermal", "sfi", "gpu_power", "ane_power"]
    assert "smc" in pm.parse_sampler_list(HELP_INTEL)
    # groups ("all", "default") are not samplers; text without the list says nothing
    assert "all" not in pm.parse_sampler_list(HELP_INTEL)
    assert pm.parse_sampler_list("powermetrics must be invoked as the superuser") is None


def test_a_sampler_the_mac_lacks_is_left_out_with_the_reason():
    keep, notes = pm.usable_samplers(["cpu_power", "smc"], pm.parse_sampler_list(HELP_ARM), "arm64")
    assert keep == ["cpu_power"]
    assert len(notes) == 1 and "no 'smc' sampler" in notes[0] and "cpu_power" in notes[0]
    assert pm.usable_samplers(["cpu_power", "smc"], pm.parse_sampler_list(HELP_INTEL), "x86_64") == (
        ["cpu_power", "smc"], [])


def test_when_the_mac_cannot_say_apple_silicon_still_drops_smc():
    keep, notes = pm.usable_samplers(["cpu_power", "smc"], None, "arm64")
    assert keep == ["cpu_power"] and "Apple silicon" in notes[0]
    assert pm.usable_samplers(["cpu_power", "smc"], None, "x86_64") == (["cpu_power", "smc"], [])


def test_the_help_is_asked_as_the_session_runs_powermetrics():
    calls = []
    assert pm.supported_samplers("/usr/bin/powermetrics", use_sudo=True, run=help_run(HELP_ARM, calls))
    assert calls == [["sudo", "-n", "/usr/bin/powermetrics", "-h"]]
    calls.clear()
    pm.supported_samplers("/usr/bin/powermetrics", use_sudo=False, run=help_run(HELP_ARM, calls))
    assert calls == [["/usr/bin/powermetrics", "-h"]]


@pytest.fixture
def mac_powermetrics(tmp_path, monkeypatch):
    binary = tmp_path / "powermetrics"
    binary.write_text("#!/bin/sh\nexit 64\n")
    binary.chmod(0o755)
    monkeypatch.setattr(pm, "_sudo_noninteractive_ok", lambda: True)
    return {"powermetrics": {"enabled": True, "binary": str(binary), "samplers": ["cpu_power", "smc"]}}


def test_apple_silicon_has_energy_but_no_temperature_and_one_warning_says_why(mac_powermetrics):
    caps = probe(mac_powermetrics, system="Darwin", machine="arm64", sensors={},
                 perf_run=lambda argv: (0, "1000,,cycles"), powermetrics_help_run=help_run(HELP_ARM))
    assert caps["energy"]["source"] == "powermetrics" and caps["energy"]["samplers"] == ["cpu_power"]
    assert caps["temperature"]["available"] is False
    assert "no 'smc' sampler" in caps["temperature"]["reason"]
    said = [w for w in warnings(caps) if "smc" in w]
    assert len(said) == 1 and said[0].startswith("temperature:")


def test_an_intel_mac_has_temperature_from_smc(mac_powermetrics):
    caps = probe(mac_powermetrics, system="Darwin", machine="x86_64", sensors={},
                 perf_run=lambda argv: (0, "1000,,cycles"), powermetrics_help_run=help_run(HELP_INTEL))
    assert caps["temperature"] == {"available": True, "source": "powermetrics:smc", "reason": None}
    assert caps["energy"]["samplers"] == ["cpu_power", "smc"] and caps["energy"]["sampler_notes"] == []


def test_the_energy_meter_runs_only_the_samplers_the_mac_has(mac_powermetrics, tmp_path):
    meter = EnergyMeter.detect(mac_powermetrics["powermetrics"], tmp_path, system="Darwin",
                               help_run=help_run(HELP_ARM))
    assert meter.source == "powermetrics"
    command = meter.session.command()
    assert command[command.index("--samplers") + 1] == "cpu_power"


# --- the P/E split, as the machine reports it ----------------------------------------------

def test_an_m4_reports_4_performance_and_6_efficiency_cores():
    topo = core_topology(system="Darwin", sysctl=canned_sysctl(FIXTURES / "darwin" / "sysctl_m4.txt"))
    assert topo["performance"] == [0, 1, 2, 3] and topo["efficiency"] == [4, 5, 6, 7, 8, 9]
    assert "hw.perflevel0" in topo["source"]


def test_an_intel_mac_without_perflevels_has_only_performance_cores():
    topo = core_topology(system="Darwin", sysctl=lambda name: None, available=[0, 1, 2, 3])
    assert topo == {"performance": [0, 1, 2, 3], "efficiency": [], "source": "no hw.perflevel sysctl: every CPU"}


def test_linux_hybrid_and_plain_machines():
    hybrid = core_topology(system="Linux", root=FIXTURES / "hybrid", available=range(20))
    assert hybrid["performance"] == list(range(12)) and hybrid["efficiency"] == list(range(12, 20))
    # a cpuset narrows both lists
    narrowed = core_topology(system="Linux", root=FIXTURES / "hybrid", available=[0, 1, 14])
    assert narrowed["performance"] == [0, 1] and narrowed["efficiency"] == [14]
    plain = core_topology(system="Linux", root=FIXTURES / "intel", available=[0, 1])
    assert plain == {"performance": [0, 1], "efficiency": [], "source": "every available CPU"}


def test_the_m4_profile_takes_the_split_from_the_machine():
    tel = pbconfig.load("m4")["telemetry"]["cpu_affinity"]
    here = core_topology()
    assert (tel["performance_cores"], tel["efficiency_cores"]) == (here["performance"], here["efficiency"])
    text = (Path(pbconfig.project.conf_dir()) / "m4.yaml").read_text()
    assert "${performance_cpus:}" in text and "6 performance + 4 efficiency cores)" not in text


# --- the gil study's processes ------------------------------------------------------------

@pytest.mark.parametrize("platform_name, methods, expected", [
    ("linux", ["fork", "spawn", "forkserver"], "fork"),
    ("darwin", ["spawn", "fork", "forkserver"], None),  # CPython's default there: spawn
    ("win32", ["spawn"], None),
])
def test_processes_start_as_cpython_starts_them_on_each_platform(platform_name, methods, expected):
    assert worker.start_method_for(platform_name, methods) == expected


def test_this_platforms_start_method_is_recorded():
    assert worker.start_method() == ("fork" if sys.platform.startswith("linux") else "spawn")
