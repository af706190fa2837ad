//! What engine commands share: output format, program and input loading, error output.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::ValueEnum;
use prooflog::store::{InputFacts, Loader};
use prooflog::{Error, Program, Result};

pub use prooflog::bundled::{DEFAULT_EVIDENCE, DEFAULT_PROGRAM};

/// Output format for people (`text`) or programs (`json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// JSON on stdout; errors as JSON on stderr.
    #[default]
    Json,
    /// Human-readable text.
    Text,
}

/// The inputs every engine command takes: program files, fact files, evidence.
#[derive(Debug, Clone, clap::Args)]
pub struct EngineInputs {
    /// Program files (.dl), compiled in the order given. Without any, the embedded
    /// default rule pack is used: rules/drones/drones.dl with its evidence
    /// rules/drones/evidence.jsonl (built into the binary, so this works from any
    /// directory); --facts and --evidence then add to that evidence.
    #[arg(value_name = "PROGRAM")]
    pub programs: Vec<PathBuf>,

    /// A fact file or a directory of them (every *.json, *.csv, *.tsv, *.facts in it,
    /// by name). JSON: {"rel": [[v, …], …]}; CSV/TSV/.facts: rows of the relation the
    /// file is named after (<rel>.csv). Repeatable.
    #[arg(long = "facts", value_name = "FILE|DIR")]
    pub facts: Vec<PathBuf>,

    /// An evidence file: one {"predicate", "args", "confidence"?, "provenance"?} JSON
    /// object per line. Repeatable.
    #[arg(long = "evidence", value_name = "FILE.jsonl")]
    pub evidence: Vec<PathBuf>,

    /// Where `.input` relations' files are looked up (default: the directory of the
    /// program file that declares them). `-F` as in Soufflé.
    #[arg(long = "fact-dir", short = 'F', value_name = "DIR")]
    pub fact_dir: Option<PathBuf>,

    /// Turn warnings into errors (exit 2): a goal's bare identifier that names a symbol
    /// of the data, data for relations no rule uses, relations read but never defined.
    #[arg(long)]
    pub strict: bool,
}

impl EngineInputs {
    /// Compile the programs (or the default pack) and load every input, all or
    /// nothing. Warnings are printed on stderr in the default style.
    pub fn load(&self) -> Result<(Arc<Program>, InputFacts)> {
        self.load_as(Diagnostics::default_style())
    }

    /// [`load`](Self::load), printing warnings on stderr in `style`.
    pub fn load_as(&self, style: Diagnostics) -> Result<(Arc<Program>, InputFacts)> {
        load_inputs(
            &self.programs,
            &self.facts,
            &self.evidence,
            self.fact_dir.as_deref(),
            self.strict,
            style,
        )
    }
}

/// Compile the programs (or, with none, the embedded default pack and its evidence)
/// and load every input, all or nothing; warnings on stderr in `style`.
pub fn load_inputs(
    programs: &[PathBuf],
    facts: &[PathBuf],
    evidence: &[PathBuf],
    fact_dir: Option<&std::path::Path>,
    strict: bool,
    style: Diagnostics,
) -> Result<(Arc<Program>, InputFacts)> {
    let mut loader = Loader::new();
    loader.strict(strict);
    if programs.is_empty() {
        loader.program_text(DEFAULT_PROGRAM.name, DEFAULT_PROGRAM.text);
        loader.evidence_jsonl(DEFAULT_EVIDENCE.name, DEFAULT_EVIDENCE.text)?;
    }
    for p in programs {
        loader.program_file(p)?;
    }
    if let Some(dir) = fact_dir {
        loader.fact_dir(dir);
    }
    for f in facts {
        loader.facts(f)?;
    }
    for e in evidence {
        loader.evidence(e)?;
    }
    let loaded = loader.load()?;
    for w in &loaded.warnings {
        warn(w, style);
    }
    Ok((loaded.program, loaded.facts))
}

/// How diagnostics (errors and warnings) are printed on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Diagnostics {
    /// One JSON document per diagnostic, for programs.
    Json,
    /// `error[code]: message`, the source line with a caret, `= help: …`, for people.
    Text,
}

impl Diagnostics {
    /// The style for a command whose `--format` is `format` (`None` when not given):
    /// JSON when `--format json` is given, text for any other format; without
    /// `--format`, text when stderr is a terminal (a person is reading) and JSON
    /// otherwise (a program is).
    pub fn for_format(format: Option<Format>) -> Diagnostics {
        match format {
            Some(Format::Json) => Diagnostics::Json,
            Some(Format::Text) => Diagnostics::Text,
            None => Diagnostics::default_style(),
        }
    }

    /// Without `--format`: text on a terminal, JSON otherwise.
    pub fn default_style() -> Diagnostics {
        use std::io::IsTerminal;
        if std::io::stderr().is_terminal() {
            Diagnostics::Text
        } else {
            Diagnostics::Json
        }
    }
}

/// Print an error on stderr in the given style and return exit code 2.
///
/// JSON: one document `{"error": {"code", "message", "file"?, "line"?, "col"?,
/// "help"?}}`; when there are several diagnostics, the others follow in
/// `"more": [{…}, …]`. Text: each diagnostic with its caret snippet, separated by blank
/// lines.
pub fn fail(err: &Error, style: Diagnostics) -> ExitCode {
    match style {
        Diagnostics::Json => eprintln!("{}", error_json(err)),
        Diagnostics::Text => eprintln!("{err}"),
    }
    ExitCode::from(2)
}

/// The JSON form of an error (see [`fail`]).
pub fn error_json(err: &Error) -> serde_json::Value {
    let mut doc = err.primary().to_json();
    if err.diagnostics.len() > 1 {
        let more: Vec<serde_json::Value> = err.diagnostics[1..]
            .iter()
            .map(prooflog::Diagnostic::to_json_body)
            .collect();
        doc["more"] = serde_json::Value::Array(more);
    }
    doc
}

/// Print a warning on stderr: `warning[code]: …` (with the caret snippet) as text, or
/// one `{"warning": {"code", "message", …}}` line as JSON.
pub fn warn(warning: &prooflog::Diagnostic, style: Diagnostics) {
    match style {
        Diagnostics::Json => {
            eprintln!(
                "{}",
                serde_json::json!({ "warning": warning.to_json_body() })
            );
        }
        Diagnostics::Text => {
            let text = warning.to_string();
            let text = text
                .strip_prefix("error")
                .or_else(|| text.strip_prefix("warning"))
                .unwrap_or(&text);
            eprintln!("warning{text}\n");
        }
    }
}

/// Write `text` to stdout. A closed pipe (`prooflog run | head`) is not an error.
pub fn print(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Live progress of a long evaluation on stderr, for a person watching a terminal.
///
/// Only created when stderr is a terminal (never in pipes, files or tests), redrawn
/// at most every [`ProgressLine::INTERVAL`] (nothing at all during the first one, so
/// quick runs show nothing), and erased by [`finish`](Self::finish) so that it leaves
/// nothing behind.
pub struct ProgressLine {
    state: std::sync::Mutex<ProgressState>,
}

struct ProgressState {
    sink: Box<dyn std::io::Write + Send>,
    started: std::time::Instant,
    last_drawn: Option<std::time::Instant>,
    drawn: bool,
}

impl ProgressLine {
    /// The least time between two redraws.
    pub const INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

    /// A progress line when stderr is a terminal, else `None`.
    pub fn for_stderr() -> Option<Arc<ProgressLine>> {
        use std::io::IsTerminal;
        std::io::stderr()
            .is_terminal()
            .then(|| Arc::new(ProgressLine::new(Box::new(std::io::stderr()))))
    }

    /// A progress line drawn on `sink`, starting now.
    fn new(sink: Box<dyn std::io::Write + Send>) -> ProgressLine {
        ProgressLine {
            state: std::sync::Mutex::new(ProgressState {
                sink,
                started: std::time::Instant::now(),
                last_drawn: None,
                drawn: false,
            }),
        }
    }

    /// Show `message` unless the line was drawn less than an interval ago.
    pub fn update(&self, message: impl FnOnce() -> String) {
        self.update_at(std::time::Instant::now(), message);
    }

    fn update_at(&self, now: std::time::Instant, message: impl FnOnce() -> String) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        let since = st.last_drawn.unwrap_or(st.started);
        if now.saturating_duration_since(since) < Self::INTERVAL {
            return;
        }
        st.last_drawn = Some(now);
        st.drawn = true;
        let line = format!("\r\x1b[2K{}", message());
        let _ = st.sink.write_all(line.as_bytes());
        let _ = st.sink.flush();
    }

    /// Erase the line, if anything was shown.
    pub fn finish(&self) {
        if let Ok(mut st) = self.state.lock()
            && st.drawn
        {
            let _ = st.sink.write_all(b"\r\x1b[2K");
            let _ = st.sink.flush();
            st.drawn = false;
        }
    }
}

/// Evaluate, showing a [`ProgressLine`] while it runs when stderr is a terminal.
pub fn evaluate_on_terminal(
    program: Arc<prooflog::Program>,
    facts: &InputFacts,
    provenance: bool,
) -> prooflog::Result<prooflog::FactBase> {
    use prooflog::eval::{EvalOptions, Progress, ProgressFn};
    let progress = ProgressLine::for_stderr();
    let strata = program.strata().len();
    let mut options = EvalOptions::default().with_provenance(provenance);
    if let Some(line) = progress.clone() {
        let report: ProgressFn = Arc::new(move |p: &Progress| {
            line.update(|| {
                format!(
                    "stratum {}/{strata} · round {} · {} new · {} facts",
                    p.stratum + 1,
                    p.round + 1,
                    p.new_facts,
                    p.total_facts
                )
            })
        });
        options = options.with_progress(report);
    }
    let result = prooflog::eval::evaluate(program, facts, &options);
    if let Some(p) = &progress {
        p.finish();
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use prooflog::diag::{Diagnostic, ErrorCode, Location};

    #[test]
    fn one_json_document_carries_every_diagnostic() {
        let err = Error {
            diagnostics: vec![
                Diagnostic::new(ErrorCode::BadInput, "first").at(Location::at("e.jsonl", 2, 5)),
                Diagnostic::new(ErrorCode::BadInput, "second").with_help("fix it"),
            ],
        };
        let j = error_json(&err);
        assert_eq!(j["error"]["message"], "first");
        assert_eq!(j["error"]["line"], 2);
        assert_eq!(j["more"][0]["message"], "second");
        assert_eq!(j["more"][0]["help"], "fix it");
        assert!(j["more"][0].get("file").is_none(), "no null fields");
        let single = error_json(&Error {
            diagnostics: vec![Diagnostic::new(ErrorCode::Io, "x")],
        });
        assert!(single.get("more").is_none());
    }

    /// A sink the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn progress_is_throttled_and_erased() {
        let sink = Shared::default();
        let line = ProgressLine::new(Box::new(sink.clone()));
        let t0 = line.state.lock().unwrap().started;
        let ms = |n| t0 + std::time::Duration::from_millis(n);
        let text = || String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        line.update_at(ms(50), || "early".into());
        assert_eq!(text(), "", "nothing during the first interval");
        line.update_at(ms(120), || "round 1".into());
        line.update_at(ms(180), || "round 2".into());
        assert_eq!(
            text(),
            "\r\x1b[2Kround 1",
            "at most one redraw per interval"
        );
        line.update_at(ms(230), || "round 3".into());
        line.finish();
        assert_eq!(text(), "\r\x1b[2Kround 1\r\x1b[2Kround 3\r\x1b[2K");
        line.finish();
        assert!(text().ends_with("round 3\r\x1b[2K"), "erased once");
    }

    #[test]
    fn a_quick_run_leaves_no_trace() {
        let sink = Shared::default();
        let line = ProgressLine::new(Box::new(sink.clone()));
        line.finish();
        assert!(sink.0.lock().unwrap().is_empty());
    }
}
