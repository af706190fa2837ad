//! An in-memory [`ProofSource`] for unit tests: facts given with their records
//! directly, so the walk can be tested without an evaluator.

use std::collections::HashMap;

use crate::diag::{Diagnostic, ErrorCode, Result, SourceMap, Span};
use crate::eval::{Derivation, FactId, Match};
use crate::ir::{Column, Head, Program, RelId, Relation, Rule, RuleId};
use crate::store::{InputFact, Provenance};
use crate::syntax::{Goal, GoalArg};
use crate::value::Value;

use super::ProofSource;

enum Record {
    Input(InputFact),
    Derived(Derivation),
}

pub(crate) struct MockBase {
    pub(crate) program: Program,
    pub(crate) provenance: bool,
    rows: Vec<Vec<(Vec<Value>, f64, Record)>>,
    index: HashMap<(RelId, Vec<Value>), FactId>,
}

pub(crate) fn n(i: i64) -> Value {
    Value::Number(i)
}

pub(crate) fn sym(s: &str) -> Value {
    Value::Symbol(s.to_string())
}

impl MockBase {
    pub(crate) fn new() -> MockBase {
        MockBase {
            program: Program {
                relations: Vec::new(),
                rules: Vec::new(),
                strata: Vec::new(),
                facts: Vec::new(),
                sources: SourceMap::new(),
                pack: Default::default(),
            },
            provenance: true,
            rows: Vec::new(),
            index: HashMap::new(),
        }
    }

    /// Declare (or find) a relation; column types come from `sample`.
    pub(crate) fn relation(&mut self, name: &str, sample: &[Value]) -> RelId {
        if let Some(r) = self.program.relation_id(name) {
            return r;
        }
        self.program.relations.push(Relation {
            name: name.to_string(),
            columns: sample
                .iter()
                .enumerate()
                .map(|(i, v)| Column {
                    name: format!("_{i}"),
                    ty: v.column_type(),
                })
                .collect(),
            input: None,
            output: false,
            outputs: Vec::new(),
            printsize: false,
            auxiliary: false,
            functional: None,
            text: None,
            span: Span::default(),
        });
        self.rows.push(Vec::new());
        (self.program.relations.len() - 1) as RelId
    }

    pub(crate) fn set_text(&mut self, rel: RelId, text: &str) {
        self.program.relations[rel as usize].text = Some(text.to_string());
    }

    pub(crate) fn rule(&mut self, name: &str, confidence: f64, head: RelId) -> RuleId {
        let id = self.program.rules.len() as RuleId;
        self.program.rules.push(Rule {
            id,
            name: name.to_string(),
            confidence,
            head: Head {
                rel: head,
                args: Vec::new(),
            },
            body: Vec::new(),
            vars: Vec::new(),
            stratum: 0,
            span: Span::default(),
        });
        id
    }

    fn push(&mut self, rel: RelId, args: Vec<Value>, conf: f64, record: Record) -> FactId {
        let id = FactId {
            rel,
            row: self.rows[rel as usize].len() as u32,
        };
        self.index.insert((rel, args.clone()), id);
        self.rows[rel as usize].push((args, conf, record));
        id
    }

    pub(crate) fn input(&mut self, pred: &str, args: Vec<Value>, conf: f64, edge: u64) -> FactId {
        let rel = self.relation(pred, &args);
        let input = InputFact {
            rel,
            args: args.clone(),
            confidence: conf,
            provenance: Provenance {
                source: "hyperedge".to_string(),
                table: Some("T".to_string()),
                edge_idx: Some(edge),
                event_ts: Some(serde_json::json!(1_700_000_000u64 + edge)),
                member_ids: Vec::new(),
                extra: Default::default(),
            },
        };
        self.push(rel, args, conf, Record::Input(input))
    }

    /// A derived fact whose confidence follows the rule: conf(rule) × min(premises).
    pub(crate) fn derive(
        &mut self,
        pred: &str,
        args: Vec<Value>,
        rule: RuleId,
        premises: Vec<FactId>,
        absent: Vec<(RelId, Vec<Value>)>,
    ) -> FactId {
        let rel = self.relation(pred, &args);
        let min = premises
            .iter()
            .map(|&p| self.confidence(p))
            .fold(1.0f64, f64::min);
        let height = premises
            .iter()
            .map(|&p| self.derivation(p).map_or(0, |d| d.height))
            .max()
            .unwrap_or(0)
            + 1;
        let conf = self.program.rules[rule as usize].confidence * min;
        let d = Derivation {
            rule,
            premises,
            absent,
            height,
        };
        self.push(rel, args, conf, Record::Derived(d))
    }

    /// Overwrite a derivation's premises (to build inconsistent records).
    pub(crate) fn set_premises(&mut self, fact: FactId, premises: Vec<FactId>) {
        if let Record::Derived(d) = &mut self.rows[fact.rel as usize][fact.row as usize].2 {
            d.premises = premises;
        }
    }

    fn entry(&self, f: FactId) -> &(Vec<Value>, f64, Record) {
        &self.rows[f.rel as usize][f.row as usize]
    }
}

impl ProofSource for MockBase {
    fn program(&self) -> &Program {
        &self.program
    }

    fn provenance_enabled(&self) -> bool {
        self.provenance
    }

    fn lookup(&self, rel: RelId, args: &[Value]) -> Option<FactId> {
        self.index.get(&(rel, args.to_vec())).copied()
    }

    fn args(&self, fact: FactId) -> Vec<Value> {
        self.entry(fact).0.clone()
    }

    fn confidence(&self, fact: FactId) -> f64 {
        self.entry(fact).1
    }

    fn derivation(&self, fact: FactId) -> Option<Derivation> {
        match &self.entry(fact).2 {
            Record::Derived(d) => Some(d.clone()),
            Record::Input(_) => None,
        }
    }

    fn evidence(&self, fact: FactId) -> Option<InputFact> {
        match &self.entry(fact).2 {
            Record::Input(i) => Some(i.clone()),
            Record::Derived(_) => None,
        }
    }

    fn query(&self, pattern: &Goal) -> Result<Vec<Match>> {
        let rel = self
            .program
            .relation_id(&pattern.predicate)
            .ok_or_else(|| Diagnostic::new(ErrorCode::UnknownRelation, "unknown relation"))?;
        let mut out = Vec::new();
        for (row, (args, conf, _)) in self.rows[rel as usize].iter().enumerate() {
            let mut bindings: Vec<(String, Value)> = Vec::new();
            let ok = pattern.args.iter().zip(args).all(|(p, v)| match p {
                GoalArg::Const(c) => c == v,
                GoalArg::Wildcard => true,
                GoalArg::Var(name) => match bindings.iter().find(|(n, _)| n == name) {
                    Some((_, b)) => b == v,
                    None => {
                        bindings.push((name.clone(), v.clone()));
                        true
                    }
                },
            });
            if ok {
                out.push(Match {
                    fact: FactId {
                        rel,
                        row: row as u32,
                    },
                    args: args.clone(),
                    bindings,
                    confidence: *conf,
                });
            }
        }
        out.sort_by(|a, b| a.args.cmp(&b.args));
        Ok(out)
    }
}
