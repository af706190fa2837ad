//! The semi-naive loop: strata in order; per recursive stratum, rounds that evaluate
//! only the rule variants whose delta atom reads a fact that changed (appeared, or
//! improved its confidence or height) in the round before, until nothing changes.
//!
//! Variant `i` of a rule reads the delta at its i-th same-stratum atom, the old
//! version (rows that existed before the last round) at the same-stratum atoms before
//! it, and the full version after it, so every new combination is joined at least once.
//!
//! A round's work is cut into pieces: each variant over a range of its delta rows.
//! Pieces run in waves (see [`Engine::run_pieces`]): every piece of a wave joins
//! against the relations as the wave found them and buffers what it derives, pausing
//! (wherever it is, however deep) after a fixed number of derivations; then the
//! buffers are merged in piece order, the limits are checked, and paused pieces
//! resume in the next wave. Reads are bounded by the row counts at the round's start,
//! so a merge never disturbs a paused scan. Because a wave's joins only read, its
//! pieces can run on several threads; nothing about the waves depends on how many,
//! so the results are byte-identical whatever the thread count.
//!
//! Work per stratum and per round is proportional to the stratum's own relations and
//! rules (and to what changed), never to the whole program's, so a program of many
//! small strata evaluates in time linear in its size.
//!
//! With provenance, once a fact's confidence rose after a rule read it, the
//! least-height pass (`heights.rs`) is bound to re-select every derived fact's record
//! of the stratum; from then on the rounds record no premises (a new fact gets a
//! placeholder the pass overwrites), but they keep heights: the facts that improve
//! only in height enter the deltas, which decides where joins pause and so in which
//! order new facts are merged, and hence every row number the pass reads.

use std::hash::Hasher;
use std::time::Instant;

use crate::diag::{Diagnostic, Limit, Result};
use crate::eval::exec::{self, Ctx, Cursor, Fault, Faults, Frame, PairScan, Stop, Syms, TailScan};
use crate::eval::order::{FactQueue, Rank, rank};
use crate::eval::plan::{CExpr, Pair, Plan, Planner, Premise, Src, Step, TAIL_CELLS, Version};
use crate::eval::relation::{
    AGG_MARK, Meta, NO_EVIDENCE, Narrow, Relation, RowList, dense_rows, inline_limit, past_heap,
    reserve_past_heap, row_shift, tag_of,
};
use crate::eval::symbols::Symbols;
use crate::eval::{ArithmeticFaults, EvalOptions, FactId, Progress, Stats, StratumStats};
use crate::ir::{CmpOp, Functor, Literal, Program, RuleId};
use crate::value::ColumnType;

/// Buffered derivations that pause the join for a merge (a handful in unit tests, so
/// that they pause and resume joins everywhere).
const FLUSH: usize = if cfg!(test) { 5 } else { 1 << 12 };

/// A buffered derivation's record, but for its head cells, its premises and its
/// confidence (see [`Pending::push_rec`]): its digest and height kept together,
/// so that buffering them takes one push (8 bytes), with provenance or without.
#[derive(Clone, Copy, Default)]
struct Rec {
    /// Dedup digest of the tuple's cells.
    tag: u32,
    /// With provenance, the derivation's height; else 0 ([`Pending::keep`] makes
    /// it so).
    height: u32,
}

/// Derived tuples waiting to be merged into their relation.
#[derive(Default)]
struct Pending {
    cells: Vec<u64>,
    /// Each tuple's record, but for its confidence.
    recs: Vec<Rec>,
    /// The confidence of every tuple, while they share one (the bits of the
    /// first's; `confs` is then empty), as in an unweighted program always.
    shared: u64,
    /// Each tuple's confidence, once two differ.
    confs: Vec<f64>,
    /// Premise list bounds (with provenance): `premises[starts[k]..starts[k + 1]]`.
    starts: Vec<u32>,
    premises: Vec<FactId>,
    /// With [`Pending::word`] set, the premises of each tuple instead, as the
    /// head relation's derivation word.
    words: Vec<u64>,
    /// Whether (and how) the premises are buffered as derivation words.
    word: Option<Words>,
    /// Derivations emitted, those dropped on the spot included.
    derivations: u64,
    /// Whether derivations are looked up in their head relation as they are made.
    look: LookUps,
    /// Whether the buffered derivations carry premises (with provenance, unless the
    /// least-height pass will re-select every record of the stratum).
    record: bool,
    /// The most derivations the buffer held at a merge since its piece began.
    used: usize,
    /// Derivations [`Pending::filter`] dropped since the last merge.
    filtered: usize,
}

/// How a plan's premises become one inline derivation word of its head relation
/// (see [`Relation::inline_base`]): a rule of one to three positive atoms and no
/// aggregate, while the relations it reads have rows that fit. Its derivations
/// are then buffered as that word, 8 bytes, instead of a premise list.
#[derive(Clone, Copy, Debug)]
struct Words {
    base: u64,
    /// Whether the words are in their narrow form ([`Relation::narrow_base`]).
    narrow: bool,
    /// The premises' fact slots, in premise order (the first `len`, one to three;
    /// where each row goes in the word: [`row_shift`]).
    slots: [usize; 3],
    len: usize,
}

impl Words {
    /// The word of the premises bound in `facts`.
    #[inline(always)]
    fn of(self, facts: &[FactId]) -> u64 {
        let row = |i: usize| facts[self.slots[i]].row as u64;
        match self.len {
            1 => self.base | row(0),
            2 => self.base | row(1) << row_shift(2, 1) | row(0),
            _ => self.base | row(2) << row_shift(3, 2) | row(1) << row_shift(3, 1) | row(0),
        }
    }

    /// The word for the premises in `facts` but for two, `a` and `b`, and the
    /// factors that place their rows in it (`row << shift` as `row * factor`, 0
    /// for one that is not recorded).
    fn around_two(self, facts: &[FactId], a: usize, b: usize) -> (u64, u64, u64) {
        let (mut word, mut at_a, mut at_b) = (self.base, 0, 0);
        for (i, &slot) in self.slots[..self.len].iter().enumerate() {
            let shift = row_shift(self.len, i);
            if slot == a {
                at_a = 1 << shift;
            } else if slot == b {
                at_b = 1 << shift;
            } else {
                word |= (facts[slot].row as u64) << shift;
            }
        }
        (word, at_a, at_b)
    }

    /// For a batch of rows of the scan binding fact slot `fact`: the word with every
    /// other premise's row in it, and the factor that places the scanned row in it
    /// (`row << shift` as `row * factor`; 0 when the scanned premise is not
    /// recorded, see `restore.rs`). (Out of line: inlined into the narrow loop's
    /// set-up, points_to and cspa took 0.4 % more instructions.)
    fn around(self, facts: &[FactId], fact: usize) -> Option<(u64, u64)> {
        let row = |i: usize| facts[self.slots[i]].row as u64;
        let (b, s) = (self.base, &self.slots);
        let at = |i: usize| 1 << row_shift(self.len, i);
        Some(match self.len {
            1 if s[0] == fact => (b, at(0)),
            1 => (b | row(0), 0),
            2 if s[0] == fact => (b | row(1) << row_shift(2, 1), at(0)),
            2 if s[1] == fact => (b | row(0), at(1)),
            2 => (b | row(1) << row_shift(2, 1) | row(0), 0),
            _ if s[0] == fact => (
                b | row(2) << row_shift(3, 2) | row(1) << row_shift(3, 1),
                at(0),
            ),
            _ if s[1] == fact => (b | row(2) << row_shift(3, 2) | row(0), at(1)),
            _ if s[2] == fact => (b | row(1) << row_shift(3, 1) | row(0), at(2)),
            _ => (self.of(facts), 0),
        })
    }
}

/// Whether [`emit`] looks each derivation up in its head relation first, and how
/// well that pays.
#[derive(Default)]
struct LookUps {
    on: bool,
    /// Look-ups made and derivations they dropped, since `on` was last decided,
    /// and how many make a window, at the end of which it is decided again.
    probes: u32,
    drops: u32,
    window: u32,
    /// The same before that, since the piece started, and what of them the last
    /// [`LookUps::report`] covered.
    seen: (u64, u64),
    reported: (u64, u64),
    /// In tests: the look-up decision forced by `FORCE_PROBE` ([`forced_probe`]),
    /// read on the thread that made the job (workers do not see its thread-local).
    forced: Option<bool>,
    /// Whether the piece's rule was trusted to look up (see [`Pending::reset`]).
    trusted: bool,
    /// Whether the head relation is past [`PROBE_ROWS`].
    large: bool,
    /// Whether nearly all the look-ups of the last window dropped their
    /// derivation (see [`Emitter::pairs_of`]).
    mostly: bool,
}

/// Rows up to which a head relation is looked up as derivations are emitted
/// whenever a quarter of the look-ups drop their derivation: its rows and dedup
/// table then mostly stay in cache. Past that, a look-up misses the cache and,
/// without the merge's prefetching, costs more than buffering the derivation
/// unless nearly every one drops it (see [`pays`]): a relation that large is looked
/// up for a rule only while its merges find that nearly all it derives changes
/// nothing.
pub(super) const PROBE_ROWS: u32 = 1 << 16;

/// Whether `drops` of `probes` look-ups dropping their derivation pay, in a head
/// relation past [`PROBE_ROWS`] (`large`) or not: a quarter in a small one (most
/// of a look-up's cost is the probe the merge would make anyway), seven eighths in
/// a large one (where that probe is prefetched, and a look-up's is not). (The
/// merge's trust in a rule takes a large head as a small one where look-ups are
/// shared out: see [`Engine::shares_looks`].)
fn pays(probes: u64, drops: u64, large: bool) -> bool {
    if large {
        nearly_all(drops, probes)
    } else {
        drops * 4 >= probes
    }
}

/// Whether `part` of `whole` is nearly all of it, seven eighths or more: the
/// measure of a look-up into a large head that pays ([`pays`]), of a relation
/// whose buffers are worth filtering, and of a merge-bound wave ([`merge_bound`]).
fn nearly_all(part: u64, whole: u64) -> bool {
    // (In 128 bits: a count may stand for "no wave yet", u64::MAX.)
    u128::from(part) * 8 >= u128::from(whole) * 7
}

/// Whether `head` is past [`PROBE_ROWS`]: look-ups into it miss the cache.
fn large(head: &Relation) -> bool {
    head.len() > PROBE_ROWS
}

/// Look-ups after which [`emit`] checks that they pay (see [`pays`]): when too few
/// of them dropped their derivation (most derivations are new facts), it stops
/// looking.
const PROBE_WINDOW: u32 = 1 << 10;
/// The first window of a piece whose rule's last look-ups did not pay: a piece of a
/// rule that makes new facts (there are many small ones, of fewer derivations than
/// a window) then stops looking up soon, while one whose look-ups do pay again
/// keeps them, and drops its derivations instead of buffering them.
const PROBE_TRIAL: u32 = 1 << 6;
/// Look-ups a merge must have seen to decide how the rule's next pieces look up:
/// fewer say little, and pieces that small cost little either way.
const LOOK_MIN: u64 = if cfg!(test) { 1 } else { 1 << 6 };

#[cfg(test)]
thread_local! {
    /// In tests: `Some(on)` makes [`emit`] always (or never) look derivations up, so
    /// that both paths can be compared.
    pub(crate) static FORCE_PROBE: std::cell::Cell<Option<bool>> =
        const { std::cell::Cell::new(None) };
}

#[cfg(test)]
thread_local! {
    /// In tests: `false` keeps relations from being marked (see
    /// [`Relation::mark`]), so that look-ups and merges read every record they
    /// find, and both paths can be compared.
    pub(crate) static MARKS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Whether relations are marked as they grow (always, but in tests that compare).
#[inline]
pub(crate) fn marking() -> bool {
    #[cfg(test)]
    return MARKS.with(std::cell::Cell::get);
    #[cfg(not(test))]
    true
}

#[cfg(test)]
thread_local! {
    /// In tests: `true` makes the rounds record premises all along, as if the
    /// least-height pass were not bound to re-select them, so that both paths can
    /// be compared.
    pub(crate) static FORCE_TRACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
thread_local! {
    /// In tests: `true` makes every stratum hand out its changed facts as they
    /// change, never best first (see [`Order`]), so that both paths can be compared.
    pub(crate) static FORCE_UNORDERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// In tests: how many times the least-height pass ran on this thread.
    pub(crate) static PASSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// In tests: how many strata stopped handing their facts out best first.
    pub(crate) static STOPPED_ORDER: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// In tests: `false` makes ordered strata compare every derivation of a fact
    /// stored with its record, as if no row were known handed out (see
    /// [`Handed`]), so that both paths can be compared.
    pub(crate) static HANDED_BITS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    /// In tests: derivations dropped on a fact handed out alone (by the merges,
    /// and by the look-ups and filters of pieces run on this thread).
    pub(crate) static HANDED_DROPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// In tests: this thread's settings and counters above, carried to the thread an
/// evaluation runs on and back (see [`Engine::run`]).
#[cfg(test)]
#[derive(Clone, Copy)]
struct TestSettings {
    probe: Option<bool>,
    track: bool,
    unordered: bool,
    passes: usize,
    stopped: usize,
    handed: bool,
    handed_drops: u64,
    batch: bool,
    pairs: bool,
    groups: bool,
    dense: bool,
    words: bool,
    filter: Option<bool>,
    marks: bool,
    elide: bool,
}

#[cfg(test)]
impl TestSettings {
    fn here() -> TestSettings {
        use std::cell::Cell;
        TestSettings {
            probe: FORCE_PROBE.with(Cell::get),
            track: FORCE_TRACK.with(Cell::get),
            unordered: FORCE_UNORDERED.with(Cell::get),
            passes: PASSES.with(Cell::get),
            stopped: STOPPED_ORDER.with(Cell::get),
            handed: HANDED_BITS.with(Cell::get),
            handed_drops: HANDED_DROPS.with(Cell::get),
            batch: BATCH_TAILS.with(Cell::get),
            pairs: PAIRED_SCANS.with(Cell::get),
            groups: GROUPED_SCANS.with(Cell::get),
            dense: DENSE_GROUPS.with(Cell::get),
            words: PREMISE_WORDS.with(Cell::get),
            filter: FORCE_FILTER.with(Cell::get),
            marks: MARKS.with(Cell::get),
            elide: crate::eval::restore::ELIDE.with(Cell::get),
        }
    }

    fn set(self) {
        FORCE_PROBE.with(|c| c.set(self.probe));
        FORCE_TRACK.with(|c| c.set(self.track));
        FORCE_UNORDERED.with(|c| c.set(self.unordered));
        PASSES.with(|c| c.set(self.passes));
        STOPPED_ORDER.with(|c| c.set(self.stopped));
        HANDED_BITS.with(|c| c.set(self.handed));
        HANDED_DROPS.with(|c| c.set(self.handed_drops));
        BATCH_TAILS.with(|c| c.set(self.batch));
        PAIRED_SCANS.with(|c| c.set(self.pairs));
        GROUPED_SCANS.with(|c| c.set(self.groups));
        DENSE_GROUPS.with(|c| c.set(self.dense));
        PREMISE_WORDS.with(|c| c.set(self.words));
        FORCE_FILTER.with(|c| c.set(self.filter));
        MARKS.with(|c| c.set(self.marks));
        crate::eval::restore::ELIDE.with(|c| c.set(self.elide));
    }
}

/// Whether tests keep every stratum from handing out its changed facts best first.
#[inline]
fn forced_unordered() -> bool {
    #[cfg(test)]
    if FORCE_UNORDERED.with(std::cell::Cell::get) {
        return true;
    }
    false
}

#[cfg(test)]
thread_local! {
    /// In tests: `false` makes runs hand every binding to the sink one at a time,
    /// as if no plan had a tail, so that both paths can be compared (read on the
    /// thread that runs the rounds).
    pub(crate) static BATCH_TAILS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

#[cfg(test)]
thread_local! {
    /// In tests: `false` makes runs visit the rows of the scan before a tail one at
    /// a time, as if no sink took them with their candidates ([`Sink::pairs`]), so
    /// that both paths can be compared.
    ///
    /// [`Sink::pairs`]: exec::Sink::pairs
    pub(crate) static PAIRED_SCANS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    /// In tests: calls of the pieces' `Sink::pairs` that took their rows, on this
    /// thread.
    pub(crate) static PAIR_CALLS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// In tests: `false` makes runs hand the scan two before a tail its rows one
    /// at a time to the scan after it, as if no sink took them in groups
    /// ([`Sink::groups`]), so that both paths can be compared.
    ///
    /// [`Sink::groups`]: exec::Sink::groups
    pub(crate) static GROUPED_SCANS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    /// In tests: calls of the pieces' `Sink::groups`, on this thread.
    pub(crate) static GROUP_CALLS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// In tests: `false` makes the rows taken in groups go through the general
    /// loop of a scan, never `Run::dense_groups`, so that both can be compared.
    pub(crate) static DENSE_GROUPS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    /// In tests: calls of `Run::dense_groups`, on this thread.
    pub(crate) static DENSE_CALLS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// In tests: calls of the pieces' `Emitter::passing_rows`, on this thread.
    pub(crate) static PASSING_CALLS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
thread_local! {
    /// In tests: `false` makes the rounds buffer every derivation's premises as a
    /// list, as if no plan's premises made a derivation word, so that both paths
    /// can be compared.
    pub(crate) static PREMISE_WORDS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Whether the path that thread-local test switch `$flag` turns off is on: in
/// tests, the switch's setting on this thread; outside them, always.
macro_rules! test_switch {
    ($flag:ident) => {{
        #[cfg(test)]
        let on = $flag.with(std::cell::Cell::get);
        #[cfg(not(test))]
        let on = true;
        on
    }};
}

/// Whether the rows an ordered stratum handed out decide (see [`Handed`]): while
/// no read fact has risen (`conf_raised`), and, in tests, unless switched off.
#[inline]
fn handed_bits_decide(conf_raised: bool) -> bool {
    !conf_raised && test_switch!(HANDED_BITS)
}

/// The rows handed out, by relation, where they decide (none elsewhere).
#[inline]
fn deciding_handed(order: Option<&Order>, conf_raised: bool) -> &[Handed] {
    order.map_or(&[], |o| deciding_rows(&o.handed_rows, conf_raised))
}

/// `rows`, an ordered stratum's rows handed out, where they decide (see
/// [`Handed`]); none elsewhere.
#[inline]
fn deciding_rows(rows: &[Handed], conf_raised: bool) -> &[Handed] {
    if handed_bits_decide(conf_raised) {
        rows
    } else {
        &[]
    }
}

/// Whether runs on this thread hand a plan's last scan to the sink in batches.
#[inline]
pub(super) fn batching() -> bool {
    test_switch!(BATCH_TAILS)
}

/// Whether pieces of runs on this thread take the rows of the scan before a tail
/// with their candidates, in one loop.
#[inline]
fn pairing() -> bool {
    test_switch!(PAIRED_SCANS)
}

/// Whether pieces of runs on this thread hand the rows of the scan two before a
/// tail to the sink in groups, each with the rows the scan after it finds.
#[inline]
fn grouping() -> bool {
    test_switch!(GROUPED_SCANS)
}

/// Whether runs on this thread may take rows in groups through
/// `Run::dense_groups`.
#[inline]
fn dense_grouping() -> bool {
    test_switch!(DENSE_GROUPS)
}

/// Whether tests force the rounds to record premises on this thread.
#[inline]
fn forced_track() -> bool {
    #[cfg(test)]
    if FORCE_TRACK.with(std::cell::Cell::get) {
        return true;
    }
    false
}

#[cfg(test)]
thread_local! {
    /// In tests: `Some(on)` makes every piece filter its buffer against its head
    /// relation before the merge (or never), whatever the merges before found.
    pub(crate) static FORCE_FILTER: std::cell::Cell<Option<bool>> =
        const { std::cell::Cell::new(None) };
}

/// The filter decision tests force on this thread, if any.
#[inline]
fn forced_filter() -> Option<bool> {
    #[cfg(test)]
    return FORCE_FILTER.with(std::cell::Cell::get);
    #[cfg(not(test))]
    None
}

/// The look-up decision tests force on this thread, if any.
#[inline]
fn forced_probe() -> Option<bool> {
    #[cfg(test)]
    return FORCE_PROBE.with(std::cell::Cell::get);
    #[cfg(not(test))]
    None
}

impl Pending {
    fn len(&self) -> usize {
        self.recs.len()
    }

    /// Empty, with fresh look-up statistics, for a new piece. It looks derivations
    /// up from the start, and decides whether that pays after [`PROBE_WINDOW`]
    /// look-ups if `trusted`, after [`PROBE_TRIAL`] if not.
    fn reset(&mut self, trusted: bool) {
        self.clear();
        self.derivations = 0;
        self.used = 0;
        let forced = forced_probe();
        self.look = LookUps {
            on: forced.unwrap_or(true),
            window: if trusted { PROBE_WINDOW } else { PROBE_TRIAL },
            forced,
            trusted,
            // (Until a window says, a trusted rule's look-ups drop nearly all.
            // Tests that force look-ups on take the loop for that everywhere.)
            mostly: trusted || forced == Some(true),
            ..LookUps::default()
        };
    }

    /// Bytes the buffer has allocated.
    fn bytes(&self) -> usize {
        self.cells.capacity() * 8
            + self.recs.capacity() * std::mem::size_of::<Rec>()
            + self.confs.capacity() * 8
            + self.starts.capacity() * 4
            + self.premises.capacity() * std::mem::size_of::<FactId>()
            + self.words.capacity() * 8
    }

    /// The buffer as a finished piece leaves it for the next ones: as it is while
    /// small or mostly used, given back to the allocator when it is large and its
    /// piece used less than a quarter of it. (A wave's buffers hold up to [`WAVE`] ×
    /// [`FLUSH`] derivations. While rounds derive that much, the next pieces reuse
    /// them as they are; once rounds derive less, kept, they would stay that large
    /// for the rest of the evaluation, when the relations, which only grow, are
    /// largest.)
    fn kept(self) -> Pending {
        if self.bytes() > SPARE_BYTES && self.used * 4 < self.recs.capacity() {
            Pending::default()
        } else {
            self
        }
    }

    fn clear(&mut self) {
        self.cells.clear();
        self.recs.clear();
        self.confs.clear();
        self.starts.clear();
        self.premises.clear();
        self.words.clear();
    }

    /// Buffered derivation `k`: its head cells (`arity` of them) and its record,
    /// made by rule `rule` (its height 0 without provenance).
    #[inline(always)]
    fn derivation(&self, k: usize, arity: usize, rule: RuleId) -> (&[u64], Meta) {
        let cells = &self.cells[k * arity..k * arity + arity];
        let meta = Meta {
            conf: self.conf(k),
            height: self.recs[k].height,
            rule,
        };
        (cells, meta)
    }

    /// The confidence of buffered derivation `k`.
    #[inline(always)]
    fn conf(&self, k: usize) -> f64 {
        if self.confs.is_empty() {
            f64::from_bits(self.shared)
        } else {
            self.confs[k]
        }
    }

    /// Buffer a derivation's record (its cells, and any premises, are the
    /// caller's): 8 bytes, and 8 more for its confidence once the buffered
    /// derivations' confidences differ.
    #[inline(always)]
    fn push_rec(&mut self, tag: u32, height: u32, conf: f64) {
        let bits = conf.to_bits();
        if self.recs.is_empty() {
            self.shared = bits;
        }
        if bits != self.shared || !self.confs.is_empty() {
            self.own_conf(conf);
        }
        self.recs.push(Rec { tag, height });
    }

    /// Record the confidence of the derivation about to be buffered, giving
    /// those buffered before it theirs (the one they share) if they have none.
    #[inline]
    fn own_conf(&mut self, conf: f64) {
        if self.confs.is_empty() {
            self.confs
                .resize(self.recs.len(), f64::from_bits(self.shared));
        }
        self.confs.push(conf);
    }

    /// Drop the buffered derivations of `plan` that merging into `head` would not
    /// change (their fact is there with a record at least as good), keeping the
    /// others in order. Merging what is left then does what merging everything
    /// would: a record only ever gives way to a better one, so a derivation no
    /// better than the record now is no better than the one at its merge either.
    /// Reads `head` only, so the pieces of a wave filter on their own threads; the
    /// merge, on one, then takes only what is left.
    fn filter(&mut self, plan: &Plan, head: &Relation, provenance: bool, handed: &Handed) {
        // A narrow head is read through its view, at its arity: the look-up then
        // takes the narrow loop's few instructions, not the general row compare.
        match (
            head.narrow().map(|v| v.with_handed(&handed.bits)),
            plan.head.len(),
        ) {
            (Some(to), 1) => self.filter_by(plan, head, provenance, narrow_meta::<1>(to)),
            (Some(to), 2) => self.filter_by(plan, head, provenance, narrow_meta::<2>(to)),
            (Some(to), 3) => self.filter_by(plan, head, provenance, narrow_meta::<3>(to)),
            (Some(to), 4) => self.filter_by(plan, head, provenance, narrow_meta::<4>(to)),
            _ => self.filter_by(plan, head, provenance, |cells: &[u64], tag| {
                head.find_tagged(cells, tag)
                    .map(|row| (!handed.get(row)).then(|| head.meta(row)))
            }),
        }
    }

    /// [`Pending::filter`], finding a buffered derivation's fact's record with `find`.
    #[inline(always)]
    fn filter_by(
        &mut self,
        plan: &Plan,
        head: &Relation,
        provenance: bool,
        find: impl Fn(&[u64], u32) -> Option<Option<Meta>>,
    ) {
        let n = self.len();
        let arity = plan.head.len();
        let (words, lists) = (!self.words.is_empty(), !self.starts.is_empty());
        // Prefetching as the merge does.
        head.prefetch_first_probes(self.recs.iter().map(|r| r.tag));
        let (mut w, mut at) = (0, 0);
        for k in 0..n {
            head.prefetch_probes(|i| self.recs.get(i).map(|r| r.tag), k);
            let (cells, new) = self.derivation(k, arity, plan.rule);
            let dropped =
                find(cells, self.recs[k].tag).is_some_and(|old| unchanged(old, || new, provenance));
            if dropped {
                continue;
            }
            if w < k {
                self.cells
                    .copy_within(k * arity..k * arity + arity, w * arity);
                self.recs[w] = self.recs[k];
                if let Some(&c) = self.confs.get(k) {
                    self.confs[w] = c;
                }
                if words {
                    self.words[w] = self.words[k];
                }
            }
            if lists {
                // (Entries up to `w` are rewritten; `k`'s and `k + 1`'s are read
                // first, and `w <= k`.)
                let (a, b) = (self.starts[k] as usize, self.starts[k + 1] as usize);
                self.premises.copy_within(a..b, at);
                self.starts[w] = at as u32;
                at += b - a;
            }
            w += 1;
        }
        self.filtered += n - w;
        self.cells.truncate(w * arity);
        self.recs.truncate(w);
        self.confs.truncate(w);
        if words {
            self.words.truncate(w);
        }
        if lists {
            self.starts.truncate(w + 1);
            self.starts[w] = at as u32;
            self.premises.truncate(at);
        }
    }
}

/// The record of the fact of a narrow relation (`to`, of arity `N`) with these
/// cells and digest, if it is there (`Some(None)` for one handed out, see
/// [`Narrow::find_unhanded`]).
#[inline(always)]
fn narrow_meta<const N: usize>(
    to: Narrow<'_>,
) -> impl Fn(&[u64], u32) -> Option<Option<Meta>> + '_ {
    move |cells, tag| {
        let cells: &[u64; N] = cells.try_into().expect("a derivation has its head's arity");
        if to.conf_col {
            to.find_unhanded(cells, tag)
        } else {
            let (height, rule) = to.find_record(cells, tag)?;
            Some(Some(Meta {
                conf: to.conf,
                height,
                rule,
            }))
        }
    }
}

/// Derivations a merge must take, those its pieces filtered out included, for the
/// next wave's pieces of its relation to filter theirs (see [`Pending::filter`]).
const FILTER_MIN: usize = if cfg!(test) { 1 } else { 1 << 10 };

/// Rows up to which a head relation's buffers are filtered: past that, its table
/// is out of every cache, and the merge's second probes of what is left can cost
/// what the filter saves.
const FILTER_ROWS: u32 = 1 << 20;

/// Delta rows per piece of a plan's run: the unit that worker threads share out
/// (a handful in unit tests, so that plans split everywhere).
const PIECE: usize = if cfg!(test) { 3 } else { 1 << 8 };
/// Bytes of its derivation buffers a finished piece leaves for the next ones
/// however little it used them (see [`Pending::kept`]). Every piece of a wave
/// leaves its buffers, and those of the last waves are still held when the
/// evaluation ends, with the relations at their largest: up to [`WAVE`] × this.
/// 8 KiB: at 32 KiB, those buffers were a third of a megabyte of the small
/// analyses' peaks (points-to, CSPA) and a tenth of their page faults; a chain's
/// rounds, which use their buffers whole, keep them whatever their size.
const SPARE_BYTES: usize = 1 << 13;
/// Pieces per wave: what runs between two merges.
const WAVE: usize = if cfg!(test) { 3 } else { 32 };
/// Derivations a wave must be expected to make ([`Engine::expected`]) to be shared
/// out among worker threads: below that, waking them costs more than they save.
/// (Which waves run on which threads never changes a result.)
const SHARE_MIN: u64 = if cfg!(test) { 1 } else { 1 << 13 };

/// Whether a wave expected to make `expected` derivations ([`Engine::expected`]),
/// after one that made `derivations`, `merged` of which reached the merge, is
/// shared out among worker threads: when it is expected to make enough
/// ([`SHARE_MIN`]) and the wave before was not bound by its merge (see
/// [`merge_bound`]). In tests every wave that may be is shared, so that both paths
/// are taken.
fn shared(expected: u64, derivations: u64, merged: u64) -> bool {
    expected >= SHARE_MIN && (cfg!(test) || !merge_bound(derivations, merged))
}

/// Derivations a piece of `rows` delta rows that has made `made` so far is
/// expected to make in its next run, its rule's finished pieces having made
/// `rate.0` over `rate.1` rows: [`FLUSH`] (as many as a run makes before it
/// pauses) once it has paused; `prior` before any piece of its rule has finished;
/// otherwise its rows at its rule's rate, up to [`FLUSH`].
fn piece_expected(made: u64, rows: usize, rate: (u64, u64), prior: u64) -> u64 {
    let flush = FLUSH as u64;
    if made > 0 {
        return flush;
    }
    if rate.1 == 0 {
        return prior.min(flush);
    }
    (rows as u64)
        .saturating_mul(rate.0)
        .div_ceil(rate.1)
        .min(flush)
}

/// A rule's rate (derivations, delta rows) after a piece of `rows` rows that made
/// `made` finished: each sum loses an eighth first, so that the rate follows the
/// rule's latest pieces as its rounds grow or shrink.
fn decayed((d, r): (u64, u64), made: u64, rows: usize) -> (u64, u64) {
    (
        (d - d / 8).saturating_add(made),
        (r - r / 8).saturating_add(rows as u64),
    )
}

/// Whether a wave whose `merged` of `derivations` reached the merge is bound by
/// that merge, on one thread: when the pieces dropped less than an eighth of what
/// they made (a closure's waves, whose derivations each add a fact or may). A
/// second thread then only moves the buffers between caches: the closures took
/// 1.05–1.15× one thread's time on two.
fn merge_bound(derivations: u64, merged: u64) -> bool {
    nearly_all(merged, derivations)
}

/// What one piece of a plan's run reads.
struct Reads<'r> {
    rels: &'r [Relation],
    /// Per relation: whether it holds input facts only ([`Engine::inputs_only`]).
    inputs_only: &'r [bool],
    old: &'r [u32],
    full: &'r [u32],
    delta: &'r [u32],
    syms: Syms<'r>,
    provenance: bool,
    /// Whether derivations record their premises (see [`Pending::record`]).
    record: bool,
    /// Whether a plan's last scan hands its rows to the sink in batches.
    batch: bool,
    /// Whether the sink takes the rows of the scan before a tail with their
    /// candidates ([`Emitter::pairs_of`]).
    pairs: bool,
    /// Whether it also takes the rows of the scan before that in groups
    /// ([`Emitter::groups_run`]).
    groups: bool,
    /// Whether such groups may be taken by `Run::dense_groups`'s loop for dense
    /// look-ups (tests turn it off).
    dense: bool,
    deadline: Option<Instant>,
    /// Whether the plan's derivations are buffered as derivation words.
    word: Option<Words>,
    /// Whether the piece filters its buffer against its head relation after it
    /// runs (see [`Pending::filter`]).
    filter: bool,
    /// The head relation's rows handed out, where they decide (see [`Handed`]).
    handed: &'r Handed,
}

/// One piece of a plan's run: the plan over a range of its delta, paused whenever
/// its buffer is full.
struct Piece {
    /// Index of the plan in the run's plan list.
    plan: usize,
    /// Positions in the plan's delta list.
    rows: std::ops::Range<usize>,
    frame: Frame,
    cursor: Cursor,
    pending: Pending,
    /// Derivations dropped by failed arithmetic since the last merge.
    faults: Faults,
    /// Why the last run stopped (`None`: the piece is done).
    stop: Option<Stop>,
    /// Derivations its runs have made so far.
    made: u64,
}

impl Piece {
    /// Piece `rows` of plan `i`, with a buffer from `spare` and a frame from `frames`
    /// if there are.
    fn new(
        i: usize,
        plan: &Plan,
        rows: std::ops::Range<usize>,
        (spare, frames): (&mut Vec<Pending>, &mut Vec<Frame>),
        trusted: bool,
    ) -> Piece {
        let mut pending = spare.pop().unwrap_or_default();
        pending.reset(trusted);
        let frame = match frames.pop() {
            Some(mut f) => {
                f.refit(plan);
                f
            }
            None => Frame::new(plan),
        };
        Piece {
            plan: i,
            rows,
            frame,
            cursor: Cursor::default(),
            pending,
            faults: Faults::default(),
            stop: None,
            made: 0,
        }
    }

    /// Cut a paused piece's delta rows that it has not started on in two: it keeps
    /// the first half, the second is returned. `None` when nothing is left to cut
    /// (or the plan has no delta rows).
    fn split(&mut self) -> Option<std::ops::Range<usize>> {
        let at = self.cursor.first()?;
        let left = self.rows.len().checked_sub(at + 1).filter(|&n| n > 0)?;
        let mid = self.rows.start + at + 1 + left / 2;
        let tail = mid..self.rows.end;
        self.rows.end = mid;
        Some(tail)
    }

    /// Join until done, out of time, or the buffer is full. Reads nothing that a
    /// merge writes, so pieces of one wave can run on several threads.
    fn run(&mut self, plan: &Plan, reads: &Reads<'_>) {
        let head = &reads.rels[plan.head_rel as usize];
        let pending = &mut self.pending;
        pending.record = reads.record;
        pending.word = reads.word.filter(|_| reads.record);
        // Into a large head, only a trusted rule looks up at all.
        let look = &mut pending.look;
        look.large = large(head);
        look.on = look
            .forced
            .unwrap_or(look.on && (!look.large || look.trusted));
        let mut ctx = Ctx::new(
            reads.rels,
            reads.old,
            reads.full,
            reads.delta,
            reads.syms,
            reads.provenance,
        );
        ctx.deadline = reads.deadline;
        ctx.dense = reads.dense;
        // Runs only read: the narrow views hold until the next merge.
        let views = plan.tail.as_ref().and_then(|t| {
            let r = t.rel as usize;
            let from = reads.rels[r].narrow()?.inputs_only(reads.inputs_only[r]);
            Some((from, head.narrow()?.with_handed(&reads.handed.bits)))
        });
        let (narrow, weighted) = match views {
            Some((from, to)) if from.conf_col || to.conf_col => (None, views),
            _ => (views, None),
        };
        let mut sink = Emitter {
            plan,
            head,
            batch: reads.batch,
            pairs: reads.pairs,
            groups: reads.pairs && reads.groups,
            narrow,
            weighted,
            syms: ctx.syms,
            provenance: reads.provenance,
            inputs_only: reads.inputs_only,
            pending,
            faults: Faults::default(),
        };
        self.stop = exec::run_plan(&ctx, plan, &mut self.frame, &mut self.cursor, &mut sink);
        let mut faults = ctx.faults.get();
        faults.merge(sink.faults);
        // (Derivations looked up as they were made need no second look.)
        if reads.filter && !self.pending.look.on {
            self.pending
                .filter(plan, head, reads.provenance, reads.handed);
        }
        self.faults.merge(faults);
    }
}

/// The sink of a piece's run: buffers each derivation (see [`emit`]), taking a
/// plan's last scan a batch of rows at a time when the plan has a tail.
struct Emitter<'a> {
    plan: &'a Plan,
    head: &'a Relation,
    /// Whether it takes a plan's last scan in batches.
    batch: bool,
    /// Whether it takes the rows of the scan before a tail with their candidates.
    pairs: bool,
    /// Whether it takes the rows of the scan before that in groups.
    groups: bool,
    /// The plan's last scanned relation and its head relation, when both are
    /// narrow (see [`Emitter::narrow_rows`]) and neither is a weighted view.
    narrow: Option<(Narrow<'a>, Narrow<'a>)>,
    /// The same when both are narrow and one or both are weighted views.
    weighted: Option<(Narrow<'a>, Narrow<'a>)>,
    syms: Syms<'a>,
    provenance: bool,
    /// Per relation: whether it holds input facts only ([`Engine::inputs_only`]).
    inputs_only: &'a [bool],
    pending: &'a mut Pending,
    /// Derivations whose head arithmetic failed.
    faults: Faults,
}

impl exec::Sink for Emitter<'_> {
    #[inline]
    fn binding(&mut self, frame: &mut Frame, conf: f64, height: u32) -> bool {
        let (plan, head, out) = (self.plan, self.head, &mut *self.pending);
        if let Err(f) = emit(
            plan,
            frame,
            conf,
            height,
            self.provenance,
            self.syms,
            head,
            out,
        ) {
            self.faults.add(f);
        }
        // Counted before look-ups drop any, so that where a piece pauses (and so
        // the order of merges) does not depend on them.
        out.derivations >= FLUSH as u64
    }

    fn batches(&self) -> bool {
        self.batch
    }

    fn pairs(
        &mut self,
        frame: &mut Frame,
        scan: &TailScan<'_>,
        pair: &PairScan<'_>,
        rows: &[u32],
        start: usize,
        conf: f64,
        height: u32,
    ) -> Option<(Option<(usize, usize)>, u64)> {
        if !self.pairs {
            return None;
        }
        // Narrow relations, any of them a weighted view (`W`: a loop of its own, as
        // in `narrow_rows`).
        let ((from, to), weighted) = match (self.narrow, self.weighted) {
            (Some(views), _) => (views, false),
            (None, Some(views)) => (views, true),
            (None, None) => return None,
        };
        let r = pair.pair.rel as usize;
        let before = pair.rel.narrow()?.inputs_only(self.inputs_only[r]);
        let views = (before, from, to);
        let args = (frame, scan, pair, rows, start, conf, height);
        // Head cells in an array of their number, as in `narrow_rows`.
        // A tail whose candidates are the same for every row (`F`) has a loop of
        // its own, so that the loop that looks them up per row stays as it is.
        let w = weighted || before.conf_col;
        // A head of two cells kept in a grid (see `dropped_prefix`) has loops of
        // its own (`G`), so that the others' stay as they are.
        let grid = to.grid.is_some();
        let taken = match (scan.tail.head.len(), w, pair.fixed.is_some()) {
            (2, false, false) if grid => Some(self.pairs_of::<2, false, false, true>(views, args)),
            (2, false, true) if grid => Some(self.pairs_of::<2, false, true, true>(views, args)),
            (1, false, false) => Some(self.pairs_of::<1, false, false, false>(views, args)),
            (2, false, false) => Some(self.pairs_of::<2, false, false, false>(views, args)),
            (3, false, false) => Some(self.pairs_of::<3, false, false, false>(views, args)),
            (4, false, false) => Some(self.pairs_of::<4, false, false, false>(views, args)),
            (1, true, false) => Some(self.pairs_of::<1, true, false, false>(views, args)),
            (2, true, false) => Some(self.pairs_of::<2, true, false, false>(views, args)),
            (3, true, false) => Some(self.pairs_of::<3, true, false, false>(views, args)),
            (4, true, false) => Some(self.pairs_of::<4, true, false, false>(views, args)),
            (1, false, true) => Some(self.pairs_of::<1, false, true, false>(views, args)),
            (2, false, true) => Some(self.pairs_of::<2, false, true, false>(views, args)),
            (3, false, true) => Some(self.pairs_of::<3, false, true, false>(views, args)),
            (4, false, true) => Some(self.pairs_of::<4, false, true, false>(views, args)),
            (1, true, true) => Some(self.pairs_of::<1, true, true, false>(views, args)),
            (2, true, true) => Some(self.pairs_of::<2, true, true, false>(views, args)),
            (3, true, true) => Some(self.pairs_of::<3, true, true, false>(views, args)),
            (4, true, true) => Some(self.pairs_of::<4, true, true, false>(views, args)),
            _ => None,
        };
        #[cfg(test)]
        if taken.is_some() {
            PAIR_CALLS.with(|c| c.set(c.get() + 1));
        }
        taken
    }

    fn takes_groups(&self, scan: &TailScan<'_>, pair: &PairScan<'_>) -> bool {
        // Unweighted narrow views only: the weighted pair loops stay per row.
        self.groups
            && self.narrow.is_some()
            && (1..=4).contains(&scan.tail.head.len())
            && pair.rel.narrow().is_some_and(|before| !before.conf_col)
    }

    fn groups(
        &mut self,
        frame: &mut Frame,
        scan: &TailScan<'_>,
        pair: &PairScan<'_>,
        outer: &exec::Outer<'_>,
        groups: &[exec::Group<'_>],
    ) -> (Option<(usize, usize, usize)>, u64) {
        let (from, to) = self
            .narrow
            .expect("a sink that takes groups has narrow views");
        let r = pair.pair.rel as usize;
        let before = pair
            .rel
            .narrow()
            .expect("a sink that takes groups has a narrow pair scan")
            .inputs_only(self.inputs_only[r]);
        let views = (before, from, to);
        let args = (frame, scan, pair, outer, groups);
        #[cfg(test)]
        GROUP_CALLS.with(|c| c.set(c.get() + 1));
        // As in `pairs`: head cells in an array of their number, a tail whose
        // candidates each group looked up once (`F`) and a head kept in a grid
        // (`G`) in loops of their own.
        let grid = to.grid.is_some();
        match (scan.tail.head.len(), pair.pair.key.is_none()) {
            (2, false) if grid => self.groups_run::<2, false, true>(views, args),
            (2, true) if grid => self.groups_run::<2, true, true>(views, args),
            (1, false) => self.groups_run::<1, false, false>(views, args),
            (2, false) => self.groups_run::<2, false, false>(views, args),
            (3, false) => self.groups_run::<3, false, false>(views, args),
            (4, false) => self.groups_run::<4, false, false>(views, args),
            (1, true) => self.groups_run::<1, true, false>(views, args),
            (2, true) => self.groups_run::<2, true, false>(views, args),
            (3, true) => self.groups_run::<3, true, false>(views, args),
            (4, true) => self.groups_run::<4, true, false>(views, args),
            _ => unreachable!("a sink takes groups for heads of one to four cells"),
        }
    }

    /// [`emit`] for each row that passes the tail's checks, its head cells read
    /// straight off the row.
    fn rows(
        &mut self,
        frame: &mut Frame,
        scan: &TailScan<'_>,
        rows: &[u32],
        conf: f64,
        height: u32,
    ) -> Option<usize> {
        // A tail with checks or comparisons: the rows that pass them.
        if let Some((from, to)) = self.narrow
            && !scan.all_pass()
        {
            let grid = to.grid.is_some();
            match scan.tail.head.len() {
                1 => {
                    return self
                        .passing_rows::<1, false>(frame, scan, from, to, rows, conf, height);
                }
                2 if grid => {
                    return self.passing_rows::<2, true>(frame, scan, from, to, rows, conf, height);
                }
                2 => {
                    return self
                        .passing_rows::<2, false>(frame, scan, from, to, rows, conf, height);
                }
                3 => {
                    return self
                        .passing_rows::<3, false>(frame, scan, from, to, rows, conf, height);
                }
                4 => {
                    return self
                        .passing_rows::<4, false>(frame, scan, from, to, rows, conf, height);
                }
                _ => {}
            }
        }
        if let Some((from, to)) = self.narrow
            && scan.all_pass()
        {
            // Head cells in an array of their number: loops over them unroll.
            match scan.tail.head.len() {
                1 => {
                    return self
                        .narrow_rows::<1, false, false>(frame, scan, from, to, rows, conf, height);
                }
                2 if to.grid.is_some() => {
                    return self
                        .narrow_rows::<2, false, true>(frame, scan, from, to, rows, conf, height);
                }
                2 => {
                    return self
                        .narrow_rows::<2, false, false>(frame, scan, from, to, rows, conf, height);
                }
                3 => {
                    return self
                        .narrow_rows::<3, false, false>(frame, scan, from, to, rows, conf, height);
                }
                4 => {
                    return self
                        .narrow_rows::<4, false, false>(frame, scan, from, to, rows, conf, height);
                }
                _ => {}
            }
        }
        // Rows that hold their own confidences take a loop of their own, so that the
        // others' stays as it is.
        if let Some((from, to)) = self.weighted
            && scan.all_pass()
            && let Some(pause) = self.weighted_rows(frame, scan, from, to, rows, conf, height)
        {
            return pause;
        }
        let (plan, head, out) = (self.plan, self.head, &mut *self.pending);
        let provenance = self.provenance;
        let n = scan.tail.head.len();
        let mut cells = [0u64; TAIL_CELLS];
        let check = !scan.all_pass();
        for (k, &row) in rows.iter().enumerate() {
            let rc = scan.rel.row(row);
            if check && !scan.passes(rc, &frame.slots, scan.syms) {
                continue;
            }
            let tag = scan.head(rc, &frame.slots, |i, v| cells[i] = v);
            let (c, h) = scan.premise(frame, row, conf, height);
            let new = Meta {
                conf: plan.confidence * c,
                height: if provenance { h.saturating_add(1) } else { 0 },
                rule: plan.rule,
            };
            out.derivations += 1;
            if !out.look.drops(head, &cells[..n], tag, new, provenance) {
                out.cells.extend_from_slice(&cells[..n]);
                out.keep(plan, frame, tag, new, provenance);
            }
            if out.derivations >= FLUSH as u64 {
                return Some(k);
            }
        }
        None
    }
}

/// Whether running `plan` can make new symbols (`cat`, `substr`, `to_string`).
pub(super) fn makes_symbols(plan: &Plan) -> bool {
    fn expr(e: &CExpr) -> bool {
        match e {
            CExpr::Slot(_) | CExpr::Const(_) | CExpr::Never => false,
            CExpr::Bin(_, _, a, b) => expr(a) || expr(b),
            CExpr::Neg(_, a) => expr(a),
            CExpr::Call(f, args, _) => {
                matches!(f, Functor::Cat | Functor::Substr | Functor::ToString)
                    || args.iter().any(|(a, _)| expr(a))
            }
        }
    }
    fn any_step(steps: &[Step]) -> bool {
        steps.iter().any(|step| match step {
            Step::Scan { .. } | Step::Absent { .. } => false,
            Step::Filter { left, right, .. } => expr(left) || expr(right),
            Step::Test { args, .. } => args.iter().any(expr),
            Step::Assign { expr: e, .. } => expr(e),
            Step::Aggregate(agg) => {
                agg.target.as_ref().is_some_and(|(e, _)| expr(e)) || any_step(&agg.body)
            }
        })
    }
    plan.head.iter().any(expr) || any_step(&plan.steps)
}

/// Most worker threads an evaluation uses, whatever it asks for (a wave has at most
/// [`WAVE`] pieces anyway).
const MAX_THREADS: usize = 256;

/// The stack of an evaluation's threads: the whole evaluation may run on them (see
/// [`Engine::run`]), and a rule's literals nest a call each (up to 1,024 of them,
/// a few KiB each in a build without optimisation). Only what is used is resident.
const POOL_STACK: usize = 32 << 20;

/// Literals of a rule body past which the evaluation runs on a thread of its own
/// stack even on one thread (see [`Engine::run`]), rather than on the caller's,
/// whose stack may be small.
const SHALLOW_BODY: usize = 64;

/// The worker threads for `threads` (0: one per core, at most [`MAX_THREADS`]);
/// `None` for one thread.
fn pool(threads: usize) -> Option<std::sync::Arc<rayon::ThreadPool>> {
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n.min(MAX_THREADS),
    };
    if threads <= 1 {
        return None;
    }
    pool_of(threads)
}

/// A pool of `threads` threads (one included). Pools are made once per thread count
/// and shared by every evaluation.
fn pool_of(threads: usize) -> Option<std::sync::Arc<rayon::ThreadPool>> {
    use std::sync::{Arc, Mutex};
    static POOLS: Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == threads) {
        return Some(Arc::clone(p));
    }
    // No pool (the system refused threads): one thread gives the same results.
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("prooflog-eval-{i}"))
            .stack_size(POOL_STACK)
            .build()
            .ok()?,
    );
    pools.push((threads, Arc::clone(&p)));
    Some(p)
}

/// `f` on a thread of `pool`. (In tests, the calling thread's settings go with it,
/// and its counters come back.)
pub(super) fn install<R: Send>(pool: &rayon::ThreadPool, f: impl FnOnce() -> R + Send) -> R {
    #[cfg(test)]
    let ours = TestSettings::here();
    let (done, _settings) = pool.install(|| {
        #[cfg(test)]
        let theirs = TestSettings::here();
        #[cfg(test)]
        ours.set();
        let done = f();
        #[cfg(test)]
        let ours = TestSettings::here();
        #[cfg(test)]
        theirs.set();
        #[cfg(not(test))]
        let ours = ();
        (done, ours)
    });
    #[cfg(test)]
    _settings.set();
    done
}

/// Whether `program` has a rule of more than [`SHALLOW_BODY`] literals, which its
/// evaluation nests a call each for: it then runs on a thread of [`deep_pool`].
pub(super) fn deep(program: &Program) -> bool {
    program
        .rules
        .iter()
        .any(|rule| nesting(&rule.body) > SHALLOW_BODY)
}

/// A thread whose stack ([`POOL_STACK`]) holds the nesting of any rule the checker
/// lets through, for a [`deep`] program evaluated on one thread (`None` if the
/// system refuses threads: the caller's then).
pub(super) fn deep_pool() -> Option<std::sync::Arc<rayon::ThreadPool>> {
    pool_of(1)
}

/// How deep evaluating a rule body nests: a call per literal, and per literal of an
/// aggregate's body.
fn nesting(body: &[Literal]) -> usize {
    body.iter()
        .map(|l| match l {
            Literal::Aggregate { body, .. } => 1 + body.len(),
            _ => 1,
        })
        .sum()
}

/// Whether an evaluation runs on a thread of the worker pool it shares its waves
/// with (see [`Engine::run`]).
static IN_POOL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// An evaluation's turn to run on a pool's thread, until dropped.
struct PoolTurn;

impl PoolTurn {
    /// The turn, unless another evaluation has it.
    fn take() -> Option<PoolTurn> {
        use std::sync::atomic::Ordering;
        IN_POOL
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| PoolTurn)
    }
}

impl Drop for PoolTurn {
    fn drop(&mut self) {
        IN_POOL.store(false, std::sync::atomic::Ordering::Release);
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
    /// Whether a relation of the current stratum is a layer over a shared base (the
    /// least-height pass then does not run: the rounds' records stay).
    layered: bool,
    /// When the current stratum hands out its changed facts best first (see
    /// [`Order`]).
    order: Option<Order>,
    /// Per relation: whether it belongs to the stratum being evaluated.
    in_stratum: Vec<bool>,
    /// Per relation: whether no rule derives it, so that it holds input facts only
    /// (each of height 0).
    inputs_only: Vec<bool>,
    /// Per relation: the rows of its full (`full_len`) and old (`old_len`) versions in
    /// the current round. Only the current stratum's entries change within it.
    full_len: Vec<u32>,
    old_len: Vec<u32>,
    /// Per relation: this round's delta rows.
    cur_delta: Vec<Vec<u32>>,
    /// When evaluation must stop (the budget's deadline or timeout).
    deadline: Option<Instant>,
    /// Bytes of storage counted against `max_memory`, and each relation's share.
    mem: usize,
    rel_mem: Vec<usize>,
    /// Per rule: facts it derived (for naming the rule that grew fastest).
    rule_new: Vec<u64>,
    /// Per rule: derivations dropped by failed arithmetic.
    rule_faults: Vec<Faults>,
    /// Facts in all relations.
    fact_count: usize,
    /// Derivation buffers of finished pieces, kept for the next ones (a chain-like
    /// program runs thousands of small rounds: fresh buffers showed in profiles).
    spare: Vec<Pending>,
    /// Join frames of finished pieces, kept for the next ones.
    frames: Vec<Frame>,
    /// Lists `run_pieces` fills anew at every call, kept for their storage.
    scratch: Scratch,
    /// Worker threads, when evaluation uses more than one.
    pool: Option<std::sync::Arc<rayon::ThreadPool>>,
    /// Per rule: derivations its finished pieces made and the delta rows they
    /// covered, each sum decayed by an eighth at every piece, so that their ratio
    /// follows the rule's latest rounds (see [`Engine::expected`]).
    rates: Vec<(u64, u64)>,
    /// Derivations made by the last wave of pieces.
    last_wave: u64,
    /// Of those, what a piece made on average ([`FLUSH`] before the first wave).
    last_piece: u64,
    /// Of those, the derivations the merge took (not dropped in the pieces).
    last_merged: u64,
    /// Per relation: whether its last merge found nearly every derivation
    /// changing nothing (and the relation within [`FILTER_ROWS`]), so that the
    /// next wave's pieces filter their buffers.
    filters: Vec<bool>,
    /// Per relation: whether its last merge found half of its derivations' facts
    /// or more already there, so that the next merge into a large grid fetches
    /// the rows its slots name ahead too (see [`merge_rows`]).
    finds: Vec<bool>,
    /// Bytes of the derivation buffers (a wave's and the spare ones), counted
    /// against the memory limit with the relations.
    buffer_mem: usize,
    /// Per rule: whether its next pieces look their derivations up in the head
    /// relation for a whole window before deciding whether that pays, or only for
    /// a trial (see [`PROBE_TRIAL`]): as its last merge found the look-ups paid.
    looks: Vec<bool>,
}

/// Lists the rounds fill anew each time, kept for their storage.
#[derive(Default)]
struct Scratch {
    /// A round's work: plan and delta positions of each piece.
    work: Vec<(usize, std::ops::Range<usize>)>,
    /// Unfinished pieces, and the list the next wave's are gathered into.
    queue: Vec<Piece>,
    next: Vec<Piece>,
    /// Per plan of a wave: how it buffers derivation words.
    words: Vec<Option<Words>>,
}

/// Where an incremental stratum evaluation starts: the rows each relation had before
/// the new facts, and the rows that appeared or improved since.
pub(crate) struct Seed {
    pub base_len: Vec<u32>,
    pub changed: Vec<Vec<u32>>,
}

/// A human size: `512 MiB`.
pub(crate) fn bytes_text(n: usize) -> String {
    const UNITS: [&str; 4] = ["bytes", "KiB", "MiB", "GiB"];
    let mut x = n as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} bytes")
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
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
        let budget = &options.budget;
        let started = Instant::now();
        let deadline = match (budget.deadline, budget.timeout) {
            (Some(d), Some(t)) => Some(d.min(started + t)),
            (d, t) => d.or_else(|| t.map(|t| started + t)),
        };
        let full_len: Vec<u32> = rels.iter().map(|r| r.len()).collect();
        let fact_count = full_len.iter().map(|&l| l as usize).sum();
        let mut inputs_only: Vec<bool> = (0..n).map(|r| r < program.relations.len()).collect();
        for rule in &program.rules {
            inputs_only[rule.head.rel as usize] = false;
        }

        let mut engine = Engine {
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
            layered: false,
            order: None,
            in_stratum: vec![false; n],
            inputs_only,
            old_len: full_len.clone(),
            full_len,
            cur_delta: vec![Vec::new(); n],
            deadline,
            mem: 0,
            rel_mem: vec![0; n],
            rule_new: vec![0; program.rules.len()],
            rule_faults: vec![Faults::default(); program.rules.len()],
            fact_count,
            spare: Vec::new(),
            frames: Vec::new(),
            scratch: Scratch::default(),
            pool: pool(options.threads),
            rates: vec![(0, 0); program.rules.len()],
            last_wave: u64::MAX,
            last_piece: FLUSH as u64,
            last_merged: 0,
            filters: vec![false; n],
            finds: vec![false; n],
            buffer_mem: 0,
            looks: vec![true; program.rules.len()],
        };
        for rel in 0..n {
            engine.account(rel);
        }
        engine
    }

    fn provenance(&self) -> bool {
        self.options.provenance
    }

    /// The worker threads, when evaluation uses more than one.
    pub(super) fn pool(&self) -> Option<&rayon::ThreadPool> {
        self.pool.as_deref()
    }

    /// Whether a rule is trusted to look up into a large head when a quarter of
    /// its derivations would be dropped, as into a small one, rather than nearly
    /// all: with worker threads, in a stratum that does not hand its facts out
    /// in order.
    ///
    /// A wave whose pieces drop less than an eighth of what they make runs on one
    /// thread (see [`merge_bound`]): a closure's waves, which look nothing up in
    /// their large head, all did, on two threads as on one. A trusted rule's
    /// pieces look up a window of their derivations first, and go on while
    /// nearly all drop; on the 2,000-node closure, whose waves find about half
    /// their facts stored, that drops enough for 255 of its 319 waves to be
    /// shared. A stratum that hands its facts out in order drops the derivations
    /// of facts stored on a bit, in the merge, after a prefetched probe; there
    /// the look-ups cost more than the second thread gave back.
    fn shares_looks(&self) -> bool {
        self.pool.is_some() && self.order.is_none()
    }

    /// Evaluate every stratum in order.
    ///
    /// With worker threads, the evaluation itself runs on one of them when no other
    /// evaluation does: every wave's pieces are then shared between the threads of
    /// the pool, this one included, instead of the calling thread handing them over,
    /// sleeping, and being woken for every merge while the workers wait (a thread
    /// more than there are cores). On a machine of 2 cores that took 5 to 22 % off
    /// the larger workloads' time at 2 threads. A second evaluation running at the
    /// same time stays on its own thread, as before, rather than queue for the pool.
    ///
    /// A program with a rule of many literals (more than [`SHALLOW_BODY`]) runs on a
    /// pool's thread even on one thread: evaluating a rule nests a call for each of
    /// its literals, and the caller's stack may be small.
    pub fn run(&mut self) -> Result<()> {
        let turn = self.pool.as_ref().and_then(|_| PoolTurn::take());
        let host = match (&turn, &self.pool) {
            (Some(_), Some(pool)) => Some(pool.clone()),
            _ if deep(self.program) => deep_pool(),
            _ => None,
        };
        match host {
            Some(pool) => install(&pool, || self.run_strata()),
            None => self.run_strata(),
        }
    }

    fn run_strata(&mut self) -> Result<()> {
        for si in 0..self.program.strata.len() {
            self.stratum(si, None)?;
        }
        self.finish_stats();
        Ok(())
    }

    /// Record the arithmetic failures in the stats.
    pub fn finish_stats(&mut self) {
        self.stats.arithmetic = self
            .rule_faults
            .iter()
            .enumerate()
            .filter(|(_, f)| f.any())
            .map(|(rule, f)| ArithmeticFaults {
                rule: rule as RuleId,
                overflow: f.overflow,
                division_by_zero: f.div_zero,
            })
            .collect();
    }

    /// When evaluation must stop.
    pub(super) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    pub(super) fn check_deadline(&self) -> Result<()> {
        if let Some(d) = self.deadline
            && Instant::now() >= d
        {
            return Err(self.limit_error(Limit::Timeout, None));
        }
        Ok(())
    }

    /// Recount relation `rel`'s storage (and its delta bookkeeping: the next delta,
    /// and as much again for the current one) against the memory limit.
    pub(super) fn account(&mut self, rel: usize) {
        let bytes = self.rels[rel].heap_bytes()
            + self.queued[rel].bytes()
            + self.next_delta[rel].capacity() * 8;
        self.mem = self.mem - self.rel_mem[rel] + bytes;
        self.rel_mem[rel] = bytes;
    }

    /// Fail when the storage counted, plus `growth` bytes about to be allocated, is
    /// beyond the memory limit.
    pub(super) fn check_memory(&self, growth: usize, running: Option<RuleId>) -> Result<()> {
        if self.memory_allows(growth) {
            Ok(())
        } else {
            Err(self.limit_error(Limit::MaxMemory, running))
        }
    }

    /// Whether the storage counted, plus `growth` bytes about to be allocated, is
    /// within the memory limit.
    fn memory_allows(&self, growth: usize) -> bool {
        self.options.budget.max_memory.is_none_or(|max| {
            self.mem
                .saturating_add(self.buffer_mem)
                .saturating_add(self.order.as_ref().map_or(0, Order::bytes))
                .saturating_add(growth)
                <= max
        })
    }

    /// The `budget_exceeded` error for `limit`, naming the rule that derived the most
    /// facts (else the one running) and pointing at it.
    pub(super) fn limit_error(&self, limit: Limit, running: Option<RuleId>) -> crate::diag::Error {
        let budget = &self.options.budget;
        let what = match limit {
            Limit::MaxFacts => format!(
                "evaluation derived more than {} facts (the fact limit)",
                budget.max_facts.unwrap_or(0)
            ),
            Limit::MaxRounds => format!(
                "a stratum needed more than {} rounds (the round limit)",
                budget.max_rounds.unwrap_or(0)
            ),
            Limit::Timeout => "evaluation ran past its time limit".to_string(),
            Limit::MaxMemory => format!(
                "evaluation needed more than {} of storage (the memory limit; {} in use)",
                bytes_text(budget.max_memory.unwrap_or(0)),
                bytes_text(self.mem)
            ),
            Limit::MaxInput => "the input is too large".to_string(),
        };
        let top = self
            .rule_new
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .max_by_key(|(i, n)| (**n, std::cmp::Reverse(*i)))
            .map(|(i, n)| (i as RuleId, *n));
        let rule = top.map(|(r, _)| r).or(running);
        let mut message = what;
        if let Some(r) = rule {
            let name = &self.program.rule(r).name;
            match top {
                Some((_, n)) => message.push_str(&format!(
                    "; the rule that grew fastest is RULE-{r} (`{name}`), with {n} new facts"
                )),
                None => message.push_str(&format!("; rule RULE-{r} (`{name}`) was running")),
            }
        }
        let mut d = Diagnostic::limit_exceeded(limit, message).with_help(format!(
            "raise the limit ({}, or Budget in the library) or narrow the program or its \
             inputs: a cartesian product or an arithmetic recursion without end grows \
             until a limit stops it",
            limit.flag()
        ));
        if let Some(r) = rule {
            d = d.at_span(&self.program.sources, self.program.rule(r).span);
        }
        d.into()
    }

    /// Count a plan run's arithmetic failures; with strict arithmetic the first is an
    /// error.
    fn record_faults(&mut self, rule: RuleId, faults: Faults) -> Result<()> {
        if !faults.any() {
            return Ok(());
        }
        self.rule_faults[rule as usize].merge(faults);
        if self.options.strict_arithmetic {
            let f = self.rule_faults[rule as usize];
            let warning = crate::eval::arithmetic_warning(
                self.program,
                &ArithmeticFaults {
                    rule,
                    overflow: f.overflow,
                    division_by_zero: f.div_zero,
                },
            );
            return Err(warning
                .with_help("integers are 64-bit and floats finite (--strict makes this an error)")
                .into());
        }
        Ok(())
    }

    /// Evaluate stratum `si`. With a seed, evaluate only the consequences of the
    /// seed's changed rows (every rule runs as semi-naive variants whose delta atoms
    /// read relations that changed), assuming the rest was evaluated before.
    pub fn stratum(&mut self, si: usize, seed: Option<&Seed>) -> Result<()> {
        let program = self.program;
        let stratum = &program.strata[si];
        let mut in_stratum = std::mem::take(&mut self.in_stratum);
        for &r in &stratum.relations {
            in_stratum[r as usize] = true;
        }
        let reads_stratum = |rule: &crate::ir::Rule, in_stratum: &[bool]| {
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
        // distinct from the full one): with a seed, also those that changed before.
        let seeded: Option<Vec<bool>> = seed.map(|s| {
            (0..in_stratum.len())
                .map(|r| in_stratum[r] || !s.changed[r].is_empty())
                .collect()
        });
        // Relations the plans read, whose indexes planning may build.
        let mut read = Vec::new();
        for &rid in &stratum.rules {
            let rule = program.rule(rid);
            read.extend(rule.body.iter().filter_map(|l| match l {
                Literal::Atom(a) | Literal::Negated(a) => Some(a.rel as usize),
                _ => None,
            }));
            if let Some(deltable) = &seeded {
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
                        variants.push(planner.plan(rule, Some(i), deltable)?);
                    }
                }
                continue;
            }
            let recursive = stratum.recursive && reads_stratum(rule, &in_stratum);
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
        // Aggregate bodies read relations too: recount every relation the plans read.
        for plan in once.iter().chain(&variants) {
            collect_reads(&plan.steps, &mut read);
        }
        read.sort_unstable();
        read.dedup();
        for &r in &read {
            self.account(r);
        }
        self.check_memory(0, None)?;
        let mut st = StratumStats::default();
        self.layered = stratum
            .relations
            .iter()
            .any(|&r| self.rels[r as usize].is_layer());
        // Facts whose confidences may differ are handed out best first, so that none
        // is read before it is final (see `Order`).
        self.order = (seed.is_none()
            && !self.layered
            && stratum.recursive
            && !variants.is_empty()
            && !forced_unordered()
            && variants.iter().all(|p| reads_one_of(p, &in_stratum))
            && self.confidences_differ(si, &read))
        .then(|| Order {
            queued: FactQueue::new(&stratum.relations),
            ..Order::default()
        });
        // An earlier fact whose confidence rose before this stratum counts as raised.
        self.conf_raised = seed.is_some_and(|s| {
            s.changed
                .iter()
                .zip(&s.base_len)
                .any(|(rows, &len)| rows.iter().any(|&row| row < len))
        });
        self.check_deadline()?;
        // Round 0: the rules that need no fixpoint, over the full relations.
        let mut full = std::mem::take(&mut self.full_len);
        let mut old = std::mem::take(&mut self.old_len);
        for &r in &stratum.relations {
            full[r as usize] = self.rels[r as usize].len();
        }
        let before = self.derived_total;
        let once_plans: Vec<&Plan> = once.iter().collect();
        let once_work: Vec<_> = (0..once.len()).map(|i| (i, 0..0)).collect();
        let no_deltas = std::mem::take(&mut self.cur_delta);
        let outcome = self.run_pieces(&once_plans, &once_work, &full, &full, &no_deltas, &mut st);
        self.cur_delta = no_deltas;
        outcome?;
        st.rounds = 1;
        self.report(si, 0, self.derived_total - before);
        // The old version of the stratum's relations (and, with a seed, of those that
        // changed before) in round 1: nothing, or the rows before the new facts.
        match seed {
            None => {
                for &r in &stratum.relations {
                    old[r as usize] = 0;
                }
            }
            Some(s) => old.clone_from(&s.base_len),
        }
        let variant_plans: Vec<&Plan> = variants.iter().collect();
        // Relations with a delta in the current round.
        let mut delta_rels: Vec<usize> = Vec::new();
        let mut first = true;
        while (stratum.recursive || seed.is_some()) && !variants.is_empty() {
            for &r in &delta_rels {
                self.cur_delta[r].clear();
            }
            delta_rels.clear();
            match seed {
                None if self.order.is_some() && self.keeps_order(st.derivations) => {
                    self.release(&stratum.relations, first, &mut delta_rels);
                    self.check_memory(0, None)?;
                }
                Some(s) if first => {
                    for (r, changed) in s.changed.iter().enumerate() {
                        if !changed.is_empty() {
                            let d = &mut self.cur_delta[r];
                            d.extend_from_slice(changed);
                            d.sort_unstable();
                            d.dedup();
                            delta_rels.push(r);
                        }
                    }
                }
                None if first => {
                    for &r in &stratum.relations {
                        let r = r as usize;
                        // Every row is in this first delta, round 0's new facts too:
                        // queued again, they would be joined a second time next round.
                        self.next_delta[r].clear();
                        self.cur_delta[r].extend(0..self.rels[r].len());
                        delta_rels.push(r);
                    }
                }
                _ => {
                    for &r in &stratum.relations {
                        let r = r as usize;
                        std::mem::swap(&mut self.cur_delta[r], &mut self.next_delta[r]);
                        self.queued[r].order(&mut self.cur_delta[r]);
                        delta_rels.push(r);
                    }
                }
            }
            delta_rels.retain(|&r| !self.cur_delta[r].is_empty());
            first = false;
            if seed.is_some() {
                for &rel in &stratum.relations {
                    let d = &self.cur_delta[rel as usize];
                    self.touched[rel as usize].extend_from_slice(d);
                }
            }
            for &r in &delta_rels {
                self.queued[r].clear_delta(&self.cur_delta[r]);
            }
            if delta_rels.is_empty() {
                break;
            }
            if let Some(max) = self.options.budget.max_rounds
                && st.rounds >= max
            {
                return Err(self.limit_error(Limit::MaxRounds, None));
            }
            self.check_deadline()?;
            // Last round's full version is this round's old one (for the seed's
            // relations of earlier strata too: their new rows were the first delta).
            if st.rounds > 1 {
                for &r in &stratum.relations {
                    old[r as usize] = full[r as usize];
                }
                if seed.is_some() && st.rounds == 2 {
                    old.clone_from(&full);
                }
            }
            for &r in &stratum.relations {
                full[r as usize] = self.rels[r as usize].len();
            }
            let before = self.derived_total;
            let deltas = std::mem::take(&mut self.cur_delta);
            // Every variant over its delta, in pieces of at most PIECE rows.
            let mut work = std::mem::take(&mut self.scratch.work);
            work.clear();
            for (i, plan) in variant_plans.iter().enumerate() {
                if let Some(Step::Scan {
                    rel,
                    version: Version::Delta,
                    ..
                }) = plan.steps.first()
                {
                    let n = deltas[*rel as usize].len();
                    work.extend((0..n).step_by(PIECE).map(|k| (i, k..n.min(k + PIECE))));
                }
            }
            let outcome = self.run_pieces(&variant_plans, &work, &old, &full, &deltas, &mut st);
            self.cur_delta = deltas;
            self.scratch.work = work;
            outcome?;
            self.report(si, st.rounds, self.derived_total - before);
            st.rounds += 1;
        }
        for &r in &delta_rels {
            self.cur_delta[r].clear();
        }
        self.order = None;
        // Outside this stratum, both versions of the stratum's relations are whole.
        for &r in &stratum.relations {
            let len = self.rels[r as usize].len();
            full[r as usize] = len;
            old[r as usize] = len;
        }
        if seed.is_some() {
            old.clone_from(&full);
        }
        self.full_len = full;
        self.old_len = old;
        if seed.is_some() {
            // Rows changed in the last round that no rule reads are changes too.
            for &rel in &stratum.relations {
                let d = &self.next_delta[rel as usize];
                self.touched[rel as usize].extend_from_slice(d);
            }
        }
        // Changes of a finished stratum feed no rule of its own.
        for &rel in &stratum.relations {
            let rel = rel as usize;
            for &row in &self.next_delta[rel] {
                self.queued[rel].set(row, false);
            }
            self.next_delta[rel].clear();
        }
        for (rid, plan) in replay {
            self.base_plans[rid as usize] = Some(plan);
        }
        // The least-height pass revisits every fact of the stratum; a layer over a
        // shared base keeps the derivations the rounds chose (of the best
        // confidence, so valid, but not re-selected for least height).
        if self.provenance() && self.conf_raised && !self.layered {
            #[cfg(test)]
            PASSES.with(|p| p.set(p.get() + 1));
            self.settle_heights(si, &in_stratum)?;
            for &r in &stratum.relations {
                self.account(r as usize);
            }
        }
        for &r in &stratum.relations {
            in_stratum[r as usize] = false;
        }
        self.in_stratum = in_stratum;
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
        let mut cells = Vec::new();
        for row in old.input_rows() {
            let k = old.evidence_of(row);
            let conf = evidence(k).unwrap_or(1.0);
            cells.clear();
            cells.extend(old.row(row).iter());
            let (_, new) = fresh.insert(&cells, Meta::input(conf));
            if new {
                fresh.push_records(k, provenance.then_some(&[][..]))?;
            }
        }
        self.queued[rel] = Queued::for_relation(&fresh);
        self.next_delta[rel].clear();
        self.fact_count = self.fact_count + fresh.len() as usize - self.rels[rel].len() as usize;
        self.full_len[rel] = fresh.len();
        self.old_len[rel] = fresh.len();
        self.rels[rel] = fresh;
        self.account(rel);
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
        let mut ctx = Ctx::new(
            &self.rels,
            &lens,
            &lens,
            delta,
            Syms::Write(&self.interner),
            false,
        );
        ctx.deadline = self.deadline;
        let syms = ctx.syms;
        let head = &self.rels[plan.head_rel as usize];
        let mut found = false;
        let mut cells = Vec::with_capacity(plan.head.len());
        // The first fact found ends the run (a pause that is never resumed).
        let mut sink = |frame: &mut Frame, _: f64, _: u32| {
            cells.clear();
            for e in &plan.head {
                match exec::eval(e, &frame.slots, syms) {
                    Ok(v) => cells.push(v),
                    Err(_) => return false,
                }
            }
            found = head.find(&cells).is_some();
            found
        };
        let mut frame = Frame::new(plan);
        let stop = exec::run_plan(&ctx, plan, &mut frame, &mut Cursor::default(), &mut sink);
        // Out of time: say yes (recomputing is always correct); the stratum that
        // follows stops at the deadline anyway.
        found || stop == Some(Stop::Expired)
    }

    /// Whether the facts stratum `si` derives may differ in confidence: a rule of it
    /// has a confidence below 1, or the facts its rules read (`read`, its own
    /// relations' facts included) do not all share one. Otherwise every derivation
    /// has that one confidence, and the rounds meet facts in height order anyway.
    fn confidences_differ(&self, si: usize, read: &[usize]) -> bool {
        let stratum = &self.program.strata[si];
        if stratum
            .rules
            .iter()
            .any(|&r| self.program.rule(r).confidence != 1.0)
        {
            return true;
        }
        let mut shared = None;
        let own = stratum.relations.iter().map(|&r| r as usize);
        for r in read.iter().copied().chain(own) {
            match self.rels[r].one_confidence() {
                Ok(None) => {}
                Ok(Some(c)) if *shared.get_or_insert(c) == c => {}
                _ => return true,
            }
        }
        false
    }

    /// Whether the current stratum goes on handing its facts out best first. It stops
    /// when, after [`ORDER_TRIAL`] rounds, they derive little (fewer than
    /// [`ORDER_MIN_WORK`] derivations a round on average, `derivations` of the
    /// stratum so far): a chain whose confidences nearly all differ hands its facts
    /// out one by one, a round each, and its rounds would cost more than their
    /// joins. (A weighted graph often starts like that, with its few most confident
    /// facts, before its rounds grow: hence the long trial.) The facts still queued
    /// are then queued for the next round, and the stratum goes on as one whose
    /// facts are handed out as they change: a rise of a fact read then calls the
    /// least-height pass in (the facts handed out before are final). It stops too
    /// after half the rounds `Budget::max_rounds` allows, which a large graph whose
    /// confidences nearly all differ could reach where rounds that hand facts out as
    /// they change would not.
    fn keeps_order(&mut self, derivations: u64) -> bool {
        let Some(order) = &self.order else {
            return false;
        };
        // Half the round limit at most: the rounds that hand facts out as they change
        // take about as many as the longest derivation is tall.
        let budget = self
            .options
            .budget
            .max_rounds
            .map_or(u64::MAX, |m| u64::from(m / 2));
        if order.rounds < budget
            && (order.rounds < ORDER_TRIAL || derivations >= ORDER_MIN_WORK * order.rounds)
        {
            return true;
        }
        #[cfg(test)]
        STOPPED_ORDER.with(|n| n.set(n.get() + 1));
        let mut order = self.order.take().unwrap_or_default();
        for (at, f) in order.queued.drain() {
            let (r, row) = (f.rel as usize, f.row);
            if rank(self.rels[r].meta(row)) == at && !self.queued[r].get(row) {
                self.queued[r].set(row, true);
                self.next_delta[r].push(row);
            }
        }
        false
    }

    /// In a stratum that hands its facts out best first, queue the facts of
    /// relation `r` that changed since the last call (`next_delta[r]`) at their
    /// ranks, and clear their queued bits. Called as a merge that did not queue
    /// them itself ends (see [`Ranked`]), while the rows it changed are still in
    /// the caches, and by the first round's release. (A fact that changes again
    /// in a later merge of the round is queued again, at its new, better rank;
    /// the entry at the old one is stale.)
    fn queue_changed(&mut self, r: usize) {
        let provenance = self.options.provenance;
        let Some(order) = self.order.as_mut() else {
            return;
        };
        let (mut ranked, _) = order.split(r as u32, provenance, self.conf_raised);
        let (rel, next, queued) = (&self.rels[r], &mut self.next_delta[r], &mut self.queued[r]);
        // (Nothing fetched ahead: the merge just wrote these rows.)
        for &row in next.iter() {
            queued.set(row, false);
            ranked.push(row, rel.meta(row));
        }
        let rose = ranked.rose;
        order.rose |= rose;
        next.clear();
    }

    /// Start a round of a stratum that hands its facts out best first: in the
    /// first, queue every fact of `rels` at its rank (in the others, the merges
    /// queued the facts that changed: [`Engine::queue_changed`]), and make the
    /// facts queued at the best rank this round's delta.
    ///
    /// Out of line, as the merge is (see [`Engine::merge`]): 0.9 % fewer
    /// instructions on a weighted closure than inlined into the rounds' loop.
    #[inline(never)]
    fn release(&mut self, rels: &[u32], first: bool, delta_rels: &mut Vec<usize>) {
        if self.order.is_none() {
            return;
        }
        // The facts that changed in the last round were queued after each merge
        // (see `Engine::queue_changed`); in the first, every fact is queued here.
        if first {
            for &r in rels {
                let r = r as usize;
                let next = &mut self.next_delta[r];
                next.clear();
                next.extend(0..self.rels[r].len());
                self.queue_changed(r);
            }
        }
        let Some(order) = self.order.as_mut() else {
            return;
        };
        self.conf_raised |= std::mem::take(&mut order.rose);
        // The best rank queued with a fact still at it (the others moved up since,
        // and are queued again at their new rank).
        let mut taken = std::mem::take(&mut order.taken);
        // (Only the stratum's relations are queued.)
        let top = rels.iter().max().map_or(0, |&r| r as usize + 1);
        if order.handed_rows.len() < top {
            order.handed_rows.resize_with(top, Handed::default);
        }
        loop {
            taken.clear();
            let Some(at) = order.queued.pop(&mut taken) else {
                break;
            };
            let mut any = false;
            for f in &taken {
                let r = f.rel as usize;
                // While the ranks handed out only fall, a fact whose rank rose
                // since it was queued here was handed out at its new rank first
                // (a fact is queued at a rank once: it is queued again only when
                // its rank rises), and a fact handed out before was queued at a
                // better rank than this: an entry is stale exactly when its fact
                // was handed out, which the bits say without reading its record.
                let current = if handed_bits_decide(self.conf_raised) {
                    !order.handed_rows[r].get(f.row)
                } else {
                    rank(self.rels[r].meta(f.row)) == at
                };
                if current {
                    self.cur_delta[r].push(f.row);
                    order.handed_rows[r].set(f.row);
                    any = true;
                }
            }
            if any {
                order.current = Some(at);
                break;
            }
        }
        order.taken = taken;
        order.rounds += 1;
        for &r in rels {
            let d = &mut self.cur_delta[r as usize];
            if !d.is_empty() {
                order.handed += d.len() as u64;
                delta_rels.push(r as usize);
            }
        }
    }

    fn report(&self, stratum: usize, round: u32, new_facts: usize) {
        if let Some(p) = &self.options.progress {
            p(&Progress {
                stratum,
                round,
                new_facts,
                total_facts: self.fact_count,
            });
        }
    }

    /// Derivations a wave of these pieces is expected to make: a piece that
    /// paused (its buffer full) as many as a run may make before it pauses again
    /// ([`FLUSH`]); a fresh one its rows at its rule's rate so far (of the pieces
    /// that finished), or, before any has, what a piece of the last wave made on
    /// average. (The wave before is no guide on its own: a round's first wave
    /// follows its last, often a remainder of a few pieces, and one rule's pieces
    /// follow another's. Which waves are shared never changes a result.)
    fn expected(&self, plans: &[&Plan], wave: &[Piece]) -> u64 {
        wave.iter()
            .map(|piece| {
                let rate = self.rates[plans[piece.plan].rule as usize];
                piece_expected(piece.made, piece.rows.len(), rate, self.last_piece)
            })
            .sum()
    }

    /// Run `plans[i]` for every `(i, rows)` of `work`, in that order: the plan over
    /// `deltas[its delta relation][rows]` (a plan without a delta scan is one piece
    /// with no rows), reading the versions `old` and `full`.
    ///
    /// The pieces run in waves of at most [`WAVE`]: each piece of a wave joins
    /// against the relations as they were when the wave began, until it is done or
    /// has made [`FLUSH`] derivations since its last merge; then the buffers are merged in piece
    /// order, the limits are checked, and the next wave takes the first [`WAVE`]
    /// unfinished pieces. With worker threads the pieces of a wave run side by side;
    /// what a piece derives never depends on the others of its wave, and nothing
    /// about a wave depends on the number of threads, so every thread count derives
    /// the same facts with the same derivations, merged in the same order.
    fn run_pieces(
        &mut self,
        plans: &[&Plan],
        work: &[(usize, std::ops::Range<usize>)],
        old: &[u32],
        full: &[u32],
        deltas: &[Vec<u32>],
        st: &mut StratumStats,
    ) -> Result<()> {
        // The piece lists and derivation word shapes of the last call are reused: a
        // chain-like stratum calls this once a round, for thousands of small rounds.
        let mut queue = std::mem::take(&mut self.scratch.queue);
        let mut next = std::mem::take(&mut self.scratch.next);
        let mut words = std::mem::take(&mut self.scratch.words);
        let outcome = self.run_waves(
            plans,
            work,
            (old, full, deltas),
            (&mut queue, &mut next, &mut words),
            st,
        );
        // Pieces left by an error are dropped; their buffers are not kept.
        queue.clear();
        next.clear();
        self.scratch.queue = queue;
        self.scratch.next = next;
        self.scratch.words = words;
        outcome
    }

    /// [`Engine::run_pieces`] with its piece lists and word shapes to fill.
    fn run_waves(
        &mut self,
        plans: &[&Plan],
        work: &[(usize, std::ops::Range<usize>)],
        (old, full, deltas): (&[u32], &[u32], &[Vec<u32>]),
        (queue, next, words): (&mut Vec<Piece>, &mut Vec<Piece>, &mut Vec<Option<Words>>),
        st: &mut StratumStats,
    ) -> Result<()> {
        let provenance = self.provenance();
        // Once the least-height pass is bound to run, it re-selects every derived
        // fact's record: the rounds keep heights (they decide which facts change,
        // and so where joins pause and in which order new facts are merged: the
        // rows come out in the same order) but no premises.
        let record = provenance && (!self.conf_raised || self.layered || forced_track());
        let batch = batching();
        let pairs = pairing();
        let groups = grouping();
        let dense = dense_grouping();
        let deadline = self.deadline;
        let mut waiting = work.iter().filter(|(i, _)| plans[*i].feasible);
        // Unfinished pieces, in order (`queue`); each wave runs the first WAVE of them.
        queue.clear();
        loop {
            while queue.len() < WAVE {
                let Some((i, rows)) = waiting.next() else {
                    break;
                };
                let trusted = self.looks[plans[*i].rule as usize];
                let lists = (&mut self.spare, &mut self.frames);
                queue.push(Piece::new(*i, plans[*i], rows.clone(), lists, trusted));
            }
            if queue.is_empty() {
                return Ok(());
            }
            let n = queue.len().min(WAVE);
            let wave = &mut queue[..n];
            // Relations only grow at merges: rows read in this wave fit inline
            // derivation words for the whole wave if they fit now.
            words.clear();
            words.resize(plans.len(), None);
            if record {
                for piece in wave.iter() {
                    let i = piece.plan;
                    if words[i].is_none() {
                        words[i] = self.words(plans[i])?;
                    }
                }
            }
            let delta_of = |piece: &Piece| -> &[u32] {
                match plans[piece.plan].steps.first() {
                    Some(Step::Scan {
                        rel,
                        version: Version::Delta,
                        ..
                    }) => &deltas[*rel as usize][piece.rows.clone()],
                    _ => &[],
                }
            };
            let rels = &self.rels;
            let inputs_only = &self.inputs_only[..];
            let filters = &self.filters;
            // (Set only as a round starts: the same for every wave of it.)
            let handed = deciding_handed(self.order.as_ref(), self.conf_raised);
            // (Read here: workers do not see this thread's test settings.)
            let forced = forced_filter();
            let run = |piece: &mut Piece, syms: Syms<'_>| {
                let head = plans[piece.plan].head_rel as usize;
                let reads = Reads {
                    rels,
                    inputs_only,
                    old,
                    full,
                    delta: delta_of(piece),
                    syms,
                    provenance,
                    record,
                    batch,
                    pairs,
                    groups,
                    dense,
                    deadline,
                    word: words[piece.plan],
                    filter: forced.unwrap_or(filters[head]),
                    handed: handed.get(head).unwrap_or(&NONE_HANDED),
                };
                piece.run(plans[piece.plan], &reads);
            };
            // A plan whose functors make symbols writes the symbol table as it joins:
            // its pieces run on this thread (in the same order, so with the same
            // outcome).
            let parallel = self.pool.as_ref().filter(|_| {
                wave.len() > 1
                    && shared(self.expected(plans, wave), self.last_wave, self.last_merged)
                    && wave.iter().all(|piece| !makes_symbols(plans[piece.plan]))
            });
            match parallel {
                Some(pool) => {
                    let symbols = self.interner.borrow();
                    let symbols: &Symbols = &symbols;
                    pool.install(|| {
                        use rayon::prelude::*;
                        wave.par_iter_mut()
                            .for_each(|piece| run(piece, Syms::Read(symbols)));
                    });
                }
                None => {
                    for piece in wave.iter_mut() {
                        run(piece, Syms::Write(&self.interner));
                    }
                }
            }
            // Merge in piece order; a piece that ran out of time stops everything.
            let mut expired = None;
            self.last_wave = wave.iter().map(|piece| piece.pending.derivations).sum();
            self.last_piece = self.last_wave / wave.len() as u64;
            self.last_merged = wave.iter().map(|piece| piece.pending.len() as u64).sum();
            self.buffer_mem = wave
                .iter()
                .map(|piece| piece.pending.bytes())
                .sum::<usize>()
                + self.spare.iter().map(Pending::bytes).sum::<usize>();
            for piece in wave.iter_mut() {
                let plan = plans[piece.plan];
                piece.made += piece.pending.derivations;
                self.record_faults(plan.rule, std::mem::take(&mut piece.faults))?;
                st.derivations += std::mem::take(&mut piece.pending.derivations);
                self.merge(plan, &mut piece.pending, full[plan.head_rel as usize], st)?;
                if piece.stop == Some(Stop::Expired) && expired.is_none() {
                    expired = Some(plan.rule);
                }
            }
            if let Some(rule) = expired {
                return Err(self.limit_error(Limit::Timeout, Some(rule)));
            }
            // Done pieces leave; a paused piece gives the second half of its rows
            // still unvisited to a new piece right after it, so that a piece whose
            // rows derive much does not run alone (where pieces pause depends only
            // on what they derive, so the split is the same at every thread count).
            next.clear();
            for mut piece in queue.drain(..n) {
                if piece.stop.is_none() {
                    let rate = &mut self.rates[plans[piece.plan].rule as usize];
                    *rate = decayed(*rate, piece.made, piece.rows.len());
                    self.spare.push(piece.pending.kept());
                    self.frames.push(piece.frame);
                    continue;
                }
                let tail = piece.split();
                let plan = piece.plan;
                next.push(piece);
                if let Some(rows) = tail {
                    let trusted = self.looks[plans[plan].rule as usize];
                    let lists = (&mut self.spare, &mut self.frames);
                    next.push(Piece::new(plan, plans[plan], rows, lists, trusted));
                }
            }
            next.append(queue);
            std::mem::swap(queue, next);
            self.check_deadline()?;
        }
    }

    /// How `plan`'s derivations are buffered as derivation words of its head relation,
    /// if they can be: one to three premises, no aggregate, relations whose rows fit.
    fn words(&mut self, plan: &Plan) -> Result<Option<Words>> {
        #[cfg(test)]
        if !PREMISE_WORDS.with(std::cell::Cell::get) {
            return Ok(None);
        }
        let Some(facts) = plan.premise_facts.as_deref() else {
            return Ok(None);
        };
        if facts.is_empty() || facts.len() > 3 {
            return Ok(None);
        }
        // (Narrow words keep the row `2^30 - 1` of tag 3 out: that word stands for
        // an unrecorded derivation.)
        let limit = inline_limit(facts.len()) - u32::from(facts.len() <= 1);
        let mut rels = [0; 3];
        for (r, &fact) in rels.iter_mut().zip(facts) {
            let rel = plan.steps.iter().find_map(|step| match *step {
                Step::Scan { rel, fact: f, .. } if f == fact => Some(rel),
                _ => None,
            });
            match rel {
                Some(rel) if self.rels[rel as usize].len() <= limit => *r = rel,
                _ => return Ok(None),
            }
        }
        let head = &mut self.rels[plan.head_rel as usize];
        let rels = &rels[..facts.len()];
        let (base, narrow) = match head.narrow_base(rels)? {
            Some(base) => (base, true),
            None => match head.inline_base(rels)? {
                Some(base) => (base, false),
                None => return Ok(None),
            },
        };
        let mut slots = [0; 3];
        slots[..facts.len()].copy_from_slice(facts);
        Ok(Some(Words {
            base,
            narrow,
            slots,
            len: facts.len(),
        }))
    }

    /// Merge buffered derivations into the head relation: new facts are appended,
    /// better derivations replace worse ones, and facts that appeared or improved are
    /// queued for the next delta. Rows from `unread` on appeared in this round, so no
    /// rule has read them yet.
    ///
    /// Out of line: inlined into the waves' loop, its code moved with changes
    /// elsewhere in the crate (the closures' instructions by 2–3 % either way); out
    /// of line it is steady, and took 1–2 % off them.
    #[inline(never)]
    fn merge(
        &mut self,
        plan: &Plan,
        pending: &mut Pending,
        unread: u32,
        st: &mut StratumStats,
    ) -> Result<()> {
        let provenance = self.provenance();
        let record = provenance && pending.record;
        let words = pending.word.is_some();
        let head = plan.head_rel as usize;
        let arity = plan.head.len();
        let n = pending.len();
        // What storing every buffered tuple as a new fact could allocate, checked
        // before anything grows: first a bound that reads none of them, then, only
        // where that one is past the limit, the exact one.
        let rest = self.queued[head].growth_bound(n)
            + grow_bytes(
                self.next_delta[head].len(),
                self.next_delta[head].capacity(),
                n,
                4,
            );
        let premises = pending.premises.len();
        if !self.memory_allows(self.rels[head].growth_ceiling(n, premises) + rest) {
            let recs = &pending.recs[..n];
            let growth = self.rels[head].growth_bound(
                n,
                premises,
                &pending.cells,
                plan.rule,
                recs.iter().map(|r| r.height),
                (0..n).map(|k| pending.conf(k)),
            );
            self.check_memory(growth + rest, Some(plan.rule))?;
        }
        // Handing facts out best first, a fact is read only once it is handed out:
        // a rise of one is found as it is queued again (see `Engine::release`).
        let unread = if self.order.is_some() { 0 } else { unread };
        // The facts that change go to the next delta, or, in an ordered stratum
        // from its first round on, to its queue: as they change, in a weighted
        // relation of two cells, else as the merge ends (`queue_changed`). Round
        // 0's are queued with every other row by the first release. (The rows
        // handed out decide while the ranks handed out only fall.)
        let narrow = self.rels[head]
            .narrow_layout()
            .filter(|_| (1..=NARROW_MERGE).contains(&arity));
        let (mut ranked, handed) = match self.order.as_mut() {
            Some(o) => {
                let rounds = o.rounds;
                let (ranked, handed) = o.split(head as u32, provenance, self.conf_raised);
                let ranked = (rounds > 0 && narrow == Some(true) && arity == 2).then_some(ranked);
                (ranked, handed.get(head).unwrap_or(&NONE_HANDED))
            }
            None => (None, &NONE_HANDED),
        };
        let rel = &mut self.rels[head];
        let queued = &mut self.queued[head];
        let next = &mut self.next_delta[head];
        rel.reserve(n);
        queued.reserve(n);
        if ranked.is_none() {
            reserve_past_heap(next, n);
        }
        rel.prefetch_first_probes(pending.recs.iter().map(|r| r.tag));
        // Rows of one to four cells into a relation that holds them narrow take an
        // insert made for their width (those that do not fit, the general one).
        let ctx = (
            plan,
            (provenance, record, words, self.finds[head]),
            unread,
            handed,
        );
        let before = rel.len();
        let Merged {
            new_facts,
            idle,
            raised,
        } = match (narrow, &mut ranked) {
            // (Only a weighted relation of two cells: see `Changes`.)
            (_, Some(to)) => merge_width::<2, true, _>(rel, queued, to, pending, ctx, st)?,
            (Some(c), None) => merge_narrow(arity, c, rel, queued, next, pending, ctx, st)?,
            (None, None) => merge_rows::<0, false, _>(rel, queued, next, pending, ctx, st)?,
        };
        let rose = ranked.map(|r| r.rose);
        if let Some(order) = self.order.as_mut().filter(|o| o.rounds > 0) {
            order.rose |= rose == Some(true);
            // (Round 0's facts are queued with every other row by the first release.)
            if !self.next_delta[head].is_empty() {
                self.queue_changed(head);
            }
        }
        pending.used = pending.used.max(n);
        self.finds[head] = (n - new_facts) * 2 >= n;
        // Whether the next wave's pieces filter their buffers for this relation:
        // when nearly every derivation made for it changed nothing.
        let filtered = std::mem::take(&mut pending.filtered);
        let (made, idle) = (n + filtered, idle + filtered);
        self.filters[head] = made >= FILTER_MIN
            && nearly_all(idle as u64, made as u64)
            && self.rels[head].len() <= FILTER_ROWS;
        // Whether the rule's next pieces trust their look-ups for a whole window:
        // as its last ones paid. Into a large head, where a rule looks up only
        // while trusted, as they would have paid: counting every derivation, those
        // its look-ups dropped and those the merge (or the filter) found idle.
        let (probes, drops) = pending.look.report();
        // Whether the wave's derivations found facts stored, in the merge or by
        // look-ups: only then are the rows worth marking now.
        let found = n > new_facts || drops > 0;
        // A derived relation keeps its rows by their cells while that is small
        // and dense (a grid, in place of the dedup table); one into which
        // look-ups drop derivations (half of them or more), which read it, while
        // that is twice as large.
        self.rels[head].keep_grid(probes > 0 && drops * 2 >= probes);
        let large = large(&self.rels[head]);
        let (probes, drops) = if large {
            (made as u64 + drops, idle as u64 + drops)
        } else {
            (probes, drops)
        };
        if probes >= LOOK_MIN {
            // (With worker threads, a rule whose look-ups into a large head
            // would drop a quarter of its derivations is trusted: see
            // `Engine::shares_looks`.)
            let strict = large && !self.shares_looks();
            self.looks[plan.rule as usize] = pays(probes, drops, strict);
        }
        if found && marking() && self.rels[head].markable() {
            // (No record the merge stored is higher than its buffer's highest.)
            let top = pending.recs[..n].iter().fold(0, |top, r| top.max(r.height));
            self.rels[head].mark_merged(before, top);
        }
        pending.clear();
        self.rels[head].settle_grid();
        self.conf_raised |= raised;
        self.derived_total += new_facts;
        self.fact_count += new_facts;
        self.rule_new[plan.rule as usize] += new_facts as u64;
        self.account(head);
        if let Some(max) = self.options.budget.max_facts
            && self.derived_total > max
        {
            return Err(self.limit_error(Limit::MaxFacts, Some(plan.rule)));
        }
        self.check_memory(0, Some(plan.rule))
    }
}

/// The bytes a vector of `len` elements of `elem` bytes in `cap` allocates when
/// `add` more are pushed (0 when they fit).
pub(crate) fn grow_bytes(len: usize, cap: usize, add: usize, elem: usize) -> usize {
    if len + add <= cap {
        0
    } else {
        // (Or to past the allocator's heap: see `reserve_past_heap`.)
        (cap * 2).max(len + add).max(past_heap(cap, elem)) * elem
    }
}

/// Whether `plan` reads one relation of the stratum `in_stratum` marks, once (its
/// rule is linear in the stratum: that one read is the variant's delta).
fn reads_one_of(plan: &Plan, in_stratum: &[bool]) -> bool {
    let mut reads = Vec::new();
    collect_reads(&plan.steps, &mut reads);
    reads.iter().filter(|&&r| in_stratum[r]).count() == 1
}

/// Every relation a plan's steps read (aggregate bodies included).
fn collect_reads(steps: &[Step], out: &mut Vec<usize>) {
    for step in steps {
        match step {
            Step::Scan { rel, .. } | Step::Absent { rel, .. } => out.push(*rel as usize),
            Step::Aggregate(agg) => collect_reads(&agg.body, out),
            Step::Filter { .. } | Step::Test { .. } | Step::Assign { .. } => {}
        }
    }
}

/// Whether a derivation of record `new` leaves the fact it finds stored as it
/// is: the fact's record is `old`, or else (`None`) the fact was handed out (see
/// [`Handed`]), which no derivation changes.
#[inline(always)]
fn unchanged(old: Option<Meta>, new: impl FnOnce() -> Meta, provenance: bool) -> bool {
    match old {
        Some(old) => !supersedes(new(), old, provenance).0,
        None => {
            #[cfg(test)]
            HANDED_DROPS.with(|c| c.set(c.get() + 1));
            true
        }
    }
}

/// Whether derivation record `new` replaces `old` as a fact's best (`.0`), and
/// whether it changes the fact for its dependents (`.0` and a higher confidence or,
/// with provenance, a smaller height at the same confidence: `.1`). Best is the
/// highest confidence, then (with provenance) the least height, then the lowest rule;
/// the order is transitive, so a derivation that does not replace a fact's record
/// never replaces a later, better one either.
#[inline]
fn supersedes(new: Meta, old: Meta, provenance: bool) -> (bool, bool) {
    if provenance {
        let improved = new.conf > old.conf || (new.conf == old.conf && new.height < old.height);
        let tie = new.conf == old.conf && new.height == old.height;
        (improved || (tie && new.rule < old.rule), improved)
    } else {
        (new.conf > old.conf, new.conf > old.conf)
    }
}

impl Emitter<'_> {
    /// [`Emitter::narrow_rows`] for views of which one or both are weighted, by the
    /// head's arity; `None` when it has no such loop.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn weighted_rows(
        &mut self,
        frame: &mut Frame,
        scan: &TailScan<'_>,
        from: Narrow<'_>,
        to: Narrow<'_>,
        rows: &[u32],
        conf: f64,
        height: u32,
    ) -> Option<Option<usize>> {
        Some(match scan.tail.head.len() {
            1 => self.narrow_rows::<1, true, false>(frame, scan, from, to, rows, conf, height),
            2 => self.narrow_rows::<2, true, false>(frame, scan, from, to, rows, conf, height),
            3 => self.narrow_rows::<3, true, false>(frame, scan, from, to, rows, conf, height),
            4 => self.narrow_rows::<4, true, false>(frame, scan, from, to, rows, conf, height),
            _ => return None,
        })
    }

    /// [`Sink::rows`](exec::Sink::rows) for a tail without checks, from a narrow
    /// relation (`from`) into a narrow head relation (`to`): each row's confidence
    /// is the one its relation shares (with `W`, either may be a weighted view whose
    /// rows hold their own), and its head cells are the outer binding's with the
    /// row's columns put in.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn narrow_rows<const N: usize, const W: bool, const G: bool>(
        &mut self,
        frame: &mut Frame,
        scan: &TailScan<'_>,
        from: Narrow<'_>,
        to: Narrow<'_>,
        rows: &[u32],
        conf: f64,
        height: u32,
    ) -> Option<usize> {
        let binding = self.row_binding::<N>(frame, scan, from, to, conf, height);
        let (plan, out) = (self.plan, &mut *self.pending);
        narrow_loop::<N, W, G>(
            plan,
            out,
            self.provenance,
            frame,
            scan,
            (from, to),
            rows,
            &binding,
        )
    }

    /// [`Emitter::narrow_rows`] for a tail with checks or comparisons, unweighted:
    /// the rows that pass them ([`narrow_passes`]), up to [`PASSING`] at a time,
    /// through the narrow loop. Returns, when the buffer filled first, the row (of
    /// `rows`) after which the run pauses.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn passing_rows<const N: usize, const G: bool>(
        &mut self,
        frame: &mut Frame,
        scan: &TailScan<'_>,
        from: Narrow<'_>,
        to: Narrow<'_>,
        rows: &[u32],
        conf: f64,
        height: u32,
    ) -> Option<usize> {
        #[cfg(test)]
        PASSING_CALLS.with(|c| c.set(c.get() + 1));
        let binding = self.row_binding::<N>(frame, scan, from, to, conf, height);
        let (plan, out) = (self.plan, &mut *self.pending);
        // The rows of a chunk that pass, and where each stands in it.
        let mut passing = [0u32; PASSING];
        let mut at = [0u8; PASSING];
        for (c, chunk) in rows.chunks(PASSING).enumerate() {
            let mut n = 0;
            for (k, &row) in chunk.iter().enumerate() {
                if narrow_passes(scan, from.words(row), &frame.slots) {
                    (passing[n], at[n]) = (row, k as u8);
                    n += 1;
                }
            }
            if n == 0 {
                continue;
            }
            let pause = narrow_loop::<N, false, G>(
                plan,
                out,
                self.provenance,
                frame,
                scan,
                (from, to),
                &passing[..n],
                &binding,
            );
            if let Some(p) = pause {
                return Some(c * PASSING + usize::from(at[p]));
            }
        }
        None
    }

    /// The narrow loop's binding for a tail's rows under the outer binding in
    /// `frame` (of confidence `conf` and height `height`).
    #[inline(always)]
    fn row_binding<const N: usize>(
        &self,
        frame: &Frame,
        scan: &TailScan<'_>,
        from: Narrow<'_>,
        to: Narrow<'_>,
        conf: f64,
        height: u32,
    ) -> Binding<N> {
        let (plan, out) = (self.plan, &*self.pending);
        let provenance = self.provenance;
        // Head cell `i` is `outer[i] | words[col[i]] & mask[i]`: the value the outer
        // binding fixes (and an empty mask), or a column of the row (and 0 outside),
        // so that every cell takes the same few instructions and no branch.
        let mut outer = [0u64; N];
        let mut col = [0usize; N];
        let mut mask = [0u64; N];
        for (i, &src) in scan.tail.head.iter().enumerate().take(N) {
            match src {
                Src::Const(c) => outer[i] = c,
                Src::Slot(s) => outer[i] = frame.slots[s],
                Src::Col(c) => (col[i], mask[i]) = (c, u64::from(u32::MAX)),
            }
        }
        let new_conf = plan.confidence * conf.min(from.conf);
        // Premises as a derivation word: the scanned row is the only part that
        // changes from row to row.
        let premise_word = out
            .word
            .filter(|_| provenance && out.record)
            .and_then(|w| w.around(&frame.facts, scan.fact));
        Binding {
            outer,
            col,
            mask,
            conf,
            height,
            new_conf,
            found: Found::of(new_conf, to.conf),
            premise_word,
            first_kept: false,
        }
    }

    /// [`Sink::pairs`](exec::Sink::pairs) for a head of `N` cells: for each row of the scan
    /// before the tail (`before`), its look-up in the tail's index, then the narrow
    /// loop over the candidates it finds, with what the row fixes set up for them.
    /// With `W`, any of the three views may be weighted (its rows hold their own
    /// confidences).
    ///
    /// While nearly every look-up drops its derivation, the run takes a loop of
    /// its own ([`Emitter::pairs_run`] with `D`) that looks up each binding's
    /// candidates before it sets up the narrow loop for them: most bindings then
    /// drop all their candidates for little more than the look-ups. Elsewhere
    /// that would set up twice the bindings that keep a derivation.
    #[inline(always)]
    fn pairs_of<const N: usize, const W: bool, const F: bool, const G: bool>(
        &mut self,
        views: (Narrow<'_>, Narrow<'_>, Narrow<'_>),
        args: PairArgs<'_>,
    ) -> (Option<(usize, usize)>, u64) {
        if !W && self.pending.look.on && self.pending.look.mostly {
            self.pairs_run::<N, W, F, true, G>(views, args)
        } else {
            self.pairs_run::<N, W, F, false, G>(views, args)
        }
    }

    /// [`Emitter::pairs_of`], with (`D`) or without the look-ups of a binding's
    /// candidates before its narrow loop; with `G`, into a head kept in a grid
    /// (see [`dropped_prefix`]).
    #[inline(never)]
    fn pairs_run<const N: usize, const W: bool, const F: bool, const D: bool, const G: bool>(
        &mut self,
        views: (Narrow<'_>, Narrow<'_>, Narrow<'_>),
        (frame, scan, pair, rows, start, conf, height): PairArgs<'_>,
    ) -> (Option<(usize, usize)>, u64) {
        let cells = HeadCells::<N>::of(scan, pair.pair);
        let fixed = cells.fixed(&frame.slots);
        let dense = if F {
            None
        } else {
            scan.rel.dense_slots(pair.index)
        };
        let same = pair.fixed.unwrap_or(&[]);
        let args = (frame, scan, pair, rows, start, conf, height);
        self.pair_loop::<N, W, F, D, G>(views, &cells, fixed, dense, same, args)
    }

    /// [`Emitter::pairs_of`] for groups of rows of the scan before the pair scan
    /// ([`exec::Sink::groups`]): each group's row of that scan bound into the
    /// frame in turn, then its rows of the pair scan taken as
    /// [`Emitter::pairs_run`] takes them, with the look-ups first (`D`) or not
    /// chosen group by group as `pairs_of` chooses them call by call. Returns,
    /// when the buffer filled first, the group, its row and the candidate after
    /// which the run pauses, and the candidates visited.
    #[inline(never)]
    fn groups_run<const N: usize, const F: bool, const G: bool>(
        &mut self,
        views: (Narrow<'_>, Narrow<'_>, Narrow<'_>),
        (frame, scan, pair, outer, groups): GroupArgs<'_>,
    ) -> (Option<(usize, usize, usize)>, u64) {
        let cells = HeadCells::<N>::of(scan, pair.pair);
        let dense = if F {
            None
        } else {
            scan.rel.dense_slots(pair.index)
        };
        let provenance = self.provenance;
        let mut visited = 0;
        for (g, group) in groups.iter().enumerate() {
            let words = outer.rel.row(group.row);
            for &(c, s) in outer.binds {
                frame.slots[s] = words.get(c);
            }
            if provenance {
                frame.facts[outer.fact] = FactId {
                    rel: outer.rel_id,
                    row: group.row,
                };
            }
            let fixed = cells.fixed(&frame.slots);
            let args = (
                &mut *frame,
                scan,
                pair,
                group.rows,
                0,
                group.conf,
                group.height,
            );
            let (pause, seen) = if self.pending.look.on && self.pending.look.mostly {
                self.pair_loop::<N, false, F, true, G>(
                    views,
                    &cells,
                    fixed,
                    dense,
                    group.fixed,
                    args,
                )
            } else {
                self.pair_loop::<N, false, F, false, G>(
                    views,
                    &cells,
                    fixed,
                    dense,
                    group.fixed,
                    args,
                )
            };
            visited += seen;
            if let Some((k, c)) = pause {
                return (Some((g, k, c)), visited);
            }
        }
        (None, visited)
    }

    /// The loop of [`Emitter::pairs_run`] over `rows`, the pair scan's, with the
    /// head's cells as `cells` takes them (`fixed`: the values the frame fixes),
    /// the tail's dense index `dense` (none with `F`), and with `F` the candidates
    /// `same` of every row.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn pair_loop<const N: usize, const W: bool, const F: bool, const D: bool, const G: bool>(
        &mut self,
        (before, from, to): (Narrow<'_>, Narrow<'_>, Narrow<'_>),
        cells: &HeadCells<N>,
        fixed: [u64; N],
        dense: Option<&[RowList]>,
        same: &[u32],
        (frame, scan, pair, rows, mut start, conf, height): PairArgs<'_>,
    ) -> (Option<(usize, usize)>, u64) {
        let (plan, provenance) = (self.plan, self.provenance);
        let p = pair.pair;
        let HeadCells {
            col_b,
            mask_b,
            col,
            mask,
            ..
        } = *cells;
        // Unweighted views: every row's confidence is its relation's.
        let shared = conf.min(before.conf);
        let new_conf = plan.confidence * shared.min(from.conf);
        let found = Found::of(new_conf, to.conf);
        // With `D`, unweighted, where a found fact stored low enough keeps its
        // record (any but a higher confidence), each binding's candidates are
        // looked up here first, while look-ups are on: most bindings of a
        // recursive rule drop them all, and then never set up the narrow loop.
        // The candidate a look-up keeps starts it.
        let first_drops = D && !W && !matches!(found, Found::Kept);
        // The stored height under which a found fact keeps its record: the
        // binding's, with provenance and equal confidences (see `narrow_loop`).
        let tie_height = provenance && matches!(found, Found::Tie);
        // Premises as a derivation word: the two scanned rows change.
        let out = &mut *self.pending;
        let around = out
            .word
            .filter(|_| provenance && out.record)
            .map(|w| w.around_two(&frame.facts, p.fact, scan.fact));
        let mut visited = 0;
        let key = p.key.unwrap_or(0);
        let same_n = exec::below(same, pair.limit);
        for (k, &row) in rows.iter().enumerate() {
            // A weighted stratum's delta rows are the facts handed out at one rank,
            // spread over the relation: fetched ahead, their misses overlap.
            if W && let Some(&ahead) = rows.get(k + ROWS_AHEAD) {
                before.prefetch_row(ahead);
            }
            let words = if W {
                before.weighted_words(row)
            } else {
                before.words(row)
            };
            let (found_rows, n) = if F {
                (same, same_n)
            } else {
                let cell = u64::from(words[key]);
                let found = match dense {
                    Some(slots) => dense_rows(slots, cell),
                    None => scan.rel.lookup(pair.index, &[cell]).0,
                };
                (found, exec::below(found, pair.limit))
            };
            let mut first = std::mem::take(&mut start).min(n);
            let mut cands = &found_rows[first..n];
            if cands.is_empty() {
                continue;
            }
            visited += cands.len() as u64;
            let out = &mut *self.pending;
            let mut first_kept = false;
            // (Only where no pause can fall among the candidates: one falls where
            // the narrow loop would put it.)
            if first_drops && out.look.on && out.derivations + (cands.len() as u64) < FLUSH as u64 {
                let outer =
                    std::array::from_fn(|i| fixed[i] | u64::from(words[col_b[i]]) & mask_b[i]);
                let h = if provenance {
                    height.max(before.height(words))
                } else {
                    0
                };
                let keep_under = if tie_height { h } else { u32::MAX };
                let skip = dropped_prefix::<N, true, G>(
                    (from, to),
                    cands,
                    (&outer, &col, &mask, h),
                    (keep_under, provenance, plan.rule),
                );
                out.derivations += skip as u64;
                out.look.settle(skip as u32, skip as u32);
                if skip == cands.len() {
                    continue;
                }
                cands = &cands[skip..];
                first += skip;
                first_kept = true;
            }
            let h = if provenance {
                // (With premises as a word, the word holds this row: no premise
                // list reads its fact.)
                if around.is_none() {
                    frame.facts[p.fact] = FactId { rel: p.rel, row };
                }
                height.max(before.height(words))
            } else {
                0
            };
            let binding = Binding {
                outer: std::array::from_fn(|i| fixed[i] | u64::from(words[col_b[i]]) & mask_b[i]),
                col,
                mask,
                conf: if W {
                    conf.min(before.conf_of(words))
                } else {
                    shared
                },
                height: h,
                new_conf,
                found,
                premise_word: around
                    .map(|(word, at, factor)| (word | u64::from(row).wrapping_mul(at), factor)),
                first_kept,
            };
            let pause = narrow_loop::<N, W, G>(
                plan,
                out,
                provenance,
                frame,
                scan,
                (from, to),
                cands,
                &binding,
            );
            if let Some(c) = pause {
                return (Some((k, first + c)), visited);
            }
        }
        (None, visited)
    }
}

/// What [`Emitter::groups_run`] takes besides the views: the join's frame, the
/// tail's scan, the pair's, the outer scan's and the groups.
type GroupArgs<'a> = (
    &'a mut Frame,
    &'a TailScan<'a>,
    &'a PairScan<'a>,
    &'a exec::Outer<'a>,
    &'a [exec::Group<'a>],
);

/// Where each head cell of a pair scan's derivations comes from: a constant, a
/// slot bound before the pair scan, a column of the pair scan's row (`col_b`,
/// `mask_b`) or one of the tail's candidate (`col`, `mask`); in arrays of the
/// head's width, so that every cell takes the same few instructions and no
/// branch.
#[derive(Clone, Copy)]
struct HeadCells<const N: usize> {
    consts: [u64; N],
    slots: [Option<usize>; N],
    col_b: [usize; N],
    mask_b: [u64; N],
    col: [usize; N],
    mask: [u64; N],
}

impl<const N: usize> HeadCells<N> {
    fn of(scan: &TailScan<'_>, pair: &Pair) -> HeadCells<N> {
        let mut cells = HeadCells {
            consts: [0; N],
            slots: [None; N],
            col_b: [0; N],
            mask_b: [0; N],
            col: [0; N],
            mask: [0; N],
        };
        for (i, (&src, &b)) in scan.tail.head.iter().zip(&pair.head).enumerate().take(N) {
            match (src, b) {
                (_, Some(c)) => (cells.col_b[i], cells.mask_b[i]) = (c, u64::from(u32::MAX)),
                (Src::Const(c), None) => cells.consts[i] = c,
                (Src::Slot(s), None) => cells.slots[i] = Some(s),
                (Src::Col(c), None) => (cells.col[i], cells.mask[i]) = (c, u64::from(u32::MAX)),
            }
        }
        cells
    }

    /// The values the frame's `slots` (and the constants) fix, 0 elsewhere.
    #[inline(always)]
    fn fixed(&self, slots: &[u64]) -> [u64; N] {
        std::array::from_fn(|i| match self.slots[i] {
            Some(s) => slots[s],
            None => self.consts[i],
        })
    }
}

/// What [`Emitter::pairs_of`] takes besides the views: the join's frame, the
/// tail's scan, the pair's, the rows before the tail, the candidate of the first
/// of them to start from, and the binding's confidence and height.
type PairArgs<'a> = (
    &'a mut Frame,
    &'a TailScan<'a>,
    &'a PairScan<'a>,
    &'a [u32],
    usize,
    f64,
    u32,
);

/// What a binding fixes for the narrow loop over its tail candidates.
struct Binding<const N: usize> {
    /// Head cell `i` is `outer[i] | words[col[i]] & mask[i]` of a candidate's words:
    /// the value the binding fixes (and an empty mask), or a column of the
    /// candidate (and 0 outside), so that every cell takes the same few
    /// instructions and no branch.
    outer: [u64; N],
    col: [usize; N],
    mask: [u64; N],
    /// The binding's confidence and height.
    conf: f64,
    height: u32,
    /// The derivations' confidence when rows share their relation's, and what
    /// finding a derivation's fact then means.
    new_conf: f64,
    found: Found,
    /// With provenance, premises as a derivation word: the word but for the
    /// candidate's row, and the factor that places that row (`row << shift` as
    /// `row * factor`; 0 when the candidate's premise is not recorded).
    premise_word: Option<(u64, u64)>,
    /// Whether a look-up already found that the first candidate's derivation is
    /// not dropped (it is not looked up again).
    first_kept: bool,
}

/// Rows of a tail with checks or comparisons that [`Emitter::passing_rows`]
/// takes through the narrow loop at a time.
const PASSING: usize = 64;

/// Whether a narrow row with words `words` passes the tail's checks and
/// comparisons (as [`TailScan::passes`] decides for its cells): equality of two
/// values of any type but a float is equality of their bits (symbols are
/// interned), and the others are compared as [`exec::compare`] compares them.
#[inline(always)]
fn narrow_passes(scan: &TailScan<'_>, words: &[u32], slots: &[u64]) -> bool {
    let value = |src: Src| match src {
        Src::Const(c) => c,
        Src::Slot(s) => slots[s],
        Src::Col(c) => u64::from(words[c]),
    };
    scan.tail
        .checks
        .iter()
        .all(|&(c, v)| u64::from(words[c]) == value(v))
        && scan.tail.filters.iter().all(|&(op, ty, a, b)| {
            let (a, b) = (value(a), value(b));
            match op {
                CmpOp::Eq if ty != ColumnType::Float => a == b,
                CmpOp::Ne if ty != ColumnType::Float => a != b,
                _ => exec::compare(op, ty, a, b, scan.syms),
            }
        })
}

/// The narrow loop: the derivations `binding` makes with each of `rows`,
/// candidates of the tail (`scan`) from a narrow relation (`from`) into a narrow
/// head relation (`to`), each looked up there first while look-ups are on and
/// dropped if it would change nothing, the others buffered. Each row's confidence
/// is the one its relation shares (with `W`, either view may be weighted: its rows
/// hold their own). Returns, when the buffer filled first, the row after which the
/// run pauses.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn narrow_loop<const N: usize, const W: bool, const G: bool>(
    plan: &Plan,
    out: &mut Pending,
    provenance: bool,
    frame: &mut Frame,
    scan: &TailScan<'_>,
    (from, to): (Narrow<'_>, Narrow<'_>),
    rows: &[u32],
    binding: &Binding<N>,
) -> Option<usize> {
    let Binding {
        outer,
        col,
        mask,
        conf,
        height,
        new_conf,
        found,
        premise_word,
        first_kept,
    } = *binding;
    // The rows taken before the buffer asks for a merge (dropped derivations
    // count too), and where the run then pauses.
    let room = (FLUSH as u64).saturating_sub(out.derivations).max(1);
    let (rows, pause) = match usize::try_from(room) {
        Ok(room) if room <= rows.len() => (&rows[..room], Some(room - 1)),
        _ => (rows, None),
    };
    out.derivations += rows.len() as u64;
    // A found fact stored this high or lower keeps its record, whatever the
    // candidate: any, when the derivations' confidence is below the head's, or
    // without heights; with provenance and equal confidences, one no higher than
    // the binding (a derivation stands one above its binding or higher; a
    // binding's height is a stored fact's, never u32::MAX: no proof is that deep.
    // Only the least-height pass marks facts so, and it hides them from joins).
    // None when a higher confidence supersedes any: there is nothing to look up.
    let keeps = match found {
        Found::Kept => None,
        Found::Tie if provenance => Some(height),
        Found::Tie | Found::Dropped => Some(u32::MAX),
    };
    // Look-ups are counted here and settled once, after the batch.
    let look = out.look.on && (W || keeps.is_some());
    let keep_under = keeps.unwrap_or(0);
    let mut drops = 0;
    // Unweighted, the rows whose derivations a look-up drops (nearly all, where
    // look-ups pay) run in a loop of their own, which holds little but the probe;
    // a row it stops at is kept, without a second look.
    let dropping = !W && look;
    let mut at = 0;
    let mut checked = first_kept;
    while at < rows.len() {
        if dropping && !std::mem::take(&mut checked) {
            let skip = dropped_prefix::<N, false, G>(
                (from, to),
                &rows[at..],
                (&outer, &col, &mask, height),
                (keep_under, provenance, plan.rule),
            );
            drops += skip;
            at += skip;
            if at == rows.len() {
                break;
            }
        }
        let row = rows[at];
        at += 1;
        let words = if W {
            from.weighted_words(row)
        } else {
            from.words(row)
        };
        let cells: [u64; N] =
            std::array::from_fn(|i| outer[i] | u64::from(words[col[i]]) & mask[i]);
        let tag = tag_of_cells(&cells);
        // The derivation's record, worked out where it is needed: most
        // derivations a look-up drops never need their height.
        let new = || Meta {
            conf: if W {
                plan.confidence * conf.min(from.conf_of(words))
            } else {
                new_conf
            },
            height: if provenance {
                height.max(from.height(words)).saturating_add(1)
            } else {
                0
            },
            rule: plan.rule,
        };
        if W && look
            && to
                .find_unhanded(&cells, tag)
                .is_some_and(|old| unchanged(old, new, provenance))
        {
            drops += 1;
            continue;
        }
        let new = new();
        out.cells.extend_from_slice(&cells);
        if let Some((word, factor)) = premise_word {
            out.keep_word(tag, new, word | (row as u64).wrapping_mul(factor));
        } else {
            if provenance {
                frame.facts[scan.fact] = FactId {
                    rel: scan.rel_id,
                    row,
                };
            }
            out.keep(plan, frame, tag, new, provenance);
        }
    }
    if look {
        // Every row was looked up.
        out.look.settle(rows.len() as u32, drops as u32);
    }
    pause
}

/// The dedup digest of a derivation's head cells (as `hash_cells` makes it).
#[inline(always)]
fn tag_of_cells<const N: usize>(cells: &[u64; N]) -> u32 {
    let mut hasher = rustc_hash::FxHasher::default();
    for &v in cells {
        hasher.write_u64(v);
    }
    tag_of(hasher.finish())
}

/// How many of `rows`, from the first, make (with a binding's head cells `outer`,
/// `col` and `mask`, as [`Binding`]'s, and its height, from unweighted narrow
/// relation `from`) derivations that a look-up in unweighted narrow head `to`
/// drops: their fact is there, stored no higher than `keep_under`, or else with a
/// record at least as good as theirs (with `provenance`, a height one above the
/// binding's and the row's; rule `rule`).
///
/// With `S`, a head whose last cell alone comes from the candidate takes a loop
/// of its own, which hashes the other cells once. (Pair scans that look up first
/// take it. The narrow loop, which calls this again after each kept derivation,
/// does not: there it measured no better.)
///
/// With `G`, a head of two cells that keeps a grid of its rows by their cells
/// (`Narrow::grid`) is looked up there: one word and the row's record, no hash
/// (cells out of the grid's range are no row's). Callers into other heads take the
/// instances without it, so that their loops compile as they would without
/// grids.
#[inline(always)]
fn dropped_prefix<const N: usize, const S: bool, const G: bool>(
    (from, to): (Narrow<'_>, Narrow<'_>),
    rows: &[u32],
    (outer, col, mask, height): (&[u64; N], &[usize; N], &[u64; N], u32),
    (keep_under, provenance, rule): (u32, bool, u32),
) -> usize {
    // Whether a found fact's record makes the derivation with a candidate's
    // `words` a drop: decided without the candidate's height where `keep_under`
    // does.
    let drops = |(old_height, old_rule): (u32, u32), words: &[u32]| {
        old_height <= keep_under || {
            let new = if provenance {
                height.max(from.height(words)).saturating_add(1)
            } else {
                0
            };
            (new, rule) >= (old_height, old_rule)
        }
    };
    // A head of two cells whose rows the relation keeps by their cells (a grid)
    // is looked up there, without a hash: the grid holds every row, so cells
    // out of its range are no row's.
    if G && N == 2
        && let Some(grid) = to.grid
    {
        // A fact found in a row marked no higher than `keep_under` drops the
        // derivation without its record read: the read, a row anywhere in the
        // relation, would be the look-up's one cache miss. (`u32::MAX` is no
        // row: a slot's row is its value less one, and an empty slot holds 0.)
        let below = if keep_under == u32::MAX {
            u32::MAX - 1
        } else {
            to.below(keep_under)
        };
        let kept = |row: u32, words: &[u32]| {
            row >= below && (row == u32::MAX || !drops(to.record(row), words))
        };
        // Most heads take their last cell from the candidate and the first from
        // the binding: the slots of that first cell are found once.
        if mask[0] == 0
            && mask[N - 1] != 0
            && let Some(line) = grid.line(outer[0])
        {
            let c = col[N - 1];
            for (k, &row) in rows.iter().enumerate() {
                let words = from.words(row);
                let slot = line.get(words[c] as usize).copied().unwrap_or(0);
                if kept(slot.wrapping_sub(1), words) {
                    return k;
                }
            }
            return rows.len();
        }
        for (k, &row) in rows.iter().enumerate() {
            let words = from.words(row);
            let cells: [u64; N] =
                std::array::from_fn(|i| outer[i] | u64::from(words[col[i]]) & mask[i]);
            if kept(grid.find(cells[0], cells[N - 1]).unwrap_or(u32::MAX), words) {
                return k;
            }
        }
        return rows.len();
    }
    // Most heads take one cell, their last, from the candidate: the hash of the
    // others is then the binding's, worked out once.
    if S && let Some(last) = N.checked_sub(1)
        && mask[last] != 0
        && mask[..last].iter().all(|&m| m == 0)
    {
        let c = col[last];
        let state = hash_state(&outer[..last]);
        let mut cells = *outer;
        for (k, &row) in rows.iter().enumerate() {
            let words = from.words(row);
            let v = u64::from(words[c]);
            cells[last] = v;
            let dropped = to
                .find_record(&cells, tag_after(state, v))
                .is_some_and(|record| drops(record, words));
            if !dropped {
                return k;
            }
        }
        return rows.len();
    }
    for (k, &row) in rows.iter().enumerate() {
        let words = from.words(row);
        let cells: [u64; N] =
            std::array::from_fn(|i| outer[i] | u64::from(words[col[i]]) & mask[i]);
        let dropped = to
            .find_record(&cells, tag_of_cells(&cells))
            .is_some_and(|record| drops(record, words));
        if !dropped {
            return k;
        }
    }
    rows.len()
}

/// How far `FxHasher::finish` rotates its state left.
const FX_ROTATE: u32 = 26;

/// The state of the hasher [`tag_of_cells`] uses once it has hashed `cells` (its
/// digest, rotated back), for [`tag_after`].
#[inline(always)]
fn hash_state(cells: &[u64]) -> usize {
    let mut hasher = rustc_hash::FxHasher::default();
    for &v in cells {
        hasher.write_u64(v);
    }
    hasher.finish().rotate_right(FX_ROTATE) as usize
}

/// The dedup digest of the head cells `cells` and `last` after them, from
/// [`hash_state`] of `cells`: what [`tag_of_cells`] makes of them all.
#[inline(always)]
fn tag_after(state: usize, last: u64) -> u32 {
    let mut hasher = rustc_hash::FxHasher::with_seed(state);
    hasher.write_u64(last);
    tag_of(hasher.finish())
}

/// How far ahead of its inserts a merge into a large grid fetches their slots.
const GRID_AHEAD: usize = 16;

/// Where a merge puts the facts that appeared or improved: the next delta (a
/// `Vec<u32>` of rows, with their queued bits set), or an ordered stratum's
/// queue ([`Ranked`]), which only the merge of rows of two cells with their own
/// confidences (a weighted closure's) fills as it goes. (A parameter of the
/// merge's type rather than a value it matches: matched, an unordered stratum's
/// merge ran 1.8 % more instructions on the 2,000-node closure; every merge
/// made for `Ranked` as well, 2.3 % more.)
trait Changes {
    /// Row `row` appeared, with record `stored`.
    fn added(&mut self, queued: &mut Queued, row: u32, stored: Meta);
    /// Row `row` improved, its record now `stored`.
    fn improved(&mut self, queued: &mut Queued, row: u32, stored: Meta);
}

impl Changes for Vec<u32> {
    #[inline(always)]
    fn added(&mut self, queued: &mut Queued, row: u32, _: Meta) {
        queued.push(true);
        self.push(row);
    }

    #[inline(always)]
    fn improved(&mut self, queued: &mut Queued, row: u32, _: Meta) {
        if !queued.get(row) {
            queued.set(row, true);
            self.push(row);
        }
    }
}

/// An ordered stratum's queue as a merge into relation `rel` fills it, each
/// fact at its rank as the merge stores it: a fact that changes again later in
/// the round is queued again, at its better rank, and the entry at the old one
/// is stale.
struct Ranked<'a> {
    queue: &'a mut FactQueue,
    rel: u32,
    /// The current delta's rank, with provenance: a fact queued no worse than
    /// it was handed out and has risen since (`rose`, `Order::rose`; a new
    /// fact always ranks below the delta that derived it; without provenance
    /// it may rank level, and rises do not matter).
    handed: Option<Rank>,
    rose: bool,
}

impl Ranked<'_> {
    #[inline]
    fn push(&mut self, row: u32, stored: Meta) {
        let at = rank(stored);
        self.rose |= self.handed.is_some_and(|k| at <= k);
        self.queue.push(at, FactId { rel: self.rel, row });
    }
}

impl Changes for Ranked<'_> {
    #[inline(always)]
    fn added(&mut self, queued: &mut Queued, row: u32, stored: Meta) {
        queued.push(false);
        self.push(row, stored);
    }

    #[inline(always)]
    fn improved(&mut self, _: &mut Queued, row: u32, stored: Meta) {
        self.push(row, stored);
    }
}

/// What [`merge_rows`] did: facts it added, derivations that changed nothing, and
/// whether it raised the confidence of a fact already read.
struct Merged {
    new_facts: usize,
    idle: usize,
    raised: bool,
}

/// The widest rows (in cells) a merge into a narrow relation takes with an insert
/// made for their width ([`merge_narrow`]).
const NARROW_MERGE: usize = 4;

/// [`merge_rows`] into a relation of `arity` cells (1 to [`NARROW_MERGE`]) that
/// holds its rows narrow, their confidences their own (`own`) or shared.
#[allow(clippy::too_many_arguments)]
fn merge_narrow<X: Changes>(
    arity: usize,
    own: bool,
    rel: &mut Relation,
    queued: &mut Queued,
    next: &mut X,
    pending: &Pending,
    ctx: (&Plan, (bool, bool, bool, bool), u32, &Handed),
    st: &mut StratumStats,
) -> Result<Merged> {
    match (arity, own) {
        (1, false) => merge_width::<1, false, X>(rel, queued, next, pending, ctx, st),
        (2, false) => merge_width::<2, false, X>(rel, queued, next, pending, ctx, st),
        (3, false) => merge_width::<3, false, X>(rel, queued, next, pending, ctx, st),
        (4, false) => merge_width::<4, false, X>(rel, queued, next, pending, ctx, st),
        (1, true) => merge_width::<1, true, X>(rel, queued, next, pending, ctx, st),
        (2, true) => merge_width::<2, true, X>(rel, queued, next, pending, ctx, st),
        (3, true) => merge_width::<3, true, X>(rel, queued, next, pending, ctx, st),
        (4, true) => merge_width::<4, true, X>(rel, queued, next, pending, ctx, st),
        _ => merge_rows::<0, false, X>(rel, queued, next, pending, ctx, st),
    }
}

/// How far ahead a pair loop over a weighted delta fetches its rows.
const ROWS_AHEAD: usize = 8;

/// [`merge_rows`] for rows of `N` cells, out of line: the general pass stays as it
/// was laid out in the merge.
#[inline(never)]
fn merge_width<const N: usize, const C: bool, X: Changes>(
    rel: &mut Relation,
    queued: &mut Queued,
    next: &mut X,
    pending: &Pending,
    ctx: (&Plan, (bool, bool, bool, bool), u32, &Handed),
    st: &mut StratumStats,
) -> Result<Merged> {
    merge_rows::<N, C, X>(rel, queued, next, pending, ctx, st)
}

/// The merge's pass over a buffer's derivations ([`Engine::merge`]): each inserted
/// into `rel`, or else its record compared with the stored fact's. With `N` above
/// 0, the relation holds its rows narrow ([`Relation::narrow_layout`] is
/// `Some(C)`) and they have `N` cells: rows that fit go through
/// [`Relation::insert_narrow`].
#[inline(always)]
fn merge_rows<const N: usize, const C: bool, X: Changes>(
    rel: &mut Relation,
    queued: &mut Queued,
    next: &mut X,
    pending: &Pending,
    (plan, (provenance, record, words, finds), unread, handed): (
        &Plan,
        (bool, bool, bool, bool),
        u32,
        &Handed,
    ),
    st: &mut StratumStats,
) -> Result<Merged> {
    let (n, arity) = (pending.len(), plan.head.len());
    let mut raised = false;
    let recs = &pending.recs;
    let mut new_facts = 0;
    // Derivations that change nothing.
    let mut idle = 0;
    debug_assert!(N == 0 || N == arity);
    // (Until a row or a record that does not fit widens the layout.)
    let mut narrow = N > 0;
    // Derivation words in their narrow form (see `Relation::narrow_base`).
    let narrow_words = words && pending.word.is_some_and(|w| w.narrow);
    // Probes of a table that the caches hold need nothing fetched ahead.
    let ahead = rel.probes_miss();
    // Nor do those of a grid standing in for it. Where derivations find their
    // facts (as the last merge's did), the row a slot names is fetched too.
    let grid_ahead = N == 2 && rel.grid_misses();
    let rows_ahead = grid_ahead && finds;
    let width = if N > 0 { N } else { arity };
    let mut settled = Settled::of(rel);
    for k in 0..n {
        if ahead {
            rel.prefetch_probes(|i| recs.get(i).map(|r| r.tag), k);
        }
        if grid_ahead {
            // The two cells of derivation `k`, if there is one.
            let pair = |k: usize| pending.cells.get(k * width..k * width + 2);
            if let Some(c) = pair(k + GRID_AHEAD) {
                rel.prefetch_grid(c[0], c[1]);
            }
            if rows_ahead && let Some(c) = pair(k + GRID_AHEAD / 2) {
                let from = settled.unread();
                rel.prefetch_grid_row(c[0], c[1], |r| r >= from && !(C && handed.get(r)));
            }
        }
        let (cells, meta) = pending.derivation(k, width, plan.rule);
        let fast = if N > 0 && narrow {
            let cells: &[u64; N] = cells.try_into().expect("a row of the head's arity");
            rel.insert_narrow::<N, C>(cells, recs[k].tag, meta)
        } else {
            None
        };
        let (row, new) = match fast {
            Some(inserted) => inserted,
            None => {
                let inserted = rel.insert_tagged(cells, recs[k].tag, meta);
                narrow = narrow && rel.narrow_layout() == Some(C);
                settled = Settled::of(rel);
                inserted
            }
        };
        if new {
            new_facts += 1;
            st.derived += 1;
            if provenance && !record {
                rel.push_unrecorded();
            } else if record && narrow_words {
                rel.push_narrow(pending.words[k]);
            } else if record && words {
                rel.push_word(pending.words[k]);
            } else if record {
                let (a, b) = (pending.starts[k] as usize, pending.starts[k + 1] as usize);
                rel.push_derived(&pending.premises[a..b])?;
            } else {
                rel.push_records(NO_EVIDENCE, None)?;
            }
            next.added(queued, row, meta);
            continue;
        }
        // (Rows of their own confidences only: a relation whose rows share one
        // is marked, and a stratum hands out rows of such relations mostly.)
        if C && handed.get(row) {
            #[cfg(test)]
            HANDED_DROPS.with(|c| c.set(c.get() + 1));
            idle += 1;
            continue;
        }
        // (Rows of their own confidences share none: with `C`, never.)
        if !C && settled.idle(rel, row, meta, provenance) {
            idle += 1;
            continue;
        }
        let old = rel.meta(row);
        raised |= meta.conf > old.conf && row < unread;
        let (better, improved) = supersedes(meta, old, provenance);
        if !better {
            idle += 1;
            continue;
        }
        if provenance {
            if record && narrow_words {
                rel.set_narrow(row, pending.words[k]);
            } else if record && words {
                rel.set_word(row, pending.words[k]);
            } else if record {
                let prem =
                    &pending.premises[pending.starts[k] as usize..pending.starts[k + 1] as usize];
                rel.set_premises(row, prem)?;
            }
            rel.set_meta(row, meta);
        } else {
            rel.set_conf(row, meta.conf);
        }
        // (A record that does not pack, or a confidence of its own, widens the
        // layout. A record replaced may raise the marks.)
        narrow = narrow && rel.narrow_layout() == Some(C);
        settled = Settled::of(rel);
        if improved {
            st.improved += 1;
            // (Without provenance, the stored fact keeps its height.)
            let stored = if provenance {
                meta
            } else {
                Meta {
                    conf: meta.conf,
                    ..old
                }
            };
            next.improved(queued, row, stored);
        }
    }
    Ok(Merged {
        new_facts,
        idle,
        raised,
    })
}

/// What a merge knows of the records of the facts it finds in a relation without
/// reading them: the confidence the rows share (while they do; none where they
/// do not, or where a dedup table rather than a grid finds the facts, since its
/// probe reads a fact's row anyway), and the rows marked lower than the last
/// derivation height asked about (see `Marks`).
struct Settled {
    conf: Option<f64>,
    height: u32,
    below: u32,
}

impl Settled {
    fn of(rel: &Relation) -> Settled {
        Settled {
            conf: (rel.one_confidence().ok().flatten()).filter(|_| rel.grid_on()),
            height: 0,
            below: 0,
        }
    }

    /// The rows below which a fact found is known not to need its record read
    /// (as of the last derivation height asked about: the merge fetches no
    /// rows below them ahead).
    #[inline(always)]
    fn unread(&self) -> u32 {
        if self.conf.is_some() { self.below } else { 0 }
    }

    /// Whether a derivation of record `meta` of the fact in row `row` surely
    /// changes nothing: it does not raise the fact's confidence and, with
    /// provenance, the fact lies in a row marked lower than the derivation.
    /// (Called, not inlined: inlined, it made the merge's loop slower for the new
    /// facts, which never take it.)
    #[inline(never)]
    fn idle(&mut self, rel: &Relation, row: u32, meta: Meta, provenance: bool) -> bool {
        let Some(conf) = self.conf.filter(|&c| meta.conf <= c) else {
            return false;
        };
        if meta.conf < conf || !provenance {
            return true;
        }
        // (A derivation is at least one above its premises: height 0 is an
        // input's, and has no rows lower.)
        if self.height != meta.height {
            self.height = meta.height;
            self.below = meta.height.checked_sub(1).map_or(0, |h| rel.below(h));
        }
        row < self.below
    }
}

/// What finding a derivation's fact already stored means, when the derivation and
/// the stored fact have confidences shared by their relations (see [`supersedes`]).
#[derive(Clone, Copy)]
enum Found {
    /// A higher confidence: the derivation supersedes the stored record.
    Kept,
    /// A lower one: it changes nothing.
    Dropped,
    /// The same: the least height (with provenance), then the lowest rule, decides.
    Tie,
}

impl Found {
    /// For derivations of confidence `new` and stored facts of confidence `old`.
    #[inline]
    fn of(new: f64, old: f64) -> Found {
        if new > old {
            Found::Kept
        } else if new == old {
            Found::Tie
        } else {
            Found::Dropped
        }
    }
}

/// Buffer one derivation of the plan's head for the frame's binding (none when a
/// head expression has no value, or when `head` already holds the fact with a
/// record at least as good: merging it would change nothing).
#[allow(clippy::too_many_arguments)]
#[inline]
fn emit(
    plan: &Plan,
    frame: &mut Frame,
    conf: f64,
    height: u32,
    provenance: bool,
    syms: Syms<'_>,
    head: &Relation,
    out: &mut Pending,
) -> Result<(), Fault> {
    out.derivations += 1;
    let mark = out.cells.len();
    let tag = push_head(plan, frame, syms, &mut out.cells)?;
    let new = Meta {
        conf: plan.confidence * conf,
        height: if provenance {
            height.saturating_add(1)
        } else {
            0
        },
        rule: plan.rule,
    };
    if out
        .look
        .drops(head, &out.cells[mark..], tag, new, provenance)
    {
        out.cells.truncate(mark);
        return Ok(());
    }
    out.keep(plan, frame, tag, new, provenance);
    Ok(())
}

impl LookUps {
    /// Whether a derivation with these head cells and record is dropped here: while
    /// look-ups pay, it is looked up in `head`, and dropped when the fact is there
    /// with a record at least as good. (Most derivations of a recursive rule often
    /// find their fact already there: better dropped here than buffered for the
    /// merge.)
    #[inline(always)]
    fn drops(
        &mut self,
        head: &Relation,
        cells: &[u64],
        tag: u32,
        new: Meta,
        provenance: bool,
    ) -> bool {
        if !self.on {
            return false;
        }
        let dropped = head
            .find_tagged(cells, tag)
            .is_some_and(|row| !supersedes(new, head.meta(row), provenance).0);
        self.count(dropped)
    }

    /// Count a look-up and whether it dropped its derivation; at the end of a
    /// window of look-ups, decide whether they still pay.
    #[inline(always)]
    fn count(&mut self, dropped: bool) -> bool {
        self.probes += 1;
        if dropped {
            self.drops += 1;
        }
        if self.probes == self.window {
            self.decide();
        }
        dropped
    }

    /// At the end of a window of look-ups: whether they still pay.
    #[inline(never)]
    fn decide(&mut self) {
        let (probes, drops) = (u64::from(self.probes), u64::from(self.drops));
        self.on = self.forced.unwrap_or(pays(probes, drops, self.large));
        self.mostly = self.forced == Some(true) || nearly_all(drops, probes);
        self.window = PROBE_WINDOW;
        self.seen.0 += u64::from(self.probes);
        self.seen.1 += u64::from(self.drops);
        self.probes = 0;
        self.drops = 0;
    }

    /// Look-ups made, and derivations they dropped, since the last report.
    fn report(&mut self) -> (u64, u64) {
        let now = (
            self.seen.0 + u64::from(self.probes),
            self.seen.1 + u64::from(self.drops),
        );
        let new = (now.0 - self.reported.0, now.1 - self.reported.1);
        self.reported = now;
        new
    }

    /// Count `probes` look-ups, `drops` of which dropped their derivation (a
    /// batch's); past a window of them, decide whether they still pay.
    #[inline]
    fn settle(&mut self, probes: u32, drops: u32) {
        self.probes += probes;
        self.drops += drops;
        if self.probes >= self.window {
            self.decide();
        }
    }
}

impl Pending {
    /// [`Pending::keep`] for a derivation whose premises are derivation word `word`
    /// (with provenance, recording premises as words).
    #[inline(always)]
    fn keep_word(&mut self, tag: u32, new: Meta, word: u64) {
        self.push_rec(tag, new.height, new.conf);
        self.words.push(word);
    }

    /// Buffer the record of a derivation whose head cells were just appended.
    #[inline(always)]
    fn keep(&mut self, plan: &Plan, frame: &Frame, tag: u32, new: Meta, provenance: bool) {
        self.push_rec(tag, if provenance { new.height } else { 0 }, new.conf);
        if provenance {
            if !self.record {
                return;
            }
            if let Some(w) = self.word {
                self.words.push(w.of(&frame.facts));
                return;
            }
            if self.starts.is_empty() {
                self.starts.push(0);
            }
            if let Some(facts) = &plan.premise_facts {
                for &f in facts {
                    self.premises.push(frame.facts[f]);
                }
            } else {
                push_premises(plan, frame, &mut self.premises);
            }
            self.starts.push(self.premises.len() as u32);
        }
    }
}

/// Append the cells of a derivation's head to `cells` and return their dedup digest
/// (hashed along the way, as `hash_cells` would). Plain variables and constants (the
/// usual head) skip the evaluator's call. On failed arithmetic nothing is appended.
#[inline(always)]
pub(super) fn push_head(
    plan: &Plan,
    frame: &Frame,
    syms: Syms<'_>,
    cells: &mut Vec<u64>,
) -> Result<u32, Fault> {
    let mark = cells.len();
    let mut hasher = rustc_hash::FxHasher::default();
    for e in &plan.head {
        let v = match e {
            CExpr::Slot(s) => frame.slots[*s],
            CExpr::Const(c) => *c,
            _ => match exec::eval(e, &frame.slots, syms) {
                Ok(v) => v,
                Err(f) => {
                    cells.truncate(mark);
                    return Err(f);
                }
            },
        };
        hasher.write_u64(v);
        cells.push(v);
    }
    Ok(tag_of(hasher.finish()))
}

/// Append a derivation's premises in record form: each positive premise's fact, and
/// for an aggregate a marker holding the count followed by every aggregated fact.
pub(super) fn push_premises(plan: &Plan, frame: &Frame, out: &mut Vec<FactId>) {
    for p in &plan.recorded {
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

/// `rule` with its `i`-th literal, a negation, read as a positive atom: what probes
/// whether new facts of the negated relation block a derivation.
pub(crate) fn negation_probe(rule: &crate::ir::Rule, i: usize) -> crate::ir::Rule {
    let mut probe = rule.clone();
    if let Some(Literal::Negated(a)) = probe.body.get(i).cloned() {
        probe.body[i] = Literal::Atom(a);
    }
    probe
}

/// The changed facts of a stratum whose confidences may differ, handed out best
/// first: each round's delta is the facts queued at the best rank (highest
/// confidence, then least height; see [`rank`]) among all queued and not yet handed
/// out, the others wait.
///
/// In a stratum whose rules are linear in it (each reads one of its relations, once:
/// its variant's delta), a rule reads a fact of the stratum only once it is handed
/// out. A derivation ranks below each of its premises (its confidence is the
/// rule's, at most 1, times their least; its height is one more than their
/// greatest; without provenance there are no heights, and it may rank level), so
/// every derivation of a round ranks below the round's delta, or level with it, and
/// cannot improve a fact handed out before: a fact handed out is final when it is
/// read. The rounds then record each fact's best derivation outright, and the
/// least-height pass has nothing to re-select. Without this order a weighted
/// closure derives a third of its facts more than once, at rising confidence, and
/// the pass joins every derivation again. (A fact queued again at a rank no worse
/// than the last delta's would be one handed out that rose: that calls the pass in.)
///
/// A non-linear rule reads facts through the old and full versions before they are
/// handed out: one read at a lower confidence and height than its final ones would
/// leave a dependent recorded at a height its premise no longer has. Such strata
/// hand facts out as they change, and the pass re-selects.
///
/// Only strata whose confidences may differ are ordered: with one confidence
/// throughout, the rank is the height, which the rounds meet in order already.
#[derive(Default)]
struct Order {
    /// The facts queued, at their ranks. A fact whose rank rose after it was queued
    /// is also queued at its new rank, the entry at the old one is stale.
    queued: FactQueue,
    /// The rank of the current round's delta (`None` before the first).
    current: Option<Rank>,
    /// Rounds so far, and the facts they handed out.
    rounds: u64,
    handed: u64,
    /// Whether a fact queued since the round began ranks no worse than its delta
    /// (see `Engine::queue_changed`): `Engine::conf_raised` from the next round on.
    rose: bool,
    /// The facts taken out at one rank (kept for its storage).
    taken: Vec<FactId>,
    /// The rows handed out so far, by relation (see [`Handed`]).
    handed_rows: Vec<Handed>,
}

impl Order {
    /// The queue as a merge into relation `rel` fills it, and the rows handed
    /// out where they decide ([`deciding_rows`]).
    fn split(&mut self, rel: u32, provenance: bool, conf_raised: bool) -> (Ranked<'_>, &[Handed]) {
        let ranked = Ranked {
            queue: &mut self.queued,
            rel,
            handed: self.current.filter(|_| provenance),
            rose: false,
        };
        (ranked, deciding_rows(&self.handed_rows, conf_raised))
    }

    /// Bytes allocated, counted against the memory limit.
    fn bytes(&self) -> usize {
        self.queued.bytes()
            + self.taken.capacity() * std::mem::size_of::<FactId>()
            + self.handed_rows.iter().map(Handed::bytes).sum::<usize>()
    }
}

/// The rows of a relation that an ordered stratum has handed out, a bit a row.
///
/// While the ranks handed out only fall (no fact handed out has risen above the
/// delta after it: `Engine::conf_raised`), a fact handed out ranks no worse than
/// the current delta, and every derivation ranks below that delta (or, without
/// provenance, level with it, where only a higher confidence counts). A
/// derivation of a fact handed out then changes nothing, and is dropped on this
/// bit alone: the record it would be compared with is a read from anywhere in
/// the relation's rows, the bits fit a core's caches. (On a weighted closure
/// most derivations of facts stored are of facts handed out.)
#[derive(Default)]
pub(crate) struct Handed {
    bits: Vec<u64>,
}

/// No row handed out (for a stratum that hands none out, or where the bits do
/// not decide: see [`Handed`]).
static NONE_HANDED: Handed = Handed { bits: Vec::new() };

impl Handed {
    /// Whether row `row` was handed out.
    #[inline(always)]
    fn get(&self, row: u32) -> bool {
        crate::eval::relation::bit_of(&self.bits, row)
    }

    /// Mark row `row` handed out.
    #[inline]
    fn set(&mut self, row: u32) {
        let w = row as usize / 64;
        if w >= self.bits.len() {
            self.bits.resize(w + 1, 0);
        }
        self.bits[w] |= 1 << (row % 64);
    }

    /// Bytes allocated.
    fn bytes(&self) -> usize {
        self.bits.capacity() * 8
    }
}

/// Rounds a stratum hands its facts out best first before it checks that they are
/// not too few a round (see [`Engine::keeps_order`]).
const ORDER_TRIAL: u64 = if cfg!(test) { 64 } else { 4096 };

/// Derivations a round of a stratum handing its facts out best first must make on
/// average (a round costs about what a few dozen derivations do).
const ORDER_MIN_WORK: u64 = 4;

/// Which rows of a relation are queued for the next delta: a bit per own row, and a
/// set for the base rows of a layer (so that a layer over a large base allocates
/// nothing per base row). (A byte a row was a byte of every path of a closure: 2.4
/// MiB of the 2,000-node one's peak.)
pub(crate) struct Queued {
    base_len: u32,
    /// The own rows' bits, 64 a word, row `base_len + i` at bit `i % 64` of word
    /// `i / 64`; `len` of them.
    own: Vec<u64>,
    len: usize,
    base: rustc_hash::FxHashSet<u32>,
}

impl Queued {
    /// Nothing queued, for a relation as it is now.
    pub fn for_relation(rel: &Relation) -> Queued {
        Queued::of_rows(rel.len() - rel.own_rows(), rel.own_rows() as usize)
    }

    /// Nothing queued, for `base_len` base rows and `len` own rows.
    fn of_rows(base_len: u32, len: usize) -> Queued {
        Queued {
            base_len,
            own: vec![0; len.div_ceil(64)],
            len,
            base: Default::default(),
        }
    }

    #[inline]
    pub fn get(&self, row: u32) -> bool {
        if row < self.base_len {
            self.base.contains(&row)
        } else {
            let i = (row - self.base_len) as usize;
            debug_assert!(i < self.len);
            self.own[i / 64] >> (i % 64) & 1 == 1
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
            let i = (row - self.base_len) as usize;
            debug_assert!(i < self.len);
            let (w, bit) = (i / 64, 1u64 << (i % 64));
            if queued {
                self.own[w] |= bit;
            } else {
                self.own[w] &= !bit;
            }
        }
    }

    /// Sort `delta`, the rows queued (exactly those whose bit is set). New facts
    /// arrive in ascending order and improved ones in merge order; when the rows span
    /// little more than their number times its logarithm, reading them off the bits
    /// in order is cheaper than sorting them (weighted closures improve a third of
    /// their facts: sorting was a fifth of their evaluation).
    pub fn order(&self, delta: &mut Vec<u32>) {
        if delta.is_sorted() {
            return;
        }
        let (lo, hi) = delta
            .iter()
            .fold((u32::MAX, 0), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        let span = (hi - lo) as usize + 1;
        let log = usize::BITS - delta.len().leading_zeros();
        if lo < self.base_len || span > delta.len() * log as usize {
            delta.sort_unstable();
            return;
        }
        let n = delta.len();
        delta.clear();
        // The set bits of own rows `from..=to`, word by word.
        let (from, to) = ((lo - self.base_len) as usize, (hi - self.base_len) as usize);
        for w in from / 64..=to / 64 {
            let mut bits = self.own[w] & span_bits(w, from, to);
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                delta.push(self.base_len + i as u32);
                bits &= bits - 1;
            }
        }
        debug_assert_eq!(delta.len(), n, "queued bits and the delta disagree");
    }

    /// Clear the bits of `delta`, a round's delta: every row queued is in it (and
    /// in the ordered strata none is left queued), so the bits of the rows it
    /// spans are cleared a word at a time where that is fewer words than rows.
    pub fn clear_delta(&mut self, delta: &[u32]) {
        let (lo, hi) = delta
            .iter()
            .fold((u32::MAX, 0), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        if delta.is_empty() || lo < self.base_len || (hi - lo) as usize / 64 > delta.len() {
            for &row in delta {
                self.set(row, false);
            }
            return;
        }
        let (from, to) = ((lo - self.base_len) as usize, (hi - self.base_len) as usize);
        let words = from / 64..=to / 64;
        // (Every bit set in the span is a row of the delta, whose rows differ.)
        debug_assert_eq!(
            words
                .clone()
                .map(|w| (self.own[w] & span_bits(w, from, to)).count_ones() as usize)
                .sum::<usize>(),
            delta.iter().filter(|&&row| self.get(row)).count(),
            "rows queued that are not in the delta"
        );
        for w in words {
            self.own[w] &= !span_bits(w, from, to);
        }
    }

    /// Room for `rows` more rows (see `reserve_past_heap`), their words zeroed
    /// now, so that a push only sets a bit.
    pub fn reserve(&mut self, rows: usize) {
        let words = (self.len + rows).div_ceil(64);
        let more = words.saturating_sub(self.own.len());
        reserve_past_heap(&mut self.own, more);
        if more > 0 {
            self.own.resize(words, 0);
        }
    }

    /// A row was appended.
    #[inline]
    pub fn push(&mut self, queued: bool) {
        let w = self.len / 64;
        if w == self.own.len() {
            self.own.push(0);
        }
        self.own[w] |= u64::from(queued) << (self.len % 64);
        self.len += 1;
    }

    /// Bytes allocated.
    pub fn bytes(&self) -> usize {
        self.own.capacity() * 8 + self.base.capacity() * 8
    }

    /// At most how many bytes `rows` new rows could allocate.
    pub fn growth_bound(&self, rows: usize) -> usize {
        let words = (self.len + rows).div_ceil(64);
        grow_bytes(
            self.own.len(),
            self.own.capacity(),
            words.saturating_sub(self.own.len()),
            8,
        )
    }
}

/// The bits of word `w` (of 64 bits each) that stand for bits `from..=to`.
#[inline]
fn span_bits(w: usize, from: usize, to: usize) -> u64 {
    let mut bits = u64::MAX;
    if w == from / 64 {
        bits &= u64::MAX << (from % 64);
    }
    if w == to / 64 {
        bits &= u64::MAX >> (63 - to % 64);
    }
    bits
}

#[cfg(test)]
mod queued_tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Push(bool),
        /// Set the row at this fraction of the rows.
        Set(f64, bool),
        /// Take the rows queued from a row at this fraction on, shuffled by
        /// this seed, and put them in order.
        Order(f64, u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => any::<bool>().prop_map(Op::Push),
            4 => (0.0..1.0f64, any::<bool>()).prop_map(|(f, q)| Op::Set(f, q)),
            1 => (0.0..1.0f64, any::<u64>()).prop_map(|(f, k)| Op::Order(f, k)),
        ]
    }

    proptest! {
        /// The bits against a flag a row, over a base, across word boundaries.
        #[test]
        fn queued_bits_are_a_flag_a_row(
            base in 0u32..3,
            start in 0usize..130,
            ops in proptest::collection::vec(op(), 0..400),
        ) {
            let mut q = Queued::of_rows(base, start);
            let mut flags = vec![false; base as usize + start];
            for op in ops {
                match op {
                    Op::Push(v) => {
                        q.reserve(1);
                        q.push(v);
                        flags.push(v);
                    }
                    Op::Set(f, v) if !flags.is_empty() => {
                        let row = (f * flags.len() as f64) as usize;
                        q.set(row as u32, v);
                        flags[row] = v;
                    }
                    Op::Order(f, seed) if !flags.is_empty() => {
                        let from = (f * flags.len() as f64) as usize;
                        let want: Vec<u32> = (from..flags.len())
                            .filter(|&r| flags[r])
                            .map(|r| r as u32)
                            .collect();
                        let mut delta = want.clone();
                        // (A shuffle, so that it is read off the bits or sorted.)
                        let mut x = seed | 1;
                        for i in (1..delta.len()).rev() {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            delta.swap(i, (x % (i as u64 + 1)) as usize);
                        }
                        q.order(&mut delta);
                        prop_assert_eq!(&delta, &want);
                        // The rows from `from` on are the delta now: taken, their
                        // bits are cleared (those below stay).
                        q.clear_delta(&delta);
                        for &r in &delta {
                            flags[r as usize] = false;
                        }
                    }
                    _ => {}
                }
                for (row, &v) in flags.iter().enumerate() {
                    prop_assert_eq!(q.get(row as u32), v);
                }
                prop_assert!(q.bytes() >= (flags.len() - base as usize).div_ceil(64) * 8);
            }
        }
    }
}

#[cfg(test)]
mod spare_tests {
    use super::*;

    #[test]
    fn a_wave_whose_derivations_nearly_all_reach_the_merge_is_merge_bound() {
        assert!(merge_bound(8_000, 7_000) && merge_bound(8_000, 8_000));
        assert!(!merge_bound(8_000, 6_999) && !merge_bound(8_000, 0));
        // Waves expected to make too few are never shared (in tests, every other
        // one is).
        assert!(!shared(SHARE_MIN - 1, u64::MAX, 0));
        assert!(shared(SHARE_MIN, SHARE_MIN, SHARE_MIN));
        // Before the first wave the count is u64::MAX: a wave that is not merge
        // bound, with no overflow (a debug build checks).
        assert!(!merge_bound(u64::MAX, 0) && merge_bound(u64::MAX, u64::MAX));
        assert!(shared(SHARE_MIN, u64::MAX, 0));
    }

    #[test]
    fn a_piece_is_expected_to_make_its_rows_at_its_rules_rate_up_to_a_buffer() {
        let flush = FLUSH as u64;
        // Once the piece paused: a buffer's worth.
        assert_eq!(piece_expected(1, 10, (30, 10), 0), flush);
        // Before any piece of the rule finished: the prior, up to a buffer's worth.
        assert_eq!(piece_expected(0, 10, (0, 0), 1), 1);
        assert_eq!(piece_expected(0, 10, (0, 0), u64::MAX), flush);
        // Otherwise its rows at the rate, rounded up, at most a buffer's worth
        // (a few derivations in tests).
        assert_eq!(piece_expected(0, 2, (1, 1), 0), 2.min(flush));
        assert_eq!(piece_expected(0, 3, (1, 2), 0), 2.min(flush));
        assert_eq!(piece_expected(0, 0, (25, 10), flush), 0);
        assert_eq!(piece_expected(0, 10, (25, 10), 0), 25.min(flush));
        assert_eq!(piece_expected(0, usize::MAX, (u64::MAX, 1), 0), flush);
    }

    #[test]
    fn a_rules_rate_follows_its_latest_pieces() {
        let mut rate = (0, 0);
        for _ in 0..40 {
            rate = decayed(rate, 1_000, 100);
        }
        // (Each eighth is rounded down: about 10 a row.)
        assert!((9 * rate.1..=11 * rate.1).contains(&rate.0), "{rate:?}");
        // The rule's pieces now make ten times as much a row: within 20 pieces
        // the rate is more than eight times what it was.
        for _ in 0..20 {
            rate = decayed(rate, 10_000, 100);
        }
        assert!(rate.0 > 80 * rate.1, "{rate:?}");
        // No overflow, however much is made.
        let big = decayed((u64::MAX, u64::MAX), u64::MAX, usize::MAX);
        assert!(big.0 >= u64::MAX / 8 * 7 && big.1 >= u64::MAX / 8 * 7);
    }

    #[test]
    fn look_ups_into_a_large_head_must_drop_nearly_every_derivation_to_go_on() {
        // A quarter of look-ups dropping pays in a small head, seven eighths in a
        // large one.
        assert!(pays(1024, 256, false) && !pays(1024, 255, false));
        assert!(pays(1024, 896, true) && !pays(1024, 895, true));
        // At the end of a window, three quarters dropped: a small head goes on
        // looking up, a large one stops.
        for (large, on) in [(false, true), (true, false)] {
            let mut look = LookUps {
                on: true,
                window: PROBE_WINDOW,
                large,
                ..LookUps::default()
            };
            look.settle(PROBE_WINDOW, PROBE_WINDOW / 4 * 3);
            assert_eq!(look.on, on, "large: {large}");
            // Three quarters is not nearly all: joins set up every binding's
            // narrow loop again.
            assert!(!look.mostly);
            assert_eq!(
                look.report(),
                (PROBE_WINDOW.into(), (PROBE_WINDOW / 4 * 3).into())
            );
        }
    }

    #[test]
    fn look_ups_that_drop_nearly_all_take_the_joins_loop_for_that() {
        let mut look = LookUps {
            on: true,
            window: PROBE_WINDOW,
            large: true,
            ..LookUps::default()
        };
        look.settle(PROBE_WINDOW, PROBE_WINDOW / 8 * 7);
        assert!(look.on && look.mostly);
        look.settle(PROBE_WINDOW, PROBE_WINDOW / 8 * 7 - 1);
        assert!(!look.on && !look.mostly);
    }

    #[test]
    fn a_digest_finished_from_the_hash_of_the_cells_before_is_the_whole_digest() {
        let cells = [0, 1, 7, u64::from(u32::MAX), 1 << 40, u64::MAX];
        for &a in &cells {
            for &b in &cells {
                assert_eq!(tag_after(hash_state(&[]), a), tag_of_cells(&[a]));
                assert_eq!(tag_after(hash_state(&[a]), b), tag_of_cells(&[a, b]));
                for &c in &cells {
                    assert_eq!(tag_after(hash_state(&[a, b]), c), tag_of_cells(&[a, b, c]));
                }
            }
        }
    }

    proptest::proptest! {
        /// A buffer keeps one confidence for its derivations while they share it,
        /// and each its own once two differ: each reads back what was buffered,
        /// through a clear and a new piece too.
        #[test]
        fn a_buffer_reads_back_each_derivations_confidence(
            pieces in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(vec![1.0, 0.5, 0.25]), 0..40),
                1..4,
            ),
        ) {
            let mut p = Pending::default();
            for confs in &pieces {
                p.clear();
                for (k, &c) in confs.iter().enumerate() {
                    p.push_rec(k as u32, k as u32 * 3, c);
                }
                proptest::prop_assert_eq!(p.len(), confs.len());
                let shared = confs.iter().all(|&c| c == confs[0]);
                proptest::prop_assert_eq!(p.confs.is_empty(), shared);
                for (k, &c) in confs.iter().enumerate() {
                    proptest::prop_assert_eq!(p.conf(k), c);
                    proptest::prop_assert_eq!(p.recs[k].height, k as u32 * 3);
                }
            }
        }
    }

    #[test]
    fn a_finished_piece_keeps_a_small_buffer_and_gives_a_large_one_back() {
        let mut small = Pending::default();
        small.cells.reserve(16);
        small.recs.reserve(8);
        let kept = small.kept();
        assert!(kept.cells.capacity() >= 16 && kept.recs.capacity() >= 8);

        let mut large = Pending::default();
        large
            .recs
            .reserve(SPARE_BYTES / std::mem::size_of::<Rec>() + 1);
        assert!(large.bytes() > SPARE_BYTES);
        large.used = large.recs.capacity() / 4 - 1;
        assert_eq!(large.kept().bytes(), 0);

        let mut busy = Pending::default();
        busy.recs
            .reserve(SPARE_BYTES / std::mem::size_of::<Rec>() + 1);
        busy.used = busy.recs.capacity() / 2;
        assert!(busy.kept().bytes() > SPARE_BYTES);
    }
}
