//! Run the transitive closure over a random graph once and print its wall time, with
//! every edge at confidence 1.0 or with random edge confidences (where facts improve
//! during the fixpoint and provenance must re-select least-height derivations):
//!
//! ```text
//! cargo run --release --example tc_weighted -- weighted [NODES EDGES]
//! ```
//!
//! Modes: `unit` (every edge 1.0), `weighted` (edge confidences drawn from 0.5, 0.6,
//! …, 1.0) and `continuous` (drawn from [0.5, 1): nearly every edge's differs);
//! provenance is on in all three (`NO_PROVENANCE=1` turns it off;
//! `WORKLOAD_DIGEST=1` prints a digest of the results, as the `workload` example
//! does). Default graph: 1,000 nodes, 2,000 edges.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

#[path = "../benches/support/tc.rs"]
#[allow(dead_code)]
mod tc;

#[path = "../benches/support/digest.rs"]
mod digest;

use prooflog::eval::{EvalOptions, evaluate};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map_or("weighted", String::as_str);
    let nodes: u32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1_000);
    let edges: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2_000);
    let graph = tc::random_graph(nodes, edges, 0x5eed);
    let mut prepared = tc::prepare(&graph);
    match mode {
        "unit" => {}
        "weighted" | "continuous" => {
            let mut state: u64 = 0xc0ff_ee00;
            for fact in &mut prepared.inputs {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                fact.confidence = if mode == "weighted" {
                    0.5 + 0.1 * ((state >> 33) % 6) as f64
                } else {
                    0.5 + 0.5 * (state >> 11) as f64 / (1u64 << 53) as f64
                };
            }
        }
        other => {
            eprintln!("unknown mode {other:?}: use unit, weighted or continuous");
            return ExitCode::from(2);
        }
    }
    let options =
        EvalOptions::default().with_provenance(std::env::var_os("NO_PROVENANCE").is_none());
    let start = Instant::now();
    let fb = match evaluate(Arc::clone(&prepared.program), &prepared.inputs, &options) {
        Ok(fb) => fb,
        Err(e) => {
            eprintln!("evaluation failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let elapsed = start.elapsed();
    let paths = fb.relation_id("path").map_or(0, |p| fb.len(p));
    let rounds: u32 = fb.stats().strata.iter().map(|s| s.rounds).sum();
    let derivations: u64 = fb.stats().strata.iter().map(|s| s.derivations).sum();
    let improved: usize = fb.stats().strata.iter().map(|s| s.improved).sum();
    println!(
        "{{\"mode\": \"{mode}\", \"nodes\": {nodes}, \"edges\": {edges}, \"paths\": {paths}, \"rounds\": {rounds}, \"derivations\": {derivations}, \"improved\": {improved}, \"wall_ms\": {:.1}}}",
        elapsed.as_secs_f64() * 1e3
    );
    if let Some(how) = std::env::var_os("WORKLOAD_DIGEST") {
        eprintln!("digest {:016x}", digest::digest(&fb, how != "ranks"));
    }
    ExitCode::SUCCESS
}
