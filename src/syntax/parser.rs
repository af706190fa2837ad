//! Recursive-descent parser: tokens in, [`Module`] out.
//!
//! Statements are either directives (`.decl …`, which end at their last token) or
//! clauses (which end with `.`). After an error the parser skips to the end of the
//! statement and goes on, so one run reports every syntax error of a file.
//!
//! ```text
//! module      = { annotation | directive | clause }
//! annotation  = "@" IDENT "(" constant ")"
//! directive   = ".decl" IDENT "(" [ IDENT ":" IDENT { "," … } ] ")" { qualifier }
//!             | ".type" IDENT ( "<:" IDENT | "=" IDENT { "|" IDENT } )
//!             | (".input" | ".output" | ".printsize") IDENT { "," IDENT } [ "(" options ")" ]
//!             | ".text" IDENT STRING | ".functional" IDENT "(" key { "," key } ")"
//!             | ".pragma" { STRING } | ".number_type" IDENT | ".symbol_type" IDENT
//! clause      = atom { "," atom } [ ":-" conj { ";" conj } ] "."
//! conj        = literal { "," literal }
//! literal     = atom | ("!" | "not") atom | "(" conj { ";" conj } ")"
//!             | IDENT "=" aggfunc [ expr ] ":" ( "{" conj "}" | atom )
//!             | expr cmp expr
//! atom        = IDENT "(" [ expr { "," expr } ] ")"
//! expr        = term { ("+" | "-") term };  term = unary { ("*" | "/" | "%") unary }
//! unary       = "-" unary | IDENT | "_" | constant | "(" expr ")"
//! ```
//!
//! A `.` glued to a name at the start of a statement begins a directive; anywhere
//! else `.` ends a clause, so `e(1, 2).e(2, 3).` is two facts.

use crate::diag::{FileId, Span};

use super::ast::*;
use super::lexer::{Tok, Token, lex};
use super::{Errors, Goal, GoalArg, MAX_NESTING, SyntaxError};
use crate::value::Value;

type PResult<T> = std::result::Result<T, SyntaxError>;

/// Representation qualifiers Soufflé allows after a `.decl`.
const QUALIFIERS: &[&str] = &[
    "brie",
    "btree",
    "btree_delete",
    "eqrel",
    "inline",
    "no_inline",
    "magic",
    "no_magic",
    "overridable",
];

/// Names that are functors when followed by `(` in an expression (so a `(` that
/// holds one is arithmetic, not a sub-formula).
const FUNCTORS: &[&str] = &[
    "cat",
    "strlen",
    "substr",
    "ord",
    "to_number",
    "to_unsigned",
    "to_float",
    "to_string",
    "ftoi",
    "utoi",
    "itou",
    "ftou",
    "itof",
    "utof",
    "min",
    "max",
    "abs",
    "bnot",
    "lnot",
];

/// Binary operators written as words.
const OPERATOR_WORDS: &[&str] = &[
    "band", "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor",
];

/// Parse a whole file.
pub(crate) fn parse_module(file: FileId, text: &str) -> (Module, Errors) {
    let mut errors = Errors::default();
    let toks = lex(file, text, &mut errors);
    let mut p = Parser {
        toks,
        pos: 0,
        errors,
        depth: 0,
    };
    let module = p.module();
    (module, p.errors)
}

/// Parse one goal such as `path(1, x)`.
pub(crate) fn parse_goal(file: FileId, text: &str) -> PResult<Goal> {
    let mut errors = Errors::default();
    let toks = lex(file, text, &mut errors);
    if let Some(e) = errors.into_first() {
        return Err(e);
    }
    let mut p = Parser {
        toks,
        pos: 0,
        errors: Errors::default(),
        depth: 0,
    };
    let atom = p.atom()?;
    if p.peek() == &Tok::Dot {
        p.bump();
    }
    if p.peek() != &Tok::Eof {
        return Err(p.unexpected("the end of the goal"));
    }
    let mut args = Vec::with_capacity(atom.args.len());
    let arg_spans = atom.args.iter().map(Expr::span).collect();
    for arg in atom.args {
        args.push(match arg {
            Expr::Var(v) => GoalArg::Var(v.name),
            Expr::Wildcard(_) => GoalArg::Wildcard,
            Expr::Lit(l, span) => GoalArg::Const(lit_value(&l).ok_or_else(|| {
                SyntaxError::new(
                    span,
                    "integer constant does not fit in 64 bits",
                    "use a value between -2^63 and 2^64-1",
                )
            })?),
            other => {
                return Err(SyntaxError::new(
                    other.span(),
                    "a goal argument must be a constant, a variable or `_`",
                    "compute the value first; goals cannot contain arithmetic",
                ));
            }
        });
    }
    Ok(Goal {
        predicate: atom.name.name,
        args,
        arg_spans,
        span: atom.span,
    })
}

/// The natural value of a literal, without a column type to guide it.
fn lit_value(l: &Lit) -> Option<Value> {
    Some(match l {
        Lit::Int(i) => match i64::try_from(*i) {
            Ok(v) => Value::Number(v),
            Err(_) => Value::Unsigned(u64::try_from(*i).ok()?),
        },
        Lit::Unsigned(u) => Value::Unsigned(*u),
        Lit::Float(x) => Value::Float(*x),
        Lit::Str(s) => Value::Symbol(s.clone()),
    })
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    errors: Errors,
    /// Nested sub-parses under way (parentheses, minus signs, sub-formulas,
    /// aggregates), at most [`MAX_NESTING`].
    depth: usize,
}

impl Parser {
    /// Run `f` one nesting level deeper, or fail once [`MAX_NESTING`] levels are open.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_NESTING {
            return Err(self.too_deep(self.span()));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn too_deep(&self, at: Span) -> SyntaxError {
        SyntaxError::new(
            at,
            format!("nested more than {MAX_NESTING} levels deep (the nesting limit)"),
            "split it: compute parts into variables (`y = a + b, z = y + c`) or into \
             relations of their own",
        )
    }

    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }

    fn peek_at(&self, k: usize) -> &Tok {
        let i = (self.pos + k).min(self.toks.len() - 1);
        &self.toks[i].tok
    }

    fn token(&self) -> &Token {
        &self.toks[self.pos]
    }

    fn span(&self) -> Span {
        self.toks[self.pos].span
    }

    /// End of the previous token.
    fn prev_span(&self) -> Span {
        self.toks[self.pos.saturating_sub(1)].span
    }

    /// Step past the current token and return its span.
    fn bump(&mut self) -> Span {
        let span = self.toks[self.pos].span;
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        span
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        if self.peek() == tok {
            self.bump();
            true
        } else {
            false
        }
    }

    fn unexpected(&self, wanted: &str) -> SyntaxError {
        let t = self.token();
        SyntaxError::new(
            t.span,
            format!("expected {wanted}, found {}", t.tok.describe()),
            hint_for(wanted),
        )
    }

    fn expect(&mut self, tok: Tok, wanted: &str) -> PResult<Span> {
        if self.peek() == &tok {
            Ok(self.bump())
        } else {
            Err(self.unexpected(wanted))
        }
    }

    fn ident(&mut self, wanted: &str) -> PResult<Ident> {
        match self.peek() {
            Tok::Ident(name) => {
                let name = name.clone();
                let span = self.bump();
                Ok(Ident { name, span })
            }
            _ => Err(self.unexpected(wanted)),
        }
    }

    /// Whether the current token starts a directive: a `.` glued to a name.
    fn at_directive(&self) -> bool {
        self.peek() == &Tok::Dot
            && matches!(self.peek_at(1), Tok::Ident(_))
            && !self.toks[self.pos + 1].spaced
    }

    fn module(&mut self) -> Module {
        let mut items = Vec::new();
        let mut annotations: Vec<Annotation> = Vec::new();
        while self.peek() != &Tok::Eof {
            let start = self.pos;
            let result = if self.peek() == &Tok::At {
                self.annotation().map(|a| {
                    annotations.push(a);
                    None
                })
            } else if self.at_directive() {
                if let Some(a) = annotations.first() {
                    self.errors.push(SyntaxError::new(
                        a.span,
                        "an annotation must be followed by a rule",
                        "move the annotation to the line just before the rule it describes",
                    ));
                    annotations.clear();
                }
                self.directive()
            } else if self.peek() == &Tok::Hash {
                Err(SyntaxError::new(
                    self.span(),
                    "C preprocessor directives (`#include`, `#define`) are not supported",
                    "pass every rule file on the command line instead of including it",
                ))
            } else {
                self.clause(std::mem::take(&mut annotations))
                    .map(|c| Some(Item::Clause(c)))
            };
            match result {
                Ok(Some(item)) => items.push(item),
                Ok(None) => {}
                Err(e) => {
                    self.errors.push(e);
                    self.recover(start);
                }
            }
        }
        if let Some(a) = annotations.first() {
            self.errors.push(SyntaxError::new(
                a.span,
                "an annotation must be followed by a rule",
                "move the annotation to the line just before the rule it describes",
            ));
        }
        Module { items }
    }

    /// Skip to the start of the next statement after an error in one that began at
    /// token `start`.
    fn recover(&mut self, start: usize) {
        if self.pos == start {
            self.bump();
        }
        let mut depth = 0i32;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        // The end of a skipped `{ … }` block (e.g. `.comp`).
                        self.bump();
                        return;
                    }
                }
                Tok::Dot if depth <= 0 => {
                    if self.at_directive() && self.token().line_start {
                        return;
                    }
                    if !self.at_directive() {
                        self.bump();
                        return;
                    }
                }
                Tok::At | Tok::Hash if depth <= 0 && self.token().line_start => return,
                _ => {}
            }
            self.bump();
        }
    }

    fn annotation(&mut self) -> PResult<Annotation> {
        let at = self.expect(Tok::At, "`@`")?;
        let name = self.ident("an annotation name such as `name` or `confidence`")?;
        self.expect(Tok::LParen, "`(` after the annotation name")?;
        let start = self.span();
        let value = match self.unary()?.0 {
            Expr::Lit(l, _) => l,
            other => {
                return Err(SyntaxError::new(
                    other.span(),
                    format!("the argument of `@{}` must be a constant", name.name),
                    "write e.g. `@name(\"rule_name\")` or `@confidence(0.9)`",
                ));
            }
        };
        let value_span = start.to(self.prev_span());
        let close = self.expect(Tok::RParen, "`)`")?;
        Ok(Annotation {
            name,
            value,
            value_span,
            span: at.to(close),
        })
    }

    fn directive(&mut self) -> PResult<Option<Item>> {
        let dot = self.bump();
        let name = self.ident("a directive name")?;
        let start = dot;
        let item = match name.name.as_str() {
            "decl" => Item::Decl(self.decl(start)?),
            "type" => Item::Type(self.type_def(start)?),
            "number_type" | "symbol_type" => {
                let t = self.ident("a type name")?;
                let base = if name.name == "number_type" {
                    "number"
                } else {
                    "symbol"
                };
                Item::Type(TypeDef {
                    span: start.to(t.span),
                    name: t,
                    kind: TypeDefKind::Subtype,
                    bases: vec![Ident {
                        name: base.into(),
                        span: name.span,
                    }],
                })
            }
            "input" => Item::Io(self.io(start, IoKind::Input)?),
            "output" => Item::Io(self.io(start, IoKind::Output)?),
            "printsize" => Item::Io(self.io(start, IoKind::PrintSize)?),
            "text" => {
                let relation = self.ident("a relation name after `.text`")?;
                let (template, template_span) = match self.peek() {
                    Tok::Str(s) => {
                        let s = s.clone();
                        (s, self.bump())
                    }
                    _ => return Err(self.unexpected("a template string after the relation")),
                };
                Item::Text(TextDirective {
                    relation,
                    template,
                    template_span,
                    span: start.to(template_span),
                })
            }
            "functional" => {
                let relation = self.ident("a relation name after `.functional`")?;
                self.expect(Tok::LParen, "`(` and the key columns")?;
                let mut keys = Vec::new();
                loop {
                    match self.peek().clone() {
                        Tok::Int(n) => keys.push(KeyColumn::Index(n, self.bump())),
                        Tok::Ident(_) => keys.push(KeyColumn::Name(self.ident("a column")?)),
                        _ => return Err(self.unexpected("a column index or name")),
                    }
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                let close = self.expect(Tok::RParen, "`)` or `,`")?;
                Item::Functional(FunctionalDirective {
                    relation,
                    keys,
                    span: start.to(close),
                })
            }
            "pragma" => {
                let mut args = Vec::new();
                let mut end = name.span;
                while let Tok::Str(s) = self.peek() {
                    args.push(s.clone());
                    end = self.bump();
                }
                Item::Pragma(Pragma {
                    args,
                    span: start.to(end),
                })
            }
            other => {
                let what = match other {
                    "comp" | "init" => "components (`.comp`, `.init`) are not supported",
                    "functor" => "user-defined functors (`.functor`) are not supported",
                    "plan" => {
                        "query plans (`.plan`) are not supported: prooflog orders joins itself"
                    }
                    "limitsize" => "`.limitsize` is not supported",
                    "override" => "`.override` (component inheritance) is not supported",
                    _ => "",
                };
                let span = start.to(name.span);
                let help = "supported directives: .decl .type .input .output .printsize .text \
                     .functional .pragma";
                if !what.is_empty() {
                    return Err(SyntaxError::unsupported(span, what, help));
                }
                return Err(SyntaxError::new(
                    span,
                    format!("directive `.{other}` is not supported"),
                    help,
                ));
            }
        };
        Ok(Some(item))
    }

    fn decl(&mut self, start: Span) -> PResult<Decl> {
        let name = self.ident("a relation name after `.decl`")?;
        self.expect(Tok::LParen, "`(` and the column list")?;
        let mut columns = Vec::new();
        if self.peek() != &Tok::RParen {
            loop {
                let col = self.ident("a column name")?;
                self.expect(Tok::Colon, "`:` and a type after the column name")?;
                let ty = self.ident("a type (number, unsigned, float, symbol)")?;
                columns.push((col, ty));
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        let mut end = self.expect(Tok::RParen, "`)` or `,`")?;
        let mut qualifiers = Vec::new();
        while let Tok::Ident(q) = self.peek() {
            if q == "choice" {
                return Err(SyntaxError::unsupported(
                    self.span(),
                    "`choice-domain` relations are not supported",
                    "remove the choice-domain and select one fact per key in the rules",
                ));
            }
            if !QUALIFIERS.contains(&q.as_str()) {
                break;
            }
            let q = self.ident("a qualifier")?;
            end = q.span;
            qualifiers.push(q);
        }
        Ok(Decl {
            name,
            columns,
            qualifiers,
            span: start.to(end),
        })
    }

    fn type_def(&mut self, start: Span) -> PResult<TypeDef> {
        let name = self.ident("a type name after `.type`")?;
        let kind = match self.peek() {
            Tok::Subtype => TypeDefKind::Subtype,
            Tok::Eq => TypeDefKind::Equal,
            _ => return Err(self.unexpected("`<:` or `=`")),
        };
        self.bump();
        if matches!(self.peek(), Tok::LBracket) {
            return Err(SyntaxError::unsupported(
                self.span(),
                "record types are not supported",
                "use a primitive type: number, unsigned, float or symbol",
            ));
        }
        let adt = |p: &Parser| {
            SyntaxError::unsupported(
                p.span(),
                "algebraic data types (`.type T = A {…} | B {…}`) are not supported",
                "use a primitive type: number, unsigned, float or symbol",
            )
        };
        if matches!(self.peek(), Tok::LBrace) {
            return Err(adt(self));
        }
        let mut bases = vec![self.ident("a type name")?];
        if self.peek() == &Tok::LBrace {
            return Err(adt(self));
        }
        if kind == TypeDefKind::Equal {
            while self.eat(&Tok::Pipe) {
                bases.push(self.ident("a type name after `|`")?);
                if self.peek() == &Tok::LBrace {
                    return Err(adt(self));
                }
            }
        }
        let end = self.prev_span();
        Ok(TypeDef {
            name,
            kind,
            bases,
            span: start.to(end),
        })
    }

    fn io(&mut self, start: Span, kind: IoKind) -> PResult<IoDirective> {
        let mut relations = vec![self.ident("a relation name")?];
        while self.eat(&Tok::Comma) {
            relations.push(self.ident("a relation name after `,`")?);
        }
        let mut options = Vec::new();
        if self.eat(&Tok::LParen) {
            if self.peek() != &Tok::RParen {
                loop {
                    let key = self.ident("an option name such as `filename`")?;
                    self.expect(Tok::Eq, "`=` after the option name")?;
                    let value = match self.peek().clone() {
                        Tok::Str(s) => s,
                        Tok::Ident(s) => s,
                        Tok::Int(n) => n.to_string(),
                        Tok::Float(x) => x.to_string(),
                        _ => return Err(self.unexpected("an option value")),
                    };
                    self.bump();
                    options.push((key, value));
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
            }
            self.expect(Tok::RParen, "`)` or `,`")?;
        }
        Ok(IoDirective {
            kind,
            relations,
            options,
            span: start.to(self.prev_span()),
        })
    }

    fn clause(&mut self, annotations: Vec<Annotation>) -> PResult<Clause> {
        let start = self.span();
        let mut heads = vec![self.atom()?];
        while self.eat(&Tok::Comma) {
            heads.push(self.atom()?);
        }
        let mut body = Vec::new();
        if self.peek() == &Tok::Le {
            return Err(SyntaxError::unsupported(
                self.span(),
                "subsumptive rules (`head <= head :- …`) are not supported",
                "compute the dominated facts into a relation and negate it",
            ));
        }
        if self.eat(&Tok::If) {
            body.push(self.conjunction()?);
            while self.eat(&Tok::Semi) {
                body.push(self.conjunction()?);
            }
        }
        if self.peek() != &Tok::Dot {
            let wanted = if body.is_empty() {
                "`.`, `,` or `:-` after the head"
            } else {
                "`,`, `;` or `.` after the body literal"
            };
            return Err(self.unexpected(wanted));
        }
        let end = self.bump();
        Ok(Clause {
            annotations,
            heads,
            body,
            span: start.to(end),
        })
    }

    fn conjunction(&mut self) -> PResult<Vec<Literal>> {
        let mut lits = vec![self.literal()?];
        while self.eat(&Tok::Comma) {
            lits.push(self.literal()?);
        }
        Ok(lits)
    }

    fn atom(&mut self) -> PResult<Atom> {
        let name = self.ident("a relation name")?;
        if self.peek() != &Tok::LParen {
            return Err(SyntaxError::new(
                self.span(),
                format!(
                    "expected `(` after relation name `{}`, found {}",
                    name.name,
                    self.peek().describe()
                ),
                format!(
                    "a nullary relation is written `{}()`; a relation takes its arguments in parentheses",
                    name.name
                ),
            ));
        }
        self.bump();
        let mut args = Vec::new();
        if self.peek() != &Tok::RParen {
            loop {
                args.push(self.expr()?);
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        let close = self.expect(Tok::RParen, "`,` or `)` in the argument list")?;
        Ok(Atom {
            span: name.span.to(close),
            name,
            args,
        })
    }

    /// (Nested sub-formulas recurse through here: the frame is kept small, the
    /// other literals are parsed by [`Self::simple_literal`].)
    fn literal(&mut self) -> PResult<Literal> {
        if self.peek() == &Tok::LParen && self.looks_like_nested_formula() {
            return self.sub_formula();
        }
        self.simple_literal()
    }

    /// `( conj ; … )`.
    fn sub_formula(&mut self) -> PResult<Literal> {
        let start = self.bump();
        let alts = self.nested(|p| {
            let mut alts = vec![p.conjunction()?];
            while p.eat(&Tok::Semi) {
                alts.push(p.conjunction()?);
            }
            Ok(alts)
        })?;
        let close = self.expect(Tok::RParen, "`,`, `;` or `)` in the sub-formula")?;
        Ok(Literal::Disjunction(alts, start.to(close)))
    }

    fn simple_literal(&mut self) -> PResult<Literal> {
        let start = self.span();
        match self.peek() {
            Tok::Bang => {
                self.bump();
                if let Some(test) = self.test(true, start)? {
                    return Ok(test);
                }
                let atom = self.atom()?;
                let span = start.to(atom.span);
                return Ok(Literal::Negated(atom, span));
            }
            Tok::Ident(w)
                if w == "not"
                    && matches!(self.peek_at(1), Tok::Ident(_))
                    && self.peek_at(2) == &Tok::LParen =>
            {
                self.bump();
                if let Some(test) = self.test(true, start)? {
                    return Ok(test);
                }
                let atom = self.atom()?;
                let span = start.to(atom.span);
                return Ok(Literal::Negated(atom, span));
            }
            Tok::Ident(_) if self.test_ahead() => {
                if let Some(test) = self.test(false, start)? {
                    return Ok(test);
                }
            }
            Tok::Ident(w) if self.peek_at(1) == &Tok::LParen && !FUNCTORS.contains(&w.as_str()) => {
                return Ok(Literal::Atom(self.atom()?));
            }
            _ => {}
        }
        let left = self.expr()?;
        let op = match self.peek() {
            Tok::Eq => CmpOp::Eq,
            Tok::Ne => CmpOp::Ne,
            Tok::Lt => CmpOp::Lt,
            Tok::Le => CmpOp::Le,
            Tok::Gt => CmpOp::Gt,
            Tok::Ge => CmpOp::Ge,
            _ => {
                if let Expr::Var(v) = &left {
                    return Err(SyntaxError::new(
                        self.span(),
                        format!(
                            "expected `(` or a comparison after `{}`, found {}",
                            v.name,
                            self.peek().describe()
                        ),
                        format!(
                            "a relation takes its arguments in parentheses (a nullary one is \
                             written `{}()`); a comparison needs one of = != < <= > >=",
                            v.name
                        ),
                    ));
                }
                return Err(self.unexpected("a comparison operator (= != < <= > >=)"));
            }
        };
        self.bump();
        if op == CmpOp::Eq
            && let Expr::Var(result) = &left
            && let Some(func) = self.aggregate_ahead()
        {
            return self.aggregate(result.clone(), func, start);
        }
        let right = self.expr()?;
        Ok(Literal::Compare {
            op,
            span: start.to(right.span()),
            left,
            right,
        })
    }

    /// Whether a built-in test starts here: `match(`, `contains(`, or `true`/`false`
    /// standing alone as a literal.
    fn test_ahead(&self) -> bool {
        match self.peek() {
            Tok::Ident(w) if w == "match" || w == "contains" => self.peek_at(1) == &Tok::LParen,
            Tok::Ident(w) if w == "true" || w == "false" => matches!(
                self.peek_at(1),
                Tok::Comma | Tok::Dot | Tok::Semi | Tok::RParen | Tok::RBrace
            ),
            _ => false,
        }
    }

    /// A built-in test at the cursor, if one starts here.
    fn test(&mut self, negated: bool, start: Span) -> PResult<Option<Literal>> {
        if !self.test_ahead() {
            return Ok(None);
        }
        let name = self.ident("a test")?;
        let mut args = Vec::new();
        if matches!(name.name.as_str(), "match" | "contains") {
            self.expect(Tok::LParen, "`(`")?;
            if self.peek() != &Tok::RParen {
                loop {
                    args.push(self.expr()?);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
            }
            self.expect(Tok::RParen, "`,` or `)` in the argument list")?;
        }
        Ok(Some(Literal::Test {
            name,
            args,
            negated,
            span: start.to(self.prev_span()),
        }))
    }

    /// `(` whose parentheses hold a formula rather than an arithmetic expression:
    /// something no expression contains (`;`, `,`, `!`, a comparison, an atom).
    fn looks_like_nested_formula(&self) -> bool {
        let mut depth = 0usize;
        // Inside a functor's argument list (its depth), where commas are arguments.
        let mut call_depth: Option<usize> = None;
        for (k, t) in self.toks[self.pos..].iter().enumerate() {
            match t.tok {
                Tok::LParen => depth += 1,
                Tok::RParen => {
                    if call_depth == Some(depth) {
                        call_depth = None;
                    }
                    depth -= 1;
                    if depth == 0 {
                        return false;
                    }
                }
                _ if call_depth.is_some() => {}
                Tok::Semi
                | Tok::Bang
                | Tok::Comma
                | Tok::Eq
                | Tok::Ne
                | Tok::Lt
                | Tok::Le
                | Tok::Gt
                | Tok::Ge => return true,
                Tok::Ident(ref w) if self.peek_at(k + 1) == &Tok::LParen => {
                    if OPERATOR_WORDS.contains(&w.as_str()) {
                        continue;
                    }
                    if !FUNCTORS.contains(&w.as_str()) {
                        return true;
                    }
                    call_depth = Some(depth + 1);
                }
                Tok::Dot | Tok::Eof => return false,
                _ => {}
            }
        }
        false
    }

    /// If the tokens ahead begin an aggregate (`count :`, `sum e :`), its function.
    fn aggregate_ahead(&self) -> Option<AggFunc> {
        let Tok::Ident(w) = self.peek() else {
            return None;
        };
        let next = self.peek_at(1);
        match w.as_str() {
            "count" if next == &Tok::Colon => Some(AggFunc::Count),
            // `min(a, b)` is a functor unless the target it starts ends with `:`.
            "min" | "max" if next == &Tok::LParen && !self.colon_after_parens(1) => None,
            "sum" | "min" | "max" | "mean"
                if matches!(
                    next,
                    Tok::Ident(_)
                        | Tok::Int(_)
                        | Tok::Unsigned(_)
                        | Tok::Float(_)
                        | Tok::Str(_)
                        | Tok::LParen
                        | Tok::Underscore
                ) =>
            {
                match w.as_str() {
                    "sum" => Some(AggFunc::Sum),
                    "min" => Some(AggFunc::Min),
                    "max" => Some(AggFunc::Max),
                    _ => Some(AggFunc::Mean),
                }
            }
            _ => None,
        }
    }

    /// Whether the expression starting `k` tokens ahead is followed by `:` (the
    /// target of an aggregate) rather than ending the literal.
    fn colon_after_parens(&self, k: usize) -> bool {
        let mut depth = 0usize;
        for t in &self.toks[(self.pos + k).min(self.toks.len())..] {
            match t.tok {
                Tok::LParen => depth += 1,
                Tok::RParen if depth == 0 => return false,
                Tok::RParen => depth -= 1,
                Tok::Colon if depth == 0 => return true,
                Tok::Comma | Tok::Semi | Tok::RBrace | Tok::LBrace if depth == 0 => return false,
                Tok::Dot | Tok::Eof => return false,
                _ => {}
            }
        }
        false
    }

    fn aggregate(&mut self, result: Ident, func: AggFunc, start: Span) -> PResult<Literal> {
        let _kw = self.ident("an aggregate")?;
        let target = if func == AggFunc::Count {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect(Tok::Colon, "`:` before the aggregate's body")?;
        let body = if self.eat(&Tok::LBrace) {
            let body = self.nested(|p| p.conjunction())?;
            self.expect(Tok::RBrace, "`,` or `}` in the aggregate body")?;
            body
        } else {
            vec![Literal::Atom(self.atom()?)]
        };
        Ok(Literal::Aggregate(Aggregate {
            result,
            func,
            target,
            body,
            span: start.to(self.prev_span()),
        }))
    }

    fn expr(&mut self) -> PResult<Expr> {
        Ok(self.binary(1)?.0)
    }

    /// The binary operator at the cursor, if any.
    fn binary_op(&self) -> Option<ArithOp> {
        Some(match self.peek() {
            Tok::Plus => ArithOp::Add,
            Tok::Minus => ArithOp::Sub,
            Tok::Star => ArithOp::Mul,
            Tok::Slash => ArithOp::Div,
            Tok::Percent => ArithOp::Rem,
            Tok::Caret => ArithOp::Pow,
            Tok::Ident(w) => match w.as_str() {
                "band" => ArithOp::BAnd,
                "bor" => ArithOp::BOr,
                "bxor" => ArithOp::BXor,
                "bshl" => ArithOp::Shl,
                "bshr" => ArithOp::Shr,
                "bshru" => ArithOp::ShrU,
                "land" => ArithOp::LAnd,
                "lor" => ArithOp::LOr,
                "lxor" => ArithOp::LXor,
                _ => return None,
            },
            _ => return None,
        })
    }

    /// An expression and the depth of its tree (0 for a leaf), which stays within
    /// [`MAX_NESTING`] even where parsing it does not recurse (`a + b + c + …`).
    fn binary(&mut self, min_prec: u8) -> PResult<(Expr, usize)> {
        let (mut left, mut depth) = self.unary()?;
        loop {
            let Some(op) = self.binary_op() else {
                return Ok((left, depth));
            };
            let prec = precedence(op);
            if prec < min_prec {
                return Ok((left, depth));
            }
            let at = self.bump();
            // `^` groups to the right.
            let next = if op == ArithOp::Pow { prec } else { prec + 1 };
            let (right, right_depth) = self.nested(|p| p.binary(next))?;
            depth = depth.max(right_depth) + 1;
            if depth > MAX_NESTING {
                return Err(self.too_deep(at));
            }
            left = Expr::Binary {
                op,
                span: left.span().to(right.span()),
                left: Box::new(left),
                right: Box::new(right),
            };
        }
    }

    fn unary(&mut self) -> PResult<(Expr, usize)> {
        if let Tok::Ident(w) = self.peek()
            && (w == "bnot" || w == "lnot")
            && self.peek_at(1) != &Tok::LParen
        {
            let name = self.ident("an operator")?;
            let (e, depth) = self.nested(|p| p.unary())?;
            if depth + 1 > MAX_NESTING {
                return Err(self.too_deep(name.span));
            }
            let span = name.span.to(e.span());
            return Ok((
                Expr::Call {
                    name,
                    args: vec![e],
                    span,
                },
                depth + 1,
            ));
        }
        if self.peek() != &Tok::Minus {
            return self.primary();
        }
        let minus = self.bump();
        let glued = !self.token().spaced;
        match self.peek().clone() {
            Tok::Int(n) if glued => {
                let end = self.bump();
                Ok((Expr::Lit(Lit::Int(-(n as i128)), minus.to(end)), 0))
            }
            Tok::Float(x) if glued => {
                let end = self.bump();
                Ok((Expr::Lit(Lit::Float(-x), minus.to(end)), 0))
            }
            _ => {
                let (e, depth) = self.nested(|p| p.unary())?;
                if depth + 1 > MAX_NESTING {
                    return Err(self.too_deep(minus));
                }
                let span = minus.to(e.span());
                Ok((Expr::Neg(Box::new(e), span), depth + 1))
            }
        }
    }

    /// (Parenthesised expressions and functor calls recurse through here: the frame
    /// is kept small, the other primaries are parsed by [`Self::leaf`].)
    fn primary(&mut self) -> PResult<(Expr, usize)> {
        if self.peek() == &Tok::LParen {
            self.bump();
            let e = self.nested(|p| p.binary(1))?;
            self.expect(Tok::RParen, "`)`")?;
            return Ok(e);
        }
        if matches!(self.peek(), Tok::Ident(_)) && self.peek_at(1) == &Tok::LParen {
            let name = self.ident("a functor")?;
            self.bump();
            let mut args = Vec::new();
            let mut depth = 0;
            if self.peek() != &Tok::RParen {
                loop {
                    let (arg, arg_depth) = self.nested(|p| p.binary(1))?;
                    depth = depth.max(arg_depth + 1);
                    args.push(arg);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
            }
            if depth > MAX_NESTING {
                return Err(self.too_deep(name.span));
            }
            let close = self.expect(Tok::RParen, "`,` or `)` in the argument list")?;
            return Ok((
                Expr::Call {
                    span: name.span.to(close),
                    name,
                    args,
                },
                depth,
            ));
        }
        Ok((self.leaf()?, 0))
    }

    /// A variable, `_` or a constant.
    fn leaf(&mut self) -> PResult<Expr> {
        let span = self.span();
        let e = match self.peek().clone() {
            Tok::Ident(name) => {
                if name == "nil" {
                    return Err(SyntaxError::unsupported(
                        span,
                        "records (`nil`, `[a, b]`) are not supported",
                        "store the fields in a relation of their own, keyed by an id",
                    ));
                }
                if matches!(name.as_str(), "count" | "sum" | "min" | "max" | "mean")
                    && (self.peek_at(1) == &Tok::Colon || self.aggregate_ahead().is_some())
                {
                    return Err(SyntaxError::new(
                        span,
                        "an aggregate must be assigned to a variable",
                        format!("write it as its own literal: `n = {name} … : {{ … }}`"),
                    ));
                }
                Expr::Var(Ident { name, span })
            }
            Tok::Underscore => Expr::Wildcard(span),
            Tok::Int(n) => Expr::Lit(Lit::Int(n as i128), span),
            Tok::Unsigned(n) => Expr::Lit(Lit::Unsigned(n), span),
            Tok::Float(x) => Expr::Lit(Lit::Float(x), span),
            Tok::Str(s) => Expr::Lit(Lit::Str(s), span),
            Tok::LBracket => {
                return Err(SyntaxError::unsupported(
                    span,
                    "records (`[a, b]`) are not supported",
                    "store the fields in a relation of their own, keyed by an id",
                ));
            }
            Tok::Dollar => {
                return Err(SyntaxError::unsupported(
                    span,
                    "`$` (algebraic data type branches, `$` counters) is not supported",
                    "number facts in the input data instead",
                ));
            }
            Tok::At => {
                return Err(SyntaxError::unsupported(
                    span,
                    "user-defined functors (`@f(…)`) are not supported",
                    "use a built-in functor (cat, strlen, substr, to_number, …) or compute the \
                     value in the input data",
                ));
            }
            _ => return Err(self.unexpected("a variable, a constant or `(`")),
        };
        self.bump();
        Ok(e)
    }
}

/// Extra advice for the most common ways to go wrong.
fn hint_for(wanted: &str) -> String {
    if wanted.contains("after the body literal") {
        "end every rule with `.`; separate body literals with `,`".into()
    } else if wanted.contains("after the head") {
        "end a fact with `.`, or write `:-` and a body to make it a rule".into()
    } else {
        format!("write {wanted} here")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(text: &str) -> (Vec<Item>, Vec<SyntaxError>) {
        let (m, errs) = parse_module(0, text);
        (m.items, errs.iter().cloned().collect())
    }

    #[test]
    fn a_dot_glued_to_a_name_starts_a_directive_only_at_statement_start() {
        let (its, errs) = items("e(1).\n.output e\nf(2).e(3).");
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(its.len(), 4);
        assert!(matches!(its[1], Item::Io(_)));
    }

    #[test]
    fn recovery_resumes_at_the_next_statement() {
        let (its, errs) = items("p(x) :- q(x) r(x).\n.decl a(x: number)\nq(1).\n");
        assert_eq!(errs.len(), 1);
        assert_eq!(its.len(), 2);
        // An error inside a directive resumes at the next line's directive.
        let (its, errs) = items(".decl a(x number)\n.decl b(y: number)\n");
        assert_eq!(errs.len(), 1);
        assert!(matches!(&its[0], Item::Decl(d) if d.name.name == "b"));
    }

    #[test]
    fn braces_of_unsupported_blocks_are_skipped() {
        let (its, errs) = items(".comp C {\n  r(x) :- s(x).\n}\nok().\n");
        assert_eq!(errs.len(), 1);
        assert!(errs[0].message.contains("`.comp`"));
        assert_eq!(its.len(), 1);
    }

    #[test]
    fn count_is_a_variable_unless_an_aggregate_follows() {
        let (its, errs) = items("p(count) :- q(count), x = count + 1.");
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(its.len(), 1);
    }

    #[test]
    fn goal_rejects_trailing_tokens() {
        assert!(parse_goal(0, "p(1).").is_ok());
        let e = parse_goal(0, "p(1) p(2)").unwrap_err();
        assert!(e.message.contains("end of the goal"));
    }
}
