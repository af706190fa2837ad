//! Phase 1 of loading: input records read from files, not yet typed by a program.
//!
//! Reading happens before the program is compiled, because relations the program
//! does not declare take their column types from the data ([`RawInputs::type_hints`]).
//! Each record keeps the file, line and columns it came from, so that phase 2
//! ([`RawInputs::resolve`]) can point at the offending cell.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::check::TypeHints;
use crate::diag::{Diagnostic, Error, ErrorCode, Location, Result, SourceFile};
use crate::store::Provenance;
use crate::store::bulk::{Bulk, Format};
use crate::store::delimited::{self, Dialect};
use crate::store::json;
use crate::value::ColumnType;

/// Where a record came from: file, line, and the column of each of its parts.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    /// The file name as given.
    pub file: Arc<str>,
    /// The file's text, shared by its records, for caret snippets in diagnostics.
    pub source: Option<Arc<SourceFile>>,
    /// 1-based line of the record.
    pub line: usize,
    /// 1-based column of the record (its predicate, or its row).
    pub col: usize,
    /// 1-based column of each argument (same length as the record's args, or empty
    /// when unknown).
    pub arg_cols: Vec<usize>,
    /// Byte offset of the record's JSON object in `source`, when it is one, so that a
    /// diagnostic can point at one of its members (found only when needed).
    pub object_at: Option<usize>,
}

impl Origin {
    /// The location of the record. Like the others below, without its caret snippet,
    /// which [`with_snippet`](Self::with_snippet) adds (only to the diagnostics shown).
    pub fn location(&self) -> Location {
        Location::at(&*self.file, self.line, self.col)
    }

    /// `loc` (one of this record's locations) with its caret snippet.
    pub fn with_snippet(&self, loc: &Location) -> Location {
        located(&loc.file, self.source.as_deref(), loc.line, loc.col)
    }

    /// The location of the value at `path` inside the record's JSON object
    /// (`["provenance", "edge_idx"]`), or the record's when there is none.
    pub fn member_location(&self, path: &[&str]) -> Location {
        let found = self
            .source
            .as_deref()
            .zip(self.object_at)
            .and_then(|(src, at)| {
                let mut at = at;
                for key in path {
                    at = crate::store::jsonpos::member(&src.text, at, key)?;
                }
                Some((src, at))
            });
        match found {
            Some((src, at)) => {
                let (line, col) = src.line_col(at as u32);
                Location::at(&*self.file, line, col)
            }
            None => self.location(),
        }
    }

    /// The location of argument `i` (the record's when unknown).
    pub fn arg_location(&self, i: usize) -> Location {
        let col = self.arg_cols.get(i).copied().unwrap_or(self.col);
        Location::at(&*self.file, self.line, col)
    }
}

/// One untyped cell.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawValue {
    /// A JSON scalar (number or string) from a JSON fact file or evidence line.
    Json(serde_json::Value),
    /// A cell of a CSV/TSV file, parsed once its column type is known.
    Text(String),
}

impl RawValue {
    /// The type this value suggests on its own.
    fn observed(&self) -> Observed {
        match self {
            RawValue::Json(serde_json::Value::Number(n)) => {
                if let Some(i) = n.as_i64() {
                    Observed::int(i)
                } else if n.is_u64() {
                    Observed::BigUnsigned
                } else {
                    Observed::Float
                }
            }
            RawValue::Json(_) => Observed::Symbol,
            RawValue::Text(s) => Observed::of_text(s),
        }
    }
}

/// One input record before typing.
#[derive(Debug, Clone)]
pub(crate) struct RawFact {
    /// The relation's name.
    pub predicate: String,
    /// Its cells.
    pub args: Vec<RawValue>,
    /// Already checked to be in [0, 1].
    pub confidence: f64,
    /// `edge_idx` is `Some` only when the record gave one.
    pub provenance: Provenance,
    /// Where it was read.
    pub origin: Origin,
}

/// What the values of one column have shown so far (for type hints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Observed {
    NonNegative,
    Negative,
    BigUnsigned,
    Float,
    Symbol,
}

impl Observed {
    pub(crate) fn int(i: i64) -> Observed {
        if i < 0 {
            Observed::Negative
        } else {
            Observed::NonNegative
        }
    }

    /// What a cell of delimited text suggests.
    pub(crate) fn of_text(s: &str) -> Observed {
        let t = s.trim();
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

/// What the values of one column have shown so far.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ColumnEvidence {
    negative: bool,
    int: bool,
    big_unsigned: bool,
    float: bool,
    symbol: bool,
}

impl ColumnEvidence {
    /// Both columns' evidence together.
    fn merge(&mut self, o: &ColumnEvidence) {
        self.negative |= o.negative;
        self.int |= o.int;
        self.big_unsigned |= o.big_unsigned;
        self.float |= o.float;
        self.symbol |= o.symbol;
    }

    pub(crate) fn add(&mut self, o: Observed) {
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
/// bad record adds nothing and returns every problem found in it), ask it for
/// [`type_hints`](Self::type_hints) to compile the program, then
/// [`resolve`](Self::resolve) it against the compiled program.
///
/// A file the fast path reads (see `store::bulk`) is kept as its text and what one
/// scan found in it, and typed straight into columns by `resolve`; any other is kept
/// as records that remember their positions.
#[derive(Debug, Clone)]
pub struct RawInputs {
    /// The inputs in the order they were added.
    pub(crate) sources: Vec<Source>,
    pub(crate) fact_dir: Option<PathBuf>,
    /// Bytes that files read by this (and `.input` files read by `resolve`) may
    /// still take.
    pub(crate) input_left: u64,
    /// The limit `input_left` started from.
    pub(crate) max_input: u64,
}

/// One input of a load: a file for the fast path, or records read carefully.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    Bulk(Box<Bulk>),
    Records(Vec<RawFact>),
}

impl Source {
    /// Read `text` as `format`: by the fast path when it can, else carefully
    /// (all-or-nothing).
    pub(crate) fn read(name: &str, text: &str, format: Format) -> Result<Source> {
        if let Some(b) = Bulk::scan(name, text, format.clone()) {
            return Ok(Source::Bulk(Box::new(b)));
        }
        Source::read_carefully(name, text, format)
    }

    /// [`Source::read`] of a text read for it (a file's), kept without a copy by the
    /// fast path.
    pub(crate) fn read_owned(name: &str, text: String, format: Format) -> Result<Source> {
        match Bulk::scan_owned(name, text, format.clone()) {
            Ok(b) => Ok(Source::Bulk(Box::new(b))),
            Err(text) => Source::read_carefully(name, &text, format),
        }
    }

    /// `text` read by the careful path.
    fn read_carefully(name: &str, text: &str, format: Format) -> Result<Source> {
        let records = match format {
            Format::Delimited { relation, dialect } => {
                delimited::parse_untyped(name, &relation, text, dialect)?
            }
            Format::Json => json::parse_facts(name, text)?,
            Format::Evidence => json::parse_evidence(name, text)?,
        };
        Ok(Source::Records(records))
    }

    /// Read `text` as `format` as far as it is good: the source, and the problems of
    /// its bad records.
    fn read_lenient(name: &str, text: &str, format: Format) -> (Source, Problems) {
        if let Some(b) = Bulk::scan(name, text, format.clone()) {
            return (Source::Bulk(Box::new(b)), Problems::default());
        }
        Source::read_lenient_carefully(name, text, format)
    }

    /// [`Source::read_lenient`] of a text read for it (a file's), kept without a copy
    /// by the fast path.
    fn read_lenient_owned(name: &str, text: String, format: Format) -> (Source, Problems) {
        match Bulk::scan_owned(name, text, format.clone()) {
            Ok(b) => (Source::Bulk(Box::new(b)), Problems::default()),
            Err(text) => Source::read_lenient_carefully(name, &text, format),
        }
    }

    /// `text` read by the careful path, as far as it is good.
    fn read_lenient_carefully(name: &str, text: &str, format: Format) -> (Source, Problems) {
        let (records, problems) = match format {
            Format::Json => json::parse_facts_lenient(name, text),
            Format::Evidence => json::parse_evidence_lenient(name, text),
            Format::Delimited { relation, dialect } => {
                match delimited::parse_untyped(name, &relation, text, dialect) {
                    Ok(r) => (r, Problems::default()),
                    Err(e) => {
                        let mut p = Problems::default();
                        for d in e.diagnostics {
                            p.push(d);
                        }
                        (Vec::new(), p)
                    }
                }
            }
        };
        (Source::Records(records), problems)
    }

    /// Number of records.
    pub(crate) fn len(&self) -> usize {
        match self {
            Source::Bulk(b) => b.rows,
            Source::Records(r) => r.len(),
        }
    }

    /// The records, read carefully (a fast-path file again, now with positions).
    /// Problems (there are none for a file the fast path read) go to `found`.
    pub(crate) fn records(&self, found: &mut Vec<Diagnostic>) -> std::borrow::Cow<'_, [RawFact]> {
        let Source::Bulk(b) = self else {
            let Source::Records(r) = self else {
                unreachable!()
            };
            return std::borrow::Cow::Borrowed(r);
        };
        let read = match &b.format {
            Format::Delimited { relation, dialect } => {
                delimited::parse_untyped(&b.name, relation, &b.text, *dialect)
            }
            Format::Json => json::parse_facts(&b.name, &b.text),
            Format::Evidence => json::parse_evidence(&b.name, &b.text),
        };
        match read {
            Ok(r) => std::borrow::Cow::Owned(r),
            Err(e) => {
                found.extend(e.diagnostics);
                std::borrow::Cow::Owned(Vec::new())
            }
        }
    }

    /// The names of the relations it has records of (with repeats).
    pub(crate) fn relation_names(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        match self {
            Source::Bulk(b) => Box::new(b.rels.iter().map(|r| r.name.as_str())),
            Source::Records(r) => Box::new(r.iter().map(|f| f.predicate.as_str())),
        }
    }

    /// Where its first record of relation `name` is.
    fn first_location(&self, name: &str) -> Option<Location> {
        match self {
            Source::Records(r) => r
                .iter()
                .find(|f| f.predicate == name)
                .map(|f| f.origin.with_snippet(&f.origin.location())),
            Source::Bulk(b) => {
                let rel = b.rels.iter().find(|r| r.name == name)?;
                let src = SourceFile::new(&*b.name, b.text.clone());
                let (line, col) = src.line_col(rel.first_at as u32);
                let col = match b.format {
                    Format::Delimited { .. } => 1,
                    _ => col,
                };
                Some(located(&b.name, Some(&src), line, col))
            }
        }
    }
}

impl Default for RawInputs {
    fn default() -> RawInputs {
        RawInputs {
            sources: Vec::new(),
            fact_dir: None,
            input_left: DEFAULT_MAX_INPUT,
            max_input: DEFAULT_MAX_INPUT,
        }
    }
}

/// How many bytes of files one load reads at most, by default (512 MiB): programs,
/// fact files, evidence and `.input` files together. See
/// [`Loader::max_input_bytes`](crate::store::Loader::max_input_bytes).
pub const DEFAULT_MAX_INPUT: u64 = 512 << 20;

impl RawInputs {
    /// No records yet.
    pub fn new() -> RawInputs {
        RawInputs::default()
    }

    /// Read at most `bytes` bytes of files in all (programs read through a
    /// [`Loader`](crate::store::Loader), fact files, evidence, `.input` files); more is
    /// a `budget_exceeded` error (limit `max_input`) before anything is parsed.
    /// Default: [`DEFAULT_MAX_INPUT`].
    pub fn set_max_input(&mut self, bytes: u64) {
        let used = self.max_input - self.input_left;
        self.max_input = bytes;
        self.input_left = bytes.saturating_sub(used);
    }

    /// Read a file against the input budget.
    pub(crate) fn read_budgeted(&mut self, path: &Path) -> Result<String> {
        let text = read_file(path, self.input_left, self.max_input)?;
        self.input_left -= text.len() as u64;
        Ok(text)
    }

    fn push(&mut self, source: Source) {
        if source.len() > 0 {
            self.sources.push(source);
        }
    }

    /// Number of records read so far.
    pub fn len(&self) -> usize {
        self.sources.iter().map(Source::len).sum()
    }

    /// Whether nothing has been read.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        let mut all = Vec::new();
        for file in &files {
            let text = self.read_budgeted(file)?;
            let name = file.display().to_string();
            all.push(parse_fact_file(&name, file, text)?);
        }
        for s in all {
            self.push(s);
        }
        Ok(())
    }

    /// Read an evidence file: one JSON object per line,
    /// `{"predicate", "args", "confidence"?, "provenance"?}` (blank lines skipped).
    pub fn read_evidence(&mut self, path: &Path) -> Result<()> {
        let text = self.read_budgeted(path)?;
        self.add_evidence_jsonl(&path.display().to_string(), &text)
    }

    /// Add the records of a JSON fact document given as text; `name` is used in
    /// diagnostics and provenance.
    pub fn add_facts_json(&mut self, name: &str, text: &str) -> Result<()> {
        let s = Source::read(name, text, Format::Json)?;
        self.push(s);
        Ok(())
    }

    /// Add the records of an evidence JSONL document given as text.
    pub fn add_evidence_jsonl(&mut self, name: &str, text: &str) -> Result<()> {
        let s = Source::read(name, text, Format::Evidence)?;
        self.push(s);
        Ok(())
    }

    /// Read a file's records as far as they are good: the good records are added (so
    /// that they can still be typed and checked) and the problems returned. For
    /// [`Loader`](crate::store::Loader), which reports every problem of a load at once.
    pub(crate) fn add_file_lenient(&mut self, path: &Path, evidence: bool) -> Vec<Diagnostic> {
        let name = path.display().to_string();
        let (source, problems) = if evidence {
            match self.read_budgeted(path) {
                Ok(text) => Source::read_lenient_owned(&name, text, Format::Evidence),
                Err(e) => return e.diagnostics,
            }
        } else {
            let is_json = path.extension().is_some_and(|e| e == "json");
            let is_dir = path.is_dir();
            if is_json && !is_dir {
                match self.read_budgeted(path) {
                    Ok(text) => Source::read_lenient_owned(&name, text, Format::Json),
                    Err(e) => return e.diagnostics,
                }
            } else {
                return match self.read_facts(path) {
                    Ok(()) => Vec::new(),
                    Err(e) => e.diagnostics,
                };
            }
        };
        self.push(source);
        let (mut list, dropped) = problems.into_parts();
        if dropped > 0 {
            list.push(Diagnostic::new(
                ErrorCode::BadInput,
                format!("{dropped} more problems in {name} not shown"),
            ));
        }
        list
    }

    /// Text variant of [`add_file_lenient`](Self::add_file_lenient) for evidence.
    pub(crate) fn add_evidence_lenient(&mut self, name: &str, text: &str) -> Vec<Diagnostic> {
        let (source, problems) = Source::read_lenient(name, text, Format::Evidence);
        self.push(source);
        problems.into_parts().0
    }

    /// Text variant of [`add_file_lenient`](Self::add_file_lenient) for a JSON fact
    /// document.
    pub(crate) fn add_facts_json_lenient(&mut self, name: &str, text: &str) -> Vec<Diagnostic> {
        let (source, problems) = Source::read_lenient(name, text, Format::Json);
        self.push(source);
        problems.into_parts().0
    }

    /// Add the rows of relation `relation` from delimited text (CSV, TSV, `.facts`).
    pub fn add_delimited(
        &mut self,
        name: &str,
        relation: &str,
        text: &str,
        dialect: Dialect,
    ) -> Result<()> {
        let format = Format::Delimited {
            relation: relation.to_string(),
            dialect,
        };
        let s = Source::read(name, text, format)?;
        self.push(s);
        Ok(())
    }

    /// Where the first record of relation `name` was read.
    pub(crate) fn first_location(&self, name: &str) -> Option<Location> {
        self.sources.iter().find_map(|s| s.first_location(name))
    }

    /// Column types the data suggests for each relation, for
    /// [`check::compile`](crate::check::compile). A relation's arity is taken from its
    /// first record (records of another arity are reported by `resolve`); a column
    /// whose values disagree (numbers beside symbols) gets `None`. Integers beside
    /// floats make a `float` column; integers above `i64::MAX` an `unsigned` one.
    pub fn type_hints(&self) -> TypeHints {
        let mut seen: std::collections::BTreeMap<&str, Vec<ColumnEvidence>> =
            std::collections::BTreeMap::new();
        for source in &self.sources {
            match source {
                Source::Records(facts) => {
                    for f in facts {
                        let cols = seen
                            .entry(f.predicate.as_str())
                            .or_insert_with(|| vec![ColumnEvidence::default(); f.args.len()]);
                        if cols.len() != f.args.len() {
                            continue;
                        }
                        for (c, v) in cols.iter_mut().zip(&f.args) {
                            c.add(v.observed());
                        }
                    }
                }
                Source::Bulk(b) => {
                    for rel in &b.rels {
                        let cols = seen
                            .entry(rel.name.as_str())
                            .or_insert_with(|| vec![ColumnEvidence::default(); rel.arity]);
                        if cols.len() != rel.arity {
                            continue;
                        }
                        for (c, e) in cols.iter_mut().zip(&rel.cols) {
                            c.merge(e);
                        }
                    }
                }
            }
        }
        seen.into_iter()
            .map(|(rel, cols)| {
                (
                    rel.to_string(),
                    cols.into_iter().map(ColumnEvidence::settle).collect(),
                )
            })
            .collect()
    }
}

/// The files records were read from, in the order they were read.
pub(crate) fn file_order<'a>(records: &[&'a RawFact]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for f in records {
        if out.last() != Some(&&*f.origin.file) && !out.contains(&&*f.origin.file) {
            out.push(&f.origin.file);
        }
    }
    out
}

/// The fact files of a directory, sorted by name: its entries named `*.json`,
/// `*.csv`, `*.tsv` or `*.facts`. Such an entry that is not a readable regular file
/// (after following symbolic links: a dangling link, a link loop, a FIFO, a socket,
/// a device, a directory) is an error, not skipped; other entries are ignored.
fn fact_files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|e| io_error(dir, &e))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| io_error(dir, &e))?.path();
        let known = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "json" | "csv" | "tsv" | "facts"));
        if !known {
            continue;
        }
        let meta = std::fs::metadata(&path).map_err(|e| {
            Error::from(
                Diagnostic::new(
                    ErrorCode::Io,
                    format!("cannot read `{}`: {e}", path.display()),
                )
                .with_help(
                    "a fact directory's *.json, *.csv, *.tsv and *.facts entries must be \
                     readable files (is it a dangling or looping symbolic link?)",
                ),
            )
        })?;
        if !meta.is_file() {
            return Err(not_regular(&path, &meta.file_type()));
        }
        files.push(path);
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files)
}

/// What kind of file this is, for a message.
fn kind_of(ft: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_char_device() || ft.is_block_device() {
            return "a device";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

fn not_regular(path: &Path, ft: &std::fs::FileType) -> Error {
    Diagnostic::new(
        ErrorCode::Io,
        format!(
            "cannot read `{}`: it is {}, not a regular file",
            path.display(),
            kind_of(ft)
        ),
    )
    .into()
}

/// Read one fact file by its extension.
fn parse_fact_file(name: &str, path: &Path, text: String) -> Result<Source> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let dialect = match ext {
        "json" => return Source::read_owned(name, text, Format::Json),
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
    let format = Format::Delimited {
        relation: stem.to_string(),
        dialect,
    };
    Source::read_owned(name, text, format)
}

/// Read a whole file as UTF-8 text, at most `max_bytes` bytes (`limit` is the
/// configured limit those are left of, for the message). A regular file larger than
/// that fails before it is read; a pipe is read up to the limit; a device, a socket or
/// a directory is refused (so `/dev/zero` is never read). A leading byte-order mark is
/// dropped.
pub fn read_file(path: &Path, max_bytes: u64, limit: u64) -> Result<String> {
    let file = std::fs::File::open(path).map_err(|e| io_error(path, &e))?;
    let meta = file.metadata().map_err(|e| io_error(path, &e))?;
    let ft = meta.file_type();
    let pipe = {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            ft.is_fifo()
        }
        #[cfg(not(unix))]
        {
            false
        }
    };
    if !ft.is_file() && !pipe {
        return Err(not_regular(path, &ft));
    }
    let name = path.display().to_string();
    if ft.is_file() && meta.len() > max_bytes {
        return Err(input_too_large(&name, limit));
    }
    read_bounded(file, &name, max_bytes, limit)
}

/// Read UTF-8 text from `reader`, at most `max_bytes` bytes (`limit`: the configured
/// limit, for the message); more is a `budget_exceeded` error (limit `max_input`).
/// Invalid UTF-8 is a `bad_input` error naming its line and column.
pub fn read_bounded(
    reader: impl std::io::Read,
    name: &str,
    max_bytes: u64,
    limit: u64,
) -> Result<String> {
    use std::io::Read as _;
    let mut buf = Vec::new();
    reader
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| {
            Error::from(Diagnostic::new(
                ErrorCode::Io,
                format!("cannot read `{name}`: {e}"),
            ))
        })?;
    if buf.len() as u64 > max_bytes {
        return Err(input_too_large(name, limit));
    }
    let text = String::from_utf8(buf).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
        let line_start = bytes[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let col = 1 + String::from_utf8_lossy(&bytes[line_start..at])
            .chars()
            .count();
        Error::from(bad_input(
            Location::at(name, line, col),
            "the file is not valid UTF-8 text",
        ))
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

fn input_too_large(name: &str, limit: u64) -> Error {
    Diagnostic::limit_exceeded(
        crate::diag::Limit::MaxInput,
        format!("`{name}` goes past the input limit: at most {limit} bytes are read in all"),
    )
    .with_help("raise the limit (--max-input, Loader::max_input_bytes) or split the input")
    .into()
}

/// An `io_error` naming the path.
pub(crate) fn io_error(path: &Path, e: &std::io::Error) -> Error {
    Diagnostic::new(
        ErrorCode::Io,
        format!("cannot read `{}`: {e}", path.display()),
    )
    .into()
}

/// Collects the diagnostics of one load, so that a user sees every problem of a file
/// at once; stops collecting after [`Problems::LIMIT`].
#[derive(Debug, Default)]
pub(crate) struct Problems {
    list: Vec<Diagnostic>,
    dropped: usize,
}

impl Problems {
    /// How many diagnostics one load reports at most.
    pub const LIMIT: usize = crate::diag::MAX_DIAGNOSTICS;

    /// The problems recorded, and how many were dropped beyond the limit.
    pub fn into_parts(self) -> (Vec<Diagnostic>, usize) {
        (self.list, self.dropped)
    }

    /// Whether the next problem would only be counted.
    pub fn is_full(&self) -> bool {
        self.list.len() >= Self::LIMIT
    }

    /// Record a problem.
    pub fn push(&mut self, d: Diagnostic) {
        if self.list.len() < Self::LIMIT {
            self.list.push(d);
        } else {
            self.dropped += 1;
        }
    }

    /// `Ok(value)` when nothing went wrong, else every problem recorded.
    pub fn finish<T>(mut self, value: T) -> Result<T> {
        if self.list.is_empty() {
            return Ok(value);
        }
        if self.dropped > 0 {
            self.list.push(crate::diag::more_not_shown(
                ErrorCode::BadInput,
                self.dropped,
            ));
        }
        Err(Error {
            diagnostics: self.list,
        })
    }
}

/// Diagnostics sorted for reading: by file (in `files` order, then any other file in
/// order of first mention), then line and column; diagnostics without a location last.
/// The sort is stable, so diagnostics at one place keep their order.
pub(crate) fn in_file_order(diags: Vec<Diagnostic>, files: &[&str]) -> Vec<Diagnostic> {
    in_file_order_by(diags, files, |d| d.location.as_ref())
}

/// [`in_file_order`] of items that carry a diagnostic's location.
pub(crate) fn in_file_order_by<T>(
    mut items: Vec<T>,
    files: &[&str],
    location: impl Fn(&T) -> Option<&Location>,
) -> Vec<T> {
    let mut ranks: Vec<String> = Vec::new();
    for f in files {
        if !ranks.iter().any(|r| r == f) {
            ranks.push((*f).to_string());
        }
    }
    for item in &items {
        if let Some(l) = location(item)
            && !ranks.contains(&l.file)
        {
            ranks.push(l.file.clone());
        }
    }
    items.sort_by_key(|item| match location(item) {
        Some(l) => (
            ranks
                .iter()
                .position(|r| *r == l.file)
                .unwrap_or(usize::MAX),
            l.line,
            l.col,
        ),
        None => (usize::MAX, usize::MAX, usize::MAX),
    });
    items
}

/// Provenance of a row of a fact file (`source` "facts") or a fact of the program text
/// (`source` "program"): the file as its table; a program fact also records its line
/// (an extra field `line`), which bulk data rows do not, to keep them small.
pub(crate) fn file_provenance(source: &str, origin: &Origin) -> Provenance {
    let mut extra = std::collections::BTreeMap::new();
    if source == "program" {
        extra.insert("line".to_string(), serde_json::Value::from(origin.line));
    }
    Provenance {
        source: source.to_string(),
        table: Some(origin.file.to_string()),
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
    let lines = src.line_count();
    if line == 0 || line > lines || col == 0 {
        return loc;
    }
    loc.snippet = Some(crate::diag::snippet(src.line_text(line), line, col, 1));
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

    #[test]
    fn problems_cap_and_report() {
        let mut p = Problems::default();
        for i in 0..Problems::LIMIT + 3 {
            p.push(bad_input(Location::at("f", i + 1, 1), "bad"));
        }
        let err = p.finish(()).unwrap_err();
        assert_eq!(err.diagnostics.len(), Problems::LIMIT + 1);
        assert!(err.diagnostics[Problems::LIMIT].message.contains("3 more"));
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
