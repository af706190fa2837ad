//! Input facts and their provenance: the evidence an evaluation starts from.
//!
//! Every input fact (written in the program, loaded from JSON/CSV/TSV fact files, or
//! from evidence JSONL) becomes an [`InputFact`] with a [`Provenance`] record. Loading
//! is all-or-nothing per file: a file with any bad line adds nothing.
//!
//! Architecture invariant: this layer knows the checked [`Program`](crate::ir::Program)
//! (relation names, arities, column types) but nothing of evaluation.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ir::RelId;
use crate::value::Value;

/// Where an input fact came from. Serializes with the seed's field names; `extra`
/// fields (any other keys of the evidence line's `provenance` object) are flattened
/// in beside them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Provenance {
    /// Kind of source: `"hyperedge"` for evidence JSONL (unless the line says
    /// otherwise), `"program"` for facts written in a `.dl` file, `"facts"` for fact
    /// files.
    pub source: String,
    /// The table (or file) the fact was stored in, when known.
    pub table: Option<String>,
    /// The stored edge index; its citation tag is `HEDGE-<edge_idx>`. Filled in for
    /// every input fact before evaluation (explicit, or assigned in load order after
    /// the largest explicit index).
    pub edge_idx: Option<u64>,
    /// When the evidence was recorded, as given (number or string).
    pub event_ts: Option<serde_json::Value>,
    /// Ids of the hyperedge's members, as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub member_ids: Vec<serde_json::Value>,
    /// Any other provenance fields, kept verbatim.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// One input fact with its confidence and provenance.
#[derive(Debug, Clone, PartialEq)]
pub struct InputFact {
    /// Its relation.
    pub rel: RelId,
    /// Its values, typed as the relation's columns.
    pub args: Vec<Value>,
    /// In [0, 1]; 1.0 unless given.
    pub confidence: f64,
    /// Where it came from.
    pub provenance: Provenance,
}
