# One job per figure; each writes SVG, PNG and interactive HTML under figures/<profile>/.


rule figure:
    input:
        tables=figure_tables,
        machine=f"{PROCESSED}/machine.json",
    output:
        multiext(f"{FIGURES}/{{figure}}", ".svg", ".png", ".html"),
    log:
        f"{LOGS}/figures/{{figure}}.log",
    params:
        stem=lambda wc: f"{FIGURES}/{wc.figure}",
        parbench=PARBENCH,
    wildcard_constraints:
        figure="|".join(FIGURE_SPECS),
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} figure {wildcards.figure} --machine {input.machine} "
        "--out-stem {params.stem} {input.tables} > {log} 2>&1"
