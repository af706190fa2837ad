//! Every workload of `benches/support/workloads.rs`: prooflog with provenance on and
//! off, beside ascent where the workload can be expressed there (weighted TC as an
//! ascent max-min lattice; not LUBM), and a per-request overlay workload (a
//! prepared TC base plus ten new edges per request).
//!
//! Run with `cargo bench --bench workloads`; `cargo bench --bench workloads -- sg`
//! runs one workload; `PROOFLOG_BENCH_HEAVY=1` adds TC over 8k nodes / 16k edges,
//! points-to over 3,000 variables and CSPA over 600. Datafrog is compared on TC in `benches/eval.rs`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use prooflog::Value;
use prooflog::eval::{EvalOptions, SharedBase};
use prooflog::store::{InputFact, Provenance};

#[path = "support/workloads.rs"]
mod workloads;

fn each_workload(c: &mut Criterion) {
    let heavy = std::env::var_os("PROOFLOG_BENCH_HEAVY").is_some();
    for w in workloads::all() {
        if !heavy && workloads::HEAVY.contains(&w.name) {
            continue;
        }
        let prepared = workloads::prepare(&w);
        let mut group = c.benchmark_group(format!("workload/{}", w.name));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(5));
        group.bench_function("prooflog_provenance", |b| {
            b.iter(|| black_box(workloads::run_prooflog(&w, &prepared, true, 1)))
        });
        group.bench_function("prooflog_provenance_2_threads", |b| {
            b.iter(|| black_box(workloads::run_prooflog(&w, &prepared, true, 2)))
        });
        group.bench_function("prooflog_no_provenance", |b| {
            b.iter(|| black_box(workloads::run_prooflog(&w, &prepared, false, 1)))
        });
        if workloads::has_ascent(&w) {
            group.bench_function("ascent", |b| {
                b.iter(|| black_box(workloads::run_ascent(&w)))
            });
        }
        group.finish();
    }
}

/// A prepared base (TC over the 2k-node graph) and requests of ten new edges each.
fn overlay(c: &mut Criterion) {
    let w = workloads::tc_random("tc_2k", 2_000, 4_000);
    let prepared = workloads::prepare(&w);
    let base = match SharedBase::evaluate(
        Arc::clone(&prepared.program),
        &prepared.inputs,
        &EvalOptions::default(),
    ) {
        Ok(b) => b,
        Err(e) => panic!("base evaluation failed: {e}"),
    };
    let edge = prepared.program.relation_id("edge").expect("edge relation");
    let mut rng = workloads::Rng::new(0x0e1a);
    let requests: Vec<Vec<InputFact>> = (0..16)
        .map(|_| {
            (0..10)
                .map(|_| InputFact {
                    rel: edge,
                    args: vec![
                        Value::Number(i64::from(rng.below(2_000))),
                        Value::Number(i64::from(rng.below(2_000))),
                    ],
                    confidence: 0.9,
                    provenance: Provenance {
                        source: "request".into(),
                        ..Provenance::default()
                    },
                })
                .collect()
        })
        .collect();
    let mut group = c.benchmark_group("workload/overlay_tc_2k");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    group.bench_function("prooflog_overlay_10_edges", |b| {
        let mut k = 0;
        b.iter(|| {
            k = (k + 1) % requests.len();
            let o = match base.overlay(&requests[k], &EvalOptions::default()) {
                Ok(o) => o,
                Err(e) => panic!("overlay failed: {e}"),
            };
            black_box(o.stats().new_facts)
        })
    });
    group.finish();
}

criterion_group!(benches, each_workload, overlay);
criterion_main!(benches);
