//! Transitive closure of a random graph: the evaluator (with and without provenance)
//! against an ascent program, for a quick release-mode comparison.
//!
//! `cargo run --release --example closure_race -- [nodes] [edges] [ascent|plain|provenance]`
//! (all three by default). With `chain` among the arguments the graph is the chain
//! `0 → 1 → … → nodes-1` instead of a random one.

use std::sync::Arc;
use std::time::Instant;

use ascent::ascent;
use prooflog::eval::{EvalOptions, evaluate};
use prooflog::ir::Program;
use prooflog::store::{InputFact, Provenance};
use prooflog::value::Value;

ascent! {
    relation edge(u32, u32);
    relation path(u32, u32);
    path(x, y) <-- edge(x, y);
    path(x, z) <-- edge(x, y), path(y, z);
}

fn program() -> Program {
    Program::from_source(
        "closure.dl",
        ".decl edge(x: number, y: number)\n.decl path(x: number, y: number)\n\
         path(x, y) :- edge(x, y).\npath(x, z) :- edge(x, y), path(y, z).\n",
    )
    .expect("the closure program compiles")
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let chain = std::env::args().skip(1).any(|a| a == "chain");
    let only: Option<String> = std::env::args()
        .skip(1)
        .find(|a| a.parse::<usize>().is_err() && a != "chain");
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let nodes = args.first().copied().unwrap_or(2000) as u64;
    let edges = args.get(1).copied().unwrap_or(4000);
    let mut x: u64 = 0x2545F4914F6CDD1D;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % nodes
    };
    let graph: Vec<(u32, u32)> = if chain {
        (1..nodes as u32).map(|n| (n - 1, n)).collect()
    } else {
        (0..edges).map(|_| (next() as u32, next() as u32)).collect()
    };

    let start = Instant::now();
    let ran_ascent = wanted("ascent");
    if ran_ascent {
        let mut prog = AscentProgram {
            edge: graph.clone(),
            ..Default::default()
        };
        prog.run();
        println!(
            "ascent:                {:>8.3}s  {} paths",
            start.elapsed().as_secs_f64(),
            prog.path.len()
        );
    }
    let ascent_time = start.elapsed();

    let program = Arc::new(program());
    let inputs: Vec<InputFact> = graph
        .iter()
        .map(|&(a, b)| InputFact {
            rel: 0,
            args: vec![Value::Number(a as i64), Value::Number(b as i64)],
            confidence: 1.0,
            provenance: Provenance::default(),
        })
        .collect();
    for provenance in [false, true] {
        if !wanted(if provenance { "provenance" } else { "plain" }) {
            continue;
        }
        let options = EvalOptions::default().with_provenance(provenance);
        let start = Instant::now();
        let fb = evaluate(program.clone(), &inputs, &options).expect("evaluation");
        let t = start.elapsed();
        let ratio = if ran_ascent {
            format!(
                "  ({:.2}x ascent)",
                t.as_secs_f64() / ascent_time.as_secs_f64()
            )
        } else {
            String::new()
        };
        println!(
            "prooflog provenance={:<5} {:>8.3}s  {} paths{ratio}",
            provenance,
            t.as_secs_f64(),
            fb.len(1),
        );
        println!("  {:?}", fb.stats());
    }
}
