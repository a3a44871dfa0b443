//! The seed's measurement loops, one operation at a time, each sample one call between
//! two reads of the counter; and the checks of what was measured.
//!
//! As in the seed, every iteration draws fresh randomness and, for encaps and decaps,
//! a fresh key pair (and ciphertext) outside the timed call. Beyond the seed, every
//! iteration checks its result, also outside the timed call:
//! - keypair: the new key pair encapsulates and decapsulates to the same secret;
//! - encaps: decapsulating the new ciphertext gives the encapsulated secret;
//! - decaps: the decapsulated secret is the encapsulated one;
//! - and each time, a ciphertext with one bit flipped decapsulates to a different
//!   secret (ML-KEM's implicit rejection).
//!
//! `bare_encaps` is the seed's encaps loop with nothing else: the harness-cost goal
//! compares the two.

use std::hint::black_box;

use crate::kem::{Kem, SHARED_SECRET};
use crate::x25519::{OpenSsl, KEY_BYTES};

/// The operations measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Keypair,
    Encaps,
    Decaps,
    /// X25519 only: one Diffie-Hellman derivation.
    Derive,
}

impl Operation {
    pub fn name(self) -> &'static str {
        match self {
            Operation::Keypair => "keypair",
            Operation::Encaps => "encaps",
            Operation::Decaps => "decaps",
            Operation::Derive => "derive",
        }
    }

    pub fn from_name(name: &str) -> Option<Operation> {
        [
            Operation::Keypair,
            Operation::Encaps,
            Operation::Decaps,
            Operation::Derive,
        ]
        .into_iter()
        .find(|op| op.name() == name)
    }
}

/// The test hook that breaks the implicit-rejection check of one implementation (the
/// "tampered" ciphertext is left intact), so that the failure path can be exercised
/// end to end: `PARBENCH_KEM_BREAK_CHECK=<implementation>`.
pub const BREAK_CHECK_ENV: &str = "PARBENCH_KEM_BREAK_CHECK";

pub fn check_broken_for(implementation: &str) -> bool {
    std::env::var(BREAK_CHECK_ENV)
        .map(|v| v == implementation)
        .unwrap_or(false)
}

/// What the checks of one cell found.
#[derive(Clone, Debug, Default)]
pub struct Checks {
    /// Encapsulate/decapsulate pairs (or both sides of an X25519 exchange) compared.
    pub pairs_checked: u64,
    pub secrets_mismatched: u64,
    /// Tampered ciphertexts (peer keys) decapsulated (derived with).
    pub tamper_checked: u64,
    /// ... that gave the original secret: implicit rejection failed.
    pub tamper_accepted: u64,
    /// Calls that returned an error.
    pub errors: u64,
    pub first_error: Option<String>,
}

impl Checks {
    /// Count a failed call, keeping the first message.
    pub fn error_message(&mut self, e: String) {
        self.error(e)
    }

    fn error(&mut self, e: String) {
        self.errors += 1;
        self.first_error.get_or_insert(e);
    }

    /// None when every check passed, else what failed.
    pub fn failure(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.errors > 0 {
            parts.push(format!(
                "{} call(s) failed (first: {})",
                self.errors,
                self.first_error.as_deref().unwrap_or("?")
            ));
        }
        if self.secrets_mismatched > 0 {
            parts.push(format!(
                "{} of {} shared-secret pairs did not match",
                self.secrets_mismatched, self.pairs_checked
            ));
        }
        if self.tamper_accepted > 0 {
            parts.push(format!(
                "{} of {} tampered inputs gave the original secret",
                self.tamper_accepted, self.tamper_checked
            ));
        }
        if self.pairs_checked == 0 && self.errors == 0 {
            parts.push("nothing was checked".to_string());
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

fn fill<const N: usize>(buf: &mut [u8; N]) {
    getrandom::getrandom(buf).expect("the operating system's random number generator failed");
}

/// Decapsulate `ct` and compare with `expected`; decapsulate a tampered copy and check
/// that the secret differs.
fn check_pair<K: Kem>(
    kem: &mut K,
    kp: &K::KeyPair,
    ct: &K::Ciphertext,
    expected: &[u8; SHARED_SECRET],
    break_tamper: bool,
    checks: &mut Checks,
) {
    let mut ss = [0u8; SHARED_SECRET];
    match kem.decaps(kp, ct, &mut ss) {
        Ok(()) => {
            checks.pairs_checked += 1;
            if &ss != expected {
                checks.secrets_mismatched += 1;
            }
        }
        Err(e) => checks.error(e),
    }
    let bad = if break_tamper { None } else { Some(kem.tampered(ct)) };
    match kem.decaps(kp, bad.as_ref().unwrap_or(ct), &mut ss) {
        Ok(()) => {
            checks.tamper_checked += 1;
            if &ss == expected {
                checks.tamper_accepted += 1;
            }
        }
        Err(e) => checks.error(e),
    }
}

/// One measured cell of an ML-KEM: `iterations` samples of `op`, each one call between
/// two reads of `read` (the active counter), plus the checks.
pub fn kem_cycles<K: Kem>(
    kem: &mut K,
    op: Operation,
    iterations: usize,
    read: fn() -> u64,
    break_tamper: bool,
) -> (Vec<u64>, Checks) {
    let mut samples = Vec::with_capacity(iterations);
    let mut checks = Checks::default();
    let mut kp = kem.new_keypair();
    let mut ct = kem.new_ciphertext();
    let mut ss = [0u8; SHARED_SECRET];
    let mut ss2 = [0u8; SHARED_SECRET];
    let mut seed = [0u8; 64];
    let mut randomness = [0u8; 32];
    for _ in 0..iterations {
        fill(&mut seed);
        match op {
            Operation::Keypair => {
                let start = read();
                let r = kem.keypair(black_box(&seed), &mut kp);
                let end = read();
                black_box(&kp);
                samples.push(end.saturating_sub(start));
                if let Err(e) = r {
                    checks.error(e);
                    continue;
                }
                fill(&mut randomness);
                match kem.encaps(&kp, &randomness, &mut ct, &mut ss) {
                    Ok(()) => check_pair(kem, &kp, &ct, &ss, break_tamper, &mut checks),
                    Err(e) => checks.error(e),
                }
            }
            Operation::Encaps => {
                if let Err(e) = kem.keypair(&seed, &mut kp) {
                    checks.error(e);
                    continue;
                }
                fill(&mut randomness);
                let start = read();
                let r = kem.encaps(black_box(&kp), black_box(&randomness), &mut ct, &mut ss);
                let end = read();
                black_box((&ct, &ss));
                samples.push(end.saturating_sub(start));
                match r {
                    Ok(()) => check_pair(kem, &kp, &ct, &ss, break_tamper, &mut checks),
                    Err(e) => checks.error(e),
                }
            }
            Operation::Decaps => {
                fill(&mut randomness);
                if let Err(e) = kem
                    .keypair(&seed, &mut kp)
                    .and_then(|()| kem.encaps(&kp, &randomness, &mut ct, &mut ss))
                {
                    checks.error(e);
                    continue;
                }
                let start = read();
                let r = kem.decaps(black_box(&kp), black_box(&ct), &mut ss2);
                let end = read();
                black_box(&ss2);
                samples.push(end.saturating_sub(start));
                match r {
                    Ok(()) => {
                        checks.pairs_checked += 1;
                        if ss2 != ss {
                            checks.secrets_mismatched += 1;
                        }
                        // the tampered ciphertext, checked as in the other operations
                        let bad = if break_tamper { None } else { Some(kem.tampered(&ct)) };
                        match kem.decaps(&kp, bad.as_ref().unwrap_or(&ct), &mut ss2) {
                            Ok(()) => {
                                checks.tamper_checked += 1;
                                if ss2 == ss {
                                    checks.tamper_accepted += 1;
                                }
                            }
                            Err(e) => checks.error(e),
                        }
                    }
                    Err(e) => checks.error(e),
                }
            }
            Operation::Derive => panic!("derive is an X25519 operation, not an ML-KEM one"),
        }
    }
    (samples, checks)
}

/// The seed's encaps loop and nothing else: a fresh key pair and randomness per
/// iteration, one timed `encaps`. The reference of the harness-cost goal.
pub fn bare_encaps<K: Kem>(kem: &mut K, iterations: usize, read: fn() -> u64) -> Vec<u64> {
    let mut samples = Vec::with_capacity(iterations);
    let mut kp = kem.new_keypair();
    let mut ct = kem.new_ciphertext();
    let mut ss = [0u8; SHARED_SECRET];
    let mut seed = [0u8; 64];
    let mut randomness = [0u8; 32];
    for _ in 0..iterations {
        fill(&mut seed);
        kem.keypair(&seed, &mut kp).expect("keypair");
        fill(&mut randomness);
        let start = read();
        let _ = kem.encaps(black_box(&kp), black_box(&randomness), &mut ct, &mut ss);
        let end = read();
        black_box((&ct, &ss));
        samples.push(end.saturating_sub(start));
    }
    samples
}

/// One measured X25519 cell: `keypair` (one key generation) or `derive` (one
/// derivation), with the checks: both sides of every exchange derive the same secret,
/// and a peer public key with one bit flipped derives a different one.
pub fn x25519_cycles(
    ssl: &OpenSsl,
    op: Operation,
    iterations: usize,
    read: fn() -> u64,
    break_tamper: bool,
) -> Result<(Vec<u64>, Checks), String> {
    let mut samples = Vec::with_capacity(iterations);
    let mut checks = Checks::default();
    let mut keygen = ssl.keygen_context()?;
    let mut ours = [0u8; KEY_BYTES];
    let mut theirs = [0u8; KEY_BYTES];
    for _ in 0..iterations {
        let (alice, bob) = match op {
            Operation::Keypair => {
                let start = read();
                let key = keygen.generate();
                let end = read();
                samples.push(end.saturating_sub(start));
                let Ok(alice) = key.map_err(|e| checks.error(e)) else {
                    continue;
                };
                let Ok(bob) = keygen.generate().map_err(|e| checks.error(e)) else {
                    continue;
                };
                if let Err(e) = ssl.derive(&alice, &bob, &mut ours) {
                    checks.error(e);
                    continue;
                }
                (alice, bob)
            }
            Operation::Derive => {
                let (Ok(alice), Ok(bob)) = (keygen.generate(), keygen.generate()) else {
                    checks.error("EVP_PKEY_keygen failed".into());
                    continue;
                };
                let start = read();
                let r = ssl.derive(black_box(&alice), black_box(&bob), &mut ours);
                let end = read();
                black_box(&ours);
                samples.push(end.saturating_sub(start));
                if let Err(e) = r {
                    checks.error(e);
                    continue;
                }
                (alice, bob)
            }
            _ => return Err(format!("X25519 has no {} operation (keypair, derive)", op.name())),
        };
        // the other side of the exchange, from alice's public key alone
        match ssl
            .public_key(&alice, false)
            .and_then(|alice_public| ssl.derive(&bob, &alice_public, &mut theirs))
        {
            Ok(()) => {
                checks.pairs_checked += 1;
                if ours != theirs {
                    checks.secrets_mismatched += 1;
                }
            }
            Err(e) => checks.error(e),
        }
        match ssl
            .public_key(&alice, !break_tamper)
            .and_then(|bad| ssl.derive(&bob, &bad, &mut theirs))
        {
            Ok(()) => {
                checks.tamper_checked += 1;
                if ours == theirs {
                    checks.tamper_accepted += 1;
                }
            }
            // OpenSSL refuses a low-order point: a rejection, which is what is checked
            Err(_) => checks.tamper_checked += 1,
        }
    }
    Ok((samples, checks))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kem::Portable512;

    fn clock() -> u64 {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        START.get_or_init(std::time::Instant::now).elapsed().as_nanos() as u64
    }

    #[test]
    fn every_operation_checks_secrets_and_implicit_rejection() {
        for op in [Operation::Keypair, Operation::Encaps, Operation::Decaps] {
            let (samples, checks) = kem_cycles(&mut Portable512, op, 20, clock, false);
            assert_eq!(samples.len(), 20);
            assert_eq!(checks.pairs_checked, 20, "{op:?}");
            assert_eq!(checks.tamper_checked, 20, "{op:?}");
            assert_eq!(checks.failure(), None, "{op:?}");
        }
    }

    #[test]
    fn a_tampered_ciphertext_that_is_not_tampered_fails_the_cell() {
        let (_, checks) = kem_cycles(&mut Portable512, Operation::Encaps, 5, clock, true);
        assert_eq!(checks.tamper_accepted, 5);
        assert_eq!(
            checks.failure().unwrap(),
            "5 of 5 tampered inputs gave the original secret"
        );
    }

    #[test]
    fn implicit_rejection_gives_a_different_secret_deterministically() {
        let mut kem = Portable512;
        let mut kp = kem.new_keypair();
        kem.keypair(&[7u8; 64], &mut kp).unwrap();
        let (mut ct, mut ss) = (kem.new_ciphertext(), [0u8; 32]);
        kem.encaps(&kp, &[9u8; 32], &mut ct, &mut ss).unwrap();
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        kem.decaps(&kp, &kem.tampered(&ct), &mut a).unwrap();
        kem.decaps(&kp, &kem.tampered(&ct), &mut b).unwrap();
        assert_ne!(a, ss);
        assert_eq!(a, b); // the rejection secret is a function of the key and ciphertext
    }
}
