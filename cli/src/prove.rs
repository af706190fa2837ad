//! `prooflog prove`: evaluate with provenance and print the proofs of goals.
//!
//! The output's shape depends on the command line only, never on how a goal happens
//! to parse: one `--goal` prints one ProofTree object (the goal must be ground); with
//! `--all-matches` (or `--limit`), or several `--goal`s, it prints a JSON array of trees,
//! ids `<proof-id>#1`, `#2`, …. The trees of one run are one request: `STEP` tags are
//! numbered on from one tree to the next, so a context block over them never repeats a
//! tag. Exit 0 when every goal is proved (a pattern: at least one match), 1 otherwise
//! (the trees are still printed), 2 on bad input.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, ValueEnum};
use prooflog::diag::{Diagnostic, ErrorCode, SourceMap, Span};
use prooflog::proof::{Fact, ProofOptions, ProofTree, build_proof, prove_each, render};
use prooflog::syntax::{Goal, GoalArg};
use prooflog::value::ColumnType;
use prooflog::{Error, FactBase, Result};

use super::common::{
    Diagnostics, EngineInputs, Format, evaluate_with_limits, fail, finish, stdout, timed_out, warn,
    warn_arithmetic,
};

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

    /// At most this many proofs per goal with variables (implies --all-matches): the
    /// first matches in value order, selected before any proof is built.
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

/// Why the command could not finish.
enum Failure {
    /// Bad input, a limit: exit 2 with the error.
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

/// Writes trees as they are built: JSON (one object, or an array written element by
/// element), context and text (separated by a blank line) go straight out; DOT and
/// HTML, one drawing of every tree, are written at the end.
struct Emitter<'w, W: Write> {
    out: &'w mut W,
    format: ProveFormat,
    many: bool,
    proof_id: String,
    /// Trees written so far.
    count: usize,
    /// DOT and HTML: the trees, drawn together at the end.
    kept: Vec<ProofTree>,
}

impl<W: Write> Emitter<'_, W> {
    fn emit(&mut self, mut tree: ProofTree) -> std::io::Result<()> {
        self.count += 1;
        if self.many {
            tree.proof_id = format!("{}#{}", self.proof_id, self.count);
        }
        let first = self.count == 1;
        match self.format {
            ProveFormat::Json if !self.many => {
                self.out.write_all(tree.to_json_pretty().as_bytes())?;
                self.out.write_all(b"\n")
            }
            ProveFormat::Json => {
                // As `serde_json::to_string_pretty` writes an array: each element
                // indented by two spaces.
                let json = serde_json::to_string_pretty(&tree).map_err(std::io::Error::from)?;
                self.out.write_all(if first { b"[\n" } else { b",\n" })?;
                for (i, line) in json.lines().enumerate() {
                    if i > 0 {
                        self.out.write_all(b"\n")?;
                    }
                    self.out.write_all(b"  ")?;
                    self.out.write_all(line.as_bytes())?;
                }
                Ok(())
            }
            ProveFormat::Context | ProveFormat::Text => {
                if !first {
                    self.out.write_all(b"\n")?;
                }
                let text = if self.format == ProveFormat::Context {
                    render::context(&tree)
                } else {
                    render::text(&tree)
                };
                self.out.write_all(text.as_bytes())
            }
            ProveFormat::Dot | ProveFormat::Html => {
                self.kept.push(tree);
                Ok(())
            }
        }
    }

    fn finish(self) -> std::io::Result<()> {
        match self.format {
            ProveFormat::Json if self.many => {
                self.out
                    .write_all(if self.count == 0 { b"[]\n" } else { b"\n]\n" })
            }
            ProveFormat::Dot => self.out.write_all(render::dot_all(&self.kept).as_bytes()),
            ProveFormat::Html => self.out.write_all(render::html(&self.kept).as_bytes()),
            _ => Ok(()),
        }
    }
}

/// Evaluate, then write the goals' proofs as they are built (a pattern may match
/// millions of facts: only `--limit` of them are selected, and each tree is written
/// and dropped before the next is built). Returns whether every goal was proved.
fn prove(
    args: &ProveArgs,
    style: Diagnostics,
    out: &mut impl Write,
) -> std::result::Result<bool, Failure> {
    let deadline = args.inputs.limits.deadline();
    let goals = parse_goals(args)?;
    let (program, facts) = args.inputs.load()?;
    let fact_base = evaluate_with_limits(program, facts, true, &args.inputs)?;
    warn_arithmetic(&fact_base, style);
    let ambiguous = ambiguous_variables(&goals, &fact_base);
    if args.inputs.strict && !ambiguous.is_empty() {
        return Err(Failure::Engine(Error {
            diagnostics: ambiguous,
        }));
    }
    for w in &ambiguous {
        warn(w, style);
    }
    let in_time = || match deadline {
        Some(d) if Instant::now() >= d => Err(timed_out()),
        _ => Ok(()),
    };
    let mut emitter = Emitter {
        out,
        format: args.format.unwrap_or_default(),
        many: args.many(),
        proof_id: args.proof_id.clone(),
        count: 0,
        kept: Vec::new(),
    };
    // A failed write stops the walk; it is reported as itself.
    let mut write_error: Option<std::io::Error> = None;
    let mut all_proved = true;
    let mut first_step = 0;
    for g in &goals {
        in_time()?;
        let options = ProofOptions::new(&args.proof_id).with_first_step(first_step);
        if g.goal.is_ground() {
            let fact = Fact::from_goal(&g.goal)?;
            let tree = build_proof(&fact, &fact_base, &options)?;
            all_proved &= tree.is_proved();
            first_step += tree.step_count();
            emitter.emit(tree)?;
        } else {
            // One request: STEP tags are numbered on from one tree to the next, so a
            // context block over all the trees never repeats a tag.
            let walked = prove_each(&g.goal, &fact_base, &options, args.limit, |tree| {
                in_time()?;
                first_step += tree.step_count();
                emitter.emit(tree).map_err(|e| {
                    write_error = Some(e);
                    Error::from(Diagnostic::new(ErrorCode::Io, "the output failed"))
                })
            });
            if let Some(e) = write_error.take() {
                return Err(Failure::Write(e));
            }
            all_proved &= walked? > 0;
        }
    }
    emitter.finish()?;
    Ok(all_proved)
}

/// Run the command.
pub fn execute(args: ProveArgs) -> ExitCode {
    let style = ProveFormat::diagnostics(args.format);
    let mut out = stdout();
    let outcome = prove(&args, style, &mut out);
    let written = out.flush();
    match outcome {
        Ok(proved) => {
            let code = if proved {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            };
            finish(code, written, style)
        }
        Err(Failure::Write(e)) => finish(ExitCode::SUCCESS, Err(e), style),
        Err(Failure::Engine(e)) => fail(&with_goal_context(e, &args.goal), style),
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
