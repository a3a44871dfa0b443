"""Shared fixtures.

- `liboqs_dir` provides a liboqs with ML-DSA-44 (what the smoke profile needs) once per
  checkout, in the same folder the pipeline would use.
- `smoke_run` runs the whole pipeline once per test session on the smoke profile, in a
  temporary copy of the checkout (`smoke_checkout`): started, interrupted with Ctrl+C
  once some sigpar cells are done, then resumed to the end. Every study's end-to-end
  tests (tests/test_pipeline_smoke.py, tests/test_<study>_pipeline.py) read that one run.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from parbench import paths
from parbench.native import liboqs


def _is_subreaper() -> bool:
    """Whether this process is a child subreaper (Linux's PR_GET_CHILD_SUBREAPER)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    flag = ctypes.c_int(0)
    ctypes.CDLL(None, use_errno=True).prctl(37, ctypes.byref(flag), 0, 0, 0)
    return bool(flag.value)


@pytest.fixture(autouse=True)
def _pytest_stays_no_subreaper():
    """The real load meter makes its process a child subreaper (a cell's own process):
    run inside pytest's, every later test's orphans would stay zombies. The test that does
    it fails here, by name, instead of a later one far away."""
    yield
    assert not _is_subreaper(), "this test made pytest's process a child subreaper (use a fake load meter)"

REPO = Path(__file__).resolve().parents[1]

# What a sanitizer or UBSan prints when it finds something
SANITIZER_TEXT = ("ThreadSanitizer", "AddressSanitizer", "LeakSanitizer", "runtime error")


def assert_clean(proc: subprocess.CompletedProcess, what: str) -> None:
    """A native build or run (`what`) exited 0 and no sanitizer reported anything."""
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{what} failed (exit {proc.returncode}):\n{output[-6000:]}"
    for text in SANITIZER_TEXT:
        assert text not in output, f"{what}: '{text}' in the output:\n{output[-6000:]}"


def pytest_configure(config):
    # Some tests press Ctrl+C (SIGINT) on the pipeline and on cells. A shell that starts the
    # test run in the background makes SIGINT ignored, and ignored signals stay ignored in
    # every child: restore the default so that those tests test the product, not the shell.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def liboqs_dir():
    """liboqs with ML-DSA-44, built once into the checkout (where the pipeline builds it).
    `make test` runs the unit tests in several pytest-xdist workers, each with sessions
    of its own: a file lock lets one build it while the others wait, then reuse it."""
    from filelock import FileLock

    ids = ["SIG_ml_dsa_44"]
    out = REPO / paths.liboqs_build_dir(ids)
    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out) + ".lock"):
        if not (out / liboqs.DESCRIPTOR).exists():
            liboqs.provide(out, ids, jobs=os.cpu_count() or 1)
    return out


@pytest.fixture(scope="session")
def shim_dir(liboqs_dir, tmp_path_factory):
    """The crypto shim (native/cryptoshim) built against `liboqs_dir`, in a folder of the
    test session's own (the pipeline's build stays as the pipeline made it)."""
    from parbench.studies.sigpar import shim

    out = tmp_path_factory.mktemp("cryptoshim")
    doc = shim.build(out, liboqs_dir, jobs=os.cpu_count() or 1)
    assert doc["available"], doc.get("reason")
    return out


@pytest.fixture
def in_repo(monkeypatch):
    """Run with the checkout as the working directory (as Snakemake jobs do)."""
    monkeypatch.chdir(REPO)
    return REPO


SMOKE = "smoke"


def run_snakemake(workdir, *args, timeout=1200, **kw):
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=workdir, capture_output=True,
                          text=True, timeout=timeout, **kw)


def _copy_checkout(dest: Path) -> Path:
    """The checkout's files (tracked and not ignored), copied into `dest` as a fresh clone
    would have them."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(src.read_bytes())
            (dest / rel).chmod(src.stat().st_mode)
    return dest


@pytest.fixture(scope="session")
def smoke_checkout(tmp_path_factory):
    """The checkout's files (tracked and not ignored), copied as a fresh clone would have them."""
    return _copy_checkout(tmp_path_factory.mktemp("checkout"))


@pytest.fixture(scope="session")
def fresh_checkout(tmp_path_factory):
    """Makes another fresh copy of the checkout (call it), for a test that runs the pipeline
    its own way (another executor, say) apart from the shared smoke run."""
    return lambda: _copy_checkout(tmp_path_factory.mktemp("checkout"))


def _sigpar_cells(workdir):
    return sorted((workdir / "data/raw" / SMOKE / "parallelism").glob("*/*_cell.json"))


def _pgid(pid):
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def _running(p) -> list[str] | None:
    """A process's command line if it still runs: None for one that has exited, zombies
    included (dead, only waiting for a parent or init to collect its exit status)."""
    try:
        return None if p.status() == psutil.STATUS_ZOMBIE else p.cmdline()
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None


def _interrupt(workdir) -> dict:
    """Start the smoke pipeline, press Ctrl+C once three sigpar cells are done, and record
    what is left: processes, finished cells, and what a new run would measure."""
    proc = subprocess.Popen([sys.executable, "-m", "snakemake", "-c2", "report", "--configfile",
                             f"conf/{SMOKE}.yaml"], cwd=workdir, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    deadline = time.monotonic() + 600
    while len(_sigpar_cells(workdir)) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert proc.poll() is None, "the smoke run ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl+C in a terminal does
    out, _ = proc.communicate(timeout=120)
    time.sleep(1)
    left = [cmd for p in psutil.process_iter(["pid"]) if _pgid(p.pid) == proc.pid and (cmd := _running(p))]
    finished = {str(p): json.loads(p.read_text())["status"] for p in _sigpar_cells(workdir)}
    plan = run_snakemake(workdir, "-n", "report", "--quiet", "rules", "--configfile", f"conf/{SMOKE}.yaml")
    planned = {line.split()[0]: int(line.split()[1]) for line in plan.stdout.splitlines()
               if len(line.split()) >= 2 and line.split()[1].isdigit()}
    return {"returncode": proc.returncode, "output": out, "left": left, "finished": finished, "planned": planned}


@pytest.fixture(scope="session")
def smoke_run(smoke_checkout):
    """{"interrupted": what the Ctrl+C left, "kept": sigpar cells kept, "resumed": the
    CompletedProcess of the run that finished the pipeline}."""
    interrupted = _interrupt(smoke_checkout)
    kept = len(_sigpar_cells(smoke_checkout))
    resumed = run_snakemake(smoke_checkout, "-c2", "report", "--configfile", f"conf/{SMOKE}.yaml")
    assert resumed.returncode == 0, resumed.stdout[-4000:] + resumed.stderr[-4000:]
    return {"interrupted": interrupted, "kept": kept, "resumed": resumed}
