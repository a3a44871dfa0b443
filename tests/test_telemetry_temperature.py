"""CPU temperature selection on canned psutil.sensors_temperatures() output."""

from __future__ import annotations

from collections import namedtuple

import pytest

from parbench.telemetry.temperature import read_cpu_temperature_c, temperature_source

# Same shape as psutil's shwtemp namedtuple.
T = namedtuple("shwtemp", "label current high critical")


def test_coretemp_prefers_package_readings():
    sensors = {
        "acpitz": [T("", 27.8, None, None)],
        "coretemp": [
            T("Package id 0", 61.0, 100.0, 100.0),
            T("Core 0", 58.0, 100.0, 100.0),
            T("Core 1", 64.0, 100.0, 100.0),
        ],
    }
    assert read_cpu_temperature_c(sensors) == pytest.approx(61.0)
    assert temperature_source(sensors) == ("psutil:coretemp", None)


def test_coretemp_two_packages_are_averaged():
    sensors = {
        "coretemp": [
            T("Package id 0", 60.0, 100.0, 100.0),
            T("Core 0", 99.0, 100.0, 100.0),
            T("Package id 1", 70.0, 100.0, 100.0),
        ]
    }
    assert read_cpu_temperature_c(sensors) == pytest.approx(65.0)


def test_coretemp_without_package_label_uses_cores():
    sensors = {"coretemp": [T("Core 0", 50.0, None, None), T("Core 1", 54.0, None, None)]}
    assert read_cpu_temperature_c(sensors) == pytest.approx(52.0)


def test_k10temp_prefers_tdie_then_tctl():
    both = {"k10temp": [T("Tctl", 72.0, None, None), T("Tdie", 62.0, None, None),
                        T("Tccd1", 60.0, None, None)]}
    assert read_cpu_temperature_c(both) == pytest.approx(62.0)
    tctl_only = {"k10temp": [T("Tctl", 55.5, None, None), T("Tccd1", 50.0, None, None)]}
    assert read_cpu_temperature_c(tctl_only) == pytest.approx(55.5)
    assert temperature_source(tctl_only)[0] == "psutil:k10temp"


def test_zenpower_and_cpu_thermal():
    assert read_cpu_temperature_c({"zenpower": [T("Tdie", 48.0, None, None)]}) == 48.0
    rpi = {"cpu_thermal": [T("", 47.2, None, None), T("", 48.8, None, None)]}
    assert read_cpu_temperature_c(rpi) == pytest.approx(48.0)
    assert temperature_source(rpi) == ("psutil:cpu_thermal", None)


def test_unusable_readings_are_skipped():
    sensors = {"coretemp": [T("Package id 0", None, None, None), T("Core 0", float("nan"), None, None)],
               "k10temp": [T("Tctl", 40.0, None, None)]}
    assert read_cpu_temperature_c(sensors) == pytest.approx(40.0)


def test_no_supported_chip_gives_none_and_reason():
    sensors = {"acpitz": [T("", 27.8, None, None)], "nvme": [T("Composite", 35.0, None, None)]}
    assert read_cpu_temperature_c(sensors) is None
    source, reason = temperature_source(sensors)
    assert source is None
    assert "acpitz" in reason and "nvme" in reason and "coretemp" in reason
    assert read_cpu_temperature_c({}) is None
    assert "none" in temperature_source({})[1]


def test_live_probe_runs():
    value = read_cpu_temperature_c()
    source, reason = temperature_source()
    assert value is None or isinstance(value, float)
    assert (source is None) == (reason is not None)
