//! Run one transitive-closure variant once and print its wall time and peak memory.
//!
//! Peak resident memory (`VmHWM` in `/proc/self/status`) is per process, so each
//! variant is measured in its own process:
//!
//! ```text
//! cargo run --release --example tc_memory -- prooflog-provenance random
//! ```
//!
//! Variants: `prooflog-provenance`, `prooflog-no-provenance`, `ascent`, `datafrog`;
//! graphs: `random` (2,000 nodes, 4,000 edges) and `chain` (1,000 nodes).

use std::process::ExitCode;
use std::time::Instant;

#[path = "../benches/support/tc.rs"]
mod tc;

/// Peak resident set size in KiB, from `/proc/self/status` (Linux only).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (variant, graph) = match args.as_slice() {
        [v] => (v.as_str(), "random"),
        [v, g] => (v.as_str(), g.as_str()),
        _ => {
            eprintln!("usage: tc_memory VARIANT [random|chain]");
            return ExitCode::from(2);
        }
    };
    let edges = match graph {
        "random" => tc::bench_random_graph(),
        "chain" => tc::bench_chain(),
        other => {
            eprintln!("unknown graph {other:?}: use random or chain");
            return ExitCode::from(2);
        }
    };
    let prepared = tc::prepare(&edges);
    let before = peak_rss_kib();
    let start = Instant::now();
    let paths = match variant {
        "prooflog-provenance" => tc::run_prooflog(&prepared, true),
        "prooflog-no-provenance" => tc::run_prooflog(&prepared, false),
        "ascent" => tc::run_ascent(&edges),
        "datafrog" => tc::run_datafrog(&edges),
        other => {
            eprintln!(
                "unknown variant {other:?}: use prooflog-provenance, prooflog-no-provenance, ascent or datafrog"
            );
            return ExitCode::from(2);
        }
    };
    let elapsed = start.elapsed();
    let peak = peak_rss_kib();
    let fmt = |k: Option<u64>| k.map_or("null".to_string(), |k| k.to_string());
    println!(
        "{{\"variant\": \"{variant}\", \"graph\": \"{graph}\", \"edges\": {}, \"paths\": {paths}, \"wall_ms\": {:.1}, \"peak_rss_kib\": {}, \"rss_before_kib\": {}}}",
        edges.len(),
        elapsed.as_secs_f64() * 1e3,
        fmt(peak),
        fmt(before)
    );
    ExitCode::SUCCESS
}
