//! Physical storage of one relation: flat rows of raw cells, a dedup table, hash
//! indexes on column sets, and per-row confidence and (optionally) best derivation.
//!
//! Rows are append-only and never move, so a row index is a stable fact id and every
//! index bucket lists its rows in ascending order; readers that must see only an older
//! version of the relation stop at the first row past their limit.

use std::hash::Hasher;

use hashbrown::HashTable;

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

/// Where a row's best derivation's premises are, compactly.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DerivRec {
    /// Start of the premise list in [`Relation::premises`].
    pub start: u32,
    /// Length of the premise list (aggregate markers included).
    pub len: u32,
}

/// Cell-wise equality (short rows: cheaper than a `memcmp` call).
#[inline]
fn same(a: &[u64], b: &[u64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The 32-bit digest of a row's hash that the dedup table keeps.
#[inline]
pub(crate) fn tag_of(h: u64) -> u32 {
    (h ^ (h >> 32)) as u32
}

/// The dedup table: open addressing with linear probing over one `u64` per slot
/// holding a row and the 32-bit digest of its hash (`tag << 32 | row + 1`; 0 is an
/// empty slot). A probe usually touches one cache line and reads a row only when the
/// digest matches; a slot's position is a function of its digest alone, so growing
/// never reads rows. Nothing iterates the table, so its layout never shows in results.
#[derive(Clone, Default)]
struct Dedup {
    slots: Vec<u64>,
    len: usize,
}

/// Where a probe for a digest starts in a table of `slots` slots (a power of two).
#[inline]
fn home(tag: u32, slots: usize) -> usize {
    ((tag as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & (slots - 1)
}

#[inline]
fn slot_of(tag: u32, row: u32) -> u64 {
    (tag as u64) << 32 | (row as u64 + 1)
}

impl Dedup {
    /// The row whose digest is `tag` and for which `eq` holds.
    #[inline]
    fn find(&self, tag: u32, eq: impl Fn(u32) -> bool) -> Option<u32> {
        let n = self.slots.len();
        if n == 0 {
            return None;
        }
        let mut i = home(tag, n);
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            if (s >> 32) as u32 == tag && eq(s as u32 - 1) {
                return Some(s as u32 - 1);
            }
            i = (i + 1) & (n - 1);
        }
    }

    /// The row whose digest is `tag` and for which `eq` holds, or else record `row`
    /// under `tag` and return `None`.
    #[inline]
    fn find_or_insert(&mut self, tag: u32, row: u32, eq: impl Fn(u32) -> bool) -> Option<u32> {
        self.reserve(1);
        let n = self.slots.len();
        let mut i = home(tag, n);
        loop {
            let s = self.slots[i];
            if s == 0 {
                self.slots[i] = slot_of(tag, row);
                self.len += 1;
                return None;
            }
            if (s >> 32) as u32 == tag && eq(s as u32 - 1) {
                return Some(s as u32 - 1);
            }
            i = (i + 1) & (n - 1);
        }
    }

    /// Grow so that `additional` more rows keep the load at most 3/4.
    fn reserve(&mut self, additional: usize) {
        let need = self.len + additional;
        if need * 4 <= self.slots.len() * 3 {
            return;
        }
        let mut n = self.slots.len().max(16);
        while need * 4 > n * 3 {
            n *= 2;
        }
        let old = std::mem::replace(&mut self.slots, vec![0; n]);
        for s in old.into_iter().filter(|&s| s != 0) {
            let mut i = home((s >> 32) as u32, n);
            while self.slots[i] != 0 {
                i = (i + 1) & (n - 1);
            }
            self.slots[i] = s;
        }
    }

    /// Ask the CPU to fetch the first slot a probe for `tag` reads.
    #[inline]
    fn prefetch(&self, tag: u32) {
        if !self.slots.is_empty() {
            prefetch(&self.slots[home(tag, self.slots.len())]);
        }
    }

    /// The row in the first slot a probe for `tag` reads, if its digest is `tag`.
    #[inline]
    fn peek(&self, tag: u32) -> Option<u32> {
        let n = self.slots.len();
        if n == 0 {
            return None;
        }
        let s = self.slots[home(tag, n)];
        (s != 0 && (s >> 32) as u32 == tag).then(|| s as u32 - 1)
    }
}

/// A hint to load the cache line holding `x` (no effect where unsupported).
#[inline(always)]
fn prefetch<T>(x: &T) {
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
    rows: Vec<u32>,
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

/// A hash index on a set of columns: key → rows (ascending).
#[derive(Clone)]
pub(crate) struct Index {
    /// The key columns, in key order.
    pub cols: Vec<usize>,
    table: HashTable<Bucket>,
    /// Bytes allocated by the buckets' row lists.
    row_bytes: usize,
}

/// Cells after a row's own that hold its [`Meta`]: the confidence's bits, then
/// `height << 32 | rule`.
const META_CELLS: usize = 2;

/// One relation's facts.
#[derive(Clone)]
pub(crate) struct Relation {
    arity: usize,
    /// `arity + META_CELLS`: each row is followed by its record, so that checking a
    /// derived tuple against an existing fact reads one cache line, not two.
    stride: usize,
    len: u32,
    data: Vec<u64>,
    /// Every row, by a 32-bit digest of its hash (a probe reads the row only when the
    /// digest matches).
    dedup: Dedup,
    /// Indexes, each on a distinct column set.
    pub indexes: Vec<Index>,
    /// Premises of the best derivation per row (empty when provenance is off).
    pub deriv: Vec<DerivRec>,
    /// Premise arena of `deriv`.
    pub premises: Vec<FactId>,
    /// Index of the row's input record in the fact base's evidence list, or
    /// [`NO_EVIDENCE`].
    pub evidence: Vec<u32>,
}

impl Relation {
    /// An empty relation of this arity.
    pub fn new(arity: usize) -> Relation {
        Relation {
            arity,
            stride: arity + META_CELLS,
            len: 0,
            data: Vec::new(),
            dedup: Dedup::default(),
            indexes: Vec::new(),
            deriv: Vec::new(),
            premises: Vec::new(),
            evidence: Vec::new(),
        }
    }

    /// Number of rows.
    #[inline]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// The cells of a row.
    #[inline]
    pub fn row(&self, row: u32) -> &[u64] {
        let b = row as usize * self.stride;
        &self.data[b..b + self.arity]
    }

    /// The record of a row.
    #[inline]
    pub fn meta(&self, row: u32) -> Meta {
        let b = row as usize * self.stride + self.arity;
        let (conf, hr) = (self.data[b], self.data[b + 1]);
        Meta {
            conf: f64::from_bits(conf),
            height: (hr >> 32) as u32,
            rule: hr as u32,
        }
    }

    /// Replace the record of a row.
    #[inline]
    pub fn set_meta(&mut self, row: u32, meta: Meta) {
        let b = row as usize * self.stride + self.arity;
        self.data[b] = meta.conf.to_bits();
        self.data[b + 1] = (meta.height as u64) << 32 | meta.rule as u64;
    }

    /// Replace the confidence of a row.
    #[inline]
    pub fn set_conf(&mut self, row: u32, conf: f64) {
        let b = row as usize * self.stride + self.arity;
        self.data[b] = conf.to_bits();
    }

    /// The row holding exactly these cells.
    #[inline]
    pub fn find(&self, cells: &[u64]) -> Option<u32> {
        let tag = tag_of(hash_cells(cells.iter().copied()));
        self.dedup.find(tag, |r| same(self.row(r), cells))
    }

    /// Find the row with these cells or append it; `(row, true)` when appended. New
    /// rows get `meta` and are added to every index; the caller fills in `deriv` and
    /// `evidence` for them.
    pub fn insert(&mut self, cells: &[u64], meta: Meta) -> (u32, bool) {
        self.insert_tagged(cells, tag_of(hash_cells(cells.iter().copied())), meta)
    }

    /// [`Relation::insert`] for cells whose digest `tag_of(hash_cells(cells))` is
    /// already known.
    #[inline]
    pub fn insert_tagged(&mut self, cells: &[u64], tag: u32, meta: Meta) -> (u32, bool) {
        let (data, arity, stride) = (&self.data, self.arity, self.stride);
        let row = self.len;
        let eq = |r: u32| same(&data[r as usize * stride..][..arity], cells);
        if let Some(found) = self.dedup.find_or_insert(tag, row, eq) {
            return (found, false);
        }
        self.data.extend(cells.iter().copied());
        self.len += 1;
        self.data.extend([
            meta.conf.to_bits(),
            (meta.height as u64) << 32 | meta.rule as u64,
        ]);
        for index in &mut self.indexes {
            index_add(index, &self.data, arity, stride, row);
        }
        (row, true)
    }

    /// Bytes this relation's storage has allocated: rows with their records, the
    /// dedup table, indexes (tables and row lists), derivation records, evidence.
    pub fn heap_bytes(&self) -> usize {
        self.data.capacity() * 8
            + self.dedup.slots.capacity() * 8
            + self
                .indexes
                .iter()
                .map(|ix| ix.table.allocation_size() + ix.row_bytes)
                .sum::<usize>()
            + self.deriv.capacity() * std::mem::size_of::<DerivRec>()
            + self.premises.capacity() * std::mem::size_of::<FactId>()
            + self.evidence.capacity() * 4
    }

    /// At most how many bytes inserting `rows` new rows with `premises` premises in
    /// all could allocate (vectors and tables that would have to grow, each to its
    /// new size: while one moves, both copies exist).
    pub fn growth_bound(&self, rows: usize, premises: usize) -> usize {
        use crate::eval::fixpoint::grow_bytes;
        let mut g = grow_bytes(self.data.len(), self.data.capacity(), rows * self.stride, 8);
        let need = self.dedup.len + rows;
        if need * 4 > self.dedup.slots.len() * 3 {
            let mut n = self.dedup.slots.len().max(16);
            while need * 4 > n * 3 {
                n *= 2;
            }
            g += n * 8;
        }
        for ix in &self.indexes {
            let need = ix.table.len() + rows;
            if need > ix.table.capacity() {
                let buckets = (need * 8 / 7).next_power_of_two().max(4);
                g += buckets * (std::mem::size_of::<Bucket>() + 1);
            }
            // A row list per new key, or a share of a growing one.
            g += rows * 8;
        }
        g += grow_bytes(self.deriv.len(), self.deriv.capacity(), rows, 8);
        g += grow_bytes(self.premises.len(), self.premises.capacity(), premises, 8);
        g + grow_bytes(self.evidence.len(), self.evidence.capacity(), rows, 4)
    }

    /// Make room for `additional` more rows, so that a batch of inserts never grows
    /// the dedup table midway (and prefetches stay valid).
    pub fn reserve(&mut self, additional: usize) {
        self.dedup.reserve(additional);
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
        if let Some(r) = self.dedup.peek(tag) {
            let b = r as usize * self.stride;
            prefetch(&self.data[b]);
            prefetch(&self.data[b + self.stride - 1]);
        }
    }

    /// The index on exactly these columns (in this order), building it if missing.
    pub fn ensure_index(&mut self, cols: &[usize]) -> usize {
        if let Some(i) = self.indexes.iter().position(|ix| ix.cols == cols) {
            return i;
        }
        let mut index = Index {
            cols: cols.to_vec(),
            table: HashTable::new(),
            row_bytes: 0,
        };
        for row in 0..self.len {
            index_add(&mut index, &self.data, self.arity, self.stride, row);
        }
        self.indexes.push(index);
        self.indexes.len() - 1
    }

    /// The rows whose key columns of index `index` equal `key` (ascending).
    #[inline]
    pub fn lookup(&self, index: usize, key: &[u64]) -> &[u32] {
        let ix = &self.indexes[index];
        let h = hash_cells(key.iter().copied());
        let prefix = key_prefix(key.iter().copied());
        let long = key.len() > INLINE_KEY;
        match ix.table.find(h, |b| {
            b.hash == h
                && b.key == prefix
                && (!long || {
                    let r = self.row(b.rows[0]);
                    ix.cols.iter().zip(key).all(|(&c, &k)| r[c] == k)
                })
        }) {
            Some(b) => &b.rows,
            None => &[],
        }
    }
}

fn index_add(index: &mut Index, data: &[u64], arity: usize, stride: usize, row: u32) {
    let cells = &data[row as usize * stride..row as usize * stride + arity];
    let cols = &index.cols;
    let h = hash_cells(cols.iter().map(|&c| cells[c]));
    let prefix = key_prefix(cols.iter().map(|&c| cells[c]));
    let long = cols.len() > INLINE_KEY;
    let same_key = |b: &Bucket| {
        b.hash == h
            && b.key == prefix
            && (!long || {
                let r = &data[b.rows[0] as usize * stride..][..arity];
                cols.iter().all(|&c| r[c] == cells[c])
            })
    };
    if let Some(b) = index.table.find_mut(h, same_key) {
        let cap = b.rows.capacity();
        b.rows.push(row);
        index.row_bytes += (b.rows.capacity() - cap) * 4;
    } else {
        let bucket = Bucket {
            hash: h,
            key: prefix,
            rows: vec![row],
        };
        index.row_bytes += 4;
        index.table.insert_unique(h, bucket, |b| b.hash);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_dedups_and_indexes_grow() {
        let mut r = Relation::new(2);
        let ix = r.ensure_index(&[1]);
        assert_eq!(r.insert(&[1, 2], Meta::input(1.0)), (0, true));
        assert_eq!(r.insert(&[3, 2], Meta::input(1.0)), (1, true));
        assert_eq!(r.insert(&[1, 2], Meta::input(0.5)), (0, false));
        assert_eq!(r.lookup(ix, &[2]), &[0, 1]);
        assert!(r.lookup(ix, &[1]).is_empty());
        let ix0 = r.ensure_index(&[0]);
        assert_eq!(r.lookup(ix0, &[3]), &[1]);
        assert_eq!(r.find(&[3, 2]), Some(1));
        assert_eq!(r.find(&[2, 3]), None);
        assert_eq!(r.len(), 2);
    }

    proptest::proptest! {
        /// The dedup table agrees with a std map across growth, reserves and
        /// prefetches, for narrow and wide rows.
        #[test]
        fn dedup_matches_a_map(
            rows in proptest::collection::vec((0u64..40, 0u64..4, 0u64..3), 0..600),
            wide in proptest::bool::ANY,
        ) {
            let arity = if wide { 3 } else { 2 };
            let mut r = Relation::new(arity);
            let mut map = std::collections::HashMap::new();
            for (k, &(a, b, c)) in rows.iter().enumerate() {
                let cells = [a, b, c];
                let cells = &cells[..arity];
                if k % 97 == 0 {
                    r.reserve(50);
                }
                let tag = tag_of(hash_cells(cells.iter().copied()));
                r.prefetch_slot(tag);
                r.prefetch_row(tag);
                let want = map.get(cells).copied();
                let (row, new) = r.insert_tagged(cells, tag, Meta::input(1.0));
                proptest::prop_assert_eq!(new, want.is_none());
                if let Some(w) = want {
                    proptest::prop_assert_eq!(row, w);
                } else {
                    map.insert(cells.to_vec(), row);
                }
                proptest::prop_assert_eq!(r.row(row), cells);
            }
            proptest::prop_assert_eq!(r.len() as usize, map.len());
            for (cells, &row) in &map {
                proptest::prop_assert_eq!(r.find(cells), Some(row));
            }
            proptest::prop_assert_eq!(r.find(&[99, 99, 99][..arity]), None);
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
