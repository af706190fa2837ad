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
pub mod markdown;
pub mod normalize;
pub mod segment;
pub mod verify;

use crate::value::Value;

/// A fact that a citation tag names, as the answer checkers see it.
///
/// Build one with [`CitedFact::new`]; a fact that a proof relied on being *absent* (a
/// negated premise) is [`CitedFact::negated`]: its `text` says the fact, and a sentence
/// citing it must say that the fact does not hold.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
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
    /// The fact was checked to be absent (a negated premise): the tag says it is *not*
    /// so.
    pub negated: bool,
}

impl CitedFact {
    /// A (positive) cited fact.
    pub fn new(
        tag: impl Into<String>,
        predicate: impl Into<String>,
        args: Vec<Value>,
        text: impl Into<String>,
    ) -> CitedFact {
        CitedFact {
            tag: tag.into(),
            predicate: predicate.into(),
            args,
            text: text.into(),
            functional_key: None,
            negated: false,
        }
    }

    /// The same fact with the key columns of its `.functional` declaration.
    pub fn with_functional_key(mut self, key: Option<Vec<usize>>) -> CitedFact {
        self.functional_key = key;
        self
    }

    /// The same fact as one the proof relied on being absent.
    pub fn negated(mut self) -> CitedFact {
        self.negated = true;
        self
    }

    /// The fact in words as a person reads the citation: its text, or `not: <text>`
    /// when negated.
    pub fn display_text(&self) -> String {
        if self.negated {
            format!("not: {}", self.text)
        } else {
            self.text.clone()
        }
    }
}

/// Resolves a citation tag to the fact(s) it names. Implemented by proofs, by
/// [`CitationTable`](crate::proof::CitationTable) (the one tag table of a request) and by
/// anything else that hands out tags. A `RULE-n` tag names every conclusion of its rule;
/// a `STEP-n` tag names its conclusion and the facts the step relied on being absent
/// (negated).
pub trait TagResolver {
    /// The facts a tag names; empty when the tag is unknown.
    fn resolve(&self, tag: &str) -> Vec<CitedFact>;

    /// Whether the tag names different things in different places of the request (two
    /// proofs that each have a `STEP-1`): a citation of it means nothing definite.
    fn is_ambiguous(&self, _tag: &str) -> bool {
        false
    }
}
