"""Key generation, key (de)serialisation and the sign/verify calls of each algorithm.

Keys travel as bytes (DER for pyca/cryptography, raw for liboqs) so that the key cache
can store them and every worker (thread or process) can build key objects of its own
from them. `make_ops` returns the two calls a worker loop times: `sign(message) ->
signature` and `verify(message, signature) -> bool`. Both are the library call itself
with its fixed arguments bound, so that the harness times the library, not wrappers.

RSA signs with PSS (MGF1-SHA256, salt = digest length) over SHA-256; ECDSA hashes with
SHA-256/384/512 for P-256/384/521; EdDSA and the post-quantum schemes sign the message
itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from parbench.studies.sigpar.algorithms import Algorithm


@dataclass(frozen=True)
class KeyMaterial:
    private_key: bytes
    public_key: bytes


@dataclass(frozen=True)
class Ops:
    sign: Callable[[bytes], bytes]
    verify: Callable[[bytes, bytes], bool]


def library_version(algo: Algorithm) -> str:
    if algo.library == "cryptography":
        import cryptography

        return cryptography.__version__
    from parbench.oqs_loader import load_oqs

    oqs = load_oqs()
    return f"liboqs {oqs.oqs_version()}, liboqs-python {oqs.oqs_python_version()}"


# --- pyca/cryptography ----------------------------------------------------------------------

def _hash(name: str):
    from cryptography.hazmat.primitives import hashes

    return {"SHA256": hashes.SHA256, "SHA384": hashes.SHA384, "SHA512": hashes.SHA512}[name]()


def _curve(name: str):
    from cryptography.hazmat.primitives.asymmetric import ec

    return {"P256": ec.SECP256R1, "P384": ec.SECP384R1, "P521": ec.SECP521R1}[name]()


def _generate_classical(algo: Algorithm):
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa

    if algo.family == "RSA":
        return rsa.generate_private_key(public_exponent=65537, key_size=algo.params["key_bits"])
    if algo.family == "ECDSA":
        return ec.generate_private_key(_curve(algo.params["curve"]))
    if algo.name == "Ed25519":
        return ed25519.Ed25519PrivateKey.generate()
    if algo.name == "Ed448":
        return ed448.Ed448PrivateKey.generate()
    raise ValueError(f"no classical generator for {algo.name}")


def _classical_ops(algo: Algorithm, material: KeyMaterial) -> Ops:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, padding

    private = serialization.load_der_private_key(material.private_key, password=None)
    public = serialization.load_der_public_key(material.public_key)
    priv_sign, pub_verify = private.sign, public.verify

    if algo.family == "RSA":
        pad = padding.PSS(mgf=padding.MGF1(_hash(algo.params["hash"])), salt_length=padding.PSS.DIGEST_LENGTH)
        digest = _hash(algo.params["hash"])

        def sign(message: bytes) -> bytes:
            return priv_sign(message, pad, digest)

        def verify(message: bytes, signature: bytes) -> bool:
            try:
                pub_verify(signature, message, pad, digest)
            except InvalidSignature:
                return False
            return True

    elif algo.family == "ECDSA":
        scheme = ec.ECDSA(_hash(algo.params["hash"]))

        def sign(message: bytes) -> bytes:
            return priv_sign(message, scheme)

        def verify(message: bytes, signature: bytes) -> bool:
            try:
                pub_verify(signature, message, scheme)
            except InvalidSignature:
                return False
            return True

    else:  # EdDSA: the bound method is the call
        sign = priv_sign

        def verify(message: bytes, signature: bytes) -> bool:
            try:
                pub_verify(signature, message)
            except InvalidSignature:
                return False
            return True

    return Ops(sign=sign, verify=verify)


# --- liboqs --------------------------------------------------------------------------------

def _pqc_ops(algo: Algorithm, material: KeyMaterial) -> Ops:
    from parbench.oqs_loader import load_oqs

    oqs = load_oqs()
    signer = oqs.Signature(algo.oqs_name, material.private_key)
    verifier = oqs.Signature(algo.oqs_name)
    public_key = material.public_key
    oqs_verify = verifier.verify

    def verify(message: bytes, signature: bytes) -> bool:
        return bool(oqs_verify(message, signature, public_key))

    return Ops(sign=signer.sign, verify=verify)


# --- public ---------------------------------------------------------------------------------

def generate(algo: Algorithm) -> KeyMaterial:
    """A fresh key pair for `algo`, serialised."""
    if algo.library == "cryptography":
        from cryptography.hazmat.primitives import serialization

        key = _generate_classical(algo)
        return KeyMaterial(
            private_key=key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()),
            public_key=key.public_key().public_bytes(serialization.Encoding.DER,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    from parbench.oqs_loader import load_oqs

    oqs = load_oqs()
    with oqs.Signature(algo.oqs_name) as sig:
        public = sig.generate_keypair()
        return KeyMaterial(private_key=bytes(sig.export_secret_key()), public_key=bytes(public))


def make_ops(algo: Algorithm, material: KeyMaterial) -> Ops:
    """Key objects of the caller's own, built from `material`, and the two timed calls."""
    if algo.library == "cryptography":
        return _classical_ops(algo, material)
    return _pqc_ops(algo, material)


def tamper(signature: bytes) -> bytes:
    """`signature` with one bit flipped in its middle byte: must never verify."""
    flipped = bytearray(signature)
    flipped[len(flipped) // 2] ^= 0x01
    return bytes(flipped)
