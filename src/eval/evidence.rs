//! The input records of a fact base, by columns.
//!
//! Every input fact an evaluation was given keeps its record (for citations and
//! proofs): its relation, confidence, edge index and values, and the index of a
//! provenance record shared by every fact of the same file (or by consecutive facts
//! given with equal provenance). The values are the evaluator's cells, so a record
//! costs a [`Row`] and its cells and allocates nothing of its own; it is decoded into
//! an owned [`InputFact`] only when asked for, with the fact base's symbol table
//! (which only ever grows, and whose layers keep the base's cells).
//!
//! A fact base's records are a shared base table (never written) and its own table,
//! numbered after the base's: an overlay shares its base's records without copying
//! them.

use std::sync::Arc;

use super::plan::decode;
use super::symbols::Symbols;
use crate::ir::{Program, RelId};
use crate::store::facts::{Row, Table};
use crate::store::{InputFact, Provenance};

/// The input records of a fact base: a shared base's (never written) and its own,
/// numbered after them.
#[derive(Clone, Default)]
pub(crate) struct Evidence {
    base: Option<Arc<Table>>,
    own: Table,
}

impl Evidence {
    fn base_len(&self) -> usize {
        self.base.as_ref().map_or(0, |b| b.rows.len())
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.base_len() + self.own.rows.len()
    }

    /// Record `k`'s row and the table that holds its cells and provenance.
    fn row(&self, k: usize) -> Option<(&Table, Row)> {
        let n = self.base_len();
        match &self.base {
            Some(b) if k < n => Some((b, b.rows.get(k)?)),
            _ => {
                let own = &self.own;
                own.rows.get(k.checked_sub(n)?).map(|r| (own, r))
            }
        }
    }

    /// Every record's row with its table, base first.
    fn rows(&self) -> impl Iterator<Item = (&Table, Row)> {
        let base = self
            .base
            .iter()
            .flat_map(|b| b.rows.iter().map(move |r| (&**b, r)));
        base.chain(self.own.rows.iter().map(|r| (&self.own, r)))
    }

    /// The own records' table, and the number of the first (the base's records come
    /// before).
    pub fn own(&self) -> (&Table, usize) {
        (&self.own, self.base_len())
    }

    /// Record `k`'s confidence.
    pub fn confidence(&self, k: usize) -> Option<f64> {
        self.row(k).map(|(_, r)| r.confidence)
    }

    /// Record `k`'s edge index.
    pub fn edge_idx(&self, k: usize) -> Option<u64> {
        self.row(k).and_then(|(_, r)| r.edge_idx)
    }

    /// Every record's edge index, in record order.
    pub fn edge_idxs(&self) -> impl Iterator<Item = Option<u64>> + '_ {
        self.rows().map(|(_, r)| r.edge_idx)
    }

    /// Record `k` in its owned form, its values decoded with `interner` (the fact
    /// base's symbol table).
    pub fn record(&self, k: usize, program: &Program, interner: &Symbols) -> Option<InputFact> {
        let (table, row) = self.row(k)?;
        Some(owned(table, &row, program, interner))
    }

    /// Every record in its owned form, base first.
    pub fn records<'a>(
        &'a self,
        program: &'a Program,
        interner: &'a Symbols,
    ) -> impl Iterator<Item = InputFact> + 'a {
        self.rows()
            .map(move |(table, row)| owned(table, &row, program, interner))
    }

    /// The records added after the base's (a layer's own), in their owned form.
    pub fn own_records<'a>(
        &'a self,
        program: &'a Program,
        interner: &'a Symbols,
    ) -> impl ExactSizeIterator<Item = InputFact> + 'a {
        let own = &self.own;
        (0..own.rows.len()).map(move |k| {
            let row = own.rows.get(k).expect("a record");
            owned(own, &row, program, interner)
        })
    }

    /// Room for more records of `cells` cells in all.
    pub fn reserve(&mut self, cells: usize) {
        self.own.cells.reserve_exact(cells);
    }

    /// Add a provenance record for the records that follow (shared with the last one
    /// when equal); returns its index.
    pub fn provenance(&mut self, p: Provenance) -> u32 {
        self.own.provenance_shared(p)
    }

    /// [`provenance`](Self::provenance) of a borrowed record (its edge index left
    /// out), copied only when it differs from the last one.
    pub fn provenance_of(&mut self, p: &Provenance) -> u32 {
        self.own.provenance_shared_of(p)
    }

    /// Add provenance records (a load's, in order); returns the index of the first.
    pub fn provenances(&mut self, records: &[Provenance]) -> u32 {
        let first = self.own.provenances.len() as u32;
        self.own.provenances.extend_from_slice(records);
        first
    }

    /// Append a record: its relation, cells (encoded with the fact base's symbol
    /// table), confidence, provenance record (an index returned by
    /// [`provenance`](Self::provenance) or [`provenances`](Self::provenances)) and edge
    /// index. Its index is the former [`len`](Self::len).
    pub fn push(
        &mut self,
        rel: RelId,
        cells: &[u64],
        confidence: f64,
        provenance: u32,
        edge_idx: Option<u64>,
    ) {
        let start = self.own.cells.len();
        for &c in cells {
            self.own.cells.push(c);
        }
        self.own.rows.push(Row {
            rel,
            start,
            confidence,
            provenance,
            edge_idx,
        });
    }

    /// Take a table as the own records (after any already added).
    pub fn adopt(&mut self, mut table: Table) {
        if self.own.rows.is_empty() && self.own.provenances.is_empty() {
            self.own = table;
        } else {
            self.own.append(&mut table);
        }
    }

    /// Move the own records into a shared base, so that layers can share them. Records
    /// that a layer added (a base extended by
    /// [`FactBase::extend`](super::FactBase::extend)) are folded into a new base once
    /// they are many (every overlay copies them otherwise): at least 1024, or an eighth
    /// of the base.
    pub fn share(&mut self) {
        match &self.base {
            None => self.base = Some(Arc::new(std::mem::take(&mut self.own))),
            Some(base)
                if self.own.rows.len() >= 1024 || self.own.rows.len() * 8 >= base.rows.len() =>
            {
                let mut all = Table::clone(base);
                all.append(&mut self.own);
                self.own = Table::default();
                self.base = Some(Arc::new(all));
            }
            Some(_) => {}
        }
    }

    /// Bytes the own records have allocated (not the shared base's).
    pub fn own_bytes(&self) -> usize {
        self.own.heap_bytes()
    }
}

/// A record in its owned form.
fn owned(table: &Table, row: &Row, program: &Program, interner: &Symbols) -> InputFact {
    let columns = &program.relation(row.rel).columns;
    let args = table
        .cells_of(row, columns.len())
        .zip(columns)
        .map(|(c, col)| decode(c, col.ty, interner))
        .collect();
    let mut provenance = table.provenances[row.provenance as usize].clone();
    provenance.edge_idx = row.edge_idx;
    InputFact {
        rel: row.rel,
        args,
        confidence: row.confidence,
        provenance,
    }
}
