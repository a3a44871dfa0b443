/*
 * oqs_compat_shim.c: the two functions liboqs-python 0.16 binds that liboqs 0.13 lacks.
 *
 * parbench links this file together with the static liboqs 0.13 (vendored in the
 * crates.io package oqs-sys) into one liboqs.so. The OQS_SIG and OQS_KEM struct layouts
 * of the two versions match, so these two symbols are all that is missing.
 */
#include <stdbool.h>
#include <stddef.h>

#include <oqs/oqs.h>

/* True when `alg_name` names an enabled signature scheme that accepts a context string
 * (ML-DSA does, for example). liboqs 0.13 records this per scheme in the OQS_SIG
 * struct; later versions expose it through this function. */
OQS_API bool OQS_SIG_supports_ctx_str(const char *alg_name) {
	OQS_SIG *sig = OQS_SIG_new(alg_name);
	if (sig == NULL) {
		return false;
	}
	bool supported = sig->sig_with_ctx_support;
	OQS_SIG_free(sig);
	return supported;
}

/* Whether stateful (LMS/XMSS) key generation and signing were compiled in. parbench
 * builds liboqs without OQS_HAZARDOUS_EXPERIMENTAL_ENABLE_SIG_STFL_KEY_SIG_GEN, so no. */
OQS_API int OQS_SIG_STFL_keygen_and_sign_supported(void) {
	return 0;
}
