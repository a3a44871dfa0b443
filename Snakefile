# parbench: measure how workloads scale across threads, processes and native
# schedulers, and render the measurements into a paper.
#
#   snakemake -c1                                  the default profile (conf/local.yaml)
#   snakemake -c1 --configfile conf/m4.yaml        another machine profile
#   snakemake -c1 report                           everything the paper needs, rendered
#
# The profile is a Hydra config (conf/<profile>.yaml); Hydra overrides go through
# --config 'overrides=["sigpar.duration_sec=6"]'. See README.md.

from snakemake.utils import min_version

min_version("9.0")


include: "workflow/rules/common.smk"
include: "workflow/rules/build.smk"
include: "workflow/rules/cells.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/paper.smk"


rule all:
    input:
        paper_outputs(),
    default_target: True
