# sched: native C schedulers and their peers on parallel quicksort and Mandelbrot. The
# driver build -> cells -> tidy Parquet and the seed's console blocks -> figures -> the
# generated parts of its paper section. Python: src/parbench/studies/sched/; C:
# native/sched/; config: conf/sched/; table captions: workflow/report/sched/. The fracsteal
# explorer (native/sched/fracsteal): its builds, its scripted zoom and its table.

from parbench.studies.sched import fracsteal as sched_fracsteal
from parbench.studies.sched import plan as sched_plan

SCHED_STEM = sched_plan.CELL.replace("{threads:02d}", "{threads}").format(
    profile=PROFILE, workload="{workload}", scheduler="{scheduler}", threads="{threads}", rep="{rep}"
)
# what the driver is compiled from: a change to any of them rebuilds it (and so reruns
# the sched cells); the C tests and docs are not among them
SCHED_SOURCES = ["native/sched/Makefile"] + sorted(
    str(p)
    for d in ("lib", "workloads", "driver")
    for p in Path("native/sched", d).rglob("*")
    if p.is_file()
)

# what fracsteal is compiled from (its folder and the library parts it reuses); not
# among SCHED_SOURCES, so a change to it never reruns the sched cells
SCHED_FRACSTEAL_SOURCES = sched_fracsteal.sources()


wildcard_constraints:
    workload="quicksort|mandelbrot",
    scheduler="|".join(sched_plan.SCHEDULER_ORDER),
    threads=r"\d+",
    rep=r"\d+",


rule sched_build:
    # make rebuilds only what changed; peers (OpenMP, TBB) are detected by make.
    input:
        sources=SCHED_SOURCES,
    output:
        driver=sched_plan.DRIVER,
        peers=sched_plan.PEERS_RECORD,
    log:
        f"{sched_plan.BUILD}/build.log",
    params:
        build_dir=lambda wc, output: Path(output.driver).parent.resolve(),
    threads: workflow.cores
    conda:
        CONDA_ENV
    shell:
        "(make -C native/sched BUILD_DIR={params.build_dir} -j{threads} all "
        "&& {output.driver} peers > {output.peers}) > {log} 2>&1"


BUILDS.extend([sched_plan.DRIVER, sched_plan.PEERS_RECORD])


rule sched_cell:
    # One repetition of a measured cell; it claims every core, so cells run one at a
    # time, in the interleaved order of cell_priority (every cell once, then again).
    input:
        driver=sched_plan.DRIVER,
        peers=sched_plan.PEERS_RECORD,
        builds=after_builds(),
    output:
        record=f"{SCHED_STEM}.json",
        console=f"{SCHED_STEM}.txt",
    log:
        f"{LOGS}/sched/{{workload}}/{{scheduler}}_t{{threads}}_r{{rep}}.log",
    params:
        # what the cell measures: a change reruns the cell
        cell=lambda wc: sched_plan.cell_parameters(PB, sched_plan.SchedCell.from_wildcards(wc)),
        parbench=PARBENCH,
        profile=PROFILE,
        overrides=OVERRIDE_ARGS,
    threads: workflow.cores
    priority: lambda wc: cell_priority("sched", sched_plan.SchedCell.from_wildcards(wc))
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} sched-cell --profile {params.profile} --workload {wildcards.workload} "
        "--scheduler {wildcards.scheduler} --threads {wildcards.threads} --rep {wildcards.rep} --driver {input.driver} "
        "{params.overrides} 2>> {log} | tee -a {log}"


rule sched_image:
    # One frame of the Mandelbrot view, for the paper; the driver checks it against the
    # sequential render before writing it.
    input:
        driver=sched_plan.DRIVER,
    output:
        sched_plan.IMAGE.format(profile=PROFILE),
    log:
        f"{LOGS}/sched/image.log",
    params:
        args=lambda wc, output: " ".join(
            sched_plan.driver_command(
                PB,
                sched_plan.SchedCell("mandelbrot", "ws_sync", max(PB["sched"]["threads"])),
                "",
                image_path=output[0],
                frames=1,
            )[1:]
        ),
    conda:
        CONDA_ENV
    shell:
        "{input.driver} {params.args} > {log} 2>&1"


rule sched_fracsteal:
    # The explorer with its window (SDL2): `snakemake -c1 sched_fracsteal`, not part of
    # the paper. Without SDL2 it stops and its log says which package to install.
    input:
        sources=SCHED_FRACSTEAL_SOURCES,
    output:
        sched_fracsteal.BINARY,
    log:
        f"{sched_fracsteal.BUILD}/fracsteal.log",
    params:
        out_dir=lambda wc, output: Path(output[0]).parent.resolve(),
    threads: workflow.cores
    conda:
        CONDA_ENV
    shell:
        "make -C native/sched/fracsteal OUT_DIR={params.out_dir} -j{threads} fracsteal > {log} 2>&1 "
        "|| {{ tail -n 4 {log} >&2; exit 1; }}"


rule sched_fracsteal_headless:
    # The explorer's scripted mode only: builds everywhere (no SDL2).
    input:
        sources=SCHED_FRACSTEAL_SOURCES,
    output:
        sched_fracsteal.HEADLESS,
    log:
        f"{sched_fracsteal.BUILD}/fracsteal-headless.log",
    params:
        out_dir=lambda wc, output: Path(output[0]).parent.resolve(),
    threads: workflow.cores
    conda:
        CONDA_ENV
    shell:
        "make -C native/sched/fracsteal OUT_DIR={params.out_dir} -j{threads} headless > {log} 2>&1"


BUILDS.append(sched_fracsteal.HEADLESS)


rule sched_fracsteal_zoom:
    # The explorer's zoom script, headless: every frame in parallel on ws_sync and
    # sequentially, timed and compared byte for byte. It claims every core.
    input:
        binary=sched_fracsteal.HEADLESS,
        script=PB["sched"]["fracsteal"]["script"],
        builds=after_builds(),
    output:
        record=sched_fracsteal.RECORD.format(profile=PROFILE),
        console=sched_fracsteal.CONSOLE.format(profile=PROFILE),
        strip=sched_fracsteal.STRIP.format(profile=PROFILE),
    log:
        f"{LOGS}/sched/fracsteal_zoom.log",
    params:
        # what the zoom measures: a change reruns it
        zoom=sched_fracsteal.parameters(PB),
        parbench=PARBENCH,
        profile=PROFILE,
        overrides=OVERRIDE_ARGS,
    threads: workflow.cores
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} sched-fracsteal --profile {params.profile} --binary {input.binary} "
        "{params.overrides} 2>> {log} | tee -a {log}"


rule sched_fracsteal_aggregate:
    # The zoom's frame times as a tidy table.
    input:
        record=sched_fracsteal.RECORD.format(profile=PROFILE),
    output:
        frames=table_report("sched", f"{sched_fracsteal.TABLE}.parquet"),
    log:
        f"{LOGS}/sched/fracsteal_aggregate.log",
    params:
        out_dir=lambda wc, output: Path(output.frames).parent,
        parbench=PARBENCH,
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} sched-fracsteal-aggregate --out-dir {params.out_dir} {input.record} 2>> {log} "
        "| tee -a {log}"
