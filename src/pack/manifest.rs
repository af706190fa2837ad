//! The `pack.ron` manifest, as serde reads it.

use serde::{Deserialize, Serialize};

use crate::diag::{Diagnostic, ErrorCode, Location, Result};

/// A pack's manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The pack's name (unique among the packs loaded together).
    pub name: String,
    /// Its version.
    pub version: String,
    /// What it reasons about, in a sentence or two.
    pub description: String,
    /// Rule files (`.dl`), relative to the pack, compiled in this order.
    pub rules: Vec<String>,
    /// How stored evidence tables become the pack's facts.
    #[serde(default)]
    pub evidence: Vec<TableMapping>,
    /// The goals the pack answers.
    #[serde(default)]
    pub goals: Vec<GoalSpec>,
    /// Sample evidence and what it must conclude.
    #[serde(default)]
    pub samples: Vec<Sample>,
}

/// One evidence table and the predicate its records become.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableMapping {
    /// The table's name, as hyperedges give it.
    pub table: String,
    /// The predicate a record of it becomes.
    pub predicate: String,
    /// Where each column's value comes from.
    pub args: Vec<ArgSource>,
}

/// Where a mapped fact's column takes its value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ArgSource {
    /// The hyperedge's i-th member id.
    Member(usize),
    /// A named attribute.
    Attr(String),
    /// Its `event_ts`.
    EventTs,
    /// A constant symbol.
    Symbol(String),
    /// A constant number.
    Number(i64),
}

/// A goal the pack answers: a pattern and a question about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoalSpec {
    /// Its name (unique among the packs loaded together).
    pub name: String,
    /// A goal pattern with named variables: `threatens(group, zone)`.
    pub goal: String,
    /// The question it answers; `{var}` names a variable of the pattern.
    pub question: String,
}

/// Sample evidence and the conclusions it must (and must not) produce.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    /// Its name.
    pub name: String,
    /// Evidence in fact JSONL (`{"predicate", "args", …}` per line), relative to the
    /// pack.
    #[serde(default)]
    pub evidence: Option<String>,
    /// Evidence as hyperedge JSONL, mapped through the pack's tables.
    #[serde(default)]
    pub hyperedges: Option<String>,
    /// Goal patterns that must each match at least one fact.
    #[serde(default)]
    pub expect: Vec<String>,
    /// Goal patterns that must match no fact.
    #[serde(default)]
    pub absent: Vec<String>,
}

impl Manifest {
    /// Read a manifest; `name` is what errors call it. Optional fields may be written
    /// without `Some(…)`.
    pub fn parse(name: &str, text: &str) -> Result<Manifest> {
        let options = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let manifest: Manifest = options.from_str(text).map_err(|e| {
            let at = Location::at(name, e.span.start.line, e.span.start.col);
            crate::diag::Error::from(
                Diagnostic::new(ErrorCode::BadPack, format!("pack manifest: {}", e.code))
                    .at(at)
                    .with_help(
                        "pack.ron is ( name, version, description, rules: [..], evidence: [..], goals: [..], samples: [..] )",
                    ),
            )
        })?;
        if manifest.rules.is_empty() {
            return Err(Diagnostic::new(
                ErrorCode::BadPack,
                format!("pack `{}` lists no rule files", manifest.name),
            )
            .at(Location::at(name, 1, 1))
            .into());
        }
        Ok(manifest)
    }

    /// Every file the manifest names, rules first.
    pub fn files(&self) -> Vec<String> {
        let mut out = self.rules.clone();
        for s in &self.samples {
            for f in s.evidence.iter().chain(&s.hyperedges) {
                if !out.contains(f) {
                    out.push(f.clone());
                }
            }
        }
        out
    }

    /// The manifest as RON text.
    pub fn to_ron(&self) -> String {
        ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default()).unwrap_or_default()
    }
}
