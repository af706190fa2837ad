//! Every rule pack shipped under `rules/` loads, validates and meets its samples'
//! expectations; shipped packs load together without clashes.

use prooflog::pack::{Pack, PackSet};

fn shipped() -> Vec<Pack> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/rules");
    let mut dirs: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("pack.ron").exists())
        .collect();
    dirs.sort();
    dirs.iter().map(|d| Pack::load(d).unwrap()).collect()
}

#[test]
fn every_shipped_pack_passes_its_samples() {
    let packs = shipped();
    let names: Vec<&str> = packs.iter().map(Pack::name).collect();
    assert_eq!(names, ["access", "drones", "org"]);
    for pack in &packs {
        let report = pack.check().unwrap();
        assert!(!report.samples.is_empty(), "{} has no sample", pack.name());
        for s in &report.samples {
            assert!(s.passed, "{} / {}: {:?}", pack.name(), s.name, s.checks);
        }
        assert!(!pack.manifest().goals.is_empty());
    }
}

#[test]
fn shipped_packs_load_together() {
    let set = PackSet::new(shipped()).unwrap();
    assert_eq!(set.packs().len(), 3);
    assert!(set.request_goal("reports_to").is_ok());
    assert!(set.request_goal("can(\"ana\", p, r)").is_ok());
    assert!(set.request_goal("drones/threatens").is_ok());
}

#[test]
fn the_bundled_pack_is_the_shipped_drones_pack() {
    let bundled = prooflog::bundled::default_pack();
    let on_disk = Pack::load(concat!(env!("CARGO_MANIFEST_DIR"), "/rules/drones")).unwrap();
    assert_eq!(bundled.manifest(), on_disk.manifest());
    assert_eq!(bundled.describe().goals, on_disk.describe().goals);
}

#[test]
fn the_org_pack_declares_functional_keys_and_verbalisations() {
    let set = Pack::load(concat!(env!("CARGO_MANIFEST_DIR"), "/rules/org"))
        .unwrap()
        .compile()
        .unwrap();
    let program = set.program();
    let works_in = program.relation(program.relation_id("works_in").unwrap());
    assert_eq!(works_in.functional, Some(vec![0]));
    assert!(works_in.text.is_some());
}
