# The machine the run measures on: its facts, software, telemetry and noise, recorded once
# per run for the figures and the paper (Method section).


rule machine_probe:
    # What the machine is and which telemetry it offers, for the figures and the paper;
    # after the builds: its CPU stability check describes the machine the cells run on.
    input:
        builds=after_builds(),
    output:
        MACHINE,
    log:
        f"{LOGS}/machine_probe.log",
    params:
        parbench=PARBENCH,
        profile=PROFILE,
        overrides=OVERRIDE_ARGS,
    # before the cells: its CPU stability check describes the machine they run on
    priority: FIRST_PRIORITY
    # alone, as a cell: a job beside it (a fractal rendered, a token written) made the
    # stability loop's spread 9% where the quiet machine's is 2.5%, and the paper ranks
    # nothing closer than that spread
    threads: workflow.cores
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} probe --profile {params.profile} --out {output} {params.overrides} > {log} 2>&1"


rule report_run:
    # The run's machine and configuration, as the first page of Snakemake's report.
    input:
        machine=MACHINE,
        run_md=f"{paths.PAPER_GENERATED}/run.md",
    output:
        report(
            f"{PROCESSED}/tables/run.html",
            caption="../report/run.rst",
            category="0. The run",
            labels={"page": "machine and configuration"},
        ),
    log:
        f"{LOGS}/report_run.log",
    params:
        parbench=PARBENCH,
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} report-run --machine {input.machine} --run-md {input.run_md} --out {output} > {log} 2>&1"
