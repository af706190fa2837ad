//! Property tests of the evaluator against the naive reference evaluator, and of the
//! provenance it records, on random stratified programs and inputs.

mod support;

use std::sync::Arc;

use prooflog::Value;
use prooflog::eval::{Derivation, FactBase, FactId};
use prooflog::ir::{Expr, Literal, Program, Rule, Term};
use prooflog::store::InputFact;
use proptest::prelude::*;

use support::naive::{compare, eval_expr};
use support::random::{GenCase, case};

const TOLERANCE: f64 = 1e-9;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        ..ProptestConfig::default()
    }
}

fn prepare(case: &GenCase) -> (Arc<Program>, Vec<InputFact>) {
    let program = support::compile_case(case);
    let inputs = support::case_inputs(&program, case);
    (program, inputs)
}

proptest! {
    #![proptest_config(config())]

    /// The semi-naive engine computes exactly the reference's facts and confidences,
    /// with provenance on and off.
    #[test]
    fn engine_matches_naive_reference(case in case()) {
        let (program, inputs) = prepare(&case);
        let expected = support::naive::evaluate(&program, &inputs);
        for provenance in [false, true] {
            let fb = support::run(&program, &inputs, provenance);
            let actual = support::engine_relations(&fb);
            if let Err(diff) = support::diff_relations(&actual, &expected, TOLERANCE) {
                prop_assert!(false, "provenance={provenance}: {diff}\n{}", case.describe());
            }
        }
    }

    /// Every recorded derivation replays: its rule concludes the fact, its premises
    /// exist and give the fact's confidence, its height is one more than theirs, and
    /// facts without one are inputs with their input confidence.
    #[test]
    fn provenance_is_consistent(case in case()) {
        let (program, inputs) = prepare(&case);
        let fb = support::run(&program, &inputs, true);
        prop_assert!(fb.provenance_enabled());
        for rel in 0..program.relations().len() as u32 {
            for fact in fb.facts(rel) {
                if let Err(e) = check_fact(&fb, &inputs, fact) {
                    prop_assert!(false, "{}: {e}\n{}", fb.fact_text(fact), case.describe());
                }
            }
        }
    }

    /// Turning provenance off changes no fact and no confidence, bit for bit.
    #[test]
    fn provenance_does_not_change_results(case in case()) {
        let (program, inputs) = prepare(&case);
        let on = support::engine_relations(&support::run(&program, &inputs, true));
        let off = support::engine_relations(&support::run(&program, &inputs, false));
        prop_assert_eq!(on, off, "{}", case.describe());
    }

    /// Two runs give identical fact bases: rows in the same order, the same
    /// confidences and the same derivations.
    #[test]
    fn evaluation_is_deterministic(case in case()) {
        let (program, inputs) = prepare(&case);
        let a = support::run(&program, &inputs, true);
        let b = support::run(&program, &inputs, true);
        for rel in 0..program.relations().len() as u32 {
            let sa = snapshot(&a, rel);
            let sb = snapshot(&b, rel);
            prop_assert_eq!(sa, sb, "{}", case.describe());
        }
    }

    /// The recorded derivation is the preferred one: among the derivations of highest
    /// confidence, the one of least height, then of lowest rule index (an input record
    /// that reaches the confidence wins with height 0).
    #[test]
    fn recorded_derivation_is_the_preferred_one(case in case()) {
        let (program, inputs) = prepare(&case);
        let expected = support::naive::evaluate(&program, &inputs);
        let preferred = support::naive::preferred_derivations(&program, &inputs, &expected);
        let fb = support::run(&program, &inputs, true);
        for rel in 0..program.relations().len() as u32 {
            for fact in fb.facts(rel) {
                let key = (rel, fb.args(fact));
                let recorded = fb.derivation(fact).map_or((0, None), |d| (d.height, Some(d.rule)));
                let want = preferred.get(&key).copied();
                prop_assert_eq!(
                    Some(recorded),
                    want,
                    "{}: recorded (height, rule) vs preferred\n{}",
                    fb.fact_text(fact),
                    case.describe()
                );
            }
        }
    }

    /// Extending a fact base with the rest of the inputs records the same preferred
    /// derivations as evaluating them all at once.
    #[test]
    fn extension_records_the_preferred_derivation(case in case(), split in 0usize..=100) {
        let (program, inputs) = prepare(&case);
        let expected = support::naive::evaluate(&program, &inputs);
        let preferred = support::naive::preferred_derivations(&program, &inputs, &expected);
        let k = split * inputs.len() / 100;
        let base = support::run(&program, &inputs[..k], true);
        let options = prooflog::eval::EvalOptions::default();
        let fb = match base.extend(&inputs[k..], &options) {
            Ok(fb) => fb,
            Err(e) => panic!("extension failed: {e}"),
        };
        for rel in 0..program.relations().len() as u32 {
            for fact in fb.facts(rel) {
                let key = (rel, fb.args(fact));
                let recorded = fb.derivation(fact).map_or((0, None), |d| (d.height, Some(d.rule)));
                prop_assert_eq!(
                    Some(recorded),
                    preferred.get(&key).copied(),
                    "{}: recorded (height, rule) after extending {} inputs by {}\n{}",
                    fb.fact_text(fact),
                    k,
                    inputs.len() - k,
                    case.describe()
                );
            }
        }
    }

    /// The order input facts are given in does not change the result.
    #[test]
    fn input_order_does_not_matter(case in case()) {
        let (program, mut inputs) = prepare(&case);
        let forward = support::engine_relations(&support::run(&program, &inputs, false));
        inputs.reverse();
        let backward = support::engine_relations(&support::run(&program, &inputs, false));
        if let Err(diff) = support::diff_relations(&backward, &forward, TOLERANCE) {
            prop_assert!(false, "{diff}\n{}", case.describe());
        }
    }
}

/// A variable repeated inside one atom takes one value: `r(x) :- e(x, x)` holds for
/// `e(2, 2)` and not for `e(1, 0)`.
#[test]
fn repeated_variable_in_one_atom_must_agree() {
    let program = Arc::new(
        support::compile("t.dl", ".decl e(a: number, b: number)\nr(x) :- e(x, x).\n")
            .expect("valid program"),
    );
    let facts = vec![fact("e", &[1, 0], 1.0), fact("e", &[2, 2], 1.0)];
    let inputs = support::gen_inputs(&program, &facts, 0);
    let expected = support::naive::evaluate(&program, &inputs);
    assert_eq!(expected["r"].len(), 1, "reference: only r(2)");
    for provenance in [false, true] {
        let fb = support::run(&program, &inputs, provenance);
        let actual = support::engine_relations(&fb);
        if let Err(diff) = support::diff_relations(&actual, &expected, TOLERANCE) {
            panic!("provenance={provenance}: {diff}");
        }
    }
}

/// When a premise's confidence improves through a taller derivation, the facts built
/// on it keep consistent heights even if their own confidence does not change.
///
/// `path(1, 2)` is first derived from the weak edge (height 1), then improved through
/// `1 → 3 → 2` (height 2); `path(1, 4)` is capped by the 0.1 edge either way, so its
/// derivation through `path(1, 2)` must then have height 3.
#[test]
fn heights_follow_improved_premises() {
    let source = "
.decl edge(a: number, b: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
";
    let program = Arc::new(support::compile("t.dl", source).expect("valid program"));
    let facts = vec![
        fact("edge", &[1, 2], 0.5),
        fact("edge", &[1, 3], 1.0),
        fact("edge", &[3, 2], 1.0),
        fact("edge", &[2, 4], 0.1),
    ];
    let inputs = support::gen_inputs(&program, &facts, 0);
    let fb = support::run(&program, &inputs, true);
    let mut checked = 0;
    for rel in 0..program.relations().len() as u32 {
        for f in fb.facts(rel) {
            if let Err(e) = check_fact(&fb, &inputs, f) {
                panic!("{}: {e}", fb.fact_text(f));
            }
            checked += 1;
        }
    }
    assert!(checked >= 4 + 6, "every edge and path fact was checked");
}

/// Among derivations of equal confidence the least height wins, also after a premise
/// of the first one found improves and grows taller.
///
/// `r0(3, 1)` has confidence 0.115 (capped by `e1(1)`) through `r0(0, 3)` or
/// `r0(1, 3)`. `r0(0, 3)` starts as a 0.115 input (so `r0(3, 1)` is first found at
/// height 1) and then improves to 1.0 at height 2; `r0(1, 3)` has height 1. The
/// preferred derivation of `r0(3, 1)` therefore has height 2, through `r0(1, 3)`.
#[test]
fn least_height_among_equal_confidence() {
    let source = "
.decl e1(c0: number)
.decl r0(c0: number, c1: number)
r0(x1, x0) :- e1(x0), r0(_, x1).
";
    let program = Arc::new(support::compile("t.dl", source).expect("valid program"));
    let facts = vec![
        fact("e1", &[0], 1.0),
        fact("r0", &[1, 1], 1.0),
        fact("e1", &[1], 0.115),
        fact("r0", &[0, 3], 0.115),
        fact("e1", &[3], 1.0),
    ];
    let inputs = support::gen_inputs(&program, &facts, 0);
    let expected = support::naive::evaluate(&program, &inputs);
    let preferred = support::naive::preferred_derivations(&program, &inputs, &expected);
    let rel = program.relation_id("r0").expect("r0");
    let key = (rel, vec![Value::Number(3), Value::Number(1)]);
    assert_eq!(preferred.get(&key), Some(&(2, Some(0))), "reference");
    let fb = support::run(&program, &inputs, true);
    let fact = fb.lookup(rel, &key.1).expect("r0(3, 1) derived");
    let d = fb.derivation(fact).expect("a derivation");
    assert_eq!((d.height, d.rule), (2, 0));
}

fn fact(rel: &str, args: &[i64], confidence: f64) -> support::random::GenFact {
    support::random::GenFact {
        rel: rel.into(),
        args: args.to_vec(),
        confidence,
    }
}

/// The generator exercises what the properties are about: most programs derive facts,
/// and many use recursion, negation, aggregates and arithmetic. (A fixed-seed sample,
/// so the counts are deterministic; the bounds are well below what it produces.)
#[test]
fn generator_covers_the_language() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    use support::random::GLit;

    let mut runner = TestRunner::deterministic();
    let (mut recursive, mut negation, mut aggregate, mut assign, mut deriving) = (0, 0, 0, 0, 0);
    let n = 100;
    for _ in 0..n {
        let case = case().new_tree(&mut runner).expect("a case").current();
        let rules = &case.program.rules;
        let any = |f: &dyn Fn(&support::random::GenRule, &GLit) -> bool| {
            rules.iter().any(|r| r.body.iter().any(|l| f(r, l)))
        };
        recursive += usize::from(any(&|r, l| matches!(l, GLit::Atom(a, _) if *a == r.head)));
        negation += usize::from(any(&|_, l| matches!(l, GLit::Neg(..))));
        aggregate += usize::from(any(&|_, l| matches!(l, GLit::Agg { .. })));
        assign += usize::from(any(&|_, l| matches!(l, GLit::Assign(..))));
        let (program, inputs) = prepare(&case);
        let result = support::naive::evaluate(&program, &inputs);
        let derived: usize = result
            .iter()
            .filter(|(name, _)| name.starts_with('r'))
            .map(|(_, rows)| rows.len())
            .sum();
        deriving += usize::from(derived > 0);
    }
    assert!(
        deriving >= n * 6 / 10,
        "only {deriving} of {n} programs derive a fact"
    );
    assert!(
        recursive >= n * 3 / 10,
        "only {recursive} of {n} are recursive"
    );
    assert!(
        negation >= n * 3 / 10,
        "only {negation} of {n} use negation"
    );
    assert!(
        aggregate >= n / 10,
        "only {aggregate} of {n} use aggregates"
    );
    assert!(
        assign >= n / 10,
        "only {assign} of {n} use arithmetic assignments"
    );
}

type Snapshot = Vec<(Vec<Value>, u64, Option<Derivation>)>;

fn snapshot(fb: &FactBase, rel: u32) -> Snapshot {
    fb.facts(rel)
        .map(|f| (fb.args(f), fb.confidence(f).to_bits(), fb.derivation(f)))
        .collect()
}

fn height(fb: &FactBase, fact: FactId) -> u32 {
    fb.derivation(fact).map_or(0, |d| d.height)
}

fn check_fact(fb: &FactBase, inputs: &[InputFact], fact: FactId) -> Result<(), String> {
    let conf = fb.confidence(fact);
    let args = fb.args(fact);
    let input_conf = inputs
        .iter()
        .filter(|i| i.rel == fact.rel && i.args == args)
        .map(|i| i.confidence)
        .reduce(f64::max);
    let Some(d) = fb.derivation(fact) else {
        let Some(ic) = input_conf else {
            return Err("derived fact without a derivation".into());
        };
        if (ic - conf).abs() > TOLERANCE {
            return Err(format!("input fact has confidence {conf}, input says {ic}"));
        }
        if fb.evidence(fact).is_none() {
            return Err("input fact without its evidence record".into());
        }
        return Ok(());
    };
    let program = fb.program();
    let rule = program
        .rules()
        .get(d.rule as usize)
        .ok_or_else(|| format!("unknown rule {}", d.rule))?;
    if rule.head.rel != fact.rel {
        return Err(format!(
            "rule {} does not conclude this relation",
            rule.name
        ));
    }
    for p in &d.premises {
        if p.rel as usize >= program.relations().len() || p.row as usize >= fb.len(p.rel) {
            return Err(format!("premise {p:?} does not exist"));
        }
    }
    let min = d
        .premises
        .iter()
        .map(|&p| fb.confidence(p))
        .reduce(f64::min);
    let expected = rule.confidence * min.unwrap_or(1.0);
    if (expected - conf).abs() > TOLERANCE {
        return Err(format!(
            "confidence {conf} but rule {} × min premises = {expected}",
            rule.name
        ));
    }
    if let Some(ic) = input_conf
        && ic > conf + TOLERANCE
    {
        return Err(format!(
            "derivation {conf} recorded below input confidence {ic}"
        ));
    }
    let max_premise = d.premises.iter().map(|&p| height(fb, p)).max().unwrap_or(0);
    if d.height != 1 + max_premise {
        return Err(format!(
            "height {} but premises reach {max_premise}",
            d.height
        ));
    }
    for (rel, absent) in &d.absent {
        if fb.lookup(*rel, absent).is_some() {
            return Err(format!(
                "negated premise {} is present",
                prooflog::value::fact_text(&program.relation(*rel).name, absent)
            ));
        }
    }
    replay(fb, rule, &d, &args)
}

/// Re-run the rule on the recorded premises: they must match its atoms, satisfy its
/// negations and comparisons, and produce the fact's values. Aggregate rules are
/// checked only through confidence and height above.
fn replay(fb: &FactBase, rule: &Rule, d: &Derivation, args: &[Value]) -> Result<(), String> {
    if rule
        .body
        .iter()
        .any(|l| matches!(l, Literal::Aggregate { .. }))
    {
        return Ok(());
    }
    let mut env: Vec<Option<Value>> = vec![None; rule.vars.len()];
    let mut premises = d.premises.iter();
    for lit in &rule.body {
        match lit {
            Literal::Atom(atom) => {
                let p = premises.next().ok_or("fewer premises than atoms")?;
                if p.rel != atom.rel {
                    return Err(format!("premise {p:?} is not of the atom's relation"));
                }
                let row = fb.args(*p);
                for (t, x) in atom.args.iter().zip(&row) {
                    let ok = match t {
                        Term::Var(v) => {
                            let slot = &mut env[*v as usize];
                            slot.get_or_insert_with(|| x.clone()) == x
                        }
                        Term::Const(c) => c == x,
                        Term::Wildcard => true,
                    };
                    if !ok {
                        return Err(format!("premise {} does not match", fb.fact_text(*p)));
                    }
                }
            }
            Literal::Negated(atom) => {
                let hit = fb.facts(atom.rel).find(|&f| {
                    atom.args.iter().zip(fb.args(f)).all(|(t, x)| match t {
                        Term::Var(v) => env[*v as usize].as_ref() == Some(&x),
                        Term::Const(c) => *c == x,
                        Term::Wildcard => true,
                    })
                });
                if let Some(f) = hit {
                    return Err(format!("negated atom matched by {}", fb.fact_text(f)));
                }
            }
            Literal::Compare {
                op,
                left,
                right,
                assigns,
                ..
            } => match assigns.filter(|v| env[*v as usize].is_none()) {
                Some(v) => {
                    let source = if *left == Expr::Var(v) { right } else { left };
                    let value = eval_expr(source, &env).ok_or("assignment fails")?;
                    env[v as usize] = Some(value);
                }
                None => {
                    let l = eval_expr(left, &env).ok_or("comparison fails to evaluate")?;
                    let r = eval_expr(right, &env).ok_or("comparison fails to evaluate")?;
                    if !compare(*op, &l, &r) {
                        return Err(format!("comparison {l} {op:?} {r} is false"));
                    }
                }
            },
            Literal::Aggregate { .. } => unreachable!("aggregate rules are skipped"),
            Literal::Test { .. } => unreachable!("random programs have no tests"),
        }
    }
    if premises.next().is_some() {
        return Err("more premises than atoms".into());
    }
    let head: Option<Vec<Value>> = rule.head.args.iter().map(|e| eval_expr(e, &env)).collect();
    match head {
        Some(h) if h == args => Ok(()),
        other => Err(format!("rule head gives {other:?}")),
    }
}
