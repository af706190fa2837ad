//! `prooflog check`, `prooflog gate`, `prooflog ground`: the answer checkers.

use std::process::ExitCode;

use clap::Args;

/// Arguments of `prooflog check`.
#[derive(Args)]
pub struct CheckArgs {}

/// Arguments of `prooflog gate`.
#[derive(Args)]
pub struct GateArgs {}

/// Arguments of `prooflog ground`.
#[derive(Args)]
pub struct GroundArgs {}

/// `prooflog check`.
pub fn check(args: CheckArgs) -> ExitCode {
    let _ = args;
    ExitCode::from(2)
}

/// `prooflog gate`.
pub fn gate(args: GateArgs) -> ExitCode {
    let _ = args;
    ExitCode::from(2)
}

/// `prooflog ground`.
pub fn ground(args: GroundArgs) -> ExitCode {
    let _ = args;
    ExitCode::from(2)
}
