//! `prooflog demo`, `prooflog ask` and `prooflog pack` end to end, on the real binary.

mod support;

use support::{prooflog, scratch, stderr, stdout, stdout_json, write};

#[test]
fn demo_walks_through_the_pipeline() {
    let o = prooflog(&["demo"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for part in [
        "1. Question\n   Which restricted zones does drone group 42 threaten?",
        "3. Conclusion\n   group 42 threatens zone airport (confidence 0.65) [STEP-1]",
        "4. Proof\n   proof-1#1: threatens(42, \"airport\") proved",
        "├── S2 [STEP-2] group 42 is a coordinated threat",
        "doc radar-log-2023-11-14 chars 120-176",
        "the blocking fact: drone 7 was cleared by an operator [HEDGE-200]",
        "6. Model answer",
        "STRIPPED  Drone 9 is armed and flying toward the terminal [HEDGE-101].",
        "outcome: stripped",
        "8. Answer as delivered\n   Group 42 threatens zone airport [STEP-1].",
    ] {
        assert!(out.contains(part), "missing {part:?} in\n{out}");
    }
    let delivered = out.split("8. Answer as delivered").nth(1).unwrap();
    assert!(!delivered.contains("armed"));
}

#[test]
fn demo_as_json_is_the_pipeline_result() {
    let o = prooflog(&["demo", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = stdout_json(&o);
    assert_eq!(j["mode"], "strict");
    assert_eq!(j["firewall"]["outcome"], "stripped");
    assert_eq!(j["firewall"]["stripped_count"], 1);
    assert_eq!(j["goals"][0]["proved"], true);
    assert_eq!(
        j["goals"][1]["why_not"]["because"]["blocker"]["fact"],
        "cleared(7)"
    );
    assert!(j["context"].as_str().unwrap().contains("[HEDGE-101]"));
}

#[test]
fn ask_answers_over_a_users_pack() {
    let o = prooflog(&[
        "ask",
        "--pack",
        "rules/org",
        "--evidence",
        "rules/org/hyperedges.jsonl",
        "--goal",
        "reports_to(\"alice\", m)",
        "--goal",
        "reports_to(\"bob\", m)",
        "--mode",
        "strict",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = stdout_json(&o);
    assert_eq!(
        j["question"],
        "Who does alice report to? Who does bob report to?"
    );
    assert_eq!(j["goals"][0]["proofs"][0]["goal"]["args"][1], "carol");
    // Bob left the company: the negation in current_employee blocks him.
    assert_eq!(j["goals"][1]["proved"], false);
    let w = &j["goals"][1]["why_not"];
    assert_eq!(
        w["because"]["blocker"]["fact"], "left_company(\"bob\")",
        "{w:#}"
    );
    assert_eq!(j["firewall"]["outcome"], "supported", "{:#}", j["claims"]);
    let answer = j["answer"].as_str().unwrap();
    assert!(
        answer.contains("Alice reports to carol [STEP-1]."),
        "{answer}"
    );
    assert!(
        answer.contains("Bob left the company [HEDGE-40]."),
        "{answer}"
    );
}

#[test]
fn ask_on_the_default_pack_with_base_and_request_evidence() {
    let dir = scratch("cli_rag", "ask_default");
    let request = write(
        &dir,
        "request.jsonl",
        r#"{"table": "SIGHTINGS", "member_ids": [3], "attributes": {"zone": "harbor"}, "confidence": 0.6, "doc_id": "coast-guard-report", "span": [5, 40]}
"#,
    );
    let o = prooflog(&[
        "ask",
        "--base",
        "rules/drones/evidence.jsonl",
        "--evidence",
        &request,
        "--goal",
        "intrusion(3, zone)",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("drone 3 intruded into restricted zone harbor"),
        "{out}"
    );
    assert!(
        out.contains("drone 3 intruded into restricted zone airport"),
        "{out}"
    );
    // The request's sighting is numbered after the base's largest edge index (202).
    let j = stdout_json(&prooflog(&[
        "ask",
        "--base",
        "rules/drones/evidence.jsonl",
        "--evidence",
        &request,
        "--goal",
        "intrusion(3, \"harbor\")",
        "--format",
        "json",
    ]));
    assert!(j["context"].as_str().unwrap().contains("[HEDGE-203] drone 3 was sighted in zone harbor (confidence 0.60; hyperedge SIGHTINGS #203, doc coast-guard-report chars 5-40, verified)"), "{}", j["context"]);
}

#[test]
fn ask_exits_1_when_nothing_is_proved_and_2_on_bad_input() {
    let o = prooflog(&["ask", "--goal", "threatens(42, zone)", "--mode", "strict"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("is not proved"));
    let o = prooflog(&["ask", "--goal", "flies(1)", "--format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    let e: serde_json::Value = serde_json::from_slice(&o.stderr).unwrap();
    assert_eq!(e["error"]["code"], "unknown_relation");
    let dir = scratch("cli_rag", "bad_edge");
    let bad = write(
        &dir,
        "bad.jsonl",
        "{\"table\": \"RIVERS\", \"member_ids\": [1]}\n",
    );
    let o = prooflog(&["ask", "--evidence", &bad, "--goal", "threatens"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no pack maps table `RIVERS`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn pack_check_runs_samples() {
    for dir in ["rules/drones", "rules/org", "rules/access"] {
        let o = prooflog(&["pack", "check", dir]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{dir}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        assert!(stdout(&o).contains("all samples passed"));
    }
    let j = stdout_json(&prooflog(&[
        "pack",
        "check",
        "rules/access",
        "--format",
        "json",
    ]));
    assert_eq!(j["pack"]["name"], "access");
    assert_eq!(j["samples"][0]["passed"], true);
    // A sample that does not produce what it promises fails the check.
    let dir = scratch("cli_rag", "failing_pack");
    write(&dir, "p.dl", "edge(1, 2).\npath(x, y) :- edge(x, y).\n");
    write(
        &dir,
        "pack.ron",
        r#"(name: "p", version: "0.1.0", description: "d", rules: ["p.dl"],
            samples: [(name: "s", expect: ["path(2, 1)"])])"#,
    );
    let o = prooflog(&["pack", "check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("FAIL expect path(2, 1): no match"),
        "{}",
        stdout(&o)
    );
    // A malformed manifest is bad input.
    write(&dir, "pack.ron", "(name: \"p\",");
    let o = prooflog(&["pack", "check", dir.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    let e: serde_json::Value = serde_json::from_slice(&o.stderr).unwrap();
    assert_eq!(e["error"]["code"], "bad_pack");
}

#[test]
fn pack_list_describes_packs_and_rejects_clashes() {
    let o = prooflog(&["pack", "list", "rules/drones", "rules/org", "rules/access"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("drones 1.0.0"), "{out}");
    assert!(
        out.contains("goal reports_to: reports_to(person, manager) — Who does {person} report to?"),
        "{out}"
    );
    assert!(out.contains("SIGHTINGS → sighting"));
    let j = stdout_json(&prooflog(&["pack", "list", "--format", "json"]));
    assert_eq!(j[0]["name"], "drones");
    let o = prooflog(&["pack", "list", "rules/drones", "rules/drones"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("relation `member` belongs to pack `drones`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn run_keeps_its_contract() {
    let o = prooflog(&["run"]);
    assert_eq!(o.status.code(), Some(0));
    let j = stdout_json(&o);
    assert_eq!(j["threatens"], serde_json::json!([[42, "airport"]]));
}

/// A chat-completion server on loopback that answers one request with `content`.
#[cfg(feature = "openai")]
fn one_reply_server(content: &str) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let reply =
        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]})
            .to_string();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
            reply.len()
        );
        stream.write_all(response.as_bytes()).unwrap();
    });
    format!("http://{addr}/v1")
}

#[cfg(feature = "openai")]
#[test]
fn ask_with_an_openai_compatible_server() {
    let url = one_reply_server(
        "Group 42 threatens zone airport [STEP-1]. Group 42 also threatens the harbor [STEP-9].",
    );
    let o = prooflog(&[
        "ask",
        "--base",
        "rules/drones/evidence.jsonl",
        "--goal",
        "threatens(42, zone)",
        "--generator",
        "openai",
        "--endpoint",
        &url,
        "--model",
        "llama",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = stdout_json(&o);
    assert_eq!(j["generator"], "openai:llama");
    assert_eq!(j["answer"], "Group 42 threatens zone airport [STEP-1].");
    assert_eq!(j["firewall"]["stripped_count"], 1);
}
