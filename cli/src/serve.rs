//! `prooflog serve`: the HTTP/JSON service (the `prooflog-server` crate) from the
//! command line.
//!
//! Loads the packs (default: the embedded pack) and the base evidence, opens the
//! evidence store in `--data`, binds `--addr` (loopback by default), says where it
//! listens (on stderr, and in `--addr-file` when given), and serves until SIGINT or
//! SIGTERM. Exit status: 0 after a clean shutdown, 2 on bad input (a pack, a base
//! file, the store, the address or the token file).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use prooflog::{Diagnostic, ErrorCode, Result};
use prooflog_server::{Limits, Service, ServiceConfig};

use crate::common::{Diagnostics, Format, fail};
use crate::rag::packs_and_base;

/// Arguments of `prooflog serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// A rule pack directory (holding pack.ron); repeatable, packs load together.
    /// Without any: the embedded default pack.
    #[arg(long = "pack", value_name = "DIR")]
    packs: Vec<PathBuf>,

    /// Evidence of the shared base, evaluated once at start: hyperedge or fact JSONL.
    /// Repeatable.
    #[arg(long = "base", value_name = "FILE.jsonl")]
    base: Vec<PathBuf>,

    /// The address to listen on; port 0 picks a free port. Loopback by default: put
    /// a token (--token-file) and a TLS proxy in front before binding elsewhere.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    addr: SocketAddr,

    /// A directory for the durable evidence store (created if needed): evidence
    /// posted to /v1/evidence is committed there before it is acknowledged, and
    /// replayed into the base on every start. Without it, posted evidence lives in
    /// memory only.
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,

    /// A file holding the bearer token every endpoint but /healthz then requires.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,

    /// Write the bound address (HOST:PORT) to this file once listening.
    #[arg(long, value_name = "FILE")]
    addr_file: Option<PathBuf>,

    /// Time for one request's evaluation, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    timeout_ms: u64,

    /// Largest request body, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    max_body_bytes: usize,

    /// Most facts rules may derive in one request's overlay.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    max_derived_facts: usize,

    /// Evaluations run at once (default: twice the available cores).
    #[arg(long, value_name = "N")]
    max_evaluations: Option<usize>,

    /// Format of start-up diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

fn io(message: String) -> prooflog::Error {
    Diagnostic::new(ErrorCode::Io, message).into()
}

fn start(args: &ServeArgs) -> Result<Service> {
    let (set, base) = packs_and_base(&args.packs, &args.base)?;
    let token = match &args.token_file {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| io(format!("cannot read {}: {e}", path.display())))?;
            let token = text.trim().to_string();
            if token.is_empty() {
                return Err(Diagnostic::new(
                    ErrorCode::Usage,
                    format!("the token file {} is empty", path.display()),
                )
                .into());
            }
            Some(token)
        }
    };
    let defaults = Limits::default();
    let config = ServiceConfig {
        limits: Limits {
            max_body_bytes: args.max_body_bytes,
            max_derived_facts: args.max_derived_facts,
            timeout: Duration::from_millis(args.timeout_ms),
            max_evaluations: args.max_evaluations.unwrap_or(defaults.max_evaluations),
            ..defaults
        },
        token,
    };
    Service::start(set, &base, args.data.as_deref(), config)
}

/// Run `prooflog serve`.
pub fn execute(args: ServeArgs) -> ExitCode {
    let style = Diagnostics::for_format(Some(args.format));
    let service = match start(&args) {
        Ok(s) => s,
        Err(e) => return fail(&e, style),
    };
    if !args.addr.ip().is_loopback() && args.token_file.is_none() {
        eprintln!(
            "prooflog serve: warning: listening on {} without a token; anyone who can reach it can add evidence",
            args.addr.ip()
        );
    }
    let result = prooflog_server::run(service, args.addr, |addr| {
        eprintln!("prooflog serve: listening on http://{addr}");
        match &args.addr_file {
            // Written whole, then renamed, so a reader never sees half an address.
            Some(path) => {
                let tmp = path.with_extension("tmp");
                std::fs::write(&tmp, addr.to_string())
                    .and_then(|()| std::fs::rename(&tmp, path))
                    .map_err(|e| {
                        std::io::Error::new(
                            e.kind(),
                            format!("cannot write {}: {e}", path.display()),
                        )
                    })
            }
            None => Ok(()),
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&io(format!("prooflog serve on {}: {e}", args.addr)), style),
    }
}
