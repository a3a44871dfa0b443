"""RAPL counters, powermetrics parsing and sessions, and the EnergyMeter facade, on
canned sysfs trees, a canned powermetrics log and a fake powermetrics binary."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
import time
from pathlib import Path

import pytest

from parbench.telemetry import powermetrics as pm_module
from parbench.telemetry import rapl as rapl_module
from parbench.telemetry.energy import (
    EnergyMeter,
    PowermetricsSession,
    RaplCounter,
    detect_energy_source,
    parse_powermetrics,
    powermetrics_available,
    rapl_delta_uj,
    window_samples,
)

FIXTURES = Path(__file__).parent / "fixtures" / "telemetry"
PM_LOG = FIXTURES / "powermetrics" / "apple_silicon_3_samples.log"
MAX_RANGE = 262143328850


def write_uj(root: Path, zone: str, value: int) -> None:
    """Replace energy_uj atomically, as the kernel presents a whole value."""
    path = root / "sys" / "class" / "powercap" / zone / "energy_uj"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(f"{value}\n")
    os.replace(tmp, path)


@pytest.fixture
def intel_root(tmp_path):
    root = tmp_path / "intel"
    shutil.copytree(FIXTURES / "intel" / "sys", root / "sys")
    return root


@pytest.fixture
def wrap_root(tmp_path):
    root = tmp_path / "amd"
    shutil.copytree(FIXTURES / "amd" / "sys", root / "sys")
    return root


# ---------------------------------------------------------------------------- RAPL


def test_rapl_delta_arithmetic():
    assert rapl_delta_uj(100, 250, MAX_RANGE) == 150
    assert rapl_delta_uj(MAX_RANGE - 1000, 500, MAX_RANGE) == 1500
    assert rapl_delta_uj(7, 7, MAX_RANGE) == 0
    assert rapl_delta_uj(1000, 10, None) == 10  # unknown range: count from zero


def test_rapl_sums_package_domains_only():
    counter = RaplCounter(FIXTURES / "intel")
    assert counter.available() == (True, None)
    assert counter.domain_names() == ["package-0", "package-1"]  # no core/dram/psys
    assert counter.read_joules() == pytest.approx((123456789 + 987654321) / 1e6)


def test_rapl_increments(intel_root):
    counter = RaplCounter(intel_root)
    first = counter.read_joules()
    write_uj(intel_root, "intel-rapl:0", 123456789 + 5_000_000)
    write_uj(intel_root, "intel-rapl:1", 987654321 + 2_500_000)
    write_uj(intel_root, "intel-rapl:0:0", 10**12)  # sub-zone ignored
    assert counter.read_joules() - first == pytest.approx(7.5)


def test_rapl_wraparound(wrap_root):
    counter = RaplCounter(wrap_root)
    first = counter.read_joules()
    assert first == pytest.approx(262143000000 / 1e6)
    write_uj(wrap_root, "intel-rapl:0", 1_000_000)  # wrapped past max_energy_range_uj
    second = counter.read_joules()
    assert second - first == pytest.approx((MAX_RANGE - 262143000000 + 1_000_000) / 1e6)
    write_uj(wrap_root, "intel-rapl:0", 3_000_000)
    assert counter.read_joules() - second == pytest.approx(2.0)


def test_rapl_missing_powercap(tmp_path):
    ok, reason = RaplCounter(tmp_path).available()
    assert not ok
    assert "no RAPL powercap" in reason and "intel-rapl:0 missing" in reason


def test_rapl_no_package_zone(tmp_path):
    zone = tmp_path / "sys" / "class" / "powercap" / "intel-rapl:0"
    zone.mkdir(parents=True)
    (zone / "name").write_text("psys\n")
    (zone / "energy_uj").write_text("1\n")
    ok, reason = RaplCounter(tmp_path).available()
    assert not ok and "no RAPL package domain" in reason


def test_rapl_permission_denied(monkeypatch):
    # energy_uj is root-only on patched kernels; fake the denial (tests may run as root)
    real_open = open

    def deny_energy(path, *args, **kwargs):
        if str(path).endswith("energy_uj"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(rapl_module, "open", deny_energy, raising=False)
    ok, reason = RaplCounter(FIXTURES / "intel").available()
    assert not ok and "not readable" in reason and "root" in reason


# ---------------------------------------------------------------------- powermetrics


def test_parse_powermetrics_three_samples():
    parsed = parse_powermetrics(PM_LOG.read_text())
    assert parsed["sample_count"] == 3
    samples = parsed["samples"]
    assert [s["cpu_power_w"] for s in samples] == pytest.approx([18.234, 19.876, 17.650])
    assert [s["combined_power_w"] for s in samples] == pytest.approx([18.255, 19.894, 17.683])
    assert [s["cpu_temperature_c"] for s in samples] == pytest.approx([62.41, 64.02, 65.33])
    assert samples[0]["elapsed_sec"] == pytest.approx(1.00321)
    # Thu Nov 20 09:00:25 2025 +0100 == 08:00:25 UTC
    assert samples[0]["timestamp"] == pytest.approx(1763625625.0)
    assert samples[1]["timestamp"] - samples[0]["timestamp"] == pytest.approx(1.0)
    assert parsed["avg_power_w"] == pytest.approx((18.234 + 19.876 + 17.650) / 3)
    assert parsed["avg_temperature_c"] == pytest.approx((62.41 + 64.02 + 65.33) / 3)
    assert parsed["power_field"] == "cpu_power_w"


def test_parse_powermetrics_intel_mac_truncated():
    parsed = parse_powermetrics((FIXTURES / "powermetrics" / "intel_mac_truncated.log").read_text())
    assert parsed["sample_count"] == 2
    assert [s["cpu_power_w"] for s in parsed["samples"]] == pytest.approx([24.56, 25.44])
    assert parsed["samples"][1]["cpu_temperature_c"] is None  # cut off before the line
    assert parsed["avg_temperature_c"] == pytest.approx(91.5)


def test_parse_powermetrics_combined_only_and_headerless():
    text = "Combined Power (CPU + GPU + ANE): 1500 mW\nCPU die temperature: 45.67 C\n"
    parsed = parse_powermetrics(text)
    assert parsed["sample_count"] == 1
    assert parsed["avg_power_w"] == pytest.approx(1.5)
    assert parsed["power_field"] == "combined_power_w"
    assert parsed["avg_temperature_c"] == pytest.approx(45.67)
    assert parsed["samples"][0]["timestamp"] is None


def test_parse_powermetrics_empty():
    parsed = parse_powermetrics("powermetrics must be invoked as the superuser\n")
    assert parsed == {
        "samples": [],
        "avg_power_w": None,
        "avg_temperature_c": None,
        "sample_count": 0,
        "power_field": None,
    }


def test_window_samples_by_midpoint():
    samples = parse_powermetrics(PM_LOG.read_text())["samples"]
    t0 = samples[0]["timestamp"]
    # midpoints are ~0.5 s before each header time
    assert window_samples(samples, t0, t0 + 1.0) == samples[1:2]
    assert window_samples(samples, t0 - 1.0, t0 + 2.0) == samples
    assert window_samples(samples, t0 + 10, t0 + 20) == []
    assert window_samples([{"timestamp": None, "elapsed_sec": 1.0}], 0, 1e12) == []


def test_powermetrics_available_checks(tmp_path, monkeypatch):
    assert powermetrics_available("/usr/bin/powermetrics", system="Linux") == (False, "not macOS")
    ok, reason = powermetrics_available(str(tmp_path / "nope"), system="Darwin")
    assert not ok and "not found" in reason
    fake = make_fake_powermetrics(tmp_path)
    monkeypatch.setattr(pm_module, "_is_root", lambda: False)
    monkeypatch.setattr(pm_module, "_sudo_noninteractive_ok", lambda: False)
    ok, reason = powermetrics_available(str(fake), system="Darwin")
    assert not ok and "sudo" in reason
    monkeypatch.setattr(pm_module, "_sudo_noninteractive_ok", lambda: True)
    assert powermetrics_available(str(fake), system="Darwin") == (True, None)


def make_fake_powermetrics(tmp_path: Path) -> Path:
    """An executable that records its argv, prints the canned log and waits for SIGINT."""
    script = tmp_path / "powermetrics"
    script.write_text(
        f"#!{sys.executable}\n"
        + textwrap.dedent(
            f"""
            import signal, sys, time
            signal.signal(signal.SIGINT, lambda *a: sys.exit(0))
            with open({str(tmp_path / "argv.txt")!r}, "w") as fh:
                fh.write(" ".join(sys.argv[1:]))
            sys.stdout.write(open({str(PM_LOG)!r}).read())
            sys.stdout.flush()
            while True:
                time.sleep(0.05)
            """
        )
    )
    script.chmod(0o755)
    return script


def wait_for_output(path: Path, timeout_sec: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_sec
    while time.monotonic() < deadline:
        if path.exists() and "CPU die temperature" in path.read_text(errors="replace"):
            return
        time.sleep(0.02)
    raise AssertionError(f"fake powermetrics wrote nothing to {path}")


def test_powermetrics_session_with_fake_binary(tmp_path):
    fake = make_fake_powermetrics(tmp_path)
    log = tmp_path / "logs" / "pm.log"
    session = PowermetricsSession(str(fake), ["cpu_power", "smc"], 0.25, log, use_sudo=False)
    assert session.command() == [str(fake), "--samplers", "cpu_power,smc", "-i", "250"]
    session.start()
    wait_for_output(log)
    summary = session.stop()
    assert (tmp_path / "argv.txt").read_text() == "--samplers cpu_power,smc -i 250"
    assert summary["sample_count"] == 3
    assert summary["log_path"] == str(log)
    assert summary["returncode"] == 0
    assert summary["reason"] is None
    assert summary["elapsed_sec"] > 0
    assert summary["energy_joules"] == pytest.approx(summary["avg_power_w"] * summary["elapsed_sec"])
    assert summary["avg_temperature_c"] == pytest.approx(63.92)


def test_powermetrics_session_sudo_prefix(tmp_path):
    session = PowermetricsSession("/usr/bin/powermetrics", ["smc"], 1.0, tmp_path / "x.log", use_sudo=True)
    assert session.command()[:3] == ["sudo", "-n", "/usr/bin/powermetrics"]
    assert session.command()[-2:] == ["-i", "1000"]


def test_powermetrics_session_failing_binary(tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("#!/bin/sh\necho 'powermetrics must be invoked as the superuser'\nexit 1\n")
    bad.chmod(0o755)
    session = PowermetricsSession(str(bad), ["smc"], 1.0, tmp_path / "bad.log", use_sudo=False)
    session.start()
    deadline = time.monotonic() + 10
    while session.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    summary = session.stop()
    assert summary["returncode"] == 1
    assert summary["energy_joules"] is None and summary["sample_count"] == 0
    assert "superuser" in summary["reason"]


# --------------------------------------------------------------------------- facade


def test_detect_energy_source_reasons(tmp_path, monkeypatch):
    assert detect_energy_source({}, {}, root=FIXTURES / "intel", system="Linux") == ("rapl", None)
    source, reason = detect_energy_source({}, {}, root=tmp_path, system="Linux")
    assert source == "none"
    assert reason == (
        f"no RAPL powercap ({tmp_path}/sys/class/powercap/intel-rapl:0 missing) and not macOS"
    )
    source, reason = detect_energy_source({}, {"enabled": False}, root=FIXTURES / "intel", system="Linux")
    assert source == "none" and "rapl.enabled" in reason

    fake = make_fake_powermetrics(tmp_path)
    monkeypatch.setattr(pm_module, "_sudo_noninteractive_ok", lambda: True)
    on = {"enabled": True, "binary": str(fake)}
    assert detect_energy_source(on, system="Darwin") == ("powermetrics", None)
    source, reason = detect_energy_source({**on, "enabled": False}, system="Darwin")
    assert source == "none" and "powermetrics.enabled" in reason


def test_energy_meter_rapl_window(intel_root):
    meter = EnergyMeter.detect({}, intel_root / "logs", root=intel_root, system="Linux",
                               poll_interval_sec=60.0)
    assert meter.source == "rapl"
    meter.start()
    write_uj(intel_root, "intel-rapl:0", 123456789 + 1_000_000)  # before the window
    meter.mark_window_start()
    write_uj(intel_root, "intel-rapl:0", 123456789 + 6_000_000)
    write_uj(intel_root, "intel-rapl:1", 987654321 + 3_000_000)
    meter.mark_window_end()
    write_uj(intel_root, "intel-rapl:1", 987654321 + 9_000_000)  # after the window
    result = meter.stop()
    assert result["source"] == "rapl"
    assert result["energy_joules"] == pytest.approx(8.0)
    assert result["window_sec"] >= 0
    if result["window_sec"] > 0:
        assert result["avg_power_w"] == pytest.approx(8.0 / result["window_sec"])
    assert result["reason"] is None and result["log_path"] is None


def test_energy_meter_rapl_wraparound_without_marks(wrap_root):
    meter = EnergyMeter.detect({}, wrap_root, root=wrap_root, system="Linux", poll_interval_sec=60.0)
    meter.start()
    write_uj(wrap_root, "intel-rapl:0", 1_000_000)
    result = meter.stop()
    assert result["energy_joules"] == pytest.approx((MAX_RANGE - 262143000000 + 1_000_000) / 1e6)


def test_energy_meter_none_on_this_machine(tmp_path):
    meter = EnergyMeter.detect({"enabled": True}, tmp_path, root=tmp_path, system="Linux",
                               poll_interval_sec=0.05)
    assert meter.source == "none"
    meter.start()
    meter.mark_window_start()
    time.sleep(0.12)
    meter.mark_window_end()
    result = meter.stop()
    assert result["source"] == "none"
    assert result["energy_joules"] is None and result["avg_power_w"] is None
    assert "RAPL" in result["reason"]
    assert set(result) == {"source", "energy_joules", "avg_power_w", "avg_temperature_c",
                           "sample_count", "window_sec", "log_path", "reason"}


def test_energy_meter_powermetrics_session(tmp_path):
    fake = make_fake_powermetrics(tmp_path)
    session = PowermetricsSession(str(fake), ["cpu_power", "smc"], 1.0, tmp_path / "pm.log", use_sudo=False)
    meter = EnergyMeter("powermetrics", session=session)
    meter.start()
    wait_for_output(tmp_path / "pm.log")
    meter.mark_window_start()
    meter.mark_window_end()
    result = meter.stop()
    assert result["source"] == "powermetrics"
    assert result["log_path"] == str(tmp_path / "pm.log")
    # canned samples are from 2025, outside the window: whole-session average, said so
    assert result["sample_count"] == 3
    assert "window" in result["reason"]
    assert result["avg_power_w"] == pytest.approx((18.234 + 19.876 + 17.650) / 3)
    assert result["energy_joules"] == pytest.approx(result["avg_power_w"] * result["window_sec"])


def test_energy_meter_powermetrics_log_name(tmp_path, monkeypatch):
    fake = make_fake_powermetrics(tmp_path)
    monkeypatch.setattr(pm_module, "_sudo_noninteractive_ok", lambda: True)
    meter = EnergyMeter.detect({"enabled": True, "binary": str(fake), "sample_interval_sec": 0.5},
                               tmp_path / "power", label="RSA-2048_sign_t4", system="Darwin")
    assert meter.source == "powermetrics"
    name = meter.session.log_path.name
    assert name.startswith("powermetrics_RSA-2048_sign_t4_") and name.endswith(".log")
    assert meter.session.interval_sec == 0.5


def test_energy_meter_rejects_unknown_source():
    with pytest.raises(ValueError, match="allowed"):
        EnergyMeter("joulescope")
