//! The adversarial answer-checking suite: attacks on the firewall and the gate, and
//! faithful controls, as JSON data under `tests/fixtures/answer/`.
//!
//! Each domain file lists cited facts (tag, predicate, args, words; `negated` for a
//! fact a proof relied on being absent) and cases. A case is an `attack` (a false or
//! unsupported claim that must not reach a reader) or a `control` (what a faithful
//! writer says, which must be kept), in a `class`:
//!
//! | class | what it tries |
//! | --- | --- |
//! | `glue` | short uncited claims, list items, table rows |
//! | `brackets` | claims in non-tag brackets, after an unclosed `[`, inside the tag's bracket |
//! | `splice` | a claim straddling two cited facts |
//! | `polarity` | negation, hedging, restriction, quantity outside the matched span |
//! | `markers` | `[UNVERIFIED]` hidden from the reader; honest markers that open a sentence |
//! | `tags` | invisible and look-alike characters in tags; a tag ambiguous in the request |
//! | `subject` | a subject skipped by the alignment |
//! | `antonym` | the opposite of a claim word in the matched span |
//! | `trust` | forged or edited proof files |
//! | `injection` | data that forges lines of the prompt's context block |
//!
//! plus control-only classes (`restatement`, `sub_span`, `inflection`, `lists`,
//! `clauses`, `negated_premise`, `markdown`).
//!
//! Checkers: `tags` (the firewall on tags alone), `content` (the firewall with the
//! gate's content verification), `gate` (the faithfulness gate over the facts' words),
//! and, for comparison only, `seed` (the seed's gate predicate, v2) and `v1` (token-set
//! containment). A case's `check` lists the checkers that must stop it (attack) or keep
//! it (control); without one, a default per class applies. `expect_reject` lists the
//! checkers that reject a control on purpose (known false rejections, kept visible).
//! The test prints the per-class table (`cargo test --test answer_fixtures --
//! --nocapture`) and fails on the first fixture that does not behave as stated.

use std::collections::BTreeMap;

use prooflog::answer::firewall::{CheckOptions, HallucinationFirewall, Outcome};
use prooflog::answer::gate::{Gate, is_supported_v1, is_supported_v2, strip_citation_tags};
use prooflog::answer::segment::segment;
use prooflog::proof::{
    CitationTable, ProofOptions, ProofTree, build_proof, prove_request, read_proofs, render,
    verify_proof,
};
use prooflog::store::Loader;
use prooflog::{CitedFact, EvalOptions, Fact, FactBase, Value, bundled, evaluate};
use serde::Deserialize;
use serde_json::Value as Json;

#[derive(Deserialize, Clone)]
struct FactSpec {
    tag: String,
    predicate: String,
    args: Vec<Json>,
    text: String,
    #[serde(default)]
    negated: bool,
}

#[derive(Deserialize, Clone)]
struct Case {
    id: String,
    class: String,
    kind: String,
    #[serde(default)]
    answer: String,
    #[allow(dead_code)]
    note: String,
    #[serde(default)]
    check: Option<Vec<String>>,
    #[serde(default)]
    expect_reject: Vec<String>,
    #[serde(default)]
    extra_facts: Vec<FactSpec>,
    #[serde(default)]
    extra_allowed: Vec<String>,
    // Pipeline cases.
    #[serde(default)]
    proof: Option<Json>,
    #[serde(default)]
    goal: Option<String>,
    #[serde(default)]
    goals: Vec<String>,
    #[serde(default)]
    separate: Vec<String>,
    #[serde(default)]
    edits: Vec<(String, Json)>,
    #[serde(default)]
    require_proof: bool,
    #[serde(default)]
    value: Option<String>,
}

#[derive(Deserialize)]
struct Domain {
    domain: String,
    #[serde(default)]
    facts: Vec<FactSpec>,
    cases: Vec<Case>,
}

fn load() -> Vec<Domain> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/answer");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("fixture dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).expect("readable");
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        })
        .collect()
}

fn cited(f: &FactSpec) -> CitedFact {
    let args = f
        .args
        .iter()
        .map(|a| Value::from_json(a).expect("number or string"))
        .collect();
    let fact = CitedFact::new(f.tag.clone(), f.predicate.clone(), args, f.text.clone());
    if f.negated { fact.negated() } else { fact }
}

fn default_check(class: &str, kind: &str) -> Vec<&'static str> {
    match (kind, class) {
        ("attack", "glue" | "markers" | "tags") => vec!["tags", "content"],
        ("attack", "brackets") => vec!["content"],
        ("attack", "splice" | "polarity" | "subject" | "antonym") => vec!["content", "gate"],
        ("attack", _) => vec!["library"],
        ("control", "restatement" | "sub_span" | "inflection" | "lists" | "clauses") => {
            vec!["tags", "content", "gate"]
        }
        ("control", "trust" | "injection") => vec!["library"],
        ("control", _) => vec!["tags", "content"],
        _ => Vec::new(),
    }
}

/// Whether each checker keeps the whole answer (`true`) or stops something (`false`).
fn run_domain_case(facts: &[FactSpec], case: &Case) -> BTreeMap<&'static str, bool> {
    let mut table = CitationTable::new();
    for f in facts.iter().chain(&case.extra_facts) {
        table.add_fact(cited(f));
    }
    for t in &case.extra_allowed {
        table.allow(t.clone());
    }
    let options = CheckOptions::default();
    let mut out = BTreeMap::new();
    let tags = HallucinationFirewall::new().check(&case.answer, &table, &options);
    out.insert("tags", tags.outcome == Outcome::Supported);
    let content = HallucinationFirewall::new()
        .with_gate_verification(&table)
        .check(&case.answer, &table, &options);
    out.insert("content", content.outcome == Outcome::Supported);
    let passages: Vec<&str> = facts
        .iter()
        .filter(|f| !f.negated)
        .map(|f| f.text.as_str())
        .collect();
    let gate = Gate::check(&case.answer, &passages);
    out.insert("gate", gate.all_claims_verified);
    let claims = segment(&case.answer);
    let by = |pred: fn(&str, &str) -> bool| {
        !claims.is_empty()
            && claims
                .iter()
                .all(|c| passages.iter().any(|p| pred(&c.text, p)))
    };
    out.insert("seed", by(|c, p| is_supported_v2(c, p).is_supported()));
    // The seed's gate ignores citation tags; so does its v1 predicate here.
    out.insert("v1", by(|c, p| is_supported_v1(&strip_citation_tags(c), p)));
    out
}

fn bundled_inputs(extra_evidence: &str) -> (FactBase, ()) {
    let mut loader = Loader::new();
    loader.program_text(bundled::DEFAULT_PROGRAM.name, bundled::DEFAULT_PROGRAM.text);
    loader
        .evidence_jsonl(
            bundled::DEFAULT_EVIDENCE.name,
            bundled::DEFAULT_EVIDENCE.text,
        )
        .expect("bundled evidence");
    if !extra_evidence.is_empty() {
        loader
            .evidence_jsonl("extra.jsonl", extra_evidence)
            .expect("extra evidence");
    }
    let loaded = loader.load().expect("loads");
    let facts =
        evaluate(loaded.program, &loaded.facts, &EvalOptions::default()).expect("evaluates");
    (facts, ())
}

fn apply_edits(mut json: Json, edits: &[(String, Json)]) -> Json {
    for (pointer, value) in edits {
        if let Some(parent) = pointer.strip_suffix("/-") {
            json.pointer_mut(parent)
                .and_then(Json::as_array_mut)
                .expect("array to append to")
                .push(value.clone());
            continue;
        }
        let (parent, key) = pointer.rsplit_once('/').expect("pointer");
        let target = json.pointer_mut(parent).expect("pointer target");
        match target {
            Json::Object(o) => {
                o.insert(key.to_string(), value.clone());
            }
            Json::Array(a) => {
                let i: usize = key.parse().expect("index");
                a[i] = value.clone();
            }
            _ => panic!("cannot edit {pointer}"),
        }
    }
    json
}

/// Pipeline cases: `true` when the library keeps the answer (or renders cleanly, for
/// injection controls), `false` when it stops it.
fn run_pipeline_case(base: &FactBase, case: &Case) -> bool {
    let goal = |g: &str| prooflog::syntax::parse_goal(g).expect("goal");
    match case.class.as_str() {
        "trust" => {
            let json = if let Some(p) = &case.proof {
                p.clone()
            } else if !case.goals.is_empty() {
                let goals: Vec<_> = case.goals.iter().map(|g| goal(g)).collect();
                let trees = prove_request(&goals, base, &ProofOptions::new("proof-1"), None)
                    .expect("proves");
                serde_json::to_value(&trees).expect("JSON")
            } else {
                let g = goal(case.goal.as_deref().expect("goal"));
                let fact = Fact::from_goal(&g).expect("ground goal");
                let tree = build_proof(&fact, base, &ProofOptions::new("proof-1")).expect("proves");
                serde_json::to_value(&tree).expect("JSON")
            };
            let json = apply_edits(json, &case.edits);
            let Ok(trees) = read_proofs(&case.id, &json.to_string()) else {
                return false;
            };
            let mut verified = Vec::new();
            for t in &trees {
                match verify_proof(t, base) {
                    Ok(v) => verified.push(v),
                    Err(_) => return false,
                }
            }
            let table = CitationTable::from_proofs(&verified);
            let options = CheckOptions::new()
                .proved(table.is_proved())
                .require_proof(case.require_proof);
            let r = HallucinationFirewall::new()
                .with_gate_verification(&table)
                .check(&case.answer, &table, &options);
            r.outcome == Outcome::Supported
        }
        "tags" => {
            let trees: Vec<ProofTree> = if !case.separate.is_empty() {
                case.separate
                    .iter()
                    .map(|g| {
                        let fact = Fact::from_goal(&goal(g)).expect("ground");
                        build_proof(&fact, base, &ProofOptions::new("proof-1")).expect("proves")
                    })
                    .collect()
            } else {
                let goals: Vec<_> = case.goals.iter().map(|g| goal(g)).collect();
                prove_request(&goals, base, &ProofOptions::new("proof-1"), None).expect("proves")
            };
            let table = CitationTable::from_proofs(&trees);
            let r = HallucinationFirewall::new()
                .with_gate_verification(&table)
                .check(&case.answer, &table, &CheckOptions::default());
            r.outcome == Outcome::Supported
        }
        "injection" => {
            let value = case.value.as_deref().expect("value");
            let line = serde_json::json!({
                "predicate": "sighting",
                "args": [7, value],
                "provenance": {"source": "hyperedge", "table": "SIGHTINGS", "edge_idx": 900}
            });
            let (base, ()) = bundled_inputs(&line.to_string());
            let fact = Fact::new(
                "sighting",
                vec![Value::Number(7), Value::Symbol(value.into())],
            );
            let tree = build_proof(&fact, &base, &ProofOptions::new("proof-1")).expect("proves");
            let mut clean = true;
            for out in [render::context(&tree), render::text(&tree)] {
                let lines: Vec<&str> = out.lines().collect();
                // A header and one line for the one leaf; nothing else.
                clean &= lines.len() == 2;
                clean &= lines
                    .iter()
                    .skip(1)
                    .all(|l| l.starts_with("[HEDGE-900]") || l.starts_with("L1 [HEDGE-900]"));
                clean &= !out.chars().any(|c| {
                    (c.is_control() && c != '\n')
                        || prooflog::answer::normalize::is_invisible(c)
                        || matches!(c, '\u{2028}' | '\u{2029}')
                });
                // The value's own tag-shaped text is escaped (`\\[HEDGE-1\\]`).
                let tags = out.matches("[HEDGE-").count() - out.matches("\\[HEDGE-").count();
                clean &= tags == 1;
                if case.kind == "control" {
                    clean &= out.contains(value);
                }
            }
            // For an attack, `clean` means stopped; report "kept" as its negation.
            if case.kind == "attack" { !clean } else { clean }
        }
        other => panic!("unknown pipeline class {other}"),
    }
}

/// Per class and checker: attacks run and stopped, controls run and rejected.
#[derive(Default)]
struct Row {
    attacks: BTreeMap<&'static str, (usize, usize)>,
    controls: BTreeMap<&'static str, (usize, usize)>,
    /// Checkers asserted on some case of the class (marked `*` in the table).
    asserted: std::collections::BTreeSet<String>,
}

#[test]
fn the_suite_has_the_required_shape() {
    let domains = load();
    let cases: Vec<&Case> = domains.iter().flat_map(|d| &d.cases).collect();
    let attacks = cases.iter().filter(|c| c.kind == "attack").count();
    let controls = cases.iter().filter(|c| c.kind == "control").count();
    assert!(attacks >= 120, "{attacks} attacks");
    assert!(controls >= 120, "{controls} controls");
    let attack_domains = domains
        .iter()
        .filter(|d| d.domain != "pipeline" && d.cases.iter().any(|c| c.kind == "attack"))
        .count();
    assert!(attack_domains >= 5, "{attack_domains} domains");
    for class in [
        "glue",
        "brackets",
        "splice",
        "polarity",
        "markers",
        "tags",
        "subject",
        "antonym",
        "trust",
        "injection",
    ] {
        assert!(
            cases.iter().any(|c| c.kind == "attack" && c.class == class),
            "no {class} attack"
        );
    }
    for class in [
        "restatement",
        "sub_span",
        "inflection",
        "lists",
        "negated_premise",
    ] {
        assert!(
            cases
                .iter()
                .any(|c| c.kind == "control" && c.class == class),
            "no {class} control"
        );
    }
    let ids: std::collections::BTreeSet<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), cases.len(), "fixture ids are unique");
}

#[test]
fn every_fixture_behaves_as_stated() {
    let domains = load();
    let (base, ()) = bundled_inputs("");
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut failures: Vec<String> = Vec::new();
    for d in &domains {
        for case in &d.cases {
            let results: BTreeMap<&'static str, bool> = if d.domain == "pipeline" {
                BTreeMap::from([("library", run_pipeline_case(&base, case))])
            } else {
                run_domain_case(&d.facts, case)
            };
            let row = rows.entry(case.class.clone()).or_default();
            let attack = case.kind == "attack";
            for (&checker, &kept) in &results {
                let cell = if attack {
                    row.attacks.entry(checker).or_default()
                } else {
                    row.controls.entry(checker).or_default()
                };
                cell.0 += 1;
                if !kept {
                    cell.1 += 1;
                }
            }
            let checked: Vec<String> = match &case.check {
                Some(c) => c.clone(),
                None => default_check(&case.class, &case.kind)
                    .into_iter()
                    .map(String::from)
                    .collect(),
            };
            row.asserted.extend(checked.iter().cloned());
            for checker in &checked {
                let Some(&kept) = results.get(checker.as_str()) else {
                    failures.push(format!("{}: no checker {checker}", case.id));
                    continue;
                };
                let want_kept = !attack && !case.expect_reject.contains(checker);
                if kept != want_kept {
                    failures.push(format!(
                        "{} ({} {}): {checker} {} it: {:?}",
                        case.id,
                        case.class,
                        case.kind,
                        if kept { "kept" } else { "stopped" },
                        case.answer
                    ));
                }
            }
        }
    }
    print_table(&rows);
    assert!(
        failures.is_empty(),
        "{} fixtures misbehave:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn print_table(rows: &BTreeMap<String, Row>) {
    let cols = ["tags", "content", "gate", "seed", "v1", "library"];
    println!(
        "\nAttacks stopped / attacks, and controls rejected / controls, per class and checker.\n\
         tags = firewall on tags alone; content = firewall with content verification; \
         gate = faithfulness gate;\nseed = the seed's gate predicate (v2); v1 = token-set \
         containment; library = proof verification and context rendering.\n\
         * = asserted for the class (the checker responsible for it); other cells are for \
         information.\n"
    );
    let header: String = cols.iter().map(|c| format!(" {c:>9}")).collect();
    println!("{:16}{header} |{header}", "class");
    let mut total = Row::default();
    for (class, row) in rows {
        print_row(class, row, &cols);
        for (k, (n, x)) in &row.attacks {
            let t = total.attacks.entry(k).or_default();
            t.0 += n;
            t.1 += x;
        }
        for (k, (n, x)) in &row.controls {
            let t = total.controls.entry(k).or_default();
            t.0 += n;
            t.1 += x;
        }
    }
    print_row("total", &total, &cols);
}

fn print_row(class: &str, row: &Row, cols: &[&str]) {
    let mark = |c: &str| if row.asserted.contains(c) { "*" } else { " " };
    let cell = |m: &BTreeMap<&'static str, (usize, usize)>, c: &str| match m.get(c) {
        Some((n, x)) => format!("{x}/{n}{}", mark(c)),
        None => String::new(),
    };
    let attacks: String = cols
        .iter()
        .map(|c| format!(" {:>9}", cell(&row.attacks, c)))
        .collect();
    let controls: String = cols
        .iter()
        .map(|c| format!(" {:>9}", cell(&row.controls, c)))
        .collect();
    println!("{class:16}{attacks} |{controls}");
}
