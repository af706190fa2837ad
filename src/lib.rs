//! prooflog: a Datalog reasoning engine that explains itself, built to be the
//! symbolic layer of a retrieval-augmented generation (RAG) pipeline.
//!
//! Rule packs (Soufflé-compatible `.dl` files) and evidence are loaded into a checked
//! [`Program`] and [`InputFact`]s, evaluated semi-naively into a [`FactBase`] that
//! records every fact's confidence and best derivation, and turned into proof DAGs
//! ([`ProofTree`]) whose citation tags (`HEDGE-n`, `RULE-n`, `STEP-n`) an LLM's answer
//! must cite. The answer checkers ([`HallucinationFirewall`], [`Gate`], grounding)
//! then strip every sentence the proofs do not support.
//!
//! The whole pipeline, one name per step, on the bundled drone pack:
//!
//! ```
//! use prooflog::{
//!     CheckOptions, CitationTable, Fact, HallucinationFirewall, Loader, ProofOptions, Value,
//!     bundled, build_proof, evaluate, render, EvalOptions,
//! };
//!
//! # fn main() -> prooflog::Result<()> {
//! // Load: rules and evidence, all or nothing.
//! let mut loader = Loader::new();
//! loader.program_text(bundled::DEFAULT_PROGRAM.name, bundled::DEFAULT_PROGRAM.text);
//! loader.evidence_jsonl(bundled::DEFAULT_EVIDENCE.name, bundled::DEFAULT_EVIDENCE.text)?;
//! let loaded = loader.load()?;
//!
//! // Evaluate: the fixpoint, recording the best derivation of every fact.
//! let facts = evaluate(loaded.program, loaded.facts, &EvalOptions::default())?;
//!
//! // Query: every match of a pattern, with its confidence.
//! let threats = facts.query(&prooflog::syntax::parse_goal("threatens(g, z)")?)?;
//! assert_eq!(threats.len(), 1);
//!
//! // Prove: the proof DAG of one fact, and the tags an answer may cite.
//! let goal = Fact::new("threatens", vec![Value::Number(42), Value::Symbol("airport".into())]);
//! let proof = build_proof(&goal, &facts, &ProofOptions::new("proof-1"))?;
//! assert_eq!(proof.status, prooflog::proof::ProofStatus::Proved);
//! // The request's one tag table: what each tag may be cited for.
//! let table = CitationTable::from_proofs(std::slice::from_ref(&proof));
//!
//! // Render: the tagged context block that goes into the model's prompt.
//! let context = render::context(&proof);
//! assert!(context.contains("[STEP-1] group 42 threatens zone airport"));
//!
//! // Check: a sentence that cites the proof and says what the cited fact says is
//! // kept; an uncited claim, and a cited one the fact does not say, are stripped.
//! let answer = "Group 42 threatens zone airport [STEP-1]. Drone 3 carries explosives. \
//!               Drone 9 was cleared by an operator [STEP-3].";
//! let firewall = HallucinationFirewall::new().with_gate_verification(&table);
//! let options = CheckOptions::new().proved(proof.is_proved()).require_proof(true);
//! let checked = firewall.check(answer, &table, &options);
//! assert_eq!(checked.outcome.as_str(), "stripped");
//! assert_eq!(checked.supported.len(), 1);
//! assert_eq!(checked.answer, "Group 42 threatens zone airport [STEP-1].");
//! # Ok(())
//! # }
//! ```
//!
//! Entry points by step: load with [`Loader`] (or [`Program::from_source`] and
//! [`bundled`]); evaluate with [`evaluate`] and extend with [`FactBase::extend`];
//! query with [`FactBase::query`]; prove with [`build_proof`] and [`prove_all`];
//! render with [`render`]; check answers with [`HallucinationFirewall`], [`Gate`] and
//! [`ground_tags`]. The modules hold the rest: each documents its layer.
#![forbid(missing_docs)]

pub mod answer;
pub mod bundled;
pub mod check;
pub mod detect;
pub mod diag;
pub mod digest;
pub mod eval;
pub mod ir;
pub mod pack;
pub mod pipeline;
pub mod proof;
pub mod store;
pub mod syntax;
pub mod value;

pub use answer::firewall::{CheckOptions, FirewallResult, HallucinationFirewall};
pub use answer::gate::{Gate, GateResult};
pub use answer::grounding::{GroundingReport, ground_tags};
pub use answer::{CitedFact, TagResolver};
pub use diag::{Diagnostic, Error, ErrorCode, Result};
pub use eval::{Budget, Derivation, EvalOptions, FactBase, FactId, Match, evaluate};
pub use ir::Program;
pub use proof::{
    CitationTable, Fact, ProofOptions, ProofSource, ProofTree, build_proof, prove_all,
    prove_request, render,
};
pub use store::{InputFact, Loaded, Loader, Provenance};
pub use value::Value;
