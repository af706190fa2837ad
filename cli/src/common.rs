//! What engine commands share: output format, program and input loading, limits,
//! error output, and the output writer.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::ValueEnum;
use prooflog::diag::{Diagnostic, ErrorCode, Limit};
use prooflog::eval::Budget;
use prooflog::store::{DEFAULT_MAX_INPUT, InputFacts, Loader};
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

    #[command(flatten)]
    pub limits: Limits,

    /// Threads that evaluate rules and pieces of their deltas side by side, 1 to 256;
    /// every count gives byte-identical results [default: one per core].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,

    /// Turn warnings into errors (exit 2): a goal's bare identifier that names a symbol
    /// of the data, data for relations no rule uses, relations read but never defined,
    /// or failed arithmetic (integer overflow, division by zero, a float result that is
    /// not finite: code arithmetic_error), whose derivation is dropped either way.
    #[arg(long)]
    pub strict: bool,
}
/// The limits of an engine command. Each stops the work with exit 2 and a
/// `budget_exceeded` error naming the limit (and, for evaluation, the rule that grew
/// fastest); `none` lifts one.
#[derive(Debug, Clone, clap::Args)]
pub struct Limits {
    /// Most facts rules may derive [default: 100000000].
    #[arg(long = "max-facts", value_name = "N|none", value_parser = parse_count)]
    pub max_facts: Option<Setting<usize>>,

    /// Most time evaluation (and proof building) may take, e.g. 30s, 500ms, 10m
    /// [default: 10m].
    #[arg(long, value_name = "DURATION|none", value_parser = parse_duration)]
    pub timeout: Option<Setting<Duration>>,

    /// Most memory the engine's fact storage may take, e.g. 512M, 4G (counted from
    /// its own allocations) [default: 2G].
    #[arg(long = "max-memory", value_name = "SIZE|none", value_parser = parse_size)]
    pub max_memory: Option<Setting<usize>>,

    /// Most rounds one stratum may take to reach its fixpoint [default: 1000000].
    #[arg(long = "max-rounds", value_name = "N|none", value_parser = parse_count)]
    pub max_rounds: Option<Setting<usize>>,

    /// Most bytes of input files read in all (programs, facts, evidence, answers,
    /// proofs, passages), e.g. 64M [default: 512M].
    #[arg(long = "max-input", value_name = "SIZE|none", value_parser = parse_size)]
    pub max_input: Option<Setting<usize>>,
}

/// A limit as given on the command line: a value, or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting<T> {
    Value(T),
    Unlimited,
}

impl<T: Copy> Setting<T> {
    /// The limit to apply: the one given, else the default (`None`: no limit).
    fn or(setting: Option<Setting<T>>, default: Option<T>) -> Option<T> {
        match setting {
            None => default,
            Some(Setting::Value(v)) => Some(v),
            Some(Setting::Unlimited) => None,
        }
    }
}

fn unlimited<T>(s: &str) -> Option<Setting<T>> {
    matches!(s.trim().to_ascii_lowercase().as_str(), "none" | "unlimited")
        .then_some(Setting::Unlimited)
}

/// `N` or `none`.
pub fn parse_count(s: &str) -> std::result::Result<Setting<usize>, String> {
    if let Some(u) = unlimited(s) {
        return Ok(u);
    }
    s.trim()
        .replace('_', "")
        .parse()
        .map(Setting::Value)
        .map_err(|_| format!("`{s}` is not a count (a whole number, or none)"))
}

/// `512M`, `2G`, `1024K`, `100` (bytes), `1.5G`, or `none`; K, M, G, T are powers of
/// 1024 (a trailing `B` or `iB` is allowed).
pub fn parse_size(s: &str) -> std::result::Result<Setting<usize>, String> {
    if let Some(u) = unlimited(s) {
        return Ok(u);
    }
    let t = s.trim().to_ascii_uppercase();
    let t = t
        .strip_suffix("IB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(&t);
    let (num, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => (&t[..i], &t[i..]),
        None => (t, ""),
    };
    let mult: f64 = match unit {
        "" => 1.0,
        "K" => 1024.0,
        "M" => 1024.0 * 1024.0,
        "G" => 1024.0 * 1024.0 * 1024.0,
        "T" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("`{s}` is not a size (e.g. 512M, 2G, or none)")),
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a size (e.g. 512M, 2G, or none)"))?;
    if !n.is_finite() || n < 0.0 || n * mult > usize::MAX as f64 {
        return Err(format!("`{s}` is not a size (e.g. 512M, 2G, or none)"));
    }
    Ok(Setting::Value((n * mult) as usize))
}

/// `30s`, `500ms`, `10m`, `1h`, `45` (seconds), `1.5s`, or `none`.
pub fn parse_duration(s: &str) -> std::result::Result<Setting<Duration>, String> {
    if let Some(u) = unlimited(s) {
        return Ok(u);
    }
    let t = s.trim().to_ascii_lowercase();
    let (num, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => (&t[..i], &t[i..]),
        None => (t.as_str(), "s"),
    };
    let secs: f64 = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "`{s}` is not a duration (e.g. 30s, 500ms, 10m, or none)"
            ));
        }
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (e.g. 30s, 500ms, 10m, or none)"))?;
    Duration::try_from_secs_f64(n * secs)
        .map(Setting::Value)
        .map_err(|_| format!("`{s}` is not a duration (e.g. 30s, 500ms, 10m, or none)"))
}

impl Limits {
    /// The evaluation budget these limits give, with the library's defaults for
    /// those not given.
    pub fn budget(&self) -> Budget {
        let d = Budget::default();
        Budget {
            max_facts: Setting::or(self.max_facts, d.max_facts),
            max_rounds: Setting::or(self.max_rounds, d.max_rounds.map(|r| r as usize))
                .map(|r| r.min(u32::MAX as usize) as u32),
            deadline: None,
            timeout: Setting::or(self.timeout, d.timeout),
            max_memory: Setting::or(self.max_memory, d.max_memory),
        }
    }

    /// Bytes of input that may be read.
    pub fn max_input(&self) -> u64 {
        Setting::or(self.max_input, Some(DEFAULT_MAX_INPUT as usize)).map_or(u64::MAX, |n| n as u64)
    }

    /// When the whole command must be done (evaluation and proofs), from now.
    pub fn deadline(&self) -> Option<Instant> {
        self.budget().timeout.map(|t| Instant::now() + t)
    }
}

/// The error for a command that ran past its `--timeout` outside evaluation.
pub fn timed_out() -> Error {
    Diagnostic::limit_exceeded(Limit::Timeout, "the command ran past its time limit")
        .with_help("raise the limit (--timeout) or ask for less (--limit)")
        .into()
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
            self.limits.max_input(),
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
    max_input: u64,
    style: Diagnostics,
) -> Result<(Arc<Program>, InputFacts)> {
    let mut loader = Loader::new();
    loader.strict(strict);
    loader.max_input_bytes(max_input);
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
        Diagnostics::Json => to_stderr(&error_json(err).to_string()),
        Diagnostics::Text => to_stderr(&err.to_string()),
    }
    ExitCode::from(2)
}

/// Write a line on stderr; if even that fails there is nobody left to tell.
pub fn to_stderr(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
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
            to_stderr(&serde_json::json!({ "warning": warning.to_json_body() }).to_string());
        }
        Diagnostics::Text => {
            let text = warning.to_string();
            let text = text
                .strip_prefix("error")
                .or_else(|| text.strip_prefix("warning"))
                .unwrap_or(&text);
            to_stderr(&format!("warning{text}\n"));
        }
    }
}

/// Report the evaluation's arithmetic failures on stderr, one `arithmetic_error`
/// warning per rule (see [`warn`]).
pub fn warn_arithmetic(base: &prooflog::FactBase, style: Diagnostics) {
    for faults in &base.stats().arithmetic {
        warn(
            &prooflog::eval::arithmetic_warning(base.program(), faults),
            style,
        );
    }
}

/// Write `text` to stdout and flush; see [`finish`] for what a failed write means.
pub fn print(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Standard output for a command's results: buffered, and every write's error is
/// returned (see [`finish`]).
pub fn stdout() -> std::io::BufWriter<std::io::Stdout> {
    std::io::BufWriter::with_capacity(1 << 16, std::io::stdout())
}

/// The exit code of a command that computed `code` and wrote its results with
/// `written` (the flush included). A closed pipe (`prooflog run | head`) ends quietly
/// with the command's own code; any other failed write (a full disk) is exit 2 with
/// an `io_error` on stderr.
pub fn finish(code: ExitCode, written: std::io::Result<()>, style: Diagnostics) -> ExitCode {
    match written {
        Ok(()) => code,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => code,
        Err(e) => fail(
            &Diagnostic::new(ErrorCode::Io, format!("cannot write the output: {e}"))
                .with_help("check that the output's disk has room and is writable")
                .into(),
            style,
        ),
    }
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

/// Evaluate under an engine command's limits (and `--strict`), showing a
/// [`ProgressLine`] while it runs when stderr is a terminal.
pub fn evaluate_with_limits(
    program: Arc<prooflog::Program>,
    facts: InputFacts,
    provenance: bool,
    inputs: &EngineInputs,
) -> prooflog::Result<prooflog::FactBase> {
    let options = prooflog::eval::EvalOptions::default()
        .with_provenance(provenance)
        .with_budget(inputs.limits.budget())
        .with_strict_arithmetic(inputs.strict)
        .with_threads(inputs.threads.map_or(0, usize::from));
    evaluate_showing_progress(program, facts, options)
}

/// Evaluate with the default options, showing a [`ProgressLine`] while it runs when
/// stderr is a terminal.
pub fn evaluate_on_terminal(
    program: Arc<prooflog::Program>,
    facts: InputFacts,
    provenance: bool,
) -> prooflog::Result<prooflog::FactBase> {
    let options = prooflog::eval::EvalOptions::default()
        .with_provenance(provenance)
        .with_threads(0);
    evaluate_showing_progress(program, facts, options)
}

fn evaluate_showing_progress(
    program: Arc<prooflog::Program>,
    facts: InputFacts,
    mut options: prooflog::eval::EvalOptions,
) -> prooflog::Result<prooflog::FactBase> {
    use prooflog::eval::{Progress, ProgressFn};
    let progress = ProgressLine::for_stderr();
    let strata = program.strata().len();
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

    #[test]
    fn limits_parse_sizes_durations_and_none() {
        assert_eq!(parse_size("512M"), Ok(Setting::Value(512 << 20)));
        assert_eq!(parse_size("2g"), Ok(Setting::Value(2 << 30)));
        assert_eq!(parse_size("1.5KiB"), Ok(Setting::Value(1536)));
        assert_eq!(parse_size("100"), Ok(Setting::Value(100)));
        assert_eq!(parse_size("none"), Ok(Setting::Unlimited));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("-1M").is_err());
        assert_eq!(
            parse_duration("500ms"),
            Ok(Setting::Value(Duration::from_millis(500)))
        );
        assert_eq!(
            parse_duration("2m"),
            Ok(Setting::Value(Duration::from_secs(120)))
        );
        assert_eq!(
            parse_duration("45"),
            Ok(Setting::Value(Duration::from_secs(45)))
        );
        assert!(parse_duration("soon").is_err());
        assert_eq!(parse_count("1_000"), Ok(Setting::Value(1000)));
        let limits = Limits {
            max_facts: Some(Setting::Unlimited),
            timeout: None,
            max_memory: Some(Setting::Value(1 << 20)),
            max_rounds: None,
            max_input: None,
        };
        let b = limits.budget();
        assert_eq!(b.max_facts, None);
        assert_eq!(b.max_memory, Some(1 << 20));
        assert_eq!(b.timeout, Budget::default().timeout);
        assert_eq!(limits.max_input(), DEFAULT_MAX_INPUT);
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
