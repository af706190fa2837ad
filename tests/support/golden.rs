//! Golden files under `tests/golden/`, shared by the library's and the command
//! line's tests. Set `UPDATE_GOLDEN=1` to rewrite them after a deliberate format
//! change, then review the diff.
#![allow(dead_code)] // each test crate uses a different part

use std::path::PathBuf;

/// The repository root, whichever package's tests include this file.
pub fn repo_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if manifest.join("tests/golden").is_dir() {
        manifest
    } else {
        manifest
            .parent()
            .expect("a workspace member lives inside the repository")
            .to_path_buf()
    }
}

/// Compare `actual` with `tests/golden/<file>` byte for byte.
pub fn assert_text(file: &str, actual: &str) {
    let path = repo_root().join("tests/golden").join(file);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).expect("golden file writable");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 creates it)", path.display()));
    assert_eq!(
        actual,
        expected,
        "{} differs (UPDATE_GOLDEN=1 rewrites it)",
        path.display()
    );
}

/// Compare `actual` with `tests/golden/<name>.json` as JSON values, so layout is free
/// (the file is written pretty-printed).
pub fn assert_json(name: &str, actual: &serde_json::Value) {
    let path = repo_root()
        .join("tests/golden")
        .join(format!("{name}.json"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let text = serde_json::to_string_pretty(actual).expect("pretty JSON");
        std::fs::write(&path, text + "\n").expect("golden file writable");
        return;
    }
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 creates it)", path.display()));
    let expected: serde_json::Value = serde_json::from_str(&text).expect("golden is JSON");
    assert_eq!(
        actual,
        &expected,
        "{} differs (UPDATE_GOLDEN=1 rewrites it)",
        path.display()
    );
}
