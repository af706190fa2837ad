use std::collections::HashSet;
use prooflog::answer::firewall::{CheckOptions, HallucinationFirewall};
fn answer() -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < 10 * 1024 {
        let sentence = match i % 5 {
            0 => format!("Drone {i} is a member of coordinated group {} [HEDGE-{i}, STEP-{}]. ", i % 7, i % 3),
            1 => format!("Drone {i} was observed over the northern harbour at dawn [HEDGE-{}][RULE-0]. ", i + 1000),
            2 => format!("Drone {i} carries a payload that nobody has confirmed so far. "),
            3 => "In short: yes.\n".to_string(),
            _ => format!("Drone {i} may have refuelled at sea before the event [UNVERIFIED]. "),
        };
        s.push_str(&sentence);
        i += 1;
    }
    s
}
fn main() {
    let text = answer();
    let allowed: HashSet<String> = (0..200).map(|i| format!("HEDGE-{i}")).chain((0..3).map(|i| format!("STEP-{i}"))).chain(["RULE-0".to_string()]).collect();
    let n = 200;
    let t = std::time::Instant::now();
    for _ in 0..n { std::hint::black_box(prooflog::answer::segment::segment(&text)); }
    println!("segment {:?}", t.elapsed() / n);
    let t = std::time::Instant::now();
    for _ in 0..n { std::hint::black_box(prooflog::answer::markdown::structure(&text)); }
    println!("structure {:?}", t.elapsed() / n);
    let t = std::time::Instant::now();
    for _ in 0..n { std::hint::black_box(prooflog::answer::normalize::strip_invisible(&text)); }
    println!("strip_invisible {:?}", t.elapsed() / n);
    let fw = HallucinationFirewall::new();
    let t = std::time::Instant::now();
    for _ in 0..n { std::hint::black_box(fw.check(&text, &allowed, &CheckOptions::default())); }
    println!("check {:?}", t.elapsed() / n);
    let t = std::time::Instant::now();
    for _ in 0..n { for w in text.split(". ") { std::hint::black_box(prooflog::answer::firewall::strip_brackets(w)); } }
    println!("strip_brackets all {:?}", t.elapsed() / n);
}
