"""The native code on arm64 Linux, from this x86-64 machine: built with Debian's cross
compiler (gcc-aarch64-linux-gnu) and Rust (rustc-web with libstd-rust-web-dev:arm64), run
under qemu-aarch64-static (no binfmt needed: called by name, -L /usr/aarch64-linux-gnu).

- the sched library's C unit and stress tests (`make test` with EMULATOR), and the driver
  on both workloads, verified;
- the crypto shim's C tests and a runner cell (`make test`, OpenSSL from libssl-dev:arm64;
  without liboqs: no liboqs cross build here);
- the kem crate's own tests and the seed's benchmark on libcrux's NEON backend (its first
  run anywhere in this project: the x86-64 machines run AVX2), every result checked.

Function only: qemu shows neither ARM timing (it translates the code) nor ARM's weaker
memory ordering (the translated threads run under x86-64's stronger model), so a missing
barrier in the C11 code would pass here; the real check of the memory orders is an arm64
machine (and ThreadSanitizer, which the x86-64 tests run). The packages come from
`tests/cross/install.sh`, which `make test` runs as root on Debian; without them these
tests skip and say so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCHED = REPO / "native" / "sched"
CRYPTOSHIM = REPO / "native" / "cryptoshim"
CRATE = REPO / "native" / "kem"
CC = "aarch64-linux-gnu-gcc"
QEMU = "qemu-aarch64-static"
SYSROOT = "/usr/aarch64-linux-gnu"
MULTIARCH_LIB = "/usr/lib/aarch64-linux-gnu"
# The guest's loader comes from -L (the cross libc's); its libc must be the same build, so
# the cross libc leads the library path too: the host's ld.so.cache also lists multiarch
# libc6:arm64 (pulled in by libssl-dev:arm64), and that libc with the cross loader hangs
# in the first pthread_create. Multiarch libraries (libcrypto) come after it.
EMULATOR = f"{QEMU} -L {SYSROOT} -E LD_LIBRARY_PATH={SYSROOT}/lib:{MULTIARCH_LIB}"
RUST_TARGET = "aarch64-unknown-linux-gnu"
INSTALL = "tests/cross/install.sh (run by `make test` as root on Debian)"

_missing = [tool for tool in (CC, QEMU, "make") if shutil.which(tool) is None]
pytestmark = [
    pytest.mark.native,
    pytest.mark.skipif(bool(_missing), reason=f"{', '.join(_missing)} not installed; see {INSTALL}"),
]


def run(cmd, timeout=1200, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def ok(proc: subprocess.CompletedProcess, what: str) -> str:
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{what} failed (exit {proc.returncode}):\n{out[-6000:]}"
    return out


def aarch64_elf(path: Path) -> bool:
    head = path.read_bytes()[:20]
    return head[:4] == b"\x7fELF" and int.from_bytes(head[18:20], "little") == 183  # EM_AARCH64


def qemu(*args: str, **kw) -> subprocess.CompletedProcess:
    return run([*EMULATOR.split(), *args], **kw)


def test_qemu_runs_arm64_code():
    """The emulator works here (a program that says which machine it thinks it is on)."""
    proc = qemu("/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1", "--help")
    assert proc.returncode == 0 and "aarch64" in proc.stdout


@pytest.fixture(scope="module")
def sched_build(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sched-aarch64")


def test_sched_c_tests_pass_under_qemu(sched_build):
    """The library's unit and stress tests, built by the Makefile for aarch64 and run
    under qemu by its own test runner (quick sizes: qemu is 5-10x slower)."""
    out = ok(run(["make", "-j2", "-C", str(SCHED), f"BUILD_DIR={sched_build}", f"CC={CC}",
                  "CXX=aarch64-linux-gnu-g++", "PBS_WITH_OPENMP=0", "PBS_WITH_TBB=0", f"EMULATOR={EMULATOR}",
                  "TEST_ARGS=--quick", "TEST_TIMEOUT=600", "test", "all"]), "make test (aarch64)")
    assert "== test: all passed ==" in out and out.count(f"-- {QEMU} ") == 4
    assert aarch64_elf(sched_build / "test" / "test_deque") and aarch64_elf(sched_build / "parbench-sched")


@pytest.mark.parametrize("workload, args", [
    ("quicksort", ["--size", "200000", "--cutoff", "2000", "--reps", "2"]),
    ("mandelbrot", ["--width", "96", "--height", "64", "--threshold", "64", "--max-iter", "200", "--frames", "2"]),
])
@pytest.mark.parametrize("scheduler", ["lifo", "ws", "ws_sync"])
def test_sched_driver_verifies_under_qemu(sched_build, tmp_path, workload, args, scheduler):
    """The driver's own verification (sorted permutation; every frame equal to the
    sequential render byte for byte) on 3 threads, and the counters adding up."""
    driver = sched_build / "parbench-sched"
    if not driver.exists():
        pytest.skip("the aarch64 driver was not built (see test_sched_c_tests_pass_under_qemu)")
    out = tmp_path / "run.json"
    ok(qemu(str(driver), workload, "--scheduler", scheduler, "--threads", "3", *args, "--json", str(out),
            timeout=600), f"parbench-sched {workload} --scheduler {scheduler} (aarch64)")
    report = json.loads(out.read_text())
    assert report["verified"] is True and len(report["reps"]) == 2
    for rep in report["reps"]:
        counters = rep["counters"]
        assert sum(w["tasks_executed"] for w in counters["per_worker"]) == counters["tasks_spawned"] > 0


def test_cryptoshim_c_tests_pass_under_qemu(tmp_path):
    if not Path(MULTIARCH_LIB, "libcrypto.so").exists():
        pytest.skip(f"libssl-dev:arm64 is not installed; see {INSTALL}")
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command (makes the runner cell's keys) is not installed")
    env = dict(os.environ, PKG_CONFIG_LIBDIR=f"{MULTIARCH_LIB}/pkgconfig")
    out = ok(run(["make", "-C", str(CRYPTOSHIM), f"BUILD_DIR={tmp_path / 'build'}", f"CC={CC}",
                  f"EMULATOR={EMULATOR}", "test"], env=env), "make test (cryptoshim, aarch64)")
    assert "test_signer: all checks passed" in out
    assert "runner_cell: sign and verify measured and checked" in out
    assert aarch64_elf(tmp_path / "build" / "parbench-sigpar-native")


def _rust_aarch64() -> str | None:
    """Why the Rust cross build cannot run here, or None."""
    cargo, rustc = Path("/usr/bin/cargo"), Path("/usr/bin/rustc")
    if not (cargo.exists() and rustc.exists()):
        return f"Debian's cargo-web/rustc-web are not installed (/usr/bin/cargo); see {INSTALL}"
    sysroot = run([str(rustc), "--print", "sysroot"]).stdout.strip()
    if not Path(sysroot, "lib", "rustlib", RUST_TARGET, "lib").is_dir():
        return f"{rustc} has no {RUST_TARGET} standard library (Debian: libstd-rust-web-dev:arm64); see {INSTALL}"
    return None


@pytest.fixture(scope="module")
def kem_env() -> dict:
    why = _rust_aarch64()
    if why:
        pytest.skip(why)
    env = dict(os.environ)
    target = RUST_TARGET.upper().replace("-", "_")
    env.update({
        # Debian's toolchain throughout (a rustup one earlier on PATH has no arm64 std)
        "RUSTC": "/usr/bin/rustc",
        "RUSTDOC": "/usr/bin/rustdoc",
        f"CARGO_TARGET_{target}_LINKER": CC,
        f"CARGO_TARGET_{target}_RUNNER": EMULATOR,
        f"CC_{RUST_TARGET.replace('-', '_')}": CC,  # the cc crate, for the counter HAL
        # incremental across runs, apart from the x86-64 builds
        "CARGO_TARGET_DIR": str(REPO / "native" / "build" / "cross" / "kem-aarch64"),
        # the release profile's optimisation, without its thin LTO and single codegen
        # unit (the pipeline's binary wants them for speed; a check of function does not,
        # and they double the cross build's time)
        "CARGO_PROFILE_RELEASE_LTO": "off",
        "CARGO_PROFILE_RELEASE_CODEGEN_UNITS": "16",
    })
    env.pop("CYCLE_COUNTER", None)
    return env


def cargo(env, *args, timeout=1800) -> subprocess.CompletedProcess:
    return run(["/usr/bin/cargo", *args, "--release", "--locked", "--no-default-features", "--target", RUST_TARGET,
                "--manifest-path", str(CRATE / "Cargo.toml")], env=env, timeout=timeout)


def test_kem_crate_tests_pass_under_qemu(kem_env):
    out = ok(cargo(kem_env, "test"), "cargo test (kem, aarch64)")
    results = [line for line in out.splitlines() if line.startswith("test result:")]
    assert results and all(line.startswith("test result: ok") for line in results), results
    # the unit tests ran (under qemu: cargo's runner), not only the doc tests
    assert any(" 0 passed" not in line for line in results), results


@pytest.fixture(scope="module")
def kem_binary(kem_env) -> Path:
    ok(cargo(kem_env, "build", "--bin", "parbench-kem"), "cargo build (kem, aarch64)")
    path = Path(kem_env["CARGO_TARGET_DIR"]) / RUST_TARGET / "release" / "parbench-kem"
    assert aarch64_elf(path)
    return path


@pytest.mark.parametrize("level", ["512", "768", "1024"])
def test_libcrux_neon_passes_the_seeds_checks_under_qemu(kem_binary, kem_env, level):
    """The seed's benchmark on the NEON backend: every keypair/encaps/decaps checked (the
    secrets agree, a flipped ciphertext bit changes the secret); exit 1 on any failure.
    The counts are qemu's, not an ARM core's: only the checks are read here."""
    proc = qemu(str(kem_binary), "seed", "neon", level, "20", env=kem_env, timeout=600)
    out = ok(proc, f"parbench-kem seed neon {level} (aarch64)")
    assert "Running ML-KEM benchmarks with neon implementation" in out
    assert f"ML-KEM-{level} Benchmark Results" in out and "decaps cycles = " in out


def test_the_neon_cells_record_is_ok_under_qemu(kem_binary, kem_env, tmp_path):
    out = tmp_path / "cell.json"
    ok(qemu(str(kem_binary), "cycles", "--implementation", "libcrux-neon", "--level", "768", "--operation", "decaps",
            "--iterations", "30", "--json", str(out), env=kem_env, timeout=600), "parbench-kem cycles (aarch64)")
    doc = json.loads(out.read_text())
    assert doc["status"] == "ok", doc
