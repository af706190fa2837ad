//! Physical storage of one relation: flat rows of raw cells, a dedup table, indexes
//! on column sets, and per-row confidence and (optionally) best derivation.
//!
//! Rows are append-only and never move, so a row index is a stable fact id and every
//! index bucket lists its rows in ascending order; readers that must see only an older
//! version of the relation stop at the first row past their limit.
//!
//! A relation may be a layer over a shared, frozen base relation (a per-request
//! overlay): it reads the base's rows, indexes and records in place and keeps only
//! what it adds or changes.
//!
//! Layout per own row (a binary relation, provenance on):
//!
//! - `data`, in 32-bit words: the row's cells (a word each while every own cell
//!   fits in 32 bits, else two), then its record: height and rule packed in one
//!   word while they fit (rules below 4,095, heights below 2^20 − 1), else a word
//!   each; then, once own rows' confidences differ, the confidence (two words;
//!   until then every row shares one). Each part widens once for every row, the
//!   first time a row needs it. So 12 bytes for a binary row of small numbers or
//!   symbols, 28 at the widest;
//! - the dedup table: a 32-bit digest and the row number (`u32`) a slot, in groups
//!   of eight slots that each take one cache line, at load at most 7/8; or, for a
//!   derived relation of two cells dense among their values, a [`Grid`] of its
//!   row numbers by their cells standing in for it;
//! - each index: the row's number (`u32`) in its key's row list. An index on one
//!   column whose keys are small (numbers or symbol ids: every key below twice the
//!   keys plus 2,048) finds a key's list at that position of a vector, 24 bytes a
//!   position; any other index, in a hash table, a 48-byte bucket a key;
//! - with provenance, `deriv`: one `u64` word ([`DerivRec`]) for the best
//!   derivation's premises. A derivation's premise *relations* (its shape, aggregate
//!   markers included) are interned per relation in `shapes`; the word holds either
//!   the premise rows themselves (at most two, each below 2^30, of one of the first
//!   15 short shapes, named by a 4-bit tag) or the shape id and the start of the
//!   rows in the `premises` arena (`u32` per premise; an aggregate marker's entry is
//!   its count). So a derivation with at most two premises costs 8 bytes, a longer
//!   one 8 + 4 per premise. A replaced derivation is written over the old arena
//!   rows when it fits, else appended. While every word of the relation has one
//!   premise row or none, under one of its first four inline shapes, the words
//!   take 4 bytes each ([`Derivs`]): a closure's, whose rule records one premise
//!   and leaves the other to be found by its cells (see `restore.rs`).
//! - `evidence`: a `u32` per row up to the last one with an input record, except
//!   for the rows loaded first, one record each in order (a load's facts): those
//!   are a count and the first record's number. Likewise their derivation words
//!   (input facts have no premises) are a count, not a word a row.
//!
//! A layer keeps the same per-row records for its own rows, and for a changed base
//! row a [`Patch`] whose derivation word refers to the layer's own shapes and arena.

use std::hash::Hasher;
use std::sync::Arc;

use hashbrown::HashTable;
use rustc_hash::FxHashMap;

use crate::diag::{Diagnostic, ErrorCode, Result};
use crate::eval::FactId;

/// `Meta::rule` of an input fact (height 0, no premises).
pub(crate) const INPUT_RULE: u32 = u32::MAX;
/// `FactId::rel` of a marker in a premise list: the next `row` premises are the facts
/// one aggregate aggregated.
pub(crate) const AGG_MARK: u32 = u32::MAX;
/// `Relation::evidence` entry of a row that has no input record.
pub(crate) const NO_EVIDENCE: u32 = u32::MAX;

/// Hash a sequence of cells (unseeded, so output never depends on a random seed).
#[inline]
pub(crate) fn hash_cells(cells: impl Iterator<Item = u64>) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    for c in cells {
        h.write_u64(c);
    }
    h.finish()
}

/// What the evaluator reads and compares per row, kept together so that one
/// cache line serves both joins and merges.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Meta {
    /// Confidence.
    pub conf: f64,
    /// Height of the best derivation: 0 for input facts, else 1 + the highest premise
    /// height (maintained only with provenance).
    pub height: u32,
    /// Rule of the best derivation, or [`INPUT_RULE`].
    pub rule: u32,
}

impl Meta {
    /// The record of an input fact.
    pub fn input(conf: f64) -> Meta {
        Meta {
            conf,
            height: 0,
            rule: INPUT_RULE,
        }
    }
}

/// A row's best derivation's premises in one word. The top four bits are a tag:
/// below [`ARENA_TAG`], the premises are inline, of the relation's inline shape
/// number `tag` (at most two, rows in bits `0..30` and `30..60`; or three, rows in
/// bits `0..20`, `20..40` and `40..60`: the shape's length says which); at [`ARENA_TAG`],
/// their rows are at `premises[start..]` (bits `0..32`) and their shape is bits
/// `32..60`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DerivRec(u64);

/// Bits of a narrow derivation word's row; the tag is above them.
const NARROW_ROW_BITS: u32 = 30;
/// The row bits of a narrow derivation word, and of a wide one's first row.
const NARROW_ROWS: u64 = (1 << NARROW_ROW_BITS) - 1;

impl DerivRec {
    /// The word in 32 bits, when it fits: an inline shape tag below 4 and nothing
    /// past the first premise row's 30 bits (one premise, or none; or more whose
    /// rows after the first are 0). [`UNRECORDED`] is `u32::MAX`. Exact:
    /// [`DerivRec::widen`] gives the word back.
    #[inline(always)]
    fn narrow(self) -> Option<u32> {
        if self.0 == UNRECORDED {
            return Some(u32::MAX);
        }
        let n = (self.0 >> TAG_SHIFT << NARROW_ROW_BITS | self.0 & NARROW_ROWS) as u32;
        (self.0 & !(3 << TAG_SHIFT | NARROW_ROWS) == 0 && n != u32::MAX).then_some(n)
    }

    /// The word a [`DerivRec::narrow`] word stands for.
    #[inline(always)]
    fn widen(n: u32) -> DerivRec {
        if n == u32::MAX {
            return DerivRec(UNRECORDED);
        }
        DerivRec(u64::from(n >> NARROW_ROW_BITS) << TAG_SHIFT | u64::from(n) & NARROW_ROWS)
    }
}

/// A relation's derivation words, one per own row from its lead on: four bytes
/// each while every word is [`DerivRec::narrow`] (the derivations of a rule that
/// records one premise, see `restore.rs`, such as a closure's), else eight. The
/// list widens once, for every word, the first time one does not fit.
#[derive(Clone)]
enum Derivs {
    Narrow(Vec<u32>),
    Wide(Vec<DerivRec>),
}

impl Default for Derivs {
    fn default() -> Derivs {
        Derivs::Narrow(Vec::new())
    }
}

impl Derivs {
    #[inline]
    fn len(&self) -> usize {
        match self {
            Derivs::Narrow(v) => v.len(),
            Derivs::Wide(v) => v.len(),
        }
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes allocated.
    fn bytes(&self) -> usize {
        match self {
            Derivs::Narrow(v) => v.capacity() * 4,
            Derivs::Wide(v) => v.capacity() * 8,
        }
    }

    #[inline]
    fn get(&self, i: usize) -> Option<DerivRec> {
        match self {
            Derivs::Narrow(v) => v.get(i).map(|&n| DerivRec::widen(n)),
            Derivs::Wide(v) => v.get(i).copied(),
        }
    }

    /// Overwrite word `i` (nothing when there is none).
    #[inline]
    fn set(&mut self, i: usize, rec: DerivRec) {
        match self {
            Derivs::Narrow(v) => match rec.narrow() {
                Some(n) => {
                    if let Some(x) = v.get_mut(i) {
                        *x = n;
                    }
                }
                None => {
                    self.widen();
                    self.set(i, rec);
                }
            },
            Derivs::Wide(v) => {
                if let Some(x) = v.get_mut(i) {
                    *x = rec;
                }
            }
        }
    }

    #[inline(always)]
    fn push(&mut self, rec: DerivRec) {
        match self {
            Derivs::Narrow(v) => match rec.narrow() {
                Some(n) => v.push(n),
                None => self.push_wide(rec),
            },
            Derivs::Wide(v) => v.push(rec),
        }
    }

    #[cold]
    #[inline(never)]
    fn push_wide(&mut self, rec: DerivRec) {
        self.widen();
        if let Derivs::Wide(v) = self {
            v.push(rec);
        }
    }

    /// Make every word eight bytes.
    #[cold]
    #[inline(never)]
    fn widen(&mut self) {
        if let Derivs::Narrow(v) = self {
            let mut wide = Vec::with_capacity(v.capacity().max(v.len() + 1));
            wide.extend(v.iter().map(|&n| DerivRec::widen(n)));
            *self = Derivs::Wide(wide);
        }
    }

    /// Put `n` words `rec` before the others.
    fn prepend(&mut self, rec: DerivRec, n: usize) {
        if let (Derivs::Narrow(v), Some(x)) = (&mut *self, rec.narrow()) {
            let mut all = vec![x; n];
            all.append(v);
            *v = all;
            return;
        }
        self.widen();
        if let Derivs::Wide(v) = self {
            let mut all = vec![rec; n];
            all.append(v);
            *v = all;
        }
    }

    /// What `rows` more words could allocate (not counting the one widening a
    /// list ever makes).
    fn growth_bound(&self, rows: usize) -> usize {
        use crate::eval::fixpoint::grow_bytes;
        match self {
            Derivs::Narrow(v) => grow_bytes(v.len(), v.capacity(), rows, 4),
            Derivs::Wide(v) => grow_bytes(v.len(), v.capacity(), rows, 8),
        }
    }

    fn reserve_exact(&mut self, additional: usize) {
        match self {
            Derivs::Narrow(v) => v.reserve_exact(additional),
            Derivs::Wide(v) => v.reserve_exact(additional),
        }
    }

    fn reserve_past_heap(&mut self, additional: usize) {
        match self {
            Derivs::Narrow(v) => reserve_past_heap(v, additional),
            Derivs::Wide(v) => reserve_past_heap(v, additional),
        }
    }

    #[inline]
    fn prefetch(&self, i: usize) {
        match self {
            Derivs::Narrow(v) => {
                if let Some(x) = v.get(i) {
                    prefetch(x);
                }
            }
            Derivs::Wide(v) => {
                if let Some(x) = v.get(i) {
                    prefetch(x);
                }
            }
        }
    }
}

/// Shift of a [`DerivRec`]'s tag.
const TAG_SHIFT: u32 = 60;
/// The tag of a [`DerivRec`] whose premise rows are in the arena; smaller tags name
/// inline shapes.
const ARENA_TAG: u64 = 15;
/// A [`DerivRec`] not yet written (see [`Relation::push_unrecorded`]); no shape id
/// and arena start reach it.
const UNRECORDED: u64 = u64::MAX;
/// Bits of an inline premise row in a word of one or two premises.
const ROW_BITS: u32 = 30;
/// Bits of an inline premise row in a word of three premises.
const ROW3_BITS: u32 = 20;

/// Bits of each premise row in an inline word of `len` premises: 30 for one or
/// two, 20 for three.
#[inline(always)]
const fn row_bits(len: usize) -> u32 {
    if len == 3 { ROW3_BITS } else { ROW_BITS }
}

/// Where premise `i`'s row starts in an inline word of `len` premises.
#[inline(always)]
pub(crate) const fn row_shift(len: usize, i: usize) -> u32 {
    i as u32 * row_bits(len)
}

/// Rows up to which (exclusive) each premise row of a derivation of `len` premises
/// fits an inline word (2^30 for one or two, 2^20 for three).
#[inline(always)]
pub(crate) const fn inline_limit(len: usize) -> u32 {
    1 << row_bits(len)
}

/// Whether premises `prem` fit an inline derivation word: at most three, every row
/// below [`inline_limit`].
#[inline(always)]
fn fits_inline(prem: &[FactId]) -> bool {
    prem.len() <= 3 && prem.iter().all(|p| p.row < inline_limit(prem.len()))
}

/// Shapes one relation may intern (a shape id has 28 bits in a [`DerivRec`]).
const MAX_SHAPES: usize = 1 << 28;

/// Interned premise shapes: the sequence of premise relations of a derivation
/// ([`AGG_MARK`] for an aggregate's marker). A rule without aggregates gives every
/// derivation the same shape, so one relation usually holds a handful.
#[derive(Clone, Default)]
struct Shapes {
    /// Every shape's relations, one after another.
    rels: Vec<u32>,
    /// Per shape: start and length in `rels`.
    spans: Vec<(u32, u32)>,
    /// Shape ids by the hash of their relations.
    table: HashTable<u32>,
    /// The shape interned last (a batch of rows from one plan repeats it).
    last: u32,
    /// Shapes of at most three premises whose derivations are kept inline, by tag.
    inline: Vec<u32>,
    /// The inline shape placed last: its relations (the first `len`) and its tag.
    last_inline: Option<([u32; 3], usize, u64)>,
}

impl Shapes {
    /// The derivation word of `prem` when its shape is the inline shape placed last
    /// and its rows fit inline.
    #[inline(always)]
    fn cached_word(&self, prem: &[FactId]) -> Option<DerivRec> {
        let (rels, len, tag) = self.last_inline?;
        (len == prem.len() && prem.iter().zip(&rels).all(|(p, &r)| p.rel == r) && fits_inline(prem))
            .then(|| inline_word(tag, prem))
    }

    #[inline]
    fn get(&self, shape: u32) -> &[u32] {
        let (start, len) = self.spans[shape as usize];
        &self.rels[start as usize..(start + len) as usize]
    }

    /// Whether shape `shape` is the relations of `prem`.
    #[inline]
    fn matches(&self, shape: u32, prem: &[FactId]) -> bool {
        let rels = self.get(shape);
        rels.len() == prem.len() && rels.iter().zip(prem).all(|(&r, p)| r == p.rel)
    }

    /// The id of the shape of `prem`, interned if new.
    #[inline]
    fn intern(&mut self, prem: &[FactId]) -> Result<u32> {
        if (self.last as usize) < self.spans.len() && self.matches(self.last, prem) {
            return Ok(self.last);
        }
        self.intern_slow(prem)
    }

    #[inline(never)]
    fn intern_slow(&mut self, prem: &[FactId]) -> Result<u32> {
        let h = hash_cells(prem.iter().map(|p| p.rel as u64));
        let found = self.table.find(h, |&id| self.matches(id, prem)).copied();
        let id = match found {
            Some(id) => id,
            None => {
                let start = self.rels.len();
                if start + prem.len() > u32::MAX as usize || self.spans.len() >= MAX_SHAPES {
                    return Err(arena_full());
                }
                self.rels.extend(prem.iter().map(|p| p.rel));
                let id = self.spans.len() as u32;
                self.spans.push((start as u32, prem.len() as u32));
                let (rels, spans) = (&self.rels, &self.spans);
                self.table.insert_unique(h, id, |&id| {
                    let (s, l) = spans[id as usize];
                    hash_cells(rels[s as usize..(s + l) as usize].iter().map(|&r| r as u64))
                });
                id
            }
        };
        self.last = id;
        Ok(id)
    }

    /// The inline tag of shape `shape` (of at most three premises), given one if it
    /// has none and tags are left.
    #[inline]
    fn inline_tag(&mut self, shape: u32) -> Option<u64> {
        if let Some(t) = self.inline.iter().position(|&s| s == shape) {
            return Some(t as u64);
        }
        if (self.inline.len() as u64) < ARENA_TAG {
            self.inline.push(shape);
            return Some(self.inline.len() as u64 - 1);
        }
        None
    }

    fn bytes(&self) -> usize {
        self.rels.capacity() * 4
            + self.spans.capacity() * 8
            + self.table.allocation_size()
            + self.inline.capacity() * 4
    }

    /// At most how many bytes interning `rows` new shapes of `premises` premises in
    /// all could allocate.
    fn growth_bound(&self, rows: usize, premises: usize) -> usize {
        use crate::eval::fixpoint::grow_bytes;
        let mut g = grow_bytes(self.rels.len(), self.rels.capacity(), premises, 4)
            + grow_bytes(self.spans.len(), self.spans.capacity(), rows, 8);
        let need = self.table.len() + rows;
        if need > self.table.capacity() {
            g += (need * 8 / 7).next_power_of_two().max(4) * (4 + 1);
        }
        if self.inline.len() < ARENA_TAG as usize {
            g += ARENA_TAG as usize * 4;
        }
        g
    }
}

/// A recorded derivation's premises (aggregate markers included), read in place.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Premises<'a> {
    rels: &'a [u32],
    /// The rows when in the arena, else empty.
    rows: &'a [u32],
    /// The rows when inline.
    inline: [u32; 3],
}

impl<'a> Premises<'a> {
    /// The premises in order.
    #[inline]
    pub fn iter(self) -> impl Iterator<Item = FactId> + 'a {
        let p = self;
        let inline = p.rows.len() < p.rels.len();
        (0..p.rels.len()).map(move |i| FactId {
            rel: p.rels[i],
            row: if inline { p.inline[i] } else { p.rows[i] },
        })
    }

    /// The premises as a list.
    pub fn to_vec(self) -> Vec<FactId> {
        self.iter().collect()
    }
}

/// A row's cells as stored: one 32-bit word each while every cell of the relation's
/// own rows fits in 32 bits (narrow), else two (wide: low word first). Read a cell
/// with [`RowCells::get`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowCells<'a> {
    words: &'a [u32],
    wide: bool,
}

impl<'a> RowCells<'a> {
    /// No cells (a row number past a relation's end).
    const EMPTY: RowCells<'static> = RowCells {
        words: &[],
        wide: false,
    };

    /// Number of cells.
    #[inline]
    pub fn len(self) -> usize {
        if self.wide {
            self.words.len() / 2
        } else {
            self.words.len()
        }
    }

    /// Cell `c`.
    #[inline(always)]
    pub fn get(self, c: usize) -> u64 {
        if self.wide {
            self.words[2 * c] as u64 | (self.words[2 * c + 1] as u64) << 32
        } else {
            self.words[c] as u64
        }
    }

    /// Every cell in order.
    #[inline]
    pub fn iter(self) -> impl Iterator<Item = u64> + 'a {
        (0..self.len()).map(move |c| self.get(c))
    }

    /// The cells as a list.
    #[cfg(test)]
    pub fn to_vec(self) -> Vec<u64> {
        self.iter().collect()
    }

    /// Whether these are exactly `cells` (short rows: cheaper than a `memcmp` call).
    #[inline(always)]
    pub fn same(self, cells: &[u64]) -> bool {
        if self.wide {
            return self.same_wide(cells);
        }
        self.words.len() == cells.len()
            && self.words.iter().zip(cells).all(|(&w, &x)| w as u64 == x)
    }

    #[inline(never)]
    fn same_wide(self, cells: &[u64]) -> bool {
        self.len() == cells.len() && cells.iter().enumerate().all(|(c, &x)| self.get(c) == x)
    }
}

/// Direct reads of a plain relation in the narrowest layout (a word a cell, height
/// and rule packed in one word, one confidence for every row, or, for a weighted
/// view, each row's own after its packed word): what a join's innermost loop reads
/// without asking the layout at every row.
#[derive(Clone, Copy)]
pub(crate) struct Narrow<'a> {
    data: &'a [u32],
    /// The dedup table's groups (none while a grid stands in for it).
    groups: &'a [Group],
    arity: usize,
    stride: usize,
    /// Rows wholly in `data` (at most `data.len() / stride`): a row below it lies
    /// wholly in `data`.
    rows: u32,
    /// The confidence every row shares (meaningless when `conf_col`).
    pub conf: f64,
    /// Whether each row holds its own confidence, in two words after its packed word.
    pub conf_col: bool,
    /// Whether every row's height is 0 (the relation holds input facts only, see
    /// [`Narrow::inputs_only`]): a join then never reads it.
    flat: bool,
    /// The rows by their cells, where the relation keeps a [`Grid`].
    pub grid: Option<GridView<'a>>,
    /// Bounds on the rows' heights by row number.
    marks: &'a Marks,
    /// The rows an ordered stratum handed out, a bit a row, while that decides
    /// (see the fixpoint's `Handed`): a derivation found in one changes nothing.
    /// Empty elsewhere.
    handed: &'a [u64],
}

impl<'a> Narrow<'a> {
    /// The words of a row: its cells, then its packed height and rule.
    #[inline(always)]
    pub fn words(&self, row: u32) -> &'a [u32] {
        self.row_words(row, self.arity + 1)
    }

    /// The first `width` words of a row (no more than a row has).
    ///
    /// The join's innermost loops read rows here, one bounds check a row: against
    /// the row count, not the word range (which takes three times the instructions,
    /// a tenth of the narrow loop's).
    #[inline(always)]
    fn row_words(&self, row: u32, width: usize) -> &'a [u32] {
        assert!(row < self.rows);
        let (b, width) = (row as usize * self.stride, width.min(self.stride));
        debug_assert!(b + width <= self.data.len());
        // SAFETY: `row < rows`, and `rows * stride <= data.len()` (checked where
        // the view is made, `Relation::narrow`), so the row's `stride` words from
        // `row * stride` (no overflow: that is less than `data.len()`) lie in
        // `data`, and so do the first `width <= stride` of them.
        unsafe { self.data.get_unchecked(b..b + width) }
    }

    /// The words of a row of a view that may be weighted: its cells, its packed
    /// height and rule, and its confidence when it holds its own.
    #[inline(always)]
    pub fn weighted_words(&self, row: u32) -> &'a [u32] {
        self.row_words(row, self.arity + 1 + self.conf_words())
    }

    /// Start loading row `row`'s words (nothing for a row the view does not hold).
    #[inline(always)]
    pub fn prefetch_row(&self, row: u32) {
        if row < self.rows {
            // `row < rows`: its words lie in `data` (see `row_words`).
            prefetch(&self.data[row as usize * self.stride]);
        }
    }

    /// Words of a row's own confidence: none unless the view is weighted.
    #[inline(always)]
    fn conf_words(&self) -> usize {
        if self.conf_col { CONF_WORDS } else { 0 }
    }

    /// The height and rule of a row whose words are `words`.
    #[inline(always)]
    pub fn height_rule(&self, words: &[u32]) -> (u32, u32) {
        unpack(words[self.arity])
    }

    /// The height and rule of row `row`.
    #[inline(always)]
    pub fn record(&self, row: u32) -> (u32, u32) {
        assert!(row < self.rows);
        let at = row as usize * self.stride + self.arity;
        debug_assert!(at < self.data.len());
        // SAFETY: `row < rows` and `rows * stride <= data.len()` (checked where
        // the view is made, `Relation::narrow`), and `arity < stride` (a narrow
        // layout's row is its `arity` cells, then its packed word, then any
        // confidence), so the row's packed word, `arity` words in, lies in `data`.
        unpack(unsafe { *self.data.get_unchecked(at) })
    }

    /// The height of a row whose words are `words`: 0 in a view of input facts,
    /// without reading them.
    #[inline(always)]
    pub fn height(&self, words: &[u32]) -> u32 {
        if self.flat {
            0
        } else {
            self.height_rule(words).0
        }
    }

    /// The rows from the first that are all of height at most `h`: a fact found
    /// in one of them has a record no higher than that (see [`Marks`]).
    #[inline(always)]
    pub fn below(&self, h: u32) -> u32 {
        self.marks.below(h)
    }

    /// The view, knowing that its relation holds input facts only (no rule
    /// derives it), if `inputs` says so. An input fact's height is 0.
    #[inline]
    pub fn inputs_only(self, inputs: bool) -> Narrow<'a> {
        Narrow {
            flat: inputs,
            ..self
        }
    }

    /// The view, knowing which rows an ordered stratum handed out (`bits`, a bit
    /// a row): a derivation found in one changes nothing (see
    /// [`Narrow::find_unhanded`]).
    #[inline]
    pub fn with_handed(self, bits: &'a [u64]) -> Narrow<'a> {
        Narrow {
            handed: bits,
            ..self
        }
    }

    /// Whether row `row` was handed out (see [`Narrow::with_handed`]).
    #[inline(always)]
    fn handed(&self, row: u32) -> bool {
        bit_of(self.handed, row)
    }

    /// The confidence of a row whose words ([`Narrow::weighted_words`]) are `words`.
    #[inline(always)]
    pub fn conf_of(&self, words: &[u32]) -> f64 {
        if self.conf_col {
            let c = self.arity + 1;
            f64::from_bits(words[c] as u64 | (words[c + 1] as u64) << 32)
        } else {
            self.conf
        }
    }

    /// The height, rule and confidence of the row holding exactly these cells (as
    /// [`Narrow::find_record`]), of a view that may be weighted.
    #[cfg(test)]
    pub fn find_meta<const N: usize>(&self, cells: &[u64; N], tag: u32) -> Option<Meta> {
        self.find_meta_unless::<N, false>(cells, tag).flatten()
    }

    /// The height, rule and confidence of the row holding exactly these cells (as
    /// [`Narrow::find_record`]), of a view that may be weighted; but `Some(None)`
    /// for a row handed out (see [`Narrow::with_handed`]) that the grid finds,
    /// whose record is not read: a derivation of its fact changes nothing. (A
    /// dedup table's probe reads the row, record and all, anyway.)
    #[inline(always)]
    pub fn find_unhanded<const N: usize>(
        &self,
        cells: &[u64; N],
        tag: u32,
    ) -> Option<Option<Meta>> {
        self.find_meta_unless::<N, true>(cells, tag)
    }

    /// The record of the row holding exactly these cells, read whatever the
    /// row; with `H`, as [`Narrow::find_unhanded`] finds it.
    #[inline(always)]
    fn find_meta_unless<const N: usize, const H: bool>(
        &self,
        cells: &[u64; N],
        tag: u32,
    ) -> Option<Option<Meta>> {
        debug_assert_eq!(N, self.arity);
        // No dedup table: no rows, or a grid stands in for it. (The probe tests
        // this too: on the way to a table, no test is added.)
        if self.groups.is_empty() {
            let row = self.grid.filter(|_| N == 2)?.find(cells[0], cells[N - 1])?;
            if H && self.handed(row) {
                return Some(None);
            }
            let words = self.weighted_words(row);
            let (height, rule) = unpack(words[N]);
            return Some(Some(Meta {
                conf: self.conf_of(words),
                height,
                rule,
            }));
        }
        let width = N + 1 + self.conf_words();
        let mut words: &[u32] = &[];
        find_in(self.groups, tag, |r| {
            // The cells, the packed word and any confidence.
            words = self.row_words(r, width);
            words[..N].iter().zip(cells).all(|(&w, &x)| w as u64 == x)
        })?;
        let (height, rule) = unpack(words[N]);
        Some(Some(Meta {
            conf: self.conf_of(words),
            height,
            rule,
        }))
    }

    /// The height and rule of the row holding exactly these cells (the relation's
    /// every cell: `N` is its arity), whose digest is `tag`.
    #[inline(always)]
    pub fn find_record<const N: usize>(&self, cells: &[u64; N], tag: u32) -> Option<(u32, u32)> {
        debug_assert_eq!(N, self.arity);
        // No dedup table: no rows, or a grid stands in for it (see
        // `Narrow::find_meta`).
        if self.groups.is_empty() {
            return self.grid_record(cells);
        }
        let mut packed = 0;
        find_in(self.groups, tag, |r| {
            // The cells and the packed word after them.
            let words = self.row_words(r, N + 1);
            packed = words[N];
            words[..N].iter().zip(cells).all(|(&w, &x)| w as u64 == x)
        })?;
        Some(unpack(packed))
    }

    /// The height and rule of the row holding exactly these cells, looked up in
    /// the view's grid (none without one).
    #[inline(always)]
    fn grid_record<const N: usize>(&self, cells: &[u64; N]) -> Option<(u32, u32)> {
        let grid = self.grid.filter(|_| N == 2)?;
        grid.find(cells[0], cells[N - 1]).map(|r| self.record(r))
    }
}

/// Bit `row` of a set of rows kept as bits, 64 a word (rows past its words are
/// not in it).
#[inline(always)]
pub(crate) fn bit_of(bits: &[u64], row: u32) -> bool {
    bits.get(row as usize / 64)
        .is_some_and(|w| w >> (row % 64) & 1 == 1)
}

/// Whether every cell fits in a 32-bit word.
#[inline]
fn narrow(cells: &[u64]) -> bool {
    // (Without a branch a cell: a row's few cells are or-ed, then tested once.)
    cells.iter().fold(0, |a, &c| a | c) >> 32 == 0
}

/// The 32-bit digest of a row's hash that the dedup table keeps.
#[inline]
pub(crate) fn tag_of(h: u64) -> u32 {
    (h ^ (h >> 32)) as u32
}

/// The size from which a dedup table's probes fetch ahead
/// ([`Relation::probes_miss`]): half a core's second-level cache here, as most
/// machines have at least.
const PREFETCH_BYTES: usize = 1 << 20;

/// How far ahead of its probes a pass over digests in order fetches their slots
/// ([`Relation::prefetch_probes`]).
const PROBE_AHEAD: usize = 16;

/// The dedup table: open addressing over groups of [`GROUP`] slots, each group one
/// cache line holding the 32-bit digests of its rows' hashes, then the rows. A probe
/// compares a digest with a whole group at once and reads a row only where a digest
/// matches, so a row away from its home slot (but in its home group) costs no
/// mispredicted branch, as it does in probing slot by slot. Rows fill a group from
/// its first slot, and a probe goes on to the next group only past a full one. A
/// group's position is a function of the digest alone, so growing never reads rows.
/// Nothing iterates the table, so its layout never shows in results.
#[derive(Clone, Default)]
struct Dedup {
    /// The groups from quad `base` on ([`Dedup::groups`]): [`GROUP`] digests
    /// (with the low bit set, [`stored`]; 0 is an empty slot), then [`GROUP`] rows.
    /// Allocated zeroed, so that a large table's pages are only backed as they are
    /// written, and in quads of words, so that the groups can start at a cache line
    /// (a group is then one line) whatever the allocation's alignment.
    quads: Vec<[u32; 4]>,
    /// Quads before the first group (0 to 3). A clone keeps it: its groups are
    /// the same wherever the copy lands, if not at a cache line.
    base: usize,
    len: usize,
    /// The rows past which the table grows, as of the last growth.
    limit: usize,
}

/// Bytes a grid that the joins' look-ups read may take beyond those of the
/// dedup table it stands in for (up to twice those): about where a random read
/// leaves a core's second-level cache on common machines. (Any grid may take
/// as many bytes as the table.)
const GRID_BYTES: u64 = 4 << 20;
/// Bytes a grid may take beyond its share of a dedup table's
/// ([`Relation::grid_fits`]):
/// none, but in tests, whose relations are small, enough for a grid of 32 by 32
/// cells, so that grids are on in them and turn off as they outgrow that.
const GRID_SLACK: u64 = if cfg!(test) { 4096 } else { 0 };

/// The rows of a relation of two cells by their cells, while both are small and
/// the rows dense among them: the row of cells `(a, b)` (plus one: 0 where there
/// is none) at `a * dim.1 + b`, for `a < dim.0` and `b < dim.1`. A join's look-up
/// of a derivation's fact reads one word here, where the dedup table would hash
/// the cells, compare a group of digests, then the row's cells. Kept for the
/// relations the engine asks it of ([`Relation::keep_grid`]: every derived one
/// of two cells), while it takes no more than the bytes of a dedup table of the
/// rows (twice those, up to [`GRID_BYTES`], where the joins' look-ups read it,
/// [`Relation::grid_fits`]); off while it would take more, and made anew when
/// the rows are dense enough again ([`Relation::settle_grid`], after a merge),
/// or when the table is about to grow to a size the grid fits
/// ([`Relation::reserve`], before one).
///
/// A grid that is on holds every row, so a row whose cells are out of its range
/// is not there: it stands in for the dedup table, which is given back while the
/// grid is on and made anew from the rows when it turns off
/// ([`Relation::grid_off`]). Every look-up of a row by its cells reads the grid
/// first.
#[derive(Clone, Default)]
struct Grid {
    slots: Vec<u32>,
    dim: (u32, u32),
    /// Whether the slots hold every row (else they are empty), standing in for
    /// the dedup table (then empty).
    on: bool,
    /// Whether the engine asked for a grid.
    want: bool,
    /// Whether the joins' look-ups read it (else it stands in for the dedup
    /// table only where it takes no more bytes).
    hot: bool,
    /// The bytes of a dedup table of the rows ([`Relation::dedup_bytes`]) from
    /// which a grid that is off is tried again: past those when it was last
    /// tried, or as many as would let the least grid for the cells then fit
    /// (cells only grow).
    retry_at: usize,
}

impl Grid {
    /// The dimension that holds cells up to `top`: half as large again as `now` at
    /// least, in multiples of 16.
    fn grown(now: u32, top: u64) -> u64 {
        (top.saturating_add(1))
            .max(u64::from(now) + u64::from(now) / 2)
            .next_multiple_of(16)
    }

    /// The row of exactly these cells, of a grid that is on (which holds every
    /// row).
    #[inline(always)]
    fn find(&self, cells: &[u64]) -> Option<u32> {
        let &[a, b] = cells else { return None };
        if a >= u64::from(self.dim.0) || b >= u64::from(self.dim.1) {
            return None;
        }
        self.slots[a as usize * self.dim.1 as usize + b as usize].checked_sub(1)
    }

    /// Record `row` under cells `(a, b)`, which must be in range.
    #[inline(always)]
    fn put(&mut self, a: u64, b: u64, row: u32) {
        let at = a as usize * self.dim.1 as usize + b as usize;
        self.slots[at] = row + 1;
    }
}

/// Bounds on the heights of a plain relation's rows by row number: pairs `(rows,
/// max)`, both rising, each saying that every row below `rows` has height at most
/// `max`. A look-up that finds a fact below the rows marked no higher than a bound
/// knows that much of its record without reading it: on the large relations the
/// joins and merges look facts up in by their cells (a grid), that read is a cache
/// miss a fact found, and it decided nearly nothing (see `Relation::mark`). Only
/// relations whose rows share one confidence are marked (a look-up into one whose
/// rows have their own reads the confidence anyway).
#[derive(Clone, Default)]
pub(crate) struct Marks {
    pairs: Vec<(u32, u32)>,
    /// [`Marks::below`] by height, from height 0 up to the highest marked, as far
    /// as [`table_cap`] allows: a look-up's bound is found by one read. (A cache of
    /// the pairs: the heights past it are found by a binary search of them.)
    table: Vec<u32>,
}

/// The most heights [`Marks`] keeps a table entry for.
const MARKS_TABLE: usize = 1 << 16;

/// Table entries kept however few the rows (a handful in unit tests, so that
/// tables are cut short there too).
const MARKS_TABLE_MIN: usize = if cfg!(test) { 4 } else { 64 };

/// The most table entries [`Marks`] keeps for `rows` rows marked: two a row, so
/// that the table's bytes follow the relation's, whatever its heights (a
/// relation of one fact at height 60,000, derived at the end of a long chain,
/// would otherwise keep 240 KB of table), up to [`MARKS_TABLE`].
fn table_cap(rows: u32) -> usize {
    (rows as usize)
        .saturating_mul(2)
        .clamp(MARKS_TABLE_MIN, MARKS_TABLE)
}

impl Marks {
    /// The rows from the first that are all of height at most `h` (0 if none is
    /// marked so).
    #[inline(always)]
    pub fn below(&self, h: u32) -> u32 {
        if let Some(&rows) = self.table.get(h as usize) {
            return rows;
        }
        match self.pairs.last() {
            None => 0,
            Some(&(rows, max)) if max <= h => rows,
            Some(_) => match self.pairs.partition_point(|&(_, max)| max <= h) {
                0 => 0,
                i => self.pairs[i - 1].0,
            },
        }
    }

    /// Rows marked.
    #[inline]
    fn rows(&self) -> u32 {
        self.pairs.last().map_or(0, |m| m.0)
    }

    /// Mark the rows from [`Marks::rows`] to `len`, whose highest height is `top`.
    fn extend(&mut self, len: u32, top: u32) {
        match self.pairs.last_mut() {
            Some(last) if top <= last.1 => {
                last.0 = len;
                // (The table reaches no higher than the last mark.)
                if let Some(rows) = self.table.get_mut(last.1 as usize) {
                    *rows = len;
                }
            }
            _ => self.pairs.push((len, top)),
        }
        self.fill();
    }

    /// Complete the table from the pairs, from where it ends to the highest height
    /// marked, as far as [`table_cap`] allows.
    fn fill(&mut self) {
        let Some(&(rows, max)) = self.pairs.last() else {
            return;
        };
        let end = (max as usize + 1).min(table_cap(rows));
        let mut h = self.table.len();
        // The pairs marked no higher than `h`: the last of them bounds it.
        let mut i = self.pairs.partition_point(|&(_, max)| max as usize <= h);
        while h < end {
            while self.pairs.get(i).is_some_and(|m| m.1 as usize <= h) {
                i += 1;
            }
            self.table
                .push(i.checked_sub(1).map_or(0, |i| self.pairs[i].0));
            h += 1;
        }
    }

    /// Row `row` now has height `h`: every mark over it is raised to `h` at least.
    #[inline]
    fn raise(&mut self, row: u32, h: u32) {
        // (Nothing to do where even the lowest mark allows `h`.)
        if self.pairs.first().is_none_or(|m| h <= m.1) {
            return;
        }
        let first = self.pairs.partition_point(|&(rows, _)| rows <= row);
        let end = first + self.pairs[first..].partition_point(|&(_, max)| max < h);
        if end > first {
            // The marks over the row that allow less than `h` give way to one that
            // allows `h` (unless the next already marks as many rows and more).
            let rows = self.pairs[end - 1].0;
            let keep = self.pairs.get(end).is_none_or(|m| m.1 > h);
            self.pairs.splice(first..end, keep.then_some((rows, h)));
            self.table.clear();
            self.fill();
        }
    }

    /// Bytes allocated.
    fn bytes(&self) -> usize {
        self.pairs.capacity() * 8 + self.table.capacity() * 4
    }
}

/// A relation's [`Grid`], read.
#[derive(Clone, Copy)]
pub(crate) struct GridView<'a> {
    slots: &'a [u32],
    dim: (u32, u32),
}

impl GridView<'_> {
    /// The row of cells `(a, b)`: `Some(None)` where there is none, `None` where
    /// the cells are out of the grid's range (where there is none either).
    #[inline(always)]
    pub fn row(&self, a: u64, b: u64) -> Option<Option<u32>> {
        if a >= u64::from(self.dim.0) || b >= u64::from(self.dim.1) {
            return None;
        }
        let at = a as usize * self.dim.1 as usize + b as usize;
        debug_assert!(at < self.slots.len());
        // SAFETY: `a < dim.0` and `b < dim.1`, so `at < dim.0 * dim.1`, which is
        // the slots' length: a grid that is on has the slots `Relation::regrid`
        // made for its `dim`, the only place either is set but the empty default.
        let r = unsafe { *self.slots.get_unchecked(at) };
        Some(r.checked_sub(1))
    }

    /// The row of cells `(a, b)`, if there is one: a grid holds every row, so
    /// none is out of its range.
    #[inline(always)]
    pub fn find(&self, a: u64, b: u64) -> Option<u32> {
        self.row(a, b).flatten()
    }

    /// The slots of the rows whose first cell is `a` (slot `b` holds the row of
    /// `(a, b)`, plus one), if `a` is in the grid's range.
    #[inline(always)]
    pub fn line(&self, a: u64) -> Option<&[u32]> {
        if a >= u64::from(self.dim.0) {
            return None;
        }
        let d1 = self.dim.1 as usize;
        self.slots.get(a as usize * d1..(a as usize + 1) * d1)
    }
}

/// Slots a dedup group holds.
const GROUP: usize = 8;
/// Words a dedup group takes: its digests, then its rows.
const GROUP_WORDS: usize = 2 * GROUP;

/// A dedup group, as quads of words.
type Group = [[u32; 4]; GROUP_WORDS / 4];

/// A group's words.
#[inline(always)]
fn words(group: &Group) -> &[u32; GROUP_WORDS] {
    group.as_flattened().try_into().unwrap()
}

/// A group's words, to write.
#[inline(always)]
fn words_mut(group: &mut Group) -> &mut [u32; GROUP_WORDS] {
    group.as_flattened_mut().try_into().unwrap()
}

/// The slots of `group` whose digest is `t`, one bit each: eight comparisons in
/// two vector instructions.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn matching(group: &[u32; GROUP_WORDS], t: u32) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi32, _mm_loadu_si128, _mm_movemask_epi8, _mm_packs_epi16,
        _mm_packs_epi32, _mm_set1_epi32,
    };
    let p = group.as_ptr().cast::<__m128i>();
    // SAFETY: SSE2 is part of the x86_64 baseline, and the digests are the group's
    // first 32 bytes: two 16-byte loads, both within it.
    let m = unsafe {
        let k = _mm_set1_epi32(t as i32);
        let (a, b) = (_mm_loadu_si128(p), _mm_loadu_si128(p.add(1)));
        // Each slot's 32-bit comparison narrowed to a byte, then to a bit.
        let m = _mm_packs_epi32(_mm_cmpeq_epi32(a, k), _mm_cmpeq_epi32(b, k));
        _mm_movemask_epi8(_mm_packs_epi16(m, m))
    };
    (m & 0xff) as u32
}

/// The slots of `group` whose digest is `t`, one bit each.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn matching(group: &[u32; GROUP_WORDS], t: u32) -> u32 {
    let mut m = 0;
    for (i, &x) in group[..GROUP].iter().enumerate() {
        m |= u32::from(x == t) << i;
    }
    m
}

/// A digest as a group keeps it: never 0, which marks an empty slot.
#[inline(always)]
fn stored(tag: u32) -> u32 {
    tag | 1
}

/// Where a probe for a stored digest starts in a table of `groups` groups (a power
/// of two).
#[inline]
fn home(t: u32, groups: usize) -> usize {
    ((t as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & (groups - 1)
}

/// The row of a dedup table's groups whose digest is `tag` and for which `eq`
/// holds. (A loop that probes one table many times takes its groups once,
/// [`Narrow`], rather than working them out at every probe.)
#[inline(always)]
fn find_in(groups: &[Group], tag: u32, eq: impl FnMut(u32) -> bool) -> Option<u32> {
    probe(groups, tag, eq).ok()
}

/// A probe of the table's groups for the row whose digest is `tag` and for which
/// `eq` holds: that row, or else the group with an empty slot that ended the probe
/// (where the row would go; `usize::MAX` for a table without groups).
#[inline(always)]
fn probe(groups: &[Group], tag: u32, mut eq: impl FnMut(u32) -> bool) -> Result<u32, usize> {
    let n = groups.len();
    if n == 0 {
        return Err(usize::MAX);
    }
    let t = stored(tag);
    let mut g = home(t, n);
    loop {
        let group = words(&groups[g]);
        let mut m = matching(group, t);
        while m != 0 {
            let row = group[GROUP + m.trailing_zeros() as usize];
            if eq(row) {
                return Ok(row);
            }
            m &= m - 1;
        }
        // A group with an empty slot ends every probe that reaches it.
        if group[GROUP - 1] == 0 {
            return Err(g);
        }
        g = (g + 1) & (n - 1);
    }
}

impl Dedup {
    /// Slots the table has.
    fn slots(&self) -> usize {
        self.groups().len() * GROUP
    }

    /// The groups.
    #[inline(always)]
    fn groups(&self) -> &[Group] {
        self.quads[self.base..].as_chunks().0
    }

    /// Record `row` under stored digest `t` in the first group from its home with
    /// an empty slot.
    #[inline(always)]
    fn place(&mut self, t: u32, row: u32) {
        let base = self.base;
        let groups = self.quads[base..].as_chunks_mut().0;
        let n = groups.len();
        let mut g = home(t, n);
        loop {
            let group = words_mut(&mut groups[g]);
            let empty = matching(group, 0);
            if empty != 0 {
                let i = empty.trailing_zeros() as usize;
                group[i] = t;
                group[GROUP + i] = row;
                return;
            }
            g = (g + 1) & (n - 1);
        }
    }

    /// The row whose digest is `tag` and for which `eq` holds.
    #[cfg(test)]
    fn find(&self, tag: u32, eq: impl FnMut(u32) -> bool) -> Option<u32> {
        find_in(self.groups(), tag, eq)
    }

    /// The row whose digest is `tag` and for which `eq` holds, or else record `row`
    /// under `tag` and return `None`.
    #[inline]
    fn find_or_insert(&mut self, tag: u32, row: u32, eq: impl Fn(u32) -> bool) -> Option<u32> {
        self.reserve(1);
        self.find_or_place(tag, row, eq)
    }

    /// Whether one more row would take the table past its load (or it has none).
    #[inline(always)]
    fn full(&self) -> bool {
        self.len >= self.limit
    }

    /// [`Dedup::find_or_insert`] in a table that is not [`Dedup::full`].
    #[inline(always)]
    fn find_or_place(&mut self, tag: u32, row: u32, eq: impl Fn(u32) -> bool) -> Option<u32> {
        debug_assert!(!self.full());
        let g = match probe(self.groups(), tag, eq) {
            Ok(found) => return Some(found),
            Err(g) => g,
        };
        // The group's quads by index, not through the table's groups again.
        const QUADS: usize = GROUP_WORDS / 4;
        let at = self.base + g * QUADS;
        let group: &mut Group = (&mut self.quads[at..at + QUADS]).try_into().unwrap();
        let group = words_mut(group);
        // Rows fill a group from its first slot: the first empty one follows those
        // taken (the probe ended at a group with one, so it is below GROUP).
        let i = matching(group, 0).trailing_zeros() as usize & (GROUP - 1);
        group[i] = stored(tag);
        group[GROUP + i] = row;
        self.len += 1;
        None
    }

    /// The rows past which `slots` slots are over the table's load: seven for
    /// eight. (Probing a group at a time, a row that found its home group full
    /// costs the next group's line, not a branch a slot.)
    fn limit(slots: usize) -> usize {
        slots / 8 * 7
    }

    /// Grow so that `additional` more rows keep the table within its load.
    #[inline]
    fn reserve(&mut self, additional: usize) {
        if self.len + additional > self.limit {
            self.grow(additional);
        }
    }

    /// The slots the table needs to hold `rows` rows within its load: as many
    /// as it has, or the least power of two past that (16 at least) that will do.
    fn slots_for(&self, rows: usize) -> usize {
        if rows <= Self::limit(self.slots()) {
            return self.slots();
        }
        let mut n = self.slots().max(2 * GROUP);
        while rows > Self::limit(n) {
            n *= 2;
        }
        n
    }

    /// The slots a table needs to hold `rows` rows within its load, from none.
    fn slots_needed(rows: usize) -> usize {
        Dedup::default().slots_for(rows)
    }

    /// The bytes of the groups of a table of `rows` rows, made for them.
    fn bytes_for(rows: usize) -> usize {
        Dedup::slots_needed(rows) / GROUP * GROUP_WORDS * 4
    }

    /// A table of `rows` rows, row `r` (of `from..from + rows`) under digest
    /// `tag(r)`: made anew when a grid that stood in for it turns off.
    fn of_rows(from: u32, rows: usize, tag: impl Fn(u32) -> u32) -> Dedup {
        let mut d = Dedup::default();
        d.reserve(rows);
        for r in (from..).take(rows) {
            d.place(stored(tag(r)), r);
        }
        d.len = rows;
        d
    }

    /// [`Dedup::reserve`] when the table must grow.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, additional: usize) {
        let n = self.slots_for(self.len + additional) / GROUP;
        // Three quads more, to start the groups at a cache line.
        let quads = vec![[0; 4]; n * 4 + 3];
        let at = quads.as_ptr() as usize;
        let base = (at.next_multiple_of(64) - at) / 16;
        let old = std::mem::replace(
            self,
            Dedup {
                quads,
                base,
                len: self.len,
                limit: Self::limit(n * GROUP),
            },
        );
        advise_huge_pages(&self.quads);
        // A row of old group `g` goes to new group `g` or `g + n / 2` (or a little
        // past, where those are full; `g + k * n / m` for `k < m` where the table
        // grows `m` times): the new table fills in two (`m`) runs, in order. The
        // old one is given back a chunk at a time as it is read, so that a large
        // table's growth holds little more than the new table, not both; the new
        // one's pages that a chunk's rows go to are backed just before (see
        // `populate`).
        let (mut old, mut at, mut given) = (old.quads, old.base, 0);
        const QUADS: usize = GROUP_WORDS / 4;
        let from_groups = (old.len() - at) / QUADS;
        let old_base = at;
        while at < old.len() {
            let end = (at + GIVE_BACK_QUADS).min(old.len());
            // The new groups this chunk's rows go to, in each run (and the group
            // after, for rows a full home sends on). Placing a row reads its group
            // before it writes it: a page not backed before would fault twice.
            let (first, last) = ((at - old_base) / QUADS, (end - old_base).div_ceil(QUADS));
            for run in 0..n / from_groups.max(1) {
                let lo = self.base + (first + run * from_groups) * QUADS;
                let hi = (self.base + (last + run * from_groups + 1) * QUADS).min(self.quads.len());
                populate(&mut self.quads[lo..hi]);
            }
            let (groups, _) = old[at..end].as_chunks::<{ GROUP_WORDS / 4 }>();
            for group in groups {
                let group = words(group);
                // A group's rows are its first slots.
                let k = (matching(group, 0) | 1 << GROUP).trailing_zeros() as usize;
                for (&t, &row) in group[..k].iter().zip(&group[GROUP..GROUP + k]) {
                    self.place(t, row);
                }
            }
            given = give_back(&mut old, given, end);
            at = end;
        }
    }

    /// Ask the CPU to fetch the group a probe for `tag` reads first.
    #[inline]
    fn prefetch(&self, tag: u32) {
        let groups = self.groups();
        if !groups.is_empty() {
            prefetch(&groups[home(stored(tag), groups.len())]);
        }
    }

    /// The first row of the group a probe for `tag` reads first whose digest is
    /// `tag`.
    #[inline]
    fn peek(&self, tag: u32) -> Option<u32> {
        let groups = self.groups();
        if groups.is_empty() {
            return None;
        }
        peek_in(groups, tag)
    }
}

/// [`Dedup::peek`] in the table's groups, of which there is at least one.
#[inline(always)]
fn peek_in(groups: &[Group], tag: u32) -> Option<u32> {
    let t = stored(tag);
    let group = words(&groups[home(t, groups.len())]);
    let m = matching(group, t);
    (m != 0).then(|| group[GROUP + m.trailing_zeros() as usize])
}

/// Quads of an old dedup table read between two give-backs in its growth: 2 MiB.
const GIVE_BACK_QUADS: usize = (2 << 20) / 16;

/// Give back to the kernel the whole pages of `table` from word quad `from` (or the
/// first whole page after it) up to quad `to`, which it will not read again: they
/// read as zeros from then on, and cost no memory until written. Returns where the
/// next give-back starts. Small tables (under two pages) are left alone.
fn give_back(table: &mut [[u32; 4]], from: usize, to: usize) -> usize {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        if std::mem::size_of_val(table) < 2 * PAGE {
            return to;
        }
        let start = table.as_mut_ptr() as usize;
        let first = (start + from * 16).next_multiple_of(PAGE);
        let end = (start + to * 16) / PAGE * PAGE;
        if end <= first {
            return from;
        }
        // SAFETY: the range lies inside `table`, which this function borrows
        // mutably: nothing else reads those words, and the caller reads none of
        // them again. MADV_DONTNEED on private memory only makes them read as
        // zeros from then on.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_DONTNEED);
        }
        (end - start) / 16
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (table, from);
        to
    }
}

/// Make room in `v` for `additional` more elements; a vector of 16 KiB to 128 KiB
/// about to grow goes straight to 128 KiB and past, which the allocator maps
/// apart from its heap (see `fix_mmap_threshold`), instead of doubling through
/// heap blocks of 32 and 64 KiB: each of those was a copy into pages faulted
/// in for it, and a mapped vector grows in place, its pages backed only as
/// they are written.
pub(crate) fn reserve_past_heap<T>(v: &mut Vec<T>, additional: usize) {
    let need = v.len().saturating_add(additional);
    if need > v.capacity() {
        let past = past_heap(v.capacity(), std::mem::size_of::<T>());
        if past > 0 {
            v.reserve_exact(need.max(past) - v.len());
        }
    }
}

/// The capacity [`reserve_past_heap`] takes a vector of capacity `cap` (elements of
/// `elem` bytes) that must grow to: 0 where it lets the vector double.
pub(crate) fn past_heap(cap: usize, elem: usize) -> usize {
    const FROM: usize = 16 << 10;
    const PAST: usize = (128 << 10) + 4096;
    match cap.checked_mul(elem) {
        Some(bytes) if elem > 0 && (FROM..PAST).contains(&bytes) => PAST / elem,
        _ => 0,
    }
}

/// Back `table`, freshly allocated (zeroed) and about to be written throughout, with
/// writable pages now, in one call. Filled by probes that read a slot before they
/// write it, each of its pages would otherwise fault twice (the read maps the
/// shared zero page, the write then copies it); backed in one call, none faults.
/// (A page fault costs about 1.6 µs on the machine the benchmarks ran on, and a
/// fifth of a small workload's faults were these.) Where the kernel cannot
/// (before Linux 5.14), the pages fault as before; results never depend on it.
fn populate<T>(table: &mut [T]) {
    #[cfg(target_os = "linux")]
    advise_whole(table, 4096, libc::MADV_POPULATE_WRITE);
    #[cfg(not(target_os = "linux"))]
    let _ = table;
}

/// Ask the kernel to back a large, freshly allocated and not yet written table with
/// huge pages: a probe at a random place then costs one TLB entry per 2 MiB instead
/// of one per 4 KiB, and filling it one page fault per 2 MiB. Where transparent huge
/// pages are off or unsupported this does nothing; results never depend on it.
fn advise_huge_pages<T>(table: &[T]) {
    #[cfg(target_os = "linux")]
    advise_whole(table, 2 << 20, libc::MADV_HUGEPAGE);
    #[cfg(not(target_os = "linux"))]
    let _ = table;
}

/// `madvise(advice)` on the whole `unit`-aligned pages of `table`, if it spans two
/// units at least. `advice` must be one that never changes memory's contents.
#[cfg(target_os = "linux")]
fn advise_whole<T>(table: &[T], unit: usize, advice: libc::c_int) {
    let bytes = std::mem::size_of_val(table);
    if bytes < 2 * unit {
        return;
    }
    let start = table.as_ptr() as usize;
    let first = start.next_multiple_of(unit);
    let end = (start + bytes) / unit * unit;
    if end > first {
        // SAFETY: the range lies inside `table`'s allocation, and the advice
        // (MADV_POPULATE_WRITE, MADV_HUGEPAGE) only changes how the kernel backs
        // those pages, never their contents.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, advice);
        }
    }
}

/// A hint to load the cache line holding `x` (no effect where unsupported).
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: SSE is part of the x86_64 baseline, and a prefetch never faults
        // (here the address comes from a live reference anyway).
        unsafe { _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Key cells an index bucket holds inline: a probe with a key this short compares
/// the bucket alone; a longer one also reads the bucket's first row.
const INLINE_KEY: usize = 2;

/// One key of an index: its hash (so growing the table never re-reads rows), its
/// first cells, and its rows (ascending).
#[derive(Clone)]
struct Bucket {
    hash: u64,
    key: [u64; INLINE_KEY],
    rows: RowList,
}

/// An index key's rows, ascending: up to four in place (in the room a `Vec<u32>`
/// takes), more on the heap. Most keys have few rows: in place, a look-up reads
/// them with the slot, and adding them allocates nothing.
pub(crate) type RowList = smallvec::SmallVec<[u32; 4]>;

const _: () = assert!(std::mem::size_of::<RowList>() == std::mem::size_of::<Vec<u32>>());

/// Heap bytes of a row list (none while its rows are in place).
#[inline]
fn heap_bytes(rows: &RowList) -> usize {
    if rows.spilled() {
        rows.capacity() * 4
    } else {
        0
    }
}

/// The inline part of a key.
#[inline]
fn key_prefix(key: impl Iterator<Item = u64>) -> [u64; INLINE_KEY] {
    let mut p = [0; INLINE_KEY];
    for (d, k) in p.iter_mut().zip(key) {
        *d = k;
    }
    p
}

/// Slots a dense index may hold beyond two a key: the first keys may come in any
/// order, so a few keys may go up to this without making the index hashed (their
/// slots then take at most 48 KiB).
const DENSE_SLACK: usize = 2048;

/// Slots a dense index of `keys` keys may hold: two a key, whose 48 bytes are fewer
/// than the 56 at least that a key's bucket and control byte take in a hash table
/// at most 7/8 full, and [`DENSE_SLACK`].
#[inline]
fn dense_limit(keys: usize) -> usize {
    2 * keys + DENSE_SLACK
}

/// Bytes a hash index's table allocates to hold `keys` keys.
fn table_bytes(keys: usize) -> usize {
    (keys * 8 / 7).next_power_of_two().max(4) * (std::mem::size_of::<Bucket>() + 1)
}

/// Where an index keeps its row lists.
#[derive(Clone)]
enum Keys {
    /// Keys of one cell, all small: key `k`'s rows in `slots[k]` (empty for a key
    /// without rows), so that a look-up is a bounds check and a load. `slots` never
    /// holds more than [`dense_limit`] of `keys` (the keys with rows); a key past
    /// that limit turns the index [`Keys::Hashed`] for good.
    Dense { slots: Vec<RowList>, keys: usize },
    /// Any key: a bucket a key, found by hash.
    Hashed(HashTable<Bucket>),
}

/// The rows of key `key` in dense slots.
#[inline(always)]
pub(crate) fn dense_rows(slots: &[RowList], key: u64) -> &[u32] {
    match usize::try_from(key).ok().and_then(|k| slots.get(k)) {
        Some(rows) => rows,
        None => &[],
    }
}

/// An index on a set of columns: key → rows (ascending).
#[derive(Clone)]
pub(crate) struct Index {
    /// The key columns, in key order.
    pub cols: Vec<usize>,
    keys: Keys,
    /// Bytes allocated by the keys' row lists.
    row_bytes: usize,
    /// In a layered relation: the base's index on the same columns, which answers
    /// for the base's rows (this one then holds only the layer's own rows). `None`
    /// in a plain relation, and in a layer whose base lacks such an index (this one
    /// then covers the base's rows too).
    base: Option<usize>,
}

impl Index {
    /// An empty index on `cols`, answering for the base's rows through the base's
    /// index `base` if any. Dense while its keys are one cell, unless it holds only a
    /// layer's own rows (whose keys are few and anywhere).
    fn new(cols: &[usize], base: Option<usize>) -> Index {
        let keys = if cols.len() == 1 && base.is_none() {
            Keys::Dense {
                slots: Vec::new(),
                keys: 0,
            }
        } else {
            Keys::Hashed(HashTable::new())
        };
        Index {
            cols: cols.to_vec(),
            keys,
            row_bytes: 0,
            base,
        }
    }

    /// Bytes allocated: the table or slots, and the row lists.
    fn bytes(&self) -> usize {
        self.row_bytes
            + match &self.keys {
                Keys::Dense { slots, .. } => slots.capacity() * std::mem::size_of::<RowList>(),
                Keys::Hashed(table) => table.allocation_size(),
            }
    }

    /// Size a new dense index's slots for the keys of rows `0..len` at once, so that
    /// the order they come in does not matter; or make it hashed if they are too
    /// sparse.
    fn presize(&mut self, rows: Rows<'_>, len: u32) {
        let Keys::Dense { slots, .. } = &mut self.keys else {
            return;
        };
        let c = self.cols[0];
        let Some(top) = (0..len).map(|r| rows.row(r).get(c)).max() else {
            return;
        };
        // (Keys are at most rows.)
        if top < dense_limit(len as usize) as u64 {
            let top = top as usize;
            let mut seen = vec![0u64; top / 64 + 1];
            for r in 0..len {
                let k = rows.row(r).get(c) as usize;
                seen[k / 64] |= 1 << (k % 64);
            }
            let keys: usize = seen.iter().map(|w| w.count_ones() as usize).sum();
            if top < dense_limit(keys) {
                slots.reserve_exact(top + 1);
                slots.resize_with(top + 1, RowList::new);
                return;
            }
        }
        self.keys = Keys::Hashed(HashTable::new());
    }

    /// Make a dense index hashed (a key past its limit came), moving each key's row
    /// list as it is.
    #[cold]
    #[inline(never)]
    fn make_hashed(&mut self) {
        let Keys::Dense { slots, keys } = &mut self.keys else {
            return;
        };
        let mut table = HashTable::with_capacity(*keys);
        for (k, rows) in std::mem::take(slots).into_iter().enumerate() {
            if !rows.is_empty() {
                let k = k as u64;
                let hash = hash_cells(std::iter::once(k));
                let bucket = Bucket {
                    hash,
                    key: key_prefix(std::iter::once(k)),
                    rows,
                };
                table.insert_unique(hash, bucket, |b| b.hash);
            }
        }
        self.keys = Keys::Hashed(table);
    }
}

/// Words of a row's own confidence (low word first).
const CONF_WORDS: usize = 2;
/// The most words a row [`Relation::insert_narrow`] takes has: four cells, its
/// packed record, its own confidence.
const NARROW_ROW: usize = 4 + 1 + CONF_WORDS;
/// Bits of a rule id in a packed record word (above them: the height).
const PACKED_RULE_BITS: u32 = 12;

/// The inline derivation word of premises `prem` (rows that fit, see
/// [`fits_inline`]) under inline shape tag `tag`.
#[inline(always)]
fn inline_word(tag: u64, prem: &[FactId]) -> DerivRec {
    let rows = prem.iter().enumerate();
    DerivRec(rows.fold(tag << TAG_SHIFT, |w, (i, p)| {
        w | (p.row as u64) << row_shift(prem.len(), i)
    }))
}

/// A record's height and rule in one word, when both fit: each is stored plus one
/// (wrapping), so that [`INPUT_RULE`] and the least-height pass's "no height yet"
/// (`u32::MAX`) are 0. Rules up to 4,094 and heights up to 2^20 − 2 pack.
#[inline]
fn pack(meta: Meta) -> Option<u32> {
    let rule = meta.rule.wrapping_add(1);
    let height = meta.height.wrapping_add(1);
    (rule >> PACKED_RULE_BITS == 0 && height >> (32 - PACKED_RULE_BITS) == 0)
        .then_some(height << PACKED_RULE_BITS | rule)
}

/// The height and rule of a packed record word.
#[inline(always)]
fn unpack(w: u32) -> (u32, u32) {
    (
        (w >> PACKED_RULE_BITS).wrapping_sub(1),
        (w & ((1 << PACKED_RULE_BITS) - 1)).wrapping_sub(1),
    )
}

/// The shape of own rows in `data`: per row its cells (one or two words each), its
/// height and rule (packed in one word while every own row's fit, else a word
/// each), then, once own rows' confidences differ, its confidence. Layouts only
/// ever widen, copying every row once.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Layout {
    cell_words: usize,
    meta_words: usize,
    conf_col: bool,
}

impl Layout {
    /// The narrowest layout.
    const NARROW: Layout = Layout {
        cell_words: 1,
        meta_words: 1,
        conf_col: false,
    };

    /// The widest layout.
    const WIDEST: Layout = Layout {
        cell_words: 2,
        meta_words: 2,
        conf_col: true,
    };

    fn stride(self, arity: usize) -> usize {
        arity * self.cell_words + self.meta_words + if self.conf_col { CONF_WORDS } else { 0 }
    }

    /// The narrowest layout at least as wide as this one that holds rows with these
    /// cells, records and confidences (`uniform`: the confidence own rows share, if
    /// any).
    fn holding(
        self,
        cells: &[u64],
        metas: impl Iterator<Item = Meta>,
        uniform: Option<u64>,
    ) -> Layout {
        let mut l = self;
        if !narrow(cells) {
            l.cell_words = 2;
        }
        for m in metas {
            if pack(m).is_none() {
                l.meta_words = 2;
            }
            if uniform.is_some_and(|u| m.conf.to_bits() != u) {
                l.conf_col = true;
            }
        }
        l
    }
}

impl Layout {
    /// [`Layout::holding`] for many records of one rule, in passes over plain
    /// arrays that compilers vectorise.
    fn holding_all(
        self,
        cells: &[u64],
        rule: u32,
        heights: impl Iterator<Item = u32>,
        mut confs: impl Iterator<Item = f64> + Clone,
        uniform: Option<u64>,
    ) -> Layout {
        let mut l = self;
        if l.cell_words == 1 && cells.iter().fold(0, |a, &c| a | c) >> 32 != 0 {
            l.cell_words = 2;
        }
        if confs.clone().next().is_none() {
            return l;
        }
        // Heights are stored plus one (wrapping): the largest of those must fit.
        let top = heights.fold(1, |a: u32, h| a.max(h.wrapping_add(1)));
        if l.meta_words == 1
            && pack(Meta {
                conf: 0.0,
                height: top.wrapping_sub(1),
                rule,
            })
            .is_none()
        {
            l.meta_words = 2;
        }
        if let Some(u) = uniform
            && confs.any(|c| c.to_bits() != u)
        {
            l.conf_col = true;
        }
        l
    }
}

/// What a layer changed in the record of one of its base's rows.
#[derive(Clone, Copy)]
struct Patch {
    meta: Meta,
    /// The row's premises in the layer's arena; `None`: the base's.
    deriv: Option<DerivRec>,
    /// The row's input record.
    evidence: u32,
}

/// One relation's facts.
///
/// A relation is either plain (it owns every row) or a *layer* over a shared base
/// relation ([`Relation::over`]): rows `0..base_len` are the base's, read through and
/// never written (a changed record of a base row is kept in the layer, as a patch),
/// and rows from `base_len` on are the layer's own. Row numbers are the same in both
/// forms, so a plan, a [`FactId`] and a delta list mean the same thing in either. A
/// layer's base is always plain.
#[derive(Clone)]
pub(crate) struct Relation {
    arity: usize,
    /// How own rows are laid out in `data`. Until two own rows' confidences differ
    /// (in an unweighted program, never), they share [`Relation::uniform`], which
    /// saves two words a row.
    layout: Layout,
    /// Words of an own row's cells: `arity * layout.cell_words` (kept, as `stride`
    /// is, because every row read needs it).
    cells_words: usize,
    /// Words per own row: `layout.stride(arity)`. Each row is followed by its
    /// record, so that checking a derived tuple against an existing fact reads one
    /// cache line, not two.
    stride: usize,
    /// The confidence bits of every own row while `!layout.conf_col` (meaningless
    /// while the relation has no own rows).
    uniform: u64,
    /// Rows of the base (0 for a plain relation).
    base_len: u32,
    base: Option<Shared>,
    /// Every row, the base's included.
    len: u32,
    /// Own rows' cells and records, in 32-bit words.
    data: Vec<u32>,
    /// Own rows, by a 32-bit digest of their hash (a probe reads the row only when
    /// the digest matches).
    dedup: Dedup,
    /// Indexes, each on a distinct column set. A layer starts with its base's, in
    /// the same positions, so index numbers in plans hold for both.
    pub indexes: Vec<Index>,
    /// Premises of the best derivation per own row from row `deriv_lead` on (empty
    /// when provenance is off).
    deriv: Derivs,
    /// Leading own rows whose derivation word is `lead_deriv` (input facts, which have
    /// no premises, loaded before anything is derived), kept as a count.
    deriv_lead: u32,
    lead_deriv: DerivRec,
    /// Premise rows of `deriv` and of patches (an aggregate marker's is its count).
    premises: Vec<u32>,
    /// Premise shapes of `deriv` and of patches.
    shapes: Shapes,
    /// Per own row from row `evidence_lead` on: index of its input record in the fact
    /// base's evidence list, or [`NO_EVIDENCE`]. Rows past its end have none: the list
    /// stops at the last own row with a record, so derived rows appended after the
    /// inputs cost nothing here.
    evidence: Vec<u32>,
    /// Leading own rows whose input record is `lead_evidence` plus the row's own
    /// number (a load's facts, one record each, in order), kept as a count.
    evidence_lead: u32,
    lead_evidence: u32,
    /// Base rows whose record the layer changed.
    patches: FxHashMap<u32, Patch>,
    /// Rows with an input record, when listed (see [`Relation::list_inputs`]).
    inputs: Option<Vec<u32>>,
    /// The rows by their cells, while small ([`Grid`]).
    grid: Grid,
    /// Bounds on the rows' heights by row number, while the relation is plain
    /// ([`Relation::mark`]).
    marks: Marks,
}

/// A relation of a shared, frozen fact base.
#[derive(Clone)]
struct Shared {
    rels: Arc<Vec<Relation>>,
    rel: usize,
}

impl Shared {
    #[inline]
    fn get(&self) -> &Relation {
        &self.rels[self.rel]
    }
}

/// Read access to rows by number, for code that holds the row storage borrowed
/// apart from the indexes.
#[derive(Clone, Copy)]
struct Rows<'a> {
    base: Option<&'a Relation>,
    base_len: u32,
    data: &'a [u32],
    /// Words of a row's cells, and whether a cell takes two.
    cells_words: usize,
    wide: bool,
    stride: usize,
}

impl<'a> Rows<'a> {
    #[inline(always)]
    fn row(&self, row: u32) -> RowCells<'a> {
        if row < self.base_len {
            return match self.base {
                Some(b) => b.row(row),
                None => RowCells::EMPTY,
            };
        }
        let b = (row - self.base_len) as usize * self.stride;
        RowCells {
            words: &self.data[b..b + self.cells_words],
            wide: self.wide,
        }
    }
}

impl Relation {
    /// An empty relation of this arity.
    pub fn new(arity: usize) -> Relation {
        Relation {
            arity,
            layout: Layout::NARROW,
            cells_words: arity,
            stride: Layout::NARROW.stride(arity),
            uniform: 0,
            base_len: 0,
            base: None,
            len: 0,
            data: Vec::new(),
            dedup: Dedup::default(),
            indexes: Vec::new(),
            deriv: Derivs::default(),
            deriv_lead: 0,
            lead_deriv: DerivRec(UNRECORDED),
            premises: Vec::new(),
            shapes: Shapes::default(),
            evidence: Vec::new(),
            evidence_lead: 0,
            lead_evidence: 0,
            patches: FxHashMap::default(),
            inputs: None,
            grid: Grid::default(),
            marks: Marks::default(),
        }
    }

    /// A layer over relation `rel` of `rels`: every row of it, read through and never
    /// copied, and room for rows and record changes of its own. Over a layer, the new
    /// layer shares that layer's base and copies only what the layer added.
    pub fn over(rels: &Arc<Vec<Relation>>, rel: usize) -> Relation {
        let base = &rels[rel];
        if base.base.is_some() {
            return Relation::clone(base);
        }
        Relation {
            arity: base.arity,
            layout: Layout::NARROW,
            cells_words: base.arity,
            stride: Layout::NARROW.stride(base.arity),
            uniform: 0,
            base_len: base.len,
            base: Some(Shared {
                rels: Arc::clone(rels),
                rel,
            }),
            len: base.len,
            data: Vec::new(),
            dedup: Dedup::default(),
            indexes: base
                .indexes
                .iter()
                .enumerate()
                .map(|(i, ix)| Index::new(&ix.cols, Some(i)))
                .collect(),
            deriv: Derivs::default(),
            deriv_lead: 0,
            lead_deriv: DerivRec(UNRECORDED),
            premises: Vec::new(),
            shapes: Shapes::default(),
            evidence: Vec::new(),
            evidence_lead: 0,
            lead_evidence: 0,
            patches: FxHashMap::default(),
            inputs: None,
            grid: Grid::default(),
            marks: Marks::default(),
        }
    }

    /// Whether this is a layer over a shared base with rows.
    #[inline]
    pub fn is_layer(&self) -> bool {
        self.base_len > 0
    }

    /// The confidence every row shares: `Ok(None)` for no rows, `Err(())` when two
    /// may differ (a layer's are not looked into).
    pub fn one_confidence(&self) -> std::result::Result<Option<f64>, ()> {
        if self.len == 0 {
            Ok(None)
        } else if self.is_layer() || self.layout.conf_col {
            Err(())
        } else {
            Ok(Some(f64::from_bits(self.uniform)))
        }
    }

    /// Rows this relation holds itself (all of them, unless it is a layer).
    pub fn own_rows(&self) -> u32 {
        self.len - self.base_len
    }

    /// Base rows whose record this layer changed.
    pub fn patched_rows(&self) -> usize {
        self.patches.len()
    }

    /// Bytes this relation's own storage takes (not its base's), roughly.
    pub fn own_bytes(&self) -> usize {
        use std::mem::size_of;
        let indexes: usize = self
            .indexes
            .iter()
            .map(|ix| {
                ix.cols.len() * 8
                    + match &ix.keys {
                        Keys::Dense { slots, .. } => slots.capacity() * size_of::<RowList>(),
                        Keys::Hashed(table) => table.capacity() * size_of::<Bucket>(),
                    }
            })
            .sum::<usize>()
            + self.own_rows() as usize * size_of::<u32>();
        size_of::<Relation>()
            + self.data.capacity() * 4
            + self.dedup.quads.capacity() * 16
            + self.grid.slots.capacity() * 4
            + indexes
            + self.deriv.bytes()
            + self.premises.capacity() * 4
            + self.shapes.bytes()
            + self.evidence.capacity() * 4
            + self.patches.capacity() * (size_of::<Patch>() + 8)
    }

    #[inline]
    fn rows(&self) -> Rows<'_> {
        Rows {
            base: self.base.as_ref().map(Shared::get),
            base_len: self.base_len,
            data: &self.data,
            cells_words: self.cells_words,
            wide: self.layout.cell_words == 2,
            stride: self.stride,
        }
    }

    /// Number of rows.
    #[inline]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// The cells of a row.
    #[inline(always)]
    pub fn row(&self, row: u32) -> RowCells<'_> {
        if row < self.base_len {
            return self.base_row(row);
        }
        let b = (row - self.base_len) as usize * self.stride;
        RowCells {
            words: &self.data[b..b + self.cells_words],
            wide: self.layout.cell_words == 2,
        }
    }

    #[inline(never)]
    fn base_row(&self, row: u32) -> RowCells<'_> {
        match &self.base {
            Some(b) => b.get().row(row),
            None => RowCells::EMPTY,
        }
    }

    /// Direct reads of this relation, when it is plain and in the narrowest layout,
    /// or in the narrowest but for each row's own confidence (a weighted view).
    #[inline]
    pub fn narrow(&self) -> Option<Narrow<'_>> {
        let weighted = Layout {
            conf_col: true,
            ..Layout::NARROW
        };
        (self.base.is_none() && (self.layout == Layout::NARROW || self.layout == weighted)).then(
            || {
                // The rows wholly in `data`: all of them (a plain relation's rows
                // are its own), checked with a product rather than worked out
                // with a division, which a pair scan would pay at every call.
                let rows = self.len - self.base_len;
                assert!(rows as usize * self.stride <= self.data.len());
                // (A narrow layout's row is its cells, its packed word, and any
                // confidence: `Narrow::record` reads inside it. A grid's slots are
                // its cells, as `Relation::regrid` makes them: `GridView::row`
                // reads inside them.)
                debug_assert!(self.arity < self.stride);
                let (slots, dim) = (&self.grid.slots, self.grid.dim);
                debug_assert!(!self.grid.on || slots.len() == dim.0 as usize * dim.1 as usize);
                Narrow {
                    data: &self.data,
                    groups: self.dedup.groups(),
                    arity: self.arity,
                    stride: self.stride,
                    rows,
                    conf: f64::from_bits(self.uniform),
                    conf_col: self.layout.conf_col,
                    flat: false,
                    grid: self.grid.on.then_some(GridView { slots, dim }),
                    marks: &self.marks,
                    handed: &[],
                }
            },
        )
    }

    /// Where an own row's record starts in `data`.
    #[inline(always)]
    fn record_at(&self, row: u32) -> usize {
        (row - self.base_len) as usize * self.stride + self.cells_words
    }

    /// The record of a row.
    #[inline(always)]
    pub fn meta(&self, row: u32) -> Meta {
        if row < self.base_len {
            return self.base_meta(row);
        }
        let b = self.record_at(row);
        let (height, rule) = if self.layout.meta_words == 1 {
            unpack(self.data[b])
        } else {
            (self.data[b], self.data[b + 1])
        };
        let conf = if self.layout.conf_col {
            let c = b + self.layout.meta_words;
            self.data[c] as u64 | (self.data[c + 1] as u64) << 32
        } else {
            self.uniform
        };
        Meta {
            conf: f64::from_bits(conf),
            height,
            rule,
        }
    }

    #[inline(never)]
    fn base_meta(&self, row: u32) -> Meta {
        if !self.patches.is_empty()
            && let Some(p) = self.patches.get(&row)
        {
            return p.meta;
        }
        match &self.base {
            Some(b) => b.get().meta(row),
            None => Meta::input(0.0),
        }
    }

    /// The patch of a base row, made on first use from the base's record.
    fn patch(&mut self, row: u32) -> &mut Patch {
        let base = self.base.as_ref().map(Shared::get);
        self.patches.entry(row).or_insert_with(|| Patch {
            meta: base.map_or(Meta::input(0.0), |b| b.meta(row)),
            deriv: None,
            evidence: base.map_or(NO_EVIDENCE, |b| b.evidence_of(row)),
        })
    }

    /// Mark the rows added since the last mark with their highest height (see
    /// [`Marks`]): a merge does once it is done, so that the next wave's look-ups
    /// find the rows it added marked. A record replaced later raises the marks
    /// over it ([`Relation::set_meta`]). A layer is never marked: its rows do not
    /// all lie in it.
    pub fn mark(&mut self) {
        let from = self.marks.rows();
        if !self.markable() || from >= self.len {
            return;
        }
        let rows = self.data[from as usize * self.stride..].chunks_exact(self.stride);
        let record = |r: &[u32]| r[self.cells_words];
        let top = if self.layout.meta_words == 1 {
            rows.map(|r| unpack(record(r)).0).max()
        } else {
            rows.map(record).max()
        };
        self.marks.extend(self.len, top.unwrap_or(0));
    }

    /// Whether the relation is marked as it grows: a plain one whose rows share
    /// one confidence.
    #[inline]
    pub fn markable(&self) -> bool {
        self.base.is_none() && !self.layout.conf_col
    }

    /// [`Relation::mark`] after a merge that added the rows from `before` on,
    /// storing no record higher than `top`: where every row before it was marked,
    /// the rows it added are marked without being read again.
    pub fn mark_merged(&mut self, before: u32, top: u32) {
        if self.marks.rows() == before && self.markable() {
            if self.len > before {
                self.marks.extend(self.len, top);
            }
        } else {
            self.mark();
        }
    }

    /// Forget the marks (after a pass that replaced records of its own, which
    /// raised them); the next [`Relation::mark`] marks every row anew.
    pub fn unmark(&mut self) {
        self.marks = Marks::default();
    }

    /// The rows from the first that are all of height at most `h` (see [`Marks`]).
    #[inline]
    pub fn below(&self, h: u32) -> u32 {
        self.marks.below(h)
    }

    /// Row `row`'s record is about to become one of height `h`: the marks over it
    /// allow that height (none are kept once rows have their own confidences).
    #[inline(never)]
    fn raise_marks(&mut self, row: u32, h: u32) {
        if self.layout.conf_col {
            self.marks = Marks::default();
        } else {
            self.marks.raise(row, h);
        }
    }

    /// Replace the record of a row.
    #[inline]
    pub fn set_meta(&mut self, row: u32, meta: Meta) {
        if row < self.base_len {
            self.patch(row).meta = meta;
            return;
        }
        if !self.marks.pairs.is_empty() {
            self.raise_marks(row, meta.height);
        }
        let conf = meta.conf.to_bits();
        // The usual record: packed, with a confidence the layout holds.
        if let Some(w) = pack(meta)
            && self.layout.meta_words == 1
            && (self.layout.conf_col || conf == self.uniform)
        {
            let b = self.record_at(row);
            self.data[b] = w;
            if self.layout.conf_col {
                self.data[b + 1] = conf as u32;
                self.data[b + 2] = (conf >> 32) as u32;
            }
            return;
        }
        self.set_meta_wider(row, meta);
    }

    /// [`Relation::set_meta`] of an own row whose record or confidence does not fit
    /// the narrowest layout.
    #[inline(never)]
    fn set_meta_wider(&mut self, row: u32, meta: Meta) {
        self.store_conf(row, meta.conf);
        let packed = pack(meta);
        if self.layout.meta_words == 1 && packed.is_none() {
            self.widen_to(Layout {
                meta_words: 2,
                ..self.layout
            });
        }
        let b = self.record_at(row);
        match packed {
            Some(w) if self.layout.meta_words == 1 => self.data[b] = w,
            _ => {
                self.data[b] = meta.height;
                self.data[b + 1] = meta.rule;
            }
        }
    }

    /// Store an own row's confidence, giving every row a confidence first if it
    /// differs from the one they share.
    #[inline]
    fn store_conf(&mut self, row: u32, conf: f64) {
        if !self.layout.conf_col {
            if conf.to_bits() == self.uniform {
                return;
            }
            self.widen_to(Layout {
                conf_col: true,
                ..self.layout
            });
        }
        let c = self.record_at(row) + self.layout.meta_words;
        let bits = conf.to_bits();
        self.data[c] = bits as u32;
        self.data[c + 1] = (bits >> 32) as u32;
    }

    /// Copy the own rows into layout `to`, at least as wide as theirs in every part
    /// (the first time a cell, a record or a confidence does not fit).
    #[cold]
    #[inline(never)]
    fn widen_to(&mut self, to: Layout) {
        let from = self.layout;
        let (old, rows) = (self.stride, self.data.len() / self.stride);
        let stride = to.stride(self.arity);
        let mut data = Vec::with_capacity(rows.max(1) * stride);
        for r in self.data.chunks_exact(old) {
            let (cells, rest) = r.split_at(self.cells_words);
            let (meta, conf) = rest.split_at(from.meta_words);
            if to.cell_words == from.cell_words {
                data.extend_from_slice(cells);
            } else {
                for &w in cells {
                    data.extend([w, 0]);
                }
            }
            match (from.meta_words, to.meta_words) {
                (1, 2) => {
                    let (height, rule) = unpack(meta[0]);
                    data.extend([height, rule]);
                }
                _ => data.extend_from_slice(meta),
            }
            if from.conf_col {
                data.extend_from_slice(conf);
            } else if to.conf_col {
                data.extend([self.uniform as u32, (self.uniform >> 32) as u32]);
            }
        }
        self.data = data;
        self.layout = to;
        self.cells_words = self.arity * to.cell_words;
        self.stride = stride;
        // Cells of two words: no grid fits, nor will (a layout never narrows
        // again).
        if to.cell_words != 1 {
            self.grid_off();
            self.grid = Grid::default();
        }
    }

    /// Replace the confidence of a row.
    #[inline]
    pub fn set_conf(&mut self, row: u32, conf: f64) {
        if row < self.base_len {
            self.patch(row).meta.conf = conf;
            return;
        }
        self.store_conf(row, conf);
    }

    /// The index of a row's input record in the fact base's evidence list, or
    /// [`NO_EVIDENCE`].
    #[inline]
    pub fn evidence_of(&self, row: u32) -> u32 {
        if row < self.base_len {
            if let Some(p) = self.patches.get(&row) {
                return p.evidence;
            }
            return self
                .base
                .as_ref()
                .map_or(NO_EVIDENCE, |b| b.get().evidence_of(row));
        }
        let r = row - self.base_len;
        if r < self.evidence_lead {
            return self.lead_evidence + r;
        }
        self.evidence
            .get((r - self.evidence_lead) as usize)
            .copied()
            .unwrap_or(NO_EVIDENCE)
    }

    /// Keep every own row's input record in `evidence`, the leading ones included.
    #[cold]
    fn spell_out_evidence(&mut self) {
        let lead = (0..self.evidence_lead).map(|r| self.lead_evidence + r);
        let mut all: Vec<u32> = lead.collect();
        all.append(&mut self.evidence);
        self.evidence = all;
        self.evidence_lead = 0;
    }

    /// Keep every own row's derivation word in `deriv`, the leading ones included.
    #[cold]
    fn spell_out_deriv(&mut self) {
        self.deriv
            .prepend(self.lead_deriv, self.deriv_lead as usize);
        self.deriv_lead = 0;
    }

    /// Set a row's input record.
    pub fn set_evidence(&mut self, row: u32, k: u32) {
        if row < self.base_len {
            self.patch(row).evidence = k;
        } else {
            let own = row - self.base_len;
            if own < self.evidence_lead {
                if self.lead_evidence + own == k {
                    return;
                }
                self.spell_out_evidence();
            }
            let r = (own - self.evidence_lead) as usize;
            if r >= self.evidence.len() && k != NO_EVIDENCE {
                self.evidence.resize(r + 1, NO_EVIDENCE);
            }
            if let Some(e) = self.evidence.get_mut(r) {
                *e = k;
            }
        }
        // (A row listed twice is fine: `input_rows` sorts and dedups.)
        if let Some(list) = &mut self.inputs
            && k != NO_EVIDENCE
        {
            list.push(row);
        }
    }

    /// The premises recorded for a row (aggregate markers included); `None` when
    /// nothing was recorded (provenance off).
    #[inline]
    pub fn premises_of(&self, row: u32) -> Option<Premises<'_>> {
        let rec = if row < self.base_len {
            match self.patches.get(&row).and_then(|p| p.deriv) {
                Some(rec) => rec,
                None => return self.base.as_ref().map(Shared::get)?.premises_of(row),
            }
        } else {
            let r = row - self.base_len;
            if r < self.deriv_lead {
                self.lead_deriv
            } else {
                self.deriv.get((r - self.deriv_lead) as usize)?
            }
        };
        if rec.0 == UNRECORDED {
            return None;
        }
        let tag = rec.0 >> TAG_SHIFT;
        if tag == ARENA_TAG {
            let shape = (rec.0 >> 32) as u32 & (MAX_SHAPES as u32 - 1);
            let rels = self.shapes.get(shape);
            let start = rec.0 as u32 as usize;
            let rows = self.premises.get(start..start + rels.len())?;
            return Some(Premises {
                rels,
                rows,
                inline: [0; 3],
            });
        }
        let rels = self.shapes.get(*self.shapes.inline.get(tag as usize)?);
        let mut inline = [0; 3];
        let mask = u64::from(inline_limit(rels.len())) - 1;
        for (i, row) in inline.iter_mut().enumerate().take(rels.len()) {
            *row = (rec.0 >> row_shift(rels.len(), i) & mask) as u32;
        }
        Some(Premises {
            rels,
            rows: &[],
            inline,
        })
    }

    /// Record `prem` as a row's premises: over the old ones when they are the layer's
    /// own and fit, else appended to the arena.
    pub fn set_premises(&mut self, row: u32, prem: &[FactId]) -> Result<()> {
        if row < self.base_len {
            let old = self.patch(row).deriv;
            let rec = self.place(old, prem)?;
            self.patch(row).deriv = Some(rec);
            return Ok(());
        }
        if row - self.base_len < self.deriv_lead {
            if prem.is_empty() && self.place(None, prem)?.0 == self.lead_deriv.0 {
                return Ok(());
            }
            self.spell_out_deriv();
        }
        let r = (row - self.base_len - self.deriv_lead) as usize;
        let old = self.deriv.get(r);
        let rec = self.place(old, prem)?;
        self.deriv.set(r, rec);
        Ok(())
    }

    /// Where premises `prem` go: inline when there are at most three whose rows fit
    /// ([`fits_inline`]), of an inline shape; else over `old`'s rows when they are in the arena and fit, else at
    /// the arena's end.
    // Out of line: the merge's loop inlines its callers, and runs of one shape take
    // `Shapes::cached_word` before they get here.
    #[inline(never)]
    fn place(&mut self, old: Option<DerivRec>, prem: &[FactId]) -> Result<DerivRec> {
        // A run of derivations of one rule repeats its shape: no interning.
        if let Some(rec) = self.shapes.cached_word(prem) {
            return Ok(rec);
        }
        // At most three premises, whose rows fit inline.
        let short = fits_inline(prem);
        let shape = self.shapes.intern(prem)?;
        if short && let Some(tag) = self.shapes.inline_tag(shape) {
            let mut rels = [0; 3];
            for (r, p) in rels.iter_mut().zip(prem) {
                *r = p.rel;
            }
            self.shapes.last_inline = Some((rels, prem.len(), tag));
            return Ok(inline_word(tag, prem));
        }
        let old_arena = old
            .filter(|d| d.0 >> TAG_SHIFT == ARENA_TAG && d.0 != UNRECORDED)
            .map(|d| {
                let shape = (d.0 >> 32) as u32 & (MAX_SHAPES as u32 - 1);
                (d.0 as u32, self.shapes.get(shape).len())
            });
        let start = match old_arena {
            Some((start, room)) if prem.len() <= room => {
                let rows = &mut self.premises[start as usize..start as usize + prem.len()];
                for (r, p) in rows.iter_mut().zip(prem) {
                    *r = p.row;
                }
                start
            }
            _ => arena_push(&mut self.premises, prem)?,
        };
        Ok(DerivRec(
            ARENA_TAG << TAG_SHIFT | (shape as u64) << 32 | start as u64,
        ))
    }

    /// [`Relation::push_records`] for a derived row (no input record) with these
    /// premises: a run of derivations of one shape of one to three premises takes the
    /// shortest way (its word goes after the leading input rows' count, as
    /// `push_records` would put it).
    // Out of line: inlined, its checks weighed on the register use of the whole
    // merge loop, taken or not (+30 instructions a fact on a plain closure).
    #[inline(never)]
    pub fn push_derived(&mut self, prem: &[FactId]) -> Result<()> {
        if !prem.is_empty()
            && let Some(rec) = self.shapes.cached_word(prem)
        {
            self.deriv.push(rec);
            return Ok(());
        }
        self.push_records(NO_EVIDENCE, Some(prem))
    }

    /// The inline derivation word of a derivation whose premises are facts of `rels`
    /// (one to three relations, in premise order), as `word | row_i << row_shift(n,
    /// i)` over the premises for the `word` returned here ([`row_shift`]); `None`
    /// when that shape cannot be inline (no inline tag left). Interns the shape, so
    /// that a batch of such derivations can be recorded with [`Relation::push_word`]
    /// and [`Relation::set_word`] without looking their shape up one by one. Rows
    /// must be below [`inline_limit`].
    pub fn inline_base(&mut self, rels: &[u32]) -> Result<Option<u64>> {
        if rels.is_empty() || rels.len() > 3 {
            return Ok(None);
        }
        let mut prem = [FactId { rel: 0, row: 0 }; 3];
        for (p, &rel) in prem.iter_mut().zip(rels) {
            p.rel = rel;
        }
        let shape = self.shapes.intern(&prem[..rels.len()])?;
        Ok(self.shapes.inline_tag(shape).map(|tag| tag << TAG_SHIFT))
    }

    /// [`Relation::push_derived`] for a derivation recorded as an inline word made
    /// from an [`Relation::inline_base`].
    #[inline(always)]
    pub fn push_word(&mut self, word: u64) {
        self.deriv.push(DerivRec(word));
    }

    /// [`Relation::inline_base`] for a derivation word in its narrow form (see
    /// [`DerivRec::narrow`]), when the relation's words are narrow and the shape
    /// has one premise or none and one of the first four tags: `word | row` over
    /// rows below `2^30 - 1` is the narrow word, recorded with
    /// [`Relation::push_narrow`] and [`Relation::set_narrow`].
    pub fn narrow_base(&mut self, rels: &[u32]) -> Result<Option<u64>> {
        if rels.len() > 1 || !matches!(self.deriv, Derivs::Narrow(_)) {
            return Ok(None);
        }
        let mut prem = [FactId { rel: 0, row: 0 }; 1];
        for (p, &rel) in prem.iter_mut().zip(rels) {
            p.rel = rel;
        }
        let shape = self.shapes.intern(&prem[..rels.len()])?;
        Ok(self
            .shapes
            .inline_tag(shape)
            .filter(|&tag| tag < 4)
            .map(|tag| tag << NARROW_ROW_BITS))
    }

    /// [`Relation::push_word`] for a word made from a [`Relation::narrow_base`] (it
    /// holds a `u32`).
    #[inline(always)]
    pub fn push_narrow(&mut self, word: u64) {
        match &mut self.deriv {
            Derivs::Narrow(v) => v.push(word as u32),
            d => d.push(DerivRec::widen(word as u32)),
        }
    }

    /// [`Relation::set_word`] for a word made from a [`Relation::narrow_base`].
    pub fn set_narrow(&mut self, row: u32, word: u64) {
        self.set_word(row, DerivRec::widen(word as u32).0);
    }

    /// [`Relation::set_premises`] for a derivation recorded as an inline word made
    /// from an [`Relation::inline_base`].
    pub fn set_word(&mut self, row: u32, word: u64) {
        if row < self.base_len {
            self.patch(row).deriv = Some(DerivRec(word));
            return;
        }
        if row - self.base_len < self.deriv_lead {
            self.spell_out_deriv();
        }
        let r = (row - self.base_len - self.deriv_lead) as usize;
        self.deriv.set(r, DerivRec(word));
    }

    /// Give a row just appended by [`Relation::insert`] its records: its input record
    /// and, with provenance, its premises (none for an input fact).
    #[inline]
    pub fn push_records(&mut self, evidence: u32, premises: Option<&[FactId]>) -> Result<()> {
        let r = self.len - self.base_len - 1;
        if evidence != NO_EVIDENCE {
            if self.evidence.is_empty()
                && r == self.evidence_lead
                && (r == 0 || self.lead_evidence.checked_add(r) == Some(evidence))
            {
                if r == 0 {
                    self.lead_evidence = evidence;
                }
                self.evidence_lead += 1;
            } else {
                self.evidence
                    .resize((r - self.evidence_lead) as usize, NO_EVIDENCE);
                self.evidence.push(evidence);
            }
        }
        if let Some(prem) = premises {
            // The next of the leading input rows: its word is the lead's.
            if prem.is_empty() && r > 0 && r == self.deriv_lead && self.deriv.is_empty() {
                self.deriv_lead += 1;
                return self.list_input(evidence);
            }
            let rec = self.place(None, prem)?;
            if self.deriv.is_empty()
                && r == self.deriv_lead
                && prem.is_empty()
                && (r == 0 || rec.0 == self.lead_deriv.0)
            {
                self.lead_deriv = rec;
                self.deriv_lead += 1;
            } else {
                self.deriv.push(rec);
            }
        }
        self.list_input(evidence)
    }

    /// List the row just appended among the input rows when they are listed and it
    /// has an input record.
    #[inline]
    fn list_input(&mut self, evidence: u32) -> Result<()> {
        if let Some(list) = &mut self.inputs
            && evidence != NO_EVIDENCE
        {
            list.push(self.len - 1);
        }
        Ok(())
    }

    /// Give a derived row just appended by [`Relation::insert`] a placeholder for its
    /// premises, in a stratum whose records the least-height pass re-selects (and
    /// so records with [`Relation::set_premises`]) before anything reads them.
    #[inline]
    pub fn push_unrecorded(&mut self) {
        self.deriv.push(DerivRec(UNRECORDED));
    }

    /// Every row that has an input record, ascending.
    pub fn input_rows(&self) -> Vec<u32> {
        let mut out: Vec<u32> = match (&self.base, &self.inputs) {
            (_, Some(list)) => list.clone(),
            (Some(b), None) => b
                .get()
                .input_rows()
                .into_iter()
                .filter(|&r| self.evidence_of(r) != NO_EVIDENCE)
                .collect(),
            (None, None) => Vec::new(),
        };
        if self.inputs.is_none() {
            out.extend(
                self.patches
                    .iter()
                    .filter(|(_, p)| p.evidence != NO_EVIDENCE)
                    .map(|(&r, _)| r),
            );
            let own = (self.base_len..self.len).filter(|&r| self.evidence_of(r) != NO_EVIDENCE);
            out.extend(own);
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Keep a list of the rows with an input record from now on, so that
    /// [`Relation::input_rows`] (of this relation and of layers over it) need not scan.
    pub fn list_inputs(&mut self) {
        if self.inputs.is_none() {
            let rows = self.input_rows();
            self.inputs = Some(rows);
        }
    }

    /// The row holding exactly these cells.
    #[inline]
    pub fn find(&self, cells: &[u64]) -> Option<u32> {
        self.find_tagged(cells, tag_of(hash_cells(cells.iter().copied())))
    }

    /// [`Relation::find`] for cells whose digest `tag_of(hash_cells(cells))` is
    /// already known.
    /// (Inlined where derivations are emitted: the look-up of a derivation that is
    /// already a fact is most of what a duplicate-heavy join does.)
    #[inline(always)]
    pub fn find_tagged(&self, cells: &[u64], tag: u32) -> Option<u32> {
        if self.base.is_some()
            && let Some(row) = self.find_in_base(cells, tag)
        {
            return Some(row);
        }
        self.find_own(cells, tag)
    }

    /// The own row with these cells (the dedup table, or the grid standing in for
    /// it, holds own rows only).
    #[inline(always)]
    fn find_own(&self, cells: &[u64], tag: u32) -> Option<u32> {
        // No dedup table: no rows, or a grid stands in for it (which finds none
        // while it is off). The probe tests this too: on the way to a table, no
        // test is added.
        let groups = self.dedup.groups();
        if groups.is_empty() {
            return self.grid.find(cells);
        }
        let (data, stride, len, base_len) =
            (&self.data, self.stride, self.cells_words, self.base_len);
        let wide = self.layout.cell_words == 2;
        find_in(
            groups,
            tag,
            #[inline(always)]
            |r| {
                let b = (r - base_len) as usize * stride;
                RowCells {
                    words: &data[b..b + len],
                    wide,
                }
                .same(cells)
            },
        )
    }

    /// A layer's look-up in its base (which is always plain).
    #[inline(never)]
    fn find_in_base(&self, cells: &[u64], tag: u32) -> Option<u32> {
        self.base.as_ref()?.get().find_own(cells, tag)
    }

    /// Find the row with these cells or append it; `(row, true)` when appended. New
    /// rows get `meta` and are added to every index; the caller gives them their
    /// records with [`Relation::push_records`].
    pub fn insert(&mut self, cells: &[u64], meta: Meta) -> (u32, bool) {
        self.insert_tagged(cells, tag_of(hash_cells(cells.iter().copied())), meta)
    }

    /// Whether [`Relation::insert_narrow`] may insert here, and with which `C`:
    /// `Some(own)` when the relation is plain (not a layer), holds its rows narrow
    /// (a word a cell, then a packed record, then the row's confidence if `own`,
    /// none when its rows share one), and has rows (so that a shared confidence
    /// is set); `None` otherwise.
    #[inline]
    pub fn narrow_layout(&self) -> Option<bool> {
        (self.base.is_none()
            && self.base_len == 0
            && self.layout.cell_words == 1
            && self.layout.meta_words == 1
            && !self.data.is_empty())
        .then_some(self.layout.conf_col)
    }

    /// [`Relation::insert_tagged`] for a row of `N` cells (the relation's arity)
    /// where [`Relation::narrow_layout`] is `Some(C)`, if the row fits that
    /// layout: its cells fit 32 bits, its record packs, and its confidence is the
    /// relation's where the rows share one. `None` where it does not.
    #[inline(always)]
    pub fn insert_narrow<const N: usize, const C: bool>(
        &mut self,
        cells: &[u64; N],
        tag: u32,
        meta: Meta,
    ) -> Option<(u32, bool)> {
        debug_assert_eq!(self.narrow_layout(), Some(C));
        debug_assert_eq!(self.arity, N);
        let w = pack(meta)?;
        let conf = meta.conf.to_bits();
        if !C && conf != self.uniform || !narrow(cells) {
            return None;
        }
        let row = self.len;
        let (data, stride) = (&self.data, self.stride);
        let same = |r: u32| {
            let words = &data[r as usize * stride..][..N];
            (0..N).all(|i| u64::from(words[i]) == cells[i])
        };
        // A table with room first (so that on the way to it no test is added):
        // a grid stands in for none.
        let found = if !self.dedup.full() {
            self.dedup.find_or_place(tag, row, same)
        } else if N == 2 && self.grid.on {
            self.grid.find(cells)
        } else {
            self.dedup.find_or_insert(tag, row, same)
        };
        if let Some(found) = found {
            return Some((found, false));
        }
        // The row's words in one copy: its cells, its packed record, and its own
        // confidence if it has one.
        let mut row_words = [0u32; NARROW_ROW];
        for (word, &c) in row_words.iter_mut().zip(cells) {
            *word = c as u32;
        }
        row_words[N] = w;
        let width = if C {
            row_words[N + 1..N + 1 + CONF_WORDS]
                .copy_from_slice(&[conf as u32, (conf >> 32) as u32]);
            N + 1 + CONF_WORDS
        } else {
            N + 1
        };
        self.data.extend_from_slice(&row_words[..width]);
        self.len += 1;
        let rows = Rows {
            base: None,
            base_len: 0,
            data: &self.data,
            cells_words: N,
            wide: false,
            stride,
        };
        for index in &mut self.indexes {
            // (A dense index's key is a cell at hand: the row is not read back.)
            if !dense_add(index, cells[index.cols[0]], row) {
                index_add(index, rows, row);
            }
        }
        if N == 2 && self.grid.on {
            self.grid_add(cells[0], cells[N - 1], row);
        }
        Some((row, true))
    }

    /// [`Relation::insert`] for cells whose digest `tag_of(hash_cells(cells))` is
    /// already known.
    #[inline]
    pub fn insert_tagged(&mut self, cells: &[u64], tag: u32, meta: Meta) -> (u32, bool) {
        if let Some(b) = &self.base
            && let Some(found) = b.get().find_tagged(cells, tag)
        {
            return (found, false);
        }
        let row = self.len;
        if self.grid.on {
            if let Some(found) = self.grid.find(cells) {
                return (found, false);
            }
            // A row the grid cannot hold (a cell past a word; the grid finds a
            // row by its cells alone, whatever record follows them) turns it off
            // before the row is stored (its dedup table is then made from the
            // rows stored before it).
            if !narrow(cells) {
                self.grid_off();
            }
        }
        if !self.grid.on {
            let rows = Rows {
                base: None,
                base_len: self.base_len,
                data: &self.data,
                cells_words: self.cells_words,
                wide: self.layout.cell_words == 2,
                stride: self.stride,
            };
            if let Some(found) = self
                .dedup
                .find_or_insert(tag, row, |r| rows.row(r).same(cells))
            {
                return (found, false);
            }
        }
        let conf = meta.conf.to_bits();
        if !self.layout.conf_col && self.data.is_empty() {
            self.uniform = conf;
        }
        match pack(meta) {
            // The usual row: narrow cells and a packed record, which the rows have.
            Some(w)
                if self.layout.cell_words == 1
                    && self.layout.meta_words == 1
                    && (self.layout.conf_col || conf == self.uniform)
                    && narrow(cells) =>
            {
                // (Pushes after one reservation: an extend from the cells'
                // iterator is not inlined into the merge, whose call it then is.)
                self.data.reserve(cells.len() + 1);
                for &c in cells {
                    self.data.push(c as u32);
                }
                self.data.push(w);
                if self.layout.conf_col {
                    self.data.extend([conf as u32, (conf >> 32) as u32]);
                }
            }
            _ => self.append_wider(cells, meta),
        }
        self.len += 1;
        let rows = Rows {
            base: self.base.as_ref().map(Shared::get),
            base_len: self.base_len,
            data: &self.data,
            cells_words: self.cells_words,
            wide: self.layout.cell_words == 2,
            stride: self.stride,
        };
        for index in &mut self.indexes {
            index_add(index, rows, row);
        }
        if self.grid.on {
            self.grid_add(cells[0], cells[1], row);
        }
        (row, true)
    }

    /// Keep a [`Grid`] of this relation's rows (of two cells of a word, not a
    /// layer's) whenever it fits ([`Relation::grid_fits`]): in place of the dedup
    /// table, it is read without a hash. `hot`: the joins' look-ups read it (they
    /// drop derivations into this relation), so that it may take twice a table's
    /// bytes; else no more than the table's. (A cell of two words, later, gives
    /// the grid up for good.)
    pub fn keep_grid(&mut self, hot: bool) {
        if self.arity == 2
            && self.base.is_none()
            && self.layout.cell_words == 1
            && (!self.grid.want || hot && !self.grid.hot)
        {
            self.grid.want = true;
            if hot {
                // A grid too large to stand in for the table alone may fit now.
                self.grid.hot = true;
                self.grid.retry_at = 0;
            }
            self.settle_grid();
        }
    }

    /// The bytes of a dedup table of the own rows, as it is or as it would be
    /// (while a grid stands in for it).
    fn dedup_bytes(&self) -> usize {
        Dedup::bytes_for((self.len - self.base_len) as usize)
    }

    /// Whether a grid of `dim` fits `rows` own rows: no more than the bytes of a
    /// dedup table of them, or, for a grid the look-ups read ([`Relation::keep_grid`]),
    /// twice those up to [`GRID_BYTES`]: the rows are dense among its cells.
    fn grid_fits(&self, (a, b): (u64, u64), rows: usize) -> bool {
        let dedup = Dedup::bytes_for(rows) as u64 + GRID_SLACK;
        a.checked_mul(b)
            .and_then(|n| n.checked_mul(4))
            .is_some_and(|bytes| {
                bytes <= dedup || self.grid.hot && bytes <= GRID_BYTES.min(dedup * 2)
            })
    }

    /// Turn a wanted grid that is off on, if it now fits: tried after each merge
    /// once a dedup table of the rows would be as large as [`Grid::retry_at`]
    /// (the table's size is what lets a grid fit that did not; the try reads
    /// every row).
    pub fn settle_grid(&mut self) {
        if self.grid.want
            && !self.grid.on
            && self.len > 0
            && self.dedup_bytes() >= self.grid.retry_at
        {
            self.regrid();
        }
    }

    /// Turn a grid that is on off, and make the dedup table it stood in for from
    /// the rows.
    #[cold]
    #[inline(never)]
    fn grid_off(&mut self) {
        if !self.grid.on {
            return;
        }
        (self.grid.slots, self.grid.dim, self.grid.on) = (Vec::new(), (0, 0), false);
        let own = (self.len - self.base_len) as usize;
        self.dedup = Dedup::of_rows(self.base_len, own, |r| {
            tag_of(hash_cells(self.row(r).iter()))
        });
    }

    /// Record row `row`, of cells `(a, b)`, in the grid, which is on: growing it
    /// if they are out of its range (or turning it off where it would not fit).
    #[inline(always)]
    fn grid_add(&mut self, a: u64, b: u64, row: u32) {
        if a < u64::from(self.grid.dim.0) && b < u64::from(self.grid.dim.1) {
            self.grid.put(a, b, row);
        } else {
            self.regrid();
        }
    }

    /// Make the grid anew from every row, large enough for their cells and half
    /// again (or just large enough, where that does not fit), giving the dedup
    /// table back; or turn it off where neither fits.
    #[cold]
    #[inline(never)]
    fn regrid(&mut self) {
        self.regrid_for((self.len - self.base_len) as usize);
    }

    /// [`Relation::regrid`], for a grid that must fit `rows` own rows (the
    /// rows there are, or as many as the dedup table is about to grow for).
    #[cold]
    #[inline(never)]
    fn regrid_for(&mut self, rows: usize) {
        // A cell of two words: no grid fits, nor will (a layout never narrows
        // again).
        if self.layout.cell_words != 1 {
            self.grid_off();
            self.grid = Grid::default();
            return;
        }
        let dim = match self.grid_dim(rows) {
            Ok(dim) => dim,
            Err(retry_at) => {
                self.grid_off();
                self.grid.retry_at = retry_at;
                return;
            }
        };
        // (The old slots, and the dedup table the grid stands in for, are given
        // back before the new slots are made.)
        self.grid.slots = Vec::new();
        self.dedup = Dedup::default();
        self.grid.slots = vec![0; (dim.0 * dim.1) as usize];
        self.grid.dim = (dim.0 as u32, dim.1 as u32);
        self.grid.on = true;
        for (r, row) in (0..).zip(self.data.chunks_exact(self.stride)) {
            self.grid.put(u64::from(row[0]), u64::from(row[1]), r);
        }
    }

    /// The dimensions of a grid made anew for the rows: large enough for their
    /// cells and half as large again as the grid now, or just large enough where
    /// that does not fit; where neither fits, the bytes of a dedup table of the
    /// rows from which to try again ([`Grid::retry_at`]).
    fn grid_dim(&self, rows: usize) -> Result<(u64, u64), usize> {
        let bytes = Dedup::bytes_for(rows);
        // A grid has a slot for each row at least (rows' cells differ).
        if !self.grid_fits((u64::from(self.len), 1), rows) {
            return Err(bytes + 1);
        }
        // The largest first and second cells, read as the rows lie.
        let top = self
            .data
            .chunks_exact(self.stride)
            .fold((0, 0), |t: (u32, u32), row| {
                (t.0.max(row[0]), t.1.max(row[1]))
            });
        let top = (u64::from(top.0), u64::from(top.1));
        let now = self.grid.dim;
        let grown = (Grid::grown(now.0, top.0), Grid::grown(now.1, top.1));
        let least = (
            (top.0 + 1).next_multiple_of(16),
            (top.1 + 1).next_multiple_of(16),
        );
        if let Some(dim) = [grown, least]
            .into_iter()
            .find(|&d| self.grid_fits(d, rows))
        {
            return Ok(dim);
        }
        // The least grid for these cells, in bytes, and the table it would stand
        // in for (see `Relation::grid_fits`).
        let need = least.0.saturating_mul(least.1).saturating_mul(4);
        let share = need.saturating_sub(GRID_SLACK);
        let table = if self.grid.hot && need <= GRID_BYTES {
            share.div_ceil(2)
        } else {
            share
        };
        Err((bytes + 1).max(usize::try_from(table).unwrap_or(usize::MAX)))
    }

    /// Append a row's cells and record in a layout wider than the narrowest (widening
    /// the rows' first if the row does not fit theirs).
    #[inline(never)]
    fn append_wider(&mut self, cells: &[u64], meta: Meta) {
        let shared = (!self.layout.conf_col).then_some(self.uniform);
        let to = self.layout.holding(cells, std::iter::once(meta), shared);
        if to != self.layout {
            self.widen_to(to);
        }
        if self.layout.cell_words == 1 {
            self.data.extend(cells.iter().map(|&c| c as u32));
        } else {
            for &c in cells {
                self.data.extend([c as u32, (c >> 32) as u32]);
            }
        }
        match pack(meta) {
            Some(w) if self.layout.meta_words == 1 => self.data.push(w),
            _ => self.data.extend([meta.height, meta.rule]),
        }
        if self.layout.conf_col {
            let conf = meta.conf.to_bits();
            self.data.extend([conf as u32, (conf >> 32) as u32]);
        }
    }

    /// Bytes this relation's own storage has allocated (not a layer's base's): rows
    /// with their records, the dedup table, indexes (tables and row lists),
    /// derivation records, evidence, patches.
    pub fn heap_bytes(&self) -> usize {
        self.data.capacity() * 4
            + self.dedup.quads.capacity() * 16
            + self.indexes.iter().map(Index::bytes).sum::<usize>()
            + self.deriv.bytes()
            + self.premises.capacity() * 4
            + self.shapes.bytes()
            + self.evidence.capacity() * 4
            + self.patches.capacity() * (std::mem::size_of::<Patch>() + 8)
            + self.inputs.as_ref().map_or(0, |i| i.capacity() * 4)
            + self.grid.slots.capacity() * 4
            + self.marks.bytes()
    }

    /// At most how many bytes inserting `rows` new rows with `premises` premises in
    /// all could allocate (vectors and tables that would have to grow, each to its
    /// new size: while one moves, both copies exist). `cells` are the new rows'
    /// cells; their records (which may also replace existing rows' records) are of
    /// rule `rule` with confidences `confs` and heights `heights` (none: all 0).
    pub fn growth_bound(
        &self,
        rows: usize,
        premises: usize,
        cells: &[u64],
        rule: u32,
        heights: impl Iterator<Item = u32>,
        confs: impl Iterator<Item = f64> + Clone,
    ) -> usize {
        // A cell, a record or a confidence that does not fit the own rows' layout
        // makes every row wider: a new vector, while the old one still exists.
        let shared = match confs.clone().next() {
            _ if self.layout.conf_col => None,
            Some(c) if self.data.is_empty() => Some(c.to_bits()),
            _ => Some(self.uniform),
        };
        let to = self.layout.holding_all(cells, rule, heights, confs, shared);
        // A dense index grows its slots for a key past them.
        let past_slots = |c: usize, slots: usize| {
            let top = if cells.len() >= rows * self.arity {
                cells
                    .chunks_exact(self.arity)
                    .take(rows)
                    .map(|r| r[c])
                    .max()
            } else {
                Some(u64::MAX)
            };
            top.is_some_and(|k| k >= slots as u64)
        };
        self.data_growth(rows, to) + self.rest_growth(rows, premises, past_slots)
    }

    /// [`Relation::growth_bound`] without reading the rows: as if they made every
    /// row wider and every dense index grow, so never less. A merge checks this
    /// bound first and reads its rows for the exact one only when this one is
    /// past the memory limit.
    pub fn growth_ceiling(&self, rows: usize, premises: usize) -> usize {
        let wider = self.data_growth(rows, Layout::WIDEST);
        wider.max(self.data_growth(rows, self.layout))
            + self.rest_growth(rows, premises, |_, _| true)
    }

    /// What storing `rows` more rows under layout `to` could allocate.
    fn data_growth(&self, rows: usize, to: Layout) -> usize {
        if to != self.layout {
            (self.data.len() / self.stride + rows) * to.stride(self.arity) * 4
        } else {
            crate::eval::fixpoint::grow_bytes(
                self.data.len(),
                self.data.capacity(),
                rows * self.stride,
                4,
            )
        }
    }

    /// What `rows` more rows with `premises` premises in all could allocate
    /// besides the rows' own words; `past_slots(column, slots)` says whether the
    /// rows have a key past a dense index's `slots` on `column`.
    fn rest_growth(
        &self,
        rows: usize,
        premises: usize,
        past_slots: impl Fn(usize, usize) -> bool,
    ) -> usize {
        use crate::eval::fixpoint::grow_bytes;
        // (A grid standing in for the dedup table that turns off makes it anew.)
        let n = if self.grid.on {
            Dedup::slots_needed((self.len - self.base_len) as usize + rows)
        } else {
            self.dedup.slots_for(self.dedup.len + rows)
        };
        let mut g = 0;
        if n != self.dedup.slots() {
            g += (n / GROUP * GROUP_WORDS + 12) * 4;
        }
        for ix in &self.indexes {
            match &ix.keys {
                Keys::Hashed(table) => {
                    let need = table.len() + rows;
                    if need > table.capacity() {
                        g += table_bytes(need);
                    }
                }
                Keys::Dense { slots, keys } => {
                    // A key past the slots grows them, up to the limit; a key past
                    // that moves the keys to a hash table, which may grow in turn.
                    if past_slots(ix.cols[0], slots.len()) {
                        let need = keys + rows;
                        g += dense_limit(need) * std::mem::size_of::<RowList>()
                            + 2 * table_bytes(need);
                    }
                }
            }
            // A row list per new key, or a share of a growing one.
            g += rows * 8;
        }
        g += self.deriv.growth_bound(rows);
        g += grow_bytes(self.premises.len(), self.premises.capacity(), premises, 4);
        g += self.shapes.growth_bound(rows, premises);
        // A grid a row falls outside of is made anew (or one turned on after the
        // merge, when the rows are more): as large as a grid may be, the bytes of
        // a dedup table of the rows, or up to twice those for a hot one.
        if self.grid.want {
            let own = (self.len - self.base_len) as usize + rows;
            g += (GRID_BYTES as usize).max(Dedup::bytes_for(own));
        }
        // (Merged rows are derived: they add no evidence entries.)
        g
    }

    /// Make room for `additional` more rows, so that a batch of inserts never grows
    /// the dedup table midway (and prefetches stay valid).
    pub fn reserve(&mut self, additional: usize) {
        reserve_past_heap(&mut self.data, additional.saturating_mul(self.stride));
        self.deriv.reserve_past_heap(additional);
        // (A grid standing in for the table grows as rows come.)
        if self.grid.on {
            return;
        }
        // A table about to grow, for which a wanted grid that is off would stand
        // in within the grown table's bytes: the grid instead. The table's
        // largest growth is saved, and its bytes are never held beside the
        // grid's (a try after the merge would find the table grown).
        if self.grid.want
            && self.len > self.base_len
            && self.dedup.len + additional > self.dedup.limit
        {
            let rows = (self.len - self.base_len) as usize + additional;
            if Dedup::bytes_for(rows) >= self.grid.retry_at {
                self.regrid_for(rows);
                if self.grid.on {
                    return;
                }
            }
        }
        self.dedup.reserve(additional);
    }

    /// Make room for `additional` more input rows at once (a load of known size): the
    /// dedup table, the rows in their present layout, their input record numbers
    /// and, with `provenance`, their derivation words, each allocated once instead of
    /// doubling its way there.
    pub fn reserve_inputs(&mut self, additional: usize, provenance: bool) {
        if !self.grid.on {
            self.dedup.reserve(additional);
        }
        self.data.reserve_exact(additional * self.stride);
        // Input rows that come first need no input record number nor derivation
        // word of their own (see `evidence_lead`, `deriv_lead`); after other rows,
        // they grow those lists.
        if self.len > self.base_len {
            let own = (self.len - self.base_len) as usize;
            let listed = own - self.evidence_lead as usize + additional;
            self.evidence
                .reserve_exact(listed.saturating_sub(self.evidence.len()));
            if provenance {
                self.deriv.reserve_exact(additional);
            }
        }
    }

    /// Before a pass that probes for each of `tags` in order: start loading the
    /// slots of the first [`PROBE_AHEAD`] (see [`Relation::prefetch_probes`]).
    #[inline]
    pub fn prefetch_first_probes(&self, tags: impl Iterator<Item = u32>) {
        for t in tags.take(PROBE_AHEAD) {
            self.prefetch_slot(t);
        }
    }

    /// Whether probes of the dedup table are likely to miss the caches: whether
    /// it takes [`PREFETCH_BYTES`] or more. Below that, fetching ahead only costs
    /// instructions.
    #[inline]
    pub fn probes_miss(&self) -> bool {
        self.dedup.quads.len() * 16 >= PREFETCH_BYTES
    }

    /// In a pass that probes for digests in order, `tag_at(k)` the `k`-th (`None`
    /// past the last), before the probe for the `k`-th: probes of a large table
    /// miss the cache, so fetch the slot of the digest [`PROBE_AHEAD`] places on,
    /// and the row that slot names half as far on, so that the misses overlap
    /// instead of queueing.
    #[inline(always)]
    pub fn prefetch_probes(&self, tag_at: impl Fn(usize) -> Option<u32>, k: usize) {
        // The groups found once for both.
        let groups = self.dedup.groups();
        if groups.is_empty() {
            return;
        }
        if let Some(t) = tag_at(k + PROBE_AHEAD) {
            prefetch(&groups[home(stored(t), groups.len())]);
        }
        if let Some(t) = tag_at(k + PROBE_AHEAD / 2) {
            self.prefetch_row_of(peek_in(groups, t));
        }
    }

    /// Whether a grid stands in for the dedup table.
    #[inline]
    pub fn grid_on(&self) -> bool {
        self.grid.on
    }

    /// Whether inserts into a grid standing in for the dedup table are likely to
    /// miss the caches (it takes [`PREFETCH_BYTES`] or more).
    #[inline]
    pub fn grid_misses(&self) -> bool {
        self.grid.on && self.grid.slots.len() * 4 >= PREFETCH_BYTES
    }

    /// Start loading the grid's slot of cells `(a, b)`, if the grid is on and
    /// they are in its range.
    #[inline(always)]
    pub fn prefetch_grid(&self, a: u64, b: u64) {
        let (d0, d1) = self.grid.dim;
        if a < u64::from(d0) && b < u64::from(d1) {
            prefetch(&self.grid.slots[a as usize * d1 as usize + b as usize]);
        }
    }

    /// Once the grid's slot of cells `(a, b)` is loaded ([`Relation::prefetch_grid`]),
    /// start loading the row it names, if any and `fetch` asks for it: a
    /// derivation whose fact is there reads that row's record next (but for one
    /// the merge knows enough of without it, below the rows marked lower than it,
    /// see [`Marks`], or handed out).
    #[inline(always)]
    pub fn prefetch_grid_row(&self, a: u64, b: u64, fetch: impl Fn(u32) -> bool) {
        self.prefetch_row_of(self.grid.find(&[a, b]).filter(|&r| fetch(r)));
    }

    /// Start loading what inserting cells with digest `tag` will read first.
    #[inline]
    pub fn prefetch_slot(&self, tag: u32) {
        self.dedup.prefetch(tag);
    }

    /// Once that slot is loaded, start loading the row (and its record) it likely
    /// matches.
    #[inline]
    pub fn prefetch_row(&self, tag: u32) {
        self.prefetch_row_of(self.dedup.peek(tag));
    }

    /// [`Relation::prefetch_row`] of the row a peek found, if any.
    #[inline(always)]
    fn prefetch_row_of(&self, found: Option<u32>) {
        if let Some(r) = found
            && r >= self.base_len
        {
            let b = (r - self.base_len) as usize * self.stride;
            prefetch(&self.data[b]);
            prefetch(&self.data[b + self.stride - 1]);
        }
    }

    /// Start loading an own row's record (with the end of its cells) and derivation
    /// word, for a read or an update soon.
    #[inline]
    pub fn prefetch_record(&self, row: u32) {
        if row >= self.base_len {
            let r = (row - self.base_len) as usize;
            if let Some(x) = self.data.get(r * self.stride + self.arity) {
                prefetch(x);
            }
            if let Some(r) = r.checked_sub(self.deriv_lead as usize) {
                self.deriv.prefetch(r);
            }
        }
    }

    /// The index on exactly these columns (in this order), building it if missing. A
    /// layer whose base has no such index builds one over the base's rows too (so a
    /// shared base should have every index its layers' plans probe: see
    /// [`crate::eval::FactBase`]'s preparation for overlays).
    pub fn ensure_index(&mut self, cols: &[usize]) -> usize {
        if let Some(i) = self.indexes.iter().position(|ix| ix.cols == cols) {
            return i;
        }
        let mut index = Index::new(cols, None);
        let rows = self.rows();
        index.presize(rows, self.len);
        for row in 0..self.len {
            index_add(&mut index, rows, row);
        }
        self.indexes.push(index);
        self.indexes.len() - 1
    }

    /// The rows whose key columns of index `index` equal `key`: two ascending lists,
    /// every row of the first below every row of the second (a layer's base rows,
    /// then its own; a plain relation's second list is empty).
    #[inline(always)]
    pub fn lookup(&self, index: usize, key: &[u64]) -> (&[u32], &[u32]) {
        // (A dense index covers every row: a layer's own indexes are hashed.)
        if let Keys::Dense { slots, .. } = &self.indexes[index].keys
            && let [k] = *key
        {
            return (dense_rows(slots, k), &[]);
        }
        self.lookup_hashed(index, key)
    }

    /// The row lists of index `index` by key, when it is an index by small keys
    /// ([`dense_rows`] then finds a key's rows as [`Relation::lookup`] would): for a
    /// loop of look-ups, found once.
    #[inline]
    pub(crate) fn dense_slots(&self, index: usize) -> Option<&[RowList]> {
        match &self.indexes[index].keys {
            Keys::Dense { slots, .. } => Some(slots),
            Keys::Hashed(_) => None,
        }
    }

    /// [`Relation::lookup`] in a hashed index, or a layer's.
    #[inline(never)]
    fn lookup_hashed(&self, index: usize, key: &[u64]) -> (&[u32], &[u32]) {
        let ix = &self.indexes[index];
        let own = bucket(ix, key, self);
        match (ix.base, &self.base) {
            (Some(bi), Some(b)) => (b.get().lookup(bi, key).0, own),
            _ => (own, &[]),
        }
    }
}

/// The rows of one index key.
#[inline]
fn bucket<'a>(ix: &'a Index, key: &[u64], rel: &Relation) -> &'a [u32] {
    let table = match (&ix.keys, key) {
        (Keys::Hashed(table), _) => table,
        (Keys::Dense { slots, .. }, [k]) => return dense_rows(slots, *k),
        (Keys::Dense { .. }, _) => return &[],
    };
    // (Keys of one or two cells, nearly all of them, without the iterators.)
    let (h, prefix) = match *key {
        [a] => (hash_cells([a].into_iter()), [a, 0]),
        [a, b] => (hash_cells([a, b].into_iter()), [a, b]),
        _ => (
            hash_cells(key.iter().copied()),
            key_prefix(key.iter().copied()),
        ),
    };
    let long = key.len() > INLINE_KEY;
    match table.find(h, |b| {
        b.hash == h
            && b.key == prefix
            && (!long || {
                let r = rel.row(b.rows[0]);
                ix.cols.iter().zip(key).all(|(&c, &k)| r.get(c) == k)
            })
    }) {
        Some(b) => &b.rows,
        None => &[],
    }
}

/// Append the rows of `prem` to a premise arena; their start.
pub(crate) fn arena_push(arena: &mut Vec<u32>, prem: &[FactId]) -> Result<u32> {
    let start = arena.len();
    if start + prem.len() > u32::MAX as usize {
        return Err(arena_full());
    }
    // (`extend` of a short slice writes in place; `extend_from_slice` calls memcpy.)
    arena.extend(prem.iter().map(|p| p.row));
    Ok(start as u32)
}

#[cold]
fn arena_full() -> crate::diag::Error {
    Diagnostic::new(
        ErrorCode::BudgetExceeded,
        "the derivation record outgrew its arena",
    )
    .with_help("raise the evaluation budget or narrow the program's inputs")
    .into()
}

fn index_add(index: &mut Index, rows: Rows<'_>, row: u32) {
    let cells = rows.row(row);
    if matches!(index.keys, Keys::Dense { .. }) {
        if dense_add(index, cells.get(index.cols[0]), row) {
            return;
        }
        index.make_hashed();
    }
    let Keys::Hashed(table) = &mut index.keys else {
        return;
    };
    let cols = &index.cols;
    let h = hash_cells(cols.iter().map(|&c| cells.get(c)));
    let prefix = key_prefix(cols.iter().map(|&c| cells.get(c)));
    let long = cols.len() > INLINE_KEY;
    let same_key = |b: &Bucket| {
        b.hash == h
            && b.key == prefix
            && (!long || {
                let r = rows.row(b.rows[0]);
                cols.iter().all(|&c| r.get(c) == cells.get(c))
            })
    };
    if let Some(b) = table.find_mut(h, same_key) {
        let before = heap_bytes(&b.rows);
        b.rows.push(row);
        index.row_bytes += heap_bytes(&b.rows) - before;
    } else {
        let bucket = Bucket {
            hash: h,
            key: prefix,
            rows: smallvec::smallvec![row],
        };
        table.insert_unique(h, bucket, |b| b.hash);
    }
}

/// Add `row`, whose key is `key`, to dense index `index`; `false` (and nothing
/// added) when the key is past the index's limit, or the index is hashed.
#[inline]
fn dense_add(index: &mut Index, key: u64, row: u32) -> bool {
    let Keys::Dense { slots, keys } = &mut index.keys else {
        return false;
    };
    let k = usize::try_from(key).unwrap_or(usize::MAX);
    if k >= slots.len() {
        let limit = dense_limit(*keys + 1);
        if k >= limit {
            return false;
        }
        if k >= slots.capacity() {
            // Doubling, up to the limit.
            let cap = (slots.capacity() * 2).clamp(k + 1, limit);
            slots.reserve_exact(cap - slots.len());
        }
        slots.resize_with(k + 1, RowList::new);
    }
    let list = &mut slots[k];
    if list.is_empty() {
        *keys += 1;
    }
    // Bytes change only when the list moves to (or within) the heap.
    let cap = list.capacity();
    let before = heap_bytes(list);
    list.push(row);
    if list.capacity() != cap {
        index.row_bytes += heap_bytes(list) - before;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows from the first that are all of height at most `h`, in `heights`.
    fn prefix_at_most(heights: &[u32], h: u32) -> u32 {
        heights.iter().take_while(|&&x| x <= h).count() as u32
    }

    proptest::proptest! {
        /// Marks never claim more rows than lie below a height (rows added in
        /// batches, each marked with its highest height, and rows whose height is
        /// replaced), their table agrees with their pairs, and rows marked by
        /// batches alone are claimed as far as the batches allow.
        #[test]
        fn marks_bound_the_heights_of_the_rows_below_them(
            ops in proptest::collection::vec(
                (proptest::bool::weighted(0.7), proptest::collection::vec(0u32..12, 0..6), 0usize..64, 0u32..16),
                0..40,
            ),
        ) {
            let mut marks = Marks::default();
            let mut heights: Vec<u32> = Vec::new();
            let mut raised = false;
            for (add, batch, at, h) in ops {
                if add || heights.is_empty() {
                    heights.extend(&batch);
                    let top = batch.iter().copied().max().unwrap_or(0);
                    marks.extend(heights.len() as u32, top);
                } else {
                    let row = at % heights.len();
                    heights[row] = h;
                    marks.raise(row as u32, h);
                    raised = true;
                }
                for h in 0..18 {
                    let below = marks.below(h);
                    proptest::prop_assert!(below <= prefix_at_most(&heights, h), "h {} below {} heights {:?}", h, below, heights);
                    // The table is a cache of the pairs.
                    let pairs = match marks.pairs.partition_point(|&(_, max)| max <= h) {
                        0 => 0,
                        i => marks.pairs[i - 1].0,
                    };
                    proptest::prop_assert_eq!(below, pairs);
                }
                if !raised && let Some(&top) = heights.iter().max() {
                    // Every row lies below the highest height of them all.
                    proptest::prop_assert_eq!(marks.below(top), heights.len() as u32);
                }
            }
        }
    }

    #[test]
    fn marks_keep_a_table_as_large_as_their_rows_allow() {
        // One row at the end of a long chain: a few entries, not one a height.
        let mut marks = Marks::default();
        marks.extend(1, 60_000);
        assert!(marks.table.len() <= MARKS_TABLE_MIN);
        assert!(marks.bytes() < 64);
        assert_eq!(
            (marks.below(0), marks.below(59_999), marks.below(60_000)),
            (0, 0, 1)
        );
        // As rows come, the table reaches further, entries filled from the marks.
        marks.extend(20_000, 60_000);
        assert_eq!(marks.table.len(), 40_000);
        marks.extend(40_000, 60_001);
        assert_eq!(marks.table.len(), 60_002);
        assert_eq!(
            (
                marks.below(39_999),
                marks.below(60_000),
                marks.below(60_001)
            ),
            (0, 20_000, 40_000)
        );
        assert_eq!((marks.table[39_999], marks.table[60_000]), (0, 20_000));
        // A raise rebuilds it within the same bound.
        marks.raise(0, 70_000);
        assert_eq!((marks.below(60_001), marks.below(70_000)), (0, 40_000));
        assert!(marks.table.len() <= table_cap(40_000));
    }

    #[test]
    fn a_replaced_record_higher_than_its_marks_raises_them() {
        let mut r = Relation::new(2);
        // Four batches, each marked as it is added: heights 0; 1, 1; 2; 3.
        let mut k = 0;
        for batch in [&[0u32][..], &[1, 1], &[2], &[3]] {
            for &height in batch {
                r.insert(
                    &[k, 0],
                    Meta {
                        conf: 1.0,
                        height,
                        rule: 0,
                    },
                );
                k += 1;
            }
            r.mark();
        }
        assert_eq!(
            (r.below(0), r.below(1), r.below(2), r.below(9)),
            (1, 3, 4, 5)
        );
        // Row 1 goes up to height 4: no row from it on is bounded below that.
        r.set_meta(
            1,
            Meta {
                conf: 1.0,
                height: 4,
                rule: 0,
            },
        );
        assert_eq!((r.below(0), r.below(3), r.below(4)), (1, 1, 5));
        // A lower record changes no bound.
        r.set_meta(
            4,
            Meta {
                conf: 1.0,
                height: 0,
                rule: 0,
            },
        );
        assert_eq!((r.below(3), r.below(4)), (1, 5));
        // Rows added later are marked with their own highest height.
        r.insert(
            &[9, 9],
            Meta {
                conf: 1.0,
                height: 7,
                rule: 0,
            },
        );
        r.mark_merged(5, 7);
        assert_eq!((r.below(6), r.below(7)), (5, 6));
        // Rows of their own confidences are not marked.
        r.set_meta(
            0,
            Meta {
                conf: 0.5,
                height: 0,
                rule: 0,
            },
        );
        r.set_meta(
            2,
            Meta {
                conf: 0.5,
                height: 0,
                rule: 0,
            },
        );
        assert_eq!(r.below(u32::MAX - 1), 0);
        assert!(!r.markable());
    }

    #[test]
    fn a_mid_sized_vector_about_to_grow_goes_past_the_heap_at_once() {
        use crate::eval::fixpoint::grow_bytes;
        // 16 KiB of u32, full: it goes to past 128 KiB, not to 32 KiB.
        let mut v: Vec<u32> = Vec::with_capacity(4096);
        v.resize(4096, 7);
        let bound = grow_bytes(v.len(), v.capacity(), 1, 4);
        reserve_past_heap(&mut v, 1);
        assert!(v.capacity() * 4 > 128 << 10, "{}", v.capacity());
        assert!(
            bound >= v.capacity() * 4,
            "the memory check's bound covers it"
        );
        assert!(v.iter().all(|&x| x == 7) && v.len() == 4096);
        // With room left, or small, or already past the heap: left to double.
        let mut roomy: Vec<u32> = Vec::with_capacity(8192);
        roomy.resize(4096, 0);
        reserve_past_heap(&mut roomy, 10);
        assert_eq!(roomy.capacity(), 8192);
        let mut small: Vec<u64> = vec![1; 100];
        let cap = small.capacity();
        reserve_past_heap(&mut small, 1);
        assert_eq!(small.capacity(), cap);
        assert_eq!(past_heap(1 << 20, 1), 0);
        assert_eq!(past_heap(usize::MAX, 8), 0);
        // A need past the jump is met whole.
        let mut big: Vec<u8> = vec![0; 20 << 10];
        reserve_past_heap(&mut big, 1 << 20);
        assert!(big.capacity() >= (20 << 10) + (1 << 20));
    }

    proptest::proptest! {
        /// Input record numbers and derivation words of leading input rows are kept
        /// as counts; every row still reads back what it was given, through new
        /// rows, changed records and layers.
        #[test]
        fn leading_input_records_read_back_as_given(
            ops in proptest::collection::vec((0..6u8, 0..4u32, 0..5usize), 0..80),
            layer_at in 0..80usize,
        ) {
            let lists: [Vec<FactId>; 4] = [
                vec![],
                vec![f(0, 1)],
                vec![f(0, 2), f(1, 3)],
                vec![f(2, 1), f(0, 0), f(1, 9)],
            ];
            let mut r = Relation::new(1);
            // Per row: its input record and premises (`None`: not yet recorded).
            let mut oracle: Vec<(u32, Option<Vec<FactId>>)> = Vec::new();
            let mut next = 0u32;
            for (step, &(op, x, p)) in ops.iter().enumerate() {
                if step == layer_at && !oracle.is_empty() {
                    let shared = Arc::new(vec![r]);
                    r = Relation::over(&shared, 0);
                }
                let n = oracle.len() as u32;
                match op {
                    // A new input row: its record the next one, or another.
                    0..=2 => {
                        let k = if op == 2 { x * 7 } else { next };
                        next = k + 1;
                        proptest::prop_assert!(r.insert(&[n as u64], Meta::input(1.0)).1);
                        let prem = if op == 1 { &lists[p % 4] } else { &lists[0] };
                        r.push_records(k, Some(prem)).unwrap();
                        oracle.push((k, Some(prem.clone())));
                    }
                    // A derived row, recorded or not.
                    3 => {
                        proptest::prop_assert!(r.insert(&[n as u64], Meta::input(1.0)).1);
                        if x % 2 == 0 {
                            r.push_unrecorded();
                            oracle.push((NO_EVIDENCE, None));
                        } else {
                            r.push_records(NO_EVIDENCE, Some(&lists[p % 4])).unwrap();
                            oracle.push((NO_EVIDENCE, Some(lists[p % 4].clone())));
                        }
                    }
                    // A row's record or premises changed.
                    4 if n > 0 => {
                        let row = x % n;
                        let k = if p == 0 { oracle[row as usize].0 } else { p as u32 * 100 };
                        r.set_evidence(row, k);
                        oracle[row as usize].0 = k;
                    }
                    _ if n > 0 => {
                        let row = x % n;
                        r.set_premises(row, &lists[p % 4]).unwrap();
                        oracle[row as usize].1 = Some(lists[p % 4].clone());
                    }
                    _ => {}
                }
                for (row, (k, prem)) in oracle.iter().enumerate() {
                    proptest::prop_assert_eq!(r.evidence_of(row as u32), *k);
                    let got = r.premises_of(row as u32).map(|p| p.to_vec());
                    proptest::prop_assert_eq!(&got, prem);
                }
            }
        }
    }

    #[test]
    fn a_load_of_input_rows_keeps_no_record_number_or_derivation_word_a_row() {
        let mut r = Relation::new(2);
        r.reserve_inputs(1000, true);
        for i in 0..1000u32 {
            assert!(r.insert(&[i as u64, 7], Meta::input(1.0)).1);
            r.push_records(5 + i, Some(&[])).unwrap();
        }
        assert_eq!((r.evidence.len(), r.deriv.len()), (0, 0));
        assert_eq!((r.evidence_lead, r.deriv_lead), (1000, 1000));
        assert_eq!(r.evidence_of(999), 1004);
        assert_eq!(r.premises_of(999).unwrap().to_vec(), vec![]);
        assert_eq!(r.evidence_of(1000), NO_EVIDENCE);
    }

    #[test]
    fn rows_share_one_confidence_until_two_differ() {
        let meta = |conf: f64, height: u32, rule: u32| Meta { conf, height, rule };
        let mut r = Relation::new(2);
        let ix = r.ensure_index(&[0]);
        for i in 0..50 {
            r.insert(&[i, i + 1], meta(0.5, i as u32, 7));
        }
        assert!(!r.layout.conf_col);
        assert_eq!(r.data.len(), 50 * 3, "two cells and a record word a row");
        let growth_same = r.growth_bound(
            10,
            0,
            &[],
            7,
            [1; 10].iter().copied(),
            [0.5; 10].iter().copied(),
        );
        let growth_new = r.growth_bound(
            10,
            0,
            &[],
            7,
            [1; 2].iter().copied(),
            [0.5, 0.25].iter().copied(),
        );
        assert!(
            growth_new >= 60 * 5 * 4 && growth_new > growth_same,
            "{growth_new} {growth_same}"
        );
        // A different confidence on an existing row widens every row, keeping all.
        r.set_conf(20, 0.75);
        assert!(r.layout.conf_col);
        assert_eq!(r.data.len(), 50 * 5);
        for i in 0..50u32 {
            let conf = if i == 20 { 0.75 } else { 0.5 };
            assert_eq!(r.meta(i), meta(conf, i, 7));
            assert_eq!(r.row(i).to_vec(), [i as u64, i as u64 + 1]);
        }
        assert_eq!(r.find(&[20, 21]), Some(20));
        assert_eq!(r.lookup(ix, &[33]).0, &[33]);
        // A new row with another confidence widens too; set_meta on a uniform row.
        let mut q = Relation::new(1);
        q.insert(&[1], meta(1.0, 0, u32::MAX));
        q.set_meta(0, meta(1.0, 3, 2));
        assert!(!q.layout.conf_col);
        assert_eq!(q.meta(0), meta(1.0, 3, 2));
        q.insert(&[2], meta(0.9, 1, 1));
        assert!(q.layout.conf_col);
        assert_eq!((q.meta(0), q.meta(1)), (meta(1.0, 3, 2), meta(0.9, 1, 1)));
        // A layer's own rows start sharing again, whatever its base does.
        let rels = Arc::new(vec![q]);
        let mut layer = Relation::over(&rels, 0);
        layer.insert(&[3], meta(0.9, 2, 1));
        assert!(!layer.layout.conf_col);
        assert_eq!(layer.meta(2), meta(0.9, 2, 1));
        assert_eq!(layer.meta(0), meta(1.0, 3, 2));
        layer.set_conf(2, 0.95);
        assert_eq!(layer.meta(2).conf, 0.95);
    }

    #[test]
    fn cells_take_one_word_until_one_does_not_fit() {
        let meta = |conf: f64, height: u32, rule: u32| Meta { conf, height, rule };
        let mut r = Relation::new(2);
        let ix = r.ensure_index(&[1]);
        for i in 0..20u64 {
            r.insert(&[i, u32::MAX as u64 - i], meta(0.5, i as u32, 3));
        }
        assert_eq!((r.layout.cell_words, r.data.len()), (1, 20 * 3));
        // Growing to a cell past 32 bits counts the copy of every row.
        let big = [1u64 << 40, 7];
        assert!(
            r.growth_bound(1, 0, &big, 3, [1].iter().copied(), [0.5].iter().copied()) >= 21 * 5 * 4
        );
        assert!(
            r.growth_bound(1, 0, &[5, 7], 3, [1].iter().copied(), [0.5].iter().copied())
                < 21 * 5 * 4
        );
        // A negative number is a cell past 32 bits.
        let minus = (-3i64) as u64;
        assert_eq!(r.insert(&[minus, 7], meta(0.5, 1, 2)), (20, true));
        assert_eq!((r.layout.cell_words, r.data.len()), (2, 21 * 5));
        r.insert(&big, meta(0.25, 9, 4));
        assert!(r.layout.conf_col);
        assert_eq!(r.data.len(), 22 * 7);
        for i in 0..20u32 {
            assert_eq!(r.row(i).to_vec(), [i as u64, u32::MAX as u64 - i as u64]);
            assert_eq!(r.meta(i), meta(0.5, i, 3));
            assert_eq!(r.find(&r.row(i).to_vec()), Some(i));
        }
        assert_eq!(r.row(20).to_vec(), [minus, 7]);
        assert_eq!(r.meta(21), meta(0.25, 9, 4));
        assert_eq!(r.lookup(ix, &[7]).0, &[20, 21]);
        assert_eq!(r.find(&big), Some(21));
        assert_eq!(r.insert(&[minus, 7], Meta::input(1.0)), (20, false));
        // A layer over the wide relation starts narrow and reads the base as it is.
        let rels = Arc::new(vec![r]);
        let mut layer = Relation::over(&rels, 0);
        assert_eq!(layer.insert(&[1, 2], Meta::input(1.0)), (22, true));
        assert_eq!(layer.layout.cell_words, 1);
        assert_eq!(layer.row(20).to_vec(), [minus, 7]);
        assert_eq!(layer.row(22).to_vec(), [1, 2]);
        assert_eq!(layer.lookup(ix, &[7]).0, &[20, 21]);
    }

    #[test]
    fn records_take_one_word_until_one_does_not_pack() {
        let meta = |conf: f64, height: u32, rule: u32| Meta { conf, height, rule };
        let mut r = Relation::new(1);
        // The input rule and the least-height pass's "no height yet" pack.
        r.insert(&[0], Meta::input(1.0));
        r.insert(&[1], meta(1.0, u32::MAX, 4094));
        r.insert(&[2], meta(1.0, (1 << 20) - 2, 0));
        assert_eq!((r.layout.meta_words, r.data.len()), (1, 3 * 2));
        let wide = r.growth_bound(1, 0, &[3], 4095, [1].iter().copied(), [1.0].iter().copied());
        let packs = r.growth_bound(1, 0, &[3], 4094, [1].iter().copied(), [1.0].iter().copied());
        assert!(wide >= 4 * 3 * 4 && wide > packs);
        // So does a height past 2^20 - 2 (u32::MAX, "no height yet", packs).
        assert!(
            r.growth_bound(
                1,
                0,
                &[3],
                1,
                [5, 1 << 20].iter().copied(),
                [1.0; 2].iter().copied()
            ) > packs
        );
        assert_eq!(
            r.growth_bound(
                1,
                0,
                &[3],
                1,
                [5, u32::MAX].iter().copied(),
                [1.0; 2].iter().copied()
            ),
            packs
        );
        // A rule past 4094 widens every record; so would a height past 2^20 - 2.
        r.set_meta(2, meta(1.0, 1 << 20, 5000));
        assert_eq!((r.layout.meta_words, r.data.len()), (2, 3 * 3));
        r.insert(&[3], meta(1.0, 7, 1));
        let want = [
            Meta::input(1.0),
            meta(1.0, u32::MAX, 4094),
            meta(1.0, 1 << 20, 5000),
            meta(1.0, 7, 1),
        ];
        for (i, m) in want.iter().enumerate() {
            assert_eq!(r.meta(i as u32), *m);
            assert_eq!(r.row(i as u32).to_vec(), [i as u64]);
        }
        for m in [
            meta(1.0, (1 << 20) - 1, 0),
            meta(1.0, 0, 4095),
            meta(1.0, 0, 1 << 20),
        ] {
            assert_eq!(pack(m), None, "{m:?}");
        }
    }

    proptest::proptest! {
        /// The bound that reads no rows is never below the exact one, whatever
        /// the relation's layout, indexes and rows, and whatever the batch's
        /// cells, heights, rules and confidences.
        #[test]
        fn the_growth_ceiling_is_never_below_the_bound(
            arity in 1usize..4,
            stored in proptest::collection::vec(
                (proptest::collection::vec(0u64..3000, 3), 0u32..64, 0u32..8, 0usize..3),
                0..300,
            ),
            wide_cell in proptest::option::of(0usize..300),
            indexes in proptest::collection::vec(0usize..3, 0..3),
            batch in proptest::collection::vec(
                (proptest::collection::vec(0u64..5000, 3), 0u32..(1 << 21), 0usize..3),
                0..80,
            ),
            wide_batch in proptest::bool::weighted(0.2),
            rule in proptest::prop_oneof![0u32..8, proptest::strategy::Just(4095u32)],
            premises in 0usize..200,
        ) {
            let confs = [1.0, 0.5, 0.25];
            let mut r = Relation::new(arity);
            for &c in &indexes {
                r.ensure_index(&[c % arity]);
            }
            for (i, (cells, height, rule, conf)) in stored.iter().enumerate() {
                let mut cells = cells[..arity].to_vec();
                if wide_cell == Some(i) {
                    cells[0] = 1 << 40;
                }
                r.insert(&cells, Meta { conf: confs[*conf], height: *height, rule: *rule });
            }
            let mut cells: Vec<u64> =
                batch.iter().flat_map(|(c, _, _)| c[..arity].iter().copied()).collect();
            if wide_batch && !cells.is_empty() {
                cells[0] = u64::MAX;
            }
            let bound = r.growth_bound(
                batch.len(),
                premises,
                &cells,
                rule,
                batch.iter().map(|b| b.1),
                batch.iter().map(|b| confs[b.2]),
            );
            let ceiling = r.growth_ceiling(batch.len(), premises);
            proptest::prop_assert!(ceiling >= bound, "{ceiling} < {bound}");
        }
    }

    #[test]
    fn insert_dedups_and_indexes_grow() {
        let mut r = Relation::new(2);
        let ix = r.ensure_index(&[1]);
        assert_eq!(r.insert(&[1, 2], Meta::input(1.0)), (0, true));
        assert_eq!(r.insert(&[3, 2], Meta::input(1.0)), (1, true));
        assert_eq!(r.insert(&[1, 2], Meta::input(0.5)), (0, false));
        assert_eq!(r.lookup(ix, &[2]).0, &[0, 1]);
        assert!(r.lookup(ix, &[1]).0.is_empty());
        let ix0 = r.ensure_index(&[0]);
        assert_eq!(r.lookup(ix0, &[3]).0, &[1]);
        assert_eq!(r.find(&[3, 2]), Some(1));
        assert_eq!(r.find(&[2, 3]), None);
        assert_eq!(r.len(), 2);
    }

    proptest::proptest! {
        /// The dedup table agrees with a std map across growth, reserves and
        /// prefetches, for rows of every arity up to three, narrow and wide,
        /// inserted in general or (every other row, where they fit) narrow; and
        /// the records a narrow view's look-ups find are the rows' own, as records
        /// change, stop packing or get confidences of their own.
        #[test]
        fn dedup_matches_a_map(
            rows in proptest::collection::vec(
                ((0u64..40, 0u64..4, 0u64..3), (0u32..50, 0u32..6, 0usize..8)),
                0..600,
            ),
            arity in 0usize..4,
            big_from in proptest::option::of(0usize..600),
            odd_from in proptest::option::of(0usize..600),
            grid_from in proptest::option::of((0usize..600, proptest::bool::ANY)),
        ) {
            let mut r = Relation::new(arity);
            let mut map = std::collections::HashMap::new();
            for (k, &((a, b, c), (height, rule, change))) in rows.iter().enumerate() {
                // From row `grid_from` on, the relation keeps a grid where it
                // can (it then stands in for the dedup table), settled now and
                // then as merges settle it.
                if let Some((from, hot)) = grid_from
                    && k >= from
                {
                    r.keep_grid(hot || k > from + 100);
                }
                if k % 37 == 0 {
                    r.settle_grid();
                }
                // From row `big_from` on, some first cells need two words.
                let a = match big_from {
                    Some(from) if k >= from && a % 3 == 0 => a | 1 << 33,
                    _ => a,
                };
                // From row `odd_from` on, a record may not pack, or its confidence
                // differ from the others'.
                let odd = odd_from.is_some_and(|from| k >= from);
                let meta = Meta {
                    conf: if odd && change == 7 { 0.5 } else { 1.0 },
                    height: if odd && change == 6 { 1 << 21 } else { height },
                    rule,
                };
                let cells = [a, b, c];
                let cells = &cells[..arity];
                if k % 97 == 0 {
                    r.reserve(50);
                }
                let tag = tag_of(hash_cells(cells.iter().copied()));
                r.prefetch_slot(tag);
                r.prefetch_row(tag);
                let want = map.get(cells).copied();
                let before = want.map(|w| r.meta(w));
                // Every other row through the narrow insert where the relation
                // takes it (`None`: the row does not fit, the general one takes it).
                let len = r.len();
                let narrow = match (k % 2 == 1).then(|| r.narrow_layout()).flatten() {
                    Some(own) => match (own, cells) {
                        (true, &[]) => r.insert_narrow::<0, true>(&[], tag, meta),
                        (false, &[]) => r.insert_narrow::<0, false>(&[], tag, meta),
                        (true, &[x]) => r.insert_narrow::<1, true>(&[x], tag, meta),
                        (false, &[x]) => r.insert_narrow::<1, false>(&[x], tag, meta),
                        (true, &[x, y]) => r.insert_narrow::<2, true>(&[x, y], tag, meta),
                        (false, &[x, y]) => r.insert_narrow::<2, false>(&[x, y], tag, meta),
                        (true, &[x, y, z]) => r.insert_narrow::<3, true>(&[x, y, z], tag, meta),
                        (false, &[x, y, z]) => r.insert_narrow::<3, false>(&[x, y, z], tag, meta),
                        _ => None,
                    },
                    None => None,
                };
                let (row, new) = match narrow {
                    Some(inserted) => inserted,
                    None => {
                        proptest::prop_assert_eq!(r.len(), len);
                        r.insert_tagged(cells, tag, meta)
                    }
                };
                proptest::prop_assert_eq!(new, want.is_none());
                if let Some(w) = want {
                    proptest::prop_assert_eq!(row, w);
                    if change < 3 {
                        r.set_meta(row, meta);
                    }
                } else {
                    map.insert(cells.to_vec(), row);
                }
                proptest::prop_assert_eq!(r.row(row).to_vec(), cells);
                let kept = match before {
                    Some(old) if change >= 3 => old,
                    _ => meta,
                };
                proptest::prop_assert_eq!(r.meta(row), kept);
            }
            proptest::prop_assert_eq!(r.len() as usize, map.len());
            for (cells, &row) in &map {
                proptest::prop_assert_eq!(r.find(cells), Some(row));
                let Some(view) = r.narrow() else { continue };
                let tag = tag_of(hash_cells(cells.iter().copied()));
                let m = r.meta(row);
                let found = match *cells.as_slice() {
                    [] => view.find_meta::<0>(&[], tag),
                    [x] => view.find_meta::<1>(&[x], tag),
                    [x, y] => view.find_meta::<2>(&[x, y], tag),
                    [x, y, z, ..] => view.find_meta::<3>(&[x, y, z], tag),
                };
                proptest::prop_assert_eq!(found, Some(m));
                if !view.conf_col {
                    let found = match *cells.as_slice() {
                        [] => view.find_record::<0>(&[], tag),
                        [x] => view.find_record::<1>(&[x], tag),
                        [x, y] => view.find_record::<2>(&[x, y], tag),
                        [x, y, z, ..] => view.find_record::<3>(&[x, y, z], tag),
                    };
                    proptest::prop_assert_eq!(found, Some((m.height, m.rule)));
                }
            }
            let absent = [99, 99, 99];
            let nullary = arity == 0 && !map.is_empty();
            proptest::prop_assert_eq!(r.find(&absent[..arity]), nullary.then_some(0));
            // Cells no row has, among those rows have (inside a grid's range).
            for cells in (0..48u64).flat_map(|a| (0..5).map(move |b| [a, b, b % 3])) {
                let cells = &cells[..arity];
                if map.contains_key(cells) {
                    continue;
                }
                proptest::prop_assert_eq!(r.find(cells), None);
                let view = r.narrow();
                if let (Some(view), &[x, y]) = (view, cells) {
                    let tag = tag_of(hash_cells(cells.iter().copied()));
                    proptest::prop_assert_eq!(view.find_meta::<2>(&[x, y], tag), None);
                    proptest::prop_assert_eq!(view.find_record::<2>(&[x, y], tag), None);
                }
            }
        }
    }

    #[test]
    fn a_growing_table_gives_back_only_what_it_has_read() {
        // Large enough that growths give pages of the old table back as they read
        // it, the last one in several chunks: every row must still be found.
        const KEYS: u32 = 1_000_000;
        let mut d = Dedup::default();
        let digest = |key: u32| tag_of(hash_cells([u64::from(key)].into_iter()));
        for key in 0..KEYS {
            assert_eq!(d.find_or_insert(digest(key), key, |r| r == key), None);
        }
        // Eight bytes a slot: the last growth read an old table of 4 MiB.
        assert!(d.slots() * 8 >= 8 << 20, "{} slots", d.slots());
        for key in 0..KEYS {
            assert_eq!(d.find(digest(key), |r| r == key), Some(key));
        }
        assert_eq!(d.find(digest(KEYS), |r| r == KEYS), None);
    }

    proptest::proptest! {
        /// The dedup table itself against a map, with digests drawn from a handful:
        /// groups fill, probes run on into the next groups and round the table's
        /// end, and rows with one digest (0 and 1 are stored alike) are told apart
        /// by their cells.
        #[test]
        fn dedup_groups_overflow_in_order(
            keys in proptest::collection::vec(0u32..300, 0..500),
            digests in 1u32..6,
        ) {
            let mut d = Dedup::default();
            let (mut key_of, mut row_of) = (Vec::new(), std::collections::HashMap::new());
            for &key in &keys {
                let row = key_of.len() as u32;
                let found = d.find_or_insert(key % digests, row, |r| key_of[r as usize] == key);
                proptest::prop_assert_eq!(found, row_of.get(&key).copied());
                if found.is_none() {
                    key_of.push(key);
                    row_of.insert(key, row);
                }
                proptest::prop_assert!(d.len <= Dedup::limit(d.slots()));
            }
            proptest::prop_assert_eq!(d.len, row_of.len());
            for (&key, &row) in &row_of {
                proptest::prop_assert_eq!(d.find(key % digests, |r| key_of[r as usize] == key), Some(row));
                if let Some(r) = d.peek(key % digests) {
                    proptest::prop_assert_eq!(stored(key_of[r as usize] % digests), stored(key % digests));
                }
            }
            proptest::prop_assert_eq!(d.find(300 % digests, |r| key_of[r as usize] == 300), None);
        }
    }

    /// Every key of index `ix` of `r` (and some keys no row has) gives the rows
    /// `model` lists for it, ascending: the base's first, then the layer's own.
    fn lookups_match(
        r: &Relation,
        ix: usize,
        model: &std::collections::BTreeMap<Vec<u64>, Vec<u32>>,
        width: usize,
    ) -> std::result::Result<(), proptest::test_runner::TestCaseError> {
        // Dense slots stay within their limit, and within twice the keys' span.
        if let Keys::Dense { slots, keys } = &r.indexes[ix].keys {
            proptest::prop_assert!(slots.capacity() <= dense_limit(*keys).min(2 * slots.len()));
            proptest::prop_assert_eq!(*keys, slots.iter().filter(|s| !s.is_empty()).count());
        }
        let absent = [5, 2999, 1 << 40, u64::MAX].map(|k| vec![k; width]);
        for key in model.keys().chain(&absent) {
            let (a, b) = r.lookup(ix, key);
            let want = model.get(key).map_or(&[][..], Vec::as_slice);
            let split = want.partition_point(|&row| row < r.base_len);
            if r.indexes[ix].base.is_some() {
                proptest::prop_assert_eq!((a, b), want.split_at(split), "{:?}", key);
            } else {
                proptest::prop_assert_eq!((a, b), (want, &[][..]), "{:?}", key);
            }
        }
        Ok(())
    }

    proptest::proptest! {
        /// Index look-ups agree with a map, for indexes dense, hashed, or made hashed
        /// midway by a large key, built before the rows or over them, in a plain
        /// relation and in a layer over it.
        #[test]
        fn index_lookups_match_a_map(
            rows in proptest::collection::vec((0u64..3000, 0u64..3000, 0u64..300), 0..300),
            layer_rows in proptest::collection::vec((0u64..3000, 0u64..3000, 0u64..300), 0..60),
            big in proptest::option::of((0usize..300, 0usize..3)),
            built_after in 0usize..300,
        ) {
            type Model = std::collections::BTreeMap<Vec<u64>, Vec<u32>>;
            let cols: [&[usize]; 4] = [&[0], &[1], &[1, 0], &[2]];
            let mut models: Vec<Model> = vec![Model::new(); 4];
            let add = |models: &mut Vec<Model>, cells: &[u64], row: u32| {
                for (m, c) in models.iter_mut().zip(cols) {
                    let key = c.iter().map(|&c| cells[c]).collect();
                    m.entry(key).or_default().push(row);
                }
            };
            let mut r = Relation::new(3);
            let ix0 = r.ensure_index(cols[0]);
            let ix10 = r.ensure_index(cols[2]);
            // Small keys, or (built on the layer) an index the base lacks.
            let small_first = built_after % 2 == 0;
            if small_first {
                r.ensure_index(cols[3]);
            }
            let mut ix1 = None;
            for (k, &(a, b, c)) in rows.iter().enumerate() {
                if k == built_after {
                    ix1 = Some(r.ensure_index(cols[1]));
                }
                let mut cells = [a, b, c];
                // A key far past any dense limit, in one column.
                if let Some((at, col)) = big && at == k {
                    cells[col] |= 1 << 40;
                }
                let (row, new) = r.insert(&cells, Meta::input(1.0));
                if new {
                    add(&mut models, &cells, row);
                }
            }
            let ix1 = ix1.unwrap_or_else(|| r.ensure_index(cols[1]));
            lookups_match(&r, ix0, &models[0], 1)?;
            lookups_match(&r, ix1, &models[1], 1)?;
            lookups_match(&r, ix10, &models[2], 2)?;
            if small_first {
                let ix2 = r.ensure_index(cols[3]);
                lookups_match(&r, ix2, &models[3], 1)?;
            }
            let shared = Arc::new(vec![r]);
            let mut layer = Relation::over(&shared, 0);
            for &(a, b, c) in &layer_rows {
                let cells = [a, b, c];
                let (row, new) = layer.insert(&cells, Meta::input(1.0));
                if new {
                    add(&mut models, &cells, row);
                }
            }
            // An index the base lacks covers the base's rows too.
            let ix2 = layer.ensure_index(cols[3]);
            lookups_match(&layer, ix0, &models[0], 1)?;
            lookups_match(&layer, ix1, &models[1], 1)?;
            lookups_match(&layer, ix10, &models[2], 2)?;
            lookups_match(&layer, ix2, &models[3], 1)?;
        }
    }

    #[test]
    fn a_layer_reads_its_base_in_place_and_keeps_its_changes() {
        let mut base = Relation::new(2);
        let ix = base.ensure_index(&[1]);
        for (i, cells) in [[1, 2], [3, 2], [4, 5]].iter().enumerate() {
            let (row, new) = base.insert(cells, Meta::input(0.5));
            assert!(new);
            base.push_records(i as u32, Some(&[])).unwrap();
            assert_eq!(row, i as u32);
        }
        base.list_inputs();
        let shared = Arc::new(vec![base]);
        let mut layer = Relation::over(&shared, 0);
        assert!(layer.is_layer());
        assert_eq!(layer.len(), 3);
        // A known row is found in the base; a new one is appended after it.
        assert_eq!(layer.insert(&[3, 2], Meta::input(0.9)), (1, false));
        assert_eq!(layer.insert(&[6, 2], Meta::input(0.7)), (3, true));
        layer.push_records(3, Some(&[])).unwrap();
        assert_eq!(layer.lookup(ix, &[2]), (&[0, 1][..], &[3][..]));
        assert_eq!(layer.find(&[4, 5]), Some(2));
        assert_eq!(layer.row(3).to_vec(), [6, 2]);
        // A changed record of a base row is the layer's own.
        layer.set_meta(1, Meta::input(0.9));
        layer.set_evidence(1, 7);
        let prem = [FactId { rel: 0, row: 2 }];
        layer.set_premises(0, &prem).unwrap();
        assert_eq!(layer.meta(1).conf, 0.9);
        assert_eq!(layer.evidence_of(1), 7);
        assert_eq!(layer.premises_of(0).unwrap().to_vec(), prem);
        assert_eq!(layer.patched_rows(), 2);
        assert_eq!(layer.input_rows(), vec![0, 1, 2, 3]);
        let base = &shared[0];
        assert_eq!(base.meta(1).conf, 0.5);
        assert_eq!(base.evidence_of(1), 1);
        assert!(base.premises_of(0).unwrap().to_vec().is_empty());
        assert_eq!(base.len(), 3);
        assert_eq!(base.find(&[6, 2]), None);
        // A layer over a layer shares the same base and copies only the layer.
        let again = Arc::new(vec![layer]);
        let deeper = Relation::over(&again, 0);
        assert_eq!(deeper.own_rows(), 1);
        assert_eq!(deeper.meta(1).conf, 0.9);
    }

    fn f(rel: u32, row: u32) -> FactId {
        FactId { rel, row }
    }

    /// Derivations of three premises whose rows are below 2^20 are kept in their
    /// word, not in the arena; a larger row sends the next one to the arena.
    #[test]
    fn three_premises_fit_a_word_while_their_rows_are_small() {
        let mut r = Relation::new(1);
        let small = |k: u32| vec![f(1, k), f(2, (1 << 20) - 1 - k), f(1, k * 3)];
        for k in 0..100u32 {
            assert!(r.insert(&[k as u64], Meta::input(1.0)).1);
            r.push_derived(&small(k)).unwrap();
        }
        assert!(r.premises.is_empty());
        for k in 0..100u32 {
            assert_eq!(r.premises_of(k).unwrap().to_vec(), small(k));
        }
        let large = vec![f(1, 1 << 20), f(2, 0), f(1, 0)];
        assert!(r.insert(&[100], Meta::input(1.0)).1);
        r.push_derived(&large).unwrap();
        assert_eq!(r.premises.len(), 3);
        assert_eq!(r.premises_of(100).unwrap().to_vec(), large);
        assert_eq!(r.premises_of(7).unwrap().to_vec(), small(7));
    }

    /// Derivation words of one premise (or none) of the first inline shapes take
    /// four bytes; the first that does not fit (a row past 2^30, two premises) widens
    /// every word, and each reads back as written, before and after, through
    /// replacements, placeholders and leading input rows spelled out.
    #[test]
    fn narrow_derivation_words_widen_once() {
        let mut r = Relation::new(1);
        let one = |k: u32| vec![f(1, k * 7)];
        // Leading input rows, then one-premise derivations and placeholders.
        for k in 0..3u32 {
            assert!(r.insert(&[u64::from(k)], Meta::input(1.0)).1);
            r.push_records(k, Some(&[])).unwrap();
        }
        for k in 3..200u32 {
            assert!(r.insert(&[u64::from(k)], Meta::input(1.0)).1);
            if k % 10 == 0 {
                r.push_unrecorded();
            } else {
                r.push_derived(&one(k)).unwrap();
            }
        }
        assert!(matches!(r.deriv, Derivs::Narrow(_)));
        let expect = |k: u32| match k {
            0..3 => Some(vec![]),
            k if k % 10 == 0 => None,
            k => Some(one(k)),
        };
        for k in 0..200 {
            assert_eq!(r.premises_of(k).map(|p| p.to_vec()), expect(k));
        }
        // The largest row that fits, then replacements that fit.
        r.set_premises(5, &[f(1, (1 << 30) - 1)]).unwrap();
        r.set_premises(10, &one(10)).unwrap();
        assert!(matches!(r.deriv, Derivs::Narrow(_)));
        r.set_premises(0, &one(0)).unwrap();
        assert!(matches!(r.deriv, Derivs::Narrow(_)));
        assert_eq!(
            r.premises_of(5).unwrap().to_vec(),
            vec![f(1, (1 << 30) - 1)]
        );
        // Two premises: every word widens.
        let two = vec![f(1, 3), f(2, 4)];
        r.set_premises(20, &two).unwrap();
        assert!(matches!(r.deriv, Derivs::Wide(_)));
        for k in 0..200 {
            let want = match k {
                0 => Some(one(0)),
                5 => Some(vec![f(1, (1 << 30) - 1)]),
                10 => Some(one(10)),
                20 => Some(two.clone()),
                k => expect(k),
            };
            assert_eq!(r.premises_of(k).map(|p| p.to_vec()), want, "row {k}");
        }
        // A row past 2^30 widens a list that a push would have kept narrow.
        let mut q = Relation::new(1);
        assert!(q.insert(&[0], Meta::input(1.0)).1);
        q.push_derived(&[f(1, 1)]).unwrap();
        assert!(q.insert(&[1], Meta::input(1.0)).1);
        q.push_derived(&[f(1, 1 << 30)]).unwrap();
        assert!(matches!(q.deriv, Derivs::Wide(_)));
        assert_eq!(q.premises_of(0).unwrap().to_vec(), vec![f(1, 1)]);
        assert_eq!(q.premises_of(1).unwrap().to_vec(), vec![f(1, 1 << 30)]);
    }

    proptest::proptest! {
        /// A narrow word stands for exactly the word it was made from, and a word
        /// is narrow where its tag is below 4 and its bits past the first 30 rows'
        /// are clear.
        #[test]
        fn narrow_words_are_exact(tag in 0u64..16, a in 0u64..(1 << 30), b in 0u64..(1 << 30), wide in proptest::bool::ANY) {
            let w = DerivRec(tag << TAG_SHIFT | if wide { b << 30 } else { 0 } | a);
            let fits = tag < 4 && (!wide || b == 0) && !(tag == 3 && a == NARROW_ROWS);
            proptest::prop_assert_eq!(w.narrow().is_some(), fits);
            if let Some(n) = w.narrow() {
                proptest::prop_assert_eq!(DerivRec::widen(n).0, w.0);
            }
            proptest::prop_assert_eq!(DerivRec(UNRECORDED).narrow(), Some(u32::MAX));
            proptest::prop_assert_eq!(DerivRec::widen(u32::MAX).0, UNRECORDED);
        }
    }

    /// Inline and arena derivation records, aggregate markers, more shapes than
    /// inline tags, rows too large to inline, and replacements longer and shorter
    /// than the record they replace, in a plain relation and in a layer's patches.
    #[test]
    fn compact_premises_round_trip() {
        let agg = |n: u32| FactId {
            rel: AGG_MARK,
            row: n,
        };
        let mut lists: Vec<Vec<FactId>> = vec![
            vec![],
            vec![f(0, 1), f(1, 2)],
            vec![f(1, 7)],
            vec![f(0, 3), f(1, 4), f(2, 5)],
            vec![agg(2), f(3, 1), f(3, 9)],
            vec![agg(0)],
            vec![f(0, 1 << 30), f(1, u32::MAX - 1)],
            vec![f(2, 3), agg(1), f(4, 4), f(0, 0)],
            // Three premises: inline while every row is below 2^20.
            vec![f(5, (1 << 20) - 1), f(6, 0), f(7, 12_345)],
            vec![f(5, 1 << 20), f(6, 1), f(7, 2)],
            vec![f(5, 3), f(6, (1 << 20) - 1), f(7, (1 << 20) - 1)],
        ];
        // More distinct short shapes than there are inline tags.
        for k in 0..20 {
            lists.push(vec![f(10 + k, k), f(0, k)]);
        }
        let mut r = Relation::new(1);
        for (i, prem) in lists.iter().enumerate() {
            assert!(r.insert(&[i as u64], Meta::input(1.0)).1);
            r.push_records(NO_EVIDENCE, Some(prem)).unwrap();
        }
        for (i, prem) in lists.iter().enumerate() {
            assert_eq!(&r.premises_of(i as u32).unwrap().to_vec(), prem);
        }
        // Replace each row's premises by every other list, in turn.
        let n = lists.len();
        for step in 1..n {
            for i in 0..n {
                let new = &lists[(i + step) % n];
                r.set_premises(i as u32, new).unwrap();
                assert_eq!(&r.premises_of(i as u32).unwrap().to_vec(), new);
            }
            for i in 0..n {
                let want = &lists[(i + step) % n];
                assert_eq!(&r.premises_of(i as u32).unwrap().to_vec(), want);
            }
        }
        let grown = r.heap_bytes();
        assert!(grown > 0 && r.own_bytes() > 0);
        // A layer patches base rows in its own arena and leaves the base as it was.
        let shared = Arc::new(vec![r]);
        let mut layer = Relation::over(&shared, 0);
        let base_of = |i: usize| lists[(i + n - 1) % n].clone();
        for i in 0..n {
            let new = &lists[(i + 3) % n];
            layer.set_premises(i as u32, new).unwrap();
            layer.set_premises(i as u32, &lists[(i + 5) % n]).unwrap();
        }
        assert!(layer.insert(&[99], Meta::input(1.0)).1);
        layer.push_records(NO_EVIDENCE, Some(&lists[4])).unwrap();
        for i in 0..n {
            assert_eq!(
                layer.premises_of(i as u32).unwrap().to_vec(),
                lists[(i + 5) % n]
            );
            assert_eq!(
                shared[0].premises_of(i as u32).unwrap().to_vec(),
                base_of(i)
            );
        }
        assert_eq!(layer.premises_of(n as u32).unwrap().to_vec(), lists[4]);
        // Without provenance nothing is recorded.
        let mut off = Relation::new(1);
        off.insert(&[1], Meta::input(1.0));
        off.push_records(NO_EVIDENCE, None).unwrap();
        assert!(off.premises_of(0).is_none());
    }

    proptest::proptest! {
        /// A relation that keeps a grid finds every row there by its cells, and
        /// no row where it has none, while the cells are in the grid's range;
        /// the grid grows with the cells, turns off while it would not fit, and
        /// on again once the dedup table has grown.
        #[test]
        fn a_grid_finds_what_the_dedup_table_finds(
            rows in proptest::collection::vec((0u64..48, 0u64..48), 0..700),
            wide_at in proptest::option::of(0usize..700),
            want_at in 0usize..700,
            own_at in proptest::option::of(0usize..700),
            unpacked_at in proptest::option::of(0usize..700),
        ) {
            let mut r = Relation::new(2);
            // The rows inserted, by their cells: the oracle.
            let mut rows_by_cells = std::collections::HashMap::new();
            for (k, &(a, b)) in rows.iter().enumerate() {
                if k == want_at {
                    r.keep_grid(true);
                }
                // From row `wide_at` on, a cell may need two words.
                let a = match wide_at {
                    Some(at) if k >= at && a % 7 == 0 => a | 1 << 40,
                    _ => a,
                };
                // From row `own_at` on, rows may hold confidences of their own.
                let conf = match own_at {
                    Some(at) if k >= at && k % 3 == 0 => 0.5,
                    _ => 1.0,
                };
                // From row `unpacked_at` on, a record may not pack in a word.
                let rule = match unpacked_at {
                    Some(at) if k >= at && k % 5 == 0 => 5000,
                    _ => (k % 3) as u32,
                };
                let meta = Meta {
                    conf,
                    height: (k % 7) as u32,
                    rule,
                };
                let next = rows_by_cells.len() as u32;
                let (row, new) = r.insert(&[a, b], meta);
                let want = *rows_by_cells.entry((a, b)).or_insert(next);
                proptest::prop_assert_eq!((row, new), (want, want == next));
                if k % 50 == 0 {
                    r.settle_grid();
                }
            }
            r.settle_grid();
            proptest::prop_assert!(r.grid.on || r.grid.slots.is_empty());
            for (&(a, b), &row) in &rows_by_cells {
                proptest::prop_assert_eq!(r.find(&[a, b]), Some(row));
                proptest::prop_assert_eq!(r.find(&[a, b + 48]), None);
            }
            let Some(view) = r.narrow() else {
                // A wide layout has no narrow view: its grid is never read.
                return Ok(());
            };
            let Some(grid) = view.grid else {
                proptest::prop_assert!(!r.grid.on);
                return Ok(());
            };
            for a in 0..64u64 {
                for b in 0..64u64 {
                    match grid.row(a, b) {
                        Some(found) => {
                            proptest::prop_assert_eq!(found, r.find(&[a, b]));
                            if let Some(row) = found {
                                let m = r.meta(row);
                                proptest::prop_assert_eq!(view.record(row), (m.height, m.rule));
                            }
                            let cells = [a, b];
                            let meta = view.find_meta(&cells, tag_of(hash_cells(cells.iter().copied())));
                            proptest::prop_assert_eq!(meta, found.map(|row| r.meta(row)));
                        }
                        None => proptest::prop_assert!(
                            a >= u64::from(r.grid.dim.0) || b >= u64::from(r.grid.dim.1)
                        ),
                    }
                }
            }
        }
    }

    #[test]
    fn a_grid_turns_on_only_where_it_fits_and_off_past_that() {
        // Asked for before any row: on once rows come and a merge settles it.
        let mut r = Relation::new(2);
        r.keep_grid(true);
        insert_rows(&mut r, &[(1, 2), (3, 4)]);
        r.settle_grid();
        assert!(r.grid.on);
        assert_eq!(
            r.narrow().and_then(|v| v.grid).map(|g| g.row(3, 4)),
            Some(Some(Some(1)))
        );
        // A cell far out makes it too large: off, and the dedup table answers.
        insert_rows(&mut r, &[(1 << 20, 0)]);
        assert!(!r.grid.on && r.grid.slots.is_empty());
        assert!(r.narrow().is_some_and(|v| v.grid.is_none()));
        assert_eq!(r.find(&[1 << 20, 0]), Some(2));
        // Rows of their own confidence keep it, and a look-up reads each row's
        // confidence from the row.
        let mut own = Relation::new(2);
        own.keep_grid(true);
        insert_rows(&mut own, &[(1, 2)]);
        own.settle_grid();
        assert!(own.grid.on);
        own.insert(&[3, 4], Meta::input(0.5));
        assert!(own.layout.conf_col && own.grid.on && own.dedup.quads.is_empty());
        let view = own.narrow().expect("a weighted view");
        assert!(view.grid.is_some());
        let conf = |cells: [u64; 2]| {
            view.find_meta(&cells, tag_of(hash_cells(cells.iter().copied())))
                .map(|m| m.conf)
        };
        assert_eq!(
            (conf([1, 2]), conf([3, 4]), conf([4, 3])),
            (Some(1.0), Some(0.5), None)
        );
        // A cell of two words gives it up for good.
        own.insert(&[1 << 40, 4], Meta::input(0.5));
        assert!(!own.grid.want && !own.grid.on && own.grid.slots.is_empty());
        own.keep_grid(true);
        assert!(!own.grid.want);
        assert_eq!(own.find(&[3, 4]), Some(1));
        // A grid the look-ups do not read takes no more than the dedup table it
        // stands in for; once they read it, up to twice that.
        let mut cold = Relation::new(2);
        cold.keep_grid(false);
        // 300 rows among 48 by 49 cells: a table of 512 slots (4 KiB) against
        // a grid of 48 by 64 (12 KiB; the slack in tests is 4 KiB).
        let rows: Vec<(u64, u64)> = (0..300).map(|i| (i % 48, i / 48 * 8)).collect();
        insert_rows(&mut cold, &rows);
        cold.settle_grid();
        assert_eq!(cold.dedup_bytes(), 4096);
        assert!(!cold.grid.on);
        // Tried again only once the table would be large enough for it.
        assert!(cold.grid.retry_at > cold.dedup_bytes());
        cold.keep_grid(true);
        assert!(cold.grid.on && cold.dedup.quads.is_empty());
        assert_eq!(cold.find(&[299 % 48, 299 / 48 * 8]), Some(299));
        assert_eq!(cold.find(&[1, 1]), None);
        // A table about to grow gives way to a grid that fits the grown table's
        // bytes, before the merge that would grow it.
        let mut soon = Relation::new(2);
        soon.keep_grid(false);
        insert_rows(&mut soon, &rows);
        soon.settle_grid();
        assert!(!soon.grid.on && !soon.dedup.quads.is_empty());
        soon.reserve(10);
        assert!(!soon.grid.on, "no growth: the table as it is");
        soon.reserve(3000);
        assert!(soon.grid.on && soon.dedup.quads.is_empty());
        assert_eq!(soon.find(&[299 % 48, 299 / 48 * 8]), Some(299));
        assert_eq!(soon.find(&[1, 1]), None);
        // Cells far apart: tried again only once a table would take the bytes
        // of their least grid (never, for cells past 32 bits: 2^66 bytes).
        let mut far = Relation::new(2);
        far.keep_grid(true);
        insert_rows(&mut far, &[(1 << 20, 1 << 20)]);
        far.settle_grid();
        assert!(!far.grid.on && far.grid.retry_at >= (1 << 40) * 4);
        insert_rows(&mut far, &[(u64::from(u32::MAX), u64::from(u32::MAX))]);
        far.settle_grid();
        assert!(!far.grid.on);
        // Not for relations of other arities, nor for layers.
        let mut one = Relation::new(1);
        one.keep_grid(true);
        one.insert(&[5], Meta::input(1.0));
        one.settle_grid();
        assert!(!one.grid.want && !one.grid.on);
    }

    fn insert_rows(r: &mut Relation, rows: &[(u64, u64)]) {
        for &(a, b) in rows {
            r.insert(&[a, b], Meta::input(1.0));
        }
    }

    #[test]
    fn nullary_relation_holds_one_row() {
        let mut r = Relation::new(0);
        assert_eq!(r.insert(&[], Meta::input(1.0)), (0, true));
        assert_eq!(r.insert(&[], Meta::input(1.0)), (0, false));
        assert_eq!(r.len(), 1);
        assert_eq!(r.find(&[]), Some(0));
    }
}
