"""Run one sigpar cell: one algorithm, one operation, one mode, one worker count, one
backend.

The cell's parent process loads (or makes) the cached keys and checks them, starts the
telemetry (per-core CPU sampler, energy meter), then starts the workers:

- threading: N threads in this process, each building key objects of its own;
- multiprocess: N spawned processes, each loading the keys from the cache file;
- native-threads: the native runner (native/cryptoshim) with N POSIX threads, each with a
  signer of its own, running the same timed loop in C (see `shim.run_native`).

In the Python modes the backend decides what the workers call: the library binding
(pyca/cryptography, liboqs-python) or `openssl-cffi` (the crypto shim through cffi).

Each worker pins itself to its planned core, waits on a barrier shared with the parent,
and runs the timed loop of `parbench.studies.sigpar.harness`. After the loop, outside the timed
part, each worker checks what it measured: a sign worker verifies the signatures it
kept; a verify worker checks that every verification it kept succeeded; and every worker
checks that a tampered signature is rejected. A cell that fails a check, or whose worker
raises, is recorded with status "failed" and a message.

Outputs (stem = data/raw/<profile>/parallelism/<mode>/<ALG>_<op>_t<N>):
- `<stem>.csv`: the seed's per-worker snapshot rows;
- `<stem>_system.json`: the seed's system telemetry (per-core CPU samples, power);
- `<stem>_cell.json`: everything: parameters, per-worker results, latency samples,
  correctness, telemetry capabilities, provenance. Aggregation reads this one.

Ctrl+C (SIGINT) or SIGTERM stops every worker at once and exits 130 without outputs.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import multiprocessing as mp
import os
import queue as queue_mod
import signal
import sys
import threading
import time
import traceback
from bisect import bisect_right
from dataclasses import asdict, dataclass
from pathlib import Path

from parbench import paths, stats
from parbench.studies.sigpar import algorithms, keys as keycache, shim, signers
from parbench.studies.sigpar.harness import Schedule, WorkerRun, run_worker, sample_latencies
from parbench.studies.sigpar.plan import Cell

RECORD_VERSION = 1
CSV_COLUMNS = ["timestamp", "worker_id", "ops_total", "analysis_ops", "rss_bytes",
               "system_cpu_percent", "cpu_temperature_c"]
# Seconds a worker may take to start (import, load keys) before the cell gives up.
STARTUP_TIMEOUT_SEC = 300.0
# Test hook: makes verification of the named algorithm accept anything, so that the
# failure path (a tampered signature accepted) can be exercised end to end.
BREAK_VERIFY_ENV = "PARBENCH_SIGPAR_BREAK_VERIFY"


def algorithm_record(algo, library_version: str | None) -> dict:
    """The `algorithm` block of a cell record."""
    return {"name": algo.name, "family": algo.family, "kind": algo.kind, "library": algo.library,
            "security_bits": algo.security_bits, "nist_level": algo.nist_level,
            "library_version": library_version}


def backend_version(algo, backend: str, shim_dir) -> str:
    """What did the work: the Python library's version, or the OpenSSL/liboqs the shim
    runs on (the system OpenSSL, not pyca/cryptography's own)."""
    if backend not in ("openssl-cffi", "native"):
        return signers.library_version(algo)
    if algo.library == "liboqs":
        return signers.library_version(algo).split(",")[0]
    return shim.library_version(shim_dir)


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker needs; picklable, so spawned processes get it too."""

    worker_id: int
    algorithm: str
    operation: str
    cache_path: str
    message_bytes: int
    schedule: Schedule
    cpus: tuple[int, ...]
    collect_latencies: bool
    collect_memory: bool
    max_latency_samples: int
    backend: str = "pyca"
    shim_dir: str | None = None


# --- inside a worker -------------------------------------------------------------------------

def _rss_reader(collect_memory: bool):
    if not collect_memory:
        return lambda: None
    try:
        import psutil
    except ImportError:
        return lambda: None
    process = psutil.Process()
    return lambda: process.memory_info().rss


def _make_ops(spec: WorkerSpec, keys: keycache.CachedKeys) -> signers.Ops:
    algo = algorithms.get(spec.algorithm)
    if spec.backend == "openssl-cffi":
        ops = shim.make_ops(algo, keys.material, spec.shim_dir)
    else:
        ops = signers.make_ops(algo, keys.material)
    if os.environ.get(BREAK_VERIFY_ENV) == spec.algorithm:
        ops = signers.Ops(sign=ops.sign, verify=lambda message, signature: True)
    return ops


def check_correctness(operation: str, ops: signers.Ops, keys: keycache.CachedKeys, kept: list) -> dict:
    """Check what a worker measured; returns {"checked", "failed", "tamper_rejected"}."""
    if operation == "sign":
        failed = sum(1 for sig in kept if not ops.verify(keys.message, sig))
        probe = kept[-1] if kept else keys.signature
    else:
        failed = sum(1 for ok in kept if ok is not True)
        probe = keys.signature
    tamper_rejected = not ops.verify(keys.message, signers.tamper(probe))
    return {"checked": len(kept), "failed": failed, "tamper_rejected": tamper_rejected}


def _summarise(spec: WorkerSpec, run: WorkerRun, correctness: dict, pinned: tuple) -> dict:
    window = run.window_latencies_sec()
    sample = sample_latencies(window, spec.max_latency_samples, seed=spec.worker_id) if spec.collect_latencies else []
    rss = [s.rss_bytes for s in run.snapshots if s.rss_bytes is not None]
    return {
        "worker_id": spec.worker_id,
        "pinned_cpus": list(spec.cpus) if pinned[0] else [],
        "pin_note": pinned[1],
        "ops_total": run.ops_total,
        "analysis_ops": run.analysis_ops,
        "cpu_time_window_sec": run.cpu_time_window_sec,
        "wall_window_sec": run.wall_window_sec,
        "cpu_utilization": run.cpu_utilization,
        "avg_rss_bytes": sum(rss) / len(rss) if rss else None,
        "window_latency_count": len(window),
        "latencies_ms": [x * 1e3 for x in sample],
        "snapshots": [asdict(s) for s in run.snapshots],
        "start_wall": run.start_wall,
        "correctness": correctness,
    }


def _worker_body(spec: WorkerSpec, keys: keycache.CachedKeys, wait_for_start) -> dict:
    from parbench.telemetry.affinity import pin_current_thread

    pinned = pin_current_thread(list(spec.cpus)) if spec.cpus else (False, None)
    ops = _make_ops(spec, keys)
    if spec.operation == "sign":
        op = functools.partial(ops.sign, keys.message)
    else:
        op = functools.partial(ops.verify, keys.message, keys.signature)
    rss = _rss_reader(spec.collect_memory)
    wait_for_start()
    run = run_worker(op, spec.schedule, collect_latencies=spec.collect_latencies, rss=rss)
    correctness = check_correctness(spec.operation, ops, keys, run.kept_outputs)
    return _summarise(spec, run, correctness, pinned)


def _process_main(spec: WorkerSpec, barrier, results) -> None:
    """Entry point of a spawned worker process."""
    # The parent handles Ctrl+C for the whole cell and terminates its workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        algo = algorithms.get(spec.algorithm)
        keys = keycache.load_checked(Path(spec.cache_path), algo, keycache.message_for(spec.message_bytes),
                                     functional=False)
        results.put(_worker_body(spec, keys, lambda: barrier.wait(timeout=STARTUP_TIMEOUT_SEC)))
    except BaseException:  # report everything, the parent decides
        barrier.abort()
        results.put({"worker_id": spec.worker_id, "error": traceback.format_exc()})


# --- the parent ------------------------------------------------------------------------------

def _run_threads(specs: list[WorkerSpec], keys: keycache.CachedKeys, on_start) -> list[dict]:
    barrier = threading.Barrier(len(specs) + 1)
    results: list[dict] = []
    lock = threading.Lock()

    def body(spec: WorkerSpec) -> None:
        try:
            out = _worker_body(spec, keys, lambda: barrier.wait(timeout=STARTUP_TIMEOUT_SEC))
        except BaseException:
            barrier.abort()
            out = {"worker_id": spec.worker_id, "error": traceback.format_exc()}
        with lock:
            results.append(out)

    threads = [threading.Thread(target=body, args=(s,), name=f"sigpar-worker-{s.worker_id}", daemon=True)
               for s in specs]
    for t in threads:
        t.start()
    try:
        barrier.wait(timeout=STARTUP_TIMEOUT_SEC)
    except threading.BrokenBarrierError:
        pass  # a worker failed before the start; its error is in results
    else:
        on_start()
    for t in threads:
        t.join()
    return results


def _run_processes(specs: list[WorkerSpec], on_start) -> list[dict]:
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(len(specs) + 1)
    results_q = ctx.Queue()
    procs = [ctx.Process(target=_process_main, args=(s, barrier, results_q), daemon=True,
                         name=f"sigpar-worker-{s.worker_id}") for s in specs]
    try:
        for p in procs:
            p.start()
        started = True
        try:
            barrier.wait(timeout=STARTUP_TIMEOUT_SEC)
        except threading.BrokenBarrierError:
            started = False
        if started:
            on_start()
        results = []
        deadline = time.monotonic() + specs[0].schedule.run_end + STARTUP_TIMEOUT_SEC
        while len(results) < len(specs):
            try:
                results.append(results_q.get(timeout=1.0))
            except queue_mod.Empty:
                dead = [p for p in procs if p.exitcode not in (None, 0)]
                if dead or time.monotonic() > deadline:
                    reported = {r["worker_id"] for r in results}
                    for s in specs:
                        if s.worker_id not in reported:
                            results.append({"worker_id": s.worker_id,
                                            "error": "worker process exited without a result "
                                                     f"(exit codes {[p.exitcode for p in procs]})"})
                    break
        for p in procs:
            p.join(timeout=10)
        return results
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=5)


def _timeline(schedule: Schedule, energy) -> tuple[float, float]:
    """Called by the parent right after the barrier: marks the energy window at its
    times and returns (wall time of the start, wall time of the window start)."""
    start_wall, t0 = time.time(), time.perf_counter()

    def mark(at: float, fn) -> None:
        delay = t0 + at - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        fn()

    mark(schedule.window_start, energy.mark_window_start)
    mark(schedule.window_end, energy.mark_window_end)
    return start_wall, start_wall + schedule.window_start


def _nearest_before(samples: list[dict], key: str, t: float):
    if not samples:
        return None
    times = [s["timestamp"] for s in samples]
    i = bisect_right(times, t) - 1
    return samples[max(i, 0)][key]


def csv_rows(workers: list[dict], cpu_samples: list[dict], temperature_c) -> list[list]:
    rows = []
    for w in sorted(workers, key=lambda w: w["worker_id"]):
        for s in w.get("snapshots", []):
            rows.append([s["timestamp"], w["worker_id"], s["ops_total"], s["analysis_ops"], s["rss_bytes"],
                         _nearest_before(cpu_samples, "avg", s["timestamp"]), temperature_c])
    rows.sort(key=lambda r: (r[0], r[1]))
    return rows


def summarise_cell(workers: list[dict], window_sec: float, measurement: dict) -> dict:
    """Cell-level figures from the workers' results."""
    ok = [w for w in workers if "error" not in w]
    analysis_ops = sum(w["analysis_ops"] for w in ok)
    latencies_sec = [x / 1e3 for w in ok for x in w["latencies_ms"]]
    latency = (stats.latency_summary_ms(latencies_sec) if measurement["collect_latencies"]
               else {k: None for k in stats.latency_summary_ms([])} | {"latency_samples": 0})
    return {
        "analysis_ops": analysis_ops,
        "ops_per_sec": analysis_ops / window_sec,
        **latency,
        "avg_cpu_utilization": stats.mean_or_none(w["cpu_utilization"] for w in ok),
        "avg_rss_bytes": stats.mean_or_none(w["avg_rss_bytes"] for w in ok),
        "ops_total": sum(w["ops_total"] for w in ok),
        "window_rate_cv": stats.interval_rate_cv([w["snapshots"] for w in ok]),
    }


def correctness_verdict(workers: list[dict]) -> str | None:
    """None when every worker ran and passed its checks, else what went wrong."""
    problems = []
    for w in sorted(workers, key=lambda w: w["worker_id"]):
        if "error" in w:
            last = w["error"].strip().splitlines()[-1]
            problems.append(f"worker {w['worker_id']} failed: {last}")
            continue
        c = w["correctness"]
        if c["failed"]:
            problems.append(f"worker {w['worker_id']}: {c['failed']} of {c['checked']} checked results did not verify")
        if not c["tamper_rejected"]:
            problems.append(f"worker {w['worker_id']}: a tampered signature was accepted")
        if c["checked"] == 0:
            problems.append(f"worker {w['worker_id']}: no result was kept to check")
    return "; ".join(problems) or None


def power_log_dir(profile: str) -> Path:
    """Where macOS powermetrics writes its logs (made here): the profile's log folder.
    Derived from the profile, not put into the config, which the record's config hash
    covers (a key added here gave sigpar's records a hash no other study's had)."""
    folder = Path(paths.LOGS.format(profile=profile)) / "power"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def measure(cfg: dict, cell: Cell, log=lambda m: print(m, file=sys.stderr, flush=True),
            shim_dir: str | None = None) -> dict:
    """Run the cell and return what it measured (the record's own fields, beside the
    runner's; see module doc); the workers' correctness is checked by
    `correctness_verdict`. `shim_dir` is the crypto shim's build, for the openssl-cffi
    backend and the native-threads mode."""
    from parbench.telemetry.affinity import plan_affinity
    from parbench.telemetry.cpu import CpuSampler, mean_avg
    from parbench.telemetry.energy import EnergyMeter

    sp, tel = cfg["sigpar"], cfg["telemetry"]
    algo = algorithms.get(cell.algorithm)
    schedule = Schedule(sp["warmup_sec"], sp["duration_sec"], sp["analysis_window_sec"], tel["sample_interval_sec"])
    warnings: list[str] = []
    keys = keycache.load_or_create(algo, sp["cache_dir"], sp["message_bytes"],
                                   warn=lambda m: (warnings.append(m), log(m)))
    aff = tel["cpu_affinity"]
    plan = (plan_affinity(aff["strategy"], aff["performance_cores"], aff["efficiency_cores"], cell.workers)
            if aff["enabled"] else [[] for _ in range(cell.workers)])
    specs = [WorkerSpec(i, cell.algorithm, cell.operation, str(keys.path), sp["message_bytes"], schedule,
                        tuple(plan[i]), sp["measurement"]["collect_latencies"],
                        sp["measurement"]["collect_memory"], sp["max_latency_samples"], cell.backend,
                        str(shim_dir) if shim_dir else None)
             for i in range(cell.workers)]
    energy = EnergyMeter.detect(tel["powermetrics"], power_log_dir(cfg["profile"]),
                                rapl_cfg=tel["rapl"], label=cell.label.replace(" ", "_"))
    sampler = CpuSampler(tel["sample_interval_sec"]) if sp["measurement"]["collect_cpu_percent"] else None
    window_wall: list[float] = []

    def on_start() -> None:
        window_wall.extend(_timeline(schedule, energy))

    energy.start()
    if sampler:
        sampler.start()
    try:
        if cell.mode == "threading":
            workers = _run_threads(specs, keys, on_start)
        elif cell.mode == "multiprocess":
            workers = _run_processes(specs, on_start)
        else:
            workers, _ = shim.run_native(shim_dir, algo, cell.operation, keys, schedule, sp["max_latency_samples"],
                                         sp["measurement"], [list(p) for p in plan], on_start)
    finally:
        cpu_samples = sampler.stop() if sampler else []
        power = energy.stop()

    summary = summarise_cell(workers, schedule.analysis_window_sec, sp["measurement"])
    window_bounds = (window_wall[1], window_wall[1] + schedule.analysis_window_sec) if window_wall else (None, None)
    summary["system_cpu_percent"] = mean_avg(cpu_samples, *window_bounds) if cpu_samples else None
    summary["cpu_temperature_c"] = power.get("avg_temperature_c")
    summary["energy_joules"] = power.get("energy_joules")
    summary["avg_power_w"] = power.get("avg_power_w")
    summary["energy_per_op_j"] = (power["energy_joules"] / summary["analysis_ops"]
                                  if power.get("energy_joules") is not None and summary["analysis_ops"] else None)
    summary["energy_source"] = power.get("source")
    # Why a worker could not be pinned (macOS, a core this machine lacks): recorded with
    # the cell; the run's header already said it once.
    affinity_notes = sorted({w.get("pin_note") for w in workers if w.get("pin_note")})
    return {
        "record_version": RECORD_VERSION,
        "algorithm": algorithm_record(algo, signers.library_version(algo)),
        "backend": {"name": cell.backend, "version": backend_version(algo, cell.backend, shim_dir)},
        "parameters": {"warmup_sec": sp["warmup_sec"], "duration_sec": sp["duration_sec"],
                       "analysis_window_sec": sp["analysis_window_sec"],
                       "window_start_sec": schedule.window_start, "window_end_sec": schedule.window_end,
                       "max_latency_samples": sp["max_latency_samples"], "message_bytes": sp["message_bytes"],
                       "sample_interval_sec": tel["sample_interval_sec"], "affinity_plan": plan,
                       "measurement": sp["measurement"]},
        "start_wall": window_wall[0] if window_wall else None,
        "result": summary,
        "workers": sorted(workers, key=lambda w: w["worker_id"]),
        "cpu_samples": cpu_samples,
        "power": power,
        "warnings": warnings,
        "affinity_notes": affinity_notes,
    }


def empty_result(cell: Cell) -> dict:
    """The cell's own fields when nothing was measured (a cell skipped, unavailable here, or
    whose measurement raised)."""
    return {"record_version": RECORD_VERSION, "algorithm": algorithm_record(algorithms.get(cell.algorithm), None),
            "backend": {"name": cell.backend, "version": None}, "result": {}, "workers": [], "cpu_samples": [],
            "power": {}, "warnings": []}


def side_files(record: dict) -> dict[str, str]:
    """The seed's per-worker CSV and the system samples, beside the cell's record."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(csv_rows(record["workers"], record["cpu_samples"], record["result"].get("cpu_temperature_c")))
    power = record["power"]
    system = {"cpu_samples": record["cpu_samples"],
              "power": {"energy_joules": power.get("energy_joules"), "avg_power_w": power.get("avg_power_w"),
                        "avg_temperature_c": power.get("avg_temperature_c"), "log_path": power.get("log_path"),
                        "sample_count": power.get("sample_count"), "source": power.get("source"),
                        "reason": power.get("reason")}}
    return {"csv": buf.getvalue(), "system": json.dumps(system, indent=1) + "\n"}
