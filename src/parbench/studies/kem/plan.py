"""The cells of the kem study, the `parbench-kem` command of each, and time estimates.

Two kinds of cells, each one Snakemake job running the `parbench-kem` binary
(native/kem):

- a cycles cell: one implementation, parameter set and operation, `iterations`
  calls each timed with the cycle counter (the seed's loop), every result checked;
- a throughput cell: one implementation, parameter set, operation (encaps, decaps)
  and thread count, operations per second over a window, measured
  `kem.repetitions` times (one job per repetition; the run interleaves them:
  parbench.pipeline.run_order, every cell once, then every throughput cell again,
  each round shuffled).

A cycles cell is measured once per run (`rep` 0): its `iterations` timed calls give
the seed's percentile distribution, and the median's interval comes from those calls
(see aggregate). Both kinds carry `rep`, so that the run's order interleaves them.

Before any cell, `kem_counters` records which cycle counters the machine offers and
which one the cells will use; a forced counter the machine lacks stops the run there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from parbench import paths
from parbench.studies.base import CellPaths

# Raw layout under data/raw/<profile>/.
RAW = paths.RAW + "/kem"
COUNTERS = RAW + "/counters.json"
CYCLES_CELL = RAW + "/cycles/{implementation}/{parameter_set}_{operation}"
THROUGHPUT_CELL = RAW + "/throughput/{implementation}/{parameter_set}_{operation}_t{threads:02d}_r{rep}"
HISTORY = RAW + "/history"
# The crate and its build (Cargo's target folder is set by native/kem/.cargo/config.toml).
CRATE = "native/kem"
BUILD = "native/build/kem"
BINARY = BUILD + "/parbench-kem"
CARGO_TARGET = BUILD + "/target"

IMPLEMENTATIONS = ("libcrux-portable", "libcrux-avx2", "libcrux-neon", "liboqs", "x25519")
ML_KEM_IMPLEMENTATIONS = IMPLEMENTATIONS[:4]
LEVELS = (512, 768, 1024)
ML_KEM_OPERATIONS = ("keypair", "encaps", "decaps")
X25519_OPERATIONS = ("keypair", "derive")
THROUGHPUT_OPERATIONS = ("encaps", "decaps")
COUNTERS_NAMES = ("PERF_CYCLES", "PMU_CYCLES", "MAC_CYCLES", "TSC", "TIMER")
# The seed's environment variable; `kem.cycle_counter: auto` leaves it to the user.
CYCLE_COUNTER_ENV = "CYCLE_COUNTER"
# NIST security category and classical security strength (bits) of each parameter set.
NIST_LEVEL = {"ML-KEM-512": 1, "ML-KEM-768": 3, "ML-KEM-1024": 5, "X25519": None}
SECURITY_BITS = {"ML-KEM-512": 128, "ML-KEM-768": 192, "ML-KEM-1024": 256, "X25519": 128}
# liboqs' build id and name of each level.
LIBOQS_IDS = {level: f"KEM_ml_kem_{level}" for level in LEVELS}
LIBOQS_NAMES = {f"KEM_ml_kem_{level}": f"ML-KEM-{level}" for level in LEVELS}
# Seconds to build the binary from scratch on 2 cores (cargo is incremental), for the
# estimate.
BUILD_SEC = 75.0


def parameter_set(implementation: str, level: int | None) -> str:
    return "X25519" if implementation == "x25519" else f"ML-KEM-{level}"


def level_of(parameter_set_name: str) -> int | None:
    return None if parameter_set_name == "X25519" else int(parameter_set_name.rsplit("-", 1)[1])


@dataclass(frozen=True, order=True)
class CyclesCell(CellPaths):
    implementation: str
    parameter_set: str
    operation: str
    # always 0: cycles cells are measured once per run (their thousands of calls are
    # the sample); the field lets the run's order interleave them with the sweep
    rep: int = 0

    @property
    def level(self) -> int | None:
        return level_of(self.parameter_set)

    @property
    def label(self) -> str:
        return f"cycles {self.implementation} {self.parameter_set} {self.operation}"

    def stem(self, profile: str) -> str:
        return CYCLES_CELL.format(profile=profile, implementation=self.implementation,
                                  parameter_set=self.parameter_set, operation=self.operation)

    def history(self, profile: str) -> Path:
        return Path(HISTORY.format(profile=profile)) / "cycles" / self.implementation / \
            f"{self.parameter_set}_{self.operation}"


@dataclass(frozen=True, order=True)
class ThroughputCell(CellPaths):
    implementation: str
    parameter_set: str
    operation: str
    threads: int
    # which repetition of the point (from 0)
    rep: int = 0

    @property
    def level(self) -> int:
        return level_of(self.parameter_set)

    @property
    def label(self) -> str:
        return f"throughput {self.implementation} {self.parameter_set} {self.operation} t{self.threads} r{self.rep}"

    def stem(self, profile: str) -> str:
        return THROUGHPUT_CELL.format(profile=profile, implementation=self.implementation,
                                      parameter_set=self.parameter_set, operation=self.operation,
                                      threads=self.threads, rep=self.rep)

    def history(self, profile: str) -> Path:
        return Path(HISTORY.format(profile=profile)) / "throughput" / self.implementation / \
            f"{self.parameter_set}_{self.operation}_t{self.threads:02d}_r{self.rep}"


def cycles_cells(cfg: dict) -> list[CyclesCell]:
    """Implementation by implementation (the config's order), each level, each operation."""
    kc = cfg["kem"]
    out = []
    for imp in kc["implementations"]:
        if imp == "x25519":
            out += [CyclesCell(imp, "X25519", op) for op in X25519_OPERATIONS]
        else:
            out += [CyclesCell(imp, parameter_set(imp, level), op)
                    for level in sorted(kc["levels"]) for op in kc["operations"]]
    return out


def throughput_cells(cfg: dict) -> list[ThroughputCell]:
    tc = cfg["kem"]["throughput"]
    return [ThroughputCell(imp, parameter_set(imp, level), op, t, rep)
            for rep in range(cfg["kem"]["repetitions"])
            for imp in tc["implementations"] for level in sorted(tc["levels"])
            for op in tc["operations"] for t in sorted(tc["threads"])]


def cells(cfg: dict) -> list:
    """Every cell in run order: the cycles cells, then the thread sweep."""
    return [*cycles_cells(cfg), *throughput_cells(cfg)]


def cycles_records(cfg: dict) -> list[str]:
    return [c.record(cfg["profile"]) for c in cycles_cells(cfg)]


def throughput_records(cfg: dict) -> list[str]:
    return [c.record(cfg["profile"]) for c in throughput_cells(cfg)]


def requested_counter(cfg: dict, environ=None) -> str | None:
    """The counter the cells must use: the config's, or, with `auto`, the seed's
    CYCLE_COUNTER from the environment (None: the best available)."""
    environ = os.environ if environ is None else environ
    configured = cfg["kem"]["cycle_counter"]
    if configured != "auto":
        return configured
    return environ.get(CYCLE_COUNTER_ENV) or None


def counter_parameters(cfg: dict) -> dict:
    """What decides the counter: a change reruns the probe and every cell."""
    return {"cycle_counter": cfg["kem"]["cycle_counter"], "requested": requested_counter(cfg)}


def cell_parameters(cfg: dict, cell) -> dict:
    """Everything that decides what a cell measures: Snakemake reruns a cell when this
    changes."""
    kc = cfg["kem"]
    params = {"implementation": cell.implementation, "parameter_set": cell.parameter_set,
              "operation": cell.operation, **counter_parameters(cfg)}
    if isinstance(cell, CyclesCell):
        params["iterations"] = kc["iterations"]
    else:
        tc = kc["throughput"]
        params.update(threads=cell.threads, warmup_sec=tc["warmup_sec"], duration_sec=tc["duration_sec"],
                      pin=pinned_cpus(cfg, cell.threads))
    return params


def pinned_cpus(cfg: dict, threads: int) -> list[int]:
    """The CPU of each thread of a throughput cell (the shared cpu_affinity settings);
    empty when pinning is off or the OS cannot pin."""
    from parbench.telemetry.affinity import affinity_available, plan_affinity

    aff = cfg["telemetry"]["cpu_affinity"]
    if not aff["enabled"] or not affinity_available()[0]:
        return []
    plan = plan_affinity(aff["strategy"], aff["performance_cores"], aff["efficiency_cores"], threads)
    return [cpus[0] for cpus in plan if cpus]


def binary_command(cfg: dict, cell, binary: str, json_path: str, liboqs: str | None) -> list[str]:
    """The `parbench-kem` command line of a cell."""
    kc = cfg["kem"]
    cmd = [str(binary)]
    if isinstance(cell, CyclesCell):
        cmd += ["cycles", "--implementation", cell.implementation, "--operation", cell.operation,
                "--iterations", str(kc["iterations"])]
        if cell.level is not None:
            cmd += ["--level", str(cell.level)]
    else:
        tc = kc["throughput"]
        cmd += ["throughput", "--implementation", cell.implementation, "--operation", cell.operation,
                "--level", str(cell.level), "--threads", str(cell.threads),
                "--warmup-sec", str(tc["warmup_sec"]), "--duration-sec", str(tc["duration_sec"])]
        cpus = pinned_cpus(cfg, cell.threads)
        if cpus:
            cmd += ["--cpus", ",".join(map(str, cpus))]
    if cell.implementation == "liboqs" and liboqs:
        cmd += ["--liboqs", str(liboqs)]
    return cmd + ["--json", str(json_path)]


def binary_environment(cfg: dict, environ=None) -> dict:
    """The binary's environment: CYCLE_COUNTER set to the requested counter, or removed."""
    env = dict(os.environ if environ is None else environ)
    requested = requested_counter(cfg, env)
    env.pop(CYCLE_COUNTER_ENV, None)
    if requested:
        env[CYCLE_COUNTER_ENV] = requested
    return env


# --- liboqs ---------------------------------------------------------------------------------

def liboqs_ids(cfg: dict) -> list[str]:
    """The liboqs build ids the configured liboqs cells need (one per ML-KEM level)."""
    kc = cfg["kem"]
    levels = set()
    if "liboqs" in kc["implementations"]:
        levels |= set(kc["levels"])
    if "liboqs" in kc["throughput"]["implementations"]:
        levels |= set(kc["throughput"]["levels"])
    return sorted(LIBOQS_IDS[level] for level in levels)


def cell_inputs(cell, counters: str, binary: str, liboqs: str | None) -> dict[str, str]:
    """What a cell needs before it runs: the binary, the counter probe and, for liboqs,
    the pipeline's liboqs build (its descriptor)."""
    inputs = {"binary": binary, "counters": counters}
    if cell.implementation == "liboqs" and liboqs:
        inputs["liboqs"] = liboqs
    return inputs


def cycles_inputs(profile: str, liboqs: str | None):
    """Input function of the cycles rule."""
    return lambda wc: cell_inputs(CyclesCell.from_wildcards(wc), COUNTERS.format(profile=profile), BINARY, liboqs)


def throughput_inputs(profile: str, liboqs: str | None):
    """Input function of the throughput rule."""
    return lambda wc: cell_inputs(ThroughputCell.from_wildcards(wc), COUNTERS.format(profile=profile), BINARY, liboqs)


def crate_sources() -> list[str]:
    """What the binary is compiled from: a change to any of them rebuilds it and reruns
    the cells. The README and the benches are not among them."""
    root = Path(CRATE)
    files = [root / "Cargo.toml", root / "Cargo.lock", root / "build.rs", root / ".cargo" / "config.toml"]
    files += sorted(p for p in (root / "src").rglob("*") if p.is_file())
    return [str(p) for p in files]


# --- estimates -------------------------------------------------------------------------------

def cell_estimate_sec(cfg: dict, cell) -> float:
    """Seconds a cell takes (printed before the run)."""
    kc = cfg["kem"]
    est = kc["estimate"]
    if isinstance(cell, CyclesCell):
        per_call = est["call_sec"].get(cell.implementation, max(est["call_sec"].values()))
        scale = {"ML-KEM-512": 0.7, "ML-KEM-768": 1.0, "ML-KEM-1024": 1.4}.get(cell.parameter_set, 1.0)
        # the timed call, the key pair or ciphertext it needs, and the checks: about five
        # calls per iteration
        return est["cell_overhead_sec"] + kc["iterations"] * 5 * per_call * scale
    tc = kc["throughput"]
    return est["cell_overhead_sec"] + tc["warmup_sec"] + tc["duration_sec"]
