//! `prooflog prove`: evaluate with provenance and print the proof of a goal.
//!
//! A ground goal prints one ProofTree; a goal with variables prints one tree per
//! matching fact (a JSON array with `--format json`), ids `<proof-id>#1`, `#2`, ….
//! Exit 0 when proved (at least one match), 1 when unproved (the unproved tree, or an
//! empty list, is still printed), 2 on bad input.

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use prooflog::proof::{Fact, ProofOptions, ProofTree, build_proof, prove_all, render};
use prooflog::{Error, Result};

use super::common::{EngineInputs, Format, evaluate_on_terminal, fail, print};

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

    /// At most this many proofs for a goal with variables.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,

    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    format: ProveFormat,
}

/// What the command proved.
enum Outcome {
    One(Box<ProofTree>),
    Many(Vec<ProofTree>),
}

fn prove(args: &ProveArgs) -> Result<Outcome> {
    let goal = prooflog::syntax::parse_goal(&args.goal)?;
    let (program, facts) = args.inputs.load_as(args.format.errors())?;
    let fact_base = evaluate_on_terminal(program, &facts, true)?;
    let proof_options = ProofOptions::new(&args.proof_id);
    if goal.is_ground() {
        let fact = Fact::from_goal(&goal)?;
        let tree = build_proof(&fact, &fact_base, &proof_options)?;
        Ok(Outcome::One(Box::new(tree)))
    } else {
        let trees = prove_all(&goal, &fact_base, &proof_options, args.limit)?;
        Ok(Outcome::Many(trees))
    }
}

fn render_all(trees: &[ProofTree], format: ProveFormat) -> String {
    let each = |f: fn(&ProofTree) -> String| -> String {
        trees.iter().map(f).collect::<Vec<_>>().join("\n")
    };
    match format {
        ProveFormat::Json => {
            // Plain data with string keys always serializes.
            let mut s = serde_json::to_string_pretty(trees).unwrap_or_default();
            s.push('\n');
            s
        }
        ProveFormat::Context => each(render::context),
        ProveFormat::Text => each(render::text),
        ProveFormat::Dot => each(render::dot),
        ProveFormat::Html => render::html(trees),
    }
}

/// Run the command.
pub fn execute(args: ProveArgs) -> ExitCode {
    let outcome = match prove(&args) {
        Ok(o) => o,
        Err(e) => return fail(&with_goal_context(e, &args.goal), args.format.errors()),
    };
    let (text, proved) = match outcome {
        Outcome::One(tree) => {
            let text = match args.format {
                ProveFormat::Json => tree.to_json_pretty() + "\n",
                other => render_all(std::slice::from_ref(&tree), other),
            };
            (text, tree.is_proved())
        }
        Outcome::Many(trees) => (render_all(&trees, args.format), !trees.is_empty()),
    };
    print(&text);
    if proved {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
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
