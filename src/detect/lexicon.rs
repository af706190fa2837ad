//! The entity lexicon: every symbol constant of the fact base (input and derived
//! facts) is an entity, named by its own words (`roadmap-review` → "roadmap review")
//! and by the names an alias relation gives it (`alias("alice", "Alice Moreau")`,
//! whose single capitalised words "Alice" and "Moreau" name it too). Mentions are
//! matched case-insensitively, longest first. Ordinary English words (an embedded
//! word list) tell a capitalised common word ("Marketing") from a proper name
//! ("Sarah").

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::LazyLock;

use crate::eval::FactBase;
use crate::ir::RelId;
use crate::value::{ColumnType, Value};

use super::text::{Token, name_words};

static WORDS_TEXT: &str = include_str!("words.txt");

/// Ordinary English words (lower case).
static ORDINARY: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    let mut set: HashSet<&'static str> = WORDS_TEXT
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    // Words that are capitalised in writing but name no entity of a fact base.
    set.extend([
        "i",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "january",
        "february",
        "march",
        "april",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "english",
        "ok",
        "okay",
        "hi",
        "hello",
        "thanks",
        "yes",
        "no",
        "q1",
        "q2",
        "q3",
        "q4",
        "email",
        "emails",
        "online",
        "offline",
        "website",
        "inbox",
        "etc",
        "ceo",
        "cto",
        "cfo",
        "hr",
        "it",
        "ai",
        "faq",
        "pdf",
        "url",
        "api",
        "id",
        "ids",
        "am",
        "pm",
        "utc",
        "internet",
    ]);
    set
});

/// Whether a lower-case word is an ordinary English word.
pub(crate) fn is_ordinary(word: &str) -> bool {
    // A contraction is as ordinary as the word it contracts ("I'm", "we've").
    if let Some((head, _)) = word.split_once('\'') {
        return !head.is_empty() && (head.len() == 1 || is_ordinary(head));
    }
    ORDINARY.contains(word)
        || word
            .strip_suffix('s')
            .is_some_and(|w| w.len() > 2 && ORDINARY.contains(w))
}

/// One entity of the fact base.
#[derive(Debug, Clone)]
pub(crate) struct Entity {
    /// The symbol as stored.
    pub symbol: String,
    /// How to write it: its longest alias, else its symbol with `-`/`_` as spaces.
    pub display: String,
    /// Every (relation, column) it occurs in.
    pub columns: BTreeSet<(RelId, usize)>,
    /// The names of those columns (`person`, `department`).
    pub column_names: BTreeSet<String>,
    /// Facts it occurs in.
    pub facts: usize,
}

/// The entity lexicon (see the module documentation).
pub(crate) struct Lexicon {
    pub entities: Vec<Entity>,
    by_symbol: HashMap<String, usize>,
    /// Surface words joined by one space → entities (full names first).
    surfaces: HashMap<String, Vec<usize>>,
    /// Single words that are parts of alias names, for typo suggestions.
    parts: HashMap<String, Vec<usize>>,
    /// Surfaces by length in characters, for typo search.
    by_length: Vec<Vec<(String, Vec<usize>)>>,
    max_words: usize,
    /// Symbol columns whose values are mostly ordinary words (`department`): an
    /// unknown ordinary word can stand for one of their values.
    ordinary_columns: HashSet<(RelId, usize)>,
}

impl Lexicon {
    /// Build from every fact of `fb`, with `alias` (entity, name) facts as names.
    pub fn build(fb: &FactBase, alias: Option<RelId>) -> Lexicon {
        let program = fb.program();
        let mut entities: Vec<Entity> = Vec::new();
        let mut by_symbol: HashMap<String, usize> = HashMap::new();
        let mut aliases: Vec<(usize, String)> = Vec::new();
        let mut column_values: HashMap<(RelId, usize), HashSet<usize>> = HashMap::new();
        for (rel, relation) in program.relations().iter().enumerate() {
            let rel = rel as RelId;
            let symbol_cols: Vec<usize> = relation
                .columns
                .iter()
                .enumerate()
                .filter(|(_, c)| c.ty == ColumnType::Symbol)
                .map(|(i, _)| i)
                .collect();
            if symbol_cols.is_empty() {
                continue;
            }
            for fact in fb.facts(rel) {
                let args = fb.args(fact);
                if Some(rel) == alias {
                    if let (Some(Value::Symbol(e)), Some(Value::Symbol(name))) =
                        (args.first(), args.get(1))
                    {
                        let id = intern(&mut entities, &mut by_symbol, e);
                        aliases.push((id, name.clone()));
                    }
                    continue;
                }
                let mut seen = BTreeSet::new();
                for &c in &symbol_cols {
                    if let Value::Symbol(s) = &args[c] {
                        let id = intern(&mut entities, &mut by_symbol, s);
                        let e = &mut entities[id];
                        e.columns.insert((rel, c));
                        e.column_names
                            .insert(relation.columns[c].name.to_lowercase());
                        if seen.insert(id) {
                            e.facts += 1;
                        }
                        column_values.entry((rel, c)).or_default().insert(id);
                    }
                }
            }
        }
        let mut surfaces: HashMap<String, Vec<usize>> = HashMap::new();
        let mut max_words = 1;
        let mut add = |key: Vec<String>, id: usize, surfaces: &mut HashMap<String, Vec<usize>>| {
            if key.is_empty() {
                return;
            }
            max_words = max_words.max(key.len());
            let ids = surfaces.entry(key.join(" ")).or_default();
            if !ids.contains(&id) {
                ids.push(id);
            }
        };
        for (id, e) in entities.iter().enumerate() {
            add(name_words(&e.symbol), id, &mut surfaces);
        }
        let mut parts: HashMap<String, Vec<usize>> = HashMap::new();
        for (id, name) in &aliases {
            add(name_words(name), *id, &mut surfaces);
            if name.len() > entities[*id].display.len()
                || entities[*id].display == entities[*id].symbol
            {
                entities[*id].display = name.clone();
            }
        }
        // Single capitalised words of multi-word names ("Alice", "Moreau").
        for (id, name) in &aliases {
            let words: Vec<&str> = name.split_whitespace().collect();
            if words.len() < 2 {
                continue;
            }
            for w in words {
                let lower = w.to_lowercase();
                if w.chars().next().is_some_and(char::is_uppercase)
                    && lower.len() >= 3
                    && !is_ordinary(&lower)
                {
                    add(vec![lower.clone()], *id, &mut surfaces);
                    parts.entry(lower).or_default().push(*id);
                }
            }
        }
        for e in &mut entities {
            if e.display == e.symbol {
                e.display = e.symbol.replace(['-', '_'], " ");
            }
        }
        let ordinary_columns = column_values
            .into_iter()
            .filter(|(_, ids)| {
                let ordinary = ids
                    .iter()
                    .filter(|&&id| {
                        name_words(&entities[id].symbol)
                            .iter()
                            .all(|w| is_ordinary(w))
                    })
                    .count();
                ordinary * 2 >= ids.len()
            })
            .map(|(k, _)| k)
            .collect();
        let mut by_length: Vec<Vec<(String, Vec<usize>)>> = Vec::new();
        for (surface, ids) in &surfaces {
            let n = surface.chars().count();
            if by_length.len() <= n {
                by_length.resize(n + 1, Vec::new());
            }
            by_length[n].push((surface.clone(), ids.clone()));
        }
        for bucket in &mut by_length {
            bucket.sort();
        }
        Lexicon {
            entities,
            by_symbol,
            surfaces,
            parts,
            by_length,
            max_words,
            ordinary_columns,
        }
    }

    /// The entity with this symbol.
    pub fn by_symbol(&self, s: &str) -> Option<usize> {
        self.by_symbol.get(s).copied()
    }

    /// Entities named by exactly these lower-case words.
    pub fn lookup(&self, words: &[&str]) -> Option<&[usize]> {
        self.surfaces.get(&words.join(" ")).map(Vec::as_slice)
    }

    /// Lexicon names starting at token `i`, longest first: `(tokens, entities)`.
    pub fn matches_at(&self, toks: &[Token], i: usize) -> Vec<(usize, &[usize])> {
        let mut out = Vec::new();
        let mut words: Vec<&str> = Vec::new();
        for t in toks.iter().skip(i).take(self.max_words) {
            if !t.is_word() && t.kind != super::text::Kind::Number {
                break;
            }
            words.push(&t.lower);
            if let Some(ids) = self.lookup(&words) {
                out.push((words.len(), ids));
            }
        }
        out.reverse();
        out
    }

    /// Whether an unknown ordinary word may be a value of this column.
    pub fn ordinary_column(&self, rel: RelId, col: usize) -> bool {
        self.ordinary_columns.contains(&(rel, col))
    }

    /// Entities whose names are close to `name` (a likely typo): edit distance at most
    /// 1 for names up to 5 letters, 2 beyond, on the whole name or on any single word
    /// of an alias.
    pub fn similar(&self, name: &str) -> Vec<usize> {
        let key = name_words(name).join(" ");
        if key.len() < 3 {
            return Vec::new();
        }
        let n = key.chars().count();
        let budget = if n <= 5 { 1 } else { 2 };
        let (first, last) = (key.chars().next(), key.chars().last());
        let mut out = BTreeSet::new();
        for len in n.saturating_sub(budget)..=n + budget {
            for (surface, ids) in self.by_length.get(len).into_iter().flatten() {
                // A typo keeps the first or the last letter.
                if (surface.chars().next() == first || surface.chars().last() == last)
                    && surface != &key
                    && crate::diag::edit_distance(surface, &key) <= budget
                {
                    out.extend(ids.iter().copied());
                }
            }
        }
        // A known first name with an unknown surname, or the other way round.
        let words = name_words(name);
        if words.len() > 1 {
            for w in &words {
                if let Some(ids) = self.parts.get(w) {
                    out.extend(ids.iter().copied());
                }
            }
        }
        out.into_iter().collect()
    }
}

fn intern(entities: &mut Vec<Entity>, by_symbol: &mut HashMap<String, usize>, s: &str) -> usize {
    if let Some(&id) = by_symbol.get(s) {
        return id;
    }
    entities.push(Entity {
        symbol: s.to_string(),
        display: s.to_string(),
        columns: BTreeSet::new(),
        column_names: BTreeSet::new(),
        facts: 0,
    });
    by_symbol.insert(s.to_string(), entities.len() - 1);
    entities.len() - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_words() {
        assert!(is_ordinary("marketing"));
        assert!(is_ordinary("department"));
        assert!(is_ordinary("meetings"));
        assert!(!is_ordinary("sarah"));
        assert!(!is_ordinary("priya"));
        assert!(is_ordinary("i'm"));
    }
}
