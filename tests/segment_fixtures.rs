//! Segmentation fixtures: error rate of the naive split versus the guarded scanner.
//!
//! A case is an error when the list of segment texts differs from the expected list.

use std::collections::BTreeMap;

use prooflog::answer::segment::{Segment, segment, segment_naive};
use serde::Deserialize;

#[derive(Deserialize)]
struct Fixtures {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    lang: String,
    text: String,
    expected: Vec<String>,
}

fn load() -> Vec<Case> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/segment/cases.json"
    );
    let raw = std::fs::read_to_string(path).expect("fixture file readable");
    let fixtures: Fixtures = serde_json::from_str(&raw).expect("fixture file is valid JSON");
    fixtures.cases
}

/// Errors per language and the failing cases, for one segmenter.
fn measure(
    cases: &[Case],
    split: fn(&str) -> Vec<Segment>,
) -> (usize, BTreeMap<String, (usize, usize)>, Vec<String>) {
    let mut errors = 0;
    let mut per_lang: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for case in cases {
        let got: Vec<String> = split(&case.text).into_iter().map(|s| s.text).collect();
        let entry = per_lang.entry(case.lang.clone()).or_default();
        entry.1 += 1;
        if got != case.expected {
            errors += 1;
            entry.0 += 1;
            failures.push(format!(
                "[{}] {:?}\n   got      {:?}\n   expected {:?}",
                case.lang, case.text, got, case.expected
            ));
        }
    }
    (errors, per_lang, failures)
}

#[test]
fn fixture_set_is_large_and_multilingual() {
    let cases = load();
    let langs: std::collections::BTreeSet<&str> = cases.iter().map(|c| c.lang.as_str()).collect();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    assert!(langs.len() >= 6, "{langs:?}");
}

#[test]
fn guarded_scanner_beats_naive_split() {
    let cases = load();
    let n = cases.len();
    let (naive_errors, naive_langs, _) = measure(&cases, segment_naive);
    let (errors, langs, failures) = measure(&cases, segment);
    let rate = |e: usize| 100.0 * e as f64 / n as f64;
    println!("segmentation fixtures: {n} cases");
    println!(
        "naive [.!?\\n]+ split: {naive_errors}/{n} wrong = {:.1}%",
        rate(naive_errors)
    );
    println!(
        "guarded scanner:      {errors}/{n} wrong = {:.1}%",
        rate(errors)
    );
    for (lang, (e, total)) in &langs {
        let (ne, _) = naive_langs[lang];
        println!("  {lang}: naive {ne}/{total}, guarded {e}/{total}");
    }
    for f in &failures {
        println!("guarded failure: {f}");
    }
    assert!(
        naive_errors > errors,
        "the guarded scanner must beat the naive split"
    );
    assert!(
        rate(errors) < 5.0,
        "guarded error rate {:.1}% not below 5%",
        rate(errors)
    );
}

#[test]
fn offsets_are_exact_on_every_fixture() {
    for case in load() {
        let segs = segment(&case.text);
        let mut last = 0;
        for s in &segs {
            assert!(s.start >= last && s.start < s.end, "{:?}", case.text);
            assert_eq!(&case.text[s.start..s.end], s.text);
            last = s.end;
        }
        for (b, c) in case.text.char_indices() {
            if !c.is_whitespace() {
                assert!(
                    segs.iter().any(|s| s.start <= b && b < s.end),
                    "{c:?} lost in {:?}",
                    case.text
                );
            }
        }
    }
}
