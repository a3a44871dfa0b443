"""What this machine can measure, probed once per run.

``probe(telemetry_cfg)`` returns one entry per feature, each with at least
``available`` (bool), ``source`` (str | None) and ``reason`` (str | None: why it is
unavailable or degraded). ``warnings(capabilities)`` turns the gaps into one human
sentence each, which the pipeline prints once per run.

Cycle counting: a hardware ``cycles`` event through ``perf stat`` where the PMU is
exposed; otherwise the x86 invariant TSC (``constant_tsc`` + ``nonstop_tsc``) is the
fallback source. It ticks at a fixed reference rate, so it measures time in reference
cycles, not core cycles.
"""

from __future__ import annotations

import copy
import os
import platform
import shutil
import subprocess
from collections.abc import Callable, Mapping
from typing import Any

from parbench.telemetry.affinity import (
    affinity_available,
    available_cpus,
    plan_affinity,
)
from parbench.telemetry.cpu import cpu_sampling_available
from parbench.telemetry.energy import detect_energy_source
from parbench.telemetry.memory import rss_bytes
from parbench.telemetry.powermetrics import (
    DEFAULT_POWERMETRICS_BINARY,
    supported_samplers,
    usable_samplers,
)
from parbench.telemetry.procfs import cpuinfo_flags
from parbench.telemetry.temperature import Sensors, temperature_source

__all__ = [
    "DEFAULT_TELEMETRY_CFG",
    "with_defaults",
    "parse_perf_stat_csv",
    "probe_perf_cycles",
    "probe_cycle_counter",
    "probe",
    "warnings",
]

DEFAULT_TELEMETRY_CFG: dict[str, Any] = {
    "sample_interval_sec": 0.25,
    "cpu_affinity": {
        "enabled": False,
        "strategy": "performance_first",
        "performance_cores": [],
        "efficiency_cores": [],
    },
    "powermetrics": {
        "enabled": False,
        "binary": "/usr/bin/powermetrics",
        "samplers": ["cpu_power", "smc"],
        "sample_interval_sec": 1.0,
    },
    "rapl": {"enabled": True},
}

# argv -> (exit status, stdout + stderr); injectable for canned perf output.
PerfRunner = Callable[[list[str]], "tuple[int, str]"]
PERF_TIMEOUT_SEC = 10.0


def with_defaults(telemetry_cfg: Mapping[str, Any] | None) -> dict[str, Any]:
    """``telemetry_cfg`` with every missing key (one level of nesting) defaulted."""
    cfg = copy.deepcopy(DEFAULT_TELEMETRY_CFG)
    for key, value in (telemetry_cfg or {}).items():
        if isinstance(value, Mapping) and isinstance(cfg.get(key), dict):
            cfg[key].update(value)
        else:
            cfg[key] = value
    return cfg


# -------------------------------------------------------------------- cycle counter


# What perf's placeholders mean, in the words the kem study's own probe (perf_event_open, in
# native/kem/src/cycle_counter/hal.c) uses for the same finding.
PERF_WHY = {
    "<not supported>": "this kernel offers no hardware cycle event (a virtual machine without a virtual PMU?)",
    "<not counted>": "the cycle event could not be given a hardware counter while the command ran",
}


def parse_perf_stat_csv(text: str) -> tuple[int | None, str | None]:
    """Count of the ``cycles`` event from ``perf stat -x,`` output, or (None, reason)
    when perf printed ``<not supported>`` / ``<not counted>`` or no cycles line."""
    for line in text.splitlines():
        fields = line.strip().split(",")
        if len(fields) < 3 or not fields[2].startswith("cycles"):
            continue
        value = fields[0].strip()
        if value.startswith("<"):
            return None, f"perf stat -e cycles reports {value}: {PERF_WHY.get(value, 'it counted no cycles')}"
        try:
            return int(float(value)), None
        except ValueError:
            return None, f"perf stat -e cycles printed an unparsable count {value!r}"
    snippet = " ".join(text.strip().splitlines()[-2:])[:200] or "no output"
    return None, f"perf stat -e cycles printed no cycles line ({snippet})"


def _run_perf(argv: list[str]) -> tuple[int, str]:
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=PERF_TIMEOUT_SEC, check=False
    )
    return proc.returncode, (proc.stdout or "") + (proc.stderr or "")


def probe_perf_cycles(
    perf: str = "perf", run: PerfRunner | None = None
) -> tuple[bool, str | None]:
    """Whether ``perf stat -e cycles -x, true`` counts hardware cycles."""
    if run is None:
        if shutil.which(perf) is None:
            return False, "perf is not installed"
        run = _run_perf
    try:
        status, output = run([perf, "stat", "-e", "cycles", "-x,", "true"])
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"perf stat could not run: {exc}"
    count, reason = parse_perf_stat_csv(output)
    if count is not None and status == 0:
        return True, None
    if reason is None:
        reason = f"perf stat exited with status {status}"
    return False, reason


def probe_cycle_counter(
    root: str | os.PathLike = "/", perf_run: PerfRunner | None = None
) -> dict[str, Any]:
    """{"available", "source", "reason", "perf_cycles", "invariant_tsc"}:
    available means hardware core cycles via perf; source falls back to "tsc" when
    the CPU has an invariant TSC."""
    perf_ok, perf_reason = probe_perf_cycles(run=perf_run)
    flags = cpuinfo_flags(root)
    invariant_tsc = None if flags is None else {"constant_tsc", "nonstop_tsc"} <= flags
    if perf_ok:
        source, reason = "perf", None
    elif invariant_tsc:
        source, reason = "tsc", perf_reason
    else:
        source = None
        tsc_note = (
            "no /proc/cpuinfo flags" if flags is None else "no invariant TSC flags"
        )
        reason = f"{perf_reason}; {tsc_note}"
    return {
        "available": perf_ok,
        "source": source,
        "reason": reason,
        "perf_cycles": perf_ok,
        "invariant_tsc": invariant_tsc,
    }


# ---------------------------------------------------------------------------- probe


def _probe_affinity(cfg: Mapping[str, Any], system: str) -> dict[str, Any]:
    enabled = bool(cfg.get("enabled", False))
    strategy = cfg.get("strategy", "performance_first")
    ok, reason = affinity_available(system)
    out: dict[str, Any] = {
        "available": ok,
        "source": "sched_setaffinity" if ok else None,
        "reason": reason,
        "enabled": enabled,
        "strategy": strategy,
        "missing_cpus": [],
        "config_error": None,
    }
    configured = list(cfg.get("performance_cores", [])) + list(cfg.get("efficiency_cores", []))
    try:
        plan_affinity(strategy, cfg.get("performance_cores", []), cfg.get("efficiency_cores", []), 1)
    except ValueError as exc:
        out["config_error"] = str(exc)
    if ok:
        offered = set(available_cpus())
        out["missing_cpus"] = sorted({int(c) for c in configured} - offered)
    return out


def probe(
    telemetry_cfg: Mapping[str, Any] | None = None,
    *,
    root: str | os.PathLike = "/",
    system: str | None = None,
    sensors: Sensors | None = None,
    perf_run: PerfRunner | None = None,
    machine: str | None = None,
    powermetrics_help_run=None,
) -> dict[str, Any]:
    """Capability summary of this machine for ``telemetry_cfg`` (missing keys take
    ``DEFAULT_TELEMETRY_CFG``). ``root``, ``system``, ``machine`` (``platform.machine()``),
    ``sensors``, ``perf_run`` and ``powermetrics_help_run`` (canned ``powermetrics -h``)
    inject canned sources for tests."""
    cfg = with_defaults(telemetry_cfg)
    system = system or platform.system()
    machine = machine or platform.machine()

    cpu_ok, cpu_reason = cpu_sampling_available()
    try:
        import psutil

        logical = psutil.cpu_count()
    except ImportError:
        logical = os.cpu_count()
    rss_ok = rss_bytes() is not None

    energy_source, energy_reason = detect_energy_source(
        cfg["powermetrics"], cfg["rapl"], root=root, system=system
    )

    temp_source, temp_reason = temperature_source(sensors)
    samplers = cfg["powermetrics"].get("samplers") or []
    sampler_notes: list[str] = []
    if energy_source == "powermetrics":
        # ask the machine which samplers it has (Apple silicon has no smc)
        supported = supported_samplers(cfg["powermetrics"].get("binary", DEFAULT_POWERMETRICS_BINARY),
                                       run=powermetrics_help_run)
        samplers, sampler_notes = usable_samplers(samplers, supported, machine)
    if temp_source is None and energy_source == "powermetrics" and "smc" in samplers:
        temp_source, temp_reason = "powermetrics:smc", None
    elif temp_source is None and system == "Darwin":
        if energy_source != "powermetrics":
            why = energy_reason
        elif "smc" in (cfg["powermetrics"].get("samplers") or []):
            why = next(note for note in sampler_notes if "smc" in note)
        else:
            why = "smc sampler not configured"
        temp_reason = f"{temp_reason}; powermetrics smc not usable: {why}"

    return {
        "cpu_sampling": {
            "available": cpu_ok,
            "source": "psutil" if cpu_ok else None,
            "reason": cpu_reason,
            "interval_sec": float(cfg["sample_interval_sec"]),
            "logical_cores": logical,
        },
        "rss": {
            "available": rss_ok,
            "source": "psutil" if rss_ok else None,
            "reason": None if rss_ok else "psutil cannot read this process's memory info",
        },
        "temperature": {
            "available": temp_source is not None,
            "source": temp_source,
            "reason": temp_reason,
        },
        "energy": {
            "available": energy_source != "none",
            "source": energy_source if energy_source != "none" else None,
            "reason": energy_reason,
            # powermetrics only: the samplers it will run, and why a configured one is left out
            **({"samplers": samplers, "sampler_notes": sampler_notes} if energy_source == "powermetrics" else {}),
        },
        "affinity": _probe_affinity(cfg["cpu_affinity"], system),
        "cycle_counter": probe_cycle_counter(root, perf_run),
    }


def warnings(capabilities: Mapping[str, Any]) -> list[str]:
    """One sentence per unavailable or misconfigured feature, in a fixed order."""
    out: list[str] = []
    cpu = capabilities.get("cpu_sampling", {})
    if not cpu.get("available", True):
        out.append(f"cpu_sampling: {cpu.get('reason')}; per-core CPU samples are empty")
    rss = capabilities.get("rss", {})
    if not rss.get("available", True):
        out.append(f"rss: {rss.get('reason')}; worker RSS is recorded as null")
    temp = capabilities.get("temperature", {})
    if not temp.get("available", True):
        out.append(f"temperature: {temp.get('reason')}; CPU temperature is recorded as null")
    energy = capabilities.get("energy", {})
    if not energy.get("available", True):
        out.append(f"energy: {energy.get('reason')}; energy per operation is recorded as null")
    temp_reason = capabilities.get("temperature", {}).get("reason") or ""
    for note in energy.get("sampler_notes") or []:
        if note not in temp_reason:  # the temperature warning already says it
            out.append(f"powermetrics: {note}; that sampler is left out")
    aff = capabilities.get("affinity", {})
    if aff.get("enabled"):
        if aff.get("config_error"):
            out.append(f"affinity: {aff['config_error']}")
        elif not aff.get("available", True):
            out.append(f"affinity: {aff.get('reason')}")
        elif aff.get("missing_cpus"):
            out.append(
                f"affinity: cpu_affinity lists CPUs {aff['missing_cpus']} that this"
                f" process cannot run on (available: {available_cpus()}); pinning to"
                " them fails and those workers run unpinned"
            )
    cyc = capabilities.get("cycle_counter", {})
    if not cyc.get("available", True):
        if cyc.get("source") == "tsc":
            tail = (
                "falling back to the invariant TSC, which counts reference cycles at a"
                " constant rate, not core cycles"
            )
        else:
            tail = "cycle counts are recorded as null"
        out.append(f"cycle_counter: {cyc.get('reason')}; {tail}")
    return out
