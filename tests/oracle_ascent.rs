//! The engine against ascent, an independent Datalog implementation, on random
//! inputs: transitive closure, same generation, stratified negation, and a weighted
//! transitive closure whose confidences ascent computes with a max lattice.

mod support;

#[path = "../benches/support/max_conf.rs"]
mod max_conf;

use max_conf::MaxConf;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use ascent::ascent;
use prooflog::Value;
use prooflog::ir::Program;
use prooflog::store::{InputFact, Provenance};
use proptest::prelude::*;

/// Nodes are `0..NODES`.
const NODES: u32 = 10;

/// Rule confidences of the weighted transitive closure.
const BASE_CONF: f64 = 0.95;
const STEP_CONF: f64 = 0.9;

ascent! {
    struct Closure;
    relation edge(u32, u32);
    relation path(u32, u32);
    path(x, y) <-- edge(x, y);
    path(x, z) <-- path(x, y), edge(y, z);
}

ascent! {
    struct SameGeneration;
    relation parent(u32, u32);
    relation sg(u32, u32);
    sg(x, y) <-- parent(x, p), parent(y, p), if x != y;
    sg(x, y) <-- parent(x, xp), parent(y, yp), sg(xp, yp);
}

ascent! {
    struct Unreachable;
    relation edge(u32, u32);
    relation source(u32);
    relation node(u32);
    relation reach(u32);
    relation unreached(u32);
    relation dead_end(u32);
    relation has_out(u32);
    node(x) <-- edge(x, _);
    node(y) <-- edge(_, y);
    reach(x) <-- source(x);
    reach(y) <-- reach(x), edge(x, y);
    has_out(x) <-- edge(x, _);
    unreached(x) <-- node(x), !reach(x);
    dead_end(x) <-- reach(x), !has_out(x), !source(x);
}

ascent! {
    struct WeightedClosure;
    relation wedge(u32, u32, MaxConf);
    lattice wpath(u32, u32, MaxConf);
    wpath(x, y, MaxConf(BASE_CONF * c.0)) <-- wedge(x, y, c);
    wpath(x, z, MaxConf(STEP_CONF * c1.0.min(c2.0))) <-- wpath(x, y, c1), wedge(y, z, c2);
}

const CLOSURE: &str = "
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
";

const SAME_GENERATION: &str = "
sg(x, y) :- parent(x, p), parent(y, p), x != y.
sg(x, y) :- parent(x, xp), parent(y, yp), sg(xp, yp).
";

const UNREACHABLE: &str = "
.decl edge(a: number, b: number)
.decl source(a: number)
node(x) :- edge(x, _).
node(y) :- edge(_, y).
reach(x) :- source(x).
reach(y) :- reach(x), edge(x, y).
has_out(x) :- edge(x, _).
unreached(x) :- node(x), !reach(x).
dead_end(x) :- reach(x), !has_out(x), !source(x).
";

fn weighted_source() -> String {
    format!(
        "
.decl wedge(a: number, b: number)
@confidence({BASE_CONF:?})
wpath(x, y) :- wedge(x, y).
@confidence({STEP_CONF:?})
wpath(x, z) :- wpath(x, y), wedge(y, z).
"
    )
}

/// Compile an oracle program (its input relations are declared `number`).
fn compile(source: &str) -> Arc<Program> {
    match support::compile("oracle.dl", source) {
        Ok(p) => Arc::new(p),
        Err(e) => panic!("oracle program rejected: {e}"),
    }
}

fn fact(program: &Program, rel: &str, args: &[u32], confidence: f64) -> InputFact {
    InputFact {
        rel: program
            .relation_id(rel)
            .unwrap_or_else(|| panic!("no relation {rel}")),
        args: args.iter().map(|&a| Value::Number(i64::from(a))).collect(),
        confidence,
        provenance: Provenance {
            source: "facts".into(),
            ..Provenance::default()
        },
    }
}

/// The rows of one relation of the engine's result, as u32 tuples.
fn rows(fb: &prooflog::FactBase, rel: &str) -> BTreeSet<Vec<u32>> {
    let id = fb
        .relation_id(rel)
        .unwrap_or_else(|| panic!("no relation {rel}"));
    fb.rows(id)
        .into_iter()
        .map(|row| {
            row.into_iter()
                .map(|v| match v {
                    Value::Number(n) => u32::try_from(n).expect("small node id"),
                    other => panic!("unexpected value {other}"),
                })
                .collect()
        })
        .collect()
}

fn pairs<'a>(it: impl IntoIterator<Item = &'a (u32, u32)>) -> BTreeSet<Vec<u32>> {
    it.into_iter().map(|&(a, b)| vec![a, b]).collect()
}

fn singles<'a>(it: impl IntoIterator<Item = &'a (u32,)>) -> BTreeSet<Vec<u32>> {
    it.into_iter().map(|&(a,)| vec![a]).collect()
}

fn edges(max: usize) -> impl Strategy<Value = Vec<(u32, u32)>> {
    prop::collection::vec((0..NODES, 0..NODES), 0..max)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 48,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn transitive_closure_matches_ascent(edge in edges(30)) {
        let mut oracle = Closure { edge: edge.clone(), ..Default::default() };
        oracle.run();

        let program = compile(&format!(".decl edge(a: number, b: number)\n{CLOSURE}"));
        let inputs: Vec<_> = edge.iter().map(|&(a, b)| fact(&program, "edge", &[a, b], 1.0)).collect();
        let fb = support::run(&program, &inputs, true);
        prop_assert_eq!(rows(&fb, "path"), pairs(&oracle.path));
    }

    #[test]
    fn same_generation_matches_ascent(parent in edges(16)) {
        let mut oracle = SameGeneration { parent: parent.clone(), ..Default::default() };
        oracle.run();

        let program = compile(&format!(".decl parent(c: number, p: number)\n{SAME_GENERATION}"));
        let inputs: Vec<_> =
            parent.iter().map(|&(a, b)| fact(&program, "parent", &[a, b], 1.0)).collect();
        let fb = support::run(&program, &inputs, true);
        prop_assert_eq!(rows(&fb, "sg"), pairs(&oracle.sg));
    }

    #[test]
    fn stratified_negation_matches_ascent(
        edge in edges(20),
        source in prop::collection::vec(0..NODES, 0..3),
    ) {
        let mut oracle = Unreachable {
            edge: edge.clone(),
            source: source.iter().map(|&s| (s,)).collect(),
            ..Default::default()
        };
        oracle.run();

        let program = compile(UNREACHABLE);
        let mut inputs: Vec<_> =
            edge.iter().map(|&(a, b)| fact(&program, "edge", &[a, b], 1.0)).collect();
        inputs.extend(source.iter().map(|&s| fact(&program, "source", &[s], 1.0)));
        let fb = support::run(&program, &inputs, true);
        prop_assert_eq!(rows(&fb, "reach"), singles(&oracle.reach));
        prop_assert_eq!(rows(&fb, "unreached"), singles(&oracle.unreached));
        prop_assert_eq!(rows(&fb, "dead_end"), singles(&oracle.dead_end));
    }

    /// Confidence is a max lattice over paths: conf(path) = rule × min(prefix, edge).
    #[test]
    fn weighted_closure_matches_ascent_lattice(
        wedge in prop::collection::vec((0..NODES, 0..NODES, 1..=1000u32), 0..30),
    ) {
        let conf = |k: u32| f64::from(k) / 1000.0;
        let mut oracle = WeightedClosure {
            wedge: wedge.iter().map(|&(a, b, k)| (a, b, MaxConf(conf(k)))).collect(),
            ..Default::default()
        };
        oracle.run();
        let expected: BTreeMap<Vec<u32>, f64> =
            oracle.wpath.iter().map(|&(a, b, c)| (vec![a, b], c.0)).collect();

        let program = compile(&weighted_source());
        let inputs: Vec<_> =
            wedge.iter().map(|&(a, b, k)| fact(&program, "wedge", &[a, b], conf(k))).collect();
        for provenance in [true, false] {
            let fb = support::run(&program, &inputs, provenance);
            let rel = fb.relation_id("wpath").expect("wpath");
            let actual: BTreeMap<Vec<u32>, f64> = fb
                .facts(rel)
                .map(|f| {
                    let row = fb.args(f).iter().map(|v| match v {
                        Value::Number(n) => *n as u32,
                        other => panic!("unexpected value {other}"),
                    }).collect();
                    (row, fb.confidence(f))
                })
                .collect();
            prop_assert_eq!(actual.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>());
            for (k, c) in &expected {
                prop_assert!((actual[k] - c).abs() <= 1e-12, "wpath{:?}: {} vs ascent {}", k, actual[k], c);
            }
        }
    }
}
