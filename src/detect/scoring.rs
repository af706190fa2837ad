//! Confidence scoring and deduplication of candidate flags.
//!
//! A flag's confidence starts at its type's base severity, times its detector's
//! weight, and is adjusted by four kinds of evidence, each as
//! `score ×= w·f + (1 − w)` (a factor of 1 leaves it unchanged), then clamped to
//! [0, 1]:
//!
//! | Evidence | Weight *w* | Factor *f* |
//! | --- | --- | --- |
//! | fact base | 0.35 | contradicts: 1 + 0.3 × its confidence; cannot tell: 1; supports: 0.5 |
//! | dialogue | 0.25 | contradicts: 1 + 0.25 × its confidence; agrees: 0.7 |
//! | linguistic signals | 0.20 | product over the flag's sentences' signals (1 with none) |
//! | consistency | 0.20 | 1 + min(0.1 × related flags, 0.3) |
//!
//! Evidence a detector did not consult is left out (no factor).

use serde::{Deserialize, Serialize};

use super::DetectorConfig;
use super::HallucinationType;
use super::detectors::{Analysis, HistoryEvidence, KbEvidence, RawFlag};

/// Weights of the evidence kinds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EvidenceWeights {
    /// Fact-base evidence.
    pub kb_evidence: f64,
    /// Dialogue-history evidence.
    pub history_evidence: f64,
    /// Linguistic signals.
    pub linguistic_signals: f64,
    /// Consistency with the other flags.
    pub consistency: f64,
}

impl Default for EvidenceWeights {
    fn default() -> Self {
        EvidenceWeights {
            kb_evidence: 0.35,
            history_evidence: 0.25,
            linguistic_signals: 0.20,
            consistency: 0.20,
        }
    }
}

/// A linguistic signal of a sentence.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "signal", rename_all = "snake_case")]
pub enum LinguisticSignal {
    /// "might", "I think", "probably": the writer is unsure (lowers confidence).
    Hedging {
        /// 0–1.
        strength: f64,
    },
    /// "definitely", "without a doubt" (raises confidence).
    Overconfidence {
        /// 0–1.
        strength: f64,
    },
    /// "some", "several" (neutral).
    Vagueness {
        /// 0–1.
        strength: f64,
    },
    /// "actually", "to clarify", "sorry" (lowers confidence).
    SelfCorrection,
    /// "as I mentioned", "of course", "clearly" (raises confidence).
    CertaintyMarker,
}

const HEDGES: &[(&str, f64)] = &[
    ("might", 0.8),
    ("may", 0.6),
    ("could", 0.5),
    ("possibly", 0.8),
    ("perhaps", 0.8),
    ("maybe", 0.8),
    ("probably", 0.5),
    ("likely", 0.5),
    ("presumably", 0.6),
    ("i think", 0.6),
    ("i believe", 0.6),
    ("it seems", 0.6),
    ("seems", 0.5),
    ("appears", 0.5),
    ("not sure", 0.9),
    ("not certain", 0.9),
    ("as far as i know", 0.7),
    ("if i recall", 0.7),
    ("unclear", 0.6),
    ("reportedly", 0.5),
    ("apparently", 0.5),
    ("i guess", 0.7),
    ("can not confirm", 0.9),
    ("can not verify", 0.9),
    ("unable to confirm", 0.9),
    ("unable to verify", 0.9),
    ("could not verify", 0.9),
    ("i do not know", 0.9),
    ("not able to confirm", 0.9),
];

const OVERCONFIDENT: &[(&str, f64)] = &[
    ("definitely", 0.8),
    ("certainly", 0.7),
    ("undoubtedly", 0.9),
    ("absolutely", 0.8),
    ("without a doubt", 0.9),
    ("no doubt", 0.8),
    ("guaranteed", 0.9),
    ("for sure", 0.8),
    ("always", 0.5),
    ("100", 0.3),
];

const CERTAINTY: &[&str] = &[
    "as i mentioned",
    "as mentioned",
    "as i said",
    "as noted",
    "as you know",
    "of course",
    "clearly",
    "obviously",
    "in fact",
    "it is well known",
    "everyone knows",
];

const SELF_CORRECTION: &[&str] = &[
    "actually",
    "correction",
    "i mean",
    "sorry",
    "to clarify",
    "i misspoke",
    "let me correct",
    "rather",
];

const VAGUE: &[&str] = &["some", "several", "various", "a number of", "many", "a few"];

/// The signals in a text's words (lower-cased word tokens, in order).
pub fn linguistic_signals<S: AsRef<str>>(words: &[S]) -> Vec<LinguisticSignal> {
    let words: Vec<&str> = words.iter().map(AsRef::as_ref).collect();
    let has = |phrase: &str| {
        let p: Vec<&str> = phrase.split(' ').collect();
        words.windows(p.len()).any(|w| w == p.as_slice())
    };
    let mut out = Vec::new();
    for &(p, s) in HEDGES {
        if has(p) {
            out.push(LinguisticSignal::Hedging { strength: s });
        }
    }
    for &(p, s) in OVERCONFIDENT {
        if has(p) {
            out.push(LinguisticSignal::Overconfidence { strength: s });
        }
    }
    if CERTAINTY.iter().any(|p| has(p)) {
        out.push(LinguisticSignal::CertaintyMarker);
    }
    if SELF_CORRECTION.iter().any(|p| has(p)) {
        out.push(LinguisticSignal::SelfCorrection);
    }
    if VAGUE.iter().any(|p| has(p)) {
        out.push(LinguisticSignal::Vagueness { strength: 0.5 });
    }
    out
}

/// The linguistic factor: the product of each signal's factor (1 with none).
pub fn linguistic_factor(signals: &[LinguisticSignal]) -> f64 {
    signals.iter().fold(1.0, |f, s| match s {
        LinguisticSignal::Hedging { strength } => f * (1.0 - 0.3 * strength),
        LinguisticSignal::Overconfidence { strength } => f * (1.0 + 0.2 * strength),
        LinguisticSignal::Vagueness { .. } => f,
        LinguisticSignal::SelfCorrection => f * 0.8,
        LinguisticSignal::CertaintyMarker => f * 1.15,
    })
}

/// A flag with its final confidence.
#[derive(Debug, Clone)]
pub(crate) struct Scored {
    pub raw: RawFlag,
    pub confidence: f64,
    pub signals: Vec<LinguisticSignal>,
}

fn overlaps(a: &RawFlag, b: &RawFlag) -> bool {
    a.start < b.end && b.start < a.end
}

fn claim_level(t: HallucinationType) -> bool {
    matches!(
        t,
        HallucinationType::WrongAttribute
            | HallucinationType::ContradictsFact
            | HallucinationType::FabricatedFact
            | HallucinationType::ContradictsPrior
    )
}

/// Merge duplicates: of flags of one type whose spans overlap, the most confident is
/// kept (its citations extended with the others'); an entity flag inside a
/// claim-level flag (wrong attribute, contradiction, fabricated fact) is dropped, the
/// claim-level flag saying more; an unsupported-claim flag on a sentence that has
/// another flag is dropped.
pub(crate) fn deduplicate(mut flags: Vec<RawFlag>) -> Vec<RawFlag> {
    flags.sort_by(|a, b| {
        b.detector_confidence
            .total_cmp(&a.detector_confidence)
            .then(a.start.cmp(&b.start))
    });
    let mut kept: Vec<RawFlag> = Vec::new();
    for f in flags {
        if let Some(k) = kept.iter_mut().find(|k| k.ty == f.ty && overlaps(k, &f)) {
            for c in f.citations {
                if !k.citations.contains(&c) {
                    k.citations.push(c);
                }
            }
            continue;
        }
        kept.push(f);
    }
    let snapshot = kept.clone();
    kept.retain(|f| match f.ty {
        HallucinationType::NonexistentEntity => !snapshot
            .iter()
            .any(|o| claim_level(o.ty) && o.start <= f.start && f.end <= o.end),
        HallucinationType::UnsupportedClaim => !snapshot.iter().any(|o| {
            o.ty != HallucinationType::UnsupportedClaim
                && o.sentences.iter().any(|s| f.sentences.contains(s))
        }),
        _ => true,
    });
    kept.sort_by_key(|f| (f.start, f.end, f.ty));
    kept
}

/// Deduplicate and score every candidate.
pub(crate) fn score_all(
    raw: Vec<RawFlag>,
    a: &Analysis<'_>,
    config: &DetectorConfig,
) -> Vec<Scored> {
    let flags = deduplicate(raw);
    let w = &config.evidence_weights;
    let mut out = Vec::with_capacity(flags.len());
    for (i, f) in flags.iter().enumerate() {
        let mut score = f.ty.base_severity() * config.detector_weights.weight(f.ty);
        if let Some(kb) = f.kb {
            let factor = match kb {
                KbEvidence::Contradicts(c) => 1.0 + 0.3 * c,
                KbEvidence::Unverifiable => 1.0,
                KbEvidence::Supports => 0.5,
            };
            score *= w.kb_evidence * factor + (1.0 - w.kb_evidence);
        }
        if let Some(h) = f.history {
            let factor = match h {
                HistoryEvidence::Contradicts(c) => 1.0 + 0.25 * c,
                HistoryEvidence::Agrees => 0.7,
            };
            score *= w.history_evidence * factor + (1.0 - w.history_evidence);
        }
        let mut signals = Vec::new();
        for &s in &f.sentences {
            if let Some(sentence) = a.sentences.get(s) {
                let words: Vec<&str> = sentence
                    .toks
                    .iter()
                    .filter(|t| !(t.lower == "may" && t.cap))
                    .map(|t| t.lower.as_str())
                    .collect();
                signals.extend(linguistic_signals(&words));
            }
        }
        let lf = linguistic_factor(&signals);
        score *= w.linguistic_signals * lf + (1.0 - w.linguistic_signals);
        let related = flags
            .iter()
            .enumerate()
            .filter(|&(j, o)| {
                j != i
                    && (o.ty == f.ty
                        || o.content.contains(&f.content)
                        || f.content.contains(&o.content))
            })
            .count();
        let cf = 1.0 + (0.1 * related as f64).min(0.3);
        score *= w.consistency * cf + (1.0 - w.consistency);
        out.push(Scored {
            raw: f.clone(),
            confidence: score.clamp(0.0, 1.0),
            signals,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linguistic_factors() {
        let s = linguistic_signals(&["i", "think", "alice", "might", "work", "there"]);
        assert_eq!(s.len(), 2);
        let f = linguistic_factor(&s);
        assert!((f - (1.0 - 0.3 * 0.6) * (1.0 - 0.3 * 0.8)).abs() < 1e-12);
        assert_eq!(linguistic_factor(&[]), 1.0);
        assert!(linguistic_factor(&[LinguisticSignal::CertaintyMarker]) > 1.0);
    }
}
