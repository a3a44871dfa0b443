"""Finding the interpreters the gil study measures.

Each configured runtime (`gil.runtimes.<name>`) lists alternatives for its command; the
first that resolves on this machine is used:

- `{python}`: the interpreter running parbench (the project's CPython);
- `$VAR`: the command in environment variable VAR, read as the seed's runner reads
  `PROTOPY_BIN` and `CPYTHON_BIN` (a path or a name on PATH, optionally with arguments);
  unset or empty: not this alternative;
- anything else: a command line (split like a shell's), whose first word is an absolute
  or relative path to an executable file or a name found on PATH.

Resolving only looks (PATH, the file system, the environment): it is cheap and runs when
the pipeline plans its cells. A runtime that does not resolve gets no cells and is listed
as not measured, with the reason. One that resolves but cannot run the worker (a pyenv
shim of a version that is not installed, a broken install) is found out by its cells,
which record it as unavailable with the interpreter's own message.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass

THIS_PYTHON = "{python}"


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

    @property
    def found(self) -> bool:
        return self.argv is not None

    def summary(self) -> dict:
        """A plain dict (for records and Snakemake params)."""
        return {"name": self.name, "alternatives": list(self.alternatives),
                "argv": list(self.argv) if self.argv else None, "chosen": self.chosen,
                "reason": self.reason, "gil_declared": self.gil_declared}


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


def resolve_alternative(text: str, env: dict | None = None) -> tuple[tuple[str, ...] | None, str | None]:
    """(argv, None) when `text` names a runnable command here, else (None, why not)."""
    env = os.environ if env is None else env
    if text == THIS_PYTHON:
        return (sys.executable,), None
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


def resolve(name: str, entry: dict, env: dict | None = None) -> Resolution:
    """The first alternative of `entry["command"]` that resolves, or why none did."""
    gil = entry.get("gil", "auto")
    declared = None if gil == "auto" else bool(gil)
    reasons = []
    for text in entry["command"]:
        argv, why = resolve_alternative(text, env)
        if argv:
            return Resolution(name, tuple(entry["command"]), argv, text, None, declared)
        reasons.append(why)
    return Resolution(name, tuple(entry["command"]), None, None, "; ".join(reasons), declared)


def resolve_all(cfg: dict, env: dict | None = None) -> list[Resolution]:
    """Every runtime the config measures (`gil.measure`), in that order."""
    gc = cfg["gil"]
    return [resolve(name, gc["runtimes"][name], env) for name in gc["measure"]]


def worker_environment(env: dict | None = None) -> dict:
    """The environment of a measured interpreter: this one's, without what points a
    Python at this project's modules or startup files (they are not the runtime's)."""
    out = dict(os.environ if env is None else env)
    for var in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "JYTHONPATH", "PYTHONINSPECT"):
        out.pop(var, None)
    return out
