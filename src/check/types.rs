//! Column and variable type inference by unification.
//!
//! Every relation column, rule variable, constant and arithmetic result is a *slot*;
//! a use that forces two slots to agree unites them (union-find). A class knows the
//! most specific [`Kind`] any of its members was given and which member gave it, so a
//! conflict can say both sides ("`x` is a symbol, but column `src` of `edge` is a
//! number"). Classes nothing constrains take input-data hints, then default to
//! `number` (if numeric) or `symbol`.

use crate::ir::{AggFunc, RelId};
use crate::syntax::ast::Lit;
use crate::value::ColumnType;

/// A type slot.
pub(crate) type Slot = u32;

/// What is known about a class of slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Nothing yet.
    Any,
    /// Some numeric type (an integer literal, an arithmetic result).
    Numeric,
    /// Exactly this type.
    Exact(ColumnType),
}

impl Kind {
    /// The kind of a literal.
    pub(crate) fn of_lit(l: &Lit) -> Kind {
        match l {
            Lit::Int(_) => Kind::Numeric,
            Lit::Unsigned(_) => Kind::Exact(ColumnType::Unsigned),
            Lit::Float(_) => Kind::Exact(ColumnType::Float),
            Lit::Str(_) => Kind::Exact(ColumnType::Symbol),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Kind::Any => "untyped",
            Kind::Numeric => "numeric",
            Kind::Exact(ColumnType::Number) => "a number",
            Kind::Exact(ColumnType::Unsigned) => "an unsigned",
            Kind::Exact(ColumnType::Float) => "a float",
            Kind::Exact(ColumnType::Symbol) => "a symbol",
        }
    }

    /// The most specific kind satisfying both, if any.
    fn meet(self, other: Kind) -> Option<Kind> {
        match (self, other) {
            (Kind::Any, k) | (k, Kind::Any) => Some(k),
            (Kind::Numeric, Kind::Numeric) => Some(Kind::Numeric),
            (Kind::Numeric, Kind::Exact(t)) | (Kind::Exact(t), Kind::Numeric) => {
                (t != ColumnType::Symbol).then_some(Kind::Exact(t))
            }
            (Kind::Exact(a), Kind::Exact(b)) => (a == b).then_some(Kind::Exact(a)),
        }
    }

    fn rank(self) -> u8 {
        match self {
            Kind::Any => 0,
            Kind::Numeric => 1,
            Kind::Exact(_) => 2,
        }
    }
}

/// What a slot stands for, to name it in a message.
#[derive(Debug, Clone)]
pub(crate) enum Origin {
    /// Column `col` of relation `rel`.
    Column(RelId, u32),
    /// A rule variable.
    Var(String),
    /// A constant.
    Const(Lit),
    /// An arithmetic expression.
    Arith,
    /// The result of an aggregate.
    Aggregate(AggFunc),
    /// An argument or the result of a functor or test.
    Functor(&'static str),
}

/// One side of a [`Conflict`].
#[derive(Debug, Clone)]
pub(crate) struct Side {
    /// The slot that was being unified.
    pub origin: Origin,
    /// The member of its class whose constraint fixed the class's kind, when that is
    /// another slot.
    pub because: Option<Origin>,
    /// The class's kind, in words ("a number").
    pub kind: &'static str,
}

/// Two classes that cannot be united: what each is and why.
#[derive(Debug, Clone)]
pub(crate) struct Conflict {
    /// The first slot's side.
    pub left: Side,
    /// The second slot's side.
    pub right: Side,
}

/// The union-find of type slots.
#[derive(Debug, Default)]
pub(crate) struct Types {
    parent: Vec<Slot>,
    size: Vec<u32>,
    kind: Vec<Kind>,
    /// For a root: the member whose constraint made `kind` what it is.
    why: Vec<Slot>,
    origin: Vec<Origin>,
}

impl Types {
    /// A new slot of the given kind.
    pub(crate) fn slot(&mut self, kind: Kind, origin: Origin) -> Slot {
        let s = self.parent.len() as Slot;
        self.parent.push(s);
        self.size.push(1);
        self.kind.push(kind);
        self.why.push(s);
        self.origin.push(origin);
        s
    }

    fn find(&mut self, mut s: Slot) -> Slot {
        let mut root = s;
        while self.parent[root as usize] != root {
            root = self.parent[root as usize];
        }
        while self.parent[s as usize] != root {
            let next = self.parent[s as usize];
            self.parent[s as usize] = root;
            s = next;
        }
        root
    }

    /// The current kind of a slot's class.
    pub(crate) fn kind(&mut self, s: Slot) -> Kind {
        let r = self.find(s);
        self.kind[r as usize]
    }

    /// Require `a` and `b` to have the same type.
    pub(crate) fn unify(&mut self, a: Slot, b: Slot) -> Result<(), Box<Conflict>> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return Ok(());
        }
        let (ka, kb) = (self.kind[ra as usize], self.kind[rb as usize]);
        let Some(k) = ka.meet(kb) else {
            return Err(Box::new(Conflict {
                left: self.side(a, ra),
                right: self.side(b, rb),
            }));
        };
        let why = if ka.rank() >= kb.rank() {
            self.why[ra as usize]
        } else {
            self.why[rb as usize]
        };
        let (big, small) = if self.size[ra as usize] >= self.size[rb as usize] {
            (ra, rb)
        } else {
            (rb, ra)
        };
        self.parent[small as usize] = big;
        self.size[big as usize] += self.size[small as usize];
        self.kind[big as usize] = k;
        self.why[big as usize] = why;
        Ok(())
    }

    fn side(&self, slot: Slot, root: Slot) -> Side {
        let why = self.why[root as usize];
        Side {
            origin: self.origin[slot as usize].clone(),
            because: (why != slot).then(|| self.origin[why as usize].clone()),
            kind: self.kind[root as usize].describe(),
        }
    }

    /// Give a class nothing determines a type from input data (ignored when the
    /// class is already exact or the hint does not fit).
    pub(crate) fn hint(&mut self, s: Slot, t: ColumnType) {
        let r = self.find(s);
        let k = self.kind[r as usize];
        let fits = match k {
            Kind::Any => true,
            Kind::Numeric => t != ColumnType::Symbol,
            Kind::Exact(_) => false,
        };
        if fits {
            self.kind[r as usize] = Kind::Exact(t);
            self.why[r as usize] = s;
        }
    }

    /// The final type of a slot: exact, else `number` for numeric, else `symbol`.
    pub(crate) fn resolve(&mut self, s: Slot) -> ColumnType {
        match self.kind(s) {
            Kind::Exact(t) => t,
            Kind::Numeric => ColumnType::Number,
            Kind::Any => ColumnType::Symbol,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_meets_exact_and_conflicts_with_symbol() {
        let mut t = Types::default();
        let a = t.slot(Kind::Numeric, Origin::Arith);
        let b = t.slot(Kind::Any, Origin::Var("x".into()));
        let c = t.slot(Kind::Exact(ColumnType::Float), Origin::Column(0, 0));
        t.unify(a, b).unwrap();
        t.unify(b, c).unwrap();
        assert_eq!(t.resolve(a), ColumnType::Float);
        let s = t.slot(
            Kind::Exact(ColumnType::Symbol),
            Origin::Const(Lit::Str("q".into())),
        );
        let err = t.unify(s, a).unwrap_err();
        assert_eq!(err.left.kind, "a symbol");
        assert!(err.left.because.is_none());
        assert!(matches!(err.right.origin, Origin::Arith));
        assert!(matches!(err.right.because, Some(Origin::Column(0, 0))));
    }

    #[test]
    fn defaults_and_hints() {
        let mut t = Types::default();
        let a = t.slot(Kind::Any, Origin::Arith);
        let n = t.slot(Kind::Numeric, Origin::Arith);
        let h = t.slot(Kind::Numeric, Origin::Arith);
        t.hint(h, ColumnType::Unsigned);
        t.hint(n, ColumnType::Symbol);
        assert_eq!(t.resolve(a), ColumnType::Symbol);
        assert_eq!(t.resolve(n), ColumnType::Number);
        assert_eq!(t.resolve(h), ColumnType::Unsigned);
    }
}
