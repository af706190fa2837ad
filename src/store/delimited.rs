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
