//! The hallucination firewall's rules, through the public API.

mod support;

use std::collections::{HashMap, HashSet};

use prooflog::Value;
use prooflog::answer::firewall::{
    AS_DICT_STRIPPED_LIMIT, CheckOptions, DEFAULT_ABSTAIN_MESSAGE, FirewallResult,
    HallucinationFirewall, Outcome, SentenceKind, StripReason, cited_tags,
};
use prooflog::answer::segment::segment;
use prooflog::answer::{CitedFact, TagResolver};
use proptest::prelude::*;

fn tags(list: &[&str]) -> HashSet<String> {
    list.iter().map(|t| t.to_string()).collect()
}

fn check(answer: &str, allowed: &[&str]) -> FirewallResult {
    HallucinationFirewall::new().check(answer, &tags(allowed), &CheckOptions::default())
}

const SEED_ALLOWED: [&str; 3] = ["HEDGE-42", "RULE-0", "STEP-1"];

#[test]
fn seed_example_supported() {
    let answer = "Drone 42 is part of a coordinated threat [STEP-1]. \
                  It was seen with drone 7 in the same formation [HEDGE-42]. \
                  The rule for coordinated threats applies [RULE-0].";
    let r = check(answer, &SEED_ALLOWED);
    assert_eq!(r.outcome, Outcome::Supported);
    assert!(!r.abstained);
    assert_eq!(r.coverage, 1.0);
    assert_eq!(r.supported.len(), 3);
    assert!(r.stripped.is_empty());
    assert_eq!(r.answer, answer);
}

#[test]
fn seed_example_fabricated_tag_is_stripped() {
    let answer = "Drone 42 is part of a coordinated threat [STEP-1]. \
                  Drone 42 carries a payload of explosives [HEDGE-77].";
    let r = check(answer, &SEED_ALLOWED);
    assert_eq!(r.outcome, Outcome::Stripped);
    assert_eq!(r.coverage, 0.5);
    assert_eq!(
        r.answer,
        "Drone 42 is part of a coordinated threat [STEP-1]."
    );
    assert_eq!(
        r.stripped,
        vec!["Drone 42 carries a payload of explosives [HEDGE-77]."]
    );
    let reason = r.sentences[1].reason.clone();
    assert_eq!(
        reason,
        Some(StripReason::UnknownTags {
            tags: vec!["HEDGE-77".into()]
        })
    );
}

#[test]
fn uncited_factual_sentence_is_stripped() {
    let r = check(
        "Drone 42 is hostile [HEDGE-42]. Drone 42 flew over the harbour at noon.",
        &SEED_ALLOWED,
    );
    assert_eq!(r.outcome, Outcome::Stripped);
    assert_eq!(r.stripped, vec!["Drone 42 flew over the harbour at noon."]);
    assert_eq!(r.sentences[1].reason, Some(StripReason::NoCitation));
}

#[test]
fn glue_is_kept_and_not_counted() {
    let r = check(
        "In short: yes. Drone 42 is a threat [STEP-1].",
        &SEED_ALLOWED,
    );
    assert_eq!(r.outcome, Outcome::Supported);
    assert_eq!(r.sentences[0].kind, SentenceKind::Glue);
    assert_eq!(r.supported.len(), 1);
    assert_eq!(r.coverage, 1.0);
    assert_eq!(r.answer, "In short: yes. Drone 42 is a threat [STEP-1].");
}

#[test]
fn short_sentence_with_fabricated_tag_is_not_glue() {
    let r = check(
        "Yes [HEDGE-9]. Drone 42 is a threat [STEP-1].",
        &SEED_ALLOWED,
    );
    assert_eq!(r.sentences[0].kind, SentenceKind::Stripped);
    assert_eq!(r.outcome, Outcome::Stripped);
}

#[test]
fn unverified_marker_is_kept_and_not_counted() {
    let r = check(
        "Drone 42 may have been refuelled at sea [UNVERIFIED]. Drone 42 is a threat [STEP-1].",
        &SEED_ALLOWED,
    );
    assert_eq!(r.outcome, Outcome::Supported);
    assert_eq!(r.sentences[0].kind, SentenceKind::Unverified);
    assert_eq!(r.supported.len(), 1);
    assert_eq!(r.coverage, 1.0);
    // Markers alone say nothing verified: no supported sentence, no `supported`.
    let r = check(
        "Drone 42 may have been refuelled at sea [UNVERIFIED: single witness].",
        &SEED_ALLOWED,
    );
    assert_eq!(r.outcome, Outcome::Abstained);
    assert_eq!(r.coverage, 1.0);
}

#[test]
fn unverified_marker_does_not_excuse_a_fabricated_tag() {
    let r = check(
        "Drone 42 was refuelled at sea [UNVERIFIED] [HEDGE-5]. Drone 42 is a threat [STEP-1].",
        &SEED_ALLOWED,
    );
    assert_eq!(r.sentences[0].kind, SentenceKind::Stripped);
}

#[test]
fn shared_and_adjacent_brackets_need_every_tag_allowed() {
    let ok = check(
        "Drone 42 is a coordinated threat [HEDGE-42, STEP-1].",
        &SEED_ALLOWED,
    );
    assert_eq!(ok.outcome, Outcome::Supported);
    let ok = check(
        "Drone 42 is a coordinated threat [HEDGE-42][STEP-1].",
        &SEED_ALLOWED,
    );
    assert_eq!(ok.outcome, Outcome::Supported);
    for bad in [
        "Drone 42 is a coordinated threat [HEDGE-42, STEP-2].",
        "Drone 42 is a coordinated threat [HEDGE-42][STEP-2].",
        "Drone 42 is a coordinated threat [PATTERN-3; RULE-0].",
    ] {
        let r = check(bad, &SEED_ALLOWED);
        assert_eq!(r.outcome, Outcome::Abstained, "{bad}");
        assert!(r.sentences[0].reason.is_some());
    }
}

#[test]
fn pattern_tags_are_citations() {
    assert_eq!(cited_tags("x [PATTERN-12]"), vec!["PATTERN-12"]);
    let r = check(
        "Drones 42 and 7 fly a swarm pattern [PATTERN-12].",
        &["PATTERN-12"],
    );
    assert_eq!(r.outcome, Outcome::Supported);
}

#[test]
fn require_proof_without_proof_abstains() {
    let fw = HallucinationFirewall::new();
    let answer = "Drone 42 is a coordinated threat [STEP-1].";
    let r = fw.check(
        answer,
        &tags(&SEED_ALLOWED),
        &CheckOptions::new().proved(false).require_proof(true),
    );
    assert_eq!(r.outcome, Outcome::Abstained);
    assert!(r.abstained);
    assert_eq!(r.answer, DEFAULT_ABSTAIN_MESSAGE);
    // Proved, or proof not required: the same answer passes.
    assert_eq!(
        fw.check(
            answer,
            &tags(&SEED_ALLOWED),
            &CheckOptions::new().proved(true).require_proof(true)
        )
        .outcome,
        Outcome::Supported
    );
    assert_eq!(
        fw.check(
            answer,
            &tags(&SEED_ALLOWED),
            &CheckOptions::new().proved(false).require_proof(false)
        )
        .outcome,
        Outcome::Supported
    );
}

#[test]
fn all_factual_sentences_stripped_abstains_with_custom_message() {
    let fw = HallucinationFirewall::new().with_abstain_message("No verified answer.");
    let r = fw.check(
        "Drone 42 is a coordinated threat [STEP-9]. Drone 42 carries explosives.",
        &tags(&SEED_ALLOWED),
        &CheckOptions::default(),
    );
    assert_eq!(r.outcome, Outcome::Abstained);
    assert_eq!(r.answer, "No verified answer.");
    assert_eq!(r.coverage, 0.0);
    assert_eq!(r.stripped.len(), 2);
}

#[test]
fn an_answer_without_a_supported_sentence_is_never_supported() {
    // Glue alone: nothing factual (coverage 1.0, as the seed defines it), but nothing
    // supported either.
    let r = check("Yes. In short: yes.", &[]);
    assert_eq!(r.outcome, Outcome::Abstained);
    assert_eq!(r.coverage, 1.0);
    assert_eq!(r.answer, DEFAULT_ABSTAIN_MESSAGE);
    // "No." is not a connective: it answers.
    let r = check("Yes. In short: no.", &[]);
    assert_eq!(r.sentences[1].kind, SentenceKind::Stripped);
    for glue_like in ["No threat exists.", "Drone 7: hostile", "OK."] {
        let r = check(glue_like, &SEED_ALLOWED);
        assert_eq!(r.outcome, Outcome::Abstained, "{glue_like}");
        assert_eq!(
            r.sentences[0].reason,
            Some(StripReason::NoCitation),
            "{glue_like}"
        );
    }
}

#[test]
fn coverage_is_supported_over_factual() {
    let r = check(
        "Drone 42 is a coordinated threat [STEP-1]. Drone 42 is a member of group 7 [HEDGE-42]. \
         Drone 42 launched from the north shore. In short: yes.",
        &SEED_ALLOWED,
    );
    assert_eq!(r.outcome, Outcome::Stripped);
    assert!((r.coverage - 2.0 / 3.0).abs() < 1e-12);
}

#[test]
fn as_dict_has_exactly_the_seed_keys_and_truncates() {
    let mut answer = String::from("Drone 42 is a coordinated threat [STEP-1]. ");
    for i in 0..12 {
        answer.push_str(&format!("Drone {i} carries an unverified payload. "));
    }
    let r = check(&answer, &SEED_ALLOWED);
    let d = r.as_dict();
    let obj = d.as_object().expect("as_dict is an object");
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "abstained",
            "coverage",
            "outcome",
            "stripped",
            "stripped_count",
            "supported_count"
        ]
    );
    assert_eq!(d["stripped_count"], 12);
    assert_eq!(d["supported_count"], 1);
    assert_eq!(
        d["stripped"].as_array().map(Vec::len),
        Some(AS_DICT_STRIPPED_LIMIT)
    );
    assert_eq!(d["stripped"][0], "Drone 0 carries an unverified payload.");
    assert_eq!(d["outcome"], "stripped");
}

#[test]
fn line_structure_survives_sanitizing() {
    let answer = "Drone 42 is a coordinated threat [STEP-1].\n\
                  Drone 42 carries explosives on board.\n\
                  Drone 42 is a member of group 7 [HEDGE-42].";
    let r = check(answer, &SEED_ALLOWED);
    assert_eq!(
        r.answer,
        "Drone 42 is a coordinated threat [STEP-1].\nDrone 42 is a member of group 7 [HEDGE-42]."
    );
}

/// Facts keyed by tag, for content verification.
struct Facts(HashMap<String, Vec<CitedFact>>);

impl TagResolver for Facts {
    fn resolve(&self, tag: &str) -> Vec<CitedFact> {
        self.0.get(tag).cloned().unwrap_or_default()
    }
}

fn facts() -> Facts {
    let mut m = HashMap::new();
    m.insert(
        "HEDGE-42".to_string(),
        vec![CitedFact::new(
            "HEDGE-42",
            "member",
            vec![Value::Number(42), Value::Number(7)],
            "drone 42 is a member of group 7",
        )],
    );
    m.insert(
        "STEP-1".to_string(),
        vec![CitedFact::new(
            "STEP-1",
            "coordinated_threat",
            vec![Value::Number(42)],
            "drone 42 is a coordinated threat",
        )],
    );
    Facts(m)
}

/// A stand-in content predicate: every word of the claim occurs in the passage.
fn words_contained(claim: &str, passage: &str) -> bool {
    let norm = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let hay = norm(passage);
    norm(claim).iter().all(|w| hay.contains(w))
}

#[test]
fn content_verification_strips_a_sentence_its_facts_do_not_say() {
    let resolver = facts();
    let support = words_contained;
    let fw = HallucinationFirewall::new().with_content_verification(&resolver, &support);
    let allowed = tags(&SEED_ALLOWED);
    let r = fw.check(
        "Drone 42 is a member of group 7 [HEDGE-42]. Drone 42 is a member of group 9 [HEDGE-42].",
        &allowed,
        &CheckOptions::default(),
    );
    assert_eq!(r.outcome, Outcome::Stripped);
    assert_eq!(
        r.supported,
        vec!["Drone 42 is a member of group 7 [HEDGE-42]."]
    );
    assert!(matches!(
        &r.sentences[1].reason,
        Some(StripReason::NotEntailed { facts, .. }) if facts == &["drone 42 is a member of group 7"]
    ));
}

#[test]
fn content_verification_checks_each_fact_on_its_own() {
    let resolver = facts();
    let sentence =
        "Drone 42 is a coordinated threat; drone 42 is a member of group 7 [STEP-1, HEDGE-42].";
    // A plain predicate sees one fact at a time: the two clauses together are in
    // neither fact, and facts are never spliced.
    let support = words_contained;
    let fw = HallucinationFirewall::new().with_content_verification(&resolver, &support);
    let r = fw.check(sentence, &tags(&SEED_ALLOWED), &CheckOptions::default());
    assert_eq!(r.outcome, Outcome::Abstained);
    // The gate checks clause by clause, each clause against one fact.
    let fw = HallucinationFirewall::new().with_gate_verification(&resolver);
    let r = fw.check(sentence, &tags(&SEED_ALLOWED), &CheckOptions::default());
    assert_eq!(r.outcome, Outcome::Supported, "{:?}", r.sentences);
    // A splice of the two facts' words is not a clause of either.
    let r = fw.check(
        "Drone 42 is a coordinated threat member of group 7 [STEP-1, HEDGE-42].",
        &tags(&SEED_ALLOWED),
        &CheckOptions::default(),
    );
    assert_eq!(r.outcome, Outcome::Abstained);
}

#[test]
fn content_verification_fails_rule_only_citations() {
    let resolver = facts();
    let support = words_contained;
    let fw = HallucinationFirewall::new().with_content_verification(&resolver, &support);
    let r = fw.check(
        "Coordinated threats are flagged by the rule [RULE-0].",
        &tags(&SEED_ALLOWED),
        &CheckOptions::default(),
    );
    assert_eq!(r.outcome, Outcome::Abstained);
    assert_eq!(
        r.sentences[0].reason,
        Some(StripReason::NothingToVerify {
            tags: vec!["RULE-0".into()]
        })
    );
    // Without content verification the same sentence passes on its tag alone.
    assert_eq!(
        check(
            "Coordinated threats are flagged by the rule [RULE-0].",
            &SEED_ALLOWED
        )
        .outcome,
        Outcome::Supported
    );
}

const KINDS: [&str; 5] = ["HEDGE", "RULE", "STEP", "PATTERN", "FACT"];

/// A sentence: words, optionally a citation bracket, optionally a marker.
fn sentence() -> impl Strategy<Value = String> {
    (
        prop::collection::vec("[a-z]{1,9}", 1..8),
        prop::collection::vec((0usize..5, 0u32..6), 0..3),
        any::<bool>(),
        prop::sample::select(vec![". ", "! ", "? ", ".\n", ".\n\n"]),
    )
        .prop_map(|(words, cites, marker, end)| {
            let mut s = words.join(" ");
            if !cites.is_empty() {
                let inner: Vec<String> = cites
                    .iter()
                    .map(|(k, n)| format!("{}-{n}", KINDS[*k]))
                    .collect();
                s.push_str(&format!(" [{}]", inner.join(", ")));
            }
            if marker {
                s.push_str(" [UNVERIFIED]");
            }
            s.push_str(end);
            s
        })
}

fn answer() -> impl Strategy<Value = String> {
    prop::collection::vec(sentence(), 0..10).prop_map(|v| v.concat())
}

fn allowed_set() -> impl Strategy<Value = HashSet<String>> {
    prop::collection::hash_set(
        (0usize..4, 0u32..6).prop_map(|(k, n)| format!("{}-{n}", KINDS[k])),
        0..8,
    )
}

proptest! {
    #[test]
    fn never_keeps_a_factual_sentence_without_an_allowed_tag(
        text in answer(), allowed in allowed_set(), proved in any::<bool>(), require in any::<bool>()
    ) {
        let r = HallucinationFirewall::new().check(&text, &allowed, &CheckOptions::new().proved(proved).require_proof(require));
        for s in &r.supported {
            let cited = cited_tags(s);
            prop_assert!(!cited.is_empty());
            prop_assert!(cited.iter().all(|t| allowed.contains(t)), "{s:?} kept with {cited:?}");
        }
        for s in r.sentences.iter().filter(|s| s.kept()) {
            prop_assert!(cited_tags(&s.text).iter().all(|t| allowed.contains(t)));
        }
        if !r.abstained {
            // Every tag in the delivered answer is allowed.
            prop_assert!(cited_tags(&r.answer).iter().all(|t| allowed.contains(t)));
        }
    }

    #[test]
    fn kept_and_stripped_partition_the_sentences(text in answer(), allowed in allowed_set()) {
        let r = HallucinationFirewall::new().check(&text, &allowed, &CheckOptions::default());
        let kept: Vec<&str> = r.sentences.iter().filter(|s| s.kept()).map(|s| s.text.as_str()).collect();
        let stripped: Vec<&str> = r.sentences.iter().filter(|s| !s.kept()).map(|s| s.text.as_str()).collect();
        prop_assert_eq!(&stripped, &r.stripped.iter().map(String::as_str).collect::<Vec<_>>());
        prop_assert_eq!(kept.len() + stripped.len(), r.sentences.len());
        // The sentences cover the segmenter's output, in order, with nothing lost.
        let all: String = r.sentences.iter().map(|s| s.text.split_whitespace().collect::<String>()).collect();
        let seg: String = segment(&text).iter().map(|s| s.text.split_whitespace().collect::<String>()).collect();
        prop_assert_eq!(all, seg);
        if r.outcome != Outcome::Abstained {
            let delivered: String = r.answer.split_whitespace().collect();
            let expected: String = kept.iter().map(|s| s.split_whitespace().collect::<String>()).collect();
            prop_assert_eq!(delivered, expected);
        }
    }

    #[test]
    fn coverage_is_a_ratio_consistent_with_the_outcome(text in answer(), allowed in allowed_set()) {
        let r = HallucinationFirewall::new().check(&text, &allowed, &CheckOptions::default());
        prop_assert!((0.0..=1.0).contains(&r.coverage));
        let factual = r.supported.len() + r.stripped.len();
        if factual == 0 {
            prop_assert_eq!(r.coverage, 1.0);
        } else {
            prop_assert!((r.coverage - r.supported.len() as f64 / factual as f64).abs() < 1e-12);
        }
        match r.outcome {
            Outcome::Supported => prop_assert!(r.stripped.is_empty() && !r.supported.is_empty()),
            Outcome::Stripped => prop_assert!(!r.stripped.is_empty() && !r.supported.is_empty()),
            // No supported sentence (or a required proof missing).
            _ => prop_assert!(r.abstained && r.supported.is_empty()),
        }
    }
}

#[test]
fn gate_verification_rejects_negation_and_inversion() {
    let resolver = facts();
    let fw = HallucinationFirewall::new().with_gate_verification(&resolver);
    let allowed = tags(&SEED_ALLOWED);
    let r = fw.check(
        "Drone 42 is a member of group 7 [HEDGE-42]. \
         Drone 42 is not a member of group 7 [HEDGE-42]. \
         Group 7 is a member of drone 42 [HEDGE-42].",
        &allowed,
        &CheckOptions::default(),
    );
    assert_eq!(
        r.supported,
        vec!["Drone 42 is a member of group 7 [HEDGE-42]."]
    );
    assert_eq!(r.stripped.len(), 2);
    for s in &r.sentences[1..] {
        assert!(
            matches!(s.reason, Some(StripReason::NotEntailed { .. })),
            "{s:?}"
        );
    }
}

/// Free text with brackets, tags, markers, terminators and non-ASCII thrown in.
fn free_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            "\\PC{0,12}",
            Just("[HEDGE-1]".to_string()),
            Just("[STEP-2, RULE-0]".to_string()),
            Just("[UNVERIFIED]".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just(". ".to_string()),
            Just("\n".to_string()),
            Just("。".to_string()),
            Just(" drone 42 is a member of group 7 ".to_string()),
        ],
        0..24,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn arbitrary_text_keeps_the_invariants(text in free_text(), allowed in allowed_set()) {
        let r = HallucinationFirewall::new().check(&text, &allowed, &CheckOptions::default());
        prop_assert!((0.0..=1.0).contains(&r.coverage));
        for s in r.sentences.iter().filter(|s| s.kept()) {
            prop_assert!(cited_tags(&s.text).iter().all(|t| allowed.contains(t)));
            // Offsets index the answer as checked: without invisible characters.
            let checked = prooflog::answer::normalize::strip_invisible(&text);
            prop_assert_eq!(checked.get(s.start..s.end), Some(s.text.as_str()));
        }
        for s in &r.supported {
            prop_assert!(!cited_tags(s).is_empty());
        }
    }

    #[test]
    fn content_verification_only_narrows(text in answer(), allowed in allowed_set()) {
        let resolver = facts();
        let plain = HallucinationFirewall::new().check(&text, &allowed, &CheckOptions::default());
        let verified = HallucinationFirewall::new()
            .with_gate_verification(&resolver)
            .check(&text, &allowed, &CheckOptions::default());
        prop_assert_eq!(plain.sentences.len(), verified.sentences.len());
        for (p, v) in plain.sentences.iter().zip(&verified.sentences) {
            prop_assert!(p.kept() || !v.kept(), "verification kept {:?}", v.text);
        }
        prop_assert!(verified.coverage <= plain.coverage);
    }
}

#[test]
fn full_result_json_golden() {
    let r = check(
        "Drone 42 is a coordinated threat [STEP-1]. In short: yes. \
         Drone 42 was refuelled at sea [UNVERIFIED]. Drone 42 carries explosives [HEDGE-9].",
        &SEED_ALLOWED,
    );
    let actual = serde_json::to_value(&r).expect("serializes");
    support::golden::assert_json("check_firewall_result", &actual);
}

#[test]
fn one_firewall_serves_many_threads() {
    fn shareable<T: Send + Sync>(_: &T) {}
    let resolver = facts();
    let fw = HallucinationFirewall::new().with_gate_verification(&resolver);
    shareable(&fw);
    let allowed = tags(&SEED_ALLOWED);
    let outcomes: Vec<Outcome> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let (fw, allowed) = (&fw, &allowed);
                s.spawn(move || {
                    let group = if i % 2 == 0 { 7 } else { 9 };
                    let answer = format!("Drone 42 is a member of group {group} [HEDGE-42].");
                    fw.check(&answer, allowed, &CheckOptions::default()).outcome
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread ran"))
            .collect()
    });
    assert_eq!(
        outcomes,
        [
            Outcome::Supported,
            Outcome::Abstained,
            Outcome::Supported,
            Outcome::Abstained
        ]
    );
}

#[test]
fn unverified_marker_with_allowed_tags_is_kept_uncounted() {
    let resolver = facts();
    let fw = HallucinationFirewall::new().with_gate_verification(&resolver);
    let r = fw.check("Drone 42 may also lead group 9 [HEDGE-42] [UNVERIFIED]. Drone 42 is a member of group 7 [HEDGE-42].", &tags(&SEED_ALLOWED), &CheckOptions::default());
    assert_eq!(r.sentences[0].kind, SentenceKind::Unverified);
    assert_eq!(r.outcome, Outcome::Supported);
    assert_eq!(r.supported.len(), 1);
}
