//! The implementations the study compares, by the names the pipeline uses, and whether
//! this CPU can run them.

use crate::kem::Level;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Implementation {
    LibcruxPortable,
    LibcruxAvx2,
    LibcruxNeon,
    Liboqs,
    X25519,
}

pub const ALL: [Implementation; 5] = [
    Implementation::LibcruxPortable,
    Implementation::LibcruxAvx2,
    Implementation::LibcruxNeon,
    Implementation::Liboqs,
    Implementation::X25519,
];

impl Implementation {
    pub fn name(self) -> &'static str {
        match self {
            Implementation::LibcruxPortable => "libcrux-portable",
            Implementation::LibcruxAvx2 => "libcrux-avx2",
            Implementation::LibcruxNeon => "libcrux-neon",
            Implementation::Liboqs => "liboqs",
            Implementation::X25519 => "x25519",
        }
    }

    pub fn from_name(name: &str) -> Option<Implementation> {
        ALL.into_iter().find(|i| i.name() == name)
    }

    /// The seed's architecture argument (`portable`, `avx2`, `neon`) of a libcrux backend.
    pub fn from_seed_arch(arch: &str) -> Option<Implementation> {
        match arch {
            "portable" => Some(Implementation::LibcruxPortable),
            "avx2" => Some(Implementation::LibcruxAvx2),
            "neon" => Some(Implementation::LibcruxNeon),
            _ => None,
        }
    }

    /// Whether this machine's CPU can run the implementation: Ok, or Err(reason). For
    /// liboqs and X25519 it is the library (loaded later) that decides.
    pub fn cpu_support(self) -> Result<(), String> {
        let arch = std::env::consts::ARCH;
        match self {
            Implementation::LibcruxAvx2 => {
                #[cfg(target_arch = "x86_64")]
                {
                    if std::arch::is_x86_feature_detected!("avx2") {
                        Ok(())
                    } else {
                        Err("this x86_64 CPU does not support AVX2 (CPUID)".into())
                    }
                }
                #[cfg(not(target_arch = "x86_64"))]
                Err(format!("AVX2 is an x86_64 instruction set; this CPU is {arch}"))
            }
            Implementation::LibcruxNeon => {
                if cfg!(target_arch = "aarch64") {
                    Ok(()) // NEON (Advanced SIMD) is part of every aarch64 CPU
                } else {
                    Err(format!(
                        "NEON is an aarch64 (arm64) instruction set; this CPU is {arch}"
                    ))
                }
            }
            _ => Ok(()),
        }
    }

    /// Parameter sets it implements (X25519 has one, and no ML-KEM level).
    pub fn is_ml_kem(self) -> bool {
        self != Implementation::X25519
    }
}

/// The seed's default architecture: the SIMD backend of the build's architecture.
pub fn seed_default_arch() -> &'static str {
    if cfg!(target_arch = "x86_64") {
        "avx2"
    } else if cfg!(target_arch = "aarch64") {
        "neon"
    } else {
        "portable"
    }
}

/// Evaluate `$body` with `$make` bound to a closure that makes a KEM of implementation
/// `$imp` at `$level` (`$oqs`: the loaded liboqs, if any): Ok(the body's value), or
/// Err(reason) when the implementation cannot run here.
#[macro_export]
macro_rules! with_kem {
    ($imp:expr, $level:expr, $oqs:expr, |$make:ident| $body:expr) => {{
        use $crate::implementation::Implementation as I;
        use $crate::kem::Level as L;
        #[allow(unused_imports)]
        use $crate::kem::*;
        match ($imp, $level) {
            (I::LibcruxPortable, L::MlKem512) => Ok({
                let $make = || Ok::<_, String>(Portable512);
                $body
            }),
            (I::LibcruxPortable, L::MlKem768) => Ok({
                let $make = || Ok::<_, String>(Portable768);
                $body
            }),
            (I::LibcruxPortable, L::MlKem1024) => Ok({
                let $make = || Ok::<_, String>(Portable1024);
                $body
            }),
            #[cfg(target_arch = "x86_64")]
            (I::LibcruxAvx2, level) => match I::LibcruxAvx2.cpu_support() {
                Err(e) => Err(e),
                Ok(()) => match level {
                    L::MlKem512 => Ok({
                        let $make = || Ok::<_, String>(Avx2_512);
                        $body
                    }),
                    L::MlKem768 => Ok({
                        let $make = || Ok::<_, String>(Avx2_768);
                        $body
                    }),
                    L::MlKem1024 => Ok({
                        let $make = || Ok::<_, String>(Avx2_1024);
                        $body
                    }),
                },
            },
            #[cfg(target_arch = "aarch64")]
            (I::LibcruxNeon, L::MlKem512) => Ok({
                let $make = || Ok::<_, String>(Neon512);
                $body
            }),
            #[cfg(target_arch = "aarch64")]
            (I::LibcruxNeon, L::MlKem768) => Ok({
                let $make = || Ok::<_, String>(Neon768);
                $body
            }),
            #[cfg(target_arch = "aarch64")]
            (I::LibcruxNeon, L::MlKem1024) => Ok({
                let $make = || Ok::<_, String>(Neon1024);
                $body
            }),
            (I::Liboqs, level) => match $oqs {
                None => Err("no liboqs given (--liboqs DIR)".to_string()),
                Some(lib) => match lib.kem(level) {
                    Err(e) => Err(e),
                    Ok(_) => Ok({
                        let $make = || lib.kem(level);
                        $body
                    }),
                },
            },
            (imp, _) => Err(imp
                .cpu_support()
                .err()
                .unwrap_or_else(|| format!("{} is not an ML-KEM", imp.name()))),
        }
    }};
}

pub fn level_from_arg(s: &str) -> Result<Level, String> {
    s.parse::<u32>()
        .ok()
        .and_then(Level::from_number)
        .ok_or_else(|| format!("invalid security level {s:?}; allowed: 512, 768, 1024"))
}
