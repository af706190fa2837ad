//! Using prooflog as a library: compile a program from text, load facts and evidence,
//! evaluate, then read rows, match a pattern, and ask why a fact holds.
//!
//! Run with `cargo run --example basic`.

use prooflog::store::Loader;
use prooflog::syntax::parse_goal;
use prooflog::{EvalOptions, Value, eval};

const PROGRAM: &str = r#"
.decl edge(src: number, dst: number)
.decl path(src: number, dst: number)
.output path

@name("path_base")
@confidence(0.9)
path(x, y) :- edge(x, y).

@name("path_step")
path(x, z) :- path(x, y), edge(y, z).
"#;

const FACTS: &str = r#"{"edge": [[1, 2], [2, 3]]}"#;

const EVIDENCE: &str = r#"{"predicate": "edge", "args": [3, 4], "confidence": 0.6, "provenance": {"table": "ROADS", "edge_idx": 17}}
"#;

fn main() -> prooflog::Result<()> {
    // 1. Program text, a fact document and evidence, loaded all or nothing.
    let mut loader = Loader::new();
    loader.program_text("reach.dl", PROGRAM);
    loader.facts_json("edges.json", FACTS)?;
    loader.evidence_jsonl("roads.jsonl", EVIDENCE)?;
    let loaded = loader.load()?;
    for f in &loaded.facts {
        println!(
            "input {} conf {} HEDGE-{}",
            prooflog::value::fact_text(&loaded.program.relation(f.rel).name, &f.args),
            f.confidence,
            f.provenance.edge_idx.unwrap_or_default()
        );
    }

    // 2. Evaluate, recording derivations.
    let options = EvalOptions::default();
    let facts = eval::evaluate(loaded.program, loaded.facts, &options)?;

    // 3. Every row of a relation, sorted.
    let path = facts.relation_id("path").expect("the program defines path");
    for row in facts.rows(path) {
        println!("{}", prooflog::value::fact_text("path", &row));
    }

    // 4. A pattern query: where can we get from 1?
    let goal = parse_goal("path(1, to)")?;
    for m in facts.query(&goal)? {
        let bound: Vec<String> = m
            .bindings
            .iter()
            .map(|(name, value)| format!("{name} = {value}"))
            .collect();
        println!(
            "path(1, to): {} (confidence {})",
            bound.join(", "),
            m.confidence
        );
    }

    // 5. One fact's confidence and the derivation that gives it.
    let fact = facts
        .lookup(path, &[Value::Number(1), Value::Number(4)])
        .expect("1 reaches 4");
    println!(
        "{} has confidence {}",
        facts.fact_text(fact),
        facts.confidence(fact)
    );
    if let Some(d) = facts.derivation(fact) {
        let rule = facts.program().rule(d.rule);
        let premises: Vec<String> = d.premises.iter().map(|&p| facts.fact_text(p)).collect();
        println!(
            "  by {} (RULE-{}) from {} (height {})",
            rule.name,
            d.rule,
            premises.join(", "),
            d.height
        );
    }
    Ok(())
}
