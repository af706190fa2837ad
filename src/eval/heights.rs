//! Least heights after confidence improvements.
//!
//! A fact records its best derivation: highest confidence, then least height, then
//! lowest rule index. The semi-naive loop finds the confidences exactly, and while no
//! fact's confidence rises after it was first read its rounds also meet derivations in
//! height order. Once a premise's confidence rises through a taller derivation,
//! though, a dependent may keep a derivation that is now taller than an equally
//! confident alternative (the lexicographic order is not monotone under min/max, so
//! re-propagating in the loop cannot fix it).
//!
//! This pass re-selects, over the stratum's final facts, the least-height derivation
//! among the *tight* ones (whose confidence equals the head's final confidence),
//! settling facts in increasing height as in Knuth's generalisation of Dijkstra's
//! algorithm: every fact outside the stratum and every input-recorded fact of the
//! stratum starts settled; a fact is settled at the least candidate height once no
//! smaller candidate remains, and the facts settled at one height form the delta that
//! the stratum's semi-naive variants join next. Unsettled facts of the stratum are
//! hidden from the joins by a confidence of −∞, which no tight derivation can carry;
//! meanwhile their records hold their best candidate so far (height `u32::MAX` for
//! none), and settling one restores its confidence.
//!
//! Every derived fact's record is written here (the rounds stopped recording
//! premises once the pass was bound to run: see `fixpoint.rs`). The delta of a
//! height is in settle order, so its rows, their heads and the records updated are
//! all over the relations: a piece buffers the derivations its join makes, then
//! looks their heads up in order with the slots, rows and final confidences fetched
//! ahead, and the records it updates are fetched ahead too. None of this changes
//! which candidate is found first.

use std::collections::BTreeMap;

use crate::diag::{Limit, Result};
use crate::eval::FactId;
use crate::eval::exec::{self, Ctx, Cursor, Frame, Stop, Syms, TailScan};
use crate::eval::fixpoint::{Engine, batching, makes_symbols, marking, push_head, push_premises};
use crate::eval::plan::{Plan, Planner, Step, Version};
use crate::eval::relation::{INPUT_RULE, Meta, Relation, prefetch};
use crate::ir::Literal;

/// Per-stratum state of the pass.
struct Pass {
    /// Per relation of the stratum: the final confidence of each row.
    finals: Vec<Vec<f64>>,
    settled: Vec<Vec<bool>>,
    /// Candidate height → facts that got a candidate of that height.
    queue: BTreeMap<u32, Vec<FactId>>,
}

impl Engine<'_> {
    /// Re-select every derived fact of stratum `si` as its least-height derivation
    /// among those of its final confidence (lowest rule index on equal heights, then
    /// the first found), and record that height.
    pub(super) fn settle_heights(&mut self, si: usize, in_stratum: &[bool]) -> Result<()> {
        let program = self.program;
        let stratum = &program.strata[si];
        // Rules reading the stratum run as variants whose delta is the facts settled
        // last; the others run once, over the facts settled from the start.
        let mut once = Vec::new();
        let mut variants = Vec::new();
        {
            let mut planner = Planner {
                program,
                interner: self.interner.get_mut(),
                rels: &mut self.rels,
                replay_only: false,
            };
            for &rid in &stratum.rules {
                let rule = program.rule(rid);
                let mut reads = false;
                for (i, lit) in rule.body.iter().enumerate() {
                    if let Literal::Atom(a) = lit
                        && in_stratum[a.rel as usize]
                    {
                        reads = true;
                        variants.push(planner.plan(rule, Some(i), in_stratum)?);
                    }
                }
                if !reads {
                    once.push(planner.plan(rule, None, in_stratum)?);
                }
            }
        }
        let n = self.rels.len();
        let mut pass = Pass {
            finals: vec![Vec::new(); n],
            settled: vec![Vec::new(); n],
            queue: BTreeMap::new(),
        };
        let mut delta: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &rel in &stratum.relations {
            let r = rel as usize;
            let relation = &mut self.rels[r];
            let rows = 0..relation.len();
            pass.finals[r] = rows.clone().map(|i| relation.meta(i).conf).collect();
            pass.settled[r] = rows
                .clone()
                .map(|i| relation.meta(i).rule == INPUT_RULE)
                .collect();
            for row in rows {
                let mut m = relation.meta(row);
                if m.rule == INPUT_RULE {
                    delta[r].push(row);
                } else {
                    m.conf = f64::NEG_INFINITY;
                    m.height = u32::MAX;
                    relation.set_meta(row, m);
                }
            }
        }
        let outcome = self.settle_levels(&once, &variants, delta, &mut pass);
        // Every fact has a tight derivation whose premises settle first (order facts
        // by final confidence, then by when the loop reached it), so none is left.
        for &rel in &stratum.relations {
            let r = rel as usize;
            debug_assert!(
                outcome.is_err() || pass.settled[r].iter().all(|&s| s),
                "a fact of relation {r} has no tight derivation"
            );
            let relation = &mut self.rels[r];
            for (row, &c) in (0..relation.len()).zip(&pass.finals[r]) {
                relation.set_conf(row, c);
            }
            // The pass set every derived fact's height out of reach first, which
            // raised the marks over it: marked anew, they bound the heights now.
            relation.unmark();
            if marking() {
                relation.mark();
            }
        }
        outcome
    }

    /// Settle the facts height by height, starting from `delta` (the facts settled at
    /// height 0) and the `once` plans.
    fn settle_levels(
        &mut self,
        once: &[Plan],
        variants: &[Plan],
        mut delta: Vec<Vec<u32>>,
        pass: &mut Pass,
    ) -> Result<()> {
        let lens: Vec<u32> = self.rels.iter().map(|r| r.len()).collect();
        for plan in once {
            self.height_round(plan, &lens, &[], pass)?;
        }
        loop {
            for plan in variants {
                let Some(Step::Scan {
                    rel,
                    version: Version::Delta,
                    ..
                }) = plan.steps.first()
                else {
                    continue;
                };
                let d = &delta[*rel as usize];
                if !d.is_empty() {
                    self.height_round(plan, &lens, d, pass)?;
                }
            }
            for d in &mut delta {
                d.clear();
            }
            let Some((height, facts)) = pass.queue.pop_first() else {
                break;
            };
            self.check_deadline()?;
            const AHEAD: usize = 8;
            for (k, f) in facts.iter().enumerate() {
                if let Some(next) = facts.get(k + AHEAD) {
                    let (r, i) = (next.rel as usize, next.row as usize);
                    self.rels[r].prefetch_record(next.row);
                    prefetch(&pass.finals[r][i]);
                }
                let (r, i) = (f.rel as usize, f.row as usize);
                let m = self.rels[r].meta(f.row);
                if pass.settled[r][i] || m.height != height {
                    continue;
                }
                pass.settled[r][i] = true;
                self.rels[r].set_conf(f.row, pass.finals[r][i]);
                delta[r].push(f.row);
            }
        }
        Ok(())
    }

    /// Run one plan over every fact (the unsettled ones hidden) and record, per head
    /// fact, its best tight candidate. A long delta is cut into pieces that worker
    /// threads may join side by side: a piece only reads (candidates are recorded
    /// after every piece is done), and the pieces' candidates are taken in order, so
    /// the outcome is the same on any number of threads.
    fn height_round(
        &mut self,
        plan: &Plan,
        lens: &[u32],
        delta: &[u32],
        pass: &mut Pass,
    ) -> Result<()> {
        if !plan.feasible {
            return Ok(());
        }
        let head = plan.head_rel as usize;
        let pieces: Vec<&[u32]> = if delta.is_empty() {
            vec![delta]
        } else {
            delta.chunks(HEIGHT_PIECE).collect()
        };
        let reads = Reads {
            rels: &self.rels,
            lens,
            deadline: self.deadline(),
            settled: &pass.settled[head],
            finals: &pass.finals[head],
            batches: batching(),
        };
        let found: Vec<Found> = match self
            .pool()
            .filter(|_| pieces.len() > 1 && !makes_symbols(plan))
        {
            Some(pool) => {
                let symbols = self.interner.borrow();
                let symbols: &crate::eval::symbols::Symbols = &symbols;
                pool.install(|| {
                    use rayon::prelude::*;
                    pieces
                        .par_iter()
                        .map(|d| reads.candidates(plan, d, Syms::Read(symbols)))
                        .collect()
                })
            }
            None => pieces
                .iter()
                .map(|d| reads.candidates(plan, d, Syms::Write(&self.interner)))
                .collect(),
        };
        if found.iter().any(|f| f.expired) {
            return Err(self.limit_error(Limit::Timeout, Some(plan.rule)));
        }
        let relation = &mut self.rels[head];
        // The records updated are all over the relation: each is fetched ahead.
        const AHEAD: usize = 8;
        for f in &found {
            for (k, &(row, height)) in f.found.iter().enumerate() {
                if let Some(&(next, _)) = f.found.get(k + AHEAD) {
                    relation.prefetch_record(next);
                }
                let m = relation.meta(row);
                if (height, plan.rule) >= (m.height, m.rule) {
                    continue;
                }
                let prem = &f.premises[f.starts[k]..f.starts[k + 1]];
                relation.set_premises(row, prem)?;
                relation.set_meta(
                    row,
                    Meta {
                        height,
                        rule: plan.rule,
                        ..m
                    },
                );
                pass.queue.entry(height).or_default().push(FactId {
                    rel: head as u32,
                    row,
                });
            }
        }
        Ok(())
    }
}

/// Delta rows per piece of a height round.
const HEIGHT_PIECE: usize = if cfg!(test) { 3 } else { 1 << 10 };

/// What the pieces of a height round read.
struct Reads<'r> {
    rels: &'r [Relation],
    lens: &'r [u32],
    deadline: Option<std::time::Instant>,
    /// The head relation's settled flags and final confidences.
    settled: &'r [bool],
    finals: &'r [f64],
    /// Whether a plan's last scan hands its rows to the sink in batches.
    batches: bool,
}

/// Derivations buffered per piece of a height round before their heads are looked
/// up (a handful in unit tests, so that joins pause and resume everywhere).
const LOOKUP_BATCH: usize = if cfg!(test) { 4 } else { 1 << 10 };

/// Derivations waiting for their heads to be looked up: the `k`-th has its head's
/// cells at `cells[k * arity..]` and its premises up to `found[k].end` (from the
/// `end` of the one before).
#[derive(Default)]
struct Batch {
    found: Vec<Derived>,
    cells: Vec<u64>,
    premises: Vec<FactId>,
    /// The head rows looked up.
    rows: Vec<u32>,
}

/// One buffered derivation.
struct Derived {
    /// Its head's dedup digest.
    tag: u32,
    height: u32,
    conf: f64,
    end: usize,
}

/// The candidates one piece found: head row and height, with their premises at
/// `premises[starts[k]..starts[k + 1]]`.
struct Found {
    found: Vec<(u32, u32)>,
    starts: Vec<usize>,
    premises: Vec<FactId>,
    /// The deadline passed.
    expired: bool,
}

/// The sink of a height round's join: buffers each derivation's head cells (and
/// digest), premises, height and confidence exactly as the rounds make them,
/// asking for a pause once [`LOOKUP_BATCH`] wait.
struct Collect<'a> {
    plan: &'a Plan,
    syms: Syms<'a>,
    /// Whether it takes a plan's last scan in batches.
    batches: bool,
    batch: &'a mut Batch,
}

impl Collect<'_> {
    /// Buffer the derivation whose head cells were just appended; whether the batch
    /// is full.
    #[inline(always)]
    fn push(&mut self, frame: &Frame, tag: u32, conf: f64, height: u32) -> bool {
        let (plan, batch) = (self.plan, &mut *self.batch);
        match &plan.premise_facts {
            Some(facts) => {
                for &f in facts {
                    batch.premises.push(frame.facts[f]);
                }
            }
            None => push_premises(plan, frame, &mut batch.premises),
        }
        batch.found.push(Derived {
            tag,
            height: height.saturating_add(1),
            // The confidence exactly as the rounds compute it for this derivation.
            conf: plan.confidence * conf,
            end: batch.premises.len(),
        });
        batch.found.len() >= LOOKUP_BATCH
    }
}

impl exec::Sink for Collect<'_> {
    fn binding(&mut self, frame: &mut Frame, conf: f64, height: u32) -> bool {
        // Head cells and digest exactly as the rounds' `emit` makes them.
        let Ok(tag) = push_head(self.plan, frame, self.syms, &mut self.batch.cells) else {
            return false;
        };
        self.push(frame, tag, conf, height)
    }

    fn batches(&self) -> bool {
        self.batches
    }

    /// This sink's [`binding`](exec::Sink::binding) for each row that passes the
    /// tail's checks, its head cells read straight off the row (hashed as
    /// `push_head` hashes them).
    fn rows(
        &mut self,
        frame: &mut Frame,
        scan: &TailScan<'_>,
        rows: &[u32],
        conf: f64,
        height: u32,
    ) -> Option<usize> {
        let check = !scan.all_pass();
        for (k, &row) in rows.iter().enumerate() {
            let rc = scan.rel.row(row);
            if check && !scan.passes(rc, &frame.slots, scan.syms) {
                continue;
            }
            let out = &mut self.batch.cells;
            let tag = scan.head(rc, &frame.slots, |_, v| out.push(v));
            let (c, h) = scan.premise(frame, row, conf, height);
            if self.push(frame, tag, c, h) {
                return Some(k);
            }
        }
        None
    }
}

impl Reads<'_> {
    /// Run `plan` over `delta` and keep, per head fact, each tight candidate that is
    /// shorter than its record. The join buffers its derivations and pauses when
    /// [`LOOKUP_BATCH`] are waiting; their heads are then looked up in order, each
    /// look-up's slot and row fetched ahead (a weighted closure's heads are all over
    /// a large relation: looked up one by one, as derived, they wait on memory).
    fn candidates(&self, plan: &Plan, delta: &[u32], syms: Syms<'_>) -> Found {
        let mut out = Found {
            found: Vec::new(),
            starts: vec![0],
            premises: Vec::new(),
            expired: false,
        };
        let mut ctx = Ctx::new(self.rels, self.lens, self.lens, delta, syms, true);
        ctx.deadline = self.deadline;
        ctx.scattered = true;
        let syms = ctx.syms;
        let relation = &self.rels[plan.head_rel as usize];
        let arity = plan.head.len();
        let mut batch = Batch::default();
        let mut frame = Frame::new(plan);
        let mut cursor = Cursor::default();
        loop {
            let mut sink = Collect {
                plan,
                syms,
                batches: self.batches,
                batch: &mut batch,
            };
            let stop = exec::run_plan(&ctx, plan, &mut frame, &mut cursor, &mut sink);
            self.resolve(plan, relation, arity, &mut batch, &mut out);
            match stop {
                Some(Stop::Pause) => {}
                Some(Stop::Expired) => {
                    out.expired = true;
                    break;
                }
                None => break,
            }
        }
        out
    }

    /// Look up the heads of the buffered derivations, in order, and keep each tight
    /// one that is shorter than its fact's record.
    fn resolve(
        &self,
        plan: &Plan,
        relation: &Relation,
        arity: usize,
        batch: &mut Batch,
        out: &mut Found,
    ) {
        const AHEAD: usize = 16;
        let found = &batch.found;
        for d in &found[..found.len().min(AHEAD)] {
            relation.prefetch_slot(d.tag);
        }
        // First every head's row (`u32::MAX`: none), fetching its final confidence
        // and settled flag for the second loop, which keeps the candidates.
        batch.rows.clear();
        for (k, d) in found.iter().enumerate() {
            if let Some(next) = found.get(k + AHEAD) {
                relation.prefetch_slot(next.tag);
            }
            if let Some(next) = found.get(k + AHEAD / 2) {
                relation.prefetch_row(next.tag);
            }
            let cells = &batch.cells[k * arity..k * arity + arity];
            let row = relation.find_tagged(cells, d.tag);
            debug_assert!(
                row.is_some(),
                "a derivation's head is missing from the fixpoint"
            );
            let row = row.unwrap_or(u32::MAX);
            if let Some(f) = self.finals.get(row as usize) {
                prefetch(f);
                prefetch(&self.settled[row as usize]);
            }
            batch.rows.push(row);
        }
        let mut from = 0;
        for (d, &row) in found.iter().zip(&batch.rows) {
            let prem = from..d.end;
            from = d.end;
            let i = row as usize;
            if row == u32::MAX || self.settled[i] || d.conf != self.finals[i] {
                continue;
            }
            let m = relation.meta(row);
            if (d.height, plan.rule) >= (m.height, m.rule) {
                continue;
            }
            out.premises.extend_from_slice(&batch.premises[prem]);
            out.found.push((row, d.height));
            out.starts.push(out.premises.len());
        }
        batch.cells.clear();
        batch.found.clear();
        batch.premises.clear();
    }
}
