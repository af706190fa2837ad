//! Sentence and claim segmentation shared by the firewall, the gate and grounding.
//!
//! [`segment`] is a guarded scanner, not a regular expression: it walks the text once
//! and decides at every candidate terminator whether a sentence really ends there.
//!
//! # Rules
//!
//! - **Newlines break unconditionally** (`\n`, `\r`, U+0085, U+2028, U+2029); the
//!   newline itself belongs to no segment.
//! - **Hard terminators** break without needing trailing whitespace: `。！？؟।॥`, the
//!   halfwidth `｡`, the Urdu `۔` and the fullwidth full stop `．` (except between two
//!   digits, where it is a decimal point: `３．５`). A Japanese quotation closed with
//!   `」`/`』` and continued by the quotative particle `と` does not break
//!   (`「行きません。」と言った。`).
//! - **Soft terminators** `. ! ? …` (and runs of them, `...`, `?!`) break only when
//!   followed by whitespace or the end of the text, so nothing breaks inside `500.00`,
//!   `3.14`, `v2.1.3`, `example.com/a.html`, `a@b.co.uk` or `Ph.D.,`. Even then they
//!   do not break
//!   - before a lowercase continuation (`etc. to the site`, `Wait... the valve`);
//!   - after a title (`Dr.`, `Mrs.`, `Prof.`, `St.`, German `Hr.`, Spanish `Sr.`, `Dra.`,
//!     Arabic `د.`, Hindi `डॉ.`…) or an abbreviation that never ends a sentence (`e.g.`,
//!     `i.e.`, `vs.`, `cf.`, German `z.B.`, `d.h.`, `Mio.`, Russian `т.е.`…);
//!   - after a number prefix before a digit (`No. 7`, `Art. 5`, `Abs. 2`, `p. 12`);
//!   - after an abbreviation that may end a sentence (`etc.`, `Inc.`, `usw.`, `т.д.`,
//!     month names) unless a capitalised word follows (`etc. The crew`);
//!   - after a day number before a month name (German `am 5. Mai`);
//!   - after an initial or a dotted acronym (`J.`, `J. R. R.`, `U.S.`, `z. B.`) unless
//!     a capitalised common sentence opener follows (`the U.S. The plant` breaks,
//!     `the U.S. Treasury` and `J. Smith` do not).
//!
//!   The abbreviation tables are per language but applied together, because the
//!   segmenter is not told the language; no key appears in two tables with different
//!   classes (a unit test checks it).
//! - **Closers stay with their sentence**: closing quotes and brackets right after a
//!   terminator (`He said "no."`, `(The gauge was recalibrated.)`, `吗？”`).
//! - **Citation tags stay with the sentence they cite.** A bracketed tag such as
//!   `[STEP-1]`, `[HEDGE-7, STEP-2]`, `[12]` or `[UNVERIFIED …]` that follows a
//!   terminator on the same line (with or without spaces in between) belongs to the
//!   sentence *before* it: `… threat. [STEP-1] Next …` yields `… threat. [STEP-1]`
//!   and `Next …`, except an `[UNVERIFIED…]` marker followed by more words on the
//!   line, which opens the sentence after it (`… threat. [UNVERIFIED] The fleet may be
//!   larger.` yields `… threat.` and `[UNVERIFIED] The fleet may be larger.`). A tag
//!   before the terminator (`… threat [HEDGE-42].`) is inside its
//!   sentence anyway. A tag at the start of a line belongs to the sentence that
//!   follows it on that line (newlines break first).
//!
//! Every segment is trimmed of surrounding whitespace; `start..end` are byte offsets
//! into the input with `text == &input[start..end]`; segments are in order and never
//! overlap, and every non-whitespace character of the input lies in some segment.

use std::collections::HashMap;
use std::sync::LazyLock;

/// One segment of a text: a sentence or atomic claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The segment's text, trimmed of surrounding whitespace.
    pub text: String,
    /// Byte offset of the segment's first character in the input.
    pub start: usize,
    /// Byte offset one past its last character.
    pub end: usize,
}

/// Split text into sentences with the guarded scanner (rules in the module docs).
pub fn segment(text: &str) -> Vec<Segment> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let byte_at = |i: usize| chars.get(i).map_or(text.len(), |&(b, _)| b);
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        if is_newline(c) {
            push_trimmed(&mut out, text, start, chars[i].0);
            start = chars[i].0 + c.len_utf8();
            i += 1;
        } else if is_hard_terminator(c) {
            if c == '．' && is_decimal_point(&chars, i) {
                i += 1;
                continue;
            }
            let after_run = skip_while(&chars, i, |c| {
                is_hard_terminator(c) || is_soft_terminator(c)
            });
            let after_closers = skip_while(&chars, after_run, is_closer);
            let end = skip_tags(text, &chars, after_closers);
            let quoted = chars[after_run..after_closers]
                .iter()
                .any(|&(_, c)| matches!(c, '」' | '』'));
            if quoted && chars.get(end).is_some_and(|&(_, c)| c == 'と') {
                i = end;
                continue;
            }
            push_trimmed(&mut out, text, start, byte_at(end));
            start = byte_at(end);
            i = end;
        } else if is_soft_terminator(c) {
            let after_run = skip_while(&chars, i, is_soft_terminator);
            let after_closers = skip_while(&chars, after_run, is_closer);
            let end = skip_tags(text, &chars, after_closers);
            if chars.get(end).is_some_and(|&(_, c)| !c.is_whitespace()) {
                // Glued to what follows: a decimal, URL, e-mail, `Ph.D.,` …
                i = after_run;
                continue;
            }
            let single_period = after_run == i + 1 && c == '.';
            if ends_sentence(text, &chars, start, i, single_period, end) {
                push_trimmed(&mut out, text, start, byte_at(end));
                start = byte_at(end);
            }
            i = end;
        } else {
            i += 1;
        }
    }
    push_trimmed(&mut out, text, start, text.len());
    out
}

/// The naive `[.!?\n]+` split, kept for comparison.
pub fn segment_naive(text: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if matches!(c, '.' | '!' | '?' | '\n') {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if matches!(d, '.' | '!' | '?' | '\n') {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            push_trimmed(&mut out, text, start, end);
            start = end;
        }
    }
    push_trimmed(&mut out, text, start, text.len());
    out
}

/// Length in bytes of the citation tag at the start of `s` (`[HEDGE-4]`,
/// `[HEDGE-7, STEP-2]`, `[12]`, `[UNVERIFIED: reason]`), or `None` when `s` does not
/// start with one. Shared with the gate, which strips tags before alignment.
pub(crate) fn citation_tag_len(s: &str) -> Option<usize> {
    const MAX_TAG_LEN: usize = 200;
    let rest = s.strip_prefix('[')?;
    // Look no further than a tag can reach, so scanning stays linear in the text.
    let close = rest.bytes().take(MAX_TAG_LEN + 1).position(|b| b == b']')?;
    let inner = &rest[..close];
    if inner.is_empty() || inner.contains(['\n', '[']) {
        return None;
    }
    let ok = if inner.starts_with("UNVERIFIED") {
        true
    } else {
        inner.split(',').all(|item| {
            let item = item.trim();
            let mut cs = item.chars();
            cs.next()
                .is_some_and(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                && cs.all(|c| {
                    c.is_ascii_uppercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | ':')
                })
        })
    };
    ok.then_some(close + 2)
}

fn push_trimmed(out: &mut Vec<Segment>, text: &str, start: usize, end: usize) {
    let raw = &text[start..end];
    let lead = raw.len() - raw.trim_start().len();
    let trimmed = raw.trim();
    if !trimmed.is_empty() {
        out.push(Segment {
            text: trimmed.to_string(),
            start: start + lead,
            end: start + lead + trimmed.len(),
        });
    }
}

fn is_newline(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_hard_terminator(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '؟' | '।' | '॥' | '｡' | '۔' | '．')
}

fn is_soft_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…' | '‼' | '⁇' | '⁈' | '⁉')
}

fn is_closer(c: char) -> bool {
    matches!(
        c,
        '"' | '\''
            | '”'
            | '’'
            | '“'
            | '‘'
            | '»'
            | '›'
            | ')'
            | ']'
            | '}'
            | '」'
            | '』'
            | '）'
            | '】'
            | '〕'
            | '〉'
            | '》'
            | '］'
    )
}

fn is_opener(c: char) -> bool {
    matches!(
        c,
        '"' | '\''
            | '“'
            | '‘'
            | '„'
            | '«'
            | '‹'
            | '('
            | '['
            | '{'
            | '¿'
            | '¡'
            | '「'
            | '『'
            | '（'
    )
}

fn is_decimal_point(chars: &[(usize, char)], i: usize) -> bool {
    let digit = |j: Option<usize>| {
        j.and_then(|j| chars.get(j))
            .is_some_and(|&(_, c)| c.is_numeric())
    };
    digit(i.checked_sub(1)) && digit(Some(i + 1))
}

fn skip_while(chars: &[(usize, char)], mut i: usize, pred: impl Fn(char) -> bool) -> usize {
    while chars.get(i).is_some_and(|&(_, c)| pred(c)) {
        i += 1;
    }
    i
}

/// Skip citation tags (each optionally preceded by spaces on the same line) starting at
/// char index `i`; returns the char index after the last tag, or `i` when there is none.
fn skip_tags(text: &str, chars: &[(usize, char)], mut i: usize) -> usize {
    loop {
        let j = skip_while(chars, i, |c| c.is_whitespace() && !is_newline(c));
        let Some(&(b, '[')) = chars.get(j) else {
            return i;
        };
        let Some(len) = citation_tag_len(&text[b..]) else {
            return i;
        };
        let end_byte = b + len;
        // An `[UNVERIFIED…]` marker followed by more words on the line opens the next
        // sentence rather than closing this one.
        if text[b + 1..].starts_with("UNVERIFIED") {
            let after = &text[end_byte..];
            let line_rest = after.split(is_newline).next().unwrap_or("");
            let rest = line_rest.trim_start();
            if !rest.is_empty() && citation_tag_len(rest).is_none() {
                return i;
            }
        }
        i = j;
        while chars.get(i).is_some_and(|&(b, _)| b < end_byte) {
            i += 1;
        }
    }
}

/// Whether the soft terminator run starting at char `run_start` (whose closers and tags
/// end at char `end`, followed by whitespace or the end of text) ends a sentence.
fn ends_sentence(
    text: &str,
    chars: &[(usize, char)],
    seg_start: usize,
    run_start: usize,
    single_period: bool,
    end: usize,
) -> bool {
    let next = next_word(text, chars, end);
    let Some(next) = next else {
        return true;
    };
    if next.first.is_lowercase() {
        return false;
    }
    if !single_period {
        return true;
    }
    let prev = prev_word(text, chars, seg_start, run_start);
    if prev.is_empty() {
        return true;
    }
    let lower = prev.to_lowercase();
    let capitalised = prev.chars().next().is_some_and(|c| !c.is_lowercase());
    match ABBREVIATIONS.get(lower.as_str()) {
        Some(Abbrev::Title) if capitalised => {
            // `Main St. The rent…`: a title never precedes a sentence opener.
            return !next.is_initial && is_starter(&next);
        }
        Some(Abbrev::NonEnding) => return false,
        Some(Abbrev::NumberPrefix) if next.first.is_numeric() => return false,
        // German street names: `Goethestr. 5`.
        None if lower.ends_with("str") && next.first.is_numeric() => return false,
        Some(Abbrev::Ending) => return next.first.is_alphabetic(),
        _ => {}
    }
    if prev.chars().all(|c| c.is_ascii_digit())
        && prev.len() <= 2
        && MONTHS.contains(&next.word.to_lowercase().as_str())
    {
        return false;
    }
    if next.is_initial && is_initial_or_acronym(prev) {
        return false;
    }
    // A lone lowercase letter (`x is y.`) is a word, not an initial.
    if is_initial_or_acronym(prev) && (prev.contains('.') || !prev.starts_with(char::is_lowercase))
    {
        return is_starter(&next);
    }
    true
}

/// A capitalised common sentence opener (`The`, `Die`, `Он`).
fn is_starter(next: &NextWord) -> bool {
    next.first.is_uppercase() && STARTERS.contains(&next.word.to_lowercase().as_str())
}

/// The word that follows a break candidate: its first character, its leading letters,
/// and whether it is itself an initial (`R.` in `J. R. R. Tolkien`).
struct NextWord<'a> {
    first: char,
    word: &'a str,
    is_initial: bool,
}

fn next_word<'a>(text: &'a str, chars: &[(usize, char)], i: usize) -> Option<NextWord<'a>> {
    let j = skip_while(chars, i, |c| c.is_whitespace() && !is_newline(c));
    let j = skip_while(chars, j, is_opener);
    let &(b, first) = chars.get(j)?;
    if is_newline(first) {
        return None;
    }
    let k = skip_while(chars, j, char::is_alphabetic);
    let word = &text[b..chars.get(k).map_or(text.len(), |&(e, _)| e)];
    let is_initial = k == j + 1 && chars.get(k).is_some_and(|&(_, c)| c == '.');
    Some(NextWord {
        first,
        word,
        is_initial,
    })
}

/// The whitespace-delimited word before char `run_start` (not before `seg_start`),
/// without leading openers and without an elided article (`l'art` → `art`).
fn prev_word<'a>(
    text: &'a str,
    chars: &[(usize, char)],
    seg_start: usize,
    run_start: usize,
) -> &'a str {
    let mut j = run_start;
    while j > 0 && chars[j - 1].0 >= seg_start && !chars[j - 1].1.is_whitespace() {
        j -= 1;
    }
    let j = skip_while(chars, j, is_opener).min(run_start);
    let word = &text[chars.get(j).map_or(text.len(), |&(b, _)| b)..chars[run_start].0];
    match word.rfind(['\'', '’']) {
        Some(p) => &word[p + word[p..].chars().next().map_or(1, char::len_utf8)..],
        None => word,
    }
}

/// `J`, `U.S`, `J.R.R`, `z.B`, `А`, `z`: letters of one character separated by dots.
fn is_initial_or_acronym(word: &str) -> bool {
    word.split('.').all(|part| {
        let mut cs = part.chars();
        cs.next().is_some_and(char::is_alphabetic) && cs.next().is_none()
    })
}

/// How an abbreviation followed by a period behaves at a break candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Abbrev {
    /// Precedes a name and never ends a sentence when capitalised (`Dr.`, `Sr.`).
    Title,
    /// Never ends a sentence (`e.g.`, `z.B.`).
    NonEnding,
    /// Does not end a sentence before a digit (`No. 7`, `Art. 5`).
    NumberPrefix,
    /// May end a sentence: breaks only before a capitalised word (`etc.`, `Inc.`).
    Ending,
}

/// Per-language abbreviation tables (lower case, without the final period).
struct LanguageAbbreviations {
    /// The language the table is for (names the table in conflict reports).
    #[cfg_attr(not(test), allow(dead_code))]
    lang: &'static str,
    titles: &'static [&'static str],
    non_ending: &'static [&'static str],
    number_prefix: &'static [&'static str],
    ending: &'static [&'static str],
}

const TABLES: &[LanguageAbbreviations] = &[
    LanguageAbbreviations {
        lang: "en",
        titles: &[
            "mr", "mrs", "ms", "messrs", "dr", "prof", "st", "mt", "ft", "gen", "sen", "rep",
            "gov", "capt", "lt", "col", "sgt", "rev", "hon", "pres", "supt", "cmdr", "adm", "maj",
            "brig", "gov", "insp",
        ],
        non_ending: &[
            "e.g", "i.e", "vs", "cf", "viz", "approx", "incl", "esp", "resp", "ca", "ph.d",
        ],
        number_prefix: &[
            "no", "nos", "p", "pp", "fig", "figs", "sec", "secs", "vol", "vols", "ch", "para",
            "paras", "art", "arts", "eq", "eqs", "ref", "op", "ext", "tel", "fax",
        ],
        ending: &[
            "etc", "inc", "ltd", "co", "corp", "jr", "bros", "llc", "plc", "a.m", "p.m", "jan",
            "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "hrs",
            "mins", "dept", "govt", "intl", "assn", "est",
        ],
    },
    LanguageAbbreviations {
        lang: "de",
        titles: &["hr", "fr", "dipl", "dipl.-ing"],
        non_ending: &[
            "z.b", "d.h", "bzw", "vgl", "sog", "ggf", "evtl", "inkl", "z.t", "i.d.r", "u.u", "s.o",
            "s.u", "mio", "mrd", "tsd", "ggü", "gem",
        ],
        number_prefix: &["nr", "abs", "s", "bd", "kap", "ziff", "tab", "abb"],
        ending: &[
            "usw", "u.a", "o.ä", "u.v.m", "jh", "jhd", "dez", "okt", "mär",
        ],
    },
    LanguageAbbreviations {
        lang: "fr",
        titles: &["mm", "mme", "mlle", "me", "pr"],
        non_ending: &["p.ex", "ex", "c.-à-d", "env"],
        number_prefix: &["n", "chap"],
        ending: &["av. j.-c", "apr. j.-c"],
    },
    LanguageAbbreviations {
        lang: "es",
        titles: &["sr", "sra", "srta", "dra", "dña", "lic", "ing", "d"],
        non_ending: &["p.ej", "ej", "aprox", "ud", "uds", "vd", "vds"],
        number_prefix: &["núm", "pág", "págs"],
        ending: &["cía", "s.a"],
    },
    LanguageAbbreviations {
        lang: "ru",
        titles: &["проф", "акад", "им", "ул", "пр"],
        non_ending: &[
            "т.е", "т.к", "см", "ср", "напр", "тыс", "млн", "млрд", "руб", "коп", "т.н", "ок",
        ],
        number_prefix: &["ст", "п", "стр", "рис", "гл", "д"],
        ending: &["т.д", "т.п", "др", "гг", "вв"],
    },
    LanguageAbbreviations {
        lang: "ar",
        titles: &["د", "أ", "أ.د"],
        non_ending: &[],
        number_prefix: &["ص"],
        ending: &[],
    },
    LanguageAbbreviations {
        lang: "hi",
        titles: &["डॉ", "प्रो"],
        non_ending: &[],
        number_prefix: &["पृ"],
        ending: &[],
    },
];

static ABBREVIATIONS: LazyLock<HashMap<&'static str, Abbrev>> = LazyLock::new(|| {
    let mut map = HashMap::new();
    for table in TABLES {
        let classes = [
            (table.titles, Abbrev::Title),
            (table.non_ending, Abbrev::NonEnding),
            (table.number_prefix, Abbrev::NumberPrefix),
            (table.ending, Abbrev::Ending),
        ];
        for (keys, class) in classes {
            for &key in keys {
                map.entry(key).or_insert(class);
            }
        }
    }
    map
});

/// Month names and abbreviations after which a day number's period is no terminator.
const MONTHS: &[&str] = &[
    "januar",
    "jänner",
    "februar",
    "märz",
    "april",
    "mai",
    "juni",
    "juli",
    "august",
    "september",
    "oktober",
    "november",
    "dezember",
    "jan",
    "feb",
    "mär",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "okt",
    "nov",
    "dez",
];

/// Common capitalised sentence openers (en, de, fr, es, ru): after an initial or a
/// dotted acronym, only one of these signals a new sentence.
const STARTERS: &[&str] = &[
    // en
    "the",
    "a",
    "an",
    "this",
    "that",
    "these",
    "those",
    "it",
    "its",
    "he",
    "she",
    "they",
    "we",
    "i",
    "you",
    "there",
    "here",
    "in",
    "on",
    "at",
    "but",
    "and",
    "however",
    "then",
    "so",
    "if",
    "when",
    "after",
    "before",
    "our",
    "his",
    "her",
    "their",
    "my",
    "as",
    "for",
    "no",
    "yes",
    "what",
    "why",
    "how",
    "who",
    "all",
    "some",
    "each",
    "both",
    "one",
    "to",
    "by",
    "from",
    "with",
    "during",
    "while",
    "although",
    "also",
    "thus",
    "therefore",
    "meanwhile",
    "later",
    "finally",
    "first",
    "next",
    "since",
    "because",
    "until",
    "not",
    "only",
    // de
    "der",
    "die",
    "das",
    "ein",
    "eine",
    "er",
    "sie",
    "es",
    "wir",
    "ich",
    "dies",
    "diese",
    "dieser",
    "dann",
    "aber",
    "im",
    "am",
    "auch",
    "wenn",
    "nach",
    "bei",
    "mit",
    "danach",
    // fr
    "le",
    "la",
    "les",
    "il",
    "elle",
    "ils",
    "elles",
    "nous",
    "je",
    "un",
    "une",
    "ce",
    "cette",
    "mais",
    "puis",
    "dans",
    "on",
    "en",
    // es
    "el",
    "los",
    "las",
    "él",
    "ella",
    "ellos",
    "una",
    "pero",
    "luego",
    "este",
    "esta",
    "sí",
    // ru
    "он",
    "она",
    "оно",
    "они",
    "это",
    "этот",
    "эта",
    "в",
    "на",
    "но",
    "затем",
    "потом",
    "мы",
    "я",
    "там",
    "как",
    "все",
    "по",
    "и",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<String> {
        segment(text).into_iter().map(|s| s.text).collect()
    }

    #[test]
    fn no_break_inside_numbers_urls_and_versions() {
        assert_eq!(
            texts("Pay $500.00 or 10,000 units at 3.14 per cent via example.com/a.html now."),
            vec!["Pay $500.00 or 10,000 units at 3.14 per cent via example.com/a.html now."]
        );
        assert_eq!(
            texts("Upgrade to v2.1.3 today. Mail a@b.co.uk. Done."),
            vec!["Upgrade to v2.1.3 today.", "Mail a@b.co.uk.", "Done."]
        );
    }

    #[test]
    fn initials_and_titles_do_not_break() {
        assert_eq!(
            texts("J. R. R. Tolkien met Dr. Watson. He left."),
            vec!["J. R. R. Tolkien met Dr. Watson.", "He left."]
        );
        assert_eq!(texts("Ask Mr. Holmes."), vec!["Ask Mr. Holmes."]);
    }

    #[test]
    fn acronym_breaks_only_before_a_sentence_opener() {
        assert_eq!(
            texts("The U.S. Treasury sold bonds."),
            vec!["The U.S. Treasury sold bonds."]
        );
        assert_eq!(
            texts("It moved to the U.S. The plant opened."),
            vec!["It moved to the U.S.", "The plant opened."]
        );
    }

    #[test]
    fn abbreviation_classes() {
        assert_eq!(texts("Use e.g. Paris here."), vec!["Use e.g. Paris here."]);
        assert_eq!(texts("See No. 7 now."), vec!["See No. 7 now."]);
        assert_eq!(texts("It was no. Then."), vec!["It was no.", "Then."]);
        assert_eq!(texts("Tools etc. The end."), vec!["Tools etc.", "The end."]);
        assert_eq!(texts("Tools etc. for all."), vec!["Tools etc. for all."]);
        assert_eq!(texts("Am 5. Mai kam er."), vec!["Am 5. Mai kam er."]);
        assert_eq!(texts("Sr. García firmó."), vec!["Sr. García firmó."]);
    }

    #[test]
    fn abbreviation_tables_do_not_conflict() {
        let mut seen: HashMap<&str, (Abbrev, &str)> = HashMap::new();
        for table in TABLES {
            let classes = [
                (table.titles, Abbrev::Title),
                (table.non_ending, Abbrev::NonEnding),
                (table.number_prefix, Abbrev::NumberPrefix),
                (table.ending, Abbrev::Ending),
            ];
            for (keys, class) in classes {
                for &key in keys {
                    if let Some(&(other, lang)) = seen.get(key) {
                        assert_eq!(other, class, "{key} in {lang} and {}", table.lang);
                    }
                    seen.insert(key, (class, table.lang));
                }
            }
        }
    }

    #[test]
    fn newline_breaks_unconditionally() {
        assert_eq!(texts("Dr.\nSmith e.g.\nx"), vec!["Dr.", "Smith e.g.", "x"]);
        assert_eq!(texts("a\r\n\r\nb"), vec!["a", "b"]);
    }

    #[test]
    fn ellipsis() {
        assert_eq!(
            texts("Wait... the valve. Stop… Go."),
            vec!["Wait... the valve.", "Stop…", "Go."]
        );
    }

    #[test]
    fn closers_stay_with_their_sentence() {
        assert_eq!(
            texts("He said \"no.\" Then (it ended.) Fine."),
            vec!["He said \"no.\"", "Then (it ended.)", "Fine."]
        );
        assert_eq!(
            texts("\"Stop!\" she said. Ok."),
            vec!["\"Stop!\" she said.", "Ok."]
        );
    }

    #[test]
    fn trailing_tags_belong_to_the_sentence_before() {
        assert_eq!(
            texts("A threat was seen. [STEP-1] [HEDGE-2] B moved [HEDGE-4]. C."),
            vec![
                "A threat was seen. [STEP-1] [HEDGE-2]",
                "B moved [HEDGE-4].",
                "C."
            ]
        );
        assert_eq!(
            texts("A was seen.[STEP-1] B."),
            vec!["A was seen.[STEP-1]", "B."]
        );
        assert_eq!(texts("A.\n[STEP-1] B."), vec!["A.", "[STEP-1] B."]);
        assert_eq!(
            texts("A is so. [UNVERIFIED: no source] B."),
            vec!["A is so.", "[UNVERIFIED: no source] B."]
        );
        // Not a tag: stays where the text puts it.
        assert_eq!(texts("Done. [Note] More."), vec!["Done.", "[Note] More."]);
    }

    #[test]
    fn scripts_without_trailing_whitespace() {
        assert_eq!(texts("甲。乙！丙？丁"), vec!["甲。", "乙！", "丙？", "丁"]);
        assert_eq!(texts("أين؟لا."), vec!["أين؟", "لا."]);
        assert_eq!(texts("क।ख॥ग"), vec!["क।", "ख॥", "ग"]);
        assert_eq!(texts("３．５です．次"), vec!["３．５です．", "次"]);
        assert_eq!(texts("「はい。」と言った。"), vec!["「はい。」と言った。"]);
    }

    #[test]
    fn citation_tag_shapes() {
        assert_eq!(citation_tag_len("[HEDGE-4] x"), Some(9));
        assert_eq!(citation_tag_len("[HEDGE-7, STEP-2]"), Some(17));
        assert_eq!(citation_tag_len("[12]"), Some(4));
        assert!(citation_tag_len("[note]").is_none());
        assert!(citation_tag_len("[]").is_none());
        assert!(citation_tag_len("[HEDGE-4").is_none());
        let long = format!("[UNVERIFIED {}]", "x".repeat(300));
        assert!(citation_tag_len(&long).is_none());
    }

    #[test]
    fn offsets_are_exact() {
        let text = "  Über 5 €. Ça va?  Oui!\n 好。";
        for seg in segment(text) {
            assert_eq!(&text[seg.start..seg.end], seg.text);
        }
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        fn check_cover(text: &str, segs: &[Segment]) {
            let mut last = 0;
            for s in segs {
                assert!(s.start >= last && s.start < s.end);
                assert_eq!(&text[s.start..s.end], s.text);
                assert_eq!(s.text.trim(), s.text);
                last = s.end;
            }
            for (b, c) in text.char_indices() {
                if !c.is_whitespace() {
                    assert!(
                        segs.iter().any(|s| s.start <= b && b < s.end),
                        "char {c:?} at {b} lost"
                    );
                }
            }
        }

        proptest! {
            #[test]
            fn segments_cover_the_input_in_order(
                text in "([a-zA-Z0-9 .!?\n…。？؟।\\[\\]\"()'．」とDr-]|HEDGE-1|e\\.g\\.|U\\.S\\.| ){0,60}"
            ) {
                let segs = segment(&text);
                check_cover(&text, &segs);
                check_cover(&text, &segment_naive(&text));
            }

            #[test]
            fn arbitrary_unicode_is_covered(text in "\\PC{0,80}") {
                check_cover(&text, &segment(&text));
            }
        }
    }
}
