//! liboqs' ML-KEM, from the shared library the pipeline builds (native/build/liboqs/<key>,
//! `src/parbench/native/liboqs.py`), called through its public API (`OQS_KEM_new`,
//! `OQS_KEM_keypair`, `OQS_KEM_encaps`, `OQS_KEM_decaps`). liboqs draws the randomness
//! of keypair and encaps itself (inside the timed call), unlike libcrux, which takes it
//! as an argument.

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::Path;

use crate::dl::Library;
use crate::kem::{Kem, Level, SHARED_SECRET};

/// The leading fields of liboqs' `OQS_KEM` (kem.h), identical from liboqs 0.8 to 0.13.
#[repr(C)]
struct OqsKem {
    method_name: *const c_char,
    alg_version: *const c_char,
    claimed_nist_level: u8,
    ind_cca: bool,
    length_public_key: usize,
    length_secret_key: usize,
    length_ciphertext: usize,
    length_shared_secret: usize,
}

type KemNew = unsafe extern "C" fn(*const c_char) -> *mut OqsKem;
type KemFree = unsafe extern "C" fn(*mut OqsKem);
type KemKeypair = unsafe extern "C" fn(*const OqsKem, *mut u8, *mut u8) -> c_int;
type KemEncaps = unsafe extern "C" fn(*const OqsKem, *mut u8, *mut u8, *const u8) -> c_int;
type KemDecaps = unsafe extern "C" fn(*const OqsKem, *mut u8, *const u8, *const u8) -> c_int;
type Version = unsafe extern "C" fn() -> *const c_char;
type Init = unsafe extern "C" fn();
type AlgIsEnabled = unsafe extern "C" fn(*const c_char) -> c_int;

/// The loaded library.
pub struct Liboqs {
    _lib: Library,
    pub path: String,
    pub version: String,
    kem_new: KemNew,
    kem_free: KemFree,
    keypair: KemKeypair,
    encaps: KemEncaps,
    decaps: KemDecaps,
    is_enabled: AlgIsEnabled,
}

/// `dir` may be the pipeline's liboqs folder (holding lib/liboqs.so) or the library file.
pub fn library_path(dir: &Path) -> String {
    if dir.is_file() {
        return dir.display().to_string();
    }
    let name = if cfg!(target_os = "macos") {
        "liboqs.dylib"
    } else {
        "liboqs.so"
    };
    dir.join("lib").join(name).display().to_string()
}

impl Liboqs {
    pub fn load(dir: &Path) -> Result<Liboqs, String> {
        let path = library_path(dir);
        let lib = Library::open(&path).map_err(|e| format!("cannot load liboqs: {e}"))?;
        // SAFETY: the types are liboqs' declarations of these functions (kem.h, oqs.h).
        unsafe {
            if let Ok(init) = lib.function::<Init>("OQS_init") {
                init();
            }
            let version: Version = lib.function("OQS_version")?;
            let version = CStr::from_ptr(version()).to_string_lossy().into_owned();
            Ok(Liboqs {
                kem_new: lib.function("OQS_KEM_new")?,
                kem_free: lib.function("OQS_KEM_free")?,
                keypair: lib.function("OQS_KEM_keypair")?,
                encaps: lib.function("OQS_KEM_encaps")?,
                decaps: lib.function("OQS_KEM_decaps")?,
                is_enabled: lib.function("OQS_KEM_alg_is_enabled")?,
                version,
                path,
                _lib: lib,
            })
        }
    }

    /// A KEM object for `level`; an error when this liboqs was built without it.
    pub fn kem(&self, level: Level) -> Result<OqsMlKem<'_>, String> {
        let name = CString::new(level.name()).expect("no NUL");
        // SAFETY: name is NUL-terminated; OQS_KEM_new returns NULL or a valid object.
        unsafe {
            if (self.is_enabled)(name.as_ptr()) == 0 {
                return Err(format!(
                    "liboqs {} at {} was built without {level}",
                    self.version, self.path
                ));
            }
            let kem = (self.kem_new)(name.as_ptr());
            if kem.is_null() {
                return Err(format!("OQS_KEM_new({level}) returned NULL"));
            }
            let k = &*kem;
            if k.length_shared_secret != SHARED_SECRET {
                (self.kem_free)(kem);
                return Err(format!(
                    "liboqs {level} has a {}-byte shared secret",
                    k.length_shared_secret
                ));
            }
            Ok(OqsMlKem {
                lib: self,
                kem,
                pk: k.length_public_key,
                sk: k.length_secret_key,
                ct: k.length_ciphertext,
            })
        }
    }
}

/// One `OQS_KEM` object. liboqs' KEM functions keep no state in it, so threads may each
/// own one.
pub struct OqsMlKem<'a> {
    lib: &'a Liboqs,
    kem: *mut OqsKem,
    pk: usize,
    sk: usize,
    ct: usize,
}

// SAFETY: the OQS_KEM object is read-only after OQS_KEM_new and owned by one thread.
unsafe impl Send for OqsMlKem<'_> {}

impl Drop for OqsMlKem<'_> {
    fn drop(&mut self) {
        // SAFETY: created by OQS_KEM_new, freed once.
        unsafe { (self.lib.kem_free)(self.kem) }
    }
}

pub struct OqsKeyPair {
    pub public_key: Vec<u8>,
    pub secret_key: Vec<u8>,
}

fn status(call: &str, rc: c_int) -> Result<(), String> {
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("{call} returned OQS_ERROR ({rc})"))
    }
}

impl Kem for OqsMlKem<'_> {
    type KeyPair = OqsKeyPair;
    type Ciphertext = Vec<u8>;

    fn new_keypair(&self) -> OqsKeyPair {
        OqsKeyPair {
            public_key: vec![0; self.pk],
            secret_key: vec![0; self.sk],
        }
    }

    fn new_ciphertext(&self) -> Vec<u8> {
        vec![0; self.ct]
    }

    #[inline(always)]
    fn keypair(&mut self, _seed: &[u8; 64], out: &mut OqsKeyPair) -> Result<(), String> {
        // SAFETY: buffers have the lengths liboqs declared for this KEM.
        let rc = unsafe { (self.lib.keypair)(self.kem, out.public_key.as_mut_ptr(), out.secret_key.as_mut_ptr()) };
        status("OQS_KEM_keypair", rc)
    }

    #[inline(always)]
    fn encaps(
        &mut self,
        kp: &OqsKeyPair,
        _randomness: &[u8; 32],
        ct: &mut Vec<u8>,
        ss: &mut [u8; SHARED_SECRET],
    ) -> Result<(), String> {
        // SAFETY: as above; the shared secret is SHARED_SECRET bytes (checked in `kem`).
        let rc = unsafe { (self.lib.encaps)(self.kem, ct.as_mut_ptr(), ss.as_mut_ptr(), kp.public_key.as_ptr()) };
        status("OQS_KEM_encaps", rc)
    }

    #[inline(always)]
    fn decaps(&mut self, kp: &OqsKeyPair, ct: &Vec<u8>, ss: &mut [u8; SHARED_SECRET]) -> Result<(), String> {
        // SAFETY: as above.
        let rc = unsafe { (self.lib.decaps)(self.kem, ss.as_mut_ptr(), ct.as_ptr(), kp.secret_key.as_ptr()) };
        status("OQS_KEM_decaps", rc)
    }

    fn tampered(&self, ct: &Vec<u8>) -> Vec<u8> {
        let mut t = ct.clone();
        t[0] ^= 1;
        t
    }
}
