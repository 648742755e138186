//! Node and block ids as DaCe writes them, and their lookup.

use super::*;

/// A node or block id as a lookup key: ids compare as DaCe writes them
/// (the number 3 and the string "3" are the same id), without allocating
/// for the usual unsigned integers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum IdKey<'a> {
    Num(u64),
    Text(std::borrow::Cow<'a, str>),
}

impl IdKey<'_> {
    /// The key, owning its text.
    fn into_owned(self) -> IdKey<'static> {
        match self {
            IdKey::Num(n) => IdKey::Num(n),
            IdKey::Text(s) => IdKey::Text(std::borrow::Cow::Owned(s.into_owned())),
        }
    }
}

impl std::fmt::Display for IdKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IdKey::Num(n) => write!(f, "{n}"),
            IdKey::Text(s) => f.write_str(s),
        }
    }
}

pub(super) fn id_key<'a>(v: &'a Json<'a>) -> Option<IdKey<'a>> {
    match v {
        Json::String(s) => {
            let canonical = !s.is_empty()
                && s.bytes().all(|c| c.is_ascii_digit())
                && (s.len() == 1 || !s.starts_with('0'));
            Some(match s.parse::<u64>() {
                Ok(n) if canonical => IdKey::Num(n),
                _ => IdKey::Text(std::borrow::Cow::Borrowed(s)),
            })
        }
        Json::Number(n) => Some(match n.as_u64() {
            Some(u) => IdKey::Num(u),
            None => IdKey::Text(std::borrow::Cow::Owned(n.to_string())),
        }),
        _ => None,
    }
}

/// Position of each id in a node list: DaCe numbers them 0, 1, 2, ... in
/// order, which needs no table.
pub(super) enum Ids<'a> {
    /// The id of the element at position i is i, for every i < n.
    Dense(usize),
    /// Any other numbering.
    Map(HashMap<IdKey<'a>, u32>),
}

impl Ids<'_> {
    fn get(&self, key: &IdKey) -> Option<u32> {
        match (self, key) {
            (Ids::Dense(n), IdKey::Num(k)) => (*k < *n as u64).then_some(*k as u32),
            (Ids::Dense(_), IdKey::Text(_)) => None,
            (Ids::Map(m), k) => m.get(k).copied(),
        }
    }
}

/// Maps the `id` fields of a node list to positions. The table owns its
/// keys, so the reader may discard each node once it has read it.
pub(super) fn id_index<'a>(items: &'a [Json<'a>], path: &str) -> Result<Ids<'static>> {
    let key = |i: usize, item: &'a Json<'a>| {
        item.get("id")
            .and_then(id_key)
            .unwrap_or(IdKey::Num(i as u64))
    };
    if items
        .iter()
        .enumerate()
        .all(|(i, item)| key(i, item) == IdKey::Num(i as u64))
    {
        return Ok(Ids::Dense(items.len()));
    }
    let mut ids = HashMap::with_capacity_and_hasher(items.len(), Default::default());
    for (i, item) in items.iter().enumerate() {
        match ids.entry(key(i, item).into_owned()) {
            std::collections::hash_map::Entry::Occupied(o) => {
                return Err(Error::invalid(
                    ptr(&ptr(path, i), "id"),
                    format!("duplicate id {}", o.key()),
                ));
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(i as u32);
            }
        }
    }
    Ok(Ids::Map(ids))
}

pub(super) fn lookup(
    ids: &Ids,
    v: Option<&Json>,
    path: impl Fn() -> String,
    what: &str,
) -> Result<u32> {
    let Some(v) = v else {
        return Err(Error::format(path(), format!("missing {what}")));
    };
    let key = id_key(v).ok_or_else(|| {
        Error::format(
            path(),
            format!("{what} must be an id, found {}", kind_of(v)),
        )
    })?;
    ids.get(&key)
        .ok_or_else(|| Error::invalid(path(), format!("{what} {key} does not exist")))
}
