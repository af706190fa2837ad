//! `prooflog serve` end to end: the real binary on a free loopback port, driven over
//! real HTTP. Every endpoint, errors as JSON with the project's codes and 4xx statuses,
//! the bearer token, per-request isolation, durable base evidence across a restart,
//! and a bounded soak of concurrent valid and malformed requests.

mod serve_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use serve_support::{Server, scratch};

/// The drone pack's example: group 42 (drones 7 and 9), drone 9 sighted at `zone`.
fn sighting_request(zone: &str) -> String {
    json!({
        "goals": ["threatens(42, zone)"],
        "evidence": [
            {"table": "DRONES", "member_ids": [42, 9]},
            {"table": "DRONES", "member_ids": [42, 7]},
            {"table": "SIGHTINGS", "member_ids": [9], "attributes": {"zone": zone},
             "confidence": 0.85, "doc_id": "radar-log-7", "span": [120, 176]}
        ]
    })
    .to_string()
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or("")
}

#[test]
fn endpoints_answer_over_http() {
    let dir = scratch("endpoints");
    let server = Server::start(&dir, &[]);

    let (status, health) = server.get("/healthz");
    assert_eq!((status, health.as_str()), (200, r#"{"status":"ok"}"#));

    // ask: the request's evidence proves the goal; the answer cites its tags.
    let (status, answer) = server.post("/v1/ask", &sighting_request("airport"));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["goals"][0]["proved"], true);
    let text = answer["answer"].as_str().unwrap_or("");
    assert!(
        text.starts_with("Group 42 threatens zone airport [STEP-1]."),
        "{text}"
    );
    assert!(
        answer["context"]
            .as_str()
            .unwrap_or("")
            .contains("doc radar-log-7 chars 120-176")
    );
    assert_eq!(answer["firewall"]["outcome"], "supported");

    // ask with an answer written elsewhere: its unsupported sentence is stripped.
    let mut with_answer: Value =
        serde_json::from_str(&sighting_request("airport")).unwrap_or_default();
    with_answer["answer"] =
        json!("Group 42 threatens zone airport [STEP-1]. Drone 9 is armed [HEDGE-999].");
    with_answer["mode"] = json!("strict");
    let (status, checked) = server.post("/v1/ask", &with_answer.to_string());
    assert_eq!(status, 200, "{checked}");
    assert_eq!(checked["generator"], "fixed");
    assert_eq!(
        checked["answer"],
        "Group 42 threatens zone airport [STEP-1]."
    );
    assert_eq!(checked["firewall"]["stripped_count"], 1);

    // prove, then check an answer against the proof and verify its content.
    let (status, proved) = server.post(
        "/v1/prove",
        &json!({
            "goal": "threatens(42, \"airport\")",
            "evidence": [
                {"table": "DRONES", "member_ids": [42, 9]},
                {"table": "DRONES", "member_ids": [42, 7]},
                {"table": "SIGHTINGS", "member_ids": [9], "attributes": {"zone": "airport"}}
            ]
        })
        .to_string(),
    );
    assert_eq!(status, 200, "{proved}");
    assert_eq!(proved["proved"], true);
    let proof = proved["proofs"][0].clone();
    assert_eq!(proof["status"], "proved");
    let (status, fw) = server.post(
        "/v1/check",
        &json!({
            "answer": "Group 42 threatens zone airport [STEP-1]. It is raining [STEP-1].",
            "proofs": [proof],
            "verify_content": true,
            "explain": true
        })
        .to_string(),
    );
    assert_eq!(status, 200, "{fw}");
    assert_eq!(fw["outcome"], "stripped");
    assert_eq!(fw["answer"], "Group 42 threatens zone airport [STEP-1].");
    assert!(fw["sentences"].as_array().is_some_and(|s| s.len() == 2));

    // gate and ground.
    let (status, gate) = server.post(
        "/v1/gate",
        &json!({
            "answer": "The drone entered the airport zone. It carried a bomb.",
            "passages": ["The drone entered the airport zone at noon."]
        })
        .to_string(),
    );
    assert_eq!(status, 200, "{gate}");
    assert_eq!(gate["unsupported_claims_removed"], 1);
    let (status, ground) = server.post(
        "/v1/ground",
        &json!({
            "claim": {"subject": "9", "predicate": "sighted", "object": "airport"},
            "cited": [{"tag": "HEDGE-7", "predicate": "sighting", "args": [9, "airport"]}]
        })
        .to_string(),
    );
    assert_eq!(status, 200, "{ground}");
    assert_eq!(ground["verdict"], "grounded", "{ground}");

    // packs, metrics, OpenAPI.
    let (status, packs) = server.get("/v1/packs");
    assert_eq!(status, 200);
    let packs: Value = serde_json::from_str(&packs).unwrap_or_default();
    assert_eq!(packs["packs"][0]["name"], "drones");
    let (status, metrics) = server.get("/metrics");
    assert_eq!(status, 200);
    assert!(
        metrics.contains("prooflog_requests_total{endpoint=\"/v1/ask\",status=\"2xx\"} 2"),
        "{metrics}"
    );
    assert!(metrics.contains("prooflog_request_duration_seconds_bucket{endpoint=\"/v1/ask\""));
    assert!(metrics.contains("prooflog_overlay_new_facts_total"));
    let (status, doc) = server.get("/openapi.json");
    assert_eq!(status, 200);
    let doc: Value = serde_json::from_str(&doc).unwrap_or_default();
    assert!(doc["openapi"].as_str().unwrap_or("").starts_with('3'));
    for path in [
        "/v1/ask",
        "/v1/prove",
        "/v1/check",
        "/v1/gate",
        "/v1/ground",
        "/v1/evidence",
        "/v1/packs",
        "/healthz",
        "/metrics",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} is not documented");
    }
    assert!(doc["components"]["schemas"].get("AskRequest").is_some());
}

#[test]
fn bad_requests_get_json_errors_with_codes() {
    let dir = scratch("errors");
    let server = Server::start(&dir, &["--max-body-bytes", "4096"]);
    let cases: &[(&str, &str, u16, &str)] = &[
        ("/v1/ask", "{\"goals\": [", 400, "bad_input"),
        ("/v1/ask", "[]", 400, "bad_input"),
        ("/v1/ask", r#"{"goals": []}"#, 400, "usage"),
        (
            "/v1/ask",
            r#"{"goals": ["g"], "bogus": 1}"#,
            400,
            "bad_input",
        ),
        (
            "/v1/ask",
            r#"{"goals": ["nope(1)"]}"#,
            400,
            "unknown_relation",
        ),
        (
            "/v1/ask",
            r#"{"goals": ["threatens"], "mode": "lenient"}"#,
            400,
            "usage",
        ),
        (
            "/v1/ask",
            r#"{"goals": ["threatens"], "evidence": [{"table": "NOPE", "member_ids": [1]}]}"#,
            400,
            "bad_input",
        ),
        (
            "/v1/ask",
            r#"{"goals": ["threatens"], "facts": [{"predicate": "member", "args": [1]}]}"#,
            400,
            "bad_input",
        ),
        (
            "/v1/ask",
            r#"{"goals": ["threatens"], "facts": [{"predicate": "member", "args": ["x", 1]}]}"#,
            400,
            "bad_input",
        ),
        (
            "/v1/prove",
            r#"{"goal": "member(1, 2)", "facts": [{"predicate": "member", "args": [1, 2], "confidence": 2}]}"#,
            400,
            "bad_input",
        ),
        ("/v1/check", r#"{"answer": "x"}"#, 400, "bad_input"),
        (
            "/v1/check",
            r#"{"answer": "x", "allowed": ["not a tag"]}"#,
            400,
            "bad_input",
        ),
        (
            "/v1/check",
            r#"{"answer": "x", "proofs": [{"a": 1}]}"#,
            400,
            "bad_input",
        ),
        (
            "/v1/gate",
            r#"{"answer": "x", "passages": []}"#,
            400,
            "bad_input",
        ),
        (
            "/v1/ground",
            r#"{"claim": {"subject": "a", "predicate": "b", "object": "c"}, "cited": [{"tag": "HEDGE-1", "predicate": "p"}], "deny": 0.9, "permit": 0.1}"#,
            400,
            "bad_input",
        ),
        ("/v1/evidence", "{}", 400, "bad_input"),
        ("/v1/nothing", "{}", 404, "usage"),
    ];
    for (path, body, want, want_code) in cases {
        let (status, json) = server.post(path, body);
        assert_eq!(status, *want, "{path} {body}: {json}");
        assert_eq!(code(&json), *want_code, "{path} {body}: {json}");
        assert!(json["error"]["message"].is_string());
    }
    let big = format!(
        r#"{{"goals": ["threatens"], "question": "{}"}}"#,
        "x".repeat(10_000)
    );
    // The service answers 413 from the Content-Length, without reading the body, and
    // closes the connection: on a loaded machine the client can see the reset before
    // the answer. Only a transport failure is retried, each time on a new connection.
    let (status, json) = (0..5)
        .find_map(|_| {
            serve_support::post(&serve_support::agent(), &server.url, None, "/v1/ask", &big).ok()
        })
        .expect("an answer to the oversized request");
    assert_eq!((status, code(&json)), (413, "bad_input"), "{json}");
    let (status, text) = server.get("/v1/ask");
    assert_eq!(status, 405, "{text}");
}

#[test]
fn the_evaluation_budget_is_a_422() {
    let dir = scratch("budget");
    let server = Server::start(&dir, &["--max-derived-facts", "1"]);
    let (status, json) = server.post("/v1/ask", &sighting_request("airport"));
    assert_eq!((status, code(&json)), (422, "budget_exceeded"), "{json}");
    // The service goes on answering.
    let (status, json) = server.post(
        "/v1/prove",
        r#"{"goal": "member(42, 9)", "facts": [{"predicate": "member", "args": [42, 9]}]}"#,
    );
    assert_eq!(status, 200, "{json}");
}

#[test]
fn a_token_is_required_when_given() {
    let dir = scratch("token");
    let token_file = dir.join("token");
    std::fs::write(&token_file, "s3cret-token\n").unwrap_or_default();
    let token_arg = token_file.display().to_string();
    let server = Server::start(&dir, &["--token-file", &token_arg]);
    let (status, _) = server.get("/healthz");
    assert_eq!(status, 200, "/healthz needs no token");
    let (status, json) = server.post("/v1/ask", &sighting_request("airport"));
    assert_eq!((status, code(&json)), (401, "unauthorized"), "{json}");
    let (status, _) = server.get("/metrics");
    assert_eq!(status, 401);
    let (status, json) = server.post_with(
        Some("s3cret-tokeN"),
        "/v1/ask",
        &sighting_request("airport"),
    );
    assert_eq!((status, code(&json)), (401, "unauthorized"), "{json}");
    let (status, json) = server.post_with(
        Some("s3cret-token"),
        "/v1/ask",
        &sighting_request("airport"),
    );
    assert_eq!(status, 200, "{json}");
}

#[test]
fn requests_never_see_each_others_evidence() {
    let dir = scratch("isolation");
    let server = Arc::new(Server::start(&dir, &[]));
    let zones = ["airport", "harbor"];
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let server = Arc::clone(&server);
            std::thread::spawn(move || {
                for i in 0..25 {
                    // Even rounds carry evidence, odd rounds none: a request without
                    // evidence must never be proved by another request's.
                    if (t + i) % 2 == 0 {
                        let zone = zones[(t + i) % 4 / 2];
                        let (status, answer) = server.post("/v1/ask", &sighting_request(zone));
                        assert_eq!(status, 200, "{answer}");
                        let proofs = answer["goals"][0]["proofs"].as_array().cloned();
                        let proofs = proofs.unwrap_or_default();
                        assert_eq!(proofs.len(), 1, "{answer}");
                        assert_eq!(proofs[0]["goal"]["args"][1], zone);
                    } else {
                        let (status, answer) =
                            server.post("/v1/ask", r#"{"goals": ["threatens(42, zone)"]}"#);
                        assert_eq!(status, 200, "{answer}");
                        assert_eq!(answer["goals"][0]["proved"], false, "{answer}");
                    }
                }
            })
        })
        .collect();
    for t in threads {
        assert!(t.join().is_ok(), "a client thread failed");
    }
}

#[test]
fn base_evidence_is_durable_across_restarts() {
    let dir = scratch("durable");
    let data = dir.join("data").display().to_string();
    let mut server = Server::start(&dir, &["--data", &data]);
    let (status, added) = server.post(
        "/v1/evidence",
        r#"{"evidence": [{"table": "DRONES", "member_ids": [42, 9]}, {"table": "DRONES", "member_ids": [42, 7]}]}"#,
    );
    assert_eq!(status, 200, "{added}");
    assert_eq!(added["durable"], true);
    assert_eq!(added["accepted"], 2);
    let tags = added["tags"].clone();
    // The base has them now: a request with only the sighting proves the goal.
    let sighting = r#"{"goals": ["threatens(42, zone)"], "evidence": [{"table": "SIGHTINGS", "member_ids": [9], "attributes": {"zone": "harbor"}}]}"#;
    let (status, answer) = server.post("/v1/ask", sighting);
    assert_eq!(status, 200);
    assert_eq!(answer["goals"][0]["proved"], true, "{answer}");
    assert!(server.stop(), "SIGTERM shuts the service down cleanly");

    let server = Server::start(&dir, &["--data", &data]);
    let (status, answer) = server.post("/v1/ask", sighting);
    assert_eq!(status, 200);
    assert_eq!(answer["goals"][0]["proved"], true, "{answer}");
    // Replayed with the same tags.
    let (status, proof) = server.post("/v1/prove", r#"{"goal": "member(42, d)"}"#);
    assert_eq!(status, 200);
    let mut got: Vec<Value> = proof["proofs"]
        .as_array()
        .map(|p| {
            p.iter()
                .map(|t| t["nodes"][0]["hedge_tag"].clone())
                .collect()
        })
        .unwrap_or_default();
    got.sort_by_key(|v| v.to_string());
    let mut want: Vec<Value> = tags.as_array().cloned().unwrap_or_default();
    want.sort_by_key(|v| v.to_string());
    assert_eq!(got, want);
    let (_, packs) = server.get("/v1/packs");
    assert!(packs.contains("\"stored_evidence\":2"), "{packs}");
}

/// A few seconds of concurrent clients mixing valid and malformed requests: every
/// valid one answered 200, every malformed one a clean 4xx, no 5xx at all.
#[test]
fn soak_mixed_requests() {
    let dir = scratch("soak");
    let server = Arc::new(Server::start(&dir, &[]));
    let valid = [
        ("/v1/ask", sighting_request("airport")),
        (
            "/v1/prove",
            r#"{"goal": "coordinated_threat(g)", "facts": [{"predicate": "member", "args": [5, 1]}, {"predicate": "member", "args": [5, 2]}]}"#
                .to_string(),
        ),
        (
            "/v1/gate",
            r#"{"answer": "Drone 9 was sighted.", "passages": ["Drone 9 was sighted near the airport."]}"#
                .to_string(),
        ),
        (
            "/v1/check",
            r#"{"answer": "Drone 9 was sighted [HEDGE-1].", "allowed": ["HEDGE-1"]}"#.to_string(),
        ),
    ];
    let malformed = [
        ("/v1/ask", "{".to_string()),
        ("/v1/ask", r#"{"goals": ["no_such(1)"]}"#.to_string()),
        ("/v1/prove", r#"{"goal": 42}"#.to_string()),
        ("/v1/gate", "null".to_string()),
        ("/v1/check", "\u{0}\u{1}garbage".to_string()),
        (
            "/v1/ask",
            r#"{"goals": ["threatens"], "facts": [{"predicate": "member", "args": [1, 2, 3]}]}"#
                .to_string(),
        ),
    ];
    let ok = Arc::new(AtomicU64::new(0));
    let rejected = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs(3);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (server, ok, rejected) =
                (Arc::clone(&server), Arc::clone(&ok), Arc::clone(&rejected));
            let (valid, malformed) = (valid.clone(), malformed.clone());
            std::thread::spawn(move || {
                let mut i = t;
                while Instant::now() < until {
                    i += 1;
                    if i % 3 == 0 {
                        let (path, body) = &malformed[i % malformed.len()];
                        let (status, json) = server.post(path, body);
                        assert!(
                            (400..500).contains(&status),
                            "{path} {body}: {status} {json}"
                        );
                        assert!(json["error"]["code"].is_string(), "{json}");
                        rejected.fetch_add(1, Ordering::Relaxed);
                    } else {
                        let (path, body) = &valid[i % valid.len()];
                        let (status, json) = server.post(path, body);
                        assert_eq!(status, 200, "{path}: {json}");
                        ok.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        assert!(t.join().is_ok(), "a client thread failed");
    }
    assert!(ok.load(Ordering::Relaxed) > 0 && rejected.load(Ordering::Relaxed) > 0);
    let (_, metrics) = server.get("/metrics");
    assert!(!metrics.contains("status=\"5xx\""), "{metrics}");
}

/// Concurrent base evidence: every request is acknowledged with its own tags (no tag
/// twice), everything acknowledged is in the base, and a request whose explicit edge
/// index is taken is refused alone.
#[test]
fn concurrent_base_evidence_gets_distinct_tags() {
    let dir = scratch("concurrent_evidence");
    let server = Arc::new(Server::start(&dir, &[]));
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let server = Arc::clone(&server);
            std::thread::spawn(move || {
                let mut tags = Vec::new();
                for i in 0..10u64 {
                    let body = json!({"facts": [
                        {"predicate": "member", "args": [500 + t, i]}
                    ]})
                    .to_string();
                    let (status, ack) = server.post("/v1/evidence", &body);
                    assert_eq!(status, 200, "{ack}");
                    tags.extend(ack["tags"].as_array().cloned().unwrap_or_default());
                }
                tags
            })
        })
        .collect();
    let mut tags = Vec::new();
    for t in threads {
        tags.extend(t.join().unwrap_or_default());
    }
    let distinct: std::collections::BTreeSet<String> = tags.iter().map(|t| t.to_string()).collect();
    assert_eq!((tags.len(), distinct.len()), (80, 80));
    for t in 0..8 {
        let (status, proofs) = server.post(
            "/v1/prove",
            &json!({"goal": format!("member({}, d)", 500 + t), "limit": 100}).to_string(),
        );
        assert_eq!(status, 200);
        assert_eq!(proofs["proofs"].as_array().map(Vec::len), Some(10));
    }
    // An explicit index already in use: refused, nothing added.
    let taken = tags[0]
        .as_str()
        .unwrap_or("")
        .trim_start_matches("HEDGE-")
        .to_string();
    let (status, err) = server.post(
        "/v1/evidence",
        &format!(
            r#"{{"facts": [{{"predicate": "member", "args": [1, 1], "provenance": {{"source": "hyperedge", "edge_idx": {taken}}}}}]}}"#
        ),
    );
    assert_eq!((status, code(&err)), (400, "bad_input"), "{err}");
    let (_, packs) = server.get("/v1/packs");
    assert!(packs.contains("\"stored_evidence\":80"), "{packs}");
}

/// A client that sends its headers but not its body gets a 408 once the request limit
/// (twice the timeout and a second) passes, and the service goes on answering others.
#[test]
fn a_body_that_never_comes_times_out() {
    use std::io::{Read, Write};
    let dir = scratch("slow_body");
    let server = Server::start(&dir, &["--timeout-ms", "200"]);
    let addr = server.url.trim_start_matches("http://").to_string();
    let mut stream = std::net::TcpStream::connect(&addr).expect("connect");
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let head = format!(
        "POST /v1/ask HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"goals\""
    );
    stream.write_all(head.as_bytes()).expect("send headers");
    let started = Instant::now();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("budget_exceeded"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(20));
    let (status, _) = server.get("/healthz");
    assert_eq!(status, 200);
}
