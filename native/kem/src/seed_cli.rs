//! The seed's cycle benchmark as a command line, shared by `benches/ml-kem-cycle.rs`
//! (`cargo bench --bench ml-kem-cycle -- portable 512 5000`) and `parbench-kem seed`:
//!
//! ```text
//! [portable|avx2|neon] [512|768|1024] [iterations]
//! ```
//!
//! Defaults as in the seed: the SIMD backend of the build's architecture (avx2 on
//! x86_64, neon on aarch64), every level, 1000 iterations. Arguments that start with
//! `--` or name the bench are cargo's and are skipped, as the seed does. The counter is
//! $CYCLE_COUNTER's, or the best available one. Output: the seed's preamble and one
//! `ML-KEM-<level> Benchmark Results` block per level (`seed_format`), the counter and
//! its unit named before the blocks. Every call's result is checked (`measure`); a
//! failed check is reported and makes the exit status 1.

use crate::cycle_counter::{self, Selected};
use crate::implementation::{level_from_arg, seed_default_arch, Implementation};
use crate::kem::{Level, LEVELS};
use crate::measure::{check_broken_for, kem_cycles, Operation};
use crate::seed_format::{block, preamble, OpSample};
use crate::stats::sorted;

/// The seed's default number of iterations.
pub const DEFAULT_ITERATIONS: usize = 1000;

/// One line naming the counter and its unit.
pub fn counter_line(sel: &Selected) -> String {
    let how = if sel.forced {
        "forced by CYCLE_COUNTER"
    } else {
        "best available"
    };
    let rate = match (sel.counter, sel.tsc_hz) {
        (cycle_counter::Counter::Tsc, Some(hz)) => format!(", {:.3} GHz", hz / 1e9),
        _ => String::new(),
    };
    format!(
        "Cycle counter: {} ({how}): values are {}{rate}",
        sel.counter,
        sel.counter.describe()
    )
}

/// Measure keypair, encaps and decaps of `imp` at `level`; the block, or the failure.
pub fn level_block(imp: Implementation, level: Level, iterations: usize) -> Result<String, String> {
    let broken = check_broken_for(imp.name());
    let measured = crate::with_kem!(imp, level, None::<&crate::liboqs::Liboqs>, |make| {
        (|| {
            let mut kem = make()?;
            let mut out = Vec::new();
            for op in [Operation::Keypair, Operation::Encaps, Operation::Decaps] {
                let (samples, checks) = kem_cycles(&mut kem, op, iterations, cycle_counter::read, broken);
                if let Some(failure) = checks.failure() {
                    return Err(format!("{} {level} {}: check failed: {failure}", imp.name(), op.name()));
                }
                out.push((op, sorted(&samples)));
            }
            Ok::<_, String>(out)
        })()
    })??;
    let ops: Vec<OpSample> = measured
        .iter()
        .map(|(op, s)| OpSample {
            operation: op.name(),
            sorted: s,
        })
        .collect();
    Ok(block(&level.name(), &ops))
}

/// Parse the seed's arguments: (implementation, levels, iterations).
pub fn parse(args: &[String]) -> Result<(Implementation, Vec<Level>, usize), String> {
    let args: Vec<&String> = args
        .iter()
        .filter(|a| !a.starts_with("--") && !a.contains("ml-kem-cycle"))
        .collect();
    let arch = args.first().map(|s| s.as_str()).unwrap_or(seed_default_arch());
    let imp = Implementation::from_seed_arch(arch)
        .ok_or_else(|| format!("Unsupported architecture: {arch}; allowed: portable, avx2, neon"))?;
    let levels = match args.get(1) {
        Some(s) => vec![level_from_arg(s)?],
        None => LEVELS.to_vec(),
    };
    let iterations = match args.get(2) {
        Some(s) => s
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("invalid iteration count {s:?}; allowed: an integer >= 1"))?,
        None => DEFAULT_ITERATIONS,
    };
    Ok((imp, levels, iterations))
}

/// The whole command; returns the exit status.
pub fn main(args: Vec<String>) -> i32 {
    let (imp, levels, iterations) = match parse(&args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("Error: {e}");
            return 2;
        }
    };
    if let Err(why) = imp.cpu_support() {
        eprintln!("Error: {} cannot run here: {why}", imp.name());
        return 2;
    }
    let sel = match Selected::from_env() {
        Ok(sel) => sel,
        Err(e) => {
            eprintln!("Error: {e}");
            return 2;
        }
    };
    let arch = imp.name().trim_start_matches("libcrux-");
    print!("{}", preamble(arch, iterations, &counter_line(&sel)));
    println!();
    let mut status = 0;
    for level in levels {
        match level_block(imp, level, iterations) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("Error: {e}");
                status = 1;
            }
        }
    }
    cycle_counter::close();
    status
}
