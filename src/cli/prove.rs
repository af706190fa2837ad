//! `prooflog prove`.

use std::process::ExitCode;

use clap::Args;

/// Arguments of `prooflog prove`.
#[derive(Args)]
pub struct ProveArgs {}

/// Run the command.
pub fn execute(args: ProveArgs) -> ExitCode {
    let _ = args;
    ExitCode::from(2)
}
