//! Loading speed: facts per second from each input format into typed input facts
//! (`Loader::load`), and on into a fact base (`evaluate` of a program with no rules).
//!
//! The files are generated once per run into a temporary directory (deterministic
//! contents) and read from there, so the times include reading the file from the
//! page cache, as a real load does.
//!
//! Formats: a Soufflé `.facts` file of two numbers per row (tab-separated), a CSV
//! file of a number and two strings, a JSON fact document (numbers and strings), and
//! evidence JSONL (one record per line, half of them with a provenance object).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use prooflog::eval::{EvalOptions, evaluate};
use prooflog::store::Loader;

const PROGRAM: &str = "
.decl e(a: number, b: number)
.decl person(id: number, name: symbol, email: symbol)
.decl knows(a: number, b: number)
.decl name(id: number, name: symbol)
";

/// Rows per file.
const ROWS: usize = 200_000;

fn tsv_numbers() -> String {
    let mut s = String::new();
    for i in 0..ROWS {
        let _ = writeln!(s, "{}\t{}", i, (i * 7919) % 100_003);
    }
    s
}

fn csv_mixed() -> String {
    let mut s = String::new();
    for i in 0..ROWS {
        let _ = writeln!(s, "{i},Person {},person{i}@example.org", i % 5000);
    }
    s
}

fn json_facts() -> String {
    let mut s = String::from("{\"knows\": [");
    for i in 0..ROWS / 2 {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "[{i}, {}]", (i * 31) % 100_003);
    }
    s.push_str("],\n \"name\": [");
    for i in 0..ROWS / 2 {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "[{i}, \"Person {}\"]", i % 5000);
    }
    s.push_str("]}\n");
    s
}

fn evidence_jsonl() -> String {
    let mut s = String::new();
    for i in 0..ROWS {
        if i % 2 == 0 {
            let _ = writeln!(
                s,
                "{{\"predicate\": \"knows\", \"args\": [{i}, {}], \"confidence\": 0.9}}",
                i + 1
            );
        } else {
            let _ = writeln!(
                s,
                "{{\"predicate\": \"knows\", \"args\": [{i}, {}], \"confidence\": 0.8, \"provenance\": {{\"table\": \"SOCIAL\", \"event_ts\": {}}}}}",
                i + 1,
                1_700_000_000 + i
            );
        }
    }
    s
}

struct Files {
    dir: PathBuf,
}

impl Files {
    fn new() -> Files {
        let dir = std::env::temp_dir().join(format!("prooflog-load-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("e.facts"), tsv_numbers()).expect("write");
        std::fs::write(dir.join("person.csv"), csv_mixed()).expect("write");
        std::fs::write(dir.join("facts.json"), json_facts()).expect("write");
        std::fs::write(dir.join("evidence.jsonl"), evidence_jsonl()).expect("write");
        Files { dir }
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn loader(path: &Path) -> Loader {
    let mut loader = Loader::new();
    loader.program_text("bench.dl", PROGRAM);
    if path.extension().is_some_and(|e| e == "jsonl") {
        loader.evidence(path).expect("evidence loads");
    } else {
        loader.facts(path).expect("facts load");
    }
    loader
}

fn load(c: &mut Criterion) {
    let files = Files::new();
    let cases = [
        ("tsv_numbers", "e.facts"),
        ("csv_mixed", "person.csv"),
        ("json", "facts.json"),
        ("evidence_jsonl", "evidence.jsonl"),
    ];
    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    group.throughput(Throughput::Elements(ROWS as u64));
    for (name, file) in cases {
        let path = files.dir.join(file);
        group.bench_function(name, |b| {
            b.iter(|| loader(&path).load().expect("loads").facts.len())
        });
    }
    group.finish();

    let mut group = c.benchmark_group("load_and_insert");
    group.sample_size(10);
    group.throughput(Throughput::Elements(ROWS as u64));
    for (name, file) in cases {
        let path = files.dir.join(file);
        group.bench_function(name, |b| {
            b.iter(|| {
                let loaded = loader(&path).load().expect("loads");
                let options = EvalOptions::default();
                evaluate(loaded.program, loaded.facts, &options)
                    .expect("evaluates")
                    .stats()
                    .input_facts
            })
        });
    }
    group.finish();
}

criterion_group!(benches, load);
criterion_main!(benches);
