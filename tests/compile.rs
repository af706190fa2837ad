//! End-to-end checks of `check::compile` on whole programs: the default rule pack and
//! the shape of the IR back ends rely on.

use prooflog::Program;
use prooflog::ir::{CmpOp, Expr, Literal, Term};
use prooflog::value::{ColumnType, Value};

#[test]
fn drone_pack_compiles() {
    let p = Program::from_files(&["rules/drones/drones.dl"]).unwrap();
    let names: Vec<&str> = p.relations.iter().map(|r| r.name.as_str()).collect();
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
        .relations
        .iter()
        .filter(|r| r.output)
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(
        outputs,
        vec!["coordinated_threat", "threatens", "group_size"]
    );

    let rule_names: Vec<&str> = p.rules.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        rule_names,
        vec![
            "coordinated_threat",
            "intrusion",
            "threatens",
            "rule:group_size"
        ]
    );
    assert_eq!(p.rules[0].confidence, 0.9);
    assert_eq!(p.rules[3].confidence, 1.0);
    for (i, r) in p.rules.iter().enumerate() {
        assert_eq!(r.id as usize, i);
    }

    assert_eq!(p.facts.len(), 2);
    assert_eq!(p.facts[0].args, vec![Value::Symbol("airport".into())]);

    // Strata: every rule's head in its stratum, dependencies before dependents.
    let stratum_of = |name: &str| {
        let id = p.relation_id(name).unwrap();
        p.strata
            .iter()
            .position(|s| s.relations.contains(&id))
            .unwrap()
    };
    assert!(stratum_of("coordinated_threat") < stratum_of("threatens"));
    assert!(stratum_of("intrusion") < stratum_of("threatens"));
    assert!(p.strata.iter().all(|s| !s.recursive));
    assert_eq!(p.strata.len(), 4);
    for r in &p.rules {
        assert!(p.strata[r.stratum].rules.contains(&r.id));
    }
    // `!cleared(d)` moves to right after `sighting(d, z)`, which binds `d`.
    let intrusion = &p.rules[1];
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
    let rule = &p.rules[0];
    let kinds: Vec<String> = rule
        .body
        .iter()
        .map(|l| match l {
            Literal::Atom(a) => format!("atom {}", p.relation(a.rel).name),
            Literal::Negated(a) => format!("not {}", p.relation(a.rel).name),
            Literal::Compare { op, assigns, .. } => format!("{op:?} {}", assigns.is_some()),
            Literal::Aggregate { .. } => "agg".into(),
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
    match &p.rules[0].body[1] {
        Literal::Compare {
            op: CmpOp::Eq,
            left: Expr::Var(v),
            assigns: Some(a),
            ..
        } => {
            assert_eq!(v, a);
            assert_eq!(p.rules[0].vars[*v as usize].name, "w");
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
        p.facts[0].args,
        vec![Value::Float(1.0), Value::Unsigned(2), Value::Number(-3)]
    );
    let g = p.relation(p.relation_id("g").unwrap());
    assert_eq!(g.columns[0].ty, ColumnType::Float);
    match &p.rules[0].body[0] {
        Literal::Atom(a) => assert_eq!(a.args[1], Term::Const(Value::Unsigned(2))),
        other => panic!("unexpected {other:?}"),
    }
    match &p.rules[0].body[1] {
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
    assert_eq!(p.strata.len(), 3);
    assert!(p.strata[0].recursive);
    assert_eq!(p.strata[0].rules, vec![0, 1]);
    assert_eq!(p.rules[0].name, "rule:path#1");
    assert_eq!(p.rules[1].name, "rule:path#2");
    assert_eq!(p.rules[2].name, "rule:unreachable");
    assert!(!p.strata[1].recursive && !p.strata[2].recursive);
}

#[test]
fn several_heads_and_disjunction_split_into_rules() {
    let p = Program::from_source(
        "t.dl",
        "c(1). d(2).\n@confidence(0.5)\na(x), b(x) :- c(x) ; d(x).",
    )
    .unwrap();
    let shape: Vec<(String, String)> = p
        .rules
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
    assert!(p.rules.iter().all(|r| r.confidence == 0.5));
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
    match &p.rules[0].body[1] {
        Literal::Aggregate {
            result,
            target,
            body,
            ..
        } => {
            assert_eq!(p.rules[0].vars[*result as usize].name, "s");
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
    assert_eq!(p.rules.len(), 10_000);
    assert_eq!(p.strata.len(), 10_000);
    let last = p.relation_id("r10000").unwrap();
    assert_eq!(p.strata.last().unwrap().relations, vec![last]);
}
