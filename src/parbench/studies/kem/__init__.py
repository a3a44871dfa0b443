"""kem: ML-KEM-512/768/1024 keypair, encaps and decaps in cycles with their percentile
distributions, from the seed's own library (libcrux-ml-kem, portable and AVX2 or NEON)
beside liboqs' ML-KEM and OpenSSL's X25519, with a chosen cycle counter; and encaps and
decaps per second across threads (seed 002)."""

from parbench.studies.base import Study
from parbench.studies.kem import plan

STUDY = Study(
    name="kem",
    title="ML-KEM cycle counts",
    summary="ML-KEM keypair/encaps/decaps cycles of libcrux-ml-kem (portable, AVX2/NEON) beside liboqs "
            "and X25519, with percentile distributions, and encaps/decaps throughput across threads",
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
