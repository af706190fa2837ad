//! The queue of a stratum whose facts are handed out best first (see the fixpoint's
//! `Order`): the facts that changed, each at its [`rank`], taken out a rank at a
//! time, best first.
//!
//! Ranks queued are kept in a binary heap, and each rank's facts in a list of its
//! own, found by a hash map; the lists of ranks taken out are kept for ranks queued
//! later. Queuing a fact is a hash look-up (none for a run of facts at one rank)
//! and a push; taking a rank out is a heap pop and a read of its list. (An ordered
//! map of ranks with a `Vec` per rank cost a tree search per rank queued and an
//! allocation per rank: where nearly every confidence differs, most ranks hold a
//! few facts, and the queue was a quarter of a weighted closure's work. A radix
//! heap was no cheaper: where confidences differ in their low bits, a fact moved
//! between buckets about as often as the tree compared ranks. Lists threaded
//! through one arena cost a cache miss a fact when read.)
//!
//! A stratum of one relation (a closure) queues rows rather than facts
//! ([`FactQueue`]): half the bytes, and 8 % fewer page faults on a weighted
//! closure.

use super::FactId;
use super::relation::Meta;

/// Where a fact's record ranks in the order the facts of a weighted stratum are
/// handed out (less is better): highest confidence first (in the order
/// `f64::total_cmp` gives), then least height. 96 bits: the confidence's 64 above
/// the height's 32.
pub(crate) type Rank = u128;

/// The rank of a fact with record `m`.
#[inline]
pub(crate) fn rank(m: Meta) -> Rank {
    let b = m.conf.to_bits();
    let ascending = if b >> 63 == 1 { !b } else { b | 1 << 63 };
    u128::from(!ascending) << 32 | u128::from(m.height)
}

/// Ranks [`RankQueue`] finds without a hash look-up.
const HINTS: usize = 4;

/// The most facts a list taken out keeps room for.
const KEPT: usize = 16;

/// Facts queued at ranks, taken out best rank first; facts queued at one rank come
/// out in the order they were queued. A fact is a [`FactId`], or, where every fact
/// queued is of one relation, its row (half the bytes a fact).
pub(crate) struct RankQueue<T = FactId> {
    /// The ranks with a list, best on top.
    ranks: std::collections::BinaryHeap<std::cmp::Reverse<Rank>>,
    /// Rank → its list in `slots`.
    lists: rustc_hash::FxHashMap<Rank, u32>,
    /// The lists, those in use and those kept (empty) for later ranks.
    slots: Vec<Vec<T>>,
    /// The slots kept for later ranks.
    spare: Vec<u32>,
    /// The ranks queued last and their slots, the latest first: the facts a
    /// round queues fall in a few ranks (its delta's confidence or their own
    /// lower ones, a height above the delta's), and most find theirs here.
    /// ([`NO_RANK`] where there is none.)
    hints: [(Rank, u32); HINTS],
    /// Facts queued and not taken out.
    len: usize,
    /// Facts the lists have room for.
    room: usize,
}

/// No rank: [`rank`]s take 96 bits.
const NO_RANK: Rank = Rank::MAX;

impl<T> Default for RankQueue<T> {
    fn default() -> RankQueue<T> {
        RankQueue {
            ranks: Default::default(),
            lists: Default::default(),
            slots: Vec::new(),
            spare: Vec::new(),
            hints: [(NO_RANK, 0); HINTS],
            len: 0,
            room: 0,
        }
    }
}

impl<T: Copy> RankQueue<T> {
    /// Queue `fact` at rank `at`.
    #[inline]
    pub fn push(&mut self, at: Rank, fact: T) {
        debug_assert_ne!(at, NO_RANK);
        let slot = match self.hints.iter().find(|&&(k, _)| k == at) {
            Some(&(_, slot)) => slot,
            None => self.slot_of(at),
        };
        let list = &mut self.slots[slot as usize];
        if list.len() == list.capacity() {
            let room = list.capacity();
            list.reserve(1);
            self.room += list.capacity() - room;
        }
        list.push(fact);
        self.len += 1;
    }

    /// The slot of rank `at`'s list, made if there is none, and made the first
    /// hint.
    #[inline(never)]
    fn slot_of(&mut self, at: Rank) -> u32 {
        let slot = match self.lists.entry(at) {
            std::collections::hash_map::Entry::Occupied(list) => *list.get(),
            std::collections::hash_map::Entry::Vacant(list) => {
                let slot = self.spare.pop().unwrap_or_else(|| {
                    self.slots.push(Vec::new());
                    (self.slots.len() - 1) as u32
                });
                list.insert(slot);
                self.ranks.push(std::cmp::Reverse(at));
                slot
            }
        };
        self.hints.rotate_right(1);
        self.hints[0] = (at, slot);
        slot
    }

    /// Take out the facts queued at the best rank, in the order they were queued,
    /// onto `out`; that rank, or `None` when nothing is queued.
    pub fn pop(&mut self, out: &mut Vec<T>) -> Option<Rank> {
        let std::cmp::Reverse(at) = self.ranks.pop()?;
        let slot = self.lists.remove(&at)?;
        for hint in &mut self.hints {
            if hint.0 == at {
                *hint = (NO_RANK, 0);
            }
        }
        let list = &mut self.slots[slot as usize];
        self.len -= list.len();
        self.room -= list.capacity();
        if out.is_empty() {
            // The list itself is handed over, not copied: `out`'s storage takes
            // its place.
            std::mem::swap(out, list);
        } else {
            out.extend_from_slice(list);
            list.clear();
        }
        // A short list is kept for a later rank, a long one given back: kept, the
        // lists of a few busy ranks would hold their room for the rest of the stratum.
        if list.capacity() > KEPT {
            *list = Vec::new();
        }
        self.room += list.capacity();
        self.spare.push(slot);
        Some(at)
    }

    /// Every fact queued with its rank, best rank first; the queue is left empty.
    pub fn drain(&mut self) -> Vec<(Rank, T)> {
        let (mut all, mut out) = (Vec::with_capacity(self.len), Vec::new());
        while let Some(at) = self.pop(&mut out) {
            all.extend(out.drain(..).map(|f| (at, f)));
        }
        all
    }

    /// Facts queued.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes allocated.
    pub fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.room * size_of::<T>()
            + self.slots.capacity() * size_of::<Vec<T>>()
            + self.spare.capacity() * size_of::<u32>()
            + self.ranks.capacity() * size_of::<Rank>()
            // A hash table's bucket and control byte per entry it has room for.
            + self.lists.capacity() * (size_of::<(Rank, u32)>() + 1)
    }
}

/// The queue of a stratum whose facts are handed out best first: of rows, where the
/// stratum has one relation (as most have: a closure's), else of facts.
pub(crate) enum FactQueue {
    /// Every fact queued is of relation `.0`; `.2` takes a rank's rows out.
    One(u32, RankQueue<u32>, Vec<u32>),
    Many(RankQueue<FactId>),
}

impl Default for FactQueue {
    fn default() -> FactQueue {
        FactQueue::Many(RankQueue::default())
    }
}

impl FactQueue {
    /// A queue for the facts of the relations `rels`.
    pub fn new(rels: &[u32]) -> FactQueue {
        match *rels {
            [rel] => FactQueue::One(rel, RankQueue::default(), Vec::new()),
            _ => FactQueue::default(),
        }
    }

    /// Queue `fact` at rank `at`.
    #[inline]
    pub fn push(&mut self, at: Rank, fact: FactId) {
        match self {
            FactQueue::One(rel, q, _) => {
                debug_assert_eq!(fact.rel, *rel, "a fact of another relation");
                q.push(at, fact.row);
            }
            FactQueue::Many(q) => q.push(at, fact),
        }
    }

    /// Take out the facts queued at the best rank, in the order they were queued,
    /// onto `out`; that rank, or `None` when nothing is queued.
    pub fn pop(&mut self, out: &mut Vec<FactId>) -> Option<Rank> {
        match self {
            FactQueue::One(rel, q, rows) => {
                rows.clear();
                let at = q.pop(rows)?;
                let rel = *rel;
                out.extend(rows.iter().map(|&row| FactId { rel, row }));
                Some(at)
            }
            FactQueue::Many(q) => q.pop(out),
        }
    }

    /// Every fact queued with its rank, best rank first; the queue is left empty.
    pub fn drain(&mut self) -> Vec<(Rank, FactId)> {
        match self {
            FactQueue::One(rel, q, _) => {
                let rel = *rel;
                let all = q.drain().into_iter();
                all.map(|(at, row)| (at, FactId { rel, row })).collect()
            }
            FactQueue::Many(q) => q.drain(),
        }
    }

    /// Bytes allocated.
    pub fn bytes(&self) -> usize {
        match self {
            FactQueue::One(_, q, rows) => q.bytes() + rows.capacity() * 4,
            FactQueue::Many(q) => q.bytes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn fact(row: u32) -> FactId {
        FactId { rel: row % 3, row }
    }

    #[test]
    fn ranks_put_confidence_first_then_height() {
        let at = |conf: f64, height: u32| {
            rank(Meta {
                conf,
                height,
                rule: 0,
            })
        };
        assert!(at(0.9, 7) < at(0.8, 0));
        assert!(at(0.9, 1) < at(0.9, 2));
        assert!(at(1.0, 3) < at(0.0, 0));
        assert!(at(0.0, 0) < at(-0.5, 0));
    }

    #[test]
    fn a_rank_queued_better_than_the_last_taken_out_comes_out_next() {
        let mut q = RankQueue::default();
        q.push(10, fact(1));
        q.push(20, fact(2));
        let mut out = Vec::new();
        assert_eq!(q.pop(&mut out), Some(10));
        q.push(5, fact(3));
        q.push(7, fact(4));
        q.push(5, fact(5));
        out.clear();
        assert_eq!(q.pop(&mut out), Some(5));
        assert_eq!(out, [fact(3), fact(5)]);
        out.clear();
        assert_eq!(q.pop(&mut out), Some(7));
        out.clear();
        assert_eq!(q.pop(&mut out), Some(20));
        assert_eq!(out, [fact(2)]);
        assert_eq!(q.pop(&mut out), None);
        assert_eq!(q.len(), 0);
    }

    #[derive(Debug, Clone)]
    enum Op {
        /// Queue a fact at the last rank taken out plus this (which may be negative).
        Push(i64),
        /// Queue a fact at a rank anywhere in 96 bits.
        Far(u128),
        Pop,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (-3i64..40).prop_map(Op::Push),
            1 => (0u128..1 << 96).prop_map(Op::Far),
            3 => Just(Op::Pop),
        ]
    }

    proptest! {
        /// The queue against an ordered map of ranks with a list per rank.
        #[test]
        fn the_queue_takes_out_what_an_ordered_map_would(ops in proptest::collection::vec(op(), 0..400)) {
            let mut q = RankQueue::default();
            let mut oracle: BTreeMap<Rank, Vec<FactId>> = BTreeMap::new();
            let mut last: Rank = 1 << 40;
            let mut row = 0;
            let (mut out, mut queued) = (Vec::new(), 0);
            for op in ops.iter().chain(std::iter::repeat_n(&Op::Pop, 400)) {
                let at = match *op {
                    Op::Push(d) => Some(last.saturating_add_signed(i128::from(d))),
                    Op::Far(at) => Some(at),
                    Op::Pop => None,
                };
                if let Some(at) = at {
                    row += 1;
                    q.push(at, fact(row));
                    oracle.entry(at).or_default().push(fact(row));
                    queued += 1;
                } else {
                    out.clear();
                    let got = q.pop(&mut out);
                    let want = oracle.pop_first();
                    prop_assert_eq!(got, want.as_ref().map(|w| w.0));
                    if let Some((at, facts)) = want {
                        prop_assert_eq!(&out, &facts);
                        last = at;
                        queued -= facts.len();
                    }
                }
                prop_assert_eq!(q.len(), queued);
                prop_assert!(q.bytes() >= queued * std::mem::size_of::<FactId>());
                let room: usize = q.slots.iter().map(Vec::capacity).sum();
                prop_assert_eq!(q.room, room);
            }
        }

        #[test]
        fn draining_yields_every_fact_queued_at_its_rank(
            ranks in proptest::collection::vec(0u128..1 << 96, 0..200),
            pops in 0usize..20,
        ) {
            let mut q = RankQueue::default();
            for (i, &at) in ranks.iter().enumerate() {
                q.push(at, fact(i as u32));
            }
            let mut out = Vec::new();
            let mut taken = Vec::new();
            for _ in 0..pops {
                out.clear();
                if let Some(at) = q.pop(&mut out) {
                    taken.extend(out.iter().map(|f| (at, f.row)));
                }
            }
            taken.extend(q.drain().into_iter().map(|(at, f)| (at, f.row)));
            taken.sort_unstable();
            let mut want: Vec<_> = ranks.iter().enumerate().map(|(i, &at)| (at, i as u32)).collect();
            want.sort_unstable();
            prop_assert_eq!(taken, want);
            prop_assert_eq!(q.len(), 0);
        }

        /// A queue of one relation's rows takes out what a queue of its facts does.
        #[test]
        fn a_queue_of_rows_takes_out_what_a_queue_of_facts_does(
            ops in proptest::collection::vec(op(), 0..300),
            drain_at in 0usize..300,
        ) {
            let (mut one, mut many) = (FactQueue::new(&[7]), FactQueue::new(&[7, 8]));
            prop_assert!(matches!(one, FactQueue::One(..)) && matches!(many, FactQueue::Many(..)));
            let mut last: Rank = 1 << 40;
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for (i, op) in ops.iter().enumerate() {
                if i == drain_at {
                    prop_assert_eq!(one.drain(), many.drain());
                }
                let at = match *op {
                    Op::Push(d) => last.saturating_add_signed(i128::from(d)),
                    Op::Far(at) => at,
                    Op::Pop => {
                        let (got, want) = (one.pop(&mut a), many.pop(&mut b));
                        prop_assert_eq!(got, want);
                        prop_assert_eq!(&a, &b);
                        if let Some(at) = got {
                            last = at;
                        }
                        continue;
                    }
                };
                let fact = FactId { rel: 7, row: i as u32 };
                one.push(at, fact);
                many.push(at, fact);
            }
            prop_assert_eq!(one.drain(), many.drain());
        }
    }
}
