//! Proof options and the provenance-resolver hook that enriches evidence leaves.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a [`ProvenanceResolver`] is told about one evidence leaf: the stored edge it is
/// bound to and the citation tag it will carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EdgeRef {
    /// The table the edge is stored in.
    pub table: Option<String>,
    /// The edge index.
    pub edge_idx: u64,
    /// When it was recorded.
    pub event_ts: Option<serde_json::Value>,
    /// Ids of its members.
    pub member_ids: Vec<serde_json::Value>,
    /// `HEDGE-<edge_idx>`.
    pub hedge_tag: String,
}

/// Why a resolver could not enrich a leaf. The leaf is then marked `verified: false`
/// (with the message under `resolver_error`) and the proof still builds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolverError(pub String);

impl fmt::Display for ResolverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ResolverError {}

/// Enriches an evidence leaf's provenance from an outside index (a source document id,
/// a content digest, …).
///
/// The returned fields are merged into the leaf's provenance: the stored identity
/// fields (`source`, `table`, `edge_idx`, `event_ts`, `member_ids`) keep their stored
/// values, every other field (including `verified`, e.g. `false` for an edge the index
/// does not know) takes the resolver's value. An error or a panic marks the leaf
/// `verified: false` instead of failing the proof. Any
/// `Fn(&EdgeRef) -> Result<Map, E>` with a displayable `E` is a resolver.
pub trait ProvenanceResolver {
    /// Extra provenance fields for one leaf.
    fn resolve(
        &self,
        edge: &EdgeRef,
    ) -> Result<serde_json::Map<String, serde_json::Value>, ResolverError>;
}

impl<F, E> ProvenanceResolver for F
where
    F: Fn(&EdgeRef) -> Result<serde_json::Map<String, serde_json::Value>, E>,
    E: fmt::Display,
{
    fn resolve(
        &self,
        edge: &EdgeRef,
    ) -> Result<serde_json::Map<String, serde_json::Value>, ResolverError> {
        self(edge).map_err(|e| ResolverError(e.to_string()))
    }
}

/// How to build a proof.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct ProofOptions<'a> {
    /// The id the tree carries (`proof_id`); [`prove_all`](super::prove_all) suffixes
    /// it with `#2`, `#3`, … for the second and later matches.
    pub proof_id: &'a str,
    /// Optional enrichment of evidence leaves.
    pub provenance_resolver: Option<&'a dyn ProvenanceResolver>,
    /// Steps already numbered in this request: the tree's conclusions are tagged
    /// `STEP-<first_step + 1>`, `STEP-<first_step + 2>`, … so that no two proofs of one
    /// request share a `STEP` tag. 0 for a request's first proof.
    pub first_step: u64,
}

impl<'a> ProofOptions<'a> {
    /// Options with this proof id, no resolver, steps numbered from 1.
    pub fn new(proof_id: &'a str) -> ProofOptions<'a> {
        ProofOptions {
            proof_id,
            provenance_resolver: None,
            first_step: 0,
        }
    }

    /// The same options with steps numbered after `first_step` (see
    /// [`ProofOptions::first_step`]).
    pub fn with_first_step(self, first_step: u64) -> ProofOptions<'a> {
        ProofOptions { first_step, ..self }
    }

    /// The same options with a resolver.
    pub fn with_resolver(self, resolver: &'a dyn ProvenanceResolver) -> ProofOptions<'a> {
        ProofOptions {
            provenance_resolver: Some(resolver),
            ..self
        }
    }
}

impl Default for ProofOptions<'_> {
    /// Proof id `"proof-1"`, no resolver.
    fn default() -> Self {
        ProofOptions::new("proof-1")
    }
}

impl fmt::Debug for ProofOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProofOptions")
            .field("proof_id", &self.proof_id)
            .field("provenance_resolver", &self.provenance_resolver.is_some())
            .field("first_step", &self.first_step)
            .finish()
    }
}
