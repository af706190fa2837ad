//! Typed input facts by columns: what a load produces and evaluation consumes.
//!
//! Every fact is a row of raw cells (the evaluator's encoding: see
//! `value::cell`) in one flat array, with its relation, confidence, edge index and
//! the index of a provenance record shared by every fact of the same file (a record
//! of its own only when the input gave one). Symbols are interned once, in the
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

/// Input facts as rows of encoded cells; the symbols are keys of an interner kept
/// beside the table (the facts' own, or a fact base's).
#[derive(Debug, Clone, Default)]
pub(crate) struct Table {
    pub rows: Vec<Row>,
    pub cells: Vec<u64>,
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

    /// Row `row`'s cells, for a relation of `arity` columns.
    pub fn cells_of(&self, row: &Row, arity: usize) -> &[u64] {
        &self.cells[row.start..row.start + arity]
    }

    /// Append the rows of `other` (their cells and provenance records moved after
    /// this table's).
    pub fn append(&mut self, other: &mut Table) {
        let (cells, provenances) = (self.cells.len(), self.provenances.len() as u32);
        self.rows.extend(other.rows.drain(..).map(|r| Row {
            start: r.start + cells,
            provenance: r.provenance + provenances,
            ..r
        }));
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
        self.rows.capacity() * std::mem::size_of::<Row>()
            + self.cells.capacity() * std::mem::size_of::<u64>()
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

/// The input facts of one load, typed by a program: what [`Loader::load`] returns and
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

    /// Fact `i`'s relation.
    pub fn rel(&self, i: usize) -> RelId {
        self.table.rows[i].rel
    }

    /// Fact `i`'s confidence.
    pub fn confidence(&self, i: usize) -> f64 {
        self.table.rows[i].confidence
    }

    /// Fact `i`'s edge index (set for every fact a [`Loader`](crate::store::Loader)
    /// returns).
    pub fn edge_idx(&self, i: usize) -> Option<u64> {
        self.table.rows[i].edge_idx
    }

    /// Fact `i`'s values.
    pub fn args(&self, i: usize) -> Vec<Value> {
        let row = self.table.rows[i];
        let types = &self.types[row.rel as usize];
        self.table.cells[row.start..row.start + types.len()]
            .iter()
            .zip(types)
            .map(|(&c, &ty)| cell::decode(c, ty, &self.symbols))
            .collect()
    }

    /// Fact `i`'s provenance (with its edge index).
    pub fn provenance(&self, i: usize) -> Provenance {
        let row = self.table.rows[i];
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
