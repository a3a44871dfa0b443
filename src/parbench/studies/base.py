"""What a study gives the shared machinery: the `Study` record the registry makes from
the `Benchmark` every study package exports as `STUDY` (`Benchmark.study()`).

The shared parts (config composition and validation, the Snakemake header and time
estimate, the command line, figures, the paper, the liboqs build, `parbench rerun`)
call these fields and nothing else of a study. A study's figure functions and paper
module are imported only when used, so loading the registry stays cheap (a measured cell
never imports pandas or altair because of it).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from parbench import yaml_file


def _none(*_args) -> list:
    return []


@dataclass(frozen=True)
class Command:
    """A command the package provides, found on PATH; with `args`, running `name *args`
    must also succeed (macOS has stubs, e.g. /usr/bin/javac without a JDK)."""

    name: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Header:
    """A header the package provides, as the C (or, with `cxx`, the C++) compiler finds it
    (`#include <path>`): on macOS also under the Homebrew formula's prefix, where the
    Makefiles look too (Apple clang searches none of Homebrew's folders)."""

    path: str
    cxx: bool = False


@dataclass(frozen=True)
class SystemPackage:
    """A package of the operating system a study needs: `make` installs it with apt-get on
    Debian/Ubuntu when it runs as root; elsewhere `parbench system-deps` prints the command
    of the platform's package manager (apt-get, or Homebrew on macOS: `brew bundle` with the
    top-level Brewfile, which must list every `brew` name here)."""

    # Debian/Ubuntu package name; None: nothing to install there (e.g. it comes with gcc)
    debian: str | None
    # what it provides, checked by using it: a Command or a Header
    provides: Command | Header
    # why the study needs it (printed when it is missing)
    why: str
    # False: the study records what needs it as unavailable, with the reason, instead of
    # failing (a peer, an optional runtime)
    required: bool = True
    # Homebrew formula (macOS); None: not on macOS (e.g. the X11 tools of a Linux-only test)
    brew: str | None = None

    def name(self, manager: str) -> str | None:
        """The package's name for `manager` ("apt" or "brew"), None where it has none."""
        return self.brew if manager == "brew" else self.debian


class CellPaths:
    """The files of a measured cell, alike in every study: a cell (a frozen dataclass of
    its sweep's coordinates) gives `stem`, the path of its files without an extension, and
    `history`, the folder that keeps a copy of each of its measurements. Its record is the
    JSON file `<stem><RECORD_SUFFIX>`; `outputs` names every file it writes, the record
    under "record"."""

    RECORD_SUFFIX = ".json"

    @classmethod
    def from_wildcards(cls, wildcards):
        """The cell a rule's job names: each field from the wildcard of its name (an `int`
        field read as one), a field no wildcard names at its default. A study whose
        wildcards name its cell otherwise (sigpar's variant) defines its own."""
        fields = [f for f in dataclasses.fields(cls) if hasattr(wildcards, f.name)]
        return cls(**{f.name: int(getattr(wildcards, f.name)) if f.type in (int, "int") else getattr(wildcards, f.name)
                      for f in fields})

    def stem(self, profile: str) -> str:
        raise NotImplementedError

    def history(self, profile: str) -> Path:
        raise NotImplementedError

    def record(self, profile: str) -> str:
        return f"{self.stem(profile)}{self.RECORD_SUFFIX}"

    def outputs(self, profile: str) -> dict[str, str]:
        return {"record": self.record(profile)}


@dataclass(frozen=True)
class Study:
    # The study's key: its package, config group, rules file, paper section, the prefix of
    # its rules, commands, tables and figures.
    name: str
    # Title of its paper section and of its category in Snakemake's report.
    title: str
    # One line: what it measures.
    summary: str
    # cfg -> the cells of the sweep, in the order they run. A cell is hashable and has a
    # `label` (one line naming it).
    cells: Callable[[dict], list]
    # Rule name -> seconds one job of it takes, from (cfg, the job's wildcards): the run's
    # printed estimate. Name every rule that measures or builds; other jobs count as short.
    job_seconds: Mapping[str, Callable[[dict, dict], float]]
    # The rule whose jobs are the measured cells.
    cell_rule: str
    # (cfg, jobs of this run as (rule name, wildcards)) -> the lines of its part of the
    # run's header.
    header: Callable[[dict, list], list[str]]
    # `parbench` subcommand -> the module whose add_commands(subparsers) registers it.
    commands: Mapping[str, str] = field(default_factory=dict)
    # profile -> {input name: path} for figure inputs that are not processed tables.
    figure_files: Callable[[str], dict] = field(default=lambda profile: {})
    # (cfg, processed dir) -> tables of other studies of the run its paper also reads.
    related_tables: Callable[[dict, str], list[str]] = _none
    # cfg -> problems that span keys of the study's config (the schema checks the rest).
    config_errors: Callable[[dict], list[str]] = _none
    # schema -> schema: fills in what only the code knows (e.g. a catalog of names).
    complete_schema: Callable[[dict], dict] = field(default=lambda schema: schema)
    # Hydra override aliases kept for users: {"algorithms": "sigpar/algorithms"}.
    override_aliases: Mapping[str, str] = field(default_factory=dict)
    # cfg -> liboqs build ids (OQS_MINIMAL_BUILD entries) the configured cells need.
    liboqs_ids: Callable[[dict], list[str]] = _none
    # () -> {liboqs build id: the name liboqs knows the algorithm by}, for every id the
    # study can ask for.
    liboqs_names: Callable[[], dict] = field(default=lambda: {})
    # (cfg, run id) -> one line per cell that failed its checks in this run, with the
    # command that measures it again.
    failures: Callable[[dict, str | None], list[str]] = _none
    # (cfg, name) -> the sweep tokens whose forcing remeasures `name` (e.g. an algorithm);
    # empty when the study does not know the name.
    rerun_tokens: Callable[[dict, str], list[str]] = _none
    # cfg -> the names `rerun_tokens` knows, for the error message.
    rerun_names: Callable[[dict], list[str]] = _none
    # Packages of the operating system it needs beyond the toolchain in the README.
    system_packages: tuple[SystemPackage, ...] = ()
    # The `parbench.studies.benchmark.Benchmark` the study is: its figures and paper come
    # from it, and study.smk makes its cell and aggregate rules when it asks for them
    # (RUNNER_RULES).
    benchmark: Any = None

    @property
    def package(self) -> str:
        return f"parbench.studies.{self.name}"

    @property
    def folder(self) -> Path:
        return Path(__file__).resolve().parent / self.name

    def schema(self) -> dict:
        """The JSON schema of the study's config section (`config.schema.yaml` in its folder)."""
        return self.complete_schema(copy.deepcopy(_load_yaml(self.folder / "config.schema.yaml")))

    def figures(self) -> dict:
        """Figure name -> (function, [input names]), in the order the paper shows them; an
        input name is a table `data/processed/<profile>/<name>.parquet` or a key of
        `figure_files`."""
        return self.benchmark.figures()

    def figure_inputs(self, name: str, profile: str, processed: str) -> list[str]:
        files = self.figure_files(profile)
        _, inputs = self.figures()[name]
        return [files.get(i, f"{processed}/{i}.parquet") for i in inputs]

    def paper(self) -> Any:
        """What the paper's machinery reads of the study: TABLES, FRAGMENTS, REPORT_TABLES,
        KEYS, `facts(f, tables)`, `report_tables(tables)` (a paper module of the study's
        own, or the Benchmark's generic one)."""
        return self.benchmark.paper()


@functools.cache
def _load_yaml(path: Path) -> dict:
    return yaml_file.read(path)
