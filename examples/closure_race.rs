//! Transitive closure of a random graph: the evaluator (with and without provenance)
//! against an ascent program, for a quick release-mode comparison.
//!
//! `cargo run --release --example closure_race -- [nodes] [edges] [ascent|plain|provenance]`
//! (all three by default). With `chain` among the arguments the graph is the chain
//! `0 → 1 → … → nodes-1` instead of a random one.

use std::sync::Arc;
use std::time::Instant;

use ascent::ascent;
use prooflog::diag::{SourceMap, Span};
use prooflog::eval::{EvalOptions, evaluate};
use prooflog::ir::{
    Atom, Column, Expr, Head, Literal, Program, Relation, Rule, Stratum, Term, Variable,
};
use prooflog::store::{InputFact, Provenance};
use prooflog::value::{ColumnType, Value};

ascent! {
    relation edge(u32, u32);
    relation path(u32, u32);
    path(x, y) <-- edge(x, y);
    path(x, z) <-- edge(x, y), path(y, z);
}

fn relation(name: &str) -> Relation {
    Relation {
        name: name.into(),
        columns: (0..2)
            .map(|i| Column {
                name: format!("_{i}"),
                ty: ColumnType::Number,
            })
            .collect(),
        input: None,
        output: true,
        outputs: Vec::new(),
        printsize: false,
        auxiliary: false,
        functional: None,
        text: None,
        span: Span::default(),
    }
}

fn var(name: &str) -> Variable {
    Variable {
        name: name.into(),
        ty: ColumnType::Number,
    }
}

fn atom(rel: u32, args: &[u32]) -> Literal {
    Literal::Atom(Atom {
        rel,
        args: args.iter().map(|&v| Term::Var(v)).collect(),
        span: Span::default(),
    })
}

fn program() -> Program {
    let rule = |id: u32, body: Vec<Literal>, head: [u32; 2], vars: &[&str]| Rule {
        id,
        name: format!("rule:path#{id}"),
        confidence: 1.0,
        head: Head {
            rel: 1,
            args: head.iter().map(|&v| Expr::Var(v)).collect(),
        },
        body,
        vars: vars.iter().map(|n| var(n)).collect(),
        stratum: 0,
        span: Span::default(),
    };
    Program {
        relations: vec![relation("edge"), relation("path")],
        rules: vec![
            rule(0, vec![atom(0, &[0, 1])], [0, 1], &["x", "y"]),
            rule(
                1,
                vec![atom(0, &[0, 1]), atom(1, &[1, 2])],
                [0, 2],
                &["x", "y", "z"],
            ),
        ],
        strata: vec![Stratum {
            relations: vec![1],
            rules: vec![0, 1],
            recursive: true,
        }],
        facts: Vec::new(),
        sources: SourceMap::new(),
    }
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
        let options = EvalOptions {
            provenance,
            ..EvalOptions::default()
        };
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
