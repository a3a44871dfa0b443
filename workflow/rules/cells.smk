# One job per measured cell. Cells claim every core, so they run one at a time and
# never disturb each other's measurement.


rule sigpar_sweep_token:
    # Every cell of an algorithm depends on this file; forcing it (make rerun ALG=...)
    # reruns exactly that algorithm's cells.
    output:
        paths.SIGPAR_SWEEP.format(profile=PROFILE, algorithm="{algorithm}"),
    log:
        f"{LOGS}/sigpar/sweeps/{{algorithm}}.log",
    params:
        parbench=PARBENCH,
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} sigpar-sweep-token --algorithm {wildcards.algorithm} --out {output} > {log} 2>&1"


rule sigpar_cell:
    input:
        unpack(sigpar_cell_inputs),
    output:
        csv=f"{SIGPAR_STEM}.csv",
        system=f"{SIGPAR_STEM}_system.json",
        cell=f"{SIGPAR_STEM}_cell.json",
    log:
        f"{LOGS}/sigpar/{{mode}}/{{algorithm}}_{{operation}}_t{{workers}}.log",
    params:
        # what the cell measures: a change reruns the cell
        cell=lambda wc: sigplan.cell_parameters(PB, sigpar_cell_of(wc)),
        liboqs=sigpar_liboqs_arg,
        parbench=PARBENCH,
        profile=PROFILE,
        overrides=OVERRIDE_ARGS,
    threads: workflow.cores
    priority: sigpar_cell_priority
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} sigpar-cell --profile {params.profile} --algorithm {wildcards.algorithm} "
        "--operation {wildcards.operation} --mode {wildcards.mode} --workers {wildcards.workers} "
        "{params.liboqs} {params.overrides} 2>> {log} | tee -a {log}"
