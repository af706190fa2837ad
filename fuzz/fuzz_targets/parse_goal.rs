//! Any text as a `--goal`: a goal or a parse error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(goal) = prooflog::syntax::parse_goal(&text) {
        let _ = goal.is_ground();
        let _ = prooflog::Fact::from_goal(&goal);
    }
});
