//! serde's `Deserializer` over a borrowed [`Json`] tree, so that the
//! attribute DTOs of the reader deserialize from it without copying.
//!
//! It behaves as serde_json's deserializer for `&Value` does, and reports
//! the same messages (`invalid type: string "N", expected a sequence`), so
//! errors do not depend on which tree the reader walks.

use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess};
use serde::forward_to_deserialize_any;

use crate::front::tree::{Json, Object};

type Error = serde_json::Error;

impl<'a> IntoDeserializer<'a, Error> for &'a Json<'a> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'a> Deserializer<'a> for &'a Json<'a> {
    type Error = Error;

    fn deserialize_any<V: de::Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Json::Null => visitor.visit_unit(),
            Json::Bool(b) => visitor.visit_bool(*b),
            Json::Number(n) => {
                if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else {
                    visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Json::String(s) => visitor.visit_borrowed_str(s),
            Json::Array(items) => {
                let mut seq = Seq(items.iter());
                let out = visitor.visit_seq(&mut seq)?;
                if seq.0.len() == 0 {
                    Ok(out)
                } else {
                    Err(de::Error::invalid_length(
                        items.len(),
                        &"fewer elements in array",
                    ))
                }
            }
            Json::Object(o) => visit_object(o, visitor),
        }
    }

    fn deserialize_option<V: de::Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Json::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: de::Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: de::Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_enum<V: de::Visitor<'a>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            Json::String(s) => visitor.visit_enum(s.as_ref().into_deserializer()),
            other => Err(de::Error::invalid_type(
                other.unexpected(),
                &"string or map",
            )),
        }
    }

    // Every other request is answered by the value's own kind; a visitor
    // that does not accept it reports serde's "invalid type" error, which
    // reads as serde_json's for the same value.
    forward_to_deserialize_any! {
        <W: Visitor<'a>>
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

fn visit_object<'a, V: de::Visitor<'a>>(o: &'a Object<'a>, visitor: V) -> Result<V::Value, Error> {
    let mut map = Map {
        iter: o.iter(),
        value: None,
    };
    let out = visitor.visit_map(&mut map)?;
    if map.iter.len() == 0 {
        Ok(out)
    } else {
        Err(de::Error::invalid_length(o.len(), &"fewer elements in map"))
    }
}

struct Seq<'a>(std::slice::Iter<'a, Json<'a>>);

impl<'a> SeqAccess<'a> for Seq<'a> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.0.next() {
            Some(x) => seed.deserialize(x).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Map<'a, I> {
    iter: I,
    value: Option<&'a Json<'a>>,
}

impl<'a, I: ExactSizeIterator<Item = (&'a str, &'a Json<'a>)>> MapAccess<'a> for Map<'a, I> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.iter.next() {
            Some((k, v)) => {
                self.value = Some(v);
                seed.deserialize(de::value::BorrowedStrDeserializer::new(k))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<T: DeserializeSeed<'a>>(&mut self, seed: T) -> Result<T::Value, Error> {
        match self.value.take() {
            Some(v) => seed.deserialize(v),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// A DTO field that must be a JSON object of anything (as an
/// `IndexMap<String, Value>` field would): it checks the kind, with the same
/// "expected a map" error, and the reader reads the entries by reference.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnyMap;

/// A DTO field that must be a JSON list of anything (as a `Vec<Value>`
/// field would): it checks the kind, with the same "expected a sequence"
/// error, and the reader reads the elements by reference.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnySeq;

impl<'de> de::Deserialize<'de> for AnyMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<AnyMap, D::Error> {
        d.deserialize_map(AnyMapVisitor)
    }
}

impl<'de> de::Deserialize<'de> for AnySeq {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<AnySeq, D::Error> {
        d.deserialize_seq(AnySeqVisitor)
    }
}

struct AnyMapVisitor;

impl<'de> de::Visitor<'de> for AnyMapVisitor {
    type Value = AnyMap;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AnyMap, A::Error> {
        while map
            .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
            .is_some()
        {}
        Ok(AnyMap)
    }
}

struct AnySeqVisitor;

impl<'de> de::Visitor<'de> for AnySeqVisitor {
    type Value = AnySeq;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AnySeq, A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        Ok(AnySeq)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use crate::front::tree::Json;

    #[derive(Deserialize, Debug, Default, PartialEq)]
    #[serde(default)]
    struct Dto {
        name: String,
        shape: Vec<i64>,
        flag: bool,
        opt: Option<u32>,
        map: indexmap::IndexMap<String, i64>,
        any_map: indexmap::IndexMap<String, serde_json::Value>,
        any_seq: Option<Vec<serde_json::Value>>,
    }

    /// `Dto` with the kind-only checks.
    #[derive(Deserialize, Debug, Default)]
    #[serde(default)]
    struct Checked {
        name: String,
        shape: Vec<i64>,
        flag: bool,
        opt: Option<u32>,
        map: indexmap::IndexMap<String, i64>,
        any_map: super::AnyMap,
        any_seq: Option<super::AnySeq>,
    }

    /// Every message the DTOs can raise matches serde_json's own for `&Value`.
    #[test]
    fn errors_match_serde_json_value() {
        let cases = [
            r#"{"name": "a", "shape": [1, 2], "flag": true, "opt": null, "map": {"x": 1}}"#,
            r#"{"shape": "N"}"#,
            r#"{"shape": true}"#,
            r#"{"shape": {"a": 1}}"#,
            r#"{"flag": null}"#,
            r#"{"flag": 1.5}"#,
            r#"{"opt": -3}"#,
            r#"{"map": [1]}"#,
            r#"{"map": {"x": "y"}}"#,
            r#"{"name": 5}"#,
            r#"{"shape": [1, "2"]}"#,
            r#"7"#,
            r#"[1, 2]"#,
            r#""s""#,
            r#"{"any_map": {"a": [1], "b": null}, "any_seq": [{}, 1, "x"]}"#,
            r#"{"any_map": [1]}"#,
            r#"{"any_map": null}"#,
            r#"{"any_seq": null}"#,
            r#"{"any_seq": "x"}"#,
            r#"{"any_seq": {"a": 1}}"#,
        ];
        for text in cases {
            let ours = Dto::deserialize(&Json::parse(text).unwrap()).map_err(|e| e.to_string());
            let v: serde_json::Value = serde_json::from_str(text).unwrap();
            let theirs = Dto::deserialize(&v).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{text}");
            if !text.starts_with('{') {
                continue; // the message names the struct
            }
            let checked = Checked::deserialize(&Json::parse(text).unwrap()).map(|_| ());
            assert_eq!(
                checked.map_err(|e| e.to_string()),
                theirs.map(|_| ()),
                "{text}"
            );
        }
    }
}
