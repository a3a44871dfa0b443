//! Loading a shared library at run time (dlopen): liboqs from the pipeline's build and
//! the system's OpenSSL libcrypto. Libraries stay loaded for the life of the process.

use std::ffi::{c_void, CStr, CString};

pub struct Library {
    handle: *mut c_void,
    pub path: String,
}

// SAFETY: a dlopen handle may be used from any thread (dlsym is thread-safe).
unsafe impl Send for Library {}
unsafe impl Sync for Library {}

fn last_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated message owned by libc.
    let msg = unsafe { libc::dlerror() };
    if msg.is_null() {
        "unknown dlopen error".to_string()
    } else {
        unsafe { CStr::from_ptr(msg) }.to_string_lossy().into_owned()
    }
}

impl Library {
    pub fn open(path: &str) -> Result<Library, String> {
        let c_path = CString::new(path).map_err(|_| format!("bad library path {path:?}"))?;
        // SAFETY: c_path is a valid NUL-terminated string.
        let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(last_error());
        }
        Ok(Library {
            handle,
            path: path.to_string(),
        })
    }

    /// The first of `candidates` that loads, or every candidate's error.
    pub fn open_first(candidates: &[String]) -> Result<Library, String> {
        let mut errors = Vec::new();
        for candidate in candidates {
            match Library::open(candidate) {
                Ok(lib) => return Ok(lib),
                Err(e) => errors.push(e),
            }
        }
        Err(errors.join("; "))
    }

    /// The symbol `name` as a function pointer of type `T`.
    ///
    /// # Safety
    /// `T` must be the `unsafe extern "C" fn` type the library defines for `name`.
    pub unsafe fn function<T: Copy>(&self, name: &str) -> Result<T, String> {
        assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<*mut c_void>());
        let c_name = CString::new(name).expect("symbol names have no NUL");
        let sym = libc::dlsym(self.handle, c_name.as_ptr());
        if sym.is_null() {
            return Err(format!("{} has no symbol {name}", self.path));
        }
        Ok(std::mem::transmute_copy::<*mut c_void, T>(&sym))
    }
}
