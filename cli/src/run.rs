//! `prooflog run`: evaluate a program and print relations.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
use std::process::ExitCode;

use clap::Args;
use prooflog::eval::{FactBase, FactId};
use prooflog::ir::RelId;
use prooflog::value::{Value, fact_text, format_confidence};

use crate::common::{
    Diagnostics, EngineInputs, Format, evaluate_with_limits, fail, finish, print, stdout,
    warn_arithmetic,
};
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
    let result = evaluate_with_limits(program, facts, !args.no_provenance, &args.inputs);
    let base = match result {
        Ok(base) => base,
        Err(e) => return fail(&e, style),
    };
    warn_arithmetic(&base, style);
    let dir = args.output_dir.as_deref().map(OutputDir::parse);
    let souffle_out = match write_outputs(&base, dir.as_ref()) {
        Ok(text) => text,
        Err(e) => return fail(&e, style),
    };
    if dir.is_some() {
        return finish(ExitCode::SUCCESS, print(&souffle_out), style);
    }
    let (rels, sizes) = shown_relations(&base, args.all);
    let shown = Columns {
        confidence: args.confidence,
        tags: args.tags,
    };
    let mut out = stdout();
    let written = match (args.format.unwrap_or_default(), args.count) {
        (Format::Json, true) => counts_json(&mut out, &base, &rels),
        (Format::Json, false) => rows_json(&mut out, &base, &rels, &sizes, shown),
        (Format::Text, true) => counts_text(&mut out, &base, &rels),
        (Format::Text, false) => rows_text(&mut out, &base, &rels, args.tags),
    }
    .and_then(|()| out.flush());
    finish(ExitCode::SUCCESS, written, style)
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

/// An input fact's citation tag (`HEDGE-n`); derived facts have none.
fn tag_of(base: &FactBase, fact: FactId) -> Option<String> {
    base.edge_idx(fact).map(|n| format!("HEDGE-{n}"))
}

/// `{"rel": [[…], …], …}`, one row per line, keys sorted; rows are objects
/// (`{"args", "confidence"?, "tag"?}`) when a confidence or tag is asked for; a
/// `.printsize` relation shows its size instead of its rows. Written one row at a
/// time: a large relation is never decoded whole.
fn rows_json(
    out: &mut impl Write,
    base: &FactBase,
    rels: &BTreeMap<String, RelId>,
    sizes: &BTreeSet<RelId>,
    shown: Columns,
) -> io::Result<()> {
    out.write_all(b"{")?;
    for (i, (name, &rel)) in rels.iter().enumerate() {
        out.write_all(if i == 0 { b"\n  " } else { b",\n  " })?;
        write!(out, "{}", serde_json::Value::from(name.as_str()))?;
        if sizes.contains(&rel) {
            // `.printsize`: the size, not the rows.
            write!(out, ": {}", base.len(rel))?;
            continue;
        }
        out.write_all(b": [")?;
        let facts = base.sorted_facts(rel);
        for (j, &fact) in facts.iter().enumerate() {
            out.write_all(if j == 0 { b"\n    " } else { b",\n    " })?;
            let row = row_json(&base.args(fact));
            if !(shown.confidence || shown.tags) {
                out.write_all(row.as_bytes())?;
                continue;
            }
            write!(out, "{{\"args\": {row}")?;
            if shown.confidence {
                let c = serde_json::Value::from(base.confidence(fact));
                write!(out, ", \"confidence\": {c}")?;
            }
            if let Some(tag) = tag_of(base, fact).filter(|_| shown.tags) {
                write!(out, ", \"tag\": \"{tag}\"")?;
            }
            out.write_all(b"}")?;
        }
        if !facts.is_empty() {
            out.write_all(b"\n  ")?;
        }
        out.write_all(b"]")?;
    }
    if !rels.is_empty() {
        out.write_all(b"\n")?;
    }
    out.write_all(b"}\n")
}

/// A row as a JSON array, `[1, "a"]`.
fn row_json(args: &[Value]) -> String {
    let cells: Vec<String> = args.iter().map(|v| v.to_json().to_string()).collect();
    format!("[{}]", cells.join(", "))
}

/// `{"rel": n, …}`.
fn counts_json(
    out: &mut impl Write,
    base: &FactBase,
    rels: &BTreeMap<String, RelId>,
) -> io::Result<()> {
    let counts: BTreeMap<&str, usize> = rels
        .iter()
        .map(|(name, &rel)| (name.as_str(), base.len(rel)))
        .collect();
    serde_json::to_writer_pretty(&mut *out, &counts)?;
    out.write_all(b"\n")
}

/// One table per relation: each fact as the rule language writes it, with its
/// confidence (and, with `tags`, an input fact's citation tag). Two passes per
/// relation (the column width, then the rows), one row in memory at a time.
fn rows_text(
    out: &mut impl Write,
    base: &FactBase,
    rels: &BTreeMap<String, RelId>,
    tags: bool,
) -> io::Result<()> {
    for (i, (name, &rel)) in rels.iter().enumerate() {
        if i > 0 {
            out.write_all(b"\n")?;
        }
        let facts = base.sorted_facts(rel);
        writeln!(out, "{name} ({} {})", facts.len(), noun(facts.len()))?;
        let text = |f: FactId| fact_text(name, &base.args(f));
        let width = facts
            .iter()
            .map(|&f| text(f).chars().count())
            .max()
            .unwrap_or(0);
        for &f in &facts {
            let c = format_confidence(base.confidence(f));
            let t = text(f);
            match tag_of(base, f).filter(|_| tags) {
                Some(tag) => writeln!(out, "  {t:<width$}  {c}  {tag}")?,
                None => writeln!(out, "  {t:<width$}  {c}")?,
            }
        }
    }
    Ok(())
}

/// `rel  n` per relation, aligned.
fn counts_text(
    out: &mut impl Write,
    base: &FactBase,
    rels: &BTreeMap<String, RelId>,
) -> io::Result<()> {
    let width = rels.keys().map(|n| n.chars().count()).max().unwrap_or(0);
    let counts: Vec<String> = rels
        .values()
        .map(|&rel| base.len(rel).to_string())
        .collect();
    let digits = counts.iter().map(String::len).max().unwrap_or(0);
    for (name, n) in rels.keys().zip(&counts) {
        writeln!(out, "{name:<width$}  {n:>digits$}")?;
    }
    Ok(())
}

fn noun(n: usize) -> &'static str {
    if n == 1 { "fact" } else { "facts" }
}
