# The paper: the shared generated parts (Method, the list of study sections, how to
# reproduce), then Quarto (or pandoc) renders paper/index.qmd with every active study's
# section (paper/sections/<study>.qmd and its generated parts, from the study's rules).


rule paper_sources:
    input:
        machine=MACHINE,
        # the machines the cells ran on, from their provenance (several with SLURM nodes)
        tables=all_paper_tables(),
        templates=paper_templates("shared"),
    output:
        multiext(f"{paths.PAPER_GENERATED}/", "summary.md", "run.md", "studies.md", "limitations.md", "conclusion.md",
                 "reproduce.md", "facts.json"),
    log:
        f"{LOGS}/paper_sources.log",
    params:
        out_dir=lambda wc, output: Path(output[0]).parent,
        parbench=PARBENCH,
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} paper-sources --machine {input.machine} --out-dir {params.out_dir} {input.tables} > {log} 2>&1"


rule paper_check:
    # Every number and comparison of the paper's text held against the tables it came
    # from (parbench.paper.check): a claim the data does not support stops the run here,
    # naming it, before anything is rendered.
    input:
        machine=MACHINE,
        tables=all_paper_tables(),
        sources=rules.paper_sources.output,
        studies=paper_inputs(),
        qmd="paper/index.qmd",
    output:
        f"{paths.PAPER_GENERATED}/check.json",
    log:
        f"{LOGS}/paper_check.log",
    params:
        parbench=PARBENCH,
        generated=lambda wc, output: Path(output[0]).parent,
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} paper-check --machine {input.machine} --generated {params.generated} --out {output} "
        "{input.tables} > {log} 2>&1 || {{ cat {log} >&2; exit 1; }}"


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
        check=rules.paper_check.output,
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


rule paper_layout:
    # Every table and figure of the PDF on its page: no word outside the text area, none
    # printed over another (parbench.paper.layout_check).
    input:
        pdf=paths.PAPER_PDF,
        project="paper/_quarto.yml",
    output:
        f"{PROCESSED}/paper_layout.json",
    log:
        f"{LOGS}/paper_layout.log",
    params:
        parbench=PARBENCH,
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} paper-layout {input.pdf} --quarto-yml {input.project} --out {output} > {log} 2>&1 "
        "|| {{ cat {log} >&2; exit 1; }}"


rule report:
    # `snakemake report`: everything the paper needs, measured, drawn, rendered and checked.
    input:
        rules.report_run.output,
        rules.render_paper.output,
        rules.paper_layout.output,
