//! Checking a claim against the fact base (input and derived facts alike).
//!
//! A claim's arguments become values of its relation's columns (an entity its
//! symbol, a full date the number `yyyymmdd`, a number itself); a partial date or a
//! weekday is a constraint a stored date must meet. Then:
//!
//! - a fact that matches: the claim is **supported** (denied, if the claim is
//!   negative);
//! - for a `.functional` relation, a fact with the claim's key and another value: a
//!   **wrong value**;
//! - a rule for the claimed fact whose positive premises hold (or are themselves ruled
//!   out) but one of whose negated premises holds: the pack **rules the fact out**
//!   ("Bob is a current employee" when `left_company("bob")` holds);
//! - otherwise the fact is **absent** (a negative claim is then consistent).

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::FactId;
use crate::eval::FactBase;
use crate::ir::{ArithOp, CmpOp, Expr, Literal, RelId, Rule, Term};
use crate::value::{ColumnType, Value};

use super::claims::{Arg, ArgValue, Claim};
use super::lexicon::Lexicon;
use super::temporal::{Date, DateExpr};

/// What the fact base says about a claim.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    /// The claimed fact holds.
    Supported { fact: FactId },
    /// A negative claim whose fact does not hold (`blocker`: what rules it out).
    SupportedNegative { blocker: Option<FactId> },
    /// A functional relation holds another value at `col` for the claim's key.
    WrongValue { fact: FactId, col: usize },
    /// A negative claim of a fact that holds.
    Denied { fact: FactId },
    /// A positive claim the pack's rules rule out through `blocker`.
    Blocked { blocker: FactId },
    /// The fact base has no such fact; `unknown`: a column whose value it does not
    /// know at all.
    Absent { unknown: Option<usize> },
    /// Not checkable: an unknown name or an unresolved pronoun.
    Unchecked,
}

impl Verdict {
    /// `"supported"`, `"wrong_value"`, …
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Supported { .. } => "supported",
            Verdict::SupportedNegative { .. } => "supported_negative",
            Verdict::WrongValue { .. } => "wrong_value",
            Verdict::Denied { .. } => "denied",
            Verdict::Blocked { .. } => "ruled_out",
            Verdict::Absent { .. } => "absent",
            Verdict::Unchecked => "unchecked",
        }
    }
}

/// One column of a claim as values to look up.
#[derive(Debug, Clone)]
enum Choice {
    Exact(Vec<Value>),
    Constraint(DateExpr),
    Unknown,
}

/// Rows of one column by value.
type ColumnIndex = HashMap<Value, Vec<u32>>;

/// The fact base, its lexicon and lazily built per-column indexes.
pub(crate) struct Knowledge<'a> {
    pub fb: &'a FactBase,
    pub lexicon: Lexicon,
    index: Vec<Vec<OnceLock<ColumnIndex>>>,
    rules_by_head: Vec<Vec<usize>>,
    common: Vec<OnceLock<bool>>,
}

/// Most rule instances tried when looking for what rules a fact out.
const SEARCH_BUDGET: usize = 2000;

impl<'a> Knowledge<'a> {
    pub fn new(fb: &'a FactBase, alias: Option<RelId>) -> Knowledge<'a> {
        let program = fb.program();
        let index = program
            .relations()
            .iter()
            .map(|r| (0..r.arity()).map(|_| OnceLock::new()).collect())
            .collect();
        let mut rules_by_head = vec![Vec::new(); program.relations().len()];
        for (i, r) in program.rules().iter().enumerate() {
            rules_by_head[r.head.rel as usize].push(i);
        }
        Knowledge {
            fb,
            lexicon: Lexicon::build(fb, alias),
            index,
            rules_by_head,
            common: program
                .relations()
                .iter()
                .map(|_| OnceLock::new())
                .collect(),
        }
    }

    /// Whether most entities of the kind of `rel`'s first column (entities occurring
    /// in a column of that name) hold a fact of `rel`: a commonly held attribute.
    pub fn common_attribute(&self, rel: RelId) -> bool {
        *self.common[rel as usize].get_or_init(|| {
            let relation = self.fb.program().relation(rel);
            let Some(col0) = relation.columns.first() else {
                return false;
            };
            let name = col0.name.to_lowercase();
            let (mut kind, mut holders) = (0usize, 0usize);
            for e in &self.lexicon.entities {
                if e.column_names.contains(&name) {
                    kind += 1;
                    holders += usize::from(e.columns.contains(&(rel, 0)));
                }
            }
            kind > 0 && holders * 2 >= kind
        })
    }

    fn column(&self, rel: RelId, col: usize) -> &ColumnIndex {
        self.index[rel as usize][col].get_or_init(|| {
            let mut map: HashMap<Value, Vec<u32>> = HashMap::new();
            for f in self.fb.facts(rel) {
                let v = self.fb.args(f).swap_remove(col);
                map.entry(v).or_default().push(f.row);
            }
            map
        })
    }

    /// Facts of `rel` equal to `pattern` where it gives a value.
    pub fn find(&self, rel: RelId, pattern: &[Option<Value>]) -> Vec<FactId> {
        let bound: Vec<(usize, &Value)> = pattern
            .iter()
            .enumerate()
            .filter_map(|(c, v)| v.as_ref().map(|v| (c, v)))
            .collect();
        if bound.len() == pattern.len() {
            return self
                .fb
                .lookup(rel, &pattern.iter().flatten().cloned().collect::<Vec<_>>())
                .into_iter()
                .collect();
        }
        let rows: Vec<u32> = match bound
            .iter()
            .map(|&(c, v)| self.column(rel, c).get(v).map_or(&[][..], Vec::as_slice))
            .min_by_key(|rows| rows.len())
        {
            Some(rows) => rows.to_vec(),
            None => (0..self.fb.len(rel) as u32).collect(),
        };
        rows.into_iter()
            .map(|row| FactId { rel, row })
            .filter(|&f| {
                bound.len() <= 1 || {
                    let args = self.fb.args(f);
                    bound.iter().all(|(c, v)| &args[*c] == *v)
                }
            })
            .collect()
    }

    /// The citation tags of a fact: `HEDGE-<edge_idx>` for evidence; for a derived
    /// fact its rule's `RULE-n` and the evidence it rests on (at most 8 leaves).
    pub fn tags(&self, fact: FactId) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![fact];
        let mut seen = std::collections::HashSet::new();
        while let Some(f) = stack.pop() {
            if !seen.insert(f) || out.len() >= 9 {
                continue;
            }
            if let Some(e) = self.fb.evidence(f) {
                if let Some(idx) = e.provenance.edge_idx {
                    let tag = format!("HEDGE-{idx}");
                    if !out.contains(&tag) {
                        out.push(tag);
                    }
                }
            } else if let Some(d) = self.fb.derivation(f) {
                if f == fact {
                    out.push(format!("RULE-{}", d.rule));
                }
                stack.extend(d.premises.iter().rev());
            }
        }
        out
    }

    /// Whether a tag names something the fact base holds (`HEDGE-n` of an input
    /// record, `RULE-n` of a rule).
    pub fn knows_tag(&self, tag: &str) -> bool {
        if let Some(n) = tag
            .strip_prefix("HEDGE-")
            .and_then(|n| n.parse::<u64>().ok())
        {
            return self.fb.input_edge_idxs().any(|idx| idx == Some(n));
        }
        if let Some(n) = tag
            .strip_prefix("RULE-")
            .and_then(|n| n.parse::<usize>().ok())
        {
            return n < self.fb.program().rules().len();
        }
        false
    }

    /// A value as prose: an entity by its display name, a `yyyymmdd` number in a
    /// date column as an ISO date.
    pub fn value_text(&self, rel: RelId, col: usize, v: &Value) -> String {
        match v {
            Value::Symbol(s) => self
                .lexicon
                .by_symbol(s)
                .map_or_else(|| s.clone(), |id| self.lexicon.entities[id].display.clone()),
            Value::Number(n) if self.is_date_column(rel, col) => {
                Date::from_yyyymmdd(*n).map_or_else(|| n.to_string(), |d| d.to_string())
            }
            other => other.to_string(),
        }
    }

    /// A numeric column whose values are `yyyymmdd` dates.
    pub fn is_date_column(&self, rel: RelId, col: usize) -> bool {
        let c = &self.fb.program().relation(rel).columns[col];
        c.ty != ColumnType::Symbol && c.ty != ColumnType::Float && {
            let name = c.name.to_lowercase();
            name.contains("date") || name.contains("day") || {
                let facts: Vec<FactId> = self.fb.facts(rel).take(8).collect();
                !facts.is_empty()
                    && facts.iter().all(|&f| match &self.fb.args(f)[col] {
                        Value::Number(n) => Date::from_yyyymmdd(*n).is_some(),
                        _ => false,
                    })
            }
        }
    }

    /// A fact in the pack's words, with entities by display name.
    pub fn say(&self, fact: FactId) -> String {
        let program = self.fb.program();
        let relation = program.relation(fact.rel);
        let args: Vec<Value> = self
            .fb
            .args(fact)
            .iter()
            .enumerate()
            .map(|(c, v)| Value::Symbol(self.value_text(fact.rel, c, v)))
            .collect();
        crate::proof::verbalise(relation.text.as_deref(), &relation.name, &args)
    }

    /// A claimed fact in the pack's words, from the claim's own argument texts.
    pub fn say_claim(&self, claim: &Claim) -> String {
        let relation = self.fb.program().relation(claim.rel);
        let args: Vec<Value> = claim
            .args
            .iter()
            .map(|a| Value::Symbol(self.arg_text(a)))
            .collect();
        let text = crate::proof::verbalise(relation.text.as_deref(), &relation.name, &args);
        if claim.negated {
            format!("not: {text}")
        } else {
            text
        }
    }

    fn arg_text(&self, a: &Arg) -> String {
        match &a.value {
            ArgValue::Entity(ids) if ids.len() == 1 => {
                self.lexicon.entities[ids[0]].display.clone()
            }
            _ => a.text.clone(),
        }
    }

    /// A date of an entity: the value of a `.functional` relation keyed by the entity
    /// whose other column holds `yyyymmdd` dates (a meeting's date).
    pub fn date_of(&self, entity: usize) -> Option<(Date, FactId)> {
        let e = &self.lexicon.entities[entity];
        let program = self.fb.program();
        for &(rel, col) in &e.columns {
            let r = program.relation(rel);
            let Some(keys) = &r.functional else { continue };
            if keys != &[col] || r.arity() != 2 {
                continue;
            }
            let other = 1 - col;
            if !self.is_date_column(rel, other) {
                continue;
            }
            let mut pattern = vec![None; 2];
            pattern[col] = Some(Value::Symbol(e.symbol.clone()));
            if let Some(&f) = self.find(rel, &pattern).first()
                && let Value::Number(n) = self.fb.args(f)[other]
                && let Some(d) = Date::from_yyyymmdd(n)
            {
                return Some((d, f));
            }
        }
        None
    }

    fn choices(&self, claim: &Claim) -> Option<Vec<Choice>> {
        let relation = self.fb.program().relation(claim.rel);
        let mut out = Vec::with_capacity(claim.args.len());
        for (a, col) in claim.args.iter().zip(&relation.columns) {
            let choice = match (&a.value, col.ty) {
                (ArgValue::Name(_) | ArgValue::Unresolved(_), _) => return None,
                (ArgValue::Entity(ids), ColumnType::Symbol) => Choice::Exact(
                    ids.iter()
                        .map(|&id| Value::Symbol(self.lexicon.entities[id].symbol.clone()))
                        .collect(),
                ),
                (ArgValue::Number(n), ty) => match ty {
                    ColumnType::Number => Choice::Exact(vec![Value::Number(*n)]),
                    ColumnType::Unsigned => Choice::Exact(vec![Value::Unsigned(*n as u64)]),
                    ColumnType::Float => Choice::Exact(vec![Value::Float(*n as f64)]),
                    ColumnType::Symbol => Choice::Exact(vec![Value::Symbol(n.to_string())]),
                },
                (ArgValue::Date(d), ColumnType::Number) => match d.full() {
                    Some(full) => Choice::Exact(vec![Value::Number(full.yyyymmdd())]),
                    None => Choice::Constraint(*d),
                },
                (ArgValue::Date(d), ColumnType::Unsigned) => match d.full() {
                    Some(full) => Choice::Exact(vec![Value::Unsigned(full.yyyymmdd() as u64)]),
                    None => Choice::Constraint(*d),
                },
                _ => Choice::Unknown,
            };
            out.push(choice);
        }
        Some(out)
    }

    fn fits(&self, fact: FactId, choices: &[Choice]) -> bool {
        let args = self.fb.args(fact);
        choices.iter().zip(&args).all(|(c, v)| match c {
            Choice::Exact(vs) => vs.contains(v),
            Choice::Constraint(d) => match v {
                Value::Number(n) => Date::from_yyyymmdd(*n).is_some_and(|date| d.matches(date)),
                Value::Unsigned(n) => {
                    Date::from_yyyymmdd(*n as i64).is_some_and(|date| d.matches(date))
                }
                _ => false,
            },
            Choice::Unknown => false,
        })
    }

    /// Candidate facts for `choices`, looked up on the most selective exact column.
    fn candidates(&self, rel: RelId, choices: &[Choice], cols: &[usize]) -> Vec<FactId> {
        let mut best: Option<Vec<FactId>> = None;
        for &c in cols {
            if let Choice::Exact(vs) = &choices[c] {
                let mut facts = Vec::new();
                for v in vs {
                    let mut pattern = vec![None; choices.len()];
                    pattern[c] = Some(v.clone());
                    facts.extend(self.find(rel, &pattern));
                }
                if best.as_ref().is_none_or(|b| facts.len() < b.len()) {
                    best = Some(facts);
                }
            }
        }
        best.unwrap_or_else(|| self.fb.facts(rel).collect())
    }

    /// What the fact base says about `claim`.
    pub fn check(&self, claim: &Claim) -> Verdict {
        let Some(choices) = self.choices(claim) else {
            return Verdict::Unchecked;
        };
        let relation = self.fb.program().relation(claim.rel);
        let all: Vec<usize> = (0..choices.len()).collect();
        let unknown = choices.iter().position(|c| matches!(c, Choice::Unknown));
        let mut holding = None;
        if unknown.is_none() {
            let mut orders = vec![choices.clone()];
            if let Some((x, y)) = claim.symmetric {
                let mut swapped = choices.clone();
                swapped.swap(x, y);
                orders.push(swapped);
            }
            holding = orders.iter().find_map(|ch| {
                self.candidates(claim.rel, ch, &all)
                    .into_iter()
                    .find(|&f| self.fits(f, ch))
            });
        }
        if let Some(fact) = holding {
            return if claim.negated {
                Verdict::Denied { fact }
            } else {
                Verdict::Supported { fact }
            };
        }
        if claim.negated {
            return Verdict::SupportedNegative {
                blocker: self.ruled_out(claim.rel, &choices),
            };
        }
        if let Some(keys) = &relation.functional
            && keys.iter().all(|&k| matches!(choices[k], Choice::Exact(_)))
        {
            let same_key = self
                .candidates(claim.rel, &choices, keys)
                .into_iter()
                .find(|&f| {
                    let args = self.fb.args(f);
                    keys.iter().all(|&k| match &choices[k] {
                        Choice::Exact(vs) => vs.contains(&args[k]),
                        _ => false,
                    })
                });
            if let Some(fact) = same_key {
                let col = (0..choices.len())
                    .filter(|c| !keys.contains(c))
                    .find(|&c| !self.fits_col(fact, &choices, c))
                    .unwrap_or(0);
                return Verdict::WrongValue { fact, col };
            }
        }
        if let Some(blocker) = self.ruled_out(claim.rel, &choices) {
            return Verdict::Blocked { blocker };
        }
        Verdict::Absent { unknown }
    }

    fn fits_col(&self, fact: FactId, choices: &[Choice], col: usize) -> bool {
        let mut only = vec![
            Choice::Constraint(DateExpr {
                year: None,
                month: None,
                day: None,
                weekday: None,
                style: super::temporal::DateStyle::Iso,
            });
            choices.len()
        ];
        let args = self.fb.args(fact);
        for (c, o) in only.iter_mut().enumerate() {
            *o = if c == col {
                choices[c].clone()
            } else {
                Choice::Exact(vec![args[c].clone()])
            };
        }
        self.fits(fact, &only)
    }

    /// The fact that rules out the claimed fact (exact values only), if any.
    fn ruled_out(&self, rel: RelId, choices: &[Choice]) -> Option<FactId> {
        let mut combos: Vec<Vec<Value>> = vec![Vec::new()];
        for c in choices {
            let Choice::Exact(vs) = c else { return None };
            combos = combos
                .into_iter()
                .flat_map(|p| {
                    vs.iter().map(move |v| {
                        let mut p = p.clone();
                        p.push(v.clone());
                        p
                    })
                })
                .take(8)
                .collect();
        }
        let mut budget = SEARCH_BUDGET;
        combos
            .iter()
            .find_map(|args| self.blocked(rel, args, 3, &mut budget))
    }

    fn blocked(
        &self,
        rel: RelId,
        args: &[Value],
        depth: usize,
        budget: &mut usize,
    ) -> Option<FactId> {
        if depth == 0 {
            return None;
        }
        let program = self.fb.program();
        for &r in &self.rules_by_head[rel as usize] {
            let rule = program.rule(r as u32);
            if rule
                .body
                .iter()
                .any(|l| matches!(l, Literal::Aggregate { .. }))
            {
                continue;
            }
            let mut b: Vec<Option<Value>> = vec![None; rule.vars.len()];
            let unified = rule.head.args.iter().zip(args).all(|(e, v)| match e {
                Expr::Var(x) => match &b[*x as usize] {
                    Some(bound) => bound == v,
                    None => {
                        b[*x as usize] = Some(v.clone());
                        true
                    }
                },
                Expr::Const(c) => c == v,
                _ => false,
            });
            if !unified {
                continue;
            }
            let positives: Vec<usize> = rule
                .body
                .iter()
                .enumerate()
                .filter(|(_, l)| matches!(l, Literal::Atom(_)))
                .map(|(i, _)| i)
                .collect();
            if let Some(f) = self.search(rule, positives, b, Vec::new(), depth, budget) {
                return Some(f);
            }
        }
        None
    }

    fn search(
        &self,
        rule: &Rule,
        remaining: Vec<usize>,
        b: Vec<Option<Value>>,
        missing: Vec<(RelId, Vec<Value>)>,
        depth: usize,
        budget: &mut usize,
    ) -> Option<FactId> {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        if remaining.is_empty() {
            return self.finish(rule, b, &missing, depth, budget);
        }
        // The atom with the most bound columns first.
        let bound_count = |i: usize| match &rule.body[i] {
            Literal::Atom(a) => a
                .args
                .iter()
                .filter(|t| match t {
                    Term::Var(x) => b[*x as usize].is_some(),
                    Term::Const(_) => true,
                    _ => false,
                })
                .count(),
            _ => 0,
        };
        let mut order = remaining.clone();
        order.sort_by_key(|&i| std::cmp::Reverse(bound_count(i)));
        for &i in &order {
            let Literal::Atom(atom) = &rule.body[i] else {
                continue;
            };
            let pattern = pattern_of(&atom.args, &b);
            let rest: Vec<usize> = remaining.iter().copied().filter(|&x| x != i).collect();
            let facts = self.find(atom.rel, &pattern);
            let facts: Vec<FactId> = facts
                .into_iter()
                .filter(|&f| bind(&atom.args, &self.fb.args(f), &b).is_some())
                .take(16)
                .collect();
            if !facts.is_empty() {
                for f in facts {
                    let Some(nb) = bind(&atom.args, &self.fb.args(f), &b) else {
                        continue;
                    };
                    if let Some(x) =
                        self.search(rule, rest.clone(), nb, missing.clone(), depth, budget)
                    {
                        return Some(x);
                    }
                }
                return None;
            }
            if pattern.iter().all(Option::is_some) {
                let mut m = missing.clone();
                m.push((atom.rel, pattern.into_iter().flatten().collect()));
                return self.search(rule, rest, b, m, depth, budget);
            }
        }
        None
    }

    fn finish(
        &self,
        rule: &Rule,
        mut b: Vec<Option<Value>>,
        missing: &[(RelId, Vec<Value>)],
        depth: usize,
        budget: &mut usize,
    ) -> Option<FactId> {
        let mut blocker = None;
        for lit in &rule.body {
            match lit {
                Literal::Compare {
                    op,
                    left,
                    right,
                    assigns,
                    ..
                } => {
                    if let Some(v) = assigns {
                        b[*v as usize] = Some(eval(right, &b)?);
                        continue;
                    }
                    let (l, r) = (eval(left, &b)?, eval(right, &b)?);
                    let holds = match op {
                        CmpOp::Eq => l == r,
                        CmpOp::Ne => l != r,
                        CmpOp::Lt => l < r,
                        CmpOp::Le => l <= r,
                        CmpOp::Gt => l > r,
                        CmpOp::Ge => l >= r,
                    };
                    if !holds {
                        return None;
                    }
                }
                Literal::Negated(atom) if blocker.is_none() => {
                    let pattern = pattern_of(&atom.args, &b);
                    blocker = self.find(atom.rel, &pattern).into_iter().next();
                }
                _ => {}
            }
        }
        let mut first_missing_blocker = None;
        for (rel, args) in missing {
            let f = self.blocked(*rel, args, depth - 1, budget)?;
            first_missing_blocker.get_or_insert(f);
        }
        blocker.or(first_missing_blocker)
    }
}

fn pattern_of(args: &[Term], b: &[Option<Value>]) -> Vec<Option<Value>> {
    args.iter()
        .map(|t| match t {
            Term::Var(x) => b[*x as usize].clone(),
            Term::Const(c) => Some(c.clone()),
            Term::Wildcard => None,
        })
        .collect()
}

fn bind(args: &[Term], values: &[Value], b: &[Option<Value>]) -> Option<Vec<Option<Value>>> {
    let mut nb = b.to_vec();
    for (t, v) in args.iter().zip(values) {
        match t {
            Term::Var(x) => match &nb[*x as usize] {
                Some(bound) if bound != v => return None,
                Some(_) => {}
                None => nb[*x as usize] = Some(v.clone()),
            },
            Term::Const(c) if c != v => return None,
            _ => {}
        }
    }
    Some(nb)
}

fn eval(e: &Expr, b: &[Option<Value>]) -> Option<Value> {
    match e {
        Expr::Var(x) => b[*x as usize].clone(),
        Expr::Const(c) => Some(c.clone()),
        Expr::Neg(x) => match eval(x, b)? {
            Value::Number(n) => n.checked_neg().map(Value::Number),
            Value::Float(f) => Some(Value::Float(-f)),
            _ => None,
        },
        Expr::Binary(op, l, r) => match (eval(l, b)?, eval(r, b)?) {
            (Value::Number(x), Value::Number(y)) => match op {
                ArithOp::Add => x.checked_add(y),
                ArithOp::Sub => x.checked_sub(y),
                ArithOp::Mul => x.checked_mul(y),
                ArithOp::Div => x.checked_div(y),
                ArithOp::Rem => x.checked_rem(y),
                ArithOp::Pow => u32::try_from(y).ok().and_then(|e| x.checked_pow(e)),
                ArithOp::BAnd => Some(x & y),
                ArithOp::BOr => Some(x | y),
                ArithOp::BXor => Some(x ^ y),
                ArithOp::Shl => u32::try_from(y).ok().and_then(|s| x.checked_shl(s)),
                ArithOp::Shr => u32::try_from(y).ok().and_then(|s| x.checked_shr(s)),
                ArithOp::ShrU => u32::try_from(y)
                    .ok()
                    .and_then(|s| (x as u64).checked_shr(s))
                    .map(|v| v as i64),
                ArithOp::LAnd => Some(i64::from(x != 0 && y != 0)),
                ArithOp::LOr => Some(i64::from(x != 0 || y != 0)),
                ArithOp::LXor => Some(i64::from((x != 0) != (y != 0))),
            }
            .map(Value::Number),
            _ => None,
        },
        // Functor calls (`cat`, `strlen`, `max`, …) are not folded by detection: the
        // binding is left unknown.
        Expr::Call(..) => None,
    }
}
