"""sigpar: sign/verify throughput of classical and post-quantum signatures across
worker counts, threading against multiprocessing (seed 000)."""

from parbench.studies.base import Header, Study, SystemPackage
from parbench.studies.sigpar import algorithms, plan


def _complete_schema(schema: dict) -> dict:
    schema["$defs"]["sigpar_algorithm"]["enum"] = list(algorithms.CATALOG)
    return schema


STUDY = Study(
    name="sigpar",
    title="Signature throughput across workers",
    summary="sign/verify throughput of classical and post-quantum signatures across worker counts, "
            "threads against processes against native threads, per backend",
    cells=plan.cells,
    job_seconds=plan.job_seconds(),
    cell_rule="sigpar_cell",
    header=plan.header,
    commands={
        "sigpar-cell": "parbench.studies.sigpar.run_cell",
        "sigpar-sweep-token": "parbench.studies.sigpar.commands",
        "sigpar-algorithm": "parbench.studies.sigpar.commands",
        "sigpar-aggregate": "parbench.studies.sigpar.commands",
    },
    figures_module="parbench.studies.sigpar.figures",
    paper_module="parbench.studies.sigpar.paper",
    config_errors=plan.config_errors,
    complete_schema=_complete_schema,
    override_aliases={"algorithms": "sigpar/algorithms"},
    liboqs_ids=lambda cfg: algorithms.liboqs_cmake_ids(cfg["sigpar"]["algorithms"]),
    liboqs_names=lambda: {a.oqs_cmake_id: a.oqs_name for a in algorithms.CATALOG.values() if a.oqs_cmake_id},
    failures=plan.failures,
    rerun_tokens=plan.rerun_tokens,
    rerun_names=plan.rerun_names,
    system_packages=(
        SystemPackage("libssl-dev", Header("openssl/evp.h"),
                      "the crypto shim of the openssl-cffi backend and the native-threads mode; without it those "
                      "cells are recorded as unavailable", required=False, brew="openssl@3"),
    ),
)
