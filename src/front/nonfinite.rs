//! Python's JSON tokens for non-finite floats.
//!
//! DaCe saves SDFGs with Python's `json` module, which writes a float `inf`,
//! `-inf` or `nan` (a constant, an element of a constant array) as the bare
//! tokens `Infinity`, `-Infinity` and `NaN`, which are not JSON. Outside
//! strings they are rewritten to the strings `"inf"`, `"-inf"` and `"nan"`:
//! the spellings DaCe itself writes for numpy scalars, which every reader of
//! a number or a symbolic expression accepts.

use std::borrow::Cow;

/// `text` with the bare non-finite tokens outside strings quoted (borrowed
/// unchanged when it has none). `Infinity` and `-Infinity` keep their length,
/// so positions after them stay right.
pub fn quote_nonfinite(text: &str) -> Cow<'_, str> {
    if !text.contains("Infinity") && !text.contains("NaN") {
        return Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 16);
    let (mut i, mut copied) = (0, 0);
    let mut in_string = false;
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        let rest = &text[i..];
        let token = [
            ("-Infinity", "\"-inf\"   "),
            ("Infinity", "\"inf\"   "),
            ("NaN", "\"nan\""),
        ]
        .into_iter()
        .find(|(t, _)| {
            rest.starts_with(t)
                && !rest[t.len()..]
                    .bytes()
                    .next()
                    .is_some_and(|n| n.is_ascii_alphanumeric() || n == b'_')
        });
        match token {
            Some((t, with)) => {
                out.push_str(&text[copied..i]);
                out.push_str(with);
                i += t.len();
                copied = i;
            }
            None => i += 1,
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_tokens_are_quoted_outside_strings_only() {
        let text = r#"{"a": [NaN, -Infinity, 1.0, Infinity], "s": "NaN Infinity \" NaN", "NaN": -Infinity}"#;
        assert_eq!(
            quote_nonfinite(text),
            r#"{"a": ["nan", "-inf"   , 1.0, "inf"   ], "s": "NaN Infinity \" NaN", "NaN": "-inf"   }"#
        );
        let plain = r#"{"label": "Infinity loop", "x": 1}"#;
        assert!(matches!(quote_nonfinite(plain), Cow::Borrowed(_)));
    }
}
