//! Golden JSON for proofs built by the public API over the real evaluator: the drone
//! scenario of the seed, a chain, a diamond with a shared sub-proof, a negated premise,
//! an aggregate and an unproved goal. Set `UPDATE_GOLDEN=1` to rewrite the files after
//! an intended format change (and review the diff).

mod support;

use prooflog::FactBase;
use prooflog::proof::{Fact, ProofNode, ProofOptions, ProofTree, build_proof, render};
use prooflog::value::Value;

const DRONES: &str = include_str!("../rules/drones/drones.dl");
const DRONE_EVIDENCE: &str = include_str!("../rules/drones/evidence.jsonl");

fn fact_base(program: &str, evidence: &str) -> FactBase {
    support::fact_base_named("test.dl", program, "test.jsonl", evidence, true)
}

fn drones() -> FactBase {
    fact_base(DRONES, DRONE_EVIDENCE)
}

fn prove(fb: &FactBase, pred: &str, args: Vec<Value>) -> ProofTree {
    build_proof(&Fact::new(pred, args), fb, &ProofOptions::new("proof-1")).expect("proof builds")
}

fn n(i: i64) -> Value {
    Value::Number(i)
}

fn sym(s: &str) -> Value {
    Value::Symbol(s.into())
}

/// Compare a tree's JSON with its golden file (or rewrite it with UPDATE_GOLDEN=1).
fn golden(name: &str, tree: &ProofTree) {
    golden_file(&format!("{name}.json"), &(tree.to_json_pretty() + "\n"));
}

fn golden_file(file: &str, actual: &str) {
    support::golden::assert_text(file, actual)
}

/// What every proved tree over a real fact base must satisfy.
fn check_against(fb: &FactBase, tree: &ProofTree) {
    let program = fb.program();
    let conf_of = |id: &str| tree.node(id).and_then(ProofNode::confidence);
    for node in &tree.nodes {
        let rel = fb
            .relation_id(node.predicate())
            .expect("node relation exists");
        let fact = fb.lookup(rel, node.args());
        match node {
            ProofNode::Conclusion(c) => {
                let fact = fact.expect("conclusion is a fact");
                assert!((fb.confidence(fact) - c.confidence).abs() < 1e-12);
                let rule: usize = c.rule_tag["RULE-".len()..].parse().expect("rule tag");
                assert_eq!(program.rules()[rule].name, c.rule);
                let min = c
                    .premises
                    .iter()
                    .filter_map(|p| conf_of(p))
                    .fold(1.0f64, f64::min);
                assert!(
                    (c.confidence - program.rules()[rule].confidence * min).abs() < 1e-12,
                    "{} confidence",
                    c.id
                );
            }
            ProofNode::Evidence(e) => {
                let fact = fact.expect("evidence is a fact");
                let input = fb.evidence(fact).expect("leaf is an input fact");
                assert_eq!(input.provenance.edge_idx, Some(e.provenance.edge_idx));
                assert!(e.provenance.verified);
            }
            ProofNode::Absence(_) => assert!(fact.is_none(), "absent fact is absent"),
            other => panic!("a node kind this test does not know: {other:?}"),
        }
    }
    if let Some(root) = tree.root() {
        let rel = fb.relation_id(&tree.goal.predicate).expect("goal relation");
        let fact = fb.lookup(rel, &tree.goal.args).expect("goal fact");
        assert_eq!(root.confidence(), Some(fb.confidence(fact)));
        assert_eq!(tree.confidence, fb.confidence(fact));
    }
}

#[test]
fn coordinated_threat_matches_the_seed() {
    let fb = drones();
    let tree = prove(&fb, "coordinated_threat", vec![n(42)]);
    check_against(&fb, &tree);
    let json = serde_json::to_value(&tree).expect("json");
    assert_eq!(json["confidence"], 0.9);
    assert_eq!(
        json["nodes"][0],
        serde_json::json!({
            "id": "S1", "kind": "conclusion", "fact": "coordinated_threat(42)",
            "text": "group 42 is a coordinated threat",
            "predicate": "coordinated_threat", "args": [42], "rule": "rule:coordinated_threat",
            "rule_tag": "RULE-0", "step_tag": "STEP-1", "confidence": 0.9,
            "premises": ["L1", "L2"]
        })
    );
    let l1 = &json["nodes"][1];
    assert_eq!(l1["hedge_tag"], "HEDGE-42");
    assert_eq!(l1["evidence_type"], "hyperedge");
    assert_eq!(l1["provenance"]["table"], "DRONES");
    assert_eq!(l1["provenance"]["event_ts"], 1_700_000_000);
    assert_eq!(l1["provenance"]["verified"], true);
    let tags: Vec<String> = tree.evidence_tags().into_iter().collect();
    assert_eq!(tags, ["HEDGE-42", "HEDGE-43", "RULE-0", "STEP-1"]);
    // The pack the proof was made with: its program file and a digest of its text.
    assert_eq!(json["pack"]["programs"], serde_json::json!(["test.dl"]));
    let digest = json["pack"]["digest"].as_str().expect("digest");
    assert_eq!(
        digest,
        format!(
            "sha256:{}",
            prooflog::digest::sha256_hex(format!("{}\n{DRONES}", DRONES.len()).as_bytes())
        )
    );
    golden("proof_coordinated_threat", &tree);
}

#[test]
fn threat_to_a_zone_shares_evidence_and_shows_the_absence() {
    let fb = drones();
    let tree = prove(&fb, "threatens", vec![n(42), sym("airport")]);
    check_against(&fb, &tree);
    // member(42, 9) supports both the coordinated threat and the intrusion's group.
    let uses = tree
        .edges
        .iter()
        .filter(|e| tree.node(&e.to).map(ProofNode::fact) == Some("member(42, 9)"))
        .count();
    assert_eq!(uses, 2);
    assert!(tree.nodes.iter().any(|n| n.fact() == "cleared(9)"));
    assert_eq!(tree.depth, 2);
    golden("proof_threatens", &tree);
    // The prompt block is a contract with prompt templates too.
    golden_file("proof_threatens_context.txt", &render::context(&tree));
    golden_file("proof_threatens_text.txt", &render::text(&tree));
}

#[test]
fn negated_premise() {
    let fb = drones();
    let tree = prove(&fb, "intrusion", vec![n(9), sym("airport")]);
    check_against(&fb, &tree);
    let s1 = tree.node("S1").expect("root");
    let last = s1.premises().last().expect("premises");
    assert!(matches!(tree.node(last), Some(ProofNode::Absence(_))));
    golden("proof_negation", &tree);
    // drone 7 was cleared, so its harbour sighting is no intrusion.
    let cleared = prove(&fb, "intrusion", vec![n(7), sym("harbor")]);
    assert!(!cleared.is_proved());
}

#[test]
fn unproved_goal() {
    let fb = drones();
    let tree = prove(&fb, "coordinated_threat", vec![n(17)]);
    assert!(!tree.is_proved());
    assert!(tree.nodes.is_empty() && tree.edges.is_empty());
    golden("proof_unproved", &tree);
}

#[test]
fn aggregate_premises_are_every_aggregated_fact() {
    let fb = drones();
    let tree = prove(&fb, "group_size", vec![n(42), n(2)]);
    check_against(&fb, &tree);
    let facts: Vec<&str> = tree.nodes.iter().map(ProofNode::fact).collect();
    assert!(facts.contains(&"member(42, 7)") && facts.contains(&"member(42, 9)"));
    assert!(!facts.contains(&"member(17, 3)"));
    golden("proof_aggregate", &tree);
}

const CHAIN: &str = "
.decl edge(a: number, b: number)
.decl path(a: number, b: number)
@confidence(0.9)
path(x, y) :- edge(x, y).
@confidence(0.95)
path(x, z) :- path(x, y), edge(y, z).
";

const CHAIN_EVIDENCE: &str = r#"{"predicate": "edge", "args": [1, 2], "confidence": 0.9, "provenance": {"table": "ROADS", "edge_idx": 1}}
{"predicate": "edge", "args": [2, 3], "provenance": {"table": "ROADS", "edge_idx": 2}}
{"predicate": "edge", "args": [3, 4], "confidence": 0.8, "provenance": {"table": "ROADS", "edge_idx": 3}}
"#;

#[test]
fn chain() {
    let fb = fact_base(CHAIN, CHAIN_EVIDENCE);
    let tree = prove(&fb, "path", vec![n(1), n(4)]);
    check_against(&fb, &tree);
    assert_eq!(tree.depth, 3);
    let steps = tree
        .nodes
        .iter()
        .filter(|n| matches!(n, ProofNode::Conclusion(_)))
        .count();
    assert_eq!(steps, 3);
    // Never more confident than the weakest input.
    assert!(tree.confidence <= 0.8);
    golden("proof_chain", &tree);
}

const DIAMOND: &str = "
.decl e(x: number)
.decl base(x: number)
.decl left(x: number)
.decl right(x: number)
.decl top(x: number)
.text top \"{0} is at the top\"
base(x) :- e(x).
@confidence(0.9)
left(x) :- base(x).
@confidence(0.5)
right(x) :- base(x).
top(x) :- left(x), right(x).
";

#[test]
fn diamond_shares_a_sub_proof() {
    let fb = fact_base(
        DIAMOND,
        r#"{"predicate": "e", "args": [1], "confidence": 0.8, "provenance": {"edge_idx": 5}}"#,
    );
    let tree = prove(&fb, "top", vec![n(1)]);
    check_against(&fb, &tree);
    let base: Vec<&ProofNode> = tree
        .nodes
        .iter()
        .filter(|n| n.predicate() == "base")
        .collect();
    assert_eq!(base.len(), 1, "the shared sub-proof is one node");
    let parents = tree.edges.iter().filter(|e| e.to == base[0].id()).count();
    assert_eq!(parents, 2);
    assert_eq!(tree.depth, 3);
    golden("proof_diamond", &tree);
}

#[test]
fn rebuilding_gives_identical_json() {
    let a = prove(&drones(), "threatens", vec![n(42), sym("airport")]);
    let b = prove(&drones(), "threatens", vec![n(42), sym("airport")]);
    assert_eq!(a.to_json_pretty(), b.to_json_pretty());
}
