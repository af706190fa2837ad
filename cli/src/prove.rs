//! `prooflog prove`: evaluate with provenance and print the proof of a goal.
//!
//! A ground goal prints one ProofTree; a goal with variables prints one tree per
//! matching fact (a JSON array with `--format json`), ids `<proof-id>#1`, `#2`, ….
//! Exit 0 when proved (at least one match), 1 when unproved (the unproved tree, or an
//! empty list, is still printed), 2 on bad input.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, ValueEnum};
use prooflog::Error;
use prooflog::diag::{Diagnostic, ErrorCode};
use prooflog::proof::{Fact, ProofOptions, ProofTree, build_proof, prove_each, render};

use super::common::{
    EngineInputs, Format, evaluate_on_terminal, fail, finish, stdout, timed_out, warn_arithmetic,
};

/// How to print proofs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ProveFormat {
    /// The ProofTree JSON (an array for a goal with variables).
    #[default]
    Json,
    /// A compact tagged block for an LLM prompt.
    Context,
    /// An indented tree for a terminal.
    Text,
    /// Graphviz source.
    Dot,
    /// One self-contained HTML page.
    Html,
}

impl ProveFormat {
    /// How errors are printed under this format.
    fn errors(self) -> Format {
        match self {
            ProveFormat::Json => Format::Json,
            _ => Format::Text,
        }
    }
}

/// Arguments of `prooflog prove`.
#[derive(Args)]
pub struct ProveArgs {
    #[command(flatten)]
    inputs: EngineInputs,

    /// The goal, e.g. 'coordinated_threat(42)' (ground) or 'threatens(g, z)' (every
    /// match).
    #[arg(long, value_name = "GOAL")]
    goal: String,

    /// The proof id the tree carries (a goal with variables suffixes it with #1, #2, …).
    #[arg(long = "proof-id", value_name = "ID", default_value = "proof-1")]
    proof_id: String,

    /// At most this many proofs for a goal with variables (the first ones in value
    /// order; only those are built).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,

    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    format: ProveFormat,
}

/// Why the command could not finish.
enum Failure {
    /// Bad input, a limit, an unproved requirement: exit 2 with the error.
    Engine(Error),
    /// The output could not be written.
    Write(std::io::Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Engine(e)
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure::Write(e)
    }
}

/// Evaluate, then write the goal's proofs as they are built (a goal with variables
/// may match millions of facts: only `--limit` of them are selected, and each tree is
/// written and dropped before the next is built). Returns whether the goal is proved.
fn prove(args: &ProveArgs, out: &mut impl Write) -> std::result::Result<bool, Failure> {
    let deadline = args.inputs.limits.deadline();
    let goal = prooflog::syntax::parse_goal(&args.goal)?;
    let (program, facts) = args.inputs.load()?;
    let fact_base = evaluate_on_terminal(program, &facts, true, &args.inputs)?;
    warn_arithmetic(&fact_base, args.format.errors());
    let proof_options = ProofOptions::new(&args.proof_id);
    let in_time = || match deadline {
        Some(d) if Instant::now() >= d => Err(timed_out()),
        _ => Ok(()),
    };
    if goal.is_ground() {
        let fact = Fact::from_goal(&goal)?;
        let tree = build_proof(&fact, &fact_base, &proof_options)?;
        let text = match args.format {
            ProveFormat::Json => tree.to_json_pretty() + "\n",
            ProveFormat::Html => render::html(std::slice::from_ref(&tree)),
            other => render_one(&tree, other),
        };
        out.write_all(text.as_bytes())?;
        return Ok(tree.is_proved());
    }
    // A write error stops the walk; it is reported as itself.
    let mut write_error: Option<std::io::Error> = None;
    let stopped = || Error::from(Diagnostic::new(ErrorCode::Io, "the output failed"));
    let proved = match args.format {
        ProveFormat::Json => {
            use serde::ser::{SerializeSeq, Serializer};
            let mut ser = serde_json::Serializer::with_formatter(
                &mut *out,
                serde_json::ser::PrettyFormatter::new(),
            );
            let mut seq = ser.serialize_seq(None).map_err(std::io::Error::from)?;
            let walked = prove_each(&goal, &fact_base, &proof_options, args.limit, |tree| {
                in_time()?;
                seq.serialize_element(&tree).map_err(|e| {
                    write_error = Some(e.into());
                    stopped()
                })
            });
            if let Some(e) = write_error {
                return Err(Failure::Write(e));
            }
            let n = walked?;
            seq.end().map_err(std::io::Error::from)?;
            out.write_all(b"\n")?;
            n > 0
        }
        ProveFormat::Html => {
            let mut trees = Vec::new();
            prove_each(&goal, &fact_base, &proof_options, args.limit, |tree| {
                in_time()?;
                trees.push(tree);
                Ok(())
            })?;
            out.write_all(render::html(&trees).as_bytes())?;
            !trees.is_empty()
        }
        other => {
            let mut first = true;
            let walked = prove_each(&goal, &fact_base, &proof_options, args.limit, |tree| {
                in_time()?;
                let sep: &[u8] = if std::mem::take(&mut first) {
                    b""
                } else {
                    b"\n"
                };
                out.write_all(sep)
                    .and_then(|()| out.write_all(render_one(&tree, other).as_bytes()))
                    .map_err(|e| {
                        write_error = Some(e);
                        stopped()
                    })
            });
            if let Some(e) = write_error {
                return Err(Failure::Write(e));
            }
            walked? > 0
        }
    };
    Ok(proved)
}

/// One tree in a text format.
fn render_one(tree: &ProofTree, format: ProveFormat) -> String {
    match format {
        ProveFormat::Context => render::context(tree),
        ProveFormat::Text => render::text(tree),
        ProveFormat::Dot => render::dot(tree),
        ProveFormat::Json => tree.to_json_pretty() + "\n",
        ProveFormat::Html => render::html(std::slice::from_ref(tree)),
    }
}

/// Run the command.
pub fn execute(args: ProveArgs) -> ExitCode {
    let errors = args.format.errors();
    let mut out = stdout();
    let outcome = prove(&args, &mut out);
    let written = out.flush();
    match outcome {
        Ok(proved) => {
            let code = if proved {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            };
            finish(code, written, errors)
        }
        Err(Failure::Write(e)) => finish(ExitCode::SUCCESS, Err(e), errors),
        Err(Failure::Engine(e)) => fail(&with_goal_context(e, &args.goal), errors),
    }
}

/// Errors about the goal say which goal.
fn with_goal_context(mut err: Error, goal: &str) -> Error {
    for d in &mut err.diagnostics {
        if d.location.is_none() && d.help.is_none() {
            d.help = Some(format!("the goal was `{goal}`"));
        }
    }
    err
}
