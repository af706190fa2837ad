//! Hostile input through the library: whatever the text, the library answers with a
//! diagnostic (or a result), never a stack overflow, a panic or unbounded work.
//!
//! The command-line corpus (`tests/fixtures/hostile/`, run by `cli/tests/hostile.rs`)
//! covers the same ground through the real binary.

use std::sync::Arc;

use prooflog::diag::MAX_DIAGNOSTICS;
use prooflog::eval::{EvalOptions, evaluate};
use prooflog::syntax::{MAX_NESTING, parse_goal};
use prooflog::{ErrorCode, Program};

/// Compile and evaluate `text` on a thread with a small stack (as a library user's
/// worker thread may have), returning the outcome's error code if any.
fn run_small_stack(text: String) -> Option<ErrorCode> {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let program = match Program::from_source("t.dl", &text) {
                Ok(p) => p,
                Err(e) => return Some(e.code()),
            };
            // Printing the program walks every tree too.
            let _ = format!("{program:?}");
            let options = EvalOptions::default();
            evaluate(Arc::new(program), &[], &options)
                .err()
                .map(|e| e.code())
        })
        .expect("spawn")
        .join()
        .expect("no panic")
}

/// A program whose one rule joins a chain of `n` atoms, and the chain's facts.
fn long_body(n: usize) -> String {
    let body: Vec<String> = (0..n).map(|i| format!("e(x{i}, x{})", i + 1)).collect();
    let facts: String = (0..=n).map(|i| format!("e({i}, {}).\n", i + 1)).collect();
    format!(
        ".decl e(a: number, b: number)\n.decl r(a: number, b: number)\n{facts}\
         r(x0, x{n}) :- {}.\n",
        body.join(", ")
    )
}

/// Evaluate `text` on `threads` threads from a thread with a small stack and, if
/// `extend`, extend the result with one more `e` fact after the chain; the facts of
/// `r` in both (the first again if not `extend`), or the error's code.
fn evaluate_small_stack(
    text: String,
    threads: usize,
    extend: bool,
) -> Result<(usize, usize), ErrorCode> {
    use prooflog::store::{InputFact, Provenance};
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let program = Arc::new(Program::from_source("t.dl", &text).map_err(|e| e.code())?);
            let (e, r) = (program.relation_id("e"), program.relation_id("r"));
            let (e, r) = (e.expect("e"), r.expect("r"));
            let options = EvalOptions::default().with_threads(threads);
            let base = evaluate(program, &[], &options).map_err(|e| e.code())?;
            if !extend {
                return Ok((base.facts(r).count(), base.facts(r).count()));
            }
            let last = base.len(e) as i64;
            let more = InputFact {
                rel: e,
                args: vec![
                    prooflog::Value::Number(last),
                    prooflog::Value::Number(last + 1),
                ],
                confidence: 1.0,
                provenance: Provenance::default(),
            };
            let extended = base.extend(&[more], &options).map_err(|e| e.code())?;
            Ok((base.facts(r).count(), extended.facts(r).count()))
        })
        .expect("spawn")
        .join()
        .expect("no panic")
}

#[test]
fn rule_bodies_up_to_the_limit_run_on_a_small_stack_and_longer_ones_are_refused() {
    for threads in [1, 2] {
        assert_eq!(
            evaluate_small_stack(long_body(1024), threads, false),
            Ok((2, 2))
        );
    }
    // (A new fact for a long rule makes a semi-naive variant of each of its
    // literals: unoptimised, 512 of them take seconds.)
    assert_eq!(evaluate_small_stack(long_body(512), 1, true), Ok((2, 3)));
    assert_eq!(
        evaluate_small_stack(long_body(1025), 1, false),
        Err(ErrorCode::Unsupported)
    );
    let err = Program::from_source("t.dl", &long_body(5000)).unwrap_err();
    assert!(err.to_string().contains("5000 literals"), "{err}");
}

fn nested_error(text: String) -> String {
    let err = Program::from_source("t.dl", &text).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Parse, "{err}");
    err.to_string()
}

#[test]
fn expressions_at_the_nesting_limit_run_on_a_small_stack() {
    let n = MAX_NESTING - 2;
    let parens = format!(
        "q(1).\np(x) :- q(y), x = {}y{}.\n",
        "(".repeat(n),
        ")".repeat(n)
    );
    assert_eq!(run_small_stack(parens), None);
    let minus = format!("q(1).\np(x) :- q(y), x = {}y.\n", "- ".repeat(n));
    assert_eq!(run_small_stack(minus), None);
    let chain = format!("q(1).\np(x) :- q(y), x = {}.\n", vec!["y"; n].join(" + "));
    assert_eq!(run_small_stack(chain), None);
    let right = format!(
        "q(1).\np(x) :- q(y), x = {}y{}.\n",
        "y - (".repeat(n / 2),
        ")".repeat(n / 2)
    );
    assert_eq!(run_small_stack(right), None);
    let formula = format!("q(1).\np(x) :- {}q(x){}.\n", "(".repeat(n), ")".repeat(n));
    assert_eq!(run_small_stack(formula), None);
    let head = format!("q(1).\np({}) :- q(y).\n", vec!["y"; n].join(" * "));
    assert_eq!(run_small_stack(head), None);
}

#[test]
fn nesting_beyond_the_limit_is_a_parse_error_naming_it() {
    let cases = [
        format!(
            "p(x) :- q(y), x = {}y{}.",
            "(".repeat(12_000),
            ")".repeat(12_000)
        ),
        format!("p(x) :- q(y), x = {}y.", "-".repeat(20_000)),
        format!("p(x) :- q(y), x = {}.", vec!["y"; 50_000].join(" + ")),
        format!("p(x) :- {}q(x){}.", "(".repeat(10_000), ")".repeat(10_000)),
        format!(
            "p(x) :- q(x), x = {}y{}.",
            "(y * ".repeat(300),
            ")".repeat(300)
        ),
        format!(
            "p(n) :- {}q(_){}.",
            "n = count : { ".repeat(300),
            " }".repeat(300)
        ),
    ];
    for text in cases {
        let msg = nested_error(text);
        assert!(msg.contains(&format!("{MAX_NESTING} levels")), "{msg}");
        assert!(msg.contains("t.dl:1:"), "{msg}");
    }
}

#[test]
fn goals_nest_within_the_limit_too() {
    let goal = format!("p({}1{})", "(".repeat(12_000), ")".repeat(12_000));
    let err = parse_goal(&goal).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Parse);
    assert!(err.to_string().contains("levels"), "{err}");
}

#[test]
fn many_errors_on_one_line_are_capped_and_cheap() {
    let text = "x. ".repeat(100_000);
    let started = std::time::Instant::now();
    let err = Program::from_source("t.dl", &text).unwrap_err();
    assert_eq!(err.diagnostics.len(), MAX_DIAGNOSTICS + 1);
    let last = err.diagnostics.last().unwrap();
    assert_eq!(
        last.message,
        format!("{} more errors not shown", 100_000 - MAX_DIAGNOSTICS)
    );
    // Snippets of a long line are cut to a window.
    let snippet = err.diagnostics[5]
        .location
        .as_ref()
        .and_then(|l| l.snippet.clone())
        .unwrap();
    assert!(snippet.len() < 400, "{snippet}");
    assert!(started.elapsed().as_secs() < 10);
}

#[test]
fn check_errors_are_capped() {
    // 5000 rules, each with an unbound head variable.
    let text: String = (0..5000).map(|i| format!("p{i}(x) :- q(y).\n")).collect();
    let err = Program::from_source("t.dl", &text).unwrap_err();
    assert_eq!(err.diagnostics.len(), MAX_DIAGNOSTICS + 1);
    assert!(
        err.diagnostics[MAX_DIAGNOSTICS]
            .message
            .contains("more errors not shown")
    );
}

#[test]
fn disjunctions_times_heads_are_bounded() {
    let disj = "(q(x) ; q(x)), ".repeat(10);
    let heads: Vec<String> = (0..1000).map(|i| format!("h{i}(x)")).collect();
    let text = format!("q(1).\n{} :- {disj}q(x).\n", heads.join(", "));
    let err = Program::from_source("t.dl", &text).unwrap_err();
    assert!(err.to_string().contains("counting every head"), "{err}");
}

#[test]
fn non_finite_float_literals_are_rejected() {
    let err = Program::from_source("t.dl", ".decl v(x: float)\nv(1e999).\n").unwrap_err();
    assert!(err.to_string().contains("out of range"), "{err}");
}

/// A fresh scratch directory under the target directory.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hostile-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn load_facts(path: &std::path::Path) -> prooflog::Result<()> {
    let mut loader = prooflog::store::Loader::new();
    loader.program_text("t.dl", ".decl e(a: symbol, b: symbol)\n");
    loader.facts(path)?;
    loader.load().map(|_| ())
}

#[test]
fn deeply_nested_json_is_a_bad_input_error() {
    let deep = format!("{{\"e\": [{}{}]}}", "[".repeat(70_000), "]".repeat(70_000));
    // Problems of a load are reported by `load`.
    let load = |json: Option<&str>, jsonl: Option<&str>| {
        let mut loader = prooflog::store::Loader::new();
        loader.program_text("t.dl", "p(x) :- e(x).\n");
        if let Some(j) = json {
            loader.facts_json("f.json", j).unwrap();
        }
        if let Some(j) = jsonl {
            loader.evidence_jsonl("e.jsonl", j).unwrap();
        }
        loader.load().map(|_| ()).unwrap_err()
    };
    let err = load(Some(&deep), None);
    assert_eq!(err.code(), ErrorCode::BadInput);
    assert!(err.to_string().contains("nesting limit"), "{err}");
    let line = format!(
        "{{\"predicate\": \"e\", \"args\": {}{}}}\n",
        "[".repeat(70_000),
        "]".repeat(70_000)
    );
    let err = load(None, Some(&line));
    assert!(err.to_string().contains("nesting limit"), "{err}");
}

#[test]
fn malformed_csv_fails_the_load_naming_the_line() {
    let dir = scratch("csv");
    let file = dir.join("e.csv");
    std::fs::write(&file, "a,b\nc,\"unterminated\nd,e\n").unwrap();
    let err = load_facts(&file).unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadInput);
    let loc = err.primary().location.clone().unwrap();
    assert_eq!(loc.line, 2, "{err}");
}

#[cfg(unix)]
#[test]
fn unreadable_directory_entries_are_errors() {
    use std::os::unix::fs::symlink;
    let dir = scratch("dangling");
    std::fs::write(dir.join("a.csv"), "x,y\n").unwrap();
    symlink(dir.join("missing.csv"), dir.join("b.csv")).unwrap();
    let err = load_facts(&dir).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Io);
    assert!(err.to_string().contains("b.csv"), "{err}");

    let dir = scratch("loop");
    symlink(dir.join("l2.csv"), dir.join("l1.csv")).unwrap();
    symlink(dir.join("l1.csv"), dir.join("l2.csv")).unwrap();
    assert_eq!(load_facts(&dir).unwrap_err().code(), ErrorCode::Io);

    let dir = scratch("fifo");
    let fifo = dir.join("f.csv");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let err = load_facts(&dir).unwrap_err();
    assert!(err.to_string().contains("FIFO"), "{err}");

    // Other entries are not fact files and stay ignored.
    let dir = scratch("other");
    std::fs::write(dir.join("README"), "notes").unwrap();
    symlink(dir.join("nowhere"), dir.join("lock")).unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    load_facts(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn devices_are_refused_and_input_is_capped() {
    let err = load_facts(std::path::Path::new("/dev/zero")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Io);
    assert!(err.to_string().contains("device"), "{err}");

    let dir = scratch("cap");
    let file = dir.join("e.csv");
    std::fs::write(&file, "a,b\n".repeat(1000)).unwrap();
    let mut loader = prooflog::store::Loader::new();
    loader.program_text("t.dl", ".decl e(a: symbol, b: symbol)\n");
    loader.max_input_bytes(1000);
    loader.facts(&file).unwrap();
    let err = loader.load().map(|_| ()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::BudgetExceeded);
    assert_eq!(err.limit(), Some(prooflog::diag::Limit::MaxInput));
    // Within the cap it loads; the cap counts every file read.
    let mut loader = prooflog::store::Loader::new();
    loader.program_text("t.dl", ".decl e(a: symbol, b: symbol)\n");
    loader.max_input_bytes(6000);
    loader.facts(&file).unwrap();
    assert!(loader.clone().load().is_ok());
    loader.facts(&file).unwrap();
    assert_eq!(
        loader.load().map(|_| ()).unwrap_err().code(),
        ErrorCode::BudgetExceeded
    );
}

#[test]
fn invalid_utf8_names_its_line() {
    let dir = scratch("utf8");
    let file = dir.join("e.csv");
    std::fs::write(&file, b"a,b\nc,\xff\n").unwrap();
    let err = load_facts(&file).unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadInput);
    assert_eq!(err.primary().location.as_ref().map(|l| l.line), Some(2));
}

fn compile(text: &str) -> Arc<Program> {
    Arc::new(Program::from_source("t.dl", text).unwrap())
}

fn limited(budget: prooflog::eval::Budget) -> EvalOptions {
    EvalOptions::default().with_budget(budget)
}

fn numbers(n: usize) -> String {
    (0..n).map(|i| format!("r({i}).\n")).collect()
}

#[test]
fn a_cartesian_product_stops_at_the_memory_limit_naming_its_rule() {
    use prooflog::eval::Budget;
    let text = format!(
        "{}a(x) :- r(x).\nc(x, y, z) :- a(x), a(y), a(z).\n",
        numbers(300)
    );
    let program = compile(&text);
    let budget = Budget {
        max_memory: Some(16 << 20),
        ..Budget::default()
    };
    let started = std::time::Instant::now();
    let err = evaluate(program.clone(), &[], &limited(budget))
        .err()
        .unwrap();
    assert_eq!(err.code(), ErrorCode::BudgetExceeded);
    assert_eq!(err.limit(), Some(prooflog::diag::Limit::MaxMemory));
    let c_rule = program
        .rules()
        .iter()
        .find(|r| program.relation(r.head.rel).name == "c")
        .unwrap();
    assert!(
        err.to_string().contains(&format!("RULE-{}", c_rule.id)),
        "{err}"
    );
    assert_eq!(err.primary().location.as_ref().map(|l| l.line), Some(302));
    assert!(err.to_string().contains("memory limit"), "{err}");
    assert!(started.elapsed().as_secs() < 20);

    // The fact limit stops it too, within the same join.
    let budget = Budget {
        max_facts: Some(10_000),
        ..Budget::default()
    };
    let err = evaluate(program, &[], &limited(budget)).err().unwrap();
    assert_eq!(err.limit(), Some(prooflog::diag::Limit::MaxFacts));
}

#[test]
fn an_endless_arithmetic_recursion_stops_at_each_limit() {
    use prooflog::diag::Limit;
    use prooflog::eval::Budget;
    let program = compile("n(0).\nn(y) :- n(x), y = x + 1.\n");
    let cases = [
        (
            Budget {
                max_rounds: Some(500),
                ..Budget::default()
            },
            Limit::MaxRounds,
        ),
        (
            Budget {
                max_facts: Some(500),
                ..Budget::default()
            },
            Limit::MaxFacts,
        ),
        (
            Budget {
                timeout: Some(std::time::Duration::from_millis(100)),
                ..Budget::default()
            },
            Limit::Timeout,
        ),
        (
            Budget {
                max_memory: Some(1 << 20),
                ..Budget::default()
            },
            Limit::MaxMemory,
        ),
    ];
    for (budget, limit) in cases {
        let err = evaluate(program.clone(), &[], &limited(budget))
            .err()
            .unwrap();
        assert_eq!(err.limit(), Some(limit), "{err}");
        assert!(err.to_string().contains("RULE-0"), "{err}");
    }
}

#[test]
fn the_deadline_holds_inside_a_join_that_derives_nothing() {
    use prooflog::eval::Budget;
    let text = format!(
        "{}a(x) :- r(x).\nnone(x) :- a(x), a(y), a(z), x + y + z < 0.\n",
        numbers(400)
    );
    let budget = Budget {
        timeout: Some(std::time::Duration::from_millis(200)),
        ..Budget::default()
    };
    let started = std::time::Instant::now();
    let err = evaluate(compile(&text), &[], &limited(budget))
        .err()
        .unwrap();
    assert_eq!(err.limit(), Some(prooflog::diag::Limit::Timeout), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
}

#[test]
fn a_failed_extension_leaves_the_base_as_it_was() {
    use prooflog::eval::Budget;
    use prooflog::store::{InputFact, Provenance};
    let program = compile(
        ".decl e(x: number, y: number)\np(x, y) :- e(x, y).\np(x, z) :- p(x, y), e(y, z).\n",
    );
    let e = program.relation_id("e").unwrap();
    let edge = |a: i64, b: i64| InputFact {
        rel: e,
        args: vec![prooflog::Value::Number(a), prooflog::Value::Number(b)],
        confidence: 1.0,
        provenance: Provenance::default(),
    };
    let base_edges: Vec<InputFact> = (0..10).map(|i| edge(i, i + 1)).collect();
    let base = evaluate(program.clone(), &base_edges, &limited(Budget::default())).unwrap();
    let p = program.relation_id("p").unwrap();
    let before = base.rows(p);
    let more: Vec<InputFact> = (10..400).map(|i| edge(i, i + 1)).collect();
    let tight = limited(Budget {
        max_facts: Some(1000),
        ..Budget::default()
    });
    let err = base.extend(&more, &tight).err().unwrap();
    assert_eq!(err.code(), ErrorCode::BudgetExceeded);
    assert_eq!(base.rows(p), before);
    assert_eq!(base.len(e), 10);
}

#[test]
fn failed_arithmetic_is_counted_per_rule_or_an_error_when_strict() {
    let text = "n(9223372036854775807).\nm(y) :- n(x), y = x + 1.\nd(y) :- n(x), y = x / 0.\n\
                mn(-9223372036854775807 - 1).\nq(y) :- mn(x), y = x / -1.\n\
                .decl v(x: float)\nv(1e308).\nw(y) :- v(x), y = x * 10.0.\n";
    let program = compile(text);
    let base = evaluate(program.clone(), &[], &limited(Default::default())).unwrap();
    let faults = &base.stats().arithmetic;
    let by_head = |name: &str| {
        faults
            .iter()
            .find(|f| program.relation(program.rule(f.rule).head.rel).name == name)
            .cloned()
            .unwrap_or_else(|| panic!("no fault for {name}: {faults:?}"))
    };
    assert_eq!(by_head("m").overflow, 1);
    assert_eq!(by_head("d").division_by_zero, 1);
    assert_eq!(by_head("q").overflow, 1);
    assert_eq!(by_head("w").overflow, 1);
    let w = program.relation_id("w").unwrap();
    assert_eq!(base.len(w), 0, "no infinity is ever stored");
    let warning = prooflog::eval::arithmetic_warning(&program, &by_head("d"));
    assert_eq!(warning.code, ErrorCode::Arithmetic);
    assert!(warning.message.contains("division by zero"), "{warning}");
    assert_eq!(warning.location.as_ref().map(|l| l.line), Some(3));

    let strict = limited(Default::default()).with_strict_arithmetic(true);
    let err = evaluate(program, &[], &strict).err().unwrap();
    assert_eq!(err.code(), ErrorCode::Arithmetic);
}

#[test]
fn many_independent_rules_evaluate_in_linear_time() {
    let time = |n: usize| {
        let text: String = (0..n)
            .map(|i| format!("s{i}({i}).\nr{i}(x) :- s{i}(x).\n"))
            .collect();
        let program = compile(&text);
        let started = std::time::Instant::now();
        let base = evaluate(program, &[], &limited(Default::default())).unwrap();
        assert_eq!(base.stats().derived_facts(), n);
        started.elapsed()
    };
    let small = time(2_000);
    let large = time(20_000);
    // Ten times the rules: far less than the hundred times a quadratic cost takes.
    assert!(
        large < small * 40 + std::time::Duration::from_millis(200),
        "{small:?} → {large:?}"
    );
}
