//! Soufflé's output conventions: `.output` relations written as tab-separated
//! `<rel>.csv` files (`-D DIR`; `-D -` prints them instead), `IO=file` and
//! `IO=stdout` options honoured, `.printsize` relations printed as `rel<TAB>count`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use prooflog::diag::{Diagnostic, ErrorCode};
use prooflog::eval::FactBase;
use prooflog::ir::{IoOptions, RelId};
use prooflog::value::Value;
use prooflog::{Error, Result};

/// Where `.output` relations go without `IO=stdout`: a directory, or stdout (`-`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputDir {
    /// Files in this directory.
    Dir(PathBuf),
    /// Everything printed on stdout.
    Stdout,
}

impl OutputDir {
    /// `-D`'s argument: `-` is stdout.
    pub fn parse(arg: &Path) -> OutputDir {
        if arg == Path::new("-") {
            OutputDir::Stdout
        } else {
            OutputDir::Dir(arg.to_path_buf())
        }
    }
}

/// A value as Soufflé writes it in a fact file: numbers in decimal, symbols as they are.
fn cell(v: &Value) -> String {
    match v {
        Value::Symbol(s) => s.clone(),
        Value::Number(i) => i.to_string(),
        Value::Unsigned(u) => u.to_string(),
        Value::Float(x) => x.to_string(),
    }
}

/// The rows of a relation, sorted, one line each, cells joined by `delimiter`.
fn lines(base: &FactBase, rel: RelId, delimiter: &str) -> String {
    let mut out = String::new();
    for row in base.rows(rel) {
        let cells: Vec<String> = row.iter().map(cell).collect();
        out.push_str(&cells.join(delimiter));
        out.push('\n');
    }
    out
}

/// One `.output` directive's destination.
enum Target {
    Stdout,
    File(PathBuf, String, bool),
}

fn target(
    name: &str,
    io: &IoOptions,
    dir: Option<&OutputDir>,
    explicit_only: bool,
) -> Option<Target> {
    let opt = |k: &str| io.options.get(k).map(String::as_str);
    let io_kind = opt("io").map(str::to_ascii_lowercase);
    if io_kind.as_deref() == Some("stdout") || dir == Some(&OutputDir::Stdout) {
        return (!explicit_only || io_kind.is_some()).then_some(Target::Stdout);
    }
    let explicit = io_kind.as_deref() == Some("file") || opt("filename").is_some();
    if explicit_only && !explicit {
        return None;
    }
    let filename = opt("filename").map_or_else(|| format!("{name}.csv"), str::to_string);
    let path = Path::new(&filename);
    let path = match dir {
        Some(OutputDir::Dir(d)) if path.is_relative() => d.join(path),
        _ => path.to_path_buf(),
    };
    let delimiter = match opt("delimiter") {
        Some("\\t") | None => "\t".to_string(),
        Some(d) => d.to_string(),
    };
    let headers = opt("headers").is_some_and(|h| h.eq_ignore_ascii_case("true"));
    Some(Target::File(path, delimiter, headers))
}

/// Write every `.output` relation as Soufflé does and return what goes to stdout
/// (`IO=stdout` tables, then `.printsize` lines). With `dir` `None` (no `-D`), only
/// the directives that ask for a file explicitly (`IO=file` or a `filename`) are
/// written, relative to the current directory, and nothing is printed.
pub fn write_outputs(base: &FactBase, dir: Option<&OutputDir>) -> Result<String> {
    let program = base.program();
    let mut stdout = String::new();
    if let Some(OutputDir::Dir(d)) = dir {
        std::fs::create_dir_all(d).map_err(|e| io_error(d, &e))?;
    }
    for (i, rel) in program.relations().iter().enumerate() {
        if rel.auxiliary || !rel.output {
            continue;
        }
        let id = i as RelId;
        let default = IoOptions::default();
        let directives: Vec<&IoOptions> = if rel.outputs.is_empty() {
            vec![&default]
        } else {
            rel.outputs.iter().collect()
        };
        for io in directives {
            match target(&rel.name, io, dir, dir.is_none()) {
                None => {}
                Some(Target::Stdout) => {
                    let _ = write!(
                        stdout,
                        "---------------\n{}\n===============\n{}===============\n",
                        rel.name,
                        lines(base, id, "\t")
                    );
                }
                Some(Target::File(path, delimiter, headers)) => {
                    let mut text = String::new();
                    if headers {
                        let names: Vec<&str> =
                            rel.columns.iter().map(|c| c.name.as_str()).collect();
                        text.push_str(&names.join(&delimiter));
                        text.push('\n');
                    }
                    text.push_str(&lines(base, id, &delimiter));
                    if let Some(parent) = path.parent()
                        && !parent.as_os_str().is_empty()
                    {
                        std::fs::create_dir_all(parent).map_err(|e| io_error(parent, &e))?;
                    }
                    std::fs::write(&path, text).map_err(|e| io_error(&path, &e))?;
                }
            }
        }
    }
    if dir.is_some() {
        for (i, rel) in program.relations().iter().enumerate() {
            if rel.printsize && !rel.auxiliary {
                let _ = writeln!(stdout, "{}\t{}", rel.name, base.len(i as RelId));
            }
        }
    }
    Ok(stdout)
}

fn io_error(path: &Path, e: &std::io::Error) -> Error {
    Diagnostic::new(
        ErrorCode::Io,
        format!("cannot write `{}`: {e}", path.display()),
    )
    .with_help("check that the output directory exists and is writable")
    .into()
}
