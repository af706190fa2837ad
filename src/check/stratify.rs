//! Stratification: strongly connected components of the predicate dependency graph,
//! ordered so that every stratum comes after the strata it reads.
//!
//! Relations are nodes; a rule adds an edge from its head to every relation its body
//! reads, marked negative for a negated atom and aggregating for an atom inside an
//! aggregate. A negative or aggregating edge inside one component is a cycle through
//! negation or aggregation: the program has no stratified meaning.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::diag::Span;
use crate::ir::{AggFunc, RelId, Stratum};

/// How a rule body reads a relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DepKind {
    /// A positive atom.
    Positive,
    /// A negated atom.
    Negated,
    /// An atom inside an aggregate.
    Aggregated(AggFunc),
}

/// One body read of one rule.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dep {
    /// The relation read.
    pub rel: RelId,
    /// How.
    pub kind: DepKind,
    /// The literal that reads it.
    pub span: Span,
}

/// A cycle through negation or aggregation.
#[derive(Debug, Clone)]
pub(crate) struct Unstratifiable {
    /// The offending literal.
    pub span: Span,
    /// The head relation of the rule it is in.
    pub head: RelId,
    /// The relation it reads.
    pub rel: RelId,
    /// How it reads it.
    pub kind: DepKind,
    /// The cycle after `head`, as edges (kind, relation reached):
    /// `head -kind-> rel -> … -> head`.
    pub cycle: Vec<(DepKind, RelId)>,
}

/// The strata (rules filled in, ascending) and each rule's stratum; or every literal
/// that closes a cycle through negation or aggregation.
pub(crate) fn stratify(
    relation_count: usize,
    rules: &[(RelId, Vec<Dep>)],
) -> Result<(Vec<Stratum>, Vec<usize>), Vec<Unstratifiable>> {
    let n = relation_count;
    let mut adj: Vec<Vec<(RelId, DepKind)>> = vec![Vec::new(); n];
    let mut has_rules = vec![false; n];
    for (head, deps) in rules {
        has_rules[*head as usize] = true;
        for d in deps {
            adj[*head as usize].push((d.rel, d.kind));
        }
    }
    let comp = tarjan(&adj);
    let comp_count = comp.iter().map(|&c| c + 1).max().unwrap_or(0);

    // Negation or aggregation inside a component.
    let mut errors = Vec::new();
    let mut recursive = vec![false; comp_count];
    for (head, deps) in rules {
        for d in deps {
            if comp[*head as usize] != comp[d.rel as usize] {
                continue;
            }
            recursive[comp[*head as usize]] = true;
            if d.kind != DepKind::Positive {
                let mut cycle = vec![(d.kind, d.rel)];
                cycle.extend(path_within(&adj, &comp, d.rel, *head));
                errors.push(Unstratifiable {
                    span: d.span,
                    head: *head,
                    rel: d.rel,
                    kind: d.kind,
                    cycle,
                });
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }

    // Order components: dependencies first, ties broken by the smallest relation id.
    let mut min_rel = vec![u32::MAX; comp_count];
    let mut members: Vec<Vec<RelId>> = vec![Vec::new(); comp_count];
    for (r, &c) in comp.iter().enumerate() {
        min_rel[c] = min_rel[c].min(r as u32);
        members[c].push(r as RelId);
    }
    let mut indegree = vec![0usize; comp_count];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); comp_count];
    for (h, edges) in adj.iter().enumerate() {
        let ch = comp[h];
        for &(b, _) in edges {
            let cb = comp[b as usize];
            if cb != ch {
                indegree[ch] += 1;
                dependents[cb].push(ch);
            }
        }
    }
    let mut ready: BinaryHeap<Reverse<(u32, usize)>> = (0..comp_count)
        .filter(|&c| indegree[c] == 0)
        .map(|c| Reverse((min_rel[c], c)))
        .collect();
    let mut stratum_of_comp = vec![usize::MAX; comp_count];
    let mut strata = Vec::new();
    while let Some(Reverse((_, c))) = ready.pop() {
        let rels: Vec<RelId> = members[c]
            .iter()
            .copied()
            .filter(|&r| has_rules[r as usize])
            .collect();
        if !rels.is_empty() {
            stratum_of_comp[c] = strata.len();
            strata.push(Stratum {
                relations: rels,
                rules: Vec::new(),
                recursive: recursive[c],
            });
        }
        for &d in &dependents[c] {
            indegree[d] -= 1;
            if indegree[d] == 0 {
                ready.push(Reverse((min_rel[d], d)));
            }
        }
    }
    let mut rule_stratum = Vec::with_capacity(rules.len());
    for (id, (head, _)) in rules.iter().enumerate() {
        let s = stratum_of_comp[comp[*head as usize]];
        strata[s].rules.push(id as u32);
        rule_stratum.push(s);
    }
    Ok((strata, rule_stratum))
}

/// Component index of every node (iterative Tarjan, so deep chains cannot overflow
/// the stack). Components are numbered in completion order.
fn tarjan(adj: &[Vec<(RelId, DepKind)>]) -> Vec<usize> {
    const UNSEEN: u32 = u32::MAX;
    let n = adj.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![usize::MAX; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut calls: Vec<(usize, usize)> = Vec::new();
    let mut next = 0u32;
    let mut comps = 0usize;
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        calls.push((root, 0));
        while let Some(&mut (v, ref mut edge)) = calls.last_mut() {
            if let Some(&(w, _)) = adj[v].get(*edge) {
                *edge += 1;
                let w = w as usize;
                if index[w] == UNSEEN {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(u, _)) = calls.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp[w] = comps;
                    if w == v {
                        break;
                    }
                }
                comps += 1;
            }
        }
    }
    comp
}

/// Shortest dependency path `from -> … -> to` inside one component, as the edges
/// (kind, node reached) after `from` (empty when `from == to`).
fn path_within(
    adj: &[Vec<(RelId, DepKind)>],
    comp: &[usize],
    from: RelId,
    to: RelId,
) -> Vec<(DepKind, RelId)> {
    if from == to {
        return Vec::new();
    }
    let c = comp[from as usize];
    let mut prev: Vec<Option<(RelId, DepKind)>> = vec![None; adj.len()];
    let mut seen = vec![false; adj.len()];
    let mut queue = VecDeque::from([from]);
    seen[from as usize] = true;
    while let Some(v) = queue.pop_front() {
        if v == to {
            break;
        }
        for &(w, kind) in &adj[v as usize] {
            if comp[w as usize] == c && !seen[w as usize] {
                seen[w as usize] = true;
                prev[w as usize] = Some((v, kind));
                queue.push_back(w);
            }
        }
    }
    let mut path = Vec::new();
    let mut at = to;
    while at != from {
        let Some((p, kind)) = prev[at as usize] else {
            break;
        };
        path.push((kind, at));
        at = p;
    }
    path.reverse();
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn dep(rel: RelId, kind: DepKind) -> Dep {
        Dep {
            rel,
            kind,
            span: Span::default(),
        }
    }

    #[test]
    fn chain_and_recursion() {
        // 0 = edge (input), 1 = path (recursive), 2 = unreachable (negates path)
        let rules = vec![
            (1, vec![dep(0, DepKind::Positive)]),
            (
                1,
                vec![dep(1, DepKind::Positive), dep(0, DepKind::Positive)],
            ),
            (2, vec![dep(0, DepKind::Positive), dep(1, DepKind::Negated)]),
        ];
        let (strata, of_rule) = stratify(3, &rules).unwrap();
        assert_eq!(strata.len(), 2);
        assert_eq!(strata[0].relations, vec![1]);
        assert!(strata[0].recursive);
        assert_eq!(strata[0].rules, vec![0, 1]);
        assert_eq!(strata[1].relations, vec![2]);
        assert!(!strata[1].recursive);
        assert_eq!(of_rule, vec![0, 0, 1]);
    }

    #[test]
    fn negation_in_cycle_names_it() {
        // path(0) <- !blocked(1); blocked(1) <- path(0)
        let rules = vec![
            (0, vec![dep(1, DepKind::Negated)]),
            (1, vec![dep(0, DepKind::Positive)]),
        ];
        let errs = stratify(2, &rules).unwrap_err();
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].head, 0);
        assert_eq!(
            errs[0].cycle,
            vec![(DepKind::Negated, 1), (DepKind::Positive, 0)]
        );
    }

    proptest! {
        /// Without negation every random program stratifies, and every dependency of
        /// a stratum is in an earlier stratum or (recursive) in the same one.
        #[test]
        fn strata_respect_dependencies(
            n in 1usize..12,
            raw in proptest::collection::vec((0u32..12, proptest::collection::vec(0u32..12, 0..4)), 0..25)
        ) {
            let rules: Vec<(RelId, Vec<Dep>)> = raw
                .into_iter()
                .map(|(h, b)| (h % n as u32, b.into_iter().map(|r| dep(r % n as u32, DepKind::Positive)).collect()))
                .collect();
            let (strata, of_rule) = stratify(n, &rules).unwrap();
            let mut stratum_of_rel = vec![None; n];
            for (i, s) in strata.iter().enumerate() {
                for &r in &s.relations {
                    prop_assert!(stratum_of_rel[r as usize].is_none());
                    stratum_of_rel[r as usize] = Some(i);
                }
            }
            for (id, (head, deps)) in rules.iter().enumerate() {
                let hs = stratum_of_rel[*head as usize].unwrap();
                prop_assert_eq!(of_rule[id], hs);
                prop_assert!(strata[hs].rules.contains(&(id as u32)));
                for d in deps {
                    if let Some(ds) = stratum_of_rel[d.rel as usize] {
                        prop_assert!(ds <= hs);
                        if ds == hs {
                            prop_assert!(strata[hs].recursive);
                        }
                    }
                }
            }
        }
    }
}
