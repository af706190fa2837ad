//! `prooflog check`, `prooflog gate`, `prooflog ground`: the answer checkers.
//!
//! Proof files are read as plain JSON (a ProofTree object, or an array of them): the
//! allowed tags are every node's `rule_tag`, `step_tag` and `hedge_tag` (plus a
//! top-level `evidence_tags` list when present), and the fact a `STEP`/`HEDGE` tag
//! names is its node's `predicate` and `args`, in words its `text`, else its
//! predicate's `--texts` template filled in, else its `fact`. Reading the JSON rather
//! than the proof module's types keeps the checkers usable on proofs produced by any
//! version of the engine, or by another system.

use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::process::ExitCode;

use clap::Args;
use prooflog::answer::firewall::{HallucinationFirewall, Outcome, canonical_tag};
use prooflog::answer::gate::Gate;
use prooflog::answer::grounding::{
    Claim, GroundingOptions, GroundingReport, GroundingThresholds, ground_tags,
};
use prooflog::answer::{CitedFact, TagResolver};
use prooflog::diag::{Diagnostic, ErrorCode, Location};
use prooflog::proof::verbalise;
use prooflog::{Error, Value};
use serde_json::Value as Json;

use prooflog::value::format_confidence;

use super::common::{DEFAULT_PROGRAM, Diagnostics, Format, fail, warn};

/// Arguments of `prooflog check`.
#[derive(Args)]
pub struct CheckArgs {
    /// The answer text to check (`-` reads standard input).
    #[arg(long, value_name = "FILE")]
    answer: String,
    /// Proof JSON files (a ProofTree or an array of them) whose tags are allowed.
    #[arg(long = "proof", value_name = "FILE", num_args = 1..)]
    proofs: Vec<String>,
    /// Allowed tags, comma-separated (`HEDGE-42,RULE-0,STEP-1`); adds to the proofs'.
    #[arg(long, value_name = "TAG,…", value_delimiter = ',')]
    allowed: Vec<String>,
    /// Abstain unless a goal was proved.
    #[arg(long)]
    require_proof: bool,
    /// Treat the answer as backed by a proof (default: some `--proof` has status
    /// "proved", or only `--allowed` was given).
    #[arg(long, conflicts_with = "not_proved")]
    proved: bool,
    /// Treat the answer as not backed by a proof.
    #[arg(long)]
    not_proved: bool,
    /// Also require each cited sentence to follow from its cited facts' verbalisations
    /// (the faithfulness gate); needs `--proof`.
    #[arg(long)]
    verify_content: bool,
    /// The message returned when the firewall abstains.
    #[arg(long, value_name = "TEXT")]
    abstain_message: Option<String>,
    /// Verbalisation templates, a JSON object `{"member": "drone {1} is a member of
    /// group {0}"}` as a rule pack's `.text` directives give them. Proofs from
    /// `prooflog prove` carry each fact's words in its node's `text` field already;
    /// templates say the fact in words for nodes without one.
    #[arg(long, value_name = "FILE")]
    texts: Option<String>,
    /// Rule pack files (`.dl`) whose `.text` verbalisations and `.functional`
    /// declarations describe the cited facts, for proofs whose nodes carry no `text`
    /// (repeatable; `--texts` entries win). A warning says when the proofs were made
    /// with another pack.
    #[arg(long = "program", value_name = "FILE.dl")]
    programs: Vec<std::path::PathBuf>,
    /// Also print every sentence's verdict and reason (`sentences` in JSON; one line
    /// per sentence in text).
    #[arg(long)]
    explain: bool,
    /// Output format: json (the default) for programs, text for people.
    #[arg(long, value_enum)]
    format: Option<Format>,
}

/// Arguments of `prooflog gate`.
#[derive(Args)]
pub struct GateArgs {
    /// The answer text to check (`-` reads standard input).
    #[arg(long, value_name = "FILE")]
    answer: String,
    /// A passage the answer may be built from; repeat for several candidates.
    #[arg(long = "passage", value_name = "FILE", num_args = 1.., required = true)]
    passages: Vec<String>,
    /// Output format: json (the default) for programs, text for people.
    #[arg(long, value_enum)]
    format: Option<Format>,
}

/// Arguments of `prooflog ground`.
#[derive(Args)]
pub struct GroundArgs {
    /// The claim, `{"subject", "predicate", "object"}`, inline or as `@FILE`.
    #[arg(long, value_name = "JSON")]
    claim: String,
    /// Cited facts: a JSON array of `{"tag", "predicate", "args", "text"?,
    /// "functional_key"?}`, or a proof JSON file.
    #[arg(long, value_name = "FILE", required_unless_present = "evidence")]
    cited: Option<String>,
    /// Evidence JSONL whose facts may be cited by their `HEDGE-<edge_idx>` tags (as
    /// `prooflog run` numbers them), typed and verbalised by `--program` (default: the
    /// embedded rule pack). Repeatable; combines with `--cited`.
    #[arg(long, value_name = "FILE.jsonl")]
    evidence: Vec<std::path::PathBuf>,
    /// The tags the claim cites, comma-separated (default: every fact in `--cited`).
    #[arg(long, value_name = "TAG,…", value_delimiter = ',')]
    tags: Vec<String>,
    /// Scores below this are ungrounded.
    #[arg(long, value_name = "X")]
    deny: Option<f64>,
    /// Scores at or above this are grounded.
    #[arg(long, value_name = "Y")]
    permit: Option<f64>,
    /// Verbalisation templates, a JSON object `{"member": "drone {1} is a member of
    /// group {0}"}` as a rule pack's `.text` directives give them; they say a cited
    /// fact in words where it has no `text` of its own.
    #[arg(long, value_name = "FILE")]
    texts: Option<String>,
    /// Rule pack files (`.dl`) whose `.text` verbalisations and `.functional`
    /// declarations describe the cited facts (repeatable; `--texts` entries win).
    #[arg(long = "program", value_name = "FILE.dl")]
    programs: Vec<std::path::PathBuf>,
    /// Match the claim's predicate against relation names only, not verbalisations.
    #[arg(long)]
    no_predicate_in_text: bool,
    /// Output format: json (the default) for programs, text for people.
    #[arg(long, value_enum)]
    format: Option<Format>,
}

/// `prooflog check`: the hallucination firewall. Exit 0 supported, 1 stripped or
/// abstained, 2 bad input.
pub fn check(args: CheckArgs) -> ExitCode {
    let style = Diagnostics::for_format(args.format);
    match run_check(&args, style) {
        Ok(code) => code,
        Err(e) => fail(&e, style),
    }
}

fn run_check(args: &CheckArgs, style: Diagnostics) -> Result<ExitCode, Error> {
    if args.proofs.is_empty() && args.allowed.is_empty() {
        return Err(usage(
            "give the allowed tags with --proof FILE or --allowed TAG,…",
        ));
    }
    if args.verify_content && args.proofs.is_empty() {
        return Err(usage(
            "--verify-content needs --proof: the facts to verify against come from proofs",
        ));
    }
    let answer = read_input(&args.answer)?;
    let mut table = FactTable::with_texts(args.texts.as_deref(), &args.programs)?;
    for path in &args.proofs {
        table.add_proofs(path, &parse_json(path, &read_input(path)?)?)?;
    }
    if let Some(w) = table.pack_mismatch() {
        warn(&w, style);
    }
    if args.verify_content
        && let Some(w) = table.unworded_warning()
    {
        warn(&w, style);
    }
    for tag in &args.allowed {
        let canon = canonical_tag(tag.trim()).ok_or_else(|| {
            Error::from(
                Diagnostic::new(ErrorCode::Usage, format!("`{tag}` is not a citation tag"))
                    .with_help("tags look like HEDGE-42, RULE-0, STEP-1 or PATTERN-3"),
            )
        })?;
        table.allowed.insert(canon);
    }
    let proved = if args.proved {
        true
    } else if args.not_proved {
        false
    } else {
        table.proved || args.proofs.is_empty()
    };

    let mut firewall = HallucinationFirewall::new();
    if let Some(msg) = &args.abstain_message {
        firewall = firewall.with_abstain_message(msg.clone());
    }
    if args.verify_content {
        firewall = firewall.with_gate_verification(&table);
    }
    let result = firewall.check(&answer, &table.allowed, proved, args.require_proof);

    match args.format.unwrap_or_default() {
        Format::Json => {
            let mut out = result.as_dict();
            out["answer"] = Json::String(result.answer.clone());
            if args.explain {
                out["sentences"] = serde_json::to_value(&result.sentences).map_err(|e| {
                    Error::from(Diagnostic::new(
                        ErrorCode::BadInput,
                        format!("cannot serialize the result: {e}"),
                    ))
                })?;
            }
            println!("{}", pretty(&out)?);
        }
        Format::Text => {
            println!(
                "{} (coverage {}; {} supported, {} stripped)",
                result.outcome,
                format_confidence(result.coverage),
                result.supported.len(),
                result.stripped.len()
            );
            for s in &result.sentences {
                if !args.explain && s.kept() {
                    continue;
                }
                println!("  {}: {}", kind_word(s.kind), s.text);
                if let Some(reason) = &s.reason {
                    println!("    reason: {}", strip_reason_sentence(reason));
                }
            }
            println!("\n{}", result.answer);
        }
    }
    Ok(ExitCode::from(if result.outcome == Outcome::Supported {
        0
    } else {
        1
    }))
}

/// `prooflog gate`: the faithfulness gate. Exit 0 unless the gate refused (1).
pub fn gate(args: GateArgs) -> ExitCode {
    match run_gate(&args) {
        Ok(code) => code,
        Err(e) => fail(&e, Diagnostics::for_format(args.format)),
    }
}

fn run_gate(args: &GateArgs) -> Result<ExitCode, Error> {
    let answer = read_input(&args.answer)?;
    let passages = args
        .passages
        .iter()
        .map(|p| read_input(p))
        .collect::<Result<Vec<_>, _>>()?;
    let result = Gate::check(&answer, &passages);
    match args.format.unwrap_or_default() {
        Format::Json => println!("{}", to_json(&result)?),
        Format::Text => {
            let state = if result.refused {
                "refused"
            } else if result.all_claims_verified {
                "all claims verified"
            } else {
                "unsupported claims removed"
            };
            println!("{state} ({} removed)", result.unsupported_claims_removed);
            for c in &result.claims {
                match (&c.passage, &c.reason) {
                    (Some(p), _) => println!("  ok    [{}] {}", args.passages[*p], c.text),
                    (None, Some(r)) => {
                        println!(
                            "  drop  {}\n        reason: {}",
                            c.text,
                            sentence(&r.to_string())
                        )
                    }
                    (None, None) => println!("  drop  {}", c.text),
                }
            }
            println!("\n{}", result.answer);
        }
    }
    Ok(ExitCode::from(if result.refused { 1 } else { 0 }))
}

/// A result as pretty-printed JSON with sorted keys, as every command prints.
fn to_json<T: serde::Serialize>(value: &T) -> Result<String, Error> {
    let value = serde_json::to_value(value).map_err(|e| {
        Error::from(Diagnostic::new(
            ErrorCode::BadInput,
            format!("cannot serialize the result: {e}"),
        ))
    })?;
    pretty(&value)
}

/// Pretty-printed JSON. `serde_json::Value` keeps object keys sorted.
fn pretty(value: &Json) -> Result<String, Error> {
    serde_json::to_string_pretty(value).map_err(|e| {
        Diagnostic::new(
            ErrorCode::BadInput,
            format!("cannot serialize the result: {e}"),
        )
        .into()
    })
}

/// How the firewall classified a sentence, as one word.
fn kind_word(kind: prooflog::answer::firewall::SentenceKind) -> &'static str {
    use prooflog::answer::firewall::SentenceKind;
    match kind {
        SentenceKind::Glue => "glue",
        SentenceKind::Unverified => "unverified",
        SentenceKind::Supported => "supported",
        SentenceKind::Stripped => "stripped",
    }
}

/// Why a sentence was stripped, as a full sentence for people.
fn strip_reason_sentence(reason: &prooflog::answer::firewall::StripReason) -> String {
    use prooflog::answer::firewall::{GLUE_MAX_CHARS, StripReason};
    match reason {
        StripReason::NoCitation => format!(
            "It states a fact but cites no tag; only connective text shorter than {GLUE_MAX_CHARS} characters may go uncited."
        ),
        StripReason::UnknownTags { tags } => format!(
            "It cites {}, which {} not among the allowed tags.",
            and_list(tags),
            if tags.len() == 1 { "is" } else { "are" }
        ),
        StripReason::NothingToVerify { tags } => format!(
            "Its tags ({}) name no fact to verify it against.",
            tags.join(", ")
        ),
        StripReason::NotEntailed { facts, detail } => format!(
            "It does not say what the cited facts say: {} The cited facts say: {}",
            sentence(detail),
            facts
                .iter()
                .map(|f| sentence(&format!("“{f}”")))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A phrase as a sentence: a lowercase first letter capitalised, a final full stop.
fn sentence(phrase: &str) -> String {
    let phrase = phrase.trim();
    let mut chars = phrase.chars();
    let mut out = String::with_capacity(phrase.len() + 1);
    if let Some(first) = chars.next() {
        if first.is_lowercase() {
            out.extend(first.to_uppercase());
        } else {
            out.push(first);
        }
        out.push_str(chars.as_str());
    }
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

/// `prooflog ground`: grade a claim against cited facts. Exit 0 grounded, 1 weak or
/// ungrounded, 2 bad input.
pub fn ground(args: GroundArgs) -> ExitCode {
    match run_ground(&args) {
        Ok(code) => code,
        Err(e) => fail(&e, Diagnostics::for_format(args.format)),
    }
}

fn run_ground(args: &GroundArgs) -> Result<ExitCode, Error> {
    let defaults = GroundingThresholds::default();
    let thresholds = GroundingThresholds::new(
        args.deny.unwrap_or(defaults.deny),
        args.permit.unwrap_or(defaults.permit),
    )?;
    let options = GroundingOptions {
        thresholds,
        predicate_in_text: !args.no_predicate_in_text,
    };
    let (claim_name, claim_text) = match args.claim.strip_prefix('@') {
        Some(path) => (path.to_string(), read_input(path)?),
        None => ("--claim".to_string(), args.claim.clone()),
    };
    let claim: Claim =
        serde_json::from_str(&claim_text).map_err(|e| json_error(&claim_name, &e))?;

    let mut table = FactTable::with_texts(args.texts.as_deref(), &args.programs)?;
    if let Some(file) = &args.cited {
        let cited = parse_json(file, &read_input(file)?)?;
        if is_proof_json(&cited) {
            table.add_proofs(file, &cited)?;
        } else {
            table.add_cited_facts(file, &cited)?;
        }
    }
    if !args.evidence.is_empty() {
        let mut loader = prooflog::store::Loader::new();
        if args.programs.is_empty() {
            loader.program_text(DEFAULT_PROGRAM.name, DEFAULT_PROGRAM.text);
        }
        for p in &args.programs {
            loader.program_file(p)?;
        }
        for e in &args.evidence {
            loader.evidence(e)?;
        }
        let loaded = loader.load()?;
        table.add_input_facts(&loaded.program, &loaded.facts.to_vec());
    }
    let tags: Vec<String> = if args.tags.is_empty() {
        table.order.clone()
    } else {
        args.tags
            .iter()
            .map(|t| canonical_tag(t.trim()).unwrap_or_else(|| t.trim().to_string()))
            .collect()
    };
    let report = ground_tags(&claim, &tags, &table, &options);
    print_report(&report, args.format.unwrap_or_default());
    Ok(ExitCode::from(if report.verdict.is_grounded() {
        0
    } else {
        1
    }))
}

fn print_report(report: &GroundingReport, format: Format) {
    match format {
        Format::Json => match to_json(report) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("{e}"),
        },
        Format::Text => {
            println!("{}: {}", report.verdict, sentence(&report.reason));
            for m in &report.matches {
                let mark = |b: bool| if b { "yes" } else { "no" };
                println!(
                    "  [{}] {}: subject {}, predicate {}, object {}",
                    m.tag,
                    m.fact,
                    mark(m.subject),
                    mark(m.predicate),
                    mark(m.object)
                );
            }
        }
    }
}

/// Tags and the facts they name, read from proof or cited-fact JSON.
#[derive(Default)]
struct FactTable {
    /// Every tag that may be cited.
    allowed: BTreeSet<String>,
    /// The facts each tag names.
    facts: HashMap<String, Vec<CitedFact>>,
    /// Fact tags in first-seen order.
    order: Vec<String>,
    /// Whether some proof has status "proved".
    proved: bool,
    /// Verbalisation templates by predicate.
    texts: HashMap<String, String>,
    /// Key columns of `.functional` predicates.
    functional: HashMap<String, Vec<usize>>,
    /// Predicates of proof facts with no words of their own (no `text`, no template):
    /// content verification can only compare sentences with `pred(args)`.
    unworded: BTreeSet<String>,
    /// The pack the `--program` files make up, when given.
    given_pack: Option<prooflog::proof::PackId>,
    /// The packs the proofs say they were made with, with a proof file of each.
    proof_packs: Vec<(prooflog::proof::PackId, String)>,
}

impl TagResolver for FactTable {
    fn resolve(&self, tag: &str) -> Vec<CitedFact> {
        self.facts.get(tag).cloned().unwrap_or_default()
    }
}

fn is_proof_json(v: &Json) -> bool {
    match v {
        Json::Object(o) => o.contains_key("nodes") || o.contains_key("status"),
        Json::Array(items) => items.first().is_some_and(is_proof_json),
        _ => false,
    }
}

impl FactTable {
    /// An empty table that verbalises with the rule packs' `.text` templates and the
    /// templates in `path` (if given; they win), and knows the packs' `.functional`
    /// keys.
    fn with_texts(path: Option<&str>, programs: &[std::path::PathBuf]) -> Result<FactTable, Error> {
        let mut table = FactTable::default();
        if !programs.is_empty() {
            let program = prooflog::Program::from_files(programs)?;
            table.given_pack = Some(program.pack().clone());
            for rel in program.relations() {
                if let Some(text) = &rel.text {
                    table.texts.insert(rel.name.clone(), text.clone());
                }
                if let Some(key) = &rel.functional {
                    table.functional.insert(rel.name.clone(), key.clone());
                }
            }
        }
        let Some(path) = path else {
            return Ok(table);
        };
        let json = parse_json(path, &read_input(path)?)?;
        let obj = json.as_object().ok_or_else(|| {
            bad_input(
                path,
                "expected an object mapping predicates to templates".into(),
            )
        })?;
        for (pred, template) in obj {
            let template = template.as_str().ok_or_else(|| {
                bad_input(path, format!("the template for `{pred}` must be a string"))
            })?;
            table.texts.insert(pred.clone(), template.to_string());
        }
        Ok(table)
    }

    /// A warning when the proofs were made with another pack than `--program`'s.
    fn pack_mismatch(&self) -> Option<Diagnostic> {
        let given = self.given_pack.as_ref()?;
        let (other, file) = self
            .proof_packs
            .iter()
            .find(|(p, _)| p.digest != given.digest)?;
        Some(
            Diagnostic::new(
                ErrorCode::PackMismatch,
                format!(
                    "{file} was proved with another rule pack ({}, {}) than --program gives ({}, {})",
                    other.programs.join(", "),
                    other.digest,
                    given.programs.join(", "),
                    given.digest
                ),
            )
            .with_help("the proof's own `text` fields win; drop --program, or prove again with this pack"),
        )
    }

    /// A warning when content verification has facts with no words to verify against.
    fn unworded_warning(&self) -> Option<Diagnostic> {
        if self.unworded.is_empty() {
            return None;
        }
        let names: Vec<String> = self.unworded.iter().map(|p| format!("`{p}`")).collect();
        Some(
            Diagnostic::new(
                ErrorCode::NoVerbalisation,
                format!(
                    "--verify-content has no words for {}: the proofs carry no `text` for {} and no template was given, so sentences citing {} are compared with the fact as the rule language writes it",
                    and_list(&names),
                    if names.len() == 1 { "it" } else { "them" },
                    if names.len() == 1 { "it" } else { "them" },
                ),
            )
            .with_help("prove with a pack that has `.text` verbalisations, or pass --program PACK.dl or --texts FILE"),
        )
    }

    fn add_fact(&mut self, fact: CitedFact) {
        let list = self.facts.entry(fact.tag.clone()).or_default();
        if !list.contains(&fact) {
            if list.is_empty() {
                self.order.push(fact.tag.clone());
            }
            list.push(fact);
        }
    }

    fn add_proofs(&mut self, file: &str, json: &Json) -> Result<(), Error> {
        let proofs: Vec<&Json> = match json {
            Json::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        for (i, proof) in proofs.into_iter().enumerate() {
            let where_ = |what: &str| bad_input(file, format!("proof {i}: {what}"));
            let obj = proof
                .as_object()
                .ok_or_else(|| where_("expected a ProofTree object"))?;
            if !obj.contains_key("nodes") && !obj.contains_key("status") {
                return Err(where_("not a ProofTree (no `status` or `nodes`)"));
            }
            if obj.get("status").and_then(Json::as_str) == Some("proved") {
                self.proved = true;
            }
            if let Some(pack) = obj.get("pack") {
                let pack: prooflog::proof::PackId =
                    serde_json::from_value(pack.clone()).map_err(|e| {
                        where_(&format!("`pack` must be {{\"programs\", \"digest\"}}: {e}"))
                    })?;
                if !self
                    .proof_packs
                    .iter()
                    .any(|(p, _)| p.digest == pack.digest)
                {
                    self.proof_packs.push((pack, file.to_string()));
                }
            }
            if let Some(tags) = obj.get("evidence_tags") {
                let tags = tags
                    .as_array()
                    .ok_or_else(|| where_("`evidence_tags` must be an array"))?;
                for t in tags {
                    let t = t.as_str().ok_or_else(|| where_("tags must be strings"))?;
                    self.allowed.insert(tag_or_error(t, &where_)?);
                }
            }
            let nodes = match obj.get("nodes") {
                None | Some(Json::Null) => continue,
                Some(Json::Array(nodes)) => nodes,
                Some(_) => return Err(where_("`nodes` must be an array")),
            };
            for (j, node) in nodes.iter().enumerate() {
                let at = |what: &str| where_(&format!("node {j}: {what}"));
                let node = node.as_object().ok_or_else(|| at("expected an object"))?;
                for key in ["rule_tag", "step_tag", "hedge_tag"] {
                    let Some(raw) = node.get(key) else { continue };
                    if raw.is_null() {
                        continue;
                    }
                    let raw = raw
                        .as_str()
                        .ok_or_else(|| at(&format!("`{key}` must be a string")))?;
                    let tag = tag_or_error(raw, &at)?;
                    self.allowed.insert(tag.clone());
                    if key != "rule_tag" {
                        let fact = cited_fact(tag, node, &self.texts, &self.functional)
                            .map_err(|m| at(&m))?;
                        if !node.contains_key("text") && !self.texts.contains_key(&fact.predicate) {
                            self.unworded.insert(fact.predicate.clone());
                        }
                        self.add_fact(fact);
                    }
                }
            }
        }
        Ok(())
    }

    /// Every input fact as cited evidence: tag `HEDGE-<edge_idx>`, words from the
    /// relation's `.text` (else `pred(args)`), key from its `.functional`.
    fn add_input_facts(
        &mut self,
        program: &prooflog::Program,
        facts: &[prooflog::store::InputFact],
    ) {
        for f in facts {
            let Some(edge) = f.provenance.edge_idx else {
                continue;
            };
            let rel = program.relation(f.rel);
            let tag = format!("HEDGE-{edge}");
            self.allowed.insert(tag.clone());
            self.add_fact(CitedFact {
                tag,
                predicate: rel.name.clone(),
                args: f.args.clone(),
                text: verbalise(rel.text.as_deref(), &rel.name, &f.args),
                functional_key: rel.functional.clone(),
            });
        }
    }

    fn add_cited_facts(&mut self, file: &str, json: &Json) -> Result<(), Error> {
        let items = json.as_array().ok_or_else(|| {
            bad_input(
                file,
                "expected an array of cited facts or a proof".to_string(),
            )
        })?;
        for (i, item) in items.iter().enumerate() {
            let at = |what: &str| bad_input(file, format!("cited fact {i}: {what}"));
            let obj = item.as_object().ok_or_else(|| at("expected an object"))?;
            let raw = obj
                .get("tag")
                .and_then(Json::as_str)
                .ok_or_else(|| at("needs a string `tag`"))?;
            let tag = canonical_tag(raw).unwrap_or_else(|| raw.to_string());
            let fact =
                cited_fact(tag.clone(), obj, &self.texts, &self.functional).map_err(|m| at(&m))?;
            self.allowed.insert(tag);
            self.add_fact(fact);
        }
        Ok(())
    }
}

fn tag_or_error(raw: &str, err: &dyn Fn(&str) -> Error) -> Result<String, Error> {
    canonical_tag(raw).ok_or_else(|| err(&format!("`{raw}` is not a citation tag")))
}

/// A cited fact from a proof node or cited-fact object. Its words: the object's
/// `text`, else the predicate's template filled in, else its `fact`, else `p(args)`.
fn cited_fact(
    tag: String,
    obj: &serde_json::Map<String, Json>,
    texts: &HashMap<String, String>,
    functional: &HashMap<String, Vec<usize>>,
) -> Result<CitedFact, String> {
    let predicate = match obj.get("predicate") {
        Some(Json::String(p)) => p.clone(),
        None => String::new(),
        Some(_) => return Err("`predicate` must be a string".into()),
    };
    let args = match obj.get("args") {
        None => Vec::new(),
        Some(Json::Array(a)) => a
            .iter()
            .map(|v| {
                Value::from_json(v).ok_or_else(|| format!("argument {v} is not a number or string"))
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err("`args` must be an array".into()),
    };
    let text = match (obj.get("text"), texts.get(&predicate), obj.get("fact")) {
        (Some(Json::String(t)), _, _) => t.clone(),
        (Some(_), _, _) => return Err("`text` must be a string".into()),
        (None, Some(template), _) => verbalise(Some(template), &predicate, &args),
        (None, None, Some(Json::String(t))) => t.clone(),
        _ => verbalise(None, &predicate, &args),
    };
    let functional_key = match obj.get("functional_key") {
        None | Some(Json::Null) => functional.get(&predicate).cloned(),
        Some(Json::Array(cols)) => Some(
            cols.iter()
                .map(|c| {
                    c.as_u64()
                        .and_then(|c| usize::try_from(c).ok())
                        .ok_or_else(|| "`functional_key` must list column numbers".to_string())
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(_) => return Err("`functional_key` must be an array".into()),
    };
    Ok(CitedFact {
        tag,
        predicate,
        args,
        text,
        functional_key,
    })
}

fn read_input(path: &str) -> Result<String, Error> {
    let mut text = String::new();
    let res = if path == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(path).map(|t| text = t)
    };
    res.map_err(|e| {
        Diagnostic::new(ErrorCode::Io, format!("cannot read {path}: {e}"))
            .with_help("check the path and permissions")
            .into()
    })
    .map(|()| text)
}

fn parse_json(file: &str, text: &str) -> Result<Json, Error> {
    serde_json::from_str(text).map_err(|e| json_error(file, &e))
}

fn json_error(file: &str, e: &serde_json::Error) -> Error {
    Diagnostic::new(ErrorCode::BadInput, format!("invalid JSON: {e}"))
        .at(Location::at(file, e.line(), e.column()))
        .into()
}

fn bad_input(file: &str, message: String) -> Error {
    Diagnostic::new(ErrorCode::BadInput, format!("{file}: {message}")).into()
}

fn usage(message: &str) -> Error {
    Diagnostic::new(ErrorCode::Usage, message).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fill_numbered_placeholders() {
        let args = [Value::Number(42), Value::Symbol("north pier".into())];
        assert_eq!(
            verbalise(Some("drone {0} is based at the {1}"), "based", &args),
            "drone 42 is based at the north pier"
        );
        assert_eq!(verbalise(Some("{2} {x} {"), "based", &args), "{2} {x} {");
        assert_eq!(verbalise(Some("{1}{0}"), "based", &args), "north pier42");
    }

    #[test]
    fn cited_fact_prefers_text_then_template_then_fact() {
        let texts = HashMap::from([("member".to_string(), "{0} is in {1}".to_string())]);
        let node = |v: Json| v.as_object().cloned().unwrap_or_default();
        let with_text = node(serde_json::json!({"predicate": "member", "args": [1, 2],
            "text": "one is in two", "fact": "member(1, 2)"}));
        let plain = node(serde_json::json!({"predicate": "member", "args": [1, 2],
            "fact": "member(1, 2)"}));
        let other = node(serde_json::json!({"predicate": "seen", "args": [1]}));
        let text = |o| cited_fact("HEDGE-1".into(), o, &texts, &HashMap::new()).map(|f| f.text);
        assert_eq!(text(&with_text).as_deref(), Ok("one is in two"));
        assert_eq!(text(&plain).as_deref(), Ok("1 is in 2"));
        assert_eq!(text(&other).as_deref(), Ok("seen(1)"));
        let bad = node(serde_json::json!({"predicate": "seen", "args": [[1]]}));
        assert!(cited_fact("HEDGE-1".into(), &bad, &texts, &HashMap::new()).is_err());
    }
}
