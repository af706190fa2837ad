//! Join planning: each rule (and, in a recursive stratum, each of its semi-naive
//! variants) becomes a straight sequence of [`Step`]s over variable slots.
//!
//! Positive atoms are ordered with the delta atom first, then greedily by the number of
//! bound columns (ties in body order); each reads through the hash index on exactly its
//! bound columns. Negations, comparisons, assignments and aggregates are placed as soon
//! as the variables they read are bound. Constants are encoded once here, so the
//! executor only moves raw `u64` cells.

use std::sync::Arc;

use crate::diag::{Diagnostic, ErrorCode, Result};
use crate::eval::relation::{Relation, RowCells};
use crate::eval::restore::{self, Restore};
use crate::eval::symbols::Symbols;
use crate::ir::{
    AggFunc, ArithOp, Atom, CmpOp, Expr, Functor, Literal, Program, RelId, Rule, Term, TestFn,
};
use crate::value::{ColumnType, Value};

/// Which version of a relation a scan reads in a semi-naive round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    /// The rows that changed in the last round.
    Delta,
    /// The rows that existed before the last round.
    Old,
    /// Every row that existed when this round started.
    Full,
}

/// A key cell: a constant or the value of a bound slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cell {
    Const(u64),
    Slot(usize),
}

/// How a scan finds its candidate rows.
#[derive(Debug, Clone)]
pub(crate) enum Access {
    /// Every row (nothing bound) or the delta list.
    All,
    /// The index `index` of the relation, probed with `key`.
    Index { index: usize, key: Vec<Cell> },
    /// Every column bound: one dedup probe.
    Exact { key: Vec<Cell> },
}

/// A compiled arithmetic expression with its type fixed.
#[derive(Debug, Clone)]
pub(crate) enum CExpr {
    Slot(usize),
    Const(u64),
    /// A constant that cannot be represented at this type: never yields a value.
    Never,
    Bin(ArithOp, ColumnType, Box<CExpr>, Box<CExpr>),
    Neg(ColumnType, Box<CExpr>),
    /// A functor: its arguments with their types, and the result's type.
    Call(Functor, Vec<(CExpr, ColumnType)>, ColumnType),
}

/// One step of a plan.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// Join with a positive atom: bind `binds`, check `checks`, record the row in
    /// fact slot `fact`.
    Scan {
        rel: RelId,
        version: Version,
        access: Access,
        checks: Vec<(usize, Cell)>,
        binds: Vec<(usize, usize)>,
        fact: usize,
    },
    /// Continue only if no row matches; `literal` is the negation's body index.
    Absent {
        rel: RelId,
        access: Access,
        literal: usize,
    },
    /// Continue only if the comparison holds.
    Filter {
        op: CmpOp,
        ty: ColumnType,
        left: CExpr,
        right: CExpr,
    },
    /// Continue only if the test holds (fails, when `negated`). `regex` is the
    /// compiled pattern of a `match` whose pattern is a constant.
    Test {
        test: TestFn,
        args: Vec<CExpr>,
        negated: bool,
        regex: Option<Arc<regex::Regex>>,
    },
    /// Bind a slot to an expression's value (no value: the binding is dropped).
    Assign { slot: usize, expr: CExpr },
    /// Compute an aggregate over `body` for the current grouping bindings.
    Aggregate(Box<AggPlan>),
}

/// A compiled aggregate.
#[derive(Debug, Clone)]
pub(crate) struct AggPlan {
    pub func: AggFunc,
    /// The aggregated expression and its type (`None` for count).
    pub target: Option<(CExpr, ColumnType)>,
    /// The body's steps (grouping slots are bound on entry).
    pub body: Vec<Step>,
    /// Slot receiving the result.
    pub result: usize,
    /// Its type.
    pub result_ty: ColumnType,
    /// Whether the result slot is already bound (then the aggregate filters).
    pub result_bound: bool,
    /// Index of this aggregate among the rule's aggregates.
    pub agg: usize,
    /// Fact slots of the body's atoms (the facts aggregated).
    pub fact_slots: Vec<usize>,
}

/// What a body literal contributes to a derivation's premise list, in body order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Premise {
    /// The fact in this fact slot.
    Fact(usize),
    /// The facts aggregated by this aggregate.
    Agg(usize),
}

/// A rule variant ready to execute.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub rule: u32,
    pub head_rel: RelId,
    pub head: Vec<CExpr>,
    pub confidence: f64,
    pub steps: Vec<Step>,
    /// Variable slots (rule variables, then aggregate-local copies).
    pub slots: usize,
    /// Fact slots (one per positive atom, aggregate bodies included).
    pub facts: usize,
    /// Number of aggregates.
    pub aggs: usize,
    /// Premises in body order.
    pub premises: Vec<Premise>,
    /// The premises a derivation records, in body order: all of them, or, where
    /// `restore` is set, those the others do not follow from.
    pub recorded: Vec<Premise>,
    /// How a derivation recorded with fewer premises is read back whole.
    pub restore: Option<Arc<Restore>>,
    /// The recorded premises' fact slots when every premise is a fact (no
    /// aggregate), so that recording a derivation is a plain copy.
    pub premise_facts: Option<Vec<usize>>,
    /// False when a constant can never match: the plan produces nothing.
    pub feasible: bool,
    /// Set when the last step is a scan and the head is plain variables and
    /// constants: each of that scan's rows then makes its derivation directly.
    pub tail: Option<Tail>,
}

/// Where a value of a plan's last scan comes from, for a row of that scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Src {
    Const(u64),
    /// A slot bound before the last scan.
    Slot(usize),
    /// A column of the scanned row.
    Col(usize),
}

impl Src {
    /// The value for a row with cells `cells`, given the slots bound so far.
    #[inline(always)]
    pub fn value(self, cells: RowCells<'_>, slots: &[u64]) -> u64 {
        match self {
            Src::Const(c) => c,
            Src::Slot(s) => slots[s],
            Src::Col(c) => cells.get(c),
        }
    }
}

/// Head cells a [`Tail`] makes at most.
pub(crate) const TAIL_CELLS: usize = 8;

/// A plan's last scan with the head it completes, read straight off the scanned
/// row, so that a sink can take the scan's candidate rows a batch at a time
/// instead of one binding at a time.
#[derive(Debug, Clone)]
pub(crate) struct Tail {
    /// The relation the last scan reads.
    pub rel: RelId,
    /// Per head cell, where its value comes from.
    pub head: Vec<Src>,
    /// The scan's checks, each a column against a value (a variable repeated
    /// within the atom compares two columns).
    pub checks: Vec<(usize, Src)>,
    /// Comparisons of plain variables and constants placed after the scan, as
    /// (operator, type, left, right).
    pub filters: Vec<(CmpOp, ColumnType, Src, Src)>,
    /// The position of the scan among the plan's steps (the filters follow it).
    pub step: usize,
    /// The scan just before, when the two can run as one loop.
    pub pair: Option<Pair>,
}

/// The scan just before a plan's [`Tail`], when it checks nothing, the tail checks
/// and compares nothing, and the tail's look-up key is either a single cell this
/// scan binds or bound before this scan (then every row of it has the same
/// candidates, looked up once): a sink can then take that scan's rows and each
/// one's candidates of the tail in one loop.
#[derive(Debug, Clone)]
pub(crate) struct Pair {
    /// The relation the scan reads, and the fact slot of its row.
    pub rel: RelId,
    pub fact: usize,
    /// The column of its row that is the tail's look-up key; `None` when the key
    /// is bound before this scan.
    pub key: Option<usize>,
    /// Per head cell, the column of its row the cell comes from, if it does (the
    /// tail's [`Src::Slot`] of a slot this scan binds).
    pub head: Vec<Option<usize>>,
}

/// The tail of a plan with these steps and head, if it has one: its last scan, by
/// index or of every row, followed by nothing but comparisons of variables and
/// constants; its head at most [`TAIL_CELLS`] variables and constants.
fn tail_of(steps: &[Step], head: &[CExpr]) -> Option<Tail> {
    let step = steps.iter().rposition(|s| matches!(s, Step::Scan { .. }))?;
    let Step::Scan {
        rel,
        access,
        checks,
        binds,
        ..
    } = &steps[step]
    else {
        return None;
    };
    if matches!(access, Access::Exact { .. }) || head.len() > TAIL_CELLS {
        return None;
    }
    let src = |cell: Cell| match cell {
        Cell::Const(c) => Src::Const(c),
        Cell::Slot(s) => binds
            .iter()
            .find(|&&(_, b)| b == s)
            .map_or(Src::Slot(s), |&(c, _)| Src::Col(c)),
    };
    let plain = |e: &CExpr| match *e {
        CExpr::Slot(s) => Some(src(Cell::Slot(s))),
        CExpr::Const(c) => Some(Src::Const(c)),
        _ => None,
    };
    let filters = steps[step + 1..]
        .iter()
        .map(|s| match s {
            Step::Filter {
                op,
                ty,
                left,
                right,
            } => Some((*op, *ty, plain(left)?, plain(right)?)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let head = head.iter().map(plain).collect::<Option<Vec<Src>>>()?;
    let checks: Vec<_> = checks.iter().map(|&(c, k)| (c, src(k))).collect();
    let pair = match (step.checked_sub(1).map(|i| &steps[i]), access) {
        (
            Some(Step::Scan {
                rel: before,
                checks: none,
                binds: bound,
                fact,
                ..
            }),
            Access::Index { key, .. },
        ) if none.is_empty() && checks.is_empty() && filters.is_empty() => {
            let col = |s: usize| bound.iter().find(|&&(_, b)| b == s).map(|&(c, _)| c);
            let binds = |cell: &Cell| matches!(*cell, Cell::Slot(k) if col(k).is_some());
            let key = match key[..] {
                [Cell::Slot(k)] if col(k).is_some() => Some(col(k)),
                _ if !key.iter().any(binds) => Some(None),
                _ => None,
            };
            key.map(|key| Pair {
                rel: *before,
                fact: *fact,
                key,
                head: head
                    .iter()
                    .map(|h| match *h {
                        Src::Slot(s) => col(s),
                        _ => None,
                    })
                    .collect(),
            })
        }
        _ => None,
    };
    Some(Tail {
        rel: *rel,
        head,
        checks,
        filters,
        step,
        pair,
    })
}

/// Encode a value as a cell of a column of type `ty`, interning symbols. Numeric
/// values convert when the conversion is exact; anything else is `None`.
pub(crate) fn encode(value: &Value, ty: ColumnType, interner: &mut Symbols) -> Option<u64> {
    match (value, ty) {
        (Value::Symbol(s), ColumnType::Symbol) => Some(interner.get_or_intern(s.as_str())),
        _ => encode_scalar(value, ty),
    }
}

use crate::value::cell::encode_scalar;

/// Like [`encode`] but never interns: an unknown symbol is `None` (it matches nothing).
pub(crate) fn encode_lookup(value: &Value, ty: ColumnType, interner: &Symbols) -> Option<u64> {
    match (value, ty) {
        (Value::Symbol(s), ColumnType::Symbol) => interner.get(s.as_str()),
        (Value::Symbol(_), _) | (_, ColumnType::Symbol) => None,
        _ => encode_scalar(value, ty),
    }
}

/// Decode a cell of a column of type `ty`.
pub(crate) fn decode(cell: u64, ty: ColumnType, interner: &Symbols) -> Value {
    match ty {
        ColumnType::Number => Value::Number(cell as i64),
        ColumnType::Unsigned => Value::Unsigned(cell),
        ColumnType::Float => Value::Float(f64::from_bits(cell)),
        ColumnType::Symbol => Value::Symbol(interner.resolve(cell).to_string()),
    }
}

/// A plan that a checked program cannot produce: a bug, reported (and asserted in
/// debug builds) as an internal error rather than blamed on the user's input.
fn internal(msg: impl Into<String>) -> crate::diag::Error {
    let msg = msg.into();
    debug_assert!(false, "broken invariant of a checked program: {msg}");
    Diagnostic::new(ErrorCode::Internal, msg)
        .with_help("this is a bug in prooflog: please report it with the program that caused it")
        .into()
}

/// Compiles the rules of one program against its relations' storage (creating the
/// indexes the plans need).
pub(crate) struct Planner<'a> {
    pub program: &'a Program,
    pub interner: &'a mut Symbols,
    pub rels: &'a mut [Relation],
    /// Plan only for replaying a recorded derivation: top-level scans get no index
    /// (they stay correct, by checks, but are meant never to run).
    pub replay_only: bool,
}

/// Per-rule compilation state.
struct Scope {
    /// Slot of each rule variable in the current scope.
    slot_of: Vec<usize>,
    /// Next free slot.
    next_slot: usize,
    /// Next free fact slot.
    next_fact: usize,
    /// Next aggregate number.
    next_agg: usize,
    /// Fact slot of each positive body atom (by body index), top level only.
    atom_fact: Vec<Option<usize>>,
    feasible: bool,
}

impl Planner<'_> {
    /// Compile one variant of a rule. `delta` is the body index of the atom that reads
    /// the delta; `stratum_rels` says which relations belong to the rule's stratum
    /// (those before the delta atom read the old version). With no delta every atom
    /// reads the full version.
    pub fn plan(&mut self, rule: &Rule, delta: Option<usize>, in_stratum: &[bool]) -> Result<Plan> {
        let nvars = rule.vars.len();
        let mut scope = Scope {
            slot_of: (0..nvars).collect(),
            next_slot: nvars,
            next_fact: 0,
            next_agg: 0,
            atom_fact: vec![None; rule.body.len()],
            feasible: true,
        };
        let mut bound = vec![false; nvars];
        let versions: Vec<Version> = rule
            .body
            .iter()
            .enumerate()
            .map(|(i, lit)| match (lit, delta) {
                (Literal::Atom(_), Some(d)) if i == d => Version::Delta,
                (Literal::Atom(a), Some(d)) if i < d && in_stratum[a.rel as usize] => Version::Old,
                _ => Version::Full,
            })
            .collect();
        // Grouping variables of aggregates: those bound before them in body order.
        let groupings = aggregate_groupings(rule);
        let literals: Vec<usize> = (0..rule.body.len()).collect();
        let steps = self.order(
            rule, &literals, &rule.body, &versions, delta, &groupings, &mut bound, &mut scope, true,
        )?;
        let head_rel = rule.head.rel;
        let head_cols = self.program.relation(head_rel).columns.clone();
        if head_cols.len() != rule.head.args.len() {
            return Err(internal(format!("rule {} head arity", rule.name)));
        }
        let head: Vec<CExpr> = rule
            .head
            .args
            .iter()
            .zip(&head_cols)
            .map(|(e, c)| self.expr(e, c.ty, &scope))
            .collect();
        let mut premises = Vec::new();
        let mut agg_no = 0;
        for (i, lit) in rule.body.iter().enumerate() {
            match lit {
                Literal::Atom(_) => {
                    if let Some(f) = scope.atom_fact[i] {
                        premises.push(Premise::Fact(f));
                    }
                }
                Literal::Aggregate { .. } => {
                    premises.push(Premise::Agg(agg_no));
                    agg_no += 1;
                }
                _ => {}
            }
        }
        // The premises derivations record: those the others do not follow from
        // (`restore`), where the rule's every premise has its fact slot.
        let whole = premises.len()
            == rule
                .body
                .iter()
                .filter(|l| matches!(l, Literal::Atom(_) | Literal::Aggregate { .. }))
                .count();
        let (recorded, restore) = match restore::kept(rule, self.program).filter(|_| whole) {
            Some(keep) => {
                let recorded = premises
                    .iter()
                    .zip(&keep)
                    .filter(|(_, k)| **k)
                    .map(|(p, _)| *p)
                    .collect();
                let restore = Restore::new(rule, self.program, &keep, self.interner);
                (recorded, Some(Arc::new(restore)))
            }
            None => (premises.clone(), None),
        };
        let premise_facts = recorded
            .iter()
            .map(|p| match p {
                Premise::Fact(f) => Some(*f),
                Premise::Agg(_) => None,
            })
            .collect();
        let tail = tail_of(&steps, &head);
        Ok(Plan {
            rule: rule.id,
            head_rel,
            tail,
            head,
            confidence: rule.confidence,
            steps,
            slots: scope.next_slot,
            facts: scope.next_fact,
            aggs: scope.next_agg,
            premises,
            recorded,
            restore,
            premise_facts,
            feasible: scope.feasible,
        })
    }

    /// Order a list of literals into steps. `top` marks the rule body (whose atoms get
    /// premise slots recorded by body index).
    #[allow(clippy::too_many_arguments)]
    fn order(
        &mut self,
        rule: &Rule,
        which: &[usize],
        body: &[Literal],
        versions: &[Version],
        delta: Option<usize>,
        groupings: &[Vec<u32>],
        bound: &mut [bool],
        scope: &mut Scope,
        top: bool,
    ) -> Result<Vec<Step>> {
        let mut steps = Vec::new();
        let mut atoms: Vec<usize> = which
            .iter()
            .copied()
            .filter(|&i| matches!(body[i], Literal::Atom(_)))
            .collect();
        let mut others: Vec<usize> = which
            .iter()
            .copied()
            .filter(|&i| !matches!(body[i], Literal::Atom(_)))
            .collect();
        // Aggregate numbering follows body order.
        let agg_numbers: Vec<usize> = {
            let mut n = 0;
            body.iter()
                .map(|l| {
                    let k = n;
                    if matches!(l, Literal::Aggregate { .. }) {
                        n += 1;
                    }
                    k
                })
                .collect()
        };
        if let Some(d) = delta
            && let Some(pos) = atoms.iter().position(|&i| i == d)
        {
            atoms.remove(pos);
            let Literal::Atom(a) = &body[d] else {
                return Err(internal("delta literal is not an atom"));
            };
            steps.push(self.scan(a, Version::Delta, bound, scope, top.then_some(d))?);
        }
        loop {
            // Place every literal whose inputs are bound (repeat: assignments bind).
            loop {
                let mut placed = false;
                let mut k = 0;
                while k < others.len() {
                    let i = others[k];
                    let ready = match &body[i] {
                        Literal::Negated(a) => atom_vars(a).iter().all(|&v| bound[v as usize]),
                        Literal::Compare {
                            left,
                            right,
                            assigns,
                            ..
                        } => {
                            let mut vs = Vec::new();
                            if assigns.is_none_or(|v| bound[v as usize]) {
                                expr_vars(left, &mut vs);
                            }
                            expr_vars(right, &mut vs);
                            vs.iter().all(|&v| bound[v as usize])
                        }
                        Literal::Aggregate { .. } => {
                            groupings[i].iter().all(|&v| bound[v as usize])
                        }
                        Literal::Test { args, .. } => {
                            let mut vs = Vec::new();
                            args.iter().for_each(|a| expr_vars(a, &mut vs));
                            vs.iter().all(|&v| bound[v as usize])
                        }
                        Literal::Atom(_) => false,
                    };
                    if ready {
                        others.remove(k);
                        let step =
                            self.other(rule, &body[i], i, agg_numbers[i], groupings, bound, scope)?;
                        steps.push(step);
                        placed = true;
                    } else {
                        k += 1;
                    }
                }
                if !placed {
                    break;
                }
            }
            if atoms.is_empty() {
                break;
            }
            // The atom with the most bound columns; ties in body order.
            let mut best = 0;
            let mut best_score = -1i64;
            for (k, &i) in atoms.iter().enumerate() {
                let Literal::Atom(a) = &body[i] else { continue };
                let score = a
                    .args
                    .iter()
                    .filter(|t| match t {
                        Term::Const(_) => true,
                        Term::Var(v) => bound[*v as usize],
                        Term::Wildcard => false,
                    })
                    .count() as i64;
                if score > best_score {
                    best_score = score;
                    best = k;
                }
            }
            let i = atoms.remove(best);
            let Literal::Atom(a) = &body[i] else {
                return Err(internal("not an atom"));
            };
            steps.push(self.scan(a, versions[i], bound, scope, top.then_some(i))?);
        }
        if !others.is_empty() {
            return Err(internal(format!(
                "rule {}: a literal reads a variable no literal binds",
                rule.name
            )));
        }
        Ok(steps)
    }

    fn scan(
        &mut self,
        a: &Atom,
        version: Version,
        bound: &mut [bool],
        scope: &mut Scope,
        body_index: Option<usize>,
    ) -> Result<Step> {
        let rel = a.rel as usize;
        let cols = &self.program.relations[rel].columns;
        if cols.len() != a.args.len() {
            return Err(internal(format!(
                "atom of {} has the wrong arity",
                self.program.relations[rel].name
            )));
        }
        let mut key_cols = Vec::new();
        let mut key = Vec::new();
        let mut checks = Vec::new();
        let mut binds = Vec::new();
        let mut local_bound: Vec<u32> = Vec::new();
        for (c, t) in a.args.iter().enumerate() {
            match t {
                Term::Const(v) => match encode(v, cols[c].ty, self.interner) {
                    Some(x) => {
                        key_cols.push(c);
                        key.push(Cell::Const(x));
                    }
                    None => scope.feasible = false,
                },
                Term::Var(v) if bound[*v as usize] => {
                    key_cols.push(c);
                    key.push(Cell::Slot(scope.slot_of[*v as usize]));
                }
                Term::Var(v) => {
                    if local_bound.contains(v) {
                        checks.push((c, Cell::Slot(scope.slot_of[*v as usize])));
                    } else {
                        local_bound.push(*v);
                        binds.push((c, scope.slot_of[*v as usize]));
                    }
                }
                Term::Wildcard => {}
            }
        }
        let access = if version == Version::Delta
            || key_cols.is_empty()
            || (self.replay_only && body_index.is_some())
        {
            checks.extend(key_cols.iter().copied().zip(key.iter().copied()));
            Access::All
        } else if key_cols.len() == cols.len() {
            Access::Exact { key }
        } else {
            let index = self.rels[rel].ensure_index(&key_cols);
            Access::Index { index, key }
        };
        for v in local_bound {
            bound[v as usize] = true;
        }
        let fact = scope.next_fact;
        scope.next_fact += 1;
        if let Some(i) = body_index {
            scope.atom_fact[i] = Some(fact);
        }
        Ok(Step::Scan {
            rel: a.rel,
            version,
            access,
            checks,
            binds,
            fact,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn other(
        &mut self,
        rule: &Rule,
        lit: &Literal,
        index: usize,
        agg_no: usize,
        groupings: &[Vec<u32>],
        bound: &mut [bool],
        scope: &mut Scope,
    ) -> Result<Step> {
        match lit {
            Literal::Negated(a) => {
                let cols = &self.program.relations[a.rel as usize].columns;
                let mut key_cols = Vec::new();
                let mut key = Vec::new();
                for (c, t) in a.args.iter().enumerate() {
                    match t {
                        Term::Const(v) => match encode(v, cols[c].ty, self.interner) {
                            Some(x) => {
                                key_cols.push(c);
                                key.push(Cell::Const(x));
                            }
                            // A constant no fact can hold: the atom is always absent.
                            None => {
                                return Ok(Step::Filter {
                                    op: CmpOp::Eq,
                                    ty: ColumnType::Number,
                                    left: CExpr::Const(0),
                                    right: CExpr::Const(0),
                                });
                            }
                        },
                        Term::Var(v) => {
                            key_cols.push(c);
                            key.push(Cell::Slot(scope.slot_of[*v as usize]));
                        }
                        Term::Wildcard => {}
                    }
                }
                let access = if key_cols.len() == cols.len() {
                    Access::Exact { key }
                } else if key_cols.is_empty() {
                    Access::All
                } else {
                    let index = self.rels[a.rel as usize].ensure_index(&key_cols);
                    Access::Index { index, key }
                };
                Ok(Step::Absent {
                    rel: a.rel,
                    access,
                    literal: index,
                })
            }
            Literal::Compare {
                op,
                left,
                right,
                assigns,
                ..
            } => {
                if let Some(v) = assigns
                    && !bound[*v as usize]
                {
                    let ty = rule.vars[*v as usize].ty;
                    let expr = self.expr(right, ty, scope);
                    bound[*v as usize] = true;
                    return Ok(Step::Assign {
                        slot: scope.slot_of[*v as usize],
                        expr,
                    });
                }
                let ty = left
                    .column_type(rule)
                    .or_else(|| right.column_type(rule))
                    .unwrap_or(ColumnType::Number);
                Ok(Step::Filter {
                    op: *op,
                    ty,
                    left: self.expr(left, ty, scope),
                    right: self.expr(right, ty, scope),
                })
            }
            Literal::Aggregate {
                result,
                func,
                target,
                body,
                ..
            } => {
                // Local variables get fresh slots; grouping variables keep theirs.
                let saved_slots = scope.slot_of.clone();
                let mut inner_bound = vec![false; rule.vars.len()];
                for v in agg_body_vars(body, target.as_ref()) {
                    if groupings.get(index).is_some_and(|g| g.contains(&v)) {
                        inner_bound[v as usize] = true;
                    } else {
                        scope.slot_of[v as usize] = scope.next_slot;
                        scope.next_slot += 1;
                    }
                }
                let which: Vec<usize> = (0..body.len()).collect();
                let versions = vec![Version::Full; body.len()];
                let no_groupings = vec![Vec::new(); body.len()];
                let steps = self.order(
                    rule,
                    &which,
                    body,
                    &versions,
                    None,
                    &no_groupings,
                    &mut inner_bound,
                    scope,
                    false,
                )?;
                let target = match (func, target) {
                    (AggFunc::Count, _) | (_, None) => None,
                    (_, Some(t)) => {
                        let ty = t
                            .column_type(rule)
                            .unwrap_or(rule.vars[*result as usize].ty);
                        Some((self.expr(t, ty, scope), ty))
                    }
                };
                scope.slot_of = saved_slots;
                let result_bound = bound[*result as usize];
                bound[*result as usize] = true;
                scope.next_agg = scope.next_agg.max(agg_no + 1);
                let fact_slots = steps
                    .iter()
                    .filter_map(|s| match s {
                        Step::Scan { fact, .. } => Some(*fact),
                        _ => None,
                    })
                    .collect();
                Ok(Step::Aggregate(Box::new(AggPlan {
                    fact_slots,
                    func: *func,
                    target,
                    body: steps,
                    result: scope.slot_of[*result as usize],
                    result_ty: rule.vars[*result as usize].ty,
                    result_bound,
                    agg: agg_no,
                })))
            }
            Literal::Test {
                test,
                args,
                negated,
                ..
            } => {
                let args: Vec<CExpr> = args
                    .iter()
                    .map(|a| self.expr(a, ColumnType::Symbol, scope))
                    .collect();
                let regex = match (test, args.first()) {
                    (TestFn::Match, Some(CExpr::Const(p))) => {
                        let pattern = self.interner.resolve(*p);
                        regex::Regex::new(&format!("^(?:{pattern})$"))
                            .ok()
                            .map(Arc::new)
                    }
                    _ => None,
                };
                Ok(Step::Test {
                    test: *test,
                    args,
                    negated: *negated,
                    regex,
                })
            }
            Literal::Atom(_) => Err(internal("atom placed as a filter")),
        }
    }

    fn expr(&mut self, e: &Expr, ty: ColumnType, scope: &Scope) -> CExpr {
        match e {
            Expr::Var(v) => CExpr::Slot(scope.slot_of[*v as usize]),
            Expr::Const(c) => match encode(c, ty, self.interner) {
                Some(x) => CExpr::Const(x),
                None => CExpr::Never,
            },
            Expr::Binary(op, l, r) => CExpr::Bin(
                *op,
                ty,
                Box::new(self.expr(l, ty, scope)),
                Box::new(self.expr(r, ty, scope)),
            ),
            Expr::Neg(x) => CExpr::Neg(ty, Box::new(self.expr(x, ty, scope))),
            Expr::Call(f, args, types) => CExpr::Call(
                *f,
                args.iter()
                    .zip(types)
                    .map(|(a, &t)| (self.expr(a, t, scope), t))
                    .collect(),
                ty,
            ),
        }
    }
}

pub(crate) fn expr_vars(e: &Expr, out: &mut Vec<u32>) {
    match e {
        Expr::Var(v) => out.push(*v),
        Expr::Const(_) => {}
        Expr::Binary(_, l, r) => {
            expr_vars(l, out);
            expr_vars(r, out);
        }
        Expr::Neg(x) => expr_vars(x, out),
        Expr::Call(_, args, _) => args.iter().for_each(|a| expr_vars(a, out)),
    }
}

fn atom_vars(a: &Atom) -> Vec<u32> {
    a.args
        .iter()
        .filter_map(|t| match t {
            Term::Var(v) => Some(*v),
            _ => None,
        })
        .collect()
}

fn literal_vars(l: &Literal, out: &mut Vec<u32>) {
    match l {
        Literal::Atom(a) | Literal::Negated(a) => out.extend(atom_vars(a)),
        Literal::Compare { left, right, .. } => {
            expr_vars(left, out);
            expr_vars(right, out);
        }
        Literal::Aggregate {
            result,
            target,
            body,
            ..
        } => {
            out.push(*result);
            out.extend(agg_body_vars(body, target.as_ref()));
        }
        Literal::Test { args, .. } => args.iter().for_each(|a| expr_vars(a, out)),
    }
}

fn agg_body_vars(body: &[Literal], target: Option<&Expr>) -> Vec<u32> {
    let mut vs = Vec::new();
    for l in body {
        literal_vars(l, &mut vs);
    }
    if let Some(t) = target {
        expr_vars(t, &mut vs);
    }
    vs.sort_unstable();
    vs.dedup();
    vs
}

/// For each body literal that is an aggregate, the variables of its body bound by the
/// literals before it in body order (its grouping variables); empty for the others.
pub(crate) fn aggregate_groupings(rule: &Rule) -> Vec<Vec<u32>> {
    let mut bound = vec![false; rule.vars.len()];
    let mut out = Vec::with_capacity(rule.body.len());
    for lit in &rule.body {
        match lit {
            Literal::Aggregate {
                result,
                target,
                body,
                ..
            } => {
                let g: Vec<u32> = agg_body_vars(body, target.as_ref())
                    .into_iter()
                    .filter(|&v| bound[v as usize])
                    .collect();
                out.push(g);
                bound[*result as usize] = true;
            }
            Literal::Atom(a) => {
                for v in atom_vars(a) {
                    bound[v as usize] = true;
                }
                out.push(Vec::new());
            }
            Literal::Compare {
                assigns: Some(v), ..
            } => {
                bound[*v as usize] = true;
                out.push(Vec::new());
            }
            _ => out.push(Vec::new()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_values_encode_only_when_exact() {
        let exact = (1i64 << 53) as f64;
        assert_eq!(
            encode_scalar(&Value::Number(1 << 53), ColumnType::Float),
            Some(exact.to_bits())
        );
        assert_eq!(
            encode_scalar(&Value::Number((1 << 53) + 1), ColumnType::Float),
            None
        );
        assert_eq!(
            encode_scalar(&Value::Number(i64::MAX), ColumnType::Float),
            None
        );
        assert_eq!(
            encode_scalar(&Value::Unsigned(u64::MAX), ColumnType::Float),
            None
        );
        assert_eq!(
            encode_scalar(&Value::Number(-1), ColumnType::Unsigned),
            None
        );
        assert_eq!(
            encode_scalar(&Value::Unsigned(7), ColumnType::Number),
            Some(7)
        );
    }

    #[test]
    fn lookups_never_intern() {
        let interner = Symbols::new();
        let sym = Value::Symbol("absent".into());
        assert_eq!(encode_lookup(&sym, ColumnType::Symbol, &interner), None);
        assert_eq!(interner.len(), 0);
        assert_eq!(
            encode_lookup(&Value::Number(-3), ColumnType::Number, &interner),
            Some(-3i64 as u64)
        );
    }
}
