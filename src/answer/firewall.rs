//! The hallucination firewall: an answer may only say what cited, allowed tags support.
//!
//! The firewall runs on a model's raw text after generation. What it keeps is exactly
//! what it checked: every character of the delivered answer belongs to a sentence
//! that was judged, and every word of a kept factual sentence was part of its check.
//!
//! # Reading the answer
//!
//! 1. **Invisible characters** ([`normalize::is_invisible`]: zero-width characters,
//!    bidirectional controls, the soft hyphen …) are removed first; the result, its
//!    offsets and the delivered answer refer to the text without them. A tag with a
//!    zero-width space inside is the tag a reader sees.
//! 2. **Sentences** come from the guarded [`segment`]er; a sentence made only of
//!    citation brackets on the same line as the sentence before it belongs to that
//!    sentence (`… threat. [STEP-1]`), but an `[UNVERIFIED]` marker that opens a
//!    sentence belongs to the sentence it opens (`… [STEP-1]. [UNVERIFIED] The fleet
//!    may be larger.`).
//! 3. **Markdown** ([`markdown`]) is read, not hidden: list items, table rows, headings,
//!    quotes, footnote definitions and code lines are sentences like any other, checked
//!    without their syntax (`- `, `| … |`, `## `). Layout lines (fences, rules, table
//!    separators) say nothing and are kept. Text a renderer hides (HTML comments, raw
//!    HTML elements, link reference definitions) is stripped wherever it appears,
//!    together with the sentence around it.
//! 4. **Brackets.** A `[…]` whose items are all citation tags (`HEDGE-N`, `RULE-N`,
//!    `STEP-N`, `PATTERN-N`, any case, numbers by value) or filler words (`see`,
//!    `source` …), separated by anything but letters and digits, is a citation. A
//!    bracket whose content starts with `UNVERIFIED` is a marker. A footnote reference
//!    (`[^1]`) says nothing. Every other bracket is text: its words are part of the
//!    sentence, and checked with it; a citation bracket that also holds words
//!    (`[STEP-1: drone 7 also carries explosives]`) cites its tags and its words are
//!    checked too. An unclosed `[` is a character like any other. A tag written with
//!    look-alike letters or digits from another script (`[НЕDGE-42]`) is a forgery:
//!    the sentence is stripped.
//!
//! # Deciding each sentence
//!
//! - **Hidden** text, or **control characters** (terminal escapes): stripped.
//! - **Layout**, or a sentence with no words at all (only citations, only a list
//!   marker): kept, not counted.
//! - **Tags** outside the allowed set, or ambiguous in the request (the same tag naming
//!   two different facts): stripped.
//! - **Unverified**: an honest, visible `[UNVERIFIED…]` marker: kept, not counted.
//! - **Glue**: a sentence citing nothing whose words are exactly one of a short, closed
//!   list of connectives ([`DEFAULT_GLUE`]: "Yes.", "In short:", "## Summary"),
//!   configurable with [`HallucinationFirewall::with_glue`]: kept, not counted. Any
//!   other sentence says something, whatever its length, and is factual.
//! - **Factual**: kept and counted as supported only if it cites at least one tag and
//!   every tag is allowed; otherwise stripped. With content verification on, it must
//!   also follow from the words of the facts its tags name
//!   ([`HallucinationFirewall::with_gate_verification`]): by the faithfulness gate,
//!   against each cited fact on its own, never a splice of two (see
//!   [`verify`]). A connective that opens the sentence ("In short,")
//!   is not part of what is checked.
//!
//! An answer with no supported sentence is never `supported`: it abstains (an answer
//! of glue and markers alone says nothing verified). Proof required but missing
//! abstains too. Otherwise the outcome is `supported` when nothing was stripped, else
//! `stripped`. `coverage` is supported ÷ factual sentences (1.0 with none).
//!
//! The sanitized answer is the kept sentences in their original order. Two sentences
//! that were adjacent in the original are joined by the whitespace that separated
//! them; where stripped sentences were removed in between, the gap collapses to a
//! paragraph break (`\n\n`) if a blank line separated any two of the sentences in
//! between, else a line break if a line break did, else a single space (or nothing,
//! for scripts written without spaces).

use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::rc::Rc;

use serde::Serialize;

use super::markdown::{self, LineKind, Structure};
use super::normalize::{self, fold_compat, fold_confusable, foreign_digit};
use super::segment::{Segment, segment};
use super::verify::{self, SourceIndex, Work};
use super::{CitedFact, TagResolver};

/// Connectives that carry no claim: a sentence whose words are exactly one of these
/// (case, punctuation and markdown emphasis aside) is glue.
pub const DEFAULT_GLUE: &[&str] = &[
    "yes",
    "in short",
    "in summary",
    "to summarize",
    "to summarise",
    "to sum up",
    "summary",
    "overall",
    "in conclusion",
    "conclusion",
    "answer",
    "short answer",
    "the answer",
    "details",
    "evidence",
    "the evidence",
    "sources",
    "citations",
    "key points",
    "findings",
    "explanation",
    "reasoning",
    "here is what the evidence shows",
    "here is what the proof shows",
    "here is what we know",
    "here's what we know",
    "based on the evidence",
    "based on the proof",
    "according to the evidence",
    "according to the proof",
    "however",
    "therefore",
    "thus",
    "also",
    "additionally",
    "furthermore",
    "moreover",
    "first",
    "second",
    "third",
    "finally",
    "next",
    "in addition",
    "that said",
    "as follows",
    "note",
    "notes",
    // Column labels that name no content.
    "fact",
    "facts",
    "source",
    "claim",
    "claims",
    "statement",
    "tag",
    "citation",
    "item",
];

/// A sentence of more words than this is never glue.
const MAX_GLUE_WORDS: usize = 16;

/// What the firewall says when it has nothing verifiable left to say.
pub const DEFAULT_ABSTAIN_MESSAGE: &str =
    "Insufficient verifiable evidence to answer this question.";

/// How many stripped sentences `as_dict` lists (the rest are only counted).
pub const AS_DICT_STRIPPED_LIMIT: usize = 10;

/// Words a citation bracket may hold besides its tags (`[see HEDGE-4]`,
/// `[sources: STEP-1, STEP-2]`).
const CITATION_FILLERS: &[&str] = &[
    "see",
    "source",
    "sources",
    "src",
    "ref",
    "refs",
    "reference",
    "references",
    "cf",
    "and",
    "also",
    "tag",
    "tags",
    "citation",
    "citations",
    "cited",
    "via",
    "per",
    "evidence",
    "proof",
];

/// A set of allowed citation tags. Implemented for the usual string sets so that
/// callers can pass whatever they collected tags into, and by
/// [`CitationTable`](crate::proof::CitationTable), which also knows which tags are
/// ambiguous in a request.
pub trait TagSet {
    /// Whether `tag` (canonical form, e.g. `HEDGE-42`) is allowed.
    fn contains_tag(&self, tag: &str) -> bool;

    /// Whether `tag` names different things in different places of the request; an
    /// ambiguous citation is stripped.
    fn is_ambiguous_tag(&self, _tag: &str) -> bool {
        false
    }
}

impl<S: std::hash::BuildHasher> TagSet for HashSet<String, S> {
    fn contains_tag(&self, tag: &str) -> bool {
        self.contains(tag)
    }
}

impl<S: std::hash::BuildHasher> TagSet for HashSet<&str, S> {
    fn contains_tag(&self, tag: &str) -> bool {
        self.contains(tag)
    }
}

impl TagSet for BTreeSet<String> {
    fn contains_tag(&self, tag: &str) -> bool {
        self.contains(tag)
    }
}

impl TagSet for [&str] {
    fn contains_tag(&self, tag: &str) -> bool {
        self.contains(&tag)
    }
}

impl TagSet for [String] {
    fn contains_tag(&self, tag: &str) -> bool {
        self.iter().any(|t| t == tag)
    }
}

/// Does a claim follow from cited facts? The faithfulness gate ([`GateSupport`]) is the
/// predicate the firewall is meant to use; any predicate of this shape will do (a
/// stricter one, or a stub in tests). A predicate must judge each fact on its own: a
/// claim supported only by a splice of two facts' words is not supported.
pub trait ClaimSupport {
    /// `Ok(())` when `claim` follows from the cited `facts`, else why not, in words a
    /// person can act on.
    fn supports(&self, claim: &str, facts: &[CitedFact]) -> Result<(), String>;

    /// `Some` for the built-in gate predicate, which the firewall runs with each cited
    /// fact indexed once per answer rather than once per sentence. Other predicates
    /// keep the default.
    fn as_gate(&self) -> Option<&GateSupport> {
        None
    }
}

/// A plain yes/no predicate over one passage: the claim must follow from the words of
/// one (positive) cited fact. Negated facts are not offered to it (it cannot tell a
/// negation). A "no" names the facts tried.
impl<F: Fn(&str, &str) -> bool> ClaimSupport for F {
    fn supports(&self, claim: &str, facts: &[CitedFact]) -> Result<(), String> {
        if facts.iter().any(|f| !f.negated && self(claim, &f.text)) {
            return Ok(());
        }
        let names: Vec<String> = facts.iter().map(describe).collect();
        Err(format!("not said by {}", names.join(" or ")))
    }
}

/// How a cited fact is named in a reason: `STEP-3 ("drone 9 was sighted …")`.
fn describe(f: &CitedFact) -> String {
    format!("{} (\"{}\")", f.tag, f.display_text())
}

/// The faithfulness gate's predicate as a [`ClaimSupport`]: the claim (or each item of
/// a list in it, or each clause of it) must follow from the words of one cited fact by
/// the gate's rules (see [`verify`]); a fact the proof relied on being
/// absent supports only a claim that says it is not so.
#[derive(Debug, Clone, Copy, Default)]
pub struct GateSupport;

impl ClaimSupport for GateSupport {
    fn supports(&self, claim: &str, facts: &[CitedFact]) -> Result<(), String> {
        gate_supports(claim, facts, &SourceCache::default())
    }

    fn as_gate(&self) -> Option<&GateSupport> {
        Some(self)
    }
}

/// Cited facts indexed for the gate, each once per answer (by words and polarity; a
/// fact's values only decide which of its words are names, and facts said in the same
/// words name the same things).
#[derive(Default)]
struct SourceCache {
    positive: RefCell<hashbrown::HashMap<Box<str>, Rc<SourceIndex>>>,
    negated: RefCell<hashbrown::HashMap<Box<str>, Rc<SourceIndex>>>,
}

impl SourceCache {
    fn get(&self, f: &CitedFact) -> Rc<SourceIndex> {
        let map = if f.negated {
            &self.negated
        } else {
            &self.positive
        };
        if let Some(ix) = map.borrow().get(f.text.as_str()) {
            return Rc::clone(ix);
        }
        let ix = Rc::new(SourceIndex::fact(&f.text, &f.args, f.negated));
        map.borrow_mut()
            .insert(f.text.as_str().into(), Rc::clone(&ix));
        ix
    }
}

fn gate_supports(claim: &str, facts: &[CitedFact], cache: &SourceCache) -> Result<(), String> {
    let sources: Vec<Rc<SourceIndex>> = facts.iter().map(|f| cache.get(f)).collect();
    let refs: Vec<&SourceIndex> = sources.iter().map(|s| &**s).collect();
    let tokens = verify::claim_tokens(claim);
    let mut work = Work::default();
    match verify::verify_claim(&tokens, &refs, &mut work) {
        Ok(_) => Ok(()),
        Err(failure) => {
            let source = match failure.source.and_then(|i| facts.get(i)) {
                Some(f) => describe(f),
                None => "the cited facts".to_string(),
            };
            Err(failure.reason.explain(&source))
        }
    }
}

/// Per-call options of [`HallucinationFirewall::check`] (the seed's `proved` and
/// `require_proof`). Defaults: proved, proof not required.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CheckOptions {
    /// Whether a symbolic conclusion was derived for this answer.
    pub proved: bool,
    /// Abstain outright unless `proved`.
    pub require_proof: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            proved: true,
            require_proof: false,
        }
    }
}

impl CheckOptions {
    /// The defaults: proved, proof not required.
    pub fn new() -> CheckOptions {
        CheckOptions::default()
    }

    /// Set whether a symbolic conclusion was derived.
    pub fn proved(mut self, proved: bool) -> CheckOptions {
        self.proved = proved;
        self
    }

    /// Set whether an unproved answer abstains outright.
    pub fn require_proof(mut self, require: bool) -> CheckOptions {
        self.require_proof = require;
        self
    }
}

/// The overall result of checking an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Outcome {
    /// Every factual sentence cited allowed tags (and at least one did).
    Supported,
    /// Some factual sentences were unsupported and removed.
    Stripped,
    /// Proof was required but missing, or no factual sentence survived.
    Abstained,
}

impl Outcome {
    /// The stable string form (`"supported"`, `"stripped"`, `"abstained"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Supported => "supported",
            Outcome::Stripped => "stripped",
            Outcome::Abstained => "abstained",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the firewall classified one sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SentenceKind {
    /// A connective from the glue list, kept.
    Glue,
    /// Layout or no words at all (a fence, a rule, a bare citation), kept.
    Layout,
    /// Carries an `[UNVERIFIED…]` marker, kept.
    Unverified,
    /// Factual and every citation checks out, kept.
    Supported,
    /// Removed; see the verdict's reason.
    Stripped,
}

/// Why a sentence was stripped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StripReason {
    /// A factual sentence that cites no tag.
    NoCitation,
    /// The sentence cites tags outside the allowed set.
    UnknownTags {
        /// The offending tags, canonical form, in order of appearance.
        tags: Vec<String>,
    },
    /// The sentence cites tags that name different facts in different places of the
    /// request.
    AmbiguousTags {
        /// The ambiguous tags.
        tags: Vec<String>,
    },
    /// The sentence cites a tag written with look-alike characters of another script.
    ForgedTags {
        /// The brackets' items as written.
        written: Vec<String>,
    },
    /// The sentence holds text a reader does not see once rendered (an HTML comment,
    /// raw HTML, a link reference definition).
    HiddenText,
    /// The sentence holds control characters (terminal escape sequences).
    ControlCharacters,
    /// Content verification: the cited tags name no fact to verify against.
    NothingToVerify {
        /// The sentence's tags.
        tags: Vec<String>,
    },
    /// Content verification: the sentence does not follow from the cited facts.
    NotEntailed {
        /// The cited facts in words (`not: …` for a fact the proof relied on being
        /// absent).
        facts: Vec<String>,
        /// Why not, in words a person can act on.
        detail: String,
    },
}

impl fmt::Display for StripReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StripReason::NoCitation => f.write_str("says something and cites no tag"),
            StripReason::UnknownTags { tags } => {
                write!(f, "cites tags not in the allowed set: {}", tags.join(", "))
            }
            StripReason::AmbiguousTags { tags } => write!(
                f,
                "cites tags that name different facts in this request: {}",
                tags.join(", ")
            ),
            StripReason::ForgedTags { written } => write!(
                f,
                "cites look-alikes of tags written with characters of another script: {}",
                written.join(", ")
            ),
            StripReason::HiddenText => {
                f.write_str("holds text a reader does not see (HTML comment or raw HTML)")
            }
            StripReason::ControlCharacters => {
                f.write_str("holds control characters (terminal escape sequences)")
            }
            StripReason::NothingToVerify { tags } => {
                write!(
                    f,
                    "cites tags that name no fact to verify against: {}",
                    tags.join(", ")
                )
            }
            StripReason::NotEntailed { detail, .. } => {
                write!(f, "does not follow from what it cites: {detail}")
            }
        }
    }
}

/// The firewall's verdict on one sentence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SentenceVerdict {
    /// The sentence as it appeared (trimmed, invisible characters removed), citations
    /// included.
    pub text: String,
    /// Byte range of the sentence in the checked text (the answer without invisible
    /// characters; the answer itself when it has none).
    pub start: usize,
    /// One past the sentence's last byte.
    pub end: usize,
    /// Its classification.
    pub kind: SentenceKind,
    /// The tags it cites, canonical form, in order of first appearance.
    pub tags: Vec<String>,
    /// Why it was stripped (only for [`SentenceKind::Stripped`]).
    pub reason: Option<StripReason>,
}

impl SentenceVerdict {
    /// Whether the sentence stays in the sanitized answer.
    pub fn kept(&self) -> bool {
        self.kind != SentenceKind::Stripped
    }
}

/// The result of [`HallucinationFirewall::check`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FirewallResult {
    /// The sanitized answer, or the abstain message.
    pub answer: String,
    /// Supported, stripped or abstained.
    pub outcome: Outcome,
    /// Whether the firewall abstained (`answer` is the abstain message).
    pub abstained: bool,
    /// Supported ÷ factual sentences (1.0 when there are no factual sentences).
    pub coverage: f64,
    /// The factual sentences that were kept.
    pub supported: Vec<String>,
    /// The sentences that were removed.
    pub stripped: Vec<String>,
    /// Every sentence's verdict, in order (the reasons behind `stripped`).
    pub sentences: Vec<SentenceVerdict>,
}

impl FirewallResult {
    /// The summary that surfaces in a pipeline result: exactly
    /// `{outcome, abstained, coverage, supported_count, stripped_count, stripped}`, with
    /// `stripped` cut to the first [`AS_DICT_STRIPPED_LIMIT`] sentences.
    pub fn as_dict(&self) -> serde_json::Value {
        let stripped: Vec<&String> = self.stripped.iter().take(AS_DICT_STRIPPED_LIMIT).collect();
        serde_json::json!({
            "outcome": self.outcome.as_str(),
            "abstained": self.abstained,
            "coverage": self.coverage,
            "supported_count": self.supported.len(),
            "stripped_count": self.stripped.len(),
            "stripped": stripped,
        })
    }
}

struct ContentVerification<'a> {
    resolver: &'a (dyn TagResolver + Sync),
    support: &'a (dyn ClaimSupport + Sync),
}

/// Gates an answer against the citation tags that trace to proofs. Cheap to build and
/// stateless between calls, so one firewall can serve many answers from many threads
/// (the resolver and predicate it verifies content with must be `Sync`).
pub struct HallucinationFirewall<'a> {
    abstain_message: String,
    glue: Vec<String>,
    /// The first word of each glue phrase (a quick test for sentences that are not).
    glue_heads: Vec<String>,
    content: Option<ContentVerification<'a>>,
}

fn heads(glue: &[String]) -> Vec<String> {
    let mut h: Vec<String> = glue
        .iter()
        .filter_map(|g| g.split(' ').next().map(str::to_string))
        .collect();
    h.sort();
    h.dedup();
    h
}

impl Default for HallucinationFirewall<'_> {
    fn default() -> Self {
        let glue: Vec<String> = DEFAULT_GLUE.iter().map(|g| g.to_string()).collect();
        HallucinationFirewall {
            abstain_message: DEFAULT_ABSTAIN_MESSAGE.to_string(),
            glue_heads: heads(&glue),
            glue,
            content: None,
        }
    }
}

impl<'a> HallucinationFirewall<'a> {
    /// A firewall with the default abstain message and glue list, tag checks only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace the message returned when the firewall abstains.
    pub fn with_abstain_message(mut self, message: impl Into<String>) -> Self {
        self.abstain_message = message.into();
        self
    }

    /// Replace the glue list: the connectives a sentence may consist of and still
    /// claim nothing. Phrases are compared case-insensitively, without punctuation.
    pub fn with_glue<S: AsRef<str>>(mut self, phrases: impl IntoIterator<Item = S>) -> Self {
        self.glue = phrases
            .into_iter()
            .map(|p| glue_key(p.as_ref()))
            .filter(|p| !p.is_empty())
            .collect();
        self.glue_heads = heads(&self.glue);
        self
    }

    /// The glue list in use.
    pub fn glue(&self) -> &[String] {
        &self.glue
    }

    /// Also require every cited sentence to follow, by `support`, from the facts its
    /// tags name (looked up through `resolver`).
    pub fn with_content_verification(
        mut self,
        resolver: &'a (dyn TagResolver + Sync),
        support: &'a (dyn ClaimSupport + Sync),
    ) -> Self {
        self.content = Some(ContentVerification { resolver, support });
        self
    }

    /// Content verification with the faithfulness gate ([`GateSupport`]).
    pub fn with_gate_verification(self, resolver: &'a (dyn TagResolver + Sync)) -> Self {
        self.with_content_verification(resolver, &GateSupport)
    }

    /// The message returned when the firewall abstains.
    pub fn abstain_message(&self) -> &str {
        &self.abstain_message
    }

    /// Check `answer` against `allowed` tags (see the module documentation).
    pub fn check<T: TagSet + ?Sized>(
        &self,
        answer: &str,
        allowed: &T,
        options: &CheckOptions,
    ) -> FirewallResult {
        let text = normalize::strip_invisible(answer);
        let text: &str = &text;
        let structure = markdown::structure(text);
        let segments = attach_trailing_citations(text, segment(text));
        let cache = SourceCache::default();
        let sentences: Vec<SentenceVerdict> = segments
            .iter()
            .map(|seg| self.judge(text, &structure, seg, allowed, &cache))
            .collect();

        let mut supported = Vec::new();
        let mut stripped = Vec::new();
        for s in &sentences {
            match s.kind {
                SentenceKind::Supported => supported.push(s.text.clone()),
                SentenceKind::Stripped => stripped.push(s.text.clone()),
                _ => {}
            }
        }
        // Every stripped sentence was factual (or hidden, which is not less).
        let factual = supported.len() + stripped.len();
        let coverage = if factual == 0 {
            1.0
        } else {
            supported.len() as f64 / factual as f64
        };
        let abstain = (options.require_proof && !options.proved) || supported.is_empty();
        let (outcome, text) = if abstain {
            (Outcome::Abstained, self.abstain_message.clone())
        } else if stripped.is_empty() {
            (Outcome::Supported, join_kept(text, &sentences))
        } else {
            (Outcome::Stripped, join_kept(text, &sentences))
        };
        FirewallResult {
            answer: text,
            outcome,
            abstained: abstain,
            coverage,
            supported,
            stripped,
            sentences,
        }
    }

    fn judge<T: TagSet + ?Sized>(
        &self,
        text: &str,
        structure: &Structure,
        seg: &Segment,
        allowed: &T,
        cache: &SourceCache,
    ) -> SentenceVerdict {
        let (kind, tags, reason) = self.classify(text, structure, seg, allowed, cache);
        SentenceVerdict {
            text: seg.text.clone(),
            start: seg.start,
            end: seg.end,
            kind,
            tags,
            reason,
        }
    }

    fn classify<T: TagSet + ?Sized>(
        &self,
        text: &str,
        structure: &Structure,
        seg: &Segment,
        allowed: &T,
        cache: &SourceCache,
    ) -> (SentenceKind, Vec<String>, Option<StripReason>) {
        let stripped = |tags: Vec<String>, r: StripReason| (SentenceKind::Stripped, tags, Some(r));
        if structure.is_hidden(&(seg.start..seg.end)) {
            return stripped(Vec::new(), StripReason::HiddenText);
        }
        if seg.text.chars().any(normalize::is_control) {
            return stripped(Vec::new(), StripReason::ControlCharacters);
        }
        // The sentence's words, without the block syntax of the line it starts.
        let line = structure.line_at(seg.start);
        if line.is_some_and(|l| l.kind == LineKind::Layout) {
            return (SentenceKind::Layout, Vec::new(), None);
        }
        let body_start = match line {
            Some(l) if l.kind == LineKind::Text && seg.start <= l.content_start => {
                l.content_start.min(seg.end)
            }
            _ => seg.start,
        };
        // Struck-through text reads as deleted: it neither claims nor marks anything.
        let body = markdown::without_struck(&text[body_start..seg.end]);
        let scan = scan_brackets(&body);
        if !scan.forged.is_empty() {
            return stripped(
                scan.tags,
                StripReason::ForgedTags {
                    written: scan.forged,
                },
            );
        }
        if scan.tags.iter().any(|t| !allowed.contains_tag(t)) {
            let unknown: Vec<String> = scan
                .tags
                .iter()
                .filter(|t| !allowed.contains_tag(t))
                .cloned()
                .collect();
            return stripped(scan.tags, StripReason::UnknownTags { tags: unknown });
        }
        let is_ambiguous = |t: &String| {
            allowed.is_ambiguous_tag(t)
                || self
                    .content
                    .as_ref()
                    .is_some_and(|c| c.resolver.is_ambiguous(t))
        };
        if scan.tags.iter().any(is_ambiguous) {
            let ambiguous: Vec<String> = scan
                .tags
                .iter()
                .filter(|t| is_ambiguous(t))
                .cloned()
                .collect();
            return stripped(scan.tags, StripReason::AmbiguousTags { tags: ambiguous });
        }
        if scan.unverified {
            return (SentenceKind::Unverified, scan.tags, None);
        }
        let words = markdown::inline_words(&scan.claim);
        if !words.chars().any(char::is_alphanumeric) {
            return (SentenceKind::Layout, scan.tags, None);
        }
        if scan.tags.is_empty() {
            return if self.is_glue(&words) {
                (SentenceKind::Glue, scan.tags, None)
            } else {
                stripped(scan.tags, StripReason::NoCitation)
            };
        }
        if let Some(content) = &self.content {
            let claim = self.without_opening_connective(&words);
            if let Err(reason) = verify_content(claim, &scan.tags, content, cache) {
                return stripped(scan.tags, reason);
            }
        }
        (SentenceKind::Supported, scan.tags, None)
    }

    /// Whether the words are glue: one connective of the list, or several in a row
    /// ("In short: yes").
    fn is_glue(&self, words: &str) -> bool {
        // Glue is a few connectives; a long sentence is never glue, nor one whose first
        // word starts no glue phrase.
        if words.split_whitespace().nth(MAX_GLUE_WORDS).is_some() {
            return false;
        }
        let first = words
            .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
            .find(|w| !w.is_empty());
        let Some(first) = first else {
            return false;
        };
        if first.is_ascii()
            && !self
                .glue_heads
                .iter()
                .any(|h| h.len() == first.len() && h.eq_ignore_ascii_case(first))
        {
            return false;
        }
        let key = glue_key(words);
        if key.is_empty() {
            return false;
        }
        // reach[i]: the first i bytes of the key are a run of glue phrases.
        let mut reach = vec![false; key.len() + 1];
        reach[0] = true;
        for i in 0..key.len() {
            if !reach[i] || (i > 0 && key.as_bytes()[i - 1] != b' ') {
                continue;
            }
            for g in &self.glue {
                let end = i + g.len();
                if key[i..].starts_with(g.as_str())
                    && (end == key.len() || key.as_bytes()[end] == b' ')
                {
                    reach[if end == key.len() { end } else { end + 1 }] = true;
                }
            }
        }
        reach[key.len()]
    }

    /// The claim without a glue connective that opens it ("In short, …", "Yes: …").
    fn without_opening_connective<'t>(&self, words: &'t str) -> &'t str {
        let trimmed = words.trim_start();
        for (i, c) in trimmed.char_indices() {
            if matches!(c, ',' | ':' | '—' | '-' | ';') {
                let head = glue_key(&trimmed[..i]);
                if !head.is_empty() && self.glue.contains(&head) {
                    return &trimmed[i + c.len_utf8()..];
                }
                break;
            }
            if i > 64 {
                break;
            }
        }
        words
    }
}

/// A phrase as the glue list compares it: lower case, letters, digits and apostrophes,
/// single spaces.
fn glue_key(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for w in s
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(
            w.chars()
                .flat_map(char::to_lowercase)
                .map(|c| if c == '’' { '\'' } else { c }),
        );
    }
    out
}

/// Check a cited sentence against the facts its tags name, each on its own.
fn verify_content(
    claim: &str,
    tags: &[String],
    content: &ContentVerification<'_>,
    cache: &SourceCache,
) -> Result<(), StripReason> {
    let mut facts: Vec<CitedFact> = Vec::new();
    for tag in tags {
        for fact in content.resolver.resolve(tag) {
            if !facts.iter().any(|f| {
                f.predicate == fact.predicate
                    && f.args == fact.args
                    && f.negated == fact.negated
                    && f.text == fact.text
            }) {
                facts.push(fact);
            }
        }
    }
    if facts.is_empty() {
        return Err(StripReason::NothingToVerify {
            tags: tags.to_vec(),
        });
    }
    let verdict = match content.support.as_gate() {
        Some(_) => gate_supports(claim, &facts, cache),
        None => content.support.supports(claim, &facts),
    };
    verdict.map_err(|detail| StripReason::NotEntailed {
        facts: facts.iter().map(CitedFact::display_text).collect(),
        detail,
    })
}

/// The citation tags of one text, canonical form, in order of first appearance.
/// `[UNVERIFIED…]` markers are not tags.
pub fn cited_tags(text: &str) -> Vec<String> {
    scan_brackets(&normalize::strip_invisible(text)).tags
}

/// Whether the text carries an `[UNVERIFIED…]` marker.
pub fn has_unverified_marker(text: &str) -> bool {
    scan_brackets(&normalize::strip_invisible(text)).unverified
}

/// What a sentence says once its citations are taken out: citation brackets,
/// markers and footnote references removed, every other bracket's content kept (so it
/// is checked), whitespace runs collapsed.
pub fn strip_brackets(text: &str) -> String {
    collapse(&scan_brackets(&normalize::strip_invisible(text)).claim)
}

fn collapse(s: &str) -> String {
    let mut collapsed = String::with_capacity(s.len());
    for w in s.split_whitespace() {
        if !collapsed.is_empty() && !w.starts_with(['.', ',', ';', ':', '!', '?']) {
            collapsed.push(' ');
        }
        collapsed.push_str(w);
    }
    collapsed
}

/// One pass over a sentence's brackets.
#[derive(Debug, Default)]
struct BracketScan {
    /// Cited tags, canonical, first appearance order.
    tags: Vec<String>,
    /// Tag look-alikes in another script, as written.
    forged: Vec<String>,
    /// An `[UNVERIFIED…]` marker is present.
    unverified: bool,
    /// The sentence's text with citations, markers and footnote references removed.
    claim: String,
}

const TAG_KINDS: [&str; 4] = ["HEDGE", "RULE", "STEP", "PATTERN"];

fn is_open(c: char) -> bool {
    matches!(c, '[' | '［')
}

fn is_close(c: char) -> bool {
    matches!(c, ']' | '］')
}

/// Scan a sentence: innermost `[…]` pairs are citations, markers, footnote references
/// or text; an unmatched bracket is a character.
fn scan_brackets(text: &str) -> BracketScan {
    let mut scan = BracketScan {
        claim: String::with_capacity(text.len()),
        ..BracketScan::default()
    };
    let mut rest = text;
    while let Some((open, oc)) = rest.char_indices().find(|&(_, c)| is_open(c)) {
        let after = &rest[open + oc.len_utf8()..];
        // The nearest closer with no opener in between.
        let mut close: Option<(usize, char)> = None;
        for (i, c) in after.char_indices() {
            if is_open(c) {
                break;
            }
            if is_close(c) {
                close = Some((i, c));
                break;
            }
        }
        let Some((close, cc)) = close else {
            // An opener with no closer before the next opener: a plain character.
            scan.claim.push_str(&rest[..open + oc.len_utf8()]);
            rest = after;
            continue;
        };
        scan.claim.push_str(&rest[..open]);
        let inner = &after[..close];
        bracket(&mut scan, inner);
        rest = &after[close + cc.len_utf8()..];
    }
    scan.claim.push_str(rest);
    scan
}

fn bracket(scan: &mut BracketScan, inner: &str) {
    let folded: std::borrow::Cow<'_, str> = if inner.is_ascii() {
        std::borrow::Cow::Borrowed(inner)
    } else {
        std::borrow::Cow::Owned(inner.chars().map(fold_compat).collect())
    };
    let folded: &str = &folded;
    let trimmed = folded.trim_start();
    if trimmed.len() >= 10 && trimmed.as_bytes()[..10].eq_ignore_ascii_case(b"UNVERIFIED") {
        scan.unverified = true;
        scan.claim.push(' ');
        return;
    }
    if trimmed.starts_with('^') && !trimmed.contains(char::is_whitespace) {
        // A footnote reference: says nothing here.
        scan.claim.push(' ');
        return;
    }
    let mut tags: Vec<String> = Vec::new();
    let mut other = false;
    let mut words_out = String::with_capacity(folded.len());
    let mut last = 0;
    for (start, word) in items(folded) {
        words_out.push_str(&folded[last..start]);
        last = start + word.len();
        if let Some(tag) = canonical_tag(word) {
            tags.push(tag);
            words_out.push(' ');
            continue;
        }
        if CITATION_FILLERS
            .iter()
            .any(|f| f.eq_ignore_ascii_case(word))
        {
            words_out.push_str(word);
            continue;
        }
        if let Some(forged) = confusable_tag(word) {
            let _ = forged;
            scan.forged.push(word.to_string());
            words_out.push(' ');
            continue;
        }
        other = true;
        words_out.push_str(word);
    }
    words_out.push_str(&folded[last..]);
    for t in tags.iter() {
        if !scan.tags.contains(t) {
            scan.tags.push(t.clone());
        }
    }
    if other {
        // Not (only) a citation: its words are part of the sentence and get checked.
        scan.claim.push(' ');
        scan.claim.push_str(&words_out);
        scan.claim.push(' ');
    } else if tags.is_empty() && scan.forged.is_empty() {
        // An empty bracket, or fillers only: text.
        scan.claim.push(' ');
        scan.claim.push_str(folded);
        scan.claim.push(' ');
    } else {
        scan.claim.push(' ');
    }
}

/// The words of a bracket: runs of letters, digits and `-`, with their byte offsets.
fn items(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in s.char_indices() {
        let part = c.is_alphanumeric() || c == '-';
        match (part, start) {
            (true, None) => start = Some(i),
            (false, Some(st)) => {
                out.push((st, &s[st..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(st) = start {
        out.push((st, &s[st..]));
    }
    out
}

/// `KIND-N` with KIND one of the tag kinds (any case) and N decimal digits, as the
/// canonical `KIND-N` (upper-case kind, no leading zeros); `None` for anything else.
/// Fullwidth forms and Unicode dashes are read as their ASCII equivalents.
pub fn canonical_tag(word: &str) -> Option<String> {
    let folded: String;
    let word = if word.is_ascii() {
        word
    } else {
        folded = word.chars().map(fold_compat).collect();
        &folded
    };
    let (kind, num) = word.split_once('-')?;
    let kind = TAG_KINDS.iter().find(|k| k.eq_ignore_ascii_case(kind))?;
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = num.trim_start_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    Some(format!("{kind}-{digits}"))
}

/// The tag a word imitates with letters or digits of another script (`НЕDGE-42`,
/// `HEDGE-٤٢`), if any.
fn confusable_tag(word: &str) -> Option<String> {
    if word.is_ascii() {
        return None;
    }
    let folded: String = word
        .chars()
        .map(|c| match foreign_digit(c) {
            Some(d) => char::from_digit(d, 10).unwrap_or(c),
            None => fold_confusable(fold_compat(c)),
        })
        .collect();
    canonical_tag(&folded)
}

/// Merge segments that hold only citation brackets (written after the full stop) into
/// the segment before them on the same line.
fn attach_trailing_citations(text: &str, segments: Vec<Segment>) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::with_capacity(segments.len());
    for seg in segments {
        let bracket_only = seg.text.starts_with(is_open) && {
            let scan = scan_brackets(&seg.text);
            !scan.tags.is_empty()
                && !scan.unverified
                && scan
                    .claim
                    .chars()
                    .all(|c| c.is_ascii_punctuation() || c.is_whitespace())
        };
        let merged = out.last_mut().filter(|_| bracket_only).and_then(|prev| {
            let gap = text.get(prev.end..seg.start)?;
            let whole = text.get(prev.start..seg.end)?;
            (!gap.contains('\n')).then(|| {
                prev.end = seg.end;
                prev.text = whole.to_string();
            })
        });
        if merged.is_none() {
            out.push(seg);
        }
    }
    out
}

/// The kept sentences joined as the module documentation describes.
fn join_kept(text: &str, sentences: &[SentenceVerdict]) -> String {
    let mut out = String::new();
    let mut prev_kept: Option<usize> = None;
    for (i, s) in sentences.iter().enumerate() {
        if !s.kept() {
            continue;
        }
        if let Some(p) = prev_kept {
            let gap = |a: usize, b: usize| {
                text.get(sentences[a].end..sentences[b].start)
                    .unwrap_or(" ")
            };
            if p + 1 == i {
                out.extend(gap(p, i).chars().filter(|c| c.is_whitespace()));
            } else {
                // The widest break between any two of the sentences in between.
                let breaks = (p..i).map(|k| gap(k, k + 1).matches('\n').count()).max();
                let spaced = (p..i).any(|k| gap(k, k + 1).chars().any(char::is_whitespace));
                out.push_str(match breaks.unwrap_or(0) {
                    0 if spaced => " ",
                    0 => "",
                    1 => "\n",
                    _ => "\n\n",
                });
            }
        }
        out.push_str(&s.text);
        prev_kept = Some(i);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(tags: &[&str]) -> HashSet<String> {
        tags.iter().map(|t| t.to_string()).collect()
    }

    fn opts() -> CheckOptions {
        CheckOptions::default()
    }

    #[test]
    fn canonical_tags() {
        assert_eq!(canonical_tag("HEDGE-42").as_deref(), Some("HEDGE-42"));
        assert_eq!(canonical_tag("hedge-042").as_deref(), Some("HEDGE-42"));
        assert_eq!(canonical_tag("PATTERN-0").as_deref(), Some("PATTERN-0"));
        assert_eq!(canonical_tag("STEP-000").as_deref(), Some("STEP-0"));
        assert_eq!(canonical_tag("ＳＴＥＰ－１").as_deref(), Some("STEP-1"));
        assert_eq!(canonical_tag("STEP–1").as_deref(), Some("STEP-1"));
        assert_eq!(canonical_tag("STEP-"), None);
        assert_eq!(canonical_tag("STEP-1a"), None);
        assert_eq!(canonical_tag("FACT-1"), None);
        assert_eq!(canonical_tag("HEDGE42"), None);
        assert_eq!(confusable_tag("НЕDGE-42").as_deref(), Some("HEDGE-42"));
        assert_eq!(confusable_tag("HEDGE-٤٢").as_deref(), Some("HEDGE-42"));
    }

    #[test]
    fn scanner_reads_shared_and_adjacent_brackets() {
        assert_eq!(
            cited_tags("x [HEDGE-1, STEP-2][RULE-3] y [PATTERN-4; HEDGE-1]"),
            vec!["HEDGE-1", "STEP-2", "RULE-3", "PATTERN-4"]
        );
        assert!(cited_tags("HEDGE-1 outside brackets").is_empty());
        assert!(cited_tags("unclosed [HEDGE-1").is_empty());
        assert_eq!(cited_tags("unclosed [ then [HEDGE-1]"), vec!["HEDGE-1"]);
        assert_eq!(cited_tags("[HE\u{200B}DGE-1]"), vec!["HEDGE-1"]);
        assert!(has_unverified_marker("claim [UNVERIFIED: no source]"));
        assert!(has_unverified_marker("claim [ unverified ]"));
        assert!(!has_unverified_marker("claim [UNVERIFY]"));
    }

    #[test]
    fn bracket_words_stay_in_the_claim() {
        assert_eq!(
            strip_brackets("Drone 42 is hostile [HEDGE-1: drone 7 carries explosives]."),
            "Drone 42 is hostile: drone 7 carries explosives."
        );
        assert_eq!(strip_brackets("a [note: b] c"), "a note: b c");
        assert_eq!(strip_brackets("a [ c"), "a [ c");
        assert_eq!(strip_brackets("a [see HEDGE-1] b[^2]"), "a b");
    }

    #[test]
    fn short_sentences_are_factual_unless_glue() {
        let fw = HallucinationFirewall::new();
        let r = fw.check("In short: yes.", &allowed(&[]), &opts());
        assert_eq!(r.sentences[0].kind, SentenceKind::Glue);
        // Glue alone supports nothing.
        assert_eq!(r.outcome, Outcome::Abstained);
        let r = fw.check("No threat exists.", &allowed(&[]), &opts());
        assert_eq!(r.sentences[0].kind, SentenceKind::Stripped);
        let fw = HallucinationFirewall::new().with_glue(["No threat exists"]);
        let r = fw.check("No threat exists.", &allowed(&[]), &opts());
        assert_eq!(r.sentences[0].kind, SentenceKind::Glue);
    }

    #[test]
    fn trailing_citation_attaches_to_previous_sentence() {
        let fw = HallucinationFirewall::new();
        let r = fw.check(
            "Drone 42 is a member of group 7. [HEDGE-1]",
            &allowed(&["HEDGE-1"]),
            &opts(),
        );
        assert_eq!(r.outcome, Outcome::Supported);
        assert_eq!(r.sentences.len(), 1);
        assert_eq!(r.answer, "Drone 42 is a member of group 7. [HEDGE-1]");
    }

    #[test]
    fn opening_marker_belongs_to_the_next_sentence() {
        let fw = HallucinationFirewall::new();
        let r = fw.check(
            "Drone 42 is a member of group 7 [HEDGE-1]. [UNVERIFIED] The fleet may be larger.",
            &allowed(&["HEDGE-1"]),
            &opts(),
        );
        assert_eq!(r.outcome, Outcome::Supported, "{:?}", r.sentences);
        assert_eq!(r.sentences[1].kind, SentenceKind::Unverified);
    }

    #[test]
    fn join_collapses_gaps_of_stripped_sentences() {
        let fw = HallucinationFirewall::new();
        let text = "Drone 42 is hostile today [HEDGE-1].\n\nDrone 9 is friendly as well. \
                    Drone 9 escorts drone 42 [HEDGE-2].";
        let r = fw.check(text, &allowed(&["HEDGE-1", "HEDGE-2"]), &opts());
        assert_eq!(r.outcome, Outcome::Stripped);
        assert_eq!(
            r.answer,
            "Drone 42 is hostile today [HEDGE-1].\n\nDrone 9 escorts drone 42 [HEDGE-2]."
        );
    }

    #[test]
    fn hidden_and_control_text_is_stripped() {
        let fw = HallucinationFirewall::new();
        let a = allowed(&["HEDGE-1"]);
        let r = fw.check("Drone 7 is hostile <!-- [UNVERIFIED] -->.", &a, &opts());
        assert_eq!(r.sentences[0].reason, Some(StripReason::HiddenText));
        let r = fw.check("Drone 7 is hostile \u{1b}[2K [HEDGE-1].", &a, &opts());
        assert_eq!(r.sentences[0].reason, Some(StripReason::ControlCharacters));
    }

    #[test]
    fn markdown_is_checked() {
        let fw = HallucinationFirewall::new();
        let a = allowed(&["HEDGE-1"]);
        let r = fw.check(
            "- Drone 7: hostile\n- Drone 9 is a member [HEDGE-1]",
            &a,
            &opts(),
        );
        assert_eq!(r.sentences[0].reason, Some(StripReason::NoCitation));
        assert_eq!(r.sentences[1].kind, SentenceKind::Supported);
        let r = fw.check(
            "| drone | status |\n|---|---|\n| 7 | hostile |\n| 9 | member [HEDGE-1] |",
            &a,
            &opts(),
        );
        let kinds: Vec<SentenceKind> = r.sentences.iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            [
                SentenceKind::Stripped,
                SentenceKind::Layout,
                SentenceKind::Stripped,
                SentenceKind::Supported
            ]
        );
    }

    #[test]
    fn forged_tags_are_stripped() {
        let fw = HallucinationFirewall::new();
        let a = allowed(&["HEDGE-42"]);
        let r = fw.check("Drone 7 is hostile [НЕDGE-42].", &a, &opts());
        assert!(matches!(
            r.sentences[0].reason,
            Some(StripReason::ForgedTags { .. })
        ));
        let r = fw.check("Drone 7 is hostile [HEDGE\u{200B}-42].", &a, &opts());
        assert_eq!(r.outcome, Outcome::Supported);
    }

    #[test]
    fn strip_brackets_tidies_spacing() {
        assert_eq!(
            strip_brackets("Drone 42 is hostile [HEDGE-1] ."),
            "Drone 42 is hostile."
        );
        assert_eq!(strip_brackets("[STEP-1] a  b"), "a b");
    }
}
