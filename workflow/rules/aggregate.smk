# Cell records -> tidy Parquet and the seed's processed files.


rule machine_probe:
    output:
        f"{PROCESSED}/machine.json",
    log:
        f"{LOGS}/machine_probe.log",
    params:
        parbench=PARBENCH,
        profile=PROFILE,
        overrides=OVERRIDE_ARGS,
    # before the cells: its CPU stability check describes the machine they run on
    priority: len(_ORDER) + 2
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} probe --profile {params.profile} --out {output} {params.overrides} > {log} 2>&1"


rule sigpar_algorithm:
    # One algorithm's cells: prints the seed's per-algorithm block.
    input:
        cells=lambda wc: sigpar_cell_records(wc.algorithm),
    output:
        f"{PROCESSED}/sigpar/algorithms/{{algorithm}}.parquet",
    log:
        f"{LOGS}/sigpar/algorithms/{{algorithm}}.log",
    params:
        index=lambda wc: SIGPAR_ALGORITHMS.index(wc.algorithm) + 1,
        total=len(SIGPAR_ALGORITHMS),
        parbench=PARBENCH,
    priority: sigpar_algorithm_priority
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} sigpar-algorithm --index {params.index} --total {params.total} --out {output} "
        "{input.cells} 2>> {log} | tee -a {log}"


rule sigpar_aggregate:
    input:
        algorithms=expand(
            f"{PROCESSED}/sigpar/algorithms/{{algorithm}}.parquet",
            algorithm=SIGPAR_ALGORITHMS,
        ),
        cells=sigpar_cell_records(),
    output:
        cells=f"{PROCESSED}/sigpar_cells.parquet",
        workers=f"{PROCESSED}/sigpar_workers.parquet",
        latency=f"{PROCESSED}/sigpar_latency.parquet",
        summary=f"{PROCESSED}/parallelism_summary.csv",
        mode_json=expand(f"{PROCESSED}/parallelism_{{mode}}.json", mode=SIGPAR_MODES),
        mode_summary=expand(f"{PROCESSED}/parallelism_summary_{{mode}}.csv", mode=SIGPAR_MODES),
    log:
        f"{LOGS}/sigpar/aggregate.log",
    params:
        out_dir=lambda wc, output: Path(output.cells).parent,
        parbench=PARBENCH,
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} sigpar-aggregate --out-dir {params.out_dir} --algorithms {input.algorithms} "
        "--cells {input.cells} > {log} 2>&1"


rule sched_aggregate:
    # Prints the seed's blocks: one `[NN] Time taken` line per thread count.
    input:
        cells=sched_cell_records(),
    output:
        summary=f"{PROCESSED}/sched_summary.parquet",
        runs=f"{PROCESSED}/sched_runs.parquet",
        workers=f"{PROCESSED}/sched_workers.parquet",
        console=f"{PROCESSED}/sched_console.txt",
    log:
        f"{LOGS}/sched/aggregate.log",
    params:
        out_dir=lambda wc, output: Path(output.summary).parent,
        parbench=PARBENCH,
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} sched-aggregate --out-dir {params.out_dir} {input.cells} 2>> {log} | tee -a {log}"
