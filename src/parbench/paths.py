"""The paths every study shares (relative to the repo root, which is Snakemake's
working directory). Measured data is partitioned by profile, so runs of different
profiles never overwrite each other. A study's own layout under these folders is
defined in its plan module (e.g. `parbench.studies.sigpar.plan.CELL`)."""

from __future__ import annotations

import hashlib

RAW = "data/raw/{profile}"
PROCESSED = "data/processed/{profile}"
FIGURES = "figures/{profile}"
LOGS = "logs/{profile}"
PAPER_DIR = "paper"
PAPER_GENERATED = "paper/_generated"
# The paper's copies of the figures it shows (from FIGURES): inside the Quarto project,
# because Quarto typesets the PDF with Typst rooted at the project folder, which refuses
# any file outside it.
PAPER_FIGURES = "paper/_generated/figures/{profile}"
PAPER_SECTIONS = "paper/sections"
PAPER_OUTPUT = "paper/_output/index.html"
PAPER_PDF = "paper/_output/index.pdf"
LIBOQS_BUILD = "native/build/liboqs/{key}"


def liboqs_build_dir(cmake_ids: list[str]) -> str:
    """The build folder of a liboqs with exactly these algorithms: a change of the list
    is a new folder (a new build); profiles needing the same list share one."""
    key = hashlib.sha256(";".join(sorted(cmake_ids)).encode()).hexdigest()[:12]
    return LIBOQS_BUILD.format(key=key)


def paper_fragment(study: str, fragment: str) -> str:
    """A generated part of a study's paper section."""
    return f"{PAPER_GENERATED}/{study}/{fragment}.md"


def paper_section(study: str) -> str:
    """The study's section of the paper: its fixed prose, including its generated parts."""
    return f"{PAPER_SECTIONS}/{study}.qmd"
