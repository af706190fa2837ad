//! Evaluator throughput on transitive closure
//! (`path(x, y) :- edge(x, y). path(x, z) :- edge(x, y), path(y, z).`), with and
//! without provenance:
//!
//! - `random_500_1000`: a pseudo-random graph of 500 nodes and 1,000 edges (about
//!   150,000 paths, 310,000 derivations), where most time goes to deduplication;
//! - `chain_400`: the chain `0 → 1 → … → 399` (79,800 paths over 400 rounds), where
//!   per-round overhead shows.
//!
//! `examples/closure_race.rs` runs the same program at full size against ascent.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use prooflog::eval::{EvalOptions, evaluate};
use prooflog::ir::Program;
use prooflog::store::{InputFact, Provenance};
use prooflog::value::Value;

const SOURCE: &str = r#"
.decl edge(a: number, b: number)
.decl path(a: number, b: number)
.output path
path(x, y) :- edge(x, y).
path(x, z) :- edge(x, y), path(y, z).
"#;

fn inputs(program: &Program, graph: &[(i64, i64)]) -> Vec<InputFact> {
    let edge = program.relation_id("edge").expect("edge declared");
    graph
        .iter()
        .map(|&(a, b)| InputFact {
            rel: edge,
            args: vec![Value::Number(a), Value::Number(b)],
            confidence: 1.0,
            provenance: Provenance::default(),
        })
        .collect()
}

fn random_graph(nodes: u64, edges: usize) -> Vec<(i64, i64)> {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % nodes) as i64
    };
    (0..edges).map(|_| (next(), next())).collect()
}

fn bench(c: &mut Criterion) {
    let program = Arc::new(Program::from_source("closure.dl", SOURCE).expect("program compiles"));
    let graphs = [
        ("random_500_1000", random_graph(500, 1000)),
        ("chain_400", (1..400).map(|n| (n - 1, n)).collect()),
    ];
    let mut group = c.benchmark_group("closure");
    group.sample_size(10);
    for (name, graph) in &graphs {
        let facts = inputs(&program, graph);
        for provenance in [false, true] {
            let options = EvalOptions {
                provenance,
                ..EvalOptions::default()
            };
            let id = format!("{name}/provenance={provenance}");
            group.bench_function(id, |b| {
                b.iter(|| {
                    let fb = evaluate(program.clone(), black_box(&facts), &options)
                        .expect("closure evaluates");
                    black_box(fb.len(fb.relation_id("path").expect("path declared")))
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
