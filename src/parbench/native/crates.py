"""Native sources vendored in Rust crates (OpenSSL in openssl-src, liboqs in oqs-sys):
fetched by `cargo fetch` from a lock file, so that a machine that reaches only package
registries can still build them, and every build uses the same verified source."""

from __future__ import annotations

import glob
import os
import shutil
import tarfile
from pathlib import Path
from typing import Callable


def cargo_home() -> Path:
    return Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))


def vendored_source(crate: str, marker: str, manifest: Path, run: Callable[[list[str]], None],
                    error: type[Exception], no_cargo: str) -> Path:
    """The folder holding `marker` (a path inside the crate, `openssl/Configure`) in the
    unpacked crate `crate` (`openssl-src-300.5.4+3.5.4`), fetched with `cargo fetch
    --manifest-path manifest --locked` when it is not in cargo's registry yet. `run` runs
    a command; `error` is raised with `no_cargo` when cargo is missing, or with what went
    wrong."""
    home = cargo_home()
    pattern = str(home / "registry" / "src" / "*" / crate / marker)
    hits = glob.glob(pattern)
    if not hits:
        cargo = shutil.which("cargo")
        if not cargo:
            raise error(no_cargo)
        run([cargo, "fetch", "--manifest-path", str(manifest), "--locked"])
        hits = glob.glob(pattern)
    if not hits:  # `cargo fetch` keeps the verified .crate archive; unpack it ourselves
        crates = glob.glob(str(home / "registry" / "cache" / "*" / f"{crate}.crate"))
        if not crates:
            raise error(f"cargo fetch did not produce {crate}.crate under {home}")
        dest = Path(crates[0]).parent.parent.parent / "src" / Path(crates[0]).parent.name
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(crates[0]) as tar:
            tar.extractall(dest, filter="data")
        hits = glob.glob(pattern)
    if not hits:
        raise error(f"no source tree found at {pattern}")
    return Path(hits[0]).parent
