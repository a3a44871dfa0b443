# The rules every study has alike, written once and made for each study of the run:
# `<study>_figure` (one figure: SVG for the paper, PNG and interactive HTML for the
# report) and `<study>_paper` (the generated parts of paper/sections/<study>.qmd, its
# facts, and its tables for the report). A study's own rules file holds only its native
# builds, its cells and its aggregate.


def report_table_caption(study, table):
    """A paper table's caption in Snakemake's report: its own (`table_caption`), else
    the study's paper_tables.rst."""
    own = table_caption(study, table)
    exists = Path(workflow.basedir, "workflow/rules", own).resolve().is_file()
    return own if exists else f"../report/{study}/paper_tables.rst"


def report_table_outputs(study):
    """Each of the study's paper tables as HTML (registered in the report) and CSV."""
    files = report_tables(study)
    out = {}
    for name in studies.get(study).paper().REPORT_TABLES:
        out[f"{name}_html"] = table_report(
            study,
            f"tables/{name}.html",
            label=f"{name} (the paper's)",
            caption=report_table_caption(study, name),
        )
        out[f"{name}_csv"] = files[f"{name}_csv"]
    return out


for _study in STUDIES:

    rule:
        # One figure: SVG (in the paper), PNG and interactive HTML, both shown in the report.
        name:
            f"{_study.name}_figure"
        input:
            tables=figure_inputs(_study.name),
            machine=MACHINE,
        output:
            svg=report(
                f"{FIGURES}/{{figure}}.svg",
                caption=f"../report/{_study.name}/figures.rst",
                category=report_category(_study.name),
                subcategory="Figures",
                labels={"figure": "{figure}", "format": "SVG"},
            ),
            png=f"{FIGURES}/{{figure}}.png",
            html=report(
                f"{FIGURES}/{{figure}}.html",
                caption=f"../report/{_study.name}/figures.rst",
                category=report_category(_study.name),
                subcategory="Interactive figures",
                labels={"figure": "{figure}", "format": "HTML"},
            ),
        log:
            f"{LOGS}/figures/{{figure}}.log",
        params:
            stem=lambda wc: f"{FIGURES}/{wc.figure}",
            parbench=PARBENCH,
        wildcard_constraints:
            figure=figure_constraint(_study.name),
        conda:
            CONDA_ENV
        shell:
            "{params.parbench} figure {wildcards.figure} --machine {input.machine} "
            "--out-stem {params.stem} {input.tables} > {log} 2>&1"

    rule:
        # The generated parts of paper/sections/<study>.qmd, its facts, and its tables for
        # the report; a related study's table joins the inputs when that study is in the run.
        name:
            f"{_study.name}_paper"
        input:
            machine=MACHINE,
            tables=paper_tables(_study.name),
            related=_study.related_tables(PB, PROCESSED),
            figures=figure_outputs(_study.name),
            templates=paper_templates(_study.name),
        output:
            fragments=paper_fragments(_study.name),
            **report_table_outputs(_study.name),
        log:
            f"{LOGS}/paper/{_study.name}.log",
        params:
            out_dir=lambda wc, output: Path(output.fragments[0]).parent,
            # the report tables' folder (the last outputs are those tables)
            tables_dir=lambda wc, output: Path(output[-1]).parent,
            study=_study.name,
            parbench=PARBENCH,
        conda:
            CONDA_ENV
        shell:
            "{params.parbench} paper-fragments --machine {input.machine} --out-dir {params.out_dir} "
            "--tables-dir {params.tables_dir} {params.study} {input.tables} {input.related} > {log} 2>&1"
