# Native code every study may share: liboqs for liboqs-python (an installed one, or the
# vendored source built with only the algorithms the run's studies need). A study's own
# native code is built by its rules file, which adds its outputs to BUILDS; the barrier
# rule builds_done waits for all of them before any cell starts.


if LIBOQS_DIR:

    rule liboqs:
        input:
            shim="native/liboqs/oqs_compat_shim.c",
            lock="native/liboqs/fetch/Cargo.lock",
        output:
            descriptor=LIBOQS,
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

    BUILDS.append(LIBOQS)


rule builds_done:
    # The barrier: every build of the run is done (an input function, so that it sees the
    # builds every rules file added); each measured job takes its output as an input.
    input:
        lambda wc: BUILDS,
    output:
        BUILDS_DONE,
    log:
        f"{LOGS}/builds_done.log",
    params:
        parbench=PARBENCH,
    priority: FIRST_PRIORITY
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} builds-done --out {output} {input} > {log} 2>&1"
