# The machine the run measures on: its facts, software, telemetry and noise, recorded once
# per run for the figures and the paper (Method section).


rule machine_probe:
    # What the machine is and which telemetry it offers, for the figures and the paper.
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
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} probe --profile {params.profile} --out {output} {params.overrides} > {log} 2>&1"
