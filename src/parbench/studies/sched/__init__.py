"""sched: native C schedulers (LIFO, work stealing, synchronizing work stealing) and
their peers (OpenMP tasks, TBB) on parallel quicksort and Mandelbrot rendering (seed 004),
and the seed's fractal explorer (fracsteal) replaying a zoom on ws_sync."""

from parbench.studies.base import Command, Header, Study, SystemPackage
from parbench.studies.sched import fracsteal, plan

STUDY = Study(
    name="sched",
    title="Native schedulers",
    summary="native C schedulers against OpenMP tasks and TBB on parallel quicksort and Mandelbrot "
            "rendering, across thread counts, and the seed's fractal explorer zooming on ws_sync",
    cells=plan.cells,
    job_seconds=plan.job_seconds(),
    cell_rule="sched_cell",
    header=plan.header,
    commands={
        "sched-cell": "parbench.studies.sched.run_cell",
        "sched-aggregate": "parbench.studies.sched.commands",
        "sched-fracsteal": "parbench.studies.sched.fracsteal_cell",
        "sched-fracsteal-aggregate": "parbench.studies.sched.commands",
    },
    figures_module="parbench.studies.sched.figures",
    figure_files=lambda profile: {"sched_image": plan.IMAGE.format(profile=profile),
                                  "sched_fracsteal_strip": fracsteal.STRIP.format(profile=profile)},
    paper_module="parbench.studies.sched.paper",
    config_errors=plan.config_errors,
    failures=plan.failures,
    system_packages=(
        SystemPackage("libtbb-dev", Header("tbb/parallel_sort.h", cxx=True),
                      "the TBB peers (the quicksort on a task_group, tbb::parallel_sort); without it they are "
                      "recorded as unavailable", required=False, brew="tbb"),
        # OpenMP comes with gcc on Linux; Apple clang has no runtime: Homebrew's libomp
        SystemPackage(None, Header("omp.h"), "the OpenMP peer (Apple clang with -Xpreprocessor -fopenmp -lomp); "
                      "without it OpenMP is recorded as unavailable", required=False, brew="libomp"),
        # the fracsteal explorer: its window and the test that drives it (the scripted
        # mode, which the pipeline runs, needs none of them)
        SystemPackage("libsdl2-dev", Header("SDL2/SDL.h"),
                      "the fracsteal explorer's window (make -C native/sched/fracsteal); without it only "
                      "the scripted mode builds", required=False, brew="sdl2"),
        # the window's test drives an X display: Linux only (no brew name)
        SystemPackage("xvfb", Command("Xvfb"), "a virtual X display for the test that drives the fracsteal "
                      "window; without it that test is skipped", required=False),
        SystemPackage("xdotool", Command("xdotool"), "sends keys and mouse moves to the fracsteal window in its "
                      "test", required=False),
        SystemPackage("imagemagick", Command("import"), "screenshots of the fracsteal window in its test (import)",
                      required=False),
    ),
)
