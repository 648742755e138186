//! Field access with JSON pointers in every error: members, symbols,
//! types, connectors and code blocks.

use super::*;

/// `base` extended by one JSON-pointer segment (`~` and `/` escaped).
pub(super) fn ptr(base: &str, key: impl std::fmt::Display) -> String {
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
pub(super) fn dto<'a, T: Deserialize<'a> + Default>(
    v: Option<&'a Json<'a>>,
    path: &str,
) -> Result<T> {
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

pub(super) fn get<'a>(obj: &'a Json<'a>, key: &str, path: &str) -> Result<&'a Json<'a>> {
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

pub(super) fn get_array<'a>(obj: &'a Json<'a>, key: &str, path: &str) -> Result<&'a [Json<'a>]> {
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
pub(super) fn array_mut<'v, 'a>(obj: &'v mut Json<'a>, key: &str) -> &'v mut [Json<'a>] {
    obj.get_mut(key)
        .and_then(Json::as_array_mut)
        .unwrap_or_default()
}

pub(super) fn kind_of(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

pub(super) fn type_of<'a>(obj: &'a Json<'a>, path: &str) -> Result<&'a str> {
    get(obj, "type", path)?
        .as_str()
        .ok_or_else(|| Error::format(ptr(path, "type"), "'type' must be a string"))
}

pub(super) fn label_of(obj: &Json) -> String {
    obj.get("label")
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_string()
}

pub(super) fn py_err(e: PyError, path: &str, what: &str) -> Error {
    Error::new(
        ErrorKind::Code,
        path,
        format!("{what}: line {}, column {}: {}", e.line, e.col, e.message),
    )
}

/// Parses a symbolic expression given as a JSON string or number.
pub(super) fn sym(v: &Json, path: &str) -> Result<Expr> {
    match v {
        Json::String(s) => {
            if let Some(e) = EXPRS.with(|c| c.borrow().get(s.as_ref()).cloned()) {
                return Ok(e);
            }
            let e = python::parse_expr(s).map_err(|e| py_err(e, path, "symbolic expression"))?;
            let e = crate::front::sympy::lower(e);
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

pub(super) fn sym_list(vs: &[Json], path: impl Fn() -> String) -> Result<Vec<Expr>> {
    vs.iter()
        .enumerate()
        .map(|(i, v)| located(|p| sym(v, p), || ptr(&path(), i)))
        .collect()
}

pub(super) fn dtype(v: &Json, path: &str) -> Result<DType> {
    match vdtype(v, path)? {
        (t, 1) => Ok(t),
        (_, n) => Err(Error::unsupported(
            path,
            format!(
                "vector data type of {n} elements here (only data containers and tasklet connectors may be vectors)"
            ),
        )),
    }
}

/// DaCe's vector lengths with a `dace::vec` (its `DEFINE_VECTYPE_ALLSIZES`).
const VECTOR_LENGTHS: [u32; 5] = [2, 4, 8, 16, 32];

/// A data type and its vector length (1 for scalars; DaCe's
/// `{"type": "vector", "dtype": "float32", "elements": "4"}` is
/// `(Float32, 4)`, and a vector of one element is its element type).
pub(super) fn vdtype(v: &Json, path: &str) -> Result<(DType, u32)> {
    if let Json::Object(o) = v
        && o.get("type").and_then(Json::as_str) == Some("vector")
    {
        let inner = o.get("dtype").unwrap_or(&Json::Null);
        let base = dtype(inner, &ptr(path, "dtype"))?;
        let ep = ptr(path, "elements");
        let n = match o.get("elements") {
            Some(Json::String(s)) => s.trim().parse::<u32>().ok(),
            Some(Json::Number(n)) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
            _ => None,
        }
        .ok_or_else(|| Error::unsupported(&ep, "vector length that is not a number"))?;
        if base.is_opaque() || base.is_complex() {
            return Err(Error::unsupported(
                &ep,
                format!("vector of {}", base.dace_name()),
            ));
        }
        if n != 1 && !VECTOR_LENGTHS.contains(&n) {
            return Err(Error::unsupported(&ep, format!("vector of {n} elements")));
        }
        return Ok((base, n));
    }
    scalar_dtype(v, path).map(|t| (t, 1))
}

fn scalar_dtype(v: &Json, path: &str) -> Result<DType> {
    match v {
        Json::String(s) => DType::from_dace_name(s)
            .ok_or_else(|| Error::unsupported(path, format!("data type '{s}'"))),
        Json::Object(o) => {
            let t = o.get("type").and_then(Json::as_str).unwrap_or("?");
            match t {
                "string" => Ok(DType::Str),
                "opaque" if o.get("ctype").and_then(Json::as_str) == Some("pyobject") => {
                    Ok(DType::PyObject)
                }
                "opaque" if o.get("ctype").and_then(Json::as_str) == Some("MPI_Request") => {
                    Ok(DType::MpiRequest)
                }
                // A struct held by value (an array's or a scalar's element);
                // behind a `pointer`, a structure ([`conn_type`]).
                "struct" => record(o, path),
                _ => Err(Error::unsupported(path, format!("data type of kind '{t}'"))),
            }
        }
        other => Err(Error::format(
            path,
            format!("expected a data type, found {}", kind_of(other)),
        )),
    }
}

/// The C name of a struct type (`{"type": "struct", "name": ...}`).
fn struct_name<'a>(o: &'a crate::front::tree::Object<'a>, path: &str) -> Result<&'a str> {
    match o.get("name").and_then(Json::as_str) {
        Some(n)
            if !n.is_empty()
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !n.starts_with(|c: char| c.is_ascii_digit()) =>
        {
            Ok(n)
        }
        _ => Err(Error::unsupported(path, "a struct type without a C name")),
    }
}

/// A struct held by value: DaCe's `dtypes.struct` (`"data"`: its fields
/// as `[name, type]` pairs, in order). Fields must be scalars; a field that
/// is a pointer, a vector or another struct is refused by name.
fn record(o: &crate::front::tree::Object<'_>, path: &str) -> Result<DType> {
    let name = struct_name(o, path)?;
    let dp = ptr(path, "data");
    let data = o
        .get("data")
        .and_then(Json::as_array)
        .ok_or_else(|| Error::format(&dp, format!("struct '{name}' without a list of fields")))?;
    let mut fields = Vec::new();
    for (i, f) in data.iter().enumerate() {
        let fp = ptr(&dp, i);
        let (fname, ftype) = match f.as_array() {
            Some([Json::String(n), t]) => (n, t),
            _ => return Err(Error::format(&fp, "expected a [name, type] pair")),
        };
        let t = dtype(ftype, &ptr(&fp, 1)).map_err(|mut e| {
            e.message = format!("field '{fname}' of struct '{name}': {}", e.message);
            e
        })?;
        if t.is_opaque() || t.is_complex() || t == DType::Float16 {
            return Err(Error::unsupported(
                &fp,
                format!("field '{fname}' of struct '{name}' of type {t} (fields are scalars)"),
            ));
        }
        if fields.iter().any(|(n, _): &(String, DType)| n == fname) {
            return Err(Error::format(
                &fp,
                format!("struct '{name}' names field '{fname}' twice"),
            ));
        }
        fields.push((fname.to_string(), t));
    }
    if fields.is_empty() {
        return Err(Error::unsupported(
            path,
            format!("struct '{name}' without fields"),
        ));
    }
    Ok(DType::Record(Record::new(name, fields)))
}

/// Whether a symbol's type is DaCe's `callback` (`{"type": "callback", ...}`).
pub(super) fn is_callback_type(v: &Json) -> bool {
    v.get("type").and_then(Json::as_str) == Some("callback")
}

/// DaCe's `callback` type: `arguments` and `returntypes`, each a data
/// descriptor (`Array`, `View`, `Scalar`) or a type name.
pub(super) fn callback_type(v: &Json, path: &str) -> Result<Callback> {
    let value = |x: &Json, p: &str| -> Result<CbValue> {
        match x {
            Json::String(_) => Ok(CbValue::Scalar(dtype(x, p)?)),
            Json::Object(o) => {
                let kind = o.get("type").and_then(Json::as_str).unwrap_or("?");
                let ap = ptr(p, "attributes");
                let attrs = o.get("attributes");
                let t = match attrs.and_then(|a| a.get("dtype")) {
                    Some(d) => dtype(d, &ptr(&ap, "dtype"))?,
                    None => DType::Int32,
                };
                match kind {
                    "Array" | "View" | "ArrayView" => Ok(CbValue::Array(t)),
                    "Scalar" => Ok(CbValue::Scalar(t)),
                    other => Err(Error::unsupported(
                        p,
                        format!("callback argument or return value of type {other}"),
                    )),
                }
            }
            other => Err(Error::format(
                p,
                format!(
                    "expected a data descriptor or type of a callback argument, found {}",
                    kind_of(other)
                ),
            )),
        }
    };
    let list = |key: &str| -> Result<Vec<CbValue>> {
        let lp = ptr(path, key);
        match v.get(key) {
            None | Some(Json::Null) => Ok(Vec::new()),
            Some(Json::Array(xs)) => xs
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    if x.is_null() {
                        Err(Error::unsupported(
                            ptr(&lp, i),
                            "callback argument or return value 'None' (a Python object)",
                        ))
                    } else {
                        value(x, &ptr(&lp, i))
                    }
                })
                .collect(),
            Some(other) => Err(Error::format(
                lp,
                format!("expected a list, found {}", kind_of(other)),
            )),
        }
    };
    Ok(Callback {
        inputs: list("arguments")?,
        returns: list("returntypes")?,
    })
}

pub(super) fn conn_type(v: &Json, path: &str) -> Result<ConnType> {
    match v {
        Json::Null => Ok(ConnType::Unknown),
        Json::Object(o) if o.get("type").and_then(Json::as_str) == Some("pointer") => {
            let inner = o.get("dtype").unwrap_or(&Json::Null);
            let ip = ptr(path, "dtype");
            // A pointer to a struct is a structure (connectors of nested
            // SDFGs that take one).
            if let Json::Object(io) = inner
                && io.get("type").and_then(Json::as_str) == Some("struct")
            {
                return Ok(ConnType::Pointer(DType::Struct(StructName::new(
                    struct_name(io, &ip)?,
                ))));
            }
            Ok(ConnType::Pointer(dtype(inner, &ip)?))
        }
        other => Ok(match vdtype(other, path)? {
            (t, 1) => ConnType::Scalar(t),
            (t, n) => ConnType::Vector(t, n),
        }),
    }
}

/// The member `key` of an attribute object (`None` if absent).
pub(super) fn member<'a>(attrs: Option<&'a Json<'a>>, key: &str) -> Option<&'a Json<'a>> {
    attrs.and_then(|a| a.get(key))
}

/// The entries of the object member `key` (none if absent or not an object;
/// the DTO has checked its kind).
pub(super) fn entries<'a>(
    attrs: Option<&'a Json<'a>>,
    key: &str,
) -> impl Iterator<Item = (&'a str, &'a Json<'a>)> {
    member(attrs, key)
        .and_then(Json::as_object)
        .into_iter()
        .flat_map(|o| o.iter())
}

/// The elements of the list member `key` (empty if absent or not a list).
pub(super) fn elements<'a>(attrs: Option<&'a Json<'a>>, key: &str) -> &'a [Json<'a>] {
    member(attrs, key).and_then(Json::as_array).unwrap_or(&[])
}

pub(super) fn connectors<'a>(
    attrs: Option<&'a Json<'a>>,
    key: &str,
    path: &str,
) -> Result<NameMap<ConnType>> {
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
pub(super) fn located<T>(f: impl Fn(&str) -> Result<T>, at: impl FnOnce() -> String) -> Result<T> {
    f("").or_else(|_| f(&at()))
}

/// A code block at `path` (its `language` absent or null: `default_lang`).
/// A language other than Python and C++ (DaCe also names OpenCL,
/// SystemVerilog and MLIR) is refused by name, as is an unknown one: it is
/// never compiled as if it were Python; `what` names the code's owner.
pub(super) fn code_block(
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

pub(super) fn code_map(m: IndexMap<String, CodeDto>, path: &str) -> Result<NameMap<CodeBlock>> {
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
/// DaCe's data instrumentation (`instrument` of an access node,
/// `symbol_instrument` of a state) with its condition; None for
/// `No_Instrumentation`. The file stem is set once the state's place is
/// known (`number_instruments`).
pub(super) fn data_instrument(
    kind: Option<&str>,
    cond: Option<CodeDto>,
    path: &str,
    key: &str,
) -> Result<Option<Box<DataInstrument>>> {
    let kind = match kind {
        None | Some("No_Instrumentation") => return Ok(None),
        Some("Save") => InstrumentKind::Save,
        Some("Restore") => InstrumentKind::Restore,
        Some(other) => {
            return Err(Error::format(
                ptr(path, key),
                format!("unknown data instrumentation type '{other}'"),
            ));
        }
    };
    let cp = ptr(path, format!("{key}_condition"));
    let c = code_block(cond, Language::Python, &cp, &|| {
        "an instrumentation condition".to_string()
    })?;
    let code = c.code.trim();
    let condition = if code.is_empty() || code == "1" {
        InstrumentCondition::Always
    } else if c.language == Language::Cpp {
        InstrumentCondition::Cpp(code.to_string())
    } else {
        InstrumentCondition::Expr(
            python::parse_expr(code).map_err(|e| py_err(e, &cp, "condition"))?,
        )
    };
    Ok(Some(Box::new(DataInstrument {
        kind,
        condition,
        uuid: String::new(),
    })))
}

pub(super) fn condition(c: Option<CodeDto>, path: &str) -> Result<Expr> {
    let c = code_block(c, Language::Python, path, &|| "a condition".to_string())?;
    if c.code.trim().is_empty() {
        return Ok(Expr::Bool(true));
    }
    if c.language != Language::Python {
        return Err(Error::unsupported(path, "C++ conditions"));
    }
    python::parse_expr(&c.code).map_err(|e| py_err(e, path, "condition"))
}

pub(super) fn statements(c: Option<CodeDto>, path: &str) -> Result<Vec<Stmt>> {
    let c = code_block(c, Language::Python, path, &|| {
        "a loop statement".to_string()
    })?;
    if c.language != Language::Python {
        return Err(Error::unsupported(path, "C++ loop statements"));
    }
    python::parse_code(&c.code).map_err(|e| py_err(e, path, "statement"))
}
