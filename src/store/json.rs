//! JSON inputs: fact documents `{"rel": [row, …]}` and evidence JSONL.
//!
//! Both share the record form `{"args", "confidence"?, "provenance"?}` (evidence adds
//! `"predicate"`); a fact document's row may also be a bare array of values.
//!
//! The documents are read by a byte scanner that stores each cell as it goes: numbers
//! parsed in place, strings interned once (a string without escapes is never
//! copied). Only the parts that carry arbitrary data of their own (an object row, a
//! `provenance` object) go through `serde_json`. Text the scanner does not accept is
//! handed to `serde_json` for the message and position of the syntax error.

use std::sync::Arc;

use serde_json::Value as Json;

use crate::diag::{Diagnostic, Diagnostics, Location, Result, SourceFile};
use crate::store::Provenance;
use crate::store::raw::{
    Format, Positions, RawCell, RawFile, RawInputs, RawRecord, bad_input, file_provenance, located,
};

/// A problem found while scanning: malformed JSON (reported by `serde_json`), or a
/// well-formed value of the wrong shape at a byte offset.
enum Problem {
    Syntax,
    Shape(usize, String),
}

type Scanned<T> = std::result::Result<T, Problem>;

struct Scan<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    #[inline]
    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    #[inline]
    fn expect(&mut self, b: u8) -> Scanned<()> {
        if self.eat(b) {
            Ok(())
        } else {
            Err(Problem::Syntax)
        }
    }

    /// A string at the cursor: the byte range of its contents, and whether it has
    /// escapes.
    fn string(&mut self) -> Scanned<(usize, usize, bool)> {
        if self.peek() != Some(b'"') {
            return Err(Problem::Syntax);
        }
        self.i += 1;
        let start = self.i;
        let mut escaped = false;
        loop {
            match self.s.get(self.i) {
                None => return Err(Problem::Syntax),
                Some(b'"') => {
                    self.i += 1;
                    return Ok((start, self.i - 1, escaped));
                }
                Some(b'\\') => {
                    escaped = true;
                    self.i += 2;
                }
                Some(&b) if b < 0x20 => return Err(Problem::Syntax),
                Some(_) => self.i += 1,
            }
        }
    }

    /// A number at the cursor.
    fn number(&mut self) -> Scanned<RawCell> {
        let s = self.s;
        let start = self.i;
        let mut i = start;
        let digit = |i: usize| s.get(i).is_some_and(u8::is_ascii_digit);
        if s.get(i) == Some(&b'-') {
            i += 1;
        }
        match s.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while digit(i) {
                    i += 1;
                }
            }
            _ => return Err(Problem::Syntax),
        }
        let mut integral = true;
        if s.get(i) == Some(&b'.') {
            integral = false;
            i += 1;
            if !digit(i) {
                return Err(Problem::Syntax);
            }
            while digit(i) {
                i += 1;
            }
        }
        if let Some(b'e' | b'E') = s.get(i) {
            integral = false;
            i += 1;
            if let Some(b'+' | b'-') = s.get(i) {
                i += 1;
            }
            if !digit(i) {
                return Err(Problem::Syntax);
            }
            while digit(i) {
                i += 1;
            }
        }
        self.i = i;
        // Digits, sign, '.', 'e': ASCII, so a valid `str`.
        let text = std::str::from_utf8(&s[start..i]).map_err(|_| Problem::Syntax)?;
        if integral {
            if let Ok(v) = text.parse::<i64>() {
                return Ok(RawCell::Int(v));
            }
            if let Ok(v) = text.parse::<u64>() {
                return Ok(RawCell::Big(v));
            }
        }
        match text.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(RawCell::Float(x)),
            _ => Err(Problem::Syntax),
        }
    }

    /// Skip any value at the cursor (not validated: `serde_json` checks what is
    /// used); returns its byte range.
    fn skip_value(&mut self) -> Scanned<(usize, usize)> {
        let start = match self.peek() {
            Some(_) => self.i,
            None => return Err(Problem::Syntax),
        };
        let mut depth = 0usize;
        loop {
            match self.s.get(self.i) {
                None => return Err(Problem::Syntax),
                Some(b'"') => {
                    self.string()?;
                }
                Some(b'[' | b'{') => {
                    depth += 1;
                    self.i += 1;
                }
                Some(b']' | b'}') => {
                    if depth == 0 {
                        return Err(Problem::Syntax);
                    }
                    depth -= 1;
                    self.i += 1;
                }
                Some(b',' | b':' | b' ' | b'\t' | b'\n' | b'\r') if depth > 0 => self.i += 1,
                Some(_) => {
                    if depth == 0 {
                        // A scalar: a number or a literal.
                        while let Some(b) = self.s.get(self.i) {
                            if matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r' | b':')
                            {
                                break;
                            }
                            self.i += 1;
                        }
                        return Ok((start, self.i));
                    }
                    self.i += 1;
                }
            }
            if depth == 0 {
                return Ok((start, self.i));
            }
        }
    }
}

/// What kind of JSON value starts with this byte, for messages.
fn kind_at(b: Option<u8>) -> &'static str {
    match b {
        Some(b'n') => "null",
        Some(b't' | b'f') => "a boolean",
        Some(b'"') => "a string",
        Some(b'[') => "an array",
        Some(b'{') => "an object",
        _ => "a number",
    }
}

/// Reads one document into a [`RawFile`].
struct Reader<'r> {
    raw: &'r mut RawInputs,
    file: RawFile,
}

impl Reader<'_> {
    /// Decode the string whose contents are `start..end`.
    fn decode(&self, start: usize, end: usize, escaped: bool) -> Scanned<String> {
        let text = &self.file.text;
        if escaped {
            serde_json::from_str(&text[start - 1..end + 1]).map_err(|_| Problem::Syntax)
        } else {
            Ok(text[start..end].to_string())
        }
    }

    /// A cell at the cursor (argument `k` of a row).
    fn cell(&mut self, sc: &mut Scan<'_>, k: usize) -> Scanned<RawCell> {
        match sc.peek() {
            Some(b'"') => {
                let (start, end, escaped) = sc.string()?;
                let key = if escaped {
                    let s = self.decode(start, end, true)?;
                    self.raw.symbols.try_get_or_intern(s)
                } else {
                    self.raw
                        .symbols
                        .try_get_or_intern(&self.file.text[start..end])
                };
                let key =
                    key.map_err(|_| Problem::Shape(start, "too many distinct strings".into()))?;
                Ok(RawCell::Str(lasso::Key::into_usize(key) as u32))
            }
            Some(b'-' | b'0'..=b'9') => sc.number(),
            other => {
                let at = sc.i;
                sc.skip_value()?;
                Err(Problem::Shape(
                    at,
                    format!(
                        "argument {} is {}; values must be numbers or strings",
                        k + 1,
                        kind_at(other)
                    ),
                ))
            }
        }
    }

    /// An array of cells at the cursor; returns (first cell, arity).
    fn cells(&mut self, sc: &mut Scan<'_>) -> Scanned<(usize, u32)> {
        let start = self.file.cells.len();
        sc.expect(b'[')?;
        if !sc.eat(b']') {
            loop {
                let k = self.file.cells.len() - start;
                let c = self.cell(sc, k)?;
                self.file.cells.push(c);
                if sc.eat(b',') {
                    continue;
                }
                sc.expect(b']')?;
                break;
            }
        }
        Ok((start, (self.file.cells.len() - start) as u32))
    }

    /// A record object `{"predicate"?, "args", "confidence"?, "provenance"?}` at the
    /// cursor. `predicate` is given for fact-document rows (from their key).
    fn object(
        &mut self,
        sc: &mut Scan<'_>,
        predicate: Option<u32>,
        default_source: &str,
    ) -> Scanned<RawRecord> {
        let at = sc.i;
        let start_cells = self.file.cells.len();
        sc.expect(b'{')?;
        let allowed: &[&str] = if predicate.is_some() {
            &["args", "confidence", "provenance"]
        } else {
            &["predicate", "args", "confidence", "provenance"]
        };
        let mut pred = predicate;
        let mut args: Option<(usize, u32, usize)> = None;
        let mut confidence = 1.0;
        let mut provenance: Option<Provenance> = None;
        if !sc.eat(b'}') {
            loop {
                sc.ws();
                let key_at = sc.i;
                let (ks, ke, kesc) = sc.string()?;
                let key = self.decode(ks, ke, kesc)?;
                sc.expect(b':')?;
                sc.ws();
                let value_at = sc.i;
                match key.as_str() {
                    k if !allowed.contains(&k) => {
                        return Err(Problem::Shape(
                            key_at,
                            format!("unknown field `{key}` (expected {})", allowed.join(", ")),
                        ));
                    }
                    "predicate" => {
                        if sc.peek() != Some(b'"') {
                            let what = kind_at(sc.peek());
                            return Err(Problem::Shape(
                                value_at,
                                format!("\"predicate\" must be a relation name, found {what}"),
                            ));
                        }
                        let (s, e, esc) = sc.string()?;
                        let name = self.decode(s, e, esc)?;
                        if name.is_empty() {
                            return Err(Problem::Shape(
                                value_at,
                                "\"predicate\" must be a relation name, found an empty string"
                                    .into(),
                            ));
                        }
                        pred = Some(self.raw.pred(&name));
                    }
                    "args" => {
                        if sc.peek() != Some(b'[') {
                            let what = kind_at(sc.peek());
                            return Err(Problem::Shape(
                                value_at,
                                format!("\"args\" must be an array, found {what}"),
                            ));
                        }
                        self.file.cells.truncate(start_cells);
                        let (s, n) = self.cells(sc)?;
                        args = Some((s, n, value_at));
                    }
                    "confidence" => {
                        let c = match sc.peek() {
                            Some(b'-' | b'0'..=b'9') => match sc.number()? {
                                RawCell::Int(i) => i as f64,
                                RawCell::Big(u) => u as f64,
                                RawCell::Float(x) => x,
                                _ => return Err(Problem::Syntax),
                            },
                            other => {
                                return Err(Problem::Shape(
                                    value_at,
                                    format!(
                                        "confidence must be a number in [0, 1], found {}",
                                        kind_at(other)
                                    ),
                                ));
                            }
                        };
                        if !(0.0..=1.0).contains(&c) {
                            return Err(Problem::Shape(
                                value_at,
                                format!("confidence {c} is outside [0, 1]"),
                            ));
                        }
                        confidence = c;
                    }
                    _ => {
                        // "provenance"
                        let is_object = sc.peek() == Some(b'{');
                        let (s, e) = sc.skip_value()?;
                        if !is_object {
                            let what = kind_at(self.file.text.as_bytes().get(s).copied());
                            return Err(Problem::Shape(
                                value_at,
                                format!("\"provenance\" must be an object, found {what}"),
                            ));
                        }
                        let map: serde_json::Map<String, Json> =
                            serde_json::from_str(&self.file.text[s..e])
                                .map_err(|_| Problem::Syntax)?;
                        let p = read_provenance(&map, default_source).map_err(|(key, m)| {
                            let text = self.file.text.clone();
                            let at = crate::store::jsonpos::member(&text, s, key).unwrap_or(s);
                            Problem::Shape(at, m)
                        })?;
                        provenance = Some(p);
                    }
                }
                if sc.eat(b',') {
                    continue;
                }
                sc.expect(b'}')?;
                break;
            }
        }
        let Some(pred) = pred else {
            return Err(Problem::Shape(at, "missing \"predicate\"".into()));
        };
        let Some((start, arity, args_at)) = args else {
            return Err(Problem::Shape(at, "missing \"args\"".into()));
        };
        let (provenance, edge_idx) = match provenance {
            None => (0, None),
            Some(mut p) => {
                let edge_idx = p.edge_idx.take();
                // A row of a fact file that gives no table keeps the file's.
                self.file.provenances.push(p);
                ((self.file.provenances.len() - 1) as u32, edge_idx)
            }
        };
        Ok(RawRecord {
            pred,
            start,
            arity,
            at,
            args_at,
            confidence,
            provenance,
            edge_idx,
        })
    }

    /// The body of a fact document.
    fn facts(&mut self, sc: &mut Scan<'_>, problems: &mut Vec<(usize, String)>) -> Scanned<()> {
        let doc_at = {
            sc.ws();
            sc.i
        };
        if sc.peek() != Some(b'{') {
            sc.skip_value()?;
            return Err(Problem::Shape(
                doc_at,
                "a JSON fact file must be an object mapping relation names to arrays of rows"
                    .into(),
            ));
        }
        sc.expect(b'{')?;
        if !sc.eat(b'}') {
            loop {
                let (ks, ke, kesc) = sc.string()?;
                let key = self.decode(ks, ke, kesc)?;
                let pred = self.raw.pred(&key);
                sc.expect(b':')?;
                sc.ws();
                if sc.peek() != Some(b'[') {
                    let at = sc.i;
                    sc.skip_value()?;
                    problems.push((at, format!("the value of `{key}` must be an array of rows")));
                } else {
                    sc.expect(b'[')?;
                    if !sc.eat(b']') {
                        loop {
                            self.row(sc, pred, &key, problems)?;
                            if sc.eat(b',') {
                                continue;
                            }
                            sc.expect(b']')?;
                            break;
                        }
                    }
                }
                if sc.eat(b',') {
                    continue;
                }
                sc.expect(b'}')?;
                break;
            }
        }
        sc.ws();
        if sc.i != sc.s.len() {
            return Err(Problem::Syntax);
        }
        Ok(())
    }

    /// One row of relation `pred` (named `key`).
    fn row(
        &mut self,
        sc: &mut Scan<'_>,
        pred: u32,
        key: &str,
        problems: &mut Vec<(usize, String)>,
    ) -> Scanned<()> {
        sc.ws();
        let at = sc.i;
        let mark = self.file.cells.len();
        let result = match sc.peek() {
            Some(b'[') => self.cells(sc).map(|(start, arity)| RawRecord {
                pred,
                start,
                arity,
                at,
                args_at: at,
                confidence: 1.0,
                provenance: 0,
                edge_idx: None,
            }),
            Some(b'{') => self.object(sc, Some(pred), "facts"),
            _ => {
                sc.skip_value()?;
                Err(Problem::Shape(
                    at,
                    format!(
                        "a row of `{key}` must be an array of values or an object with \"args\""
                    ),
                ))
            }
        };
        match result {
            Ok(r) => self.file.records.push(r),
            Err(Problem::Shape(bad, m)) => {
                problems.push((bad, m));
                self.file.cells.truncate(mark);
                // Go on after the row, so that every bad row is reported.
                sc.i = at;
                sc.skip_value()?;
            }
            Err(Problem::Syntax) => return Err(Problem::Syntax),
        }
        Ok(())
    }
}

/// The diagnostic for malformed JSON in `text[base..]` (a whole document or one
/// line), located in the file.
fn syntax_error(file: &RawFile, base: usize, end: usize) -> Diagnostic {
    let part = &file.text[base..end];
    let e = match serde_json::from_str::<serde::de::IgnoredAny>(part) {
        Err(e) => e,
        Ok(_) => {
            let mut pos = Positions::new(file);
            return bad_input(pos.at(base), "malformed JSON");
        }
    };
    let lines = SourceFile::new(file.name.to_string(), file.text.clone());
    let (base_line, base_col) = lines.line_col(base as u32);
    let line = base_line + e.line().saturating_sub(1);
    let col = if e.line() <= 1 {
        base_col + e.column().saturating_sub(1)
    } else {
        e.column()
    };
    let msg = e.to_string();
    let what = msg.rfind(" at line ").map_or(msg.as_str(), |i| &msg[..i]);
    bad_input(
        located(&file.name, Some(&lines), line, col.max(1)),
        format!("malformed JSON: {what}"),
    )
}

/// Parse a fact document `{"rel": [row, …], …}`.
pub(crate) fn parse_facts(raw: &mut RawInputs, name: &str, text: Arc<str>) -> Result<RawFile> {
    let file = RawFile::new(name, text.clone(), Format::Json, file_provenance(name));
    let mut reader = Reader { raw, file };
    let mut problems = Vec::new();
    let mut sc = Scan {
        s: text.as_bytes(),
        i: 0,
    };
    let outcome = reader.facts(&mut sc, &mut problems);
    let file = reader.file;
    let mut out = Diagnostics::default();
    match outcome {
        Err(Problem::Syntax) => out.push(syntax_error(&file, 0, text.len())),
        Err(Problem::Shape(at, m)) => problems.insert(0, (at, m)),
        Ok(()) => {}
    }
    if !problems.is_empty() && out.is_empty() {
        if serde_json::from_str::<serde::de::IgnoredAny>(&text).is_err() {
            out.push(syntax_error(&file, 0, text.len()));
        } else {
            let mut pos = Positions::new(&file);
            for (at, m) in problems {
                out.push_with(|| shape_error(&mut pos, at, m));
            }
        }
    }
    out.finish(file)
}

fn shape_error(pos: &mut Positions<'_>, at: usize, message: String) -> Diagnostic {
    let d = bad_input(pos.at(at), message.clone());
    if message.starts_with("a JSON fact file") {
        d.with_help(r#"write {"edge": [[1, 2], [2, 3]]}"#)
    } else {
        d
    }
}

/// Parse evidence JSONL: one record per non-blank line.
pub(crate) fn parse_evidence(raw: &mut RawInputs, name: &str, text: Arc<str>) -> Result<RawFile> {
    let default = Provenance {
        source: "hyperedge".to_string(),
        ..Provenance::default()
    };
    let file = RawFile::new(name, text.clone(), Format::Jsonl, default);
    let mut reader = Reader { raw, file };
    let bytes = text.as_bytes();
    let mut problems: Vec<Located> = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        let end =
            crate::store::delimited::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i);
        let base = pos;
        pos = end + 1;
        let line = &bytes[base..end];
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let mut sc = Scan {
            s: &bytes[..end],
            i: base,
        };
        sc.ws();
        let at = sc.i;
        let mark = (reader.file.cells.len(), reader.file.provenances.len());
        let result = if sc.peek() == Some(b'{') {
            reader.object(&mut sc, None, "hyperedge").and_then(|r| {
                sc.ws();
                if sc.i == end {
                    Ok(r)
                } else {
                    Err(Problem::Syntax)
                }
            })
        } else {
            match sc.skip_value() {
                Ok(_) => {
                    sc.ws();
                    if sc.i == end {
                        Err(Problem::Shape(
                            at,
                            "an evidence line must be a JSON object {\"predicate\", \"args\", …}"
                                .into(),
                        ))
                    } else {
                        Err(Problem::Syntax)
                    }
                }
                Err(p) => Err(p),
            }
        };
        match result {
            Ok(r) => reader.file.records.push(r),
            Err(p) => {
                reader.file.cells.truncate(mark.0);
                reader.file.provenances.truncate(mark.1);
                problems.push(match p {
                    Problem::Syntax => Located::Syntax(base, end),
                    Problem::Shape(at, m) => Located::Shape(base, end, at, m),
                });
            }
        }
    }
    let file = reader.file;
    let mut out = Diagnostics::default();
    let mut positions = Positions::new(&file);
    for p in problems {
        match p {
            Located::Syntax(base, end) => out.push_with(|| syntax_error(&file, base, end)),
            Located::Shape(base, end, at, m) => out.push_with(|| {
                if serde_json::from_str::<serde::de::IgnoredAny>(&file.text[base..end]).is_err() {
                    syntax_error(&file, base, end)
                } else {
                    bad_input(positions.at(at), m)
                }
            }),
        }
    }
    out.finish(file)
}

/// A problem of one evidence line (its byte range).
enum Located {
    Syntax(usize, usize),
    Shape(usize, usize, usize, String),
}

/// Read a provenance object; on error, the offending key and a message.
fn read_provenance(
    p: &serde_json::Map<String, Json>,
    default_source: &str,
) -> std::result::Result<Provenance, (&'static str, String)> {
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

/// The location of a record, for callers outside this module.
#[allow(dead_code)]
pub(crate) fn record_location(file: &RawFile, r: &RawRecord) -> Location {
    Positions::new(file).record(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::ErrorCode;

    fn facts(text: &str) -> (RawInputs, RawFile) {
        let mut raw = RawInputs::new();
        let f = parse_facts(&mut raw, "f.json", text.into()).unwrap();
        (raw, f)
    }

    fn pos(f: &RawFile, at: usize) -> (usize, usize) {
        let l = Positions::new(f).at(at);
        (l.line, l.col)
    }

    #[test]
    fn fact_rows_remember_line_and_columns() {
        let text = "{\n  \"edge\": [[1, 2],\n           [2, \"x\"]],\n  \"ok\": [[]]\n}";
        let (raw, f) = facts(text);
        assert_eq!(f.records.len(), 3);
        assert_eq!(raw.preds[f.records[1].pred as usize], "edge");
        assert_eq!(pos(&f, f.records[1].at), (3, 12));
        let arg = Positions::new(&f).arg(&f.records[1], 1);
        assert_eq!((arg.line, arg.col), (3, 16));
        let RawCell::Str(k) = f.cells_of(&f.records[1])[1] else {
            panic!("a string cell")
        };
        let key = <lasso::Spur as lasso::Key>::try_from_usize(k as usize).unwrap();
        assert_eq!(raw.symbols.resolve(&key), "x");
        assert_eq!(f.records[2].arity, 0);
        assert_eq!(f.provenances[0].source, "facts");
        assert_eq!(f.provenances[0].table.as_deref(), Some("f.json"));
        assert!(f.provenances[0].extra.is_empty());
    }

    #[test]
    fn numbers_keep_their_kind() {
        let (_, f) =
            facts(r#"{"e": [[1, -2, 1.0, 2e3, 18446744073709551615, -9223372036854775809]]}"#);
        assert_eq!(
            f.cells,
            vec![
                RawCell::Int(1),
                RawCell::Int(-2),
                RawCell::Float(1.0),
                RawCell::Float(2000.0),
                RawCell::Big(u64::MAX),
                RawCell::Float(-9223372036854775809.0),
            ]
        );
    }

    #[test]
    fn escaped_strings_are_decoded() {
        let (raw, f) = facts(r#"{"e\u0041": [["a\"b\\c\u00e9"]]}"#);
        assert_eq!(raw.preds, vec!["eA".to_string()]);
        let RawCell::Str(k) = f.cells[0] else {
            panic!()
        };
        let key = <lasso::Spur as lasso::Key>::try_from_usize(k as usize).unwrap();
        assert_eq!(raw.symbols.resolve(&key), "a\"b\\cé");
    }

    #[test]
    fn fact_rows_may_be_records() {
        let text =
            r#"{"edge": [{"args": [1, 2], "confidence": 0.5, "provenance": {"edge_idx": 7}}]}"#;
        let (_, f) = facts(text);
        let r = f.records[0];
        assert_eq!(r.confidence, 0.5);
        assert_eq!(r.edge_idx, Some(7));
        assert_eq!(f.provenances[r.provenance as usize].source, "facts");
        assert_eq!(f.cells, vec![RawCell::Int(1), RawCell::Int(2)]);
    }

    fn facts_err(text: &str) -> crate::diag::Error {
        parse_facts(&mut RawInputs::new(), "f.json", text.into()).unwrap_err()
    }

    #[test]
    fn malformed_fact_file_names_line_and_column() {
        let err = facts_err("{\"edge\": [[1, 2],\n  [3 4]]}");
        let loc = err.primary().location.clone().unwrap();
        assert_eq!(err.code(), ErrorCode::BadInput);
        assert_eq!((loc.file.as_str(), loc.line, loc.col), ("f.json", 2, 6));
        assert!(err.primary().message.starts_with("malformed JSON"));
        for bad in [
            "{\"e\": [[1]]} x",
            "{\"e\": [[01]]}",
            "{\"e\": [[\"a\nb\"]]}",
            "",
            "{",
        ] {
            let err = facts_err(bad);
            assert!(
                err.primary().message.starts_with("malformed JSON"),
                "{bad}: {err}"
            );
        }
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
            let err = facts_err(text);
            let loc = err.primary().location.clone().unwrap();
            assert_eq!((loc.line, loc.col), (line, col), "{text}");
        }
        let err = facts_err("{\"e\": [[true], [1], [null]]}");
        assert_eq!(err.diagnostics.len(), 2, "every bad row: {err}");
    }

    fn evidence(text: &str) -> Result<(RawInputs, RawFile)> {
        let mut raw = RawInputs::new();
        let f = parse_evidence(&mut raw, "e.jsonl", text.into())?;
        Ok((raw, f))
    }

    #[test]
    fn evidence_lines_keep_provenance() {
        let text = concat!(
            r#"{"predicate": "member", "args": [42, 7], "confidence": 0.5, "provenance": {"table": "DRONES", "edge_idx": 3, "event_ts": 17, "member_ids": [42, 7], "sensor": "radar"}}"#,
            "\n\n",
            r#"{"predicate": "cleared", "args": [7]}"#,
            "\n"
        );
        let (raw, f) = evidence(text).unwrap();
        assert_eq!(f.records.len(), 2);
        let r = f.records[0];
        let p = &f.provenances[r.provenance as usize];
        assert_eq!(p.source, "hyperedge");
        assert_eq!(p.table.as_deref(), Some("DRONES"));
        assert_eq!(r.edge_idx, Some(3));
        assert_eq!(p.event_ts, Some(Json::from(17)));
        assert_eq!(p.member_ids, vec![Json::from(42), Json::from(7)]);
        assert_eq!(p.extra["sensor"], "radar");
        assert_eq!(r.confidence, 0.5);
        assert_eq!(pos(&f, f.records[1].at).0, 3);
        assert_eq!(f.records[1].confidence, 1.0);
        assert_eq!(
            f.provenances[f.records[1].provenance as usize].source,
            "hyperedge"
        );
        assert_eq!(f.records[1].edge_idx, None);
        assert_eq!(raw.preds, vec!["member".to_string(), "cleared".to_string()]);
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
            let err = evidence(&text).unwrap_err();
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
        let err = evidence(text).unwrap_err();
        let lines: Vec<usize> = err
            .diagnostics
            .iter()
            .map(|d| d.location.as_ref().unwrap().line)
            .collect();
        assert_eq!(lines, vec![1, 2]);
    }

    #[test]
    fn many_bad_lines_cost_a_capped_report() {
        let text = "{\"predicate\": \"p\", \"args\": [true]}\n".repeat(10_000);
        let err = evidence(&text).unwrap_err();
        assert_eq!(err.diagnostics.len(), Diagnostics::LIMIT + 1);
        assert!(
            err.diagnostics
                .last()
                .unwrap()
                .message
                .starts_with("9980 more")
        );
    }
}
