//! One citation namespace per request.
//!
//! Each proof numbers its conclusions `S1`, `S2`, … (`STEP-1`, `STEP-2`, …) on its
//! own, so two proofs of one request would both say `STEP-1` about different facts.
//! The request renumbers its proofs' conclusions in one sequence, in proof order then
//! node order: a fact concluded in several proofs keeps one number, two different
//! facts never share one. `HEDGE-n` (stored evidence) and `RULE-n` (program rules) are
//! global already and stay as they are.

use std::collections::HashMap;

use crate::proof::{ProofNode, ProofTree};
use crate::value::Value;

/// Renumbers conclusions across the proofs of one request.
#[derive(Debug, Default)]
pub(crate) struct TagSpace {
    steps: HashMap<(String, Vec<Value>), u64>,
    next: u64,
}

impl TagSpace {
    /// Renumber `tree`'s conclusions into this space: node ids `Sk`, step tags
    /// `STEP-k`, premise lists, edges and the goal's root all follow.
    pub fn renumber(&mut self, tree: &mut ProofTree) {
        let mut ids: HashMap<String, String> = HashMap::new();
        for node in &mut tree.nodes {
            if let ProofNode::Conclusion(c) = node {
                let key = (c.predicate.clone(), c.args.clone());
                let k = *self.steps.entry(key).or_insert_with(|| {
                    self.next += 1;
                    self.next
                });
                let id = format!("S{k}");
                ids.insert(c.id.clone(), id.clone());
                c.id = id;
                c.step_tag = format!("STEP-{k}");
            }
        }
        let rename = |s: &mut String| {
            if let Some(n) = ids.get(s.as_str()) {
                *s = n.clone();
            }
        };
        for node in &mut tree.nodes {
            if let ProofNode::Conclusion(c) = node {
                c.premises.iter_mut().for_each(rename);
            }
        }
        for e in &mut tree.edges {
            rename(&mut e.from);
            rename(&mut e.to);
        }
        if let Some(root) = &mut tree.goal.root {
            rename(root);
        }
    }
}
