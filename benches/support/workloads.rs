//! Deterministic benchmark workloads shared by `benches/workloads.rs` and
//! `examples/workload.rs`: each is a Soufflé-compatible program and its input facts
//! (integer columns only, so that every peer engine can read the same files), drawn
//! with a fixed-seed splitmix64.
//!
//! Workloads: transitive closure (random 2k/4k and 8k/16k, chain 1k), weighted
//! transitive closure (confidences drawn from six values; 1k/2k and 2k/4k), same
//! generation, Andersen-style points-to, a CSPA-like value-flow analysis and a
//! LUBM-like university with LUBM-style rules. The per-request overlay workload
//! reuses the TC graph (see `benches/workloads.rs`).

#![allow(dead_code)]

use std::sync::Arc;

use prooflog::Value;
use prooflog::check::TypeHints;
use prooflog::diag::SourceMap;
use prooflog::eval::{EvalOptions, evaluate};
use prooflog::ir::Program;
use prooflog::store::{InputFact, Provenance};

#[path = "digest.rs"]
mod digest;

#[path = "max_conf.rs"]
mod max_conf;

use max_conf::MaxConf;

/// A workload: a program, its facts, and the relation whose size is reported.
pub struct Workload {
    /// Short name (`tc_2k`, `sg`, …).
    pub name: &'static str,
    /// The program (Soufflé syntax; `.input`/`.output` declarations included).
    pub program: String,
    /// Input facts: relation name, rows, and one confidence per row.
    pub facts: Vec<(&'static str, Vec<Vec<u32>>)>,
    /// Confidences for the rows of `facts[0]` when the workload is weighted.
    pub confidences: Option<Vec<f64>>,
    /// The relation whose row count is the workload's answer.
    pub output: &'static str,
}

/// A fixed-seed splitmix64 generator.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u32) -> u32 {
        (self.next_u64() % u64::from(n)) as u32
    }
}

/// `count` distinct pairs over `0..n` (no pair `(a, a)`), sorted.
pub fn distinct_pairs(rng: &mut Rng, n: u32, count: usize) -> Vec<(u32, u32)> {
    let mut set = std::collections::BTreeSet::new();
    while set.len() < count {
        let a = rng.below(n);
        let b = rng.below(n);
        if a != b {
            set.insert((a, b));
        }
    }
    set.into_iter().collect()
}

fn rows(pairs: &[(u32, u32)]) -> Vec<Vec<u32>> {
    pairs.iter().map(|&(a, b)| vec![a, b]).collect()
}

const TC: &str = "\
.decl edge(src: number, dst: number)
.input edge
.decl path(src: number, dst: number)
.output path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
";

/// Transitive closure over a random graph (`nodes`, `edges`, fixed seed 0x5eed:
/// the same graph as `benches/support/tc.rs`).
pub fn tc_random(name: &'static str, nodes: u32, edges: usize) -> Workload {
    let pairs = distinct_pairs(&mut Rng::new(0x5eed), nodes, edges);
    Workload {
        name,
        program: TC.into(),
        facts: vec![("edge", rows(&pairs))],
        confidences: None,
        output: "path",
    }
}

/// Transitive closure over a chain of `nodes` nodes.
pub fn tc_chain(nodes: u32) -> Workload {
    let pairs: Vec<(u32, u32)> = (0..nodes.saturating_sub(1)).map(|i| (i, i + 1)).collect();
    Workload {
        name: "tc_chain_1k",
        program: TC.into(),
        facts: vec![("edge", rows(&pairs))],
        confidences: None,
        output: "path",
    }
}

/// Transitive closure with edge confidences drawn from 0.5, 0.6, …, 1.0: facts improve
/// during the fixpoint, and provenance re-selects derivations.
pub fn tc_weighted(name: &'static str, nodes: u32, edges: usize) -> Workload {
    let mut w = tc_random(name, nodes, edges);
    let mut rng = Rng::new(0xc0ff_ee00);
    let n = w.facts[0].1.len();
    w.confidences = Some(
        (0..n)
            .map(|_| 0.5 + 0.1 * f64::from(rng.below(6)))
            .collect(),
    );
    w
}

/// Same generation over a forest: `nodes` people, each (but the roots) with one
/// parent drawn among the previous `window` people.
pub fn same_generation(nodes: u32, window: u32) -> Workload {
    let mut rng = Rng::new(0x5a3e);
    let mut parent = Vec::new();
    for c in 1..nodes {
        if c % 50 == 0 {
            continue; // a new root now and then: a forest
        }
        let lo = c.saturating_sub(window);
        parent.push((c, lo + rng.below(c - lo)));
    }
    Workload {
        name: "sg",
        program: "\
.decl parent(child: number, parent: number)
.input parent
.decl sg(x: number, y: number)
.output sg
sg(x, y) :- parent(x, p), parent(y, p), x != y.
sg(x, y) :- parent(x, xp), sg(xp, yp), parent(y, yp).
"
        .into(),
        facts: vec![("parent", rows(&parent))],
        confidences: None,
        output: "sg",
    }
}

/// Andersen-style inclusion-based points-to over `vars` variables (the first tenth
/// of them also heap objects).
pub fn points_to(name: &'static str, vars: u32, statements: usize) -> Workload {
    let mut rng = Rng::new(0xa11d);
    let objects = (vars / 10).max(1);
    let mut address_of = std::collections::BTreeSet::new();
    let mut assign = std::collections::BTreeSet::new();
    let mut load = std::collections::BTreeSet::new();
    let mut store = std::collections::BTreeSet::new();
    for _ in 0..statements {
        let a = rng.below(vars);
        match rng.below(10) {
            0..=2 => {
                address_of.insert((a, rng.below(objects)));
            }
            3..=6 => {
                assign.insert((a, rng.below(vars)));
            }
            7 | 8 => {
                load.insert((a, rng.below(vars)));
            }
            _ => {
                store.insert((a, rng.below(vars)));
            }
        }
    }
    let v = |s: std::collections::BTreeSet<(u32, u32)>| rows(&s.into_iter().collect::<Vec<_>>());
    Workload {
        name,
        program: "\
.decl address_of(p: number, o: number)
.input address_of
.decl assign(a: number, b: number)
.input assign
.decl load(a: number, b: number)
.input load
.decl store(a: number, b: number)
.input store
.decl points_to(p: number, o: number)
.output points_to
points_to(a, o) :- address_of(a, o).
points_to(a, o) :- assign(a, b), points_to(b, o).
points_to(a, o) :- load(a, b), points_to(b, p), points_to(p, o).
points_to(p, o) :- store(a, b), points_to(a, p), points_to(b, o).
"
        .into(),
        facts: vec![
            ("address_of", v(address_of)),
            ("assign", v(assign)),
            ("load", v(load)),
            ("store", v(store)),
        ],
        confidences: None,
        output: "points_to",
    }
}

/// A CSPA-like (context-sensitive points-to, here context-free) value-flow and alias
/// analysis over `vars` variables.
pub fn cspa(name: &'static str, vars: u32, assigns: usize, derefs: usize) -> Workload {
    let mut rng = Rng::new(0xc5ba);
    let assign = distinct_pairs(&mut rng, vars, assigns);
    let dereference = distinct_pairs(&mut rng, vars, derefs);
    Workload {
        name,
        program: "\
.decl assign(a: number, b: number)
.input assign
.decl dereference(a: number, b: number)
.input dereference
.decl value_flow(a: number, b: number)
.output value_flow
.decl memory_alias(a: number, b: number)
.output memory_alias
.decl value_alias(a: number, b: number)
.output value_alias
value_flow(y, x) :- assign(y, x).
value_flow(x, y) :- assign(x, z), memory_alias(z, y).
value_flow(x, y) :- value_flow(x, z), value_flow(z, y).
memory_alias(x, w) :- dereference(y, x), value_alias(y, z), dereference(z, w).
value_alias(x, y) :- value_flow(z, x), value_flow(z, y).
value_alias(x, y) :- value_flow(z, x), memory_alias(z, w), value_flow(w, y).
value_flow(x, x) :- assign(x, _).
value_flow(x, x) :- assign(_, x).
memory_alias(x, x) :- assign(_, x).
memory_alias(x, x) :- assign(x, _).
"
        .into(),
        facts: vec![
            ("assign", rows(&assign)),
            ("dereference", rows(&dereference)),
        ],
        confidences: None,
        output: "value_alias",
    }
}

/// A LUBM-like university: `universities` universities with departments, faculty,
/// students and courses, numbered densely; the rules are LUBM's class and property
/// hierarchy (subclasses, `memberOf` from `worksFor`, transitive `subOrganizationOf`)
/// plus a few of its queries as rules.
pub fn lubm(universities: u32) -> Workload {
    let mut rng = Rng::new(0x1b3);
    let mut next = 0u32;
    let mut id = || {
        next += 1;
        next
    };
    let mut f: std::collections::BTreeMap<&'static str, Vec<Vec<u32>>> = Default::default();
    let mut push = |rel: &'static str, row: Vec<u32>| f.entry(rel).or_default().push(row);
    for _ in 0..universities {
        let u = id();
        push("university", vec![u]);
        for _ in 0..15 {
            let d = id();
            push("department", vec![d]);
            push("sub_organization_of", vec![d, u]);
            let g = id();
            push("research_group", vec![g]);
            push("sub_organization_of", vec![g, d]);
            let mut faculty = Vec::new();
            let mut courses = Vec::new();
            let mut grad_courses = Vec::new();
            for (kind, n) in [
                ("full_professor", 7),
                ("associate_professor", 10),
                ("assistant_professor", 8),
                ("lecturer", 5),
            ] {
                for _ in 0..n {
                    let p = id();
                    push(kind, vec![p]);
                    push("works_for", vec![p, d]);
                    push("degree_from", vec![p, 1 + rng.below(u)]);
                    let c = id();
                    push("course", vec![c]);
                    push("teacher_of", vec![p, c]);
                    courses.push(c);
                    if kind != "lecturer" {
                        let gc = id();
                        push("graduate_course", vec![gc]);
                        push("teacher_of", vec![p, gc]);
                        grad_courses.push(gc);
                    }
                    faculty.push(p);
                }
            }
            push("head_of", vec![faculty[0], d]);
            let professors = &faculty[..25];
            for _ in 0..120 {
                let s = id();
                push("undergraduate_student", vec![s]);
                push("member_of", vec![s, d]);
                for _ in 0..3 {
                    push(
                        "takes_course",
                        vec![s, courses[rng.below(courses.len() as u32) as usize]],
                    );
                }
                if rng.below(5) == 0 {
                    push("advisor", vec![s, professors[rng.below(25) as usize]]);
                }
            }
            for _ in 0..30 {
                let s = id();
                push("graduate_student", vec![s]);
                push("member_of", vec![s, d]);
                push("undergraduate_degree_from", vec![s, 1 + rng.below(u)]);
                push("advisor", vec![s, professors[rng.below(25) as usize]]);
                for _ in 0..2 {
                    push(
                        "takes_course",
                        vec![
                            s,
                            grad_courses[rng.below(grad_courses.len() as u32) as usize],
                        ],
                    );
                }
                if rng.below(4) == 0 {
                    push(
                        "teaching_assistant_of",
                        vec![s, courses[rng.below(courses.len() as u32) as usize]],
                    );
                }
            }
        }
    }
    let unary = [
        "university",
        "department",
        "research_group",
        "full_professor",
        "associate_professor",
        "assistant_professor",
        "lecturer",
        "course",
        "graduate_course",
        "undergraduate_student",
        "graduate_student",
    ];
    let binary = [
        "sub_organization_of",
        "works_for",
        "degree_from",
        "teacher_of",
        "head_of",
        "member_of",
        "takes_course",
        "advisor",
        "undergraduate_degree_from",
        "teaching_assistant_of",
    ];
    let mut program = String::new();
    for r in unary {
        program.push_str(&format!(".decl {r}(x: number)\n.input {r}\n"));
    }
    for r in binary {
        program.push_str(&format!(".decl {r}(x: number, y: number)\n.input {r}\n"));
    }
    program.push_str(
        "\
.decl organization(x: number)
.decl professor(x: number)
.decl faculty(x: number)
.decl student(x: number)
.decl person(x: number)
.decl chair(x: number)
.decl employee(x: number)
.decl sub_org(x: number, y: number)
.decl member(x: number, y: number)
.decl degree(x: number, y: number)
.decl teaching(x: number, y: number)
.decl q_alumni(x: number, u: number)
.decl q_students_of_univ(x: number, u: number)
.decl q_coadvised(s: number, t: number)
.decl q_taught_by_advisor(s: number, c: number)
.output person
.output sub_org
.output member
.output q_alumni
.output q_students_of_univ
.output q_coadvised
.output q_taught_by_advisor
organization(x) :- university(x).
organization(x) :- department(x).
organization(x) :- research_group(x).
professor(x) :- full_professor(x).
professor(x) :- associate_professor(x).
professor(x) :- assistant_professor(x).
faculty(x) :- professor(x).
faculty(x) :- lecturer(x).
student(x) :- undergraduate_student(x).
student(x) :- graduate_student(x).
student(x) :- takes_course(x, _).
employee(x) :- works_for(x, y), organization(y).
person(x) :- faculty(x).
person(x) :- student(x).
person(x) :- employee(x).
chair(x) :- head_of(x, d), department(d).
sub_org(x, y) :- sub_organization_of(x, y).
sub_org(x, z) :- sub_org(x, y), sub_organization_of(y, z).
member(x, y) :- member_of(x, y).
member(x, y) :- works_for(x, y).
member(x, z) :- member(x, y), sub_org(y, z).
degree(x, u) :- degree_from(x, u).
degree(x, u) :- undergraduate_degree_from(x, u).
teaching(p, c) :- teacher_of(p, c).
q_alumni(x, u) :- person(x), degree(x, u), university(u).
q_students_of_univ(x, u) :- student(x), member(x, u), university(u).
q_coadvised(s, t) :- advisor(s, p), advisor(t, p), s != t, graduate_student(s), graduate_student(t).
q_taught_by_advisor(s, c) :- advisor(s, p), teaching(p, c), takes_course(s, c).
",
    );
    Workload {
        name: "lubm_2u",
        program,
        facts: f.into_iter().collect(),
        confidences: None,
        output: "member",
    }
}

/// Every workload at its benchmark size.
pub fn all() -> Vec<Workload> {
    NAMES
        .iter()
        .map(|&name| {
            let w = by_name(name).expect("every name has a workload");
            assert_eq!(w.name, name, "a workload generated under another name");
            w
        })
        .collect()
}

/// The workloads' names, in the order of [`all`].
pub const NAMES: &[&str] = &[
    "tc_2k",
    "tc_8k",
    "tc_chain_1k",
    "tc_weighted_1k",
    "tc_weighted_2k",
    "sg",
    "points_to",
    "points_to_3k",
    "cspa",
    "cspa_4x",
    "lubm_2u",
];

/// Workloads too large to run by default (tens of millions of rows: gigabytes).
pub const HEAVY: &[&str] = &["tc_8k", "points_to_3k", "cspa_4x"];

/// One workload by name.
pub fn by_name(name: &str) -> Option<Workload> {
    // Only the one asked for is generated: a process that runs one workload holds
    // no other's facts (its peak memory is the workload's).
    Some(match name {
        "tc_2k" => tc_random("tc_2k", 2_000, 4_000),
        "tc_8k" => tc_random("tc_8k", 8_000, 16_000),
        "tc_chain_1k" => tc_chain(1_000),
        "tc_weighted_1k" => tc_weighted("tc_weighted_1k", 1_000, 2_000),
        "tc_weighted_2k" => tc_weighted("tc_weighted_2k", 2_000, 4_000),
        "sg" => same_generation(2_000, 40),
        "points_to" => points_to("points_to", 1_000, 1_600),
        "points_to_3k" => points_to("points_to_3k", 3_000, 6_000),
        "cspa" => cspa("cspa", 150, 170, 50),
        "cspa_4x" => cspa("cspa_4x", 600, 680, 200),
        "lubm_2u" => lubm(2),
        _ => return None,
    })
}

/// A compiled workload with its facts as prooflog input.
pub struct Prepared {
    /// The checked program.
    pub program: Arc<Program>,
    /// The input facts, numbered by `edge_idx` in order.
    pub inputs: Vec<InputFact>,
}

/// Compile a workload and turn its facts into prooflog input.
pub fn prepare(w: &Workload) -> Prepared {
    let mut sources = SourceMap::new();
    sources.add(format!("{}.dl", w.name), w.program.as_str());
    let program = match prooflog::check::compile(sources, &TypeHints::new()) {
        Ok(p) => Arc::new(p),
        Err(e) => panic!("{} program rejected: {e}", w.name),
    };
    let mut inputs = Vec::new();
    for (k, (rel, rows)) in w.facts.iter().enumerate() {
        let id = program.relation_id(rel).expect("input relation");
        for (i, row) in rows.iter().enumerate() {
            let confidence = match (&w.confidences, k) {
                (Some(c), 0) => c[i],
                _ => 1.0,
            };
            inputs.push(InputFact {
                rel: id,
                args: row.iter().map(|&v| Value::Number(i64::from(v))).collect(),
                confidence,
                provenance: Provenance {
                    source: "facts".into(),
                    edge_idx: Some(inputs.len() as u64),
                    ..Provenance::default()
                },
            });
        }
    }
    Prepared { program, inputs }
}

/// Evaluate with prooflog; returns the row count of the workload's output relation.
pub fn run_prooflog(w: &Workload, prepared: &Prepared, provenance: bool, threads: usize) -> usize {
    let fb = evaluate_prooflog(w, prepared, provenance, threads);
    if std::env::var_os("WORKLOAD_STATS").is_some() {
        for (i, s) in fb.stats().strata.iter().enumerate() {
            eprintln!(
                "stratum {i}: {} rounds, {} derived, {} improved, {} derivations",
                s.rounds, s.derived, s.improved, s.derivations
            );
        }
    }
    if let Some(how) = std::env::var_os("WORKLOAD_DIGEST") {
        eprintln!("digest {:016x}", digest::digest(&fb, how != "ranks"));
    }
    if answer_wanted() {
        print_answer(output_rows(w, &fb));
    }
    fb.len(fb.relation_id(w.output).expect("output relation"))
}

/// Evaluate a prepared workload with prooflog.
pub fn evaluate_prooflog(
    w: &Workload,
    prepared: &Prepared,
    provenance: bool,
    threads: usize,
) -> prooflog::eval::FactBase {
    // A benchmark measures the whole evaluation: no limit (the service defaults stop
    // tc_8k at 2 GiB).
    let options = EvalOptions::default()
        .with_provenance(provenance)
        .with_threads(threads)
        .with_budget(prooflog::eval::Budget::unlimited());
    match evaluate(Arc::clone(&prepared.program), &prepared.inputs, &options) {
        Ok(fb) => fb,
        Err(e) => panic!("{} evaluation failed: {e}", w.name),
    }
}

/// The rows of a workload's (binary) output relation with their confidences, in
/// value order.
pub fn output_rows(w: &Workload, fb: &prooflog::eval::FactBase) -> Vec<(u32, u32, f64)> {
    let out = fb.relation_id(w.output).expect("output relation");
    let mut rows: Vec<_> = fb
        .facts(out)
        .map(|f| match fb.args(f)[..] {
            [Value::Number(a), Value::Number(b)] => (a as u32, b as u32, fb.confidence(f)),
            ref other => panic!("{}: a row {other:?} of two numbers expected", w.name),
        })
        .collect();
    rows.sort_by_key(|&(a, b, _)| (a, b));
    rows
}

/// Whether `WORKLOAD_ANSWER` asks for the digest of the output relation's rows with
/// their confidences ([`print_answer`]).
fn answer_wanted() -> bool {
    std::env::var_os("WORKLOAD_ANSWER").is_some()
}

/// Print a digest of a binary output relation's rows with their confidences, in
/// value order: what prooflog and ascent must agree on.
fn print_answer(rows: Vec<(u32, u32, f64)>) {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (a, b, c) in rows {
        (a, b, c.to_bits()).hash(&mut h);
    }
    eprintln!("answer {:016x}", h.finish());
}

fn pairs(w: &Workload, rel: &str) -> Vec<(u32, u32)> {
    w.facts
        .iter()
        .find(|(r, _)| *r == rel)
        .map(|(_, rows)| rows.iter().map(|r| (r[0], r[1])).collect())
        .unwrap_or_default()
}

ascent::ascent! {
    struct AscentTc;
    relation edge(u32, u32);
    relation path(u32, u32);
    path(x, y) <-- edge(x, y);
    path(x, z) <-- path(x, y), edge(y, z);
}

ascent::ascent! {
    /// The weighted closure: a path's confidence is the best over its derivations
    /// of the least edge confidence along them (the workload's rules have
    /// confidence 1), as prooflog computes it.
    struct AscentWeightedTc;
    relation edge(u32, u32, MaxConf);
    lattice path(u32, u32, MaxConf);
    path(x, y, c) <-- edge(x, y, c);
    path(x, z, MaxConf(c1.0.min(c2.0))) <-- path(x, y, c1), edge(y, z, c2);
}

ascent::ascent! {
    struct AscentSg;
    relation parent(u32, u32);
    relation sg(u32, u32);
    sg(x, y) <-- parent(x, p), parent(y, p), if x != y;
    sg(x, y) <-- parent(x, xp), sg(xp, yp), parent(y, yp);
}

ascent::ascent! {
    struct AscentPointsTo;
    relation address_of(u32, u32);
    relation assign(u32, u32);
    relation load(u32, u32);
    relation store(u32, u32);
    relation points_to(u32, u32);
    points_to(a, o) <-- address_of(a, o);
    points_to(a, o) <-- assign(a, b), points_to(b, o);
    points_to(a, o) <-- load(a, b), points_to(b, p), points_to(p, o);
    points_to(p, o) <-- store(a, b), points_to(a, p), points_to(b, o);
}

ascent::ascent! {
    struct AscentCspa;
    relation assign(u32, u32);
    relation dereference(u32, u32);
    relation value_flow(u32, u32);
    relation memory_alias(u32, u32);
    relation value_alias(u32, u32);
    value_flow(y, x) <-- assign(y, x);
    value_flow(x, y) <-- assign(x, z), memory_alias(z, y);
    value_flow(x, y) <-- value_flow(x, z), value_flow(z, y);
    memory_alias(x, w) <-- dereference(y, x), value_alias(y, z), dereference(z, w);
    value_alias(x, y) <-- value_flow(z, x), value_flow(z, y);
    value_alias(x, y) <-- value_flow(z, x), memory_alias(z, w), value_flow(w, y);
    value_flow(x, x) <-- assign(x, _);
    value_flow(x, x) <-- assign(_, x);
    memory_alias(x, x) <-- assign(_, x);
    memory_alias(x, x) <-- assign(x, _);
}

/// The output relations ascent versions exist for (weighted: `path` only).
const ASCENT_OUTPUTS: &[&str] = &["path", "sg", "points_to", "value_alias"];

/// Whether the workload has an ascent version, without running it.
pub fn has_ascent(w: &Workload) -> bool {
    if w.confidences.is_some() {
        w.output == "path"
    } else {
        ASCENT_OUTPUTS.contains(&w.output)
    }
}

/// Evaluate with ascent; returns the row count of the output relation, or `None`
/// for workloads without an ascent version (LUBM). Weighted TC runs as an ascent
/// lattice.
pub fn run_ascent(w: &Workload) -> Option<usize> {
    let out = ascent_output(w)?;
    if answer_wanted() {
        print_answer(out.rows());
    }
    Some(out.len())
}

/// The output relation of an ascent run.
pub enum AscentOutput {
    Plain(Vec<(u32, u32)>),
    Weighted(Vec<(u32, u32, MaxConf)>),
}

impl AscentOutput {
    pub fn len(&self) -> usize {
        match self {
            AscentOutput::Plain(rows) => rows.len(),
            AscentOutput::Weighted(rows) => rows.len(),
        }
    }

    /// The rows with their confidences (1 when unweighted), in value order.
    pub fn rows(&self) -> Vec<(u32, u32, f64)> {
        let mut rows: Vec<_> = match self {
            AscentOutput::Plain(rows) => rows.iter().map(|&(a, b)| (a, b, 1.0)).collect(),
            AscentOutput::Weighted(rows) => rows.iter().map(|&(a, b, c)| (a, b, c.0)).collect(),
        };
        rows.sort_by_key(|&(a, b, _)| (a, b));
        rows
    }
}

/// Evaluate with ascent: the output relation, or `None` for workloads without an
/// ascent version.
pub fn ascent_output(w: &Workload) -> Option<AscentOutput> {
    if !has_ascent(w) {
        return None;
    }
    if let Some(confs) = &w.confidences {
        let edges = pairs(w, "edge");
        let mut p = AscentWeightedTc {
            edge: edges
                .into_iter()
                .zip(confs)
                .map(|((a, b), &c)| (a, b, MaxConf(c)))
                .collect(),
            ..Default::default()
        };
        p.run();
        return Some(AscentOutput::Weighted(std::mem::take(&mut p.path)));
    }
    let rows = match w.output {
        "path" => {
            let mut p = AscentTc {
                edge: pairs(w, "edge"),
                ..Default::default()
            };
            p.run();
            std::mem::take(&mut p.path)
        }
        "sg" => {
            let mut p = AscentSg {
                parent: pairs(w, "parent"),
                ..Default::default()
            };
            p.run();
            std::mem::take(&mut p.sg)
        }
        "points_to" => {
            let mut p = AscentPointsTo {
                address_of: pairs(w, "address_of"),
                assign: pairs(w, "assign"),
                load: pairs(w, "load"),
                store: pairs(w, "store"),
                ..Default::default()
            };
            p.run();
            std::mem::take(&mut p.points_to)
        }
        "value_alias" => {
            let mut p = AscentCspa {
                assign: pairs(w, "assign"),
                dereference: pairs(w, "dereference"),
                ..Default::default()
            };
            p.run();
            std::mem::take(&mut p.value_alias)
        }
        other => unreachable!("{other} is in ASCENT_OUTPUTS without a version"),
    };
    Some(AscentOutput::Plain(rows))
}

/// Write the workload as Soufflé reads it: `DIR/NAME.dl` and one tab-separated
/// `DIR/NAME/REL.facts` per input relation; weighted workloads also get
/// `DIR/NAME.json` with per-row confidences (for prooflog only).
pub fn dump(w: &Workload, dir: &std::path::Path) -> std::io::Result<()> {
    use std::fmt::Write as _;
    let facts_dir = dir.join(w.name);
    std::fs::create_dir_all(&facts_dir)?;
    std::fs::write(dir.join(format!("{}.dl", w.name)), &w.program)?;
    for (rel, rows) in &w.facts {
        let mut text = String::new();
        for row in rows {
            let cells: Vec<String> = row.iter().map(u32::to_string).collect();
            let _ = writeln!(text, "{}", cells.join("\t"));
        }
        std::fs::write(facts_dir.join(format!("{rel}.facts")), text)?;
    }
    if let Some(conf) = &w.confidences {
        let (rel, rows) = &w.facts[0];
        let records: Vec<String> = rows
            .iter()
            .zip(conf)
            .map(|(r, c)| format!("{{\"args\": [{}, {}], \"confidence\": {c}}}", r[0], r[1]))
            .collect();
        std::fs::write(
            dir.join(format!("{}.json", w.name)),
            format!("{{\"{rel}\": [{}]}}\n", records.join(", ")),
        )?;
    }
    Ok(())
}
