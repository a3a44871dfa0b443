# -*- coding: utf-8 -*-
"""The gil study's worker: the one script every measured interpreter runs.

    <interpreter> worker.py SPEC.json OUT.json

It must run unchanged under Python 2.7 (Jython) and Python 3 (CPython, PyPy, a
free-threaded CPython, protoPython, ...): no f-strings, no `nonlocal`, no keyword-only
arguments, `xrange` where Python 2 has it, nothing outside the standard library, and
never an import of parbench (the interpreters measured do not have it).

SPEC (JSON) names the workload and its parameters, the chunks, the (execution, workers)
configurations to measure, the warm-up runs and the repetitions:

    {"workload": "multithread_cpu", "kind": "sum_range", "chunks": 4,
     "params": {"n": 50000, "repeat": 1},
     "configs": [["sequential", 1], ["threads", 1], ["threads", 2], ["processes", 2]],
     "warmup_runs": 2, "repetitions": 7}

A run does the whole fixed amount of work once: `chunks` chunks, dealt round-robin to the
workers (worker w takes chunks w, w + workers, ...). `sequential` runs every chunk in the
main thread; `threads` starts `workers` threading.Thread workers and joins them (as the
seed's benchmark does, starting and joining is inside the timed region); `processes`
starts `workers` multiprocessing processes (fork on Linux, the platform's default, spawn,
on macOS: as CPython does there), collects
their results through pipes and joins them, also inside the timed region.

First every configuration runs `warmup_runs` times (results checked, times kept apart:
this is where a JIT compiles the loops), then the repetitions run round-robin over the
configurations (repetition 1 of each, then repetition 2, ...), so that a burst of load
from elsewhere on the machine hits every configuration alike.

Where the runtime says how long its JIT has spent compiling (the JVM's
CompilationMXBean, under Jython), every run records the compile seconds it overlapped
(`jit_sec`), and the warm-up goes on past `warmup_runs` while the JIT is still busy: with
"jit_quiet": {"fraction": F, "max_warmup_runs": M} in SPEC, another warm-up round (every
configuration once more) follows as long as the last round's compile seconds exceed F of
its wall seconds, up to M rounds in all. Compiling that still overlaps a timed run takes a
core from the threads, not from the sequential run (which leaves the other core to the
compiler), so it would be charged to the threads. OUT says how many rounds ran and
whether the JIT went quiet.

OUT (JSON) holds what the interpreter is (implementation, version, GIL), the clocks used,
and per configuration its status ("ok", "unavailable" with the reason when the runtime
lacks what it needs, e.g. Jython has no multiprocessing, "error" with the exception) and
per run the wall time, the CPU time where the runtime can measure it, and every chunk's
result. The caller (parbench, under CPython) checks the results; this script only reports.
"""
from __future__ import division, print_function

import json
import platform
import sys
import threading
import time
import traceback

try:
    xrange  # Python 2 (Jython): the lazy range
except NameError:  # Python 3
    xrange = range

WORKER_VERSION = 3


# --- clocks -------------------------------------------------------------------------------------

def _wall_clock():
    """(name, function returning seconds): the finest monotonic clock the runtime has."""
    if hasattr(time, "perf_counter"):
        return "time.perf_counter", time.perf_counter
    try:  # Jython 2.7: time.time() has millisecond resolution; the JVM's nanoTime does not
        from java.lang import System
        return "java.lang.System.nanoTime", lambda: System.nanoTime() / 1e9
    except ImportError:
        return "time.time", time.time


def _cpu_clock():
    """(name, function returning the CPU seconds of this process, all its threads) or
    (None, None) when the runtime cannot tell."""
    if hasattr(time, "process_time"):
        return "time.process_time", time.process_time
    try:  # Jython: the JVM's own figure (it includes the JIT compiler and GC threads)
        from java.lang.management import ManagementFactory
        bean = ManagementFactory.getOperatingSystemMXBean()
        bean.getProcessCpuTime()
        return "OperatingSystemMXBean.getProcessCpuTime", lambda: bean.getProcessCpuTime() / 1e9
    except Exception:
        pass
    try:
        import os
        os.times()
        return "os.times", lambda: sum(os.times()[:2])
    except Exception:
        return None, None


def _jit_clock():
    """(name, function returning the seconds this process's JIT has spent compiling) or
    (None, None) when the runtime cannot tell (CPython has no JIT; PyPy does not say)."""
    try:
        from java.lang.management import ManagementFactory
        bean = ManagementFactory.getCompilationMXBean()
        if bean is None or not bean.isCompilationTimeMonitoringSupported():
            return None, None
        return "CompilationMXBean.getTotalCompilationTime", lambda: bean.getTotalCompilationTime() / 1e3
    except Exception:
        return None, None


def observed_step(clock, wall, budget=0.25, steps=5):
    """The smallest step seen between distinct readings of `clock` (seconds) while
    spinning at most `budget` wall seconds: the clock's real resolution (a JVM's process
    CPU time may step by 10 ms whatever its unit says). None when it never moved."""
    seen, end = [], wall() + budget
    last = clock()
    while len(seen) < steps and wall() < end:
        now = clock()
        if now != last:
            seen.append(now - last)
            last = now
    return min(seen) if seen else None


def _children_resolution():
    """The resolution of the children's CPU seconds `_children_cpu` reads, or None:
    getrusage's microseconds (Linux sums the reaped children's exact scheduler runtime),
    else os.times()'s clock ticks (10 ms on Linux)."""
    try:
        import resource  # noqa: F401
        return 1e-6
    except ImportError:
        pass
    try:
        import os
        return 1.0 / os.sysconf("SC_CLK_TCK")
    except Exception:
        return None


def _children_cpu():
    """CPU seconds of the reaped child processes (for the processes execution), or None:
    getrusage(RUSAGE_CHILDREN) where the runtime has it, else os.times()."""
    try:
        import resource
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime
    except ImportError:
        pass
    try:
        import os
        t = os.times()
        return t[2] + t[3]
    except Exception:
        return None


# --- workloads: one chunk of each; every chunk returns its result ------------------------------

def chunk_sum_range(params):
    """The seed's chunk, `sum(range(n))`, done `repeat` times (1 for the seed itself)."""
    n, total = params["n"], 0
    for _ in xrange(params["repeat"]):
        total += sum(xrange(n))
    return total


def chunk_alloc(params):
    """Allocation under load: build `items` small dicts, each holding a small list, keep
    them alive in batches of `batch` (so that no JIT can prove them dead and skip the
    allocation), read them back and drop the batch."""
    batch, acc, keep = params["batch"], 0, []
    for i in xrange(params["items"]):
        keep.append({"k": i, "v": [i, i + 1, i + 2]})
        if len(keep) == batch:
            for d in keep:
                acc += d["k"] + len(d["v"])
            keep = []
    for d in keep:
        acc += d["k"] + len(d["v"])
    return acc


_BUFFERS = {}


def hash_buffer(kib):
    """The buffer the hashlib chunks digest: the bytes 0..255 repeated, `kib` KiB."""
    if kib not in _BUFFERS:
        _BUFFERS[kib] = bytes(bytearray(range(256)) * (kib * 4))
    return _BUFFERS[kib]


def chunk_hashlib(params):
    """A native call: SHA-256 over `updates` x `buffer_kib` KiB. CPython releases the GIL
    inside hashlib for buffers of more than 2 KiB."""
    import hashlib
    data, h = hash_buffer(params["buffer_kib"]), hashlib.sha256()
    for _ in xrange(params["updates"]):
        h.update(data)
    return h.hexdigest()


CHUNKS = {"sum_range": chunk_sum_range, "alloc": chunk_alloc, "hashlib": chunk_hashlib}


def _prepare(kind, params):
    """What a workload needs before any timed run (outside the timed region)."""
    if kind == "hashlib":
        import hashlib  # noqa: F401  (ImportError: the workload is unavailable)
        hash_buffer(params["buffer_kib"])


# --- executions ----------------------------------------------------------------------------------

def _indices(worker, workers, chunks):
    return list(xrange(worker, chunks, workers))


def run_sequential(kind, params, chunks, workers):
    fn = CHUNKS[kind]
    return [fn(params) for _ in xrange(chunks)]


def run_threads(kind, params, chunks, workers):
    fn, results, errors = CHUNKS[kind], [None] * chunks, []

    def work(worker):
        try:
            for i in _indices(worker, workers, chunks):
                results[i] = fn(params)
        except Exception:
            errors.append(traceback.format_exc())

    threads = [threading.Thread(target=work, args=(w,)) for w in xrange(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError("a worker thread failed:\n" + errors[0])
    return results


def _process_main(kind, params, indices, conn):
    """A worker process: its chunks, sent back as (index, result) pairs (or the error)."""
    try:
        fn = CHUNKS[kind]
        conn.send([(i, fn(params)) for i in indices])
    except Exception:
        conn.send(("error", traceback.format_exc()))
    conn.close()


_CONTEXT = []
# the ImportError of multiprocessing, once seen (a runtime without it, e.g. Jython)
_NO_MULTIPROCESSING = []


def start_method_for(platform_name, methods):
    """The start method the processes execution uses: the one CPython uses by default on
    that platform, so that the measurement is what a user of that platform gets. Linux:
    fork (a worker starts in milliseconds; CPython's default up to 3.13, and still
    offered). macOS and Windows: the platform's default (spawn; CPython stopped forking on
    macOS in 3.8, fork being unsafe with its system libraries), None here."""
    if platform_name.startswith("linux") and "fork" in methods:
        return "fork"
    return None


def mp_context():
    """The multiprocessing context (start_method_for this platform). ImportError when the
    runtime has no multiprocessing (Jython)."""
    if _NO_MULTIPROCESSING:  # a failed import is slow on Jython (seconds): tried once per launch
        raise _NO_MULTIPROCESSING[0]
    if not _CONTEXT:
        try:
            import multiprocessing
        except ImportError as exc:
            _NO_MULTIPROCESSING.append(exc)
            raise
        ctx = multiprocessing
        if hasattr(multiprocessing, "get_context"):
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context(start_method_for(sys.platform, methods))
        _CONTEXT.append(ctx)
    return _CONTEXT[0]


def start_method():
    try:
        ctx = mp_context()
    except ImportError:
        return None
    get = getattr(ctx, "get_start_method", None)
    return get() if get else "fork"


def run_processes(kind, params, chunks, workers):
    ctx = mp_context()
    procs, pipes = [], []
    try:
        for w in xrange(workers):
            recv, send = ctx.Pipe(False)
            p = ctx.Process(target=_process_main, args=(kind, params, _indices(w, workers, chunks), send))
            p.daemon = True
            p.start()
            send.close()
            procs.append(p)
            pipes.append(recv)
        results = [None] * chunks
        for recv in pipes:
            got = recv.recv()
            if isinstance(got, tuple) and got and got[0] == "error":
                raise RuntimeError("a worker process failed:\n" + got[1])
            for i, value in got:
                results[i] = value
        for p in procs:
            p.join()
        return results
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join()


EXECUTIONS = {"sequential": run_sequential, "threads": run_threads, "processes": run_processes}


def availability(execution, kind, params):
    """None when the configuration can run here, else why it cannot."""
    try:
        _prepare(kind, params)
    except ImportError as exc:
        return "this runtime has no module needed by the workload (ImportError: %s)" % exc
    if execution == "threads":
        return None
    if execution == "processes":
        try:
            mp_context()
        except ImportError as exc:
            return "this runtime has no multiprocessing module (ImportError: %s)" % exc
    return None


# --- the interpreter ----------------------------------------------------------------------------

def runtime_info():
    impl = platform.python_implementation()
    info = {
        "implementation": impl,
        "version": platform.python_version(),
        "sys_version": sys.version,
        "executable": sys.executable,
        "platform": str(sys.platform),
        "host_version": None,
        "gil_enabled": None,
        "free_threaded_build": None,
    }
    if hasattr(sys, "pypy_version_info"):
        v = sys.pypy_version_info
        info["host_version"] = "PyPy %d.%d.%d" % (v[0], v[1], v[2])
    if impl == "Jython":
        try:
            from java.lang import System
            info["host_version"] = "Java %s" % System.getProperty("java.version")
        except ImportError:
            pass
    try:
        import sysconfig
        flag = sysconfig.get_config_var("Py_GIL_DISABLED")
        info["free_threaded_build"] = None if flag is None else bool(flag)
    except ImportError:
        pass
    if hasattr(sys, "_is_gil_enabled"):  # CPython 3.13+: False on a free-threaded build
        info["gil_enabled"] = bool(sys._is_gil_enabled())
    elif impl in ("CPython", "PyPy"):
        info["gil_enabled"] = True
    elif impl in ("Jython", "IronPython"):
        info["gil_enabled"] = False
    try:  # what PYTHON_GIL this interpreter was started with (None: unset)
        import os
        info["python_gil_env"] = os.environ.get("PYTHON_GIL")
        info["cores_available"] = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    except Exception:
        info["python_gil_env"], info["cores_available"] = None, None
    try:
        import multiprocessing
        info["cpu_count"] = multiprocessing.cpu_count()
    except Exception:
        try:
            from java.lang import Runtime
            info["cpu_count"] = Runtime.getRuntime().availableProcessors()
        except Exception:
            info["cpu_count"] = None
    if info["cores_available"] is None:
        info["cores_available"] = info["cpu_count"]
    return info


# --- measuring ----------------------------------------------------------------------------------

def timed_run(execution, kind, params, chunks, workers, wall, cpu, jit=None):
    jit0 = jit() if jit else None
    cpu0 = cpu() if cpu else None
    child0 = _children_cpu() if execution == "processes" else None
    t0 = wall()
    results = EXECUTIONS[execution](kind, params, chunks, workers)
    t1 = wall()
    cpu_sec = None
    if cpu:
        cpu_sec = cpu() - cpu0
        if execution == "processes":
            child1 = _children_cpu()
            cpu_sec = None if child0 is None or child1 is None else cpu_sec + (child1 - child0)
    return {"wall_sec": t1 - t0, "cpu_sec": cpu_sec, "jit_sec": jit() - jit0 if jit else None, "results": results}


def jit_still_busy(round_runs, fraction):
    """Whether a warm-up round's runs overlapped more JIT compiling than `fraction` of
    their wall time (False when no run could tell)."""
    walls = [r["wall_sec"] for r in round_runs]
    jits = [r["jit_sec"] for r in round_runs if r.get("jit_sec") is not None]
    return bool(jits) and sum(jits) > fraction * sum(walls)


def measure(spec, jit_clock=None):
    """Measure what SPEC asks; `jit_clock` (name, function) stands in for the runtime's
    own (tests pass one)."""
    wall_name, wall = _wall_clock()
    cpu_name, cpu = _cpu_clock()
    jit_name, jit = jit_clock or _jit_clock()
    kind, params, chunks = spec["kind"], spec["params"], spec["chunks"]
    configs = []
    for execution, workers in spec["configs"]:
        reason = availability(execution, kind, params)
        configs.append({"execution": execution, "workers": workers,
                        "status": "unavailable" if reason else "ok", "reason": reason,
                        "warmup": [], "runs": []})

    def run(config, into, rep):
        if config["status"] != "ok":
            return None
        try:
            out = timed_run(config["execution"], kind, params, chunks, config["workers"], wall, cpu, jit)
        except Exception:
            config["status"], config["reason"] = "error", traceback.format_exc()
            return None
        out["rep"] = rep
        config[into].append(out)
        return out

    # at most this many warm-up rounds (run_cell.check_point checks the same bound)
    quiet = spec.get("jit_quiet") if jit else None
    most = max(spec["warmup_runs"], quiet["max_warmup_runs"]) if quiet else spec["warmup_runs"]
    rounds, jit_quiet = 0, None
    while rounds < most:
        done = [run(config, "warmup", rounds) for config in configs]
        rounds += 1
        if rounds < spec["warmup_runs"]:
            continue
        if not quiet:
            break
        jit_quiet = not jit_still_busy([r for r in done if r], quiet["fraction"])
        if jit_quiet:
            break
    for r in xrange(spec["repetitions"]):
        for config in configs:
            run(config, "runs", r)
    # the CPU clocks' real resolution: a reading coarser than a tenth of its run is not
    # used (the aggregation records it null, with the reason)
    cpu_step = observed_step(cpu, wall) if cpu else None
    children_step = _children_resolution() if any(c[0] == "processes" for c in spec["configs"]) else None
    return {"worker_version": WORKER_VERSION, "workload": spec["workload"], "kind": kind,
            "runtime": runtime_info(), "wall_clock": wall_name, "cpu_clock": cpu_name, "jit_clock": jit_name,
            "cpu_clock_resolution_sec": cpu_step, "children_cpu_resolution_sec": children_step,
            "warmup_rounds": rounds, "jit_quiet": jit_quiet,
            "start_method": start_method(), "configs": configs}


def main(argv):
    started = time.time()  # how long the interpreter took to get here is its start-up (run_cell)
    if len(argv) != 3:
        sys.stderr.write("usage: worker.py SPEC.json OUT.json\n")
        return 2
    with open(argv[1]) as fh:
        spec = json.load(fh)
    if spec["kind"] not in CHUNKS:
        sys.stderr.write("worker.py: unknown workload kind %r; allowed: %s\n"
                         % (spec["kind"], ", ".join(sorted(CHUNKS))))
        return 2
    # who is running, written first: an interpreter that dies while measuring leaves
    # this partial document behind, which tells the caller that it did start
    with open(argv[2], "w") as fh:
        json.dump({"worker_version": WORKER_VERSION, "partial": True, "runtime": runtime_info()}, fh)
    out = measure(spec)
    out["started_unix"] = started
    with open(argv[2], "w") as fh:
        json.dump(out, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
