# dispatch: the seed's function-as-a-service platform in its modes, and its peers. Cells
# (one per platform mode or peer, each running the whole protocol on its own platform)
# -> tidy Parquet and the seed's report -> figures -> the generated parts of its paper
# section. Python: src/parbench/studies/dispatch/; config: conf/dispatch/; captions:
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


rule dispatch_aggregate:
    # Prints the seed's report blocks (key metrics, scaling behaviour, the push anomaly);
    # the anomaly's experiments go to dispatch_anomaly, each record's load to dispatch_load.
    input:
        cells=dispatch_plan.cell_records(PB),
    output:
        summary=report(
            f"{PROCESSED}/dispatch_summary.parquet",
            caption="../report/dispatch/summary.rst",
            category=report_category("dispatch"),
            subcategory="Tables",
            labels={"table": "dispatch_summary", "format": "Parquet"},
        ),
        runs=report(
            f"{PROCESSED}/dispatch_runs.parquet",
            caption="../report/dispatch/runs.rst",
            category=report_category("dispatch"),
            subcategory="Tables",
            labels={"table": "dispatch_runs", "format": "Parquet"},
        ),
        tasks=report(
            f"{PROCESSED}/dispatch_tasks.parquet",
            caption="../report/dispatch/tasks.rst",
            category=report_category("dispatch"),
            subcategory="Tables",
            labels={"table": "dispatch_tasks", "format": "Parquet"},
        ),
        depth=report(
            f"{PROCESSED}/dispatch_depth.parquet",
            caption="../report/dispatch/depth.rst",
            category=report_category("dispatch"),
            subcategory="Tables",
            labels={"table": "dispatch_depth", "format": "Parquet"},
        ),
        anomaly=report(
            f"{PROCESSED}/dispatch_anomaly.parquet",
            caption="../report/dispatch/anomaly.rst",
            category=report_category("dispatch"),
            subcategory="Tables",
            labels={"table": "dispatch_anomaly", "format": "Parquet"},
        ),
        load=report(
            f"{PROCESSED}/dispatch_load.parquet",
            caption="../report/load.rst",
            category=report_category("dispatch"),
            subcategory="Tables",
            labels={"table": "dispatch_load", "format": "Parquet"},
        ),
        cells=report(
            f"{PROCESSED}/dispatch_cells.parquet",
            caption="../report/dispatch/cells.rst",
            category=report_category("dispatch"),
            subcategory="Tables",
            labels={"table": "dispatch_cells", "format": "Parquet"},
        ),
        seed=report(
            f"{PROCESSED}/dispatch_report.md",
            caption="../report/dispatch/seed_report.rst",
            category=report_category("dispatch"),
            subcategory="Tables",
            labels={"table": "dispatch_report (the seed's)", "format": "Markdown"},
        ),
    log:
        f"{LOGS}/dispatch/aggregate.log",
    params:
        out_dir=lambda wc, output: Path(output.summary).parent,
        parbench=PARBENCH,
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} dispatch-aggregate --out-dir {params.out_dir} {input.cells} 2>> {log} | tee -a {log}"


rule dispatch_figure:
    # One figure: SVG (in the paper), PNG and interactive HTML, both shown in the report.
    input:
        tables=figure_inputs("dispatch"),
        machine=MACHINE,
    output:
        svg=report(
            f"{FIGURES}/{{figure}}.svg",
            caption="../report/dispatch/figures.rst",
            category=report_category("dispatch"),
            subcategory="Figures",
            labels={"figure": "{figure}", "format": "SVG"},
        ),
        png=f"{FIGURES}/{{figure}}.png",
        html=report(
            f"{FIGURES}/{{figure}}.html",
            caption="../report/dispatch/figures.rst",
            category=report_category("dispatch"),
            subcategory="Interactive figures",
            labels={"figure": "{figure}", "format": "HTML"},
        ),
    log:
        f"{LOGS}/figures/{{figure}}.log",
    params:
        stem=lambda wc: f"{FIGURES}/{wc.figure}",
        parbench=PARBENCH,
    wildcard_constraints:
        figure=figure_constraint("dispatch"),
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} figure {wildcards.figure} --machine {input.machine} "
        "--out-stem {params.stem} {input.tables} > {log} 2>&1"


rule dispatch_paper:
    # The generated parts of paper/sections/dispatch.qmd, and its tables for the report.
    input:
        machine=MACHINE,
        tables=paper_tables("dispatch"),
        figures=figure_outputs("dispatch"),
        templates=paper_templates("dispatch"),
    output:
        fragments=paper_fragments("dispatch"),
        modes_html=report(
            report_tables("dispatch")["dispatch_modes_table_html"],
            caption="../report/dispatch/paper_tables.rst",
            category=report_category("dispatch"),
            subcategory="Tables",
            labels={"table": "dispatch_modes_table (the paper's)", "format": "HTML"},
        ),
        modes_csv=report_tables("dispatch")["dispatch_modes_table_csv"],
        anomaly_html=report(
            report_tables("dispatch")["dispatch_anomaly_table_html"],
            caption="../report/dispatch/paper_tables.rst",
            category=report_category("dispatch"),
            subcategory="Tables",
            labels={"table": "dispatch_anomaly_table (the paper's)", "format": "HTML"},
        ),
        anomaly_csv=report_tables("dispatch")["dispatch_anomaly_table_csv"],
        dose_html=report(
            report_tables("dispatch")["dispatch_dose_table_html"],
            caption="../report/dispatch/paper_tables.rst",
            category=report_category("dispatch"),
            subcategory="Tables",
            labels={"table": "dispatch_dose_table (the paper's)", "format": "HTML"},
        ),
        dose_csv=report_tables("dispatch")["dispatch_dose_table_csv"],
        order_html=report(
            report_tables("dispatch")["dispatch_order_table_html"],
            caption="../report/dispatch/paper_tables.rst",
            category=report_category("dispatch"),
            subcategory="Tables",
            labels={"table": "dispatch_order_table (the paper's)", "format": "HTML"},
        ),
        order_csv=report_tables("dispatch")["dispatch_order_table_csv"],
        saturation_html=report(
            report_tables("dispatch")["dispatch_saturation_table_html"],
            caption="../report/dispatch/paper_tables.rst",
            category=report_category("dispatch"),
            subcategory="Tables",
            labels={"table": "dispatch_saturation_table (the paper's)", "format": "HTML"},
        ),
        saturation_csv=report_tables("dispatch")["dispatch_saturation_table_csv"],
    log:
        f"{LOGS}/paper/dispatch.log",
    params:
        out_dir=lambda wc, output: Path(output.fragments[0]).parent,
        tables_dir=lambda wc, output: Path(output.modes_html).parent,
        parbench=PARBENCH,
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} paper-fragments --machine {input.machine} --out-dir {params.out_dir} "
        "--tables-dir {params.tables_dir} dispatch {input.tables} > {log} 2>&1"
