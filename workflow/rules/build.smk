# Native code: liboqs for liboqs-python (an installed one, or the vendored source
# built with only the configured algorithms), and the schedulers' driver.


if LIBOQS_DIR:

    rule liboqs:
        input:
            shim="native/liboqs/oqs_compat_shim.c",
            lock="native/liboqs/fetch/Cargo.lock",
        output:
            descriptor=f"{LIBOQS_DIR}/liboqs.json",
        log:
            f"{LIBOQS_DIR}/build.log",
        params:
            algorithms=" ".join(LIBOQS_IDS),
            out=lambda wc, output: Path(output.descriptor).parent,
            python=PYTHON,
        threads: workflow.cores
        conda:
            CONDA_ENV
        shell:
            "{params.python} -m parbench.native.liboqs --out {params.out} --jobs {threads} "
            "{params.algorithms} > {log} 2>&1"


rule sched_build:
    # make rebuilds only what changed; peers (OpenMP, TBB) are detected by make.
    input:
        sources=SCHED_SOURCES,
    output:
        driver=paths.SCHED_DRIVER,
        peers=paths.SCHED_PEERS,
    log:
        f"{paths.SCHED_BUILD}/build.log",
    params:
        build_dir=lambda wc, output: Path(output.driver).parent.resolve(),
    threads: workflow.cores
    conda:
        CONDA_ENV
    shell:
        "(make -C native/sched BUILD_DIR={params.build_dir} -j{threads} all "
        "&& {output.driver} peers > {output.peers}) > {log} 2>&1"
