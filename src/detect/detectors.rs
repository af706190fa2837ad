//! The eight detectors. Each reads the analysed answer (sentences, claims with the fact
//! base's verdicts, mentions, temporal expressions) and the analysed dialogue turns,
//! and proposes candidate flags with the evidence behind them; scoring decides how
//! sure each one is.

use std::collections::{BTreeSet, HashSet};

use crate::FactId;
use crate::value::Value;

use super::claims::{ArgValue, Claim, MentionKind, Sentence};
use super::knowledge::{Knowledge, Verdict};
use super::temporal::{Date, Tense, tense_of};
use super::text::stem;
use super::{DetectorConfig, HallucinationType, Role};

/// A dialogue turn, analysed.
pub(crate) struct HistoryTurn {
    pub id: u64,
    pub role: Role,
    pub sentences: Vec<Sentence>,
}

/// What the fact base says about a flag's content.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum KbEvidence {
    /// It contradicts the content (with this confidence).
    Contradicts(f64),
    /// It cannot tell.
    Unverifiable,
    /// It supports the content.
    Supports,
}

/// What the dialogue says about a flag's content.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum HistoryEvidence {
    /// An earlier turn contradicts it (with this confidence).
    Contradicts(f64),
    /// An earlier turn says the same.
    Agrees,
}

/// A replacement for part of the answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Correction {
    pub start: usize,
    pub end: usize,
    pub replacement: String,
    pub source: String,
}

/// A candidate flag before scoring.
#[derive(Debug, Clone)]
pub(crate) struct RawFlag {
    pub ty: HallucinationType,
    pub start: usize,
    pub end: usize,
    pub content: String,
    pub detector_confidence: f64,
    pub suggestion: Option<String>,
    pub evidence: Option<String>,
    pub citations: Vec<String>,
    pub kb: Option<KbEvidence>,
    pub history: Option<HistoryEvidence>,
    pub correction: Option<Correction>,
    /// Why a person should look at it instead of an automatic fix.
    pub escalate: Option<String>,
    pub sentences: Vec<usize>,
}

impl RawFlag {
    fn new(
        ty: HallucinationType,
        start: usize,
        end: usize,
        content: String,
        confidence: f64,
    ) -> RawFlag {
        RawFlag {
            ty,
            start,
            end,
            content,
            detector_confidence: confidence,
            suggestion: None,
            evidence: None,
            citations: Vec::new(),
            kb: None,
            history: None,
            correction: None,
            escalate: None,
            sentences: Vec::new(),
        }
    }
}

/// The answer and the dialogue, analysed, with every claim's verdict.
pub(crate) struct Analysis<'k> {
    pub knowledge: &'k Knowledge<'k>,
    pub sentences: Vec<Sentence>,
    /// Per sentence, per claim.
    pub verdicts: Vec<Vec<Verdict>>,
    pub turns: Vec<HistoryTurn>,
    pub config: DetectorConfig,
}

/// Facts corrected from with a confidence below this are escalated, not corrected.
pub(crate) const MIN_CORRECTION_CONFIDENCE: f64 = 0.8;

impl<'k> Analysis<'k> {
    pub fn new(
        knowledge: &'k Knowledge<'k>,
        sentences: Vec<Sentence>,
        turns: Vec<HistoryTurn>,
        config: &DetectorConfig,
    ) -> Analysis<'k> {
        let verdicts = sentences
            .iter()
            .map(|s| {
                s.claims
                    .iter()
                    .map(|c| {
                        if c.hypothetical {
                            Verdict::Unchecked
                        } else {
                            knowledge.check(c)
                        }
                    })
                    .collect()
            })
            .collect();
        Analysis {
            knowledge,
            sentences,
            verdicts,
            turns,
            config: config.clone(),
        }
    }

    fn claims(&self) -> impl Iterator<Item = (&Sentence, &Claim, &Verdict)> {
        self.sentences
            .iter()
            .zip(&self.verdicts)
            .flat_map(|(s, vs)| {
                s.claims
                    .iter()
                    .zip(vs)
                    .filter(|(c, _)| !c.hypothetical)
                    .map(move |(c, v)| (s, c, v))
            })
    }

    fn text(&self, start: usize, end: usize) -> String {
        self.sentences
            .iter()
            .find(|s| s.start <= start && end <= s.end)
            .map_or_else(String::new, |s| {
                s.text[start - s.start..end - s.start].to_string()
            })
    }

    fn claim_text(&self, c: &Claim) -> String {
        self.text(c.start, c.end)
    }

    fn cite(&self, fact: FactId) -> (String, Vec<String>) {
        let tags = self.knowledge.tags(fact);
        let said = self.knowledge.say(fact);
        let text = if tags.is_empty() {
            said
        } else {
            format!("{said} [{}]", tags.join(", "))
        };
        (text, tags)
    }
}

/// Run every enabled detector.
pub(crate) fn run(a: &Analysis<'_>) -> Vec<RawFlag> {
    let on = |t| a.config.enabled_detectors.enabled(t);
    let mut flags = Vec::new();
    if on(HallucinationType::FabricatedFact) {
        fabricated(a, &mut flags);
    }
    if on(HallucinationType::NonexistentEntity) {
        nonexistent(a, &mut flags);
    }
    if on(HallucinationType::WrongAttribute) {
        wrong_attribute(a, &mut flags);
    }
    if on(HallucinationType::ContradictsFact) {
        contradicts_fact(a, &mut flags);
    }
    if on(HallucinationType::ContradictsPrior) {
        contradicts_prior(a, &mut flags);
    }
    if on(HallucinationType::TemporalError) {
        temporal(a, &mut flags);
    }
    if on(HallucinationType::LogicalInconsistency) {
        logical(a, &mut flags);
    }
    if on(HallucinationType::UnsupportedClaim) {
        unsupported(a, &mut flags);
    }
    flags
}

/// The entity of a claim's first argument, if it is one known entity.
fn subject(c: &Claim) -> Option<usize> {
    match &c.args.first()?.value {
        ArgValue::Entity(ids) if ids.len() == 1 => Some(ids[0]),
        _ => None,
    }
}

fn fabricated(a: &Analysis<'_>, out: &mut Vec<RawFlag>) {
    let k = a.knowledge;
    let program = k.fb.program();
    for (s, c, v) in a.claims() {
        let Verdict::Absent { unknown } = v else {
            continue;
        };
        let relation = program.relation(c.rel);
        let text = a.claim_text(c);
        // The specification's fabrication confidence.
        let mut conf;
        let mut evidence;
        // An unknown name or description is the entity detector's to report.
        if let Some(col) = unknown
            && s.mentions.iter().any(|m| {
                !matches!(m.kind, MentionKind::Known { .. })
                    && m.start < c.args[*col].end
                    && c.args[*col].start < m.end
            })
        {
            continue;
        }
        if let Some(col) = unknown {
            conf = 0.85;
            evidence = format!(
                "the fact base knows no {} \"{}\"",
                relation.columns[*col].name, c.args[*col].text
            );
        } else {
            conf = 0.6;
            evidence = format!("no fact: {}", k.say_claim(c));
            if let Some(subj) = subject(c) {
                let e = &k.lexicon.entities[subj];
                if e.facts > 10 {
                    conf += 0.15;
                }
                // A commonly held attribute: most entities of the subject's kind have it.
                if k.common_attribute(c.rel) {
                    conf += 0.1;
                }
                let mut pattern = vec![None; relation.arity()];
                pattern[0] = Some(Value::Symbol(e.symbol.clone()));
                let known = k.find(c.rel, &pattern);
                if known.is_empty() {
                    conf -= 0.1;
                } else {
                    let said: Vec<String> = known.iter().take(3).map(|&f| a.cite(f).0).collect();
                    evidence.push_str(&format!("; known: {}", said.join("; ")));
                }
            }
        }
        if conf < 0.5 {
            continue;
        }
        let mut f = RawFlag::new(
            HallucinationType::FabricatedFact,
            c.start,
            c.end,
            text.clone(),
            conf,
        );
        f.suggestion = Some(format!("Could not verify: '{text}'"));
        f.evidence = Some(evidence);
        f.kb = Some(KbEvidence::Contradicts(conf));
        f.sentences = vec![s.index];
        if history_asserts(a, c) {
            f.history = Some(HistoryEvidence::Agrees);
        }
        out.push(f);
    }
    // Citations of tags that name nothing.
    for s in &a.sentences {
        let bad: Vec<&String> = s
            .tags
            .iter()
            .filter(|t| !k.knows_tag(t) && !a.config.allowed_tags.contains(*t))
            .collect();
        if bad.is_empty() {
            continue;
        }
        let list: Vec<&str> = bad.iter().map(|t| t.as_str()).collect();
        let mut f = RawFlag::new(
            HallucinationType::FabricatedFact,
            s.start,
            s.end,
            s.text.clone(),
            0.9,
        );
        f.suggestion = Some(format!("Could not verify: '{}'", s.text));
        f.evidence = Some(format!("cites {}, which names no fact", list.join(", ")));
        f.kb = Some(KbEvidence::Contradicts(0.9));
        f.sentences = vec![s.index];
        out.push(f);
    }
}

/// Whether an earlier turn asserted the same claim.
fn history_asserts(a: &Analysis<'_>, c: &Claim) -> bool {
    a.turns.iter().any(|t| {
        t.sentences.iter().any(|s| {
            s.claims.iter().any(|p| {
                !p.hypothetical && p.rel == c.rel && p.negated == c.negated && same_args(p, c)
            })
        })
    })
}

fn same_value(x: &ArgValue, y: &ArgValue) -> bool {
    match (x, y) {
        (ArgValue::Entity(a), ArgValue::Entity(b)) => a.iter().any(|i| b.contains(i)),
        (ArgValue::Number(a), ArgValue::Number(b)) => a == b,
        (ArgValue::Date(a), ArgValue::Date(b)) => match (a.full(), b.full()) {
            (Some(p), Some(q)) => p == q,
            (Some(p), None) => b.matches(p),
            (None, Some(q)) => a.matches(q),
            (None, None) => a == b,
        },
        (ArgValue::Name(a), ArgValue::Name(b)) | (ArgValue::Word(a), ArgValue::Word(b)) => {
            a.eq_ignore_ascii_case(b)
        }
        _ => false,
    }
}

/// Two values that certainly differ (an unresolved pronoun differs from nothing).
fn differ(x: &ArgValue, y: &ArgValue) -> bool {
    if matches!(x, ArgValue::Unresolved(_)) || matches!(y, ArgValue::Unresolved(_)) {
        return false;
    }
    if let (ArgValue::Date(a), ArgValue::Date(b)) = (x, y) {
        return match (a.full(), b.full()) {
            (Some(p), Some(q)) => p != q,
            (Some(p), None) => !b.matches(p),
            (None, Some(q)) => !a.matches(q),
            (None, None) => {
                (a.month.is_some() && b.month.is_some() && a.month != b.month)
                    || (a.day.is_some() && b.day.is_some() && a.day != b.day)
                    || (a.weekday.is_some() && b.weekday.is_some() && a.weekday != b.weekday)
            }
        };
    }
    !same_value(x, y)
}

fn same_args(p: &Claim, c: &Claim) -> bool {
    p.args.len() == c.args.len()
        && p.args
            .iter()
            .zip(&c.args)
            .all(|(x, y)| same_value(&x.value, &y.value))
}

/// Whether the dialogue's user turns mention `name` (case-insensitively).
fn user_mentions(a: &Analysis<'_>, name: &str) -> bool {
    let name = name.to_lowercase();
    a.turns.iter().filter(|t| t.role == Role::User).any(|t| {
        t.sentences.iter().any(|s| {
            s.mentions.iter().any(|m| {
                let m = m.text.to_lowercase();
                m == name || m.contains(&name) || name.contains(&m) && m.len() > 2
            })
        })
    })
}

const GENERIC: &[&str] = &[
    "the team",
    "the manager",
    "someone",
    "a person",
    "somebody",
    "the staff",
];

fn nonexistent(a: &Analysis<'_>, out: &mut Vec<RawFlag>) {
    let k = a.knowledge;
    for s in &a.sentences {
        for m in &s.mentions {
            let proper = match m.kind {
                MentionKind::ProperName => true,
                MentionKind::Description => false,
                MentionKind::Known { .. } => continue,
            };
            if user_mentions(a, &m.text) {
                continue;
            }
            let mut conf: f64 = 0.7 + if proper { 0.15 } else { 0.05 };
            let similar = k.lexicon.similar(&m.text);
            if !similar.is_empty() {
                conf -= 0.2;
            }
            let lower = m.text.to_lowercase();
            if GENERIC.iter().any(|g| lower.contains(g)) {
                conf -= 0.3;
            }
            if conf < 0.5 {
                continue;
            }
            let mut f = RawFlag::new(
                HallucinationType::NonexistentEntity,
                m.start,
                m.end,
                m.text.clone(),
                conf,
            );
            if similar.is_empty() {
                f.suggestion = Some(format!("Could not find entity: '{}'", m.text));
            } else {
                let names: Vec<String> = similar
                    .iter()
                    .take(3)
                    .map(|&id| format!("'{}'", k.lexicon.entities[id].display))
                    .collect();
                f.suggestion = Some(format!("Did you mean {}?", names.join(" or ")));
                if similar.len() == 1 {
                    f.correction = Some(Correction {
                        start: m.start,
                        end: m.end,
                        replacement: k.lexicon.entities[similar[0]].display.clone(),
                        source: "fact base (closest known name)".into(),
                    });
                }
            }
            f.evidence = Some("Not found in dialogue history or knowledge base".into());
            f.kb = Some(KbEvidence::Contradicts(conf));
            f.sentences = vec![s.index];
            out.push(f);
        }
    }
}

/// The answer's text for a value of the fact base, written like the claimed one.
fn replacement_text(a: &Analysis<'_>, c: &Claim, col: usize, fact: FactId) -> String {
    let k = a.knowledge;
    let v = &k.fb.args(fact)[col];
    let claimed = &c.args[col];
    if let (ArgValue::Date(expr), Value::Number(n)) = (&claimed.value, v)
        && let Some(d) = Date::from_yyyymmdd(*n)
    {
        return expr.write_like(d);
    }
    let full = k.value_text(fact.rel, col, v);
    // "Dave" is corrected to "Carol", "Dave Okafor" to "Carol Diaz".
    let claimed_words = claimed.text.split_whitespace().count();
    let full_words: Vec<&str> = full.split_whitespace().collect();
    if claimed_words == 1
        && full_words.len() > 1
        && claimed.text.chars().next().is_some_and(char::is_uppercase)
    {
        return full_words[0].to_string();
    }
    full
}

fn wrong_attribute(a: &Analysis<'_>, out: &mut Vec<RawFlag>) {
    let k = a.knowledge;
    for (s, c, v) in a.claims() {
        let Verdict::WrongValue { fact, col } = v else {
            continue;
        };
        let (said, tags) = a.cite(*fact);
        let text = a.claim_text(c);
        let fact_conf = k.fb.confidence(*fact);
        let mut f = RawFlag::new(HallucinationType::WrongAttribute, c.start, c.end, text, 0.9);
        let arg = &c.args[*col];
        let replacement = replacement_text(a, c, *col, *fact);
        f.suggestion = Some(k.say(*fact));
        f.evidence = Some(format!("fact base: {said}; the answer says {}", arg.text));
        f.citations = tags.clone();
        f.kb = Some(KbEvidence::Contradicts(fact_conf));
        f.sentences = vec![s.index];
        f.correction = Some(Correction {
            start: arg.start,
            end: arg.end,
            replacement,
            source: tags.join(", "),
        });
        if fact_conf < MIN_CORRECTION_CONFIDENCE {
            f.escalate = Some(format!(
                "the fact base's value has confidence {fact_conf:.2}; a person should confirm {said}"
            ));
        }
        out.push(f);
    }
}

fn contradicts_fact(a: &Analysis<'_>, out: &mut Vec<RawFlag>) {
    let k = a.knowledge;
    for (s, c, v) in a.claims() {
        let (fact, why) = match v {
            Verdict::Denied { fact } => (*fact, "the fact base holds"),
            Verdict::Blocked { blocker } => (*blocker, "the fact base rules it out:"),
            _ => continue,
        };
        let (said, tags) = a.cite(fact);
        let text = a.claim_text(c);
        let fact_conf = k.fb.confidence(fact);
        let mut f = RawFlag::new(
            HallucinationType::ContradictsFact,
            c.start,
            c.end,
            text,
            0.95,
        );
        f.suggestion = Some(k.say(fact));
        f.evidence = Some(format!("{why} {said}"));
        f.citations = tags.clone();
        f.kb = Some(KbEvidence::Contradicts(fact_conf));
        f.sentences = vec![s.index];
        f.correction = Some(Correction {
            start: c.start,
            end: c.end,
            replacement: format!("{} [{}]", k.say(fact), tags.join(", ")),
            source: tags.join(", "),
        });
        if fact_conf < MIN_CORRECTION_CONFIDENCE {
            f.escalate = Some(format!(
                "the contradicting fact has confidence {fact_conf:.2}; a person should confirm {said}"
            ));
        }
        out.push(f);
    }
}

fn contradicts_prior(a: &Analysis<'_>, out: &mut Vec<RawFlag>) {
    let program = a.knowledge.fb.program();
    for (s, c, v) in a.claims() {
        let relation = program.relation(c.rel);
        'turns: for turn in a.turns.iter().rev() {
            for ps in &turn.sentences {
                for p in ps
                    .claims
                    .iter()
                    .filter(|p| !p.hypothetical && p.rel == c.rel)
                {
                    // Direct negation: same fact, opposite polarity.
                    let (confidence, kind, col) = if p.negated != c.negated && same_args(p, c) {
                        (0.95, "direct negation", None)
                    } else if let Some(keys) = &relation.functional
                        && !p.negated
                        && !c.negated
                        && keys
                            .iter()
                            .all(|&k| same_value(&p.args[k].value, &c.args[k].value))
                        && let Some(col) = (0..c.args.len())
                            .filter(|x| !keys.contains(x))
                            .find(|&x| differ(&p.args[x].value, &c.args[x].value))
                    {
                        (0.85, "incompatible values", Some(col))
                    } else {
                        continue;
                    };
                    // Both claims are about the same fact (or the same key): similarity 1.
                    let similarity = 1.0;
                    let conf = confidence * similarity;
                    if conf < 0.6 {
                        continue;
                    }
                    let earlier = ps.text[p.start - ps.start..p.end - ps.start].to_string();
                    let text = a.claim_text(c);
                    let mut f = RawFlag::new(
                        HallucinationType::ContradictsPrior,
                        c.start,
                        c.end,
                        text,
                        conf,
                    );
                    f.suggestion = Some("This contradicts a previous statement".into());
                    f.evidence = Some(format!(
                        "Earlier: '{earlier}' (Turn {}, {}; {kind})",
                        turn.id,
                        match turn.role {
                            Role::User => "user",
                            Role::Assistant => "assistant",
                            Role::System => "system",
                        }
                    ));
                    f.history = Some(HistoryEvidence::Contradicts(conf));
                    f.kb = Some(match v {
                        Verdict::Supported { .. } | Verdict::SupportedNegative { .. } => {
                            KbEvidence::Supports
                        }
                        Verdict::WrongValue { fact, .. }
                        | Verdict::Denied { fact }
                        | Verdict::Blocked { blocker: fact } => {
                            KbEvidence::Contradicts(a.knowledge.fb.confidence(*fact))
                        }
                        _ => KbEvidence::Unverifiable,
                    });
                    f.sentences = vec![s.index];
                    if matches!(f.kb, Some(KbEvidence::Supports)) {
                        f.escalate = Some(format!(
                            "the fact base supports the answer, so turn {} was wrong; a person should reconcile the dialogue",
                            turn.id
                        ));
                    } else if let Some(col) = col {
                        f.correction = Some(Correction {
                            start: c.args[col].start,
                            end: c.args[col].end,
                            replacement: p.args[col].text.clone(),
                            source: format!("earlier conversation (turn {})", turn.id),
                        });
                    } else {
                        f.correction = Some(Correction {
                            start: c.start,
                            end: c.end,
                            replacement: earlier.clone(),
                            source: format!("earlier conversation (turn {})", turn.id),
                        });
                    }
                    out.push(f);
                    break 'turns;
                }
            }
        }
    }
}

/// A date an anchor of a before/after comparison stands for: a written full date, or
/// an entity with a date in the fact base.
fn anchors(a: &Analysis<'_>, s: &Sentence) -> Vec<(usize, usize, Date, Option<FactId>)> {
    let mut out = Vec::new();
    for t in &s.temporals {
        if let Some(d) = t.expr.full() {
            out.push((t.first, t.last, d, None));
        }
    }
    for m in &s.mentions {
        if let MentionKind::Known { ids, .. } = &m.kind
            && ids.len() == 1
            && let Some((d, f)) = a.knowledge.date_of(ids[0])
        {
            out.push((m.first, m.last, d, Some(f)));
        }
    }
    out.sort_by_key(|x| x.0);
    out
}

fn temporal(a: &Analysis<'_>, out: &mut Vec<RawFlag>) {
    let today = a.config.today;
    let k = a.knowledge;
    for s in &a.sentences {
        if s.hypothetical {
            continue;
        }
        let lower: Vec<&str> = s.toks.iter().map(|t| t.lower.as_str()).collect();
        for t in &s.temporals {
            let span = (s.toks[t.first].start, s.toks[t.last - 1].end);
            let surface = s.text[span.0 - s.start..span.1 - s.start].to_string();
            // Tense of the clause the date stands in: the claim around it, else the
            // sentence up to it.
            let claim = s
                .claims
                .iter()
                .find(|c| c.start <= span.0 && span.1 <= c.end);
            let tense = claim.map_or_else(|| tense_of(&lower[..t.first]), |c| c.tense);
            if let Some(d) = t.expr.full() {
                let wrong = match tense {
                    Tense::Past if d > today => Some("in the future but referenced in past tense"),
                    Tense::Future if d < today => {
                        Some("in the past but referenced in future tense")
                    }
                    _ => None,
                };
                if let Some(why) = wrong {
                    let mut f = RawFlag::new(
                        HallucinationType::TemporalError,
                        s.start,
                        s.end,
                        surface.clone(),
                        0.85,
                    );
                    f.suggestion = Some(format!("{d} is {why}"));
                    f.evidence = Some(format!("Current date: {today}"));
                    f.sentences = vec![s.index];
                    out.push(f);
                }
                if let Some(w) = t.expr.weekday
                    && w != d.weekday()
                {
                    let mut f = RawFlag::new(
                        HallucinationType::TemporalError,
                        span.0,
                        span.1,
                        surface.clone(),
                        0.85,
                    );
                    f.suggestion = Some(format!(
                        "{d} is a {}",
                        super::temporal::weekday_name(d.weekday())
                    ));
                    f.evidence = Some("the weekday does not match the date".into());
                    f.sentences = vec![s.index];
                    out.push(f);
                }
            }
            if let Some(y) = t.expr.year {
                if y > today.year + 10 {
                    let mut f = RawFlag::new(
                        HallucinationType::TemporalError,
                        span.0,
                        span.1,
                        surface.clone(),
                        0.90,
                    );
                    f.suggestion = Some(format!("Year {y} seems too far in the future"));
                    f.evidence = Some(format!("Current date: {today}"));
                    f.sentences = vec![s.index];
                    out.push(f);
                }
                // "last year in 2026", "next year (2024)".
                for (i, w) in lower.iter().enumerate() {
                    if lower.get(i + 1) != Some(&"year") {
                        continue;
                    }
                    let expected = match *w {
                        "last" | "previous" => today.year - 1,
                        "next" | "coming" => today.year + 1,
                        "this" => today.year,
                        _ => continue,
                    };
                    if y != expected {
                        let mut f = RawFlag::new(
                            HallucinationType::TemporalError,
                            s.start,
                            s.end,
                            s.text.clone(),
                            0.80,
                        );
                        f.suggestion = Some(format!("\"{w} year\" is {expected}, not {y}"));
                        f.evidence = Some(format!("Current date: {today}"));
                        f.sentences = vec![s.index];
                        out.push(f);
                    }
                }
            }
        }
        // Past tense about a dated thing of the future ("Alice attended the board
        // meeting" before it takes place).
        for c in &s.claims {
            if c.tense != Tense::Past || c.hypothetical || c.negated {
                continue;
            }
            for arg in &c.args {
                if let ArgValue::Entity(ids) = &arg.value
                    && ids.len() == 1
                    && let Some((d, fact)) = k.date_of(ids[0])
                    && d > today
                    && !s.temporals.iter().any(|t| t.expr.full().is_some())
                {
                    let (said, tags) = a.cite(fact);
                    let mut f = RawFlag::new(
                        HallucinationType::TemporalError,
                        c.start,
                        c.end,
                        a.claim_text(c),
                        0.85,
                    );
                    f.suggestion = Some(format!(
                        "{} is on {d}, in the future, but referenced in past tense",
                        arg.text
                    ));
                    f.evidence = Some(format!("Current date: {today}; fact base: {said}"));
                    f.citations = tags;
                    f.kb = Some(KbEvidence::Contradicts(k.fb.confidence(fact)));
                    f.sentences = vec![s.index];
                    out.push(f);
                }
            }
        }
        // Before / after.
        for o in orderings(a, s).into_iter().filter(|o| o.wrong) {
            let (l, r) = (o.left, o.right);
            let start = s.toks[l.0].start;
            let end = s.toks[r.1 - 1].end;
            let content = s.text[start - s.start..end - s.start].to_string();
            let mut f = RawFlag::new(HallucinationType::TemporalError, start, end, content, 0.80);
            f.suggestion = Some("Temporal ordering is inconsistent".into());
            f.evidence = Some(format!(
                "{} is actually {} {}",
                l.2,
                if o.before { "after" } else { "before" },
                r.2
            ));
            let facts: Vec<FactId> = [l.3, r.3].into_iter().flatten().collect();
            if !facts.is_empty() {
                let mut conf: f64 = 1.0;
                for f2 in &facts {
                    conf = conf.min(k.fb.confidence(*f2));
                    let (said, tags) = a.cite(*f2);
                    f.citations.extend(tags);
                    f.evidence = Some(format!(
                        "{}; fact base: {said}",
                        f.evidence.unwrap_or_default()
                    ));
                }
                f.kb = Some(KbEvidence::Contradicts(conf));
            }
            f.sentences = vec![s.index];
            out.push(f);
        }
    }
}

type Anchor = (usize, usize, Date, Option<FactId>);

/// A "before"/"after" statement of a sentence between its nearest dated anchors.
struct Ordering {
    left: Anchor,
    right: Anchor,
    before: bool,
    wrong: bool,
}

fn orderings(a: &Analysis<'_>, s: &Sentence) -> Vec<Ordering> {
    let anchors = anchors(a, s);
    let lower: Vec<&str> = s.toks.iter().map(|t| t.lower.as_str()).collect();
    let mut out = Vec::new();
    for (i, w) in lower.iter().enumerate() {
        let before = match (*w, lower.get(i + 1).copied()) {
            ("before", _) | ("earlier", Some("than")) | ("prior", Some("to")) | ("preceded", _) => {
                true
            }
            ("after", _) | ("later", Some("than")) | ("followed", _) => false,
            _ => continue,
        };
        let left = anchors.iter().rev().find(|x| x.1 <= i);
        let right = anchors.iter().find(|x| x.0 > i);
        let (Some(&l), Some(&r)) = (left, right) else {
            continue;
        };
        if l.2 == r.2 {
            continue;
        }
        let wrong = if before { l.2 > r.2 } else { l.2 < r.2 };
        out.push(Ordering {
            left: l,
            right: r,
            before,
            wrong,
        });
    }
    out
}

fn logical(a: &Analysis<'_>, out: &mut Vec<RawFlag>) {
    let program = a.knowledge.fb.program();
    let claims: Vec<(&Sentence, &Claim)> = a.claims().map(|(s, c, _)| (s, c)).collect();
    let checkable = |c: &Claim| {
        c.args
            .iter()
            .all(|x| !matches!(x.value, ArgValue::Unresolved(_)))
    };
    let mut seen = HashSet::new();
    for i in 0..claims.len() {
        for j in i + 1..claims.len() {
            let (si, ci) = claims[i];
            let (sj, cj) = claims[j];
            if ci.rel != cj.rel || !checkable(ci) || !checkable(cj) {
                continue;
            }
            let relation = program.relation(ci.rel);
            let found = if ci.negated != cj.negated && same_args(ci, cj) {
                Some((0.95, "Direct logical negation".to_string()))
            } else if let Some(keys) = &relation.functional
                && !ci.negated
                && !cj.negated
                && keys
                    .iter()
                    .all(|&k| same_value(&ci.args[k].value, &cj.args[k].value))
                && let Some(col) = (0..ci.args.len())
                    .filter(|x| !keys.contains(x))
                    .find(|&x| differ(&ci.args[x].value, &cj.args[x].value))
            {
                Some((
                    0.85,
                    format!(
                        "{} cannot be both {} and {}",
                        keys.iter()
                            .map(|&k| ci.args[k].text.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                        ci.args[col].text,
                        cj.args[col].text
                    ),
                ))
            } else {
                None
            };
            let Some((conf, why)) = found else { continue };
            if !seen.insert((ci.start, cj.start)) {
                continue;
            }
            let content = format!("'{}' vs '{}'", a.claim_text(ci), a.claim_text(cj));
            let mut f = RawFlag::new(
                HallucinationType::LogicalInconsistency,
                ci.start,
                cj.end,
                content,
                conf,
            );
            f.suggestion = Some("These statements contradict each other".into());
            f.evidence = Some(why);
            f.sentences = vec![si.index, sj.index];
            out.push(f);
        }
    }
    // "both running and not running"
    for s in &a.sentences {
        let t = &s.toks;
        for i in 0..t.len() {
            if t[i].lower != "both" {
                continue;
            }
            let Some(and) = (i + 2..t.len().min(i + 6)).find(|&k| t[k].lower == "and") else {
                continue;
            };
            if t.get(and + 1).map(|x| x.lower.as_str()) != Some("not") {
                continue;
            }
            let first: Vec<String> = t[i + 1..and].iter().map(|x| stem(&x.lower)).collect();
            let n = first.len();
            let second: Vec<String> = t[and + 2..(and + 2 + n).min(t.len())]
                .iter()
                .map(|x| stem(&x.lower))
                .collect();
            if first == second {
                let end = t[(and + 1 + n).min(t.len() - 1)].end;
                let content = s.text[t[i].start - s.start..end - s.start].to_string();
                let mut f = RawFlag::new(
                    HallucinationType::LogicalInconsistency,
                    t[i].start,
                    end,
                    content,
                    0.95,
                );
                f.suggestion = Some("A statement and its negation are asserted together".into());
                f.evidence = Some("Direct logical negation".into());
                f.sentences = vec![s.index];
                out.push(f);
            }
        }
    }
}

/// Words that make a sentence claim evidence it does not show.
const EVIDENTIAL: &[&str] = &[
    "studies show",
    "research shows",
    "studies have shown",
    "research has shown",
    "according to",
    "statistics",
    "data shows",
    "data show",
    "experts",
    "surveys",
    "survey",
    "reports indicate",
    "it is proven",
    "it is well known",
    "proven",
    "percent",
    "%",
];

/// Sentence openings that carry no factual content.
const META: &[&str] = &[
    "let me",
    "i can",
    "i'll",
    "i will",
    "i would",
    "would you",
    "feel free",
    "please",
    "sure",
    "happy to",
    "here is",
    "here's",
    "thanks",
    "thank you",
    "you can",
    "you could",
    "you may",
    "you might",
    "let's",
    "do you",
    "glad",
    "i hope",
    "hope this",
    "i'm not sure",
    "i am not sure",
    "i don't know",
    "i do not know",
    "i don't have",
    "i do not have",
    "no problem",
    "of course,",
    "good question",
    "great question",
    "in summary",
    "to summarize",
    "to sum up",
    "in short",
    "if you",
    "okay",
    "ok,",
    "certainly!",
    "absolutely!",
];

fn unsupported(a: &Analysis<'_>, out: &mut Vec<RawFlag>) {
    let k = a.knowledge;
    let claimed: HashSet<usize> = out
        .iter()
        .flat_map(|f| f.sentences.iter().copied())
        .collect();
    for (s, verdicts) in a.sentences.iter().zip(&a.verdicts) {
        if s.question || s.hypothetical || s.unverified || claimed.contains(&s.index) {
            continue;
        }
        if !s.tags.is_empty()
            && s.tags
                .iter()
                .all(|t| k.knows_tag(t) || a.config.allowed_tags.contains(t))
        {
            continue;
        }
        if verdicts.iter().any(|v| {
            matches!(
                v,
                Verdict::Supported { .. } | Verdict::SupportedNegative { .. }
            )
        }) {
            continue;
        }
        // An order of events the fact base's dates confirm is a verified claim.
        if orderings(a, s)
            .iter()
            .any(|o| !o.wrong && (o.left.3.is_some() || o.right.3.is_some()))
        {
            continue;
        }
        let lower = s.text.to_lowercase();
        if META.iter().any(|m| lower.starts_with(m)) {
            continue;
        }
        let evidential = EVIDENTIAL.iter().any(|e| lower.contains(e));
        let known: BTreeSet<usize> = s
            .mentions
            .iter()
            .filter_map(|m| match &m.kind {
                MentionKind::Known {
                    ids,
                    ordinary: false,
                } => Some(ids.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        let all_known: BTreeSet<usize> = s
            .mentions
            .iter()
            .filter_map(|m| match &m.kind {
                MentionKind::Known { ids, .. } => Some(ids.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        let pronoun = s
            .toks
            .iter()
            .find(|t| t.is_word())
            .is_some_and(|t| matches!(t.lower.as_str(), "he" | "she" | "they"));
        let numbers = s.toks.iter().any(|t| t.kind == super::text::Kind::Number);
        let factual = evidential
            || !s.claims.is_empty()
            || numbers
            || !s.temporals.is_empty()
            || !known.is_empty()
            || pronoun
            || s.mentions.iter().any(|m| m.kind == MentionKind::ProperName);
        if !factual {
            continue;
        }
        let kb = if supports_together(a, &all_known, s) {
            KbEvidence::Supports
        } else {
            KbEvidence::Unverifiable
        };
        let mut f = RawFlag::new(
            HallucinationType::UnsupportedClaim,
            s.start,
            s.end,
            s.text.clone(),
            0.5,
        );
        f.suggestion = Some("Cite the evidence for this statement or remove it".into());
        f.evidence = Some(if s.tags.is_empty() {
            "no verified claim and no citation".into()
        } else {
            format!("cites {} but no verified claim", s.tags.join(", "))
        });
        f.kb = Some(kb);
        f.sentences = vec![s.index];
        out.push(f);
    }
}

/// Whether the fact base relates what a sentence names: two of its entities, or an
/// entity and one of its dates or numbers, in one fact.
fn supports_together(a: &Analysis<'_>, known: &BTreeSet<usize>, s: &Sentence) -> bool {
    let k = a.knowledge;
    let program = k.fb.program();
    let numbers: Vec<Value> = s
        .temporals
        .iter()
        .filter_map(|t| t.expr.full())
        .map(|d| Value::Number(d.yyyymmdd()))
        .chain(
            s.toks
                .iter()
                .filter_map(|t| super::text::integer(&t.lower))
                .map(Value::Number),
        )
        .collect();
    for &id in known {
        let e = &k.lexicon.entities[id];
        for &(rel, col) in &e.columns {
            let mut pattern = vec![None; program.relation(rel).arity()];
            pattern[col] = Some(Value::Symbol(e.symbol.clone()));
            for f in k.find(rel, &pattern).into_iter().take(64) {
                let args = k.fb.args(f);
                let related = args.iter().enumerate().any(|(c, v)| {
                    c != col
                        && match v {
                            Value::Symbol(sym) => k
                                .lexicon
                                .by_symbol(sym)
                                .is_some_and(|other| other != id && known.contains(&other)),
                            other => numbers.contains(other),
                        }
                });
                if related {
                    return true;
                }
            }
        }
    }
    false
}
