# The paper: generated includes from the data, then Quarto (or pandoc) renders it.


rule paper_sources:
    input:
        machine=f"{PROCESSED}/machine.json",
        tables=paper_tables(),
        figures=expand(f"{FIGURES}/{{figure}}.svg", figure=FIGURE_NAMES),
    output:
        multiext(f"{paths.PAPER_GENERATED}/", "run.md", "sigpar.md", "sched.md", "reproduce.md"),
    log:
        f"{LOGS}/paper_sources.log",
    params:
        out_dir=lambda wc, output: Path(output[0]).parent,
        parbench=PARBENCH,
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} paper-sources --machine {input.machine} --out-dir {params.out_dir} "
        "{input.tables} > {log} 2>&1"


rule render_paper:
    input:
        sources=rules.paper_sources.output,
        qmd="paper/index.qmd",
        project="paper/_quarto.yml",
    output:
        paths.PAPER_OUTPUT,
    log:
        f"{LOGS}/render_paper.log",
    params:
        python=PYTHON,
    conda:
        CONDA_ENV
    shell:
        "{params.python} -m parbench.render paper 2>&1 | tee {log}"


rule report:
    # `snakemake report`: everything the paper needs, measured, drawn and rendered.
    input:
        paper_outputs(),
