"""Shared fixtures. `liboqs_dir` provides a liboqs with ML-DSA-44 (what the smoke
profile needs) once per checkout, in the same folder the pipeline would use."""

import os
import signal
from pathlib import Path

import pytest

from parbench import paths
from parbench.native import liboqs

REPO = Path(__file__).resolve().parents[1]


def pytest_configure(config):
    # Some tests press Ctrl+C (SIGINT) on the pipeline and on cells. A shell that starts the
    # test run in the background makes SIGINT ignored, and ignored signals stay ignored in
    # every child: restore the default so that those tests test the product, not the shell.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


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
