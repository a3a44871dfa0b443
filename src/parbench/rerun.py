"""`parbench rerun NAME`: measure one algorithm (or whatever a study lets you name) again,
and re-aggregate.

Each study says which of its sweep tokens stand for NAME (Study.rerun_tokens): sigpar
has one per algorithm, on which every cell of that algorithm depends. Forcing those
tokens makes Snakemake rerun exactly those cells, then everything downstream of them up
to the paper; other cells are left as they are. The replaced measurements stay in the
cells' history folders.
"""

from __future__ import annotations

import subprocess
import sys

from parbench import config as pbconfig
from parbench import studies


def command(profile: str, name: str, cores: str, overrides: list[str]) -> list[str]:
    cfg = pbconfig.load(profile, overrides)
    active = studies.active(cfg)
    tokens = [token for study in active for token in study.rerun_tokens(cfg, name)]
    if not tokens:
        allowed = [n for study in active for n in study.rerun_names(cfg)]
        raise pbconfig.ConfigError(f"{name!r} is not measured by profile {profile!r}; allowed: "
                                   f"{', '.join(allowed) or '(none: no study of this profile can rerun by name)'}")
    cmd = [sys.executable, "-m", "snakemake", "--cores", str(cores), "report",
           "--forcerun", *tokens, "--configfile", f"conf/{profile}.yaml"]
    if overrides:
        cmd += ["--config", "overrides=[" + ",".join(f"'{o}'" for o in overrides) + "]"]
    return cmd


def main(args) -> int:
    from pathlib import Path

    from parbench.locks import resume_check

    try:
        cmd = command(args.profile, args.algorithm, args.cores, args.overrides)
    except pbconfig.ConfigError as exc:
        print(f"parbench rerun: {exc}", file=sys.stderr)
        return 2
    ok, message = resume_check(Path.cwd())
    if message:
        print(f"parbench rerun: {message}", file=sys.stdout if ok else sys.stderr, flush=True)
    if not ok:
        return 3
    print("$ " + " ".join(cmd), flush=True)
    return subprocess.call(cmd)


def add_commands(sub) -> None:
    p = sub.add_parser("rerun", help="measure one algorithm again and re-aggregate")
    p.add_argument("--profile", default="local")
    p.add_argument("--cores", default="all")
    p.add_argument("algorithm", help="what to measure again, e.g. an algorithm of sigpar (Ed25519)")
    p.add_argument("overrides", nargs="*", help="Hydra overrides, as given to the original run")
    p.set_defaults(func=main)
