//! Citation tags to facts: how the answer checkers see a proof.
//!
//! `HEDGE-n` names the evidence leaf bound to edge `n`; `STEP-k` names the conclusion
//! of node `Sk`; `RULE-n` names every conclusion the rule derived in the proof (so that
//! a sentence citing only a rule can still be checked against what the rule concluded).
//! Across a set of proofs, `STEP-k` is numbered per proof and resolves to the `Sk` of
//! every proof in the set; a fact named by several trees is listed once.

use crate::answer::{CitedFact, TagResolver};
use crate::value::Value;

use super::{PredicateInfo, ProofNode, ProofTree};

/// A fact in words: the predicate's `.text` template with each `{i}` replaced by
/// argument `i` (symbols without quotes), else `pred(args)`. A placeholder naming no
/// argument is left as written.
pub fn verbalise(template: Option<&str>, predicate: &str, args: &[Value]) -> String {
    let Some(template) = template else {
        return crate::value::fact_text(predicate, args);
    };
    let mut out = String::with_capacity(template.len() + 8 * args.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let arg = (digits > 0 && after[digits..].starts_with('}'))
            .then(|| after[..digits].parse::<usize>().ok())
            .flatten()
            .and_then(|i| args.get(i));
        match arg {
            Some(v) => {
                push_plain(&mut out, v);
                rest = &after[digits + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn push_plain(out: &mut String, v: &Value) {
    match v {
        Value::Symbol(s) => out.push_str(s),
        other => out.push_str(&other.to_string()),
    }
}

impl ProofTree {
    /// The node's fact in words: the node's own `text`, else its predicate's
    /// template (see [`verbalise`]), else the fact as the rule language writes it.
    pub fn node_text(&self, node: &ProofNode) -> String {
        if let Some(text) = node.text() {
            return text.to_string();
        }
        let info = self.predicates.get(node.predicate());
        verbalise(
            info.and_then(|i| i.text.as_deref()),
            node.predicate(),
            node.args(),
        )
    }

    fn cite(&self, tag: &str, node: &ProofNode) -> CitedFact {
        let info: Option<&PredicateInfo> = self.predicates.get(node.predicate());
        let fact = CitedFact::new(
            tag,
            node.predicate(),
            node.args().to_vec(),
            self.node_text(node),
        )
        .with_functional_key(info.and_then(|i| i.functional.clone()));
        if matches!(node, ProofNode::Absence(_)) {
            fact.negated()
        } else {
            fact
        }
    }

    /// Every citation the tree hands out, in node order: each evidence leaf under its
    /// `HEDGE` tag; each conclusion under its `STEP` tag, followed by the facts that
    /// step relied on being absent (negated); each conclusion under its `RULE` tag.
    pub fn citations(&self) -> Vec<CitedFact> {
        let mut out = Vec::new();
        for node in &self.nodes {
            match node {
                ProofNode::Conclusion(c) => {
                    out.push(self.cite(&c.step_tag, node));
                    for p in &c.premises {
                        if let Some(a @ ProofNode::Absence(_)) = self.node(p) {
                            out.push(self.cite(&c.step_tag, a));
                        }
                    }
                    out.push(self.cite(&c.rule_tag, node));
                }
                ProofNode::Evidence(e) => out.push(self.cite(&e.hedge_tag, node)),
                ProofNode::Absence(_) => {}
            }
        }
        out
    }
}

impl TagResolver for ProofTree {
    fn resolve(&self, tag: &str) -> Vec<CitedFact> {
        let mut out = Vec::new();
        for node in &self.nodes {
            match node {
                ProofNode::Conclusion(c) if c.step_tag == tag => {
                    out.push(self.cite(tag, node));
                    for p in &c.premises {
                        if let Some(a @ ProofNode::Absence(_)) = self.node(p) {
                            out.push(self.cite(tag, a));
                        }
                    }
                }
                ProofNode::Conclusion(c) if c.rule_tag == tag => out.push(self.cite(tag, node)),
                ProofNode::Evidence(e) if e.hedge_tag == tag => out.push(self.cite(tag, node)),
                _ => {}
            }
        }
        out
    }
}

/// A set of trees resolves a tag to what any of them names by it (a fact named by
/// several trees listed once). A `STEP` or `HEDGE` tag that names different facts in
/// two trees (trees built as separate requests each number their steps from 1) is
/// ambiguous; [`prove_all`](super::prove_all) and [`prove_request`](super::prove_request)
/// number steps across the trees of one request, so their tags never are.
impl TagResolver for [ProofTree] {
    fn resolve(&self, tag: &str) -> Vec<CitedFact> {
        let mut out: Vec<CitedFact> = Vec::new();
        for tree in self {
            for fact in tree.resolve(tag) {
                if !out.iter().any(|f| {
                    f.predicate == fact.predicate
                        && f.args == fact.args
                        && f.negated == fact.negated
                }) {
                    out.push(fact);
                }
            }
        }
        out
    }

    fn is_ambiguous(&self, tag: &str) -> bool {
        let mut seen: Option<Vec<(String, Vec<Value>, bool)>> = None;
        for tree in self {
            let facts = tree.resolve(tag);
            if facts.is_empty() {
                continue;
            }
            let mut sig: Vec<(String, Vec<Value>, bool)> = facts
                .into_iter()
                .map(|f| (f.predicate, f.args, f.negated))
                .collect();
            sig.sort();
            if tag.starts_with("RULE-") {
                continue;
            }
            match &seen {
                Some(s) if *s != sig => return true,
                Some(_) => {}
                None => seen = Some(sig),
            }
        }
        false
    }
}

impl TagResolver for Vec<ProofTree> {
    fn resolve(&self, tag: &str) -> Vec<CitedFact> {
        self.as_slice().resolve(tag)
    }

    fn is_ambiguous(&self, tag: &str) -> bool {
        self.as_slice().is_ambiguous(tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbalise_fills_placeholders_without_quotes() {
        let args = [Value::Number(42), Value::Symbol("air\"port".into())];
        assert_eq!(
            verbalise(Some("group {0} threatens zone {1}"), "threatens", &args),
            "group 42 threatens zone air\"port"
        );
    }

    #[test]
    fn verbalise_keeps_unknown_placeholders_and_braces() {
        let args = [Value::Number(1)];
        assert_eq!(verbalise(Some("{0} {2} {x} {"), "p", &args), "1 {2} {x} {");
    }

    #[test]
    fn verbalise_without_template_is_fact_text() {
        let args = [Value::Symbol("a".into())];
        assert_eq!(verbalise(None, "p", &args), "p(\"a\")");
    }
}
