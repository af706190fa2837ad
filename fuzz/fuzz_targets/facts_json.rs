//! Any text as a JSON fact file, loaded against a program that reads two relations
//! (one declared, one typed by the data).
//! The body is `fuzz/targets.rs`'s `facts_json`, which `cargo test` runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../targets.rs"]
mod targets;

fuzz_target!(|data: &[u8]| targets::facts_json(data));
