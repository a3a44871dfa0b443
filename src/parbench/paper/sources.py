"""The shared parts of the paper's generated text (`paper/_generated/`): the summary (each
study's headline beside the seed's figure), the Method section (the machine, its
software, its noise, the load during the cells, the telemetry), the list of study
sections, the limitations, the conclusion and how to reproduce the run. The words are the
templates in `paper/sections/shared/`; the facts come from the machine record and the
studies' tables. Each study writes its own parts (its paper module, `parbench
paper-fragments`), its headline and its limitations among them.
"""

from __future__ import annotations

import json

import pandas as pd

from parbench import hosts, paths, project, provenance, studies
from parbench.paper.facts import Facts
from parbench.paper.format import md_table

# The shared generated parts: templates in paper/sections/shared/.
PARTS = ["summary", "run", "limitations", "conclusion", "reproduce"]


def measured_studies(machine: dict) -> list:
    return [s for s in studies.registered() if s.name in machine["config"]["studies"]]


def _telemetry_table(caps: dict) -> pd.DataFrame:
    rows = []
    for name, entry in caps.items():
        if not isinstance(entry, dict) or "available" not in entry:
            continue
        rows.append({"feature": name.replace("_", " "), "available": "yes" if entry["available"] else "no",
                     "source or reason": entry.get("source") if entry["available"] else (entry.get("reason") or "")})
    return pd.DataFrame(rows, columns=["feature", "available", "source or reason"])


def _machines_table(found: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "host": [f"`{h}`" for h in found[hosts.HOST]],
        "CPU model": found["cpu_model"].fillna("unknown"),
        "logical cores": [("n/a" if v is None or pd.isna(v) else str(int(v))) for v in found["logical_cores"]],
        "studies measured there": found["studies"],
    })


def context(machine: dict, tables: dict[str, pd.DataFrame]) -> dict:
    """The shared parts' facts and context. `tables`: every processed table the studies'
    paper modules read, by name (the `<study>_load` tables among them)."""
    f = Facts("paper", tables, {}, machine)
    m, caps = machine["machine"], machine["capabilities"]
    for key, path, fmt, unit, scale in (
            ("cores", "machine.logical_cores", "int", None, 1),
            ("physical_cores", "machine.physical_cores", "int", None, 1),
            ("memory", "machine.memory_total_bytes", "num", "GiB", 1 / 2**30),
            ("os", "machine.os_release", "plain", None, 1),
            ("kernel", "machine.kernel", "plain", None, 1),
            ("cpu", "machine.cpu_model", "plain", None, 1),
            ("python", "libraries.python_version", "plain", None, 1),
            ("cryptography", "libraries.cryptography_version", "plain", None, 1),
            ("openssl", "libraries.openssl_version", "plain", None, 1),
            ("liboqs_python", "libraries.liboqs_python_version", "plain", None, 1)):
        f.machine_value(key, path, fmt=fmt, unit=unit, scale=scale)
    stab = machine.get("cpu_stability")
    if stab:
        f.machine_value("stab_slice", "cpu_stability.slice_sec", unit="s")
        f.machine_value("stab_seconds", "cpu_stability.seconds", unit="s")
        f.machine_value("stab_slowest", "cpu_stability.slowest_fraction_of_median", fmt="pct")
        f.machine_value("stab_fastest", "cpu_stability.fastest_fraction_of_median", fmt="pct")
        f.machine_value("stab_cv", "cpu_stability.cv", fmt="pct1")
        if stab.get("attempt", 1) > 1 or stab.get("disturbed"):
            f.machine_value("stab_attempts", "cpu_stability.attempt", fmt="int")
        if stab.get("disturbed"):
            f.machine_value("stab_other", "cpu_stability.load.other_cores", fmt="fixed2")
        f.constant("edge_margin", "parbench.paper.facts:EDGE_MARGIN", fmt="pct")
    # where the cells ran
    by_study = {s.name: pd.concat([tables[t] for t in s.paper().TABLES if t in tables], ignore_index=True)
                for s in measured_studies(machine) if any(t in tables for t in s.paper().TABLES)}
    found = hosts.machines(by_study)
    probed = m.get("hostname")
    if len(found):
        f.literal("n_machines", len(found), "the rows of the machines table below it")
    # the load during the cells, over every study
    loads = [t for t in (f"{s.name}_load" for s in measured_studies(machine)) if t in tables]
    if loads:
        f.aggregate("load_reps", loads, "count", where={"status": "ok"})
        f.aggregate("load_retried", loads, "count", where={"status": "ok", "attempts": {">=": 2}})
        # measured again, then could not run at all: not among the repetitions that measured
        retried_failed = f.aggregate("load_retried_failed", loads, "count",
                                     where={"status": {"!=": "ok"}, "attempts": {">=": 2}})
        f.aggregate("load_disturbed", loads, "count", where={"status": "ok", "disturbed": True})
        known = pd.concat([tables[t] for t in loads])["load_other_cores"].notna().any()
        if known:
            f.aggregate("load_median", loads, "median", "load_other_cores", where={"status": "ok"}, fmt="fixed2",
                        unit="cores")
            f.aggregate("load_max", loads, "max", "load_other_cores", where={"status": "ok"}, fmt="fixed2",
                        unit="cores")
            f.aggregate("steal_max", loads, "max", "load_steal_cores", where={"status": "ok"}, fmt="fixed2",
                        unit="cores")
        f.config("max_other_cores", "disturbance.max_other_cores", fmt="fixed2", unit="cores")
        f.config("max_attempts", "disturbance.max_attempts", fmt="int")
    git = machine.get("git", {})
    run = measured_studies(machine)
    return {
        "f": f, "profile": machine["profile"], "description": machine["description"],
        # the run's Hydra overrides as Snakemake's --config value ('' for none)
        "overrides": json.dumps(machine["overrides"]) if machine.get("overrides") else "",
        "virtualized": bool(m.get("virtualized")), "commit": (git.get("git_commit") or "unknown")[:12],
        # the commit whose templates wrote the text (the run may have been measured by an earlier one)
        "written": (provenance.collect_git(project.root()).get("git_commit") or "unknown")[:12],
        "dirty": bool(git.get("git_dirty")), "config_hash": machine["config_hash"], "stability": bool(stab),
        "stab_disturbed": bool(stab and stab.get("disturbed")),
        "stab_again": bool(stab and stab.get("attempt", 1) > 1),
        "one_machine": len(found) == 1 and found[hosts.HOST].iloc[0] == probed, "probed": probed,
        "several_machines": len(found) > 0 and not (len(found) == 1 and found[hosts.HOST].iloc[0] == probed),
        "load": bool(loads), "load_known": bool(loads) and bool(known),
        "retried_failed": bool(loads) and bool(retried_failed.value),
        "studies": [{"name": s.name, "title": s.title} for s in run],
        "not_measured": [{"name": s.name, "title": s.title} for s in studies.registered() if s not in run],
        "tables": {"telemetry": _telemetry_table(caps), "machines": _machines_table(found)},
        "fewest_reps": _fewest_repetitions(f, machine, run),
        "other_configs": _measured_elsewhere(f, run, "config_hash", machine["config_hash"], "other_config"),
        "other_commits": _measured_elsewhere(f, run, "git_commit", git.get("git_commit"), "other_commit"),
        # the machine's own words for what it lacks (they may hold paths and numbers: facts)
        "missing_telemetry": [{"feature": k.replace("_", " "),
                               "reason": f.machine_value(f"missing.{k}", f"capabilities.{k}.reason", fmt="plain")}
                              for k, v in caps.items() if isinstance(v, dict) and v.get("available") is False
                              and v.get("reason")],
    }


def _measured_elsewhere(f: Facts, run: list, column: str, ours: str | None, short: str) -> list[dict]:
    """The rows whose provenance `column` (`config_hash`, `git_commit`) is not the run's
    (`ours`): for each table of a study that records it, and each other value in it, how
    many of its rows carry that value: rows of cells Snakemake kept from an earlier run
    (their parameters, inputs and command unchanged), or of cells that changed the
    configuration before hashing it (the Method section names both)."""
    found = []
    for s in run:
        for table in (t for t in s.paper().TABLES if t in f.tables and column in f.tables[t].columns):
            for value in sorted(set(f.tables[table][column].dropna()) - {ours}):
                found.append({"study": s.name, "table": table, "value": value,
                              "n": f.aggregate(f"{short}.{table}.{value}", table, "count",
                                               where={column: value}, fmt="int"),
                              "of": f.aggregate(f"rows.{table}", table, "count", fmt="int")})
    return found


def _fewest_repetitions(f: Facts, machine: dict, run: list) -> dict | None:
    """The study with the fewest repetitions per cell, and how many (its intervals are the
    widest a range of so few can make); `every`: every study planned that many."""
    counts = {s.name: (machine["config"].get(s.name) or {}).get("repetitions") for s in run}
    counts = {k: v for k, v in counts.items() if isinstance(v, int)}
    if not counts:
        return None
    study = min(counts, key=lambda k: (counts[k], k))
    n = f.config("fewest_reps", f"{study}.repetitions", fmt="int")
    return {"study": study, "n": n, "few": counts[study] < 10, "every": len(set(counts.values())) == 1,
            "coverage": f.coverage("fewest_reps_coverage", n) if counts[study] > 1 else None}


def studies_index(machine: dict) -> str:
    """The study sections of this run, in paper order: each is `paper/sections/<study>.qmd`
    (paths relative to the paper's folder, as Quarto resolves nested includes)."""
    prefix = paths.PAPER_DIR + "/"
    return "\n\n".join("{{< include " + paths.paper_section(s.name).removeprefix(prefix) + " >}}"
                        for s in measured_studies(machine)) + "\n"


def shared_parts(machine: dict, tables: dict[str, pd.DataFrame]) -> tuple[dict[str, str], dict]:
    """{file name: Markdown} of the shared parts, and their facts."""
    from parbench.paper import templates

    ctx = context(machine, tables)
    frames = ctx["tables"]

    def table(name: str, label: str, caption: str) -> str:
        return md_table(frames[name], caption, label)

    folder = templates.sections_dir() / "shared"
    helpers = {"table": table}
    parts = {f"{part}.md": templates.render(folder, part, {**helpers, **ctx, "f": ctx["f"].view()})
             for part in PARTS}
    parts["studies.md"] = studies_index(machine)
    return parts, ctx["f"].records()
