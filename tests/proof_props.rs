//! Property tests: proofs of every fact of random stratified programs over random
//! inputs, evaluated by the real engine, are well-formed DAGs that agree with the fact
//! base.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use proptest::prelude::*;

use prooflog::FactBase;
use prooflog::eval::{EvalOptions, evaluate};
use prooflog::ir::Program;
use prooflog::proof::{Fact, ProofNode, ProofOptions, ProofTree, build_proof};
use prooflog::store::{InputFact, Provenance};
use prooflog::value::Value;

const EDB: [&str; 2] = ["e0", "e1"];
const IDB: [&str; 3] = ["d0", "d1", "d2"];
const CONFIDENCES: [f64; 4] = [1.0, 0.9, 0.75, 0.5];

/// One generated rule: a template and the relations it uses.
#[derive(Debug, Clone)]
struct GenRule {
    head: usize,
    template: u8,
    a: u8,
    b: u8,
    c: u8,
    conf: usize,
}

/// Relations a rule for `d<head>` may read positively: the inputs, lower derived
/// relations and its own (recursion).
fn positive(head: usize, pick: u8) -> String {
    let choices: Vec<&str> = EDB.iter().chain(IDB[..=head].iter()).copied().collect();
    choices[pick as usize % choices.len()].to_string()
}

/// Relations it may negate: inputs and strictly lower derived relations (stratified).
fn negative(head: usize, pick: u8) -> String {
    let choices: Vec<&str> = EDB.iter().chain(IDB[..head].iter()).copied().collect();
    choices[pick as usize % choices.len()].to_string()
}

fn program_text(rules: &[GenRule]) -> String {
    let mut s = String::new();
    for r in EDB.iter().chain(IDB.iter()) {
        s.push_str(&format!(".decl {r}(a: number, b: number)\n"));
    }
    // Every derived relation has at least one rule reading an input.
    for (k, d) in IDB.iter().enumerate() {
        s.push_str(&format!("{d}(x, y) :- {}(x, y).\n", EDB[k % 2]));
    }
    for r in rules {
        let head = IDB[r.head];
        let (a, b, c) = (
            positive(r.head, r.a),
            positive(r.head, r.b),
            negative(r.head, r.c),
        );
        s.push_str(&format!("@confidence({:?})\n", CONFIDENCES[r.conf]));
        let rule = match r.template % 4 {
            0 => format!("{head}(x, z) :- {a}(x, y), {b}(y, z)."),
            1 => format!("{head}(x, y) :- {a}(x, y), !{c}(y, x)."),
            2 => format!("{head}(y, x) :- {a}(x, y), x < y."),
            _ => format!("{head}(x, x) :- {a}(x, y), {b}(y, x), !{c}(x, x)."),
        };
        s.push_str(&rule);
        s.push('\n');
    }
    s
}

fn inputs(program: &Program, facts: &[GenFact]) -> Vec<InputFact> {
    facts
        .iter()
        .enumerate()
        .map(|(i, &(rel, x, y, conf))| InputFact {
            rel: program
                .relation_id(EDB[rel as usize % 2])
                .expect("input relation"),
            args: vec![
                Value::Number(i64::from(x % 5)),
                Value::Number(i64::from(y % 5)),
            ],
            confidence: [1.0, 0.8, 0.6][conf as usize % 3],
            provenance: Provenance {
                source: "hyperedge".into(),
                table: Some("GEN".into()),
                edge_idx: Some(i as u64),
                ..Provenance::default()
            },
        })
        .collect()
}

fn gen_rule() -> impl Strategy<Value = GenRule> {
    (
        0..IDB.len(),
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        0..4usize,
    )
        .prop_map(|(head, template, a, b, c, conf)| GenRule {
            head,
            template,
            a,
            b,
            c,
            conf,
        })
}

/// One input fact: relation pick, two values, confidence pick.
type GenFact = (u8, u8, u8, u8);

fn case() -> impl Strategy<Value = (Vec<GenRule>, Vec<GenFact>)> {
    (
        prop::collection::vec(gen_rule(), 0..6),
        prop::collection::vec(any::<(u8, u8, u8, u8)>(), 1..25),
    )
}

fn evaluated(rules: &[GenRule], facts: &[GenFact]) -> FactBase {
    let text = program_text(rules);
    let program = Program::from_source("generated.dl", &text)
        .unwrap_or_else(|e| panic!("generated program rejected: {e}\n{text}"));
    let inputs = inputs(&program, facts);
    let options = EvalOptions::default();
    evaluate(Arc::new(program), &inputs, &options).expect("generated program evaluates")
}

/// Every property a proof of a fact of `fb` must have.
fn check(fb: &FactBase, tree: &ProofTree) -> Result<(), TestCaseError> {
    let program = fb.program();
    prop_assert!(tree.is_proved());
    prop_assert_eq!(Some(tree.nodes[0].id()), tree.goal.root.as_deref());
    let by_id: HashMap<&str, &ProofNode> = tree.nodes.iter().map(|n| (n.id(), n)).collect();
    prop_assert_eq!(by_id.len(), tree.nodes.len(), "ids unique");
    let (mut steps, mut leaves, mut absences) = (0, 0, 0);
    let mut tags = BTreeSet::new();
    let mut rules_seen: Vec<String> = Vec::new();
    for node in &tree.nodes {
        let rel = fb.relation_id(node.predicate()).expect("relation");
        let fact = fb.lookup(rel, node.args());
        match node {
            ProofNode::Conclusion(c) => {
                steps += 1;
                prop_assert_eq!(&c.id, &format!("S{steps}"), "first-visit numbering");
                prop_assert_eq!(&c.step_tag, &format!("STEP-{steps}"));
                let fact = fact.expect("conclusion is a fact");
                let d = fb.derivation(fact).expect("conclusion has a derivation");
                prop_assert_eq!(&c.rule_tag, &format!("RULE-{}", d.rule));
                prop_assert_eq!(&c.rule, &program.rules()[d.rule as usize].name);
                prop_assert_eq!(c.confidence, fb.confidence(fact));
                let min = c
                    .premises
                    .iter()
                    .filter_map(|p| by_id[p.as_str()].confidence())
                    .fold(1.0f64, f64::min);
                let expected = program.rules()[d.rule as usize].confidence * min;
                prop_assert!(
                    (c.confidence - expected).abs() < 1e-9,
                    "{}: {} vs {}",
                    c.fact,
                    c.confidence,
                    expected
                );
                tags.insert(c.step_tag.clone());
                tags.insert(c.rule_tag.clone());
                if !rules_seen.contains(&c.rule_tag) {
                    rules_seen.push(c.rule_tag.clone());
                }
            }
            ProofNode::Evidence(e) => {
                leaves += 1;
                prop_assert_eq!(&e.id, &format!("L{leaves}"));
                let fact = fact.expect("leaf is a fact");
                let input = fb.evidence(fact).expect("every leaf is an input fact");
                prop_assert!(
                    fb.derivation(fact).is_none(),
                    "leaf's best record is evidence"
                );
                prop_assert_eq!(input.provenance.edge_idx, Some(e.provenance.edge_idx));
                prop_assert_eq!(&e.hedge_tag, &format!("HEDGE-{}", e.provenance.edge_idx));
                prop_assert!(e.provenance.verified);
                tags.insert(e.hedge_tag.clone());
            }
            ProofNode::Absence(a) => {
                absences += 1;
                prop_assert_eq!(&a.id, &format!("A{absences}"));
                prop_assert!(fact.is_none(), "absent fact {} is absent", a.fact);
            }
            other => prop_assert!(false, "a node kind this test does not know: {other:?}"),
        }
    }
    prop_assert_eq!(&tags, &tree.evidence_tags());
    prop_assert_eq!(&rules_seen, &tree.rules_fired);
    // Acyclic, and `depth` is the longest chain of rule applications.
    let mut depth: HashMap<&str, u32> = HashMap::new();
    let mut indegree: HashMap<&str, usize> = by_id.keys().map(|k| (*k, 0)).collect();
    for e in &tree.edges {
        prop_assert!(by_id.contains_key(e.from.as_str()) && by_id.contains_key(e.to.as_str()));
        prop_assert_eq!(e.role, prooflog::proof::EdgeRole::Premise);
        *indegree.entry(e.to.as_str()).or_default() += 1;
    }
    prop_assert_eq!(indegree[tree.nodes[0].id()], 0);
    let mut order = Vec::new();
    let mut ready = vec![tree.nodes[0].id()];
    while let Some(id) = ready.pop() {
        order.push(id);
        for p in by_id[id].premises() {
            let d = indegree.get_mut(p.as_str()).expect("premise node");
            *d -= 1;
            if *d == 0 {
                ready.push(p.as_str());
            }
        }
    }
    prop_assert_eq!(order.len(), tree.nodes.len(), "acyclic and connected");
    for id in order.iter().rev() {
        let node = by_id[id];
        let d = match node {
            ProofNode::Conclusion(c) => {
                1 + c
                    .premises
                    .iter()
                    .map(|p| depth[p.as_str()])
                    .max()
                    .unwrap_or(0)
            }
            _ => 0,
        };
        depth.insert(id, d);
    }
    prop_assert_eq!(depth[tree.nodes[0].id()], tree.depth);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_fact_has_a_well_formed_proof((rules, facts) in case()) {
        let fb = evaluated(&rules, &facts);
        let options = ProofOptions::new("p");
        let mut proved = HashSet::new();
        for rel in 0..fb.program().relations().len() as u32 {
            for fact in fb.facts(rel) {
                let goal = Fact::new(fb.program().relation(rel).name.clone(), fb.args(fact));
                let tree = build_proof(&goal, &fb, &options).expect("proof builds");
                check(&fb, &tree)?;
                let again = build_proof(&goal, &fb, &options).expect("proof builds");
                prop_assert_eq!(tree.to_json_pretty(), again.to_json_pretty());
                proved.insert(goal);
            }
        }
        prop_assert!(!proved.is_empty());
    }
}

/// The generator is not vacuous: over a fixed sample of cases, proofs include
/// negated premises, shared sub-proofs and chains of several rule applications.
#[test]
fn generator_reaches_absences_sharing_and_depth() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRng, TestRunner};

    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(Default::default()),
    );
    let (mut absences, mut shared, mut deep) = (0, 0, 0);
    for _ in 0..200 {
        let (rules, facts) = case().new_tree(&mut runner).expect("case").current();
        let fb = evaluated(&rules, &facts);
        for rel in 0..fb.program().relations().len() as u32 {
            for fact in fb.facts(rel) {
                let goal = Fact::new(fb.program().relation(rel).name.clone(), fb.args(fact));
                let tree = build_proof(&goal, &fb, &ProofOptions::new("p")).expect("proof");
                absences += tree
                    .nodes
                    .iter()
                    .filter(|n| matches!(n, ProofNode::Absence(_)))
                    .count();
                let targets: HashSet<&str> = tree.edges.iter().map(|e| e.to.as_str()).collect();
                shared += usize::from(targets.len() < tree.edges.len());
                deep += usize::from(tree.depth >= 3);
            }
        }
    }
    assert!(
        absences > 0 && shared > 0 && deep > 0,
        "{absences} {shared} {deep}"
    );
}
