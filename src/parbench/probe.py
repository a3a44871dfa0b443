"""`parbench probe`: what this machine is and which telemetry it offers, for the paper."""

from __future__ import annotations

import json
from pathlib import Path


def main(args) -> int:
    from parbench import config as pbconfig
    from parbench import provenance
    from parbench.records import write_atomic
    from parbench.telemetry import capabilities

    cfg = pbconfig.load(args.profile, args.overrides)
    caps = capabilities.probe(cfg["telemetry"])
    doc = {"profile": cfg["profile"], "description": cfg["description"],
           "machine": provenance.collect_machine(), "libraries": provenance.collect_libraries(),
           "git": provenance.collect_git(Path.cwd()), "config_hash": provenance.config_hash(cfg),
           "capabilities": caps, "warnings": capabilities.warnings(caps),
           "cpu_stability": steady_cpu(cfg), "config": cfg,
           # the Hydra overrides of the run: the paper's command to reproduce it repeats them
           "overrides": list(args.overrides)}
    write_atomic(Path(args.out), json.dumps(doc, indent=2, default=str) + "\n")
    return 0


def steady_cpu(cfg: dict, out=None, measure=None, **how) -> dict:
    """The CPU stability check (`telemetry.stability`), measured as a cell is
    (`disturbance.measure_undisturbed`): while something else kept more than
    `disturbance.max_other_cores` cores busy it is measured again once the machine is
    quiet, each attempt's load kept, and `disturbed` where it stayed so. Its spread is the
    bar of every verdict in the paper: a busy machine's would hide findings. `how`: the
    meter and the wait for quiet (`measure_undisturbed`'s), for tests."""
    from parbench import disturbance
    from parbench.telemetry.stability import cpu_stability

    measure = measure or cpu_stability
    record = disturbance.measure_undisturbed(cfg, lambda: {**measure(), "status": "ok"}, save=lambda record: None,
                                             label="the CPU stability check", out=out, **how)
    for key in ("status", "planned_position"):
        record.pop(key, None)
    return record


def add_commands(sub) -> None:
    p = sub.add_parser("probe", help="record machine facts and telemetry capabilities")
    p.add_argument("--profile", default="local")
    p.add_argument("--out", required=True)
    p.add_argument("overrides", nargs="*")
    p.set_defaults(func=main)
