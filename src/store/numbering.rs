//! Edge indexes: the one place that decides which input fact is `HEDGE-n`.
//!
//! Every input fact of an evaluation carries an `edge_idx`, its citation tag's
//! number. A fact that arrives with one keeps it; the others are numbered in the
//! order given, from one past the largest index in use. One index never names two
//! different facts. The same rule numbers a load ([`RawInputs::resolve`]), a
//! program evaluated from its own facts ([`complete_inputs`]), and evidence added to
//! an evaluated base (`FactBase::extend`, per-request overlays), where "in use"
//! includes the base's indexes, so that no base fact's tag ever changes.
//!
//! [`RawInputs::resolve`]: crate::store::RawInputs::resolve

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use crate::diag::{Diagnostic, ErrorCode, Location, Result};
use crate::ir::{Program, RelId};
use crate::store::raw::{Origin, file_provenance};
use crate::store::{InputFact, InputFacts};
use crate::value::Value;

/// Edge indexes already in use (by an evaluated base), and which fact owns each.
pub trait EdgeOwners {
    /// The input fact that owns edge index `idx` (borrowed, or decoded from storage
    /// that keeps it by columns).
    fn owner(&self, idx: u64) -> Option<Cow<'_, InputFact>>;
    /// The largest index in use.
    fn max_index(&self) -> Option<u64>;
}

/// Nothing is in use.
impl EdgeOwners for () {
    fn owner(&self, _: u64) -> Option<Cow<'_, InputFact>> {
        None
    }
    fn max_index(&self) -> Option<u64> {
        None
    }
}

/// A problem numbering found: fact `at` of the list, and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Problem {
    pub at: usize,
    pub message: String,
    /// The earlier fact of the list that owns the index, when it is one of them.
    pub first: Option<usize>,
}

fn same_fact(a: &InputFact, b: &InputFact) -> bool {
    a.rel == b.rel && a.args == b.args
}

fn text(program: &Program, f: &InputFact) -> String {
    let name = program
        .relations
        .get(f.rel as usize)
        .map_or("?", |r| r.name.as_str());
    crate::value::fact_text(name, &f.args)
}

/// A list of input facts to number: each fact's edge index, read and written, and
/// the fact itself for comparisons and messages (only when two facts claim one index).
pub(crate) trait Numbered {
    /// Number of facts.
    fn count(&self) -> usize;
    /// Fact `i`'s edge index.
    fn edge_idx(&self, i: usize) -> Option<u64>;
    /// Give fact `i` edge index `idx`.
    fn set_edge_idx(&mut self, i: usize, idx: u64);
    /// Fact `i`.
    fn fact(&self, i: usize) -> Cow<'_, InputFact>;
}

impl Numbered for [InputFact] {
    fn count(&self) -> usize {
        self.len()
    }
    fn edge_idx(&self, i: usize) -> Option<u64> {
        self[i].provenance.edge_idx
    }
    fn set_edge_idx(&mut self, i: usize, idx: u64) {
        self[i].provenance.edge_idx = Some(idx);
    }
    fn fact(&self, i: usize) -> Cow<'_, InputFact> {
        Cow::Borrowed(&self[i])
    }
}

/// Number `facts` in place (see the module documentation); every problem found.
pub(crate) fn assign<L: Numbered + ?Sized>(
    program: &Program,
    facts: &mut L,
    taken: &dyn EdgeOwners,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut owners: FxHashMap<u64, usize> = FxHashMap::default();
    let mut max = taken.max_index();
    // While the given indexes rise (as a loader or an earlier numbering gives
    // them), each is the first of its value: `owners` is filled only at the
    // first that does not rise, with the facts before it.
    let mut rising = Some(None);
    for i in 0..facts.count() {
        let Some(idx) = facts.edge_idx(i) else {
            continue;
        };
        max = Some(max.map_or(idx, |m| m.max(idx)));
        let clash = taken
            .owner(idx)
            .filter(|owner| !same_fact(owner, &facts.fact(i)));
        if let Some(last) = rising {
            if clash.is_none() && last.is_none_or(|last| idx > last) {
                rising = Some(Some(idx));
                continue;
            }
            // (Every fact before this one had an index of its own, none taken.)
            rising = None;
            for j in 0..i {
                if let Some(e) = facts.edge_idx(j) {
                    owners.insert(e, j);
                }
            }
        }
        if let Some(owner) = clash {
            problems.push(Problem {
                at: i,
                message: format!(
                    "edge_idx {idx} is already used by {} in the evaluated base",
                    text(program, &owner)
                ),
                first: None,
            });
            continue;
        }
        match owners.get(&idx) {
            None => {
                owners.insert(idx, i);
            }
            Some(&j) if !same_fact(&facts.fact(j), &facts.fact(i)) => problems.push(Problem {
                at: i,
                message: format!(
                    "edge_idx {idx} is already used by {}",
                    text(program, &facts.fact(j))
                ),
                first: Some(j),
            }),
            Some(_) => {}
        }
    }
    if !problems.is_empty() {
        return problems;
    }
    let mut next = max.map_or(Some(0), |m| m.checked_add(1));
    for i in 0..facts.count() {
        if facts.edge_idx(i).is_some() {
            continue;
        }
        match next {
            Some(n) => {
                facts.set_edge_idx(i, n);
                next = n.checked_add(1);
            }
            None => {
                problems.push(Problem {
                    at: i,
                    message:
                        "no edge index left to assign (an explicit edge_idx is at the maximum)"
                            .into(),
                    first: None,
                });
                break;
            }
        }
    }
    problems
}

/// The help every index clash carries.
pub(crate) const CLASH_HELP: &str =
    "each stored edge index names one fact; give this one another index or none";

/// Number `facts` in place: an input fact without an `edge_idx` gets the next index
/// after the largest in use (in `taken`, or explicit among `facts`), in order. An
/// explicit index that another fact already owns (in `taken` or earlier in `facts`)
/// is a `bad_input` error, and so is running out of indexes; then nothing is
/// numbered.
pub fn number_inputs(
    program: &Program,
    facts: &mut [InputFact],
    taken: &dyn EdgeOwners,
) -> Result<()> {
    number_list(program, facts, taken)
}

/// [`number_inputs`] of any list of facts.
fn number_list<L: Numbered + ?Sized>(
    program: &Program,
    facts: &mut L,
    taken: &dyn EdgeOwners,
) -> Result<()> {
    let problems = assign(program, facts, taken);
    if problems.is_empty() {
        return Ok(());
    }
    let diagnostics = problems
        .into_iter()
        .map(|p| {
            let d = Diagnostic::new(
                ErrorCode::BadInput,
                format!(
                    "input fact {} ({}): {}",
                    p.at + 1,
                    text(program, &facts.fact(p.at)),
                    p.message
                ),
            );
            if p.message.starts_with("edge_idx") {
                d.with_help(CLASH_HELP)
            } else {
                d
            }
        })
        .collect();
    Err(crate::diag::Error { diagnostics })
}

/// The whole input of an evaluation, each fact numbered: the facts written in the
/// program (`Program::facts`, source `"program"`) that `inputs` does not already carry
/// as program facts (counting repeats), followed by `inputs`. A
/// [`Loader`](crate::store::Loader)'s output carries them all, so this is idempotent:
/// the program's facts are input once, and whoever numbered them first decides their
/// tags.
pub fn complete_inputs(program: &Program, inputs: &[InputFact]) -> Result<Vec<InputFact>> {
    let given = inputs
        .iter()
        .filter(|f| f.provenance.source == "program")
        .map(|f| (f.rel, Cow::Borrowed(f.args.as_slice())));
    let mut all = missing_program_facts(program, given);
    all.extend_from_slice(inputs);
    number_inputs(program, &mut all, &())?;
    Ok(all)
}

/// A load's facts completed as [`complete_inputs`] completes a list, without
/// decoding them: the program's facts they do not carry (numbered), and the edge
/// index of every row when the rows were not numbered already (`None`: a
/// [`Loader`](crate::store::Loader)'s rows, numbered as they are).
pub(crate) struct CompletedTable {
    /// The program's facts to input before the rows.
    pub missing: Vec<InputFact>,
    /// Every row's edge index, when numbering changed any.
    pub edges: Option<Vec<Option<u64>>>,
}

/// [`complete_inputs`] of facts kept by columns: only the rows written in the program
/// are decoded (to find the program's facts they lack), and only when the rows were
/// not numbered by a load, or program facts come before them, is every row numbered
/// again.
pub(crate) fn complete_table(program: &Program, facts: &InputFacts) -> Result<CompletedTable> {
    let given = (facts.table.rows.spans())
        .filter(|(_, p)| facts.table.provenances[*p as usize].source == "program")
        .flat_map(|(rows, _)| rows)
        .map(|i| (facts.rel(i), Cow::Owned(facts.args(i))));
    let missing = missing_program_facts(program, given);
    if missing.is_empty() && facts.numbered {
        return Ok(CompletedTable {
            missing,
            edges: None,
        });
    }
    let edges = facts.table.rows.iter().map(|r| r.edge_idx);
    let (missing, edges) = number_after(program, missing, facts, edges)?;
    Ok(CompletedTable {
        missing,
        edges: Some(edges),
    })
}

/// [`complete_inputs`] of a list, without copying it: the program's facts it lacks
/// (numbered), and every fact's edge index, in the list's order.
pub(crate) fn complete_list(
    program: &Program,
    facts: &[InputFact],
) -> Result<(Vec<InputFact>, Vec<Option<u64>>)> {
    let given = (facts.iter())
        .filter(|f| f.provenance.source == "program")
        .map(|f| (f.rel, Cow::Borrowed(f.args.as_slice())));
    let missing = missing_program_facts(program, given);
    let edges = facts.iter().map(|f| f.provenance.edge_idx);
    number_after(program, missing, facts, edges)
}

/// Number the program's `missing` facts and then `rows` (whose edge indexes are
/// `edges`) as one list: the missing facts numbered, and the rows' edge indexes.
fn number_after<R: Rows + ?Sized>(
    program: &Program,
    missing: Vec<InputFact>,
    rows: &R,
    edges: impl Iterator<Item = Option<u64>>,
) -> Result<(Vec<InputFact>, Vec<Option<u64>>)> {
    let edges = (missing.iter().map(|f| f.provenance.edge_idx))
        .chain(edges)
        .collect();
    let mut list = Completing {
        missing,
        rows,
        edges,
    };
    number_list(program, &mut list, &())?;
    let Completing {
        mut missing,
        mut edges,
        ..
    } = list;
    for (f, &e) in missing.iter_mut().zip(&edges) {
        f.provenance.edge_idx = e;
    }
    let rows = edges.split_off(missing.len());
    Ok((missing, rows))
}

/// Facts that follow the program's missing ones: a load's rows kept by columns, or
/// a list.
trait Rows {
    fn fact(&self, i: usize) -> Cow<'_, InputFact>;
}

impl Rows for InputFacts {
    fn fact(&self, i: usize) -> Cow<'_, InputFact> {
        Cow::Owned(self.get(i))
    }
}

impl Rows for [InputFact] {
    fn fact(&self, i: usize) -> Cow<'_, InputFact> {
        Cow::Borrowed(&self[i])
    }
}

/// Program facts followed by a load's rows, as one list to number.
struct Completing<'a, R: ?Sized> {
    missing: Vec<InputFact>,
    rows: &'a R,
    edges: Vec<Option<u64>>,
}

impl<R: Rows + ?Sized> Numbered for Completing<'_, R> {
    fn count(&self) -> usize {
        self.edges.len()
    }
    fn edge_idx(&self, i: usize) -> Option<u64> {
        self.edges[i]
    }
    fn set_edge_idx(&mut self, i: usize, idx: u64) {
        self.edges[i] = Some(idx);
    }
    fn fact(&self, i: usize) -> Cow<'_, InputFact> {
        match self.missing.get(i) {
            Some(f) => Cow::Borrowed(f),
            None => self.rows.fact(i - self.missing.len()),
        }
    }
}

/// The facts written in the program that the inputs do not carry (counting repeats),
/// given the relation and values of every input fact whose source is `"program"`.
fn missing_program_facts<'a>(
    program: &'a Program,
    given: impl Iterator<Item = (RelId, Cow<'a, [Value]>)>,
) -> Vec<InputFact> {
    let mut count: std::collections::HashMap<(RelId, Cow<'a, [Value]>), usize> =
        std::collections::HashMap::new();
    for key in given {
        *count.entry(key).or_default() += 1;
    }
    let mut all = Vec::new();
    for sf in &program.facts {
        if let Some(n) = count.get_mut(&(sf.rel, Cow::Borrowed(sf.args.as_slice())))
            && *n > 0
        {
            *n -= 1;
            continue;
        }
        let loc: Option<Location> = ((sf.span.file as usize) < program.sources.files().len())
            .then(|| program.sources.locate(sf.span));
        let origin = Origin {
            file: loc.as_ref().map_or("", |l| l.file.as_str()).into(),
            source: None,
            line: loc.as_ref().map_or(0, |l| l.line),
            col: loc.as_ref().map_or(0, |l| l.col),
            arg_cols: Vec::new(),
            object_at: None,
        };
        all.push(InputFact {
            rel: sf.rel,
            args: sf.args.clone(),
            confidence: 1.0,
            provenance: file_provenance("program", &origin),
        });
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Provenance;
    use crate::value::Value;

    fn fact(rel: u32, a: i64, idx: Option<u64>) -> InputFact {
        InputFact {
            rel,
            args: vec![Value::Number(a)],
            confidence: 1.0,
            provenance: Provenance {
                source: "hyperedge".into(),
                edge_idx: idx,
                ..Provenance::default()
            },
        }
    }

    struct Base(Vec<InputFact>);

    impl EdgeOwners for Base {
        fn owner(&self, idx: u64) -> Option<Cow<'_, InputFact>> {
            self.0
                .iter()
                .find(|f| f.provenance.edge_idx == Some(idx))
                .map(Cow::Borrowed)
        }
        fn max_index(&self) -> Option<u64> {
            self.0.iter().filter_map(|f| f.provenance.edge_idx).max()
        }
    }

    #[test]
    fn numbers_after_the_largest_index_in_use() {
        let program = Program::from_source("p.dl", "p(1).\nq(x) :- p(x).").unwrap();
        let base = Base(vec![fact(0, 1, Some(7))]);
        let mut facts = vec![fact(0, 2, None), fact(0, 3, Some(3)), fact(0, 4, None)];
        number_inputs(&program, &mut facts, &base).unwrap();
        let idx: Vec<_> = facts.iter().map(|f| f.provenance.edge_idx).collect();
        assert_eq!(idx, [Some(8), Some(3), Some(9)]);
        // The base's own fact under its own index is no clash; another fact is.
        let mut again = vec![fact(0, 1, Some(7))];
        number_inputs(&program, &mut again, &base).unwrap();
        let mut clash = vec![fact(0, 5, Some(7))];
        let err = number_inputs(&program, &mut clash, &base).unwrap_err();
        assert!(
            err.to_string()
                .contains("edge_idx 7 is already used by p(1)"),
            "{err}"
        );
        assert_eq!(clash[0].provenance.edge_idx, Some(7));
    }

    #[test]
    fn program_facts_come_first_once() {
        let program = Program::from_source("p.dl", "p(1).\np(2).\nq(x) :- p(x).").unwrap();
        let once = complete_inputs(&program, &[fact(0, 9, None)]).unwrap();
        assert_eq!(once.len(), 3);
        assert_eq!(once[0].provenance.source, "program");
        assert_eq!(once[0].provenance.table.as_deref(), Some("p.dl"));
        let idx: Vec<_> = once.iter().map(|f| f.provenance.edge_idx).collect();
        assert_eq!(idx, [Some(0), Some(1), Some(2)]);
        let twice = complete_inputs(&program, &once).unwrap();
        assert_eq!(twice, once);
    }

    /// [`assign`] as it checks every given index: each looked up among those
    /// before it, rising or not (the oracle of `assign_matches_checking_every_index`).
    fn assign_checking_every_index(
        program: &Program,
        facts: &mut [InputFact],
        taken: &dyn EdgeOwners,
    ) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut owners: FxHashMap<u64, usize> = FxHashMap::default();
        let mut max = taken.max_index();
        for i in 0..facts.len() {
            let Some(idx) = facts[i].provenance.edge_idx else {
                continue;
            };
            max = Some(max.map_or(idx, |m| m.max(idx)));
            if let Some(owner) = taken.owner(idx)
                && !same_fact(&owner, &facts[i])
            {
                let message = format!(
                    "edge_idx {idx} is already used by {} in the evaluated base",
                    text(program, &owner)
                );
                problems.push(Problem {
                    at: i,
                    message,
                    first: None,
                });
                continue;
            }
            match owners.get(&idx) {
                None => {
                    owners.insert(idx, i);
                }
                Some(&j) if !same_fact(&facts[j], &facts[i]) => problems.push(Problem {
                    at: i,
                    message: format!(
                        "edge_idx {idx} is already used by {}",
                        text(program, &facts[j])
                    ),
                    first: Some(j),
                }),
                Some(_) => {}
            }
        }
        if !problems.is_empty() {
            return problems;
        }
        let mut next = max.map_or(Some(0), |m| m.checked_add(1));
        for f in facts.iter_mut() {
            if f.provenance.edge_idx.is_none() {
                f.provenance.edge_idx = next;
                next = next.and_then(|n| n.checked_add(1));
            }
        }
        problems
    }

    proptest::proptest! {
        /// Numbering takes the given indexes unchecked while they rise: the same
        /// indexes and the same problems (clashes within the list and with a base,
        /// repeats of one fact under one index) as checking every index.
        #[test]
        fn assign_matches_checking_every_index(
            given in proptest::collection::vec((0i64..4, proptest::option::of(0u64..12)), 0..24),
            base in proptest::collection::vec((0i64..4, 0u64..12), 0..4),
            rising in proptest::bool::ANY,
            repeat in proptest::bool::ANY,
        ) {
            let program = Program::from_source("p.dl", ".decl p(x: number)\n.input p").unwrap();
            let mut facts: Vec<InputFact> =
                given.iter().map(|&(a, idx)| fact(0, a, idx)).collect();
            if rising {
                // Rising indexes (some left to number), the last one maybe the
                // first one again.
                let mut n = 0;
                for f in &mut facts {
                    if f.provenance.edge_idx.is_some() {
                        n += 1 + (n % 3);
                        f.provenance.edge_idx = Some(n);
                    }
                }
                let given: Vec<usize> = (0..facts.len())
                    .filter(|&i| facts[i].provenance.edge_idx.is_some())
                    .collect();
                if repeat && let [first, .., last] = given[..] {
                    facts[last].provenance.edge_idx = facts[first].provenance.edge_idx;
                }
            }
            let base = Base(base.iter().map(|&(a, idx)| fact(0, a, Some(idx))).collect());
            let mut oracle = facts.clone();
            let ours = assign(&program, facts.as_mut_slice(), &base);
            let theirs = assign_checking_every_index(&program, &mut oracle, &base);
            let key = |p: &Problem| (p.at, p.message.clone(), p.first);
            proptest::prop_assert_eq!(
                ours.iter().map(key).collect::<Vec<_>>(),
                theirs.iter().map(key).collect::<Vec<_>>()
            );
            proptest::prop_assert_eq!(facts, oracle);
        }
    }
}
