//! A direct JSON parser into [`Json`], for well-formed documents.
//!
//! It reads the bytes once, slices strings without escapes out of the text
//! and collects lists and objects on shared buffers, about three times
//! faster than driving serde_json's deserializer through a visitor. It
//! accepts exactly what serde_json accepts and builds the same values; on
//! anything it does not take (any syntax error, a lone surrogate, a number
//! out of range, nesting deeper than [`MAX_DEPTH`]) it gives up, and
//! [`Json::parse`] parses the text again with serde_json, whose error (or
//! value) then stands. So every error message and position stays
//! serde_json's.

use std::borrow::Cow;

use super::tree::{Json, Object};

/// Deepest nesting taken here; deeper documents go to serde_json, whose
/// limit (128) and error then apply.
const MAX_DEPTH: usize = 100;

/// Parses a whole document, or `None` if serde_json must decide.
pub(crate) fn parse(text: &str) -> Option<Json<'_>> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        at: 0,
        items: Vec::new(),
        entries: Vec::new(),
    };
    let v = p.value(0)?;
    p.skip_ws();
    (p.at == p.bytes.len()).then_some(v)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// Elements of the lists being read, innermost on top.
    items: Vec<Json<'a>>,
    /// Entries of the objects being read, innermost on top.
    entries: Vec<(Cow<'a, str>, Json<'a>)>,
}

impl<'a> Parser<'a> {
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.bytes.get(self.at).copied()
    }

    fn literal(&mut self, word: &[u8], v: Json<'a>) -> Option<Json<'a>> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end) == Some(word)).then(|| {
            self.at = end;
            v
        })
    }

    fn value(&mut self, depth: usize) -> Option<Json<'a>> {
        match self.peek()? {
            b'"' => self.string().map(Json::String),
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'n' => self.literal(b"null", Json::Null),
            b't' => self.literal(b"true", Json::Bool(true)),
            b'f' => self.literal(b"false", Json::Bool(false)),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn array(&mut self, depth: usize) -> Option<Json<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        let start = self.items.len();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(Json::Array(Vec::new()));
        }
        loop {
            let v = self.value(depth)?;
            self.items.push(v);
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(Json::Array(self.items.drain(start..).collect()));
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<Json<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        let start = self.entries.len();
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(Json::Object(Object::default()));
        }
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            let k = self.string()?;
            if self.peek()? != b':' {
                return None;
            }
            self.at += 1;
            let v = self.value(depth)?;
            self.entries.push((k, v));
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    let entries = self.entries.drain(start..).collect();
                    return Some(Json::Object(Object::from_entries(entries)));
                }
                _ => return None,
            }
        }
    }

    /// A string starting at the opening quote.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.at += 1;
        let start = self.at;
        loop {
            match *self.bytes.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(Cow::Borrowed(&self.text[start..self.at - 1]));
                }
                b'\\' => break,
                0..=0x1f => return None,
                _ => self.at += 1,
            }
        }
        let mut s = String::from(&self.text[start..self.at]);
        loop {
            let run = self.at;
            while let Some(&b) = self.bytes.get(self.at) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            s.push_str(&self.text[run..self.at]);
            match *self.bytes.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(Cow::Owned(s));
                }
                b'\\' => {
                    let c = self.escape()?;
                    s.push(c);
                }
                _ => return None,
            }
        }
    }

    /// One escape sequence starting at the backslash.
    fn escape(&mut self) -> Option<char> {
        let c = *self.bytes.get(self.at + 1)?;
        self.at += 2;
        Some(match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4()?;
                match hi {
                    0xD800..=0xDBFF => {
                        if self.bytes.get(self.at..self.at + 2) != Some(b"\\u") {
                            return None;
                        }
                        self.at += 2;
                        let lo = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return None;
                        }
                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?
                    }
                    0xDC00..=0xDFFF => return None,
                    _ => char::from_u32(hi)?,
                }
            }
            _ => return None,
        })
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.bytes.get(self.at..self.at + 4)?;
        let mut v = 0;
        for &d in digits {
            v = v * 16 + (d as char).to_digit(16)?;
        }
        self.at += 4;
        Some(v)
    }

    /// A number: plain non-negative integers are read here, anything else
    /// (sign, fraction, exponent, 20 digits or more) by serde_json from its
    /// slice of the text, so every value is the one serde_json gives.
    fn number(&mut self) -> Option<Json<'a>> {
        let start = self.at;
        let digits = |p: &mut Self| {
            let from = p.at;
            while p.bytes.get(p.at).is_some_and(u8::is_ascii_digit) {
                p.at += 1;
            }
            p.at - from
        };
        let negative = self.bytes[self.at] == b'-';
        if negative {
            self.at += 1;
        }
        let int_start = self.at;
        let n = digits(self);
        if n == 0 || (n > 1 && self.bytes[int_start] == b'0') {
            return None;
        }
        let mut plain = !negative && n <= 19;
        if self.bytes.get(self.at) == Some(&b'.') {
            self.at += 1;
            if digits(self) == 0 {
                return None;
            }
            plain = false;
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.at) {
                self.at += 1;
            }
            if digits(self) == 0 {
                return None;
            }
            plain = false;
        }
        let slice = &self.text[start..self.at];
        if plain {
            return slice.parse::<u64>().ok().map(|u| Json::Number(u.into()));
        }
        let n: serde_json::Number = serde_json::from_str(slice).ok()?;
        Some(Json::Number(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree serde_json's deserializer builds, for comparison.
    fn slow(text: &str) -> serde_json::Result<Json<'_>> {
        super::super::tree::parse_with_serde_json(text)
    }

    #[test]
    fn builds_the_same_tree_as_serde_json() {
        for text in [
            r#"{"a": [1, -2, 2.5, -0, 0, 1e3, 1E-2, -1.5e+7, 18446744073709551615, 18446744073709551616, -9223372036854775808, -9223372036854775809, 12345678901234567890123]}"#,
            r#"{"s": "plain", "e": "x\"y\\z\/\b\f\n\r\t", "u": "\u00e9\u20ac\ud83d\ude00", "ü": "ü"}"#,
            r#" [ true , false , null , { } , [ ] , "" ] "#,
            r#"{"k": 1, "k": 2, "j": {"k": 3}}"#,
            "0",
            "\"top\"",
        ] {
            let fast = parse(text).expect(text);
            assert_eq!(Ok(fast), slow(text).map_err(|e| e.to_string()), "{text}");
        }
    }

    #[test]
    fn gives_up_where_serde_json_refuses() {
        for text in [
            "",
            " ",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "{} x",
            "01",
            "-",
            "1.",
            "1e",
            "+1",
            ".5",
            "[1 2]",
            "{\"a\" 1}",
            "{1: 2}",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"\\x\"",
            "\"\\u12g4\"",
            "\"a\tb\"",
            "nul",
            "tru",
            "1e400",
            "[\"unterminated]",
        ] {
            assert!(parse(text).is_none(), "{text:?}");
            assert!(slow(text).is_err(), "{text:?}");
        }
    }

    /// Every shipped SDFG file, parsed both ways, gives equal trees.
    #[test]
    fn fixtures_parse_to_the_same_tree() {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "sdfg") {
                    out.push(p);
                }
            }
        }
        let mut files = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
            &mut files,
        );
        assert!(files.len() > 100, "only {} fixtures found", files.len());
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let fast = parse(&text);
            assert!(fast.is_some(), "{} left to serde_json", f.display());
            assert!(fast == slow(&text).ok(), "{} differs", f.display());
        }
    }

    #[test]
    fn deep_nesting_is_left_to_serde_json() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(parse(&deep).is_none());
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(parse(&ok).map(|j| j == slow(&ok).unwrap()), Some(true));
    }
}
