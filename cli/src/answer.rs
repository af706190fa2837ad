//! `prooflog check`, `prooflog gate`, `prooflog ground`: the answer checkers.
//!
//! Tags and the facts they name come from the library's one table,
//! [`CitationTable`]. Proof files are never taken on trust: `check` and `ground`
//! rebuild every tree of a `--proof`/`--cited` proof file from its goal against the
//! rule pack and evidence (the embedded default pack, or `--program` with
//! `--evidence`/`--facts`) and refuse the file (exit 2) when it differs. `check --goal`
//! proves the goals itself.

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use prooflog::answer::firewall::{
    CheckOptions, HallucinationFirewall, Outcome, SentenceKind, StripReason, canonical_tag,
};
use prooflog::answer::gate::Gate;
use prooflog::answer::grounding::{
    Claim, GroundingOptions, GroundingReport, GroundingThresholds, ground_tags,
};
use prooflog::answer::normalize::escape_line;
use prooflog::diag::{Diagnostic, ErrorCode, Location};
use prooflog::proof::{
    CitationTable, ProofOptions, ProofTree, prove_request, read_proofs, verify_proof,
};
use prooflog::{Error, FactBase};
use serde_json::Value as Json;

use prooflog::value::format_confidence;

use super::common::{
    DEFAULT_PROGRAM, Diagnostics, Format, Setting, evaluate_on_terminal, fail, finish, load_inputs,
    parse_size, print, warn,
};

/// Arguments of `prooflog check`.
#[derive(Args)]
pub struct CheckArgs {
    /// The answer text to check (`-` reads standard input).
    #[arg(long, value_name = "FILE")]
    answer: String,
    /// Proof JSON files (a ProofTree or an array of them) whose tags are allowed. Each
    /// tree is rebuilt from its goal against the rule pack and evidence and refused
    /// (exit 2) if it differs.
    #[arg(long = "proof", value_name = "FILE", num_args = 1..)]
    proofs: Vec<String>,
    /// Goals to prove against the rule pack and evidence; their proofs' tags are
    /// allowed (repeatable; steps are numbered across all goals, as `prove` does).
    #[arg(long = "goal", value_name = "GOAL")]
    goals: Vec<String>,
    /// The proof id of `--goal` proofs (as `prove --proof-id`).
    #[arg(long = "proof-id", value_name = "ID", default_value = "proof-1")]
    proof_id: String,
    /// At most this many proofs per `--goal` with variables.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Allowed tags, comma-separated (`HEDGE-42,RULE-0,STEP-1`); adds to the proofs'.
    #[arg(long, value_name = "TAG,…", value_delimiter = ',')]
    allowed: Vec<String>,
    /// Abstain unless a goal was proved (by `--goal`, or by a verified `--proof`).
    #[arg(long)]
    require_proof: bool,
    /// Treat the answer as backed by a proof even without a proved goal.
    #[arg(long, conflicts_with = "not_proved")]
    proved: bool,
    /// Treat the answer as not backed by a proof.
    #[arg(long)]
    not_proved: bool,
    /// Also require each cited sentence to follow from its cited facts' words (the
    /// faithfulness gate, each fact on its own); needs `--proof` or `--goal`.
    #[arg(long)]
    verify_content: bool,
    /// The message returned when the firewall abstains.
    #[arg(long, value_name = "TEXT")]
    abstain_message: Option<String>,
    /// A connective that may stand as a sentence of its own and claim nothing (adds to
    /// the default glue list: "Yes.", "In short:", …). Repeatable.
    #[arg(long = "glue", value_name = "PHRASE")]
    glue: Vec<String>,
    /// Use only the `--glue` phrases, not the default list.
    #[arg(long)]
    no_default_glue: bool,
    /// Rule pack files (`.dl`) the proofs are checked against and whose `.text`
    /// verbalisations say the cited facts (repeatable; default: the embedded pack with
    /// its evidence).
    #[arg(long = "program", value_name = "FILE.dl")]
    programs: Vec<PathBuf>,
    /// Fact files or directories for the rule pack (as for `run`). Repeatable.
    #[arg(long = "facts", value_name = "FILE|DIR")]
    facts: Vec<PathBuf>,
    /// Evidence files for the rule pack (as for `run`). Repeatable.
    #[arg(long = "evidence", value_name = "FILE.jsonl")]
    evidence: Vec<PathBuf>,
    /// Where `.input` relations' files are looked up.
    #[arg(long = "fact-dir", value_name = "DIR")]
    fact_dir: Option<PathBuf>,
    /// Also print every sentence's verdict and reason (`sentences` in JSON; one line
    /// per sentence in text).
    #[arg(long)]
    explain: bool,
    /// Most bytes of input files read in all, e.g. 64M [default: 512M].
    #[arg(long = "max-input", value_name = "SIZE|none", value_parser = parse_size)]
    max_input: Option<Setting<usize>>,
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
    /// Most bytes of input files read in all, e.g. 64M [default: 512M].
    #[arg(long = "max-input", value_name = "SIZE|none", value_parser = parse_size)]
    max_input: Option<Setting<usize>>,
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
    /// "functional_key"?}`, or a proof JSON file (rebuilt and checked against the rule
    /// pack and evidence, as `check --proof` does).
    #[arg(long, value_name = "FILE", required_unless_present = "evidence")]
    cited: Option<String>,
    /// Evidence JSONL whose facts may be cited by their `HEDGE-<edge_idx>` tags (as
    /// `prooflog run` numbers them), typed and verbalised by `--program` (default: the
    /// embedded rule pack). Repeatable; combines with `--cited`.
    #[arg(long, value_name = "FILE.jsonl")]
    evidence: Vec<PathBuf>,
    /// The tags the claim cites, comma-separated (default: every fact in `--cited`).
    #[arg(long, value_name = "TAG,…", value_delimiter = ',')]
    tags: Vec<String>,
    /// Scores below this are ungrounded.
    #[arg(long, value_name = "X")]
    deny: Option<f64>,
    /// Scores at or above this are grounded.
    #[arg(long, value_name = "Y")]
    permit: Option<f64>,
    /// Verbalisation templates for a cited-fact array, a JSON object `{"member": "{0}
    /// is a member of group {1}"}` as the rule pack's `.text` directives give them; they
    /// say a cited fact in words where it has no `text`.
    #[arg(long, value_name = "FILE")]
    texts: Option<String>,
    /// Rule pack files (`.dl`) whose `.text` verbalisations and `.functional`
    /// declarations describe the cited facts (repeatable; `--texts` entries win).
    #[arg(long = "program", value_name = "FILE.dl")]
    programs: Vec<PathBuf>,
    /// Match the claim's predicate against relation names only, not verbalisations.
    #[arg(long)]
    no_predicate_in_text: bool,
    /// Most bytes of input files read in all, e.g. 64M [default: 512M].
    #[arg(long = "max-input", value_name = "SIZE|none", value_parser = parse_size)]
    max_input: Option<Setting<usize>>,
    /// Output format: json (the default) for programs, text for people.
    #[arg(long, value_enum)]
    format: Option<Format>,
}

/// `prooflog check`: the hallucination firewall. Exit 0 supported, 1 stripped or
/// abstained, 2 bad input.
pub fn check(args: CheckArgs) -> ExitCode {
    let style = Diagnostics::for_format(args.format);
    set_input_limit(args.max_input);
    let mut out = String::new();
    match run_check(&args, style, &mut out) {
        Ok(code) => finish(code, print(&out), style),
        Err(e) => fail(&e, style),
    }
}

/// Evaluate the rule pack and evidence with provenance: the fact base proofs are
/// built and checked against.
fn fact_base(
    programs: &[PathBuf],
    facts: &[PathBuf],
    evidence: &[PathBuf],
    fact_dir: Option<&std::path::Path>,
    style: Diagnostics,
) -> Result<FactBase, Error> {
    let (program, inputs) = load_inputs(
        programs,
        facts,
        evidence,
        fact_dir,
        false,
        input_left(),
        style,
    )?;
    evaluate_on_terminal(program, inputs, true)
}

/// Read proof files and rebuild each tree against the fact base.
fn verified_proofs(paths: &[String], base: &FactBase) -> Result<Vec<ProofTree>, Error> {
    let mut out = Vec::new();
    for path in paths {
        let trees = read_proofs(path, &read_input(path)?)?;
        for tree in &trees {
            out.push(verify_proof(tree, base).map_err(|e| in_file(e, path))?);
        }
    }
    Ok(out)
}

fn in_file(mut err: Error, path: &str) -> Error {
    for d in &mut err.diagnostics {
        if d.location.is_none() {
            d.message = format!("{path}: {}", d.message);
        }
    }
    err
}

fn run_check(args: &CheckArgs, style: Diagnostics, out: &mut String) -> Result<ExitCode, Error> {
    if args.proofs.is_empty() && args.goals.is_empty() && args.allowed.is_empty() {
        return Err(usage(
            "give the allowed tags with --goal GOAL, --proof FILE or --allowed TAG,…",
        ));
    }
    if args.verify_content && args.proofs.is_empty() && args.goals.is_empty() {
        return Err(usage(
            "--verify-content needs --goal or --proof: the facts to verify against come from proofs",
        ));
    }
    let answer = read_input(&args.answer)?;
    let mut trees: Vec<ProofTree> = Vec::new();
    if !args.proofs.is_empty() || !args.goals.is_empty() {
        let base = fact_base(
            &args.programs,
            &args.facts,
            &args.evidence,
            args.fact_dir.as_deref(),
            style,
        )?;
        trees = verified_proofs(&args.proofs, &base)?;
        if !args.goals.is_empty() {
            let goals = args
                .goals
                .iter()
                .map(|g| prooflog::syntax::parse_goal(g))
                .collect::<Result<Vec<_>, _>>()?;
            let first_step = trees.iter().map(|t| t.first_step() + t.step_count()).max();
            let options =
                ProofOptions::new(&args.proof_id).with_first_step(first_step.unwrap_or(0));
            trees.extend(prove_request(&goals, &base, &options, args.limit)?);
        }
    }
    if args.verify_content
        && let Some(w) = unworded_warning(&trees)
    {
        warn(&w, style);
    }
    let mut table = CitationTable::from_proofs(&trees);
    for tag in &args.allowed {
        let canon = canonical_tag(tag.trim()).ok_or_else(|| {
            Error::from(
                Diagnostic::new(ErrorCode::Usage, format!("`{tag}` is not a citation tag"))
                    .with_help("tags look like HEDGE-42, RULE-0, STEP-1 or PATTERN-3"),
            )
        })?;
        table.allow(canon);
    }
    let proved = if args.proved {
        true
    } else if args.not_proved {
        false
    } else {
        table.is_proved()
    };

    let mut firewall = HallucinationFirewall::new();
    if let Some(msg) = &args.abstain_message {
        firewall = firewall.with_abstain_message(msg.clone());
    }
    if args.no_default_glue || !args.glue.is_empty() {
        let mut glue: Vec<String> = if args.no_default_glue {
            Vec::new()
        } else {
            firewall.glue().to_vec()
        };
        glue.extend(args.glue.iter().cloned());
        firewall = firewall.with_glue(glue);
    }
    if args.verify_content {
        firewall = firewall.with_gate_verification(&table);
    }
    let options = CheckOptions::new()
        .proved(proved)
        .require_proof(args.require_proof);
    let result = firewall.check(&answer, &table, &options);

    match args.format.unwrap_or_default() {
        Format::Json => {
            let mut json = result.as_dict();
            json["answer"] = Json::String(result.answer.clone());
            if args.explain {
                json["sentences"] = serde_json::to_value(&result.sentences).map_err(|e| {
                    Error::from(Diagnostic::new(
                        ErrorCode::BadInput,
                        format!("cannot serialize the result: {e}"),
                    ))
                })?;
            }
            let _ = writeln!(out, "{}", pretty(&json)?);
        }
        Format::Text => {
            let _ = writeln!(
                out,
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
                let _ = writeln!(out, "  {}: {}", kind_word(s.kind), escape_line(&s.text));
                if let Some(reason) = &s.reason {
                    let _ = writeln!(
                        out,
                        "    reason: {}",
                        escape_line(&strip_reason_sentence(reason))
                    );
                }
            }
            let _ = writeln!(out, "\n{}", escape_text(&result.answer));
        }
    }
    Ok(ExitCode::from(if result.outcome == Outcome::Supported {
        0
    } else {
        1
    }))
}

/// A warning when content verification has facts with no words to verify against.
fn unworded_warning(trees: &[ProofTree]) -> Option<Diagnostic> {
    let mut names: Vec<String> = Vec::new();
    for t in trees {
        for n in &t.nodes {
            let name = format!("`{}`", n.predicate());
            if n.text().is_none() && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    if names.is_empty() {
        return None;
    }
    Some(
        Diagnostic::new(
            ErrorCode::NoVerbalisation,
            format!(
                "--verify-content has no words for {}: the rule pack has no `.text` for {}, so sentences citing {} are compared with the fact as the rule language writes it",
                and_list(&names),
                if names.len() == 1 { "it" } else { "them" },
                if names.len() == 1 { "it" } else { "them" },
            ),
        )
        .with_help("give the pack's relations `.text` verbalisations"),
    )
}

/// Escape every line of a text for a terminal (line breaks kept).
fn escape_text(s: &str) -> String {
    s.split('\n')
        .map(|l| escape_line(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// How the firewall classified a sentence, as one word.
fn kind_word(kind: SentenceKind) -> &'static str {
    match kind {
        SentenceKind::Glue => "glue",
        SentenceKind::Layout => "layout",
        SentenceKind::Unverified => "unverified",
        SentenceKind::Supported => "supported",
        SentenceKind::Stripped => "stripped",
        _ => "other",
    }
}

/// Why a sentence was stripped, as a full sentence for people.
fn strip_reason_sentence(reason: &StripReason) -> String {
    match reason {
        StripReason::NoCitation => "It says something but cites no tag; only a connective \
             from the glue list (\"Yes.\", \"In short:\") may go uncited."
            .to_string(),
        StripReason::UnknownTags { tags } => format!(
            "It cites {}, which {} not among the allowed tags.",
            and_list(tags),
            if tags.len() == 1 { "is" } else { "are" }
        ),
        StripReason::AmbiguousTags { tags } => format!(
            "It cites {}, which name{} different facts in different proofs of this request.",
            and_list(tags),
            if tags.len() == 1 { "s" } else { "" }
        ),
        StripReason::ForgedTags { written } => format!(
            "It cites {}, written with look-alike characters of another script.",
            and_list(written)
        ),
        StripReason::HiddenText => {
            "It holds text a reader does not see (an HTML comment or raw HTML).".to_string()
        }
        StripReason::ControlCharacters => {
            "It holds control characters (terminal escape sequences).".to_string()
        }
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
        other => sentence(&other.to_string()),
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

/// `prooflog gate`: the faithfulness gate. Exit 0 unless the gate refused (1).
pub fn gate(args: GateArgs) -> ExitCode {
    let style = Diagnostics::for_format(args.format);
    set_input_limit(args.max_input);
    let mut out = String::new();
    match run_gate(&args, &mut out) {
        Ok(code) => finish(code, print(&out), style),
        Err(e) => fail(&e, style),
    }
}

fn run_gate(args: &GateArgs, out: &mut String) -> Result<ExitCode, Error> {
    let answer = read_input(&args.answer)?;
    let passages = args
        .passages
        .iter()
        .map(|p| read_input(p))
        .collect::<Result<Vec<_>, _>>()?;
    let result = Gate::check(&answer, &passages);
    match args.format.unwrap_or_default() {
        Format::Json => {
            let _ = writeln!(out, "{}", to_json(&result)?);
        }
        Format::Text => {
            let state = if result.refused {
                "refused"
            } else if result.all_claims_verified {
                "all claims verified"
            } else {
                "unsupported claims removed"
            };
            let _ = writeln!(
                out,
                "{state} ({} removed)",
                result.unsupported_claims_removed
            );
            for c in &result.claims {
                let text = escape_line(&c.text);
                let _ = match (&c.passage, &c.reason) {
                    (Some(p), _) => {
                        writeln!(out, "  ok    [{}] {text}", escape_line(&args.passages[*p]))
                    }
                    (None, Some(r)) => writeln!(
                        out,
                        "  drop  {text}\n        reason: {}",
                        escape_line(&sentence(&r.to_string()))
                    ),
                    (None, None) => writeln!(out, "  drop  {text}"),
                };
            }
            let _ = writeln!(out, "\n{}", escape_text(&result.answer));
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

/// `prooflog ground`: grade a claim against cited facts. Exit 0 grounded, 1 weak or
/// ungrounded, 2 bad input.
pub fn ground(args: GroundArgs) -> ExitCode {
    let style = Diagnostics::for_format(args.format);
    set_input_limit(args.max_input);
    let mut out = String::new();
    match run_ground(&args, style, &mut out) {
        Ok(code) => finish(code, print(&out), style),
        Err(e) => fail(&e, style),
    }
}

fn run_ground(args: &GroundArgs, style: Diagnostics, out: &mut String) -> Result<ExitCode, Error> {
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

    let mut table = CitationTable::new();
    if !args.programs.is_empty() {
        let program = prooflog::Program::from_files(&args.programs)?;
        table = table.with_program(&program);
    }
    table = table.with_templates(templates(args.texts.as_deref())?);
    if let Some(file) = &args.cited {
        let text = read_input(file)?;
        let cited = parse_json(file, &text)?;
        if is_proof_json(&cited) {
            let base = fact_base(&args.programs, &[], &args.evidence, None, style)?;
            for tree in verified_proofs(std::slice::from_ref(file), &base)? {
                table.add_proof(&tree);
            }
        } else {
            table
                .add_cited_json(&cited)
                .map_err(|m| bad_input(file, m))?;
        }
    }
    if !args.evidence.is_empty() {
        let mut loader = prooflog::store::Loader::new();
        loader.max_input_bytes(input_left());
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
        table.add_input_facts(&loaded.program, &loaded.facts);
    }
    let tags: Vec<String> = if args.tags.is_empty() {
        table.fact_tags().to_vec()
    } else {
        args.tags
            .iter()
            .map(|t| canonical_tag(t.trim()).unwrap_or_else(|| t.trim().to_string()))
            .collect()
    };
    let report = ground_tags(&claim, &tags, &table, &options);
    print_report(out, &report, args.format.unwrap_or_default())?;
    Ok(ExitCode::from(if report.verdict.is_grounded() {
        0
    } else {
        1
    }))
}

/// Verbalisation templates from a `--texts` file.
fn templates(path: Option<&str>) -> Result<HashMap<String, String>, Error> {
    let mut out = HashMap::new();
    let Some(path) = path else {
        return Ok(out);
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
        out.insert(pred.clone(), template.to_string());
    }
    Ok(out)
}

fn print_report(out: &mut String, report: &GroundingReport, format: Format) -> Result<(), Error> {
    match format {
        Format::Json => {
            let _ = writeln!(out, "{}", to_json(report)?);
        }
        Format::Text => {
            let _ = writeln!(
                out,
                "{}: {}",
                report.verdict,
                escape_line(&sentence(&report.reason))
            );
            for m in &report.matches {
                let mark = |b: bool| if b { "yes" } else { "no" };
                let _ = writeln!(
                    out,
                    "  [{}] {}: subject {}, predicate {}, object {}",
                    m.tag,
                    escape_line(&m.fact),
                    mark(m.subject),
                    mark(m.predicate),
                    mark(m.object)
                );
            }
        }
    }
    Ok(())
}

fn is_proof_json(v: &Json) -> bool {
    match v {
        Json::Object(o) => o.contains_key("nodes") || o.contains_key("status"),
        Json::Array(items) => items.first().is_some_and(is_proof_json),
        _ => false,
    }
}

thread_local! {
    /// The command's `--max-input`: (bytes still allowed, the limit).
    static INPUT_LIMIT: Cell<(u64, u64)> =
        const { Cell::new((prooflog::store::DEFAULT_MAX_INPUT, prooflog::store::DEFAULT_MAX_INPUT)) };
}

/// Set the command's input limit (`--max-input`; the default when not given).
fn set_input_limit(max: Option<Setting<usize>>) {
    let limit = match max {
        None => prooflog::store::DEFAULT_MAX_INPUT,
        Some(Setting::Value(n)) => n as u64,
        Some(Setting::Unlimited) => u64::MAX,
    };
    INPUT_LIMIT.with(|c| c.set((limit, limit)));
}

/// Bytes of input the command may still read.
fn input_left() -> u64 {
    INPUT_LIMIT.with(|c| c.get().0)
}

/// Read a file (`-`: standard input) as UTF-8 text, within what is left of the
/// command's input limit.
fn read_input(path: &str) -> Result<String, Error> {
    let (left, limit) = INPUT_LIMIT.with(Cell::get);
    let text = if path == "-" {
        prooflog::store::read_bounded(std::io::stdin().lock(), "standard input", left, limit)
    } else {
        prooflog::store::read_file(std::path::Path::new(path), left, limit)
    }
    .map_err(|mut e| {
        if e.code() == ErrorCode::Io && e.diagnostics[0].help.is_none() {
            e.diagnostics[0].help = Some("check the path and permissions".into());
        }
        e
    })?;
    INPUT_LIMIT.with(|c| c.set((left - text.len() as u64, limit)));
    Ok(text)
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
