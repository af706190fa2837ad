//! The durable evidence store under `kill -9`: the real `prooflog serve --data DIR`,
//! concurrent writers posting base evidence, SIGKILL at pseudo-random moments,
//! restart, and every acknowledged record must be in the replayed base.

mod serve_support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;
use serve_support::{Server, agent, post, scratch};

/// Rounds of write-then-kill.
const ROUNDS: u64 = 5;
/// Concurrent writers per round.
const WRITERS: u64 = 4;

/// A pseudo-random number from the clock (the moment of the kill need not be
/// reproducible, only unplanned).
fn jitter(max: u64) -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    nanos.wrapping_mul(6_364_136_223_846_793_005) % max.max(1)
}

/// The drones of `group` the base holds, by a pattern proof.
fn drones_of(server: &Server, group: u64) -> BTreeSet<u64> {
    let (status, body) = server.post(
        "/v1/prove",
        &json!({"goal": format!("member({group}, d)"), "limit": 1_000_000}).to_string(),
    );
    assert_eq!(status, 200, "{body}");
    body["proofs"]
        .as_array()
        .map(|proofs| {
            proofs
                .iter()
                .filter_map(|p| p["goal"]["args"][1].as_u64())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn acknowledged_evidence_survives_kill_9() {
    let dir = scratch("crash");
    let data = dir.join("data").display().to_string();
    // (group, drone) of every acknowledged record.
    let acked: Arc<Mutex<BTreeSet<(u64, u64)>>> = Arc::default();
    let mut attempts = 0u64;
    for round in 0..ROUNDS {
        let mut server = Server::start(&dir, &["--data", &data]);
        // Everything acknowledged so far is there after the restart.
        let want = acked.lock().map(|a| a.clone()).unwrap_or_default();
        for w in 0..WRITERS {
            let group = 1000 + w;
            let have = drones_of(&server, group);
            let lost: Vec<_> = want
                .iter()
                .filter(|(g, d)| *g == group && !have.contains(d))
                .collect();
            assert!(lost.is_empty(), "round {round}: lost {lost:?}");
        }
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (url, acked, stop) =
                    (server.url.clone(), Arc::clone(&acked), Arc::clone(&stop));
                std::thread::spawn(move || {
                    let agent = agent();
                    let mut sent = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        // Unique per round, writer and attempt; two records per batch.
                        let drone = (round * 1_000_000) + sent * 2;
                        let body = json!({"facts": [
                            {"predicate": "member", "args": [1000 + w, drone]},
                            {"predicate": "member", "args": [1000 + w, drone + 1]}
                        ]})
                        .to_string();
                        sent += 1;
                        match post(&agent, &url, None, "/v1/evidence", &body) {
                            Ok((200, ack)) => {
                                assert_eq!(ack["durable"], true);
                                if let Ok(mut a) = acked.lock() {
                                    a.insert((1000 + w, drone));
                                    a.insert((1000 + w, drone + 1));
                                }
                            }
                            Ok((status, body)) => panic!("evidence refused: {status} {body}"),
                            // The server was killed mid-request: not acknowledged.
                            Err(_) => break,
                        }
                    }
                    sent
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(150 + jitter(500)));
        server.kill9();
        stop.store(true, Ordering::Relaxed);
        for w in writers {
            attempts += w.join().unwrap_or(0);
        }
    }
    // A last restart: every acknowledged record is in the base, and in the store.
    let server = Server::start(&dir, &["--data", &data]);
    let want = acked.lock().map(|a| a.clone()).unwrap_or_default();
    let mut have = BTreeSet::new();
    for w in 0..WRITERS {
        for d in drones_of(&server, 1000 + w) {
            have.insert((1000 + w, d));
        }
    }
    let lost: Vec<_> = want.difference(&have).collect();
    assert!(
        lost.is_empty(),
        "lost {} acknowledged records: {lost:?}",
        lost.len()
    );
    assert!(!want.is_empty(), "no write was acknowledged");
    // Records stored but not acknowledged (the kill fell between commit and answer)
    // may be there too; nothing else is.
    assert!(have.len() as u64 <= attempts * 2);
    eprintln!(
        "kill -9 test: {ROUNDS} kills, {attempts} batches sent, {} records acknowledged, {} present after restart, 0 lost",
        want.len(),
        have.len()
    );
}
