"""Provenance of a run: machine facts, library versions, git state and a config hash.

Each ``collect_*`` helper adds keys to one flat dict and shrugs off a missing /proc or
sysfs file, a missing command or a missing package: the key is then ``None``. Linux
facts are read below an injectable ``root`` (tests pass a canned tree); macOS facts come
from ``sysctl``/``sw_vers`` through an injectable ``run`` callable (tests pass canned
output); the batch job a process runs in (SLURM) from an injectable environment.
``collect(cfg, repo_dir)`` merges everything for one run.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib.metadata
import json
import os
import platform
import socket
import subprocess
import sys
from collections.abc import Callable, Mapping
from typing import Any

from parbench.telemetry.procfs import (
    is_live_root,
    parse_cpuinfo,
    parse_cpulist,
    parse_key_value_lines,
    read_int,
    read_text,
)

__all__ = [
    "MACHINE_KEYS",
    "LIBRARY_KEYS",
    "GIT_KEYS",
    "SLURM_KEYS",
    "collect_machine",
    "collect_libraries",
    "collect_git",
    "collect_slurm",
    "config_hash",
    "collect",
    "parse_sysctl",
]

# Command runner: argv -> stdout (stripped) or None when the command is missing, fails
# or times out. Injectable so tests can feed canned `sysctl` / `sw_vers` output.
Runner = Callable[[list[str]], "str | None"]

COMMAND_TIMEOUT_SEC = 5.0

MACHINE_KEYS = (
    "cpu_model",
    "cpu_vendor",
    "arch",
    "logical_cores",
    "physical_cores",
    "performance_cores",
    "efficiency_cores",
    "smt_active",
    "cpufreq_governor",
    "turbo_enabled",
    "virtualized",
    "memory_total_bytes",
    "os_name",
    "os_release",
    "kernel",
    "hostname",
)

# key -> distribution name for importlib.metadata
_DISTRIBUTIONS = {
    "cryptography_version": "cryptography",
    "psutil_version": "psutil",
    "pandas_version": "pandas",
    "pyarrow_version": "pyarrow",
    "snakemake_version": "snakemake",
    "hydra_version": "hydra-core",
    "liboqs_python_version": "liboqs-python",
}

LIBRARY_KEYS = (
    "python_version",
    "python_implementation",
    *_DISTRIBUTIONS,
    "openssl_version",
    "liboqs_version",
)

GIT_KEYS = ("git_commit", "git_dirty")

# The SLURM job a process runs in: key -> the variable SLURM sets in a job's (and its
# steps') environment. All None outside SLURM.
_SLURM_VARIABLES = {
    "slurm_job_id": "SLURM_JOB_ID",
    "slurm_node": "SLURMD_NODENAME",
    "slurm_partition": "SLURM_JOB_PARTITION",
    "slurm_cluster": "SLURM_CLUSTER_NAME",
    "slurm_cpus_on_node": "SLURM_CPUS_ON_NODE",
}
SLURM_KEYS = tuple(_SLURM_VARIABLES)

# ARM "CPU implementer" codes in /proc/cpuinfo (arch/arm64/include/asm/cputype.h).
_ARM_IMPLEMENTERS = {
    0x41: "ARM",
    0x42: "Broadcom",
    0x43: "Cavium",
    0x46: "Fujitsu",
    0x48: "HiSilicon",
    0x4E: "NVIDIA",
    0x51: "Qualcomm",
    0x61: "Apple",
    0x6D: "Microsoft",
    0xC0: "Ampere",
}


def run_command(argv: list[str], timeout_sec: float = COMMAND_TIMEOUT_SEC) -> str | None:
    """stdout of ``argv`` stripped, or None when missing, failing or timing out."""
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout_sec,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.strip()


# --------------------------------------------------------------------------- machine


def _to_int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value.strip().split()[0], 0)
    except (ValueError, IndexError):
        return None


def collect_cpuinfo(md: dict, root: str | os.PathLike = "/") -> None:
    """cpu_model, cpu_vendor, logical_cores, physical_cores, virtualized from
    /proc/cpuinfo (x86 and arm layouts)."""
    text = read_text(root, "/proc/cpuinfo")
    if text is None:
        return
    blocks = parse_cpuinfo(text)
    processors = [b for b in blocks if "processor" in b]
    if processors:
        md["logical_cores"] = len(processors)
    merged: dict[str, str] = {}
    for block in blocks:  # first occurrence wins; arm puts Hardware in a last block
        for key, value in block.items():
            merged.setdefault(key, value)
    for key in ("model name", "Model", "Hardware", "cpu model", "cpu"):
        if merged.get(key):
            md["cpu_model"] = merged[key]
            break
    if merged.get("vendor_id"):
        md["cpu_vendor"] = merged["vendor_id"]
    elif "CPU implementer" in merged:
        code = _to_int(merged["CPU implementer"])
        if code is not None:
            md["cpu_vendor"] = _ARM_IMPLEMENTERS.get(code, f"0x{code:02x}")
    cores = {(b.get("physical id"), b.get("core id")) for b in processors}
    if processors and all("physical id" in b and "core id" in b for b in processors):
        md["physical_cores"] = len(cores)
    if "flags" in merged:
        md["virtualized"] = "hypervisor" in merged["flags"].split()


def collect_topology(md: dict, root: str | os.PathLike = "/") -> None:
    """physical_cores from sysfs topology when /proc/cpuinfo lacked core ids (arm),
    smt_active, and Intel hybrid P/E core counts (/sys/devices/cpu_core, cpu_atom)."""
    base = "/sys/devices/system/cpu"
    if md.get("physical_cores") is None:
        online = parse_cpulist(read_text(root, f"{base}/online"))
        if online:
            cores = set()
            for cpu in online:
                pkg = read_text(root, f"{base}/cpu{cpu}/topology/physical_package_id")
                core = read_text(root, f"{base}/cpu{cpu}/topology/core_id")
                if core is None:
                    cores = set()
                    break
                cores.add((pkg, core))
            if cores:
                md["physical_cores"] = len(cores)
    smt = read_int(root, f"{base}/smt/active")
    if smt is not None:
        md["smt_active"] = bool(smt)
    p_cpus = parse_cpulist(read_text(root, "/sys/devices/cpu_core/cpus"))
    e_cpus = parse_cpulist(read_text(root, "/sys/devices/cpu_atom/cpus"))
    if p_cpus is not None or e_cpus is not None:
        md["performance_cores"] = len(p_cpus or [])
        md["efficiency_cores"] = len(e_cpus or [])


def collect_cpufreq(md: dict, root: str | os.PathLike = "/") -> None:
    """cpufreq_governor (cpu0) and turbo_enabled (intel_pstate/no_turbo inverted, else
    cpufreq/boost, else policy0/boost)."""
    base = "/sys/devices/system/cpu"
    md["cpufreq_governor"] = read_text(root, f"{base}/cpu0/cpufreq/scaling_governor") or None
    no_turbo = read_int(root, f"{base}/intel_pstate/no_turbo")
    if no_turbo is not None:
        md["turbo_enabled"] = not bool(no_turbo)
        return
    for path in (f"{base}/cpufreq/boost", f"{base}/cpufreq/policy0/boost"):
        boost = read_int(root, path)
        if boost is not None:
            md["turbo_enabled"] = bool(boost)
            return


def collect_memory(md: dict, root: str | os.PathLike = "/") -> None:
    """memory_total_bytes from /proc/meminfo MemTotal (reported in kB = KiB)."""
    text = read_text(root, "/proc/meminfo")
    if text is None:
        return
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            try:
                value = int(parts[1])
            except (IndexError, ValueError):
                return
            unit = parts[2].lower() if len(parts) > 2 else "kb"
            md["memory_total_bytes"] = value * 1024 if unit == "kb" else value
            return


def collect_os_release(md: dict, root: str | os.PathLike = "/") -> None:
    """os_release (PRETTY_NAME), kernel and hostname from files under ``root``."""
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        text = read_text(root, path)
        if text is None:
            continue
        fields = parse_key_value_lines(text)
        pretty = fields.get("PRETTY_NAME") or " ".join(
            v for v in (fields.get("NAME"), fields.get("VERSION")) if v
        )
        if pretty:
            md["os_release"] = pretty
            break
    kernel = read_text(root, "/proc/sys/kernel/osrelease")
    if kernel:
        md["kernel"] = kernel
    hostname = read_text(root, "/proc/sys/kernel/hostname")
    if hostname:
        md["hostname"] = hostname


def parse_sysctl(text: str | None) -> str | None:
    """Value printed by ``sysctl -n NAME``; None when empty."""
    if text is None:
        return None
    text = text.strip()
    return text or None


def collect_darwin(md: dict, run: Runner) -> None:
    """macOS facts from ``sysctl -n`` and ``sw_vers -productVersion``."""

    def sysctl(name: str) -> str | None:
        return parse_sysctl(run(["sysctl", "-n", name]))

    brand = sysctl("machdep.cpu.brand_string")
    if brand:
        md["cpu_model"] = brand
    vendor = sysctl("machdep.cpu.vendor")
    if vendor:
        md["cpu_vendor"] = vendor
    elif brand and brand.startswith("Apple"):
        md["cpu_vendor"] = "Apple"
    logical = _to_int(sysctl("hw.logicalcpu"))
    physical = _to_int(sysctl("hw.physicalcpu"))
    if logical is not None:
        md["logical_cores"] = logical
    if physical is not None:
        md["physical_cores"] = physical
    if logical is not None and physical is not None:
        md["smt_active"] = logical > physical
    # perflevel0 is the highest-performance cluster; perflevel1 (Apple silicon only)
    # the efficiency cluster.
    md["performance_cores"] = _to_int(sysctl("hw.perflevel0.logicalcpu"))
    md["efficiency_cores"] = _to_int(sysctl("hw.perflevel1.logicalcpu"))
    memsize = _to_int(sysctl("hw.memsize"))
    if memsize is not None:
        md["memory_total_bytes"] = memsize
    vmm = _to_int(sysctl("kern.hv_vmm_present"))
    if vmm is not None:
        md["virtualized"] = bool(vmm)
    version = parse_sysctl(run(["sw_vers", "-productVersion"]))
    if version:
        md["os_release"] = f"macOS {version}"


def collect_live_fallbacks(md: dict) -> None:
    """Fill still-missing keys from the running interpreter (os, psutil, uname)."""
    if md.get("logical_cores") is None:
        md["logical_cores"] = os.cpu_count()
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        if md.get("physical_cores") is None:
            try:
                md["physical_cores"] = psutil.cpu_count(logical=False)
            except Exception:  # psutil raises on exotic platforms
                pass
        if md.get("memory_total_bytes") is None:
            try:
                md["memory_total_bytes"] = int(psutil.virtual_memory().total)
            except Exception:
                pass
    if md.get("kernel") is None:
        md["kernel"] = platform.release() or None
    if md.get("hostname") is None:
        md["hostname"] = socket.gethostname() or None


def collect_machine(
    root: str | os.PathLike = "/",
    *,
    system: str | None = None,
    run: Runner | None = None,
) -> dict[str, Any]:
    """Machine facts, one flat dict with every key of ``MACHINE_KEYS`` (None = unknown).

    ``root`` re-roots /proc, /sys and /etc reads; live fallbacks (psutil, uname) fill
    gaps only when ``root`` is the real "/". ``system`` overrides
    ``platform.system()`` and ``run`` the command runner used on macOS.
    """
    system = system or platform.system()
    run = run or run_command
    md: dict[str, Any] = dict.fromkeys(MACHINE_KEYS)
    md["os_name"] = system
    md["arch"] = platform.machine() or None
    if system == "Darwin":
        collect_darwin(md, run)
    else:
        collect_cpuinfo(md, root)
        collect_topology(md, root)
        collect_cpufreq(md, root)
        collect_memory(md, root)
        collect_os_release(md, root)
    if is_live_root(root):
        collect_live_fallbacks(md)
    return md


# ------------------------------------------------------------------------- libraries


def _distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
    except Exception:  # broken metadata must not break provenance
        return None


def _openssl_version() -> str | None:
    """OpenSSL version text as linked by cryptography (legacy backend object first, then
    the Rust binding that newer releases use underneath)."""
    try:
        from cryptography.hazmat.backends.openssl import backend

        return str(backend.openssl_version_text())
    except Exception:
        pass
    try:
        from cryptography.hazmat.bindings._rust import openssl as rust_openssl

        return str(rust_openssl.openssl_version_text())
    except Exception:
        return None


def _liboqs_version() -> str | None:
    """liboqs C library version, only if ``oqs`` is already imported: importing it
    ourselves may trigger liboqs-python's download-and-build of a missing liboqs."""
    oqs = sys.modules.get("oqs")
    if oqs is None:
        return None
    try:
        return str(oqs.oqs_version())
    except Exception:
        return None


def collect_libraries() -> dict[str, Any]:
    """Interpreter and library versions; every key of ``LIBRARY_KEYS``, None when the
    library is not installed."""
    md: dict[str, Any] = {
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
    }
    for key, dist in _DISTRIBUTIONS.items():
        md[key] = _distribution_version(dist)
    md["openssl_version"] = _openssl_version() if md["cryptography_version"] else None
    md["liboqs_version"] = _liboqs_version()
    return md


# ------------------------------------------------------------------------------ git


def collect_git(
    repo_dir: str | os.PathLike,
    *,
    git: str = "git",
    timeout_sec: float = COMMAND_TIMEOUT_SEC,
) -> dict[str, Any]:
    """git_commit (full sha of HEAD) and git_dirty (uncommitted changes to tracked files
    or untracked, non-ignored files); both None when ``repo_dir`` is not a git work tree
    or git is missing. git_commit is None in a repository without commits."""
    md: dict[str, Any] = dict.fromkeys(GIT_KEYS)
    base = [git, "-C", os.fspath(repo_dir)]

    def git_out(*args: str) -> str | None:
        return run_command([*base, *args], timeout_sec=timeout_sec)

    if git_out("rev-parse", "--is-inside-work-tree") != "true":
        return md
    sha = git_out("rev-parse", "--verify", "--quiet", "HEAD")
    md["git_commit"] = sha or None
    status = git_out("status", "--porcelain")
    if status is not None:
        md["git_dirty"] = bool(status)
    return md


# ---------------------------------------------------------------------------- slurm


def collect_slurm(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The SLURM job this process runs in: slurm_job_id (as SLURM prints it, a string),
    slurm_node (the node's name), slurm_partition, slurm_cluster and slurm_cpus_on_node
    (the CPUs the job holds there: all of them for an --exclusive job); every key None
    when the process does not run under SLURM. ``environ`` defaults to os.environ."""
    environ = os.environ if environ is None else environ
    md: dict[str, Any] = {key: environ.get(var) or None for key, var in _SLURM_VARIABLES.items()}
    if md["slurm_job_id"] is None:  # a stray variable outside a job says nothing
        return dict.fromkeys(SLURM_KEYS)
    md["slurm_cpus_on_node"] = _to_int(md["slurm_cpus_on_node"])
    return md


# --------------------------------------------------------------------------- config


def config_hash(cfg: Mapping[str, Any]) -> str:
    """First 16 hex chars of sha256 over canonical JSON (sorted keys, no whitespace).
    Non-JSON values (paths, enums) are hashed through ``str``."""
    canonical = json.dumps(
        cfg, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def collect(cfg: Mapping[str, Any], repo_dir: str | os.PathLike) -> dict[str, Any]:
    """One flat provenance dict: timestamp_utc, config_hash, machine, libraries, git, and
    the SLURM job (null keys outside SLURM)."""
    md: dict[str, Any] = {
        "timestamp_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "config_hash": config_hash(cfg),
    }
    md.update(collect_machine())
    md.update(collect_libraries())
    md.update(collect_git(repo_dir))
    md.update(collect_slurm())
    return md
