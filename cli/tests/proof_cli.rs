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
    let out = prove(&["--goal", "threatens(g, z)", "--all-matches"]);
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

#[test]
fn a_goal_with_variables_needs_all_matches() {
    // The quoting slip of a shell: --goal "threatens(42, "harbor")" arrives as
    // threatens(42, harbor), a pattern. It must not prove another fact with exit 0.
    let out = prove(&["--goal", "threatens(42, harbor)"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    let err: serde_json::Value = serde_json::from_str(stderr(&out).trim()).expect("json error");
    assert_eq!(err["error"]["code"], "usage");
    assert_eq!(err["error"]["file"], "--goal");
    assert_eq!(
        (err["error"]["line"].clone(), err["error"]["col"].clone()),
        (1.into(), 15.into())
    );
    let help = err["error"]["help"].as_str().expect("help");
    assert!(
        help.contains("--goal 'threatens(42, \"harbor\")'"),
        "{help}"
    );
    assert!(help.contains("--all-matches"), "{help}");

    let text = prove(&["--goal", "threatens(42, harbor)", "--format", "text"]);
    let shown = stderr(&text);
    assert!(
        shown.starts_with("error[usage]: goal `threatens(42, harbor)` has a variable"),
        "{shown}"
    );
    assert!(
        shown.contains("1 | threatens(42, harbor)\n  |               ^^^^^^"),
        "{shown}"
    );
}

#[test]
fn a_variable_named_like_a_symbol_is_a_warning_or_an_error_under_strict() {
    // As a pattern it matches threatens(42, "airport"): proved, but with a warning.
    let out = prove(&["--goal", "threatens(42, harbor)", "--all-matches"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert!(
        json.is_array(),
        "the shape follows --all-matches, not the goal"
    );
    let warning: serde_json::Value =
        serde_json::from_str(stderr(&out).trim()).expect("one warning");
    assert_eq!(warning["warning"]["code"], "ambiguous_goal");
    assert!(
        warning["warning"]["message"]
            .as_str()
            .unwrap()
            .contains("\"harbor\"")
    );

    let strict = prove(&[
        "--goal",
        "threatens(42, harbor)",
        "--all-matches",
        "--strict",
    ]);
    assert_eq!(strict.status.code(), Some(2));
    assert!(stdout(&strict).is_empty());
    let err: serde_json::Value = serde_json::from_str(stderr(&strict).trim()).expect("json error");
    assert_eq!(err["error"]["code"], "ambiguous_goal");

    // A variable that names no symbol is fine.
    let quiet = prove(&["--goal", "threatens(g, zone)", "--all-matches"]);
    assert_eq!(quiet.status.code(), Some(0));
    assert!(stderr(&quiet).is_empty(), "{}", stderr(&quiet));
}

#[test]
fn several_goals_print_one_array_and_exit_by_the_weakest() {
    let out = prove(&[
        "--goal",
        "coordinated_threat(42)",
        "--goal",
        "threatens(42, \"airport\")",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let trees = json.as_array().expect("array");
    assert_eq!(trees.len(), 2);
    assert_eq!(trees[0]["proof_id"], "proof-1#1");
    assert_eq!(trees[1]["proof_id"], "proof-1#2");
    assert_eq!(trees[1]["goal"]["predicate"], "threatens");

    let one_unproved = prove(&[
        "--goal",
        "coordinated_threat(42)",
        "--goal",
        "coordinated_threat(17)",
    ]);
    assert_eq!(one_unproved.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_str(&stdout(&one_unproved)).expect("json");
    assert_eq!(json[1]["status"], "unproved");

    // --all-matches with a ground goal: still an array, of one tree.
    let ground = prove(&["--goal", "coordinated_threat(42)", "--all-matches"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&ground)).expect("json");
    assert_eq!(json.as_array().map(Vec::len), Some(1));
}

#[test]
fn proofs_carry_their_words_and_their_pack() {
    let out = prove(&["--goal", "threatens(42, \"airport\")"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(json["nodes"][0]["text"], "group 42 threatens zone airport");
    let absence = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["kind"] == "absence")
        .expect("an absence");
    assert_eq!(absence["text"], "drone 9 was cleared by an operator");
    assert_eq!(
        json["pack"]["programs"],
        serde_json::json!(["rules/drones/drones.dl"])
    );
    assert!(
        json["pack"]["digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    // The embedded pack is the same rules: same digest.
    let embedded = support::prooflog_in(
        &std::env::temp_dir(),
        &["prove", "--goal", "threatens(42, \"airport\")"],
    );
    let e: serde_json::Value = serde_json::from_str(&stdout(&embedded)).expect("json");
    assert_eq!(e["pack"]["digest"], json["pack"]["digest"]);
}

#[test]
fn dot_with_several_proofs_is_one_graph_with_a_cluster_each() {
    let out = prove(&[
        "--goal",
        "group_size(g, n)",
        "--all-matches",
        "--format",
        "dot",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert_eq!(text.matches("digraph").count(), 1, "{text}");
    assert!(text.contains("subgraph \"cluster_1\"") && text.contains("subgraph \"cluster_2\""));
    assert!(text.contains("\"p1_S1\" -> \"p1_L1\";") && text.contains("\"p2_S1\""));
}

#[test]
fn html_with_several_proofs_links_to_each() {
    let out = prove(&[
        "--goal",
        "group_size(g, n)",
        "--all-matches",
        "--format",
        "html",
    ]);
    let page = stdout(&out);
    assert!(
        page.contains("<nav") && page.contains("href=\"#proof-2\""),
        "{page}"
    );
    assert!(page.contains("id=\"proof-2\""));
    assert!(page.contains("viewBox=") && page.contains("width=\"100%\""));
}

#[test]
fn json_errors_have_no_null_fields() {
    let out = prove(&["--goal", "no_such(1)"]);
    let err: serde_json::Value = serde_json::from_str(stderr(&out).trim()).expect("json error");
    let fields = err["error"].as_object().expect("object");
    assert!(fields.values().all(|v| !v.is_null()), "{err}");
    assert!(!fields.contains_key("file"));
}
