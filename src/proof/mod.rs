//! Proof DAGs: why a derived fact holds, down to stored evidence, with citation tags.
//!
//! [`build_proof`] walks the best derivation recorded for a goal fact and returns a
//! [`ProofTree`]: a DAG whose root is the goal, whose internal nodes are rule
//! applications (`S1`, `S2`, … tagged `STEP-k`, each naming its rule `RULE-n`), whose
//! leaves are input facts bound to their stored provenance (`L1`, `L2`, … tagged
//! `HEDGE-<edge_idx>`), and whose negated premises are `absence` nodes (`A1`, `A2`, …).
//! A sub-proof reached twice is one node. The JSON form is the serde derive and is the
//! contract of docs/proof-json.md; [`render`] turns a tree into a prompt block, a
//! terminal tree, Graphviz or a self-contained HTML page; [`ProofTree`] (and a slice of
//! trees) resolves citation tags to facts for the answer checkers.
//!
//! Architecture invariant: this layer reads facts only through [`ProofSource`] (lookups
//! along recorded derivations, never a scan of a relation), so building a proof costs
//! time proportional to the proof, not to the fact base, and any fact base that can
//! answer those lookups (the evaluated [`FactBase`](crate::eval::FactBase), a
//! per-request overlay on it) can be explained.

mod build;
mod citations;
mod cite;
#[cfg(test)]
pub(crate) mod mock;
pub mod render;
mod resolver;
mod source;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::diag::{Diagnostic, ErrorCode, Result};
pub use crate::ir::PackId;
use crate::syntax::{Goal, GoalArg};
use crate::value::Value;

pub use build::{build_proof, prove_all, prove_each, prove_request};
pub use citations::{CitationTable, read_proofs, verify_proof};
pub use cite::verbalise;
pub use resolver::{EdgeRef, ProofOptions, ProvenanceResolver, ResolverError};
pub use source::ProofSource;

/// A ground fact to prove, named by predicate: `Fact::new("coordinated_threat",
/// vec![Value::Number(42)])`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fact {
    /// The relation name.
    pub predicate: String,
    /// One value per column.
    pub args: Vec<Value>,
}

impl Fact {
    /// A fact from its predicate and values.
    pub fn new(predicate: impl Into<String>, args: Vec<Value>) -> Fact {
        Fact {
            predicate: predicate.into(),
            args,
        }
    }

    /// The ground fact a goal names; a goal with variables or wildcards is an error
    /// (use [`prove_all`] for patterns).
    pub fn from_goal(goal: &Goal) -> Result<Fact> {
        let mut args = Vec::with_capacity(goal.args.len());
        for a in &goal.args {
            match a {
                GoalArg::Const(v) => args.push(v.clone()),
                GoalArg::Var(_) | GoalArg::Wildcard => {
                    return Err(Diagnostic::new(
                        ErrorCode::Usage,
                        format!("goal `{}` is not ground", goal_text(goal)),
                    )
                    .with_help("prove one fact at a time, or use prove_all for a pattern")
                    .into());
                }
            }
        }
        Ok(Fact::new(goal.predicate.clone(), args))
    }
}

impl TryFrom<&Goal> for Fact {
    type Error = crate::diag::Error;

    /// See [`Fact::from_goal`].
    fn try_from(goal: &Goal) -> Result<Fact> {
        Fact::from_goal(goal)
    }
}

impl fmt::Display for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::value::fact_text(&self.predicate, &self.args))
    }
}

/// A goal written back as the rule language writes it (`path(1, x)`).
pub fn goal_text(goal: &Goal) -> String {
    let args: Vec<String> = goal
        .args
        .iter()
        .map(|a| match a {
            GoalArg::Const(v) => v.to_string(),
            GoalArg::Var(name) => name.clone(),
            GoalArg::Wildcard => "_".to_string(),
        })
        .collect();
    format!("{}({})", goal.predicate, args.join(", "))
}

/// Whether the goal was derived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProofStatus {
    /// The goal is in the fact base; the tree explains it.
    Proved,
    /// The goal is not in the fact base; the tree has no nodes.
    Unproved,
}

/// The fact a proof is about, and the id of its root node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProofGoal {
    /// The relation name.
    pub predicate: String,
    /// The goal's values.
    pub args: Vec<Value>,
    /// Id of the node proving the goal; `null` when unproved.
    pub root: Option<String>,
}

/// A proof DAG in the JSON shape of docs/proof-json.md.
///
/// Nodes are listed in first-visit depth-first order from the root (premises in the
/// order the derivation records them), so the root is always `nodes[0]`. Edges go
/// from a conclusion to each of its premises, in node order then premise order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProofTree {
    /// Caller-supplied id.
    pub proof_id: String,
    /// The fact being proved.
    pub goal: ProofGoal,
    /// `"proved"` or `"unproved"`.
    pub status: ProofStatus,
    /// The root fact's confidence (0 when unproved).
    pub confidence: f64,
    /// Rule applications on the longest root-to-leaf path (0 when the goal is itself
    /// evidence or unproved).
    pub depth: u32,
    /// `RULE-n` tags of the rules applied, in first-seen (node) order.
    pub rules_fired: Vec<String>,
    /// Every node, root first.
    pub nodes: Vec<ProofNode>,
    /// Premise links.
    pub edges: Vec<ProofEdge>,
    /// The rule pack the proof was made with (program files and a digest of their
    /// text). Absent in proofs made elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack: Option<PackId>,
    /// Verbalisation and functional keys of the predicates in the tree, for citation
    /// checking. Not part of the JSON form; re-attach with [`ProofTree::with_program`]
    /// after reading a tree back from JSON.
    #[serde(skip)]
    pub(crate) predicates: Arc<BTreeMap<String, PredicateInfo>>,
}

/// What the citation checkers need to know about a predicate.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PredicateInfo {
    pub(crate) text: Option<String>,
    pub(crate) functional: Option<Vec<usize>>,
}

impl ProofTree {
    /// Whether the goal was proved.
    pub fn is_proved(&self) -> bool {
        self.status == ProofStatus::Proved
    }

    /// The root node, when proved.
    pub fn root(&self) -> Option<&ProofNode> {
        let root = self.goal.root.as_deref()?;
        self.node(root)
    }

    /// The node with this id.
    pub fn node(&self, id: &str) -> Option<&ProofNode> {
        self.nodes.iter().find(|n| n.id() == id)
    }

    /// Every citation tag in the tree: `HEDGE-n` of each evidence leaf, `RULE-n` of
    /// each rule applied, `STEP-k` of each conclusion. This is the allowed set the
    /// firewall checks an answer against.
    pub fn evidence_tags(&self) -> BTreeSet<String> {
        let mut tags = BTreeSet::new();
        for n in &self.nodes {
            match n {
                ProofNode::Conclusion(c) => {
                    tags.insert(c.rule_tag.clone());
                    tags.insert(c.step_tag.clone());
                }
                ProofNode::Evidence(e) => {
                    tags.insert(e.hedge_tag.clone());
                }
                ProofNode::Absence(_) => {}
            }
        }
        tags
    }

    /// How many `STEP` tags the tree uses (its conclusions).
    pub fn step_count(&self) -> u64 {
        self.nodes
            .iter()
            .filter(|n| matches!(n, ProofNode::Conclusion(_)))
            .count() as u64
    }

    /// The steps numbered before this tree in its request: one less than its lowest
    /// `STEP` number (0 for a request's first tree, or a tree without steps).
    pub fn first_step(&self) -> u64 {
        self.nodes
            .iter()
            .filter_map(|n| match n {
                ProofNode::Conclusion(c) => c.step_tag.strip_prefix("STEP-")?.parse::<u64>().ok(),
                _ => None,
            })
            .min()
            .map_or(0, |m| m.saturating_sub(1))
    }

    /// Attach the program's verbalisations and functional keys (lost in the JSON
    /// form), so that a tree read back from JSON cites facts in words.
    pub fn with_program(mut self, program: &crate::ir::Program) -> ProofTree {
        self.predicates = Arc::new(predicate_info(program, &self.nodes));
        self
    }

    /// The tree as pretty-printed JSON (the `prooflog prove` output).
    pub fn to_json_pretty(&self) -> String {
        // Serializing plain data with string keys cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// The predicate table of a tree: `.text` and `.functional` of every relation its
/// nodes mention.
pub(crate) fn predicate_info(
    program: &crate::ir::Program,
    nodes: &[ProofNode],
) -> BTreeMap<String, PredicateInfo> {
    predicate_info_of(
        program,
        nodes
            .iter()
            .filter_map(|n| program.relation_id(n.predicate())),
    )
}

/// The predicate table for the given relations (repeats are harmless).
pub(crate) fn predicate_info_of(
    program: &crate::ir::Program,
    relations: impl IntoIterator<Item = crate::ir::RelId>,
) -> BTreeMap<String, PredicateInfo> {
    let mut out = BTreeMap::new();
    for rel in relations {
        let r = program.relation(rel);
        if out.contains_key(&r.name) {
            continue;
        }
        out.insert(
            r.name.clone(),
            PredicateInfo {
                text: r.text.clone(),
                functional: r.functional.clone(),
            },
        );
    }
    out
}

macro_rules! kind_marker {
    ($(#[$doc:meta])* $name:ident = $text:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct $name;

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str($text)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                if s == $text {
                    Ok($name)
                } else {
                    Err(serde::de::Error::custom(format!(
                        "expected kind {:?}, found {:?}",
                        $text, s
                    )))
                }
            }
        }
    };
}

kind_marker!(
    /// The `kind` field of a conclusion node: always `"conclusion"`.
    ConclusionKind = "conclusion"
);
kind_marker!(
    /// The `kind` field of an evidence node: always `"evidence"`.
    EvidenceKind = "evidence"
);
kind_marker!(
    /// The `kind` field of an absence node: always `"absence"`.
    AbsenceKind = "absence"
);

/// One node of a proof DAG. Serialized as the node's own object (its `kind` field says
/// which), with `id` first (docs/proof-json.md, "Node shapes").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ProofNode {
    /// A derived fact: one rule application.
    Conclusion(ConclusionNode),
    /// An input fact bound to its stored provenance.
    Evidence(EvidenceNode),
    /// A negated premise: a fact checked to be absent.
    Absence(AbsenceNode),
}

impl ProofNode {
    /// The node's id (`S1`, `L1`, `A1`, …).
    pub fn id(&self) -> &str {
        match self {
            ProofNode::Conclusion(n) => &n.id,
            ProofNode::Evidence(n) => &n.id,
            ProofNode::Absence(n) => &n.id,
        }
    }

    /// The relation name of the node's fact.
    pub fn predicate(&self) -> &str {
        match self {
            ProofNode::Conclusion(n) => &n.predicate,
            ProofNode::Evidence(n) => &n.predicate,
            ProofNode::Absence(n) => &n.predicate,
        }
    }

    /// The node's fact values.
    pub fn args(&self) -> &[Value] {
        match self {
            ProofNode::Conclusion(n) => &n.args,
            ProofNode::Evidence(n) => &n.args,
            ProofNode::Absence(n) => &n.args,
        }
    }

    /// The node's fact as the rule language writes it.
    pub fn fact(&self) -> &str {
        match self {
            ProofNode::Conclusion(n) => &n.fact,
            ProofNode::Evidence(n) => &n.fact,
            ProofNode::Absence(n) => &n.fact,
        }
    }

    /// The node's verbalisation as stored in the node (its relation's `.text` filled
    /// in), if any; [`ProofTree::node_text`] falls back to templates and the fact.
    pub fn text(&self) -> Option<&str> {
        match self {
            ProofNode::Conclusion(n) => n.text.as_deref(),
            ProofNode::Evidence(n) => n.text.as_deref(),
            ProofNode::Absence(n) => n.text.as_deref(),
        }
    }

    /// The node's citation tag (`STEP-k` or `HEDGE-n`); absences have none.
    pub fn tag(&self) -> Option<&str> {
        match self {
            ProofNode::Conclusion(n) => Some(&n.step_tag),
            ProofNode::Evidence(n) => Some(&n.hedge_tag),
            ProofNode::Absence(_) => None,
        }
    }

    /// The node's confidence; an absence carries none (it does not change confidence).
    pub fn confidence(&self) -> Option<f64> {
        match self {
            ProofNode::Conclusion(n) => Some(n.confidence),
            ProofNode::Evidence(n) => Some(n.confidence),
            ProofNode::Absence(_) => None,
        }
    }

    /// The ids of the node's premises (empty for leaves).
    pub fn premises(&self) -> &[String] {
        match self {
            ProofNode::Conclusion(n) => &n.premises,
            _ => &[],
        }
    }
}

/// A derived fact and the rule application that derived it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConclusionNode {
    /// `S<k>`.
    pub id: String,
    /// Always `"conclusion"`.
    pub kind: ConclusionKind,
    /// The fact as the rule language writes it.
    pub fact: String,
    /// The fact in words, from its relation's `.text` (absent when it has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its relation.
    pub predicate: String,
    /// Its values.
    pub args: Vec<Value>,
    /// The rule's name (`@name`, else `rule:<head>`).
    pub rule: String,
    /// `RULE-<n>`, n the rule's index in the loaded program.
    pub rule_tag: String,
    /// `STEP-<k>` for node `S<k>`.
    pub step_tag: String,
    /// The fact's confidence: rule confidence × min(premise confidences).
    pub confidence: f64,
    /// Ids of the premises: positive premises in body order, then absences in body
    /// order. A premise used twice is listed once.
    pub premises: Vec<String>,
}

/// An input fact bound to stored provenance: a leaf.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidenceNode {
    /// `L<k>`.
    pub id: String,
    /// Always `"evidence"`.
    pub kind: EvidenceKind,
    /// The provenance's `source` (`"hyperedge"`, `"program"`, `"facts"`, …).
    pub evidence_type: String,
    /// The fact as the rule language writes it.
    pub fact: String,
    /// The fact in words, from its relation's `.text` (absent when it has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its relation.
    pub predicate: String,
    /// Its values.
    pub args: Vec<Value>,
    /// The input confidence.
    pub confidence: f64,
    /// `HEDGE-<edge_idx>`.
    pub hedge_tag: String,
    /// The stored provenance, `verified`, and whatever the resolver added.
    pub provenance: LeafProvenance,
}

/// A fact that a negated premise required to be absent, and that was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbsenceNode {
    /// `A<k>`.
    pub id: String,
    /// Always `"absence"`.
    pub kind: AbsenceKind,
    /// The absent fact as the rule language writes it.
    pub fact: String,
    /// The absent fact in words, from its relation's `.text` (absent when it has
    /// none). It says what is *not* recorded: renderings add "no record that".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its relation.
    pub predicate: String,
    /// Its values.
    pub args: Vec<Value>,
}

/// A leaf's provenance: the stored record plus `verified`, in the field order of
/// docs/proof-json.md, then member ids and any extra fields (stored or added by the
/// resolver), by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeafProvenance {
    /// Kind of source (`"hyperedge"`, …).
    pub source: String,
    /// The table the fact was stored in.
    pub table: Option<String>,
    /// The stored edge index (the `n` of `HEDGE-n`).
    pub edge_idx: u64,
    /// When the evidence was recorded.
    pub event_ts: Option<serde_json::Value>,
    /// Whether the leaf is bound to a record of the store (and the resolver, if any,
    /// succeeded).
    pub verified: bool,
    /// Whether a provenance resolver ran on this leaf, so that `verified` is its
    /// verdict rather than only "bound to a loaded record". Serialized only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resolved: bool,
    /// Ids of the hyperedge's members.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub member_ids: Vec<serde_json::Value>,
    /// Every other field, stored or resolved.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// A premise link from a conclusion (`from`) to one of its premises (`to`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProofEdge {
    /// The conclusion's id.
    pub from: String,
    /// The premise's id.
    pub to: String,
    /// Always `"premise"`.
    pub role: EdgeRole,
}

/// What a premise link means. Only premises exist today; an absence is a premise too
/// (its node's `kind` says it was checked absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum EdgeRole {
    /// `to` is a premise of the conclusion `from`.
    Premise,
}
