"""dispatch: the seed's function-as-a-service platform (MPCSFaaS, seed 003) in its local,
pull and push modes, the seed's push design (push-naive) with its anomaly explained,
against ProcessPoolExecutor, Dask, Celery and Ray."""

from parbench.studies.base import Command, Study, SystemPackage
from parbench.studies.dispatch import plan

STUDY = Study(
    name="dispatch",
    title="Function dispatch",
    summary="a function-as-a-service platform (HTTP gateway, Redis, ZeroMQ workers) in local, pull and push "
            "modes against ProcessPoolExecutor, Dask, Celery and Ray on no-op, CPU and I/O tasks",
    cells=plan.cells,
    job_seconds=plan.job_seconds(),
    cell_rule="dispatch_cell",
    header=plan.header,
    commands={
        "dispatch-cell": "parbench.studies.dispatch.run_cell",
        "dispatch-aggregate": "parbench.studies.dispatch.commands",
    },
    figures_module="parbench.studies.dispatch.figures",
    paper_module="parbench.studies.dispatch.paper",
    config_errors=plan.config_errors,
    failures=plan.failures,
    system_packages=(
        SystemPackage("redis-server", Command("redis-server"),
                      "the platform's state store and the Celery peer's broker (started per cell on a "
                      "loopback port, no persistence)", brew="redis"),
    ),
)
