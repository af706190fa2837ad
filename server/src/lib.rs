//! prooflog as an HTTP/JSON service, for RAG stacks that call it over the network.
//!
//! A [`Service`] holds rule packs evaluated once into a shared base; each request's
//! evidence is an overlay on a snapshot of that base, evaluated on the blocking pool
//! under a budget and a deadline, and seen by no other request. Base evidence posted to
//! `/v1/evidence` extends the base incrementally and, with a data directory, is
//! committed to an embedded store ([`EvidenceStore`], redb) before it is acknowledged
//! and replayed on the next start. [`router`] gives the axum routes, [`serve`] runs them
//! until a shutdown signal; `docs/service.md` describes every endpoint.
//!
//! Architecture invariant: this crate composes the library's public API (pipeline,
//! overlays, proofs, checkers) and owns only transport concerns: bodies, limits,
//! tokens, metrics, durability. The `prooflog` library knows nothing of it.

#![warn(missing_docs)]

pub mod api;
mod error;
mod metrics;
mod routes;
mod service;
mod store;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

pub use error::{ApiError, status_of};
pub use metrics::Metrics;
pub use routes::{ApiDoc, router};
pub use service::{Limits, Service, ServiceConfig};
pub use store::{EvidenceStore, STORE_FILE};

/// Serve `service` on `listener` until `shutdown` completes, then finish the requests
/// in flight and return.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: Arc<Service>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(service))
        .with_graceful_shutdown(shutdown)
        .await
}

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}

/// Bind `addr`, call `bound` with the address bound (port 0 picks a free one), and
/// serve until SIGINT or SIGTERM, on a runtime of its own. An error from `bound`
/// (say, the address could not be written where a supervisor looks for it) stops
/// the service before it serves anything.
pub fn run(
    service: Service,
    addr: SocketAddr,
    bound: impl FnOnce(SocketAddr) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        bound(listener.local_addr()?)?;
        serve(listener, Arc::new(service), shutdown_signal()).await
    })
}
