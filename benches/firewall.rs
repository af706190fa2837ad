//! Firewall throughput on a ~10 KB answer of ~100 sentences (mixed supported,
//! fabricated, uncited, glue and UNVERIFIED sentences).

use std::collections::HashSet;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use prooflog::Value;
use prooflog::answer::firewall::{CheckOptions, HallucinationFirewall};
use prooflog::answer::{CitedFact, TagResolver};

/// Every HEDGE-n names `member(n, n % 7)`; every STEP-k a coordinated threat.
struct Facts;

impl TagResolver for Facts {
    fn resolve(&self, tag: &str) -> Vec<CitedFact> {
        let Some((kind, n)) = tag.split_once('-') else {
            return Vec::new();
        };
        let Ok(n) = n.parse::<i64>() else {
            return Vec::new();
        };
        let (predicate, args, text) = match kind {
            "HEDGE" => (
                "member",
                vec![Value::Number(n), Value::Number(n % 7)],
                format!("drone {n} is a member of coordinated group {}", n % 7),
            ),
            "STEP" => (
                "coordinated_threat",
                vec![Value::Number(n)],
                format!("group {n} is a coordinated threat"),
            ),
            _ => return Vec::new(),
        };
        vec![CitedFact::new(tag, predicate, args, text)]
    }
}

fn answer() -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < 10 * 1024 {
        let sentence = match i % 5 {
            0 => format!(
                "Drone {i} is a member of coordinated group {} [HEDGE-{i}, STEP-{}]. ",
                i % 7,
                i % 3
            ),
            1 => format!(
                "Drone {i} was observed over the northern harbour at dawn [HEDGE-{}][RULE-0]. ",
                i + 1000
            ),
            2 => format!("Drone {i} carries a payload that nobody has confirmed so far. "),
            3 => "In short: yes.\n".to_string(),
            _ => format!("Drone {i} may have refuelled at sea before the event [UNVERIFIED]. "),
        };
        s.push_str(&sentence);
        i += 1;
    }
    s
}

fn bench(c: &mut Criterion) {
    let text = answer();
    let allowed: HashSet<String> = (0..200)
        .map(|i| format!("HEDGE-{i}"))
        .chain((0..3).map(|i| format!("STEP-{i}")))
        .chain(["RULE-0".to_string()])
        .collect();
    let firewall = HallucinationFirewall::new();
    let mut group = c.benchmark_group("firewall");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("segment_only_10kb", |b| {
        b.iter(|| prooflog::answer::segment::segment(black_box(&text)))
    });
    group.bench_function("check_10kb", |b| {
        b.iter(|| firewall.check(black_box(&text), &allowed, &CheckOptions::default()))
    });
    let verifying = HallucinationFirewall::new().with_gate_verification(&Facts);
    group.bench_function("check_10kb_gate_verification", |b| {
        b.iter(|| verifying.check(black_box(&text), &allowed, &CheckOptions::default()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
