"""Capability probe and its warnings, on this machine and on canned sources."""

from __future__ import annotations

from pathlib import Path


from parbench.telemetry import capabilities as caps_module
from parbench.telemetry import powermetrics as pm_module
from parbench.telemetry.capabilities import (
    parse_perf_stat_csv,
    probe,
    probe_cycle_counter,
    probe_perf_cycles,
    warnings,
    with_defaults,
)

FIXTURES = Path(__file__).parent / "fixtures" / "telemetry"
FEATURES = ("cpu_sampling", "temperature", "energy", "affinity", "cycle_counter")

PERF_UNSUPPORTED = "<not supported>,,cycles,0,100.00,,\n"
PERF_OK = "1234567,,cycles,456789,100.00,,\n"


def canned_perf(status: int, output: str):
    calls = []

    def run(argv):
        calls.append(argv)
        return status, output

    run.calls = calls
    return run


def test_probe_on_this_machine_has_structure_and_reasons():
    caps = probe({})
    for feature in FEATURES:
        entry = caps[feature]
        assert isinstance(entry["available"], bool), feature
        if entry["available"]:
            assert entry["source"], feature
        else:
            assert isinstance(entry["reason"], str) and entry["reason"], feature
    assert caps["cpu_sampling"]["available"]
    assert caps["cpu_sampling"]["interval_sec"] == 0.25
    sentences = warnings(caps)
    for feature in ("temperature", "energy", "cycle_counter"):
        if not caps[feature]["available"]:
            assert any(s.startswith(f"{feature}: ") for s in sentences), feature
    if not caps["energy"]["available"]:
        assert any(s.endswith("energy per operation is recorded as null") for s in sentences)


def test_probe_canned_intel_linux():
    perf = canned_perf(0, PERF_UNSUPPORTED)
    caps = probe({}, root=FIXTURES / "intel", system="Linux", sensors={}, perf_run=perf)
    assert caps["energy"] == {"available": True, "source": "rapl", "reason": None}
    assert caps["temperature"]["available"] is False
    assert "no CPU temperature sensor" in caps["temperature"]["reason"]
    cyc = caps["cycle_counter"]
    assert cyc["available"] is False and cyc["source"] == "tsc" and cyc["invariant_tsc"] is True
    assert "<not supported>" in cyc["reason"]
    assert perf.calls == [["perf", "stat", "-e", "cycles", "-x,", "true"]]
    sentences = warnings(caps)
    assert not any(s.startswith("energy:") for s in sentences)
    assert any(s.startswith("cycle_counter:") and "invariant TSC" in s for s in sentences)


def test_probe_canned_no_powercap_warning_sentence(tmp_path):
    caps = probe({}, root=tmp_path, system="Linux", sensors={}, perf_run=canned_perf(0, PERF_OK))
    assert caps["energy"]["available"] is False and caps["energy"]["source"] is None
    expected = (
        f"energy: no RAPL powercap ({tmp_path}/sys/class/powercap/intel-rapl:0 missing)"
        " and not macOS; energy per operation is recorded as null"
    )
    assert expected in warnings(caps)
    assert caps["cycle_counter"]["available"] is True
    assert caps["cycle_counter"]["source"] == "perf"
    assert caps["cycle_counter"]["invariant_tsc"] is None  # no cpuinfo under tmp_path


def test_cycle_counter_arm_has_no_tsc_fallback():
    cyc = probe_cycle_counter(FIXTURES / "arm", perf_run=canned_perf(0, PERF_UNSUPPORTED))
    assert cyc["available"] is False and cyc["source"] is None
    assert cyc["invariant_tsc"] is False
    assert "no invariant TSC" in cyc["reason"]
    sentence = warnings({"cycle_counter": cyc})[0]
    assert sentence.endswith("cycle counts are recorded as null")


def test_parse_perf_stat_csv():
    assert parse_perf_stat_csv(PERF_OK) == (1234567, None)
    assert parse_perf_stat_csv("98765,,cycles:u,1000,100.00,,") == (98765, None)
    count, reason = parse_perf_stat_csv(PERF_UNSUPPORTED)
    assert count is None and "<not supported>" in reason
    # said in the words of the kem study's own probe, which reaches the same finding
    hal = (Path(__file__).parents[1] / "native/kem/src/cycle_counter/hal.c").read_text()
    assert "this kernel offers no hardware cycle event" in reason and "this kernel offers no \"" in hal
    count, reason = parse_perf_stat_csv("<not counted>,,cycles,0,0.00,,")
    assert count is None and "<not counted>" in reason and "no hardware cycle event" not in reason
    count, reason = parse_perf_stat_csv("Error:\nAccess to performance monitoring ... paranoid\n")
    assert count is None and "no cycles line" in reason


def test_probe_perf_cycles_failures():
    ok, reason = probe_perf_cycles(perf="/nonexistent/perf")
    assert not ok and reason == "perf is not installed"
    ok, reason = probe_perf_cycles(run=canned_perf(2, "WARNING: perf not found for kernel 6.8\n"))
    assert not ok and "no cycles line" in reason

    def boom(argv):
        raise OSError("exec format error")

    ok, reason = probe_perf_cycles(run=boom)
    assert not ok and "exec format error" in reason


def test_affinity_warnings():
    cfg = {"cpu_affinity": {"enabled": True, "performance_cores": [0, 99999], "efficiency_cores": []}}
    caps = probe(cfg, sensors={}, perf_run=canned_perf(0, PERF_OK))
    if caps["affinity"]["available"]:
        assert caps["affinity"]["missing_cpus"] == [99999]
        assert any(s.startswith("affinity:") and "99999" in s for s in warnings(caps))

    bad = probe({"cpu_affinity": {"enabled": True, "strategy": "bogus", "performance_cores": [0]}},
                sensors={}, perf_run=canned_perf(0, PERF_OK))
    assert any("'bogus'" in s for s in warnings(bad))

    mac = probe({"cpu_affinity": {"enabled": True, "performance_cores": [0]}}, system="Darwin",
                sensors={}, perf_run=canned_perf(0, PERF_OK))
    assert mac["affinity"]["available"] is False
    assert any(s.startswith("affinity: macOS does not expose strict per-core pinning")
               for s in warnings(mac))

    off = probe({"cpu_affinity": {"enabled": False, "performance_cores": [99999]}}, system="Darwin",
                sensors={}, perf_run=canned_perf(0, PERF_OK))
    assert not any(s.startswith("affinity:") for s in warnings(off))


def test_darwin_temperature_from_powermetrics(tmp_path, monkeypatch):
    binary = tmp_path / "powermetrics"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setattr(pm_module, "_sudo_noninteractive_ok", lambda: True)
    cfg = {"powermetrics": {"enabled": True, "binary": str(binary)}}
    # an Intel Mac, whose powermetrics (here: a script that lists no samplers) keeps smc
    caps = probe(cfg, system="Darwin", machine="x86_64", sensors={}, perf_run=canned_perf(0, PERF_OK))
    assert caps["energy"]["source"] == "powermetrics"
    assert caps["temperature"] == {"available": True, "source": "powermetrics:smc", "reason": None}

    cfg["powermetrics"]["enabled"] = False
    caps = probe(cfg, system="Darwin", sensors={}, perf_run=canned_perf(0, PERF_OK))
    assert caps["energy"]["available"] is False
    assert "powermetrics.enabled" in caps["temperature"]["reason"]


def test_with_defaults_fills_nested_keys():
    cfg = with_defaults({"powermetrics": {"enabled": True}, "sample_interval_sec": 1.0})
    assert cfg["powermetrics"]["samplers"] == ["cpu_power", "smc"]
    assert cfg["powermetrics"]["enabled"] is True
    assert cfg["sample_interval_sec"] == 1.0
    assert cfg["rapl"] == {"enabled": True}
    assert caps_module.DEFAULT_TELEMETRY_CFG["powermetrics"]["enabled"] is False  # not mutated


def test_warnings_empty_when_everything_available():
    ok = {"available": True, "source": "x", "reason": None}
    assert warnings({f: dict(ok) for f in FEATURES}) == []
