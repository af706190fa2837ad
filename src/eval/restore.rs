//! Premises a derivation need not store.
//!
//! A derivation's premise facts are found by cells: each is the one row of its
//! relation holding them. When a premise's cells all follow from the head fact's
//! cells and the other stored premises' cells (every argument a constant or a
//! variable those bind), storing its row adds nothing: a proof finds it again by a
//! look-up. So a rule records only a smallest set of its premises from which the
//! rest follow (`kept`), and [`Restore`] rebuilds the whole list, in body order,
//! from the recorded ones and the head's row. The derivation read back is the one
//! recorded, premise for premise.
//!
//! On the closure `path(x, z) :- edge(x, y), path(y, z)` the head binds `x` and
//! `z`, the stored edge row binds `y`, and the path premise `path(y, z)` follows:
//! one row a derivation instead of two, which then fits a 4-byte derivation word
//! (see `relation.rs`). The premises of a rule with an aggregate are all stored.

use crate::eval::FactId;
use crate::eval::plan::encode;
use smallvec::{SmallVec, smallvec};

use crate::eval::relation::{Premises, Relation};
use crate::eval::symbols::Symbols;
use crate::ir::{Expr, Literal, Program, RelId, Rule, Term, VarId};

/// Rules of more premises than this choose their kept premises greedily rather
/// than by trying every set in order of size.
const EXACT_UP_TO: usize = 12;

/// How one premise (a positive body atom) of a rule is found when a derivation is
/// read.
#[derive(Debug, Clone)]
enum Found {
    /// Recorded: the next recorded premise; its cells bind these variables, by
    /// column.
    Kept { binds: Vec<(usize, VarId)> },
    /// Not recorded: the row of `rel` holding these cells.
    Implied { rel: RelId, cells: Vec<Arg> },
}

/// A cell of an implied premise.
#[derive(Debug, Clone, Copy)]
enum Arg {
    Var(VarId),
    Const(u64),
    /// A constant no cell of its column can hold: the premise is never a fact.
    Never,
}

/// How a rule's derivations, recorded with only some of their premises, are read
/// back whole.
#[derive(Debug, Clone)]
pub(crate) struct Restore {
    /// Per premise, in body order.
    premises: Vec<Found>,
    /// Variables bound by the head's cells: (column, variable).
    head: Vec<(usize, VarId)>,
    vars: usize,
}

/// A rule's positive body atoms (its premises; none inside aggregates), in body
/// order.
fn premise_atoms(rule: &Rule) -> Vec<&crate::ir::Atom> {
    rule.body
        .iter()
        .filter_map(|l| match l {
            Literal::Atom(a) => Some(a),
            _ => None,
        })
        .collect()
}

/// Variables the head's cells give back: those a head column holds as they are
/// (a plain variable in a column of its own type).
fn head_binds(rule: &Rule, program: &Program) -> Vec<(usize, VarId)> {
    let cols = &program.relation(rule.head.rel).columns;
    rule.head
        .args
        .iter()
        .zip(cols)
        .enumerate()
        .filter_map(|(c, (e, col))| match *e {
            Expr::Var(v) if rule.vars[v as usize].ty == col.ty => Some((c, v)),
            _ => None,
        })
        .collect()
}

/// Whether an atom's cells and its variables' values are the same words: each
/// variable argument sits in a column of the variable's own type.
fn plain(rule: &Rule, program: &Program, atom: &crate::ir::Atom) -> bool {
    let cols = &program.relation(atom.rel).columns;
    atom.args.iter().zip(cols).all(|(t, col)| match *t {
        Term::Var(v) => rule.vars[v as usize].ty == col.ty,
        _ => true,
    })
}

/// Which of a rule's premises its derivations record: `None` when every one must
/// be (a rule with an aggregate, or one no premise of which follows from the
/// others), else per premise in body order whether it is recorded. The set is a
/// smallest one from which the others follow, the first in order of premises
/// among those of its size. Depends on the rule and the program only, so that the
/// plans recording derivations and the plan reading them agree.
pub(crate) fn kept(rule: &Rule, program: &Program) -> Option<Vec<bool>> {
    if !enabled()
        || rule
            .body
            .iter()
            .any(|l| matches!(l, Literal::Aggregate { .. }))
    {
        return None;
    }
    let atoms = premise_atoms(rule);
    let n = atoms.len();
    if n == 0 {
        return None;
    }
    let usable: Vec<bool> = atoms.iter().map(|a| plain(rule, program, a)).collect();
    let mut head = vec![false; rule.vars.len()];
    for (_, v) in head_binds(rule, program) {
        head[v as usize] = true;
    }
    // Whether every premise outside `keep` follows from the head and `keep`.
    let follows = |keep: &[bool]| {
        let mut bound = head.clone();
        for (i, a) in atoms.iter().enumerate() {
            if keep[i] && usable[i] {
                for t in &a.args {
                    if let Term::Var(v) = *t {
                        bound[v as usize] = true;
                    }
                }
            }
        }
        atoms.iter().enumerate().all(|(i, a)| {
            keep[i]
                || usable[i]
                    && a.args.iter().all(|t| match *t {
                        Term::Var(v) => bound[v as usize],
                        Term::Const(_) => true,
                        Term::Wildcard => false,
                    })
        })
    };
    let keep = if n <= EXACT_UP_TO {
        smallest(n, &follows)
    } else {
        greedy(n, &follows)
    };
    (keep.iter().any(|k| !k)).then_some(keep)
}

/// The first set, by size and then in order of premises, that `follows`; all of
/// them when nothing smaller does.
fn smallest(n: usize, follows: &dyn Fn(&[bool]) -> bool) -> Vec<bool> {
    for size in 0..n {
        let mut pick: Vec<usize> = (0..size).collect();
        loop {
            let mut keep = vec![false; n];
            for &i in &pick {
                keep[i] = true;
            }
            if follows(&keep) {
                return keep;
            }
            // The next combination of `size` of `n`, in lexicographic order.
            let Some(i) = (0..size).rev().find(|&i| pick[i] < n - size + i) else {
                break;
            };
            pick[i] += 1;
            for j in i + 1..size {
                pick[j] = pick[j - 1] + 1;
            }
        }
    }
    vec![true; n]
}

/// Drop premises from the full set, first to last, while the rest still suffice.
fn greedy(n: usize, follows: &dyn Fn(&[bool]) -> bool) -> Vec<bool> {
    let mut keep = vec![true; n];
    for i in 0..n {
        keep[i] = false;
        if !follows(&keep) {
            keep[i] = true;
        }
    }
    keep
}

impl Restore {
    /// How to read back the derivations of `rule` recorded with the premises `keep`
    /// says (from [`kept`]), its constants encoded in `interner`.
    pub fn new(rule: &Rule, program: &Program, keep: &[bool], interner: &mut Symbols) -> Restore {
        let premises = premise_atoms(rule)
            .into_iter()
            .zip(keep)
            .map(|(a, &k)| {
                let cols = &program.relation(a.rel).columns;
                if k {
                    let binds = if plain(rule, program, a) {
                        a.args
                            .iter()
                            .enumerate()
                            .filter_map(|(c, t)| match *t {
                                Term::Var(v) => Some((c, v)),
                                _ => None,
                            })
                            .collect()
                    } else {
                        Vec::new()
                    };
                    return Found::Kept { binds };
                }
                let cells = a
                    .args
                    .iter()
                    .zip(cols)
                    .map(|(t, col)| match t {
                        Term::Var(v) => Arg::Var(*v),
                        Term::Const(value) => {
                            encode(value, col.ty, interner).map_or(Arg::Never, Arg::Const)
                        }
                        // (`kept` keeps every premise with a wildcard.)
                        Term::Wildcard => Arg::Never,
                    })
                    .collect();
                Found::Implied { rel: a.rel, cells }
            })
            .collect();
        Restore {
            premises,
            head: head_binds(rule, program),
            vars: rule.vars.len(),
        }
    }

    /// The whole premise list of a derivation of the fact in `row` of `head`,
    /// recorded with premises `recorded`: `None` if the recorded premises are not
    /// as many as the rule keeps, or an implied premise is no fact (neither can
    /// happen to a derivation the evaluation recorded).
    pub fn premises(
        &self,
        rels: &[Relation],
        head: &Relation,
        row: u32,
        recorded: Premises<'_>,
    ) -> Option<Vec<FactId>> {
        let mut vars: SmallVec<[u64; 16]> = smallvec![0; self.vars];
        let cells = head.row(row);
        for &(c, v) in &self.head {
            vars[v as usize] = cells.get(c);
        }
        let mut it = recorded.iter();
        for p in &self.premises {
            if let Found::Kept { binds } = p {
                let f = it.next()?;
                let cells = rels.get(f.rel as usize)?.row(f.row);
                for &(c, v) in binds {
                    vars[v as usize] = cells.get(c);
                }
            }
        }
        if it.next().is_some() {
            return None;
        }
        let mut it = recorded.iter();
        let mut out = Vec::with_capacity(self.premises.len());
        let mut key: SmallVec<[u64; 8]> = SmallVec::new();
        for p in &self.premises {
            match p {
                Found::Kept { .. } => out.push(it.next()?),
                Found::Implied { rel, cells } => {
                    key.clear();
                    for a in cells {
                        key.push(match *a {
                            Arg::Var(v) => vars[v as usize],
                            Arg::Const(c) => c,
                            Arg::Never => return None,
                        });
                    }
                    let row = rels.get(*rel as usize)?.find(&key)?;
                    out.push(FactId { rel: *rel, row });
                }
            }
        }
        Some(out)
    }
}

#[cfg(test)]
thread_local! {
    /// In tests: whether rules record fewer premises (off records them all, as an
    /// oracle for what is read back). Read where plans are made, on the thread that
    /// evaluates.
    pub(crate) static ELIDE: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

#[inline]
fn enabled() -> bool {
    #[cfg(test)]
    {
        ELIDE.with(std::cell::Cell::get)
    }
    #[cfg(not(test))]
    {
        true
    }
}
