"""`parbench gil-cell`: run one gil cell (one runtime, one workload) and record it.

    parbench gil-cell --profile local --runtime pypy --workload multithread_cpu --rep 0 [HYDRA_OVERRIDE ...]

The runtime's interpreter runs the worker script (`worker.py`) in its own process group,
with a time limit; every chunk result it reports, warm-up runs included, is checked here
against the result computed under this CPython (`workloads.expected_chunk`).

Output: `data/raw/<profile>/gil/<runtime>/<workload>_r<k>.json` (k: the repetition, one
interpreter launch, from 0), the record: the cell, its
parameters, status, the runtime (as resolved, and as the interpreter describes itself:
implementation, version, GIL), per point (execution, workers) its status and the wall and
CPU time of every warm-up run and repetition with the chunk results, the console line,
provenance. A copy goes to `history/`.

Status of the cell:
- "ok": every point that could run returned the right results (a point the runtime
  cannot run, e.g. processes on Jython, which has no multiprocessing, is "unavailable"
  with the reason, and the cell is still ok);
- "failed": a point returned a wrong result, raised, the interpreter died while
  measuring, or the cell ran out of time; the record says which and why;
- "unavailable": the runtime could not run the worker at all (not found here, or its
  interpreter exited without output: the reason is its own message).

Ctrl+C or SIGTERM stops the interpreter and all its workers at once and writes nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from parbench.studies.gil import plan
from parbench.studies.gil import runtimes as rt
from parbench.studies.gil import workloads as wl
from parbench.studies.gil.plan import GilCell

RECORD_VERSION = 1
# what the record keeps of the worker's own description
WORKER_FIELDS = ("worker_version", "wall_clock", "cpu_clock", "jit_clock", "cpu_clock_resolution_sec",
                 "children_cpu_resolution_sec", "warmup_rounds", "jit_quiet", "start_method")
STDERR_LINES = 8


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_worker(argv: list[str], spec: dict, timeout_sec: float, runtime_env: dict | None = None) -> dict:
    """Run the worker under `argv` (the interpreter and its arguments); returns its exit
    code, its output document (None when it wrote none), the tail of its stderr and
    whether it timed out. The interpreter and every process it started are gone when
    this returns or raises (KeyboardInterrupt included)."""
    with tempfile.TemporaryDirectory(prefix="parbench-gil-") as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec_path.write_text(json.dumps(spec))
        cmd = [*argv, str(plan.WORKER), str(spec_path), str(out_path)]
        spawned = time.time()
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp,
                                    env=rt.worker_environment(runtime_env=runtime_env), start_new_session=True)
        except OSError as exc:
            return {"exit_code": None, "output": None, "stderr": f"cannot start {argv[0]}: {exc}",
                    "timed_out": False, "command": cmd}
        timed_out = False
        try:
            try:
                out, err = proc.communicate(timeout=timeout_sec)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(proc.pid)
                out, err = proc.communicate()
        finally:
            # the interpreter's own workers (multiprocessing) share its process group
            _kill_group(proc.pid)
            if proc.poll() is None:
                proc.wait()
        output = None
        if out_path.exists():
            try:
                output = json.loads(out_path.read_text())
            except ValueError:
                output = None
    tail = "\n".join((err or "").strip().splitlines()[-STDERR_LINES:] + (out or "").strip().splitlines()[-2:])
    # the interpreter's start-up: from its spawn to the worker's first line (imports included)
    started = (output or {}).get("started_unix")
    startup = started - spawned if isinstance(started, (int, float)) and started >= spawned else None
    return {"exit_code": proc.returncode, "output": output, "stderr": tail, "timed_out": timed_out, "command": cmd,
            "startup_sec": startup}


def check_point(point: dict, spec: dict, expected) -> dict:
    """The point as recorded: its runs and warm-ups, and status "ok" only when every
    chunk of every run returned `expected`."""
    out = {"execution": point["execution"], "workers": point["workers"], "status": point["status"],
           "failure": point.get("reason"), "warmup": point.get("warmup", []), "runs": point.get("runs", [])}
    if point["status"] == "unavailable":
        return out
    if point["status"] == "error":
        out["status"] = "failed"
        out["failure"] = "raised: " + " ".join(str(point.get("reason", "")).strip().splitlines()[-2:])
        return out
    # the warm-up rounds the worker may run (its `measure` computes the same bound; it
    # cannot import this module, as the interpreters it runs under lack parbench)
    quiet = spec.get("jit_quiet")
    most_warmups = max(spec["warmup_runs"], quiet["max_warmup_runs"]) if quiet else spec["warmup_runs"]
    for phase, fewest, most in (("warmup", spec["warmup_runs"], most_warmups),
                                ("runs", spec["repetitions"], spec["repetitions"])):
        if not fewest <= len(out[phase]) <= most:
            wanted = fewest if fewest == most else f"{fewest} to {most}"
            out["status"], out["failure"] = "failed", f"{len(out[phase])} {phase} instead of {wanted}"
            return out
        for run in out[phase]:
            problem = wl.check_results(run.get("results"), spec["chunks"], expected)
            if problem:
                kind = "warm-up run" if phase == "warmup" else "timed run"
                out["status"], out["failure"] = "failed", f"{kind} {run.get('rep')}: {problem}"
                return out
    return out


REPORTED = ("implementation", "version", "sys_version", "host_version", "executable", "gil_enabled",
            "free_threaded_build", "cpu_count", "cores_available", "python_gil_env")


def build_of(resolution: rt.Resolution) -> tuple[dict | None, str | None]:
    """For a runtime built by the study: (its build record, None) or (None, why it cannot
    run); (None, None) for any other runtime."""
    from parbench.studies.gil import cpython

    if not resolution.build:
        return None, None
    path = Path(cpython.build_record(resolution.build))
    if not path.exists():
        return None, (f"the {resolution.build} CPython build has no record ({path}): run the pipeline, whose "
                      f"rule gil_cpython_build makes it")
    record = json.loads(path.read_text())
    if not record.get("available"):
        return None, record.get("reason") or f"the {resolution.build} CPython build is not available"
    return record, None


def build_facts(build: dict | None) -> dict:
    """Where a built interpreter came from (the build's record), for the cell's record."""
    if not build:
        return {}
    source = build.get("source", {})
    return {"build_flavour": build["flavour"], "build_version": build["version"], "build_key": build["key"],
            "build_configure": build.get("configure"), "build_skipped_modules": build.get("skipped_modules"),
            "source_origin": source.get("origin"), "source_sha256": source.get("sha256"),
            "source_pinned": source.get("pinned"), "source_package": source.get("package"),
            "source_debian_version": source.get("debian_version"), "source_mirror": source.get("mirror")}


def runtime_facts(resolution: rt.Resolution, reported: dict | None, build: dict | None = None) -> dict:
    """The runtime as configured, resolved and (when it ran) as it describes itself;
    `has_gil` is what the interpreter says, else what the config declares."""
    facts = {**resolution.summary(), **{k: None for k in REPORTED}, **build_facts(build)}
    if build:
        facts["argv"] = [build["python"]]
    if reported:
        facts.update({k: reported.get(k) for k in REPORTED})
    detected = facts["gil_enabled"]
    facts["has_gil"] = detected if detected is not None else resolution.gil_declared
    return facts


def ms(seconds) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e3:.2f}"


def _median(values):
    from parbench.stats import median

    return median([v for v in values if v is not None])


def console_line(record: dict, repetitions: int = 1) -> str:
    """One line per repetition of a cell: the median wall time of every point in this
    launch, in milliseconds (which repetition, when there are several, at the end)."""
    cell = record["cell"]
    head = f"  gil {cell['runtime']:<12} {cell['workload']:<23}"
    rep = f" [rep {cell.get('rep', 0) + 1}/{repetitions}]" if repetitions > 1 else ""
    if record["status"] == "unavailable":
        return f"{head} not measured: {record['failure']}{rep}"
    parts, by_execution = [], {}
    for p in record["points"]:
        by_execution.setdefault(p["execution"], []).append(p)
    for execution, points in by_execution.items():
        shown = []
        for p in points:
            value = ms(_median([r["wall_sec"] for r in p["runs"]])) if p["status"] == "ok" else p["status"]
            shown.append(value if execution == "sequential" else f"{p['workers']}: {value}")
        parts.append(f"{execution} {' '.join(shown)}")
    line = f"{head} " + " | ".join(parts) + " ms"
    if record["status"] == "failed":
        line += f"   FAILED: {record['failure']}"
    return line + rep


def measure(cfg: dict, cell: GilCell, spec: dict | None = None) -> dict:
    """One measurement of the cell as its record, as the runner makes it (nothing written)."""
    from parbench import runner
    from parbench.studies.gil.study import Gil

    return runner.measured_record(Gil(spec), cfg, cell)


def main(args) -> int:
    from parbench import config as pbconfig
    from parbench import runner
    from parbench.studies.gil.study import Gil

    cfg = pbconfig.load_for_command("gil-cell", args.profile, args.overrides)
    gc = cfg["gil"]
    if args.runtime not in gc["measure"]:
        raise SystemExit(f"parbench gil-cell: --runtime {args.runtime!r} is not measured by this config; "
                         f"allowed: {', '.join(gc['measure'])}")
    if args.workload not in gc["workloads"]:
        raise SystemExit(f"parbench gil-cell: --workload {args.workload!r} is not in this config; "
                         f"allowed: {', '.join(gc['workloads'])}")
    if args.rep < 0:
        raise SystemExit(f"parbench gil-cell: --rep must be >= 0 (got {args.rep})")
    cell = GilCell(args.runtime, args.workload, args.rep)
    return runner.exit_code(runner.run_cell(Gil(), cfg, cell, args.out_stem, command="gil-cell"))


def add_commands(sub) -> None:
    p = sub.add_parser("gil-cell", help="measure one gil cell (one runtime, one workload)")
    p.set_defaults(func=main)
    p.add_argument("--profile", default="local", help="profile in conf/ (default: local)")
    p.add_argument("--runtime", required=True, help="a runtime of gil.measure, e.g. cpython, pypy, jython")
    p.add_argument("--workload", required=True, help="a workload of gil.workloads, e.g. multithread_cpu")
    p.add_argument("--rep", type=int, default=0, help="which repetition of the cell this is (from 0; default 0)")
    p.add_argument("--out-stem", help="output path without .json (default: the pipeline's path for the cell)")
    p.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. gil.runs_per_cell=5")
