"""Import liboqs-python against the liboqs that `parbench.native.liboqs` provided.

Importing `oqs` without a liboqs it can find makes liboqs-python try to download and
build one (and fail offline). Every part of parbench imports it through `load_oqs()`,
which points `OQS_INSTALL_PATH` at a provided library first, or fails with the command
that provides one.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import warnings
from pathlib import Path

DESCRIPTOR = "liboqs.json"
BUILD_HINT = ("build it with `snakemake -c1 liboqs` (for the default profile; add "
              "`--configfile conf/<profile>.yaml` for another) or simply `make paper`")


class LiboqsMissing(RuntimeError):
    """No provided liboqs was found; the message says which command provides it."""


def read_descriptor(install_dir: str | os.PathLike) -> dict:
    path = Path(install_dir) / DESCRIPTOR
    if not path.exists():
        raise LiboqsMissing(f"liboqs is not built: {path} does not exist; {BUILD_HINT}")
    return json.loads(path.read_text())


def load_oqs(install_dir: str | os.PathLike | None = None):
    """Return the imported `oqs` module, bound to the liboqs in `install_dir` (default:
    `$OQS_INSTALL_PATH`, which must then hold a parbench descriptor)."""
    if "oqs" in sys.modules:
        return sys.modules["oqs"]
    install_dir = install_dir or os.environ.get("OQS_INSTALL_PATH")
    if not install_dir:
        raise LiboqsMissing(f"no liboqs location given (OQS_INSTALL_PATH is unset); {BUILD_HINT}")
    descriptor = read_descriptor(install_dir)
    os.environ["OQS_INSTALL_PATH"] = str(Path(descriptor["install_path"]))
    with warnings.catch_warnings():
        # liboqs-python warns when liboqs' version differs from its own; the versions of
        # both are recorded with every result instead.
        warnings.filterwarnings("ignore", message=".*liboqs version.*differs.*")
        # liboqs-python logs an INFO line to stdout at import; stdout is ours.
        previous = logging.root.manager.disable
        logging.disable(logging.INFO)
        try:
            import oqs  # noqa: PLC0415
        finally:
            logging.disable(previous)
    logging.getLogger("oqs.oqs").setLevel(logging.WARNING)
    return oqs
