"""The cells of a sigpar sweep, in the order they run, and how long they will take.

One cell = one (algorithm, operation, mode, workers) point = one Snakemake job. The
order is the seed's: algorithm by algorithm; within one, each mode's sign sweep then
verify sweep over ascending worker counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from parbench import paths


@dataclass(frozen=True, order=True)
class Cell:
    algorithm: str
    operation: str
    mode: str
    workers: int

    @property
    def label(self) -> str:
        return f"{self.algorithm} {self.operation} {self.mode} t{self.workers}"

    def stem(self, profile: str) -> str:
        return paths.SIGPAR_CELL.format(profile=profile, mode=self.mode, algorithm=self.algorithm,
                                        operation=self.operation, workers=self.workers)

    def outputs(self, profile: str) -> dict[str, str]:
        stem = self.stem(profile)
        return {"csv": f"{stem}.csv", "system": f"{stem}_system.json", "cell": f"{stem}_cell.json"}


def cells(cfg: dict) -> list[Cell]:
    sp = cfg["sigpar"]
    return [Cell(a, op, mode, w)
            for a in sp["algorithms"]
            for mode in sp["modes"]
            for op in sp["operations"]
            for w in sorted(sp["workers"])]


def cells_of(cfg: dict, algorithm: str) -> list[Cell]:
    return [c for c in cells(cfg) if c.algorithm == algorithm]


def cell_estimate_sec(cfg: dict) -> float:
    sp = cfg["sigpar"]
    return sp["warmup_sec"] + sp["duration_sec"] + sp["cell_overhead_sec"]


def estimate_sec(cfg: dict, n_cells: int | None = None) -> float:
    """Seconds `n_cells` cells (default: all) take, by the profile's own figures."""
    n = len(cells(cfg)) if n_cells is None else n_cells
    return n * cell_estimate_sec(cfg)


def cell_parameters(cfg: dict, cell: Cell) -> dict:
    """Everything that decides what a cell measures: Snakemake reruns a cell when this
    changes."""
    sp, tel = cfg["sigpar"], cfg["telemetry"]
    return {
        "algorithm": cell.algorithm, "operation": cell.operation, "mode": cell.mode,
        "workers": cell.workers,
        "warmup_sec": sp["warmup_sec"], "duration_sec": sp["duration_sec"],
        "analysis_window_sec": sp["analysis_window_sec"],
        "max_latency_samples": sp["max_latency_samples"], "message_bytes": sp["message_bytes"],
        "measurement": sp["measurement"],
        "sample_interval_sec": tel["sample_interval_sec"], "cpu_affinity": tel["cpu_affinity"],
        "powermetrics": tel["powermetrics"], "rapl": tel["rapl"],
    }


def format_duration(seconds: float) -> str:
    """`3m02s`, `45s`, `1h05m`: the seed's console style."""
    seconds = max(0, int(round(seconds)))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"
