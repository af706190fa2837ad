//! `prooflog run`: evaluate a program and print relations.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::process::ExitCode;

use clap::Args;
use prooflog::eval::{FactBase, FactId};
use prooflog::ir::RelId;
use prooflog::value::{Value, fact_text};

use crate::common::{
    EngineInputs, Format, evaluate_on_terminal, fail, finish, stdout, warn_arithmetic,
};

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
    #[arg(long, conflicts_with = "confidence")]
    count: bool,

    /// Do not record derivations (the output is the same; evaluation is lighter).
    #[arg(long)]
    no_provenance: bool,

    /// Print each row with its confidence: {"rel": [{"args": […], "confidence": c}, …]}.
    #[arg(long)]
    confidence: bool,

    /// Output format: json for programs, text for people.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
}

/// Run the command.
pub fn execute(args: RunArgs) -> ExitCode {
    let (program, facts) = match args.inputs.load() {
        Ok(loaded) => loaded,
        Err(e) => return fail(&e, args.format),
    };
    let result = evaluate_on_terminal(program, &facts, !args.no_provenance, &args.inputs);
    let base = match result {
        Ok(base) => base,
        Err(e) => return fail(&e, args.format),
    };
    warn_arithmetic(&base, args.format);
    let rels = shown_relations(&base, args.all);
    let mut out = stdout();
    let written = match (args.format, args.count) {
        (Format::Json, true) => counts_json(&mut out, &base, &rels),
        (Format::Json, false) => rows_json(&mut out, &base, &rels, args.confidence),
        (Format::Text, true) => counts_text(&mut out, &base, &rels),
        (Format::Text, false) => rows_text(&mut out, &base, &rels),
    }
    .and_then(|()| out.flush());
    finish(ExitCode::SUCCESS, written, args.format)
}

/// The relations to print, by name: the `.output` ones, or all of them with `--all`
/// or when none is marked.
fn shown_relations(base: &FactBase, all: bool) -> BTreeMap<String, RelId> {
    let program = base.program();
    let any_output = program.relations().iter().any(|r| r.output);
    program
        .relations()
        .iter()
        .enumerate()
        .filter(|(_, r)| all || !any_output || r.output)
        .map(|(i, r)| (r.name.clone(), i as RelId))
        .collect()
}

/// `{"rel": [[…], …], …}`, one row per line, keys sorted.
fn rows_json(
    out: &mut impl Write,
    base: &FactBase,
    rels: &BTreeMap<String, RelId>,
    confidence: bool,
) -> io::Result<()> {
    out.write_all(b"{")?;
    for (i, (name, &rel)) in rels.iter().enumerate() {
        out.write_all(if i == 0 { b"\n  " } else { b",\n  " })?;
        write!(out, "{}: [", serde_json::Value::from(name.as_str()))?;
        // One row at a time: a large relation is never decoded whole.
        let facts = base.sorted_facts(rel);
        for (j, &fact) in facts.iter().enumerate() {
            out.write_all(if j == 0 { b"\n    " } else { b",\n    " })?;
            let row = row_json(&base.args(fact));
            if confidence {
                let c = serde_json::Value::from(base.confidence(fact));
                write!(out, "{{\"args\": {row}, \"confidence\": {c}}}")?;
            } else {
                out.write_all(row.as_bytes())?;
            }
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
/// confidence.
fn rows_text(
    out: &mut impl Write,
    base: &FactBase,
    rels: &BTreeMap<String, RelId>,
) -> io::Result<()> {
    for (i, (name, &rel)) in rels.iter().enumerate() {
        if i > 0 {
            out.write_all(b"\n")?;
        }
        let facts = base.sorted_facts(rel);
        writeln!(out, "{name} ({} {})", facts.len(), noun(facts.len()))?;
        // Two passes (the column width, then the rows), one row in memory at a time.
        let text = |f: FactId| fact_text(name, &base.args(f));
        let width = facts
            .iter()
            .map(|&f| text(f).chars().count())
            .max()
            .unwrap_or(0);
        for &f in &facts {
            writeln!(
                out,
                "  {:<width$}  {}",
                text(f),
                confidence_text(base.confidence(f))
            )?;
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

/// A confidence for people: at most four decimals, no trailing zeros.
fn confidence_text(c: f64) -> String {
    let s = format!("{c:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidences_read_well() {
        assert_eq!(confidence_text(1.0), "1");
        assert_eq!(confidence_text(0.9), "0.9");
        assert_eq!(confidence_text(0.9 * 0.95), "0.855");
        assert_eq!(confidence_text(0.123456), "0.1235");
        assert_eq!(confidence_text(0.0), "0");
    }
}
