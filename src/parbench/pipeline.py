"""What the Snakefile calls into: loading the config, the environment jobs inherit, and
the run's header, time estimate and closing summary."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from parbench import config as pbconfig
from parbench import paths
from parbench.sched import plan as schedplan
from parbench.sigpar import plan as sigplan
from parbench.sigpar.run_cell import RUN_ESTIMATE_ENV, RUN_ID_ENV, RUN_STARTED_ENV

# Seconds a job other than a measured cell takes, for the estimate: the liboqs build
# (a fixed part plus a part per algorithm), and anything else (aggregation, figures,
# the paper).
LIBOQS_BUILD_SEC = (15.0, 4.0)
OTHER_JOB_SEC = 2.0
# Seconds to build the schedulers' driver from scratch (make is incremental).
SCHED_BUILD_SEC = 20.0


def _sched_cell_sec(cfg: dict, wildcards: dict) -> float:
    cell = schedplan.SchedCell(wildcards["workload"], wildcards["scheduler"], int(wildcards["threads"]))
    return schedplan.cell_estimate_sec(cfg, cell)


# Rules whose jobs are measurements: seconds one job takes, from the config and the
# job's wildcards.
CELL_RULES = {
    "sigpar_cell": lambda cfg, wildcards: sigplan.cell_estimate_sec(cfg),
    "sched_cell": _sched_cell_sec,
}


def export_environment(basedir: str) -> None:
    """Jobs resolve conf/, workflow/ and native/ against this checkout and import the
    package from its src/ (also inside a conda environment that does not install it)."""
    os.environ["PARBENCH_ROOT"] = str(basedir)
    src = str(Path(basedir) / "src")
    current = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = src if not current else os.pathsep.join([src, current])


def load_config(cli_configfiles, overrides) -> dict:
    """The composed, validated config for the profile named by the last --configfile
    (default: local). Raises ConfigError."""
    files = list(cli_configfiles or [])
    profile = pbconfig.profile_from_path(files[-1]) if files else pbconfig.DEFAULT_PROFILE
    return pbconfig.load(profile, list(overrides or []))


def run_estimate_sec(cfg: dict, jobs: list[tuple[str, dict]], n_liboqs: int) -> float:
    """Seconds the given (rule name, wildcards) jobs take, by the profile's figures."""
    seconds = 0.0
    for name, wildcards in jobs:
        if name in CELL_RULES:
            seconds += CELL_RULES[name](cfg, wildcards)
        elif name == "liboqs":
            seconds += LIBOQS_BUILD_SEC[0] + LIBOQS_BUILD_SEC[1] * n_liboqs
        elif name == "sched_build":
            seconds += SCHED_BUILD_SEC
        elif name not in ("all", "report"):
            seconds += OTHER_JOB_SEC
    return seconds


def start_run(cfg: dict, jobs: list[tuple[str, dict]], n_liboqs: int, overrides: list[str],
              out=sys.stdout) -> None:
    """Print the run's header (the seed's, extended) and export what cells need to
    report progress and to skip an algorithm after a failure."""
    from parbench.telemetry import capabilities

    estimate = run_estimate_sec(cfg, jobs, n_liboqs)
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p("=" * 80)
    p(f"parbench: profile {cfg['profile']} ({cfg['description']})")
    if overrides:
        p(f"Overrides: {' '.join(overrides)}")
    p(f"Started at: {time.strftime('%Y-%m-%d %H:%M:%S')}")
    names = [name for name, _ in jobs]
    if "sigpar" in cfg["studies"]:
        sp = cfg["sigpar"]
        todo = names.count("sigpar_cell")
        total = len(sigplan.cells(cfg))
        named = sp["algorithm_set"]["name"] if sp["algorithms"] == sp["algorithm_set"]["names"] else "custom list"
        p()
        p(f"PARALLELISM THROUGHPUT BENCHMARK (sigpar) - modes: {', '.join(sp['modes'])}")
        p(f"Testing {len(sp['algorithms'])} algorithms ({named})")
        p(f"Worker counts: {sorted(sp['workers'])}")
        p(f"Duration per config: {sp['duration_sec']:g}s (analysis window: {sp['analysis_window_sec']:g}s, "
          f"warmup: {sp['warmup_sec']:g}s)")
        p(f"Cells to measure: {todo} of {total} ({total - todo} already measured)")
        p(f"Measuring time: ~{sigplan.format_duration(sigplan.estimate_sec(cfg, todo))} "
          f"({sigplan.format_duration(sigplan.cell_estimate_sec(cfg))} per cell)")
    if "sched" in cfg["studies"]:
        sc = cfg["sched"]
        todo = [w for name, w in jobs if name == "sched_cell"]
        total = len(schedplan.cells(cfg))
        p()
        p(f"SCHEDULER BENCHMARK (sched) - quicksort of {sc['quicksort']['size']:,} ints, "
          f"Mandelbrot {sc['mandelbrot']['width']}x{sc['mandelbrot']['height']}")
        p(f"Schedulers: sequential, {', '.join(sc['schedulers'])}; peers: {', '.join(sc['peers']) or 'none'}")
        p(f"Thread counts: {sorted(sc['threads'])}; repetitions: {sc['repetitions']}, "
          f"frames: {sc['mandelbrot']['frames']}")
        p(f"Cells to measure: {len(todo)} of {total} ({total - len(todo)} already measured), "
          f"~{sigplan.format_duration(sum(_sched_cell_sec(cfg, w) for w in todo))}")
    p()
    p(f"Estimated total time: ~{sigplan.format_duration(estimate)} for {len(jobs)} jobs")
    for warning in capabilities.warnings(capabilities.probe(cfg["telemetry"])):
        p(f"warning: {warning}")
    p("=" * 80)
    out.flush()
    os.environ[RUN_ID_ENV] = f"{time.time():.6f}-{os.getpid()}"
    os.environ[RUN_STARTED_ENV] = str(time.time())
    os.environ[RUN_ESTIMATE_ENV] = str(estimate)


def finish_run(cfg: dict, out=sys.stdout) -> None:
    """Print how long the run took against its estimate, and every failure of this run."""
    run_id = os.environ.get(RUN_ID_ENV)
    failures = []
    for path in sorted(Path(paths.SIGPAR_RAW.format(profile=cfg["profile"]), "failures").glob("*.json")):
        record = json.loads(path.read_text())
        if record.get("run_id") == run_id:
            failures.append(record)
    started = float(os.environ.get(RUN_STARTED_ENV, time.time()))
    estimate = float(os.environ.get(RUN_ESTIMATE_ENV, 0))
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p("=" * 80)
    p(f"parbench: finished in {sigplan.format_duration(time.time() - started)} "
      f"(estimated ~{sigplan.format_duration(estimate)})")
    for f in failures:
        algorithm = f["cell"].split()[0]
        p(f"FAILED: {f['cell']}: {f['failure']}")
        p(f"  its remaining cells were skipped; after fixing, rerun: make rerun ALG={algorithm} PROFILE={cfg['profile']}")
    if Path(paths.PAPER_OUTPUT).exists():
        p(f"paper: {paths.PAPER_OUTPUT}")
    p("=" * 80)
    out.flush()
