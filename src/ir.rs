//! The checked, stratified program as plain data.
//!
//! This is the contract between the front end (`syntax` + `check`, which build it and
//! guarantee its invariants) and every back end (`eval` today; a differential-dataflow
//! lowering later). It holds no evaluation state and no interned ids, so it is cheap to
//! share (`Send + Sync`) and easy to inspect.
//!
//! Architecture invariant: a `Program` that exists has passed every check. Back ends
//! may rely on: arities match, every variable is bound before it is read (in the body
//! order given), column types are consistent, and `strata` is a valid stratification
//! in dependency order.

use std::collections::BTreeMap;

use crate::diag::{SourceMap, Span};
use crate::value::{ColumnType, Value};

/// Index of a relation in [`Program::relations`].
pub type RelId = u32;
/// Index of a rule in [`Program::rules`]; also the `n` of its `RULE-n` citation tag.
pub type RuleId = u32;
/// Index of a variable in [`Rule::vars`].
pub type VarId = u32;

/// A checked program.
///
/// The IR's enums are deliberately exhaustive (not `#[non_exhaustive]`): a back end
/// or an oracle must fail to compile when the language gains a construct, rather than
/// silently skip it.
///
/// Only the front end (`check::compile`, [`Program::from_source`],
/// [`Program::from_files`]) builds one, so a `Program` that exists has passed every
/// check: back ends read it through the accessors below and never re-validate it.
#[derive(Debug, Clone)]
pub struct Program {
    /// Every relation, declared or inferred, in first-appearance order.
    pub(crate) relations: Vec<Relation>,
    /// Every rule, in source order (files in the order given). `rules[i].id == i`.
    pub(crate) rules: Vec<Rule>,
    /// Strata in evaluation order: every relation a stratum reads is computed by an
    /// earlier stratum or by this one (positively, when recursive).
    pub(crate) strata: Vec<Stratum>,
    /// Facts written in the program text, in source order.
    pub(crate) facts: Vec<SourceFact>,
    /// The program's source files, for diagnostics that point into them.
    pub(crate) sources: SourceMap,
    /// The pack's identity, computed on first use.
    pub(crate) pack: std::sync::OnceLock<PackId>,
}

/// A rule pack's identity, as a proof records it: the program files it was made with
/// and a digest of their text, so that a proof file says which rules (and which
/// verbalisations) it came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PackId {
    /// The program files as they were named when loaded, in load order.
    pub programs: Vec<String>,
    /// `sha256:` and the SHA-256 of the program texts in order, each preceded by its
    /// length in bytes (decimal) and a newline: the same rules give the same digest,
    /// whatever their files are called.
    pub digest: String,
}

impl PackId {
    /// The identity of program sources given as (name, text) pairs.
    pub fn of<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> PackId {
        let mut hasher = crate::digest::Sha256::new();
        let mut programs = Vec::new();
        for (name, text) in files {
            programs.push(name.to_string());
            hasher.update(format!("{}\n", text.len()).as_bytes());
            hasher.update(text.as_bytes());
        }
        PackId {
            programs,
            digest: format!("sha256:{}", hasher.finish_hex()),
        }
    }
}

impl Program {
    /// Assemble a program from its parts without any check. Only for tests of code
    /// that must not depend on the front end (the reference evaluator's own tests):
    /// the invariants `check` guarantees (ids, strata, safe body order, types) are the
    /// caller's to keep, and evaluation may panic where they are broken.
    #[doc(hidden)]
    pub fn from_parts_unchecked(
        relations: Vec<Relation>,
        rules: Vec<Rule>,
        strata: Vec<Stratum>,
        facts: Vec<SourceFact>,
        sources: SourceMap,
    ) -> Program {
        Program {
            relations,
            rules,
            strata,
            facts,
            sources,
            pack: Default::default(),
        }
    }

    /// The pack's identity: its program files and a digest of their text.
    pub fn pack(&self) -> &PackId {
        self.pack.get_or_init(|| {
            PackId::of(
                self.sources
                    .files()
                    .iter()
                    .map(|f| (f.name.as_str(), &*f.text)),
            )
        })
    }

    /// Every relation, declared or inferred, in first-appearance order; a relation's
    /// index is its [`RelId`].
    pub fn relations(&self) -> &[Relation] {
        &self.relations
    }

    /// Every rule, in source order (files in the order given); a rule's index is its
    /// [`RuleId`] and the `n` of its `RULE-n` tag.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Strata in evaluation order: every relation a stratum reads is computed by an
    /// earlier stratum or by this one (positively, when recursive).
    pub fn strata(&self) -> &[Stratum] {
        &self.strata
    }

    /// Facts written in the program text, in source order.
    pub fn facts(&self) -> &[SourceFact] {
        &self.facts
    }

    /// The program's source files, for diagnostics that point into them.
    pub fn sources(&self) -> &SourceMap {
        &self.sources
    }

    /// Find a relation by name.
    pub fn relation_id(&self, name: &str) -> Option<RelId> {
        self.relations
            .iter()
            .position(|r| r.name == name)
            .map(|i| i as RelId)
    }

    /// The relation with this id.
    pub fn relation(&self, id: RelId) -> &Relation {
        &self.relations[id as usize]
    }

    /// The rule with this id.
    pub fn rule(&self, id: RuleId) -> &Rule {
        &self.rules[id as usize]
    }
}

/// One relation (predicate).
#[derive(Debug, Clone)]
pub struct Relation {
    /// Its name.
    pub name: String,
    /// Column names (from the `.decl`, else `"_0"`, `"_1"`, …) and types.
    pub columns: Vec<Column>,
    /// `.input` options, when the relation is loaded from a file.
    pub input: Option<IoOptions>,
    /// Marked `.output`.
    pub output: bool,
    /// The options of each `.output` directive naming it (`IO=file`,
    /// `filename="…"`, `delimiter`, `headers`; `IO=stdout`), in source order; an
    /// `.output` without options has an empty map.
    pub outputs: Vec<IoOptions>,
    /// Marked `.printsize`: its size is printed, not its rows.
    pub printsize: bool,
    /// Made by the checker, not written by the user (the projection a negated atom
    /// with variables of its own reads): never printed, never named in a goal.
    pub auxiliary: bool,
    /// `.functional rel(k, …)`: the key columns that determine the others.
    pub functional: Option<Vec<usize>>,
    /// `.text rel "…{0}…{1}…"`: how to say a fact of this relation in words.
    pub text: Option<String>,
    /// Where it was declared (or first used when undeclared).
    pub span: Span,
}

impl Relation {
    /// Number of columns.
    pub fn arity(&self) -> usize {
        self.columns.len()
    }
}

/// One column of a relation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Attribute name.
    pub name: String,
    /// Its type.
    pub ty: ColumnType,
}

/// Soufflé IO options of a `.input` directive, e.g. `IO=file, filename="edge.csv",
/// delimiter="\t"`. Keys are kept as written (lower-cased); the loader interprets them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IoOptions {
    /// Option name → value.
    pub options: BTreeMap<String, String>,
    /// Where the directive is, for errors about it.
    pub span: Span,
}

/// A fact written in program text, e.g. `edge(1, 2).`
#[derive(Debug, Clone)]
pub struct SourceFact {
    /// Its relation.
    pub rel: RelId,
    /// Its values (already checked against the column types).
    pub args: Vec<Value>,
    /// Where it is written.
    pub span: Span,
}

/// A rule `head :- body.` with its annotations.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Its index in [`Program::rules`].
    pub id: RuleId,
    /// `@name("…")`, else `rule:<head>` (with `#k` when several rules share a head).
    pub name: String,
    /// `@confidence(c)`, else 1.0. Always in (0, 1].
    pub confidence: f64,
    /// The conclusion.
    pub head: Head,
    /// Premises in source order.
    pub body: Vec<Literal>,
    /// Every variable of the rule (aggregate-local ones included), indexed by `VarId`.
    pub vars: Vec<Variable>,
    /// Index in [`Program::strata`] of the stratum that evaluates this rule.
    pub stratum: usize,
    /// The whole rule in the source.
    pub span: Span,
}

/// A rule variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// As written (`x`); generated names for wildcards start with `_`.
    pub name: String,
    /// Inferred type.
    pub ty: ColumnType,
}

/// A rule head: a relation and one expression per column.
#[derive(Debug, Clone)]
pub struct Head {
    /// The relation concluded.
    pub rel: RelId,
    /// One expression per column; every variable in them is bound by the body.
    pub args: Vec<Expr>,
}

/// A body atom `rel(t1, …, tn)`.
#[derive(Debug, Clone)]
pub struct Atom {
    /// The relation.
    pub rel: RelId,
    /// One term per column.
    pub args: Vec<Term>,
    /// Where it is written.
    pub span: Span,
}

/// An argument of a body atom.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    /// A variable: binds it if unbound, else must equal it.
    Var(VarId),
    /// A constant the column must equal.
    Const(Value),
    /// `_`: matches anything, binds nothing.
    Wildcard,
}

/// An arithmetic expression over bound variables and constants.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A variable.
    Var(VarId),
    /// A constant.
    Const(Value),
    /// `l op r`.
    Binary(ArithOp, Box<Expr>, Box<Expr>),
    /// `-e`.
    Neg(Box<Expr>),
    /// A built-in functor applied to its arguments, with each argument's type
    /// (`cat(x, "a")`, `strlen(s)`, `to_string(n)`, `max(a, b, c)`).
    Call(Functor, Vec<Expr>, Vec<ColumnType>),
}

impl Expr {
    /// The expression's type in `rule`: a variable's, a constant's, an operator's
    /// operands', a functor's result.
    pub fn column_type(&self, rule: &Rule) -> Option<ColumnType> {
        match self {
            Expr::Var(v) => rule.vars.get(*v as usize).map(|x| x.ty),
            Expr::Const(c) => Some(c.column_type()),
            Expr::Binary(_, l, r) => l.column_type(rule).or_else(|| r.column_type(rule)),
            Expr::Neg(x) => x.column_type(rule),
            Expr::Call(f, _, arg_types) => f.result_type(arg_types),
        }
    }
}

/// Built-in functors (Soufflé's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Functor {
    /// `cat(s1, s2, …)`: the symbols joined.
    Cat,
    /// `strlen(s)`: the number of characters.
    Strlen,
    /// `substr(s, i, n)`: `n` characters from index `i` (0-based; an index outside
    /// the string gives `""`, as Soufflé does).
    Substr,
    /// `ord(s)`: the symbol's ordinal number (its interned key).
    Ord,
    /// `to_number(x)`: a symbol's integer (nothing when it is not one), a float's
    /// integer part.
    ToNumber,
    /// `to_unsigned(x)`.
    ToUnsigned,
    /// `to_float(x)`.
    ToFloat,
    /// `to_string(x)`: the value as text.
    ToString,
    /// `min(a, b, …)`.
    Min,
    /// `max(a, b, …)`.
    Max,
    /// `abs(x)`.
    Abs,
    /// `bnot x`: bitwise complement.
    BNot,
    /// `lnot x`: 1 when `x` is 0, else 0.
    LNot,
}

impl Functor {
    /// The functor's name as written.
    pub fn name(self) -> &'static str {
        match self {
            Functor::Cat => "cat",
            Functor::Strlen => "strlen",
            Functor::Substr => "substr",
            Functor::Ord => "ord",
            Functor::ToNumber => "to_number",
            Functor::ToUnsigned => "to_unsigned",
            Functor::ToFloat => "to_float",
            Functor::ToString => "to_string",
            Functor::Min => "min",
            Functor::Max => "max",
            Functor::Abs => "abs",
            Functor::BNot => "bnot",
            Functor::LNot => "lnot",
        }
    }

    /// The functor a name denotes (Soufflé's conversion aliases included).
    pub fn from_name(name: &str) -> Option<Functor> {
        Some(match name {
            "cat" => Functor::Cat,
            "strlen" => Functor::Strlen,
            "substr" => Functor::Substr,
            "ord" => Functor::Ord,
            "to_number" | "ftoi" | "utoi" => Functor::ToNumber,
            "to_unsigned" | "itou" | "ftou" => Functor::ToUnsigned,
            "to_float" | "itof" | "utof" => Functor::ToFloat,
            "to_string" => Functor::ToString,
            "min" => Functor::Min,
            "max" => Functor::Max,
            "abs" => Functor::Abs,
            "bnot" => Functor::BNot,
            "lnot" => Functor::LNot,
            _ => return None,
        })
    }

    /// Its result type, given its arguments' types.
    pub fn result_type(self, args: &[ColumnType]) -> Option<ColumnType> {
        Some(match self {
            Functor::Cat | Functor::Substr | Functor::ToString => ColumnType::Symbol,
            Functor::Strlen | Functor::Ord | Functor::ToNumber => ColumnType::Number,
            Functor::ToUnsigned => ColumnType::Unsigned,
            Functor::ToFloat => ColumnType::Float,
            Functor::Min | Functor::Max | Functor::Abs | Functor::BNot | Functor::LNot => {
                *args.first()?
            }
        })
    }
}

/// Built-in tests usable as body literals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TestFn {
    /// `match(pattern, s)`: the regular expression matches the whole symbol.
    Match,
    /// `contains(part, s)`: `part` occurs in `s`.
    Contains,
    /// `true`.
    True,
    /// `false`.
    False,
}

impl TestFn {
    /// The test's name as written.
    pub fn name(self) -> &'static str {
        match self {
            TestFn::Match => "match",
            TestFn::Contains => "contains",
            TestFn::True => "true",
            TestFn::False => "false",
        }
    }
}

/// Arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (a division by zero makes the rule produce nothing for that binding)
    Div,
    /// `%` (likewise)
    Rem,
    /// `^`: power (a negative integer exponent gives nothing).
    Pow,
    /// `band`
    BAnd,
    /// `bor`
    BOr,
    /// `bxor`
    BXor,
    /// `bshl` (a shift of 64 or more gives nothing)
    Shl,
    /// `bshr`: arithmetic shift right for `number`
    Shr,
    /// `bshru`: logical shift right
    ShrU,
    /// `land`: 1 when both are non-zero, else 0
    LAnd,
    /// `lor`
    LOr,
    /// `lxor`
    LXor,
}

impl ArithOp {
    /// Whether the operator only applies to integers (`number`, `unsigned`).
    pub fn integral(self) -> bool {
        matches!(
            self,
            ArithOp::BAnd
                | ArithOp::BOr
                | ArithOp::BXor
                | ArithOp::Shl
                | ArithOp::Shr
                | ArithOp::ShrU
        )
    }
}

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// Aggregate functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AggFunc {
    /// `count : { … }`
    Count,
    /// `sum e : { … }`
    Sum,
    /// `min e : { … }`
    Min,
    /// `max e : { … }`
    Max,
    /// `mean e : { … }`: the average, a `float`.
    Mean,
}

/// One body literal.
#[derive(Debug, Clone)]
pub enum Literal {
    /// A positive atom: a premise.
    Atom(Atom),
    /// `!atom` / `not atom`: all its variables are bound earlier (or are wildcards).
    Negated(Atom),
    /// `left op right`. With `op == Eq` and `left` an unbound variable (after the
    /// literals before it), this *assigns* `right` to it (Soufflé's `w = z + 1`);
    /// `assigns` says which.
    Compare {
        /// The operator.
        op: CmpOp,
        /// Left side.
        left: Expr,
        /// Right side.
        right: Expr,
        /// `Some(v)` when this literal binds `v` (`v = expr`).
        assigns: Option<VarId>,
        /// Where it is written.
        span: Span,
    },
    /// `result = func target : { body }`. Variables of `body` that also occur outside
    /// the aggregate (and are bound before it) group it; the rest are local. The
    /// aggregate binds `result` (or, if `result` is already bound, filters on it).
    Aggregate {
        /// The variable receiving the aggregate value.
        result: VarId,
        /// The function.
        func: AggFunc,
        /// The aggregated expression (`None` for `count`).
        target: Option<Expr>,
        /// Positive atoms, negated atoms and comparisons (no nested aggregates).
        body: Vec<Literal>,
        /// Where it is written.
        span: Span,
    },
    /// A built-in test (`match("a.*", s)`, `!contains("b", s)`): its arguments are
    /// symbols bound earlier; the binding goes on only when it holds (fails, when
    /// `negated`).
    Test {
        /// The test.
        test: TestFn,
        /// Its arguments.
        args: Vec<Expr>,
        /// `!match(…)`.
        negated: bool,
        /// Where it is written.
        span: Span,
    },
}

/// One stratum: relations computed together and the rules that compute them.
#[derive(Debug, Clone, Default)]
pub struct Stratum {
    /// Relations whose facts this stratum derives. A relation no rule derives (loaded
    /// input, program facts only) belongs to no stratum: it is complete before the
    /// first one runs.
    pub relations: Vec<RelId>,
    /// Rules with heads in `relations`, ascending by id.
    pub rules: Vec<RuleId>,
    /// Whether some rule reads a relation of this same stratum (needs a fixpoint).
    pub recursive: bool,
}
