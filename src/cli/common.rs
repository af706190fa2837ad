//! What engine commands share: output format, program and input loading, error output.
#![allow(dead_code)] // filled in as the commands land

use std::process::ExitCode;

use clap::ValueEnum;
use prooflog::Error;

/// Output format for people (`text`) or programs (`json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// JSON on stdout; errors as JSON on stderr.
    #[default]
    Json,
    /// Human-readable text.
    Text,
}

/// Print an error on stderr in the requested format and return exit code 2.
pub fn fail(err: &Error, format: Format) -> ExitCode {
    match format {
        Format::Json => {
            for d in &err.diagnostics {
                eprintln!("{}", d.to_json());
            }
        }
        Format::Text => eprintln!("{err}"),
    }
    ExitCode::from(2)
}
