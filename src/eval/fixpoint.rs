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

use std::time::Instant;

use lasso::Rodeo;

use crate::diag::{Diagnostic, ErrorCode, Result};
use crate::eval::exec::{self, Ctx, Frame};
use crate::eval::plan::{Plan, Planner, Premise, Step, Version};
use crate::eval::relation::{AGG_MARK, DerivRec, NO_EVIDENCE, Relation};
use crate::eval::{EvalOptions, FactId, Progress, Stats, StratumStats};
use crate::ir::{Literal, Program};

/// Candidates of the first scan evaluated between two merges.
const CHUNK: usize = 256;
/// Buffered derivations that trigger a merge.
const FLUSH: usize = 1 << 14;

/// Derived tuples waiting to be merged into their relation.
#[derive(Default)]
struct Pending {
    cells: Vec<u64>,
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
    pub interner: Rodeo,
    pub stats: Stats,
    /// Base plan (no delta) of every rule, by rule id.
    pub base_plans: Vec<Option<Plan>>,
    /// Per relation: rows already queued for the next delta.
    queued: Vec<Vec<bool>>,
    /// Per relation: the next delta.
    next_delta: Vec<Vec<u32>>,
    derived_total: usize,
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
        interner: Rodeo,
    ) -> Engine<'a> {
        let n = rels.len();
        let queued = rels.iter().map(|r| vec![false; r.len() as usize]).collect();
        Engine {
            program,
            options,
            rels,
            interner,
            stats: Stats::default(),
            base_plans: vec![None; program.rules.len()],
            queued,
            next_delta: vec![Vec::new(); n],
            derived_total: 0,
        }
    }

    fn provenance(&self) -> bool {
        self.options.provenance
    }

    /// Evaluate every stratum in order.
    pub fn run(&mut self) -> Result<()> {
        for si in 0..self.program.strata.len() {
            self.stratum(si)?;
        }
        Ok(())
    }

    fn check_deadline(&self) -> Result<()> {
        if let Some(d) = self.options.budget.deadline
            && Instant::now() >= d
        {
            return Err(budget_error("evaluation passed its deadline".into()));
        }
        Ok(())
    }

    fn stratum(&mut self, si: usize) -> Result<()> {
        let program = self.program;
        let stratum = &program.strata[si];
        let mut in_stratum = vec![false; program.relations.len()];
        for &r in &stratum.relations {
            in_stratum[r as usize] = true;
        }
        let mut base = Vec::new();
        let mut variants = Vec::new();
        {
            let mut planner = Planner {
                program,
                interner: &mut self.interner,
                rels: &mut self.rels,
            };
            for &rid in &stratum.rules {
                let rule = program.rule(rid);
                base.push(planner.plan(rule, None, &in_stratum)?);
                if stratum.recursive {
                    for (i, lit) in rule.body.iter().enumerate() {
                        if let Literal::Atom(a) = lit
                            && in_stratum[a.rel as usize]
                        {
                            variants.push(planner.plan(rule, Some(i), &in_stratum)?);
                        }
                    }
                }
            }
        }
        let mut st = StratumStats::default();
        self.check_deadline()?;
        // Round 0: every rule over the full relations.
        let lens: Vec<u32> = self.rels.iter().map(|r| r.len()).collect();
        let before = self.derived_total;
        for plan in &base {
            self.run_plan(plan, &lens, &lens, &[], &mut st)?;
        }
        st.rounds = 1;
        self.report(si, 0, self.derived_total - before);
        let mut round_start = lens;
        let mut recursive = stratum.recursive;
        while recursive {
            let deltas: Vec<Vec<u32>> = self
                .next_delta
                .iter_mut()
                .map(|d| {
                    let mut d = std::mem::take(d);
                    d.sort_unstable();
                    d
                })
                .collect();
            for (rel, d) in deltas.iter().enumerate() {
                for &row in d {
                    self.queued[rel][row as usize] = false;
                }
            }
            if deltas.iter().all(|d| d.is_empty()) {
                recursive = false;
                continue;
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
        // A non-recursive stratum's changes feed no rule of its own.
        for (rel, d) in self.next_delta.iter_mut().enumerate() {
            for &row in d.iter() {
                self.queued[rel][row as usize] = false;
            }
            d.clear();
        }
        for (plan, &rid) in base.into_iter().zip(&stratum.rules) {
            self.base_plans[rid as usize] = Some(plan);
        }
        self.stats.strata.push(st);
        Ok(())
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
                    interner: &self.interner,
                    provenance,
                };
                let mut sink = |frame: &mut Frame, conf: f64, height: u32| {
                    emit(plan, frame, conf, height, provenance, &mut pending);
                };
                exec::run_plan(&ctx, plan, &mut frame, lo..lo + CHUNK, &mut sink)
            };
            lo += CHUNK;
            let last = lo >= total;
            if last || pending.len() >= FLUSH {
                st.derivations += pending.len() as u64;
                self.merge(plan, &mut pending, st)?;
                self.check_deadline()?;
            }
            if last {
                return Ok(());
            }
        }
    }

    /// Merge buffered derivations into the head relation: new facts are appended,
    /// better derivations replace worse ones, and facts that appeared or improved are
    /// queued for the next delta.
    fn merge(&mut self, plan: &Plan, pending: &mut Pending, st: &mut StratumStats) -> Result<()> {
        let provenance = self.provenance();
        let head = plan.head_rel as usize;
        let arity = plan.head.len();
        let rel = &mut self.rels[head];
        let queued = &mut self.queued[head];
        let next = &mut self.next_delta[head];
        for k in 0..pending.len() {
            let cells = &pending.cells[k * arity..k * arity + arity];
            let conf = pending.conf[k];
            let (row, new) = rel.insert(cells, conf);
            let r = row as usize;
            if new {
                self.derived_total += 1;
                st.derived += 1;
                rel.evidence.push(NO_EVIDENCE);
                if provenance {
                    let prem = &pending.premises
                        [pending.starts[k] as usize..pending.starts[k + 1] as usize];
                    let start = arena_push(&mut rel.premises, prem)?;
                    rel.deriv.push(DerivRec {
                        rule: plan.rule,
                        height: pending.height[k],
                        start,
                        len: prem.len() as u32,
                    });
                }
                queued.push(true);
                next.push(row);
                continue;
            }
            let old_conf = rel.conf[r];
            let (better, improved) = if provenance {
                let d = rel.deriv[r];
                let h = pending.height[k];
                let improved = conf > old_conf || (conf == old_conf && h < d.height);
                (
                    improved || (conf == old_conf && h == d.height && plan.rule < d.rule),
                    improved,
                )
            } else {
                (conf > old_conf, conf > old_conf)
            };
            if !better {
                continue;
            }
            rel.conf[r] = conf;
            if provenance {
                let prem =
                    &pending.premises[pending.starts[k] as usize..pending.starts[k + 1] as usize];
                let d = rel.deriv[r];
                let start = if prem.len() <= d.len as usize
                    && d.rule != crate::eval::relation::INPUT_RULE
                {
                    rel.premises[d.start as usize..d.start as usize + prem.len()]
                        .copy_from_slice(prem);
                    d.start
                } else {
                    arena_push(&mut rel.premises, prem)?
                };
                rel.deriv[r] = DerivRec {
                    rule: plan.rule,
                    height: pending.height[k],
                    start,
                    len: prem.len() as u32,
                };
            }
            if improved {
                st.improved += 1;
                if !queued[r] {
                    queued[r] = true;
                    next.push(row);
                }
            }
        }
        pending.clear();
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

fn arena_push(arena: &mut Vec<FactId>, prem: &[FactId]) -> Result<u32> {
    let start = arena.len();
    if start + prem.len() > u32::MAX as usize {
        return Err(budget_error(
            "the derivation record outgrew its arena".into(),
        ));
    }
    arena.extend_from_slice(prem);
    Ok(start as u32)
}

/// Buffer one derivation of the plan's head for the frame's binding.
fn emit(
    plan: &Plan,
    frame: &mut Frame,
    conf: f64,
    height: u32,
    provenance: bool,
    out: &mut Pending,
) {
    let mark = out.cells.len();
    for e in &plan.head {
        match exec::eval(e, &frame.slots) {
            Some(v) => out.cells.push(v),
            None => {
                out.cells.truncate(mark);
                return;
            }
        }
    }
    out.conf.push(plan.confidence * conf);
    if provenance {
        if out.starts.is_empty() {
            out.starts.push(0);
        }
        out.height.push(height.saturating_add(1));
        for p in &plan.premises {
            match *p {
                Premise::Fact(f) => out.premises.push(frame.facts[f]),
                Premise::Agg(a) => {
                    let facts = &frame.agg_facts[a];
                    out.premises.push(FactId {
                        rel: AGG_MARK,
                        row: facts.len() as u32,
                    });
                    out.premises.extend_from_slice(facts);
                }
            }
        }
        out.starts.push(out.premises.len() as u32);
    }
}
