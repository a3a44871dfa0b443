"""gil: the same CPU-bound Python work, sequential, in threads and in processes, on
several Python runtimes (CPython, CPython's default and free-threaded builds made from
source here when the machine has none, PyPy, Jython, the seed's protoPython) beside a
native control: what the GIL costs and what a GIL-free runtime gains (seed 001)."""

from parbench.studies.base import Command, Study, SystemPackage
from parbench.studies.gil import plan

STUDY = Study(
    name="gil",
    title="The GIL across Python runtimes",
    summary="the same CPU-bound Python work sequential, in threads and in processes on CPython, PyPy, Jython "
            "and other interpreters: what the GIL costs and what a GIL-free runtime gains",
    cells=plan.cells,
    job_seconds=plan.job_seconds(),
    cell_rule="gil_cell",
    header=plan.header,
    commands={
        "gil-cell": "parbench.studies.gil.run_cell",
        "gil-aggregate": "parbench.studies.gil.commands",
        "gil-cpython-source": "parbench.studies.gil.cpython",
        "gil-cpython-build": "parbench.studies.gil.cpython",
    },
    figures_module="parbench.studies.gil.figures",
    paper_module="parbench.studies.gil.paper",
    related_tables=plan.related_tables,
    config_errors=plan.config_errors,
    failures=plan.failures,
    system_packages=(
        SystemPackage("pypy3", Command("pypy3"), "the PyPy runtime (a GIL and a JIT); without it PyPy is listed "
                      "as not measured", required=False, brew="pypy3"),
        SystemPackage("jython", Command("jython"), "the Jython runtime (JVM threads, no GIL); without it Jython "
                      "is listed as not measured", required=False, brew="jython"),
        SystemPackage("build-essential", Command("make"), "gcc and make: the study builds CPython from source (its "
                      "default and free-threaded builds) and its native control; without them those runtimes are "
                      "listed as not measured", required=False),
    ),
)
