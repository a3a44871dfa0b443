//! The cycle counter: which one to use ($CYCLE_COUNTER, or the best available), and
//! reading it. The counters themselves are the C HAL (`src/cycle_counter/hal.c`).
//!
//! Policy, in this one place:
//! - `CYCLE_COUNTER=<name>` forces a counter; a name that is not a counter, or a counter
//!   this machine cannot open, is an error whose message names the allowed or the
//!   available ones;
//! - unset (or empty), the first available of PMU_CYCLES, PERF_CYCLES, MAC_CYCLES, TSC,
//!   TIMER is used: core cycles where the machine offers them, else the constant-rate
//!   TSC (reference cycles, reported as `tsc_ticks`, never as core cycles), else the
//!   monotonic clock in nanoseconds.
//!
//! The active counter is process-wide state of the HAL: one measuring thread per process.

use std::ffi::{c_char, c_int, CStr};
use std::fmt;

extern "C" {
    fn pbk_hal_probe(counter: c_int, why: *mut c_char, why_len: usize) -> c_int;
    fn pbk_hal_open(counter: c_int, why: *mut c_char, why_len: usize) -> c_int;
    fn pbk_hal_read() -> u64;
    fn pbk_hal_close();
    fn pbk_hal_tsc_hz(ms: u32) -> f64;
    fn pbk_hal_tsc_invariant() -> c_int;
}

/// The counters, with the seed's names (`PERF_CYCLES`, `PMU_CYCLES`, `MAC_CYCLES`) and
/// two more (`TSC`, `TIMER`). The discriminants are the HAL's `pbk_counter` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    PerfCycles = 0,
    PmuCycles = 1,
    MacCycles = 2,
    Tsc = 3,
    Timer = 4,
}

/// Every counter, in the HAL's order.
pub const ALL: [Counter; 5] = [
    Counter::PerfCycles,
    Counter::PmuCycles,
    Counter::MacCycles,
    Counter::Tsc,
    Counter::Timer,
];

/// The order in which an unforced run picks one: direct core-cycle reads first, the
/// clock last.
pub const PREFERENCE: [Counter; 5] = [
    Counter::PmuCycles,
    Counter::PerfCycles,
    Counter::MacCycles,
    Counter::Tsc,
    Counter::Timer,
];

/// The environment variable that forces a counter, as in the seed.
pub const ENV: &str = "CYCLE_COUNTER";

impl Counter {
    pub fn name(self) -> &'static str {
        match self {
            Counter::PerfCycles => "PERF_CYCLES",
            Counter::PmuCycles => "PMU_CYCLES",
            Counter::MacCycles => "MAC_CYCLES",
            Counter::Tsc => "TSC",
            Counter::Timer => "TIMER",
        }
    }

    /// What one tick is: `cycles` (core clock cycles), `tsc_ticks` (reference cycles of
    /// the constant-rate TSC) or `ns`.
    pub fn unit(self) -> &'static str {
        match self {
            Counter::PerfCycles | Counter::PmuCycles | Counter::MacCycles => "cycles",
            Counter::Tsc => "tsc_ticks",
            Counter::Timer => "ns",
        }
    }

    /// One line saying what the counter measures.
    pub fn describe(self) -> &'static str {
        match self {
            Counter::PerfCycles => "core cycles through perf_event_open (user space only)",
            Counter::PmuCycles => "core cycles read directly from the PMU (rdpmc / PMCCNTR_EL0)",
            Counter::MacCycles => "core cycles through Apple's kperf",
            Counter::Tsc => "TSC ticks from rdtscp: reference cycles at a constant rate, not core cycles",
            Counter::Timer => "nanoseconds of CLOCK_MONOTONIC",
        }
    }

    pub fn from_name(name: &str) -> Option<Counter> {
        ALL.iter().copied().find(|c| c.name() == name)
    }

    /// Whether the counter counts the core's own clock cycles.
    pub fn counts_core_cycles(self) -> bool {
        self.unit() == "cycles"
    }
}

impl fmt::Display for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn reason(buf: &[c_char]) -> String {
    // SAFETY: the HAL always NUL-terminates `why` within its length.
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
}

/// Whether this machine can open `counter`: Ok, or Err(the HAL's reason).
pub fn probe(counter: Counter) -> Result<(), String> {
    let mut why = [0 as c_char; 512];
    // SAFETY: `why` is writable for its length; the HAL writes at most that much.
    let ok = unsafe { pbk_hal_probe(counter as c_int, why.as_mut_ptr(), why.len()) };
    if ok == 1 {
        Ok(())
    } else {
        Err(reason(&why))
    }
}

/// Every counter with its availability (Ok, or Err(reason)).
pub fn probe_all() -> Vec<(Counter, Result<(), String>)> {
    ALL.iter().map(|&c| (c, probe(c))).collect()
}

/// Why no counter could be selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectError {
    /// $CYCLE_COUNTER names no counter.
    Unknown(String),
    /// The forced counter cannot be opened here: (name, reason, the available ones).
    Unavailable(Counter, String, Vec<Counter>),
}

impl fmt::Display for SelectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SelectError::Unknown(name) => write!(
                f,
                "{ENV}={name} is not a cycle counter; allowed: {}",
                ALL.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
            ),
            SelectError::Unavailable(counter, why, available) => write!(
                f,
                "{ENV}={counter} is not available on this machine: {why}; available: {}",
                if available.is_empty() {
                    "none".to_string()
                } else {
                    available.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
                }
            ),
        }
    }
}

/// The counter to use: the one `requested` names (the value of $CYCLE_COUNTER), or the
/// best available one when it is None or empty. `probe` says whether a counter is
/// available (injectable for tests).
pub fn select_with(
    requested: Option<&str>,
    probe: impl Fn(Counter) -> Result<(), String>,
) -> Result<Counter, SelectError> {
    let available = || {
        PREFERENCE
            .iter()
            .copied()
            .filter(|&c| probe(c).is_ok())
            .collect::<Vec<_>>()
    };
    match requested.map(str::trim).filter(|s| !s.is_empty()) {
        Some(name) => {
            let counter = Counter::from_name(name).ok_or_else(|| SelectError::Unknown(name.to_string()))?;
            match probe(counter) {
                Ok(()) => Ok(counter),
                Err(why) => Err(SelectError::Unavailable(counter, why, available())),
            }
        }
        // TIMER is always available, so this finds one
        None => Ok(available().into_iter().next().unwrap_or(Counter::Timer)),
    }
}

/// `select_with` on this machine's counters and $CYCLE_COUNTER.
pub fn select_from_env() -> Result<Counter, SelectError> {
    let requested = std::env::var(ENV).ok();
    select_with(requested.as_deref(), probe)
}

/// Make `counter` the active one.
pub fn open(counter: Counter) -> Result<(), String> {
    let mut why = [0 as c_char; 512];
    // SAFETY: as in `probe`.
    let rc = unsafe { pbk_hal_open(counter as c_int, why.as_mut_ptr(), why.len()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(reason(&why))
    }
}

/// The active counter's value (in its unit).
#[inline(always)]
pub fn read() -> u64 {
    // SAFETY: no arguments; reads the HAL's process-wide state.
    unsafe { pbk_hal_read() }
}

pub fn close() {
    // SAFETY: releases what `open` acquired; harmless when nothing is open.
    unsafe { pbk_hal_close() }
}

/// x86-64: TSC ticks per second, measured against CLOCK_MONOTONIC over `ms` ms.
pub fn tsc_hz(ms: u32) -> Option<f64> {
    // SAFETY: pure measurement, no pointers.
    let hz = unsafe { pbk_hal_tsc_hz(ms) };
    (hz > 0.0).then_some(hz)
}

/// x86-64: whether CPUID reports an invariant TSC; None elsewhere.
pub fn tsc_invariant() -> Option<bool> {
    // SAFETY: CPUID only.
    match unsafe { pbk_hal_tsc_invariant() } {
        1 => Some(true),
        0 => Some(false),
        _ => None,
    }
}

/// The median cost of one read of the active counter (two back-to-back reads), in its
/// unit: what every sample includes once.
pub fn read_overhead(samples: usize) -> u64 {
    let mut deltas: Vec<u64> = (0..samples.max(1))
        .map(|_| {
            let a = read();
            let b = read();
            b.saturating_sub(a)
        })
        .collect();
    deltas.sort_unstable();
    deltas[deltas.len() / 2]
}

/// The counter selected for a run, opened, with what a record needs to say about it.
#[derive(Clone, Debug)]
pub struct Selected {
    pub counter: Counter,
    pub forced: bool,
    /// TSC ticks per second where the TSC exists (to convert TSC ticks to time).
    pub tsc_hz: Option<f64>,
    pub tsc_invariant: Option<bool>,
    pub read_overhead: u64,
}

impl Selected {
    /// Select (from $CYCLE_COUNTER or the best available), open and characterise the
    /// counter.
    pub fn from_env() -> Result<Selected, String> {
        let forced = std::env::var(ENV).map(|v| !v.trim().is_empty()).unwrap_or(false);
        let counter = select_from_env().map_err(|e| e.to_string())?;
        open(counter).map_err(|why| format!("cannot open {counter}: {why}"))?;
        let tsc_hz = tsc_hz(20);
        Ok(Selected {
            counter,
            forced,
            tsc_hz,
            tsc_invariant: tsc_invariant(),
            read_overhead: read_overhead(1001),
        })
    }

    /// Nanoseconds per tick of this counter, where known: 1 for TIMER, 1e9/tsc_hz for the
    /// TSC; None for core cycles (the core's clock is not known).
    pub fn ns_per_tick(&self) -> Option<f64> {
        match self.counter {
            Counter::Timer => Some(1.0),
            Counter::Tsc => self.tsc_hz.map(|hz| 1e9 / hz),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Mutex, MutexGuard};

    /// The active counter is process-wide HAL state, and cargo runs tests on parallel
    /// threads: a probe in one test closes and reopens the counter another test is
    /// reading. Every test that opens, probes or reads the real HAL holds this lock.
    static HAL: Mutex<()> = Mutex::new(());

    fn hal() -> MutexGuard<'static, ()> {
        // a test that panicked while holding the lock leaves the HAL closed, not broken
        HAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn only(avail: &'static [Counter]) -> impl Fn(Counter) -> Result<(), String> {
        move |c| {
            if avail.contains(&c) {
                Ok(())
            } else {
                Err(format!("{c} missing here"))
            }
        }
    }

    #[test]
    fn unset_picks_the_best_available() {
        assert_eq!(
            select_with(None, only(&[Counter::Tsc, Counter::Timer])),
            Ok(Counter::Tsc)
        );
        assert_eq!(select_with(Some(""), only(&[Counter::Timer])), Ok(Counter::Timer));
        let all = only(&[Counter::PerfCycles, Counter::PmuCycles, Counter::Tsc, Counter::Timer]);
        assert_eq!(select_with(None, all), Ok(Counter::PmuCycles));
    }

    #[test]
    fn a_forced_counter_is_used_or_refused_with_the_available_ones() {
        let vm = only(&[Counter::Tsc, Counter::Timer]);
        assert_eq!(select_with(Some("TIMER"), &vm), Ok(Counter::Timer));
        let err = select_with(Some("PERF_CYCLES"), &vm).unwrap_err();
        assert_eq!(
            err.to_string(),
            "CYCLE_COUNTER=PERF_CYCLES is not available on this machine: PERF_CYCLES missing here; \
             available: TSC, TIMER"
        );
        let err = select_with(Some("RDTSC"), &vm).unwrap_err();
        assert_eq!(
            err.to_string(),
            "CYCLE_COUNTER=RDTSC is not a cycle counter; allowed: PERF_CYCLES, PMU_CYCLES, MAC_CYCLES, TSC, TIMER"
        );
    }

    #[test]
    fn units_never_call_tsc_ticks_cycles() {
        assert_eq!(Counter::Tsc.unit(), "tsc_ticks");
        assert!(!Counter::Tsc.counts_core_cycles() && !Counter::Timer.counts_core_cycles());
        assert!(Counter::PerfCycles.counts_core_cycles() && Counter::MacCycles.counts_core_cycles());
        for c in ALL {
            assert_eq!(Counter::from_name(c.name()), Some(c));
        }
    }

    #[test]
    fn the_timer_is_always_available_and_advances() {
        let _hal = hal();
        assert_eq!(probe(Counter::Timer), Ok(()));
        open(Counter::Timer).unwrap();
        let a = read();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(read() - a >= 1_000_000);
        close();
    }

    #[test]
    fn an_unavailable_counter_says_why() {
        let _hal = hal();
        for (counter, status) in probe_all() {
            if let Err(why) = status {
                assert!(!why.is_empty(), "{counter}: empty reason");
            }
        }
        #[cfg(not(target_os = "macos"))]
        assert_eq!(probe(Counter::MacCycles), Err("kperf is macOS-only".to_string()));
    }
}
