//! Any text as a CSV, TSV or `.facts` file (the first byte picks the dialect), typed
//! against a program that reads it.
//! The body is `fuzz/targets.rs`'s `facts_delimited`, which `cargo test` runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../targets.rs"]
mod targets;

fuzz_target!(|data: &[u8]| targets::facts_delimited(data));
