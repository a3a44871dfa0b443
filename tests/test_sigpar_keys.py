"""The key cache: written atomically, checked on load, regenerated with a warning
when corrupt or mismatching, never trusted blindly."""

import base64
import json

import pytest

from parbench.studies.sigpar import keys, signers
from parbench.studies.sigpar.algorithms import CATALOG


@pytest.fixture
def warnings():
    return []


def load(name, cache, warnings, message_bytes=64):
    return keys.load_or_create(CATALOG[name], cache, message_bytes, warn=warnings.append)


@pytest.mark.parametrize("name", ["RSA-2048", "ECDSA-P384", "Ed25519", "Ed448"])
def test_classical_keys_round_trip_through_the_cache(tmp_path, warnings, name):
    first = load(name, tmp_path, warnings)
    again = load(name, tmp_path, warnings)
    assert again.material == first.material and again.signature == first.signature
    assert warnings == []
    ops = signers.make_ops(CATALOG[name], again.material)
    assert ops.verify(again.message, ops.sign(again.message))
    assert not ops.verify(again.message, signers.tamper(again.signature))


def test_post_quantum_keys_round_trip(tmp_path, warnings, liboqs_dir):
    from parbench.oqs_loader import load_oqs

    load_oqs(liboqs_dir)
    first = load("ML-DSA-44", tmp_path, warnings)
    assert load("ML-DSA-44", tmp_path, warnings).material == first.material
    assert warnings == []


def test_corrupt_cache_is_regenerated_with_a_warning(tmp_path, warnings):
    first = load("Ed25519", tmp_path, warnings)
    path = keys.cache_path(tmp_path, "Ed25519")
    doc = json.loads(path.read_text())
    doc["public_key"] = doc["public_key"][::-1]
    path.write_text(json.dumps(doc))
    again = load("Ed25519", tmp_path, warnings)
    assert again.material != first.material
    assert len(warnings) == 1 and "SHA-256" in warnings[0] and "regenerating" in warnings[0]
    assert keys.load_checked(path, CATALOG["Ed25519"], keys.message_for(64)).material == again.material


def test_a_cache_that_passes_its_checksum_but_holds_a_wrong_signature_is_not_trusted(tmp_path, warnings):
    cached = load("Ed25519", tmp_path, warnings)
    path = keys.cache_path(tmp_path, "Ed25519")
    doc = json.loads(path.read_text())
    wrong = signers.make_ops(CATALOG["Ed25519"], cached.material).sign(b"another message")
    doc["signature"] = base64.b64encode(wrong).decode()
    doc.pop("sha256")
    doc["sha256"] = keys._checksum({k: doc[k] for k in ("format", "algorithm", "private_key", "public_key",
                                                        "message", "signature")})
    path.write_text(json.dumps(doc))
    load("Ed25519", tmp_path, warnings)
    assert len(warnings) == 1 and "does not verify" in warnings[0]


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update(algorithm="Ed448"), "belongs to 'Ed448'"),
    (lambda d: d.update(format=99), "format 99"),
    (None, "cannot be read as JSON"),
])
def test_mismatching_cache_files_are_refused(tmp_path, warnings, change, words):
    load("Ed25519", tmp_path, warnings)
    path = keys.cache_path(tmp_path, "Ed25519")
    if change is None:
        path.write_text("{not json")
    else:
        doc = json.loads(path.read_text())
        change(doc)
        path.write_text(json.dumps(doc))
    load("Ed25519", tmp_path, warnings)
    assert len(warnings) == 1 and words in warnings[0]


def test_a_different_message_length_regenerates(tmp_path, warnings):
    load("Ed25519", tmp_path, warnings, message_bytes=64)
    again = load("Ed25519", tmp_path, warnings, message_bytes=32)
    assert len(again.message) == 32
    assert len(warnings) == 1 and "32-byte" in warnings[0]


def test_writes_are_atomic(tmp_path):
    from parbench.records import write_atomic

    target = tmp_path / "a" / "file.json"
    write_atomic(target, "one")
    write_atomic(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["file.json"]
