//! The tagged context block of a request: what the model reads, and what a person
//! cites.
//!
//! One section per goal: a proved goal's proofs (one line per tagged node, root first,
//! each stored fact with the table, index, document and character span it came from),
//! or an unproved goal's why-not (the rule that came closest and what blocked it,
//! with the blocking fact's tag).

use std::fmt::Write as _;

use crate::proof::{ProofNode, ProofTree};

use super::GoalOutcome;
use super::whynot::{Blocker, WhyNot};

fn conf(c: f64) -> String {
    format!("{c:.2}")
}

/// Where a stored fact came from, as a person cites it: `hyperedge SIGHTINGS #101,
/// doc radar-log-7 chars 120-176`.
pub fn origin(p: &crate::proof::LeafProvenance) -> String {
    let mut s = p.source.clone();
    if let Some(t) = &p.table {
        let _ = write!(s, " {t}");
    }
    let _ = write!(s, " #{}", p.edge_idx);
    if let Some(doc) = p.extra.get("doc_id").and_then(|d| d.as_str()) {
        let _ = write!(s, ", doc {doc}");
        if let Some([a, b]) = p
            .extra
            .get("span")
            .and_then(|v| serde_json::from_value::<[usize; 2]>(v.clone()).ok())
        {
            let _ = write!(s, " chars {a}-{b}");
        }
    }
    s
}

/// The lines of one proof (no header).
fn proof_lines(out: &mut String, tree: &ProofTree, shown: &mut Vec<String>) {
    for node in &tree.nodes {
        let Some(tag) = node.tag() else { continue };
        if shown.iter().any(|t| t == tag) {
            continue;
        }
        shown.push(tag.to_string());
        match node {
            ProofNode::Conclusion(c) => {
                let mut tags = Vec::new();
                let mut absent = Vec::new();
                for p in &c.premises {
                    match tree.node(p) {
                        Some(n @ ProofNode::Absence(_)) => absent.push(tree.node_text(n)),
                        Some(n) => tags.extend(n.tag().map(str::to_string)),
                        None => {}
                    }
                }
                let _ = write!(
                    out,
                    "[{}] {} (confidence {}; by {}",
                    c.step_tag,
                    tree.node_text(node),
                    conf(c.confidence),
                    c.rule_tag
                );
                if !tags.is_empty() {
                    let _ = write!(out, " from {}", tags.join(", "));
                }
                for a in &absent {
                    // As the proof's own context block says it (`render::context`).
                    let _ = write!(out, "; and no record that {a}");
                }
                out.push_str(")\n");
            }
            ProofNode::Evidence(e) => {
                let _ = writeln!(
                    out,
                    "[{}] {} (confidence {}; {}, {})",
                    e.hedge_tag,
                    tree.node_text(node),
                    conf(e.confidence),
                    origin(&e.provenance),
                    if e.provenance.verified {
                        "verified"
                    } else {
                        "unverified"
                    }
                );
            }
            _ => {}
        }
    }
}

fn why_not_lines(out: &mut String, w: &WhyNot, blocker_proof: Option<&ProofTree>, indent: &str) {
    match (&w.rule, &w.blocker) {
        (None, _) | (_, Blocker::NoRule) => {
            let _ = writeln!(
                out,
                "{indent}no rule concludes {} and no evidence states it",
                w.goal
            );
        }
        (Some(rule), blocker) => {
            let _ = write!(out, "{indent}{} ({}) ", rule.tag, rule.name);
            match blocker {
                Blocker::Missing { text, .. } => {
                    let _ = writeln!(out, "needs that {text}, which is not established");
                }
                Blocker::Present { text, .. } => {
                    let tag = blocker_proof
                        .and_then(|t| t.root())
                        .and_then(|n| n.tag())
                        .map(|t| format!("[{t}] "))
                        .unwrap_or_default();
                    let _ = writeln!(out, "requires that this not hold, but it does: {tag}{text}");
                }
                Blocker::Condition { text } => {
                    let _ = writeln!(out, "stops at a condition: {text}");
                }
                Blocker::NoRule => {}
            }
        }
    }
    if let Some(b) = &w.because {
        why_not_lines(out, b, blocker_proof, &format!("{indent}  "));
    }
}

/// The context block of a request: the question, how to cite, then one section per
/// goal.
pub(crate) fn render(question: &str, goals: &[GoalOutcome]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Question: {question}");
    out.push_str(
        "Cite facts by their tags: [HEDGE-n] stored evidence, [STEP-n] a derived conclusion, [RULE-n] a rule.\n",
    );
    let mut shown = Vec::new();
    for g in goals {
        out.push('\n');
        if g.proofs.is_empty() {
            let _ = writeln!(out, "{}: {} is not proved", g.id, g.goal);
            if let Some(w) = &g.why_not {
                why_not_lines(&mut out, w, g.blocker_proof.as_ref(), "  ");
                if let Some(t) = &g.blocker_proof {
                    proof_lines(&mut out, t, &mut shown);
                }
            }
            continue;
        }
        for tree in &g.proofs {
            let fact = crate::value::fact_text(&tree.goal.predicate, &tree.goal.args);
            let _ = writeln!(
                out,
                "{}: {fact} is proved (confidence {})",
                tree.proof_id,
                conf(tree.confidence)
            );
            proof_lines(&mut out, tree, &mut shown);
        }
    }
    out
}
