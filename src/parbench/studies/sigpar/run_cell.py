"""`parbench sigpar-cell`: run one cell as a command, the way Snakemake runs it.

    parbench sigpar-cell --profile local --algorithm Ed25519 --operation sign \\
        --mode threading --workers 2 [--backend openssl-cffi --shim native/build/cryptoshim/<liboqs key>] \\
        [HYDRA_OVERRIDE ...]

The config is composed exactly as the pipeline composes it (profile + Hydra overrides),
so a cell run by hand measures what the pipeline would. Around the measurement:

- nothing measured is lost: every finished cell is also copied, with a timestamp, under
  `data/raw/<profile>/parallelism/history/`, which Snakemake never deletes; replacing
  an earlier measurement says so;
- a failed correctness check is recorded (status "failed" in the cell's outputs and a
  record under `failures/`), and the algorithm's remaining cells in the same pipeline
  run are skipped (status "skipped") instead of measured;
- progress: one line per cell in the seed's style, with elapsed time against the run's
  estimate when the pipeline provides one.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from parbench.cli import check_choice
from parbench.progress import run_id as current_run_id
from parbench.records import write_atomic
from parbench.studies.sigpar import algorithms, plan, shim
from parbench.studies.sigpar.plan import Cell

OPERATIONS = ("sign", "verify")


def failure_record_path(profile: str, algorithm: str) -> Path:
    return Path(plan.FAILURES.format(profile=profile)) / f"{algorithm}.json"


def earlier_failure(profile: str, algorithm: str, run_id: str | None) -> dict | None:
    """The failure recorded for `algorithm` earlier in this same pipeline run, if any."""
    path = failure_record_path(profile, algorithm)
    if run_id is None or not path.exists():
        return None
    try:
        record = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return record if record.get("run_id") == run_id else None


def record_failure(profile: str, cell: Cell, failure: str, run_id: str | None) -> Path:
    path = failure_record_path(profile, cell.algorithm)
    write_atomic(path, json.dumps({"run_id": run_id, "cell": cell.label, "failure": failure,
                                   "time_unix": time.time()}, indent=1) + "\n")
    return path



def skipped_record(cfg: dict, cell: Cell, earlier: dict) -> dict:
    from parbench.studies.sigpar.cell import algorithm_record

    algo = algorithms.get(cell.algorithm)
    return {"record_version": 1, "study": "sigpar", "profile": cfg["profile"],
            "cell": {"algorithm": cell.algorithm, "operation": cell.operation, "mode": cell.mode,
                     "workers": cell.workers, "backend": cell.backend, "rep": cell.rep},
            "algorithm": algorithm_record(algo, None),
            "backend": {"name": cell.backend, "version": None},
            "status": "skipped",
            "failure": f"not measured: {earlier['cell']} failed earlier in this run ({earlier['failure']})",
            "started_unix": time.time(), "finished_unix": time.time(), "elapsed_sec": 0.0,
            "result": {}, "workers": [], "cpu_samples": [], "power": {}, "warnings": [], "provenance": {}}


def console_line(record: dict, repetitions: int = 1) -> str:
    """The seed's line for one cell, printed for every repetition (which one, when there
    are several, after the seed's fields)."""
    c, r = record["cell"], record["result"]
    variant = plan.variant_of(c["mode"], c.get("backend", ""))
    head = f"  {c['algorithm']} {c['operation']:<6} {variant:<12} {c['workers']:>3}t →"
    rep = f" [rep {c.get('rep', 0) + 1}/{repetitions}]" if repetitions > 1 else ""
    if record["status"] != "ok":
        return f"{head} {record['status'].upper()}: {record['failure']}{rep}"
    p99 = r.get("p99_latency_ms")
    p99_text = f"{p99:.2f} ms" if p99 is not None else "N/A (too few ops)"
    return f"{head} {r['ops_per_sec']:>12.1f} ops/sec | p99: {p99_text}{rep}"


def main(args) -> int:
    from parbench import config as pbconfig
    from parbench import runner
    from parbench.studies.sigpar.study import Sigpar

    check_choice("sigpar-cell", "algorithm", args.algorithm, list(algorithms.CATALOG))
    check_choice("sigpar-cell", "operation", args.operation, OPERATIONS)
    check_choice("sigpar-cell", "mode", args.mode, plan.MODES)
    if args.workers < 1:
        raise SystemExit(f"parbench sigpar-cell: --workers must be >= 1 (got {args.workers})")
    cfg = pbconfig.load_for_command("sigpar-cell", args.profile, args.overrides)
    if args.rep < 0:
        raise SystemExit(f"parbench sigpar-cell: --rep must be >= 0 (got {args.rep})")
    cell = Cell.of(args.algorithm, args.operation, args.mode, args.workers, args.backend, args.rep)
    check_choice("sigpar-cell", "backend", cell.backend, plan.possible_backends(cell.algorithm, cell.mode))

    algo = algorithms.get(cell.algorithm)
    if algo.library == "liboqs":
        from parbench.oqs_loader import LiboqsMissing, load_oqs

        try:
            load_oqs(args.liboqs)
        except LiboqsMissing as exc:
            raise SystemExit(f"parbench sigpar-cell: {exc}") from None
    if cell.needs_shim and not args.shim:
        raise SystemExit(f"parbench sigpar-cell: backend {cell.backend} needs the crypto shim: pass --shim "
                         f"{plan.SHIM_BUILD}/<liboqs build> (built by the pipeline's sigpar_shim rule)")

    run_id = current_run_id()
    earlier = earlier_failure(cfg["profile"], cell.algorithm, run_id)
    return runner.exit_code(runner.run_cell(Sigpar(args.shim), cfg, cell, args.out_stem, command="sigpar-cell",
                                            ready=skipped_record(cfg, cell, earlier) if earlier else None))


def shim_unavailable(cell: Cell, shim_dir: str | None) -> str | None:
    """Why this machine cannot measure the cell's backend, or None."""
    if not cell.needs_shim or not shim_dir:
        return None
    try:
        shim.descriptor(shim_dir)
    except shim.ShimUnavailable as exc:
        return f"the crypto shim is not available on this machine: {exc}"
    return None


def add_commands(sub) -> None:
    add_arguments(sub.add_parser("sigpar-cell", help="measure one sigpar cell"))


def add_arguments(parser) -> None:
    parser.set_defaults(func=main)
    parser.add_argument("--profile", default="local", help="profile in conf/ (default: local)")
    parser.add_argument("--algorithm", required=True)
    parser.add_argument("--operation", required=True, help="sign or verify")
    parser.add_argument("--mode", required=True, help="threading, multiprocess or native-threads")
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--rep", type=int, default=0, help="which repetition of the cell this is (from 0; default 0)")
    parser.add_argument("--backend", help="pyca or openssl-cffi for classical algorithms in the Python modes "
                                          "(default: the algorithm's library binding; native in native-threads)")
    parser.add_argument("--shim", help="the crypto shim's build folder (for openssl-cffi and native-threads)")
    parser.add_argument("--liboqs", help="liboqs install folder (default: $OQS_INSTALL_PATH)")
    parser.add_argument("--out-stem", help="output path stem (default: the pipeline's path for the cell)")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. sigpar.duration_sec=5")
