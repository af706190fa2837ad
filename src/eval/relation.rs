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

/// A dedup table entry: a row and the high half of its hash, which rejects almost
/// every non-matching entry without reading the row.
#[derive(Clone, Copy)]
struct DedupEntry {
    row: u32,
    tag: u32,
}

#[inline]
fn tag_of(h: u64) -> u32 {
    (h >> 32) as u32
}

/// A hash index on a set of columns: key → rows (ascending). Each bucket keeps its
/// key's hash so that growing the table never re-reads rows.
#[derive(Clone)]
pub(crate) struct Index {
    /// The key columns, in key order.
    pub cols: Vec<usize>,
    table: HashTable<(u64, Vec<u32>)>,
}

/// One relation's facts.
#[derive(Clone)]
pub(crate) struct Relation {
    arity: usize,
    len: u32,
    data: Vec<u64>,
    /// Every row, with its first cells inline so that probing a narrow relation never
    /// reads its rows.
    dedup: HashTable<DedupEntry>,
    /// Confidence, height and rule per row.
    pub meta: Vec<Meta>,
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
            len: 0,
            data: Vec::new(),
            dedup: HashTable::new(),
            meta: Vec::new(),
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
        let a = self.arity;
        &self.data[row as usize * a..row as usize * a + a]
    }

    /// The row holding exactly these cells.
    #[inline]
    pub fn find(&self, cells: &[u64]) -> Option<u32> {
        let h = hash_cells(cells.iter().copied());
        let tag = tag_of(h);
        self.dedup
            .find(h, |e| e.tag == tag && same(self.row(e.row), cells))
            .map(|e| e.row)
    }

    /// Find the row with these cells or append it; `(row, true)` when appended. New
    /// rows get `meta` and are added to every index; the caller fills in `deriv` and
    /// `evidence` for them.
    pub fn insert(&mut self, cells: &[u64], meta: Meta) -> (u32, bool) {
        let h = hash_cells(cells.iter().copied());
        let tag = tag_of(h);
        let (data, arity) = (&self.data, self.arity);
        let row_of = |r: u32| &data[r as usize * arity..r as usize * arity + arity];
        if let Some(e) = self
            .dedup
            .find(h, |e| e.tag == tag && same(row_of(e.row), cells))
        {
            return (e.row, false);
        }
        let row = self.len;
        self.data.extend_from_slice(cells);
        self.len += 1;
        self.meta.push(meta);
        let (data, arity) = (&self.data, self.arity);
        self.dedup.insert_unique(h, DedupEntry { row, tag }, |e| {
            hash_cells(data[e.row as usize * arity..][..arity].iter().copied())
        });
        for index in &mut self.indexes {
            index_add(index, data, arity, row);
        }
        (row, true)
    }

    /// The index on exactly these columns (in this order), building it if missing.
    pub fn ensure_index(&mut self, cols: &[usize]) -> usize {
        if let Some(i) = self.indexes.iter().position(|ix| ix.cols == cols) {
            return i;
        }
        let mut index = Index {
            cols: cols.to_vec(),
            table: HashTable::new(),
        };
        for row in 0..self.len {
            index_add(&mut index, &self.data, self.arity, row);
        }
        self.indexes.push(index);
        self.indexes.len() - 1
    }

    /// The rows whose key columns of index `index` equal `key` (ascending).
    #[inline]
    pub fn lookup(&self, index: usize, key: &[u64]) -> &[u32] {
        let ix = &self.indexes[index];
        let h = hash_cells(key.iter().copied());
        match ix.table.find(h, |(bh, rows)| {
            *bh == h && {
                let r = self.row(rows[0]);
                ix.cols.iter().zip(key).all(|(&c, &k)| r[c] == k)
            }
        }) {
            Some((_, rows)) => rows,
            None => &[],
        }
    }
}

fn index_add(index: &mut Index, data: &[u64], arity: usize, row: u32) {
    let cells = &data[row as usize * arity..row as usize * arity + arity];
    let cols = &index.cols;
    let h = hash_cells(cols.iter().map(|&c| cells[c]));
    let same_key = |(bh, rows): &(u64, Vec<u32>)| {
        *bh == h && {
            let r = &data[rows[0] as usize * arity..rows[0] as usize * arity + arity];
            cols.iter().all(|&c| r[c] == cells[c])
        }
    };
    if let Some((_, rows)) = index.table.find_mut(h, same_key) {
        rows.push(row);
    } else {
        index.table.insert_unique(h, (h, vec![row]), |(bh, _)| *bh);
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

    #[test]
    fn nullary_relation_holds_one_row() {
        let mut r = Relation::new(0);
        assert_eq!(r.insert(&[], Meta::input(1.0)), (0, true));
        assert_eq!(r.insert(&[], Meta::input(1.0)), (0, false));
        assert_eq!(r.len(), 1);
        assert_eq!(r.find(&[]), Some(0));
    }
}
