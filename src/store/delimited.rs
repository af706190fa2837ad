//! Delimited fact files: CSV, TSV and Soufflé's tab-separated `.facts`. Cells stay
//! text (byte ranges) until the relation's column types are known.
//!
//! Without quoting (TSV, `.facts`) a line is split on the delimiter in place: no
//! copy, no allocation per row. With RFC 4180 quoting (CSV) the `csv` crate reads
//! records into one reused buffer and the unescaped fields are appended to one text
//! buffer per file.

use std::sync::Arc;

use crate::diag::{Diagnostics, Result, SourceFile};
use crate::store::raw::{Format, RawCell, RawFile, RawRecord, bad_input, file_provenance, located};

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

/// Read the records of `text` as rows of predicate `pred`, cells as text.
pub(crate) fn parse_untyped(
    name: &str,
    pred: u32,
    text: Arc<str>,
    dialect: Dialect,
) -> Result<RawFile> {
    let mut file = RawFile::new(
        name,
        text.clone(),
        Format::Delimited(dialect),
        file_provenance(name),
    );
    if text.len() > u32::MAX as usize {
        let d = bad_input(
            crate::diag::Location::at(name, 1, 1),
            "a delimited fact file larger than 4 GiB cannot be read; split it",
        );
        return Err(d.into());
    }
    if dialect.quoting {
        read_quoted(&mut file, pred, dialect)?;
    } else {
        read_plain(&mut file, pred, dialect);
    }
    Ok(file)
}

/// Split lines on the delimiter, in place. Blank lines are skipped; a line may end
/// with `\r\n`.
fn read_plain(file: &mut RawFile, pred: u32, dialect: Dialect) {
    let text = file.text.clone();
    let bytes = text.as_bytes();
    let mut pos = 0usize;
    let mut first = true;
    while pos < bytes.len() {
        let end = memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i);
        let mut line_end = end;
        if line_end > pos && bytes[line_end - 1] == b'\r' {
            line_end -= 1;
        }
        let line_start = pos;
        pos = end + 1;
        if line_end == line_start {
            continue;
        }
        if first && dialect.headers {
            first = false;
            continue;
        }
        first = false;
        let start = file.cells.len();
        let mut field = line_start;
        loop {
            let stop =
                memchr(dialect.delimiter, &bytes[field..line_end]).map_or(line_end, |i| field + i);
            file.cells.push(RawCell::Text {
                start: field as u32,
                len: (stop - field) as u32,
            });
            if stop == line_end {
                break;
            }
            field = stop + 1;
        }
        file.records.push(RawRecord {
            pred,
            start,
            arity: (file.cells.len() - start) as u32,
            at: line_start,
            args_at: line_start,
            confidence: 1.0,
            provenance: 0,
            edge_idx: None,
        });
    }
}

/// RFC 4180 records through the `csv` crate.
fn read_quoted(file: &mut RawFile, pred: u32, dialect: Dialect) -> Result<()> {
    let text = file.text.clone();
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(dialect.delimiter)
        .quoting(true)
        .has_headers(dialect.headers)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut buf = String::with_capacity(text.len());
    let mut record = csv::ByteRecord::new();
    let mut problems = Diagnostics::default();
    // The reader reports where it started reading a record, which may be on a
    // blank line it then skipped.
    let skip_blank = |byte: u64| {
        let mut at = byte as usize;
        while matches!(text.as_bytes().get(at), Some(b'\n' | b'\r')) {
            at += 1;
        }
        at
    };
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let at = e.position().map_or(0, |p| skip_blank(p.byte()));
                let what = match e.kind() {
                    csv::ErrorKind::Utf8 { err, .. } => format!("invalid UTF-8 ({err})"),
                    _ => e.to_string(),
                };
                problems.push_with(|| {
                    let lines = SourceFile::new(file.name.to_string(), text.clone());
                    let (line, _) = lines.line_col(at as u32);
                    bad_input(
                        located(&file.name, Some(&lines), line, 1),
                        format!("unreadable record: {what}"),
                    )
                });
                continue;
            }
        }
        let at = record.position().map_or(0, |p| skip_blank(p.byte()));
        let start = file.cells.len();
        for field in record.iter() {
            // The text is UTF-8 and quotes and delimiters are ASCII, so a field is.
            let field = std::str::from_utf8(field).unwrap_or("");
            let s = buf.len();
            buf.push_str(field);
            file.cells.push(RawCell::Text {
                start: s as u32,
                len: field.len() as u32,
            });
        }
        file.records.push(RawRecord {
            pred,
            start,
            arity: (file.cells.len() - start) as u32,
            at,
            args_at: at,
            confidence: 1.0,
            provenance: 0,
            edge_idx: None,
        });
    }
    file.cell_text = buf.into();
    problems.finish(())
}

/// The byte offset of field `i` of the record starting at `at` (for diagnostics).
pub(crate) fn field_offset(text: &str, at: usize, i: usize, dialect: Dialect) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut pos = at;
    let mut in_quotes = false;
    let mut field = 0;
    while pos < bytes.len() {
        if field == i {
            return Some(pos);
        }
        let b = bytes[pos];
        if dialect.quoting && b == b'"' {
            in_quotes = !in_quotes;
        } else if !in_quotes && b == b'\n' {
            return None;
        } else if !in_quotes && b == dialect.delimiter {
            field += 1;
        }
        pos += 1;
    }
    (field == i).then_some(pos)
}

/// The first `needle` in `hay`.
#[inline]
pub(crate) fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(file: &RawFile, k: usize) -> Vec<String> {
        let r = &file.records[k];
        file.cells_of(r)
            .iter()
            .map(|c| match *c {
                RawCell::Text { start, len } => file.text_of(start, len).to_string(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    fn line(file: &RawFile, k: usize) -> usize {
        SourceFile::new("f", file.text.clone())
            .line_col(file.records[k].at as u32)
            .0
    }

    #[test]
    fn csv_quotes_and_tsv_does_not() {
        let csv = parse_untyped("e.csv", 0, "1,\"a,b\"\n2,c\n".into(), Dialect::csv()).unwrap();
        assert_eq!(cells(&csv, 0), ["1", "a,b"]);
        assert_eq!(line(&csv, 1), 2);
        let tsv = parse_untyped(
            "e.facts",
            0,
            "1\t\"a\"\n\n3\tx y\r\n".into(),
            Dialect::tsv(),
        )
        .unwrap();
        assert_eq!(cells(&tsv, 0), ["1", "\"a\""]);
        assert_eq!(cells(&tsv, 1), ["3", "x y"]);
        assert_eq!(line(&tsv, 1), 3);
        assert_eq!(
            field_offset(&tsv.text, tsv.records[1].at, 1, Dialect::tsv()),
            Some(9)
        );
    }

    #[test]
    fn headers_are_skipped_when_asked() {
        for d in [Dialect::csv(), Dialect::tsv()] {
            let d = Dialect { headers: true, ..d };
            let sep = d.delimiter as char;
            let text = format!("src{sep}dst\n1{sep}2\n");
            let rows = parse_untyped("e", 0, text.into(), d).unwrap();
            assert_eq!(rows.records.len(), 1);
            assert_eq!(cells(&rows, 0), ["1", "2"]);
            assert_eq!(line(&rows, 0), 2);
        }
    }

    #[test]
    fn ragged_rows_are_kept_for_resolve_to_report() {
        let rows = parse_untyped("e.csv", 0, "1,2\n3\n".into(), Dialect::csv()).unwrap();
        assert_eq!(rows.records[1].arity, 1);
        let rows = parse_untyped("e.tsv", 0, "1\t\t2\n".into(), Dialect::tsv()).unwrap();
        assert_eq!(cells(&rows, 0), ["1", "", "2"]);
    }
}
