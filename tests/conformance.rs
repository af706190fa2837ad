//! Conformance: classic programs in the style of Soufflé's and Nemo's public examples
//! (written for this suite), each a directory `tests/conformance/<case>/` with
//! `program.dl`, optional `facts.json`, and `expected.json`: the exact rows of each
//! relation it lists (`"warnings"`, when present, lists the codes of the load's
//! warnings in order). Every case is loaded by the real loader and evaluated by the
//! engine (provenance on and off) and by the naive reference evaluator; all three
//! must give exactly the expected rows.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use prooflog::Value;
use prooflog::store::Loader;
use serde_json::Value as Json;

use support::naive::Relations;

fn cases() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/conformance exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("program.dl").is_file())
        .collect();
    cases.sort();
    cases
}

fn rows(v: &Json) -> BTreeSet<Vec<Value>> {
    v.as_array()
        .expect("rows are an array")
        .iter()
        .map(|row| {
            row.as_array()
                .expect("a row is an array")
                .iter()
                .map(|x| Value::from_json(x).expect("a number or a string"))
                .collect()
        })
        .collect()
}

fn check(case: &str, who: &str, got: &Relations, expected: &serde_json::Map<String, Json>) {
    for (name, want) in expected {
        if name == "warnings" {
            continue;
        }
        let got: BTreeSet<Vec<Value>> = got
            .get(name)
            .unwrap_or_else(|| panic!("{case}/{who}: no relation `{name}`"))
            .keys()
            .cloned()
            .collect();
        assert_eq!(got, rows(want), "{case}/{who}: rows of `{name}`");
    }
}

fn run_case(dir: &Path) {
    let case = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("?")
        .to_string();
    let mut loader = Loader::new();
    loader
        .program_file(dir.join("program.dl"))
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    let facts = dir.join("facts.json");
    if facts.exists() {
        loader
            .facts(&facts)
            .unwrap_or_else(|e| panic!("{case}: {e}"));
    }
    let loaded = loader
        .load()
        .unwrap_or_else(|e| panic!("{case} does not load: {e}"));
    let text = std::fs::read_to_string(dir.join("expected.json")).expect("expected.json");
    let expected: serde_json::Map<String, Json> =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{case}: expected.json: {e}"));
    let warnings: Vec<&str> = loaded.warnings.iter().map(|w| w.code.as_str()).collect();
    let want: Vec<&str> = expected
        .get("warnings")
        .and_then(Json::as_array)
        .map(|a| a.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    assert_eq!(warnings, want, "{case}: warnings {:?}", loaded.warnings);

    let inputs = loaded.facts.to_vec();
    let reference = support::naive::evaluate(&loaded.program, &inputs);
    check(&case, "naive reference", &reference, &expected);
    for provenance in [true, false] {
        let fb = support::run(&loaded.program, &inputs, provenance);
        check(&case, "engine", &support::engine_relations(&fb), &expected);
    }
    // The columnar inputs evaluate to the same rows.
    let options = prooflog::eval::EvalOptions::default();
    let fb = prooflog::eval::evaluate(loaded.program.clone(), &loaded.facts, &options)
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    check(
        &case,
        "engine (columnar inputs)",
        &support::engine_relations(&fb),
        &expected,
    );
}

#[test]
fn every_case_gives_its_expected_rows() {
    let cases = cases();
    assert!(cases.len() >= 10, "the suite has its cases");
    for dir in &cases {
        run_case(dir);
    }
}
