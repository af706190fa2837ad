//! Executing a plan: nested-loop joins over hash indexes, filters, assignments and
//! aggregates, calling a sink once per complete binding with the binding's
//! confidence (the minimum over its premises) and height (the maximum).

use std::cmp::Ordering;
use std::ops::Range;

use hashbrown::HashSet;
use rustc_hash::FxBuildHasher;

use crate::eval::FactId;
use crate::eval::plan::{Access, AggPlan, CExpr, Cell, Plan, Step, Version};
use crate::eval::relation::Relation;
use crate::eval::symbols::Symbols;
use crate::ir::{AggFunc, ArithOp, CmpOp};
use crate::value::ColumnType;

/// What a plan reads: the relations and, per relation, how many rows each version
/// covers in this round.
pub(crate) struct Ctx<'a> {
    pub rels: &'a [Relation],
    /// Rows `< old[rel]` form the old version.
    pub old: &'a [u32],
    /// Rows `< full[rel]` form the full version.
    pub full: &'a [u32],
    /// The delta rows of the plan's delta relation.
    pub delta: &'a [u32],
    pub interner: &'a Symbols,
    /// Track heights and premise facts.
    pub provenance: bool,
}

/// The mutable state of one binding under construction.
pub(crate) struct Frame {
    pub slots: Vec<u64>,
    pub facts: Vec<FactId>,
    /// Facts aggregated by each aggregate (only with provenance).
    pub agg_facts: Vec<Vec<FactId>>,
}

impl Frame {
    pub fn new(plan: &Plan) -> Frame {
        Frame {
            slots: vec![0; plan.slots],
            facts: vec![FactId { rel: 0, row: 0 }; plan.facts],
            agg_facts: vec![Vec::new(); plan.aggs],
        }
    }
}

/// Run a plan, calling `sink(frame, conf, height)` for every complete binding, where
/// `conf` is the minimum confidence of its premises (1.0 for none) and `height` the
/// maximum premise height. Only candidates `chunk` of the first scan are tried; the
/// return value is that scan's number of candidates (0 when it was never reached).
pub(crate) fn run_plan(
    ctx: &Ctx<'_>,
    plan: &Plan,
    frame: &mut Frame,
    chunk: Range<usize>,
    sink: &mut dyn FnMut(&mut Frame, f64, u32),
) -> usize {
    let mut total = 0;
    let first = plan.first_scan.unwrap_or(usize::MAX);
    let mut run = Run {
        ctx,
        first,
        chunk,
        total: &mut total,
        sink,
    };
    run.steps(&plan.steps, 0, frame, 1.0, 0, true);
    total
}

struct Run<'a, 'c> {
    ctx: &'a Ctx<'c>,
    first: usize,
    chunk: Range<usize>,
    total: &'a mut usize,
    sink: &'a mut dyn FnMut(&mut Frame, f64, u32),
}

/// A key built on the stack for the common short keys.
fn with_key<R>(key: &[Cell], slots: &[u64], f: impl FnOnce(&[u64]) -> R) -> R {
    // (Four cells: a larger buffer is zeroed and copied through library calls.)
    if key.len() <= 4 {
        let mut buf = [0u64; 4];
        for (b, c) in buf.iter_mut().zip(key) {
            *b = cell(*c, slots);
        }
        f(&buf[..key.len()])
    } else {
        let v: Vec<u64> = key.iter().map(|c| cell(*c, slots)).collect();
        f(&v)
    }
}

#[inline]
fn cell(c: Cell, slots: &[u64]) -> u64 {
    match c {
        Cell::Const(x) => x,
        Cell::Slot(s) => slots[s],
    }
}

impl Run<'_, '_> {
    /// Run `steps[i..]`. `top` says these are the plan's own steps (not an aggregate
    /// body), where the chunk restriction and the sink apply.
    fn steps(
        &mut self,
        steps: &[Step],
        i: usize,
        frame: &mut Frame,
        conf: f64,
        height: u32,
        top: bool,
    ) {
        let Some(step) = steps.get(i) else {
            (self.sink)(frame, conf, height);
            return;
        };
        let ctx = self.ctx;
        match step {
            Step::Scan {
                rel,
                version,
                access,
                checks,
                binds,
                fact,
            } => {
                let r = &ctx.rels[*rel as usize];
                let limit = match version {
                    Version::Old => ctx.old[*rel as usize],
                    Version::Full | Version::Delta => ctx.full[*rel as usize],
                };
                let chunked = top && i == self.first;
                // The last step hands each binding straight to the sink.
                let last = i + 1 == steps.len();
                let visit = |this: &mut Self, frame: &mut Frame, row: u32| {
                    let cells = r.row(row);
                    // Bind first: a variable repeated within this atom (`e(x, x)`) is
                    // checked against the slot its first occurrence just filled.
                    for &(c, s) in binds {
                        frame.slots[s] = cells[c];
                    }
                    for &(c, k) in checks {
                        if cells[c] != cell(k, &frame.slots) {
                            return;
                        }
                    }
                    let m = r.meta(row);
                    let c = conf.min(m.conf);
                    // Premise facts and heights only matter to provenance.
                    let h = if ctx.provenance {
                        frame.facts[*fact] = FactId { rel: *rel, row };
                        height.max(m.height)
                    } else {
                        0
                    };
                    if last {
                        (this.sink)(frame, c, h);
                    } else {
                        this.steps(steps, i + 1, frame, c, h, top);
                    }
                };
                match access {
                    Access::All => {
                        if *version == Version::Delta {
                            let rows = ctx.delta;
                            let range = self.window(chunked, rows.len());
                            for &row in &rows[range] {
                                visit(self, frame, row);
                            }
                        } else {
                            let range = self.window(chunked, limit as usize);
                            for row in range {
                                visit(self, frame, row as u32);
                            }
                        }
                    }
                    Access::Index { index, key } => {
                        // A layer's base rows, then its own; a plain relation's
                        // second list is empty.
                        let (rows, more) = with_key(key, &frame.slots, |k| r.lookup(*index, k));
                        let n = below(rows, limit);
                        let m = if n < rows.len() {
                            0
                        } else {
                            below(more, limit)
                        };
                        let range = self.window(chunked, n + m);
                        let first = range.start.min(n)..range.end.min(n);
                        for &row in &rows[first] {
                            visit(self, frame, row);
                        }
                        if m > 0 {
                            let second = range.start.max(n) - n..range.end.max(n) - n;
                            for &row in &more[second] {
                                visit(self, frame, row);
                            }
                        }
                    }
                    Access::Exact { key } => {
                        let found = with_key(key, &frame.slots, |k| r.find(k));
                        let found = found.filter(|&row| row < limit);
                        let range = self.window(chunked, usize::from(found.is_some()));
                        if let (Some(row), false) = (found, range.is_empty()) {
                            visit(self, frame, row);
                        }
                    }
                }
            }
            Step::Absent { rel, access, .. } => {
                if !absent(ctx.rels, *rel, access, &frame.slots) {
                    return;
                }
                self.steps(steps, i + 1, frame, conf, height, top);
            }
            Step::Filter {
                op,
                ty,
                left,
                right,
            } => {
                let (Some(a), Some(b)) = (eval(left, &frame.slots), eval(right, &frame.slots))
                else {
                    return;
                };
                if compare(*op, *ty, a, b, ctx.interner) {
                    self.steps(steps, i + 1, frame, conf, height, top);
                }
            }
            Step::Assign { slot, expr } => {
                let Some(v) = eval(expr, &frame.slots) else {
                    return;
                };
                frame.slots[*slot] = v;
                self.steps(steps, i + 1, frame, conf, height, top);
            }
            Step::Aggregate(agg) => {
                let Some((value, c, h)) = aggregate(ctx, agg, frame) else {
                    return;
                };
                if agg.result_bound {
                    if frame.slots[agg.result] != value {
                        return;
                    }
                } else {
                    frame.slots[agg.result] = value;
                }
                self.steps(steps, i + 1, frame, conf.min(c), height.max(h), top);
            }
        }
    }

    /// The candidate window of a scan: the whole `0..n`, or for the chunked first
    /// scan its chunk (recording `n`).
    fn window(&mut self, chunked: bool, n: usize) -> Range<usize> {
        if chunked {
            *self.total = n;
            self.chunk.start.min(n)..self.chunk.end.min(n)
        } else {
            0..n
        }
    }
}

/// How many rows of an ascending list are below `limit`.
#[inline]
fn below(rows: &[u32], limit: u32) -> usize {
    // Usually every row of the bucket is below the limit.
    match rows.last() {
        Some(&last) if last >= limit => rows.partition_point(|&row| row < limit),
        _ => rows.len(),
    }
}

/// Whether no row of `rel` matches the access's key.
pub(crate) fn absent(rels: &[Relation], rel: u32, access: &Access, slots: &[u64]) -> bool {
    let r = &rels[rel as usize];
    match access {
        Access::All => r.len() == 0,
        Access::Index { index, key } => with_key(key, slots, |k| {
            let (a, b) = r.lookup(*index, k);
            a.is_empty() && b.is_empty()
        }),
        Access::Exact { key } => with_key(key, slots, |k| r.find(k).is_none()),
    }
}

/// Compute an aggregate for the frame's grouping bindings: its value, the minimum
/// confidence of the facts it aggregated (1.0 for none) and their maximum height.
/// `None` when it has no value (min/max/sum of nothing, overflow, NaN).
pub(crate) fn aggregate(
    ctx: &Ctx<'_>,
    agg: &AggPlan,
    frame: &mut Frame,
) -> Option<(u64, f64, u32)> {
    let mut count: u64 = 0;
    let mut acc: Option<u64> = None;
    let mut failed = false;
    let mut min_conf = 1.0f64;
    let mut max_h = 0u32;
    let mut facts: Vec<FactId> = Vec::new();
    let mut seen: HashSet<FactId, FxBuildHasher> = HashSet::with_hasher(FxBuildHasher);
    let provenance = ctx.provenance;
    let interner = ctx.interner;
    {
        let mut sink = |frame: &mut Frame, c: f64, h: u32| {
            count += 1;
            min_conf = min_conf.min(c);
            max_h = max_h.max(h);
            if provenance {
                for &s in &agg.fact_slots {
                    let f = frame.facts[s];
                    if seen.insert(f) {
                        facts.push(f);
                    }
                }
            }
            let Some((target, ty)) = &agg.target else {
                return;
            };
            let Some(v) = eval(target, &frame.slots) else {
                failed = true;
                return;
            };
            acc = match (acc, agg.func) {
                (None, _) => Some(v),
                (Some(a), AggFunc::Sum) => {
                    let s = arith(ArithOp::Add, *ty, a, v);
                    if s.is_none() {
                        failed = true;
                    }
                    s.or(Some(a))
                }
                (Some(a), AggFunc::Min) => Some(if compare(CmpOp::Lt, *ty, v, a, interner) {
                    v
                } else {
                    a
                }),
                (Some(a), AggFunc::Max) => Some(if compare(CmpOp::Gt, *ty, v, a, interner) {
                    v
                } else {
                    a
                }),
                (Some(a), AggFunc::Count) => Some(a),
            };
        };
        let mut total = 0;
        let mut run = Run {
            ctx,
            first: usize::MAX,
            chunk: 0..0,
            total: &mut total,
            sink: &mut sink,
        };
        run.steps(&agg.body, 0, frame, 1.0, 0, false);
    }
    if provenance {
        frame.agg_facts[agg.agg] = facts;
    }
    if failed {
        return None;
    }
    let value = match agg.func {
        AggFunc::Count => match agg.result_ty {
            ColumnType::Number => i64::try_from(count).ok()? as u64,
            ColumnType::Unsigned => count,
            ColumnType::Float => (count as f64).to_bits(),
            ColumnType::Symbol => return None,
        },
        _ => acc?,
    };
    Some((value, min_conf, max_h))
}

/// Evaluate an expression; `None` on overflow, division by zero or a NaN result.
pub(crate) fn eval(e: &CExpr, slots: &[u64]) -> Option<u64> {
    match e {
        CExpr::Slot(s) => Some(slots[*s]),
        CExpr::Const(c) => Some(*c),
        CExpr::Never => None,
        CExpr::Bin(op, ty, l, r) => arith(*op, *ty, eval(l, slots)?, eval(r, slots)?),
        CExpr::Neg(ty, x) => {
            let v = eval(x, slots)?;
            match ty {
                ColumnType::Number => (v as i64).checked_neg().map(|n| n as u64),
                ColumnType::Unsigned => (v == 0).then_some(0),
                ColumnType::Float => float((-f64::from_bits(v)).to_bits()),
                ColumnType::Symbol => None,
            }
        }
    }
}

fn float(bits: u64) -> Option<u64> {
    (!f64::from_bits(bits).is_nan()).then_some(bits)
}

fn arith(op: ArithOp, ty: ColumnType, a: u64, b: u64) -> Option<u64> {
    match ty {
        ColumnType::Number => {
            let (a, b) = (a as i64, b as i64);
            match op {
                ArithOp::Add => a.checked_add(b),
                ArithOp::Sub => a.checked_sub(b),
                ArithOp::Mul => a.checked_mul(b),
                ArithOp::Div => a.checked_div(b),
                ArithOp::Rem => a.checked_rem(b),
            }
            .map(|x| x as u64)
        }
        ColumnType::Unsigned => match op {
            ArithOp::Add => a.checked_add(b),
            ArithOp::Sub => a.checked_sub(b),
            ArithOp::Mul => a.checked_mul(b),
            ArithOp::Div => a.checked_div(b),
            ArithOp::Rem => a.checked_rem(b),
        },
        ColumnType::Float => {
            let (a, b) = (f64::from_bits(a), f64::from_bits(b));
            let x = match op {
                ArithOp::Add => a + b,
                ArithOp::Sub => a - b,
                ArithOp::Mul => a * b,
                ArithOp::Div => a / b,
                ArithOp::Rem => a % b,
            };
            float(x.to_bits())
        }
        ColumnType::Symbol => None,
    }
}

/// Compare two cells of type `ty` (symbols by their text).
pub(crate) fn compare(op: CmpOp, ty: ColumnType, a: u64, b: u64, interner: &Symbols) -> bool {
    let ord = match ty {
        ColumnType::Number => (a as i64).cmp(&(b as i64)),
        ColumnType::Unsigned => a.cmp(&b),
        ColumnType::Float => match f64::from_bits(a).partial_cmp(&f64::from_bits(b)) {
            Some(o) => o,
            None => return op == CmpOp::Ne,
        },
        ColumnType::Symbol => {
            if a == b {
                Ordering::Equal
            } else {
                interner.resolve(a).cmp(interner.resolve(b))
            }
        }
    };
    match op {
        CmpOp::Eq => ord == Ordering::Equal,
        CmpOp::Ne => ord != Ordering::Equal,
        CmpOp::Lt => ord == Ordering::Less,
        CmpOp::Le => ord != Ordering::Greater,
        CmpOp::Gt => ord == Ordering::Greater,
        CmpOp::Ge => ord != Ordering::Less,
    }
}
