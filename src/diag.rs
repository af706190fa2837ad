//! Source positions and user-facing errors.
//!
//! Every error a user can cause (a bad program, a bad input file, a bad query) is a
//! [`Diagnostic`]: a stable machine-readable [`ErrorCode`], a message saying what went
//! wrong, where (file, line, column, with a caret snippet of the source line), and how
//! to fix it. The command line prints diagnostics as text or as
//! `{"error": {"code", "message", "file"?, "line"?, "col"?, "help"?}}`.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

/// Index of a source file in a [`SourceMap`].
pub type FileId = u32;

/// A byte range in one source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// The file the range is in.
    pub file: FileId,
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// A span covering `start..end` of `file`.
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both (same file assumed).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// One loaded source text.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The name shown in diagnostics (usually the path as given).
    pub name: String,
    /// The full text.
    pub text: Arc<str>,
    line_starts: Vec<u32>,
}

impl SourceFile {
    /// Index a source text for line/column lookups.
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>) -> SourceFile {
        let text: Arc<str> = text.into();
        let mut line_starts = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        SourceFile {
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line] as usize;
        let end = (offset as usize).min(self.text.len());
        let col = self
            .text
            .get(start..end)
            .map_or(end - start, |s| s.chars().count());
        (line + 1, col + 1)
    }

    /// Number of lines (a text ending in a line break has an empty last line).
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The text of a 1-based line, without its line break.
    pub fn line_text(&self, line: usize) -> &str {
        let start = self.line_starts[line - 1] as usize;
        let end = self
            .line_starts
            .get(line)
            .map_or(self.text.len(), |&e| e as usize);
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }
}

/// All source files of a program, so that any later stage can point into them.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Add a file and return its id.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<Arc<str>>) -> FileId {
        self.files.push(SourceFile::new(name, text));
        (self.files.len() - 1) as FileId
    }

    /// The file with this id.
    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id as usize]
    }

    /// All files in the order they were added.
    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    /// Resolve a span to a location with a caret snippet (a long line is cut to a
    /// window around the column).
    pub fn locate(&self, span: Span) -> Location {
        let file = self.file(span.file);
        let (line, col) = file.line_col(span.start);
        let text = file.line_text(line);
        let (end_line, end_col) = file.line_col(span.end.max(span.start));
        let width = if end_line == line && end_col > col {
            end_col - col
        } else {
            1
        };
        Location {
            file: file.name.clone(),
            line,
            col,
            snippet: Some(snippet(text, line, col, width)),
        }
    }
}

/// How many characters of a source line a snippet shows at most.
const SNIPPET_WINDOW: usize = 100;

/// A caret snippet: line `line` (whose text is `text`) with `width` carets under
/// 1-based column `col`. A line longer than [`SNIPPET_WINDOW`] characters is cut to a
/// window around the column, marked with `…`, so that a snippet's size never depends
/// on the line's.
pub(crate) fn snippet(text: &str, line: usize, col: usize, width: usize) -> String {
    let col = col.max(1);
    // Only the characters up to the window's end are ever looked at.
    let chars: Vec<char> = text.chars().take(col + SNIPPET_WINDOW).collect();
    let long = text.chars().nth(col + SNIPPET_WINDOW).is_some();
    let len = chars.len();
    let start = if (len > SNIPPET_WINDOW || long) && col > SNIPPET_WINDOW / 2 {
        (col - SNIPPET_WINDOW / 2).min(len.saturating_sub(SNIPPET_WINDOW))
    } else {
        0
    };
    let end = (start + SNIPPET_WINDOW).min(len);
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
    let width = width.clamp(1, SNIPPET_WINDOW);
    let gutter = line.to_string().len();
    format!(
        "{:gutter$} |\n{line} | {shown}\n{:gutter$} | {prefix}{}",
        "",
        "",
        "^".repeat(width)
    )
}

/// How many diagnostics one error carries at most: parse errors, check errors and
/// input problems beyond it are only counted, in a last "N more errors not shown"
/// diagnostic ([`more_not_shown`]). Costs stay linear however many there are.
pub const MAX_DIAGNOSTICS: usize = 20;

/// How many diagnostics `d` stands for, when it is a [`more_not_shown`] note.
pub(crate) fn not_shown_count(d: &Diagnostic) -> Option<usize> {
    let (n, rest) = d.message.split_once(' ')?;
    if d.location.is_some() || !matches!(rest, "more error not shown" | "more errors not shown") {
        return None;
    }
    n.parse().ok()
}

/// The diagnostic that stands for `n` diagnostics not shown.
pub fn more_not_shown(code: ErrorCode, n: usize) -> Diagnostic {
    let noun = if n == 1 { "error" } else { "errors" };
    Diagnostic::new(code, format!("{n} more {noun} not shown")).with_help(format!(
        "only the first {MAX_DIAGNOSTICS} are reported; fix those first"
    ))
}

/// Where a diagnostic points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    /// File name as given by the user.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (characters).
    pub col: usize,
    /// The source line with a caret under the offending text, when there is source.
    #[serde(skip)]
    pub snippet: Option<String>,
}

impl Location {
    /// A location with no source snippet (e.g. a line of a data file).
    pub fn at(file: impl Into<String>, line: usize, col: usize) -> Location {
        Location {
            file: file.into(),
            line,
            col,
            snippet: None,
        }
    }
}

/// Stable machine-readable error codes. The string form (`as_str`) never changes once
/// released; scripts match on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// Malformed program text.
    Parse,
    /// A relation used with two different arities.
    ArityMismatch,
    /// A head variable not bound by a positive body atom.
    RangeRestriction,
    /// A variable occurring only in negated atoms or comparisons.
    UnsafeVariable,
    /// `_` in a rule head.
    WildcardInHead,
    /// Negation or aggregation through recursion.
    NotStratifiable,
    /// A value or variable used at two column types.
    TypeMismatch,
    /// A query or input names a relation the program does not have.
    UnknownRelation,
    /// A malformed annotation or directive (`@confidence(2.0)`, bad `.input` option).
    BadDirective,
    /// Malformed input data (facts, evidence, answers).
    BadInput,
    /// A file could not be read or written.
    Io,
    /// Work stopped by a limit: evaluation's facts, rounds, time or memory, or the
    /// size of the input read ([`Diagnostic::limit`] says which).
    BudgetExceeded,
    /// A command-line usage error.
    Usage,
    /// Arithmetic that failed during evaluation (integer overflow, division by zero, a
    /// float result that is not finite): the derivation is dropped, reported as a
    /// warning, or an error when asked to be strict.
    Arithmetic,
    /// A proof was asked of a fact base whose derivation record is off (or is
    /// inconsistent).
    ProvenanceUnavailable,
    /// Input data for a relation that no rule, fact or directive of the program
    /// mentions (a warning: the data is loaded as extensional facts).
    UnusedRelation,
    /// A relation read by a rule that has no rule, fact, `.input`, declaration or data
    /// (a warning: it is empty, and the name is probably misspelt).
    UndefinedRelation,
    /// A construct of Soufflé (or another dialect) that prooflog does not implement.
    Unsupported,
    /// A broken internal invariant: a bug in prooflog, never the user's input.
    Internal,
    /// A goal's bare identifier (a variable) that names a symbol of the data: probably
    /// a symbol whose quotes were lost (`threatens(42, harbor)`). A warning, an error
    /// under `--strict`.
    AmbiguousGoal,
    /// Content verification with nothing to verify against: a cited fact has no
    /// verbalisation (no `text`, no template), so a sentence in words cannot match it.
    /// A warning.
    NoVerbalisation,
    /// A proof made with another rule pack than the one given to check it. A warning.
    PackMismatch,
    /// A rule pack's manifest is malformed, two packs clash, or a pack's sample does
    /// not produce what it promises.
    BadPack,
    /// A text generator (a language model) failed to answer.
    Generation,
    /// A service request without the bearer token the service requires.
    Unauthorized,
}

impl ErrorCode {
    /// The stable string form, e.g. `"arity_mismatch"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Parse => "parse_error",
            ErrorCode::ArityMismatch => "arity_mismatch",
            ErrorCode::RangeRestriction => "range_restriction",
            ErrorCode::UnsafeVariable => "unsafe_variable",
            ErrorCode::WildcardInHead => "wildcard_in_head",
            ErrorCode::NotStratifiable => "not_stratifiable",
            ErrorCode::TypeMismatch => "type_mismatch",
            ErrorCode::UnknownRelation => "unknown_relation",
            ErrorCode::BadDirective => "bad_directive",
            ErrorCode::BadInput => "bad_input",
            ErrorCode::Io => "io_error",
            ErrorCode::BudgetExceeded => "budget_exceeded",
            ErrorCode::Usage => "usage",
            ErrorCode::Arithmetic => "arithmetic_error",
            ErrorCode::ProvenanceUnavailable => "provenance_unavailable",
            ErrorCode::UnusedRelation => "unused_relation",
            ErrorCode::UndefinedRelation => "undefined_relation",
            ErrorCode::Unsupported => "unsupported",
            ErrorCode::Internal => "internal_error",
            ErrorCode::AmbiguousGoal => "ambiguous_goal",
            ErrorCode::NoVerbalisation => "no_verbalisation",
            ErrorCode::PackMismatch => "pack_mismatch",
            ErrorCode::BadPack => "bad_pack",
            ErrorCode::Generation => "generation_error",
            ErrorCode::Unauthorized => "unauthorized",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A limit that stops work before the machine does (see [`crate::eval::Budget`] and
/// [`crate::store::Loader::max_input_bytes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Facts derived by rules (`Budget::max_facts`, `--max-facts`).
    MaxFacts,
    /// Rounds one stratum may take (`Budget::max_rounds`, `--max-rounds`).
    MaxRounds,
    /// Time (`Budget::timeout` or `Budget::deadline`, `--timeout`).
    Timeout,
    /// Bytes of the engine's own storage (`Budget::max_memory`, `--max-memory`).
    MaxMemory,
    /// Bytes of input read by one load (`Loader::max_input_bytes`, `--max-input`).
    MaxInput,
}

impl Limit {
    /// The stable string form, e.g. `"max_memory"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::MaxFacts => "max_facts",
            Limit::MaxRounds => "max_rounds",
            Limit::Timeout => "timeout",
            Limit::MaxMemory => "max_memory",
            Limit::MaxInput => "max_input",
        }
    }

    /// The command-line flag that sets it.
    pub fn flag(self) -> &'static str {
        match self {
            Limit::MaxFacts => "--max-facts",
            Limit::MaxRounds => "--max-rounds",
            Limit::Timeout => "--timeout",
            Limit::MaxMemory => "--max-memory",
            Limit::MaxInput => "--max-input",
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a diagnostic stops the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The input is rejected.
    #[default]
    Error,
    /// Worth saying, but the run goes on (an error under `--strict`).
    Warning,
}

/// A user-facing error or warning: what, where, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Stable code.
    pub code: ErrorCode,
    /// One-line description of what is wrong.
    pub message: String,
    /// Where, when known.
    pub location: Option<Location>,
    /// How to fix it, when there is something useful to say.
    pub help: Option<String>,
    /// For a `budget_exceeded` error: which limit stopped the work. (An evaluation's
    /// limit error names, and is located at, the rule that derived the most facts.)
    pub limit: Option<Limit>,
}

impl Diagnostic {
    /// A diagnostic with no location.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            location: None,
            help: None,
            limit: None,
        }
    }

    /// A `budget_exceeded` diagnostic for a limit.
    pub fn limit_exceeded(limit: Limit, message: impl Into<String>) -> Diagnostic {
        let mut d = Diagnostic::new(ErrorCode::BudgetExceeded, message);
        d.limit = Some(limit);
        d
    }

    /// A warning with no location.
    pub fn warning(code: ErrorCode, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::new(code, message)
        }
    }

    /// Whether this is a warning.
    pub fn is_warning(&self) -> bool {
        self.severity == Severity::Warning
    }

    /// Attach a location.
    pub fn at(mut self, location: Location) -> Diagnostic {
        self.location = Some(location);
        self
    }

    /// Attach a location resolved from a span (none when `sources` does not hold
    /// the span's file, as for a program built without source text).
    pub fn at_span(self, sources: &SourceMap, span: Span) -> Diagnostic {
        if sources.files().get(span.file as usize).is_none() {
            return self;
        }
        let loc = sources.locate(span);
        self.at(loc)
    }

    /// Attach a hint.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// The JSON form printed by `--format json`:
    /// `{"error": {"code", "message", "file"?, "line"?, "col"?, "help"?, "limit"?}}`
    /// (a warning's key is `"warning"`). Location fields are present only when the
    /// diagnostic has a location, `help` only when there is a hint, `limit` (its name)
    /// only for a limit: no field is ever `null`.
    pub fn to_json(&self) -> serde_json::Value {
        match self.severity {
            Severity::Error => serde_json::json!({ "error": self.to_json_body() }),
            Severity::Warning => serde_json::json!({ "warning": self.to_json_body() }),
        }
    }

    /// The object inside [`to_json`](Self::to_json)'s `"error"` (also the shape of a
    /// warning, and of each entry of `"more"`).
    pub fn to_json_body(&self) -> serde_json::Value {
        let mut obj = serde_json::Map::new();
        obj.insert("code".into(), self.code.as_str().into());
        obj.insert("message".into(), self.message.clone().into());
        if let Some(l) = &self.location {
            obj.insert("file".into(), l.file.clone().into());
            obj.insert("line".into(), l.line.into());
            obj.insert("col".into(), l.col.into());
        }
        if let Some(h) = &self.help {
            obj.insert("help".into(), h.clone().into());
        }
        if let Some(l) = self.limit {
            obj.insert("limit".into(), l.as_str().into());
        }
        serde_json::Value::Object(obj)
    }
}

/// Text form for a terminal:
///
/// ```text
/// error[arity_mismatch]: relation `edge` used with 3 arguments, declared with 2
///  --> prog.dl:4:10
///   |
/// 4 | path(x, y) :- edge(x, y, z).
///   |               ^^^^^^^^^^^^^
///   = help: ...
/// ```
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{what}[{}]: {}", self.code.as_str(), self.message)?;
        if let Some(loc) = &self.location {
            write!(f, "\n --> {}:{}:{}", loc.file, loc.line, loc.col)?;
            if let Some(s) = &loc.snippet {
                write!(f, "\n{s}")?;
            }
        }
        if let Some(h) = &self.help {
            write!(f, "\n  = help: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// The library's error type: one or more diagnostics (checks report every problem
/// they find, not just the first).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Error {
    /// At least one diagnostic; the first is the primary one.
    pub diagnostics: Vec<Diagnostic>,
}

impl Error {
    /// The primary diagnostic.
    pub fn primary(&self) -> &Diagnostic {
        &self.diagnostics[0]
    }

    /// The primary diagnostic's code.
    pub fn code(&self) -> ErrorCode {
        self.primary().code
    }

    /// The limit that stopped the work, for a `budget_exceeded` error.
    pub fn limit(&self) -> Option<Limit> {
        self.primary().limit
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                f.write_str("\n\n")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Error {
        Error {
            diagnostics: vec![d],
        }
    }
}

/// Shorthand for results carrying [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The candidate closest to `name` by edit distance, when it is close enough to be a
/// typo of it: at most a third of `name`'s length (1 to 3 edits), and never the whole
/// name. Ties go to the alphabetically first candidate. The one did-you-mean routine
/// for relations in rules, data and goals; its cost is linear in the candidates.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let len = name.chars().count();
    let limit = (len / 3).clamp(1, 3);
    candidates
        .into_iter()
        .filter(|c| *c != name && c.chars().count().abs_diff(len) <= limit)
        .filter_map(|c| {
            let d = edit_distance(name, c);
            (d <= limit && d < len.max(c.chars().count())).then_some((d, c))
        })
        .min()
        .map(|(_, c)| c)
}

/// Edit distance in characters, counting an insertion, a deletion, a substitution or
/// a swap of two adjacent characters as one edit (optimal string alignment), so that
/// `egde` is one edit from `edge`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    // Three rows: two back (for swaps), one back, current.
    let mut rows = vec![0usize; 3 * w];
    for (j, cell) in rows[w..2 * w].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        let (back2, rest) = rows.split_at_mut(w);
        let (back1, cur) = rest.split_at_mut(w);
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (back1[j - 1] + cost).min(back1[j] + 1).min(cur[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(back2[j - 2] + 1);
            }
            cur[j] = d;
        }
        rows.copy_within(w..3 * w, 0);
    }
    rows[w + b.len()]
}

/// Collects diagnostics up to a cap, so that reporting costs the same whatever the
/// number of problems: past [`Diagnostics::LIMIT`] a problem is only counted (its
/// message, location and snippet are never built), and [`finish`](Self::finish) adds
/// one "N more" line.
#[derive(Debug, Default)]
pub struct Diagnostics {
    list: Vec<Diagnostic>,
    dropped: usize,
}

impl Diagnostics {
    /// How many diagnostics one report shows at most.
    pub const LIMIT: usize = 20;

    /// Record a problem.
    pub fn push(&mut self, d: Diagnostic) {
        self.push_with(|| d);
    }

    /// Record a problem built only if it will be shown.
    pub fn push_with(&mut self, d: impl FnOnce() -> Diagnostic) {
        if self.list.len() < Self::LIMIT {
            self.list.push(d());
        } else {
            self.dropped += 1;
        }
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Problems recorded, shown or not.
    pub fn count(&self) -> usize {
        self.list.len() + self.dropped
    }

    /// `Ok(value)` when nothing was recorded, else every problem shown.
    pub fn finish<T>(self, value: T) -> Result<T> {
        if self.list.is_empty() {
            return Ok(value);
        }
        Err(Error {
            diagnostics: self.into_vec(),
        })
    }

    /// The diagnostics shown, with the "N more" line when some were not.
    pub fn into_vec(mut self) -> Vec<Diagnostic> {
        if self.dropped > 0 {
            let code = self.list[0].code;
            let mut more = Diagnostic::new(
                code,
                format!(
                    "{} more problem{} not shown",
                    self.dropped,
                    if self.dropped == 1 { "" } else { "s" }
                ),
            );
            more.severity = self.list[0].severity;
            self.list.push(more);
        }
        self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_points_at_column_with_caret() {
        let mut sm = SourceMap::new();
        let id = sm.add("p.dl", "edge(1,2).\npath(x, y) :- edge(x, y, z).\n");
        let start = "edge(1,2).\npath(x, y) :- ".len();
        let loc = sm.locate(Span::new(id, start, start + 13));
        assert_eq!((loc.line, loc.col), (2, 15));
        let snippet = loc.snippet.unwrap();
        assert!(snippet.ends_with(&format!("{}{}", " ".repeat(14), "^".repeat(13))));
        assert!(snippet.contains("2 | path(x, y) :- edge(x, y, z)."));
    }

    #[test]
    fn did_you_mean_finds_typos_only() {
        let names = ["edge", "path", "researchInterest", "e"];
        assert_eq!(did_you_mean("edg", names), Some("edge"));
        assert_eq!(did_you_mean("edgee", names), Some("edge"));
        assert_eq!(did_you_mean("pathh", names), Some("path"));
        assert_eq!(
            did_you_mean("researchInterests", names),
            Some("researchInterest")
        );
        assert_eq!(
            did_you_mean("f", names),
            None,
            "a one-letter name is never a typo of another"
        );
        assert_eq!(did_you_mean("node", names), None);
        assert_eq!(did_you_mean("edge", names), None, "not itself");
        assert_eq!(did_you_mean("egde", names), Some("edge"));
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("egde", "edge"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", ""), 3);
    }

    #[test]
    fn diagnostics_are_capped_and_built_lazily() {
        let mut d = Diagnostics::default();
        let mut built = 0;
        for i in 0..Diagnostics::LIMIT + 5 {
            d.push_with(|| {
                built += 1;
                Diagnostic::new(ErrorCode::BadInput, format!("bad {i}"))
            });
        }
        assert_eq!(built, Diagnostics::LIMIT);
        assert_eq!(d.count(), Diagnostics::LIMIT + 5);
        let v = d.into_vec();
        assert_eq!(v.len(), Diagnostics::LIMIT + 1);
        assert_eq!(v[Diagnostics::LIMIT].message, "5 more problems not shown");
    }

    #[test]
    fn warnings_say_so() {
        let w = Diagnostic::warning(ErrorCode::UnusedRelation, "`edg` is not used by any rule");
        assert!(w.to_string().starts_with("warning[unused_relation]: "));
        assert_eq!(w.to_json()["warning"]["code"], "unused_relation");
    }

    #[test]
    fn json_error_shape() {
        let d = Diagnostic::new(ErrorCode::BadInput, "bad line").at(Location::at("e.jsonl", 3, 1));
        let j = d.to_json();
        assert_eq!(j["error"]["code"], "bad_input");
        assert_eq!(j["error"]["line"], 3);
        assert_eq!(j["error"]["file"], "e.jsonl");
        let bare = Diagnostic::new(ErrorCode::Io, "cannot read").to_json();
        assert_eq!(
            bare.to_string(),
            r#"{"error":{"code":"io_error","message":"cannot read"}}"#,
            "no null fields"
        );
    }
}
