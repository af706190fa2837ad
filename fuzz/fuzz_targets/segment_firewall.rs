//! Any text as an LLM answer: segmented, then checked by the firewall (tags only, and
//! with content verification against a few cited facts).
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use prooflog::answer::segment::segment;
use prooflog::{CitedFact, HallucinationFirewall, TagResolver, Value};

struct Facts;

impl TagResolver for Facts {
    fn resolve(&self, tag: &str) -> Vec<CitedFact> {
        match tag {
            "HEDGE-42" => vec![CitedFact {
                tag: tag.into(),
                predicate: "member".into(),
                args: vec![Value::Number(42), Value::Number(7)],
                text: "drone 7 is a member of group 42".into(),
                functional_key: None,
            }],
            "STEP-1" => vec![CitedFact {
                tag: tag.into(),
                predicate: "threatens".into(),
                args: vec![Value::Number(42), Value::Symbol("airport".into())],
                text: "group 42 threatens zone airport".into(),
                functional_key: Some(vec![0]),
            }],
            _ => Vec::new(),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let answer = String::from_utf8_lossy(data);
    let _ = segment(&answer);
    let allowed: HashSet<String> = ["HEDGE-42", "STEP-1", "RULE-0"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let plain = HallucinationFirewall::new().check(&answer, &allowed, true, false);
    let _ = plain.as_dict();
    let verified = HallucinationFirewall::new()
        .with_gate_verification(&Facts)
        .check(&answer, &allowed, true, true);
    let _ = verified.as_dict();
});
