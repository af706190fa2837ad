//! The spanned syntax tree of one source file, exactly as written.
//!
//! Nothing here is resolved or checked: a relation name is just a name, a type name
//! may be an alias, a clause with several heads or a disjunctive body is one node.
//! `check` does the rest. `Display` prints a tree back as source text that parses to
//! the same tree (spans aside), which the parser's property tests rely on.

use std::fmt;

use crate::diag::Span;
pub use crate::ir::{AggFunc, ArithOp, CmpOp};
use crate::value::write_quoted;

/// One parsed source file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Module {
    /// Top-level statements in source order.
    pub items: Vec<Item>,
}

/// A name as written, with where.
#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    /// The text.
    pub name: String,
    /// Where it is.
    pub span: Span,
}

/// A top-level statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// `.decl rel(a: T, …) qualifiers`
    Decl(Decl),
    /// `.type T <: number` / `.type T = symbol`
    Type(TypeDef),
    /// `.input …` / `.output …` / `.printsize …`
    Io(IoDirective),
    /// `.text rel "template"`
    Text(TextDirective),
    /// `.functional rel(0, …)`
    Functional(FunctionalDirective),
    /// `.pragma …` (kept only so the tree is complete; it has no meaning here).
    Pragma(Pragma),
    /// A fact or rule, with its annotations.
    Clause(Clause),
}

/// `.decl name(col: type, …) qualifier*`
#[derive(Debug, Clone, PartialEq)]
pub struct Decl {
    /// The relation.
    pub name: Ident,
    /// Column names and type names (possibly aliases).
    pub columns: Vec<(Ident, Ident)>,
    /// Soufflé representation qualifiers such as `brie` or `eqrel`.
    pub qualifiers: Vec<Ident>,
    /// The whole directive.
    pub span: Span,
}

/// Whether a type definition is a subtype (`<:`) or an equivalence (`=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeDefKind {
    /// `.type T <: base`
    Subtype,
    /// `.type T = base | …`
    Equal,
}

/// `.type name <: base` or `.type name = a | b`.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeDef {
    /// The new type name.
    pub name: Ident,
    /// `<:` or `=`.
    pub kind: TypeDefKind,
    /// The type(s) it is made of (several only for a union `=`).
    pub bases: Vec<Ident>,
    /// The whole directive.
    pub span: Span,
}

/// Which IO directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    /// `.input`
    Input,
    /// `.output`
    Output,
    /// `.printsize` (treated as `.output`).
    PrintSize,
}

/// `.input a, b(key=value, …)`: the options apply to every relation listed.
#[derive(Debug, Clone, PartialEq)]
pub struct IoDirective {
    /// Which directive.
    pub kind: IoKind,
    /// The relations named.
    pub relations: Vec<Ident>,
    /// `key = value` options, as written (values unquoted).
    pub options: Vec<(Ident, String)>,
    /// The whole directive.
    pub span: Span,
}

/// `.text rel "…{0}…"`
#[derive(Debug, Clone, PartialEq)]
pub struct TextDirective {
    /// The relation.
    pub relation: Ident,
    /// The template, escapes resolved.
    pub template: String,
    /// Where the template string is.
    pub template_span: Span,
    /// The whole directive.
    pub span: Span,
}

/// A key column of `.functional`, by index or by name.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyColumn {
    /// `0`
    Index(u64, Span),
    /// `person`
    Name(Ident),
}

/// `.functional rel(k, …)`
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionalDirective {
    /// The relation.
    pub relation: Ident,
    /// The key columns.
    pub keys: Vec<KeyColumn>,
    /// The whole directive.
    pub span: Span,
}

/// `.pragma "key" "value"`
#[derive(Debug, Clone, PartialEq)]
pub struct Pragma {
    /// Its string arguments.
    pub args: Vec<String>,
    /// The whole directive.
    pub span: Span,
}

/// `@name(value)` on the line(s) before a clause.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    /// `name` or `confidence` (others are rejected by `check`).
    pub name: Ident,
    /// The argument.
    pub value: Lit,
    /// Where the argument is.
    pub value_span: Span,
    /// The whole annotation.
    pub span: Span,
}

/// `h1, h2 :- b1, b2 ; b3.` or a fact `h.`
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    /// Annotations written before it.
    pub annotations: Vec<Annotation>,
    /// One or more heads; each gets its own rule.
    pub heads: Vec<Atom>,
    /// Disjuncts of the body, each a conjunction; empty for a fact.
    pub body: Vec<Vec<Literal>>,
    /// The clause without its annotations, up to and including the final `.`.
    pub span: Span,
}

/// `rel(e1, …, en)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Atom {
    /// The relation.
    pub name: Ident,
    /// The arguments (in a body, `check` requires variables, constants or `_`).
    pub args: Vec<Expr>,
    /// The whole atom.
    pub span: Span,
}

/// A body literal.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `rel(…)`
    Atom(Atom),
    /// `!rel(…)` / `not rel(…)`
    Negated(Atom, Span),
    /// `l op r`
    Compare {
        /// The operator.
        op: CmpOp,
        /// Left side.
        left: Expr,
        /// Right side.
        right: Expr,
        /// The whole comparison.
        span: Span,
    },
    /// `v = func target : { … }`
    Aggregate(Aggregate),
    /// `( a, b ; c )`: alternatives inside a body; `check` expands the rule into one
    /// rule per alternative.
    Disjunction(Vec<Vec<Literal>>, Span),
    /// A built-in test: `match(p, s)`, `contains(a, s)`, `true`, `false`, possibly
    /// negated (`!match(…)`).
    Test {
        /// `match`, `contains`, `true` or `false`.
        name: Ident,
        /// Its arguments (none for `true`/`false`).
        args: Vec<Expr>,
        /// Written with `!` or `not`.
        negated: bool,
        /// The whole literal.
        span: Span,
    },
}

impl Literal {
    /// Where the literal is.
    pub fn span(&self) -> Span {
        match self {
            Literal::Atom(a) => a.span,
            Literal::Negated(_, s) => *s,
            Literal::Compare { span, .. } => *span,
            Literal::Aggregate(a) => a.span,
            Literal::Disjunction(_, s) => *s,
            Literal::Test { span, .. } => *span,
        }
    }
}

/// `result = func target : { body }` (the braces are optional around one atom).
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregate {
    /// The variable receiving the value.
    pub result: Ident,
    /// The function.
    pub func: AggFunc,
    /// The aggregated expression (`None` for `count`).
    pub target: Option<Expr>,
    /// The aggregated conjunction.
    pub body: Vec<Literal>,
    /// The whole literal.
    pub span: Span,
}

/// A constant as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    /// An integer without suffix (sign folded in): a number, or an unsigned or float
    /// when its column says so.
    Int(i128),
    /// `12u`
    Unsigned(u64),
    /// `1.5`
    Float(f64),
    /// `"text"`
    Str(String),
}

/// An expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A variable (bare identifier).
    Var(Ident),
    /// `_`
    Wildcard(Span),
    /// A constant.
    Lit(Lit, Span),
    /// `l op r`
    Binary {
        /// The operator.
        op: ArithOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
        /// The whole expression.
        span: Span,
    },
    /// `-e`
    Neg(Box<Expr>, Span),
    /// A functor applied to arguments: `cat(a, b)`, `strlen(s)`; also `bnot x` and
    /// `lnot x` (written as calls of `bnot` and `lnot`).
    Call {
        /// The functor's name (checked by `check`).
        name: Ident,
        /// Its arguments.
        args: Vec<Expr>,
        /// The whole call.
        span: Span,
    },
}

impl Expr {
    /// Where the expression is.
    pub fn span(&self) -> Span {
        match self {
            Expr::Var(v) => v.span,
            Expr::Wildcard(s) | Expr::Lit(_, s) | Expr::Neg(_, s) => *s,
            Expr::Binary { span, .. } | Expr::Call { span, .. } => *span,
        }
    }
}

/// Binding strength of an arithmetic operator (higher binds tighter).
/// Soufflé's order, loosest first: `lor`, `lxor`, `land`, `bor`, `bxor`, `band`,
/// shifts, `+ -`, `* / %`, `^` (which groups to the right).
pub(crate) fn precedence(op: ArithOp) -> u8 {
    match op {
        ArithOp::LOr => 1,
        ArithOp::LXor => 2,
        ArithOp::LAnd => 3,
        ArithOp::BOr => 4,
        ArithOp::BXor => 5,
        ArithOp::BAnd => 6,
        ArithOp::Shl | ArithOp::Shr | ArithOp::ShrU => 7,
        ArithOp::Add | ArithOp::Sub => 8,
        ArithOp::Mul | ArithOp::Div | ArithOp::Rem => 9,
        ArithOp::Pow => 10,
    }
}

/// Binds tighter than any binary operator.
const PREFIX: u8 = 11;

/// The operator's symbol.
pub(crate) fn arith_symbol(op: ArithOp) -> &'static str {
    match op {
        ArithOp::Add => "+",
        ArithOp::Sub => "-",
        ArithOp::Mul => "*",
        ArithOp::Div => "/",
        ArithOp::Rem => "%",
        ArithOp::Pow => "^",
        ArithOp::BAnd => "band",
        ArithOp::BOr => "bor",
        ArithOp::BXor => "bxor",
        ArithOp::Shl => "bshl",
        ArithOp::Shr => "bshr",
        ArithOp::ShrU => "bshru",
        ArithOp::LAnd => "land",
        ArithOp::LOr => "lor",
        ArithOp::LXor => "lxor",
    }
}

/// The comparison's symbol.
pub(crate) fn cmp_symbol(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "=",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

/// The aggregate function's keyword.
pub(crate) fn agg_keyword(f: AggFunc) -> &'static str {
    match f {
        AggFunc::Count => "count",
        AggFunc::Sum => "sum",
        AggFunc::Min => "min",
        AggFunc::Max => "max",
        AggFunc::Mean => "mean",
    }
}

impl fmt::Display for Lit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lit::Int(i) => write!(f, "{i}"),
            Lit::Unsigned(u) => write!(f, "{u}u"),
            Lit::Float(x) => {
                let s = format!("{x:?}");
                if s.contains(['.', 'e', 'E']) || !x.is_finite() {
                    f.write_str(&s)
                } else {
                    write!(f, "{s}.0")
                }
            }
            Lit::Str(s) => write_quoted(f, s),
        }
    }
}

impl fmt::Display for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl Expr {
    fn fmt_prec(&self, f: &mut fmt::Formatter<'_>, min_prec: u8) -> fmt::Result {
        match self {
            Expr::Var(v) => write!(f, "{v}"),
            Expr::Wildcard(_) => f.write_str("_"),
            Expr::Lit(l, _) => write!(f, "{l}"),
            Expr::Binary {
                op, left, right, ..
            } => {
                let p = precedence(*op);
                if p < min_prec {
                    f.write_str("(")?;
                }
                // `^` groups to the right, the others to the left.
                let (lp, rp) = if *op == ArithOp::Pow {
                    (p + 1, p)
                } else {
                    (p, p + 1)
                };
                left.fmt_prec(f, lp)?;
                write!(f, " {} ", arith_symbol(*op))?;
                right.fmt_prec(f, rp)?;
                if p < min_prec {
                    f.write_str(")")?;
                }
                Ok(())
            }
            Expr::Neg(e, _) => {
                f.write_str("-")?;
                match &**e {
                    // `-5` would read back as the literal -5, `-x` is fine as is.
                    Expr::Var(_) | Expr::Neg(..) | Expr::Wildcard(_) | Expr::Call { .. } => {
                        e.fmt_prec(f, PREFIX)
                    }
                    Expr::Lit(Lit::Int(i), _) if *i < 0 => e.fmt_prec(f, PREFIX),
                    Expr::Lit(Lit::Float(x), _) if x.is_sign_negative() => e.fmt_prec(f, PREFIX),
                    Expr::Lit(Lit::Str(_) | Lit::Unsigned(_), _) => e.fmt_prec(f, PREFIX),
                    _ => {
                        f.write_str("(")?;
                        e.fmt_prec(f, 0)?;
                        f.write_str(")")
                    }
                }
            }
            Expr::Call { name, args, .. } => {
                write!(f, "{name}(")?;
                write_list(f, args, ", ")?;
                f.write_str(")")
            }
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_prec(f, 0)
    }
}

fn write_list<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T], sep: &str) -> fmt::Result {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{x}")?;
    }
    Ok(())
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.name)?;
        write_list(f, &self.args, ", ")?;
        f.write_str(")")
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Atom(a) => write!(f, "{a}"),
            Literal::Negated(a, _) => write!(f, "!{a}"),
            Literal::Test {
                name,
                args,
                negated,
                ..
            } => {
                if *negated {
                    f.write_str("!")?;
                }
                write!(f, "{name}")?;
                if matches!(name.name.as_str(), "true" | "false") {
                    return Ok(());
                }
                f.write_str("(")?;
                write_list(f, args, ", ")?;
                f.write_str(")")
            }
            Literal::Compare {
                op, left, right, ..
            } => write!(f, "{left} {} {right}", cmp_symbol(*op)),
            Literal::Disjunction(alts, _) => {
                f.write_str("(")?;
                for (i, conj) in alts.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write_list(f, conj, ", ")?;
                }
                f.write_str(")")
            }
            Literal::Aggregate(a) => {
                write!(f, "{} = {}", a.result, agg_keyword(a.func))?;
                if let Some(t) = &a.target {
                    // `sum -x` would read as `sum - x`: parenthesise a leading minus.
                    let t = t.to_string();
                    if t.starts_with('-') {
                        write!(f, " ({t})")?;
                    } else {
                        write!(f, " {t}")?;
                    }
                }
                f.write_str(" : { ")?;
                write_list(f, &a.body, ", ")?;
                f.write_str(" }")
            }
        }
    }
}

impl fmt::Display for Clause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for a in &self.annotations {
            writeln!(f, "@{}({})", a.name, a.value)?;
        }
        write_list(f, &self.heads, ", ")?;
        for (i, conj) in self.body.iter().enumerate() {
            f.write_str(if i == 0 { " :- " } else { "; " })?;
            write_list(f, conj, ", ")?;
        }
        f.write_str(".")
    }
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Item::Decl(d) => {
                write!(f, ".decl {}(", d.name)?;
                for (i, (n, t)) in d.columns.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{n}: {t}")?;
                }
                f.write_str(")")?;
                for q in &d.qualifiers {
                    write!(f, " {q}")?;
                }
                Ok(())
            }
            Item::Type(t) => {
                write!(f, ".type {} ", t.name)?;
                match t.kind {
                    TypeDefKind::Subtype => f.write_str("<: ")?,
                    TypeDefKind::Equal => f.write_str("= ")?,
                }
                write_list(f, &t.bases, " | ")
            }
            Item::Io(io) => {
                f.write_str(match io.kind {
                    IoKind::Input => ".input ",
                    IoKind::Output => ".output ",
                    IoKind::PrintSize => ".printsize ",
                })?;
                write_list(f, &io.relations, ", ")?;
                if !io.options.is_empty() {
                    f.write_str("(")?;
                    for (i, (k, v)) in io.options.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{k}=")?;
                        write_quoted(f, v)?;
                    }
                    f.write_str(")")?;
                }
                Ok(())
            }
            Item::Text(t) => {
                write!(f, ".text {} ", t.relation)?;
                write_quoted(f, &t.template)
            }
            Item::Functional(d) => {
                write!(f, ".functional {}(", d.relation)?;
                for (i, k) in d.keys.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    match k {
                        KeyColumn::Index(n, _) => write!(f, "{n}")?,
                        KeyColumn::Name(n) => write!(f, "{n}")?,
                    }
                }
                f.write_str(")")
            }
            Item::Pragma(p) => {
                f.write_str(".pragma")?;
                for a in &p.args {
                    f.write_str(" ")?;
                    write_quoted(f, a)?;
                }
                Ok(())
            }
            Item::Clause(c) => write!(f, "{c}"),
        }
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for item in &self.items {
            writeln!(f, "{item}")?;
        }
        Ok(())
    }
}
