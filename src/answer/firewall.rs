//! The hallucination firewall: an answer may only say what cited, allowed tags support.
//!
//! The firewall runs on a model's raw text after generation. It splits the text into
//! sentences with [`segment`] and decides each one:
//!
//! 1. **Glue.** A sentence that cites no tag and is shorter than [`GLUE_MAX_CHARS`]
//!    characters (Unicode scalar values of the trimmed sentence, with every `[…]`
//!    bracket removed, so brackets neither make a sentence long nor short) is
//!    connective text ("In short:", "Yes.") and is kept. A sentence that cites a tag is
//!    never glue: a short sentence with a fabricated citation is still stripped.
//! 2. **Unverified.** A sentence carrying an honest `[UNVERIFIED…]` marker (any bracket
//!    whose content starts with `UNVERIFIED`, case-insensitive) is kept and not counted
//!    as factual (nor checked for content), unless it also cites a tag outside the
//!    allowed set.
//! 3. **Factual.** Every other sentence is factual. It is kept, and counted as
//!    supported, only if it cites at least one tag and *every* tag it cites is in the
//!    allowed set; otherwise it is stripped. Tags are `HEDGE-N`, `RULE-N`, `STEP-N` and
//!    `PATTERN-N` inside square brackets; one bracket may hold several, separated by
//!    any character other than letters, digits and `-` (`[HEDGE-1, STEP-2]`), and
//!    brackets may follow each other (`[HEDGE-1][STEP-2]`). Tag kinds are matched
//!    case-insensitively and numbers by value, so `[hedge-042]` cites `HEDGE-42`; a
//!    tag-shaped word outside brackets is not a citation.
//!
//! A sentence made only of brackets (`Drone 7 is hostile. [HEDGE-3]`) belongs to the
//! sentence before it on the same line: where the segmenter ends a sentence at its full
//! stop, the citation after the stop is still that sentence's citation.
//!
//! With content verification on ([`HallucinationFirewall::with_gate_verification`], or
//! [`HallucinationFirewall::with_content_verification`] for another predicate), a cited
//! sentence must also follow, by the faithfulness gate ([`GateSupport`]), from the
//! verbalisation of at least one fact its tags name, or from all of them read together
//! (joined by ". ", so one sentence may combine two cited facts). Tags are removed from
//! the sentence before it is checked. A sentence whose tags name no fact (only `RULE`
//! tags, say) has nothing to be verified against and fails.
//!
//! The sanitized answer is the kept sentences in their original order. Two sentences
//! that were adjacent in the original are joined by the whitespace that separated
//! them; where stripped sentences were removed in between, the gap collapses to a
//! paragraph break (`\n\n`) if a blank line separated any two of the sentences in
//! between, else a line break if a line break did, else a single space (or nothing,
//! for scripts written without spaces).

use std::collections::{BTreeSet, HashSet};
use std::fmt;

use serde::Serialize;

use super::gate::{Verdict, is_supported_v2};
use super::segment::{Segment, segment};
use super::{CitedFact, TagResolver};

/// Sentences shorter than this many characters (and citing no tag) are glue.
pub const GLUE_MAX_CHARS: usize = 20;

/// What the firewall says when it has nothing verifiable left to say.
pub const DEFAULT_ABSTAIN_MESSAGE: &str =
    "Insufficient verifiable evidence to answer this question.";

/// How many stripped sentences `as_dict` lists (the rest are only counted).
pub const AS_DICT_STRIPPED_LIMIT: usize = 10;

/// A set of allowed citation tags. Implemented for the usual string sets so that
/// callers can pass whatever they collected tags into.
pub trait TagSet {
    /// Whether `tag` (canonical form, e.g. `HEDGE-42`) is allowed.
    fn contains_tag(&self, tag: &str) -> bool;
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

/// Does a claim follow from a passage? The faithfulness gate ([`GateSupport`]) is the
/// predicate the firewall is meant to use; any predicate of this shape will do (a
/// stricter one, or a stub in tests).
pub trait ClaimSupport {
    /// `Ok(())` when `claim` is supported by `passage`, else why not.
    fn supports(&self, claim: &str, passage: &str) -> Result<(), String>;
}

/// A plain yes/no predicate; a "no" carries a generic reason.
impl<F: Fn(&str, &str) -> bool> ClaimSupport for F {
    fn supports(&self, claim: &str, passage: &str) -> Result<(), String> {
        if self(claim, passage) {
            Ok(())
        } else {
            Err("not supported by the passage".to_string())
        }
    }
}

/// The faithfulness gate's predicate ([`is_supported_v2`]: ordered, gap-bounded
/// containment with the polarity guard) as a [`ClaimSupport`].
#[derive(Debug, Clone, Copy, Default)]
pub struct GateSupport;

impl ClaimSupport for GateSupport {
    fn supports(&self, claim: &str, passage: &str) -> Result<(), String> {
        match is_supported_v2(claim, passage) {
            Verdict::Supported(_) => Ok(()),
            Verdict::Unsupported(reason) => Err(reason.to_string()),
        }
    }
}

/// The overall result of checking an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Every factual sentence cited allowed tags.
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
pub enum SentenceKind {
    /// Short connective text, kept.
    Glue,
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
pub enum StripReason {
    /// A factual sentence that cites no tag.
    NoCitation,
    /// The sentence cites tags outside the allowed set.
    UnknownTags {
        /// The offending tags, canonical form, in order of appearance.
        tags: Vec<String>,
    },
    /// Content verification: the cited tags name no fact to verify against.
    NothingToVerify {
        /// The sentence's tags.
        tags: Vec<String>,
    },
    /// Content verification: the sentence does not follow from the cited facts.
    NotEntailed {
        /// The verbalisations it was checked against.
        facts: Vec<String>,
        /// Why not, against the last passage tried (all the facts read together when
        /// there are several).
        detail: String,
    },
}

impl fmt::Display for StripReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StripReason::NoCitation => f.write_str("factual sentence cites no tag"),
            StripReason::UnknownTags { tags } => {
                write!(f, "cites tags not in the allowed set: {}", tags.join(", "))
            }
            StripReason::NothingToVerify { tags } => {
                write!(
                    f,
                    "cited tags name no fact to verify against: {}",
                    tags.join(", ")
                )
            }
            StripReason::NotEntailed { facts, detail } => write!(
                f,
                "does not follow from the cited facts ({detail}): {}",
                facts.join(" | ")
            ),
        }
    }
}

/// The firewall's verdict on one sentence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SentenceVerdict {
    /// The sentence as it appeared (trimmed), citations included.
    pub text: String,
    /// Byte range of the sentence in the checked answer.
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
    content: Option<ContentVerification<'a>>,
}

impl Default for HallucinationFirewall<'_> {
    fn default() -> Self {
        HallucinationFirewall {
            abstain_message: DEFAULT_ABSTAIN_MESSAGE.to_string(),
            content: None,
        }
    }
}

impl<'a> HallucinationFirewall<'a> {
    /// A firewall with the default abstain message and tag checks only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace the message returned when the firewall abstains.
    pub fn with_abstain_message(mut self, message: impl Into<String>) -> Self {
        self.abstain_message = message.into();
        self
    }

    /// Also require every cited sentence to follow, by `support`, from the
    /// verbalisations of the facts its tags name (looked up through `resolver`).
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

    /// Check `answer` against `allowed` tags. `proved` says whether a symbolic
    /// conclusion was derived; with `require_proof` an unproved answer is abstained
    /// outright (the per-sentence verdicts are still reported). An answer with no
    /// factual sentence (empty, or only glue and UNVERIFIED sentences) is supported,
    /// with coverage 1.0: it claims nothing that needs a citation.
    pub fn check<T: TagSet + ?Sized>(
        &self,
        answer: &str,
        allowed: &T,
        proved: bool,
        require_proof: bool,
    ) -> FirewallResult {
        let segments = attach_trailing_citations(answer, segment(answer));
        let mut scan = TagScan::default();
        let mut sentences = Vec::with_capacity(segments.len());
        for seg in &segments {
            sentences.push(self.judge(seg, allowed, &mut scan));
        }

        let mut supported = Vec::new();
        let mut stripped = Vec::new();
        for s in &sentences {
            match s.kind {
                SentenceKind::Supported => supported.push(s.text.clone()),
                SentenceKind::Stripped => stripped.push(s.text.clone()),
                SentenceKind::Glue | SentenceKind::Unverified => {}
            }
        }
        // Every stripped sentence was factual: it cited a tag or was too long for glue.
        let factual = supported.len() + stripped.len();
        let coverage = if factual == 0 {
            1.0
        } else {
            supported.len() as f64 / factual as f64
        };
        let abstain = (require_proof && !proved) || (factual > 0 && supported.is_empty());
        let (outcome, text) = if abstain {
            (Outcome::Abstained, self.abstain_message.clone())
        } else if stripped.is_empty() {
            (Outcome::Supported, join_kept(answer, &sentences))
        } else {
            (Outcome::Stripped, join_kept(answer, &sentences))
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
        seg: &Segment,
        allowed: &T,
        scan: &mut TagScan,
    ) -> SentenceVerdict {
        scan.run(&seg.text);
        let tags = std::mem::take(&mut scan.tags);
        let (kind, reason) = self.classify(&seg.text, &tags, scan, allowed);
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
        tags: &[String],
        scan: &TagScan,
        allowed: &T,
    ) -> (SentenceKind, Option<StripReason>) {
        let unknown: Vec<String> = tags
            .iter()
            .filter(|t| !allowed.contains_tag(t))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return (
                SentenceKind::Stripped,
                Some(StripReason::UnknownTags { tags: unknown }),
            );
        }
        if scan.unverified {
            return (SentenceKind::Unverified, None);
        }
        if tags.is_empty() {
            return if scan.unbracketed_chars < GLUE_MAX_CHARS {
                (SentenceKind::Glue, None)
            } else {
                (SentenceKind::Stripped, Some(StripReason::NoCitation))
            };
        }
        if let Some(content) = &self.content
            && let Err(reason) = verify_content(text, tags, content)
        {
            return (SentenceKind::Stripped, Some(reason));
        }
        (SentenceKind::Supported, None)
    }
}

/// Check a cited sentence against the verbalisations of the facts its tags name.
fn verify_content(
    sentence: &str,
    tags: &[String],
    content: &ContentVerification<'_>,
) -> Result<(), StripReason> {
    let mut facts: Vec<CitedFact> = Vec::new();
    for tag in tags {
        for fact in content.resolver.resolve(tag) {
            if !facts.iter().any(|f| f.text == fact.text) {
                facts.push(fact);
            }
        }
    }
    if facts.is_empty() {
        return Err(StripReason::NothingToVerify {
            tags: tags.to_vec(),
        });
    }
    let claim = strip_brackets(sentence);
    let texts: Vec<String> = facts.into_iter().map(|f| f.text).collect();
    let mut detail = String::new();
    for text in &texts {
        match content.support.supports(&claim, text) {
            Ok(()) => return Ok(()),
            Err(why) => detail = why,
        }
    }
    if texts.len() > 1 {
        match content.support.supports(&claim, &texts.join(". ")) {
            Ok(()) => return Ok(()),
            Err(why) => detail = why,
        }
    }
    Err(StripReason::NotEntailed {
        facts: texts,
        detail,
    })
}

/// The citation tags of one text, canonical form, in order of first appearance.
/// `[UNVERIFIED…]` markers are not tags.
pub fn cited_tags(text: &str) -> Vec<String> {
    let mut scan = TagScan::default();
    scan.run(text);
    scan.tags
}

/// Whether the text carries an `[UNVERIFIED…]` marker.
pub fn has_unverified_marker(text: &str) -> bool {
    let mut scan = TagScan::default();
    scan.run(text);
    scan.unverified
}

/// The text with every `[…]` bracket removed and whitespace runs collapsed: what a
/// sentence says once its citations are taken out.
pub fn strip_brackets(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '[' => depth += 1,
            ']' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    let mut collapsed = String::with_capacity(out.len());
    for w in out.split_whitespace() {
        if !collapsed.is_empty() && !w.starts_with(['.', ',', ';', ':', '!', '?']) {
            collapsed.push(' ');
        }
        collapsed.push_str(w);
    }
    collapsed
}

/// One pass over a sentence: its tags, whether it has an UNVERIFIED marker, and how
/// many characters lie outside brackets. Reused across sentences to avoid allocation.
#[derive(Default)]
struct TagScan {
    tags: Vec<String>,
    unverified: bool,
    unbracketed_chars: usize,
}

const TAG_KINDS: [&str; 4] = ["HEDGE", "RULE", "STEP", "PATTERN"];

impl TagScan {
    fn run(&mut self, text: &str) {
        self.tags.clear();
        self.unverified = false;
        self.unbracketed_chars = 0;
        let bytes = text.as_bytes();
        let mut i = 0;
        let mut outside_start = 0;
        while i < bytes.len() {
            if bytes[i] != b'[' {
                i += 1;
                continue;
            }
            let close = bytes[i + 1..].iter().position(|&b| b == b']');
            let Some(rel) = close else { break };
            self.unbracketed_chars += text[outside_start..i].trim().chars().count();
            let inner = &text[i + 1..i + 1 + rel];
            self.bracket(inner);
            i = i + 1 + rel + 1;
            outside_start = i;
        }
        self.unbracketed_chars += text[outside_start..].trim().chars().count();
    }

    fn bracket(&mut self, inner: &str) {
        let trimmed = inner.trim_start();
        if trimmed.len() >= 10 && trimmed.as_bytes()[..10].eq_ignore_ascii_case(b"UNVERIFIED") {
            self.unverified = true;
            return;
        }
        for word in inner.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
            if let Some(tag) = canonical_tag(word)
                && !self.tags.contains(&tag)
            {
                self.tags.push(tag);
            }
        }
    }
}

/// `KIND-N` with KIND one of the tag kinds (any case) and N decimal digits, as the
/// canonical `KIND-N` (upper-case kind, no leading zeros); `None` for anything else.
pub fn canonical_tag(word: &str) -> Option<String> {
    let (kind, num) = word.split_once('-')?;
    let kind = TAG_KINDS.iter().find(|k| k.eq_ignore_ascii_case(kind))?;
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = num.trim_start_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    Some(format!("{kind}-{digits}"))
}

/// Merge segments that hold only brackets (a citation or marker written after the
/// full stop) into the segment before them.
fn attach_trailing_citations(text: &str, segments: Vec<Segment>) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::with_capacity(segments.len());
    for seg in segments {
        let bracket_only = seg.text.starts_with('[')
            && strip_brackets(&seg.text)
                .chars()
                .all(|c| c.is_ascii_punctuation() || c.is_whitespace());
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

    #[test]
    fn canonical_tags() {
        assert_eq!(canonical_tag("HEDGE-42").as_deref(), Some("HEDGE-42"));
        assert_eq!(canonical_tag("hedge-042").as_deref(), Some("HEDGE-42"));
        assert_eq!(canonical_tag("PATTERN-0").as_deref(), Some("PATTERN-0"));
        assert_eq!(canonical_tag("STEP-000").as_deref(), Some("STEP-0"));
        assert_eq!(canonical_tag("STEP-"), None);
        assert_eq!(canonical_tag("STEP-1a"), None);
        assert_eq!(canonical_tag("FACT-1"), None);
        assert_eq!(canonical_tag("HEDGE42"), None);
    }

    #[test]
    fn scanner_reads_shared_and_adjacent_brackets() {
        assert_eq!(
            cited_tags("x [HEDGE-1, STEP-2][RULE-3] y [PATTERN-4; HEDGE-1]"),
            vec!["HEDGE-1", "STEP-2", "RULE-3", "PATTERN-4"]
        );
        assert!(cited_tags("HEDGE-1 outside brackets").is_empty());
        assert!(cited_tags("unclosed [HEDGE-1").is_empty());
        assert!(has_unverified_marker("claim [UNVERIFIED: no source]"));
        assert!(has_unverified_marker("claim [ unverified ]"));
        assert!(!has_unverified_marker("claim [UNVERIFY]"));
    }

    #[test]
    fn glue_length_ignores_brackets() {
        let fw = HallucinationFirewall::new();
        let r = fw.check("In short [x]: yes.", &allowed(&[]), true, false);
        assert_eq!(r.sentences[0].kind, SentenceKind::Glue);
        // 19 characters of text: glue. 20: factual.
        let r = fw.check("abcdefghij abcdefgh", &allowed(&[]), true, false);
        assert_eq!(r.sentences[0].kind, SentenceKind::Glue);
        let r = fw.check("abcdefghij abcdefghi", &allowed(&[]), true, false);
        assert_eq!(r.sentences[0].kind, SentenceKind::Stripped);
    }

    #[test]
    fn trailing_citation_attaches_to_previous_sentence() {
        let fw = HallucinationFirewall::new();
        let r = fw.check(
            "Drone 42 is a member of group 7. [HEDGE-1]",
            &allowed(&["HEDGE-1"]),
            true,
            false,
        );
        assert_eq!(r.outcome, Outcome::Supported);
        assert_eq!(r.sentences.len(), 1);
        assert_eq!(r.answer, "Drone 42 is a member of group 7. [HEDGE-1]");
    }

    #[test]
    fn join_collapses_gaps_of_stripped_sentences() {
        let fw = HallucinationFirewall::new();
        let text = "Drone 42 is hostile today [HEDGE-1].\n\nDrone 9 is friendly as well. \
                    Drone 9 escorts drone 42 [HEDGE-2].";
        let r = fw.check(text, &allowed(&["HEDGE-1", "HEDGE-2"]), true, false);
        assert_eq!(r.outcome, Outcome::Stripped);
        assert_eq!(
            r.answer,
            "Drone 42 is hostile today [HEDGE-1].\n\nDrone 9 escorts drone 42 [HEDGE-2]."
        );
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
