# gil: the same CPU-bound Python work, sequential, in threads and in processes, on several
# Python runtimes. Cells (one interpreter launch per runtime and workload) -> tidy Parquet
# and the seed's report -> figures -> the generated parts of its paper section. Python:
# src/parbench/studies/gil/ (the worker every interpreter runs: worker.py); config:
# conf/gil/; table captions: workflow/report/gil/.

from parbench.studies.gil import cpython as gil_cpython
from parbench.studies.gil import plan as gil_plan
from parbench.studies.gil import runtimes as gil_rt

GIL_STEM = gil_plan.CELL.format(profile=PROFILE, runtime="{runtime}", workload="{workload}", rep="{rep}")


wildcard_constraints:
    runtime=r"[a-z][a-z0-9_]*",
    workload=r"multithread_\w+",
    rep=r"\d+",
    flavour="|".join(gil_cpython.FLAVOURS),


rule gil_cpython_source:
    # The CPython source the builds use: PARBENCH_CPYTHON_SOURCE's tarball, else the
    # Debian source archive of this machine's apt configuration. No source is not an
    # error: the record says why, and the runtimes built from it are not measured. A
    # record that says "not available" is tried again on the next run.
    output:
        record=gil_cpython.SOURCE_RECORD,
    log:
        f"{gil_cpython.ROOT}/source.log",
    params:
        # what decides the source: a change fetches again (the builds are cached by the
        # tarball's checksum, so the same source is never built twice)
        source=lambda wc: gil_plan.source_parameters(PB),
        parbench=PARBENCH,
        profile=PROFILE,
        overrides=OVERRIDE_ARGS,
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} gil-cpython-source --profile {params.profile} --out {output.record} "
        "{params.overrides} > {log} 2>&1"


rule gil_cpython_build:
    # One flavour (default, freethreaded) configured out of tree into
    # native/build/cpython/<version>-<flavour>/ and made with every core; a build folder
    # made from the same inputs is reused without compiling.
    input:
        source=gil_cpython.SOURCE_RECORD,
    output:
        record=f"{gil_cpython.ROOT}/{{flavour}}.json",
    log:
        f"{gil_cpython.ROOT}/{{flavour}}.log",
    params:
        # what the interpreter is made with: a change rebuilds it (and reruns its cells)
        build=lambda wc: gil_plan.build_parameters(PB),
        parbench=PARBENCH,
        profile=PROFILE,
        overrides=OVERRIDE_ARGS,
    threads: workflow.cores
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} gil-cpython-build --profile {params.profile} --flavour {wildcards.flavour} "
        "--source {input.source} --out {output.record} --jobs {threads} {params.overrides} > {log} 2>&1"


rule gil_control_build:
    # The native control (the seed's sum in POSIX threads): one C file, no dependencies.
    input:
        source=gil_rt.CONTROL_SOURCE,
    output:
        binary=gil_rt.CONTROL_BINARY,
    log:
        "native/build/gilcontrol/build.log",
    conda:
        CONDA_ENV
    shell:
        "cc -O2 -Wall -Wextra -pthread -o {output.binary} {input.source} > {log} 2>&1"


# every build a measured runtime needs (a CPython flavour, the native control): the cells
# start after them all (rule builds_done)
BUILDS.extend(sorted({r.needs for r in gil_plan.resolved(PB) if r.needs}))


rule gil_cell:
    # One repetition of one runtime and workload: every execution and worker count in one
    # launch of the interpreter. It claims every core, so cells run one at a time, in the
    # interleaved order of cell_priority (every cell once, then again). A runtime the
    # study builds takes its build's record as input.
    input:
        unpack(lambda wc: gil_plan.cell_inputs(PB, wc.runtime)),
        worker=gil_plan.WORKER_SOURCE,
        builds=after_builds(),
    output:
        record=f"{GIL_STEM}.json",
    log:
        f"{LOGS}/gil/{{runtime}}/{{workload}}_r{{rep}}.log",
    params:
        # what the cell measures (the resolved command included): a change reruns the cell
        cell=lambda wc: gil_plan.cell_parameters(PB, gil_plan.GilCell.from_wildcards(wc)),
        parbench=PARBENCH,
        profile=PROFILE,
        overrides=OVERRIDE_ARGS,
    threads: workflow.cores
    priority: lambda wc: cell_priority("gil", gil_plan.GilCell.from_wildcards(wc))
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} gil-cell --profile {params.profile} --runtime {wildcards.runtime} "
        "--workload {wildcards.workload} --rep {wildcards.rep} {params.overrides} 2>> {log} | tee -a {log}"
