# parbench: measure how workloads scale across threads, processes and native
# schedulers, and render the measurements into a paper.
#
#   snakemake -c1                                  the default profile (conf/local.yaml)
#   snakemake -c1 --configfile conf/m4.yaml        another machine profile
#   snakemake -c1 report                           everything the paper needs, rendered
#   snakemake --report report.html                 Snakemake's report of the last run
#
# The profile is a Hydra config (conf/<profile>.yaml); Hydra overrides go through
# --config 'overrides=["sigpar.duration_sec=6"]'. See README.md.

from snakemake.utils import min_version

min_version("9.0")


include: "workflow/rules/common.smk"
include: "workflow/rules/build.smk"
include: "workflow/rules/machine.smk"


# one rules file per study of the run (the registry: src/parbench/studies/__init__.py); a
# study that is a Benchmark has one only for native code of its own
for _study in STUDIES:
    if _study.benchmark is None or Path(workflow.basedir, f"workflow/rules/{_study.name}.smk").is_file():

        include: f"workflow/rules/{_study.name}.smk"


# what every study has alike: its aggregate, figure and paper rules
include: "workflow/rules/study.smk"

include: "workflow/rules/paper.smk"


report: "workflow/report/workflow.rst"


rule all:
    input:
        # the run's page first: Snakemake's report lists categories in the order it meets them
        rules.report_run.output,
        rules.render_paper.output,
        rules.paper_layout.output,
    default_target: True
