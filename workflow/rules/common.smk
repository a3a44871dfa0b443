# Loads and validates the config before any job starts; holds the input functions
# and names the rules share. The Python behind them is in src/parbench/pipeline.py.

import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

from parbench import config as pbconfig
from parbench import paths, pipeline
from parbench.figures import registry as figure_registry
from parbench.sched import plan as schedplan
from parbench.sigpar import plan as sigplan
from parbench.sigpar.algorithms import get as get_algorithm
from parbench.sigpar.algorithms import liboqs_cmake_ids

pipeline.export_environment(workflow.basedir)

OVERRIDES = list(config.get("overrides", []))
try:
    PB = pipeline.load_config(workflow.overwrite_configfiles, OVERRIDES)
except pbconfig.ConfigError as exc:
    raise WorkflowError(f"parbench: {exc}") from None

PROFILE = PB["profile"]
STUDIES = PB["studies"]
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
LOGS = paths.LOGS.format(profile=PROFILE)

# --- sigpar ---------------------------------------------------------------------------------

SIGPAR = "sigpar" in STUDIES
SIGPAR_CELLS = sigplan.cells(PB) if SIGPAR else []
SIGPAR_ALGORITHMS = PB["sigpar"]["algorithms"] if SIGPAR else []
SIGPAR_MODES = PB["sigpar"]["modes"] if SIGPAR else []
SIGPAR_STEM = paths.SIGPAR_CELL.format(
    profile=PROFILE,
    mode="{mode}",
    algorithm="{algorithm}",
    operation="{operation}",
    workers="{workers}",
)

# liboqs: built with exactly the post-quantum algorithms the config names.
LIBOQS_IDS = liboqs_cmake_ids(SIGPAR_ALGORITHMS)
LIBOQS_DIR = paths.liboqs_build_dir(LIBOQS_IDS) if LIBOQS_IDS else None


wildcard_constraints:
    algorithm=r"[A-Za-z0-9+\-]+",
    operation="sign|verify",
    mode="threading|multiprocess",
    workers=r"\d+",
    workload="quicksort|mandelbrot",
    scheduler="|".join(schedplan.SCHEDULER_ORDER),
    threads=r"\d+",


def sigpar_cell_of(wildcards):
    return sigplan.Cell(
        wildcards.algorithm, wildcards.operation, wildcards.mode, int(wildcards.workers)
    )


def sigpar_cell_inputs(wildcards):
    """A cell needs its algorithm's sweep token and, for post-quantum ones, liboqs."""
    inputs = {
        "sweep": paths.SIGPAR_SWEEP.format(profile=PROFILE, algorithm=wildcards.algorithm)
    }
    if get_algorithm(wildcards.algorithm).library == "liboqs":
        inputs["liboqs"] = f"{LIBOQS_DIR}/liboqs.json"
    return inputs


def sigpar_liboqs_arg(wildcards, input):
    return f"--liboqs {Path(input.liboqs).parent}" if "liboqs" in input.keys() else ""


# --- sched ----------------------------------------------------------------------------------

SCHED = "sched" in STUDIES
SCHED_CELLS = schedplan.cells(PB) if SCHED else []
SCHED_STEM = paths.SCHED_CELL.replace("{threads:02d}", "{threads}").format(
    profile=PROFILE, workload="{workload}", scheduler="{scheduler}", threads="{threads}"
)


# what the driver is compiled from: a change to any of them rebuilds it (and so reruns
# the sched cells); the C tests and docs are not among them
SCHED_SOURCES = ["native/sched/Makefile"] + sorted(
    str(p)
    for d in ("lib", "workloads", "driver")
    for p in Path("native/sched", d).rglob("*")
    if p.is_file()
)


def sched_cell_of(wildcards):
    return schedplan.SchedCell(wildcards.workload, wildcards.scheduler, int(wildcards.threads))


def sched_cell_records():
    return [c.outputs(PROFILE)["record"] for c in SCHED_CELLS]


# Cells run in the seed's order, study by study (sigpar: algorithm by algorithm, sign
# then verify, ascending workers; sched: workload by workload, scheduler by scheduler,
# ascending threads): higher priority first. An algorithm's aggregation shares its
# last cell's priority, so its console block follows right after its cells.
_ORDER = [("sigpar", c) for c in SIGPAR_CELLS] + [("sched", c) for c in SCHED_CELLS]
_PRIORITY = {key: len(_ORDER) - i for i, key in enumerate(_ORDER)}
_SIGPAR_PRIORITY = {c: p for (study, c), p in _PRIORITY.items() if study == "sigpar"}


def sigpar_cell_priority(wildcards):
    return _PRIORITY.get(("sigpar", sigpar_cell_of(wildcards)), 0)


def sched_cell_priority(wildcards):
    return _PRIORITY.get(("sched", sched_cell_of(wildcards)), 0)


def sigpar_algorithm_priority(wildcards):
    return min(
        p for c, p in _SIGPAR_PRIORITY.items() if c.algorithm == wildcards.algorithm
    )


def sigpar_cell_records(algorithm=None):
    return [
        c.outputs(PROFILE)["cell"]
        for c in SIGPAR_CELLS
        if algorithm is None or c.algorithm == algorithm
    ]


# --- figures and paper ------------------------------------------------------------------------

FIGURE_SPECS = figure_registry()
# the figures of the studies this run measures
FIGURE_NAMES = [name for name in FIGURE_SPECS if name.split("_")[0] in STUDIES]


# figure inputs that are not tables of data/processed/
FIGURE_FILES = {"sched_image": paths.SCHED_IMAGE.format(profile=PROFILE)}


def figure_tables(wildcards):
    _, inputs = FIGURE_SPECS[wildcards.figure]
    return [FIGURE_FILES.get(name, f"{PROCESSED}/{name}.parquet") for name in inputs]


def paper_tables():
    tables = [f"{PROCESSED}/sigpar_cells.parquet"] if SIGPAR else []
    if SCHED:
        tables += [f"{PROCESSED}/sched_summary.parquet", f"{PROCESSED}/sched_runs.parquet"]
    return tables


def paper_outputs():
    return [paths.PAPER_OUTPUT]


# --- the run's header and summary ----------------------------------------------------------------


def jobs_to_run():
    """(rule name, wildcards) of the jobs this run executes, asked of the DAG once built."""
    try:
        return [(job.rule.name, dict(job.wildcards_dict)) for job in workflow.dag.needrun_jobs()]
    except AttributeError:
        return []


onstart:
    pipeline.start_run(PB, jobs_to_run(), len(LIBOQS_IDS), OVERRIDES)


onsuccess:
    pipeline.finish_run(PB)


onerror:
    print(
        f"parbench: the run stopped with an error; each failed job's log is under {LOGS}/ "
        "and finished cells keep their results (run the same command again to resume).",
        file=sys.stderr,
    )
