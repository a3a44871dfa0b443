"""The shared parts of the paper's generated text (`paper/_generated/`): the Method
section (the machine, its software, its noise and telemetry), the list of study sections
this run includes, and how to reproduce the run. Each study writes its own parts (its
paper module, `parbench paper-fragments`).

Every number here is computed from the machine record and, for the machines the cells
ran on, from the studies' tables (parbench.hosts); nothing is typed by hand.
"""

from __future__ import annotations

import pandas as pd

from parbench import hosts, paths, studies
from parbench.paper.format import fmt_num, fmt_pct, md_table


def run_section(machine: dict, tables: dict[str, pd.DataFrame] | None = None) -> str:
    """The Method section; `tables` (study -> its tables' rows) name the machines the
    cells ran on."""
    m, lib, git = machine["machine"], machine["libraries"], machine["git"]
    caps = machine["capabilities"]
    cores = m.get("logical_cores")
    phys = m.get("physical_cores")
    cpu = m.get("cpu_model") or "machine of unknown CPU"
    article = "an" if cpu[:1].lower() in "aeiou" else "a"
    lines = [
        f"The measurements were taken with profile `{machine['profile']}` ({machine['description']}) "
        f"on {article} {cpu} with {cores} logical cores"
        + (f" ({phys} physical)" if phys else "")
        + (", under virtualisation" if m.get("virtualized") else "")
        + f", {fmt_num((m.get('memory_total_bytes') or 0) / 2**30)} GiB of memory, running "
        f"{m.get('os_release') or m.get('os_name')} (kernel {m.get('kernel')}).",
        "",
        f"Software: Python {lib.get('python_version')}, pyca/cryptography {lib.get('cryptography_version')} "
        f"({lib.get('openssl_version')}), liboqs-python {lib.get('liboqs_python_version')}. The code was "
        f"git commit `{(git.get('git_commit') or 'unknown')[:12]}`"
        + (" with uncommitted changes" if git.get("git_dirty") else "")
        + f"; the composed configuration hashes to `{machine['config_hash']}`.",
        "",
    ]
    where = hosts.machines_paragraph(tables or {}, machine)
    if where:
        lines += [where, ""]
    stab = machine.get("cpu_stability")
    if stab:
        lines += [
            f"How steady the machine was: a fixed single-thread loop, timed in {fmt_num(stab['slice_sec'])} s slices "
            f"for {fmt_num(stab['seconds'])} s when the pipeline probed the machine, ran between "
            f"{fmt_pct(stab['slowest_fraction_of_median'])} and {fmt_pct(stab['fastest_fraction_of_median'])} of "
            f"its median speed (coefficient of variation {fmt_pct(stab['cv'])}). Differences between cells smaller "
            f"than that spread can be the machine, not the code; longer windows (the m4 profile's) average it out.",
            "",
        ]
    lines += [
        "What this machine's telemetry offers (probed at run time; what is missing is recorded as null):",
        "",
    ]
    rows = []
    for name, entry in caps.items():
        if not isinstance(entry, dict) or "available" not in entry:
            continue
        rows.append({"feature": name.replace("_", " "), "available": "yes" if entry["available"] else "no",
                     "source or reason": entry.get("source") if entry["available"] else (entry.get("reason") or "")})
    lines.append(md_table(pd.DataFrame(rows), "Telemetry available on the measuring machine.", "tbl-telemetry"))
    measured = [s for s in studies.registered() if s.name in machine["config"]["studies"]]
    others = [s for s in studies.registered() if s.name not in machine["config"]["studies"]]
    lines += ["", "The studies of this run: " + "; ".join(f"{s.title.lower()} (`{s.name}`, @sec-{s.name})"
                                                     for s in measured) + "."]
    if others:
        lines += ["", "Not measured by this profile: " + "; ".join(f"{s.title.lower()} (`{s.name}`)" for s in others)
                  + ". Add them to `studies` to measure them."]
    return "\n".join(lines)


def studies_index(machine: dict) -> str:
    """The study sections of this run, in paper order: each is `paper/sections/<study>.qmd`
    (paths relative to the paper's folder, as Quarto resolves nested includes)."""
    run = machine["config"]["studies"]
    prefix = paths.PAPER_DIR + "/"
    return "\n\n".join("{{< include " + paths.paper_section(s.name).removeprefix(prefix) + " >}}"
                        for s in studies.registered() if s.name in run) + "\n"


def reproduce_section(machine: dict) -> str:
    profile = machine["profile"]
    return "\n".join([
        "On a machine with Python 3.11, a C compiler, CMake and Cargo (or a conda environment from "
        "`environment.yml`):",
        "",
        "```sh",
        "make paper                                   # this machine, profile local",
        f"snakemake -c1 report --configfile conf/{profile}.yaml   # this paper's profile",
        "quarto render paper/                         # re-render without measuring",
        "```",
        "",
        f"The raw data of this run is under `data/raw/{profile}/`, the tidy tables under "
        f"`data/processed/{profile}/` (schema in `docs/data.md`) and the figures under `figures/{profile}/`.",
        "",
    ])


def shared_parts(machine: dict, tables: dict[str, pd.DataFrame] | None = None) -> dict[str, str]:
    return {"run.md": run_section(machine, tables), "studies.md": studies_index(machine),
            "reproduce.md": reproduce_section(machine)}
