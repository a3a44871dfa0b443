"""The kem study's native side, for real: the Rust crate's own tests (`cargo test`), the
`parbench-kem` binary's counter selection with every forced value, the seed's command
line (`cargo bench --bench ml-kem-cycle`), and real cells through `parbench kem-cell`
and `kem-throughput`, including the failure path and an implementation this machine
cannot run.

The binary is built as the pipeline builds it (incremental: a no-op when up to date;
about a minute the first time on 2 cores, and `cargo test` and `cargo bench` each
compile the crate once more for their own profiles)."""

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from parbench.studies.kem import plan, seed_format

REPO = Path(__file__).resolve().parents[1]
CRATE = REPO / plan.CRATE
COUNTERS = ["PERF_CYCLES", "PMU_CYCLES", "MAC_CYCLES", "TSC", "TIMER"]

pytestmark = pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")


def env_without_counter(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("CYCLE_COUNTER", "PARBENCH_KEM_BREAK_CHECK")}
    env["PYTHONPATH"] = str(REPO / "src")
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def binary():
    """The binary, built with the pipeline's command (cargo's own output, so that the
    pipeline's copy, which its cells depend on, is left alone)."""
    target = REPO / plan.CARGO_TARGET
    proc = subprocess.run(["cargo", "build", "--release", "--locked", "--no-default-features", "--bin", "parbench-kem",
                           "--manifest-path", str(CRATE / "Cargo.toml"), "--target-dir", str(target)],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return target / "release" / "parbench-kem"


def run_binary(binary, *args, **env):
    return subprocess.run([str(binary), *args], capture_output=True, text=True, env=env_without_counter(**env),
                          timeout=300)


@pytest.fixture(scope="session")
def probe(binary):
    proc = run_binary(binary, "counters")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_crates_own_tests_pass():
    proc = subprocess.run(["cargo", "test", "--release", "--locked", "--no-default-features"], cwd=CRATE,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "test result: ok" in proc.stdout and " 0 failed" in proc.stdout


def test_unset_picks_the_best_available_counter(probe):
    available = [c["name"] for c in probe["counters"] if c["available"]]
    best = next(name for name in probe["preference"] if name in available)
    assert probe["selected"]["name"] == best
    assert "TIMER" in available  # the clock is always there
    for c in probe["counters"]:
        assert c["available"] or c["reason"], c  # an unavailable counter says why
    unit = {"PERF_CYCLES": "cycles", "PMU_CYCLES": "cycles", "MAC_CYCLES": "cycles", "TSC": "tsc_ticks", "TIMER": "ns"}
    assert {c["name"]: c["unit"] for c in probe["counters"]} == unit


@pytest.mark.parametrize("name", COUNTERS)
def test_each_forced_counter_is_used_or_refused_naming_the_available_ones(binary, probe, name):
    status = {c["name"]: c for c in probe["counters"]}
    available = [n for n in probe["preference"] if status[n]["available"]]
    proc = run_binary(binary, "counters", CYCLE_COUNTER=name)
    if status[name]["available"]:
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["selected"]["name"] == name and doc["selected"]["forced"] is True
    else:
        assert proc.returncode == 4
        assert (f"CYCLE_COUNTER={name} is not available on this machine: {status[name]['reason']}; "
                f"available: {', '.join(available)}") in proc.stderr


def test_some_counter_is_unavailable_on_any_machine(probe):
    # MAC_CYCLES exists only on macOS, PERF_CYCLES and PMU_CYCLES only on Linux: the
    # refusal path above runs everywhere
    assert any(not c["available"] for c in probe["counters"])
    if platform.system() == "Linux":
        assert not {c["name"]: c for c in probe["counters"]}["MAC_CYCLES"]["available"]


def test_an_unknown_counter_is_refused_with_the_allowed_names(binary):
    proc = run_binary(binary, "counters", CYCLE_COUNTER="RDTSC")
    assert proc.returncode == 4
    assert "CYCLE_COUNTER=RDTSC is not a cycle counter; allowed: PERF_CYCLES, PMU_CYCLES, MAC_CYCLES, TSC, TIMER" \
        in proc.stderr


def test_the_pipeline_stops_before_any_cell_when_the_forced_counter_is_missing(binary, probe, tmp_path):
    missing = next(c for c in probe["counters"] if not c["available"])
    proc = subprocess.run([sys.executable, "-m", "parbench", "kem-counters", "--profile", "smoke", "--binary",
                           str(binary), "--out", str(tmp_path / "counters.json"),
                           f"kem.cycle_counter={missing['name']}"],
                          capture_output=True, text=True, env=env_without_counter(), cwd=REPO, timeout=120)
    assert proc.returncode != 0 and not (tmp_path / "counters.json").exists()
    assert f"CYCLE_COUNTER={missing['name']} is not available on this machine" in proc.stderr
    assert "available: " in proc.stderr and "kem.cycle_counter" in proc.stderr


@pytest.mark.parametrize("args, words", [
    (["cycles", "--implementation", "libcrux-sse", "--level", "512", "--operation", "encaps", "--iterations", "5"],
     "unknown implementation \"libcrux-sse\"; allowed: libcrux-portable"),
    (["cycles", "--implementation", "x25519", "--operation", "encaps", "--iterations", "5"],
     "operation \"encaps\" is not one of x25519: keypair, derive"),
    (["cycles", "--implementation", "liboqs", "--level", "256", "--operation", "encaps", "--iterations", "5"],
     "invalid security level \"256\"; allowed: 512, 768, 1024"),
    (["throughput", "--implementation", "libcrux-portable", "--level", "512", "--operation", "keypair",
      "--threads", "1", "--warmup-sec", "0", "--duration-sec", "0.1"], "measures encaps and decaps, not keypair"),
    (["seed", "sse"], "Unsupported architecture: sse; allowed: portable, avx2, neon"),
])
def test_bad_arguments_exit_2_with_what_is_allowed(binary, args, words):
    proc = run_binary(binary, *args)
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr


def run_cell(binary, tmp_path, *args, command="kem-cell", **env):
    out = tmp_path / "record.json"
    proc = subprocess.run([sys.executable, "-m", "parbench", command, "--profile", "smoke", "--binary", str(binary),
                           "--out", str(out), *args], capture_output=True, text=True, cwd=tmp_path,
                          env=env_without_counter(PARBENCH_ROOT=str(REPO), **env), timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc, json.loads(out.read_text())


def cpu_has_avx2() -> bool:
    try:
        return " avx2 " in Path("/proc/cpuinfo").read_text().replace("\n", " ")
    except OSError:
        return False


@pytest.mark.parametrize("imp, pset, op", [
    ("libcrux-portable", "ML-KEM-512", "encaps"),
    ("libcrux-portable", "ML-KEM-1024", "decaps"),
    ("x25519", "X25519", "derive"),
])
def test_a_real_cell_measures_and_checks_every_call(binary, tmp_path, imp, pset, op):
    proc, record = run_cell(binary, tmp_path, "--implementation", imp, "--parameter-set", pset, "--operation", op,
                            "kem.iterations=40")
    assert record["status"] == "ok", record["failure"]
    result = record["result"]
    assert len(result["samples"]) == 40 and all(s > 0 for s in result["samples"])
    assert result["median"] == seed_format.median(sorted(result["samples"]))
    assert result["checks"]["pairs_checked"] == 40 and result["checks"]["secrets_mismatched"] == 0
    assert result["checks"]["tamper_checked"] == 40 and result["checks"]["tamper_accepted"] == 0
    assert result["counter"]["unit"] in ("cycles", "tsc_ticks", "ns") and record["provenance"]["config_hash"]
    assert f"{op} cycles = {result['median']}" in proc.stdout
    # the measurement is also kept in the history, relative to where the cell ran
    assert (tmp_path / "data/raw/smoke/kem/history/cycles" / imp / f"{pset}_{op}").is_dir()


def test_the_simd_backend_the_cpu_cannot_run_is_unavailable_with_the_reason(binary, tmp_path):
    machine = platform.machine().lower()
    absent = "libcrux-neon" if machine in ("x86_64", "amd64") else "libcrux-avx2"
    _, record = run_cell(binary, tmp_path, "--implementation", absent, "--parameter-set", "ML-KEM-768",
                         "--operation", "keypair", "kem.iterations=5")
    assert record["status"] == "unavailable"
    assert "instruction set; this CPU is" in record["failure"] and record["result"]["samples"] == []
    if machine in ("x86_64", "amd64"):
        _, avx2 = run_cell(binary, tmp_path, "--implementation", "libcrux-avx2", "--parameter-set", "ML-KEM-768",
                           "--operation", "keypair", "kem.iterations=5")
        assert avx2["status"] == ("ok" if cpu_has_avx2() else "unavailable"), avx2["failure"]


@pytest.mark.parametrize("imp, pset", [("libcrux-portable", "ML-KEM-768"), ("x25519", "X25519")])
def test_a_failed_check_marks_the_cell_failed(binary, tmp_path, imp, pset):
    proc, record = run_cell(binary, tmp_path, "--implementation", imp, "--parameter-set", pset, "--operation",
                            "keypair", "kem.iterations=10", PARBENCH_KEM_BREAK_CHECK=imp)
    assert record["status"] == "failed"
    assert record["failure"] == "10 of 10 tampered inputs gave the original secret"
    assert "ERROR kem cycles" in proc.stderr and "FAILED" in proc.stdout


def test_a_liboqs_without_the_level_is_unavailable(binary, tmp_path, liboqs_dir):
    # the shared test liboqs has ML-DSA-44 only
    _, record = run_cell(binary, tmp_path, "--implementation", "liboqs", "--parameter-set", "ML-KEM-512",
                         "--operation", "encaps", "--liboqs", str(liboqs_dir), "kem.iterations=5")
    assert record["status"] == "unavailable" and "was built without ML-KEM-512" in record["failure"]


def test_a_thread_sweep_cell(binary, tmp_path):
    proc, record = run_cell(binary, tmp_path, "--implementation", "libcrux-portable", "--parameter-set",
                            "ML-KEM-512", "--operation", "encaps", "--threads", "2", "kem.throughput.duration_sec=0.3",
                            "kem.throughput.warmup_sec=0.05", command="kem-throughput")
    assert record["status"] == "ok", record["failure"]
    threads = record["result"]["per_thread"]
    assert len(threads) == 2 and all(t["ops_in_window"] > 0 for t in threads)
    assert abs(threads[0]["window_sec"] - 0.3) < 0.05
    assert record["result"]["checks"]["tamper_checked"] == 16 and record["result"]["checks"]["tamper_accepted"] == 0
    if platform.system() == "Linux" and len(os.sched_getaffinity(0)) >= 2:
        assert sorted(t["cpu"] for t in threads) == sorted(os.sched_getaffinity(0))[:2]
    assert "[02]" in proc.stdout and "ops/s" in proc.stdout


def test_the_seeds_command_line_from_native_kem(binary):
    # cargo accepts one argument after the bench's name; more need `--` (for the seed's
    # crate as for this one). --no-default-features leaves Criterion out of this build.
    env = env_without_counter()
    proc = subprocess.run(["cargo", "bench", "--locked", "--no-default-features", "--bench", "ml-kem-cycle", "--",
                           "portable", "512", "30"], cwd=CRATE, capture_output=True, text=True, env=env, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("Running ML-KEM benchmarks with portable implementation\nIterations per test: 30\n"
                                  "Cycle counter: ")
    blocks = seed_format.parse(proc.stdout)
    assert list(blocks) == ["ML-KEM-512"]
    assert set(blocks["ML-KEM-512"]["medians"]) == {"keypair", "encaps", "decaps"}
    # the binary runs the same command line
    same = run_binary(binary, "seed", "portable", "768", "20")
    assert same.returncode == 0 and list(seed_format.parse(same.stdout)) == ["ML-KEM-768"]
    # a forced counter this machine lacks is a clear error, as in the seed
    probe = json.loads(run_binary(binary, "counters").stdout)
    missing = next(c["name"] for c in probe["counters"] if not c["available"])
    refused = run_binary(binary, "seed", "portable", "512", "5", CYCLE_COUNTER=missing)
    assert refused.returncode == 2 and f"CYCLE_COUNTER={missing} is not available" in refused.stderr


def test_the_counter_hal_under_address_and_undefined_behaviour_sanitizers(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    exe = tmp_path / "hal_test"
    build = subprocess.run([cc, "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
                            "-fno-sanitize-recover=all", f"-I{CRATE / 'src/cycle_counter'}",
                            str(CRATE / "src/cycle_counter/hal.c"), str(CRATE / "tests/hal_test.c"), "-o", str(exe)],
                           capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stderr
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ERROR: AddressSanitizer" not in proc.stderr and "runtime error" not in proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 5 and lines[-1].startswith("TIMER       available (ns)")


def _nightly() -> bool:
    if shutil.which("cargo") is None:
        return False
    return subprocess.run(["cargo", "+nightly", "--version"], capture_output=True).returncode == 0


def _sanitized_env(sanitizer: str) -> dict:
    return dict(os.environ, RUSTFLAGS=f"-Zsanitizer={sanitizer} -Cunsafe-allow-abi-mismatch=sanitizer",
                CARGO_TARGET_DIR=str(REPO / plan.BUILD / f"sanitize-{sanitizer}"))


def _no_sanitizer_report(out: str) -> bool:
    return "Sanitizer" not in out.replace("-Zsanitizer", "")


# Sanitizers need a nightly toolchain, and this machine has no rust-src for it (rustup
# cannot download it offline), so the standard library is not instrumented
# (-Cunsafe-allow-abi-mismatch): races and bad accesses in this crate's code are
# reported, ones inside std are not seen.
needs_nightly = pytest.mark.skipif(not _nightly(), reason="no nightly Rust toolchain (rustup toolchain install nightly)")


@needs_nightly
def test_the_thread_sweep_under_thread_sanitizer():
    """The binary built with ThreadSanitizer, running the sweep with twice as many
    threads as cores, both operations. (The crate's unit tests are not run under TSan:
    libtest hands results between threads through an uninstrumented std channel, which
    TSan reports as races.)"""
    env = _sanitized_env("thread")
    target = f"{platform.machine()}-unknown-linux-gnu"
    build = subprocess.run(["cargo", "+nightly", "build", "--locked", "--no-default-features", "--target", target,
                            "--bin", "parbench-kem"], cwd=CRATE, capture_output=True, text=True, env=env, timeout=1800)
    assert build.returncode == 0, build.stderr[-3000:]
    exe = Path(env["CARGO_TARGET_DIR"]) / target / "debug" / "parbench-kem"
    for op in ("encaps", "decaps"):
        proc = subprocess.run([str(exe), "throughput", "--implementation", "libcrux-portable", "--level", "512",
                               "--operation", op, "--threads", "4", "--warmup-sec", "0", "--duration-sec", "0.4",
                               "--json", "-"], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0 and _no_sanitizer_report(proc.stderr), proc.stderr[-4000:]
        doc = json.loads(proc.stdout)
        assert doc["status"] == "ok" and len(doc["per_thread"]) == 4


@needs_nightly
def test_the_crates_tests_under_address_sanitizer():
    """The crate's unit tests (the loops, the checks, the thread sweep with more threads
    than cores, the counter HAL through FFI) built with AddressSanitizer."""
    proc = subprocess.run(["cargo", "+nightly", "test", "--locked", "--no-default-features", "--target",
                           f"{platform.machine()}-unknown-linux-gnu", "--lib"], cwd=CRATE, capture_output=True,
                          text=True, env=_sanitized_env("address"), timeout=1800)
    out = proc.stdout + proc.stderr
    # the failing tests' own output ("failures:") precedes cargo's compile log's tail
    report = out[out.find("failures:"):][:4000] if "failures:" in out else out[-4000:]
    assert proc.returncode == 0 and _no_sanitizer_report(out), report
    assert "test result: ok" in out
