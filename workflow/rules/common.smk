# Loads and validates the config before any job starts; holds the names, input functions
# and run hooks the rules share. Studies are known only through the registry
# (src/parbench/studies/__init__.py): each active study's rules are in
# workflow/rules/<study>.smk. The Python behind this file is src/parbench/pipeline.py.

import mimetypes
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

from parbench import config as pbconfig
from parbench import locks, paths, pipeline, studies

pipeline.export_environment(workflow.basedir)
pipeline.export_cores(workflow)
# A run killed outright (SIGKILL) leaves Snakemake's lock: remove it when no Snakemake works
# in the checkout, so that `snakemake report` resumes as `make paper` does (this runs
# before Snakemake checks its lock); keep it, naming the working one, when one does.
locks.resume_in_snakemake(workflow)

OVERRIDES = list(config.get("overrides", []))
try:
    PB = pipeline.load_config(workflow.overwrite_configfiles, OVERRIDES)
except pbconfig.ConfigError as exc:
    raise WorkflowError(f"parbench: {exc}") from None

PROFILE = PB["profile"]
# The studies this run measures, in paper order.
STUDIES = studies.active(PB)
# Every rule documents its software stack with the conda environment of the project;
# `snakemake --use-conda` builds it from environment.yml.
CONDA_ENV = str(Path(workflow.basedir) / "environment.yml")
# The interpreter that runs the jobs: this one, or the conda environment's.
_use_conda = any("CONDA" in str(m).upper() for m in workflow.deployment_settings.deployment_method)
PYTHON = "python" if _use_conda else sys.executable
PARBENCH = f"{PYTHON} -m parbench"
OVERRIDE_ARGS = " ".join(shlex.quote(o) for o in OVERRIDES)

RAW = paths.RAW.format(profile=PROFILE)
PROCESSED = paths.PROCESSED.format(profile=PROFILE)
FIGURES = paths.FIGURES.format(profile=PROFILE)
PAPER_FIGURES = paths.PAPER_FIGURES.format(profile=PROFILE)
LOGS = paths.LOGS.format(profile=PROFILE)
MACHINE = f"{PROCESSED}/machine.json"

# liboqs: one build with exactly the algorithms the run's studies need.
LIBOQS_IDS = pipeline.liboqs_ids(PB)
LIBOQS_DIR = paths.liboqs_build_dir(LIBOQS_IDS) if LIBOQS_IDS else None
LIBOQS = f"{LIBOQS_DIR}/liboqs.json" if LIBOQS_DIR else None

# Every build of the run: build.smk adds liboqs, each study's rules file its own native
# code. Every measured job waits for all of them (rule builds_done, input BUILDS_DONE), so
# that no cell shares the machine with a build and the cells follow the planned order.
BUILDS = []
BUILDS_DONE = f"{RAW}/builds.json"


def after_builds():
    """The input a measured job takes to start only once every build is done; ancient:
    a rebuilt library alone does not measure the job again."""
    return ancient(BUILDS_DONE)


# Cells run in the planned order (parbench.pipeline.run_order: repetition by repetition,
# the cells of all studies shuffled together): higher priority first. Jobs every cell
# waits for (the builds, the machine probe, sweep tokens) go before them all.
CELL_PRIORITY = pipeline.cell_priorities(PB)
FIRST_PRIORITY = len(CELL_PRIORITY) + 2


def cell_priority(study, cell):
    return CELL_PRIORITY.get((study, cell), 0)


# --- figures, the paper and Snakemake's report ------------------------------------------------

# Snakemake's report offers Parquet tables for download under their real type.
mimetypes.add_type("application/vnd.apache.parquet", ".parquet")


def report_category(study):
    """A study's category in Snakemake's report: its title, numbered in paper order (the
    report lists categories by name)."""
    return f"{studies.names().index(study) + 1}. {studies.get(study).title}"



# A report label's format, by the file's extension.
TABLE_FORMATS = {"parquet": "Parquet", "csv": "CSV", "txt": "text", "md": "Markdown", "html": "HTML"}


def table_caption(study, file):
    """The caption of a study's processed file in Snakemake's report, relative to the
    rules: workflow/report/<study>/<stem without the study's prefix>.rst; every
    `<study>_load` table shares workflow/report/load.rst."""
    stem = file.rsplit(".", 1)[0]
    if stem == f"{study}_load":
        return "../report/load.rst"
    return f"../report/{study}/{stem.removeprefix(f'{study}_')}.rst"


def table_report(study, file, seed=False, label=None, caption=None):
    """A processed file of the study (data/processed/<profile>/<file>) registered in
    Snakemake's report with the study's tables, captioned by `table_caption` unless
    `caption` names another (`seed`: a file in the seed's own format, so labelled;
    `label`: another label)."""
    stem, ext = file.rsplit(".", 1)
    return report(
        f"{PROCESSED}/{file}",
        caption=caption or table_caption(study, file),
        category=report_category(study),
        subcategory="Tables",
        labels={"table": label or (f"{stem} (the seed's format)" if seed else stem), "format": TABLE_FORMATS[ext]},
    )


def figure_outputs(study):
    """Every figure of a study, as the SVG files the paper embeds: the copies inside the
    Quarto project (rule paper_figure)."""
    return [f"{PAPER_FIGURES}/{name}.svg" for name in studies.get(study).figures()]


def paper_figure_constraint():
    """Every figure of the run's studies."""
    return "|".join(name for study in STUDIES for name in study.figures())


def figure_inputs(study):
    """Input function: the tables (and files) a figure of `study` draws from."""
    return lambda wildcards: studies.get(study).figure_inputs(wildcards.figure, PROFILE, PROCESSED)


def figure_constraint(study):
    return "|".join(studies.get(study).figures())


def paper_tables(study):
    """The processed tables a study's generated paper text reads."""
    return [f"{PROCESSED}/{name}.parquet" for name in studies.get(study).paper().TABLES]


def all_paper_tables():
    """Every active study's paper tables: the Method section names the machines their
    cells ran on."""
    return [table for study in STUDIES for table in paper_tables(study.name)]


def paper_fragments(study):
    """A study's generated parts and its facts (paper/_generated/<study>/)."""
    return [paths.paper_fragment(study, name) for name in studies.get(study).paper().FRAGMENTS] + [
        f"{paths.PAPER_GENERATED}/{study}/facts.json"]


def paper_templates(folder):
    """The templates of a study's generated parts (paper/sections/<study>/) and its figures'
    captions (captions.yml), or the shared templates (paper/sections/shared/): a change
    writes the parts again."""
    own = Path(paths.PAPER_SECTIONS, folder)
    return sorted(str(p) for p in [*own.glob("*.md"), *own.glob("captions.yml")]) + sorted(
        str(p) for p in Path(paths.PAPER_SECTIONS, "shared").glob("*.md") if folder != "shared")


def report_tables(study):
    """The study's paper tables as HTML (shown by Snakemake's report), CSV, and the RST
    of their captions in the report."""
    names = studies.get(study).paper().REPORT_TABLES
    return {f"{name}_{ext}": f"{PROCESSED}/tables/{name}.{ext}" for name in names for ext in ("html", "csv", "rst")}


def paper_inputs():
    """Everything the rendered paper is made of: each study's section and generated parts."""
    inputs = []
    for study in STUDIES:
        inputs += [paths.paper_section(study.name), *paper_fragments(study.name)]
    return inputs


# --- the run's header and summary ----------------------------------------------------------------


def jobs_to_run():
    """(rule name, wildcards) of the jobs this run executes, asked of the DAG once built."""
    try:
        return [(job.rule.name, dict(job.wildcards_dict)) for job in workflow.dag.needrun_jobs()]
    except AttributeError:
        return []


def failed_jobs():
    """(rule, wildcards, command, logs) of each job that failed in this run; under a
    cluster executor the logs include its log of the job (why SLURM ended it)."""
    scheduler = getattr(workflow, "scheduler", None)
    executor = getattr(getattr(workflow, "executor_plugin", None), "name", None)
    return [
        (job.rule.name, dict(job.wildcards_dict), getattr(job, "shellcmd", None) or "",
         [str(f) for f in job.log] + pipeline.executor_logs(executor, job.rule.name, list(job.wildcards)))
        for job in sorted(getattr(scheduler, "failed", ()), key=lambda j: j.rule.name)
    ]


# The console: the run's header, each cell's line, the summary (profiles/default quiets
# Snakemake's job blocks; its own log keeps everything).
pipeline.quiet_scheduler()
# A dry run (`snakemake -n`) calls no onstart: its plan prints the same header.
pipeline.print_plan_on_dry_run(workflow, lambda: pipeline.start_run(PB, jobs_to_run(), OVERRIDES, plan_only=True))


onstart:
    pipeline.start_run(PB, jobs_to_run(), OVERRIDES)


onsuccess:
    pipeline.finish_run(PB)


onerror:
    pipeline.explain_failures(failed_jobs())
    print(
        f"parbench: the run stopped with an error; each failed job's log is under {LOGS}/ "
        "and finished cells keep their results (run the same command again to resume).",
        file=sys.stderr,
    )
