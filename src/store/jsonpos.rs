//! Byte positions inside JSON text, so that input errors can name a line and column.
//!
//! `serde_json::Value` forgets where things were; this walker recovers the byte
//! offsets of object members and array elements. It is only run over text that
//! `serde_json` has already accepted, and it never panics: on anything unexpected it
//! gives up and returns `None`/an empty list, and the caller falls back to a coarser
//! position.

/// The byte range of one JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Extent {
    /// First byte of the value.
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
}

/// One member of a JSON object: its decoded key, the key's offset and the value's
/// extent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    /// The key, unescaped.
    pub key: String,
    /// Offset of the key's opening quote.
    pub key_at: usize,
    /// The value.
    pub value: Extent,
}

struct Walker<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Walker<'a> {
    fn at(text: &'a str, i: usize) -> Walker<'a> {
        Walker {
            s: text.as_bytes(),
            i,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        self.ws();
        if self.peek() == Some(b) {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }

    fn string(&mut self) -> Option<Extent> {
        let start = self.i;
        if self.peek() != Some(b'"') {
            return None;
        }
        self.i += 1;
        loop {
            match self.peek()? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some(Extent { start, end: self.i });
                }
                _ => self.i += 1,
            }
        }
    }

    /// Skip one value (after whitespace) and return its extent.
    fn value(&mut self) -> Option<Extent> {
        self.ws();
        let start = self.i;
        match self.peek()? {
            b'"' => self.string(),
            b'[' => {
                self.array(|_| ())?;
                Some(Extent { start, end: self.i })
            }
            b'{' => {
                self.object(|_| ())?;
                Some(Extent { start, end: self.i })
            }
            _ => {
                while matches!(
                    self.peek(),
                    Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E' | b'a'..=b'z')
                ) {
                    self.i += 1;
                }
                (self.i > start).then_some(Extent { start, end: self.i })
            }
        }
    }

    fn array(&mut self, mut each: impl FnMut(Extent)) -> Option<()> {
        self.eat(b'[')?;
        if self.eat(b']').is_some() {
            return Some(());
        }
        loop {
            each(self.value()?);
            if self.eat(b',').is_none() {
                return self.eat(b']');
            }
        }
    }

    fn object(&mut self, mut each: impl FnMut(Member)) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            self.ws();
            let k = self.string()?;
            let key: String = serde_json::from_slice(&self.s[k.start..k.end]).ok()?;
            self.eat(b':')?;
            let value = self.value()?;
            each(Member {
                key,
                key_at: k.start,
                value,
            });
            if self.eat(b',').is_none() {
                return self.eat(b'}');
            }
        }
    }
}

/// How deeply JSON input may nest arrays and objects (as `serde_json`'s own limit).
pub(crate) const MAX_JSON_DEPTH: usize = 128;

/// The offset of the first `[` or `{` that opens a level deeper than `max`, if any.
/// A linear scan without recursion, so that it is safe on any text: run before
/// anything walks the document's tree.
pub(crate) fn too_deep(text: &str, max: usize) -> Option<usize> {
    let s = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'"' => {
                i += 1;
                while i < s.len() && s[i] != b'"' {
                    i += if s[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The members of the object starting at (or after whitespace from) `at`, in document
/// order, duplicates included. `None` when there is no object there.
pub(crate) fn members(text: &str, at: usize) -> Option<Vec<Member>> {
    let mut out = Vec::new();
    Walker::at(text, at).object(|m| out.push(m))?;
    Some(out)
}

/// The elements of the array starting at (or after whitespace from) `at`. `None` when
/// there is no array there.
pub(crate) fn elements(text: &str, at: usize) -> Option<Vec<Extent>> {
    let mut out = Vec::new();
    Walker::at(text, at).array(|e| out.push(e))?;
    Some(out)
}

/// Offset of the value of member `key` of the object at `at` (the last one, as
/// `serde_json` keeps the last of duplicate keys).
pub(crate) fn member(text: &str, at: usize, key: &str) -> Option<usize> {
    members(text, at)?
        .into_iter()
        .rev()
        .find(|m| m.key == key)
        .map(|m| m.value.start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_members_and_elements() {
        let text = r#" {"edge": [[1, 2], [2,3]], "n\"x": "a]b", "e": {}} "#;
        let ms = members(text, 0).unwrap();
        let keys: Vec<&str> = ms.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["edge", "n\"x", "e"]);
        let rows = elements(text, ms[0].value.start).unwrap();
        assert_eq!(&text[rows[0].start..rows[0].end], "[1, 2]");
        assert_eq!(&text[rows[1].start..rows[1].end], "[2,3]");
        assert_eq!(&text[ms[1].value.start..ms[1].value.end], "\"a]b\"");
        let cell = elements(text, rows[1].start).unwrap()[1].start;
        assert_eq!(&text[cell..cell + 1], "3");
        assert_eq!(member(text, 0, "e").map(|i| &text[i..i + 2]), Some("{}"));
    }

    #[test]
    fn literals_and_numbers() {
        let text = r#"[true, null, -1.5e3, false, []]"#;
        let es = elements(text, 0).unwrap();
        let parts: Vec<&str> = es.iter().map(|e| &text[e.start..e.end]).collect();
        assert_eq!(parts, ["true", "null", "-1.5e3", "false", "[]"]);
    }

    #[test]
    fn depth_is_measured_without_recursion() {
        assert_eq!(too_deep("[[1], {\"a\": [2]}]", 3), None);
        assert_eq!(too_deep("[[1], {\"a\": [2]}]", 2), Some(12));
        assert_eq!(too_deep("[\"[[[[\\\"[[[\", 1]", 1), None);
        let deep = "[".repeat(1_000_000);
        assert_eq!(too_deep(&deep, MAX_JSON_DEPTH), Some(MAX_JSON_DEPTH));
    }

    #[test]
    fn gives_up_without_panicking() {
        assert_eq!(members("[1]", 0), None);
        assert_eq!(elements("{\"a\": 1}", 0), None);
        assert_eq!(elements("[1, ", 0), None);
        assert_eq!(members("{\"a", 0), None);
    }
}
