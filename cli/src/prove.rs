//! `prooflog prove`: evaluate with provenance and print the proofs of goals.
//!
//! The output's shape depends on the command line only, never on how a goal happens
//! to parse: one `--goal` prints one ProofTree object (the goal must be ground); with
//! `--all-matches` (or `--limit`), or several `--goal`s, it prints a JSON array of trees,
//! ids `<proof-id>#1`, `#2`, …. The trees of one run are one request: `STEP` tags are
//! numbered on from one tree to the next, so a context block over them never repeats a
//! tag. Exit 0 when every goal is proved (a pattern: at least one match), 1 otherwise
//! (the trees are still printed), 2 on bad input.

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use prooflog::diag::{Diagnostic, ErrorCode, SourceMap, Span};
use prooflog::proof::{Fact, ProofOptions, ProofTree, build_proof, prove_all, render};
use prooflog::syntax::{Goal, GoalArg};
use prooflog::value::ColumnType;
use prooflog::{Error, FactBase, Result};

use super::common::{Diagnostics, EngineInputs, Format, evaluate_on_terminal, fail, print, warn};

/// How to print proofs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ProveFormat {
    /// The ProofTree JSON (an array with --all-matches or several goals).
    #[default]
    Json,
    /// A compact tagged block for an LLM prompt.
    Context,
    /// An indented tree for a terminal.
    Text,
    /// Graphviz source: one graph, a cluster per proof.
    Dot,
    /// One self-contained HTML page.
    Html,
}

impl ProveFormat {
    /// How diagnostics are printed under this format (`None`: not given).
    fn diagnostics(format: Option<ProveFormat>) -> Diagnostics {
        match format {
            None => Diagnostics::default_style(),
            Some(ProveFormat::Json) => Diagnostics::for_format(Some(Format::Json)),
            Some(_) => Diagnostics::Text,
        }
    }
}

/// Arguments of `prooflog prove`.
#[derive(Args)]
pub struct ProveArgs {
    #[command(flatten)]
    inputs: EngineInputs,

    /// The goal: a relation applied to constants, e.g. 'threatens(42, "airport")'
    /// (symbols in double quotes, so the whole goal in single quotes in a shell).
    /// Repeat --goal to prove several goals in one run. A bare identifier is a variable
    /// and needs --all-matches.
    #[arg(long, value_name = "GOAL", required = true)]
    goal: Vec<String>,

    /// Prove every fact matching goals with variables ('threatens(g, z)') and print a
    /// JSON array of trees (also for a ground goal, so the shape never depends on the
    /// goal).
    #[arg(long)]
    all_matches: bool,

    /// The proof id the tree carries (in an array, suffixed with #1, #2, …).
    #[arg(long = "proof-id", value_name = "ID", default_value = "proof-1")]
    proof_id: String,

    /// At most this many proofs per goal with variables (implies --all-matches).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,

    /// Output format: json (the default), context (for an LLM prompt), text, dot, html.
    #[arg(long, value_enum)]
    format: Option<ProveFormat>,
}

impl ProveArgs {
    /// Whether the output is an array of trees rather than one tree.
    fn many(&self) -> bool {
        self.all_matches || self.limit.is_some() || self.goal.len() > 1
    }
}

/// A goal as given on the command line, parsed.
struct GivenGoal {
    text: String,
    goal: Goal,
}

impl GivenGoal {
    /// A diagnostic pointing at argument `i` of the goal, with the goal as its source
    /// line.
    fn at_arg(&self, i: usize, d: Diagnostic) -> Diagnostic {
        let Some(span) = self.goal.arg_spans.get(i) else {
            return d;
        };
        let mut sources = SourceMap::new();
        let file = sources.add("--goal", self.text.as_str());
        d.at_span(&sources, Span { file, ..*span })
    }

    /// The goal with variable `i` written as the symbol of the same name.
    fn quoted(&self, i: usize) -> String {
        let mut args = Vec::new();
        for (k, a) in self.goal.args.iter().enumerate() {
            args.push(match a {
                GoalArg::Var(name) if k == i => format!("\"{name}\""),
                GoalArg::Var(name) => name.clone(),
                GoalArg::Const(v) => v.to_string(),
                _ => "_".to_string(),
            });
        }
        format!("{}({})", self.goal.predicate, args.join(", "))
    }
}

/// Parse every goal; without `--all-matches`, each must be ground.
fn parse_goals(args: &ProveArgs) -> Result<Vec<GivenGoal>> {
    let mut goals = Vec::with_capacity(args.goal.len());
    let mut problems = Vec::new();
    for text in &args.goal {
        match prooflog::syntax::parse_goal(text) {
            Ok(goal) => goals.push(GivenGoal {
                text: text.clone(),
                goal,
            }),
            Err(e) => problems.extend(e.diagnostics),
        }
    }
    if !args.many() {
        for g in &goals {
            let Some((i, name)) = g.goal.args.iter().enumerate().find_map(|(i, a)| match a {
                GoalArg::Var(name) => Some((i, name.as_str())),
                _ => None,
            }) else {
                if let Some(i) = g
                    .goal
                    .args
                    .iter()
                    .position(|a| matches!(a, GoalArg::Wildcard))
                {
                    problems.push(
                        g.at_arg(
                            i,
                            Diagnostic::new(
                                ErrorCode::Usage,
                                format!("goal `{}` has a wildcard `_`", g.text.trim()),
                            ),
                        )
                        .with_help("write a constant, or add --all-matches to prove every match"),
                    );
                }
                continue;
            };
            problems.push(
                g.at_arg(
                    i,
                    Diagnostic::new(
                        ErrorCode::Usage,
                        format!(
                            "goal `{}` has a variable, `{name}`: a bare identifier is a variable, not a symbol",
                            g.text.trim()
                        ),
                    ),
                )
                .with_help(format!(
                    "to prove the symbol, quote it: {} (in a shell: --goal '{}'); to prove every match of the pattern, add --all-matches",
                    g.quoted(i),
                    g.quoted(i)
                )),
            );
        }
    }
    if problems.is_empty() {
        Ok(goals)
    } else {
        Err(Error {
            diagnostics: problems,
        })
    }
}

/// Warnings for variables that name a symbol of the data (`harbor` for `"harbor"`):
/// probably quotes lost in a shell.
fn ambiguous_variables(goals: &[GivenGoal], base: &FactBase) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for g in goals {
        let Some(rel) = base.relation_id(&g.goal.predicate) else {
            continue;
        };
        let relation = base.program().relation(rel);
        for (i, a) in g.goal.args.iter().enumerate() {
            let GoalArg::Var(name) = a else { continue };
            let symbol_column = relation
                .columns
                .get(i)
                .is_some_and(|c| c.ty == ColumnType::Symbol);
            if !symbol_column || !base.has_symbol(name) {
                continue;
            }
            let column = &relation.columns[i].name;
            out.push(
                g.at_arg(
                    i,
                    Diagnostic::new(
                        ErrorCode::AmbiguousGoal,
                        format!(
                            "`{name}` is a variable here, but \"{name}\" is also a symbol of the data (column `{column}` of `{}` holds symbols)",
                            relation.name
                        ),
                    ),
                )
                .with_help(format!(
                    "if you meant the symbol, quote it: {} (in a shell: --goal '{}'); rename the variable to silence this",
                    g.quoted(i),
                    g.quoted(i)
                )),
            );
        }
    }
    out
}

/// Every tree to print, and whether every goal was proved.
fn prove(args: &ProveArgs, style: Diagnostics) -> Result<(Vec<ProofTree>, bool)> {
    let goals = parse_goals(args)?;
    let (program, facts) = args.inputs.load()?;
    let fact_base = evaluate_on_terminal(program, &facts, true)?;
    let ambiguous = ambiguous_variables(&goals, &fact_base);
    if args.inputs.strict && !ambiguous.is_empty() {
        return Err(Error {
            diagnostics: ambiguous,
        });
    }
    for w in &ambiguous {
        warn(w, style);
    }
    // One request: STEP tags are numbered on from one tree to the next, so a context
    // block over all the trees never repeats a tag.
    let mut trees: Vec<ProofTree> = Vec::new();
    let mut all_proved = true;
    let mut first_step = 0;
    for g in &goals {
        let options = ProofOptions::new(&args.proof_id).with_first_step(first_step);
        if g.goal.is_ground() {
            let fact = Fact::from_goal(&g.goal)?;
            let tree = build_proof(&fact, &fact_base, &options)?;
            all_proved &= tree.is_proved();
            first_step += tree.step_count();
            trees.push(tree);
        } else {
            let found = prove_all(&g.goal, &fact_base, &options, args.limit)?;
            all_proved &= !found.is_empty();
            first_step += found.iter().map(ProofTree::step_count).sum::<u64>();
            trees.extend(found);
        }
    }
    if args.many() {
        for (k, tree) in trees.iter_mut().enumerate() {
            tree.proof_id = format!("{}#{}", args.proof_id, k + 1);
        }
    }
    Ok((trees, all_proved))
}

fn render_all(trees: &[ProofTree], format: ProveFormat, many: bool) -> String {
    let each = |f: fn(&ProofTree) -> String| -> String {
        trees.iter().map(f).collect::<Vec<_>>().join("\n")
    };
    match format {
        ProveFormat::Json => {
            // Plain data with string keys always serializes.
            let mut s = match trees {
                [one] if !many => one.to_json_pretty(),
                _ => serde_json::to_string_pretty(trees).unwrap_or_default(),
            };
            s.push('\n');
            s
        }
        ProveFormat::Context => each(render::context),
        ProveFormat::Text => each(render::text),
        ProveFormat::Dot => render::dot_all(trees),
        ProveFormat::Html => render::html(trees),
    }
}

/// Run the command.
pub fn execute(args: ProveArgs) -> ExitCode {
    let style = ProveFormat::diagnostics(args.format);
    let (trees, proved) = match prove(&args, style) {
        Ok(o) => o,
        Err(e) => return fail(&with_goal_context(e, &args.goal), style),
    };
    print(&render_all(
        &trees,
        args.format.unwrap_or_default(),
        args.many(),
    ));
    if proved {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Errors about a goal that have no location say which goal(s).
fn with_goal_context(mut err: Error, goals: &[String]) -> Error {
    let named = goals
        .iter()
        .map(|g| format!("`{}`", g.trim()))
        .collect::<Vec<_>>()
        .join(", ");
    for d in &mut err.diagnostics {
        if d.location.is_none() && d.help.is_none() {
            d.help = Some(if goals.len() == 1 {
                format!("the goal was {named}")
            } else {
                format!("the goals were {named}")
            });
        }
    }
    err
}
