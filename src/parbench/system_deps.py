"""`parbench system-deps`: the operating system's packages the registered studies need
(Study.system_packages), checked, and installed where that can be done unattended.

`make paper` and `make test` run `parbench system-deps --install` after creating the
Python environment. The platform's package manager decides the words:

- Debian/Ubuntu (apt-get): as root (CI, containers) the missing packages are installed
  with apt-get; otherwise the `sudo apt-get install ...` line is printed.
- macOS (Homebrew): the `brew install ...` line is printed, and `brew bundle` (the
  top-level `Brewfile`, which lists every formula the studies name) installs everything
  at once. parbench never runs brew itself.
- anything else: the Debian names, to translate.

A package counts as present when what it provides works: its command is on PATH (and
runs, where the package says so), or the C/C++ compiler finds its header (a preprocessor
probe, on macOS also under the formula's `brew --prefix`, where the Makefiles look too),
never by a Debian file path. A missing required package stops the run with the command
before any long work starts; a missing optional one (a peer, an optional runtime) is only
announced, and the study records what needs it as unavailable, with the reason.

PARBENCH_NO_APT=1 never runs apt-get.
"""

from __future__ import annotations

import functools
import os
import platform
import shlex
import shutil
import subprocess
import sys

from parbench.studies.base import Command, Header, SystemPackage

NO_APT_ENV = "PARBENCH_NO_APT"
PROBE_TIMEOUT_SEC = 60


def package_manager(system: str | None = None, which=shutil.which) -> str:
    """"brew" on macOS, "apt" where apt-get is (Debian, Ubuntu), else "none"."""
    system = system or platform.system()
    if system == "Darwin":
        return "brew"
    return "apt" if which("apt-get") else "none"


@functools.cache
def brew_prefix(formula: str) -> str | None:
    """`brew --prefix FORMULA` (its opt folder, whether installed or not), None without brew."""
    brew = shutil.which("brew")
    if not brew:
        return None
    try:
        proc = subprocess.run([brew, "--prefix", formula], capture_output=True, text=True, timeout=PROBE_TIMEOUT_SEC)
    except (OSError, subprocess.SubprocessError):
        return None
    prefix = proc.stdout.strip()
    return prefix if proc.returncode == 0 and prefix else None


def _compiler(cxx: bool) -> list[str]:
    """The compiler the Makefiles use: $CC / $CXX, else cc / c++."""
    return shlex.split(os.environ.get("CXX" if cxx else "CC") or ("c++" if cxx else "cc"))


def header_found(header: Header, include_dirs: list[str] = ()) -> bool:
    """Whether the C (C++) compiler's preprocessor finds `#include <header.path>`."""
    cmd = [*_compiler(header.cxx), "-E", "-x", "c++" if header.cxx else "c", *[f"-I{d}" for d in include_dirs],
           "-", "-o", os.devnull]
    if shutil.which(cmd[0]) is None:
        return False
    try:
        proc = subprocess.run(cmd, input=f"#include <{header.path}>\n", capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT_SEC)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def command_works(command: Command, which=shutil.which) -> bool:
    """Whether `command.name` is on PATH and, with `args`, runs successfully."""
    path = which(command.name)
    if path is None:
        return False
    if not command.args:
        return True
    try:
        proc = subprocess.run([path, *command.args], capture_output=True, timeout=PROBE_TIMEOUT_SEC)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def present(package: SystemPackage, manager: str) -> bool:
    """Whether what `package` provides works here (`manager`: "apt", "brew" or "none")."""
    provides = package.provides
    if isinstance(provides, Command):
        return command_works(provides)
    if isinstance(provides, Header):
        dirs = []
        if manager == "brew" and package.brew:
            prefix = brew_prefix(package.brew)
            if prefix:
                dirs.append(os.path.join(prefix, "include"))
        return header_found(provides, dirs)
    raise TypeError(f"SystemPackage.provides must be a Command or a Header, not {provides!r}")


def relevant(package: SystemPackage, manager: str) -> bool:
    """Whether the package is one to check on this platform: it has a name there (on a
    platform of neither manager, the Debian name is what the message can give)."""
    return package.name("apt" if manager == "none" else manager) is not None


def missing_packages(manager: str | None = None) -> list:
    """(study name, SystemPackage) of every registered study's package that is absent
    on this platform."""
    from parbench import studies

    manager = manager or package_manager()
    return [(study.name, package) for study in studies.registered() for package in study.system_packages
            if relevant(package, manager) and not present(package, manager)]


def can_install(manager: str = "apt") -> tuple[bool, str]:
    if manager == "brew":
        return False, "on macOS parbench does not run Homebrew itself"
    if os.environ.get(NO_APT_ENV):
        return False, f"{NO_APT_ENV} is set"
    if manager != "apt" or shutil.which("apt-get") is None:
        return False, "no apt-get (not Debian or Ubuntu)"
    if os.geteuid() != 0:
        return False, "not root"
    return True, ""


def install(names: list[str]) -> bool:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    print(f"parbench: installing {' '.join(names)} with apt-get", flush=True)
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *names]):
        proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            print(f"parbench: {' '.join(cmd)} failed:\n{proc.stderr.strip()[-2000:]}", file=sys.stderr)
            return False
    return True


def install_hint(names: list[str], manager: str, which=shutil.which) -> str:
    """The line that tells the user how to install `names` with this platform's manager."""
    listed = " ".join(names)
    if manager == "brew":
        line = f"parbench: install with: brew install {listed}   (or everything at once: brew bundle)"
        if which("brew") is None:
            line += "\nparbench: Homebrew is not installed: see https://brew.sh, then run the line above"
        return line
    if manager == "apt":
        return f"parbench: install with: sudo apt-get install {listed}"
    return f"parbench: install the equivalents of the Debian packages: {listed}"


def main(args, manager: str | None = None) -> int:
    manager = manager or package_manager()
    key = "apt" if manager == "none" else manager
    missing = missing_packages(manager)
    if missing and args.install:
        ok, why = can_install(manager)
        if ok:
            install(sorted({package.name(key) for _, package in missing}))
            missing = missing_packages(manager)
        elif manager != "brew":
            print(f"parbench: not installing system packages ({why})", file=sys.stderr)
    required = [(s, p) for s, p in missing if p.required]
    for study, package in missing:
        kind = "needs" if package.required else "can use"
        print(f"parbench: {study} {kind} {package.name(key)} ({package.why}); it is not installed", file=sys.stderr)
    if missing:
        print(install_hint(sorted({p.name(key) for _, p in missing}), manager), file=sys.stderr)
    return 1 if required else 0


def add_commands(sub) -> None:
    p = sub.add_parser("system-deps", help="check (and with --install, install) the studies' system packages")
    p.add_argument("--install", action="store_true",
                   help="install what is missing with apt-get when running as root on Debian/Ubuntu "
                        "(on macOS it prints the brew line: `brew bundle` installs the Brewfile)")
    p.set_defaults(func=main)
