//! Answer checking: does an LLM's text say only what the proofs support?
//!
//! Three checks share one sentence segmenter: the hallucination firewall (citation
//! tags), the faithfulness gate (ordered, gap-bounded containment with a polarity
//! guard) and the grounding check (role arithmetic over cited facts).
//!
//! Architecture invariant: this layer reads facts only through [`TagResolver`] and
//! plain tag sets; it knows nothing of evaluation or proof internals.

pub mod firewall;
pub mod gate;
pub mod grounding;
pub mod segment;

use crate::value::Value;

/// A fact that a citation tag names, as the answer checkers see it.
#[derive(Debug, Clone, PartialEq)]
pub struct CitedFact {
    /// The tag (`HEDGE-42`, `STEP-1`, `RULE-0`).
    pub tag: String,
    /// The relation name.
    pub predicate: String,
    /// The fact's values.
    pub args: Vec<Value>,
    /// The fact in words (the pack's `.text` verbalisation, else `pred(args)`).
    pub text: String,
    /// For `.functional` predicates: the key columns that determine the others.
    pub functional_key: Option<Vec<usize>>,
}

/// Resolves a citation tag to the fact(s) it names. Implemented by proofs (and by
/// anything else that hands out tags). A `RULE-n` tag names no single fact and may
/// resolve to nothing.
pub trait TagResolver {
    /// The facts a tag names; empty when the tag is unknown.
    fn resolve(&self, tag: &str) -> Vec<CitedFact>;
}
