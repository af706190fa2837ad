//! A request's 100 new evidence facts over a base of about a million facts: a
//! per-request overlay on the shared base, against `FactBase::extend` (a copy of the
//! base) and against re-evaluating everything.
//!
//! Run with `cargo bench --bench overlay` (the base takes seconds to build; the
//! re-evaluation and extension groups take about a minute each). Percentiles and
//! memory per request: `cargo run --release --example overlay_latency`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use prooflog::eval::SharedBase;
use prooflog::evaluate;

#[path = "support/overlay.rs"]
mod workload;

fn per_request(c: &mut Criterion) {
    let program = workload::program();
    let inputs = workload::base_inputs(&program);
    let options = workload::options();
    let facts = evaluate(Arc::clone(&program), &inputs, &options).expect("base");
    let base = SharedBase::new(facts).expect("prepared base");
    let mut k = 0u64;
    let mut next = || {
        k += 1;
        workload::request(&program, k)
    };

    let mut group = c.benchmark_group("request_100_facts_over_1m");
    group.warm_up_time(Duration::from_secs(1));
    group.bench_function("overlay", |b| {
        b.iter_batched(
            &mut next,
            |evidence| black_box(base.overlay(&evidence, &options).expect("overlay")),
            BatchSize::SmallInput,
        )
    });
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("extend", |b| {
        b.iter_batched(
            &mut next,
            |evidence| black_box(base.facts().extend(&evidence, &options).expect("extend")),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("reevaluate", |b| {
        b.iter_batched(
            || {
                let mut all = inputs.clone();
                all.extend(next());
                all
            },
            |all| black_box(evaluate(Arc::clone(&program), &all, &options).expect("evaluate")),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, per_request);
criterion_main!(benches);
