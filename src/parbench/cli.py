"""The `parbench` command (also `python -m parbench`): what the Snakemake rules run.

Each subcommand is a thin shell over one module of the package; `parbench <cmd> -h`
shows its arguments. Only the module of the command being run is imported, so that a
measured cell does not pay for importing pandas or altair.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# command -> the module that registers it (its add_commands(subparsers)); each study
# adds its own commands (Study.commands).
SHARED_COMMANDS = {
    "probe": "parbench.probe",
    "figure": "parbench.figures",
    "paper-sources": "parbench.paper",
    "paper-fragments": "parbench.paper",
    "paper-check": "parbench.paper.check",
    "paper-layout": "parbench.paper.layout_check",
    "rerun": "parbench.rerun",
    "system-deps": "parbench.system_deps",
    "resume-check": "parbench.locks",
    "report-run": "parbench.report_run",
    "builds-done": "parbench.builds",
    # the runner of every study that is a Benchmark (parbench.studies.benchmark)
    "cell": "parbench.runner",
    "aggregate": "parbench.runner",
}


def commands() -> dict[str, str]:
    from parbench import studies

    out = dict(SHARED_COMMANDS)
    for study in studies.registered():
        out.update(study.commands)
    return out


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1, else argparse's error naming the value."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1 (got {value})")
    return value


def check_choice(command: str, name: str, value, allowed) -> None:
    """Stop before any work when `--name value` is not one of `allowed`, saying which are."""
    if value not in allowed:
        raise SystemExit(f"parbench {command}: --{name} {value!r} is not allowed; "
                         f"allowed: {', '.join(map(str, allowed))}")


def _requested(argv: list[str]) -> str | None:
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="parbench", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    wanted = _requested(argv)
    known = commands()
    modules = [known[wanted]] if wanted in known else sorted(set(known.values()))
    for module in modules:
        importlib.import_module(module).add_commands(sub)
    args = parser.parse_args(argv)
    return args.func(args) or 0


if __name__ == "__main__":
    sys.exit(main())
