//! `prooflog check`, `gate` and `ground` end to end: the real binary, golden JSON
//! output (`tests/golden/{check,gate,ground}_*.json`) and exit codes.
//!
//! Set `UPDATE_GOLDEN=1` to rewrite the golden files after an intended format change.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use support::{stderr_json, stdout_json};

fn scratch(name: &str) -> PathBuf {
    support::scratch("cli_answer", name)
}

fn write(dir: &Path, file: &str, text: &str) -> String {
    support::write(dir, file, text)
}

fn run(args: &[&str]) -> Output {
    support::prooflog(args)
}

fn run_stdin(args: &[&str], input: &str) -> Output {
    support::prooflog_stdin(args, input)
}

fn golden(name: &str, actual: &serde_json::Value) {
    support::golden::assert_json(name, actual)
}

/// The proof of `goal` on the embedded pack, as `prove` prints it.
fn proof_of(goal: &str) -> String {
    let out = run(&["prove", "--goal", goal]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `coordinated_threat(42)`: STEP-1 (RULE-0) from HEDGE-42 (drone 7) and HEDGE-43
/// (drone 9).
fn proved_proof() -> String {
    proof_of("coordinated_threat(42)")
}

/// `coordinated_threat(17)` is not derived: an unproved tree.
fn unproved() -> String {
    proof_of("coordinated_threat(17)")
}

const SUPPORTED: &str = "Group 42 is a coordinated threat [STEP-1, RULE-0]. \
Drone 7 is a member of group 42 [HEDGE-42].\nIn short: yes.\n";

const MIXED: &str = "Group 42 is a coordinated threat [STEP-1]. \
Drone 42 was built in 2019 [HEDGE-99].\n\
Drone 7 is a member of group 42 [HEDGE-42]. Drone 42 is heading for the harbour.\n";

#[test]
fn check_supported_with_proof() {
    let dir = scratch("check_supported");
    let proof = write(&dir, "proof.json", &proved_proof());
    let answer = write(&dir, "answer.txt", SUPPORTED);
    let out = run(&["check", "--answer", &answer, "--proof", &proof]);
    assert_eq!(out.status.code(), Some(0));
    let j = stdout_json(&out);
    assert_eq!(j["outcome"], "supported");
    golden("check_supported", &j);
}

#[test]
fn check_stripped_with_allowed_tags() {
    let dir = scratch("check_stripped");
    let answer = write(&dir, "answer.txt", MIXED);
    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--allowed",
        "HEDGE-42,RULE-0,STEP-1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let j = stdout_json(&out);
    assert_eq!(j["outcome"], "stripped");
    assert_eq!(j["stripped_count"], 2);
    golden("check_stripped", &j);
}

#[test]
fn check_require_proof_with_unproved_proof_abstains() {
    let dir = scratch("check_abstained");
    let proof = write(&dir, "proofs.json", &format!("[{}]", unproved()));
    let answer = write(&dir, "answer.txt", SUPPORTED);
    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--proof",
        &proof,
        "--allowed",
        "HEDGE-42,RULE-0,STEP-1",
        "--require-proof",
        "--abstain-message",
        "No verified answer.",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let j = stdout_json(&out);
    assert_eq!(j["abstained"], true);
    assert_eq!(j["answer"], "No verified answer.");
    golden("check_abstained", &j);

    // The same answer with both proofs: one is proved, so it passes.
    let both = write(
        &dir,
        "both.json",
        &format!("[{}, {}]", unproved(), proved_proof()),
    );
    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--proof",
        &both,
        "--require-proof",
    ]);
    assert_eq!(out.status.code(), Some(0));
    // --not-proved overrides what the proofs say.
    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--proof",
        &both,
        "--require-proof",
        "--not-proved",
    ]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn check_reads_stdin_and_prints_text() {
    let out = run_stdin(
        &[
            "check",
            "--answer",
            "-",
            "--allowed",
            "HEDGE-42",
            "--format",
            "text",
        ],
        "Drone 7 is a member of group 42 [HEDGE-42]. Drone 42 is armed with missiles [HEDGE-3].",
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("stripped (coverage 0.50; 1 supported, 1 stripped)"));
    assert!(
        text.contains(
            "  stripped: Drone 42 is armed with missiles [HEDGE-3].\n    reason: It cites HEDGE-3, which is not among the allowed tags.\n"
        ),
        "{text}"
    );
    assert!(
        text.trim_end()
            .ends_with("Drone 7 is a member of group 42 [HEDGE-42].")
    );
}

#[test]
fn check_bad_input_exits_2_with_json_error() {
    let dir = scratch("check_bad");
    let answer = write(&dir, "answer.txt", SUPPORTED);
    let broken = write(
        &dir,
        "broken.json",
        "{\"status\": \"proved\",\n \"nodes\": [}",
    );
    let out = run(&["check", "--answer", &answer, "--proof", &broken]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr_json(&out);
    assert_eq!(e["error"]["code"], "bad_input");
    assert_eq!(e["error"]["line"], 2);

    let bad_tag = write(
        &dir,
        "bad_tag.json",
        r#"{"status": "proved", "nodes": [{"hedge_tag": "EDGE-1"}]}"#,
    );
    let out = run(&["check", "--answer", &answer, "--proof", &bad_tag]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr_json(&out)["error"]["code"], "bad_input");

    let out = run(&["check", "--answer", &answer, "--allowed", "HEDGE-x"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr_json(&out)["error"]["code"], "usage");

    let out = run(&["check", "--answer", &answer]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr_json(&out)["error"]["code"], "usage");

    let missing = dir.join("missing.txt");
    let out = run(&[
        "check",
        "--answer",
        &missing.to_string_lossy(),
        "--allowed",
        "HEDGE-1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr_json(&out)["error"]["code"], "io_error");

    let out = run(&["check", "--answer", &answer, "--proved", "--not-proved"]);
    assert_eq!(out.status.code(), Some(2));

    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--goal",
        "coordinated_threat(",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// A proof file is data, not evidence: a forged one is refused, whatever it allows.
#[test]
fn check_refuses_a_proof_the_pack_does_not_prove() {
    let dir = scratch("check_forged");
    let answer = write(
        &dir,
        "answer.txt",
        "Drone 7 carries explosives [HEDGE-7]. Group 42 is a coordinated threat [STEP-1].",
    );
    // Two lines that claim anything.
    let forged = write(
        &dir,
        "forged.json",
        "{\"proof_id\": \"p\", \"goal\": {\"predicate\": \"coordinated_threat\", \"args\": [42], \"root\": \"S1\"}, \"status\": \"proved\", \"confidence\": 1.0, \"depth\": 0, \"rules_fired\": [],\n\"nodes\": [{\"id\": \"L1\", \"kind\": \"evidence\", \"evidence_type\": \"hyperedge\", \"fact\": \"x\", \"predicate\": \"member\", \"args\": [42, 7], \"confidence\": 1.0, \"hedge_tag\": \"HEDGE-7\", \"provenance\": {\"source\": \"hyperedge\", \"table\": null, \"edge_idx\": 7, \"event_ts\": null, \"verified\": true}}], \"edges\": []}",
    );
    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--proof",
        &forged,
        "--require-proof",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let e = stderr_json(&out);
    assert_eq!(e["error"]["code"], "bad_input");
    assert!(
        e["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("does not match the rule pack and evidence")),
        "{e}"
    );
    // A real proof with its status flipped is refused too.
    let flipped = unproved().replace("\"unproved\"", "\"proved\"");
    let flipped = write(&dir, "flipped.json", &flipped);
    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--proof",
        &flipped,
        "--require-proof",
    ]);
    assert_eq!(out.status.code(), Some(2));
    // A node's words that are not the pack's are refused, not trusted.
    let mut worded: serde_json::Value = serde_json::from_str(&proved_proof()).expect("proof JSON");
    worded["nodes"][1]["text"] = "drone 7 carries explosives".into();
    let worded = write(&dir, "worded.json", &worded.to_string());
    let lie = write(&dir, "lie.txt", "Drone 7 carries explosives [HEDGE-42].");
    let out = run(&[
        "check",
        "--answer",
        &lie,
        "--proof",
        &worded,
        "--verify-content",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let e = stderr_json(&out);
    let message = e["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("node L1 says \"drone 7 carries explosives\"")
            && message.contains("the pack says \"drone 7 is a member of group 42\""),
        "{e}"
    );
}

/// `check --goal` proves the goals itself: the tags and words come from the pack.
#[test]
fn check_proves_goals_itself() {
    let dir = scratch("check_goal");
    let answer = write(
        &dir,
        "answer.txt",
        "Group 42 threatens zone airport [STEP-1]. Drone 9 was not cleared by an operator \
         [STEP-3]. Drones 7 and 9 are members of group 42 [HEDGE-42, HEDGE-43].",
    );
    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--goal",
        "threatens(42, \"airport\")",
        "--verify-content",
        "--require-proof",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Two goals are one request: their steps are numbered on, never repeated.
    let two = write(
        &dir,
        "two.txt",
        "Group 42 threatens zone airport [STEP-1]. Group 42 is a coordinated threat [STEP-4].",
    );
    let out = run(&[
        "check",
        "--answer",
        &two,
        "--goal",
        "threatens(42, \"airport\")",
        "--goal",
        "coordinated_threat(42)",
        "--verify-content",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // An unproved goal with --require-proof abstains.
    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--goal",
        "coordinated_threat(17)",
        "--require-proof",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout_json(&out)["abstained"], true);
}

/// Two proof files built as separate requests both have a STEP-1: a citation of it is
/// ambiguous and stripped.
#[test]
fn check_strips_tags_that_are_ambiguous_across_proofs() {
    let dir = scratch("check_ambiguous");
    let a = write(&dir, "a.json", &proof_of("threatens(42, \"airport\")"));
    let b = write(&dir, "b.json", &proved_proof());
    let answer = write(
        &dir,
        "answer.txt",
        "Group 42 is a coordinated threat [STEP-1]. Drone 7 is a member of group 42 [HEDGE-42].",
    );
    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--proof",
        &a,
        "--proof",
        &b,
        "--explain",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let j = stdout_json(&out);
    assert_eq!(j["sentences"][0]["reason"]["kind"], "ambiguous_tags");
    assert_eq!(j["sentences"][1]["kind"], "supported");
}

/// Cited facts, one of a functional predicate.
const CITED: &str = r#"[
  {"tag": "HEDGE-42", "predicate": "member", "args": [42, 7],
   "text": "drone 42 is a member of group 7"},
  {"tag": "HEDGE-5", "predicate": "based_at", "args": [42, "north pier"],
   "text": "drone 42 is based at the north pier", "functional_key": [0]}
]"#;

#[test]
fn ground_grounded_from_cited_facts() {
    let dir = scratch("ground_grounded");
    let cited = write(&dir, "cited.json", CITED);
    let out = run(&[
        "ground",
        "--claim",
        r#"{"subject": 42, "predicate": "is a member of", "object": "7"}"#,
        "--cited",
        &cited,
        "--tags",
        "HEDGE-42",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let j = stdout_json(&out);
    assert_eq!(j["verdict"], "grounded");
    golden("ground_grounded", &j);
}

#[test]
fn ground_weak_from_claim_file() {
    let dir = scratch("ground_weak");
    let cited = write(&dir, "cited.json", CITED);
    let claim = write(
        &dir,
        "claim.json",
        r#"{"subject": "7", "predicate": "commands", "object": "42"}"#,
    );
    let out = run(&[
        "ground",
        "--claim",
        &format!("@{claim}"),
        "--cited",
        &cited,
        "--tags",
        "HEDGE-42",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let j = stdout_json(&out);
    assert_eq!(j["verdict"], "weak");
    assert_eq!(j["score"], 0.5);
    golden("ground_weak", &j);
}

#[test]
fn ground_functional_contradiction() {
    let dir = scratch("ground_contradiction");
    let cited = write(&dir, "cited.json", CITED);
    let out = run(&[
        "ground",
        "--claim",
        r#"{"subject": "42", "predicate": "based_at", "object": "south pier"}"#,
        "--cited",
        &cited,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let j = stdout_json(&out);
    assert_eq!(j["verdict"], "ungrounded");
    assert_eq!(j["contradiction"]["tag"], "HEDGE-5");
    golden("ground_contradiction", &j);
}

#[test]
fn ground_against_a_proof_fails_closed_on_unknown_tags() {
    let dir = scratch("ground_proof");
    let proof = write(&dir, "proof.json", &proved_proof());
    let claim = r#"{"subject": "42", "predicate": "member", "object": "7"}"#;
    let out = run(&["ground", "--claim", claim, "--cited", &proof]);
    assert_eq!(out.status.code(), Some(0));
    let out = run(&[
        "ground",
        "--claim",
        claim,
        "--cited",
        &proof,
        "--tags",
        "HEDGE-42,HEDGE-9",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let j = stdout_json(&out);
    assert_eq!(j["unresolved"], serde_json::json!(["HEDGE-9"]));
    golden("ground_unresolved", &j);
}

#[test]
fn ground_thresholds_and_bad_input() {
    let dir = scratch("ground_bad");
    let cited = write(&dir, "cited.json", CITED);
    let claim = r#"{"subject": "7", "predicate": "commands", "object": "42"}"#;
    // 0.5 is grounded once permit drops to 0.5.
    let out = run(&[
        "ground", "--claim", claim, "--cited", &cited, "--deny", "0.2", "--permit", "0.5",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout_json(&out)["thresholds"]["permit"], 0.5);

    let out = run(&[
        "ground", "--claim", claim, "--cited", &cited, "--deny", "0.7", "--permit", "0.5",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr_json(&out)["error"]["code"], "bad_input");

    let out = run(&["ground", "--claim", "{\"subject\": 1}", "--cited", &cited]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr_json(&out)["error"]["code"], "bad_input");

    let bad = write(&dir, "bad.json", r#"[{"tag": "HEDGE-1", "args": [[1]]}]"#);
    let out = run(&["ground", "--claim", claim, "--cited", &bad]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr_json(&out)["error"]["code"], "bad_input");
}

#[test]
fn check_verify_content_strips_what_the_facts_do_not_say() {
    let dir = scratch("check_verify_content");
    let proof = write(&dir, "proof.json", &proved_proof());
    let answer = write(
        &dir,
        "answer.txt",
        "Group 42 is a coordinated threat [STEP-1]. \
         Drone 7 is a member of group 9 [HEDGE-42]. \
         Drone 7 is not a member of group 42 [HEDGE-42]. \
         Coordinated threats follow from membership [RULE-0].",
    );
    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--proof",
        &proof,
        "--verify-content",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let j = stdout_json(&out);
    assert_eq!(j["supported_count"], 1);
    assert_eq!(j["stripped_count"], 3);
    golden("check_verify_content", &j);
    // The same answer on tags alone passes every sentence.
    let out = run(&["check", "--answer", &answer, "--proof", &proof]);
    assert_eq!(out.status.code(), Some(0));
    // Content verification needs facts, so it needs a proof.
    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--allowed",
        "STEP-1",
        "--verify-content",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

const LEASE: &str =
    "The tenant shall not sublet the premises without the landlord's written consent.";
const RENT: &str = "Rent of 500.00 is due on the first day of each month.";

#[test]
fn gate_drops_unsupported_claims() {
    let dir = scratch("gate_dropped");
    let p1 = write(&dir, "lease.txt", LEASE);
    let p2 = write(&dir, "rent.txt", RENT);
    let answer = write(
        &dir,
        "answer.txt",
        "The tenant shall not sublet the premises without consent. The tenant shall sublet the \
         premises. Rent of 500.00 is due on the first day.",
    );
    let out = run(&[
        "gate",
        "--answer",
        &answer,
        "--passage",
        &p1,
        "--passage",
        &p2,
    ]);
    assert_eq!(out.status.code(), Some(0));
    let j = stdout_json(&out);
    assert_eq!(j["refused"], false);
    assert_eq!(j["unsupported_claims_removed"], 1);
    assert_eq!(j["claims"][2]["passage"], 1);
    golden("gate_dropped", &j);
}

#[test]
fn gate_refuses_when_nothing_survives() {
    let dir = scratch("gate_refused");
    let p1 = write(&dir, "lease.txt", LEASE);
    let answer = write(
        &dir,
        "answer.txt",
        "The landlord shall not sublet the tenant. Rent of 900.00 is due.",
    );
    let out = run(&["gate", "--answer", &answer, "--passage", &p1]);
    assert_eq!(out.status.code(), Some(1));
    let j = stdout_json(&out);
    assert_eq!(j["refused"], true);
    golden("gate_refused", &j);

    let out = run(&["gate", "--answer", &answer]);
    assert_eq!(out.status.code(), Some(2));
    let missing = dir.join("missing.txt");
    let out = run(&[
        "gate",
        "--answer",
        &answer,
        "--passage",
        &missing.to_string_lossy(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr_json(&out)["error"]["code"], "io_error");
}

#[test]
fn gate_all_verified_from_stdin() {
    let dir = scratch("gate_verified");
    let p1 = write(&dir, "lease.txt", LEASE);
    let out = run_stdin(
        &["gate", "--answer", "-", "--passage", &p1],
        "The tenant shall not sublet the premises without consent.",
    );
    assert_eq!(out.status.code(), Some(0));
    let j = stdout_json(&out);
    assert_eq!(j["all_claims_verified"], true);
    golden("gate_verified", &j);
}

#[test]
fn check_explain_adds_sentence_verdicts() {
    let dir = scratch("check_explain");
    let answer = write(&dir, "answer.txt", MIXED);
    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--allowed",
        "HEDGE-42,RULE-0,STEP-1",
        "--explain",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let j = stdout_json(&out);
    assert_eq!(j["sentences"][1]["reason"]["kind"], "unknown_tags");
    assert_eq!(j["sentences"][3]["reason"]["kind"], "no_citation");
    golden("check_explain", &j);
}

/// The end-to-end path a pipeline takes: `prove` a goal of the embedded pack, then
/// `check` an answer against that proof, verbalising its facts with the pack's `.text`
/// directives. A faithful sentence stays; a negated one and a role-inverted one go,
/// each with the gate's reason.
#[test]
fn check_verify_content_with_the_packs_verbalisations() {
    let dir = scratch("verify_with_program");
    let proved = run(&["prove", "--goal", "coordinated_threat(42)"]);
    assert_eq!(proved.status.code(), Some(0), "{proved:?}");
    let proof = write(&dir, "proof.json", &String::from_utf8_lossy(&proved.stdout));
    let answer = write(
        &dir,
        "answer.txt",
        "Group 42 is a coordinated threat [STEP-1]. \
         Drone 9 is not a member of group 42 [HEDGE-43]. \
         Group 42 is a member of drone 7 [HEDGE-42].",
    );
    let pack = concat!(env!("CARGO_MANIFEST_DIR"), "/../rules/drones/drones.dl");
    let evidence = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../rules/drones/evidence.jsonl"
    );
    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--proof",
        &proof,
        "--verify-content",
        "--program",
        pack,
        "--evidence",
        evidence,
        "--explain",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let json = stdout_json(&out);
    assert_eq!(json["outcome"], "stripped");
    assert_eq!(json["answer"], "Group 42 is a coordinated threat [STEP-1].");
    let sentences = json["sentences"].as_array().expect("sentences");
    assert_eq!(sentences.len(), 3);
    assert_eq!(
        sentences[1]["reason"]["facts"][0],
        "drone 9 is a member of group 42"
    );
    assert_eq!(sentences[1]["reason"]["kind"], "not_entailed");
    assert!(
        sentences[1]["reason"]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("HEDGE-43") && d.contains("'not'")),
        "{}",
        sentences[1]
    );
    assert_eq!(sentences[2]["reason"]["kind"], "not_entailed");

    // The pack alone, without the evidence the proof rests on, does not prove it.
    let out = run(&[
        "check",
        "--answer",
        &answer,
        "--proof",
        &proof,
        "--program",
        pack,
    ]);
    assert_eq!(out.status.code(), Some(2));

    // Without --program (the embedded pack), from any directory: the same verdicts.
    let alone = support::prooflog_in(
        &std::env::temp_dir(),
        &[
            "check",
            "--answer",
            &answer,
            "--proof",
            &proof,
            "--verify-content",
        ],
    );
    assert_eq!(stdout_json(&alone)["supported_count"], 1, "{alone:?}");

    // A proof file without words: the words come from the pack, never from the file.
    let mut tree: serde_json::Value = serde_json::from_slice(&proved.stdout).expect("proof JSON");
    for node in tree["nodes"].as_array_mut().expect("nodes") {
        node.as_object_mut().expect("node").remove("text");
    }
    let wordless = write(&dir, "wordless.json", &tree.to_string());
    let bare = run(&[
        "check",
        "--answer",
        &answer,
        "--proof",
        &wordless,
        "--verify-content",
    ]);
    assert_eq!(stdout_json(&bare)["supported_count"], 1, "{bare:?}");
}

/// `ground --evidence`: facts cited by the `HEDGE-<edge_idx>` tags the loader gives
/// them, in the pack's words; an unknown tag fails closed.
#[test]
fn ground_from_evidence_and_tags() {
    let evidence = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../rules/drones/evidence.jsonl"
    );
    let claim = r#"{"subject": 42, "predicate": "member", "object": 7}"#;
    let out = run(&[
        "ground",
        "--claim",
        claim,
        "--evidence",
        evidence,
        "--tags",
        "HEDGE-42",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let json = stdout_json(&out);
    assert_eq!(json["verdict"], "grounded");
    assert_eq!(
        json["matches"][0]["fact"],
        "drone 7 is a member of group 42"
    );

    let out = run(&[
        "ground",
        "--claim",
        claim,
        "--evidence",
        evidence,
        "--tags",
        "HEDGE-999",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let json = stdout_json(&out);
    assert_eq!(json["verdict"], "ungrounded");
    assert_eq!(json["unresolved"][0], "HEDGE-999");

    let neither = run(&["ground", "--claim", claim]);
    assert_eq!(neither.status.code(), Some(2));
}
