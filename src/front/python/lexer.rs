//! Tokenizer for the Python subset DaCe writes.
//!
//! Newlines inside brackets and after a `\` continuation are dropped (Python's
//! implicit line joining). Indentation becomes `Indent` / `Dedent` tokens as
//! in Python, measured from the first line's indentation (so code indented
//! as a whole still reads as top level).

use crate::ir::expr::BinaryOp;

use super::parser::PyError;

/// One token with its 1-based source position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Token<'a> {
    /// What the token is.
    pub kind: Tok<'a>,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in bytes).
    pub col: usize,
}

/// Token kinds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Tok<'a> {
    /// An identifier or keyword (a leading `$` already stripped).
    Name(&'a str),
    /// An integer literal (range-checked against `i64` by the parser, so that
    /// `-9223372036854775808` can be folded).
    Int(u64),
    /// A floating-point literal.
    Float(f64),
    /// A string literal (unsupported in code; kept so the parser can name
    /// it): its text between the quotes when it has no prefix and no escape
    /// (`symbol('x', ...)` names a symbol with it), else empty.
    Str(&'a str),
    /// DaCe 2's type suffix of the numeric literal just before it (`5i64`,
    /// `0.5f32`: a typed constant), as written.
    Suffix(&'a str),
    /// An imaginary literal (`2j`, `1.5e3J`): its imaginary part.
    Imag(f64),
    /// Punctuation or an operator.
    Punct(Punct),
    /// End of a logical line.
    Newline,
    /// The next logical line is indented deeper than the one before.
    Indent,
    /// One indentation level ends.
    Dedent,
    /// End of input.
    Eof,
}

/// Punctuation and operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Punct {
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Dot,
    Colon,
    Semi,
    Assign,
    Walrus,
    Arrow,
    Plus,
    Minus,
    Star,
    DStar,
    Slash,
    DSlash,
    Percent,
    At,
    Tilde,
    Amp,
    Pipe,
    Caret,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `+=`, `//=`, ... with the operator.
    AugAssign(BinaryOp),
}

impl Punct {
    /// The source text of the token, for error messages.
    pub fn text(self) -> &'static str {
        use Punct::*;
        match self {
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            LBrace => "{",
            RBrace => "}",
            Comma => ",",
            Dot => ".",
            Colon => ":",
            Semi => ";",
            Assign => "=",
            Walrus => ":=",
            Arrow => "->",
            Plus => "+",
            Minus => "-",
            Star => "*",
            DStar => "**",
            Slash => "/",
            DSlash => "//",
            Percent => "%",
            At => "@",
            Tilde => "~",
            Amp => "&",
            Pipe => "|",
            Caret => "^",
            Shl => "<<",
            Shr => ">>",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            AugAssign(op) => match op {
                BinaryOp::Add => "+=",
                BinaryOp::Sub => "-=",
                BinaryOp::Mul => "*=",
                BinaryOp::Div => "/=",
                BinaryOp::FloorDiv => "//=",
                BinaryOp::Mod => "%=",
                BinaryOp::Pow => "**=",
                BinaryOp::BitAnd => "&=",
                BinaryOp::BitOr => "|=",
                BinaryOp::BitXor => "^=",
                BinaryOp::Shl => "<<=",
                BinaryOp::Shr => ">>=",
                _ => "?=",
            },
        }
    }
}

impl std::fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tok::Name(n) => write!(f, "'{n}'"),
            Tok::Int(v) => write!(f, "'{v}'"),
            Tok::Float(v) => write!(f, "'{v:?}'"),
            Tok::Str(_) => f.write_str("string literal"),
            Tok::Suffix(s) => write!(f, "type suffix '{s}'"),
            Tok::Imag(v) => write!(f, "'{v:?}j'"),
            Tok::Punct(p) => write!(f, "'{}'", p.text()),
            Tok::Newline => f.write_str("end of line"),
            Tok::Indent => f.write_str("indent"),
            Tok::Dedent => f.write_str("dedent"),
            Tok::Eof => f.write_str("end of input"),
        }
    }
}

/// Splits `src` into tokens, always ending with `Newline` (if the last line
/// had content) and `Eof`.
pub(crate) fn tokenize(src: &str) -> Result<Vec<Token<'_>>, PyError> {
    let b = src.as_bytes();
    let mut toks = Vec::with_capacity(src.len() / 2 + 2);
    let (mut i, mut line, mut line_start, mut depth) = (0usize, 1usize, 0usize, 0usize);
    let err = |line: usize, col: usize, message: String| PyError { line, col, message };
    // Indentation widths of the open blocks; the first line sets the base.
    let mut indents: Vec<usize> = Vec::new();
    while i < b.len() {
        let c = b[i];
        let col = i - line_start + 1;
        let start = i;
        let first_on_line = depth == 0
            && !matches!(c, b' ' | b'\t' | b'\x0c' | b'\r' | b'\n' | b'#' | b'\\')
            && matches!(
                toks.last(),
                None | Some(Token {
                    kind: Tok::Newline,
                    ..
                })
            );
        if first_on_line {
            let width = indent_width(&b[line_start..i]);
            match indents.last().copied() {
                None => indents.push(width),
                Some(top) if width > top => {
                    indents.push(width);
                    toks.push(Token {
                        kind: Tok::Indent,
                        line,
                        col,
                    });
                }
                Some(top) if width < top => {
                    while indents.last().is_some_and(|&t| t > width) {
                        indents.pop();
                        toks.push(Token {
                            kind: Tok::Dedent,
                            line,
                            col,
                        });
                    }
                    if indents.last() != Some(&width) {
                        return Err(err(
                            line,
                            col,
                            "unindent does not match any outer indentation level".into(),
                        ));
                    }
                }
                Some(_) => {}
            }
        }
        let kind = match c {
            b' ' | b'\t' | b'\x0c' | b'\r' => {
                i += 1;
                continue;
            }
            b'\n' => {
                i += 1;
                let at_line_start = matches!(
                    toks.last(),
                    None | Some(Token {
                        kind: Tok::Newline | Tok::Dedent,
                        ..
                    })
                );
                let (l, cl) = (line, col);
                line += 1;
                line_start = i;
                if depth > 0 || at_line_start {
                    continue;
                }
                toks.push(Token {
                    kind: Tok::Newline,
                    line: l,
                    col: cl,
                });
                continue;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\\' => {
                let mut j = i + 1;
                if j < b.len() && b[j] == b'\r' {
                    j += 1;
                }
                if j < b.len() && b[j] == b'\n' {
                    i = j + 1;
                    line += 1;
                    line_start = i;
                    continue;
                }
                return Err(err(line, col, "unexpected character '\\'".into()));
            }
            b'0'..=b'9' | b'.' if c != b'.' || (i + 1 < b.len() && b[i + 1].is_ascii_digit()) => {
                let num = lex_number(b, &mut i).map_err(|m| err(line, col, m))?;
                let s = i;
                if let Some(len) = literal_suffix(&b[i..]) {
                    toks.push(Token {
                        kind: num,
                        line,
                        col,
                    });
                    i += len;
                    Tok::Suffix(&src[s..i])
                } else if i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric()) {
                    return Err(err(line, col, "invalid number literal".into()));
                } else {
                    num
                }
            }
            b'\'' | b'"' => {
                skip_string(b, &mut i).map_err(|m| err(line, col, m))?;
                Tok::Str(&src[start..i])
            }
            b'$' | b'?' if src[i..].starts_with("$?") || c == b'?' => {
                return Err(err(
                    line,
                    col,
                    "unsupported: DaCe's undefined symbol '?' (a size or index DaCe could not determine)"
                        .into(),
                ));
            }
            b'$' => {
                i += 1;
                let s = i;
                lex_ident(src, &mut i);
                if s == i {
                    return Err(err(line, col, "expected a name after '$'".into()));
                }
                Tok::Name(&src[s..i])
            }
            c if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 => {
                lex_ident(src, &mut i);
                if i == start {
                    let ch = src[start..].chars().next().unwrap_or('?');
                    return Err(err(line, col, format!("unexpected character '{ch}'")));
                }
                let name = &src[start..i];
                // String prefixes (r"...", b'...', f"...").
                if i < b.len()
                    && (b[i] == b'"' || b[i] == b'\'')
                    && name.len() <= 2
                    && name.chars().all(|c| "rRbBfFuU".contains(c))
                {
                    skip_string(b, &mut i).map_err(|m| err(line, col, m))?;
                    Tok::Str(&src[start..i])
                } else {
                    Tok::Name(name)
                }
            }
            _ => {
                let (p, len) = lex_punct(&b[i..]).ok_or_else(|| {
                    let ch = src[i..].chars().next().unwrap_or('?');
                    err(line, col, format!("unexpected character '{ch}'"))
                })?;
                i += len;
                match p {
                    Punct::LParen | Punct::LBracket | Punct::LBrace => depth += 1,
                    Punct::RParen | Punct::RBracket | Punct::RBrace => {
                        depth = depth.saturating_sub(1)
                    }
                    _ => {}
                }
                Tok::Punct(p)
            }
        };
        toks.push(Token { kind, line, col });
    }
    let col = b.len() - line_start + 1;
    if !matches!(
        toks.last(),
        None | Some(Token {
            kind: Tok::Newline,
            ..
        })
    ) {
        toks.push(Token {
            kind: Tok::Newline,
            line,
            col,
        });
    }
    for _ in 1..indents.len() {
        toks.push(Token {
            kind: Tok::Dedent,
            line,
            col,
        });
    }
    toks.push(Token {
        kind: Tok::Eof,
        line,
        col,
    });
    Ok(toks)
}

/// Width of a line's leading whitespace (a tab advances to the next multiple of 8, as in Python).
fn indent_width(ws: &[u8]) -> usize {
    ws.iter().fold(0, |w, &c| match c {
        b'\t' => (w / 8 + 1) * 8,
        b' ' => w + 1,
        _ => 0,
    })
}

fn lex_ident(src: &str, i: &mut usize) {
    for (off, ch) in src[*i..].char_indices() {
        let ok = ch == '_' || ch.is_alphanumeric();
        let first = off == 0;
        if !ok || (first && ch.is_ascii_digit()) {
            *i += off;
            return;
        }
    }
    *i = src.len();
}

fn lex_number<'a>(b: &[u8], i: &mut usize) -> Result<Tok<'a>, String> {
    let start = *i;
    let digits = |i: &mut usize, pred: fn(u8) -> bool| {
        while *i < b.len() && (pred(b[*i]) || b[*i] == b'_') {
            *i += 1;
        }
    };
    let radix = match b.get(start..start + 2) {
        Some([b'0', b'x' | b'X']) => 16,
        Some([b'0', b'o' | b'O']) => 8,
        Some([b'0', b'b' | b'B']) => 2,
        _ => 10,
    };
    let mut is_float = false;
    if radix != 10 {
        *i += 2;
        digits(i, |c| c.is_ascii_hexdigit());
    } else {
        digits(i, |c| c.is_ascii_digit());
        if *i < b.len() && b[*i] == b'.' {
            is_float = true;
            *i += 1;
            digits(i, |c| c.is_ascii_digit());
        }
        if *i < b.len() && (b[*i] == b'e' || b[*i] == b'E') {
            let mut j = *i + 1;
            if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                j += 1;
            }
            if j < b.len() && b[j].is_ascii_digit() {
                is_float = true;
                *i = j;
                digits(i, |c| c.is_ascii_digit());
            }
        }
    }
    let imaginary = radix == 10 && *i < b.len() && (b[*i] == b'j' || b[*i] == b'J');
    if imaginary {
        *i += 1;
    }
    // The text is ASCII by construction.
    let text = std::str::from_utf8(&b[start..*i]).unwrap_or("");
    let owned;
    let text = if text.contains('_') {
        owned = text.replace('_', "");
        owned.as_str()
    } else {
        text
    };
    if imaginary {
        let text = &text[..text.len() - 1];
        return text
            .parse::<f64>()
            .map(Tok::Imag)
            .map_err(|_| format!("invalid imaginary literal '{text}j'"));
    }
    if is_float {
        return text
            .parse::<f64>()
            .map(Tok::Float)
            .map_err(|_| format!("invalid float literal '{text}'"));
    }
    let body = if radix == 10 { text } else { &text[2..] };
    u64::from_str_radix(body, radix)
        .map(Tok::Int)
        .map_err(|e| match e.kind() {
            std::num::IntErrorKind::PosOverflow => format!("integer literal '{text}' out of range"),
            _ => format!("invalid integer literal '{text}'"),
        })
}

/// The length of DaCe 2's type suffix at the start of `rest` (`i64`, `f32`,
/// ...: `dtypes.TYPECLASS_TO_LITERAL_SUFFIX`), if one is there and ends the word.
fn literal_suffix(rest: &[u8]) -> Option<usize> {
    const SUFFIXES: [&str; 14] = [
        "e4m3fn", "e5m2", "bf16", "i16", "i32", "i64", "u16", "u32", "u64", "f16", "f32", "f64",
        "i8", "u8",
    ];
    SUFFIXES.iter().map(|s| s.len()).find(|&n| {
        rest.len() >= n
            && SUFFIXES.contains(&std::str::from_utf8(&rest[..n]).unwrap_or(""))
            && !rest
                .get(n)
                .is_some_and(|c| *c == b'_' || c.is_ascii_alphanumeric())
    })
}

/// The value of a string literal token (its source, prefix and quotes
/// included) with Python's escapes decoded. f-strings (DaCe's frontend
/// evaluates them before they reach a tasklet) and bytes are refused.
pub(crate) fn string_value(raw: &str) -> Result<String, String> {
    let q = raw.find(['\'', '"']).ok_or("not a string literal")?;
    let prefix = raw[..q].to_ascii_lowercase();
    if prefix.contains('f') {
        return Err("unsupported Python construct f-string".into());
    }
    if prefix.contains('b') {
        return Err("unsupported Python construct bytes literal".into());
    }
    let body = &raw[q..];
    let n = if body.len() >= 6 && (body.starts_with("'''") || body.starts_with("\"\"\"")) {
        3
    } else {
        1
    };
    let inner = &body[n..body.len() - n];
    if prefix.contains('r') {
        return Ok(inner.to_string());
    }
    let mut out = String::with_capacity(inner.len());
    let mut it = inner.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = it.next() else {
            out.push('\\');
            break;
        };
        let mut hex = |k: usize| -> Result<char, String> {
            let mut v = 0u32;
            for _ in 0..k {
                let d = it
                    .next()
                    .and_then(|h| h.to_digit(16))
                    .ok_or("truncated \\x, \\u or \\U escape in a string literal")?;
                v = v * 16 + d;
            }
            char::from_u32(v).ok_or_else(|| "invalid character escape in a string literal".into())
        };
        match e {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(e),
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            'x' => out.push(hex(2)?),
            'u' => out.push(hex(4)?),
            'U' => out.push(hex(8)?),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match it.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            it.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v).ok_or("invalid octal escape in a string literal")?);
            }
            'N' => return Err("unsupported \\N{...} escape in a string literal".into()),
            // Python keeps an unknown escape as it is.
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Ok(out)
}

fn skip_string(b: &[u8], i: &mut usize) -> Result<(), String> {
    let q = b[*i];
    let triple = b.len() >= *i + 3 && b[*i + 1] == q && b[*i + 2] == q;
    *i += if triple { 3 } else { 1 };
    while *i < b.len() {
        let c = b[*i];
        if c == b'\\' {
            *i += 2;
            continue;
        }
        if c == q {
            if !triple {
                *i += 1;
                return Ok(());
            }
            if b.len() >= *i + 3 && b[*i + 1] == q && b[*i + 2] == q {
                *i += 3;
                return Ok(());
            }
        } else if c == b'\n' && !triple {
            break;
        }
        *i += 1;
    }
    Err("unterminated string literal".into())
}

fn lex_punct(b: &[u8]) -> Option<(Punct, usize)> {
    use Punct::*;
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    let aug = |op| Some((AugAssign(op), 2));
    let (c0, c1, c2) = (at(0), at(1), at(2));
    match (c0, c1) {
        (b'*', b'*') if c2 == b'=' => Some((AugAssign(BinaryOp::Pow), 3)),
        (b'/', b'/') if c2 == b'=' => Some((AugAssign(BinaryOp::FloorDiv), 3)),
        (b'<', b'<') if c2 == b'=' => Some((AugAssign(BinaryOp::Shl), 3)),
        (b'>', b'>') if c2 == b'=' => Some((AugAssign(BinaryOp::Shr), 3)),
        (b'*', b'*') => Some((DStar, 2)),
        (b'/', b'/') => Some((DSlash, 2)),
        (b'<', b'<') => Some((Shl, 2)),
        (b'>', b'>') => Some((Shr, 2)),
        (b'=', b'=') => Some((Eq, 2)),
        (b'!', b'=') => Some((Ne, 2)),
        (b'<', b'=') => Some((Le, 2)),
        (b'>', b'=') => Some((Ge, 2)),
        (b':', b'=') => Some((Walrus, 2)),
        (b'-', b'>') => Some((Arrow, 2)),
        (b'+', b'=') => aug(BinaryOp::Add),
        (b'-', b'=') => aug(BinaryOp::Sub),
        (b'*', b'=') => aug(BinaryOp::Mul),
        (b'/', b'=') => aug(BinaryOp::Div),
        (b'%', b'=') => aug(BinaryOp::Mod),
        (b'&', b'=') => aug(BinaryOp::BitAnd),
        (b'|', b'=') => aug(BinaryOp::BitOr),
        (b'^', b'=') => aug(BinaryOp::BitXor),
        _ => Some((
            match c0 {
                b'(' => LParen,
                b')' => RParen,
                b'[' => LBracket,
                b']' => RBracket,
                b'{' => LBrace,
                b'}' => RBrace,
                b',' => Comma,
                b'.' => Dot,
                b':' => Colon,
                b';' => Semi,
                b'=' => Assign,
                b'+' => Plus,
                b'-' => Minus,
                b'*' => Star,
                b'/' => Slash,
                b'%' => Percent,
                b'@' => At,
                b'~' => Tilde,
                b'&' => Amp,
                b'|' => Pipe,
                b'^' => Caret,
                b'<' => Lt,
                b'>' => Gt,
                _ => return None,
            },
            1,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok<'_>> {
        tokenize(s).unwrap().into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn numbers() {
        assert_eq!(kinds("0x1F")[0], Tok::Int(31));
        assert_eq!(kinds("1_000")[0], Tok::Int(1000));
        assert_eq!(kinds(".5")[0], Tok::Float(0.5));
        assert_eq!(kinds("2.")[0], Tok::Float(2.0));
        assert_eq!(kinds("1e+300")[0], Tok::Float(1e300));
        assert_eq!(kinds("1.7976931348623157e+308")[0], Tok::Float(f64::MAX));
        assert_eq!(kinds("9223372036854775808")[0], Tok::Int(1 << 63));
        assert!(tokenize("99999999999999999999").is_err());
        assert!(matches!(tokenize("1j").unwrap()[0].kind, Tok::Imag(v) if v == 1.0));
        assert!(matches!(tokenize("2.5J").unwrap()[0].kind, Tok::Imag(v) if v == 2.5));
        assert!(tokenize("1jx").is_err());
    }

    #[test]
    fn names_ops_and_lines() {
        assert_eq!(
            kinds("$N //= a\n"),
            vec![
                Tok::Name("N"),
                Tok::Punct(Punct::AugAssign(BinaryOp::FloorDiv)),
                Tok::Name("a"),
                Tok::Newline,
                Tok::Eof
            ]
        );
        // Newlines inside brackets, comments, blank lines and continuations vanish.
        assert_eq!(
            kinds("\n# c\nf(a,\n b) \\\n + 1 # x\n\n").len(),
            10 // f ( a , b ) + 1 NEWLINE EOF
        );
        let t = tokenize("a\n  b ** c").unwrap();
        assert_eq!(t[2].kind, Tok::Indent);
        assert_eq!((t[3].line, t[3].col), (2, 3));
        assert_eq!((t[4].line, t[4].col), (2, 5));
        assert_eq!(t[4].kind, Tok::Punct(Punct::DStar));
        assert_eq!(kinds("r'x'")[0], Tok::Str("r'x'"));
        assert_eq!(kinds("'x'")[0], Tok::Str("'x'"));
        assert_eq!(string_value("'x'").as_deref(), Ok("x"));
        assert_eq!(string_value("\"a\\tb\\n\"").as_deref(), Ok("a\tb\n"));
        assert_eq!(string_value("r'a\\n'").as_deref(), Ok("a\\n"));
        assert_eq!(
            string_value("'\\x41\\101\\u00e9\\q'").as_deref(),
            Ok("AA\u{e9}\\q")
        );
        assert_eq!(string_value("'''a\"b'''").as_deref(), Ok("a\"b"));
        assert_eq!(string_value("'it\\'s'").as_deref(), Ok("it's"));
        assert!(string_value("f'{x}'").is_err());
        assert!(string_value("b'x'").is_err());
        assert_eq!(kinds("5i64")[..2], [Tok::Int(5), Tok::Suffix("i64")]);
        assert_eq!(kinds("0.5f32")[..2], [Tok::Float(0.5), Tok::Suffix("f32")]);
        assert_eq!(
            kinds("1e-3f16")[..2],
            [Tok::Float(1e-3), Tok::Suffix("f16")]
        );
        assert!(tokenize("a ? b").is_err());
    }

    #[test]
    fn indentation() {
        use Tok::*;
        assert_eq!(
            kinds("if a:\n    b\n    if c:\n\n\t d\ne"),
            vec![
                Name("if"),
                Name("a"),
                Punct(super::Punct::Colon),
                Newline,
                Indent,
                Name("b"),
                Newline,
                Name("if"),
                Name("c"),
                Punct(super::Punct::Colon),
                Newline,
                Indent,
                Name("d"),
                Newline,
                Dedent,
                Dedent,
                Name("e"),
                Newline,
                Eof
            ]
        );
        // Code indented as a whole, and blocks open at the end.
        assert_eq!(kinds("  a\n  b"), kinds("a\nb"));
        assert_eq!(
            kinds("if a:\n  b # c\n# d"),
            vec![
                Name("if"),
                Name("a"),
                Punct(super::Punct::Colon),
                Newline,
                Indent,
                Name("b"),
                Newline,
                Dedent,
                Eof
            ]
        );
        let e = tokenize("if a:\n    b\n  c").unwrap_err();
        assert!(e.message.contains("unindent"), "{e}");
        assert_eq!((e.line, e.col), (3, 3));
    }
}
