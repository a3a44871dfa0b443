//! parbench-kem: ML-KEM cycle counts and thread scaling for the kem study of parbench.
//!
//! - `cycle_counter`: the counters (C HAL in `src/cycle_counter/`) and which one to use;
//! - `kem`, `liboqs`, `x25519`, `implementation`: what is measured;
//! - `measure`, `throughput`: the seed's loops with their checks, and the thread sweep;
//! - `stats`, `seed_format`: the seed's statistics and output block;
//! - `seed_cli`: the seed's command line (`benches/ml-kem-cycle.rs`, `parbench-kem seed`);
//! - `record`: the JSON records the pipeline reads; `json`, `dl`: helpers.

pub mod cycle_counter;
pub mod dl;
pub mod implementation;
pub mod json;
pub mod kem;
pub mod liboqs;
pub mod measure;
pub mod record;
pub mod seed_cli;
pub mod seed_format;
pub mod stats;
pub mod throughput;
pub mod x25519;

/// The version of libcrux-ml-kem this crate pins (Cargo.toml, Cargo.lock).
pub const LIBCRUX_ML_KEM_VERSION: &str = "0.0.11";
