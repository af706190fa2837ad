//! Executing a plan: nested-loop joins over indexes, filters, assignments and
//! aggregates, calling a sink once per complete binding with the binding's
//! confidence (the minimum over its premises) and height (the maximum).
//!
//! A run can stop anywhere inside its loops: the sink asks for a pause (its buffer is
//! full; the driver merges and resumes from a [`Cursor`] exactly where it stopped),
//! or the deadline passes (checked every [`WORK_CHECK`] candidate rows, in the
//! innermost loops too). So no join, however large its output, runs unchecked.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::hash::Hasher;
use std::time::Instant;

use hashbrown::HashSet;
use rustc_hash::FxBuildHasher;

use crate::eval::FactId;
use crate::eval::plan::{Access, AggPlan, CExpr, Cell, Pair, Plan, Step, Tail, Version};
use crate::eval::relation::{Narrow, Relation, RowCells, RowList, dense_rows, tag_of};
use crate::eval::symbols::Symbols;
use crate::ir::{AggFunc, ArithOp, CmpOp, Functor, TestFn};
use crate::value::ColumnType;

/// The symbols a plan reads, and (during evaluation) the table that functors
/// creating symbols (`cat`, `substr`, `to_string`) write to.
#[derive(Clone, Copy)]
pub(crate) enum Syms<'a> {
    /// Read only (replaying a recorded derivation: every symbol it makes already
    /// exists).
    Read(&'a Symbols),
    /// Evaluation: new symbols are interned.
    Write(&'a RefCell<Symbols>),
}

impl Syms<'_> {
    /// Run `f` with the symbol table.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&Symbols) -> R) -> R {
        match self {
            Syms::Read(r) => f(r),
            Syms::Write(c) => f(&c.borrow()),
        }
    }

    /// The cell of symbol `s`, interning it when writing (`None` when reading and it
    /// does not exist).
    pub(crate) fn intern(&self, s: &str) -> Option<u64> {
        match self {
            Syms::Read(r) => r.get(s),
            Syms::Write(c) => Some(c.borrow_mut().get_or_intern(s)),
        }
    }
}

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
    pub syms: Syms<'a>,
    /// Track heights and premise facts.
    pub provenance: bool,
    /// The delta rows are in no row order (the least-height pass's): a scan of them
    /// fetches rows ahead.
    pub scattered: bool,
    /// When to stop (checked every [`WORK_CHECK`] candidate rows).
    pub deadline: Option<Instant>,
    /// Candidate rows visited, by this run and the aggregates inside it.
    pub work: std::cell::Cell<u64>,
    /// Set once the deadline has passed.
    pub expired: std::cell::Cell<bool>,
    /// Derivations dropped because their arithmetic failed.
    pub faults: std::cell::Cell<Faults>,
    /// Whether rows taken in groups may take [`Run::dense_groups`] (tests turn it
    /// off to compare it with the general loop).
    pub dense: bool,
}

impl<'a> Ctx<'a> {
    /// A context with no deadline.
    pub fn new(
        rels: &'a [Relation],
        old: &'a [u32],
        full: &'a [u32],
        delta: &'a [u32],
        syms: Syms<'a>,
        provenance: bool,
    ) -> Ctx<'a> {
        Ctx {
            rels,
            old,
            full,
            delta,
            syms,
            provenance,
            scattered: false,
            deadline: None,
            work: std::cell::Cell::new(0),
            expired: std::cell::Cell::new(false),
            faults: std::cell::Cell::new(Faults::default()),
            dense: true,
        }
    }

    /// Count one candidate row; every [`WORK_CHECK`] of them, see whether the deadline
    /// has passed. True when the run must stop.
    #[inline(always)]
    fn tick(&self) -> bool {
        let w = self.work.get().wrapping_add(1);
        self.work.set(w);
        w.is_multiple_of(WORK_CHECK) && self.clock()
    }

    /// Whether the deadline has passed (and remember it).
    #[cold]
    #[inline(never)]
    fn clock(&self) -> bool {
        if let Some(d) = self.deadline
            && Instant::now() >= d
        {
            self.expired.set(true);
        }
        self.expired.get()
    }

    /// Record a failed evaluation (a constant that never matches is no fault).
    pub fn fault(&self, f: Fault) {
        let mut c = self.faults.get();
        c.add(f);
        self.faults.set(c);
    }
}

/// Candidate rows visited between two looks at the clock.
pub(crate) const WORK_CHECK: u64 = 1 << 14;

/// Why an evaluation gave no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// A constant that cannot be represented at its type: never a value, no error.
    Never,
    /// Integer overflow (`i64::MIN / -1` included), or a float result too large.
    Overflow,
    /// Division or remainder by zero.
    DivZero,
}

/// Derivations dropped by failed arithmetic, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Faults {
    pub overflow: u64,
    pub div_zero: u64,
}

impl Faults {
    pub fn add(&mut self, f: Fault) {
        match f {
            Fault::Never => {}
            Fault::Overflow => self.overflow += 1,
            Fault::DivZero => self.div_zero += 1,
        }
    }

    pub fn merge(&mut self, other: Faults) {
        self.overflow += other.overflow;
        self.div_zero += other.div_zero;
    }

    pub fn any(&self) -> bool {
        self.overflow + self.div_zero > 0
    }
}

/// Why a run stopped before visiting every binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The sink asked for a pause; resume with the same [`Cursor`].
    Pause,
    /// The deadline passed.
    Expired,
}

/// Where a paused run resumes: per step, the candidate the step's scan restarts from
/// (the one it was exploring, or the next one at the level that emitted last).
#[derive(Debug, Default)]
pub(crate) struct Cursor {
    resume: Vec<Option<usize>>,
}

impl Cursor {
    /// Where a paused run's first step resumes: the position of the candidate its
    /// scan restarts from (the ones before it are done).
    pub fn first(&self) -> Option<usize> {
        self.resume.first().copied().flatten()
    }
}

/// The mutable state of one binding under construction.
pub(crate) struct Frame {
    pub slots: Vec<u64>,
    pub facts: Vec<FactId>,
    /// Facts aggregated by each aggregate (only with provenance).
    pub agg_facts: Vec<Vec<FactId>>,
}

impl Frame {
    /// This frame made what [`Frame::new`] would make for `plan`, its storage kept.
    pub fn refit(&mut self, plan: &Plan) {
        self.slots.clear();
        self.slots.resize(plan.slots, 0);
        self.facts.clear();
        self.facts.resize(plan.facts, FactId { rel: 0, row: 0 });
        self.agg_facts.truncate(plan.aggs);
        for a in &mut self.agg_facts {
            a.clear();
        }
        self.agg_facts.resize_with(plan.aggs, Vec::new);
    }

    pub fn new(plan: &Plan) -> Frame {
        Frame {
            slots: vec![0; plan.slots],
            facts: vec![FactId { rel: 0, row: 0 }; plan.facts],
            agg_facts: vec![Vec::new(); plan.aggs],
        }
    }
}

/// What a run hands its complete bindings to.
pub(crate) trait Sink {
    /// One complete binding with its confidence (the minimum over its premises) and
    /// height (the maximum); true asks the run to pause.
    fn binding(&mut self, frame: &mut Frame, conf: f64, height: u32) -> bool;

    /// Whether the sink takes the rows of a plan's last scan a batch at a time
    /// ([`Sink::rows`]) when the plan has a [`Tail`].
    fn batches(&self) -> bool {
        false
    }

    /// The bindings that complete the frame's with each of `rows`, candidate rows
    /// of the plan's last scan (in order; each must still pass the tail's checks);
    /// `conf` and `height` are the binding's so far. `Some(k)` asks the run to pause
    /// after `rows[k]`. This default binds each row and hands it to
    /// [`Sink::binding`], as a run without batches does.
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
            let cells = scan.rel.row(row);
            if check && !scan.passes(cells, &frame.slots, scan.syms) {
                continue;
            }
            for &(c, s) in scan.binds {
                frame.slots[s] = cells.get(c);
            }
            let (c, h) = scan.premise(frame, row, conf, height);
            if self.binding(frame, c, h) {
                return Some(k);
            }
        }
        None
    }

    /// Rows of the scan just before the plan's tail (its [`Pair`], described by
    /// `pair`), each with the candidates its look-up finds in the tail, in one loop:
    /// the bindings they make, in the order and with the pauses one binding at a
    /// time would make (the first row's candidates from `start`). `None` when the
    /// sink does not take them so (the run then visits the rows one at a time);
    /// else where to pause (a position in `rows` and a candidate of its look-up, after
    /// which) and the candidates visited.
    #[allow(clippy::too_many_arguments)]
    fn pairs(
        &mut self,
        _frame: &mut Frame,
        _scan: &TailScan<'_>,
        _pair: &PairScan<'_>,
        _rows: &[u32],
        _start: usize,
        _conf: f64,
        _height: u32,
    ) -> Option<(Option<(usize, usize)>, u64)> {
        None
    }

    /// Whether the sink takes the rows of the scan two before the tail in groups
    /// ([`Sink::groups`]) for this pair scan; when it does, it takes every group
    /// handed to it.
    fn takes_groups(&self, _scan: &TailScan<'_>, _pair: &PairScan<'_>) -> bool {
        false
    }

    /// Rows of the scan before the pair scan (`outer`), each with the pair scan's
    /// rows its look-up found (all of them below the pair scan's limit) and, when
    /// the tail's key is bound before the pair scan, the tail's candidates: the
    /// bindings they make, as [`Sink::pairs`] would make them for each group's
    /// rows in turn with the group's row bound. Where to pause (a group, a
    /// position in its rows and a candidate of that row's, after which) and the
    /// candidates visited.
    fn groups(
        &mut self,
        _frame: &mut Frame,
        _scan: &TailScan<'_>,
        _pair: &PairScan<'_>,
        _outer: &Outer<'_>,
        _groups: &[Group<'_>],
    ) -> (Option<(usize, usize, usize)>, u64) {
        unreachable!("a sink that takes groups handles them")
    }
}

/// A scan whose rows are taken in groups through [`Run::dense_groups`]: its
/// relation's rows (narrow, sharing one confidence), the dense index the pair
/// scan's look-up reads and its key, and, when the tail's key is bound before the
/// pair scan, the tail's dense index and key.
struct DenseGroups<'a> {
    view: Narrow<'a>,
    peek: &'a [RowList],
    key: Cell,
    tail: Option<(&'a [RowList], Cell)>,
}

/// The scan before a pair scan, as [`Sink::groups`] sees it: what binding one of
/// its rows sets in the frame.
pub(crate) struct Outer<'a> {
    pub rel_id: u32,
    pub rel: &'a Relation,
    /// The scan's binds (column, slot).
    pub binds: &'a [(usize, usize)],
    /// The fact slot of the scanned row.
    pub fact: usize,
}

/// A row of the scan before a pair scan, with what the run found for it.
#[derive(Clone, Copy)]
pub(crate) struct Group<'a> {
    pub row: u32,
    /// Its candidate number in the outer scan (where the run resumes after a
    /// pause in this group).
    pub at: usize,
    /// The pair scan's rows its look-up found, below the pair scan's limit.
    pub rows: &'a [u32],
    /// When the tail's key is bound before the pair scan: the tail's rows its
    /// look-up found (the sink takes those below the tail's limit).
    pub fixed: &'a [u32],
    /// The binding's confidence and height with this row.
    pub conf: f64,
    pub height: u32,
}

impl<F: FnMut(&mut Frame, f64, u32) -> bool> Sink for F {
    #[inline]
    fn binding(&mut self, frame: &mut Frame, conf: f64, height: u32) -> bool {
        self(frame, conf, height)
    }
}

/// A plan's last scan, as [`Sink::rows`] sees it.
pub(crate) struct TailScan<'a> {
    pub rel_id: u32,
    pub rel: &'a Relation,
    pub tail: &'a Tail,
    /// The scan's binds (column, slot).
    pub binds: &'a [(usize, usize)],
    /// The fact slot of the scanned row.
    pub fact: usize,
    pub provenance: bool,
    pub syms: Syms<'a>,
}

/// The scan just before a plan's tail, as [`Sink::pairs`] sees it.
#[derive(Clone, Copy)]
pub(crate) struct PairScan<'a> {
    pub pair: &'a Pair,
    pub rel: &'a Relation,
    /// The tail's index, probed with the key column of each row, and the limit of
    /// the tail's version: its candidates are the rows found below it.
    pub index: usize,
    pub limit: u32,
    /// When the tail's key is bound before the scan ([`Pair::key`] `None`): the
    /// candidates of every row, looked up once.
    pub fixed: Option<&'a [u32]>,
}

impl TailScan<'_> {
    /// Whether a row with these cells passes the scan's checks and the
    /// comparisons after it.
    #[inline(always)]
    pub fn passes(&self, cells: RowCells<'_>, slots: &[u64], syms: Syms<'_>) -> bool {
        self.tail
            .checks
            .iter()
            .all(|&(c, v)| cells.get(c) == v.value(cells, slots))
            && self.tail.filters.iter().all(|&(op, ty, a, b)| {
                compare(op, ty, a.value(cells, slots), b.value(cells, slots), syms)
            })
    }

    /// Hand each head cell of the derivation that row cells `cells` complete to
    /// `put` (with its position) and return their dedup digest, hashed as
    /// `push_head` hashes them.
    #[inline(always)]
    pub fn head(&self, cells: RowCells<'_>, slots: &[u64], mut put: impl FnMut(usize, u64)) -> u32 {
        let mut hasher = rustc_hash::FxHasher::default();
        for (i, &src) in self.tail.head.iter().enumerate() {
            let v = src.value(cells, slots);
            hasher.write_u64(v);
            put(i, v);
        }
        tag_of(hasher.finish())
    }

    /// Whether every row passes (the tail checks and compares nothing).
    #[inline]
    pub fn all_pass(&self) -> bool {
        self.tail.checks.is_empty() && self.tail.filters.is_empty()
    }

    /// Record `row` as the scan's premise in the frame (with provenance) and return
    /// the binding's confidence and height with it.
    #[inline(always)]
    pub fn premise(&self, frame: &mut Frame, row: u32, conf: f64, height: u32) -> (f64, u32) {
        let m = self.rel.meta(row);
        if self.provenance {
            frame.facts[self.fact] = FactId {
                rel: self.rel_id,
                row,
            };
            (conf.min(m.conf), height.max(m.height))
        } else {
            (conf.min(m.conf), 0)
        }
    }
}

/// Candidate rows a batch hands a sink at most (the clock is read between batches).
const BATCH: usize = 1 << 10;

/// Rows of a delta in no row order visited at a time, the next as many fetched
/// ahead.
const AHEAD: usize = 8;

/// Rows of the scan before a tail handed to [`Sink::pairs`] at a time (the clock is
/// read between them).
const PAIR_ROWS: usize = 1 << 8;

/// Groups of rows of the scan two before a tail handed to [`Sink::groups`] at a
/// time.
const GROUPS: usize = 1 << 6;

/// Run a plan, calling `sink(frame, conf, height)` for every complete binding, where
/// `conf` is the minimum confidence of its premises (1.0 for none) and `height` the
/// maximum premise height. When the sink returns true the run pauses; calling again
/// with the same `cursor` (and relations that only grew past the round's limits in
/// between) continues with the next binding. `None` when every binding was visited.
///
/// Resuming re-enters each scan at the candidate it was exploring: the rows below a
/// round's limits never change, so the bindings on the way down are the same.
pub(crate) fn run_plan(
    ctx: &Ctx<'_>,
    plan: &Plan,
    frame: &mut Frame,
    cursor: &mut Cursor,
    sink: &mut dyn Sink,
) -> Option<Stop> {
    if cursor.resume.len() != plan.steps.len() {
        cursor.resume = vec![None; plan.steps.len()];
    }
    let tail = plan
        .tail
        .as_ref()
        .filter(|_| sink.batches())
        .and_then(|tail| TailStep::new(ctx, plan, tail));
    let mut run = Run {
        ctx,
        sink,
        tail: tail.as_ref(),
        resume: &mut cursor.resume,
        stop: None,
        fresh: false,
        peeked: None,
        groups: Vec::new(),
    };
    run.steps(&plan.steps, 0, frame, 1.0, 0);
    match run.stop {
        // A pause no scan recorded a place for: the plan has no scan, and is done.
        Some(Stop::Pause) if run.fresh => None,
        stop => stop,
    }
}

struct Run<'a, 'c> {
    ctx: &'a Ctx<'c>,
    sink: &'a mut dyn Sink,
    /// The plan's tail, when the sink takes it in batches (its top-level last scan
    /// then hands its rows over a batch at a time).
    tail: Option<&'a TailStep<'a>>,
    /// Per step: where its scan resumes (empty for an aggregate's body, which never
    /// pauses).
    resume: &'a mut [Option<usize>],
    stop: Option<Stop>,
    /// The sink just paused: the deepest scan resumes after its current candidate.
    fresh: bool,
    /// The rows the next step's index look-up found, looked up by the step before
    /// it (see `Run::steps`), taken by that next step instead of looking up again.
    peeked: Option<(&'c [u32], &'c [u32])>,
    /// Rows of the scan two before the tail waiting to be handed to the sink
    /// ([`Sink::groups`]), up to [`GROUPS`]: room for them is taken at the first
    /// (a run starts thousands of times in a stratum of many pauses, most of them
    /// without groups).
    groups: Vec<Group<'c>>,
}

/// A plan's tail, its scan set up once for a run.
struct TailStep<'a> {
    step: usize,
    scan: TailScan<'a>,
    version: Version,
    access: &'a Access,
    limit: u32,
    /// The scan reads an index by a key that the step before it (a scan) does not
    /// bind: one look-up serves every row of that step.
    fixed: bool,
    /// The scan before, when the plan's tail has a [`Pair`].
    pair: Option<PairScan<'a>>,
}

impl<'a> TailStep<'a> {
    fn new(ctx: &Ctx<'a>, plan: &'a Plan, tail: &'a Tail) -> Option<TailStep<'a>> {
        let Step::Scan {
            rel,
            version,
            access,
            binds,
            fact,
            ..
        } = plan.steps.get(tail.step)?
        else {
            return None;
        };
        let limit = match version {
            Version::Old => ctx.old[*rel as usize],
            Version::Full | Version::Delta => ctx.full[*rel as usize],
        };
        let before = match tail.step.checked_sub(1).map(|i| &plan.steps[i]) {
            Some(Step::Scan { binds, .. }) => Some(binds),
            _ => None,
        };
        let fixed = match (access, before) {
            (Access::Index { key, .. }, Some(before)) => key.iter().all(|c| match c {
                Cell::Const(_) => true,
                Cell::Slot(s) => before.iter().all(|&(_, b)| b != *s),
            }),
            _ => false,
        };
        let pair = match (&tail.pair, access) {
            (Some(pair), Access::Index { index, .. }) => Some(PairScan {
                pair,
                rel: &ctx.rels[pair.rel as usize],
                index: *index,
                limit,
                fixed: None,
            }),
            _ => None,
        };
        Some(TailStep {
            pair,
            step: tail.step,
            scan: TailScan {
                rel_id: *rel,
                rel: &ctx.rels[*rel as usize],
                tail,
                binds,
                fact: *fact,
                provenance: ctx.provenance,
                syms: ctx.syms,
            },
            version: *version,
            access,
            limit,
            fixed,
        })
    }
}

/// A key built on the stack for the common short keys.
fn with_key<R>(key: &[Cell], slots: &[u64], f: impl FnOnce(&[u64]) -> R) -> R {
    // (One cell, most keys, without a buffer to zero; four cells: a larger buffer
    // is zeroed and copied through library calls.)
    if let [c] = *key {
        return f(&[cell(c, slots)]);
    }
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

impl<'c> Run<'_, 'c> {
    fn emit(&mut self, frame: &mut Frame, conf: f64, height: u32) {
        if self.sink.binding(frame, conf, height) {
            self.stop = Some(Stop::Pause);
            self.fresh = true;
        }
    }

    /// The scan of step `i` stopped at candidate `k`: remember where it resumes.
    #[cold]
    fn save(&mut self, i: usize, k: usize) {
        if self.stop == Some(Stop::Pause)
            && let Some(r) = self.resume.get_mut(i)
        {
            *r = Some(if std::mem::take(&mut self.fresh) {
                k + 1
            } else {
                k
            });
        }
    }

    /// The last scan (step `i`), its candidate rows handed to the sink in batches.
    #[allow(clippy::too_many_arguments)]
    fn tail_scan(
        &mut self,
        i: usize,
        scan: &TailScan<'_>,
        version: Version,
        access: &Access,
        limit: u32,
        start: usize,
        frame: &mut Frame,
        conf: f64,
        height: u32,
    ) {
        let ctx = self.ctx;
        match access {
            Access::All if version == Version::Delta => {
                let rows = ctx.delta.get(start..).unwrap_or(&[]);
                self.batches(i, scan, rows, start, frame, conf, height);
            }
            Access::All => self.tail_all(i, scan, limit, start, frame, conf, height),
            Access::Index { index, key } => {
                let (rows, more) = with_key(key, &frame.slots, |k| scan.rel.lookup(*index, k));
                self.tail_rows(i, scan, (rows, more), limit, start, frame, conf, height);
            }
            Access::Exact { .. } => unreachable!("a tail never reads by exact key"),
        }
    }

    /// A tail scan of the candidates an index look-up found (a layer's base rows,
    /// then its own), those below `limit`, from candidate `start`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn tail_rows(
        &mut self,
        i: usize,
        scan: &TailScan<'_>,
        (rows, more): (&[u32], &[u32]),
        limit: u32,
        start: usize,
        frame: &mut Frame,
        conf: f64,
        height: u32,
    ) {
        let n = below(rows, limit);
        let m = if n < rows.len() {
            0
        } else {
            below(more, limit)
        };
        // Candidate `k` is `rows[k]`, then `more[k - n]`.
        if start < n {
            self.batches(i, scan, &rows[start..n], start, frame, conf, height);
        }
        if self.stop.is_none() {
            let from = start.max(n) - n;
            if from < m {
                self.batches(i, scan, &more[from..m], n + from, frame, conf, height);
            }
        }
    }

    /// A tail scan of every row below `limit`, from candidate `start`. (Apart from
    /// [`Run::tail_scan`]: its buffer would make every index scan's frame large.)
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn tail_all(
        &mut self,
        i: usize,
        scan: &TailScan<'_>,
        limit: u32,
        start: usize,
        frame: &mut Frame,
        conf: f64,
        height: u32,
    ) {
        numbered::<BATCH>(start, limit, |rows, at| {
            self.batches(i, scan, rows, at, frame, conf, height);
            self.stop.is_some()
        });
    }

    /// Hand `rows` (candidates `first..` of step `i`'s scan) to the sink in batches,
    /// reading the clock between them.
    #[allow(clippy::too_many_arguments)]
    fn batches(
        &mut self,
        i: usize,
        scan: &TailScan<'_>,
        rows: &[u32],
        first: usize,
        frame: &mut Frame,
        conf: f64,
        height: u32,
    ) {
        let ctx = self.ctx;
        for (b, chunk) in rows.chunks(BATCH).enumerate() {
            let before = ctx.work.get();
            let after = before + chunk.len() as u64;
            ctx.work.set(after);
            if before / WORK_CHECK != after / WORK_CHECK && ctx.clock() {
                self.stop = Some(Stop::Expired);
                return;
            }
            if let Some(k) = self.sink.rows(frame, scan, chunk, conf, height) {
                self.stop = Some(Stop::Pause);
                self.fresh = true;
                return self.save(i, first + b * BATCH + k);
            }
        }
    }

    /// Rows `rows` of step `i`'s scan (candidates `first..`), the scan before the
    /// tail, handed to the sink with their tail candidates ([`Sink::pairs`]); whether
    /// the run stopped, or `None` when the sink does not take them so.
    #[allow(clippy::too_many_arguments)]
    fn pair_rows(
        &mut self,
        i: usize,
        t: &TailStep<'_>,
        pair: &PairScan<'_>,
        frame: &mut Frame,
        rows: &[u32],
        first: usize,
        conf: f64,
        height: u32,
    ) -> Option<bool> {
        let ctx = self.ctx;
        // After a pause, the first row's candidates resume where they were.
        let start = self.resume.get(i + 1).copied().flatten().unwrap_or(0);
        let (pause, visited) = self
            .sink
            .pairs(frame, &t.scan, pair, rows, start, conf, height)?;
        if let Some(r) = self.resume.get_mut(i + 1) {
            *r = None;
        }
        let before = ctx.work.get();
        let after = before + rows.len() as u64 + visited;
        ctx.work.set(after);
        if before / WORK_CHECK != after / WORK_CHECK && ctx.clock() {
            self.stop = Some(Stop::Expired);
            return Some(true);
        }
        let Some((k, c)) = pause else {
            return Some(false);
        };
        self.stop = Some(Stop::Pause);
        self.fresh = false;
        if let Some(r) = self.resume.get_mut(i + 1) {
            *r = Some(c + 1);
        }
        if let Some(r) = self.resume.get_mut(i) {
            *r = Some(first + k);
        }
        Some(true)
    }

    /// Hand the rows of step `i` buffered in groups to the sink, step `i + 1`
    /// being the pair scan `pair` before the tail `t`; whether the run stopped.
    fn flush_groups(
        &mut self,
        i: usize,
        t: &TailStep<'_>,
        pair: &PairScan<'_>,
        outer: &Outer<'_>,
        frame: &mut Frame,
    ) -> bool {
        if self.groups.is_empty() {
            return false;
        }
        let groups = &self.groups;
        let (pause, visited) = self.sink.groups(frame, &t.scan, pair, outer, groups);
        let rows: usize = groups.iter().map(|g| g.rows.len()).sum();
        let ctx = self.ctx;
        let before = ctx.work.get();
        let after = before + rows as u64 + visited;
        ctx.work.set(after);
        let stopped = if before / WORK_CHECK != after / WORK_CHECK && ctx.clock() {
            self.stop = Some(Stop::Expired);
            true
        } else if let Some((g, k, c)) = pause {
            // Where one group at a time would have paused: after candidate `c` of
            // the group's `k`-th row of the pair scan, this step at its row.
            self.stop = Some(Stop::Pause);
            self.fresh = false;
            for (step, at) in [(i + 2, c + 1), (i + 1, k), (i, groups[g].at)] {
                if let Some(r) = self.resume.get_mut(step) {
                    *r = Some(at);
                }
            }
            true
        } else {
            false
        };
        self.groups.clear();
        stopped
    }

    /// Buffer `group`, a row of step `i`, and hand the groups to the sink once
    /// there are [`GROUPS`] of them (see [`Run::flush_groups`]); whether the run
    /// stopped.
    #[inline(always)]
    fn push_group(
        &mut self,
        group: Group<'c>,
        i: usize,
        (t, pair, outer): (&TailStep<'_>, &PairScan<'_>, &Outer<'_>),
        frame: &mut Frame,
    ) -> bool {
        if self.groups.capacity() == 0 {
            self.groups.reserve_exact(GROUPS);
        }
        self.groups.push(group);
        self.groups.len() == GROUPS && self.flush_groups(i, t, pair, outer, frame)
    }

    /// The rows `rows` (candidates `first..`) of step `i`, a scan of a narrow
    /// relation whose rows are taken in groups (the pair scan and the tail of
    /// `grouping` after it), when the look-ups each row needs there read dense
    /// indexes: what the general loop of [`Run::steps`] does for such rows, with
    /// the row read, the look-ups and the record read made for them. Whether the
    /// run stopped.
    #[allow(clippy::too_many_arguments)]
    fn dense_groups(
        &mut self,
        i: usize,
        d: &DenseGroups<'c>,
        (t, pair, limit): (&TailStep<'_>, &PairScan<'_>, u32),
        outer: &Outer<'_>,
        frame: &mut Frame,
        rows: &[u32],
        (first, conf, height): (usize, f64, u32),
    ) -> bool {
        #[cfg(test)]
        crate::eval::fixpoint::DENSE_CALLS.with(|c| c.set(c.get() + 1));
        let ctx = self.ctx;
        for (k, &row) in rows.iter().enumerate() {
            if ctx.tick() {
                self.stop = Some(Stop::Expired);
                return true;
            }
            let words = d.view.words(row);
            for &(c, s) in outer.binds {
                frame.slots[s] = u64::from(words[c]);
            }
            let found = dense_rows(d.peek, cell(d.key, &frame.slots));
            if found.first().is_none_or(|&first| first >= limit) {
                continue;
            }
            let fixed: &'c [u32] = match d.tail {
                None => &[],
                Some((slots, key)) => {
                    let fixed = dense_rows(slots, cell(key, &frame.slots));
                    // No candidates for any row of the pair scan: nothing for
                    // this row.
                    if fixed.first().is_none_or(|&first| first >= t.limit) {
                        continue;
                    }
                    fixed
                }
            };
            let group = Group {
                row,
                at: first + k,
                rows: &found[..below(found, limit)],
                fixed,
                conf: conf.min(d.view.conf),
                height: if ctx.provenance {
                    height.max(d.view.height_rule(words).0)
                } else {
                    0
                },
            };
            if self.push_group(group, i, (t, pair, outer), frame) {
                return true;
            }
        }
        self.flush_groups(i, t, pair, outer, frame)
    }

    /// Run `steps[i..]`.
    fn steps(&mut self, steps: &[Step], i: usize, frame: &mut Frame, conf: f64, height: u32) {
        let Some(step) = steps.get(i) else {
            self.emit(frame, conf, height);
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
                // After a pause, the scans on the way down restart where they were.
                let start = self.resume.get_mut(i).and_then(Option::take).unwrap_or(0);
                // The last step hands each binding straight to the sink.
                let last = i + 1 == steps.len();
                if let Some(t) = self.tail
                    && i == t.step
                {
                    let (version, access, limit) = (t.version, t.access, t.limit);
                    return self.tail_scan(
                        i, &t.scan, version, access, limit, start, frame, conf, height,
                    );
                }
                // This step's own look-up first: where it finds no rows (often, in a
                // step that joins a small relation), nothing else here is needed.
                let looked_up = match access {
                    Access::Index { index, key } => {
                        let (rows, more) = match self.peeked.take() {
                            Some(found) => found,
                            None => with_key(key, &frame.slots, |k| r.lookup(*index, k)),
                        };
                        if none_below((rows, more), limit) {
                            return;
                        }
                        Some((rows, more))
                    }
                    _ => None,
                };
                // When the next step is the tail: a look-up whose key this step does
                // not bind finds the same rows for every row of this step, so it is
                // made once, and when it finds none this step has nothing to scan for.
                let next = match self.tail {
                    Some(t) if t.step == i + 1 => {
                        let fixed = match t.access {
                            Access::Index { index, key } if t.fixed => {
                                let found =
                                    with_key(key, &frame.slots, |k| t.scan.rel.lookup(*index, k));
                                if none_below(found, t.limit) {
                                    return;
                                }
                                Some(found)
                            }
                            _ => None,
                        };
                        Some((t, fixed))
                    }
                    _ => None,
                };
                // With the tail next and paired with this scan, the sink may take this
                // scan's rows with their candidates, a chunk at a time.
                let pairing = match next {
                    Some((t, None)) => t.pair.filter(|p| p.pair.key.is_some()).map(|p| (t, p)),
                    // The same candidates for every row (a layer's own rows after its
                    // base's are left to the binding at a time).
                    Some((t, Some((fixed, more)))) if below(more, t.limit) == 0 => {
                        t.pair.filter(|p| p.pair.key.is_none()).map(|p| {
                            (
                                t,
                                PairScan {
                                    fixed: Some(fixed),
                                    ..p
                                },
                            )
                        })
                    }
                    _ => None,
                };
                // When the next step is a scan by an index (other than the tail), its
                // look-up is made here, for each row as soon as it is bound: where it
                // finds nothing (often, in a join of three or more atoms), the row
                // needs nothing more; otherwise the next step takes the rows found.
                let rels: &'c [Relation] = ctx.rels;
                let peek = match steps.get(i + 1) {
                    Some(Step::Scan {
                        rel,
                        version,
                        access: Access::Index { index, key },
                        ..
                    }) if next.is_none() => {
                        let limit = match version {
                            Version::Old => ctx.old[*rel as usize],
                            Version::Full | Version::Delta => ctx.full[*rel as usize],
                        };
                        Some((&rels[*rel as usize], *index, key.as_slice(), limit))
                    }
                    _ => None,
                };
                // When the next step is the pair scan before the tail (see `pairing`),
                // a sink may take this scan's rows in groups, each with the rows its
                // look-up found there (and, with the tail's key bound before the pair
                // scan, the tail's candidates), a chunk of rows at a time: instead of
                // a run of the next steps for each.
                let grouping = match (peek, self.tail) {
                    (Some((_, _, _, limit)), Some(t)) if t.step == i + 2 => {
                        let fixed = t.fixed && matches!(t.access, Access::Index { .. });
                        t.pair
                            .filter(|p| {
                                p.pair.key.is_none() == fixed && self.sink.takes_groups(&t.scan, p)
                            })
                            .map(|p| (t, p, limit))
                    }
                    _ => None,
                };
                let outer = Outer {
                    rel_id: *rel,
                    rel: r,
                    binds,
                    fact: *fact,
                };
                // Grouping over a narrow relation whose next look-ups read dense
                // indexes: its rows take a loop of their own (see `dense_groups`).
                let dense = match (grouping, peek) {
                    (Some((t, pair, _)), Some((peeked, index, &[key], _)))
                        if ctx.dense && checks.is_empty() =>
                    {
                        let tail = match (pair.pair.key.is_some(), t.access) {
                            (true, _) => Some(None),
                            (false, Access::Index { index, key }) => match key.as_slice() {
                                &[key] => rels[t.scan.rel_id as usize]
                                    .dense_slots(*index)
                                    .map(|slots| Some((slots, key))),
                                _ => None,
                            },
                            (false, _) => None,
                        };
                        match (
                            r.narrow().filter(|v| !v.conf_col),
                            peeked.dense_slots(index),
                            tail,
                        ) {
                            (Some(view), Some(peek), Some(tail)) => Some(DenseGroups {
                                view,
                                peek,
                                key,
                                tail,
                            }),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                // Candidates `first..` of this step's scan, the rows `rows`, visited in
                // order; whether the run stopped. Every access comes here, so that the
                // visit of a row is compiled once, into this loop.
                let segment = |this: &mut Self, frame: &mut Frame, rows: &[u32], first: usize| {
                    let (mut rows, mut first) = (rows, first);
                    if let Some((t, pair)) = pairing {
                        while !rows.is_empty() {
                            let n = rows.len().min(PAIR_ROWS);
                            match this.pair_rows(
                                i,
                                t,
                                &pair,
                                frame,
                                &rows[..n],
                                first,
                                conf,
                                height,
                            ) {
                                Some(true) => return true,
                                Some(false) => (rows, first) = (&rows[n..], first + n),
                                None => break,
                            }
                        }
                    }
                    if let (Some(d), Some((t, pair, limit))) = (&dense, grouping)
                        && this.resume.get(i + 1).is_none_or(Option::is_none)
                        && this.resume.get(i + 2).is_none_or(Option::is_none)
                    {
                        let at = (first, conf, height);
                        return this.dense_groups(i, d, (t, &pair, limit), &outer, frame, rows, at);
                    }
                    for (k, &row) in rows.iter().enumerate() {
                        if ctx.tick() {
                            this.stop = Some(Stop::Expired);
                            return true;
                        }
                        let cells = r.row(row);
                        // Bind first: a variable repeated within this atom (`e(x, x)`)
                        // is checked against the slot its first occurrence just filled.
                        for &(c, s) in binds {
                            frame.slots[s] = cells.get(c);
                        }
                        if checks
                            .iter()
                            .any(|&(c, k)| cells.get(c) != cell(k, &frame.slots))
                        {
                            continue;
                        }
                        // With the tail next, its candidates first: a look-up in small
                        // buckets often finds none, and then this row needs nothing
                        // more.
                        let found = match next {
                            Some((_, Some(fixed))) => Some(fixed),
                            Some((t, None)) => match t.access {
                                Access::Index { index, key } => {
                                    let found = with_key(key, &frame.slots, |k| {
                                        t.scan.rel.lookup(*index, k)
                                    });
                                    if none_below(found, t.limit) {
                                        continue;
                                    }
                                    Some(found)
                                }
                                _ => None,
                            },
                            None => None,
                        };
                        let peeked = match peek {
                            Some((rel, index, key, limit)) => {
                                let found = with_key(key, &frame.slots, |k| rel.lookup(index, k));
                                if none_below(found, limit) {
                                    continue;
                                }
                                Some(found)
                            }
                            None => None,
                        };
                        if let (Some((t, pair, limit)), Some((found, more))) = (grouping, peeked) {
                            // A row the groups do not take (a pause left places to
                            // resume in the next steps, or a layer's own rows were
                            // found) goes the way of one row at a time, after the
                            // groups before it.
                            let resumes = this.resume.get(i + 1).is_some_and(Option::is_some)
                                || this.resume.get(i + 2).is_some_and(Option::is_some);
                            let fixed = if resumes || below(more, limit) > 0 {
                                None
                            } else if pair.pair.key.is_some() {
                                Some(&[][..])
                            } else {
                                let Access::Index { index, key } = t.access else {
                                    unreachable!(
                                        "a tail whose key is bound before its pair scan reads an index"
                                    )
                                };
                                let tail = &rels[t.scan.rel_id as usize];
                                let found = with_key(key, &frame.slots, |k| tail.lookup(*index, k));
                                // No candidates for any row of the pair scan: nothing
                                // for this row.
                                if none_below(found, t.limit) {
                                    continue;
                                }
                                (below(found.1, t.limit) == 0).then_some(found.0)
                            };
                            if let Some(fixed) = fixed {
                                let m = r.meta(row);
                                let group = Group {
                                    row,
                                    at: first + k,
                                    rows: &found[..below(found, limit)],
                                    fixed,
                                    conf: conf.min(m.conf),
                                    height: if ctx.provenance {
                                        height.max(m.height)
                                    } else {
                                        0
                                    },
                                };
                                if this.push_group(group, i, (t, &pair, &outer), frame) {
                                    return true;
                                }
                                continue;
                            }
                            if this.flush_groups(i, t, &pair, &outer, frame) {
                                return true;
                            }
                            // (The groups bound their rows.)
                            for &(c, s) in binds {
                                frame.slots[s] = cells.get(c);
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
                            this.emit(frame, c, h);
                        } else if let Some((t, _)) = next {
                            let start = this.resume.get_mut(i + 1).and_then(Option::take);
                            let (start, limit) = (start.unwrap_or(0), t.limit);
                            match found {
                                Some(found) => {
                                    this.tail_rows(i + 1, &t.scan, found, limit, start, frame, c, h)
                                }
                                None => this.tail_scan(
                                    i + 1,
                                    &t.scan,
                                    t.version,
                                    t.access,
                                    limit,
                                    start,
                                    frame,
                                    c,
                                    h,
                                ),
                            }
                        } else {
                            this.peeked = peeked;
                            this.steps(steps, i + 1, frame, c, h);
                        }
                        if this.stop.is_some() {
                            this.save(i, first + k);
                            return true;
                        }
                    }
                    match grouping {
                        Some((t, pair, _)) => this.flush_groups(i, t, &pair, &outer, frame),
                        None => false,
                    }
                };
                match access {
                    Access::All if *version == Version::Delta => {
                        let rows = ctx.delta;
                        if !ctx.scattered {
                            segment(self, frame, rows.get(start..).unwrap_or(&[]), start);
                            return;
                        }
                        // Rows in no row order: their records are fetched a chunk
                        // ahead of their visits.
                        let mut at = start;
                        while at < rows.len() {
                            let n = AHEAD.min(rows.len() - at);
                            for &ahead in rows.iter().skip(at + n).take(AHEAD) {
                                r.prefetch_record(ahead);
                            }
                            if segment(self, frame, &rows[at..at + n], at) {
                                return;
                            }
                            at += n;
                        }
                    }
                    Access::All => {
                        // Row numbers a handful at a time (candidate `k` is row `k`).
                        numbered::<64>(start, limit, |rows, at| segment(self, frame, rows, at));
                    }
                    Access::Index { .. } => {
                        // A layer's base rows, then its own; a plain relation's
                        // second list is empty.
                        let Some((rows, more)) = looked_up else {
                            return;
                        };
                        let n = below(rows, limit);
                        let m = if n < rows.len() {
                            0
                        } else {
                            below(more, limit)
                        };
                        // Candidate `k` is `rows[k]`, then `more[k - n]`.
                        let own = start.max(n) - n..m;
                        let base = &rows[start.min(n)..n];
                        if (base.is_empty() || !segment(self, frame, base, start))
                            && !own.is_empty()
                        {
                            segment(self, frame, &more[own.clone()], n + own.start);
                        }
                    }
                    Access::Exact { key } => {
                        let found = with_key(key, &frame.slots, |k| r.find(k));
                        if let Some(row) = found.filter(|&row| row < limit)
                            && start == 0
                        {
                            segment(self, frame, &[row], 0);
                        }
                    }
                }
            }
            Step::Absent { rel, access, .. } => {
                if !absent(ctx.rels, *rel, access, &frame.slots) {
                    return;
                }
                self.steps(steps, i + 1, frame, conf, height);
            }
            Step::Filter {
                op,
                ty,
                left,
                right,
            } => {
                let (a, b) = match (
                    eval(left, &frame.slots, ctx.syms),
                    eval(right, &frame.slots, ctx.syms),
                ) {
                    (Ok(a), Ok(b)) => (a, b),
                    (Err(f), _) | (_, Err(f)) => return ctx.fault(f),
                };
                if compare(*op, *ty, a, b, ctx.syms) {
                    self.steps(steps, i + 1, frame, conf, height);
                }
            }
            Step::Test {
                test,
                args,
                negated,
                regex,
            } => {
                let holds = match run_test(*test, args, regex.as_deref(), &frame.slots, ctx.syms) {
                    Ok(h) => h,
                    Err(f) => return ctx.fault(f),
                };
                if holds != *negated {
                    self.steps(steps, i + 1, frame, conf, height);
                }
            }
            Step::Assign { slot, expr } => {
                let v = match eval(expr, &frame.slots, ctx.syms) {
                    Ok(v) => v,
                    Err(f) => return ctx.fault(f),
                };
                frame.slots[*slot] = v;
                self.steps(steps, i + 1, frame, conf, height);
            }
            Step::Aggregate(agg) => {
                let Some((value, c, h)) = aggregate(ctx, agg, frame) else {
                    if ctx.expired.get() {
                        self.stop = Some(Stop::Expired);
                    }
                    return;
                };
                if agg.result_bound {
                    if frame.slots[agg.result] != value {
                        return;
                    }
                } else {
                    frame.slots[agg.result] = value;
                }
                self.steps(steps, i + 1, frame, conf.min(c), height.max(h));
            }
        }
    }
}

/// Row numbers `start..limit`, handed to `f` up to `B` at a time with the first's
/// number, until `f` says to stop (true).
#[inline(always)]
fn numbered<const B: usize>(start: usize, limit: u32, mut f: impl FnMut(&[u32], usize) -> bool) {
    let mut buf = [0u32; B];
    let mut at = start;
    while at < limit as usize {
        let n = B.min(limit as usize - at);
        for (k, b) in buf[..n].iter_mut().enumerate() {
            *b = (at + k) as u32;
        }
        if f(&buf[..n], at) {
            return;
        }
        at += n;
    }
}

/// How many rows of an ascending list are below `limit`.
#[inline(always)]
pub(crate) fn below(rows: &[u32], limit: u32) -> usize {
    // Usually every row of the bucket is below the limit.
    match rows.last() {
        Some(&last) if last >= limit => rows.partition_point(|&row| row < limit),
        _ => rows.len(),
    }
}

/// Whether an index look-up's candidates (a layer's base rows, then its own) have
/// none below `limit`.
#[inline(always)]
fn none_below((rows, more): (&[u32], &[u32]), limit: u32) -> bool {
    match rows.first() {
        Some(&first) => first >= limit,
        None => more.first().is_none_or(|&first| first >= limit),
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
/// `None` when it has no value (min/max/sum of nothing; overflow, recorded as a
/// fault) or the deadline passed (`ctx.expired`).
pub(crate) fn aggregate(
    ctx: &Ctx<'_>,
    agg: &AggPlan,
    frame: &mut Frame,
) -> Option<(u64, f64, u32)> {
    let mut count: u64 = 0;
    let mut acc: Option<u64> = None;
    let mut mean_sum = 0.0f64;
    let mut failed: Option<Fault> = None;
    let mut min_conf = 1.0f64;
    let mut max_h = 0u32;
    let mut facts: Vec<FactId> = Vec::new();
    let mut seen: HashSet<FactId, FxBuildHasher> = HashSet::with_hasher(FxBuildHasher);
    let provenance = ctx.provenance;
    let syms = ctx.syms;
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
                return false;
            };
            let v = match eval(target, &frame.slots, syms) {
                Ok(v) => v,
                Err(f) => {
                    failed = Some(failed.unwrap_or(f));
                    return false;
                }
            };
            if agg.func == AggFunc::Mean {
                mean_sum += match ty {
                    ColumnType::Number => v as i64 as f64,
                    ColumnType::Unsigned => v as f64,
                    _ => f64::from_bits(v),
                };
                return false;
            }
            acc = match (acc, agg.func) {
                (None, _) => Some(v),
                (Some(a), AggFunc::Sum) => match arith(ArithOp::Add, *ty, a, v) {
                    Ok(s) => Some(s),
                    Err(f) => {
                        failed = Some(failed.unwrap_or(f));
                        Some(a)
                    }
                },
                (Some(a), AggFunc::Min) => Some(if compare(CmpOp::Lt, *ty, v, a, syms) {
                    v
                } else {
                    a
                }),
                (Some(a), AggFunc::Max) => Some(if compare(CmpOp::Gt, *ty, v, a, syms) {
                    v
                } else {
                    a
                }),
                (Some(a), AggFunc::Count | AggFunc::Mean) => Some(a),
            };
            false
        };
        let mut run = Run {
            ctx,
            sink: &mut sink,
            tail: None,
            resume: &mut [],
            stop: None,
            fresh: false,
            peeked: None,
            groups: Vec::new(),
        };
        run.steps(&agg.body, 0, frame, 1.0, 0);
        if run.stop.is_some() {
            return None;
        }
    }
    if provenance {
        frame.agg_facts[agg.agg] = facts;
    }
    if let Some(f) = failed {
        ctx.fault(f);
        return None;
    }
    let value = match agg.func {
        AggFunc::Count => match agg.result_ty {
            ColumnType::Number => i64::try_from(count).ok()? as u64,
            ColumnType::Unsigned => count,
            ColumnType::Float => (count as f64).to_bits(),
            ColumnType::Symbol => return None,
        },
        AggFunc::Mean => {
            let mean = mean_sum / (count as f64);
            if count == 0 || !mean.is_finite() {
                return None;
            }
            mean.to_bits()
        }
        _ => acc?,
    };
    Some((value, min_conf, max_h))
}

/// Evaluate an expression: its value, or why it has none (overflow, division by
/// zero, a float result that is not finite, a conversion that has no value such as
/// `to_number("x")`, or a constant that never matches).
pub(crate) fn eval(e: &CExpr, slots: &[u64], syms: Syms<'_>) -> Result<u64, Fault> {
    match e {
        CExpr::Slot(s) => Ok(slots[*s]),
        CExpr::Const(c) => Ok(*c),
        CExpr::Never => Err(Fault::Never),
        CExpr::Bin(op, ty, l, r) => arith(*op, *ty, eval(l, slots, syms)?, eval(r, slots, syms)?),
        CExpr::Call(f, args, ty) => call(*f, args, *ty, slots, syms),
        CExpr::Neg(ty, x) => {
            let v = eval(x, slots, syms)?;
            match ty {
                ColumnType::Number => (v as i64)
                    .checked_neg()
                    .map(|n| n as u64)
                    .ok_or(Fault::Overflow),
                ColumnType::Unsigned => (v == 0).then_some(0).ok_or(Fault::Overflow),
                ColumnType::Float => Ok((-f64::from_bits(v)).to_bits()),
                ColumnType::Symbol => Err(Fault::Never),
            }
        }
    }
}

/// Integer arithmetic that fails on overflow or a zero divisor.
fn checked(op: ArithOp, b_zero: bool, r: Option<u64>) -> Result<u64, Fault> {
    match r {
        Some(x) => Ok(x),
        None if b_zero && matches!(op, ArithOp::Div | ArithOp::Rem) => Err(Fault::DivZero),
        None => Err(Fault::Overflow),
    }
}

fn arith(op: ArithOp, ty: ColumnType, a: u64, b: u64) -> Result<u64, Fault> {
    // A shift by a negative amount or by 64 or more has no value.
    let shift = |b: u64| {
        u32::try_from(b)
            .ok()
            .filter(|&s| s < 64)
            .ok_or(Fault::Overflow)
    };
    match ty {
        ColumnType::Number => {
            let (a, b) = (a as i64, b as i64);
            let r = match op {
                ArithOp::Add => a.checked_add(b),
                ArithOp::Sub => a.checked_sub(b),
                ArithOp::Mul => a.checked_mul(b),
                ArithOp::Div => a.checked_div(b),
                ArithOp::Rem => a.checked_rem(b),
                ArithOp::Pow => a.checked_pow(u32::try_from(b).map_err(|_| Fault::Overflow)?),
                ArithOp::BAnd => Some(a & b),
                ArithOp::BOr => Some(a | b),
                ArithOp::BXor => Some(a ^ b),
                ArithOp::Shl => Some(a << shift(b as u64)?),
                ArithOp::Shr => Some(a >> shift(b as u64)?),
                ArithOp::ShrU => Some(((a as u64) >> shift(b as u64)?) as i64),
                ArithOp::LAnd => Some(i64::from(a != 0 && b != 0)),
                ArithOp::LOr => Some(i64::from(a != 0 || b != 0)),
                ArithOp::LXor => Some(i64::from((a != 0) != (b != 0))),
            };
            checked(op, b == 0, r.map(|x| x as u64))
        }
        ColumnType::Unsigned => {
            let r = match op {
                ArithOp::Add => a.checked_add(b),
                ArithOp::Sub => a.checked_sub(b),
                ArithOp::Mul => a.checked_mul(b),
                ArithOp::Div => a.checked_div(b),
                ArithOp::Rem => a.checked_rem(b),
                ArithOp::Pow => a.checked_pow(u32::try_from(b).map_err(|_| Fault::Overflow)?),
                ArithOp::BAnd => Some(a & b),
                ArithOp::BOr => Some(a | b),
                ArithOp::BXor => Some(a ^ b),
                ArithOp::Shl => Some(a << shift(b)?),
                ArithOp::Shr | ArithOp::ShrU => Some(a >> shift(b)?),
                ArithOp::LAnd => Some(u64::from(a != 0 && b != 0)),
                ArithOp::LOr => Some(u64::from(a != 0 || b != 0)),
                ArithOp::LXor => Some(u64::from((a != 0) != (b != 0))),
            };
            checked(op, b == 0, r)
        }
        ColumnType::Float => {
            let (a, b) = (f64::from_bits(a), f64::from_bits(b));
            let truth = |t: bool| if t { 1.0 } else { 0.0 };
            let x = match op {
                ArithOp::Add => a + b,
                ArithOp::Sub => a - b,
                ArithOp::Mul => a * b,
                ArithOp::Div => a / b,
                ArithOp::Rem => a % b,
                ArithOp::Pow => a.powf(b),
                ArithOp::LAnd => truth(a != 0.0 && b != 0.0),
                ArithOp::LOr => truth(a != 0.0 || b != 0.0),
                ArithOp::LXor => truth((a != 0.0) != (b != 0.0)),
                _ => return Err(Fault::Never),
            };
            // Stored floats are finite: a result that is not is a failure.
            if x.is_finite() {
                Ok(x.to_bits())
            } else if b == 0.0 && matches!(op, ArithOp::Div | ArithOp::Rem) {
                Err(Fault::DivZero)
            } else {
                Err(Fault::Overflow)
            }
        }
        ColumnType::Symbol => Err(Fault::Never),
    }
}

/// Apply a functor; `args` are the argument expressions with their types, `ty` the
/// result's type.
fn call(
    f: Functor,
    args: &[(CExpr, ColumnType)],
    ty: ColumnType,
    slots: &[u64],
    syms: Syms<'_>,
) -> Result<u64, Fault> {
    let arg = |i: usize| eval(&args[i].0, slots, syms);
    let arg_ty = args.first().map_or(ty, |a| a.1);
    match f {
        Functor::Cat => {
            let mut s = String::new();
            for (a, _) in args {
                let v = eval(a, slots, syms)?;
                syms.with(|r| s.push_str(r.resolve(v)));
            }
            syms.intern(&s).ok_or(Fault::Never)
        }
        Functor::Strlen => {
            let v = arg(0)?;
            Ok(syms.with(|r| r.resolve(v).chars().count()) as u64)
        }
        Functor::Substr => {
            let (v, i, n) = (arg(0)?, arg(1)? as i64, arg(2)? as i64);
            let part: String = syms.with(|r| {
                let text = r.resolve(v);
                let len = text.chars().count() as i64;
                if i < 0 || i > len {
                    return String::new();
                }
                let n = if n < 0 { len - i } else { n.min(len - i) };
                text.chars().skip(i as usize).take(n as usize).collect()
            });
            syms.intern(&part).ok_or(Fault::Never)
        }
        Functor::Ord => arg(0),
        Functor::ToNumber | Functor::ToUnsigned | Functor::ToFloat => {
            convert(arg(0)?, arg_ty, ty, syms).ok_or(Fault::Never)
        }
        Functor::ToString => {
            let v = arg(0)?;
            let text = match arg_ty {
                ColumnType::Number => (v as i64).to_string(),
                ColumnType::Unsigned => v.to_string(),
                ColumnType::Float => f64::from_bits(v).to_string(),
                ColumnType::Symbol => return Ok(v),
            };
            syms.intern(&text).ok_or(Fault::Never)
        }
        Functor::Min | Functor::Max => {
            let op = if f == Functor::Min {
                CmpOp::Lt
            } else {
                CmpOp::Gt
            };
            let mut best = arg(0)?;
            for (a, _) in &args[1..] {
                let v = eval(a, slots, syms)?;
                if compare(op, arg_ty, v, best, syms) {
                    best = v;
                }
            }
            Ok(best)
        }
        Functor::Abs => {
            let v = arg(0)?;
            match arg_ty {
                ColumnType::Number => (v as i64)
                    .checked_abs()
                    .map(|x| x as u64)
                    .ok_or(Fault::Overflow),
                ColumnType::Float => Ok(f64::from_bits(v).abs().to_bits()),
                _ => Ok(v),
            }
        }
        Functor::BNot => match arg_ty {
            ColumnType::Number | ColumnType::Unsigned => Ok(!arg(0)?),
            _ => Err(Fault::Never),
        },
        Functor::LNot => {
            let v = arg(0)?;
            match arg_ty {
                ColumnType::Float => Ok((if f64::from_bits(v) == 0.0 {
                    1.0f64
                } else {
                    0.0
                })
                .to_bits()),
                _ => Ok(u64::from(v == 0)),
            }
        }
    }
}

/// Convert a value of type `from` to type `to` (`to_number`, `to_unsigned`,
/// `to_float`): symbols are parsed, floats truncated toward zero; `None` when the
/// value has none of the target type.
fn convert(v: u64, from: ColumnType, to: ColumnType, syms: Syms<'_>) -> Option<u64> {
    use ColumnType::*;
    match (from, to) {
        (a, b) if a == b => Some(v),
        (Symbol, _) => {
            let value = syms.with(|r| to.parse(r.resolve(v)))?;
            crate::value::cell::encode_scalar(&value, to).or(match (value, to) {
                (crate::value::Value::Number(i), Float) => Some((i as f64).to_bits()),
                (crate::value::Value::Unsigned(u), Float) => Some((u as f64).to_bits()),
                _ => None,
            })
        }
        (Number, Unsigned) => u64::try_from(v as i64).ok(),
        (Number, Float) => Some((v as i64 as f64).to_bits()),
        (Unsigned, Number) => i64::try_from(v).ok().map(|x| x as u64),
        (Unsigned, Float) => Some((v as f64).to_bits()),
        (Float, Number) => {
            let x = f64::from_bits(v).trunc();
            (-9.223_372_036_854_776e18..9.223_372_036_854_776e18)
                .contains(&x)
                .then_some(x as i64 as u64)
        }
        (Float, Unsigned) => {
            let x = f64::from_bits(v).trunc();
            (0.0..1.844_674_407_370_955_2e19)
                .contains(&x)
                .then_some(x as u64)
        }
        _ => None,
    }
}

/// Run a built-in test; an error when an argument has no value.
fn run_test(
    test: TestFn,
    args: &[CExpr],
    regex: Option<&regex::Regex>,
    slots: &[u64],
    syms: Syms<'_>,
) -> Result<bool, Fault> {
    match test {
        TestFn::True => Ok(true),
        TestFn::False => Ok(false),
        TestFn::Contains => {
            let (a, b) = (eval(&args[0], slots, syms)?, eval(&args[1], slots, syms)?);
            Ok(syms.with(|r| r.resolve(b).contains(r.resolve(a))))
        }
        TestFn::Match => {
            let text = eval(&args[1], slots, syms)?;
            match regex {
                Some(re) => Ok(syms.with(|r| re.is_match(r.resolve(text)))),
                None => {
                    let pattern = eval(&args[0], slots, syms)?;
                    let re = syms
                        .with(|r| regex::Regex::new(&format!("^(?:{})$", r.resolve(pattern))))
                        .ok();
                    // An invalid pattern matches nothing (as in Soufflé).
                    Ok(re.is_some_and(|re| syms.with(|r| re.is_match(r.resolve(text)))))
                }
            }
        }
    }
}

/// Compare two cells of type `ty` (symbols by their text).
pub(crate) fn compare(op: CmpOp, ty: ColumnType, a: u64, b: u64, syms: Syms<'_>) -> bool {
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
                syms.with(|r| r.resolve(a).cmp(r.resolve(b)))
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
