"""The key cache: one key pair, message and signature per algorithm, kept between runs.

`data/cache/sigpar/<ALG>.json` holds the serialised keys, the message and a signature of
it, and a SHA-256 over all of them. It is written atomically (temporary file + rename),
and checked on every load: the checksum must match, the algorithm and message must be
the ones asked for, and (in the cell's parent) the cached signature must verify, a
tampered copy must not, and a fresh signature must verify. A file that fails any check
is regenerated with a warning, never trusted.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from parbench.records import write_atomic
from parbench.studies.sigpar import signers
from parbench.studies.sigpar.algorithms import Algorithm

CACHE_FORMAT = 1


class CacheInvalid(ValueError):
    """A cache file failed a check; the message says which."""


@dataclass(frozen=True)
class CachedKeys:
    algorithm: str
    material: signers.KeyMaterial
    message: bytes
    signature: bytes
    path: Path


def message_for(n_bytes: int) -> bytes:
    """The deterministic message every run signs: SHA-256 in counter mode."""
    out = bytearray()
    counter = 0
    while len(out) < n_bytes:
        out += hashlib.sha256(b"parbench sigpar message %d" % counter).digest()
        counter += 1
    return bytes(out[:n_bytes])


def cache_path(cache_dir: str | os.PathLike, algorithm: str) -> Path:
    return Path(cache_dir) / "sigpar" / f"{algorithm}.json"


def _payload(algorithm: str, material: signers.KeyMaterial, message: bytes, signature: bytes) -> dict:
    b64 = lambda b: base64.b64encode(b).decode("ascii")  # noqa: E731
    return {"format": CACHE_FORMAT, "algorithm": algorithm,
            "private_key": b64(material.private_key), "public_key": b64(material.public_key),
            "message": b64(message), "signature": b64(signature)}


def _checksum(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def functional_check(algo: Algorithm, keys: CachedKeys) -> None:
    """Raise CacheInvalid unless the keys sign and verify as they must."""
    ops = signers.make_ops(algo, keys.material)
    if not ops.verify(keys.message, keys.signature):
        raise CacheInvalid("holds a signature that does not verify")
    if ops.verify(keys.message, signers.tamper(keys.signature)):
        raise CacheInvalid("holds keys that accept a tampered signature")
    if not ops.verify(keys.message, ops.sign(keys.message)):
        raise CacheInvalid("holds keys whose fresh signature does not verify")


def load_checked(path: Path, algo: Algorithm, message: bytes, functional: bool = True) -> CachedKeys:
    """The cache file at `path`, checked; CacheInvalid says what is wrong with it."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CacheInvalid(f"cannot be read as JSON ({exc.__class__.__name__})") from None
    if not isinstance(doc, dict) or "sha256" not in doc:
        raise CacheInvalid("has no checksum")
    stored = doc.pop("sha256")
    if doc.get("format") != CACHE_FORMAT:
        raise CacheInvalid(f"has format {doc.get('format')!r}, expected {CACHE_FORMAT}")
    if doc.get("algorithm") != algo.name:
        raise CacheInvalid(f"belongs to {doc.get('algorithm')!r}, not {algo.name!r}")
    payload = {k: doc.get(k) for k in ("format", "algorithm", "private_key", "public_key", "message", "signature")}
    if _checksum(payload) != stored:
        raise CacheInvalid("fails its SHA-256 check (corrupt or edited)")
    try:
        raw = {k: base64.b64decode(payload[k], validate=True)
               for k in ("private_key", "public_key", "message", "signature")}
    except (TypeError, ValueError):
        raise CacheInvalid("holds a field that is not base64") from None
    if raw["message"] != message:
        raise CacheInvalid(f"was made for a {len(raw['message'])}-byte message, not this run's {len(message)}-byte one")
    keys = CachedKeys(algo.name, signers.KeyMaterial(raw["private_key"], raw["public_key"]),
                      raw["message"], raw["signature"], path)
    if functional:
        try:
            functional_check(algo, keys)
        except CacheInvalid:
            raise
        except Exception as exc:  # a key the library refuses to load is just as invalid
            raise CacheInvalid(f"holds keys the library rejects ({exc.__class__.__name__}: {exc})") from None
    return keys


def create(algo: Algorithm, message: bytes, path: Path) -> CachedKeys:
    material = signers.generate(algo)
    ops = signers.make_ops(algo, material)
    signature = ops.sign(message)
    keys = CachedKeys(algo.name, material, message, signature, path)
    functional_check(algo, keys)
    payload = _payload(algo.name, material, message, signature)
    doc = dict(payload, sha256=_checksum(payload), created_unix=time.time())
    write_atomic(path, json.dumps(doc, indent=1) + "\n")
    return keys


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def load_or_create(algo: Algorithm, cache_dir: str | os.PathLike, message_bytes: int,
                   warn: Callable[[str], None] = _stderr) -> CachedKeys:
    """The cached keys of `algo`, regenerated (with a warning) when missing or invalid."""
    path = cache_path(cache_dir, algo.name)
    message = message_for(message_bytes)
    if path.exists():
        try:
            return load_checked(path, algo, message)
        except CacheInvalid as exc:
            warn(f"warning: key cache {path} {exc}; regenerating it")
    return create(algo, message, path)
