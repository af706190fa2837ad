//! Claim grounding: does a structured claim actually trace to the facts it cites?
//!
//! The firewall checks that a sentence *cites* allowed tags; grounding measures how far
//! a claim, a `(subject, predicate, object)` triple, is *supported* by the facts those
//! tags name, and grades it: [`GroundingVerdict::Grounded`] (safe to commit),
//! [`GroundingVerdict::Weak`] (route to human review, never auto-commit) or
//! [`GroundingVerdict::Ungrounded`] (block).
//!
//! ## Roles of a cited fact
//!
//! A fact `p(a1, …, an)` is read as a triple by convention: its **subject** is the first
//! argument `a1`, its **predicate** the relation name `p`, its **object** the last
//! argument `an`; middle arguments only count as "appearing". A unary fact `hostile(42)`
//! says that `42` *is* `hostile`: its subject is `42` and its object is the predicate's
//! own meaning, the relation name (so the claim `(42, "is", "hostile")` matches subject
//! and object). A nullary fact has no subject and the relation name as both predicate
//! and object.
//!
//! Values are compared after normalisation: case is folded, `_`, `-` and runs of
//! whitespace become one space, and two values that both read as numbers compare by
//! value (`"42.0"` matches `42`). The claim's predicate matches the relation name, or —
//! with [`GroundingOptions::predicate_in_text`], on by default — the fact's
//! verbalisation, when the predicate's content words (function words such as "is",
//! "a", "of" set aside; a predicate of only function words never matches this way)
//! appear in order among the verbalisation's words.
//!
//! ## The arithmetic
//!
//! For each cited fact `f`, `roles(f)` is how many of subject, predicate and object
//! match in role (0–3). An endpoint (the claim's subject or object) *appears in
//! evidence* when it matches any argument of any cited fact or occurs as a word
//! sequence in any verbalisation. Then
//!
//! ```text
//! role_score     = max over cited f of roles(f) / 3
//! endpoint_score = (#endpoints appearing in evidence) / 4
//! score          = max(role_score, endpoint_score)
//! ```
//!
//! which gives the anchors the default thresholds (deny 0.3, permit 0.6) were chosen
//! for: all three roles 1.0 and two of three ≈0.67 clear `permit`; a single role ≈0.33
//! or both endpoints merely appearing 0.5 land in the review band; a lone appearing
//! endpoint 0.25 (or nothing, 0) is ungrounded. Score ≥ `permit` is Grounded, score <
//! `deny` Ungrounded, anything between Weak.
//!
//! Two of three roles clear `permit` even when the third differs: `(42, member, 9)`
//! grounds at 0.67 in `member(42, 7)`. Where a relation is declared `.functional`, that
//! case is caught:
//!
//! ## Contradictions
//!
//! A cited fact of a functional predicate (`CitedFact::functional_key` is `Some`) whose
//! predicate matches the claim's, whose key columns are all bound by the claim (the
//! subject binds column 0, the object the last column) and agree with it, but which
//! disagrees on another bound column, contradicts the claim. A contradicted claim is
//! never Grounded: the verdict is Ungrounded (with the arithmetic score kept for the
//! record) and the report names the contradicting fact.
//!
//! ## Fail-closed
//!
//! No citations, or a citation tag that resolves to nothing ([`ground_tags`]), yields
//! Ungrounded 0.0. A score only ever comes from the arithmetic above over real cited
//! facts.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use super::{CitedFact, TagResolver};
use crate::diag::{Diagnostic, ErrorCode, Result};
use crate::value::Value;

/// Thresholds partitioning the grounding score into the three verdicts; `deny < permit`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GroundingThresholds {
    /// Below this the claim is ungrounded: block.
    pub deny: f64,
    /// At or above this the claim is grounded: allow.
    pub permit: f64,
}

impl Default for GroundingThresholds {
    fn default() -> Self {
        // A 2-of-3 role match (≈0.67) clears `permit`; a single role or both endpoints
        // merely appearing in evidence (≈0.33–0.5) lands in the human-review band; a
        // lone endpoint (≤0.25) is ungrounded.
        GroundingThresholds {
            deny: 0.3,
            permit: 0.6,
        }
    }
}

impl GroundingThresholds {
    /// Thresholds with `0 ≤ deny < permit ≤ 1`, or a `bad_input` error saying why not.
    pub fn new(deny: f64, permit: f64) -> Result<GroundingThresholds> {
        let in_range = |x: f64| (0.0..=1.0).contains(&x);
        if !in_range(deny) || !in_range(permit) || deny >= permit {
            return Err(Diagnostic::new(
                ErrorCode::BadInput,
                format!("grounding thresholds need 0 <= deny < permit <= 1, got deny {deny}, permit {permit}"),
            )
            .into());
        }
        Ok(GroundingThresholds { deny, permit })
    }

    /// The verdict for a score.
    pub fn classify(&self, score: f64) -> GroundingVerdict {
        if score >= self.permit {
            GroundingVerdict::Grounded { score }
        } else if score < self.deny {
            GroundingVerdict::Ungrounded { score }
        } else {
            GroundingVerdict::Weak { score }
        }
    }
}

/// The graded outcome of grounding a claim in cited evidence. Serializes as
/// `{"verdict": "grounded"|"weak"|"ungrounded", "score": …}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
#[non_exhaustive]
pub enum GroundingVerdict {
    /// Well supported by the cited facts: safe to commit.
    Grounded {
        /// The grounding score.
        score: f64,
    },
    /// Partial support: route to human review, do not auto-commit.
    Weak {
        /// The grounding score.
        score: f64,
    },
    /// Does not trace to the cited facts (or is contradicted by them): block.
    Ungrounded {
        /// The grounding score.
        score: f64,
    },
}

impl GroundingVerdict {
    /// The score behind the verdict.
    pub fn score(&self) -> f64 {
        match *self {
            GroundingVerdict::Grounded { score }
            | GroundingVerdict::Weak { score }
            | GroundingVerdict::Ungrounded { score } => score,
        }
    }

    /// True only for [`GroundingVerdict::Grounded`].
    pub fn is_grounded(&self) -> bool {
        matches!(self, GroundingVerdict::Grounded { .. })
    }

    /// `"grounded"`, `"weak"` or `"ungrounded"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            GroundingVerdict::Grounded { .. } => "grounded",
            GroundingVerdict::Weak { .. } => "weak",
            GroundingVerdict::Ungrounded { .. } => "ungrounded",
        }
    }
}

impl fmt::Display for GroundingVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:.2})", self.as_str(), self.score())
    }
}

/// A structured claim a model asserted. JSON numbers and booleans are accepted for
/// any field and read as their text (`42` → `"42"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// What the claim is about.
    #[serde(deserialize_with = "scalar_text")]
    pub subject: String,
    /// The relation asserted.
    #[serde(deserialize_with = "scalar_text")]
    pub predicate: String,
    /// What the subject is related to.
    #[serde(deserialize_with = "scalar_text")]
    pub object: String,
}

impl Claim {
    /// A claim from its three parts.
    pub fn new(
        subject: impl Into<String>,
        predicate: impl Into<String>,
        object: impl Into<String>,
    ) -> Claim {
        Claim {
            subject: subject.into(),
            predicate: predicate.into(),
            object: object.into(),
        }
    }
}

fn scalar_text<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    use serde::de::Error as _;
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => Ok(s),
        serde_json::Value::Number(n) => Ok(n.to_string()),
        serde_json::Value::Bool(b) => Ok(b.to_string()),
        other => Err(D::Error::custom(format!(
            "expected a string or number, found {other}"
        ))),
    }
}

/// Options beyond the thresholds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundingOptions {
    /// Where the score falls between verdicts.
    pub thresholds: GroundingThresholds,
    /// Also match the claim's predicate against the words of a fact's verbalisation.
    pub predicate_in_text: bool,
}

impl Default for GroundingOptions {
    fn default() -> Self {
        GroundingOptions {
            thresholds: GroundingThresholds::default(),
            predicate_in_text: true,
        }
    }
}

/// How one cited fact matches the claim, role by role.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoleMatch {
    /// The citation tag.
    pub tag: String,
    /// The fact's verbalisation.
    pub fact: String,
    /// The fact's relation name.
    pub relation: String,
    /// The claim's subject is the fact's subject.
    pub subject: bool,
    /// The claim's predicate is the fact's relation (or is said by its verbalisation).
    pub predicate: bool,
    /// The claim's object is the fact's object.
    pub object: bool,
    /// Matched roles ÷ 3.
    pub score: f64,
}

/// Whether each endpoint of the claim appears anywhere in the cited evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct EndpointPresence {
    /// The claim's subject appears.
    pub subject: bool,
    /// The claim's object appears.
    pub object: bool,
}

/// A cited fact of a functional predicate that disagrees with the claim.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contradiction {
    /// The contradicting fact's tag.
    pub tag: String,
    /// The contradicting fact's verbalisation.
    pub fact: String,
    /// The functional key columns.
    pub key: Vec<usize>,
    /// The column where the fact and the claim disagree.
    pub column: usize,
    /// What the claim says is there.
    pub claimed: String,
    /// What the fact has there.
    pub found: Value,
}

/// The full account of one grounding evaluation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroundingReport {
    /// The verdict and its score (serialized as `verdict` and `score`).
    #[serde(flatten)]
    pub verdict: GroundingVerdict,
    /// The thresholds the score was graded with.
    pub thresholds: GroundingThresholds,
    /// The claim evaluated.
    pub claim: Claim,
    /// Best role match ÷ 3.
    pub role_score: f64,
    /// Endpoints appearing in evidence ÷ 4.
    pub endpoint_score: f64,
    /// Which endpoints appear in evidence.
    pub endpoints: EndpointPresence,
    /// Per cited fact, in citation order.
    pub matches: Vec<RoleMatch>,
    /// The tag of the best-matching fact (first among equals), if any fact was cited.
    pub best: Option<String>,
    /// Citation tags that resolved to no fact (fail-closed: any makes the claim
    /// Ungrounded).
    pub unresolved: Vec<String>,
    /// The functional fact that contradicts the claim, if any.
    pub contradiction: Option<Contradiction>,
    /// One line saying why.
    pub reason: String,
}

impl GroundingReport {
    /// The verdict's score.
    pub fn score(&self) -> f64 {
        self.verdict.score()
    }
}

/// Cited facts resolved from tags, and the tags that resolved to nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResolvedCitations {
    /// Every fact the tags name, in tag order.
    pub facts: Vec<CitedFact>,
    /// Tags that named no fact. `RULE-n` tags, which name a rule rather than a fact,
    /// are never listed here.
    pub unresolved: Vec<String>,
}

/// Resolve citation tags to facts through `resolver`.
pub fn resolve_citations<S: AsRef<str>>(
    tags: &[S],
    resolver: &dyn TagResolver,
) -> ResolvedCitations {
    let mut out = ResolvedCitations::default();
    for tag in tags {
        let tag = tag.as_ref();
        let facts = resolver.resolve(tag);
        if facts.is_empty() {
            if !is_rule_tag(tag) {
                out.unresolved.push(tag.to_string());
            }
        } else {
            // A negated premise (a fact the proof relied on being absent) never
            // grounds a claim that it holds.
            out.facts.extend(facts.into_iter().filter(|f| !f.negated));
        }
    }
    out
}

fn is_rule_tag(tag: &str) -> bool {
    tag.get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("RULE-"))
}

/// Resolve `tags` and grade the claim against the facts; any unresolvable tag makes
/// the claim Ungrounded 0.0 (fail-closed), reported in `unresolved`.
pub fn ground_tags<S: AsRef<str>>(
    claim: &Claim,
    tags: &[S],
    resolver: &dyn TagResolver,
    options: &GroundingOptions,
) -> GroundingReport {
    let resolved = resolve_citations(tags, resolver);
    let mut report = evaluate_grounding_with(claim, &resolved.facts, options);
    if !resolved.unresolved.is_empty() {
        report.verdict = GroundingVerdict::Ungrounded { score: 0.0 };
        report.reason = format!(
            "citation tags resolve to no fact: {}",
            resolved.unresolved.join(", ")
        );
        report.unresolved = resolved.unresolved;
    }
    report
}

/// Grade a claim against cited facts with the default options and `thresholds`.
pub fn evaluate_grounding(
    claim: &Claim,
    cited: &[CitedFact],
    thresholds: GroundingThresholds,
) -> GroundingReport {
    let options = GroundingOptions {
        thresholds,
        ..GroundingOptions::default()
    };
    evaluate_grounding_with(claim, cited, &options)
}

/// Grade a claim against cited facts (see the module documentation for the formula).
pub fn evaluate_grounding_with(
    claim: &Claim,
    cited: &[CitedFact],
    options: &GroundingOptions,
) -> GroundingReport {
    let thresholds = options.thresholds;
    let matches: Vec<RoleMatch> = cited
        .iter()
        .map(|f| role_match(claim, f, options))
        .collect();
    let endpoints = EndpointPresence {
        subject: appears(&claim.subject, cited),
        object: appears(&claim.object, cited),
    };
    let mut best: Option<&RoleMatch> = None;
    for m in &matches {
        if best.is_none_or(|b| m.score > b.score) {
            best = Some(m);
        }
    }
    let role_score = best.map_or(0.0, |m| m.score);
    let endpoint_score = f64::from(u8::from(endpoints.subject) + u8::from(endpoints.object)) / 4.0;
    let score = role_score.max(endpoint_score);
    let contradiction = cited.iter().find_map(|f| contradiction(claim, f, options));

    let (verdict, reason) = if cited.is_empty() {
        (
            GroundingVerdict::Ungrounded { score: 0.0 },
            "no citations".to_string(),
        )
    } else if let Some(c) = &contradiction {
        (
            GroundingVerdict::Ungrounded { score },
            format!(
                "contradicted by functional fact {} [{}]: column {} is {}, the claim says {}",
                c.fact, c.tag, c.column, c.found, c.claimed
            ),
        )
    } else {
        let verdict = thresholds.classify(score);
        let reason = match best {
            Some(m) if role_score >= endpoint_score && role_score > 0.0 => {
                let roles: Vec<&str> = [
                    (m.subject, "subject"),
                    (m.predicate, "predicate"),
                    (m.object, "object"),
                ]
                .into_iter()
                .filter_map(|(hit, name)| hit.then_some(name))
                .collect();
                format!(
                    "{} of 3 roles ({}) match {} [{}]",
                    roles.len(),
                    roles.join(", "),
                    m.fact,
                    m.tag
                )
            }
            _ if endpoint_score > 0.0 => format!(
                "{} appearing in evidence without a role match",
                match (endpoints.subject, endpoints.object) {
                    (true, true) => "both endpoints",
                    (true, false) => "only the subject",
                    _ => "only the object",
                }
            ),
            _ => "nothing in the claim matches the cited facts".to_string(),
        };
        (verdict, reason)
    };

    GroundingReport {
        verdict,
        thresholds,
        claim: claim.clone(),
        role_score,
        endpoint_score,
        endpoints,
        best: best.map(|m| m.tag.clone()),
        matches,
        unresolved: Vec::new(),
        contradiction,
        reason,
    }
}

/// The fact's object: its last argument, or for arity ≤ 1 its relation name.
enum Object<'a> {
    Arg(&'a Value),
    Relation(&'a str),
}

fn object_of(fact: &CitedFact) -> Object<'_> {
    match fact.args.len() {
        0 | 1 => Object::Relation(&fact.predicate),
        n => Object::Arg(&fact.args[n - 1]),
    }
}

fn role_match(claim: &Claim, fact: &CitedFact, options: &GroundingOptions) -> RoleMatch {
    let subject = fact
        .args
        .first()
        .is_some_and(|v| value_matches(&claim.subject, v));
    let predicate = predicate_matches(&claim.predicate, fact, options);
    let object = match object_of(fact) {
        Object::Arg(v) => value_matches(&claim.object, v),
        Object::Relation(name) => text_eq(&claim.object, name),
    };
    let hits = u8::from(subject) + u8::from(predicate) + u8::from(object);
    RoleMatch {
        tag: fact.tag.clone(),
        fact: fact.text.clone(),
        relation: fact.predicate.clone(),
        subject,
        predicate,
        object,
        score: f64::from(hits) / 3.0,
    }
}

fn contradiction(
    claim: &Claim,
    fact: &CitedFact,
    options: &GroundingOptions,
) -> Option<Contradiction> {
    let key = fact.functional_key.as_ref()?;
    let n = fact.args.len();
    if key.is_empty() || n < 2 || !predicate_matches(&claim.predicate, fact, options) {
        return None;
    }
    let bound = [(0, &claim.subject), (n - 1, &claim.object)];
    let claimed_at = |col: usize| bound.iter().find(|(c, _)| *c == col).map(|(_, v)| *v);
    for &col in key {
        let claimed = claimed_at(col)?;
        if !value_matches(claimed, fact.args.get(col)?) {
            return None;
        }
    }
    bound
        .iter()
        .filter(|(col, _)| !key.contains(col))
        .find(|(col, claimed)| !value_matches(claimed, &fact.args[*col]))
        .map(|(col, claimed)| Contradiction {
            tag: fact.tag.clone(),
            fact: fact.text.clone(),
            key: key.clone(),
            column: *col,
            claimed: (*claimed).clone(),
            found: fact.args[*col].clone(),
        })
}

fn predicate_matches(claimed: &str, fact: &CitedFact, options: &GroundingOptions) -> bool {
    if text_eq(claimed, &fact.predicate) {
        return true;
    }
    if !options.predicate_in_text {
        return false;
    }
    let content: Vec<String> = words(claimed)
        .into_iter()
        .filter(|w| !FUNCTION_WORDS.contains(&w.as_str()))
        .collect();
    if content.is_empty() {
        return false;
    }
    let text = words(&fact.text);
    let mut it = text.iter();
    content.iter().all(|w| it.any(|t| word_eq(w, t)))
}

/// Words that carry no relation of their own ("is a member of" says "member").
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "of", "to", "in", "on",
    "at", "by", "for", "with", "as", "has", "have", "had", "do", "does", "did",
];

/// Whether an endpoint matches any argument of any cited fact or occurs as a word
/// sequence in any verbalisation.
fn appears(endpoint: &str, cited: &[CitedFact]) -> bool {
    let needle = words(endpoint);
    if needle.is_empty() {
        return false;
    }
    cited.iter().any(|f| {
        f.args.iter().any(|v| value_matches(endpoint, v)) || {
            let hay = words(&f.text);
            hay.windows(needle.len())
                .any(|w| w.iter().zip(&needle).all(|(a, b)| word_eq(a, b)))
        }
    })
}

/// Normalised text: case folded, `_`/`-`/whitespace runs as one space, trimmed.
fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for part in s
        .split(|c: char| c.is_whitespace() || c == '_' || c == '-')
        .filter(|p| !p.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(part.chars().flat_map(char::to_lowercase));
    }
    out
}

fn as_number(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|x| x.is_finite())
}

fn text_eq(a: &str, b: &str) -> bool {
    match (as_number(a), as_number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => normalize(a) == normalize(b),
    }
}

fn value_matches(claimed: &str, value: &Value) -> bool {
    match value {
        Value::Number(i) => as_number(claimed).is_some_and(|x| x == *i as f64),
        Value::Unsigned(u) => as_number(claimed).is_some_and(|x| x == *u as f64),
        Value::Float(f) => as_number(claimed).is_some_and(|x| x == *f),
        Value::Symbol(s) => text_eq(claimed, s),
    }
}

/// Lower-cased words: runs of letters, digits, `.`, `-` and `'`, with those
/// punctuation marks trimmed from the ends (so `7.` is `7` but `500.00` stays whole).
fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | '-' | '\'')))
        .map(|w| w.trim_matches(['.', '-', '\'']))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect()
}

fn word_eq(a: &str, b: &str) -> bool {
    match (as_number(a), as_number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(tag: &str, pred: &str, args: Vec<Value>, text: &str) -> CitedFact {
        CitedFact::new(tag, pred, args, text)
    }

    #[test]
    fn verdict_accessors() {
        assert!(GroundingVerdict::Grounded { score: 0.9 }.is_grounded());
        assert!(!GroundingVerdict::Weak { score: 0.4 }.is_grounded());
        assert!((GroundingVerdict::Ungrounded { score: 0.1 }.score() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn thresholds_validate_and_classify() {
        let t = GroundingThresholds::default();
        assert!(t.deny < t.permit);
        assert!(GroundingThresholds::new(0.6, 0.3).is_err());
        assert!(GroundingThresholds::new(-0.1, 0.3).is_err());
        assert!(GroundingThresholds::new(0.2, f64::NAN).is_err());
        assert_eq!(t.classify(0.6).as_str(), "grounded");
        assert_eq!(t.classify(0.3).as_str(), "weak");
        assert_eq!(t.classify(0.29).as_str(), "ungrounded");
    }

    #[test]
    fn normalisation() {
        assert!(text_eq("  Works_In ", "works in"));
        assert!(text_eq("42.0", "42"));
        assert!(value_matches("007", &Value::Number(7)));
        assert!(value_matches("Group-A", &Value::Symbol("group a".into())));
        assert!(!value_matches("seven", &Value::Number(7)));
        assert_eq!(
            words("member(42, 7). Cost 500.00!"),
            ["member", "42", "7", "cost", "500.00"]
        );
    }

    #[test]
    fn unary_fact_object_is_the_relation() {
        let f = fact(
            "HEDGE-1",
            "hostile",
            vec![Value::Number(42)],
            "42 is hostile",
        );
        let r = evaluate_grounding(
            &Claim::new("42", "is", "hostile"),
            &[f],
            GroundingThresholds::default(),
        );
        assert!(r.verdict.is_grounded());
        assert!(r.matches[0].subject && r.matches[0].object && !r.matches[0].predicate);
    }

    #[test]
    fn predicate_in_text_needs_content_words_in_order() {
        let f = fact(
            "HEDGE-1",
            "member",
            vec![Value::Number(42), Value::Number(7)],
            "42 is a member of group 7",
        );
        let opts = GroundingOptions::default();
        assert!(predicate_matches("is a member of", &f, &opts));
        assert!(!predicate_matches("is a", &f, &opts));
        assert!(!predicate_matches("is not a member of", &f, &opts));
        let off = GroundingOptions {
            predicate_in_text: false,
            ..opts
        };
        assert!(!predicate_matches("is a member of", &f, &off));
    }
}
