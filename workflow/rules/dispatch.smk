# dispatch: the seed's function-as-a-service platform in its modes, and its peers. Cells
# (one per platform mode or peer, each running the whole protocol on its own platform)
# -> tidy Parquet and the seed's report -> figures -> the generated parts of its paper
# section. Python: src/parbench/studies/dispatch/; config: conf/dispatch/; table captions:
# workflow/report/dispatch/.

from parbench.studies.dispatch import plan as dispatch_plan


wildcard_constraints:
    system=dispatch_plan.SYSTEM_PATTERN,
    rep=r"\d+",


rule dispatch_cell:
    # One repetition of one system through the whole protocol (or, for `system@experiment`,
    # through one of the anomaly's experiments); it claims every core, so cells run one
    # at a time, and it stops everything it started (redis-server, gateway, workers,
    # clusters).
    input:
        builds=after_builds(),
    output:
        record=dispatch_plan.CELL.format(profile=PROFILE, system="{system}", rep="{rep}") + ".json",
    log:
        f"{LOGS}/dispatch/{{system}}_r{{rep}}.log",
    params:
        # what the cell measures: a change reruns the cell
        cell=lambda wc: dispatch_plan.cell_parameters(PB, dispatch_plan.DispatchCell.from_wildcards(wc)),
        parbench=PARBENCH,
        profile=PROFILE,
        overrides=OVERRIDE_ARGS,
    threads: workflow.cores
    priority: lambda wc: cell_priority("dispatch", dispatch_plan.DispatchCell.from_wildcards(wc))
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} dispatch-cell --profile {params.profile} --system {wildcards.system} --rep {wildcards.rep} "
        "{params.overrides} 2>> {log} | tee -a {log}"
