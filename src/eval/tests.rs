//! Evaluator unit tests over hand-built checked programs.

use std::sync::{Arc, Mutex};

use super::*;
use crate::diag::Span;
use crate::ir::{
    AggFunc, ArithOp, Atom, CmpOp, Column, Expr, Head, Literal, Relation as IrRelation, Rule,
    Stratum, Term, Variable,
};
use crate::store::Provenance;
use crate::syntax::GoalArg;
use crate::value::ColumnType;

const N: ColumnType = ColumnType::Number;
const S: ColumnType = ColumnType::Symbol;

/// Builds a checked program by hand: relations, rules (with named variables) and an
/// explicit stratification.
#[derive(Default)]
struct Builder {
    relations: Vec<IrRelation>,
    rules: Vec<Rule>,
    strata: Vec<Stratum>,
}

/// Builds one rule's variable table while its literals are written.
#[derive(Default)]
struct Vars {
    vars: Vec<Variable>,
}

impl Vars {
    fn id(&mut self, name: &str, ty: ColumnType) -> u32 {
        if let Some(i) = self.vars.iter().position(|v| v.name == name) {
            return i as u32;
        }
        self.vars.push(Variable {
            name: name.into(),
            ty,
        });
        (self.vars.len() - 1) as u32
    }
    /// A number-typed variable term.
    fn n(&mut self, name: &str) -> Term {
        Term::Var(self.id(name, N))
    }
    /// A symbol-typed variable term.
    fn s(&mut self, name: &str) -> Term {
        Term::Var(self.id(name, S))
    }
}

fn atom(rel: RelId, args: Vec<Term>) -> Atom {
    Atom {
        rel,
        args,
        span: Span::default(),
    }
}

fn pos(rel: RelId, args: Vec<Term>) -> Literal {
    Literal::Atom(atom(rel, args))
}

fn neg(rel: RelId, args: Vec<Term>) -> Literal {
    Literal::Negated(atom(rel, args))
}

fn cmp(op: CmpOp, left: Expr, right: Expr) -> Literal {
    Literal::Compare {
        op,
        left,
        right,
        assigns: None,
        span: Span::default(),
    }
}

fn assign(var: u32, right: Expr) -> Literal {
    Literal::Compare {
        op: CmpOp::Eq,
        left: Expr::Var(var),
        right,
        assigns: Some(var),
        span: Span::default(),
    }
}

fn num(i: i64) -> Expr {
    Expr::Const(Value::Number(i))
}

fn bin(op: ArithOp, l: Expr, r: Expr) -> Expr {
    Expr::Binary(op, Box::new(l), Box::new(r))
}

fn t(e: &Term) -> Expr {
    match e {
        Term::Var(v) => Expr::Var(*v),
        Term::Const(c) => Expr::Const(c.clone()),
        Term::Wildcard => unreachable!("no wildcard in heads"),
    }
}

impl Builder {
    fn rel(&mut self, name: &str, types: &[ColumnType]) -> RelId {
        self.relations.push(IrRelation {
            name: name.into(),
            columns: types
                .iter()
                .enumerate()
                .map(|(i, &ty)| Column {
                    name: format!("_{i}"),
                    ty,
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
        });
        (self.relations.len() - 1) as RelId
    }

    /// Add a rule `head :- body` with confidence `conf` to stratum `stratum`.
    fn rule(
        &mut self,
        stratum: usize,
        conf: f64,
        head: (RelId, Vec<Expr>),
        body: Vec<Literal>,
        vars: Vars,
    ) -> RuleId {
        let id = self.rules.len() as RuleId;
        self.rules.push(Rule {
            id,
            name: format!("r{id}"),
            confidence: conf,
            head: Head {
                rel: head.0,
                args: head.1,
            },
            body,
            vars: vars.vars,
            stratum,
            span: Span::default(),
        });
        id
    }

    /// Add `head(x) :- body(x).` with confidence 1 to stratum `stratum`.
    fn copy_rule(&mut self, stratum: usize, head: RelId, body: RelId) -> RuleId {
        let mut v = Vars::default();
        let x = v.n("x");
        self.rule(
            stratum,
            1.0,
            (head, vec![t(&x)]),
            vec![pos(body, vec![x])],
            v,
        )
    }

    fn build(mut self, strata: &[(&[RelId], bool)]) -> Arc<Program> {
        for (i, (rels, recursive)) in strata.iter().enumerate() {
            let rules = self
                .rules
                .iter()
                .filter(|r| r.stratum == i)
                .map(|r| r.id)
                .collect();
            self.strata.push(Stratum {
                relations: rels.to_vec(),
                rules,
                recursive: *recursive,
            });
        }
        Arc::new(Program {
            relations: self.relations,
            rules: self.rules,
            strata: self.strata,
            facts: Vec::new(),
            sources: Default::default(),
            pack: Default::default(),
        })
    }
}

fn input(rel: RelId, args: &[i64], confidence: f64) -> InputFact {
    InputFact {
        rel,
        args: args.iter().map(|&i| Value::Number(i)).collect(),
        confidence,
        provenance: Provenance {
            source: "test".into(),
            ..Provenance::default()
        },
    }
}

fn prov() -> EvalOptions {
    EvalOptions {
        provenance: true,
        ..EvalOptions::default()
    }
}

fn nums(fb: &FactBase, rel: RelId) -> Vec<Vec<i64>> {
    fb.rows(rel)
        .into_iter()
        .map(|r| {
            r.into_iter()
                .map(|v| match v {
                    Value::Number(i) => i,
                    other => panic!("not a number: {other}"),
                })
                .collect()
        })
        .collect()
}

fn fact(fb: &FactBase, rel: RelId, args: &[i64]) -> FactId {
    let vals: Vec<Value> = args.iter().map(|&i| Value::Number(i)).collect();
    fb.lookup(rel, &vals)
        .unwrap_or_else(|| panic!("missing {}", crate::value::fact_text("?", &vals)))
}

/// `path(x, y) :- edge(x, y). path(x, z) :- edge(x, y), path(y, z).`
fn tc_program(left_linear: bool) -> (Arc<Program>, RelId, RelId) {
    let mut b = Builder::default();
    let edge = b.rel("edge", &[N, N]);
    let path = b.rel("path", &[N, N]);
    let mut v = Vars::default();
    let (x, y) = (v.n("x"), v.n("y"));
    b.rule(
        0,
        1.0,
        (path, vec![t(&x), t(&y)]),
        vec![pos(edge, vec![x, y])],
        v,
    );
    let mut v = Vars::default();
    let (x, y, z) = (v.n("x"), v.n("y"), v.n("z"));
    let body = if left_linear {
        vec![
            pos(path, vec![x.clone(), y.clone()]),
            pos(edge, vec![y, z.clone()]),
        ]
    } else {
        vec![
            pos(edge, vec![x.clone(), y.clone()]),
            pos(path, vec![y, z.clone()]),
        ]
    };
    b.rule(0, 1.0, (path, vec![t(&x), t(&z)]), body, v);
    (b.build(&[(&[path], true)]), edge, path)
}

/// The transitive closure computed naively, for comparison.
fn closure(edges: &[(i64, i64)]) -> Vec<Vec<i64>> {
    let mut set: std::collections::BTreeSet<(i64, i64)> = edges.iter().copied().collect();
    loop {
        let mut more = Vec::new();
        for &(a, b) in &set {
            for &(c, d) in edges {
                if b == c && !set.contains(&(a, d)) {
                    more.push((a, d));
                }
            }
        }
        if more.is_empty() {
            break;
        }
        set.extend(more);
    }
    set.into_iter().map(|(a, b)| vec![a, b]).collect()
}

#[test]
fn transitive_closure_on_chain_and_cycle() {
    for left in [false, true] {
        let (p, edge, path) = tc_program(left);
        let chain: Vec<(i64, i64)> = (0..10).map(|i| (i, i + 1)).collect();
        let inputs: Vec<InputFact> = chain
            .iter()
            .map(|&(a, b)| input(edge, &[a, b], 1.0))
            .collect();
        let fb = evaluate(p.clone(), &inputs, &prov()).unwrap();
        assert_eq!(fb.len(path), 55);
        assert_eq!(nums(&fb, path), closure(&chain));

        let cycle = [(1, 2), (2, 3), (3, 1), (3, 4)];
        let inputs: Vec<InputFact> = cycle
            .iter()
            .map(|&(a, b)| input(edge, &[a, b], 1.0))
            .collect();
        let fb = evaluate(p, &inputs, &EvalOptions::default()).unwrap();
        assert_eq!(nums(&fb, path), closure(&cycle));
        assert_eq!(fb.len(path), 12);
    }
}

#[test]
fn nonlinear_closure_matches_naive() {
    let mut b = Builder::default();
    let edge = b.rel("edge", &[N, N]);
    let path = b.rel("path", &[N, N]);
    let mut v = Vars::default();
    let (x, y) = (v.n("x"), v.n("y"));
    b.rule(
        0,
        1.0,
        (path, vec![t(&x), t(&y)]),
        vec![pos(edge, vec![x, y])],
        v,
    );
    let mut v = Vars::default();
    let (x, y, z) = (v.n("x"), v.n("y"), v.n("z"));
    let body = vec![
        pos(path, vec![x.clone(), y.clone()]),
        pos(path, vec![y, z.clone()]),
    ];
    b.rule(0, 1.0, (path, vec![t(&x), t(&z)]), body, v);
    let p = b.build(&[(&[path], true)]);
    let edges: Vec<(i64, i64)> = vec![(1, 2), (2, 3), (3, 4), (4, 5), (5, 2), (6, 1), (7, 7)];
    let inputs: Vec<InputFact> = edges
        .iter()
        .map(|&(a, c)| input(edge, &[a, c], 1.0))
        .collect();
    let fb = evaluate(p, &inputs, &prov()).unwrap();
    assert_eq!(nums(&fb, path), closure(&edges));
}

#[test]
fn same_generation() {
    // sg(x, y) :- parent(x, p), parent(y, p), x != y.
    // sg(x, y) :- parent(x, a), sg(a, b), parent(y, b).
    let mut b = Builder::default();
    let parent = b.rel("parent", &[N, N]);
    let sg = b.rel("sg", &[N, N]);
    let mut v = Vars::default();
    let (x, y, p) = (v.n("x"), v.n("y"), v.n("p"));
    let (ex, ey) = (t(&x), t(&y));
    b.rule(
        0,
        1.0,
        (sg, vec![ex.clone(), ey.clone()]),
        vec![
            pos(parent, vec![x, p.clone()]),
            pos(parent, vec![y, p]),
            cmp(CmpOp::Ne, ex, ey),
        ],
        v,
    );
    let mut v = Vars::default();
    let (x, y, a, bb) = (v.n("x"), v.n("y"), v.n("a"), v.n("b"));
    b.rule(
        0,
        1.0,
        (sg, vec![t(&x), t(&y)]),
        vec![
            pos(parent, vec![x, a.clone()]),
            pos(sg, vec![a, bb.clone()]),
            pos(parent, vec![y, bb]),
        ],
        v,
    );
    let p = b.build(&[(&[sg], true)]);
    // Tree: 1 is the root; 2, 3 children of 1; 4, 5 of 2; 6 of 3.
    let tree = [(2, 1), (3, 1), (4, 2), (5, 2), (6, 3)];
    let inputs: Vec<InputFact> = tree
        .iter()
        .map(|&(c, pa)| input(parent, &[c, pa], 1.0))
        .collect();
    let fb = evaluate(p, &inputs, &prov()).unwrap();
    let expect = vec![
        vec![2, 3],
        vec![3, 2],
        vec![4, 5],
        vec![4, 6],
        vec![5, 4],
        vec![5, 6],
        vec![6, 4],
        vec![6, 5],
    ];
    assert_eq!(nums(&fb, sg), expect);
}

#[test]
fn negation_across_strata() {
    // reach(x) :- source(x). reach(y) :- reach(x), edge(x, y).
    // unreached(x) :- node(x), !reach(x).
    let mut b = Builder::default();
    let node = b.rel("node", &[N]);
    let edge = b.rel("edge", &[N, N]);
    let source = b.rel("source", &[N]);
    let reach = b.rel("reach", &[N]);
    let unreached = b.rel("unreached", &[N]);
    let mut v = Vars::default();
    let x = v.n("x");
    b.rule(0, 1.0, (reach, vec![t(&x)]), vec![pos(source, vec![x])], v);
    let mut v = Vars::default();
    let (x, y) = (v.n("x"), v.n("y"));
    b.rule(
        0,
        1.0,
        (reach, vec![t(&y)]),
        vec![pos(reach, vec![x.clone()]), pos(edge, vec![x, y])],
        v,
    );
    let mut v = Vars::default();
    let x = v.n("x");
    b.rule(
        1,
        0.5,
        (unreached, vec![t(&x)]),
        vec![pos(node, vec![x.clone()]), neg(reach, vec![x])],
        v,
    );
    let p = b.build(&[(&[reach], true), (&[unreached], false)]);
    let mut inputs: Vec<InputFact> = (1..=6).map(|i| input(node, &[i], 0.8)).collect();
    inputs.extend(
        [(1, 2), (2, 3), (4, 5)]
            .iter()
            .map(|&(a, c)| input(edge, &[a, c], 1.0)),
    );
    inputs.push(input(source, &[1], 1.0));
    let fb = evaluate(p, &inputs, &prov()).unwrap();
    assert_eq!(nums(&fb, reach), vec![vec![1], vec![2], vec![3]]);
    assert_eq!(nums(&fb, unreached), vec![vec![4], vec![5], vec![6]]);
    let f = fact(&fb, unreached, &[4]);
    // Negation does not change confidence: 0.5 × 0.8.
    assert!((fb.confidence(f) - 0.4).abs() < 1e-12);
    let d = fb.derivation(f).unwrap();
    assert_eq!(d.premises, vec![fact(&fb, node, &[4])]);
    assert_eq!(d.absent, vec![(reach, vec![Value::Number(4)])]);
    assert_eq!(d.height, 1);
}

#[test]
fn aggregates_with_grouping() {
    // size(g, n) :- member(g, _), n = count : { member(g, _) }.
    // total(g, s) :- member(g, _), s = sum w : { member(g, d), weight(d, w) }.
    // lightest(g, m) :- member(g, _), m = min w : { member(g, d), weight(d, w) }.
    // heaviest(g, m) :- member(g, _), m = max w : { member(g, d), weight(d, w) }.
    // empty(g, n) :- group(g), n = count : { member(g, _) }.
    // nomin(g, m) :- group(g), m = min w : { member(g, d), weight(d, w) }.
    let mut b = Builder::default();
    let member = b.rel("member", &[N, N]);
    let weight = b.rel("weight", &[N, N]);
    let group = b.rel("group", &[N]);
    let size = b.rel("size", &[N, N]);
    let total = b.rel("total", &[N, N]);
    let lightest = b.rel("lightest", &[N, N]);
    let heaviest = b.rel("heaviest", &[N, N]);
    let empty = b.rel("empty", &[N, N]);
    let nomin = b.rel("nomin", &[N, N]);
    let mut rules = Vec::new();
    for (head, func, grouped_by_group) in [
        (size, AggFunc::Count, false),
        (total, AggFunc::Sum, false),
        (lightest, AggFunc::Min, false),
        (heaviest, AggFunc::Max, false),
        (empty, AggFunc::Count, true),
        (nomin, AggFunc::Min, true),
    ] {
        let mut v = Vars::default();
        let g = v.n("g");
        let n = v.id("n", N);
        let first = if grouped_by_group {
            pos(group, vec![g.clone()])
        } else {
            pos(member, vec![g.clone(), Term::Wildcard])
        };
        let (body, target) = if func == AggFunc::Count {
            (vec![pos(member, vec![g.clone(), Term::Wildcard])], None)
        } else {
            let (d, w) = (v.n("d"), v.n("w"));
            let target = Some(t(&w));
            (
                vec![
                    pos(member, vec![g.clone(), d.clone()]),
                    pos(weight, vec![d, w]),
                ],
                target,
            )
        };
        let agg = Literal::Aggregate {
            result: n,
            func,
            target,
            body,
            span: Span::default(),
        };
        rules.push(b.rule(
            0,
            1.0,
            (head, vec![t(&g), Expr::Var(n)]),
            vec![first, agg],
            v,
        ));
    }
    let p = b.build(&[(&[size, total, lightest, heaviest, empty, nomin], false)]);
    let mut inputs = vec![
        input(member, &[1, 10], 1.0),
        input(member, &[1, 11], 0.7),
        input(member, &[1, 12], 1.0),
        input(member, &[2, 20], 1.0),
        input(weight, &[10, 5], 1.0),
        input(weight, &[11, 3], 0.9),
        input(weight, &[12, 5], 1.0),
        input(weight, &[20, -4], 0.6),
    ];
    inputs.extend([1, 2, 3].iter().map(|&g| input(group, &[g], 1.0)));
    let fb = evaluate(p, &inputs, &prov()).unwrap();
    assert_eq!(nums(&fb, size), vec![vec![1, 3], vec![2, 1]]);
    assert_eq!(nums(&fb, total), vec![vec![1, 13], vec![2, -4]]);
    assert_eq!(nums(&fb, lightest), vec![vec![1, 3], vec![2, -4]]);
    assert_eq!(nums(&fb, heaviest), vec![vec![1, 5], vec![2, -4]]);
    // Count of nothing is 0 and still fires; min of nothing does not.
    assert_eq!(nums(&fb, empty), vec![vec![1, 3], vec![2, 1], vec![3, 0]]);
    assert_eq!(nums(&fb, nomin), vec![vec![1, 3], vec![2, -4]]);
    // The aggregate's premises are every fact aggregated; it contributes their
    // minimum confidence.
    let f = fact(&fb, total, &[1, 13]);
    assert!((fb.confidence(f) - 0.7).abs() < 1e-12);
    let d = fb.derivation(f).unwrap();
    assert_eq!(d.rule, rules[1]);
    assert_eq!(d.premises.len(), 1 + 6);
    assert!(d.premises.contains(&fact(&fb, weight, &[11, 3])));
    let e = fact(&fb, empty, &[3, 0]);
    assert_eq!(fb.confidence(e), 1.0);
    assert_eq!(
        fb.derivation(e).unwrap().premises,
        vec![fact(&fb, group, &[3])]
    );
}

#[test]
fn arithmetic_heads_and_failures() {
    // next(x, y) :- num(x), y = x + 1.
    // half(x, x / d) :- num(x), div(d).
    // big(x * x) :- num(x).
    let mut b = Builder::default();
    let numr = b.rel("num", &[N]);
    let div = b.rel("div", &[N]);
    let next = b.rel("next", &[N, N]);
    let half = b.rel("half", &[N, N]);
    let big = b.rel("big", &[N]);
    let mut v = Vars::default();
    let x = v.n("x");
    let y = v.id("y", N);
    b.rule(
        0,
        1.0,
        (next, vec![t(&x), Expr::Var(y)]),
        vec![
            pos(numr, vec![x.clone()]),
            assign(y, bin(ArithOp::Add, t(&x), num(1))),
        ],
        v,
    );
    let mut v = Vars::default();
    let (x, d) = (v.n("x"), v.n("d"));
    b.rule(
        0,
        1.0,
        (half, vec![t(&x), bin(ArithOp::Div, t(&x), t(&d))]),
        vec![pos(numr, vec![x.clone()]), pos(div, vec![d])],
        v,
    );
    let mut v = Vars::default();
    let x = v.n("x");
    b.rule(
        0,
        1.0,
        (big, vec![bin(ArithOp::Mul, t(&x), t(&x))]),
        vec![pos(numr, vec![x])],
        v,
    );
    let p = b.build(&[(&[next, half, big], false)]);
    let inputs = vec![
        input(numr, &[6], 1.0),
        input(numr, &[i64::MAX], 1.0),
        input(div, &[2], 1.0),
        input(div, &[0], 1.0),
    ];
    let fb = evaluate(p, &inputs, &EvalOptions::default()).unwrap();
    // i64::MAX + 1 overflows: no fact for it.
    assert_eq!(nums(&fb, next), vec![vec![6, 7]]);
    // Division by zero drops the binding.
    assert_eq!(
        nums(&fb, half),
        vec![vec![6, 3], vec![i64::MAX, i64::MAX / 2]]
    );
    assert_eq!(nums(&fb, big), vec![vec![36]]);
}

#[test]
fn symbols_compare_by_text() {
    // before(a, b) :- name(a), name(b), a < b.
    let mut b = Builder::default();
    let name = b.rel("name", &[S]);
    let before = b.rel("before", &[S, S]);
    let mut v = Vars::default();
    let (a, c) = (v.s("a"), v.s("b"));
    b.rule(
        0,
        1.0,
        (before, vec![t(&a), t(&c)]),
        vec![
            pos(name, vec![a.clone()]),
            pos(name, vec![c.clone()]),
            cmp(CmpOp::Lt, t(&a), t(&c)),
        ],
        v,
    );
    let p = b.build(&[(&[before], false)]);
    // Interned in the order zeta, alpha, mid: ids would order them wrongly.
    let inputs: Vec<InputFact> = ["zeta", "alpha", "mid"]
        .iter()
        .map(|s| InputFact {
            rel: name,
            args: vec![Value::Symbol((*s).into())],
            confidence: 1.0,
            provenance: Provenance::default(),
        })
        .collect();
    let fb = evaluate(p, &inputs, &EvalOptions::default()).unwrap();
    let sym = |s: &str| Value::Symbol(s.into());
    assert_eq!(
        fb.rows(before),
        vec![
            vec![sym("alpha"), sym("mid")],
            vec![sym("alpha"), sym("zeta")],
            vec![sym("mid"), sym("zeta")],
        ]
    );
}

#[test]
fn confidence_is_max_over_derivations_of_min_over_premises() {
    // r0 (0.9): c(x) :- a(x), b(x).     r1 (0.5): c(x) :- d(x).
    let mut b = Builder::default();
    let a = b.rel("a", &[N]);
    let bb = b.rel("b", &[N]);
    let d = b.rel("d", &[N]);
    let c = b.rel("c", &[N]);
    let mut v = Vars::default();
    let x = v.n("x");
    let r0 = b.rule(
        0,
        0.9,
        (c, vec![t(&x)]),
        vec![pos(a, vec![x.clone()]), pos(bb, vec![x])],
        v,
    );
    let mut v = Vars::default();
    let x = v.n("x");
    let r1 = b.rule(0, 0.5, (c, vec![t(&x)]), vec![pos(d, vec![x])], v);
    let p = b.build(&[(&[c], false)]);
    let inputs = vec![
        input(a, &[1], 0.8),
        input(bb, &[1], 0.6),
        input(d, &[1], 1.0),
        input(a, &[2], 0.4),
        input(bb, &[2], 1.0),
        input(d, &[2], 1.0),
    ];
    let fb = evaluate(p, &inputs, &prov()).unwrap();
    // c(1): max(0.9 × min(0.8, 0.6) = 0.54, 0.5 × 1.0) = 0.54 by r0.
    let c1 = fact(&fb, c, &[1]);
    assert!((fb.confidence(c1) - 0.54).abs() < 1e-12);
    let d1 = fb.derivation(c1).unwrap();
    assert_eq!(d1.rule, r0);
    assert_eq!(d1.premises, vec![fact(&fb, a, &[1]), fact(&fb, bb, &[1])]);
    // c(2): max(0.9 × 0.4 = 0.36, 0.5) = 0.5 by r1.
    let c2 = fact(&fb, c, &[2]);
    assert!((fb.confidence(c2) - 0.5).abs() < 1e-12);
    assert_eq!(fb.derivation(c2).unwrap().rule, r1);
    // Input facts have evidence and no derivation.
    let a1 = fact(&fb, a, &[1]);
    assert!(fb.derivation(a1).is_none());
    assert_eq!(fb.evidence(a1).unwrap().confidence, 0.8);
    assert!(fb.evidence(c1).is_none());
    // Without provenance the confidences are the same.
    let plain = evaluate(
        fb.program.clone(),
        &inputs,
        &EvalOptions::default().with_provenance(false),
    )
    .unwrap();
    assert_eq!(
        plain.confidence(plain.lookup(c, &[Value::Number(1)]).unwrap()),
        fb.confidence(c1)
    );
    assert!(plain.derivation(c1).is_none());
    assert!(!plain.provenance_enabled());
}

#[test]
fn better_derivation_repropagates_downstream() {
    // path over weighted-confidence edges: a later, longer but more confident route
    // must raise path(1, 4) and everything built on it.
    // r0 (0.9): path(x, y) :- edge(x, y).
    // r1 (0.9): path(x, z) :- path(x, y), edge(y, z).
    let (p, edge, path) = {
        let mut b = Builder::default();
        let edge = b.rel("edge", &[N, N]);
        let path = b.rel("path", &[N, N]);
        let mut v = Vars::default();
        let (x, y) = (v.n("x"), v.n("y"));
        b.rule(
            0,
            0.9,
            (path, vec![t(&x), t(&y)]),
            vec![pos(edge, vec![x, y])],
            v,
        );
        let mut v = Vars::default();
        let (x, y, z) = (v.n("x"), v.n("y"), v.n("z"));
        b.rule(
            0,
            0.9,
            (path, vec![t(&x), t(&z)]),
            vec![
                pos(path, vec![x.clone(), y.clone()]),
                pos(edge, vec![y, z.clone()]),
            ],
            v,
        );
        (b.build(&[(&[path], true)]), edge, path)
    };
    let inputs = vec![
        input(edge, &[1, 4], 0.1), // direct but weak
        input(edge, &[1, 2], 1.0),
        input(edge, &[2, 3], 1.0),
        input(edge, &[3, 4], 1.0),
        input(edge, &[4, 5], 1.0),
    ];
    let fb = evaluate(p, &inputs, &prov()).unwrap();
    let p14 = fact(&fb, path, &[1, 4]);
    // Found first at 0.9 × 0.1 = 0.09 in round 0, then via 1-2-3-4 at 0.9^3.
    assert!((fb.confidence(p14) - 0.9f64.powi(3)).abs() < 1e-12);
    assert_eq!(fb.derivation(p14).unwrap().height, 3);
    // Downstream path(1, 5) was derived from the weak path(1, 4) first and must
    // have been raised too: 0.9 × min(0.729, 1.0).
    let p15 = fact(&fb, path, &[1, 5]);
    assert!((fb.confidence(p15) - 0.9f64.powi(4)).abs() < 1e-12);
    let d = fb.derivation(p15).unwrap();
    assert_eq!(d.premises, vec![p14, fact(&fb, edge, &[4, 5])]);
    assert_eq!(d.height, 4);
    assert!(fb.stats().strata[0].improved > 0);
}

#[test]
fn best_derivation_prefers_lower_height_then_lower_rule() {
    // All confidences 1: q(x) has derivations of height 1 (r1, from a) and height 2
    // (r0, via p); the lower height wins although r0 comes first.
    // r0: q(x) :- p(x).   r1: q(x) :- a(x).   r2: p(x) :- a(x).
    // r3: s(x) :- a(x).   r4: s(x) :- b(x).   (equal height: r3 wins)
    let mut b = Builder::default();
    let a = b.rel("a", &[N]);
    let bb = b.rel("b", &[N]);
    let p = b.rel("p", &[N]);
    let q = b.rel("q", &[N]);
    let s = b.rel("s", &[N]);
    let _r0 = b.copy_rule(1, q, p);
    let r1 = b.copy_rule(1, q, a);
    let _r2 = b.copy_rule(0, p, a);
    let r3 = b.copy_rule(2, s, a);
    let _r4 = b.copy_rule(2, s, bb);
    let prog = b.build(&[(&[p], false), (&[q], false), (&[s], false)]);
    let inputs = vec![input(a, &[1], 1.0), input(bb, &[1], 1.0)];
    let fb = evaluate(prog, &inputs, &prov()).unwrap();
    let dq = fb.derivation(fact(&fb, q, &[1])).unwrap();
    assert_eq!((dq.rule, dq.height), (r1, 1));
    let ds = fb.derivation(fact(&fb, s, &[1])).unwrap();
    assert_eq!((ds.rule, ds.height), (r3, 1));
}

/// A recursive rule re-derives, at the height of the record another rule made
/// rounds before, a fact that rule made from a tall fact of a lower stratum: the
/// lower rule wins the tie. The join looks the fact up and may drop a derivation
/// without working out its height only where the record is no higher than the
/// binding; here it is one higher, as high as the derivation.
#[test]
fn a_later_derivation_of_equal_height_and_lower_rule_takes_the_record() {
    // h1(x) :- seed(x). ... h5(x) :- h4(x).       (h5(5) at height 5)
    // ra: r(y) :- r(x), step(x, y).               (r(5) at height 6, round 5)
    // rb: r(y) :- h5(y).                          (r(5) at height 6, round 0)
    //     r(x) :- start(x).
    let mut b = Builder::default();
    let seed = b.rel("seed", &[N]);
    let start = b.rel("start", &[N]);
    let step = b.rel("step", &[N, N]);
    let hs: Vec<RelId> = (1..=5).map(|i| b.rel(&format!("h{i}"), &[N])).collect();
    let r = b.rel("r", &[N]);
    for (i, &h) in hs.iter().enumerate() {
        b.copy_rule(i, h, if i == 0 { seed } else { hs[i - 1] });
    }
    let mut v = Vars::default();
    let (x, y) = (v.n("x"), v.n("y"));
    let ra = b.rule(
        5,
        1.0,
        (r, vec![t(&y)]),
        vec![pos(r, vec![x.clone()]), pos(step, vec![x, y])],
        v,
    );
    let rb = b.copy_rule(5, r, hs[4]);
    b.copy_rule(5, r, start);
    assert!(ra < rb);
    let strata: Vec<(&[RelId], bool)> = hs
        .iter()
        .map(|h| (std::slice::from_ref(h), false))
        .chain([(std::slice::from_ref(&r), true)])
        .collect();
    let prog = b.build(&strata);
    let mut inputs = vec![input(seed, &[5], 1.0), input(start, &[0], 1.0)];
    inputs.extend((0..5).map(|i| input(step, &[i, i + 1], 1.0)));
    for threads in [1, 2] {
        let fb = evaluate(Arc::clone(&prog), &inputs, &prov().with_threads(threads)).unwrap();
        let d = fb.derivation(fact(&fb, r, &[5])).unwrap();
        assert_eq!((d.rule, d.height), (ra, 6), "{threads} threads");
    }
}

/// `r0(x1, x0) :- e1(x0), r0(_, x1).` over `e1(1)` at 0.115 and `r0(0, 3)` first an
/// input at 0.115: `r0(3, 1)` is first found through `r0(0, 3)` at height 1, then
/// `r0(0, 3)` rises to 1.0 at height 2 (through `r0(1, 0)`), which would lift that
/// derivation to height 3; the equally confident one through `r0(1, 3)` (height 1)
/// has height 2 and must be the one recorded.
fn rising_premise_program() -> (Arc<Program>, RelId, RelId) {
    let mut b = Builder::default();
    let e1 = b.rel("e1", &[N]);
    let r0 = b.rel("r0", &[N, N]);
    let mut v = Vars::default();
    let (x0, x1) = (v.n("x0"), v.n("x1"));
    b.rule(
        0,
        1.0,
        (r0, vec![t(&x1), t(&x0)]),
        vec![pos(e1, vec![x0]), pos(r0, vec![Term::Wildcard, x1])],
        v,
    );
    (b.build(&[(&[r0], true)]), e1, r0)
}

#[test]
fn least_height_after_a_premise_rises_through_a_taller_derivation() {
    let (prog, e1, r0) = rising_premise_program();
    let inputs = vec![
        input(e1, &[0], 1.0),
        input(r0, &[1, 1], 1.0),
        input(e1, &[1], 0.115),
        input(r0, &[0, 3], 0.115),
        input(e1, &[3], 1.0),
    ];
    let check = |fb: &FactBase| {
        let risen = fact(fb, r0, &[0, 3]);
        assert_eq!(fb.confidence(risen), 1.0);
        let dr = fb.derivation(risen).unwrap();
        assert_eq!((dr.rule, dr.height), (0, 2));
        assert_eq!(dr.premises, vec![fact(fb, e1, &[3]), fact(fb, r0, &[1, 0])]);
        let f = fact(fb, r0, &[3, 1]);
        assert_eq!(fb.confidence(f), 0.115);
        let d = fb.derivation(f).unwrap();
        assert_eq!((d.rule, d.height), (0, 2));
        assert_eq!(d.premises, vec![fact(fb, e1, &[1]), fact(fb, r0, &[1, 3])]);
        // Every recorded height is 1 + the highest premise height.
        for rel in [e1, r0] {
            for row in fb.facts(rel) {
                let Some(d) = fb.derivation(row) else {
                    continue;
                };
                let h = d
                    .premises
                    .iter()
                    .map(|&p| fb.derivation(p).map_or(0, |x| x.height))
                    .max()
                    .unwrap_or(0);
                assert_eq!(d.height, h + 1, "{}", fb.fact_text(row));
            }
        }
    };
    // Handing facts out best first, and as they change (then the least-height pass
    // re-selects).
    for unordered in [false, true] {
        let fb = with_switch(&fixpoint::FORCE_UNORDERED, unordered, || {
            evaluate(prog.clone(), &inputs, &prov())
        });
        check(&fb.unwrap());
    }
    // The same through an extension: without `e1(0)`, `r0(0, 3)` stays an input at
    // 0.115 and `r0(3, 1)` is recorded at height 1 through it.
    let base = evaluate(prog, &inputs[1..], &prov()).unwrap();
    let d = base.derivation(fact(&base, r0, &[3, 1])).unwrap();
    assert_eq!(d.height, 1);
    assert_eq!(d.premises[1], fact(&base, r0, &[0, 3]));
    check(&base.extend(&inputs[..1], &prov()).unwrap());
}

/// The next value of a fixed-seed linear congruential generator at `x`: its high
/// 31 bits, and its state's (for tests that need random but repeatable inputs).
fn next_random(x: &mut u64) -> (u64, u64) {
    *x = x
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*x >> 33, *x)
}

#[test]
fn evaluation_is_deterministic() {
    let (p, edge, path) = tc_program(false);
    let mut inputs = Vec::new();
    let mut x: u64 = 7;
    for _ in 0..300 {
        let a = next_random(&mut x).0 % 60;
        let (c, state) = next_random(&mut x);
        let c = c % 60;
        let conf = ((state >> 20) % 100) as f64 / 100.0;
        inputs.push(input(edge, &[a as i64, c as i64], conf));
    }
    let one = evaluate(p.clone(), &inputs, &prov()).unwrap();
    let two = evaluate(p, &inputs, &prov()).unwrap();
    assert_eq!(one.len(path), two.len(path));
    assert!(one.len(path) > 100);
    for f in one.facts(path) {
        assert_eq!(one.args(f), two.args(f));
        assert_eq!(one.confidence(f).to_bits(), two.confidence(f).to_bits());
        assert_eq!(one.derivation(f), two.derivation(f));
    }
    assert_eq!(one.stats(), two.stats());
}

#[test]
fn budget_limits_stop_evaluation() {
    let (p, edge, _) = tc_program(false);
    let chain: Vec<InputFact> = (0..50).map(|i| input(edge, &[i, i + 1], 1.0)).collect();
    let few = EvalOptions {
        budget: Budget {
            max_facts: Some(100),
            ..Budget::default()
        },
        ..EvalOptions::default()
    };
    let err = evaluate(p.clone(), &chain, &few).err().unwrap();
    assert_eq!(err.code(), ErrorCode::BudgetExceeded);
    let short = EvalOptions {
        budget: Budget {
            max_rounds: Some(5),
            ..Budget::default()
        },
        ..EvalOptions::default()
    };
    assert_eq!(
        evaluate(p.clone(), &chain, &short).err().unwrap().code(),
        ErrorCode::BudgetExceeded
    );
    let late = EvalOptions {
        budget: Budget {
            deadline: Some(Instant::now()),
            ..Budget::default()
        },
        ..EvalOptions::default()
    };
    assert_eq!(
        evaluate(p.clone(), &chain, &late).err().unwrap().code(),
        ErrorCode::BudgetExceeded
    );
    // Enough budget: it completes.
    let enough = EvalOptions {
        budget: Budget {
            max_facts: Some(50 * 51 / 2),
            max_rounds: Some(60),
            ..Budget::unlimited()
        },
        ..EvalOptions::default()
    };
    assert!(evaluate(p, &chain, &enough).is_ok());
}

#[test]
fn progress_reports_every_round() {
    let (p, edge, _) = tc_program(false);
    let chain: Vec<InputFact> = (0..5).map(|i| input(edge, &[i, i + 1], 1.0)).collect();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options = EvalOptions {
        progress: Some(Arc::new(move |p: &Progress| {
            sink.lock().unwrap().push(p.clone());
        })),
        ..EvalOptions::default()
    };
    let fb = evaluate(p, &chain, &options).unwrap();
    let seen = seen.lock().unwrap();
    let rounds = fb.stats().strata[0].rounds as usize;
    assert_eq!(seen.len(), rounds);
    assert_eq!(seen.iter().map(|p| p.new_facts).sum::<usize>(), 15);
    assert_eq!(seen.last().unwrap().total_facts, 5 + 15);
    assert_eq!(seen[0].new_facts, 5);
}

#[test]
fn query_binds_variables() {
    let (p, edge, _) = tc_program(false);
    let chain: Vec<InputFact> = [(1, 2), (2, 3), (3, 3)]
        .iter()
        .map(|&(a, c)| input(edge, &[a, c], 0.5))
        .collect();
    let fb = evaluate(p, &chain, &prov()).unwrap();
    let goal = |args: Vec<GoalArg>| Goal {
        predicate: "path".into(),
        args,
        arg_spans: Vec::new(),
        span: Span::default(),
    };
    let var = |s: &str| GoalArg::Var(s.into());
    let ms = fb
        .query(&goal(vec![GoalArg::Const(Value::Number(1)), var("y")]))
        .unwrap();
    assert_eq!(ms.len(), 2);
    assert_eq!(ms[0].args, vec![Value::Number(1), Value::Number(2)]);
    assert_eq!(ms[0].bindings, vec![("y".to_string(), Value::Number(2))]);
    assert_eq!(ms[1].bindings, vec![("y".to_string(), Value::Number(3))]);
    assert_eq!(ms[0].confidence, 0.5);
    // Repeated names must agree.
    let loops = fb.query(&goal(vec![var("x"), var("x")])).unwrap();
    assert_eq!(loops.len(), 1);
    assert_eq!(loops[0].args, vec![Value::Number(3), Value::Number(3)]);
    let all = fb
        .query(&goal(vec![GoalArg::Wildcard, GoalArg::Wildcard]))
        .unwrap();
    assert_eq!(all.len(), fb.len(fb.relation_id("path").unwrap()));
    assert!(all[0].bindings.is_empty());
    // A symbol in a number column is a type error, as it is for a proof.
    let err = fb
        .query(&goal(vec![
            GoalArg::Const(Value::Symbol("x".into())),
            var("y"),
        ]))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::TypeMismatch);
    let unknown = Goal {
        predicate: "nope".into(),
        args: vec![],
        arg_spans: Vec::new(),
        span: Span::default(),
    };
    assert_eq!(
        fb.query(&unknown).err().unwrap().code(),
        ErrorCode::UnknownRelation
    );
    let arity = fb.query(&goal(vec![var("x")])).err().unwrap();
    assert_eq!(arity.code(), ErrorCode::ArityMismatch);
}

#[test]
fn bad_inputs_are_typed_errors() {
    let (p, edge, _) = tc_program(false);
    let wrong_arity = vec![input(edge, &[1], 1.0)];
    assert_eq!(
        evaluate(p.clone(), &wrong_arity, &prov())
            .err()
            .unwrap()
            .code(),
        ErrorCode::BadInput
    );
    let bad_conf = vec![input(edge, &[1, 2], f64::NAN)];
    assert_eq!(
        evaluate(p.clone(), &bad_conf, &prov())
            .err()
            .unwrap()
            .code(),
        ErrorCode::BadInput
    );
    let mut wrong_type = input(edge, &[1, 2], 1.0);
    wrong_type.args[0] = Value::Symbol("a".into());
    assert_eq!(
        evaluate(p.clone(), &[wrong_type], &prov())
            .err()
            .unwrap()
            .code(),
        ErrorCode::BadInput
    );
    let unknown = vec![input(99, &[1, 2], 1.0)];
    assert_eq!(
        evaluate(p, &unknown, &prov()).err().unwrap().code(),
        ErrorCode::BadInput
    );
}

#[test]
fn duplicate_inputs_keep_highest_confidence() {
    let (p, edge, _) = tc_program(false);
    let mut first = input(edge, &[1, 2], 0.5);
    first.provenance.edge_idx = Some(1);
    let mut second = input(edge, &[1, 2], 0.9);
    second.provenance.edge_idx = Some(2);
    let mut third = input(edge, &[1, 2], 0.9);
    third.provenance.edge_idx = Some(3);
    let fb = evaluate(p, &[first, second, third], &prov()).unwrap();
    let f = fact(&fb, edge, &[1, 2]);
    assert_eq!(fb.len(edge), 1);
    assert_eq!(fb.confidence(f), 0.9);
    assert_eq!(fb.evidence(f).unwrap().provenance.edge_idx, Some(2));
    assert_eq!(fb.stats().input_facts, 1);
}

#[test]
fn fact_base_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<FactBase>();
    assert_send_sync::<EvalOptions>();
}

/// Confidences of the closure computed by plain relaxation: conf(path(x, y)) is the
/// best over walks of `rule × min(edge, rest)` for the rules of [`tc_program`] with
/// rule confidence `rc`.
fn naive_confidences(
    edges: &[(i64, i64, f64)],
    rc: f64,
) -> std::collections::BTreeMap<(i64, i64), f64> {
    let mut edge: std::collections::BTreeMap<(i64, i64), f64> = std::collections::BTreeMap::new();
    for &(a, b, c) in edges {
        let e = edge.entry((a, b)).or_insert(c);
        *e = e.max(c);
    }
    let mut path: std::collections::BTreeMap<(i64, i64), f64> =
        edge.iter().map(|(&k, &c)| (k, rc * c)).collect();
    loop {
        let mut changed = false;
        for (&(x, y), &ce) in &edge {
            let ends: Vec<((i64, i64), f64)> = path
                .iter()
                .filter(|((a, _), _)| *a == y)
                .map(|(&k, &c)| (k, c))
                .collect();
            for ((_, z), cp) in ends {
                let c = rc * ce.min(cp);
                let slot = path.entry((x, z)).or_insert(0.0);
                if c > *slot {
                    *slot = c;
                    changed = true;
                }
            }
        }
        if !changed {
            return path;
        }
    }
}

fn tc_with_confidence(rc: f64) -> (Arc<Program>, RelId, RelId) {
    let mut b = Builder::default();
    let edge = b.rel("edge", &[N, N]);
    let path = b.rel("path", &[N, N]);
    let mut v = Vars::default();
    let (x, y) = (v.n("x"), v.n("y"));
    b.rule(
        0,
        rc,
        (path, vec![t(&x), t(&y)]),
        vec![pos(edge, vec![x, y])],
        v,
    );
    let mut v = Vars::default();
    let (x, y, z) = (v.n("x"), v.n("y"), v.n("z"));
    let body = vec![
        pos(edge, vec![x.clone(), y.clone()]),
        pos(path, vec![y, z.clone()]),
    ];
    b.rule(0, rc, (path, vec![t(&x), t(&z)]), body, v);
    (b.build(&[(&[path], true)]), edge, path)
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(64))]

    /// Facts and confidences of a recursive program equal a naive fixpoint's, with
    /// and without provenance, and every recorded derivation is consistent: its
    /// confidence is the fact's, its premises exist and are lower. Node numbers are
    /// shifted so that some (negative, or past 32 bits) make rows of two-word cells,
    /// from the start or partway.
    #[test]
    fn closure_confidences_match_naive_fixpoint(
        edges in proptest::collection::vec((0i64..8, 0i64..8, 1u32..=10), 0..24),
        rc in proptest::sample::select(vec![1.0, 0.9, 0.5]),
        shift in proptest::sample::select(vec![0i64, -4, 1 << 33, (1 << 32) - 5]),
    ) {
        let edges: Vec<(i64, i64, f64)> = edges
            .into_iter()
            .map(|(a, b, c)| (a + shift, b + shift, f64::from(c) / 10.0))
            .collect();
        let (p, edge, path) = tc_with_confidence(rc);
        let inputs: Vec<InputFact> = edges.iter().map(|&(a, b, c)| input(edge, &[a, b], c)).collect();
        let expect = naive_confidences(&edges, rc);
        for provenance in [false, true] {
            let options = EvalOptions { provenance, ..EvalOptions::default() };
            let fb = evaluate(p.clone(), &inputs, &options).unwrap();
            proptest::prop_assert_eq!(fb.len(path), expect.len());
            for (&(a, b), &c) in &expect {
                let f = fact(&fb, path, &[a, b]);
                proptest::prop_assert!((fb.confidence(f) - c).abs() < 1e-12);
                if let Some(d) = fb.derivation(f) {
                    let min = d.premises.iter().map(|&q| fb.confidence(q)).fold(1.0, f64::min);
                    proptest::prop_assert!((rc * min - fb.confidence(f)).abs() < 1e-12);
                    let mut highest = 0;
                    for q in &d.premises {
                        let h = fb.derivation(*q).map_or(0, |x| x.height);
                        proptest::prop_assert!(h < d.height);
                        highest = highest.max(h);
                    }
                    // Heights are settled: exactly one above the highest premise.
                    proptest::prop_assert_eq!(d.height, highest + 1);
                } else {
                    proptest::prop_assert!(!provenance);
                }
            }
        }
    }
}

/// Compile program text with the real front end and evaluate it over its own facts.
fn run_source(text: &str, provenance: bool) -> FactBase {
    let program = Arc::new(Program::from_source("test.dl", text).unwrap());
    let options = EvalOptions {
        provenance,
        ..EvalOptions::default()
    };
    evaluate(program, &[], &options).unwrap()
}

fn rows_of(fb: &FactBase, rel: &str) -> Vec<Vec<Value>> {
    fb.rows(fb.relation_id(rel).unwrap())
}

#[test]
fn source_program_closure_negation_and_arithmetic() {
    let fb = run_source(
        r#"
        .decl edge(a: number, b: number)
        .decl path(a: number, b: number)
        .decl far(a: number, b: number, d: number)
        .decl unreachable(a: number, b: number)
        .decl node(a: number)
        edge(1, 2). edge(2, 3). edge(3, 1). edge(4, 4).
        node(x) :- edge(x, _).
        node(y) :- edge(_, y).
        path(x, y) :- edge(x, y).
        path(x, z) :- path(x, y), edge(y, z).
        far(x, y, d) :- path(x, y), d = x * 10 + y, x != y.
        unreachable(x, y) :- node(x), node(y), !path(x, y).
        "#,
        true,
    );
    assert_eq!(rows_of(&fb, "path").len(), 10);
    let n = Value::Number;
    assert_eq!(
        rows_of(&fb, "unreachable"),
        vec![
            vec![n(1), n(4)],
            vec![n(2), n(4)],
            vec![n(3), n(4)],
            vec![n(4), n(1)],
            vec![n(4), n(2)],
            vec![n(4), n(3)],
        ]
    );
    assert!(rows_of(&fb, "far").contains(&vec![n(3), n(2), n(32)]));
    assert_eq!(rows_of(&fb, "far").len(), 6);
    let u = fb.relation_id("unreachable").unwrap();
    let f = fb.lookup(u, &[n(4), n(1)]).unwrap();
    let d = fb.derivation(f).unwrap();
    assert_eq!(
        d.absent,
        vec![(fb.relation_id("path").unwrap(), vec![n(4), n(1)])]
    );
    assert_eq!(d.premises.len(), 2);
}

#[test]
fn source_program_aggregates() {
    let fb = run_source(
        r#"
        .decl member(g: number, d: number)
        .decl size(g: number, n: number)
        .decl biggest(n: number)
        .decl total(s: number)
        member(1, 10). member(1, 11). member(2, 20).
        size(g, n) :- member(g, _), n = count : { member(g, _) }.
        biggest(m) :- m = max n : { size(_, n) }.
        total(s) :- s = sum d : { member(_, d) }.
        "#,
        true,
    );
    let n = Value::Number;
    assert_eq!(
        rows_of(&fb, "size"),
        vec![vec![n(1), n(2)], vec![n(2), n(1)]]
    );
    assert_eq!(rows_of(&fb, "biggest"), vec![vec![n(2)]]);
    assert_eq!(rows_of(&fb, "total"), vec![vec![n(41)]]);
    let b = fb.relation_id("biggest").unwrap();
    let d = fb.derivation(fb.lookup(b, &[n(2)]).unwrap()).unwrap();
    // Every aggregated size fact is a premise.
    assert_eq!(d.premises.len(), 2);
    assert_eq!(d.height, 2);
}

#[test]
fn drone_pack_confidences() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/rules/drones/drones.dl"
    ))
    .unwrap();
    let program = Arc::new(Program::from_source("drones.dl", &text).unwrap());
    let rel = |name: &str| program.relation_id(name).unwrap();
    let member = |g: i64, d: i64, c: f64| InputFact {
        rel: rel("member"),
        args: vec![Value::Number(g), Value::Number(d)],
        confidence: c,
        provenance: Provenance::default(),
    };
    let sighting = |d: i64, z: &str, c: f64| InputFact {
        rel: rel("sighting"),
        args: vec![Value::Number(d), Value::Symbol(z.into())],
        confidence: c,
        provenance: Provenance::default(),
    };
    let inputs = vec![
        member(42, 7, 1.0),
        member(42, 9, 0.95),
        member(17, 3, 1.0),
        sighting(7, "airport", 0.9),
        sighting(3, "harbor", 1.0),
    ];
    let fb = evaluate(program.clone(), &inputs, &prov()).unwrap();
    let n = Value::Number;
    let s = |z: &str| Value::Symbol(z.into());
    // coordinated_threat(42): 0.9 × min(1.0, 0.95); group 17 has one drone.
    let ct = fb.lookup(rel("coordinated_threat"), &[n(42)]).unwrap();
    assert!((fb.confidence(ct) - 0.9 * 0.95).abs() < 1e-12);
    assert!(fb.lookup(rel("coordinated_threat"), &[n(17)]).is_none());
    // threatens(42, airport): 0.8 × min(0.855, 1.0, 0.95 × 0.9).
    let th = fb.lookup(rel("threatens"), &[n(42), s("airport")]).unwrap();
    assert!((fb.confidence(th) - 0.8 * 0.855).abs() < 1e-12);
    let d = fb.derivation(th).unwrap();
    assert_eq!(d.height, 2);
    assert_eq!(d.premises.len(), 3);
    let intr = fb.lookup(rel("intrusion"), &[n(7), s("airport")]).unwrap();
    let di = fb.derivation(intr).unwrap();
    assert_eq!(di.absent, vec![(rel("cleared"), vec![n(7)])]);
    assert_eq!(
        rows_of(&fb, "group_size"),
        vec![vec![n(17), n(1)], vec![n(42), n(2)]]
    );
    assert_eq!(
        fb.evidence(fb.lookup(rel("restricted"), &[s("harbor")]).unwrap())
            .unwrap()
            .provenance
            .source,
        "program"
    );
}

const EXTEND_PROGRAM: &str = r#"
    .decl edge(a: number, b: number)
    .decl node(a: number)
    .decl path(a: number, b: number)
    .decl unreached(a: number, b: number)
    .decl outdeg(a: number, n: number)
    .decl hub(a: number)
    node(x) :- edge(x, _).
    node(y) :- edge(_, y).
    @confidence(0.9)
    path(x, y) :- edge(x, y).
    @confidence(0.9)
    path(x, z) :- path(x, y), edge(y, z).
    unreached(x, y) :- node(x), node(y), !path(x, y).
    outdeg(x, n) :- node(x), n = count : { edge(x, _) }.
    hub(x) :- outdeg(x, n), n >= 2.
"#;

/// A relation's name and its rows with their confidences' bits, sorted by values.
type RelationSnapshot = (String, Vec<(Vec<Value>, u64)>);

/// Every relation's rows with their confidences, by values.
fn snapshot(fb: &FactBase) -> Vec<RelationSnapshot> {
    (0..fb.program().relations.len() as RelId)
        .map(|rel| {
            let mut rows: Vec<(Vec<Value>, u64)> = fb
                .facts(rel)
                .map(|f| (fb.args(f), fb.confidence(f).to_bits()))
                .collect();
            rows.sort_by(|a, b| a.0.cmp(&b.0));
            (fb.program().relation(rel).name.clone(), rows)
        })
        .collect()
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(48))]

    /// Extending a fact base with new evidence gives what evaluating all the
    /// evidence at once gives, including facts a negation must now withdraw, and
    /// leaves the base as it was.
    #[test]
    fn extend_equals_evaluating_everything(
        base in proptest::collection::vec((0i64..6, 0i64..6, 1u32..=10), 0..12),
        extra in proptest::collection::vec((0i64..6, 0i64..6, 1u32..=10), 0..6),
        extra_paths in proptest::collection::vec((0i64..6, 0i64..6, 1u32..=10), 0..3),
    ) {
        let program = Arc::new(Program::from_source("extend.dl", EXTEND_PROGRAM).unwrap());
        let edge = program.relation_id("edge").unwrap();
        let to_inputs = |es: &[(i64, i64, u32)]| -> Vec<InputFact> {
            es.iter().map(|&(a, b, c)| input(edge, &[a, b], f64::from(c) / 10.0)).collect()
        };
        let path = program.relation_id("path").unwrap();
        let (base, mut extra) = (to_inputs(&base), to_inputs(&extra));
        // Evidence for a derived relation too.
        extra.extend(
            extra_paths.iter().map(|&(a, b, c)| input(path, &[a, b], f64::from(c) / 10.0)),
        );
        let all: Vec<InputFact> = base.iter().chain(&extra).cloned().collect();
        for provenance in [false, true] {
            let options = EvalOptions { provenance, ..EvalOptions::default() };
            let fb = evaluate(program.clone(), &base, &options).unwrap();
            let before = snapshot(&fb);
            let extended = fb.extend(&extra, &options).unwrap();
            let whole = evaluate(program.clone(), &all, &options).unwrap();
            proptest::prop_assert_eq!(snapshot(&extended), snapshot(&whole));
            proptest::prop_assert_eq!(snapshot(&fb), before);
            if provenance {
                for rel in 0..program.relations.len() as RelId {
                    for f in extended.facts(rel) {
                        // The preferred derivation's height and rule are unique.
                        let w = whole.lookup(rel, &extended.args(f)).unwrap();
                        let key = |fb: &FactBase, f| fb.derivation(f).map(|d| (d.height, d.rule));
                        proptest::prop_assert_eq!(key(&extended, f), key(&whole, w));
                        let Some(d) = extended.derivation(f) else { continue };
                        for q in &d.premises {
                            let h = extended.derivation(*q).map_or(0, |x| x.height);
                            proptest::prop_assert!(h < d.height);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn extend_raises_confidence_and_withdraws_negated_facts() {
    let program = Arc::new(Program::from_source("extend.dl", EXTEND_PROGRAM).unwrap());
    let rel = |n: &str| program.relation_id(n).unwrap();
    let base = vec![
        input(rel("edge"), &[1, 2], 0.5),
        input(rel("edge"), &[2, 3], 1.0),
    ];
    let fb = evaluate(program.clone(), &base, &prov()).unwrap();
    let n = Value::Number;
    assert!(fb.lookup(rel("unreached"), &[n(3), n(1)]).is_some());
    // New evidence: 3 → 1 closes a cycle, and a stronger 1 → 2.
    let extra = vec![
        input(rel("edge"), &[3, 1], 1.0),
        input(rel("edge"), &[1, 2], 1.0),
    ];
    let ext = fb.extend(&extra, &prov()).unwrap();
    assert!(ext.lookup(rel("unreached"), &[n(3), n(1)]).is_none());
    assert!(fb.lookup(rel("unreached"), &[n(3), n(1)]).is_some());
    let p13 = ext.lookup(rel("path"), &[n(1), n(3)]).unwrap();
    assert!((ext.confidence(p13) - 0.81).abs() < 1e-12);
    let old13 = fb.lookup(rel("path"), &[n(1), n(3)]).unwrap();
    assert!((fb.confidence(old13) - 0.9 * 0.45).abs() < 1e-12);
    let e12 = ext.lookup(rel("edge"), &[n(1), n(2)]).unwrap();
    assert_eq!(ext.evidence(e12).unwrap().confidence, 1.0);
    assert_eq!(ext.derivation(p13).unwrap().height, 2);
}

#[test]
fn source_program_edge_cases() {
    let fb = run_source(
        r#"
        .decl val(x: float)
        .decl ratio(x: float, r: float)
        .decl big(x: float)
        .decl u(x: unsigned)
        .decl down(x: unsigned, y: unsigned)
        .decl link(a: number, b: number)
        .decl lonely(a: number)
        .decl ok()
        .decl seed(a: number)
        .decl count_is(n: number)
        val(0.0). val(2.0). val(-1.5).
        u(0). u(3).
        link(1, 2).
        lonely(1). lonely(3).
        ratio(x, r) :- val(x), r = x / x.
        big(x) :- val(x), x > 1.0.
        down(x, y) :- u(x), y = x - 1.
        ok() :- val(x), x < 0.0.
        seed(7) :- 1 < 2.
        lonely_out(a) :- lonely(a), !link(a, _).
        count_is(n) :- ok(), n = count : { val(_) }, n = 3.
        "#,
        true,
    );
    let f = Value::Float;
    // 0.0 / 0.0 is NaN: that binding is dropped.
    assert_eq!(
        rows_of(&fb, "ratio"),
        vec![vec![f(-1.5), f(1.0)], vec![f(2.0), f(1.0)]]
    );
    assert_eq!(rows_of(&fb, "big"), vec![vec![f(2.0)]]);
    // Unsigned 0 - 1 underflows: dropped.
    assert_eq!(
        rows_of(&fb, "down"),
        vec![vec![Value::Unsigned(3), Value::Unsigned(2)]]
    );
    assert_eq!(rows_of(&fb, "ok"), vec![Vec::<Value>::new()]);
    assert_eq!(rows_of(&fb, "seed"), vec![vec![Value::Number(7)]]);
    assert_eq!(rows_of(&fb, "lonely_out"), vec![vec![Value::Number(3)]]);
    assert_eq!(rows_of(&fb, "count_is"), vec![vec![Value::Number(3)]]);
    let seed = fb
        .lookup(fb.relation_id("seed").unwrap(), &[Value::Number(7)])
        .unwrap();
    let d = fb.derivation(seed).unwrap();
    assert!(d.premises.is_empty());
    assert_eq!(d.height, 1);
}

/// Every fact of `rel` with its confidence and recorded derivation, in row order.
/// A fact's values, confidence and recorded derivation.
type Record = (Vec<Value>, f64, Option<Derivation>);

fn records(fb: &FactBase, rel: RelId) -> Vec<Record> {
    fb.facts(rel)
        .map(|f| (fb.args(f), fb.confidence(f), fb.derivation(f)))
        .collect()
}

proptest::proptest! {
    /// Dropping a derivation as it is emitted, or from the buffer before the merge,
    /// because its fact already holds a record at least as good, changes nothing:
    /// the rows, their order, confidences and recorded derivations are those of
    /// merging every derivation.
    #[test]
    fn dropping_derivations_early_changes_nothing(
        edges in proptest::collection::vec((0i64..9, 0i64..9, 0usize..3), 0..40),
        left in proptest::bool::ANY,
        provenance in proptest::bool::ANY,
        wide in proptest::bool::ANY,
    ) {
        let (p, edge, path) = tc_program(left);
        // Nodes past 32 bits make the relations wide: the filter then reads the
        // head's rows in general form, not through a narrow view.
        let node = |n: i64| if wide { n + (1 << 40) } else { n };
        let inputs: Vec<InputFact> = edges
            .iter()
            .map(|&(a, b, c)| input(edge, &[node(a), node(b)], [0.5, 0.7, 1.0][c]))
            .collect();
        let options = EvalOptions {
            provenance,
            ..EvalOptions::default()
        };
        let run = |probe: bool, filter: bool| {
            let fb = with_switch(&fixpoint::FORCE_PROBE, Some(probe), || {
                with_switch(&fixpoint::FORCE_FILTER, Some(filter), || {
                    evaluate(p.clone(), &inputs, &options).unwrap()
                })
            });
            records(&fb, path)
        };
        // (The derivation counts may differ: a buffer that fills more slowly is
        // merged later, and a join reads a premise's confidence as last merged.)
        let every = run(false, false);
        proptest::prop_assert_eq!(&run(true, false), &every);
        // Buffers filtered against the head relation before each merge, holding
        // derivation words, then premise lists.
        proptest::prop_assert_eq!(&run(false, true), &every);
        let lists = with_switch(&fixpoint::PREMISE_WORDS, false, || run(false, true));
        proptest::prop_assert_eq!(&lists, &every);
    }
}

proptest::proptest! {
    /// Marking relations by the heights of their rows, so that look-ups and merges
    /// that find a fact in a row marked low enough skip its record, changes
    /// nothing: the rows, their order, confidences and recorded derivations are
    /// those of reading every record found, with look-ups on or off, on one thread
    /// and on two, for a closure (confidences shared or not) and a points-to
    /// analysis (joins of three atoms into a grid).
    #[test]
    fn marking_rows_by_height_changes_nothing(
        edges in proptest::collection::vec((0i64..9, 0i64..9, 0usize..3), 0..40),
        facts in proptest::collection::vec((0usize..4, 0i64..8, 0i64..8), 0..40),
        weighted in proptest::bool::ANY,
        left in proptest::bool::ANY,
        provenance in proptest::bool::ANY,
        probe in proptest::option::of(proptest::bool::ANY),
        threads in 1usize..3,
    ) {
        let run = |program: &Arc<Program>, inputs: &[InputFact], options: &EvalOptions, rel: RelId, marks: bool| {
            let fb = with_switch(&fixpoint::FORCE_PROBE, probe, || {
                with_switch(&fixpoint::MARKS, marks, || {
                    evaluate(program.clone(), inputs, options).unwrap()
                })
            });
            records(&fb, rel)
        };
        let (p, edge, path) = tc_program(left);
        let inputs: Vec<InputFact> = edges
            .iter()
            .map(|&(a, b, c)| input(edge, &[a, b], if weighted { [0.5, 0.7, 1.0][c] } else { 1.0 }))
            .collect();
        let options = EvalOptions {
            provenance,
            threads,
            ..EvalOptions::default()
        };
        proptest::prop_assert_eq!(run(&p, &inputs, &options, path, true), run(&p, &inputs, &options, path, false));
        // A closure whose facts each rule derives at the same heights: which rule
        // a record keeps is decided by ties, some of them with facts marked.
        let p = Arc::new(Program::from_source("thrice.dl", TC_THRICE).unwrap());
        let (edge, path) = (p.relation_id("edge").unwrap(), p.relation_id("path").unwrap());
        let inputs: Vec<InputFact> = edges
            .iter()
            .map(|&(a, b, c)| input(edge, &[a, b], if weighted { [0.5, 0.7, 1.0][c] } else { 1.0 }))
            .collect();
        proptest::prop_assert_eq!(run(&p, &inputs, &options, path, true), run(&p, &inputs, &options, path, false));
        let (program, inputs, options) = points_to_run(&facts, provenance, threads);
        let points_to = program.relation_id("points_to").unwrap();
        proptest::prop_assert_eq!(
            run(&program, &inputs, &options, points_to, true),
            run(&program, &inputs, &options, points_to, false)
        );
    }
}

/// A closure derived by three recursive rules, two of them the same: every fact
/// they derive, each derives at the same height.
const TC_THRICE: &str = "
    .decl edge(a: number, b: number)
    .decl path(a: number, b: number)
    path(x, y) :- edge(x, y).
    path(x, z) :- path(x, y), edge(y, z).
    path(x, z) :- edge(x, y), path(y, z).
    path(x, z) :- path(x, y), edge(y, z).
";

/// A points-to analysis: two of its rules join three atoms, and their middle step
/// often finds nothing for the row before it.
const POINTS_TO: &str = "
    .decl address_of(p: number, o: number)
    .decl assign(a: number, b: number)
    .decl load(a: number, b: number)
    .decl store(a: number, b: number)
    .decl points_to(p: number, o: number)
    points_to(a, o) :- address_of(a, o).
    points_to(a, o) :- assign(a, b), points_to(b, o).
    points_to(a, o) :- load(a, b), points_to(b, p), points_to(p, o).
    points_to(p, o) :- store(a, b), points_to(a, p), points_to(b, o).
";

/// [`POINTS_TO`] computed naively from its four input relations.
fn points_to_naively(facts: &[(usize, i64, i64)]) -> Vec<Vec<i64>> {
    use std::collections::BTreeSet;
    let of = |r: usize| -> BTreeSet<(i64, i64)> {
        facts
            .iter()
            .filter(|f| f.0 == r)
            .map(|f| (f.1, f.2))
            .collect()
    };
    let (mut pt, assign, load, store) = (of(0), of(1), of(2), of(3));
    loop {
        let mut next = pt.clone();
        for &(a, b) in &assign {
            next.extend(pt.iter().filter(|x| x.0 == b).map(|x| (a, x.1)));
        }
        for &(a, b) in &load {
            for &(_, p) in pt.iter().filter(|x| x.0 == b) {
                next.extend(pt.iter().filter(|x| x.0 == p).map(|x| (a, x.1)));
            }
        }
        for &(a, b) in &store {
            for &(_, p) in pt.iter().filter(|x| x.0 == a) {
                next.extend(pt.iter().filter(|x| x.0 == b).map(|x| (p, x.1)));
            }
        }
        if next == pt {
            return pt.into_iter().map(|(a, b)| vec![a, b]).collect();
        }
        pt = next;
    }
}

/// [`POINTS_TO`], its input facts `facts` (relation `0..4`: address_of, assign,
/// load, store; two numbers) and the options to evaluate it with.
fn points_to_run(
    facts: &[(usize, i64, i64)],
    provenance: bool,
    threads: usize,
) -> (Arc<Program>, Vec<InputFact>, EvalOptions) {
    let program = Arc::new(Program::from_source("pt.dl", POINTS_TO).unwrap());
    let names = ["address_of", "assign", "load", "store"];
    let inputs: Vec<InputFact> = facts
        .iter()
        .map(|&(r, a, b)| input(program.relation_id(names[r]).unwrap(), &[a, b], 1.0))
        .collect();
    let options = EvalOptions {
        provenance,
        threads,
        ..EvalOptions::default()
    };
    (program, inputs, options)
}

proptest::proptest! {
    /// A scan that makes the next step's look-up as it binds each of its rows,
    /// passing over the rows it finds nothing for and handing the rows found on
    /// (`Run::peeked`), derives what a naive fixpoint derives, its joins paused
    /// every few derivations (and resumed in the middle of a row's rows), on one
    /// thread and on two.
    #[test]
    fn joins_of_three_atoms_match_a_naive_fixpoint(
        facts in proptest::collection::vec((0usize..4, 0i64..8, 0i64..8), 0..32),
        provenance in proptest::bool::ANY,
        threads in 1usize..3,
    ) {
        let (program, inputs, options) = points_to_run(&facts, provenance, threads);
        let fb = evaluate(program.clone(), &inputs, &options).unwrap();
        let points_to = fb.relation_id("points_to").unwrap();
        proptest::prop_assert_eq!(nums(&fb, points_to), points_to_naively(&facts));
    }
}

proptest::proptest! {
    /// Looking each binding's candidates up before the narrow loop, as joins of
    /// three atoms do where nearly every look-up drops its derivation, changes
    /// nothing: with look-ups forced on (and so taken that way wherever a piece can)
    /// the rows, their order, confidences and recorded derivations are those of
    /// merging every derivation, with the joins paused every few derivations, on
    /// one thread and on two.
    #[test]
    fn looking_candidates_up_first_changes_nothing(
        facts in proptest::collection::vec((0usize..4, 0i64..8, 0i64..8), 0..40),
        provenance in proptest::bool::ANY,
        threads in 1usize..3,
    ) {
        let (program, inputs, options) = points_to_run(&facts, provenance, threads);
        let points_to = program.relation_id("points_to").unwrap();
        let run = |probe: Option<bool>| {
            let fb = with_switch(&fixpoint::FORCE_PROBE, probe, || {
                evaluate(program.clone(), &inputs, &options).unwrap()
            });
            records(&fb, points_to)
        };
        let every = run(Some(false));
        proptest::prop_assert_eq!(&run(Some(true)), &every);
        proptest::prop_assert_eq!(&run(None), &every);
    }
}

/// Records hold rule ids past what a packed record word holds: a program whose
/// recursive rule comes after 4,100 others evaluates as the program without them,
/// rule ids aside, though its records widen partway (the base rule's fit).
#[test]
fn rule_ids_past_a_packed_record_widen_it() {
    let tc = "
        .decl edge(a: number, b: number)
        .decl path(a: number, b: number)
        .decl filler(a: number)
        path(x, y) :- edge(x, y).
    ";
    let fillers: String = (0..4100)
        .map(|i| format!("filler(x) :- edge(x, _), x = {i}.\n"))
        .collect();
    let step = "path(x, z) :- path(x, y), edge(y, z).\n";
    let edges: Vec<(i64, i64)> = (0..40).map(|i| (i, (i * 7 + 3) % 41)).collect();
    let run = |text: &str| {
        let program = Arc::new(Program::from_source("wide.dl", text).unwrap());
        let edge = program.relation_id("edge").unwrap();
        let inputs: Vec<InputFact> = edges
            .iter()
            .map(|&(a, b)| input(edge, &[a, b], 1.0))
            .collect();
        let fb = evaluate(program.clone(), &inputs, &prov()).unwrap();
        let path = fb.relation_id("path").unwrap();
        records(&fb, path)
    };
    let plain = run(&format!("{tc}{step}"));
    let wide = run(&format!("{tc}{fillers}{step}"));
    assert!(plain.len() > 40);
    let rules: std::collections::BTreeSet<u32> = wide
        .iter()
        .filter_map(|r| r.2.as_ref().map(|d| d.rule))
        .collect();
    assert_eq!(rules, [0, 4101].into_iter().collect());
    let renumbered: Vec<Record> = wide
        .into_iter()
        .map(|(args, conf, d)| {
            let d = d.map(|d| Derivation {
                rule: if d.rule == 4101 { 1 } else { d.rule },
                ..d
            });
            (args, conf, d)
        })
        .collect();
    assert_eq!(renumbered, plain);
}

/// Every relation's facts, in row order, with confidences and derivations.
fn all_records(fb: &FactBase) -> Vec<Vec<Record>> {
    (0..fb.program().relations.len())
        .map(|r| records(fb, r as RelId))
        .collect()
}

/// A program with recursion through two relations, a negation, an aggregate and a
/// functor that makes symbols (whose rules run on the calling thread).
const THREADED: &str = r#"
    .decl edge(a: number, b: number)
    .input edge
    .decl path(a: number, b: number)
    .decl sg(a: number, b: number)
    .decl out_degree(a: number, n: number)
    .decl lonely(a: number)
    .decl node(a: number)
    .decl label(a: number, s: symbol)
    node(x) :- edge(x, _).
    node(y) :- edge(_, y).
    path(x, y) :- edge(x, y).
    path(x, z) :- path(x, y), path(y, z).
    sg(x, y) :- edge(p, x), edge(p, y), x != y.
    sg(x, y) :- edge(a, x), sg(a, b), edge(b, y).
    out_degree(x, n) :- node(x), n = count : { path(x, _) }.
    lonely(x) :- node(x), !sg(x, _).
    label(x, cat("n", to_string(n))) :- out_degree(x, n).
"#;

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(48))]

    /// Evaluating on several threads gives what one thread gives: every relation's
    /// facts in the same row order, with the same confidences and derivations.
    #[test]
    fn every_thread_count_gives_identical_results(
        edges in proptest::collection::vec((0i64..12, 0i64..12, 0usize..3), 0..60),
        provenance in proptest::bool::ANY,
        weighted in proptest::bool::ANY,
    ) {
        let program = Arc::new(Program::from_source("threads.dl", THREADED).unwrap());
        let edge = program.relation_id("edge").unwrap();
        let (tc, tc_edge, _) = tc_with_confidence(0.9);
        let conf = |c: usize| if weighted { [0.5, 0.7, 1.0][c] } else { 1.0 };
        let inputs: Vec<InputFact> =
            edges.iter().map(|&(a, b, c)| input(edge, &[a, b], conf(c))).collect();
        let tc_inputs: Vec<InputFact> =
            edges.iter().map(|&(a, b, c)| input(tc_edge, &[a, b], conf(c))).collect();
        let run = |program: &Arc<Program>, inputs: &[InputFact], threads: usize| {
            let options = EvalOptions { provenance, ..EvalOptions::default() }
                .with_threads(threads);
            all_records(&evaluate(program.clone(), inputs, &options).unwrap())
        };
        for (program, inputs) in [(&program, &inputs), (&tc, &tc_inputs)] {
            let one = run(program, inputs, 1);
            proptest::prop_assert_eq!(&run(program, inputs, 2), &one);
            proptest::prop_assert_eq!(&run(program, inputs, 3), &one);
        }
    }
}

/// A closure whose head grows past the size where look-ups into it miss the cache
/// (`PROBE_ROWS`): on two threads, its rule is trusted to look up when a quarter of
/// its derivations would be dropped (see `Engine::shares_looks`), and its waves are
/// shared; what it derives, in which rows, with which records, stays what one thread
/// derives.
#[test]
fn a_closure_past_the_cache_gives_on_two_threads_what_it_gives_on_one() {
    let (tc, edge, path) = tc_with_confidence(1.0);
    // A random graph of 360 nodes and 800 edges.
    let mut x = 7;
    let mut node = || (next_random(&mut x).0 % 360) as i64;
    let inputs: Vec<InputFact> = (0..800)
        .map(|_| input(edge, &[node(), node()], 1.0))
        .collect();
    for provenance in [true, false] {
        let run = |threads: usize| {
            let options = EvalOptions {
                provenance,
                ..EvalOptions::default()
            }
            .with_threads(threads);
            evaluate(tc.clone(), &inputs, &options).unwrap()
        };
        let one = run(1);
        let paths = one.len(path);
        assert!(
            paths > super::fixpoint::PROBE_ROWS as usize,
            "{paths} paths: the head must outgrow the cache"
        );
        assert_eq!(
            all_records(&run(2)),
            all_records(&one),
            "provenance {provenance}"
        );
    }
}

/// Evaluations running at once, from several threads and from inside another thread
/// pool, each on 2 or 3 threads: one at a time runs on a thread of the workers' pool
/// (see `Engine::run`), the others on their own; each gives what one thread gives.
#[test]
fn evaluations_at_once_give_what_one_thread_gives() {
    let program = Arc::new(Program::from_source("threads.dl", THREADED).unwrap());
    let edge = program.relation_id("edge").unwrap();
    let inputs: Vec<InputFact> = (0..40i64)
        .flat_map(|a| [(a, (a * 7 + 3) % 40), (a, (a * 11 + 5) % 40)])
        .map(|(a, b)| input(edge, &[a, b], 1.0))
        .collect();
    let run = |threads: usize| {
        let options = EvalOptions::default().with_threads(threads);
        all_records(&evaluate(program.clone(), &inputs, &options).unwrap())
    };
    let run = &run;
    let one = run(1);
    assert!(one.iter().map(Vec::len).sum::<usize>() > 500);
    let foreign = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    std::thread::scope(|s| {
        let runs: Vec<_> = (0..4).map(|i| s.spawn(move || run(2 + i % 2))).collect();
        let inside = s.spawn(|| foreign.install(|| run(2)));
        for r in runs {
            assert_eq!(r.join().unwrap(), one);
        }
        assert_eq!(inside.join().unwrap(), one);
    });
}

/// Linear recursion through two relations, with rule confidences below 1 and cycles
/// (so facts improve after being read, and the least-height pass runs).
const LINEAR: &str = r#"
    .decl edge(a: number, b: number)
    .input edge
    .decl red(a: number, b: number)
    .decl blue(a: number, b: number)
    red(x, y) :- edge(x, y).
    @confidence(0.9)
    blue(x, z) :- red(x, y), edge(y, z).
    red(x, z) :- blue(x, y), edge(y, z).
    @confidence(0.8)
    red(x, y) :- blue(y, x).
    blue(x, x) :- edge(x, _), edge(_, x).
"#;

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(64))]

    /// Once the least-height pass is bound to re-select a stratum's records, the
    /// rounds stop recording premises: that changes nothing, on any number of
    /// threads: the rows, their order, confidences and recorded derivations are
    /// those of recording them all along. (Not tracking heights either would: the
    /// facts that improve only in height decide where joins pause, and so in which
    /// order new facts are merged, even in a linear stratum.)
    #[test]
    fn rounds_that_stop_tracking_change_nothing(
        edges in proptest::collection::vec((0i64..10, 0i64..10, 0usize..4), 0..50),
        threads in 1usize..3,
    ) {
        let linear = Arc::new(Program::from_source("linear.dl", LINEAR).unwrap());
        let threaded = Arc::new(Program::from_source("threads.dl", THREADED).unwrap());
        let (tc, tc_edge, _) = tc_with_confidence(0.9);
        for (program, edge) in [
            (&linear, linear.relation_id("edge").unwrap()),
            (&threaded, threaded.relation_id("edge").unwrap()),
            (&tc, tc_edge),
        ] {
            let inputs: Vec<InputFact> = edges
                .iter()
                .map(|&(a, b, c)| input(edge, &[a, b], [0.5, 0.6, 0.8, 1.0][c]))
                .collect();
            // Facts handed out as they change (not best first), so that the pass
            // runs whenever a fact read rises.
            let run = |track: bool| {
                let options = prov().with_threads(threads);
                let fb = with_switch(&fixpoint::FORCE_TRACK, track, || {
                    with_switch(&fixpoint::FORCE_UNORDERED, true, || {
                        evaluate(program.clone(), &inputs, &options).unwrap()
                    })
                });
                all_records(&fb)
            };
            proptest::prop_assert_eq!(run(false), run(true));
        }
    }
}

/// Rules whose last atom makes each derivation straight from its rows (a tail), in
/// each form a tail takes: columns of the row and slots bound before it in the
/// head, a constant in the head, a variable repeated in the atom, a head of outer
/// slots only, comparisons after the atom; and rules that have none (an exact
/// look-up last, arithmetic in the head).
const TAILS: &str = r#"
    .decl edge(a: number, b: number)
    .input edge
    .decl path(a: number, b: number)
    .decl looped(a: number)
    .decl tagged(a: number, t: number, b: number)
    .decl mutual(a: number, b: number)
    .decl walk2(a: number, b: number)
    .decl fork(a: number, b: number)
    .decl next(a: number, b: number)
    .decl far(a: number, b: number)
    .decl spread(a: number, b: number)
    .decl cross(a: number, b: number)
    path(x, y) :- edge(x, y).
    path(x, z) :- path(x, y), edge(y, z).
    far(x, y) :- edge(x, y).
    @confidence(0.9)
    far(x, z) :- far(x, y), path(y, z).
    looped(x) :- edge(x, _), path(x, x).
    tagged(x, 7, z) :- edge(x, y), path(y, z).
    mutual(y, x) :- edge(x, y), edge(y, x).
    walk2(x, z) :- edge(x, y), edge(y, z), edge(z, _).
    fork(y, z) :- edge(x, y), edge(x, z), y != z.
    .decl low(a: number, b: number)
    low(x, y) :- path(x, y), x < y, y != 3.
    next(x, y + 1) :- path(x, y).
    spread(x, y) :- edge(x, y).
    spread(y, z) :- spread(x, y), edge(y, w), mutual(x, z).
    spread(y, z) :- spread(x, y), edge(y, w), spread(x, z), w < z.
    cross(w, z) :- path(x, y), edge(y, w), path(x, z), w < z.
    .decl sgen(a: number, b: number)
    sgen(x, y) :- edge(p, x), edge(p, y), x != y.
    sgen(x, y) :- edge(xp, x), sgen(xp, yp), edge(yp, y).
    .decl hop(a: number, b: number)
    hop(x, y) :- edge(x, y).
    hop(y, z) :- hop(x, y), edge(y, w), hop(x, z).
"#;

/// Every relation's records and the derivation count of [`TAILS`] over these edges
/// (`(from, to, confidence choice)`; confidences from three values when `weighted`,
/// numbers past 32 bits when `wide`).
fn tails_records(
    edges: &[(i64, i64, usize)],
    weighted: bool,
    wide: bool,
    provenance: bool,
    threads: usize,
) -> (Vec<Vec<Record>>, u64) {
    let program = Arc::new(Program::from_source("tails.dl", TAILS).unwrap());
    let edge = program.relation_id("edge").unwrap();
    let shift = if wide { 1i64 << 40 } else { 0 };
    let inputs: Vec<InputFact> = edges
        .iter()
        .map(|&(a, b, c)| {
            let conf = if weighted { [0.5, 0.7, 1.0][c] } else { 1.0 };
            input(edge, &[a + shift, b + shift], conf)
        })
        .collect();
    let options = EvalOptions {
        provenance,
        ..EvalOptions::default()
    }
    .with_threads(threads);
    let fb = evaluate(program, &inputs, &options).unwrap();
    let derivations: u64 = fb.stats().strata.iter().map(|s| s.derivations).sum();
    (all_records(&fb), derivations)
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(64))]

    /// Handing a plan's last scan to the sink a batch of rows at a time changes
    /// nothing: every relation's facts in the same row order, with the same
    /// confidences and derivations, and the same derivation count, as handing
    /// over one binding at a time; in the rounds and, when confidences differ, in
    /// the least-height pass. With numbers past 32 bits (rows that are not narrow)
    /// too, on any number of threads. (`spread` and `cross` have last scans whose
    /// key the step before does not bind: looked up once for all of its rows.)
    #[test]
    fn batched_tails_change_nothing(
        edges in proptest::collection::vec((0i64..10, 0i64..10, 0usize..3), 0..50),
        weighted in proptest::bool::ANY,
        wide in proptest::bool::ANY,
        provenance in proptest::bool::ANY,
        threads in 1usize..3,
    ) {
        let run = |batch: bool| {
            with_switch(&fixpoint::BATCH_TAILS, batch, || {
                tails_records(&edges, weighted, wide, provenance, threads)
            })
        };
        let (batched, one) = (run(true), run(false));
        proptest::prop_assert_eq!(&batched, &one);
        if !edges.is_empty() {
            proptest::prop_assert!(batched.1 > 0);
        }
    }
    /// Taking the rows of the scan before a tail with their candidates in one loop
    /// (`Sink::pairs`) changes nothing: the same facts in the same row order, with
    /// the same confidences and derivations, and the same derivation count, as
    /// visiting those rows one at a time; with pauses inside a row's candidates
    /// (buffers of five derivations in tests), with numbers past 32 bits and
    /// weighted rows (which the loop leaves to the rows one at a time), on any
    /// number of threads.
    #[test]
    fn paired_scans_change_nothing(
        edges in proptest::collection::vec((0i64..10, 0i64..10, 0usize..3), 0..50),
        weighted in proptest::bool::ANY,
        wide in proptest::bool::ANY,
        provenance in proptest::bool::ANY,
        threads in 1usize..3,
    ) {
        let run = |pairs: bool| {
            with_switch(&fixpoint::PAIRED_SCANS, pairs, || {
                tails_records(&edges, weighted, wide, provenance, threads)
            })
        };
        proptest::prop_assert_eq!(run(true), run(false));
    }

    /// Taking the rows of the scan two before a tail in groups, each with the rows
    /// the pair scan's look-up found for it (`Sink::groups`), changes nothing: the
    /// same facts in the same row order, with the same confidences and
    /// derivations, and the same derivation count, as running the next steps for
    /// each row; with pauses inside a group (buffers of five derivations in tests,
    /// where a run resumes at the group's row, its pair scan's row and the tail's
    /// candidate), tails whose key the pair scan binds or does not (`sgen`, `hop`,
    /// `walk2`), numbers past 32 bits and weighted rows (left to the rows one at a
    /// time), on any number of threads. Nor does the loop that takes a narrow
    /// relation's rows in groups through dense look-ups (`Run::dense_groups`)
    /// change anything against the general loop of a scan.
    #[test]
    fn grouped_scans_change_nothing(
        edges in proptest::collection::vec((0i64..10, 0i64..10, 0usize..3), 0..50),
        weighted in proptest::bool::ANY,
        wide in proptest::bool::ANY,
        provenance in proptest::bool::ANY,
        threads in 1usize..3,
    ) {
        let run = |groups: bool, dense: bool| {
            with_switch(&fixpoint::GROUPED_SCANS, groups, || {
                with_switch(&fixpoint::DENSE_GROUPS, dense, || {
                    tails_records(&edges, weighted, wide, provenance, threads)
                })
            })
        };
        let grouped = run(true, true);
        proptest::prop_assert_eq!(&grouped, &run(true, false));
        proptest::prop_assert_eq!(&grouped, &run(false, true));
    }

    /// Buffering a derivation's premises as its head relation's derivation word
    /// (one to three premises) changes nothing: the same facts in the same row order,
    /// with the same confidences and derivations, as buffering premise lists; in a
    /// whole evaluation and in a layer over a base (whose rows' records change in
    /// patches), with improving confidences, on any number of threads.
    #[test]
    fn premise_words_change_nothing(
        edges in proptest::collection::vec((0i64..10, 0i64..10, 0usize..3), 0..50),
        more in proptest::collection::vec((0i64..10, 0i64..10, 0usize..3), 0..12),
        weighted in proptest::bool::ANY,
        threads in 1usize..3,
    ) {
        let program = Arc::new(Program::from_source("tails.dl", TAILS).unwrap());
        let run = |words: bool| {
            let (whole, layered, _) = with_switch(&fixpoint::PREMISE_WORDS, words, || {
                whole_and_layered(&program, (&edges, &more), weighted, threads)
            });
            (whole, layered)
        };
        let (words, lists) = (run(true), run(false));
        proptest::prop_assert_eq!(&words, &lists);
        if !edges.is_empty() {
            proptest::prop_assert!(words.0.iter().any(|r| r.iter().any(|f| f.2.is_some())));
        }
    }
}

/// A fact's arguments and confidence, and its recorded derivation's rule and height.
type Ranked = (Vec<Value>, f64, Option<(u32, u32)>);

/// Every relation's facts in value order, each with its confidence and its recorded
/// derivation's rule and height (not its premises).
fn ranks(fb: &FactBase) -> Vec<Vec<Ranked>> {
    (0..fb.program().relations.len() as RelId)
        .map(|rel| {
            fb.sorted_facts(rel)
                .into_iter()
                .map(|f| {
                    let d = fb.derivation(f).map(|d| (d.rule, d.height));
                    (fb.args(f), fb.confidence(f), d)
                })
                .collect()
        })
        .collect()
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(64))]

    /// Handing a weighted stratum's changed facts out best first records, for every
    /// fact, a derivation as good as the least-height pass re-selects after rounds
    /// that hand facts out as they change: the same facts, confidences, heights and
    /// rules (the premises may be another of equally good ones), on any number of
    /// threads. The pass does not run for a linear stratum, and each recorded
    /// derivation is one the rule makes: its confidence is the rule's times its
    /// premises' least, its height one more than their greatest. In linear and
    /// non-linear recursion (which is not ordered), through two relations, with
    /// negation, aggregates and tails.
    #[test]
    fn handing_facts_out_best_first_records_the_best(
        edges in proptest::collection::vec((0i64..10, 0i64..10, 0usize..4), 0..50),
        provenance in proptest::bool::ANY,
        threads in 1usize..3,
    ) {
        let linear = Arc::new(Program::from_source("linear.dl", LINEAR).unwrap());
        let threaded = Arc::new(Program::from_source("threads.dl", THREADED).unwrap());
        let tails = Arc::new(Program::from_source("tails.dl", TAILS).unwrap());
        let (tc, tc_edge, _) = tc_with_confidence(0.9);
        for (program, edge) in [
            (&linear, linear.relation_id("edge").unwrap()),
            (&threaded, threaded.relation_id("edge").unwrap()),
            (&tails, tails.relation_id("edge").unwrap()),
            (&tc, tc_edge),
        ] {
            let inputs: Vec<InputFact> = edges
                .iter()
                .map(|&(a, b, c)| input(edge, &[a, b], [0.5, 0.6, 0.8, 1.0][c]))
                .collect();
            let run = |unordered: bool| {
                let options = EvalOptions { provenance, ..EvalOptions::default() }
                    .with_threads(threads);
                fixpoint::PASSES.with(|p| p.set(0));
                fixpoint::STOPPED_ORDER.with(|n| n.set(0));
                let fb = with_switch(&fixpoint::FORCE_UNORDERED, unordered, || {
                    evaluate(program.clone(), &inputs, &options).unwrap()
                });
                let stopped = fixpoint::STOPPED_ORDER.with(std::cell::Cell::get);
                (fb, fixpoint::PASSES.with(std::cell::Cell::get), stopped)
            };
            let (ordered, passes, stopped) = run(false);
            let (unordered, _, _) = run(true);
            proptest::prop_assert_eq!(ranks(&ordered), ranks(&unordered));
            // The pass still runs for non-linear strata, which are not ordered, and
            // once a stratum stops ordering (a long chain of distinct confidences).
            if !Arc::ptr_eq(program, &threaded) && !Arc::ptr_eq(program, &tails) && stopped == 0
            {
                proptest::prop_assert_eq!(passes, 0);
            }
            for rel in 0..program.relations.len() as RelId {
                for f in ordered.facts(rel) {
                    let Some(d) = ordered.derivation(f) else {
                        proptest::prop_assert!(!provenance || ordered.evidence(f).is_some());
                        continue;
                    };
                    let rule = program.rule(d.rule);
                    if rule.body.iter().any(|l| matches!(l, Literal::Aggregate { .. })) {
                        continue;
                    }
                    let least = d.premises.iter().map(|&q| ordered.confidence(q)).fold(1.0, f64::min);
                    proptest::prop_assert_eq!(ordered.confidence(f), rule.confidence * least);
                    let highest = d
                        .premises
                        .iter()
                        .map(|&q| ordered.derivation(q).map_or(0, |x| x.height))
                        .max()
                        .unwrap_or(0);
                    proptest::prop_assert_eq!(d.height, highest + 1);
                }
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(64))]

    /// Handed out best first, each fact of a linear weighted stratum is joined once,
    /// at its final record: the stratum makes exactly the derivations that the same
    /// graph makes at one confidence throughout, where semi-naive rounds put each
    /// fact in one delta. (A fact queued again at a better rank leaves an entry at
    /// its old rank behind, which must not hand it out a second time.) Five edge
    /// confidences and paths of at most eleven edges make at most 60 ranks, fewer
    /// rounds than the order's trial: the order never stops here.
    #[test]
    fn handing_facts_out_best_first_joins_each_fact_once(
        edges in proptest::collection::vec((0i64..12, 0i64..12, 0usize..5), 0..60),
        provenance in proptest::bool::ANY,
        threads in 1usize..3,
    ) {
        let derivations = |rule_conf: f64, confs: [f64; 5]| {
            let (tc, edge, _) = tc_with_confidence(rule_conf);
            let inputs: Vec<InputFact> = edges
                .iter()
                .map(|&(a, b, c)| input(edge, &[a, b], confs[c]))
                .collect();
            let options = EvalOptions { provenance, ..EvalOptions::default() }
                .with_threads(threads);
            fixpoint::STOPPED_ORDER.with(|n| n.set(0));
            let fb = evaluate(tc, &inputs, &options).unwrap();
            let stopped = fixpoint::STOPPED_ORDER.with(std::cell::Cell::get);
            let made: u64 = fb.stats().strata.iter().map(|s| s.derivations).sum();
            (made, stopped)
        };
        let (weighted, stopped) = derivations(0.9, [0.5, 0.6, 0.7, 0.8, 0.95]);
        let (plain, _) = derivations(1.0, [1.0; 5]);
        proptest::prop_assert_eq!(stopped, 0);
        proptest::prop_assert_eq!(weighted, plain);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(64))]

    /// An ordered stratum drops a derivation of a fact it handed out on that alone,
    /// without the fact's record: every record and proof comes out as when each
    /// such derivation is compared with the record, from the same derivations.
    #[test]
    fn dropping_derivations_of_facts_handed_out_changes_nothing(
        edges in proptest::collection::vec((0i64..12, 0i64..12, 0usize..5), 0..80),
        provenance in proptest::bool::ANY,
        threads in 1usize..3,
    ) {
        let (tc, edge, _) = tc_with_confidence(0.9);
        let inputs: Vec<InputFact> = edges
            .iter()
            .map(|&(a, b, c)| input(edge, &[a, b], [0.5, 0.6, 0.7, 0.8, 0.95][c]))
            .collect();
        let run = |bits: bool| {
            let options = EvalOptions { provenance, ..EvalOptions::default() }
                .with_threads(threads);
            fixpoint::HANDED_DROPS.with(|c| c.set(0));
            let fb = with_switch(&fixpoint::HANDED_BITS, bits, || {
                evaluate(tc.clone(), &inputs, &options).unwrap()
            });
            let made: u64 = fb.stats().strata.iter().map(|s| s.derivations).sum();
            (fb, made, fixpoint::HANDED_DROPS.with(std::cell::Cell::get))
        };
        let (with, made, _) = run(true);
        let (without, made_without, none) = run(false);
        // (On two threads, a thread that waits for pieces may run other tests'
        // meanwhile, and count their drops.)
        if threads == 1 {
            proptest::prop_assert_eq!(none, 0);
        }
        proptest::prop_assert_eq!(made, made_without);
        proptest::prop_assert_eq!(ranks(&with), ranks(&without));
        proptest::prop_assert_eq!(premises(&with), premises(&without));
    }
}

/// Each fact's premises, by their cells, relation by relation in sorted order.
fn premises(fb: &FactBase) -> Vec<Vec<Option<Vec<Vec<Value>>>>> {
    (0..fb.program().relations.len() as RelId)
        .map(|rel| {
            fb.sorted_facts(rel)
                .into_iter()
                .map(|f| {
                    fb.derivation(f)
                        .map(|d| d.premises.iter().map(|&q| fb.args(q)).collect())
                })
                .collect()
        })
        .collect()
}

/// On a dense weighted graph most derivations of facts stored are of facts
/// handed out, and the merges drop them on that.
#[test]
fn a_weighted_closure_drops_derivations_of_facts_handed_out() {
    let (tc, edge, path) = tc_with_confidence(0.9);
    let inputs: Vec<InputFact> = (0..12i64)
        .flat_map(|a| (0..12i64).filter(move |&b| b != a).map(move |b| (a, b)))
        .map(|(a, b)| input(edge, &[a, b], 0.5 + 0.04 * ((a * 7 + b * 3) % 12) as f64))
        .collect();
    for provenance in [false, true] {
        // (One thread: pieces' look-ups count on the thread they run on.)
        let options = EvalOptions {
            provenance,
            ..EvalOptions::default()
        }
        .with_threads(1);
        fixpoint::HANDED_DROPS.with(|c| c.set(0));
        let fb = evaluate(tc.clone(), &inputs, &options).unwrap();
        let drops = fixpoint::HANDED_DROPS.with(std::cell::Cell::get);
        assert_eq!(fb.facts(path).count(), 144);
        assert!(drops > 0, "no derivation dropped on its fact handed out");
    }
}

/// A chain whose confidences all differ hands its facts out one a round, deriving
/// one fact each: the stratum stops ordering after its trial and goes on handing
/// facts out as they change. With shortcuts of lower confidence, facts rise after
/// they are read (before the order stopped and after), and every record is still a
/// best one, as the rounds that never order it and the least-height pass find.
#[test]
fn a_chain_of_distinct_confidences_stops_ordering_and_stays_exact() {
    let (tc, edge, _) = tc_with_confidence(0.9);
    let mut inputs: Vec<InputFact> = (0..40)
        .map(|i| input(edge, &[i, i + 1], 0.99 - 0.01 * i as f64))
        .collect();
    inputs.extend((0..36).step_by(3).map(|i| input(edge, &[i, i + 4], 0.3)));
    let run = |unordered: bool| {
        fixpoint::STOPPED_ORDER.with(|n| n.set(0));
        fixpoint::PASSES.with(|p| p.set(0));
        let fb = with_switch(&fixpoint::FORCE_UNORDERED, unordered, || {
            evaluate(tc.clone(), &inputs, &prov()).unwrap()
        });
        let stopped = fixpoint::STOPPED_ORDER.with(std::cell::Cell::get);
        (fb, stopped, fixpoint::PASSES.with(std::cell::Cell::get))
    };
    let (ordered, stopped, _) = run(false);
    let (unordered, never, passes) = run(true);
    assert_eq!((stopped, never), (1, 0));
    assert_eq!(
        passes, 1,
        "the shortcuts make facts rise after they are read"
    );
    assert_eq!(ranks(&ordered), ranks(&unordered));
    for f in ordered.facts(ordered.relation_id("path").unwrap()) {
        let d = ordered.derivation(f).unwrap();
        let highest = d
            .premises
            .iter()
            .map(|&q| ordered.derivation(q).map_or(0, |x| x.height))
            .max()
            .unwrap_or(0);
        assert_eq!(d.height, highest + 1, "{}", ordered.fact_text(f));
    }
}

/// A stratum that hands its facts out best first stops doing so at half the round
/// limit, so that the limit fails only programs that would fail it anyway: a
/// weighted closure whose ranks all differ evaluates within a limit below the
/// rounds that ordering it all along takes, to the same records.
#[test]
fn handing_facts_out_best_first_stays_within_the_round_limit() {
    let (tc, edge, path) = tc_with_confidence(0.9);
    // A dense graph: each round derives plenty, so only the limit stops the order.
    let mut inputs = Vec::new();
    for a in 0..12i64 {
        for b in 0..12i64 {
            if (a * 7 + b * 3) % 4 != 0 {
                let conf = 0.2 + 0.005 * (a * 12 + b) as f64;
                inputs.push(input(edge, &[a, b], conf));
            }
        }
    }
    let all_along = evaluate(tc.clone(), &inputs, &prov()).unwrap();
    let rounds = all_along
        .stats()
        .strata
        .iter()
        .map(|s| s.rounds)
        .max()
        .unwrap();
    assert!(rounds > 60, "{rounds} rounds: every rank should take one");
    let limit = 40;
    let budget = Budget {
        max_rounds: Some(limit),
        ..Budget::default()
    };
    let limited = evaluate(tc.clone(), &inputs, &prov().with_budget(budget)).unwrap();
    let taken = limited
        .stats()
        .strata
        .iter()
        .map(|s| s.rounds)
        .max()
        .unwrap();
    assert!(taken <= limit, "{taken} rounds");
    assert_eq!(ranks(&limited), ranks(&all_along));
    assert_eq!(limited.len(path), all_along.len(path));
}

/// `parent` facts of two binary trees of nodes `2..nodes` (node `n`'s parent
/// `n / 2`; the second tree's numbers 100 on).
fn two_trees(parent: RelId, nodes: i64) -> Vec<InputFact> {
    (0..2)
        .flat_map(|tree| (2..nodes).map(move |child| (tree * 100, child)))
        .map(|(base, child)| input(parent, &[base + child, base + child / 2], 1.0))
        .collect()
}

/// Runs `f` with the thread's test switch `switch` at `value`, then puts back
/// what it held, even when `f` panics: a failing proptest case is shrunk on the
/// same thread, and each run must find the switches as it expects them.
fn with_switch<T: Copy + 'static, R>(
    switch: &'static std::thread::LocalKey<std::cell::Cell<T>>,
    value: T,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore<T: Copy + 'static>(&'static std::thread::LocalKey<std::cell::Cell<T>>, T);
    impl<T: Copy + 'static> Drop for Restore<T> {
        fn drop(&mut self) {
            self.0.with(|s| s.set(self.1));
        }
    }
    let _restore = Restore(switch, switch.with(|s| s.replace(value)));
    f()
}

/// A switch set for a run is put back after it, and after one that panics.
#[test]
fn a_switch_is_put_back_even_after_a_panic() {
    let get = || fixpoint::MARKS.with(std::cell::Cell::get);
    assert!(get());
    assert!(!with_switch(&fixpoint::MARKS, false, get));
    assert!(get());
    let unwound = std::panic::catch_unwind(|| {
        with_switch(&fixpoint::MARKS, false, || panic!("a failing case"))
    });
    assert!(unwound.is_err());
    assert!(get());
}

/// Every relation's records of `program` over `inputs` with the test switch
/// `flag` set to `on` (and put back after), the calls `counter` counted meanwhile,
/// and the fact base.
fn switched(
    flag: &'static std::thread::LocalKey<std::cell::Cell<bool>>,
    counter: &'static std::thread::LocalKey<std::cell::Cell<u64>>,
    on: bool,
    program: &Arc<Program>,
    inputs: &[InputFact],
) -> (Vec<Vec<Record>>, u64, FactBase) {
    let before = counter.with(std::cell::Cell::get);
    let fb = with_switch(flag, on, || {
        evaluate(program.clone(), inputs, &prov()).unwrap()
    });
    let calls = counter.with(std::cell::Cell::get) - before;
    (all_records(&fb), calls, fb)
}

/// Same generation's recursive rule, whose tail's key (`yp`) is bound two steps
/// before it, takes the paired loop too: the tail's candidates looked up once for
/// every row of the scan before it. (Its other rule has a comparison after its
/// tail, which pairs do not take: every pair call here is the recursive rule's.)
#[test]
fn a_tail_keyed_before_the_scan_before_it_pairs_with_one_look_up() {
    let program = Arc::new(
        Program::from_source(
            "sg.dl",
            ".decl parent(c: number, p: number)\n.input parent\n\
             .decl sg(a: number, b: number)\n\
             sg(x, y) :- parent(x, p), parent(y, p), x != y.\n\
             sg(x, y) :- parent(x, xp), sg(xp, yp), parent(y, yp).\n",
        )
        .unwrap(),
    );
    let parent = program.relation_id("parent").unwrap();
    // Two trees of depth 3, each node with two children: the cousins of the same
    // generation are the pairs of distinct nodes at one depth of one tree.
    let inputs = two_trees(parent, 16);
    let run = |pairs| {
        switched(
            &fixpoint::PAIRED_SCANS,
            &fixpoint::PAIR_CALLS,
            pairs,
            &program,
            &inputs,
        )
    };
    let (paired, calls, fb) = run(true);
    let (unpaired, none, _) = run(false);
    assert!(calls > 0);
    assert_eq!(none, 0);
    assert_eq!(paired, unpaired);
    let sg = program.relation_id("sg").unwrap();
    // Per tree: depths of 2, 4 and 8 nodes, each node a cousin of every other.
    let per_tree: usize = [2, 4, 8].iter().map(|n| n * (n - 1)).sum();
    assert_eq!(fb.len(sg), 2 * per_tree);
}

/// A tail with comparisons after it (siblings: `x != y`; an order on two
/// columns and on a constant) takes the narrow loop for the rows that pass
/// (`Emitter::passing_rows`), with the same facts and records as handing the
/// sink one binding at a time; buffers of a handful of derivations in tests make
/// its runs pause among the rows and resume after the one they paused at.
#[test]
fn tails_with_comparisons_take_the_narrow_loop_for_the_rows_that_pass() {
    let program = Arc::new(
        Program::from_source(
            "sib.dl",
            ".decl parent(c: number, p: number)\n.input parent\n\
             .decl sib(a: number, b: number)\n\
             sib(x, y) :- parent(x, p), parent(y, p), x != y.\n\
             .decl older(a: number, b: number)\n\
             older(x, y) :- parent(x, p), parent(y, p), x < y, y != 12.\n",
        )
        .unwrap(),
    );
    let parent = program.relation_id("parent").unwrap();
    // Three families of four, five and six children.
    let inputs: Vec<InputFact> = [(0, 4), (10, 5), (20, 6)]
        .iter()
        .flat_map(|&(first, n)| (first..first + n).map(move |c| (c, 100 + first)))
        .map(|(c, p)| input(parent, &[c, p], 1.0))
        .collect();
    let run = |batch| {
        switched(
            &fixpoint::BATCH_TAILS,
            &fixpoint::PASSING_CALLS,
            batch,
            &program,
            &inputs,
        )
    };
    let (records, calls, batched) = run(true);
    let (one, none, _) = run(false);
    assert!(calls > 0);
    assert_eq!(none, 0);
    assert_eq!(records, one);
    let (sib, older) = (
        program.relation_id("sib").unwrap(),
        program.relation_id("older").unwrap(),
    );
    assert_eq!(batched.len(sib), 4 * 3 + 5 * 4 + 6 * 5);
    // Pairs in order, but the second family's two ending at child 12.
    assert_eq!(batched.len(older), 6 + (10 - 2) + 15);
}

/// Same generation's recursive rule (a scan of the delta, then two look-ups by its
/// columns) hands the delta's rows to the sink in groups, and a join of three
/// inputs whose tail the middle scan keys does too; neither does when tests turn
/// groups off (so that `grouped_scans_change_nothing` compares two paths), and
/// the facts and records are the same either way; so are they whether the
/// groups' rows take the loop for dense look-ups or the general one.
#[test]
fn joins_of_three_take_their_first_rows_in_groups() {
    let program = Arc::new(
        Program::from_source(
            "groups.dl",
            ".decl parent(c: number, p: number)\n.input parent\n\
             .decl sg(a: number, b: number)\n\
             sg(x, y) :- parent(x, p), parent(y, p), x != y.\n\
             sg(x, y) :- parent(x, xp), sg(xp, yp), parent(y, yp).\n\
             .decl up3(a: number, b: number)\n\
             up3(x, w) :- parent(x, y), parent(y, z), parent(z, w).\n",
        )
        .unwrap(),
    );
    let parent = program.relation_id("parent").unwrap();
    // Two trees of depth 4, each node with two children.
    let inputs = two_trees(parent, 32);
    let run = |groups| {
        switched(
            &fixpoint::GROUPED_SCANS,
            &fixpoint::GROUP_CALLS,
            groups,
            &program,
            &inputs,
        )
    };
    let (grouped, calls, fb) = run(true);
    let (ungrouped, none, _) = run(false);
    assert!(calls > 0);
    assert_eq!(none, 0);
    assert_eq!(grouped, ungrouped);
    // Their rows take the loop for dense look-ups (the people are small
    // numbers, and both rules read `parent` by one column), and the general
    // loop when tests turn that off, with the same facts and records.
    let dense = |on| {
        switched(
            &fixpoint::DENSE_GROUPS,
            &fixpoint::DENSE_CALLS,
            on,
            &program,
            &inputs,
        )
    };
    let (dense_on, dense_calls, _) = dense(true);
    let (dense_off, no_dense, _) = dense(false);
    assert!(dense_calls > 0);
    assert_eq!(no_dense, 0);
    assert_eq!(dense_on, grouped);
    assert_eq!(dense_off, grouped);
    let (sg, up3) = (
        program.relation_id("sg").unwrap(),
        program.relation_id("up3").unwrap(),
    );
    // Per tree: depths of 2, 4, 8 and 16 nodes, each node a cousin of every other;
    // the nodes of depth 3 and 4 have a great-grandparent.
    let per_tree: usize = [2, 4, 8, 16].iter().map(|n| n * (n - 1)).sum();
    assert_eq!(fb.len(sg), 2 * per_tree);
    assert_eq!(fb.len(up3), 2 * (8 + 16));
}

/// The closure's recursive rule, the scan of its delta before a tail that its
/// rows' second column looks up, takes the paired loop on narrow rows, unweighted
/// or weighted, and does not when tests turn it off (so that
/// `paired_scans_change_nothing` compares two paths).
#[test]
fn a_closure_takes_its_delta_rows_with_their_candidates() {
    let program = Arc::new(Program::from_source("tails.dl", TAILS).unwrap());
    let edge = program.relation_id("edge").unwrap();
    let calls = |pairs: bool, weighted: bool| {
        let inputs: Vec<InputFact> = (0..20)
            .map(|i| {
                let conf = if weighted && i % 2 == 0 { 0.5 } else { 1.0 };
                input(edge, &[i, i + 1], conf)
            })
            .collect();
        let before = fixpoint::PAIR_CALLS.with(std::cell::Cell::get);
        let options = EvalOptions::default().with_threads(1);
        let fb = with_switch(&fixpoint::PAIRED_SCANS, pairs, || {
            evaluate(program.clone(), &inputs, &options).unwrap()
        });
        let path = fb.program().relation_id("path").unwrap();
        assert_eq!(fb.len(path), 20 * 21 / 2);
        fixpoint::PAIR_CALLS.with(std::cell::Cell::get) - before
    };
    for weighted in [false, true] {
        assert!(calls(true, weighted) > 0, "weighted: {weighted}");
        assert_eq!(calls(false, weighted), 0, "weighted: {weighted}");
    }
}

/// Least edge counts between nodes (breadth first from each source): a path
/// fact's least height.
fn hops(edges: &[(i64, i64)]) -> std::collections::BTreeMap<(i64, i64), u32> {
    let mut out = std::collections::BTreeMap::new();
    let sources: std::collections::BTreeSet<i64> = edges.iter().map(|e| e.0).collect();
    for &s in &sources {
        let mut frontier = vec![s];
        let mut depth = 0;
        while !frontier.is_empty() {
            depth += 1;
            let mut next = Vec::new();
            for &a in &frontier {
                for &(_, b) in edges.iter().filter(|e| e.0 == a) {
                    if let std::collections::btree_map::Entry::Vacant(v) = out.entry((s, b)) {
                        v.insert(depth);
                        next.push(b);
                    }
                }
            }
            frontier = next;
        }
    }
    out
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(64))]

    /// Every path fact's recorded height is its least edge count, whichever side
    /// of the recursive rule reads the input relation (whose rows a join reads as
    /// height 0 without looking), on one thread or two.
    #[test]
    fn closure_heights_are_least_edge_counts(
        edges in proptest::collection::vec((0i64..14, 0i64..14), 0..70),
        left in proptest::bool::ANY,
        threads in 1usize..3,
    ) {
        let (p, edge, path) = tc_program(left);
        let inputs: Vec<InputFact> = edges.iter().map(|&(a, b)| input(edge, &[a, b], 1.0)).collect();
        let fb = evaluate(p, &inputs, &prov().with_threads(threads)).unwrap();
        let heights: std::collections::BTreeMap<(i64, i64), u32> = fb
            .facts(path)
            .map(|f| {
                let n = |v: &Value| match v {
                    Value::Number(i) => *i,
                    other => panic!("not a number: {other}"),
                };
                let args = fb.args(f);
                ((n(&args[0]), n(&args[1])), fb.derivation(f).unwrap().height)
            })
            .collect();
        proptest::prop_assert_eq!(heights, hops(&edges));
    }
}

/// An edge `(from, to, confidence choice)`.
type Edge = (i64, i64, usize);

/// Every relation's records after evaluating `program` over the edges `lists.0`
/// (`(from, to, confidence choice)`; confidences from three values when
/// `weighted`), and after a layer over that base adds the edges `lists.1`; and how
/// many derived facts of the base record fewer premises than they have.
fn whole_and_layered(
    program: &Arc<Program>,
    lists: (&[Edge], &[Edge]),
    weighted: bool,
    threads: usize,
) -> (Vec<Vec<Record>>, Vec<Vec<Record>>, usize) {
    let edge = program.relation_id("edge").unwrap();
    let facts = |list: &[Edge]| -> Vec<InputFact> {
        list.iter()
            .map(|&(a, b, c)| {
                let conf = if weighted { [0.5, 0.7, 1.0][c] } else { 1.0 };
                input(edge, &[a, b], conf)
            })
            .collect()
    };
    let options = EvalOptions::default().with_threads(threads);
    let fb = evaluate(program.clone(), &facts(lists.0), &options).unwrap();
    let whole = all_records(&fb);
    let fewer = (0..program.relations.len() as RelId)
        .flat_map(|rel| fb.facts(rel))
        .filter(|&f| {
            let stored = fb.rels[f.rel as usize]
                .premises_of(f.row)
                .map(|p| p.to_vec());
            let read = fb.derivation(f).map(|d| d.premises.len());
            matches!((stored, read), (Some(s), Some(n)) if s.len() < n)
        })
        .count();
    let shared = crate::eval::SharedBase::new(fb).unwrap();
    let layer = shared.overlay(&facts(lists.1), &options).unwrap();
    (whole, all_records(layer.facts()), fewer)
}

/// Rules whose premises follow from their heads and from one another: constants of
/// both kinds, a wildcard, a head expression, a negation, a rule that records no
/// premise and one that must record all.
const RESTORED: &str = r#"
    .decl edge(a: number, b: number)
    .input edge
    .decl color(a: number, c: symbol)
    .decl path(a: number, b: number)
    .decl red(a: number, b: number)
    .decl sg(a: number, b: number)
    .decl triple(a: number, b: number, c: number)
    .decl shifted(a: number, b: number)
    .decl blocked(a: number)
    .decl total(a: number, n: number)
    color(x, "red") :- edge(x, _), x < 5.
    color(x, "blue") :- edge(_, x), x >= 3.
    path(x, y) :- edge(x, y).
    path(x, z) :- edge(x, y), path(y, z).
    blocked(x) :- edge(x, x).
    red(x, y) :- path(x, y), color(y, "red"), color(x, "red").
    red(x, z) :- red(x, y), red(y, z), !blocked(y).
    sg(x, y) :- edge(p, x), edge(p, y), x != y.
    sg(x, y) :- edge(a, x), sg(a, b), edge(b, y).
    triple(x, y, z) :- edge(x, y), edge(y, z), path(x, z).
    shifted(x, y + 1) :- edge(x, y), edge(y, 2).
    total(x, n) :- edge(x, _), n = count : { path(x, _) }.
"#;

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(48))]

    /// Recording only the premises the others do not follow from changes nothing:
    /// every derivation read back is the one recorded with all its premises, fact
    /// for fact, in a whole evaluation and in a layer over a base, with improving
    /// confidences (whose records the least-height pass writes), on any number of
    /// threads; and the rules that can record fewer do.
    #[test]
    fn recording_fewer_premises_changes_nothing(
        edges in proptest::collection::vec((0i64..8, 0i64..8, 0usize..3), 0..40),
        more in proptest::collection::vec((0i64..8, 0i64..8, 0usize..3), 0..10),
        weighted in proptest::bool::ANY,
        threads in 1usize..3,
    ) {
        let program = Arc::new(Program::from_source("restored.dl", RESTORED).unwrap());
        let run = |elide: bool| {
            with_switch(&restore::ELIDE, elide, || {
                whole_and_layered(&program, (&edges, &more), weighted, threads)
            })
        };
        let (fewer, all) = (run(true), run(false));
        proptest::prop_assert_eq!(&fewer.0, &all.0);
        proptest::prop_assert_eq!(&fewer.1, &all.1);
        proptest::prop_assert_eq!(all.2, 0);
        if !edges.is_empty() {
            proptest::prop_assert!(fewer.2 > 0);
        }
    }
}

/// The premises each rule of [`RESTORED`] records: a smallest set the others follow
/// from, the first in body order among those of its size.
#[test]
fn rules_record_a_smallest_set_of_premises() {
    let program = Program::from_source("restored.dl", RESTORED).unwrap();
    let kept: Vec<(String, Option<Vec<bool>>)> = program
        .rules()
        .iter()
        .map(|r| (r.name.clone(), restore::kept(r, &program)))
        .collect();
    let want = |name: &str| kept.iter().find(|(n, _)| n == name).unwrap().1.clone();
    let (t, f) = (true, false);
    // `edge(x, _)`: a wildcard is never found by cells.
    assert_eq!(want("rule:color#1"), None);
    assert_eq!(want("rule:path#1"), Some(vec![f]));
    assert_eq!(want("rule:path#2"), Some(vec![t, f]));
    assert_eq!(want("rule:red#1"), Some(vec![f, f, f]));
    assert_eq!(want("rule:red#2"), Some(vec![t, f]));
    assert_eq!(want("rule:sg#1"), Some(vec![t, f]));
    // Keeping `sg(a, b)` binds both pars' unknowns: one premise, not two.
    assert_eq!(want("rule:sg#2"), Some(vec![f, t, f]));
    assert_eq!(want("rule:triple"), Some(vec![f, f, f]));
    // `y + 1` gives `y` back to no look-up: the first edge is kept.
    assert_eq!(want("rule:shifted"), Some(vec![t, f]));
    // An aggregate's rule records everything.
    assert_eq!(want("rule:total"), None);
}

/// A rule of more premises than are tried set by set keeps some greedily: a walk
/// of 20 edges records every other edge and finds the rest by their cells, and its
/// derivations read back as those recorded with every premise.
#[test]
fn long_rules_record_fewer_premises_greedily() {
    let steps = 20;
    let body: Vec<String> = (0..steps)
        .map(|i| format!("edge(x{i}, x{})", i + 1))
        .collect();
    let text = format!(
        ".decl edge(a: number, b: number)\n.decl walk(a: number, b: number)\nwalk(x0, x{steps}) :- {}.\n",
        body.join(", ")
    );
    let program = Arc::new(Program::from_source("walk.dl", &text).unwrap());
    let keep = restore::kept(&program.rules()[0], &program).unwrap();
    assert_eq!(keep.iter().filter(|&&k| k).count(), steps / 2);
    let edge = program.relation_id("edge").unwrap();
    // Two chains of 41 nodes.
    let inputs: Vec<InputFact> = (0..40i64)
        .flat_map(|i| [(i, i + 1), (i + 100, i + 101)])
        .map(|(a, b)| input(edge, &[a, b], 1.0))
        .collect();
    let run = |elide: bool| {
        let fb = with_switch(&restore::ELIDE, elide, || {
            evaluate(program.clone(), &inputs, &prov()).unwrap()
        });
        all_records(&fb)
    };
    let fewer = run(true);
    assert_eq!(fewer[1].len(), 42);
    assert_eq!(fewer, run(false));
}
