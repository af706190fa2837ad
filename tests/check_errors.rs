//! One test per error code the front end reports: the code, the exact line and column
//! it points at, and what the message and help say.

use prooflog::{Diagnostic, ErrorCode, Program};

fn errors(src: &str) -> Vec<Diagnostic> {
    match Program::from_source("t.dl", src) {
        Ok(_) => panic!("program was accepted:\n{src}"),
        Err(e) => e.diagnostics,
    }
}

/// The only error of `src`: its code, line and column, and the diagnostic.
fn single(src: &str, code: ErrorCode, line: usize, col: usize) -> Diagnostic {
    let errs = errors(src);
    assert_eq!(errs.len(), 1, "expected one error, got {errs:#?}");
    let d = errs.into_iter().next().unwrap();
    assert_eq!(d.code, code, "{d}");
    let loc = d.location.as_ref().expect("a location");
    assert_eq!(
        (loc.file.as_str(), loc.line, loc.col),
        ("t.dl", line, col),
        "{d}"
    );
    assert!(d.help.is_some(), "no help: {d}");
    d
}

#[test]
fn parse_error_missing_dot() {
    let d = single("p(x) :- q(x)\nr(1).", ErrorCode::Parse, 2, 1);
    assert!(
        d.message.contains("expected `,`, `;` or `.`"),
        "{}",
        d.message
    );
    assert!(d.message.contains("found `r`"), "{}", d.message);
}

#[test]
fn parse_error_unsupported_directive_and_include() {
    let errs = errors(".comp Graph {\n  .decl e(a: number)\n}\n#include \"x.dl\"\np(1).\n");
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert_eq!(errs[0].code, ErrorCode::Unsupported);
    assert_eq!(errs[1].code, ErrorCode::Parse);
    assert!(errs[0].message.contains("components (`.comp`"));
    assert_eq!(errs[0].location.as_ref().unwrap().line, 1);
    assert!(errs[1].message.contains("not supported"));
    assert_eq!(errs[1].location.as_ref().unwrap().line, 4);
}

#[test]
fn expression_in_body_atom_needs_its_variables_bound() {
    // Soufflé's `q(x + 1)` reads the value of `x + 1`: fine when `x` is bound...
    assert!(Program::from_source("t.dl", "q(1).\np(x) :- q(x), q(x + 1).").is_ok());
    // ...and a range restriction error when nothing else binds it.
    let d = single(
        "q(1).\np(x) :- q(x + 1).",
        ErrorCode::RangeRestriction,
        2,
        3,
    );
    assert!(d.message.contains("`x`"), "{}", d.message);
}

#[test]
fn parse_errors_are_all_reported() {
    let errs = errors("p(x) :- .\nq(1).\nr(x) :- q(x) q(x).\n");
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert_eq!(errs[0].location.as_ref().unwrap().line, 1);
    assert_eq!(errs[1].location.as_ref().unwrap().line, 3);
}

#[test]
fn arity_mismatch_against_declaration() {
    let d = single(
        ".decl edge(a: number, b: number)\npath(x, y) :- edge(x, y, z).",
        ErrorCode::ArityMismatch,
        2,
        15,
    );
    assert!(d.message.contains("`edge`"));
    assert!(d.message.contains("3 arguments"), "{}", d.message);
    assert!(
        d.message.contains("declared with 2 arguments"),
        "{}",
        d.message
    );
    let text = d.to_string();
    assert!(text.contains("--> t.dl:2:15"), "{text}");
    assert!(text.contains("^^^^^^^^^^^^^"), "{text}");
}

#[test]
fn arity_mismatch_against_first_use() {
    let d = single("e(1, 2).\np(x) :- e(x).", ErrorCode::ArityMismatch, 2, 9);
    assert!(
        d.message.contains("first used with 2 arguments"),
        "{}",
        d.message
    );
    assert!(d.message.contains("1 argument,"), "{}", d.message);
}

#[test]
fn range_restriction_head_variable() {
    let d = single("q(1).\np(x, y) :- q(x).", ErrorCode::RangeRestriction, 2, 6);
    assert!(d.message.contains("`y`"), "{}", d.message);
    assert!(d.help.unwrap().contains("y = <expression>"));
}

#[test]
fn range_restriction_non_ground_fact() {
    let d = single("p(1, x).", ErrorCode::RangeRestriction, 1, 6);
    assert!(d.message.contains("fact must be ground"), "{}", d.message);
}

#[test]
fn range_restriction_variable_bound_only_inside_aggregate() {
    let d = single(
        "q(1, 2).\np(x, n) :- n = count : { q(x, _) }.",
        ErrorCode::RangeRestriction,
        2,
        3,
    );
    assert!(d.message.contains("`x`"));
}

#[test]
fn unsafe_variable_in_negation() {
    // A variable of one negated atom alone is existential inside it (Nemo)...
    assert!(Program::from_source("t.dl", "q(1). r(1, 2).\np(x) :- q(x), !r(x, y).").is_ok());
    // ...one shared by two negated atoms and bound by nothing is unsafe.
    let d = single(
        "q(1). r(1, 2).\np(x) :- q(x), !r(x, y), !r(y, x).",
        ErrorCode::UnsafeVariable,
        2,
        21,
    );
    assert!(d.message.contains("`y`"), "{}", d.message);
    assert!(d.help.unwrap().contains("`_`"));
}

#[test]
fn unsafe_variable_in_comparison() {
    let d = single(
        "q(1).\np(x) :- q(x), y < 3.",
        ErrorCode::UnsafeVariable,
        2,
        15,
    );
    assert!(d.message.contains("`y`"), "{}", d.message);
}

#[test]
fn wildcard_in_head() {
    let d = single("q(1).\np(x, _) :- q(x).", ErrorCode::WildcardInHead, 2, 6);
    assert!(d.message.contains("`_`"));
}

#[test]
fn not_stratifiable_negation_names_the_cycle() {
    let d = single(
        "node(1).\npath(x) :- node(x), !blocked(x).\nblocked(x) :- path(x).",
        ErrorCode::NotStratifiable,
        2,
        21,
    );
    assert!(
        d.message.contains("path -[not]-> blocked -> path"),
        "{}",
        d.message
    );
}

#[test]
fn not_stratifiable_aggregate_through_recursion() {
    let d = single(
        "c(0).\nc(n) :- c(m), n = count : { c(_) }, m < n.",
        ErrorCode::NotStratifiable,
        2,
        29,
    );
    assert!(d.message.contains("c -[count]-> c"), "{}", d.message);
}

#[test]
fn type_mismatch_constant_in_declared_column() {
    let d = single(
        ".decl edge(a: number, b: number)\nedge(\"x\", 1).",
        ErrorCode::TypeMismatch,
        2,
        6,
    );
    assert!(d.message.contains("\"x\""), "{}", d.message);
    assert!(
        d.message.contains("column `a` of `edge` is a number"),
        "{}",
        d.message
    );
    assert!(d.message.contains("is a symbol"), "{}", d.message);
}

#[test]
fn type_mismatch_variable_used_as_symbol_and_number() {
    let d = single(
        ".decl q(a: symbol)\n.decl r(b: number)\np(x) :- q(x), r(x).",
        ErrorCode::TypeMismatch,
        3,
        17,
    );
    assert!(d.message.contains("variable `x`"), "{}", d.message);
    assert!(d.message.contains("symbol") && d.message.contains("number"));
}

#[test]
fn type_mismatch_arithmetic_on_symbol() {
    let d = single(
        ".decl q(a: symbol)\np(y) :- q(x), y = x + 1.",
        ErrorCode::TypeMismatch,
        2,
        19,
    );
    assert!(d.message.contains("symbol"), "{}", d.message);
    assert!(d.help.unwrap().contains("numeric"));
}

#[test]
fn type_mismatch_negative_unsigned_constant() {
    let d = single(
        ".decl u(a: unsigned)\nu(-1).",
        ErrorCode::TypeMismatch,
        2,
        3,
    );
    assert!(
        d.message.contains("does not fit in type unsigned"),
        "{}",
        d.message
    );
}

#[test]
fn unknown_relation_in_directive_suggests_a_name() {
    let d = single(
        "edge(1, 2).\n.output edges",
        ErrorCode::UnknownRelation,
        2,
        9,
    );
    assert!(d.message.contains("`edges`"), "{}", d.message);
    assert!(d.help.unwrap().contains("did you mean `edge`"));
}

#[test]
fn bad_directive_confidence_out_of_range() {
    let d = single(
        "q(1).\n@confidence(1.5)\np(x) :- q(x).",
        ErrorCode::BadDirective,
        2,
        13,
    );
    assert!(d.message.contains("not in (0, 1]"), "{}", d.message);
}

#[test]
fn bad_directive_zero_confidence_and_unknown_annotation() {
    let errs = errors("q(1).\n@confidence(0)\n@weight(2)\np(x) :- q(x).");
    assert_eq!(errs.len(), 2);
    assert!(errs.iter().all(|d| d.code == ErrorCode::BadDirective));
    assert!(errs[1].message.contains("unknown annotation `@weight`"));
}

#[test]
fn bad_directive_text_placeholder_out_of_range() {
    let d = single(
        ".decl m(a: number, b: number)\n.text m \"{0} is in {2}\"",
        ErrorCode::BadDirective,
        2,
        9,
    );
    assert!(d.message.contains("`{2}`"), "{}", d.message);
    assert!(d.message.contains("2 columns"), "{}", d.message);
}

#[test]
fn bad_directive_eqrel_and_functional_column() {
    let errs = errors(".decl same(a: number, b: number) eqrel\n.functional same(5)");
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert!(errs[0].message.contains("eqrel"));
    assert_eq!(errs[0].location.as_ref().unwrap().col, 34);
    assert!(errs[1].message.contains("no column 5"));
}

#[test]
fn every_error_is_collected_in_source_order() {
    let errs = errors(
        ".decl e(a: number)\n\
         e(\"s\").\n\
         p(x, y) :- e(x).\n\
         .output nothing\n\
         q(_) :- e(_).",
    );
    let codes: Vec<ErrorCode> = errs.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        vec![
            ErrorCode::TypeMismatch,
            ErrorCode::RangeRestriction,
            ErrorCode::UnknownRelation,
            ErrorCode::WildcardInHead
        ]
    );
    let lines: Vec<usize> = errs
        .iter()
        .map(|d| d.location.as_ref().unwrap().line)
        .collect();
    assert_eq!(lines, vec![2, 3, 4, 5]);
}

#[test]
fn unsafe_variable_aggregate_result_inside_its_own_body() {
    let d = single(
        "e(1, 2).\np(a) :- e(a, _), n = count : { e(n, _) }.",
        ErrorCode::UnsafeVariable,
        2,
        18,
    );
    assert!(
        d.message.contains("`n` also occurs inside the aggregate"),
        "{}",
        d.message
    );
}

#[test]
fn aggregates_waiting_on_each_other_are_rejected() {
    let errs = errors("e(1, 2).\np() :- a = count : { e(b, _) }, b = count : { e(a, _) }.");
    assert!(!errs.is_empty());
    assert!(
        errs.iter().all(|d| d.code == ErrorCode::UnsafeVariable),
        "{errs:#?}"
    );
}

#[test]
fn parse_error_disjunction_inside_aggregate() {
    let d = single(
        "e(1, 2).\np(n) :- n = count : { (e(x, _) ; e(_, x)) }.",
        ErrorCode::Parse,
        2,
        23,
    );
    assert!(d.message.contains("inside an aggregate"), "{}", d.message);
}

#[test]
fn errors_name_the_file_they_are_in() {
    let mut sources = prooflog::diag::SourceMap::new();
    sources.add("decls.dl", ".decl e(a: number, b: number)\n");
    sources.add("rules.dl", "p(x) :- e(x).\n");
    let err = prooflog::check::compile(sources, &Default::default()).unwrap_err();
    let d = err.primary();
    assert_eq!(d.code, ErrorCode::ArityMismatch);
    let loc = d.location.as_ref().unwrap();
    assert_eq!((loc.file.as_str(), loc.line, loc.col), ("rules.dl", 1, 9));
}

#[test]
fn parse_errors_of_every_file_are_reported() {
    let mut sources = prooflog::diag::SourceMap::new();
    sources.add("a.dl", "p(x) :- \n");
    sources.add("b.dl", "q(1)\n");
    let err = prooflog::check::compile(sources, &Default::default()).unwrap_err();
    let files: Vec<&str> = err
        .diagnostics
        .iter()
        .map(|d| d.location.as_ref().unwrap().file.as_str())
        .collect();
    assert_eq!(files, vec!["a.dl", "b.dl"]);
}
