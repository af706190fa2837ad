//! One evidence record in its JSON form, typed against a program one record at a time:
//! the form services and bindings receive evidence in (an HTTP body, a Python dict),
//! and the form the durable evidence store keeps.
//!
//! Unlike [`RawInputs::resolve`](crate::store::RawInputs::resolve), which loads whole
//! files and numbers their evidence, a record keeps an `edge_idx` only when it gives
//! one: evidence added to an evaluated base is numbered against that base
//! ([`number_inputs`](crate::store::number_inputs)).

use serde::{Deserialize, Serialize};

use crate::diag::{Diagnostic, ErrorCode, Result};
use crate::ir::Program;
use crate::store::{InputFact, Provenance};
use crate::value::{ColumnType, Value};

/// An input fact as JSON: `{"predicate", "args", "confidence"?, "provenance"?}`, the
/// evidence JSONL line of the command line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FactRecord {
    /// The relation.
    pub predicate: String,
    /// Its values: JSON numbers and strings, typed as the relation's columns.
    pub args: Vec<serde_json::Value>,
    /// In [0, 1]; 1.0 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Where it came from; without an `edge_idx` it is numbered when added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

fn bad(message: String) -> crate::diag::Error {
    Diagnostic::new(ErrorCode::BadInput, message).into()
}

impl FactRecord {
    /// The record of an input fact (every field explicit).
    pub fn of(program: &Program, fact: &InputFact) -> FactRecord {
        FactRecord {
            predicate: program.relation(fact.rel).name.clone(),
            args: fact.args.iter().map(Value::to_json).collect(),
            confidence: Some(fact.confidence),
            provenance: Some(fact.provenance.clone()),
        }
    }

    /// This record typed against `program`; `at` names it in errors (`facts[3]`). An
    /// unknown relation is an `unknown_relation` error, a wrong number of values, a
    /// value that does not fit its column or a confidence outside [0, 1] a
    /// `bad_input` error. The provenance's `source` defaults to `"hyperedge"`.
    pub fn to_input(&self, program: &Program, at: &str) -> Result<InputFact> {
        let rel = program.relation_id(&self.predicate).ok_or_else(|| {
            crate::diag::Error::from(Diagnostic::new(
                ErrorCode::UnknownRelation,
                format!("{at}: the program has no relation `{}`", self.predicate),
            ))
        })?;
        let columns = &program.relation(rel).columns;
        if columns.len() != self.args.len() {
            return Err(bad(format!(
                "{at}: `{}` takes {} arguments, the record gives {}",
                self.predicate,
                columns.len(),
                self.args.len()
            )));
        }
        let args = self
            .args
            .iter()
            .zip(columns)
            .enumerate()
            .map(|(i, (v, col))| {
                coerce(v, col.ty).ok_or_else(|| {
                    bad(format!(
                        "{at}.args[{i}]: {v} is not a {} (column `{}` of `{}`)",
                        col.ty.as_str(),
                        col.name,
                        self.predicate
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let confidence = self.confidence.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&confidence) {
            return Err(bad(format!(
                "{at}.confidence: {confidence} is not in [0, 1]"
            )));
        }
        let mut provenance = self.provenance.clone().unwrap_or_default();
        if provenance.source.is_empty() {
            provenance.source = "hyperedge".into();
        }
        Ok(InputFact {
            rel,
            args,
            confidence,
            provenance,
        })
    }
}

/// A JSON value as a value of a column: numbers and strings by the one coercion
/// ([`ColumnType::coerce`]), a number into a symbol column as its decimal text, a
/// numeric string into a numeric column.
fn coerce(v: &serde_json::Value, ty: ColumnType) -> Option<Value> {
    let value = Value::from_json(v)?;
    match (&value, ty) {
        (Value::Symbol(_), ColumnType::Symbol) => Some(value),
        (Value::Symbol(s), _) => {
            let parsed = serde_json::from_str::<serde_json::Value>(s.trim()).ok()?;
            parsed
                .is_number()
                .then(|| Value::from_json(&parsed))
                .flatten()
                .and_then(|n| ty.coerce(&n))
        }
        (_, ColumnType::Symbol) => Some(Value::Symbol(v.to_string())),
        _ => ty.coerce(&value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_coerce_to_their_columns() {
        let n = |v: serde_json::Value, t| coerce(&v, t);
        assert_eq!(
            n(serde_json::json!(42), ColumnType::Number),
            Some(Value::Number(42))
        );
        assert_eq!(
            n(serde_json::json!("42"), ColumnType::Number),
            Some(Value::Number(42))
        );
        assert_eq!(
            n(serde_json::json!(7), ColumnType::Symbol),
            Some(Value::Symbol("7".into()))
        );
        assert_eq!(n(serde_json::json!("x"), ColumnType::Number), None);
        assert_eq!(n(serde_json::json!(1.5), ColumnType::Number), None);
        assert_eq!(n(serde_json::json!([1]), ColumnType::Number), None);
    }

    #[test]
    fn records_round_trip_through_input_facts() -> Result<()> {
        let program = Program::from_source("p.dl", ".decl p(x: number, y: symbol)\n")?;
        let record: FactRecord =
            serde_json::from_str(r#"{"predicate": "p", "args": ["3", 4], "confidence": 0.5}"#)
                .map_err(|e| bad(e.to_string()))?;
        let fact = record.to_input(&program, "r")?;
        assert_eq!(fact.args, vec![Value::Number(3), Value::Symbol("4".into())]);
        assert_eq!(fact.provenance.source, "hyperedge");
        assert_eq!(
            FactRecord::of(&program, &fact).to_input(&program, "r")?,
            fact
        );
        let wrong = FactRecord {
            confidence: Some(1.5),
            ..record
        };
        assert!(wrong.to_input(&program, "r").is_err());
        Ok(())
    }
}
