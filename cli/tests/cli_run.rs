//! `prooflog run` end to end: the real binary on fixture programs and inputs, checked
//! against golden files (set `UPDATE_GOLDEN=1` to rewrite them after a deliberate
//! format change, then review the diff).

mod support;

use support::{prooflog, prooflog_in, repo_root as root, stderr, stdout};

const FIX: &str = "tests/fixtures/inputs";

/// Assert success and return stdout.
fn ok(args: &[&str]) -> String {
    let o = prooflog(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    assert!(o.stderr.is_empty(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// Compare against `tests/golden/<name>`.
fn golden(name: &str, actual: &str) {
    support::golden::assert_text(name, actual)
}

/// Assert exit code 2 with nothing on stdout; return the JSON error document.
fn fails_json(args: &[&str]) -> serde_json::Value {
    let o = prooflog(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(
        o.stdout.is_empty(),
        "nothing is printed on failure: {}",
        stdout(&o)
    );
    serde_json::from_str(&stderr(&o)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)))
}

fn fails_text(args: &[&str]) -> String {
    let o = prooflog(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(o.stdout.is_empty());
    stderr(&o)
}

fn path_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "run",
        "tests/fixtures/inputs/graph/path.dl",
        "--facts",
        "tests/fixtures/inputs/graph/graph.json",
        "--evidence",
        "tests/fixtures/inputs/graph/edges.jsonl",
    ];
    v.extend_from_slice(extra);
    v
}

#[test]
fn facts_and_evidence_give_the_golden_output() {
    let out = ok(&path_args(&[]));
    golden("run_path.json", &out);
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(
        v["path"].as_array().map(Vec::len),
        Some(25),
        "5-cycle: every pair"
    );
    assert_eq!(v["label"], serde_json::json!([[1, "start"], [4, "goal"]]));
    assert!(v.get("edge").is_none(), "only .output relations");
}

#[test]
fn all_prints_every_relation() {
    let out = ok(&path_args(&["--all"]));
    golden("run_path_all.json", &out);
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(
        v["edge"],
        serde_json::json!([[1, 2], [2, 3], [3, 4], [4, 5], [5, 1]])
    );
}

#[test]
fn count_prints_row_counts() {
    let out = ok(&path_args(&["--count"]));
    golden("run_path_count.json", &out);
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v, serde_json::json!({"label": 2, "path": 25}));
    let all: serde_json::Value =
        serde_json::from_str(&ok(&path_args(&["--count", "--all"]))).expect("valid JSON");
    assert_eq!(all["edge"], 5);
}

#[test]
fn confidence_shape_carries_each_rows_confidence() {
    let out = ok(&path_args(&["--confidence"]));
    golden("run_path_confidence.json", &out);
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    let rows = v["path"].as_array().expect("rows");
    let find = |a: i64, b: i64| {
        rows.iter()
            .find(|r| r["args"] == serde_json::json!([a, b]))
            .map(|r| r["confidence"].as_f64().expect("number"))
    };
    assert_eq!(find(1, 2), Some(0.9));
    // 4 -> 5 is given with confidence 0.5: every path through it is at most 0.5.
    assert_eq!(find(4, 5), Some(0.45));
    assert_eq!(find(1, 3), Some(0.9));
}

#[test]
fn no_provenance_changes_nothing_in_the_output() {
    assert_eq!(ok(&path_args(&[])), ok(&path_args(&["--no-provenance"])));
    assert_eq!(ok(&["run"]), ok(&["run", "--no-provenance"]));
}

#[test]
fn text_format_is_a_table_per_relation() {
    let out = ok(&path_args(&["--format", "text"]));
    golden("run_path_text.txt", &out);
    assert!(out.contains("label (2 facts)\n"), "{out}");
    assert!(out.contains("  path(1, 2)  0.90\n"), "{out}");
    let counts = ok(&path_args(&["--format", "text", "--count"]));
    assert_eq!(counts, "label   2\npath   25\n");
}

#[test]
fn csv_and_facts_files_of_input_directives() {
    let out = ok(&["run", "tests/fixtures/inputs/csv/reach.dl"]);
    golden("run_csv_input.json", &out);
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert!(
        v["reach"]
            .as_array()
            .expect("rows")
            .contains(&serde_json::json!(["hub", "far, north"])),
        "quoted CSV field: {out}"
    );
    assert_eq!(v["heavy"], serde_json::json!([["hub"], ["south"]]));
}

#[test]
fn fact_dir_redirects_input_files() {
    // From another working directory, with the fact directory given explicitly.
    let fix = root().join(FIX).join("csv");
    let prog = fix.join("reach.dl");
    let o = prooflog_in(
        &std::env::temp_dir(),
        &[
            "run",
            prog.to_str().expect("utf-8 path"),
            "--fact-dir",
            fix.to_str().expect("utf-8 path"),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        ok(&["run", "tests/fixtures/inputs/csv/reach.dl"])
    );
    // A fact directory without the files is an error naming the directive.
    let err = fails_json(&[
        "run",
        "tests/fixtures/inputs/csv/reach.dl",
        "--fact-dir",
        "tests/fixtures/inputs/graph",
    ]);
    assert_eq!(err["error"]["code"], "io_error");
    assert_eq!(err["error"]["file"], "tests/fixtures/inputs/csv/reach.dl");
    assert_eq!(err["error"]["line"], 4);
}

#[test]
fn undeclared_relations_take_types_from_a_fact_directory() {
    let out = ok(&[
        "run",
        "tests/fixtures/inputs/undeclared/alerts.dl",
        "--facts",
        "tests/fixtures/inputs/undeclared/facts",
    ]);
    golden("run_undeclared.json", &out);
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(
        v["alert"],
        serde_json::json!([["s2", "harbor"], ["s3", "airport"]])
    );
}

#[test]
fn no_arguments_run_the_embedded_pack_from_anywhere() {
    let o = prooflog_in(&std::env::temp_dir(), &["run"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    golden("run_default_pack.json", &out);
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["coordinated_threat"], serde_json::json!([[42]]));
    assert_eq!(v["threatens"], serde_json::json!([[42, "airport"]]));
    assert_eq!(v["group_size"], serde_json::json!([[17, 1], [42, 2]]));
}

#[test]
fn extra_evidence_adds_to_the_embedded_pack() {
    let out = ok(&[
        "run",
        "--evidence",
        "tests/fixtures/inputs/extra/sightings.jsonl",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    // Drone 4 joins group 17, which becomes coordinated and so threatens the harbor
    // (drone 4's uncleared sighting) and the airport (drone 3's).
    assert_eq!(v["coordinated_threat"], serde_json::json!([[17], [42]]));
    assert_eq!(
        v["threatens"],
        serde_json::json!([[17, "airport"], [17, "harbor"], [42, "airport"]])
    );
    assert_eq!(v["group_size"], serde_json::json!([[17, 2], [42, 2]]));
}

#[test]
fn runs_are_byte_identical() {
    for args in [
        vec!["run"],
        path_args(&["--all", "--confidence"]),
        path_args(&["--format", "text"]),
    ] {
        assert_eq!(prooflog(&args).stdout, prooflog(&args).stdout, "{args:?}");
    }
}

#[test]
fn parse_error_points_at_file_line_and_column() {
    let args = ["run", "tests/fixtures/inputs/bad/parse.dl"];
    let text = fails_text(&[&args[..], &["--format", "text"]].concat());
    assert!(text.starts_with("error[parse_error]"), "{text}");
    assert!(
        text.contains(" --> tests/fixtures/inputs/bad/parse.dl:2:26"),
        "{text}"
    );
    assert!(text.contains('^'), "caret snippet: {text}");
    let err = fails_json(&args);
    assert_eq!(err["error"]["code"], "parse_error");
    assert_eq!(err["error"]["file"], "tests/fixtures/inputs/bad/parse.dl");
    assert_eq!(err["error"]["line"], 2);
    assert!(
        err["error"]["col"].as_u64().is_some_and(|c| c >= 25),
        "{err}"
    );
}

#[test]
fn bad_evidence_line_names_file_and_line() {
    let err = fails_json(&[
        "run",
        "--evidence",
        "tests/fixtures/inputs/bad/evidence_line.jsonl",
    ]);
    assert_eq!(err["error"]["code"], "bad_input");
    assert_eq!(
        err["error"]["file"],
        "tests/fixtures/inputs/bad/evidence_line.jsonl"
    );
    assert_eq!(err["error"]["line"], 3);
    assert_eq!(err["error"]["col"], 50);
    let text = fails_text(&[
        "run",
        "--format",
        "text",
        "--evidence",
        "tests/fixtures/inputs/bad/evidence_line.jsonl",
    ]);
    assert!(
        text.contains("tests/fixtures/inputs/bad/evidence_line.jsonl:3:50"),
        "{text}"
    );
    // The offending line is shown with a caret under column 50.
    let caret = format!("  | {}^", " ".repeat(49));
    assert!(text.contains(&caret), "{text}");
    assert!(
        text.contains(
            "3 | {\"predicate\": \"sighting\", \"args\": [7, \"airport\"] \"confidence\""
        ),
        "{text}"
    );
}

#[test]
fn data_for_an_unused_relation_loads_with_a_warning() {
    let args = [
        "run",
        "tests/fixtures/inputs/graph/path.dl",
        "--facts",
        "tests/fixtures/inputs/bad/unknown_rel.json",
        "--all",
    ];
    let o = prooflog(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(
        out["egde"],
        serde_json::json!([[8, 9]]),
        "the data is loaded: {out}"
    );
    let w: serde_json::Value = serde_json::from_str(stderr(&o).trim()).expect("one JSON warning");
    assert_eq!(w["warning"]["code"], "unused_relation");
    assert_eq!(
        w["warning"]["help"]
            .as_str()
            .map(|h| h.starts_with("did you mean `edge`?")),
        Some(true)
    );
    // Text warnings with --format text; --strict makes them errors.
    let mut text_args = args.to_vec();
    text_args.extend(["--format", "text"]);
    let err = stderr(&prooflog(&text_args));
    assert!(
        err.starts_with("warning[unused_relation]: `egde` is not used by any rule"),
        "{err}"
    );
    assert!(err.contains("did you mean `edge`?"), "{err}");
    assert!(err.contains("unknown_rel.json:3:12"), "{err}");
    let mut json_args = args.to_vec();
    json_args.push("--strict");
    let err = fails_json(&json_args);
    assert_eq!(err["error"]["code"], "unused_relation");
    assert_eq!(
        (err["error"]["line"].clone(), err["error"]["col"].clone()),
        (3.into(), 12.into())
    );
}

#[test]
fn out_of_range_or_missing_confidences_are_rejected() {
    for (file, line, what) in [
        ("conf_high.jsonl", 2, "outside [0, 1]"),
        ("conf_nan.jsonl", 1, "malformed JSON"),
        ("conf_string.jsonl", 1, "must be a number"),
    ] {
        let path = format!("{FIX}/bad/{file}");
        let err = fails_json(&["run", "--evidence", &path]);
        assert_eq!(err["error"]["code"], "bad_input", "{file}");
        assert_eq!(err["error"]["file"], path.as_str());
        assert_eq!(err["error"]["line"], line, "{file}");
        assert!(
            err["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(what)),
            "{file}: {err}"
        );
    }
}

#[test]
fn wrong_cell_type_in_an_input_file_names_the_cell() {
    let err = fails_json(&["run", "tests/fixtures/inputs/bad/typed.dl"]);
    assert_eq!(err["error"]["code"], "bad_input");
    assert_eq!(err["error"]["file"], "tests/fixtures/inputs/bad/scores.csv");
    assert_eq!(
        (err["error"]["line"].clone(), err["error"]["col"].clone()),
        (2.into(), 5.into())
    );
}

#[test]
fn an_edge_index_names_one_fact() {
    let err = fails_json(&[
        "run",
        "--evidence",
        "tests/fixtures/inputs/bad/dup_edge.jsonl",
    ]);
    assert_eq!(err["error"]["code"], "bad_input");
    assert_eq!(err["error"]["line"], 1);
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("edge_idx 42 is already used by member(42, 7)")),
        "{err}"
    );
}

#[test]
fn every_problem_is_reported_in_one_json_document() {
    let err = fails_json(&["run", "--evidence", "tests/fixtures/inputs/bad/many.jsonl"]);
    // Line 2 fails while reading, line 4 while typing: all in one pass, in line
    // order, each pointing at the offending value. (Line 5's misspelt relation is
    // loaded as a relation of its own, with an `unused_relation` warning.)
    assert_eq!(err["error"]["code"], "bad_input");
    let at: Vec<(serde_json::Value, serde_json::Value)> = std::iter::once(&err["error"])
        .chain(err["more"].as_array().into_iter().flatten())
        .map(|e| (e["line"].clone(), e["col"].clone()))
        .collect();
    assert_eq!(
        at,
        vec![(2.into(), 55.into()), (4.into(), 33.into())],
        "{err}"
    );
    // Typing reports every bad record at once.
    let err = fails_json(&[
        "run",
        "--evidence",
        "tests/fixtures/inputs/extra/sightings.jsonl",
        "--facts",
        "tests/fixtures/inputs/bad/mistyped.json",
    ]);
    let lines: Vec<(serde_json::Value, serde_json::Value)> = std::iter::once(&err["error"])
        .chain(err["more"].as_array().into_iter().flatten())
        .map(|e| (e["file"].clone(), e["line"].clone()))
        .collect();
    assert_eq!(
        lines,
        vec![
            ("tests/fixtures/inputs/bad/mistyped.json".into(), 2.into()),
            ("tests/fixtures/inputs/bad/mistyped.json".into(), 3.into()),
        ],
        "{err}"
    );
}

#[test]
fn a_missing_program_file_is_an_io_error() {
    let err = fails_json(&["run", "tests/fixtures/inputs/nope.dl"]);
    assert_eq!(err["error"]["code"], "io_error");
    let text = fails_text(&["run", "tests/fixtures/inputs/nope.dl", "--format", "text"]);
    assert!(text.contains("tests/fixtures/inputs/nope.dl"), "{text}");
}

#[test]
fn help_documents_the_embedded_pack() {
    let help = ok(&["run", "--help"]);
    assert!(help.contains("rules/drones/drones.dl"), "{help}");
    assert!(help.contains("--no-provenance"), "{help}");
}

#[test]
fn usage_errors_follow_the_requested_format() {
    let json = fails_json(&["run", "--bogus", "--format", "json"]);
    assert_eq!(json["error"]["code"], "usage");
    assert_eq!(
        json["error"]["message"],
        "unexpected argument '--bogus' found"
    );
    let json = fails_json(&["prove", "--format=json"]);
    assert_eq!(json["error"]["code"], "usage");
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--goal")
    );
    let text = fails_text(&["run", "--bogus"]);
    assert!(text.contains("unexpected argument '--bogus'"), "{text}");
}

#[test]
fn tags_name_each_input_fact() {
    let out = ok(&["run", "--all", "--tags"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(
        v["member"][0],
        serde_json::json!({"args": [17, 3], "tag": "HEDGE-44"})
    );
    // Derived facts have no tag.
    assert_eq!(
        v["coordinated_threat"][0],
        serde_json::json!({"args": [42]})
    );
    let both = ok(&["run", "--all", "--tags", "--confidence"]);
    let v: serde_json::Value = serde_json::from_str(&both).expect("valid JSON");
    assert_eq!(
        v["sighting"][0],
        serde_json::json!({"args": [3, "airport"], "confidence": 0.7, "tag": "HEDGE-103"})
    );
    let text = ok(&["run", "--all", "--tags", "--format", "text"]);
    assert!(text.contains("  member(42, 7)  1.00  HEDGE-42\n"), "{text}");
    assert!(text.contains("  coordinated_threat(42)  0.90\n"), "{text}");
}

/// Diagnostics are for people on a terminal: text, unless `--format json` asks.
#[test]
fn errors_on_a_terminal_are_text() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no `script` to give the binary a terminal");
        return;
    }
    let on_tty = |args: &str| {
        let out = std::process::Command::new("script")
            .args(["-qec", &format!("{} {args}", support::BIN), "/dev/null"])
            .current_dir(root())
            .output()
            .expect("script runs");
        String::from_utf8_lossy(&out.stdout).replace('\r', "")
    };
    let text = on_tty("run no/such/file.dl");
    assert!(text.starts_with("error[io_error]: "), "{text}");
    let json = on_tty("run no/such/file.dl --format json");
    assert!(
        json.starts_with("{\"error\":{\"code\":\"io_error\""),
        "{json}"
    );
}

#[test]
fn souffle_output_directory_and_stdout() {
    let dir = std::env::temp_dir().join(format!("prooflog-souffle-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.to_str().expect("utf-8 temp path");
    let stdout = ok(&[
        "run",
        "tests/fixtures/inputs/souffle/tc.dl",
        "-F",
        "tests/fixtures/inputs/souffle/facts",
        "-D",
        out,
    ]);
    // IO=stdout tables and .printsize lines go to stdout, the rest to files.
    golden("souffle_stdout.txt", &stdout);
    let path = std::fs::read_to_string(dir.join("path.csv")).expect("path.csv is written");
    golden("souffle_path.csv", &path);
    let e2 = std::fs::read_to_string(dir.join("e2.tsv")).expect("e2.tsv as its options say");
    assert_eq!(e2, "x,y\n2,3\n3,4\n");
    std::fs::remove_dir_all(&dir).expect("clean up");
    // `-D -`: every output relation on stdout.
    let all = ok(&[
        "run",
        "tests/fixtures/inputs/souffle/tc.dl",
        "--fact-dir",
        "tests/fixtures/inputs/souffle/facts",
        "-D",
        "-",
    ]);
    golden("souffle_stdout_all.txt", &all);
}

#[test]
fn printsize_prints_the_count_in_json() {
    let dir = std::env::temp_dir().join(format!("prooflog-printsize-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("p.dl"),
        "e(1, 2). e(2, 3).\n.printsize e\nf(x) :- e(x, _).\n.output f\n",
    )
    .expect("write");
    let o = prooflog(&["run", dir.join("p.dl").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["e"], 2, "{v}");
    assert_eq!(v["f"], serde_json::json!([[1], [2]]));
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn an_output_with_a_filename_is_written_without_d() {
    let dir = std::env::temp_dir().join(format!("prooflog-iofile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("p.dl"),
        "e(1, 2).\n.output e(IO=file, filename=\"e.csv\")\n",
    )
    .expect("write");
    let o = prooflog_in(&dir, &["run", "p.dl"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("e.csv")).expect("e.csv written"),
        "1\t2\n"
    );
    // The JSON contract on stdout is kept.
    assert!(stdout(&o).contains("\"e\""), "{}", stdout(&o));
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn conformance_cases_give_their_golden_output() {
    for case in [
        "nemo_negation",
        "string_functors",
        "numeric_functors",
        "university",
        "expressions_in_atoms",
    ] {
        let dir = format!("tests/conformance/{case}");
        let program = format!("{dir}/program.dl");
        let facts = format!("{dir}/facts.json");
        let o = prooflog(&["run", &program, "--facts", &facts, "--all"]);
        assert_eq!(o.status.code(), Some(0), "{case}: {}", stderr(&o));
        golden(&format!("conformance_{case}.json"), &stdout(&o));
    }
}

#[test]
fn every_thread_count_prints_the_same_bytes() {
    // A graph large enough that rounds split into many pieces (a delta of more than
    // 1,024 rows): 150 nodes, 300 edges, from a fixed pseudo-random sequence.
    let dir = support::scratch("cli_run", "threads");
    let mut facts = String::from("{\"edge\": [");
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..300 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let (a, b) = (x % 150, (x >> 20) % 150);
        let sep = if i == 0 { "" } else { ", " };
        facts.push_str(&format!("{sep}[{a}, {b}]"));
    }
    facts.push_str("]}");
    let facts = support::write(&dir, "edge.json", &facts);
    let program = support::write(
        &dir,
        "tc.dl",
        ".decl edge(a: number, b: number)\n\
         .decl path(a: number, b: number)\n\
         .decl hops(a: number, n: number)\n\
         path(x, y) :- edge(x, y).\n\
         path(x, z) :- path(x, y), edge(y, z).\n\
         hops(x, n) :- path(x, _), n = count : { path(x, _) }.\n",
    );
    let run = |threads: &str| ok(&["run", &program, "--facts", &facts, "--threads", threads]);
    let one = run("1");
    let paths = serde_json::from_str::<serde_json::Value>(&one).expect("JSON")["path"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(paths > 10_000, "a large closure: {paths} paths");
    assert_eq!(run("2"), one);
    assert_eq!(run("3"), one);
    let prove = |threads: &str| {
        ok(&[
            "prove",
            &program,
            "--facts",
            &facts,
            "--goal",
            "path(x, y)",
            "--limit",
            "50",
            "--threads",
            threads,
        ])
    };
    let one = prove("1");
    assert_eq!(prove("2"), one);
    assert_eq!(prove("4"), one);
    for bad in ["0", "257", "many"] {
        let err = fails_text(&["run", &program, "--threads", bad]);
        assert!(err.contains("--threads"), "{bad}: {err}");
    }
}
