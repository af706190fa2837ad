//! `prooflog prove` end to end: every format, every exit code.

mod support;

use std::process::Output;

use support::{prooflog, stderr, stdout};

fn prove(extra: &[&str]) -> Output {
    let mut args = vec![
        "prove",
        "rules/drones/drones.dl",
        "--evidence",
        "rules/drones/evidence.jsonl",
    ];
    args.extend_from_slice(extra);
    prooflog(&args)
}

#[test]
fn ground_goal_prints_one_tree_and_exits_0() {
    let out = prove(&["--goal", "coordinated_threat(42)"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(json["proof_id"], "proof-1");
    assert_eq!(json["status"], "proved");
    assert_eq!(json["goal"]["root"], "S1");
    assert_eq!(json["nodes"][1]["hedge_tag"], "HEDGE-42");
}

#[test]
fn proof_id_is_the_callers() {
    let out = prove(&["--goal", "coordinated_threat(42)", "--proof-id", "q-7"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(json["proof_id"], "q-7");
}

#[test]
fn unproved_goal_prints_the_tree_and_exits_1() {
    let out = prove(&["--goal", "coordinated_threat(17)"]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(json["status"], "unproved");
    assert_eq!(json["goal"]["root"], serde_json::Value::Null);
    assert_eq!(json["nodes"], serde_json::json!([]));
}

#[test]
fn goal_with_variables_prints_an_array() {
    let out = prove(&["--goal", "threatens(g, z)"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let trees = json.as_array().expect("array");
    assert!(!trees.is_empty());
    assert_eq!(trees[0]["proof_id"], "proof-1#1");
    for t in trees {
        assert_eq!(t["status"], "proved");
        assert_eq!(t["goal"]["predicate"], "threatens");
    }
    let limited = prove(&["--goal", "member(g, d)", "--limit", "2"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&limited)).expect("json");
    assert_eq!(json.as_array().map(Vec::len), Some(2));
    assert_eq!(json[1]["proof_id"], "proof-1#2");
}

#[test]
fn pattern_without_matches_prints_empty_array_and_exits_1() {
    let out = prove(&["--goal", "coordinated_threat(g)", "--limit", "0"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out).trim(), "[]");
}

#[test]
fn context_format() {
    let out = prove(&["--goal", "coordinated_threat(42)", "--format", "context"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains("[STEP-1] group 42 is a coordinated threat (confidence 0.90; by RULE-0 from HEDGE-42, HEDGE-43)"),
        "{text}"
    );
    assert!(text.contains("[HEDGE-42] drone 7 is a member of group 42"));
}

#[test]
fn text_format() {
    let out = prove(&["--goal", "threatens(42, \"airport\")", "--format", "text"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.starts_with("proof-1: threatens(42, \"airport\") proved"),
        "{text}"
    );
    assert!(text.contains("└── "));
    assert!(text.contains("(shown above)"));
}

#[test]
fn dot_format() {
    let out = prove(&["--goal", "coordinated_threat(42)", "--format", "dot"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.starts_with("digraph \"proof-1\" {"));
    assert!(text.contains("\"S1\" -> \"L1\";") && text.contains("\"S1\" -> \"L2\";"));
    assert!(text.trim_end().ends_with('}'));
}

#[test]
fn html_format() {
    let out = prove(&["--goal", "threatens(42, \"airport\")", "--format", "html"]);
    assert_eq!(out.status.code(), Some(0));
    let page = stdout(&out);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("<svg") && page.contains("STEP-1"));
    assert!(!page.contains("<script") && !page.contains("src="));
}

#[test]
fn bad_goal_syntax_exits_2_with_json_error() {
    let out = prove(&["--goal", "coordinated_threat(42"]);
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_str(stderr(&out).trim()).expect("json error");
    assert_eq!(err["error"]["code"], "parse_error");
    assert!(stdout(&out).is_empty());
}

#[test]
fn unknown_relation_exits_2() {
    let out = prove(&["--goal", "no_such(1)"]);
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_str(stderr(&out).trim()).expect("json error");
    assert_eq!(err["error"]["code"], "unknown_relation");
}

#[test]
fn wrong_arity_exits_2() {
    let out = prove(&["--goal", "coordinated_threat(42, 1)"]);
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_str(stderr(&out).trim()).expect("json error");
    assert_eq!(err["error"]["code"], "arity_mismatch");
    let pattern = prove(&["--goal", "coordinated_threat(g, 1)"]);
    assert_eq!(pattern.status.code(), Some(2));
}

#[test]
fn errors_are_text_in_text_formats() {
    let out = prove(&["--goal", "no_such(1)", "--format", "context"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error[unknown_relation]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn default_pack_needs_no_arguments() {
    let out = support::prooflog_in(
        &std::env::temp_dir(),
        &["prove", "--goal", "coordinated_threat(42)"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(json["confidence"], 0.9);
}
