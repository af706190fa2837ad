//! `prooflog run`: evaluate a program and print relations.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::process::ExitCode;

use clap::Args;
use prooflog::eval::FactBase;
use prooflog::ir::RelId;
use prooflog::value::{Value, fact_text, format_confidence};

use crate::common::{Diagnostics, EngineInputs, Format, evaluate_on_terminal, fail, print};
use crate::souffle::{OutputDir, write_outputs};

/// Arguments of `prooflog run`.
#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    inputs: EngineInputs,

    /// Print every relation, not only the `.output` ones (every relation is printed
    /// anyway when none is marked `.output`).
    #[arg(long)]
    all: bool,

    /// Print only each relation's row count: {"rel": n, …}.
    #[arg(long, conflicts_with_all = ["confidence", "tags"])]
    count: bool,

    /// Do not record derivations (the output is the same; evaluation is lighter).
    #[arg(long)]
    no_provenance: bool,

    /// Print each row with its confidence: {"rel": [{"args": […], "confidence": c}, …]}.
    #[arg(long)]
    confidence: bool,

    /// Print each input fact's citation tag (HEDGE-n), the tag `check --allowed` and
    /// `ground --tags` take: {"rel": [{"args": […], "tag": "HEDGE-42"}, …]}; derived
    /// facts have no tag. Combine with --all to see the input relations.
    #[arg(long)]
    tags: bool,

    /// Write the `.output` relations as Soufflé does, into DIR: tab-separated
    /// `<rel>.csv` files (or what their `.output` options say), with `.printsize`
    /// lines (`rel<TAB>count`) on stdout, instead of printing JSON. `-D -` prints
    /// every `.output` relation on stdout in Soufflé's table form.
    #[arg(short = 'D', long = "output-dir", value_name = "DIR")]
    output_dir: Option<std::path::PathBuf>,

    /// Output format: json (the default) for programs, text for people.
    #[arg(long, value_enum)]
    format: Option<Format>,
}

/// Run the command.
pub fn execute(args: RunArgs) -> ExitCode {
    let style = Diagnostics::for_format(args.format);
    let (program, facts) = match args.inputs.load_as(style) {
        Ok(loaded) => loaded,
        Err(e) => return fail(&e, style),
    };
    let result = evaluate_on_terminal(program, &facts, !args.no_provenance);
    let base = match result {
        Ok(base) => base,
        Err(e) => return fail(&e, style),
    };
    let dir = args.output_dir.as_deref().map(OutputDir::parse);
    let souffle_out = match write_outputs(&base, dir.as_ref()) {
        Ok(text) => text,
        Err(e) => return fail(&e, style),
    };
    if dir.is_some() {
        print(&souffle_out);
        return ExitCode::SUCCESS;
    }
    let (rels, sizes) = shown_relations(&base, args.all);
    let shown = Columns {
        confidence: args.confidence,
        tags: args.tags,
    };
    let out = match (args.format.unwrap_or_default(), args.count) {
        (Format::Json, true) => counts_json(&base, &rels),
        (Format::Json, false) => rows_json(&base, &rels, &sizes, shown),
        (Format::Text, true) => counts_text(&base, &rels),
        (Format::Text, false) => rows_text(&base, &rels, args.tags),
    };
    print(&out);
    ExitCode::SUCCESS
}

/// The relations to print, by name: the `.output` and `.printsize` ones, or all of
/// them with `--all` or when none is marked; and which of them print only their size
/// (`.printsize` without `.output`, unless `--all`).
fn shown_relations(base: &FactBase, all: bool) -> (BTreeMap<String, RelId>, BTreeSet<RelId>) {
    let program = base.program();
    let any_marked = program.relations().iter().any(|r| r.output || r.printsize);
    let shown = program
        .relations()
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.auxiliary && (all || !any_marked || r.output || r.printsize))
        .map(|(i, r)| (r.name.clone(), i as RelId))
        .collect();
    let sizes = program
        .relations()
        .iter()
        .enumerate()
        .filter(|(_, r)| !all && r.printsize && !r.output)
        .map(|(i, _)| i as RelId)
        .collect();
    (shown, sizes)
}

/// What `rows_json` prints beside each row's values.
#[derive(Debug, Clone, Copy)]
struct Columns {
    confidence: bool,
    tags: bool,
}

/// One printed row: its values, confidence and citation tag (input facts only).
struct Row {
    args: Vec<Value>,
    confidence: f64,
    tag: Option<String>,
}

/// A relation's rows, sorted, with their confidences and tags.
fn rows_of(base: &FactBase, rel: RelId) -> Vec<Row> {
    let mut rows: Vec<Row> = base
        .facts(rel)
        .map(|f| Row {
            args: base.args(f),
            confidence: base.confidence(f),
            tag: base
                .evidence(f)
                .and_then(|e| e.provenance.edge_idx)
                .map(|n| format!("HEDGE-{n}")),
        })
        .collect();
    rows.sort_by(|a, b| a.args.cmp(&b.args));
    rows
}

/// `{"rel": [[…], …], …}`, one row per line, keys sorted; rows are objects
/// (`{"args", "confidence"?, "tag"?}`) when a confidence or tag is asked for; a
/// `.printsize` relation shows its size instead of its rows.
fn rows_json(
    base: &FactBase,
    rels: &BTreeMap<String, RelId>,
    sizes: &BTreeSet<RelId>,
    shown: Columns,
) -> String {
    let mut out = String::from("{");
    for (i, (name, &rel)) in rels.iter().enumerate() {
        out.push_str(if i == 0 { "\n  " } else { ",\n  " });
        out.push_str(&serde_json::Value::from(name.as_str()).to_string());
        if sizes.contains(&rel) {
            // `.printsize`: the size, not the rows.
            let _ = write!(out, ": {}", base.len(rel));
            continue;
        }
        out.push_str(": [");
        let rows: Vec<String> = if shown.confidence || shown.tags {
            rows_of(base, rel)
                .into_iter()
                .map(|row| {
                    let mut s = format!("{{\"args\": {}", row_json(&row.args));
                    if shown.confidence {
                        let c = serde_json::Value::from(row.confidence);
                        let _ = write!(s, ", \"confidence\": {c}");
                    }
                    if let Some(tag) = row.tag.filter(|_| shown.tags) {
                        let _ = write!(s, ", \"tag\": \"{tag}\"");
                    }
                    s.push('}');
                    s
                })
                .collect()
        } else {
            base.rows(rel).iter().map(|r| row_json(r)).collect()
        };
        for (j, row) in rows.iter().enumerate() {
            out.push_str(if j == 0 { "\n    " } else { ",\n    " });
            out.push_str(row);
        }
        if !rows.is_empty() {
            out.push_str("\n  ");
        }
        out.push(']');
    }
    if !rels.is_empty() {
        out.push('\n');
    }
    out.push_str("}\n");
    out
}

/// A row as a JSON array, `[1, "a"]`.
fn row_json(args: &[Value]) -> String {
    let cells: Vec<String> = args.iter().map(|v| v.to_json().to_string()).collect();
    format!("[{}]", cells.join(", "))
}

/// `{"rel": n, …}`.
fn counts_json(base: &FactBase, rels: &BTreeMap<String, RelId>) -> String {
    let counts: BTreeMap<&str, usize> = rels
        .iter()
        .map(|(name, &rel)| (name.as_str(), base.len(rel)))
        .collect();
    let mut out = serde_json::to_string_pretty(&counts).unwrap_or_default();
    out.push('\n');
    out
}

/// One table per relation: each fact as the rule language writes it, with its
/// confidence (and, with `tags`, an input fact's citation tag).
fn rows_text(base: &FactBase, rels: &BTreeMap<String, RelId>, tags: bool) -> String {
    let mut out = String::new();
    for (i, (name, &rel)) in rels.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let rows = rows_of(base, rel);
        let _ = writeln!(out, "{name} ({} {})", rows.len(), noun(rows.len()));
        let texts: Vec<String> = rows.iter().map(|r| fact_text(name, &r.args)).collect();
        let width = texts.iter().map(|t| t.chars().count()).max().unwrap_or(0);
        for (text, row) in texts.iter().zip(&rows) {
            let c = format_confidence(row.confidence);
            match row.tag.as_deref().filter(|_| tags) {
                Some(tag) => {
                    let _ = writeln!(out, "  {text:<width$}  {c}  {tag}");
                }
                None => {
                    let _ = writeln!(out, "  {text:<width$}  {c}");
                }
            }
        }
    }
    out
}

/// `rel  n` per relation, aligned.
fn counts_text(base: &FactBase, rels: &BTreeMap<String, RelId>) -> String {
    let width = rels.keys().map(|n| n.chars().count()).max().unwrap_or(0);
    let counts: Vec<String> = rels
        .values()
        .map(|&rel| base.len(rel).to_string())
        .collect();
    let digits = counts.iter().map(String::len).max().unwrap_or(0);
    let mut out = String::new();
    for (name, n) in rels.keys().zip(&counts) {
        let _ = writeln!(out, "{name:<width$}  {n:>digits$}");
    }
    out
}

fn noun(n: usize) -> &'static str {
    if n == 1 { "fact" } else { "facts" }
}
