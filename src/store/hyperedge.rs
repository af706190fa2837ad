//! Hyperedges: evidence as a retrieval system stores it.
//!
//! A hyperedge is one stored record of a table: its index (`edge_idx`, the `n` of
//! `HEDGE-n`), when it was recorded, the ids of its members, named attributes, and —
//! when it was read out of a text — the document and the character span it came
//! from. A rule pack's evidence mapping ([`crate::pack`]) turns each hyperedge into
//! one input fact; the hyperedge's identity becomes the fact's provenance, so proofs
//! and context blocks cite the document a user can check.
//!
//! One JSON object per line:
//!
//! ```json
//! {"table": "SIGHTINGS", "edge_idx": 101, "event_ts": 1700000300, "member_ids": [9],
//!  "attributes": {"zone": "airport"}, "confidence": 0.85,
//!  "doc_id": "radar-log-7", "span": [120, 164]}
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::diag::{Diagnostic, ErrorCode, Location, Result};
use crate::store::Provenance;

/// A character span of a source document: `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "SpanForm", into = "[usize; 2]")]
pub struct DocSpan {
    /// First character.
    pub start: usize,
    /// One past the last character.
    pub end: usize,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum SpanForm {
    Pair([usize; 2]),
    Object { start: usize, end: usize },
}

impl From<SpanForm> for DocSpan {
    fn from(f: SpanForm) -> DocSpan {
        match f {
            SpanForm::Pair([start, end]) | SpanForm::Object { start, end } => {
                DocSpan { start, end }
            }
        }
    }
}

impl From<DocSpan> for [usize; 2] {
    fn from(s: DocSpan) -> [usize; 2] {
        [s.start, s.end]
    }
}

/// One stored evidence record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hyperedge {
    /// The table it is stored in (a pack maps each table to a predicate).
    pub table: String,
    /// Its stored index; `None` lets the engine number it after the largest in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edge_idx: Option<u64>,
    /// When it was recorded (number or string, as stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_ts: Option<serde_json::Value>,
    /// Ids of its members, in the table's order.
    #[serde(default)]
    pub member_ids: Vec<serde_json::Value>,
    /// Named attributes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, serde_json::Value>,
    /// Confidence in [0, 1] (default 1.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// The source document, when the record was read out of a text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc_id: Option<String>,
    /// Where in that document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<DocSpan>,
}

impl Hyperedge {
    /// A record of `table` with these members and nothing else.
    pub fn new(table: impl Into<String>, member_ids: Vec<serde_json::Value>) -> Hyperedge {
        Hyperedge {
            table: table.into(),
            edge_idx: None,
            event_ts: None,
            member_ids,
            attributes: BTreeMap::new(),
            confidence: None,
            doc_id: None,
            span: None,
        }
    }

    /// The same record with an attribute.
    pub fn attr(mut self, name: &str, value: impl Into<serde_json::Value>) -> Hyperedge {
        self.attributes.insert(name.to_string(), value.into());
        self
    }

    /// The same record with a stored index.
    pub fn idx(mut self, edge_idx: u64) -> Hyperedge {
        self.edge_idx = Some(edge_idx);
        self
    }

    /// The same record with a confidence.
    pub fn conf(mut self, confidence: f64) -> Hyperedge {
        self.confidence = Some(confidence);
        self
    }

    /// The same record, read out of `doc_id` at `start..end`.
    pub fn from_doc(mut self, doc_id: &str, start: usize, end: usize) -> Hyperedge {
        self.doc_id = Some(doc_id.to_string());
        self.span = Some(DocSpan { start, end });
        self
    }

    /// The provenance record of the fact this hyperedge becomes: source
    /// `"hyperedge"`, its table, index, time and members, and its document, span and
    /// attributes as extra fields.
    pub fn provenance(&self) -> Provenance {
        let mut extra = BTreeMap::new();
        for (k, v) in &self.attributes {
            if !matches!(
                k.as_str(),
                "source" | "table" | "edge_idx" | "event_ts" | "member_ids" | "verified"
            ) {
                extra.insert(k.clone(), v.clone());
            }
        }
        if let Some(d) = &self.doc_id {
            extra.insert("doc_id".into(), serde_json::Value::from(d.clone()));
        }
        if let Some(s) = self.span {
            extra.insert("span".into(), serde_json::json!([s.start, s.end]));
        }
        Provenance {
            source: "hyperedge".into(),
            table: Some(self.table.clone()),
            edge_idx: self.edge_idx,
            event_ts: self.event_ts.clone(),
            member_ids: self.member_ids.clone(),
            extra,
        }
    }
}

/// Read hyperedges, one JSON object per line (blank lines and `//` comment lines are
/// skipped). `name` is what errors call the text. All-or-nothing: any bad line is a
/// `bad_input` error naming its line, and no records.
pub fn read_hyperedges(name: &str, text: &str) -> Result<Vec<Hyperedge>> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with("//") {
            continue;
        }
        match serde_json::from_str::<Hyperedge>(t) {
            Ok(h) => match h.confidence {
                Some(c) if !(0.0..=1.0).contains(&c) => problems.push(
                    Diagnostic::new(
                        ErrorCode::BadInput,
                        format!("confidence {c} is not in [0, 1]"),
                    )
                    .at(Location::at(name, i + 1, 1)),
                ),
                _ => out.push(h),
            },
            Err(e) => problems.push(
                Diagnostic::new(ErrorCode::BadInput, format!("not a hyperedge: {e}"))
                    .at(Location::at(name, i + 1, e.column().max(1)))
                    .with_help(
                        r#"one object per line: {"table", "edge_idx"?, "event_ts"?, "member_ids", "attributes"?, "confidence"?, "doc_id"?, "span"?}"#,
                    ),
            ),
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(crate::diag::Error {
            diagnostics: problems,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_records_and_keeps_their_identity() {
        let text = r#"
// a comment
{"table": "SIGHTINGS", "edge_idx": 101, "event_ts": 5, "member_ids": [9], "attributes": {"zone": "airport"}, "confidence": 0.85, "doc_id": "log-7", "span": [120, 164]}
{"table": "DRONES", "member_ids": [42, 7], "span": {"start": 1, "end": 2}}
"#;
        let hs = read_hyperedges("e.jsonl", text).unwrap();
        assert_eq!(hs.len(), 2);
        let p = hs[0].provenance();
        assert_eq!(p.edge_idx, Some(101));
        assert_eq!(p.table.as_deref(), Some("SIGHTINGS"));
        assert_eq!(p.extra["doc_id"], "log-7");
        assert_eq!(p.extra["span"], serde_json::json!([120, 164]));
        assert_eq!(p.extra["zone"], "airport");
        assert_eq!(hs[1].span, Some(DocSpan { start: 1, end: 2 }));
        let back: Hyperedge =
            serde_json::from_str(&serde_json::to_string(&hs[0]).unwrap()).unwrap();
        assert_eq!(back, hs[0]);
    }

    #[test]
    fn a_bad_line_names_its_line() {
        let err = read_hyperedges("e.jsonl", "{\"table\": \"T\"}\n{\"tabel\": 1}\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("e.jsonl:2"), "{err}");
        let err = read_hyperedges("e.jsonl", "{\"table\": \"T\", \"confidence\": 2}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not in [0, 1]"), "{err}");
    }
}
