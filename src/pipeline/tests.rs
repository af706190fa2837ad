use super::*;
use crate::bundled::{DEFAULT_HYPEREDGES, default_pack};
use crate::store::read_hyperedges;

/// The default pack with its registry and clearances as the base; the radar log's
/// sightings are what a request retrieves.
fn drones() -> (Pipeline, Vec<Hyperedge>) {
    let all = read_hyperedges(DEFAULT_HYPEREDGES.name, DEFAULT_HYPEREDGES.text).unwrap();
    let (sightings, base): (Vec<_>, Vec<_>) = all.into_iter().partition(|h| h.table == "SIGHTINGS");
    let pipeline = Pipeline::from_hyperedges(vec![default_pack()], &base).unwrap();
    (pipeline, sightings)
}

#[test]
fn a_request_proves_renders_generates_and_checks() {
    let (pipeline, sightings) = drones();
    let request = Request::new("threatens(42, zone)")
        .goal("threatens(42, \"harbor\")")
        .evidence(sightings)
        .mode(Mode::Strict);
    let answer = pipeline.answer(&request).unwrap();
    assert!(answer.goals[0].proved);
    assert!(!answer.goals[1].proved);
    assert_eq!(
        answer.question,
        "Which restricted zones does group 42 threaten? Which restricted zones does group 42 threaten?"
    );
    // The request's evidence is cited with its document and span.
    assert!(
        answer.context.contains("[HEDGE-101] drone 9 was sighted in zone airport (confidence 0.85; hyperedge SIGHTINGS #101, doc radar-log-2023-11-14 chars 120-176, verified)"),
        "{}",
        answer.context
    );
    // Why not harbor: drone 7 intruded nowhere, because it was cleared.
    let w = answer.goals[1].why_not.as_ref().unwrap();
    assert_eq!(w.rule.as_ref().unwrap().name, "threatens");
    let cause = w.root_cause();
    assert_eq!(cause.rule.as_ref().unwrap().name, "intrusion");
    assert!(matches!(&cause.blocker, Blocker::Present { fact, .. } if fact == "cleared(7)"));
    let blocker = answer.goals[1].blocker_proof.as_ref().unwrap();
    assert!(blocker.evidence_tags().contains("HEDGE-200"));
    assert!(
        answer
            .context
            .contains("but it does: [HEDGE-200] drone 7 was cleared by an operator"),
        "{}",
        answer.context
    );
    // The extractive answer survives strict checking whole.
    assert_eq!(
        answer.firewall["outcome"], "supported",
        "{:#?}",
        answer.claims
    );
    assert_eq!(answer.answer, answer.raw_answer);
    assert!(
        answer
            .answer
            .starts_with("Group 42 threatens zone airport [STEP-1]."),
        "{}",
        answer.answer
    );
    assert!(
        answer
            .answer
            .contains("Drone 7 was cleared by an operator [HEDGE-200].")
    );
    assert_eq!(answer.overlay.evidence, 2);
}

#[test]
fn step_tags_are_unique_across_a_requests_proofs() {
    let (pipeline, sightings) = drones();
    let request = Request::new("threatens(42, \"airport\")")
        .goal("coordinated_threat(42)")
        .goal("intrusion(9, zone)")
        .evidence(sightings);
    let answer = pipeline.answer(&request).unwrap();
    let mut by_tag: std::collections::BTreeMap<String, String> = Default::default();
    for tree in answer.proofs() {
        for node in &tree.nodes {
            if let crate::proof::ProofNode::Conclusion(c) = node {
                let prev = by_tag.insert(c.step_tag.clone(), c.fact.clone());
                assert!(
                    prev.is_none_or(|p| p == c.fact),
                    "{} names two facts",
                    c.step_tag
                );
                assert_eq!(c.id, c.step_tag.replace("STEP-", "S"));
            }
        }
    }
    // coordinated_threat(42) is STEP-2 in the first proof and keeps it in the second.
    assert_eq!(by_tag["STEP-2"], "coordinated_threat(42)");
    assert_eq!(answer.goals[1].proofs[0].goal.root.as_deref(), Some("S2"));
}

#[test]
fn the_firewall_strips_what_the_proofs_do_not_support() {
    let (pipeline, sightings) = drones();
    let extra = "Group 42 is operated by a hostile state [HEDGE-43].";
    let pipeline = pipeline.with_generator(WithExtraSentence {
        inner: ExtractiveGenerator::default(),
        sentence: extra.into(),
    });
    let request = Request::new("threatens(42, zone)").evidence(sightings.clone());
    // Standard: the tag is allowed, so only content verification catches it.
    let standard = pipeline
        .answer(&request.clone().mode(Mode::Standard))
        .unwrap();
    assert_eq!(standard.firewall["outcome"], "supported");
    let strict = pipeline
        .answer(&request.clone().mode(Mode::Strict))
        .unwrap();
    assert_eq!(strict.firewall["outcome"], "stripped");
    assert_eq!(strict.stripped().count(), 1);
    assert!(!strict.answer.contains("hostile"));
    let audit = pipeline.answer(&request.mode(Mode::Audit)).unwrap();
    assert!(audit.answer.contains("hostile"));
    assert_eq!(audit.stripped().count(), 0);
    // An uncited claim is stripped in every checking mode.
    let pipeline = pipeline.with_generator(FixedGenerator(
        "Group 42 threatens zone airport [STEP-1]. Drone 3 carries explosives and flies at night."
            .into(),
    ));
    let a = pipeline
        .answer(&Request::new("threatens(42, zone)").evidence(sightings))
        .unwrap();
    assert_eq!(a.firewall["stripped_count"], 1);
    assert_eq!(a.answer, "Group 42 threatens zone airport [STEP-1].");
}

#[test]
fn strict_mode_abstains_without_a_proof() {
    let (pipeline, _) = drones();
    // Without the request's sightings nothing threatens anything.
    let a = pipeline
        .answer(&Request::new("threatens(42, zone)").mode(Mode::Strict))
        .unwrap();
    assert!(!a.proved());
    assert_eq!(a.firewall["outcome"], "abstained");
    let w = a.goals[0].why_not.as_ref().unwrap();
    assert!(
        matches!(w.root_cause().blocker, Blocker::Missing { .. }),
        "{w:?}"
    );
    assert!(pipeline.answer(&Request::default()).is_err());
    assert!(pipeline.answer(&Request::new("flies(1)")).is_err());
}

#[test]
fn requests_run_concurrently_and_leave_the_base_alone() {
    let (pipeline, sightings) = drones();
    let pipeline = Arc::new(pipeline);
    let base_facts = pipeline.base().facts().stats().input_facts;
    std::thread::scope(|s| {
        for t in 0..4 {
            let pipeline = Arc::clone(&pipeline);
            let sightings = sightings.clone();
            s.spawn(move || {
                for _ in 0..10 {
                    let evidence = if t % 2 == 0 {
                        sightings.clone()
                    } else {
                        Vec::new()
                    };
                    let a = pipeline
                        .answer(&Request::new("threatens(42, zone)").evidence(evidence))
                        .unwrap();
                    assert_eq!(a.proved(), t % 2 == 0);
                }
            });
        }
    });
    assert_eq!(pipeline.base().facts().stats().input_facts, base_facts);
    let q = crate::syntax::parse_goal("sighting(d, z)").unwrap();
    assert!(pipeline.base().facts().query(&q).unwrap().is_empty());
}

#[test]
fn answers_serialise() {
    let (pipeline, sightings) = drones();
    let a = pipeline
        .answer(&Request::new("threatens").evidence(sightings))
        .unwrap();
    let j: serde_json::Value = serde_json::from_str(&a.to_json_pretty()).unwrap();
    assert_eq!(j["mode"], "standard");
    assert_eq!(j["goals"][0]["proofs"][0]["goal"]["predicate"], "threatens");
    assert!(j["timings"]["total_us"].as_u64().is_some());
    assert_eq!(j["firewall"]["outcome"], "supported");
}
