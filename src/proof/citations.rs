//! One table from citation tags to the facts they name, for one request.
//!
//! A [`CitationTable`] collects what a request may cite: the tags and facts of its
//! proofs ([`CitationTable::add_proof`]), input facts cited as evidence by their
//! `HEDGE-<edge_idx>` tags ([`CitationTable::add_input_facts`]), cited facts given as
//! JSON by another system ([`CitationTable::add_cited_json`]) and bare allowed tags
//! ([`CitationTable::allow`]). It is the allowed set ([`TagSet`]) and the resolver
//! ([`TagResolver`]) the answer checkers read; the command line and library users use
//! the same table.
//!
//! A tag means one thing in a request. When two sources name different facts by the
//! same tag (two proofs built as separate requests, each with its own `STEP-1`; two
//! packs with different `HEDGE-42`), the tag is *ambiguous*: it stays resolvable, but
//! the firewall strips any sentence that cites it.
//!
//! # Proofs read back from JSON
//!
//! A proof file is data, not evidence: anyone can write one. [`read_proofs`] parses
//! ProofTree JSON, and [`verify_proof`] rebuilds each tree from its goal against a
//! fact base (the pack and evidence the caller trusts) and accepts it only if the
//! rebuilt tree has the same nodes, tags, facts, premises and confidences. What the
//! table then holds is the *rebuilt* tree: its words come from the pack's `.text`, never
//! from the file.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value as Json;

use crate::answer::firewall::{TagSet, canonical_tag};
use crate::answer::{CitedFact, TagResolver};
use crate::diag::{Diagnostic, ErrorCode, Result};
use crate::ir::Program;
use crate::store::InputFacts;
use crate::value::Value;

use super::{Fact, ProofNode, ProofOptions, ProofSource, ProofTree, build_proof, verbalise};

/// What a tag names in one source: sorted facts (`predicate`, `args`, `negated`), or a
/// rule's name for a `RULE` tag.
#[derive(Debug, Clone, PartialEq)]
enum Signature {
    Facts(Vec<(String, Vec<Value>, bool)>),
    Rule(String),
}

/// The tag → cited-fact table of one request (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct CitationTable {
    allowed: BTreeSet<String>,
    facts: HashMap<String, Vec<CitedFact>>,
    signatures: HashMap<String, Signature>,
    ambiguous: BTreeSet<String>,
    order: Vec<String>,
    proved: bool,
    templates: HashMap<String, String>,
    functional: HashMap<String, Vec<usize>>,
}

impl CitationTable {
    /// An empty table.
    pub fn new() -> CitationTable {
        CitationTable::default()
    }

    /// A table of these proofs (one request).
    pub fn from_proofs(trees: &[ProofTree]) -> CitationTable {
        let mut t = CitationTable::new();
        for tree in trees {
            t.add_proof(tree);
        }
        t
    }

    /// Verbalise facts added later without words (input facts, cited-fact JSON) with
    /// the program's `.text` templates, and key them by its `.functional` declarations.
    pub fn with_program(mut self, program: &Program) -> CitationTable {
        for rel in &program.relations {
            if let Some(text) = &rel.text {
                self.templates
                    .entry(rel.name.clone())
                    .or_insert_with(|| text.clone());
            }
            if let Some(key) = &rel.functional {
                self.functional.insert(rel.name.clone(), key.clone());
            }
        }
        self
    }

    /// Verbalisation templates by predicate (`{"member": "drone {1} is a member of
    /// group {0}"}`) for cited-fact JSON without words; they win over the program's.
    pub fn with_templates(mut self, templates: HashMap<String, String>) -> CitationTable {
        self.templates.extend(templates);
        self
    }

    /// Add a proof: every tag in it is allowed, and names what the tree says
    /// ([`ProofTree::citations`]).
    pub fn add_proof(&mut self, tree: &ProofTree) {
        self.proved |= tree.is_proved();
        for tag in tree.evidence_tags() {
            self.allowed.insert(tag);
        }
        let mut groups: Vec<(String, Vec<CitedFact>)> = Vec::new();
        for fact in tree.citations() {
            match groups.iter_mut().find(|(t, _)| *t == fact.tag) {
                Some((_, list)) => list.push(fact),
                None => groups.push((fact.tag.clone(), vec![fact])),
            }
        }
        let rule_names: HashMap<&str, &str> = tree
            .nodes
            .iter()
            .filter_map(|n| match n {
                ProofNode::Conclusion(c) => Some((c.rule_tag.as_str(), c.rule.as_str())),
                _ => None,
            })
            .collect();
        for (tag, facts) in groups {
            let sig = match rule_names.get(tag.as_str()) {
                Some(name) if tag.starts_with("RULE-") => Signature::Rule(name.to_string()),
                _ => signature(&facts),
            };
            self.merge(&tag, sig, facts);
        }
    }

    /// Add input facts as cited evidence: each fact with an `edge_idx` under its tag
    /// `HEDGE-<edge_idx>`, in words by its relation's `.text` (else `pred(args)`), keyed
    /// by its `.functional` declaration.
    pub fn add_input_facts(&mut self, program: &Program, facts: &InputFacts) {
        for i in 0..facts.len() {
            let Some(edge) = facts.edge_idx(i) else {
                continue;
            };
            let rel = program.relation(facts.rel(i));
            let args = facts.args(i);
            let tag = format!("HEDGE-{edge}");
            self.allowed.insert(tag.clone());
            let fact = CitedFact::new(
                tag.clone(),
                rel.name.clone(),
                args.clone(),
                verbalise(rel.text.as_deref(), &rel.name, &args),
            )
            .with_functional_key(rel.functional.clone());
            self.merge(&tag, signature(std::slice::from_ref(&fact)), vec![fact]);
        }
    }

    /// Add one cited fact under its tag (allowed from now on). A second, different fact
    /// under the same non-`RULE` tag makes the tag ambiguous.
    pub fn add_fact(&mut self, fact: CitedFact) {
        let tag = fact.tag.clone();
        self.allowed.insert(tag.clone());
        // A rule names many conclusions; a step names its conclusion and the facts it
        // relied on being absent. Neither makes a tag ambiguous.
        if tag.starts_with("RULE-") || fact.negated {
            let list = self.facts.entry(tag.clone()).or_default();
            if list.is_empty() {
                self.order.push(tag);
            }
            if !list.contains(&fact) {
                list.push(fact);
            }
            return;
        }
        self.merge(&tag, signature(std::slice::from_ref(&fact)), vec![fact]);
    }

    /// Add cited facts given as JSON: an array of `{"tag", "predicate", "args",
    /// "text"?, "fact"?, "functional_key"?}`. A fact's words are its `text`, else its
    /// predicate's template filled in, else its `fact`, else `pred(args)`. Errors name
    /// the item.
    pub fn add_cited_json(&mut self, json: &Json) -> std::result::Result<(), String> {
        let items = json
            .as_array()
            .ok_or("expected an array of cited facts or a proof")?;
        for (i, item) in items.iter().enumerate() {
            let at = |what: &str| format!("cited fact {i}: {what}");
            let obj = item.as_object().ok_or_else(|| at("expected an object"))?;
            let raw = obj
                .get("tag")
                .and_then(Json::as_str)
                .ok_or_else(|| at("needs a string `tag`"))?;
            let tag = canonical_tag(raw).unwrap_or_else(|| raw.to_string());
            let fact = self.cited_fact(tag, obj).map_err(|m| at(&m))?;
            self.add_fact(fact);
        }
        Ok(())
    }

    fn cited_fact(
        &self,
        tag: String,
        obj: &serde_json::Map<String, Json>,
    ) -> std::result::Result<CitedFact, String> {
        let predicate = match obj.get("predicate") {
            Some(Json::String(p)) => p.clone(),
            None => String::new(),
            Some(_) => return Err("`predicate` must be a string".into()),
        };
        let args = match obj.get("args") {
            None => Vec::new(),
            Some(Json::Array(a)) => a
                .iter()
                .map(|v| {
                    Value::from_json(v)
                        .ok_or_else(|| format!("argument {v} is not a number or string"))
                })
                .collect::<std::result::Result<Vec<_>, _>>()?,
            Some(_) => return Err("`args` must be an array".into()),
        };
        let text = match (
            obj.get("text"),
            self.templates.get(&predicate),
            obj.get("fact"),
        ) {
            (Some(Json::String(t)), _, _) => t.clone(),
            (Some(_), _, _) => return Err("`text` must be a string".into()),
            (None, Some(template), _) => verbalise(Some(template), &predicate, &args),
            (None, None, Some(Json::String(t))) => t.clone(),
            _ => verbalise(None, &predicate, &args),
        };
        let functional_key = match obj.get("functional_key") {
            None | Some(Json::Null) => self.functional.get(&predicate).cloned(),
            Some(Json::Array(cols)) => Some(
                cols.iter()
                    .map(|c| {
                        c.as_u64()
                            .and_then(|c| usize::try_from(c).ok())
                            .ok_or_else(|| "`functional_key` must list column numbers".to_string())
                    })
                    .collect::<std::result::Result<Vec<_>, _>>()?,
            ),
            Some(_) => return Err("`functional_key` must be an array".into()),
        };
        Ok(CitedFact::new(tag, predicate, args, text).with_functional_key(functional_key))
    }

    /// Allow a tag that names no fact here (a caller's own allowed set).
    pub fn allow(&mut self, tag: impl Into<String>) {
        self.allowed.insert(tag.into());
    }

    fn merge(&mut self, tag: &str, sig: Signature, facts: Vec<CitedFact>) {
        match self.signatures.get(tag) {
            Some(existing) if *existing != sig => {
                self.ambiguous.insert(tag.to_string());
            }
            Some(_) => {}
            None => {
                self.signatures.insert(tag.to_string(), sig);
            }
        }
        let list = self.facts.entry(tag.to_string()).or_default();
        if list.is_empty() {
            self.order.push(tag.to_string());
        }
        for f in facts {
            if !list
                .iter()
                .any(|g| g.predicate == f.predicate && g.args == f.args && g.negated == f.negated)
            {
                list.push(f);
            }
        }
    }

    /// Every allowed tag, sorted.
    pub fn allowed(&self) -> &BTreeSet<String> {
        &self.allowed
    }

    /// Tags that name facts, in the order they were first added.
    pub fn fact_tags(&self) -> &[String] {
        &self.order
    }

    /// Tags that name different facts in different sources of the request.
    pub fn ambiguous(&self) -> &BTreeSet<String> {
        &self.ambiguous
    }

    /// Whether some added proof proved its goal.
    pub fn is_proved(&self) -> bool {
        self.proved
    }
}

/// What a tag names in one source, for ambiguity: its positive facts (a step's
/// negated premises go with its conclusion).
fn signature(facts: &[CitedFact]) -> Signature {
    let mut sig: Vec<(String, Vec<Value>, bool)> = facts
        .iter()
        .filter(|f| !f.negated)
        .map(|f| (f.predicate.clone(), f.args.clone(), f.negated))
        .collect();
    sig.sort();
    sig.dedup();
    Signature::Facts(sig)
}

impl TagResolver for CitationTable {
    fn resolve(&self, tag: &str) -> Vec<CitedFact> {
        self.facts.get(tag).cloned().unwrap_or_default()
    }

    fn is_ambiguous(&self, tag: &str) -> bool {
        self.ambiguous.contains(tag)
    }
}

impl TagSet for CitationTable {
    fn contains_tag(&self, tag: &str) -> bool {
        self.allowed.contains(tag)
    }

    fn is_ambiguous_tag(&self, tag: &str) -> bool {
        self.ambiguous.contains(tag)
    }
}

/// Parse ProofTree JSON: one tree, or an array of them; `file` names the input in
/// errors. The trees are *not* trusted yet; see [`verify_proof`].
pub fn read_proofs(file: &str, json: &str) -> Result<Vec<ProofTree>> {
    let value: Json = serde_json::from_str(json).map_err(|e| {
        Diagnostic::new(ErrorCode::BadInput, format!("invalid proof JSON: {e}"))
            .at(crate::diag::Location::at(file, e.line(), e.column()))
    })?;
    let items: Vec<Json> = match value {
        Json::Array(items) => items,
        other => vec![other],
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            serde_json::from_value::<ProofTree>(item).map_err(|e| {
                Diagnostic::new(
                    ErrorCode::BadInput,
                    format!("{file}: proof {i} is not a ProofTree: {e}"),
                )
                .into()
            })
        })
        .collect()
}

/// Rebuild a proof read from JSON against `source` (the fact base the caller trusts)
/// and return the rebuilt tree, or an error saying where the file differs. The file's
/// words, if any, are ignored: the rebuilt tree says its facts with the pack's `.text`.
pub fn verify_proof<S: ProofSource + ?Sized>(tree: &ProofTree, source: &S) -> Result<ProofTree> {
    let goal = Fact::new(tree.goal.predicate.clone(), tree.goal.args.clone());
    let options = ProofOptions::new(&tree.proof_id).with_first_step(tree.first_step());
    let rebuilt = build_proof(&goal, source, &options)?;
    if let Some(diff) = difference(tree, &rebuilt) {
        return Err(Diagnostic::new(
            ErrorCode::BadInput,
            format!(
                "proof `{}` does not match the rule pack and evidence: {diff}",
                tree.proof_id
            ),
        )
        .with_help(
            "pass the pack and evidence the proof was built from, or let `check --goal` prove it",
        )
        .into());
    }
    Ok(rebuilt)
}

/// The first way two trees differ (ignoring provenance beyond the edge index).
fn difference(file: &ProofTree, real: &ProofTree) -> Option<String> {
    let json = |v: &[Value]| serde_json::to_value(v).unwrap_or_default();
    if file.status != real.status {
        return Some(format!(
            "the goal is {} here, the file says {}",
            status(real),
            status(file)
        ));
    }
    if json(&file.goal.args) != json(&real.goal.args) || file.goal.root != real.goal.root {
        return Some("its goal differs".into());
    }
    if file.confidence.to_bits() != real.confidence.to_bits()
        && (file.confidence - real.confidence).abs() > 1e-12
    {
        return Some(format!(
            "confidence {} here, {} in the file",
            real.confidence, file.confidence
        ));
    }
    if file.depth != real.depth || file.rules_fired != real.rules_fired {
        return Some("its depth or rules differ".into());
    }
    if let (Some(a), Some(b)) = (&file.pack, &real.pack)
        && a.digest != b.digest
    {
        return Some(format!(
            "it was made with another rule pack ({}, here {})",
            a.digest, b.digest
        ));
    }
    if file.nodes.len() != real.nodes.len() {
        return Some(format!(
            "{} nodes here, {} in the file",
            real.nodes.len(),
            file.nodes.len()
        ));
    }
    for (a, b) in file.nodes.iter().zip(&real.nodes) {
        let same = a.id() == b.id()
            && a.predicate() == b.predicate()
            && json(a.args()) == json(b.args())
            && a.tag() == b.tag()
            && a.premises() == b.premises()
            && match (a.confidence(), b.confidence()) {
                (Some(x), Some(y)) => (x - y).abs() <= 1e-12,
                (None, None) => true,
                _ => false,
            }
            && match (a, b) {
                (ProofNode::Conclusion(x), ProofNode::Conclusion(y)) => {
                    x.rule_tag == y.rule_tag && x.rule == y.rule
                }
                (ProofNode::Evidence(x), ProofNode::Evidence(y)) => {
                    x.provenance.edge_idx == y.provenance.edge_idx
                }
                (ProofNode::Absence(_), ProofNode::Absence(_)) => true,
                _ => false,
            };
        // Words a file brings must be the pack's own.
        if same
            && let Some(words) = a.text()
            && Some(words) != b.text()
        {
            return Some(format!(
                "node {} says \"{words}\", the pack says \"{}\"",
                b.id(),
                real.node_text(b)
            ));
        }
        if !same {
            return Some(format!(
                "node {} is `{}` {} here, the file has `{}` {}",
                b.id(),
                b.fact(),
                b.tag().unwrap_or(""),
                a.fact(),
                a.tag().unwrap_or("")
            ));
        }
    }
    if file.edges != real.edges {
        return Some("its premise links differ".into());
    }
    None
}

fn status(t: &ProofTree) -> &'static str {
    if t.is_proved() { "proved" } else { "unproved" }
}
