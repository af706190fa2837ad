//! `prooflog pack check DIR` and `prooflog pack list DIR…`: rule packs.
//!
//! `check` validates a pack (its manifest, its rules, its evidence mappings and goals)
//! and runs its samples: exit 0 when every sample meets its expectations, 1 when one
//! does not, 2 when the pack itself is bad. `list` describes packs (the embedded
//! default pack when no directory is given).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use prooflog::pack::{Pack, PackInfo, PackReport, PackSet};

use crate::common::{Diagnostics, Format, fail, finish, print};

/// Arguments of `prooflog pack`.
#[derive(Args)]
pub struct PackArgs {
    #[command(subcommand)]
    command: PackCommand,
}

#[derive(Subcommand)]
enum PackCommand {
    /// Validate a pack and run its samples (exit 1 when a sample fails).
    Check {
        /// The pack's directory (holding pack.ron).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Describe packs: name, version, rules, evidence tables, goals, samples. Several
    /// directories are also checked to load together (no relation, rule, table or
    /// goal claimed twice). Without DIR: the embedded default pack.
    List {
        /// Pack directories.
        #[arg(value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

/// Run the command.
pub fn execute(args: PackArgs) -> ExitCode {
    match args.command {
        PackCommand::Check { dir, format } => check(&dir, format),
        PackCommand::List { dirs, format } => list(&dirs, format),
    }
}

fn check(dir: &std::path::Path, format: Format) -> ExitCode {
    let report = match Pack::load(dir).and_then(|p| p.check()) {
        Ok(r) => r,
        Err(e) => return fail(&e, Diagnostics::for_format(Some(format))),
    };
    let written = match format {
        Format::Json => print(&(serde_json::to_string_pretty(&report).unwrap_or_default() + "\n")),
        Format::Text => print(&report_text(&report)),
    };
    let code = if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    finish(code, written, Diagnostics::for_format(Some(format)))
}

fn report_text(r: &PackReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "pack {} {}: {} relations, {} rules, {} evidence tables, {} goals",
        r.pack.name,
        r.pack.version,
        r.relations,
        r.rules,
        r.pack.tables.len(),
        r.pack.goals.len()
    );
    for s in &r.samples {
        let _ = writeln!(
            out,
            "sample {:?}: {} ({} input facts, {} derived)",
            s.name,
            if s.passed { "passed" } else { "FAILED" },
            s.input_facts,
            s.derived_facts
        );
        for c in &s.checks {
            let want = if c.expected { "expect" } else { "absent" };
            let mark = if c.passed { "ok  " } else { "FAIL" };
            let got = if c.matched.is_empty() {
                "no match".to_string()
            } else {
                c.matched.join(", ")
            };
            let _ = writeln!(out, "  {mark} {want} {}: {got}", c.goal);
        }
    }
    let _ = writeln!(
        out,
        "{}",
        if r.passed() {
            "all samples passed"
        } else {
            "some samples failed"
        }
    );
    out
}

fn list(dirs: &[PathBuf], format: Format) -> ExitCode {
    let packs: prooflog::Result<Vec<Pack>> = if dirs.is_empty() {
        Ok(vec![prooflog::bundled::default_pack()])
    } else {
        dirs.iter().map(Pack::load).collect()
    };
    let packs = match packs {
        Ok(p) => p,
        Err(e) => return fail(&e, Diagnostics::for_format(Some(format))),
    };
    if packs.len() > 1
        && let Err(e) = PackSet::new(packs.clone())
    {
        return fail(&e, Diagnostics::for_format(Some(format)));
    }
    let infos: Vec<PackInfo> = packs.iter().map(Pack::describe).collect();
    let written = match format {
        Format::Json => print(&(serde_json::to_string_pretty(&infos).unwrap_or_default() + "\n")),
        Format::Text => {
            let mut out = String::new();
            for (i, p) in infos.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                let _ = writeln!(out, "{} {}", p.name, p.version);
                if let Some(d) = &p.dir {
                    let _ = writeln!(out, "  dir: {d}");
                }
                let _ = writeln!(out, "  {}", p.description);
                let _ = writeln!(out, "  rules: {}", p.rules.join(", "));
                let tables: Vec<String> =
                    p.tables.iter().map(|(t, r)| format!("{t} → {r}")).collect();
                let _ = writeln!(out, "  evidence: {}", tables.join(", "));
                for g in &p.goals {
                    let _ = writeln!(out, "  goal {}: {} — {}", g.name, g.goal, g.question);
                }
                let _ = writeln!(out, "  samples: {}", p.samples.join(", "));
            }
            print(&out)
        }
    };
    finish(
        ExitCode::SUCCESS,
        written,
        Diagnostics::for_format(Some(format)),
    )
}
