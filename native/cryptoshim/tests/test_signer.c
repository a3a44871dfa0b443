/* test_signer.c - unit tests of the crypto shim (pbc_signer.h): a round trip for every
 * scheme, a tampered signature and a wrong message rejected, bad keys refused with a
 * clear message, and signers used from several threads at once (each its own).
 * Keys are made here with OpenSSL (and liboqs when the build has it), serialised the
 * way sigpar's key cache stores them (DER PKCS#8 / SubjectPublicKeyInfo, raw liboqs).
 * Exit status 0 when every check passed; each failure prints its line.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#ifdef PBC_WITH_LIBOQS
#include <oqs/oqs.h>
#endif

#include "../pbc_signer.h"

static int failures;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            failures++;                                                                   \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fputc('\n', stderr);                                                          \
        }                                                                                 \
    } while (0)

typedef struct {
    unsigned char *priv, *pub;
    size_t priv_len, pub_len;
} keypair;

static keypair der_keys(EVP_PKEY *k) {
    keypair kp = {0};
    unsigned char *p = NULL;
    PKCS8_PRIV_KEY_INFO *p8 = EVP_PKEY2PKCS8(k);
    int n = i2d_PKCS8_PRIV_KEY_INFO(p8, &p);
    kp.priv = p, kp.priv_len = (size_t)n;
    PKCS8_PRIV_KEY_INFO_free(p8);
    p = NULL;
    n = i2d_PUBKEY(k, &p);
    kp.pub = p, kp.pub_len = (size_t)n;
    EVP_PKEY_free(k);
    return kp;
}

static void free_keys(keypair *kp) {
    OPENSSL_free(kp->priv);
    OPENSSL_free(kp->pub);
}

static const unsigned char MSG[64] = "parbench crypto shim test message, sixty-four bytes long.......";

/* sign, verify, reject a tampered signature and another message */
static void round_trip(const char *what, const char *scheme, const char *param, keypair *kp) {
    char err[256];
    pbc_signer *s = pbc_signer_new(scheme, param, kp->priv, kp->priv_len, kp->pub, kp->pub_len, err, sizeof err);
    CHECK(s != NULL, "%s: %s", what, err);
    if (!s)
        return;
    size_t cap = pbc_max_signature(s), len = cap;
    unsigned char *sig = malloc(cap);
    for (int round = 0; round < 3; round++) {  /* contexts are reused: sign more than once */
        len = cap;
        CHECK(pbc_sign(s, MSG, sizeof MSG, sig, &len) == PBC_OK, "%s: sign: %s", what, pbc_signer_error(s));
        CHECK(len > 0 && len <= cap, "%s: signature length %zu of %zu", what, len, cap);
        CHECK(pbc_verify(s, MSG, sizeof MSG, sig, len) == PBC_OK, "%s: own signature does not verify", what);
    }
    sig[len / 2] ^= 0x01;
    CHECK(pbc_verify(s, MSG, sizeof MSG, sig, len) == PBC_INVALID, "%s: tampered signature accepted", what);
    sig[len / 2] ^= 0x01;
    unsigned char other[sizeof MSG];
    memcpy(other, MSG, sizeof MSG);
    other[0] ^= 0x80;
    CHECK(pbc_verify(s, other, sizeof other, sig, len) == PBC_INVALID, "%s: signature of another message accepted",
          what);
    CHECK(pbc_verify(s, MSG, sizeof MSG, sig, len) == PBC_OK, "%s: a verify after a rejection failed", what);
    /* a signer with only the public key verifies what the full one signed */
    pbc_signer *v = pbc_signer_new(scheme, param, NULL, 0, kp->pub, kp->pub_len, err, sizeof err);
    CHECK(v != NULL, "%s: verify-only signer: %s", what, err);
    if (v) {
        CHECK(pbc_verify(v, MSG, sizeof MSG, sig, len) == PBC_OK, "%s: verify-only signer rejects", what);
        size_t l2 = cap;
        CHECK(pbc_sign(v, MSG, sizeof MSG, sig, &l2) == PBC_ERROR && strstr(pbc_signer_error(v), "no private key"),
              "%s: a signer without private key signed", what);
        pbc_signer_free(v);
    }
    size_t small = cap - 1;
    CHECK(pbc_sign(s, MSG, sizeof MSG, sig, &small) == PBC_ERROR && strstr(pbc_signer_error(s), "buffer"),
          "%s: a too small buffer was accepted", what);
    CHECK(strlen(pbc_signer_library(s)) > 0, "%s: no library name", what);
    free(sig);
    pbc_signer_free(s);
}

static void expect_refused(const char *what, const char *scheme, const char *param, const unsigned char *priv,
                           size_t priv_len, const unsigned char *pub, size_t pub_len, const char *words) {
    char err[256];
    pbc_signer *s = pbc_signer_new(scheme, param, priv, priv_len, pub, pub_len, err, sizeof err);
    CHECK(s == NULL, "%s: accepted", what);
    CHECK(strstr(err, words) != NULL, "%s: message '%s' lacks '%s'", what, err, words);
    pbc_signer_free(s);
}

/* --- several threads, each with its own signer ------------------------------------- */

typedef struct {
    keypair *kp;
    const char *scheme, *param;
    int ok;
} thread_arg;

static void *sign_many(void *p) {
    thread_arg *a = p;
    char err[256];
    pbc_signer *s = pbc_signer_new(a->scheme, a->param, a->kp->priv, a->kp->priv_len, a->kp->pub, a->kp->pub_len,
                                   err, sizeof err);
    if (!s)
        return NULL;
    unsigned char sig[8192];
    for (int i = 0; i < 200; i++) {
        size_t len = sizeof sig;
        if (pbc_sign(s, MSG, sizeof MSG, sig, &len) != PBC_OK || pbc_verify(s, MSG, sizeof MSG, sig, len) != PBC_OK) {
            pbc_signer_free(s);
            return NULL;
        }
    }
    a->ok = 1;
    pbc_signer_free(s);
    return NULL;
}

static void threads(const char *what, const char *scheme, const char *param, keypair *kp) {
    enum { N = 4 };
    pthread_t t[N];
    thread_arg a[N];
    for (int i = 0; i < N; i++) {
        a[i] = (thread_arg){kp, scheme, param, 0};
        pthread_create(&t[i], NULL, sign_many, &a[i]);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        CHECK(a[i].ok, "%s: thread %d failed", what, i);
    }
}

int main(void) {
    keypair rsa = der_keys(EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048));
    keypair p256 = der_keys(EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"));
    keypair p384 = der_keys(EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-384"));
    keypair ed25519 = der_keys(EVP_PKEY_Q_keygen(NULL, NULL, "ED25519"));
    keypair ed448 = der_keys(EVP_PKEY_Q_keygen(NULL, NULL, "ED448"));
    keypair other_p256 = der_keys(EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"));

    round_trip("RSA-2048 PSS", "rsa-pss", "SHA256", &rsa);
    round_trip("ECDSA-P256", "ecdsa", "SHA256", &p256);
    round_trip("ECDSA-P384", "ecdsa", "SHA384", &p384);
    round_trip("Ed25519", "eddsa", "", &ed25519);
    round_trip("Ed448", "eddsa", NULL, &ed448);
    threads("ECDSA-P256 threads", "ecdsa", "SHA256", &p256);
    threads("Ed25519 threads", "eddsa", "", &ed25519);

    static const unsigned char junk[] = {0x30, 0x03, 0x02, 0x01, 0x00};
    expect_refused("garbage private key", "ecdsa", "SHA256", junk, sizeof junk, NULL, 0, "cannot parse the private key");
    expect_refused("garbage public key", "ecdsa", "SHA256", NULL, 0, junk, sizeof junk, "cannot parse the public key");
    expect_refused("EC key for RSA", "rsa-pss", "SHA256", p256.priv, p256.priv_len, NULL, 0,
                   "is EC, which scheme rsa-pss cannot use");
    expect_refused("RSA key for EdDSA", "eddsa", "", NULL, 0, rsa.pub, rsa.pub_len, "is RSA, which scheme eddsa");
    expect_refused("keys of two pairs", "ecdsa", "SHA256", p256.priv, p256.priv_len, other_p256.pub,
                   other_p256.pub_len, "does not belong to the private key");
    expect_refused("unknown scheme", "dsa", "SHA256", p256.priv, p256.priv_len, NULL, 0,
                   "unknown scheme 'dsa'; allowed: rsa-pss, ecdsa, eddsa, liboqs");
    expect_refused("unknown digest", "ecdsa", "SHA999", p256.priv, p256.priv_len, NULL, 0, "unknown digest SHA999");
    expect_refused("digest for EdDSA", "eddsa", "SHA256", ed25519.priv, ed25519.priv_len, NULL, 0, "takes no digest");
    expect_refused("no key", "ecdsa", "SHA256", NULL, 0, NULL, 0, "no key given");
    unsigned char trailing[4096];
    memcpy(trailing, p256.pub, p256.pub_len);
    trailing[p256.pub_len] = 0;
    expect_refused("trailing bytes", "ecdsa", "SHA256", NULL, 0, trailing, p256.pub_len + 1, "trailing bytes");

#ifdef PBC_WITH_LIBOQS
    if (OQS_SIG_alg_is_enabled("ML-DSA-44")) {
        OQS_SIG *sig = OQS_SIG_new("ML-DSA-44");
        keypair pq = {malloc(sig->length_secret_key), malloc(sig->length_public_key), sig->length_secret_key,
                      sig->length_public_key};
        CHECK(OQS_SIG_keypair(sig, pq.pub, pq.priv) == OQS_SUCCESS, "ML-DSA-44 keypair");
        round_trip("ML-DSA-44", "liboqs", "ML-DSA-44", &pq);
        threads("ML-DSA-44 threads", "liboqs", "ML-DSA-44", &pq);
        expect_refused("short liboqs key", "liboqs", "ML-DSA-44", pq.priv, pq.priv_len - 1, NULL, 0,
                       "the secret key is");
        free(pq.priv);
        free(pq.pub);
        OQS_SIG_free(sig);
    } else {
        fprintf(stderr, "note: ML-DSA-44 is not in this liboqs build; its round trip is skipped\n");
    }
    expect_refused("liboqs method not built", "liboqs", "No-Such-Sig", junk, sizeof junk, NULL, 0, "is not enabled");
#else
    expect_refused("no liboqs", "liboqs", "ML-DSA-44", junk, sizeof junk, NULL, 0, "has no liboqs");
#endif

    free_keys(&rsa), free_keys(&p256), free_keys(&p384), free_keys(&ed25519), free_keys(&ed448);
    free_keys(&other_p256);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("test_signer: all checks passed (liboqs %s)\n", pbc_have_liboqs() ? "included" : "not built in");
    return 0;
}
