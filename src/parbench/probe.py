"""`parbench probe`: what this machine is and which telemetry it offers, for the paper."""

from __future__ import annotations

import json
from pathlib import Path


def main(args) -> int:
    from parbench import config as pbconfig
    from parbench import provenance
    from parbench.records import write_atomic
    from parbench.telemetry import capabilities
    from parbench.telemetry.stability import cpu_stability

    cfg = pbconfig.load(args.profile, args.overrides)
    caps = capabilities.probe(cfg["telemetry"])
    doc = {"profile": cfg["profile"], "description": cfg["description"],
           "machine": provenance.collect_machine(), "libraries": provenance.collect_libraries(),
           "git": provenance.collect_git(Path.cwd()), "config_hash": provenance.config_hash(cfg),
           "capabilities": caps, "warnings": capabilities.warnings(caps),
           "cpu_stability": cpu_stability(), "config": cfg,
           # the Hydra overrides of the run: the paper's command to reproduce it repeats them
           "overrides": list(args.overrides)}
    write_atomic(Path(args.out), json.dumps(doc, indent=2, default=str) + "\n")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("probe", help="record machine facts and telemetry capabilities")
    p.add_argument("--profile", default="local")
    p.add_argument("--out", required=True)
    p.add_argument("overrides", nargs="*")
    p.set_defaults(func=main)
