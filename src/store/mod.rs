//! Input facts and their provenance: the evidence an evaluation starts from.
//!
//! Every input fact (written in the program, loaded from JSON/CSV/TSV fact files, or
//! from evidence JSONL) becomes an [`InputFact`] with a [`Provenance`] record.
//!
//! Loading has two phases, because a relation the program does not declare takes its
//! column types from the data:
//!
//! 1. [`RawInputs`] reads fact files and evidence into untyped records that remember
//!    their file, line and columns, and reports the column types the data suggests
//!    ([`RawInputs::type_hints`]) for [`check::compile`](crate::check::compile).
//! 2. [`RawInputs::resolve`] types the records against the compiled program, adds the
//!    program's own facts and its `.input` files, and numbers the evidence.
//!
//! [`Loader`] does both (and the compile between them) in one call. Loading is
//! all-or-nothing: any bad record makes the whole load fail with a `bad_input` error
//! naming file, line and column, and no facts.
//!
//! ```no_run
//! # fn main() -> prooflog::Result<()> {
//! let mut loader = prooflog::store::Loader::new();
//! loader.program_file("rules/drones/drones.dl")?;
//! loader.evidence("rules/drones/evidence.jsonl")?;
//! let loaded = loader.load()?;
//! let facts = prooflog::eval::evaluate(loaded.program, loaded.facts, &Default::default())?;
//! # let _ = facts; Ok(()) }
//! ```
//!
//! Architecture invariant: this layer knows the checked [`Program`]
//! (relation names, arities, column types) but nothing of evaluation.

mod bulk;
mod delimited;
pub(crate) mod facts;
pub mod hyperedge;
mod json;
mod jsonpos;
pub mod numbering;
mod raw;
mod record;
mod resolve;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::diag::{Diagnostic, Error, ErrorCode, Result, Severity, SourceMap, did_you_mean};
use crate::ir::{Program, RelId};
use crate::value::Value;

pub use delimited::Dialect;
pub use facts::InputFacts;
pub use hyperedge::{DocSpan, Hyperedge, read_hyperedges};
pub use numbering::{EdgeOwners, complete_inputs, number_inputs};
pub use raw::{DEFAULT_MAX_INPUT, RawInputs, read_bounded, read_file};
pub use record::FactRecord;

/// Where an input fact came from. Serializes with the field names of docs/semantics.md
/// ("Evidence"); `extra` fields (any other keys of the evidence line's `provenance`
/// object) are flattened in beside them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Provenance {
    /// Kind of source: `"hyperedge"` for evidence JSONL (unless the line says
    /// otherwise), `"program"` for facts written in a `.dl` file, `"facts"` for fact
    /// files.
    pub source: String,
    /// The table (or file) the fact was stored in, when known.
    pub table: Option<String>,
    /// The stored edge index; its citation tag is `HEDGE-<edge_idx>`. Filled in for
    /// every input fact before evaluation (explicit, or assigned in load order after
    /// the largest explicit index).
    pub edge_idx: Option<u64>,
    /// When the evidence was recorded, as given (number or string).
    pub event_ts: Option<serde_json::Value>,
    /// Ids of the hyperedge's members, as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub member_ids: Vec<serde_json::Value>,
    /// Any other provenance fields, kept verbatim.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// One input fact with its confidence and provenance.
#[derive(Debug, Clone, PartialEq)]
pub struct InputFact {
    /// Its relation.
    pub rel: RelId,
    /// Its values, typed as the relation's columns.
    pub args: Vec<Value>,
    /// In [0, 1]; 1.0 unless given.
    pub confidence: f64,
    /// Where it came from.
    pub provenance: Provenance,
}

/// A compiled program with its input facts, ready for
/// [`eval::evaluate`](crate::eval::evaluate).
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The checked program (shared: evaluation and proofs keep a handle).
    pub program: Arc<Program>,
    /// Every input fact, each with its `edge_idx` assigned.
    pub facts: InputFacts,
    /// What is worth saying but did not stop the load: data for relations no rule
    /// mentions, relations read by rules that nothing defines (with a did-you-mean).
    pub warnings: Vec<Diagnostic>,
}

/// Loads a program and its inputs in one go: collect program sources, fact files and
/// evidence, then [`load`](Self::load) compiles the program (with the data's type
/// hints) and types the inputs against it.
///
/// Load order, which decides the `edge_idx` of evidence that gives none: the
/// program's facts, its `.input` files (in relation order), then fact files and
/// evidence in the order they were added.
///
/// Every problem of a load is reported at once, by [`load`](Self::load): a data file's
/// unreadable lines, the program's errors, and the good records' type errors and
/// duplicate edge indexes, in file and line order. (The `facts`/`evidence` methods
/// return `Ok` and keep their files' problems for `load`.)
#[derive(Debug, Clone, Default)]
pub struct Loader {
    sources: SourceMap,
    inputs: RawInputs,
    /// Problems found while reading data files, reported by `load`.
    problems: Vec<Diagnostic>,
    /// The data files (or texts) in the order they were added.
    added: Vec<String>,
    strict: bool,
}

impl Loader {
    /// An empty loader.
    pub fn new() -> Loader {
        Loader::default()
    }

    /// Read at most `bytes` bytes of files in all: program files, fact files,
    /// evidence and `.input` files (text given directly is not counted). More is a
    /// `budget_exceeded` error (limit `max_input`) naming the file that went past it.
    /// Default: [`DEFAULT_MAX_INPUT`] (512 MiB).
    pub fn max_input_bytes(&mut self, bytes: u64) -> &mut Loader {
        self.inputs.set_max_input(bytes);
        self
    }

    /// Add a program file (`.dl`). Files are compiled in the order added.
    pub fn program_file(&mut self, path: impl AsRef<Path>) -> Result<&mut Loader> {
        let path = path.as_ref();
        let text = self.inputs.read_budgeted(path)?;
        self.sources.add(path.display().to_string(), text);
        Ok(self)
    }

    /// Add program text; `name` is what diagnostics call it (and the directory of a
    /// path-like name is where its relative `.input` files are looked up).
    pub fn program_text(&mut self, name: &str, text: &str) -> &mut Loader {
        self.sources.add(name, text);
        self
    }

    /// Add a fact file or directory (see [`RawInputs::read_facts`]). Its problems are
    /// reported by [`load`](Self::load).
    pub fn facts(&mut self, path: impl AsRef<Path>) -> Result<&mut Loader> {
        let problems = self.inputs.add_file_lenient(path.as_ref(), false);
        self.problems.extend(problems);
        self.added.push(path.as_ref().display().to_string());
        Ok(self)
    }

    /// Add an evidence JSONL file (see [`RawInputs::read_evidence`]). Its problems are
    /// reported by [`load`](Self::load).
    pub fn evidence(&mut self, path: impl AsRef<Path>) -> Result<&mut Loader> {
        let problems = self.inputs.add_file_lenient(path.as_ref(), true);
        self.problems.extend(problems);
        self.added.push(path.as_ref().display().to_string());
        Ok(self)
    }

    /// Add a JSON fact document given as text. Its problems are reported by
    /// [`load`](Self::load).
    pub fn facts_json(&mut self, name: &str, text: &str) -> Result<&mut Loader> {
        let problems = self.inputs.add_facts_json_lenient(name, text);
        self.problems.extend(problems);
        self.added.push(name.to_string());
        Ok(self)
    }

    /// Add evidence JSONL given as text. Its problems are reported by
    /// [`load`](Self::load).
    pub fn evidence_jsonl(&mut self, name: &str, text: &str) -> Result<&mut Loader> {
        let problems = self.inputs.add_evidence_lenient(name, text);
        self.problems.extend(problems);
        self.added.push(name.to_string());
        Ok(self)
    }

    /// Look up `.input` files relative to `dir` instead of the program's directory.
    pub fn fact_dir(&mut self, dir: impl AsRef<Path>) -> &mut Loader {
        self.inputs.set_fact_dir(dir.as_ref());
        self
    }

    /// Turn warnings into errors (the command line's `--strict`).
    pub fn strict(&mut self, strict: bool) -> &mut Loader {
        self.strict = strict;
        self
    }

    /// The records read so far.
    pub fn inputs(&self) -> &RawInputs {
        &self.inputs
    }

    /// Compile the program and type every input against it. All-or-nothing: an error
    /// in the program or in any input returns every diagnostic found and no facts.
    ///
    /// One pass: the program's errors come first, then the data's in the order the
    /// files were added, each file's by line. When the program does not compile, the
    /// data is not typed against it (that would only repeat the program's errors as
    /// data errors); its unreadable lines are still reported.
    ///
    /// Data for a relation the program never mentions is loaded all the same: it is
    /// the extensional database, a relation of its own (typed by its values) that
    /// `--all` shows and goals can query. Each such relation is a warning
    /// (`unused_relation`, with a did-you-mean when its name is close to one the
    /// program uses), as is a relation a rule reads that nothing defines
    /// (`undefined_relation`). With [`strict`](Self::strict) warnings are errors.
    pub fn load(self) -> Result<Loaded> {
        let hints = self.inputs.type_hints();
        let (program, report) = match crate::check::compile_with_report(self.sources, &hints) {
            Ok(p) => p,
            Err(mut e) => {
                e.diagnostics.extend(self.problems);
                return Err(e);
            }
        };
        let mut warnings = report.warnings;
        for rel in program.relations[report.program_relations..]
            .iter()
            .filter(|r| !r.auxiliary)
        {
            let mut d = Diagnostic::warning(
                ErrorCode::UnusedRelation,
                format!("`{}` is not used by any rule", rel.name),
            );
            let used = program.relations[..report.program_relations]
                .iter()
                .filter(|r| !r.auxiliary)
                .map(|r| r.name.as_str());
            d = match did_you_mean(&rel.name, used) {
                Some(s) => d.with_help(format!(
                    "did you mean `{s}`? The data is loaded as relation `{}` all the same",
                    rel.name
                )),
                None => d.with_help(format!(
                    "its facts are loaded as relation `{}` (shown by --all); declare it or use \
                     it in a rule to silence this",
                    rel.name
                )),
            };
            if let Some(at) = self.inputs.first_location(&rel.name) {
                d = d.at(at);
            }
            warnings.push(d);
        }
        if self.strict && !warnings.is_empty() {
            let mut diagnostics: Vec<Diagnostic> = warnings
                .into_iter()
                .map(|mut d| {
                    d.severity = Severity::Error;
                    d
                })
                .collect();
            diagnostics.extend(self.problems);
            return Err(Error { diagnostics });
        }
        let resolved = self.inputs.resolve_facts(&program);
        if self.problems.is_empty() {
            let facts = resolved?;
            return Ok(Loaded {
                program: Arc::new(program),
                facts,
                warnings,
            });
        }
        let mut all = self.problems;
        if let Err(e) = resolved {
            all.extend(e.diagnostics);
        }
        let mut files: Vec<&str> = program
            .sources()
            .files()
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        files.extend(self.added.iter().map(String::as_str));
        Err(Error {
            diagnostics: raw::in_file_order(all, &files),
        })
    }
}
