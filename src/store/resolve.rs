//! Phase 2 of loading: type raw records against the compiled program, add the
//! program's own facts and its `.input` files, and number the evidence.
//!
//! Typing writes each cell straight into the evaluator's encoding (see
//! [`InputFacts`]); problems are collected lazily and capped, so a file with a
//! hundred thousand bad records costs no more to report than one with twenty.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::diag::{Diagnostic, Diagnostics, ErrorCode, Location, Result, Span, did_you_mean};
use crate::ir::{IoOptions, Program, RelId, Relation};
use crate::store::delimited::{self, Dialect};
use crate::store::facts::{InputFacts, Row, Table};
use crate::store::raw::{Positions, RawCell, RawFile, RawInputs, RawRecord, bad_input, read_text};
use crate::value::{ColumnType, Value, cell};

/// Where the rows of one file went: its first row in the output table.
struct Segment<'a> {
    first_row: usize,
    file: &'a RawFile,
}

impl RawInputs {
    /// Type every record against `program` and return all input facts: the program's
    /// own facts (source `"program"`), then the rows of its `.input` files, then the
    /// records read into `self`, in the order they were read.
    ///
    /// Every fact comes back with its edge index set: records that gave one keep it;
    /// the others are numbered in that order, from one past the largest explicit
    /// index. All-or-nothing: any unknown relation, wrong arity, value of the wrong
    /// type for its column, or one edge index given to two different facts makes this
    /// return the problems found (as `bad_input`, naming file, line and column; the
    /// first [`Diagnostics::LIMIT`], then how many more) and no facts.
    ///
    /// Values convert as [`ColumnType::coerce`] says: integers into `float` columns
    /// when exact, non-negative integers into `unsigned`; CSV cells are parsed per
    /// column type ([`ColumnType::parse`]). `.input` files are read here, after
    /// compilation, so they give no type hints: declare `.input` relations (as
    /// Soufflé requires), or their columns default to `symbol`.
    pub fn resolve(&self, program: &Program) -> Result<InputFacts> {
        let mut out = InputFacts::new(program);
        out.symbols = self.symbols.clone();
        let mut problems = Diagnostics::default();

        for sf in &program.facts {
            let provenance = crate::store::raw::program_provenance(program, sf.span);
            let fact = crate::store::InputFact {
                rel: sf.rel,
                args: sf.args.clone(),
                confidence: 1.0,
                provenance,
            };
            let k = out.len();
            if let Err(e) = out.table.push_fact(program, &mut out.symbols, &fact, k) {
                e.diagnostics.into_iter().for_each(|d| problems.push(d));
            }
        }

        let supplied: BTreeSet<&str> = self
            .files
            .iter()
            .flat_map(|f| {
                f.records
                    .iter()
                    .map(|r| self.preds[r.pred as usize].as_str())
            })
            .collect();
        let mut inputs = RawInputs::new();
        for rel in &program.relations {
            let Some(io) = &rel.input else { continue };
            let pred = inputs.pred(&rel.name);
            match read_input(program, rel, io, self.fact_dir.as_deref(), &supplied, pred) {
                Ok(Some(file)) => inputs.files.push(file),
                Ok(None) => {}
                Err(e) => e.diagnostics.into_iter().for_each(|d| problems.push(d)),
            }
        }

        let mut segments = Vec::new();
        type_files(&inputs, program, &mut out, &mut problems, &mut segments);
        type_files(self, program, &mut out, &mut problems, &mut segments);
        if !problems.is_empty() {
            return problems.finish(out);
        }
        number_evidence(&mut out, program, &segments, &mut problems);
        problems.finish(out)
    }
}

/// Type the records of every file of `raw` into `out`.
fn type_files<'a>(
    raw: &'a RawInputs,
    program: &Program,
    out: &mut InputFacts,
    problems: &mut Diagnostics,
    segments: &mut Vec<Segment<'a>>,
) {
    let rel_of: Vec<Option<RelId>> = {
        let ids: HashMap<&str, RelId> = program
            .relations
            .iter()
            .enumerate()
            .map(|(i, r)| (r.name.as_str(), i as RelId))
            .collect();
        raw.preds
            .iter()
            .map(|p| ids.get(p.as_str()).copied())
            .collect()
    };
    for file in &raw.files {
        segments.push(Segment {
            first_row: out.table.rows.len(),
            file,
        });
        let base = out.table.provenances.len() as u32;
        out.table
            .provenances
            .extend(file.provenances.iter().cloned());
        let mut pos = Positions::new(file);
        for r in &file.records {
            let Some(rel) = rel_of[r.pred as usize] else {
                let name = &raw.preds[r.pred as usize];
                problems.push_with(|| unknown_relation(program, name, pos.record(r)));
                continue;
            };
            let relation = program.relation(rel);
            if r.arity as usize != relation.arity() {
                problems.push_with(|| {
                    bad_input(
                        pos.record(r),
                        format!(
                            "`{}` has {} column{}, this record has {} value{}",
                            relation.name,
                            relation.arity(),
                            plural(relation.arity()),
                            r.arity,
                            plural(r.arity as usize)
                        ),
                    )
                });
                continue;
            }
            let start = out.table.cells.len();
            let mut ok = true;
            for (i, (&c, column)) in file.cells_of(r).iter().zip(&relation.columns).enumerate() {
                match convert(c, column.ty, file, &mut out.symbols) {
                    Some(x) => out.table.cells.push(x),
                    None => {
                        problems.push_with(|| type_error(&mut pos, r, i, relation, c, file, raw));
                        ok = false;
                        break;
                    }
                }
            }
            if !ok {
                out.table.cells.truncate(start);
                continue;
            }
            out.table.rows.push(Row {
                rel,
                start,
                confidence: r.confidence,
                provenance: base + r.provenance,
                edge_idx: r.edge_idx,
            });
        }
    }
}

fn unknown_relation(program: &Program, name: &str, at: Location) -> Diagnostic {
    let d = bad_input(at, format!("unknown relation `{name}`"));
    match did_you_mean(name, program.relations.iter().map(|r| r.name.as_str())) {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d.with_help(format!(
            "the program neither declares nor uses `{name}`; add `.decl {name}(…)` or fix the name"
        )),
    }
}

fn type_error(
    pos: &mut Positions<'_>,
    r: &RawRecord,
    i: usize,
    relation: &Relation,
    c: RawCell,
    file: &RawFile,
    raw: &RawInputs,
) -> Diagnostic {
    let column = &relation.columns[i];
    let shown = match c {
        RawCell::Int(v) => format!("the number {v}"),
        RawCell::Big(v) => format!("the number {v}"),
        RawCell::Float(v) => format!("the number {}", serde_json::Value::from(v)),
        RawCell::Str(k) => format!("the string {:?}", cell::symbol(u64::from(k), &raw.symbols)),
        RawCell::Text { start, len } => format!("{:?}", file.text_of(start, len)),
    };
    bad_input(
        pos.arg(r, i),
        format!(
            "column {} (`{}`) of `{}` is {}, but the value is {}",
            i + 1,
            column.name,
            relation.name,
            article(column.ty),
            shown
        ),
    )
}

/// A cell as an encoded value of `ty`, or `None` when it is not one.
#[inline]
fn convert(c: RawCell, ty: ColumnType, file: &RawFile, symbols: &mut lasso::Rodeo) -> Option<u64> {
    match c {
        RawCell::Int(i) => cell::encode_scalar(&Value::Number(i), ty),
        RawCell::Big(u) => cell::encode_scalar(&Value::Unsigned(u), ty),
        RawCell::Float(x) => (ty == ColumnType::Float).then(|| x.to_bits()),
        RawCell::Str(k) => (ty == ColumnType::Symbol).then_some(u64::from(k)),
        RawCell::Text { start, len } => {
            let text = file.text_of(start, len);
            if ty == ColumnType::Symbol {
                return cell::intern(symbols, text);
            }
            parse_cell(text, ty)
        }
    }
}

/// A text cell as an encoded value of a numeric type (see [`ColumnType::parse`]).
#[inline]
fn parse_cell(text: &str, ty: ColumnType) -> Option<u64> {
    let t = text.trim();
    if let Ok(i) = t.parse::<i64>() {
        return cell::encode_scalar(&Value::Number(i), ty);
    }
    match ty.parse(t)? {
        Value::Number(i) => Some(i as u64),
        Value::Unsigned(u) => Some(u),
        Value::Float(x) => Some(x.to_bits()),
        Value::Symbol(_) => None,
    }
}

/// Give every fact without an explicit edge index the next one after the largest
/// explicit index; report an index given to two different facts.
fn number_evidence(
    out: &mut InputFacts,
    program: &Program,
    segments: &[Segment<'_>],
    problems: &mut Diagnostics,
) {
    let table: &mut Table = &mut out.table;
    let arity = |rel: RelId| program.relation(rel).arity();
    // The file and record of a row, when it came from a file.
    let origin = |row: usize| -> Option<(&RawFile, &RawRecord)> {
        let k = segments.partition_point(|s| s.first_row <= row);
        let seg = segments.get(k.checked_sub(1)?)?;
        let rec = seg.file.records.get(row - seg.first_row)?;
        Some((seg.file, rec))
    };
    let mut owners: HashMap<u64, usize> = HashMap::new();
    let mut max: Option<u64> = None;
    for i in 0..table.rows.len() {
        let Some(idx) = table.rows[i].edge_idx else {
            continue;
        };
        max = max.max(Some(idx));
        match owners.get(&idx) {
            None => {
                owners.insert(idx, i);
            }
            Some(&j) => {
                let (a, b) = (table.rows[j], table.rows[i]);
                let same =
                    a.rel == b.rel && table.cells(j, arity(a.rel)) == table.cells(i, arity(b.rel));
                if same {
                    continue;
                }
                problems.push_with(|| {
                    let first = table.fact(j, program, &out.symbols);
                    let first_text =
                        crate::value::fact_text(&program.relation(first.rel).name, &first.args);
                    let where_first = origin(j)
                        .map(|(f, r)| format!(" at {}:{}", f.name, Positions::new(f).record(r).line))
                        .unwrap_or_default();
                    let d = Diagnostic::new(
                        ErrorCode::BadInput,
                        format!("edge_idx {idx} is already used by {first_text}{where_first}"),
                    )
                    .with_help(
                        "each stored edge index names one fact; give this one another index or none",
                    );
                    match origin(i) {
                        Some((f, r)) => d.at(Positions::new(f).record(r)),
                        None => d,
                    }
                });
            }
        }
    }
    let mut next = max.map_or(Some(0), |m| m.checked_add(1));
    for i in 0..table.rows.len() {
        if table.rows[i].edge_idx.is_some() {
            continue;
        }
        match next {
            Some(n) => {
                table.rows[i].edge_idx = Some(n);
                next = n.checked_add(1);
            }
            None => {
                problems.push_with(|| {
                    let d = Diagnostic::new(
                        ErrorCode::BadInput,
                        "no edge index left to assign (an explicit edge_idx is at the maximum)",
                    );
                    match origin(i) {
                        Some((f, r)) => d.at(Positions::new(f).record(r)),
                        None => d,
                    }
                });
                return;
            }
        }
    }
}

fn article(ty: ColumnType) -> String {
    match ty {
        ColumnType::Unsigned => "an unsigned".to_string(),
        other => format!("a {other}"),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Where a span of the program is, when the program carries its sources.
fn locate(program: &Program, span: Span) -> Option<Location> {
    ((span.file as usize) < program.sources.files().len()).then(|| program.sources.locate(span))
}

/// A `bad_directive` diagnostic at a `.input` directive.
fn directive_error(program: &Program, io: &IoOptions, message: String) -> Diagnostic {
    let d = Diagnostic::new(ErrorCode::BadDirective, message);
    match locate(program, io.span) {
        Some(l) => d.at(l),
        None => d,
    }
}

/// The file and dialect of a `.input` directive (Soufflé's IO options).
fn input_file(
    program: &Program,
    rel: &Relation,
    io: &IoOptions,
    fact_dir: Option<&Path>,
) -> Result<(PathBuf, Dialect), Diagnostic> {
    let mut dialect = Dialect::tsv();
    let mut filename = format!("{}.facts", rel.name);
    let flag = |key: &str, v: &str| match v.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(directive_error(
            program,
            io,
            format!(
                "`.input {}`: {key} must be true or false, not {v:?}",
                rel.name
            ),
        )),
    };
    for (key, value) in &io.options {
        match key.to_ascii_lowercase().as_str() {
            "io" if value.eq_ignore_ascii_case("file") => {}
            "io" => {
                return Err(directive_error(
                    program,
                    io,
                    format!(
                        "`.input {}`: IO={value} is not supported; only IO=file is",
                        rel.name
                    ),
                ));
            }
            "filename" => filename = value.clone(),
            "delimiter" => {
                let d = match value.as_str() {
                    "\\t" => "\t",
                    other => other,
                };
                match d.as_bytes() {
                    [b] if b.is_ascii() => dialect.delimiter = *b,
                    _ => {
                        return Err(directive_error(
                            program,
                            io,
                            format!(
                                "`.input {}`: the delimiter must be one ASCII character, not {value:?}",
                                rel.name
                            ),
                        ));
                    }
                }
            }
            "headers" => dialect.headers = flag("headers", value)?,
            "rfc4180" => dialect.quoting = flag("rfc4180", value)?,
            other => {
                return Err(directive_error(
                    program,
                    io,
                    format!(
                        "`.input {}`: unsupported option `{other}` (supported: IO, filename, delimiter, headers, rfc4180)",
                        rel.name
                    ),
                ));
            }
        }
    }
    let path = Path::new(&filename);
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else if let Some(dir) = fact_dir {
        dir.join(path)
    } else {
        let program_dir = locate(program, io.span)
            .and_then(|l| Path::new(&l.file).parent().map(Path::to_path_buf))
            .unwrap_or_default();
        program_dir.join(path)
    };
    Ok((path, dialect))
}

/// The rows of one `.input` relation's file. A missing file is no error (and no
/// rows) when the relation's facts were supplied another way (fact files or
/// evidence).
fn read_input(
    program: &Program,
    rel: &Relation,
    io: &IoOptions,
    fact_dir: Option<&Path>,
    supplied: &BTreeSet<&str>,
    pred: u32,
) -> Result<Option<RawFile>> {
    let (path, dialect) = input_file(program, rel, io, fact_dir)?;
    if !path.exists() && supplied.contains(rel.name.as_str()) {
        return Ok(None);
    }
    let text = read_text(&path).map_err(|e| {
        let d = e.primary().clone().with_help(format!(
            "`.input {}` reads this file; put it there, pass --fact-dir DIR, or give the facts with --facts/--evidence",
            rel.name
        ));
        match locate(program, io.span) {
            Some(l) => d.at(l),
            None => d,
        }
    })?;
    delimited::parse_untyped(&path.display().to_string(), pred, text.into(), dialect).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::SourceMap;
    use crate::ir::{Column, SourceFact};

    fn relation(name: &str, cols: &[ColumnType]) -> Relation {
        Relation {
            name: name.to_string(),
            columns: cols
                .iter()
                .enumerate()
                .map(|(i, &ty)| Column {
                    name: format!("c{i}"),
                    ty,
                })
                .collect(),
            input: None,
            output: false,
            outputs: Vec::new(),
            printsize: false,
            auxiliary: false,
            functional: None,
            text: None,
            span: Span::default(),
        }
    }

    /// A program with relations `edge(number, number)`, `label(number, symbol)`,
    /// `weight(float)`, `count(unsigned)`, one fact `edge(0, 1)` written in `p.dl`.
    fn program() -> Program {
        use ColumnType::*;
        let mut sources = SourceMap::new();
        let file = sources.add("dir/p.dl", "edge(0, 1).\n");
        Program {
            relations: vec![
                relation("edge", &[Number, Number]),
                relation("label", &[Number, Symbol]),
                relation("weight", &[Float]),
                relation("count", &[Unsigned]),
            ],
            rules: Vec::new(),
            strata: Vec::new(),
            facts: vec![SourceFact {
                rel: 0,
                args: vec![Value::Number(0), Value::Number(1)],
                span: Span::new(file, 0, 10),
            }],
            sources,
        }
    }

    fn evidence(text: &str) -> RawInputs {
        let mut raw = RawInputs::new();
        raw.add_evidence_jsonl("e.jsonl", text).unwrap();
        raw
    }

    fn error_at(raw: &RawInputs, program: &Program) -> (String, usize, usize, String) {
        let err = raw.resolve(program).unwrap_err();
        let d = err.primary();
        let l = d.location.clone().unwrap();
        assert_eq!(d.code, ErrorCode::BadInput, "{d}");
        (l.file, l.line, l.col, d.message.clone())
    }

    #[test]
    fn program_facts_come_first_and_edges_follow_the_largest_explicit() {
        let raw = evidence(concat!(
            "{\"predicate\": \"edge\", \"args\": [1, 2], \"provenance\": {\"edge_idx\": 10}}\n",
            "{\"predicate\": \"label\", \"args\": [1, \"a\"], \"confidence\": 0.25}\n",
            "{\"predicate\": \"edge\", \"args\": [2, 3], \"provenance\": {\"edge_idx\": 4}}\n",
        ));
        let facts = raw.resolve(&program()).unwrap().to_vec();
        let idx: Vec<u64> = facts
            .iter()
            .map(|f| f.provenance.edge_idx.unwrap())
            .collect();
        assert_eq!(idx, vec![11, 10, 12, 4]);
        assert_eq!(facts[0].provenance.source, "program");
        assert_eq!(facts[0].provenance.table.as_deref(), Some("dir/p.dl"));
        assert_eq!(facts[0].provenance.extra["line"], 1);
        assert_eq!(facts[0].confidence, 1.0);
        assert_eq!(facts[2].rel, 1);
        assert_eq!(
            facts[2].args,
            vec![Value::Number(1), Value::Symbol("a".into())]
        );
        assert_eq!(facts[2].confidence, 0.25);
    }

    #[test]
    fn edges_start_at_zero_without_explicit_ones() {
        let raw = evidence("{\"predicate\": \"weight\", \"args\": [2]}\n");
        let facts = raw.resolve(&program()).unwrap().to_vec();
        let idx: Vec<u64> = facts
            .iter()
            .map(|f| f.provenance.edge_idx.unwrap())
            .collect();
        assert_eq!(idx, vec![0, 1]);
        assert_eq!(facts[1].args, vec![Value::Float(2.0)]);
    }

    #[test]
    fn duplicate_edge_index_for_another_fact_is_rejected() {
        let same = evidence(concat!(
            "{\"predicate\": \"edge\", \"args\": [1, 2], \"provenance\": {\"edge_idx\": 3}}\n",
            "{\"predicate\": \"edge\", \"args\": [1, 2], \"provenance\": {\"edge_idx\": 3}}\n",
        ));
        assert_eq!(same.resolve(&program()).unwrap().len(), 3);
        let clash = evidence(concat!(
            "{\"predicate\": \"edge\", \"args\": [1, 2], \"provenance\": {\"edge_idx\": 3}}\n",
            "{\"predicate\": \"edge\", \"args\": [1, 3], \"provenance\": {\"edge_idx\": 3}}\n",
        ));
        let (file, line, _, msg) = error_at(&clash, &program());
        assert_eq!((file.as_str(), line), ("e.jsonl", 2));
        assert!(msg.contains("edge(1, 2) at e.jsonl:1"), "{msg}");
    }

    #[test]
    fn typing_errors_name_file_line_and_column() {
        let cases = [
            (
                "{\"predicate\": \"edgee\", \"args\": [1, 2]}",
                1,
                "unknown relation `edgee`",
            ),
            (
                "{\"predicate\": \"edge\", \"args\": [1, 2, 3]}",
                1,
                "has 2 columns, this record has 3 values",
            ),
            (
                "{\"predicate\": \"edge\", \"args\": [1, \"x\"]}",
                35,
                "column 2 (`c1`) of `edge` is a number",
            ),
            (
                "{\"predicate\": \"edge\", \"args\": [1.5, 2]}",
                32,
                "the number 1.5",
            ),
            (
                "{\"predicate\": \"label\", \"args\": [1, 2]}",
                36,
                "is a symbol",
            ),
            (
                "{\"predicate\": \"count\", \"args\": [-1]}",
                33,
                "an unsigned",
            ),
        ];
        for (line, col, what) in cases {
            let raw = evidence(&format!(
                "{{\"predicate\": \"weight\", \"args\": [1]}}\n{line}\n"
            ));
            let (file, l, c, msg) = error_at(&raw, &program());
            assert_eq!((file.as_str(), l, c), ("e.jsonl", 2, col), "{msg}");
            assert!(msg.contains(what), "{msg}");
        }
        let raw = evidence("{\"predicate\": \"edgee\", \"args\": [1, 2]}\n");
        let err = raw.resolve(&program()).unwrap_err();
        assert_eq!(err.primary().help.as_deref(), Some("did you mean `edge`?"));
    }

    #[test]
    fn delimited_cells_parse_per_column_type() {
        let mut raw = RawInputs::new();
        raw.add_delimited("label.csv", "label", "1,x\n2, y \n", Dialect::csv())
            .unwrap();
        raw.add_delimited("count.tsv", "count", "7\n", Dialect::tsv())
            .unwrap();
        let facts = raw.resolve(&program()).unwrap().to_vec();
        assert_eq!(facts[2].args[1], Value::Symbol(" y ".into()));
        assert_eq!(facts[3].args, vec![Value::Unsigned(7)]);
        assert_eq!(facts[3].provenance.source, "facts");
        let mut bad = RawInputs::new();
        bad.add_delimited("edge.csv", "edge", "1,2\n3,x\n", Dialect::csv())
            .unwrap();
        let (file, line, col, _) = error_at(&bad, &program());
        assert_eq!((file.as_str(), line, col), ("edge.csv", 2, 3));
    }

    #[test]
    fn every_problem_is_reported_and_nothing_returned() {
        let raw = evidence(concat!(
            "{\"predicate\": \"nope\", \"args\": [1]}\n",
            "{\"predicate\": \"edge\", \"args\": [1, 2]}\n",
            "{\"predicate\": \"edge\", \"args\": [1]}\n",
        ));
        let err = raw.resolve(&program()).unwrap_err();
        let lines: Vec<usize> = err
            .diagnostics
            .iter()
            .map(|d| d.location.as_ref().unwrap().line)
            .collect();
        assert_eq!(lines, vec![1, 3]);
    }

    fn with_input(options: &[(&str, &str)]) -> Program {
        let mut p = program();
        p.relations[0].input = Some(IoOptions {
            options: options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            span: Span::new(0, 0, 4),
        });
        p
    }

    #[test]
    fn input_directive_options() {
        let (path, d) = input_file(
            &with_input(&[]),
            &with_input(&[]).relations[0],
            with_input(&[]).relations[0].input.as_ref().unwrap(),
            None,
        )
        .unwrap();
        assert_eq!(path, Path::new("dir/edge.facts"));
        assert_eq!(d, Dialect::tsv());
        let p = with_input(&[
            ("IO", "file"),
            ("filename", "e.csv"),
            ("delimiter", ","),
            ("headers", "true"),
        ]);
        let io = p.relations[0].input.as_ref().unwrap();
        let (path, d) = input_file(&p, &p.relations[0], io, Some(Path::new("facts"))).unwrap();
        assert_eq!(path, Path::new("facts/e.csv"));
        assert_eq!((d.delimiter, d.headers, d.quoting), (b',', true, false));
        for bad in [
            ("IO", "sqlite"),
            ("delimiter", "::"),
            ("headers", "yes"),
            ("compress", "true"),
        ] {
            let p = with_input(&[bad]);
            let io = p.relations[0].input.as_ref().unwrap();
            let e = input_file(&p, &p.relations[0], io, None).unwrap_err();
            assert_eq!(e.code, ErrorCode::BadDirective, "{bad:?}");
            assert_eq!(e.location.unwrap().file, "dir/p.dl");
        }
    }

    #[test]
    fn missing_input_file_is_an_error_unless_supplied_otherwise() {
        let p = with_input(&[("filename", "/nonexistent/prooflog/edge.facts")]);
        let err = RawInputs::new().resolve(&p).unwrap_err();
        assert_eq!(err.code(), ErrorCode::Io);
        assert!(
            err.primary()
                .help
                .as_deref()
                .unwrap_or("")
                .contains("--fact-dir")
        );
        let raw = evidence("{\"predicate\": \"edge\", \"args\": [5, 6]}\n");
        assert_eq!(raw.resolve(&p).unwrap().len(), 2);
    }
}
