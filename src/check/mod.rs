//! Static checks and stratification: syntax tree in, checked [`Program`] out.
//!
//! Architecture invariant: every error a program can have is found here, before any
//! evaluation, so a bad program never half-runs.

use crate::diag::{Result, SourceMap};
use crate::ir::Program;

/// Parse and check every source file of `sources` (in order) into one program.
pub fn compile(sources: SourceMap) -> Result<Program> {
    let _ = sources;
    todo!()
}
