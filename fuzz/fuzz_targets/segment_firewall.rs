//! Any text as an LLM answer: segmented, then checked by the firewall (tags only, and
//! with content verification against a few cited facts).
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use prooflog::answer::firewall::CheckOptions;
use prooflog::answer::segment::segment;
use prooflog::{CitedFact, HallucinationFirewall, TagResolver, Value};

struct Facts;

impl TagResolver for Facts {
    fn resolve(&self, tag: &str) -> Vec<CitedFact> {
        match tag {
            "HEDGE-42" => vec![CitedFact::new(
                tag,
                "member",
                vec![Value::Number(42), Value::Number(7)],
                "drone 7 is a member of group 42",
            )],
            "STEP-1" => vec![
                CitedFact::new(
                    tag,
                    "threatens",
                    vec![Value::Number(42), Value::Symbol("airport".into())],
                    "group 42 threatens zone airport",
                )
                .with_functional_key(Some(vec![0])),
            ],
            "STEP-2" => vec![
                CitedFact::new(tag, "hostile", vec![Value::Number(7)], "drone 7 is hostile")
                    .negated(),
            ],
            _ => Vec::new(),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let answer = String::from_utf8_lossy(data);
    let _ = segment(&answer);
    let allowed: HashSet<String> = ["HEDGE-42", "STEP-1", "STEP-2", "RULE-0"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let plain = HallucinationFirewall::new().check(&answer, &allowed, &CheckOptions::new());
    let _ = plain.as_dict();
    let verified = HallucinationFirewall::new()
        .with_gate_verification(&Facts)
        .check(&answer, &allowed, &CheckOptions::new().require_proof(true));
    let _ = verified.as_dict();
});
