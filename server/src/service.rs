//! The service's state and what each endpoint does, as plain (blocking) functions:
//! the HTTP layer (`routes.rs`) runs them on the blocking pool.
//!
//! The pipeline (packs, shared base, generator) sits behind an [`ArcSwap`]: a request
//! takes a snapshot (`load_full`) and keeps it to the end, so it sees one consistent
//! base even while evidence is added. Adding evidence builds the extended pipeline
//! beside the current one (only the evidence's consequences are computed), commits
//! the evidence to the store, and only then swaps the new pipeline in and
//! acknowledges. Per-request evidence is an overlay on the snapshot's base: it is
//! never written into the base, so no request sees another's.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use prooflog::answer::firewall::{CheckOptions, HallucinationFirewall, canonical_tag};
use prooflog::answer::grounding::{GroundingOptions, GroundingThresholds, ground_tags};
use prooflog::answer::{CitedFact, TagResolver};
use prooflog::pack::{PackInfo, PackSet};
use prooflog::pipeline::{Answer, ExtractiveGenerator, FixedGenerator, Generator, Mode, Pipeline};
use prooflog::proof::verbalise;
use prooflog::store::{EdgeOwners, InputFact};
use prooflog::{Budget, EvalOptions, Fact, ProofOptions, ProofTree, Value};

use crate::api::{
    AskRequest, CheckRequest, Evidence, EvidenceResponse, FactRecord, GateRequest, GroundRequest,
    PacksResponse, ProveRequest, ProveResponse,
};
use crate::error::ApiError;
use crate::metrics::Metrics;
use crate::store::EvidenceStore;

/// Limits on one request.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest request body, in bytes (default 16 MiB).
    pub max_body_bytes: usize,
    /// Most evidence records (hyperedges and facts) in one request (default 100,000).
    pub max_records: usize,
    /// Most facts rules may derive in one request's overlay (default 1,000,000).
    pub max_derived_facts: usize,
    /// Most rounds one stratum may take in one request's overlay (default: the
    /// library's, a million).
    pub max_rounds: Option<u32>,
    /// Time for one request's evaluation and checks (default 10 s); past it the
    /// evaluation stops with `budget_exceeded`.
    pub timeout: Duration,
    /// Evaluations run at once; more requests wait their turn (default: twice the
    /// available cores).
    pub max_evaluations: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_body_bytes: 16 << 20,
            max_records: 100_000,
            max_derived_facts: 1_000_000,
            max_rounds: None,
            timeout: Duration::from_secs(10),
            max_evaluations: std::thread::available_parallelism()
                .map_or(2, |n| n.get() * 2)
                .max(1),
        }
    }
}

/// How a service runs.
#[derive(Debug, Clone, Default)]
pub struct ServiceConfig {
    /// Per-request limits.
    pub limits: Limits,
    /// When set, every endpoint but `/healthz` requires `Authorization: Bearer
    /// <token>`.
    pub token: Option<String>,
}

/// One running service: packs and their shared base, the evidence store, metrics.
pub struct Service {
    pipeline: ArcSwap<Pipeline>,
    store: Option<EvidenceStore>,
    /// Serialises base updates (evidence numbering, store order, swaps); holds the
    /// store's record count.
    writer: Mutex<u64>,
    /// Base evidence waiting for the writer.
    pending: Mutex<Vec<PendingEvidence>>,
    metrics: Metrics,
    config: ServiceConfig,
    pub(crate) evaluations: Arc<tokio::sync::Semaphore>,
}

impl Service {
    /// Compile `packs`, evaluate their base (their own facts and `base`), open the
    /// evidence store in `data` (if given) and replay it into the base.
    pub fn start(
        packs: PackSet,
        base: &[InputFact],
        data: Option<&Path>,
        config: ServiceConfig,
    ) -> prooflog::Result<Service> {
        let mut pipeline = Pipeline::new(packs, base)?;
        let store = data.map(EvidenceStore::open).transpose()?;
        let mut stored = 0;
        if let Some(store) = &store {
            let records = store.records()?;
            stored = records.len() as u64;
            if !records.is_empty() {
                let program = Arc::clone(pipeline.packs().program());
                let facts = records
                    .iter()
                    .enumerate()
                    .map(|(i, r)| r.to_input(&program, &format!("stored record {i}")))
                    .collect::<prooflog::Result<Vec<_>>>()?;
                pipeline = pipeline.with_base_evidence(&facts, &EvalOptions::default())?;
            }
        }
        let service = Service {
            evaluations: Arc::new(tokio::sync::Semaphore::new(
                config.limits.max_evaluations.max(1),
            )),
            pipeline: ArcSwap::from_pointee(pipeline),
            store,
            writer: Mutex::new(stored),
            pending: Mutex::new(Vec::new()),
            metrics: Metrics::default(),
            config,
        };
        service
            .metrics
            .base(base_size(&service.pipeline()), stored, false);
        Ok(service)
    }

    /// The current pipeline: a snapshot that stays consistent while it is held.
    pub fn pipeline(&self) -> Arc<Pipeline> {
        self.pipeline.load_full()
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The configuration.
    pub fn config(&self) -> &ServiceConfig {
        &self.config
    }

    /// Evaluation options for one request: its budget and deadline.
    fn options(&self) -> EvalOptions {
        let limits = &self.config.limits;
        let defaults = Budget::default();
        EvalOptions::default().with_budget(Budget {
            max_facts: Some(limits.max_derived_facts),
            max_rounds: limits.max_rounds.or(defaults.max_rounds),
            deadline: Some(Instant::now() + limits.timeout),
            timeout: Some(limits.timeout),
            ..defaults
        })
    }

    fn check_size(&self, n: usize) -> Result<(), ApiError> {
        let max = self.config.limits.max_records;
        if n > max {
            return Err(ApiError::new(
                axum::http::StatusCode::PAYLOAD_TOO_LARGE,
                prooflog::Diagnostic::new(
                    prooflog::ErrorCode::BadInput,
                    format!("the request carries {n} evidence records, more than {max}"),
                ),
            )
            .with_help("split the evidence over several requests"));
        }
        Ok(())
    }

    /// `POST /v1/ask`: the whole pipeline on one request.
    pub fn ask(&self, req: AskRequest) -> Result<Answer, ApiError> {
        let pipeline = self.pipeline();
        if req.goals.is_empty() {
            return Err(ApiError::from(prooflog::Error::from(
                prooflog::Diagnostic::new(prooflog::ErrorCode::Usage, "the request names no goal")
                    .with_help("give `goals`: pack goal names or patterns"),
            )));
        }
        let evidence = Evidence {
            evidence: req.evidence,
            facts: req.facts,
        };
        self.check_size(evidence.len())?;
        let mut request = prooflog::pipeline::Request {
            goals: req.goals,
            question: req.question,
            evidence: evidence.hyperedges()?,
            ..Default::default()
        };
        for (i, f) in evidence.facts.iter().enumerate() {
            request
                .facts
                .push(f.to_input(pipeline.packs().program(), &format!("facts[{i}]"))?);
        }
        if let Some(mode) = &req.mode {
            request.mode = Some(mode.parse::<Mode>()?);
        }
        let generator: Box<dyn Generator> = match req.answer {
            Some(text) => Box::new(FixedGenerator(text)),
            None => Box::new(ExtractiveGenerator::default()),
        };
        self.metrics.evaluating(true);
        let answer = pipeline.answer_with(&request, &self.options(), generator.as_ref());
        self.metrics.evaluating(false);
        let answer = answer?;
        self.metrics.overlay(&answer.overlay);
        Ok(answer)
    }

    /// `POST /v1/prove`: proofs of a goal over the base and the request's evidence.
    pub fn prove(&self, req: ProveRequest) -> Result<ProveResponse, ApiError> {
        let pipeline = self.pipeline();
        let evidence = Evidence {
            evidence: req.evidence,
            facts: req.facts,
        };
        self.check_size(evidence.len())?;
        let goal = pipeline.packs().request_goal(&req.goal)?.goal;
        let inputs = evidence.to_inputs(pipeline.packs())?;
        self.metrics.evaluating(true);
        let overlay = pipeline.base().overlay(&inputs, &self.options());
        self.metrics.evaluating(false);
        let overlay = overlay?;
        self.metrics.overlay(overlay.stats());
        let id = req.proof_id.unwrap_or_else(|| "proof-1".into());
        let options = ProofOptions::new(&id);
        let proofs = if goal.is_ground() {
            let tree = prooflog::build_proof(&Fact::from_goal(&goal)?, &overlay, &options)?;
            if tree.is_proved() {
                vec![tree]
            } else {
                Vec::new()
            }
        } else {
            prooflog::prove_all(
                &goal,
                &overlay,
                &options,
                Some(req.limit.unwrap_or(5).max(1)),
            )?
        };
        Ok(ProveResponse {
            goal: prooflog::proof::goal_text(&goal),
            proved: !proofs.is_empty(),
            proofs,
            overlay: overlay.stats().clone(),
        })
    }

    /// Proof JSON read back, with the packs' verbalisations attached.
    fn read_proofs(&self, proofs: &[serde_json::Value]) -> Result<Vec<ProofTree>, ApiError> {
        let pipeline = self.pipeline();
        proofs
            .iter()
            .enumerate()
            .map(|(i, v)| {
                serde_json::from_value::<ProofTree>(v.clone())
                    .map(|t| t.with_program(pipeline.packs().program()))
                    .map_err(|e| ApiError::bad_input(format!("proofs[{i}]: not a ProofTree: {e}")))
            })
            .collect()
    }

    /// `POST /v1/check`: the hallucination firewall.
    pub fn check(&self, req: CheckRequest) -> Result<serde_json::Value, ApiError> {
        if req.proofs.is_empty() && req.allowed.is_empty() {
            return Err(ApiError::bad_input(
                "give the allowed tags as `proofs` or `allowed`",
            ));
        }
        if req.verify_content && req.proofs.is_empty() {
            return Err(ApiError::bad_input(
                "`verify_content` needs `proofs`: the facts to verify against come from proofs",
            ));
        }
        let proofs = self.read_proofs(&req.proofs)?;
        let mut allowed: BTreeSet<String> = proofs.iter().flat_map(|t| t.evidence_tags()).collect();
        for tag in &req.allowed {
            allowed.insert(canonical_tag(tag.trim()).ok_or_else(|| {
                ApiError::bad_input(format!("allowed: `{tag}` is not a citation tag"))
                    .with_help("tags look like HEDGE-42, RULE-0, STEP-1 or PATTERN-3")
            })?);
        }
        let proved = req
            .proved
            .unwrap_or(proofs.is_empty() || proofs.iter().any(ProofTree::is_proved));
        let mut firewall = HallucinationFirewall::new();
        if let Some(msg) = req.abstain_message {
            firewall = firewall.with_abstain_message(msg);
        }
        if req.verify_content {
            firewall = firewall.with_gate_verification(&proofs);
        }
        let result = firewall.check(
            &req.answer,
            &allowed,
            &CheckOptions::new()
                .proved(proved)
                .require_proof(req.require_proof),
        );
        let mut out = result.as_dict();
        out["answer"] = serde_json::Value::String(result.answer.clone());
        if req.explain {
            out["sentences"] = serde_json::to_value(&result.sentences)
                .map_err(|e| ApiError::internal(format!("cannot serialise the verdicts: {e}")))?;
        }
        Ok(out)
    }

    /// `POST /v1/gate`: the faithfulness gate.
    pub fn gate(&self, req: GateRequest) -> Result<serde_json::Value, ApiError> {
        if req.passages.is_empty() {
            return Err(ApiError::bad_input("give at least one passage"));
        }
        let result = prooflog::Gate::check(&req.answer, &req.passages);
        serde_json::to_value(&result)
            .map_err(|e| ApiError::internal(format!("cannot serialise the result: {e}")))
    }

    /// `POST /v1/ground`: how well cited facts ground a claim.
    pub fn ground(&self, req: GroundRequest) -> Result<serde_json::Value, ApiError> {
        let defaults = GroundingThresholds::default();
        let thresholds = GroundingThresholds::new(
            req.deny.unwrap_or(defaults.deny),
            req.permit.unwrap_or(defaults.permit),
        )?;
        let options = GroundingOptions {
            thresholds,
            predicate_in_text: req.predicate_in_text.unwrap_or(true),
        };
        let pipeline = self.pipeline();
        let program = pipeline.packs().program();
        let mut cited = Cited {
            facts: Vec::new(),
            proofs: self.read_proofs(&req.proofs)?,
        };
        for (i, c) in req.cited.iter().enumerate() {
            let args = c
                .args
                .iter()
                .map(|v| {
                    Value::from_json(v).ok_or_else(|| {
                        ApiError::bad_input(format!(
                            "cited[{i}]: argument {v} is not a number or string"
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let rel = program
                .relation_id(&c.predicate)
                .map(|r| program.relation(r));
            let text = c.text.clone().unwrap_or_else(|| {
                verbalise(rel.and_then(|r| r.text.as_deref()), &c.predicate, &args)
            });
            let tag = canonical_tag(c.tag.trim()).unwrap_or_else(|| c.tag.trim().to_string());
            cited.facts.push(
                CitedFact::new(tag, c.predicate.clone(), args, text).with_functional_key(
                    c.functional_key
                        .clone()
                        .or_else(|| rel.and_then(|r| r.functional.clone())),
                ),
            );
        }
        let tags: Vec<String> = if req.tags.is_empty() {
            let mut tags: Vec<String> = Vec::new();
            for f in &cited.facts {
                if !tags.contains(&f.tag) {
                    tags.push(f.tag.clone());
                }
            }
            for t in &cited.proofs {
                for tag in t.evidence_tags() {
                    if !tag.starts_with("RULE-") && !tags.contains(&tag) {
                        tags.push(tag);
                    }
                }
            }
            tags
        } else {
            req.tags
                .iter()
                .map(|t| canonical_tag(t.trim()).unwrap_or_else(|| t.trim().to_string()))
                .collect()
        };
        if tags.is_empty() {
            return Err(ApiError::bad_input(
                "nothing is cited: give `cited` facts or `proofs`",
            ));
        }
        let report = ground_tags(&req.claim, &tags, &cited, &options);
        serde_json::to_value(&report)
            .map_err(|e| ApiError::internal(format!("cannot serialise the report: {e}")))
    }

    /// `POST /v1/evidence`: add evidence to the shared base, durably when the service
    /// has a store. Returns once the evidence is committed and the extended base is
    /// the one new requests see.
    ///
    /// Concurrent requests are committed together (group commit): each waits for the
    /// writer; the one that gets it takes every request waiting and commits them as
    /// one batch (one base extension, one store transaction, one swap), answering
    /// each. A request whose own records clash is refused alone.
    pub fn add_evidence(&self, evidence: Evidence) -> Result<EvidenceResponse, ApiError> {
        if evidence.is_empty() {
            return Err(ApiError::bad_input(
                "no evidence: give `evidence` (hyperedges) or `facts`",
            ));
        }
        self.check_size(evidence.len())?;
        let inputs = evidence.to_inputs(self.pipeline().packs())?;
        let (reply, answer) = std::sync::mpsc::channel();
        lock(&self.pending).push(PendingEvidence { inputs, reply });
        // One writer at a time: numbering, store order and swaps stay in step. A
        // writer that panicked left nothing half-done (the swap is last), so a
        // poisoned lock is taken over.
        let mut stored = lock(&self.writer);
        if let Ok(done) = answer.try_recv() {
            return done;
        }
        let batch = std::mem::take(&mut *lock(&self.pending));
        self.commit(&mut stored, batch);
        answer
            .try_recv()
            .unwrap_or_else(|_| Err(ApiError::internal("the evidence batch gave no answer")))
    }

    /// Number, extend, store and swap in one batch of pending requests, answering
    /// each; `stored` is the store's record count, kept by the writer.
    fn commit(&self, stored: &mut u64, batch: Vec<PendingEvidence>) {
        let current = self.pipeline();
        let program = Arc::clone(current.packs().program());
        let mut owners = BatchOwners {
            base: current.base().as_ref(),
            batch: std::collections::HashMap::new(),
            max: current.base().max_edge_idx(),
        };
        let mut accepted: Vec<(Vec<InputFact>, Sender)> = Vec::new();
        for PendingEvidence { mut inputs, reply } in batch {
            match prooflog::store::number_inputs(&program, &mut inputs, &owners) {
                Ok(()) => {
                    for f in &inputs {
                        if let Some(idx) = f.provenance.edge_idx {
                            owners.max = Some(owners.max.map_or(idx, |m| m.max(idx)));
                            owners.batch.insert(idx, f.clone());
                        }
                    }
                    accepted.push((inputs, reply));
                }
                Err(e) => {
                    let _ = reply.send(Err(e.into()));
                }
            }
        }
        if accepted.is_empty() {
            return;
        }
        let all: Vec<InputFact> = accepted
            .iter()
            .flat_map(|(inputs, _)| inputs.iter().cloned())
            .collect();
        let fail = |accepted: Vec<(Vec<InputFact>, Sender)>, e: ApiError| {
            for (_, reply) in accepted {
                let _ = reply.send(Err(e.clone()));
            }
        };
        let started = Instant::now();
        let next = match current.with_base_evidence(&all, &EvalOptions::default()) {
            Ok(next) => next,
            Err(e) => return fail(accepted, e.into()),
        };
        let extend_us = started.elapsed().as_micros() as u64;
        let records: Vec<FactRecord> = all.iter().map(|f| FactRecord::of(&program, f)).collect();
        *stored = match &self.store {
            Some(store) => match store.append(&records) {
                Ok(n) => n,
                Err(e) => return fail(accepted, e.into()),
            },
            None => *stored + records.len() as u64,
        };
        let base_facts = base_size(&next);
        self.pipeline.store(Arc::new(next));
        self.metrics.base(base_facts, *stored, true);
        for (inputs, reply) in accepted {
            let _ = reply.send(Ok(EvidenceResponse {
                accepted: inputs.len(),
                tags: inputs
                    .iter()
                    .filter_map(|f| f.provenance.edge_idx)
                    .map(|i| format!("HEDGE-{i}"))
                    .collect(),
                durable: self.store.is_some(),
                stored: *stored,
                base_facts,
                extend_us,
            }));
        }
    }

    /// `GET /v1/packs`.
    pub fn packs(&self) -> PacksResponse {
        let pipeline = self.pipeline();
        let facts = pipeline.base().facts();
        let program = facts.program();
        let input: usize = facts.input_records().count();
        let total: usize = (0..program.relations().len())
            .map(|r| facts.len(r as prooflog::ir::RelId))
            .sum();
        PacksResponse {
            packs: pipeline
                .packs()
                .packs()
                .iter()
                .map(prooflog::pack::Pack::describe)
                .collect::<Vec<PackInfo>>(),
            base_input_facts: input,
            base_derived_facts: total.saturating_sub(input),
            stored_evidence: *lock(&self.writer),
        }
    }
}

/// A lock, taken over when a holder panicked (nothing guarded is left half-done).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Where a request waiting to add base evidence gets its answer.
type Sender = std::sync::mpsc::Sender<Result<EvidenceResponse, ApiError>>;

/// A request waiting for the writer, with its typed (not yet numbered) records.
struct PendingEvidence {
    inputs: Vec<InputFact>,
    reply: Sender,
}

/// The edge indexes in use while a batch is numbered: the base's and the batch's so
/// far.
struct BatchOwners<'a> {
    base: &'a prooflog::eval::SharedBase,
    batch: std::collections::HashMap<u64, InputFact>,
    max: Option<u64>,
}

impl EdgeOwners for BatchOwners<'_> {
    fn owner(&self, idx: u64) -> Option<std::borrow::Cow<'_, InputFact>> {
        self.base
            .owner(idx)
            .or_else(|| self.batch.get(&idx).map(std::borrow::Cow::Borrowed))
    }

    fn max_index(&self) -> Option<u64> {
        self.max
    }
}

/// Facts in a pipeline's base, input and derived.
fn base_size(pipeline: &Pipeline) -> usize {
    let facts = pipeline.base().facts();
    (0..facts.program().relations().len())
        .map(|r| facts.len(r as prooflog::ir::RelId))
        .sum()
}

/// Cited facts and proofs, as one tag resolver.
struct Cited {
    facts: Vec<CitedFact>,
    proofs: Vec<ProofTree>,
}

impl TagResolver for Cited {
    fn resolve(&self, tag: &str) -> Vec<CitedFact> {
        let mut out: Vec<CitedFact> = self
            .facts
            .iter()
            .filter(|f| f.tag == tag)
            .cloned()
            .collect();
        for f in self.proofs.resolve(tag) {
            if !out
                .iter()
                .any(|o| o.predicate == f.predicate && o.args == f.args)
            {
                out.push(f);
            }
        }
        out
    }
}
