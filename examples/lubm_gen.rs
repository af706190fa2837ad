//! A deterministic LUBM-style university data set and rules, for timing evaluation
//! on data of the shape a Soufflé user benchmarks with.
//!
//! `cargo run --release --example lubm_gen -- DIR [UNIVERSITIES]` writes into `DIR`:
//! - `lubm.dl`: LUBM-style rules (membership up the organisation tree, students,
//!   who teaches whom, the advisor/course query Q9, colleagues, course counts);
//! - `facts.json`: every fact in one JSON document (`--facts DIR/facts.json`);
//! - `facts/<rel>.facts`: the same facts as Soufflé's tab-separated files
//!   (`-F DIR/facts`), for the `.input` relations.
//!
//! The data also has relations no rule reads (`name`, `emailAddress`,
//! `telephone`, `researchInterest`): extensional data, as in LUBM's generator.
//! One university (the default) is about 100,000 facts (100,936). Then time it, e.g.:
//! `prooflog run DIR/lubm.dl -F DIR/facts --count`.

use std::fmt::Write as _;
use std::path::PathBuf;

const RULES: &str = "\
// LUBM-style rules over the generated university data.
.decl worksFor(p: symbol, d: symbol)
.decl subOrganizationOf(a: symbol, b: symbol)
.decl takesCourse(s: symbol, c: symbol)
.decl teacherOf(p: symbol, c: symbol)
.decl advisor(s: symbol, p: symbol)
.input worksFor, subOrganizationOf, takesCourse, teacherOf, advisor
.output memberOf, student, taughtBy, q9, colleague, courseLoad

memberOf(p, o) :- worksFor(p, o).
memberOf(p, u) :- memberOf(p, d), subOrganizationOf(d, u).
student(s) :- takesCourse(s, _).
taughtBy(s, p) :- takesCourse(s, c), teacherOf(p, c).
q9(s, a, c) :- advisor(s, a), teacherOf(a, c), takesCourse(s, c).
colleague(a, b) :- worksFor(a, d), worksFor(b, d), a != b.
courseLoad(s, n) :- student(s), n = count : { takesCourse(s, _) }.
";

/// splitmix64: the same sequence on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Default)]
struct Facts {
    rels: Vec<(&'static str, Vec<Vec<String>>)>,
}

impl Facts {
    fn add(&mut self, rel: &'static str, args: &[String]) {
        match self.rels.iter_mut().find(|(r, _)| *r == rel) {
            Some((_, rows)) => rows.push(args.to_vec()),
            None => self.rels.push((rel, vec![args.to_vec()])),
        }
    }

    fn len(&self) -> usize {
        self.rels.iter().map(|(_, r)| r.len()).sum()
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().unwrap_or_else(|| "lubm".into()));
    let universities: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let mut rng = Rng(42);
    let mut f = Facts::default();
    for u in 0..universities {
        let univ = format!("University{u}");
        f.add("name", &[univ.clone(), format!("University {u}")]);
        for d in 0..15 {
            let dept = format!("Department{d}.{univ}");
            f.add("subOrganizationOf", &[dept.clone(), univ.clone()]);
            for g in 0..3 {
                let group = format!("ResearchGroup{g}.{dept}");
                f.add("subOrganizationOf", &[group, dept.clone()]);
            }
            let profs: Vec<String> = (0..25).map(|p| format!("Professor{p}.{dept}")).collect();
            let courses: Vec<String> = (0..60).map(|c| format!("Course{c}.{dept}")).collect();
            for (i, p) in profs.iter().enumerate() {
                f.add("worksFor", &[p.clone(), dept.clone()]);
                f.add("name", &[p.clone(), format!("Prof {i} of {dept}")]);
                f.add("emailAddress", &[p.clone(), format!("prof{i}@{dept}.edu")]);
                f.add(
                    "telephone",
                    &[p.clone(), format!("+1-555-{:04}", rng.below(10_000))],
                );
                f.add(
                    "researchInterest",
                    &[p.clone(), format!("Research{}", rng.below(30))],
                );
                for c in [i * 2, i * 2 + 1] {
                    f.add(
                        "teacherOf",
                        &[p.clone(), courses[c % courses.len()].clone()],
                    );
                }
            }
            for st in 0..1100 {
                let stud = format!("Student{st}.{dept}");
                f.add("name", &[stud.clone(), format!("Student {st}")]);
                f.add(
                    "emailAddress",
                    &[stud.clone(), format!("stud{st}@{dept}.edu")],
                );
                let adv = &profs[rng.below(profs.len() as u64) as usize];
                f.add("advisor", &[stud.clone(), adv.clone()]);
                for _ in 0..3 {
                    let c = &courses[rng.below(50) as usize];
                    f.add("takesCourse", &[stud.clone(), c.clone()]);
                }
            }
        }
    }
    std::fs::create_dir_all(dir.join("facts")).expect("create the output directory");
    std::fs::write(dir.join("lubm.dl"), RULES).expect("write lubm.dl");
    let mut json = String::from("{");
    for (k, (rel, rows)) in f.rels.iter().enumerate() {
        let _ = write!(json, "{}\n\"{rel}\": [", if k > 0 { "," } else { "" });
        let mut tsv = String::new();
        for (i, row) in rows.iter().enumerate() {
            let cells: Vec<String> = row.iter().map(|c| format!("{c:?}")).collect();
            let _ = write!(
                json,
                "{}[{}]",
                if i > 0 { ", " } else { "" },
                cells.join(", ")
            );
            tsv.push_str(&row.join("\t"));
            tsv.push('\n');
        }
        json.push(']');
        std::fs::write(dir.join("facts").join(format!("{rel}.facts")), tsv).expect("write .facts");
    }
    json.push_str("\n}\n");
    std::fs::write(dir.join("facts.json"), json).expect("write facts.json");
    println!(
        "{} facts of {universities} universit{} in {}",
        f.len(),
        if universities == 1 { "y" } else { "ies" },
        dir.display()
    );
}
