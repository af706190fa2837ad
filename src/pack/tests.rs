use super::*;

const MANIFEST: &str = r#"
// A pack for tests.
(
    name: "reach",
    version: "0.1.0",
    description: "Reachability over roads.",
    rules: ["reach.dl"],
    evidence: [
        (table: "ROADS", predicate: "road", args: [Member(0), Member(1)]),
        (table: "CLOSURES", predicate: "closed", args: [Attr("city")]),
    ],
    goals: [
        (name: "reach", goal: "reach(from, to)", question: "Can one drive from {from} to {to}?"),
    ],
    samples: [
        (name: "roads", hyperedges: "roads.jsonl", expect: ["reach(\"a\", \"c\")"], absent: ["reach(\"c\", _)"]),
        (name: "broken", hyperedges: "roads.jsonl", expect: ["reach(\"c\", \"a\")"]),
    ],
)
"#;

const RULES: &str = r#"
.decl road(a: symbol, b: symbol)
.decl closed(c: symbol)
.decl reach(a: symbol, b: symbol)
.text reach "one can drive from {0} to {1}"
@name("drive")
reach(x, y) :- road(x, y), !closed(y).
@name("drive_on")
reach(x, z) :- reach(x, y), road(y, z), !closed(z).
"#;

const ROADS: &str = r#"{"table": "ROADS", "edge_idx": 1, "member_ids": ["a", "b"], "doc_id": "map", "span": [0, 10]}
{"table": "ROADS", "edge_idx": 2, "member_ids": ["b", "c"]}
{"table": "ROADS", "member_ids": ["c", "d"]}
{"table": "CLOSURES", "attributes": {"city": "d"}}
"#;

fn pack() -> Pack {
    Pack::from_texts(
        "packs/reach",
        MANIFEST,
        &[("reach.dl", RULES), ("roads.jsonl", ROADS)],
    )
    .unwrap()
}

#[test]
fn a_pack_checks_its_samples() {
    let report = pack().check().unwrap();
    assert_eq!(report.samples.len(), 2);
    assert!(report.samples[0].passed, "{:?}", report.samples[0]);
    assert!(!report.samples[1].passed);
    assert!(!report.passed());
    assert_eq!(report.pack.tables["ROADS"], "road");
}

#[test]
fn hyperedges_become_facts_with_their_provenance() {
    let set = pack().compile().unwrap();
    let hs = read_hyperedges("roads.jsonl", ROADS).unwrap();
    let facts = set.facts_of(&hs).unwrap();
    assert_eq!(facts.len(), 4);
    assert_eq!(
        facts[0].args,
        vec![Value::Symbol("a".into()), Value::Symbol("b".into())]
    );
    assert_eq!(facts[0].provenance.extra["doc_id"], "map");
    assert_eq!(facts[3].args, vec![Value::Symbol("d".into())]);
    let bad = set
        .facts_of(&[Hyperedge::new("RIVERS", vec![])])
        .unwrap_err();
    assert!(
        bad.to_string().contains("no pack maps table `RIVERS`"),
        "{bad}"
    );
    let missing = set
        .facts_of(&[Hyperedge::new("ROADS", vec!["a".into()])])
        .unwrap_err();
    assert!(missing.to_string().contains("no member 1"), "{missing}");
}

#[test]
fn request_goals_by_name_or_pattern() {
    let set = pack().compile().unwrap();
    let g = set.request_goal("reach").unwrap();
    assert_eq!(g.question, "Can one drive from from to to?");
    let g = set.request_goal("reach(\"a\", to)").unwrap();
    assert_eq!(g.question, "Can one drive from a to to?");
    let g = set.request_goal("reach/reach").unwrap();
    assert_eq!(g.name.as_deref(), Some("reach"));
    assert!(set.request_goal("fly(1)").is_err());
    assert!(set.request_goal("reach(1)").is_err());
}

#[test]
fn packs_that_claim_one_name_clash() {
    let other = Pack::from_texts(
        "packs/other",
        &MANIFEST
            .replace(
                "name: \"reach\",\n    version",
                "name: \"other\",\n    version",
            )
            .replace("(name: \"reach\", goal", "(name: \"reach2\", goal")
            .replace("\"ROADS\"", "\"ROADS2\"")
            .replace("\"CLOSURES\"", "\"CLOSURES2\""),
        &[("reach.dl", RULES), ("roads.jsonl", ROADS)],
    )
    .unwrap();
    let err = PackSet::new(vec![pack(), other]).unwrap_err().to_string();
    assert!(
        err.contains("relation `road` belongs to pack `reach` (packs/reach/reach.dl:2) and to pack `other` (packs/other/reach.dl:2)"),
        "{err}"
    );
    assert!(
        err.contains("rule `drive` is named in pack `reach`"),
        "{err}"
    );
}

#[test]
fn manifest_errors_point_into_the_manifest() {
    let err = Pack::from_texts("p", "(name: \"x\", version: 1)", &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("p/pack.ron:1"), "{err}");
    let err = Pack::from_texts("p", MANIFEST, &[("reach.dl", RULES)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("roads.jsonl, which was not given"), "{err}");
    let bad_map = MANIFEST.replace("args: [Member(0), Member(1)]", "args: [Member(0)]");
    let err = Pack::from_texts(
        "p",
        &bad_map,
        &[("reach.dl", RULES), ("roads.jsonl", ROADS)],
    )
    .unwrap()
    .compile()
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("`road` has 2 columns, the mapping gives 1"),
        "{err}"
    );
}

#[test]
fn manifests_round_trip() {
    let m = pack().manifest().clone();
    let again = Manifest::parse("x", &m.to_ron()).unwrap();
    assert_eq!(again, m);
}
