"""`parbench rerun ALGORITHM`: measure one algorithm again and re-aggregate.

Forces the algorithm's sweep token (every cell of that algorithm depends on it), so
Snakemake reruns exactly those cells, then everything downstream of them up to the
paper. Other algorithms' cells are left as they are. The replaced measurements stay
in the cells' history folders.
"""

from __future__ import annotations

import subprocess
import sys

from parbench import config as pbconfig
from parbench import paths


def command(profile: str, algorithm: str, cores: str, overrides: list[str]) -> list[str]:
    cfg = pbconfig.load(profile, overrides)
    allowed = cfg["sigpar"]["algorithms"] if "sigpar" in cfg["studies"] else []
    if algorithm not in allowed:
        raise pbconfig.ConfigError(f"algorithm {algorithm!r} is not measured by profile {profile!r}; "
                                   f"allowed: {', '.join(allowed) or '(none: sigpar is not in studies)'}")
    token = paths.SIGPAR_SWEEP.format(profile=profile, algorithm=algorithm)
    cmd = [sys.executable, "-m", "snakemake", "--cores", str(cores), "report",
           "--forcerun", token, "--configfile", f"conf/{profile}.yaml"]
    if overrides:
        cmd += ["--config", "overrides=[" + ",".join(f"'{o}'" for o in overrides) + "]"]
    return cmd


def main(args) -> int:
    try:
        cmd = command(args.profile, args.algorithm, args.cores, args.overrides)
    except pbconfig.ConfigError as exc:
        print(f"parbench rerun: {exc}", file=sys.stderr)
        return 2
    print("$ " + " ".join(cmd), flush=True)
    return subprocess.call(cmd)


def add_commands(sub) -> None:
    p = sub.add_parser("rerun", help="measure one algorithm again and re-aggregate")
    p.add_argument("--profile", default="local")
    p.add_argument("--cores", default="all")
    p.add_argument("algorithm")
    p.add_argument("overrides", nargs="*", help="Hydra overrides, as given to the original run")
    p.set_defaults(func=main)
