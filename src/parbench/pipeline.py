"""What the Snakefile calls into: loading the config, the environment jobs inherit, the
order of the cells, and the run's header, time estimate and closing summary. Studies
are known only through the registry (parbench.studies)."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import random
import re
import sys
import time
from pathlib import Path
from typing import Callable

from parbench import config as pbconfig
from parbench import paths, records, studies
from parbench.progress import RUN_ESTIMATE_ENV, RUN_ID_ENV, RUN_STARTED_ENV, format_duration

# Seconds a job takes that no study names: the liboqs build (a fixed part plus a part
# per algorithm), and anything else (aggregation, figures, the paper).
LIBOQS_BUILD_SEC = (15.0, 4.0)
OTHER_JOB_SEC = 2.0
# Rules that only copy a file (the paper's copies of its figures), and their seconds
# (25 copies took 2.1 s in all on the project's 2-core VM).
COPY_RULES = ("paper_figure",)
COPY_JOB_SEC = 0.1
# Rules that only gather other jobs' outputs.
TARGET_RULES = ("all", "report")


def export_environment(basedir: str) -> None:
    """Jobs resolve conf/, workflow/ and native/ against this checkout and import the
    package from its src/ (also inside a conda environment that does not install it)."""
    os.environ["PARBENCH_ROOT"] = str(basedir)
    src = str(Path(basedir) / "src")
    current = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = src if not current else os.pathsep.join([src, current])


# The cores this Snakemake run was given: what a job that claims every core (each study's
# cells, the builds) asks for as its threads. Exported for resource expressions: the SLURM
# profile gives such jobs a node of their own (`--exclusive`) without naming their rules.
CORES_ENV = "PARBENCH_CORES"


def export_cores(workflow) -> None:
    """Export the run's cores as $PARBENCH_CORES (nothing when the run names none, e.g.
    `--workflow-profile none` without -c: rules that claim every core fail then anyway)."""
    try:
        cores = workflow.cores
    except Exception:  # snakemake's WorkflowError: no --cores given
        return
    os.environ[CORES_ENV] = str(cores)


class SchedulerChatter(logging.Filter):
    """Drops Snakemake's "Select jobs to execute..." and "Execute N jobs..." lines: with
    the profile's `quiet`, the console then holds the run's header, each cell's line
    and the summary (everything stays in Snakemake's own log)."""

    _CHATTER = re.compile(r"^(Select jobs to execute\.\.\.|Execute \d+ jobs\.\.\.)$")

    def filter(self, record: logging.LogRecord) -> bool:
        return not self._CHATTER.match(str(record.msg))


def quiet_scheduler() -> None:
    logging.getLogger("snakemake.logging").addFilter(SchedulerChatter())
    daemon_scheduler_timers()


def daemon_scheduler_timers() -> None:
    """Snakemake's scheduler wakes itself with a `threading.Timer` of the job rate limit's
    timespan (the workflow profile's `max-jobs-per-timespan`, long, so that it never wakes
    beside a measured cell); such a timer, not a daemon thread, would keep the finished
    run's process alive until it fires. Its timers are made daemon threads instead."""
    import threading
    import types

    try:
        from snakemake.scheduling import job_scheduler
    except ImportError:
        return
    if not isinstance(getattr(job_scheduler, "threading", None), types.ModuleType):
        return

    class DaemonTimer(threading.Timer):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.daemon = True

    proxy = types.ModuleType("threading")
    proxy.__dict__.update(threading.__dict__)
    proxy.Timer = DaemonTimer
    job_scheduler.threading = proxy


class DryRunPlan(logging.Filter):
    """What `snakemake -n` prints: Snakemake calls no onstart in a dry run, so the run's
    header (each study's sweep, the cells to measure, the estimate) is printed here, when
    Snakemake logs its job summary ("Job stats": the DAG is built then), before it. The
    profile's `quiet` hides that summary (progress), so the plan then prints it too: the
    jobs per rule. Only the first summary, and only in a dry run."""

    def __init__(self, workflow, header: Callable[[], None], out=None):
        super().__init__()
        self.workflow = workflow
        self.header = header
        self.out = out
        self.printed = False

    def filter(self, record: logging.LogRecord) -> bool:
        from snakemake.settings.enums import Quietness
        from snakemake_interface_logger_plugins.common import LogEvent

        if self.printed or getattr(record, "event", None) != LogEvent.RUN_INFO or not self.workflow.dryrun:
            return True
        self.printed = True
        out = self.out or sys.stdout
        self.header()
        if Quietness.PROGRESS in (self.workflow.output_settings.quiet or ()):
            print(record.getMessage(), file=out, flush=True)
        return True


def print_plan_on_dry_run(workflow, header: Callable[[], None]) -> None:
    logging.getLogger("snakemake.logging").addFilter(DryRunPlan(workflow, header))


# Where Snakemake's SLURM executor writes each job's sbatch log (kept for failed jobs).
SLURM_LOGS = Path(".snakemake/slurm_logs")


def executor_logs(executor: str | None, rule: str, wildcards: list[str], root: Path = SLURM_LOGS) -> list[str]:
    """The newest log a cluster executor kept of a failed job, where the scheduler says
    why the job ended (SLURM: "*** JOB 5 ON node1 CANCELLED AT ... ***", "... DUE TO TIME
    LIMIT ***"), which the job's own log cannot say. Snakemake's SLURM executor writes it
    to `.snakemake/slurm_logs/rule_<rule>/<wildcard values joined by _>/<job id>.log`.
    None for other executors (a local job's own log says everything)."""
    if executor != "slurm":
        return []
    folder = root / f"rule_{rule}" / "_".join(wildcards).replace("/", "_")
    logs = sorted(folder.glob("*.log"), key=lambda p: p.stat().st_mtime)
    return [str(logs[-1])] if logs else []


def explain_failures(failed: list[tuple[str, dict, str, list[str]]], out=None, tail_lines: int = 15) -> None:
    """For each failed job (rule, wildcards, command, log files): what failed, the
    command, where its log is and the log's last lines - what Snakemake's quieted job
    blocks would have shown."""
    out = out or sys.stderr
    for rule, wildcards, command, logs in failed:
        where = " ".join(f"{k}={v}" for k, v in wildcards.items())
        print(f"parbench: job {rule}{' (' + where + ')' if where else ''} failed", file=out)
        if command:
            print(f"  command: {' '.join(command.split())}", file=out)
        for log in logs:
            print(f"  log: {log}", file=out)
            try:
                lines = Path(log).read_text(errors="replace").rstrip().splitlines()[-tail_lines:]
            except OSError:
                print("    (the log was not written)", file=out)
                continue
            for line in lines:
                print(f"    | {line}", file=out)
    out.flush()


def load_config(cli_configfiles, overrides) -> dict:
    """The composed, validated config for the profile named by the last --configfile
    (default: local). Raises ConfigError."""
    files = list(cli_configfiles or [])
    profile = pbconfig.profile_from_path(files[-1]) if files else pbconfig.DEFAULT_PROFILE
    return pbconfig.load(profile, list(overrides or []))


def liboqs_ids(cfg: dict) -> list[str]:
    """The liboqs build ids every study of the run needs, sorted: one shared build."""
    return sorted({i for study in studies.active(cfg) for i in study.liboqs_ids(cfg)})


ORDER_RULE = ("repetition by repetition across every study of the run, each repetition's cells "
              "shuffled together with random.Random(f'{seed}/{rep}')")


def run_order(cfg: dict) -> list[tuple[str, object]]:
    """(study name, cell) of every cell in the order the run measures them: repetition by
    repetition (every cell of every study once, then every repeated cell again), each
    repetition's cells of all studies shuffled together with a generator drawn from
    `run_order_seed`. Drift of the machine (heat, other tenants) then hits every study,
    mode, backend and worker count alike, instead of one study's or one backend's block.

    A cell without a repetition index counts as repetition 0. The order holds in the run
    only because every cell also waits for every build of the run (rule builds_done):
    otherwise the cells that need no build would run first."""
    seed = cfg.get("run_order_seed", 0)
    by_rep: dict[int, list[tuple[str, object]]] = {}
    for study in studies.active(cfg):
        for cell in study.cells(cfg):
            by_rep.setdefault(getattr(cell, "rep", 0), []).append((study.name, cell))
    order = []
    for rep in sorted(by_rep):
        batch = by_rep[rep]
        random.Random(f"{seed}/{rep}").shuffle(batch)
        order += batch
    return order


def planned_position(cfg: dict, study: str, cell) -> int | None:
    """Where a cell stands in the planned order (from 0), recorded with its measurement:
    a run's records, sorted by when they started, then show whether the run kept it."""
    try:
        return run_order(cfg).index((study, cell))
    except ValueError:
        return None


def cell_priorities(cfg: dict) -> dict[tuple[str, object], int]:
    """(study name, cell) -> Snakemake priority: cells run in `run_order`, the first
    highest."""
    order = run_order(cfg)
    return {key: len(order) - i for i, key in enumerate(order)}


def write_run_order(cfg: dict, jobs: list[tuple[str, dict]], run_id: str | None) -> Path | None:
    """Record the planned order of this run's cells, with its seed, in
    data/raw/<profile>/run_order/<run id>.json (one file per run, never overwritten)."""
    order = run_order(cfg)
    if not order:
        return None
    folder = Path(paths.RAW.format(profile=cfg["profile"])) / "run_order"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = run_id or time.strftime("%Y%m%dT%H%M%S")
    doc = {"run_id": run_id, "seed": cfg.get("run_order_seed", 0),
           "rule": ORDER_RULE,
           "cells": [{"study": study, "cell": _plain_cell(cell)} for study, cell in order]}
    path = folder / f"{stamp}.json"
    records.write_atomic(path, json.dumps(doc, indent=1) + "\n")
    return path


def _plain_cell(cell) -> object:
    if dataclasses.is_dataclass(cell):
        return dataclasses.asdict(cell)
    return cell if isinstance(cell, (str, int, float, dict, list)) else str(cell)


def run_estimate_sec(cfg: dict, jobs: list[tuple[str, dict]]) -> float:
    """Seconds the given (rule name, wildcards) jobs take, by the profile's figures."""
    per_rule = {rule: fn for study in studies.active(cfg) for rule, fn in study.job_seconds.items()}
    n_liboqs = len(liboqs_ids(cfg))
    seconds = 0.0
    for name, wildcards in jobs:
        if name in per_rule:
            seconds += per_rule[name](cfg, wildcards)
        elif name == "liboqs":
            seconds += LIBOQS_BUILD_SEC[0] + LIBOQS_BUILD_SEC[1] * n_liboqs
        elif name in COPY_RULES:
            seconds += COPY_JOB_SEC
        elif name not in TARGET_RULES:
            seconds += OTHER_JOB_SEC
    return seconds


def start_run(cfg: dict, jobs: list[tuple[str, dict]], overrides: list[str], out=None,
              plan_only: bool = False) -> None:
    """Print the run's header (each study's, the seed's style) and export what cells need
    to report progress and to skip an algorithm after a failure. `plan_only` (a dry run):
    the header only."""
    from parbench.telemetry import capabilities

    estimate = run_estimate_sec(cfg, jobs)
    out = out or sys.stdout
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p("=" * 80)
    p(f"parbench: profile {cfg['profile']} ({cfg['description']})")
    if overrides:
        p(f"Overrides: {' '.join(overrides)}")
    p("Plan only (dry run): nothing is measured" if plan_only else f"Started at: {time.strftime('%Y-%m-%d %H:%M:%S')}")
    for study in studies.active(cfg):
        p()
        for line in study.header(cfg, jobs):
            p(line)
    p()
    p(f"Cells start once every build is done, then run repetition by repetition, the cells of all studies "
      f"shuffled together (run_order_seed {cfg.get('run_order_seed', 0)}; the order is kept in "
      f"{paths.RAW.format(profile=cfg['profile'])}/run_order/)")
    p(f"Estimated total time: ~{format_duration(estimate)} for {len(jobs)} jobs")
    for warning in capabilities.warnings(capabilities.probe(cfg["telemetry"])):
        p(f"warning: {warning}")
    p("=" * 80)
    out.flush()
    if plan_only:
        return
    os.environ[RUN_ID_ENV] = f"{time.time():.6f}-{os.getpid()}"
    os.environ[RUN_STARTED_ENV] = str(time.time())
    os.environ[RUN_ESTIMATE_ENV] = str(estimate)
    if any(name in {study.cell_rule for study in studies.active(cfg)} for name, _ in jobs):
        write_run_order(cfg, jobs, time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}")


def finish_run(cfg: dict, out=None) -> None:
    """Print how long the run took against its estimate, and every failure of this run."""
    run_id = os.environ.get(RUN_ID_ENV)
    started = float(os.environ.get(RUN_STARTED_ENV, time.time()))
    estimate = float(os.environ.get(RUN_ESTIMATE_ENV, 0))
    out = out or sys.stdout
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p("=" * 80)
    p(f"parbench: finished in {format_duration(time.time() - started)} (estimated ~{format_duration(estimate)})")
    for study in studies.active(cfg):
        for line in study.failures(cfg, run_id):
            p(line)
    for paper in (paths.PAPER_OUTPUT, paths.PAPER_PDF):
        if Path(paper).exists():
            p(f"paper: {paper}")
    p("=" * 80)
    out.flush()
