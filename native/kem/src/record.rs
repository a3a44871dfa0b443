//! The JSON records `parbench-kem` writes for the pipeline (`parbench kem-cell` reads
//! them; schema in docs/data.md under the kem study).

use crate::cycle_counter::{self, Counter, Selected};
use crate::json::Json;
use crate::measure::Checks;
use crate::stats::{median, percentiles, sorted};

pub fn counter(sel: &Selected) -> Json {
    Json::object(vec![
        ("name", Json::str(sel.counter.name())),
        ("unit", Json::str(sel.counter.unit())),
        ("describe", Json::str(sel.counter.describe())),
        ("forced", Json::Bool(sel.forced)),
        ("core_cycles", Json::Bool(sel.counter.counts_core_cycles())),
        ("tsc_hz", Json::opt_float(sel.tsc_hz)),
        ("tsc_invariant", sel.tsc_invariant.map(Json::Bool).unwrap_or(Json::Null)),
        ("ns_per_tick", Json::opt_float(sel.ns_per_tick())),
        ("read_overhead", Json::Int(sel.read_overhead as i128)),
    ])
}

/// Every counter of the HAL with its availability, and the one selected (or why none).
pub fn counters(selected: Result<&Selected, String>) -> Json {
    let list = cycle_counter::probe_all()
        .into_iter()
        .map(|(c, status)| {
            Json::object(vec![
                ("name", Json::str(c.name())),
                ("unit", Json::str(c.unit())),
                ("describe", Json::str(c.describe())),
                ("available", Json::Bool(status.is_ok())),
                ("reason", Json::opt_str(status.err())),
            ])
        })
        .collect();
    let (sel, error) = match selected {
        Ok(sel) => (counter(sel), Json::Null),
        Err(e) => (Json::Null, Json::Str(e)),
    };
    Json::object(vec![
        ("requested", Json::opt_str(std::env::var(cycle_counter::ENV).ok())),
        ("selected", sel),
        ("error", error),
        ("counters", Json::Array(list)),
        (
            "preference",
            Json::Array(
                cycle_counter::PREFERENCE
                    .iter()
                    .map(|c: &Counter| Json::str(c.name()))
                    .collect(),
            ),
        ),
        ("arch", Json::str(std::env::consts::ARCH)),
        ("os", Json::str(std::env::consts::OS)),
    ])
}

pub fn checks(c: &Checks) -> Json {
    Json::object(vec![
        ("pairs_checked", Json::Int(c.pairs_checked as i128)),
        ("secrets_mismatched", Json::Int(c.secrets_mismatched as i128)),
        ("tamper_checked", Json::Int(c.tamper_checked as i128)),
        ("tamper_accepted", Json::Int(c.tamper_accepted as i128)),
        ("errors", Json::Int(c.errors as i128)),
        ("first_error", Json::opt_str(c.first_error.clone())),
    ])
}

/// The seed's statistics of a sample: median and percentiles (null when empty).
pub fn statistics(samples: &[u64]) -> Vec<(&'static str, Json)> {
    if samples.is_empty() {
        return vec![("median", Json::Null), ("percentiles", Json::Null)];
    }
    let s = sorted(samples);
    vec![
        ("median", Json::Int(median(&s) as i128)),
        (
            "percentiles",
            Json::Object(
                percentiles(&s)
                    .into_iter()
                    .map(|(p, v)| (p.to_string(), Json::Int(v as i128)))
                    .collect(),
            ),
        ),
    ]
}

/// A library's name, version and where it was loaded from.
pub fn library(name: &str, version: &str, path: Option<&str>) -> Json {
    Json::object(vec![
        ("name", Json::str(name)),
        ("version", Json::str(version)),
        ("path", Json::opt_str(path)),
    ])
}
