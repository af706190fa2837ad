//! Benchmark workloads as files, and one run of one workload in its own process.
//!
//! ```text
//! cargo run --release --example workload -- list [--heavy] [--ascent]
//! cargo run --release --example workload -- dump DIR [NAME…]
//! cargo run --release --example workload -- run NAME VARIANT
//! ```
//!
//! `dump` writes `DIR/NAME.dl` and `DIR/NAME/REL.facts` (tab-separated, as Soufflé
//! reads them; weighted workloads also get `DIR/NAME.json` with confidences) for
//! `bench/compare.sh`. `run` evaluates one workload in process with variant
//! `prooflog-provenance`, `prooflog-no-provenance` (either may end in `@N`: on N
//! threads; default 1) or `ascent`, and prints the
//! output relation's size, the wall time, the peak resident memory and the page
//! faults (pages first touched) of the evaluation.

use std::process::ExitCode;
use std::time::Instant;

#[path = "../benches/support/workloads.rs"]
mod workloads;

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Page faults the process has taken so far (minor: pages first touched).
fn page_faults() -> Option<i64> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `getrusage` only writes the struct it is given.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        (unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0).then_some(usage.ru_minflt)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

fn main() -> ExitCode {
    // As the command line does (every variant runs in this process with it;
    // ascent's peak memory does not move with it).
    prooflog::eval::fix_mmap_threshold();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("list") => {
            let flag = |f: &str| args[1..].iter().any(|a| a == f);
            let (heavy, ascent) = (flag("--heavy"), flag("--ascent"));
            for name in workloads::NAMES {
                if (heavy || !workloads::HEAVY.contains(name))
                    && (!ascent
                        || workloads::by_name(name).is_some_and(|w| workloads::has_ascent(&w)))
                {
                    println!("{name}");
                }
            }
            ExitCode::SUCCESS
        }
        Some("dump") if args.len() >= 2 => {
            let dir = std::path::Path::new(&args[1]);
            for name in workloads::NAMES {
                if args.len() > 2 && !args[2..].iter().any(|n| n == name) {
                    continue;
                }
                let w = workloads::by_name(name).expect("every name has a workload");
                if let Err(e) = workloads::dump(&w, dir) {
                    eprintln!("cannot write {}: {e}", w.name);
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Some("run") if args.len() == 3 => {
            let Some(w) = workloads::by_name(&args[1]) else {
                eprintln!("unknown workload {:?}", args[1]);
                return ExitCode::from(2);
            };
            let prepared = workloads::prepare(&w);
            let faults = page_faults();
            let start = Instant::now();
            // `VARIANT@N`: a prooflog run on N threads (default 1).
            let (variant, threads) = match args[2].split_once('@') {
                Some((v, n)) => match n.parse() {
                    Ok(n) => (v, n),
                    Err(_) => {
                        eprintln!("bad thread count in {:?}", args[2]);
                        return ExitCode::from(2);
                    }
                },
                None => (args[2].as_str(), 1),
            };
            let rows = match variant {
                "prooflog-provenance" => {
                    Some(workloads::run_prooflog(&w, &prepared, true, threads))
                }
                "prooflog-no-provenance" => {
                    Some(workloads::run_prooflog(&w, &prepared, false, threads))
                }
                "ascent" => workloads::run_ascent(&w),
                other => {
                    eprintln!("unknown variant {other:?}");
                    return ExitCode::from(2);
                }
            };
            let elapsed = start.elapsed();
            let faults = faults.zip(page_faults()).map(|(a, b)| b - a);
            let Some(rows) = rows else {
                eprintln!("{} has no {} version", w.name, args[2]);
                return ExitCode::from(3);
            };
            println!(
                "{{\"workload\": \"{}\", \"variant\": \"{}\", \"{}\": {rows}, \"wall_ms\": {:.3}, \"peak_rss_kib\": {}, \"page_faults\": {}}}",
                w.name,
                args[2],
                w.output,
                elapsed.as_secs_f64() * 1e3,
                peak_rss_kib().map_or("null".into(), |k| k.to_string()),
                faults.map_or("null".into(), |f| f.to_string())
            );
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!(
                "usage: workload list [--heavy] [--ascent] | dump DIR [NAME…] | run NAME VARIANT"
            );
            ExitCode::from(2)
        }
    }
}
