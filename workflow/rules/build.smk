# Native code every study may share: liboqs for liboqs-python (an installed one, or the
# vendored source built with only the algorithms the run's studies need). A study's own
# native code is built by its rules file.


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
