"""Finding the interpreters the gil study measures.

Each configured runtime (`gil.runtimes.<name>`) lists alternatives for its command; the
first that resolves on this machine is used:

- `{python}`: the interpreter running parbench (the project's CPython);
- `$VAR`: the command in environment variable VAR, read as the seed's runner reads
  `PROTOPY_BIN` and `CPYTHON_BIN` (a path or a name on PATH, optionally with arguments);
  unset or empty: not this alternative;
- `{uv:SPEC}`: the interpreter `uv python find SPEC` reports (SPEC e.g. 3.14t), where uv
  is installed (on PATH or beside this Python) and finds one; it never downloads;
- `{build:FLAVOUR}`: the CPython the study builds from source (`cpython.py`), FLAVOUR
  `default` or `freethreaded`; it resolves when the source is at hand (a tarball the user
  names, an earlier fetch, or a Debian archive to fetch from), and the interpreter's path
  is known only once the build rule has run: the cell reads it from the build's record;
- `{control}`: the study's native control (native/gilcontrol, built by its rule): the
  seed's sum in POSIX threads, no interpreter; it resolves where a C compiler (cc) is;
- anything else: a command line (split like a shell's), whose first word is an absolute
  or relative path to an executable file or a name found on PATH.

Each runtime may set environment variables for its interpreter (`env`, e.g.
PYTHON_GIL=0) and name what the interpreter must say it is (`require`:
free_threaded_build, gil_enabled); a mismatch fails the cell (`check_required`).

Resolving only looks (PATH, the file system, the environment): it is cheap and runs when
the pipeline plans its cells. A runtime that does not resolve gets no cells and is listed
as not measured, with the reason. One that resolves but cannot run the worker (a pyenv
shim of a version that is not installed, a broken install) is found out by its cells,
which record it as unavailable with the interpreter's own message.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

THIS_PYTHON = "{python}"
UV = re.compile(r"^\{uv:([^{}\s]+)\}$")
BUILD = re.compile(r"^\{build:([a-z]+)\}$")
CONTROL = "{control}"
# the native control's binary (workflow/rules/gil.smk builds it from native/gilcontrol/)
CONTROL_SOURCE = "native/gilcontrol/gil_control.c"
CONTROL_BINARY = "native/build/gilcontrol/gil-control"
# What the measured interpreters never inherit from this process (a runtime's `env` may set
# it again): PYTHON_GIL decides whether a free-threaded build runs with its GIL.
DROPPED = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "JYTHONPATH", "PYTHONINSPECT", "PYTHON_GIL")


@dataclass(frozen=True)
class Resolution:
    """What a configured runtime resolved to on this machine."""

    name: str
    # the configured alternatives, as written
    alternatives: tuple[str, ...]
    # the command to run (absolute executable first, then its arguments), or None
    argv: tuple[str, ...] | None
    # the alternative that resolved, or None
    chosen: str | None
    # why no alternative resolved (None when one did)
    reason: str | None
    # what the config declares: True, False, or None for "ask the interpreter"
    gil_declared: bool | None
    # the flavour of the study's CPython build it is ("{build:FLAVOUR}"), else None; its
    # interpreter is in the build's record (argv is None until the build ran)
    build: str | None = None
    # how the source will be had, for a build ("debian <mirror>", "tarball <path>", "fetched")
    source: str | None = None
    # environment variables set for the interpreter
    env: dict = field(default_factory=dict)
    # what the interpreter must say: {"free_threaded_build": bool|None, "gil_enabled": bool|None}
    require: dict = field(default_factory=dict)
    # a file the pipeline makes that the cells need (a build's record, the control's binary)
    needs: str | None = None
    # the native control, not a Python runtime (drawn as the machine's ceiling, never
    # compared with the runtimes' times: its work is scaled)
    control: bool = False

    @property
    def found(self) -> bool:
        return self.argv is not None or self.build is not None

    @property
    def origin(self) -> str | None:
        """Where the interpreter comes from: "build" (made by the study from source), "uv",
        "environment" ($VAR), "this" (the interpreter running parbench) or "path"."""
        if not self.chosen:
            return None
        if self.build:
            return "build"
        if self.control:
            return "control"
        if UV.match(self.chosen):
            return "uv"
        if self.chosen.startswith("$"):
            return "environment"
        return "this" if self.chosen == THIS_PYTHON else "path"

    def summary(self) -> dict:
        """A plain dict (for records and Snakemake params)."""
        return {"name": self.name, "alternatives": list(self.alternatives),
                "argv": list(self.argv) if self.argv else None, "chosen": self.chosen,
                "reason": self.reason, "gil_declared": self.gil_declared, "build": self.build,
                "source": self.source, "origin": self.origin, "env": dict(self.env), "require": dict(self.require),
                "needs": self.needs, "control": self.control}


def _executable(word: str, path: str | None) -> tuple[str | None, str | None]:
    """(absolute path, None) for a command's first word, or (None, why not)."""
    if os.sep in word or (os.altsep and os.altsep in word):
        full = os.path.abspath(os.path.expanduser(word))
        if not os.path.isfile(full):
            return None, f"{word} does not exist"
        if not os.access(full, os.X_OK):
            return None, f"{word} is not executable"
        return full, None
    found = shutil.which(word, path=path)
    return (found, None) if found else (None, f"{word} is not on PATH")


def uv_command(env: dict) -> str | None:
    """uv on PATH, else beside this Python (a virtual environment's bin/), else None."""
    found = shutil.which("uv", path=env.get("PATH"))
    if found:
        return found
    beside = os.path.join(os.path.dirname(sys.executable), "uv")
    return beside if os.access(beside, os.X_OK) else None


def resolve_uv(spec: str, env: dict) -> tuple[tuple[str, ...] | None, str | None]:
    """The interpreter `uv python find SPEC` reports (installed ones only: find never
    downloads), or why none."""
    uv = uv_command(env)
    if uv is None:
        return None, f"uv is not installed, so it cannot find a {spec} (pip install uv; then uv python install {spec})"
    try:
        proc = subprocess.run([uv, "python", "find", "--no-project", spec], capture_output=True, text=True,
                              timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"uv python find {spec} failed: {exc}"
    path = proc.stdout.strip().splitlines()[-1] if proc.returncode == 0 and proc.stdout.strip() else ""
    if not path or not os.access(path, os.X_OK):
        return None, f"uv finds no {spec} (uv python install {spec} installs one where uv reaches its downloads)"
    return (path,), None


def resolve_alternative(text: str, env: dict | None = None) -> tuple[tuple[str, ...] | None, str | None]:
    """(argv, None) when `text` names a runnable command here, else (None, why not).
    (`{build:...}` is not a command: `resolve` handles it.)"""
    env = os.environ if env is None else env
    if text == THIS_PYTHON:
        return (sys.executable,), None
    uv = UV.match(text)
    if uv:
        return resolve_uv(uv.group(1), env)
    line, origin = text, None
    if text.startswith("$"):
        var = text[1:].strip("{}")
        line = env.get(var, "")
        if not line.strip():
            return None, f"{var} is not set"
        origin = var
    try:
        words = shlex.split(line)
    except ValueError as exc:
        return None, f"cannot read the command {line!r}: {exc}"
    if not words:
        return None, "the command is empty"
    exe, why = _executable(words[0], env.get("PATH"))
    if exe is None:
        return None, f"{origin}={line!r}: {why}" if origin else why
    return (exe, *words[1:]), None


def resolve(name: str, entry: dict, env: dict | None = None, cpython_cfg: dict | None = None) -> Resolution:
    """The first alternative of `entry["command"]` that resolves, or why none did.
    `cpython_cfg` (gil.cpython) is needed for `{build:...}` alternatives."""
    from parbench.studies.gil import cpython

    env = os.environ if env is None else env
    gil = entry.get("gil", "auto")
    declared = None if gil == "auto" else bool(gil)
    extra = {"env": dict(entry.get("env") or {}),
             "require": {k: v for k, v in (entry.get("require") or {}).items() if v is not None}}
    reasons = []
    for text in entry["command"]:
        if text == CONTROL:
            cc = shutil.which("cc", path=env.get("PATH")) or shutil.which("gcc", path=env.get("PATH"))
            if cc:
                return Resolution(name, tuple(entry["command"]), (os.path.abspath(CONTROL_BINARY),), text, None,
                                  False, needs=CONTROL_BINARY, control=True, **extra)
            reasons.append("no C compiler (cc) to build the native control (Debian: apt-get install build-essential)")
            continue
        build = BUILD.match(text)
        if build:
            flavour = build.group(1)
            if flavour not in cpython.FLAVOURS:
                reasons.append(f"{text}: unknown flavour; allowed: {', '.join(cpython.FLAVOURS)}")
                continue
            how, why = cpython.source_plan(cpython_cfg or {}, env)
            if how:
                return Resolution(name, tuple(entry["command"]), None, text, None, declared, build=flavour,
                                  source=how, needs=cpython.build_record(flavour), **extra)
            reasons.append(why)
            continue
        argv, why = resolve_alternative(text, env)
        if argv:
            return Resolution(name, tuple(entry["command"]), argv, text, None, declared, **extra)
        reasons.append(why)
    return Resolution(name, tuple(entry["command"]), None, None, "; ".join(reasons), declared, **extra)


def resolve_all(cfg: dict, env: dict | None = None) -> list[Resolution]:
    """Every runtime the config measures (`gil.measure`), in that order."""
    gc = cfg["gil"]
    return [resolve(name, gc["runtimes"][name], env, gc.get("cpython")) for name in gc["measure"]]


def worker_environment(env: dict | None = None, runtime_env: dict | None = None) -> dict:
    """The environment of a measured interpreter: this one's, without what points a
    Python at this project's modules or startup files (they are not the runtime's) and
    without PYTHON_GIL, then the runtime's own variables (`runtime_env`)."""
    out = dict(os.environ if env is None else env)
    for var in DROPPED:
        out.pop(var, None)
    out.update(runtime_env or {})
    return out


def check_required(require: dict, reported: dict | None) -> str | None:
    """None when the interpreter says what `require` asks (or nothing is required), else
    the mismatch, e.g. "the interpreter says gil_enabled=True, required False"."""
    if not require:
        return None
    reported = reported or {}
    wrong = [f"{key}={reported.get(key)!r}, required {want!r}" for key, want in sorted(require.items())
             if want is not None and reported.get(key) != want]
    return ("the interpreter says " + "; ".join(wrong)) if wrong else None
