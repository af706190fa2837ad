//! Rule packs: a directory of rules with a manifest, `pack.ron`, that says what the
//! pack is, how stored evidence becomes its facts, which goals it answers, and what
//! its sample evidence must conclude.
//!
//! ```ron
//! (
//!     name: "drones",
//!     version: "1.0.0",
//!     description: "Drone-swarm threat assessment.",
//!     rules: ["drones.dl"],
//!     evidence: [
//!         (table: "DRONES", predicate: "member", args: [Member(0), Member(1)]),
//!         (table: "SIGHTINGS", predicate: "sighting", args: [Member(0), Attr("zone")]),
//!     ],
//!     goals: [
//!         (name: "threatens", goal: "threatens(group, zone)",
//!          question: "Which restricted zones does group {group} threaten?"),
//!     ],
//!     samples: [
//!         (name: "radar log", hyperedges: "hyperedges.jsonl",
//!          expect: ["threatens(42, \"airport\")"], absent: ["threatens(17, _)"]),
//!     ],
//! )
//! ```
//!
//! `rules` are compiled in order. Each `evidence` entry maps one stored table to one
//! predicate: a hyperedge of that table ([`Hyperedge`]) becomes one fact whose columns
//! come from its members (`Member(i)`), attributes (`Attr("name")`), time (`EventTs`)
//! or constants (`Symbol("…")`, `Number(n)`), with the hyperedge's identity as the
//! fact's provenance. A `goal` is a pattern with named variables and a question
//! template that names them. A `sample` gives evidence (`evidence`: fact JSONL,
//! `hyperedges`: hyperedge JSONL, both relative to the pack) and goal patterns the
//! evaluation must match (`expect`) or must not (`absent`).
//!
//! Several packs load together ([`PackSet`]): their rules become one program. Two
//! packs that use one relation name, name two rules alike, map one table or name two
//! goals alike clash, and the error names both.

mod manifest;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::diag::{Diagnostic, ErrorCode, Result};
use crate::eval::{EvalOptions, FactBase};
use crate::ir::{Program, RelId};
use crate::store::hyperedge::{Hyperedge, read_hyperedges};
use crate::store::{InputFact, Loader};
use crate::syntax::{Goal, GoalArg, parse_goal};
use crate::value::{ColumnType, Value};

pub use manifest::{ArgSource, GoalSpec, Manifest, Sample, TableMapping};

/// A rule pack: its manifest and the text of every file the manifest names.
#[derive(Debug, Clone)]
pub struct Pack {
    manifest: Manifest,
    /// Where it was loaded from (`None` for a pack built from texts).
    dir: Option<PathBuf>,
    /// The name files are reported under: the directory, or the given prefix.
    root: String,
    /// File name (as the manifest writes it) → text.
    files: BTreeMap<String, String>,
}

fn pack_error(message: impl Into<String>) -> crate::diag::Error {
    Diagnostic::new(ErrorCode::BadPack, message).into()
}

impl Pack {
    /// Load the pack in `dir`: its `pack.ron` and every file it names.
    pub fn load(dir: impl AsRef<Path>) -> Result<Pack> {
        let dir = dir.as_ref();
        let manifest_path = dir.join("pack.ron");
        // Read within the loader's default input limit (a device is refused).
        let limit = crate::store::DEFAULT_MAX_INPUT;
        let mut left = limit;
        let text = crate::store::read_file(&manifest_path, left, limit).map_err(|mut e| {
            if e.code() == ErrorCode::Io {
                e.diagnostics[0].help =
                    Some("a rule pack is a directory with a pack.ron manifest".into());
            }
            e
        })?;
        left -= text.len() as u64;
        let manifest = Manifest::parse(&manifest_path.display().to_string(), &text)?;
        let mut files = BTreeMap::new();
        for name in manifest.files() {
            let path = dir.join(&name);
            let text = crate::store::read_file(&path, left, limit).map_err(|e| {
                if e.code() != ErrorCode::Io {
                    return e;
                }
                pack_error(format!(
                    "pack `{}` names {name}, which cannot be read: {}",
                    manifest.name,
                    e.primary().message
                ))
            })?;
            left -= text.len() as u64;
            files.insert(name, text);
        }
        Ok(Pack {
            manifest,
            root: dir.display().to_string(),
            dir: Some(dir.to_path_buf()),
            files,
        })
    }

    /// A pack from texts: the manifest, and `(name, text)` for every file it names
    /// (names as the manifest writes them). `root` prefixes file names in
    /// diagnostics and provenance (e.g. `rules/drones`).
    pub fn from_texts(root: &str, manifest: &str, files: &[(&str, &str)]) -> Result<Pack> {
        let manifest = Manifest::parse(&format!("{root}/pack.ron"), manifest)?;
        let given: BTreeMap<String, String> = files
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect();
        let mut out = BTreeMap::new();
        for name in manifest.files() {
            let text = given.get(&name).ok_or_else(|| {
                pack_error(format!(
                    "pack `{}` names {name}, which was not given",
                    manifest.name
                ))
            })?;
            out.insert(name, text.clone());
        }
        Ok(Pack {
            manifest,
            dir: None,
            root: root.to_string(),
            files: out,
        })
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The pack's name.
    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    /// The directory it was loaded from.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The text of a file the manifest names.
    pub fn file(&self, name: &str) -> Option<&str> {
        self.files.get(name).map(String::as_str)
    }

    /// The name a file of the pack is reported under.
    fn path_of(&self, name: &str) -> String {
        format!("{}/{name}", self.root.trim_end_matches('/'))
    }

    /// Add the pack's rule files to a loader, in manifest order.
    fn add_rules(&self, loader: &mut Loader) {
        for r in &self.manifest.rules {
            loader.program_text(&self.path_of(r), self.file(r).unwrap_or_default());
        }
    }

    /// Compile this pack alone.
    pub fn compile(&self) -> Result<PackSet> {
        PackSet::new(vec![self.clone()])
    }

    /// Validate the pack and run its samples: the manifest, its mappings and goals
    /// against the compiled rules, then every sample's expectations. A pack that does
    /// not compile, or whose mappings or goals are wrong, is an error; failed sample
    /// expectations are reported in the result.
    pub fn check(&self) -> Result<PackReport> {
        let set = self.compile()?;
        let mut samples = Vec::new();
        for sample in &self.manifest.samples {
            samples.push(set.run_sample(0, sample)?);
        }
        Ok(PackReport {
            pack: self.describe(),
            relations: set.program().relations.len(),
            rules: set.program().rules.len(),
            samples,
        })
    }

    /// What `prooflog pack list` shows.
    pub fn describe(&self) -> PackInfo {
        let m = &self.manifest;
        PackInfo {
            name: m.name.clone(),
            version: m.version.clone(),
            description: m.description.clone(),
            dir: self.dir.as_ref().map(|d| d.display().to_string()),
            rules: m.rules.clone(),
            tables: m
                .evidence
                .iter()
                .map(|t| (t.table.clone(), t.predicate.clone()))
                .collect(),
            goals: m
                .goals
                .iter()
                .map(|g| GoalInfo {
                    name: g.name.clone(),
                    goal: g.goal.clone(),
                    question: g.question.clone(),
                })
                .collect(),
            samples: m.samples.iter().map(|s| s.name.clone()).collect(),
        }
    }
}

/// A pack as `prooflog pack list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PackInfo {
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
    /// What it reasons about.
    pub description: String,
    /// Where it was loaded from.
    pub dir: Option<String>,
    /// Rule files, in order.
    pub rules: Vec<String>,
    /// Evidence table → predicate.
    pub tables: BTreeMap<String, String>,
    /// Goals it answers.
    pub goals: Vec<GoalInfo>,
    /// Sample names.
    pub samples: Vec<String>,
}

/// A goal a pack answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GoalInfo {
    /// Its name.
    pub name: String,
    /// Its pattern.
    pub goal: String,
    /// Its question template.
    pub question: String,
}

/// What checking a pack found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PackReport {
    /// The pack.
    pub pack: PackInfo,
    /// Relations of its compiled program.
    pub relations: usize,
    /// Rules of its compiled program.
    pub rules: usize,
    /// One result per sample.
    pub samples: Vec<SampleReport>,
}

impl PackReport {
    /// Whether every sample met its expectations.
    pub fn passed(&self) -> bool {
        self.samples.iter().all(|s| s.passed)
    }
}

/// What running one sample found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleReport {
    /// The sample's name.
    pub name: String,
    /// Whether every expectation held.
    pub passed: bool,
    /// Input facts the sample gave (program facts included).
    pub input_facts: usize,
    /// Facts derived.
    pub derived_facts: usize,
    /// Each expectation and whether it held.
    pub checks: Vec<SampleCheck>,
}

/// One expectation of a sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleCheck {
    /// The goal pattern.
    pub goal: String,
    /// `true`: it must match a fact; `false`: it must match none.
    pub expected: bool,
    /// The facts it matched (at most 5).
    pub matched: Vec<String>,
    /// Whether the expectation held.
    pub passed: bool,
}

/// One evidence mapping, resolved against the compiled program.
#[derive(Debug, Clone)]
struct Mapping {
    rel: RelId,
    args: Vec<ArgSource>,
}

/// Rule packs compiled together into one program.
#[derive(Debug, Clone)]
pub struct PackSet {
    packs: Vec<Pack>,
    program: Arc<Program>,
    /// The program's own facts, numbered.
    program_facts: Vec<InputFact>,
    /// Table → its mapping.
    tables: BTreeMap<String, Mapping>,
    /// (pack, goal) in pack order.
    goals: Vec<(usize, GoalSpec, Goal)>,
}

impl PackSet {
    /// Compile packs together. A relation, rule name, evidence table or goal name
    /// claimed by two packs is a `bad_pack` error naming both.
    pub fn new(packs: Vec<Pack>) -> Result<PackSet> {
        if packs.is_empty() {
            return Err(pack_error("no rule pack was given"));
        }
        // Each pack alone first: its own errors, and what it claims.
        let mut relations: BTreeMap<String, (usize, String)> = BTreeMap::new();
        let mut rules: BTreeMap<String, (usize, String)> = BTreeMap::new();
        let mut problems = Vec::new();
        for (i, pack) in packs.iter().enumerate() {
            for (j, other) in packs.iter().enumerate().take(i) {
                if other.name() == pack.name() {
                    problems.push(Diagnostic::new(
                        ErrorCode::BadPack,
                        format!(
                            "two packs are named `{}` (packs {} and {})",
                            pack.name(),
                            j + 1,
                            i + 1
                        ),
                    ));
                }
            }
            let mut loader = Loader::new();
            pack.add_rules(&mut loader);
            let alone = loader.load()?;
            let program = &alone.program;
            for r in &program.relations {
                let at = locate(program, r.span);
                if let Some((j, first)) = relations.get(&r.name) {
                    problems.push(Diagnostic::new(
                        ErrorCode::BadPack,
                        format!(
                            "relation `{}` belongs to pack `{}` ({first}) and to pack `{}` ({at})",
                            r.name,
                            packs[*j].name(),
                            pack.name()
                        ),
                    ).with_help("rename the relation in one of the packs, or load only one of them"));
                } else {
                    relations.insert(r.name.clone(), (i, at));
                }
            }
            // A default name (`rule:<head>`) clashes only with its head's relation.
            for rule in program
                .rules
                .iter()
                .filter(|r| !r.name.starts_with("rule:"))
            {
                let at = locate(program, rule.span);
                if let Some((j, first)) = rules.get(&rule.name) {
                    problems.push(
                        Diagnostic::new(
                            ErrorCode::BadPack,
                            format!(
                                "rule `{}` is named in pack `{}` ({first}) and in pack `{}` ({at})",
                                rule.name,
                                packs[*j].name(),
                                pack.name()
                            ),
                        )
                        .with_help("give one of the rules another @name"),
                    );
                } else {
                    rules.insert(rule.name.clone(), (i, at));
                }
            }
        }
        let mut tables_seen: BTreeMap<&str, usize> = BTreeMap::new();
        let mut goals_seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, pack) in packs.iter().enumerate() {
            for t in &pack.manifest.evidence {
                if let Some(&j) = tables_seen.get(t.table.as_str()) {
                    problems.push(Diagnostic::new(
                        ErrorCode::BadPack,
                        format!(
                            "evidence table `{}` is mapped by pack `{}` and by pack `{}`",
                            t.table,
                            packs[j].name(),
                            pack.name()
                        ),
                    ));
                } else {
                    tables_seen.insert(&t.table, i);
                }
            }
            for g in &pack.manifest.goals {
                if let Some(&j) = goals_seen.get(g.name.as_str()) {
                    problems.push(Diagnostic::new(
                        ErrorCode::BadPack,
                        format!(
                            "goal `{}` is named by pack `{}` and by pack `{}`",
                            g.name,
                            packs[j].name(),
                            pack.name()
                        ),
                    ));
                } else {
                    goals_seen.insert(&g.name, i);
                }
            }
        }
        if !problems.is_empty() {
            return Err(crate::diag::Error {
                diagnostics: problems,
            });
        }
        let mut loader = Loader::new();
        for pack in &packs {
            pack.add_rules(&mut loader);
        }
        let loaded = loader.load()?;
        let program = loaded.program;
        let mut set = PackSet {
            packs,
            program,
            program_facts: loaded.facts.to_vec(),
            tables: BTreeMap::new(),
            goals: Vec::new(),
        };
        set.resolve()?;
        Ok(set)
    }

    /// Resolve every mapping and goal against the program.
    fn resolve(&mut self) -> Result<()> {
        let mut problems = Vec::new();
        let program = Arc::clone(&self.program);
        for (i, pack) in self.packs.iter().enumerate() {
            for t in &pack.manifest.evidence {
                match resolve_mapping(&program, t) {
                    Ok(rel) => {
                        self.tables.insert(
                            t.table.clone(),
                            Mapping {
                                rel,
                                args: t.args.clone(),
                            },
                        );
                    }
                    Err(message) => problems.push(Diagnostic::new(
                        ErrorCode::BadPack,
                        format!("pack `{}`, table `{}`: {message}", pack.name(), t.table),
                    )),
                }
            }
            for g in &pack.manifest.goals {
                match resolve_goal(&program, g) {
                    Ok(goal) => self.goals.push((i, g.clone(), goal)),
                    Err(message) => problems.push(Diagnostic::new(
                        ErrorCode::BadPack,
                        format!("pack `{}`, goal `{}`: {message}", pack.name(), g.name),
                    )),
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(crate::diag::Error {
                diagnostics: problems,
            })
        }
    }

    /// The packs, in load order.
    pub fn packs(&self) -> &[Pack] {
        &self.packs
    }

    /// The compiled program of every pack.
    pub fn program(&self) -> &Arc<Program> {
        &self.program
    }

    /// The facts the packs' rule files write (numbered as if no evidence were given;
    /// [`PackSet::evaluate`] numbers them with the evidence).
    pub fn program_facts(&self) -> &[InputFact] {
        &self.program_facts
    }

    /// Turn hyperedges into input facts through the packs' table mappings: one fact
    /// per hyperedge, with the hyperedge's identity as provenance. A table no pack
    /// maps, a missing member or attribute, or a value its column cannot hold is a
    /// `bad_input` error naming the hyperedge (by position and table); all or nothing.
    pub fn facts_of(&self, hyperedges: &[Hyperedge]) -> Result<Vec<InputFact>> {
        let mut out = Vec::with_capacity(hyperedges.len());
        let mut problems = Vec::new();
        for (k, h) in hyperedges.iter().enumerate() {
            match self.fact_of(h) {
                Ok(f) => out.push(f),
                Err(message) => problems.push(
                    Diagnostic::new(
                        ErrorCode::BadInput,
                        format!(
                            "hyperedge {} (table {}{}): {message}",
                            k + 1,
                            h.table,
                            h.edge_idx
                                .map(|i| format!(", edge_idx {i}"))
                                .unwrap_or_default()
                        ),
                    )
                    .with_help(format!(
                        "tables the packs map: {}",
                        self.tables.keys().cloned().collect::<Vec<_>>().join(", ")
                    )),
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

    fn fact_of(&self, h: &Hyperedge) -> std::result::Result<InputFact, String> {
        let m = self
            .tables
            .get(&h.table)
            .ok_or_else(|| format!("no pack maps table `{}`", h.table))?;
        let relation = self.program.relation(m.rel);
        let mut args = Vec::with_capacity(m.args.len());
        for (src, col) in m.args.iter().zip(&relation.columns) {
            let raw = match src {
                ArgSource::Member(i) => h
                    .member_ids
                    .get(*i)
                    .cloned()
                    .ok_or_else(|| format!("it has no member {i}"))?,
                ArgSource::Attr(name) => h
                    .attributes
                    .get(name)
                    .cloned()
                    .ok_or_else(|| format!("it has no attribute `{name}`"))?,
                ArgSource::EventTs => h
                    .event_ts
                    .clone()
                    .ok_or_else(|| "it has no event_ts".to_string())?,
                ArgSource::Symbol(s) => serde_json::Value::from(s.clone()),
                ArgSource::Number(n) => serde_json::Value::from(*n),
            };
            let v = json_value(&raw, col.ty).ok_or_else(|| {
                format!(
                    "{raw} does not fit column `{}` ({}) of `{}`",
                    col.name, col.ty, relation.name
                )
            })?;
            args.push(v);
        }
        Ok(InputFact {
            rel: m.rel,
            args,
            confidence: h.confidence.unwrap_or(1.0),
            provenance: h.provenance(),
        })
    }

    /// Every goal of every pack: `(pack name, goal spec)`.
    pub fn goals(&self) -> impl Iterator<Item = (&str, &GoalSpec)> {
        self.goals
            .iter()
            .map(|(p, g, _)| (self.packs[*p].name(), g))
    }

    /// The goal a request names: a pack goal by name (`threatens`, or
    /// `drones/threatens`), or a pattern written out (`threatens(42, zone)`), with the
    /// question to ask about it (the goal's template filled with the pattern's
    /// constants, or `question` when given).
    pub fn request_goal(&self, text: &str) -> Result<RequestGoal> {
        let text = text.trim();
        let by_name = self.goals.iter().find(|(p, g, _)| {
            g.name == text || format!("{}/{}", self.packs[*p].name(), g.name) == text
        });
        if let Some((_, spec, goal)) = by_name {
            return Ok(RequestGoal {
                goal: goal.clone(),
                question: spec.question_for(goal, goal),
                name: Some(spec.name.clone()),
            });
        }
        let goal = parse_goal(text)?;
        let rel = self.program.relation_id(&goal.predicate).ok_or_else(|| {
            crate::diag::Error::from(
                Diagnostic::new(
                    ErrorCode::UnknownRelation,
                    format!("no pack has a goal or relation `{}`", goal.predicate),
                )
                .with_help(format!(
                    "goals: {}",
                    self.goals
                        .iter()
                        .map(|(_, g, _)| g.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            )
        })?;
        let arity = self.program.relation(rel).arity();
        if arity != goal.args.len() {
            return Err(Diagnostic::new(
                ErrorCode::ArityMismatch,
                format!(
                    "`{}` has {arity} columns, the goal gives {}",
                    goal.predicate,
                    goal.args.len()
                ),
            )
            .into());
        }
        let spec = self
            .goals
            .iter()
            .find(|(_, _, g)| g.predicate == goal.predicate);
        let question = match spec {
            Some((_, spec, pattern)) => spec.question_for(pattern, &goal),
            None => format!("Does {} hold?", crate::proof::goal_text(&goal)),
        };
        Ok(RequestGoal {
            goal,
            question,
            name: spec.map(|(_, s, _)| s.name.clone()),
        })
    }

    /// Evaluate the program over its own facts and `evidence` (with provenance). The
    /// program's facts are numbered with the evidence, after its largest explicit
    /// `edge_idx` (as a [`Loader`] numbers them), so they never take an index the
    /// evidence gives.
    pub fn evaluate(&self, evidence: &[InputFact], options: &EvalOptions) -> Result<FactBase> {
        let mut all: Vec<InputFact> = self
            .program_facts
            .iter()
            .map(|f| {
                let mut f = f.clone();
                f.provenance.edge_idx = None;
                f
            })
            .collect();
        all.extend_from_slice(evidence);
        let options = EvalOptions {
            provenance: true,
            ..options.clone()
        };
        crate::eval::evaluate(Arc::clone(&self.program), &all, &options)
    }

    /// The input facts of a sample of pack `pack`: its fact JSONL and its hyperedges.
    pub fn sample_inputs(&self, pack: usize, sample: &Sample) -> Result<Vec<InputFact>> {
        let p = &self.packs[pack];
        let mut facts = Vec::new();
        if let Some(file) = &sample.evidence {
            let mut loader = Loader::new();
            loader.evidence_jsonl(&p.path_of(file), p.file(file).unwrap_or_default())?;
            let raw = loader.inputs().clone();
            facts.extend(
                raw.resolve(&self.program)?
                    .into_iter()
                    .filter(|f| f.provenance.source != "program"),
            );
        }
        if let Some(file) = &sample.hyperedges {
            let hs = read_hyperedges(&p.path_of(file), p.file(file).unwrap_or_default())?;
            facts.extend(self.facts_of(&hs)?);
        }
        Ok(facts)
    }

    /// Run one sample of pack `pack`.
    fn run_sample(&self, pack: usize, sample: &Sample) -> Result<SampleReport> {
        let inputs = self.sample_inputs(pack, sample)?;
        let fb = self.evaluate(&inputs, &EvalOptions::default())?;
        let mut checks = Vec::new();
        for (goals, expected) in [(&sample.expect, true), (&sample.absent, false)] {
            for text in goals {
                let goal = parse_goal(text)?;
                let matches = fb.query(&goal)?;
                let passed = matches.is_empty() != expected;
                checks.push(SampleCheck {
                    goal: text.clone(),
                    expected,
                    matched: matches
                        .iter()
                        .take(5)
                        .map(|m| fb.fact_text(m.fact))
                        .collect(),
                    passed,
                });
            }
        }
        Ok(SampleReport {
            name: sample.name.clone(),
            passed: checks.iter().all(|c| c.passed),
            input_facts: fb.stats().input_facts,
            derived_facts: fb.stats().derived_facts(),
            checks,
        })
    }
}

/// A goal of a request, with the question it answers.
#[derive(Debug, Clone)]
pub struct RequestGoal {
    /// The pattern to prove.
    pub goal: Goal,
    /// The question, in words.
    pub question: String,
    /// The pack goal it instantiates, if any.
    pub name: Option<String>,
}

fn locate(program: &Program, span: crate::diag::Span) -> String {
    if (span.file as usize) < program.sources.files().len() {
        let l = program.sources.locate(span);
        format!("{}:{}", l.file, l.line)
    } else {
        "?".into()
    }
}

fn resolve_mapping(program: &Program, t: &TableMapping) -> std::result::Result<RelId, String> {
    let rel = program
        .relation_id(&t.predicate)
        .ok_or_else(|| format!("the rules have no relation `{}`", t.predicate))?;
    let arity = program.relation(rel).arity();
    if t.args.len() != arity {
        return Err(format!(
            "`{}` has {arity} columns, the mapping gives {}",
            t.predicate,
            t.args.len()
        ));
    }
    Ok(rel)
}

fn resolve_goal(program: &Program, g: &GoalSpec) -> std::result::Result<Goal, String> {
    let goal = parse_goal(&g.goal).map_err(|e| e.to_string())?;
    crate::check::resolve_goal(program, &goal).map_err(|e| e.to_string())?;
    Ok(goal)
}

/// A JSON value as a value of column type `ty`: a number or a boolean in a symbol
/// column is its text, a string is read as the column's type reads text
/// ([`ColumnType::parse`]), and anything else goes through the one coercion
/// ([`ColumnType::coerce`]), so numbers enter numeric columns only exactly.
fn json_value(v: &serde_json::Value, ty: ColumnType) -> Option<Value> {
    use serde_json::Value as J;
    match (v, ty) {
        (J::Number(n), ColumnType::Symbol) => Some(Value::Symbol(n.to_string())),
        (J::Bool(b), ColumnType::Symbol) => Some(Value::Symbol(b.to_string())),
        (J::String(s), _) => ty.parse(s),
        _ => Value::from_json(v).and_then(|x| ty.coerce(&x)),
    }
}

impl GoalSpec {
    /// The question for `goal`, an instance of this spec's `pattern`: each `{var}` of
    /// the template is the value `goal` gives at that variable's position (symbols
    /// without quotes); a variable the goal leaves open stays as its name.
    pub fn question_for(&self, pattern: &Goal, goal: &Goal) -> String {
        let mut q = self.question.clone();
        for (p, g) in pattern.args.iter().zip(&goal.args) {
            if let GoalArg::Var(name) = p {
                let value = match g {
                    GoalArg::Const(Value::Symbol(s)) => s.clone(),
                    GoalArg::Const(v) => v.to_string(),
                    GoalArg::Var(n) => n.clone(),
                    GoalArg::Wildcard => name.clone(),
                };
                q = q.replace(&format!("{{{name}}}"), &value);
            }
        }
        q
    }
}

#[cfg(test)]
mod tests;
