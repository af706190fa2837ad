//! Classic Datalog programs (tests/programs/) with hand-computed expected outputs.
//!
//! Each `NAME.dl` is loaded by the real loader with its inputs (facts in its text,
//! `NAME.facts.json`, `NAME.evidence.jsonl` with confidences) and evaluated by the
//! engine and by the naive reference evaluator; both must give exactly the rows of
//! `NAME.expected.json` for the relations it lists, and the confidences it lists.

mod support;

use prooflog::Value;
use prooflog::store::{Loaded, Loader};
use serde_json::Value as Json;
use std::collections::BTreeSet;
use std::path::PathBuf;

use support::naive::Relations;

const TOLERANCE: f64 = 1e-9;

fn programs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

fn read_json(path: &PathBuf) -> Json {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad JSON in {}: {e}", path.display()))
}

fn values(row: &Json) -> Vec<Value> {
    row.as_array()
        .expect("a row is an array")
        .iter()
        .map(|v| Value::from_json(v).expect("a value is a number or a string"))
        .collect()
}

/// Check one result against the expected rows and confidences.
fn check(who: &str, result: &Relations, expected: &Json) {
    let rows = expected["rows"].as_object().expect("`rows` is an object");
    assert!(!rows.is_empty(), "expected output lists no relation");
    for (name, want) in rows {
        let want: BTreeSet<Vec<Value>> = want
            .as_array()
            .expect("rows are an array")
            .iter()
            .map(values)
            .collect();
        let got: BTreeSet<Vec<Value>> = result
            .get(name)
            .unwrap_or_else(|| panic!("{who}: no relation {name}"))
            .keys()
            .cloned()
            .collect();
        assert_eq!(got, want, "{who}: rows of {name}");
    }
    for entry in expected["confidence"]
        .as_array()
        .expect("`confidence` is an array")
    {
        let name = entry[0].as_str().expect("relation name");
        let args = values(&entry[1]);
        let want = entry[2].as_f64().expect("confidence");
        let got = result[name]
            .get(&args)
            .unwrap_or_else(|| panic!("{who}: {name}{args:?} not derived"));
        assert!(
            (got - want).abs() <= TOLERANCE,
            "{who}: confidence of {name}{args:?} is {got}, expected {want}"
        );
    }
}

fn run_classic(name: &str) {
    let dir = programs_dir();
    let mut loader = Loader::new();
    let loaded = (|| {
        loader.program_file(dir.join(format!("{name}.dl")))?;
        let facts = dir.join(format!("{name}.facts.json"));
        if facts.exists() {
            loader.facts(facts)?;
        }
        let evidence = dir.join(format!("{name}.evidence.jsonl"));
        if evidence.exists() {
            loader.evidence(evidence)?;
        }
        loader.clone().load()
    })();
    let Loaded {
        program,
        facts: inputs,
        ..
    } = match loaded {
        Ok(l) => l,
        Err(e) => panic!("{name} does not load: {e}"),
    };
    let inputs = inputs.to_vec();
    let expected = read_json(&dir.join(format!("{name}.expected.json")));

    let reference = support::naive::evaluate(&program, &inputs);
    check("naive reference", &reference, &expected);
    for provenance in [true, false] {
        let fb = support::run(&program, &inputs, provenance);
        let engine = support::engine_relations(&fb);
        check(
            &format!("engine (provenance {provenance})"),
            &engine,
            &expected,
        );
        if let Err(diff) = support::diff_relations(&engine, &reference, TOLERANCE) {
            panic!("engine and reference differ on {name}: {diff}");
        }
    }
}

#[test]
fn transitive_closure() {
    run_classic("tc");
}

#[test]
fn same_generation() {
    run_classic("sg");
}

#[test]
fn andersen_points_to() {
    run_classic("andersen");
}

#[test]
fn orbits_with_negation() {
    run_classic("orbits");
}

#[test]
fn aggregates_with_grouping() {
    run_classic("aggregates");
}
