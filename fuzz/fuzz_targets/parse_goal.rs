//! Any text as a `--goal`: a goal or a parse error.
//! The body is `fuzz/targets.rs`'s `parse_goal`, which `cargo test` runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../targets.rs"]
mod targets;

fuzz_target!(|data: &[u8]| targets::parse_goal(data));
