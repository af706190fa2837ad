//! The detection report: flags, mitigation actions, the revised answer, the claims
//! read, and metrics. Its JSON mirrors the specification's result structure
//! (`flags`, `actions`, `mitigation`, `detection`, `metrics`).

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::detectors::Analysis;
use super::mitigation::MitigationAction;
use super::scoring::{LinguisticSignal, Scored};
use super::{DetectorConfig, HallucinationType};

/// A byte range of the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// A proposed replacement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Correction {
    /// What to replace.
    pub span: Span,
    /// What to put there.
    pub replacement: String,
    /// Where it comes from: citation tags, or the dialogue turn.
    pub source: String,
}

/// One detected hallucination.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HallucinationFlag {
    /// Where it is in the answer.
    pub span: Span,
    /// The flagged text.
    pub content: String,
    /// Its type.
    pub hallucination_type: HallucinationType,
    /// How sure detection is, 0–1.
    pub confidence: f64,
    /// The type's user-facing description.
    pub description: String,
    /// What to say or check instead.
    pub suggestion: Option<String>,
    /// Why it was flagged.
    pub evidence: Option<String>,
    /// Citation tags of the facts behind the evidence.
    pub citations: Vec<String>,
    /// The detector's own confidence, before scoring.
    pub detector_confidence: f64,
    /// Linguistic signals of its sentences.
    pub signals: Vec<LinguisticSignal>,
    /// A fix the fact base or the dialogue gives.
    pub correction: Option<Correction>,
    /// Why a person should decide instead of an automatic fix.
    pub escalation: Option<String>,
    /// The sentence(s) it lies in.
    pub sentence_span: Span,
}

/// The flag counts the specification's `detection` key holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetectionSummary {
    /// Flags reported.
    pub total_flags: usize,
    /// Reported with confidence ≥ 0.8.
    pub high_confidence: usize,
    /// Reported with 0.5 ≤ confidence < 0.8.
    pub medium_confidence: usize,
    /// Reported with confidence < 0.5 (only with a threshold below 0.5).
    pub low_confidence: usize,
    /// Candidates scored below the threshold (not reported).
    pub below_threshold: usize,
    /// The threshold applied.
    pub threshold: f64,
}

/// What mitigation did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MitigationSummary {
    /// Actions other than `None`.
    pub action_count: usize,
    /// `Correct` actions.
    pub corrections_applied: usize,
    /// Whether the answer should be regenerated.
    pub regeneration_needed: bool,
    /// `Escalate` actions.
    pub escalations: usize,
}

/// Counters of one detection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Wall time of `detect`, in milliseconds.
    pub detection_time_ms: f64,
    /// Sentences of the answer.
    pub segments_analyzed: usize,
    /// Claims checked against the fact base.
    pub claims_checked: usize,
    /// Entity mentions looked up.
    pub entities_verified: usize,
    /// Dialogue turns read.
    pub history_turns: usize,
    /// Reported flags with confidence ≥ 0.8.
    pub high_confidence: usize,
    /// Reported flags with 0.5 ≤ confidence < 0.8.
    pub medium_confidence: usize,
    /// Reported flags with confidence < 0.5.
    pub low_confidence: usize,
}

/// A claim read from the answer and what the fact base says about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimReport {
    /// Where it is.
    pub span: Span,
    /// The words matched.
    pub text: String,
    /// Its relation.
    pub relation: String,
    /// The claimed fact in the pack's words (`not: …` for a denial).
    pub fact: String,
    /// A denial.
    pub negated: bool,
    /// `supported`, `supported_negative`, `wrong_value`, `denied`, `ruled_out`,
    /// `absent`, `unchecked` (or `hypothetical`).
    pub verdict: String,
}

/// Everything one detection found and decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetectionReport {
    /// Flags at or above the threshold, in answer order.
    pub flags: Vec<HallucinationFlag>,
    /// Mitigation actions, most confident flag first.
    pub actions: Vec<MitigationAction>,
    /// The answer with corrections, removals and annotations applied.
    pub revised_answer: String,
    /// Flag counts.
    pub detection: DetectionSummary,
    /// What mitigation did.
    pub mitigation: MitigationSummary,
    /// Counters.
    pub metrics: Metrics,
    /// The claims read.
    pub claims: Vec<ClaimReport>,
    /// The reference date.
    pub today: String,
}

impl DetectionReport {
    /// Whether any flag reached the threshold.
    pub fn flagged(&self) -> bool {
        !self.flags.is_empty()
    }

    /// The types flagged, each once, in type order.
    pub fn types(&self) -> Vec<HallucinationType> {
        let mut t: Vec<HallucinationType> =
            self.flags.iter().map(|f| f.hallucination_type).collect();
        t.sort();
        t.dedup();
        t
    }

    /// The report for a person.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if self.flags.is_empty() {
            out.push_str("no hallucination detected");
        } else {
            out.push_str(&format!("{} flag(s)", self.flags.len()));
        }
        out.push_str(&format!(
            " ({} sentences, {} claims, {} entities; {:.1} ms)\n",
            self.metrics.segments_analyzed,
            self.metrics.claims_checked,
            self.metrics.entities_verified,
            self.metrics.detection_time_ms
        ));
        for f in &self.flags {
            out.push_str(&format!(
                "\n{} {:.2} at {}..{}: {}\n  {}\n",
                f.hallucination_type,
                f.confidence,
                f.span.start,
                f.span.end,
                f.content,
                f.description
            ));
            if let Some(s) = &f.suggestion {
                out.push_str(&format!("  suggestion: {s}\n"));
            }
            if let Some(e) = &f.evidence {
                out.push_str(&format!("  evidence: {e}\n"));
            }
        }
        if self
            .actions
            .iter()
            .any(|a| !matches!(a, MitigationAction::None))
        {
            out.push_str("\nactions:\n");
            for a in &self.actions {
                let line = match a {
                    MitigationAction::None => continue,
                    MitigationAction::Flag { span, annotation } => {
                        format!("flag {}..{} {annotation}", span.start, span.end)
                    }
                    MitigationAction::Correct {
                        original,
                        replacement,
                        source,
                        ..
                    } => format!("correct \"{original}\" → \"{replacement}\" ({source})"),
                    MitigationAction::Remove { span, reason } => {
                        format!("remove {}..{} ({reason})", span.start, span.end)
                    }
                    MitigationAction::Regenerate { guidance } => format!("regenerate:\n{guidance}"),
                    MitigationAction::Escalate { span, reason } => {
                        format!("escalate {}..{}: {reason}", span.start, span.end)
                    }
                };
                out.push_str(&format!("  {line}\n"));
            }
            if !self.mitigation.regeneration_needed {
                out.push_str(&format!("\nrevised answer:\n{}\n", self.revised_answer));
            }
        }
        out
    }
}

pub(crate) fn flag_of(s: &Scored, a: &Analysis<'_>) -> HallucinationFlag {
    let r = &s.raw;
    let sentence_span = {
        let spans: Vec<(usize, usize)> = r
            .sentences
            .iter()
            .filter_map(|&i| a.sentences.get(i))
            .map(|x| (x.start, x.end))
            .collect();
        match (
            spans.iter().map(|x| x.0).min(),
            spans.iter().map(|x| x.1).max(),
        ) {
            (Some(s), Some(e)) => Span { start: s, end: e },
            _ => Span {
                start: r.start,
                end: r.end,
            },
        }
    };
    HallucinationFlag {
        span: Span {
            start: r.start,
            end: r.end,
        },
        content: r.content.clone(),
        hallucination_type: r.ty,
        confidence: (s.confidence * 1e4).round() / 1e4,
        description: r.ty.description().to_string(),
        suggestion: r.suggestion.clone(),
        evidence: r.evidence.clone(),
        citations: r.citations.clone(),
        detector_confidence: (r.detector_confidence * 1e4).round() / 1e4,
        signals: s.signals.clone(),
        correction: r.correction.as_ref().map(|c| Correction {
            span: Span {
                start: c.start,
                end: c.end,
            },
            replacement: c.replacement.clone(),
            source: c.source.clone(),
        }),
        escalation: r.escalate.clone(),
        sentence_span,
    }
}

pub(crate) fn build(
    answer: &str,
    a: &Analysis<'_>,
    scored: &[Scored],
    config: &DetectorConfig,
    started: Instant,
) -> DetectionReport {
    let threshold = config.detection_threshold;
    let flags: Vec<HallucinationFlag> = scored
        .iter()
        .filter(|s| s.confidence >= threshold)
        .map(|s| flag_of(s, a))
        .collect();
    let below = scored.len() - flags.len();
    let (actions, revised_answer) = super::mitigation::mitigate(answer, &flags, &config.mitigation);
    let band = |lo: f64, hi: f64| {
        flags
            .iter()
            .filter(|f| f.confidence >= lo && f.confidence < hi)
            .count()
    };
    let (high, medium, low) = (
        band(0.8, f64::INFINITY),
        band(0.5, 0.8),
        band(f64::NEG_INFINITY, 0.5),
    );
    let k = a.knowledge;
    let mut claims = Vec::new();
    for (s, vs) in a.sentences.iter().zip(&a.verdicts) {
        for (c, v) in s.claims.iter().zip(vs) {
            claims.push(ClaimReport {
                span: Span {
                    start: c.start,
                    end: c.end,
                },
                text: answer[c.start..c.end].to_string(),
                relation: k.fb.program().relation(c.rel).name.clone(),
                fact: k.say_claim(c),
                negated: c.negated,
                verdict: if c.hypothetical {
                    "hypothetical".into()
                } else {
                    v.as_str().into()
                },
            });
        }
    }
    let entities = a.sentences.iter().map(|s| s.mentions.len()).sum();
    let mitigation = MitigationSummary {
        action_count: actions
            .iter()
            .filter(|x| !matches!(x, MitigationAction::None))
            .count(),
        corrections_applied: actions
            .iter()
            .filter(|x| matches!(x, MitigationAction::Correct { .. }))
            .count(),
        regeneration_needed: actions
            .iter()
            .any(|x| matches!(x, MitigationAction::Regenerate { .. })),
        escalations: actions
            .iter()
            .filter(|x| matches!(x, MitigationAction::Escalate { .. }))
            .count(),
    };
    DetectionReport {
        detection: DetectionSummary {
            total_flags: flags.len(),
            high_confidence: high,
            medium_confidence: medium,
            low_confidence: low,
            below_threshold: below,
            threshold,
        },
        metrics: Metrics {
            detection_time_ms: started.elapsed().as_secs_f64() * 1000.0,
            segments_analyzed: a.sentences.len(),
            claims_checked: claims
                .iter()
                .filter(|c| c.verdict != "hypothetical")
                .count(),
            entities_verified: entities,
            history_turns: a.turns.len(),
            high_confidence: high,
            medium_confidence: medium,
            low_confidence: low,
        },
        flags,
        actions,
        revised_answer,
        mitigation,
        claims,
        today: config.today.to_string(),
    }
}
