//! The symbolic layer of a RAG pipeline, in one call per request.
//!
//! A [`Pipeline`] holds rule packs compiled together and their base facts, evaluated
//! once into a [`SharedBase`] shared by every request (and every thread). Per request
//! ([`Pipeline::answer`]):
//!
//! 1. **Overlay** the request's retrieved evidence (hyperedges through the packs'
//!    table mappings, or input facts): only its consequences are computed; the base is
//!    neither copied nor re-evaluated ([`SharedBase::overlay`]).
//! 2. **Prove** the requested goals (pack goals by name, or patterns) over base and
//!    overlay. Conclusions are renumbered in one tag namespace per request, so no
//!    `STEP-n` names two facts across the request's proofs. An unproved goal gets a
//!    why-not ([`WhyNot`]): the rule that came closest and the premise it missed, or
//!    the fact that blocked its negation, with that fact's proof so it can be cited.
//! 3. **Render** the tagged context block: every proof line, with the table, index,
//!    document and span of each stored fact.
//! 4. **Generate** an answer with a [`Generator`] (deterministic and offline by
//!    default; an OpenAI-compatible client with the `openai` feature).
//! 5. **Check** the answer against the request's tags with the hallucination
//!    firewall, per [`Mode`]: `strict` (a proof is required and every kept sentence
//!    must say what its cited facts say), `standard` (citations must be allowed tags)
//!    or `audit` (report every verdict, strip nothing).
//!
//! The [`Answer`] carries the answer as kept, the proofs, the why-nots, the context,
//! the firewall's `as_dict()`, per-claim verdicts, overlay statistics and timings;
//! it serialises to JSON.
//!
//! ```
//! use prooflog::pipeline::{Mode, Pipeline, Request};
//! use prooflog::store::Hyperedge;
//!
//! # fn main() -> prooflog::Result<()> {
//! let pipeline = Pipeline::from_hyperedges(vec![prooflog::bundled::default_pack()], &[])?
//!     .with_mode(Mode::Strict);
//! let answer = pipeline.answer(
//!     &Request::new("threatens(42, zone)").evidence([
//!         Hyperedge::new("DRONES", vec![42.into(), 9.into()]),
//!         Hyperedge::new("DRONES", vec![42.into(), 7.into()]),
//!         Hyperedge::new("SIGHTINGS", vec![9.into()])
//!             .attr("zone", "airport")
//!             .conf(0.85)
//!             .from_doc("radar-log-7", 120, 176),
//!     ]),
//! )?;
//! assert!(answer.proved());
//! assert!(answer.answer.starts_with("Group 42 threatens zone airport [STEP-1]."));
//! assert!(answer.context.contains("doc radar-log-7 chars 120-176"));
//! # Ok(())
//! # }
//! ```

mod context;
mod generate;
mod tags;
mod whynot;

use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::answer::firewall::{CheckOptions, HallucinationFirewall, SentenceKind};
use crate::diag::{Diagnostic, ErrorCode, Result};
use crate::eval::{EvalOptions, OverlayStats, SharedBase};
use crate::pack::{Pack, PackSet};
use crate::proof::{Fact, ProofOptions, ProofTree, build_proof, prove_all};
use crate::store::{Hyperedge, InputFact};

pub use context::origin;
#[cfg(feature = "openai")]
pub use generate::OpenAiClient;
pub use generate::{
    ExtractiveGenerator, FixedGenerator, Generator, Prompt, SYSTEM_PROMPT, WithExtraSentence,
    user_message,
};
pub use whynot::{Blocker, RuleRef, WhyNot, why_not};

/// How strictly an answer is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A proof is required (no proved goal: the firewall abstains), and every cited
    /// sentence must follow from the verbalisations of the facts it cites.
    Strict,
    /// Every factual sentence must cite tags of the request's proofs.
    #[default]
    Standard,
    /// Check and report every sentence, strip nothing: the answer is kept as written.
    Audit,
}

impl Mode {
    /// `strict`, `standard` or `audit`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Strict => "strict",
            Mode::Standard => "standard",
            Mode::Audit => "audit",
        }
    }
}

impl FromStr for Mode {
    type Err = crate::diag::Error;

    fn from_str(s: &str) -> Result<Mode> {
        match s {
            "strict" => Ok(Mode::Strict),
            "standard" => Ok(Mode::Standard),
            "audit" => Ok(Mode::Audit),
            other => Err(
                Diagnostic::new(ErrorCode::Usage, format!("unknown mode `{other}`"))
                    .with_help("modes: strict, standard, audit")
                    .into(),
            ),
        }
    }
}

/// One request: its goals, the evidence retrieved for it, and optionally the
/// question in the user's words and a mode.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The user's question (default: the goals' question templates, filled in).
    pub question: Option<String>,
    /// Goals: pack goal names (`threatens`, `drones/threatens`) or patterns
    /// (`threatens(42, zone)`).
    pub goals: Vec<String>,
    /// Evidence retrieved for this request, as stored hyperedges.
    pub evidence: Vec<Hyperedge>,
    /// Evidence retrieved for this request, as input facts.
    pub facts: Vec<InputFact>,
    /// Overrides the pipeline's mode.
    pub mode: Option<Mode>,
}

impl Request {
    /// A request for one goal.
    pub fn new(goal: impl Into<String>) -> Request {
        Request {
            goals: vec![goal.into()],
            ..Request::default()
        }
    }

    /// The same request with another goal.
    pub fn goal(mut self, goal: impl Into<String>) -> Request {
        self.goals.push(goal.into());
        self
    }

    /// The same request with the user's question.
    pub fn question(mut self, question: impl Into<String>) -> Request {
        self.question = Some(question.into());
        self
    }

    /// The same request with retrieved hyperedges.
    pub fn evidence(mut self, evidence: impl IntoIterator<Item = Hyperedge>) -> Request {
        self.evidence.extend(evidence);
        self
    }

    /// The same request with retrieved input facts.
    pub fn facts(mut self, facts: impl IntoIterator<Item = InputFact>) -> Request {
        self.facts.extend(facts);
        self
    }

    /// The same request checked in this mode.
    pub fn mode(mut self, mode: Mode) -> Request {
        self.mode = Some(mode);
        self
    }
}

/// What the request found about one goal.
#[derive(Debug, Clone, Serialize)]
pub struct GoalOutcome {
    /// `goal-1`, `goal-2`, … in request order.
    pub id: String,
    /// The goal pattern.
    pub goal: String,
    /// Its question.
    pub question: String,
    /// Whether some fact matched it.
    pub proved: bool,
    /// One proof per matching fact (ids `proof-<k>`, `#m` per match of a pattern).
    pub proofs: Vec<ProofTree>,
    /// Why it is not proved.
    pub why_not: Option<WhyNot>,
    /// The proof of the fact that blocked it, when one did (id `why-not-<k>`).
    pub blocker_proof: Option<ProofTree>,
}

/// The firewall's verdict on one sentence of the answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimVerdict {
    /// The sentence.
    pub text: String,
    /// `supported`, `stripped`, `glue` or `unverified`.
    pub verdict: String,
    /// Whether it is in the answer as kept.
    pub kept: bool,
    /// The tags it cites.
    pub tags: Vec<String>,
    /// Why it was (or, in audit mode, would have been) stripped.
    pub reason: Option<String>,
}

/// Where a request's time went, in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Timings {
    /// Computing the overlay (evidence mapping included).
    pub overlay_us: u64,
    /// Building proofs and why-nots.
    pub prove_us: u64,
    /// Rendering the context block.
    pub context_us: u64,
    /// The generator.
    pub generate_us: u64,
    /// The firewall.
    pub check_us: u64,
    /// The whole request.
    pub total_us: u64,
}

fn us(d: Duration) -> u64 {
    d.as_micros() as u64
}

/// The result of one request.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// The question answered.
    pub question: String,
    /// The mode it was checked in.
    pub mode: Mode,
    /// Which generator wrote it.
    pub generator: String,
    /// The answer as kept (in audit mode, as written).
    pub answer: String,
    /// The answer as the generator wrote it.
    pub raw_answer: String,
    /// Per goal: proofs or why-not.
    pub goals: Vec<GoalOutcome>,
    /// The tagged context block the generator read.
    pub context: String,
    /// The firewall's summary (`as_dict()`).
    pub firewall: serde_json::Value,
    /// Per sentence of the raw answer.
    pub claims: Vec<ClaimVerdict>,
    /// What the overlay computed.
    pub overlay: OverlayStats,
    /// Where the time went.
    pub timings: Timings,
}

impl Answer {
    /// Every proof of the request, why-not blockers included.
    pub fn proofs(&self) -> impl Iterator<Item = &ProofTree> {
        self.goals
            .iter()
            .flat_map(|g| g.proofs.iter().chain(&g.blocker_proof))
    }

    /// Whether some goal was proved.
    pub fn proved(&self) -> bool {
        self.goals.iter().any(|g| g.proved)
    }

    /// The sentences the firewall stripped (or, in audit mode, would have).
    pub fn stripped(&self) -> impl Iterator<Item = &ClaimVerdict> {
        self.claims.iter().filter(|c| c.verdict == "stripped")
    }

    /// The answer as pretty-printed JSON.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// Rule packs, their shared base, a generator and a mode: the symbolic layer of a
/// RAG pipeline. `Send + Sync`: share it (`Arc`) and answer requests from many
/// threads.
pub struct Pipeline {
    packs: PackSet,
    base: Arc<SharedBase>,
    generator: Arc<dyn Generator>,
    mode: Mode,
    options: EvalOptions,
    proof_limit: usize,
}

impl Pipeline {
    /// Compile `packs` and evaluate their base: the packs' own facts and
    /// `base_evidence`, once.
    pub fn new(packs: PackSet, base_evidence: &[InputFact]) -> Result<Pipeline> {
        let options = EvalOptions::default().with_provenance(true);
        let facts = packs.evaluate(base_evidence, &options)?;
        Ok(Pipeline {
            packs,
            base: Arc::new(SharedBase::new(facts)?),
            generator: Arc::new(ExtractiveGenerator::default()),
            mode: Mode::default(),
            options,
            proof_limit: 5,
        })
    }

    /// [`Pipeline::new`] with the base evidence as stored hyperedges.
    pub fn from_hyperedges(packs: Vec<Pack>, base: &[Hyperedge]) -> Result<Pipeline> {
        let set = PackSet::new(packs)?;
        let facts = set.facts_of(base)?;
        Pipeline::new(set, &facts)
    }

    /// The same pipeline with another generator.
    pub fn with_generator(mut self, generator: impl Generator + 'static) -> Pipeline {
        self.generator = Arc::new(generator);
        self
    }

    /// The same pipeline with a shared generator.
    pub fn with_shared_generator(mut self, generator: Arc<dyn Generator>) -> Pipeline {
        self.generator = generator;
        self
    }

    /// The same pipeline checking in `mode` by default.
    pub fn with_mode(mut self, mode: Mode) -> Pipeline {
        self.mode = mode;
        self
    }

    /// The same pipeline with these limits (budget, deadline) on each overlay.
    pub fn with_eval_options(mut self, options: EvalOptions) -> Pipeline {
        self.options = options.with_provenance(true);
        self
    }

    /// At most this many proofs per goal pattern (default 5).
    pub fn with_proof_limit(mut self, limit: usize) -> Pipeline {
        self.proof_limit = limit.max(1);
        self
    }

    /// The packs.
    pub fn packs(&self) -> &PackSet {
        &self.packs
    }

    /// The shared base.
    pub fn base(&self) -> &Arc<SharedBase> {
        &self.base
    }

    /// The same packs, generator and settings over a base extended by `evidence`: only
    /// the evidence's consequences are computed ([`FactBase::extend`](crate::eval::FactBase::extend)),
    /// not the whole base again. `self` is unchanged, so requests in flight on it keep
    /// a consistent base; a service swaps the new pipeline in when it is ready. The
    /// evidence is numbered after the base's largest `edge_idx` unless it gives its own.
    pub fn with_base_evidence(
        &self,
        evidence: &[InputFact],
        options: &EvalOptions,
    ) -> Result<Pipeline> {
        let options = options.clone().with_provenance(true);
        let facts = self.base.facts().extend(evidence, &options)?;
        Ok(Pipeline {
            packs: self.packs.clone(),
            base: Arc::new(SharedBase::new(facts)?),
            generator: Arc::clone(&self.generator),
            mode: self.mode,
            options: self.options.clone(),
            proof_limit: self.proof_limit,
        })
    }

    /// Answer one request (see the module documentation).
    pub fn answer(&self, request: &Request) -> Result<Answer> {
        self.answer_with(request, &self.options, self.generator.as_ref())
    }

    /// [`Pipeline::answer`] with this request's own limits (a budget, a deadline) on
    /// its overlay and its own generator (e.g. a [`FixedGenerator`] holding an answer
    /// written elsewhere, to be checked).
    pub fn answer_with(
        &self,
        request: &Request,
        options: &EvalOptions,
        generator: &dyn Generator,
    ) -> Result<Answer> {
        let options = options.clone().with_provenance(true);
        let started = Instant::now();
        if request.goals.is_empty() {
            return Err(
                Diagnostic::new(ErrorCode::Usage, "the request names no goal")
                    .with_help(format!(
                        "goals of the loaded packs: {}",
                        self.packs
                            .goals()
                            .map(|(_, g)| g.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                    .into(),
            );
        }
        let goals = request
            .goals
            .iter()
            .map(|g| self.packs.request_goal(g))
            .collect::<Result<Vec<_>>>()?;
        let mode = request.mode.unwrap_or(self.mode);

        // 1. Overlay.
        let t = Instant::now();
        let mut evidence = self.packs.facts_of(&request.evidence)?;
        evidence.extend(request.facts.iter().cloned());
        let overlay = self.base.overlay(&evidence, &options)?;
        let overlay_us = us(t.elapsed());

        // 2. Prove, in one tag namespace.
        let t = Instant::now();
        let mut space = tags::TagSpace::default();
        let mut outcomes = Vec::with_capacity(goals.len());
        for (i, g) in goals.iter().enumerate() {
            let id = format!("proof-{}", i + 1);
            let options = ProofOptions::new(&id);
            let mut proofs = if g.goal.is_ground() {
                let tree = build_proof(&Fact::from_goal(&g.goal)?, &overlay, &options)?;
                if tree.is_proved() {
                    vec![tree]
                } else {
                    Vec::new()
                }
            } else {
                prove_all(&g.goal, &overlay, &options, Some(self.proof_limit))?
            };
            for tree in &mut proofs {
                space.renumber(tree);
            }
            let (why_not, blocker_proof) = if proofs.is_empty() {
                let w = whynot::why_not(overlay.facts(), &g.goal);
                let proof = match w.blocking_fact() {
                    Some(f) => {
                        let fact = Fact::new(
                            overlay.program().relation(f.rel).name.clone(),
                            overlay.args(f),
                        );
                        let id = format!("why-not-{}", i + 1);
                        let mut tree = build_proof(&fact, &overlay, &ProofOptions::new(&id))?;
                        space.renumber(&mut tree);
                        Some(tree)
                    }
                    None => None,
                };
                (Some(w), proof)
            } else {
                (None, None)
            };
            outcomes.push(GoalOutcome {
                id: format!("goal-{}", i + 1),
                goal: crate::proof::goal_text(&g.goal),
                question: g.question.clone(),
                proved: !proofs.is_empty(),
                proofs,
                why_not,
                blocker_proof,
            });
        }
        let prove_us = us(t.elapsed());

        // 3. Context.
        let t = Instant::now();
        let question = request.question.clone().unwrap_or_else(|| {
            goals
                .iter()
                .map(|g| g.question.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        });
        let context = context::render(&question, &outcomes);
        let context_us = us(t.elapsed());

        // 4. Generate.
        let t = Instant::now();
        let proofs: Vec<ProofTree> = outcomes
            .iter()
            .flat_map(|g| g.proofs.iter().cloned())
            .collect();
        let why_not: Vec<(WhyNot, Option<ProofTree>)> = outcomes
            .iter()
            .filter_map(|g| g.why_not.clone().map(|w| (w, g.blocker_proof.clone())))
            .collect();
        let user = user_message(&question, &context);
        let prompt = Prompt {
            system: SYSTEM_PROMPT,
            user: &user,
            question: &question,
            context: &context,
            proofs: &proofs,
            why_not: &why_not,
        };
        let raw = generator.generate(&prompt)?;
        let generate_us = us(t.elapsed());

        // 5. Check.
        let t = Instant::now();
        let all: Vec<ProofTree> = outcomes
            .iter()
            .flat_map(|g| g.proofs.iter().chain(&g.blocker_proof).cloned())
            .collect();
        let mut allowed = std::collections::BTreeSet::new();
        for tree in &all {
            allowed.extend(tree.evidence_tags());
        }
        for (w, _) in &why_not {
            let mut cur = Some(w);
            while let Some(x) = cur {
                allowed.extend(x.rule.as_ref().map(|r| r.tag.clone()));
                cur = x.because.as_deref();
            }
        }
        let proved = outcomes.iter().any(|g| g.proved);
        let result = match mode {
            Mode::Strict => HallucinationFirewall::new()
                .with_gate_verification(&all)
                .check(
                    &raw,
                    &allowed,
                    &CheckOptions::new().proved(proved).require_proof(true),
                ),
            Mode::Standard | Mode::Audit => HallucinationFirewall::new().check(
                &raw,
                &allowed,
                &CheckOptions::new().proved(proved),
            ),
        };
        let check_us = us(t.elapsed());
        let claims = result
            .sentences
            .iter()
            .map(|s| ClaimVerdict {
                text: s.text.clone(),
                verdict: match s.kind {
                    SentenceKind::Supported => "supported",
                    SentenceKind::Stripped => "stripped",
                    SentenceKind::Glue => "glue",
                    SentenceKind::Layout => "layout",
                    SentenceKind::Unverified => "unverified",
                }
                .to_string(),
                kept: mode == Mode::Audit || s.kept(),
                tags: s.tags.clone(),
                reason: s.reason.as_ref().map(ToString::to_string),
            })
            .collect();
        let answer = if mode == Mode::Audit {
            raw.clone()
        } else {
            result.answer.clone()
        };
        Ok(Answer {
            question,
            mode,
            generator: generator.name(),
            answer,
            raw_answer: raw,
            goals: outcomes,
            context,
            firewall: result.as_dict(),
            claims,
            overlay: overlay.stats().clone(),
            timings: Timings {
                overlay_us,
                prove_us,
                context_us,
                generate_us,
                check_us,
                total_us: us(started.elapsed()),
            },
        })
    }
}

#[cfg(test)]
mod tests;
