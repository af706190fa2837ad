//! Random stratified Datalog programs and input facts, as proptest strategies.
//!
//! Programs are generated as source text, so they go through the real parser and
//! checker. They are valid by construction:
//! - every relation has a level: input-only relations (`e0`, `e1`, …) are at level 0,
//!   derived ones (`r0`, `r1`, …) at levels 1–3; a rule reads positively relations of
//!   its head's level or lower (same level allows recursion) and negates or aggregates
//!   only strictly lower levels, so the program is stratifiable;
//! - every head variable, negated-atom variable and comparison variable is bound by a
//!   positive atom (range restriction and safety);
//! - arithmetic in heads and assignments, and aggregates, appear only in rules whose
//!   positive atoms are all of lower levels, so no recursion can create new values
//!   forever and the least fixpoint is finite;
//! - a variable that would occur only once becomes `_`.
//!
//! All columns are `number`s over the small domain 0–4 (plus what arithmetic makes),
//! so joins, negations and comparisons hit often.

use std::fmt::{self, Write as _};

use proptest::prelude::*;

/// Values of generated facts and constants are in `0..DOMAIN`.
pub const DOMAIN: u8 = 5;

/// A generated program and its input facts.
#[derive(Debug, Clone)]
pub struct GenCase {
    /// The program (render it with `to_string()`).
    pub program: GenProgram,
    /// Input facts to pass to evaluation, besides the facts written in the program.
    pub facts: Vec<GenFact>,
}

/// One input fact of a [`GenCase`].
#[derive(Debug, Clone, PartialEq)]
pub struct GenFact {
    /// Relation name.
    pub rel: String,
    /// Values.
    pub args: Vec<i64>,
    /// Confidence in (0, 1].
    pub confidence: f64,
}

/// A generated program: declarations, facts in the text, and rules.
#[derive(Debug, Clone)]
pub struct GenProgram {
    /// Relations; the input-only ones (level 0) first.
    pub relations: Vec<GenRelation>,
    /// Facts written in the program text: relation index and values.
    pub text_facts: Vec<(usize, Vec<i64>)>,
    /// Rules in source order.
    pub rules: Vec<GenRule>,
}

/// A generated relation.
#[derive(Debug, Clone)]
pub struct GenRelation {
    /// Its name (`e<k>` for input-only relations, `r<k>` for derived ones).
    pub name: String,
    /// Number of columns.
    pub arity: usize,
    /// Stratification level (0 for input-only relations).
    pub level: usize,
}

/// A generated rule.
#[derive(Debug, Clone)]
pub struct GenRule {
    /// `@confidence(c)`, when annotated.
    pub confidence: Option<f64>,
    /// Head relation index.
    pub head: usize,
    /// Head expressions.
    pub head_args: Vec<GExpr>,
    /// Body literals, positive atoms first.
    pub body: Vec<GLit>,
}

/// An atom argument.
#[derive(Debug, Clone, PartialEq)]
pub enum GTerm {
    /// Variable number k, written `x<k>`.
    Var(usize),
    /// A constant.
    Const(i64),
    /// `_`.
    Wild,
}

/// An expression (in heads, comparisons and assignments).
#[derive(Debug, Clone, PartialEq)]
pub enum GExpr {
    /// A variable.
    Var(usize),
    /// A constant.
    Const(i64),
    /// `l op r` with op one of `+ - * / %`.
    Bin(Box<GExpr>, char, Box<GExpr>),
}

/// A body literal.
#[derive(Debug, Clone, PartialEq)]
pub enum GLit {
    /// `rel(args)`.
    Atom(usize, Vec<GTerm>),
    /// `!rel(args)`.
    Neg(usize, Vec<GTerm>),
    /// `l op r`.
    Cmp(GExpr, &'static str, GExpr),
    /// `x = e` binding a fresh variable.
    Assign(usize, GExpr),
    /// `x = func target : { rel(args) }`.
    Agg {
        /// The variable receiving the result.
        result: usize,
        /// `count`, `sum`, `min` or `max`.
        func: &'static str,
        /// The aggregated variable (`None` for `count`).
        target: Option<usize>,
        /// The aggregated relation.
        rel: usize,
        /// Its arguments.
        args: Vec<GTerm>,
    },
}

// ---------------------------------------------------------------------------------
// Rendering

impl fmt::Display for GTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GTerm::Var(v) => write!(f, "x{v}"),
            GTerm::Const(c) => write!(f, "{c}"),
            GTerm::Wild => f.write_str("_"),
        }
    }
}

impl fmt::Display for GExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GExpr::Var(v) => write!(f, "x{v}"),
            GExpr::Const(c) => write!(f, "{c}"),
            GExpr::Bin(l, op, r) => write!(f, "({l} {op} {r})"),
        }
    }
}

fn atom_text(name: &str, args: &[GTerm]) -> String {
    let args: Vec<String> = args.iter().map(ToString::to_string).collect();
    format!("{name}({})", args.join(", "))
}

impl GenProgram {
    fn lit_text(&self, lit: &GLit) -> String {
        let name = |r: usize| self.relations[r].name.as_str();
        match lit {
            GLit::Atom(r, args) => atom_text(name(*r), args),
            GLit::Neg(r, args) => format!("!{}", atom_text(name(*r), args)),
            GLit::Cmp(l, op, r) => format!("{l} {op} {r}"),
            GLit::Assign(v, e) => format!("x{v} = {e}"),
            GLit::Agg {
                result,
                func,
                target,
                rel,
                args,
            } => {
                let target = target.map(|t| format!(" x{t}")).unwrap_or_default();
                format!(
                    "x{result} = {func}{target} : {{ {} }}",
                    atom_text(name(*rel), args)
                )
            }
        }
    }
}

impl fmt::Display for GenProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in &self.relations {
            let cols: Vec<String> = (0..r.arity).map(|i| format!("c{i}: number")).collect();
            writeln!(f, ".decl {}({})", r.name, cols.join(", "))?;
        }
        for (rel, args) in &self.text_facts {
            let args: Vec<String> = args.iter().map(ToString::to_string).collect();
            writeln!(f, "{}({}).", self.relations[*rel].name, args.join(", "))?;
        }
        for rule in &self.rules {
            if let Some(c) = rule.confidence {
                writeln!(f, "@confidence({c:?})")?;
            }
            let head: Vec<String> = rule.head_args.iter().map(ToString::to_string).collect();
            let body: Vec<String> = rule.body.iter().map(|l| self.lit_text(l)).collect();
            writeln!(
                f,
                "{}({}) :- {}.",
                self.relations[rule.head].name,
                head.join(", "),
                body.join(", ")
            )?;
        }
        Ok(())
    }
}

impl GenCase {
    /// The program's source text.
    pub fn source(&self) -> String {
        self.program.to_string()
    }

    /// The source followed by the input facts as comments: what a failing test prints.
    pub fn describe(&self) -> String {
        let mut s = self.source();
        for f in &self.facts {
            let _ = writeln!(s, "// input {}{:?} @ {}", f.rel, f.args, f.confidence);
        }
        s
    }
}

// ---------------------------------------------------------------------------------
// Raw choices and the builder

/// Raw random choices for one atom.
#[derive(Debug, Clone)]
struct RawAtom {
    rel: u8,
    args: [u8; 3],
}

/// Raw random choices for one rule; the builder interprets them against the schema.
#[derive(Debug, Clone)]
struct RawRule {
    head: u8,
    atoms: Vec<RawAtom>,
    neg: Option<RawAtom>,
    cmp: Option<[u8; 4]>,
    assign: Option<[u8; 3]>,
    agg: Option<(u8, RawAtom)>,
    head_args: [u8; 3],
    conf: u8,
}

fn raw_atom() -> impl Strategy<Value = RawAtom> {
    (any::<u8>(), any::<[u8; 3]>()).prop_map(|(rel, args)| RawAtom { rel, args })
}

fn raw_rule() -> impl Strategy<Value = RawRule> {
    (
        any::<u8>(),
        prop::collection::vec(raw_atom(), 1..=3),
        prop::option::weighted(0.35, raw_atom()),
        prop::option::weighted(0.35, any::<[u8; 4]>()),
        prop::option::weighted(0.25, any::<[u8; 3]>()),
        prop::option::weighted(0.25, (any::<u8>(), raw_atom())),
        any::<[u8; 3]>(),
        any::<u8>(),
    )
        .prop_map(
            |(head, atoms, neg, cmp, assign, agg, head_args, conf)| RawRule {
                head,
                atoms,
                neg,
                cmp,
                assign,
                agg,
                head_args,
                conf,
            },
        )
}

/// Strategy for a random program with its input facts.
pub fn case() -> impl Strategy<Value = GenCase> {
    (
        prop::collection::vec(1..=2usize, 1..=3),
        prop::collection::vec((1..=2usize, 1..=3usize), 1..=4),
        prop::collection::vec(raw_rule(), 1..=7),
        prop::collection::vec((any::<u8>(), any::<[u8; 2]>()), 0..=3),
        prop::collection::vec((any::<u8>(), any::<[u8; 2]>(), any::<u16>()), 0..=40),
    )
        .prop_map(|(edb, idb, rules, text_facts, inputs)| {
            build(&edb, &idb, &rules, &text_facts, &inputs)
        })
}

fn build(
    edb: &[usize],
    idb: &[(usize, usize)],
    raws: &[RawRule],
    text_facts: &[(u8, [u8; 2])],
    inputs: &[(u8, [u8; 2], u16)],
) -> GenCase {
    let mut relations: Vec<GenRelation> = edb
        .iter()
        .enumerate()
        .map(|(i, &arity)| GenRelation {
            name: format!("e{i}"),
            arity,
            level: 0,
        })
        .collect();
    relations.extend(
        idb.iter()
            .enumerate()
            .map(|(i, &(arity, level))| GenRelation {
                name: format!("r{i}"),
                arity,
                level,
            }),
    );
    let n_edb = edb.len();
    let rules = raws
        .iter()
        .map(|raw| build_rule(&relations, n_edb, raw))
        .collect();

    let domain = |b: u8| i64::from(b % DOMAIN);
    let text_facts = text_facts
        .iter()
        .map(|(r, vals)| {
            let rel = *r as usize % n_edb;
            let args = (0..relations[rel].arity).map(|i| domain(vals[i])).collect();
            (rel, args)
        })
        .collect();
    let facts = inputs
        .iter()
        .map(|&(r, vals, c)| {
            // Mostly input-only relations; sometimes a derived one, which then has both
            // input records and derivations.
            let rel = if r < 224 {
                r as usize % n_edb
            } else {
                r as usize % relations.len()
            };
            let confidence = if c % 3 == 0 {
                1.0
            } else {
                f64::from(c % 1000 + 1) / 1000.0
            };
            GenFact {
                rel: relations[rel].name.clone(),
                args: (0..relations[rel].arity).map(|i| domain(vals[i])).collect(),
                confidence,
            }
        })
        .collect();
    GenCase {
        program: GenProgram {
            relations,
            text_facts,
            rules,
        },
        facts,
    }
}

/// Picks variables and terms for one rule.
struct RuleBuilder {
    next_var: usize,
    bound: Vec<usize>,
}

impl RuleBuilder {
    fn fresh(&mut self) -> usize {
        self.next_var += 1;
        self.next_var - 1
    }

    fn bound_var(&self, pick: u8) -> Option<usize> {
        (!self.bound.is_empty()).then(|| self.bound[pick as usize % self.bound.len()])
    }

    /// A positive-atom argument: mostly a join on a bound variable or a new variable,
    /// sometimes a constant or `_`.
    fn positive_term(&mut self, pick: u8) -> GTerm {
        match pick % 8 {
            0..=2 if !self.bound.is_empty() => GTerm::Var(self.bound_var(pick / 8).unwrap_or(0)),
            0..=6 => {
                let v = self.fresh();
                self.bound.push(v);
                GTerm::Var(v)
            }
            _ if pick & 0x80 == 0 => GTerm::Const(i64::from(pick / 8 % DOMAIN)),
            _ => GTerm::Wild,
        }
    }

    /// A negated-atom argument: a bound variable, a constant or `_`.
    fn negated_term(&self, pick: u8) -> GTerm {
        match (pick % 8, self.bound_var(pick / 8)) {
            (0..=5, Some(v)) => GTerm::Var(v),
            (6, _) => GTerm::Wild,
            _ => GTerm::Const(i64::from(pick / 8 % DOMAIN)),
        }
    }
}

fn build_rule(relations: &[GenRelation], n_edb: usize, raw: &RawRule) -> GenRule {
    let n_idb = relations.len() - n_edb;
    let head = n_edb + raw.head as usize % n_idb;
    let level = relations[head].level;
    let readable: Vec<usize> = (0..relations.len())
        .filter(|&r| relations[r].level <= level)
        .collect();
    let lower: Vec<usize> = (0..relations.len())
        .filter(|&r| relations[r].level < level)
        .collect();

    let mut b = RuleBuilder {
        next_var: 0,
        bound: Vec::new(),
    };
    let mut body = Vec::new();
    for (i, atom) in raw.atoms.iter().enumerate() {
        // Mostly start from a lower level, so that most rules can fire; the other
        // atoms may read the head's own level (recursion).
        let from = if i == 0 && atom.rel % 4 != 0 {
            &lower
        } else {
            &readable
        };
        let rel = from[atom.rel as usize / 4 % from.len()];
        let args = (0..relations[rel].arity)
            .map(|i| b.positive_term(atom.args[i]))
            .collect();
        body.push(GLit::Atom(rel, args));
    }
    let recursive = body
        .iter()
        .any(|l| matches!(l, GLit::Atom(r, _) if relations[*r].level == level));

    if let Some(neg) = &raw.neg {
        let rel = lower[neg.rel as usize % lower.len()];
        let args = (0..relations[rel].arity)
            .map(|i| b.negated_term(neg.args[i]))
            .collect();
        body.push(GLit::Neg(rel, args));
    }
    if let Some([a, op, c, kind]) = raw.cmp
        && let Some(left) = b.bound_var(a)
    {
        let other = b.bound_var(c).unwrap_or(left);
        let right = match kind % 6 {
            0 | 1 => GExpr::Var(other),
            2 | 3 => GExpr::Const(i64::from(c % DOMAIN)),
            4 => GExpr::Bin(Box::new(GExpr::Var(other)), '+', Box::new(GExpr::Const(1))),
            _ => GExpr::Bin(
                Box::new(GExpr::Var(left)),
                if kind % 12 < 6 { '%' } else { '/' },
                Box::new(GExpr::Var(other)),
            ),
        };
        let op = ["=", "!=", "<", "<=", ">", ">="][op as usize % 6];
        body.push(GLit::Cmp(GExpr::Var(left), op, right));
    }

    let mut forced = Vec::new();
    if !recursive
        && let Some([a, op, c]) = raw.assign
        && let Some(src) = b.bound_var(a)
    {
        let v = b.fresh();
        let op = ['+', '-', '*'][op as usize % 3];
        let e = GExpr::Bin(
            Box::new(GExpr::Var(src)),
            op,
            Box::new(GExpr::Const(i64::from(c % 3 + 1))),
        );
        body.push(GLit::Assign(v, e));
        b.bound.push(v);
        forced.push(v);
    }
    if !recursive && let Some((f, atom)) = &raw.agg {
        let rel = lower[atom.rel as usize % lower.len()];
        let mut locals = Vec::new();
        let args: Vec<GTerm> = (0..relations[rel].arity)
            .map(|i| {
                let pick = atom.args[i];
                match (pick % 4, b.bound_var(pick / 4)) {
                    (0, Some(v)) => GTerm::Var(v),
                    (3, _) => GTerm::Const(i64::from(pick / 4 % DOMAIN)),
                    _ => {
                        let v = b.fresh();
                        locals.push(v);
                        GTerm::Var(v)
                    }
                }
            })
            .collect();
        let func = ["count", "sum", "min", "max"][*f as usize % 4];
        let (func, target) = match locals.first() {
            Some(&t) if func != "count" => (func, Some(t)),
            _ => ("count", None),
        };
        let result = b.fresh();
        body.push(GLit::Agg {
            result,
            func,
            target,
            rel,
            args,
        });
        b.bound.push(result);
        forced.insert(0, result);
    }

    let arity = relations[head].arity;
    if forced.len() > arity {
        // Keep the aggregate; drop the assignment nothing would read.
        let dropped = forced.pop();
        body.retain(|l| !matches!(l, GLit::Assign(v, _) if Some(*v) == dropped));
        b.bound.retain(|v| Some(*v) != dropped);
    }
    let head_args = (0..arity)
        .map(|i| {
            if let Some(&v) = forced.get(i) {
                return GExpr::Var(v);
            }
            let pick = raw.head_args[i];
            match (pick % 6, b.bound_var(pick / 6)) {
                (0..=3, Some(v)) => GExpr::Var(v),
                (5, Some(v)) if !recursive => {
                    GExpr::Bin(Box::new(GExpr::Var(v)), '+', Box::new(GExpr::Const(1)))
                }
                (5, Some(v)) => GExpr::Var(v),
                _ => GExpr::Const(i64::from(pick / 6 % DOMAIN)),
            }
        })
        .collect();

    let confidence =
        (raw.conf >= 100).then(|| f64::from(u32::from(raw.conf) * 7 % 100 + 1) / 100.0);
    let mut rule = GenRule {
        confidence,
        head,
        head_args,
        body,
    };
    blank_singletons(&mut rule);
    rule
}

/// Replace variables that occur exactly once in the rule by `_`.
fn blank_singletons(rule: &mut GenRule) {
    fn count_expr(e: &GExpr, counts: &mut Vec<usize>) {
        match e {
            GExpr::Var(v) => bump(counts, *v),
            GExpr::Const(_) => {}
            GExpr::Bin(l, _, r) => {
                count_expr(l, counts);
                count_expr(r, counts);
            }
        }
    }
    fn bump(counts: &mut Vec<usize>, v: usize) {
        if counts.len() <= v {
            counts.resize(v + 1, 0);
        }
        counts[v] += 1;
    }
    let mut counts = Vec::new();
    for e in &rule.head_args {
        count_expr(e, &mut counts);
    }
    for lit in &rule.body {
        match lit {
            GLit::Atom(_, args) | GLit::Neg(_, args) => {
                for t in args {
                    if let GTerm::Var(v) = t {
                        bump(&mut counts, *v);
                    }
                }
            }
            GLit::Cmp(l, _, r) => {
                count_expr(l, &mut counts);
                count_expr(r, &mut counts);
            }
            GLit::Assign(v, e) => {
                bump(&mut counts, *v);
                count_expr(e, &mut counts);
            }
            GLit::Agg {
                result,
                target,
                args,
                ..
            } => {
                bump(&mut counts, *result);
                if let Some(t) = target {
                    bump(&mut counts, *t);
                }
                for t in args {
                    if let GTerm::Var(v) = t {
                        bump(&mut counts, *v);
                    }
                }
            }
        }
    }
    for lit in &mut rule.body {
        if let GLit::Atom(_, args) | GLit::Agg { args, .. } = lit {
            for t in args.iter_mut() {
                if matches!(t, GTerm::Var(v) if counts[*v] == 1) {
                    *t = GTerm::Wild;
                }
            }
        }
    }
}
