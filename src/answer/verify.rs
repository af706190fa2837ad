//! Content verification: does a claim follow from one source text (a passage, or the
//! words of one cited fact)?
//!
//! This is the gate's predicate. It keeps the seed's ordered, gap-bounded containment
//! ([`MAX_SINGLE_GAP`], [`MAX_TOTAL_GAP`]) and its polarity guard, and closes the holes
//! that the seed leaves open, each of which let a false claim through:
//!
//! 1. **One sentence, one source.** An alignment never crosses a sentence of its
//!    source, and a claim is checked against each source on its own, so "drone 7 was
//!    sighted in zone airport" cannot be spliced from "… drone 7 was sighted in zone
//!    harbor" and "zone airport is restricted airspace".
//! 2. **Polarity over the whole sentence.** Markers of negation, hedging, restriction,
//!    contrast, quantity and time ([`marker_class`]; a superset of the seed's 20) are
//!    judged inside the matched span *and* where their scope reaches it from outside:
//!    a marker before the span in the same clause, or before a complement clause that
//!    holds the span ("there is *no* evidence *that* …", "it is *not* the case *that*
//!    …"), and a marker after it up to the next clause of its own ("… *unless* a legal
//!    hold is set", "… in *only* 2 of 100 cases"). The claim must carry each such marker
//!    at least as often as the source does there.
//! 3. **No skipped subject.** The span must start where a clause of the source starts
//!    (articles and discourse words may be skipped), so "drone 9 was sighted" does not
//!    follow from "drone 7, escorting drone 9, was sighted", nor "patients recovered"
//!    from "2 of 100 patients recovered".
//! 4. **No antonym in the span.** A claim word whose opposite ([`ANTONYMS`]) lies in
//!    the matched span ("drone 9 is hostile rather than friendly" for "drone 9 is
//!    friendly") fails.
//! 5. **Negated facts.** A source may be a fact the proof relied on being absent
//!    ("and no record that drone 9 was cleared by an operator"); the claim must then say it is
//!    not so ("drone 9 was not cleared by an operator"), with the negation where an
//!    auxiliary puts it.
//!
//! It also accepts what a faithful writer says that the seed's predicate did not:
//!
//! - **Inflection.** Words are compared by a light lemma ([`lemma`]): plural and
//!   singular (`drones`/`drone`), `-s`/`-ed`/`-ing` verb forms, `are`/`is`, `were`/
//!   `was`, `an`/`a`. Markers are compared as written.
//! - **Lists.** "drones 7 and 9 are members of group 42" is checked as "drone 7 is a
//!   member of group 42" and "drone 9 …", each against a single source.
//! - **Clauses.** "drone 9 was sighted in zone airport and zone airport is restricted
//!   airspace" is checked clause by clause, each clause against a single source; a
//!   clause must say something of its own (a predicate word of its source, not just a
//!   name), and a clause without a subject borrows the first clause's.
//!
//! # Cost
//!
//! Aligning a claim costs at most one state per occurrence of a claim token in the
//! source, each looking at no more than `MAX_SINGLE_GAP + 1` predecessors, so work is
//! bounded by claim tokens × source tokens. Above [`MAX_CLAIM_TOKENS`] claim tokens, or
//! [`MAX_ALIGN_STATES`] states for one alignment, or [`MAX_CLAIM_WORK`] work units for one
//! claim over all its sources and parts, the claim is refused
//! ([`Reason::ClaimTooLong`], [`Reason::TooMuchWork`]) rather than verified.

use std::borrow::Cow;
use std::hash::BuildHasher;
use std::sync::LazyLock;

use hashbrown::HashMap;
use unicode_segmentation::UnicodeSegmentation;

use super::gate::{Alignment, MAX_SINGLE_GAP, MAX_TOTAL_GAP, Reason};
use super::normalize::{fold_compat, is_invisible};
use super::segment::segment;
use crate::value::Value;

/// Claims longer than this many tokens are refused, not verified.
pub const MAX_CLAIM_TOKENS: usize = 256;

/// Most alignment states (occurrences of claim tokens in a source) one alignment may
/// hold; past it the claim is refused.
pub const MAX_ALIGN_STATES: u64 = 1 << 18;

/// Most work units (alignment states and predecessor probes) verifying one claim may
/// take over all its sources, list expansions and clauses.
pub const MAX_CLAIM_WORK: u64 = 1 << 21;

// ---------------------------------------------------------------------------------------
// Word lists
// ---------------------------------------------------------------------------------------

/// Marker classes (bit flags) of [`marker_class`].
pub mod class {
    /// Negation: `not`, `no`, `never`, `without`, `denied`, `non` …
    pub const NEGATION: u8 = 1;
    /// Hedging and modality: `unlikely`, `may`, `allegedly`, `suspected` …
    pub const HEDGE: u8 = 2;
    /// Restriction and condition: `unless`, `except`, `if`, `only`, `until` …
    pub const RESTRICTION: u8 = 4;
    /// Contrast: `rather`, `instead`, `unlike`, `than` …
    pub const CONTRAST: u8 = 8;
    /// Quantity: `few`, `some`, `most`, `partly`, `nearly` …
    pub const QUANTITY: u8 = 16;
    /// Time and status: `former`, `formerly`, `previously`, `expired` …
    pub const TEMPORAL: u8 = 32;
}

const NEGATION_WORDS: &[&str] = &[
    // The seed's markers (except `except`, `excluding`, `unless`: restrictions).
    "absent",
    "cannot",
    "denied",
    "failed",
    "fails",
    "forbidden",
    "neither",
    "never",
    "no",
    "nobody",
    "none",
    "nor",
    "not",
    "nothing",
    "other",
    "prohibited",
    "without",
    // Beyond the seed.
    "non",
    "nowhere",
    "lack",
    "lacks",
    "lacked",
    "lacking",
    "deny",
    "denies",
    "refused",
    "refuses",
    "fail",
    "unable",
    "false",
    "untrue",
    "incorrect",
    "ceased",
    "stopped",
    "cancelled",
    "canceled",
    "revoked",
    "rejected",
    "barred",
    "banned",
    "disallowed",
    "impossible",
    "neglected",
    "anymore",
    "retracted",
    "withdrawn",
    "disproved",
    "debunked",
    "refuted",
    "overturned",
    "rescinded",
    "invalidated",
    "excluded",
];

const HEDGE_WORDS: &[&str] = &[
    "unlikely",
    "likely",
    "possibly",
    "possible",
    "probably",
    "probable",
    "perhaps",
    "maybe",
    "may",
    "might",
    "could",
    "would",
    "should",
    "must",
    "shall",
    "can",
    "will",
    "allegedly",
    "alleged",
    "alleges",
    "reportedly",
    "supposedly",
    "purportedly",
    "purported",
    "apparently",
    "presumably",
    "presumed",
    "seemingly",
    "seems",
    "seem",
    "seemed",
    "appears",
    "appear",
    "appeared",
    "suspected",
    "suspect",
    "suspects",
    "believed",
    "believe",
    "believes",
    "thought",
    "rumored",
    "rumoured",
    "rumor",
    "rumors",
    "rumour",
    "rumours",
    "suggest",
    "suggests",
    "suggested",
    "reported",
    "reports",
    "according",
    "said",
    "says",
    "stated",
    "unconfirmed",
    "unverified",
    "uncertain",
    "unclear",
    "unknown",
    "unproven",
    "doubt",
    "doubts",
    "doubtful",
    "doubted",
    "questionable",
    "disputed",
    "claimed",
    "claims",
    "estimated",
    "expected",
    "predicted",
    "projected",
    "planned",
    "proposed",
    "pending",
    "tentative",
    "tentatively",
    "preliminary",
    "speculative",
    "hypothetical",
    "hypothetically",
    "whether",
    "assumed",
];

const RESTRICTION_WORDS: &[&str] = &[
    "unless",
    "except",
    "excluding",
    "excepting",
    "if",
    "only",
    "provided",
    "providing",
    "assuming",
    "when",
    "whenever",
    "until",
    "solely",
    "exclusively",
    "conditional",
    "conditionally",
    "subject",
];

const CONTRAST_WORDS: &[&str] = &[
    "rather", "instead", "unlike", "versus", "vs", "opposed", "contrary", "than", "despite",
    "although", "though",
];

const QUANTITY_WORDS: &[&str] = &[
    "only",
    "few",
    "fewer",
    "some",
    "several",
    "most",
    "many",
    "half",
    "part",
    "partly",
    "partially",
    "nearly",
    "almost",
    "barely",
    "hardly",
    "scarcely",
    "approximately",
    "roughly",
    "minority",
    "majority",
    "fraction",
    "occasionally",
    "sometimes",
    "rarely",
    "seldom",
    "often",
    "usually",
    "generally",
    "typically",
    "mostly",
    "mainly",
    "largely",
];

const TEMPORAL_WORDS: &[&str] = &[
    "former",
    "formerly",
    "previously",
    "once",
    "ex",
    "earlier",
    "expired",
    "retired",
    "obsolete",
    "outdated",
    "deprecated",
    "superseded",
    "suspended",
    "lapsed",
    "originally",
    "initially",
    "temporarily",
    "temporary",
    "briefly",
];

/// Words that may be skipped at the start of a clause (articles, discourse adverbs,
/// coordinators): skipping them does not skip a subject.
const SKIPPABLE_WORDS: &[&str] = &[
    "the",
    "a",
    "an",
    "this",
    "that",
    "these",
    "those",
    "also",
    "then",
    "now",
    "so",
    "thus",
    "hence",
    "therefore",
    "however",
    "moreover",
    "furthermore",
    "additionally",
    "meanwhile",
    "indeed",
    "and",
    "but",
    "or",
    "yet",
    "which",
    "who",
    "whom",
    "where",
    "whereas",
    "while",
    "because",
    "since",
];

/// Words that end one clause and start another (coordinators).
const COORDINATORS: &[&str] = &[
    "and", "but", "or", "yet", "whereas", "while", "although", "though", "so", "however",
];

/// Words that start a subordinate clause (weak boundary before them).
const CLAUSE_WORDS: &[&str] = &[
    "which", "who", "whom", "whose", "that", "whether", "because", "since", "where", "when", "if",
    "unless", "except",
];

/// Words that open a complement clause: a negation before one reaches into it.
const COMPLEMENTIZERS: &[&str] = &["that", "whether", "if"];

/// Auxiliaries, copulas and modals.
const AUXILIARIES: &[&str] = &[
    "is", "are", "am", "was", "were", "be", "been", "being", "has", "have", "had", "do", "does",
    "did", "shall", "will", "would", "may", "might", "can", "could", "must", "should",
];

/// Function words: never a clause's predicate word.
const FUNCTION_WORDS: &[&str] = &[
    "of", "in", "into", "on", "onto", "at", "to", "by", "with", "from", "for", "as", "than",
    "about", "over", "under", "near", "within", "per", "its", "their", "his", "her", "it", "they",
    "he", "she", "there", "here",
];

/// Pairs of opposites (compared by [`lemma`]). A claim word whose opposite lies in the
/// matched span fails.
pub const ANTONYMS: &[(&str, &str)] = &[
    ("hostile", "friendly"),
    ("open", "closed"),
    ("open", "close"),
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("above", "below"),
    ("more", "less"),
    ("more", "fewer"),
    ("higher", "lower"),
    ("high", "low"),
    ("greater", "less"),
    ("greater", "smaller"),
    ("larger", "smaller"),
    ("hotter", "colder"),
    ("hot", "cold"),
    ("before", "after"),
    ("allowed", "forbidden"),
    ("allowed", "prohibited"),
    ("permitted", "forbidden"),
    ("permitted", "prohibited"),
    ("enter", "leave"),
    ("entered", "left"),
    ("inside", "outside"),
    ("accept", "reject"),
    ("approve", "deny"),
    ("approve", "reject"),
    ("guilty", "innocent"),
    ("win", "lose"),
    ("won", "lost"),
    ("gain", "loss"),
    ("profit", "loss"),
    ("maximum", "minimum"),
    ("max", "min"),
    ("positive", "negative"),
    ("true", "false"),
    ("present", "absent"),
    ("active", "inactive"),
    ("legal", "illegal"),
    ("safe", "unsafe"),
    ("safe", "dangerous"),
    ("arrive", "depart"),
    ("start", "stop"),
    ("begin", "end"),
    ("early", "late"),
    ("earliest", "latest"),
    ("first", "last"),
    ("import", "export"),
    ("credit", "debit"),
    ("asset", "liability"),
    ("long", "short"),
    ("upper", "lower"),
    ("include", "exclude"),
    ("pass", "fail"),
    ("success", "failure"),
    ("valid", "invalid"),
    ("confirm", "deny"),
    ("confirm", "refute"),
    ("restricted", "unrestricted"),
    ("north", "south"),
    ("east", "west"),
    ("up", "down"),
    ("on", "off"),
    ("buy", "sell"),
    ("minor", "major"),
    ("benign", "malignant"),
    ("over", "under"),
    ("overweight", "underweight"),
    ("internal", "external"),
    ("public", "private"),
    ("armed", "unarmed"),
    ("authorized", "unauthorized"),
    ("cleared", "uncleared"),
    ("verified", "unverified"),
    ("confirmed", "unconfirmed"),
];

/// Per word: its marker classes and its word-list flags.
static WORDS: LazyLock<HashMap<&'static str, (u8, u16)>> = LazyLock::new(|| {
    let mut m: HashMap<&'static str, (u8, u16)> = HashMap::new();
    let markers: [(&[&'static str], u8); 6] = [
        (NEGATION_WORDS, class::NEGATION),
        (HEDGE_WORDS, class::HEDGE),
        (RESTRICTION_WORDS, class::RESTRICTION),
        (CONTRAST_WORDS, class::CONTRAST),
        (QUANTITY_WORDS, class::QUANTITY),
        (TEMPORAL_WORDS, class::TEMPORAL),
    ];
    for (list, bit) in markers {
        for w in list {
            m.entry(w).or_default().0 |= bit;
        }
    }
    let flags: [(&[&'static str], u16); 6] = [
        (SKIPPABLE_WORDS, flag::SKIPPABLE | flag::FUNCTION),
        (COORDINATORS, flag::COORD),
        (CLAUSE_WORDS, flag::WEAK),
        (COMPLEMENTIZERS, flag::COMPL),
        (AUXILIARIES, flag::AUX),
        (FUNCTION_WORDS, flag::FUNCTION),
    ];
    for (list, bits) in flags {
        for w in list {
            m.entry(w).or_default().1 |= bits;
        }
    }
    m
});

/// Opposites by lemma (both directions).
static OPPOSITES: LazyLock<HashMap<String, Vec<String>>> = LazyLock::new(|| {
    let mut m: HashMap<String, Vec<String>> = HashMap::new();
    for &(a, b) in ANTONYMS {
        let (la, lb) = (lemma(a).into_owned(), lemma(b).into_owned());
        m.entry(la.clone()).or_default().push(lb.clone());
        m.entry(lb).or_default().push(la);
    }
    m
});

/// The marker classes ([`class`]) of a lower-cased token; 0 when it is no marker.
pub fn marker_class(raw: &str) -> u8 {
    WORDS.get(raw).map_or(0, |w| w.0)
}

/// Past forms of common irregular verbs, by base form (itself a lemma of the suffix
/// rules: `pay` is what `pays` becomes).
const IRREGULAR_VERBS: &[(&[&str], &str)] = &[
    (&["paid"], "pay"),
    (&["said"], "say"),
    (&["made"], "mak"),
    (&["went", "gone"], "go"),
    (&["gave", "given"], "giv"),
    (&["took", "taken"], "tak"),
    (&["held"], "hold"),
    (&["found"], "find"),
    (&["sold"], "sell"),
    (&["bought"], "buy"),
    (&["brought"], "bring"),
    (&["told"], "tell"),
    (&["kept"], "keep"),
    (&["ran"], "run"),
    (&["began", "begun"], "begin"),
    (&["came"], "com"),
    (&["got", "gotten"], "get"),
    (&["saw", "seen"], "see"),
    (&["met"], "meet"),
    (&["led"], "lead"),
    (&["sent"], "send"),
    (&["built"], "build"),
    (&["spent"], "spend"),
    (&["fell", "fallen"], "fall"),
    (&["rose", "risen"], "ris"),
    (&["grew", "grown"], "grow"),
    (&["drove", "driven"], "driv"),
    (&["flew", "flown"], "fly"),
    (&["knew", "known"], "know"),
    (&["wrote", "written"], "writ"),
    (&["chose", "chosen"], "choos"),
    (&["became"], "becom"),
    (&["shown"], "show"),
    (&["struck"], "strik"),
    (&["stood"], "stand"),
    (&["understood"], "understand"),
    (&["caught"], "catch"),
    (&["taught"], "teach"),
    (&["fought"], "fight"),
    (&["sought"], "seek"),
    (&["won"], "win"),
    (&["lost"], "los"),
    (&["left"], "leav"),
    (&["meant"], "mean"),
    (&["dealt"], "deal"),
    (&["felt"], "feel"),
    (&["slept"], "sleep"),
    (&["shot"], "shoot"),
    (&["hit"], "hit"),
    (&["set"], "set"),
    (&["put"], "put"),
    (&["cut"], "cut"),
    (&["let"], "let"),
    (&["laid"], "lay"),
    (&["bore", "borne"], "bear"),
    (&["wore", "worn"], "wear"),
    (&["tore", "torn"], "tear"),
    (&["broke", "broken"], "break"),
    (&["spoke", "spoken"], "speak"),
    (&["froze", "frozen"], "freez"),
    (&["stole", "stolen"], "steal"),
    (&["drew", "drawn"], "draw"),
    (&["threw", "thrown"], "throw"),
    (&["blew", "blown"], "blow"),
    (&["ate", "eaten"], "eat"),
];

/// Irregular past forms by form.
static IRREGULAR: LazyLock<HashMap<&'static str, &'static str>> = LazyLock::new(|| {
    IRREGULAR_VERBS
        .iter()
        .flat_map(|(forms, base)| forms.iter().map(move |f| (*f, *base)))
        .collect()
});

/// A light lemma for comparing words across inflection: irregular forms (`are`, `was`
/// and `were` → `is`, `have` → `has`, `an` → `a`, `children` → `child`, `paid` →
/// `pay`), then one
/// suffix rule on ASCII words of four letters or more (`-ies`/`-ied` → `-y`, `-ing`,
/// `-ed`, `-es` after a sibilant, `-s`), a doubled final consonant undoubled and a
/// final `e` dropped (`intruded`, `intrudes`, `intruding` and `intrude` are all
/// `intrud`). Numbers, non-ASCII words and markers are themselves.
pub fn lemma(word: &str) -> Cow<'_, str> {
    let irregular = match word {
        "are" | "am" | "was" | "were" => Some("is"),
        "have" | "had" => Some("has"),
        "do" | "did" => Some("does"),
        "an" => Some("a"),
        "children" => Some("child"),
        "men" => Some("man"),
        "women" => Some("woman"),
        "people" => Some("person"),
        _ => IRREGULAR.get(word).copied(),
    };
    if let Some(l) = irregular {
        return Cow::Borrowed(l);
    }
    let n = word.len();
    if n < 4 || !word.bytes().all(|b| b.is_ascii_lowercase()) || WORDS.contains_key(word) {
        return Cow::Borrowed(word);
    }
    let stem: String = if let Some(s) = word.strip_suffix("ies").filter(|s| s.len() >= 2) {
        format!("{s}y")
    } else if let Some(s) = word.strip_suffix("ied").filter(|s| s.len() >= 2) {
        format!("{s}y")
    } else if let Some(s) = word.strip_suffix("ing").filter(|s| s.len() >= 3) {
        finish(undouble(s))
    } else if let Some(s) = word.strip_suffix("ed").filter(|s| s.len() >= 3) {
        finish(undouble(s))
    } else if let Some(s) = word.strip_suffix("es").filter(|s| {
        s.ends_with('s')
            || s.ends_with('x')
            || s.ends_with('z')
            || s.ends_with("ch")
            || s.ends_with("sh")
    }) {
        s.to_string()
    } else if word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
    {
        finish(&word[..n - 1])
    } else {
        finish(word)
    };
    Cow::Owned(stem)
}

fn undouble(s: &str) -> &str {
    let b = s.as_bytes();
    let n = b.len();
    if n >= 3 && b[n - 1] == b[n - 2] && !matches!(b[n - 1], b'l' | b's' | b'z' | b'e' | b'o') {
        &s[..n - 1]
    } else {
        s
    }
}

fn finish(s: &str) -> String {
    match s.strip_suffix('e') {
        Some(t) if t.len() >= 3 => t.to_string(),
        _ => s.to_string(),
    }
}

// ---------------------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------------------

/// Token flags.
mod flag {
    /// The token is a number (contains a digit).
    pub const NUMBER: u16 = 1;
    /// May be skipped at the start of a clause.
    pub const SKIPPABLE: u16 = 2;
    /// A weak clause boundary lies before the token (comma, parenthesis, dash, or a
    /// clause word such as `which`).
    pub const WEAK: u16 = 4;
    /// `;`, `:` or a sentence-final mark lies before the token.
    pub const SEMI: u16 = 8;
    /// The token is a coordinator (`and`, `but` …).
    pub const COORD: u16 = 16;
    /// A comma lies right before the token.
    pub const COMMA: u16 = 32;
    /// The token opens a complement clause (`that`, `whether`, `if`).
    pub const COMPL: u16 = 64;
    /// An auxiliary, copula or modal.
    pub const AUX: u16 = 128;
    /// A function word.
    pub const FUNCTION: u16 = 256;
    /// Counts as a clause's predicate word (set per source).
    pub const PRED: u16 = 512;
    /// Part of one of a structured fact's argument values.
    pub const ARG: u16 = 1024;
}

/// A tokenized text: per token its lower-cased surface form, its lemma, its marker
/// classes and flags, and its byte offset. The words live in one buffer (one
/// allocation per text, not two per token).
#[derive(Debug, Clone, Default)]
pub(crate) struct Tokens {
    buf: String,
    raw: Vec<(u32, u32)>,
    key: Vec<(u32, u32)>,
    pub(crate) marker: Vec<u8>,
    pub(crate) flags: Vec<u16>,
    pub(crate) offset: Vec<u32>,
    /// While tokenizing a long text: what each distinct word was read as (its word
    /// flags, and where its surface form and lemma already are in `buf`).
    memo: Option<HashMap<Box<str>, Analysed>>,
}

type Analysed = (u8, u16, (u32, u32), (u32, u32));

impl Tokens {
    pub(crate) fn len(&self) -> usize {
        self.raw.len()
    }

    /// Token `i` as written (lower-cased).
    pub(crate) fn raw(&self, i: usize) -> &str {
        let (s, e) = self.raw[i];
        &self.buf[s as usize..e as usize]
    }

    /// Token `i`'s lemma.
    pub(crate) fn key(&self, i: usize) -> &str {
        let (s, e) = self.key[i];
        &self.buf[s as usize..e as usize]
    }

    fn push_span(&mut self, raw: &str, key: &str) {
        let rs = self.buf.len() as u32;
        self.buf.push_str(raw);
        let re = self.buf.len() as u32;
        self.raw.push((rs, re));
        if key == raw {
            self.key.push((rs, re));
        } else {
            let ks = self.buf.len() as u32;
            self.buf.push_str(key);
            self.key.push((ks, self.buf.len() as u32));
        }
    }

    fn push(&mut self, raw: &str, offset: usize, pending: u16) {
        if let Some(&(marker, word_flags, raw_span, key_span)) =
            self.memo.as_ref().and_then(|m| m.get(raw))
        {
            self.raw.push(raw_span);
            self.key.push(key_span);
            self.marker.push(marker);
            self.flags.push(pending | word_flags);
            self.offset.push(offset as u32);
            return;
        }
        let (marker, mut word_flags) = WORDS.get(raw).copied().unwrap_or_default();
        if raw.bytes().any(|b| b.is_ascii_digit())
            || (!raw.is_ascii() && raw.chars().any(char::is_numeric))
        {
            word_flags |= flag::NUMBER;
        }
        let key = if marker == 0 {
            lemma(raw)
        } else {
            Cow::Borrowed(raw)
        };
        self.push_span(raw, &key);
        self.marker.push(marker);
        self.flags.push(pending | word_flags);
        self.offset.push(offset as u32);
        let (raw_span, key_span) = (self.raw[self.raw.len() - 1], self.key[self.key.len() - 1]);
        if let Some(m) = self.memo.as_mut() {
            m.insert(raw.into(), (marker, word_flags, raw_span, key_span));
        }
    }

    /// Remember word analyses while tokenizing (worth it for long texts).
    fn with_memo(text_len: usize) -> Tokens {
        Tokens {
            memo: (text_len > 512).then(HashMap::new),
            ..Tokens::default()
        }
    }

    fn push_from(&mut self, other: &Tokens, i: usize) {
        self.push_span(other.raw(i), other.key(i));
        self.marker.push(other.marker[i]);
        self.flags.push(other.flags[i]);
        self.offset.push(other.offset[i]);
    }

    /// These tokens followed by `other`'s.
    pub(crate) fn concat(&self, other: &Tokens) -> Tokens {
        let mut t = self.clone();
        for i in 0..other.len() {
            t.push_from(other, i);
        }
        t
    }

    /// A copy holding only the tokens at `idx`, in that order.
    pub(crate) fn select(&self, idx: impl IntoIterator<Item = usize>) -> Tokens {
        let mut t = Tokens::default();
        for i in idx {
            t.push_from(self, i);
        }
        t
    }

    /// The lemmas, one string (a cache key).
    fn keys_joined(&self) -> String {
        let mut out = String::with_capacity(self.buf.len());
        for i in 0..self.len() {
            out.push_str(self.key(i));
            out.push('\u{0}');
        }
        out
    }

    /// Occurrences of `raw` among the tokens in `range`.
    fn count_raw(&self, raw: &str, range: std::ops::Range<usize>) -> usize {
        range.filter(|&i| self.raw(i) == raw).count()
    }

    /// Occurrences of the lemma `key` among the tokens in `range`.
    fn count_key(&self, key: &str, range: std::ops::Range<usize>) -> usize {
        range.filter(|&i| self.key(i) == key).count()
    }
}

/// The text as the checkers read it: invisible characters removed, fullwidth forms and
/// dashes folded, `_` (markdown emphasis) read as a space.
pub(crate) fn clean(text: &str) -> Cow<'_, str> {
    if text.is_ascii() && !text.contains('_') {
        return Cow::Borrowed(text);
    }
    let needs = |c: char| is_invisible(c) || fold_compat(c) != c || c == '_';
    if !text.chars().any(needs) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .filter(|&c| !is_invisible(c))
            .map(|c| if c == '_' { ' ' } else { fold_compat(c) })
            .collect(),
    )
}

/// Tokenize already [`clean`]ed text: lower-cased words (UAX #29), contractions
/// expanded as the seed's tokenizer does (`isn't` → `is not`, `can't` → `cannot`), with
/// clause structure from the punctuation between words.
pub(crate) fn tokenize_clean(text: &str) -> Tokens {
    let mut t = if text.is_ascii() {
        tokenize_ascii(text)
    } else {
        tokenize_uax29(text)
    };
    t.memo = None;
    t
}

/// Where a punctuation or space character leaves the clause structure.
fn punctuation(c: char, pending: &mut u16, prev_space: &mut bool) {
    match c {
        ';' | ':' | '.' | '!' | '?' | '…' | '。' | '！' | '？' => {
            *pending |= flag::SEMI | flag::WEAK;
        }
        ',' | '，' | '、' => *pending |= flag::WEAK | flag::COMMA,
        '(' | ')' | '[' | ']' | '{' | '}' => *pending |= flag::WEAK,
        '-' if *prev_space => *pending |= flag::WEAK,
        _ => {}
    }
    if c.is_whitespace() {
        *prev_space = true;
    } else if c != '-' {
        *prev_space = false;
    }
}

/// [`tokenize_uax29`] for ASCII text, without the Unicode tables: the same words (UAX
/// #29 on ASCII joins letters and digits, `.`, `:` and `'` between two letters, and
/// `.`, `,`, `;` and `'` between two digits), the same structure.
fn tokenize_ascii(text: &str) -> Tokens {
    let b = text.as_bytes();
    let n = b.len();
    let mut out = Tokens::with_memo(n);
    let mut pending: u16 = 0;
    let mut prev_space = true;
    let mut word = String::new();
    let mut i = 0;
    while i < n {
        if b[i].is_ascii_alphanumeric() {
            let start = i;
            i += 1;
            loop {
                if i < n && b[i].is_ascii_alphanumeric() {
                    i += 1;
                    continue;
                }
                if i + 1 < n {
                    let (prev, mid, next) = (b[i - 1], b[i], b[i + 1]);
                    let letters = prev.is_ascii_alphabetic()
                        && next.is_ascii_alphabetic()
                        && matches!(mid, b':' | b'.' | b'\'');
                    let digits = prev.is_ascii_digit()
                        && next.is_ascii_digit()
                        && matches!(mid, b',' | b';' | b'.' | b'\'');
                    if letters || digits {
                        i += 2;
                        continue;
                    }
                }
                break;
            }
            word.clear();
            word.push_str(&text[start..i]);
            word.make_ascii_lowercase();
            push_word(&mut out, &word, start, pending);
            pending = 0;
            prev_space = false;
            continue;
        }
        punctuation(b[i] as char, &mut pending, &mut prev_space);
        i += 1;
    }
    out
}

/// Tokenize with UAX #29 word boundaries.
fn tokenize_uax29(text: &str) -> Tokens {
    let mut out = Tokens::with_memo(text.len());
    let mut pending: u16 = 0;
    let mut prev_space = true;
    let mut word = String::new();
    for (at, piece) in text.split_word_bound_indices() {
        if piece.chars().any(char::is_alphanumeric) {
            word.clear();
            for c in piece.chars() {
                match c {
                    '’' | 'ʼ' => word.push('\''),
                    c if c.is_ascii() => word.push(c.to_ascii_lowercase()),
                    c => word.extend(c.to_lowercase()),
                }
            }
            push_word(&mut out, &word, at, pending);
            pending = 0;
            prev_space = false;
            continue;
        }
        for c in piece.chars() {
            punctuation(c, &mut pending, &mut prev_space);
        }
    }
    out
}

/// One lower-cased word: contractions expanded (`isn't` → `is not`, `can't` →
/// `cannot`, `it's` → `it is`), a possessive `'s` dropped.
fn push_word(out: &mut Tokens, word: &str, at: usize, pending: u16) {
    if let Some(stem) = word.strip_suffix("'s").filter(|w| !w.is_empty()) {
        if matches!(
            stem,
            "it" | "that" | "there" | "here" | "what" | "he" | "she" | "who" | "where"
        ) {
            out.push(stem, at, pending);
            out.push("is", at, 0);
        } else {
            out.push(stem, at, pending);
        }
        return;
    }
    match word.strip_suffix("n't") {
        None => out.push(word, at, pending),
        Some("ca") => out.push("cannot", at, pending),
        Some(stem) => {
            let stem = match stem {
                "wo" => "will",
                "sha" => "shall",
                "ai" => "is",
                s => s,
            };
            let mut p = pending;
            if !stem.is_empty() {
                out.push(stem, at, p);
                p = 0;
            }
            out.push("not", at, p);
        }
    }
}

/// Tokens of a claim: [`clean`] then [`tokenize_clean`].
pub(crate) fn claim_tokens(text: &str) -> Tokens {
    tokenize_clean(&clean(text))
}

// ---------------------------------------------------------------------------------------
// Sources
// ---------------------------------------------------------------------------------------

/// A source text indexed for verification: its tokens with clause structure and
/// sentences, and each lemma's positions.
#[derive(Debug, Clone)]
pub struct SourceIndex {
    tokens: Tokens,
    /// Sentence of each token.
    sentence: Vec<u32>,
    /// First token of each sentence, plus the token count at the end.
    sentence_start: Vec<u32>,
    /// `marks_before[i]`: tokens before `i` that follow a `.`, `;`, `:`, `!` or `?`
    /// (an alignment may not skip words across one: a splice of two statements that
    /// the segmenter did not split).
    marks_before: Vec<u32>,
    /// Each distinct lemma: (the first token that has it, its id); hashed by the
    /// lemma's text, which lives in `tokens` (no allocation per word).
    ids: hashbrown::HashTable<(u32, u32)>,
    hasher: hashbrown::DefaultHashBuilder,
    starts: Vec<u32>,
    positions: Vec<u32>,
    negated: bool,
}

impl SourceIndex {
    /// Index a plain passage (the gate's candidate passages).
    pub fn passage(text: &str) -> SourceIndex {
        let cleaned = clean(text);
        let mut tokens = tokenize_clean(&cleaned);
        mark_plain_predicates(&mut tokens);
        SourceIndex::build(tokens, &cleaned, false)
    }

    /// Index a cited fact's words: `text` verbalises a fact with these argument values;
    /// `negated` says the fact is one a proof relied on being *absent*.
    pub fn fact(text: &str, args: &[Value], negated: bool) -> SourceIndex {
        let cleaned = clean(text);
        let mut tokens = tokenize_clean(&cleaned);
        if !mark_fact_predicates(&mut tokens, args) {
            mark_plain_predicates(&mut tokens);
        }
        SourceIndex::build(tokens, &cleaned, negated)
    }

    fn build(tokens: Tokens, cleaned: &str, negated: bool) -> SourceIndex {
        // Sentences by the guarded segmenter, so `Dr.` or `500.00` do not end one.
        let mut sentence = Vec::with_capacity(tokens.len());
        let mut sentence_start = Vec::new();
        let bounds: Vec<usize> = if tokens.len() > 0
            && cleaned.contains(['.', '!', '?', '\n', '。', '！', '？', '…', '؟', '।'])
        {
            segment(cleaned).iter().map(|s| s.start).collect()
        } else {
            vec![0]
        };
        let mut s = 0usize;
        for (i, &off) in tokens.offset.iter().enumerate() {
            let mut moved = i == 0;
            while s + 1 < bounds.len() && bounds[s + 1] <= off as usize {
                s += 1;
                moved = true;
            }
            if moved {
                sentence_start.push(i as u32);
            }
            sentence.push((sentence_start.len().max(1) - 1) as u32);
        }
        sentence_start.push(tokens.len() as u32);
        let hasher = hashbrown::DefaultHashBuilder::default();
        let mut ids: hashbrown::HashTable<(u32, u32)> = hashbrown::HashTable::new();
        let mut seq = Vec::with_capacity(tokens.len());
        for i in 0..tokens.len() {
            let k = tokens.key(i);
            let hash = hasher.hash_one(k);
            let next = ids.len() as u32;
            let id = match ids.entry(
                hash,
                |&(t, _)| tokens.key(t as usize) == k,
                |&(t, _)| hasher.hash_one(tokens.key(t as usize)),
            ) {
                hashbrown::hash_table::Entry::Occupied(e) => e.get().1,
                hashbrown::hash_table::Entry::Vacant(e) => {
                    e.insert((i as u32, next));
                    next
                }
            };
            seq.push(id);
        }
        let mut starts = vec![0u32; ids.len() + 1];
        for &id in &seq {
            starts[id as usize + 1] += 1;
        }
        for k in 1..starts.len() {
            starts[k] += starts[k - 1];
        }
        let mut fill = starts.clone();
        let mut positions = vec![0u32; seq.len()];
        for (pos, &id) in seq.iter().enumerate() {
            positions[fill[id as usize] as usize] = pos as u32;
            fill[id as usize] += 1;
        }
        let mut marks_before = Vec::with_capacity(tokens.len() + 1);
        marks_before.push(0u32);
        for &f in &tokens.flags {
            let last = marks_before[marks_before.len() - 1];
            marks_before.push(last + u32::from(f & flag::SEMI != 0));
        }
        SourceIndex {
            tokens,
            sentence,
            sentence_start,
            marks_before,
            ids,
            hasher,
            starts,
            positions,
            negated,
        }
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether the source has no tokens.
    pub fn is_empty(&self) -> bool {
        self.tokens.len() == 0
    }

    /// Whether this is a fact the proof relied on being absent.
    pub fn is_negated(&self) -> bool {
        self.negated
    }

    fn occurrences(&self, key: &str) -> &[u32] {
        let hash = self.hasher.hash_one(key);
        match self
            .ids
            .find(hash, |&(t, _)| self.tokens.key(t as usize) == key)
        {
            Some(&(_, k)) => {
                let k = k as usize;
                &self.positions[self.starts[k] as usize..self.starts[k + 1] as usize]
            }
            None => &[],
        }
    }

    fn sentence_range(&self, s: u32) -> (usize, usize) {
        (
            self.sentence_start[s as usize] as usize,
            self.sentence_start[s as usize + 1] as usize,
        )
    }
}

/// Mark a structured fact's predicate words: its template's content words (not an
/// argument value, function word, auxiliary or number) other than the first, which
/// names what the fact is about (`drone` in "drone 7 is a member of group 42"). False
/// when no argument value is found in the text (the caller falls back to the plain
/// rule).
fn mark_fact_predicates(tokens: &mut Tokens, args: &[Value]) -> bool {
    let mut found = false;
    for a in args {
        // Integers are one token as written; anything else is tokenized like the text.
        let keys: Vec<String> = match a {
            Value::Number(n) => vec![itoa::Buffer::new().format(*n).to_string()],
            Value::Unsigned(n) => vec![itoa::Buffer::new().format(*n).to_string()],
            Value::Symbol(s) => {
                let t = tokenize_clean(&clean(s));
                (0..t.len()).map(|i| t.key(i).to_string()).collect()
            }
            other => {
                let t = tokenize_clean(&clean(&other.to_string()));
                (0..t.len()).map(|i| t.key(i).to_string()).collect()
            }
        };
        if keys.is_empty() || keys.len() > tokens.len() {
            continue;
        }
        for start in 0..=tokens.len() - keys.len() {
            if (0..keys.len()).all(|j| tokens.key(start + j) == keys[j]) {
                for j in 0..keys.len() {
                    tokens.flags[start + j] |= flag::ARG;
                }
                found = true;
            }
        }
    }
    if !found {
        return false;
    }
    let mut first_content = true;
    for i in 0..tokens.len() {
        let f = tokens.flags[i];
        if f & flag::SEMI != 0 {
            first_content = true;
        }
        if f & (flag::FUNCTION | flag::AUX | flag::NUMBER) != 0 {
            continue;
        }
        if first_content {
            first_content = false;
            continue;
        }
        if f & flag::ARG == 0 {
            tokens.flags[i] |= flag::PRED;
        }
    }
    true
}

/// Predicate words of plain text: auxiliaries, and verb-like words (`-s`, `-ed`) that
/// are not their clause's first content word.
fn mark_plain_predicates(tokens: &mut Tokens) {
    let mut seen_content = false;
    for i in 0..tokens.len() {
        let f = tokens.flags[i];
        if f & (flag::WEAK | flag::SEMI | flag::COORD) != 0 {
            seen_content = false;
        }
        if f & flag::AUX != 0 {
            tokens.flags[i] |= flag::PRED;
            continue;
        }
        if f & (flag::FUNCTION | flag::NUMBER) != 0 {
            continue;
        }
        let raw = tokens.raw(i);
        if seen_content && raw.len() > 3 && (raw.ends_with("ed") || raw.ends_with('s')) {
            tokens.flags[i] |= flag::PRED;
        }
        if tokens.marker[i] != 0 {
            tokens.flags[i] |= flag::PRED;
        }
        seen_content = true;
    }
}

// ---------------------------------------------------------------------------------------
// Alignment
// ---------------------------------------------------------------------------------------

/// Work done and allowed while verifying one claim.
#[derive(Debug, Clone, Copy)]
pub struct Work {
    /// Units used so far (alignment states and predecessor probes).
    pub used: u64,
    /// Units allowed.
    pub limit: u64,
}

impl Default for Work {
    fn default() -> Self {
        Work {
            used: 0,
            limit: MAX_CLAIM_WORK,
        }
    }
}

impl Work {
    fn spend(&mut self, n: u64) -> Result<(), Reason> {
        self.used = self.used.saturating_add(n);
        if self.used > self.limit {
            Err(Reason::TooMuchWork { limit: self.limit })
        } else {
            Ok(())
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct State {
    pos: u32,
    cost: u32,
    start: u32,
    back: u32,
}

/// Minimum-gap alignments of claim tokens (by occurrence lists), one per source sentence
/// that holds one, best first. `within`: whether an alignment must stay inside one
/// sentence.
fn align_all(
    src: &SourceIndex,
    occ: &[&[u32]],
    within: bool,
    work: &mut Work,
) -> Result<Vec<Alignment>, Reason> {
    let total: u64 = occ.iter().map(|o| o.len() as u64).sum();
    if total > MAX_ALIGN_STATES {
        return Err(Reason::TooMuchWork {
            limit: MAX_ALIGN_STATES,
        });
    }
    work.spend(total)?;
    let Some(first) = occ.first() else {
        return Ok(Vec::new());
    };
    let mut layers: Vec<Vec<State>> = Vec::with_capacity(occ.len());
    layers.push(
        first
            .iter()
            .map(|&p| State {
                pos: p,
                cost: 0,
                start: p,
                back: 0,
            })
            .collect(),
    );
    for positions in &occ[1..] {
        let prev = &layers[layers.len() - 1];
        let mut layer = Vec::new();
        let mut probes = 0u64;
        for &p in positions.iter() {
            let lo = p.saturating_sub(MAX_SINGLE_GAP as u32 + 1);
            let from = prev.partition_point(|s| s.pos < lo);
            let mut best: Option<State> = None;
            for (k, s) in prev.iter().enumerate().skip(from) {
                if s.pos >= p {
                    break;
                }
                probes += 1;
                if within
                    && (src.sentence[s.pos as usize] != src.sentence[p as usize]
                        || (p > s.pos + 1
                            && src.marks_before[p as usize + 1]
                                > src.marks_before[s.pos as usize + 1]))
                {
                    continue;
                }
                let cost = s.cost + (p - s.pos - 1);
                if cost as usize > MAX_TOTAL_GAP {
                    continue;
                }
                if best.is_none_or(|b| (cost, s.start) < (b.cost, b.start)) {
                    best = Some(State {
                        pos: p,
                        cost,
                        start: s.start,
                        back: k as u32,
                    });
                }
            }
            layer.extend(best);
        }
        work.spend(probes)?;
        if layer.is_empty() {
            return Ok(Vec::new());
        }
        layers.push(layer);
    }
    let last = &layers[layers.len() - 1];
    // Best final state per sentence. States are in position order, so one sentence's
    // states are adjacent.
    let mut best: Vec<(u32, usize)> = Vec::new(); // (sentence, index into last)
    for (k, s) in last.iter().enumerate() {
        let sent = src.sentence[s.pos as usize];
        match best.last_mut() {
            Some(entry) if entry.0 == sent => {
                let b = &last[entry.1];
                if (s.cost, s.start, s.pos) < (b.cost, b.start, b.pos) {
                    entry.1 = k;
                }
            }
            _ => best.push((sent, k)),
        }
    }
    best.sort_by_key(|&(_, k)| (last[k].cost, last[k].start));
    // Only the best few are judged (each judgement is linear in its sentence).
    best.truncate(MAX_CANDIDATES);
    let out: Vec<Alignment> = best
        .into_iter()
        .map(|(_, mut k)| {
            let end_state = last[k];
            let mut positions = vec![0usize; occ.len()];
            for (i, layer) in layers.iter().enumerate().rev() {
                let s = layer[k];
                positions[i] = s.pos as usize;
                k = s.back as usize;
            }
            Alignment {
                positions,
                start: end_state.start as usize,
                end: end_state.pos as usize + 1,
                total_gap: end_state.cost as usize,
            }
        })
        .collect();
    Ok(out)
}

/// Most candidate alignments (the best of different sentences) judged per claim and
/// source.
const MAX_CANDIDATES: usize = 16;

/// Why no alignment fits although every token occurs.
fn explain_no_alignment(
    src: &SourceIndex,
    occ: &[&[u32]],
    work: &mut Work,
) -> Result<Reason, Reason> {
    let mut after: Option<u32> = None;
    for o in occ {
        let i = after.map_or(0, |a| o.partition_point(|&p| p <= a));
        match o.get(i) {
            Some(&p) => after = Some(p),
            None => return Ok(Reason::NotInOrder),
        }
    }
    // In order, but not within budget inside a sentence. Whether it would be across
    // sentences (a splice) is worked out only for the failure finally reported
    // ([`refine_gap`]).
    let _ = (src, work);
    Ok(Reason::GapExceeded)
}

/// A `gap_exceeded` failure of a whole claim on `src`, told apart from a splice: the
/// claim's words fit the budget only across two sentences of the source.
fn refine_gap(src: &SourceIndex, claim: &Tokens, work: &mut Work) -> Reason {
    let splittable =
        src.sentence_start.len() > 2 || src.marks_before.last().is_some_and(|&m| m > 0);
    if !splittable {
        return Reason::GapExceeded;
    }
    let occ: Vec<&[u32]> = (0..claim.len())
        .map(|i| src.occurrences(claim.key(i)))
        .collect();
    match align_all(src, &occ, false, work) {
        Ok(found) if !found.is_empty() => Reason::CrossesSentences,
        _ => Reason::GapExceeded,
    }
}

// ---------------------------------------------------------------------------------------
// Checking one claim against one source
// ---------------------------------------------------------------------------------------

/// A successful check: where the claim matched.
#[derive(Debug, Clone)]
pub(crate) struct Matched {
    pub(crate) alignment: Alignment,
}

impl SourceIndex {
    /// Check claim tokens against this source: alignment within a sentence, then the
    /// scope, subject and antonym rules. A negated source needs the claim's negation.
    pub(crate) fn check(&self, claim: &Tokens, work: &mut Work) -> Result<Matched, Reason> {
        if claim.len() == 0 {
            return Err(Reason::EmptyClaim);
        }
        if claim.len() > MAX_CLAIM_TOKENS {
            return Err(Reason::ClaimTooLong {
                tokens: claim.len(),
                limit: MAX_CLAIM_TOKENS,
            });
        }
        if self.negated {
            return self.check_negated(claim, work);
        }
        self.check_positive(claim, work)
    }

    fn check_negated(&self, claim: &Tokens, work: &mut Work) -> Result<Matched, Reason> {
        let mut closest: Option<Reason> = None;
        for i in 0..claim.len() {
            let raw = claim.raw(i);
            let placed =
                raw == "never" || (raw == "not" && i > 0 && claim.flags[i - 1] & flag::AUX != 0);
            if !placed {
                continue;
            }
            let without = claim.select((0..claim.len()).filter(|&j| j != i));
            match self.check_positive(&without, work) {
                Ok(m) => return Ok(m),
                Err(r) => {
                    if closest.as_ref().is_none_or(|c| r.rank() > c.rank()) {
                        closest = Some(r);
                    }
                }
            }
        }
        // Without a negation the claim asserts what the proof relied on being absent.
        match closest {
            Some(r) => Err(r),
            None => match self.check_positive(claim, work) {
                Ok(_) => Err(Reason::NegatedFact),
                Err(r) => Err(r),
            },
        }
    }

    /// An article that opens the claim (`A photon has …`, `The fund …`) carries no
    /// claim: if the claim fails with it, it is tried without it. (Inside a claim an
    /// `a` may be a name, as in "series a shares", and is kept.)
    fn check_positive(&self, claim: &Tokens, work: &mut Work) -> Result<Matched, Reason> {
        let first = self.check_exact(claim, work);
        let leading = claim.len() > 0 && matches!(claim.key(0), "a" | "the");
        if first.is_ok() || !leading || claim.len() < 2 {
            return first;
        }
        let without = claim.select(1..claim.len());
        match self.check_exact(&without, work) {
            Ok(m) => Ok(m),
            Err(_) => first,
        }
    }

    fn check_exact(&self, claim: &Tokens, work: &mut Work) -> Result<Matched, Reason> {
        let occ: Vec<&[u32]> = (0..claim.len())
            .map(|i| self.occurrences(claim.key(i)))
            .collect();
        if let Some(i) = occ.iter().position(|o| o.is_empty()) {
            return Err(Reason::AbsentToken {
                token: claim.raw(i).to_string(),
            });
        }
        let candidates = align_all(self, &occ, true, work)?;
        if candidates.is_empty() {
            return Err(explain_no_alignment(self, &occ, work)?);
        }
        let mut closest: Option<Reason> = None;
        for alignment in candidates {
            match self.judge(claim, &alignment) {
                Ok(()) => return Ok(Matched { alignment }),
                Err(r) => {
                    if closest.as_ref().is_none_or(|c| r.rank() > c.rank()) {
                        closest = Some(r);
                    }
                }
            }
        }
        Err(closest.unwrap_or(Reason::NotInOrder))
    }

    /// The rules beyond alignment, for one alignment.
    fn judge(&self, claim: &Tokens, al: &Alignment) -> Result<(), Reason> {
        let t = &self.tokens;
        let count_in_claim = |raw: &str| claim.count_raw(raw, 0..claim.len());
        // 1. Markers inside the span (the seed's guard, over the wider marker set).
        for p in al.start..al.end {
            if t.marker[p] == 0 {
                continue;
            }
            let raw = t.raw(p);
            let in_span = t.count_raw(raw, al.start..al.end);
            if count_in_claim(raw) < in_span {
                return Err(Reason::PolarityDropped {
                    marker: raw.to_string(),
                });
            }
        }
        let (sent_start, sent_end) = self.sentence_range(self.sentence[al.start]);
        // 2. Markers before the span whose scope reaches it.
        for p in sent_start..al.start {
            if t.marker[p] == 0 || !self.reaches_forward(p, al.start) {
                continue;
            }
            let raw = t.raw(p);
            let needed = t.count_raw(raw, p..al.end);
            if count_in_claim(raw) < needed {
                return Err(Reason::ScopeDropped {
                    marker: raw.to_string(),
                    before: true,
                });
            }
        }
        // 3. Markers after the span whose scope reaches back to it.
        for q in al.end..sent_end {
            let f = t.flags[q];
            if f & (flag::SEMI | flag::COORD) != 0 {
                break;
            }
            // Contrast after the span ("… rather than Y", "… than Z") only narrows
            // what the span said; everything else reaches back to it.
            if t.marker[q] & !class::CONTRAST != 0 || self.is_proportion(q) {
                let raw = t.raw(q);
                let needed = t.count_raw(raw, al.start..q + 1);
                if count_in_claim(raw) < needed {
                    return Err(Reason::ScopeDropped {
                        marker: raw.to_string(),
                        before: false,
                    });
                }
            }
        }
        // 4. The span starts where a clause starts (modulo skippable words).
        let mut c = al.start;
        while c > sent_start && t.flags[c] & (flag::WEAK | flag::SEMI | flag::COORD) == 0 {
            c -= 1;
        }
        let skipped: Vec<&str> = (c..al.start)
            .filter(|&i| t.flags[i] & flag::SKIPPABLE == 0)
            .map(|i| t.raw(i))
            .collect();
        if !skipped.is_empty() {
            let words: Vec<&str> = (c..al.start).map(|i| t.raw(i)).collect();
            return Err(Reason::SubjectSkipped {
                words: words.join(" "),
            });
        }
        // 5. No opposite of a claim word inside the span.
        for i in 0..claim.len() {
            let Some(opposites) = OPPOSITES.get(claim.key(i)) else {
                continue;
            };
            for opposite in opposites {
                let in_span = t.count_key(opposite, al.start..al.end);
                let in_claim = claim.count_key(opposite, 0..claim.len());
                if in_span > in_claim {
                    return Err(Reason::Antonym {
                        claim: claim.raw(i).to_string(),
                        passage: opposite.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Whether a marker at `p` scopes over a span starting at `s` (same sentence, p < s):
    /// no clause break in between. `;`/`:` always break; a coordinator breaks unless the
    /// marker governs a complement clause opened before it (`not true that A and B`)
    /// and no comma precedes the coordinator.
    fn reaches_forward(&self, p: usize, s: usize) -> bool {
        let f = &self.tokens.flags;
        let mut complement = false;
        for &fq in &f[p + 1..=s] {
            if fq & flag::SEMI != 0 {
                return false;
            }
            if fq & flag::COORD != 0 && (fq & flag::COMMA != 0 || !complement) {
                return false;
            }
            if fq & flag::COMPL != 0 {
                complement = true;
            }
        }
        true
    }

    /// `N of M`, `N out of M`, `N in M`: a proportion restricting what it follows.
    fn is_proportion(&self, q: usize) -> bool {
        let t = &self.tokens;
        if t.flags[q] & flag::NUMBER == 0 {
            return false;
        }
        let next = |i: usize| (i < t.len()).then(|| t.raw(i));
        let num = |i: usize| t.flags.get(i).is_some_and(|f| f & flag::NUMBER != 0);
        match next(q + 1) {
            Some("of") | Some("in") => num(q + 2),
            Some("out") => next(q + 2) == Some("of") && num(q + 3),
            _ => false,
        }
    }

    /// The position of the first predicate word in an alignment's span, if any.
    fn first_predicate(&self, al: &Alignment) -> Option<usize> {
        al.positions
            .iter()
            .copied()
            .find(|&p| self.tokens.flags[p] & flag::PRED != 0)
    }
}

// ---------------------------------------------------------------------------------------
// Claims over several sources: lists and clauses
// ---------------------------------------------------------------------------------------

/// How a claim was supported: which source backs each part.
#[derive(Debug, Clone)]
pub(crate) struct Support {
    /// Per part: the source and the alignment in it.
    pub(crate) parts: Vec<(usize, Alignment)>,
}

/// Why a claim failed: the closest failure and the source it was measured on.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub(crate) reason: Reason,
    pub(crate) source: Option<usize>,
}

/// Verify a claim against sources, each on its own: the whole claim against one
/// source, else every item of a coordinated list, else every clause, each against one
/// source.
pub(crate) fn verify_claim(
    claim: &Tokens,
    sources: &[&SourceIndex],
    work: &mut Work,
) -> Result<Support, Failure> {
    if claim.len() == 0 {
        return Err(Failure {
            reason: Reason::EmptyClaim,
            source: None,
        });
    }
    if claim.len() > MAX_CLAIM_TOKENS {
        return Err(Failure {
            reason: Reason::ClaimTooLong {
                tokens: claim.len(),
                limit: MAX_CLAIM_TOKENS,
            },
            source: None,
        });
    }
    if sources.is_empty() {
        return Err(Failure {
            reason: Reason::NoPassage,
            source: None,
        });
    }
    let mut v = Verifier {
        sources,
        work,
        leaves: 0,
        seen: HashMap::new(),
        blocked: None,
    };
    v.claim(claim, 0, false).map_err(|mut f| {
        if f.reason == Reason::GapExceeded
            && let Some(src) = f.source.and_then(|i| sources.get(i))
        {
            f.reason = refine_gap(src, claim, v.work);
        }
        f
    })
}

struct Verifier<'a, 'w> {
    sources: &'a [&'a SourceIndex],
    work: &'w mut Work,
    leaves: usize,
    /// Results of whole-claim checks already made (items and clauses repeat).
    seen: HashMap<(String, bool), Result<(usize, Alignment), Failure>>,
    /// Why the closest decomposition failed: the item or clause that failed after
    /// others held (a more useful reason than the whole claim's).
    blocked: Option<Failure>,
}

const MAX_LEAVES: usize = 12;
const MAX_SPLITS: usize = 6;

fn closer(a: Option<Failure>, b: Failure) -> Option<Failure> {
    match a {
        Some(a) if a.reason.rank() >= b.reason.rank() => Some(a),
        _ => Some(b),
    }
}

impl Verifier<'_, '_> {
    /// The whole claim against each source; `need_pred`: the match must include a
    /// predicate word of the source.
    fn whole(&mut self, claim: &Tokens, need_pred: bool) -> Result<(usize, Alignment), Failure> {
        let key = (claim.keys_joined(), need_pred);
        if let Some(r) = self.seen.get(&key) {
            return r.clone();
        }
        let r = self.whole_uncached(claim, need_pred);
        self.seen.insert(key, r.clone());
        r
    }

    fn whole_uncached(
        &mut self,
        claim: &Tokens,
        need_pred: bool,
    ) -> Result<(usize, Alignment), Failure> {
        let mut closest: Option<Failure> = None;
        for (i, src) in self.sources.iter().enumerate() {
            match src.check(claim, self.work) {
                Ok(m) => {
                    if need_pred && src.first_predicate(&m.alignment).is_none() {
                        closest = closer(
                            closest,
                            Failure {
                                reason: Reason::NoPredicate,
                                source: Some(i),
                            },
                        );
                        continue;
                    }
                    return Ok((i, m.alignment));
                }
                Err(reason) => {
                    let fatal = matches!(reason, Reason::TooMuchWork { .. });
                    closest = closer(
                        closest,
                        Failure {
                            reason,
                            source: Some(i),
                        },
                    );
                    if fatal {
                        break;
                    }
                }
            }
        }
        Err(closest.unwrap_or(Failure {
            reason: Reason::NoPassage,
            source: None,
        }))
    }

    fn claim(&mut self, claim: &Tokens, depth: usize, need_pred: bool) -> Result<Support, Failure> {
        let whole = if depth == 0 {
            self.whole_uncached(claim, need_pred)
        } else {
            self.whole(claim, need_pred)
        };
        let whole = match whole {
            Ok((i, al)) => {
                return Ok(Support {
                    parts: vec![(i, al)],
                });
            }
            Err(f) => f,
        };
        if matches!(
            whole.reason,
            Reason::TooMuchWork { .. } | Reason::ClaimTooLong { .. }
        ) || depth >= 4
            || self.has_fatal_absence(claim)
        {
            return Err(whole);
        }
        for (left, right) in list_expansions(claim) {
            if self.leaves > MAX_LEAVES {
                break;
            }
            let mut parts = Vec::new();
            let mut ok = true;
            for item in [left, right] {
                self.leaves += 1;
                match self.claim(&item, depth + 1, need_pred) {
                    Ok(s) => parts.extend(s.parts),
                    Err(f) => {
                        if !parts.is_empty() {
                            self.note_blocked(f);
                        }
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                return Ok(Support { parts });
            }
        }
        if depth == 0
            && let Some(s) = self.clauses(claim)
        {
            return Ok(s);
        }
        if depth == 0
            && let Some(b) = self.blocked.take()
            && b.reason.rank() >= whole.reason.rank()
        {
            return Err(b);
        }
        Err(whole)
    }

    fn note_blocked(&mut self, f: Failure) {
        if self
            .blocked
            .as_ref()
            .is_none_or(|b| f.reason.rank() > b.reason.rank())
        {
            self.blocked = Some(f);
        }
    }

    /// Whether some claim word occurs in no source at all. Items of a list and clauses
    /// keep every word but coordinators (and the leading article, and a negation a
    /// negated source consumes), so such a claim cannot hold in parts either.
    fn has_fatal_absence(&self, claim: &Tokens) -> bool {
        (0..claim.len()).any(|i| {
            let key = claim.key(i);
            let spared = claim.flags[i] & flag::COORD != 0
                || matches!(key, "a" | "the" | "not" | "never" | "&");
            !spared && self.sources.iter().all(|s| s.occurrences(key).is_empty())
        })
    }

    /// Split at coordinators and `;`/`:`; every clause must hold on one source and say
    /// something of its own. A clause that fails borrows the first clause's subject.
    fn clauses(&mut self, claim: &Tokens) -> Option<Support> {
        let n = claim.len();
        // Cut points: (end of this part, start of the next).
        let mut cuts: Vec<(usize, usize)> = Vec::new();
        for i in 1..n.saturating_sub(1) {
            let f = claim.flags[i];
            if f & flag::COORD != 0 {
                cuts.push((i, i + 1));
            } else if f & flag::SEMI != 0 {
                cuts.push((i, i));
            }
        }
        if cuts.is_empty() || cuts.len() > MAX_SPLITS {
            return None;
        }
        self.split_from(claim, 0, &cuts, None, Vec::new())
    }

    /// Clauses from token `start` on: the first part that holds, then the rest.
    fn split_from(
        &mut self,
        claim: &Tokens,
        start: usize,
        cuts: &[(usize, usize)],
        subject: Option<&Tokens>,
        done: Vec<(usize, Alignment)>,
    ) -> Option<Support> {
        let n = claim.len();
        let ends: Vec<(usize, usize)> = cuts
            .iter()
            .copied()
            .filter(|c| c.0 > start)
            .chain(std::iter::once((n, n)))
            .collect();
        for (end, next) in ends {
            self.leaves += 1;
            if self.leaves > MAX_LEAVES * 2 {
                return None;
            }
            let part = claim.select(start..end);
            let support = match self.claim(&part, 1, true) {
                Ok(s) => s,
                Err(own) => {
                    let Some(subj) = subject else {
                        if start > 0 {
                            self.note_blocked(own);
                        }
                        continue;
                    };
                    let borrowed = subj.concat(&part);
                    match self.claim(&borrowed, 1, true) {
                        Ok(s) => s,
                        Err(f) => {
                            self.note_blocked(f);
                            continue;
                        }
                    }
                }
            };
            let own_subject = if start == 0 {
                self.subject_of(&part, &support)
            } else {
                None
            };
            let mut acc = done.clone();
            acc.extend(support.parts);
            if end == n {
                return Some(Support { parts: acc });
            }
            let subject = own_subject.as_ref().or(subject);
            if let Some(s) = self.split_from(claim, next, cuts, subject, acc) {
                return Some(s);
            }
        }
        None
    }

    /// The first clause's subject: its tokens before the one matched to the source's
    /// first predicate word.
    fn subject_of(&self, part: &Tokens, support: &Support) -> Option<Tokens> {
        let (src, al) = support.parts.first()?;
        let pred = self.sources[*src].first_predicate(al)?;
        let k = al.positions.iter().position(|&p| p >= pred)?;
        let k = (0..k)
            .rev()
            .find(|&j| self.sources[*src].tokens.flags[al.positions[j]] & flag::AUX == 0)
            .map_or(0, |j| j + 1);
        (k > 0 && k <= part.len()).then(|| part.select(0..k))
    }
}

/// The coordinated lists in a claim, each as two claims: one with the left item, one
/// with the right (`drones 7 and 9 are members` → `drones 7 are members`, `drones 9 are
/// members`). Items are 1 to 3 tokens of the same shape: numbers, single words, or
/// phrases that share all but their last token (`zone airport and zone harbor`).
fn list_expansions(claim: &Tokens) -> Vec<(Tokens, Tokens)> {
    let n = claim.len();
    let mut out = Vec::new();
    for i in 1..n {
        let raw = claim.raw(i);
        let is_word_coord = matches!(raw, "and" | "or" | "&") && i + 1 < n;
        let is_comma = claim.flags[i] & flag::COMMA != 0;
        if !is_word_coord && !is_comma {
            continue;
        }
        for k in 1..=3usize {
            let (left, right) = if is_word_coord {
                if i < k || i + 1 + k > n {
                    continue;
                }
                ((i - k)..i, (i + 1)..(i + 1 + k))
            } else {
                if i < k || i + k > n {
                    continue;
                }
                // A comma list item must be followed by another comma or `and`/`or`.
                let after = i + k;
                let continues = after < n
                    && (claim.flags[after] & flag::COMMA != 0
                        || matches!(claim.raw(after), "and" | "or"));
                if !continues {
                    continue;
                }
                ((i - k)..i, i..(i + k))
            };
            if !same_shape(claim, left.clone(), right.clone()) {
                continue;
            }
            let keep_left = (0..n).filter(|j| !(left.end..right.end).contains(j));
            let keep_right = (0..n).filter(|j| !(left.start..right.start).contains(j));
            out.push((claim.select(keep_left), claim.select(keep_right)));
            if out.len() >= 6 {
                return out;
            }
        }
    }
    out
}

fn same_shape(claim: &Tokens, a: std::ops::Range<usize>, b: std::ops::Range<usize>) -> bool {
    let k = a.len();
    let last_a = a.end - 1;
    let last_b = b.end - 1;
    let num = |i: usize| claim.flags[i] & flag::NUMBER != 0;
    let plain = |i: usize| {
        claim.flags[i] & (flag::FUNCTION | flag::AUX | flag::COORD) == 0 && claim.marker[i] == 0
    };
    for j in 0..k - 1 {
        if claim.key(a.start + j) != claim.key(b.start + j) {
            return false;
        }
    }
    if k == 1 {
        return (num(last_a) && num(last_b))
            || (plain(last_a) && plain(last_b) && !num(last_a) && !num(last_b));
    }
    // Items that share their head (`series a` / `series b`, `zone airport` / `zone
    // harbor`): any last words but coordinators, auxiliaries and markers.
    let label = |i: usize| claim.flags[i] & (flag::AUX | flag::COORD) == 0 && claim.marker[i] == 0;
    (num(last_a) && num(last_b)) || (label(last_a) && label(last_b) && !num(last_a) && !num(last_b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(claim: &str, passage: &str) -> bool {
        let src = SourceIndex::passage(passage);
        verify_claim(&claim_tokens(claim), &[&src], &mut Work::default()).is_ok()
    }

    fn why(claim: &str, passage: &str) -> Reason {
        let src = SourceIndex::passage(passage);
        match verify_claim(&claim_tokens(claim), &[&src], &mut Work::default()) {
            Ok(_) => panic!("{claim:?} accepted"),
            Err(f) => f.reason,
        }
    }

    #[test]
    fn lemmas() {
        for (a, b) in [
            ("drones", "drone"),
            ("members", "member"),
            ("intruded", "intrude"),
            ("intrudes", "intruding"),
            ("threatens", "threaten"),
            ("batteries", "battery"),
            ("dropped", "drop"),
            ("are", "is"),
            ("classes", "class"),
        ] {
            assert_eq!(lemma(a), lemma(b), "{a} {b}");
        }
        assert_ne!(lemma("not"), lemma("no"));
        assert_eq!(lemma("none"), "none");
    }

    #[test]
    fn verbatim_sub_span_and_inflection_pass() {
        let p = "drone 9 is a member of group 42";
        assert!(ok("Drone 9 is a member of group 42.", p));
        assert!(ok("Drone 9 is a member.", p));
        assert!(ok(
            "Drones 7 and 9 are members of group 42.",
            "drone 7 is a member of group 42. drone 9 is a member of group 42."
        ));
    }

    #[test]
    fn splice_across_sentences_fails() {
        let p = "drone 7 was sighted in zone harbor. zone airport is restricted airspace.";
        assert_eq!(
            why("drone 7 was sighted in zone airport", p),
            Reason::CrossesSentences
        );
    }

    #[test]
    fn scope_before_and_after_the_span() {
        assert!(matches!(
            why(
                "drone 9 was cleared",
                "There is no evidence that drone 9 was cleared."
            ),
            Reason::ScopeDropped { before: true, .. }
        ));
        assert!(matches!(
            why(
                "drone 9 was cleared",
                "It is not the case that drone 9 was cleared."
            ),
            Reason::ScopeDropped { before: true, .. }
        ));
        assert!(matches!(
            why(
                "Backups are deleted automatically.",
                "Backups are deleted automatically unless a legal hold is set."
            ),
            Reason::ScopeDropped { before: false, .. }
        ));
        assert!(!ok(
            "Patients recovered.",
            "Only 2 of 100 patients recovered."
        ));
        assert!(!ok(
            "Drone 9 is a member of group 42.",
            "Drone 9 is a former member of group 42."
        ));
        assert!(!ok(
            "drone 9 is hostile",
            "drone 9 is unlikely to be hostile"
        ));
        // A negation in another clause does not reach the span.
        assert!(ok(
            "drone 9 was sighted",
            "drone 7 was not cleared, and drone 9 was sighted"
        ));
        assert!(ok(
            "drone 9 was sighted",
            "drone 9 was sighted but not cleared"
        ));
    }

    #[test]
    fn skipped_subject_fails() {
        assert!(matches!(
            why(
                "drone 9 was sighted in zone airport",
                "drone 7, escorting drone 9, was sighted in zone airport"
            ),
            Reason::SubjectSkipped { .. }
        ));
        assert!(ok(
            "The monthly rent is 2,000 dollars.",
            "The deposit is 1,500 dollars and the monthly rent is 2,000 dollars."
        ));
    }

    #[test]
    fn antonym_in_span_fails() {
        assert!(matches!(
            why(
                "drone 9 is friendly",
                "drone 9 is hostile rather than friendly"
            ),
            Reason::PolarityDropped { .. } | Reason::Antonym { .. }
        ));
    }

    #[test]
    fn negated_fact_needs_the_negation() {
        let src = SourceIndex::fact(
            "drone 9 was cleared by an operator",
            &[Value::Number(9)],
            true,
        );
        let check = |c: &str| verify_claim(&claim_tokens(c), &[&src], &mut Work::default());
        assert!(check("Drone 9 was not cleared by an operator.").is_ok());
        assert!(check("Drone 9 wasn't cleared.").is_ok());
        assert!(matches!(
            check("Drone 9 was cleared by an operator.").map_err(|f| f.reason),
            Err(Reason::NegatedFact)
        ));
    }

    #[test]
    fn clauses_each_on_their_own_source() {
        let a = SourceIndex::fact(
            "drone 9 was sighted in zone airport",
            &[Value::Number(9), Value::Symbol("airport".into())],
            false,
        );
        let b = SourceIndex::fact(
            "zone airport is restricted airspace",
            &[Value::Symbol("airport".into())],
            false,
        );
        let c = SourceIndex::fact(
            "drone 9 intruded into restricted zone airport",
            &[Value::Number(9), Value::Symbol("airport".into())],
            false,
        );
        let m = SourceIndex::fact(
            "drone 7 is a member of group 42",
            &[Value::Number(42), Value::Number(7)],
            false,
        );
        let check = |claim: &str, srcs: &[&SourceIndex]| {
            verify_claim(&claim_tokens(claim), srcs, &mut Work::default()).is_ok()
        };
        assert!(check(
            "Drone 9 was sighted in zone airport and zone airport is restricted airspace.",
            &[&a, &b]
        ));
        assert!(check(
            "Drone 9 was sighted in zone airport and intruded into restricted zone airport.",
            &[&a, &c]
        ));
        // A name is not a clause; a borrowed subject must be the right one.
        assert!(!check(
            "Drone 7 and drone 9 intruded into restricted zone airport.",
            &[&m, &c]
        ));
        assert!(!check(
            "Drone 7 is a member of group 42 and intruded into restricted zone airport.",
            &[&m, &c]
        ));
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn the_ascii_tokenizer_is_the_unicode_one(text in "[a-zA-Z0-9 .,;:'!?()\\[\\]\"\n-]{0,40}") {
                let a = tokenize_ascii(&text);
                let u = tokenize_uax29(&text);
                let words = |t: &Tokens| (0..t.len()).map(|i| (t.raw(i).to_string(), t.flags[i], t.offset[i])).collect::<Vec<_>>();
                prop_assert_eq!(words(&a), words(&u));
            }
        }
    }

    #[test]
    fn work_is_bounded() {
        let passage = "the tenant shall pay the rent ".repeat(20_000);
        let claim = "the tenant shall pay the rent the tenant shall pay the rent.";
        let src = SourceIndex::passage(&passage);
        let mut work = Work::default();
        let r = verify_claim(&claim_tokens(claim), &[&src], &mut work);
        assert!(work.used <= work.limit + MAX_ALIGN_STATES);
        let _ = r;
        let long = "word ".repeat(MAX_CLAIM_TOKENS + 1);
        assert!(matches!(why(&long, "word"), Reason::ClaimTooLong { .. }));
    }
}
