"""Energy and power over a measurement window: the ``EnergyMeter`` facade that picks
RAPL on Linux, powermetrics on macOS, or none with a reason, at run time.

Energy over the measurement window is what callers divide by the operations counted in
the same window: ``EnergyMeter.mark_window_start()`` / ``mark_window_end()`` bracket it.
The source-specific parts live in ``rapl`` and ``powermetrics``; their public names are
re-exported here.
"""

from __future__ import annotations

import os
import platform
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from parbench.telemetry.powermetrics import (
    DEFAULT_POWERMETRICS_BINARY,
    DEFAULT_POWERMETRICS_SAMPLERS,
    PowermetricsSession,
    parse_powermetrics,
    powermetrics_available,
    summarize_powermetrics,
    supported_samplers,
    usable_samplers,
    window_samples,
)
from parbench.telemetry.rapl import POWERCAP_DIR, RaplCounter, rapl_delta_uj
from parbench.telemetry.temperature import read_cpu_temperature_c, temperature_source

__all__ = [
    "POWERCAP_DIR",
    "RaplCounter",
    "rapl_delta_uj",
    "parse_powermetrics",
    "summarize_powermetrics",
    "window_samples",
    "powermetrics_available",
    "PowermetricsSession",
    "detect_energy_source",
    "EnergyMeter",
]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def detect_energy_source(
    powermetrics_cfg: Mapping[str, Any] | None = None,
    rapl_cfg: Mapping[str, Any] | None = None,
    *,
    root: str | os.PathLike = "/",
    system: str | None = None,
) -> tuple[str, str | None]:
    """("rapl" | "powermetrics", None) for the usable source, or ("none", reason)."""
    system = system or platform.system()
    pm_cfg = dict(powermetrics_cfg or {})
    rapl_enabled = bool((rapl_cfg or {}).get("enabled", True))
    if system == "Darwin":
        if not pm_cfg.get("enabled", False):
            return "none", "powermetrics disabled in config (powermetrics.enabled: false)"
        ok, reason = powermetrics_available(
            pm_cfg.get("binary", DEFAULT_POWERMETRICS_BINARY), system=system
        )
        return ("powermetrics", None) if ok else ("none", reason)
    if not rapl_enabled:
        rapl_reason = "RAPL disabled in config (rapl.enabled: false)"
    elif system != "Linux":
        rapl_reason = f"no RAPL powercap on {system}"
    else:
        ok, rapl_reason = RaplCounter(root).available()
        if ok:
            return "rapl", None
    return "none", f"{rapl_reason} and not macOS"


class EnergyMeter:
    """Energy, power and temperature over a measurement window, from whichever source
    this machine has.

    ``start()`` begins measuring, ``mark_window_start()``/``mark_window_end()`` bracket
    the analysis window (default: start to stop), ``stop()`` returns
    {"source", "energy_joules", "avg_power_w", "avg_temperature_c", "sample_count",
    "window_sec", "log_path", "reason"}; values are None when the source cannot give
    them and ``reason`` says why. For "rapl" and "none" a poll thread reads the RAPL
    counter (so wraps are not missed) and the psutil temperature every
    ``poll_interval_sec``; "powermetrics" brings its own temperature (smc sampler).
    """

    def __init__(
        self,
        source: str = "none",
        reason: str | None = None,
        *,
        rapl: RaplCounter | None = None,
        session: PowermetricsSession | None = None,
        poll_interval_sec: float = 1.0,
        sample_temperature: bool | None = None,
    ) -> None:
        if source not in ("rapl", "powermetrics", "none"):
            raise ValueError(
                f"unknown energy source {source!r}; allowed: 'rapl', 'powermetrics', 'none'"
            )
        if source == "rapl" and rapl is None:
            raise ValueError("source 'rapl' needs a RaplCounter")
        if source == "powermetrics" and session is None:
            raise ValueError("source 'powermetrics' needs a PowermetricsSession")
        self.source = source
        self.reason = reason
        self.rapl = rapl
        self.session = session
        self.poll_interval_sec = float(poll_interval_sec)
        if sample_temperature is None:
            sample_temperature = source != "powermetrics" and temperature_source()[0] is not None
        self.sample_temperature = sample_temperature
        self._polls: list[tuple[float, float | None]] = []  # (timestamp, temperature_c)
        self._stop_event = threading.Event()
        self._thread: threading.Thread | None = None
        self._t_start = self._t_stop = None
        self._window: list[float | None] = [None, None]
        self._window_joules: list[float | None] = [None, None]
        self._start_joules = self._stop_joules = None
        self._error: str | None = None

    @classmethod
    def detect(
        cls,
        powermetrics_cfg: Mapping[str, Any] | None,
        log_dir: str | os.PathLike,
        *,
        rapl_cfg: Mapping[str, Any] | None = None,
        label: str = "run",
        root: str | os.PathLike = "/",
        system: str | None = None,
        poll_interval_sec: float = 1.0,
        help_run=None,
    ) -> "EnergyMeter":
        """Pick RAPL (Linux, readable, ``rapl.enabled`` not false), powermetrics (macOS,
        ``powermetrics.enabled`` and usable) or none with the reason. ``label`` names
        the powermetrics log: ``log_dir/powermetrics_<label>_<YYYYmmdd-HHMMSS>.log``; it
        runs only the configured samplers the machine has (``help_run`` injects canned
        ``powermetrics -h`` output)."""
        source, reason = detect_energy_source(
            powermetrics_cfg, rapl_cfg, root=root, system=system
        )
        if source == "rapl":
            return cls("rapl", rapl=RaplCounter(root), poll_interval_sec=poll_interval_sec)
        if source == "powermetrics":
            cfg = dict(powermetrics_cfg or {})
            stamp = time.strftime("%Y%m%d-%H%M%S")
            binary = cfg.get("binary", DEFAULT_POWERMETRICS_BINARY)
            # only the samplers this Mac has: one unknown sampler stops powermetrics
            # (capabilities.probe warns once about those left out)
            samplers, _notes = usable_samplers(cfg.get("samplers", DEFAULT_POWERMETRICS_SAMPLERS),
                                               supported_samplers(binary, run=help_run))
            session = PowermetricsSession(
                binary=binary,
                samplers=samplers,
                interval_sec=float(cfg.get("sample_interval_sec", 1.0)),
                log_path=Path(log_dir) / f"powermetrics_{label}_{stamp}.log",
            )
            return cls("powermetrics", session=session, poll_interval_sec=poll_interval_sec)
        return cls("none", reason, poll_interval_sec=poll_interval_sec)

    # -- measurement ---------------------------------------------------------------

    def _read_joules(self) -> float | None:
        if self.rapl is None or self._error:
            return None
        try:
            return self.rapl.read_joules()
        except (OSError, ValueError) as exc:
            self._error = f"RAPL read failed: {exc}"
            return None

    def _poll(self) -> None:
        while not self._stop_event.wait(self.poll_interval_sec):
            self._read_joules()
            temp = read_cpu_temperature_c() if self.sample_temperature else None
            self._polls.append((time.time(), temp))

    def start(self) -> "EnergyMeter":
        if self._t_start is not None:
            raise RuntimeError("EnergyMeter already started")
        self._t_start = time.time()
        if self.source == "powermetrics":
            try:
                self.session.start()
            except OSError as exc:
                self._error = f"could not start powermetrics: {exc}"
        else:
            self._start_joules = self._read_joules()
            if self.source == "rapl" or self.sample_temperature:
                self._thread = threading.Thread(
                    target=self._poll, name="parbench-energy-poll", daemon=True
                )
                self._thread.start()
        return self

    def mark_window_start(self) -> None:
        self._window_joules[0] = self._read_joules()
        self._window[0] = time.time()

    def mark_window_end(self) -> None:
        self._window[1] = time.time()
        self._window_joules[1] = self._read_joules()

    def stop(self) -> dict[str, Any]:
        if self._t_start is None:
            raise RuntimeError("EnergyMeter was not started")
        self._stop_event.set()
        if self._thread is not None:
            self._thread.join(timeout=self.poll_interval_sec + 5.0)
        self._stop_joules = self._read_joules()
        self._t_stop = time.time()
        t0 = self._window[0] if self._window[0] is not None else self._t_start
        t1 = self._window[1] if self._window[1] is not None else self._t_stop
        window_sec = max(0.0, t1 - t0)
        result: dict[str, Any] = {
            "source": self.source,
            "energy_joules": None,
            "avg_power_w": None,
            "avg_temperature_c": None,
            "sample_count": 0,
            "window_sec": window_sec,
            "log_path": None,
            "reason": self.reason,
        }
        if self.source == "powermetrics":
            self._finish_powermetrics(result, t0, t1)
        else:
            polls = [(t, temp) for t, temp in self._polls if t0 <= t <= t1]
            temps = [temp for _, temp in polls if temp is not None]
            result["avg_temperature_c"] = _mean(temps)
            result["sample_count"] = len(polls)
            if self.source == "rapl":
                self._finish_rapl(result, window_sec)
        if self._error:
            result["reason"] = self._error
        return result

    def _finish_rapl(self, result: dict[str, Any], window_sec: float) -> None:
        e0 = self._window_joules[0] if self._window[0] is not None else self._start_joules
        e1 = self._window_joules[1] if self._window[1] is not None else self._stop_joules
        if e0 is None or e1 is None:
            return
        result["energy_joules"] = e1 - e0
        if window_sec > 0:
            result["avg_power_w"] = (e1 - e0) / window_sec

    def _finish_powermetrics(self, result: dict[str, Any], t0: float, t1: float) -> None:
        if self._error:
            return
        summary = self.session.stop()
        result["log_path"] = summary["log_path"]
        samples = summary["samples"]
        in_window = window_samples(samples, t0, t1)
        if in_window:
            summary = summarize_powermetrics(in_window)
        elif samples:
            result["reason"] = (
                "no powermetrics sample fell inside the window (window shorter than"
                " the sample interval, or no timestamps); averaged the whole session"
            )
        else:
            result["reason"] = summary.get("reason")
        result["avg_power_w"] = summary["avg_power_w"]
        result["avg_temperature_c"] = summary["avg_temperature_c"]
        result["sample_count"] = summary["sample_count"]
        if summary["avg_power_w"] is not None:
            result["energy_joules"] = summary["avg_power_w"] * result["window_sec"]
