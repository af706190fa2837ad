//! Loading alone, in its own process: time and peak resident memory (`VmHWM` in
//! `/proc/self/status`) of `Loader::load` for one program and its data files.
//!
//! ```text
//! cargo run --release --example load_memory -- PROGRAM.dl [--facts PATH | --evidence PATH]...
//! ```
//!
//! Prints the number of input facts, the load time, and the peak memory before and
//! after loading (the first is the process with its files not yet read).

use std::time::Instant;

use prooflog::store::Loader;

fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(program) = args.first() else {
        eprintln!("usage: load_memory PROGRAM.dl [--facts PATH | --evidence PATH]...");
        std::process::exit(2);
    };
    let before = peak_kib();
    let started = Instant::now();
    let mut loader = Loader::new();
    loader.program_file(program).expect("program");
    let mut rest = args[1..].iter();
    while let Some(flag) = rest.next() {
        let path = rest.next().expect("a path after the flag");
        match flag.as_str() {
            "--facts" => loader.facts(path).expect("facts"),
            "--evidence" => loader.evidence(path).expect("evidence"),
            other => panic!("unknown flag {other}"),
        };
    }
    let loaded = match loader.load() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let elapsed = started.elapsed();
    println!(
        "{} facts in {:.3} s ({:.2} M facts/s); peak {} KiB before, {} KiB after",
        loaded.facts.len(),
        elapsed.as_secs_f64(),
        loaded.facts.len() as f64 / elapsed.as_secs_f64() / 1e6,
        before.unwrap_or(0),
        peak_kib().unwrap_or(0)
    );
}
