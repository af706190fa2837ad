//! Any text as an answer and passages (split at NUL bytes: the first part is the
//! answer) through the faithfulness gate.
//! The body is `fuzz/targets.rs`'s `gate`, which `cargo test` runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../targets.rs"]
mod targets;

fuzz_target!(|data: &[u8]| targets::gate(data));
