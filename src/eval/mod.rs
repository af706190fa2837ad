//! Semi-naive evaluation with confidence and provenance, and the resulting fact base.
//!
//! Architecture invariant: evaluation reads a checked [`Program`] and input facts
//! ([`InputFact`]s, or a load's [`InputFacts`] by columns); it knows nothing of proofs
//! or answers. The [`FactBase`] it returns is immutable and
//! `Send + Sync`: later layers (proofs, services) read it concurrently.
//!
//! Code map: `plan` orders each rule's literals into join steps and picks indexes,
//! `exec` runs those steps over `relation` storage, `fixpoint` drives the semi-naive
//! rounds per stratum and merges derivations (keeping the best one per fact;
//! `order` queues a weighted stratum's changed facts to hand them out best first),
//! `evidence` keeps every input fact's record by columns for citations and proofs.
//!
//! Encoding: every column has a type fixed by the program, so a cell is a raw `u64`
//! (an `i64`, a `u64`, an `f64`'s bits, or a `lasso` symbol key); values are decoded
//! only at this module's boundary. A relation is a flat row array with a dedup table
//! and indexes built once per column set and maintained as rows are appended;
//! a [`FactId`]'s row is the row's index. Provenance is a compact record per row (rule,
//! height, premise ids in an arena); ground negated premises are recomputed on demand
//! by replaying the rule with those premises.
//!
//! Confidence is a lattice: a fact whose confidence (or, with provenance, height at
//! equal confidence) strictly improves re-enters the delta, so downstream facts are
//! raised too. Nothing depends on hash-map iteration order, so the same program and
//! inputs give identical rows, confidences and derivations.
//!
//! [`FactBase::extend`] evaluates only the consequences of new evidence on top of an
//! evaluated base (the new facts are the first delta) and leaves the base untouched.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::diag::{Diagnostic, ErrorCode, Result};
use crate::ir::{Literal, Program, RelId, RuleId};
use crate::store::{InputFact, InputFacts};
use crate::syntax::{Goal, GoalArg};
use crate::value::{ColumnType, Value};

mod evidence;
mod exec;
mod fixpoint;
mod heights;
mod order;
mod overlay;
mod plan;
mod relation;
mod restore;
mod symbols;
#[cfg(test)]
mod tests;

use evidence::Evidence;
use exec::{Ctx, Frame};
use plan::{Access, Cell, Plan, Premise, Step, decode, encode, encode_lookup};
use relation::{AGG_MARK, INPUT_RULE, Meta, NO_EVIDENCE, Relation, hash_cells, tag_of};
use symbols::Symbols;

pub use overlay::{Overlay, OverlayStats, SharedBase};

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

/// Evaluation settings: `EvalOptions::default()` records provenance (so that any
/// fact base can be proved) under [`Budget::default`]'s limits, which protect a
/// service; the `with_*` methods change one setting each.
#[derive(Clone)]
#[non_exhaustive]
pub struct EvalOptions {
    /// Record the best derivation of every derived fact (on by default; off makes a
    /// lighter run whose facts cannot be proved).
    pub provenance: bool,
    /// Limits checked inside the evaluation loop (by default [`Budget::default`]'s,
    /// which protect a service).
    pub budget: Budget,
    /// Called after every round of every stratum, to show progress, on the thread
    /// that runs the evaluation: with worker threads ([`EvalOptions::threads`]),
    /// usually one of them rather than the calling thread.
    pub progress: Option<ProgressFn>,
    /// Make failed arithmetic an error (`arithmetic_error`) instead of a dropped
    /// derivation counted in [`Stats::arithmetic`].
    pub strict_arithmetic: bool,
    /// Threads that evaluate a round's rules and delta pieces side by side: 1 (the
    /// default) evaluates on the calling thread, 0 uses one per core; more than 256
    /// count as 256. With more than one, the evaluation itself runs on one of them
    /// while the calling thread waits (unless another evaluation is running there
    /// already: then on the calling thread). Every thread
    /// count gives byte-identical results: the same facts, confidences and
    /// derivations.
    pub threads: usize,
}

impl Default for EvalOptions {
    fn default() -> EvalOptions {
        EvalOptions {
            provenance: true,
            budget: Budget::default(),
            progress: None,
            strict_arithmetic: false,
            threads: 1,
        }
    }
}

impl EvalOptions {
    /// These options with derivation recording on or off.
    pub fn with_provenance(mut self, provenance: bool) -> EvalOptions {
        self.provenance = provenance;
        self
    }

    /// These options with these limits.
    pub fn with_budget(mut self, budget: Budget) -> EvalOptions {
        self.budget = budget;
        self
    }

    /// These options with this many evaluation threads (0: one per core).
    pub fn with_threads(mut self, threads: usize) -> EvalOptions {
        self.threads = threads;
        self
    }

    /// These options with a progress callback, called after every round.
    pub fn with_progress(mut self, progress: ProgressFn) -> EvalOptions {
        self.progress = Some(progress);
        self
    }

    /// These options with failed arithmetic an error (`true`) or a dropped derivation
    /// counted in [`Stats::arithmetic`] (`false`, the default).
    pub fn with_strict_arithmetic(mut self, strict: bool) -> EvalOptions {
        self.strict_arithmetic = strict;
        self
    }
}

/// A progress callback, shared by clones of the options and callable from any thread.
pub type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Limits on one evaluation; exceeding any is a `budget_exceeded` error whose
/// [`Diagnostic`] names the limit (in [`Diagnostic::limit`]) and the rule that
/// derived the most facts, and no fact base is returned (a base being extended is
/// left as it was). Unset limits do not apply.
///
/// Limits are checked inside the joins, not only between rounds: derivations are
/// merged at least every 4096, with the fact and memory limits checked at each
/// merge (memory before the storage grows), and the clock is read every 16,384
/// candidate rows of any scan. So a cartesian product or an arithmetic recursion
/// without end (`n(y) :- n(x), y = x + 1.`) stops at a limit, not at the machine's.
///
/// The default protects a service: [`Budget::DEFAULT_MAX_FACTS`],
/// [`Budget::DEFAULT_MAX_ROUNDS`], [`Budget::DEFAULT_TIMEOUT`] and
/// [`Budget::DEFAULT_MAX_MEMORY`]; [`Budget::unlimited`] sets none.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// Most facts rules may derive (input facts not counted).
    pub max_facts: Option<usize>,
    /// Most rounds one stratum may take to reach its fixpoint.
    pub max_rounds: Option<u32>,
    /// Time by which evaluation must finish.
    pub deadline: Option<Instant>,
    /// Most time one evaluation may take, from its start (with `deadline`, whichever
    /// comes first).
    pub timeout: Option<Duration>,
    /// Most bytes the engine's own storage may take: rows with their records, the
    /// dedup table, indexes, derivation records, delta lists. Counted from the
    /// storage's allocated sizes (not the process's memory), before it grows.
    pub max_memory: Option<usize>,
}

impl Budget {
    /// Default of [`Budget::max_facts`]: 100 million derived facts.
    pub const DEFAULT_MAX_FACTS: usize = 100_000_000;
    /// Default of [`Budget::max_rounds`]: a million rounds per stratum.
    pub const DEFAULT_MAX_ROUNDS: u32 = 1_000_000;
    /// Default of [`Budget::timeout`]: ten minutes.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
    /// Default of [`Budget::max_memory`]: 2 GiB of storage.
    pub const DEFAULT_MAX_MEMORY: usize = 2 << 30;

    /// No limits at all.
    pub fn unlimited() -> Budget {
        Budget {
            max_facts: None,
            max_rounds: None,
            deadline: None,
            timeout: None,
            max_memory: None,
        }
    }
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            max_facts: Some(Budget::DEFAULT_MAX_FACTS),
            max_rounds: Some(Budget::DEFAULT_MAX_ROUNDS),
            deadline: None,
            timeout: Some(Budget::DEFAULT_TIMEOUT),
            max_memory: Some(Budget::DEFAULT_MAX_MEMORY),
        }
    }
}

/// What a progress callback learns after a round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Index of the stratum in [`Program::strata`].
    pub stratum: usize,
    /// Round within the stratum (0 is the first, full evaluation).
    pub round: u32,
    /// Facts derived in this round.
    pub new_facts: usize,
    /// Facts in the whole fact base after it.
    pub total_facts: usize,
}

/// Counters of one evaluation, for progress reports and benchmarks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Input facts after deduplication.
    pub input_facts: usize,
    /// Per stratum, in evaluation order.
    pub strata: Vec<StratumStats>,
    /// Strata an extension or overlay re-evaluated from their input facts (their
    /// negated or aggregated input changed).
    pub recomputed_strata: usize,
    /// Rules whose arithmetic failed for some bindings (the derivations were
    /// dropped), by rule id; see [`arithmetic_warning`].
    pub arithmetic: Vec<ArithmeticFaults>,
}

/// How many derivations of one rule were dropped because their arithmetic failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArithmeticFaults {
    /// The rule (`RULE-<id>`).
    pub rule: RuleId,
    /// Integer overflow (`i64::MIN / -1` included; unsigned results below zero) or a
    /// float result too large to be finite.
    pub overflow: u64,
    /// Division or remainder by zero.
    pub division_by_zero: u64,
}

/// A warning (code `arithmetic_error`) naming a rule whose arithmetic failed, located
/// at the rule.
pub fn arithmetic_warning(program: &Program, faults: &ArithmeticFaults) -> Diagnostic {
    let rule = program.rule(faults.rule);
    let mut kinds = Vec::new();
    let plural = |n: u64| if n == 1 { "" } else { "s" };
    if faults.overflow > 0 {
        kinds.push(format!(
            "{} overflow{}",
            faults.overflow,
            plural(faults.overflow)
        ));
    }
    if faults.division_by_zero > 0 {
        kinds.push(format!(
            "{} division{} by zero",
            faults.division_by_zero,
            plural(faults.division_by_zero)
        ));
    }
    let n = faults.overflow + faults.division_by_zero;
    Diagnostic::new(
        ErrorCode::Arithmetic,
        format!(
            "rule RULE-{} (`{}`) dropped {n} derivation{}: {}",
            faults.rule,
            rule.name,
            plural(n),
            kinds.join(", ")
        ),
    )
    .at_span(&program.sources, rule.span)
    .with_help(
        "integers are 64-bit and floats finite; a derivation whose arithmetic fails is \
         dropped (an error with --strict)",
    )
}

impl Stats {
    /// Facts derived by rules over all strata.
    pub fn derived_facts(&self) -> usize {
        self.strata.iter().map(|s| s.derived).sum()
    }
}

/// Counters of one stratum.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StratumStats {
    /// Rounds evaluated (1 for a non-recursive stratum).
    pub rounds: u32,
    /// New facts derived.
    pub derived: usize,
    /// Times a known fact got a strictly better confidence or height.
    pub improved: usize,
    /// Derivations produced by rule bodies, duplicates included.
    pub derivations: u64,
}

/// The result of evaluation: every fact, its confidence and (with provenance on) its
/// best derivation or its evidence record.
///
/// A fact base is either plain (it owns its storage) or an overlay's: a layer over a
/// shared base (see [`SharedBase`]) that reads the base's rows in place and holds only
/// what its own evidence added or changed. Both answer every query the same way.
pub struct FactBase {
    program: Arc<Program>,
    rels: Arc<Vec<Relation>>,
    interner: Symbols,
    provenance: bool,
    evidence: Evidence,
    plans: Vec<Option<Plan>>,
    stats: Stats,
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
        self.provenance
    }

    /// Counters of the evaluation that built this fact base.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Every fact of a relation, in row order.
    pub fn facts(&self, rel: RelId) -> impl Iterator<Item = FactId> + '_ {
        (0..self.len(rel) as u32).map(move |row| FactId { rel, row })
    }

    /// Every row of a relation, sorted (the order `prooflog run` prints).
    pub fn rows(&self, rel: RelId) -> Vec<Vec<Value>> {
        self.sorted_facts(rel)
            .into_iter()
            .map(|f| self.args(f))
            .collect()
    }

    /// Every fact of a relation in the order of its values (the order of
    /// [`rows`](Self::rows)), without decoding them: four bytes per fact, so that a
    /// caller can write a large relation out one row at a time.
    pub fn sorted_facts(&self, rel: RelId) -> Vec<FactId> {
        let Some(r) = self.rels.get(rel as usize) else {
            return Vec::new();
        };
        let mut rows: Vec<u32> = (0..r.len()).collect();
        rows.sort_unstable_by(|a, b| self.row_order(rel, *a, *b));
        rows.into_iter().map(|row| FactId { rel, row }).collect()
    }

    /// Two rows of a relation in the order of their values (as `Value`'s order
    /// compares them).
    fn row_order(&self, rel: RelId, a: u32, b: u32) -> std::cmp::Ordering {
        let r = &self.rels[rel as usize];
        let columns = &self.program.relation(rel).columns;
        let (x, y) = (r.row(a), r.row(b));
        for ((p, q), col) in x.iter().zip(y.iter()).zip(columns) {
            let o = match col.ty {
                ColumnType::Number => (p as i64).cmp(&(q as i64)),
                ColumnType::Unsigned => p.cmp(&q),
                ColumnType::Float => f64::from_bits(p).total_cmp(&f64::from_bits(q)),
                ColumnType::Symbol => self.interner.resolve(p).cmp(self.interner.resolve(q)),
            };
            if o != std::cmp::Ordering::Equal {
                return o;
            }
        }
        std::cmp::Ordering::Equal
    }

    /// A fact as the rule language writes it: `pred(a, b)`.
    pub fn fact_text(&self, fact: FactId) -> String {
        crate::value::fact_text(&self.program.relation(fact.rel).name, &self.args(fact))
    }

    /// Every fact matching a pattern such as `path(1, x)`, sorted by values, with the
    /// variables' bindings and the fact's confidence. An unknown relation or a wrong
    /// arity is an `unknown_relation` / `arity_mismatch` error.
    pub fn query(&self, goal: &Goal) -> Result<Vec<Match>> {
        let facts = self.query_facts(goal, None)?;
        let mut names: Vec<(&str, usize)> = Vec::new();
        for (c, arg) in goal.args.iter().enumerate() {
            if let GoalArg::Var(name) = arg
                && !names.iter().any(|(n, _)| n == name)
            {
                names.push((name, c));
            }
        }
        Ok(facts
            .into_iter()
            .map(|fact| {
                let args = self.args(fact);
                let bindings = names
                    .iter()
                    .map(|&(n, c)| (n.to_string(), args[c].clone()))
                    .collect();
                Match {
                    fact,
                    args,
                    bindings,
                    confidence: self.confidence(fact),
                }
            })
            .collect())
    }

    /// The facts matching a pattern, in [`query`](Self::query)'s order (by values), at
    /// most `limit` of them. Nothing is decoded: memory is four bytes per match, and
    /// with a limit only the first `limit` matches are sorted.
    pub fn query_facts(&self, goal: &Goal, limit: Option<usize>) -> Result<Vec<FactId>> {
        let resolved = crate::check::resolve_goal(&self.program, goal)?;
        let rel = resolved.rel;
        let columns = &self.program.relation(rel).columns;
        // Per column: a constant cell to equal, or the column holding the same
        // variable's first occurrence, or nothing.
        enum Pat {
            Const(u64),
            Same(usize),
            Any,
        }
        let mut names: Vec<(&str, usize)> = Vec::new();
        let mut pats = Vec::with_capacity(columns.len());
        for (c, (arg, col)) in resolved.args.iter().zip(columns).enumerate() {
            pats.push(match arg {
                GoalArg::Const(v) => match encode_lookup(v, col.ty, &self.interner) {
                    Some(x) => Pat::Const(x),
                    None => return Ok(Vec::new()),
                },
                GoalArg::Var(name) => match names.iter().find(|(n, _)| n == name) {
                    Some(&(_, first)) => Pat::Same(first),
                    None => {
                        names.push((name, c));
                        Pat::Any
                    }
                },
                GoalArg::Wildcard => Pat::Any,
            });
        }
        let r = &self.rels[rel as usize];
        let mut rows: Vec<u32> = (0..r.len())
            .filter(|&row| {
                let cells = r.row(row);
                pats.iter().enumerate().all(|(c, p)| match p {
                    Pat::Const(x) => cells.get(c) == *x,
                    Pat::Same(first) => cells.get(c) == cells.get(*first),
                    Pat::Any => true,
                })
            })
            .collect();
        let order = |a: &u32, b: &u32| self.row_order(rel, *a, *b);
        if let Some(k) = limit
            && k < rows.len()
        {
            if k == 0 {
                return Ok(Vec::new());
            }
            rows.select_nth_unstable_by(k - 1, order);
            rows.truncate(k);
        }
        rows.sort_unstable_by(order);
        Ok(rows.into_iter().map(|row| FactId { rel, row }).collect())
    }

    /// Number of facts in a relation.
    pub fn len(&self, rel: RelId) -> usize {
        self.rels.get(rel as usize).map_or(0, |r| r.len() as usize)
    }

    /// Look up a ground fact.
    pub fn lookup(&self, rel: RelId, args: &[Value]) -> Option<FactId> {
        let columns = &self.program.relations.get(rel as usize)?.columns;
        if columns.len() != args.len() {
            return None;
        }
        let cells: Option<Vec<u64>> = args
            .iter()
            .zip(columns)
            .map(|(v, c)| encode_lookup(v, c.ty, &self.interner))
            .collect();
        let row = self.rels[rel as usize].find(&cells?)?;
        Some(FactId { rel, row })
    }

    /// A fact's values. Panics if `fact` is not a fact of this fact base.
    pub fn args(&self, fact: FactId) -> Vec<Value> {
        let columns = &self.program.relation(fact.rel).columns;
        self.rels[fact.rel as usize]
            .row(fact.row)
            .iter()
            .zip(columns)
            .map(|(cell, c)| decode(cell, c.ty, &self.interner))
            .collect()
    }

    /// A fact's confidence in [0, 1].
    pub fn confidence(&self, fact: FactId) -> f64 {
        self.rels[fact.rel as usize].meta(fact.row).conf
    }

    /// The best derivation of a derived fact; `None` for input facts and when
    /// provenance was off.
    pub fn derivation(&self, fact: FactId) -> Option<Derivation> {
        if !self.provenance {
            return None;
        }
        let r = self.rels.get(fact.rel as usize)?;
        let meta = (fact.row < r.len()).then(|| r.meta(fact.row))?;
        if meta.rule == INPUT_RULE {
            return None;
        }
        let recorded = r.premises_of(fact.row)?;
        let mut premises = match self.plans.get(meta.rule as usize) {
            Some(Some(Plan {
                restore: Some(restore),
                ..
            })) => restore.premises(&self.rels, r, fact.row, recorded)?,
            _ => recorded.to_vec(),
        };
        let absent = self.absent(meta.rule, &premises);
        premises.retain(|p| p.rel != AGG_MARK);
        Some(Derivation {
            rule: meta.rule,
            premises,
            absent,
            height: meta.height,
        })
    }

    /// Whether `symbol` occurs anywhere in the fact base: in the program's constants
    /// or in any input or derived fact. (A goal's bare identifier that names one is
    /// probably a symbol whose quotes were lost.)
    pub fn has_symbol(&self, symbol: &str) -> bool {
        self.interner.get(symbol).is_some()
    }

    /// The input record of a fact that was given as input (its evidence), if any, in
    /// its owned form: decoded from the fact base's columns on each call (its
    /// provenance record is shared by the facts of one file and cloned here).
    pub fn evidence(&self, fact: FactId) -> Option<InputFact> {
        self.record(self.evidence_index(fact)?)
    }

    /// The edge index of a fact's input record (the number of its `HEDGE-n` tag), if
    /// it was given as input: [`evidence`](Self::evidence)'s `provenance.edge_idx`,
    /// without decoding the record.
    pub fn edge_idx(&self, fact: FactId) -> Option<u64> {
        self.evidence.edge_idx(self.evidence_index(fact)?)
    }

    /// The index of a fact's input record in the evidence list.
    fn evidence_index(&self, fact: FactId) -> Option<usize> {
        let r = self.rels.get(fact.rel as usize)?;
        if fact.row >= r.len() {
            return None;
        }
        let k = r.evidence_of(fact.row);
        (k != NO_EVIDENCE).then_some(k as usize)
    }

    /// Input record `k` (in [`input_records`](Self::input_records)' order).
    fn record(&self, k: usize) -> Option<InputFact> {
        self.evidence.record(k, &self.program, &self.interner)
    }

    /// Every input record in its owned form, in the order they were given (an
    /// overlay's after its base's). A fact given twice has two records;
    /// [`FactBase::evidence`] names the one it keeps.
    pub fn input_records(&self) -> impl Iterator<Item = InputFact> + '_ {
        self.evidence.records(&self.program, &self.interner)
    }

    /// The edge index of every input record, in [`input_records`](Self::input_records)'
    /// order, without decoding the records.
    pub fn input_edge_idxs(&self) -> impl Iterator<Item = Option<u64>> + '_ {
        self.evidence.edge_idxs()
    }

    /// The largest `edge_idx` among the input records (new evidence is numbered after
    /// it).
    pub fn max_edge_idx(&self) -> Option<u64> {
        self.evidence.edge_idxs().flatten().max()
    }

    /// A new fact base: this one plus `extra` input facts and their consequences.
    ///
    /// Only consequences are computed: each stratum whose inputs grew runs semi-naive
    /// rounds seeded with the new and improved facts. A stratum whose aggregates read
    /// a relation that changed, or whose negations read a relation that gained a fact
    /// blocking one of its existing derivations (facts may have to disappear), is
    /// re-evaluated from its input facts, and so is every stratum that reads one that
    /// was. The result equals evaluating the program over all inputs at once (the
    /// same facts and confidences; rows keep the base's numbering where the base's
    /// strata were only extended). `self` is not changed; provenance follows the base,
    /// budget and progress come from `options`.
    ///
    /// `extra` is numbered as evidence added to this base (see
    /// [`number_inputs`](crate::store::number_inputs)): a fact without an `edge_idx`
    /// gets one after the largest in use, and an explicit one that names another fact
    /// of the base is a `bad_input` error; no base fact's tag changes.
    ///
    /// The new fact base starts as a copy of this one's storage, and so records
    /// least-height derivations exactly as a whole evaluation would. A per-request
    /// overlay ([`SharedBase::overlay`]) computes the same facts and confidences
    /// without copying anything.
    pub fn extend(&self, extra: &[InputFact], options: &EvalOptions) -> Result<FactBase> {
        let mut extra = extra.to_vec();
        let owners = EvidenceOwners::new(self);
        crate::store::number_inputs(&self.program, &mut extra, &owners)?;
        let rels: Vec<Relation> = self.rels.iter().cloned().collect();
        incremental(
            self,
            rels,
            self.interner.clone(),
            self.evidence.clone(),
            extra,
            options,
        )
    }

    /// The fact base an evaluation left in `engine`.
    fn from_engine(
        engine: fixpoint::Engine<'_>,
        program: Arc<Program>,
        evidence: Evidence,
    ) -> FactBase {
        let provenance = engine.options.provenance;
        let fixpoint::Engine {
            rels,
            interner,
            stats,
            base_plans,
            ..
        } = engine;
        FactBase {
            program,
            rels: Arc::new(rels),
            interner: interner.into_inner(),
            provenance,
            evidence,
            plans: base_plans,
            stats,
        }
    }

    /// The ground negated atoms a derivation checked absent: replay the rule's base
    /// plan with the recorded premises to recover the variables' values.
    fn absent(&self, rule: RuleId, premises: &[FactId]) -> Vec<(RelId, Vec<Value>)> {
        let Some(Some(plan)) = self.plans.get(rule as usize) else {
            return Vec::new();
        };
        let negates = |body: &[Literal]| body.iter().any(|l| matches!(l, Literal::Negated(_)));
        if !negates(&self.program.rule(rule).body) {
            // Nothing to replay: the common case, and the proof walk's hot path.
            return Vec::new();
        }
        let mut frame = Frame::new(plan);
        let mut it = premises.iter().copied();
        for p in &plan.premises {
            match *p {
                Premise::Fact(f) => {
                    if let Some(x) = it.next() {
                        frame.facts[f] = x;
                    }
                }
                Premise::Agg(a) => {
                    let n = it.next().map_or(0, |m| m.row as usize);
                    frame.agg_facts[a] = it.by_ref().take(n).collect();
                }
            }
        }
        let lens: Vec<u32> = self.rels.iter().map(|r| r.len()).collect();
        let ctx = Ctx::new(
            &self.rels[..],
            &lens,
            &lens,
            &[],
            exec::Syms::Read(&self.interner),
            false,
        );
        let mut found: Vec<(usize, RelId, Vec<u64>)> = Vec::new();
        for step in &plan.steps {
            match step {
                Step::Scan { binds, fact, .. } => {
                    let f = frame.facts[*fact];
                    let cells = self.rels[f.rel as usize].row(f.row);
                    for &(c, s) in binds {
                        frame.slots[s] = cells.get(c);
                    }
                }
                Step::Assign { slot, expr } => match exec::eval(expr, &frame.slots, ctx.syms) {
                    Ok(v) => frame.slots[*slot] = v,
                    Err(_) => break,
                },
                Step::Aggregate(agg) => {
                    if !agg.result_bound {
                        match exec::aggregate(&ctx, agg, &mut frame) {
                            Some((v, _, _)) => frame.slots[agg.result] = v,
                            None => break,
                        }
                    }
                }
                // A projection (a negation with variables of its own) stands for a
                // pattern, not a fact: like a negation with `_`, it has no node.
                Step::Absent { rel, .. } if self.program.relation(*rel).auxiliary => {}
                Step::Absent {
                    rel,
                    access: Access::Exact { key },
                    literal,
                } => {
                    let cells = key
                        .iter()
                        .map(|c| match *c {
                            Cell::Const(x) => x,
                            Cell::Slot(s) => frame.slots[s],
                        })
                        .collect();
                    found.push((*literal, *rel, cells));
                }
                Step::Absent { .. } | Step::Filter { .. } | Step::Test { .. } => {}
            }
        }
        found.sort_by_key(|(lit, _, _)| *lit);
        found
            .into_iter()
            .map(|(_, rel, cells)| {
                let columns = &self.program.relation(rel).columns;
                let values = cells
                    .iter()
                    .zip(columns)
                    .map(|(&x, c)| decode(x, c.ty, &self.interner))
                    .collect();
                (rel, values)
            })
            .collect()
    }
}

/// Which input record owns each edge index of a fact base (for numbering evidence
/// added to it).
pub(crate) struct EvidenceOwners<'a> {
    facts: &'a FactBase,
    index: rustc_hash::FxHashMap<u64, u32>,
    max: Option<u64>,
}

impl<'a> EvidenceOwners<'a> {
    pub(crate) fn new(facts: &'a FactBase) -> EvidenceOwners<'a> {
        let (index, max) = edge_index(&facts.evidence);
        EvidenceOwners { facts, index, max }
    }
}

/// Each edge index of an evidence list with its first record, and the largest index.
pub(crate) fn edge_index(evidence: &Evidence) -> (rustc_hash::FxHashMap<u64, u32>, Option<u64>) {
    let mut index = rustc_hash::FxHashMap::default();
    let mut max = None;
    for (k, idx) in evidence.edge_idxs().enumerate() {
        if let Some(idx) = idx {
            index.entry(idx).or_insert(k as u32);
            max = Some(max.map_or(idx, |m: u64| m.max(idx)));
        }
    }
    (index, max)
}

impl crate::store::EdgeOwners for EvidenceOwners<'_> {
    fn owner(&self, idx: u64) -> Option<Cow<'_, InputFact>> {
        self.facts
            .record(*self.index.get(&idx)? as usize)
            .map(Cow::Owned)
    }

    fn max_index(&self) -> Option<u64> {
        self.max
    }
}

/// Evaluate the consequences of `extra` (numbered) over `base`, whose storage
/// `rels`, `interner` and `evidence` are (copies of, or layers over) — the core of
/// [`FactBase::extend`] and of overlays.
pub(crate) fn incremental(
    base: &FactBase,
    rels: Vec<Relation>,
    interner: Symbols,
    evidence: Evidence,
    extra: Vec<InputFact>,
    options: &EvalOptions,
) -> Result<FactBase> {
    // A rule of many literals nests a call each: evaluated where the stack holds
    // them (see `Engine::run`).
    if fixpoint::deep(&base.program)
        && let Some(pool) = fixpoint::deep_pool()
    {
        return fixpoint::install(&pool, move || {
            incremental_here(base, rels, interner, evidence, extra, options)
        });
    }
    incremental_here(base, rels, interner, evidence, extra, options)
}

/// [`incremental`] on this thread.
fn incremental_here(
    base: &FactBase,
    mut rels: Vec<Relation>,
    mut interner: Symbols,
    mut evidence: Evidence,
    extra: Vec<InputFact>,
    options: &EvalOptions,
) -> Result<FactBase> {
    let program = Arc::clone(&base.program);
    let options = EvalOptions {
        provenance: base.provenance,
        ..options.clone()
    };
    let base_len: Vec<u32> = rels.iter().map(|r| r.len()).collect();
    let mut changed = vec![Vec::new(); rels.len()];
    let mut load = Load::new(
        &program,
        &mut rels,
        &mut interner,
        &mut evidence,
        base.provenance,
        Some(&mut changed),
    );
    for (k, fact) in extra.into_iter().enumerate() {
        load.owned(k, fact)?;
    }
    let added = load.added;
    let mut engine = fixpoint::Engine::new(&program, &options, rels, interner);
    engine.stats.input_facts = added;
    engine.base_plans = base.plans.clone();
    let mut recomputed = vec![false; program.relations.len()];
    for (si, stratum) in program.strata.iter().enumerate() {
        let hit = |rel: RelId| !changed[rel as usize].is_empty() || recomputed[rel as usize];
        let rules = || stratum.rules.iter().map(|&r| program.rule(r));
        let nonmonotone_hit = rules().any(|rule| {
            rule.body.iter().any(|lit| match lit {
                Literal::Negated(a) => hit(a.rel),
                Literal::Aggregate { body, .. } => body.iter().any(|l| match l {
                    Literal::Atom(a) | Literal::Negated(a) => hit(a.rel),
                    _ => false,
                }),
                _ => false,
            })
        });
        let reads_recomputed = rules().any(|rule| {
            rule.body
                .iter()
                .any(|lit| matches!(lit, Literal::Atom(a) if recomputed[a.rel as usize]))
        });
        // New facts of a negated relation only matter if they block a derivation
        // the base made: probe for one before recomputing the stratum.
        let aggregate_hit = rules().any(|rule| {
            rule.body.iter().any(|lit| match lit {
                Literal::Aggregate { body, .. } => body.iter().any(|l| match l {
                    Literal::Atom(a) | Literal::Negated(a) => hit(a.rel),
                    _ => false,
                }),
                _ => false,
            })
        });
        let negates_recomputed = rules().any(|rule| {
            rule.body
                .iter()
                .any(|lit| matches!(lit, Literal::Negated(a) if recomputed[a.rel as usize]))
        });
        let must_recompute = reads_recomputed
            || (nonmonotone_hit
                && (aggregate_hit
                    || negates_recomputed
                    || engine.negations_block(si, &changed, &base_len)?));
        if must_recompute {
            for &rel in &stratum.relations {
                let conf = |k: u32| evidence.confidence(k as usize);
                engine.reset_to_inputs(rel as usize, &conf)?;
                recomputed[rel as usize] = true;
                // Its rows were renumbered, and every reader is recomputed too.
                changed[rel as usize].clear();
            }
            engine.stats.recomputed_strata += 1;
            engine.stratum(si, None)?;
            continue;
        }
        let grows = rules().any(|rule| {
            rule.body
                .iter()
                .any(|lit| matches!(lit, Literal::Atom(a) if hit(a.rel)))
        }) || stratum.relations.iter().any(|&r| hit(r));
        if !grows {
            engine.stats.strata.push(StratumStats::default());
            continue;
        }
        let seed = fixpoint::Seed {
            base_len: base_len.clone(),
            changed: changed.clone(),
        };
        engine.stratum(si, Some(&seed))?;
        for &rel in &stratum.relations {
            let touched = std::mem::take(&mut engine.touched[rel as usize]);
            let c = &mut changed[rel as usize];
            c.extend(touched);
            c.sort_unstable();
            c.dedup();
        }
    }
    engine.finish_stats();
    Ok(FactBase::from_engine(
        engine,
        Arc::clone(&program),
        evidence,
    ))
}

/// Input facts being added to relations: each is validated and encoded, appended as a
/// new row or, for a fact given again, replaces its record when the new input is
/// better (higher confidence; at equal confidence an input beats a derivation). Every
/// input keeps its record in `evidence`. Rows that appeared or changed are pushed to
/// `changed`, when given (an evaluation from scratch needs no list of them).
struct Load<'a> {
    program: &'a Program,
    rels: &'a mut [Relation],
    interner: &'a mut Symbols,
    evidence: &'a mut Evidence,
    provenance: bool,
    changed: Option<&'a mut [Vec<u32>]>,
    /// New rows so far.
    added: usize,
    /// The cells of the fact being added.
    cells: Vec<u64>,
}

impl<'a> Load<'a> {
    fn new(
        program: &'a Program,
        rels: &'a mut [Relation],
        interner: &'a mut Symbols,
        evidence: &'a mut Evidence,
        provenance: bool,
        changed: Option<&'a mut [Vec<u32>]>,
    ) -> Load<'a> {
        Load {
            program,
            rels,
            interner,
            evidence,
            provenance,
            changed,
            added: 0,
            cells: Vec::new(),
        }
    }

    /// Add fact `fact`, the `k`-th of its batch (from 0), given in its owned form.
    fn owned(&mut self, k: usize, fact: InputFact) -> Result<()> {
        self.encode(k, &fact)?;
        let mut p = fact.provenance;
        let edge_idx = p.edge_idx.take();
        let provenance = self.evidence.provenance(p);
        self.insert(fact.rel, fact.confidence, provenance, edge_idx)
    }

    /// [`Load::owned`] of a fact borrowed from a list, with its edge index as
    /// numbering completed it (its provenance record is copied only when it differs
    /// from the last fact's).
    fn listed(&mut self, k: usize, fact: &InputFact, edge_idx: Option<u64>) -> Result<()> {
        self.encode(k, fact)?;
        let provenance = self.evidence.provenance_of(&fact.provenance);
        self.insert(fact.rel, fact.confidence, provenance, edge_idx)
    }

    /// Encode the `k`-th fact's values into `self.cells`, checked against its
    /// relation's columns.
    fn encode(&mut self, k: usize, fact: &InputFact) -> Result<()> {
        let relation = crate::store::facts::checked_relation(self.program, k, fact)?;
        self.cells.clear();
        for (v, c) in fact.args.iter().zip(&relation.columns) {
            // A number in a number column, the most common cell, without a call.
            let cell = match (v, c.ty) {
                (Value::Number(i), ColumnType::Number) => Some(*i as u64),
                _ => encode(v, c.ty, self.interner),
            };
            match cell {
                Some(x) => self.cells.push(x),
                None => return Err(crate::store::facts::bad_value(self.program, k, fact, v, c)),
            }
        }
        Ok(())
    }

    /// Add a load's facts as [`complete_table`](crate::store::numbering::complete_table)
    /// completed them: the facts it found missing (the program's own), then the
    /// load's rows.
    fn completed(
        &mut self,
        facts: &InputFacts,
        completed: crate::store::numbering::CompletedTable,
    ) -> Result<()> {
        let first = completed.missing.len();
        for (k, fact) in completed.missing.into_iter().enumerate() {
            self.owned(k, fact)?;
        }
        self.columns(facts, first, completed.edges.as_deref())
    }

    /// Add the rows of a load, the first of them the `first`-th fact of the batch,
    /// with their edge indexes (`None`: the rows' own). Cells are copied as they are,
    /// except symbols, re-keyed from the load's symbol table into the fact base's
    /// (once per distinct symbol, in the order a row-by-row encoding interns them).
    /// A row whose relation the load typed differently from the program (facts typed
    /// for another program) is decoded and added as given, so that it is checked.
    fn columns(
        &mut self,
        facts: &InputFacts,
        first: usize,
        edges: Option<&[Option<u64>]>,
    ) -> Result<()> {
        let table = &facts.table;
        let offset = self.evidence.provenances(&table.provenances);
        let fits: Vec<bool> = (0..facts.types.len())
            .map(|rel| {
                self.program.relations.get(rel).is_some_and(|r| {
                    r.columns.len() == facts.types[rel].len()
                        && r.columns
                            .iter()
                            .zip(&facts.types[rel])
                            .all(|(c, &t)| c.ty == t)
                })
            })
            .collect();
        self.evidence.reserve(table.cells.len());
        self.reserve(&table.rows);
        let mut symbols = vec![u64::MAX; facts.symbols.len()];
        for (i, row) in table.rows.iter().enumerate() {
            let edge_idx = edges.map_or(row.edge_idx, |e| e[i]);
            let types = facts.types.get(row.rel as usize);
            let Some(types) =
                types.filter(|_| fits[row.rel as usize] && (0.0..=1.0).contains(&row.confidence))
            else {
                let mut fact = facts.get(i);
                fact.provenance.edge_idx = edge_idx;
                self.owned(first + i, fact)?;
                continue;
            };
            self.cells.clear();
            for (c, &ty) in table.cells_of(&row, types.len()).zip(types) {
                self.cells.push(if ty == ColumnType::Symbol {
                    match symbols.get(c as usize) {
                        Some(&x) if x != u64::MAX => x,
                        _ => {
                            let x = self
                                .interner
                                .get_or_intern(crate::value::cell::symbol(c, &facts.symbols));
                            if let Some(slot) = symbols.get_mut(c as usize) {
                                *slot = x;
                            }
                            x
                        }
                    }
                } else {
                    c
                });
            }
            self.insert(row.rel, row.confidence, offset + row.provenance, edge_idx)?;
        }
        Ok(())
    }

    /// Whether relation `rel` of a load has the column types the program gives it.
    fn same_types(&self, facts: &InputFacts, rel: usize) -> bool {
        self.program.relations.get(rel).is_some_and(|r| {
            r.columns.len() == facts.types[rel].len()
                && r.columns
                    .iter()
                    .zip(&facts.types[rel])
                    .all(|(c, &t)| c.ty == t)
        })
    }

    /// Whether every row of a load can be taken as it is: its relation typed as the
    /// program types it, its confidence in [0, 1].
    fn fits(&self, facts: &InputFacts) -> bool {
        let fits: Vec<bool> = (0..facts.types.len())
            .map(|rel| self.same_types(facts, rel))
            .collect();
        facts.table.rows.iter().all(|r| {
            fits.get(r.rel as usize).copied().unwrap_or(false)
                && (0.0..=1.0).contains(&r.confidence)
        })
    }

    /// Take the rows of a load that [`fits`](Self::fits), as the first records: its
    /// symbol cells are re-keyed in place (in the order
    /// [`columns`](Self::columns) interns them), and its table becomes the records.
    fn adopt(&mut self, facts: InputFacts) -> Result<()> {
        let InputFacts {
            mut table,
            symbols,
            types,
            ..
        } = facts;
        let mut keys = vec![u64::MAX; symbols.len()];
        // (A load without symbols has no cell to re-key.)
        let rows = if symbols.is_empty() {
            0
        } else {
            table.rows.len()
        };
        for row in table.rows.iter().take(rows) {
            let columns = &types[row.rel as usize];
            for (j, _) in columns
                .iter()
                .enumerate()
                .filter(|(_, t)| **t == ColumnType::Symbol)
            {
                let c = table.cells.get(row.start + j);
                let x = match keys.get(c as usize) {
                    Some(&x) if x != u64::MAX => x,
                    _ => {
                        let x = self
                            .interner
                            .get_or_intern(crate::value::cell::symbol(c, &symbols));
                        if let Some(slot) = keys.get_mut(c as usize) {
                            *slot = x;
                        }
                        x
                    }
                };
                table.cells.set(row.start + j, x);
            }
        }
        drop(symbols);
        self.reserve(&table.rows);
        let first = self.evidence.len();
        self.evidence.adopt(table);
        let Load {
            program,
            rels,
            evidence,
            provenance,
            changed,
            added,
            cells,
            ..
        } = self;
        let evidence: &Evidence = evidence;
        let mut to = Place {
            rels,
            evidence,
            provenance: *provenance,
            changed: changed.as_deref_mut(),
            added,
        };
        let (table, base) = evidence.own();
        for (i, row) in table.rows.iter_from(first - base).enumerate() {
            cells.clear();
            cells.extend(table.cells_of(&row, program.relation(row.rel).arity()));
            to.place(cells, row.rel, row.confidence, (first + i) as u32)?;
        }
        Ok(())
    }

    /// Make room in the relations for the rows of a load, all at once.
    fn reserve(&mut self, rows: &crate::store::facts::Rows) {
        self.reserve_counts(rows.per_relation(self.rels.len()));
    }

    /// Make room for facts given one by one, all at once: in the relations, and in
    /// the input records for their cells (a fact of a relation the program lacks is
    /// left to its error).
    fn reserve_listed(&mut self, facts: &[InputFact]) {
        let mut counts = vec![0; self.rels.len()];
        let mut cells = 0;
        for fact in facts {
            if let Some(n) = counts.get_mut(fact.rel as usize) {
                *n += 1;
                cells += fact.args.len();
            }
        }
        self.evidence.reserve(cells);
        self.reserve_counts(counts);
    }

    fn reserve_counts(&mut self, counts: Vec<usize>) {
        for (r, n) in self.rels.iter_mut().zip(counts) {
            if n > 0 {
                r.reserve_inputs(n, self.provenance);
            }
        }
    }

    /// Add the fact in `self.cells` with its record.
    fn insert(
        &mut self,
        rel: RelId,
        confidence: f64,
        provenance: u32,
        edge_idx: Option<u64>,
    ) -> Result<()> {
        let id = self.evidence.len() as u32;
        self.evidence
            .push(rel, &self.cells, confidence, provenance, edge_idx);
        self.place(rel, confidence, id)
    }

    /// Add the fact in `self.cells`, whose record is record `id`, to its relation.
    fn place(&mut self, rel: RelId, confidence: f64, id: u32) -> Result<()> {
        let mut to = Place {
            rels: self.rels,
            evidence: self.evidence,
            provenance: self.provenance,
            changed: self.changed.as_deref_mut(),
            added: &mut self.added,
        };
        to.place(&self.cells, rel, confidence, id)
    }
}

/// What placing an input fact in its relation reads and writes (the parts of a
/// [`Load`] it needs, so that a load's rows can be read from the records meanwhile).
struct Place<'p> {
    rels: &'p mut [Relation],
    evidence: &'p Evidence,
    provenance: bool,
    changed: Option<&'p mut [Vec<u32>]>,
    added: &'p mut usize,
}

impl Place<'_> {
    /// Note that row `row` of relation `rel` appeared or changed.
    fn mark(&mut self, rel: RelId, row: u32) {
        if let Some(changed) = self.changed.as_deref_mut() {
            changed[rel as usize].push(row);
        }
    }

    /// Add the fact with cells `cells`, whose record is record `id`, to its relation.
    #[inline]
    fn place(&mut self, cells: &[u64], rel: RelId, confidence: f64, id: u32) -> Result<()> {
        let r = &mut self.rels[rel as usize];
        let (row, new) = insert_input(r, cells, Meta::input(confidence));
        if new {
            *self.added += 1;
            r.push_records(id, self.provenance.then_some(&[][..]))?;
            self.mark(rel, row);
        } else {
            let m = r.meta(row);
            let higher = confidence > m.conf;
            let lower_height = self.provenance && confidence == m.conf && m.rule != INPUT_RULE;
            if higher || lower_height {
                r.set_meta(row, Meta::input(confidence));
                r.set_evidence(row, id);
                self.mark(rel, row);
            } else {
                // A derived fact keeps its best input record too: recomputing its
                // stratum starts from it.
                let kept = r.evidence_of(row);
                let better = kept == NO_EVIDENCE
                    || self
                        .evidence
                        .confidence(kept as usize)
                        .is_some_and(|c| confidence > c);
                if better {
                    r.set_evidence(row, id);
                }
            }
        }
        Ok(())
    }
}

/// Insert an input row into `r`: at its width (one to four cells) where the
/// relation holds its rows narrow and the row fits that ([`Relation::insert_narrow`],
/// as the merge's inserts), else through the general insert. Loading facts given
/// as a list, the general insert was about a third of a fact's cost.
#[inline]
fn insert_input(r: &mut Relation, cells: &[u64], meta: Meta) -> (u32, bool) {
    #[inline(always)]
    fn at<const N: usize>(
        r: &mut Relation,
        cells: &[u64],
        meta: Meta,
        own: bool,
    ) -> Option<(u32, bool)> {
        let cells: &[u64; N] = cells.try_into().ok()?;
        let tag = tag_of(hash_cells(cells.iter().copied()));
        if own {
            r.insert_narrow::<N, true>(cells, tag, meta)
        } else {
            r.insert_narrow::<N, false>(cells, tag, meta)
        }
    }
    let fast = match (r.narrow_layout(), cells.len()) {
        (Some(own), 1) => at::<1>(r, cells, meta, own),
        (Some(own), 2) => at::<2>(r, cells, meta, own),
        (Some(own), 3) => at::<3>(r, cells, meta, own),
        (Some(own), 4) => at::<4>(r, cells, meta, own),
        _ => None,
    };
    fast.unwrap_or_else(|| r.insert(cells, meta))
}

/// What [`evaluate`] reads: input facts given one by one ([`InputFact`]s) or as a
/// [`Loader`](crate::store::Loader) typed them ([`InputFacts`]), borrowed or (a
/// load's facts) taken.
pub trait Inputs<'a> {
    /// The facts, in the form they were given.
    fn input(self) -> Input<'a>;
}

/// Input facts as [`evaluate`] reads them.
#[derive(Debug, Clone)]
pub enum Input<'a> {
    /// Facts in their owned form.
    Facts(&'a [InputFact]),
    /// Facts by columns, as a load typed them: read row by row, never decoded; the
    /// fact base copies their rows into its input records.
    Columns(&'a InputFacts),
    /// Facts by columns, taken: their table becomes the fact base's input records as
    /// it is (symbols re-keyed in place), so that every fact is stored once.
    Taken(Box<InputFacts>),
}

impl<'a> Inputs<'a> for &'a [InputFact] {
    fn input(self) -> Input<'a> {
        Input::Facts(self)
    }
}

impl<'a, const N: usize> Inputs<'a> for &'a [InputFact; N] {
    fn input(self) -> Input<'a> {
        Input::Facts(self)
    }
}

impl<'a> Inputs<'a> for &'a Vec<InputFact> {
    fn input(self) -> Input<'a> {
        Input::Facts(self)
    }
}

impl<'a> Inputs<'a> for &'a InputFacts {
    fn input(self) -> Input<'a> {
        Input::Columns(self)
    }
}

impl Inputs<'static> for InputFacts {
    fn input(self) -> Input<'static> {
        Input::Taken(Box::new(self))
    }
}

/// Keep the C allocator from copying large vectors as they grow, for a process
/// that evaluates large programs: call it once, first thing in `main`, before
/// any thread starts. The command line and the service call it; an embedding
/// program may. Returns whether it changed anything (on glibc only).
///
/// glibc maps an allocation of 128 KiB or more on its own, and a mapped block
/// grows in place. But once a mapped block is freed (an evaluation gives back
/// grown dedup tables, grids and derivation buffers of some MiB), glibc raises
/// that threshold to the block's size, up to 32 MiB: vectors below it then live
/// on the heap, and growing one there copies it, so that for a moment both
/// copies are resident. This fixes the threshold at its default, which also
/// stops it moving. Peak memory on a 4× CSPA analysis: 24.2 MiB before, 22.6
/// after; on a 2,000-node closure 78.9 and 75.1 (BENCHMARKS.md, Round 23).
pub fn fix_mmap_threshold() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // 128 KiB: glibc's default (`DEFAULT_MMAP_THRESHOLD_MIN`). Setting it
        // turns the adjustment off.
        const THRESHOLD: libc::c_int = 128 * 1024;
        // SAFETY: `mallopt` only sets an allocator parameter; called before any
        // other thread allocates (this function's contract), it races nothing.
        unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, THRESHOLD) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Evaluate a program over input facts.
///
/// The input facts are the facts written in the program text (`Program::facts`, with
/// provenance source `"program"`) followed by `inputs`, numbered by
/// [`complete_inputs`](crate::store::complete_inputs): `inputs` that already start
/// with the program's facts (a [`Loader`](crate::store::Loader)'s output) are taken as
/// they are, and every fact without an `edge_idx` gets one. A fact given twice keeps
/// its highest confidence and, on ties, its first record. An input of an unknown
/// relation, of the wrong arity, with a value its column cannot hold, with a
/// confidence outside [0, 1], or with an `edge_idx` another fact owns is a
/// `bad_input` error.
///
/// A load's facts ([`InputFacts`]) are read from their columns straight into the
/// relations and the fact base's input records, with no owned copy of any fact; given
/// by value (`evaluate(program, loaded.facts, …)`), their table becomes those records.
pub fn evaluate<'a>(
    program: Arc<Program>,
    inputs: impl Inputs<'a>,
    options: &EvalOptions,
) -> Result<FactBase> {
    let mut interner = Symbols::new();
    let mut rels: Vec<Relation> = program
        .relations
        .iter()
        .map(|r| Relation::new(r.arity()))
        .collect();
    let mut evidence = Evidence::default();
    let mut load = Load::new(
        &program,
        &mut rels,
        &mut interner,
        &mut evidence,
        options.provenance,
        None,
    );
    match inputs.input() {
        Input::Facts(facts) => {
            let (missing, edges) = crate::store::numbering::complete_list(&program, facts)?;
            let first = missing.len();
            for (k, fact) in missing.into_iter().enumerate() {
                load.owned(k, fact)?;
            }
            load.reserve_listed(facts);
            for (k, (fact, &edge_idx)) in facts.iter().zip(&edges).enumerate() {
                load.listed(first + k, fact, edge_idx)?;
            }
        }
        Input::Columns(facts) => {
            let completed = crate::store::numbering::complete_table(&program, facts)?;
            load.completed(facts, completed)?;
        }
        Input::Taken(mut facts) => {
            let completed = crate::store::numbering::complete_table(&program, &facts)?;
            if completed.missing.is_empty() && load.fits(&facts) {
                if let Some(edges) = completed.edges {
                    facts.table.rows.set_edges(|k, _| edges[k]);
                }
                load.adopt(*facts)?;
            } else {
                load.completed(&facts, completed)?;
            }
        }
    }
    let input_facts = load.added;
    let mut engine = fixpoint::Engine::new(&program, options, rels, interner);
    engine.stats.input_facts = input_facts;
    engine.run()?;
    Ok(FactBase::from_engine(
        engine,
        Arc::clone(&program),
        evidence,
    ))
}
