//! Load on `POST /v1/ask` over loopback HTTP: requests/s and latency percentiles at
//! 1, 8 and 64 concurrent clients, each request carrying 100 evidence facts over a
//! shared base of about a million facts (the workload of `examples/overlay_latency.rs`,
//! `benches/support/overlay.rs`).
//!
//! Run with `cargo run --release -p prooflog-server --example serve_load [SECONDS]`
//! (seconds per concurrency level, default 10). The service runs in this process on
//! its own runtime, bound to 127.0.0.1:0; the clients are blocking threads.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use prooflog::pack::{Pack, PackSet};
use prooflog_server::{Service, ServiceConfig};

#[path = "../../benches/support/overlay.rs"]
mod workload;

const MANIFEST: &str = r#"(
    name: "surveillance",
    version: "1.0.0",
    description: "The overlay benchmark's drone surveillance rules.",
    rules: ["surveillance.dl"],
    evidence: [
        (table: "SIGHTINGS", predicate: "sighting", args: [Member(0), Member(1)]),
    ],
    goals: [
        (name: "threatens", goal: "threatens(group, zone)",
         question: "Which zones does group {group} threaten?"),
    ],
)"#;

/// One request's body: 100 new sightings, and the goal of the first sighting's group.
fn body(program: &prooflog::Program, k: u64) -> String {
    let facts = workload::request(program, k);
    let group = match facts.first().map(|f| &f.args[0]) {
        Some(prooflog::Value::Number(d)) => d / workload::DRONES_PER_GROUP,
        _ => 0,
    };
    let records: Vec<serde_json::Value> = facts
        .iter()
        .map(|f| {
            serde_json::json!({
                "predicate": "sighting",
                "args": f.args.iter().map(prooflog::Value::to_json).collect::<Vec<_>>(),
                "confidence": f.confidence,
            })
        })
        .collect();
    serde_json::json!({
        "goals": [format!("threatens({group}, z)")],
        "facts": records,
    })
    .to_string()
}

fn pick(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10);
    let pack = Pack::from_texts(
        "surveillance",
        MANIFEST,
        &[("surveillance.dl", workload::PROGRAM)],
    )?;
    let set = PackSet::new(vec![pack])?;
    let program = Arc::clone(set.program());
    let base = workload::base_inputs(&program);
    let t = Instant::now();
    let service = Service::start(set, &base, None, ServiceConfig::default())?;
    let facts = service.pipeline().base().facts().input_records().count();
    let total = workload::total_facts(service.pipeline().base().facts());
    println!(
        "base: {facts} input facts, {total} facts in all; evaluated and prepared in {}",
        ms(t.elapsed())
    );

    // The service on its own runtime, in this process.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let result =
            prooflog_server::run(service, "127.0.0.1:0".parse().expect("an address"), |a| {
                let _ = tx.send(a);
                Ok(())
            });
        if let Err(e) = result {
            eprintln!("serve: {e}");
        }
    });
    let addr = rx.recv_timeout(Duration::from_secs(60))?;
    let url = format!("http://{addr}/v1/ask");

    let bodies: Arc<Vec<String>> = Arc::new((0..2_000).map(|k| body(&program, 100 + k)).collect());
    // Warm up.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    for b in bodies.iter().take(20) {
        agent
            .post(&url)
            .header("content-type", "application/json")
            .send(b.as_str())?;
    }

    println!("POST /v1/ask, 100 evidence facts per request, {seconds} s per level:");
    println!("| clients | requests/s | p50 | p99 | requests | errors |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for clients in [1usize, 8, 64] {
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let threads: Vec<_> = (0..clients)
            .map(|c| {
                let (url, bodies, stop) = (url.clone(), Arc::clone(&bodies), Arc::clone(&stop));
                std::thread::spawn(move || {
                    let agent: ureq::Agent = ureq::Agent::config_builder()
                        .http_status_as_error(false)
                        .timeout_global(Some(Duration::from_secs(60)))
                        .build()
                        .into();
                    let mut times = Vec::new();
                    let mut errors = 0u64;
                    let mut k = c * 7;
                    while !stop.load(Ordering::Relaxed) {
                        let b = &bodies[k % bodies.len()];
                        k += 1;
                        let t = Instant::now();
                        let ok = agent
                            .post(&url)
                            .header("content-type", "application/json")
                            .send(b.as_str())
                            .map(|mut r| {
                                let ok = r.status() == 200;
                                let _ = r.body_mut().read_to_string();
                                ok
                            })
                            .unwrap_or(false);
                        times.push(t.elapsed());
                        if !ok {
                            errors += 1;
                        }
                    }
                    (times, errors)
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs(seconds));
        stop.store(true, Ordering::Relaxed);
        let mut times = Vec::new();
        let mut errors = 0;
        for t in threads {
            let (t, e) = t.join().map_err(|_| "a client thread panicked")?;
            times.extend(t);
            errors += e;
        }
        let wall = started.elapsed();
        times.sort();
        println!(
            "| {clients} | {:.0} | {} | {} | {} | {errors} |",
            times.len() as f64 / wall.as_secs_f64(),
            ms(pick(&times, 0.5)),
            ms(pick(&times, 0.99)),
            times.len()
        );
    }

    // Base evidence: POST /v1/evidence with 100 new sightings, one batch at a time
    // (each extends the million-fact base and swaps it in).
    let evidence_url = format!("http://{addr}/v1/evidence");
    let mut times = Vec::new();
    for k in 0..10 {
        let facts: Vec<serde_json::Value> = workload::request(&program, 50_000 + k)
            .iter()
            .map(|f| {
                serde_json::json!({
                    "predicate": "sighting",
                    "args": f.args.iter().map(prooflog::Value::to_json).collect::<Vec<_>>(),
                })
            })
            .collect();
        let body = serde_json::json!({ "facts": facts }).to_string();
        let t = Instant::now();
        let mut r = agent
            .post(&evidence_url)
            .header("content-type", "application/json")
            .send(body.as_str())?;
        let _ = r.body_mut().read_to_string();
        if r.status() != 200 {
            return Err(format!("POST /v1/evidence answered {}", r.status()).into());
        }
        times.push(t.elapsed());
    }
    times.sort();
    println!(
        "POST /v1/evidence, 100 facts per batch, over the same base: median {}, max {} (10 batches, in memory)",
        ms(pick(&times, 0.5)),
        ms(pick(&times, 1.0))
    );
    let mut times = Vec::new();
    for b in bodies.iter().take(500) {
        let t = Instant::now();
        let mut r = agent
            .post(&url)
            .header("content-type", "application/json")
            .send(b.as_str())?;
        let _ = r.body_mut().read_to_string();
        times.push(t.elapsed());
    }
    times.sort();
    println!(
        "POST /v1/ask after those 10 batches, 1 client: p50 {}, p99 {}",
        ms(pick(&times, 0.5)),
        ms(pick(&times, 0.99))
    );
    Ok(())
}
