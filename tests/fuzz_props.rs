//! Fuzz cases that run in every `cargo test`: the cargo-fuzz targets' properties
//! (`fuzz/`) over proptest-generated input. Whatever the input, the library answers
//! with a result or a diagnostic: no panic, no stack overflow, no unbounded work.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use prooflog::answer::firewall::CheckOptions;
use prooflog::answer::segment::segment;
use prooflog::diag::SourceMap;
use prooflog::proof::render;
use prooflog::store::{Dialect, RawInputs};
use prooflog::{
    Budget, CitedFact, EvalOptions, Gate, HallucinationFirewall, Loader, Program, ProofOptions,
    TagResolver, Value, prove_all,
};
use proptest::prelude::*;

#[path = "../fuzz/targets.rs"]
mod targets;

use targets::generator;

fn small_budget() -> EvalOptions {
    EvalOptions::default().with_budget(Budget {
        max_facts: Some(20_000),
        max_rounds: Some(200),
        timeout: Some(Duration::from_millis(500)),
        max_memory: Some(64 << 20),
        ..Budget::unlimited()
    })
}

/// Text made of the rule language's pieces, in any order.
fn token_soup() -> impl Strategy<Value = String> {
    let tokens = prop::sample::select(vec![
        "p",
        "q",
        "e",
        "x",
        "y",
        "_",
        "(",
        ")",
        ",",
        ".",
        ":-",
        ";",
        "!",
        "not",
        "=",
        "!=",
        "<",
        "<=",
        "+",
        "-",
        "*",
        "/",
        "%",
        "1",
        "-2",
        "3u",
        "1.5",
        "1e999",
        "\"s\"",
        "\"",
        "count",
        "sum",
        "min",
        "max",
        ":",
        "{",
        "}",
        ".decl",
        ".input",
        ".output",
        ".type",
        "@confidence",
        "@name",
        "number",
        "symbol",
        "float",
        "\n",
        " ",
        "//",
        "/*",
        "*/",
        "99999999999999999999",
        "é",
    ]);
    prop::collection::vec(tokens, 0..80).prop_map(|t| t.join(" "))
}

fn evaluate_if_compiles(text: &str) {
    if let Ok(program) = Program::from_source("fuzz.dl", text)
        && let Ok(base) = prooflog::evaluate(Arc::new(program), &[], &small_budget())
    {
        for rel in 0..base.program().relations().len() as u32 {
            for fact in base.facts(rel).take(3) {
                let _ = base.fact_text(fact);
                let _ = base.derivation(fact);
            }
        }
    }
}

struct Facts;

impl TagResolver for Facts {
    fn resolve(&self, tag: &str) -> Vec<CitedFact> {
        if tag != "HEDGE-42" {
            return Vec::new();
        }
        vec![CitedFact::new(
            tag,
            "member",
            vec![Value::Number(42), Value::Number(7)],
            "drone 7 is a member of group 42",
        )]
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_text_is_a_program_or_a_diagnostic(text in ".{0,300}") {
        evaluate_if_compiles(&text);
    }

    #[test]
    fn any_token_soup_is_a_program_or_a_diagnostic(text in token_soup()) {
        evaluate_if_compiles(&text);
    }

    #[test]
    fn any_text_is_a_goal_or_a_diagnostic(text in "[a-z0-9_(),.\"\\-+ ]{0,60}") {
        if let Ok(goal) = prooflog::syntax::parse_goal(&text) {
            let _ = prooflog::Fact::from_goal(&goal);
        }
    }

    #[test]
    fn any_json_fact_file_loads_or_fails_cleanly(text in "[\\[\\]{}\",:0-9a-z. \\-]{0,200}") {
        let mut loader = Loader::new();
        loader.program_text("fuzz.dl", ".decl e(a: number, b: symbol)\np(x) :- e(x, _).\n");
        if loader.facts_json("fuzz.json", &text).is_ok() {
            let _ = loader.load();
        }
    }

    #[test]
    fn any_delimited_file_loads_or_fails_cleanly(
        text in "[0-9a-z,\t\"\n\r. \\-]{0,200}",
        dialect in 0u8..3,
    ) {
        let dialect = match dialect {
            0 => Dialect::csv(),
            1 => Dialect::tsv(),
            _ => Dialect { headers: true, ..Dialect::csv() },
        };
        let mut raw = RawInputs::new();
        if raw.add_delimited("e.csv", "e", &text, dialect).is_ok() {
            let mut sources = SourceMap::new();
            sources.add("fuzz.dl", "p(x) :- e(x, _, _).\n");
            if let Ok(program) = prooflog::check::compile(sources, &raw.type_hints()) {
                let _ = raw.resolve(&program);
            }
        }
    }

    #[test]
    fn any_evidence_loads_or_fails_cleanly(text in "[\\[\\]{}\",:0-9a-z_. \n]{0,200}") {
        let mut loader = Loader::new();
        loader.program_text(
            prooflog::bundled::DEFAULT_PROGRAM.name,
            prooflog::bundled::DEFAULT_PROGRAM.text,
        );
        if loader.evidence_jsonl("fuzz.jsonl", &text).is_ok() {
            let _ = loader.load();
        }
    }

    #[test]
    fn any_answer_is_segmented_and_checked(text in "([A-Za-z0-9 ,.!?;:'\"()\n]|\\[HEDGE-42\\]|\\[STEP-9\\]|e\\.g\\.|Mr\\.|é|…){0,60}") {
        let _ = segment(&text);
        let allowed: HashSet<String> = ["HEDGE-42".to_string()].into();
        let r = HallucinationFirewall::new()
            .with_gate_verification(&Facts)
            .check(&text, &allowed, &CheckOptions::new());
        let _ = r.as_dict();
    }

    #[test]
    fn any_answer_goes_through_the_gate(
        answer in "[a-z0-9 .,!?\n]{0,120}",
        passages in prop::collection::vec("[a-z0-9 .,\n]{0,120}", 0..4),
    ) {
        let _ = Gate::check(&answer, &passages);
    }

    #[test]
    fn random_programs_evaluate_and_prove(data in prop::collection::vec(any::<u8>(), 0..64)) {
        let text = generator::program(&data);
        let Ok(program) = Program::from_source("fuzz.dl", &text) else {
            return Ok(());
        };
        let Ok(base) = prooflog::evaluate(Arc::new(program), &[], &small_budget()) else {
            return Ok(());
        };
        let options = ProofOptions::new("fuzz");
        for (name, arity) in generator::RELS {
            let goal = format!("{name}({})", generator::VARS[..arity].join(", "));
            let pattern = prooflog::syntax::parse_goal(&goal).unwrap();
            if base.relation_id(name).is_none() {
                continue;
            }
            let trees = prove_all(&pattern, &base, &options, Some(3))
                .map_err(|e| TestCaseError::fail(format!("{e}\nin\n{text}")))?;
            for tree in &trees {
                prop_assert!(tree.is_proved(), "{goal} in\n{text}");
                let context = render::context(tree);
                let _ = render::text(tree);
                let _ = render::dot(tree);
                let allowed: HashSet<String> = tree.evidence_tags().into_iter().collect();
                let _ = HallucinationFirewall::new().check(
                    &context,
                    &allowed,
                    &CheckOptions::new().require_proof(true),
                );
            }
            // The first matches are the first of every match, in value order.
            let all = base.query(&pattern).unwrap();
            let first: Vec<_> = all.iter().take(3).map(|m| m.fact).collect();
            let limited = base.query_facts(&pattern, Some(3)).unwrap();
            prop_assert_eq!(first, limited);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Facts come out in the order of their values whichever way they are listed:
    /// `rows`, `sorted_facts` and `query_facts` with or without a limit.
    #[test]
    fn facts_sort_by_value(
        rows in prop::collection::vec(
            (-5i64..5, "[a-c]{0,2}", -2.0f64..2.0, 0u64..4),
            0..40,
        ),
        limit in 0usize..10,
    ) {
        let json_rows: Vec<String> = rows
            .iter()
            .map(|(n, s, f, u)| format!("[{n}, {s:?}, {f:?}, {u}]"))
            .collect();
        let mut loader = Loader::new();
        loader.program_text("t.dl", ".decl t(n: number, s: symbol, f: float, u: unsigned)\n.output t\n");
        loader.facts_json("t.json", &format!("{{\"t\": [{}]}}", json_rows.join(", "))).unwrap();
        let loaded = loader.load().unwrap();
        let base = prooflog::evaluate(loaded.program, &loaded.facts, &EvalOptions::default()).unwrap();
        let t = base.relation_id("t").unwrap();
        let mut expect: Vec<Vec<Value>> = base.facts(t).map(|f| base.args(f)).collect();
        expect.sort();
        prop_assert_eq!(&base.rows(t), &expect);
        let sorted: Vec<Vec<Value>> = base.sorted_facts(t).into_iter().map(|f| base.args(f)).collect();
        prop_assert_eq!(&sorted, &expect);
        let goal = prooflog::syntax::parse_goal("t(a, b, c, d)").unwrap();
        let first: Vec<Vec<Value>> = base
            .query_facts(&goal, Some(limit))
            .unwrap()
            .into_iter()
            .map(|f| base.args(f))
            .collect();
        prop_assert_eq!(&first[..], &expect[..limit.min(expect.len())]);
    }
}

/// The inputs a target starts from in `fuzz/run.sh`: its seeds (and, for the program
/// parser, the repository's programs), plus the empty input.
fn seeds(target: &str) -> Vec<Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![(root.join("fuzz/seeds").join(target), false)];
    if target == "parse_program" {
        dirs.push((root.join("tests/programs"), true));
        dirs.push((root.join("rules/drones"), true));
    }
    let mut inputs = vec![Vec::new()];
    for (dir, only_programs) in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<_> = entries.map(|e| e.expect("entry").path()).collect();
        paths.sort();
        for path in paths {
            if !only_programs || path.extension().is_some_and(|e| e == "dl") {
                inputs.push(std::fs::read(&path).expect("seed"));
            }
        }
    }
    inputs
}

/// Every cargo-fuzz target (`fuzz/Cargo.toml`'s binaries) has its body in
/// `fuzz/targets.rs`, and each body runs on its seeds.
#[test]
fn every_fuzz_target_runs_on_its_seeds() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/Cargo.toml"))
            .expect("fuzz/Cargo.toml");
    let mut bins: Vec<&str> = manifest
        .split("[[bin]]")
        .skip(1)
        .filter_map(|bin| bin.lines().find_map(|l| l.strip_prefix("name = ")))
        .map(|name| name.trim_matches('"'))
        .collect();
    bins.sort_unstable();
    let mut names: Vec<&str> = targets::TARGETS.iter().map(|(name, _)| *name).collect();
    names.sort_unstable();
    assert_eq!(names, bins);
    for (name, body) in targets::TARGETS {
        for input in seeds(name) {
            body(&input);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every cargo-fuzz target's own body takes any bytes.
    #[test]
    fn every_fuzz_target_takes_any_bytes(data in prop::collection::vec(any::<u8>(), 0..256)) {
        for (_, body) in targets::TARGETS {
            body(&data);
        }
    }
}
