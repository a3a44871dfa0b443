# sigpar: sign/verify throughput of classical and post-quantum signatures across worker
# counts, threads against processes against native threads, per backend. The crypto
# shim's build -> cells -> per-algorithm blocks -> tidy Parquet and the seed's files ->
# figures -> the generated parts of its paper section. Python:
# src/parbench/studies/sigpar/; C: native/cryptoshim/; config: conf/sigpar/; table captions:
# workflow/report/sigpar/.

from parbench.studies.sigpar import plan as sigpar_plan

SIGPAR_ALGORITHMS = PB["sigpar"]["algorithms"]
SIGPAR_STEM = sigpar_plan.CELL.format(
    profile=PROFILE,
    variant="{variant}",
    algorithm="{algorithm}",
    operation="{operation}",
    workers="{workers}",
    rep="{rep}",
)
SIGPAR_ALGORITHM_TABLE = sigpar_plan.ALGORITHM_TABLE.format(profile=PROFILE, algorithm="{algorithm}")


wildcard_constraints:
    algorithm=r"[A-Za-z0-9+\-]+",
    operation="sign|verify",
    variant="|".join(sigpar_plan.VARIANTS),
    workers=r"\d+",
    rep=r"\d+",


rule sigpar_openssl:
    # The OpenSSL pyca/cryptography ships (its wheels link it statically), built from the
    # crates.io package openssl-src: the shim and the native runner link it, so that every
    # backend of a classical algorithm runs the same OpenSSL. Where it cannot be built,
    # its descriptor says why and the shim uses the system OpenSSL.
    input:
        lock="native/openssl/fetch/Cargo.lock",
    output:
        sigpar_plan.openssl(),
    log:
        f"{sigpar_plan.openssl_build()}/build.log",
    params:
        out=lambda wc, output: Path(output[0]).parent,
        python=PYTHON,
    threads: workflow.cores
    conda:
        CONDA_ENV
    shell:
        "{params.python} -m parbench.native.openssl --out {params.out} --jobs {threads} > {log} 2>&1"


rule sigpar_shim:
    # The crypto shim over that OpenSSL and the run's liboqs: the cffi library of the
    # openssl-cffi backend and the native runner of the native-threads mode. A machine
    # without OpenSSL's headers gets a descriptor saying so; its cells are then recorded
    # as unavailable, with that reason.
    input:
        sources=sigpar_plan.shim_sources(),
        liboqs=[LIBOQS] if LIBOQS else [],
        openssl=sigpar_plan.openssl(),
    output:
        sigpar_plan.shim(LIBOQS),
    log:
        f"{sigpar_plan.shim_build(LIBOQS)}/build.log",
    params:
        out=lambda wc, output: Path(output[0]).parent,
        liboqs=lambda wc, input: f"--liboqs {Path(input.liboqs[0]).parent}" if input.liboqs else "",
        openssl=lambda wc, input: Path(input.openssl).parent,
        python=PYTHON,
    threads: workflow.cores
    conda:
        CONDA_ENV
    shell:
        "{params.python} -m parbench.studies.sigpar.shim --out {params.out} --jobs {threads} {params.liboqs} "
        "--openssl {params.openssl} > {log} 2>&1"


BUILDS.append(sigpar_plan.shim(LIBOQS))


rule sigpar_sweep_token:
    # Every cell of an algorithm depends on this file; forcing it (make rerun ALG=...)
    # reruns exactly that algorithm's cells.
    output:
        sigpar_plan.SWEEP.format(profile=PROFILE, algorithm="{algorithm}"),
    log:
        f"{LOGS}/sigpar/sweeps/{{algorithm}}.log",
    params:
        parbench=PARBENCH,
    # instant, and every sigpar cell waits for it: first, so that cells keep their order
    priority: FIRST_PRIORITY - 1
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} sigpar-sweep-token --algorithm {wildcards.algorithm} --out {output} > {log} 2>&1"


rule sigpar_cell:
    # One measured cell; it claims every core, so cells run one at a time.
    input:
        unpack(lambda wc: sigpar_plan.cell_inputs(PROFILE, sigpar_plan.Cell.from_wildcards(wc), LIBOQS)),
        builds=after_builds(),
    output:
        csv=f"{SIGPAR_STEM}.csv",
        system=f"{SIGPAR_STEM}_system.json",
        cell=f"{SIGPAR_STEM}_cell.json",
    log:
        f"{LOGS}/sigpar/{{variant}}/{{algorithm}}_{{operation}}_t{{workers}}_r{{rep}}.log",
    params:
        # what the cell measures: a change reruns the cell
        cell=lambda wc: sigpar_plan.cell_parameters(PB, sigpar_plan.Cell.from_wildcards(wc)),
        mode=lambda wc: sigpar_plan.Cell.from_wildcards(wc).mode,
        # the backend, and the builds it runs on (liboqs, the crypto shim)
        builds=lambda wc, input: sigpar_plan.cell_arguments(sigpar_plan.Cell.from_wildcards(wc), input),
        parbench=PARBENCH,
        profile=PROFILE,
        overrides=OVERRIDE_ARGS,
    threads: workflow.cores
    priority: lambda wc: cell_priority("sigpar", sigpar_plan.Cell.from_wildcards(wc))
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} sigpar-cell --profile {params.profile} --algorithm {wildcards.algorithm} "
        "--operation {wildcards.operation} --mode {params.mode} --workers {wildcards.workers} --rep {wildcards.rep} "
        "{params.builds} {params.overrides} 2>> {log} | tee -a {log}"


rule sigpar_algorithm:
    # One algorithm's cells: prints the seed's per-algorithm block.
    input:
        cells=lambda wc: sigpar_plan.cell_records(PB, wc.algorithm),
    output:
        SIGPAR_ALGORITHM_TABLE,
    log:
        f"{LOGS}/sigpar/algorithms/{{algorithm}}.log",
    params:
        index=lambda wc: SIGPAR_ALGORITHMS.index(wc.algorithm) + 1,
        total=len(SIGPAR_ALGORITHMS),
        min_ops=PB["sigpar"]["min_ops_per_worker"],
        parbench=PARBENCH,
    # the algorithm's block follows right after its last cell
    priority: lambda wc: min(cell_priority("sigpar", c) for c in sigpar_plan.cells_of(PB, wc.algorithm))
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} sigpar-algorithm --index {params.index} --total {params.total} --out {output} "
        "--min-ops-per-worker {params.min_ops} "
        "{input.cells} 2>> {log} | tee -a {log}"
