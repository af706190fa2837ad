//! The rule language's surface: lexer, parser and syntax tree.
//!
//! Architecture invariant: this layer knows text and spans only. It resolves no names
//! and checks nothing beyond grammar; `check` turns its tree into an
//! [`ir::Program`](crate::ir::Program).

use crate::diag::Span;
use crate::value::Value;

/// A goal or query pattern such as `path(1, x)` or `coordinated_threat(42)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    /// The relation name.
    pub predicate: String,
    /// One argument per column.
    pub args: Vec<GoalArg>,
    /// The whole goal.
    pub span: Span,
}

/// An argument of a [`Goal`].
#[derive(Debug, Clone, PartialEq)]
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
