//! Tokens of the rule language, with byte spans.
//!
//! The lexer never stops at the first problem: a bad character or an unterminated
//! string becomes a [`SyntaxError`] and lexing goes on, so one run reports every
//! lexical mistake of a file.

use crate::diag::{FileId, Span};

use super::{Errors, SyntaxError};

/// A token kind with its payload.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// Identifier or keyword (`edge`, `not`, `count`, `number`).
    Ident(String),
    /// `_` on its own.
    Underscore,
    /// An integer literal's magnitude (decimal, `0x` hex or `0b` binary).
    Int(u64),
    /// An integer literal with a `u` suffix.
    Unsigned(u64),
    /// A float literal (`1.5`, `2e-3`).
    Float(f64),
    /// A string literal, escapes resolved.
    Str(String),
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Comma,
    Dot,
    Colon,
    Semi,
    /// `:-`
    If,
    Bang,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `<:`
    Subtype,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    At,
    Pipe,
    Hash,
    Caret,
    Dollar,
    Eof,
}

impl Tok {
    /// How the token reads in an error message.
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{}`", super::shorten(s)),
            Tok::Underscore => "`_`".into(),
            Tok::Int(n) => format!("`{n}`"),
            Tok::Unsigned(n) => format!("`{n}u`"),
            Tok::Float(x) => format!("`{x:?}`"),
            Tok::Str(_) => "a string".into(),
            Tok::Eof => "end of file".into(),
            other => format!("`{}`", other.punct()),
        }
    }

    fn punct(&self) -> &'static str {
        match self {
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::Comma => ",",
            Tok::Dot => ".",
            Tok::Colon => ":",
            Tok::Semi => ";",
            Tok::If => ":-",
            Tok::Bang => "!",
            Tok::Eq => "=",
            Tok::Ne => "!=",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::Subtype => "<:",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Percent => "%",
            Tok::At => "@",
            Tok::Pipe => "|",
            Tok::Hash => "#",
            Tok::Caret => "^",
            Tok::Dollar => "$",
            _ => "?",
        }
    }
}

/// A token and where it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    /// What it is.
    pub tok: Tok,
    /// Its bytes.
    pub span: Span,
    /// Whether whitespace or a comment separates it from the previous token.
    pub spaced: bool,
    /// Whether a line break separates it from the previous token (or it is first).
    pub line_start: bool,
}

/// Split `text` into tokens (ending with [`Tok::Eof`]), collecting lexical errors.
pub(crate) fn lex(file: FileId, text: &str, errors: &mut Errors) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    let mut spaced = true;
    let mut line_start = true;
    let span = |a: usize, b: usize| Span::new(file, a, b);
    while i < bytes.len() {
        let c = bytes[i];
        // Whitespace and comments.
        if c.is_ascii_whitespace() {
            if c == b'\n' {
                line_start = true;
            }
            spaced = true;
            i += 1;
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            spaced = true;
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            let start = i;
            i += 2;
            loop {
                if i + 1 >= bytes.len() {
                    errors.push(SyntaxError::new(
                        span(start, start + 2),
                        "unterminated block comment",
                        "close the comment with `*/`",
                    ));
                    i = bytes.len();
                    break;
                }
                if bytes[i] == b'*' && bytes[i + 1] == b'/' {
                    i += 2;
                    break;
                }
                if bytes[i] == b'\n' {
                    line_start = true;
                }
                i += 1;
            }
            spaced = true;
            continue;
        }
        let start = i;
        let tok = if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &text[start..i];
            if word == "_" {
                Tok::Underscore
            } else {
                Tok::Ident(word.to_string())
            }
        } else if c.is_ascii_digit() {
            let (tok, end) = lex_number(text, start, file, errors);
            i = end;
            tok
        } else if c == b'"' {
            let (tok, end) = lex_string(text, start, file, errors);
            i = end;
            tok
        } else {
            let next = bytes.get(i + 1).copied();
            let (tok, len) = match (c, next) {
                (b':', Some(b'-')) => (Tok::If, 2),
                (b'!', Some(b'=')) => (Tok::Ne, 2),
                (b'<', Some(b'=')) => (Tok::Le, 2),
                (b'>', Some(b'=')) => (Tok::Ge, 2),
                (b'<', Some(b':')) => (Tok::Subtype, 2),
                (b'(', _) => (Tok::LParen, 1),
                (b')', _) => (Tok::RParen, 1),
                (b'{', _) => (Tok::LBrace, 1),
                (b'}', _) => (Tok::RBrace, 1),
                (b'[', _) => (Tok::LBracket, 1),
                (b']', _) => (Tok::RBracket, 1),
                (b',', _) => (Tok::Comma, 1),
                (b'.', _) => (Tok::Dot, 1),
                (b':', _) => (Tok::Colon, 1),
                (b';', _) => (Tok::Semi, 1),
                (b'!', _) => (Tok::Bang, 1),
                (b'=', _) => (Tok::Eq, 1),
                (b'<', _) => (Tok::Lt, 1),
                (b'>', _) => (Tok::Gt, 1),
                (b'+', _) => (Tok::Plus, 1),
                (b'-', _) => (Tok::Minus, 1),
                (b'*', _) => (Tok::Star, 1),
                (b'/', _) => (Tok::Slash, 1),
                (b'%', _) => (Tok::Percent, 1),
                (b'@', _) => (Tok::At, 1),
                (b'|', _) => (Tok::Pipe, 1),
                (b'#', _) => (Tok::Hash, 1),
                (b'^', _) => (Tok::Caret, 1),
                (b'$', _) => (Tok::Dollar, 1),
                _ => {
                    let ch = text[i..].chars().next().unwrap_or('?');
                    let len = ch.len_utf8();
                    errors.push(SyntaxError::new(
                        span(i, i + len),
                        format!("unexpected character `{ch}`"),
                        "remove it; strings must be written in double quotes",
                    ));
                    i += len;
                    spaced = true;
                    continue;
                }
            };
            i += len;
            tok
        };
        toks.push(Token {
            tok,
            span: span(start, i),
            spaced,
            line_start,
        });
        spaced = false;
        line_start = false;
    }
    toks.push(Token {
        tok: Tok::Eof,
        span: span(bytes.len(), bytes.len()),
        spaced: true,
        line_start: true,
    });
    toks
}

fn lex_number(text: &str, start: usize, file: FileId, errors: &mut Errors) -> (Tok, usize) {
    let bytes = text.as_bytes();
    let mut i = start;
    let at = |k: usize| bytes.get(k).copied().unwrap_or(0);
    let too_large = |end: usize, errors: &mut Errors| {
        errors.push(SyntaxError::new(
            Span::new(file, start, end),
            format!(
                "integer literal `{}` is too large",
                super::shorten(&text[start..end])
            ),
            "integers must fit in 64 bits",
        ));
    };
    let radix = match (at(i), at(i + 1)) {
        (b'0', b'x' | b'X') if at(i + 2).is_ascii_hexdigit() => 16,
        (b'0', b'b' | b'B') if matches!(at(i + 2), b'0' | b'1') => 2,
        _ => 10,
    };
    if radix != 10 {
        i += 2;
        let digits_start = i;
        while (at(i) as char).is_digit(radix) {
            i += 1;
        }
        let value = u64::from_str_radix(&text[digits_start..i], radix);
        let unsigned = at(i) == b'u';
        if unsigned {
            i += 1;
        }
        return match value {
            Ok(v) if unsigned => (Tok::Unsigned(v), i),
            Ok(v) => (Tok::Int(v), i),
            Err(_) => {
                too_large(i, errors);
                (Tok::Int(0), i)
            }
        };
    }
    while at(i).is_ascii_digit() {
        i += 1;
    }
    let mut is_float = false;
    if at(i) == b'.' && at(i + 1).is_ascii_digit() {
        is_float = true;
        i += 1;
        while at(i).is_ascii_digit() {
            i += 1;
        }
    }
    if (at(i) == b'e' || at(i) == b'E')
        && (at(i + 1).is_ascii_digit()
            || ((at(i + 1) == b'-' || at(i + 1) == b'+') && at(i + 2).is_ascii_digit()))
    {
        is_float = true;
        i += 2;
        while at(i).is_ascii_digit() {
            i += 1;
        }
    }
    if is_float {
        // The slice is digits, '.', 'e' and a sign: always a valid f64 literal.
        let x = text[start..i].parse::<f64>().unwrap_or(0.0);
        if !x.is_finite() {
            errors.push(SyntaxError::new(
                Span::new(file, start, i),
                format!(
                    "float literal `{}` is out of range",
                    super::shorten(&text[start..i])
                ),
                "floats must be finite (at most about 1.8e308 in magnitude)",
            ));
            return (Tok::Float(0.0), i);
        }
        return (Tok::Float(x), i);
    }
    let value = text[start..i].parse::<u64>();
    let unsigned = at(i) == b'u' && !at(i + 1).is_ascii_alphanumeric();
    let end = if unsigned { i + 1 } else { i };
    match value {
        Ok(v) if unsigned => (Tok::Unsigned(v), end),
        Ok(v) => (Tok::Int(v), end),
        Err(_) => {
            too_large(end, errors);
            (Tok::Int(0), end)
        }
    }
}

fn lex_string(text: &str, start: usize, file: FileId, errors: &mut Errors) -> (Tok, usize) {
    let mut out = String::new();
    let mut chars = text[start + 1..].char_indices();
    while let Some((off, ch)) = chars.next() {
        let pos = start + 1 + off;
        match ch {
            '"' => return (Tok::Str(out), pos + 1),
            '\n' => break,
            '\\' => match chars.next() {
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((_, 'r')) => out.push('\r'),
                Some((_, '0')) => out.push('\0'),
                Some((_, '\\')) => out.push('\\'),
                Some((_, '"')) => out.push('"'),
                Some((_, '\'')) => out.push('\''),
                Some((eoff, other)) => {
                    let epos = start + 1 + eoff;
                    errors.push(SyntaxError::new(
                        Span::new(file, pos, epos + other.len_utf8()),
                        format!("unknown escape `\\{other}` in string"),
                        "use one of \\n \\t \\r \\0 \\\\ \\\" \\'",
                    ));
                }
                None => break,
            },
            c => out.push(c),
        }
    }
    let end = text[start..].find('\n').map_or(text.len(), |n| start + n);
    errors.push(SyntaxError::new(
        Span::new(file, start, start + 1),
        "unterminated string literal",
        "close the string with `\"` on the same line",
    ));
    (Tok::Str(out), end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Tok> {
        let mut errs = Errors::default();
        let toks = lex(0, text, &mut errs);
        assert!(errs.is_empty(), "{errs:?}");
        toks.into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers_of_every_form() {
        assert_eq!(
            kinds("12 0x1F 0b101 7u 1.5 2e3 1.25e-2 3."),
            vec![
                Tok::Int(12),
                Tok::Int(31),
                Tok::Int(5),
                Tok::Unsigned(7),
                Tok::Float(1.5),
                Tok::Float(2000.0),
                Tok::Float(0.0125),
                Tok::Int(3),
                Tok::Dot,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn operators_and_comments() {
        assert_eq!(
            kinds("a :- b, // c\n !c /* x \n y */ <= <: != _"),
            vec![
                Tok::Ident("a".into()),
                Tok::If,
                Tok::Ident("b".into()),
                Tok::Comma,
                Tok::Bang,
                Tok::Ident("c".into()),
                Tok::Le,
                Tok::Subtype,
                Tok::Ne,
                Tok::Underscore,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn string_escapes() {
        assert_eq!(
            kinds(r#""a\"b\n\\""#),
            vec![Tok::Str("a\"b\n\\".into()), Tok::Eof]
        );
    }

    #[test]
    fn errors_are_collected_and_lexing_continues() {
        let mut errs = Errors::default();
        let toks = lex(0, "a ~ \"open\nb 99999999999999999999 1e999", &mut errs);
        let errs: Vec<_> = errs.iter().collect();
        assert_eq!(errs.len(), 4);
        assert!(errs[0].message.contains("unexpected character `~`"));
        assert!(errs[1].message.contains("unterminated string"));
        assert!(errs[2].message.contains("too large"));
        assert!(errs[3].message.contains("out of range"), "{:?}", errs[3]);
        assert!(toks.iter().any(|t| t.tok == Tok::Ident("b".into())));
    }

    #[test]
    fn line_start_and_spacing_are_tracked() {
        let mut errs = Errors::default();
        let toks = lex(0, "a(1).\n.decl", &mut errs);
        let dot = &toks[5];
        assert_eq!(dot.tok, Tok::Dot);
        assert!(dot.line_start);
        assert!(!toks[6].spaced);
    }
}
