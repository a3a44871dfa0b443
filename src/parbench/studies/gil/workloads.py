"""The gil study's workloads: what each chunk computes, its parameters, and the result
every chunk must return (computed here, under CPython, independently of the runtime
measured: the worker only reports what it got).

- multithread_cpu: `sum(range(n))` per chunk (the seed: 4 chunks, n = 50,000): the
  seed's benchmark, exactly;
- multithread_cpu_scaled: the same, `repeat` times per chunk: the seed's shape, long
  enough to time well above the clock's noise;
- multithread_alloc: build `items` small dicts holding small lists, in batches:
  allocation under threads (the seed's protoPython lost 70x to a shared allocator);
- multithread_hashlib: SHA-256 over `updates` x `buffer_kib` KiB: a native call that
  releases CPython's GIL, as pyca/cryptography and liboqs do in sigpar.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Workload:
    name: str
    # the chunk function of the worker script (worker.CHUNKS)
    kind: str
    # what it is, for the header and the paper
    description: str
    # does its chunk run Python code holding the GIL (True) or a native call releasing it
    pure_python: bool


CATALOG = {
    w.name: w for w in (
        Workload("multithread_cpu", "sum_range", "the seed's chunks of sum(range(n))", True),
        Workload("multithread_cpu_scaled", "sum_range", "the seed's chunks, each repeated", True),
        Workload("multithread_alloc", "alloc", "small dicts and lists built and dropped", True),
        Workload("multithread_hashlib", "hashlib", "SHA-256 over large buffers (releases the GIL)", False),
    )
}
ORDER = list(CATALOG)
# Parameters of each kind besides `chunks` and `estimate_sec` (what the worker receives).
PARAMETERS = {"sum_range": ("n", "repeat"), "alloc": ("items", "batch"), "hashlib": ("buffer_kib", "updates")}


def get(name: str) -> Workload:
    if name not in CATALOG:
        raise KeyError(f"unknown gil workload {name!r}; allowed: {', '.join(CATALOG)}")
    return CATALOG[name]


def params_of(name: str, section: dict) -> dict:
    """The chunk parameters the worker receives, from the workload's config section."""
    return {k: section[k] for k in PARAMETERS[get(name).kind]}


def hash_buffer(kib: int) -> bytes:
    """The same buffer as the worker's `hash_buffer`: bytes 0..255 repeated, `kib` KiB."""
    return bytes(range(256)) * (kib * 4)


def expected_chunk(name: str, params: dict):
    """The result every chunk of the workload must return."""
    kind = get(name).kind
    if kind == "sum_range":
        n = params["n"]
        return params["repeat"] * (n * (n - 1) // 2)
    if kind == "alloc":
        items = params["items"]
        return items * (items - 1) // 2 + 3 * items  # sum over i of d["k"] + len(d["v"]) = i + 3
    if kind == "hashlib":
        h, data = hashlib.sha256(), hash_buffer(params["buffer_kib"])
        for _ in range(params["updates"]):
            h.update(data)
        return h.hexdigest()
    raise AssertionError(kind)


def check_results(results: list, chunks: int, expected) -> str | None:
    """None when the run returned every chunk's expected result, else what was wrong."""
    if not isinstance(results, list) or len(results) != chunks:
        got = len(results) if isinstance(results, list) else type(results).__name__
        return f"expected {chunks} chunk results, got {got}"
    for i, value in enumerate(results):
        if value != expected:
            return f"chunk {i} returned {value!r}, expected {expected!r}"
    return None
