//! The fast path of loading: fact files and evidence read straight into typed cells.
//!
//! A file is scanned twice, and nothing is allocated per record on the way. The first
//! scan, when the file is added, checks that the file is one the fast path reads
//! (well-formed, every record plain: see below), counts its rows and records what its
//! values suggest for the column types of each relation (the data's type hints). The
//! second scan, once the program is compiled, parses each cell as its column's type
//! straight into the [`Table`] of the load: numbers in
//! place, symbols interned, one provenance record shared by the whole file.
//!
//! Either scan gives up ([`Bail`]) at the first thing it does not handle, and the
//! careful path (untyped records that remember their positions, then typing record
//! by record) reads the input instead, so every diagnostic is the careful path's. The
//! fast path only ever decides that a load is good; whatever is wrong is reported by
//! the careful path. What the fast path reads:
//!
//! - delimited text (CSV, TSV, `.facts`) without carriage returns, a byte-order mark,
//!   or (when the dialect quotes) any quote character;
//! - JSON fact documents whose rows are arrays of numbers and strings, each relation
//!   of one arity in the file;
//! - evidence lines `{"predicate", "args", "confidence"?, "provenance"?}` with each
//!   key once and a shallow provenance object.

use std::borrow::Cow;
use std::sync::Arc;

use lasso::Rodeo;

use crate::ir::RelId;
use crate::store::Provenance;
use crate::store::delimited::Dialect;
use crate::store::facts::{Row, Table};
use crate::store::raw::{ColumnEvidence, Observed};
use crate::value::{ColumnType, cell};

#[cfg(test)]
thread_local! {
    /// Tests compare the fast path with the careful path by turning it off.
    static CAREFUL_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the fast path is off (only ever in tests).
#[inline]
pub(crate) fn careful_only() -> bool {
    #[cfg(test)]
    {
        CAREFUL_ONLY.with(|c| c.get())
    }
    #[cfg(not(test))]
    {
        false
    }
}

/// The fast path does not handle this input: the careful path reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bail;

/// One cell as a scan sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok<'t> {
    /// A field of delimited text, parsed once its column type is known.
    Text(&'t str),
    /// A JSON integer that fits `i64`.
    Int(i64),
    /// A JSON integer above `i64::MAX` that fits `u64`.
    Uint(u64),
    /// Any other JSON number.
    Float(f64),
    /// A JSON string.
    Str(Cow<'t, str>),
}

impl Tok<'_> {
    /// The type this cell suggests on its own (as the careful path's `RawValue`).
    fn observed(&self) -> Observed {
        match self {
            Tok::Int(i) => Observed::int(*i),
            Tok::Uint(_) => Observed::BigUnsigned,
            Tok::Float(_) => Observed::Float,
            Tok::Str(_) => Observed::Symbol,
            Tok::Text(s) => match plain_i64(s) {
                Some(i) => Observed::int(i),
                None => Observed::of_text(s),
            },
        }
    }

    /// The cell as a value of a column of type `ty`, encoded; `None` when it is not
    /// one (exactly when the careful path's conversion fails).
    #[inline]
    fn encode(&self, ty: ColumnType, symbols: &mut Rodeo) -> Option<u64> {
        match (self, ty) {
            (Tok::Text(s), ColumnType::Symbol) => cell::intern(symbols, s),
            (Tok::Text(s), ColumnType::Number) => match plain_i64(s) {
                Some(i) => Some(i as u64),
                None => s.trim().parse::<i64>().ok().map(|i| i as u64),
            },
            (Tok::Text(s), ColumnType::Unsigned) => s.trim().parse::<u64>().ok(),
            (Tok::Text(s), ColumnType::Float) => s
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .map(f64::to_bits),
            (Tok::Str(s), ColumnType::Symbol) => cell::intern(symbols, s),
            (Tok::Str(_), _) => None,
            (Tok::Int(i), ColumnType::Number) => Some(*i as u64),
            (Tok::Int(i), ColumnType::Unsigned) => u64::try_from(*i).ok(),
            (Tok::Int(i), ColumnType::Float) => Some((*i as f64).to_bits()),
            (Tok::Uint(u), ColumnType::Unsigned) => Some(*u),
            (Tok::Uint(u), ColumnType::Float) => Some((*u as f64).to_bits()),
            (Tok::Float(x), ColumnType::Float) => Some(x.to_bits()),
            _ => None,
        }
    }
}

/// A short run of ASCII digits (what most numeric cells are) as an `i64`: the same
/// value `str::parse` gives, without its generality. `None` for anything else.
#[inline]
fn plain_i64(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.is_empty() || b.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + i64::from(d);
    }
    Some(v)
}

/// How a bulk source is written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Format {
    /// Rows of one relation in delimited text.
    Delimited { relation: String, dialect: Dialect },
    /// A JSON fact document `{"rel": [[…], …], …}`.
    Json,
    /// Evidence JSONL.
    Evidence,
}

/// What the first scan learned of one relation of a bulk source.
#[derive(Debug, Clone)]
pub(crate) struct BulkRel {
    pub name: String,
    pub arity: usize,
    /// Byte offset of its first record (for a location).
    pub first_at: usize,
    /// Number of its records.
    pub rows: usize,
    /// What its values suggest, per column.
    pub cols: Vec<ColumnEvidence>,
}

/// A file the fast path reads: its text, and what the first scan found.
#[derive(Clone)]
pub(crate) struct Bulk {
    pub name: Arc<str>,
    pub text: Box<str>,
    pub format: Format,
    /// Relations in the order their first records appear.
    pub rels: Vec<BulkRel>,
    /// Number of records.
    pub rows: usize,
}

impl std::fmt::Debug for Bulk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bulk")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("rels", &self.rels)
            .field("rows", &self.rows)
            .finish()
    }
}

impl Bulk {
    /// Scan `text` once; `None` when the fast path does not read it.
    pub fn scan(name: &str, text: &str, format: Format) -> Option<Bulk> {
        let hints = Bulk::hints(text, &format)?;
        Some(Bulk::new(name, text.into(), format, hints))
    }

    /// [`Bulk::scan`] of a text it keeps as it is (a file's, read for it), without a
    /// copy; the text back when the fast path does not read it.
    pub fn scan_owned(name: &str, text: String, format: Format) -> Result<Bulk, String> {
        match Bulk::hints(&text, &format) {
            Some(hints) => Ok(Bulk::new(name, text.into_boxed_str(), format, hints)),
            None => Err(text),
        }
    }

    /// The first scan of `text`; `None` when the fast path does not read it.
    fn hints(text: &str, format: &Format) -> Option<Hints> {
        if careful_only() {
            return None;
        }
        let mut hints = Hints::default();
        scan(text, format, &mut hints).ok()?;
        Some(hints)
    }

    fn new(name: &str, text: Box<str>, format: Format, hints: Hints) -> Bulk {
        Bulk {
            name: name.into(),
            text,
            format,
            rels: hints.rels,
            rows: hints.rows,
        }
    }

    /// Append the records to `table`, typed by `types` (per relation id; `ids` finds
    /// a relation by name). `file` is the provenance index shared by rows that carry
    /// none of their own (the file's for fact files, `"hyperedge"` for evidence). `Err` when a record does not fit: the table is then left
    /// with some of the rows, for the caller to discard.
    pub fn encode(
        &self,
        ids: &dyn Fn(&str) -> Option<RelId>,
        types: &[Vec<ColumnType>],
        table: &mut Table,
        symbols: &mut Rodeo,
        file: u32,
    ) -> Result<(), Bail> {
        let mut sink = Encoder {
            ids,
            types,
            table,
            symbols,
            file,
            rel: None,
            name: String::new(),
            last_own: None,
        };
        scan(&self.text, &self.format, &mut sink)
    }
}

/// A record's confidence and, when it gave one, its provenance.
pub(crate) struct Record {
    confidence: f64,
    provenance: Option<Provenance>,
}

const PLAIN: Record = Record {
    confidence: 1.0,
    provenance: None,
};

/// What a scan feeds.
trait Sink<'t> {
    /// The records that follow are of relation `name`.
    fn relation(&mut self, name: &str) -> Result<(), Bail>;
    /// One record of the current relation, starting at byte `at`.
    fn row(&mut self, at: usize, cells: &[Tok<'t>], record: Record) -> Result<(), Bail>;
}

/// The first scan: relations, arities, rows and type evidence.
#[derive(Default)]
struct Hints {
    rels: Vec<BulkRel>,
    rows: usize,
    /// The current relation: its name, and its index in `rels` once it has a row.
    name: String,
    at: Option<usize>,
}

impl<'t> Sink<'t> for Hints {
    fn relation(&mut self, name: &str) -> Result<(), Bail> {
        if self.name != name {
            self.name.clear();
            self.name.push_str(name);
            self.at = self.rels.iter().position(|r| r.name == name);
        }
        Ok(())
    }

    fn row(&mut self, at: usize, cells: &[Tok<'t>], _: Record) -> Result<(), Bail> {
        let i = match self.at {
            Some(i) => i,
            None => {
                self.rels.push(BulkRel {
                    name: self.name.clone(),
                    arity: cells.len(),
                    first_at: at,
                    rows: 0,
                    cols: vec![ColumnEvidence::default(); cells.len()],
                });
                self.at = Some(self.rels.len() - 1);
                self.rels.len() - 1
            }
        };
        let rel = &mut self.rels[i];
        if rel.arity != cells.len() {
            return Err(Bail);
        }
        for (c, t) in rel.cols.iter_mut().zip(cells) {
            c.add(t.observed());
        }
        rel.rows += 1;
        self.rows += 1;
        Ok(())
    }
}

/// The second scan: typed cells into the table.
struct Encoder<'a> {
    ids: &'a dyn Fn(&str) -> Option<RelId>,
    types: &'a [Vec<ColumnType>],
    table: &'a mut Table,
    symbols: &'a mut Rodeo,
    file: u32,
    /// The current relation, and its name (one buffer, reused).
    rel: Option<RelId>,
    name: String,
    /// The last provenance record a row gave, to share it with the next rows that
    /// give the same.
    last_own: Option<u32>,
}

impl<'t> Sink<'t> for Encoder<'_> {
    fn relation(&mut self, name: &str) -> Result<(), Bail> {
        if self.rel.is_some() && self.name == name {
            return Ok(());
        }
        self.rel = Some((self.ids)(name).ok_or(Bail)?);
        self.name.clear();
        self.name.push_str(name);
        Ok(())
    }

    fn row(&mut self, _: usize, cells: &[Tok<'t>], record: Record) -> Result<(), Bail> {
        let rel = self.rel.ok_or(Bail)?;
        let types = self.types.get(rel as usize).ok_or(Bail)?;
        if types.len() != cells.len() {
            return Err(Bail);
        }
        let start = self.table.cells.len();
        for (t, &ty) in cells.iter().zip(types) {
            let c = t.encode(ty, self.symbols).ok_or(Bail)?;
            self.table.cells.push(c);
        }
        let (provenance, edge_idx) = match record.provenance {
            None => (self.file, None),
            Some(mut p) => {
                let edge_idx = p.edge_idx.take();
                let same = self
                    .last_own
                    .is_some_and(|i| self.table.provenances[i as usize] == p);
                if !same {
                    self.last_own = Some(self.table.provenance(p));
                }
                (self.last_own.unwrap_or(self.file), edge_idx)
            }
        };
        self.table.rows.push(Row {
            rel,
            start,
            confidence: record.confidence,
            provenance,
            edge_idx,
        });
        Ok(())
    }
}

fn scan<'t, S: Sink<'t>>(text: &'t str, format: &Format, sink: &mut S) -> Result<(), Bail> {
    match format {
        Format::Delimited { relation, dialect } => delimited(text, relation, *dialect, sink),
        Format::Json => Parser::new(text).document(sink),
        Format::Evidence => evidence(text, sink),
    }
}

/// Delimited text: one record per non-empty line, fields split at the delimiter.
fn delimited<'t, S: Sink<'t>>(
    text: &'t str,
    relation: &str,
    d: Dialect,
    sink: &mut S,
) -> Result<(), Bail> {
    let b = text.as_bytes();
    let sep = d.delimiter;
    if !sep.is_ascii()
        || matches!(sep, b'\n' | b'\r' | b'"')
        || text.starts_with('\u{feff}')
        || b.contains(&b'\r')
        || (d.quoting && b.contains(&b'"'))
    {
        return Err(Bail);
    }
    sink.relation(relation)?;
    let mut header = d.headers;
    let mut cells: Vec<Tok<'t>> = Vec::new();
    // One pass over the bytes: fields end at the delimiter, records at a line feed
    // (both ASCII, so every slice is on a character boundary).
    let n = b.len();
    let mut pos = 0;
    while pos < n {
        let at = pos;
        let mut field = pos;
        let mut i = pos;
        cells.clear();
        while i < n {
            let c = b[i];
            if c == b'\n' {
                break;
            }
            if c == sep {
                cells.push(Tok::Text(&text[field..i]));
                field = i + 1;
            }
            i += 1;
        }
        pos = i + 1;
        if i == at {
            continue;
        }
        if header {
            header = false;
            continue;
        }
        cells.push(Tok::Text(&text[field..i]));
        sink.row(at, &cells, PLAIN)?;
    }
    Ok(())
}

/// Evidence JSONL: each non-blank line one record object.
fn evidence<'t, S: Sink<'t>>(text: &'t str, sink: &mut S) -> Result<(), Bail> {
    let mut cells: Vec<Tok<'t>> = Vec::new();
    let mut line_start = 0usize;
    for line in text.split_inclusive('\n') {
        let base = line_start;
        line_start += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        if body.trim().is_empty() {
            continue;
        }
        let mut p = Parser::new(&text[..base + body.len()]);
        p.i = base;
        p.ws();
        let at = p.i;
        cells.clear();
        let (predicate, record) = p.evidence_record(&mut cells)?;
        p.ws();
        if p.i != p.b.len() {
            return Err(Bail);
        }
        sink.relation(&predicate)?;
        sink.row(at, &cells, record)?;
    }
    Ok(())
}

/// A JSON reader for the shapes the fast path takes.
struct Parser<'t> {
    t: &'t str,
    b: &'t [u8],
    i: usize,
}

impl<'t> Parser<'t> {
    fn new(t: &'t str) -> Parser<'t> {
        Parser {
            t,
            b: t.as_bytes(),
            i: 0,
        }
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    fn eat(&mut self, c: u8) -> Result<(), Bail> {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(Bail)
        }
    }

    /// After a value: `,` (true: another follows) or `close` (false).
    #[inline]
    fn next_or(&mut self, close: u8) -> Result<bool, Bail> {
        self.ws();
        match self.peek() {
            Some(b',') => {
                self.i += 1;
                Ok(true)
            }
            Some(c) if c == close => {
                self.i += 1;
                Ok(false)
            }
            _ => Err(Bail),
        }
    }

    /// An empty container closing with `close` right away (consumed).
    #[inline]
    fn empty(&mut self, close: u8) -> bool {
        self.ws();
        if self.peek() == Some(close) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn string(&mut self) -> Result<Cow<'t, str>, Bail> {
        self.ws();
        if self.peek() != Some(b'"') {
            return Err(Bail);
        }
        let start = self.i;
        self.i += 1;
        let mut plain = true;
        loop {
            match *self.b.get(self.i).ok_or(Bail)? {
                b'"' => break,
                b'\\' => {
                    plain = false;
                    self.i += 2;
                }
                0..=0x1f => return Err(Bail),
                _ => self.i += 1,
            }
        }
        let end = self.i;
        self.i += 1;
        if plain {
            Ok(Cow::Borrowed(&self.t[start + 1..end]))
        } else {
            serde_json::from_str::<String>(&self.t[start..=end])
                .map(Cow::Owned)
                .map_err(|_| Bail)
        }
    }

    fn number(&mut self) -> Result<Tok<'t>, Bail> {
        let start = self.i;
        let neg = self.peek() == Some(b'-');
        if neg {
            self.i += 1;
        }
        let digits = self.i;
        let mut v: u64 = 0;
        let mut overflow = false;
        while let Some(&c) = self.b.get(self.i) {
            if !c.is_ascii_digit() {
                break;
            }
            match v
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(c - b'0')))
            {
                Some(x) => v = x,
                None => overflow = true,
            }
            self.i += 1;
        }
        let n = self.i - digits;
        let simple = n > 0
            && !overflow
            && (n == 1 || self.b[digits] != b'0')
            && !matches!(self.peek(), Some(b'.' | b'e' | b'E'));
        if simple {
            if !neg {
                return Ok(match i64::try_from(v) {
                    Ok(i) => Tok::Int(i),
                    Err(_) => Tok::Uint(v),
                });
            }
            if (1..=1u64 << 63).contains(&v) {
                return Ok(Tok::Int((v as i64).wrapping_neg()));
            }
        }
        while let Some(b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') = self.peek() {
            self.i += 1;
        }
        let n: serde_json::Number =
            serde_json::from_str(&self.t[start..self.i]).map_err(|_| Bail)?;
        Ok(if let Some(i) = n.as_i64() {
            Tok::Int(i)
        } else if let Some(u) = n.as_u64() {
            Tok::Uint(u)
        } else {
            Tok::Float(n.as_f64().ok_or(Bail)?)
        })
    }

    /// A number or a string.
    #[inline]
    fn scalar(&mut self) -> Result<Tok<'t>, Bail> {
        self.ws();
        match self.peek() {
            Some(b'"') => Ok(Tok::Str(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(Bail),
        }
    }

    /// `[scalar, …]` into `cells`.
    fn cells(&mut self, cells: &mut Vec<Tok<'t>>) -> Result<(), Bail> {
        self.eat(b'[')?;
        if self.empty(b']') {
            return Ok(());
        }
        loop {
            cells.push(self.scalar()?);
            if !self.next_or(b']')? {
                return Ok(());
            }
        }
    }

    /// A whole fact document.
    fn document<S: Sink<'t>>(&mut self, sink: &mut S) -> Result<(), Bail> {
        let mut cells: Vec<Tok<'t>> = Vec::new();
        self.eat(b'{')?;
        if !self.empty(b'}') {
            loop {
                let key = self.string()?;
                self.eat(b':')?;
                sink.relation(&key)?;
                self.eat(b'[')?;
                if !self.empty(b']') {
                    loop {
                        self.ws();
                        let at = self.i;
                        cells.clear();
                        self.cells(&mut cells)?;
                        sink.row(at, &cells, PLAIN)?;
                        if !self.next_or(b']')? {
                            break;
                        }
                    }
                }
                if !self.next_or(b'}')? {
                    break;
                }
            }
        }
        self.ws();
        if self.i == self.b.len() {
            Ok(())
        } else {
            Err(Bail)
        }
    }

    /// An evidence record object: its predicate and record; its cells into `cells`.
    fn evidence_record(
        &mut self,
        cells: &mut Vec<Tok<'t>>,
    ) -> Result<(Cow<'t, str>, Record), Bail> {
        let mut predicate = None;
        let mut args = false;
        let mut confidence = None;
        let mut provenance = None;
        self.eat(b'{')?;
        if self.empty(b'}') {
            return Err(Bail);
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            match &*key {
                "predicate" if predicate.is_none() => {
                    let p = self.string()?;
                    if p.is_empty() {
                        return Err(Bail);
                    }
                    predicate = Some(p);
                }
                "args" if !args => {
                    self.cells(cells)?;
                    args = true;
                }
                "confidence" if confidence.is_none() => {
                    self.ws();
                    let x = match self.number()? {
                        Tok::Int(i) => i as f64,
                        Tok::Uint(u) => u as f64,
                        Tok::Float(x) => x,
                        _ => return Err(Bail),
                    };
                    if !(0.0..=1.0).contains(&x) {
                        return Err(Bail);
                    }
                    confidence = Some(x);
                }
                "provenance" if provenance.is_none() => {
                    self.ws();
                    let start = self.i;
                    self.skip(0)?;
                    let map: serde_json::Map<String, serde_json::Value> =
                        serde_json::from_str(&self.t[start..self.i]).map_err(|_| Bail)?;
                    provenance =
                        Some(crate::store::json::provenance(&map, "hyperedge").map_err(|_| Bail)?);
                }
                _ => return Err(Bail),
            }
            if !self.next_or(b'}')? {
                break;
            }
        }
        let (Some(predicate), true) = (predicate, args) else {
            return Err(Bail);
        };
        Ok((
            predicate,
            Record {
                confidence: confidence.unwrap_or(1.0),
                provenance,
            },
        ))
    }

    /// Skip one JSON value nested at most a few levels (its syntax is checked by
    /// whoever reads it).
    fn skip(&mut self, depth: usize) -> Result<(), Bail> {
        if depth > 8 {
            return Err(Bail);
        }
        self.ws();
        match self.peek().ok_or(Bail)? {
            b'"' => {
                self.string()?;
            }
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.i += 1;
                if !self.empty(close) {
                    loop {
                        if open == b'{' {
                            self.string()?;
                            self.eat(b':')?;
                        }
                        self.skip(depth + 1)?;
                        if !self.next_or(close)? {
                            break;
                        }
                    }
                }
            }
            _ => {
                while let Some(b'0'..=b'9' | b'a'..=b'z' | b'.' | b'+' | b'-' | b'E') = self.peek()
                {
                    self.i += 1;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::store::Loader;

    /// What a load gives: its facts and warnings, or its diagnostics.
    fn outcome(program: &str, files: &[(u8, String)], careful: bool) -> String {
        CAREFUL_ONLY.with(|c| c.set(careful));
        let mut loader = Loader::new();
        loader.program_text("p.dl", program);
        let mut added = Vec::new();
        for (i, (kind, text)) in files.iter().enumerate() {
            let r = match kind % 5 {
                0 => loader.facts_json(&format!("f{i}.json"), text).map(|_| ()),
                1 => loader
                    .evidence_jsonl(&format!("e{i}.jsonl"), text)
                    .map(|_| ()),
                2 => loader
                    .inputs
                    .add_delimited(&format!("e{i}.tsv"), "e", text, Dialect::tsv()),
                3 => loader
                    .inputs
                    .add_delimited(&format!("e{i}.csv"), "e", text, Dialect::csv()),
                _ => loader.inputs.add_delimited(
                    &format!("f{i}.csv"),
                    "f",
                    text,
                    Dialect {
                        headers: true,
                        ..Dialect::csv()
                    },
                ),
            };
            added.push(format!("{r:?}"));
        }
        let hints = format!("{:?}", loader.inputs.type_hints());
        let len = loader.inputs.len();
        let result = match loader.load() {
            Ok(l) => format!("{:?}\n{:?}", l.facts.to_vec(), l.warnings),
            Err(e) => format!("{:?}", e.diagnostics),
        };
        CAREFUL_ONLY.with(|c| c.set(false));
        format!("{added:?}\n{hints}\n{len}\n{result}")
    }

    fn pick(pool: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
        proptest::sample::select(pool)
    }

    const JSON_VALUES: &[&str] = &[
        "0",
        "1",
        "-1",
        "7",
        "2.5",
        "1e2",
        "-0",
        "1.0",
        "18446744073709551615",
        "99999999999999999999",
        "-9223372036854775808",
        "\"x\"",
        "\"a b\"",
        "\"a\\\"b\"",
        "\"\\u00e9\"",
        "\"é\"",
        "\"\"",
        "true",
        "null",
        "[1]",
        "01",
        "1.",
        "-",
    ];
    const GOOD_JSON_VALUES: &[&str] = &["0", "1", "-1", "7", "3", "2.5", "\"x\"", "\"é\""];
    const GOOD_TEXT_VALUES: &[&str] = &["0", "1", "-5", "42", "2.5", "x", "a b"];
    const TEXT_VALUES: &[&str] = &[
        "0",
        "1",
        "-5",
        "42",
        " 7",
        "x",
        "a b",
        "1.5",
        "",
        "18446744073709551615",
        "-0",
        "+3",
        "\"q\"",
        "é",
        "inf",
        "1e400",
        "\"a,b\"",
    ];
    const PROVENANCE: &[&str] = &[
        "{}",
        "{\"edge_idx\": 1}",
        "{\"edge_idx\": 2, \"table\": \"T\"}",
        "{\"edge_idx\": 1, \"source\": \"s\"}",
        "{\"edge_idx\": -1}",
        "{\"event_ts\": 5, \"x\": [1, {\"y\": 2}]}",
        "{\"member_ids\": [1, \"a\"], \"edge_idx\": null}",
        "3",
        "{\"table\": 4}",
    ];
    const PROGRAMS: &[&str] = &[
        ".decl e(a: number, b: number)\n.decl f(a: symbol)\n.decl g(a: float, b: unsigned)\n",
        "out(x) :- e(x, _).\n",
        ".decl e(a: symbol, b: float)\nout(x) :- f(x).\n",
        "",
    ];

    fn values(
        good: bool,
        all: &'static [&'static str],
        fine: &'static [&'static str],
    ) -> &'static [&'static str] {
        if good { fine } else { all }
    }

    fn json_row(good: bool) -> impl Strategy<Value = String> {
        let pool = values(good, JSON_VALUES, GOOD_JSON_VALUES);
        let odd = if good { 0 } else { 1 };
        prop_oneof![
            8 => proptest::collection::vec(pick(pool), 0..4)
                .prop_map(|v| format!("[{}]", v.join(", "))),
            odd => proptest::collection::vec(pick(pool), 0..3)
                .prop_map(|v| format!("{{\"args\": [{}]}}", v.join(","))),
            odd => Just("7".to_string()),
        ]
    }

    fn json_doc(good: bool) -> impl Strategy<Value = String> {
        let member = (
            pick(&["e", "f", "g", "h", "e\\u0020"]),
            proptest::collection::vec(json_row(good), 0..4),
        );
        let tails: &'static [&'static str] = if good {
            &["", " \n"]
        } else {
            &["", " ", "\n", "x"]
        };
        (proptest::collection::vec(member, 0..4), pick(tails)).prop_map(|(ms, tail)| {
            let body: Vec<String> = ms
                .into_iter()
                .map(|(k, rows)| format!("\"{k}\": [{}]", rows.join(",\n ")))
                .collect();
            format!("{{{}}}{tail}", body.join(", "))
        })
    }

    fn evidence_line(good: bool) -> impl Strategy<Value = String> {
        let args =
            proptest::collection::vec(pick(values(good, JSON_VALUES, GOOD_JSON_VALUES)), 0..4)
                .prop_map(|v| format!("\"args\": [{}]", v.join(", ")));
        let pred = pick(values(
            good,
            &["\"e\"", "\"f\"", "\"g\"", "\"nope\"", "3", "\"\""],
            &["\"e\"", "\"f\"", "\"g\""],
        ))
        .prop_map(|p| format!("\"predicate\": {p}"));
        let conf = pick(values(
            good,
            &["0.5", "1", "0", "2", "\"x\"", "-0", "null"],
            &["0.5", "1", "0", "-0"],
        ))
        .prop_map(|c| format!("\"confidence\": {c}"));
        let prov = pick(values(good, PROVENANCE, &PROVENANCE[..4]))
            .prop_map(|p| format!("\"provenance\": {p}"));
        let orders = if good { 0..4usize } else { 0..6usize };
        let tails: &'static [&'static str] = if good {
            &["", " ", "\r"]
        } else {
            &["", " ", "\r", "x"]
        };
        (
            pred,
            args,
            proptest::option::of(conf),
            proptest::option::of(prov),
            orders,
            pick(tails),
        )
            .prop_map(|(p, a, c, v, order, tail)| {
                let mut keys = vec![p, a];
                keys.extend(c);
                keys.extend(v);
                let n = keys.len();
                keys.rotate_left(order % n);
                if order == 5 {
                    let first = keys[0].clone();
                    keys.push(first);
                }
                if order == 4 {
                    keys.pop();
                }
                format!("{{{}}}{tail}", keys.join(", "))
            })
    }

    fn evidence_doc(good: bool) -> impl Strategy<Value = String> {
        let odd = if good { 0 } else { 1 };
        proptest::collection::vec(
            prop_oneof![8 => evidence_line(good), 1 => Just(String::new()), odd => Just("[1]".to_string())],
            0..5,
        )
        .prop_map(|lines| lines.join("\n"))
    }

    fn delimited_doc(good: bool) -> impl Strategy<Value = String> {
        let row =
            proptest::collection::vec(pick(values(good, TEXT_VALUES, GOOD_TEXT_VALUES)), 1..4);
        (
            proptest::collection::vec(row, 0..5),
            pick(&["\t", ","]),
            pick(&["\n", "\r\n", "\n\n"]),
            any::<bool>(),
        )
            .prop_map(|(rows, sep, nl, last)| {
                let mut s: String = rows
                    .iter()
                    .map(|r| r.join(sep))
                    .collect::<Vec<_>>()
                    .join(nl);
                if last {
                    s.push('\n');
                }
                s
            })
    }

    fn file() -> impl Strategy<Value = (u8, String)> {
        (0..5u8, any::<bool>()).prop_flat_map(|(k, good)| {
            let doc = match k {
                0 => json_doc(good).boxed(),
                1 => evidence_doc(good).boxed(),
                _ => delimited_doc(good).boxed(),
            };
            doc.prop_map(move |d| (k, d))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// The fast path decides nothing the careful path would not: the same facts,
        /// warnings, type hints and diagnostics, for good inputs and bad.
        #[test]
        fn the_fast_path_agrees_with_the_careful_path(
            program in pick(PROGRAMS),
            files in proptest::collection::vec(file(), 1..4),
        ) {
            let fast = outcome(program, &files, false);
            let careful = outcome(program, &files, true);
            prop_assert_eq!(fast, careful);
        }
    }

    #[test]
    fn plain_files_take_the_fast_path() {
        let tsv = Bulk::scan(
            "e.facts",
            "1\t2\n\n3\t4\n",
            Format::Delimited {
                relation: "e".into(),
                dialect: Dialect::tsv(),
            },
        )
        .unwrap();
        assert_eq!((tsv.rows, tsv.rels[0].arity), (2, 2));
        let json = Bulk::scan(
            "f.json",
            "{\"e\": [[1, \"a\"], [2, \"b\"]], \"f\": []}",
            Format::Json,
        )
        .unwrap();
        assert_eq!((json.rows, json.rels.len()), (2, 1));
        let ev = "{\"predicate\": \"e\", \"args\": [1], \"provenance\": {\"edge_idx\": 3}}\n";
        assert_eq!(Bulk::scan("e.jsonl", ev, Format::Evidence).unwrap().rows, 1);
        // Anything unusual goes the careful way.
        for (text, format) in [
            ("{\"e\": [{\"args\": [1]}]}", Format::Json),
            ("{\"e\": [[true]]}", Format::Json),
            (
                "{\"predicate\": \"e\", \"predicate\": \"f\", \"args\": []}",
                Format::Evidence,
            ),
        ] {
            assert!(Bulk::scan("x", text, format).is_none(), "{text}");
        }
        let quoted = Format::Delimited {
            relation: "e".into(),
            dialect: Dialect::csv(),
        };
        assert!(Bulk::scan("e.csv", "1,\"a\"\n", quoted).is_none());
    }

    #[test]
    fn numbers_are_read_as_serde_json_reads_them() {
        for text in [
            "0",
            "-0",
            "12",
            "-12",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "18446744073709551616",
            "1.5",
            "1e3",
            "-1E-3",
            "0.1",
        ] {
            let mut p = Parser::new(text);
            let tok = p.number().unwrap();
            let n: serde_json::Number = serde_json::from_str(text).unwrap();
            let expected = if let Some(i) = n.as_i64() {
                Tok::Int(i)
            } else if let Some(u) = n.as_u64() {
                Tok::Uint(u)
            } else {
                Tok::Float(n.as_f64().unwrap())
            };
            assert_eq!(tok, expected, "{text}");
            if let (Tok::Float(a), Tok::Float(b)) = (&tok, &expected) {
                assert_eq!(a.to_bits(), b.to_bits(), "{text}");
            }
        }
    }
}
