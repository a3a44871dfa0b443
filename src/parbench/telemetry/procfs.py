"""Tolerant readers for /proc and /sys files below an injectable root directory.

Probes take ``root="/"`` so tests can point them at a canned tree under
``tests/fixtures/telemetry``; every reader returns ``None`` instead of raising when a
file is missing or unreadable.
"""

from __future__ import annotations

import os

__all__ = [
    "join_root",
    "read_text",
    "read_int",
    "parse_cpuinfo",
    "cpuinfo_flags",
    "parse_cpulist",
    "parse_key_value_lines",
    "is_live_root",
]


def join_root(root: str | os.PathLike, path: str) -> str:
    """``path`` (absolute, like ``/proc/cpuinfo``) re-rooted below ``root``."""
    return os.path.join(os.fspath(root), path.lstrip("/"))


def is_live_root(root: str | os.PathLike) -> bool:
    """True when ``root`` is the real filesystem root, so live fallbacks (psutil, os)
    describe the same machine as the files."""
    return os.path.realpath(os.fspath(root)) == os.path.realpath("/")


def read_text(root: str | os.PathLike, path: str) -> str | None:
    """Stripped contents of ``root/path``, or None when missing or unreadable."""
    try:
        with open(join_root(root, path), encoding="utf-8", errors="replace") as fh:
            return fh.read().strip()
    except OSError:
        return None


def read_int(root: str | os.PathLike, path: str) -> int | None:
    """Integer contents of ``root/path``, or None when missing, unreadable or not an int."""
    text = read_text(root, path)
    if text is None:
        return None
    try:
        return int(text.split()[0], 0)
    except (ValueError, IndexError):
        return None


def parse_cpuinfo(text: str) -> list[dict[str, str]]:
    """/proc/cpuinfo as one dict per blank-line separated block (one per logical CPU on
    x86; arm64 adds a trailing block with machine-wide keys such as ``Hardware``)."""
    blocks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if current:
                blocks.append(current)
                current = {}
            continue
        key, sep, value = line.partition(":")
        if sep:
            current[key.strip()] = value.strip()
    if current:
        blocks.append(current)
    return blocks


def cpuinfo_flags(root: str | os.PathLike = "/") -> set[str] | None:
    """CPU feature flags of the first processor (x86 ``flags``, arm ``Features``), or
    None when /proc/cpuinfo is missing or has neither line."""
    text = read_text(root, "/proc/cpuinfo")
    if text is None:
        return None
    for block in parse_cpuinfo(text):
        for key in ("flags", "Features"):
            if key in block:
                return set(block[key].split())
    return None


def parse_cpulist(text: str | None) -> list[int] | None:
    """Kernel cpulist syntax (``"0-3,8,10-11"``) as a sorted list; None when unparsable.
    An empty string is an empty list."""
    if text is None:
        return None
    cpus: set[int] = set()
    try:
        for part in text.strip().split(","):
            part = part.strip()
            if not part:
                continue
            if "-" in part:
                lo, hi = part.split("-", 1)
                cpus.update(range(int(lo), int(hi) + 1))
            else:
                cpus.add(int(part))
    except ValueError:
        return None
    return sorted(cpus)


def parse_key_value_lines(text: str) -> dict[str, str]:
    """``KEY=value`` lines (os-release syntax) with optional shell quotes removed."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[key.strip()] = value
    return out
