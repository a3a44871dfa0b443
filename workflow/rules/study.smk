# The rules every study has alike, written once and made for each study of the run:
# `<study>_aggregate` (its inputs into its tidy tables, run by `parbench aggregate`),
# `<study>_figure` (one figure: SVG for the paper, PNG and interactive HTML for the
# report) and `<study>_paper` (the generated parts of paper/sections/<study>.qmd, its
# facts, and its tables for the report). A study whose Benchmark asks for the runner's
# rules (Benchmark.RUNNER_RULES) gets its `<study>_cell` here as well, run by
# `parbench cell`, and needs a rules file only for native code of its own; the others
# keep their cell rules in their rules file.

import re
import shlex


def report_table_outputs(study):
    """Each of the study's paper tables as HTML (registered in the report), CSV, and its
    caption for the report (RST), all written by `parbench paper-fragments` from the
    study's captions.yml. The report reads a caption when it is built, after the job wrote
    it, so the path is absolute (Snakemake resolves a relative one against this file)."""
    files = report_tables(study)
    out = {}
    for name in studies.get(study).paper().REPORT_TABLES:
        out[f"{name}_html"] = table_report(
            study,
            f"tables/{name}.html",
            label=f"{name} (the paper's)",
            caption=str(Path(files[f"{name}_rst"]).absolute()),
        )
        out[f"{name}_csv"] = files[f"{name}_csv"]
        out[f"{name}_rst"] = files[f"{name}_rst"]
    return out


def benchmark_cell_constraint(study):
    return "|".join(re.escape(key) for key in studies.get(study).benchmark.keys(PB))


def benchmark_cell_parameters(study):
    """Params: what a cell of a Benchmark study measures (a change measures it again)."""
    bench = studies.get(study).benchmark
    return lambda wc: bench.cell_parameters(PB, bench.cell_of(PB, wc.cell))


def benchmark_cell_priority(study):
    bench = studies.get(study).benchmark
    return lambda wc: cell_priority(study, bench.cell_of(PB, wc.cell))


def aggregate_outputs(study):
    """What a study's aggregate writes: its tables and the seed's own files, registered in
    the report, and any other files it writes (`Benchmark.other_outputs`)."""
    bench = studies.get(study).benchmark
    out = {name: table_report(study, f"{name}.parquet") for name in bench.table_names()}
    out.update({Path(file).stem: table_report(study, file, seed=True) for file in bench.SEED_FILES})
    others = bench.other_outputs(PB)
    if others:
        out["others"] = [f"{PROCESSED}/{file}" for file in others]
    return out


def aggregate_input_args(study):
    """Params: the aggregate's inputs on its command line, `--input NAME PATH ...` each."""
    inputs = studies.get(study).benchmark.aggregate_inputs(PB)
    return " ".join(" ".join(["--input", name, *map(shlex.quote, files)]) for name, files in inputs.items())


def aggregate_parameters(study):
    """Params: what else decides the aggregate's output (a change aggregates again)."""
    bench = studies.get(study).benchmark
    return lambda wc: bench.aggregate_parameters(PB) or ""


def figure_caption(study):
    """Params: a figure's one caption, shown by workflow/report/figure.rst."""
    bench = studies.get(study).benchmark
    return lambda wc: bench.report_caption(wc.figure, PB)


for _study in (s for s in STUDIES if s.benchmark.RUNNER_RULES):

    rule:
        # One cell of a Benchmark study; it claims every core, so cells run one at a time.
        name:
            _study.cell_rule
        input:
            builds=after_builds(),
        output:
            record=f"{RAW}/{_study.name}/{{cell}}.json",
            **{name: f"{RAW}/{_study.name}/{{cell}}{suffix}" for name, suffix in _study.benchmark.SIDE_FILES.items()},
        log:
            f"{LOGS}/{_study.name}/{{cell}}.log",
        params:
            # what the cell measures: a change measures it again
            cell=benchmark_cell_parameters(_study.name),
            study=_study.name,
            parbench=PARBENCH,
            profile=PROFILE,
            overrides=OVERRIDE_ARGS,
        wildcard_constraints:
            cell=benchmark_cell_constraint(_study.name),
        threads: workflow.cores
        priority: benchmark_cell_priority(_study.name)
        conda:
            CONDA_ENV
        shell:
            "{params.parbench} cell --profile {params.profile} --cell {wildcards.cell} --out {output.record} "
            "{params.study} {params.overrides} 2>> {log} | tee -a {log}"


for _study in STUDIES:

    rule:
        # The study's inputs (its cells' records, and whatever else it reads) into its tidy
        # tables and the seed's own files; it prints what the seed printed.
        name:
            f"{_study.name}_aggregate"
        input:
            **_study.benchmark.aggregate_inputs(PB),
        output:
            **aggregate_outputs(_study.name),
        log:
            f"{LOGS}/{_study.name}/aggregate.log",
        params:
            # the processed folder, where its first table goes
            out_dir=lambda wc, output: Path(output[0]).parent,
            study=_study.name,
            inputs=aggregate_input_args(_study.name),
            # e.g. the runtimes found on this machine (gil)
            aggregated=aggregate_parameters(_study.name),
            parbench=PARBENCH,
            profile=PROFILE,
            overrides=OVERRIDE_ARGS,
        conda:
            CONDA_ENV
        shell:
            "{params.parbench} aggregate --profile {params.profile} --out-dir {params.out_dir} {params.study} "
            "{params.overrides} {params.inputs} 2>> {log} | tee -a {log}"

    rule:
        # One figure: SVG (in the paper), PNG and interactive HTML, both shown in the report.
        name:
            f"{_study.name}_figure"
        input:
            tables=figure_inputs(_study.name),
            machine=MACHINE,
            # the caption, the chart's description (an edited caption redraws the figure)
            captions=f"{paths.PAPER_SECTIONS}/{_study.name}/captions.yml",
        output:
            svg=report(
                f"{FIGURES}/{{figure}}.svg",
                caption="../report/figure.rst",
                category=report_category(_study.name),
                subcategory="Figures",
                labels={"figure": "{figure}", "format": "SVG"},
            ),
            png=f"{FIGURES}/{{figure}}.png",
            html=report(
                f"{FIGURES}/{{figure}}.html",
                caption="../report/figure.rst",
                category=report_category(_study.name),
                subcategory="Interactive figures",
                labels={"figure": "{figure}", "format": "HTML"},
            ),
        log:
            f"{LOGS}/figures/{{figure}}.log",
        params:
            stem=lambda wc: f"{FIGURES}/{wc.figure}",
            parbench=PARBENCH,
            # the figure's caption (workflow/report/figure.rst shows it)
            caption=figure_caption(_study.name),
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
