"""`parbench system-deps`: the operating system's packages the registered studies need
(Study.system_packages), checked, and installed where that can be done unattended.

`make paper` and `make test` run `parbench system-deps --install` after creating the
Python environment: on Debian as root (CI, containers) the missing packages are
installed with apt-get; elsewhere the command says exactly what to install. A missing
required package stops the run with that command before any long work starts; a
missing optional one (a peer, an optional runtime) is only announced, and the study
records what needs it as unavailable, with the reason.

PARBENCH_NO_APT=1 never runs apt-get.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

NO_APT_ENV = "PARBENCH_NO_APT"


def present(provides: str) -> bool:
    return Path(provides).exists() if provides.startswith("/") else shutil.which(provides) is not None


def missing_packages() -> list:
    """(study name, SystemPackage) of every registered study's package that is absent."""
    from parbench import studies

    return [(study.name, package) for study in studies.registered() for package in study.system_packages
            if not present(package.provides)]


def can_install() -> tuple[bool, str]:
    if os.environ.get(NO_APT_ENV):
        return False, f"{NO_APT_ENV} is set"
    if shutil.which("apt-get") is None:
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


def main(args) -> int:
    missing = missing_packages()
    if missing and args.install:
        ok, why = can_install()
        if ok:
            install(sorted({package.debian for _, package in missing}))
            missing = missing_packages()
        else:
            print(f"parbench: not installing system packages ({why})", file=sys.stderr)
    required = [(s, p) for s, p in missing if p.required]
    for study, package in missing:
        kind = "needs" if package.required else "can use"
        print(f"parbench: {study} {kind} {package.debian} ({package.why}); it is not installed", file=sys.stderr)
    if missing:
        names = " ".join(sorted({p.debian for _, p in missing}))
        print(f"parbench: install with: sudo apt-get install {names}", file=sys.stderr)
    return 1 if required else 0


def add_commands(sub) -> None:
    p = sub.add_parser("system-deps", help="check (and with --install, install) the studies' system packages")
    p.add_argument("--install", action="store_true",
                   help="install what is missing with apt-get when running as root on Debian")
    p.set_defaults(func=main)
