//! A JSON document as a tree that borrows its strings from the text.
//!
//! serde_json parses the text (so its syntax errors, positions and nesting
//! limit are unchanged), but instead of `serde_json::Value`, whose every
//! string and object key is an owned `String` and whose objects are
//! `IndexMap`s, the tree keeps `&str` slices of the text (owned only when
//! the JSON string has escapes) and objects as vectors of entries. Keys keep
//! the semantics of serde_json's `preserve_order` map: document order, and
//! a repeated key keeps its first position and its last value.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

/// One JSON value; strings borrow from the text when they have no escapes.
#[derive(Clone, Debug, PartialEq)]
pub enum Json<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as serde_json reads it (u64, i64 or f64).
    Number(Number),
    /// A string.
    String(Cow<'a, str>),
    /// A list.
    Array(Vec<Json<'a>>),
    /// An object.
    Object(Object<'a>),
}

/// A JSON object: its entries in document order, keys unique.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Object<'a> {
    entries: Vec<(Cow<'a, str>, Json<'a>)>,
}

/// Objects up to this size are checked for repeated keys by comparing
/// every pair; larger ones through a hash map.
const SMALL_OBJECT: usize = 16;

/// A 6-bit digest of a key (length, first and last byte): equal keys have
/// equal fingerprints.
fn fingerprint(k: &str) -> u32 {
    let b = k.as_bytes();
    let (first, last) = (b.first().copied(), b.last().copied());
    let h = (b.len() as u32)
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add(u32::from(first.unwrap_or(0)).wrapping_mul(0x85EB_CA6B))
        .wrapping_add(u32::from(last.unwrap_or(0)).wrapping_mul(0xC2B2_AE35));
    h >> 26
}

impl<'a> Object<'a> {
    /// Builds an object from entries in document order, resolving repeated
    /// keys as serde_json's ordered map does.
    pub(crate) fn from_entries(mut entries: Vec<(Cow<'a, str>, Json<'a>)>) -> Object<'a> {
        let repeated = if entries.len() <= SMALL_OBJECT {
            // Keys with distinct fingerprints differ; only a repeated
            // fingerprint needs the pairwise comparison.
            let mut seen = 0u64;
            let clash = entries.iter().any(|(k, _)| {
                let bit = 1u64 << fingerprint(k);
                let again = seen & bit != 0;
                seen |= bit;
                again
            });
            clash
                && (1..entries.len()).any(|i| entries[..i].iter().any(|(k, _)| *k == entries[i].0))
        } else {
            let mut seen = std::collections::HashSet::with_capacity(entries.len());
            !entries.iter().all(|(k, _)| seen.insert(k.as_ref()))
        };
        if repeated {
            let mut first: HashMap<Cow<'a, str>, usize> = HashMap::new();
            let mut unique: Vec<(Cow<'a, str>, Json<'a>)> = Vec::new();
            for (k, v) in entries.drain(..) {
                match first.get(&k) {
                    Some(&i) => unique[i].1 = v,
                    None => {
                        first.insert(k.clone(), unique.len());
                        unique.push((k, v));
                    }
                }
            }
            entries = unique;
        }
        Object { entries }
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The value of `key` for changing it in place, if present.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json<'a>> {
        self.entries
            .iter_mut()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The entries in document order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Json<'a>)> {
        self.entries.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// The entries in document order, values mutable.
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = (&str, &mut Json<'a>)> {
        self.entries.iter_mut().map(|(k, v)| (&**k, v))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the object has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<'a> Json<'a> {
    /// Parses a document; errors are serde_json's. Well-formed documents
    /// take the direct parser ([`super::tree_parse`]); anything it leaves
    /// is parsed again through serde_json.
    pub fn parse(text: &'a str) -> serde_json::Result<Json<'a>> {
        match super::tree_parse::parse(text) {
            Some(v) => Ok(v),
            None => parse_with_serde_json(text),
        }
    }
}

/// Parses a document through serde_json's deserializer.
pub(crate) fn parse_with_serde_json(text: &str) -> serde_json::Result<Json<'_>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let mut bufs = Bufs {
        items: Vec::new(),
        entries: Vec::new(),
    };
    let value = de::DeserializeSeed::deserialize(TreeSeed { bufs: &mut bufs }, &mut de)?;
    de.end()?;
    Ok(value)
}

impl<'a> Json<'a> {
    /// The member `key` of an object; `None` for a missing key or a non-object.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Object(o) => o.get(key),
            _ => None,
        }
    }

    /// The member `key` of an object for changing it in place; `None` for a
    /// missing key or a non-object.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json<'a>> {
        match self {
            Json::Object(o) => o.get_mut(key),
            _ => None,
        }
    }

    /// Replaces this value with `null` and frees what it held, so that
    /// later allocations can reuse the memory of a subtree already read.
    pub fn discard(&mut self) {
        *self = Json::Null;
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// The elements, if this is a list.
    pub fn as_array(&self) -> Option<&[Json<'a>]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The elements, if this is a list, for changing them in place.
    pub fn as_array_mut(&mut self) -> Option<&mut [Json<'a>]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The object, if this is one, for changing it in place.
    pub fn as_object_mut(&mut self) -> Option<&mut Object<'a>> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// Whether this is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Json::Object(_))
    }

    /// What serde reports for this value in an "invalid type" error (the
    /// same as for a `serde_json::Value`).
    pub fn unexpected(&self) -> de::Unexpected<'_> {
        match self {
            Json::Null => de::Unexpected::Unit,
            Json::Bool(b) => de::Unexpected::Bool(*b),
            Json::Number(n) => {
                if let Some(u) = n.as_u64() {
                    de::Unexpected::Unsigned(u)
                } else if let Some(i) = n.as_i64() {
                    de::Unexpected::Signed(i)
                } else {
                    de::Unexpected::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Json::String(s) => de::Unexpected::Str(s),
            Json::Array(_) => de::Unexpected::Seq,
            Json::Object(_) => de::Unexpected::Map,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Json<'a> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Json<'a>, D::Error> {
        let mut bufs = Bufs {
            items: Vec::new(),
            entries: Vec::new(),
        };
        de::DeserializeSeed::deserialize(TreeSeed { bufs: &mut bufs }, d)
    }
}

/// Buffers shared by every list and object of one parse: elements are
/// collected on top of them and moved out into one allocation of the final
/// size (instead of a vector per value that grows by doubling). A nested
/// value is complete, and its elements moved out, before its parent's next
/// element is pushed, so one pair of buffers serves all levels.
struct Bufs<'a> {
    items: Vec<Json<'a>>,
    entries: Vec<(Cow<'a, str>, Json<'a>)>,
}

/// Reads one value into the tree, using the shared buffers.
struct TreeSeed<'s, 'a> {
    bufs: &'s mut Bufs<'a>,
}

impl<'de: 'a, 'a> de::DeserializeSeed<'de> for TreeSeed<'_, 'a> {
    type Value = Json<'a>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Json<'a>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for TreeSeed<'_, 'a> {
    type Value = Json<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json<'a>, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Json<'a>, E> {
        Ok(Json::Number(i.into()))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Json<'a>, E> {
        Ok(Json::Number(u.into()))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Json<'a>, E> {
        Ok(Number::from_f64(f).map_or(Json::Null, Json::Number))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Json<'a>, E> {
        Ok(Json::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json<'a>, E> {
        Ok(Json::String(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Json<'a>, E> {
        Ok(Json::String(Cow::Owned(s)))
    }

    fn visit_none<E>(self) -> Result<Json<'a>, E> {
        Ok(Json::Null)
    }

    fn visit_unit<E>(self) -> Result<Json<'a>, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Json<'a>, D::Error> {
        de::DeserializeSeed::deserialize(self, d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'a>, A::Error> {
        let start = self.bufs.items.len();
        while let Some(x) = seq.next_element_seed(TreeSeed {
            bufs: &mut *self.bufs,
        })? {
            self.bufs.items.push(x);
        }
        Ok(Json::Array(self.bufs.items.drain(start..).collect()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'a>, A::Error> {
        let start = self.bufs.entries.len();
        while let Some(k) = map.next_key_seed(KeySeed(std::marker::PhantomData))? {
            let v = map.next_value_seed(TreeSeed {
                bufs: &mut *self.bufs,
            })?;
            self.bufs.entries.push((k, v));
        }
        let entries = self.bufs.entries.drain(start..).collect();
        Ok(Json::Object(Object::from_entries(entries)))
    }
}

/// Reads an object key, borrowing it from the text when it has no escapes.
struct KeySeed<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> de::DeserializeSeed<'de> for KeySeed<'a> {
    type Value = Cow<'a, str>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Cow<'a, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for KeySeed<'a> {
    type Value = Cow<'a, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Cow<'a, str>, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_str<E>(self, s: &str) -> Result<Cow<'a, str>, E> {
        Ok(Cow::Owned(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Cow<'a, str>, E> {
        Ok(Cow::Owned(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrows_plain_strings_and_owns_escaped_ones() {
        let text = r#"{"a": "x", "b\n": "y\"z", "c": [1, -2, 2.5, null, true]}"#;
        let j = Json::parse(text).unwrap();
        assert!(matches!(j.get("a"), Some(Json::String(Cow::Borrowed("x")))));
        assert_eq!(j.get("b\n").and_then(Json::as_str), Some("y\"z"));
        let c = j.get("c").and_then(Json::as_array).unwrap();
        assert_eq!(c.len(), 5);
        assert!(c[3].is_null());
    }

    #[test]
    fn repeated_keys_keep_first_position_and_last_value() {
        for n in [3, 40] {
            let mut text = String::from("{\"k\": 1");
            for i in 0..n {
                text.push_str(&format!(", \"x{i}\": {i}"));
            }
            text.push_str(", \"k\": 2}");
            let j = Json::parse(&text).unwrap();
            let o = j.as_object().unwrap();
            assert_eq!(o.len(), n + 1);
            assert_eq!(o.iter().next().map(|(k, _)| k), Some("k"));
            assert_eq!(o.get("k"), Some(&Json::Number(2.into())));
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
            let ours: Vec<&str> = o.iter().map(|(k, _)| k).collect();
            assert_eq!(keys, ours);
        }
    }

    #[test]
    fn syntax_errors_are_serde_jsons() {
        for bad in ["", "{", "{} x", "[1,]"] {
            let a = Json::parse(bad).unwrap_err().to_string();
            let b = serde_json::from_str::<serde_json::Value>(bad)
                .unwrap_err()
                .to_string();
            assert_eq!(a, b);
        }
    }
}
