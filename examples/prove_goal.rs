//! Prove a goal of a rule pack and show the proof three ways: as a tree, as the
//! tagged context block a model reads, and as the tags an answer may cite; then ask
//! why a goal that does not hold is not proved.
//!
//! Run with `cargo run --example prove_goal`.

use prooflog::bundled::{DEFAULT_HYPEREDGES, default_pack};
use prooflog::pipeline::why_not;
use prooflog::proof::{Fact, ProofOptions, build_proof, render};
use prooflog::store::read_hyperedges;
use prooflog::syntax::parse_goal;
use prooflog::{EvalOptions, Value};

fn main() -> prooflog::Result<()> {
    // The embedded drone pack and its sample hyperedges.
    let set = default_pack().compile()?;
    let edges = read_hyperedges(DEFAULT_HYPEREDGES.name, DEFAULT_HYPEREDGES.text)?;
    let facts = set.evaluate(&set.facts_of(&edges)?, &EvalOptions::default())?;

    let goal = Fact::new(
        "threatens",
        vec![Value::Number(42), Value::Symbol("airport".into())],
    );
    let proof = build_proof(&goal, &facts, &ProofOptions::new("proof-1"))?;
    println!("{}", render::text(&proof));
    println!("{}", render::context(&proof));
    println!("tags an answer may cite: {:?}\n", proof.evidence_tags());

    // Group 42 does not threaten the harbor: why not?
    let harbor = parse_goal("threatens(42, \"harbor\")")?;
    let w = why_not(&facts, &harbor);
    println!("{} is not proved:", w.goal);
    let mut level = Some(&w);
    while let Some(x) = level {
        if let Some(rule) = &x.rule {
            println!("  {} [{}] stops at {:?}", rule.name, rule.tag, x.blocker);
        }
        level = x.because.as_deref();
    }
    Ok(())
}
