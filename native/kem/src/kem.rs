//! The KEMs measured, behind one trait: libcrux-ml-kem (the seed's library) portable,
//! AVX2 and NEON; liboqs' ML-KEM (the pipeline's liboqs, loaded at run time). OpenSSL's
//! X25519, which is no KEM, is in `x25519.rs`.
//!
//! Outputs are written into buffers the caller allocated beforehand, so that a timed
//! call allocates nothing.

use std::fmt;

/// An ML-KEM parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    MlKem512,
    MlKem768,
    MlKem1024,
}

pub const LEVELS: [Level; 3] = [Level::MlKem512, Level::MlKem768, Level::MlKem1024];

impl Level {
    pub fn from_number(n: u32) -> Option<Level> {
        match n {
            512 => Some(Level::MlKem512),
            768 => Some(Level::MlKem768),
            1024 => Some(Level::MlKem1024),
            _ => None,
        }
    }

    pub fn number(self) -> u32 {
        match self {
            Level::MlKem512 => 512,
            Level::MlKem768 => 768,
            Level::MlKem1024 => 1024,
        }
    }

    /// "ML-KEM-512": the seed's title and liboqs' algorithm name.
    pub fn name(self) -> String {
        format!("ML-KEM-{}", self.number())
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// The size of an ML-KEM shared secret.
pub const SHARED_SECRET: usize = 32;

/// A key encapsulation mechanism, as the measurement loops see it.
pub trait Kem {
    type KeyPair;
    type Ciphertext;

    fn new_keypair(&self) -> Self::KeyPair;
    fn new_ciphertext(&self) -> Self::Ciphertext;
    /// A key pair from 64 bytes of randomness (libcrux uses them; liboqs draws its own).
    fn keypair(&mut self, seed: &[u8; 64], out: &mut Self::KeyPair) -> Result<(), String>;
    fn encaps(
        &mut self,
        kp: &Self::KeyPair,
        randomness: &[u8; 32],
        ct: &mut Self::Ciphertext,
        ss: &mut [u8; SHARED_SECRET],
    ) -> Result<(), String>;
    fn decaps(&mut self, kp: &Self::KeyPair, ct: &Self::Ciphertext, ss: &mut [u8; SHARED_SECRET])
        -> Result<(), String>;
    /// A copy of `ct` with one bit flipped (for the implicit-rejection check).
    fn tampered(&self, ct: &Self::Ciphertext) -> Self::Ciphertext;
}

/// libcrux-ml-kem, one parameter set on one backend: `$backend` is one of libcrux's
/// `mlkem512::portable`, `mlkem768::avx2`, ... modules. Each call is the seed's call
/// (`generate_key_pair(seed)`, `encapsulate(public_key, randomness)`,
/// `decapsulate(private_key, ciphertext)`), its result moved into the caller's buffer.
macro_rules! libcrux_kem {
    ($name:ident, $backend:path, $keypair:ty, $ciphertext:ty) => {
        pub struct $name;

        impl Kem for $name {
            type KeyPair = $keypair;
            type Ciphertext = $ciphertext;

            fn new_keypair(&self) -> Self::KeyPair {
                <$keypair>::from(Default::default(), Default::default())
            }

            fn new_ciphertext(&self) -> Self::Ciphertext {
                Default::default()
            }

            #[inline(always)]
            fn keypair(&mut self, seed: &[u8; 64], out: &mut Self::KeyPair) -> Result<(), String> {
                use $backend as backend;
                *out = backend::generate_key_pair(*seed);
                Ok(())
            }

            #[inline(always)]
            fn encaps(
                &mut self,
                kp: &Self::KeyPair,
                randomness: &[u8; 32],
                ct: &mut Self::Ciphertext,
                ss: &mut [u8; SHARED_SECRET],
            ) -> Result<(), String> {
                use $backend as backend;
                let (c, s) = backend::encapsulate(kp.public_key(), *randomness);
                *ct = c;
                *ss = s;
                Ok(())
            }

            #[inline(always)]
            fn decaps(
                &mut self,
                kp: &Self::KeyPair,
                ct: &Self::Ciphertext,
                ss: &mut [u8; SHARED_SECRET],
            ) -> Result<(), String> {
                use $backend as backend;
                *ss = backend::decapsulate(kp.private_key(), ct);
                Ok(())
            }

            fn tampered(&self, ct: &Self::Ciphertext) -> Self::Ciphertext {
                let mut bytes = *ct.as_slice();
                bytes[0] ^= 1;
                <$ciphertext>::from(bytes)
            }
        }
    };
}

use libcrux_ml_kem::{mlkem1024, mlkem512, mlkem768};

libcrux_kem!(
    Portable512,
    mlkem512::portable,
    mlkem512::MlKem512KeyPair,
    mlkem512::MlKem512Ciphertext
);
libcrux_kem!(
    Portable768,
    mlkem768::portable,
    mlkem768::MlKem768KeyPair,
    mlkem768::MlKem768Ciphertext
);
libcrux_kem!(
    Portable1024,
    mlkem1024::portable,
    mlkem1024::MlKem1024KeyPair,
    mlkem1024::MlKem1024Ciphertext
);

// The AVX2 backend exists on x86-64 builds. Its functions use AVX2 instructions
// unconditionally: they may only run after `crate::implementation::availability` has
// found AVX2 on this CPU.
#[cfg(target_arch = "x86_64")]
libcrux_kem!(
    Avx2_512,
    mlkem512::avx2,
    mlkem512::MlKem512KeyPair,
    mlkem512::MlKem512Ciphertext
);
#[cfg(target_arch = "x86_64")]
libcrux_kem!(
    Avx2_768,
    mlkem768::avx2,
    mlkem768::MlKem768KeyPair,
    mlkem768::MlKem768Ciphertext
);
#[cfg(target_arch = "x86_64")]
libcrux_kem!(
    Avx2_1024,
    mlkem1024::avx2,
    mlkem1024::MlKem1024KeyPair,
    mlkem1024::MlKem1024Ciphertext
);

// The NEON backend exists on aarch64 builds (every aarch64 CPU has NEON).
#[cfg(target_arch = "aarch64")]
libcrux_kem!(
    Neon512,
    mlkem512::neon,
    mlkem512::MlKem512KeyPair,
    mlkem512::MlKem512Ciphertext
);
#[cfg(target_arch = "aarch64")]
libcrux_kem!(
    Neon768,
    mlkem768::neon,
    mlkem768::MlKem768KeyPair,
    mlkem768::MlKem768Ciphertext
);
#[cfg(target_arch = "aarch64")]
libcrux_kem!(
    Neon1024,
    mlkem1024::neon,
    mlkem1024::MlKem1024KeyPair,
    mlkem1024::MlKem1024Ciphertext
);
