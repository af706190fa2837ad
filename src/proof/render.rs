//! Rendering a proof for a prompt, a terminal, Graphviz or a browser.
//!
//! Every renderer is a pure function of the tree: the same tree renders to the same
//! bytes. Facts are said in words with the predicates' `.text` verbalisations when the
//! tree carries them (see [`ProofTree::with_program`]).

use std::collections::HashMap;
use std::fmt::Write as _;

use super::{ProofNode, ProofTree};

/// Confidence as shown to people and prompts: two decimals.
fn conf(c: f64) -> String {
    format!("{c:.2}")
}

fn index_of(tree: &ProofTree) -> HashMap<&str, usize> {
    tree.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id(), i))
        .collect()
}

/// A compact tagged block for an LLM prompt: a header line, then one line per tagged
/// node (root first) with its tag, the fact in words, its confidence and the tags it
/// rests on. Absent facts a step relied on are named on that step's line; they carry no
/// tag of their own.
///
/// ```text
/// proof-1: coordinated_threat(42) is proved (confidence 0.90)
/// [STEP-1] group 42 is a coordinated threat (confidence 0.90; by RULE-0 from HEDGE-42, HEDGE-43)
/// [HEDGE-42] drone 7 is a member of group 42 (confidence 1.00; hyperedge DRONES #42, verified)
/// ```
pub fn context(tree: &ProofTree) -> String {
    let mut out = String::new();
    let goal = crate::value::fact_text(&tree.goal.predicate, &tree.goal.args);
    if !tree.is_proved() {
        let _ = writeln!(
            out,
            "{}: {goal} is unproved; there is no evidence to cite for it.",
            tree.proof_id
        );
        return out;
    }
    let _ = writeln!(
        out,
        "{}: {goal} is proved (confidence {})",
        tree.proof_id,
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
                if !absent.is_empty() {
                    let _ = write!(out, "; and not: {}", absent.join("; "));
                }
                out.push_str(")\n");
            }
            ProofNode::Evidence(e) => {
                let p = &e.provenance;
                let mut origin = p.source.clone();
                if let Some(t) = &p.table {
                    let _ = write!(origin, " {t}");
                }
                let _ = write!(origin, " #{}", p.edge_idx);
                let _ = writeln!(
                    out,
                    "[{}] {} (confidence {}; {origin}, {})",
                    e.hedge_tag,
                    tree.node_text(node),
                    conf(e.confidence),
                    if p.verified { "verified" } else { "unverified" }
                );
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
            c.id,
            c.step_tag,
            tree.node_text(node),
            conf(c.confidence),
            c.rule,
            c.rule_tag
        ),
        ProofNode::Evidence(e) => {
            let p = &e.provenance;
            format!(
                "{} [{}] {}  confidence {}  {}{} #{} {}",
                e.id,
                e.hedge_tag,
                tree.node_text(node),
                conf(e.confidence),
                p.source,
                p.table
                    .as_deref()
                    .map(|t| format!(" {t}"))
                    .unwrap_or_default(),
                p.edge_idx,
                if p.verified { "verified" } else { "UNVERIFIED" }
            )
        }
        ProofNode::Absence(a) => format!("{} absent: {}", a.id, tree.node_text(node)),
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
        "{}: {goal} {status}, confidence {}, depth {}",
        tree.proof_id,
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

/// Graphviz source: conclusions as boxes, evidence as notes (red when unverified),
/// absences dashed, edges from each conclusion to its premises.
pub fn dot(tree: &ProofTree) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", dot_escape(&tree.proof_id));
    out.push_str("  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n");
    let goal = crate::value::fact_text(&tree.goal.predicate, &tree.goal.args);
    let status = if tree.is_proved() {
        "proved"
    } else {
        "unproved"
    };
    let _ = writeln!(
        out,
        "  label=\"{}: {} ({status}, confidence {})\";\n  labelloc=t;",
        dot_escape(&tree.proof_id),
        dot_escape(&goal),
        conf(tree.confidence)
    );
    for node in &tree.nodes {
        let words = tree.node_text(node);
        let (label, attrs) = match node {
            ProofNode::Conclusion(c) => (
                format!(
                    "{} ({})\n{}\n{} {}\nconfidence {}",
                    c.step_tag,
                    c.id,
                    words,
                    c.rule_tag,
                    c.rule,
                    conf(c.confidence)
                ),
                "style=filled, fillcolor=\"#dbe9f6\"".to_string(),
            ),
            ProofNode::Evidence(e) => (
                format!(
                    "{} ({})\n{}\n{} {}\nconfidence {}",
                    e.hedge_tag,
                    e.id,
                    words,
                    e.evidence_type,
                    e.provenance.table.as_deref().unwrap_or(""),
                    conf(e.confidence)
                ),
                if e.provenance.verified {
                    "shape=note, style=filled, fillcolor=\"#e3f3e0\"".to_string()
                } else {
                    "shape=note, style=filled, fillcolor=\"#fbe3e3\", color=red".to_string()
                },
            ),
            ProofNode::Absence(a) => (
                format!("absent ({})\n{}", a.id, words),
                "style=dashed".to_string(),
            ),
        };
        let _ = writeln!(
            out,
            "  \"{}\" [label=\"{}\", {attrs}];",
            dot_escape(node.id()),
            dot_escape(&label)
        );
    }
    for e in &tree.edges {
        let _ = writeln!(
            out,
            "  \"{}\" -> \"{}\";",
            dot_escape(&e.from),
            dot_escape(&e.to)
        );
    }
    out.push_str("}\n");
    out
}

/// Escape text for HTML element content and attribute values.
pub(crate) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
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

/// Cut a line to fit a box, marking the cut.
fn fit(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

const BOX_W: usize = 260;
const BOX_H: usize = 78;
const GAP_X: usize = 24;
const GAP_Y: usize = 56;
const MARGIN: usize = 20;
const LINE_CHARS: usize = 40;

/// The SVG drawing of one tree, nodes laid out in depth layers.
fn svg(tree: &ProofTree) -> String {
    let layer = layers(tree);
    let rows = layer.iter().max().map_or(0, |m| m + 1);
    let mut per_row: Vec<Vec<usize>> = vec![Vec::new(); rows];
    for (i, &l) in layer.iter().enumerate() {
        per_row[l].push(i);
    }
    let widest = per_row.iter().map(Vec::len).max().unwrap_or(0);
    let width = (2 * MARGIN + widest * (BOX_W + GAP_X)).max(BOX_W + 2 * MARGIN);
    let height = 2 * MARGIN + rows * (BOX_H + GAP_Y);
    let index = index_of(tree);
    let mut parents: Vec<Vec<usize>> = vec![Vec::new(); tree.nodes.len()];
    for e in &tree.edges {
        if let (Some(&f), Some(&t)) = (index.get(e.from.as_str()), index.get(e.to.as_str())) {
            parents[t].push(f);
        }
    }
    // Order each row by the mean slot of its parents (fewer crossings), ties by node order.
    let mut slot = vec![0usize; tree.nodes.len()];
    for row in per_row.iter_mut() {
        let key = |i: usize| -> (u64, usize) {
            let ps = &parents[i];
            let mean = if ps.is_empty() {
                0
            } else {
                (ps.iter().map(|&p| slot[p] as u64).sum::<u64>() * 1000) / ps.len() as u64
            };
            (mean, i)
        };
        row.sort_by_key(|&i| key(i));
        for (k, &i) in row.iter().enumerate() {
            slot[i] = k;
        }
    }
    let mut pos = vec![(0usize, 0usize); tree.nodes.len()];
    for (r, row) in per_row.iter().enumerate() {
        let row_width = row.len() * (BOX_W + GAP_X) - GAP_X.min(row.len() * GAP_X);
        let left = (width - row_width) / 2;
        for (k, &i) in row.iter().enumerate() {
            pos[i] = (left + k * (BOX_W + GAP_X), MARGIN + r * (BOX_H + GAP_Y));
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"proof {}\">",
        html_escape(&tree.proof_id)
    );
    out.push_str("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555\"/></marker></defs>\n");
    for e in &tree.edges {
        let (Some(&f), Some(&t)) = (index.get(e.from.as_str()), index.get(e.to.as_str())) else {
            continue;
        };
        let (x1, y1) = (pos[f].0 + BOX_W / 2, pos[f].1 + BOX_H);
        let (x2, y2) = (pos[t].0 + BOX_W / 2, pos[t].1);
        let my = (y1 + y2) / 2;
        let _ = writeln!(
            out,
            "<path class=\"edge\" d=\"M {x1} {y1} C {x1} {my}, {x2} {my}, {x2} {y2}\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.2\" marker-end=\"url(#arrow)\"/>"
        );
    }
    for (i, node) in tree.nodes.iter().enumerate() {
        let (x, y) = pos[i];
        let words = tree.node_text(node);
        let (class, head, detail, confidence) = match node {
            ProofNode::Conclusion(c) => (
                "conclusion",
                format!("{} · {}", c.step_tag, c.id),
                format!("{} {}", c.rule_tag, c.rule),
                format!("confidence {}", conf(c.confidence)),
            ),
            ProofNode::Evidence(e) => (
                if e.provenance.verified {
                    "evidence"
                } else {
                    "evidence unverified"
                },
                format!("{} · {}", e.hedge_tag, e.id),
                format!(
                    "{} {}{}",
                    e.evidence_type,
                    e.provenance.table.as_deref().unwrap_or(""),
                    if e.provenance.verified {
                        ""
                    } else {
                        " · unverified"
                    }
                ),
                format!("confidence {}", conf(e.confidence)),
            ),
            ProofNode::Absence(a) => (
                "absence",
                format!("absent · {}", a.id),
                "checked absent".to_string(),
                String::new(),
            ),
        };
        let _ = writeln!(
            out,
            "<g class=\"node {class}\" id=\"node-{}\"><title>{}</title><rect x=\"{x}\" y=\"{y}\" width=\"{BOX_W}\" height=\"{BOX_H}\" rx=\"6\"/>",
            html_escape(node.id()),
            html_escape(&format!("{}: {}", node.fact(), words))
        );
        let lines = [
            ("head", head),
            ("fact", words),
            ("detail", detail),
            ("conf", confidence),
        ];
        for (k, (cls, line)) in lines.iter().enumerate() {
            if line.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "<text class=\"{cls}\" x=\"{}\" y=\"{}\">{}</text>",
                x + 10,
                y + 19 + k * 17,
                html_escape(&fit(line, LINE_CHARS))
            );
        }
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    out
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:24px;color:#222;background:#fafafa}
h1{font-size:20px;margin:0 0 4px}
h2{font-size:17px;margin:28px 0 4px}
.summary{color:#444;margin:0 0 12px}
.drawing{overflow-x:auto;background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px}
svg text{font-size:12px;fill:#222}
svg text.head{font-weight:600}
svg text.detail,svg text.conf{fill:#555;font-size:11px}
.node rect{stroke:#5b7ea4;stroke-width:1.2;fill:#dbe9f6}
.node.evidence rect{stroke:#5a9a52;fill:#e3f3e0}
.node.unverified rect{stroke:#c0392b;fill:#fbe3e3;stroke-width:2}
.node.absence rect{stroke:#888;fill:#f0f0f0;stroke-dasharray:5 3}
table{border-collapse:collapse;margin-top:14px;font-size:13px;background:#fff}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f0f0}
code{font-size:12px}
td code{word-break:break-all}
td:last-child{max-width:420px}
";

/// A self-contained HTML page (inline SVG and CSS; no scripts, no network) showing
/// each tree as a layered drawing and a table of its nodes. All text is escaped.
pub fn html(trees: &[ProofTree]) -> String {
    let mut out = String::new();
    let title = match trees {
        [one] => format!("Proof {}", one.proof_id),
        _ => format!("{} proofs", trees.len()),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n",
        html_escape(&title)
    );
    if trees.is_empty() {
        out.push_str("<p>No proofs: the pattern matched no fact.</p>\n");
    }
    for tree in trees {
        let goal = crate::value::fact_text(&tree.goal.predicate, &tree.goal.args);
        let status = if tree.is_proved() {
            "proved"
        } else {
            "unproved"
        };
        let heading = if trees.len() == 1 { "h1" } else { "h2" };
        let _ = writeln!(
            out,
            "<section class=\"proof\">\n<{heading}>{}: {}</{heading}>\n<p class=\"summary\">{status} · confidence {} · depth {} · rules {}</p>",
            html_escape(&tree.proof_id),
            html_escape(&goal),
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
        out.push_str("<div class=\"drawing\">\n");
        out.push_str(&svg(tree));
        out.push_str("</div>\n<table>\n<tr><th>id</th><th>tag</th><th>fact</th><th>by</th><th>confidence</th><th>premises / provenance</th></tr>\n");
        for node in &tree.nodes {
            let (by, more) = match node {
                ProofNode::Conclusion(c) => {
                    (format!("{} {}", c.rule_tag, c.rule), c.premises.join(", "))
                }
                ProofNode::Evidence(e) => (
                    e.evidence_type.clone(),
                    serde_json::to_string(&e.provenance).unwrap_or_default(),
                ),
                ProofNode::Absence(_) => ("checked absent".to_string(), String::new()),
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}<br><code>{}</code></td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                html_escape(node.id()),
                html_escape(node.tag().unwrap_or("")),
                html_escape(&tree.node_text(node)),
                html_escape(node.fact()),
                html_escape(&by),
                node.confidence().map(conf).unwrap_or_default(),
                html_escape(&more)
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
        assert!(!page.contains("src=") && !page.contains("href="));
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
}
