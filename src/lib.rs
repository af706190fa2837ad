//! prooflog: a Datalog reasoning engine that explains itself.
//!
//! Rule packs (Soufflé-compatible `.dl` files) are parsed and checked into a
//! [`ir::Program`], evaluated semi-naively into a [`eval::FactBase`] that records every
//! fact's confidence and best derivation, and turned into proof DAGs whose citation
//! tags an LLM's answer must cite; the answer checkers then strip every sentence the
//! proofs do not support.
#![forbid(missing_docs)]

pub mod answer;
pub mod bundled;
pub mod check;
pub mod diag;
pub mod eval;
pub mod ir;
pub mod pack;
pub mod proof;
pub mod store;
pub mod syntax;
pub mod value;

pub use diag::{Diagnostic, Error, ErrorCode, Result};
pub use eval::{Derivation, EvalOptions, FactBase, FactId, Match};
pub use ir::Program;
pub use value::Value;
