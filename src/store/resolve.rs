//! Phase 2 of loading: type raw records against the compiled program, add the
//! program's own facts and its `.input` files, and number the evidence.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diag::{Diagnostic, ErrorCode, Location, Result, SourceFile, Span};
use crate::ir::{IoOptions, Program, RelId, Relation};
use crate::store::bulk::Format;
use crate::store::delimited::Dialect;
use crate::store::facts::{Row, Table};
use crate::store::raw::{
    Origin, Problems, RawFact, RawInputs, RawValue, Source, bad_input, file_order, file_provenance,
    in_file_order_by, located, read_file,
};
use crate::store::{InputFact, InputFacts, Provenance};
use crate::value::{ColumnType, Value};

/// Diagnostics of a load with the text of the file each points into, for its caret
/// snippet (made only for the diagnostics shown).
type Found = Vec<(Diagnostic, Option<Arc<SourceFile>>)>;

impl RawInputs {
    /// Type every record against `program` and return all input facts: the program's
    /// own facts (source `"program"`), then the rows of its `.input` files, then the
    /// records read into `self`, in the order they were read.
    ///
    /// Every fact comes back with `provenance.edge_idx` set: records that gave one
    /// keep it; the others are numbered in that order, from one past the largest
    /// explicit index. All-or-nothing: any unknown relation, wrong arity, value of the
    /// wrong type for its column, or one edge index given to two different facts makes
    /// this return every problem found (as `bad_input`, naming file, line and column)
    /// and no facts.
    ///
    /// Values convert as the column type says: integers into `float` columns,
    /// non-negative integers into `unsigned`; CSV cells are parsed per column type.
    /// `.input` files are read here, after compilation, so they give no type hints:
    /// declare `.input` relations (as Soufflé requires), or their columns default to
    /// `symbol`.
    ///
    /// Every problem is reported in one pass, in file and line order: a record's bad
    /// value and another record's reused edge index together. Where the values of one
    /// column of an undeclared relation disagree (numbers beside strings), one
    /// diagnostic points at the first value that differs from the column's first
    /// value, instead of one per value of the other kind.
    pub fn resolve(&self, program: &Program) -> Result<Vec<InputFact>> {
        Ok(self.resolve_facts(program)?.to_vec())
    }

    /// [`resolve`](Self::resolve) into columns. Files the fast path read are typed
    /// straight from their text; when anything does not fit (or a file needed the
    /// careful path), the records that do not fit are reported by the careful path,
    /// which reads every input again with positions.
    pub(crate) fn resolve_facts(&self, program: &Program) -> Result<InputFacts> {
        let (inputs, found) = self.input_files(program);
        if found.is_empty()
            && !crate::store::bulk::careful_only()
            && let Some(mut facts) = self.resolve_fast(program, &inputs)
        {
            facts.numbered = true;
            return Ok(facts);
        }
        let facts = self.resolve_careful(program, &inputs, found)?;
        let mut facts = InputFacts::from_facts(program, &facts)?;
        facts.numbered = true;
        Ok(facts)
    }

    /// The rows of the program's `.input` files, and the problems of reading them.
    fn input_files(&self, program: &Program) -> (Vec<Source>, Found) {
        let mut found = Found::new();
        let supplied: BTreeSet<&str> = self
            .sources
            .iter()
            .flat_map(Source::relation_names)
            .collect();
        let mut sources = Vec::new();
        let mut budget = (self.input_left, self.max_input);
        for rel in &program.relations {
            let Some(io) = &rel.input else { continue };
            match read_input(
                program,
                rel,
                io,
                self.fact_dir.as_deref(),
                &supplied,
                &mut budget,
            ) {
                Ok(Some(s)) => sources.push(s),
                Ok(None) => {}
                Err(e) => found.extend(e.diagnostics.into_iter().map(|d| (d, None))),
            }
        }
        (sources, found)
    }

    /// The fast path: every input typed straight into columns, or `None` when
    /// anything does not fit (the careful path then says what).
    fn resolve_fast(&self, program: &Program, inputs: &[Source]) -> Option<InputFacts> {
        let mut out = InputFacts::new(program);
        let InputFacts {
            table,
            symbols,
            types,
            ..
        } = &mut out;
        for (k, sf) in program.facts.iter().enumerate() {
            table
                .push_fact(program, symbols, &program_fact(program, sf), k)
                .ok()?;
        }
        let ids: HashMap<&str, RelId> = program
            .relations
            .iter()
            .enumerate()
            .map(|(i, r)| (r.name.as_str(), i as RelId))
            .collect();
        let lookup = |name: &str| ids.get(name).copied();
        // Room for every cell at once: no growth by doubling.
        let mut cells = 0;
        for source in inputs.iter().chain(&self.sources) {
            if let Source::Bulk(b) = source {
                cells += b.rels.iter().map(|r| r.rows * r.arity).sum::<usize>();
            }
        }
        table.cells.reserve_exact(cells);
        for source in inputs.iter().chain(&self.sources) {
            match source {
                Source::Bulk(b) => {
                    let file = table.provenance(match b.format {
                        Format::Evidence => Provenance {
                            source: "hyperedge".to_string(),
                            ..Provenance::default()
                        },
                        _ => Provenance {
                            source: "facts".to_string(),
                            table: Some(b.name.to_string()),
                            ..Provenance::default()
                        },
                    });
                    b.encode(&lookup, types, table, symbols, file).ok()?;
                }
                Source::Records(records) => {
                    for raw in records {
                        let fact = type_record(program, &ids, raw).ok()?;
                        let k = table.rows.len();
                        table.push_fact(program, symbols, &fact, k).ok()?;
                    }
                }
            }
        }
        number_rows(table, types)?;
        Some(out)
    }

    /// The careful path: every record typed with its position, every problem found.
    fn resolve_careful(
        &self,
        program: &Program,
        inputs: &[Source],
        mut found: Found,
    ) -> Result<Vec<InputFact>> {
        let mut out: Vec<(InputFact, Option<&Origin>)> = Vec::new();
        for sf in &program.facts {
            out.push((program_fact(program, sf), None));
        }
        let mut unreadable = Vec::new();
        let read: Vec<std::borrow::Cow<'_, [RawFact]>> = inputs
            .iter()
            .chain(&self.sources)
            .map(|s| s.records(&mut unreadable))
            .collect();
        found.extend(unreadable.into_iter().map(|d| (d, None)));

        let ids: HashMap<&str, RelId> = program
            .relations
            .iter()
            .enumerate()
            .map(|(i, r)| (r.name.as_str(), i as RelId))
            .collect();
        let records: Vec<&RawFact> = read.iter().flat_map(|r| r.iter()).collect();
        // Type errors of a column, by (relation, column): the record and its diagnostic.
        let mut column_errors: BTreeMap<(RelId, usize), Found> = BTreeMap::new();
        // Records that could not be typed but name an edge index: it may still be
        // another fact's.
        let mut untyped_with_index: Vec<&RawFact> = Vec::new();
        for raw in &records {
            let result = type_record(program, &ids, raw);
            if result.is_err() && raw.provenance.edge_idx.is_some() {
                untyped_with_index.push(raw);
            }
            let src = || raw.origin.source.clone();
            match result {
                Ok(fact) => out.push((fact, Some(&raw.origin))),
                Err(RecordError::Column(rel, col, d)) => column_errors
                    .entry((rel, col))
                    .or_default()
                    .push((*d, src())),
                Err(RecordError::Record(d)) => found.push((*d, src())),
            }
        }
        reused_by_untyped(&out, &untyped_with_index, program, &mut found);
        for ((rel, col), diags) in column_errors {
            match mixed_column(program, rel, col, &records) {
                Some(d) => found.push(d),
                None => found.extend(diags),
            }
        }
        let (mut facts, origins): (Vec<InputFact>, Vec<Option<&Origin>>) = out.into_iter().unzip();
        number_evidence(&mut facts, &origins, program, &mut found);

        let mut files: Vec<&str> = program
            .sources
            .files()
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        files.extend(file_order(&records));
        let mut problems = Problems::default();
        for (mut d, src) in in_file_order_by(found, &files, |(d, _)| d.location.as_ref()) {
            if !problems.is_full()
                && let (Some(src), Some(l)) = (&src, &d.location)
            {
                d.location = Some(located(&l.file, Some(src), l.line, l.col));
            }
            problems.push(d);
        }
        problems.finish(facts)
    }
}

/// A fact written in the program, as an input fact (source `"program"`).
fn program_fact(program: &Program, sf: &crate::ir::SourceFact) -> InputFact {
    let loc = locate(program, sf.span);
    let origin = Origin {
        file: loc.as_ref().map_or("", |l| l.file.as_str()).into(),
        source: None,
        line: loc.as_ref().map_or(0, |l| l.line),
        col: loc.as_ref().map_or(0, |l| l.col),
        arg_cols: Vec::new(),
        object_at: None,
    };
    InputFact {
        rel: sf.rel,
        args: sf.args.clone(),
        confidence: 1.0,
        provenance: file_provenance("program", &origin),
    }
}

/// Number the rows of a fast load as [`numbering`](crate::store::numbering) does;
/// `None` when an explicit index is taken twice (or none is left): the careful path
/// then says where.
fn number_rows(table: &mut Table, types: &[Vec<ColumnType>]) -> Option<()> {
    let mut owners: rustc_hash::FxHashMap<u64, Row> = rustc_hash::FxHashMap::default();
    let mut max: Option<u64> = None;
    let cells = |r: &Row| table.cells_of(r, types[r.rel as usize].len());
    // (Rows given no index, a whole file of them, are numbered by runs below.)
    let given = if table.rows.any_edge() {
        table.rows.len()
    } else {
        0
    };
    for row in table.rows.iter().take(given) {
        let Some(idx) = row.edge_idx else { continue };
        max = Some(max.map_or(idx, |m| m.max(idx)));
        match owners.entry(idx) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(row);
            }
            std::collections::hash_map::Entry::Occupied(e) => {
                let first = e.get();
                if first.rel != row.rel || !cells(first).eq(cells(&row)) {
                    return None;
                }
            }
        }
    }
    let next = max.map_or(Some(0), |m| m.checked_add(1));
    table.rows.number(next).then_some(())
}

/// A record that could not be typed but names an explicit edge index that a typed
/// fact (or an earlier such record) already has: reported too, so that one pass shows
/// both problems of the line.
fn reused_by_untyped(
    typed: &[(InputFact, Option<&Origin>)],
    untyped: &[&RawFact],
    program: &Program,
    problems: &mut Found,
) {
    let mut owners: HashMap<u64, (String, String, usize)> = HashMap::new();
    for (f, origin) in typed {
        if let (Some(idx), Some(o)) = (f.provenance.edge_idx, origin) {
            owners.entry(idx).or_insert_with(|| {
                (
                    crate::value::fact_text(&program.relation(f.rel).name, &f.args),
                    o.file.to_string(),
                    o.line,
                )
            });
        }
    }
    for raw in untyped {
        let Some(idx) = raw.provenance.edge_idx else {
            continue;
        };
        match owners.get(&idx) {
            Some((fact, file, line)) => problems.push((
                bad_input(
                    raw.origin.member_location(&["provenance", "edge_idx"]),
                    format!("edge_idx {idx} is already used by {fact} at {file}:{line}"),
                )
                .with_help(crate::store::numbering::CLASH_HELP),
                raw.origin.source.clone(),
            )),
            None => {
                owners.insert(
                    idx,
                    (
                        format!("the record of `{}`", raw.predicate),
                        raw.origin.file.to_string(),
                        raw.origin.line,
                    ),
                );
            }
        }
    }
}

/// Why a record could not be typed: a value that does not fit its column (grouped by
/// column, to report a column whose values disagree once), or anything else.
enum RecordError {
    /// The value of column `.1` of relation `.0`.
    Column(RelId, usize, Box<Diagnostic>),
    /// An unknown relation, a wrong arity.
    Record(Box<Diagnostic>),
}

/// One diagnostic for a column of an undeclared relation whose values disagree (some
/// numbers, some strings): at the first value of another kind than the column's first
/// value. `None` when the relation is declared or the values agree (then each bad
/// value is the user's error on its own).
fn mixed_column(
    program: &Program,
    rel: RelId,
    col: usize,
    records: &[&RawFact],
) -> Option<(Diagnostic, Option<Arc<SourceFile>>)> {
    let relation = program.relation(rel);
    if !relation.columns.get(col)?.name.starts_with('_') {
        return None;
    }
    let kind = |v: &RawValue| match v {
        RawValue::Json(serde_json::Value::String(_)) => "a string",
        RawValue::Json(_) => "a number",
        RawValue::Text(s) if s.trim().parse::<f64>().is_ok() => "a number",
        RawValue::Text(_) => "a string",
    };
    let mut of_rel = records
        .iter()
        .filter(|r| r.predicate == relation.name && r.args.len() == relation.arity());
    let first = of_rel.next()?;
    let first_kind = kind(&first.args[col]);
    let other = of_rel.find(|r| kind(&r.args[col]) != first_kind)?;
    let d = bad_input(
            other.origin.arg_location(col),
            format!(
                "column {} of `{}` holds {first_kind} at {}:{} and {} here; a column holds values of one type",
                col + 1,
                relation.name,
                first.origin.file,
                first.origin.line,
                kind(&other.args[col])
            ),
        )
        .with_help(format!(
            "`{}` is not declared, so its columns take their types from the data: make the values agree, or declare it (`.decl {}(…)`) with the type you mean",
            relation.name, relation.name
        ));
    Some((d, other.origin.source.clone()))
}

/// Number the facts (see [`numbering`](crate::store::numbering)), reporting each
/// problem at the record it concerns (a reused index: at its `edge_idx` value).
fn number_evidence(
    facts: &mut [InputFact],
    origins: &[Option<&Origin>],
    program: &Program,
    problems: &mut Found,
) {
    for p in crate::store::numbering::assign(program, facts, &()) {
        let where_first = p
            .first
            .and_then(|j| origins[j])
            .map(|o| format!(" at {}:{}", o.file, o.line))
            .unwrap_or_default();
        let mut d = Diagnostic::new(ErrorCode::BadInput, format!("{}{where_first}", p.message));
        let clash = p.message.starts_with("edge_idx");
        if clash {
            d = d.with_help(crate::store::numbering::CLASH_HELP);
        }
        let src = origins[p.at].and_then(|o| o.source.clone());
        problems.push((
            match origins[p.at] {
                Some(o) if clash => d.at(o.member_location(&["provenance", "edge_idx"])),
                Some(o) => d.at(o.location()),
                None => d,
            },
            src,
        ));
    }
}

/// Type one record: its relation, arity, and each cell per column type.
fn type_record(
    program: &Program,
    ids: &HashMap<&str, RelId>,
    raw: &RawFact,
) -> Result<InputFact, RecordError> {
    let Some(&rel) = ids.get(raw.predicate.as_str()) else {
        let mut d = bad_input(
            raw.origin.member_location(&["predicate"]),
            format!("unknown relation `{}`", raw.predicate),
        );
        d = match crate::diag::did_you_mean(
            &raw.predicate,
            program.relations.iter().map(|r| r.name.as_str()),
        ) {
            Some(name) => d.with_help(format!("did you mean `{name}`?")),
            None => d.with_help(format!(
                "the program neither declares nor uses `{}`; add `.decl {}(…)` or fix the name",
                raw.predicate, raw.predicate
            )),
        };
        return Err(RecordError::Record(Box::new(d)));
    };
    let relation = program.relation(rel);
    if raw.args.len() != relation.arity() {
        return Err(RecordError::Record(Box::new(bad_input(
            raw.origin.member_location(&["args"]),
            format!(
                "`{}` has {} column{}, this record has {} value{}",
                relation.name,
                relation.arity(),
                plural(relation.arity()),
                raw.args.len(),
                plural(raw.args.len())
            ),
        ))));
    }
    let mut args = Vec::with_capacity(raw.args.len());
    for (i, (cell, column)) in raw.args.iter().zip(&relation.columns).enumerate() {
        match convert(cell, column.ty) {
            Some(v) => args.push(v),
            None => {
                // Undeclared relations' columns are named `_0`, `_1`, …: no name to show.
                let name = if column.name.starts_with('_') {
                    String::new()
                } else {
                    format!(" (`{}`)", column.name)
                };
                return Err(RecordError::Column(
                    rel as RelId,
                    i,
                    Box::new(bad_input(
                        raw.origin.arg_location(i),
                        format!(
                            "column {}{name} of `{}` is {}, but the value is {}",
                            i + 1,
                            relation.name,
                            article(column.ty),
                            describe(cell)
                        ),
                    )),
                ));
            }
        }
    }
    Ok(InputFact {
        rel: rel as RelId,
        args,
        confidence: raw.confidence,
        provenance: raw.provenance.clone(),
    })
}

/// A cell as a value of `ty`, or `None` when it is not one.
fn convert(cell: &RawValue, ty: ColumnType) -> Option<Value> {
    match (cell, ty) {
        (RawValue::Json(serde_json::Value::String(s)), ColumnType::Symbol) => {
            Some(Value::Symbol(s.clone()))
        }
        (RawValue::Json(serde_json::Value::Number(n)), ColumnType::Number) => {
            n.as_i64().map(Value::Number)
        }
        (RawValue::Json(serde_json::Value::Number(n)), ColumnType::Unsigned) => {
            n.as_u64().map(Value::Unsigned)
        }
        (RawValue::Json(serde_json::Value::Number(n)), ColumnType::Float) => {
            n.as_f64().map(Value::Float)
        }
        (RawValue::Json(_), _) => None,
        (RawValue::Text(s), ColumnType::Symbol) => Some(Value::Symbol(s.clone())),
        (RawValue::Text(s), ColumnType::Number) => s.trim().parse().ok().map(Value::Number),
        (RawValue::Text(s), ColumnType::Unsigned) => s.trim().parse().ok().map(Value::Unsigned),
        (RawValue::Text(s), ColumnType::Float) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Value::Float),
    }
}

/// A cell for a message: `"x"` (a string), `1.5` (a number).
fn describe(cell: &RawValue) -> String {
    match cell {
        RawValue::Json(serde_json::Value::String(s)) => format!("the string {s:?}"),
        RawValue::Json(v) => format!("the number {v}"),
        RawValue::Text(s) => format!("{s:?}"),
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

/// The rows of one `.input` relation's file. A missing file is an error unless the
/// relation's facts were supplied another way (fact files or evidence).
fn read_input(
    program: &Program,
    rel: &Relation,
    io: &IoOptions,
    fact_dir: Option<&Path>,
    supplied: &BTreeSet<&str>,
    (left, limit): &mut (u64, u64),
) -> Result<Option<Source>> {
    let (path, dialect) = input_file(program, rel, io, fact_dir)?;
    if !path.exists() && supplied.contains(rel.name.as_str()) {
        return Ok(None);
    }
    let text = read_file(&path, *left, *limit).map_err(|e| {
        let d = e.primary().clone().with_help(format!(
            "`.input {}` reads this file; put it there, pass --fact-dir DIR, or give the facts with --facts/--evidence",
            rel.name
        ));
        match locate(program, io.span) {
            Some(l) => d.at(l),
            None => d,
        }
    })?;
    *left -= text.len() as u64;
    let format = Format::Delimited {
        relation: rel.name.clone(),
        dialect,
    };
    Source::read_owned(&path.display().to_string(), text, format).map(Some)
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
            pack: Default::default(),
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
        let facts = raw.resolve(&program()).unwrap();
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
        let facts = raw.resolve(&program()).unwrap();
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
                15,
                "unknown relation `edgee`",
            ),
            (
                "{\"predicate\": \"edge\", \"args\": [1, 2, 3]}",
                31,
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

    /// Types, unknown relations and reused edge indexes of one load are reported
    /// together, in line order, each at its value.
    #[test]
    fn every_problem_of_a_load_at_once() {
        let raw = evidence(concat!(
            "{\"predicate\": \"edge\", \"args\": [1, 2], \"provenance\": {\"edge_idx\": 1}}\n",
            "{\"predicate\": \"edge\", \"args\": [1, \"x\"]}\n",
            "{\"predicate\": \"edge\", \"args\": [2, 3], \"provenance\": {\"edge_idx\": 1}}\n",
            "{\"predicate\": \"edgee\", \"args\": [1, 2]}\n",
        ));
        let err = raw.resolve(&program()).unwrap_err();
        let at: Vec<(usize, usize)> = err
            .diagnostics
            .iter()
            .map(|d| d.location.as_ref().map(|l| (l.line, l.col)).unwrap())
            .collect();
        assert_eq!(at, [(2, 35), (3, 66), (4, 15)], "{err}");
        assert!(
            err.diagnostics[1]
                .message
                .contains("edge_idx 1 is already used")
        );
    }

    /// An undeclared relation whose values disagree: one diagnostic, at the first
    /// value of another kind than the column's first.
    #[test]
    fn a_mixed_column_is_reported_once_at_its_cause() {
        let program = Program::from_source("p.dl", "bar(x) :- foo(x).\n").unwrap();
        let raw = evidence(concat!(
            "{\"predicate\": \"foo\", \"args\": [1]}\n",
            "{\"predicate\": \"foo\", \"args\": [2]}\n",
            "{\"predicate\": \"foo\", \"args\": [\"a\"]}\n",
        ));
        let err = raw.resolve(&program).unwrap_err();
        assert_eq!(err.diagnostics.len(), 1, "{err}");
        let d = err.primary();
        assert_eq!(d.location.as_ref().map(|l| l.line), Some(3));
        assert!(
            d.message
                .contains("holds a number at e.jsonl:1 and a string here"),
            "{d}"
        );
    }

    #[test]
    fn delimited_cells_parse_per_column_type() {
        let mut raw = RawInputs::new();
        raw.add_delimited("label.csv", "label", "1,x\n2, y \n", Dialect::csv())
            .unwrap();
        raw.add_delimited("count.tsv", "count", "7\n", Dialect::tsv())
            .unwrap();
        let facts = raw.resolve(&program()).unwrap();
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
