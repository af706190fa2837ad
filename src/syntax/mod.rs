//! The rule language's surface: lexer, parser and syntax tree.
//!
//! Architecture invariant: this layer knows text and spans only. It resolves no names
//! and checks nothing beyond grammar; `check` turns its tree into an
//! [`ir::Program`](crate::ir::Program).

pub mod ast;
mod lexer;
mod parser;

use crate::diag::{
    Diagnostic, Error, ErrorCode, FileId, MAX_DIAGNOSTICS, Result, SourceMap, Span, more_not_shown,
};
use crate::value::Value;

/// How deeply expressions and formulas may nest: parentheses, unary minus signs,
/// chains of binary operators (`a + b + …` nests one level per operator), nested
/// sub-formulas and aggregates. Deeper text is a `parse_error` naming the limit and
/// where it was passed, so that no later pass (checks, evaluation, printing) recurses
/// without bound.
pub const MAX_NESTING: usize = 128;

/// Parse one file of `sources` into its syntax tree, reporting its syntax errors (the
/// first [`MAX_DIAGNOSTICS`], then how many more).
pub fn parse_module(sources: &SourceMap, file: FileId) -> Result<ast::Module> {
    let text = &sources.file(file).text;
    if text.len() >= u32::MAX as usize {
        return Err(Diagnostic::new(
            ErrorCode::Parse,
            format!(
                "`{}` is too large to parse (4 GiB or more)",
                sources.file(file).name
            ),
        )
        .into());
    }
    let (module, errors) = parser::parse_module(file, text);
    if errors.is_empty() {
        Ok(module)
    } else {
        Err(errors.into_error(sources))
    }
}

/// Parse a goal such as `path(1, x)` (as given to `--goal` or a query): a relation
/// name and arguments that are constants, bare-identifier variables or `_`. A final
/// `.` is allowed. Integers become `Number` (or `Unsigned` beyond `i64`), `12u`
/// `Unsigned`, `1.5` `Float`, strings `Symbol`; the caller adapts them to column types.
pub fn parse_goal(text: &str) -> Result<Goal> {
    if text.len() >= u32::MAX as usize {
        return Err(Diagnostic::new(ErrorCode::Parse, "the goal is too large to parse").into());
    }
    parser::parse_goal(0, text).map_err(|e| {
        let mut sources = SourceMap::new();
        sources.add("<goal>", text);
        Error::from(e.into_diagnostic(&sources))
    })
}

/// The syntax errors of one text: the first [`MAX_DIAGNOSTICS`] are kept, the others
/// only counted, so that a text with millions of errors costs no more than one with
/// a few.
#[derive(Debug, Default)]
pub(crate) struct Errors {
    list: Vec<SyntaxError>,
    dropped: usize,
}

impl Errors {
    /// Record an error.
    pub(crate) fn push(&mut self, e: SyntaxError) {
        if self.list.len() < MAX_DIAGNOSTICS {
            self.list.push(e);
        } else {
            self.dropped += 1;
        }
    }

    /// Whether there were none.
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The first error.
    pub(crate) fn into_first(self) -> Option<SyntaxError> {
        self.list.into_iter().next()
    }

    /// Resolve the kept errors to diagnostics (a snippet each), plus a note saying how
    /// many more there were.
    fn into_error(self, sources: &SourceMap) -> Error {
        let mut diagnostics: Vec<Diagnostic> = self
            .list
            .into_iter()
            .map(|e| e.into_diagnostic(sources))
            .collect();
        if self.dropped > 0 {
            diagnostics.push(more_not_shown(ErrorCode::Parse, self.dropped));
        }
        Error { diagnostics }
    }

    #[cfg(test)]
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, SyntaxError> {
        self.list.iter()
    }
}

/// Text quoted in a message, cut to a readable length.
pub(crate) fn shorten(s: &str) -> std::borrow::Cow<'_, str> {
    const MAX: usize = 40;
    match s.char_indices().nth(MAX) {
        None => s.into(),
        Some((cut, _)) => format!("{}…", &s[..cut]).into(),
    }
}

/// A syntax error before it is resolved to a line and column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SyntaxError {
    /// `parse_error`, or `unsupported` for a construct of another dialect.
    pub code: ErrorCode,
    /// The offending text.
    pub span: Span,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: String,
}

impl SyntaxError {
    pub(crate) fn new(span: Span, message: impl Into<String>, help: impl Into<String>) -> Self {
        SyntaxError {
            code: ErrorCode::Parse,
            span,
            message: message.into(),
            help: help.into(),
        }
    }

    /// A construct prooflog does not implement, named in `message`.
    pub(crate) fn unsupported(
        span: Span,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Self {
        SyntaxError {
            code: ErrorCode::Unsupported,
            ..SyntaxError::new(span, message, help)
        }
    }

    fn into_diagnostic(self, sources: &SourceMap) -> Diagnostic {
        Diagnostic::new(self.code, self.message)
            .at_span(sources, self.span)
            .with_help(self.help)
    }
}

/// A goal or query pattern such as `path(1, x)` or `coordinated_threat(42)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    /// The relation name.
    pub predicate: String,
    /// One argument per column.
    pub args: Vec<GoalArg>,
    /// The span of each argument (same length as `args`; empty for a goal built by
    /// hand).
    pub arg_spans: Vec<Span>,
    /// The whole goal.
    pub span: Span,
}

/// An argument of a [`Goal`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum GoalArg {
    /// A constant the column must equal.
    Const(Value),
    /// A named variable (bare identifier); repeated names must agree.
    Var(String),
    /// `_`.
    Wildcard,
}

impl Goal {
    /// Whether the goal has no variables or wildcards.
    pub fn is_ground(&self) -> bool {
        self.args.iter().all(|a| matches!(a, GoalArg::Const(_)))
    }
}
