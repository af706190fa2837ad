//! The default rule pack, compiled into the library so that a program (the command
//! line, a test, a service) can run it with no files on disk.
//!
//! The pack is the drone threat pack of `rules/drones/`: its rules and its sample
//! evidence, under the names they have in the repository (diagnostics and provenance
//! records show those names).

/// A text file compiled into the library: the name it is reported under, and its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BundledFile {
    /// The file's path in the repository, used in diagnostics and provenance.
    pub name: &'static str,
    /// The file's contents.
    pub text: &'static str,
}

/// The default pack's rules (`rules/drones/drones.dl`).
pub const DEFAULT_PROGRAM: BundledFile = BundledFile {
    name: "rules/drones/drones.dl",
    text: include_str!("../rules/drones/drones.dl"),
};

/// The default pack's sample evidence (`rules/drones/evidence.jsonl`).
pub const DEFAULT_EVIDENCE: BundledFile = BundledFile {
    name: "rules/drones/evidence.jsonl",
    text: include_str!("../rules/drones/evidence.jsonl"),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_pack_is_the_repository_pack() {
        let root = env!("CARGO_MANIFEST_DIR");
        for file in [DEFAULT_PROGRAM, DEFAULT_EVIDENCE] {
            let on_disk = std::fs::read_to_string(format!("{root}/{}", file.name))
                .expect("the bundled file exists in the repository");
            assert_eq!(file.text, on_disk, "{}", file.name);
        }
    }
}
