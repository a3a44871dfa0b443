"""The cells of a sigpar sweep, in the order they run, and how long they will take.

One cell = one (algorithm, operation, mode, workers, backend) point, measured
`sigpar.repetitions` times: one Snakemake job per repetition. The plan lists them in the
seed's order (algorithm by algorithm; within one, each mode's sign sweep then verify
sweep over ascending worker counts, backend by backend); the run interleaves them
(parbench.pipeline.run_order: every cell once, then again, each repetition shuffled).

Modes and backends:
- `threading` and `multiprocess` run Python workers. Their backend is the algorithm's
  library binding (`pyca` for the classical algorithms, pyca/cryptography; `liboqs-python`
  for the post-quantum ones) and, for classical algorithms, every extra backend of
  `sigpar.classical_backends` (`openssl-cffi`: the crypto shim over the system OpenSSL,
  called through cffi, the seed's approach);
- `native-threads` runs POSIX threads of the native runner (native/cryptoshim), no
  Python in the loop: backend `native`, the upper bound of the Python modes.

A cell's folder is its variant: the mode, or `<mode>-<backend>` for an extra backend
(`threading-openssl-cffi`); the default backends keep the seed's folders.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from parbench import paths
from parbench.studies.base import CellPaths

# The seed's raw layout, one folder per mode (under data/raw/<profile>/).
RAW = paths.RAW + "/parallelism"
CELL = RAW + "/{variant}/{algorithm}_{operation}_t{workers}_r{rep}"
# one algorithm's cells table, written when its last cell is measured (its block printed)
ALGORITHM_TABLE = paths.PROCESSED + "/sigpar/algorithms/{algorithm}.parquet"
# Every cell of an algorithm depends on its sweep token: forcing it reruns the algorithm.
SWEEP = RAW + "/sweeps/{algorithm}.json"
# One file per algorithm: its last correctness failure (run id, cell, message).
FAILURES = RAW + "/failures"
# Copies of every finished measurement, never deleted.
HISTORY = RAW + "/history"
# The crypto shim's builds: the cffi library, the native runner and their descriptor, one
# build per liboqs build it links (the native runner knows only the algorithms of its
# liboqs: profiles with different algorithm lists must not share it).
SHIM_BUILD = "native/build/cryptoshim"
SHIM_BUILD_DIR = SHIM_BUILD + "/{liboqs_key}"


def shim_build(liboqs: str | None) -> str:
    """The shim's build folder for a liboqs build (its `liboqs.json`), or for none."""
    key = Path(liboqs).parent.name if liboqs else "no-liboqs"
    return SHIM_BUILD_DIR.format(liboqs_key=key)


def shim(liboqs: str | None) -> str:
    """The shim's descriptor for a liboqs build."""
    return shim_build(liboqs) + "/shim.json"


# The OpenSSL pyca/cryptography ships, built for the shim (parbench.native.openssl): its
# descriptor, and what it is built from.
OPENSSL_BUILD = "native/build/openssl/{version}"


def openssl_build() -> str:
    from parbench.native.openssl import OPENSSL_VERSION

    return OPENSSL_BUILD.format(version=OPENSSL_VERSION)


def openssl() -> str:
    return openssl_build() + "/openssl.json"


PYTHON_MODES = ("threading", "multiprocess")
NATIVE_MODE = "native-threads"
MODES = (*PYTHON_MODES, NATIVE_MODE)
# The library binding of each kind of algorithm in the Python modes.
DEFAULT_BACKENDS = {"classical": "pyca", "pqc": "liboqs-python"}
# Backends a classical algorithm can be measured with beside its default one.
EXTRA_BACKENDS = ("openssl-cffi",)
NATIVE_BACKEND = "native"
# Cells whose backend needs the crypto shim.
SHIM_BACKENDS = ("openssl-cffi", NATIVE_BACKEND)
# Every folder a cell can have (the Snakemake wildcard `variant`).
VARIANTS = (*MODES, *(f"{mode}-{backend}" for mode in PYTHON_MODES for backend in EXTRA_BACKENDS))


def default_backend(algorithm: str, mode: str) -> str:
    from parbench.studies.sigpar.algorithms import get

    return NATIVE_BACKEND if mode == NATIVE_MODE else DEFAULT_BACKENDS[get(algorithm).kind]


def variant_of(mode: str, backend: str) -> str:
    return f"{mode}-{backend}" if backend in EXTRA_BACKENDS else mode


@dataclass(frozen=True, order=True)
class Cell(CellPaths):
    algorithm: str
    operation: str
    mode: str
    workers: int
    backend: str
    # which repetition of the point (from 0)
    rep: int = 0

    @classmethod
    def of(cls, algorithm: str, operation: str, mode: str, workers: int, backend: str | None = None,
           rep: int = 0) -> "Cell":
        """A cell; without a backend, the algorithm's default one in that mode."""
        return cls(algorithm, operation, mode, int(workers), backend or default_backend(algorithm, mode), int(rep))

    @classmethod
    def from_wildcards(cls, wildcards) -> "Cell":
        mode, backend = split_variant(wildcards.variant)
        return cls.of(wildcards.algorithm, wildcards.operation, mode, int(wildcards.workers), backend,
                      int(wildcards.rep))

    @property
    def variant(self) -> str:
        return variant_of(self.mode, self.backend)

    @property
    def label(self) -> str:
        return f"{self.algorithm} {self.operation} {self.variant} t{self.workers} r{self.rep}"

    @property
    def needs_shim(self) -> bool:
        return self.backend in SHIM_BACKENDS

    def stem(self, profile: str) -> str:
        return CELL.format(profile=profile, variant=self.variant, algorithm=self.algorithm,
                           operation=self.operation, workers=self.workers, rep=self.rep)

    RECORD_SUFFIX = "_cell.json"

    def outputs(self, profile: str) -> dict[str, str]:
        stem = self.stem(profile)
        return {**super().outputs(profile), "csv": f"{stem}.csv", "system": f"{stem}_system.json"}

    def history(self, profile: str) -> Path:
        return (Path(HISTORY.format(profile=profile)) / self.variant
                / f"{self.algorithm}_{self.operation}_t{self.workers}_r{self.rep}")


def split_variant(variant: str) -> tuple[str, str | None]:
    """(mode, extra backend or None) of a cell folder."""
    if variant in MODES:
        return variant, None
    for mode in PYTHON_MODES:
        if variant.startswith(mode + "-") and variant[len(mode) + 1:] in EXTRA_BACKENDS:
            return mode, variant[len(mode) + 1:]
    raise ValueError(f"unknown sigpar variant {variant!r}; allowed: {', '.join(VARIANTS)}")


def possible_backends(algorithm: str, mode: str) -> list[str]:
    """Every backend an algorithm can be measured with in a mode."""
    from parbench.studies.sigpar.algorithms import get

    if mode == NATIVE_MODE:
        return [NATIVE_BACKEND]
    kind = get(algorithm).kind
    return [DEFAULT_BACKENDS[kind], *(EXTRA_BACKENDS if kind == "classical" else ())]


def backends_of(cfg: dict, algorithm: str, mode: str) -> list[str]:
    """The backends an algorithm is measured with in a mode, by the config."""
    possible = possible_backends(algorithm, mode)
    if len(possible) == 1:
        return possible
    return [b for b in cfg["sigpar"]["classical_backends"] if b in possible]


def cells(cfg: dict) -> list[Cell]:
    sp = cfg["sigpar"]
    return [Cell(a, op, mode, w, backend, rep)
            for rep in range(sp["repetitions"])
            for a in sp["algorithms"]
            for mode in sp["modes"]
            for backend in backends_of(cfg, a, mode)
            for op in sp["operations"]
            for w in sorted(sp["workers"])]


def variants(cfg: dict) -> list[str]:
    """The folders (mode, or mode and extra backend) this config's cells fill, in order."""
    return list(dict.fromkeys(c.variant for c in cells(cfg)))


def cells_of(cfg: dict, algorithm: str) -> list[Cell]:
    return [c for c in cells(cfg) if c.algorithm == algorithm]


def algorithm_tables(cfg: dict) -> list[str]:
    """Each algorithm's cells table (rule sigpar_algorithm), in the config's order."""
    return [ALGORITHM_TABLE.format(profile=cfg["profile"], algorithm=a) for a in cfg["sigpar"]["algorithms"]]


def cell_records(cfg: dict, algorithm: str | None = None) -> list[str]:
    """The record (`_cell.json`) of every cell, or of one algorithm's cells."""
    return [c.record(cfg["profile"]) for c in cells(cfg) if algorithm is None or c.algorithm == algorithm]


def shim_sources() -> list[str]:
    """What the crypto shim is built from: a change rebuilds it (and reruns its cells)."""
    from parbench import project

    root = project.root()
    return sorted(str(p.relative_to(root)) for p in (root / "native" / "cryptoshim").glob("*")
                  if p.is_file() and p.suffix in (".c", ".h", "") and p.name != "README.md")


def cell_inputs(profile: str, cell: Cell, liboqs: str | None) -> dict[str, str]:
    """What a cell needs before it runs: its algorithm's sweep token; for post-quantum
    algorithms, the liboqs build (its descriptor); for the shim's backends, the shim."""
    from parbench.studies.sigpar.algorithms import get

    inputs = {"sweep": SWEEP.format(profile=profile, algorithm=cell.algorithm)}
    if get(cell.algorithm).library == "liboqs":
        inputs["liboqs"] = liboqs
    if cell.needs_shim:
        inputs["shim"] = shim(liboqs)
    return inputs


def cell_arguments(cell: Cell, inputs) -> str:
    """The `parbench sigpar-cell` options that name what the cell's inputs built."""
    args = [f"--backend {cell.backend}"]
    if "liboqs" in inputs.keys():
        args.append(f"--liboqs {Path(inputs['liboqs']).parent}")
    if "shim" in inputs.keys():
        args.append(f"--shim {Path(inputs['shim']).parent}")
    return " ".join(args)


def cell_estimate_sec(cfg: dict, cell: Cell | None = None) -> float:
    """Seconds one cell takes: every cell its warm-up, its duration and the cell's overhead."""
    sp = cfg["sigpar"]
    return sp["warmup_sec"] + sp["duration_sec"] + sp["cell_overhead_sec"]


def cell_parameters(cfg: dict, cell: Cell) -> dict:
    """Everything that decides what a cell measures: Snakemake reruns a cell when this
    changes."""
    sp, tel = cfg["sigpar"], cfg["telemetry"]
    return {
        "algorithm": cell.algorithm, "operation": cell.operation, "mode": cell.mode,
        "workers": cell.workers, "backend": cell.backend,
        "warmup_sec": sp["warmup_sec"], "duration_sec": sp["duration_sec"],
        "analysis_window_sec": sp["analysis_window_sec"],
        "max_latency_samples": sp["max_latency_samples"], "message_bytes": sp["message_bytes"],
        "measurement": sp["measurement"],
        "sample_interval_sec": tel["sample_interval_sec"], "cpu_affinity": tel["cpu_affinity"],
        "powermetrics": tel["powermetrics"], "rapl": tel["rapl"],
    }


def rerun_names(cfg: dict) -> list[str]:
    return list(cfg["sigpar"]["algorithms"])


def rerun_tokens(cfg: dict, name: str) -> list[str]:
    """Forcing an algorithm's sweep token remeasures exactly its cells."""
    return [SWEEP.format(profile=cfg["profile"], algorithm=name)] if name in rerun_names(cfg) else []
