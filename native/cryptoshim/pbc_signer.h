/* pbc_signer.h - one signature key, ready to sign and verify from one thread.
 *
 * parbench's crypto shim: the same sign and verify operations sigpar measures through
 * pyca/cryptography and liboqs-python, called directly on the system OpenSSL (EVP) and
 * on the pipeline's liboqs. A signer parses its keys and prepares its contexts once, in
 * pbc_signer_new; pbc_sign and pbc_verify then do only the operation itself, so a timed
 * loop around them times the library.
 *
 * Threads: a signer belongs to one thread at a time (it reuses its contexts and
 * buffers). Give each thread a signer of its own; any number may exist at once.
 *
 * Schemes (the `scheme` and `param` of pbc_signer_new):
 *   "rsa-pss"  param = digest ("SHA256", ...): RSASSA-PSS, MGF1 with the same digest,
 *              salt length = digest length (sigpar's RSA);
 *   "ecdsa"    param = digest ("SHA256", "SHA384", "SHA512"): ECDSA over the digest
 *              of the message, DER-encoded signature;
 *   "eddsa"    param = "" : Ed25519 or Ed448 (from the key), over the message itself;
 *   "liboqs"   param = the liboqs method name ("ML-DSA-44", "Falcon-512", ...).
 * OpenSSL keys are DER: PKCS#8 private key, SubjectPublicKeyInfo public key (what
 * pyca/cryptography writes into sigpar's key cache); liboqs keys are raw bytes.
 */
#ifndef PBC_SIGNER_H
#define PBC_SIGNER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pbc_signer pbc_signer;

/* Results of pbc_sign / pbc_verify. */
enum {
    PBC_OK = 0,          /* signed; or, from pbc_verify, the signature is valid */
    PBC_INVALID = 1,     /* pbc_verify: the signature does not verify */
    PBC_ERROR = -1       /* the library failed; pbc_signer_error says why */
};

/* A signer for `scheme`/`param` with the given keys (either may be NULL when only the
 * other operation is wanted). Returns NULL on a bad scheme, a bad key or a key of the
 * wrong type, with a message in err (always NUL-terminated when err_len > 0). */
pbc_signer *pbc_signer_new(const char *scheme, const char *param,
                           const uint8_t *private_key, size_t private_key_len,
                           const uint8_t *public_key, size_t public_key_len,
                           char *err, size_t err_len);

/* Largest signature this signer makes, in bytes. */
size_t pbc_max_signature(const pbc_signer *s);

/* Sign msg into sig (capacity *sig_len, at least pbc_max_signature); on PBC_OK *sig_len
 * is the signature's length. */
int pbc_sign(pbc_signer *s, const uint8_t *msg, size_t msg_len, uint8_t *sig, size_t *sig_len);

/* PBC_OK when sig is a valid signature of msg, PBC_INVALID when not. */
int pbc_verify(pbc_signer *s, const uint8_t *msg, size_t msg_len, const uint8_t *sig, size_t sig_len);

/* Why the last PBC_ERROR happened (empty when none did). */
const char *pbc_signer_error(const pbc_signer *s);

/* The library that does the work: "OpenSSL 3.0.19 ..." or "liboqs 0.13.0". */
const char *pbc_signer_library(const pbc_signer *s);

void pbc_signer_free(pbc_signer *s);

/* Whether this build has liboqs (1) or only OpenSSL (0). */
int pbc_have_liboqs(void);

/* The OpenSSL this build runs on ("OpenSSL 3.0.19 27 Jan 2026"). */
const char *pbc_openssl_version(void);

#ifdef __cplusplus
}
#endif

#endif /* PBC_SIGNER_H */
