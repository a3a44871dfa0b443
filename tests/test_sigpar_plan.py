"""Cell expansion: one cell per (algorithm, operation, mode, workers, backend), in the
seed's order."""

import pytest


from parbench import config as pbconfig
from parbench.progress import format_duration
from parbench.studies.sigpar import STUDY, plan


def test_m4_plans_the_full_sweep():
    cfg = pbconfig.load("m4")
    cells = plan.cells(cfg)
    # classical: threading and multiprocess with pyca and openssl-cffi, and native threads;
    # post-quantum: threading and multiprocess with liboqs-python, and native threads
    # ... each measured 5 times
    assert len(cells) == (8 * (2 * 2 + 1) + 13 * (2 + 1)) * 2 * 6 * 5
    assert len(set(cells)) == len(cells)
    assert {c.rep for c in cells} == set(range(5))
    assert {c.variant for c in cells} == set(plan.VARIANTS)
    assert {(c.mode, c.backend) for c in cells if c.algorithm == "Ed25519"} == {
        ("threading", "pyca"), ("threading", "openssl-cffi"), ("multiprocess", "pyca"),
        ("multiprocess", "openssl-cffi"), ("native-threads", "native")}
    assert {(c.mode, c.backend) for c in cells if c.algorithm == "Falcon-512"} == {
        ("threading", "liboqs-python"), ("multiprocess", "liboqs-python"), ("native-threads", "native")}


def test_cells_run_algorithm_by_algorithm_sign_then_verify():
    cfg = pbconfig.load("smoke")
    cells = plan.cells(cfg)
    assert [c.label for c in cells[:6]] == [
        "ECDSA-P256 sign threading t1 r0", "ECDSA-P256 sign threading t2 r0",
        "ECDSA-P256 verify threading t1 r0", "ECDSA-P256 verify threading t2 r0",
        "ECDSA-P256 sign threading-openssl-cffi t1 r0", "ECDSA-P256 sign threading-openssl-cffi t2 r0"]
    assert [c.algorithm for c in cells] == sorted([c.algorithm for c in cells],
                                                  key=cfg["sigpar"]["algorithms"].index)


def test_cell_paths_encode_every_parameter():
    cell = plan.Cell.of("SPHINCS+-SHA2-128f-simple", "verify", "multiprocess", 4)
    assert cell.backend == "liboqs-python"
    out = cell.outputs("m4")
    # the default backends keep the seed's folders
    assert out["csv"] == "data/raw/m4/parallelism/multiprocess/SPHINCS+-SHA2-128f-simple_verify_t4_r0.csv"
    assert out["system"].endswith("_verify_t4_r0_system.json")
    assert out["record"].endswith("_verify_t4_r0_cell.json")
    cffi = plan.Cell.of("Ed25519", "sign", "threading", 2, "openssl-cffi", rep=3)
    assert cffi.stem("m4") == "data/raw/m4/parallelism/threading-openssl-cffi/Ed25519_sign_t2_r3"
    native = plan.Cell.of("Ed25519", "sign", "native-threads", 2)
    assert native.backend == "native" and native.stem("m4").endswith("/native-threads/Ed25519_sign_t2_r0")


@pytest.mark.parametrize("variant, mode, backend", [
    ("threading", "threading", "pyca"), ("multiprocess-openssl-cffi", "multiprocess", "openssl-cffi"),
    ("native-threads", "native-threads", "native")])
def test_a_cell_comes_back_from_its_wildcards(variant, mode, backend):
    class Wildcards:
        algorithm, operation, workers, rep = "Ed448", "verify", "4", "2"

    Wildcards.variant = variant
    cell = plan.Cell.from_wildcards(Wildcards)
    assert (cell.mode, cell.backend, cell.workers, cell.variant, cell.rep) == (mode, backend, 4, variant, 2)


def test_unknown_variant_names_the_allowed_ones():
    with pytest.raises(ValueError, match="unknown sigpar variant 'threading-gmp'; allowed: threading, multiprocess"):
        plan.split_variant("threading-gmp")


def test_the_shim_is_an_input_of_its_cells_only():
    cffi = plan.Cell.of("Ed25519", "sign", "threading", 2, "openssl-cffi")
    pyca = plan.Cell.of("Ed25519", "sign", "threading", 2)
    pqc_native = plan.Cell.of("ML-DSA-44", "sign", "native-threads", 2)
    assert plan.cell_inputs("smoke", cffi, "native/build/liboqs/k/liboqs.json")["shim"] == \
        "native/build/cryptoshim/k/shim.json"
    assert "liboqs" not in plan.cell_inputs("smoke", cffi, "native/build/liboqs/k/liboqs.json")
    # no liboqs in the run (classical algorithms only): a build of its own
    assert plan.cell_inputs("smoke", cffi, None)["shim"] == "native/build/cryptoshim/no-liboqs/shim.json"
    assert "shim" not in plan.cell_inputs("smoke", pyca, "L")
    assert set(plan.cell_inputs("smoke", pqc_native, "native/build/liboqs/k/liboqs.json")) == {"sweep", "liboqs", "shim"}
    args = plan.cell_arguments(pqc_native, plan.cell_inputs("smoke", pqc_native, "native/build/liboqs/k/liboqs.json"))
    assert args == "--backend native --liboqs native/build/liboqs/k --shim native/build/cryptoshim/k"


def test_classical_backends_follow_the_config():
    only_cffi = pbconfig.load("smoke", ["sigpar.classical_backends=[openssl-cffi]"])
    assert {c.backend for c in plan.cells(only_cffi) if c.algorithm == "ECDSA-P256" and c.mode != "native-threads"} \
        == {"openssl-cffi"}
    no_native = pbconfig.load("smoke", ["sigpar.modes=[threading]"])
    assert {c.variant for c in plan.cells(no_native)} == {"threading", "threading-openssl-cffi"}


def test_cell_parameters_change_with_what_the_cell_measures():
    cfg = pbconfig.load("smoke")
    cell = plan.cells(cfg)[0]
    longer = pbconfig.load("smoke", ["sigpar.duration_sec=0.9"])
    other_alg = pbconfig.load("smoke", ["sigpar.algorithms=[ECDSA-P256]"])
    assert plan.cell_parameters(cfg, cell) != plan.cell_parameters(longer, cell)
    # the list of other algorithms is not a parameter of this cell
    assert plan.cell_parameters(cfg, cell) == plan.cell_parameters(other_alg, cell)


def test_estimate_uses_the_profile_figures():
    cfg = pbconfig.load("smoke")
    sp = cfg["sigpar"]
    per_cell = sp["warmup_sec"] + sp["duration_sec"] + sp["cell_overhead_sec"]
    assert all(STUDY.cell_seconds(cfg, cell) == per_cell for cell in plan.cells(cfg))
    jobs = [("sigpar_cell", {})] * 3 + [("other", {})]
    assert STUDY.header(cfg, jobs)[-1] == f"Measuring time: ~{format_duration(3 * per_cell)} ({format_duration(per_cell)} per cell)"


def test_durations_in_the_seeds_style():
    assert format_duration(182) == "3m02s" and format_duration(45) == "45s"
    assert format_duration(3900) == "1h05m"


def test_rerun_tokens_name_one_algorithms_sweep():
    cfg = pbconfig.load("smoke")
    assert plan.rerun_tokens(cfg, "ML-DSA-44") == ["data/raw/smoke/parallelism/sweeps/ML-DSA-44.json"]
    assert plan.rerun_tokens(cfg, "Ed25519") == []  # not in the smoke profile
    assert plan.rerun_names(cfg) == ["ECDSA-P256", "ML-DSA-44"]
