//! Claim extraction: the pack's `.text` verbalisations read in reverse.
//!
//! A template such as `"{0} works in the {1} department"` becomes a pattern of words
//! and slots. It matches a sentence case-insensitively, word by word on crude stems
//! (so "work", "worked" and "works" agree, as do "took" and "takes"); between two of
//! its parts up to [`MAX_SKIP`] auxiliary, negating or adverbial words may stand
//! ("does not work", "has also left"); an article of the template may be missing,
//! and so may a template word next to a slot that is the slot column's own name (the
//! "department" of "{1} department" when the column is `department`). A slot
//! captures a known entity (longest lexicon name), a date, a number (digits or a
//! number word), a pronoun (resolved to the last entity that can fill the column), an
//! unknown capitalised name, or — only for a column whose values are ordinary words —
//! one to three ordinary words. A negator among the skipped words, or "not true
//! that" just before the match, makes the claim negative. Lists ("Alice and Carol
//! attended …") give one claim per member, and a clause joined by "and" that omits
//! its subject ("… and reports to Carol") takes the previous claim's.

use crate::ir::{Program, RelId};
use crate::value::ColumnType;

use super::lexicon::{Lexicon, is_ordinary};
use super::temporal::{DateExpr, Tense, tense_of};
use super::text::{
    ARTICLES, BOUNDARIES, FILLERS, Kind, NEGATORS, PRONOUNS, Temporal, Token, integer, number_word,
    stem, temporals, tokenize,
};

/// Most words a match may skip between two of its parts.
pub const MAX_SKIP: usize = 3;

/// Most words an ordinary-word slot value may have.
const MAX_WORDS: usize = 3;

#[derive(Debug, Clone)]
enum Elem {
    Lit { stem: String, optional: bool },
    Slot { col: usize },
}

/// A relation's `.text` template as a pattern.
#[derive(Debug, Clone)]
pub(crate) struct Template {
    pub rel: RelId,
    elems: Vec<Elem>,
    /// Two slots joined only by "and" (`{0} and {1} are colleagues`): the relation is
    /// read as symmetric in them.
    symmetric: Option<(usize, usize)>,
}

impl Template {
    /// Every relation's template that has at least one required word.
    pub fn all(program: &Program) -> Vec<Template> {
        program
            .relations()
            .iter()
            .enumerate()
            .filter_map(|(rel, r)| {
                let text = r.text.as_deref()?;
                let names: Vec<String> = r.columns.iter().map(|c| c.name.to_lowercase()).collect();
                Template::compile(rel as RelId, text, &names)
            })
            .collect()
    }

    fn compile(rel: RelId, text: &str, col_names: &[String]) -> Option<Template> {
        let mut elems = Vec::new();
        let mut rest = text;
        let push_words = |s: &str, elems: &mut Vec<Elem>| {
            for t in tokenize(s, 0, s.len()) {
                if t.is_word() {
                    elems.push(Elem::Lit {
                        stem: stem(&t.lower),
                        optional: ARTICLES.contains(&t.lower.as_str()),
                    });
                }
            }
        };
        while let Some(open) = rest.find('{') {
            push_words(&rest[..open], &mut elems);
            let after = &rest[open + 1..];
            let close = after.find('}')?;
            let col: usize = after[..close].parse().ok()?;
            if col >= col_names.len() {
                return None;
            }
            elems.push(Elem::Slot { col });
            rest = &after[close + 1..];
        }
        push_words(rest, &mut elems);
        // A word next to a slot that names the slot's column is optional.
        for i in 0..elems.len() {
            let neighbours = [i.checked_sub(1), Some(i + 1)];
            let names_col = neighbours
                .iter()
                .flatten()
                .any(|&j| match (elems.get(j), &elems[i]) {
                    (Some(Elem::Slot { col }), Elem::Lit { stem: s, .. }) => {
                        stem(&col_names[*col]) == *s
                    }
                    _ => false,
                });
            if names_col && let Elem::Lit { optional, .. } = &mut elems[i] {
                *optional = true;
            }
        }
        let required = elems.iter().any(|e| {
            matches!(
                e,
                Elem::Lit {
                    optional: false,
                    ..
                }
            )
        });
        let slots = elems
            .iter()
            .filter(|e| matches!(e, Elem::Slot { .. }))
            .count();
        let and = stem("and");
        let symmetric = elems.windows(3).find_map(|w| match w {
            [
                Elem::Slot { col: a },
                Elem::Lit { stem: s, .. },
                Elem::Slot { col: b },
            ] if *s == and => Some((*a, *b)),
            _ => None,
        });
        (required && slots > 0).then_some(Template {
            rel,
            elems,
            symmetric,
        })
    }

    /// Stems of the optional words that name a neighbouring slot's column.
    pub fn class_words(&self) -> impl Iterator<Item = &str> {
        self.elems.iter().enumerate().filter_map(|(i, e)| match e {
            Elem::Lit {
                stem,
                optional: true,
            } if !ARTICLES.contains(&stem.as_str()) => {
                let next_to_slot = [i.checked_sub(1), Some(i + 1)]
                    .into_iter()
                    .flatten()
                    .any(|j| matches!(self.elems.get(j), Some(Elem::Slot { .. })));
                next_to_slot.then_some(stem.as_str())
            }
            _ => None,
        })
    }

    fn starts_with_slot(&self) -> Option<usize> {
        match self.elems.first() {
            Some(Elem::Slot { col }) => Some(*col),
            _ => None,
        }
    }
}

/// What a slot captured.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ArgValue {
    /// Known entities (ambiguous names give several).
    Entity(Vec<usize>),
    /// An integer.
    Number(i64),
    /// A date, full or partial.
    Date(DateExpr),
    /// An unknown proper name.
    Name(String),
    /// Unknown ordinary words (lower case).
    Word(String),
    /// A pronoun no entity could be found for.
    Unresolved(String),
}

/// One argument of a claim, with where it is written.
#[derive(Debug, Clone)]
pub(crate) struct Arg {
    pub start: usize,
    pub end: usize,
    pub text: String,
    pub value: ArgValue,
}

/// A claim extracted from a sentence: a fact of `rel` asserted (or denied).
#[derive(Debug, Clone)]
pub(crate) struct Claim {
    pub rel: RelId,
    /// One per column.
    pub args: Vec<Arg>,
    pub negated: bool,
    /// Byte span of the matched words.
    pub start: usize,
    pub end: usize,
    pub tense: Tense,
    /// Index of its sentence.
    pub sentence: usize,
    /// In a question or an `if` clause: not asserted.
    pub hypothetical: bool,
    /// Columns the relation is symmetric in (from its template).
    pub symmetric: Option<(usize, usize)>,
}

/// An entity mention of a sentence.
#[derive(Debug, Clone)]
pub(crate) struct Mention {
    pub first: usize,
    pub last: usize,
    pub start: usize,
    pub end: usize,
    pub text: String,
    pub kind: MentionKind,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum MentionKind {
    /// A lexicon name; `ordinary` when it is made of ordinary lower-case words.
    Known { ids: Vec<usize>, ordinary: bool },
    /// A capitalised name the lexicon does not know.
    ProperName,
    /// `the <words> <class word>` with words the lexicon does not know.
    Description,
}

/// One analysed sentence.
#[derive(Debug, Clone)]
pub(crate) struct Sentence {
    pub index: usize,
    pub start: usize,
    pub end: usize,
    pub text: String,
    pub toks: Vec<Token>,
    pub temporals: Vec<Temporal>,
    pub mentions: Vec<Mention>,
    pub claims: Vec<Claim>,
    pub question: bool,
    pub hypothetical: bool,
    /// Citation tags it carries.
    pub tags: Vec<String>,
    pub unverified: bool,
}

/// Entities mentioned so far, most recent last, for pronouns.
#[derive(Debug, Default, Clone)]
pub(crate) struct Context {
    recent: Vec<usize>,
    /// Subjects (first arguments) of claims, most recent last: a pronoun prefers them.
    subjects: Vec<usize>,
}

impl Context {
    fn note(&mut self, ids: &[usize]) {
        if ids.len() == 1 {
            self.recent.retain(|&x| x != ids[0]);
            self.recent.push(ids[0]);
        }
    }

    fn note_subject(&mut self, ids: &[usize]) {
        if ids.len() == 1 {
            self.subjects.retain(|&x| x != ids[0]);
            self.subjects.push(ids[0]);
        }
    }
}

/// The extractor: templates over a lexicon.
pub(crate) struct Extractor<'a> {
    pub program: &'a Program,
    pub lexicon: &'a Lexicon,
    pub templates: &'a [Template],
    /// Stems of the words templates use to name a slot's column ("department",
    /// "meeting"): `the <unknown words> <class word>` describes a thing of that kind.
    pub class_words: &'a std::collections::HashSet<String>,
}

#[derive(Clone)]
struct Partial {
    args: Vec<(usize, usize, usize, ArgValue)>,
    negated: bool,
}

struct Match {
    tpl: usize,
    first: usize,
    last: usize,
    args: Vec<(usize, usize, usize, ArgValue)>,
    negated: bool,
    score: usize,
}

impl Extractor<'_> {
    /// Analyse every sentence of `text`.
    pub fn analyse(&self, text: &str, context: &mut Context, first_index: usize) -> Vec<Sentence> {
        let segments = crate::answer::segment::segment(text);
        let mut out: Vec<Sentence> = Vec::with_capacity(segments.len());
        for seg in segments {
            // A segment made only of citation brackets belongs to the sentence before.
            let toks = tokenize(text, seg.start, seg.end);
            if toks.iter().all(|t| t.kind == Kind::Punct)
                && let Some(prev) = out.last_mut()
            {
                prev.tags
                    .extend(crate::answer::firewall::cited_tags(&seg.text));
                prev.end = seg.end;
                continue;
            }
            let index = first_index + out.len();
            out.push(self.sentence(text, seg.start, seg.end, toks, index, context));
        }
        out
    }

    fn sentence(
        &self,
        text: &str,
        start: usize,
        end: usize,
        toks: Vec<Token>,
        index: usize,
        context: &mut Context,
    ) -> Sentence {
        let raw = &text[start..end];
        let temporals = temporals(&toks);
        let question = raw.trim_end().ends_with('?') && !tag_question(&toks);
        let first_word = toks.iter().find(|t| t.is_word()).map(|t| t.lower.as_str());
        let hypothetical = question
            || matches!(
                first_word,
                Some("if" | "whether" | "unless" | "suppose" | "assuming" | "should")
            );
        let mentions = self.mentions(&toks, &temporals);
        let mut claims = self.claims(&toks, &temporals, &mentions, context, index, hypothetical);
        for c in &mut claims {
            c.sentence = index;
        }
        Sentence {
            index,
            start,
            end,
            text: raw.to_string(),
            toks,
            temporals,
            mentions,
            claims,
            question,
            hypothetical,
            tags: crate::answer::firewall::cited_tags(raw),
            unverified: crate::answer::firewall::has_unverified_marker(raw),
        }
    }

    /// Known names, unknown proper names and unknown definite descriptions.
    fn mentions(&self, toks: &[Token], temporals: &[Temporal]) -> Vec<Mention> {
        let in_temporal = |i: usize| temporals.iter().any(|t| (t.first..t.last).contains(&i));
        let first_word = toks.iter().position(Token::is_word).unwrap_or(0);
        let mut out = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            if in_temporal(i) || !toks[i].is_word() && toks[i].kind != Kind::Number {
                i += 1;
                continue;
            }
            let run = self.proper_run(toks, i, first_word);
            if let Some((len, ids)) = self.lexicon.matches_at(toks, i).into_iter().next()
                && run.is_none_or(|r| r <= i + len)
            {
                let ordinary = toks[i..i + len]
                    .iter()
                    .all(|t| !t.cap && is_ordinary(&t.lower));
                out.push(self.mention(
                    toks,
                    i,
                    i + len,
                    MentionKind::Known {
                        ids: ids.to_vec(),
                        ordinary,
                    },
                ));
                i += len;
                continue;
            }
            if let Some(last) = run {
                out.push(self.mention(toks, i, last, MentionKind::ProperName));
                i = last;
                continue;
            }
            if let Some(last) = self.description(toks, i) {
                out.push(self.mention(toks, i + 1, last, MentionKind::Description));
                i = last;
                continue;
            }
            i += 1;
        }
        out
    }

    fn mention(&self, toks: &[Token], first: usize, last: usize, kind: MentionKind) -> Mention {
        Mention {
            first,
            last,
            start: toks[first].start,
            end: toks[last - 1].end,
            text: join(toks, first, last),
            kind,
        }
    }

    /// A run of capitalised words at `i` that holds at least one word that is neither
    /// ordinary nor a known name's start; returns the index after it. A sentence's
    /// first word, all-capital acronyms and ordinary words do not start one.
    fn proper_run(&self, toks: &[Token], i: usize, first_word: usize) -> Option<usize> {
        let cap = |k: usize| {
            toks.get(k).is_some_and(|t| {
                t.is_word()
                    && t.cap
                    && !(t.text.len() <= 5
                        && t.text
                            .chars()
                            .all(|c| c.is_uppercase() || c.is_ascii_digit()))
            })
        };
        if !cap(i) {
            return None;
        }
        if i == first_word && is_ordinary(&toks[i].lower) {
            return None;
        }
        let mut last = i;
        while cap(last)
            || (matches!(
                toks.get(last).map(|t| t.lower.as_str()),
                Some("de" | "van" | "von" | "da" | "del" | "al")
            ) && cap(last + 1)
                && last > i)
        {
            last += 1;
        }
        let proper = toks[i..last]
            .iter()
            .any(|t| !is_ordinary(&t.lower) && self.lexicon.lookup(&[t.lower.as_str()]).is_none());
        proper.then_some(last)
    }

    /// `the <1–2 unknown words> <class word>`: returns the index after the class word.
    fn description(&self, toks: &[Token], i: usize) -> Option<usize> {
        if toks[i].lower != "the" || !self.lexicon.matches_at(toks, i + 1).is_empty() {
            return None;
        }
        for n in 1..=2 {
            let class = toks.get(i + 1 + n)?;
            let words = &toks[i + 1..i + 1 + n];
            if !class.is_word() || !self.class_words.contains(&stem(&class.lower)) {
                continue;
            }
            let plain = words.iter().all(|t| {
                t.is_word()
                    && !DESCRIPTION_STOP.contains(&t.lower.as_str())
                    && !FILLERS.contains(&t.lower.as_str())
                    && !BOUNDARIES.contains(&t.lower.as_str())
            });
            let ws: Vec<&str> = words.iter().map(|t| t.lower.as_str()).collect();
            if plain
                && self.lexicon.lookup(&ws).is_none()
                && words
                    .iter()
                    .all(|t| self.lexicon.lookup(&[t.lower.as_str()]).is_none())
            {
                return Some(i + 2 + n);
            }
        }
        None
    }

    fn claims(
        &self,
        toks: &[Token],
        temporals: &[Temporal],
        mentions: &[Mention],
        context: &mut Context,
        sentence: usize,
        hypothetical: bool,
    ) -> Vec<Claim> {
        let mut found: Vec<Match> = Vec::new();
        for i in 0..toks.len() {
            for (t, tpl) in self.templates.iter().enumerate() {
                if let Some(m) = self.match_template(t, tpl, toks, temporals, i) {
                    found.push(m);
                }
            }
        }
        // Best first, then keep those that do not overlap a better one.
        found.sort_by(|a, b| b.score.cmp(&a.score).then(a.first.cmp(&b.first)));
        let mut chosen: Vec<Match> = Vec::new();
        for m in found {
            if chosen
                .iter()
                .all(|c| m.last <= c.first || m.first >= c.last)
            {
                chosen.push(m);
            }
        }
        // Clauses that omit the subject after "and": "… and reports to Carol".
        chosen.sort_by_key(|m| m.first);
        let mut extra = Vec::new();
        for w in 0..chosen.len() {
            let prev = &chosen[w];
            let Some(subject_col) = self.templates[prev.tpl].starts_with_slot() else {
                continue;
            };
            let Some(subject) = prev.args.iter().find(|a| a.0 == subject_col).cloned() else {
                continue;
            };
            let next_first = chosen.get(w + 1).map_or(toks.len(), |n| n.first);
            let mut k = prev.last;
            while k < next_first && toks[k].lower != "and" && toks[k].lower != "but" {
                k += 1;
            }
            if k + 1 >= next_first {
                continue;
            }
            for (t, tpl) in self.templates.iter().enumerate() {
                if tpl.starts_with_slot().is_none() {
                    continue;
                }
                let mut p = Partial {
                    args: vec![subject.clone()],
                    negated: false,
                };
                if let Some(last) = self.match_elems(tpl, 1, k + 1, toks, temporals, &mut p, false)
                    && last <= next_first
                {
                    extra.push(Match {
                        tpl: t,
                        first: k + 1,
                        last,
                        args: p.args,
                        negated: p.negated,
                        score: 0,
                    });
                    break;
                }
            }
        }
        chosen.extend(extra);
        chosen.sort_by_key(|m| m.first);

        // Resolve pronouns in reading order, noting mentions as they pass.
        let mut claims = Vec::new();
        let mut next_mention = 0;
        for m in chosen {
            while next_mention < mentions.len() && mentions[next_mention].last <= m.first {
                if let MentionKind::Known { ids, .. } = &mentions[next_mention].kind {
                    context.note(ids);
                }
                next_mention += 1;
            }
            let mut negated = m.negated;
            // "It is not true that …", "it is false that …"
            let before: Vec<&str> = toks[m.first.saturating_sub(5)..m.first]
                .iter()
                .map(|t| t.lower.as_str())
                .collect();
            if before.contains(&"that")
                && (before.contains(&"false")
                    || (before.contains(&"not")
                        && (before.contains(&"true") || before.contains(&"case"))))
            {
                negated = !negated;
            }
            let words: Vec<&str> = toks[m.first..m.last]
                .iter()
                .map(|t| t.lower.as_str())
                .collect();
            let tense = tense_of(&words);
            let rel = self.templates[m.tpl].rel;
            let mut per_col: Vec<Vec<Arg>> = vec![Vec::new(); self.program.relation(rel).arity()];
            for (col, first, last, value) in &m.args {
                let items = self.expand(toks, *first, *last, value.clone(), rel, *col, context);
                per_col[*col].extend(items);
            }
            if per_col.iter().any(Vec::is_empty) {
                continue;
            }
            for args in cartesian(&per_col, 8) {
                for a in &args {
                    if let ArgValue::Entity(ids) = &a.value {
                        context.note(ids);
                    }
                }
                if let Some(ArgValue::Entity(ids)) = args.first().map(|a| &a.value) {
                    context.note_subject(ids);
                }
                claims.push(Claim {
                    rel,
                    args,
                    negated,
                    start: toks[m.first].start,
                    end: toks[m.last - 1].end,
                    tense,
                    sentence,
                    hypothetical,
                    symmetric: self.templates[m.tpl].symmetric,
                });
            }
        }
        claims
    }

    /// A captured value as claim arguments: a list gives one per member, a pronoun
    /// its antecedent.
    #[allow(clippy::too_many_arguments)]
    fn expand(
        &self,
        toks: &[Token],
        first: usize,
        last: usize,
        value: ArgValue,
        rel: RelId,
        col: usize,
        context: &Context,
    ) -> Vec<Arg> {
        let arg = |first: usize, last: usize, value: ArgValue| Arg {
            start: toks[first].start,
            end: toks[last - 1].end,
            text: join(toks, first, last),
            value,
        };
        if let ArgValue::Unresolved(p) = &value {
            let col_name = self.program.relation(rel).columns[col].name.to_lowercase();
            let fits = |id: &&usize| {
                let e = &self.lexicon.entities[**id];
                e.columns.contains(&(rel, col)) || e.column_names.contains(&col_name)
            };
            let found = context
                .subjects
                .iter()
                .rev()
                .find(fits)
                .or_else(|| context.recent.iter().rev().find(fits));
            let value = match found {
                Some(&id) => ArgValue::Entity(vec![id]),
                None => ArgValue::Unresolved(p.clone()),
            };
            return vec![arg(first, last, value)];
        }
        // A list of names: split on "," and "and".
        let is_list = matches!(value, ArgValue::Entity(_) | ArgValue::Name(_))
            && toks[first..last]
                .iter()
                .any(|t| t.lower == "and" || t.lower == ",");
        if !is_list {
            return vec![arg(first, last, value)];
        }
        let mut out = Vec::new();
        let mut k = first;
        while k < last {
            let mut j = k;
            while j < last && toks[j].lower != "and" && toks[j].lower != "," {
                j += 1;
            }
            if j > k {
                let words: Vec<&str> = toks[k..j].iter().map(|t| t.lower.as_str()).collect();
                let v = match self.lexicon.lookup(&words) {
                    Some(ids) => ArgValue::Entity(ids.to_vec()),
                    None => ArgValue::Name(join(toks, k, j)),
                };
                out.push(arg(k, j, v));
            }
            k = j + 1;
        }
        out
    }

    fn match_template(
        &self,
        t: usize,
        tpl: &Template,
        toks: &[Token],
        temporals: &[Temporal],
        i: usize,
    ) -> Option<Match> {
        if !(toks[i].is_word() || toks[i].kind == Kind::Number) {
            return None;
        }
        let mut p = Partial {
            args: Vec::new(),
            negated: false,
        };
        let last = self.match_elems(tpl, 0, i, toks, temporals, &mut p, true)?;
        let score = p
            .args
            .iter()
            .map(|a| match a.3 {
                ArgValue::Entity(_) => 4,
                ArgValue::Date(_) | ArgValue::Number(_) => 3,
                ArgValue::Unresolved(_) | ArgValue::Name(_) => 2,
                ArgValue::Word(_) => 1,
            })
            .sum::<usize>()
            * 100
            + (last - i);
        Some(Match {
            tpl: t,
            first: i,
            last,
            args: p.args,
            negated: p.negated,
            score,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn match_elems(
        &self,
        tpl: &Template,
        e: usize,
        pos: usize,
        toks: &[Token],
        temporals: &[Temporal],
        p: &mut Partial,
        first: bool,
    ) -> Option<usize> {
        let Some(elem) = tpl.elems.get(e) else {
            return boundary(toks, pos).then_some(pos);
        };
        let max_skip = if first { 0 } else { MAX_SKIP };
        for skip in 0..=max_skip {
            let k = pos + skip;
            if k > toks.len() || (skip > 0 && !FILLERS.contains(&toks[k - 1].lower.as_str())) {
                break;
            }
            let negs = toks[pos..k]
                .iter()
                .filter(|t| NEGATORS.contains(&t.lower.as_str()))
                .count();
            match elem {
                Elem::Lit { stem: s, .. } => {
                    if k < toks.len() && toks[k].is_word() && stem(&toks[k].lower) == *s {
                        let saved = p.clone();
                        p.negated ^= negs % 2 == 1;
                        if let Some(end) =
                            self.match_elems(tpl, e + 1, k + 1, toks, temporals, p, false)
                        {
                            return Some(end);
                        }
                        *p = saved;
                    }
                }
                Elem::Slot { col } => {
                    if k >= toks.len() {
                        break;
                    }
                    for (end, value) in self.candidates(tpl.rel, *col, toks, temporals, k) {
                        let saved = p.clone();
                        p.negated ^= negs % 2 == 1;
                        p.args.push((*col, k, end, value));
                        if let Some(end) =
                            self.match_elems(tpl, e + 1, end, toks, temporals, p, false)
                        {
                            return Some(end);
                        }
                        *p = saved;
                    }
                }
            }
        }
        if let Elem::Lit { optional: true, .. } = elem {
            return self.match_elems(tpl, e + 1, pos, toks, temporals, p, first);
        }
        None
    }

    /// What a slot of `rel`'s column `col` may capture at token `i`, best first:
    /// `(index after it, value)`.
    fn candidates(
        &self,
        rel: RelId,
        col: usize,
        toks: &[Token],
        temporals: &[Temporal],
        i: usize,
    ) -> Vec<(usize, ArgValue)> {
        let ty = self.program.relation(rel).columns[col].ty;
        let mut out = Vec::new();
        let t = &toks[i];
        if ty != ColumnType::Symbol {
            if let Some(tm) = temporals.iter().find(|tm| tm.first == i)
                && (tm.expr.is_day() || tm.expr.month.is_some())
            {
                out.push((tm.last, ArgValue::Date(tm.expr)));
            }
            if let Some(n) = integer(&t.lower).or_else(|| number_word(&t.lower)) {
                out.push((i + 1, ArgValue::Number(n)));
            }
            return out;
        }
        let start = if ARTICLES.contains(&t.lower.as_str()) {
            i + 1
        } else {
            i
        };
        if start >= toks.len() {
            return out;
        }
        let t = &toks[start];
        if PRONOUNS.contains(&t.lower.as_str()) && start == i {
            out.push((i + 1, ArgValue::Unresolved(t.lower.clone())));
            return out;
        }
        let first_word = toks.iter().position(Token::is_word).unwrap_or(0);
        let run = self.proper_run(toks, start, first_word);
        let mut singles: Vec<(usize, ArgValue)> = Vec::new();
        for (len, ids) in self.lexicon.matches_at(toks, start) {
            if run.is_none_or(|r| r <= start + len) {
                singles.push((start + len, ArgValue::Entity(ids.to_vec())));
            }
        }
        if let Some(last) = run {
            singles.push((last, ArgValue::Name(join(toks, start, last))));
        }
        if self.lexicon.ordinary_column(rel, col) {
            let mut k = start;
            while k < toks.len() && k < start + MAX_WORDS {
                let w = &toks[k];
                let plain = w.is_word()
                    && !FILLERS.contains(&w.lower.as_str())
                    && !BOUNDARIES.contains(&w.lower.as_str())
                    && !ARTICLES.contains(&w.lower.as_str())
                    && !PRONOUNS.contains(&w.lower.as_str());
                if !plain {
                    break;
                }
                k += 1;
                let words: Vec<&str> = toks[start..k].iter().map(|t| t.lower.as_str()).collect();
                singles.push((k, ArgValue::Word(words.join(" "))));
            }
        }
        // Lists: "Alice and Carol", "Alice, Bob and Carol".
        for (end, value) in &singles {
            if !matches!(value, ArgValue::Entity(_) | ArgValue::Name(_)) {
                continue;
            }
            let mut k = *end;
            let mut list_end = None;
            loop {
                let sep = toks.get(k).map(|t| t.lower.as_str());
                let after = match sep {
                    Some(",") if toks.get(k + 1).is_some_and(|t| t.lower == "and") => k + 2,
                    Some(",") | Some("and") => k + 1,
                    _ => break,
                };
                let Some(next) = self.name_at(toks, after, first_word) else {
                    break;
                };
                let was_and = sep == Some("and") || after == k + 2;
                k = next;
                if was_and {
                    list_end = Some(k);
                    break;
                }
            }
            if let Some(e) = list_end {
                out.push((e, value.clone()));
            }
        }
        out.extend(singles);
        out
    }

    /// A known or proper name at `i` (for lists): the index after it.
    fn name_at(&self, toks: &[Token], i: usize, first_word: usize) -> Option<usize> {
        if i >= toks.len() {
            return None;
        }
        if let Some((len, _)) = self.lexicon.matches_at(toks, i).into_iter().next() {
            return Some(i + len);
        }
        self.proper_run(toks, i, first_word)
    }
}

/// Determiners and adjectives that make `the <word> meeting` a description of a known
/// thing rather than a name.
const DESCRIPTION_STOP: &[&str] = &[
    "same",
    "other",
    "next",
    "last",
    "first",
    "second",
    "third",
    "final",
    "new",
    "old",
    "whole",
    "entire",
    "upcoming",
    "previous",
    "earlier",
    "later",
    "weekly",
    "monthly",
    "daily",
    "annual",
    "yearly",
    "quarterly",
    "regular",
    "recent",
    "current",
    "this",
    "that",
    "these",
    "those",
    "one",
    "two",
    "three",
    "big",
    "small",
    "main",
    "same",
    "whole",
    "full",
    "original",
    "relevant",
    "above",
    "following",
    "said",
    "entire",
    "only",
    "own",
    "team",
    "company",
    "whole",
    "scheduled",
    "planned",
    "corresponding",
    "respective",
    "specific",
];

fn boundary(toks: &[Token], end: usize) -> bool {
    match toks.get(end) {
        None => true,
        Some(t) => {
            t.kind == Kind::Punct
                || BOUNDARIES.contains(&t.lower.as_str())
                || FILLERS.contains(&t.lower.as_str())
        }
    }
}

/// A question that asserts: "…, right?", "…, didn't she?", "…, isn't it?".
fn tag_question(toks: &[Token]) -> bool {
    let words: Vec<&str> = toks.iter().map(|t| t.lower.as_str()).collect();
    let Some(q) = words.iter().rposition(|w| *w == "?") else {
        return false;
    };
    let Some(comma) = words[..q].iter().rposition(|w| *w == ",") else {
        return false;
    };
    let tail = &words[comma + 1..q];
    if tail.is_empty() || tail.len() > 3 {
        return false;
    }
    const TAGS: &[&str] = &[
        "right", "correct", "yes", "true", "no", "yeah", "ok", "okay",
    ];
    const AUX: &[&str] = &[
        "is", "isn", "was", "are", "were", "do", "does", "did", "has", "have", "had", "will",
        "can", "could", "would", "should",
    ];
    (tail.len() == 1 && TAGS.contains(&tail[0]))
        || (AUX.contains(&tail[0])
            && tail[1..]
                .iter()
                .all(|w| PRONOUNS.contains(w) || *w == "not" || *w == "there"))
}

pub(crate) fn join(toks: &[Token], first: usize, last: usize) -> String {
    let mut s = String::new();
    for (k, t) in toks[first..last].iter().enumerate() {
        if k > 0 && t.start > toks[first + k - 1].end {
            s.push(' ');
        }
        s.push_str(&t.text);
    }
    s
}

/// Every combination of one argument per column, at most `cap` of them.
fn cartesian(cols: &[Vec<Arg>], cap: usize) -> Vec<Vec<Arg>> {
    let mut out: Vec<Vec<Arg>> = vec![Vec::new()];
    for options in cols {
        let mut next = Vec::new();
        for prefix in &out {
            for o in options {
                if next.len() >= cap {
                    break;
                }
                let mut p = prefix.clone();
                p.push(o.clone());
                next.push(p);
            }
        }
        out = next;
    }
    out
}
