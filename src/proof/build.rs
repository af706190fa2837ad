//! Building a proof DAG by walking recorded best derivations.

use hashbrown::{HashMap, HashSet};
use rustc_hash::FxBuildHasher;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use crate::diag::{Diagnostic, ErrorCode, Result};
use crate::eval::{Derivation, FactId};
use crate::ir::{Program, RelId, RuleId};
use crate::syntax::Goal;
use crate::value::{Value, fact_text, write_fact_text};

use super::{
    AbsenceKind, AbsenceNode, ConclusionKind, ConclusionNode, EdgeRef, EdgeRole, EvidenceKind,
    EvidenceNode, Fact, LeafProvenance, ProofEdge, ProofGoal, ProofNode, ProofOptions, ProofSource,
    ProofStatus, ProofTree, predicate_info_of,
};

/// Prove one ground fact.
///
/// Returns an `unproved` tree (no nodes, confidence 0) when the fact is not in the fact
/// base. Errors: the relation is unknown (`unknown_relation`), the arity is wrong
/// (`arity_mismatch`), a value does not fit its column (`type_mismatch`), or the fact
/// base was evaluated without provenance (`provenance_unavailable`).
///
/// Cost: one lookup per node of the proof; the fact base is never scanned.
pub fn build_proof<S: ProofSource + ?Sized>(
    goal: &Fact,
    source: &S,
    options: &ProofOptions<'_>,
) -> Result<ProofTree> {
    require_provenance(source)?;
    let program = source.program();
    let (rel, args) = resolve_goal(program, goal)?;
    match source.lookup(rel, &args) {
        Some(fact) => build_from(source, fact, args, options.proof_id, options),
        None => Ok(unproved(
            options.proof_id,
            goal.predicate.clone(),
            args,
            program,
        )),
    }
}

/// Prove every fact matching a pattern such as `threatens(g, z)`: one tree per match,
/// in the fact base's sorted match order, at most `limit` of them. The trees' ids are
/// `<proof_id>#1`, `<proof_id>#2`, … in that order. No match gives an empty list.
///
/// The trees are one request: their `STEP` tags are numbered on from one tree to the
/// next (the second tree's first step follows the first tree's last), so no tag names
/// two different facts.
///
/// Only the first `limit` matches are selected and proved (see [`prove_each`] to
/// handle one tree at a time).
pub fn prove_all<S: ProofSource + ?Sized>(
    pattern: &Goal,
    source: &S,
    options: &ProofOptions<'_>,
    limit: Option<usize>,
) -> Result<Vec<ProofTree>> {
    let mut trees = Vec::new();
    prove_each(pattern, source, options, limit, |tree| {
        trees.push(tree);
        Ok(())
    })?;
    Ok(trees)
}

/// [`prove_all`], handing each tree to `each` as soon as it is built (so that a
/// caller can write it out and drop it): memory stays that of one proof plus four
/// bytes per selected match. Stops at the first error `each` returns. Returns the
/// number of matches proved.
pub fn prove_each<S: ProofSource + ?Sized>(
    pattern: &Goal,
    source: &S,
    options: &ProofOptions<'_>,
    limit: Option<usize>,
    mut each: impl FnMut(ProofTree) -> Result<()>,
) -> Result<usize> {
    require_provenance(source)?;
    let facts = source.matching_facts(pattern, limit)?;
    let mut first_step = options.first_step;
    for (i, &fact) in facts.iter().enumerate() {
        let id = format!("{}#{}", options.proof_id, i + 1);
        let opts = options.with_first_step(first_step);
        let tree = build_from(source, fact, source.args(fact), &id, &opts)?;
        first_step += tree.step_count();
        each(tree)?;
    }
    Ok(facts.len())
}

/// Prove several goals as one request (ground goals one tree each, patterns one per
/// match, at most `limit` per pattern), numbering `STEP` tags on across all the trees
/// so that a context block over them never repeats a tag. With one goal the trees carry
/// `options.proof_id` as [`build_proof`] and [`prove_all`] do; with several, goal `k`
/// (from 1) uses `<proof_id>.<k>`.
pub fn prove_request<S: ProofSource + ?Sized>(
    goals: &[Goal],
    source: &S,
    options: &ProofOptions<'_>,
    limit: Option<usize>,
) -> Result<Vec<ProofTree>> {
    let mut first_step = options.first_step;
    let mut out = Vec::new();
    for (k, goal) in goals.iter().enumerate() {
        let id = if goals.len() == 1 {
            options.proof_id.to_string()
        } else {
            format!("{}.{}", options.proof_id, k + 1)
        };
        let opts = ProofOptions {
            proof_id: &id,
            provenance_resolver: options.provenance_resolver,
            first_step,
        };
        let trees = if goal.is_ground() {
            vec![build_proof(&Fact::from_goal(goal)?, source, &opts)?]
        } else {
            prove_all(goal, source, &opts, limit)?
        };
        for tree in trees {
            first_step += tree.step_count();
            out.push(tree);
        }
    }
    Ok(out)
}

fn require_provenance<S: ProofSource + ?Sized>(source: &S) -> Result<()> {
    if source.provenance_enabled() {
        Ok(())
    } else {
        Err(Diagnostic::new(
            ErrorCode::ProvenanceUnavailable,
            "the fact base was evaluated without provenance, so no derivation can be shown",
        )
        .with_help(
            "evaluate with provenance on (EvalOptions { provenance: true }; drop --no-provenance)",
        )
        .into())
    }
}

/// Check the goal against the program and bring its values to the column types
/// (`42` for a `float` column is `42.0`): the one goal resolver,
/// [`resolve_fact`](crate::check::resolve_fact).
fn resolve_goal(program: &Program, goal: &Fact) -> Result<(RelId, Vec<Value>)> {
    crate::check::resolve_fact(program, &goal.predicate, &goal.args)
}

fn unproved(proof_id: &str, predicate: String, args: Vec<Value>, program: &Program) -> ProofTree {
    ProofTree {
        proof_id: proof_id.to_string(),
        goal: ProofGoal {
            predicate,
            args,
            root: None,
        },
        status: ProofStatus::Unproved,
        confidence: 0.0,
        depth: 0,
        rules_fired: Vec::new(),
        nodes: Vec::new(),
        edges: Vec::new(),
        pack: pack_of(program),
        predicates: Arc::default(),
    }
}

fn inconsistent(message: String) -> crate::diag::Error {
    Diagnostic::new(ErrorCode::ProvenanceUnavailable, message)
        .with_help("the fact base's derivation record is inconsistent; re-evaluate it")
        .into()
}

/// An open rule application on the walk's stack. Its children so far are
/// `Walk::children[children..]`: frames close in stack order, so each open frame owns
/// the tail of that shared list above its parent's part.
struct Frame {
    node: usize,
    derivation: Derivation,
    next: usize,
    children: usize,
}

/// The walk's state. Building a proof is dominated by allocation, so the walk keeps
/// it to the strings and lists the tree itself holds: rule tags are formatted once per
/// proof and cloned, node ids and tags are written without the formatting machinery,
/// fact texts are rendered in one scratch buffer and copied out at their size, and the
/// open frames share one child list.
struct Walk<'s, S: ?Sized> {
    source: &'s S,
    program: &'s Program,
    options: &'s ProofOptions<'s>,
    /// Node index of every fact reached so far.
    index: HashMap<FactId, usize, FxBuildHasher>,
    /// Node index of every absence node so far.
    absent_index: HashMap<(RelId, Vec<Value>), usize, FxBuildHasher>,
    nodes: Vec<ProofNode>,
    /// Per node: its depth (set when the node is finished) and whether its rule
    /// application is still open (a premise reaching an open node is a cycle).
    depth: Vec<u32>,
    open: Vec<bool>,
    /// The children of all open frames (see [`Frame`]).
    children: Vec<usize>,
    /// Per rule that fired: its index in `rules_fired`, in first-use (preorder) order.
    rule_index: HashMap<RuleId, usize, FxBuildHasher>,
    rules_fired: Vec<String>,
    /// Relations the proof mentions, by id (for the tree's predicate table).
    relations: Vec<bool>,
    /// Premise references over all conclusions (the number of edges).
    premise_count: usize,
    /// Scratch buffer for fact texts, so each text is allocated once at its size.
    text: String,
    steps: usize,
    leaves: usize,
    absences: usize,
}

/// `prefix` followed by the decimal `n`, in one allocation.
fn numbered(prefix: &str, n: u64) -> String {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(n);
    let mut s = String::with_capacity(prefix.len() + digits.len());
    s.push_str(prefix);
    s.push_str(digits);
    s
}

fn build_from<S: ProofSource + ?Sized>(
    source: &S,
    root: FactId,
    args: Vec<Value>,
    proof_id: &str,
    options: &ProofOptions<'_>,
) -> Result<ProofTree> {
    let program = source.program();
    let mut walk = Walk {
        source,
        program,
        options,
        index: HashMap::default(),
        absent_index: HashMap::default(),
        nodes: Vec::new(),
        depth: Vec::new(),
        open: Vec::new(),
        children: Vec::new(),
        rule_index: HashMap::default(),
        rules_fired: Vec::new(),
        relations: vec![false; program.relations.len()],
        premise_count: 0,
        text: String::new(),
        steps: 0,
        leaves: 0,
        absences: 0,
    };
    let mut stack: Vec<Frame> = Vec::new();
    let root_node = walk.enter(root, &mut stack)?;
    while let Some(top) = stack.len().checked_sub(1) {
        let frame = &mut stack[top];
        let next = frame.derivation.premises.get(frame.next).copied();
        let Some(premise) = next else {
            if let Some(frame) = stack.pop() {
                walk.close(frame);
            }
            continue;
        };
        frame.next += 1;
        match walk.index.get(&premise).copied() {
            Some(i) if walk.open[i] => {
                return Err(inconsistent(format!(
                    "the recorded derivations of `{}` form a cycle",
                    fact_text(&program.relation(premise.rel).name, &source.args(premise))
                )));
            }
            Some(i) => walk.children.push(i),
            None => {
                // The premise becomes the next node. It is recorded as this frame's
                // child before `enter` may push the premise's own frame, whose children
                // then start after it.
                walk.children.push(walk.nodes.len());
                walk.enter(premise, &mut stack)?;
            }
        }
    }
    let Walk {
        nodes,
        depth,
        rules_fired,
        relations,
        premise_count,
        ..
    } = walk;
    let mut edges = Vec::with_capacity(premise_count);
    for n in &nodes {
        if let ProofNode::Conclusion(c) = n {
            edges.extend(c.premises.iter().map(|p| ProofEdge {
                from: c.id.clone(),
                to: p.clone(),
                role: EdgeRole::Premise,
            }));
        }
    }
    let used = relations
        .iter()
        .enumerate()
        .filter(|(_, used)| **used)
        .map(|(rel, _)| rel as RelId);
    let predicates = Arc::new(predicate_info_of(program, used));
    let relation = program.relation(root.rel);
    Ok(ProofTree {
        proof_id: proof_id.to_string(),
        goal: ProofGoal {
            predicate: relation.name.clone(),
            args,
            root: Some(nodes[root_node].id().to_string()),
        },
        status: ProofStatus::Proved,
        confidence: source.confidence(root),
        depth: depth[root_node],
        rules_fired,
        nodes,
        edges,
        pack: pack_of(program),
        predicates,
    })
}

impl<S: ProofSource + ?Sized> Walk<'_, S> {
    /// Create the node for a fact reached for the first time (preorder numbering). A
    /// rule application pushes a frame whose premises are walked next; a leaf is done.
    fn enter(&mut self, fact: FactId, stack: &mut Vec<Frame>) -> Result<usize> {
        let relation = self.program.relation(fact.rel);
        let args = self.source.args(fact);
        let text = self.fact_text(&relation.name, &args);
        let i = self.nodes.len();
        if let Some(derivation) = self.source.derivation(fact) {
            let Some(rule) = self.program.rules.get(derivation.rule as usize) else {
                return Err(inconsistent(format!(
                    "`{text}` is recorded as derived by rule {}, which the program does not have",
                    derivation.rule
                )));
            };
            let fired = *self.rule_index.entry(rule.id).or_insert_with(|| {
                self.rules_fired.push(numbered("RULE-", u64::from(rule.id)));
                self.rules_fired.len() - 1
            });
            self.steps += 1;
            let step = self.steps as u64;
            self.nodes.push(ProofNode::Conclusion(ConclusionNode {
                id: numbered("S", step),
                kind: ConclusionKind,
                fact: text,
                text: words(relation, &args),
                predicate: relation.name.clone(),
                args,
                rule: rule.name.clone(),
                rule_tag: self.rules_fired[fired].clone(),
                step_tag: numbered("STEP-", self.options.first_step + step),
                confidence: self.source.confidence(fact),
                premises: Vec::new(),
            }));
            self.depth.push(0);
            self.open.push(true);
            stack.push(Frame {
                node: i,
                derivation,
                next: 0,
                children: self.children.len(),
            });
        } else if let Some(input) = self.source.evidence(fact) {
            let stored = &input.provenance;
            let Some(edge_idx) = stored.edge_idx else {
                return Err(inconsistent(format!(
                    "the evidence for `{text}` has no edge index"
                )));
            };
            let hedge_tag = numbered("HEDGE-", edge_idx);
            let mut provenance = LeafProvenance {
                source: stored.source.clone(),
                table: stored.table.clone(),
                edge_idx,
                event_ts: stored.event_ts.clone(),
                verified: true,
                resolved: false,
                member_ids: stored.member_ids.clone(),
                extra: stored
                    .extra
                    .iter()
                    .filter(|(k, _)| !is_reserved(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            };
            if let Some(resolver) = self.options.provenance_resolver {
                let edge = EdgeRef {
                    table: stored.table.clone(),
                    edge_idx,
                    event_ts: stored.event_ts.clone(),
                    member_ids: stored.member_ids.clone(),
                    hedge_tag: hedge_tag.clone(),
                };
                merge_resolved(&mut provenance, resolver, &edge);
            }
            self.leaves += 1;
            self.nodes.push(ProofNode::Evidence(EvidenceNode {
                id: numbered("L", self.leaves as u64),
                kind: EvidenceKind,
                evidence_type: stored.source.clone(),
                fact: text,
                text: words(relation, &args),
                predicate: relation.name.clone(),
                args,
                confidence: self.source.confidence(fact),
                hedge_tag,
                provenance,
            }));
            self.depth.push(0);
            self.open.push(false);
        } else {
            return Err(inconsistent(format!(
                "`{text}` has neither a recorded derivation nor an input record"
            )));
        }
        self.mention(fact.rel);
        self.index.insert(fact, i);
        Ok(i)
    }

    /// A fact's text, rendered in the scratch buffer and copied out at its size.
    fn fact_text(&mut self, predicate: &str, args: &[Value]) -> String {
        self.text.clear();
        write_fact_text(&mut self.text, predicate, args);
        self.text.clone()
    }

    /// Record that the proof has a node of relation `rel`.
    fn mention(&mut self, rel: RelId) {
        if let Some(used) = self.relations.get_mut(rel as usize) {
            *used = true;
        }
    }

    /// Finish a rule application: add its absences, its premise list and its depth.
    fn close(&mut self, mut frame: Frame) {
        let start = frame.children;
        let depth = self.children[start..]
            .iter()
            .map(|&c| self.depth[c])
            .max()
            .unwrap_or(0)
            + 1;
        for key in std::mem::take(&mut frame.derivation.absent) {
            let a = match self.absent_index.get(&key) {
                Some(&a) => a,
                None => self.absence(key),
            };
            self.children.push(a);
        }
        // A premise used twice (an aggregate over many facts, a repeated atom) is
        // listed once, at its first use.
        let children = &self.children[start..];
        let mut ids: Vec<String> = Vec::with_capacity(children.len());
        if children.len() <= 16 {
            for (k, &c) in children.iter().enumerate() {
                if !children[..k].contains(&c) {
                    ids.push(self.nodes[c].id().to_string());
                }
            }
        } else {
            let mut seen: HashSet<usize, FxBuildHasher> =
                HashSet::with_capacity_and_hasher(children.len(), FxBuildHasher);
            for &c in children {
                if seen.insert(c) {
                    ids.push(self.nodes[c].id().to_string());
                }
            }
        }
        self.premise_count += ids.len();
        if let ProofNode::Conclusion(c) = &mut self.nodes[frame.node] {
            c.premises = ids;
        }
        self.children.truncate(start);
        self.depth[frame.node] = depth;
        self.open[frame.node] = false;
    }

    /// Create the node for a negated premise checked absent, seen for the first time.
    fn absence(&mut self, key: (RelId, Vec<Value>)) -> usize {
        let a = self.nodes.len();
        self.absences += 1;
        let relation = self.program.relation(key.0);
        let name = &relation.name;
        let fact = self.fact_text(name, &key.1);
        self.nodes.push(ProofNode::Absence(AbsenceNode {
            id: numbered("A", self.absences as u64),
            kind: AbsenceKind,
            fact,
            text: words(relation, &key.1),
            predicate: name.clone(),
            args: key.1.clone(),
        }));
        self.depth.push(0);
        self.open.push(false);
        self.mention(key.0);
        self.absent_index.insert(key, a);
        a
    }
}

/// The pack a proof records: its program files and their digest (none for a program
/// assembled without source files).
fn pack_of(program: &Program) -> Option<super::PackId> {
    (!program.sources().files().is_empty()).then(|| program.pack().clone())
}

/// A fact in words, when its relation has a `.text` verbalisation.
fn words(relation: &crate::ir::Relation, args: &[Value]) -> Option<String> {
    relation
        .text
        .as_deref()
        .map(|t| super::verbalise(Some(t), &relation.name, args))
}

/// Provenance fields that the stored record owns.
fn is_reserved(key: &str) -> bool {
    matches!(
        key,
        "source" | "table" | "edge_idx" | "event_ts" | "member_ids" | "verified" | "resolved"
    )
}

fn merge_resolved(
    provenance: &mut LeafProvenance,
    resolver: &dyn super::ProvenanceResolver,
    edge: &EdgeRef,
) {
    // A panicking resolver must not take the proof down: its leaf is unverified. The
    // resolver's state is not touched again after a panic, so unwind safety holds.
    provenance.resolved = true;
    let outcome = catch_unwind(AssertUnwindSafe(|| resolver.resolve(edge)));
    let failure = match outcome {
        Ok(Ok(fields)) => {
            for (k, v) in fields {
                if k == "verified" {
                    if let serde_json::Value::Bool(b) = v {
                        provenance.verified = b;
                    }
                } else if !is_reserved(&k) {
                    provenance.extra.insert(k, v);
                }
            }
            None
        }
        Ok(Err(e)) => Some(e.to_string()),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Some(format!("resolver panicked: {what}"))
        }
    };
    if let Some(message) = failure {
        provenance.verified = false;
        provenance.extra.insert(
            "resolver_error".to_string(),
            serde_json::Value::String(message),
        );
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashSet};

    use proptest::prelude::*;

    use super::super::mock::{MockBase, n, sym};
    use super::super::{EdgeRef, ResolverError, render};
    use super::*;
    use crate::answer::TagResolver;

    /// The scenario of docs/proof-json.md: two membership hyperedges, a 0.9 rule.
    fn drones() -> (MockBase, FactId) {
        let mut m = MockBase::new();
        let member = m.relation("member", &[n(0), n(0)]);
        m.set_text(member, "drone {1} is a member of group {0}");
        let ct = m.relation("coordinated_threat", &[n(0)]);
        m.set_text(ct, "group {0} is a coordinated threat");
        let r = m.rule("rule:coordinated_threat", 0.9, ct);
        let a = m.input("member", vec![n(42), n(7)], 1.0, 42);
        let b = m.input("member", vec![n(42), n(9)], 0.95, 43);
        let g = m.derive("coordinated_threat", vec![n(42)], r, vec![a, b], vec![]);
        (m, g)
    }

    fn prove(m: &MockBase, pred: &str, args: Vec<Value>) -> ProofTree {
        build_proof(&Fact::new(pred, args), m, &ProofOptions::default()).unwrap()
    }

    #[test]
    fn seed_scenario_has_the_seed_shape() {
        let (m, _) = drones();
        let tree = prove(&m, "coordinated_threat", vec![n(42)]);
        let json = serde_json::to_value(&tree).unwrap();
        assert_eq!(json["status"], "proved");
        assert_eq!(json["goal"]["root"], "S1");
        assert_eq!(json["depth"], 1);
        assert_eq!(json["rules_fired"], serde_json::json!(["RULE-0"]));
        let s1 = &json["nodes"][0];
        assert_eq!(s1["id"], "S1");
        assert_eq!(s1["kind"], "conclusion");
        assert_eq!(s1["fact"], "coordinated_threat(42)");
        assert_eq!(s1["rule"], "rule:coordinated_threat");
        assert_eq!(s1["rule_tag"], "RULE-0");
        assert_eq!(s1["step_tag"], "STEP-1");
        assert_eq!(s1["premises"], serde_json::json!(["L1", "L2"]));
        let l1 = &json["nodes"][1];
        assert_eq!(l1["kind"], "evidence");
        assert_eq!(l1["evidence_type"], "hyperedge");
        assert_eq!(l1["hedge_tag"], "HEDGE-42");
        assert_eq!(l1["provenance"]["edge_idx"], 42);
        assert_eq!(l1["provenance"]["verified"], true);
        assert_eq!(l1["provenance"]["table"], "T");
        assert_eq!(
            json["edges"][1],
            serde_json::json!({"from": "S1", "to": "L2", "role": "premise"})
        );
        assert!((tree.confidence - 0.9 * 0.95).abs() < 1e-12);
        let tags: Vec<String> = tree.evidence_tags().into_iter().collect();
        assert_eq!(tags, ["HEDGE-42", "HEDGE-43", "RULE-0", "STEP-1"]);
    }

    #[test]
    fn json_round_trips() {
        let (m, _) = drones();
        let tree = prove(&m, "coordinated_threat", vec![n(42)]);
        let text = serde_json::to_string(&tree).unwrap();
        let back: ProofTree = serde_json::from_str(&text).unwrap();
        assert_eq!(back.nodes, tree.nodes);
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }

    #[test]
    fn shared_sub_proof_is_one_node() {
        // top :- left, right; left :- base; right :- base; base :- e.
        let mut m = MockBase::new();
        let e = m.input("e", vec![n(1)], 0.8, 5);
        let rel = m.relation("base", &[n(0)]);
        let r0 = m.rule("base", 1.0, rel);
        let base = m.derive("base", vec![n(1)], r0, vec![e], vec![]);
        let rl = m.relation("left", &[n(0)]);
        let r1 = m.rule("left", 0.9, rl);
        let left = m.derive("left", vec![n(1)], r1, vec![base], vec![]);
        let rr = m.relation("right", &[n(0)]);
        let r2 = m.rule("right", 0.5, rr);
        let right = m.derive("right", vec![n(1)], r2, vec![base], vec![]);
        let rt = m.relation("top", &[n(0)]);
        let r3 = m.rule("top", 1.0, rt);
        m.derive("top", vec![n(1)], r3, vec![left, right], vec![]);
        let tree = prove(&m, "top", vec![n(1)]);
        let ids: Vec<&str> = tree.nodes.iter().map(ProofNode::id).collect();
        assert_eq!(ids, ["S1", "S2", "S3", "L1", "S4"]);
        assert_eq!(tree.node("S2").unwrap().predicate(), "left");
        assert_eq!(tree.node("S4").unwrap().predicate(), "right");
        assert_eq!(tree.node("S4").unwrap().premises(), ["S3"]);
        assert_eq!(tree.edges.len(), 5);
        assert_eq!(tree.depth, 3);
        assert_eq!(tree.rules_fired, ["RULE-3", "RULE-1", "RULE-0", "RULE-2"]);
        assert!((tree.confidence - 0.4).abs() < 1e-12);
        let text = render::text(&tree);
        assert!(text.contains("S3 (shown above)"), "{text}");
    }

    #[test]
    fn negated_premise_is_an_absence_node() {
        let mut m = MockBase::new();
        let s = m.input("sighting", vec![n(9), sym("airport")], 0.85, 101);
        let cleared = m.relation("cleared", &[n(0)]);
        let rel = m.relation("intrusion", &[n(0), sym("")]);
        let r = m.rule("intrusion", 0.95, rel);
        m.derive(
            "intrusion",
            vec![n(9), sym("airport")],
            r,
            vec![s],
            vec![(cleared, vec![n(9)])],
        );
        let tree = prove(&m, "intrusion", vec![n(9), sym("airport")]);
        assert_eq!(tree.node("S1").unwrap().premises(), ["L1", "A1"]);
        let a1 = serde_json::to_value(tree.node("A1").unwrap()).unwrap();
        assert_eq!(
            a1,
            serde_json::json!({"id": "A1", "kind": "absence", "fact": "cleared(9)",
                "predicate": "cleared", "args": [9]})
        );
        assert_eq!(tree.depth, 1);
        assert!(render::context(&tree).contains("; and no record that cleared(9))"));
    }

    #[test]
    fn repeated_premise_is_listed_once() {
        let mut m = MockBase::new();
        let e = m.input("e", vec![n(1)], 0.7, 3);
        let rel = m.relation("twice", &[n(0)]);
        let r = m.rule("twice", 1.0, rel);
        m.derive("twice", vec![n(1)], r, vec![e, e, e], vec![]);
        let tree = prove(&m, "twice", vec![n(1)]);
        assert_eq!(tree.node("S1").unwrap().premises(), ["L1"]);
        assert_eq!(tree.edges.len(), 1);
        assert_eq!(tree.confidence, 0.7);
    }

    #[test]
    fn many_premises_with_repeats_keep_first_use_order() {
        let mut m = MockBase::new();
        let facts: Vec<FactId> = (0..20)
            .map(|i| m.input("e", vec![n(i)], 1.0 - i as f64 / 100.0, i as u64))
            .collect();
        let rel = m.relation("count", &[n(0)]);
        let r = m.rule("count", 1.0, rel);
        let premises: Vec<FactId> = facts.iter().chain(facts.iter().rev()).copied().collect();
        m.derive("count", vec![n(20)], r, premises, vec![]);
        let tree = prove(&m, "count", vec![n(20)]);
        let expected: Vec<String> = (1..=20).map(|k| format!("L{k}")).collect();
        assert_eq!(tree.node("S1").unwrap().premises(), expected.as_slice());
        assert_eq!(tree.edges.len(), 20);
        assert!((tree.confidence - 0.81).abs() < 1e-12);
    }

    #[test]
    fn input_goal_is_a_single_leaf_of_depth_zero() {
        let (m, _) = drones();
        let tree = prove(&m, "member", vec![n(42), n(9)]);
        assert_eq!(tree.goal.root.as_deref(), Some("L1"));
        assert_eq!(tree.depth, 0);
        assert_eq!(tree.nodes.len(), 1);
        assert!(tree.edges.is_empty() && tree.rules_fired.is_empty());
        assert_eq!(tree.confidence, 0.95);
    }

    #[test]
    fn missing_goal_is_unproved() {
        let (m, _) = drones();
        let tree = prove(&m, "coordinated_threat", vec![n(99)]);
        let json = serde_json::to_value(&tree).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"proof_id": "proof-1",
                "goal": {"predicate": "coordinated_threat", "args": [99], "root": null},
                "status": "unproved", "confidence": 0.0, "depth": 0, "rules_fired": [],
                "nodes": [], "edges": []})
        );
        assert!(tree.evidence_tags().is_empty());
    }

    #[test]
    fn bad_goals_are_typed_errors() {
        let (m, _) = drones();
        let opts = ProofOptions::default();
        let code = |f: Fact| build_proof(&f, &m, &opts).unwrap_err().code();
        assert_eq!(code(Fact::new("nope", vec![])), ErrorCode::UnknownRelation);
        assert_eq!(
            code(Fact::new("member", vec![n(1)])),
            ErrorCode::ArityMismatch
        );
        assert_eq!(
            code(Fact::new("member", vec![sym("x"), n(1)])),
            ErrorCode::TypeMismatch
        );
    }

    #[test]
    fn provenance_off_is_an_error_saying_so() {
        let (mut m, _) = drones();
        m.provenance = false;
        let err = build_proof(
            &Fact::new("coordinated_threat", vec![n(42)]),
            &m,
            &ProofOptions::default(),
        )
        .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ProvenanceUnavailable);
        assert!(
            err.primary()
                .help
                .as_deref()
                .unwrap_or("")
                .contains("provenance")
        );
    }

    #[test]
    fn cyclic_record_is_an_error_not_a_hang() {
        let mut m = MockBase::new();
        let e = m.input("e", vec![n(1)], 1.0, 1);
        let rel = m.relation("p", &[n(0)]);
        let r = m.rule("p", 1.0, rel);
        let p1 = m.derive("p", vec![n(1)], r, vec![e], vec![]);
        let p2 = m.derive("p", vec![n(2)], r, vec![p1], vec![]);
        m.set_premises(p1, vec![p2]);
        let err =
            build_proof(&Fact::new("p", vec![n(2)]), &m, &ProofOptions::default()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::ProvenanceUnavailable);
        assert!(err.to_string().contains("cycle"));
    }

    #[test]
    fn resolver_fields_are_merged_and_failures_unverify() {
        let (m, _) = drones();
        let resolver = |e: &EdgeRef| -> std::result::Result<
            serde_json::Map<String, serde_json::Value>,
            ResolverError,
        > {
            match e.edge_idx {
                42 => {
                    let mut map = serde_json::Map::new();
                    map.insert("source_id".into(), serde_json::json!("doc-42"));
                    map.insert("edge_idx".into(), serde_json::json!(0));
                    map.insert("hedge".into(), serde_json::json!(e.hedge_tag));
                    Ok(map)
                }
                _ => Err(ResolverError("not indexed".into())),
            }
        };
        let opts = ProofOptions::new("p").with_resolver(&resolver);
        let tree = build_proof(&Fact::new("coordinated_threat", vec![n(42)]), &m, &opts).unwrap();
        let json = serde_json::to_value(&tree).unwrap();
        let p1 = &json["nodes"][1]["provenance"];
        assert_eq!(p1["source_id"], "doc-42");
        assert_eq!(p1["hedge"], "HEDGE-42");
        assert_eq!(p1["edge_idx"], 42, "stored identity wins");
        assert_eq!(p1["verified"], true);
        let p2 = &json["nodes"][2]["provenance"];
        assert_eq!(p2["verified"], false);
        assert_eq!(p2["resolver_error"], "not indexed");
        assert_eq!(tree.status, ProofStatus::Proved);
    }

    #[test]
    fn panicking_resolver_unverifies_the_leaf() {
        let (m, _) = drones();
        let resolver = |_: &EdgeRef| -> std::result::Result<
            serde_json::Map<String, serde_json::Value>,
            String,
        > { panic!("index offline") };
        let opts = ProofOptions::new("p").with_resolver(&resolver);
        let tree = build_proof(&Fact::new("coordinated_threat", vec![n(42)]), &m, &opts).unwrap();
        for node in &tree.nodes {
            if let ProofNode::Evidence(e) = node {
                assert!(!e.provenance.verified);
                assert_eq!(
                    e.provenance.extra["resolver_error"],
                    "resolver panicked: index offline"
                );
            }
        }
    }

    #[test]
    fn prove_all_suffixes_ids_in_match_order() {
        let (mut m, _) = drones();
        let ct = m.program.relation_id("coordinated_threat").unwrap();
        let _ = ct;
        let c = m.input("member", vec![n(17), n(3)], 1.0, 44);
        let d = m.input("member", vec![n(17), n(4)], 1.0, 45);
        m.derive("coordinated_threat", vec![n(17)], 0, vec![c, d], vec![]);
        let pattern = Goal {
            predicate: "coordinated_threat".into(),
            args: vec![crate::syntax::GoalArg::Var("g".into())],
            arg_spans: Vec::new(),
            span: Default::default(),
        };
        let trees = prove_all(&pattern, &m, &ProofOptions::new("q"), None).unwrap();
        let ids: Vec<&str> = trees.iter().map(|t| t.proof_id.as_str()).collect();
        assert_eq!(ids, ["q#1", "q#2"]);
        assert_eq!(trees[0].goal.args, [n(17)]);
        assert_eq!(trees[1].goal.args, [n(42)]);
        let one = prove_all(&pattern, &m, &ProofOptions::new("q"), Some(1)).unwrap();
        assert_eq!(one.len(), 1);
    }

    #[test]
    fn tags_resolve_to_cited_facts_in_words() {
        let (m, _) = drones();
        let tree = prove(&m, "coordinated_threat", vec![n(42)]);
        let hedge = tree.resolve("HEDGE-43");
        assert_eq!(hedge.len(), 1);
        assert_eq!(hedge[0].text, "drone 9 is a member of group 42");
        assert_eq!(hedge[0].args, [n(42), n(9)]);
        let step = tree.resolve("STEP-1");
        assert_eq!(step[0].text, "group 42 is a coordinated threat");
        assert_eq!(tree.resolve("RULE-0")[0].predicate, "coordinated_threat");
        assert!(tree.resolve("HEDGE-1").is_empty());
        let set = vec![tree.clone(), tree];
        assert_eq!(set.resolve("HEDGE-42").len(), 1);
    }

    #[test]
    fn context_lines_cite_what_each_step_rests_on() {
        let (m, _) = drones();
        let tree = prove(&m, "coordinated_threat", vec![n(42)]);
        let ctx = render::context(&tree);
        let lines: Vec<&str> = ctx.lines().collect();
        assert_eq!(
            lines[1],
            "[STEP-1] group 42 is a coordinated threat (confidence 0.85; by RULE-0 from HEDGE-42, HEDGE-43)"
        );
        assert_eq!(
            lines[2],
            "[HEDGE-42] drone 7 is a member of group 42 (confidence 1.00; table T)"
        );
        assert_eq!(lines.len(), 4);
    }

    /// A random derivation DAG: fact i is input or derived from earlier facts.
    fn random_base(spec: &[(bool, u8, Vec<usize>, bool)]) -> MockBase {
        let mut m = MockBase::new();
        let rel = m.relation("f", &[n(0)]);
        let neg = m.relation("g", &[n(0)]);
        for k in 0..4u8 {
            m.rule(&format!("r{k}"), 1.0 - f64::from(k) * 0.1, rel);
        }
        let mut ids: Vec<FactId> = Vec::new();
        for (i, (input, rule, picks, negated)) in spec.iter().enumerate() {
            let args = vec![n(i as i64)];
            let id = if *input || ids.is_empty() {
                m.input("f", args, 0.5 + (i % 5) as f64 / 10.0, 1000 + i as u64)
            } else {
                let premises: Vec<FactId> = picks.iter().map(|p| ids[p % ids.len()]).collect();
                let absent = if *negated {
                    vec![(neg, vec![n((i % 3) as i64)])]
                } else {
                    vec![]
                };
                m.derive("f", args, u32::from(rule % 4), premises, absent)
            };
            ids.push(id);
        }
        m
    }

    fn spec() -> impl Strategy<Value = Vec<(bool, u8, Vec<usize>, bool)>> {
        prop::collection::vec(
            (
                prop::bool::weighted(0.3),
                any::<u8>(),
                prop::collection::vec(0usize..64, 1..4),
                prop::bool::weighted(0.2),
            ),
            1..40,
        )
    }

    proptest! {
        #[test]
        fn random_dags_give_consistent_proofs(spec in spec(), goal in 0usize..40) {
            let m = random_base(&spec);
            let goal = (goal % spec.len()) as i64;
            let tree = prove(&m, "f", vec![n(goal)]);
            prop_assert!(tree.is_proved());
            prop_assert_eq!(tree.nodes[0].id(), tree.goal.root.as_deref().unwrap());
            let ids: HashSet<&str> = tree.nodes.iter().map(ProofNode::id).collect();
            prop_assert_eq!(ids.len(), tree.nodes.len());
            let by_id: HashMap<&str, &ProofNode> =
                tree.nodes.iter().map(|n| (n.id(), n)).collect();
            let mut tags = BTreeSet::new();
            for node in &tree.nodes {
                match node {
                    ProofNode::Conclusion(c) => {
                        let k: usize = c.id[1..].parse().unwrap();
                        prop_assert_eq!(&c.step_tag, &format!("STEP-{k}"));
                        let rule_id: usize = c.rule_tag[5..].parse().unwrap();
                        let min = c
                            .premises
                            .iter()
                            .filter_map(|p| by_id[p.as_str()].confidence())
                            .fold(1.0f64, f64::min);
                        let expected = m.program.rules[rule_id].confidence * min;
                        prop_assert!((c.confidence - expected).abs() < 1e-12);
                        tags.insert(c.step_tag.clone());
                        tags.insert(c.rule_tag.clone());
                        prop_assert!(tree.rules_fired.contains(&c.rule_tag));
                    }
                    ProofNode::Evidence(e) => {
                        let fact = m.lookup(0, &e.args).unwrap();
                        prop_assert!(m.evidence(fact).is_some());
                        prop_assert_eq!(&e.hedge_tag, &format!("HEDGE-{}", e.provenance.edge_idx));
                        tags.insert(e.hedge_tag.clone());
                    }
                    ProofNode::Absence(a) => prop_assert_eq!(&a.predicate, "g"),
                }
            }
            prop_assert_eq!(&tags, &tree.evidence_tags());
            // Edges point from earlier-created parents into a DAG: a topological order exists.
            let mut indegree: HashMap<&str, usize> = ids.iter().map(|i| (*i, 0)).collect();
            for e in &tree.edges {
                *indegree.get_mut(e.to.as_str()).unwrap() += 1;
            }
            let mut ready: Vec<&str> = indegree.iter().filter(|(_, d)| **d == 0).map(|(i, _)| *i).collect();
            let mut seen = 0;
            while let Some(i) = ready.pop() {
                seen += 1;
                for p in by_id[i].premises() {
                    let d = indegree.get_mut(p.as_str()).unwrap();
                    *d -= 1;
                    if *d == 0 { ready.push(p.as_str()); }
                }
            }
            prop_assert_eq!(seen, tree.nodes.len());
            let again = prove(&m, "f", vec![n(goal)]);
            prop_assert_eq!(tree.to_json_pretty(), again.to_json_pretty());
            prop_assert_eq!(render::html(std::slice::from_ref(&tree)), render::html(&[again]));
        }
    }
}
