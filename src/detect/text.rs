//! Words of a sentence with their byte spans, the temporal expressions among them, and
//! the word classes the detectors share (negators, fillers, boundaries, stems).

use super::temporal::{DateExpr, DateStyle, day_of, month_of, weekday_of, year_of};

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Letters (and digits mixed with letters).
    Word,
    /// Digits (with inner `.` or `,` separators).
    Number,
    /// One punctuation character.
    Punct,
}

/// One token of a text.
#[derive(Debug, Clone)]
pub(crate) struct Token {
    /// As written.
    pub text: String,
    /// Lower-cased, with typographic apostrophes made plain.
    pub lower: String,
    /// Byte offsets into the whole text.
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
    /// Starts with an upper-case letter.
    pub cap: bool,
}

impl Token {
    pub fn is_word(&self) -> bool {
        self.kind == Kind::Word
    }
}

/// Tokens of `text[start..end]`, with spans into `text`. Citation brackets
/// (`[HEDGE-1]`, `[UNVERIFIED …]`) are skipped; `n't` becomes a separate `not`
/// (`can't` → `can not`, `won't` → `will not`); a possessive `'s` is dropped;
/// hyphenated words are split into their parts (except ISO dates, kept whole).
pub(crate) fn tokenize(text: &str, start: usize, end: usize) -> Vec<Token> {
    let s = &text[start..end];
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let at = |k: usize| chars.get(k).map(|&(_, c)| c);
    let byte = |k: usize| chars.get(k).map_or(s.len(), |&(b, _)| b);
    while i < chars.len() {
        let c = chars[i].1;
        if c == '['
            && let Some(len) = crate::answer::segment::citation_tag_len(&s[byte(i)..])
        {
            let stop = byte(i) + len;
            while i < chars.len() && byte(i) < stop {
                i += 1;
            }
            continue;
        }
        if c.is_alphanumeric() {
            let first = i;
            let mut j = i + 1;
            while j < chars.len() {
                let d = chars[j].1;
                let inner = |k: usize| at(k).is_some_and(char::is_alphanumeric);
                let digit = |k: usize| at(k).is_some_and(|c| c.is_ascii_digit());
                if d.is_alphanumeric()
                    || (matches!(d, '\'' | '’') && inner(j + 1) && inner(j - 1))
                    || (d == '-' && inner(j + 1) && inner(j - 1))
                    || (matches!(d, '.' | ',') && digit(j + 1) && digit(j - 1))
                {
                    j += 1;
                } else {
                    break;
                }
            }
            let word = &s[byte(first)..byte(j)];
            push_word(&mut out, word, start + byte(first));
            i = j;
        } else if c.is_whitespace() {
            i += 1;
        } else {
            let b = byte(i);
            let t = &s[b..b + c.len_utf8()];
            out.push(Token {
                text: t.to_string(),
                lower: t.to_string(),
                start: start + b,
                end: start + b + c.len_utf8(),
                kind: Kind::Punct,
                cap: false,
            });
            i += 1;
        }
    }
    out
}

fn push_word(out: &mut Vec<Token>, word: &str, at: usize) {
    let norm: String = word
        .chars()
        .map(|c| if c == '’' { '\'' } else { c })
        .collect();
    // ISO dates stay whole.
    if super::temporal::Date::parse_iso(&norm).is_some() {
        out.push(token(word, at, Kind::Number));
        return;
    }
    let mut offset = 0;
    for part in word.split('-') {
        if !part.is_empty() {
            push_part(out, part, at + offset);
        }
        offset += part.len() + 1;
    }
}

fn push_part(out: &mut Vec<Token>, part: &str, at: usize) {
    let lower: String = part
        .chars()
        .map(|c| if c == '’' { '\'' } else { c })
        .collect::<String>()
        .to_lowercase();
    // Possessive: keep the owner.
    for suffix in ["'s", "'"] {
        if lower.len() > suffix.len() + 1 && lower.ends_with(suffix) && suffix == "'s" {
            let keep = part.len()
                - part
                    .chars()
                    .rev()
                    .take(2)
                    .map(char::len_utf8)
                    .sum::<usize>();
            out.push(token(&part[..keep], at, Kind::Word));
            return;
        }
    }
    if let Some(stem) = lower.strip_suffix("n't") {
        let stem = match stem {
            "wo" => "will",
            "ca" => "can",
            "sha" => "shall",
            "ai" => "is",
            s => s,
        };
        let cut = part.len()
            - part
                .chars()
                .rev()
                .take(3)
                .map(char::len_utf8)
                .sum::<usize>();
        if !stem.is_empty() {
            let mut t = token(&part[..cut], at, Kind::Word);
            t.lower = stem.to_string();
            out.push(t);
        }
        let mut n = token(&part[cut..], at + cut, Kind::Word);
        n.lower = "not".into();
        out.push(n);
        return;
    }
    if lower == "cannot" {
        let mut t = token(&part[..3], at, Kind::Word);
        t.lower = "can".into();
        out.push(t);
        let mut n = token(&part[3..], at + 3, Kind::Word);
        n.lower = "not".into();
        out.push(n);
        return;
    }
    let kind = if part
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
    {
        Kind::Number
    } else {
        Kind::Word
    };
    out.push(token(part, at, kind));
}

fn token(text: &str, at: usize, kind: Kind) -> Token {
    Token {
        text: text.to_string(),
        lower: text
            .chars()
            .map(|c| if c == '’' { '\'' } else { c })
            .collect::<String>()
            .to_lowercase(),
        start: at,
        end: at + text.len(),
        kind,
        cap: text.chars().next().is_some_and(char::is_uppercase),
    }
}

/// A temporal expression over tokens `first..last` (exclusive).
#[derive(Debug, Clone)]
pub(crate) struct Temporal {
    pub first: usize,
    pub last: usize,
    pub expr: DateExpr,
}

/// Every date, weekday and bare year among the tokens, left to right, longest first.
pub(crate) fn temporals(toks: &[Token]) -> Vec<Temporal> {
    let mut out = Vec::new();
    let mut i = 0;
    let lower = |k: usize| toks.get(k).map_or("", |t| t.lower.as_str());
    let is_comma = |k: usize| lower(k) == ",";
    let blank = DateExpr {
        year: None,
        month: None,
        day: None,
        weekday: None,
        style: DateStyle::Iso,
    };
    while i < toks.len() {
        let t = &toks[i];
        if let Some(d) = super::temporal::Date::parse_iso(&t.lower) {
            out.push(Temporal {
                first: i,
                last: i + 1,
                expr: DateExpr {
                    year: Some(d.year),
                    month: Some(d.month),
                    day: Some(d.day),
                    ..blank
                },
            });
            i += 1;
            continue;
        }
        // Weekday, optionally followed by ", <date>".
        if t.cap
            && let Some(w) = weekday_of(&t.lower)
        {
            let mut expr = DateExpr {
                weekday: Some(w),
                style: DateStyle::Weekday,
                ..blank
            };
            let mut last = i + 1;
            let k = if is_comma(i + 1) { i + 2 } else { i + 1 };
            if let Some((e, l)) = month_date(toks, k) {
                expr = DateExpr {
                    weekday: Some(w),
                    ..e
                };
                last = l;
            }
            out.push(Temporal {
                first: i,
                last,
                expr,
            });
            i = last;
            continue;
        }
        if let Some((expr, last)) = month_date(toks, i) {
            out.push(Temporal {
                first: i,
                last,
                expr,
            });
            i = last;
            continue;
        }
        if t.kind == Kind::Number
            && let Some(y) = year_of(&t.lower)
        {
            out.push(Temporal {
                first: i,
                last: i + 1,
                expr: DateExpr {
                    year: Some(y),
                    ..blank
                },
            });
        }
        i += 1;
    }
    out
}

/// A date starting at token `i` written with a month name: `March 12[, 2024]`,
/// `12[th] [of] March [2024]`, `March 2024`. Returns it and the index after it.
fn month_date(toks: &[Token], i: usize) -> Option<(DateExpr, usize)> {
    let lower = |k: usize| toks.get(k).map_or("", |t| t.lower.as_str());
    let tok = |k: usize| toks.get(k);
    let year_at = |k: usize| {
        tok(k)
            .filter(|t| t.kind == Kind::Number)
            .and_then(|t| year_of(&t.lower))
    };
    // `may` is a month only next to a day or a year.
    let month_at = |k: usize| {
        let t = tok(k)?;
        let m = month_of(&t.lower)?;
        (m != 5 || t.cap).then_some(m)
    };
    if let Some(m) = month_at(i) {
        if let Some(d) = day_of(lower(i + 1)) {
            let mut last = i + 2;
            let mut year = None;
            let k = if lower(last) == "," { last + 1 } else { last };
            if let Some(y) = year_at(k) {
                year = Some(y);
                last = k + 1;
            }
            return Some((
                DateExpr {
                    year,
                    month: Some(m),
                    day: Some(d),
                    weekday: None,
                    style: DateStyle::MonthDayYear,
                },
                last,
            ));
        }
        if let Some(y) = year_at(i + 1) {
            return Some((
                DateExpr {
                    year: Some(y),
                    month: Some(m),
                    day: None,
                    weekday: None,
                    style: DateStyle::MonthDayYear,
                },
                i + 2,
            ));
        }
        return None;
    }
    let d = day_of(lower(i))?;
    let k = if lower(i + 1) == "of" { i + 2 } else { i + 1 };
    let m = month_at(k)?;
    let mut last = k + 1;
    let mut year = None;
    if let Some(y) = year_at(last) {
        year = Some(y);
        last += 1;
    }
    Some((
        DateExpr {
            year,
            month: Some(m),
            day: Some(d),
            weekday: None,
            style: DateStyle::DayMonthYear,
        },
        last,
    ))
}

/// Words that negate what they stand in.
pub(crate) const NEGATORS: &[&str] = &["not", "never", "no", "neither", "nor", "nobody", "none"];

/// Words a template match may skip between its parts: auxiliaries, negators and
/// adverbs that do not change which fact is meant.
pub(crate) const FILLERS: &[&str] = &[
    "not",
    "never",
    "no",
    "longer",
    "does",
    "do",
    "did",
    "is",
    "are",
    "was",
    "were",
    "will",
    "would",
    "shall",
    "should",
    "has",
    "have",
    "had",
    "been",
    "be",
    "also",
    "still",
    "currently",
    "now",
    "actually",
    "already",
    "only",
    "just",
    "really",
    "definitely",
    "certainly",
    "indeed",
    "reportedly",
    "apparently",
    "probably",
    "likely",
    "possibly",
    "supposedly",
    "officially",
    "formerly",
    "previously",
    "originally",
    "recently",
    "then",
    "again",
    "both",
    "all",
    "ll",
    "may",
    "might",
    "could",
    "can",
    "must",
    "in",
    "fact",
    "clearly",
    "obviously",
    "definitely",
    "however",
    "though",
    "too",
    "as",
    "well",
    "ever",
    "once",
    "later",
    "finally",
    "eventually",
    "personally",
    "directly",
    "jointly",
    "together",
    "successfully",
    "always",
];

/// Words that end a slot's value when the slot is the last part of a template.
pub(crate) const BOUNDARIES: &[&str] = &[
    "and",
    "or",
    "but",
    "which",
    "who",
    "whom",
    "whose",
    "where",
    "when",
    "while",
    "because",
    "since",
    "so",
    "as",
    "in",
    "on",
    "at",
    "for",
    "with",
    "from",
    "by",
    "to",
    "of",
    "until",
    "after",
    "before",
    "during",
    "last",
    "this",
    "next",
    "yet",
    "although",
    "though",
    "if",
    "unless",
    "that",
    "than",
    "earlier",
    "later",
    "back",
    "too",
    "either",
    "instead",
    "not",
    "though",
    "once",
    "again",
    "also",
    "already",
    "today",
    "yesterday",
    "tomorrow",
    "anymore",
    "now",
    "currently",
    "here",
    "there",
    "full",
    "since",
    "ever",
    "again",
    "alongside",
];

/// Pronouns that refer back to an entity.
pub(crate) const PRONOUNS: &[&str] = &["he", "she", "they", "him", "her", "them", "it"];

/// Articles and determiners a template match may drop or a value may start with.
pub(crate) const ARTICLES: &[&str] = &["the", "a", "an"];

/// Irregular forms and their base: a template word and a text word match when their
/// stems agree.
const IRREGULAR: &[(&str, &str)] = &[
    ("took", "take"),
    ("taken", "take"),
    ("met", "meet"),
    ("left", "leave"),
    ("held", "hold"),
    ("went", "go"),
    ("gone", "go"),
    ("was", "be"),
    ("were", "be"),
    ("is", "be"),
    ("are", "be"),
    ("am", "be"),
    ("been", "be"),
    ("being", "be"),
    ("has", "have"),
    ("had", "have"),
    ("does", "do"),
    ("did", "do"),
    ("done", "do"),
    ("led", "lead"),
    ("ran", "run"),
    ("began", "begin"),
    ("begun", "begin"),
    ("came", "come"),
    ("made", "make"),
    ("gave", "give"),
    ("given", "give"),
    ("spoke", "speak"),
    ("spoken", "speak"),
    ("saw", "see"),
    ("seen", "see"),
    ("told", "tell"),
    ("said", "say"),
    ("wrote", "write"),
    ("written", "write"),
    ("quit", "quit"),
    ("people", "person"),
    ("men", "man"),
    ("women", "woman"),
    ("children", "child"),
];

/// A crude stem: irregular forms mapped to their base, then `-ies`/`-ied` → `-y`,
/// `-es`/`-s`/`-ed`/`-ing` stripped, a final `e` and a doubled final consonant dropped.
/// Only ever compared with another stem.
pub(crate) fn stem(word: &str) -> String {
    let w = word.to_lowercase();
    let w = IRREGULAR
        .iter()
        .find(|(f, _)| *f == w)
        .map_or(w.clone(), |(_, b)| b.to_string());
    if w.len() <= 3 || !w.bytes().all(|b| b.is_ascii_alphabetic()) {
        return w;
    }
    let mut s = if let Some(r) = w.strip_suffix("ies").or_else(|| w.strip_suffix("ied")) {
        format!("{r}y")
    } else if let Some(r) = w.strip_suffix("ing").filter(|r| r.len() >= 3) {
        r.to_string()
    } else if let Some(r) = w.strip_suffix("ed").filter(|r| r.len() >= 3) {
        r.to_string()
    } else if let Some(r) = w
        .strip_suffix("es")
        .filter(|r| r.ends_with(['s', 'x', 'z']) || r.ends_with("ch") || r.ends_with("sh"))
    {
        r.to_string()
    } else if let Some(r) = w
        .strip_suffix('s')
        .filter(|r| !r.ends_with('s') && r.len() >= 3)
    {
        r.to_string()
    } else {
        w
    };
    if s.len() > 3 && s.ends_with('e') {
        s.pop();
    }
    let b = s.as_bytes();
    if b.len() > 3
        && b[b.len() - 1] == b[b.len() - 2]
        && !matches!(
            b[b.len() - 1],
            b'a' | b'e' | b'i' | b'o' | b'u' | b's' | b'l'
        )
    {
        s.pop();
    }
    s
}

/// Cardinal number words.
pub(crate) fn number_word(w: &str) -> Option<i64> {
    const WORDS: [&str; 21] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    WORDS.iter().position(|x| *x == w).map(|i| i as i64)
}

/// An integer written in digits (`1,200` included).
pub(crate) fn integer(w: &str) -> Option<i64> {
    let digits: String = w.chars().filter(|c| *c != ',').collect();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Lower-cased words of a name or symbol: split on whitespace, `-`, `_` and `.`.
pub(crate) fn name_words(s: &str) -> Vec<String> {
    s.split(|c: char| c.is_whitespace() || matches!(c, '-' | '_' | '.' | ','))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('’', "'"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowers(s: &str) -> Vec<String> {
        tokenize(s, 0, s.len())
            .into_iter()
            .map(|t| t.lower)
            .collect()
    }

    #[test]
    fn tokens_and_spans() {
        let s = "Alice's team doesn't meet on 2024-03-12 [HEDGE-1]; roadmap-review.";
        let toks = tokenize(s, 0, s.len());
        for t in &toks {
            let written = s[t.start..t.end].to_lowercase();
            assert!(t.lower == written || t.lower == "not", "{t:?}");
        }
        assert_eq!(
            lowers(s),
            [
                "alice",
                "team",
                "does",
                "not",
                "meet",
                "on",
                "2024-03-12",
                ";",
                "roadmap",
                "review",
                "."
            ]
        );
        assert_eq!(
            lowers("It can't be 1,200."),
            ["it", "can", "not", "be", "1,200", "."]
        );
    }

    #[test]
    fn dates_in_text() {
        let s = "On Tuesday, March 12, 2024 and 3 April 2024, not in May; in 2026.";
        let toks = tokenize(s, 0, s.len());
        let ts = temporals(&toks);
        assert_eq!(ts.len(), 3, "{ts:?}");
        assert_eq!(ts[0].expr.full().unwrap().to_string(), "2024-03-12");
        assert_eq!(ts[0].expr.weekday, Some(1));
        assert_eq!(ts[1].expr.full().unwrap().to_string(), "2024-04-03");
        assert_eq!(ts[2].expr.year, Some(2026));
    }

    #[test]
    fn stems_agree() {
        for (a, b) in [
            ("works", "work"),
            ("worked", "working"),
            ("manages", "managed"),
            ("took", "takes"),
            ("left", "leaving"),
            ("met", "meets"),
            ("attended", "attend"),
            ("employees", "employee"),
            ("planned", "plan"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} / {b}");
        }
        assert_ne!(stem("report"), stem("repeat"));
    }
}
