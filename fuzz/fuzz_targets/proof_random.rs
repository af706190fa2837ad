//! Random programs (built from the input bytes: facts, recursive rules, negation,
//! comparisons, arithmetic, aggregates, confidences), evaluated under small limits;
//! then every relation's first matches are proved, rendered in every format, and the
//! rendered context is checked by the firewall against the proofs' tags.
//! The body is `fuzz/targets.rs`'s `proof_random`, which `cargo test` runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../targets.rs"]
mod targets;

fuzz_target!(|data: &[u8]| targets::proof_random(data));
