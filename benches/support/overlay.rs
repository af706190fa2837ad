//! The per-request workload shared by `benches/overlay.rs` and
//! `examples/overlay_latency.rs`: a drone-surveillance base of about a million facts,
//! and requests of 100 new sightings each.
#![allow(dead_code)]

use std::sync::Arc;

use prooflog::ir::Program;
use prooflog::store::{InputFact, Provenance};
use prooflog::{EvalOptions, Value};

/// The rules: coordinated groups (a self-join), intrusions guarded by a negation, the
/// zones groups threaten, and a per-zone count of distinct intruders.
pub const PROGRAM: &str = r#"
.decl member(group: number, drone: number)
.decl sighting(drone: number, zone: number)
.decl restricted(zone: number)
.decl cleared(drone: number)
.decl coordinated(group: number)
.decl intrusion(drone: number, zone: number)
.decl threatens(group: number, zone: number)
@confidence(0.9)
coordinated(g) :- member(g, d1), member(g, d2), d1 < d2.
@confidence(0.95)
intrusion(d, z) :- sighting(d, z), restricted(z), !cleared(d).
@confidence(0.8)
threatens(g, z) :- coordinated(g), member(g, d), intrusion(d, z).
"#;

/// Groups; each has `DRONES_PER_GROUP` drones.
pub const GROUPS: i64 = 150_000;
pub const DRONES_PER_GROUP: i64 = 2;
/// Zones; one in `RESTRICTED_EVERY` is restricted.
pub const ZONES: i64 = 10_000;
pub const RESTRICTED_EVERY: i64 = 4;
/// Sightings in the base.
pub const SIGHTINGS: i64 = 400_000;
/// Cleared drones in the base.
pub const CLEARED: i64 = 20_000;
/// New facts per request.
pub const REQUEST_FACTS: usize = 100;

/// A small deterministic generator (SplitMix64), so every run sees the same data.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: i64) -> i64 {
        (self.next() % n as u64) as i64
    }

    pub fn conf(&mut self) -> f64 {
        0.5 + (self.next() % 50) as f64 / 100.0
    }
}

pub fn program() -> Arc<Program> {
    Arc::new(Program::from_source("surveillance.dl", PROGRAM).expect("the program compiles"))
}

fn fact(program: &Program, rel: &str, args: &[i64], confidence: f64, table: &str) -> InputFact {
    InputFact {
        rel: program.relation_id(rel).expect("a relation of the program"),
        args: args.iter().map(|&a| Value::Number(a)).collect(),
        confidence,
        provenance: Provenance {
            source: "hyperedge".into(),
            table: Some(table.into()),
            ..Provenance::default()
        },
    }
}

/// The base's input facts.
pub fn base_inputs(program: &Program) -> Vec<InputFact> {
    let mut rng = Rng(7);
    let mut out = Vec::new();
    for g in 0..GROUPS {
        for k in 0..DRONES_PER_GROUP {
            out.push(fact(
                program,
                "member",
                &[g, g * DRONES_PER_GROUP + k],
                1.0,
                "DRONES",
            ));
        }
    }
    for z in (0..ZONES).step_by(RESTRICTED_EVERY as usize) {
        out.push(fact(program, "restricted", &[z], 1.0, "ZONES"));
    }
    let drones = GROUPS * DRONES_PER_GROUP;
    for _ in 0..SIGHTINGS {
        let (d, z, c) = (rng.below(drones), rng.below(ZONES), rng.conf());
        out.push(fact(program, "sighting", &[d, z], c, "SIGHTINGS"));
    }
    for _ in 0..CLEARED {
        let d = rng.below(drones);
        out.push(fact(program, "cleared", &[d], 1.0, "CLEARANCES"));
    }
    out
}

/// Request `k`'s evidence: `REQUEST_FACTS` new sightings.
pub fn request(program: &Program, k: u64) -> Vec<InputFact> {
    let mut rng = Rng(1_000 + k);
    let drones = GROUPS * DRONES_PER_GROUP;
    (0..REQUEST_FACTS)
        .map(|_| {
            let (d, z, c) = (rng.below(drones), rng.below(ZONES), rng.conf());
            fact(program, "sighting", &[d, z], c, "SIGHTINGS")
        })
        .collect()
}

/// Request `k`'s evidence with one clearance among the sightings: the negation's input
/// changes, so the intrusion stratum (and what reads it) is recomputed.
pub fn request_with_clearance(program: &Program, k: u64) -> Vec<InputFact> {
    let mut facts = request(program, k);
    facts.pop();
    facts.push(fact(
        program,
        "cleared",
        &[(k as i64 * 7919) % (GROUPS * 2)],
        1.0,
        "CLEARANCES",
    ));
    facts
}

pub fn options() -> EvalOptions {
    EvalOptions::default().with_provenance(true)
}

/// Facts in a fact base.
pub fn total_facts(fb: &prooflog::FactBase) -> usize {
    (0..fb.program().relations().len() as u32)
        .map(|r| fb.len(r))
        .sum()
}
