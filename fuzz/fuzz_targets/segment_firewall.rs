//! Any text as an LLM answer: segmented, then checked by the firewall (tags only, and
//! with content verification against a few cited facts).
//! The body is `fuzz/targets.rs`'s `segment_firewall`, which `cargo test` runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../targets.rs"]
mod targets;

fuzz_target!(|data: &[u8]| targets::segment_firewall(data));
