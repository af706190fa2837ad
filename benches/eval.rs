//! Transitive closure: prooflog (provenance on and off) against ascent and datafrog,
//! on a random graph (2,000 nodes, 4,000 edges, fixed seed) and a 1,000-node chain.
//!
//! Run with `cargo bench --bench eval`; peak memory per variant is measured separately
//! by `examples/tc_memory.rs`, one process per variant.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "support/tc.rs"]
mod tc;

fn transitive_closure(c: &mut Criterion) {
    for (name, edges) in [
        ("random_2000n_4000e", tc::bench_random_graph()),
        ("chain_1000", tc::bench_chain()),
    ] {
        let prepared = tc::prepare(&edges);
        let mut group = c.benchmark_group(format!("tc/{name}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(5));
        group.bench_function("prooflog_provenance", |b| {
            b.iter(|| black_box(tc::run_prooflog(&prepared, true)))
        });
        group.bench_function("prooflog_no_provenance", |b| {
            b.iter(|| black_box(tc::run_prooflog(&prepared, false)))
        });
        group.bench_function("ascent", |b| b.iter(|| black_box(tc::run_ascent(&edges))));
        group.bench_function("datafrog", |b| {
            b.iter(|| black_box(tc::run_datafrog(&edges)))
        });
        group.finish();
    }
}

criterion_group!(benches, transitive_closure);
criterion_main!(benches);
