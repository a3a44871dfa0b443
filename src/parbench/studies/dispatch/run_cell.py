"""`parbench dispatch-cell`: run one system (a platform mode or a peer) through the
seed's protocol and record it.

    parbench dispatch-cell --profile local --system push [--rep 0] [HYDRA_OVERRIDE ...]
    parbench dispatch-cell --profile local --system push-naive@expiry-1x6 [--rep 0]

Output: `data/raw/<profile>/dispatch/<system>_r<rep>.json` (`<system>@<experiment>_r<rep>`
for a cell of the anomaly's experiments), the record of one repetition: the cell
(system, kind, rep, experiment), its parameters, `status` ("ok"; "failed" when a run's check failed: a task that did not
complete with the expected value, a result stored more than once, a run that timed
out; "unavailable" for a peer that cannot start here, with the reason), every run's row,
every task's row and every queue-depth sample (columnar), the software versions and the
provenance. A copy goes to `history/` (nothing measured is lost).

Everything the cell starts (redis-server, gateway, dispatcher, workers, peer clusters)
is stopped when it ends, fails, or is interrupted (Ctrl+C, SIGTERM).
"""

from __future__ import annotations

import shutil
import subprocess

from parbench.cli import check_choice
from parbench.studies.dispatch import plan
from parbench.studies.dispatch.plan import DispatchCell

PACKAGES = ("fastapi", "starlette", "uvicorn", "httpx", "aiohttp", "redis", "pyzmq", "cloudpickle", "msgpack",
            "dask", "distributed", "celery", "ray")


def versions() -> dict:
    import importlib.metadata

    out = {}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    server = shutil.which("redis-server")
    if server:
        text = subprocess.run([server, "--version"], capture_output=True, text=True).stdout
        out["redis_server"] = next((w.split("=", 1)[1] for w in text.split() if w.startswith("v=")), None)
    else:
        out["redis_server"] = None
    import zmq

    out["libzmq"] = zmq.zmq_version()
    return out


def columnar(rows: list[dict]) -> dict:
    """Rows as {column: [values]} (the record stays compact and loads straight into a table)."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    return {c: [row.get(c) for row in rows] for c in columns}


def make_runner(cell: DispatchCell, params: dict):
    from parbench.studies.dispatch import peers, sweep

    if cell.kind == "platform":
        return sweep.PlatformRunner(cell.system, params)
    return peers.RUNNERS[cell.system](params)


def rep_suffix(cell: DispatchCell, repetitions: int) -> str:
    """Which repetition a console line speaks of, after the seed's fields (nothing
    when the system is measured once)."""
    return f" [rep {cell.rep + 1}/{repetitions}]" if repetitions > 1 else ""


def console_line(row: dict) -> str:
    if row.get("status") == "unavailable":
        return f"{row['workload']} n/a"
    t = row.get("completion_time_sec")
    mark = "" if row.get("status") == "ok" else " FAILED"
    return (f"{row['workload']} {t:.3f} s ({row['throughput_tasks_per_sec']:,.0f} tasks/s){mark}" if t
            else f"{row['workload']} -{mark}")


def measure(cfg: dict, cell: DispatchCell) -> dict:
    """One measurement of the cell as its record, as the runner makes it (nothing written)."""
    from parbench import runner
    from parbench.studies.dispatch.study import Dispatch

    return runner.measured_record(Dispatch(), cfg, cell)


def repetitions_of(cfg: dict, cell: DispatchCell) -> int:
    dc = cfg["dispatch"]
    return dc["anomaly"]["repetitions"] if cell.experiment else dc["repetitions"]


def main(args) -> int:
    from parbench import config as pbconfig
    from parbench import runner

    cell = DispatchCell.parse(args.system, args.rep)
    check_choice("dispatch-cell", "system", cell.system, plan.SYSTEMS)
    cfg = pbconfig.load_for_command("dispatch-cell", args.profile, args.overrides)
    if args.rep < 0:
        raise SystemExit(f"parbench dispatch-cell: --rep must be >= 0 (got {args.rep})")
    if cell.experiment:
        exps = plan.experiments(cfg)
        if cell.experiment not in exps or cell.system not in exps[cell.experiment]["systems"]:
            allowed = [f"{s}@{name}" for name, e in exps.items() for s in e["systems"]]
            raise SystemExit(f"parbench dispatch-cell: no experiment cell {cell.key!r} in profile {args.profile}; "
                             f"allowed: {', '.join(allowed) or 'none'}")
    if cell.kind == "platform":
        from parbench.studies.dispatch.platform.launcher import MissingRedis, redis_server_path

        try:
            redis_server_path()
        except MissingRedis as exc:
            raise SystemExit(f"parbench dispatch-cell: {exc}") from None
    if args.out and not args.out.endswith(".json"):
        raise SystemExit(f"parbench dispatch-cell: --out {args.out!r} must be the record's path, ending in .json")
    from parbench.studies.dispatch.study import Dispatch

    return runner.exit_code(runner.run_cell(Dispatch(), cfg, cell, args.out[: -len(".json")] if args.out else None,
                                            command="dispatch-cell"))


def add_commands(sub) -> None:
    p = sub.add_parser("dispatch-cell", help="measure one dispatch system (a platform mode or a peer)")
    p.set_defaults(func=main)
    p.add_argument("--profile", default="local", help="profile in conf/ (default: local)")
    p.add_argument("--system", required=True, help=f"one of {', '.join(plan.SYSTEMS)}, or system@experiment for a "
                   f"cell of the anomaly's experiments")
    p.add_argument("--rep", type=int, default=0, help="which repetition of the system this is (from 0; default 0)")
    p.add_argument("--out", help="the record's path (default: the pipeline's path for the cell)")
    p.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. dispatch.runs_per_worker_count=2")
