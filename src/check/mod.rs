//! Static checks and stratification: syntax tree in, checked [`Program`] out.
//!
//! Architecture invariant: every error a program can have is found here, before any
//! evaluation, so a bad program never half-runs.

use std::collections::BTreeMap;

use crate::diag::{Result, SourceMap};
use crate::ir::Program;
use crate::value::ColumnType;

/// Column types observed in input data, by relation name (`None` where a column's
/// values did not settle a type). Used only for columns whose type the program text
/// leaves open (undeclared relations whose values never appear in the program); a
/// column nothing determines defaults to `symbol`.
pub type TypeHints = BTreeMap<String, Vec<Option<ColumnType>>>;

/// Parse and check every source file of `sources` (in order) into one program.
pub fn compile(sources: SourceMap, hints: &TypeHints) -> Result<Program> {
    let _ = (sources, hints);
    todo!()
}
