//! What to do about the flags: annotate, correct, remove, ask for a new answer, or
//! hand to a person.
//!
//! Flags are taken most confident first. When [`REGENERATE_AT_LEAST`] or more reach
//! the regenerate threshold, the one action is [`MitigationAction::Regenerate`] with
//! guidance naming up to five issues. Otherwise, per flag:
//!
//! - a flag whose automatic fix would be unsafe (the fact base's value is itself
//!   uncertain, or the dialogue and the fact base disagree) is **escalated**;
//! - at or above the auto-correct threshold: **corrected** when a correction is known
//!   and fewer than `max_corrections` were made, else **removed** (its whole
//!   sentence), and once the maximum is reached only **flagged**;
//! - at or above the flag threshold: **flagged** (annotated with its type's
//!   description);
//! - below: no action.

use serde::{Deserialize, Serialize};

use super::HallucinationType;
use super::report::{HallucinationFlag, Span};

/// How many severe flags make the answer worth regenerating.
pub const REGENERATE_AT_LEAST: usize = 3;

/// Mitigation thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MitigationConfig {
    /// At or above: correct (or remove) automatically (default 0.7).
    pub auto_correct_threshold: f64,
    /// At or above: annotate (default 0.5).
    pub flag_threshold: f64,
    /// Flags at or above this count toward regeneration (default 0.9).
    pub regenerate_threshold: f64,
    /// Most corrections applied to one answer (default 3).
    pub max_corrections: usize,
}

impl Default for MitigationConfig {
    fn default() -> Self {
        MitigationConfig {
            auto_correct_threshold: 0.7,
            flag_threshold: 0.5,
            regenerate_threshold: 0.9,
            max_corrections: 3,
        }
    }
}

/// One mitigation action. Serialized with an `"action"` key naming the variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action")]
pub enum MitigationAction {
    /// Nothing to do.
    None,
    /// Annotate the span.
    Flag {
        /// What is annotated.
        span: Span,
        /// The annotation (`[This attribute appears incorrect]`).
        annotation: String,
    },
    /// Replace the span.
    Correct {
        /// What is replaced.
        span: Span,
        /// The text there now.
        original: String,
        /// The text to put there.
        replacement: String,
        /// Where the replacement comes from (citation tags, or the dialogue turn).
        source: String,
    },
    /// Delete the span (a whole sentence).
    Remove {
        /// What is removed.
        span: Span,
        /// Why.
        reason: String,
    },
    /// Ask the model for a new answer.
    Regenerate {
        /// What the new answer must fix.
        guidance: String,
    },
    /// Hand to a person.
    Escalate {
        /// What should be looked at.
        span: Span,
        /// Why.
        reason: String,
    },
}

impl MitigationAction {
    /// The variant's name.
    pub fn kind(&self) -> &'static str {
        match self {
            MitigationAction::None => "None",
            MitigationAction::Flag { .. } => "Flag",
            MitigationAction::Correct { .. } => "Correct",
            MitigationAction::Remove { .. } => "Remove",
            MitigationAction::Regenerate { .. } => "Regenerate",
            MitigationAction::Escalate { .. } => "Escalate",
        }
    }
}

/// The guidance for a regeneration: up to five issues.
fn guidance(flags: &[&HallucinationFlag]) -> String {
    let mut parts = vec!["Please regenerate your response, addressing these issues:".to_string()];
    for (i, f) in flags.iter().take(5).enumerate() {
        let n = i + 1;
        let c = &f.content;
        parts.push(match f.hallucination_type {
            HallucinationType::FabricatedFact => format!("{n}. Verify the fact: '{c}'"),
            HallucinationType::NonexistentEntity => format!("{n}. Check if '{c}' exists"),
            HallucinationType::WrongAttribute => format!("{n}. Verify attribute: '{c}'"),
            HallucinationType::ContradictsFact => format!(
                "{n}. Correct: '{c}' - {}",
                f.evidence.as_deref().unwrap_or("contradicts known facts")
            ),
            HallucinationType::ContradictsPrior => format!("{n}. Consistent with earlier: '{c}'"),
            _ => format!("{n}. Address: '{c}'"),
        });
    }
    parts.join("\n")
}

/// Decide the actions for `flags` (reported flags, any order) and apply them to
/// `answer`: corrections replace their spans, removals delete their sentences, flags
/// append their annotation after the span. Returns the actions (most confident flag
/// first) and the revised answer (the answer itself when regeneration is asked for).
pub(crate) fn mitigate(
    answer: &str,
    flags: &[HallucinationFlag],
    config: &MitigationConfig,
) -> (Vec<MitigationAction>, String) {
    let mut sorted: Vec<&HallucinationFlag> = flags.iter().collect();
    sorted.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then(a.span.start.cmp(&b.span.start))
    });
    let severe = sorted
        .iter()
        .filter(|f| f.confidence >= config.regenerate_threshold)
        .count();
    if severe >= REGENERATE_AT_LEAST {
        return (
            vec![MitigationAction::Regenerate {
                guidance: guidance(&sorted),
            }],
            answer.to_string(),
        );
    }
    let mut actions = Vec::new();
    let mut corrections = 0;
    for f in sorted {
        let annotate = || MitigationAction::Flag {
            span: f.span,
            annotation: format!("[{}]", f.hallucination_type.description()),
        };
        let action = if f.confidence < config.flag_threshold {
            MitigationAction::None
        } else if let Some(reason) = &f.escalation {
            MitigationAction::Escalate {
                span: f.span,
                reason: reason.clone(),
            }
        } else if f.confidence >= config.auto_correct_threshold {
            if corrections >= config.max_corrections {
                annotate()
            } else if let Some(c) = &f.correction {
                corrections += 1;
                MitigationAction::Correct {
                    span: c.span,
                    original: answer[c.span.start..c.span.end].to_string(),
                    replacement: c.replacement.clone(),
                    source: c.source.clone(),
                }
            } else {
                MitigationAction::Remove {
                    span: f.sentence_span,
                    reason: f.hallucination_type.description().to_string(),
                }
            }
        } else {
            annotate()
        };
        actions.push(action);
    }
    let revised = apply(answer, &actions);
    (actions, revised)
}

/// Apply corrections, removals and annotations to the text; an edit overlapping one
/// already applied is skipped.
fn apply(answer: &str, actions: &[MitigationAction]) -> String {
    // (start, end, replacement)
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let take = |s: usize, e: usize, r: String, edits: &mut Vec<(usize, usize, String)>| {
        let clash = edits
            .iter()
            .any(|(a, b, _)| (s < *b && *a < e) || (s == e && *a < s && s < *b));
        if !clash {
            edits.push((s, e, r));
        }
    };
    for a in actions {
        match a {
            MitigationAction::Correct {
                span, replacement, ..
            } => take(span.start, span.end, replacement.clone(), &mut edits),
            MitigationAction::Remove { span, .. } => {
                // Take the whitespace after the sentence with it.
                let rest = &answer[span.end..];
                let ws = rest.len() - rest.trim_start_matches([' ', '\t']).len();
                take(span.start, span.end + ws, String::new(), &mut edits);
            }
            _ => {}
        }
    }
    for a in actions {
        if let MitigationAction::Flag { span, annotation } = a {
            take(span.end, span.end, format!(" {annotation}"), &mut edits);
        }
    }
    edits.sort_by_key(|(s, e, _)| (std::cmp::Reverse(*s), std::cmp::Reverse(*e)));
    let mut out = answer.to_string();
    for (s, e, r) in edits {
        out.replace_range(s..e, &r);
    }
    out
}
