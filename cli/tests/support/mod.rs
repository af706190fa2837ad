//! Shared support for the command line's end-to-end tests: running the real binary,
//! reading its output, scratch files, and the golden files shared with the library's
//! tests (`tests/support/golden.rs` at the repository root).
#![allow(dead_code)] // each test crate uses a different part

#[path = "../../../tests/support/golden.rs"]
pub mod golden;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub use golden::repo_root;

/// The `prooflog` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_prooflog");

/// Run `prooflog` with `args` from the repository root (so relative fixture paths
/// resolve and diagnostics name them as written).
pub fn prooflog(args: &[&str]) -> Output {
    prooflog_in(&repo_root(), args)
}

/// Run `prooflog` with `args` from `dir`.
pub fn prooflog_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the prooflog binary runs")
}

/// Run `prooflog` from the repository root with `input` on its standard input.
pub fn prooflog_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(repo_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn prooflog");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("wait for prooflog")
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8 stderr")
}

/// Standard output parsed as JSON.
pub fn stdout_json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Standard error parsed as JSON.
pub fn stderr_json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stderr).unwrap_or_else(|e| {
        panic!(
            "stderr is not JSON ({e}): {}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// A scratch directory for one test's files, under cargo's per-target temp dir.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(suite)
        .join(name);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Write `text` to `dir/file` and return the path as a string argument.
pub fn write(dir: &Path, file: &str, text: &str) -> String {
    let path = dir.join(file);
    std::fs::write(&path, text).expect("write test input");
    path.to_string_lossy().into_owned()
}
