//! Any text as a JSON fact file, loaded against a program that reads two relations
//! (one declared, one typed by the data).
#![no_main]

use libfuzzer_sys::fuzz_target;
use prooflog::Loader;

const PROGRAM: &str = ".decl e(a: number, b: symbol)\np(x) :- e(x, _).\nq(y) :- f(y, _).\n";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut loader = Loader::new();
    loader.program_text("fuzz.dl", PROGRAM);
    if loader.facts_json("fuzz.json", &text).is_ok() {
        let _ = loader.load();
    }
});
