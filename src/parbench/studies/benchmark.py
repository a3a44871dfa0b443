"""A study as a class: the contract a study implements when parbench's own runner measures
its cells (`parbench cell <study>`, `parbench aggregate <study>`) and the rules of
`workflow/rules/study.smk` schedule them. benchopt's `BaseObjective`/`BaseSolver` are the
model: the docstrings of `Benchmark` are the contract, and a study holds only what is its
own.

A subclass names its study (`name`, `title`, `summary`), its cell (`Cell`, a frozen
dataclass subclassing `SweepCell`), the processed tables it makes (`TABLES`), its figures
(`FIGURES`, each a `Figure`, whose one caption, in `paper/sections/<study>/captions.yml`,
the chart, the paper and Snakemake's report use) and the generated parts of its paper
section (`FRAGMENTS`, templates in `paper/sections/<study>/`); and it defines:

- `cells(cfg)`: the cells of the sweep, in the order they run;
- `measure(cfg, cell) -> dict`: one measurement of one cell (what was measured, JSON),
  or `Unavailable(reason)` raised when this machine cannot measure it;
- `check(cfg, cell, result) -> list[str]`: what is wrong with that measurement (nothing
  when it is correct); a cell with a problem is recorded as failed, never as a result;
- `tables(records) -> {name: DataFrame}`: the records as tidy tables, one per `TABLES`
  (a record is the runner's fields, `RECORD_FIELDS`, beside what `measure` returned);
  `aggregate` writes them (a study whose aggregate reads more than its records, or writes
  files in the seed's own format, refines `aggregate_inputs` and `aggregate`);
- `facts(f, tables) -> dict`: the named facts its paper text states (registered on `f`,
  a `parbench.paper.facts.Facts` the paper check holds against the tables), and anything
  else its templates need.

The runner owns the rest, alike for every study: SIGTERM as Ctrl+C, measuring again while
the machine is disturbed, atomic writes, the history of every measurement, the failed
status, the progress line, the `<study>_load` table and the Parquet names
(`parbench.cell_life`, `parbench.processed`). `study()` gives the `Study` record through
which the rest of parbench knows the study (the registry makes it from `STUDY`).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, ClassVar

from parbench import paths, yaml_file
from parbench.studies.base import CellPaths, Study

# A cell's key is a file name and a Snakemake wildcard value.
KEY = re.compile(r"^[A-Za-z0-9.+-]+(?:_[A-Za-z0-9.+-]+)*$")
# The fields the runner writes in every record; what `measure` returns stands beside them
# and must not use their names.
RECORD_FIELDS = ("study", "profile", "cell", "status", "failure", "started_unix", "finished_unix", "elapsed_sec",
                 "provenance")


class Unavailable(Exception):
    """Raised by `measure` when this machine cannot measure the cell (a peer that was not
    built here, an instruction set the CPU lacks): the cell is recorded as `unavailable`
    with the reason, neither a result nor a failure, with `result` (what was found out on
    the way, e.g. the command that said so) beside it."""

    def __init__(self, reason: str | None, result: dict | None = None) -> None:
        super().__init__(reason)
        self.reason = reason or None
        self.result = dict(result or {})


@dataclass(frozen=True)
class Figure:
    """One figure: `function(*tables, machine)` draws it (an Altair chart) from `inputs`,
    processed table names; the paper shows it as `label` (`fig-...`). Its caption is
    written once, in the study's `paper/sections/<study>/captions.yml` (`Benchmark.captions`),
    and is the paper's caption, the chart's description and its caption in Snakemake's
    report. `function` may be named as "module:function", or by its name alone in the
    study's figures module (`Benchmark.FIGURES_MODULE`), imported when the figure is drawn
    (so the registry does not import Altair)."""

    name: str
    function: Callable | str
    inputs: tuple[str, ...]
    label: str

    def draw(self, *args, module: str | None = None):
        """The chart; a function named by a bare name is looked up in `module` (the study's
        figures module)."""
        function = self.function
        if isinstance(function, str):
            where, _, attr = function.rpartition(":")
            function = getattr(importlib.import_module(where or module), attr)
        return function(*args)


@dataclass(frozen=True)
class SweepCell(CellPaths):
    """A cell of a `Benchmark`: subclass it as a frozen dataclass whose fields are the cell's
    coordinates (a `rep` field is its repetition; the run order interleaves repetitions).
    Its files are `data/raw/<profile>/<study>/<key>.json` and its history
    `data/raw/<profile>/<study>/history/<key>/`."""

    # the study's name and the files beside the record, set by its Benchmark class
    study: ClassVar[str] = ""
    side_files: ClassVar[dict[str, str]] = {}

    @property
    def key(self) -> str:
        """`size-1000_workers-2`: the cell's coordinates as a file name."""
        return "_".join(f"{f.name}-{getattr(self, f.name)}" for f in dataclasses.fields(self))

    @property
    def label(self) -> str:
        return f"{self.study} " + " ".join(f"{f.name}={getattr(self, f.name)}" for f in dataclasses.fields(self))

    def folder(self, profile: str) -> Path:
        return Path(paths.RAW.format(profile=profile)) / self.study

    def stem(self, profile: str) -> str:
        return str(self.folder(profile) / self.key)

    def history(self, profile: str) -> Path:
        return self.folder(profile) / "history" / self.key

    def outputs(self, profile: str) -> dict[str, str]:
        return {"record": self.record(profile),
                **{name: f"{self.stem(profile)}{suffix}" for name, suffix in self.side_files.items()}}


class Benchmark:
    """The contract of a study measured by parbench's runner (see the module's docstring).
    Class attributes name the study; methods measure and read it."""

    # the study's key: package, config group, paper section, prefix of its tables and figures
    name: ClassVar[str]
    # title of its paper section and of its category in Snakemake's report
    title: ClassVar[str]
    # one line: what it measures
    summary: ClassVar[str]
    # the cell: a frozen dataclass subclassing SweepCell
    Cell: ClassVar[type]
    # names of the tables `tables` makes, without the study's prefix (written as
    # `<study>_<name>.parquet`; captioned in the report by workflow/report/<study>/<name>.rst)
    TABLES: ClassVar[tuple[str, ...]] = ()
    # table name (with the study's prefix) -> the columns naming one of its rows, for facts
    KEYS: ClassVar[dict[str, list[str]]] = {}
    # key column -> how a footnote names its values ({value: words}, or a function of the
    # row's key values; a value or the column None where the sentence always says it);
    # unlisted columns are named by their values
    NOTE_NAMES: ClassVar[dict[str, dict | Callable | None]] = {}
    # the figures, in the paper's order
    FIGURES: ClassVar[tuple[Figure, ...]] = ()
    # the generated parts of the paper section (templates paper/sections/<study>/<part>.md);
    # `headline` and `limitations` go to the paper's summary and limitations
    FRAGMENTS: ClassVar[tuple[str, ...]] = ("headline", "limitations")
    # files a cell writes beside its record, name -> suffix of the cell's stem (e.g. the
    # seed's console output, {"console": ".txt"}); `side_files` gives their text
    SIDE_FILES: ClassVar[dict[str, str]] = {}
    # the record as one line of JSON (records of many thousand rows), else indented
    COMPACT_RECORD: ClassVar[bool] = False
    # how its cells were measured and checked, said under each of its figures in
    # Snakemake's report (after the figure's caption)
    MEASURED: ClassVar[str] = ""
    # what an interrupted cell says it left behind (after "interrupted; ")
    INTERRUPTED: ClassVar[str] = "no output written"
    # `parbench` subcommands of the study's own -> the module whose add_commands(subparsers)
    # registers them (`parbench cell` and `parbench aggregate` serve every study)
    COMMANDS: ClassVar[dict[str, str]] = {}
    # packages of the operating system it needs beyond the README's toolchain
    # (parbench.studies.base.SystemPackage)
    SYSTEM_PACKAGES: ClassVar[tuple] = ()
    # True: workflow/rules/study.smk makes its `<study>_cell` and `<study>_aggregate` rules,
    # run by `parbench cell` and `parbench aggregate`, its cells `SweepCell`s. False: its own
    # rules file has them (a study whose files keep the paths they had before the runner).
    RUNNER_RULES: ClassVar[bool] = True
    # Hydra override aliases kept for users: {"algorithms": "sigpar/algorithms"}
    OVERRIDE_ALIASES: ClassVar[dict[str, str]] = {}
    # files the aggregate writes in the seed's own format beside its tables (in the
    # processed folder, shown in the report as the seed's)
    SEED_FILES: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "Cell" in cls.__dict__:
            cls.Cell.study = cls.name
            cls.Cell.side_files = dict(cls.SIDE_FILES)

    # --- what a study defines ------------------------------------------------------------------

    def cells(self, cfg: dict) -> list:
        """The cells of the sweep the config asks for, in the order they run."""
        raise NotImplementedError

    def measure(self, cfg: dict, cell) -> dict:
        """Measure one cell once; what was measured (JSON-serializable)."""
        raise NotImplementedError

    def check(self, cfg: dict, cell, result: dict) -> list[str]:
        """What is wrong with a measurement (empty when it is correct): a result that fails
        its check is recorded as failed with these problems."""
        raise NotImplementedError

    def tables(self, records: list[dict]) -> dict:
        """The records (each the runner's fields, `RECORD_FIELDS`, beside what `measure`
        returned, or `empty_result` when it raised) as tidy tables: {name in TABLES:
        DataFrame}."""
        raise NotImplementedError

    def aggregate(self, cfg: dict, inputs: dict[str, list[str]], out_dir: Path) -> None:
        """Write the study's tables (`table_names`), `SEED_FILES` and `other_outputs` into
        `out_dir` from `inputs` ({name: files}, as `aggregate_inputs` names them), and print
        what was aggregated. By default: the records as `tables` makes them, and the load
        table of every record."""
        from parbench import processed
        from parbench.disturbance import load_table
        from parbench.records import read_records

        records = read_records(inputs["records"])
        tables = self.tables(records)
        if sorted(tables) != sorted(self.TABLES):
            raise SystemExit(f"parbench aggregate {self.name}: tables() made {sorted(tables)}, but TABLES "
                             f"declares {sorted(self.TABLES)}")
        tables["load"] = load_table(self.name, records, lambda r: self.Cell(**r["cell"]).label, lambda r: self.name)
        for path in processed.write_tables(self.name, tables, out_dir):
            print(f"{self.name}: wrote {path}")
        print(f"{self.name}: {len(records)} records, {processed.status_counts(tables['load'])}")

    def facts(self, f, tables: dict) -> dict:
        """Register the facts the paper states on `f` (parbench.paper.facts.Facts over
        `tables`, the run's machine.json as `f.machine`); return the rest of the templates'
        context (rows to loop over, flags; the paper's tables under "tables"). The load every
        study states (`<study>_load`) is registered before, by the paper's machinery."""
        return {}

    # --- what a study may refine ---------------------------------------------------------------

    def cell_parameters(self, cfg: dict, cell) -> dict:
        """Everything that decides what a cell measures: Snakemake measures it again when
        this changes. The cell's fields and the study's whole config section."""
        return {"cell": dataclasses.asdict(cell), "config": cfg.get(self.name)}

    def cell_seconds(self, cfg: dict, cell) -> float:
        """Seconds one cell takes, for the run's time estimate."""
        return 1.0

    def empty_result(self, cfg: dict, cell) -> dict:
        """The study's fields of a record whose `measure` raised (a failed cell): what the
        study's readers (its tables, its printed lines) read of every record, empty."""
        return {}

    def cell_fields(self, cell) -> dict:
        """The cell as its record's `cell` names it: its fields."""
        return dataclasses.asdict(cell)

    def side_files(self, record: dict) -> dict[str, str]:
        """The text of each of `SIDE_FILES` for a record (written before the record)."""
        return {}

    def written(self, cfg: dict, cell, record: dict) -> None:
        """What the study does once a measured cell's record is written, before its lines
        are printed (sigpar notes a failed algorithm, so the rest of the run skips it)."""

    def lines(self, cfg: dict, cell, record: dict) -> list[str]:
        """What a measured cell prints (the run's progress follows the last line)."""
        return [f"{cell.label}: {record['status']} in {record['elapsed_sec']:.3g} s"]

    def config_errors(self, cfg: dict) -> list[str]:
        """Problems spanning keys of the study's config (its schema checks the rest)."""
        return []

    def aggregate_inputs(self, cfg: dict) -> dict[str, list[str]]:
        """{name: files}: what `aggregate` reads, the inputs of the `<study>_aggregate` rule.
        By default the records of every cell."""
        return {"records": [cell.record(cfg["profile"]) for cell in self.cells(cfg)]}

    def aggregate_parameters(self, cfg: dict):
        """What else decides the aggregate's output (e.g. what this machine has): Snakemake
        aggregates again when it changes. None by default."""
        return None

    def other_outputs(self, cfg: dict) -> list[str]:
        """Files `aggregate` writes in the processed folder that the report does not show."""
        return []

    def related_tables(self, cfg: dict, processed: str) -> list[str]:
        """Tables of other studies of the run its paper also reads (paths in `processed`)."""
        return []

    def figure_files(self, profile: str) -> dict[str, str]:
        """Figure inputs that are not processed tables: {input name: path}."""
        return {}

    def complete_schema(self, schema: dict) -> dict:
        """The study's config schema with what only the code knows filled in (e.g. the
        catalog of names a key may take)."""
        return schema

    def rerun_tokens(self, cfg: dict, name: str) -> list[str]:
        """The sweep tokens whose forcing measures `name` (e.g. an algorithm) again with
        `parbench rerun`; empty when the study does not know the name."""
        return []

    def rerun_names(self, cfg: dict) -> list[str]:
        """The names `rerun_tokens` knows, for the error message."""
        return []

    def liboqs_ids(self, cfg: dict) -> list[str]:
        """liboqs build ids (OQS_MINIMAL_BUILD entries) the configured cells need."""
        return []

    def liboqs_names(self) -> dict[str, str]:
        """{liboqs build id: the name liboqs knows the algorithm by}, for every id the study
        can ask for."""
        return {}

    def other_job_seconds(self) -> dict:
        """Rule name -> seconds one job of it takes, from (cfg, the job's wildcards), for the
        study's rules that build or measure something other than its cells (a compiler run,
        a probe)."""
        return {}

    def describe(self, cfg: dict, jobs: list[tuple[str, dict]]) -> list[str]:
        """The study's first lines in the run's header, above the cells to measure: what
        this run measures (`jobs`: the run's jobs as (rule name, wildcards))."""
        return [f"{self.title.upper()} ({self.name}): {self.summary}"]

    # --- what the run's header and estimate are made of ------------------------------------

    def cell_rules(self) -> dict[str, Callable]:
        """Rule name -> the cell a job of it measures, from (cfg, the job's wildcards as a
        dict; here a cell's key, None for a key the config does not have)."""
        return {self.cell_rule: lambda cfg, wc: self.cell_of(cfg, wc["cell"]) if "cell" in wc else None}

    def job_seconds(self) -> dict:
        """Rule name -> seconds one of its jobs takes, from (cfg, the job's wildcards), for
        the run's estimate: each cell's `cell_seconds`, and `other_job_seconds`."""
        def cell_job(cell_of: Callable) -> Callable:
            return lambda cfg, wc: self.cell_seconds(cfg, cell_of(cfg, wc))

        return {**{rule: cell_job(of) for rule, of in self.cell_rules().items()}, **self.other_job_seconds()}

    def header(self, cfg: dict, jobs: list[tuple[str, dict]]) -> list[str]:
        """The study's lines in the run's header: `describe`, then the cells this run
        measures of all the config has, and how long they take."""
        from parbench.progress import cells_to_measure

        rules = self.cell_rules()
        todo = [c for rule, wc in jobs if rule in rules and (c := rules[rule](cfg, wc)) is not None]
        return [*self.describe(cfg, jobs),
                cells_to_measure(len(todo), len(self.cells(cfg)), sum(self.cell_seconds(cfg, c) for c in todo))]

    # --- what the runner and the rules use -----------------------------------------------------

    @property
    def cell_rule(self) -> str:
        return f"{self.name}_cell"

    def cell_of(self, cfg: dict, key: str):
        """The cell whose key is `key`, None when the config has no such cell. Snakemake asks
        for every job (its params, priority, estimate): the cells are listed once per config,
        not once per call."""
        fingerprint = json.dumps(cfg, sort_keys=True, default=str)
        cached = self.__dict__.get("_cells_by_key")
        if cached is None or cached[0] != fingerprint:
            cached = (fingerprint, {c.key: c for c in self.cells(cfg)})
            self._cells_by_key = cached
        return cached[1].get(key)

    def keys(self, cfg: dict) -> list[str]:
        """Every cell's key; a ValueError names one that is not a file name."""
        keys = [c.key for c in self.cells(cfg)]
        bad = [k for k in keys if not KEY.match(k)]
        if bad:
            raise ValueError(f"{self.name}: cell keys must be file names of letters, digits, '.', '+', '-' "
                             f"and '_': {bad[0]!r}")
        return keys

    def table_names(self) -> list[str]:
        """Every table the aggregate writes, with the study's prefix: TABLES, then the load."""
        return [f"{self.name}_{t}" for t in self.TABLES] + [f"{self.name}_load"]

    def failures(self, cfg: dict, run_id: str | None) -> list[str]:
        """The cells of run `run_id` whose measurement failed, each with the command that
        measures it again."""
        from parbench.records import failed_in_run

        return [failed_line(cfg, self.failure_label(cell), record["failure"], cell.record(cfg["profile"]))
                for cell in self.cells(cfg) if (record := failed_in_run(cell.record(cfg["profile"]), run_id))]

    def failure_label(self, cell) -> str:
        """A failed cell as the run's end names it: its label (which names the study)."""
        return cell.label

    @property
    def FIGURES_MODULE(self) -> str:
        """Where a figure function named by its name alone is: the study's `figures` module."""
        return f"parbench.studies.{self.name}.figures"

    def figures(self) -> dict:
        """Figure name -> (function, [input names]), as `Study.figures` gives them."""
        return {fig.name: (_described(self, fig), list(fig.inputs)) for fig in self.FIGURES}

    def figure(self, name: str) -> Figure:
        return next(fig for fig in self.FIGURES if fig.name == name)

    def captions(self) -> dict[str, str]:
        """Figure name -> its caption as written in `paper/sections/<study>/captions.yml`:
        the paper's words, in the paper. What the run's config decides, a caption names in
        braces (`its {confidence} interval`), filled from `caption_values`."""
        return self._captions_file()[0]

    def table_captions(self) -> dict[str, str]:
        """Table name -> its caption as written under `tables:` in the same captions.yml:
        a template of the study's paper (`{{ f.confidence }}`), filled from the paper's
        facts by `parbench paper-fragments`, once for the report table of that name (the
        HTML table's caption and its caption in Snakemake's report) and for the paper's
        table that shows the same (`table_caption(name)` in a template). Figures are
        captioned before any paper is written (the chart, the report), so their captions
        name only the config's values, in single braces."""
        return self._captions_file()[1]

    def _captions_file(self) -> tuple[dict[str, str], dict[str, str]]:
        from parbench.paper.templates import sections_dir

        return read_captions(sections_dir() / self.name / "captions.yml")

    def caption_values(self, cfg: dict) -> dict[str, str]:
        """The words a figure's caption names in braces, as this run's config decides them:
        `confidence`, the level of its intervals (`confidence(cfg)`), where it has one."""
        from parbench.paper.format import fmt_pct

        level = self.confidence(cfg)
        return {} if level is None else {"confidence": fmt_pct(level)}

    def confidence(self, cfg: dict) -> float | None:
        """The level of the intervals the study's tables and figures give (None: none)."""
        return None

    def caption(self, name: str, cfg: dict, values: dict[str, str] | None = None) -> str:
        """A figure's caption, what it names in braces filled for the run's config (or with
        `values`: the paper writes them as its facts)."""
        captions = self.captions()
        if name not in captions:
            raise KeyError(f"{self.name}: the figure {name} has no caption in paper/sections/{self.name}/captions.yml")
        return captions[name].format(**(self.caption_values(cfg) if values is None else values))

    def report_caption(self, name: str, cfg: dict) -> str:
        """A figure's caption in Snakemake's report: its caption, then how the study's cells
        were measured (`MEASURED`)."""
        return "\n\n".join(text for text in (self.caption(name, cfg), self.MEASURED) if text)

    def paper(self) -> "BenchmarkPaper":
        return BenchmarkPaper(self)

    def study(self) -> Study:
        """The record the registry holds."""
        return Study(
            name=self.name, title=self.title, summary=self.summary, cells=self.cells,
            job_seconds=self.job_seconds(), cell_rule=self.cell_rule, header=self.header,
            commands=dict(self.COMMANDS), figure_files=self.figure_files, config_errors=self.config_errors,
            failures=self.failures, system_packages=tuple(self.SYSTEM_PACKAGES), liboqs_ids=self.liboqs_ids,
            liboqs_names=self.liboqs_names, related_tables=self.related_tables,
            complete_schema=self.complete_schema, override_aliases=dict(self.OVERRIDE_ALIASES),
            rerun_tokens=self.rerun_tokens, rerun_names=self.rerun_names, benchmark=self)


def failed_line(cfg: dict, label: str, failure: str, record: str) -> str:
    """`FAILED: <label>: <why>`, and the command that measures it again (its record)."""
    return (f"FAILED: {label}: {failure} (measure it again: snakemake report --configfile "
            f"conf/{cfg['profile']}.yaml --forcerun {record})")


def read_captions(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """A captions file: ({figure name: caption}, {report table name: caption}, the latter
    under its `tables:` key), read again when it changes."""
    figures, tables = _read_captions(path, path.stat().st_mtime_ns)
    return dict(figures), dict(tables)


@functools.lru_cache(maxsize=32)
def _read_captions(path: Path, _mtime_ns: int) -> tuple[tuple, tuple]:
    data = yaml_file.read(path) or {}
    tables = data.pop("tables", None) or {}
    if not isinstance(tables, dict):
        raise ValueError(f"{path}: tables: is a mapping of report table name to caption")
    bad = [name for name, text in [*data.items(), *tables.items()] if not isinstance(text, str)]
    if bad:
        raise ValueError(f"{path}: a caption is one text; {bad[0]} is not")
    return tuple(data.items()), tuple(tables.items())


def _described(benchmark: Benchmark, fig: Figure) -> Callable:
    """The figure's function, its chart described by the figure's caption (filled for the
    run's config, which the machine record, the last argument, holds)."""
    def draw(*args):
        machine = args[-1] if args and isinstance(args[-1], dict) else {}
        caption = benchmark.caption(fig.name, machine.get("config", {}))
        return fig.draw(*args, module=benchmark.FIGURES_MODULE).properties(description=caption)

    return draw


class StudyWithOwnRules(Benchmark):
    """A Benchmark that keeps its own cell rules and commands (`RUNNER_RULES` False; the five
    studies of the paper): its rules file (`workflow/rules/<study>.smk`) has its cells (at
    the paths they had before the runner), its commands hand each cell to the runner. Its
    `plan` module (`PLAN`) holds its sweep, read here: the raw-data layout and its cells
    (`cells`, `cell_records`), what reruns a cell (`cell_parameters`) and how long one
    takes (`cell_estimate_sec`). `CELL_RULES` names the rules that measure its cells and
    the cell class of each (its `from_wildcards`). Its aggregate is the generic rule's, its
    `aggregate` method writing the tables and the seed's own files. Its paper is its own
    module, `parbench.studies.<study>.paper`."""

    RUNNER_RULES = False
    # the study's plan module
    PLAN: ClassVar[Any]
    # rule name -> the cell class of the jobs it runs (`from_wildcards`)
    CELL_RULES: ClassVar[dict[str, type]] = {}

    def cells(self, cfg: dict) -> list:
        return self.PLAN.cells(cfg)

    def cell_rules(self) -> dict[str, Callable]:
        def of(cell_class: type) -> Callable:
            # a job's wildcards as the cell's from_wildcards reads them; `rep` 0 where the
            # rule has none
            return lambda cfg, wc: cell_class.from_wildcards(SimpleNamespace(**{"rep": 0, **wc}))

        return {rule: of(cell_class) for rule, cell_class in self.CELL_RULES.items()}

    def cell_seconds(self, cfg: dict, cell) -> float:
        return self.PLAN.cell_estimate_sec(cfg, cell)

    def aggregate_inputs(self, cfg: dict) -> dict[str, list[str]]:
        return {"records": self.PLAN.cell_records(cfg)}

    def failure_label(self, cell) -> str:
        """The cell's label after the study's name, unless the label begins with it."""
        return cell.label if cell.label.startswith(f"{self.name} ") else f"{self.name} {cell.label}"

    def confidence(self, cfg: dict) -> float | None:
        """The level of the intervals: the study's aggregate's `CONFIDENCE`."""
        return importlib.import_module(f"parbench.studies.{self.name}.aggregate").CONFIDENCE

    def cell_parameters(self, cfg: dict, cell) -> dict:
        return self.PLAN.cell_parameters(cfg, cell)

    def paper(self):
        """The section's facts (`paper.py`, its `facts(f, tables)`); its words are the
        templates of paper/sections/<study>/."""
        return importlib.import_module(f"parbench.studies.{self.name}.paper")


class BenchmarkPaper:
    """A Benchmark as the paper's machinery reads a study's paper module: TABLES, FRAGMENTS,
    REPORT_TABLES, KEYS, NOTE_NAMES, `facts(f, tables)` and `report_tables(tables)`."""

    REPORT_TABLES: tuple = ()

    def __init__(self, benchmark: Benchmark) -> None:
        self.benchmark = benchmark
        self.TABLES = benchmark.table_names()
        self.FRAGMENTS = list(benchmark.FRAGMENTS)
        self.KEYS = dict(benchmark.KEYS)
        self.NOTE_NAMES = dict(benchmark.NOTE_NAMES)
        self.facts = benchmark.facts

    def report_tables(self, tables: dict) -> dict:
        """{REPORT_TABLES name: frame}; a Benchmark's paper has none."""
        return {}
