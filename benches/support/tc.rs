//! Transitive-closure workloads shared by `benches/eval.rs` and
//! `examples/tc_memory.rs`: the same graphs and the same four implementations
//! (prooflog with and without provenance, ascent, datafrog).

use std::sync::Arc;

use prooflog::Value;
use prooflog::check::TypeHints;
use prooflog::diag::SourceMap;
use prooflog::eval::{EvalOptions, evaluate};
use prooflog::ir::Program;
use prooflog::store::{InputFact, Provenance};

/// The transitive-closure program as prooflog runs it.
pub const TC_SOURCE: &str = "
.decl edge(src: number, dst: number)
.decl path(src: number, dst: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
";

/// A random directed graph: `nodes` nodes, `edges` distinct edges (no self loops),
/// drawn with a fixed-seed splitmix64 so every run sees the same graph.
pub fn random_graph(nodes: u32, edges: usize, seed: u64) -> Vec<(u32, u32)> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut set = std::collections::BTreeSet::new();
    while set.len() < edges {
        let a = (next() % u64::from(nodes)) as u32;
        let b = (next() % u64::from(nodes)) as u32;
        if a != b {
            set.insert((a, b));
        }
    }
    set.into_iter().collect()
}

/// A chain `0 → 1 → … → nodes-1`.
pub fn chain(nodes: u32) -> Vec<(u32, u32)> {
    (0..nodes.saturating_sub(1)).map(|i| (i, i + 1)).collect()
}

/// The benchmark graph: 2,000 nodes, 4,000 edges, fixed seed.
pub fn bench_random_graph() -> Vec<(u32, u32)> {
    random_graph(2_000, 4_000, 0x5eed)
}

/// The benchmark chain: 1,000 nodes.
pub fn bench_chain() -> Vec<(u32, u32)> {
    chain(1_000)
}

/// The compiled TC program and the edge facts as prooflog input.
pub struct Prepared {
    /// The checked program.
    pub program: Arc<Program>,
    /// One input fact per edge.
    pub inputs: Vec<InputFact>,
}

/// Compile the TC program and turn the edges into input facts.
pub fn prepare(edges: &[(u32, u32)]) -> Prepared {
    let mut sources = SourceMap::new();
    sources.add("tc.dl", TC_SOURCE);
    let program = match prooflog::check::compile(sources, &TypeHints::new()) {
        Ok(p) => Arc::new(p),
        Err(e) => panic!("tc program rejected: {e}"),
    };
    let edge = program.relation_id("edge").expect("edge relation");
    let inputs = edges
        .iter()
        .enumerate()
        .map(|(i, &(a, b))| InputFact {
            rel: edge,
            args: vec![Value::Number(i64::from(a)), Value::Number(i64::from(b))],
            confidence: 1.0,
            provenance: Provenance {
                source: "facts".into(),
                edge_idx: Some(i as u64),
                ..Provenance::default()
            },
        })
        .collect();
    Prepared { program, inputs }
}

/// Evaluate with prooflog; returns the number of `path` facts.
#[allow(clippy::needless_update)] // stays correct when options gain fields
pub fn run_prooflog(prepared: &Prepared, provenance: bool) -> usize {
    let options = EvalOptions::default().with_provenance(provenance);
    let fb = match evaluate(Arc::clone(&prepared.program), &prepared.inputs, &options) {
        Ok(fb) => fb,
        Err(e) => panic!("evaluation failed: {e}"),
    };
    let path = fb.relation_id("path").expect("path relation");
    fb.len(path)
}

ascent::ascent! {
    struct AscentTc;
    relation edge(u32, u32);
    relation path(u32, u32);
    path(x, y) <-- edge(x, y);
    path(x, z) <-- path(x, y), edge(y, z);
}

/// Evaluate with ascent; returns the number of `path` facts.
pub fn run_ascent(edges: &[(u32, u32)]) -> usize {
    let mut prog = AscentTc {
        edge: edges.to_vec(),
        ..Default::default()
    };
    prog.run();
    prog.path.len()
}

/// Evaluate with datafrog; returns the number of `path` facts.
pub fn run_datafrog(edges: &[(u32, u32)]) -> usize {
    let mut iteration = datafrog::Iteration::new();
    // edge keyed by source, path keyed by its destination, for `path(x, y), edge(y, z)`.
    let edge_by_src: datafrog::Relation<(u32, u32)> = edges.iter().copied().collect();
    let path_by_dst = iteration.variable::<(u32, u32)>("path_by_dst");
    path_by_dst.extend(edges.iter().map(|&(x, y)| (y, x)));
    while iteration.changed() {
        path_by_dst.from_join(&path_by_dst, &edge_by_src, |_y, &x, &z| (z, x));
    }
    path_by_dst.complete().len()
}
