# kem: ML-KEM cycle counts of libcrux-ml-kem (the seed's library) beside liboqs and
# X25519, and encaps/decaps throughput across threads. The binary build -> the counter
# probe -> cells -> tidy Parquet and the seed's blocks -> figures -> the generated parts
# of its paper section. Python: src/parbench/studies/kem/; Rust and C: native/kem/;
# config: conf/kem/; table captions: workflow/report/kem/.

from parbench.studies.kem import plan as kem_plan

KEM_CYCLES_STEM = kem_plan.CYCLES_CELL.format(
    profile=PROFILE, implementation="{implementation}", parameter_set="{parameter_set}", operation="{operation}"
)
KEM_THROUGHPUT_STEM = kem_plan.THROUGHPUT_CELL.replace("{threads:02d}", "{threads}").format(
    rep="{rep}",
    profile=PROFILE,
    implementation="{implementation}",
    parameter_set="{parameter_set}",
    operation="{operation}",
    threads="{threads}",
)
KEM_COUNTERS = kem_plan.COUNTERS.format(profile=PROFILE)


wildcard_constraints:
    implementation="|".join(kem_plan.IMPLEMENTATIONS),
    parameter_set=r"ML-KEM-\d+|X25519",
    operation="keypair|encaps|decaps|derive",


rule kem_build:
    # cargo rebuilds only what changed; Cargo.lock pins every crate (--locked), fetched
    # from crates.io like the liboqs source. No Criterion: it is for `cargo bench` only.
    input:
        manifest=f"{kem_plan.CRATE}/Cargo.toml",
        sources=kem_plan.crate_sources(),
    output:
        binary=kem_plan.BINARY,
    log:
        f"{kem_plan.BUILD}/build.log",
    params:
        # the folder native/kem/.cargo/config.toml names, which cargo finds only when run
        # from inside the crate
        target=kem_plan.CARGO_TARGET,
        built=f"{kem_plan.CARGO_TARGET}/release/parbench-kem",
    threads: workflow.cores
    conda:
        CONDA_ENV
    shell:
        "(cargo build --release --locked --no-default-features --bin parbench-kem "
        "--manifest-path {input.manifest} --target-dir {params.target} -j {threads} "
        "&& cp {params.built} {output.binary}.tmp && mv {output.binary}.tmp {output.binary}) > {log} 2>&1"


BUILDS.append(kem_plan.BINARY)


rule kem_counters:
    # Which cycle counters this machine offers and the one the cells use; a forced
    # counter the machine lacks stops the run here, before any cell.
    input:
        binary=kem_plan.BINARY,
        builds=after_builds(),
    output:
        KEM_COUNTERS,
    log:
        f"{LOGS}/kem/counters.log",
    params:
        counter=lambda wc: kem_plan.counter_parameters(PB),
        parbench=PARBENCH,
        profile=PROFILE,
        overrides=OVERRIDE_ARGS,
    priority: FIRST_PRIORITY
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} kem-counters --profile {params.profile} --binary {input.binary} "
        "--out {output} {params.overrides} 2>> {log} | tee -a {log}"


rule kem_cell:
    # One cycles cell; it claims every core, so cells run one at a time.
    input:
        unpack(kem_plan.cycles_inputs(PROFILE, LIBOQS)),
        builds=after_builds(),
    output:
        record=f"{KEM_CYCLES_STEM}.json",
    log:
        f"{LOGS}/kem/cycles/{{implementation}}/{{parameter_set}}_{{operation}}.log",
    params:
        # what the cell measures: a change reruns the cell
        cell=lambda wc: kem_plan.cell_parameters(PB, kem_plan.CyclesCell.from_wildcards(wc)),
        liboqs=lambda wc, input: f"--liboqs {Path(input.liboqs).parent}" if "liboqs" in input.keys() else "",
        parbench=PARBENCH,
        profile=PROFILE,
        overrides=OVERRIDE_ARGS,
    threads: workflow.cores
    priority: lambda wc: cell_priority("kem", kem_plan.CyclesCell.from_wildcards(wc))
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} kem-cell --profile {params.profile} --implementation {wildcards.implementation} "
        "--parameter-set {wildcards.parameter_set} --operation {wildcards.operation} "
        "--binary {input.binary} --out {output.record} {params.liboqs} {params.overrides} 2>> {log} | tee -a {log}"


rule kem_throughput:
    # One thread-sweep cell: operations per second on N threads.
    input:
        unpack(kem_plan.throughput_inputs(PROFILE, LIBOQS)),
        builds=after_builds(),
    output:
        record=f"{KEM_THROUGHPUT_STEM}.json",
    log:
        f"{LOGS}/kem/throughput/{{implementation}}/{{parameter_set}}_{{operation}}_t{{threads}}_r{{rep}}.log",
    params:
        cell=lambda wc: kem_plan.cell_parameters(PB, kem_plan.ThroughputCell.from_wildcards(wc)),
        liboqs=lambda wc, input: f"--liboqs {Path(input.liboqs).parent}" if "liboqs" in input.keys() else "",
        parbench=PARBENCH,
        profile=PROFILE,
        overrides=OVERRIDE_ARGS,
    threads: workflow.cores
    priority: lambda wc: cell_priority("kem", kem_plan.ThroughputCell.from_wildcards(wc))
    conda:
        CONDA_ENV
    shell:
        "{params.parbench} kem-throughput --profile {params.profile} --implementation {wildcards.implementation} "
        "--parameter-set {wildcards.parameter_set} --operation {wildcards.operation} --threads {wildcards.threads} "
        "--rep {wildcards.rep} --binary {input.binary} --out {output.record} {params.liboqs} {params.overrides} 2>> {log} | tee -a {log}"
