"""The crypto shim's C tests (native/cryptoshim): a round trip of every scheme, tampered
signatures and other messages rejected, bad keys refused with a clear message, signers
on several threads, and a short cell of the native runner - built plain, under
AddressSanitizer + UBSan and under ThreadSanitizer, each of which must report nothing.
Also: signatures of the shim and of pyca/cryptography verify with each other (the same
keys from sigpar's key cache, the same operation)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from parbench.studies.sigpar import algorithms, shim, signers

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "native" / "cryptoshim"

pytestmark = [pytest.mark.native,
              pytest.mark.skipif(shutil.which("make") is None or shutil.which("gcc") is None,
                                 reason="native toolchain missing: make and gcc")]


@pytest.mark.parametrize("target", ["test", "test-asan", "test-tsan"])
def test_c_tests(tmp_path, liboqs_dir, target):
    proc = subprocess.run(["make", "-C", str(SRC), f"BUILD_DIR={tmp_path / 'build'}", f"LIBOQS_PREFIX={liboqs_dir}",
                           target], capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "test_signer: all checks passed (liboqs included)" in out
    assert "runner_cell: sign and verify measured and checked" in out
    assert "ERROR: AddressSanitizer" not in out and "WARNING: ThreadSanitizer" not in out


@pytest.mark.parametrize("name", ["RSA-2048", "ECDSA-P384", "Ed25519", "Ed448", "ML-DSA-44"])
def test_the_shim_and_the_python_libraries_agree(shim_dir, liboqs_dir, name):
    from parbench.oqs_loader import load_oqs

    load_oqs(str(liboqs_dir))
    algo = algorithms.get(name)
    material = signers.generate(algo)
    ours, theirs = shim.make_ops(algo, material, shim_dir), signers.make_ops(algo, material)
    message = b"parbench" * 8
    assert theirs.verify(message, ours.sign(message)) and ours.verify(message, theirs.sign(message))
    assert not ours.verify(message, signers.tamper(theirs.sign(message)))


def test_a_bad_key_is_refused_with_the_reason(shim_dir):
    algo = algorithms.get("ECDSA-P256")
    good = signers.generate(algo)
    with pytest.raises(shim.ShimError, match="cannot parse the private key"):
        shim.make_ops(algo, signers.KeyMaterial(b"\x30\x03\x02\x01\x00", good.public_key), shim_dir)
    other = signers.generate(algorithms.get("Ed25519"))
    with pytest.raises(shim.ShimError, match="is Ed25519, which scheme ecdsa cannot use"):
        shim.make_ops(algo, other, shim_dir)


def test_the_descriptor_says_what_the_shim_runs_on(shim_dir):
    doc = shim.descriptor(shim_dir)
    assert doc["available"] and doc["with_liboqs"] and doc["openssl_version"].startswith("OpenSSL ")
    assert Path(doc["runner"]).exists() and Path(doc["library"]).exists()
    with pytest.raises(shim.ShimUnavailable, match="is not built"):
        shim.descriptor(shim_dir / "nowhere")
