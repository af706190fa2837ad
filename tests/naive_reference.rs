//! The naive reference evaluator itself, on hand-built programs with hand-computed
//! results: the oracle is only as good as these checks. Programs are built directly
//! as IR, so these tests depend on nothing but the IR types.

mod support;

use prooflog::Value;
use prooflog::diag::{SourceMap, Span};
use prooflog::ir::{
    AggFunc, ArithOp, Atom, CmpOp, Column, Expr, Head, Literal, Program, Relation, Rule,
    SourceFact, Term, Variable,
};
use prooflog::store::{InputFact, Provenance};
use prooflog::value::ColumnType;

use support::naive::{Relations, evaluate};

fn relation(name: &str, arity: usize) -> Relation {
    Relation {
        name: name.into(),
        columns: (0..arity)
            .map(|i| Column {
                name: format!("_{i}"),
                ty: ColumnType::Number,
            })
            .collect(),
        input: None,
        output: false,
        outputs: Vec::new(),
        printsize: false,
        auxiliary: false,
        functional: None,
        text: None,
        span: Span::default(),
    }
}

fn var(v: u32) -> Term {
    Term::Var(v)
}

fn atom(rel: u32, args: Vec<Term>) -> Atom {
    Atom {
        rel,
        args,
        span: Span::default(),
    }
}

fn rule(id: u32, confidence: f64, nvars: u32, head: Head, body: Vec<Literal>) -> Rule {
    Rule {
        id,
        name: format!("r{id}"),
        confidence,
        head,
        body,
        vars: (0..nvars)
            .map(|i| Variable {
                name: format!("v{i}"),
                ty: ColumnType::Number,
            })
            .collect(),
        stratum: 0,
        span: Span::default(),
    }
}

fn head(rel: u32, args: Vec<Expr>) -> Head {
    Head { rel, args }
}

fn program(relations: Vec<Relation>, rules: Vec<Rule>, facts: Vec<(u32, Vec<i64>)>) -> Program {
    let facts = facts
        .into_iter()
        .map(|(rel, args)| SourceFact {
            rel,
            args: args.into_iter().map(Value::Number).collect(),
            span: Span::default(),
        })
        .collect();
    // The reference evaluator stratifies on its own; give it no strata.
    Program::from_parts_unchecked(relations, rules, Vec::new(), facts, SourceMap::new())
}

fn input(rel: u32, args: &[i64], confidence: f64) -> InputFact {
    InputFact {
        rel,
        args: args.iter().map(|&a| Value::Number(a)).collect(),
        confidence,
        provenance: Provenance::default(),
    }
}

fn conf(result: &Relations, rel: &str, args: &[i64]) -> Option<f64> {
    let key: Vec<Value> = args.iter().map(|&a| Value::Number(a)).collect();
    result[rel].get(&key).copied()
}

fn assert_close(got: Option<f64>, want: f64) {
    let got = got.expect("fact derived");
    assert!((got - want).abs() < 1e-12, "{got} != {want}");
}

/// Transitive closure with confidences: a derivation is rule × min(premises), a fact
/// keeps its best derivation, and going round the cycle never improves it.
#[test]
fn closure_confidences_take_the_best_path() {
    // 0 edge, 1 path
    let rels = vec![relation("edge", 2), relation("path", 2)];
    let rules = vec![
        rule(
            0,
            1.0,
            2,
            head(1, vec![Expr::Var(0), Expr::Var(1)]),
            vec![Literal::Atom(atom(0, vec![var(0), var(1)]))],
        ),
        rule(
            1,
            0.9,
            3,
            head(1, vec![Expr::Var(0), Expr::Var(2)]),
            vec![
                Literal::Atom(atom(1, vec![var(0), var(1)])),
                Literal::Atom(atom(0, vec![var(1), var(2)])),
            ],
        ),
    ];
    let p = program(rels, rules, vec![]);
    let inputs = [
        input(0, &[1, 2], 1.0),
        input(0, &[2, 3], 0.8),
        input(0, &[3, 4], 0.5),
        input(0, &[4, 2], 1.0),
        // A weaker duplicate does not lower the edge.
        input(0, &[4, 2], 0.1),
        // A direct but weak edge loses to the longer, stronger path.
        input(0, &[1, 3], 0.3),
    ];
    let r = evaluate(&p, &inputs);
    assert_eq!(r["path"].len(), 12);
    assert_close(conf(&r, "path", &[1, 3]), 0.9 * 0.8);
    assert_close(conf(&r, "path", &[1, 4]), 0.9 * 0.5);
    assert_close(conf(&r, "path", &[2, 2]), 0.9 * (0.9 * 0.5));
    assert_close(conf(&r, "path", &[4, 2]), 1.0);
    assert_close(conf(&r, "edge", &[4, 2]), 1.0);
}

/// Negation reads a relation only once it is complete, whatever the rule order.
#[test]
fn negation_is_stratified_by_the_reference_itself() {
    // 0 node, 1 edge, 2 reach, 3 unreached
    let rels = vec![
        relation("node", 1),
        relation("edge", 2),
        relation("reach", 1),
        relation("unreached", 1),
    ];
    let rules = vec![
        // Listed first, but must wait for `reach`.
        rule(
            0,
            1.0,
            1,
            head(3, vec![Expr::Var(0)]),
            vec![
                Literal::Atom(atom(0, vec![var(0)])),
                Literal::Negated(atom(2, vec![var(0)])),
            ],
        ),
        rule(
            1,
            1.0,
            2,
            head(2, vec![Expr::Var(1)]),
            vec![
                Literal::Atom(atom(2, vec![var(0)])),
                Literal::Atom(atom(1, vec![var(0), var(1)])),
            ],
        ),
    ];
    let facts = vec![
        (0, vec![1]),
        (0, vec![2]),
        (0, vec![3]),
        (0, vec![4]),
        (1, vec![1, 2]),
        (1, vec![2, 3]),
        (1, vec![4, 1]),
        (2, vec![1]),
    ];
    let r = evaluate(&program(rels, rules, facts), &[]);
    let unreached: Vec<_> = r["unreached"].keys().cloned().collect();
    assert_eq!(unreached, vec![vec![Value::Number(4)]]);
    assert_eq!(r["reach"].len(), 3);
}

/// Division by zero and overflow drop the binding; assignments bind.
#[test]
fn failing_arithmetic_drops_the_binding() {
    // 0 p, 1 q
    let rels = vec![relation("p", 2), relation("q", 1)];
    let div = Expr::Binary(ArithOp::Div, Box::new(Expr::Var(0)), Box::new(Expr::Var(1)));
    let rules = vec![
        // q(z) :- p(x, y), z = x / y.
        rule(
            0,
            1.0,
            3,
            head(1, vec![Expr::Var(2)]),
            vec![
                Literal::Atom(atom(0, vec![var(0), var(1)])),
                Literal::Compare {
                    op: CmpOp::Eq,
                    left: Expr::Var(2),
                    right: div,
                    assigns: Some(2),
                    span: Span::default(),
                },
            ],
        ),
        // q(x * y) :- p(x, y), x > 100.
        rule(
            1,
            1.0,
            2,
            head(
                1,
                vec![Expr::Binary(
                    ArithOp::Mul,
                    Box::new(Expr::Var(0)),
                    Box::new(Expr::Var(1)),
                )],
            ),
            vec![
                Literal::Atom(atom(0, vec![var(0), var(1)])),
                Literal::Compare {
                    op: CmpOp::Gt,
                    left: Expr::Var(0),
                    right: Expr::Const(Value::Number(100)),
                    assigns: None,
                    span: Span::default(),
                },
            ],
        ),
    ];
    let facts = vec![(0, vec![9, 2]), (0, vec![7, 0]), (0, vec![i64::MAX, 2])];
    let r = evaluate(&program(rels, rules, facts), &[]);
    let q: Vec<_> = r["q"].keys().cloned().collect();
    // 9 / 2 = 4; 7 / 0 dropped; MAX / 2 kept; MAX * 2 overflows and is dropped.
    assert_eq!(
        q,
        vec![vec![Value::Number(4)], vec![Value::Number(i64::MAX / 2)]]
    );
}

/// Grouped aggregates: count of nothing is 0, sum/min/max of nothing bind nothing,
/// sums count every aggregated fact (equal amounts included), and an aggregate
/// contributes the minimum confidence of the facts it aggregated.
#[test]
fn aggregates_group_and_carry_confidence() {
    // 0 group, 1 item(g, name, amount), 2 n(g, c), 3 s(g, total), 4 lo(g, m)
    let rels = vec![
        relation("group", 1),
        relation("item", 3),
        relation("n", 2),
        relation("s", 2),
        relation("lo", 2),
    ];
    let agg_rule = |id: u32, out: u32, func: AggFunc, target: Option<Expr>| {
        // out(g, r) :- group(g), r = func target : { item(g, _, a) }.   vars: g=0, r=1, a=2
        rule(
            id,
            1.0,
            3,
            head(out, vec![Expr::Var(0), Expr::Var(1)]),
            vec![
                Literal::Atom(atom(0, vec![var(0)])),
                Literal::Aggregate {
                    result: 1,
                    func,
                    target,
                    body: vec![Literal::Atom(atom(1, vec![var(0), Term::Wildcard, var(2)]))],
                    span: Span::default(),
                },
            ],
        )
    };
    let rules = vec![
        agg_rule(0, 2, AggFunc::Count, None),
        agg_rule(1, 3, AggFunc::Sum, Some(Expr::Var(2))),
        agg_rule(2, 4, AggFunc::Min, Some(Expr::Var(2))),
    ];
    let p = program(rels, rules, vec![(0, vec![1]), (0, vec![2])]);
    let inputs = [
        input(1, &[1, 10, 3], 0.9),
        input(1, &[1, 11, 3], 0.6),
        input(1, &[1, 12, 5], 1.0),
    ];
    let r = evaluate(&p, &inputs);
    assert_close(conf(&r, "n", &[1, 3]), 0.6);
    assert_close(conf(&r, "n", &[2, 0]), 1.0);
    assert_eq!(r["n"].len(), 2);
    assert_close(conf(&r, "s", &[1, 11]), 0.6);
    assert_eq!(r["s"].len(), 1, "no sum for an empty group");
    assert_close(conf(&r, "lo", &[1, 3]), 0.6);
    assert_eq!(r["lo"].len(), 1, "no min for an empty group");
}
