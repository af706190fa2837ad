//! The provenance resolver over the real engine, and citation resolution of proofs.

mod support;

use prooflog::FactBase;
use prooflog::answer::TagResolver;
use prooflog::proof::{EdgeRef, Fact, ProofNode, ProofOptions, ProofTree, build_proof};
use prooflog::value::Value;
use serde_json::{Map, Value as Json, json};

fn drones(provenance: bool) -> FactBase {
    support::drones(provenance)
}

fn threat() -> Fact {
    Fact::new(
        "threatens",
        vec![Value::Number(42), Value::Symbol("airport".into())],
    )
}

fn leaves(tree: &ProofTree) -> Vec<&prooflog::proof::EvidenceNode> {
    tree.nodes
        .iter()
        .filter_map(|n| match n {
            ProofNode::Evidence(e) => Some(e),
            _ => None,
        })
        .collect()
}

#[test]
fn resolver_enriches_every_leaf_it_knows() {
    let fb = drones(true);
    let seen = std::sync::Mutex::new(Vec::new());
    let resolver = |e: &EdgeRef| -> Result<Map<String, Json>, String> {
        seen.lock()
            .map_err(|_| "poisoned")?
            .push(e.hedge_tag.clone());
        let mut m = Map::new();
        m.insert("source_id".into(), json!(format!("doc-{}", e.edge_idx)));
        m.insert("digest".into(), json!("sha256:00"));
        Ok(m)
    };
    let options = ProofOptions::new("p").with_resolver(&resolver);
    let tree = build_proof(&threat(), &fb, &options).expect("proof");
    for leaf in leaves(&tree) {
        assert!(leaf.provenance.verified);
        assert_eq!(
            leaf.provenance.extra["source_id"],
            json!(format!("doc-{}", leaf.provenance.edge_idx))
        );
    }
    let asked = seen.into_inner().expect("not poisoned");
    assert_eq!(asked.len(), leaves(&tree).len(), "one call per leaf");
}

#[test]
fn resolver_error_marks_only_that_leaf_unverified() {
    let fb = drones(true);
    let resolver = |e: &EdgeRef| -> Result<Map<String, Json>, String> {
        if e.table.as_deref() == Some("SIGHTINGS") {
            Err("sightings index offline".into())
        } else {
            Ok(Map::new())
        }
    };
    let options = ProofOptions::new("p").with_resolver(&resolver);
    let tree = build_proof(&threat(), &fb, &options).expect("proof still builds");
    assert!(tree.is_proved());
    for leaf in leaves(&tree) {
        let sighting = leaf.provenance.table.as_deref() == Some("SIGHTINGS");
        assert_eq!(leaf.provenance.verified, !sighting, "{}", leaf.fact);
    }
}

#[test]
fn resolver_panic_marks_leaves_unverified() {
    let fb = drones(true);
    let resolver = |_: &EdgeRef| -> Result<Map<String, Json>, String> { panic!("boom") };
    let options = ProofOptions::new("p").with_resolver(&resolver);
    let tree = build_proof(&threat(), &fb, &options).expect("proof still builds");
    assert!(!leaves(&tree).is_empty());
    for leaf in leaves(&tree) {
        assert!(!leaf.provenance.verified);
        assert_eq!(
            leaf.provenance.extra["resolver_error"],
            "resolver panicked: boom"
        );
    }
}

#[test]
fn without_provenance_building_is_a_typed_error() {
    let fb = drones(false);
    let err = build_proof(&threat(), &fb, &ProofOptions::default()).expect_err("no provenance");
    assert_eq!(err.code().as_str(), "provenance_unavailable");
    assert!(err.to_string().contains("provenance"));
}

#[test]
fn tags_resolve_to_facts_in_words() {
    let fb = drones(true);
    let tree = build_proof(&threat(), &fb, &ProofOptions::default()).expect("proof");
    let sighting = tree.resolve("HEDGE-101");
    assert_eq!(sighting.len(), 1);
    assert_eq!(sighting[0].text, "drone 9 was sighted in zone airport");
    assert_eq!(
        tree.resolve("STEP-1")[0].text,
        "group 42 threatens zone airport"
    );
    let by_rule = tree.resolve("RULE-0");
    assert_eq!(by_rule.len(), 1);
    assert_eq!(by_rule[0].predicate, "coordinated_threat");
    assert!(tree.resolve("HEDGE-999").is_empty());
    // A tree read back from JSON still cites in words: each node carries its `text`.
    let back: ProofTree = serde_json::from_str(&tree.to_json_pretty()).expect("round trip");
    assert_eq!(
        back.resolve("HEDGE-101")[0].text,
        "drone 9 was sighted in zone airport"
    );
    assert_eq!(back.pack, tree.pack);
    // Without node texts, the words come back when the program is re-attached.
    let mut bare: serde_json::Value = serde_json::to_value(&tree).expect("json");
    for node in bare["nodes"].as_array_mut().expect("nodes") {
        node.as_object_mut().expect("node").remove("text");
    }
    let bare: ProofTree = serde_json::from_value(bare).expect("round trip");
    assert_eq!(
        bare.resolve("HEDGE-101")[0].text,
        "sighting(9, \"airport\")"
    );
    let bare = bare.with_program(fb.program());
    assert_eq!(
        bare.resolve("HEDGE-101")[0].text,
        "drone 9 was sighted in zone airport"
    );
}
