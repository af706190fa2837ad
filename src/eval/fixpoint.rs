//! The semi-naive loop: strata in order; per recursive stratum, rounds that evaluate
//! only the rule variants whose delta atom reads a fact that changed (appeared, or
//! improved its confidence or height) in the round before, until nothing changes.
//!
//! Variant `i` of a rule reads the delta at its i-th same-stratum atom, the old
//! version (rows that existed before the last round) at the same-stratum atoms before
//! it, and the full version after it, so every new combination is joined at least once.
//! Derived tuples are buffered per chunk of the first scan's candidates and merged
//! between chunks; reads are bounded by the row counts at the round's start, so a
//! merge never disturbs a running scan.

use std::hash::Hasher;
use std::time::Instant;

use crate::diag::{Diagnostic, ErrorCode, Result};
use crate::eval::exec::{self, Ctx, Frame, Syms};
use crate::eval::plan::{CExpr, Plan, Planner, Premise, Step, Version};
use crate::eval::relation::{AGG_MARK, Meta, NO_EVIDENCE, Relation, tag_of};
use crate::eval::symbols::Symbols;
use crate::eval::{EvalOptions, FactId, Progress, Stats, StratumStats};
use crate::ir::{Literal, Program};

/// Candidates of the first scan evaluated between two merges.
const CHUNK: usize = 64;
/// Buffered derivations that trigger a merge.
const FLUSH: usize = 1 << 12;

/// Derived tuples waiting to be merged into their relation.
#[derive(Default)]
struct Pending {
    cells: Vec<u64>,
    /// Dedup digest of each tuple's cells.
    tags: Vec<u32>,
    conf: Vec<f64>,
    height: Vec<u32>,
    /// Premise list bounds (with provenance): `premises[starts[k]..starts[k + 1]]`.
    starts: Vec<u32>,
    premises: Vec<FactId>,
}

impl Pending {
    fn len(&self) -> usize {
        self.conf.len()
    }

    fn clear(&mut self) {
        self.cells.clear();
        self.tags.clear();
        self.conf.clear();
        self.height.clear();
        self.starts.clear();
        self.premises.clear();
    }
}

/// Evaluation state over one program.
pub(crate) struct Engine<'a> {
    pub program: &'a Program,
    pub options: &'a EvalOptions,
    pub rels: Vec<Relation>,
    /// Symbols; functors that make new ones (`cat`, `to_string`) intern them during
    /// the joins, hence the cell.
    pub interner: std::cell::RefCell<Symbols>,
    pub stats: Stats,
    /// Base plan (no delta) of every rule, by rule id.
    pub base_plans: Vec<Option<Plan>>,
    /// Per relation: rows already queued for the next delta.
    queued: Vec<Queued>,
    /// Per relation: the next delta.
    next_delta: Vec<Vec<u32>>,
    derived_total: usize,
    /// With a seed: every row of the stratum's relations that entered a delta.
    pub touched: Vec<Vec<u32>>,
    /// Whether, in the current stratum, a fact's confidence rose after a rule could
    /// have read it (its dependents' heights may then not be least).
    conf_raised: bool,
}

/// Where an incremental stratum evaluation starts: the rows each relation had before
/// the new facts, and the rows that appeared or improved since.
pub(crate) struct Seed {
    pub base_len: Vec<u32>,
    pub changed: Vec<Vec<u32>>,
}

fn budget_error(what: String) -> crate::diag::Error {
    Diagnostic::new(ErrorCode::BudgetExceeded, what)
        .with_help("raise the evaluation budget or narrow the program's inputs")
        .into()
}

impl<'a> Engine<'a> {
    pub fn new(
        program: &'a Program,
        options: &'a EvalOptions,
        rels: Vec<Relation>,
        interner: Symbols,
    ) -> Engine<'a> {
        let n = rels.len();
        let queued = rels.iter().map(Queued::for_relation).collect();
        Engine {
            program,
            options,
            rels,
            interner: std::cell::RefCell::new(interner),
            stats: Stats::default(),
            base_plans: vec![None; program.rules.len()],
            queued,
            next_delta: vec![Vec::new(); n],
            derived_total: 0,
            touched: vec![Vec::new(); n],
            conf_raised: false,
        }
    }

    fn provenance(&self) -> bool {
        self.options.provenance
    }

    /// Evaluate every stratum in order.
    pub fn run(&mut self) -> Result<()> {
        for si in 0..self.program.strata.len() {
            self.stratum(si, None)?;
        }
        Ok(())
    }

    pub(super) fn check_deadline(&self) -> Result<()> {
        if let Some(d) = self.options.budget.deadline
            && Instant::now() >= d
        {
            return Err(budget_error("evaluation passed its deadline".into()));
        }
        Ok(())
    }

    /// Evaluate stratum `si`. With a seed, evaluate only the consequences of the
    /// seed's changed rows (every rule runs as semi-naive variants whose delta atoms
    /// read relations that changed), assuming the rest was evaluated before.
    pub fn stratum(&mut self, si: usize, seed: Option<&Seed>) -> Result<()> {
        let program = self.program;
        let stratum = &program.strata[si];
        let mut in_stratum = vec![false; program.relations.len()];
        for &r in &stratum.relations {
            in_stratum[r as usize] = true;
        }
        let reads_stratum = |rule: &crate::ir::Rule| {
            rule.body
                .iter()
                .any(|l| matches!(l, Literal::Atom(a) if in_stratum[a.rel as usize]))
        };
        // Rules that read no relation of their own stratum run once, in round 0; the
        // others run as semi-naive variants from round 1 on, where the first delta is
        // every fact of the stratum's relations. Their base plans only serve to replay
        // derivations.
        let mut once = Vec::new();
        let mut variants = Vec::new();
        let mut replay = Vec::new();
        // Relations whose delta a variant may read (and whose old version is
        // distinct from the full one).
        let deltable: Vec<bool> = match seed {
            None => in_stratum.clone(),
            Some(s) => (0..in_stratum.len())
                .map(|r| in_stratum[r] || !s.changed[r].is_empty())
                .collect(),
        };
        for &rid in &stratum.rules {
            let rule = program.rule(rid);
            if seed.is_some() {
                let mut planner = Planner {
                    program,
                    interner: self.interner.get_mut(),
                    rels: &mut self.rels,
                    replay_only: false,
                };
                for (i, lit) in rule.body.iter().enumerate() {
                    if let Literal::Atom(a) = lit
                        && deltable[a.rel as usize]
                    {
                        variants.push(planner.plan(rule, Some(i), &deltable)?);
                    }
                }
                continue;
            }
            let recursive = stratum.recursive && reads_stratum(rule);
            let mut planner = Planner {
                program,
                interner: self.interner.get_mut(),
                rels: &mut self.rels,
                replay_only: recursive,
            };
            let base = planner.plan(rule, None, &in_stratum)?;
            if recursive {
                planner.replay_only = false;
                for (i, lit) in rule.body.iter().enumerate() {
                    if let Literal::Atom(a) = lit
                        && in_stratum[a.rel as usize]
                    {
                        variants.push(planner.plan(rule, Some(i), &in_stratum)?);
                    }
                }
            } else {
                once.push(base.clone());
            }
            replay.push((rid, base));
        }
        let mut st = StratumStats::default();
        // An earlier fact whose confidence rose before this stratum counts as raised.
        self.conf_raised = seed.is_some_and(|s| {
            s.changed
                .iter()
                .zip(&s.base_len)
                .any(|(rows, &len)| rows.iter().any(|&row| row < len))
        });
        self.check_deadline()?;
        // Round 0: the rules that need no fixpoint, over the full relations.
        let lens: Vec<u32> = self.rels.iter().map(|r| r.len()).collect();
        let before = self.derived_total;
        for plan in &once {
            self.run_plan(plan, &lens, &lens, &[], &mut st)?;
        }
        st.rounds = 1;
        self.report(si, 0, self.derived_total - before);
        let mut first = true;
        let mut round_start = match seed {
            None => vec![0; self.rels.len()],
            Some(s) => s.base_len.clone(),
        };
        while (stratum.recursive || seed.is_some()) && !variants.is_empty() {
            let deltas: Vec<Vec<u32>> = self
                .next_delta
                .iter_mut()
                .enumerate()
                .map(|(rel, d)| {
                    let mut d = std::mem::take(d);
                    match seed {
                        Some(s) if first => {
                            d = s.changed[rel].clone();
                            d.sort_unstable();
                            d.dedup();
                        }
                        None if first && in_stratum[rel] => {
                            d = (0..self.rels[rel].len()).collect();
                        }
                        _ => d.sort_unstable(),
                    }
                    d
                })
                .collect();
            first = false;
            if seed.is_some() {
                for &rel in &stratum.relations {
                    self.touched[rel as usize].extend_from_slice(&deltas[rel as usize]);
                }
            }
            for (rel, q) in self.queued.iter_mut().enumerate() {
                for &row in &deltas[rel] {
                    q.set(row, false);
                }
            }
            if deltas.iter().all(|d| d.is_empty()) {
                break;
            }
            if let Some(max) = self.options.budget.max_rounds
                && st.rounds >= max
            {
                return Err(budget_error(format!(
                    "stratum {si} needed more than {max} rounds"
                )));
            }
            self.check_deadline()?;
            let old = round_start;
            let full: Vec<u32> = self.rels.iter().map(|r| r.len()).collect();
            let before = self.derived_total;
            for plan in &variants {
                let Some(Step::Scan {
                    rel,
                    version: Version::Delta,
                    ..
                }) = plan.steps.first()
                else {
                    continue;
                };
                let delta = &deltas[*rel as usize];
                if !delta.is_empty() {
                    self.run_plan(plan, &old, &full, delta, &mut st)?;
                }
            }
            self.report(si, st.rounds, self.derived_total - before);
            st.rounds += 1;
            round_start = full;
        }
        if seed.is_some() {
            // Rows changed in the last round that no rule reads are changes too.
            for &rel in &stratum.relations {
                let d = &self.next_delta[rel as usize];
                self.touched[rel as usize].extend_from_slice(d);
            }
        }
        // Changes of a finished stratum feed no rule of its own.
        for (rel, d) in self.next_delta.iter_mut().enumerate() {
            for &row in d.iter() {
                self.queued[rel].set(row, false);
            }
            d.clear();
        }
        for (rid, plan) in replay {
            self.base_plans[rid as usize] = Some(plan);
        }
        // The least-height pass revisits every fact of the stratum; a layer over a
        // shared base keeps the derivations the rounds chose (of the best
        // confidence, so valid, but not re-selected for least height).
        let layered = stratum
            .relations
            .iter()
            .any(|&r| self.rels[r as usize].is_layer());
        if self.provenance() && self.conf_raised && !layered {
            self.settle_heights(si, &in_stratum)?;
        }
        self.stats.strata.push(st);
        Ok(())
    }

    /// Empty a relation down to its input facts (at their input confidence), for
    /// re-evaluating its stratum from scratch. The relation becomes plain (a layer's
    /// base is left alone): its rows are renumbered.
    pub fn reset_to_inputs(
        &mut self,
        rel: usize,
        evidence: &dyn Fn(u32) -> Option<f64>,
    ) -> Result<()> {
        let old = &self.rels[rel];
        let mut fresh = Relation::new(self.program.relations[rel].arity());
        let provenance = self.provenance();
        for row in old.input_rows() {
            let k = old.evidence_of(row);
            let conf = evidence(k).unwrap_or(1.0);
            let (_, new) = fresh.insert(old.row(row), Meta::input(conf));
            if new {
                fresh.push_records(k, provenance.then_some(&[][..]))?;
            }
        }
        self.queued[rel] = Queued::for_relation(&fresh);
        self.next_delta[rel].clear();
        self.rels[rel] = fresh;
        Ok(())
    }

    /// Whether a fact new to a relation that stratum `si` negates (a row of
    /// `changed` from `base_len` on) blocks a derivation of a fact that exists: each
    /// rule is run with that negation read positively, its delta being the new facts.
    /// When none does, the stratum's facts need not be recomputed: the new negated
    /// facts remove nothing, and seeded rounds apply them to what is derived next.
    pub fn negations_block(
        &mut self,
        si: usize,
        changed: &[Vec<u32>],
        base_len: &[u32],
    ) -> Result<bool> {
        let program = self.program;
        let everything = vec![true; program.relations.len()];
        for &rid in &program.strata[si].rules {
            let rule = program.rule(rid);
            for (i, lit) in rule.body.iter().enumerate() {
                let Literal::Negated(a) = lit else { continue };
                let fresh: Vec<u32> = changed[a.rel as usize]
                    .iter()
                    .copied()
                    .filter(|&r| r >= base_len[a.rel as usize])
                    .collect();
                if fresh.is_empty() {
                    continue;
                }
                let probe = negation_probe(rule, i);
                let plan = Planner {
                    program,
                    interner: self.interner.get_mut(),
                    rels: &mut self.rels,
                    replay_only: false,
                }
                .plan(&probe, Some(i), &everything)?;
                if self.emits_existing(&plan, &fresh) {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Whether running `plan` over `delta` derives a fact its head relation has.
    fn emits_existing(&self, plan: &Plan, delta: &[u32]) -> bool {
        if !plan.feasible {
            return false;
        }
        let lens: Vec<u32> = self.rels.iter().map(|r| r.len()).collect();
        let ctx = Ctx {
            rels: &self.rels,
            old: &lens,
            full: &lens,
            delta,
            syms: Syms::Write(&self.interner),
            provenance: false,
        };
        let syms = ctx.syms;
        let head = &self.rels[plan.head_rel as usize];
        let mut found = false;
        let mut cells = Vec::with_capacity(plan.head.len());
        let mut sink = |frame: &mut Frame, _: f64, _: u32| {
            if found {
                return;
            }
            cells.clear();
            for e in &plan.head {
                match exec::eval(e, &frame.slots, syms) {
                    Some(v) => cells.push(v),
                    None => return,
                }
            }
            found = head.find(&cells).is_some();
        };
        let mut frame = Frame::new(plan);
        exec::run_plan(&ctx, plan, &mut frame, 0..usize::MAX, &mut sink);
        found
    }

    fn report(&self, stratum: usize, round: u32, new_facts: usize) {
        if let Some(p) = &self.options.progress {
            p(&Progress {
                stratum,
                round,
                new_facts,
                total_facts: self.rels.iter().map(|r| r.len() as usize).sum(),
            });
        }
    }

    fn run_plan(
        &mut self,
        plan: &Plan,
        old: &[u32],
        full: &[u32],
        delta: &[u32],
        st: &mut StratumStats,
    ) -> Result<()> {
        if !plan.feasible {
            return Ok(());
        }
        let provenance = self.provenance();
        let mut frame = Frame::new(plan);
        let mut pending = Pending::default();
        let mut lo = 0;
        loop {
            let total = {
                let ctx = Ctx {
                    rels: &self.rels,
                    old,
                    full,
                    delta,
                    syms: Syms::Write(&self.interner),
                    provenance,
                };
                let syms = ctx.syms;
                let mut sink = |frame: &mut Frame, conf: f64, height: u32| {
                    emit(plan, frame, conf, height, provenance, syms, &mut pending);
                };
                exec::run_plan(&ctx, plan, &mut frame, lo..lo + CHUNK, &mut sink)
            };
            lo += CHUNK;
            let last = lo >= total;
            if last || pending.len() >= FLUSH {
                st.derivations += pending.len() as u64;
                self.merge(plan, &mut pending, full[plan.head_rel as usize], st)?;
                self.check_deadline()?;
            }
            if last {
                return Ok(());
            }
        }
    }

    /// Merge buffered derivations into the head relation: new facts are appended,
    /// better derivations replace worse ones, and facts that appeared or improved are
    /// queued for the next delta. Rows from `unread` on appeared in this round, so no
    /// rule has read them yet.
    fn merge(
        &mut self,
        plan: &Plan,
        pending: &mut Pending,
        unread: u32,
        st: &mut StratumStats,
    ) -> Result<()> {
        let provenance = self.provenance();
        let head = plan.head_rel as usize;
        let arity = plan.head.len();
        let rel = &mut self.rels[head];
        let queued = &mut self.queued[head];
        let next = &mut self.next_delta[head];
        let mut raised = false;
        let n = pending.len();
        let tags = &pending.tags;
        // Probes of a large table miss the cache: fetch the slot of the tuple AHEAD
        // places on, and the row that slot names half as far on, so that the misses
        // overlap instead of queueing.
        const AHEAD: usize = 16;
        rel.reserve(n);
        for &t in &tags[..n.min(AHEAD)] {
            rel.prefetch_slot(t);
        }
        for k in 0..n {
            if let Some(&t) = tags.get(k + AHEAD) {
                rel.prefetch_slot(t);
            }
            if let Some(&t) = tags.get(k + AHEAD / 2) {
                rel.prefetch_row(t);
            }
            let cells = &pending.cells[k * arity..k * arity + arity];
            let meta = Meta {
                conf: pending.conf[k],
                height: if provenance { pending.height[k] } else { 0 },
                rule: plan.rule,
            };
            let (row, new) = rel.insert_tagged(cells, tags[k], meta);
            if new {
                self.derived_total += 1;
                st.derived += 1;
                let prem = provenance.then(|| {
                    &pending.premises[pending.starts[k] as usize..pending.starts[k + 1] as usize]
                });
                rel.push_records(NO_EVIDENCE, prem)?;
                queued.push(true);
                next.push(row);
                continue;
            }
            let old = rel.meta(row);
            raised |= meta.conf > old.conf && row < unread;
            let (better, improved) = if provenance {
                let improved =
                    meta.conf > old.conf || (meta.conf == old.conf && meta.height < old.height);
                let tie = meta.conf == old.conf && meta.height == old.height;
                (improved || (tie && meta.rule < old.rule), improved)
            } else {
                (meta.conf > old.conf, meta.conf > old.conf)
            };
            if !better {
                continue;
            }
            if provenance {
                let prem =
                    &pending.premises[pending.starts[k] as usize..pending.starts[k + 1] as usize];
                rel.set_premises(row, prem)?;
                rel.set_meta(row, meta);
            } else {
                rel.set_conf(row, meta.conf);
            }
            if improved {
                st.improved += 1;
                if !queued.get(row) {
                    queued.set(row, true);
                    next.push(row);
                }
            }
        }
        pending.clear();
        self.conf_raised |= raised;
        if let Some(max) = self.options.budget.max_facts
            && self.derived_total > max
        {
            return Err(budget_error(format!(
                "evaluation derived more than {max} facts"
            )));
        }
        Ok(())
    }
}

/// `rule` with its `i`-th literal, a negation, read as a positive atom: what probes
/// whether new facts of the negated relation block a derivation.
pub(crate) fn negation_probe(rule: &crate::ir::Rule, i: usize) -> crate::ir::Rule {
    let mut probe = rule.clone();
    if let Some(Literal::Negated(a)) = probe.body.get(i).cloned() {
        probe.body[i] = Literal::Atom(a);
    }
    probe
}

/// Which rows of a relation are queued for the next delta: a flag per own row, and a
/// set for the base rows of a layer (so that a layer over a large base allocates
/// nothing per base row).
pub(crate) struct Queued {
    base_len: u32,
    own: Vec<bool>,
    base: rustc_hash::FxHashSet<u32>,
}

impl Queued {
    /// Nothing queued, for a relation as it is now.
    pub fn for_relation(rel: &Relation) -> Queued {
        let base_len = rel.len() - rel.own_rows();
        Queued {
            base_len,
            own: vec![false; rel.own_rows() as usize],
            base: Default::default(),
        }
    }

    #[inline]
    pub fn get(&self, row: u32) -> bool {
        if row < self.base_len {
            self.base.contains(&row)
        } else {
            self.own[(row - self.base_len) as usize]
        }
    }

    #[inline]
    pub fn set(&mut self, row: u32, queued: bool) {
        if row < self.base_len {
            if queued {
                self.base.insert(row);
            } else if !self.base.is_empty() {
                self.base.remove(&row);
            }
        } else {
            self.own[(row - self.base_len) as usize] = queued;
        }
    }

    /// A row was appended.
    #[inline]
    pub fn push(&mut self, queued: bool) {
        self.own.push(queued);
    }
}

/// Buffer one derivation of the plan's head for the frame's binding.
fn emit(
    plan: &Plan,
    frame: &mut Frame,
    conf: f64,
    height: u32,
    provenance: bool,
    syms: Syms<'_>,
    out: &mut Pending,
) {
    let mark = out.cells.len();
    // The dedup digest is hashed along the way (as `hash_cells` would).
    let mut hasher = rustc_hash::FxHasher::default();
    for e in &plan.head {
        // Plain variables and constants (the usual head) skip the evaluator's call.
        let v = match e {
            CExpr::Slot(s) => frame.slots[*s],
            CExpr::Const(c) => *c,
            _ => match exec::eval(e, &frame.slots, syms) {
                Some(v) => v,
                None => {
                    out.cells.truncate(mark);
                    return;
                }
            },
        };
        hasher.write_u64(v);
        out.cells.push(v);
    }
    out.tags.push(tag_of(hasher.finish()));
    out.conf.push(plan.confidence * conf);
    if provenance {
        if out.starts.is_empty() {
            out.starts.push(0);
        }
        out.height.push(height.saturating_add(1));
        if let Some(facts) = &plan.premise_facts {
            out.premises.extend(facts.iter().map(|&f| frame.facts[f]));
            out.starts.push(out.premises.len() as u32);
            return;
        }
        push_premises(plan, frame, &mut out.premises);
        out.starts.push(out.premises.len() as u32);
    }
}

/// Append a derivation's premises in record form: each positive premise's fact, and
/// for an aggregate a marker holding the count followed by every aggregated fact.
pub(super) fn push_premises(plan: &Plan, frame: &Frame, out: &mut Vec<FactId>) {
    for p in &plan.premises {
        match *p {
            Premise::Fact(f) => out.push(frame.facts[f]),
            Premise::Agg(a) => {
                let facts = &frame.agg_facts[a];
                out.push(FactId {
                    rel: AGG_MARK,
                    row: facts.len() as u32,
                });
                out.extend_from_slice(facts);
            }
        }
    }
}
