"""Build the OpenSSL that pyca/cryptography ships, for the sigpar study's crypto shim.

pyca/cryptography's wheels link their own OpenSSL statically (4.0.x for cryptography
50); the system's is another version (Debian 12: 3.0.x). A comparison of the `pyca`
backend with the crypto shim (`openssl-cffi`) and the native runner is like for like
only when all three run the same OpenSSL. So the pipeline builds that version from the
source tree vendored in the crates.io package openssl-src (fetched with `cargo fetch`,
pinned by `native/openssl/fetch/Cargo.lock`), as a static, position-independent
libcrypto, into `native/build/openssl/<version>/` (`include/`, `lib/libcrypto.a`), with a
descriptor `openssl.json`. Only libcrypto is built (`make libcrypto.a`), with OpenSSL's
default configuration for the platform (assembly included), as pyca's wheels are.

Where the build cannot run (no cargo, no perl, no compiler) the descriptor says
`available: false` and why; the shim then falls back to the system OpenSSL, and the
paper names the versions in every comparison.

    python -m parbench.native.openssl --out native/build/openssl/<version> [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

OPENSSL_SRC_CRATE = "openssl-src-400.0.2+4.0.3"
OPENSSL_VERSION = "4.0.3"
DESCRIPTOR = "openssl.json"


class BuildError(RuntimeError):
    """A step of the OpenSSL build failed; the message says which and what to do."""


def log(msg: str) -> None:
    print(f"[openssl] {msg}", file=sys.stderr, flush=True)


def _fetch_dir() -> Path:
    from parbench import project

    return project.root() / "native" / "openssl" / "fetch"


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    log("$ " + " ".join(str(c) for c in cmd))
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.strip().splitlines()[-15:])
        raise BuildError(f"command failed with exit code {proc.returncode}: {' '.join(map(str, cmd))}\n{tail}")


def locate_source() -> Path:
    """The OpenSSL source tree inside the openssl-src crate, fetching the crate if needed."""
    from parbench.native.crates import vendored_source

    return vendored_source(OPENSSL_SRC_CRATE, "openssl/Configure", _fetch_dir() / "Cargo.toml", _run, BuildError,
                           "building OpenSSL needs the openssl-src crate, fetched with `cargo` "
                           "(Debian: apt-get install cargo, or https://rustup.rs)")


def build(out: Path, jobs: int) -> dict:
    """Configure and build a static, PIC libcrypto into `out` (include/, lib/)."""
    for tool, package in (("perl", "perl"), ("make", "make")):
        if not shutil.which(tool):
            raise BuildError(f"building OpenSSL needs `{tool}` on PATH (Debian: apt-get install {package})")
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise BuildError("building OpenSSL needs a C compiler (Debian: apt-get install build-essential)")
    source = locate_source()
    work = out / "build"
    if work.exists():
        shutil.rmtree(work)
    # OpenSSL builds in its source tree: build a copy, so the registry stays pristine.
    shutil.copytree(source, work, symlinks=True)
    t0 = time.monotonic()
    _run(["perl", "Configure", "no-shared", "no-tests", "no-docs", "no-apps", "no-module", "-fPIC",
          f"--prefix={out.resolve()}", "--libdir=lib"], cwd=work)
    # the generated headers first (configuration.h, ...), then libcrypto alone: no libssl
    _run(["make", f"-j{jobs}", "build_generated"], cwd=work)
    _run(["make", f"-j{jobs}", "libcrypto.a"], cwd=work)
    (out / "lib").mkdir(parents=True, exist_ok=True)
    shutil.copy2(work / "libcrypto.a", out / "lib" / "libcrypto.a")
    if (out / "include").exists():
        shutil.rmtree(out / "include")
    shutil.copytree(work / "include" / "openssl", out / "include" / "openssl")
    shutil.rmtree(work)
    seconds = time.monotonic() - t0
    log(f"built OpenSSL {OPENSSL_VERSION} (libcrypto.a) in {seconds:.0f} s")
    return {"available": True, "version": OPENSSL_VERSION, "crate": OPENSSL_SRC_CRATE,
            "prefix": str(out.resolve()), "include": str((out / "include").resolve()),
            "libcrypto": str((out / "lib" / "libcrypto.a").resolve()), "build_sec": round(seconds, 1)}


def provide(out: Path, jobs: int) -> dict:
    """Build OpenSSL into `out` and write `out/openssl.json`; a build that cannot run is
    recorded as unavailable, with the reason (never raises for it)."""
    out.mkdir(parents=True, exist_ok=True)
    try:
        info = build(out, jobs)
    except BuildError as exc:
        log(f"not built: {exc}")
        info = {"available": False, "version": OPENSSL_VERSION, "crate": OPENSSL_SRC_CRATE,
                "reason": str(exc).splitlines()[0]}
    info["built_unix"] = time.time()
    tmp = out / (DESCRIPTOR + ".tmp")
    tmp.write_text(json.dumps(info, indent=1) + "\n")
    os.replace(tmp, out / DESCRIPTOR)
    return info


def descriptor(folder: str | os.PathLike) -> dict:
    return json.loads((Path(folder) / DESCRIPTOR).read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    provide(args.out, max(1, args.jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
