//! The rule language's surface: lexer, parser and syntax tree.
//!
//! Architecture invariant: this layer knows text and spans only. It resolves no names
//! and checks nothing beyond grammar; `check` turns its tree into an
//! [`ir::Program`](crate::ir::Program).

pub mod ast;
mod lexer;
mod parser;

use crate::diag::{Diagnostic, Error, ErrorCode, FileId, Result, SourceMap, Span};
use crate::value::Value;

/// Parse one file of `sources` into its syntax tree, reporting every syntax error.
pub fn parse_module(sources: &SourceMap, file: FileId) -> Result<ast::Module> {
    let (module, errors) = parser::parse_module(file, &sources.file(file).text);
    if errors.is_empty() {
        Ok(module)
    } else {
        Err(Error {
            diagnostics: errors
                .into_iter()
                .map(|e| e.into_diagnostic(sources))
                .collect(),
        })
    }
}

/// Parse a goal such as `path(1, x)` (as given to `--goal` or a query): a relation
/// name and arguments that are constants, bare-identifier variables or `_`. A final
/// `.` is allowed. Integers become `Number` (or `Unsigned` beyond `i64`), `12u`
/// `Unsigned`, `1.5` `Float`, strings `Symbol`; the caller adapts them to column types.
pub fn parse_goal(text: &str) -> Result<Goal> {
    parser::parse_goal(0, text).map_err(|e| {
        let mut sources = SourceMap::new();
        sources.add("<goal>", text);
        Error::from(e.into_diagnostic(&sources))
    })
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
