# The paper: the shared generated parts (Method, the list of study sections, how to
# reproduce), then Quarto (or pandoc) renders paper/index.qmd with every active study's
# section (paper/sections/<study>.qmd and its generated parts, from the study's rules).


rule paper_sources:
    input:
        machine=MACHINE,
        # the machines the cells ran on, from their provenance (several with SLURM nodes)
        tables=all_paper_tables(),
    output:
        multiext(f"{paths.PAPER_GENERATED}/", "run.md", "studies.md", "reproduce.md"),
    log:
        f"{LOGS}/paper_sources.log",
    params:
        out_dir=lambda wc, output: Path(output[0]).parent,
        parbench=PARBENCH,
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} paper-sources --machine {input.machine} --out-dir {params.out_dir} {input.tables} > {log} 2>&1"


rule paper_figure:
    # The paper's copy of a figure, inside the Quarto project: Quarto typesets the PDF with
    # Typst rooted at paper/, which refuses files outside it (figures/ is outside). A copy:
    # done where Snakemake runs, never sent to a cluster.
    localrule: True
    input:
        f"{FIGURES}/{{figure}}.svg",
    output:
        f"{PAPER_FIGURES}/{{figure}}.svg",
    log:
        f"{LOGS}/paper_figures/{{figure}}.log",
    wildcard_constraints:
        figure=paper_figure_constraint(),
    conda:
        CONDA_ENV
    shell:
        "cp {input} {output} > {log} 2>&1"


rule render_paper:
    input:
        sources=rules.paper_sources.output,
        studies=paper_inputs(),
        qmd="paper/index.qmd",
        project="paper/_quarto.yml",
    output:
        html=paths.PAPER_OUTPUT,
        pdf=paths.PAPER_PDF,
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
        rules.report_run.output,
        rules.render_paper.output,
