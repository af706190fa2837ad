//! Semi-naive evaluation with confidence and provenance, and the resulting fact base.
//!
//! Architecture invariant: evaluation reads a checked [`Program`] and [`InputFact`]s;
//! it knows nothing of proofs or answers. The [`FactBase`] it returns is immutable and
//! `Send + Sync`: later layers (proofs, services) read it concurrently.

use std::sync::Arc;

use crate::diag::Result;
use crate::ir::{Program, RelId, RuleId};
use crate::store::InputFact;
use crate::syntax::Goal;
use crate::value::Value;

/// Identifies one fact in a [`FactBase`]: its relation and its row in that relation.
/// Stable for the life of the fact base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FactId {
    /// The relation.
    pub rel: RelId,
    /// Row index within the relation (insertion order).
    pub row: u32,
}

/// The recorded best derivation of a derived fact.
#[derive(Debug, Clone, PartialEq)]
pub struct Derivation {
    /// The rule applied (`RULE-n` with n = this id).
    pub rule: RuleId,
    /// Positive premises in body order (for an aggregate: every fact it aggregated).
    pub premises: Vec<FactId>,
    /// Ground negated premises that were checked absent, in body order.
    pub absent: Vec<(RelId, Vec<Value>)>,
    /// Rule applications on the longest path down to input facts (≥ 1).
    pub height: u32,
}

/// One answer to a [`FactBase::query`].
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    /// The matching fact.
    pub fact: FactId,
    /// Its values.
    pub args: Vec<Value>,
    /// Each named variable of the pattern and its value, in first-occurrence order.
    pub bindings: Vec<(String, Value)>,
    /// The fact's confidence.
    pub confidence: f64,
}

/// Evaluation settings.
#[derive(Clone, Default)]
pub struct EvalOptions {
    /// Record the best derivation of every derived fact (on by default in the CLI).
    pub provenance: bool,
}

/// The result of evaluation: every fact, its confidence and (with provenance on) its
/// best derivation or its evidence record.
pub struct FactBase {
    program: Arc<Program>,
}

impl FactBase {
    /// The program this fact base was computed from.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Find a relation by name.
    pub fn relation_id(&self, name: &str) -> Option<RelId> {
        self.program.relation_id(name)
    }

    /// Whether derivations were recorded.
    pub fn provenance_enabled(&self) -> bool {
        todo!()
    }

    /// Every fact of a relation, in row order.
    pub fn facts(&self, rel: RelId) -> impl Iterator<Item = FactId> + '_ {
        (0..self.len(rel) as u32).map(move |row| FactId { rel, row })
    }

    /// Every row of a relation, sorted (the order `prooflog run` prints).
    pub fn rows(&self, rel: RelId) -> Vec<Vec<Value>> {
        let mut rows: Vec<Vec<Value>> = self.facts(rel).map(|f| self.args(f)).collect();
        rows.sort();
        rows
    }

    /// A fact as the rule language writes it: `pred(a, b)`.
    pub fn fact_text(&self, fact: FactId) -> String {
        crate::value::fact_text(&self.program.relation(fact.rel).name, &self.args(fact))
    }

    /// Every fact matching a pattern such as `path(1, x)`, sorted by values, with the
    /// variables' bindings and the fact's confidence. An unknown relation or a wrong
    /// arity is an `unknown_relation` / `arity_mismatch` error.
    pub fn query(&self, goal: &Goal) -> Result<Vec<Match>> {
        let _ = goal;
        todo!()
    }

    /// Number of facts in a relation.
    pub fn len(&self, rel: RelId) -> usize {
        let _ = rel;
        todo!()
    }

    /// Look up a ground fact.
    pub fn lookup(&self, rel: RelId, args: &[Value]) -> Option<FactId> {
        let _ = (rel, args);
        todo!()
    }

    /// A fact's values.
    pub fn args(&self, fact: FactId) -> Vec<Value> {
        let _ = fact;
        todo!()
    }

    /// A fact's confidence in [0, 1].
    pub fn confidence(&self, fact: FactId) -> f64 {
        let _ = fact;
        todo!()
    }

    /// The best derivation of a derived fact; `None` for input facts and when
    /// provenance was off.
    pub fn derivation(&self, fact: FactId) -> Option<Derivation> {
        let _ = fact;
        todo!()
    }

    /// The input record of a fact that was given as input (its evidence), if any.
    pub fn evidence(&self, fact: FactId) -> Option<&InputFact> {
        let _ = fact;
        todo!()
    }
}

/// Evaluate a program over input facts.
pub fn evaluate(
    program: Arc<Program>,
    inputs: &[InputFact],
    options: &EvalOptions,
) -> Result<FactBase> {
    let _ = (inputs, options);
    Ok(FactBase { program })
}
