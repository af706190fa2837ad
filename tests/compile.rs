//! End-to-end checks of `check::compile` on whole programs: the default rule pack and
//! the shape of the IR back ends rely on.

use prooflog::Program;
use prooflog::ir::{CmpOp, Expr, Literal, Term};
use prooflog::value::{ColumnType, Value};

#[test]
fn drone_pack_compiles() {
    let p = Program::from_files(&["rules/drones/drones.dl"]).unwrap();
    let names: Vec<&str> = p.relations().iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "member",
            "sighting",
            "restricted",
            "cleared",
            "coordinated_threat",
            "intrusion",
            "threatens",
            "group_size"
        ]
    );
    let member = p.relation(p.relation_id("member").unwrap());
    assert_eq!(member.columns[0].name, "group");
    assert_eq!(member.columns[1].ty, ColumnType::Number);
    assert_eq!(
        member.text.as_deref(),
        Some("drone {1} is a member of group {0}")
    );
    let outputs: Vec<&str> = p
        .relations()
        .iter()
        .filter(|r| r.output)
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(
        outputs,
        vec!["coordinated_threat", "threatens", "group_size"]
    );

    let rule_names: Vec<&str> = p.rules().iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        rule_names,
        vec![
            "rule:coordinated_threat",
            "intrusion",
            "threatens",
            "rule:group_size"
        ]
    );
    assert_eq!(p.rules()[0].confidence, 0.9);
    assert_eq!(p.rules()[3].confidence, 1.0);
    for (i, r) in p.rules().iter().enumerate() {
        assert_eq!(r.id as usize, i);
    }

    assert_eq!(p.facts().len(), 2);
    assert_eq!(p.facts()[0].args, vec![Value::Symbol("airport".into())]);

    // Strata: every rule's head in its stratum, dependencies before dependents.
    let stratum_of = |name: &str| {
        let id = p.relation_id(name).unwrap();
        p.strata()
            .iter()
            .position(|s| s.relations.contains(&id))
            .unwrap()
    };
    assert!(stratum_of("coordinated_threat") < stratum_of("threatens"));
    assert!(stratum_of("intrusion") < stratum_of("threatens"));
    assert!(p.strata().iter().all(|s| !s.recursive));
    assert_eq!(p.strata().len(), 4);
    for r in p.rules() {
        assert!(p.strata()[r.stratum].rules.contains(&r.id));
    }
    // `!cleared(d)` moves to right after `sighting(d, z)`, which binds `d`.
    let intrusion = &p.rules()[1];
    assert!(matches!(intrusion.body[1], Literal::Negated(_)));
    assert!(matches!(intrusion.body[2], Literal::Atom(_)));
}

#[test]
fn body_is_reordered_so_every_variable_is_bound_before_use() {
    let p = Program::from_source(
        "t.dl",
        "q(1). q(5). r(2, 3).\n\
         p(x, w) :- x > 3, w = y + 1, q(x), r(z, y), !s(z), z != x.\n\
         s(0).",
    )
    .unwrap();
    let rule = &p.rules()[0];
    let kinds: Vec<String> = rule
        .body
        .iter()
        .map(|l| match l {
            Literal::Atom(a) => format!("atom {}", p.relation(a.rel).name),
            Literal::Negated(a) => format!("not {}", p.relation(a.rel).name),
            Literal::Compare { op, assigns, .. } => format!("{op:?} {}", assigns.is_some()),
            Literal::Aggregate { .. } => "agg".into(),
            Literal::Test { test, .. } => test.name().into(),
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "atom q", "Gt false", "atom r", "Eq true", "not s", "Ne false"
        ]
    );
}

#[test]
fn assignment_with_variable_on_the_right_is_swapped() {
    let p = Program::from_source("t.dl", "q(1). p(w) :- q(x), x + 1 = w.").unwrap();
    match &p.rules()[0].body[1] {
        Literal::Compare {
            op: CmpOp::Eq,
            left: Expr::Var(v),
            assigns: Some(a),
            ..
        } => {
            assert_eq!(v, a);
            assert_eq!(p.rules()[0].vars[*v as usize].name, "w");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn constants_take_their_column_types() {
    let p = Program::from_source(
        "t.dl",
        ".decl f(x: float, u: unsigned, n: number)\n\
         f(1, 2, -3).\n\
         g(y) :- f(y, 2, _), y < 4.",
    )
    .unwrap();
    assert_eq!(
        p.facts()[0].args,
        vec![Value::Float(1.0), Value::Unsigned(2), Value::Number(-3)]
    );
    let g = p.relation(p.relation_id("g").unwrap());
    assert_eq!(g.columns[0].ty, ColumnType::Float);
    match &p.rules()[0].body[0] {
        Literal::Atom(a) => assert_eq!(a.args[1], Term::Const(Value::Unsigned(2))),
        other => panic!("unexpected {other:?}"),
    }
    match &p.rules()[0].body[1] {
        Literal::Compare { right, .. } => assert_eq!(*right, Expr::Const(Value::Float(4.0))),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn recursion_and_negation_are_stratified() {
    let p = Program::from_source(
        "t.dl",
        "edge(1, 2). edge(2, 3). node(1). node(2). node(3).\n\
         path(x, y) :- edge(x, y).\n\
         path(x, z) :- path(x, y), edge(y, z).\n\
         unreachable(x, y) :- node(x), node(y), !path(x, y).\n\
         n(c) :- c = count : { path(_, _) }.",
    )
    .unwrap();
    assert_eq!(p.strata().len(), 3);
    assert!(p.strata()[0].recursive);
    assert_eq!(p.strata()[0].rules, vec![0, 1]);
    assert_eq!(p.rules()[0].name, "rule:path#1");
    assert_eq!(p.rules()[1].name, "rule:path#2");
    assert_eq!(p.rules()[2].name, "rule:unreachable");
    assert!(!p.strata()[1].recursive && !p.strata()[2].recursive);
}

#[test]
fn several_heads_and_disjunction_split_into_rules() {
    let p = Program::from_source(
        "t.dl",
        "c(1). d(2).\n@confidence(0.5)\na(x), b(x) :- c(x) ; d(x).",
    )
    .unwrap();
    let shape: Vec<(String, String)> = p
        .rules()
        .iter()
        .map(|r| {
            let body = match &r.body[0] {
                Literal::Atom(a) => p.relation(a.rel).name.clone(),
                _ => String::new(),
            };
            (r.name.clone(), body)
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            ("rule:a#1".to_string(), "c".to_string()),
            ("rule:a#2".to_string(), "d".to_string()),
            ("rule:b#1".to_string(), "c".to_string()),
            ("rule:b#2".to_string(), "d".to_string()),
        ]
    );
    assert!(p.rules().iter().all(|r| r.confidence == 0.5));
}

#[test]
fn aggregates_group_by_outer_variables() {
    let p = Program::from_source(
        "t.dl",
        "w(1, 10). w(1, 20).\n\
         total(x, s) :- w(x, _), s = sum y : { w(x, y) }.\n\
         lowest(m) :- m = min y : w(_, y).",
    )
    .unwrap();
    match &p.rules()[0].body[1] {
        Literal::Aggregate {
            result,
            target,
            body,
            ..
        } => {
            assert_eq!(p.rules()[0].vars[*result as usize].name, "s");
            assert!(matches!(target, Some(Expr::Var(_))));
            assert_eq!(body.len(), 1);
        }
        other => panic!("unexpected {other:?}"),
    }
    let total = p.relation(p.relation_id("total").unwrap());
    assert_eq!(total.columns[1].ty, ColumnType::Number);
}

#[test]
fn io_directives_and_type_aliases() {
    let p = Program::from_source(
        "t.dl",
        ".type Id <: number\n.type Name = symbol\n\
         .decl person(id: Id, name: Name) btree\n\
         .input person(IO=file, FileName=\"people.tsv\", delimiter=\"\\t\")\n\
         .decl knows(a: Id, b: Id)\n.output person, knows\n\
         .pragma \"legacy\" \"on\"\n\
         .functional person(id)\n",
    )
    .unwrap();
    let person = p.relation(0);
    assert_eq!(person.columns[0].ty, ColumnType::Number);
    assert_eq!(person.columns[1].ty, ColumnType::Symbol);
    let io = person.input.as_ref().unwrap();
    assert_eq!(io.options["filename"], "people.tsv");
    assert_eq!(io.options["delimiter"], "\t");
    assert_eq!(io.options["io"], "file");
    assert!(person.output && p.relation(1).output);
    assert_eq!(person.functional, Some(vec![0]));
}

#[test]
fn type_hints_settle_open_columns() {
    let mut sources = prooflog::diag::SourceMap::new();
    sources.add("t.dl", "p(x) :- e(x, y), y > 0.");
    let mut hints = prooflog::check::TypeHints::new();
    hints.insert(
        "e".into(),
        vec![Some(ColumnType::Symbol), Some(ColumnType::Float)],
    );
    let p = prooflog::check::compile(sources, &hints).unwrap();
    let e = p.relation(p.relation_id("e").unwrap());
    assert_eq!(e.columns[0].ty, ColumnType::Symbol);
    assert_eq!(e.columns[1].ty, ColumnType::Float);
    assert_eq!(p.relation(0).columns[0].ty, ColumnType::Symbol);
}

#[test]
fn missing_file_is_an_io_error() {
    let err = Program::from_files(&["no/such/file.dl"]).unwrap_err();
    assert_eq!(err.code(), prooflog::ErrorCode::Io);
    assert!(err.primary().message.contains("no/such/file.dl"));
}

#[test]
fn large_program_compiles() {
    // A 10,000-rule chain: deep enough to break a recursive SCC search.
    let mut text = String::from("r0(1).\n");
    for i in 1..=10_000 {
        text.push_str(&format!("r{i}(x) :- r{}(x), x > 0.\n", i - 1));
    }
    let p = Program::from_source("big.dl", &text).unwrap();
    assert_eq!(p.rules().len(), 10_000);
    assert_eq!(p.strata().len(), 10_000);
    let last = p.relation_id("r10000").unwrap();
    assert_eq!(p.strata().last().unwrap().relations, vec![last]);
}

// ---- property: the stored body order binds every variable before it is read ----

mod safe_order {
    use super::*;
    use prooflog::ErrorCode;
    use prooflog::ir::{Rule, VarId};
    use proptest::prelude::*;

    const VARS: &[&str] = &["a", "b", "c", "d"];

    fn var() -> impl Strategy<Value = &'static str> {
        prop::sample::select(VARS)
    }

    fn term() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => var().prop_map(String::from),
            1 => Just("_".to_string()),
            1 => (0i64..5).prop_map(|i| i.to_string()),
        ]
    }

    /// One body literal over e/2, f/1 and the variables a–d.
    fn literal() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => (term(), term()).prop_map(|(x, y)| format!("e({x}, {y})")),
            2 => term().prop_map(|x| format!("f({x})")),
            1 => (term(), term()).prop_map(|(x, y)| format!("!e({x}, {y})")),
            1 => (var(), var()).prop_map(|(x, y)| format!("{x} < {y}")),
            1 => (var(), var(), 0i64..3).prop_map(|(x, y, k)| format!("{x} = {y} + {k}")),
            1 => (var(), var()).prop_map(|(x, y)| format!("{x} = count : {{ e({y}, _) }}")),
        ]
    }

    fn expr_vars(e: &Expr, out: &mut Vec<VarId>) {
        match e {
            Expr::Var(v) => out.push(*v),
            Expr::Binary(_, l, r) => {
                expr_vars(l, out);
                expr_vars(r, out);
            }
            Expr::Neg(e) => expr_vars(e, out),
            Expr::Call(_, args, _) => args.iter().for_each(|a| expr_vars(a, out)),
            Expr::Const(_) => {}
        }
    }

    /// Walk `body` in order, checking reads against `bound` and adding bindings.
    fn check_body(body: &[Literal], bound: &mut [bool]) -> Result<(), String> {
        for l in body {
            match l {
                Literal::Atom(a) => {
                    for t in &a.args {
                        if let Term::Var(v) = t {
                            bound[*v as usize] = true;
                        }
                    }
                }
                Literal::Negated(a) => {
                    for t in &a.args {
                        if let Term::Var(v) = t
                            && !bound[*v as usize]
                        {
                            return Err(format!("negation reads unbound {v}"));
                        }
                    }
                }
                Literal::Compare {
                    left,
                    right,
                    assigns,
                    ..
                } => {
                    let mut reads = Vec::new();
                    if assigns.is_none() {
                        expr_vars(left, &mut reads);
                    }
                    expr_vars(right, &mut reads);
                    if let Some(v) = reads.iter().find(|v| !bound[**v as usize]) {
                        return Err(format!("comparison reads unbound {v}"));
                    }
                    if let Some(v) = assigns {
                        if bound[*v as usize] || *left != Expr::Var(*v) {
                            return Err(format!("bad assignment of {v}"));
                        }
                        bound[*v as usize] = true;
                    }
                }
                Literal::Aggregate {
                    result,
                    body,
                    target,
                    ..
                } => {
                    let mut inner = bound.to_vec();
                    check_body(body, &mut inner)?;
                    if let Some(t) = target {
                        let mut reads = Vec::new();
                        expr_vars(t, &mut reads);
                        if reads.iter().any(|v| !inner[*v as usize]) {
                            return Err("aggregate target unbound".into());
                        }
                    }
                    bound[*result as usize] = true;
                }
                Literal::Test { args, .. } => {
                    let mut reads = Vec::new();
                    args.iter().for_each(|a| expr_vars(a, &mut reads));
                    if reads.iter().any(|v| !bound[*v as usize]) {
                        return Err("test reads unbound".into());
                    }
                }
            }
        }
        Ok(())
    }

    /// Positive atoms as written back: `e(a, _)`, `f(2)`.
    fn positive_atoms(p: &Program, rule: &Rule) -> Vec<String> {
        rule.body
            .iter()
            .filter_map(|l| match l {
                Literal::Atom(a) => {
                    let args: Vec<String> = a
                        .args
                        .iter()
                        .map(|t| match t {
                            Term::Var(v) => rule.vars[*v as usize].name.clone(),
                            Term::Const(c) => c.to_string(),
                            Term::Wildcard => "_".into(),
                        })
                        .collect();
                    Some(format!("{}({})", p.relation(a.rel).name, args.join(", ")))
                }
                _ => None,
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn body_order_is_safe(
            head in prop::collection::vec(var(), 0..3),
            body in prop::collection::vec(literal(), 1..6),
        ) {
            let text = format!(
                ".decl e(x: number, y: number)\n.decl f(x: number)\np({}) :- {}.",
                head.join(", "),
                body.join(", ")
            );
            match Program::from_source("t.dl", &text) {
                Ok(p) => {
                    let rule = &p.rules()[0];
                    let mut bound = vec![false; rule.vars.len()];
                    if let Err(e) = check_body(&rule.body, &mut bound) {
                        return Err(TestCaseError::fail(format!("{e} in\n{text}\n{:#?}", rule.body)));
                    }
                    for e in &rule.head.args {
                        let mut reads = Vec::new();
                        expr_vars(e, &mut reads);
                        prop_assert!(reads.iter().all(|v| bound[*v as usize]), "{}", text);
                    }
                    // Positive atoms keep their source order.
                    let written: Vec<String> = body
                        .iter()
                        .filter(|l| l.starts_with("e(") || l.starts_with("f("))
                        .cloned()
                        .collect();
                    prop_assert_eq!(positive_atoms(&p, rule), written);
                }
                Err(e) => {
                    for d in &e.diagnostics {
                        prop_assert!(
                            matches!(
                                d.code,
                                ErrorCode::RangeRestriction
                                    | ErrorCode::UnsafeVariable
                                    | ErrorCode::NotStratifiable
                            ),
                            "{}\n{}",
                            text,
                            d
                        );
                        prop_assert!(d.location.is_some());
                    }
                }
            }
        }
    }
}

#[test]
fn nested_disjunction_expands_in_order() {
    let p = Program::from_source(
        "t.dl",
        "a(1). b(1). c(1). d(1).\np(x) :- a(x), (b(x) ; c(x)), d(x).\nq(x) :- a(x).",
    )
    .unwrap();
    let bodies: Vec<Vec<String>> = p
        .rules()
        .iter()
        .map(|r| {
            r.body
                .iter()
                .map(|l| match l {
                    Literal::Atom(a) => p.relation(a.rel).name.clone(),
                    _ => "?".into(),
                })
                .collect()
        })
        .collect();
    assert_eq!(
        bodies,
        vec![vec!["a", "b", "d"], vec!["a", "c", "d"], vec!["a"]]
    );
    assert_eq!(p.rules()[0].name, "rule:p#1");
    assert_eq!(p.rules()[1].name, "rule:p#2");
    assert_eq!(p.rules()[2].id, 2);
}

// ---- the evaluator accepts what the front end builds ----

#[test]
fn compiled_programs_evaluate_as_written() {
    use std::sync::Arc;
    let p = Program::from_source(
        "t.dl",
        "q(1). q(5). q(7). e(5, 6). e(6, 7). e(7, 5).\n\
         big(x) :- x > 3, q(x).\n\
         next(x, w) :- w = y + 1, q(x), e(x, y).\n\
         path(x, y) :- e(x, y).\n\
         path(x, z) :- path(x, y), e(y, z).\n\
         lonely(x) :- q(x), !path(x, _).\n\
         fan(x, n) :- q(x), n = count : { path(x, _) }.\n\
         either(x) :- q(x), (x = 1 ; x = 7).",
    )
    .unwrap();
    let fb = prooflog::eval::evaluate(Arc::new(p), &[], &prooflog::EvalOptions::default()).unwrap();
    let rows = |name: &str| {
        let id = fb.relation_id(name).unwrap();
        let mut r = fb.rows(id);
        r.sort();
        r
    };
    let n = |i: i64| Value::Number(i);
    assert_eq!(rows("big"), vec![vec![n(5)], vec![n(7)]]);
    assert_eq!(rows("next"), vec![vec![n(5), n(7)], vec![n(7), n(6)]]);
    assert_eq!(rows("lonely"), vec![vec![n(1)]]);
    // Soufflé semantics: a count over an empty group is 0.
    assert_eq!(
        rows("fan"),
        vec![vec![n(1), n(0)], vec![n(5), n(3)], vec![n(7), n(3)]]
    );
    assert_eq!(rows("either"), vec![vec![n(1)], vec![n(7)]]);
}
