//! The hostile-input corpus (`tests/fixtures/hostile/`, described in its README): every
//! case runs the real binary under a memory ulimit and a per-case timeout, and must end
//! with its expected exit code and error code — never a crash, a hang or the machine's
//! memory.

mod support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{BIN, repo_root};

/// Virtual memory each case may map (KiB): a case that needs more is killed, and
/// fails, instead of taking the machine.
const ULIMIT_KB: u64 = 3_000_000;

/// One case's expectations.
#[derive(Default, Debug)]
struct Case {
    args: Vec<String>,
    exit: Option<i32>,
    code: Option<String>,
    limit: Option<String>,
    warning: Option<String>,
    stderr_has: Vec<String>,
    stdout_has: Vec<String>,
    stdout_lacks: Vec<String>,
    stderr_max: Option<usize>,
    stdout: Option<String>,
    symlinks: Vec<(String, String)>,
    fifos: Vec<String>,
    timeout: Option<u64>,
}

/// Expand `<<N*TEXT>>` templates: TEXT repeated N times, `#` in it replaced by the
/// repetition's index and `\n` by a line break.
fn expand(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("<<") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let star = after.find('*').expect("template `<<N*TEXT>>`");
        let n: usize = after[..star].parse().expect("template count");
        let body = &after[star + 1..];
        let close = body.find(">>").expect("template end `>>`");
        let unit = body[..close].replace("\\n", "\n");
        for i in 0..n {
            if unit.contains('#') {
                out.push_str(&unit.replace('#', &i.to_string()));
            } else {
                out.push_str(&unit);
            }
        }
        rest = &body[close + 2..];
    }
    out.push_str(rest);
    out
}

fn parse_case(text: &str) -> Case {
    let mut c = Case::default();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once(':').expect("`key: value`");
        let value = value.trim().to_string();
        match key.trim() {
            "args" => {
                c.args = expand(&value)
                    .split_whitespace()
                    .map(String::from)
                    .collect()
            }
            "exit" => c.exit = Some(value.parse().expect("exit code")),
            "code" => c.code = Some(value),
            "limit" => c.limit = Some(value),
            "warning" => c.warning = Some(value),
            "stderr-has" => c.stderr_has.push(value),
            "stdout-has" => c.stdout_has.push(value),
            "stdout-lacks" => c.stdout_lacks.push(value),
            "stderr-max" => c.stderr_max = Some(value.parse().expect("bytes")),
            "stdout" => c.stdout = Some(value),
            "symlink" => {
                let (link, target) = value.split_once("->").expect("LINK -> TARGET");
                c.symlinks
                    .push((link.trim().to_string(), target.trim().to_string()));
            }
            "fifo" => c.fifos.push(value),
            "timeout" => c.timeout = Some(value.parse().expect("seconds")),
            other => panic!("unknown key `{other}`"),
        }
    }
    c
}

/// Copy a case's inputs into `to`, expanding `.gen` templates.
fn stage(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("case directory") {
        let entry = entry.expect("entry");
        let name = entry.file_name().to_string_lossy().to_string();
        let src = entry.path();
        if src.is_dir() {
            std::fs::create_dir_all(to.join(&name)).expect("mkdir");
            stage(&src, &to.join(&name));
        } else if name == "case" {
            continue;
        } else if let Some(stem) = name.strip_suffix(".gen") {
            let text = std::fs::read_to_string(&src).expect("template");
            std::fs::write(to.join(stem), expand(&text)).expect("write");
        } else {
            std::fs::copy(&src, to.join(&name)).expect("copy");
        }
    }
}

/// Read a pipe to the end on a thread.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

/// Run one case; `Err` says what went wrong.
fn run(name: &str, dir: &Path) -> Result<Duration, String> {
    let case = parse_case(&std::fs::read_to_string(dir.join("case")).map_err(|e| e.to_string())?);
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("hostile")
        .join(name);
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    stage(dir, &work);
    for (link, target) in &case.symlinks {
        std::os::unix::fs::symlink(target, work.join(link)).map_err(|e| e.to_string())?;
    }
    for fifo in &case.fifos {
        let ok = Command::new("mkfifo")
            .arg(work.join(fifo))
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return Err(format!("cannot create FIFO {fifo}"));
        }
    }
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -v {ULIMIT_KB} && exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(&case.args)
        .current_dir(&work)
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    match case.stdout.as_deref() {
        Some("full") => {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .map_err(|e| format!("/dev/full: {e}"))?;
            cmd.stdout(full);
        }
        _ => {
            cmd.stdout(Stdio::piped());
        }
    }
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("spawn: {e}"))?;
    let stdout = if case.stdout.as_deref() == Some("closed") {
        // The reader is gone before anything is written: a closed pipe.
        drop(child.stdout.take());
        drain(None::<std::process::ChildStdout>)
    } else {
        drain(child.stdout.take())
    };
    let stderr = drain(child.stderr.take());
    let limit = Duration::from_secs(case.timeout.unwrap_or(60));
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {limit:?}: killed"));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = started.elapsed();
    let out = String::from_utf8_lossy(&stdout.join().unwrap_or_default()).to_string();
    let err = String::from_utf8_lossy(&stderr.join().unwrap_or_default()).to_string();
    let show = |what: &str| {
        let cut: String = err.chars().take(600).collect();
        format!("{what}\n    stderr: {cut}")
    };
    let Some(code) = status.code() else {
        return Err(show(&format!("ended by a signal ({status})")));
    };
    if let Some(want) = case.exit
        && code != want
    {
        return Err(show(&format!("exit {code}, expected {want}")));
    }
    let docs: Vec<serde_json::Value> = err
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let error = docs.iter().find_map(|d| d.get("error"));
    match (case.code.as_deref(), error) {
        (None, _) => {}
        (Some("none"), None) => {}
        (Some("none"), Some(e)) => return Err(show(&format!("unexpected error {e}"))),
        (Some(want), Some(e)) if e["code"] == want => {}
        (Some(want), _) => return Err(show(&format!("expected error code {want}"))),
    }
    if let Some(want) = &case.limit
        && error.is_none_or(|e| e["limit"] != want.as_str())
    {
        return Err(show(&format!("expected limit {want}")));
    }
    if let Some(want) = &case.warning
        && !docs
            .iter()
            .any(|d| d.get("warning").is_some_and(|w| w["code"] == want.as_str()))
    {
        return Err(show(&format!("expected a warning {want}")));
    }
    for want in &case.stderr_has {
        if !err.contains(want.as_str()) {
            return Err(show(&format!("stderr lacks `{want}`")));
        }
    }
    for want in &case.stdout_has {
        if !out.contains(want.as_str()) {
            return Err(show(&format!("stdout lacks `{want}`")));
        }
    }
    for unwanted in &case.stdout_lacks {
        if out.contains(unwanted.as_str()) {
            return Err(show(&format!("stdout has `{unwanted}`")));
        }
    }
    if let Some(max) = case.stderr_max
        && err.len() > max
    {
        return Err(format!(
            "stderr is {} bytes, at most {max} expected",
            err.len()
        ));
    }
    Ok(took)
}

#[cfg(unix)]
#[test]
fn hostile_corpus() {
    let root = repo_root().join("tests/fixtures/hostile");
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .expect("the corpus directory")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("case").is_file())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    assert!(names.len() >= 40, "the corpus has {} cases", names.len());
    let mut failures = Vec::new();
    for name in &names {
        match run(name, &root.join(name)) {
            Ok(took) => eprintln!("ok    {name} ({} ms)", took.as_millis()),
            Err(why) => {
                eprintln!("FAIL  {name}: {why}");
                failures.push(format!("{name}: {why}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} hostile cases failed:\n{}",
        failures.len(),
        names.len(),
        failures.join("\n")
    );
}

#[test]
fn templates_expand() {
    assert_eq!(expand("a<<3*(>>b<<2*)>>c"), "a(((b))c");
    assert_eq!(expand("<<3*r#.\\n>>"), "r0.\nr1.\nr2.\n");
    assert_eq!(expand("p(<<2* }>>)"), "p( } })");
}
