//! A fact base's input records, kept by columns, against the facts it was given.
//!
//! Every input record comes back exactly as given (values, confidence, provenance
//! with its edge index, document and span fields), in the order given, whether the
//! facts were given as values, typed by a load (`.facts` file, JSON fact document,
//! evidence JSONL), or added by an extension or an overlay; and a fact given more
//! than once cites the first of its most confident records.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;

use prooflog::Value;
use prooflog::eval::{EvalOptions, FactBase, SharedBase, evaluate};
use prooflog::ir::{Program, RelId};
use prooflog::store::{InputFact, InputFacts, Loader, Provenance, complete_inputs, number_inputs};

const PROGRAM: &str = "\
.decl r(n: number, s: symbol)
.decl f(x: float, u: unsigned)
.decl q(n: number, s: symbol)
q(n, s) :- r(n, s).
r(0, \"w\").
";

fn program() -> Arc<Program> {
    Arc::new(Program::from_source("p.dl", PROGRAM).unwrap())
}

fn options() -> EvalOptions {
    EvalOptions::default().with_provenance(true)
}

const SYMBOLS: [&str; 3] = ["a", "b", "ü x"];
const FLOATS: [f64; 4] = [0.5, -0.0, 1e300, 2.0];
const UNSIGNED: [u64; 3] = [0, 7, u64::MAX];
const CONFIDENCES: [f64; 3] = [0.5, 0.8, 1.0];

/// One generated fact: relation (0 `r`, 1 `f`, 2 `q`), two value choices, a
/// confidence, and a provenance choice (0 none given, 1 a table, 2 a document and
/// span).
type Gen = (u8, usize, usize, usize, u8);

fn fact((rel, a, b, c, p): Gen) -> InputFact {
    let args = match rel {
        1 => vec![
            Value::Float(FLOATS[a % FLOATS.len()]),
            Value::Unsigned(UNSIGNED[b % UNSIGNED.len()]),
        ],
        _ => vec![
            Value::Number(a as i64 % 3),
            Value::Symbol(SYMBOLS[b % SYMBOLS.len()].into()),
        ],
    };
    let mut provenance = Provenance {
        source: "hyperedge".into(),
        ..Provenance::default()
    };
    if p >= 1 {
        provenance.table = Some("SIGHTINGS".into());
        provenance.event_ts = Some(serde_json::json!(17));
    }
    if p == 2 {
        provenance
            .extra
            .insert("doc_id".into(), serde_json::json!("log-7"));
        provenance
            .extra
            .insert("span".into(), serde_json::json!([3, 9]));
    }
    InputFact {
        rel: RelId::from(rel),
        args,
        confidence: CONFIDENCES[c % CONFIDENCES.len()],
        provenance,
    }
}

fn facts() -> impl Strategy<Value = Vec<InputFact>> {
    prop::collection::vec((0u8..3, 0usize..4, 0usize..4, 0usize..3, 0u8..3), 0..24)
        .prop_map(|g| g.into_iter().map(fact).collect())
}

/// The record a fact base must cite for each fact given: the first of its most
/// confident records.
fn kept(records: &[InputFact]) -> BTreeMap<(RelId, Vec<Value>), &InputFact> {
    let mut kept: BTreeMap<(RelId, Vec<Value>), &InputFact> = BTreeMap::new();
    for r in records {
        let e = kept.entry((r.rel, r.args.clone())).or_insert(r);
        if r.confidence > e.confidence {
            *e = r;
        }
    }
    kept
}

/// The fact base's records are `records`, in order, and every fact cites its kept
/// record (and only input facts cite one).
/// Add `extra` to `shared` by an extension and by an overlay: each holds `records`
/// followed by `extra` as numbered (appended to `records`), and the overlay reports
/// those as its added evidence. The extension.
fn extend_and_overlay(
    shared: &SharedBase,
    extra: &[InputFact],
    records: &mut Vec<InputFact>,
) -> Result<FactBase, TestCaseError> {
    let mut added = extra.to_vec();
    number_inputs(shared.facts().program(), &mut added, shared).unwrap();
    records.extend(added.iter().cloned());
    let ext = shared.facts().extend(extra, &options()).unwrap();
    check(&ext, records)?;
    let overlay = shared.overlay(extra, &options()).unwrap();
    check(overlay.facts(), records)?;
    prop_assert_eq!(overlay.evidence_added().collect::<Vec<_>>(), added);
    Ok(ext)
}

fn check(fb: &FactBase, records: &[InputFact]) -> Result<(), TestCaseError> {
    let got: Vec<InputFact> = fb.input_records().collect();
    prop_assert_eq!(&got[..], records);
    prop_assert_eq!(fb.input_edge_idxs().count(), records.len());
    let kept = kept(records);
    for rel in 0..fb.program().relations().len() as RelId {
        for f in fb.facts(rel) {
            let want = kept.get(&(rel, fb.args(f))).copied();
            let got = fb.evidence(f);
            prop_assert_eq!(got.as_ref(), want);
            prop_assert_eq!(fb.edge_idx(f), want.and_then(|e| e.provenance.edge_idx));
        }
    }
    Ok(())
}

/// The facts as an evidence JSONL text.
fn jsonl(facts: &[InputFact]) -> String {
    let names = ["r", "f", "q"];
    facts
        .iter()
        .map(|f| {
            let mut line = serde_json::json!({
                "predicate": names[f.rel as usize],
                "args": f.args,
                "confidence": f.confidence,
            });
            if f.provenance.table.is_some() {
                let mut p = serde_json::json!({
                    "table": f.provenance.table,
                    "event_ts": f.provenance.event_ts,
                });
                for (k, v) in &f.provenance.extra {
                    p[k] = v.clone();
                }
                line["provenance"] = p;
            }
            format!("{line}\n")
        })
        .collect()
}

/// The facts as a JSON fact document: `{"r": [[…], …], …}`.
fn json_document(facts: &[InputFact]) -> String {
    let names = ["r", "f", "q"];
    let mut doc = serde_json::Map::new();
    for f in facts {
        doc.entry(names[f.rel as usize])
            .or_insert_with(|| serde_json::json!([]))
            .as_array_mut()
            .unwrap()
            .push(serde_json::to_value(&f.args).unwrap());
    }
    serde_json::Value::Object(doc).to_string()
}

/// Evaluate a load (its facts borrowed, and taken), and check its records against the
/// load's own facts and against the same facts given as values.
fn check_load(loader: Loader) -> Result<(), TestCaseError> {
    let loaded = loader.load().unwrap();
    let given = loaded.facts.to_vec();
    let fb = evaluate(Arc::clone(&loaded.program), &loaded.facts, &options()).unwrap();
    check(&fb, &given)?;
    let fb = evaluate(Arc::clone(&loaded.program), loaded.facts, &options()).unwrap();
    check(&fb, &given)?;
    let by_value = evaluate(Arc::clone(&loaded.program), &given, &options()).unwrap();
    check(&by_value, &given)
}

/// [`check_load`] on the facts written as evidence JSONL, then as a JSON fact
/// document.
fn check_jsonl_and_json(facts: &[InputFact]) -> Result<(), TestCaseError> {
    let mut loader = Loader::new();
    loader.program_text("p.dl", PROGRAM);
    loader.evidence_jsonl("e.jsonl", &jsonl(facts)).unwrap();
    check_load(loader)?;

    let mut loader = Loader::new();
    loader.program_text("p.dl", PROGRAM);
    loader
        .facts_json("facts.json", &json_document(facts))
        .unwrap();
    check_load(loader)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn records_given_as_values_come_back_as_given(facts in facts()) {
        let program = program();
        let numbered = complete_inputs(&program, &facts).unwrap();
        let fb = evaluate(Arc::clone(&program), &facts, &options()).unwrap();
        check(&fb, &numbered)?;
        // The same facts by columns, not numbered and without the program's fact.
        let columns = InputFacts::from_facts(&program, &facts).unwrap();
        let fb = evaluate(Arc::clone(&program), &columns, &options()).unwrap();
        check(&fb, &numbered)?;
        let fb = evaluate(Arc::clone(&program), columns, &options()).unwrap();
        check(&fb, &numbered)?;
        // Numbered and with the program's fact, taken as they are.
        let columns = InputFacts::from_facts(&program, &numbered).unwrap();
        let fb = evaluate(Arc::clone(&program), columns, &options()).unwrap();
        check(&fb, &numbered)?;
    }

    #[test]
    fn records_of_a_load_come_back_as_loaded(facts in facts()) {
        check_jsonl_and_json(&facts)?;

        // A `.facts` file of `r` (numbers and symbols), read from disk.
        let dir = std::env::temp_dir().join(format!("prooflog-evidence-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.facts");
        let text: String = facts
            .iter()
            .filter(|f| f.rel == 0)
            .map(|f| match &f.args[..] {
                [Value::Number(n), Value::Symbol(s)] => format!("{n}\t{s}\n"),
                other => unreachable!("r is (number, symbol): {other:?}"),
            })
            .collect();
        std::fs::write(&path, text).unwrap();
        let mut loader = Loader::new();
        loader.program_text("p.dl", PROGRAM);
        loader.facts(&path).unwrap();
        check_load(loader)?;
    }

    #[test]
    fn extensions_and_overlays_keep_the_base_records_and_add_theirs(
        base in facts(),
        extra in facts(),
    ) {
        let program = program();
        let shared =
            SharedBase::new(evaluate(Arc::clone(&program), &base, &options()).unwrap()).unwrap();
        let mut records = complete_inputs(&program, &base).unwrap();
        check(shared.facts(), &records)?;
        let ext = extend_and_overlay(&shared, &extra, &mut records)?;
        // Shared again (the extension's records folded into the base, or kept as its
        // own): the same records.
        let again = SharedBase::new(ext).unwrap();
        check(again.facts(), &records)?;
    }
}

#[test]
fn a_fact_given_twice_cites_its_more_confident_record() {
    let program = program();
    let mut low = fact((0, 1, 0, 0, 1));
    low.confidence = 0.5;
    let mut high = fact((0, 1, 0, 0, 2));
    high.confidence = 0.9;
    let mut tie = fact((0, 1, 0, 0, 0));
    tie.confidence = 0.9;
    let fb = evaluate(Arc::clone(&program), &vec![low, high, tie], &options()).unwrap();
    let f = fb
        .lookup(0, &[Value::Number(1), Value::Symbol("a".into())])
        .unwrap();
    let e = fb.evidence(f).unwrap();
    assert_eq!(e.confidence, 0.9);
    assert_eq!(
        e.provenance.edge_idx,
        Some(2),
        "after the program's r(0, \"w\")"
    );
    assert_eq!(e.provenance.extra["doc_id"], serde_json::json!("log-7"));
    assert_eq!(fb.input_records().count(), 4);
}

/// A long file of facts, most of them the next in a run (the same relation, file
/// provenance and confidence, distinct values), with now and then a duplicate, a
/// different confidence, a value that needs more than 32 bits, a provenance of its
/// own or a switch of relation: the shapes that keep or break a run of records.
fn runs() -> impl Strategy<Value = Vec<InputFact>> {
    proptest::collection::vec((0..40u8, 0..6usize), 1..400).prop_map(|steps| {
        steps
            .into_iter()
            .enumerate()
            .map(|(i, (kind, x))| {
                let mut f = fact((0, i, x, 2, 0));
                f.args[0] = Value::Number(i as i64);
                match kind {
                    0 => f.args[0] = Value::Number((i / 2) as i64),
                    1 => f.confidence = CONFIDENCES[x % 2],
                    2 => f.args[0] = Value::Number(i64::MAX - i as i64),
                    3 => f = fact((0, i, x, x, 2)),
                    4 => f = fact((1, i, x, x % 3, 0)),
                    _ => {}
                }
                f
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn records_kept_as_runs_come_back_as_loaded(facts in runs(), raise in 0..400usize) {
        check_jsonl_and_json(&facts)?;

        // A loaded fact given again, more confident, by an extension and an overlay:
        // its relation row's record changes after the rows loaded first.
        let program = program();
        let base = evaluate(Arc::clone(&program), &facts, &options()).unwrap();
        let shared = SharedBase::new(base).unwrap();
        let mut records = complete_inputs(&program, &facts).unwrap();
        let mut again = facts[raise % facts.len()].clone();
        again.confidence = 1.0;
        again.provenance.edge_idx = None;
        extend_and_overlay(&shared, &[again], &mut records)?;
    }
}
