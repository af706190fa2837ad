//! Phase 1 of loading: input records read from files, not yet typed by a program.
//!
//! Reading happens before the program is compiled, because relations the program
//! does not declare take their column types from the data ([`RawInputs::type_hints`]).
//! Records are kept by columns, per file: one flat array of cells (numbers parsed,
//! JSON strings interned, CSV/TSV fields as byte ranges of the file's text) and one
//! small record per row (its predicate, where it starts in the text, its confidence
//! and a provenance record shared by the whole file unless the row gave its own).
//! Reading a record allocates nothing of its own; positions (line, column, caret
//! snippet) are worked out only for the few records a diagnostic is shown for.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lasso::Rodeo;

use crate::check::TypeHints;
use crate::diag::{Diagnostic, Error, ErrorCode, Location, Result, SourceFile};
use crate::store::Provenance;
use crate::store::delimited::{self, Dialect};
use crate::store::json;
use crate::value::ColumnType;

/// One untyped cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RawCell {
    /// A JSON integer that fits an `i64`.
    Int(i64),
    /// A JSON integer above `i64::MAX`.
    Big(u64),
    /// Any other JSON number.
    Float(f64),
    /// A JSON string, interned in [`RawInputs::symbols`].
    Str(u32),
    /// A CSV/TSV field: a byte range of the file's cell text, typed once its
    /// column's type is known.
    Text { start: u32, len: u32 },
}

/// One record of a file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RawRecord {
    /// Index in [`RawInputs::preds`].
    pub pred: u32,
    /// First cell in [`RawFile::cells`].
    pub start: usize,
    /// Number of cells.
    pub arity: u32,
    /// Byte offset of the record (its row, object or line) in the file's text.
    pub at: usize,
    /// Byte offset of its argument list (`at` for a row array or a delimited line).
    pub args_at: usize,
    /// Already checked to be in [0, 1].
    pub confidence: f64,
    /// Its provenance record in [`RawFile::provenances`] (0: the file's).
    pub provenance: u32,
    /// The explicit edge index the record gave.
    pub edge_idx: Option<u64>,
}

/// How a file is written (which says how to find a cell's position again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// A JSON fact document.
    Json,
    /// Evidence JSONL.
    Jsonl,
    /// CSV, TSV or `.facts`.
    Delimited(Dialect),
}

/// The records of one file.
#[derive(Debug, Clone)]
pub(crate) struct RawFile {
    /// The name diagnostics and provenance use.
    pub name: Arc<str>,
    /// The file's text.
    pub text: Arc<str>,
    /// The text `RawCell::Text` ranges point into: `text` itself, or (for quoted
    /// CSV, whose fields are unescaped) a buffer of the fields.
    pub cell_text: Arc<str>,
    pub format: Format,
    pub records: Vec<RawRecord>,
    pub cells: Vec<RawCell>,
    /// Provenance records: `[0]` is the file's own, shared by its records that give
    /// none.
    pub provenances: Vec<Provenance>,
}

impl RawFile {
    /// An empty file record.
    pub fn new(name: &str, text: Arc<str>, format: Format, provenance: Provenance) -> RawFile {
        RawFile {
            name: name.into(),
            cell_text: text.clone(),
            text,
            format,
            records: Vec::new(),
            cells: Vec::new(),
            provenances: vec![provenance],
        }
    }

    /// The text of a `Text` cell.
    pub fn text_of(&self, start: u32, len: u32) -> &str {
        &self.cell_text[start as usize..(start + len) as usize]
    }

    /// The cells of a record.
    pub fn cells_of(&self, r: &RawRecord) -> &[RawCell] {
        &self.cells[r.start..r.start + r.arity as usize]
    }
}

/// The positions of one file's text, built only when a diagnostic needs them.
pub(crate) struct Positions<'a> {
    file: &'a RawFile,
    lines: Option<SourceFile>,
}

impl<'a> Positions<'a> {
    pub fn new(file: &'a RawFile) -> Positions<'a> {
        Positions { file, lines: None }
    }

    fn lines(&mut self) -> &SourceFile {
        let file = self.file;
        self.lines
            .get_or_insert_with(|| SourceFile::new(file.name.to_string(), file.text.clone()))
    }

    /// The location of byte `at`, with a caret snippet.
    pub fn at(&mut self, at: usize) -> Location {
        let name = self.file.name.clone();
        let lines = self.lines();
        let (line, col) = lines.line_col(at as u32);
        located(&name, Some(lines), line, col)
    }

    /// The location of a record.
    pub fn record(&mut self, r: &RawRecord) -> Location {
        self.at(r.at)
    }

    /// The location of argument `i` of a record (the record's when unknown).
    pub fn arg(&mut self, r: &RawRecord, i: usize) -> Location {
        let at = match self.file.format {
            Format::Json | Format::Jsonl => {
                crate::store::jsonpos::elements(&self.file.text, r.args_at)
                    .and_then(|es| es.get(i).map(|e| e.start))
            }
            Format::Delimited(d) => delimited::field_offset(&self.file.text, r.at, i, d),
        };
        self.at(at.unwrap_or(r.at))
    }
}

/// What the values of one column have shown so far (for type hints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Observed {
    NonNegative,
    Negative,
    BigUnsigned,
    Float,
    Symbol,
}

impl Observed {
    fn int(i: i64) -> Observed {
        if i < 0 {
            Observed::Negative
        } else {
            Observed::NonNegative
        }
    }

    fn of(cell: RawCell, file: &RawFile) -> Observed {
        match cell {
            RawCell::Int(i) => Observed::int(i),
            RawCell::Big(_) => Observed::BigUnsigned,
            RawCell::Float(_) => Observed::Float,
            RawCell::Str(_) => Observed::Symbol,
            RawCell::Text { start, len } => {
                let t = file.text_of(start, len).trim();
                if let Ok(i) = t.parse::<i64>() {
                    Observed::int(i)
                } else if t.parse::<u64>().is_ok() {
                    Observed::BigUnsigned
                } else if t.parse::<f64>().is_ok_and(f64::is_finite) && !t.is_empty() {
                    Observed::Float
                } else {
                    Observed::Symbol
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct ColumnEvidence {
    negative: bool,
    int: bool,
    big_unsigned: bool,
    float: bool,
    symbol: bool,
}

impl ColumnEvidence {
    fn add(&mut self, o: Observed) {
        match o {
            Observed::NonNegative => self.int = true,
            Observed::Negative => {
                self.int = true;
                self.negative = true
            }
            Observed::BigUnsigned => self.big_unsigned = true,
            Observed::Float => self.float = true,
            Observed::Symbol => self.symbol = true,
        }
    }

    /// The type every value seen fits, or `None` when they disagree (numbers and
    /// symbols mixed, or negative numbers beside ones too large for `number`).
    fn settle(self) -> Option<ColumnType> {
        let numeric = self.int || self.big_unsigned || self.float;
        if self.symbol {
            return (!numeric).then_some(ColumnType::Symbol);
        }
        if self.float {
            Some(ColumnType::Float)
        } else if self.big_unsigned {
            (!self.negative).then_some(ColumnType::Unsigned)
        } else if self.int {
            Some(ColumnType::Number)
        } else {
            None
        }
    }
}

/// Input records read from fact files and evidence, before a program types them.
///
/// Build it with the `read_*`/`add_*` methods (each all-or-nothing: a file with any
/// bad record adds nothing and returns the problems found in it), ask it for
/// [`type_hints`](Self::type_hints) to compile the program, then
/// [`resolve`](Self::resolve) it against the compiled program.
#[derive(Debug, Clone, Default)]
pub struct RawInputs {
    pub(crate) files: Vec<RawFile>,
    /// Every predicate name read, by index.
    pub(crate) preds: Vec<String>,
    pred_ids: HashMap<String, u32>,
    /// The strings of JSON cells.
    pub(crate) symbols: Rodeo,
    pub(crate) fact_dir: Option<PathBuf>,
}

impl RawInputs {
    /// No records yet.
    pub fn new() -> RawInputs {
        RawInputs::default()
    }

    /// Number of records read so far.
    pub fn len(&self) -> usize {
        self.files.iter().map(|f| f.records.len()).sum()
    }

    /// Whether nothing has been read.
    pub fn is_empty(&self) -> bool {
        self.files.iter().all(|f| f.records.is_empty())
    }

    /// The index of a predicate name (added when new).
    pub(crate) fn pred(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.pred_ids.get(name) {
            return id;
        }
        let id = self.preds.len() as u32;
        self.preds.push(name.to_string());
        self.pred_ids.insert(name.to_string(), id);
        id
    }

    /// Where `.input` relations' relative file names are looked up (Soufflé's
    /// `--fact-dir`); without it, relative to the directory of the program file that
    /// declares the `.input`.
    pub fn set_fact_dir(&mut self, dir: impl Into<PathBuf>) {
        self.fact_dir = Some(dir.into());
    }

    /// Read a fact file, or every fact file of a directory (its `*.json`, `*.csv`,
    /// `*.tsv` and `*.facts` entries, in name order; not recursive).
    ///
    /// A `.json` file holds `{"rel": [row, …], …}` where a row is an array of values
    /// or an object `{"args": […], "confidence"?, "provenance"?}`. A `<rel>.csv` file
    /// (comma-separated, RFC 4180 quoting), `<rel>.tsv` or `<rel>.facts` file
    /// (tab-separated, no quoting: Soufflé's convention) holds rows of relation
    /// `<rel>`. Nothing is added unless the whole file (or directory) is good.
    pub fn read_facts(&mut self, path: &Path) -> Result<()> {
        let meta = std::fs::metadata(path).map_err(|e| io_error(path, &e))?;
        let files = if meta.is_dir() {
            fact_files_in(path)?
        } else {
            vec![path.to_path_buf()]
        };
        let before = self.files.len();
        for file in &files {
            let text = read_text(file)?;
            let name = file.display().to_string();
            if let Err(e) = self.parse_fact_file(&name, file, text.into()) {
                self.files.truncate(before);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Read an evidence file: one JSON object per line,
    /// `{"predicate", "args", "confidence"?, "provenance"?}` (blank lines skipped).
    pub fn read_evidence(&mut self, path: &Path) -> Result<()> {
        let text = read_text(path)?;
        let name = path.display().to_string();
        let file = json::parse_evidence(self, &name, text.into())?;
        self.files.push(file);
        Ok(())
    }

    /// Add the records of a JSON fact document given as text; `name` is used in
    /// diagnostics and provenance.
    pub fn add_facts_json(&mut self, name: &str, text: &str) -> Result<()> {
        let file = json::parse_facts(self, name, text.into())?;
        self.files.push(file);
        Ok(())
    }

    /// Add the records of an evidence JSONL document given as text.
    pub fn add_evidence_jsonl(&mut self, name: &str, text: &str) -> Result<()> {
        let file = json::parse_evidence(self, name, text.into())?;
        self.files.push(file);
        Ok(())
    }

    /// Add the rows of relation `relation` from delimited text (CSV, TSV, `.facts`).
    pub fn add_delimited(
        &mut self,
        name: &str,
        relation: &str,
        text: &str,
        dialect: Dialect,
    ) -> Result<()> {
        let pred = self.pred(relation);
        let file = delimited::parse_untyped(name, pred, text.into(), dialect)?;
        self.files.push(file);
        Ok(())
    }

    /// Parse one fact file by its extension.
    fn parse_fact_file(&mut self, name: &str, path: &Path, text: Arc<str>) -> Result<()> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let dialect = match ext {
            "json" => {
                let file = json::parse_facts(self, name, text)?;
                self.files.push(file);
                return Ok(());
            }
            "csv" => Dialect::csv(),
            "tsv" | "facts" => Dialect::tsv(),
            _ => {
                return Err(Diagnostic::new(
                    ErrorCode::BadInput,
                    format!("`{name}` is not a fact file (expected .json, .csv, .tsv or .facts)"),
                )
                .with_help("evidence JSONL files go to --evidence")
                .into());
            }
        };
        let pred = self.pred(stem);
        let file = delimited::parse_untyped(name, pred, text, dialect)?;
        self.files.push(file);
        Ok(())
    }

    /// Column types the data suggests for each relation, for
    /// [`check::compile`](crate::check::compile). A relation's arity is taken from its
    /// first record (records of another arity are reported by `resolve`); a column
    /// whose values disagree (numbers beside symbols) gets `None`. Integers beside
    /// floats make a `float` column; integers above `i64::MAX` an `unsigned` one.
    pub fn type_hints(&self) -> TypeHints {
        let mut seen: Vec<Option<Vec<ColumnEvidence>>> = vec![None; self.preds.len()];
        for file in &self.files {
            for r in &file.records {
                let cols = seen[r.pred as usize]
                    .get_or_insert_with(|| vec![ColumnEvidence::default(); r.arity as usize]);
                if cols.len() != r.arity as usize {
                    continue;
                }
                for (c, &cell) in cols.iter_mut().zip(file.cells_of(r)) {
                    c.add(Observed::of(cell, file));
                }
            }
        }
        seen.into_iter()
            .enumerate()
            .filter_map(|(p, cols)| {
                let cols = cols?;
                Some((
                    self.preds[p].clone(),
                    cols.into_iter().map(ColumnEvidence::settle).collect(),
                ))
            })
            .collect()
    }

    /// Where the first record of relation `name` was read, if any was.
    pub(crate) fn first_record(&self, name: &str) -> Option<Location> {
        let pred = *self.pred_ids.get(name)?;
        for file in &self.files {
            if let Some(r) = file.records.iter().find(|r| r.pred == pred) {
                return Some(Positions::new(file).record(r));
            }
        }
        None
    }
}

/// The fact files of a directory, sorted by name.
fn fact_files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|e| io_error(dir, &e))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| io_error(dir, &e))?.path();
        let known = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "json" | "csv" | "tsv" | "facts"));
        if known && path.is_file() {
            files.push(path);
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files)
}

/// Read a whole file as UTF-8 (without a leading byte-order mark, which some
/// spreadsheet exports write).
pub(crate) fn read_text(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| io_error(path, &e))?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// An `io_error` naming the path.
pub(crate) fn io_error(path: &Path, e: &std::io::Error) -> Error {
    Diagnostic::new(
        ErrorCode::Io,
        format!("cannot read `{}`: {e}", path.display()),
    )
    .into()
}

/// Provenance of the rows of a fact file (`source` "facts", the file as its table).
pub(crate) fn file_provenance(name: &str) -> Provenance {
    Provenance {
        source: "facts".to_string(),
        table: Some(name.to_string()),
        ..Provenance::default()
    }
}

/// Provenance of a fact written in the program text: `source` "program", its file as
/// the table and its line (an extra field `line`).
pub(crate) fn program_provenance(
    program: &crate::ir::Program,
    span: crate::diag::Span,
) -> Provenance {
    let loc = ((span.file as usize) < program.sources.files().len())
        .then(|| program.sources.locate(span));
    let mut extra = std::collections::BTreeMap::new();
    extra.insert(
        "line".to_string(),
        serde_json::Value::from(loc.as_ref().map_or(0, |l| l.line)),
    );
    Provenance {
        source: "program".to_string(),
        table: Some(loc.map_or_else(String::new, |l| l.file)),
        extra,
        ..Provenance::default()
    }
}

/// A location in a data file, with a caret snippet of its line when the text is at
/// hand (long lines are cut to a window around the column).
pub(crate) fn located(
    file: &str,
    source: Option<&SourceFile>,
    line: usize,
    col: usize,
) -> Location {
    let mut loc = Location::at(file, line, col);
    let Some(src) = source else {
        return loc;
    };
    let lines = src.line_col(src.text.len() as u32).0;
    if line == 0 || line > lines || col == 0 {
        return loc;
    }
    const WINDOW: usize = 100;
    let text = src.line_text(line);
    // Only the characters up to the window's end are looked at.
    let chars: Vec<char> = text.chars().take(col + WINDOW).collect();
    let long = text.chars().nth(col + WINDOW).is_some();
    let len = chars.len();
    let start = if (len > WINDOW || long) && col > WINDOW / 2 {
        (col - WINDOW / 2).min(len.saturating_sub(WINDOW))
    } else {
        0
    };
    let end = (start + WINDOW).min(len);
    let mut shown: String = chars[start.min(end)..end].iter().collect();
    let mut caret_at = col - 1 - start.min(col - 1);
    if start > 0 {
        shown.insert(0, '…');
        caret_at += 1;
    }
    if end < len || long {
        shown.push('…');
    }
    let prefix: String = shown
        .chars()
        .take(caret_at)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let gutter = line.to_string().len();
    loc.snippet = Some(format!(
        "{:gutter$} |\n{line} | {shown}\n{:gutter$} | {prefix}^",
        "", ""
    ));
    loc
}

/// A `bad_input` diagnostic at a location.
pub(crate) fn bad_input(at: Location, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(ErrorCode::BadInput, message).at(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(json: &str) -> TypeHints {
        let mut raw = RawInputs::new();
        raw.add_facts_json("f.json", json).unwrap();
        raw.type_hints()
    }

    #[test]
    fn hints_settle_column_types() {
        let h = hints(r#"{"e": [[1, "a", 1.5, 2], [-3, "b", 2, 18446744073709551615]]}"#);
        assert_eq!(
            h["e"],
            vec![
                Some(ColumnType::Number),
                Some(ColumnType::Symbol),
                Some(ColumnType::Float),
                Some(ColumnType::Unsigned)
            ]
        );
    }

    #[test]
    fn mixed_columns_settle_nothing() {
        let h = hints(r#"{"e": [[1, -1], ["a", 18446744073709551615]], "n": [[]]}"#);
        assert_eq!(h["e"], vec![None, None]);
        assert_eq!(h["n"], Vec::<Option<ColumnType>>::new());
    }

    #[test]
    fn hints_from_delimited_text() {
        let mut raw = RawInputs::new();
        raw.add_delimited("e.csv", "e", "1,x,2.5\n2,y,3\n", Dialect::csv())
            .unwrap();
        assert_eq!(
            raw.type_hints()["e"],
            vec![
                Some(ColumnType::Number),
                Some(ColumnType::Symbol),
                Some(ColumnType::Float)
            ]
        );
    }
}

#[cfg(test)]
mod snippet_tests {
    use super::*;

    #[test]
    fn data_errors_show_the_line_with_a_caret() {
        let src = SourceFile::new("e.jsonl", "{\"a\": 1}\n{\"b\":\t2}\n");
        let loc = located("e.jsonl", Some(&src), 2, 7);
        assert_eq!(
            loc.snippet.as_deref(),
            Some("  |\n2 | {\"b\":\t2}\n  |      \t^")
        );
        assert_eq!(located("e.jsonl", Some(&src), 9, 1).snippet, None);
        assert_eq!(located("e.jsonl", None, 1, 1).snippet, None);
    }

    #[test]
    fn long_lines_are_cut_around_the_column() {
        let line = format!("{}X{}", "a".repeat(300), "b".repeat(300));
        let src = SourceFile::new("f", line.as_str());
        let snippet = located("f", Some(&src), 1, 301).snippet.unwrap();
        let lines: Vec<&str> = snippet.lines().collect();
        assert!(
            lines[1].starts_with("1 | …a") && lines[1].ends_with("b…"),
            "{snippet}"
        );
        let caret = lines[2].chars().count() - 1;
        assert_eq!(lines[1].chars().nth(caret), Some('X'), "{snippet}");
    }
}
