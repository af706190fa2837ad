//! Any text as an answer and passages (split at NUL bytes: the first part is the
//! answer) through the faithfulness gate.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prooflog::Gate;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\0');
    let answer = parts.next().unwrap_or("");
    let passages: Vec<&str> = parts.take(8).collect();
    let _ = Gate::check(answer, &passages);
});
