//! The OpenAI-compatible client against a stub chat-completion server on loopback.
#![cfg(feature = "openai")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use prooflog::bundled::{DEFAULT_HYPEREDGES, default_pack};
use prooflog::pipeline::{Mode, OpenAiClient, Pipeline, Request};
use prooflog::store::read_hyperedges;

/// A server that answers `n` requests with `status` and `reply`, and sends each
/// request's path, headers and body back to the test.
fn stub(n: usize, status: &str, reply: &str) -> (String, mpsc::Receiver<(String, String)>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    let status = status.to_string();
    let reply = reply.to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(n) {
            let mut stream = stream.unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                head.push_str(&line);
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            tx.send((head, String::from_utf8(body).unwrap())).unwrap();
            let response = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                reply.len()
            );
            stream.write_all(response.as_bytes()).unwrap();
        }
    });
    (format!("http://{addr}/v1"), rx)
}

fn pipeline() -> (Pipeline, Vec<prooflog::store::Hyperedge>) {
    let all = read_hyperedges(DEFAULT_HYPEREDGES.name, DEFAULT_HYPEREDGES.text).unwrap();
    let (sightings, base): (Vec<_>, Vec<_>) = all.into_iter().partition(|h| h.table == "SIGHTINGS");
    (
        Pipeline::from_hyperedges(vec![default_pack()], &base).unwrap(),
        sightings,
    )
}

#[test]
fn the_client_sends_the_prompt_and_the_firewall_checks_the_reply() {
    let content = "Group 42 threatens zone airport [STEP-1]. Drone 9 was sighted in zone airport [HEDGE-101]. The group is run by smugglers [HEDGE-999].";
    let reply = serde_json::json!({
        "id": "cmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    })
    .to_string();
    let (url, requests) = stub(1, "200 OK", &reply);
    let (pipeline, sightings) = pipeline();
    let pipeline = pipeline
        .with_generator(OpenAiClient::new(url, "local-model").with_api_key("sk-test"))
        .with_mode(Mode::Strict);
    let answer = pipeline
        .answer(&Request::new("threatens(42, zone)").evidence(sightings))
        .unwrap();
    let (head, body) = requests.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(head.starts_with("POST /v1/chat/completions "), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("authorization: bearer sk-test"),
        "{head}"
    );
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["model"], "local-model");
    assert_eq!(body["messages"][0]["role"], "system");
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("[STEP-1]")
    );
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("[HEDGE-101] drone 9 was sighted in zone airport"),
        "{user}"
    );
    assert!(user.contains("Which restricted zones does group 42 threaten?"));
    assert_eq!(answer.generator, "openai:local-model");
    assert_eq!(answer.raw_answer, content);
    assert_eq!(
        answer.answer,
        "Group 42 threatens zone airport [STEP-1]. Drone 9 was sighted in zone airport [HEDGE-101]."
    );
    assert_eq!(answer.firewall["stripped_count"], 1);
}

#[test]
fn server_errors_are_generation_errors() {
    let (url, _requests) = stub(
        1,
        "500 Internal Server Error",
        "{\"error\": \"model not loaded\"}",
    );
    let (pipeline, sightings) = pipeline();
    let pipeline = pipeline.with_generator(OpenAiClient::new(url, "m"));
    let err = pipeline
        .answer(&Request::new("threatens").evidence(sightings.clone()))
        .unwrap_err();
    assert_eq!(err.primary().code.as_str(), "generation_error");
    assert!(err.to_string().contains("model not loaded"), "{err}");
    // Nothing listens here.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let pipeline = pipeline.with_generator(
        OpenAiClient::new(format!("http://{closed}/v1"), "m").with_timeout(Duration::from_secs(5)),
    );
    let err = pipeline
        .answer(&Request::new("threatens").evidence(sightings))
        .unwrap_err();
    assert_eq!(err.primary().code.as_str(), "generation_error");
}

#[test]
fn a_reply_without_content_is_an_error() {
    let (url, _requests) = stub(1, "200 OK", "{\"choices\": []}");
    let (pipeline, _) = pipeline();
    let err = pipeline
        .with_generator(OpenAiClient::new(url, "m"))
        .answer(&Request::new("threatens"))
        .unwrap_err();
    assert!(
        err.to_string().contains("choices[0].message.content"),
        "{err}"
    );
}
