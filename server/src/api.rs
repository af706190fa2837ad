//! The JSON bodies of the service's endpoints, and how request evidence becomes input
//! facts. Every type derives `ToSchema`, so the OpenAPI document is generated from
//! the same definitions the handlers parse.

use std::collections::BTreeMap;

use prooflog::pack::PackSet;
pub use prooflog::store::FactRecord;
use prooflog::store::{Hyperedge, InputFact};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::ApiError;

/// Evidence a request carries: stored hyperedges (mapped through the packs' tables)
/// and input facts.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct Evidence {
    /// Hyperedges, `{"table", "member_ids", "attributes"?, "edge_idx"?, "confidence"?,
    /// "doc_id"?, "span"?, "event_ts"?}` each.
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    pub evidence: Vec<serde_json::Value>,
    /// Input facts.
    #[serde(default)]
    #[schema(value_type = Vec<FactRecordSchema>)]
    pub facts: Vec<FactRecord>,
}

/// An input fact as a request gives it: the evidence JSONL line of the command line.
/// (The schema of [`FactRecord`].)
#[derive(Debug, Clone, ToSchema)]
#[schema(as = FactRecord)]
pub struct FactRecordSchema {
    /// The relation.
    pub predicate: String,
    /// Its values: JSON numbers and strings, typed as the relation's columns (a
    /// number into a symbol column as its decimal text, a numeric string into a
    /// numeric column).
    #[schema(value_type = Vec<Object>)]
    pub args: Vec<serde_json::Value>,
    /// In [0, 1]; 1.0 when absent.
    pub confidence: Option<f64>,
    /// Where it came from: `source`, `table`, `edge_idx`, `event_ts`, `member_ids`
    /// and any extra fields. Without an `edge_idx` the engine numbers it.
    #[schema(value_type = Option<Object>)]
    pub provenance: Option<serde_json::Value>,
}

impl Evidence {
    /// Every record as an input fact of the packs, in order (hyperedges first).
    pub fn to_inputs(&self, packs: &PackSet) -> Result<Vec<InputFact>, ApiError> {
        let edges = self.hyperedges()?;
        let mut out = packs.facts_of(&edges)?;
        for (i, f) in self.facts.iter().enumerate() {
            out.push(f.to_input(packs.program(), &format!("facts[{i}]"))?);
        }
        Ok(out)
    }

    /// The hyperedges, typed.
    pub fn hyperedges(&self) -> Result<Vec<Hyperedge>, ApiError> {
        self.evidence
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let h: Hyperedge = serde_json::from_value(v.clone())
                    .map_err(|e| ApiError::bad_input(format!("evidence[{i}]: {e}")))?;
                if let Some(c) = h.confidence
                    && !(0.0..=1.0).contains(&c)
                {
                    return Err(ApiError::bad_input(format!(
                        "evidence[{i}].confidence: {c} is not in [0, 1]"
                    )));
                }
                Ok(h)
            })
            .collect()
    }

    /// How many records.
    pub fn len(&self) -> usize {
        self.evidence.len() + self.facts.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `POST /v1/ask`: goals, the evidence retrieved for them, and an answer to check
/// (or none: the service writes one from the proofs).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AskRequest {
    /// Pack goals by name (`threatens`, `drones/threatens`) or patterns
    /// (`threatens(42, zone)`); at least one.
    pub goals: Vec<String>,
    /// The user's question (default: the goals' question templates, filled in).
    #[serde(default)]
    pub question: Option<String>,
    /// Hyperedges retrieved for this request (an overlay: no other request sees them).
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    pub evidence: Vec<serde_json::Value>,
    /// Input facts retrieved for this request.
    #[serde(default)]
    #[schema(value_type = Vec<FactRecordSchema>)]
    pub facts: Vec<FactRecord>,
    /// `strict`, `standard` (the default) or `audit`.
    #[serde(default)]
    pub mode: Option<String>,
    /// An answer written elsewhere (by a model) to check against the proofs; absent:
    /// the extractive generator writes one.
    #[serde(default)]
    pub answer: Option<String>,
}

/// `POST /v1/prove`: a goal over the base and this request's evidence.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProveRequest {
    /// A pack goal by name or a pattern; a pattern gives one proof per match.
    pub goal: String,
    /// Hyperedges for this request only.
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    pub evidence: Vec<serde_json::Value>,
    /// Input facts for this request only.
    #[serde(default)]
    #[schema(value_type = Vec<FactRecordSchema>)]
    pub facts: Vec<FactRecord>,
    /// The proof id (default `proof-1`).
    #[serde(default)]
    pub proof_id: Option<String>,
    /// At most this many proofs for a pattern (default 5).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// The proofs of a goal.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProveResponse {
    /// The goal as resolved.
    pub goal: String,
    /// Whether some fact matched it.
    pub proved: bool,
    /// ProofTree JSON, one per match (docs/proof-json.md).
    #[schema(value_type = Vec<Object>)]
    pub proofs: Vec<prooflog::ProofTree>,
    /// What the request's overlay computed.
    #[schema(value_type = Object)]
    pub overlay: prooflog::eval::OverlayStats,
}

/// `POST /v1/check`: the hallucination firewall.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    /// The answer text.
    pub answer: String,
    /// ProofTree JSON whose tags may be cited.
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    pub proofs: Vec<serde_json::Value>,
    /// More allowed tags (`HEDGE-42`, `RULE-0`, `STEP-1`).
    #[serde(default)]
    pub allowed: Vec<String>,
    /// Abstain unless a goal was proved.
    #[serde(default)]
    pub require_proof: bool,
    /// Whether the answer is backed by a proof (default: some proof is proved, or no
    /// proof was given).
    #[serde(default)]
    pub proved: Option<bool>,
    /// Also require each cited sentence to follow from its cited facts' words.
    #[serde(default)]
    pub verify_content: bool,
    /// The message returned when the firewall abstains.
    #[serde(default)]
    pub abstain_message: Option<String>,
    /// Also return every sentence's verdict and reason.
    #[serde(default)]
    pub explain: bool,
}

/// `POST /v1/gate`: the faithfulness gate.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GateRequest {
    /// The answer text.
    pub answer: String,
    /// Candidate passages the answer may be built from; at least one.
    pub passages: Vec<String>,
}

/// A fact a claim cites, as `POST /v1/ground` takes it.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CitedFactRecord {
    /// Its tag.
    pub tag: String,
    /// The relation.
    pub predicate: String,
    /// Its values.
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    pub args: Vec<serde_json::Value>,
    /// In words (default: the relation's `.text`, else `pred(args)`).
    #[serde(default)]
    pub text: Option<String>,
    /// Key columns of a `.functional` relation (default: the packs' declaration).
    #[serde(default)]
    pub functional_key: Option<Vec<usize>>,
}

/// `POST /v1/ground`: how well cited facts ground a claim.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GroundRequest {
    /// `{"subject", "predicate", "object"}`.
    #[schema(value_type = Object)]
    pub claim: prooflog::answer::grounding::Claim,
    /// Cited facts.
    #[serde(default)]
    pub cited: Vec<CitedFactRecord>,
    /// ProofTree JSON whose tagged facts may be cited.
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    pub proofs: Vec<serde_json::Value>,
    /// The tags the claim cites (default: every cited fact's).
    #[serde(default)]
    pub tags: Vec<String>,
    /// Scores below this are ungrounded (default 0.3).
    #[serde(default)]
    pub deny: Option<f64>,
    /// Scores at or above this are grounded (default 0.6).
    #[serde(default)]
    pub permit: Option<f64>,
    /// Match the claim's predicate against verbalisations too (default true).
    #[serde(default)]
    pub predicate_in_text: Option<bool>,
}

/// `POST /v1/evidence`: evidence for the shared base, kept durably.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EvidenceRequest {
    /// Hyperedges.
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    pub evidence: Vec<serde_json::Value>,
    /// Input facts.
    #[serde(default)]
    #[schema(value_type = Vec<FactRecordSchema>)]
    pub facts: Vec<FactRecord>,
}

/// What `POST /v1/evidence` added.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct EvidenceResponse {
    /// Records added.
    pub accepted: usize,
    /// Their citation tags (`HEDGE-<edge_idx>`), in request order.
    pub tags: Vec<String>,
    /// Whether they were committed to the evidence store before this answer (false:
    /// the service runs without `--data`, and they live in memory only).
    pub durable: bool,
    /// Records in the evidence store after this request.
    pub stored: u64,
    /// Facts in the base after this request (input and derived).
    pub base_facts: usize,
    /// Time to extend the base, in microseconds.
    pub extend_us: u64,
}

/// `GET /v1/packs`: the packs and the base.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PacksResponse {
    /// Each pack as `prooflog pack list` describes it.
    #[schema(value_type = Vec<Object>)]
    pub packs: Vec<prooflog::pack::PackInfo>,
    /// Input facts of the base.
    pub base_input_facts: usize,
    /// Facts derived in the base.
    pub base_derived_facts: usize,
    /// Records in the evidence store.
    pub stored_evidence: u64,
}

/// `GET /healthz`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Health {
    /// `ok`.
    pub status: String,
}

/// An error answer: `{"error": {"code", "message", "help"?, "more"?}}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorBody {
    /// The diagnostic.
    pub error: ErrorDetail,
}

/// The diagnostic of an error answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable machine-readable code (`bad_input`, `budget_exceeded`, `unauthorized`, …).
    pub code: String,
    /// What went wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    /// Further diagnostics.
    #[schema(value_type = Option<Vec<Object>>)]
    pub more: Option<Vec<BTreeMap<String, serde_json::Value>>>,
}
