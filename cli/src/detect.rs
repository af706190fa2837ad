//! `prooflog detect`: hallucination detection and mitigation of an answer against the
//! fact base of a program (or rule pack) and the dialogue so far.
//!
//! Exit 0 when no flag reaches the threshold, 1 when one does, 2 on bad input.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use prooflog::detect::{Date, Detector, DetectorConfig, HallucinationType, parse_history};
use prooflog::diag::{Diagnostic, ErrorCode};
use prooflog::pack::{Pack, PackSet};
use prooflog::store::{InputFact, Loader, read_hyperedges};
use prooflog::{Error, Result};

use super::common::{Diagnostics, EngineInputs, Format, fail, finish, print};

/// Arguments of `prooflog detect`.
#[derive(Args)]
pub struct DetectArgs {
    #[command(flatten)]
    inputs: EngineInputs,
    /// A rule pack directory (with pack.ron): its rules and its samples' evidence make
    /// the fact base; PROGRAM files are then not allowed, and `--evidence` files may be
    /// hyperedge JSONL of the pack's tables.
    #[arg(long, value_name = "DIR")]
    pack: Option<PathBuf>,
    /// The answer to check (`-` reads standard input).
    #[arg(long, value_name = "FILE")]
    answer: String,
    /// The dialogue so far: one `{"role": "user"|"assistant", "text": "…"}` per line,
    /// oldest first (the last 10 turns are read).
    #[arg(long, value_name = "FILE.jsonl")]
    history: Option<PathBuf>,
    /// The reference date for tense and plausibility checks (default: today, UTC).
    #[arg(long, value_name = "YYYY-MM-DD")]
    today: Option<String>,
    /// Least confidence a flag needs to be reported (default 0.5).
    #[arg(long, value_name = "X")]
    threshold: Option<f64>,
    /// Citation tags allowed beyond those the fact base names, comma-separated
    /// (`STEP-1,STEP-2` of the proofs the answer was written from).
    #[arg(long, value_name = "TAG,…", value_delimiter = ',')]
    allowed: Vec<String>,
    /// Run only these detectors (type names, comma-separated: `WrongAttribute,…`).
    #[arg(long, value_name = "TYPE,…", value_delimiter = ',')]
    only: Vec<String>,
    /// The relation naming entities, `(entity, name)` (default `alias`).
    #[arg(long, value_name = "REL")]
    alias: Option<String>,
    /// Also list the claims read from the answer and their verdicts.
    #[arg(long)]
    explain: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// `prooflog detect`.
pub fn execute(args: DetectArgs) -> ExitCode {
    let style = Diagnostics::for_format(Some(args.format));
    let mut out = String::new();
    match run(&args, &mut out) {
        Ok(code) => finish(code, print(&out), style),
        Err(e) => fail(&e, style),
    }
}

fn usage(message: impl Into<String>) -> Error {
    Diagnostic::new(ErrorCode::Usage, message).into()
}

fn read(path: &str) -> Result<String> {
    let limit = prooflog::store::DEFAULT_MAX_INPUT;
    if path == "-" {
        return prooflog::store::read_bounded(
            std::io::stdin().lock(),
            "standard input",
            limit,
            limit,
        );
    }
    prooflog::store::read_file(std::path::Path::new(path), limit, limit)
}

fn config(args: &DetectArgs) -> Result<DetectorConfig> {
    let mut config = DetectorConfig::default();
    if let Some(t) = &args.today {
        config.today = Date::parse_iso(t)
            .ok_or_else(|| usage(format!("--today {t} is not a date (YYYY-MM-DD)")))?;
    }
    if let Some(x) = args.threshold {
        if !(0.0..=1.0).contains(&x) {
            return Err(usage(format!("--threshold {x} is not in [0, 1]")));
        }
        config.detection_threshold = x;
    }
    for tag in &args.allowed {
        let canon = prooflog::answer::firewall::canonical_tag(tag.trim())
            .ok_or_else(|| usage(format!("`{tag}` is not a citation tag")))?;
        config.allowed_tags.insert(canon);
    }
    if !args.only.is_empty() {
        let mut types = Vec::new();
        for name in &args.only {
            types.push(HallucinationType::parse(name.trim()).ok_or_else(|| {
                Error::from(
                    Diagnostic::new(
                        ErrorCode::Usage,
                        format!("`{name}` is not a hallucination type"),
                    )
                    .with_help(
                        HallucinationType::ALL
                            .iter()
                            .map(|t| t.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    ),
                )
            })?);
        }
        config.enabled_detectors = prooflog::detect::EnabledDetectors::only(&types);
    }
    if let Some(a) = &args.alias {
        config.alias_relation = Some(a.clone());
    }
    Ok(config)
}

/// The program and input facts: a pack's, or the programs' and files'.
fn fact_base(args: &DetectArgs) -> Result<prooflog::FactBase> {
    let Some(dir) = &args.pack else {
        let (program, facts) = args.inputs.load()?;
        return super::common::evaluate_with_limits(program, facts, true, &args.inputs);
    };
    if !args.inputs.programs.is_empty() {
        return Err(usage("give either --pack DIR or PROGRAM files, not both"));
    }
    let pack = Pack::load(dir)?;
    let set = PackSet::new(vec![pack])?;
    let mut facts: Vec<InputFact> = Vec::new();
    for sample in &set.packs()[0].manifest().samples {
        facts.extend(set.sample_inputs(0, sample)?);
    }
    for path in &args.inputs.evidence {
        let name = path.display().to_string();
        let text = read(&name)?;
        let hyperedges = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .is_some_and(|v| v.get("table").is_some());
        if hyperedges {
            facts.extend(set.facts_of(&read_hyperedges(&name, &text)?)?);
        } else {
            let mut loader = Loader::new();
            loader.evidence_jsonl(&name, &text)?;
            facts.extend(loader.inputs().resolve(set.program())?);
        }
    }
    for path in &args.inputs.facts {
        let mut loader = Loader::new();
        loader.facts(path)?;
        facts.extend(loader.inputs().resolve(set.program())?);
    }
    let options = prooflog::eval::EvalOptions::default()
        .with_budget(args.inputs.limits.budget())
        .with_strict_arithmetic(args.inputs.strict)
        .with_threads(args.inputs.threads.map_or(0, usize::from));
    set.evaluate(&facts, &options)
}

fn run(args: &DetectArgs, out: &mut String) -> Result<ExitCode> {
    let config = config(args)?;
    let answer = read(&args.answer)?;
    let history = match &args.history {
        Some(p) => {
            let name = p.display().to_string();
            parse_history(&name, &read(&name)?)?
        }
        None => Vec::new(),
    };
    let fb = fact_base(args)?;
    let detector = Detector::new(&fb, config);
    let mut report = detector.detect(&answer, &history);
    if !args.explain {
        report.claims.clear();
    }
    match args.format {
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&report).map_err(|e| {
                Error::from(Diagnostic::new(
                    ErrorCode::Internal,
                    format!("cannot serialize the report: {e}"),
                ))
            })?;
            text.push('\n');
            out.push_str(&text);
        }
        Format::Text => out.push_str(&report.to_text()),
    }
    Ok(ExitCode::from(u8::from(report.flagged())))
}
