"""Shared fixtures. `liboqs_dir` provides a liboqs with ML-DSA-44 (what the smoke
profile needs) once per checkout, in the same folder the pipeline would use."""

import os
from pathlib import Path

import pytest

from parbench import paths
from parbench.native import liboqs

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def liboqs_dir():
    ids = ["SIG_ml_dsa_44"]
    out = REPO / paths.liboqs_build_dir(ids)
    if not (out / liboqs.DESCRIPTOR).exists():
        liboqs.provide(out, ids, jobs=os.cpu_count() or 1)
    return out


@pytest.fixture
def in_repo(monkeypatch):
    """Run with the checkout as the working directory (as Snakemake jobs do)."""
    monkeypatch.chdir(REPO)
    return REPO
