"""Every path the pipeline reads or writes, in one place (relative to the repo root,
which is Snakemake's working directory). Measured data is partitioned by profile, so
runs of different profiles never overwrite each other."""

from __future__ import annotations

import hashlib

RAW = "data/raw/{profile}"
PROCESSED = "data/processed/{profile}"
FIGURES = "figures/{profile}"
LOGS = "logs/{profile}"
PAPER_DIR = "paper"
PAPER_GENERATED = "paper/_generated"
PAPER_OUTPUT = "paper/_output/index.html"
LIBOQS_BUILD = "native/build/liboqs/{key}"

# sigpar: the seed's raw layout, one folder per mode.
SIGPAR_RAW = RAW + "/parallelism"
SIGPAR_CELL = SIGPAR_RAW + "/{mode}/{algorithm}_{operation}_t{workers}"
SIGPAR_SWEEP = SIGPAR_RAW + "/sweeps/{algorithm}.json"
SIGPAR_HISTORY = SIGPAR_RAW + "/history"


def liboqs_build_dir(cmake_ids: list[str]) -> str:
    """The build folder of a liboqs with exactly these algorithms: a change of the list
    is a new folder (a new build); profiles needing the same list share one."""
    key = hashlib.sha256(";".join(sorted(cmake_ids)).encode()).hexdigest()[:12]
    return LIBOQS_BUILD.format(key=key)

# sched: one folder per workload, one record per (scheduler, threads).
SCHED_RAW = RAW + "/sched"
SCHED_CELL = SCHED_RAW + "/{workload}/{scheduler}_t{threads:02d}"
SCHED_IMAGE = SCHED_RAW + "/mandelbrot/sched_image.ppm"
SCHED_BUILD = "native/build/sched"
SCHED_DRIVER = SCHED_BUILD + "/parbench-sched"
SCHED_PEERS = SCHED_BUILD + "/peers.json"
