//! Any text as evidence JSONL, loaded with the embedded rule pack.
//! The body is `fuzz/targets.rs`'s `evidence_jsonl`, which `cargo test` runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../targets.rs"]
mod targets;

fuzz_target!(|data: &[u8]| targets::evidence_jsonl(data));
