"""The pinned Python environment (requirements.lock) installs on the machines the card
names, not only on this one: for macOS on Apple silicon (CPython 3.11, macOS 14 or
later) pip finds every pinned version as a wheel for that platform (or a pure-Python
`any` wheel), so nothing needs a compiler there, and every dependency those packages
declare for macOS is itself pinned in the lock (a macOS-only dependency would otherwise
float). Two pins have no wheel at all on PyPI, only a pure-Python source archive, which
pip installs on any platform without a compiler: they are named below with the reason.
Needs PyPI (pip's dry run reads metadata only); without it the test skips."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements.lock"
OFFLINE = ("Could not fetch URL", "Failed to establish a new connection", "Temporary failure in name resolution",
           "Network is unreachable", "connection broken", "Max retries exceeded")
# pinned versions published only as pure-Python source archives (no wheel for any platform)
SOURCE_ONLY = {
    "antlr4-python3-runtime": "4.9.3, the version omegaconf 2.3 requires (antlr4-python3-runtime==4.9.*)",
    "connection-pool": "0.0.3, snakemake's",
}
# what pip's markers see on an Apple silicon Mac running CPython 3.11
MACOS_ARM64 = {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64",
               "os_name": "posix", "python_version": "3.11", "python_full_version": "3.11.9",
               "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins() -> dict[str, str]:
    pins = {}
    for line in LOCK.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[_canonical(name.split("[", 1)[0])] = version.strip()
    return pins


@pytest.fixture(scope="module")
def macos_report(tmp_path_factory) -> list[dict]:
    tmp = tmp_path_factory.mktemp("pip-macos")
    report = tmp / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--no-deps",
         "--platform", "macosx_14_0_arm64", "--python-version", "3.11", "--implementation", "cp",
         "--target", str(tmp / "target"), "--report", str(report), "-r", str(LOCK)],
        capture_output=True, text=True, timeout=900, cwd=REPO)
    if proc.returncode != 0 and any(text in proc.stderr for text in OFFLINE):
        pytest.skip(f"PyPI is not reachable: {proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 0, f"pip cannot find the pinned versions for macOS arm64:\n{proc.stderr[-4000:]}"
    return json.loads(report.read_text())["install"]


def test_every_pin_has_a_macos_arm64_wheel(macos_report):
    pins = _pins()
    assert {_canonical(i["metadata"]["name"]): i["metadata"]["version"] for i in macos_report} == pins
    for item in macos_report:
        name, url = _canonical(item["metadata"]["name"]), item["download_info"]["url"]
        filename = url.rsplit("/", 1)[-1]
        if name in SOURCE_ONLY:
            assert filename.endswith((".tar.gz", ".zip")), f"{name} now has a wheel ({filename}): drop it from SOURCE_ONLY"
            continue
        assert filename.endswith(".whl"), f"{name}: no wheel for macOS arm64 ({filename})"
        platform_tag = filename[:-4].split("-")[-1]
        assert platform_tag == "any" or "macosx" in platform_tag and ("arm64" in platform_tag or "universal2" in
                                                                      platform_tag), filename


def test_every_macos_dependency_is_pinned(macos_report):
    """What each pinned package requires on macOS arm64 (markers evaluated for that
    platform, no extras) is in the lock at a version it accepts."""
    pins = _pins()
    unmet = []
    for item in macos_report:
        for spec in item["metadata"].get("requires_dist") or []:
            req = Requirement(spec)
            if req.marker is not None and not req.marker.evaluate(MACOS_ARM64):
                continue
            pinned = pins.get(_canonical(req.name))
            if pinned is None or (req.specifier and not req.specifier.contains(pinned, prereleases=True)):
                unmet.append(f"{item['metadata']['name']} requires {spec} (lock: {pinned})")
    assert unmet == []
