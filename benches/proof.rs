//! Proof building cost: proportional to the proof, independent of the fact base.
//!
//! - `depth20_in_1m_facts`: a depth-20 proof in a fact base of 1.2 million facts
//!   (30,000 chains of 20 reachable nodes);
//! - `dag_990_nodes`: a goal whose proof DAG has 990 nodes with heavy sharing (a
//!   Pascal-triangle of two-premise rule applications), built, serialized and rendered.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use prooflog::FactBase;
use prooflog::eval::{EvalOptions, evaluate};
use prooflog::ir::Program;
use prooflog::proof::{Fact, ProofOptions, build_proof, render};
use prooflog::store::{InputFact, Provenance};
use prooflog::value::Value;

fn input(program: &Program, rel: &str, args: Vec<Value>, edge: u64) -> InputFact {
    InputFact {
        rel: program.relation_id(rel).expect("relation declared"),
        args,
        confidence: 1.0,
        provenance: Provenance {
            source: "hyperedge".into(),
            table: Some("BENCH".into()),
            edge_idx: Some(edge),
            ..Provenance::default()
        },
    }
}

fn fact_base(program: Program, inputs: impl Fn(&Program) -> Vec<InputFact>) -> FactBase {
    let facts = inputs(&program);
    let options = EvalOptions::default();
    evaluate(Arc::new(program), &facts, &options).expect("bench program evaluates")
}

const CHAINS: i64 = 30_000;
const CHAIN_LEN: i64 = 20;

fn chains() -> FactBase {
    let program = Program::from_source(
        "chains.dl",
        ".decl start(x: number)
         .decl edge(x: number, y: number)
         .decl reach(x: number)
         reach(x) :- start(x).
         @confidence(0.99)
         reach(y) :- reach(x), edge(x, y).",
    )
    .expect("bench program compiles");
    fact_base(program, |p| {
        let mut facts = Vec::new();
        let mut edge = 0;
        for c in 0..CHAINS {
            let first = c * CHAIN_LEN;
            facts.push(input(p, "start", vec![Value::Number(first)], edge));
            edge += 1;
            for k in 0..CHAIN_LEN - 1 {
                let x = first + k;
                let args = vec![Value::Number(x), Value::Number(x + 1)];
                facts.push(input(p, "edge", args, edge));
                edge += 1;
            }
        }
        facts
    })
}

const TRIANGLE: i64 = 43;

fn triangle() -> FactBase {
    let program = Program::from_source(
        "triangle.dl",
        &format!(
            ".decl lvl(i: number, j: number)
             @confidence(0.999)
             lvl(n, j) :- lvl(i, j), lvl(i, k), k = j + 1, n = i + 1, n <= {TRIANGLE}."
        ),
    )
    .expect("bench program compiles");
    fact_base(program, |p| {
        (0..=TRIANGLE)
            .map(|j| input(p, "lvl", vec![Value::Number(0), Value::Number(j)], j as u64))
            .collect()
    })
}

/// The fact base's own share of the work: every lookup the proof walk makes
/// (derivation, values, confidence, evidence of each fact reached), nothing else.
fn lookups_only(fb: &FactBase, root: prooflog::FactId) -> usize {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![root];
    while let Some(f) = stack.pop() {
        if !seen.insert(f) {
            continue;
        }
        black_box((fb.args(f), fb.confidence(f)));
        match fb.derivation(f) {
            Some(d) => stack.extend(d.premises),
            None => {
                black_box(fb.evidence(f));
            }
        }
    }
    seen.len()
}

fn bench(c: &mut Criterion) {
    let options = ProofOptions::new("bench");
    // Setup runs inside each closure so that a filtered run skips it.
    c.bench_function("depth20_in_1m_facts", |b| {
        let fb = chains();
        let total: usize = (0..fb.program().relations().len() as u32)
            .map(|r| fb.len(r))
            .sum();
        assert!(total >= 1_000_000, "fact base has {total} facts");
        let goal = Fact::new("reach", vec![Value::Number(17 * CHAIN_LEN + CHAIN_LEN - 1)]);
        let tree = build_proof(&goal, &fb, &options).expect("proof builds");
        assert_eq!(tree.depth, 20);
        b.iter(|| build_proof(black_box(&goal), &fb, &options))
    });

    let fb = std::cell::OnceCell::new();
    let fb = || fb.get_or_init(triangle);
    let goal = Fact::new("lvl", vec![Value::Number(TRIANGLE), Value::Number(0)]);
    c.bench_function("dag_990_nodes", |b| {
        let tree = build_proof(&goal, fb(), &options).expect("proof builds");
        assert_eq!(tree.nodes.len(), 990);
        b.iter(|| build_proof(black_box(&goal), fb(), &options))
    });
    c.bench_function("dag_990_nodes_fact_base_lookups_only", |b| {
        let fb = fb();
        let rel = fb.relation_id("lvl").expect("lvl");
        let root = fb.lookup(rel, &goal.args).expect("goal fact");
        assert_eq!(lookups_only(fb, root), 990);
        b.iter(|| lookups_only(fb, black_box(root)))
    });
    c.bench_function("dag_990_nodes_json", |b| {
        let tree = build_proof(&goal, fb(), &options).expect("proof builds");
        b.iter(|| serde_json::to_string(black_box(&tree)))
    });
    c.bench_function("dag_990_nodes_context", |b| {
        let tree = build_proof(&goal, fb(), &options).expect("proof builds");
        b.iter(|| render::context(black_box(&tree)))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench
}
criterion_main!(benches);
