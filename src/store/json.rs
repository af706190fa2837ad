//! JSON inputs: fact documents `{"rel": [row, …]}` and evidence JSONL.
//!
//! Both share the record form `{"args", "confidence"?, "provenance"?}` (evidence adds
//! `"predicate"`); a fact document's row may also be a bare array of values.

use std::cell::Cell;
use std::sync::Arc;

use serde_json::Value as Json;

use crate::diag::{Location, Result, SourceFile};
use crate::store::Provenance;
use crate::store::jsonpos;
use crate::store::raw::{Origin, Problems, RawFact, RawValue, bad_input, file_provenance, located};

/// Positions in one document.
struct Doc<'a> {
    name: Arc<str>,
    text: &'a str,
    src: Arc<SourceFile>,
    line_starts: Vec<usize>,
    /// The last position resolved: (offset, line, col). Records are resolved in
    /// increasing offset order, so counting characters from here keeps a whole
    /// document (even one long line) linear.
    cursor: Cell<(usize, usize, usize)>,
}

impl<'a> Doc<'a> {
    fn new(name: &str, text: &'a str) -> Doc<'a> {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Doc {
            name: name.into(),
            text,
            src: Arc::new(SourceFile::new(name, text)),
            line_starts,
            cursor: Cell::new((0, 1, 1)),
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let (c_off, c_line, c_col) = self.cursor.get();
        let (from, col0) = if c_line == line + 1 && c_off <= offset {
            (c_off, c_col)
        } else {
            (self.line_starts[line], 1)
        };
        let col = col0 + self.text.get(from..offset).map_or(0, |s| s.chars().count());
        self.cursor.set((offset, line + 1, col));
        (line + 1, col)
    }

    fn at(&self, offset: usize) -> Location {
        let (line, col) = self.line_col(offset);
        located(&self.name, Some(&self.src), line, col)
    }

    fn origin(&self, offset: usize, arg_offsets: &[usize]) -> Origin {
        let (line, col) = self.line_col(offset);
        Origin {
            file: self.name.clone(),
            source: Some(self.src.clone()),
            line,
            col,
            arg_cols: arg_offsets.iter().map(|&o| self.line_col(o).1).collect(),
            object_at: None,
        }
    }

    /// A diagnostic for a `serde_json` syntax error in the text starting at `base`.
    fn syntax_error(&self, base: usize, e: &serde_json::Error) -> crate::diag::Diagnostic {
        let (base_line, base_col) = self.line_col(base);
        let line = base_line + e.line().saturating_sub(1);
        let col = if e.line() <= 1 {
            base_col + e.column().saturating_sub(1)
        } else {
            e.column()
        };
        let msg = e.to_string();
        let what = msg.rfind(" at line ").map_or(msg.as_str(), |i| &msg[..i]);
        bad_input(
            located(&self.name, Some(&self.src), line, col.max(1)),
            format!("malformed JSON: {what}"),
        )
    }
}

/// Parse a fact document `{"rel": [row, …], …}`: every row, or every problem.
pub(crate) fn parse_facts(name: &str, text: &str) -> Result<Vec<RawFact>> {
    let (facts, problems) = parse_facts_lenient(name, text);
    problems.finish(facts)
}

/// Parse a fact document, keeping the good rows beside the problems of the bad ones
/// (so that a load can check the good rows too and report everything at once).
pub(crate) fn parse_facts_lenient(name: &str, text: &str) -> (Vec<RawFact>, Problems) {
    let doc = Doc::new(name, text);
    let mut problems = Problems::default();
    if let Some(at) = jsonpos::too_deep(text, jsonpos::MAX_JSON_DEPTH) {
        problems.push(too_deep(&doc, at));
        return (Vec::new(), problems);
    }
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        problems.push(doc.syntax_error(0, &e));
        return (Vec::new(), problems);
    }
    let start = text.len() - text.trim_start().len();
    let Some(members) = jsonpos::members(text, start) else {
        problems.push(
            bad_input(
                doc.at(start),
                "a JSON fact file must be an object mapping relation names to arrays of rows",
            )
            .with_help(r#"write {"edge": [[1, 2], [2, 3]]}"#),
        );
        return (Vec::new(), problems);
    };
    let mut out = Vec::new();
    for m in members {
        let Some(rows) = jsonpos::elements(text, m.value.start) else {
            problems.push(bad_input(
                doc.at(m.value.start),
                format!("the value of `{}` must be an array of rows", m.key),
            ));
            continue;
        };
        for row in rows {
            let Ok(value) = serde_json::from_str::<Json>(&text[row.start..row.end]) else {
                problems.push(bad_input(doc.at(row.start), "unreadable row"));
                continue;
            };
            let fact = match value {
                Json::Array(cells) => {
                    let offsets = jsonpos::elements(text, row.start)
                        .map(|es| es.iter().map(|e| e.start).collect::<Vec<_>>())
                        .unwrap_or_default();
                    scalars(&doc, &cells, &offsets, row.start).map(|args| {
                        let origin = doc.origin(row.start, &offsets);
                        let provenance = file_provenance("facts", &origin);
                        RawFact {
                            predicate: m.key.clone(),
                            args,
                            confidence: 1.0,
                            provenance,
                            origin,
                        }
                    })
                }
                Json::Object(obj) => record(&doc, &obj, row.start, Some(&m.key), "facts"),
                _ => Err(bad_input(
                    doc.at(row.start),
                    format!(
                        "a row of `{}` must be an array of values or an object with \"args\"",
                        m.key
                    ),
                )),
            };
            match fact {
                Ok(f) => out.push(f),
                Err(d) => problems.push(d),
            }
        }
    }
    (out, problems)
}

/// Parse evidence JSONL: one record per non-blank line; every record, or every
/// problem.
pub(crate) fn parse_evidence(name: &str, text: &str) -> Result<Vec<RawFact>> {
    let (facts, problems) = parse_evidence_lenient(name, text);
    problems.finish(facts)
}

/// Parse evidence JSONL, keeping the good records beside the problems of the bad
/// lines.
pub(crate) fn parse_evidence_lenient(name: &str, text: &str) -> (Vec<RawFact>, Problems) {
    let doc = Doc::new(name, text);
    let mut problems = Problems::default();
    let mut out = Vec::new();
    let mut line_start = 0usize;
    for line in text.split_inclusive('\n') {
        let base = line_start;
        line_start += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        if body.trim().is_empty() {
            continue;
        }
        let at = base + (body.len() - body.trim_start().len());
        if let Some(deep) = jsonpos::too_deep(body, jsonpos::MAX_JSON_DEPTH) {
            problems.push(too_deep(&doc, base + deep));
            continue;
        }
        let value: Json = match serde_json::from_str(body) {
            Ok(v) => v,
            Err(e) => {
                problems.push(doc.syntax_error(base, &e));
                continue;
            }
        };
        let Json::Object(obj) = value else {
            problems.push(bad_input(
                doc.at(at),
                "an evidence line must be a JSON object {\"predicate\", \"args\", …}",
            ));
            continue;
        };
        match record(&doc, &obj, at, None, "hyperedge") {
            Ok(f) => out.push(f),
            Err(d) => problems.push(d),
        }
    }
    (out, problems)
}

/// The diagnostic for JSON nested beyond [`jsonpos::MAX_JSON_DEPTH`] at byte `at`.
fn too_deep(doc: &Doc<'_>, at: usize) -> crate::diag::Diagnostic {
    bad_input(
        doc.at(at),
        format!(
            "JSON nested more than {} levels deep (the nesting limit)",
            jsonpos::MAX_JSON_DEPTH
        ),
    )
    .with_help("fact rows and evidence records need only a few levels of nesting")
}

/// Check that every cell is a number or a string.
fn scalars(
    doc: &Doc<'_>,
    cells: &[Json],
    offsets: &[usize],
    row_at: usize,
) -> Result<Vec<RawValue>, crate::diag::Diagnostic> {
    cells
        .iter()
        .enumerate()
        .map(|(i, c)| match c {
            Json::Number(_) | Json::String(_) => Ok(RawValue::Json(c.clone())),
            other => Err(bad_input(
                doc.at(offsets.get(i).copied().unwrap_or(row_at)),
                format!(
                    "argument {} is {}; values must be numbers or strings",
                    i + 1,
                    kind(other)
                ),
            )),
        })
        .collect()
}

/// A record object: `{"predicate"?, "args", "confidence"?, "provenance"?}` at byte
/// `at`. `predicate` is given for fact-document rows (from their key).
fn record(
    doc: &Doc<'_>,
    obj: &serde_json::Map<String, Json>,
    at: usize,
    predicate: Option<&str>,
    default_source: &str,
) -> Result<RawFact, crate::diag::Diagnostic> {
    let field_at = |key: &str| jsonpos::member(doc.text, at, key).unwrap_or(at);
    let allowed: &[&str] = if predicate.is_some() {
        &["args", "confidence", "provenance"]
    } else {
        &["predicate", "args", "confidence", "provenance"]
    };
    for key in obj.keys() {
        if !allowed.contains(&key.as_str()) {
            let key_at = jsonpos::members(doc.text, at)
                .and_then(|ms| ms.into_iter().find(|m| &m.key == key).map(|m| m.key_at))
                .unwrap_or(at);
            return Err(bad_input(
                doc.at(key_at),
                format!("unknown field `{key}` (expected {})", allowed.join(", ")),
            ));
        }
    }
    let predicate = match predicate {
        Some(p) => p.to_string(),
        None => match obj.get("predicate") {
            Some(Json::String(p)) if !p.is_empty() => p.clone(),
            Some(other) => {
                return Err(bad_input(
                    doc.at(field_at("predicate")),
                    format!(
                        "\"predicate\" must be a relation name, found {}",
                        kind(other)
                    ),
                ));
            }
            None => return Err(bad_input(doc.at(at), "missing \"predicate\"")),
        },
    };
    let args_at = field_at("args");
    let args = match obj.get("args") {
        Some(Json::Array(cells)) => {
            let offsets = jsonpos::elements(doc.text, args_at)
                .map(|es| es.iter().map(|e| e.start).collect::<Vec<_>>())
                .unwrap_or_default();
            let args = scalars(doc, cells, &offsets, args_at)?;
            (args, offsets)
        }
        Some(other) => {
            return Err(bad_input(
                doc.at(args_at),
                format!("\"args\" must be an array, found {}", kind(other)),
            ));
        }
        None => return Err(bad_input(doc.at(at), "missing \"args\"")),
    };
    let confidence = match obj.get("confidence") {
        None => 1.0,
        Some(c) => confidence(c).map_err(|m| bad_input(doc.at(field_at("confidence")), m))?,
    };
    let mut origin = doc.origin(at, &args.1);
    origin.object_at = Some(at);
    let provenance = match obj.get("provenance") {
        None if default_source == "facts" => file_provenance("facts", &origin),
        None => Provenance {
            source: default_source.to_string(),
            ..Provenance::default()
        },
        Some(Json::Object(p)) => provenance(p, default_source).map_err(|(key, m)| {
            let pat = field_at("provenance");
            bad_input(
                doc.at(jsonpos::member(doc.text, pat, key).unwrap_or(pat)),
                m,
            )
        })?,
        Some(other) => {
            return Err(bad_input(
                doc.at(field_at("provenance")),
                format!("\"provenance\" must be an object, found {}", kind(other)),
            ));
        }
    };
    Ok(RawFact {
        predicate,
        args: args.0,
        confidence,
        provenance,
        origin,
    })
}

/// A confidence: a number in [0, 1].
fn confidence(c: &Json) -> Result<f64, String> {
    match c.as_f64() {
        Some(x) if (0.0..=1.0).contains(&x) => Ok(x),
        Some(x) => Err(format!("confidence {x} is outside [0, 1]")),
        None => Err(format!(
            "confidence must be a number in [0, 1], found {}",
            kind(c)
        )),
    }
}

/// Read a provenance object; on error, the offending key and a message.
pub(crate) fn provenance(
    p: &serde_json::Map<String, Json>,
    default_source: &str,
) -> Result<Provenance, (&'static str, String)> {
    let mut out = Provenance {
        source: default_source.to_string(),
        ..Provenance::default()
    };
    for (key, v) in p {
        match key.as_str() {
            "source" => match v {
                Json::String(s) => out.source = s.clone(),
                Json::Null => {}
                other => {
                    return Err((
                        "source",
                        format!(
                            "provenance \"source\" must be a string, found {}",
                            kind(other)
                        ),
                    ));
                }
            },
            "table" => match v {
                Json::String(s) => out.table = Some(s.clone()),
                Json::Null => {}
                other => {
                    return Err((
                        "table",
                        format!(
                            "provenance \"table\" must be a string, found {}",
                            kind(other)
                        ),
                    ));
                }
            },
            "edge_idx" => match v {
                Json::Null => {}
                Json::Number(n) if n.is_u64() => out.edge_idx = n.as_u64(),
                other => {
                    return Err((
                        "edge_idx",
                        format!(
                            "edge_idx must be a non-negative integer, found {}",
                            shown(other)
                        ),
                    ));
                }
            },
            "event_ts" => match v {
                Json::Null => {}
                Json::Number(_) | Json::String(_) => out.event_ts = Some(v.clone()),
                other => {
                    return Err((
                        "event_ts",
                        format!(
                            "event_ts must be a number or a string, found {}",
                            kind(other)
                        ),
                    ));
                }
            },
            "member_ids" => match v {
                Json::Null => {}
                Json::Array(ids) => out.member_ids = ids.clone(),
                other => {
                    return Err((
                        "member_ids",
                        format!("member_ids must be an array, found {}", kind(other)),
                    ));
                }
            },
            _ => {
                out.extra.insert(key.clone(), v.clone());
            }
        }
    }
    Ok(out)
}

/// What kind of JSON value this is, for messages.
fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// A value as written, for messages about a specific bad value.
fn shown(v: &Json) -> String {
    match v {
        Json::Number(_) | Json::String(_) => v.to_string(),
        other => kind(other).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::ErrorCode;

    #[test]
    fn fact_rows_remember_line_and_columns() {
        let text = "{\n  \"edge\": [[1, 2],\n           [2, \"x\"]],\n  \"ok\": [[]]\n}";
        let facts = parse_facts("f.json", text).unwrap();
        assert_eq!(facts.len(), 3);
        assert_eq!(facts[1].predicate, "edge");
        assert_eq!((facts[1].origin.line, facts[1].origin.col), (3, 12));
        assert_eq!(facts[1].origin.arg_cols, vec![13, 16]);
        assert_eq!(facts[1].args[1], RawValue::Json(Json::from("x")));
        assert_eq!(facts[2].args, vec![]);
        assert_eq!(facts[0].provenance.source, "facts");
        assert_eq!(facts[0].provenance.table.as_deref(), Some("f.json"));
        assert!(facts[0].provenance.extra.is_empty());
    }

    #[test]
    fn positions_on_one_long_line_are_exact_in_any_order() {
        let text = "{\"é\": [[1], [22], [333]]}\n{}";
        let doc = Doc::new("f.json", text);
        let at = |needle: &str| text.find(needle).unwrap();
        assert_eq!(doc.line_col(at("333")), (1, 20));
        assert_eq!(doc.line_col(at("22")), (1, 14), "backwards");
        assert_eq!(doc.line_col(at("22") + 1), (1, 15));
        assert_eq!(doc.line_col(text.len() - 2), (2, 1));
        assert_eq!(doc.line_col(0), (1, 1));
        for (i, _) in text.char_indices() {
            let expected = doc.src.line_col(i as u32);
            assert_eq!(doc.line_col(i), expected, "offset {i}");
        }
    }

    #[test]
    fn fact_rows_may_be_records() {
        let text =
            r#"{"edge": [{"args": [1, 2], "confidence": 0.5, "provenance": {"edge_idx": 7}}]}"#;
        let facts = parse_facts("f.json", text).unwrap();
        assert_eq!(facts[0].confidence, 0.5);
        assert_eq!(facts[0].provenance.edge_idx, Some(7));
        assert_eq!(facts[0].provenance.source, "facts");
    }

    #[test]
    fn malformed_fact_file_names_line_and_column() {
        let err = parse_facts("f.json", "{\"edge\": [[1, 2],\n  [3 4]]}").unwrap_err();
        let loc = err.primary().location.clone().unwrap();
        assert_eq!(err.code(), ErrorCode::BadInput);
        assert_eq!((loc.file.as_str(), loc.line, loc.col), ("f.json", 2, 6));
        assert!(err.primary().message.starts_with("malformed JSON"));
    }

    #[test]
    fn fact_file_shape_errors() {
        for (text, line, col) in [
            ("[1, 2]", 1, 1),
            ("{\"e\": 3}", 1, 7),
            ("{\"e\": [[1, [2]]]}", 1, 12),
            ("{\"e\": [[1], true]}", 1, 13),
            ("{\"e\": [{\"args\": [1], \"weight\": 2}]}", 1, 22),
        ] {
            let err = parse_facts("f.json", text).unwrap_err();
            let loc = err.primary().location.clone().unwrap();
            assert_eq!((loc.line, loc.col), (line, col), "{text}");
        }
    }

    #[test]
    fn evidence_lines_keep_provenance() {
        let text = concat!(
            r#"{"predicate": "member", "args": [42, 7], "confidence": 0.5, "provenance": {"table": "DRONES", "edge_idx": 3, "event_ts": 17, "member_ids": [42, 7], "sensor": "radar"}}"#,
            "\n\n",
            r#"{"predicate": "cleared", "args": [7]}"#,
            "\n"
        );
        let facts = parse_evidence("e.jsonl", text).unwrap();
        assert_eq!(facts.len(), 2);
        let p = &facts[0].provenance;
        assert_eq!(p.source, "hyperedge");
        assert_eq!(p.table.as_deref(), Some("DRONES"));
        assert_eq!(p.edge_idx, Some(3));
        assert_eq!(p.event_ts, Some(Json::from(17)));
        assert_eq!(p.member_ids, vec![Json::from(42), Json::from(7)]);
        assert_eq!(p.extra["sensor"], "radar");
        assert_eq!(facts[0].confidence, 0.5);
        assert_eq!(facts[1].origin.line, 3);
        assert_eq!(facts[1].confidence, 1.0);
        assert_eq!(facts[1].provenance.source, "hyperedge");
        assert_eq!(facts[1].provenance.edge_idx, None);
    }

    #[test]
    fn evidence_errors_name_line_and_column() {
        let ok = r#"{"predicate": "p", "args": [1]}"#;
        let cases = [
            (
                r#"{"predicate": "p", "args": [1], "confidence": 1.5}"#,
                47,
                "outside [0, 1]",
            ),
            (
                r#"{"predicate": "p", "args": [1], "confidence": "0.5"}"#,
                47,
                "must be a number",
            ),
            (
                r#"{"predicate": "p", "args": [1], "confidence": NaN}"#,
                47,
                "malformed JSON",
            ),
            (
                r#"{"predicate": "p", "args": [1], "provenance": {"edge_idx": -1}}"#,
                60,
                "edge_idx",
            ),
            (
                r#"{"predicate": "p", "args": [1], "provenance": {"edge_idx": 1.5}}"#,
                60,
                "edge_idx",
            ),
            (r#"{"predicate": "p", "args": [null]}"#, 29, "argument 1"),
            (r#"{"predicate": 3, "args": [1]}"#, 15, "predicate"),
            (
                r#"{"predicate": "p", "arg": [1]}"#,
                20,
                "unknown field `arg`",
            ),
            (r#"{"predicate": "p"}"#, 1, "missing \"args\""),
            (r#"[1, 2]"#, 1, "JSON object"),
        ];
        for (line, col, what) in cases {
            let text = format!("{ok}\n{line}\n");
            let err = parse_evidence("e.jsonl", &text).unwrap_err();
            let d = err.primary();
            let loc = d.location.clone().unwrap();
            assert_eq!((loc.line, loc.col), (2, col), "{line}: {}", d.message);
            assert!(d.message.contains(what), "{line}: {}", d.message);
            assert_eq!(err.diagnostics.len(), 1);
        }
    }

    #[test]
    fn every_bad_line_is_reported() {
        let text = "{\"predicate\": \"p\", \"args\": [1], \"confidence\": 2}\nnot json\n{\"predicate\": \"p\", \"args\": [2]}\n";
        let err = parse_evidence("e.jsonl", text).unwrap_err();
        let lines: Vec<usize> = err
            .diagnostics
            .iter()
            .map(|d| d.location.as_ref().unwrap().line)
            .collect();
        assert_eq!(lines, vec![1, 2]);
    }
}
