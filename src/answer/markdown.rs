//! Markdown structure of an answer, as the firewall reads it: what is layout, what is
//! hidden from a reader, and what words a line says once its syntax is taken away.
//!
//! Nothing is hidden from checking. Lists, tables, headings, block quotes, footnotes
//! and code are segmented and checked like any other text; only their syntax (`- `,
//! `1. `, `| … |`, `## `, `> `, `[^1]: `, `**`, `` ` ``) is removed from the words a
//! sentence is checked for. Lines that are pure layout (code fences, rules, table
//! separator rows) say nothing and are kept as they are. Text a renderer hides from
//! the reader (HTML comments, raw HTML elements, link reference definitions) is never
//! kept: a claim cannot ride on an invisible `[UNVERIFIED]`.

use std::ops::Range;

/// The line-level structure of a text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Structure {
    /// Byte ranges a renderer hides from the reader: HTML comments (an unclosed one
    /// runs to the end), raw HTML elements (from the opening tag to its closing tag),
    /// link reference definitions.
    pub hidden: Vec<Range<usize>>,
    /// Lines, in order.
    pub lines: Vec<Line>,
}

/// One line of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Byte range of the line (without its line break).
    pub range: Range<usize>,
    /// Where the line's words start, after block syntax (`> `, `## `, `- `, `1. `,
    /// `- [ ] `, `[^1]: `).
    pub content_start: usize,
    /// What kind of line it is.
    pub kind: LineKind,
}

/// The kind of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineKind {
    /// Ordinary text (also headings, list items, quotes, table rows, footnotes).
    Text,
    /// Inside a fenced code block: checked like text.
    Code,
    /// Says nothing: a code fence, a horizontal rule, a table separator row, an empty
    /// list marker or heading mark, a blank line.
    Layout,
}

impl Structure {
    /// The line holding byte `at`.
    pub fn line_at(&self, at: usize) -> Option<&Line> {
        let i = self.lines.partition_point(|l| l.range.end < at);
        self.lines.get(i).filter(|l| l.range.start <= at)
    }

    /// Whether any byte of `range` is hidden.
    pub fn is_hidden(&self, range: &Range<usize>) -> bool {
        self.hidden
            .iter()
            .any(|h| h.start < range.end && range.start < h.end)
    }
}

/// Read the structure of `text`.
pub fn structure(text: &str) -> Structure {
    let mut out = Structure {
        hidden: hidden_ranges(text),
        lines: Vec::new(),
    };
    let mut in_fence: Option<(char, usize)> = None;
    let mut start = 0;
    for raw in text.split_inclusive(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']) {
        let line_len = raw
            .trim_end_matches(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'])
            .len();
        let range = start..start + line_len;
        let line = &text[range.clone()];
        start += raw.len();
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        // Fences.
        let fence = trimmed
            .chars()
            .next()
            .filter(|c| matches!(c, '`' | '~'))
            .map(|c| (c, trimmed.chars().take_while(|&d| d == c).count()))
            .filter(|&(_, n)| n >= 3);
        if let Some((c, n)) = in_fence {
            if fence.is_some_and(|(d, m)| d == c && m >= n)
                && trimmed.trim_matches(c).trim().is_empty()
            {
                in_fence = None;
                out.lines.push(Line {
                    content_start: range.end,
                    range,
                    kind: LineKind::Layout,
                });
            } else {
                out.lines.push(Line {
                    content_start: range.start,
                    range,
                    kind: LineKind::Code,
                });
            }
            continue;
        }
        if let Some(f) = fence {
            in_fence = Some(f);
            out.lines.push(Line {
                content_start: range.end,
                range,
                kind: LineKind::Layout,
            });
            continue;
        }
        if is_layout_line(trimmed) {
            out.lines.push(Line {
                content_start: range.end,
                range,
                kind: LineKind::Layout,
            });
            continue;
        }
        let prefix = block_prefix(trimmed);
        let content_start = range.start + indent + prefix;
        let kind = if text[content_start..range.end].trim().is_empty() {
            LineKind::Layout
        } else {
            LineKind::Text
        };
        out.lines.push(Line {
            range,
            content_start,
            kind,
        });
    }
    out
}

/// A horizontal rule, a table separator row, or blank.
fn is_layout_line(t: &str) -> bool {
    let t = t.trim();
    if t.is_empty() {
        return true;
    }
    for mark in ['-', '*', '_'] {
        if t.starts_with(mark)
            && t.chars().all(|c| c == mark || c == ' ' || c == '\t')
            && t.chars().filter(|&c| c == mark).count() >= 3
        {
            return true;
        }
    }
    t.contains('|')
        && t.contains('-')
        && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

/// Length in bytes of the block syntax at the start of a (left-trimmed) line.
fn block_prefix(line: &str) -> usize {
    let mut i = 0;
    let b = line.as_bytes();
    loop {
        let rest = &line[i..];
        let skip_ws = |j: usize| j + line[j..].len() - line[j..].trim_start().len();
        if rest.starts_with('>') {
            i = skip_ws(i + 1);
            continue;
        }
        let hashes = rest.bytes().take_while(|&c| c == b'#').count();
        if (1..=6).contains(&hashes)
            && rest[hashes..]
                .chars()
                .next()
                .is_none_or(char::is_whitespace)
        {
            i = skip_ws(i + hashes);
            continue;
        }
        if let Some(&c) = b.get(i)
            && matches!(c, b'-' | b'*' | b'+')
            && rest[1..].chars().next().is_some_and(char::is_whitespace)
        {
            i = skip_ws(i + 1);
            continue;
        }
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if (1..=9).contains(&digits)
            && matches!(rest.as_bytes().get(digits), Some(b'.' | b')'))
            && rest[digits + 1..]
                .chars()
                .next()
                .is_some_and(char::is_whitespace)
        {
            i = skip_ws(i + digits + 1);
            continue;
        }
        // Task-list boxes.
        for bx in ["[ ]", "[x]", "[X]"] {
            if rest.starts_with(bx) && rest[3..].chars().next().is_none_or(char::is_whitespace) {
                return skip_ws(i + 3);
            }
        }
        // Footnote definitions `[^id]:`.
        if rest.starts_with("[^")
            && let Some(close) = rest.find("]:")
            && !rest[2..close].contains([' ', '['])
        {
            return skip_ws(i + close + 2);
        }
        return i;
    }
}

/// HTML comments, raw HTML elements and link reference definitions.
fn hidden_ranges(text: &str) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    // Open elements: (name, start).
    let mut open: Vec<(String, usize)> = Vec::new();
    while let Some(rel) = text[i..].find('<') {
        let at = i + rel;
        if text[at..].starts_with("<!--") {
            let end = text[at + 4..]
                .find("-->")
                .map_or(text.len(), |e| at + 4 + e + 3);
            out.push(at..end);
            i = end;
            continue;
        }
        match html_tag(&text[at..]) {
            Some((len, name, closing, self_closing)) => {
                let end = at + len;
                if closing {
                    match open.iter().rposition(|(n, _)| *n == name) {
                        Some(k) => {
                            let (_, start) = open.remove(k);
                            open.truncate(k);
                            out.push(start..end);
                        }
                        None => out.push(at..end),
                    }
                } else if self_closing || VOID_ELEMENTS.contains(&name.as_str()) {
                    out.push(at..end);
                } else {
                    open.push((name, at));
                }
                i = end;
            }
            None => i = at + 1,
        }
        let _ = bytes;
    }
    // An element never closed hides to the end of the text.
    for (_, start) in open {
        out.push(start..text.len());
    }
    // Link reference definitions: `[label]: target` on a line of its own.
    if !text.contains("]:") {
        out.sort_by_key(|r| (r.start, r.end));
        return out;
    }
    let mut start = 0;
    for raw in text.split_inclusive('\n') {
        let line = raw.trim_end_matches(['\n', '\r']);
        let t = line.trim_start();
        if t.starts_with('[')
            && !t.starts_with("[^")
            && let Some(close) = t.find("]:")
            && close > 1
            && !t[1..close].contains(['[', ']'])
            && t[close + 2..].split_whitespace().count() >= 1
            && !t[close + 2..].trim().contains(' ')
        {
            out.push(start..start + line.len());
        }
        start += raw.len();
    }
    out.sort_by_key(|r| (r.start, r.end));
    out
}

const VOID_ELEMENTS: &[&str] = &[
    "br", "hr", "img", "input", "meta", "link", "wbr", "area", "base", "col", "embed", "source",
    "track", "param",
];

/// A raw HTML tag at the start of `s`: (length, lower-case name, closing, self-closing).
fn html_tag(s: &str) -> Option<(usize, String, bool, bool)> {
    let rest = s.strip_prefix('<')?;
    let (closing, rest) = match rest.strip_prefix('/') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let name_len = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-')
        .count();
    if name_len == 0 || !rest.as_bytes()[0].is_ascii_alphabetic() {
        return None;
    }
    let name = rest[..name_len].to_ascii_lowercase();
    let after = &rest[name_len..];
    if !after.starts_with(['>', ' ', '/', '\t', '\n']) {
        return None;
    }
    let close = after.find('>')?;
    if after[..close].contains('<') {
        return None;
    }
    let self_closing = after[..close].ends_with('/');
    let len = 1 + usize::from(closing) + name_len + close + 1;
    Some((len, name, closing, self_closing))
}

/// The text with struck-through spans (`~~…~~`, which a reader sees as deleted)
/// replaced by a space; an unclosed `~~` is kept as written.
pub fn without_struck(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("~~") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("~~") {
        match rest[open + 2..].find("~~") {
            Some(close) => {
                out.push_str(&rest[..open]);
                out.push(' ');
                rest = &rest[open + 2 + close + 2..];
            }
            None => break,
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// The words of a piece of a line once inline syntax is removed: struck-through text
/// is dropped ([`without_struck`]), table pipes become spaces, emphasis and code marks
/// (`*`, `` ` ``, `~`) go.
pub fn inline_words(text: &str) -> String {
    if !text.contains(['|', '*', '`', '~']) {
        return text.to_string();
    }
    without_struck(text)
        .chars()
        .map(|c| match c {
            '|' => ' ',
            c => c,
        })
        .filter(|c| !matches!(c, '*' | '`' | '~'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_elements_are_hidden() {
        let t = "Drone 7 is hostile <!-- [UNVERIFIED] --> today.";
        let s = structure(t);
        assert_eq!(s.hidden.len(), 1);
        assert_eq!(&t[s.hidden[0].clone()], "<!-- [UNVERIFIED] -->");
        let t = "a <span hidden>x</span> b <br> c <!-- open";
        let s = structure(t);
        let shown: Vec<&str> = s.hidden.iter().map(|r| &t[r.clone()]).collect();
        assert_eq!(shown, ["<span hidden>x</span>", "<br>", "<!-- open"]);
        assert!(structure("x < 5 and y > 3").hidden.is_empty());
        let t = "[ref]: https://example.com\nText.";
        assert_eq!(structure(t).hidden, vec![0..26]);
    }

    #[test]
    fn block_syntax_is_a_prefix() {
        for (line, words) in [
            ("- Drone 7: hostile", "Drone 7: hostile"),
            ("  1. Drone 7", "Drone 7"),
            ("> ## Heading", "Heading"),
            ("- [x] done", "done"),
            ("[^1]: Drone 9 was sighted.", "Drone 9 was sighted."),
            ("| a | b |", "| a | b |"),
        ] {
            let s = structure(line);
            assert_eq!(&line[s.lines[0].content_start..], words, "{line}");
        }
    }

    #[test]
    fn layout_lines() {
        let t = "| a | b |\n|---|:-:|\n---\n```\ncode [x]\n```\n-";
        let kinds: Vec<LineKind> = structure(t).lines.iter().map(|l| l.kind).collect();
        assert_eq!(
            kinds,
            [
                LineKind::Text,
                LineKind::Layout,
                LineKind::Layout,
                LineKind::Layout,
                LineKind::Code,
                LineKind::Layout,
                LineKind::Text
            ]
        );
    }

    #[test]
    fn inline_syntax_goes_struck_text_too() {
        assert_eq!(
            inline_words("**drone 7** is `hostile`"),
            "drone 7 is hostile"
        );
        assert_eq!(
            inline_words("drone 9 was ~~not~~ cleared"),
            "drone 9 was   cleared"
        );
        assert_eq!(without_struck("a ~~[UNVERIFIED]~~ b ~~c"), "a   b ~~c");
        assert_eq!(
            inline_words("| drone 7 | hostile |"),
            "  drone 7   hostile  "
        );
    }
}
