//! Delimited fact files: CSV, TSV and Soufflé's tab-separated `.facts`, read with the
//! `csv` crate. Cells stay text until the relation's column types are known.

use std::sync::Arc;

use crate::diag::{Result, SourceFile};
use crate::store::raw::{Origin, Problems, RawFact, RawValue, bad_input, file_provenance, located};

/// How a delimited file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    /// The field separator (one byte).
    pub delimiter: u8,
    /// Whether `"…"` quotes fields (RFC 4180). Off for Soufflé's `.facts`, where a
    /// quote is an ordinary character.
    pub quoting: bool,
    /// Whether the first record is a header to skip.
    pub headers: bool,
}

impl Dialect {
    /// Comma-separated with RFC 4180 quoting, no header (`.csv`).
    pub fn csv() -> Dialect {
        Dialect {
            delimiter: b',',
            quoting: true,
            headers: false,
        }
    }

    /// Tab-separated, no quoting, no header (`.tsv`, `.facts`, and Soufflé's default
    /// for `.input`).
    pub fn tsv() -> Dialect {
        Dialect {
            delimiter: b'\t',
            quoting: false,
            headers: false,
        }
    }
}

/// Read the records of `text` as rows of `relation`, cells as text.
pub(crate) fn parse_untyped(
    name: &str,
    relation: &str,
    text: &str,
    dialect: Dialect,
) -> Result<Vec<RawFact>> {
    let file: Arc<str> = name.into();
    let lines = Arc::new(SourceFile::new(name, text));
    // The reader reports where it started reading a record, which may be on a
    // blank line it then skipped.
    let line_of = |byte: u64| {
        let mut at = byte as usize;
        while matches!(text.as_bytes().get(at), Some(b'\n' | b'\r')) {
            at += 1;
        }
        lines.line_col(at as u32).0
    };
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(dialect.delimiter)
        .quoting(dialect.quoting)
        .has_headers(dialect.headers)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut problems = Problems::default();
    if dialect.quoting
        && let Some((at, what)) = quoting_error(text.as_bytes(), dialect.delimiter)
    {
        let (line, col) = lines.line_col(at as u32);
        problems.push(
            bad_input(located(name, Some(&lines), line, col), what).with_help(
                "close every quoted field with `\"` and write a quote inside one as `\"\"` \
                 (RFC 4180)",
            ),
        );
        return problems.finish(Vec::new());
    }
    let mut out = Vec::new();
    for record in reader.records() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(1, |p| line_of(p.byte()));
                let what = match e.kind() {
                    csv::ErrorKind::Utf8 { err, .. } => format!("invalid UTF-8 ({err})"),
                    _ => e.to_string(),
                };
                problems.push(bad_input(
                    located(name, Some(&lines), line, 1),
                    format!("unreadable record: {what}"),
                ));
                continue;
            }
        };
        let line = record.position().map_or(1, |p| line_of(p.byte()));
        let mut arg_cols = Vec::with_capacity(record.len());
        let mut col = 1;
        for field in record.iter() {
            arg_cols.push(col);
            col += field.chars().count() + 1;
        }
        let origin = Origin {
            file: file.clone(),
            source: Some(lines.clone()),
            line,
            col: 1,
            arg_cols,
            object_at: None,
        };
        out.push(RawFact {
            predicate: relation.to_string(),
            args: record
                .iter()
                .map(|c| RawValue::Text(c.to_string()))
                .collect(),
            confidence: 1.0,
            provenance: file_provenance("facts", &origin),
            origin,
        });
    }
    problems.finish(out)
}

/// The first quoting mistake of RFC 4180 text, which the `csv` reader would accept
/// silently: a quoted field never closed (it would swallow the rest of the file), or
/// text after a field's closing quote. Returns its byte offset and a description.
fn quoting_error(text: &[u8], delimiter: u8) -> Option<(usize, String)> {
    enum State {
        FieldStart,
        Unquoted,
        Quoted(usize),
        /// A quote inside a quoted field: its end, or the first of `""`.
        QuoteInQuoted(usize),
    }
    let mut state = State::FieldStart;
    for (i, &b) in text.iter().enumerate() {
        let end_of_field = b == delimiter || b == b'\n' || b == b'\r';
        state = match state {
            State::FieldStart if b == b'"' => State::Quoted(i),
            State::FieldStart | State::Unquoted if end_of_field => State::FieldStart,
            State::FieldStart | State::Unquoted => State::Unquoted,
            State::Quoted(open) if b == b'"' => State::QuoteInQuoted(open),
            State::Quoted(open) => State::Quoted(open),
            State::QuoteInQuoted(open) if b == b'"' => State::Quoted(open),
            State::QuoteInQuoted(_) if end_of_field => State::FieldStart,
            State::QuoteInQuoted(_) => {
                return Some((
                    i,
                    "malformed CSV: text after a quoted field's closing quote".into(),
                ));
            }
        };
    }
    match state {
        State::Quoted(open) => Some((
            open,
            "malformed CSV: this quoted field is never closed (it would run to the end of \
             the file)"
                .into(),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(f: &RawFact) -> Vec<String> {
        f.args
            .iter()
            .map(|a| match a {
                RawValue::Text(s) => s.clone(),
                RawValue::Json(j) => j.to_string(),
            })
            .collect()
    }

    #[test]
    fn csv_quotes_and_tsv_does_not() {
        let csv = parse_untyped("e.csv", "e", "1,\"a,b\"\n2,c\n", Dialect::csv()).unwrap();
        assert_eq!(cells(&csv[0]), ["1", "a,b"]);
        assert_eq!(csv[1].origin.line, 2);
        let tsv = parse_untyped("e.facts", "e", "1\t\"a\"\n\n3\tx y\n", Dialect::tsv()).unwrap();
        assert_eq!(cells(&tsv[0]), ["1", "\"a\""]);
        assert_eq!(cells(&tsv[1]), ["3", "x y"]);
        assert_eq!(tsv[1].origin.line, 3);
        assert_eq!(tsv[1].origin.arg_cols, vec![1, 3]);
        assert_eq!(tsv[1].predicate, "e");
    }

    #[test]
    fn unterminated_quotes_and_text_after_quotes_are_errors() {
        let err = parse_untyped("e.csv", "e", "1,2\n3,\"open\n5,6\n", Dialect::csv()).unwrap_err();
        let d = err.primary();
        assert!(d.message.contains("never closed"), "{d}");
        assert_eq!(d.location.as_ref().map(|l| (l.line, l.col)), Some((2, 3)));
        let err = parse_untyped("e.csv", "e", "1,\"a\"b\n", Dialect::csv()).unwrap_err();
        assert!(err.primary().message.contains("after a quoted field"));
        // Escaped quotes, quotes inside unquoted fields and quoted line breaks are fine.
        let ok = parse_untyped(
            "e.csv",
            "e",
            "1,\"a\"\"b\"\n2,x\"y\n3,\"l1\nl2\"\n",
            Dialect::csv(),
        )
        .unwrap();
        assert_eq!(cells(&ok[0]), ["1", "a\"b"]);
        assert_eq!(cells(&ok[2]), ["3", "l1\nl2"]);
        // Without quoting, a quote is an ordinary character.
        assert!(parse_untyped("e.facts", "e", "1\t\"open\n", Dialect::tsv()).is_ok());
    }

    #[test]
    fn headers_are_skipped_when_asked() {
        let d = Dialect {
            headers: true,
            ..Dialect::csv()
        };
        let rows = parse_untyped("e.csv", "e", "src,dst\n1,2\n", d).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(cells(&rows[0]), ["1", "2"]);
        assert_eq!(rows[0].origin.line, 2);
    }

    #[test]
    fn ragged_rows_are_kept_for_resolve_to_report() {
        let rows = parse_untyped("e.csv", "e", "1,2\n3\n", Dialect::csv()).unwrap();
        assert_eq!(rows[1].args.len(), 1);
    }
}
