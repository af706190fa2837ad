//! Hallucination detection and mitigation: what is wrong with an answer, how sure we
//! are, and what to do about it — against the fact base and the dialogue history,
//! deterministically and offline.
//!
//! The pipeline (the full specification is `docs/detection.md`):
//!
//! 1. **Segment** the answer into sentences ([`crate::answer::segment`]) and analyse
//!    each: tokens, temporal expressions, entity mentions (the lexicon of the fact
//!    base's symbols and the pack's alias relation, in `lexicon`) and claims (the
//!    pack's `.text` verbalisations read in reverse, in `claims`).
//! 2. **Check** every claim against the fact base (`knowledge`), and run the eight
//!    detectors (`detectors`) over the answer and the last turns of the dialogue.
//! 3. **Score** each candidate flag: its type's base severity adjusted by fact-base,
//!    dialogue, linguistic and consistency evidence (`scoring`); merge duplicates;
//!    keep those at or above the detection threshold.
//! 4. **Mitigate**: flag, correct (with the fact base's value and its citation tag),
//!    remove, ask for regeneration, or escalate (`mitigation`); the [`report`] carries
//!    flags, actions, the revised answer and metrics.
//!
//! Architecture: this layer reads a [`FactBase`] through its public queries and the
//! program's relations (`.text`, `.functional`, rules); it evaluates nothing.

mod claims;
mod detectors;
mod knowledge;
mod lexicon;
pub mod mitigation;
pub mod report;
pub mod scoring;
pub mod temporal;
mod text;

use std::collections::BTreeSet;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::diag::{Diagnostic, ErrorCode, Result};
use crate::eval::FactBase;
use crate::value::ColumnType;

pub use mitigation::{MitigationAction, MitigationConfig};
pub use report::{DetectionReport, HallucinationFlag, Metrics, Span};
pub use scoring::{EvidenceWeights, LinguisticSignal};
pub use temporal::Date;

use claims::{Context, Extractor, Template};
use knowledge::Knowledge;

/// The eight kinds of hallucination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum HallucinationType {
    /// A factual claim the fact base has nothing for.
    FabricatedFact,
    /// A person, place or thing that does not exist.
    NonexistentEntity,
    /// A known entity with a wrong value of a functional attribute.
    WrongAttribute,
    /// A statement the fact base contradicts.
    ContradictsFact,
    /// A statement contradicting an earlier turn of the dialogue.
    ContradictsPrior,
    /// An assertion with no evidence behind it.
    UnsupportedClaim,
    /// An impossible timeline or a wrong temporal relation.
    TemporalError,
    /// The answer contradicts itself.
    LogicalInconsistency,
}

impl HallucinationType {
    /// Every type, in declaration order.
    pub const ALL: [HallucinationType; 8] = [
        HallucinationType::FabricatedFact,
        HallucinationType::NonexistentEntity,
        HallucinationType::WrongAttribute,
        HallucinationType::ContradictsFact,
        HallucinationType::ContradictsPrior,
        HallucinationType::UnsupportedClaim,
        HallucinationType::TemporalError,
        HallucinationType::LogicalInconsistency,
    ];

    /// The starting confidence of a flag of this type.
    pub fn base_severity(self) -> f64 {
        match self {
            Self::FabricatedFact => 0.95,
            Self::NonexistentEntity => 0.90,
            Self::WrongAttribute => 0.75,
            Self::ContradictsFact => 0.95,
            Self::ContradictsPrior => 0.80,
            Self::UnsupportedClaim => 0.50,
            Self::TemporalError => 0.65,
            Self::LogicalInconsistency => 0.60,
        }
    }

    /// The user-facing description.
    pub fn description(self) -> &'static str {
        match self {
            Self::FabricatedFact => "This fact could not be verified",
            Self::NonexistentEntity => "This entity could not be found",
            Self::WrongAttribute => "This attribute appears incorrect",
            Self::ContradictsFact => "This contradicts known information",
            Self::ContradictsPrior => "This contradicts earlier in the conversation",
            Self::UnsupportedClaim => "This claim has no supporting evidence",
            Self::TemporalError => "The timeline appears incorrect",
            Self::LogicalInconsistency => "This contains a logical contradiction",
        }
    }

    /// The type's name (`"WrongAttribute"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FabricatedFact => "FabricatedFact",
            Self::NonexistentEntity => "NonexistentEntity",
            Self::WrongAttribute => "WrongAttribute",
            Self::ContradictsFact => "ContradictsFact",
            Self::ContradictsPrior => "ContradictsPrior",
            Self::UnsupportedClaim => "UnsupportedClaim",
            Self::TemporalError => "TemporalError",
            Self::LogicalInconsistency => "LogicalInconsistency",
        }
    }

    /// The type named `s` (as [`as_str`](Self::as_str) writes it).
    pub fn parse(s: &str) -> Option<HallucinationType> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

impl std::fmt::Display for HallucinationType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which detectors run (all by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnabledDetectors {
    /// Claims the fact base has nothing for (and citations of unknown tags).
    pub fabricated_facts: bool,
    /// Names the lexicon and the dialogue do not know.
    pub nonexistent_entities: bool,
    /// Functional attributes with another value in the fact base.
    pub wrong_attributes: bool,
    /// Denials of facts that hold, assertions of facts the pack rules out.
    pub kb_contradictions: bool,
    /// Claims contradicting the last turns of the dialogue.
    pub history_contradictions: bool,
    /// Factual sentences with neither a verified claim nor an allowed citation.
    pub unsupported_claims: bool,
    /// Tense against the reference date, implausible years, before/after order.
    pub temporal_errors: bool,
    /// A claim and its negation, or two values of a functional attribute.
    pub logical_inconsistencies: bool,
}

impl Default for EnabledDetectors {
    fn default() -> Self {
        EnabledDetectors {
            fabricated_facts: true,
            nonexistent_entities: true,
            wrong_attributes: true,
            kb_contradictions: true,
            history_contradictions: true,
            unsupported_claims: true,
            temporal_errors: true,
            logical_inconsistencies: true,
        }
    }
}

impl EnabledDetectors {
    /// Whether the detector of `ty` runs.
    pub fn enabled(&self, ty: HallucinationType) -> bool {
        match ty {
            HallucinationType::FabricatedFact => self.fabricated_facts,
            HallucinationType::NonexistentEntity => self.nonexistent_entities,
            HallucinationType::WrongAttribute => self.wrong_attributes,
            HallucinationType::ContradictsFact => self.kb_contradictions,
            HallucinationType::ContradictsPrior => self.history_contradictions,
            HallucinationType::UnsupportedClaim => self.unsupported_claims,
            HallucinationType::TemporalError => self.temporal_errors,
            HallucinationType::LogicalInconsistency => self.logical_inconsistencies,
        }
    }

    /// Only the detectors of `types`.
    pub fn only(types: &[HallucinationType]) -> EnabledDetectors {
        let on = |t| types.contains(&t);
        EnabledDetectors {
            fabricated_facts: on(HallucinationType::FabricatedFact),
            nonexistent_entities: on(HallucinationType::NonexistentEntity),
            wrong_attributes: on(HallucinationType::WrongAttribute),
            kb_contradictions: on(HallucinationType::ContradictsFact),
            history_contradictions: on(HallucinationType::ContradictsPrior),
            unsupported_claims: on(HallucinationType::UnsupportedClaim),
            temporal_errors: on(HallucinationType::TemporalError),
            logical_inconsistencies: on(HallucinationType::LogicalInconsistency),
        }
    }
}

/// A multiplier per detector applied to its flags' scores (1.0 each by default).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DetectorWeights {
    /// For `FabricatedFact`.
    pub fabricated_facts: f64,
    /// For `NonexistentEntity`.
    pub nonexistent_entities: f64,
    /// For `WrongAttribute`.
    pub wrong_attributes: f64,
    /// For `ContradictsFact`.
    pub kb_contradictions: f64,
    /// For `ContradictsPrior`.
    pub history_contradictions: f64,
    /// For `UnsupportedClaim`.
    pub unsupported_claims: f64,
    /// For `TemporalError`.
    pub temporal_errors: f64,
    /// For `LogicalInconsistency`.
    pub logical_inconsistencies: f64,
}

impl Default for DetectorWeights {
    fn default() -> Self {
        DetectorWeights {
            fabricated_facts: 1.0,
            nonexistent_entities: 1.0,
            wrong_attributes: 1.0,
            kb_contradictions: 1.0,
            history_contradictions: 1.0,
            unsupported_claims: 1.0,
            temporal_errors: 1.0,
            logical_inconsistencies: 1.0,
        }
    }
}

impl DetectorWeights {
    /// The weight of `ty`'s detector.
    pub fn weight(&self, ty: HallucinationType) -> f64 {
        match ty {
            HallucinationType::FabricatedFact => self.fabricated_facts,
            HallucinationType::NonexistentEntity => self.nonexistent_entities,
            HallucinationType::WrongAttribute => self.wrong_attributes,
            HallucinationType::ContradictsFact => self.kb_contradictions,
            HallucinationType::ContradictsPrior => self.history_contradictions,
            HallucinationType::UnsupportedClaim => self.unsupported_claims,
            HallucinationType::TemporalError => self.temporal_errors,
            HallucinationType::LogicalInconsistency => self.logical_inconsistencies,
        }
    }
}

/// Detection settings. The defaults are the specification's constants where it gives
/// them, and the values chosen in `docs/detection.md` where it does not.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectorConfig {
    /// Least confidence a flag needs to be reported (default 0.5).
    pub detection_threshold: f64,
    /// Which detectors run.
    pub enabled_detectors: EnabledDetectors,
    /// A multiplier per detector.
    pub detector_weights: DetectorWeights,
    /// Most claims checked per answer (default 64); later ones are not checked.
    pub max_claims: usize,
    /// Weights of the evidence kinds in scoring.
    pub evidence_weights: EvidenceWeights,
    /// Mitigation thresholds.
    pub mitigation: MitigationConfig,
    /// How many of the latest dialogue turns are consulted (default 10).
    pub history_turns: usize,
    /// The reference date for tense and plausibility (default: today, UTC).
    pub today: Date,
    /// The relation giving entities' names, `(entity, name)` (default `alias`, used
    /// when the program has it with two symbol columns).
    pub alias_relation: Option<String>,
    /// Citation tags allowed beyond those the fact base names (`STEP-n` of proofs).
    pub allowed_tags: BTreeSet<String>,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        DetectorConfig {
            detection_threshold: 0.5,
            enabled_detectors: EnabledDetectors::default(),
            detector_weights: DetectorWeights::default(),
            max_claims: 64,
            evidence_weights: EvidenceWeights::default(),
            mitigation: MitigationConfig::default(),
            history_turns: 10,
            today: Date::today(),
            alias_relation: Some("alias".into()),
            allowed_tags: BTreeSet::new(),
        }
    }
}

/// Who said a dialogue turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person.
    User,
    /// The model.
    #[default]
    Assistant,
    /// Instructions.
    System,
}

/// One earlier turn of the dialogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// Its number in the dialogue (default: its position, from 1).
    #[serde(default, alias = "turn_id")]
    pub turn: Option<u64>,
    /// Who said it.
    #[serde(default)]
    pub role: Role,
    /// What was said.
    #[serde(alias = "content")]
    pub text: String,
}

/// Read a dialogue history: one JSON object per line, `{"role": "user"|"assistant",
/// "text": "…", "turn": n}` (`content` for `text`, `turn_id` for `turn`; blank lines
/// skipped). A bad line is a `bad_input` error naming it.
pub fn parse_history(name: &str, text: &str) -> Result<Vec<Turn>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut turn: Turn = serde_json::from_str(line).map_err(|e| {
            crate::diag::Error::from(
                Diagnostic::new(ErrorCode::BadInput, format!("{name}:{}: {e}", i + 1))
                    .with_help("each line is {\"role\": \"user\"|\"assistant\", \"text\": \"…\"}"),
            )
        })?;
        if turn.turn.is_none() {
            turn.turn = Some(out.len() as u64 + 1);
        }
        out.push(turn);
    }
    Ok(out)
}

/// A hallucination detector prepared over one fact base: its lexicon, templates and
/// indexes are built once and serve every answer.
pub struct Detector<'a> {
    knowledge: Knowledge<'a>,
    templates: Vec<Template>,
    class_words: std::collections::HashSet<String>,
    config: DetectorConfig,
}

impl<'a> Detector<'a> {
    /// Prepare a detector over `fb` (whose program's `.text`, `.functional` and rules
    /// it reads).
    pub fn new(fb: &'a FactBase, config: DetectorConfig) -> Detector<'a> {
        let program = fb.program();
        let alias = config.alias_relation.as_deref().and_then(|name| {
            let rel = program.relation_id(name)?;
            let r = program.relation(rel);
            (r.arity() == 2 && r.columns.iter().all(|c| c.ty == ColumnType::Symbol)).then_some(rel)
        });
        let templates: Vec<Template> = Template::all(program)
            .into_iter()
            .filter(|t| Some(t.rel) != alias)
            .collect();
        let class_words = templates
            .iter()
            .flat_map(|t| t.class_words().map(str::to_string))
            .collect();
        Detector {
            knowledge: Knowledge::new(fb, alias),
            templates,
            class_words,
            config,
        }
    }

    /// The settings.
    pub fn config(&self) -> &DetectorConfig {
        &self.config
    }

    /// Detect hallucinations in `answer`, given the dialogue so far (oldest first;
    /// only the last [`DetectorConfig::history_turns`] are read), and decide what to
    /// do about them.
    pub fn detect(&self, answer: &str, history: &[Turn]) -> DetectionReport {
        let started = Instant::now();
        let extractor = Extractor {
            program: self.knowledge.fb.program(),
            lexicon: &self.knowledge.lexicon,
            templates: &self.templates,
            class_words: &self.class_words,
        };
        let mut context = Context::default();
        let recent = &history[history.len().saturating_sub(self.config.history_turns)..];
        let mut turns = Vec::new();
        for (k, turn) in recent.iter().enumerate() {
            let sentences = extractor.analyse(&turn.text, &mut context, 0);
            turns.push(detectors::HistoryTurn {
                id: turn.turn.unwrap_or(k as u64 + 1),
                role: turn.role,
                sentences,
            });
        }
        let mut sentences = extractor.analyse(answer, &mut context, 0);
        // At most `max_claims` claims are checked.
        let mut budget = self.config.max_claims;
        for s in &mut sentences {
            let keep = s.claims.len().min(budget);
            s.claims.truncate(keep);
            budget -= keep;
        }
        let analysis = detectors::Analysis::new(&self.knowledge, sentences, turns, &self.config);
        let raw = detectors::run(&analysis);
        let scored = scoring::score_all(raw, &analysis, &self.config);
        report::build(answer, &analysis, &scored, &self.config, started)
    }
}
