"""kem: ML-KEM-512/768/1024 keypair, encaps and decaps per call with their percentile
distributions, from the seed's own library (libcrux-ml-kem, portable and AVX2 or NEON)
beside liboqs' ML-KEM and OpenSSL's X25519, counted by a chosen counter (core cycles
where the machine has one, else TSC ticks or nanoseconds); and encaps or decaps per
second across threads (seed 002)."""

from parbench.studies.base import Study
from parbench.studies.kem import plan

STUDY = Study(
    name="kem",
    # unit-neutral: a machine without a core-cycle counter counts TSC ticks or nanoseconds
    title="ML-KEM key exchange: cost per call and throughput",
    summary="ML-KEM keypair/encaps/decaps cost per call of libcrux-ml-kem (portable, AVX2/NEON) beside liboqs "
            "and X25519, in the counter's unit (core cycles, TSC ticks or ns), with percentile distributions, "
            "and encaps/decaps throughput across threads",
    cells=plan.cells,
    job_seconds=plan.job_seconds(),
    cell_rule="kem_cell",
    header=plan.header,
    commands={
        "kem-counters": "parbench.studies.kem.run_cell",
        "kem-cell": "parbench.studies.kem.run_cell",
        "kem-throughput": "parbench.studies.kem.run_cell",
        "kem-aggregate": "parbench.studies.kem.commands",
    },
    figures_module="parbench.studies.kem.figures",
    paper_module="parbench.studies.kem.paper",
    config_errors=plan.config_errors,
    liboqs_ids=plan.liboqs_ids,
    liboqs_names=lambda: dict(plan.LIBOQS_NAMES),
    failures=plan.failures,
)
