//! Per-request overlays against full re-evaluation.
//!
//! An overlay on a shared base must hold exactly the facts and confidences that
//! evaluating the program over the base's inputs and the request's evidence together
//! gives (checked on random stratified programs with negation, aggregates and
//! arithmetic, and against the naive reference), leave the base untouched, keep every
//! base tag, record valid derivations that proofs can walk, and serve many threads at
//! once.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;

use prooflog::eval::{EvalOptions, FactBase, SharedBase};
use prooflog::ir::Program;
use prooflog::proof::{Fact, ProofOptions, ProofSource, build_proof};
use prooflog::store::{InputFact, Provenance};
use prooflog::{FactId, Value};

use support::random::{GenCase, case};

const TOLERANCE: f64 = 1e-9;

fn prov() -> EvalOptions {
    EvalOptions::default().with_provenance(true)
}

/// Every fact of every relation with its confidence's bits, by relation name.
type Exact = BTreeMap<String, BTreeMap<Vec<Value>, u64>>;

fn exact(fb: &FactBase) -> Exact {
    let program = fb.program();
    (0..program.relations().len() as u32)
        .map(|rel| {
            let rows = fb
                .facts(rel)
                .map(|f| (fb.args(f), fb.confidence(f).to_bits()))
                .collect();
            (program.relation(rel).name.clone(), rows)
        })
        .collect()
}

/// Every input fact's tag, by fact.
fn tags(fb: &FactBase) -> BTreeMap<(u32, Vec<Value>), Option<u64>> {
    let program = fb.program();
    let mut out = BTreeMap::new();
    for rel in 0..program.relations().len() as u32 {
        for f in fb.facts(rel) {
            if let Some(e) = fb.evidence(f) {
                out.insert((rel, fb.args(f)), e.provenance.edge_idx);
            }
        }
    }
    out
}

/// A recorded derivation is usable: its premises exist, its confidence is the rule's
/// times the weakest premise's, its negated premises are absent, and a proof of the
/// fact can be walked down to evidence.
fn check_derivations<S: ProofSource>(fb: &FactBase, source: &S) -> Result<(), String> {
    let program = fb.program();
    for rel in 0..program.relations().len() as u32 {
        for fact in fb.facts(rel) {
            let conf = fb.confidence(fact);
            match fb.derivation(fact) {
                None => {
                    let e = fb.evidence(fact).ok_or_else(|| {
                        format!("{}: no derivation, no evidence", fb.fact_text(fact))
                    })?;
                    if e.confidence != conf {
                        return Err(format!("{}: input confidence differs", fb.fact_text(fact)));
                    }
                    if e.provenance.edge_idx.is_none() {
                        return Err(format!("{}: evidence without a tag", fb.fact_text(fact)));
                    }
                }
                Some(d) => {
                    let rule = program.rule(d.rule);
                    let mut min = 1.0f64;
                    for p in &d.premises {
                        if p.row as usize >= fb.len(p.rel) {
                            return Err(format!("{}: premise {p:?} missing", fb.fact_text(fact)));
                        }
                        min = min.min(fb.confidence(*p));
                    }
                    let expected = rule.confidence * min;
                    if (expected - conf).abs() > TOLERANCE {
                        return Err(format!(
                            "{}: confidence {conf}, derivation gives {expected}",
                            fb.fact_text(fact)
                        ));
                    }
                    for (r, args) in &d.absent {
                        if fb.lookup(*r, args).is_some() {
                            return Err(format!("{}: negated premise present", fb.fact_text(fact)));
                        }
                    }
                }
            }
            let goal = Fact::new(program.relation(rel).name.clone(), fb.args(fact));
            let tree = build_proof(&goal, source, &ProofOptions::default())
                .map_err(|e| format!("{}: {e}", fb.fact_text(fact)))?;
            if !tree.is_proved() || tree.confidence != conf {
                return Err(format!("{}: proof disagrees", fb.fact_text(fact)));
            }
        }
    }
    Ok(())
}

fn prepare(case: &GenCase) -> (Arc<Program>, Vec<InputFact>) {
    let program = support::compile_case(case);
    let inputs = support::case_inputs(&program, case);
    (program, inputs)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Base (the first inputs) + overlay (the rest) = evaluating everything: the same
    /// facts with bit-identical confidences, the reference's facts, valid
    /// derivations; the base unchanged; every base tag kept.
    #[test]
    fn overlay_equals_full_reevaluation(case in case(), split in 0usize..=100) {
        let (program, inputs) = prepare(&case);
        let k = split * inputs.len() / 100;
        let base = SharedBase::evaluate(program.clone(), &inputs[..k], &prov()).unwrap();
        let before = exact(base.facts());
        let base_tags = tags(base.facts());
        let overlay = match base.overlay(&inputs[k..], &prov()) {
            Ok(o) => o,
            Err(e) => panic!("overlay failed: {e}\n{}", case.describe()),
        };
        let whole = support::run(&program, &inputs, true);
        prop_assert_eq!(exact(overlay.facts()), exact(&whole), "\n{}", case.describe());
        let reference = support::naive::evaluate(&program, &inputs);
        if let Err(diff) = support::diff_relations(
            &support::engine_relations(overlay.facts()),
            &reference,
            TOLERANCE,
        ) {
            prop_assert!(false, "{diff}\n{}", case.describe());
        }
        prop_assert_eq!(exact(base.facts()), before, "the base changed");
        // Every base record keeps its tag; a base fact cites another record only when
        // the request gave a more confident one than the base's.
        let records: Vec<InputFact> = base.facts().input_records().collect();
        let overlay_records: Vec<InputFact> = overlay.input_records().collect();
        prop_assert_eq!(&overlay_records[..records.len()], &records[..]);
        let after = tags(overlay.facts());
        for (fact, tag) in &base_tags {
            let now = after.get(fact).copied().flatten();
            if now != *tag {
                let f = overlay.lookup(fact.0, &fact.1).unwrap();
                let record = overlay.evidence(f).unwrap();
                prop_assert!(overlay.evidence_added().any(|e| e == record));
                let before = base.facts().lookup(fact.0, &fact.1).unwrap();
                let old = base.facts().evidence(before).unwrap();
                prop_assert!(record.confidence > old.confidence);
            }
        }
        if let Err(e) = check_derivations(overlay.facts(), &overlay) {
            prop_assert!(false, "{e}\n{}", case.describe());
        }
    }

    /// Evidence that raises the confidence of facts the base already has, split in
    /// two requests on the same base: each equals its own full re-evaluation.
    #[test]
    fn stronger_evidence_matches_reevaluation(case in case()) {
        let (program, inputs) = prepare(&case);
        let weak: Vec<InputFact> = inputs
            .iter()
            .map(|f| InputFact { confidence: f.confidence * 0.5, ..f.clone() })
            .collect();
        let base = SharedBase::evaluate(program.clone(), &weak, &prov()).unwrap();
        let half = inputs.len() / 2;
        for request in [&inputs[..half], &inputs[half..]] {
            // Fresh tags: the request's facts are new records of known facts.
            let request: Vec<InputFact> = request
                .iter()
                .map(|f| InputFact {
                    provenance: Provenance { edge_idx: None, ..f.provenance.clone() },
                    ..f.clone()
                })
                .collect();
            let overlay = base.overlay(&request, &prov()).unwrap();
            let all: Vec<InputFact> = weak.iter().chain(&request).cloned().collect();
            let whole = support::run(&program, &all, true);
            prop_assert_eq!(exact(overlay.facts()), exact(&whole), "\n{}", case.describe());
            if let Err(e) = check_derivations(overlay.facts(), &overlay) {
                prop_assert!(false, "{e}\n{}", case.describe());
            }
        }
    }
}

const PACK: &str = r#"
.decl edge(a: number, b: number)
.decl node(a: number)
.decl path(a: number, b: number)
.decl unreached(a: number, b: number)
.decl outdeg(a: number, n: number)
.decl label(a: number, l: symbol)
.decl named_path(l: symbol, m: symbol)
node(x) :- edge(x, _).
node(y) :- edge(_, y).
@confidence(0.9)
path(x, y) :- edge(x, y).
@confidence(0.9)
path(x, z) :- path(x, y), edge(y, z).
unreached(x, y) :- node(x), node(y), !path(x, y).
outdeg(x, n) :- node(x), n = count : { edge(x, _) }.
named_path(l, m) :- path(x, y), label(x, l), label(y, m).
label(1, "one").
"#;

fn edge(a: i64, b: i64, confidence: f64, idx: Option<u64>) -> InputFact {
    InputFact {
        rel: 0,
        args: vec![Value::Number(a), Value::Number(b)],
        confidence,
        provenance: Provenance {
            source: "hyperedge".into(),
            table: Some("EDGES".into()),
            edge_idx: idx,
            ..Provenance::default()
        },
    }
}

fn label(program: &Program, a: i64, l: &str) -> InputFact {
    InputFact {
        rel: program.relation_id("label").unwrap(),
        args: vec![Value::Number(a), Value::Symbol(l.into())],
        confidence: 1.0,
        provenance: Provenance::default(),
    }
}

fn shared() -> (Arc<Program>, SharedBase) {
    let program = Arc::new(Program::from_source("pack.dl", PACK).unwrap());
    let base = vec![edge(1, 2, 0.5, Some(10)), edge(2, 3, 1.0, Some(11))];
    let shared = SharedBase::evaluate(program.clone(), &base, &prov()).unwrap();
    (program, shared)
}

fn fact(fb: &FactBase, rel: &str, args: &[i64]) -> Option<FactId> {
    let args: Vec<Value> = args.iter().map(|&a| Value::Number(a)).collect();
    fb.lookup(fb.relation_id(rel)?, &args)
}

#[test]
fn an_overlay_withdraws_negated_facts_and_recounts_aggregates() {
    let (_, base) = shared();
    assert!(fact(base.facts(), "unreached", &[3, 1]).is_some());
    let overlay = base
        .overlay(&[edge(3, 1, 1.0, None), edge(1, 4, 1.0, None)], &prov())
        .unwrap();
    assert!(fact(&overlay, "unreached", &[3, 1]).is_none());
    assert!(
        fact(base.facts(), "unreached", &[3, 1]).is_some(),
        "base untouched"
    );
    let outdeg = overlay.relation_id("outdeg").unwrap();
    let rows = overlay.rows(outdeg);
    assert!(
        rows.contains(&vec![Value::Number(1), Value::Number(2)]),
        "{rows:?}"
    );
    assert!(overlay.stats().recomputed_strata >= 1);
    // The program's fact and the base's evidence keep their tags; the request's
    // evidence is numbered after the base's largest index.
    let e = |fb: &FactBase, a, b| {
        let f = fact(fb, "edge", &[a, b]).unwrap();
        fb.evidence(f).unwrap().provenance.edge_idx
    };
    assert_eq!(e(&overlay, 1, 2), Some(10));
    // label(1, "one"), written in the program, is HEDGE-12.
    assert_eq!(e(&overlay, 3, 1), Some(13));
    assert_eq!(e(&overlay, 1, 4), Some(14));
    let added: Vec<_> = overlay
        .evidence_added()
        .map(|f| f.provenance.edge_idx)
        .collect();
    assert_eq!(added, [Some(13), Some(14)]);
}

#[test]
fn an_overlay_raises_base_confidences_without_touching_the_base() {
    let (_, base) = shared();
    let p13 = fact(base.facts(), "path", &[1, 3]).unwrap();
    assert!((base.facts().confidence(p13) - 0.9 * 0.45).abs() < 1e-12);
    let overlay = base.overlay(&[edge(1, 2, 1.0, None)], &prov()).unwrap();
    let o13 = fact(&overlay, "path", &[1, 3]).unwrap();
    assert!((overlay.confidence(o13) - 0.81).abs() < 1e-12);
    assert!((base.facts().confidence(p13) - 0.9 * 0.45).abs() < 1e-12);
    assert!(overlay.stats().improved_base_facts >= 2);
    // The stronger record wins: the fact now cites the request's evidence.
    let e12 = fact(&overlay, "edge", &[1, 2]).unwrap();
    assert_eq!(overlay.evidence(e12).unwrap().provenance.edge_idx, Some(13));
    let tree = build_proof(
        &Fact::new("path", vec![Value::Number(1), Value::Number(3)]),
        &overlay,
        &ProofOptions::default(),
    )
    .unwrap();
    assert!(
        tree.evidence_tags().contains("HEDGE-13"),
        "{:?}",
        tree.evidence_tags()
    );
    assert!(tree.evidence_tags().contains("HEDGE-11"));
}

#[test]
fn request_symbols_and_edge_indexes_stay_in_the_request() {
    let (program, base) = shared();
    let overlay = base
        .overlay(
            &[label(&program, 2, "two"), label(&program, 3, "three")],
            &prov(),
        )
        .unwrap();
    let named = overlay.relation_id("named_path").unwrap();
    let sym = |s: &str| Value::Symbol(s.into());
    assert_eq!(
        overlay.rows(named),
        vec![
            vec![sym("one"), sym("three")],
            vec![sym("one"), sym("two")],
            vec![sym("two"), sym("three")]
        ]
    );
    assert!(base.facts().rows(named).is_empty());
    assert!(
        base.facts()
            .lookup(named, &[sym("one"), sym("two")])
            .is_none()
    );
    // An explicit unused index is kept; one the base owns for another fact is an
    // error; the base's own fact under its own index is not.
    let kept = base
        .overlay(&[edge(5, 6, 1.0, Some(500))], &prov())
        .unwrap();
    let e = fact(&kept, "edge", &[5, 6]).unwrap();
    assert_eq!(kept.evidence(e).unwrap().provenance.edge_idx, Some(500));
    let clash = base.overlay(&[edge(5, 6, 1.0, Some(10))], &prov());
    let err = clash.err().expect("a clash").to_string();
    assert!(
        err.contains("edge_idx 10 is already used by edge(1, 2)"),
        "{err}"
    );
    base.overlay(&[edge(1, 2, 0.7, Some(10))], &prov()).unwrap();
}

#[test]
fn many_threads_share_one_base() {
    let (program, base) = shared();
    let base = Arc::new(base);
    let requests: Vec<Vec<InputFact>> = (0..8)
        .map(|t| {
            (0..20)
                .map(|i| edge(100 + t, 200 + i, 0.5 + 0.05 * (i % 10) as f64, None))
                .chain([edge(3, 100 + t, 1.0, None)])
                .collect()
        })
        .collect();
    let expected: Vec<Exact> = requests
        .iter()
        .map(|r| {
            let mut all = vec![edge(1, 2, 0.5, Some(10)), edge(2, 3, 1.0, Some(11))];
            all.extend(r.iter().cloned());
            exact(&support::run(&program, &all, true))
        })
        .collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = requests
            .iter()
            .zip(&expected)
            .map(|(r, want)| {
                let base = Arc::clone(&base);
                s.spawn(move || {
                    for _ in 0..5 {
                        let overlay = base.overlay(r, &prov()).unwrap();
                        assert_eq!(&exact(overlay.facts()), want);
                        check_derivations(overlay.facts(), &overlay).unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
}

#[test]
fn extend_numbers_new_evidence_after_its_base() {
    let program = Arc::new(Program::from_source("pack.dl", PACK).unwrap());
    let fb = prooflog::eval::evaluate(program, &[edge(1, 2, 1.0, Some(40))], &prov()).unwrap();
    // The program's own fact was numbered too (after 40), once.
    let l1 = fb
        .lookup(
            fb.relation_id("label").unwrap(),
            &[Value::Number(1), Value::Symbol("one".into())],
        )
        .unwrap();
    assert_eq!(fb.evidence(l1).unwrap().provenance.edge_idx, Some(41));
    assert_eq!(fb.input_records().count(), 2);
    let ext = fb.extend(&[edge(2, 3, 1.0, None)], &prov()).unwrap();
    let e23 = fact(&ext, "edge", &[2, 3]).unwrap();
    assert_eq!(ext.evidence(e23).unwrap().provenance.edge_idx, Some(42));
    assert!(fb.extend(&[edge(2, 3, 1.0, Some(41))], &prov()).is_err());
}

#[test]
fn a_program_proves_from_its_own_facts() {
    let program = Arc::new(
        Program::from_source("p.dl", "edge(1, 2).\nedge(2, 3).\npath(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n")
            .unwrap(),
    );
    let fb = prooflog::eval::evaluate(program, &[], &prov()).unwrap();
    let tree = build_proof(
        &Fact::new("path", vec![Value::Number(1), Value::Number(3)]),
        &fb,
        &ProofOptions::default(),
    )
    .unwrap();
    assert!(tree.is_proved());
    assert!(tree.evidence_tags().contains("HEDGE-0"));
    assert!(tree.evidence_tags().contains("HEDGE-1"));
    assert_eq!(
        fb.input_records().count(),
        2,
        "each program fact is input once"
    );
}

const GUARDED: &str = r#"
.decl sighting(d: number, z: number)
.decl cleared(d: number)
.decl intrusion(d: number, z: number)
.decl alert(z: number)
intrusion(d, z) :- sighting(d, z), !cleared(d).
alert(z) :- intrusion(_, z).
"#;

fn num_fact(program: &Program, rel: &str, args: &[i64], confidence: f64) -> InputFact {
    InputFact {
        rel: program.relation_id(rel).unwrap(),
        args: args.iter().map(|&a| Value::Number(a)).collect(),
        confidence,
        provenance: Provenance::default(),
    }
}

#[test]
fn a_negated_fact_that_blocks_nothing_recomputes_nothing() {
    let program = Arc::new(Program::from_source("guarded.dl", GUARDED).unwrap());
    let f = |rel: &str, args: &[i64]| num_fact(&program, rel, args, 1.0);
    let base_inputs = vec![f("sighting", &[1, 10]), f("sighting", &[2, 20])];
    let base = SharedBase::evaluate(program.clone(), &base_inputs, &prov()).unwrap();
    for (request, recomputes) in [
        // Drone 3 was never sighted: clearing it blocks no derivation.
        (vec![f("cleared", &[3]), f("sighting", &[4, 40])], false),
        // Drone 1 was: its intrusion and the alert must go.
        (vec![f("cleared", &[1])], true),
    ] {
        let overlay = base.overlay(&request, &prov()).unwrap();
        assert_eq!(
            overlay.stats().recomputed_strata > 0,
            recomputes,
            "{request:?}"
        );
        let all: Vec<InputFact> = base_inputs.iter().chain(&request).cloned().collect();
        assert_eq!(
            exact(overlay.facts()),
            exact(&support::run(&program, &all, true))
        );
    }
}

#[test]
fn a_derived_fact_keeps_its_best_input_record() {
    // r0(2) is derived (confidence 1) and also given as evidence; when new evidence
    // blocks the derivation, the best evidence record is what remains.
    let program = Arc::new(
        Program::from_source(
            "r.dl",
            ".decl e0(a: number, b: number)\n.decl r0(a: number)\nr0(x) :- e0(0, x), !e0(x, x).\n",
        )
        .unwrap(),
    );
    let base_inputs = vec![
        num_fact(&program, "e0", &[0, 2], 1.0),
        num_fact(&program, "r0", &[2], 0.264),
    ];
    let base = SharedBase::evaluate(program.clone(), &base_inputs, &prov()).unwrap();
    let request = vec![
        num_fact(&program, "r0", &[2], 0.509),
        num_fact(&program, "e0", &[2, 2], 1.0),
    ];
    let overlay = base.overlay(&request, &prov()).unwrap();
    let r = fact(&overlay, "r0", &[2]).unwrap();
    assert_eq!(overlay.confidence(r), 0.509);
    let all: Vec<InputFact> = base_inputs.iter().chain(&request).cloned().collect();
    assert_eq!(
        exact(overlay.facts()),
        exact(&support::run(&program, &all, true))
    );
    let extended = base.facts().extend(&request, &prov()).unwrap();
    assert_eq!(exact(&extended), exact(overlay.facts()));
}

/// A base extended by new evidence and prepared again (what a service does when base
/// evidence arrives) shares the extension's records and symbols with its overlays: a
/// request's overlay adds only the request's own evidence.
#[test]
fn an_extended_base_shares_its_new_records_with_overlays() -> prooflog::Result<()> {
    let program = Arc::new(Program::from_source(
        "p.dl",
        ".decl e(x: symbol, y: symbol)\n.decl p(x: symbol, y: symbol)\np(x, y) :- e(x, y).\np(x, z) :- p(x, y), e(y, z).\n",
    )?);
    let edge = |a: &str, b: &str| InputFact {
        rel: program.relation_id("e").unwrap_or(0),
        args: vec![Value::Symbol(a.into()), Value::Symbol(b.into())],
        confidence: 1.0,
        provenance: Provenance {
            source: "hyperedge".into(),
            ..Provenance::default()
        },
    };
    let base = prooflog::evaluate(Arc::clone(&program), &[edge("a", "b")], &prov())?;
    let base = SharedBase::new(base)?;
    let extended = base
        .facts()
        .extend(&[edge("b", "c"), edge("c", "d")], &prov())?;
    let extended = SharedBase::new(extended)?;
    let overlay = extended.overlay(&[edge("d", "e")], &prov())?;
    assert_eq!(overlay.evidence_added().len(), 1);
    let p = program.relation_id("p").unwrap_or(0);
    let sym = |s: &str| Value::Symbol(s.into());
    assert!(overlay.lookup(p, &[sym("a"), sym("e")]).is_some());
    assert!(extended.facts().lookup(p, &[sym("a"), sym("d")]).is_some());
    assert!(extended.facts().lookup(p, &[sym("a"), sym("e")]).is_none());
    Ok(())
}
