"""sched: native C schedulers (LIFO, work stealing, synchronizing work stealing) and
their peers (OpenMP tasks, TBB) on parallel quicksort and Mandelbrot rendering (seed 004)."""

from parbench.studies.base import Study, SystemPackage
from parbench.studies.sched import plan

STUDY = Study(
    name="sched",
    title="Native schedulers",
    summary="native C schedulers against OpenMP tasks and TBB on parallel quicksort and Mandelbrot "
            "rendering, across thread counts",
    cells=plan.cells,
    job_seconds=plan.job_seconds(),
    cell_rule="sched_cell",
    header=plan.header,
    commands={
        "sched-cell": "parbench.studies.sched.run_cell",
        "sched-aggregate": "parbench.studies.sched.commands",
    },
    figures_module="parbench.studies.sched.figures",
    figure_files=lambda profile: {"sched_image": plan.IMAGE.format(profile=profile)},
    paper_module="parbench.studies.sched.paper",
    config_errors=plan.config_errors,
    failures=plan.failures,
    system_packages=(
        SystemPackage("libtbb-dev", "/usr/include/tbb/parallel_sort.h",
                      "the TBB peer (tbb::parallel_sort); without it TBB is recorded as unavailable",
                      required=False),
    ),
)
