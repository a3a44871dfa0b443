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
    # instant, and every sigpar cell waits for it: first, so that cells keep their order
    priority: len(_ORDER) + 1
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


rule sched_cell:
    input:
        driver=paths.SCHED_DRIVER,
        peers=paths.SCHED_PEERS,
    output:
        record=f"{SCHED_STEM}.json",
        console=f"{SCHED_STEM}.txt",
    log:
        f"{LOGS}/sched/{{workload}}/{{scheduler}}_t{{threads}}.log",
    params:
        # what the cell measures: a change reruns the cell
        cell=lambda wc: schedplan.cell_parameters(PB, sched_cell_of(wc)),
        parbench=PARBENCH,
        profile=PROFILE,
        overrides=OVERRIDE_ARGS,
    threads: workflow.cores
    priority: sched_cell_priority
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} sched-cell --profile {params.profile} --workload {wildcards.workload} "
        "--scheduler {wildcards.scheduler} --threads {wildcards.threads} --driver {input.driver} "
        "{params.overrides} 2>> {log} | tee -a {log}"


rule sched_image:
    # One frame of the Mandelbrot view, for the paper; the driver checks it against the
    # sequential render before writing it.
    input:
        driver=paths.SCHED_DRIVER,
    output:
        paths.SCHED_IMAGE.format(profile=PROFILE),
    log:
        f"{LOGS}/sched/image.log",
    params:
        args=lambda wc, output: " ".join(
            schedplan.driver_command(
                PB,
                schedplan.SchedCell("mandelbrot", "ws_sync", max(PB["sched"]["threads"])),
                "",
                image_path=output[0],
                frames=1,
            )[1:]
        ),
    conda:
        CONDA_ENV
    shell:
        "{input.driver} {params.args} > {log} 2>&1"
