//! A digest of a fact base, to compare two builds' or two settings' results.

/// A digest of everything a fact base answers: every relation's facts in value
/// order with their confidences and, with provenance, their recorded derivations
/// (rule, height, premises by value), so that two runs can be compared.
/// `WORKLOAD_DIGEST=ranks` leaves the premises out: two builds that may record
/// different derivations among equally good ones (same confidence, height and rule)
/// digest the same.
pub fn digest(fb: &prooflog::eval::FactBase, premises: bool) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for rel in 0..fb.program().relations().len() as u32 {
        for f in fb.sorted_facts(rel) {
            format!("{:?}", fb.args(f)).hash(&mut h);
            fb.confidence(f).to_bits().hash(&mut h);
            if let Some(d) = fb.derivation(f) {
                (d.rule, d.height).hash(&mut h);
                for p in d.premises.iter().filter(|_| premises) {
                    (p.rel, format!("{:?}", fb.args(*p))).hash(&mut h);
                }
            }
        }
    }
    h.finish()
}
