"""macOS ``powermetrics``: parse its text output and run it for a configuration.

Apple's sampler prints one block per interval, headed ``*** Sampled system activity
(<date>) (<ms> elapsed) ***``. The ``cpu_power`` sampler gives ``CPU Power: N mW`` and
``Combined Power (CPU + GPU + ANE): N mW`` on Apple silicon, ``Intel energy model derived
package power (CPUs+GT+SA): N W`` on Intel Macs; the ``smc`` sampler gives ``CPU die
temperature: N C`` where the SMC exposes it. It needs root: ``PowermetricsSession`` runs
it directly as root or through ``sudo -n``.

Which samplers exist depends on the Mac: Apple silicon has no ``smc`` (and so no die
temperature), and powermetrics refuses the whole command line when one sampler is
unknown ("unrecognized sampler", exit status 64). ``usable_samplers`` asks the machine
(``powermetrics -h`` lists its samplers) and keeps the configured ones it has, saying
why the others were left out.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_POWERMETRICS_BINARY",
    "DEFAULT_POWERMETRICS_SAMPLERS",
    "parse_powermetrics",
    "summarize_powermetrics",
    "window_samples",
    "powermetrics_available",
    "parse_sampler_list",
    "supported_samplers",
    "usable_samplers",
    "PowermetricsSession",
]

DEFAULT_POWERMETRICS_BINARY = "/usr/bin/powermetrics"
DEFAULT_POWERMETRICS_SAMPLERS = ("cpu_power", "smc")
HELP_TIMEOUT_SEC = 10.0

_PM_HEADER = re.compile(
    r"^\*\*\* Sampled system activity \((?P<date>[^)]*)\)"
    r"(?:\s*\((?P<elapsed>[\d.]+)\s*ms elapsed\))?",
    re.MULTILINE,
)
_PM_POWER = re.compile(
    r"^(?P<label>CPU Power|Combined Power \(CPU \+ GPU \+ ANE\)|Package Power"
    r"|Intel energy model derived package power \(CPUs\+GT\+SA\))"
    r"\s*:\s*(?P<value>[\d.]+)\s*(?P<unit>mW|W)\b",
    re.MULTILINE,
)
_PM_TEMPERATURE = re.compile(
    r"^CPU die temperature\s*:\s*(?P<value>-?[\d.]+)\s*C\b", re.MULTILINE
)
# Labels whose watts count as CPU power; the others are whole-SoC power.
_PM_CPU_LABELS = ("CPU Power", "Intel energy model derived package power")


def _parse_pm_date(text: str) -> float | None:
    """``Wed Nov 20 09:00:25 2025 +0100`` as epoch seconds (None if unparsable)."""
    for fmt in ("%a %b %d %H:%M:%S %Y %z", "%a %b %d %H:%M:%S %Y"):
        try:
            parsed = _dt.datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
        return parsed.timestamp()
    return None


def _parse_pm_block(block: str) -> dict[str, Any]:
    sample: dict[str, Any] = {
        "cpu_power_w": None,
        "combined_power_w": None,
        "cpu_temperature_c": None,
    }
    for match in _PM_POWER.finditer(block):
        watts = float(match.group("value"))
        if match.group("unit") == "mW":
            watts /= 1000.0
        key = (
            "cpu_power_w"
            if match.group("label").startswith(_PM_CPU_LABELS)
            else "combined_power_w"
        )
        if sample[key] is None:
            sample[key] = watts
    temp = _PM_TEMPERATURE.search(block)
    if temp:
        sample["cpu_temperature_c"] = float(temp.group("value"))
    return sample


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize_powermetrics(samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Averages over parsed samples. Power is CPU power when any sample has it, else the
    combined CPU+GPU+ANE power; ``power_field`` says which."""
    field = (
        "cpu_power_w"
        if any(s.get("cpu_power_w") is not None for s in samples)
        else "combined_power_w"
    )
    powers = [s[field] for s in samples if s.get(field) is not None]
    temps = [s["cpu_temperature_c"] for s in samples if s.get("cpu_temperature_c") is not None]
    return {
        "samples": list(samples),
        "avg_power_w": _mean(powers),
        "avg_temperature_c": _mean(temps),
        "sample_count": len(samples),
        "power_field": field if powers else None,
    }


def parse_powermetrics(text: str) -> dict[str, Any]:
    """Parse ``powermetrics`` text output (cpu_power and smc samplers).

    Returns {"samples": [{"timestamp", "elapsed_sec", "cpu_power_w",
    "combined_power_w", "cpu_temperature_c"}], "avg_power_w", "avg_temperature_c",
    "sample_count", "power_field"}. ``timestamp`` (epoch seconds) is the header's
    wall-clock time, taken as the sample's end. A log without headers but with values
    counts as one sample; a truncated last block is kept with whatever it has.
    """
    headers = list(_PM_HEADER.finditer(text))
    samples: list[dict[str, Any]] = []
    if not headers:
        sample = _parse_pm_block(text)
        if any(v is not None for v in sample.values()):
            samples.append({"timestamp": None, "elapsed_sec": None, **sample})
        return summarize_powermetrics(samples)
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        elapsed = header.group("elapsed")
        samples.append(
            {
                "timestamp": _parse_pm_date(header.group("date")),
                "elapsed_sec": float(elapsed) / 1000.0 if elapsed else None,
                **_parse_pm_block(text[header.end() : end]),
            }
        )
    return summarize_powermetrics(samples)


def _sudo_noninteractive_ok() -> bool:
    """True when ``sudo -n true`` succeeds (cached credentials or NOPASSWD)."""
    if shutil.which("sudo") is None:
        return False
    try:
        return (
            subprocess.run(
                ["sudo", "-n", "true"], capture_output=True, timeout=5, check=False
            ).returncode
            == 0
        )
    except (OSError, subprocess.SubprocessError):
        return False


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def powermetrics_available(
    binary: str = DEFAULT_POWERMETRICS_BINARY, *, system: str | None = None
) -> tuple[bool, str | None]:
    """(True, None) on macOS when ``binary`` exists and we are root or ``sudo -n``
    works; else (False, reason)."""
    system = system or platform.system()
    if system != "Darwin":
        return False, "not macOS"
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        return False, f"powermetrics binary {binary} not found or not executable"
    if _is_root() or _sudo_noninteractive_ok():
        return True, None
    return False, (
        "powermetrics requires sudo access (not root and `sudo -n true` failed);"
        " disable powermetrics or re-run with sudo"
    )


def parse_sampler_list(help_text: str) -> list[str] | None:
    """The sampler names ``powermetrics -h`` lists under "The following samplers are
    supported by --samplers:" (up to the sampler groups, which are not samplers); None
    when the text has no such list."""
    names: list[str] | None = None
    for line in help_text.splitlines():
        lower = line.lower()
        if "supported by --samplers" in lower:
            if "sampler groups" in lower or names is not None:
                break
            names = []
            continue
        if names is not None:
            match = re.match(r"^\s+([a-z][a-z0-9_]*)(\s|$)", line)
            if match:
                names.append(match.group(1))
    return names


# argv -> (exit status, stdout + stderr); injectable for canned `powermetrics -h` output.
HelpRunner = Callable[[list[str]], "tuple[int, str]"]


def _run_help(argv: list[str]) -> tuple[int, str]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=HELP_TIMEOUT_SEC, check=False)
    return proc.returncode, (proc.stdout or "") + (proc.stderr or "")


def supported_samplers(
    binary: str = DEFAULT_POWERMETRICS_BINARY, *, use_sudo: bool | None = None, run: HelpRunner | None = None
) -> list[str] | None:
    """The samplers this machine's powermetrics has (``powermetrics -h``, run as the
    session would run it: through ``sudo -n`` unless root); None when it cannot say."""
    use_sudo = (not _is_root()) if use_sudo is None else use_sudo
    cmd = [binary, "-h"]
    try:
        _status, text = (run or _run_help)(["sudo", "-n", *cmd] if use_sudo else cmd)
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_sampler_list(text)


def usable_samplers(
    configured: Sequence[str], supported: Sequence[str] | None, machine: str | None = None
) -> tuple[list[str], list[str]]:
    """(the configured samplers to ask for, one note per sampler left out).

    A sampler the machine does not list is left out. When the list is unknown (None),
    Apple silicon (``machine`` arm64) still leaves out ``smc``, which it never has;
    other Macs keep every configured sampler."""
    machine = machine or platform.machine()
    keep, notes = [], []
    for name in configured:
        if supported is not None and name not in supported:
            notes.append(f"powermetrics on this Mac has no {name!r} sampler"
                         f" (it has: {', '.join(supported) or 'none listed'})")
        elif supported is None and name == "smc" and machine == "arm64":
            notes.append("powermetrics has no 'smc' sampler on Apple silicon (no CPU die temperature)")
        else:
            keep.append(name)
    return keep, notes


class PowermetricsSession:
    """One ``powermetrics --samplers <list> -i <ms>`` process writing to ``log_path``.

    ``use_sudo=None`` prefixes ``sudo -n`` unless already root. ``stop()`` sends
    SIGINT (powermetrics flushes and exits), parses the log and returns
    ``parse_powermetrics``'s dict plus "energy_joules" (avg_power_w x elapsed_sec),
    "elapsed_sec", "t_start", "t_end", "log_path", "returncode" and "reason" (None, or
    why there is no power figure).
    """

    def __init__(
        self,
        binary: str = DEFAULT_POWERMETRICS_BINARY,
        samplers: Sequence[str] = DEFAULT_POWERMETRICS_SAMPLERS,
        interval_sec: float = 1.0,
        log_path: str | os.PathLike = "powermetrics.log",
        *,
        use_sudo: bool | None = None,
    ) -> None:
        self.binary = binary
        self.samplers = list(samplers)
        self.interval_sec = float(interval_sec)
        self.log_path = Path(log_path)
        self.use_sudo = (not _is_root()) if use_sudo is None else use_sudo
        self.t_start: float | None = None
        self.t_end: float | None = None
        self._proc: subprocess.Popen | None = None
        self._log = None

    def command(self) -> list[str]:
        interval_ms = max(1, round(self.interval_sec * 1000))
        cmd = [self.binary, "--samplers", ",".join(self.samplers), "-i", str(interval_ms)]
        return ["sudo", "-n", *cmd] if self.use_sudo else cmd

    def start(self) -> "PowermetricsSession":
        if self._proc is not None:
            raise RuntimeError("PowermetricsSession already started")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "wb")
        self.t_start = time.time()
        try:
            self._proc = subprocess.Popen(
                self.command(),
                stdout=self._log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        except OSError:
            self._log.close()
            self._log = None
            raise
        return self

    def poll(self) -> int | None:
        """Exit status if the process has ended (e.g. refused to run), else None."""
        return None if self._proc is None else self._proc.poll()

    def _signal(self, sig: int) -> None:
        assert self._proc is not None
        try:
            self._proc.send_signal(sig)
        except PermissionError:  # sudo'd child owned by root: ask sudo to signal it
            subprocess.run(
                ["sudo", "-n", "kill", f"-{int(sig)}", str(self._proc.pid)],
                capture_output=True,
                timeout=5,
                check=False,
            )

    def _terminate(self) -> int | None:
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None:
            for sig, wait_sec in ((signal.SIGINT, 5.0), (signal.SIGTERM, 2.0)):
                self._signal(sig)
                try:
                    return proc.wait(timeout=wait_sec)
                except subprocess.TimeoutExpired:
                    continue
            proc.kill()
            return proc.wait(timeout=5.0)
        return proc.returncode

    def stop(self) -> dict[str, Any]:
        if self._proc is None:
            raise RuntimeError("PowermetricsSession was not started")
        returncode = self._terminate()
        self.t_end = time.time()
        if self._log is not None:
            self._log.close()
            self._log = None
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        summary = parse_powermetrics(text)
        elapsed = self.t_end - (self.t_start or self.t_end)
        avg = summary["avg_power_w"]
        reason = None
        if avg is None:
            tail = " ".join(text.strip().splitlines()[-2:])[:200] or "empty log"
            reason = f"powermetrics gave no power samples (exit code {returncode}): {tail}"
        summary.update(
            {
                "energy_joules": avg * elapsed if avg is not None else None,
                "elapsed_sec": elapsed,
                "t_start": self.t_start,
                "t_end": self.t_end,
                "log_path": str(self.log_path),
                "returncode": returncode,
                "reason": reason,
            }
        )
        return summary


def window_samples(
    samples: Sequence[Mapping[str, Any]], t_start: float, t_end: float
) -> list[Mapping[str, Any]]:
    """Parsed powermetrics samples whose interval midpoint (header time minus half the
    elapsed time) lies in [t_start, t_end]; samples without a timestamp are dropped."""
    out = []
    for sample in samples:
        ts = sample.get("timestamp")
        if ts is None:
            continue
        mid = ts - (sample.get("elapsed_sec") or 0.0) / 2.0
        if t_start <= mid <= t_end:
            out.append(sample)
    return out
