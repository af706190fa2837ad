//! Parser tests through the public API: the tree built for each construct, goals, and
//! the property that printing a tree and parsing it back gives the same tree.

use prooflog::diag::{SourceMap, Span};
use prooflog::syntax::ast::*;
use prooflog::syntax::{GoalArg, parse_goal, parse_module};
use prooflog::value::Value;
use prooflog::{ErrorCode, Result};
use proptest::prelude::*;

fn parse(text: &str) -> Result<Module> {
    let mut sources = SourceMap::new();
    let id = sources.add("t.dl", text);
    parse_module(&sources, id)
}

fn clause(text: &str) -> Clause {
    match parse(text).unwrap().items.remove(0) {
        Item::Clause(c) => c,
        other => panic!("not a clause: {other:?}"),
    }
}

#[test]
fn rule_with_every_literal_kind() {
    let c = clause(
        "h(x, y + 1) :- a(x, z), !c(x), not d(z), x != z, w = z * (2 - x), n = count : { e(x, _) }.",
    );
    assert_eq!(c.heads.len(), 1);
    assert_eq!(c.body.len(), 1);
    let body = &c.body[0];
    assert_eq!(body.len(), 6);
    assert!(matches!(body[0], Literal::Atom(_)));
    assert!(matches!(body[1], Literal::Negated(..)));
    assert!(matches!(body[2], Literal::Negated(..)));
    assert!(matches!(body[3], Literal::Compare { op: CmpOp::Ne, .. }));
    match &body[4] {
        Literal::Compare {
            op: CmpOp::Eq,
            right,
            ..
        } => {
            assert_eq!(right.to_string(), "z * (2 - x)");
        }
        other => panic!("{other:?}"),
    }
    match &body[5] {
        Literal::Aggregate(a) => {
            assert_eq!(a.func, AggFunc::Count);
            assert_eq!(a.result.name, "n");
            assert!(a.target.is_none());
            assert_eq!(a.body.len(), 1);
        }
        other => panic!("{other:?}"),
    }
    // Spans point into the text.
    assert_eq!(c.heads[0].name.span, Span::new(0, 0, 1));
}

#[test]
fn precedence_and_unary_minus() {
    let c = clause("p(a - b - c, -x * 2, 1 + 2 * 3, -5, - 5).");
    let args: Vec<String> = c.heads[0].args.iter().map(|e| e.to_string()).collect();
    assert_eq!(args, vec!["a - b - c", "-x * 2", "1 + 2 * 3", "-5", "-(5)"]);
    match &c.heads[0].args[0] {
        Expr::Binary {
            op: ArithOp::Sub,
            left,
            ..
        } => {
            assert!(matches!(
                **left,
                Expr::Binary {
                    op: ArithOp::Sub,
                    ..
                }
            ))
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(c.heads[0].args[3], Expr::Lit(Lit::Int(-5), _)));
    assert!(matches!(c.heads[0].args[4], Expr::Neg(..)));
}

#[test]
fn constants_of_every_kind() {
    let c = clause(r#"k(12, -3, 0xff, 7u, 1.5, "a\tb\"c", _)."#);
    let a = &c.heads[0].args;
    assert!(matches!(a[0], Expr::Lit(Lit::Int(12), _)));
    assert!(matches!(a[1], Expr::Lit(Lit::Int(-3), _)));
    assert!(matches!(a[2], Expr::Lit(Lit::Int(255), _)));
    assert!(matches!(a[3], Expr::Lit(Lit::Unsigned(7), _)));
    assert!(matches!(a[4], Expr::Lit(Lit::Float(x), _) if x == 1.5));
    assert!(matches!(&a[5], Expr::Lit(Lit::Str(s), _) if s == "a\tb\"c"));
    assert!(matches!(a[6], Expr::Wildcard(_)));
}

#[test]
fn aggregates_with_and_without_braces() {
    let c = clause(
        "p(s, m) :- s = sum y : { w(x, y), y > 0 }, m = min y : w(_, y), t = max y + 1 : { w(_, y) }.",
    );
    let aggs: Vec<&Aggregate> = c.body[0]
        .iter()
        .filter_map(|l| match l {
            Literal::Aggregate(a) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(aggs.len(), 3);
    assert_eq!(aggs[0].func, AggFunc::Sum);
    assert_eq!(aggs[0].body.len(), 2);
    assert_eq!(aggs[1].func, AggFunc::Min);
    assert_eq!(aggs[1].body.len(), 1);
    assert_eq!(aggs[2].target.as_ref().unwrap().to_string(), "y + 1");
}

#[test]
fn several_heads_disjunction_and_annotations() {
    let c = clause("@name(\"both\")\n@confidence(0.75)\na(x), b(x) :- c(x); d(x), e(x).");
    assert_eq!(c.annotations.len(), 2);
    assert_eq!(c.annotations[1].value, Lit::Float(0.75));
    assert_eq!(c.heads.len(), 2);
    assert_eq!(c.body.len(), 2);
    assert_eq!(c.body[1].len(), 2);
    assert_eq!(
        c.to_string(),
        "@name(\"both\")\n@confidence(0.75)\na(x), b(x) :- c(x); d(x), e(x)."
    );
}

#[test]
fn nested_disjunction() {
    let c = clause("p(x) :- a(x), (b(x) ; c(x), x > 1 ; (x < 2)), (d(x)).");
    match &c.body[0][1] {
        Literal::Disjunction(alts, _) => {
            assert_eq!(alts.len(), 3);
            assert_eq!(alts[1].len(), 2);
            // `(x < 2)` is a sub-formula of one alternative.
            assert!(matches!(&alts[2][0], Literal::Disjunction(inner, _)
                if matches!(inner[0][0], Literal::Compare { op: CmpOp::Lt, .. })));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&c.body[0][2], Literal::Disjunction(alts, _) if alts.len() == 1));
    assert_eq!(
        c.to_string(),
        "p(x) :- a(x), (b(x); c(x), x > 1; (x < 2)), (d(x))."
    );
    // Parenthesised arithmetic is still arithmetic.
    let c = clause("p(y) :- a(x), (x + 1) * 2 = y.");
    assert!(matches!(c.body[0][1], Literal::Compare { .. }));
}

#[test]
fn directives() {
    let m = parse(
        ".type Id <: number\n.type U = A | B\n.decl e(a: Id, b: symbol) brie\n\
         .input e(IO=file, filename=\"e.csv\", delimiter=\"\\t\")\n.output a, b\n\
         .printsize e\n.pragma \"k\" \"v\"\n.text e \"{0} to {1}\"\n.functional e(0, b)\n\
         .number_type N\nok().",
    )
    .unwrap();
    assert_eq!(m.items.len(), 11);
    match &m.items[2] {
        Item::Decl(d) => {
            assert_eq!(d.columns.len(), 2);
            assert_eq!(d.columns[0].1.name, "Id");
            assert_eq!(d.qualifiers[0].name, "brie");
        }
        other => panic!("{other:?}"),
    }
    match &m.items[3] {
        Item::Io(io) => {
            assert_eq!(io.kind, IoKind::Input);
            assert_eq!(io.options.len(), 3);
            assert_eq!(io.options[2].1, "\t");
        }
        other => panic!("{other:?}"),
    }
    match &m.items[4] {
        Item::Io(io) => assert_eq!(io.relations.len(), 2),
        other => panic!("{other:?}"),
    }
    match &m.items[8] {
        Item::Functional(f) => {
            assert!(matches!(f.keys[0], KeyColumn::Index(0, _)));
            assert!(matches!(&f.keys[1], KeyColumn::Name(n) if n.name == "b"));
        }
        other => panic!("{other:?}"),
    }
    match &m.items[10] {
        Item::Clause(c) => assert!(c.heads[0].args.is_empty()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn facts_on_one_line() {
    let m = parse("e(1, 2). e(2, 3).e(3, 4).").unwrap();
    assert_eq!(m.items.len(), 3);
}

#[test]
fn syntax_errors_point_at_the_token() {
    let err = parse("p(x) :- q(x), .\n").unwrap_err();
    let d = err.primary();
    assert_eq!(d.code, ErrorCode::Parse);
    let loc = d.location.as_ref().unwrap();
    assert_eq!((loc.line, loc.col), (1, 15));
    // Functors parse as expressions; records and `$` are named as unsupported.
    assert!(parse("p(x) :- q(x), r(cat(x, y)).").is_ok());
    for (text, what) in [
        ("p(x) :- q([x, 1]).", "records"),
        ("p(x) :- q(x), y = $A(x).", "`$`"),
        ("p(x) :- q(@f(x)).", "user-defined functors"),
        (".comp C {\n}\n", "components"),
        (".type T = A {x: number} | B {}", "algebraic data types"),
        (".type P = [a: number]", "record types"),
        ("p(x) :- q(x).\n.plan 0:(1)", "`.plan`"),
        (".functor f(x: number): number", "user-defined functors"),
        (".decl r(x: number) choice-domain x", "choice-domain"),
        ("r(x) <= r(y) :- q(x, y).", "subsumptive"),
    ] {
        let err = parse(text).unwrap_err();
        let d = err.primary();
        assert_eq!(d.code, ErrorCode::Unsupported, "{text}: {d}");
        assert!(d.message.contains(what), "{text}: {d}");
    }
    let err = parse("@confidence(0.5)\n.decl a(x: number)").unwrap_err();
    assert!(
        err.primary()
            .message
            .contains("annotation must be followed by a rule")
    );
    let err = parse("p(x) :- ok.").unwrap_err();
    assert!(err.primary().help.as_deref().unwrap().contains("ok()"));
    let err = parse("x = sum y : p(y).").unwrap_err();
    assert!(err.primary().message.contains("expected"));
}

#[test]
fn goals() {
    let g = parse_goal("path(1, x, _, \"a\", -2, 2.5, x).").unwrap();
    assert_eq!(g.predicate, "path");
    assert_eq!(
        g.args,
        vec![
            GoalArg::Const(Value::Number(1)),
            GoalArg::Var("x".into()),
            GoalArg::Wildcard,
            GoalArg::Const(Value::Symbol("a".into())),
            GoalArg::Const(Value::Number(-2)),
            GoalArg::Const(Value::Float(2.5)),
            GoalArg::Var("x".into()),
        ]
    );
    assert!(!g.is_ground());
    assert!(parse_goal("coordinated_threat(42)").unwrap().is_ground());
    assert!(parse_goal("ok()").unwrap().args.is_empty());
    let err = parse_goal("p(x + 1)").unwrap_err();
    assert_eq!(err.code(), ErrorCode::Parse);
    assert_eq!(err.primary().location.as_ref().unwrap().col, 3);
    assert_eq!(err.primary().location.as_ref().unwrap().file, "<goal>");
    assert!(parse_goal("p(1) q").is_err());
    assert!(parse_goal("p(\"open)").is_err());
}

// ---- round trip: print a random tree, parse it back, compare without spans ----

fn strip_expr(e: &mut Expr) {
    match e {
        Expr::Var(v) => v.span = Span::default(),
        Expr::Wildcard(s) | Expr::Lit(_, s) => *s = Span::default(),
        Expr::Binary {
            left, right, span, ..
        } => {
            *span = Span::default();
            strip_expr(left);
            strip_expr(right);
        }
        Expr::Neg(e, s) => {
            *s = Span::default();
            strip_expr(e);
        }
        Expr::Call { name, args, span } => {
            *span = Span::default();
            name.span = Span::default();
            args.iter_mut().for_each(strip_expr);
        }
    }
}

fn strip_atom(a: &mut Atom) {
    a.span = Span::default();
    a.name.span = Span::default();
    a.args.iter_mut().for_each(strip_expr);
}

fn strip_lit(l: &mut Literal) {
    match l {
        Literal::Atom(a) => strip_atom(a),
        Literal::Negated(a, s) => {
            *s = Span::default();
            strip_atom(a);
        }
        Literal::Compare {
            left, right, span, ..
        } => {
            *span = Span::default();
            strip_expr(left);
            strip_expr(right);
        }
        Literal::Disjunction(alts, s) => {
            *s = Span::default();
            alts.iter_mut().flatten().for_each(strip_lit);
        }
        Literal::Test {
            name, args, span, ..
        } => {
            *span = Span::default();
            name.span = Span::default();
            args.iter_mut().for_each(strip_expr);
        }
        Literal::Aggregate(a) => {
            a.span = Span::default();
            a.result.span = Span::default();
            if let Some(t) = &mut a.target {
                strip_expr(t);
            }
            a.body.iter_mut().for_each(strip_lit);
        }
    }
}

fn strip(m: &mut Module) {
    let z = Span::default();
    for item in &mut m.items {
        match item {
            Item::Decl(d) => {
                d.span = z;
                d.name.span = z;
                for (a, b) in &mut d.columns {
                    a.span = z;
                    b.span = z;
                }
                d.qualifiers.iter_mut().for_each(|q| q.span = z);
            }
            Item::Type(t) => {
                t.span = z;
                t.name.span = z;
                t.bases.iter_mut().for_each(|b| b.span = z);
            }
            Item::Io(io) => {
                io.span = z;
                io.relations.iter_mut().for_each(|r| r.span = z);
                io.options.iter_mut().for_each(|(k, _)| k.span = z);
            }
            Item::Text(t) => {
                t.span = z;
                t.template_span = z;
                t.relation.span = z;
            }
            Item::Functional(f) => {
                f.span = z;
                f.relation.span = z;
                for k in &mut f.keys {
                    match k {
                        KeyColumn::Index(_, s) => *s = z,
                        KeyColumn::Name(n) => n.span = z,
                    }
                }
            }
            Item::Pragma(p) => p.span = z,
            Item::Clause(c) => {
                c.span = z;
                for a in &mut c.annotations {
                    a.span = z;
                    a.value_span = z;
                    a.name.span = z;
                }
                c.heads.iter_mut().for_each(strip_atom);
                c.body.iter_mut().flatten().for_each(strip_lit);
            }
        }
    }
}

const RESERVED: &[&str] = &[
    "not",
    "count",
    "sum",
    "min",
    "max",
    "mean",
    // Soufflé functors: `ord(` in an expression (an aggregate's body) is a call.
    "cat",
    "strlen",
    "substr",
    "ord",
    "to_number",
    "to_unsigned",
    "to_float",
    "to_string",
    "ftoi",
    "utoi",
    "itou",
    "ftou",
    "itof",
    "utof",
    "abs",
    "bnot",
    "lnot",
    "brie",
    "btree",
    "btree_delete",
    "eqrel",
    "inline",
    "no_inline",
    "magic",
    "no_magic",
    "overridable",
    "band",
    "bor",
    "bxor",
    "bshl",
    "bshr",
    "bshru",
    "land",
    "lor",
    "lxor",
    "bnot",
    "lnot",
    "nil",
    "match",
    "contains",
    "true",
    "false",
];

fn ident() -> impl Strategy<Value = Ident> {
    "[a-z][a-z0-9_]{0,4}"
        .prop_filter("reserved word", |s| !RESERVED.contains(&s.as_str()))
        .prop_map(|name| Ident {
            name,
            span: Span::default(),
        })
}

fn string() -> impl Strategy<Value = String> {
    "[ -~\t\n\"\\\\é{}]{0,8}"
}

fn lit() -> impl Strategy<Value = Lit> {
    prop_oneof![
        any::<i64>().prop_map(|i| Lit::Int(i as i128)),
        any::<u64>().prop_map(|u| Lit::Int(u as i128)),
        any::<u64>().prop_map(Lit::Unsigned),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(Lit::Float),
        (-1000i32..1000).prop_map(|i| Lit::Float(i as f64 / 8.0)),
        string().prop_map(Lit::Str),
    ]
}

fn expr() -> impl Strategy<Value = Expr> {
    let z = Span::default();
    let leaf = prop_oneof![
        ident().prop_map(Expr::Var),
        Just(Expr::Wildcard(z)),
        lit().prop_map(move |l| Expr::Lit(l, z)),
    ];
    leaf.prop_recursive(4, 16, 2, move |inner| {
        prop_oneof![
            (
                prop_oneof![
                    Just(ArithOp::Add),
                    Just(ArithOp::Sub),
                    Just(ArithOp::Mul),
                    Just(ArithOp::Div),
                    Just(ArithOp::Rem),
                    Just(ArithOp::Pow),
                    Just(ArithOp::BAnd),
                    Just(ArithOp::BOr),
                    Just(ArithOp::BXor),
                    Just(ArithOp::Shl),
                    Just(ArithOp::Shr),
                    Just(ArithOp::ShrU),
                    Just(ArithOp::LAnd),
                    Just(ArithOp::LOr),
                    Just(ArithOp::LXor)
                ],
                inner.clone(),
                inner.clone()
            )
                .prop_map(move |(op, l, r)| Expr::Binary {
                    op,
                    left: Box::new(l),
                    right: Box::new(r),
                    span: z
                }),
            inner.clone().prop_map(move |e| Expr::Neg(Box::new(e), z)),
            (
                prop::sample::select(vec!["cat", "strlen", "max", "to_string", "bnot", "lnot"]),
                prop::collection::vec(inner, 1..3)
            )
                .prop_map(move |(f, args)| Expr::Call {
                    name: Ident {
                        name: f.to_string(),
                        span: z
                    },
                    args,
                    span: z
                }),
        ]
    })
}

fn atom() -> impl Strategy<Value = Atom> {
    (ident(), prop::collection::vec(expr(), 0..4)).prop_map(|(name, args)| Atom {
        name,
        args,
        span: Span::default(),
    })
}

fn cmp_op() -> impl Strategy<Value = CmpOp> {
    prop_oneof![
        Just(CmpOp::Eq),
        Just(CmpOp::Ne),
        Just(CmpOp::Lt),
        Just(CmpOp::Le),
        Just(CmpOp::Gt),
        Just(CmpOp::Ge)
    ]
}

fn simple_literal() -> impl Strategy<Value = Literal> {
    let z = Span::default();
    prop_oneof![
        atom().prop_map(Literal::Atom),
        atom().prop_map(move |a| Literal::Negated(a, z)),
        (cmp_op(), expr(), expr()).prop_map(move |(op, left, right)| Literal::Compare {
            op,
            left,
            right,
            span: z
        }),
        (
            prop::sample::select(vec!["match", "contains"]),
            expr(),
            expr(),
            any::<bool>()
        )
            .prop_map(move |(name, a, b, negated)| Literal::Test {
                name: Ident {
                    name: name.to_string(),
                    span: z
                },
                args: vec![a, b],
                negated,
                span: z
            }),
    ]
}

fn literal() -> impl Strategy<Value = Literal> {
    let z = Span::default();
    let agg = (
        ident(),
        prop_oneof![
            Just(AggFunc::Count),
            Just(AggFunc::Sum),
            Just(AggFunc::Min),
            Just(AggFunc::Max),
            Just(AggFunc::Mean)
        ],
        expr(),
        prop::collection::vec(simple_literal(), 1..3),
    )
        .prop_map(move |(result, func, t, body)| {
            Literal::Aggregate(Aggregate {
                result,
                func,
                target: (func != AggFunc::Count).then_some(t),
                body,
                span: z,
            })
        });
    let disjunction = prop::collection::vec(prop::collection::vec(simple_literal(), 1..3), 1..3)
        .prop_map(move |alts| Literal::Disjunction(alts, z));
    prop_oneof![4 => simple_literal(), 1 => agg, 1 => disjunction]
}

fn clause_item() -> impl Strategy<Value = Item> {
    let z = Span::default();
    let annotation = (ident(), lit()).prop_map(move |(name, value)| Annotation {
        name,
        value,
        value_span: z,
        span: z,
    });
    (
        prop::collection::vec(annotation, 0..2),
        prop::collection::vec(atom(), 1..3),
        prop::collection::vec(prop::collection::vec(literal(), 1..4), 0..3),
    )
        .prop_map(move |(annotations, heads, body)| {
            Item::Clause(Clause {
                annotations,
                heads,
                body,
                span: z,
            })
        })
}

fn directive_item() -> impl Strategy<Value = Item> {
    let z = Span::default();
    let qualifier =
        prop::sample::select(vec!["brie", "btree", "eqrel", "inline"]).prop_map(move |q| Ident {
            name: q.into(),
            span: z,
        });
    prop_oneof![
        (
            ident(),
            prop::collection::vec((ident(), ident()), 0..3),
            prop::collection::vec(qualifier, 0..2)
        )
            .prop_map(move |(name, columns, qualifiers)| Item::Decl(Decl {
                name,
                columns,
                qualifiers,
                span: z
            })),
        (ident(), ident()).prop_map(move |(name, base)| Item::Type(TypeDef {
            name,
            kind: TypeDefKind::Subtype,
            bases: vec![base],
            span: z
        })),
        (ident(), prop::collection::vec(ident(), 1..3)).prop_map(move |(name, bases)| {
            Item::Type(TypeDef {
                name,
                kind: TypeDefKind::Equal,
                bases,
                span: z,
            })
        }),
        (
            prop_oneof![
                Just(IoKind::Input),
                Just(IoKind::Output),
                Just(IoKind::PrintSize)
            ],
            prop::collection::vec(ident(), 1..3),
            prop::collection::vec((ident(), string()), 0..3)
        )
            .prop_map(move |(kind, relations, options)| Item::Io(IoDirective {
                kind,
                relations,
                options,
                span: z
            })),
        (ident(), string()).prop_map(move |(relation, template)| Item::Text(TextDirective {
            relation,
            template,
            template_span: z,
            span: z
        })),
        (
            ident(),
            prop::collection::vec(
                prop_oneof![
                    any::<u64>().prop_map(move |i| KeyColumn::Index(i, z)),
                    ident().prop_map(KeyColumn::Name)
                ],
                1..3
            )
        )
            .prop_map(
                move |(relation, keys)| Item::Functional(FunctionalDirective {
                    relation,
                    keys,
                    span: z
                })
            ),
        prop::collection::vec(string(), 0..3)
            .prop_map(move |args| Item::Pragma(Pragma { args, span: z })),
    ]
}

fn module() -> impl Strategy<Value = Module> {
    prop::collection::vec(prop_oneof![2 => clause_item(), 1 => directive_item()], 0..6)
        .prop_map(|items| Module { items })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn print_then_parse_is_identity(m in module()) {
        let text = m.to_string();
        let mut parsed = match parse(&text) {
            Ok(p) => p,
            Err(e) => return Err(TestCaseError::fail(format!("{e}\n--- text ---\n{text}"))),
        };
        strip(&mut parsed);
        prop_assert_eq!(&parsed, &m, "text:\n{}", text);
        // And printing is stable.
        prop_assert_eq!(parsed.to_string(), text);
    }
}

// ---- robustness: no input makes the front end panic ----

const FRAGMENTS: &[&str] = &[
    "p",
    "q",
    "x",
    "y",
    "_",
    "(",
    ")",
    ",",
    ".",
    ":-",
    "!",
    "not",
    "=",
    "!=",
    "<",
    "+",
    "-",
    "*",
    "/",
    "count",
    "sum",
    "min",
    ":",
    "{",
    "}",
    ";",
    "1",
    "-2",
    "1.5",
    "7u",
    "0x1f",
    "\"s\"",
    "\"",
    ".decl",
    "a: number",
    "b: symbol",
    ".output",
    ".input",
    ".text",
    ".type",
    "<:",
    ".functional",
    "@confidence(0.5)",
    "@name(\"r\")",
    "\n",
    "/*",
    "*/",
    "//",
    "#",
    "eqrel",
    ".comp",
    "p(x)",
    "q(x, y)",
    "p(1).",
    "x = count : { q(x, _) }",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn token_soup_never_panics(parts in prop::collection::vec(prop::sample::select(FRAGMENTS), 0..40)) {
        let text = parts.join(" ");
        if let Err(e) = prooflog::Program::from_source("soup.dl", &text) {
            prop_assert!(!e.diagnostics.is_empty());
            for d in &e.diagnostics {
                let loc = d.location.as_ref();
                prop_assert!(loc.is_some(), "no location: {}", d);
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,80}") {
        let _ = prooflog::Program::from_source("any.dl", &text);
        let _ = parse_goal(&text);
    }
}
