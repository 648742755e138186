//! DaCe `Structure` containers (`dace.data.Structure`), lowered at load.
//!
//! DaCe 1.0.2 passes a structure as a pointer to a C struct whose array
//! members are pointers, scalar members values and nested structures
//! pointers (`dtypes.struct.emit_definition`, `Structure.as_arg`), and names
//! a member `A.indptr` in memlets and interstate code. Here each member
//! becomes a container of its own, named by a C identifier (`A_indptr`):
//!
//! * members of a structure argument are bound at the top of each function
//!   from the structure's pointer (`int *A_indptr = A->indptr;`, a scalar
//!   member `float *A_D = &A->D;`, see [`Member`]); the structure itself
//!   stays a pointer parameter (a one-element container of
//!   [`DType::Struct`]), passed whole to nested SDFGs;
//! * members of a transient structure are transients like any other (every
//!   memory mode); the structure itself is no container, and a memlet that
//!   moves it whole is refused by name.
//!
//! Access nodes of a structure are split per member named by their edges
//! (members are disjoint memory, so no order between them is lost).
//! * a `StructureView` is a pointer to a struct (a view of an element of a
//!   `ContainerArray` of structures, `CSRMatrix *vcsr = A[b];`); its
//!   members are bound from it where the view is declared.
//!
//! A `ContainerArray` (an array of pointers to containers) is an array of
//! [`DType::Pointer`] elements ([`container_dtype`]); views dereference its
//! elements. References stay refused by name.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use super::*;

/// The structures of one SDFG, flattened.
#[derive(Default)]
pub(super) struct Flat {
    /// Containers made of members (and the argument structures themselves).
    pub descs: Vec<(String, DataDesc)>,
    /// Struct types, nested ones first.
    pub types: Vec<StructType>,
    /// Dotted member name -> container name.
    renames: BTreeMap<String, String>,
    /// Structure name (after renaming) -> its members' container names,
    /// whether it is transient and whether it is a `StructureView`.
    structs: BTreeMap<String, (BTreeSet<String>, bool, bool)>,
}

impl Flat {
    /// True if the SDFG has no structures.
    pub fn is_empty(&self) -> bool {
        self.structs.is_empty()
    }
}

/// Reads the `Structure` entries of `_arrays` (the others are left to the caller).
pub(super) fn flatten(r: &mut Reader, av: Option<&Json>, arrp: &str) -> Result<Flat> {
    let mut f = Flat::default();
    let taken: BTreeSet<String> = entries(av, "_arrays").map(|(k, _)| k.to_string()).collect();
    let mut taken = taken;
    for (k, d) in entries(av, "_arrays") {
        let p = ptr(arrp, k);
        let t = type_of(d, &p)?;
        if matches!(t, "ContainerArray" | "ContainerView") {
            stype_types(r, &mut f, &taken, d, &p, k)?;
            continue;
        }
        // A `Tensor` is a Structure whose members DaCe derives from its
        // sparse format (`order`, `dim_sizes`, `values`, `idx<k>_pos`, ...).
        if !matches!(t, "Structure" | "StructureView" | "Tensor") {
            continue;
        }
        let view = t == "StructureView";
        let transient = member(d.get("attributes"), "transient")
            .and_then(|t| match t {
                Json::Bool(b) => Some(*b),
                _ => None,
            })
            .unwrap_or(false);
        // A view's members are bound from the struct it points to, like an
        // argument's (where the view is declared).
        let kind = if view {
            Kind::View
        } else if transient {
            Kind::Transient
        } else {
            Kind::Argument
        };
        structure(r, &mut f, &mut taken, d, &p, k, k, None, kind)?;
    }
    Ok(f)
}

/// What a structure is to its SDFG.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An argument (or a member of one): a pointer parameter.
    Argument,
    /// A transient: its members are transients, it is no container.
    Transient,
    /// A `StructureView`: a pointer declared where the view is.
    View,
}

/// The element type of a `ContainerArray` / `ContainerView` (DaCe's
/// `dtypes.pointer(stype.dtype)`, or the structure's pointer type): a
/// pointer to its `stype`, whose C type is the `stype`'s followed by `*`.
pub(super) fn container_dtype(d: &Json, path: &str, name: &str) -> Result<DType> {
    Ok(DType::Pointer(StructName::new(&container_ctype(
        d, path, name,
    )?)))
}

fn container_ctype(d: &Json, path: &str, name: &str) -> Result<String> {
    let ap = ptr(path, "attributes");
    let sp = ptr(&ap, "stype");
    let Some(st) = member(d.get("attributes"), "stype").filter(|s| !s.is_null()) else {
        return Err(Error::unsupported(
            &sp,
            format!("container array '{name}' without an element type (void*)"),
        ));
    };
    let inner = match type_of(st, &sp)? {
        "Structure" => {
            let n = member(st.get("attributes"), "name")
                .and_then(Json::as_str)
                .unwrap_or("");
            if !c_ident(n) {
                return Err(Error::unsupported(
                    ptr(&ptr(&sp, "attributes"), "name"),
                    format!(
                        "container array '{name}': structure type name '{n}' is not a C identifier"
                    ),
                ));
            }
            // DaCe's `ContainerArray` of a structure has the structure's
            // dtype, a pointer to it.
            return Ok(format!("{n}*"));
        }
        "Array" | "Scalar" => {
            let (t, n) = match member(st.get("attributes"), "dtype") {
                Some(x) => located(|p| vdtype(x, p), || ptr(&ptr(&sp, "attributes"), "dtype"))?,
                None => (DType::Int32, 1),
            };
            if n > 1 || t.is_opaque() {
                return Err(Error::unsupported(
                    &sp,
                    format!("container array '{name}' of elements of type {t}"),
                ));
            }
            t.ctype().to_string()
        }
        "ContainerArray" => container_ctype(st, &sp, name)?,
        other => {
            return Err(Error::unsupported(
                &sp,
                format!("container array '{name}' of elements of type {other}"),
            ));
        }
    };
    Ok(format!("{inner}*"))
}

/// Registers the struct types a container array's elements point to (their
/// members are reached only through views).
fn stype_types(
    r: &mut Reader,
    f: &mut Flat,
    taken: &BTreeSet<String>,
    d: &Json,
    path: &str,
    dotted: &str,
) -> Result<()> {
    let sp = ptr(&ptr(path, "attributes"), "stype");
    let Some(st) = member(d.get("attributes"), "stype").filter(|s| !s.is_null()) else {
        return Ok(());
    };
    match type_of(st, &sp)? {
        "Structure" => {
            let mut scratch = Flat::default();
            let mut t = taken.clone();
            structure(
                r,
                &mut scratch,
                &mut t,
                st,
                &sp,
                dotted,
                dotted,
                None,
                Kind::View,
            )?;
            for ty in scratch.types {
                add_type(f, ty, &sp)?;
            }
            Ok(())
        }
        "ContainerArray" => stype_types(r, f, taken, st, &sp, dotted),
        _ => Ok(()),
    }
}

fn add_type(f: &mut Flat, ty: StructType, path: &str) -> Result<()> {
    match f.types.iter().find(|t| t.name == ty.name) {
        Some(t) if *t != ty => Err(Error::unsupported(
            path,
            format!("two different structure types named '{}'", ty.name),
        )),
        Some(_) => Ok(()),
        None => {
            f.types.push(ty);
            Ok(())
        }
    }
}

fn c_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// One structure (an argument, a transient or a member): its type, its
/// container (arguments only) and its members.
#[allow(clippy::too_many_arguments)]
fn structure(
    r: &mut Reader,
    f: &mut Flat,
    taken: &mut BTreeSet<String>,
    d: &Json,
    path: &str,
    dotted: &str,
    cname: &str,
    parent: Option<Member>,
    kind: Kind,
) -> Result<String> {
    let transient = kind == Kind::Transient;
    let ap = ptr(path, "attributes");
    let av = d.get("attributes");
    let tname = member(av, "name")
        .and_then(Json::as_str)
        .unwrap_or("Structure")
        .to_string();
    if !c_ident(&tname) {
        return Err(Error::unsupported(
            ptr(&ap, "name"),
            format!("structure '{dotted}': type name '{tname}' is not a C identifier"),
        ));
    }
    if let Some(s) = member(av, "storage").and_then(Json::as_str)
        && !matches!(s, "Default" | "CPU_Heap" | "Register")
    {
        return Err(Error::unsupported(
            ptr(&ap, "storage"),
            format!("structure '{dotted}' in storage {s} (structures are CPU only)"),
        ));
    }
    // DaCe's Structure is one struct (shape [1]); anything else is not
    // DaCe's and would not be laid out as it says.
    if let Some(shape) = member(av, "shape") {
        let one = |x: &Json| match x {
            Json::String(t) => t.trim() == "1",
            Json::Number(n) => n.as_u64() == Some(1),
            _ => false,
        };
        if !shape.as_array().is_some_and(|a| a.len() == 1 && one(&a[0])) {
            return Err(Error::unsupported(
                ptr(&ap, "shape"),
                format!(
                    "structure '{dotted}' of a shape other than [1] (a Structure is one \
                     struct; arrays of structures are ContainerArrays)"
                ),
            ));
        }
    }
    let view = kind == Kind::View && parent.is_none();
    if !transient {
        f.descs.push((
            cname.to_string(),
            DataDesc {
                kind: if view {
                    DataKind::View
                } else {
                    DataKind::Array
                },
                dtype: DType::Struct(StructName::new(&tname)),
                shape: vec![Expr::Int(1)],
                strides: vec![Expr::Int(1)],
                total_size: Expr::Int(1),
                offset: vec![Expr::Int(0)],
                start_offset: Expr::Int(0),
                transient: view,
                storage: Storage::CpuHeap,
                lifetime: Lifetime::Scope,
                pool: false,
                may_alias: false,
                path: path.to_string(),
                member: parent,
            },
        ));
    }
    let mp = ptr(&ap, "members");
    let mut fields = Vec::new();
    let mut uses = Vec::new();
    let mut names = BTreeSet::new();
    for (i, m) in elements(av, "members").iter().enumerate() {
        let pair = m
            .as_array()
            .filter(|a| a.len() == 2)
            .ok_or_else(|| Error::format(ptr(&mp, i), "a member must be [name, descriptor]"))?;
        let mname = pair[0]
            .as_str()
            .ok_or_else(|| Error::format(ptr(&mp, i), "a member name must be a string"))?;
        let p = ptr(&ptr(&mp, i), 1);
        if !c_ident(mname) {
            return Err(Error::unsupported(
                &p,
                format!("structure '{dotted}': member name '{mname}' is not a C identifier"),
            ));
        }
        let mdotted = format!("{dotted}.{mname}");
        let mut mc = format!("{cname}_{mname}");
        while taken.contains(&mc) {
            mc.push('_');
        }
        taken.insert(mc.clone());
        f.renames.insert(mdotted.clone(), mc.clone());
        names.insert(mc.clone());
        let bind = (!transient).then(|| Member {
            parent: cname.to_string(),
            field: mname.to_string(),
        });
        // A member that is a symbolic expression (a Tensor's `value_count`):
        // a scalar field of the struct that no container holds; its type
        // is the struct type's (DaCe's `symtype`, int32 where unnamed).
        if matches!(pair[1], Json::String(_) | Json::Number(_)) {
            let t = struct_field_type(av, mname, &ptr(&ap, "dtype"))?.unwrap_or(DType::Int32);
            fields.push((mname.to_string(), t.ctype().to_string()));
            continue;
        }
        let t = type_of(&pair[1], &p)?;
        match t {
            "Structure" => {
                let sub = structure(r, f, taken, &pair[1], &p, &mdotted, &mc, bind, kind)?;
                fields.push((mname.to_string(), format!("{sub}*")));
                uses.push(sub);
            }
            "Array" | "Scalar" | "ContainerArray" => {
                if t == "ContainerArray" {
                    stype_types(r, f, taken, &pair[1], &p, &mdotted)?;
                }
                let mut desc = r.data(&pair[1], &p, &mdotted)?;
                if t == "ContainerArray" && transient {
                    return Err(Error::unsupported(
                        &p,
                        format!("container array member '{mdotted}' of a transient structure"),
                    ));
                }
                if vector::container_veclen(&pair[1], &p)? > 1 {
                    return Err(Error::unsupported(
                        &p,
                        format!("structure member '{mdotted}' of vector type"),
                    ));
                }
                if desc.storage.is_gpu() {
                    return Err(Error::unsupported(
                        &p,
                        format!(
                            "structure member '{mdotted}' in GPU storage (structures are CPU only)"
                        ),
                    ));
                }
                desc.transient = transient;
                desc.member = bind;
                let ct = desc.dtype.ctype();
                fields.push((
                    mname.to_string(),
                    if desc.kind == DataKind::Scalar {
                        ct.to_string()
                    } else {
                        format!("{ct}*")
                    },
                ));
                f.descs.push((mc, desc));
            }
            other => {
                return Err(Error::unsupported(
                    &p,
                    format!("structure member '{mdotted}' of type {other}"),
                ));
            }
        }
    }
    let ty = StructType {
        name: tname.clone(),
        fields,
        uses,
    };
    add_type(f, ty, path)?;
    // Members of nested structures are members too (`A.csr.indptr` on an
    // edge of `A`).
    for n in names.clone() {
        if let Some((sub, _, _)) = f.structs.get(&n) {
            names.extend(sub.iter().cloned());
        }
    }
    f.structs
        .insert(cname.to_string(), (names, transient, view));
    Ok(tname)
}

/// The type of field `name` in a structure's own struct type
/// (`dtype`: a pointer to a struct whose `data` lists `[name, type]`).
fn struct_field_type(av: Option<&Json>, name: &str, path: &str) -> Result<Option<DType>> {
    let data = member(av, "dtype")
        .and_then(|d| d.get("dtype"))
        .and_then(|d| d.get("data"))
        .and_then(Json::as_array)
        .unwrap_or(&[]);
    for (i, f) in data.iter().enumerate() {
        if let Some([Json::String(n), t]) = f.as_array()
            && n == name
        {
            let fp = ptr(&ptr(&ptr(&ptr(path, "dtype"), "data"), i), 1);
            return dtype(t, &fp).map(Some);
        }
    }
    Ok(None)
}

/// Renames `A.member` to its container in every string of an SDFG's graph
/// (memlets, interstate code, ranges; not tasklet code or nested SDFGs),
/// then splits the access nodes of structures per member.
pub(super) fn rewrite(f: &Flat, v: &mut Json, path: &str) -> Result<()> {
    if f.is_empty() {
        return Ok(());
    }
    if let Some(nodes) = v.get_mut("nodes") {
        rename(f, nodes);
    }
    if let Some(edges) = v.get_mut("edges") {
        rename(f, edges);
    }
    split(f, v, path)
}

fn rename(f: &Flat, v: &mut Json) {
    match v {
        Json::String(s) => {
            if s.contains('.')
                && let Some(n) = rename_str(f, s)
            {
                *s = Cow::Owned(n);
            }
        }
        Json::Array(a) => {
            for x in a {
                rename(f, x);
            }
        }
        Json::Object(o) => {
            let tasklet = matches!(o.get("type"), Some(Json::String(t)) if t == "Tasklet");
            for (k, x) in o.iter_mut() {
                if k == "debuginfo" || k == "sdfg" || (tasklet && k == "code") {
                    continue;
                }
                rename(f, x);
            }
        }
        _ => {}
    }
}

/// `s` with every dotted chain `A.m.k` that names a member replaced by its
/// container (the longest one that does), or None if nothing changes.
fn rename_str(f: &Flat, s: &str) -> Option<String> {
    let b = s.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = String::new();
    let mut last = 0;
    let mut i = 0;
    let mut changed = false;
    while i < b.len() {
        let starts = (b[i].is_ascii_alphabetic() || b[i] == b'_')
            && (i == 0 || !(ident(b[i - 1]) || b[i - 1] == b'.'));
        if !starts {
            i += 1;
            continue;
        }
        // The chain of identifiers joined by dots from here.
        let mut ends = Vec::new();
        let mut j = i;
        loop {
            while j < b.len() && ident(b[j]) {
                j += 1;
            }
            ends.push(j);
            if j + 1 < b.len()
                && b[j] == b'.'
                && (b[j + 1].is_ascii_alphabetic() || b[j + 1] == b'_')
            {
                j += 1;
            } else {
                break;
            }
        }
        let hit = ends
            .iter()
            .rev()
            .filter(|&&e| e > i)
            .find_map(|&e| f.renames.get(&s[i..e]).map(|n| (e, n)));
        match hit {
            Some((e, n)) => {
                out.push_str(&s[last..i]);
                out.push_str(n);
                last = e;
                i = e;
                changed = true;
            }
            None => i = *ends.last().unwrap_or(&j),
        }
    }
    changed.then(|| {
        out.push_str(&s[last..]);
        out
    })
}

fn memlet_data(e: &Json) -> Option<String> {
    e.get("attributes")?
        .get("data")?
        .get("attributes")?
        .get("data")?
        .as_str()
        .map(str::to_string)
}

fn node_key(j: &Json) -> Option<String> {
    match j {
        Json::String(s) => Some(s.to_string()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Splits access nodes of structures per member in every state below `v`.
fn split(f: &Flat, v: &mut Json, path: &str) -> Result<()> {
    let is_state = matches!(v.get("type"), Some(Json::String(t)) if t == "SDFGState");
    let Some(Json::Array(nodes)) = v.get_mut("nodes") else {
        return Ok(());
    };
    if !is_state {
        for (i, n) in nodes.iter_mut().enumerate() {
            split(f, n, &ptr(&ptr(path, "nodes"), i))?;
        }
        return Ok(());
    }
    // Access nodes of structures: index -> structure.
    let mut targets: Vec<(usize, String)> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if matches!(n.get("type"), Some(Json::String(t)) if t == "AccessNode")
            && let Some(d) = n
                .get("attributes")
                .and_then(|a| a.get("data"))
                .and_then(Json::as_str)
            && f.structs.contains_key(d)
        {
            targets.push((i, d.to_string()));
        }
    }
    if targets.is_empty() {
        return Ok(());
    }
    let ids: Vec<Option<String>> = nodes
        .iter()
        .map(|n| n.get("id").and_then(node_key))
        .collect();
    let mut next_id = nodes
        .iter()
        .filter_map(|n| n.get("id").and_then(node_key))
        .filter_map(|k| k.parse::<u64>().ok())
        .max()
        .map_or(0, |m| m + 1);
    // (edge index, is source side) -> new node id.
    let mut retarget: Vec<(usize, bool, u64)> = Vec::new();
    let mut new_nodes: Vec<Json> = Vec::new();
    let mut scope_of_new: Vec<(Option<String>, u64)> = Vec::new();
    for (i, sname) in &targets {
        let Some(id) = &ids[*i] else { continue };
        let npath = ptr(&ptr(path, "nodes"), i);
        let (members, transient, view) = &f.structs[sname];
        // Group the edges by the member they name.
        let mut groups: BTreeMap<String, Vec<(usize, bool)>> = BTreeMap::new();
        if let Some(Json::Array(edges)) = v.get("edges") {
            for (k, e) in edges.iter().enumerate() {
                for (side, key) in [(true, "src"), (false, "dst")] {
                    if e.get(key).and_then(node_key).as_deref() != Some(id.as_str()) {
                        continue;
                    }
                    let ep = ptr(&ptr(path, "edges"), k);
                    let data = memlet_data(e).unwrap_or_default();
                    let g = if data == *sname || data.is_empty() {
                        sname.clone()
                    } else if members.contains(&data) {
                        data
                    } else if *view && !f.renames.values().any(|m| *m == data) {
                        // The edge that defines the view (its memlet names
                        // the viewed container).
                        sname.clone()
                    } else {
                        return Err(Error::unsupported(
                            ep,
                            format!(
                                "an edge of structure '{sname}' whose memlet names '{data}', \
                                 neither the structure nor one of its members"
                            ),
                        ));
                    };
                    groups.entry(g).or_default().push((k, side));
                }
            }
        }
        let whole = groups.contains_key(sname);
        if *transient && whole {
            return Err(Error::unsupported(
                npath,
                format!(
                    "transient structure '{sname}' moved or passed as a whole (only its members are supported)"
                ),
            ));
        }
        if whole && groups.len() > 1 && !*view {
            let sides: BTreeSet<bool> = groups.values().flatten().map(|(_, s)| *s).collect();
            if sides.len() > 1 {
                return Err(Error::unsupported(
                    npath,
                    format!(
                        "an access node of structure '{sname}' both read and written, \
                         as a whole and through members"
                    ),
                ));
            }
        }
        let mut first = true;
        for (g, es) in &groups {
            if first {
                // This node becomes the first group's.
                first = false;
                set_data(&mut nodes_mut(v)[*i], g);
                continue;
            }
            let mut n = nodes_mut(v)[*i].clone();
            set_data(&mut n, g);
            if let Some(o) = n.as_object_mut()
                && let Some(x) = o.get_mut("id")
            {
                *x = Json::Number(next_id.into());
            }
            for (k, side) in es {
                retarget.push((*k, *side, next_id));
            }
            scope_of_new.push((Some(id.clone()), next_id));
            new_nodes.push(n);
            next_id += 1;
        }
        if groups.is_empty() && *transient {
            // An isolated node of a transient structure: nothing to access.
            set_data(
                &mut nodes_mut(v)[*i],
                members.iter().next().unwrap_or(sname),
            );
        }
    }
    if let Some(Json::Array(edges)) = v.get_mut("edges") {
        for (k, side, nid) in &retarget {
            if let Some(o) = edges[*k].as_object_mut()
                && let Some(x) = o.get_mut(if *side { "src" } else { "dst" })
            {
                *x = Json::String(Cow::Owned(nid.to_string()));
            }
        }
    }
    // New nodes join the scope of the node they came from.
    if let Some(Json::Object(sd)) = v.get_mut("scope_dict") {
        for (orig, nid) in &scope_of_new {
            let orig: u64 = orig
                .as_deref()
                .and_then(|o| o.parse().ok())
                .unwrap_or(u64::MAX);
            for (_, list) in sd.iter_mut() {
                if let Json::Array(l) = list
                    && l.iter()
                        .any(|x| node_key(x).and_then(|k| k.parse::<u64>().ok()) == Some(orig))
                {
                    l.push(Json::Number((*nid).into()));
                    break;
                }
            }
        }
    }
    if let Some(Json::Array(ns)) = v.get_mut("nodes") {
        ns.extend(new_nodes);
    }
    Ok(())
}

fn nodes_mut<'v, 'a>(v: &'v mut Json<'a>) -> &'v mut Vec<Json<'a>> {
    match v.get_mut("nodes") {
        Some(Json::Array(n)) => n,
        _ => unreachable!("a state with nodes"),
    }
}

fn set_data(n: &mut Json, data: &str) {
    let Some(o) = n.as_object_mut() else { return };
    if let Some(Json::Object(a)) = o.get_mut("attributes")
        && let Some(x) = a.get_mut("data")
    {
        *x = Json::String(Cow::Owned(data.to_string()));
    }
    if let Some(x) = o.get_mut("label") {
        *x = Json::String(Cow::Owned(data.to_string()));
    }
}
