//! DaCe's JSON → IR. The graph structure is walked by hand so that every
//! error carries an exact JSON pointer; the attribute bags of each element
//! are serde DTOs whose `Default`s are DaCe's defaults (DaCe omits every
//! property that equals its default).

use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};

use indexmap::IndexMap;
use serde::Deserialize;

use crate::diag::{Error, ErrorKind, Result};
use crate::front::python::{self, PyError};
use crate::front::tree::Json;
use crate::front::tree_de::{AnyMap, AnySeq};
use crate::ir::*;

/// Deepest nesting of SDFGs and regions sdfgc accepts (guards the stack).
pub const MAX_NESTING: usize = 64;

/// Parses one SDFG JSON document.
pub fn load_str(text: &str) -> Result<Sdfg> {
    load_str_with(text, true)
}

/// [`load_str`], with or without reading long lists on two threads.
fn load_str_with(text: &str, parallel: bool) -> Result<Sdfg> {
    let text = super::nonfinite::quote_nonfinite(text);
    let mut value = Json::parse(&text).map_err(syntax_error)?;
    if !value.is_object() {
        return Err(Error::format(
            "",
            format!(
                "the document must be an SDFG (a JSON object), found {}",
                kind_of(&value)
            ),
        ));
    }
    EXPRS.with(|c| c.borrow_mut().clear());
    let sdfg = Reader {
        depth: 0,
        next_id: 0,
        discard: DISCARD.load(Ordering::Relaxed),
        parallel,
    }
    .sdfg(&mut value, "");
    EXPRS.with(|c| *c.borrow_mut() = HashMap::default());
    let mut sdfg = sdfg?;
    crate::ir::symtypes::infer_tree(&mut sdfg);
    Ok(sdfg)
}

thread_local! {
    /// The symbolic expressions parsed so far in the document being read:
    /// SDFGs repeat a few (`i`, `N`, `0`, `N - 1`) in every memlet and
    /// array, and a clone is cheaper than a parse. Emptied after each document.
    static EXPRS: RefCell<HashMap<String, Expr>> = RefCell::new(HashMap::default());
}

/// A located JSON syntax error; serde_json's nesting limit (128 levels) is
/// reported as such, since it is what deeply nested SDFGs run into first.
fn syntax_error(e: serde_json::Error) -> Error {
    let location = format!("line {}, column {}", e.line(), e.column());
    let message = if e.to_string().starts_with("recursion limit exceeded") {
        format!("JSON nested too deeply (more than 128 levels of lists and objects): {e}")
    } else {
        e.to_string()
    };
    Error::new(ErrorKind::Syntax, location, message)
}

/// Set by [`discard_read_subtrees`].
static DISCARD: AtomicBool = AtomicBool::new(false);

/// Makes [`load_str`] free each block, node and edge of the JSON tree as
/// soon as its IR is built, so that the IR reuses the tree's memory and the
/// peak is lower. Worth it with an allocator that reuses freed blocks of
/// other sizes cheaply (the `sdfgc` command uses mimalloc); with glibc's
/// malloc the reuse costs more CPU time than the fresh pages it saves (a
/// 100,000-node chain: 17% less peak memory, about 20% more CPU), so
/// the library default keeps the whole tree until the document is read.
pub fn discard_read_subtrees() {
    DISCARD.store(true, Ordering::Relaxed);
}

struct Reader {
    depth: usize,
    next_id: u32,
    /// Whether to free each element of the tree once read ([`discard_read_subtrees`]).
    discard: bool,
    /// Whether long lists may be read on two threads ([`Reader::read_list`]).
    parallel: bool,
}

/// Lists at least this long are read by two threads, when reading their
/// elements cannot create SDFGs (which are numbered in document order).
const PARALLEL_ELEMENTS: usize = 8192;

/// Reads one element of a list: (reader, index in the list, element).
type ReadElement<'f, T> =
    dyn for<'x> Fn(&mut Reader, usize, &mut Json<'x>) -> Result<T> + Sync + 'f;

impl Reader {
    /// `read` applied to every element of `items`, in order; the first
    /// error in list order is returned, as reading one by one would. With
    /// `parallel`, a long list is read in two halves on two threads, each
    /// with its own reader: the result is the same, element by element.
    fn read_list<T: Send>(
        &mut self,
        items: &mut [Json<'_>],
        parallel: bool,
        read: &ReadElement<'_, T>,
    ) -> Result<Vec<T>> {
        let in_order = |r: &mut Reader, from: usize, items: &mut [Json<'_>]| -> Result<Vec<T>> {
            let mut out = Vec::with_capacity(items.len());
            for (k, x) in items.iter_mut().enumerate() {
                out.push(read(r, from + k, x)?);
                r.done(x);
            }
            Ok(out)
        };
        let two = parallel
            && self.parallel
            && items.len() >= PARALLEL_ELEMENTS
            && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
        if !two {
            return in_order(self, 0, items);
        }
        let mid = items.len() / 2;
        let (first, second) = items.split_at_mut(mid);
        let mut other = Reader {
            depth: self.depth,
            next_id: self.next_id,
            discard: self.discard,
            parallel: self.parallel,
        };
        let (a, b) = std::thread::scope(|s| {
            let h = s.spawn(|| in_order(&mut other, mid, second));
            let a = in_order(self, 0, first);
            (a, h.join())
        });
        let mut out = a?;
        out.extend(b.unwrap_or_else(|e| std::panic::resume_unwind(e))?);
        Ok(out)
    }

    /// Frees an element of the tree that has been read, if so configured.
    fn done(&self, v: &mut Json) {
        if self.discard {
            v.discard();
        }
    }
}

// ---------------------------------------------------------------- DTOs ----

#[derive(Deserialize, Default)]
#[serde(default)]
struct CodeDto {
    string_data: String,
    language: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SdfgAttrsDto {
    name: Option<String>,
    arg_names: Vec<String>,
    _arrays: AnyMap,
    symbols: AnyMap,
    constants_prop: AnyMap,
    global_code: IndexMap<String, CodeDto>,
    init_code: IndexMap<String, CodeDto>,
    exit_code: IndexMap<String, CodeDto>,
}

/// Also read by reference: `dtype` (default "int32"), `shape` (default
/// `["1"]`), `strides`, `total_size`, `offset`, `start_offset` (default 0).
#[derive(Deserialize)]
#[serde(default)]
struct DataAttrsDto {
    shape: AnySeq,
    strides: Option<AnySeq>,
    offset: Option<AnySeq>,
    transient: bool,
    storage: String,
    lifetime: String,
    pool: bool,
    may_alias: bool,
}

impl Default for DataAttrsDto {
    fn default() -> Self {
        DataAttrsDto {
            shape: AnySeq,
            strides: None,
            offset: None,
            transient: false,
            storage: "Default".into(),
            lifetime: "Scope".into(),
            pool: false,
            may_alias: false,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct LoopAttrsDto {
    loop_variable: Option<String>,
    init_statement: Option<CodeDto>,
    loop_condition: Option<CodeDto>,
    update_statement: Option<CodeDto>,
    inverted: bool,
    update_before_condition: Option<bool>,
}

/// Also read by reference: `assignments`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct InterstateDto {
    condition: Option<CodeDto>,
    assignments: AnyMap,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AccessDto {
    data: Option<String>,
    setzero: bool,
}

/// Also read by reference: `range`, `gpu_block_size`.
#[derive(Deserialize)]
#[serde(default)]
struct MapDto {
    label: String,
    params: Vec<String>,
    schedule: String,
    collapse: i64,
    gpu_block_size: Option<AnySeq>,
    omp_num_threads: i64,
    unroll: bool,
}

impl Default for MapDto {
    fn default() -> Self {
        MapDto {
            label: String::new(),
            params: Vec::new(),
            schedule: "Default".into(),
            collapse: 1,
            gpu_block_size: None,
            omp_num_threads: 0,
            unroll: false,
        }
    }
}

/// Also read by reference: the connectors.
#[derive(Deserialize, Default)]
#[serde(default)]
struct TaskletDto {
    code: Option<CodeDto>,
    code_global: Option<CodeDto>,
    code_init: Option<CodeDto>,
    code_exit: Option<CodeDto>,
    side_effects: Option<bool>,
    in_connectors: AnyMap,
    out_connectors: AnyMap,
    environments: Vec<String>,
}

/// Also read by reference: `sdfg` (the nested SDFG), `symbol_mapping`, the connectors.
#[derive(Deserialize, Default)]
#[serde(default)]
struct NestedDto {
    symbol_mapping: AnyMap,
    in_connectors: AnyMap,
    out_connectors: AnyMap,
    schedule: Option<String>,
}

/// Also read by reference: `identity`, `alpha`, `beta`, the connectors.
#[derive(Deserialize, Default)]
#[serde(default)]
struct LibraryDto {
    name: String,
    axes: Option<Vec<i64>>,
    wcr: Option<String>,
    schedule: Option<String>,
    in_connectors: AnyMap,
    out_connectors: AnyMap,
}

/// Also read by reference: `subset`, `other_subset`, `volume`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct MemletDto {
    data: Option<String>,
    wcr: Option<String>,
    dynamic: bool,
    is_data_src: Option<bool>,
}

// ------------------------------------------------------------- helpers ----

/// `base` extended by one JSON-pointer segment (`~` and `/` escaped).
fn ptr(base: &str, key: impl std::fmt::Display) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(base.len() + 16);
    out.push_str(base);
    out.push('/');
    let start = out.len();
    let _ = write!(out, "{key}");
    if out[start..].contains(['~', '/']) {
        let escaped = out[start..].replace('~', "~0").replace('/', "~1");
        out.truncate(start);
        out.push_str(&escaped);
    }
    out
}

/// Deserializes a DTO, reporting the exact JSON pointer on a type mismatch.
/// The path is traced only when the fast, untraced attempt fails.
fn dto<'a, T: Deserialize<'a> + Default>(v: Option<&'a Json<'a>>, path: &str) -> Result<T> {
    let Some(v) = v else { return Ok(T::default()) };
    if v.is_null() {
        return Ok(T::default());
    }
    if let Ok(t) = T::deserialize(v) {
        return Ok(t);
    }
    serde_path_to_error::deserialize::<_, T>(v).map_err(|e| {
        let mut p = path.to_string();
        for seg in e.path().iter() {
            match seg {
                serde_path_to_error::Segment::Seq { index } => p = ptr(&p, index),
                serde_path_to_error::Segment::Map { key } => p = ptr(&p, key),
                serde_path_to_error::Segment::Enum { variant } => p = ptr(&p, variant),
                serde_path_to_error::Segment::Unknown => {}
            }
        }
        Error::format(p, e.into_inner().to_string())
    })
}

fn get<'a>(obj: &'a Json<'a>, key: &str, path: &str) -> Result<&'a Json<'a>> {
    match obj.as_object() {
        Some(map) => map
            .get(key)
            .ok_or_else(|| Error::format(path, format!("missing key '{key}'"))),
        None => Err(Error::format(
            path,
            format!("expected an object, found {}", kind_of(obj)),
        )),
    }
}

fn get_array<'a>(obj: &'a Json<'a>, key: &str, path: &str) -> Result<&'a [Json<'a>]> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(&[]),
        Some(Json::Array(a)) => Ok(a),
        Some(other) => Err(Error::format(
            ptr(path, key),
            format!("expected a list, found {}", kind_of(other)),
        )),
    }
}

/// The list under `key` of an object whose kind [`get_array`] has checked,
/// for a reader that discards each element once it has read it (a
/// missing or `null` list is empty).
fn array_mut<'v, 'a>(obj: &'v mut Json<'a>, key: &str) -> &'v mut [Json<'a>] {
    obj.get_mut(key)
        .and_then(Json::as_array_mut)
        .unwrap_or_default()
}

fn kind_of(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

fn type_of<'a>(obj: &'a Json<'a>, path: &str) -> Result<&'a str> {
    get(obj, "type", path)?
        .as_str()
        .ok_or_else(|| Error::format(ptr(path, "type"), "'type' must be a string"))
}

fn label_of(obj: &Json) -> String {
    obj.get("label")
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_string()
}

fn py_err(e: PyError, path: &str, what: &str) -> Error {
    Error::new(
        ErrorKind::Code,
        path,
        format!("{what}: line {}, column {}: {}", e.line, e.col, e.message),
    )
}

/// Parses a symbolic expression given as a JSON string or number.
fn sym(v: &Json, path: &str) -> Result<Expr> {
    match v {
        Json::String(s) => {
            if let Some(e) = EXPRS.with(|c| c.borrow().get(s.as_ref()).cloned()) {
                return Ok(e);
            }
            let e = python::parse_expr(s).map_err(|e| py_err(e, path, "symbolic expression"))?;
            EXPRS.with(|c| c.borrow_mut().insert(s.to_string(), e.clone()));
            Ok(e)
        }
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(Expr::Int(i))
            } else if let Some(f) = n.as_f64() {
                Ok(Expr::Float(f))
            } else {
                Err(Error::format(path, format!("number {n} out of range")))
            }
        }
        Json::Bool(b) => Ok(Expr::Bool(*b)),
        // DaCe 1.0.2 writes a `SymExpr` range bound as `{"main": exact, "approx": ...}`.
        Json::Object(o) if o.get("main").is_some() => {
            sym(o.get("main").unwrap_or(&Json::Null), &ptr(path, "main"))
        }
        other => Err(Error::format(
            path,
            format!("expected a symbolic expression, found {}", kind_of(other)),
        )),
    }
}

fn sym_list(vs: &[Json], path: impl Fn() -> String) -> Result<Vec<Expr>> {
    vs.iter()
        .enumerate()
        .map(|(i, v)| located(|p| sym(v, p), || ptr(&path(), i)))
        .collect()
}

fn dtype(v: &Json, path: &str) -> Result<DType> {
    match v {
        Json::String(s) => DType::from_dace_name(s)
            .ok_or_else(|| Error::unsupported(path, format!("data type '{s}'"))),
        Json::Object(o) => {
            let t = o.get("type").and_then(Json::as_str).unwrap_or("?");
            Err(Error::unsupported(path, format!("data type of kind '{t}'")))
        }
        other => Err(Error::format(
            path,
            format!("expected a data type, found {}", kind_of(other)),
        )),
    }
}

fn conn_type(v: &Json, path: &str) -> Result<ConnType> {
    match v {
        Json::Null => Ok(ConnType::Unknown),
        Json::Object(o) if o.get("type").and_then(Json::as_str) == Some("pointer") => {
            let inner = o.get("dtype").unwrap_or(&Json::Null);
            Ok(ConnType::Pointer(dtype(inner, &ptr(path, "dtype"))?))
        }
        other => Ok(ConnType::Scalar(dtype(other, path)?)),
    }
}

/// The member `key` of an attribute object (`None` if absent).
fn member<'a>(attrs: Option<&'a Json<'a>>, key: &str) -> Option<&'a Json<'a>> {
    attrs.and_then(|a| a.get(key))
}

/// The entries of the object member `key` (none if absent or not an object;
/// the DTO has checked its kind).
fn entries<'a>(
    attrs: Option<&'a Json<'a>>,
    key: &str,
) -> impl Iterator<Item = (&'a str, &'a Json<'a>)> {
    member(attrs, key)
        .and_then(Json::as_object)
        .into_iter()
        .flat_map(|o| o.iter())
}

/// The elements of the list member `key` (empty if absent or not a list).
fn elements<'a>(attrs: Option<&'a Json<'a>>, key: &str) -> &'a [Json<'a>] {
    member(attrs, key).and_then(Json::as_array).unwrap_or(&[])
}

fn connectors<'a>(attrs: Option<&'a Json<'a>>, key: &str, path: &str) -> Result<NameMap<ConnType>> {
    let mut out = NameMap::default();
    for (k, v) in entries(attrs, key) {
        let t = located(|p| conn_type(v, p), || ptr(&ptr(path, key), k))?;
        out.insert(k.to_string(), t);
    }
    // Connectors are matched by name (edges name them); their order in the
    // JSON object carries no meaning and must not show in the output.
    out.sort_keys();
    Ok(out)
}

/// Runs `f` (which must not have side effects) with an empty location, and
/// only if it fails runs it again at `at()`: the JSON pointer is built only
/// for an error.
fn located<T>(f: impl Fn(&str) -> Result<T>, at: impl FnOnce() -> String) -> Result<T> {
    f("").or_else(|_| f(&at()))
}

/// A code block at `path` (its `language` absent or null: `default_lang`).
/// A language other than Python and C++ (DaCe also names OpenCL,
/// SystemVerilog and MLIR) is refused by name, as is an unknown one: it is
/// never compiled as if it were Python; `what` names the code's owner.
fn code_block(
    c: Option<CodeDto>,
    default_lang: Language,
    path: &str,
    what: &dyn Fn() -> String,
) -> Result<CodeBlock> {
    let c = c.unwrap_or_default();
    let language = match c.language.as_deref() {
        Some("CPP") | Some("cpp") => Language::Cpp,
        Some("Python") => Language::Python,
        None => default_lang,
        Some(other) => {
            return Err(Error::unsupported(
                ptr(path, "language"),
                format!(
                    "{} in language '{other}' (sdfgc compiles Python and C++ code only)",
                    what()
                ),
            ));
        }
    };
    Ok(CodeBlock {
        code: c.string_data,
        language,
    })
}

fn code_map(m: IndexMap<String, CodeDto>, path: &str) -> Result<NameMap<CodeBlock>> {
    let mut out = NameMap::default();
    for (k, c) in m {
        let p = ptr(path, &k);
        let c = code_block(Some(c), Language::Cpp, &p, &|| format!("code for '{k}'"))?;
        if !c.code.trim().is_empty() {
            out.insert(k, c);
        }
    }
    Ok(out)
}

/// Parses a Python condition; an empty one is `true`.
fn condition(c: Option<CodeDto>, path: &str) -> Result<Expr> {
    let c = code_block(c, Language::Python, path, &|| "a condition".to_string())?;
    if c.code.trim().is_empty() {
        return Ok(Expr::Bool(true));
    }
    if c.language != Language::Python {
        return Err(Error::unsupported(path, "C++ conditions"));
    }
    python::parse_expr(&c.code).map_err(|e| py_err(e, path, "condition"))
}

fn statements(c: Option<CodeDto>, path: &str) -> Result<Vec<Stmt>> {
    let c = code_block(c, Language::Python, path, &|| {
        "a loop statement".to_string()
    })?;
    if c.language != Language::Python {
        return Err(Error::unsupported(path, "C++ loop statements"));
    }
    python::parse_code(&c.code).map_err(|e| py_err(e, path, "statement"))
}

/// A node or block id as a lookup key: ids compare as DaCe writes them
/// (the number 3 and the string "3" are the same id), without allocating
/// for the usual unsigned integers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum IdKey<'a> {
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

fn id_key<'a>(v: &'a Json<'a>) -> Option<IdKey<'a>> {
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
enum Ids<'a> {
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
fn id_index<'a>(items: &'a [Json<'a>], path: &str) -> Result<Ids<'static>> {
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

fn lookup(ids: &Ids, v: Option<&Json>, path: impl Fn() -> String, what: &str) -> Result<u32> {
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

/// Parses `lambda a, b: body` as DaCe writes write-conflict resolutions.
pub fn parse_wcr(text: &str, path: &str) -> Result<Wcr> {
    let mut s = text.trim();
    while s.starts_with('(') && s.ends_with(')') {
        s = s[1..s.len() - 1].trim();
    }
    let bad = || {
        Error::new(
            ErrorKind::Code,
            path,
            format!("write-conflict resolution '{text}' is not a two-argument lambda"),
        )
    };
    let rest = s.strip_prefix("lambda").ok_or_else(bad)?;
    let (params, body) = rest.split_once(':').ok_or_else(bad)?;
    let params: Vec<&str> = params.split(',').map(str::trim).collect();
    if params.len() != 2 || params.iter().any(|p| p.is_empty()) {
        return Err(bad());
    }
    let (a, b) = (params[0].to_string(), params[1].to_string());
    let body =
        python::parse_expr(body).map_err(|e| py_err(e, path, "write-conflict resolution"))?;
    let kind = classify_wcr(&a, &b, &body);
    Ok(Wcr {
        text: text.to_string(),
        kind,
        params: (a, b),
        body,
    })
}

fn classify_wcr(a: &str, b: &str, body: &Expr) -> WcrKind {
    let is_pair = |x: &Expr, y: &Expr| matches!((x, y), (Expr::Sym(p), Expr::Sym(q)) if (p == a && q == b) || (p == b && q == a));
    match body {
        Expr::Binary(op, x, y) if is_pair(x, y) => match op {
            BinaryOp::Add => WcrKind::Sum,
            BinaryOp::Mul => WcrKind::Product,
            BinaryOp::And => WcrKind::LogicalAnd,
            BinaryOp::Or => WcrKind::LogicalOr,
            BinaryOp::BitAnd => WcrKind::BitAnd,
            BinaryOp::BitOr => WcrKind::BitOr,
            BinaryOp::BitXor => WcrKind::BitXor,
            _ => WcrKind::Custom,
        },
        Expr::Call(Func::Min, args) if args.len() == 2 && is_pair(&args[0], &args[1]) => {
            WcrKind::Min
        }
        Expr::Call(Func::Max, args) if args.len() == 2 && is_pair(&args[0], &args[1]) => {
            WcrKind::Max
        }
        Expr::Sym(s) if s == b => WcrKind::Replace,
        _ => WcrKind::Custom,
    }
}

/// Reads a subset; `path` builds its JSON pointer, only for an error.
fn subset(v: &Json, path: &dyn Fn() -> String) -> Result<Option<Subset>> {
    if v.is_null() {
        return Ok(None);
    }
    let num = |x: &Json, at: &dyn Fn() -> String| located(|p| sym(x, p), at);
    match located(|p| type_of(v, p), path)? {
        "Range" => {
            let ranges = located(|p| get_array(v, "ranges", p), path)?;
            let mut out = Vec::with_capacity(ranges.len());
            for (i, r) in ranges.iter().enumerate() {
                let p = || ptr(&ptr(&path(), "ranges"), i);
                let field = |k: &str, default: i64| -> Result<Expr> {
                    match r.get(k) {
                        None => Ok(Expr::Int(default)),
                        Some(x) => num(x, &|| ptr(&p(), k)),
                    }
                };
                let bound = |k: &str| -> Result<Expr> {
                    let x = located(|q| get(r, k, q), p)?;
                    num(x, &|| ptr(&p(), k))
                };
                out.push(RangeDim {
                    start: bound("start")?,
                    end: bound("end")?,
                    step: field("step", 1)?,
                    tile: field("tile", 1)?,
                });
            }
            Ok(Some(out))
        }
        "Indices" => {
            let idx = located(|p| get_array(v, "indices", p), path)?;
            let mut out = Vec::with_capacity(idx.len());
            for (i, x) in idx.iter().enumerate() {
                let e = num(x, &|| ptr(&ptr(&path(), "indices"), i))?;
                out.push(RangeDim {
                    start: e.clone(),
                    end: e,
                    step: Expr::Int(1),
                    tile: Expr::Int(1),
                });
            }
            Ok(Some(out))
        }
        other => Err(Error::unsupported(
            ptr(&path(), "type"),
            format!("subset type '{other}'"),
        )),
    }
}

/// Reads a memlet's attributes; `path` builds their JSON pointer, only for an error.
fn memlet<'a>(v: Option<&'a Json<'a>>, path: &dyn Fn() -> String) -> Result<Memlet> {
    let m: MemletDto = located(|p| dto(v, p), path)?;
    let subset_of = |k: &str| -> Result<Option<Subset>> {
        match member(v, k) {
            None => Ok(None),
            Some(x) => subset(x, &|| ptr(&path(), k)),
        }
    };
    let wcr = match &m.wcr {
        Some(w) => Some(located(|p| parse_wcr(w, p), || ptr(&path(), "wcr"))?),
        None => None,
    };
    let volume = match member(v, "volume") {
        None | Some(Json::Null) => Expr::Int(1),
        Some(x) => located(|p| sym(x, p), || ptr(&path(), "volume"))?,
    };
    Ok(Memlet {
        data: m.data,
        subset: subset_of("subset")?,
        other_subset: subset_of("other_subset")?,
        wcr,
        dynamic: m.dynamic,
        volume,
        is_data_src: m.is_data_src,
    })
}

fn schedule(s: Option<&str>, path: &str) -> Result<Schedule> {
    let s = s.unwrap_or("Default");
    Schedule::from_dace_name(s).ok_or_else(|| Error::unsupported(path, format!("schedule '{s}'")))
}

// -------------------------------------------------------------- reader ----

impl Reader {
    fn enter(&mut self, path: &str) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Error::unsupported(
                path,
                format!("nesting deeper than {MAX_NESTING} levels of SDFGs and regions"),
            ));
        }
        Ok(())
    }

    /// Reads an SDFG; with [`discard_read_subtrees`], every block, node and
    /// edge of its graphs is freed from the tree once read, so that the IR
    /// reuses the tree's memory instead of adding to it.
    fn sdfg(&mut self, v: &mut Json, path: &str) -> Result<Sdfg> {
        self.enter(path)?;
        let t = type_of(v, path)?;
        if t != "SDFG" {
            return Err(Error::format(
                ptr(path, "type"),
                format!("expected an SDFG, found type '{t}'"),
            ));
        }
        let id = self.next_id;
        self.next_id += 1;
        let ap = ptr(path, "attributes");
        let av = v.get("attributes");
        let attrs: SdfgAttrsDto = dto(av, &ap)?;
        let name = attrs
            .name
            .clone()
            .ok_or_else(|| Error::format(&ap, "the SDFG has no 'name'"))?;
        if name.is_empty()
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(Error::invalid(
                ptr(&ap, "name"),
                format!("SDFG name '{name}' is not a C identifier"),
            ));
        }
        let arrp = ptr(&ap, "_arrays");
        let mut arrays = NameMap::default();
        for (k, d) in entries(av, "_arrays") {
            arrays.insert(k.to_string(), self.data(d, &ptr(&arrp, k), k)?);
        }
        let symp = ptr(&ap, "symbols");
        let mut symbols = NameMap::default();
        for (k, t) in entries(av, "symbols") {
            symbols.insert(k.to_string(), located(|p| dtype(t, p), || ptr(&symp, k))?);
        }
        let cp = ptr(&ap, "constants_prop");
        let mut constants = NameMap::default();
        for (k, c) in entries(av, "constants_prop") {
            constants.insert(k.to_string(), self.constant(c, &ptr(&cp, k))?);
        }
        // Names, not JSON key order, decide everything downstream (output
        // must not change when a tool reorders the keys of an object).
        arrays.sort_keys();
        symbols.sort_keys();
        constants.sort_keys();
        let body = self.region(v, path, RegionKind::Plain)?;
        self.depth -= 1;
        Ok(Sdfg {
            id,
            name,
            arg_names: attrs.arg_names,
            arrays,
            symbols,
            assigned_types: NameMap::default(),
            constants,
            global_code: code_map(attrs.global_code, &ptr(&ap, "global_code"))?,
            init_code: code_map(attrs.init_code, &ptr(&ap, "init_code"))?,
            exit_code: code_map(attrs.exit_code, &ptr(&ap, "exit_code"))?,
            body,
            path: path.to_string(),
        })
    }

    fn data(&mut self, v: &Json, path: &str, name: &str) -> Result<DataDesc> {
        let t = type_of(v, path)?;
        let kind = match t {
            "Array" => DataKind::Array,
            "Scalar" => DataKind::Scalar,
            "View" | "ArrayView" => DataKind::View,
            "Stream" | "Structure" | "StructureView" | "Reference" | "ArrayReference"
            | "StructureReference" | "ContainerArray" | "Tensor" => {
                return Err(Error::unsupported(
                    path,
                    format!("data container '{name}' of type {t}"),
                ));
            }
            other => {
                return Err(Error::format(
                    ptr(path, "type"),
                    format!("unknown data type '{other}'"),
                ));
            }
        };
        let ap = ptr(path, "attributes");
        let av = v.get("attributes");
        let a: DataAttrsDto = dto(av, &ap)?;
        let dt = match member(av, "dtype") {
            Some(d) => located(|p| dtype(d, p), || ptr(&ap, "dtype"))?,
            None => DType::from_dace_name("int32").expect("int32 is a DaCe type"),
        };
        let shape = match member(av, "shape") {
            Some(_) => sym_list(elements(av, "shape"), || ptr(&ap, "shape"))?,
            None => vec![Expr::Int(1)],
        };
        let rank = shape.len();
        let strides = match &a.strides {
            Some(_) => sym_list(elements(av, "strides"), || ptr(&ap, "strides"))?,
            None => row_major_strides(&shape),
        };
        let offset = match &a.offset {
            Some(_) => sym_list(elements(av, "offset"), || ptr(&ap, "offset"))?,
            None => vec![Expr::Int(0); rank],
        };
        if strides.len() != rank || offset.len() != rank {
            return Err(Error::invalid(
                &ap,
                format!(
                    "'{name}' has {rank} dimensions but {} strides and {} offsets",
                    strides.len(),
                    offset.len()
                ),
            ));
        }
        let total_size = match member(av, "total_size").filter(|t| !t.is_null()) {
            Some(t) => located(|p| sym(t, p), || ptr(&ap, "total_size"))?,
            None => shape
                .iter()
                .cloned()
                .reduce(|x, y| Expr::bin(BinaryOp::Mul, x, y))
                .unwrap_or(Expr::Int(1)),
        };
        let storage = Storage::from_dace_name(&a.storage).ok_or_else(|| {
            Error::unsupported(ptr(&ap, "storage"), format!("storage '{}'", a.storage))
        })?;
        let lifetime = Lifetime::from_dace_name(&a.lifetime).ok_or_else(|| {
            Error::unsupported(ptr(&ap, "lifetime"), format!("lifetime '{}'", a.lifetime))
        })?;
        Ok(DataDesc {
            kind,
            dtype: dt,
            shape,
            strides,
            total_size,
            offset,
            start_offset: match member(av, "start_offset") {
                Some(x) => located(|p| sym(x, p), || ptr(&ap, "start_offset"))?,
                None => Expr::Int(0),
            },
            transient: a.transient,
            storage,
            lifetime,
            pool: a.pool,
            may_alias: a.may_alias,
            path: path.to_string(),
        })
    }

    fn constant(&mut self, v: &Json, path: &str) -> Result<Constant> {
        let pair = v
            .as_array()
            .filter(|a| a.len() == 2)
            .ok_or_else(|| Error::format(path, "a constant must be [descriptor, value]"))?;
        let desc = self.data(&pair[0], &ptr(path, 0), "constant")?;
        let vp = ptr(path, 1);
        let complex = desc.dtype.is_complex();
        let (values, shape) = match &pair[1] {
            Json::Object(o) => {
                let data = o
                    .get("data")
                    .ok_or_else(|| Error::format(&vp, "ndarray without 'data'"))?;
                let mut flat = Vec::new();
                let mut shape = Vec::new();
                flatten(data, &mut flat, &mut shape, 0, &ptr(&vp, "data"), complex)?;
                (flat, shape)
            }
            scalar => (vec![element_value(scalar, &vp, complex)?], Vec::new()),
        };
        let (values, imag): (Vec<ConstValue>, Vec<f64>) = values.into_iter().unzip();
        for (i, v) in values.iter().enumerate() {
            check_constant_value(*v, desc.dtype).map_err(|m| {
                let at = if shape.is_empty() {
                    vp.clone()
                } else {
                    format!("{vp}/data (element {i})")
                };
                Error::invalid(at, m)
            })?;
        }
        Ok(Constant {
            dtype: desc.dtype,
            shape,
            values,
            imag: if complex { imag } else { Vec::new() },
        })
    }

    /// Reads a region-like object (SDFG, ControlFlowRegion, LoopRegion, branch body).
    fn region(&mut self, v: &mut Json, path: &str, kind: RegionKind) -> Result<Region> {
        let np = ptr(path, "nodes");
        let ids = id_index(get_array(v, "nodes", path)?, &np)?;
        let nodes = array_mut(v, "nodes");
        let mut blocks = Vec::with_capacity(nodes.len());
        for (i, b) in nodes.iter_mut().enumerate() {
            blocks.push(self.block(b, &ptr(&np, i))?);
            self.done(b);
        }
        let ep = ptr(path, "edges");
        let mut edges = Vec::with_capacity(get_array(v, "edges", path)?.len());
        for (i, e) in array_mut(v, "edges").iter_mut().enumerate() {
            let p = ptr(&ep, i);
            let src = BlockId(lookup(
                &ids,
                e.get("src"),
                || ptr(&p, "src"),
                "source block",
            )?);
            let dst = BlockId(lookup(
                &ids,
                e.get("dst"),
                || ptr(&p, "dst"),
                "destination block",
            )?);
            let dp = format!("{p}/attributes/data/attributes");
            let data = e
                .get("attributes")
                .and_then(|a| a.get("data"))
                .and_then(|d| d.get("attributes"));
            let a: InterstateDto = dto(data, &dp)?;
            let condition = condition(a.condition, &ptr(&dp, "condition"))?;
            let mut assignments = Vec::new();
            for (k, val) in entries(data, "assignments") {
                let vp = ptr(&ptr(&dp, "assignments"), k);
                let e = match val {
                    Json::String(s) => {
                        python::parse_expr(s).map_err(|e| py_err(e, &vp, "assignment"))?
                    }
                    other => sym(other, &vp)?,
                };
                assignments.push((k.to_string(), e));
            }
            edges.push(InterstateEdge {
                src,
                dst,
                condition,
                assignments,
                path: p,
            });
            self.done(e);
        }
        // DaCe's rule: the unique source block if there is one, else `start_block`.
        let explicit = match v.get("start_block") {
            Some(s) if !s.is_null() => Some(BlockId(lookup(
                &ids,
                Some(s),
                || ptr(path, "start_block"),
                "start block",
            )?)),
            _ => None,
        };
        let start = unique_source(blocks.len(), &edges)
            .or(explicit)
            .or((!blocks.is_empty()).then_some(BlockId(0)));
        Ok(Region {
            label: label_of(v),
            kind,
            blocks,
            edges,
            start,
            path: path.to_string(),
        })
    }

    fn block(&mut self, v: &mut Json, path: &str) -> Result<Block> {
        let t = type_of(v, path)?;
        let label = label_of(v);
        let kind = match t {
            "SDFGState" => BlockKind::State(self.state(v, path)?),
            "ControlFlowRegion" | "FunctionCallRegion" | "NamedRegion" => {
                self.enter(path)?;
                let r = self.region(v, path, RegionKind::Plain)?;
                self.depth -= 1;
                BlockKind::Region(r)
            }
            "LoopRegion" => {
                self.enter(path)?;
                let ap = ptr(path, "attributes");
                let a: LoopAttrsDto = dto(v.get("attributes"), &ap)?;
                let info = LoopInfo {
                    variable: a.loop_variable.filter(|s| !s.is_empty()),
                    init: statements(a.init_statement, &ptr(&ap, "init_statement"))?,
                    condition: condition(a.loop_condition, &ptr(&ap, "loop_condition"))?,
                    update: statements(a.update_statement, &ptr(&ap, "update_statement"))?,
                    inverted: a.inverted,
                    update_before_condition: a.update_before_condition.unwrap_or(true),
                };
                let r = self.region(v, path, RegionKind::Loop(info))?;
                self.depth -= 1;
                BlockKind::Region(r)
            }
            "ConditionalBlock" => {
                self.enter(path)?;
                let bp = ptr(path, "branches");
                let mut branches = Vec::new();
                get_array(v, "branches", path)?;
                for (i, br) in array_mut(v, "branches").iter_mut().enumerate() {
                    let p = ptr(&bp, i);
                    let pair = br
                        .as_array_mut()
                        .filter(|a| a.len() == 2)
                        .ok_or_else(|| Error::format(&p, "a branch must be [condition, region]"))?;
                    let cond = if pair[0].is_null() {
                        None
                    } else {
                        let c: CodeDto = dto(Some(&pair[0]), &ptr(&p, 0))?;
                        Some(condition(Some(c), &ptr(&p, 0))?)
                    };
                    let rp = ptr(&p, 1);
                    let rt = type_of(&pair[1], &rp)?;
                    if rt != "ControlFlowRegion" {
                        return Err(Error::format(
                            ptr(&rp, "type"),
                            format!("branch body must be a ControlFlowRegion, found '{rt}'"),
                        ));
                    }
                    branches.push((cond, self.region(&mut pair[1], &rp, RegionKind::Plain)?));
                }
                self.depth -= 1;
                BlockKind::Conditional(branches)
            }
            "BreakBlock" => BlockKind::Break,
            "ContinueBlock" => BlockKind::Continue,
            "ReturnBlock" => BlockKind::Return,
            other => {
                return Err(Error::unsupported(
                    ptr(path, "type"),
                    format!("control-flow block type '{other}'"),
                ));
            }
        };
        Ok(Block {
            label,
            kind,
            path: path.to_string(),
        })
    }

    fn state(&mut self, v: &mut Json, path: &str) -> Result<State> {
        let np = ptr(path, "nodes");
        let ids = id_index(get_array(v, "nodes", path)?, &np)?;
        let nodes = array_mut(v, "nodes");
        // Nested SDFGs are numbered in document order: read those states in order.
        let parallel = !nodes
            .iter()
            .any(|n| n.get("type").and_then(Json::as_str) == Some("NestedSDFG"));
        let read = |r: &mut Reader, i: usize, n: &mut Json<'_>| {
            let p = ptr(&np, i);
            let entry = match n.get("scope_entry") {
                Some(s) if !s.is_null() => Some(NodeId(lookup(
                    &ids,
                    Some(s),
                    || ptr(&p, "scope_entry"),
                    "scope entry",
                )?)),
                _ => None,
            };
            Ok((entry, r.node(n, &p, &ids)?))
        };
        let (scope_entry_of, mut out): (Vec<Option<NodeId>>, Vec<Node>) =
            self.read_list(nodes, parallel, &read)?.into_iter().unzip();
        // A map exit's `scope_entry` is its own entry; its scope is the entry's scope.
        for i in 0..out.len() {
            out[i].scope = match &out[i].kind {
                NodeKind::MapExit { entry } => scope_entry_of[entry.index()],
                _ => scope_entry_of[i],
            };
        }
        let ep = ptr(path, "edges");
        get_array(v, "edges", path)?;
        let read = |_: &mut Reader, i: usize, e: &mut Json<'_>| {
            let p = ptr(&ep, i);
            let src = NodeId(lookup(
                &ids,
                e.get("src"),
                || ptr(&p, "src"),
                "source node",
            )?);
            let dst = NodeId(lookup(
                &ids,
                e.get("dst"),
                || ptr(&p, "dst"),
                "destination node",
            )?);
            let conn = |k: &str| -> Result<Option<String>> {
                match e.get(k) {
                    None | Some(Json::Null) => Ok(None),
                    Some(Json::String(s)) => Ok(Some(s.to_string())),
                    Some(other) => Err(Error::format(
                        ptr(&p, k),
                        format!("connector must be a string, found {}", kind_of(other)),
                    )),
                }
            };
            let (src_conn, dst_conn) = (conn("src_connector")?, conn("dst_connector")?);
            let data = e
                .get("attributes")
                .and_then(|a| a.get("data"))
                .and_then(|d| d.get("attributes"));
            let memlet = memlet(data, &|| format!("{p}/attributes/data/attributes"))?;
            Ok(DataEdge {
                src,
                src_conn,
                dst,
                dst_conn,
                memlet,
                path: p,
            })
        };
        let edges = self.read_list(array_mut(v, "edges"), true, &read)?;
        Ok(State { nodes: out, edges })
    }

    fn node(&mut self, v: &mut Json, path: &str, ids: &Ids) -> Result<Node> {
        let t = type_of(v, path)?;
        let ap = ptr(path, "attributes");
        let attrs = v.get("attributes");
        let kind = match t {
            "AccessNode" => {
                let a: AccessDto = dto(attrs, &ap)?;
                let data = a
                    .data
                    .ok_or_else(|| Error::format(&ap, "access node without 'data'"))?;
                NodeKind::Access(AccessNode {
                    data,
                    setzero: a.setzero,
                })
            }
            "MapEntry" => {
                let a: MapDto = dto(attrs, &ap)?;
                let range = match member(attrs, "range") {
                    Some(r) => subset(r, &|| ptr(&ap, "range"))?.unwrap_or_default(),
                    None => Vec::new(),
                };
                if range.len() != a.params.len() {
                    return Err(Error::invalid(
                        &ap,
                        format!(
                            "map '{}' has {} parameters but {} ranges",
                            a.label,
                            a.params.len(),
                            range.len()
                        ),
                    ));
                }
                let exit = NodeId(lookup(
                    ids,
                    v.get("scope_exit"),
                    || ptr(path, "scope_exit"),
                    "map exit",
                )?);
                let gpu_block_size = match &a.gpu_block_size {
                    None => None,
                    Some(_) => Some(
                        elements(attrs, "gpu_block_size")
                            .iter()
                            .enumerate()
                            .map(|(i, x)| {
                                let p = ptr(&ptr(&ap, "gpu_block_size"), i);
                                match sym(x, &p)? {
                                    Expr::Int(n) if n > 0 => Ok(n),
                                    _ => Err(Error::unsupported(
                                        p,
                                        "a GPU block size that is not a positive integer",
                                    )),
                                }
                            })
                            .collect::<Result<Vec<i64>>>()?,
                    ),
                };
                NodeKind::MapEntry(MapEntry {
                    label: a.label,
                    params: a.params,
                    range,
                    schedule: schedule(Some(&a.schedule), &ptr(&ap, "schedule"))?,
                    collapse: a.collapse,
                    gpu_block_size,
                    omp_num_threads: a.omp_num_threads,
                    unroll: a.unroll,
                    exit,
                })
            }
            "MapExit" => {
                let entry = NodeId(lookup(
                    ids,
                    v.get("scope_entry"),
                    || ptr(path, "scope_entry"),
                    "map entry",
                )?);
                NodeKind::MapExit { entry }
            }
            "Tasklet" => NodeKind::Tasklet(self.tasklet(attrs, &ap, &label_of(v))?),
            "NestedSDFG" => {
                let a: NestedDto = dto(attrs, &ap)?;
                let sp = ptr(&ap, "sdfg");
                let inner = v
                    .get_mut("attributes")
                    .and_then(|x| x.get_mut("sdfg"))
                    .filter(|x| !x.is_null())
                    .ok_or_else(|| Error::format(&ap, "nested SDFG node without 'sdfg'"))?;
                let sdfg = self.sdfg(inner, &sp)?;
                let attrs = v.get("attributes");
                let mp = ptr(&ap, "symbol_mapping");
                let mut symbol_mapping: NameMap<Expr> = NameMap::default();
                for (k, e) in entries(attrs, "symbol_mapping") {
                    symbol_mapping.insert(k.to_string(), sym(e, &ptr(&mp, k))?);
                }
                symbol_mapping.sort_keys();
                NodeKind::Nested(NestedSdfg {
                    sdfg: Box::new(sdfg),
                    symbol_mapping,
                    inputs: connectors(attrs, "in_connectors", &ap)?,
                    outputs: connectors(attrs, "out_connectors", &ap)?,
                    schedule: schedule(a.schedule.as_deref(), &ptr(&ap, "schedule"))?,
                    used_symbols: Default::default(),
                })
            }
            "LibraryNode" => NodeKind::Library(self.library(v, path)?),
            "ConsumeEntry" | "ConsumeExit" | "PipelineEntry" | "PipelineExit" => {
                return Err(Error::unsupported(
                    ptr(path, "type"),
                    format!("dataflow node type '{t}'"),
                ));
            }
            other => {
                return Err(Error::unsupported(
                    ptr(path, "type"),
                    format!("dataflow node type '{other}'"),
                ));
            }
        };
        Ok(Node {
            label: label_of(v),
            scope: None,
            kind,
            path: path.to_string(),
        })
    }

    fn tasklet(&mut self, attrs: Option<&Json>, ap: &str, label: &str) -> Result<Tasklet> {
        let a: TaskletDto = dto(attrs, ap)?;
        let what = |part: &'static str| move || format!("{part} of tasklet '{label}'");
        let code = code_block(
            a.code,
            Language::Python,
            &ptr(ap, "code"),
            &what("the code"),
        )?;
        let stmts = match code.language {
            Language::Python => python::parse_tasklet(&code.code)
                .map_err(|e| py_err(e, &ptr(ap, "code"), &format!("tasklet '{label}'")))?,
            Language::Cpp => Vec::new(),
        };
        let side_effects = a.side_effects.unwrap_or(code.language == Language::Cpp);
        Ok(Tasklet {
            environments: a.environments,
            code,
            stmts,
            code_global: code_block(
                a.code_global,
                Language::Cpp,
                &ptr(ap, "code_global"),
                &what("the global code"),
            )?,
            code_init: code_block(
                a.code_init,
                Language::Cpp,
                &ptr(ap, "code_init"),
                &what("the init code"),
            )?,
            code_exit: code_block(
                a.code_exit,
                Language::Cpp,
                &ptr(ap, "code_exit"),
                &what("the exit code"),
            )?,
            side_effects,
            inputs: connectors(attrs, "in_connectors", ap)?,
            outputs: connectors(attrs, "out_connectors", ap)?,
        })
    }

    fn library(&mut self, v: &Json, path: &str) -> Result<LibraryNode> {
        let classpath = get(v, "classpath", path)?
            .as_str()
            .ok_or_else(|| Error::format(ptr(path, "classpath"), "'classpath' must be a string"))?
            .to_string();
        let ap = ptr(path, "attributes");
        let attrs = v.get("attributes");
        let a: LibraryDto = dto(attrs, &ap)?;
        let class = classpath.rsplit('.').next().unwrap_or("");
        let opt = |k: &str| -> Result<Option<Expr>> {
            match member(attrs, k) {
                None | Some(Json::Null) => Ok(None),
                Some(x) => sym(x, &ptr(&ap, k)).map(Some),
            }
        };
        let flag = |k: &str| matches!(member(attrs, k), Some(Json::Bool(true)));
        let kind = match class {
            "Reduce" => {
                let w = a
                    .wcr
                    .as_deref()
                    .ok_or_else(|| Error::format(&ap, "Reduce without 'wcr'"))?;
                LibraryKind::Reduce {
                    axes: a.axes.clone(),
                    wcr: parse_wcr(w, &ptr(&ap, "wcr"))?,
                    identity: opt("identity")?,
                }
            }
            "MatMul" => LibraryKind::MatMul {
                alpha: opt("alpha")?.unwrap_or(Expr::Int(1)),
                beta: opt("beta")?.unwrap_or(Expr::Int(0)),
            },
            "Dot" => LibraryKind::Dot,
            "Gemv" => LibraryKind::Gemv {
                alpha: opt("alpha")?.unwrap_or(Expr::Int(1)),
                beta: opt("beta")?.unwrap_or(Expr::Int(0)),
                trans_a: flag("transA"),
            },
            "Gemm" => LibraryKind::Gemm {
                alpha: opt("alpha")?.unwrap_or(Expr::Int(1)),
                beta: opt("beta")?.unwrap_or(Expr::Int(0)),
                trans_a: flag("transA"),
                trans_b: flag("transB"),
            },
            "Ger" => LibraryKind::Ger {
                alpha: opt("alpha")?.unwrap_or(Expr::Int(1)),
            },
            "Axpy" => LibraryKind::Axpy {
                a: opt("a")?.unwrap_or_else(|| Expr::sym("a")),
            },
            "Transpose" => LibraryKind::Transpose,
            "TensorTranspose" => LibraryKind::TensorTranspose {
                axes: a.axes.clone().unwrap_or_default(),
                alpha: opt("alpha")?.unwrap_or(Expr::Int(1)),
                beta: opt("beta")?.unwrap_or(Expr::Int(0)),
            },
            "ReduceWithSkipValues" => {
                let required = |k: &str| -> Result<Expr> {
                    opt(k)?.ok_or_else(|| {
                        Error::unsupported(
                            ptr(&ap, k),
                            format!("ReduceWithSkipValues without '{k}'"),
                        )
                    })
                };
                let conn = |k: &str| -> Result<String> {
                    member(attrs, k)
                        .and_then(Json::as_str)
                        .map(str::to_string)
                        .ok_or_else(|| {
                            Error::format(ptr(&ap, k), format!("'{k}' must be a string"))
                        })
                };
                let w = a.wcr.as_deref().ok_or_else(|| {
                    Error::unsupported(ptr(&ap, "wcr"), "ReduceWithSkipValues without 'wcr'")
                })?;
                LibraryKind::ReduceWithSkipValues {
                    wcr: parse_wcr(w, &ptr(&ap, "wcr"))?,
                    identity: required("identity")?,
                    init: required("init")?,
                    input_conn: conn("input_conn")?,
                    output_conn: conn("output_conn")?,
                    mask_conn: conn("mask_conn")?,
                }
            }
            _ => {
                return Err(Error::unsupported(
                    ptr(path, "classpath"),
                    format!("library node '{}' ({classpath})", label_of(v)),
                ));
            }
        };
        Ok(LibraryNode {
            name: a.name.clone(),
            classpath,
            kind,
            inputs: entries(attrs, "in_connectors")
                .map(|(k, _)| k.to_string())
                .collect(),
            outputs: entries(attrs, "out_connectors")
                .map(|(k, _)| k.to_string())
                .collect(),
            schedule: schedule(a.schedule.as_deref(), &ptr(&ap, "schedule"))?,
        })
    }
}

fn unique_source(n: usize, edges: &[InterstateEdge]) -> Option<BlockId> {
    let mut has_in = vec![false; n];
    for e in edges {
        has_in[e.dst.index()] = true;
    }
    let mut sources = has_in
        .iter()
        .enumerate()
        .filter(|(_, h)| !**h)
        .map(|(i, _)| BlockId(i as u32));
    match (sources.next(), sources.next()) {
        (Some(s), None) => Some(s),
        _ => None,
    }
}

fn row_major_strides(shape: &[Expr]) -> Vec<Expr> {
    let mut strides = vec![Expr::Int(1); shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = Expr::bin(BinaryOp::Mul, strides[i + 1].clone(), shape[i + 1].clone());
    }
    strides
}

/// One value of a constant: a JSON number or bool, or the string DaCe
/// writes for a numpy scalar (`str(np.bool_(True))` is `"True"`,
/// `str(np.float32(0.25))` is `"0.25"`, also `"inf"`, `"-inf"`, `"nan"`).
fn scalar_value(v: &Json, path: &str) -> Result<ConstValue> {
    match v {
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(ConstValue::Int(i.into()))
            } else if let Some(u) = n.as_u64() {
                Ok(ConstValue::Int(u.into()))
            } else {
                n.as_f64()
                    .map(ConstValue::Float)
                    .ok_or_else(|| Error::format(path, "number out of range"))
            }
        }
        Json::Bool(b) => Ok(ConstValue::Bool(*b)),
        Json::String(s) => {
            let t = s.trim();
            match t {
                "True" | "true" => return Ok(ConstValue::Bool(true)),
                "False" | "false" => return Ok(ConstValue::Bool(false)),
                _ => {}
            }
            if let Ok(i) = t.parse::<i128>() {
                return Ok(ConstValue::Int(i));
            }
            let numeric = t
                .trim_start_matches(['+', '-'])
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit() || c == '.');
            let special = matches!(
                t.trim_start_matches(['+', '-']),
                "inf" | "infinity" | "Infinity" | "nan" | "NaN"
            );
            if (numeric || special)
                && let Ok(f) = t.parse::<f64>()
            {
                return Ok(ConstValue::Float(f));
            }
            if t.ends_with('j') || t.ends_with("j)") {
                return Err(Error::unsupported(
                    path,
                    format!("complex constant value '{t}'"),
                ));
            }
            Err(Error::format(
                path,
                format!("expected a number or a boolean, found the string '{t}'"),
            ))
        }
        other => Err(Error::format(
            path,
            format!("expected a number, found {}", kind_of(other)),
        )),
    }
}

/// A value that the constant's type cannot hold (an integer out of range, a
/// fraction or a non-finite value in an integer type).
fn check_constant_value(v: ConstValue, t: DType) -> std::result::Result<(), String> {
    let Some((lo, hi)) = t.int_range() else {
        return Ok(());
    };
    let i = match v {
        ConstValue::Float(f) if f.fract() != 0.0 || !f.is_finite() => {
            return Err(format!(
                "the value {f} is not an integer, but the constant is {t}"
            ));
        }
        other => other.as_int().unwrap_or_default(),
    };
    if i < lo || i > hi {
        return Err(format!(
            "the value {i} does not fit the constant's type {t}"
        ));
    }
    Ok(())
}

/// One element of a constant: a number, or for complex types also Python's
/// repr of a complex number (`"(1+2j)"`, `"-1.5j"`, `"(nan-infj)"`), as DaCe
/// stores them; (real, imaginary) parts.
fn element_value(v: &Json, path: &str, complex: bool) -> Result<(ConstValue, f64)> {
    match v {
        Json::String(s) if complex => parse_complex(s)
            .map(|(re, im)| (ConstValue::Float(re), im))
            .ok_or_else(|| Error::format(path, format!("invalid complex number {s:?}"))),
        other => Ok((scalar_value(other, path)?, 0.0)),
    }
}

/// Python's `repr(complex)`: `1j`, `(1+2j)`, `(-0-1j)`, `(1e+300+infj)`.
pub fn parse_complex(s: &str) -> Option<(f64, f64)> {
    let t = s.trim();
    let t = t
        .strip_prefix('(')
        .and_then(|x| x.strip_suffix(')'))
        .unwrap_or(t);
    let body = t.strip_suffix('j').or_else(|| t.strip_suffix('J'));
    let Some(body) = body else {
        return t.parse::<f64>().ok().map(|re| (re, 0.0));
    };
    let num = |x: &str| -> Option<f64> {
        match x.trim_start_matches('+') {
            "nan" | "-nan" => Some(f64::NAN),
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            y => y.parse::<f64>().ok(),
        }
    };
    // The sign that splits the parts: the last '+'/'-' not at the start and
    // not right after an exponent 'e'.
    let b = body.as_bytes();
    let split = (1..b.len())
        .rev()
        .find(|&i| (b[i] == b'+' || b[i] == b'-') && !matches!(b[i - 1], b'e' | b'E'));
    match split {
        Some(i) => Some((num(&body[..i])?, num(&body[i..])?)),
        None => Some((0.0, num(body)?)),
    }
}

fn flatten(
    v: &Json,
    out: &mut Vec<(ConstValue, f64)>,
    shape: &mut Vec<usize>,
    depth: usize,
    path: &str,
    complex: bool,
) -> Result<()> {
    match v {
        Json::Array(items) => {
            if shape.len() == depth {
                shape.push(items.len());
            } else if shape[depth] != items.len() {
                return Err(Error::format(path, "ragged constant array"));
            }
            for (i, x) in items.iter().enumerate() {
                flatten(x, out, shape, depth + 1, &ptr(path, i), complex)?;
            }
            Ok(())
        }
        other => {
            out.push(element_value(other, path, complex)?);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_complex_reprs() {
        assert_eq!(parse_complex("(1+2j)"), Some((1.0, 2.0)));
        assert_eq!(parse_complex("(3-1j)"), Some((3.0, -1.0)));
        assert_eq!(parse_complex("1j"), Some((0.0, 1.0)));
        assert_eq!(parse_complex("-1.5j"), Some((0.0, -1.5)));
        assert_eq!(parse_complex("(-0-1j)"), Some((-0.0, -1.0)));
        assert_eq!(parse_complex("(1e-05+2.5e+300j)"), Some((1e-5, 2.5e300)));
        assert_eq!(parse_complex("(-1e-05-2e-07j)"), Some((-1e-5, -2e-7)));
        assert_eq!(parse_complex("(1+infj)"), Some((1.0, f64::INFINITY)));
        let (re, im) = parse_complex("(nan-infj)").unwrap();
        assert!(re.is_nan() && im == f64::NEG_INFINITY);
        assert_eq!(parse_complex("2.5"), Some((2.5, 0.0)));
        assert_eq!(parse_complex("(1+2)"), None);
        assert_eq!(parse_complex("abc"), None);
    }

    /// An SDFG with one state of `pairs` access-node/tasklet pairs chained
    /// by memlets; `bad` lists node indices whose access node has no data.
    fn big_state(pairs: usize, bad: &[usize]) -> String {
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        for k in 0..pairs {
            let (a, t) = (2 * k, 2 * k + 1);
            let data = if bad.contains(&a) {
                ""
            } else {
                r#""data": "A""#
            };
            nodes.push(format!(
                r#"{{"type": "AccessNode", "label": "A", "attributes": {{{data}}}, "scope_entry": null, "id": {a}}}"#
            ));
            nodes.push(format!(
                r#"{{"type": "Tasklet", "label": "t{k}", "attributes": {{"code": {{"string_data": "__out = __in1 + {k}.0", "language": "Python"}}, "in_connectors": {{"__in1": null}}, "out_connectors": {{"__out": null}}}}, "scope_entry": null, "id": {t}}}"#
            ));
            let memlet = |i: usize| {
                format!(
                    r#"{{"data": {{"type": "Memlet", "attributes": {{"data": "A", "subset": {{"type": "Range", "ranges": [{{"start": "{i}", "end": "{i}", "step": "1", "tile": "1"}}]}}}}}}}}"#
                )
            };
            edges.push(format!(
                r#"{{"type": "MultiConnectorEdge", "attributes": {}, "src": "{a}", "dst": "{t}", "src_connector": null, "dst_connector": "__in1"}}"#,
                memlet(k)
            ));
            if k + 1 < pairs {
                edges.push(format!(
                    r#"{{"type": "MultiConnectorEdge", "attributes": {}, "src": "{t}", "dst": "{}", "src_connector": "__out", "dst_connector": null}}"#,
                    memlet(k + 1),
                    a + 2
                ));
            }
        }
        format!(
            r#"{{"type": "SDFG", "attributes": {{"name": "big", "_arrays": {{"A": {{"type": "Array", "attributes": {{"shape": ["N"], "strides": ["1"], "total_size": "N", "offset": ["0"], "dtype": "float64"}}}}}}, "symbols": {{"N": "int64"}}, "arg_names": ["A"]}}, "nodes": [{{"type": "SDFGState", "label": "s", "id": 0, "nodes": [{}], "edges": [{}]}}], "edges": [], "start_block": 0}}"#,
            nodes.join(", "),
            edges.join(", ")
        )
    }

    #[test]
    fn long_lists_read_on_two_threads_give_the_same_ir() {
        let text = big_state(PARALLEL_ELEMENTS, &[]);
        let two = load_str_with(&text, true).unwrap();
        let one = load_str_with(&text, false).unwrap();
        let BlockKind::State(st) = &one.body.blocks[0].kind else {
            panic!("not a state")
        };
        assert_eq!(st.nodes.len(), 2 * PARALLEL_ELEMENTS);
        assert_eq!(format!("{two:?}"), format!("{one:?}"));
    }

    #[test]
    fn long_lists_read_on_two_threads_report_the_first_error() {
        // Errors in both halves: the one earlier in the list is reported.
        let n = PARALLEL_ELEMENTS;
        let text = big_state(n, &[200, 2 * n - 2]);
        let two = load_str_with(&text, true).unwrap_err().to_string();
        let one = load_str_with(&text, false).unwrap_err().to_string();
        assert_eq!(two, one);
        assert!(two.contains("/nodes/0/nodes/200/"), "{two}");
        // Only in the second half.
        let text = big_state(n, &[2 * n - 2]);
        let two = load_str_with(&text, true).unwrap_err().to_string();
        assert_eq!(two, load_str_with(&text, false).unwrap_err().to_string());
    }

    /// An SDFG whose `constants_prop` is `consts` (a JSON object body).
    fn with_constants(consts: &str) -> String {
        format!(
            r#"{{"type": "SDFG", "attributes": {{"name": "c", "_arrays": {{}}, "symbols": {{}}, "constants_prop": {{{consts}}}}}, "nodes": [{{"type": "SDFGState", "label": "s", "id": 0, "nodes": [], "edges": []}}], "edges": [], "start_block": 0}}"#
        )
    }

    fn scalar(dtype: &str, value: &str) -> String {
        let t = if dtype.is_empty() {
            String::new()
        } else {
            format!(r#""dtype": "{dtype}", "#)
        };
        format!(r#"[{{"type": "Scalar", "attributes": {{{t}"shape": ["1"]}}}}, {value}]"#)
    }

    /// Complex constants: Python's `repr` strings (DaCe's spelling) and plain
    /// numbers, scalar and ndarray; real parts in `values`, imaginary in `imag`.
    #[test]
    fn complex_constants_keep_both_parts() {
        use ConstValue::*;
        let arr = r#"[{"type": "Array", "attributes": {"dtype": "complex64", "shape": ["2"]}}, {"type": "ndarray", "data": ["(1-0.5j)", 3]}]"#;
        let text = with_constants(&format!(
            r#""Z": {}, "R": {}, "A": {arr}"#,
            scalar("complex128", r#""(1+2j)""#),
            scalar("complex128", "4")
        ));
        let sdfg = load_str(&text).unwrap();
        let z = &sdfg.constants["Z"];
        assert_eq!(
            (z.values.clone(), z.imag.clone()),
            (vec![Float(1.0)], vec![2.0])
        );
        let r = &sdfg.constants["R"];
        assert_eq!(
            (r.values.clone(), r.imag.clone()),
            (vec![Int(4)], vec![0.0])
        );
        let a = &sdfg.constants["A"];
        assert_eq!(a.dtype, DType::Complex64);
        assert_eq!(a.values, vec![Float(1.0), Int(3)]);
        assert_eq!(a.imag, vec![-0.5, 0.0]);
        // Real constants carry no imaginary parts.
        let text = with_constants(&format!(r#""D": {}"#, scalar("float64", "2.5")));
        assert!(load_str(&text).unwrap().constants["D"].imag.is_empty());
    }

    /// Every spelling DaCe 1.0.2 and 2.x write for a constant's value: JSON
    /// numbers and bools, the strings of numpy scalars (`"True"`, `"7"`,
    /// `"0.25"`, `"-inf"`), Python's bare `Infinity`/`NaN` tokens, ndarrays;
    /// an int64 beyond 2^53 stays exact; a descriptor without `dtype` is int32.
    #[test]
    fn constants_in_every_spelling() {
        let consts = [
            ("B", scalar("bool", "true")),
            ("NB", scalar("bool", r#""False""#)),
            ("NBT", scalar("bool", r#""True""#)),
            ("I", scalar("int64", "5")),
            ("I32", scalar("", r#""7""#)),
            ("U8", scalar("uint8", r#""200""#)),
            ("BIG", scalar("int64", r#""9007199254740993""#)),
            ("BIGN", scalar("int64", "9007199254740993")),
            ("U64", scalar("uint64", "18446744073709551615")),
            ("F", scalar("float64", "1.5")),
            ("F32", scalar("float32", r#""0.25""#)),
            ("E", scalar("float64", r#""1e-05""#)),
            ("NI", scalar("float64", r#""-inf""#)),
            ("PI", scalar("float64", "Infinity")),
            ("MI", scalar("float64", "-Infinity")),
            ("NN", scalar("float64", "NaN")),
            (
                "A",
                r#"[{"type": "Array", "attributes": {"dtype": "float64", "shape": ["3"]}}, {"type": "ndarray", "data": [NaN, -Infinity, 1.0], "dtype": "float64"}]"#.to_string(),
            ),
            (
                "BA",
                r#"[{"type": "Array", "attributes": {"dtype": "bool", "shape": ["2"]}}, {"type": "ndarray", "data": [true, false], "dtype": "bool"}]"#.to_string(),
            ),
        ];
        let body: Vec<String> = consts
            .iter()
            .map(|(k, v)| format!(r#""{k}": {v}"#))
            .collect();
        let sdfg = load_str(&with_constants(&body.join(", "))).unwrap();
        let one = |k: &str| {
            let c = &sdfg.constants[k];
            assert!(c.shape.is_empty(), "{k}");
            (c.dtype, c.values[0])
        };
        use ConstValue::*;
        assert_eq!(one("B"), (DType::Bool, Bool(true)));
        assert_eq!(one("NB"), (DType::Bool, Bool(false)));
        assert_eq!(one("NBT"), (DType::Bool, Bool(true)));
        assert_eq!(one("I"), (DType::Int64, Int(5)));
        assert_eq!(one("I32"), (DType::Int32, Int(7)));
        assert_eq!(one("U8"), (DType::UInt8, Int(200)));
        assert_eq!(one("BIG"), (DType::Int64, Int(9007199254740993)));
        assert_eq!(one("BIGN"), (DType::Int64, Int(9007199254740993)));
        assert_eq!(one("U64"), (DType::UInt64, Int(u64::MAX.into())));
        assert_eq!(one("F"), (DType::Float64, Float(1.5)));
        assert_eq!(one("F32"), (DType::Float32, Float(0.25)));
        assert_eq!(one("E"), (DType::Float64, Float(1e-5)));
        assert_eq!(one("NI"), (DType::Float64, Float(f64::NEG_INFINITY)));
        assert_eq!(one("PI"), (DType::Float64, Float(f64::INFINITY)));
        assert_eq!(one("MI"), (DType::Float64, Float(f64::NEG_INFINITY)));
        assert!(matches!(one("NN").1, Float(f) if f.is_nan()));
        let a = &sdfg.constants["A"];
        assert_eq!(a.shape, vec![3]);
        assert!(matches!(a.values[0], Float(f) if f.is_nan()));
        assert_eq!(&a.values[1..], &[Float(f64::NEG_INFINITY), Float(1.0)]);
        assert_eq!(sdfg.constants["BA"].values, vec![Bool(true), Bool(false)]);
    }

    /// Constant values that cannot be compiled are refused by name, located.
    #[test]
    fn bad_constant_values_are_refused() {
        for (c, want) in [
            (
                scalar("float64", r#""(1+2j)""#),
                "unsupported: complex constant",
            ),
            (scalar("complex128", r#""(1+2j""#), "invalid complex number"),
            (
                scalar("uint8", "300"),
                "does not fit the constant's type uint8",
            ),
            (scalar("int32", "1.5"), "is not an integer"),
            (
                scalar("int32", r#""seven""#),
                "expected a number or a boolean",
            ),
        ] {
            let err = load_str(&with_constants(&format!(r#""K": {c}"#)))
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{err}");
            assert!(err.contains("/attributes/constants_prop/K/1"), "{err}");
        }
    }

    /// DaCe 1.0.2 writes a `SymExpr` range bound as `{"main": ..., "approx": ...}`
    /// (DaCe 2 as `SymExpr(main, approx)`): the exact expression counts.
    #[test]
    fn symexpr_bounds_in_both_spellings() {
        let text = r#"{"type": "SDFG", "attributes": {"name": "s", "_arrays": {"A": {"type": "Array", "attributes": {"shape": ["N"], "strides": ["1"], "total_size": "N", "offset": ["0"], "dtype": "float64"}}}, "symbols": {"N": "int64"}}, "nodes": [{"type": "SDFGState", "label": "s", "id": 0, "nodes": [{"type": "AccessNode", "label": "A", "attributes": {"data": "A"}, "id": 0, "scope_entry": null}, {"type": "AccessNode", "label": "A", "attributes": {"data": "A"}, "id": 1, "scope_entry": null}], "edges": [{"type": "MultiConnectorEdge", "attributes": {"data": {"type": "Memlet", "attributes": {"data": "A", "subset": {"type": "Range", "ranges": [{"start": {"main": "N - 2", "approx": "0"}, "end": "SymExpr(N - 1, N)", "step": "1", "tile": "1"}]}}}}, "src": "0", "dst": "1", "src_connector": null, "dst_connector": null}]}], "edges": [], "start_block": 0}"#;
        let sdfg = load_str(text).unwrap();
        let BlockKind::State(st) = &sdfg.body.blocks[0].kind else {
            panic!("not a state")
        };
        let r = &st.edges[0].memlet.subset.as_ref().unwrap()[0];
        assert_eq!(r.start, python::parse_expr("N - 2").unwrap());
        assert_eq!(r.end, python::parse_expr("N - 1").unwrap());
    }
}
