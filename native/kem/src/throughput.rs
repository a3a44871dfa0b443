//! Encapsulations or decapsulations per second on N threads, each with its own key pair
//! (and, for liboqs, its own KEM object), started together on a barrier.
//!
//! Each thread runs for `warmup + window`; the operations that complete inside its
//! window count. Time is CLOCK_MONOTONIC (std's Instant), read once per operation. What
//! a thread produced is checked after its window: its last encapsulations decapsulate
//! to their secrets (encaps), every decapsulation gives the expected secret (decaps),
//! and a tampered ciphertext gives a different secret (both).

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use crate::kem::{Kem, SHARED_SECRET};
use crate::measure::{Checks, Operation};

/// Ciphertexts each thread keeps (encaps: its last results; decaps: the ones it cycles
/// through).
const POOL: usize = 8;
/// Randomness is drawn from the OS for this many encapsulations at a time.
const RANDOM_BATCH: usize = 64;

pub struct ThreadResult {
    pub thread: usize,
    /// The CPU it was pinned to (None: not pinned), and why pinning failed, if it did.
    pub cpu: Option<usize>,
    pub pin_error: Option<String>,
    pub ops_in_window: u64,
    pub ops_total: u64,
    pub window_sec: f64,
    pub checks: Checks,
}

/// Pin the calling thread to `cpu`.
#[cfg(target_os = "linux")]
fn pin(cpu: usize) -> Result<(), String> {
    // SAFETY: a zeroed cpu_set_t with one bit set, for the calling thread (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(format!(
                "sched_setaffinity(cpu {cpu}): {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn pin(_cpu: usize) -> Result<(), String> {
    Err("this OS has no per-thread CPU pinning; threads run unpinned".into())
}

fn worker<K: Kem>(
    mut kem: K,
    op: Operation,
    warmup: Duration,
    window: Duration,
    break_tamper: bool,
    barrier: &Barrier,
) -> (u64, u64, f64, Checks) {
    let mut checks = Checks::default();
    let mut seed = [0u8; 64];
    getrandom::getrandom(&mut seed).expect("OS randomness");
    let mut kp = kem.new_keypair();
    if let Err(e) = kem.keypair(&seed, &mut kp) {
        checks.error_message(e);
        barrier.wait();
        return (0, 0, 0.0, checks);
    }
    let mut cts: Vec<K::Ciphertext> = (0..POOL).map(|_| kem.new_ciphertext()).collect();
    let mut secrets = [[0u8; SHARED_SECRET]; POOL];
    let mut randomness = vec![0u8; 32 * RANDOM_BATCH];
    if op == Operation::Decaps {
        getrandom::getrandom(&mut randomness).expect("OS randomness");
        for i in 0..POOL {
            let r: &[u8; 32] = randomness[32 * i..32 * (i + 1)].try_into().unwrap();
            if let Err(e) = kem.encaps(&kp, r, &mut cts[i], &mut secrets[i]) {
                checks.error_message(e);
            }
        }
    }
    let mut ss = [0u8; SHARED_SECRET];
    let (mut in_window, mut total) = (0u64, 0u64);
    barrier.wait();
    let start = Instant::now();
    let (window_start, end) = (start + warmup, start + warmup + window);
    loop {
        let slot = (total as usize) % POOL;
        let r = match op {
            Operation::Encaps => {
                let batch = (total as usize) % RANDOM_BATCH;
                if batch == 0 {
                    getrandom::getrandom(&mut randomness).expect("OS randomness");
                }
                let rand: &[u8; 32] = randomness[32 * batch..32 * (batch + 1)].try_into().unwrap();
                kem.encaps(&kp, rand, &mut cts[slot], &mut secrets[slot])
            }
            _ => kem.decaps(&kp, black_box(&cts[slot]), &mut ss).map(|()| {
                checks.pairs_checked += 1;
                if ss != secrets[slot] {
                    checks.secrets_mismatched += 1;
                }
            }),
        };
        if let Err(e) = r {
            checks.error_message(e);
            break;
        }
        total += 1;
        let now = Instant::now();
        if now >= end {
            break;
        }
        if now >= window_start {
            in_window += 1;
        }
    }
    let elapsed_window = (Instant::now().min(end) - window_start.min(end)).as_secs_f64();
    // what this thread produced, checked outside its window
    for slot in 0..POOL.min(total as usize) {
        if op == Operation::Encaps {
            match kem.decaps(&kp, &cts[slot], &mut ss) {
                Ok(()) => {
                    checks.pairs_checked += 1;
                    if ss != secrets[slot] {
                        checks.secrets_mismatched += 1;
                    }
                }
                Err(e) => checks.error_message(e),
            }
        }
        let bad = if break_tamper {
            None
        } else {
            Some(kem.tampered(&cts[slot]))
        };
        match kem.decaps(&kp, bad.as_ref().unwrap_or(&cts[slot]), &mut ss) {
            Ok(()) => {
                checks.tamper_checked += 1;
                if ss == secrets[slot] {
                    checks.tamper_accepted += 1;
                }
            }
            Err(e) => checks.error_message(e),
        }
    }
    (in_window, total, elapsed_window, checks)
}

/// Run `threads` workers, each with a KEM from `make`, pinned to `cpus[i % len]` when
/// `cpus` is not empty.
pub fn run<K, F>(
    make: F,
    op: Operation,
    threads: usize,
    warmup: Duration,
    window: Duration,
    cpus: &[usize],
    break_tamper: bool,
) -> Result<Vec<ThreadResult>, String>
where
    K: Kem,
    F: Fn() -> Result<K, String> + Sync,
{
    if !matches!(op, Operation::Encaps | Operation::Decaps) {
        return Err(format!(
            "the thread sweep measures encaps and decaps, not {}",
            op.name()
        ));
    }
    let barrier = Barrier::new(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (make, barrier) = (&make, &barrier);
                let cpu = (!cpus.is_empty()).then(|| cpus[i % cpus.len()]);
                scope.spawn(move || {
                    let pin_error = cpu.and_then(|c| pin(c).err());
                    let kem = match make() {
                        Ok(k) => k,
                        Err(e) => {
                            barrier.wait();
                            return Err(e);
                        }
                    };
                    let (ops_in_window, ops_total, window_sec, checks) =
                        worker(kem, op, warmup, window, break_tamper, barrier);
                    Ok(ThreadResult {
                        thread: i,
                        cpu,
                        pin_error,
                        ops_in_window,
                        ops_total,
                        window_sec,
                        checks,
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a worker thread panicked"))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kem::Portable512;

    #[test]
    fn every_thread_counts_its_window_and_checks_its_results() {
        for op in [Operation::Encaps, Operation::Decaps] {
            let results = run(
                || Ok(Portable512),
                op,
                2,
                Duration::from_millis(20),
                Duration::from_millis(300),
                &[],
                false,
            )
            .unwrap();
            assert_eq!(results.len(), 2);
            for r in &results {
                // a thread the OS never ran in its window would count nothing: that is a
                // measurement, but not with 300 ms of window on a working machine
                assert!(r.ops_in_window > 0 && r.ops_total >= r.ops_in_window, "{op:?}");
                assert!((r.window_sec - 0.3).abs() < 0.05, "{}", r.window_sec);
                assert_eq!(r.checks.failure(), None, "{op:?}");
                assert_eq!(r.checks.tamper_checked, POOL as u64);
            }
        }
    }

    #[test]
    fn more_threads_than_cores_each_keep_their_own_keys_and_results() {
        // a stress run: 4x more threads than a 2-core machine has, both operations
        for op in [Operation::Encaps, Operation::Decaps] {
            let results = run(
                || Ok(Portable512),
                op,
                8,
                Duration::ZERO,
                Duration::from_millis(200),
                &[],
                false,
            )
            .unwrap();
            assert_eq!(
                results.iter().map(|r| r.thread).collect::<Vec<_>>(),
                (0..8).collect::<Vec<_>>()
            );
            for r in &results {
                assert!(r.ops_total >= r.ops_in_window);
                assert_eq!(r.checks.failure(), None, "{op:?} thread {}", r.thread);
                assert_eq!(r.checks.secrets_mismatched, 0);
            }
        }
    }

    #[test]
    fn a_broken_rejection_check_is_caught_in_the_sweep_too() {
        let results = run(
            || Ok(Portable512),
            Operation::Encaps,
            1,
            Duration::ZERO,
            Duration::from_millis(30),
            &[],
            true,
        )
        .unwrap();
        assert!(results[0]
            .checks
            .failure()
            .unwrap()
            .contains("tampered inputs gave the original secret"));
    }
}
