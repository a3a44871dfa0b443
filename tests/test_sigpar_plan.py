"""Cell expansion: one cell per (algorithm, operation, mode, workers), in the seed's order."""

from parbench import config as pbconfig
from parbench.progress import format_duration
from parbench.studies.sigpar import plan


def test_m4_plans_the_full_sweep():
    cfg = pbconfig.load("m4")
    cells = plan.cells(cfg)
    assert len(cells) == 21 * 2 * 2 * 6
    assert len(set(cells)) == len(cells)


def test_cells_run_algorithm_by_algorithm_sign_then_verify():
    cfg = pbconfig.load("smoke")
    cells = plan.cells(cfg)
    assert [c.label for c in cells[:5]] == [
        "ECDSA-P256 sign threading t1", "ECDSA-P256 sign threading t2",
        "ECDSA-P256 verify threading t1", "ECDSA-P256 verify threading t2",
        "ECDSA-P256 sign multiprocess t1"]
    assert [c.algorithm for c in cells] == sorted([c.algorithm for c in cells],
                                                  key=cfg["sigpar"]["algorithms"].index)


def test_cell_paths_encode_every_parameter():
    cell = plan.Cell("SPHINCS+-SHA2-128f-simple", "verify", "multiprocess", 4)
    out = cell.outputs("m4")
    assert out["csv"] == "data/raw/m4/parallelism/multiprocess/SPHINCS+-SHA2-128f-simple_verify_t4.csv"
    assert out["system"].endswith("_verify_t4_system.json")
    assert out["cell"].endswith("_verify_t4_cell.json")


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
    assert plan.estimate_sec(cfg) == len(plan.cells(cfg)) * per_cell


def test_durations_in_the_seeds_style():
    assert format_duration(182) == "3m02s" and format_duration(45) == "45s"
    assert format_duration(3900) == "1h05m"


def test_rerun_tokens_name_one_algorithms_sweep():
    cfg = pbconfig.load("smoke")
    assert plan.rerun_tokens(cfg, "ML-DSA-44") == ["data/raw/smoke/parallelism/sweeps/ML-DSA-44.json"]
    assert plan.rerun_tokens(cfg, "Ed25519") == []  # not in the smoke profile
    assert plan.rerun_names(cfg) == ["ECDSA-P256", "ML-DSA-44"]
