"""The studies of parbench, and the one registry through which the rest of the project
knows them.

A study is a plug-in: a package `parbench.studies.<name>` whose `__init__.py` defines
`STUDY`, a `parbench.studies.benchmark.Benchmark` (its cells, measurement, checks,
figures, paper and hooks; the registry holds the `parbench.studies.base.Study` record it
gives), plus its own rules file (`workflow/rules/<name>.smk`), config group
(`conf/<name>/`), paper section (`paper/sections/<name>.qmd`, its figures' captions in
`paper/sections/<name>/captions.yml`) and table captions (`workflow/report/<name>/`).
Nothing outside those places names a study; the shared machinery asks this registry. `docs/adding-a-study.md` lists the files to create.

The order below is the paper's order and the order in which cells run.
"""

from __future__ import annotations

import importlib
from functools import cache

from parbench.studies.base import Study
from parbench.studies.benchmark import Benchmark

REGISTRY = (
    "sigpar",
    "sched",
    "dispatch",
    "kem",
    "gil",
)


def names() -> list[str]:
    """Every registered study, in paper order."""
    return list(REGISTRY)


@cache
def get(name: str) -> Study:
    """The study called `name`; a KeyError names the registered ones."""
    if name not in REGISTRY:
        raise KeyError(f"unknown study {name!r}; registered: {', '.join(REGISTRY)}")
    benchmark = importlib.import_module(f"parbench.studies.{name}").STUDY
    if not isinstance(benchmark, Benchmark):
        raise RuntimeError(f"parbench.studies.{name}.STUDY is a {type(benchmark).__name__}; a study is a "
                           f"parbench.studies.benchmark.Benchmark")
    study = benchmark.study()
    if study.name != name:
        raise RuntimeError(f"parbench.studies.{name} defines the study {study.name!r}; "
                           f"a study's name must be its package's")
    return study


def registered() -> list[Study]:
    return [get(name) for name in REGISTRY]


def active(cfg: dict) -> list[Study]:
    """The studies a composed config measures, in paper order."""
    return [get(name) for name in REGISTRY if name in cfg["studies"]]
