//! Static checks and stratification: syntax tree in, checked [`Program`] out.
//!
//! Architecture invariant: every error a program can have is found here, before any
//! evaluation, so a bad program never half-runs. Checking goes on after an error, so
//! one run reports every problem (parse errors excepted: a file that does not parse is
//! not checked further).
//!
//! Conventions fixed here:
//! - Relations are numbered in order of first appearance (a `.decl` or any use in a
//!   fact or rule), files in the order given.
//! - A clause with several heads or a `;` body becomes one rule per head and
//!   alternative, head-major: `a(x), b(x) :- c(x) ; d(x).` gives `a :- c`, `a :- d`,
//!   `b :- c`, `b :- d`, in that order. A nested `( … ; … )` is expanded the same way,
//!   alternatives in source order (`p :- a, (b ; c), d.` gives `p :- a, b, d` and
//!   `p :- a, c, d`).
//! - A rule without `@name` is named `rule:<head>`; when a head relation has several
//!   rules, every one of them gets `#k`, k the 1-based position among that head's
//!   rules (named ones counted too), e.g. `rule:path#1`, `rule:path#2`.
//! - A bodiless clause with only constant arguments and no annotations is a
//!   [`SourceFact`]; with annotations or computed arguments it is a rule with an empty
//!   body.

mod goal;
mod rules;
mod stratify;
mod types;

pub use goal::{ResolvedGoal, resolve_fact, resolve_goal};

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::diag::{
    Diagnostic, Error, ErrorCode, MAX_DIAGNOSTICS, Result, SourceMap, Span, did_you_mean,
    more_not_shown, not_shown_count,
};
use crate::ir::{self, Column, IoOptions, Program, RelId, Relation, Rule, SourceFact, Variable};
use crate::syntax::ast::{self, Item, Lit};
use crate::syntax::parse_module;
use crate::value::{ColumnType, Value};

use rules::{LExpr, LLit, LRule, LTerm, Lowerer};
use stratify::DepKind;
use types::{Conflict, Kind, Origin, Slot, Types};

/// Column types observed in input data, by relation name (`None` where a column's
/// values did not settle a type). Used only for columns whose type the program text
/// leaves open (undeclared relations whose values never appear in the program); a
/// column nothing determines defaults to `symbol`.
pub type TypeHints = BTreeMap<String, Vec<Option<ColumnType>>>;

/// What checking found besides the program itself.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Warnings: relations read by a rule that nothing defines (`undefined_relation`).
    pub warnings: Vec<Diagnostic>,
    /// How many of the program's relations its text mentions: they come first; the
    /// relations after them exist only because the type hints name them (data for
    /// relations the program never mentions: its extensional database).
    pub program_relations: usize,
}

/// Parse and check every source file of `sources` (in order) into one program.
///
/// Every relation the hints name is a relation of the program, mentioned by its text
/// or not: data for a relation no rule mentions is extensional data, loaded and shown
/// like any other (see [`compile_with_report`] for which relations those are).
pub fn compile(sources: SourceMap, hints: &TypeHints) -> Result<Program> {
    compile_with_report(sources, hints).map(|(p, _)| p)
}

/// [`compile`], with the warnings found and which relations the program text
/// mentions.
pub fn compile_with_report(sources: SourceMap, hints: &TypeHints) -> Result<(Program, Report)> {
    let mut modules = Vec::with_capacity(sources.files().len());
    let mut diagnostics = Vec::new();
    for id in 0..sources.files().len() {
        match parse_module(&sources, id as u32) {
            Ok(m) => modules.push(m),
            Err(e) => diagnostics.extend(e.diagnostics),
        }
    }
    if !diagnostics.is_empty() {
        return Err(capped(diagnostics, ErrorCode::Parse));
    }
    let mut ctx = Ctx::default();
    let built = ctx.check(&modules, hints, &sources);
    if ctx.error_count() == 0
        && let Some((relations, rules, strata, facts)) = built
    {
        let warnings = ctx
            .warnings
            .iter()
            .map(|e| {
                let mut d =
                    Diagnostic::warning(e.code, e.message.clone()).at_span(&sources, e.span);
                d.help = Some(e.help.clone());
                d
            })
            .collect();
        let report = Report {
            warnings,
            program_relations: ctx.program_relations,
        };
        let program = Program {
            relations,
            rules,
            strata,
            facts,
            sources,
            pack: Default::default(),
        };
        return Ok((program, report));
    }
    let mut errors = ctx.errors;
    errors.sort_by_key(|e| (e.span.file, e.span.start));
    let dropped = ctx.dropped + errors.len().saturating_sub(MAX_DIAGNOSTICS);
    errors.truncate(MAX_DIAGNOSTICS);
    let code = errors.first().map_or(ErrorCode::Parse, |e| e.code);
    // Snippets are built for the reported errors only.
    let mut diagnostics: Vec<Diagnostic> = errors
        .into_iter()
        .map(|e| {
            Diagnostic::new(e.code, e.message)
                .at_span(&sources, e.span)
                .with_help(e.help)
        })
        .collect();
    if dropped > 0 {
        diagnostics.push(more_not_shown(code, dropped));
    }
    Err(Error { diagnostics })
}

/// At most [`MAX_DIAGNOSTICS`] diagnostics (several files' parse errors together),
/// then how many more.
fn capped(mut diagnostics: Vec<Diagnostic>, code: ErrorCode) -> Error {
    let more_notes: usize = diagnostics.iter().filter_map(not_shown_count).sum();
    diagnostics.retain(|d| not_shown_count(d).is_none());
    let dropped = more_notes + diagnostics.len().saturating_sub(MAX_DIAGNOSTICS);
    diagnostics.truncate(MAX_DIAGNOSTICS);
    if dropped > 0 {
        diagnostics.push(more_not_shown(code, dropped));
    }
    Error { diagnostics }
}

impl Program {
    /// Compile one program text (named `name` in diagnostics), without type hints.
    pub fn from_source(name: &str, text: &str) -> Result<Program> {
        let mut sources = SourceMap::new();
        sources.add(name, text);
        compile(sources, &TypeHints::new())
    }

    /// Read and compile the given files in order, without type hints. A file that
    /// cannot be read is an `io_error` naming its path; together they are read up to
    /// [`DEFAULT_MAX_INPUT`](crate::store::DEFAULT_MAX_INPUT) bytes.
    pub fn from_files(paths: &[impl AsRef<Path>]) -> Result<Program> {
        let mut sources = SourceMap::new();
        let limit = crate::store::DEFAULT_MAX_INPUT;
        let mut left = limit;
        for p in paths {
            let p = p.as_ref();
            let text = crate::store::read_file(p, left, limit).map_err(|e| {
                let mut e = e;
                if e.code() == ErrorCode::Io {
                    e.diagnostics[0].help =
                        Some("check the path and that the file is readable UTF-8 text".into());
                }
                e
            })?;
            left -= text.len() as u64;
            sources.add(p.display().to_string(), text);
        }
        compile(sources, &TypeHints::new())
    }

    /// Same as [`compile`]: check `sources` using column type hints from input data.
    pub fn compile_with_hints(sources: SourceMap, hints: &TypeHints) -> Result<Program> {
        compile(sources, hints)
    }
}

/// An error waiting for its location to be resolved.
struct PendingError {
    code: ErrorCode,
    span: Span,
    message: String,
    help: String,
}

/// What the checker knows about a relation while checking.
#[derive(Debug)]
pub(crate) struct RelInfo {
    name: String,
    /// Declared arity, else that of the first use.
    pub(crate) arity: usize,
    /// First type slot of its columns (`slot + i` is column i).
    pub(crate) slot: Slot,
    /// Column names and declared types.
    declared: Option<Vec<(String, ColumnType)>>,
    /// The `.decl`, else the first use.
    span: Span,
    decl_span: Option<Span>,
    input: Option<IoOptions>,
    output: bool,
    outputs: Vec<IoOptions>,
    printsize: bool,
    auxiliary: bool,
    functional: Option<Vec<usize>>,
    text: Option<String>,
}

impl RelInfo {
    fn column_name(&self, i: usize) -> String {
        match &self.declared {
            Some(cols) if i < cols.len() => cols[i].0.clone(),
            _ => format!("_{i}"),
        }
    }
}

/// A bodiless ground clause waiting for column types.
struct FactDraft {
    rel: RelId,
    args: Vec<(Lit, Span)>,
    span: Span,
}

type Built = (Vec<Relation>, Vec<Rule>, Vec<ir::Stratum>, Vec<SourceFact>);

/// The checking state shared by every pass.
#[derive(Default)]
pub(crate) struct Ctx {
    pub(crate) rel_ids: HashMap<String, RelId>,
    pub(crate) rels: Vec<RelInfo>,
    pub(crate) types: Types,
    errors: Vec<PendingError>,
    /// Errors counted but not kept (beyond [`KEPT_ERRORS`]).
    dropped: usize,
    warnings: Vec<PendingError>,
    /// Relations the program text mentions (the first ones).
    program_relations: usize,
    /// Type slots an integer-only operator (`band`, `bshl`, `bnot`, …) reads, with
    /// the operator and where: checked once every type is known.
    pub(crate) integral: Vec<(Slot, Span, &'static str)>,
    /// Rules of auxiliary relations (negations' projections), added after the
    /// program's own rules.
    pub(crate) auxiliary_rules: Vec<LRule>,
}

/// Check errors kept for sorting by position; later ones are only counted.
const KEPT_ERRORS: usize = 1000;

impl Ctx {
    /// How many errors have been reported so far.
    pub(crate) fn error_count(&self) -> usize {
        self.errors.len() + self.dropped
    }

    pub(crate) fn error(
        &mut self,
        code: ErrorCode,
        span: Span,
        message: impl Into<String>,
        help: impl Into<String>,
    ) {
        if self.errors.len() >= KEPT_ERRORS {
            self.dropped += 1;
            return;
        }
        self.errors.push(PendingError {
            code,
            span,
            message: message.into(),
            help: help.into(),
        });
    }

    fn describe(&self, o: &Origin) -> String {
        match o {
            Origin::Column(r, c) => {
                let rel = &self.rels[*r as usize];
                format!(
                    "column `{}` of `{}`",
                    rel.column_name(*c as usize),
                    rel.name
                )
            }
            Origin::Var(v) => format!("variable `{v}`"),
            Origin::Const(l) => format!("constant `{l}`"),
            Origin::Arith => "an arithmetic expression".into(),
            Origin::Aggregate(f) => format!("the result of `{}`", ast::agg_keyword(*f)),
            Origin::Functor(f) => format!("`{f}`"),
        }
    }

    fn describe_side(&self, side: &types::Side) -> String {
        let mut s = format!("{} is {}", self.describe(&side.origin), side.kind);
        if let Some(b) = &side.because {
            s.push_str(&format!(" (from {})", self.describe(b)));
        }
        s
    }

    pub(crate) fn type_conflict(&mut self, c: &Conflict, subject: &str, span: Span) {
        let message = format!(
            "type mismatch for {subject}: {}, but {}",
            self.describe_side(&c.left),
            self.describe_side(&c.right)
        );
        let is_arith = |s: &types::Side| {
            matches!(
                s.origin,
                Origin::Arith | Origin::Aggregate(ir::AggFunc::Sum)
            )
        };
        let help = if is_arith(&c.left) || is_arith(&c.right) {
            "arithmetic and `sum` need numeric values (number, unsigned or float); symbols \
             can only be compared"
                .to_string()
        } else {
            "a column holds values of one type: use a value of the column's type, or \
             declare the relation with the type you need"
                .to_string()
        };
        self.error(ErrorCode::TypeMismatch, span, message, help);
    }

    fn check(
        &mut self,
        modules: &[ast::Module],
        hints: &TypeHints,
        sources: &SourceMap,
    ) -> Option<Built> {
        let aliases = self.type_aliases(modules);
        self.register_relations(modules, &aliases, hints);
        self.check_arities(modules, sources);
        self.directives(modules);
        self.undefined_relations(modules, hints);
        let (facts, lrules) = self.clauses(modules);
        // Hints for columns the program leaves open.
        for (name, cols) in hints {
            if let Some(&r) = self.rel_ids.get(name) {
                let (base, arity) = (self.rels[r as usize].slot, self.rels[r as usize].arity);
                for (i, t) in cols.iter().enumerate().take(arity) {
                    if let Some(t) = t {
                        self.types.hint(base + i as Slot, *t);
                    }
                }
            }
        }
        for (slot, span, op) in std::mem::take(&mut self.integral) {
            let ty = self.types.resolve(slot);
            if ty == ColumnType::Float || ty == ColumnType::Symbol {
                self.error(
                    ErrorCode::TypeMismatch,
                    span,
                    format!(
                        "`{op}` needs integers (number or unsigned), but its operands are {ty}s"
                    ),
                    "bitwise operators apply to number and unsigned values only",
                );
            }
        }
        let relations = self.relations();
        let facts = self.facts(facts, &relations);
        let mut lrules = lrules;
        let deps: Vec<(RelId, Vec<stratify::Dep>)> = lrules
            .iter_mut()
            .map(|r| (r.head, std::mem::take(&mut r.deps)))
            .collect();
        let (strata, rule_stratum) = match stratify::stratify(self.rels.len(), &deps) {
            Ok(s) => s,
            Err(errs) => {
                for e in errs {
                    self.not_stratifiable(e);
                }
                return None;
            }
        };
        let rules = self.rules(lrules, &rule_stratum);
        Some((relations, rules, strata, facts))
    }

    /// `.type` definitions resolved to base types (unknown names and cycles reported).
    fn type_aliases(&mut self, modules: &[ast::Module]) -> HashMap<String, ColumnType> {
        let mut defs: HashMap<&str, &ast::TypeDef> = HashMap::new();
        for item in modules.iter().flat_map(|m| &m.items) {
            if let Item::Type(t) = item {
                if builtin_type(&t.name.name).is_some() || defs.contains_key(t.name.name.as_str()) {
                    self.error(
                        ErrorCode::BadDirective,
                        t.name.span,
                        format!("type `{}` is defined more than once", t.name.name),
                        "give each type one `.type` definition, under a name that is not a \
                         primitive type",
                    );
                    continue;
                }
                defs.insert(&t.name.name, t);
            }
        }
        let mut resolved = HashMap::new();
        let mut names: Vec<&&ast::TypeDef> = defs.values().collect();
        names.sort_by_key(|t| (t.span.file, t.span.start));
        for t in names {
            let mut path: Vec<String> = Vec::new();
            if let Some(ty) = self.resolve_alias(&t.name.name, &defs, &mut path) {
                resolved.insert(t.name.name.clone(), ty);
            }
        }
        resolved
    }

    fn resolve_alias(
        &mut self,
        name: &str,
        defs: &HashMap<&str, &ast::TypeDef>,
        path: &mut Vec<String>,
    ) -> Option<ColumnType> {
        if let Some(t) = builtin_type(name) {
            return Some(t);
        }
        let def = defs.get(name)?;
        if path.iter().any(|p| p == name) {
            self.error(
                ErrorCode::BadDirective,
                def.name.span,
                format!("type `{name}` is defined in terms of itself"),
                "define it as a subtype of number, unsigned, float or symbol",
            );
            return None;
        }
        path.push(name.to_string());
        let mut found: Option<ColumnType> = None;
        for b in &def.bases {
            let t = if builtin_type(&b.name).is_some() || defs.contains_key(b.name.as_str()) {
                self.resolve_alias(&b.name, defs, path)
            } else {
                self.error(
                    ErrorCode::BadDirective,
                    b.span,
                    format!("unknown type `{}`", b.name),
                    "use number, unsigned, float, symbol or a type defined with `.type`",
                );
                None
            };
            let t = t?;
            if let Some(f) = found
                && f != t
            {
                self.error(
                    ErrorCode::TypeMismatch,
                    b.span,
                    format!(
                        "union type `{name}` mixes {f} and {t}; its members must share one \
                         primitive type"
                    ),
                    "split it into separate types",
                );
                return None;
            }
            found = Some(t);
        }
        path.pop();
        found
    }

    fn register(&mut self, name: &ast::Ident, arity: usize) -> RelId {
        if let Some(&r) = self.rel_ids.get(&name.name) {
            return r;
        }
        let r = self.rels.len() as RelId;
        self.rel_ids.insert(name.name.clone(), r);
        self.rels.push(RelInfo {
            name: name.name.clone(),
            arity,
            slot: 0,
            declared: None,
            span: name.span,
            decl_span: None,
            input: None,
            output: false,
            outputs: Vec::new(),
            printsize: false,
            auxiliary: false,
            functional: None,
            text: None,
        });
        r
    }

    /// A new auxiliary relation projecting `rel` onto columns of types `slots`.
    pub(crate) fn auxiliary_relation(&mut self, rel: RelId, slots: &[Slot], span: Span) -> RelId {
        let base = self.rels[rel as usize].name.clone();
        let mut k = 1;
        let name = loop {
            let candidate = format!("{base}_exists{k}");
            if !self.rel_ids.contains_key(&candidate) {
                break candidate;
            }
            k += 1;
        };
        let id = self.register(&ast::Ident { name, span }, slots.len());
        let mut first = None;
        for (i, &s) in slots.iter().enumerate() {
            let col = self.types.slot(Kind::Any, Origin::Column(id, i as u32));
            first.get_or_insert(col);
            // A fresh slot always unifies.
            let _ = self.types.unify(col, s);
        }
        let info = &mut self.rels[id as usize];
        info.slot = first.unwrap_or(0);
        info.auxiliary = true;
        id
    }

    fn register_relations(
        &mut self,
        modules: &[ast::Module],
        aliases: &HashMap<String, ColumnType>,
        hints: &TypeHints,
    ) {
        for item in modules.iter().flat_map(|m| &m.items) {
            match item {
                Item::Decl(d) => {
                    let r = self.register(&d.name, d.columns.len());
                    if self.rels[r as usize].decl_span.is_some() {
                        self.error(
                            ErrorCode::BadDirective,
                            d.name.span,
                            format!("relation `{}` is declared more than once", d.name.name),
                            "keep one `.decl` per relation",
                        );
                        continue;
                    }
                    for q in &d.qualifiers {
                        if q.name == "eqrel" {
                            self.error(
                                ErrorCode::BadDirective,
                                q.span,
                                "`eqrel` relations are not supported",
                                "declare an ordinary relation and write the reflexive, \
                                 symmetric and transitive rules explicitly",
                            );
                        }
                    }
                    let mut cols = Vec::with_capacity(d.columns.len());
                    for (c, t) in &d.columns {
                        let ty = builtin_type(&t.name).or_else(|| aliases.get(&t.name).copied());
                        let ty =
                            match ty {
                                Some(ty) => ty,
                                None => {
                                    // Unknown or broken alias; broken aliases were reported.
                                    if !modules.iter().flat_map(|m| &m.items).any(
                                        |i| matches!(i, Item::Type(td) if td.name.name == t.name),
                                    ) {
                                        self.error(
                                            ErrorCode::BadDirective,
                                            t.span,
                                            format!("unknown type `{}`", t.name),
                                            "use number, unsigned, float, symbol or a type \
                                         defined with `.type`",
                                        );
                                    }
                                    ColumnType::Symbol
                                }
                            };
                        cols.push((c.name.clone(), ty));
                    }
                    let info = &mut self.rels[r as usize];
                    info.arity = cols.len();
                    info.declared = Some(cols);
                    info.decl_span = Some(d.span);
                    info.span = d.name.span;
                }
                Item::Clause(c) => {
                    for_each_atom(c, &mut |a, _| {
                        self.register(&a.name, a.args.len());
                    });
                }
                // `.output`/`.printsize` of a relation only data supplies.
                Item::Io(io) if io.kind != ast::IoKind::Input => {
                    for name in &io.relations {
                        if let Some(cols) = hints.get(&name.name) {
                            self.register(name, cols.len());
                        }
                    }
                }
                _ => {}
            }
        }
        self.program_relations = self.rels.len();
        // Data for relations the program never mentions: its extensional database.
        for (name, cols) in hints {
            if !self.rel_ids.contains_key(name) {
                let id = ast::Ident {
                    name: name.clone(),
                    span: Span::default(),
                };
                self.register(&id, cols.len());
            }
        }
        // Type slots of every column, declared types fixed.
        for r in 0..self.rels.len() {
            let arity = self.rels[r].arity;
            let mut base = None;
            for i in 0..arity {
                let kind = match &self.rels[r].declared {
                    Some(cols) => Kind::Exact(cols[i].1),
                    None => Kind::Any,
                };
                let s = self.types.slot(kind, Origin::Column(r as RelId, i as u32));
                base.get_or_insert(s);
            }
            // A nullary relation has no slots; any number will do.
            self.rels[r].slot = base.unwrap_or(0);
        }
    }

    fn check_arities(&mut self, modules: &[ast::Module], sources: &SourceMap) {
        let mut bad = Vec::new();
        for item in modules.iter().flat_map(|m| &m.items) {
            if let Item::Clause(c) = item {
                for_each_atom(c, &mut |a, _| {
                    let r = self.rel_ids[&a.name.name];
                    let info = &self.rels[r as usize];
                    if a.args.len() != info.arity {
                        bad.push((a.span, r, a.args.len()));
                    }
                });
            }
        }
        for (span, r, used) in bad {
            let info = &self.rels[r as usize];
            let what = match info.decl_span {
                Some(_) => "declared with",
                None => "first used with",
            };
            let at = sources.locate(info.span);
            let what = format!(
                "{what} {} argument{} (at {}:{}:{})",
                info.arity,
                plural(info.arity),
                at.file,
                at.line,
                at.col
            );
            let (name, arity) = (info.name.clone(), info.arity);
            self.error(
                ErrorCode::ArityMismatch,
                span,
                format!(
                    "relation `{name}` is used here with {used} argument{}, but it was {what}",
                    plural(used),
                ),
                format!(
                    "use `{name}` with {arity} argument{} everywhere, or give the other \
                     relation its own name",
                    plural(arity)
                ),
            );
        }
    }

    fn lookup(&mut self, name: &ast::Ident, directive: &str) -> Option<RelId> {
        if let Some(&r) = self.rel_ids.get(&name.name) {
            return Some(r);
        }
        let suggestion = did_you_mean(&name.name, self.rels.iter().map(|r| r.name.as_str()));
        let help = match suggestion {
            Some(s) => format!("did you mean `{s}`? A relation must be declared or used in a rule"),
            None => format!(
                "declare it with `.decl {}(…)` or use it in a fact or rule",
                name.name
            ),
        };
        self.error(
            ErrorCode::UnknownRelation,
            name.span,
            format!(
                "`{directive}` names relation `{}`, which does not exist",
                name.name
            ),
            help,
        );
        None
    }

    fn directives(&mut self, modules: &[ast::Module]) {
        for item in modules.iter().flat_map(|m| &m.items) {
            match item {
                Item::Io(io) => {
                    let directive = match io.kind {
                        ast::IoKind::Input => ".input",
                        ast::IoKind::Output => ".output",
                        ast::IoKind::PrintSize => ".printsize",
                    };
                    let mut options = BTreeMap::new();
                    for (k, v) in &io.options {
                        let key = k.name.to_lowercase();
                        if options.insert(key.clone(), v.clone()).is_some() {
                            self.error(
                                ErrorCode::BadDirective,
                                k.span,
                                format!("option `{key}` is given twice"),
                                "give each option once",
                            );
                        }
                    }
                    for name in &io.relations {
                        let Some(r) = self.lookup(name, directive) else {
                            continue;
                        };
                        if io.kind == ast::IoKind::Input {
                            if self.rels[r as usize].input.is_some() {
                                self.error(
                                    ErrorCode::BadDirective,
                                    name.span,
                                    format!("relation `{}` has two `.input` directives", name.name),
                                    "keep one `.input` per relation",
                                );
                            }
                            self.rels[r as usize].input = Some(IoOptions {
                                options: options.clone(),
                                span: io.span,
                            });
                        } else if io.kind == ast::IoKind::Output {
                            self.check_output_options(&options, io.span, &name.name);
                            let info = &mut self.rels[r as usize];
                            info.output = true;
                            info.outputs.push(IoOptions {
                                options: options.clone(),
                                span: io.span,
                            });
                        } else {
                            self.rels[r as usize].printsize = true;
                        }
                    }
                }
                Item::Text(t) => {
                    let Some(r) = self.lookup(&t.relation, ".text") else {
                        continue;
                    };
                    let arity = self.rels[r as usize].arity;
                    if self.rels[r as usize].text.is_some() {
                        self.error(
                            ErrorCode::BadDirective,
                            t.relation.span,
                            format!("relation `{}` has two `.text` templates", t.relation.name),
                            "keep one `.text` per relation",
                        );
                    }
                    for k in placeholders(&t.template) {
                        if k >= arity {
                            self.error(
                                ErrorCode::BadDirective,
                                t.template_span,
                                format!(
                                    "placeholder `{{{k}}}` is out of range: `{}` has {arity} \
                                     column{}",
                                    t.relation.name,
                                    plural(arity)
                                ),
                                format!(
                                    "placeholders count columns from 0, so use `{{0}}` to `{{{}}}`",
                                    arity.saturating_sub(1)
                                ),
                            );
                        }
                    }
                    self.rels[r as usize].text = Some(t.template.clone());
                }
                Item::Functional(f) => {
                    let Some(r) = self.lookup(&f.relation, ".functional") else {
                        continue;
                    };
                    let mut keys = Vec::with_capacity(f.keys.len());
                    for k in &f.keys {
                        let info = &self.rels[r as usize];
                        let (idx, span) = match k {
                            ast::KeyColumn::Index(i, s) => (usize::try_from(*i).ok(), *s),
                            ast::KeyColumn::Name(n) => (
                                (0..info.arity).find(|&i| info.column_name(i) == n.name),
                                n.span,
                            ),
                        };
                        match idx {
                            Some(i) if i < info.arity => {
                                if keys.contains(&i) {
                                    self.error(
                                        ErrorCode::BadDirective,
                                        span,
                                        "key column listed twice",
                                        "list each key column once",
                                    );
                                }
                                keys.push(i);
                            }
                            _ => {
                                let (name, arity) = (info.name.clone(), info.arity);
                                self.error(
                                    ErrorCode::BadDirective,
                                    span,
                                    format!(
                                        "`{name}` has no column {}",
                                        match k {
                                            ast::KeyColumn::Index(i, _) => i.to_string(),
                                            ast::KeyColumn::Name(n) => format!("`{}`", n.name),
                                        }
                                    ),
                                    format!(
                                        "key columns are indexes 0 to {} or declared column names",
                                        arity.saturating_sub(1)
                                    ),
                                );
                            }
                        }
                    }
                    if keys.len() == self.rels[r as usize].arity {
                        self.error(
                            ErrorCode::BadDirective,
                            f.span,
                            "a functional dependency needs at least one non-key column",
                            "list only the columns that determine the others",
                        );
                    }
                    self.rels[r as usize].functional = Some(keys);
                }
                _ => {}
            }
        }
    }

    /// Soufflé's `.output` options this engine honours: `IO=file` (with `filename`,
    /// `delimiter`, `headers`) and `IO=stdout`.
    fn check_output_options(&mut self, options: &BTreeMap<String, String>, span: Span, rel: &str) {
        for (key, value) in options {
            let problem = match key.as_str() {
                "io" if matches!(value.to_ascii_lowercase().as_str(), "file" | "stdout") => None,
                "io" => Some(format!(
                    "IO={value} is not supported; only IO=file and IO=stdout are"
                )),
                "filename" if !value.is_empty() => None,
                "filename" => Some("the filename is empty".to_string()),
                "delimiter" => {
                    let d = if value == "\\t" { "\t" } else { value.as_str() };
                    (!(d.len() == 1 && d.is_ascii())).then(|| {
                        format!("the delimiter must be one ASCII character, not {value:?}")
                    })
                }
                "headers" | "rfc4180" => {
                    (!matches!(value.to_ascii_lowercase().as_str(), "true" | "false"))
                        .then(|| format!("{key} must be true or false, not {value:?}"))
                }
                other => Some(format!(
                    "unsupported option `{other}` (supported: IO, filename, delimiter, headers, rfc4180)"
                )),
            };
            if let Some(p) = problem {
                self.error(
                    ErrorCode::BadDirective,
                    span,
                    format!("`.output {rel}`: {p}"),
                    "write e.g. `.output rel(IO=file, filename=\"rel.csv\", delimiter=\",\")`",
                );
            }
        }
    }

    /// A warning for every relation a rule reads that has no rule, no fact, no
    /// `.input`, no declaration and no data: it is empty, and its name is probably a
    /// misspelling of one that is defined.
    fn undefined_relations(&mut self, modules: &[ast::Module], hints: &TypeHints) {
        let n = self.rels.len();
        let mut defined = vec![false; n];
        let mut read: Vec<Option<Span>> = vec![None; n];
        for item in modules.iter().flat_map(|m| &m.items) {
            if let Item::Clause(c) = item {
                for_each_atom(c, &mut |a, head| {
                    let r = self.rel_ids[&a.name.name] as usize;
                    if head {
                        defined[r] = true;
                    } else {
                        read[r].get_or_insert(a.name.span);
                    }
                });
            }
        }
        for (d, info) in defined.iter_mut().zip(&self.rels) {
            if info.decl_span.is_some() || info.input.is_some() || hints.contains_key(&info.name) {
                *d = true;
            }
        }
        for r in 0..n {
            let Some(span) = read[r] else { continue };
            if defined[r] {
                continue;
            }
            let name = self.rels[r].name.clone();
            let candidates = (0..n)
                .filter(|&o| defined[o])
                .map(|o| self.rels[o].name.as_str());
            let help = match did_you_mean(&name, candidates) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!(
                    "give it facts (in the program, with `.input {name}`, or as data) or rules, \
                     or declare it with `.decl {name}(…)` if it is meant to be empty"
                ),
            };
            self.warnings.push(PendingError {
                code: ErrorCode::UndefinedRelation,
                span,
                message: format!(
                    "relation `{name}` is read here but has no rule, no fact, no `.input` and \
                     no declaration: it is always empty"
                ),
                help,
            });
        }
    }

    /// Annotations of a clause: name and confidence.
    fn annotations(&mut self, c: &ast::Clause) -> (Option<String>, f64) {
        let mut name = None;
        let mut confidence = None;
        for a in &c.annotations {
            match a.name.name.as_str() {
                "name" => match &a.value {
                    Lit::Str(s) if !s.trim().is_empty() => {
                        if name.replace(s.clone()).is_some() {
                            self.duplicate_annotation(a);
                        }
                    }
                    _ => self.error(
                        ErrorCode::BadDirective,
                        a.value_span,
                        "`@name` takes a non-empty string",
                        "write e.g. `@name(\"coordinated_threat\")`",
                    ),
                },
                "confidence" => {
                    let v = match a.value {
                        Lit::Float(x) => Some(x),
                        Lit::Int(i) => Some(i as f64),
                        Lit::Unsigned(u) => Some(u as f64),
                        Lit::Str(_) => None,
                    };
                    match v {
                        Some(x) if x > 0.0 && x <= 1.0 => {
                            if confidence.replace(x).is_some() {
                                self.duplicate_annotation(a);
                            }
                        }
                        _ => self.error(
                            ErrorCode::BadDirective,
                            a.value_span,
                            format!("confidence `{}` is not in (0, 1]", a.value),
                            "a rule's confidence is a number greater than 0 and at most 1, \
                             e.g. `@confidence(0.9)`",
                        ),
                    }
                }
                other => self.error(
                    ErrorCode::BadDirective,
                    a.name.span,
                    format!("unknown annotation `@{other}`"),
                    "the annotations are `@name(\"…\")` and `@confidence(0.9)`",
                ),
            }
        }
        (name, confidence.unwrap_or(1.0))
    }

    fn duplicate_annotation(&mut self, a: &ast::Annotation) {
        self.error(
            ErrorCode::BadDirective,
            a.span,
            format!("annotation `@{}` is given twice", a.name.name),
            "keep one of them",
        );
    }

    fn clauses(&mut self, modules: &[ast::Module]) -> (Vec<FactDraft>, Vec<LRule>) {
        let mut facts = Vec::new();
        let mut rules = Vec::new();
        for item in modules.iter().flat_map(|m| &m.items) {
            let Item::Clause(c) = item else { continue };
            let (name, confidence) = self.annotations(c);
            if c.body.is_empty() && c.annotations.is_empty() {
                for h in &c.heads {
                    if h.args.iter().all(|a| matches!(a, ast::Expr::Lit(..))) {
                        let rel = self.rel_ids[&h.name.name];
                        let (base, arity) =
                            (self.rels[rel as usize].slot, self.rels[rel as usize].arity);
                        let mut args = Vec::with_capacity(h.args.len());
                        for (i, a) in h.args.iter().enumerate() {
                            if let ast::Expr::Lit(l, span) = a {
                                if i < arity {
                                    let s =
                                        self.types.slot(Kind::of_lit(l), Origin::Const(l.clone()));
                                    if let Err(conf) = self.types.unify(base + i as Slot, s) {
                                        self.type_conflict(
                                            &conf,
                                            &format!("constant `{l}`"),
                                            *span,
                                        );
                                    }
                                }
                                args.push((l.clone(), *span));
                            }
                        }
                        facts.push(FactDraft {
                            rel,
                            args,
                            span: h.span,
                        });
                    } else {
                        let r = Lowerer::new(self).rule(h, &[], None, 1.0, c.span);
                        rules.push(r);
                    }
                }
                continue;
            }
            // A body's literals are evaluated one nested in the other: past a bound,
            // the stack of a thread would not hold them.
            if let Some(size) = c
                .body
                .iter()
                .map(|conj| body_literals(conj))
                .find(|&n| n > MAX_BODY_LITERALS)
            {
                self.error(
                    ErrorCode::Unsupported,
                    c.span,
                    format!(
                        "this rule's body has {size} literals; at most {MAX_BODY_LITERALS} \
                         are supported"
                    ),
                    "split the rule, computing part of its body into a relation of its own",
                );
                continue;
            }
            for h in &c.heads {
                if c.body.is_empty() {
                    let r = Lowerer::new(self).rule(h, &[], name.clone(), confidence, c.span);
                    rules.push(r);
                }
                for conj in &c.body {
                    if !conj
                        .iter()
                        .any(|l| matches!(l, ast::Literal::Disjunction(..)))
                    {
                        let r = Lowerer::new(self).rule(h, conj, name.clone(), confidence, c.span);
                        rules.push(r);
                        continue;
                    }
                    // Every head gets every alternative.
                    let limit = MAX_ALTERNATIVES / c.heads.len().max(1);
                    let mut literals = MAX_EXPANDED_LITERALS;
                    let Some(alts) = expand(conj, limit.max(1), &mut literals) else {
                        self.error(
                            ErrorCode::Parse,
                            c.span,
                            format!(
                                "this rule's disjunctions expand to more than {MAX_ALTERNATIVES} \
                                 rules (or {MAX_EXPANDED_LITERALS} literals), counting every head"
                            ),
                            "split the rule, computing each disjunction into a relation of its own",
                        );
                        break;
                    };
                    for alt in alts {
                        let r = Lowerer::new(self).rule(h, &alt, name.clone(), confidence, c.span);
                        rules.push(r);
                    }
                }
            }
        }
        rules.append(&mut self.auxiliary_rules);
        (facts, rules)
    }

    fn relations(&mut self) -> Vec<Relation> {
        let mut out = Vec::with_capacity(self.rels.len());
        for r in 0..self.rels.len() {
            let (arity, base) = (self.rels[r].arity, self.rels[r].slot);
            let columns = (0..arity)
                .map(|i| Column {
                    name: self.rels[r].column_name(i),
                    ty: self.types.resolve(base + i as Slot),
                })
                .collect();
            let info = &mut self.rels[r];
            out.push(Relation {
                name: info.name.clone(),
                columns,
                input: info.input.take(),
                output: info.output,
                outputs: std::mem::take(&mut info.outputs),
                printsize: info.printsize,
                auxiliary: info.auxiliary,
                functional: info.functional.take(),
                text: info.text.take(),
                span: info.span,
            });
        }
        out
    }

    /// A literal as a value of column type `ty` ([`ColumnType::coerce`]).
    fn value(&mut self, lit: &Lit, ty: ColumnType, span: Span) -> Value {
        let natural = match lit {
            Lit::Int(i) => i64::try_from(*i)
                .map(Value::Number)
                .ok()
                .or_else(|| u64::try_from(*i).ok().map(Value::Unsigned)),
            Lit::Unsigned(u) => Some(Value::Unsigned(*u)),
            Lit::Float(x) => Some(Value::Float(*x)),
            Lit::Str(s) => Some(Value::Symbol(s.clone())),
        };
        let kinds_agree = matches!(
            (lit, ty),
            (
                Lit::Int(_),
                ColumnType::Number | ColumnType::Unsigned | ColumnType::Float
            ) | (Lit::Unsigned(_), ColumnType::Unsigned)
                | (Lit::Float(_), ColumnType::Float)
                | (Lit::Str(_), ColumnType::Symbol)
        );
        if !kinds_agree {
            // Reported as a type mismatch already.
            return Value::Number(0);
        }
        natural.and_then(|v| ty.coerce(&v)).unwrap_or_else(|| {
            self.error(
                ErrorCode::TypeMismatch,
                span,
                format!("constant `{lit}` does not fit in type {ty}"),
                match ty {
                    ColumnType::Unsigned => "unsigned values are between 0 and 2^64-1",
                    ColumnType::Float => {
                        "a float holds integers up to 2^53 exactly; write the constant as a float"
                    }
                    _ => {
                        "numbers are between -2^63 and 2^63-1; declare the column unsigned or float"
                    }
                },
            );
            Value::Number(0)
        })
    }

    fn facts(&mut self, drafts: Vec<FactDraft>, relations: &[Relation]) -> Vec<SourceFact> {
        let mut out = Vec::with_capacity(drafts.len());
        for f in drafts {
            let cols = &relations[f.rel as usize].columns;
            if f.args.len() != cols.len() {
                continue;
            }
            let args = f
                .args
                .iter()
                .zip(cols)
                .map(|((l, s), c)| self.value(l, c.ty, *s))
                .collect();
            out.push(SourceFact {
                rel: f.rel,
                args,
                span: f.span,
            });
        }
        out
    }

    fn ir_expr(&mut self, e: LExpr) -> ir::Expr {
        match e {
            LExpr::Var(v) => ir::Expr::Var(v),
            LExpr::Const(l, slot, span) => {
                let ty = self.types.resolve(slot);
                ir::Expr::Const(self.value(&l, ty, span))
            }
            LExpr::Binary(op, l, r) => {
                ir::Expr::Binary(op, Box::new(self.ir_expr(*l)), Box::new(self.ir_expr(*r)))
            }
            LExpr::Neg(e) => ir::Expr::Neg(Box::new(self.ir_expr(*e))),
            LExpr::Call(f, args, slots) => {
                let types = slots.iter().map(|&s| self.types.resolve(s)).collect();
                let args = args.into_iter().map(|a| self.ir_expr(a)).collect();
                ir::Expr::Call(f, args, types)
            }
            LExpr::Invalid => ir::Expr::Const(Value::Number(0)),
        }
    }

    fn ir_atom(&mut self, a: rules::LAtom) -> ir::Atom {
        let args = a
            .args
            .into_iter()
            .map(|t| match t {
                LTerm::Var(v) => ir::Term::Var(v),
                LTerm::Wildcard => ir::Term::Wildcard,
                LTerm::Const(l, slot, span) => {
                    let ty = self.types.resolve(slot);
                    ir::Term::Const(self.value(&l, ty, span))
                }
            })
            .collect();
        ir::Atom {
            rel: a.rel,
            args,
            span: a.span,
        }
    }

    fn ir_literal(&mut self, l: LLit) -> ir::Literal {
        match l {
            LLit::Atom(a) => ir::Literal::Atom(self.ir_atom(a)),
            LLit::Negated(a) => ir::Literal::Negated(self.ir_atom(a)),
            LLit::Compare {
                op,
                left,
                right,
                assigns,
                span,
            } => ir::Literal::Compare {
                op,
                left: self.ir_expr(left),
                right: self.ir_expr(right),
                assigns,
                span,
            },
            LLit::Aggregate {
                result,
                func,
                target,
                body,
                span,
            } => ir::Literal::Aggregate {
                result,
                func,
                target: target.map(|t| self.ir_expr(t)),
                body: body.into_iter().map(|l| self.ir_literal(l)).collect(),
                span,
            },
            LLit::Test {
                test,
                args,
                negated,
                span,
            } => ir::Literal::Test {
                test,
                args: args.into_iter().map(|a| self.ir_expr(a)).collect(),
                negated,
                span,
            },
        }
    }

    fn rules(&mut self, lrules: Vec<LRule>, rule_stratum: &[usize]) -> Vec<Rule> {
        let mut per_head = vec![0usize; self.rels.len()];
        for r in &lrules {
            per_head[r.head as usize] += 1;
        }
        let mut seen = vec![0usize; self.rels.len()];
        let mut out = Vec::with_capacity(lrules.len());
        for (id, r) in lrules.into_iter().enumerate() {
            let h = r.head as usize;
            seen[h] += 1;
            let name = match r.name {
                Some(n) => n,
                None if per_head[h] > 1 => format!("rule:{}#{}", self.rels[h].name, seen[h]),
                None => format!("rule:{}", self.rels[h].name),
            };
            let vars = r
                .vars
                .iter()
                .map(|(n, s)| Variable {
                    name: n.clone(),
                    ty: self.types.resolve(*s),
                })
                .collect();
            let head = ir::Head {
                rel: r.head,
                args: r.head_args.into_iter().map(|e| self.ir_expr(e)).collect(),
            };
            let body = r.body.into_iter().map(|l| self.ir_literal(l)).collect();
            out.push(Rule {
                id: id as u32,
                name,
                confidence: r.confidence,
                head,
                body,
                vars,
                stratum: rule_stratum[id],
                span: r.span,
            });
        }
        out
    }

    fn not_stratifiable(&mut self, e: stratify::Unstratifiable) {
        let name = |c: &Ctx, r: RelId| c.rels[r as usize].name.clone();
        let mut cycle = name(self, e.head);
        for (kind, r) in &e.cycle {
            cycle.push_str(&format!(" {} {}", arrow(*kind), name(self, *r)));
        }
        let (how, fix) = match e.kind {
            DepKind::Aggregated(f) => (
                format!("aggregates (`{}`) over", ast::agg_keyword(f)),
                "aggregate only over relations computed in an earlier stratum",
            ),
            _ => (
                "negates".to_string(),
                "negate only relations that do not depend on this rule's head",
            ),
        };
        self.error(
            ErrorCode::NotStratifiable,
            e.span,
            format!(
                "not stratifiable: `{}` {how} `{}` inside a recursive cycle: {cycle}",
                name(self, e.head),
                name(self, e.rel)
            ),
            format!("{fix}; break the cycle {cycle}"),
        );
    }
}

fn arrow(kind: DepKind) -> String {
    match kind {
        DepKind::Positive => "->".into(),
        DepKind::Negated => "-[not]->".into(),
        DepKind::Aggregated(f) => format!("-[{}]->", ast::agg_keyword(f)),
    }
}

fn builtin_type(name: &str) -> Option<ColumnType> {
    match name {
        "number" => Some(ColumnType::Number),
        "unsigned" => Some(ColumnType::Unsigned),
        "float" => Some(ColumnType::Float),
        "symbol" => Some(ColumnType::Symbol),
        _ => None,
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Literals one conjunction of a rule body may have (see [`body_literals`]): its
/// evaluation nests a call for each, and this many stay well within the stack of a
/// thread (2 MiB by default).
const MAX_BODY_LITERALS: usize = 1024;

/// The literals of a conjunction as its evaluation nests them: an aggregate's and its
/// body's, a disjunction's and its largest alternative's.
fn body_literals(conj: &[ast::Literal]) -> usize {
    conj.iter()
        .map(|l| match l {
            ast::Literal::Aggregate(agg) => 1 + body_literals(&agg.body),
            ast::Literal::Disjunction(alts, _) => {
                1 + alts.iter().map(|c| body_literals(c)).max().unwrap_or(0)
            }
            _ => 1,
        })
        .sum()
}

/// How many rules one clause body may expand to through nested disjunctions.
const MAX_ALTERNATIVES: usize = 4096;

/// How many literals the expansion of one clause body may copy in all.
const MAX_EXPANDED_LITERALS: usize = 1 << 20;

/// The alternatives of a conjunction containing `( … ; … )` sub-formulas, each a plain
/// conjunction, in order (`None` beyond `limit` alternatives, or once more than
/// `literals` literals in all would be copied).
fn expand(
    conj: &[ast::Literal],
    limit: usize,
    literals: &mut usize,
) -> Option<Vec<Vec<ast::Literal>>> {
    let mut alts: Vec<Vec<ast::Literal>> = vec![Vec::new()];
    let spend = |n: usize, literals: &mut usize| -> Option<()> {
        *literals = literals.checked_sub(n)?;
        Some(())
    };
    for l in conj {
        match l {
            ast::Literal::Disjunction(inner, _) => {
                let mut options = Vec::new();
                for c in inner {
                    options.extend(expand(c, limit, literals)?);
                }
                if alts.len().saturating_mul(options.len()) > limit {
                    return None;
                }
                let mut next = Vec::with_capacity(alts.len() * options.len());
                for a in &alts {
                    for o in &options {
                        spend(a.len() + o.len(), literals)?;
                        let mut v = a.clone();
                        v.extend(o.iter().cloned());
                        next.push(v);
                    }
                }
                alts = next;
            }
            other => {
                spend(alts.len(), literals)?;
                alts.iter_mut().for_each(|a| a.push(other.clone()));
            }
        }
    }
    Some(alts)
}

/// Every atom of a clause (heads, body, aggregate bodies), with whether it is a head.
fn for_each_atom(c: &ast::Clause, f: &mut impl FnMut(&ast::Atom, bool)) {
    fn lits(ls: &[ast::Literal], f: &mut impl FnMut(&ast::Atom, bool)) {
        for l in ls {
            match l {
                ast::Literal::Atom(a) | ast::Literal::Negated(a, _) => f(a, false),
                ast::Literal::Aggregate(agg) => lits(&agg.body, f),
                ast::Literal::Disjunction(alts, _) => alts.iter().for_each(|c| lits(c, f)),
                ast::Literal::Compare { .. } | ast::Literal::Test { .. } => {}
            }
        }
    }
    for h in &c.heads {
        f(h, true);
    }
    for conj in &c.body {
        lits(conj, f);
    }
}

/// The `{k}` placeholders of a `.text` template.
fn placeholders(template: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        if !digits.is_empty() && rest[digits.len()..].starts_with('}') {
            out.push(digits.parse().unwrap_or(usize::MAX));
        }
    }
    out
}
