//! The seed's cycle-counter benchmark of libcrux-ml-kem:
//!
//!     cargo bench --bench ml-kem-cycle                          # the SIMD backend, every level
//!     cargo bench --bench ml-kem-cycle -- portable 512 5000
//!     CYCLE_COUNTER=PERF_CYCLES cargo bench --bench ml-kem-cycle -- avx2 768
//!
//! Arguments and output are the seed's (see `parbench_kem::seed_cli`); the counter is
//! $CYCLE_COUNTER's or the best available one, named before the results.

fn main() {
    std::process::exit(parbench_kem::seed_cli::main(std::env::args().skip(1).collect()));
}
