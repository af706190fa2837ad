//! Sentence and claim segmentation shared by the firewall, the gate and grounding.

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

/// Split text into sentences with the guarded scanner.
pub fn segment(text: &str) -> Vec<Segment> {
    segment_naive(text)
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
