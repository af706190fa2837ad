//! Claim grounding: the role arithmetic's anchor values, fail-closed cases and
//! functional contradictions, through the public API.

use std::collections::HashMap;

use prooflog::Value;
use prooflog::answer::grounding::{
    Claim, GroundingOptions, GroundingThresholds, GroundingVerdict, evaluate_grounding,
    evaluate_grounding_with, ground_tags, resolve_citations,
};
use prooflog::answer::{CitedFact, TagResolver};
use proptest::prelude::*;

fn num(n: i64) -> Value {
    Value::Number(n)
}

fn sym(s: &str) -> Value {
    Value::Symbol(s.into())
}

fn fact(tag: &str, predicate: &str, args: Vec<Value>, text: &str) -> CitedFact {
    CitedFact::new(tag, predicate, args, text)
}

/// `member(42, 7)`, "drone 42 is a member of group 7".
fn member() -> CitedFact {
    fact(
        "HEDGE-42",
        "member",
        vec![num(42), num(7)],
        "drone 42 is a member of group 7",
    )
}

fn grade(claim: Claim, cited: &[CitedFact]) -> prooflog::answer::grounding::GroundingReport {
    evaluate_grounding(&claim, cited, GroundingThresholds::default())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn all_three_roles_score_one() {
    let r = grade(Claim::new("42", "member", "7"), &[member()]);
    assert_eq!(r.verdict, GroundingVerdict::Grounded { score: 1.0 });
    assert_eq!(r.best.as_deref(), Some("HEDGE-42"));
}

#[test]
fn two_of_three_roles_clear_permit() {
    // Subject and object match, the predicate does not.
    let r = grade(Claim::new("42", "commands", "7"), &[member()]);
    assert!(r.verdict.is_grounded(), "{r:?}");
    assert!(close(r.score(), 2.0 / 3.0));
    let m = &r.matches[0];
    assert!(m.subject && !m.predicate && m.object);
}

#[test]
fn a_single_role_is_weak() {
    // Only the predicate matches: neither 5 nor 9 appears anywhere.
    let r = grade(Claim::new("5", "member", "9"), &[member()]);
    assert!(matches!(r.verdict, GroundingVerdict::Weak { .. }), "{r:?}");
    assert!(close(r.score(), 1.0 / 3.0));
}

#[test]
fn both_endpoints_merely_appearing_is_weak() {
    // Role-inverted: 7 is not the subject nor 42 the object, the predicate differs.
    let r = grade(Claim::new("7", "commands", "42"), &[member()]);
    assert!(matches!(r.verdict, GroundingVerdict::Weak { .. }), "{r:?}");
    assert!(close(r.score(), 0.5));
    assert!(r.endpoints.subject && r.endpoints.object);
    assert!(close(r.role_score, 0.0));
}

#[test]
fn a_role_inverted_claim_with_the_right_predicate_is_not_grounded() {
    let r = grade(Claim::new("7", "member", "42"), &[member()]);
    assert!(!r.verdict.is_grounded());
    assert!(close(r.score(), 0.5));
}

#[test]
fn a_lone_endpoint_is_ungrounded() {
    let r = grade(Claim::new("42", "commands", "99"), &[member()]);
    // Subject matches in role: that is a single role, 1/3.
    assert!(close(r.score(), 1.0 / 3.0));
    // The endpoint only appearing, out of role: 0.25.
    let r = grade(Claim::new("99", "commands", "42"), &[member()]);
    assert!(
        matches!(r.verdict, GroundingVerdict::Ungrounded { .. }),
        "{r:?}"
    );
    assert!(close(r.score(), 0.25));
    assert!(!r.endpoints.subject && r.endpoints.object);
}

#[test]
fn nothing_in_common_is_ungrounded_zero() {
    let r = grade(Claim::new("3", "launched", "north"), &[member()]);
    assert_eq!(r.verdict, GroundingVerdict::Ungrounded { score: 0.0 });
}

#[test]
fn no_citations_is_ungrounded_zero() {
    let r = grade(Claim::new("42", "member", "7"), &[]);
    assert_eq!(r.verdict, GroundingVerdict::Ungrounded { score: 0.0 });
    assert_eq!(r.reason, "no citations");
    assert!(r.best.is_none());
}

#[test]
fn endpoints_are_found_in_verbalisations() {
    let f = fact(
        "HEDGE-1",
        "seen",
        vec![num(3)],
        "drone 3 was seen over the North Harbour",
    );
    let r = grade(Claim::new("North Harbour", "patrols", "nothing"), &[f]);
    assert!(r.endpoints.subject);
    assert!(close(r.score(), 0.25));
}

#[test]
fn predicate_matches_the_verbalisation_unless_disabled() {
    let claim = Claim::new("42", "is a member of", "7");
    let on = grade(claim.clone(), &[member()]);
    assert!(close(on.score(), 1.0));
    let off = evaluate_grounding_with(
        &claim,
        &[member()],
        &GroundingOptions {
            predicate_in_text: false,
            ..GroundingOptions::default()
        },
    );
    assert!(close(off.score(), 2.0 / 3.0));
}

#[test]
fn numbers_compare_by_value_and_symbols_by_normalised_text() {
    let f = fact(
        "HEDGE-2",
        "works_in",
        vec![sym("Alice Smith"), sym("Paris")],
        "Alice Smith works in Paris",
    );
    let r = grade(Claim::new("  alice   SMITH ", "Works-In", "paris"), &[f]);
    assert!(close(r.score(), 1.0));
    let g = fact("HEDGE-3", "speed", vec![num(3), Value::Float(12.5)], "");
    let r = grade(Claim::new("3.0", "speed", "12.50"), &[g]);
    assert!(close(r.score(), 1.0));
}

#[test]
fn functional_contradiction_is_never_grounded() {
    let mut f = fact(
        "HEDGE-5",
        "works_in",
        vec![sym("alice"), sym("london")],
        "alice works in london",
    );
    f.functional_key = Some(vec![0]);
    // Subject and predicate match: 2 of 3 would clear permit, but the object
    // contradicts a functional fact.
    let r = grade(Claim::new("alice", "works_in", "paris"), &[f.clone()]);
    assert!(
        matches!(r.verdict, GroundingVerdict::Ungrounded { .. }),
        "{r:?}"
    );
    let c = r.contradiction.as_ref().expect("contradiction reported");
    assert_eq!(c.tag, "HEDGE-5");
    assert_eq!(c.column, 1);
    assert_eq!(c.found, sym("london"));
    assert!(r.reason.contains("alice works in london"));
    // Even when another cited fact supports the claim fully.
    let support = fact(
        "HEDGE-6",
        "works_in",
        vec![sym("alice"), sym("paris")],
        "alice works in paris",
    );
    let r = grade(
        Claim::new("alice", "works_in", "paris"),
        &[support.clone(), f.clone()],
    );
    assert!(!r.verdict.is_grounded());
    // Without the functional declaration the same facts ground the claim.
    let mut plain = f.clone();
    plain.functional_key = None;
    let r = grade(Claim::new("alice", "works_in", "paris"), &[support, plain]);
    assert!(r.verdict.is_grounded());
    // A different key is no contradiction.
    let r = grade(Claim::new("bob", "works_in", "paris"), &[f]);
    assert!(r.contradiction.is_none());
}

#[test]
fn functional_key_on_the_object_column() {
    let mut f = fact(
        "HEDGE-8",
        "badge_of",
        vec![sym("alice"), num(1001)],
        "badge 1001 belongs to alice",
    );
    f.functional_key = Some(vec![1]);
    let r = grade(Claim::new("bob", "badge_of", "1001"), &[f]);
    assert_eq!(r.contradiction.as_ref().map(|c| c.column), Some(0));
    assert!(!r.verdict.is_grounded());
}

struct Facts(HashMap<String, Vec<CitedFact>>);

impl TagResolver for Facts {
    fn resolve(&self, tag: &str) -> Vec<CitedFact> {
        self.0.get(tag).cloned().unwrap_or_default()
    }
}

fn resolver() -> Facts {
    Facts(HashMap::from([("HEDGE-42".to_string(), vec![member()])]))
}

#[test]
fn resolving_skips_rule_tags_and_reports_unknown_ones() {
    let r = resolve_citations(&["HEDGE-42", "RULE-0", "HEDGE-9"], &resolver());
    assert_eq!(r.facts, vec![member()]);
    assert_eq!(r.unresolved, vec!["HEDGE-9"]);
}

#[test]
fn an_unresolvable_tag_fails_closed() {
    let claim = Claim::new("42", "member", "7");
    let ok = ground_tags(
        &claim,
        &["HEDGE-42", "RULE-0"],
        &resolver(),
        &GroundingOptions::default(),
    );
    assert!(ok.verdict.is_grounded());
    let bad = ground_tags(
        &claim,
        &["HEDGE-42", "HEDGE-9"],
        &resolver(),
        &GroundingOptions::default(),
    );
    assert_eq!(bad.verdict, GroundingVerdict::Ungrounded { score: 0.0 });
    assert_eq!(bad.unresolved, vec!["HEDGE-9"]);
}

#[test]
fn custom_thresholds_move_the_bands() {
    let t = GroundingThresholds::new(0.2, 0.9).expect("valid thresholds");
    let r = evaluate_grounding(&Claim::new("42", "commands", "7"), &[member()], t);
    assert!(matches!(r.verdict, GroundingVerdict::Weak { .. }));
    let r = evaluate_grounding(&Claim::new("99", "commands", "42"), &[member()], t);
    assert!(matches!(r.verdict, GroundingVerdict::Weak { .. }));
}

#[test]
fn claim_json_accepts_numbers() {
    let c: Claim = serde_json::from_str(r#"{"subject": 42, "predicate": "member", "object": 7}"#)
        .expect("claim parses");
    assert_eq!(c, Claim::new("42", "member", "7"));
    assert!(
        serde_json::from_str::<Claim>(r#"{"subject": [1], "predicate": "p", "object": "o"}"#)
            .is_err()
    );
}

#[test]
fn report_json_shape() {
    let r = grade(Claim::new("42", "member", "7"), &[member()]);
    let j = serde_json::to_value(&r).expect("serializes");
    assert_eq!(j["verdict"], "grounded");
    assert_eq!(j["score"], 1.0);
    assert_eq!(j["thresholds"]["permit"], 0.6);
    assert_eq!(j["matches"][0]["tag"], "HEDGE-42");
    assert_eq!(j["matches"][0]["object"], true);
}

fn arb_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0i64..6).prop_map(Value::Number),
        prop::sample::select(vec!["a", "b", "c"]).prop_map(|s| Value::Symbol(s.into())),
    ]
}

fn arb_fact() -> impl Strategy<Value = CitedFact> {
    (
        prop::sample::select(vec!["p", "q"]),
        prop::collection::vec(arb_value(), 0..4),
        any::<bool>(),
    )
        .prop_map(|(p, args, functional)| {
            CitedFact::new("HEDGE-1", p, args, "").with_functional_key(functional.then(|| vec![0]))
        })
}

fn arb_claim() -> impl Strategy<Value = Claim> {
    let part = prop::sample::select(vec!["0", "1", "2", "a", "b", "p", "q", "zz"]);
    (part.clone(), part.clone(), part).prop_map(|(s, p, o)| Claim::new(s, p, o))
}

proptest! {
    #[test]
    fn score_is_the_documented_formula(claim in arb_claim(), facts in prop::collection::vec(arb_fact(), 0..4)) {
        let r = grade(claim, &facts);
        prop_assert!((0.0..=1.0).contains(&r.score()));
        if facts.is_empty() {
            prop_assert_eq!(r.verdict, GroundingVerdict::Ungrounded { score: 0.0 });
        } else {
            let best = r.matches.iter().map(|m| {
                f64::from(u8::from(m.subject) + u8::from(m.predicate) + u8::from(m.object)) / 3.0
            }).fold(0.0, f64::max);
            let ends = f64::from(u8::from(r.endpoints.subject) + u8::from(r.endpoints.object)) / 4.0;
            prop_assert!(close(r.score(), best.max(ends)));
            if r.contradiction.is_some() {
                let blocked = matches!(r.verdict, GroundingVerdict::Ungrounded { .. });
                prop_assert!(blocked);
            } else {
                prop_assert_eq!(r.verdict, GroundingThresholds::default().classify(r.score()));
            }
        }
    }

    #[test]
    fn adding_a_non_functional_fact_never_lowers_the_score(
        claim in arb_claim(), facts in prop::collection::vec(arb_fact(), 1..4), extra in arb_fact()
    ) {
        let mut extra = extra;
        extra.functional_key = None;
        let before = grade(claim.clone(), &facts).score();
        let mut more = facts.clone();
        more.push(extra);
        let after = grade(claim, &more).score();
        prop_assert!(after >= before);
    }
}
