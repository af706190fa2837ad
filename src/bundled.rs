//! The default rule pack, compiled into the library so that a program (the command
//! line, a test, a service) can run it with no files on disk.
//!
//! The pack is the drone threat pack of `rules/drones/`: its manifest, its rules and
//! its sample evidence, under the names they have in the repository (diagnostics and
//! provenance records show those names). [`default_pack`] is it as a
//! [`Pack`](crate::pack::Pack).

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

/// The default pack's manifest (`rules/drones/pack.ron`).
pub const DEFAULT_MANIFEST: BundledFile = BundledFile {
    name: "rules/drones/pack.ron",
    text: include_str!("../rules/drones/pack.ron"),
};

/// The default pack's sample evidence as stored hyperedges, with the documents and
/// spans they were read from (`rules/drones/hyperedges.jsonl`).
pub const DEFAULT_HYPEREDGES: BundledFile = BundledFile {
    name: "rules/drones/hyperedges.jsonl",
    text: include_str!("../rules/drones/hyperedges.jsonl"),
};

/// Every file of the default pack.
pub const DEFAULT_PACK_FILES: [BundledFile; 4] = [
    DEFAULT_MANIFEST,
    DEFAULT_PROGRAM,
    DEFAULT_EVIDENCE,
    DEFAULT_HYPEREDGES,
];

/// The default pack as a loadable [`Pack`](crate::pack::Pack): the drone threat pack
/// of `rules/drones/`, with no file read from disk.
pub fn default_pack() -> crate::pack::Pack {
    let files: Vec<(&str, &str)> = DEFAULT_PACK_FILES
        .iter()
        .map(|f| (f.name.trim_start_matches("rules/drones/"), f.text))
        .collect();
    // The bundled files are the repository's pack, checked by this module's tests.
    crate::pack::Pack::from_texts("rules/drones", DEFAULT_MANIFEST.text, &files)
        .expect("the bundled default pack is valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_pack_is_the_repository_pack() {
        let root = env!("CARGO_MANIFEST_DIR");
        for file in DEFAULT_PACK_FILES {
            let on_disk = std::fs::read_to_string(format!("{root}/{}", file.name))
                .expect("the bundled file exists in the repository");
            assert_eq!(file.text, on_disk, "{}", file.name);
        }
    }

    #[test]
    fn the_default_pack_loads_and_passes_its_samples() {
        let pack = default_pack();
        assert_eq!(pack.name(), "drones");
        let report = pack.check().unwrap();
        assert!(report.passed(), "{report:?}");
    }
}
