"""The catalog of signature algorithms sigpar can measure.

Each entry says which library implements it, its security strength and how to name it
to that library. The config validates algorithm names against this catalog, the liboqs
build derives its algorithm list from it, and the data carries its security columns.

Security strength: `security_bits` is the classical-equivalent strength (NIST SP 800-57
for RSA and elliptic curves; the NIST category's target for post-quantum schemes);
`nist_level` is the NIST PQC security category (1..5) for post-quantum schemes and the
category whose strength the classical scheme matches (None below category 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Algorithm:
    name: str
    family: str
    kind: str  # "classical" | "pqc"
    library: str  # "cryptography" | "liboqs"
    security_bits: int
    nist_level: int | None
    oqs_name: str | None = None  # name liboqs knows it by
    oqs_cmake_id: str | None = None  # entry for liboqs' OQS_MINIMAL_BUILD
    params: dict = field(default_factory=dict, hash=False, compare=False)


def _rsa(bits: int, strength: int, level: int | None) -> Algorithm:
    return Algorithm(f"RSA-{bits}", "RSA", "classical", "cryptography", strength, level,
                     params={"key_bits": bits, "hash": "SHA256", "padding": "PSS"})


def _ecdsa(curve: str, hash_name: str, strength: int, level: int) -> Algorithm:
    return Algorithm(f"ECDSA-{curve}", "ECDSA", "classical", "cryptography", strength, level,
                     params={"curve": curve, "hash": hash_name})


def _eddsa(name: str, strength: int, level: int) -> Algorithm:
    return Algorithm(name, "EdDSA", "classical", "cryptography", strength, level)


def _oqs(name: str, family: str, level: int, cmake_id: str) -> Algorithm:
    strength = {1: 128, 2: 128, 3: 192, 4: 192, 5: 256}[level]
    return Algorithm(name, family, "pqc", "liboqs", strength, level,
                     oqs_name=name, oqs_cmake_id=cmake_id)


def _sphincs(hash_family: str, variant: str) -> Algorithm:
    level = {"128": 1, "192": 3, "256": 5}[variant[:3]]
    name = f"SPHINCS+-{hash_family}-{variant}-simple"
    cmake_id = f"SIG_sphincs_{hash_family.lower()}_{variant}_simple"
    return _oqs(name, "SPHINCS+", level, cmake_id)


_ALGORITHMS = [
    _rsa(2048, 112, None),
    _rsa(3072, 128, 1),
    _rsa(4096, 152, 1),
    # RSA-15360 matches 256-bit strength. It is in the catalog but in no named set:
    # generating its key takes minutes and a signature about a second, so a sweep of it
    # takes longer than the rest of the study together. Name it explicitly to run it.
    _rsa(15360, 256, 5),
    _ecdsa("P256", "SHA256", 128, 1),
    _ecdsa("P384", "SHA384", 192, 3),
    _ecdsa("P521", "SHA512", 256, 5),
    _eddsa("Ed25519", 128, 1),
    _eddsa("Ed448", 224, 3),
    _oqs("ML-DSA-44", "ML-DSA", 2, "SIG_ml_dsa_44"),
    _oqs("ML-DSA-65", "ML-DSA", 3, "SIG_ml_dsa_65"),
    _oqs("ML-DSA-87", "ML-DSA", 5, "SIG_ml_dsa_87"),
    _oqs("Falcon-512", "Falcon", 1, "SIG_falcon_512"),
    _oqs("Falcon-1024", "Falcon", 5, "SIG_falcon_1024"),
    *(_sphincs(h, v) for h in ("SHA2", "SHAKE") for v in ("128f", "128s", "192f", "256f")),
]

CATALOG: dict[str, Algorithm] = {a.name: a for a in _ALGORITHMS}


def shim_scheme(algo: Algorithm) -> tuple[str, str]:
    """How the crypto shim (native/cryptoshim) names `algo`: (scheme, param), the same
    operation as the Python libraries (RSA-PSS with MGF1 and a digest-length salt,
    ECDSA over the curve's digest, EdDSA over the message, liboqs by its method name)."""
    if algo.family == "RSA":
        return "rsa-pss", algo.params["hash"]
    if algo.family == "ECDSA":
        return "ecdsa", algo.params["hash"]
    if algo.family == "EdDSA":
        return "eddsa", ""
    return "liboqs", algo.oqs_name


def get(name: str) -> Algorithm:
    """The catalog entry for `name`; a KeyError names the allowed algorithms."""
    try:
        return CATALOG[name]
    except KeyError:
        raise KeyError(f"unknown signature algorithm {name!r}; allowed: {', '.join(CATALOG)}") from None


def liboqs_cmake_ids(names) -> list[str]:
    """The sorted OQS_MINIMAL_BUILD entries the given algorithm names need."""
    return sorted({CATALOG[n].oqs_cmake_id for n in names if CATALOG[n].library == "liboqs"})
