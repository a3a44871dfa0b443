"""CPU temperature from psutil's view of hwmon (Linux, FreeBSD).

``psutil.sensors_temperatures()`` maps a chip name to readings with ``label`` and
``current`` (degrees Celsius). We pick the first chip present in ``CHIP_PREFERENCE``
and average its preferred readings: package sensors for ``coretemp``, ``Tdie``/``Tctl``
for AMD (``k10temp``/``zenpower``), every reading otherwise. macOS has no
``sensors_temperatures``; there the temperature comes from powermetrics (see
``energy``). Everything here returns None plus a reason instead of raising.
"""

from __future__ import annotations

import math
import platform
from collections.abc import Mapping, Sequence
from typing import Any

try:
    import psutil
except ImportError:
    psutil = None

__all__ = [
    "CHIP_PREFERENCE",
    "read_sensors",
    "read_cpu_temperature_c",
    "temperature_source",
]

# chip -> labels to prefer, in order; the first label group with readings wins.
# Tdie is the true die temperature; Tctl may carry a fan-control offset on some Ryzen.
CHIP_PREFERENCE: dict[str, tuple[tuple[str, ...], ...]] = {
    "coretemp": (("Package id",),),
    "k10temp": (("Tdie",), ("Tctl",)),
    "zenpower": (("Tdie",), ("Tctl",)),
    "cpu_thermal": (),
    "cpu-thermal": (),
    "soc_thermal": (),
}

Sensors = Mapping[str, Sequence[Any]]


def read_sensors() -> tuple[Sensors | None, str | None]:
    """psutil's temperature readings, or (None, reason) when unsupported."""
    if psutil is None:
        return None, "psutil is not installed"
    if not hasattr(psutil, "sensors_temperatures"):
        return None, (
            f"psutil has no sensors_temperatures() on {platform.system()}"
            " (CPU temperature needs powermetrics' smc sampler on macOS)"
        )
    try:
        return psutil.sensors_temperatures(), None
    except Exception as exc:  # noqa: BLE001 - hwmon oddities must not break a run
        return None, f"psutil.sensors_temperatures() failed: {exc}"


def _current(reading: Any) -> float | None:
    value = getattr(reading, "current", None)
    if value is None and isinstance(reading, Sequence) and len(reading) > 1:
        value = reading[1]  # plain (label, current, ...) tuples
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _label(reading: Any) -> str:
    label = getattr(reading, "label", None)
    if label is None and isinstance(reading, Sequence) and reading:
        label = reading[0]
    return str(label or "")


def _choose(sensors: Sensors) -> tuple[str, list[float]] | None:
    """(chip, readings to average) for the most preferred chip with readings."""
    for chip, label_groups in CHIP_PREFERENCE.items():
        readings = sensors.get(chip) or []
        for prefixes in label_groups:
            values = [
                v
                for r in readings
                if _label(r).startswith(prefixes) and (v := _current(r)) is not None
            ]
            if values:
                return chip, values
        values = [v for r in readings if (v := _current(r)) is not None]
        if values:
            return chip, values
    return None


def read_cpu_temperature_c(sensors: Sensors | None = None) -> float | None:
    """Current CPU temperature in degrees Celsius, or None when no supported sensor
    reports. ``sensors`` injects a ``sensors_temperatures()``-shaped mapping."""
    if sensors is None:
        sensors, _ = read_sensors()
        if sensors is None:
            return None
    chosen = _choose(sensors)
    if chosen is None:
        return None
    _, values = chosen
    return sum(values) / len(values)


def temperature_source(sensors: Sensors | None = None) -> tuple[str | None, str | None]:
    """("psutil:<chip>", None) for the chip ``read_cpu_temperature_c`` would use, or
    (None, reason)."""
    if sensors is None:
        sensors, reason = read_sensors()
        if sensors is None:
            return None, reason
    chosen = _choose(sensors)
    if chosen is not None:
        return f"psutil:{chosen[0]}", None
    seen = ", ".join(sorted(sensors)) or "none"
    supported = ", ".join(CHIP_PREFERENCE)
    return None, (
        f"no CPU temperature sensor (psutil.sensors_temperatures() chips: {seen};"
        f" supported: {supported})"
    )
