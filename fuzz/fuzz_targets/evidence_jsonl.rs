//! Any text as evidence JSONL, loaded with the embedded rule pack.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prooflog::Loader;
use prooflog::bundled::DEFAULT_PROGRAM;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut loader = Loader::new();
    loader.program_text(DEFAULT_PROGRAM.name, DEFAULT_PROGRAM.text);
    if loader.evidence_jsonl("fuzz.jsonl", &text).is_ok() {
        let _ = loader.load();
    }
});
