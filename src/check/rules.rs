//! Lowering one rule: variables, types, safety and a safe evaluation order.
//!
//! A rule body is reordered so that every variable is bound before it is read:
//! positive atoms keep their source order, and every other literal (negation,
//! comparison, assignment, aggregate) moves to just after the earliest point where all
//! the variables it reads are bound. A variable nothing binds is an error: a head
//! variable breaks range restriction, any other is unsafe.

use std::collections::HashMap;

use crate::diag::{ErrorCode, Span};
use crate::ir::{AggFunc, ArithOp, CmpOp, Functor, RelId, TestFn, VarId};
use crate::syntax::ast::{self, Expr, Lit};
use crate::value::ColumnType;

use super::Ctx;
use super::stratify::{Dep, DepKind};
use super::types::{Kind, Origin, Slot};

/// A body-atom argument before constants are typed.
#[derive(Debug, Clone)]
pub(crate) enum LTerm {
    Var(VarId),
    Const(Lit, Slot, Span),
    Wildcard,
}

/// An expression before constants are typed.
#[derive(Debug, Clone)]
pub(crate) enum LExpr {
    Var(VarId),
    Const(Lit, Slot, Span),
    Binary(ArithOp, Box<LExpr>, Box<LExpr>),
    Neg(Box<LExpr>),
    /// A functor, with its arguments' type slots.
    Call(Functor, Vec<LExpr>, Vec<Slot>),
    /// Stands in for something already reported as an error.
    Invalid,
}

/// A body atom.
#[derive(Debug, Clone)]
pub(crate) struct LAtom {
    pub rel: RelId,
    pub args: Vec<LTerm>,
    pub span: Span,
}

/// A body literal before constants are typed.
#[derive(Debug, Clone)]
pub(crate) enum LLit {
    Atom(LAtom),
    Negated(LAtom),
    Compare {
        op: CmpOp,
        left: LExpr,
        right: LExpr,
        assigns: Option<VarId>,
        span: Span,
    },
    Aggregate {
        result: VarId,
        func: AggFunc,
        target: Option<LExpr>,
        body: Vec<LLit>,
        span: Span,
    },
    Test {
        test: TestFn,
        args: Vec<LExpr>,
        negated: bool,
        span: Span,
    },
}

/// A rule lowered, checked and ordered, waiting for final types.
#[derive(Debug, Clone)]
pub(crate) struct LRule {
    pub name: Option<String>,
    pub confidence: f64,
    pub head: RelId,
    pub head_args: Vec<LExpr>,
    pub body: Vec<LLit>,
    /// Name and type slot of every variable, by `VarId`.
    pub vars: Vec<(String, Slot)>,
    pub deps: Vec<Dep>,
    pub span: Span,
}

struct VarInfo {
    name: String,
    slot: Slot,
    head_span: Option<Span>,
    body_span: Option<Span>,
    in_negation: bool,
}

/// Builds one [`LRule`].
pub(crate) struct Lowerer<'c> {
    ctx: &'c mut Ctx,
    vars: Vec<VarInfo>,
    ids: HashMap<String, VarId>,
    deps: Vec<Dep>,
    in_head: bool,
    /// Variables not to report as unbound (their error was reported another way).
    excused: Vec<VarId>,
    /// `v = expr` literals standing for expressions written as atom arguments
    /// (`r(x + 1)` reads `r(v)` with `v = x + 1`), to add after the literal.
    extra: Vec<LLit>,
}

fn expr_vars(e: &LExpr, out: &mut Vec<VarId>) {
    match e {
        LExpr::Var(v) => out.push(*v),
        LExpr::Binary(_, l, r) => {
            expr_vars(l, out);
            expr_vars(r, out);
        }
        LExpr::Neg(e) => expr_vars(e, out),
        LExpr::Call(_, args, _) => args.iter().for_each(|a| expr_vars(a, out)),
        LExpr::Const(..) | LExpr::Invalid => {}
    }
}

fn atom_vars(a: &LAtom, out: &mut Vec<VarId>) {
    for t in &a.args {
        if let LTerm::Var(v) = t {
            out.push(*v);
        }
    }
}

/// Every variable a literal mentions (an aggregate: its body, target and result).
fn lit_vars(l: &LLit, out: &mut Vec<VarId>) {
    match l {
        LLit::Atom(a) | LLit::Negated(a) => atom_vars(a, out),
        LLit::Compare { left, right, .. } => {
            expr_vars(left, out);
            expr_vars(right, out);
        }
        LLit::Aggregate {
            result,
            target,
            body,
            ..
        } => {
            out.push(*result);
            agg_inner_vars(target, body, out);
        }
        LLit::Test { args, .. } => args.iter().for_each(|a| expr_vars(a, out)),
    }
}

fn agg_inner_vars(target: &Option<LExpr>, body: &[LLit], out: &mut Vec<VarId>) {
    if let Some(t) = target {
        expr_vars(t, out);
    }
    for l in body {
        lit_vars(l, out);
    }
}

impl<'c> Lowerer<'c> {
    pub(crate) fn new(ctx: &'c mut Ctx) -> Self {
        Lowerer {
            ctx,
            vars: Vec::new(),
            ids: HashMap::new(),
            deps: Vec::new(),
            in_head: false,
            excused: Vec::new(),
            extra: Vec::new(),
        }
    }

    fn var(&mut self, id: &ast::Ident) -> VarId {
        let v = match self.ids.get(&id.name) {
            Some(&v) => v,
            None => {
                let slot = self.ctx.types.slot(Kind::Any, Origin::Var(id.name.clone()));
                let v = self.vars.len() as VarId;
                self.vars.push(VarInfo {
                    name: id.name.clone(),
                    slot,
                    head_span: None,
                    body_span: None,
                    in_negation: false,
                });
                self.ids.insert(id.name.clone(), v);
                v
            }
        };
        let info = &mut self.vars[v as usize];
        if self.in_head {
            info.head_span.get_or_insert(id.span);
        } else {
            info.body_span.get_or_insert(id.span);
        }
        v
    }

    fn unify(&mut self, context: Slot, new: Slot, subject: &str, span: Span) {
        if let Err(c) = self.ctx.types.unify(context, new) {
            self.ctx.type_conflict(&c, subject, span);
        }
    }

    fn const_slot(&mut self, lit: &Lit) -> Slot {
        self.ctx
            .types
            .slot(Kind::of_lit(lit), Origin::Const(lit.clone()))
    }

    /// Lower an expression (head argument, comparison side, aggregate target).
    fn expr(&mut self, e: &Expr) -> (LExpr, Slot) {
        match e {
            Expr::Var(id) => {
                let v = self.var(id);
                (LExpr::Var(v), self.vars[v as usize].slot)
            }
            Expr::Lit(l, span) => {
                let s = self.const_slot(l);
                (LExpr::Const(l.clone(), s, *span), s)
            }
            Expr::Wildcard(span) => {
                if self.in_head {
                    self.ctx.error(
                        ErrorCode::WildcardInHead,
                        *span,
                        "`_` cannot appear in a rule head",
                        "every head argument needs a value: use a variable bound by the body, \
                         or a constant",
                    );
                } else {
                    self.ctx.error(
                        ErrorCode::UnsafeVariable,
                        *span,
                        "`_` cannot be used in a comparison or arithmetic",
                        "use a named variable that a positive body atom binds",
                    );
                }
                let s = self.ctx.types.slot(Kind::Any, Origin::Arith);
                (LExpr::Invalid, s)
            }
            Expr::Binary {
                op,
                left,
                right,
                span,
            } => {
                let (l, ls) = self.expr(left);
                let (r, rs) = self.expr(right);
                let s = self.ctx.types.slot(Kind::Numeric, Origin::Arith);
                let subj = format!("the operand of `{}`", ast::arith_symbol(*op));
                self.unify(s, ls, &subj, left.span());
                self.unify(s, rs, &subj, right.span());
                if op.integral() {
                    self.ctx.integral.push((s, *span, ast::arith_symbol(*op)));
                }
                (LExpr::Binary(*op, Box::new(l), Box::new(r)), s)
            }
            Expr::Call { name, args, span } => self.call(name, args, *span),
            Expr::Neg(inner, _) => {
                let (e, s) = self.expr(inner);
                let n = self.ctx.types.slot(Kind::Numeric, Origin::Arith);
                self.unify(n, s, "the operand of unary `-`", inner.span());
                (LExpr::Neg(Box::new(e)), s)
            }
        }
    }

    /// A functor call: its arguments typed by its signature.
    fn call(&mut self, name: &ast::Ident, args: &[Expr], span: Span) -> (LExpr, Slot) {
        let lowered: Vec<(LExpr, Slot)> = args.iter().map(|a| self.expr(a)).collect();
        let invalid = |this: &mut Self| {
            let s = this.ctx.types.slot(Kind::Any, Origin::Arith);
            (LExpr::Invalid, s)
        };
        let Some(f) = Functor::from_name(&name.name) else {
            let (code, message, help) = match name.name.as_str() {
                "as" => (
                    ErrorCode::Unsupported,
                    "type casts (`as(x, T)`) are not supported".to_string(),
                    "use to_number, to_unsigned, to_float or to_string".to_string(),
                ),
                "range" => (
                    ErrorCode::Unsupported,
                    "the generator functor `range` is not supported".to_string(),
                    "list the values in a relation and join with it".to_string(),
                ),
                other => (
                    ErrorCode::Parse,
                    format!("`{other}(…)` is not a functor"),
                    "a relation can only appear as a body literal of its own; the functors \
                     are cat, strlen, substr, ord, to_number, to_unsigned, to_float, \
                     to_string, min, max, abs, bnot, lnot"
                        .to_string(),
                ),
            };
            self.ctx.error(code, name.span, message, help);
            return invalid(self);
        };
        let n = lowered.len();
        let arity_ok = match f {
            Functor::Cat | Functor::Min | Functor::Max => n >= 1,
            Functor::Substr => n == 3,
            _ => n == 1,
        };
        if !arity_ok {
            let want = match f {
                Functor::Cat | Functor::Min | Functor::Max => "at least one argument",
                Functor::Substr => "three arguments (symbol, start, length)",
                _ => "one argument",
            };
            self.ctx.error(
                ErrorCode::ArityMismatch,
                span,
                format!("`{}` takes {want}, not {n}", name.name),
                format!("write e.g. {}", example(f)),
            );
            return invalid(self);
        }
        let exact = |this: &mut Self, t: ColumnType| {
            this.ctx
                .types
                .slot(Kind::Exact(t), Origin::Functor(f.name()))
        };
        let subject = |i: usize| format!("argument {} of `{}`", i + 1, name.name);
        let result = match f {
            Functor::Cat | Functor::Strlen | Functor::Ord | Functor::Substr => {
                for (i, (_, s)) in lowered.iter().enumerate() {
                    let want = if f == Functor::Substr && i > 0 {
                        ColumnType::Number
                    } else {
                        ColumnType::Symbol
                    };
                    let t = exact(self, want);
                    self.unify(t, *s, &subject(i), args[i].span());
                }
                let out = match f {
                    Functor::Cat | Functor::Substr => ColumnType::Symbol,
                    _ => ColumnType::Number,
                };
                exact(self, out)
            }
            Functor::ToNumber => exact(self, ColumnType::Number),
            Functor::ToUnsigned => exact(self, ColumnType::Unsigned),
            Functor::ToFloat => exact(self, ColumnType::Float),
            Functor::ToString => exact(self, ColumnType::Symbol),
            Functor::Min | Functor::Max => {
                let first = lowered[0].1;
                for (i, (_, s)) in lowered.iter().enumerate().skip(1) {
                    self.unify(first, *s, &subject(i), args[i].span());
                }
                first
            }
            Functor::Abs | Functor::BNot | Functor::LNot => {
                let num = self
                    .ctx
                    .types
                    .slot(Kind::Numeric, Origin::Functor(f.name()));
                self.unify(num, lowered[0].1, &subject(0), args[0].span());
                if f == Functor::BNot {
                    self.ctx.integral.push((num, span, "bnot"));
                }
                num
            }
        };
        let (exprs, slots): (Vec<LExpr>, Vec<Slot>) = lowered.into_iter().unzip();
        (LExpr::Call(f, exprs, slots), result)
    }

    fn atom(&mut self, a: &ast::Atom, kind: DepKind) -> LAtom {
        let rel = self.ctx.rel_ids[&a.name.name];
        self.deps.push(Dep {
            rel,
            kind,
            span: a.span,
        });
        let arity = self.ctx.rels[rel as usize].arity;
        let base = self.ctx.rels[rel as usize].slot;
        let mut args = Vec::with_capacity(a.args.len());
        for (i, e) in a.args.iter().enumerate() {
            let col = (i < arity).then(|| base + i as Slot);
            let term = match e {
                Expr::Var(id) => {
                    let v = self.var(id);
                    if kind == DepKind::Negated {
                        self.vars[v as usize].in_negation = true;
                    }
                    if let Some(col) = col {
                        let s = self.vars[v as usize].slot;
                        self.unify(col, s, &format!("variable `{}`", id.name), id.span);
                    }
                    LTerm::Var(v)
                }
                Expr::Wildcard(_) => LTerm::Wildcard,
                Expr::Lit(l, span) => {
                    let s = self.const_slot(l);
                    if let Some(col) = col {
                        self.unify(col, s, &format!("constant `{l}`"), *span);
                    }
                    LTerm::Const(l.clone(), s, *span)
                }
                other => {
                    // `r(x + 1)` reads `r(v)` with `v = x + 1`.
                    let (lowered, slot) = self.expr(other);
                    let v = self.vars.len() as VarId;
                    self.vars.push(VarInfo {
                        name: format!("_e{v}"),
                        slot,
                        head_span: None,
                        body_span: Some(other.span()),
                        in_negation: kind == DepKind::Negated,
                    });
                    if let Some(col) = col {
                        self.unify(col, slot, &format!("`{other}`"), other.span());
                    }
                    self.extra.push(LLit::Compare {
                        op: CmpOp::Eq,
                        left: LExpr::Var(v),
                        right: lowered,
                        assigns: None,
                        span: other.span(),
                    });
                    LTerm::Var(v)
                }
            };
            args.push(term);
        }
        LAtom {
            rel,
            args,
            span: a.span,
        }
    }

    fn literal(&mut self, l: &ast::Literal, in_aggregate: Option<AggFunc>) -> LLit {
        let atom_kind = |positive: bool| match (in_aggregate, positive) {
            (Some(f), _) => DepKind::Aggregated(f),
            (None, true) => DepKind::Positive,
            (None, false) => DepKind::Negated,
        };
        match l {
            ast::Literal::Atom(a) => LLit::Atom(self.atom(a, atom_kind(true))),
            ast::Literal::Negated(a, _) => {
                let mut atom = self.atom(a, atom_kind(false));
                if let Some(d) = self.deps.last_mut() {
                    d.span = l.span();
                }
                if in_aggregate.is_some() {
                    // Negated inside an aggregate: still a negated read for safety.
                    for t in &atom.args {
                        if let LTerm::Var(v) = t {
                            self.vars[*v as usize].in_negation = true;
                        }
                    }
                }
                atom.span = l.span();
                LLit::Negated(atom)
            }
            ast::Literal::Compare {
                op,
                left,
                right,
                span,
            } => {
                let (le, ls) = self.expr(left);
                let (re, rs) = self.expr(right);
                self.unify(
                    ls,
                    rs,
                    &format!("comparison `{}`", ast::cmp_symbol(*op)),
                    *span,
                );
                LLit::Compare {
                    op: *op,
                    left: le,
                    right: re,
                    assigns: None,
                    span: *span,
                }
            }
            ast::Literal::Test {
                name,
                args,
                negated,
                span,
            } => {
                let test = match name.name.as_str() {
                    "match" => TestFn::Match,
                    "contains" => TestFn::Contains,
                    "true" => TestFn::True,
                    _ => TestFn::False,
                };
                let want = if matches!(test, TestFn::Match | TestFn::Contains) {
                    2
                } else {
                    0
                };
                let mut lowered = Vec::with_capacity(args.len());
                for (i, a) in args.iter().enumerate() {
                    let (e, slot) = self.expr(a);
                    let t = self.ctx.types.slot(
                        Kind::Exact(ColumnType::Symbol),
                        Origin::Functor(test.name()),
                    );
                    self.unify(
                        t,
                        slot,
                        &format!("argument {} of `{}`", i + 1, test.name()),
                        a.span(),
                    );
                    lowered.push(e);
                }
                if args.len() != want {
                    self.ctx.error(
                        ErrorCode::ArityMismatch,
                        *span,
                        format!(
                            "`{}` takes {want} arguments, not {}",
                            test.name(),
                            args.len()
                        ),
                        "write e.g. `match(\"a.*\", s)` or `contains(\"b\", s)`",
                    );
                }
                if test == TestFn::Match
                    && let Some(Expr::Lit(Lit::Str(p), pspan)) = args.first()
                    && let Err(e) = regex::Regex::new(&format!("^(?:{p})$"))
                {
                    self.ctx.error(
                        ErrorCode::Parse,
                        *pspan,
                        format!("invalid regular expression: {}", first_line(&e.to_string())),
                        "`match` takes a regular expression (Rust's `regex` syntax) that must \
                         match the whole symbol",
                    );
                }
                LLit::Test {
                    test,
                    args: lowered,
                    negated: *negated,
                    span: *span,
                }
            }
            ast::Literal::Disjunction(_, span) => {
                // Top-level disjunctions were expanded away; only aggregates reach here.
                self.ctx.error(
                    ErrorCode::Parse,
                    *span,
                    "a disjunction cannot appear inside an aggregate",
                    "aggregate over a relation computed by one rule per alternative",
                );
                LLit::Compare {
                    op: CmpOp::Eq,
                    left: LExpr::Invalid,
                    right: LExpr::Invalid,
                    assigns: None,
                    span: *span,
                }
            }
            ast::Literal::Aggregate(agg) => {
                if in_aggregate.is_some() {
                    self.ctx.error(
                        ErrorCode::Parse,
                        agg.span,
                        "aggregates cannot be nested",
                        "compute the inner aggregate in a rule of its own and read its relation",
                    );
                }
                let result = self.var(&agg.result);
                let rslot = self.vars[result as usize].slot;
                let mut body = Vec::with_capacity(agg.body.len());
                let outer_extra = std::mem::take(&mut self.extra);
                for inner in &agg.body {
                    body.push(self.literal(inner, Some(agg.func)));
                }
                body.append(&mut self.extra);
                self.extra = outer_extra;
                let target = agg.target.as_ref().map(|t| {
                    let (e, s) = self.expr(t);
                    (e, s, t.span())
                });
                let subject = format!("the result of `{}`", ast::agg_keyword(agg.func));
                match (agg.func, &target) {
                    (AggFunc::Mean, Some((_, ts, tspan))) => {
                        let s = self
                            .ctx
                            .types
                            .slot(Kind::Numeric, Origin::Aggregate(AggFunc::Mean));
                        self.unify(s, *ts, "the target of `mean`", *tspan);
                        let f = self.ctx.types.slot(
                            Kind::Exact(ColumnType::Float),
                            Origin::Aggregate(AggFunc::Mean),
                        );
                        self.unify(f, rslot, &subject, agg.result.span);
                    }
                    (AggFunc::Count, _) | (_, None) => {
                        let s = self.ctx.types.slot(
                            Kind::Exact(ColumnType::Number),
                            Origin::Aggregate(AggFunc::Count),
                        );
                        self.unify(s, rslot, &subject, agg.result.span);
                    }
                    (AggFunc::Sum, Some((_, ts, tspan))) => {
                        let s = self
                            .ctx
                            .types
                            .slot(Kind::Numeric, Origin::Aggregate(AggFunc::Sum));
                        self.unify(s, *ts, "the target of `sum`", *tspan);
                        self.unify(*ts, rslot, &subject, agg.result.span);
                    }
                    (_, Some((_, ts, _))) => {
                        self.unify(*ts, rslot, &subject, agg.result.span);
                    }
                }
                LLit::Aggregate {
                    result,
                    func: agg.func,
                    target: target.map(|(e, _, _)| e),
                    body,
                    span: agg.span,
                }
            }
        }
    }

    /// Lower `head :- body`, check it and order its body. `fact_like` says the clause
    /// had no body (for the error message about non-ground facts).
    pub(crate) fn rule(
        mut self,
        head: &ast::Atom,
        body: &[ast::Literal],
        name: Option<String>,
        confidence: f64,
        span: Span,
    ) -> LRule {
        let rel = self.ctx.rel_ids[&head.name.name];
        let arity = self.ctx.rels[rel as usize].arity;
        let base = self.ctx.rels[rel as usize].slot;
        self.in_head = true;
        let mut head_args = Vec::with_capacity(head.args.len());
        for (i, e) in head.args.iter().enumerate() {
            let (le, s) = self.expr(e);
            if i < arity {
                let subject = match e {
                    Expr::Var(v) => format!("variable `{}`", v.name),
                    other => format!("`{other}`"),
                };
                self.unify(base + i as Slot, s, &subject, e.span());
            }
            head_args.push(le);
        }
        self.in_head = false;
        let errors_before = self.ctx.error_count();
        let mut lits: Vec<LLit> = body.iter().map(|l| self.literal(l, None)).collect();
        lits.append(&mut self.extra);
        self.project_negations(&mut lits, &head_args);
        let ordered = self.order_rule(lits, &head_args, body.is_empty(), errors_before);
        LRule {
            name,
            confidence,
            head: rel,
            head_args,
            body: ordered,
            vars: self.vars.into_iter().map(|v| (v.name, v.slot)).collect(),
            deps: self.deps,
            span,
        }
    }

    /// Nemo's negation: a variable that occurs in one negated atom and nowhere else in
    /// the rule is existential inside it (`not s(x, p)`: no `p` exists). Such an atom
    /// is read through a projection: an auxiliary relation of the atom's other
    /// variables, computed by `aux(x) :- s(x, p).` (constants and repeated variables
    /// kept, so `not s(x, p, p)` projects the facts whose last two columns agree), and
    /// the rule negates `aux(x)` instead. The auxiliary rule is added after every rule
    /// of the program, so rule numbers (and `RULE-n` tags) do not change.
    fn project_negations(&mut self, lits: &mut [LLit], head: &[LExpr]) {
        let n = self.vars.len();
        // In how many places (head, literals) each variable occurs.
        let mut places = vec![0u32; n];
        let mut scratch = Vec::new();
        let count = |vars: &mut Vec<VarId>, places: &mut Vec<u32>| {
            vars.sort_unstable();
            vars.dedup();
            for &v in vars.iter() {
                places[v as usize] += 1;
            }
            vars.clear();
        };
        for e in head {
            expr_vars(e, &mut scratch);
        }
        count(&mut scratch, &mut places);
        for l in lits.iter() {
            lit_vars(l, &mut scratch);
            count(&mut scratch, &mut places);
        }
        for l in lits.iter_mut() {
            let LLit::Negated(atom) = l else { continue };
            let local: Vec<VarId> = atom
                .args
                .iter()
                .filter_map(|t| match t {
                    LTerm::Var(v) if places[*v as usize] == 1 => Some(*v),
                    _ => None,
                })
                .collect();
            if local.is_empty() {
                continue;
            }
            // Bound by the projection, not by this rule.
            self.excused.extend(local.iter().copied());
            let mut kept: Vec<VarId> = Vec::new();
            for t in &atom.args {
                if let LTerm::Var(v) = t
                    && places[*v as usize] != 1
                    && !kept.contains(v)
                {
                    kept.push(*v);
                }
            }
            let slots: Vec<Slot> = kept.iter().map(|&v| self.vars[v as usize].slot).collect();
            let aux = self.ctx.auxiliary_relation(atom.rel, &slots, atom.span);
            // The projection rule: its variables are the kept ones, then the local
            // ones, numbered afresh.
            let mut renumber: HashMap<VarId, VarId> = HashMap::new();
            let mut vars: Vec<(String, Slot)> = Vec::new();
            for &v in kept.iter().chain(local.iter()) {
                if let std::collections::hash_map::Entry::Vacant(e) = renumber.entry(v) {
                    e.insert(vars.len() as VarId);
                    let info = &self.vars[v as usize];
                    vars.push((info.name.clone(), info.slot));
                }
            }
            let body_atom = LAtom {
                rel: atom.rel,
                args: atom
                    .args
                    .iter()
                    .map(|t| match t {
                        LTerm::Var(v) => LTerm::Var(renumber[v]),
                        other => other.clone(),
                    })
                    .collect(),
                span: atom.span,
            };
            let rule = LRule {
                name: Some(format!("{}: projection", self.ctx.rels[aux as usize].name)),
                confidence: 1.0,
                head: aux,
                head_args: (0..kept.len()).map(|i| LExpr::Var(i as VarId)).collect(),
                body: vec![LLit::Atom(body_atom)],
                vars,
                deps: vec![Dep {
                    rel: atom.rel,
                    kind: DepKind::Positive,
                    span: atom.span,
                }],
                span: atom.span,
            };
            self.ctx.auxiliary_rules.push(rule);
            // The rule now negates the projection.
            for d in &mut self.deps {
                if d.kind == DepKind::Negated && d.rel == atom.rel && d.span == atom.span {
                    d.rel = aux;
                }
            }
            atom.rel = aux;
            atom.args = kept.into_iter().map(LTerm::Var).collect();
        }
    }

    fn order_rule(
        &mut self,
        lits: Vec<LLit>,
        head: &[LExpr],
        is_fact: bool,
        errors_before: usize,
    ) -> Vec<LLit> {
        let n = self.vars.len();
        for l in &lits {
            if let LLit::Aggregate {
                result,
                target,
                body,
                span,
                ..
            } = l
            {
                let mut inner = Vec::new();
                agg_inner_vars(target, body, &mut inner);
                if inner.contains(result) {
                    let name = self.vars[*result as usize].name.clone();
                    self.ctx.error(
                        ErrorCode::UnsafeVariable,
                        *span,
                        format!("aggregate result `{name}` also occurs inside the aggregate"),
                        format!(
                            "use a fresh variable for the result, or a different one inside \
                             the braces; `{name}` cannot both group and receive the aggregate"
                        ),
                    );
                }
            }
        }
        // Regions: the head, each literal (an aggregate's result only), and each
        // aggregate's inside. A variable of an aggregate's inside that occurs in any
        // other region groups the aggregate; the others are local to it.
        let mut regions = vec![0u32; n];
        let mut scratch = Vec::new();
        let count_region = |vars: &mut Vec<VarId>, regions: &mut Vec<u32>| {
            vars.sort_unstable();
            vars.dedup();
            for &v in vars.iter() {
                regions[v as usize] += 1;
            }
            vars.clear();
        };
        for e in head {
            expr_vars(e, &mut scratch);
        }
        count_region(&mut scratch, &mut regions);
        for l in &lits {
            match l {
                LLit::Aggregate {
                    result,
                    target,
                    body,
                    ..
                } => {
                    scratch.push(*result);
                    count_region(&mut scratch, &mut regions);
                    agg_inner_vars(target, body, &mut scratch);
                    count_region(&mut scratch, &mut regions);
                }
                other => {
                    lit_vars(other, &mut scratch);
                    count_region(&mut scratch, &mut regions);
                }
            }
        }
        let mut local = vec![false; n];
        let mut grouping: Vec<Vec<VarId>> = Vec::with_capacity(lits.len());
        for l in &lits {
            let mut g = Vec::new();
            if let LLit::Aggregate { target, body, .. } = l {
                agg_inner_vars(target, body, &mut g);
                g.sort_unstable();
                g.dedup();
                g.retain(|&v| {
                    let shared = regions[v as usize] >= 2;
                    if !shared {
                        local[v as usize] = true;
                    }
                    shared
                });
            }
            grouping.push(g);
        }
        // Order each aggregate's inside on its own, its grouping variables bound.
        let mut lits = lits;
        for (l, g) in lits.iter_mut().zip(&grouping) {
            if let LLit::Aggregate { target, body, .. } = l {
                let mut bound = vec![false; n];
                for &v in g {
                    bound[v as usize] = true;
                }
                let inner = std::mem::take(body);
                let inner_groups = vec![Vec::new(); inner.len()];
                let (placed, _) = order(inner, &inner_groups, &mut bound);
                *body = placed;
                let mut vars = Vec::new();
                agg_inner_vars(target, body, &mut vars);
                vars.sort_unstable();
                vars.dedup();
                for v in vars {
                    if !bound[v as usize] {
                        self.report_unbound(v, false, false);
                        bound[v as usize] = true;
                    }
                }
            }
        }
        let mut bound = vec![false; n];
        let (mut placed, rest) = order(lits, &grouping, &mut bound);
        // An aggregate that cannot run would still bind its result: report only the
        // grouping variables that block it.
        for l in &rest {
            if let LLit::Aggregate { result, .. } = l {
                self.excused.push(*result);
            }
        }
        for &v in &self.excused {
            bound[v as usize] = true;
        }
        let placed_count = placed.len();
        placed.extend(rest);
        let mut in_head = vec![false; n];
        for e in head {
            let mut vs = Vec::new();
            expr_vars(e, &mut vs);
            for v in vs {
                in_head[v as usize] = true;
            }
        }
        for v in 0..n {
            if !bound[v] && !local[v] {
                self.report_unbound(v as VarId, in_head[v], is_fact);
            }
        }
        // Literals that never became ready must leave an error behind, even when all
        // their variables were excused (aggregates waiting on each other's results).
        if self.ctx.error_count() == errors_before {
            for l in &placed[placed_count..] {
                let span = match l {
                    LLit::Negated(a) | LLit::Atom(a) => a.span,
                    LLit::Compare { span, .. }
                    | LLit::Aggregate { span, .. }
                    | LLit::Test { span, .. } => *span,
                };
                self.ctx.error(
                    ErrorCode::UnsafeVariable,
                    span,
                    "this literal reads variables that nothing binds before it",
                    "bind every variable it reads in a positive body atom; aggregates \
                     cannot depend on each other's results",
                );
            }
        }
        placed
    }

    fn report_unbound(&mut self, v: VarId, in_head: bool, is_fact: bool) {
        let info = &self.vars[v as usize];
        let name = info.name.clone();
        if in_head {
            let span = info.head_span.unwrap_or_default();
            let (message, help) = if is_fact {
                (
                    format!("a fact must be ground, but `{name}` is a variable"),
                    format!("write a constant instead of `{name}`, or add a body that binds it"),
                )
            } else {
                (
                    format!("head variable `{name}` is not bound by the rule body"),
                    format!(
                        "bind `{name}` in a positive body atom, or assign it with \
                         `{name} = <expression>` over bound variables"
                    ),
                )
            };
            self.ctx
                .error(ErrorCode::RangeRestriction, span, message, help);
        } else {
            let span = info.body_span.unwrap_or_default();
            let help = if info.in_negation {
                format!(
                    "bind `{name}` in a positive body atom, or write `_` instead of it in the \
                     negated atom"
                )
            } else {
                format!("bind `{name}` in a positive body atom before comparing it")
            };
            self.ctx.error(
                ErrorCode::UnsafeVariable,
                span,
                format!(
                    "variable `{name}` is unsafe: it occurs only in negated atoms or comparisons"
                ),
                help,
            );
        }
    }
}

/// What a pending literal needs before it can run, given the variables bound so far;
/// `None` if it cannot run yet. On success returns the variables it binds and, for an
/// `=` comparison, which side it assigns (swapping sides so that `left` is assigned).
fn ready(l: &mut LLit, group: &[VarId], bound: &[bool]) -> Option<Vec<VarId>> {
    let all_bound = |e: &LExpr| {
        let mut vs = Vec::new();
        expr_vars(e, &mut vs);
        vs.iter().all(|&v| bound[v as usize])
    };
    match l {
        LLit::Atom(a) => {
            let mut vs = Vec::new();
            atom_vars(a, &mut vs);
            Some(vs)
        }
        LLit::Negated(a) => {
            let mut vs = Vec::new();
            atom_vars(a, &mut vs);
            vs.iter().all(|&v| bound[v as usize]).then(Vec::new)
        }
        LLit::Compare {
            op,
            left,
            right,
            assigns,
            ..
        } => {
            if all_bound(left) && all_bound(right) {
                return Some(Vec::new());
            }
            if *op != CmpOp::Eq {
                return None;
            }
            if let LExpr::Var(v) = left
                && !bound[*v as usize]
                && all_bound(right)
            {
                *assigns = Some(*v);
                return Some(vec![*v]);
            }
            if let LExpr::Var(v) = right
                && !bound[*v as usize]
                && all_bound(left)
            {
                let v = *v;
                std::mem::swap(left, right);
                *assigns = Some(v);
                return Some(vec![v]);
            }
            None
        }
        LLit::Aggregate { result, .. } => group
            .iter()
            .all(|&v| bound[v as usize])
            .then(|| vec![*result]),
        LLit::Test { args, .. } => args.iter().all(all_bound).then(Vec::new),
    }
}

/// An example call of a functor, for messages.
fn example(f: Functor) -> &'static str {
    match f {
        Functor::Cat => "`cat(first, \" \", last)`",
        Functor::Substr => "`substr(s, 0, 3)`",
        Functor::Min => "`min(a, b)`",
        Functor::Max => "`max(a, b)`",
        _ => "`strlen(s)`",
    }
}

fn first_line(s: &str) -> &str {
    s.lines()
        .rfind(|l| l.starts_with("error:"))
        .unwrap_or_else(|| s.lines().next().unwrap_or(s))
}

/// Order literals safely (see the module doc). Returns the placed literals and the
/// ones that never became ready; `bound` ends as the variables bound by the placed ones.
fn order(lits: Vec<LLit>, groups: &[Vec<VarId>], bound: &mut [bool]) -> (Vec<LLit>, Vec<LLit>) {
    let mut pending: Vec<Option<(LLit, &[VarId])>> = Vec::new();
    let mut atoms = Vec::new();
    for (l, g) in lits.into_iter().zip(groups) {
        match l {
            LLit::Atom(_) => atoms.push(l),
            other => pending.push(Some((other, g.as_slice()))),
        }
    }
    let mut out = Vec::new();
    let flush =
        |pending: &mut Vec<Option<(LLit, &[VarId])>>, bound: &mut [bool], out: &mut Vec<LLit>| {
            loop {
                let mut progress = false;
                for slot in pending.iter_mut() {
                    let Some((l, g)) = slot else { continue };
                    if let Some(binds) = ready(l, g, bound) {
                        for v in binds {
                            bound[v as usize] = true;
                        }
                        if let Some((l, _)) = slot.take() {
                            out.push(l);
                        }
                        progress = true;
                        break;
                    }
                }
                if !progress {
                    return;
                }
            }
        };
    flush(&mut pending, bound, &mut out);
    for a in atoms {
        if let LLit::Atom(atom) = &a {
            for t in &atom.args {
                if let LTerm::Var(v) = t {
                    bound[*v as usize] = true;
                }
            }
        }
        out.push(a);
        flush(&mut pending, bound, &mut out);
    }
    let rest = pending.into_iter().flatten().map(|(l, _)| l).collect();
    (out, rest)
}
