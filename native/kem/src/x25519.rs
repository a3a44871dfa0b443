//! X25519 through OpenSSL's EVP API (the system libcrypto, loaded at run time): the
//! classical baseline. Two operations: key generation (`EVP_PKEY_keygen` on a prepared
//! context) and derivation (a context for the private key, `EVP_PKEY_derive_init`,
//! `EVP_PKEY_derive_set_peer`, `EVP_PKEY_derive`: what an application does per
//! exchange). A DH-based KEM (e.g. DHKEM(X25519) of RFC 9180) encapsulates with one key
//! generation and one derivation and decapsulates with one derivation.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;

use crate::dl::Library;

const NID_X25519: c_int = 1034;
pub const KEY_BYTES: usize = 32;

type CtxNewId = unsafe extern "C" fn(c_int, *mut c_void) -> *mut c_void;
type CtxNew = unsafe extern "C" fn(*mut c_void, *mut c_void) -> *mut c_void;
type CtxFree = unsafe extern "C" fn(*mut c_void);
type CtxInit = unsafe extern "C" fn(*mut c_void) -> c_int;
type Keygen = unsafe extern "C" fn(*mut c_void, *mut *mut c_void) -> c_int;
type PkeyFree = unsafe extern "C" fn(*mut c_void);
type SetPeer = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
type Derive = unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize) -> c_int;
type GetRawPublic = unsafe extern "C" fn(*const c_void, *mut u8, *mut usize) -> c_int;
type NewRawPublic = unsafe extern "C" fn(c_int, *mut c_void, *const u8, usize) -> *mut c_void;
type VersionFn = unsafe extern "C" fn(c_int) -> *const c_char;

/// Where libcrypto is looked for: $PARBENCH_LIBCRYPTO, then the usual names.
pub fn candidates() -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(path) = std::env::var("PARBENCH_LIBCRYPTO") {
        out.push(path);
    }
    for name in [
        "libcrypto.so.3",
        "libcrypto.so",
        "libcrypto.3.dylib",
        "/opt/homebrew/opt/openssl@3/lib/libcrypto.3.dylib",
        "/usr/local/opt/openssl@3/lib/libcrypto.3.dylib",
    ] {
        out.push(name.to_string());
    }
    out
}

pub struct OpenSsl {
    _lib: Library,
    pub path: String,
    pub version: String,
    ctx_new_id: CtxNewId,
    ctx_new: CtxNew,
    ctx_free: CtxFree,
    keygen_init: CtxInit,
    keygen: Keygen,
    pkey_free: PkeyFree,
    derive_init: CtxInit,
    set_peer: SetPeer,
    derive: Derive,
    get_raw_public: GetRawPublic,
    new_raw_public: NewRawPublic,
}

/// An EVP_PKEY, freed on drop.
pub struct Key<'a> {
    ssl: &'a OpenSsl,
    pkey: *mut c_void,
}

impl Drop for Key<'_> {
    fn drop(&mut self) {
        // SAFETY: owned EVP_PKEY, freed once.
        unsafe { (self.ssl.pkey_free)(self.pkey) }
    }
}

impl OpenSsl {
    pub fn load() -> Result<OpenSsl, String> {
        let lib = Library::open_first(&candidates()).map_err(|e| format!("cannot load OpenSSL's libcrypto: {e}"))?;
        // SAFETY: the types are OpenSSL 3's declarations (evp.h, crypto.h).
        unsafe {
            let version: VersionFn = lib.function("OpenSSL_version")?;
            let version = CStr::from_ptr(version(0)).to_string_lossy().into_owned();
            Ok(OpenSsl {
                ctx_new_id: lib.function("EVP_PKEY_CTX_new_id")?,
                ctx_new: lib.function("EVP_PKEY_CTX_new")?,
                ctx_free: lib.function("EVP_PKEY_CTX_free")?,
                keygen_init: lib.function("EVP_PKEY_keygen_init")?,
                keygen: lib.function("EVP_PKEY_keygen")?,
                pkey_free: lib.function("EVP_PKEY_free")?,
                derive_init: lib.function("EVP_PKEY_derive_init")?,
                set_peer: lib.function("EVP_PKEY_derive_set_peer")?,
                derive: lib.function("EVP_PKEY_derive")?,
                get_raw_public: lib.function("EVP_PKEY_get_raw_public_key")?,
                new_raw_public: lib.function("EVP_PKEY_new_raw_public_key")?,
                path: lib.path.clone(),
                version,
                _lib: lib,
            })
        }
    }

    /// A context ready for X25519 key generation (made once, outside the timed calls).
    pub fn keygen_context(&self) -> Result<KeygenContext<'_>, String> {
        // SAFETY: OpenSSL API; a NULL context is an error.
        unsafe {
            let ctx = (self.ctx_new_id)(NID_X25519, ptr::null_mut());
            if ctx.is_null() {
                return Err("EVP_PKEY_CTX_new_id(X25519) failed".into());
            }
            if (self.keygen_init)(ctx) != 1 {
                (self.ctx_free)(ctx);
                return Err("EVP_PKEY_keygen_init failed".into());
            }
            Ok(KeygenContext { ssl: self, ctx })
        }
    }

    /// One derivation: `ours` (a private key) with `peer`'s public key.
    #[inline(always)]
    pub fn derive(&self, ours: &Key, peer: &Key, out: &mut [u8; KEY_BYTES]) -> Result<(), String> {
        // SAFETY: OpenSSL API on owned keys; the context is freed on every path.
        unsafe {
            let ctx = (self.ctx_new)(ours.pkey, ptr::null_mut());
            if ctx.is_null() {
                return Err("EVP_PKEY_CTX_new failed".into());
            }
            let mut len = KEY_BYTES;
            let ok = (self.derive_init)(ctx) == 1
                && (self.set_peer)(ctx, peer.pkey) == 1
                && (self.derive)(ctx, out.as_mut_ptr(), &mut len) == 1
                && len == KEY_BYTES;
            (self.ctx_free)(ctx);
            if ok {
                Ok(())
            } else {
                Err("X25519 derivation failed".into())
            }
        }
    }

    /// `key`'s public key alone, optionally with one bit flipped (a tampered peer key).
    pub fn public_key(&self, key: &Key, flip_bit: bool) -> Result<Key<'_>, String> {
        let mut raw = [0u8; KEY_BYTES];
        let mut len = KEY_BYTES;
        // SAFETY: OpenSSL API with a KEY_BYTES buffer.
        unsafe {
            if (self.get_raw_public)(key.pkey, raw.as_mut_ptr(), &mut len) != 1 || len != KEY_BYTES {
                return Err("EVP_PKEY_get_raw_public_key failed".into());
            }
            // bit 0 of the first byte: X25519 ignores only the top bit of the last one
            if flip_bit {
                raw[0] ^= 1;
            }
            let pkey = (self.new_raw_public)(NID_X25519, ptr::null_mut(), raw.as_ptr(), KEY_BYTES);
            if pkey.is_null() {
                return Err("EVP_PKEY_new_raw_public_key failed".into());
            }
            Ok(Key { ssl: self, pkey })
        }
    }
}

pub struct KeygenContext<'a> {
    ssl: &'a OpenSsl,
    ctx: *mut c_void,
}

impl Drop for KeygenContext<'_> {
    fn drop(&mut self) {
        // SAFETY: owned context, freed once.
        unsafe { (self.ssl.ctx_free)(self.ctx) }
    }
}

impl<'a> KeygenContext<'a> {
    /// One X25519 key generation.
    #[inline(always)]
    pub fn generate(&mut self) -> Result<Key<'a>, String> {
        let mut pkey = ptr::null_mut();
        // SAFETY: OpenSSL API; pkey is written on success.
        let ok = unsafe { (self.ssl.keygen)(self.ctx, &mut pkey) } == 1;
        if ok && !pkey.is_null() {
            Ok(Key { ssl: self.ssl, pkey })
        } else {
            Err("EVP_PKEY_keygen failed".into())
        }
    }
}
