//! The public loading API: `RawInputs` (two phases) and `Loader` (the whole load).

use std::collections::BTreeSet;

use prooflog::diag::ErrorCode;
use prooflog::ir::Program;
use prooflog::store::{Dialect, Loader, RawInputs};
use prooflog::value::{ColumnType, Value};
use proptest::prelude::*;

/// A program with `edge(number, number)` and `tag(symbol)`.
fn program() -> Program {
    Program::from_source(
        "store.dl",
        ".decl edge(c0: number, c1: number)
.decl tag(c0: symbol)
.output edge
.output tag
",
    )
    .expect("the program compiles")
}

#[test]
fn a_bad_file_adds_nothing_and_keeps_what_was_read() {
    let mut raw = RawInputs::new();
    raw.add_evidence_jsonl("a.jsonl", "{\"predicate\": \"tag\", \"args\": [\"x\"]}\n")
        .expect("good line");
    let bad = "{\"predicate\": \"tag\", \"args\": [\"y\"]}\n{\"predicate\": \"tag\", \"args\": [\"z\"], \"confidence\": 1.5}\n";
    let err = raw.add_evidence_jsonl("b.jsonl", bad).unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadInput);
    assert_eq!(raw.len(), 1, "the good first line of b.jsonl was not kept");
    let facts = raw.resolve(&program()).expect("a.jsonl resolves");
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0].args, vec![Value::Symbol("x".into())]);
}

#[test]
fn a_directory_is_read_in_name_order() {
    let dir = std::env::temp_dir().join(format!("prooflog-store-dir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("b.json"), r#"{"tag": [["from-json"]]}"#).expect("write");
    std::fs::write(dir.join("edge.csv"), "1,2\n").expect("write");
    std::fs::write(dir.join("a.tsv"), "ignored-unknown\n").expect("write");
    std::fs::write(dir.join("notes.txt"), "not a fact file").expect("write");
    let mut raw = RawInputs::new();
    raw.read_facts(&dir).expect("directory reads");
    std::fs::remove_dir_all(&dir).expect("clean up");
    // a.tsv (relation `a`), b.json, edge.csv; notes.txt is skipped.
    assert_eq!(raw.len(), 3);
    let err = raw.resolve(&program()).unwrap_err();
    assert!(err.primary().message.contains("unknown relation `a`"));
    let hints = raw.type_hints();
    let keys: BTreeSet<&str> = hints.keys().map(String::as_str).collect();
    assert_eq!(keys, BTreeSet::from(["a", "edge", "tag"]));
}

#[test]
fn delimited_text_is_typed_by_the_program() {
    let mut raw = RawInputs::new();
    raw.add_delimited("edge.facts", "edge", "1\t2\n-3\t4\n", Dialect::tsv())
        .expect("reads");
    let facts = raw.resolve(&program()).expect("types");
    assert_eq!(facts[1].args, vec![Value::Number(-3), Value::Number(4)]);
    assert_eq!(facts[1].provenance.table.as_deref(), Some("edge.facts"));
    assert!(facts[1].provenance.extra.is_empty(), "data rows stay small");
}

#[test]
fn loader_reports_a_missing_program_file() {
    let mut loader = Loader::new();
    let err = loader.program_file("no/such/program.dl").unwrap_err();
    assert_eq!(err.code(), ErrorCode::Io);
    assert!(err.primary().message.contains("no/such/program.dl"));
}

#[test]
fn loader_compiles_with_type_hints_from_the_data() {
    let mut loader = Loader::new();
    loader.program_text(
        "mem.dl",
        ".decl hot(s: symbol)\n.output hot\nhot(s) :- temp(s, t), t > 30.5.\nnote(\"ok\").\n",
    );
    loader
        .facts_json("t.json", r#"{"temp": [["a", 31], ["b", 12.5]]}"#)
        .expect("reads");
    loader
        .evidence_jsonl(
            "e.jsonl",
            "{\"predicate\": \"temp\", \"args\": [\"c\", 40]}\n",
        )
        .expect("reads");
    let loaded = loader.load().expect("loads");
    let temp = loaded.program.relation_id("temp").expect("temp exists");
    let rel = loaded.program.relation(temp);
    assert_eq!(
        rel.columns[1].ty,
        ColumnType::Float,
        "31 beside 12.5: float"
    );
    let temps: Vec<Vec<Value>> = loaded
        .facts
        .iter()
        .filter(|f| f.rel == temp)
        .map(|f| f.args)
        .collect();
    assert_eq!(
        temps,
        vec![
            vec![Value::Symbol("a".into()), Value::Float(31.0)],
            vec![Value::Symbol("b".into()), Value::Float(12.5)],
            vec![Value::Symbol("c".into()), Value::Float(40.0)],
        ]
    );
    // The program's own fact comes first, numbered first.
    assert_eq!(loaded.facts.get(0).provenance.source, "program");
    assert_eq!(loaded.facts.get(0).provenance.edge_idx, Some(0));
    assert_eq!(loaded.facts.get(3).provenance.source, "hyperedge");
}

#[test]
fn loader_rejects_a_record_that_fights_a_declaration() {
    let mut loader = Loader::new();
    loader.program_text("p.dl", ".decl edge(a: number, b: number)\n.output edge\n");
    loader
        .facts_json("f.json", "{\"edge\": [[1, 2],\n [3, \"four\"]]}")
        .expect("reads");
    let err = loader.load().unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadInput);
    let loc = err.primary().location.clone().expect("located");
    assert_eq!((loc.file.as_str(), loc.line, loc.col), ("f.json", 2, 6));
}

/// One evidence record: a tag value and maybe an explicit edge index.
fn record() -> impl Strategy<Value = (u8, Option<u16>)> {
    (0u8..6, prop::option::of(0u16..40))
}

proptest! {
    /// Explicit indexes are kept; every other fact gets a fresh index after the
    /// largest explicit one, in load order; one index never names two facts.
    #[test]
    fn edge_indexes_are_complete_and_unambiguous(records in prop::collection::vec(record(), 0..30)) {
        let text: String = records
            .iter()
            .map(|(v, idx)| match idx {
                Some(i) => format!("{{\"predicate\": \"tag\", \"args\": [\"t{v}\"], \"provenance\": {{\"edge_idx\": {i}}}}}\n"),
                None => format!("{{\"predicate\": \"tag\", \"args\": [\"t{v}\"]}}\n"),
            })
            .collect();
        let mut raw = RawInputs::new();
        raw.add_evidence_jsonl("e.jsonl", &text).expect("well-formed");
        let clash = records.iter().enumerate().any(|(i, (v, idx))| {
            idx.is_some()
                && records[..i].iter().any(|(w, jdx)| jdx == idx && w != v)
        });
        match raw.resolve(&program()) {
            Err(e) => {
                prop_assert!(clash, "unexpected error: {e}");
                prop_assert_eq!(e.code(), ErrorCode::BadInput);
            }
            Ok(facts) => {
                let facts = facts.to_vec();
                prop_assert!(!clash);
                prop_assert_eq!(facts.len(), records.len());
                let max = records.iter().filter_map(|r| r.1).max().map(u64::from);
                let mut next = max.map_or(0, |m| m + 1);
                for (f, (_, idx)) in facts.iter().zip(&records) {
                    let got = f.provenance.edge_idx.expect("assigned");
                    match idx {
                        Some(i) => prop_assert_eq!(got, u64::from(*i)),
                        None => {
                            prop_assert_eq!(got, next);
                            next += 1;
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_misspelt_relation_in_a_rule_body_is_a_warning_with_a_suggestion() {
    let mut loader = Loader::new();
    loader.program_text("p.dl", "edge(1, 2).\npath(x, y) :- edg(x, y).\n");
    let loaded = loader.clone().load().expect("loads");
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    let w = &loaded.warnings[0];
    assert_eq!(w.code, ErrorCode::UndefinedRelation);
    assert!(w.is_warning());
    assert!(w.message.contains("`edg`"), "{w}");
    assert_eq!(w.help.as_deref(), Some("did you mean `edge`?"));
    let loc = w.location.as_ref().expect("located");
    assert_eq!((loc.line, loc.col), (2, 15));
    // --strict: the warning is an error.
    loader.strict(true);
    let err = loader.load().unwrap_err();
    assert_eq!(err.code(), ErrorCode::UndefinedRelation);
}

#[test]
fn a_large_bad_file_reports_a_capped_list_quickly() {
    // 100,000 records of the wrong type: the report is capped and costs little.
    let mut text = String::from("{\"edge\": [");
    for i in 0..100_000 {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!("[{i}, \"x{i}\"]"));
    }
    text.push_str("]}");
    let mut loader = Loader::new();
    loader.program_text("p.dl", ".decl edge(a: number, b: number)\n.output edge\n");
    loader.facts_json("big.json", &text).expect("reads");
    let started = std::time::Instant::now();
    let err = loader.load().unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(
        err.diagnostics.len(),
        prooflog::diag::Diagnostics::LIMIT + 1
    );
    assert!(
        err.diagnostics
            .last()
            .unwrap()
            .message
            .starts_with("99980 more"),
        "{}",
        err.diagnostics.last().unwrap().message
    );
}
