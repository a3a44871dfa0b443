"""Where the project's files are: the checkout the pipeline runs in.

Snakemake runs every job in the checkout's root (its working directory) and exports
PARBENCH_ROOT; commands run by hand from the checkout's root find it as the current
directory. Only when neither holds a `conf/` folder does the package fall back to the
checkout it was installed from.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT_ENV = "PARBENCH_ROOT"
INSTALLED_FROM = Path(__file__).resolve().parents[2]


def root() -> Path:
    env = os.environ.get(ROOT_ENV)
    if env:
        return Path(env)
    cwd = Path.cwd()
    if (cwd / "conf").is_dir() and (cwd / "workflow").is_dir():
        return cwd
    return INSTALLED_FROM


def conf_dir() -> Path:
    return root() / "conf"


def schema_path() -> Path:
    return root() / "workflow" / "schemas" / "config.schema.yaml"
