//! `parbench-kem`: what the kem study's pipeline runs (`parbench kem-cell` and friends).
//!
//!     parbench-kem counters [--json PATH]
//!     parbench-kem cycles --implementation IMPL --level LEVEL --operation OP
//!                         --iterations N [--liboqs DIR] --json PATH
//!     parbench-kem throughput --implementation IMPL --level LEVEL --operation OP
//!                         --threads N --warmup-sec S --duration-sec S [--cpus 0,1,...]
//!                         [--liboqs DIR] --json PATH
//!     parbench-kem harness --implementation IMPL --level LEVEL --iterations N
//!                         --blocks B [--liboqs DIR] --json PATH
//!     parbench-kem seed [portable|avx2|neon] [512|768|1024] [ITERATIONS]
//!
//! IMPL: libcrux-portable, libcrux-avx2, libcrux-neon, liboqs, x25519; LEVEL: 512, 768,
//! 1024 (x25519: any, ignored); OP: keypair, encaps, decaps (x25519: keypair, derive).
//! The counter is $CYCLE_COUNTER's or the best available one.
//!
//! Exit status: 0 when a record was written (its status says ok, failed or
//! unavailable), 2 for bad arguments, 4 when the counter cannot be selected (the
//! message names the available ones).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use parbench_kem::cycle_counter::{self, Selected};
use parbench_kem::implementation::{level_from_arg, Implementation};
use parbench_kem::json::Json;
use parbench_kem::kem::Level;
use parbench_kem::liboqs::Liboqs;
use parbench_kem::measure::{bare_encaps, check_broken_for, kem_cycles, x25519_cycles, Checks, Operation};
use parbench_kem::record;
use parbench_kem::x25519::OpenSsl;
use parbench_kem::{seed_cli, stats, throughput, with_kem, LIBCRUX_ML_KEM_VERSION};

const USAGE: &str = "usage: parbench-kem counters|cycles|throughput|harness|seed [options] (see the source's header)";

enum Fail {
    Usage(String),
    Counter(String),
}

type Args = HashMap<String, String>;

fn parse_options(args: &[String], allowed: &[&str]) -> Result<Args, Fail> {
    let mut out = HashMap::new();
    let mut it = args.iter();
    while let Some(key) = it.next() {
        let name = key
            .strip_prefix("--")
            .filter(|n| allowed.contains(n))
            .ok_or_else(|| Fail::Usage(format!("unknown argument {key:?}; allowed: --{}", allowed.join(", --"))))?;
        let value = it.next().ok_or_else(|| Fail::Usage(format!("{key} needs a value")))?;
        out.insert(name.to_string(), value.clone());
    }
    Ok(out)
}

fn required<'a>(args: &'a Args, key: &str) -> Result<&'a str, Fail> {
    args.get(key)
        .map(String::as_str)
        .ok_or_else(|| Fail::Usage(format!("--{key} is required")))
}

fn number<T>(args: &Args, key: &str, min: T) -> Result<T, Fail>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    let raw = required(args, key)?;
    match raw.parse::<T>() {
        Ok(v) if v >= min => Ok(v),
        _ => Err(Fail::Usage(format!(
            "--{key} {raw:?} is invalid; allowed: a number >= {min}"
        ))),
    }
}

fn implementation(args: &Args) -> Result<Implementation, Fail> {
    let raw = required(args, "implementation")?;
    Implementation::from_name(raw).ok_or_else(|| {
        Fail::Usage(format!(
            "unknown implementation {raw:?}; allowed: {}",
            parbench_kem::implementation::ALL
                .iter()
                .map(|i| i.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

fn operation(args: &Args, imp: Implementation) -> Result<Operation, Fail> {
    let raw = required(args, "operation")?;
    let allowed: &[&str] = if imp.is_ml_kem() {
        &["keypair", "encaps", "decaps"]
    } else {
        &["keypair", "derive"]
    };
    Operation::from_name(raw)
        .filter(|op| allowed.contains(&op.name()))
        .ok_or_else(|| {
            Fail::Usage(format!(
                "operation {raw:?} is not one of {}: {}",
                imp.name(),
                allowed.join(", ")
            ))
        })
}

fn level(args: &Args) -> Result<Level, Fail> {
    level_from_arg(required(args, "level")?).map_err(Fail::Usage)
}

fn selected_counter() -> Result<Selected, Fail> {
    Selected::from_env().map_err(Fail::Counter)
}

fn write_json(args: &Args, doc: &Json) -> Result<(), Fail> {
    let text = doc.render() + "\n";
    match args.get("json").map(String::as_str) {
        None | Some("-") => print!("{text}"),
        Some(path) => {
            // the pipeline writes records atomically itself; this file is its input
            std::fs::write(path, text).map_err(|e| Fail::Usage(format!("cannot write {path}: {e}")))?
        }
    }
    Ok(())
}

fn load_liboqs(args: &Args, imp: Implementation) -> Result<Option<Liboqs>, String> {
    if imp != Implementation::Liboqs {
        return Ok(None);
    }
    let dir = args
        .get("liboqs")
        .ok_or("the liboqs implementation needs --liboqs DIR (the pipeline's liboqs build)")?;
    Liboqs::load(&PathBuf::from(dir)).map(Some)
}

fn library_of(imp: Implementation, oqs: Option<&Liboqs>, ssl: Option<&OpenSsl>) -> Json {
    match imp {
        Implementation::Liboqs => oqs
            .map(|l| record::library("liboqs", &l.version, Some(&l.path)))
            .unwrap_or(Json::Null),
        Implementation::X25519 => ssl
            .map(|s| record::library("OpenSSL", &s.version, Some(&s.path)))
            .unwrap_or(Json::Null),
        _ => record::library("libcrux-ml-kem", LIBCRUX_ML_KEM_VERSION, None),
    }
}

/// The status of a cell: unavailable (with the reason), failed (with what failed), or ok.
fn status(result: &Result<Checks, String>, unavailable: bool) -> (&'static str, Json) {
    match result {
        Err(why) if unavailable => ("unavailable", Json::str(why.clone())),
        Err(why) => ("failed", Json::str(why.clone())),
        Ok(checks) => match checks.failure() {
            Some(f) => ("failed", Json::str(f)),
            None => ("ok", Json::Null),
        },
    }
}

fn parameter_set(imp: Implementation, level: Level) -> (Json, String) {
    if imp.is_ml_kem() {
        (Json::Int(level.number() as i128), level.name())
    } else {
        (Json::Null, "X25519".to_string())
    }
}

fn cmd_counters(args: &[String]) -> Result<(), Fail> {
    let args = parse_options(args, &["json"])?;
    let sel = Selected::from_env();
    write_json(&args, &record::counters(sel.as_ref().map_err(String::clone)))?;
    cycle_counter::close();
    sel.map(|_| ()).map_err(Fail::Counter)
}

fn cmd_cycles(args: &[String]) -> Result<(), Fail> {
    let args = parse_options(
        args,
        &["implementation", "level", "operation", "iterations", "liboqs", "json"],
    )?;
    let imp = implementation(&args)?;
    let op = operation(&args, imp)?;
    let level = if imp.is_ml_kem() {
        level(&args)?
    } else {
        Level::MlKem512
    };
    let iterations: usize = number(&args, "iterations", 1)?;
    let sel = selected_counter()?;
    let broken = check_broken_for(imp.name());
    let started = Instant::now();
    let oqs = load_liboqs(&args, imp);
    let ssl = (imp == Implementation::X25519).then(OpenSsl::load);
    let mut samples = Vec::new();
    // (result, whether an error means "cannot run here")
    let (result, unavailable) = match (imp, &oqs, &ssl) {
        (_, Err(e), _) => (Err(e.clone()), true),
        (Implementation::X25519, _, Some(Err(e))) => (Err(e.clone()), true),
        (Implementation::X25519, _, Some(Ok(ssl))) => {
            match x25519_cycles(ssl, op, iterations, cycle_counter::read, broken) {
                Ok((s, checks)) => {
                    samples = s;
                    (Ok(checks), false)
                }
                Err(e) => (Err(e), false),
            }
        }
        (_, Ok(oqs), _) => match with_kem!(imp, level, oqs.as_ref(), |make| {
            make().map(|mut kem| kem_cycles(&mut kem, op, iterations, cycle_counter::read, broken))
        }) {
            Err(why) => (Err(why), true),
            Ok(Err(e)) => (Err(e), false),
            Ok(Ok((s, checks))) => {
                samples = s;
                (Ok(checks), false)
            }
        },
    };
    let elapsed = started.elapsed().as_secs_f64();
    let (status, failure) = status(&result, unavailable);
    let (level_json, set) = parameter_set(imp, level);
    let mut doc = vec![
        ("kind", Json::str("cycles")),
        ("implementation", Json::str(imp.name())),
        ("level", level_json),
        ("parameter_set", Json::str(set.clone())),
        ("operation", Json::str(op.name())),
        ("iterations", Json::Int(iterations as i128)),
        ("status", Json::str(status)),
        ("failure", failure),
        ("counter", record::counter(&sel)),
        (
            "library",
            library_of(
                imp,
                oqs.as_ref().ok().and_then(Option::as_ref),
                ssl.as_ref().and_then(|s| s.as_ref().ok()),
            ),
        ),
        ("checks", result.as_ref().map(record::checks).unwrap_or(Json::Null)),
        ("elapsed_sec", Json::Float(elapsed)),
    ];
    doc.extend(record::statistics(&samples));
    doc.push(("samples", Json::uints(&samples)));
    write_json(&args, &Json::object(doc))?;
    cycle_counter::close();
    let median = if samples.is_empty() {
        "n/a".to_string()
    } else {
        stats::median(&stats::sorted(&samples)).to_string()
    };
    eprintln!(
        "{} {set} {}: {status}, median {median} {} over {} samples",
        imp.name(),
        op.name(),
        sel.counter.unit(),
        samples.len()
    );
    Ok(())
}

fn cmd_throughput(args: &[String]) -> Result<(), Fail> {
    let args = parse_options(
        args,
        &[
            "implementation",
            "level",
            "operation",
            "threads",
            "warmup-sec",
            "duration-sec",
            "cpus",
            "liboqs",
            "json",
        ],
    )?;
    let imp = implementation(&args)?;
    if !imp.is_ml_kem() {
        return Err(Fail::Usage(format!(
            "the thread sweep measures ML-KEM implementations, not {}",
            imp.name()
        )));
    }
    let op = operation(&args, imp)?;
    if op == Operation::Keypair {
        return Err(Fail::Usage(
            "the thread sweep measures encaps and decaps, not keypair".into(),
        ));
    }
    let level = level(&args)?;
    let threads: usize = number(&args, "threads", 1)?;
    let warmup: f64 = number(&args, "warmup-sec", 0.0)?;
    let window: f64 = number(&args, "duration-sec", 0.001)?;
    let cpus: Vec<usize> = match args.get("cpus").map(String::as_str) {
        None | Some("") => Vec::new(),
        Some(list) => list
            .split(',')
            .map(|c| {
                c.trim()
                    .parse::<usize>()
                    .map_err(|_| Fail::Usage(format!("--cpus {list:?}: not a list of CPU numbers")))
            })
            .collect::<Result<_, _>>()?,
    };
    let broken = check_broken_for(imp.name());
    let oqs = load_liboqs(&args, imp);
    let (warmup, window) = (Duration::from_secs_f64(warmup), Duration::from_secs_f64(window));
    let (measured, unavailable) = match &oqs {
        Err(e) => (Err(e.clone()), true),
        Ok(oqs) => match with_kem!(imp, level, oqs.as_ref(), |make| throughput::run(
            make, op, threads, warmup, window, &cpus, broken
        )) {
            Err(why) => (Err(why), true),
            Ok(r) => (r, false),
        },
    };
    let mut merged = Checks::default();
    let per_thread: Vec<Json> = measured
        .as_ref()
        .map(|results| {
            results
                .iter()
                .map(|r| {
                    merged.pairs_checked += r.checks.pairs_checked;
                    merged.secrets_mismatched += r.checks.secrets_mismatched;
                    merged.tamper_checked += r.checks.tamper_checked;
                    merged.tamper_accepted += r.checks.tamper_accepted;
                    merged.errors += r.checks.errors;
                    if merged.first_error.is_none() {
                        merged.first_error = r.checks.first_error.clone();
                    }
                    Json::object(vec![
                        ("thread", Json::Int(r.thread as i128)),
                        ("cpu", r.cpu.map(|c| Json::Int(c as i128)).unwrap_or(Json::Null)),
                        ("pin_error", Json::opt_str(r.pin_error.clone())),
                        ("ops_in_window", Json::Int(r.ops_in_window as i128)),
                        ("ops_total", Json::Int(r.ops_total as i128)),
                        ("window_sec", Json::Float(r.window_sec)),
                        ("checks", record::checks(&r.checks)),
                    ])
                })
                .collect()
        })
        .unwrap_or_default();
    let result = measured.map(|_| merged);
    let (status, failure) = status(&result, unavailable);
    let ssl = None;
    let doc = Json::object(vec![
        ("kind", Json::str("throughput")),
        ("implementation", Json::str(imp.name())),
        ("level", Json::Int(level.number() as i128)),
        ("parameter_set", Json::str(level.name())),
        ("operation", Json::str(op.name())),
        ("threads", Json::Int(threads as i128)),
        ("warmup_sec", Json::Float(warmup.as_secs_f64())),
        ("duration_sec", Json::Float(window.as_secs_f64())),
        ("clock", Json::str("CLOCK_MONOTONIC")),
        ("status", Json::str(status)),
        ("failure", failure),
        (
            "library",
            library_of(imp, oqs.as_ref().ok().and_then(Option::as_ref), ssl),
        ),
        ("checks", result.as_ref().map(record::checks).unwrap_or(Json::Null)),
        ("per_thread", Json::Array(per_thread)),
    ]);
    write_json(&args, &doc)?;
    eprintln!("{} {level} {} t{threads}: {status}", imp.name(), op.name());
    Ok(())
}

fn cmd_harness(args: &[String]) -> Result<(), Fail> {
    let args = parse_options(
        args,
        &["implementation", "level", "iterations", "blocks", "liboqs", "json"],
    )?;
    let imp = implementation(&args)?;
    if !imp.is_ml_kem() {
        return Err(Fail::Usage("the harness comparison measures an ML-KEM's encaps".into()));
    }
    let level = level(&args)?;
    let iterations: usize = number(&args, "iterations", 1)?;
    let blocks: usize = number(&args, "blocks", 1)?;
    let sel = selected_counter()?;
    let oqs = load_liboqs(&args, imp).map_err(Fail::Usage)?;
    let per_block = iterations.div_ceil(blocks);
    // blocks of the two loops alternate, so that a drift of the machine's speed during
    // the run weighs on both sides alike
    let measured = with_kem!(imp, level, oqs.as_ref(), |make| {
        make().map(|mut kem| {
            let (mut bench, mut bare, mut checks) = (Vec::new(), Vec::new(), Checks::default());
            for _ in 0..blocks {
                let (s, c) = kem_cycles(&mut kem, Operation::Encaps, per_block, cycle_counter::read, false);
                bench.extend(s);
                checks.pairs_checked += c.pairs_checked;
                checks.secrets_mismatched += c.secrets_mismatched;
                checks.tamper_accepted += c.tamper_accepted;
                checks.tamper_checked += c.tamper_checked;
                bare.extend(bare_encaps(&mut kem, per_block, cycle_counter::read));
            }
            (bench, bare, checks)
        })
    })
    .map_err(Fail::Usage)?
    .map_err(Fail::Usage)?;
    let (bench, bare, checks) = measured;
    let (bm, am) = (
        stats::median(&stats::sorted(&bench)),
        stats::median(&stats::sorted(&bare)),
    );
    let doc = Json::object(vec![
        ("implementation", Json::str(imp.name())),
        ("level", Json::Int(level.number() as i128)),
        ("operation", Json::str("encaps")),
        ("iterations_per_side", Json::Int(bench.len() as i128)),
        ("blocks", Json::Int(blocks as i128)),
        ("counter", record::counter(&sel)),
        ("bench_median", Json::Int(bm as i128)),
        ("bare_median", Json::Int(am as i128)),
        ("ratio", Json::Float(bm as f64 / am as f64)),
        ("checks", record::checks(&checks)),
        ("bench_samples", Json::uints(&bench)),
        ("bare_samples", Json::uints(&bare)),
    ]);
    write_json(&args, &doc)?;
    cycle_counter::close();
    Ok(())
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = argv.first() else {
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    let rest = &argv[1..];
    let result = match command.as_str() {
        "counters" => cmd_counters(rest),
        "cycles" => cmd_cycles(rest),
        "throughput" => cmd_throughput(rest),
        "harness" => cmd_harness(rest),
        "seed" => std::process::exit(seed_cli::main(rest.to_vec())),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(Fail::Usage(format!(
            "unknown command {other:?}; allowed: counters, cycles, throughput, harness, seed"
        ))),
    };
    match result {
        Ok(()) => {}
        Err(Fail::Usage(msg)) => {
            eprintln!("parbench-kem: {msg}");
            std::process::exit(2);
        }
        Err(Fail::Counter(msg)) => {
            eprintln!("parbench-kem: {msg}");
            std::process::exit(4);
        }
    }
}
