//! Any text as a rule pack: parse, check, and (when it compiles) evaluate under small
//! limits. Every outcome is a result or a diagnostic; nothing panics or overflows.
//! The body is `fuzz/targets.rs`'s `parse_program`, which `cargo test` runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../targets.rs"]
mod targets;

fuzz_target!(|data: &[u8]| targets::parse_program(data));
