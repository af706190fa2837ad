//! The durable evidence store: base evidence in an embedded database (redb), one
//! record per input fact in the evidence JSONL form, keyed by a sequence number.
//!
//! A batch is written in one transaction and committed with immediate durability
//! (fsync) before the service acknowledges it; on start every record is replayed, in
//! sequence order, into the base. A crash therefore loses nothing acknowledged, and a
//! batch is either wholly stored or not at all.

use std::path::{Path, PathBuf};

use prooflog::{Diagnostic, ErrorCode};
use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};

use crate::api::FactRecord;

/// Sequence number → the record's JSON.
const EVIDENCE: TableDefinition<u64, &str> = TableDefinition::new("evidence");

/// The database file inside the data directory.
pub const STORE_FILE: &str = "evidence.redb";

/// Base evidence kept on disk.
pub struct EvidenceStore {
    db: Database,
    path: PathBuf,
}

fn io_error(what: &str, path: &Path, e: impl std::fmt::Display) -> prooflog::Error {
    Diagnostic::new(
        ErrorCode::Io,
        format!("evidence store {}: {what}: {e}", path.display()),
    )
    .into()
}

impl EvidenceStore {
    /// Open the store in `dir` (created if needed).
    pub fn open(dir: &Path) -> prooflog::Result<EvidenceStore> {
        std::fs::create_dir_all(dir).map_err(|e| io_error("cannot create", dir, e))?;
        let path = dir.join(STORE_FILE);
        let db = Database::create(&path).map_err(|e| io_error("cannot open", &path, e))?;
        let store = EvidenceStore { db, path };
        // Create the table, so that reading an empty store needs no special case.
        let txn = store
            .db
            .begin_write()
            .map_err(|e| io_error("cannot write", &store.path, e))?;
        txn.open_table(EVIDENCE)
            .map_err(|e| io_error("cannot open its table", &store.path, e))?;
        txn.commit()
            .map_err(|e| io_error("cannot commit", &store.path, e))?;
        Ok(store)
    }

    /// Where the database file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every record, in the order it was stored.
    pub fn records(&self) -> prooflog::Result<Vec<FactRecord>> {
        let txn = self
            .db
            .begin_read()
            .map_err(|e| io_error("cannot read", &self.path, e))?;
        let table = txn
            .open_table(EVIDENCE)
            .map_err(|e| io_error("cannot read", &self.path, e))?;
        let mut out = Vec::new();
        for entry in table
            .iter()
            .map_err(|e| io_error("cannot read", &self.path, e))?
        {
            let (key, value) = entry.map_err(|e| io_error("cannot read", &self.path, e))?;
            let record: FactRecord = serde_json::from_str(value.value()).map_err(|e| {
                io_error(&format!("record {} is corrupt", key.value()), &self.path, e)
            })?;
            out.push(record);
        }
        Ok(out)
    }

    /// How many records it holds.
    pub fn len(&self) -> prooflog::Result<u64> {
        let txn = self
            .db
            .begin_read()
            .map_err(|e| io_error("cannot read", &self.path, e))?;
        let table = txn
            .open_table(EVIDENCE)
            .map_err(|e| io_error("cannot read", &self.path, e))?;
        table
            .len()
            .map_err(|e| io_error("cannot read", &self.path, e))
    }

    /// Whether it holds no record.
    pub fn is_empty(&self) -> prooflog::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Append `records` in one transaction, durable when this returns; returns the
    /// number of records stored after it.
    pub fn append(&self, records: &[FactRecord]) -> prooflog::Result<u64> {
        let txn = self
            .db
            .begin_write()
            .map_err(|e| io_error("cannot write", &self.path, e))?;
        let stored = {
            let mut table = txn
                .open_table(EVIDENCE)
                .map_err(|e| io_error("cannot write", &self.path, e))?;
            let first = table
                .last()
                .map_err(|e| io_error("cannot read", &self.path, e))?
                .map_or(0, |(k, _)| k.value() + 1);
            for (key, r) in (first..).zip(records) {
                let json = serde_json::to_string(r)
                    .map_err(|e| io_error("cannot encode a record", &self.path, e))?;
                table
                    .insert(key, json.as_str())
                    .map_err(|e| io_error("cannot write", &self.path, e))?;
            }
            table
                .len()
                .map_err(|e| io_error("cannot read", &self.path, e))?
        };
        txn.commit()
            .map_err(|e| io_error("cannot commit", &self.path, e))?;
        Ok(stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(i: i64) -> FactRecord {
        FactRecord {
            predicate: "member".into(),
            args: vec![serde_json::json!(i), serde_json::json!(i + 1)],
            confidence: Some(0.5),
            provenance: None,
        }
    }

    #[test]
    fn records_survive_reopening_in_order() -> prooflog::Result<()> {
        let dir = std::env::temp_dir().join(format!("prooflog-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let store = EvidenceStore::open(&dir)?;
            assert!(store.is_empty()?);
            assert_eq!(store.append(&[record(1), record(2)])?, 2);
            assert_eq!(store.append(&[record(3)])?, 3);
        }
        let store = EvidenceStore::open(&dir)?;
        let got: Vec<_> = store.records()?.iter().map(|r| r.args[0].clone()).collect();
        assert_eq!(got, vec![1, 2, 3]);
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    }
}
