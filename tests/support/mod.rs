//! Shared support for the integration tests.
//!
//! - [`naive`]: a reference evaluator written independently of `src/eval`;
//! - [`random`]: proptest strategies for random stratified programs and inputs;
//! - [`golden`]: golden files under `tests/golden/` (shared with the CLI's tests);
//! - here: fact bases built through the public loader (the drone pack among them),
//!   glue that compiles source text, turns generated facts into
//!   [`InputFact`]s, runs the engine and compares its result with the reference.
//!
//! Use it from a test crate with `mod support;`.
#![allow(dead_code)] // each test crate uses a different part

pub mod golden;
pub mod naive;
pub mod random;

use std::collections::BTreeMap;
use std::sync::Arc;

use prooflog::bundled;
use prooflog::check::TypeHints;
use prooflog::diag::SourceMap;
use prooflog::eval::{EvalOptions, FactBase, evaluate};
use prooflog::ir::Program;
use prooflog::store::{InputFact, Loader, Provenance};
use prooflog::{Value, value::fact_text};

use naive::Relations;
use random::{GenCase, GenFact};

/// Load `program` and `evidence` (JSONL) through the public [`Loader`] under these
/// file names and evaluate with provenance on.
pub fn fact_base_named(
    program_name: &str,
    program: &str,
    evidence_name: &str,
    evidence: &str,
    provenance: bool,
) -> FactBase {
    let mut loader = Loader::new();
    loader.program_text(program_name, program);
    loader
        .evidence_jsonl(evidence_name, evidence)
        .expect("test evidence loads");
    let loaded = loader.load().expect("test program loads");
    let options = EvalOptions::default().with_provenance(provenance);
    evaluate(loaded.program, &loaded.facts, &options).expect("test program evaluates")
}

/// The bundled drone pack over its sample evidence, under its repository names.
pub fn drones(provenance: bool) -> FactBase {
    let (program, evidence) = (bundled::DEFAULT_PROGRAM, bundled::DEFAULT_EVIDENCE);
    fact_base_named(
        program.name,
        program.text,
        evidence.name,
        evidence.text,
        provenance,
    )
}

/// An input fact with an explicit `edge_idx`.
pub fn input_fact(rel: u32, args: Vec<Value>, confidence: f64, edge_idx: u64) -> InputFact {
    InputFact {
        rel,
        args,
        confidence,
        provenance: Provenance {
            edge_idx: Some(edge_idx),
            ..Provenance::default()
        },
    }
}

/// Parse and check one source text.
pub fn compile(name: &str, source: &str) -> prooflog::Result<Program> {
    let mut sources = SourceMap::new();
    sources.add(name, source);
    prooflog::check::compile(sources, &TypeHints::new())
}

/// Compile a generated case, panicking with the program text if the front end
/// rejects it (generated programs are valid by construction).
pub fn compile_case(case: &GenCase) -> Arc<Program> {
    match compile("generated.dl", &case.source()) {
        Ok(p) => Arc::new(p),
        Err(e) => panic!("generated program rejected: {e}\n{}", case.describe()),
    }
}

fn input(rel: u32, args: Vec<Value>, confidence: f64, source: &str, idx: usize) -> InputFact {
    let mut fact = input_fact(rel, args, confidence, idx as u64);
    fact.provenance.source = source.to_string();
    fact
}

/// The facts written in the program text, as input facts of confidence 1.0.
pub fn source_inputs(program: &Program) -> Vec<InputFact> {
    program
        .facts()
        .iter()
        .enumerate()
        .map(|(i, f)| input(f.rel, f.args.clone(), 1.0, "program", i))
        .collect()
}

/// Every input of a generated case: the program's own facts, then the generated ones.
pub fn case_inputs(program: &Program, case: &GenCase) -> Vec<InputFact> {
    let mut inputs = source_inputs(program);
    inputs.extend(gen_inputs(program, &case.facts, inputs.len()));
    inputs
}

/// Generated facts as input facts, numbered from `first_idx`.
pub fn gen_inputs(program: &Program, facts: &[GenFact], first_idx: usize) -> Vec<InputFact> {
    facts
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let rel = program
                .relation_id(&f.rel)
                .unwrap_or_else(|| panic!("generated relation {} not in program", f.rel));
            let args = f.args.iter().map(|&v| Value::Number(v)).collect();
            input(rel, args, f.confidence, "facts", first_idx + i)
        })
        .collect()
}

/// Run the engine, panicking on an evaluation error.
pub fn run(program: &Arc<Program>, inputs: &[InputFact], provenance: bool) -> FactBase {
    let options = EvalOptions::default().with_provenance(provenance);
    match evaluate(Arc::clone(program), inputs, &options) {
        Ok(fb) => fb,
        Err(e) => panic!("evaluation failed: {e}"),
    }
}

/// Every relation of a fact base, as the reference evaluator reports them.
pub fn engine_relations(fb: &FactBase) -> Relations {
    let program = fb.program();
    (0..program.relations().len() as u32)
        .map(|rel| {
            let rows = fb
                .facts(rel)
                .map(|f| (fb.args(f), fb.confidence(f)))
                .collect::<BTreeMap<_, _>>();
            (program.relation(rel).name.clone(), rows)
        })
        .collect()
}

/// Compare two results: the same facts, confidences within `tolerance`. The error
/// lists the first few differences.
pub fn diff_relations(
    actual: &Relations,
    expected: &Relations,
    tolerance: f64,
) -> Result<(), String> {
    let mut diffs = Vec::new();
    let empty = BTreeMap::new();
    let names: std::collections::BTreeSet<&String> = actual.keys().chain(expected.keys()).collect();
    for name in names {
        let a = actual.get(name).unwrap_or(&empty);
        let e = expected.get(name).unwrap_or(&empty);
        for (row, ca) in a {
            match e.get(row) {
                None => diffs.push(format!("extra {}", fact_text(name, row))),
                Some(ce) if (ca - ce).abs() > tolerance => diffs.push(format!(
                    "{}: confidence {ca} but expected {ce}",
                    fact_text(name, row)
                )),
                Some(_) => {}
            }
        }
        for row in e.keys().filter(|r| !a.contains_key(*r)) {
            diffs.push(format!("missing {}", fact_text(name, row)));
        }
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        let n = diffs.len();
        diffs.truncate(12);
        Err(format!("{n} differences:\n  {}", diffs.join("\n  ")))
    }
}
