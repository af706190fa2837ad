//! `prooflog run`.

use std::process::ExitCode;

use clap::Args;

/// Arguments of `prooflog run`.
#[derive(Args)]
pub struct RunArgs {}

/// Run the command.
pub fn execute(args: RunArgs) -> ExitCode {
    let _ = args;
    ExitCode::from(2)
}
