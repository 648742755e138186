//! DaCe's JSON → IR. The graph structure is walked by hand so that every
//! error carries an exact JSON pointer; the attribute bags of each element
//! are serde DTOs whose `Default`s are DaCe's defaults (DaCe omits every
//! property that equals its default).

use indexmap::IndexMap;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::diag::{Error, ErrorKind, Result};
use crate::front::python::{self, PyError};
use crate::ir::*;

/// Deepest nesting of SDFGs and regions sdfgc accepts (guards the stack).
pub const MAX_NESTING: usize = 64;

/// Parses one SDFG JSON document.
pub fn load_str(text: &str) -> Result<Sdfg> {
    let value: Value = serde_json::from_str(text).map_err(syntax_error)?;
    if !value.is_object() {
        return Err(Error::format(
            "",
            format!(
                "the document must be an SDFG (a JSON object), found {}",
                kind_of(&value)
            ),
        ));
    }
    Reader {
        depth: 0,
        next_id: 0,
    }
    .sdfg(&value, "")
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

struct Reader {
    depth: usize,
    next_id: u32,
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
    _arrays: IndexMap<String, Value>,
    symbols: IndexMap<String, Value>,
    constants_prop: IndexMap<String, Value>,
    global_code: IndexMap<String, CodeDto>,
    init_code: IndexMap<String, CodeDto>,
    exit_code: IndexMap<String, CodeDto>,
}

#[derive(Deserialize)]
#[serde(default)]
struct DataAttrsDto {
    dtype: Value,
    shape: Vec<Value>,
    strides: Option<Vec<Value>>,
    total_size: Option<Value>,
    offset: Option<Vec<Value>>,
    start_offset: Value,
    transient: bool,
    storage: String,
    lifetime: String,
    pool: bool,
    may_alias: bool,
}

impl Default for DataAttrsDto {
    fn default() -> Self {
        DataAttrsDto {
            dtype: Value::String("int32".into()),
            shape: vec![Value::String("1".into())],
            strides: None,
            total_size: None,
            offset: None,
            start_offset: Value::from(0),
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

#[derive(Deserialize, Default)]
#[serde(default)]
struct InterstateDto {
    condition: Option<CodeDto>,
    assignments: IndexMap<String, Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AccessDto {
    data: Option<String>,
    setzero: bool,
}

#[derive(Deserialize)]
#[serde(default)]
struct MapDto {
    label: String,
    params: Vec<String>,
    range: Option<Value>,
    schedule: String,
    collapse: i64,
    gpu_block_size: Option<Vec<Value>>,
    omp_num_threads: i64,
    unroll: bool,
}

impl Default for MapDto {
    fn default() -> Self {
        MapDto {
            label: String::new(),
            params: Vec::new(),
            range: None,
            schedule: "Default".into(),
            collapse: 1,
            gpu_block_size: None,
            omp_num_threads: 0,
            unroll: false,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TaskletDto {
    code: Option<CodeDto>,
    code_global: Option<CodeDto>,
    code_init: Option<CodeDto>,
    code_exit: Option<CodeDto>,
    side_effects: Option<bool>,
    in_connectors: IndexMap<String, Value>,
    out_connectors: IndexMap<String, Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct NestedDto {
    // `sdfg` is read by reference from the attributes (deserializing it into
    // the DTO would deep-copy the whole nested subtree at every level).
    symbol_mapping: IndexMap<String, Value>,
    in_connectors: IndexMap<String, Value>,
    out_connectors: IndexMap<String, Value>,
    schedule: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct LibraryDto {
    name: String,
    axes: Option<Vec<i64>>,
    wcr: Option<String>,
    identity: Value,
    alpha: Value,
    beta: Value,
    schedule: Option<String>,
    in_connectors: IndexMap<String, Value>,
    out_connectors: IndexMap<String, Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MemletDto {
    data: Option<String>,
    subset: Option<Value>,
    other_subset: Option<Value>,
    wcr: Option<String>,
    dynamic: bool,
    volume: Value,
    is_data_src: Option<bool>,
}

// ------------------------------------------------------------- helpers ----

fn ptr(base: &str, key: impl std::fmt::Display) -> String {
    let key = key.to_string().replace('~', "~0").replace('/', "~1");
    format!("{base}/{key}")
}

/// Deserializes a DTO, reporting the exact JSON pointer on a type mismatch.
fn dto<T: DeserializeOwned + Default>(v: Option<&Value>, path: &str) -> Result<T> {
    let Some(v) = v else { return Ok(T::default()) };
    if v.is_null() {
        return Ok(T::default());
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

fn get<'a>(obj: &'a Value, key: &str, path: &str) -> Result<&'a Value> {
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

fn get_array<'a>(obj: &'a Value, key: &str, path: &str) -> Result<&'a [Value]> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(Error::format(
            ptr(path, key),
            format!("expected a list, found {}", kind_of(other)),
        )),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn type_of<'a>(obj: &'a Value, path: &str) -> Result<&'a str> {
    get(obj, "type", path)?
        .as_str()
        .ok_or_else(|| Error::format(ptr(path, "type"), "'type' must be a string"))
}

fn label_of(obj: &Value) -> String {
    obj.get("label")
        .and_then(Value::as_str)
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
fn sym(v: &Value, path: &str) -> Result<Expr> {
    match v {
        Value::String(s) => {
            python::parse_expr(s).map_err(|e| py_err(e, path, "symbolic expression"))
        }
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(Expr::Int(i))
            } else if let Some(f) = n.as_f64() {
                Ok(Expr::Float(f))
            } else {
                Err(Error::format(path, format!("number {n} out of range")))
            }
        }
        Value::Bool(b) => Ok(Expr::Bool(*b)),
        other => Err(Error::format(
            path,
            format!("expected a symbolic expression, found {}", kind_of(other)),
        )),
    }
}

fn sym_list(vs: &[Value], path: &str) -> Result<Vec<Expr>> {
    vs.iter()
        .enumerate()
        .map(|(i, v)| sym(v, &ptr(path, i)))
        .collect()
}

fn dtype(v: &Value, path: &str) -> Result<DType> {
    match v {
        Value::String(s) => DType::from_dace_name(s)
            .ok_or_else(|| Error::unsupported(path, format!("data type '{s}'"))),
        Value::Object(o) => {
            let t = o.get("type").and_then(Value::as_str).unwrap_or("?");
            Err(Error::unsupported(path, format!("data type of kind '{t}'")))
        }
        other => Err(Error::format(
            path,
            format!("expected a data type, found {}", kind_of(other)),
        )),
    }
}

fn conn_type(v: &Value, path: &str) -> Result<ConnType> {
    match v {
        Value::Null => Ok(ConnType::Unknown),
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("pointer") => {
            let inner = o.get("dtype").unwrap_or(&Value::Null);
            Ok(ConnType::Pointer(dtype(inner, &ptr(path, "dtype"))?))
        }
        other => Ok(ConnType::Scalar(dtype(other, path)?)),
    }
}

fn connectors(map: &IndexMap<String, Value>, path: &str) -> Result<IndexMap<String, ConnType>> {
    map.iter()
        .map(|(k, v)| Ok((k.clone(), conn_type(v, &ptr(path, k))?)))
        .collect()
}

fn code_block(c: Option<CodeDto>, default_lang: Language) -> CodeBlock {
    let c = c.unwrap_or_default();
    let language = match c.language.as_deref() {
        Some("CPP") | Some("cpp") => Language::Cpp,
        Some("Python") => Language::Python,
        _ => default_lang,
    };
    CodeBlock {
        code: c.string_data,
        language,
    }
}

fn code_map(m: IndexMap<String, CodeDto>) -> IndexMap<String, CodeBlock> {
    m.into_iter()
        .map(|(k, c)| (k, code_block(Some(c), Language::Cpp)))
        .filter(|(_, c)| !c.code.trim().is_empty())
        .collect()
}

/// Parses a Python condition; an empty one is `true`.
fn condition(c: Option<CodeDto>, path: &str) -> Result<Expr> {
    let c = code_block(c, Language::Python);
    if c.code.trim().is_empty() {
        return Ok(Expr::Bool(true));
    }
    if c.language != Language::Python {
        return Err(Error::unsupported(path, "C++ conditions"));
    }
    python::parse_expr(&c.code).map_err(|e| py_err(e, path, "condition"))
}

fn statements(c: Option<CodeDto>, path: &str) -> Result<Vec<Stmt>> {
    let c = code_block(c, Language::Python);
    if c.language != Language::Python {
        return Err(Error::unsupported(path, "C++ loop statements"));
    }
    python::parse_code(&c.code).map_err(|e| py_err(e, path, "statement"))
}

fn id_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Maps the `id` fields of a node list to positions.
fn id_index(items: &[Value], path: &str) -> Result<IndexMap<String, u32>> {
    let mut ids = IndexMap::new();
    for (i, item) in items.iter().enumerate() {
        let id = item
            .get("id")
            .and_then(id_string)
            .unwrap_or_else(|| i.to_string());
        if ids.insert(id.clone(), i as u32).is_some() {
            return Err(Error::invalid(
                ptr(&ptr(path, i), "id"),
                format!("duplicate id {id}"),
            ));
        }
    }
    Ok(ids)
}

fn lookup(ids: &IndexMap<String, u32>, v: Option<&Value>, path: &str, what: &str) -> Result<u32> {
    let Some(v) = v else {
        return Err(Error::format(path, format!("missing {what}")));
    };
    let key = id_string(v).ok_or_else(|| {
        Error::format(path, format!("{what} must be an id, found {}", kind_of(v)))
    })?;
    ids.get(&key)
        .copied()
        .ok_or_else(|| Error::invalid(path, format!("{what} {key} does not exist")))
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

fn subset(v: &Value, path: &str) -> Result<Option<Subset>> {
    if v.is_null() {
        return Ok(None);
    }
    match type_of(v, path)? {
        "Range" => {
            let ranges = get_array(v, "ranges", path)?;
            let rp = ptr(path, "ranges");
            let mut out = Vec::with_capacity(ranges.len());
            for (i, r) in ranges.iter().enumerate() {
                let p = ptr(&rp, i);
                let field = |k: &str, default: i64| -> Result<Expr> {
                    match r.get(k) {
                        None => Ok(Expr::Int(default)),
                        Some(x) => sym(x, &ptr(&p, k)),
                    }
                };
                out.push(RangeDim {
                    start: sym(get(r, "start", &p)?, &ptr(&p, "start"))?,
                    end: sym(get(r, "end", &p)?, &ptr(&p, "end"))?,
                    step: field("step", 1)?,
                    tile: field("tile", 1)?,
                });
            }
            Ok(Some(out))
        }
        "Indices" => {
            let idx = get_array(v, "indices", path)?;
            let ip = ptr(path, "indices");
            let mut out = Vec::with_capacity(idx.len());
            for (i, x) in idx.iter().enumerate() {
                let e = sym(x, &ptr(&ip, i))?;
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
            ptr(path, "type"),
            format!("subset type '{other}'"),
        )),
    }
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

    fn sdfg(&mut self, v: &Value, path: &str) -> Result<Sdfg> {
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
        let attrs: SdfgAttrsDto = dto(v.get("attributes"), &ap)?;
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
        let mut arrays = IndexMap::new();
        for (k, d) in &attrs._arrays {
            arrays.insert(k.clone(), self.data(d, &ptr(&arrp, k), k)?);
        }
        let symp = ptr(&ap, "symbols");
        let mut symbols = IndexMap::new();
        for (k, t) in &attrs.symbols {
            symbols.insert(k.clone(), dtype(t, &ptr(&symp, k))?);
        }
        let cp = ptr(&ap, "constants_prop");
        let mut constants = IndexMap::new();
        for (k, c) in &attrs.constants_prop {
            constants.insert(k.clone(), self.constant(c, &ptr(&cp, k))?);
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
            constants,
            global_code: code_map(attrs.global_code),
            init_code: code_map(attrs.init_code),
            exit_code: code_map(attrs.exit_code),
            body,
            path: path.to_string(),
        })
    }

    fn data(&mut self, v: &Value, path: &str, name: &str) -> Result<DataDesc> {
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
        let a: DataAttrsDto = dto(v.get("attributes"), &ap)?;
        let dt = dtype(&a.dtype, &ptr(&ap, "dtype"))?;
        let shape = sym_list(&a.shape, &ptr(&ap, "shape"))?;
        let rank = shape.len();
        let strides = match &a.strides {
            Some(s) => sym_list(s, &ptr(&ap, "strides"))?,
            None => row_major_strides(&shape),
        };
        let offset = match &a.offset {
            Some(o) => sym_list(o, &ptr(&ap, "offset"))?,
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
        let total_size = match &a.total_size {
            Some(t) => sym(t, &ptr(&ap, "total_size"))?,
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
            start_offset: sym(&a.start_offset, &ptr(&ap, "start_offset"))?,
            transient: a.transient,
            storage,
            lifetime,
            pool: a.pool,
            may_alias: a.may_alias,
            path: path.to_string(),
        })
    }

    fn constant(&mut self, v: &Value, path: &str) -> Result<Constant> {
        let pair = v
            .as_array()
            .filter(|a| a.len() == 2)
            .ok_or_else(|| Error::format(path, "a constant must be [descriptor, value]"))?;
        let desc = self.data(&pair[0], &ptr(path, 0), "constant")?;
        let vp = ptr(path, 1);
        let (values, shape) = match &pair[1] {
            Value::Object(o) => {
                let data = o
                    .get("data")
                    .ok_or_else(|| Error::format(&vp, "ndarray without 'data'"))?;
                let mut flat = Vec::new();
                let mut shape = Vec::new();
                flatten(data, &mut flat, &mut shape, 0, &ptr(&vp, "data"))?;
                (flat, shape)
            }
            scalar => (vec![scalar_value(scalar, &vp)?], Vec::new()),
        };
        Ok(Constant {
            dtype: desc.dtype,
            shape,
            values,
        })
    }

    /// Reads a region-like object (SDFG, ControlFlowRegion, LoopRegion, branch body).
    fn region(&mut self, v: &Value, path: &str, kind: RegionKind) -> Result<Region> {
        let nodes = get_array(v, "nodes", path)?;
        let np = ptr(path, "nodes");
        let ids = id_index(nodes, &np)?;
        let mut blocks = Vec::with_capacity(nodes.len());
        for (i, b) in nodes.iter().enumerate() {
            blocks.push(self.block(b, &ptr(&np, i))?);
        }
        let ep = ptr(path, "edges");
        let mut edges = Vec::new();
        for (i, e) in get_array(v, "edges", path)?.iter().enumerate() {
            let p = ptr(&ep, i);
            let src = BlockId(lookup(&ids, e.get("src"), &ptr(&p, "src"), "source block")?);
            let dst = BlockId(lookup(
                &ids,
                e.get("dst"),
                &ptr(&p, "dst"),
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
            for (k, val) in &a.assignments {
                let vp = ptr(&ptr(&dp, "assignments"), k);
                let e = match val {
                    Value::String(s) => {
                        python::parse_expr(s).map_err(|e| py_err(e, &vp, "assignment"))?
                    }
                    other => sym(other, &vp)?,
                };
                assignments.push((k.clone(), e));
            }
            edges.push(InterstateEdge {
                src,
                dst,
                condition,
                assignments,
                path: p,
            });
        }
        // DaCe's rule: the unique source block if there is one, else `start_block`.
        let explicit = match v.get("start_block") {
            Some(s) if !s.is_null() => Some(BlockId(lookup(
                &ids,
                Some(s),
                &ptr(path, "start_block"),
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

    fn block(&mut self, v: &Value, path: &str) -> Result<Block> {
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
                for (i, br) in get_array(v, "branches", path)?.iter().enumerate() {
                    let p = ptr(&bp, i);
                    let pair = br
                        .as_array()
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
                    branches.push((cond, self.region(&pair[1], &rp, RegionKind::Plain)?));
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

    fn state(&mut self, v: &Value, path: &str) -> Result<State> {
        let nodes = get_array(v, "nodes", path)?;
        let np = ptr(path, "nodes");
        let ids = id_index(nodes, &np)?;
        let mut out = Vec::with_capacity(nodes.len());
        let mut scope_entry_of = Vec::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            let p = ptr(&np, i);
            let entry = match n.get("scope_entry") {
                Some(s) if !s.is_null() => Some(NodeId(lookup(
                    &ids,
                    Some(s),
                    &ptr(&p, "scope_entry"),
                    "scope entry",
                )?)),
                _ => None,
            };
            scope_entry_of.push(entry);
            out.push(self.node(n, &p, &ids)?);
        }
        // A map exit's `scope_entry` is its own entry; its scope is the entry's scope.
        for i in 0..out.len() {
            out[i].scope = match &out[i].kind {
                NodeKind::MapExit { entry } => scope_entry_of[entry.index()],
                _ => scope_entry_of[i],
            };
        }
        let ep = ptr(path, "edges");
        let mut edges = Vec::new();
        for (i, e) in get_array(v, "edges", path)?.iter().enumerate() {
            let p = ptr(&ep, i);
            let src = NodeId(lookup(&ids, e.get("src"), &ptr(&p, "src"), "source node")?);
            let dst = NodeId(lookup(
                &ids,
                e.get("dst"),
                &ptr(&p, "dst"),
                "destination node",
            )?);
            let conn = |k: &str| -> Result<Option<String>> {
                match e.get(k) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(s)) => Ok(Some(s.clone())),
                    Some(other) => Err(Error::format(
                        ptr(&p, k),
                        format!("connector must be a string, found {}", kind_of(other)),
                    )),
                }
            };
            let (src_conn, dst_conn) = (conn("src_connector")?, conn("dst_connector")?);
            let mp = format!("{p}/attributes/data/attributes");
            let data = e
                .get("attributes")
                .and_then(|a| a.get("data"))
                .and_then(|d| d.get("attributes"));
            let memlet = self.memlet(data, &mp)?;
            edges.push(DataEdge {
                src,
                src_conn,
                dst,
                dst_conn,
                memlet,
                path: p,
            });
        }
        Ok(State { nodes: out, edges })
    }

    fn memlet(&mut self, v: Option<&Value>, path: &str) -> Result<Memlet> {
        let m: MemletDto = dto(v, path)?;
        let subset_of = |x: &Option<Value>, k: &str| -> Result<Option<Subset>> {
            match x {
                None => Ok(None),
                Some(x) => subset(x, &ptr(path, k)),
            }
        };
        let wcr = match &m.wcr {
            Some(w) => Some(parse_wcr(w, &ptr(path, "wcr"))?),
            None => None,
        };
        let volume = if m.volume.is_null() {
            Expr::Int(1)
        } else {
            sym(&m.volume, &ptr(path, "volume"))?
        };
        Ok(Memlet {
            data: m.data.clone(),
            subset: subset_of(&m.subset, "subset")?,
            other_subset: subset_of(&m.other_subset, "other_subset")?,
            wcr,
            dynamic: m.dynamic,
            volume,
            is_data_src: m.is_data_src,
        })
    }

    fn node(&mut self, v: &Value, path: &str, ids: &IndexMap<String, u32>) -> Result<Node> {
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
                let range = match &a.range {
                    Some(r) => subset(r, &ptr(&ap, "range"))?.unwrap_or_default(),
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
                    &ptr(path, "scope_exit"),
                    "map exit",
                )?);
                let gpu_block_size = match &a.gpu_block_size {
                    None => None,
                    Some(b) => Some(
                        b.iter()
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
                    &ptr(path, "scope_entry"),
                    "map entry",
                )?);
                NodeKind::MapExit { entry }
            }
            "Tasklet" => NodeKind::Tasklet(self.tasklet(attrs, &ap, &label_of(v))?),
            "NestedSDFG" => {
                let a: NestedDto = dto(attrs, &ap)?;
                let sp = ptr(&ap, "sdfg");
                let inner = attrs
                    .and_then(|x| x.get("sdfg"))
                    .filter(|x| !x.is_null())
                    .ok_or_else(|| Error::format(&ap, "nested SDFG node without 'sdfg'"))?;
                let sdfg = self.sdfg(inner, &sp)?;
                let mp = ptr(&ap, "symbol_mapping");
                let mut symbol_mapping: IndexMap<String, Expr> = IndexMap::new();
                for (k, e) in &a.symbol_mapping {
                    symbol_mapping.insert(k.clone(), sym(e, &ptr(&mp, k))?);
                }
                symbol_mapping.sort_keys();
                NodeKind::Nested(NestedSdfg {
                    sdfg: Box::new(sdfg),
                    symbol_mapping,
                    inputs: connectors(&a.in_connectors, &ptr(&ap, "in_connectors"))?,
                    outputs: connectors(&a.out_connectors, &ptr(&ap, "out_connectors"))?,
                    schedule: schedule(a.schedule.as_deref(), &ptr(&ap, "schedule"))?,
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

    fn tasklet(&mut self, attrs: Option<&Value>, ap: &str, label: &str) -> Result<Tasklet> {
        let a: TaskletDto = dto(attrs, ap)?;
        let code = code_block(a.code, Language::Python);
        let stmts = match code.language {
            Language::Python => python::parse_code(&code.code)
                .map_err(|e| py_err(e, &ptr(ap, "code"), &format!("tasklet '{label}'")))?,
            Language::Cpp => Vec::new(),
        };
        let side_effects = a.side_effects.unwrap_or(code.language == Language::Cpp);
        Ok(Tasklet {
            code,
            stmts,
            code_global: code_block(a.code_global, Language::Cpp),
            code_init: code_block(a.code_init, Language::Cpp),
            code_exit: code_block(a.code_exit, Language::Cpp),
            side_effects,
            inputs: connectors(&a.in_connectors, &ptr(ap, "in_connectors"))?,
            outputs: connectors(&a.out_connectors, &ptr(ap, "out_connectors"))?,
        })
    }

    fn library(&mut self, v: &Value, path: &str) -> Result<LibraryNode> {
        let classpath = get(v, "classpath", path)?
            .as_str()
            .ok_or_else(|| Error::format(ptr(path, "classpath"), "'classpath' must be a string"))?
            .to_string();
        let ap = ptr(path, "attributes");
        let a: LibraryDto = dto(v.get("attributes"), &ap)?;
        let class = classpath.rsplit('.').next().unwrap_or("");
        let opt = |x: &Value, k: &str| -> Result<Option<Expr>> {
            if x.is_null() {
                Ok(None)
            } else {
                sym(x, &ptr(&ap, k)).map(Some)
            }
        };
        let kind = match class {
            "Reduce" => {
                let w = a
                    .wcr
                    .as_deref()
                    .ok_or_else(|| Error::format(&ap, "Reduce without 'wcr'"))?;
                LibraryKind::Reduce {
                    axes: a.axes.clone(),
                    wcr: parse_wcr(w, &ptr(&ap, "wcr"))?,
                    identity: opt(&a.identity, "identity")?,
                }
            }
            "MatMul" => LibraryKind::MatMul {
                alpha: opt(&a.alpha, "alpha")?.unwrap_or(Expr::Int(1)),
                beta: opt(&a.beta, "beta")?.unwrap_or(Expr::Int(0)),
            },
            "Transpose" => LibraryKind::Transpose,
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
            inputs: a.in_connectors.keys().cloned().collect(),
            outputs: a.out_connectors.keys().cloned().collect(),
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

fn scalar_value(v: &Value, path: &str) -> Result<f64> {
    match v {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| Error::format(path, "number out of range")),
        Value::Bool(b) => Ok(if *b { 1.0 } else { 0.0 }),
        other => Err(Error::format(
            path,
            format!("expected a number, found {}", kind_of(other)),
        )),
    }
}

fn flatten(
    v: &Value,
    out: &mut Vec<f64>,
    shape: &mut Vec<usize>,
    depth: usize,
    path: &str,
) -> Result<()> {
    match v {
        Value::Array(items) => {
            if shape.len() == depth {
                shape.push(items.len());
            } else if shape[depth] != items.len() {
                return Err(Error::format(path, "ragged constant array"));
            }
            for (i, x) in items.iter().enumerate() {
                flatten(x, out, shape, depth + 1, &ptr(path, i))?;
            }
            Ok(())
        }
        other => {
            out.push(scalar_value(other, path)?);
            Ok(())
        }
    }
}
