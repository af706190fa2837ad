//! A confidence as an ascent lattice (join max, meet min, totally ordered): what
//! ascent needs to compute a weighted transitive closure's best confidences, shared
//! by the oracle tests and the benchmark workloads.

use std::hash::{Hash, Hasher};

use ascent::Lattice;

/// A confidence, ordered by `f64::total_cmp`.
#[derive(Clone, Copy, Debug)]
pub struct MaxConf(pub f64);

impl PartialEq for MaxConf {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}

impl Eq for MaxConf {}

impl PartialOrd for MaxConf {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for MaxConf {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl Hash for MaxConf {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

impl Lattice for MaxConf {
    fn meet_mut(&mut self, other: Self) -> bool {
        let changed = other < *self;
        if changed {
            *self = other;
        }
        changed
    }

    fn join_mut(&mut self, other: Self) -> bool {
        let changed = other > *self;
        if changed {
            *self = other;
        }
        changed
    }
}
