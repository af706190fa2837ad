//! Gate fixtures: adversarial answers and faithful controls across domains.
//!
//! Computes attack rejection and false-rejection rates for the original token-set
//! predicate (v1), the gate, and the two ablations of the gate's design (ordered
//! containment without the polarity guard; contiguity only, no gaps), which are
//! written here from the public tokenizer and aligner so that the gate itself has no
//! knob for them.

mod support;

use std::collections::BTreeMap;

use prooflog::answer::gate::{
    Gate, Verdict, align, claim_tokens, is_supported, is_supported_v1, is_supported_v2,
};
use prooflog::answer::segment::segment;
use serde::Deserialize;

#[derive(Deserialize)]
struct DomainFile {
    domain: String,
    passages: Vec<String>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    id: String,
    kind: String,
    shape: String,
    passage: usize,
    answer: String,
    /// `"reject"`: a seed control that the current gate rejects on purpose.
    #[serde(default)]
    gate: Option<String>,
}

struct Fixture {
    domain: String,
    id: String,
    kind: String,
    shape: String,
    passage: String,
    answer: String,
    gate_rejects: bool,
}

fn load() -> Vec<Fixture> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/gate");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("fixture dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let raw = std::fs::read_to_string(&path).expect("fixture readable");
        let file: DomainFile = serde_json::from_str(&raw).expect("fixture JSON");
        for case in file.cases {
            out.push(Fixture {
                domain: file.domain.clone(),
                id: case.id,
                kind: case.kind,
                shape: case.shape,
                passage: file.passages[case.passage].clone(),
                answer: case.answer,
                gate_rejects: case.gate.as_deref() == Some("reject"),
            });
        }
    }
    out
}

type Predicate = fn(&str, &str) -> bool;

fn v1(claim: &str, passage: &str) -> bool {
    is_supported_v1(claim, passage)
}

fn v2(claim: &str, passage: &str) -> bool {
    is_supported_v2(claim, passage).is_supported()
}

/// Ablation: ordered, gap-bounded containment without the polarity guard.
fn ordered_no_polarity(claim: &str, passage: &str) -> bool {
    let c = claim_tokens(claim);
    !c.is_empty() && align(&c, &prooflog::answer::gate::tokenize(passage)).is_some()
}

/// Ablation: the claim's tokens must be a contiguous run of the passage's (no gaps).
fn contiguous_only(claim: &str, passage: &str) -> bool {
    let c = claim_tokens(claim);
    let p = prooflog::answer::gate::tokenize(passage);
    !c.is_empty() && p.windows(c.len()).any(|w| w == c.as_slice())
}

/// An answer is accepted when every one of its claims is.
fn accepts(pred: Predicate, answer: &str, passage: &str) -> bool {
    segment(answer).iter().all(|s| pred(&s.text, passage))
}

#[test]
fn fixture_set_has_the_required_shape() {
    let fx = load();
    let attacks: Vec<_> = fx.iter().filter(|f| f.kind == "attack").collect();
    let controls: Vec<_> = fx.iter().filter(|f| f.kind == "control").collect();
    let domains: std::collections::BTreeSet<_> =
        attacks.iter().map(|f| f.domain.as_str()).collect();
    assert!(attacks.len() >= 12, "{} attacks", attacks.len());
    assert!(domains.len() >= 5, "{domains:?}");
    assert!(controls.len() >= 30, "{} controls", controls.len());
    for shape in [
        "role_inversion",
        "negation_deletion",
        "negation_deletion_one_of_two",
        "value_swap",
        "comparator_inversion",
    ] {
        assert!(
            attacks.iter().any(|f| f.shape == shape),
            "no {shape} attack"
        );
    }
    for shape in ["verbatim", "sub_span", "noise", "compression"] {
        assert!(
            controls.iter().any(|f| f.shape == shape),
            "no {shape} control"
        );
    }
    let ids: std::collections::BTreeSet<_> = fx.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids.len(), fx.len(), "fixture ids are unique");
}

#[test]
fn gate_rejects_every_attack_at_zero_false_rejection() {
    let fx = load();
    let attacks: Vec<&Fixture> = fx.iter().filter(|f| f.kind == "attack").collect();
    let controls: Vec<&Fixture> = fx.iter().filter(|f| f.kind == "control").collect();
    let variants: [(&str, Predicate); 5] = [
        ("v1 token-set containment", v1),
        ("gate (v2)", v2),
        ("gate (current)", v3),
        ("ablation: ordered, no polarity guard", ordered_no_polarity),
        ("ablation: contiguity only", contiguous_only),
    ];
    println!(
        "gate fixtures: {} attacks, {} controls",
        attacks.len(),
        controls.len()
    );
    let mut figures = BTreeMap::new();
    for (name, pred) in variants {
        let rejected: Vec<&&Fixture> = attacks
            .iter()
            .filter(|f| !accepts(pred, &f.answer, &f.passage))
            .collect();
        let false_rej: Vec<&&Fixture> = controls
            .iter()
            .filter(|f| !accepts(pred, &f.answer, &f.passage))
            .collect();
        let mut by_shape: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for f in &attacks {
            let e = by_shape.entry(f.shape.as_str()).or_default();
            e.1 += 1;
            if rejected.iter().any(|r| r.id == f.id) {
                e.0 += 1;
            }
        }
        println!(
            "{name:40} attacks rejected {:2}/{} = {:5.1}%   false rejection {:2}/{} = {:5.1}%",
            rejected.len(),
            attacks.len(),
            100.0 * rejected.len() as f64 / attacks.len() as f64,
            false_rej.len(),
            controls.len(),
            100.0 * false_rej.len() as f64 / controls.len() as f64
        );
        println!("    rejected by attack shape: {by_shape:?}");
        if !false_rej.is_empty() {
            let ids: Vec<String> = false_rej
                .iter()
                .map(|f| format!("{} ({})", f.id, f.shape))
                .collect();
            println!("    falsely rejected: {}", ids.join(", "));
        }
        figures.insert(name, (rejected.len(), false_rej.len()));
    }
    for f in fx.iter().filter(|f| f.kind == "limitation") {
        println!(
            "known limitation {} ({}): gate accepts = {}",
            f.id,
            f.shape,
            accepts(v2, &f.answer, &f.passage)
        );
    }

    let (rej, fr) = figures["gate (current)"];
    assert_eq!(
        rej,
        attacks.len(),
        "the current gate must reject every attack"
    );
    let on_purpose = controls.iter().filter(|f| f.gate_rejects).count();
    assert_eq!(
        fr, on_purpose,
        "only the controls marked `gate: reject` are rejected"
    );
    let (rej, fr) = figures["gate (v2)"];
    assert_eq!(rej, attacks.len(), "the gate must reject every attack");
    assert_eq!(fr, 0, "the gate must not reject a faithful control");
    // The measured weakness that motivated the gate: v1 accepts attacks.
    let (v1_rej, _) = figures["v1 token-set containment"];
    assert!(v1_rej < attacks.len());
    // Without the polarity guard, negation deletions get through.
    let (np_rej, _) = figures["ablation: ordered, no polarity guard"];
    assert!(np_rej < attacks.len());
}

#[test]
fn negation_attacks_fail_on_polarity_and_the_rest_on_order() {
    for f in load().iter().filter(|f| f.kind == "attack") {
        let verdict = is_supported_v2(&f.answer, &f.passage);
        let Verdict::Unsupported(reason) = &verdict else {
            panic!("{} accepted", f.id);
        };
        let code = serde_json::to_value(reason).expect("reason JSON")["code"].clone();
        if f.shape.starts_with("negation_deletion") {
            assert_eq!(code, "polarity_dropped", "{}: {reason}", f.id);
        } else {
            assert!(
                code == "not_in_order" || code == "gap_exceeded",
                "{}: {reason}",
                f.id
            );
        }
    }
}

fn v3(claim: &str, passage: &str) -> bool {
    is_supported(claim, passage).is_supported()
}

#[test]
fn gate_check_agrees_with_the_predicate_and_drops_attacks() {
    for f in load() {
        let result = Gate::check(&f.answer, &[f.passage.as_str()]);
        let expected = accepts(v3, &f.answer, &f.passage);
        assert_eq!(result.all_claims_verified, expected, "{}", f.id);
        // The gate rejects every attack, and every seed control except the ones
        // marked as rejected on purpose.
        assert_eq!(
            expected,
            f.kind == "control" && !f.gate_rejects || f.kind == "limitation" && expected,
            "{} ({}): {:?}",
            f.id,
            f.shape,
            Gate::check(&f.answer, &[f.passage.as_str()]).claims
        );
        if f.kind == "attack" {
            // Mixed into a faithful answer, the attack is dropped, the rest kept.
            let control = load()
                .into_iter()
                .find(|c| c.kind == "control" && c.passage == f.passage && c.shape == "verbatim")
                .expect("each domain has a verbatim control");
            let mixed = format!("{} {}", control.answer, f.answer);
            let r = Gate::check(&mixed, &[f.passage.as_str()]);
            assert!(!r.refused, "{}", f.id);
            assert_eq!(r.answer, control.answer, "{}", f.id);
            assert_eq!(r.unsupported_claims_removed, 1, "{}", f.id);
        }
    }
}

/// The JSON form `prooflog gate` prints, pinned: a format change is a visible diff.
/// Regenerate with `UPDATE_GOLDEN=1 cargo test --test gate_fixtures`.
#[test]
fn gate_result_golden_json() {
    let passages = [
        "The tenant shall not sublet the premises without the landlord's prior written consent. \
         The landlord shall indemnify the tenant against all claims arising from structural defects.",
        "The monthly rent is 2,000 dollars and is due on the first day of each month.",
    ];
    let answer = "The tenant shall not sublet the premises without consent [HEDGE-1]. \
                  The tenant shall indemnify the landlord against all claims.\n\
                  The monthly rent is 2,000 dollars. [STEP-2] The tenant shall sublet the premises. \
                  Pets are allowed.";
    let result = Gate::check(answer, &passages);
    let json = serde_json::to_string_pretty(&result).expect("serializes") + "\n";
    support::golden::assert_text("gate_result.json", &json);
    let back: prooflog::answer::gate::GateResult =
        serde_json::from_str(&json).expect("round-trips");
    assert_eq!(back, result);
}

/// A 4 KB answer against a 400 KB passage: every claim gets a verdict or a refusal,
/// and the work is bounded per claim (not a timing assertion: work units are counted).
#[test]
fn a_large_passage_costs_bounded_work() {
    use prooflog::answer::gate::Reason;
    use prooflog::answer::verify::{MAX_ALIGN_STATES, MAX_CLAIM_TOKENS, MAX_CLAIM_WORK};
    let passage = "The tenant shall pay the rent on the first day of the month. ".repeat(6_600);
    assert!(passage.len() >= 400_000);
    let sentence = "The tenant shall pay the rent on the first day of the month and the landlord \
                    shall not. ";
    let answer = sentence.repeat(4_096 / sentence.len() + 1);
    let gate = Gate::new(&[passage.as_str()]);
    let (result, work) = gate.verify_with_work(&answer);
    assert!(result.claims.len() >= 40);
    let per_claim = MAX_CLAIM_WORK + MAX_ALIGN_STATES;
    assert!(
        work <= result.claims.len() as u64 * per_claim,
        "work {work} over {} claims",
        result.claims.len()
    );
    for c in &result.claims {
        assert!(!c.supported, "{}", c.text);
        assert!(c.reason.is_some());
    }
    // The same words as one 4 KB sentence: refused before any alignment work.
    let one = answer.replace(". ", " ");
    let check = gate.verify_claim(&one);
    assert!(
        matches!(check.reason(), Some(Reason::ClaimTooLong { limit, .. }) if *limit == MAX_CLAIM_TOKENS),
        "{check:?}"
    );
    assert_eq!(check.work(), 0);
    // A dense passage of one repeated word: the alignment's state bound refuses it.
    let dense = "rent ".repeat(400_000 / 5);
    let gate = Gate::new(&[dense.as_str()]);
    let check = gate.verify_claim(&"rent ".repeat(20));
    assert!(
        matches!(check.reason(), Some(Reason::TooMuchWork { .. })),
        "{:?}",
        check.reason()
    );
    assert!(check.work() <= per_claim);
}
