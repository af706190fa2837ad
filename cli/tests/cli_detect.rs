//! `prooflog detect` end to end on the org pack: golden JSON (`tests/golden/detect_*.json`,
//! with the wall-clock `detection_time_ms` taken out), exit codes, the text format and
//! bad input.
//!
//! Set `UPDATE_GOLDEN=1` to rewrite the golden files after an intended format change.

mod support;

use std::path::PathBuf;

use support::{prooflog, stderr_json, stdout, stdout_json};

fn scratch(name: &str) -> PathBuf {
    support::scratch("cli_detect", name)
}

/// The report without its one varying field.
fn stable(mut v: serde_json::Value) -> serde_json::Value {
    let t = v["metrics"]
        .as_object_mut()
        .expect("metrics")
        .remove("detection_time_ms");
    assert!(t.is_some_and(|t| t.as_f64().is_some_and(|ms| ms >= 0.0)));
    v
}

const HISTORY: &str = r#"{"role": "user", "text": "Which department is Alice in, and who runs research?"}
{"role": "assistant", "text": "The roadmap review meeting took place on March 12, 2024."}
{"role": "user", "text": "Thanks. Anything else?"}
"#;

#[test]
fn flags_corrects_and_exits_one() {
    let dir = scratch("flags");
    let answer = support::write(
        &dir,
        "answer.txt",
        "Alice Moreau works in the sales department. Carol Diaz manages the research department. \
         As I said, the roadmap review meeting took place on March 14, 2024.",
    );
    let history = support::write(&dir, "history.jsonl", HISTORY);
    let out = prooflog(&[
        "detect",
        "--pack",
        "rules/org",
        "--answer",
        &answer,
        "--history",
        &history,
        "--today",
        "2025-03-01",
        "--explain",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", support::stderr(&out));
    let report = stable(stdout_json(&out));
    let types: Vec<&str> = report["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["hallucination_type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        ["WrongAttribute", "WrongAttribute", "ContradictsPrior"]
    );
    assert_eq!(report["flags"][0]["citations"][0], "HEDGE-1");
    assert_eq!(report["actions"][0]["action"], "Correct");
    assert!(
        report["revised_answer"]
            .as_str()
            .unwrap()
            .starts_with("Alice Moreau works in the research department.")
    );
    support::golden::assert_json("detect_flags", &report);
}

#[test]
fn a_clean_answer_exits_zero() {
    let dir = scratch("clean");
    let answer = support::write(
        &dir,
        "answer.txt",
        "Alice Moreau works in the research department and reports to Carol Diaz. \
         The budget sync meeting took place on April 2, 2024.",
    );
    let out = prooflog(&[
        "detect",
        "--pack",
        "rules/org",
        "--answer",
        &answer,
        "--today",
        "2025-03-01",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", support::stdout(&out));
    let report = stable(stdout_json(&out));
    assert_eq!(report["flags"], serde_json::json!([]));
    assert_eq!(report["metrics"]["claims_checked"], 3);
    support::golden::assert_json("detect_clean", &report);
}

#[test]
fn program_files_and_evidence_make_the_fact_base_too() {
    let dir = scratch("program");
    let evidence = support::write(
        &dir,
        "evidence.jsonl",
        "{\"predicate\": \"works_in\", \"args\": [\"zoe\", \"research\"]}\n\
         {\"predicate\": \"manages\", \"args\": [\"yuri\", \"research\"]}\n",
    );
    let answer = support::write(&dir, "answer.txt", "Zoe works in the sales department.\n");
    let out = prooflog(&[
        "detect",
        "rules/org/org.dl",
        "--evidence",
        &evidence,
        "--answer",
        &answer,
        "--today",
        "2025-03-01",
        "--format",
        "text",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("WrongAttribute"), "{text}");
    assert!(text.contains("correct \"sales\" → \"research\""), "{text}");
}

#[test]
fn bad_input_exits_two() {
    let dir = scratch("bad");
    let answer = support::write(&dir, "answer.txt", "Alice works in research.");
    let history = support::write(&dir, "history.jsonl", "{\"role\": \"user\"}\n");
    let out = prooflog(&[
        "detect",
        "--pack",
        "rules/org",
        "--answer",
        &answer,
        "--history",
        &history,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr_json(&out)["error"]["code"], "bad_input");
    let out = prooflog(&[
        "detect",
        "--pack",
        "rules/org",
        "--answer",
        &answer,
        "--today",
        "March 1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr_json(&out)["error"]["code"], "usage");
    let out = prooflog(&[
        "detect",
        "--pack",
        "rules/org",
        "--answer",
        &answer,
        "--only",
        "Gossip",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let out = prooflog(&["detect", "--pack", "no/such/pack", "--answer", &answer]);
    assert_eq!(out.status.code(), Some(2));
}
