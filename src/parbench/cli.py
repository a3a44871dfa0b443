"""The `parbench` command (also `python -m parbench`): what the Snakemake rules run.

Each subcommand is a thin shell over one module of the package; `parbench <cmd> -h`
shows its arguments.
"""

from __future__ import annotations

import argparse
import sys


def _sigpar_cell(sub):
    from parbench.sigpar import run_cell

    p = sub.add_parser("sigpar-cell", help="measure one sigpar cell")
    run_cell.add_arguments(p)
    p.set_defaults(func=run_cell.main)


def _sigpar_commands(sub):
    from parbench.sigpar import commands

    commands.add_commands(sub)


def _probe(sub):
    from parbench import probe

    probe.add_command(sub)


def _figure(sub):
    from parbench import figures

    figures.add_command(sub)


def _paper_sources(sub):
    from parbench.paper import sources

    sources.add_command(sub)


def _rerun(sub):
    from parbench import rerun

    rerun.add_command(sub)


def _sched_commands(sub):
    from parbench.sched import commands

    commands.add_commands(sub)


COMMANDS = [_sigpar_cell, _sigpar_commands, _sched_commands, _probe, _figure, _paper_sources, _rerun]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="parbench", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    args = parser.parse_args(argv)
    return args.func(args) or 0


if __name__ == "__main__":
    sys.exit(main())
