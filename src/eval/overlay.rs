//! Per-request overlays on a shared, evaluated fact base.
//!
//! A RAG service evaluates its rule packs once into a [`SharedBase`] (behind an
//! `Arc`, read by every thread), then for each request computes only the consequences
//! of that request's evidence in an [`Overlay`]: a [`FactBase`] whose relations are
//! layers over the base's (see `relation.rs`). The base is never copied, written or
//! re-evaluated; the overlay holds the request's new rows, the records of base facts
//! the evidence improved, and the strata it had to recompute, and is dropped with the
//! request.
//!
//! What an overlay computes equals evaluating the program over the base's inputs and
//! the request's evidence together: the same facts and the same confidences. A stratum
//! whose aggregated input changed, or whose negated input gained a fact that blocks
//! one of its existing derivations, is recomputed in the overlay's own storage (its
//! facts may have to disappear), and so is every stratum that reads it.
//! Derivations are recorded as evaluation records them, except that when the
//! evidence raises the confidence of a fact already read, the overlay keeps the
//! best-confidence derivations its rounds found rather than re-selecting the
//! least-height ones among them (a whole evaluation, and [`FactBase::extend`], do):
//! proofs stay valid and their confidences exact.
//!
//! Tags are stable: the base's input facts keep their `edge_idx` (so their `HEDGE-n`),
//! and a request's evidence is numbered after the base's largest index unless it gives
//! an unused one ([`number_inputs`](crate::store::number_inputs)).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::diag::Result;
use crate::eval::plan::Planner;
use crate::eval::relation::Relation;
use crate::eval::{EvalOptions, FactBase, incremental};
use crate::ir::Literal;
use crate::store::{EdgeOwners, InputFact};

/// An evaluated fact base prepared to be shared by per-request overlays: read-only,
/// `Send + Sync`, meant to live in an `Arc`.
///
/// Preparing builds, once, every index that the semi-naive variants of the program's
/// rules may probe (so that an overlay never indexes base rows), lists the input rows
/// of derived relations (so that recomputing a stratum does not scan the base), and
/// indexes the base's edge indexes (so that a request's evidence is numbered without
/// a scan).
pub struct SharedBase {
    facts: FactBase,
    edges: FxHashMap<u64, u32>,
    max_edge: Option<u64>,
}

impl SharedBase {
    /// Prepare an evaluated fact base for overlays.
    pub fn new(mut facts: FactBase) -> Result<SharedBase> {
        let program = Arc::clone(&facts.program);
        {
            let rels: &mut Vec<Relation> = Arc::make_mut(&mut facts.rels);
            let everything = vec![true; program.relations.len()];
            let mut planner = Planner {
                program: &program,
                interner: &mut facts.interner,
                rels,
                replay_only: false,
            };
            for rule in program.rules() {
                for (i, lit) in rule.body.iter().enumerate() {
                    match lit {
                        Literal::Atom(_) => {
                            planner.plan(rule, Some(i), &everything)?;
                        }
                        // The probe of whether new negated facts block a derivation.
                        Literal::Negated(_) => {
                            let probe = crate::eval::fixpoint::negation_probe(rule, i);
                            planner.plan(&probe, Some(i), &everything)?;
                        }
                        _ => {}
                    }
                }
            }
            for stratum in &program.strata {
                for &rel in &stratum.relations {
                    rels[rel as usize].list_inputs();
                }
            }
        }
        facts.interner.share();
        facts.evidence.share();
        let (edges, max_edge) = crate::eval::edge_index(&facts.evidence);
        Ok(SharedBase {
            facts,
            edges,
            max_edge,
        })
    }

    /// Evaluate `program` over `inputs` (with provenance) and prepare the result.
    pub fn evaluate(
        program: Arc<crate::ir::Program>,
        inputs: &[InputFact],
        options: &EvalOptions,
    ) -> Result<SharedBase> {
        let options = EvalOptions {
            provenance: true,
            ..options.clone()
        };
        SharedBase::new(crate::eval::evaluate(program, inputs, &options)?)
    }

    /// The base's facts.
    pub fn facts(&self) -> &FactBase {
        &self.facts
    }

    /// The largest `edge_idx` of the base: a request's evidence is numbered after it.
    pub fn max_edge_idx(&self) -> Option<u64> {
        self.max_edge
    }

    /// The base plus `evidence` and its consequences, computed without copying,
    /// writing or re-evaluating the base. The evidence is numbered first (a fact
    /// without an `edge_idx` gets the next one after the base's largest, or after the
    /// request's largest explicit one; an explicit index that names another fact of
    /// the base or of the request is a `bad_input` error). Budget and progress come
    /// from `options`; provenance follows the base.
    ///
    /// Safe to call from many threads at once on one base.
    pub fn overlay(&self, evidence: &[InputFact], options: &EvalOptions) -> Result<Overlay> {
        let started = Instant::now();
        let mut extra = evidence.to_vec();
        crate::store::number_inputs(&self.facts.program, &mut extra, self)?;
        let added = extra.len();
        let rels: Vec<Relation> = (0..self.facts.rels.len())
            .map(|i| Relation::over(&self.facts.rels, i))
            .collect();
        let facts = incremental(
            &self.facts,
            rels,
            self.facts.interner.clone(),
            self.facts.evidence.clone(),
            extra,
            options,
        )?;
        let stats = OverlayStats {
            evidence: added,
            new_facts: facts.rels.iter().map(|r| r.own_rows() as usize).sum(),
            derived_facts: facts.stats.derived_facts(),
            improved_base_facts: facts.rels.iter().map(|r| r.patched_rows()).sum(),
            recomputed_strata: facts.stats.recomputed_strata,
            elapsed: started.elapsed(),
        };
        Ok(Overlay { facts, stats })
    }
}

impl EdgeOwners for SharedBase {
    fn owner(&self, idx: u64) -> Option<Cow<'_, InputFact>> {
        self.facts
            .record(*self.edges.get(&idx)? as usize)
            .map(Cow::Owned)
    }

    fn max_index(&self) -> Option<u64> {
        self.max_edge
    }
}

/// What one overlay computed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OverlayStats {
    /// Input facts the request gave.
    pub evidence: usize,
    /// Rows the overlay holds itself: new input facts, derived facts, and the facts
    /// of recomputed strata.
    pub new_facts: usize,
    /// Facts derived by rules in the overlay.
    pub derived_facts: usize,
    /// Base facts whose record the overlay changed (a better confidence, or a new
    /// input record).
    pub improved_base_facts: usize,
    /// Strata recomputed in the overlay's own storage.
    pub recomputed_strata: usize,
    /// Time to compute the overlay.
    #[serde(serialize_with = "micros")]
    pub elapsed: Duration,
}

fn micros<S: serde::Serializer>(d: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_micros() as u64)
}

/// A shared base plus one request's evidence and its consequences: a [`FactBase`]
/// (through `Deref`) that answers every query over base and overlay together, and a
/// [`ProofSource`](crate::proof::ProofSource) for proofs. Dropping it frees only
/// what the request added.
pub struct Overlay {
    facts: FactBase,
    stats: OverlayStats,
}

impl Overlay {
    /// The facts of base and overlay together.
    pub fn facts(&self) -> &FactBase {
        &self.facts
    }

    /// The request's evidence, numbered, in its owned form (decoded on each call).
    pub fn evidence_added(&self) -> impl ExactSizeIterator<Item = InputFact> + '_ {
        let facts = &self.facts;
        facts.evidence.own_records(&facts.program, &facts.interner)
    }

    /// What computing the overlay took.
    pub fn stats(&self) -> &OverlayStats {
        &self.stats
    }

    /// Bytes the overlay holds itself (not the base's), roughly: its rows, indexes,
    /// records, symbols and evidence.
    pub fn memory_bytes(&self) -> usize {
        let rels: usize = self.facts.rels.iter().map(Relation::own_bytes).sum();
        rels + self.facts.interner.own_bytes() + self.facts.evidence.own_bytes()
    }
}

impl std::ops::Deref for Overlay {
    type Target = FactBase;

    fn deref(&self) -> &FactBase {
        &self.facts
    }
}
