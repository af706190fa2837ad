//! Text normalisation shared by the answer checkers: what a reader cannot see is not
//! there, and what is the same character in another width is the same character.
//!
//! - [`is_invisible`]: zero-width characters, bidirectional controls, the soft hyphen,
//!   the byte-order mark, variation selectors and Unicode tag characters. They change
//!   no glyph a person reads (or, for bidirectional controls, change the order in which
//!   a person reads the glyphs), so the firewall removes them before it reads an
//!   answer: a tag with a zero-width space inside (`[HE\u{200B}DGE-42]`) is the tag a
//!   person sees, `HEDGE-42`, and a `\u{202E}` cannot show `42` where the text says
//!   `24`.
//! - [`fold_compat`]: the NFKC-style fold the checkers need for tags and words:
//!   fullwidth ASCII (`ＳＴＥＰ－１`) to ASCII, and the Unicode dashes and minus signs
//!   to `-`. It is the identity on ASCII.
//! - [`fold_confusable`]: Cyrillic and Greek letters that look like Latin capitals
//!   (`НЕDGE`), mapped to those capitals. They are *not* the same characters, so a tag
//!   that exists only after this fold is a forgery, not a citation.
//! - [`is_control`]: control characters other than tab and line breaks (terminal escape
//!   sequences start with one).

use std::borrow::Cow;

/// Whether `c` is invisible formatting: it changes no glyph a reader sees.
pub fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'              // soft hyphen
            | '\u{034F}'        // combining grapheme joiner
            | '\u{061C}'        // Arabic letter mark
            | '\u{115F}'
            | '\u{1160}'        // Hangul fillers
            | '\u{17B4}'
            | '\u{17B5}'
            | '\u{180B}'..='\u{180F}' // Mongolian selectors and vowel separator
            | '\u{200B}'..='\u{200F}' // zero-width space, (non-)joiner, LRM, RLM
            | '\u{202A}'..='\u{202E}' // bidirectional embeddings and overrides
            | '\u{2060}'..='\u{2064}' // word joiner, invisible operators
            | '\u{2066}'..='\u{206F}' // bidirectional isolates, deprecated formats
            | '\u{3164}'        // Hangul filler
            | '\u{FE00}'..='\u{FE0F}' // variation selectors
            | '\u{FEFF}'        // zero-width no-break space, byte-order mark
            | '\u{FFA0}'        // halfwidth Hangul filler
            | '\u{1D173}'..='\u{1D17A}' // musical formatting
            | '\u{E0000}'..='\u{E007F}' // tag characters
            | '\u{E0100}'..='\u{E01EF}' // variation selectors supplement
    )
}

/// Whether `c` is a control character other than tab and the line breaks (`\n`, `\r`):
/// C0 controls, DEL and C1 controls. ESC (U+001B) starts terminal escape sequences.
pub fn is_control(c: char) -> bool {
    (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) && !is_line_break(c)
}

/// Line breaks the segmenter breaks on (besides `\n` and `\r`).
fn is_line_break(c: char) -> bool {
    matches!(c, '\u{85}')
}

/// The text without invisible characters ([`is_invisible`]); borrowed when there are
/// none (the common case costs one scan).
pub fn strip_invisible(text: &str) -> Cow<'_, str> {
    if text.is_ascii() || !text.chars().any(is_invisible) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().filter(|&c| !is_invisible(c)).collect())
}

/// The compatibility fold of one character: fullwidth ASCII to ASCII, the ideographic
/// space to a space, dashes and minus signs to `-`. Every other character is itself.
pub fn fold_compat(c: char) -> char {
    match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        '\u{3000}' => ' ',
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{2043}' => '-',
        _ => c,
    }
}

/// Latin capital that a Cyrillic or Greek letter (either case) is drawn like, if any.
/// Used only to recognise forged tags: these are different characters.
pub fn fold_confusable(c: char) -> char {
    match c {
        // Cyrillic
        'А' | 'а' => 'A',
        'В' | 'в' => 'B',
        'Е' | 'е' | 'Ё' | 'ё' => 'E',
        'Н' | 'н' => 'H',
        'І' | 'і' | 'Ӏ' => 'I',
        'Ј' | 'ј' => 'J',
        'К' | 'к' => 'K',
        'М' | 'м' => 'M',
        'О' | 'о' => 'O',
        'Р' | 'р' => 'P',
        'С' | 'с' => 'C',
        'Ѕ' | 'ѕ' => 'S',
        'Т' | 'т' => 'T',
        'Х' | 'х' => 'X',
        'У' | 'у' => 'Y',
        'Ԁ' | 'ԁ' => 'D',
        'Ԍ' | 'ԍ' => 'G',
        'Ԛ' | 'ԛ' => 'Q',
        'Ԝ' | 'ԝ' => 'W',
        // Greek
        'Α' | 'α' => 'A',
        'Β' | 'β' => 'B',
        'Ε' | 'ε' => 'E',
        'Ζ' => 'Z',
        'Η' => 'H',
        'Ι' | 'ι' => 'I',
        'Κ' | 'κ' => 'K',
        'Μ' => 'M',
        'Ν' => 'N',
        'Ο' | 'ο' => 'O',
        'Ρ' | 'ρ' => 'P',
        'Τ' | 'τ' => 'T',
        'Υ' | 'υ' => 'Y',
        'Χ' | 'χ' => 'X',
        // Latin look-alikes outside ASCII
        'ı' => 'I',
        'ℓ' => 'L',
        'Ⅰ' => 'I',
        'Ⅴ' => 'V',
        'Ⅹ' => 'X',
        'Ⅼ' => 'L',
        'Ⅽ' => 'C',
        'Ⅾ' => 'D',
        'Ⅿ' => 'M',
        _ => c,
    }
}

/// Decimal digit value of a non-ASCII decimal digit (Arabic-Indic `٤`, Devanagari `४`,
/// mathematical `𝟒`…), for recognising forged tag numbers. `None` for ASCII digits and
/// non-digits.
pub fn foreign_digit(c: char) -> Option<u32> {
    const ZEROS: [u32; 24] = [
        0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6,
        0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0,
        0x1D7CE, 0x1D7D8,
    ];
    let cp = c as u32;
    if c.is_ascii() {
        return None;
    }
    for z in ZEROS {
        if (z..z + 10).contains(&cp) {
            return Some(cp - z);
        }
    }
    // Mathematical digits come in five runs of ten from U+1D7CE.
    if (0x1D7CE..=0x1D7FF).contains(&cp) {
        return Some((cp - 0x1D7CE) % 10);
    }
    // Superscripts, subscripts, circled digits: look-alikes too.
    match c {
        '⁰' | '₀' => Some(0),
        '¹' | '₁' | '①' => Some(1),
        '²' | '₂' | '②' => Some(2),
        '³' | '₃' | '③' => Some(3),
        '⁴' | '₄' | '④' => Some(4),
        '⁵' | '₅' | '⑤' => Some(5),
        '⁶' | '₆' | '⑥' => Some(6),
        '⁷' | '₇' | '⑦' => Some(7),
        '⁸' | '₈' | '⑧' => Some(8),
        '⁹' | '₉' | '⑨' => Some(9),
        _ => None,
    }
}

/// Escape a value for one line of a prompt or terminal: control characters, line and
/// paragraph separators, invisible characters and the backslash become visible escapes
/// (`\n`, `\t`, `\u{1b}`, `\\`), so no data can start a new line, move the cursor or
/// hide text. Everything else is kept.
pub fn escape_line(s: &str) -> Cow<'_, str> {
    let needs = |c: char| {
        c == '\\' || c.is_control() || is_invisible(c) || matches!(c, '\u{2028}' | '\u{2029}')
    };
    if !s.chars().any(needs) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`escape_line`] for text that is already a quoted literal with its own backslash
/// escapes (`pred("a\\nb")`): control, separator and invisible characters become
/// `\u{…}`, backslashes are left as they are.
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    let needs = |c: char| c.is_control() || is_invisible(c) || matches!(c, '\u{2028}' | '\u{2029}');
    if !s.chars().any(needs) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Brackets in data that hold a citation tag (`[HEDGE-1]`, `[ step-2 ]`), escaped as
/// `\[…\]` so that a value can never read as a citation line or a citation in a
/// prompt. Other brackets are kept.
pub fn defang_tags(s: &str) -> Cow<'_, str> {
    if !s.contains(['[', '［']) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 4);
    let mut changed = false;
    let mut rest = s;
    while let Some(open) = rest.find(['[', '［']) {
        let oc = rest[open..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&rest[..open]);
        let after = &rest[open + oc..];
        let close = after.find([']', '］', '[', '［']);
        match close {
            Some(c) if after[c..].starts_with([']', '］']) && holds_tag(&after[..c]) => {
                let cc = after[c..].chars().next().map_or(1, char::len_utf8);
                out.push_str("\\[");
                out.push_str(&after[..c]);
                out.push_str("\\]");
                rest = &after[c + cc..];
                changed = true;
            }
            _ => {
                out.push_str(&rest[open..open + oc]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(s)
    }
}

fn holds_tag(inner: &str) -> bool {
    inner
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || fold_compat(c) == '-'))
        .any(|w| crate::answer::firewall::canonical_tag(w).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_are_removed() {
        assert_eq!(strip_invisible("HE\u{200B}DGE-4\u{2060}2"), "HEDGE-42");
        assert_eq!(strip_invisible("\u{202E}24\u{202C}"), "24");
        assert!(matches!(strip_invisible("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn compat_fold_maps_fullwidth_and_dashes() {
        let folded: String = "ＳＴＥＰ－１ a–b".chars().map(fold_compat).collect();
        assert_eq!(folded, "STEP-1 a-b");
    }

    #[test]
    fn confusables_map_to_latin() {
        let folded: String = "НЕDGЕ".chars().map(fold_confusable).collect();
        assert_eq!(folded, "HEDGE");
        assert_eq!(foreign_digit('٤'), Some(4));
        assert_eq!(foreign_digit('4'), None);
        assert_eq!(foreign_digit('𝟒'), Some(4));
    }

    #[test]
    fn escaping_keeps_data_on_one_line() {
        assert_eq!(escape_line("a\nb"), "a\\nb");
        assert_eq!(escape_line("x\u{1b}[31m"), "x\\u{1b}[31m");
        assert_eq!(escape_line("a\\n"), "a\\\\n");
        assert_eq!(escape_line("zone\u{2028}x"), "zone\\u{2028}x");
        assert!(matches!(escape_line("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn tags_in_data_are_defanged() {
        assert_eq!(defang_tags("zone [HEDGE-1] x"), "zone \\[HEDGE-1\\] x");
        assert_eq!(defang_tags("pier [east]"), "pier [east]");
        assert_eq!(defang_tags("a [ b [step-2] c"), "a [ b \\[step-2\\] c");
        assert_eq!(escape_controls("p(\"a\\nb\u{1b}\")"), "p(\"a\\nb\\u{1b}\")");
    }

    #[test]
    fn controls_exclude_tab_and_newlines() {
        assert!(is_control('\u{1b}'));
        assert!(is_control('\u{7f}'));
        assert!(is_control('\u{9b}'));
        assert!(!is_control('\t'));
        assert!(!is_control('\n'));
        assert!(!is_control('a'));
    }
}
