"""What every study's console output shares: the run's identity and time estimate,
which the pipeline exports before the first job, and the seed's duration style.

`parbench.pipeline.start_run` sets the variables; each cell command reads them to
print its elapsed time against the estimate and to know which failures belong to the
current run.
"""

from __future__ import annotations

import os
import time

RUN_ID_ENV = "PARBENCH_RUN_ID"
RUN_STARTED_ENV = "PARBENCH_RUN_STARTED"
RUN_ESTIMATE_ENV = "PARBENCH_RUN_ESTIMATE_SEC"


def format_duration(seconds: float) -> str:
    """`3m02s`, `45s`, `1h05m`: the seed's console style."""
    seconds = max(0, int(round(seconds)))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


def cells_to_measure(todo: int, total: int, seconds: float) -> str:
    """A study's header line: the cells this run measures, of how many, and how long."""
    return f"Cells to measure: {todo} of {total} ({total - todo} already measured), ~{format_duration(seconds)}"


def run_id() -> str | None:
    """The id of the pipeline run this process belongs to (None when run by hand)."""
    return os.environ.get(RUN_ID_ENV)


def progress_suffix() -> str:
    """`   [1m05s of ~12m00s]`: elapsed time of the run against its estimate, or nothing
    outside a pipeline run."""
    started, estimate = os.environ.get(RUN_STARTED_ENV), os.environ.get(RUN_ESTIMATE_ENV)
    if not started or not estimate:
        return ""
    elapsed = time.time() - float(started)
    return f"   [{format_duration(elapsed)} of ~{format_duration(float(estimate))}]"
