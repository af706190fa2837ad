//! Any text as a rule pack: parse, check, and (when it compiles) evaluate under small
//! limits. Every outcome is a result or a diagnostic; nothing panics or overflows.
#![no_main]

use std::sync::Arc;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use prooflog::{Budget, EvalOptions, Program};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(program) = Program::from_source("fuzz.dl", &text) else {
        return;
    };
    let budget = Budget {
        max_facts: Some(20_000),
        max_rounds: Some(200),
        timeout: Some(Duration::from_millis(500)),
        max_memory: Some(64 << 20),
        ..Budget::unlimited()
    };
    let options = EvalOptions::default().with_budget(budget);
    if let Ok(base) = prooflog::evaluate(Arc::new(program), &[], &options) {
        for rel in 0..base.program().relations().len() as u32 {
            for fact in base.facts(rel).take(3) {
                let _ = base.fact_text(fact);
                let _ = base.derivation(fact);
            }
        }
    }
});
