//! Any text as a CSV, TSV or `.facts` file (the first byte picks the dialect), typed
//! against a program that reads it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prooflog::diag::SourceMap;
use prooflog::store::{Dialect, RawInputs};

const PROGRAM: &str = "p(x) :- e(x, _, _).\n";

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let dialect = match pick % 3 {
        0 => Dialect::csv(),
        1 => Dialect::tsv(),
        _ => Dialect {
            headers: true,
            ..Dialect::csv()
        },
    };
    let mut raw = RawInputs::new();
    if raw.add_delimited("e.csv", "e", &text, dialect).is_err() {
        return;
    }
    let hints = raw.type_hints();
    let mut sources = SourceMap::new();
    sources.add("fuzz.dl", PROGRAM);
    if let Ok(program) = prooflog::check::compile(sources, &hints) {
        let _ = raw.resolve(&program);
    }
});
