//! Compiles the cycle-counter HAL (src/cycle_counter/hal.c) with the cc crate, as the
//! seed does, into a static library linked into the crate.

fn main() {
    println!("cargo:rerun-if-changed=src/cycle_counter/hal.c");
    println!("cargo:rerun-if-changed=src/cycle_counter/hal.h");
    cc::Build::new()
        .file("src/cycle_counter/hal.c")
        .include("src/cycle_counter")
        .opt_level(2)
        .warnings(true)
        .extra_warnings(true)
        .compile("pbk_hal");
}
