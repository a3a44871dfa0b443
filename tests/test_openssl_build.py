"""The OpenSSL the crypto shim links: the version pyca/cryptography ships, built from the
crates.io source, or the system's with the reason when that build cannot run. (The build
itself runs in the smoke pipeline, rule sigpar_openssl.)"""

import json
import re
from pathlib import Path

from parbench.native import openssl

REPO = Path(__file__).resolve().parents[1]


def test_the_pinned_source_is_the_openssl_inside_the_pinned_cryptography():
    from cryptography.hazmat.backends.openssl import backend

    shipped = backend.openssl_version_text()  # e.g. "OpenSSL 4.0.3 29 Sep 2026"
    assert shipped.split()[1] == openssl.OPENSSL_VERSION, (shipped, openssl.OPENSSL_VERSION)
    lock = (REPO / "native/openssl/fetch/Cargo.lock").read_text()
    pinned = re.search(r'name = "openssl-src"\nversion = "([^"]+)"', lock).group(1)
    assert openssl.OPENSSL_SRC_CRATE == f"openssl-src-{pinned}" and pinned.endswith(f"+{openssl.OPENSSL_VERSION}")
    requirement = next(line for line in (REPO / "requirements.lock").read_text().splitlines()
                       if line.startswith("cryptography=="))
    assert requirement == "cryptography==50.0.2"  # bump both together (and this test)


def test_a_build_that_cannot_run_says_why_and_never_raises(tmp_path, monkeypatch):
    monkeypatch.setattr(openssl.shutil, "which", lambda tool: None)  # no perl, make or cargo
    doc = openssl.provide(tmp_path / "out", jobs=1)
    assert doc["available"] is False and "perl" in doc["reason"]
    assert json.loads((tmp_path / "out" / openssl.DESCRIPTOR).read_text()) == doc


def test_the_shim_falls_back_to_the_system_openssl_with_the_reason(tmp_path, liboqs_dir):
    from parbench.studies.sigpar import shim

    (tmp_path / "openssl").mkdir()
    (tmp_path / "openssl" / openssl.DESCRIPTOR).write_text(json.dumps({"available": False, "reason": "no perl"}))
    doc = shim.build(tmp_path / "shim", liboqs_dir, jobs=2, openssl=tmp_path / "openssl")
    assert doc["available"] and doc["openssl_build"] is None and doc["openssl_build_reason"] == "no perl"
    assert doc["openssl_version"].startswith("OpenSSL")
