"""Published ML-KEM figures the paper sets beside this run's measurements, each with its
source, exactly as published. They are cited, never measured here, and never drawn as
if they were; the paper says what differs (machine, counter, parameter set).

Only sources that ship with what this study builds or starts from are used, so that
every number can be checked against its source from the checkout:

- the seed itself (libcrux-ml-kem's `benches/README.md`, in `shared/seeds/` of the
  project): its "Output Format" example block for ML-KEM-512, medians in cycles, on a
  machine, implementation and counter it does not state;
- `src/PERFORMANCE.md` of the libcrux-ml-kem 0.0.11 crate this study builds (in Cargo's
  registry after `cargo fetch`): libcrux's times in microseconds "on an M1 MacBook Air
  with 16 GB of memory", parameter set not stated.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Published:
    source: str
    where: str
    machine: str
    implementation: str
    parameter_set: str | None  # None: the source does not say
    operation: str
    value: float
    unit: str  # "cycles" or "us"


SEED = ("the seed's README, its example output",
        "seed 002 of the project (libcrux-ml-kem benches/README.md)")
PERFORMANCE_MD = ("libcrux-ml-kem 0.0.11, src/PERFORMANCE.md",
                  "~/.cargo/registry/src/*/libcrux-ml-kem-0.0.11/src/PERFORMANCE.md")

FIGURES = (
    Published(*SEED, "not stated", "libcrux-ml-kem (backend not stated)", "ML-KEM-512", "keypair", 34938, "cycles"),
    Published(*SEED, "not stated", "libcrux-ml-kem (backend not stated)", "ML-KEM-512", "encaps", 38331, "cycles"),
    Published(*SEED, "not stated", "libcrux-ml-kem (backend not stated)", "ML-KEM-512", "decaps", 43913, "cycles"),
    Published(*PERFORMANCE_MD, "M1 MacBook Air, 16 GB", "libcrux", None, "keypair", 30.671, "us"),
    Published(*PERFORMANCE_MD, "M1 MacBook Air, 16 GB", "libcrux", None, "encaps", 36.31, "us"),
    Published(*PERFORMANCE_MD, "M1 MacBook Air, 16 GB", "libcrux", None, "decaps", 36.3, "us"),
)
