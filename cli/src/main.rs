//! The `prooflog` command line: a thin layer over the `prooflog` library. It parses
//! arguments, calls the library and prints; every concept it shows lives in the library.
//!
//! Argument parsing, dispatch, output format and exit codes shared by every command;
//! the command-line contract is docs/cli.md.
//!
//! Exit codes: 0 success, 1 a check rejected or a goal is unproved, 2 bad input.
//! Diagnostics go to stderr, as text or (with `--format json`) as
//! `{"error": {"code", "message", "file", "line", "col"}}`.

mod answer;
mod common;
mod detect;
mod pack;
mod prove;
mod rag;
mod run;
mod serve;
mod souffle;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// prooflog: a Datalog reasoning engine that explains itself.
#[derive(Parser)]
#[command(name = "prooflog", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate a program and print its output relations as JSON.
    ///
    /// Prints the `.output` relations (every relation with --all, or when none is
    /// marked) as {"rel": [[arg, …], …], …}: keys and rows sorted, numbers as JSON
    /// numbers, symbols as strings. Without PROGRAM it runs the embedded default rule
    /// pack (rules/drones/drones.dl and rules/drones/evidence.jsonl, built into the
    /// binary). Exit status: 0 success, 2 bad input (diagnostics on stderr).
    Run(run::RunArgs),
    /// Prove a goal and print its proof DAG.
    Prove(prove::ProveArgs),
    /// Check an answer's citations against allowed tags (the hallucination firewall).
    Check(answer::CheckArgs),
    /// Check that an answer's claims follow from passages (the faithfulness gate).
    Gate(answer::GateArgs),
    /// Grade how well cited facts ground a claim.
    Ground(answer::GroundArgs),
    /// Run the whole RAG pipeline on the embedded drone pack and explain each step.
    ///
    /// One request: its evidence as an overlay on the shared base, the proof of the
    /// conclusion as a tree, why another goal is not proved, the tagged context block,
    /// a model answer with one unsupported sentence, and what the hallucination
    /// firewall kept and stripped.
    Demo(rag::DemoArgs),
    /// Answer goals over rule packs and evidence, through the whole RAG pipeline.
    ///
    /// Evaluates the packs' base once, overlays the request's evidence, proves the
    /// goals (or explains why not), renders the context block, generates an answer
    /// and checks it with the firewall. Exit status: 0 proved and delivered, 1 no
    /// goal proved or the firewall abstained, 2 bad input.
    Ask(rag::AskArgs),
    /// Rule packs: check one (its manifest, rules and samples), list several.
    Pack(pack::PackArgs),
    /// Detect hallucinations in an answer against the fact base and the dialogue, and
    /// say how to mitigate them (exit 1 when any is flagged).
    Detect(Box<detect::DetectArgs>),
    /// Serve the packs over HTTP/JSON: ask, prove, check, gate, ground, durable base
    /// evidence, metrics and an OpenAPI document (docs/service.md).
    Serve(Box<serve::ServeArgs>),
}

/// Parse arguments, run the command, map its outcome to an exit code.
fn main() -> ExitCode {
    // Large vectors grow in place, not by a copy (see the function).
    prooflog::eval::fix_mmap_threshold();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            if !e.use_stderr() {
                // --help, --version
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            if asks_for_json(std::env::args()) {
                let rendered = e.render().to_string();
                // clap's first paragraph says what is wrong; the rest is usage help.
                let (first, rest) = rendered.split_once("\n\n").unwrap_or((&rendered, ""));
                let message = first
                    .trim_start_matches("error: ")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                let diag = prooflog::Diagnostic::new(prooflog::ErrorCode::Usage, message)
                    .with_help(rest.trim().to_string());
                common::to_stderr(&diag.to_json().to_string());
            } else {
                let _ = e.print();
            }
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Command::Run(args) => run::execute(args),
        Command::Prove(args) => prove::execute(args),
        Command::Check(args) => answer::check(args),
        Command::Gate(args) => answer::gate(args),
        Command::Ground(args) => answer::ground(args),
        Command::Demo(args) => rag::demo(args),
        Command::Ask(args) => rag::ask(args),
        Command::Pack(args) => pack::execute(args),
        Command::Detect(args) => detect::execute(*args),
        Command::Serve(args) => serve::execute(*args),
    }
}

/// Whether the command line asks for JSON output (`--format json` or
/// `--format=json`), so that even a usage error is reported as JSON.
fn asks_for_json(args: impl IntoIterator<Item = String>) -> bool {
    let args: Vec<String> = args.into_iter().collect();
    args.iter().enumerate().any(|(i, a)| {
        a == "--format=json" || (a == "--format" && args.get(i + 1).is_some_and(|v| v == "json"))
    })
}

#[cfg(test)]
mod tests {
    use super::asks_for_json;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn json_is_requested_only_explicitly() {
        assert!(asks_for_json(args("prooflog run --format json --bogus")));
        assert!(asks_for_json(args("prooflog prove --format=json")));
        assert!(!asks_for_json(args("prooflog run --format text")));
        assert!(!asks_for_json(args("prooflog run --format")));
        assert!(!asks_for_json(args("prooflog run json")));
    }
}
