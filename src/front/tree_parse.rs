//! A direct JSON parser into [`Json`], for well-formed documents.
//!
//! It reads the bytes once, slices strings without escapes out of the text
//! and collects lists and objects on shared buffers, without the visitor
//! calls of serde_json's deserializer. It
//! accepts exactly what serde_json accepts and builds the same values; on
//! anything it does not take (any syntax error, a lone surrogate, a number
//! out of range, nesting deeper than [`MAX_DEPTH`]) it gives up, and
//! [`Json::parse`] parses the text again with serde_json, whose error (or
//! value) then stands. So every error message and position stays
//! serde_json's.
//!
//! A large document is parsed by two threads: the second starts near the
//! middle of the text and parses every complete list and object it finds
//! from there on (see [`fragments`]); the first parses from the start and,
//! wherever it is about to read a value at the offset where the second
//! thread read one, takes that value instead of reading it again. A value
//! read from a given offset is the same whoever reads it, so the tree is the
//! one a single thread builds, whatever the second thread guessed.

use std::borrow::Cow;
use std::thread::ScopedJoinHandle;

use super::tree::{Json, Object};

/// Deepest nesting taken here; deeper documents go to serde_json, whose
/// limit (128) and error then apply.
const MAX_DEPTH: usize = 100;

/// Documents at least this long are parsed by two threads.
const PARALLEL_BYTES: usize = 4 << 20;

/// Parses a whole document, or `None` if serde_json must decide.
pub(crate) fn parse(text: &str) -> Option<Json<'_>> {
    let parallel = text.len() >= PARALLEL_BYTES
        && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    if !parallel {
        return Parser::new(text).document();
    }
    parse_in_two(text, split_point(text))
}

/// Parses with a second thread that starts at byte `from`.
fn parse_in_two(text: &str, from: usize) -> Option<Json<'_>> {
    std::thread::scope(|s| {
        let second = s.spawn(move || fragments(text, from));
        let mut p = Parser::new(text);
        p.split = Some(Split {
            from,
            second: Some(second),
            found: Vec::new(),
            next: 0,
        });
        p.document()
    })
}

/// Where the second thread starts: the first `,` followed by `{` (a new
/// element of a list of objects, such as a state's nodes) after the middle
/// of the text. Any offset gives the same tree; a good one saves time.
fn split_point(text: &str) -> usize {
    let b = text.as_bytes();
    let mut i = b.len() / 2;
    while i < b.len() {
        if b[i] == b',' {
            let mut j = i + 1;
            while j < b.len() && matches!(b[j], b' ' | b'\n' | b'\t' | b'\r') {
                j += 1;
            }
            if b.get(j) == Some(&b'{') {
                return j;
            }
        }
        i += 1;
    }
    b.len()
}

/// A list or object read by the second thread: its offsets, the deepest
/// nesting inside it (1 for a flat list) and its value.
struct Fragment<'a> {
    start: usize,
    end: usize,
    depth: usize,
    value: Json<'a>,
}

/// The second thread: from `from` to the end of the text, every list and
/// object that starts outside any other it has read, in text order. It does
/// not know what surrounds `from`, so it steps over keys, separators and
/// closing brackets, and over anything it cannot read (it may have started
/// inside a string), resuming where the failed read stopped, so that it
/// reads every byte about once whatever the text.
fn fragments(text: &str, from: usize) -> Vec<Fragment<'_>> {
    let mut p = Parser::new(text);
    p.at = from;
    let mut found = Vec::new();
    while let Some(c) = p.peek() {
        let start = p.at;
        match c {
            b'{' | b'[' => {
                p.deepest = 0;
                match p.value(0) {
                    Some(value) => found.push(Fragment {
                        start,
                        end: p.at,
                        depth: p.deepest,
                        value,
                    }),
                    None => {
                        p.items.clear();
                        p.entries.clear();
                        p.at = p.at.max(start + 1);
                    }
                }
            }
            b'"' => {
                if p.string().is_none() {
                    p.at = p.at.max(start + 1);
                }
            }
            _ => p.at += 1,
        }
    }
    found
}

/// The first thread's view of the second one's work.
struct Split<'s, 'a> {
    /// Where the second thread started.
    from: usize,
    /// The second thread, until joined.
    second: Option<ScopedJoinHandle<'s, Vec<Fragment<'a>>>>,
    /// Its fragments, in text order, once joined (taken ones left as `null`).
    found: Vec<Fragment<'a>>,
    /// The first fragment not yet passed.
    next: usize,
}

struct Parser<'s, 'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// Elements of the lists being read, innermost on top.
    items: Vec<Json<'a>>,
    /// Entries of the objects being read, innermost on top.
    entries: Vec<(Cow<'a, str>, Json<'a>)>,
    /// The deepest list or object level reached.
    deepest: usize,
    /// The second thread's fragments, when two threads parse.
    split: Option<Split<'s, 'a>>,
}

impl<'s, 'a> Parser<'s, 'a> {
    fn new(text: &'a str) -> Self {
        Parser {
            text,
            bytes: text.as_bytes(),
            at: 0,
            items: Vec::new(),
            entries: Vec::new(),
            deepest: 0,
            split: None,
        }
    }

    /// The whole text as one value.
    fn document(&mut self) -> Option<Json<'a>> {
        let v = self.value(0)?;
        self.skip_ws();
        (self.at == self.bytes.len()).then_some(v)
    }

    /// The value the second thread read at the current offset, if any and
    /// if it fits under [`MAX_DEPTH`] at `depth`.
    fn prepared(&mut self, depth: usize) -> Option<Json<'a>> {
        let split = self.split.as_mut()?;
        if self.at < split.from {
            return None;
        }
        if let Some(second) = split.second.take() {
            split.found = second.join().unwrap_or_default();
        }
        while split
            .found
            .get(split.next)
            .is_some_and(|f| f.start < self.at)
        {
            split.next += 1;
        }
        let f = split.found.get_mut(split.next)?;
        if f.start != self.at || depth + f.depth > MAX_DEPTH {
            return None;
        }
        split.next += 1;
        self.at = f.end;
        Some(std::mem::replace(&mut f.value, Json::Null))
    }

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
        let c = self.peek()?;
        if self.split.is_some()
            && matches!(c, b'{' | b'[')
            && let Some(v) = self.prepared(depth)
        {
            return Some(v);
        }
        match c {
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
        self.deepest = self.deepest.max(depth);
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
        self.deepest = self.deepest.max(depth);
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

    /// Two threads give the tree one thread gives, wherever the second
    /// starts (between tokens, inside strings, inside numbers).
    #[test]
    fn two_threads_build_the_same_tree() {
        let mut texts: Vec<String> = Vec::new();
        for rel in [
            "fixtures/corpus/control_flow_regions/program.sdfg",
            "fixtures/corpus/nested_program/program.v2.sdfg",
            "fixtures/gt4py/vertical_integral_scans/gpu.sdfg",
        ] {
            let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
            texts.push(std::fs::read_to_string(p).unwrap());
        }
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        texts.push(format!(
            "[{}, {}, \"[{{,\", {{\"a\": {}}}]",
            deep(MAX_DEPTH - 1),
            deep(3),
            deep(MAX_DEPTH - 2)
        ));
        texts.push(format!("[1, {}]", deep(MAX_DEPTH)));
        // A long string full of what looks like JSON, where the second
        // thread starts inside the string.
        let bait = "[{\\\"a\\\": [1, {\\\"b\\\": ".repeat(20_000);
        texts.push(format!(
            "{{\"s\": \"{bait}\", \"t\": [{{\"u\": 1}}, {{\"v\": 2}}]}}"
        ));
        for text in &texts {
            let one = Parser::new(text).document();
            let n = text.len();
            let mut starts: Vec<usize> = (0..40).map(|k| k * n / 40).collect();
            starts.extend([split_point(text), n]);
            for from in starts {
                assert!(parse_in_two(text, from) == one, "split at {from} of {n}");
            }
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
