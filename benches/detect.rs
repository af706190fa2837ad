//! Hallucination detection on a ~2 KB answer against a generated organisation fact
//! base of about 100,000 facts (the org pack's rules over deterministic evidence:
//! 14,000 people with names, 2,800 departments and managers, 5,600 two-person
//! meetings with dates, 700 departures; the derived facts included).
//!
//! `detect` is the per-answer cost on a prepared detector; `prepare` builds the
//! detector (lexicon of every symbol and alias) once per fact base.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use prooflog::FactBase;
use prooflog::detect::{Date, Detector, DetectorConfig, Turn};
use prooflog::eval::{EvalOptions, evaluate};
use prooflog::store::Loader;

const PEOPLE: usize = 14_000;
const DEPARTMENTS: usize = 2_800;
const MEETINGS: usize = 5_600;

fn person(i: usize) -> String {
    format!("p{i:05}")
}

fn name(i: usize) -> String {
    format!("Zed{i} Yarrow{i}")
}

fn dept(i: usize) -> String {
    format!("dept-{i:04}")
}

fn meeting(i: usize) -> String {
    format!("mtg-{i:04}")
}

fn date(i: usize) -> i64 {
    // Days of 2023 and 2024, deterministically spread.
    let day = (i * 37) % 700;
    let year = 2023 + (day / 350) as i64;
    let month = ((day % 350) / 29 + 1).min(12) as i64;
    let dom = (day % 28 + 1) as i64;
    year * 10000 + month * 100 + dom
}

fn evidence() -> String {
    let mut s = String::new();
    let mut line = |p: &str, args: serde_json::Value| {
        s.push_str(&serde_json::json!({"predicate": p, "args": args}).to_string());
        s.push('\n');
    };
    for i in 0..PEOPLE {
        line(
            "works_in",
            serde_json::json!([person(i), dept(i % DEPARTMENTS)]),
        );
        line("alias", serde_json::json!([person(i), name(i)]));
        if i % 20 == 7 {
            line("left_company", serde_json::json!([person(i)]));
        }
    }
    for d in 0..DEPARTMENTS {
        line("manages", serde_json::json!([person(d), dept(d)]));
    }
    for m in 0..MEETINGS {
        line("meeting_on", serde_json::json!([meeting(m), date(m)]));
        line(
            "attended",
            serde_json::json!([person((m * 7) % PEOPLE), meeting(m)]),
        );
        line(
            "attended",
            serde_json::json!([person((m * 7 + 3) % PEOPLE), meeting(m)]),
        );
    }
    s
}

fn fact_base() -> FactBase {
    let mut loader = Loader::new();
    loader.program_text("rules/org/org.dl", include_str!("../rules/org/org.dl"));
    loader
        .evidence_jsonl("generated.jsonl", &evidence())
        .unwrap();
    let loaded = loader.load().unwrap();
    evaluate(
        Arc::clone(&loaded.program),
        &loaded.facts,
        &EvalOptions::default(),
    )
    .unwrap()
}

/// A ~2 KB answer: true, wrong, fabricated and unknown claims, dates, a hedge.
fn answer() -> String {
    let mut s = String::new();
    let mut k = 0;
    while s.len() < 2048 {
        let i = 100 + k * 13;
        let sentence = match k % 8 {
            0 => format!(
                "{} works in the {} department. ",
                name(i),
                dept(i % DEPARTMENTS).replace('-', " ")
            ),
            1 => format!(
                "{} works in the {} department. ",
                name(i),
                dept((i + 1) % DEPARTMENTS).replace('-', " ")
            ),
            2 => format!(
                "The {} meeting took place on 2024-02-30. ",
                meeting(i % MEETINGS).replace('-', " ")
            ),
            3 => format!(
                "{} attended the {} meeting. ",
                name(i),
                meeting(i % MEETINGS).replace('-', " ")
            ),
            4 => format!(
                "{} does not work in the {} department. ",
                name(i),
                dept(i % DEPARTMENTS).replace('-', " ")
            ),
            5 => "Studies show that 40% of meetings could be emails. ".to_string(),
            6 => format!(
                "Quentin Marlowe{k} manages the {} department. ",
                dept(i % DEPARTMENTS).replace('-', " ")
            ),
            _ => format!(
                "I think {} might report to {}. ",
                name(i),
                name(i % DEPARTMENTS)
            ),
        };
        s.push_str(&sentence);
        k += 1;
    }
    s
}

fn bench(c: &mut Criterion) {
    let fb = fact_base();
    let total: usize = (0..fb.program().relations().len() as u32)
        .map(|r| fb.len(r))
        .sum();
    eprintln!("generated org fact base: {total} facts");
    let config = DetectorConfig {
        today: Date::parse_iso("2025-03-01").unwrap(),
        ..DetectorConfig::default()
    };
    let answer = answer();
    let history = vec![Turn {
        turn: Some(1),
        role: prooflog::detect::Role::User,
        text: format!("What do you know about {}?", name(100)),
    }];
    let mut g = c.benchmark_group("detect");
    g.sample_size(20);
    g.bench_function("prepare", |b| {
        b.iter(|| black_box(Detector::new(&fb, config.clone())))
    });
    let detector = Detector::new(&fb, config.clone());
    let report = detector.detect(&answer, &history);
    eprintln!(
        "answer {} bytes: {} sentences, {} claims, {} flags",
        answer.len(),
        report.metrics.segments_analyzed,
        report.metrics.claims_checked,
        report.flags.len()
    );
    g.throughput(Throughput::Bytes(answer.len() as u64));
    g.bench_function("detect_2kb", |b| {
        b.iter(|| black_box(detector.detect(black_box(&answer), &history)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
