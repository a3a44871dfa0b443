"""RAPL energy counters from the Linux powercap interface.

``/sys/class/powercap/intel-rapl:N/energy_uj`` is a free-running microjoule counter per
CPU package (Intel, and AMD Zen since Linux 5.8) that wraps at
``max_energy_range_uj``. ``RaplCounter`` sums the top-level ``package-N`` zones (not
their core/uncore/dram sub-zones, not psys) and unwraps. Reading energy_uj needs root on
kernels patched for CVE-2020-8694 (Linux 5.10+ default); ``available()`` then reports
the permission problem instead of failing.
"""

from __future__ import annotations

import os
import re
import threading

from parbench.telemetry.procfs import join_root, read_int, read_text

__all__ = ["POWERCAP_DIR", "RaplCounter", "rapl_delta_uj"]

POWERCAP_DIR = "/sys/class/powercap"
_TOP_LEVEL_ZONE = re.compile(r"^intel-rapl:(\d+)$")


def rapl_delta_uj(previous_uj: int, current_uj: int, max_energy_range_uj: int | None) -> int:
    """Energy between two reads of one wrapping RAPL counter, in microjoules.

    The counter runs from 0 to ``max_energy_range_uj`` and restarts at 0, so a smaller
    current value means exactly one wrap (reads must come more often than one wrap
    period: about a minute at 70 W on a 32-bit microjoule counter). Without a known
    range a wrap can only be counted from 0.
    """
    if current_uj >= previous_uj:
        return current_uj - previous_uj
    if max_energy_range_uj:
        return max_energy_range_uj - previous_uj + current_uj
    return current_uj


class RaplCounter:
    """Sum of the RAPL package domains below ``root``, unwrapped, in joules.

    ``read_joules()`` returns a monotonic total: the first call returns the counters'
    raw sum, later calls add the wrap-corrected increments, so the difference of two
    reads is the energy in between. Thread-safe; read at least once per wrap period.
    """

    def __init__(self, root: str | os.PathLike = "/") -> None:
        self.root = root
        self._lock = threading.Lock()
        self._last_uj: dict[str, int] = {}
        self._total_uj = 0

    @property
    def powercap_dir(self) -> str:
        return join_root(self.root, POWERCAP_DIR)

    def package_zones(self) -> list[str]:
        """Sysfs paths (relative to root) of top-level zones named ``package-N``,
        sorted by zone index; sub-zones (core, uncore, dram) and psys are skipped."""
        try:
            entries = os.listdir(self.powercap_dir)
        except OSError:
            return []
        zones = []
        for entry in entries:
            match = _TOP_LEVEL_ZONE.match(entry)
            if not match:
                continue
            zone = f"{POWERCAP_DIR}/{entry}"
            name = read_text(self.root, f"{zone}/name") or ""
            if name.startswith("package"):
                zones.append((int(match.group(1)), zone))
        return [zone for _, zone in sorted(zones)]

    def domain_names(self) -> list[str]:
        return [read_text(self.root, f"{z}/name") or z for z in self.package_zones()]

    def available(self) -> tuple[bool, str | None]:
        """(True, None) when every package counter is readable, else (False, reason)."""
        first = join_root(self.root, f"{POWERCAP_DIR}/intel-rapl:0")
        if not os.path.isdir(first):
            return False, f"no RAPL powercap ({first} missing)"
        zones = self.package_zones()
        if not zones:
            return False, f"no RAPL package domain under {self.powercap_dir}"
        for zone in zones:
            path = join_root(self.root, f"{zone}/energy_uj")
            try:
                with open(path, encoding="ascii") as fh:
                    int(fh.read().strip())
            except PermissionError:
                return False, (
                    f"RAPL counter {path} is not readable (root only since Linux 5.10,"
                    " CVE-2020-8694); run as root or grant read access"
                )
            except (OSError, ValueError) as exc:
                return False, f"RAPL counter {path} unreadable: {exc}"
        return True, None

    def _read_raw_uj(self, zone: str) -> int:
        path = join_root(self.root, f"{zone}/energy_uj")
        with open(path, encoding="ascii") as fh:
            return int(fh.read().strip())

    def read_joules(self) -> float:
        """Monotonic package energy in joules (raises OSError when unreadable)."""
        with self._lock:
            for zone in self.package_zones():
                now = self._read_raw_uj(zone)
                last = self._last_uj.get(zone)
                if last is None:
                    self._total_uj += now
                else:
                    max_range = read_int(self.root, f"{zone}/max_energy_range_uj")
                    self._total_uj += rapl_delta_uj(last, now, max_range)
                self._last_uj[zone] = now
            return self._total_uj / 1e6
