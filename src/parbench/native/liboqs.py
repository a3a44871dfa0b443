"""Provide a liboqs shared library for liboqs-python, without the internet.

liboqs-python looks for `liboqs.so` under `$OQS_INSTALL_PATH/lib`; when it finds none it
tries to clone and build liboqs at import time, which fails offline. This module makes
sure it always finds one:

1. An installed liboqs (conda-forge, a system package, a user build) is used when it has
   every algorithm the config names: `lib/liboqs.so` under the output directory then
   links to it.
2. Otherwise liboqs 0.13.0 is built from the source tree vendored in the crates.io
   package oqs-sys (fetched by `cargo fetch`, pinned by `native/liboqs/fetch/Cargo.lock`),
   with only the configured algorithms (`OQS_MINIMAL_BUILD`), as a static library that
   is linked together with `native/liboqs/oqs_compat_shim.c` into one `liboqs.so`.

Either way the output directory holds `lib/liboqs.so` and a descriptor `liboqs.json`
saying where the library came from. `parbench.oqs_loader` reads the descriptor, points
`OQS_INSTALL_PATH` at the directory and imports `oqs`.

Command line (what the Snakemake rule runs):
    python -m parbench.native.liboqs --out DIR --jobs N SIG_ml_dsa_44 SIG_falcon_512 ...
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import glob
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

OQS_SYS_CRATE = "oqs-sys-0.11.0+liboqs-0.13.0"
DESCRIPTOR = "liboqs.json"


def _native_dir() -> Path:
    from parbench import project

    return project.root() / "native" / "liboqs"


class BuildError(RuntimeError):
    """A step of providing liboqs failed; the message says which and what to do."""


def shared_library_name() -> str:
    return "liboqs.dylib" if platform.system() == "Darwin" else "liboqs.so"


def log(msg: str) -> None:
    print(f"[liboqs] {msg}", file=sys.stderr, flush=True)


# --- 1. an installed liboqs -------------------------------------------------------------

def _candidate_installed_libraries() -> list[str]:
    candidates = []
    user = os.environ.get("PARBENCH_LIBOQS")
    if user:
        candidates.append(user)
    for prefix_var in ("CONDA_PREFIX",):
        prefix = os.environ.get(prefix_var)
        if prefix:
            candidates += sorted(glob.glob(os.path.join(prefix, "lib", "liboqs.*")))
    found = ctypes.util.find_library("oqs")
    if found:
        candidates.append(found)
    return candidates


def _cmake_id_to_method_name(cmake_id: str) -> str:
    from parbench import studies

    names = {i: name for study in studies.registered() for i, name in study.liboqs_names().items()}
    if cmake_id not in names:
        raise BuildError(f"no study's catalog has the liboqs build id {cmake_id!r}; known: {', '.join(sorted(names))}")
    return names[cmake_id]


def check_installed(path: str, cmake_ids: list[str]) -> tuple[bool, str]:
    """Whether the library at `path` loads and enables every algorithm needed."""
    try:
        lib = ctypes.CDLL(path)
    except OSError as exc:
        return False, f"cannot load {path}: {exc}"
    lib.OQS_version.restype = ctypes.c_char_p
    missing = []
    for cmake_id in cmake_ids:
        kind = cmake_id.split("_", 1)[0]  # SIG or KEM
        fn = lib.OQS_SIG_alg_is_enabled if kind == "SIG" else lib.OQS_KEM_alg_is_enabled
        if not fn(_cmake_id_to_method_name(cmake_id).encode()):
            missing.append(cmake_id)
    if missing:
        return False, f"{path} (liboqs {lib.OQS_version().decode()}) lacks {', '.join(missing)}"
    if not hasattr(lib, "OQS_SIG_supports_ctx_str"):
        return False, f"{path} is older than liboqs-python needs (no OQS_SIG_supports_ctx_str)"
    return True, f"{path} (liboqs {lib.OQS_version().decode()})"


def use_installed(out: Path, cmake_ids: list[str]) -> dict | None:
    if os.environ.get("PARBENCH_LIBOQS") == "build":
        log("PARBENCH_LIBOQS=build: not looking for an installed liboqs")
        return None
    for candidate in _candidate_installed_libraries():
        ok, why = check_installed(candidate, cmake_ids)
        if ok:
            lib_dir = out / "lib"
            lib_dir.mkdir(parents=True, exist_ok=True)
            link = lib_dir / shared_library_name()
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(os.path.realpath(candidate))
            log(f"using the installed {why}")
            return {"source": "installed", "library": os.path.realpath(candidate)}
        log(f"not using installed liboqs: {why}")
    return None


# --- 2. build the vendored source --------------------------------------------------------

def _require_tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if not path:
        raise BuildError(f"building liboqs needs `{name}` on PATH (Debian: apt-get install {package})")
    return path


def _run(cmd: list[str], **kwargs) -> None:
    log("$ " + " ".join(str(c) for c in cmd))
    result = subprocess.run(cmd, **kwargs)
    if result.returncode != 0:
        raise BuildError(f"command failed with exit code {result.returncode}: {' '.join(map(str, cmd))}")


def locate_vendored_source() -> Path:
    """The liboqs source tree inside the oqs-sys crate, fetching the crate if needed."""
    from parbench.native.crates import vendored_source

    return vendored_source(OQS_SYS_CRATE, "liboqs/CMakeLists.txt", _native_dir() / "fetch" / "Cargo.toml", _run,
                           BuildError, "no installed liboqs was found and building one needs the oqs-sys crate, "
                           "fetched with `cargo` (Debian: apt-get install cargo, or https://rustup.rs); "
                           "alternatively install liboqs (conda-forge: conda install liboqs)")


def build_vendored(out: Path, cmake_ids: list[str], jobs: int) -> dict:
    cmake = _require_tool("cmake", "cmake")
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise BuildError("building liboqs needs a C compiler (Debian: apt-get install build-essential)")
    source = locate_vendored_source()
    build_dir = out / "build"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    t0 = time.monotonic()
    if build_dir.exists():
        shutil.rmtree(build_dir)
    _run([cmake, "-S", str(source), "-B", str(build_dir), *generator,
          "-DCMAKE_BUILD_TYPE=Release",
          f"-DOQS_MINIMAL_BUILD={';'.join(cmake_ids)}",
          "-DOQS_BUILD_ONLY_LIB=ON",
          "-DBUILD_SHARED_LIBS=OFF",
          "-DCMAKE_POSITION_INDEPENDENT_CODE=ON",
          # Portable binary that picks AVX2 etc. at run time, and no OpenSSL dependency.
          "-DOQS_DIST_BUILD=ON",
          "-DOQS_USE_OPENSSL=OFF",
          "-Wno-dev"])
    _run([cmake, "--build", str(build_dir), "--parallel", str(jobs)])
    static = build_dir / "lib" / "liboqs.a"
    include = build_dir / "include"
    lib_dir = out / "lib"
    lib_dir.mkdir(parents=True, exist_ok=True)
    target = lib_dir / shared_library_name()
    if platform.system() == "Darwin":
        whole = ["-Wl,-all_load", str(static)]
        shared = ["-dynamiclib", "-install_name", str(target)]
    else:
        whole = ["-Wl,--whole-archive", str(static), "-Wl,--no-whole-archive"]
        shared = ["-shared", "-Wl,-soname,liboqs.so"]
    _run([cc, *shared, "-O2", "-fPIC", f"-I{include}", "-o", str(target),
          str(_native_dir() / "oqs_compat_shim.c"), *whole, "-lpthread"])
    shutil.rmtree(build_dir / "CMakeFiles", ignore_errors=True)
    log(f"built {target} in {time.monotonic() - t0:.0f} s")
    return {"source": "vendored", "library": str(target.resolve()),
            "crate": OQS_SYS_CRATE, "source_tree": str(source)}


def provide(out: Path, cmake_ids: list[str], jobs: int) -> dict:
    """Make `out/lib/liboqs.so` provide `cmake_ids` and write `out/liboqs.json`."""
    out.mkdir(parents=True, exist_ok=True)
    info = use_installed(out, cmake_ids) or build_vendored(out, cmake_ids, jobs)
    ok, why = check_installed(str(out / "lib" / shared_library_name()), cmake_ids)
    if not ok:
        raise BuildError(f"the provided liboqs does not work: {why}")
    lib = ctypes.CDLL(str(out / "lib" / shared_library_name()))
    lib.OQS_version.restype = ctypes.c_char_p
    info.update({"version": lib.OQS_version().decode(), "algorithms": cmake_ids,
                 "install_path": str(out.resolve())})
    tmp = out / (DESCRIPTOR + ".tmp")
    tmp.write_text(json.dumps(info, indent=2) + "\n")
    os.replace(tmp, out / DESCRIPTOR)
    log(f"{info['source']} liboqs {info['version']} ready in {out}")
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("cmake_ids", nargs="+", help="OQS_MINIMAL_BUILD entries, e.g. SIG_ml_dsa_44")
    args = parser.parse_args(argv)
    try:
        provide(args.out, sorted(set(args.cmake_ids)), max(1, args.jobs))
    except BuildError as exc:
        log(f"error: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
