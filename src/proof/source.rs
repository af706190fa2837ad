//! The narrow read interface proofs need from a fact base.

use crate::diag::Result;
use crate::eval::{Derivation, FactBase, FactId, Match, Overlay};
use crate::ir::{Program, RelId};
use crate::store::InputFact;
use crate::syntax::Goal;
use crate::value::Value;

/// What building a proof reads from a fact base: point lookups along recorded
/// derivations, never a scan. Implemented by the evaluated [`FactBase`]; a per-request
/// overlay (shared base plus request evidence) implements it by answering from its own
/// facts first and the base second.
pub trait ProofSource {
    /// The program the facts were computed from (relation names, `.text`,
    /// `.functional`, rule names and confidences).
    fn program(&self) -> &Program;

    /// Whether best derivations were recorded; without them there is nothing to walk.
    fn provenance_enabled(&self) -> bool;

    /// Find a ground fact.
    fn lookup(&self, rel: RelId, args: &[Value]) -> Option<FactId>;

    /// A fact's values.
    fn args(&self, fact: FactId) -> Vec<Value>;

    /// A fact's confidence.
    fn confidence(&self, fact: FactId) -> f64;

    /// The fact's best derivation, when its best record is a rule application.
    fn derivation(&self, fact: FactId) -> Option<Derivation>;

    /// The fact's input record in its owned form, when it was given as input.
    fn evidence(&self, fact: FactId) -> Option<InputFact>;

    /// Every fact matching a pattern, sorted by values.
    fn query(&self, pattern: &Goal) -> Result<Vec<Match>>;

    /// The first `limit` facts matching a pattern in [`query`](Self::query)'s order
    /// (used by [`prove_all`](super::prove_all) and [`prove_each`](super::prove_each)).
    /// The default asks `query` and keeps the first ones; a [`FactBase`] selects them
    /// without decoding every match.
    fn matching_facts(&self, pattern: &Goal, limit: Option<usize>) -> Result<Vec<FactId>> {
        let mut matches = self.query(pattern)?;
        matches.truncate(limit.unwrap_or(usize::MAX));
        Ok(matches.into_iter().map(|m| m.fact).collect())
    }
}

impl ProofSource for FactBase {
    fn program(&self) -> &Program {
        FactBase::program(self)
    }

    fn provenance_enabled(&self) -> bool {
        FactBase::provenance_enabled(self)
    }

    fn lookup(&self, rel: RelId, args: &[Value]) -> Option<FactId> {
        FactBase::lookup(self, rel, args)
    }

    fn args(&self, fact: FactId) -> Vec<Value> {
        FactBase::args(self, fact)
    }

    fn confidence(&self, fact: FactId) -> f64 {
        FactBase::confidence(self, fact)
    }

    fn derivation(&self, fact: FactId) -> Option<Derivation> {
        FactBase::derivation(self, fact)
    }

    fn evidence(&self, fact: FactId) -> Option<InputFact> {
        FactBase::evidence(self, fact)
    }

    fn query(&self, pattern: &Goal) -> Result<Vec<Match>> {
        FactBase::query(self, pattern)
    }

    fn matching_facts(&self, pattern: &Goal, limit: Option<usize>) -> Result<Vec<FactId>> {
        FactBase::query_facts(self, pattern, limit)
    }
}

/// An overlay answers from the shared base and the request's own facts together.
impl ProofSource for Overlay {
    fn program(&self) -> &Program {
        self.facts().program()
    }

    fn provenance_enabled(&self) -> bool {
        self.facts().provenance_enabled()
    }

    fn lookup(&self, rel: RelId, args: &[Value]) -> Option<FactId> {
        self.facts().lookup(rel, args)
    }

    fn args(&self, fact: FactId) -> Vec<Value> {
        self.facts().args(fact)
    }

    fn confidence(&self, fact: FactId) -> f64 {
        self.facts().confidence(fact)
    }

    fn derivation(&self, fact: FactId) -> Option<Derivation> {
        self.facts().derivation(fact)
    }

    fn evidence(&self, fact: FactId) -> Option<InputFact> {
        self.facts().evidence(fact)
    }

    fn query(&self, pattern: &Goal) -> Result<Vec<Match>> {
        self.facts().query(pattern)
    }
}
