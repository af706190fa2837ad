//! `prooflog demo` and `prooflog ask`: the whole RAG pipeline from the command line.
//!
//! `demo` runs it on the embedded drone pack and prints a readable report: the
//! question, the conclusion, its proof as a tree, why the other zone is not
//! threatened, the context block, a model answer with one unsupported sentence, and
//! what the firewall kept and stripped. `ask` does the same for a user's packs,
//! evidence and goals (`--format json` prints the whole result).
//!
//! Exit codes: 0 when a goal is proved and the answer is delivered, 1 when no goal is
//! proved or the firewall abstained, 2 on bad input.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use prooflog::pack::{Pack, PackSet};
use prooflog::pipeline::{
    Answer, Blocker, ExtractiveGenerator, Generator, Mode, Pipeline, Request, WhyNot,
    WithExtraSentence,
};
use prooflog::store::{Hyperedge, InputFact, Loader, read_hyperedges};
use prooflog::{Result, render};

use crate::common::{Diagnostics, Format, fail, finish, print};

/// Checking mode (see `prooflog ask --help`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// A proof is required; every kept sentence must say what its cited facts say.
    Strict,
    /// Every factual sentence must cite tags of the request's proofs.
    Standard,
    /// Report every verdict, strip nothing.
    Audit,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Strict => Mode::Strict,
            ModeArg::Standard => Mode::Standard,
            ModeArg::Audit => Mode::Audit,
        }
    }
}

/// Which generator writes the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum GeneratorArg {
    /// Deterministic and offline: each proved fact as a cited sentence.
    #[default]
    Extractive,
    /// An OpenAI-compatible chat-completion server (--endpoint, --model).
    Openai,
}

/// Arguments of `prooflog demo`.
#[derive(Args)]
pub struct DemoArgs {
    /// Output format: a report for people (text) or the pipeline's result (json).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,

    /// Checking mode.
    #[arg(long, value_enum, default_value_t = ModeArg::Strict)]
    mode: ModeArg,
}

/// Arguments of `prooflog ask`.
#[derive(Args)]
pub struct AskArgs {
    /// A rule pack directory (holding pack.ron); repeatable, packs load together.
    /// Without any: the embedded default pack.
    #[arg(long = "pack", value_name = "DIR")]
    packs: Vec<PathBuf>,

    /// The request's evidence: hyperedge JSONL ({"table", "member_ids", …} per line)
    /// or fact JSONL ({"predicate", "args", …} per line). Repeatable.
    #[arg(long = "evidence", value_name = "FILE.jsonl")]
    evidence: Vec<PathBuf>,

    /// Evidence of the shared base, evaluated once before the request (same formats).
    /// Repeatable.
    #[arg(long = "base", value_name = "FILE.jsonl")]
    base: Vec<PathBuf>,

    /// A goal: a pack goal by name (threatens) or a pattern (threatens(42, zone)).
    /// Repeatable.
    #[arg(long = "goal", value_name = "GOAL", required = true)]
    goals: Vec<String>,

    /// The question in the user's words (default: the goals' question templates).
    #[arg(long, value_name = "TEXT")]
    question: Option<String>,

    /// Checking mode.
    #[arg(long, value_enum, default_value_t = ModeArg::Standard)]
    mode: ModeArg,

    /// Which generator writes the answer.
    #[arg(long, value_enum, default_value_t)]
    generator: GeneratorArg,

    /// The chat-completion server's API root, e.g. http://127.0.0.1:8080/v1.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8080/v1")]
    endpoint: String,

    /// The model name the server knows.
    #[arg(long, value_name = "NAME", default_value = "default")]
    model: String,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Read evidence files: hyperedges and input facts, by each file's first record.
pub fn read_evidence(set: &PackSet, files: &[PathBuf]) -> Result<(Vec<Hyperedge>, Vec<InputFact>)> {
    let mut hyperedges = Vec::new();
    let mut facts = Vec::new();
    for f in files {
        let limit = prooflog::store::DEFAULT_MAX_INPUT;
        let text = prooflog::store::read_file(f, limit, limit)?;
        let name = f.display().to_string();
        let first = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("//"))
            .unwrap_or("");
        let is_facts = serde_json::from_str::<serde_json::Value>(first)
            .ok()
            .is_some_and(|v| v.get("predicate").is_some());
        if is_facts {
            let mut loader = Loader::new();
            loader.evidence_jsonl(&name, &text)?;
            let resolved = loader.inputs().resolve(set.program())?;
            facts.extend(
                resolved
                    .into_iter()
                    .filter(|f| f.provenance.source != "program"),
            );
        } else {
            hyperedges.extend(read_hyperedges(&name, &text)?);
        }
    }
    Ok((hyperedges, facts))
}

fn generator(args: &AskArgs) -> Result<Box<dyn Generator>> {
    match args.generator {
        GeneratorArg::Extractive => Ok(Box::new(ExtractiveGenerator::default())),
        #[cfg(feature = "openai")]
        GeneratorArg::Openai => {
            let mut client = prooflog::pipeline::OpenAiClient::new(&args.endpoint, &args.model);
            if let Ok(key) = std::env::var("OPENAI_API_KEY") {
                client = client.with_api_key(key);
            }
            Ok(Box::new(client))
        }
        #[cfg(not(feature = "openai"))]
        GeneratorArg::Openai => Err(prooflog::Diagnostic::new(
            prooflog::ErrorCode::Usage,
            "this build has no OpenAI-compatible client",
        )
        .with_help("build prooflog-cli with the `openai` feature")
        .into()),
    }
}

struct Boxed(Box<dyn Generator>);

impl Generator for Boxed {
    fn name(&self) -> String {
        self.0.name()
    }
    fn generate(&self, prompt: &prooflog::pipeline::Prompt<'_>) -> Result<String> {
        self.0.generate(prompt)
    }
}

/// The packs in `dirs` loaded together (none: the embedded default pack) and the base
/// evidence of `base` as facts: the start of `ask` and of `serve`.
pub fn packs_and_base(dirs: &[PathBuf], base: &[PathBuf]) -> Result<(PackSet, Vec<InputFact>)> {
    let packs = if dirs.is_empty() {
        vec![prooflog::bundled::default_pack()]
    } else {
        dirs.iter().map(Pack::load).collect::<Result<Vec<_>>>()?
    };
    let set = PackSet::new(packs)?;
    let (base_edges, mut base_facts) = read_evidence(&set, base)?;
    base_facts.extend(set.facts_of(&base_edges)?);
    Ok((set, base_facts))
}

fn ask_inner(args: &AskArgs) -> Result<Answer> {
    let (set, base_facts) = packs_and_base(&args.packs, &args.base)?;
    let (edges, facts) = read_evidence(&set, &args.evidence)?;
    let pipeline = Pipeline::new(set, &base_facts)?
        .with_generator(Boxed(generator(args)?))
        .with_mode(args.mode.into());
    let mut request = Request {
        goals: args.goals.clone(),
        question: args.question.clone(),
        ..Request::default()
    };
    request = request.evidence(edges).facts(facts);
    pipeline.answer(&request)
}

fn exit_of(answer: &Answer) -> ExitCode {
    if answer.proved() && answer.firewall["abstained"] != serde_json::Value::Bool(true) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Run `prooflog ask`.
pub fn ask(args: AskArgs) -> ExitCode {
    let answer = match ask_inner(&args) {
        Ok(a) => a,
        Err(e) => return fail(&e, Diagnostics::for_format(Some(args.format))),
    };
    let written = match args.format {
        Format::Json => print(&(answer.to_json_pretty() + "\n")),
        Format::Text => print(&ask_text(&answer)),
    };
    finish(
        exit_of(&answer),
        written,
        Diagnostics::for_format(Some(args.format)),
    )
}

fn indent(text: &str, by: &str) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{by}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn why_not_text(w: &WhyNot, out: &mut String, depth: usize) {
    let pad = "   ".to_string() + &"  ".repeat(depth);
    match (&w.rule, &w.blocker) {
        (Some(rule), Blocker::Missing { text, .. }) => {
            let _ = writeln!(
                out,
                "{pad}that {}: rule {} [{}] needs that {text}, which is not established",
                w.text, rule.name, rule.tag
            );
        }
        (Some(rule), Blocker::Present { text, .. }) => {
            let _ = writeln!(
                out,
                "{pad}that {}: rule {} [{}] is blocked, because {text}",
                w.text, rule.name, rule.tag
            );
        }
        (Some(rule), Blocker::Condition { text }) => {
            let _ = writeln!(
                out,
                "{pad}that {}: rule {} [{}] stops at {text}",
                w.text, rule.name, rule.tag
            );
        }
        _ => {
            let _ = writeln!(out, "{pad}no rule concludes that {}", w.text);
        }
    }
    if let Some(b) = &w.because {
        why_not_text(b, out, depth + 1);
    }
}

fn conclusions(answer: &Answer, out: &mut String) {
    for g in &answer.goals {
        if g.proved {
            for t in &g.proofs {
                let root = t.root().map(|n| t.node_text(n)).unwrap_or_default();
                let tag = t.root().and_then(|n| n.tag()).unwrap_or("");
                let _ = writeln!(out, "   {root} (confidence {:.2}) [{tag}]", t.confidence);
            }
        } else {
            let _ = writeln!(out, "   {} is not proved", g.goal);
            if let Some(w) = &g.why_not {
                why_not_text(w, out, 1);
            }
            if let Some(t) = &g.blocker_proof
                && let Some(root) = t.root()
            {
                let _ = writeln!(
                    out,
                    "     the blocking fact: {} [{}]",
                    t.node_text(root),
                    root.tag().unwrap_or("")
                );
            }
        }
    }
}

fn firewall_text(answer: &Answer, out: &mut String) {
    for c in &answer.claims {
        let mark = match (c.verdict.as_str(), c.kept) {
            ("stripped", false) => "STRIPPED",
            ("stripped", true) => "FLAGGED ",
            ("supported", _) => "kept    ",
            ("unverified", _) => "kept (unverified)",
            _ => "kept (glue)",
        };
        let _ = writeln!(out, "   {mark}  {}", c.text);
        if let Some(r) = &c.reason {
            let _ = writeln!(out, "             reason: {r}");
        }
    }
    let f = &answer.firewall;
    let _ = writeln!(
        out,
        "   outcome: {}; coverage {:.2}; {} supported, {} stripped",
        f["outcome"].as_str().unwrap_or("?"),
        f["coverage"].as_f64().unwrap_or(0.0),
        f["supported_count"],
        f["stripped_count"]
    );
}

fn ask_text(answer: &Answer) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Question: {}", answer.question);
    out.push_str("Conclusions:\n");
    conclusions(answer, &mut out);
    let _ = writeln!(
        out,
        "Firewall ({} mode, generator {}):",
        answer.mode.as_str(),
        answer.generator
    );
    firewall_text(answer, &mut out);
    out.push_str("Answer:\n");
    out.push_str(&indent(&answer.answer, "   "));
    out
}

/// The unsupported sentence `prooflog demo`'s model adds to its answer: it cites a
/// real tag of the proof, but the fact behind the tag says something else.
pub const DEMO_HALLUCINATION: &str = "Drone 9 is armed and flying toward the terminal [HEDGE-101].";

/// Run `prooflog demo`.
pub fn demo(args: DemoArgs) -> ExitCode {
    match demo_inner(&args) {
        Ok((answer, report)) => {
            let written = match args.format {
                Format::Json => print(&(answer.to_json_pretty() + "\n")),
                Format::Text => print(&report),
            };
            finish(
                ExitCode::SUCCESS,
                written,
                Diagnostics::for_format(Some(args.format)),
            )
        }
        Err(e) => fail(&e, Diagnostics::for_format(Some(args.format))),
    }
}

fn demo_inner(args: &DemoArgs) -> Result<(Answer, String)> {
    use prooflog::bundled::{DEFAULT_HYPEREDGES, default_pack};
    let pack = default_pack();
    let all = read_hyperedges(DEFAULT_HYPEREDGES.name, DEFAULT_HYPEREDGES.text)?;
    // The registry and the operator log are the base; the radar log's sightings are
    // what retrieval finds for this request.
    let (sightings, base): (Vec<_>, Vec<_>) = all.into_iter().partition(|h| h.table == "SIGHTINGS");
    let pipeline = Pipeline::from_hyperedges(vec![pack], &base)?
        .with_generator(WithExtraSentence {
            inner: ExtractiveGenerator::default(),
            sentence: DEMO_HALLUCINATION.into(),
        })
        .with_mode(args.mode.into());
    let request = Request::new("threatens(42, zone)")
        .goal("threatens(42, \"harbor\")")
        .question("Which restricted zones does drone group 42 threaten?")
        .evidence(sightings.clone());
    let answer = pipeline.answer(&request)?;

    let mut out = String::new();
    out.push_str("prooflog demo: the drone threat pack (rules/drones), one request through the whole pipeline\n\n");
    let _ = writeln!(out, "1. Question\n   {}\n", answer.question);
    let base_facts = pipeline.base().facts();
    let docs: std::collections::BTreeSet<&str> = sightings
        .iter()
        .filter_map(|h| h.doc_id.as_deref())
        .collect();
    let _ = writeln!(
        out,
        "2. Evidence\n   base: {} stored records (fleet registry, operator log) and the pack's own facts, evaluated once: {} facts\n   request: {} sightings retrieved from {}, added as an overlay: {} new facts ({} derived) in {} µs; the base was not copied\n",
        base.len(),
        base_facts.stats().input_facts + base_facts.stats().derived_facts(),
        sightings.len(),
        docs.into_iter().collect::<Vec<_>>().join(", "),
        answer.overlay.new_facts,
        answer.overlay.derived_facts,
        answer.timings.overlay_us
    );
    out.push_str("3. Conclusion\n");
    conclusions(&answer, &mut out);
    out.push('\n');
    out.push_str("4. Proof\n");
    if let Some(tree) = answer.goals[0].proofs.first() {
        out.push_str(&indent(&render::text(tree), "   "));
    }
    out.push('\n');
    out.push_str("5. Context block (what the model reads)\n");
    out.push_str(&indent(&answer.context, "   "));
    out.push('\n');
    out.push_str("6. Model answer (its last sentence is not supported by the proofs)\n");
    out.push_str(&indent(&answer.raw_answer.replace(". ", ".\n"), "   "));
    out.push('\n');
    let _ = writeln!(
        out,
        "7. Firewall ({} mode: citations must be tags of the proofs{})",
        answer.mode.as_str(),
        if answer.mode == Mode::Strict {
            ", and each sentence must say what its cited facts say"
        } else {
            ""
        }
    );
    firewall_text(&answer, &mut out);
    out.push('\n');
    out.push_str("8. Answer as delivered\n");
    out.push_str(&indent(&answer.answer.replace(". ", ".\n"), "   "));
    let t = &answer.timings;
    let _ = writeln!(
        out,
        "\nTimings: overlay {} µs, proofs {} µs, context {} µs, generation {} µs, firewall {} µs, total {} µs",
        t.overlay_us, t.prove_us, t.context_us, t.generate_us, t.check_us, t.total_us
    );
    out.push_str("\nNext: prooflog ask --pack rules/org --evidence rules/org/hyperedges.jsonl --goal reports_to\n");
    Ok((answer, out))
}
