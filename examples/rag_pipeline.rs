//! The symbolic layer of a RAG service: the organisation pack evaluated once, then
//! three requests, each with the evidence its retriever found, answered at the same
//! time from three threads over the one shared base.
//!
//! Run with `cargo run --example rag_pipeline` (from the repository root).

use std::sync::Arc;

use prooflog::pack::{Pack, PackSet};
use prooflog::pipeline::{Mode, Pipeline, Request};
use prooflog::store::{Hyperedge, read_hyperedges};

fn main() -> prooflog::Result<()> {
    // The pack: rules, evidence tables, goals (rules/org/pack.ron).
    let pack = Pack::load("rules/org")?;
    let set = PackSet::new(vec![pack.clone()])?;

    // The shared base: the HR roster and the org chart (the stored knowledge).
    let stored = read_hyperedges(
        "rules/org/hyperedges.jsonl",
        pack.file("hyperedges.jsonl").unwrap_or_default(),
    )?;
    let (base, _minutes): (Vec<Hyperedge>, Vec<Hyperedge>) = stored
        .into_iter()
        .partition(|h| matches!(h.table.as_str(), "EMPLOYMENT" | "MANAGEMENT" | "DEPARTURES"));
    let base_facts = set.facts_of(&base)?;
    let pipeline = Arc::new(Pipeline::new(set, &base_facts)?.with_mode(Mode::Strict));
    println!(
        "base: {} stored records, evaluated once ({} facts)\n",
        base.len(),
        pipeline.base().facts().stats().input_facts
            + pipeline.base().facts().stats().derived_facts()
    );

    // Three requests, each with what its retriever found.
    let requests = [
        Request::new("reports_to(\"alice\", manager)").question("Who is Alice's manager?"),
        Request::new("met_with(\"alice\", other, date)")
            .question("Whom did Alice meet, and when?")
            .evidence([
                Hyperedge::new("CALENDAR", vec!["roadmap-review".into()])
                    .attr("date", 20240312)
                    .from_doc("calendar-export", 0, 52),
                Hyperedge::new("ATTENDANCE", vec!["alice".into(), "roadmap-review".into()])
                    .from_doc("minutes-roadmap-review", 10, 58),
                Hyperedge::new("ATTENDANCE", vec!["carol".into(), "roadmap-review".into()])
                    .from_doc("minutes-roadmap-review", 10, 58),
            ]),
        Request::new("reports_to(\"frank\", manager)")
            .question("Who does Frank, hired last week, report to?")
            .evidence([Hyperedge::new("EMPLOYMENT", vec!["frank".into()])
                .attr("department", "sales")
                .conf(0.9)
                .from_doc("offer-letter-frank", 0, 80)]),
    ];

    let answers = std::thread::scope(|s| {
        let handles: Vec<_> = requests
            .iter()
            .map(|r| {
                let pipeline = Arc::clone(&pipeline);
                s.spawn(move || pipeline.answer(r))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a request thread"))
            .collect::<prooflog::Result<Vec<_>>>()
    })?;

    for a in &answers {
        println!("Q: {}", a.question);
        println!("A: {}", a.answer);
        println!(
            "   firewall: {} | overlay: {} evidence, {} facts derived, {} µs | total {} µs\n",
            a.firewall["outcome"],
            a.overlay.evidence,
            a.overlay.derived_facts,
            a.timings.overlay_us,
            a.timings.total_us
        );
    }
    // The base is untouched: Frank is only in the third request's overlay.
    let frank = prooflog::syntax::parse_goal("works_in(\"frank\", d)")?;
    assert!(pipeline.base().facts().query(&frank)?.is_empty());
    Ok(())
}
