//! Random programs (built from the input bytes: facts, recursive rules, negation,
//! comparisons, arithmetic, aggregates, confidences), evaluated under small limits;
//! then every relation's first matches are proved, rendered in every format, and the
//! rendered context is checked by the firewall against the proofs' tags.
#![no_main]

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use prooflog::answer::firewall::CheckOptions;
use prooflog::proof::render;
use prooflog::{Budget, EvalOptions, HallucinationFirewall, Program, ProofOptions, prove_all};

#[path = "../gen/program.rs"]
mod generator;

use generator::{RELS, VARS};

fuzz_target!(|data: &[u8]| {
    let text = generator::program(data);
    let Ok(program) = Program::from_source("fuzz.dl", &text) else {
        return;
    };
    let budget = Budget {
        max_facts: Some(50_000),
        timeout: Some(Duration::from_millis(500)),
        max_memory: Some(64 << 20),
        ..Budget::default()
    };
    let Ok(base) = prooflog::evaluate(
        Arc::new(program),
        &[],
        &EvalOptions::default().with_budget(budget),
    ) else {
        return;
    };
    let options = ProofOptions::new("fuzz");
    for (name, arity) in RELS {
        let goal = format!("{name}({})", VARS[..arity].join(", "));
        let Ok(pattern) = prooflog::syntax::parse_goal(&goal) else {
            continue;
        };
        let Ok(trees) = prove_all(&pattern, &base, &options, Some(3)) else {
            continue;
        };
        for tree in &trees {
            assert!(tree.is_proved(), "a match has a proof: {goal} in\n{text}");
            let context = render::context(tree);
            let _ = render::text(tree);
            let _ = render::dot(tree);
            let _ = tree.to_json_pretty();
            let allowed: HashSet<String> = tree.evidence_tags().into_iter().collect();
            let _ = HallucinationFirewall::new().check(
                &context,
                &allowed,
                &CheckOptions::new().require_proof(true),
            );
        }
        let _ = render::html(&trees);
    }
});
