/* pbc_signer.c - see pbc_signer.h.
 *
 * What is prepared once per signer (outside any timed loop), and what each call does:
 *
 *   rsa-pss, ecdsa  new:  parse the DER keys; fetch the digest; one EVP_PKEY_CTX for
 *                         signing and one for verifying, initialised with the padding,
 *                         salt length and digest; one EVP_MD_CTX for hashing.
 *                   call: hash the message (the reused EVP_MD_CTX), then EVP_PKEY_sign
 *                         or EVP_PKEY_verify on the prepared context - what
 *                         `openssl speed` does with its contexts.
 *   eddsa           new:  parse the keys; one EVP_MD_CTX initialised for signing and one
 *                         for verifying (templates).
 *                   call: copy the template into a work context and run the one-shot
 *                         EVP_DigestSign / EVP_DigestVerify (EdDSA contexts cannot be
 *                         reused after a one-shot operation; a copy is cheaper than a
 *                         new initialisation, which fetches the algorithm again).
 *   liboqs          new:  OQS_SIG_new(method) and copies of the raw keys.
 *                   call: OQS_SIG_sign / OQS_SIG_verify.
 *
 * OpenSSL keeps an error queue per thread; every failure is read out of it into the
 * signer's message and the queue is cleared, so a long loop of (expected) invalid
 * signatures never grows it.
 */
#include "pbc_signer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#ifdef PBC_WITH_LIBOQS
#include <oqs/oqs.h>
#endif

enum pbc_kind { PBC_RSA_PSS, PBC_ECDSA, PBC_EDDSA, PBC_LIBOQS };

struct pbc_signer {
    enum pbc_kind kind;
    size_t max_signature;
    char error[256];
    char library[96];
    /* OpenSSL */
    EVP_PKEY *private_key;
    EVP_PKEY *public_key;
    EVP_MD *md;                   /* rsa-pss, ecdsa: the message digest */
    EVP_MD_CTX *hash;             /* rsa-pss, ecdsa: reused for every message */
    EVP_PKEY_CTX *sign_ctx;       /* rsa-pss, ecdsa: initialised once, reused */
    EVP_PKEY_CTX *verify_ctx;
    EVP_MD_CTX *sign_template;    /* eddsa: initialised once, copied per call */
    EVP_MD_CTX *verify_template;
    EVP_MD_CTX *work;             /* eddsa: the copy each call runs on */
    /* liboqs */
#ifdef PBC_WITH_LIBOQS
    OQS_SIG *oqs;
#endif
    uint8_t *raw_private;
    size_t raw_private_len;
    uint8_t *raw_public;
    size_t raw_public_len;
};

static void set_error(char *buf, size_t len, const char *fmt, ...) {
    if (!buf || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* The oldest error in this thread's OpenSSL queue, as text; clears the queue. */
static const char *openssl_reason(char *buf, size_t len) {
    unsigned long code = ERR_get_error();
    if (code == 0)
        snprintf(buf, len, "no OpenSSL error recorded");
    else
        ERR_error_string_n(code, buf, len);
    ERR_clear_error();
    return buf;
}

const char *pbc_openssl_version(void) { return OpenSSL_version(OPENSSL_VERSION); }

int pbc_have_liboqs(void) {
#ifdef PBC_WITH_LIBOQS
    return 1;
#else
    return 0;
#endif
}

void pbc_signer_free(pbc_signer *s) {
    if (!s)
        return;
    EVP_PKEY_free(s->private_key);
    EVP_PKEY_free(s->public_key);
    EVP_MD_free(s->md);
    EVP_MD_CTX_free(s->hash);
    EVP_PKEY_CTX_free(s->sign_ctx);
    EVP_PKEY_CTX_free(s->verify_ctx);
    EVP_MD_CTX_free(s->sign_template);
    EVP_MD_CTX_free(s->verify_template);
    EVP_MD_CTX_free(s->work);
#ifdef PBC_WITH_LIBOQS
    OQS_SIG_free(s->oqs);
#endif
    if (s->raw_private) {
        OPENSSL_cleanse(s->raw_private, s->raw_private_len);
        free(s->raw_private);
    }
    free(s->raw_public);
    free(s);
}

/* --- OpenSSL ---------------------------------------------------------------------- */

static const char *key_type_name(const EVP_PKEY *k) {
    switch (EVP_PKEY_get_base_id(k)) {
    case EVP_PKEY_RSA: return "RSA";
    case EVP_PKEY_RSA_PSS: return "RSA-PSS";
    case EVP_PKEY_EC: return "EC";
    case EVP_PKEY_ED25519: return "Ed25519";
    case EVP_PKEY_ED448: return "Ed448";
    default: return "of another type";
    }
}

static int key_fits(enum pbc_kind kind, const EVP_PKEY *k) {
    int id = EVP_PKEY_get_base_id(k);
    switch (kind) {
    case PBC_RSA_PSS: return id == EVP_PKEY_RSA || id == EVP_PKEY_RSA_PSS;
    case PBC_ECDSA: return id == EVP_PKEY_EC;
    case PBC_EDDSA: return id == EVP_PKEY_ED25519 || id == EVP_PKEY_ED448;
    default: return 0;
    }
}

static const char *kind_name(enum pbc_kind kind) {
    static const char *names[] = {"rsa-pss", "ecdsa", "eddsa", "liboqs"};
    return names[kind];
}

/* Parse one DER key; NULL with a message when it is not a key of the scheme's type. */
static EVP_PKEY *parse_key(enum pbc_kind kind, int private_key, const uint8_t *der, size_t len,
                           char *err, size_t err_len) {
    char why[160];
    const unsigned char *p = der;
    EVP_PKEY *k = private_key ? d2i_AutoPrivateKey(NULL, &p, (long)len) : d2i_PUBKEY(NULL, &p, (long)len);
    const char *what = private_key ? "private key (DER PKCS#8)" : "public key (DER SubjectPublicKeyInfo)";
    if (!k) {
        set_error(err, err_len, "cannot parse the %s of %zu bytes: %s", what, len, openssl_reason(why, sizeof why));
        return NULL;
    }
    if (p != der + len) {
        set_error(err, err_len, "the %s has %zu trailing bytes after the key", what, (size_t)(der + len - p));
        EVP_PKEY_free(k);
        return NULL;
    }
    if (!key_fits(kind, k)) {
        set_error(err, err_len, "the %s is %s, which scheme %s cannot use", what, key_type_name(k), kind_name(kind));
        EVP_PKEY_free(k);
        return NULL;
    }
    return k;
}

/* An EVP_PKEY_CTX for sign (1) or verify (0) with the scheme's padding and digest. */
static EVP_PKEY_CTX *digest_ctx(pbc_signer *s, EVP_PKEY *k, int sign, char *err, size_t err_len) {
    char why[160];
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, k, NULL);
    int ok = ctx && (sign ? EVP_PKEY_sign_init(ctx) : EVP_PKEY_verify_init(ctx)) > 0 &&
             EVP_PKEY_CTX_set_signature_md(ctx, s->md) > 0;
    if (ok && s->kind == PBC_RSA_PSS)
        ok = EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PSS_PADDING) > 0 &&
             EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, s->md) > 0 &&
             EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx, RSA_PSS_SALTLEN_DIGEST) > 0;
    if (!ok) {
        set_error(err, err_len, "cannot prepare %s for %s: %s", kind_name(s->kind), sign ? "signing" : "verifying",
                  openssl_reason(why, sizeof why));
        EVP_PKEY_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static EVP_MD_CTX *eddsa_template(EVP_PKEY *k, int sign, char *err, size_t err_len) {
    char why[160];
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && (sign ? EVP_DigestSignInit_ex(ctx, NULL, NULL, NULL, NULL, k, NULL)
                          : EVP_DigestVerifyInit_ex(ctx, NULL, NULL, NULL, NULL, k, NULL)) > 0;
    if (!ok) {
        set_error(err, err_len, "cannot prepare EdDSA %s: %s", sign ? "signing" : "verifying",
                  openssl_reason(why, sizeof why));
        EVP_MD_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static int openssl_setup(pbc_signer *s, const char *param, const uint8_t *priv, size_t priv_len,
                         const uint8_t *pub, size_t pub_len, char *err, size_t err_len) {
    char why[160];
    snprintf(s->library, sizeof s->library, "%s", OpenSSL_version(OPENSSL_VERSION));
    if (s->kind != PBC_EDDSA) {
        s->md = EVP_MD_fetch(NULL, param, NULL);
        if (!s->md || EVP_MD_get_size(s->md) <= 0) {
            set_error(err, err_len, "unknown digest %s for %s: %s", param ? param : "(none)", kind_name(s->kind),
                      openssl_reason(why, sizeof why));
            return 0;
        }
        s->hash = EVP_MD_CTX_new();
        if (!s->hash) {
            set_error(err, err_len, "out of memory");
            return 0;
        }
    } else if (param && *param) {
        set_error(err, err_len, "eddsa takes no digest (got %s): it signs the message itself", param);
        return 0;
    }
    if (priv) {
        if (!(s->private_key = parse_key(s->kind, 1, priv, priv_len, err, err_len)))
            return 0;
        s->max_signature = (size_t)EVP_PKEY_get_size(s->private_key);
    }
    if (pub) {
        if (!(s->public_key = parse_key(s->kind, 0, pub, pub_len, err, err_len)))
            return 0;
        if (s->private_key && EVP_PKEY_eq(s->private_key, s->public_key) != 1) {
            ERR_clear_error();
            set_error(err, err_len, "the public key does not belong to the private key");
            return 0;
        }
        if (!s->max_signature)
            s->max_signature = (size_t)EVP_PKEY_get_size(s->public_key);
    }
    if (s->kind == PBC_EDDSA) {
        if (s->private_key && !(s->sign_template = eddsa_template(s->private_key, 1, err, err_len)))
            return 0;
        if (s->public_key && !(s->verify_template = eddsa_template(s->public_key, 0, err, err_len)))
            return 0;
        if (!(s->work = EVP_MD_CTX_new())) {
            set_error(err, err_len, "out of memory");
            return 0;
        }
        return 1;
    }
    if (s->private_key && !(s->sign_ctx = digest_ctx(s, s->private_key, 1, err, err_len)))
        return 0;
    if (s->public_key && !(s->verify_ctx = digest_ctx(s, s->public_key, 0, err, err_len)))
        return 0;
    return 1;
}

/* Hash msg with the signer's digest into out (EVP_MAX_MD_SIZE bytes); its length, or 0. */
static unsigned hash_message(pbc_signer *s, const uint8_t *msg, size_t msg_len, unsigned char *out) {
    unsigned len = 0;
    if (EVP_DigestInit_ex2(s->hash, s->md, NULL) <= 0 || EVP_DigestUpdate(s->hash, msg, msg_len) <= 0 ||
        EVP_DigestFinal_ex(s->hash, out, &len) <= 0)
        return 0;
    return len;
}

static int openssl_sign(pbc_signer *s, const uint8_t *msg, size_t msg_len, uint8_t *sig, size_t *sig_len) {
    char why[160];
    int ok;
    if (s->kind == PBC_EDDSA) {
        ok = EVP_MD_CTX_copy_ex(s->work, s->sign_template) > 0 &&
             EVP_DigestSign(s->work, sig, sig_len, msg, msg_len) > 0;
    } else {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned dlen = hash_message(s, msg, msg_len, digest);
        ok = dlen > 0 && EVP_PKEY_sign(s->sign_ctx, sig, sig_len, digest, dlen) > 0;
    }
    if (!ok) {
        set_error(s->error, sizeof s->error, "%s sign failed: %s", kind_name(s->kind), openssl_reason(why, sizeof why));
        return PBC_ERROR;
    }
    return PBC_OK;
}

static int openssl_verify(pbc_signer *s, const uint8_t *msg, size_t msg_len, const uint8_t *sig, size_t sig_len) {
    int rc;
    if (s->kind == PBC_EDDSA) {
        if (EVP_MD_CTX_copy_ex(s->work, s->verify_template) <= 0) {
            char why[160];
            set_error(s->error, sizeof s->error, "eddsa verify failed: %s", openssl_reason(why, sizeof why));
            return PBC_ERROR;
        }
        rc = EVP_DigestVerify(s->work, sig, sig_len, msg, msg_len);
    } else {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned dlen = hash_message(s, msg, msg_len, digest);
        if (!dlen) {
            char why[160];
            set_error(s->error, sizeof s->error, "hashing failed: %s", openssl_reason(why, sizeof why));
            return PBC_ERROR;
        }
        rc = EVP_PKEY_verify(s->verify_ctx, sig, sig_len, digest, dlen);
    }
    if (rc == 1)
        return PBC_OK;
    /* 0: the signature does not verify; < 0: it could not even be decoded (a tampered
     * DER ECDSA signature, a wrong length): both mean "not a valid signature". */
    ERR_clear_error();
    return PBC_INVALID;
}

/* --- liboqs ----------------------------------------------------------------------- */

static uint8_t *copy_bytes(const uint8_t *src, size_t len) {
    uint8_t *out = malloc(len ? len : 1);
    if (out && len)
        memcpy(out, src, len);
    return out;
}

static int liboqs_setup(pbc_signer *s, const char *method, const uint8_t *priv, size_t priv_len,
                        const uint8_t *pub, size_t pub_len, char *err, size_t err_len) {
#ifdef PBC_WITH_LIBOQS
    snprintf(s->library, sizeof s->library, "liboqs %s", OQS_version());
    if (!method || !OQS_SIG_alg_is_enabled(method)) {
        set_error(err, err_len, "liboqs method %s is not enabled in this liboqs build (%s)", method ? method : "(none)",
                  OQS_version());
        return 0;
    }
    if (!(s->oqs = OQS_SIG_new(method))) {
        set_error(err, err_len, "OQS_SIG_new(%s) failed", method);
        return 0;
    }
    if (priv && priv_len != s->oqs->length_secret_key) {
        set_error(err, err_len, "the secret key is %zu bytes; %s needs %zu", priv_len, method, s->oqs->length_secret_key);
        return 0;
    }
    if (pub && pub_len != s->oqs->length_public_key) {
        set_error(err, err_len, "the public key is %zu bytes; %s needs %zu", pub_len, method, s->oqs->length_public_key);
        return 0;
    }
    if ((priv && !(s->raw_private = copy_bytes(priv, priv_len))) || (pub && !(s->raw_public = copy_bytes(pub, pub_len)))) {
        set_error(err, err_len, "out of memory");
        return 0;
    }
    s->raw_private_len = priv ? priv_len : 0;
    s->raw_public_len = pub ? pub_len : 0;
    s->max_signature = s->oqs->length_signature;
    return 1;
#else
    (void)priv, (void)priv_len, (void)pub, (void)pub_len;
    set_error(err, err_len, "this build of the crypto shim has no liboqs, so it cannot use %s", method ? method : "liboqs");
    return 0;
#endif
}

/* --- public ----------------------------------------------------------------------- */

pbc_signer *pbc_signer_new(const char *scheme, const char *param, const uint8_t *private_key,
                           size_t private_key_len, const uint8_t *public_key, size_t public_key_len,
                           char *err, size_t err_len) {
    set_error(err, err_len, "%s", "");
    enum pbc_kind kind;
    if (!scheme) {
        set_error(err, err_len, "no scheme given; allowed: rsa-pss, ecdsa, eddsa, liboqs");
        return NULL;
    } else if (!strcmp(scheme, "rsa-pss"))
        kind = PBC_RSA_PSS;
    else if (!strcmp(scheme, "ecdsa"))
        kind = PBC_ECDSA;
    else if (!strcmp(scheme, "eddsa"))
        kind = PBC_EDDSA;
    else if (!strcmp(scheme, "liboqs"))
        kind = PBC_LIBOQS;
    else {
        set_error(err, err_len, "unknown scheme '%s'; allowed: rsa-pss, ecdsa, eddsa, liboqs", scheme);
        return NULL;
    }
    if (!private_key && !public_key) {
        set_error(err, err_len, "no key given: a signer needs a private key, a public key, or both");
        return NULL;
    }
    pbc_signer *s = calloc(1, sizeof *s);
    if (!s) {
        set_error(err, err_len, "out of memory");
        return NULL;
    }
    s->kind = kind;
    int ok = kind == PBC_LIBOQS
                 ? liboqs_setup(s, param, private_key, private_key_len, public_key, public_key_len, err, err_len)
                 : openssl_setup(s, param, private_key, private_key_len, public_key, public_key_len, err, err_len);
    if (!ok) {
        pbc_signer_free(s);
        return NULL;
    }
    return s;
}

size_t pbc_max_signature(const pbc_signer *s) { return s->max_signature; }

const char *pbc_signer_error(const pbc_signer *s) { return s->error; }

const char *pbc_signer_library(const pbc_signer *s) { return s->library; }

int pbc_sign(pbc_signer *s, const uint8_t *msg, size_t msg_len, uint8_t *sig, size_t *sig_len) {
    if (s->kind == PBC_LIBOQS ? !s->raw_private : !s->private_key) {
        set_error(s->error, sizeof s->error, "this signer has no private key");
        return PBC_ERROR;
    }
    if (*sig_len < s->max_signature) {
        set_error(s->error, sizeof s->error, "signature buffer of %zu bytes; %zu needed", *sig_len, s->max_signature);
        return PBC_ERROR;
    }
#ifdef PBC_WITH_LIBOQS
    if (s->kind == PBC_LIBOQS) {
        if (OQS_SIG_sign(s->oqs, sig, sig_len, msg, msg_len, s->raw_private) != OQS_SUCCESS) {
            set_error(s->error, sizeof s->error, "OQS_SIG_sign failed");
            return PBC_ERROR;
        }
        return PBC_OK;
    }
#endif
    return openssl_sign(s, msg, msg_len, sig, sig_len);
}

int pbc_verify(pbc_signer *s, const uint8_t *msg, size_t msg_len, const uint8_t *sig, size_t sig_len) {
    if (s->kind == PBC_LIBOQS ? !s->raw_public : !s->public_key) {
        set_error(s->error, sizeof s->error, "this signer has no public key");
        return PBC_ERROR;
    }
#ifdef PBC_WITH_LIBOQS
    if (s->kind == PBC_LIBOQS)
        return OQS_SIG_verify(s->oqs, msg, msg_len, sig, sig_len, s->raw_public) == OQS_SUCCESS ? PBC_OK : PBC_INVALID;
#endif
    return openssl_verify(s, msg, msg_len, sig, sig_len);
}
