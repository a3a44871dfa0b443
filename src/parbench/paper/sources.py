"""Write the paper's generated includes (`paper/_generated/*.md`) from the run's data.

Every number in these files is computed here from the Parquet tables and the machine
record; nothing is typed by hand. Each study writes its section even when the profile
did not measure it (saying so), so the paper always renders.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from parbench.sigpar.algorithms import CATALOG


def fmt_num(x, digits: int = 3) -> str:
    """A readable number: 3 significant digits, thousands separators."""
    if x is None or pd.isna(x):
        return "n/a"
    x = float(x)
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def fmt_pct(x) -> str:
    return "n/a" if x is None or pd.isna(x) else f"{100 * float(x):.0f}%"


def _numeric_column(column: pd.Series) -> bool:
    """Whether every cell reads as a number (formatted or not): right-aligned."""
    text = column.astype(str).str.replace(r"[,%]", "", regex=True)
    return bool(len(column)) and bool(pd.to_numeric(text.where(text != "n/a", "0"), errors="coerce").notna().all())


def md_table(frame: pd.DataFrame, caption: str, label: str) -> str:
    header = "| " + " | ".join(frame.columns) + " |"
    align = "|" + "|".join("--:" if _numeric_column(frame[c]) else ":--" for c in frame.columns) + "|"
    rows = ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, align, *rows, "", f": {caption} {{#{label}}}", ""])


def figure(profile: str, name: str, caption: str, label: str) -> str:
    return f"![{caption}](../figures/{profile}/{name}.svg){{#{label}}}\n"


# --- the run -----------------------------------------------------------------------------------

def run_section(machine: dict) -> str:
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
    return "\n".join(lines)


# --- sigpar ------------------------------------------------------------------------------------

def _summary_table(ok: pd.DataFrame) -> pd.DataFrame:
    wmax = int(ok["workers"].max())
    rows = []
    for (algorithm, op), f in ok.groupby(["algorithm", "operation"], sort=False):
        row = {"algorithm": algorithm, "bits": int(f["security_bits"].iloc[0]), "operation": op}
        for mode in ("threading", "multiprocess"):
            g = f[f["mode"] == mode].set_index("workers")
            one = g["ops_per_sec"].get(1)
            top = g["ops_per_sec"].get(wmax)
            eff = g["scaling_efficiency"].get(wmax)
            short = "thr" if mode == "threading" else "mp"
            row[f"{short} 1w ops/s"] = fmt_num(one)
            row[f"{short} {wmax}w ops/s"] = fmt_num(top)
            row[f"{short} eff."] = fmt_pct(eff)
        rows.append(row)
    order = {a: i for i, a in enumerate(CATALOG)}
    frame = pd.DataFrame(rows)
    return frame.sort_values(["algorithm", "operation"], key=lambda s: s.map(order) if s.name == "algorithm" else s)


def cfg_interval(machine: dict) -> float:
    return machine["config"]["telemetry"]["sample_interval_sec"]


def sigpar_section(cells: pd.DataFrame | None, machine: dict) -> str:
    profile = machine["profile"]
    if cells is None or cells.empty:
        return "The sigpar study was not part of this run's profile; add `sigpar` to `studies` to measure it.\n"
    ok = cells[cells["status"] == "ok"]
    bad = cells[cells["status"] != "ok"]
    cfg = machine["config"]["sigpar"]
    wmax = int(cells["workers"].max())
    families = ", ".join(dict.fromkeys(cells["family"]))
    out = [
        "## Setup {#sec-sigpar-setup}",
        "",
        f"Each cell of the sweep is one algorithm, one operation, one execution mode and one worker count: "
        f"{cells['algorithm'].nunique()} algorithms ({families}), "
        f"{' and '.join(cells['operation'].unique())}, in "
        f"{' and '.join(cells['mode'].unique())} mode, with "
        f"{', '.join(str(w) for w in sorted(cells['workers'].unique()))} workers: {len(cells)} cells. "
        f"Workers start together on a barrier, run {fmt_num(cfg['warmup_sec'])} s of warm-up and "
        f"{fmt_num(cfg['duration_sec'])} s measured, and only operations that complete inside the middle "
        f"{fmt_num(cfg['analysis_window_sec'])} s count: throughput is that count divided by the window, "
        f"and scaling efficiency is ops(N) / (N × ops(1)). Threads share one process and each owns its key "
        f"objects; processes are spawned and load the cached keys. Every cell verifies the signatures it made "
        f"and checks that a tampered signature is rejected.",
        "",
    ]
    if len(bad):
        out += ["::: {.callout-warning title=\"Cells not measured\"}",
                f"{len(bad)} of {len(cells)} cells did not pass: "
                + "; ".join(f"{r.algorithm} {r.operation} {r.mode} {r.workers}w ({r.status}: {r.failure})"
                            for r in bad.itertuples()) + ". They are left out of every figure and number below.",
                ":::", ""]
    else:
        out += [f"All {len(cells)} cells passed their correctness checks.", ""]
    steady = ok["window_rate_cv"].dropna() if "window_rate_cv" in ok else pd.Series(dtype=float)
    if len(steady):
        out += [f"Inside the windows, throughput measured over {fmt_num(cfg_interval(machine))} s intervals varied "
                f"by a median of {fmt_pct(steady.median())} (coefficient of variation; {len(steady)} cells with "
                f"enough operations per interval to tell, up to {fmt_pct(steady.max())}): the figures below carry "
                f"that much noise from the machine itself.", ""]

    one = ok[ok["workers"] == 1]
    out += ["## Throughput {#sec-sigpar-throughput}", "",
            figure(profile, "sigpar_scaling", "Throughput against worker count, per family; threading solid, "
                   "multiprocess dashed (log scale).", "fig-sigpar-scaling")]
    sentences = []
    for op in ("sign", "verify"):
        f = one[(one["operation"] == op) & (one["mode"] == "multiprocess")]
        if f.empty:
            f = one[one["operation"] == op]
        if f.empty:
            continue
        hi, lo = f.loc[f["ops_per_sec"].idxmax()], f.loc[f["ops_per_sec"].idxmin()]
        sentences.append(f"With one worker, {hi['algorithm']} {'signs' if op == 'sign' else 'verifies'} fastest "
                         f"({fmt_num(hi['ops_per_sec'])} ops/s) and {lo['algorithm']} slowest "
                         f"({fmt_num(lo['ops_per_sec'])} ops/s), a factor of {fmt_num(hi['ops_per_sec'] / lo['ops_per_sec'])}.")
    out += [" ".join(sentences) + f" @fig-sigpar-scaling shows every algorithm from 1 to {wmax} workers.", ""]

    top = ok[ok["workers"] == wmax].dropna(subset=["scaling_efficiency"])
    out += ["## Scaling efficiency {#sec-sigpar-efficiency}", "",
            figure(profile, "sigpar_efficiency", "Scaling efficiency ops(N) / (N × ops(1)) per algorithm, "
                   "worker count, operation and mode.", "fig-sigpar-efficiency")]
    if wmax > 1 and not top.empty:
        parts = []
        for mode in ("multiprocess", "threading"):
            f = top[top["mode"] == mode]["scaling_efficiency"]
            if len(f):
                parts.append(f"{mode} cells reached a median efficiency of {fmt_pct(f.median())} "
                             f"(from {fmt_pct(f.min())} to {fmt_pct(f.max())})")
        low = top[top["scaling_efficiency"] < 0.7]
        out += [f"At {wmax} workers, " + " and ".join(parts) + " (@fig-sigpar-efficiency). "
                + (f"Below 70%: {', '.join(sorted(set(low['algorithm'] + ' ' + low['operation'] + ' (' + low['mode'] + ')')))}."
                   if len(low) else "No cell fell below 70%."), ""]
    else:
        out += ["The sweep had a single worker count, so efficiency is 1 by definition (@fig-sigpar-efficiency).", ""]

    out += ["## Latency {#sec-sigpar-latency}", "",
            figure(profile, "sigpar_latency", "p99 latency against worker count (log scale).", "fig-sigpar-latency")]
    lat = ok.pivot_table(index=["algorithm", "operation", "mode"], columns="workers", values="p99_latency_ms")
    if wmax > 1 and 1 in lat.columns and wmax in lat.columns:
        change = (lat[wmax] / lat[1] - 1).dropna()
        if len(change):
            worst = change.idxmax()
            out += [f"From 1 to {wmax} workers the p99 latency changed by a median of {fmt_pct(change.median())}; "
                    f"the largest rise was {worst[0]} {worst[1]} in {worst[2]} mode ({fmt_pct(change.max())}) "
                    f"(@fig-sigpar-latency). A p99 needs at least 100 latency samples: cells with fewer operations "
                    f"report none rather than their maximum.", ""]
    else:
        out += ["@fig-sigpar-latency shows p99 latency; with fewer than 100 samples a cell reports none.", ""]

    out += ["## What threads cost against processes {#sec-sigpar-gil}", "",
            figure(profile, "sigpar_gil_ratio", "Threading throughput divided by multiprocess throughput at the "
                   "same worker count; 1.0 means threads lose nothing.", "fig-sigpar-gil")]
    wide = ok.pivot_table(index=["algorithm", "operation", "workers"], columns="mode", values="ops_per_sec")
    if {"threading", "multiprocess"} <= set(wide.columns):
        ratio = (wide["threading"] / wide["multiprocess"]).dropna()
        at_max = ratio[ratio.index.get_level_values("workers") == wmax]
        worst = at_max.idxmin() if len(at_max) else None
        lib = machine["libraries"]
        out += [f"At {wmax} workers, threads reached a median {fmt_num(at_max.median())} of the multiprocess "
                f"throughput" + (f", the lowest being {worst[0]} {worst[1]} ({fmt_num(at_max.min())})" if worst else "")
                + f" (@fig-sigpar-gil). Both libraries release the GIL during the call itself (pyca/cryptography "
                f"{lib.get('cryptography_version')} inside OpenSSL, liboqs-python through ctypes), so a ratio below "
                f"1 measures what threads still share within one process, such as the Python between the calls, "
                f"which runs under the GIL.", ""]
    out += ["## Energy per operation {#sec-sigpar-energy}", "",
            figure(profile, "sigpar_energy", "Energy per operation where the machine measures it.", "fig-sigpar-energy")]
    measured = ok.dropna(subset=["energy_per_op_j"])
    if len(measured):
        f = measured[measured["workers"] == 1]
        out += [f"Energy came from {measured['energy_source'].iloc[0]}; with one worker it ranged from "
                f"{fmt_num(f['energy_per_op_j'].min() * 1e3)} mJ to {fmt_num(f['energy_per_op_j'].max() * 1e3)} mJ "
                f"per operation (@fig-sigpar-energy).", ""]
    else:
        reason = machine["capabilities"].get("energy", {}).get("reason") or "no energy source"
        out += [f"This machine offers no energy counter ({reason}), so energy per operation is null in the data "
                f"(@fig-sigpar-energy says so too).", ""]

    out += ["## Summary {#sec-sigpar-summary}", "",
            f"@tbl-sigpar-summary lists, per algorithm and operation, the throughput with one and with {wmax} "
            f"workers in each mode and the efficiency at {wmax} workers (thr = threading, mp = multiprocess, "
            f"bits = classical-equivalent security strength).", "",
            md_table(_summary_table(ok), f"Throughput with 1 and {wmax} workers and efficiency at {wmax}.",
                     "tbl-sigpar-summary")]
    return "\n".join(out)


# --- sched -------------------------------------------------------------------------------------

SCHEDULER_NAMES = {"sequential": "the sequential baseline", "lifo": "LIFO (one shared stack)",
                   "ws": "work stealing", "ws_sync": "synchronizing work stealing",
                   "openmp": "OpenMP tasks", "tbb": "TBB parallel_sort"}


def _sched_table(ok: pd.DataFrame) -> pd.DataFrame:
    rows = []
    tmax = int(ok["threads"].max())
    for (workload, scheduler), f in ok.groupby(["workload", "scheduler"], sort=False):
        f = f.set_index("threads")
        best = f["median_time_s"].idxmin()
        rows.append({"workload": workload, "scheduler": scheduler,
                     "1 thread, s": fmt_num(f["median_time_s"].get(1)),
                     f"{tmax} threads, s": fmt_num(f["median_time_s"].get(tmax)) if scheduler != "sequential" else "",
                     "minimum, s": fmt_num(f.loc[best, "median_time_s"]),
                     "at threads": str(int(best)),
                     "speedup vs sequential": fmt_num(f["speedup_vs_sequential"].max())})
    return pd.DataFrame(rows)


def sched_section(summary: pd.DataFrame | None, runs: pd.DataFrame | None, machine: dict) -> str:
    profile = machine["profile"]
    if summary is None or summary.empty:
        return "The sched study was not part of this run's profile; add `sched` to `studies` to measure it.\n"
    cfg = machine["config"]["sched"]
    ok = summary[summary["status"] == "ok"]
    unavailable = summary[summary["status"] == "unavailable"].drop_duplicates("scheduler")
    failed = summary[summary["status"] == "failed"]
    tmax = int(summary["threads"].max())
    q, m = cfg["quicksort"], cfg["mandelbrot"]
    out = [
        "## Setup {#sec-sched-setup}", "",
        f"Three schedulers from `native/sched` (C11, one interface) run two workloads: a parallel quicksort of "
        f"{q['size']:,} random 32-bit ints (seed {q['seed']}, sequential below {q['cutoff']:,} elements; the top "
        f"level partitions in parallel) and a Mandelbrot render of {m['width']}x{m['height']} pixels "
        f"({m['max_iter']} iterations, split into tasks of at most {m['threshold_pixels']:,} pixels). "
        f"LIFO shares one stack; work stealing gives each thread a Chase-Lev deque (memory orders of Lê et al., "
        f"PPoPP 2013) and idle thieves back off exponentially from {cfg['backoff']['min_ns']:,} ns to "
        f"{cfg['backoff']['max_ns']:,} ns; synchronizing work stealing keeps its threads between runs and frames. "
        f"Each cell runs {cfg['repetitions']} timed sort(s) or {m['frames']} frame(s) at "
        f"{', '.join(str(t) for t in sorted(summary['threads'].unique()))} threads; the median is reported. "
        f"Every sorted array was checked to be sorted and a permutation of the input, and every frame to be "
        f"byte-identical to the sequential render"
        + (f"; {len(failed)} cell(s) failed that check: "
           + "; ".join(f"{r.workload} {r.scheduler} t{r.threads} ({r.failure})" for r in failed.itertuples())
           if len(failed) else ": all passed") + ".", ""]
    if len(unavailable):
        out += ["::: {.callout-note title=\"Peers not built on this machine\"}",
                " ".join(f"{r.scheduler}: {r.failure}." for r in unavailable.itertuples()), ":::", ""]

    qs = ok[ok["workload"] == "quicksort"]
    seq = qs[qs["scheduler"] == "sequential"]["median_time_s"]
    top = qs[(qs["threads"] == tmax) & (qs["scheduler"] != "sequential")].sort_values("median_time_s")
    out += ["## Quicksort {#sec-sched-quicksort}", "",
            figure(profile, "sched_time", "Quicksort time against threads, median with min-max bars; the dashed "
                   "line is the sequential sort.", "fig-sched-time")]
    if len(seq) and len(top):
        best = top.iloc[0]
        text = (f"The sequential sort took {fmt_num(seq.iloc[0])} s. At {tmax} threads the fastest was "
                f"{SCHEDULER_NAMES[best['scheduler']]} ({fmt_num(best['median_time_s'])} s, "
                f"{fmt_num(best['speedup_vs_sequential'])}x the sequential sort)")
        ws = top.set_index("scheduler")["speedup_vs_sequential"]
        if "ws" in ws.index and "openmp" in ws.index:
            verdict = "at least matching" if ws["ws"] >= ws["openmp"] else "behind"
            text += (f"; work stealing reached {fmt_num(ws['ws'])}x against {fmt_num(ws['openmp'])}x for OpenMP "
                     f"tasks, {verdict} them")
        if "lifo" in ws.index:
            text += f", and LIFO {fmt_num(ws['lifo'])}x"
        out += [text + " (@fig-sched-time).", ""]
    out += ["## Speedup {#sec-sched-speedup}", "",
            figure(profile, "sched_speedup", "Speedup against the sequential baseline and against the same "
                   "scheduler on one thread; dashed: linear speedup.", "fig-sched-speedup")]
    par = ok[(ok["threads"] == tmax) & (ok["scheduler"] != "sequential")]
    if len(par):
        eff = par.groupby("workload")["efficiency"].max()
        out += [f"@fig-sched-speedup compares each scheduler with the sequential code and with itself on one "
                f"thread. The best efficiency (speedup over the sequential code per thread) at {tmax} threads was "
                + " and ".join(f"{fmt_pct(v)} for {w}" for w, v in eff.items()) + ".", ""]

    out += ["## Steals and task distribution {#sec-sched-steals}", "",
            figure(profile, "sched_steals", "Steal attempts per run: successes, failures on an empty victim and "
                   "lost races.", "fig-sched-steals"),
            figure(profile, "sched_tasks", f"Tasks executed by each thread at {tmax} threads.", "fig-sched-tasks")]
    st = ok[ok["scheduler"].isin(["ws", "ws_sync"]) & (ok["threads"] == tmax)].dropna(subset=["steal_success_rate"])
    if len(st):
        parts = []
        for workload, f in st.groupby("workload", sort=False):
            parts.append(f"on {workload}, " + " and ".join(
                f"{SCHEDULER_NAMES[r.scheduler]} stole {fmt_num(r.steal_success)} tasks per run "
                f"({fmt_pct(r.steal_success_rate)} of its attempts"
                + (f"; tasks per thread varied by {fmt_pct(r.task_share_cv)}" if r.task_share_cv is not None
                   and not pd.isna(r.task_share_cv) else "") + ")" for r in f.itertuples()))
        out += [f"At {tmax} threads, " + "; ".join(parts) + " (@fig-sched-steals; the variation of tasks per "
                "thread is their coefficient of variation, @fig-sched-tasks). A failed steal found its victim "
                "empty or lost the race for the last task to another thief or the owner.", ""]
    else:
        out += ["@fig-sched-steals and @fig-sched-tasks need more than one thread.", ""]

    mb = ok[ok["workload"] == "mandelbrot"]
    out += ["## Mandelbrot {#sec-sched-mandelbrot}", "",
            figure(profile, "sched_mandelbrot_frames", "Mandelbrot frame time against threads; the dashed line "
                   "is the sequential render.", "fig-sched-frames"),
            figure(profile, "sched_mandelbrot_image", "The rendered frame; every parallel frame was "
                   "byte-identical to it.", "fig-sched-image")]
    mseq = mb[mb["scheduler"] == "sequential"]["median_time_s"]
    mpar = mb[(mb["scheduler"] != "sequential") & (mb["threads"] == tmax)].sort_values("median_time_s")
    if len(mseq) and len(mpar):
        best = mpar.iloc[0]
        out += [f"A sequential frame took {fmt_num(mseq.iloc[0])} s; with {SCHEDULER_NAMES[best['scheduler']]} on "
                f"{tmax} threads a frame took {fmt_num(best['median_time_s'])} s, "
                f"{fmt_num(best['speedup_vs_sequential'])}x faster (@fig-sched-frames, @fig-sched-image).", ""]
    out += ["## Summary {#sec-sched-summary}", "",
            "@tbl-sched-summary gives each scheduler's median time on one thread and on the most threads, its "
            "fastest time and where it occurred (the seed's \"minimum time taken ... for cores = N\"), and its "
            "best speedup over the sequential code.", "",
            md_table(_sched_table(ok), "Median times, minimum and speedup per workload and scheduler.",
                     "tbl-sched-summary")]
    return "\n".join(out)


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


def write_all(out_dir: Path, machine: dict, tables: dict[str, pd.DataFrame]) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    docs = {
        "run.md": run_section(machine),
        "sigpar.md": sigpar_section(tables.get("sigpar_cells"), machine),
        "sched.md": sched_section(tables.get("sched_summary"), tables.get("sched_runs"), machine),
        "reproduce.md": reproduce_section(machine),
    }
    written = []
    for name, text in docs.items():
        path = out_dir / name
        tmp = path.with_name(f".{name}.tmp")
        tmp.write_text(text.rstrip() + "\n")
        tmp.replace(path)
        written.append(path)
    return written


def main(args) -> int:
    machine = json.loads(Path(args.machine).read_text())
    tables = {Path(p).stem: pd.read_parquet(p) for p in args.tables}
    for path in write_all(Path(args.out_dir), machine, tables):
        print(f"paper: wrote {path}")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("paper-sources", help="write the paper's generated includes from the data")
    p.add_argument("--machine", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("tables", nargs="*")
    p.set_defaults(func=main)
