"""The crypto shim (native/cryptoshim) from Python: its build, the `openssl-cffi` backend,
and the native runner of the `native-threads` mode.

- `build(out, liboqs)`: `make -C native/cryptoshim`, then `shim.json`, the descriptor
  every cell that needs the shim reads: the library and runner paths, the OpenSSL and
  liboqs they use, or `available: false` and why (no OpenSSL headers, no compiler), in
  which case those cells are recorded as unavailable with that reason.
- `make_ops(algo, material, shim_dir)`: a signer of the caller's own (keys parsed and
  contexts prepared once), and the two timed calls, through cffi in ABI mode. cffi
  releases the GIL around every C call, so threads sign in parallel.
- `run_native(...)`: the runner as a subprocess for one cell.

    python -m parbench.studies.sigpar.shim --out native/build/cryptoshim/<liboqs key> [--liboqs DIR] [--openssl DIR]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from parbench.records import write_atomic

DESCRIPTOR = "shim.json"
LIBRARY = "libparbench_crypto.so"
RUNNER = "parbench-sigpar-native"

CDEF = """
typedef struct pbc_signer pbc_signer;
pbc_signer *pbc_signer_new(const char *scheme, const char *param,
                           const char *private_key, size_t private_key_len,
                           const char *public_key, size_t public_key_len,
                           char *err, size_t err_len);
size_t pbc_max_signature(const pbc_signer *s);
int pbc_sign(pbc_signer *s, const char *msg, size_t msg_len, char *sig, size_t *sig_len);
int pbc_verify(pbc_signer *s, const char *msg, size_t msg_len, const char *sig, size_t sig_len);
const char *pbc_signer_error(const pbc_signer *s);
const char *pbc_signer_library(const pbc_signer *s);
void pbc_signer_free(pbc_signer *s);
int pbc_have_liboqs(void);
const char *pbc_openssl_version(void);
"""
PBC_OK, PBC_INVALID = 0, 1


class ShimUnavailable(RuntimeError):
    """The shim is not built on this machine; the message says why."""


class ShimError(RuntimeError):
    """The shim refused a key or an operation failed; the message says why."""


def _source_dir() -> Path:
    from parbench import project

    return project.root() / "native" / "cryptoshim"


# --- build ---------------------------------------------------------------------------------

def build(out: Path, liboqs: Path | None, jobs: int = 1, openssl: Path | None = None) -> dict:
    """Build the shim into `out` and write its descriptor; never raises for a missing
    toolchain: the descriptor then says `available: false` and why. `openssl` is the
    pipeline's OpenSSL build (parbench.native.openssl): linked when it is available,
    else the system OpenSSL, and the descriptor says which and why."""
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    cmd = ["make", "-C", str(_source_dir()), f"BUILD_DIR={out}", f"-j{jobs}", "all"]
    if liboqs:
        cmd.append(f"LIBOQS_PREFIX={Path(liboqs).resolve()}")
    openssl_doc = _openssl_build(openssl)
    if openssl_doc.get("available"):
        cmd.append(f"OPENSSL_BUILD={openssl_doc['prefix']}")
    print("$ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    print(proc.stdout + proc.stderr, flush=True)
    doc = {"available": proc.returncode == 0, "built_unix": time.time(), "command": cmd,
           "liboqs": str(Path(liboqs).resolve()) if liboqs else None,
           "openssl_build": openssl_doc.get("prefix") if openssl_doc.get("available") else None,
           "openssl_build_reason": None if openssl_doc.get("available") else openssl_doc.get("reason")}
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        missing_openssl = "openssl/evp.h" in proc.stderr
        doc["reason"] = ("the system OpenSSL's headers are missing (Debian: apt-get install libssl-dev; "
                         "macOS: brew install openssl@3)"
                         if missing_openssl else f"the build failed: {tail}")
    else:
        doc["library"] = str(out / LIBRARY)
        doc["runner"] = str(out / RUNNER)
        doc.update(versions(out / LIBRARY))
    write_atomic(out / DESCRIPTOR, json.dumps(doc, indent=1) + "\n")
    return doc


def _openssl_build(folder: Path | None) -> dict:
    """The descriptor of the pipeline's OpenSSL build, or why there is none."""
    if folder is None:
        return {"available": False, "reason": "no OpenSSL build was given: the system OpenSSL is used"}
    from parbench.native import openssl

    try:
        return openssl.descriptor(folder)
    except (OSError, ValueError) as exc:
        return {"available": False, "reason": f"the OpenSSL build in {folder} is unreadable: {exc}"}


def versions(library: Path) -> dict:
    """The OpenSSL the shim links, and whether it has liboqs."""
    ffi, lib = _load(str(library))
    return {"openssl_version": ffi.string(lib.pbc_openssl_version()).decode(),
            "with_liboqs": bool(lib.pbc_have_liboqs())}


def descriptor(shim_dir: str | os.PathLike) -> dict:
    """The shim's descriptor; ShimUnavailable (with the reason) when it is not built."""
    path = Path(shim_dir) / DESCRIPTOR
    if not path.exists():
        raise ShimUnavailable(f"the crypto shim is not built ({path} is missing); build it with "
                              f"`snakemake -c1 sigpar_shim`")
    doc = json.loads(path.read_text())
    if not doc.get("available"):
        raise ShimUnavailable(doc.get("reason") or "the crypto shim could not be built")
    return doc


# --- the cffi backend -----------------------------------------------------------------------

@functools.cache
def _load(library: str):
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    return ffi, ffi.dlopen(library)


def new_signer(shim_dir, algo, material):
    """A pbc_signer of the caller's own for `algo` with `material`'s keys: (ffi, lib,
    signer), the signer freed when the returned object is garbage."""
    from parbench.studies.sigpar.algorithms import shim_scheme

    ffi, lib = _load(descriptor(shim_dir)["library"])
    scheme, param = shim_scheme(algo)
    err = ffi.new("char[]", 256)
    raw = lib.pbc_signer_new(scheme.encode(), param.encode(), material.private_key, len(material.private_key),
                             material.public_key, len(material.public_key), err, 256)
    if raw == ffi.NULL:
        raise ShimError(f"the crypto shim refused the keys of {algo.name}: {ffi.string(err).decode()}")
    return ffi, lib, ffi.gc(raw, lib.pbc_signer_free)


def make_ops(algo, material, shim_dir):
    """The timed calls of the `openssl-cffi` backend: `sign(message) -> signature` and
    `verify(message, signature) -> bool`, each one C call (GIL released) on the
    caller's own signer with its own output buffer."""
    from parbench.studies.sigpar.signers import Ops

    ffi, lib, signer = new_signer(shim_dir, algo, material)
    capacity = lib.pbc_max_signature(signer)
    out = ffi.new("char[]", capacity)
    length = ffi.new("size_t *")
    buffer, c_sign, c_verify = ffi.buffer, lib.pbc_sign, lib.pbc_verify

    def sign(message: bytes) -> bytes:
        length[0] = capacity
        if c_sign(signer, message, len(message), out, length) != PBC_OK:
            raise ShimError(f"{algo.name} sign failed: {ffi.string(lib.pbc_signer_error(signer)).decode()}")
        return buffer(out, length[0])[:]

    def verify(message: bytes, signature: bytes) -> bool:
        return c_verify(signer, message, len(message), signature, len(signature)) == PBC_OK

    return Ops(sign=sign, verify=verify)


def library_version(shim_dir) -> str:
    return descriptor(shim_dir).get("openssl_version") or "OpenSSL (unknown version)"


# --- the native runner -----------------------------------------------------------------------

def runner_command(shim_dir, algo, operation: str, workers: int, schedule, max_latency_samples: int,
                   measurement: dict, files: dict, cpu_plan: list[list[int]]) -> list[str]:
    from parbench.studies.sigpar.algorithms import shim_scheme

    scheme, param = shim_scheme(algo)
    cmd = [descriptor(shim_dir)["runner"], "--scheme", scheme, "--param", param, "--operation", operation,
           "--workers", str(workers), "--warmup", repr(schedule.warmup_sec),
           "--duration", repr(schedule.duration_sec), "--window", repr(schedule.analysis_window_sec),
           "--sample-interval", repr(schedule.sample_interval_sec),
           "--max-latency-samples", str(max_latency_samples),
           "--private-key", files["private"], "--public-key", files["public"], "--message", files["message"],
           "--json", files["json"]]
    if operation == "verify":
        cmd += ["--signature", files["signature"]]
    if not measurement["collect_latencies"]:
        cmd.append("--no-latencies")
    if not measurement["collect_memory"]:
        cmd.append("--no-memory")
    if any(cpu_plan):
        cmd += ["--cpus", ";".join(",".join(map(str, cpus)) for cpus in cpu_plan)]
    return cmd


def run_native(shim_dir, algo, operation: str, keys, schedule, max_latency_samples: int, measurement: dict,
               cpu_plan: list[list[int]], on_start) -> tuple[list[dict], str]:
    """Run one cell with the native runner: (the workers' results in the layout of the
    Python workers, the library that did the work). `on_start()` is called as soon as
    the runner's threads pass their start barrier. Ctrl+C (KeyboardInterrupt) stops the
    runner before it propagates."""
    with tempfile.TemporaryDirectory(prefix="parbench-native-") as tmp:
        files = {name: str(Path(tmp) / f"{name}.bin") for name in ("private", "public", "message", "signature")}
        files["json"] = str(Path(tmp) / "workers.json")
        for name, data in (("private", keys.material.private_key), ("public", keys.material.public_key),
                           ("message", keys.message), ("signature", keys.signature)):
            Path(files[name]).write_bytes(data)
        cmd = runner_command(shim_dir, algo, operation, len(cpu_plan), schedule, max_latency_samples,
                             measurement, files, cpu_plan)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            first = proc.stdout.readline()
            if first.startswith("started "):
                on_start()
            out, err = proc.communicate()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        if proc.returncode != 0:
            message = (err.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            workers = [{"worker_id": i, "error": f"the native runner failed: {message}"}
                       for i in range(len(cpu_plan))]
            return workers, library_version(shim_dir)
        doc = json.loads(Path(files["json"]).read_text())
    return doc["workers"], doc["library"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="build parbench's crypto shim and write its descriptor")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--liboqs", type=Path, help="a liboqs the pipeline built (native/build/liboqs/<key>)")
    parser.add_argument("--openssl", type=Path, help="an OpenSSL the pipeline built (native/build/openssl/<version>); "
                                                     "default: the system OpenSSL")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    doc = build(args.out, args.liboqs, args.jobs, args.openssl)
    print(json.dumps(doc, indent=1))
    # an unavailable shim is a result (its cells say why), not a failed build
    return 0


if __name__ == "__main__":
    sys.exit(main())
