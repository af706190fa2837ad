//! Python bindings of prooflog (the `prooflog._prooflog` extension module; the Python
//! package `prooflog` re-exports it).
//!
//! A `Pack` is a `Pipeline`: rule packs compiled together with their base evaluated
//! once. `ask` and `prove` take the request's evidence as Python dicts (hyperedges
//! with a `table`, fact records with a `predicate`), compute it as an overlay on the
//! shared base with the GIL released, and return the library's JSON forms as Python
//! dicts. `check` and `gate` are the answer checkers. Errors are `ProoflogError`
//! (a `ValueError`) with the project's stable error `code`.

use std::path::PathBuf;
use std::sync::Arc;

use prooflog::answer::firewall::{CheckOptions, HallucinationFirewall, canonical_tag};
use prooflog::pack::PackSet;
use prooflog::pipeline::{ExtractiveGenerator, FixedGenerator, Generator, Mode, Pipeline, Request};
use prooflog::store::{FactRecord, Hyperedge, InputFact};
use prooflog::{Diagnostic, ErrorCode, EvalOptions, Fact, ProofOptions, ProofTree};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyModule;

pyo3::create_exception!(
    prooflog,
    ProoflogError,
    PyValueError,
    "A prooflog error: `code` is the stable error code (`bad_input`, `unknown_relation`, …), the message says what is wrong and how to fix it."
);

/// A library error as a Python exception with its code.
fn error(e: prooflog::Error) -> PyErr {
    let d = e.primary().clone();
    let mut message = d.message.clone();
    if let Some(help) = &d.help {
        message.push_str(" (help: ");
        message.push_str(help);
        message.push(')');
    }
    let err = ProoflogError::new_err(message);
    Python::attach(|py| {
        let _ = err.value(py).setattr("code", d.code.as_str());
    });
    err
}

fn bad_input(message: impl Into<String>) -> PyErr {
    error(Diagnostic::new(ErrorCode::BadInput, message).into())
}

/// A Python value as JSON, through the standard library's `json` module.
fn to_json(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<serde_json::Value> {
    let text: String = py
        .import("json")?
        .call_method1("dumps", (value,))
        .map_err(|e| bad_input(format!("{what} is not JSON data: {e}")))?
        .extract()?;
    serde_json::from_str(&text).map_err(|e| bad_input(format!("{what}: {e}")))
}

/// JSON as a Python value (dicts, lists, str, int, float, bool, None).
fn from_json(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

fn serialise<T: serde::Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| {
        error(
            Diagnostic::new(
                ErrorCode::Internal,
                format!("cannot serialise the result: {e}"),
            )
            .into(),
        )
    })
}

/// Evidence dicts as hyperedges (with a `table`) and input facts (with a `predicate`).
fn evidence(
    py: Python<'_>,
    packs: &PackSet,
    items: Option<&Bound<'_, PyAny>>,
) -> PyResult<(Vec<Hyperedge>, Vec<InputFact>)> {
    let Some(items) = items else {
        return Ok((Vec::new(), Vec::new()));
    };
    let serde_json::Value::Array(items) = to_json(py, items, "evidence")? else {
        return Err(bad_input("evidence must be a list of dicts"));
    };
    let mut edges = Vec::new();
    let mut facts = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        if item.get("predicate").is_some() {
            let record: FactRecord = serde_json::from_value(item)
                .map_err(|e| bad_input(format!("evidence[{i}]: {e}")))?;
            facts.push(
                record
                    .to_input(packs.program(), &format!("evidence[{i}]"))
                    .map_err(error)?,
            );
        } else {
            let edge: Hyperedge = serde_json::from_value(item)
                .map_err(|e| bad_input(format!("evidence[{i}]: {e}")))?;
            edges.push(edge);
        }
    }
    Ok((edges, facts))
}

/// Goals: one string or a list of them.
fn goals(value: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(one) = value.extract::<String>() {
        return Ok(vec![one]);
    }
    value
        .extract::<Vec<String>>()
        .map_err(|_| bad_input("goals must be a string or a list of strings"))
}

/// Rule packs compiled together, with their base evaluated once: the symbolic layer
/// of a RAG pipeline. Immutable and shareable between threads.
#[pyclass(module = "prooflog", frozen)]
struct Pack {
    pipeline: Arc<Pipeline>,
}

impl Pack {
    fn build(
        py: Python<'_>,
        packs: Vec<prooflog::pack::Pack>,
        base: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Pack> {
        let set = PackSet::new(packs).map_err(error)?;
        let (edges, mut facts) = evidence(py, &set, base)?;
        let mut all = set.facts_of(&edges).map_err(error)?;
        all.append(&mut facts);
        let pipeline = py.detach(move || Pipeline::new(set, &all)).map_err(error)?;
        Ok(Pack {
            pipeline: Arc::new(pipeline),
        })
    }
}

#[pymethods]
impl Pack {
    /// Load rule pack directories (each with a `pack.ron`) and evaluate their base:
    /// their own facts and `base` (hyperedge or fact dicts).
    #[staticmethod]
    #[pyo3(signature = (*dirs, base=None))]
    fn load(py: Python<'_>, dirs: Vec<PathBuf>, base: Option<&Bound<'_, PyAny>>) -> PyResult<Pack> {
        if dirs.is_empty() {
            return Err(error(
                Diagnostic::new(ErrorCode::Usage, "Pack.load needs at least one directory")
                    .with_help("Pack.default() is the embedded drone pack")
                    .into(),
            ));
        }
        let packs = dirs
            .iter()
            .map(prooflog::pack::Pack::load)
            .collect::<prooflog::Result<Vec<_>>>()
            .map_err(error)?;
        Pack::build(py, packs, base)
    }

    /// The embedded default pack (drone threat assessment), with `base` evidence.
    #[staticmethod]
    #[pyo3(signature = (base=None))]
    fn default(py: Python<'_>, base: Option<&Bound<'_, PyAny>>) -> PyResult<Pack> {
        Pack::build(py, vec![prooflog::bundled::default_pack()], base)
    }

    /// The names of the packs.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.pipeline
            .packs()
            .packs()
            .iter()
            .map(|p| p.name().to_string())
            .collect()
    }

    /// Each pack as `prooflog pack list` describes it (name, version, rules, tables,
    /// goals, samples).
    fn describe(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let info: Vec<_> = self
            .pipeline
            .packs()
            .packs()
            .iter()
            .map(prooflog::pack::Pack::describe)
            .collect();
        from_json(py, &serialise(&info)?)
    }

    /// A new pack whose base also holds `evidence` (only its consequences are
    /// computed); this one is unchanged.
    fn with_evidence(&self, py: Python<'_>, evidence: &Bound<'_, PyAny>) -> PyResult<Pack> {
        let (edges, mut facts) = self::evidence(py, self.pipeline.packs(), Some(evidence))?;
        let mut all = self.pipeline.packs().facts_of(&edges).map_err(error)?;
        all.append(&mut facts);
        let pipeline = Arc::clone(&self.pipeline);
        let next = py
            .detach(move || pipeline.with_base_evidence(&all, &EvalOptions::default()))
            .map_err(error)?;
        Ok(Pack {
            pipeline: Arc::new(next),
        })
    }

    /// Answer goals through the whole pipeline: `evidence` as an overlay on the
    /// shared base, proofs or why-nots, the context block, an answer (`answer`, a
    /// model's text, or else the extractive generator's) checked by the firewall in
    /// `mode` (`strict`, `standard`, `audit`). Returns the pipeline's result as a dict.
    #[pyo3(signature = (goals, evidence=None, answer=None, mode=None, question=None))]
    fn ask(
        &self,
        py: Python<'_>,
        goals: &Bound<'_, PyAny>,
        evidence: Option<&Bound<'_, PyAny>>,
        answer: Option<String>,
        mode: Option<String>,
        question: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let (edges, facts) = self::evidence(py, self.pipeline.packs(), evidence)?;
        let mut request = Request {
            goals: self::goals(goals)?,
            question,
            evidence: edges,
            facts,
            ..Request::default()
        };
        if let Some(mode) = mode {
            request.mode = Some(mode.parse::<Mode>().map_err(error)?);
        }
        let pipeline = Arc::clone(&self.pipeline);
        let text = py.detach(move || -> prooflog::Result<String> {
            let generator: Box<dyn Generator> = match answer {
                Some(text) => Box::new(FixedGenerator(text)),
                None => Box::new(ExtractiveGenerator::default()),
            };
            let answer =
                pipeline.answer_with(&request, &EvalOptions::default(), generator.as_ref())?;
            serde_json::to_string(&answer).map_err(|e| {
                Diagnostic::new(
                    ErrorCode::Internal,
                    format!("cannot serialise the answer: {e}"),
                )
                .into()
            })
        });
        from_json(py, &text.map_err(error)?)
    }

    /// The proof of `goal` over the base and `evidence`, as a ProofTree dict: for a
    /// ground goal its proof (`status` `"unproved"` when it does not hold); for a
    /// pattern (`threatens(42, zone)`), the proof of its first match, or None.
    #[pyo3(signature = (goal, evidence=None, proof_id="proof-1"))]
    fn prove(
        &self,
        py: Python<'_>,
        goal: &str,
        evidence: Option<&Bound<'_, PyAny>>,
        proof_id: &str,
    ) -> PyResult<Py<PyAny>> {
        let mut proofs = self.proofs(py, goal, evidence, proof_id, 1)?;
        match proofs.pop() {
            Some(tree) => from_json(py, &serialise(&tree)?),
            None => Ok(py.None()),
        }
    }

    /// Every proof of a pattern's matches (at most `limit`), as ProofTree dicts.
    #[pyo3(signature = (goal, evidence=None, limit=5, proof_id="proof-1"))]
    fn prove_all(
        &self,
        py: Python<'_>,
        goal: &str,
        evidence: Option<&Bound<'_, PyAny>>,
        limit: usize,
        proof_id: &str,
    ) -> PyResult<Py<PyAny>> {
        let proofs = self.proofs(py, goal, evidence, proof_id, limit.max(1))?;
        from_json(py, &serialise(&proofs)?)
    }

    fn __repr__(&self) -> String {
        format!("Pack({})", self.names().join(", "))
    }
}

impl Pack {
    fn proofs(
        &self,
        py: Python<'_>,
        goal: &str,
        evidence: Option<&Bound<'_, PyAny>>,
        proof_id: &str,
        limit: usize,
    ) -> PyResult<Vec<ProofTree>> {
        let (edges, mut facts) = self::evidence(py, self.pipeline.packs(), evidence)?;
        let pipeline = Arc::clone(&self.pipeline);
        let (goal, id) = (goal.to_string(), proof_id.to_string());
        py.detach(move || -> prooflog::Result<Vec<ProofTree>> {
            let goal = pipeline.packs().request_goal(&goal)?.goal;
            let mut inputs = pipeline.packs().facts_of(&edges)?;
            inputs.append(&mut facts);
            let overlay = pipeline.base().overlay(&inputs, &EvalOptions::default())?;
            let options = ProofOptions::new(&id);
            if goal.is_ground() {
                Ok(vec![prooflog::build_proof(
                    &Fact::from_goal(&goal)?,
                    &overlay,
                    &options,
                )?])
            } else {
                prooflog::prove_all(&goal, &overlay, &options, Some(limit))
            }
        })
        .map_err(error)
    }
}

/// The hallucination firewall: keep only the sentences of `answer` that cite tags of
/// `proofs` (ProofTree dicts) or `allowed`, and, with `verify_content`, say what the
/// facts they cite say. Returns the firewall's dict with the kept `answer` (and
/// `sentences`, each sentence's verdict, with `explain`).
#[pyfunction]
#[pyo3(signature = (answer, proofs=None, verify_content=true, allowed=None, require_proof=false, proved=None, explain=false))]
#[allow(clippy::too_many_arguments)]
fn check(
    py: Python<'_>,
    answer: String,
    proofs: Option<&Bound<'_, PyAny>>,
    verify_content: bool,
    allowed: Option<Vec<String>>,
    require_proof: bool,
    proved: Option<bool>,
    explain: bool,
) -> PyResult<Py<PyAny>> {
    let trees: Vec<ProofTree> = match proofs {
        None => Vec::new(),
        Some(p) => {
            let json = to_json(py, p, "proofs")?;
            let items = match json {
                serde_json::Value::Array(items) => items,
                one => vec![one],
            };
            items
                .into_iter()
                .enumerate()
                .map(|(i, v)| {
                    serde_json::from_value(v)
                        .map_err(|e| bad_input(format!("proofs[{i}]: not a ProofTree: {e}")))
                })
                .collect::<PyResult<_>>()?
        }
    };
    let mut tags: std::collections::BTreeSet<String> =
        trees.iter().flat_map(ProofTree::evidence_tags).collect();
    for t in allowed.unwrap_or_default() {
        tags.insert(
            canonical_tag(t.trim())
                .ok_or_else(|| bad_input(format!("`{t}` is not a citation tag")))?,
        );
    }
    if tags.is_empty() && trees.is_empty() {
        return Err(bad_input("give the allowed tags as proofs or allowed"));
    }
    let proved = proved.unwrap_or(trees.is_empty() || trees.iter().any(ProofTree::is_proved));
    let verify = verify_content && !trees.is_empty();
    let text = py.detach(move || -> PyResult<String> {
        let mut firewall = HallucinationFirewall::new();
        if verify {
            firewall = firewall.with_gate_verification(&trees);
        }
        let result = firewall.check(
            &answer,
            &tags,
            &CheckOptions::new()
                .proved(proved)
                .require_proof(require_proof),
        );
        let mut out = result.as_dict();
        out["answer"] = serde_json::Value::String(result.answer.clone());
        if explain {
            out["sentences"] = serde_json::to_value(&result.sentences).unwrap_or_default();
        }
        serialise(&out)
    })?;
    from_json(py, &text)
}

/// The faithfulness gate: which claims of `answer` follow from one of `passages`.
/// Returns the gate's dict with per-claim verdicts.
#[pyfunction]
fn gate(py: Python<'_>, answer: String, passages: Vec<String>) -> PyResult<Py<PyAny>> {
    if passages.is_empty() {
        return Err(bad_input("give at least one passage"));
    }
    let text = py.detach(move || serialise(&prooflog::Gate::check(&answer, &passages)))?;
    from_json(py, &text)
}

/// The extension module.
#[pymodule]
fn _prooflog(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Pack>()?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(gate, m)?)?;
    m.add("ProoflogError", m.py().get_type::<ProoflogError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
