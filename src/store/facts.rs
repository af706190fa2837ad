//! Typed input facts by columns: what a load produces and evaluation consumes.
//!
//! Every fact is a row of raw cells (the evaluator's encoding: see
//! `value::cell`, in 32-bit words while every cell fits) in one flat array, with its
//! relation, confidence, edge index and the index of a provenance record shared by
//! every fact of the same file (a record of its own only when the input gave one).
//! Rows are kept as runs ([`Rows`]): a file's facts share one entry. Symbols are interned once, in the
//! table's own interner; evaluation reads the rows straight from the table,
//! re-keying each distinct symbol into its own symbol table once. So loading a fact
//! allocates nothing of its own, and a fact base keeps its evidence in a table of the
//! same shape (`eval::evidence`), without an owned copy per fact.

use lasso::Rodeo;

use crate::diag::{Diagnostic, ErrorCode, Result};
use crate::ir::{Column, Program, RelId, Relation};
use crate::store::{InputFact, Provenance};
use crate::value::{ColumnType, Value, cell};

/// One fact's record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Row {
    pub rel: RelId,
    /// Start of its cells in [`Table::cells`] (arity from the relation).
    pub start: usize,
    pub confidence: f64,
    /// Its provenance record in [`Table::provenances`].
    pub provenance: u32,
    /// Its edge index (assigned for every fact of a finished load).
    pub edge_idx: Option<u64>,
}

/// Consecutive rows of one relation and provenance record, their cells one after
/// another, their edge indexes consecutive (or all unset), their confidence one
/// (unless the table keeps a confidence per row).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Run {
    /// Number of its first row.
    first: usize,
    /// Start of its first row's cells.
    start: usize,
    /// Every row's confidence (unused once the table keeps one per row).
    confidence: f64,
    /// Its first row's edge index (when [`Run::EDGE`] is set in `width`).
    edge: u64,
    rel: RelId,
    provenance: u32,
    /// Cells a row (known from its second row on), and [`Run::EDGE`].
    width: u32,
}

impl Run {
    /// The bit of `width` that says the rows have edge indexes.
    const EDGE: u32 = 1 << 31;

    fn edge(&self) -> Option<u64> {
        (self.width & Run::EDGE != 0).then_some(self.edge)
    }

    fn cells_per_row(&self) -> usize {
        (self.width & !Run::EDGE) as usize
    }
}

/// The rows of a table, as runs ([`Run`]): a file's facts of two numbers take one
/// run, so a row costs nothing beyond its cells. Confidences are kept by run until
/// two rows that would share a run differ only by it; from then on the table keeps
/// one per row.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rows {
    runs: Vec<Run>,
    len: usize,
    /// Whether every row's confidence is in `confs`.
    by_row: bool,
    confs: Vec<f64>,
}

impl Rows {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Append a row.
    #[inline]
    pub fn push(&mut self, row: Row) {
        // The usual row: the next of the last run, which has two or more.
        if let Some(r) = self.runs.last()
            && !self.by_row
        {
            let n = self.len - r.first;
            if n > 1
                && row.rel == r.rel
                && row.provenance == r.provenance
                && row.start == r.start + n * r.cells_per_row()
                && row.confidence.to_bits() == r.confidence.to_bits()
                && match (r.edge(), row.edge_idx) {
                    (None, None) => true,
                    (Some(e), Some(x)) => e.checked_add(n as u64) == Some(x),
                    _ => false,
                }
            {
                self.len += 1;
                return;
            }
        }
        self.push_slow(row);
    }

    /// [`Rows::push`] of any row.
    #[inline(never)]
    fn push_slow(&mut self, row: Row) {
        let k = self.len;
        self.len += 1;
        if let Some(r) = self.runs.last_mut() {
            let n = k - r.first;
            let edge = match (r.edge(), row.edge_idx) {
                (None, None) => true,
                (Some(e), Some(x)) => e.checked_add(n as u64) == Some(x),
                _ => false,
            };
            let width = match n {
                1 => row
                    .start
                    .checked_sub(r.start)
                    .and_then(|w| u32::try_from(w).ok())
                    .filter(|&w| w < Run::EDGE),
                _ => {
                    let w = r.cells_per_row();
                    (row.start == r.start + n * w).then_some(w as u32)
                }
            };
            if let Some(w) =
                width.filter(|_| edge && r.rel == row.rel && r.provenance == row.provenance)
            {
                let same = r.confidence.to_bits() == row.confidence.to_bits();
                if self.by_row || same {
                    r.width = w | (r.width & Run::EDGE);
                    if self.by_row {
                        self.confs.push(row.confidence);
                    }
                    return;
                }
                // Rows that differ only by their confidence: from now on one a row.
                self.by_row = true;
                self.confs.reserve(k + 1);
                for j in 0..self.runs.len() {
                    let (c, n) = (self.runs[j].confidence, self.run_len(j, k));
                    self.confs.extend(std::iter::repeat_n(c, n));
                }
                let r = self.runs.last_mut().expect("a run");
                r.width = w | (r.width & Run::EDGE);
                self.confs.push(row.confidence);
                return;
            }
        }
        self.runs.push(Run {
            first: k,
            start: row.start,
            confidence: row.confidence,
            edge: row.edge_idx.unwrap_or(0),
            rel: row.rel,
            provenance: row.provenance,
            width: if row.edge_idx.is_some() { Run::EDGE } else { 0 },
        });
        if self.by_row {
            self.confs.push(row.confidence);
        }
    }

    /// Rows of run `j`, of a table of `len` rows.
    fn run_len(&self, j: usize, len: usize) -> usize {
        self.runs.get(j + 1).map_or(len, |r| r.first) - self.runs[j].first
    }

    /// The run that holds row `k` (which exists).
    fn run_of(&self, k: usize) -> usize {
        self.runs.partition_point(|r| r.first <= k) - 1
    }

    /// Row `k` of run `j`.
    fn at(&self, j: usize, k: usize) -> Row {
        let r = &self.runs[j];
        let i = k - r.first;
        Row {
            rel: r.rel,
            start: r.start + i * r.cells_per_row(),
            confidence: if self.by_row {
                self.confs[k]
            } else {
                r.confidence
            },
            provenance: r.provenance,
            edge_idx: r.edge().map(|e| e + i as u64),
        }
    }

    /// Row `k`, if there is one.
    pub fn get(&self, k: usize) -> Option<Row> {
        (k < self.len).then(|| self.at(self.run_of(k), k))
    }

    /// Every row from row `from` on, in order.
    pub fn iter_from(&self, from: usize) -> RowsIter<'_> {
        let (j, end) = match from < self.len {
            true => {
                let j = self.run_of(from);
                (j, self.runs[j].first + self.run_len(j, self.len))
            }
            false => (self.runs.len(), from),
        };
        RowsIter {
            rows: self,
            run: j,
            next: from,
            end,
        }
    }

    /// Every row, in order.
    pub fn iter(&self) -> RowsIter<'_> {
        self.iter_from(0)
    }

    /// The rows by runs: each run's rows and provenance record.
    pub fn spans(&self) -> impl Iterator<Item = (std::ops::Range<usize>, u32)> + '_ {
        (0..self.runs.len()).map(|j| {
            let r = &self.runs[j];
            (r.first..r.first + self.run_len(j, self.len), r.provenance)
        })
    }

    /// Whether some row has an edge index.
    pub fn any_edge(&self) -> bool {
        self.runs.iter().any(|r| r.edge().is_some())
    }

    /// Number the rows without an edge index, in order, from `next` on; `false`
    /// (and some rows left unnumbered) when the numbers run out.
    pub fn number(&mut self, mut next: Option<u64>) -> bool {
        let len = self.len;
        let firsts: Vec<usize> = self.runs.iter().map(|r| r.first).skip(1).collect();
        for (j, r) in self.runs.iter_mut().enumerate() {
            if r.edge().is_some() {
                continue;
            }
            let n = firsts.get(j).copied().unwrap_or(len) - r.first;
            let Some(first) = next else { return false };
            let Some(last) = first.checked_add(n as u64 - 1) else {
                return false;
            };
            r.edge = first;
            r.width |= Run::EDGE;
            next = last.checked_add(1);
        }
        true
    }

    /// Rows per relation, for relations `0..rels` (rows of others not counted).
    pub fn per_relation(&self, rels: usize) -> Vec<usize> {
        let mut out = vec![0; rels];
        for j in 0..self.runs.len() {
            if let Some(n) = out.get_mut(self.runs[j].rel as usize) {
                *n += self.run_len(j, self.len);
            }
        }
        out
    }

    /// Give every row the edge index `edge(k, its own)`.
    pub fn set_edges(&mut self, mut edge: impl FnMut(usize, Option<u64>) -> Option<u64>) {
        let mut out = Rows {
            runs: Vec::new(),
            len: 0,
            by_row: false,
            confs: Vec::new(),
        };
        for (k, row) in self.iter().enumerate() {
            out.push(Row {
                edge_idx: edge(k, row.edge_idx),
                ..row
            });
        }
        *self = out;
    }

    /// Bytes allocated.
    pub fn heap_bytes(&self) -> usize {
        self.runs.capacity() * std::mem::size_of::<Run>()
            + self.confs.capacity() * std::mem::size_of::<f64>()
    }
}

/// The rows of a [`Rows`] from one on, in order.
pub(crate) struct RowsIter<'a> {
    rows: &'a Rows,
    /// The run of row `next`, and the end of its rows.
    run: usize,
    next: usize,
    end: usize,
}

impl Iterator for RowsIter<'_> {
    type Item = Row;

    #[inline]
    fn next(&mut self) -> Option<Row> {
        if self.next == self.end {
            if self.run + 1 >= self.rows.runs.len() {
                return None;
            }
            self.run += 1;
            self.end = self.next + self.rows.run_len(self.run, self.rows.len);
        }
        let row = self.rows.at(self.run, self.next);
        self.next += 1;
        Some(row)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.rows.len.saturating_sub(self.next);
        (n, Some(n))
    }
}

impl ExactSizeIterator for RowsIter<'_> {}

/// Encoded cells in 32-bit words: one a cell while every cell fits in 32 bits (as
/// numbers of small magnitude and symbols do), else two, every cell widened once.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cells {
    words: Vec<u32>,
    wide: bool,
}

impl Cells {
    /// Number of cells.
    pub fn len(&self) -> usize {
        if self.wide {
            self.words.len() / 2
        } else {
            self.words.len()
        }
    }

    /// Append a cell.
    #[inline]
    pub fn push(&mut self, c: u64) {
        if !self.wide && c >> 32 == 0 {
            self.words.push(c as u32);
        } else {
            self.push_wide(c);
        }
    }

    #[cold]
    #[inline(never)]
    fn push_wide(&mut self, c: u64) {
        self.widen();
        self.words.extend([c as u32, (c >> 32) as u32]);
    }

    /// Two words a cell from now on (room kept for as many cells as before).
    fn widen(&mut self) {
        if self.wide {
            return;
        }
        let mut words = Vec::with_capacity(self.words.capacity() * 2);
        for &w in &self.words {
            words.extend([w, 0]);
        }
        self.words = words;
        self.wide = true;
    }

    /// Cell `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        if self.wide {
            self.words[2 * i] as u64 | (self.words[2 * i + 1] as u64) << 32
        } else {
            self.words[i] as u64
        }
    }

    /// Set cell `i` to `c`.
    pub fn set(&mut self, i: usize, c: u64) {
        if c >> 32 != 0 {
            self.widen();
        }
        if self.wide {
            self.words[2 * i] = c as u32;
            self.words[2 * i + 1] = (c >> 32) as u32;
        } else {
            self.words[i] = c as u32;
        }
    }

    /// Cells `start..start + n`.
    #[inline]
    pub fn range(&self, start: usize, n: usize) -> impl ExactSizeIterator<Item = u64> + '_ {
        (start..start + n).map(|i| self.get(i))
    }

    /// Keep the first `n` cells.
    pub fn truncate(&mut self, n: usize) {
        self.words.truncate(if self.wide { 2 * n } else { n });
    }

    /// Room for `n` more cells (in the present width).
    pub fn reserve_exact(&mut self, n: usize) {
        self.words.reserve_exact(if self.wide { 2 * n } else { n });
    }

    /// Move the cells of `other` after these.
    pub fn append(&mut self, other: &mut Cells) {
        if other.wide {
            self.widen();
        }
        if self.wide && !other.wide {
            self.words.reserve(2 * other.words.len());
            for &w in &other.words {
                self.words.extend([w, 0]);
            }
        } else {
            self.words.append(&mut other.words);
        }
        *other = Cells::default();
    }

    /// Bytes allocated.
    pub fn heap_bytes(&self) -> usize {
        self.words.capacity() * 4
    }
}

/// Input facts as rows of encoded cells; the symbols are keys of an interner kept
/// beside the table (the facts' own, or a fact base's).
#[derive(Debug, Clone, Default)]
pub(crate) struct Table {
    pub rows: Rows,
    pub cells: Cells,
    pub provenances: Vec<Provenance>,
}

impl Table {
    /// Add a shared provenance record; returns its index.
    pub fn provenance(&mut self, p: Provenance) -> u32 {
        self.provenances.push(p);
        (self.provenances.len() - 1) as u32
    }

    /// The index of provenance record `p`: the last record's when they are equal (so
    /// that facts given one by one with the same provenance share a record), else a
    /// new one.
    pub fn provenance_shared(&mut self, p: Provenance) -> u32 {
        match self.provenances.last() {
            Some(last) if *last == p => (self.provenances.len() - 1) as u32,
            _ => self.provenance(p),
        }
    }

    /// [`provenance_shared`](Self::provenance_shared) of a borrowed record, without
    /// its edge index (copied only when it differs from the last record).
    pub fn provenance_shared_of(&mut self, p: &Provenance) -> u32 {
        match self.provenances.last() {
            Some(last) if same_but_edge(last, p) => (self.provenances.len() - 1) as u32,
            _ => self.provenance(Provenance {
                edge_idx: None,
                ..p.clone()
            }),
        }
    }

    /// Row `row`'s cells, for a relation of `arity` columns.
    #[inline]
    pub fn cells_of<'a>(
        &'a self,
        row: &Row,
        arity: usize,
    ) -> impl ExactSizeIterator<Item = u64> + use<'a> {
        self.cells.range(row.start, arity)
    }

    /// Append the rows of `other` (their cells and provenance records moved after
    /// this table's).
    pub fn append(&mut self, other: &mut Table) {
        let (cells, provenances) = (self.cells.len(), self.provenances.len() as u32);
        for r in other.rows.iter() {
            self.rows.push(Row {
                start: r.start + cells,
                provenance: r.provenance + provenances,
                ..r
            });
        }
        other.rows = Rows::default();
        self.cells.append(&mut other.cells);
        self.provenances.append(&mut other.provenances);
    }

    /// Bytes the table has allocated, roughly (provenance records by their fields'
    /// text).
    pub fn heap_bytes(&self) -> usize {
        let provenance = |p: &Provenance| {
            std::mem::size_of::<Provenance>()
                + p.source.len()
                + p.table.as_ref().map_or(0, String::len)
                + (p.member_ids.len() + p.extra.len()) * 64
        };
        self.rows.heap_bytes()
            + self.cells.heap_bytes()
            + self.provenances.iter().map(provenance).sum::<usize>()
    }

    /// Append an owned fact, encoding its values (interning into `interner`).
    pub fn push_fact(
        &mut self,
        program: &Program,
        interner: &mut Rodeo,
        fact: &InputFact,
        k: usize,
    ) -> Result<()> {
        let relation = checked_relation(program, k, fact)?;
        let start = self.cells.len();
        for (v, c) in fact.args.iter().zip(&relation.columns) {
            match cell::encode(v, c.ty, interner) {
                Some(x) => self.cells.push(x),
                None => {
                    self.cells.truncate(start);
                    return Err(bad_value(program, k, fact, v, c));
                }
            }
        }
        let mut p = fact.provenance.clone();
        let edge_idx = p.edge_idx.take();
        let provenance = self.provenance_shared(p);
        self.rows.push(Row {
            rel: fact.rel,
            start,
            confidence: fact.confidence,
            provenance,
            edge_idx,
        });
        Ok(())
    }
}

/// The relation of input fact `fact` (the `k`-th of its batch, from 0), once its
/// relation, arity and confidence are checked: the one validation of input facts given
/// as values, for loads and for evaluation alike.
pub(crate) fn checked_relation<'p>(
    program: &'p Program,
    k: usize,
    fact: &InputFact,
) -> Result<&'p Relation> {
    let Some(relation) = program.relations.get(fact.rel as usize) else {
        return Err(bad_fact(k, fact, program, "unknown relation"));
    };
    if relation.arity() != fact.args.len() {
        return Err(bad_fact(
            k,
            fact,
            program,
            &format!("`{}` has {} columns", relation.name, relation.arity()),
        ));
    }
    if !(0.0..=1.0).contains(&fact.confidence) {
        return Err(bad_fact(k, fact, program, "confidence must be in [0, 1]"));
    }
    Ok(relation)
}

/// The error for value `v` of input fact `fact` (the `k`-th of its batch) that is not
/// a value of column `column`.
pub(crate) fn bad_value(
    program: &Program,
    k: usize,
    fact: &InputFact,
    v: &Value,
    column: &Column,
) -> crate::diag::Error {
    bad_fact(
        k,
        fact,
        program,
        &format!(
            "{v} is not a {} value for column `{}`",
            column.ty, column.name
        ),
    )
}

fn bad_fact(k: usize, fact: &InputFact, program: &Program, what: &str) -> crate::diag::Error {
    let name = program
        .relations
        .get(fact.rel as usize)
        .map_or("?", |r| r.name.as_str());
    Diagnostic::new(
        ErrorCode::BadInput,
        format!(
            "input fact {} ({}): {what}",
            k + 1,
            crate::value::fact_text(name, &fact.args)
        ),
    )
    .into()
}

/// The input facts of one load, typed by a program: what
/// [`Loader::load`](crate::store::Loader::load) returns (as
/// [`Loaded::facts`](crate::store::Loaded::facts)) and
/// [`evaluate`](crate::eval::evaluate) reads.
///
/// Stored by columns (no allocation per fact); [`get`](Self::get) and
/// [`iter`](Self::iter) give each fact in its owned form, [`InputFact`]. Evaluation
/// reads the rows as they are; given by value, its table becomes the fact base's
/// input records.
#[derive(Debug, Clone, Default)]
pub struct InputFacts {
    pub(crate) table: Table,
    pub(crate) symbols: Rodeo,
    /// Column types, per relation.
    pub(crate) types: Vec<Vec<ColumnType>>,
    /// Whether every row has its edge index and no index names two facts (a load's
    /// facts): evaluation then takes the indexes as they are.
    pub(crate) numbered: bool,
}

impl InputFacts {
    /// No facts, for the relations of `program`.
    pub fn new(program: &Program) -> InputFacts {
        InputFacts {
            table: Table::default(),
            symbols: Rodeo::new(),
            types: program
                .relations
                .iter()
                .map(|r| r.columns.iter().map(|c| c.ty).collect())
                .collect(),
            numbered: false,
        }
    }

    /// Facts given in their owned form (checked and encoded as
    /// [`evaluate`](crate::eval::evaluate) would).
    pub fn from_facts(program: &Program, facts: &[InputFact]) -> Result<InputFacts> {
        let mut out = InputFacts::new(program);
        for (k, f) in facts.iter().enumerate() {
            out.table.push_fact(program, &mut out.symbols, f, k)?;
        }
        Ok(out)
    }

    /// Append one fact in its owned form.
    pub fn push(&mut self, program: &Program, fact: &InputFact) -> Result<()> {
        let k = self.len();
        self.numbered = false;
        self.table.push_fact(program, &mut self.symbols, fact, k)
    }

    /// Number of facts.
    pub fn len(&self) -> usize {
        self.table.rows.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.table.rows.is_empty()
    }

    /// Fact `i`'s record. Panics when `i >= len()`.
    fn row(&self, i: usize) -> Row {
        self.table.rows.get(i).expect("a fact of the table")
    }

    /// Fact `i`'s relation.
    pub fn rel(&self, i: usize) -> RelId {
        self.row(i).rel
    }

    /// Fact `i`'s confidence.
    pub fn confidence(&self, i: usize) -> f64 {
        self.row(i).confidence
    }

    /// Fact `i`'s edge index (set for every fact a [`Loader`](crate::store::Loader)
    /// returns).
    pub fn edge_idx(&self, i: usize) -> Option<u64> {
        self.row(i).edge_idx
    }

    /// Fact `i`'s values.
    pub fn args(&self, i: usize) -> Vec<Value> {
        let row = self.row(i);
        let types = &self.types[row.rel as usize];
        self.table
            .cells_of(&row, types.len())
            .zip(types)
            .map(|(c, &ty)| cell::decode(c, ty, &self.symbols))
            .collect()
    }

    /// Fact `i`'s provenance (with its edge index).
    pub fn provenance(&self, i: usize) -> Provenance {
        let row = self.row(i);
        let mut p = self.table.provenances[row.provenance as usize].clone();
        p.edge_idx = row.edge_idx;
        p
    }

    /// Fact `i` in its owned form. Panics when `i >= len()`.
    pub fn get(&self, i: usize) -> InputFact {
        InputFact {
            rel: self.rel(i),
            args: self.args(i),
            confidence: self.confidence(i),
            provenance: self.provenance(i),
        }
    }

    /// Every fact in load order, in its owned form.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = InputFact> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Every fact in its owned form.
    pub fn to_vec(&self) -> Vec<InputFact> {
        self.iter().collect()
    }
}

impl<'a> IntoIterator for &'a InputFacts {
    type Item = InputFact;
    type IntoIter = Box<dyn ExactSizeIterator<Item = InputFact> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// Whether two provenance records are equal but for their edge indexes.
fn same_but_edge(a: &Provenance, b: &Provenance) -> bool {
    let Provenance {
        source,
        table,
        edge_idx: _,
        event_ts,
        member_ids,
        extra,
    } = a;
    *source == b.source
        && *table == b.table
        && *event_ts == b.event_ts
        && *member_ids == b.member_ids
        && *extra == b.extra
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One generated row after the last: relation, provenance, confidence choice,
    /// edge index (none, the next one, or another), cells per row.
    type Gen = (u32, u32, usize, u8, u64);

    const CONFIDENCES: [f64; 4] = [1.0, 0.5, -0.0, 0.0];
    const ARITY: [usize; 3] = [2, 0, 3];

    fn rows(gens: &[Gen]) -> Vec<Row> {
        let (mut start, mut last_edge) = (0usize, None::<u64>);
        gens.iter()
            .map(|&(rel, provenance, c, e, other)| {
                let rel = rel % 3;
                let edge_idx = match e % 3 {
                    0 => None,
                    1 => Some(last_edge.map_or(0, |x: u64| x.wrapping_add(1))),
                    _ => Some(other),
                };
                if edge_idx.is_some() {
                    last_edge = edge_idx;
                }
                let row = Row {
                    rel,
                    start,
                    confidence: CONFIDENCES[c % CONFIDENCES.len()],
                    provenance: provenance % 2,
                    edge_idx,
                };
                start += ARITY[rel as usize];
                row
            })
            .collect()
    }

    fn same(a: &Row, b: &Row) -> bool {
        a.rel == b.rel
            && a.start == b.start
            && a.confidence.to_bits() == b.confidence.to_bits()
            && a.provenance == b.provenance
            && a.edge_idx == b.edge_idx
    }

    fn check(table: &Rows, oracle: &[Row]) -> Result<(), TestCaseError> {
        prop_assert_eq!(table.len(), oracle.len());
        for (k, want) in oracle.iter().enumerate() {
            let got = table.get(k).unwrap();
            prop_assert!(same(&got, want), "row {}: {:?} != {:?}", k, got, want);
        }
        prop_assert!(table.get(oracle.len()).is_none());
        let all: Vec<Row> = table.iter().collect();
        prop_assert_eq!(all.len(), oracle.len());
        for (got, want) in all.iter().zip(oracle) {
            prop_assert!(same(got, want));
        }
        for from in [0, 1, oracle.len() / 2, oracle.len()] {
            let tail: Vec<Row> = table.iter_from(from).collect();
            prop_assert_eq!(tail.len(), oracle.len().saturating_sub(from));
            for (got, want) in tail.iter().zip(&oracle[from.min(oracle.len())..]) {
                prop_assert!(same(got, want));
            }
        }
        let mut counts = vec![0; 2];
        for r in oracle {
            if let Some(n) = counts.get_mut(r.rel as usize) {
                *n += 1;
            }
        }
        prop_assert_eq!(table.per_relation(2), counts);
        Ok(())
    }

    proptest! {
        #[test]
        fn rows_by_runs_are_the_rows_pushed(
            gens in proptest::collection::vec(
                (0..4u32, 0..3u32, 0..6usize, 0..6u8, any::<u64>()), 0..200),
            renumber in any::<bool>(),
        ) {
            let mut oracle = rows(&gens);
            let mut table = Rows::default();
            for r in &oracle {
                table.push(*r);
            }
            check(&table, &oracle)?;
            let mut at = 0;
            for (rows, provenance) in table.spans() {
                prop_assert_eq!(rows.start, at);
                for k in rows.clone() {
                    prop_assert_eq!(oracle[k].provenance, provenance);
                }
                at = rows.end;
            }
            prop_assert_eq!(at, oracle.len());
            // Numbering the rows without an index, from a start near the end of the
            // numbers or not.
            let start = if gens.len() % 3 == 0 { u64::MAX - 40 } else { 3 };
            let mut numbered = table.clone();
            let ok = numbered.number(Some(start));
            let mut next = Some(start);
            let mut want = oracle.clone();
            let mut out_of_numbers = false;
            for r in want.iter_mut().filter(|r| r.edge_idx.is_none()) {
                match next {
                    Some(n) => {
                        r.edge_idx = Some(n);
                        next = n.checked_add(1);
                    }
                    None => out_of_numbers = true,
                }
            }
            prop_assert_eq!(ok, !out_of_numbers);
            if ok {
                check(&numbered, &want)?;
            }
            if renumber {
                let edge = |k: usize, e: Option<u64>| e.map(|x| x ^ 1).or(Some(k as u64 + 7));
                table.set_edges(edge);
                for (k, r) in oracle.iter_mut().enumerate() {
                    r.edge_idx = edge(k, r.edge_idx);
                }
                check(&table, &oracle)?;
            }
        }
    }

    proptest! {
        #[test]
        fn cells_in_words_are_the_cells_pushed(
            ops in proptest::collection::vec((0..4u8, any::<u64>(), 0..40usize), 0..120),
        ) {
            let mut cells = Cells::default();
            let mut oracle: Vec<u64> = Vec::new();
            // Whether a cell that needs two words was ever given.
            let mut wide = false;
            for (op, x, i) in ops {
                // Mostly small cells, sometimes one that needs two words.
                let c = if x % 5 == 0 { x } else { x & 0xffff };
                wide |= c >> 32 != 0 && op != 4 && (op != 2 || !oracle.is_empty());
                match op {
                    0 | 1 => {
                        cells.push(c);
                        oracle.push(c);
                    }
                    2 if !oracle.is_empty() => {
                        let i = i % oracle.len();
                        cells.set(i, c);
                        oracle[i] = c;
                    }
                    3 => {
                        let mut other = Cells::default();
                        other.push(c);
                        other.push(c >> 1);
                        cells.append(&mut other);
                        oracle.extend([c, c >> 1]);
                        prop_assert_eq!(other.len(), 0);
                    }
                    _ => {
                        let n = i % (oracle.len() + 1);
                        cells.truncate(n);
                        oracle.truncate(n);
                    }
                }
                prop_assert_eq!(cells.len(), oracle.len());
                prop_assert_eq!(cells.wide, wide);
            }
            let all: Vec<u64> = cells.range(0, oracle.len()).collect();
            prop_assert_eq!(all, oracle);
        }
    }

    #[test]
    fn a_file_of_rows_takes_one_run_and_confidences_go_by_row_when_they_differ() {
        let mut table = Rows::default();
        for k in 0..1000 {
            table.push(Row {
                rel: 0,
                start: 2 * k,
                confidence: 1.0,
                provenance: 0,
                edge_idx: Some(k as u64 + 5),
            });
        }
        assert_eq!((table.runs.len(), table.confs.len()), (1, 0));
        table.push(Row {
            rel: 0,
            start: 2000,
            confidence: 0.5,
            provenance: 0,
            edge_idx: Some(1005),
        });
        assert_eq!((table.runs.len(), table.confs.len()), (1, 1001));
        assert_eq!(table.get(1000).unwrap().confidence, 0.5);
        assert_eq!(table.get(999).unwrap().confidence, 1.0);
        assert_eq!(table.get(999).unwrap().edge_idx, Some(1004));
    }
}
