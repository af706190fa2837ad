//! Rendering a proof for a prompt, a terminal, Graphviz or a browser.
//!
//! Every renderer is a pure function of the tree: the same tree renders to the same
//! bytes. Facts are said in words: a node's own `text`, else its predicate's `.text`
//! verbalisation when the tree carries it (see [`ProofTree::with_program`]). An absence
//! is always said as what is *not* recorded ("no record that …"), never as a statement.
//!
//! Data never shapes the output: every value that comes from facts, provenance or the
//! caller (symbols, verbalisations, proof ids, table names, provenance fields) has its
//! control characters, line breaks, invisible characters and backslashes escaped
//! ([`escape_line`]) and its tag-shaped brackets escaped (`\[HEDGE-1\]`) in the context
//! block and the terminal tree, so a symbol holding `"\n[HEDGE-1] …"` cannot forge a
//! line or a citation of the block that goes into a prompt, and a terminal escape
//! cannot reach a terminal. Graphviz and HTML output escape control and invisible
//! characters before their own quoting.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::{EvidenceNode, ProofNode, ProofTree};
use crate::answer::normalize::{defang_tags, escape_controls, escape_line, is_invisible};
use crate::value::format_confidence as conf;

/// A value from data, safe on one line of a prompt: escaped, with tag-shaped brackets
/// defanged.
fn data(s: &str) -> String {
    defang_tags(&escape_line(s)).into_owned()
}

/// A fact written as the rule language writes it (already quoted), safe on one line.
fn literal(s: &str) -> String {
    defang_tags(&escape_controls(s)).into_owned()
}

fn index_of(tree: &ProofTree) -> HashMap<&str, usize> {
    tree.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id(), i))
        .collect()
}

/// Provenance fields that cite where a fact was recorded, first: a document, a page,
/// a row. Other scalar fields follow by name.
const CITED_FIRST: [&str; 9] = [
    "doc_id", "document", "doc", "url", "title", "section", "page", "row", "line",
];

/// Stored fields that are not shown as "where" (they are said elsewhere, or are noise
/// in a prompt).
const NOT_WHERE: [&str; 3] = ["resolver_error", "event_ts", "member_ids"];

/// A provenance value as text: strings without quotes, other scalars as JSON, arrays
/// joined; `None` for null and objects.
fn field_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::Null | serde_json::Value::Object(_) => None,
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(items) => {
            let parts: Vec<String> = items.iter().filter_map(field_text).collect();
            (!parts.is_empty()).then(|| parts.join(", "))
        }
        other => Some(other.to_string()),
    }
}

/// Where an evidence leaf was recorded, as `(label, value)` pairs a reader can cite:
/// its store (`table DRONES`, `program rules/drones/drones.dl`, `file facts.json`),
/// then the citing fields (`doc_id`, `page`, `row`, `line`, …), then any other scalar
/// field by name.
pub(crate) fn where_recorded(e: &EvidenceNode) -> Vec<(String, String)> {
    let p = &e.provenance;
    let mut out = Vec::new();
    let store = match p.source.as_str() {
        "hyperedge" => "table",
        "program" => "program",
        "facts" => "file",
        _ => "",
    };
    if store.is_empty() {
        out.push(("source".to_string(), p.source.clone()));
        if let Some(t) = &p.table {
            out.push(("table".to_string(), t.clone()));
        }
    } else if let Some(t) = &p.table {
        out.push((store.to_string(), t.clone()));
    }
    for key in CITED_FIRST {
        if let Some(v) = p.extra.get(key).and_then(field_text) {
            out.push((key.to_string(), v));
        }
    }
    for (key, v) in &p.extra {
        if CITED_FIRST.contains(&key.as_str()) || NOT_WHERE.contains(&key.as_str()) {
            continue;
        }
        if let Some(v) = field_text(v).filter(|_| !v.is_array()) {
            out.push((key.clone(), v));
        }
    }
    out
}

/// Whether a resolver vouched for the leaf: `Some(true)` verified, `Some(false)`
/// unverified, `None` when no resolver ran (the leaf is bound to a loaded record, and
/// nothing more is claimed).
fn resolver_verdict(e: &EvidenceNode) -> Option<bool> {
    let p = &e.provenance;
    if !p.verified {
        Some(false)
    } else if p.resolved {
        Some(true)
    } else {
        None
    }
}

/// `table DRONES, page 3` and the resolver's verdict, for one-line renderings.
fn where_line(e: &EvidenceNode) -> String {
    where_parts(e).join(", ")
}

/// The parts of [`where_line`].
fn where_parts(e: &EvidenceNode) -> Vec<String> {
    let mut parts: Vec<String> = where_recorded(e)
        .into_iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    match resolver_verdict(e) {
        Some(true) => parts.push("verified".to_string()),
        Some(false) => match e
            .provenance
            .extra
            .get("resolver_error")
            .and_then(field_text)
        {
            Some(why) => parts.push(format!("UNVERIFIED: {why}")),
            None => parts.push("UNVERIFIED".to_string()),
        },
        None => {}
    }
    parts
}

/// An absent fact said as what is not recorded.
fn no_record(words: &str) -> String {
    format!("no record that {words}")
}

/// A compact tagged block for an LLM prompt: a header line, then one line per tagged
/// node (root first) with its tag, the fact in words, its confidence and the tags it
/// rests on (a leaf: where it was recorded). Absent facts a step relied on are named
/// on that step's line ("and no record that …"); they carry no tag of their own.
///
/// ```text
/// proof-1: coordinated_threat(42) is proved (confidence 0.90)
/// [STEP-1] group 42 is a coordinated threat (confidence 0.90; by RULE-0 from HEDGE-42, HEDGE-43)
/// [HEDGE-42] drone 7 is a member of group 42 (confidence 1.00; table DRONES)
/// ```
pub fn context(tree: &ProofTree) -> String {
    let mut out = String::new();
    let goal = literal(&crate::value::fact_text(
        &tree.goal.predicate,
        &tree.goal.args,
    ));
    let proof_id = data(&tree.proof_id);
    if !tree.is_proved() {
        let _ = writeln!(
            out,
            "{proof_id}: {goal} is unproved; there is no evidence to cite for it."
        );
        return out;
    }
    let _ = writeln!(
        out,
        "{proof_id}: {goal} is proved (confidence {})",
        conf(tree.confidence)
    );
    let index = index_of(tree);
    for node in &tree.nodes {
        match node {
            ProofNode::Conclusion(c) => {
                let mut tags = Vec::new();
                let mut absent = Vec::new();
                for p in &c.premises {
                    match index.get(p.as_str()).map(|&i| &tree.nodes[i]) {
                        Some(n @ ProofNode::Absence(_)) => absent.push(data(&tree.node_text(n))),
                        Some(n) => tags.extend(n.tag().map(str::to_string)),
                        None => {}
                    }
                }
                let _ = write!(
                    out,
                    "[{}] {} (confidence {}; by {}",
                    escape_line(&c.step_tag),
                    data(&tree.node_text(node)),
                    conf(c.confidence),
                    escape_line(&c.rule_tag)
                );
                if !tags.is_empty() {
                    let _ = write!(out, " from {}", tags.join(", "));
                }
                for a in &absent {
                    let _ = write!(out, "; and {}", no_record(a));
                }
                out.push_str(")\n");
            }
            ProofNode::Evidence(e) => {
                let _ = write!(
                    out,
                    "[{}] {} (confidence {}",
                    escape_line(&e.hedge_tag),
                    data(&tree.node_text(node)),
                    conf(e.confidence)
                );
                let place = data(&where_line(e));
                if !place.is_empty() {
                    let _ = write!(out, "; {place}");
                }
                out.push_str(")\n");
            }
            ProofNode::Absence(_) => {}
        }
    }
    out
}

/// One line describing a node for the terminal tree.
fn text_line(tree: &ProofTree, node: &ProofNode) -> String {
    match node {
        ProofNode::Conclusion(c) => format!(
            "{} [{}] {}  confidence {}  by {} [{}]",
            escape_line(&c.id),
            escape_line(&c.step_tag),
            data(&tree.node_text(node)),
            conf(c.confidence),
            data(&c.rule),
            escape_line(&c.rule_tag)
        ),
        ProofNode::Evidence(e) => {
            let place = data(&where_line(e));
            format!(
                "{} [{}] {}  confidence {}{}{place}",
                escape_line(&e.id),
                escape_line(&e.hedge_tag),
                data(&tree.node_text(node)),
                conf(e.confidence),
                if place.is_empty() { "" } else { "  " },
            )
        }
        ProofNode::Absence(a) => format!(
            "{} {}",
            escape_line(&a.id),
            no_record(&data(&tree.node_text(node)))
        ),
    }
}

/// An indented tree for a terminal. A node reached a second time is shown as a
/// reference to where it was first shown (`S3, shown above`).
pub fn text(tree: &ProofTree) -> String {
    let mut out = String::new();
    let goal = crate::value::fact_text(&tree.goal.predicate, &tree.goal.args);
    let status = if tree.is_proved() {
        "proved"
    } else {
        "unproved"
    };
    let _ = writeln!(
        out,
        "{}: {} {status}, confidence {}, depth {}",
        data(&tree.proof_id),
        literal(&goal),
        conf(tree.confidence),
        tree.depth
    );
    let Some(root) = tree.goal.root.as_deref() else {
        return out;
    };
    let index = index_of(tree);
    let mut shown = vec![false; tree.nodes.len()];
    // (node, prefix for its children, connector for its own line)
    let mut stack: Vec<(usize, String, String)> = Vec::new();
    if let Some(&r) = index.get(root) {
        stack.push((r, String::new(), String::new()));
    }
    while let Some((i, prefix, connector)) = stack.pop() {
        let node = &tree.nodes[i];
        if shown[i] {
            let _ = writeln!(out, "{connector}{} (shown above)", node.id());
            continue;
        }
        shown[i] = true;
        let _ = writeln!(out, "{connector}{}", text_line(tree, node));
        let premises = node.premises();
        for (k, p) in premises.iter().enumerate().rev() {
            let Some(&child) = index.get(p.as_str()) else {
                continue;
            };
            let last = k + 1 == premises.len();
            let conn = format!("{prefix}{}", if last { "└── " } else { "├── " });
            let pre = format!("{prefix}{}", if last { "    " } else { "│   " });
            stack.push((child, pre, conn));
        }
    }
    out
}

fn dot_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c != '\n' && (c.is_control() || is_invisible(c)) {
            let _ = write!(out, "\\\\u{{{:x}}}", c as u32);
            continue;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// The lines of a node's label: its head, its words (wrapped), its rule or origin, its
/// confidence. Shared by the Graphviz and SVG drawings.
struct Label {
    kind: &'static str,
    head: String,
    words: Vec<String>,
    detail: Vec<String>,
    confidence: Option<String>,
}

/// Characters per wrapped label line.
const LINE_CHARS: usize = 33;

fn label(tree: &ProofTree, node: &ProofNode) -> Label {
    let words = tree.node_text(node);
    match node {
        ProofNode::Conclusion(c) => Label {
            kind: "conclusion",
            head: format!("{} · {}", c.step_tag, c.id),
            words: wrap(&words, LINE_CHARS),
            detail: wrap(&format!("by {} ({})", c.rule_tag, c.rule), LINE_CHARS),
            confidence: Some(format!("confidence {}", conf(c.confidence))),
        },
        ProofNode::Evidence(e) => Label {
            kind: match resolver_verdict(e) {
                Some(false) => "evidence unverified",
                _ => "evidence",
            },
            head: format!("{} · {}", e.hedge_tag, e.id),
            words: wrap(&words, LINE_CHARS),
            detail: wrap_parts(&where_parts(e), LINE_CHARS),
            confidence: Some(format!("confidence {}", conf(e.confidence))),
        },
        ProofNode::Absence(a) => Label {
            kind: "absence",
            head: format!("no record · {}", a.id),
            words: wrap(&no_record(&words), LINE_CHARS),
            detail: vec!["checked absent (a negated premise)".to_string()],
            confidence: None,
        },
    }
}

impl Label {
    fn lines(&self) -> Vec<&str> {
        let mut out = vec![self.head.as_str()];
        out.extend(self.words.iter().map(String::as_str));
        out.extend(self.detail.iter().map(String::as_str));
        out.extend(self.confidence.as_deref());
        out
    }
}

/// Lines of comma-separated parts, a part broken only when it is longer than a line.
fn wrap_parts(parts: &[String], max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for (k, part) in parts.iter().enumerate() {
        let last = k + 1 == parts.len();
        let piece = if last {
            part.clone()
        } else {
            format!("{part},")
        };
        let used = line.chars().count();
        let len = piece.chars().count();
        if used > 0 && used + 1 + len <= max {
            line.push(' ');
            line.push_str(&piece);
            continue;
        }
        if used > 0 {
            lines.push(std::mem::take(&mut line));
        }
        if len <= max {
            line = piece;
        } else {
            let mut wrapped = wrap(&piece, max);
            line = wrapped.pop().unwrap_or_default();
            lines.extend(wrapped);
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Break text into lines of at most `max` characters at spaces; a longer word is cut.
fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let used = line.chars().count();
            let room = if used == 0 {
                max
            } else {
                max.saturating_sub(used + 1)
            };
            if word.len() <= room {
                if used > 0 {
                    line.push(' ');
                }
                line.extend(word.iter());
                break;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            // A word longer than a line: cut it.
            let rest = word.split_off(max.max(1));
            line.extend(word.iter());
            lines.push(std::mem::take(&mut line));
            word = rest;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Graphviz source for one tree: conclusions as boxes, evidence as notes (red when a
/// resolver could not verify it), absences dashed and said as "no record that …",
/// edges from each conclusion to its premises.
pub fn dot(tree: &ProofTree) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", dot_escape(&tree.proof_id));
    out.push_str(DOT_DEFAULTS);
    let _ = writeln!(
        out,
        "  label=\"{}\";\n  labelloc=t;",
        dot_escape(&dot_title(tree))
    );
    dot_body(&mut out, tree, "", "  ");
    out.push_str("}\n");
    out
}

/// Graphviz source for several trees: one graph, one cluster per proof (node ids
/// prefixed `p<k>_`). One tree renders as [`dot`].
pub fn dot_all(trees: &[ProofTree]) -> String {
    if let [one] = trees {
        return dot(one);
    }
    let mut out = String::from("digraph \"proofs\" {\n");
    out.push_str(DOT_DEFAULTS);
    let _ = writeln!(out, "  label=\"{} proofs\";\n  labelloc=t;", trees.len());
    for (k, tree) in trees.iter().enumerate() {
        let _ = writeln!(out, "  subgraph \"cluster_{}\" {{", k + 1);
        let _ = writeln!(
            out,
            "    label=\"{}\";\n    style=rounded;\n    color=\"#999999\";",
            dot_escape(&dot_title(tree))
        );
        dot_body(&mut out, tree, &format!("p{}_", k + 1), "    ");
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}

const DOT_DEFAULTS: &str =
    "  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n";

fn dot_title(tree: &ProofTree) -> String {
    let goal = crate::value::fact_text(&tree.goal.predicate, &tree.goal.args);
    let status = if tree.is_proved() {
        "proved"
    } else {
        "unproved"
    };
    format!(
        "{}: {goal} ({status}, confidence {})",
        tree.proof_id,
        conf(tree.confidence)
    )
}

fn dot_body(out: &mut String, tree: &ProofTree, prefix: &str, indent: &str) {
    for node in &tree.nodes {
        let l = label(tree, node);
        let attrs = match node {
            ProofNode::Conclusion(_) => "style=filled, fillcolor=\"#dbe9f6\"",
            ProofNode::Evidence(_) if l.kind == "evidence" => {
                "shape=note, style=filled, fillcolor=\"#e3f3e0\""
            }
            ProofNode::Evidence(_) => "shape=note, style=filled, fillcolor=\"#fbe3e3\", color=red",
            ProofNode::Absence(_) => "style=dashed, fontcolor=\"#555555\"",
        };
        let _ = writeln!(
            out,
            "{indent}\"{prefix}{}\" [label=\"{}\", {attrs}];",
            dot_escape(node.id()),
            dot_escape(&l.lines().join("\n"))
        );
    }
    for e in &tree.edges {
        let _ = writeln!(
            out,
            "{indent}\"{prefix}{}\" -> \"{prefix}{}\";",
            dot_escape(&e.from),
            dot_escape(&e.to)
        );
    }
}

/// Escape text for HTML element content and attribute values (control and invisible
/// characters other than line breaks and tabs become visible `\u{…}` escapes).
pub(crate) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            c if (c.is_control() && !matches!(c, '\n' | '\t')) || is_invisible(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Layer of each node: the longest path from the root, so every edge points down.
fn layers(tree: &ProofTree) -> Vec<usize> {
    let index = index_of(tree);
    let n = tree.nodes.len();
    let mut indegree = vec![0usize; n];
    for e in &tree.edges {
        if let Some(&t) = index.get(e.to.as_str()) {
            indegree[t] += 1;
        }
    }
    let mut layer = vec![0usize; n];
    let mut ready: Vec<usize> = (0..n).rev().filter(|&i| indegree[i] == 0).collect();
    while let Some(i) = ready.pop() {
        for p in tree.nodes[i].premises() {
            if let Some(&c) = index.get(p.as_str()) {
                layer[c] = layer[c].max(layer[i] + 1);
                indegree[c] -= 1;
                if indegree[c] == 0 {
                    ready.push(c);
                }
            }
        }
    }
    layer
}

/// Box width, and the space a label line takes.
const BOX_W: f64 = 236.0;
const LINE_H: f64 = 15.0;
const PAD: f64 = 9.0;
/// Space between neighbours in a layer, and between layers.
const GAP: f64 = 22.0;
const LAYER_GAP: f64 = 64.0;
/// The width an edge passing through a layer reserves there.
const LANE: f64 = 14.0;
const MARGIN: f64 = 16.0;

/// A drawn item of a layer: a node box, or a lane an edge passes through.
#[derive(Clone, Copy, PartialEq)]
enum Item {
    Node(usize),
    /// Edge `e` crossing this layer.
    Lane(usize),
}

/// The laid-out drawing: for each item its centre along the layer (`across`), each
/// layer's position and thickness (`along`).
struct Layout {
    /// Layers top to bottom (or left to right), items in order.
    layers: Vec<Vec<Item>>,
    /// Per item: centre across the layer, keyed by (layer, slot).
    across: Vec<Vec<f64>>,
    /// Per layer: start and thickness along the flow.
    band: Vec<(f64, f64)>,
    /// Flow direction: top to bottom, or left to right.
    left_to_right: bool,
    /// Total extent (width, height).
    size: (f64, f64),
}

fn box_height(lines: usize) -> f64 {
    2.0 * PAD + lines as f64 * LINE_H
}

/// Lay out a proof DAG in layers (a simple Sugiyama layout): nodes by longest path
/// from the root, an edge that skips layers gets a lane in each layer it crosses (so
/// it runs between boxes, never behind one), order by barycentres, positions pulled
/// towards neighbours. The flow runs top to bottom, or left to right when that makes
/// the drawing narrower (a proof wider than deep).
fn layout(tree: &ProofTree, heights: &[f64]) -> Layout {
    let layer = layers(tree);
    let index = index_of(tree);
    let depth = layer.iter().max().map_or(0, |m| m + 1);
    let mut rows: Vec<Vec<Item>> = vec![Vec::new(); depth];
    for (i, &l) in layer.iter().enumerate() {
        rows[l].push(Item::Node(i));
    }
    // Edges as chains of items, one per layer from the conclusion to the premise.
    let mut chains: Vec<Vec<(usize, Item)>> = Vec::new();
    for (e, edge) in tree.edges.iter().enumerate() {
        let (Some(&f), Some(&t)) = (index.get(edge.from.as_str()), index.get(edge.to.as_str()))
        else {
            continue;
        };
        let mut chain = vec![(layer[f], Item::Node(f))];
        for (l, row) in rows
            .iter_mut()
            .enumerate()
            .take(layer[t])
            .skip(layer[f] + 1)
        {
            row.push(Item::Lane(e));
            chain.push((l, Item::Lane(e)));
        }
        chain.push((layer[t], Item::Node(t)));
        chains.push(chain);
    }
    // Neighbours of each item in the layer above and below.
    let key = |it: Item| match it {
        Item::Node(i) => i,
        Item::Lane(e) => tree.nodes.len() + e,
    };
    let count = tree.nodes.len() + tree.edges.len();
    let mut up: Vec<Vec<Item>> = vec![Vec::new(); count];
    let mut down: Vec<Vec<Item>> = vec![Vec::new(); count];
    for chain in &chains {
        for w in chain.windows(2) {
            down[key(w[0].1)].push(w[1].1);
            up[key(w[1].1)].push(w[0].1);
        }
    }
    let extent = |it: Item, ltr: bool| match it {
        Item::Node(i) => {
            if ltr {
                heights[i]
            } else {
                BOX_W
            }
        }
        Item::Lane(_) => LANE,
    };
    // How strongly an item holds its place: conclusions carry the proof's spine.
    let weight = |it: Item| match it {
        Item::Node(i) if matches!(tree.nodes[i], ProofNode::Conclusion(_)) => 16.0,
        Item::Node(_) => 1.0,
        Item::Lane(_) => 2.0,
    };
    // Order: barycentre sweeps, down then up, a few times.
    let mut slot = vec![0.0f64; count];
    for row in &rows {
        for (k, &it) in row.iter().enumerate() {
            slot[key(it)] = k as f64;
        }
    }
    for sweep in 0..4 {
        let downwards = sweep % 2 == 0;
        let order: Vec<usize> = if downwards {
            (1..depth).collect()
        } else {
            (0..depth.saturating_sub(1)).rev().collect()
        };
        for l in order {
            let row = &mut rows[l];
            let bary = |it: Item| -> f64 {
                let ns = if downwards {
                    &up[key(it)]
                } else {
                    &down[key(it)]
                };
                if ns.is_empty() {
                    slot[key(it)]
                } else {
                    ns.iter().map(|&n| slot[key(n)]).sum::<f64>() / ns.len() as f64
                }
            };
            let mut keyed: Vec<(f64, usize, Item)> = row
                .iter()
                .enumerate()
                .map(|(k, &it)| (bary(it), k, it))
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            *row = keyed.into_iter().map(|(_, _, it)| it).collect();
            for (k, &it) in row.iter().enumerate() {
                slot[key(it)] = k as f64;
            }
        }
    }
    let place = |ltr: bool| -> (Vec<Vec<f64>>, f64) {
        // Pack each layer, then pull items towards their neighbours' centres.
        let mut across: Vec<Vec<f64>> = rows
            .iter()
            .map(|row| {
                let mut x = 0.0;
                row.iter()
                    .map(|&it| {
                        let w = extent(it, ltr);
                        let c = x + w / 2.0;
                        x += w + GAP;
                        c
                    })
                    .collect()
            })
            .collect();
        let mut centre = vec![0.0f64; count];
        for (l, row) in rows.iter().enumerate() {
            for (k, &it) in row.iter().enumerate() {
                centre[key(it)] = across[l][k];
            }
        }
        for sweep in 0..6 {
            let downwards = sweep % 2 == 0;
            let order: Vec<usize> = if downwards {
                (1..depth).collect()
            } else {
                (0..depth.saturating_sub(1)).rev().collect()
            };
            for l in order {
                let row = &rows[l];
                let want: Vec<f64> = row
                    .iter()
                    .map(|&it| {
                        let ns = if downwards {
                            &up[key(it)]
                        } else {
                            &down[key(it)]
                        };
                        let total: f64 = ns.iter().map(|&n| weight(n)).sum();
                        if ns.is_empty() {
                            centre[key(it)]
                        } else {
                            ns.iter().map(|&n| weight(n) * centre[key(n)]).sum::<f64>() / total
                        }
                    })
                    .collect();
                let got = spread(row, &want, |it| extent(it, ltr), weight);
                for (k, &it) in row.iter().enumerate() {
                    centre[key(it)] = got[k];
                }
                across[l] = got;
            }
        }
        // Shift everything right of the margin.
        let min = rows
            .iter()
            .enumerate()
            .flat_map(|(l, row)| {
                let across = &across;
                row.iter()
                    .enumerate()
                    .map(move |(k, &it)| across[l][k] - extent(it, ltr) / 2.0)
            })
            .fold(f64::INFINITY, f64::min);
        let shift = MARGIN - if min.is_finite() { min } else { 0.0 };
        let mut max = 0.0f64;
        for (l, row) in rows.iter().enumerate() {
            for (k, &it) in row.iter().enumerate() {
                across[l][k] += shift;
                max = max.max(across[l][k] + extent(it, ltr) / 2.0);
            }
        }
        (across, max + MARGIN)
    };
    // Thickness of each layer along the flow.
    let thickness = |ltr: bool| -> Vec<f64> {
        rows.iter()
            .map(|row| {
                row.iter()
                    .map(|&it| match it {
                        Item::Node(i) => {
                            if ltr {
                                BOX_W
                            } else {
                                heights[i]
                            }
                        }
                        Item::Lane(_) => 0.0,
                    })
                    .fold(0.0, f64::max)
            })
            .collect()
    };
    let bands = |th: &[f64]| -> (Vec<(f64, f64)>, f64) {
        let mut at = MARGIN;
        let mut out = Vec::with_capacity(th.len());
        for &t in th {
            out.push((at, t));
            at += t + LAYER_GAP;
        }
        (out, at - LAYER_GAP + MARGIN)
    };
    let (tb_across, tb_width) = place(false);
    let (tb_band, tb_height) = bands(&thickness(false));
    let (lr_across, lr_height) = place(true);
    let (lr_band, lr_width) = bands(&thickness(true));
    if lr_width + 1.0 < tb_width {
        Layout {
            layers: rows,
            across: lr_across,
            band: lr_band,
            left_to_right: true,
            size: (lr_width, lr_height),
        }
    } else {
        Layout {
            layers: rows,
            across: tb_across,
            band: tb_band,
            left_to_right: false,
            size: (tb_width, tb_height),
        }
    }
}

/// Positions for the items of one layer, in order, as close to `want` as their
/// extents and the gap allow: the least weighted squared displacement, by pooling
/// adjacent violators. Heavy items (conclusions) move least, so a chain of steps
/// stays in a line and its evidence gathers beside it.
fn spread(
    row: &[Item],
    want: &[f64],
    extent: impl Fn(Item) -> f64,
    weight: impl Fn(Item) -> f64,
) -> Vec<f64> {
    let n = row.len();
    // Offsets that make the spacing constraints plain order constraints.
    let mut offset = vec![0.0f64; n];
    for k in 1..n {
        offset[k] = offset[k - 1] + (extent(row[k - 1]) + extent(row[k])) / 2.0 + GAP;
    }
    // Blocks of pooled items: (weighted sum, weight, count).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::with_capacity(n);
    for k in 0..n {
        let w = weight(row[k]);
        blocks.push((w * (want[k] - offset[k]), w, 1));
        while blocks.len() > 1 {
            let (s1, w1, c1) = blocks[blocks.len() - 1];
            let (s0, w0, c0) = blocks[blocks.len() - 2];
            if s0 / w0 <= s1 / w1 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (s0 + s1, w0 + w1, c0 + c1);
        }
    }
    let mut x = Vec::with_capacity(n);
    for (s, w, c) in blocks {
        for _ in 0..c {
            let k = x.len();
            x.push(s / w + offset[k]);
        }
    }
    x
}

/// The SVG drawing of one tree. It scales to its container (`viewBox`, width 100%, never
/// wider than its natural size).
fn svg(tree: &ProofTree, ids: &str) -> String {
    let labels: Vec<Label> = tree.nodes.iter().map(|n| label(tree, n)).collect();
    let heights: Vec<f64> = labels.iter().map(|l| box_height(l.lines().len())).collect();
    let lay = layout(tree, &heights);
    let ltr = lay.left_to_right;
    // Box of each node: (x, y, w, h); the point of each lane item.
    let mut boxes = vec![(0.0, 0.0, BOX_W, 0.0); tree.nodes.len()];
    let mut lanes: HashMap<(usize, usize), (f64, f64, f64)> = HashMap::new();
    for (l, row) in lay.layers.iter().enumerate() {
        let (start, thick) = lay.band[l];
        for (k, &it) in row.iter().enumerate() {
            let c = lay.across[l][k];
            match it {
                Item::Node(i) => {
                    let h = heights[i];
                    boxes[i] = if ltr {
                        (start, c - h / 2.0, BOX_W, h)
                    } else {
                        (c - BOX_W / 2.0, start, BOX_W, h)
                    };
                }
                // A lane runs the whole layer: (across, from, to) along the flow.
                Item::Lane(e) => {
                    lanes.insert((e, l), (c, start, start + thick));
                }
            }
        }
    }
    let index = index_of(tree);
    let layer = layers(tree);
    let (width, height) = (lay.size.0.ceil(), lay.size.1.ceil());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"100%\" style=\"max-width:{width}px\" role=\"img\" aria-label=\"proof {}\">",
        html_escape(&tree.proof_id)
    );
    let _ = writeln!(
        out,
        "<defs><marker id=\"{ids}arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555\"/></marker></defs>"
    );
    // Flow coordinates: (across, along) to (x, y).
    let pt = |across: f64, along: f64| -> (f64, f64) {
        if ltr {
            (along, across)
        } else {
            (across, along)
        }
    };
    for (e, edge) in tree.edges.iter().enumerate() {
        let (Some(&f), Some(&t)) = (index.get(edge.from.as_str()), index.get(edge.to.as_str()))
        else {
            continue;
        };
        // Points along the flow: leave the conclusion's far side, pass each lane,
        // enter the premise's near side.
        let (fx, fy, fw, fh) = boxes[f];
        let (tx, ty, tw, th) = boxes[t];
        let mut pts: Vec<(f64, f64)> = Vec::new();
        if ltr {
            pts.push((fy + fh / 2.0, fx + fw));
        } else {
            pts.push((fx + fw / 2.0, fy + fh));
        }
        let mut through = Vec::new();
        for l in layer[f] + 1..layer[t] {
            if let Some(&(c, a, b)) = lanes.get(&(e, l)) {
                through.push((c, a, b));
            }
        }
        let mut d = String::new();
        let (a0, b0) = pts[0];
        let (x0, y0) = pt(a0, b0);
        let _ = write!(d, "M {x0:.1} {y0:.1}");
        let mut cur = (a0, b0);
        let curve_to = |d: &mut String, cur: &mut (f64, f64), next: (f64, f64)| {
            let mid = (cur.1 + next.1) / 2.0;
            let (c1x, c1y) = pt(cur.0, mid);
            let (c2x, c2y) = pt(next.0, mid);
            let (nx, ny) = pt(next.0, next.1);
            let _ = write!(
                d,
                " C {c1x:.1} {c1y:.1}, {c2x:.1} {c2y:.1}, {nx:.1} {ny:.1}"
            );
            *cur = next;
        };
        for (c, a, b) in through {
            curve_to(&mut d, &mut cur, (c, a));
            let (lx, ly) = pt(c, b);
            let _ = write!(d, " L {lx:.1} {ly:.1}");
            cur = (c, b);
        }
        let end = if ltr {
            (ty + th / 2.0, tx)
        } else {
            (tx + tw / 2.0, ty)
        };
        curve_to(&mut d, &mut cur, end);
        let dashed = if matches!(tree.nodes[t], ProofNode::Absence(_)) {
            " stroke-dasharray=\"4 3\""
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "<path class=\"edge\" d=\"{d}\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.2\"{dashed} marker-end=\"url(#{ids}arrow)\"/>"
        );
    }
    for (i, node) in tree.nodes.iter().enumerate() {
        let (x, y, w, h) = boxes[i];
        let l = &labels[i];
        let _ = writeln!(
            out,
            "<g class=\"node {}\" id=\"{ids}node-{}\"><title>{}</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"6\"/>",
            l.kind,
            html_escape(node.id()),
            html_escape(&format!("{}: {}", node.fact(), tree.node_text(node)))
        );
        let mut line_y = y + PAD + 11.0;
        let mut emit = |cls: &str, text: &str| {
            let _ = writeln!(
                out,
                "<text class=\"{cls}\" x=\"{:.1}\" y=\"{line_y:.1}\">{}</text>",
                x + 10.0,
                html_escape(text)
            );
            line_y += LINE_H;
        };
        emit("head", &l.head);
        for line in &l.words {
            emit("fact", line);
        }
        for line in &l.detail {
            emit("detail", line);
        }
        if let Some(c) = &l.confidence {
            emit("conf", c);
        }
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    out
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:24px;color:#222;background:#fafafa;max-width:1400px}
h1{font-size:20px;margin:0 0 4px}
h2{font-size:17px;margin:0 0 4px}
section.proof{margin:0 0 36px}
.summary{color:#444;margin:0 0 12px}
nav{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 14px;margin:0 0 20px}
nav ol{margin:4px 0;padding-left:22px}
nav a{color:#1a4f8b}
.drawing{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px}
.drawing svg{display:block;height:auto;margin:0 auto}
svg text{font-size:12px;fill:#222}
svg text.head{font-weight:600}
svg text.detail,svg text.conf{fill:#555;font-size:11px}
.node rect,.swatch.conclusion{stroke:#5b7ea4;stroke-width:1.2;fill:#dbe9f6;background:#dbe9f6;border:1.2px solid #5b7ea4}
.node.evidence rect,.swatch.evidence{stroke:#5a9a52;fill:#e3f3e0;background:#e3f3e0;border-color:#5a9a52}
.node.unverified rect,.swatch.unverified{stroke:#c0392b;fill:#fbe3e3;stroke-width:2;background:#fbe3e3;border:2px solid #c0392b}
.node.absence rect,.swatch.absence{stroke:#888;fill:#f4f4f4;stroke-dasharray:5 3;background:#f4f4f4;border:1.2px dashed #888}
.node.absence text.fact{font-style:italic}
.legend{display:flex;flex-wrap:wrap;gap:6px 18px;font-size:13px;color:#333;margin:0 0 10px}
.legend span{display:inline-flex;align-items:center;gap:6px}
.swatch{display:inline-block;width:22px;height:14px;border-radius:3px;box-sizing:border-box}
.arrow{font-size:15px;color:#555}
table{border-collapse:collapse;margin-top:14px;font-size:13px;background:#fff;width:100%}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f0f0}
code{font-size:12px;overflow-wrap:anywhere}
table.kv{margin:0;width:auto;font-size:12px}
table.kv th,table.kv td{border:none;padding:0 10px 0 0;background:none;font-weight:normal}
table.kv th{color:#666}
";

const LEGEND: &str = "<div class=\"legend\" aria-label=\"legend\"><span><i class=\"swatch conclusion\"></i>conclusion (STEP-n): derived by a rule (RULE-n)</span><span><i class=\"swatch evidence\"></i>evidence (HEDGE-n): an input fact</span><span><i class=\"swatch unverified\"></i>evidence a resolver could not verify</span><span><i class=\"swatch absence\"></i>no record that …: a fact the rule needed to be absent</span><span><i class=\"arrow\">→</i>points from a conclusion to what it rests on</span></div>\n";

/// A provenance record as a key/value table.
fn provenance_table(e: &EvidenceNode) -> String {
    let p = &e.provenance;
    let mut rows: Vec<(String, String)> = where_recorded(e);
    rows.push(("edge_idx".to_string(), p.edge_idx.to_string()));
    if let Some(ts) = p.event_ts.as_ref().and_then(field_text) {
        rows.push(("event_ts".to_string(), ts));
    }
    if !p.member_ids.is_empty() {
        let ids: Vec<String> = p.member_ids.iter().filter_map(field_text).collect();
        rows.push(("member_ids".to_string(), ids.join(", ")));
    }
    for (k, v) in &p.extra {
        let shown = rows.iter().any(|(key, _)| key == k);
        if shown {
            continue;
        }
        let text = match v {
            serde_json::Value::Object(_) => Some(v.to_string()),
            other => field_text(other),
        };
        if let Some(text) = text {
            rows.push((k.clone(), text));
        }
    }
    let verdict = match resolver_verdict(e) {
        Some(true) => "verified by the resolver",
        Some(false) => "UNVERIFIED",
        None => "bound to a loaded record (no resolver ran)",
    };
    rows.push(("verified".to_string(), verdict.to_string()));
    let mut out = String::from("<table class=\"kv\">");
    for (k, v) in rows {
        let _ = write!(
            out,
            "<tr><th>{}</th><td>{}</td></tr>",
            html_escape(&k),
            html_escape(&v)
        );
    }
    out.push_str("</table>");
    out
}

/// A self-contained HTML page (inline SVG and CSS; no scripts, no network, no links
/// but to its own sections) showing each tree as a layered drawing with a legend, and
/// a table of its nodes with their provenance; several trees get a list of contents.
/// All text is escaped.
pub fn html(trees: &[ProofTree]) -> String {
    let mut out = String::new();
    let title = match trees {
        [one] => format!("Proof {}", one.proof_id),
        _ => format!("{} proofs", trees.len()),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n",
        html_escape(&title)
    );
    if trees.is_empty() {
        out.push_str("<p>No proofs: the pattern matched no fact.</p>\n");
    }
    let goal_of = |tree: &ProofTree| crate::value::fact_text(&tree.goal.predicate, &tree.goal.args);
    if trees.len() > 1 {
        let _ = writeln!(
            out,
            "<h1>{} proofs</h1>\n<nav aria-label=\"proofs\"><ol>",
            trees.len()
        );
        for (k, tree) in trees.iter().enumerate() {
            let status = if tree.is_proved() {
                format!("proved, confidence {}", conf(tree.confidence))
            } else {
                "unproved".to_string()
            };
            let _ = writeln!(
                out,
                "<li><a href=\"#proof-{}\">{}: {}</a> ({status})</li>",
                k + 1,
                html_escape(&tree.proof_id),
                html_escape(&goal_of(tree))
            );
        }
        out.push_str("</ol></nav>\n");
    }
    for (k, tree) in trees.iter().enumerate() {
        let status = if tree.is_proved() {
            "proved"
        } else {
            "unproved"
        };
        let heading = if trees.len() == 1 { "h1" } else { "h2" };
        let _ = writeln!(
            out,
            "<section class=\"proof\" id=\"proof-{}\">\n<{heading}>{}: {}</{heading}>\n<p class=\"summary\">{status} · confidence {} · depth {} · rules {}</p>",
            k + 1,
            html_escape(&tree.proof_id),
            html_escape(&goal_of(tree)),
            conf(tree.confidence),
            tree.depth,
            html_escape(&tree.rules_fired.join(", "))
        );
        if tree.nodes.is_empty() {
            out.push_str(
                "<p>The goal is not in the fact base; there is nothing to cite.</p>\n</section>\n",
            );
            continue;
        }
        out.push_str(LEGEND);
        out.push_str("<div class=\"drawing\">\n");
        out.push_str(&svg(tree, &format!("p{}-", k + 1)));
        out.push_str("</div>\n<table>\n<tr><th>id</th><th>tag</th><th>fact</th><th>by</th><th>confidence</th><th>premises / provenance</th></tr>\n");
        for node in &tree.nodes {
            let (words, by, more) = match node {
                ProofNode::Conclusion(c) => (
                    html_escape(&tree.node_text(node)),
                    html_escape(&format!("{} {}", c.rule_tag, c.rule)),
                    html_escape(&c.premises.join(", ")),
                ),
                ProofNode::Evidence(e) => (
                    html_escape(&tree.node_text(node)),
                    html_escape(&e.evidence_type),
                    provenance_table(e),
                ),
                ProofNode::Absence(_) => (
                    html_escape(&no_record(&tree.node_text(node))),
                    "checked absent".to_string(),
                    String::new(),
                ),
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{words}<br><code>{}</code></td><td>{by}</td><td>{}</td><td>{more}</td></tr>",
                html_escape(node.id()),
                html_escape(node.tag().unwrap_or("")),
                html_escape(node.fact()),
                node.confidence().map(conf).unwrap_or_default(),
            );
        }
        out.push_str("</table>\n</section>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::super::mock::{MockBase, n, sym};
    use super::super::{Fact, ProofOptions, build_proof};
    use super::*;

    fn hostile() -> ProofTree {
        let mut m = MockBase::new();
        let bad = "<script>alert(\"x\")</script> & '\\";
        let e = m.input("tag", vec![sym(bad)], 1.0, 7);
        let rel = m.relation("shown", &[sym("")]);
        m.set_text(rel, "page {0} is shown");
        let r = m.rule("show<b>", 0.5, rel);
        let cleared = m.relation("hidden", &[sym("")]);
        m.derive(
            "shown",
            vec![sym(bad)],
            r,
            vec![e],
            vec![(cleared, vec![sym(bad)])],
        );
        build_proof(
            &Fact::new("shown", vec![sym(bad)]),
            &m,
            &ProofOptions::new("id\"<x>"),
        )
        .unwrap()
    }

    #[test]
    fn html_escapes_every_text_and_is_self_contained() {
        let page = html(&[hostile()]);
        assert!(!page.contains("<script"), "{page}");
        assert!(!page.contains("<b>"));
        assert!(page.contains("&lt;script&gt;"));
        assert!(!page.contains("src="));
        assert!(
            page.match_indices("href=")
                .all(|(i, _)| page[i..].starts_with("href=\"#")),
            "links only to its own sections"
        );
        assert!(!page.contains("<link") && !page.contains("@import"));
        assert!(page.contains("<svg") && page.contains("node-S1") && page.contains("node-A1"));
    }

    #[test]
    fn dot_escapes_quotes_and_backslashes() {
        let g = dot(&hostile());
        assert!(g.starts_with("digraph \"id\\\"<x>\" {"), "{g}");
        assert!(g.contains("\"S1\" -> \"L1\";"));
        assert!(g.contains("\"S1\" -> \"A1\";"));
        // Every label's quotes are escaped: the line has an even number of bare quotes.
        for line in g.lines() {
            let bare = line.replace("\\\\", "").replace("\\\"", "");
            assert_eq!(bare.matches('"').count() % 2, 0, "{line}");
        }
    }

    #[test]
    fn unproved_trees_render_without_nodes() {
        let m = MockBase::new();
        let mut m = m;
        m.relation("p", &[n(0)]);
        let t = build_proof(&Fact::new("p", vec![n(1)]), &m, &ProofOptions::default()).unwrap();
        assert_eq!(
            context(&t),
            "proof-1: p(1) is unproved; there is no evidence to cite for it.\n"
        );
        assert_eq!(
            text(&t),
            "proof-1: p(1) unproved, confidence 0.00, depth 0\n"
        );
        assert!(html(std::slice::from_ref(&t)).contains("not in the fact base"));
        assert!(!dot(&t).contains("->"));
    }

    #[test]
    fn layers_put_every_premise_below_its_conclusion() {
        let t = hostile();
        let l = layers(&t);
        let idx = index_of(&t);
        for e in &t.edges {
            assert!(l[idx[e.from.as_str()]] < l[idx[e.to.as_str()]]);
        }
    }

    /// A proof where the root rests on a leaf two layers down (an edge that skips a
    /// layer), on a step, and on `width` facts of one aggregate-like step.
    fn skipping(width: i64) -> ProofTree {
        let mut m = MockBase::new();
        let leaf = m.input("seen", vec![n(0)], 0.9, 1);
        let many: Vec<_> = (0..width)
            .map(|i| m.input("seen", vec![n(i + 1)], 1.0, 10 + i as u64))
            .collect();
        let mid_rel = m.relation("mid", &[n(0)]);
        m.set_text(
            mid_rel,
            "a step that rests on many facts, said in rather more words than fit",
        );
        let r1 = m.rule("mid", 1.0, mid_rel);
        let mut premises = vec![leaf];
        premises.extend(many);
        let mid = m.derive("mid", vec![n(0)], r1, premises, vec![]);
        let top_rel = m.relation("top", &[n(0)]);
        let r2 = m.rule("top", 0.5, top_rel);
        m.derive("top", vec![n(0)], r2, vec![mid, leaf], vec![]);
        build_proof(&Fact::new("top", vec![n(0)]), &m, &ProofOptions::default()).unwrap()
    }

    #[test]
    fn an_edge_that_skips_a_layer_runs_through_a_lane_between_boxes() {
        for width in [1, 3, 8] {
            let t = skipping(width);
            let labels: Vec<Label> = t.nodes.iter().map(|node| label(&t, node)).collect();
            let heights: Vec<f64> = labels.iter().map(|l| box_height(l.lines().len())).collect();
            let lay = layout(&t, &heights);
            let lanes = lay
                .layers
                .iter()
                .flatten()
                .filter(|it| matches!(it, Item::Lane(_)))
                .count();
            assert_eq!(lanes, 1, "S1 -> L1 skips the layer of S2");
            // In every layer, boxes and lanes never overlap: each keeps its extent apart
            // from its neighbours' by the gap.
            for (l, row) in lay.layers.iter().enumerate() {
                let extent = |it: Item| match it {
                    Item::Node(i) if lay.left_to_right => heights[i],
                    Item::Node(_) => BOX_W,
                    Item::Lane(_) => LANE,
                };
                for k in 1..row.len() {
                    let (a, b) = (row[k - 1], row[k]);
                    let room = lay.across[l][k] - lay.across[l][k - 1];
                    assert!(
                        room + 1e-9 >= (extent(a) + extent(b)) / 2.0 + GAP,
                        "width {width}, layer {l}: items {} and {k} overlap",
                        k - 1
                    );
                }
            }
            let drawing = svg(&t, "p1-");
            assert!(drawing.contains("width=\"100%\"") && drawing.contains("viewBox="));
            // A wide proof flows left to right, so it is narrower than deep.
            if width == 8 {
                assert!(
                    lay.left_to_right && lay.size.0 < lay.size.1,
                    "{:?}",
                    lay.size
                );
            }
        }
    }

    #[test]
    fn labels_wrap_at_spaces_and_cut_long_words() {
        assert_eq!(
            wrap("drone 7 is a member of group 42", 12),
            ["drone 7 is a", "member of", "group 42"]
        );
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 4), [""]);
        let parts = [
            "table DRONES".to_string(),
            "doc_id radar-log.pdf".to_string(),
            "page 3".to_string(),
        ];
        assert_eq!(
            wrap_parts(&parts, 24),
            ["table DRONES,", "doc_id radar-log.pdf,", "page 3"]
        );
    }

    #[test]
    fn leaves_say_where_they_were_recorded_and_verified_only_after_a_resolver() {
        let mut m = MockBase::new();
        let rel = m.relation("seen", &[n(0)]);
        m.set_text(rel, "drone {0} was seen");
        let e = m.input("seen", vec![n(7)], 1.0, 3);
        let _ = e;
        let plain =
            build_proof(&Fact::new("seen", vec![n(7)]), &m, &ProofOptions::default()).unwrap();
        assert_eq!(
            context(&plain).lines().nth(1),
            Some("[HEDGE-3] drone 7 was seen (confidence 1.00; table T)")
        );
        let found = |_: &crate::proof::EdgeRef| -> Result<serde_json::Map<String, serde_json::Value>, String> {
            let mut f = serde_json::Map::new();
            f.insert("doc_id".into(), "log.pdf".into());
            f.insert("page".into(), 4.into());
            f.insert("checksum".into(), serde_json::json!({"sha": "x"}));
            Ok(f)
        };
        let opts = ProofOptions::default().with_resolver(&found);
        let resolved = build_proof(&Fact::new("seen", vec![n(7)]), &m, &opts).unwrap();
        assert_eq!(
            context(&resolved).lines().nth(1),
            Some(
                "[HEDGE-3] drone 7 was seen (confidence 1.00; table T, doc_id log.pdf, page 4, verified)"
            )
        );
        let failing = |_: &crate::proof::EdgeRef| -> Result<serde_json::Map<String, serde_json::Value>, String> {
            Err("no such edge".into())
        };
        let opts = ProofOptions::default().with_resolver(&failing);
        let refused = build_proof(&Fact::new("seen", vec![n(7)]), &m, &opts).unwrap();
        assert!(
            context(&refused).contains("table T, UNVERIFIED: no such edge)"),
            "{}",
            context(&refused)
        );
        let page = html(std::slice::from_ref(&resolved));
        assert!(page.contains("<th>doc_id</th><td>log.pdf</td>"), "{page}");
        assert!(page.contains("verified by the resolver"));
    }

    #[test]
    fn absences_read_as_missing_records() {
        let t = hostile();
        assert!(text(&t).contains("A1 no record that "), "{}", text(&t));
        assert!(dot(&t).contains("no record · A1"));
        assert!(html(std::slice::from_ref(&t)).contains("no record that "));
    }

    #[test]
    fn several_trees_are_one_graph_and_one_page() {
        let t = skipping(2);
        let mut u = t.clone();
        u.proof_id = "other".into();
        let g = dot_all(&[t.clone(), u.clone()]);
        assert_eq!(g.matches("digraph").count(), 1);
        assert!(g.contains("subgraph \"cluster_2\"") && g.contains("\"p2_S1\" -> \"p2_S2\";"));
        assert_eq!(dot_all(std::slice::from_ref(&t)), dot(&t));
        let page = html(&[t, u]);
        assert!(page.contains("<nav") && page.contains("href=\"#proof-2\""));
        // Each drawing has its own marker id, so the page has no duplicate ids.
        assert!(page.contains("id=\"p1-arrow\"") && page.contains("id=\"p2-arrow\""));
    }
}
