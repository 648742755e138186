//! Validation of a loaded SDFG: everything the passes and writers rely on
//! that the JSON reader alone does not guarantee. Each error is located.
//!
//! [`target`]: what the C++ writer cannot express on the chosen target
//! (library environments, struct data on GPUs, write-conflict
//! resolutions), checked on the prepared program before writing.

use rustc_hash::FxHashSet as HashSet;

mod environments;
pub mod target;
mod wcr;

use crate::diag::{Error, Result};
use crate::ir::simplify::eval_int;
use crate::ir::*;

/// Validates `sdfg` and every nested SDFG.
pub fn validate(sdfg: &Sdfg) -> Result<()> {
    validate_sdfg(sdfg, &HashSet::default())
}

/// Validates one SDFG; `mapped` holds the symbols a nested SDFG node maps
/// into it (empty at the top level).
fn validate_sdfg(sdfg: &Sdfg, mapped: &HashSet<&str>) -> Result<()> {
    // Names a symbolic expression may refer to inside this SDFG (borrowed
    // from the IR: nothing is copied).
    let names = sdfg.defined_names(mapped.iter().copied());
    // A view's shape may name the parameters of the map it is used in (DaCe
    // writes `x[i*n:(i+1)*n]` in a map over `i` as a view of extent
    // `-n*i + n*(i + 1)`): only its strides and offset locate elements.
    let map_names: Vec<&str> = if sdfg.arrays.values().any(|d| d.kind == DataKind::View) {
        map_scope_names(&sdfg.body)
    } else {
        Vec::new()
    };
    for (name, d) in &sdfg.arrays {
        let scoped: &[&str] = if d.kind == DataKind::View {
            &map_names
        } else {
            &[]
        };
        for (what, list, extra) in [
            ("shape", &d.shape, scoped),
            ("strides", &d.strides, &[][..]),
            ("offset", &d.offset, &[][..]),
        ] {
            for e in list.iter() {
                check_names_in(e, &names, extra, &d.path, || format!("{what} of '{name}'"))?;
            }
        }
        check_shape(name, d)?;
        check_names_in(&d.total_size, &names, scoped, &d.path, || {
            format!("total size of '{name}'")
        })?;
    }
    validate_region(sdfg, &sdfg.body, &names)
}

/// A shape entry that is a constant must be a non-negative integer (DaCe
/// sizes are integers; symbolic entries are decided at run time).
fn check_shape(name: &str, d: &DataDesc) -> Result<()> {
    for (i, e) in d.shape.iter().enumerate() {
        let path = format!("{}/attributes/shape/{i}", d.path);
        if let Expr::Float(f) = e {
            return Err(Error::invalid(
                path,
                format!("dimension {i} of '{name}' has size {f}, which is not an integer"),
            ));
        }
        if let Some(v) = eval_int(e, &mut |_| None)
            && v < 0
        {
            return Err(Error::invalid(
                path,
                format!("dimension {i} of '{name}' has negative size {v}"),
            ));
        }
    }
    Ok(())
}

fn check_names(
    e: &Expr,
    names: &HashSet<&str>,
    path: &str,
    what: impl FnOnce() -> String,
) -> Result<()> {
    check_names_in(e, names, &[], path, what)
}

/// `check_names` with extra names (map parameters) on top of `names`, so
/// that no set is cloned per node or edge.
fn check_names_in(
    e: &Expr,
    names: &HashSet<&str>,
    extra: &[&str],
    path: &str,
    what: impl FnOnce() -> String,
) -> Result<()> {
    let mut missing = None;
    e.visit_names(&mut |n| {
        if missing.is_none() && !names.contains(n) && !extra.contains(&n) {
            missing = Some(n.to_string());
        }
    });
    match missing {
        Some(n) => Err(Error::invalid(
            path,
            format!("{} uses symbol '{n}', which is not defined", what()),
        )),
        None => Ok(()),
    }
}

/// `x is None` ([`Func::IsNone`]) in interstate code: DaCe prints
/// `x == nullptr`, which compiles for an array (a pointer) only.
fn check_none_tests(sdfg: &Sdfg, e: &Expr, path: &str) -> Result<()> {
    fn find<'e>(sdfg: &Sdfg, e: &'e Expr) -> Option<&'e Expr> {
        match e {
            Expr::Call(Func::IsNone, args) => args.iter().find(|a| {
                !matches!(a, Expr::Sym(n) if sdfg.arrays.get(n)
                    .is_some_and(|d| d.kind != DataKind::Scalar))
            }),
            Expr::Call(_, args) => args.iter().find_map(|a| find(sdfg, a)),
            Expr::Unary(_, a) => find(sdfg, a),
            Expr::Binary(_, a, b) => find(sdfg, a).or_else(|| find(sdfg, b)),
            Expr::Ternary(c, a, b) => find(sdfg, c)
                .or_else(|| find(sdfg, a))
                .or_else(|| find(sdfg, b)),
            Expr::Index(_, idx) => idx.iter().find_map(|i| find(sdfg, i)),
            Expr::Field(a, _) => find(sdfg, a),
            Expr::Record(_, fields) => fields.iter().find_map(|(_, a)| find(sdfg, a)),
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Sym(_) => None,
        }
    }
    match find(sdfg, e) {
        Some(x) => Err(Error::unsupported(
            path,
            format!(
                "'{} is None' of something other than an array (DaCe prints it as a \
                 comparison with nullptr, which only a pointer compares with)",
                crate::ir::cexpr::to_cpp(x)
            ),
        )),
        None => Ok(()),
    }
}

/// `k = round(z)` on an interstate edge with a complex `z` and a symbol `k`
/// that is not complex (Python's `round(z)`, which DaCe's frontend types as
/// an integer): DaCe's `round` of a complex value is complex (dace/math.h)
/// and its own generated code does not compile either (no conversion to the
/// symbol's type).
fn check_complex_round(sdfg: &Sdfg, k: &str, v: &Expr, path: &str) -> Result<()> {
    fn complex_data(sdfg: &Sdfg, e: &Expr) -> bool {
        match e {
            Expr::Sym(n) | Expr::Index(n, _) => {
                sdfg.arrays.get(n).is_some_and(|d| d.dtype.is_complex())
            }
            Expr::Call(_, args) => args.iter().any(|a| complex_data(sdfg, a)),
            Expr::Unary(_, a) => complex_data(sdfg, a),
            Expr::Binary(_, a, b) => complex_data(sdfg, a) || complex_data(sdfg, b),
            _ => false,
        }
    }
    fn rounds(sdfg: &Sdfg, e: &Expr) -> bool {
        match e {
            Expr::Call(Func::Round, args) => args.iter().any(|a| complex_data(sdfg, a)),
            Expr::Call(_, args) => args.iter().any(|a| rounds(sdfg, a)),
            Expr::Unary(_, a) => rounds(sdfg, a),
            Expr::Binary(_, a, b) => rounds(sdfg, a) || rounds(sdfg, b),
            Expr::Ternary(c, a, b) => rounds(sdfg, c) || rounds(sdfg, a) || rounds(sdfg, b),
            _ => false,
        }
    }
    if sdfg.symbol_type(k).is_none_or(|t| t.is_complex()) || !rounds(sdfg, v) {
        return Ok(());
    }
    Err(Error::unsupported(
        path,
        format!(
            "'{k} = {}': round of a complex value into a symbol that is not complex (DaCe's \
             round of a complex number is complex; DaCe's generated code does not compile either)",
            crate::ir::cexpr::to_cpp(v)
        ),
    ))
}

fn validate_region(sdfg: &Sdfg, r: &Region, names: &HashSet<&str>) -> Result<()> {
    for e in &r.edges {
        check_names(&e.condition, names, &e.path, || {
            "interstate condition".into()
        })?;
        check_none_tests(sdfg, &e.condition, &e.path)?;
        for (k, v) in &e.assignments {
            check_names(v, names, &e.path, || "interstate assignment".into())?;
            check_none_tests(sdfg, v, &e.path)?;
            check_complex_round(sdfg, k, v, &e.path)?;
        }
    }
    if let RegionKind::Loop(l) = &r.kind {
        check_names(&l.condition, names, &r.path, || "loop condition".into())?;
        check_none_tests(sdfg, &l.condition, &r.path)?;
    }
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => validate_state(sdfg, st, &b.label, names)?,
            BlockKind::Region(inner) => validate_region(sdfg, inner, names)?,
            BlockKind::Conditional(brs) => {
                for (c, body) in brs {
                    if let Some(c) = c {
                        check_names(c, names, &b.path, || "branch condition".into())?;
                        check_none_tests(sdfg, c, &b.path)?;
                    }
                    validate_region(sdfg, body, names)?;
                }
            }
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }
    Ok(())
}

fn validate_state(sdfg: &Sdfg, st: &State, label: &str, names: &HashSet<&str>) -> Result<()> {
    let node = |id: NodeId| &st.nodes[id.index()];
    check_map_exits(st, label)?;
    check_container_arrays(sdfg, st, label)?;
    for (idx, n) in st.nodes.iter().enumerate() {
        match &n.kind {
            NodeKind::Access(a) if !sdfg.arrays.contains_key(&a.data) => {
                return Err(Error::invalid(
                    &n.path,
                    format!(
                        "access node '{}' in state '{label}' refers to unknown data '{}'",
                        n.label, a.data
                    ),
                ));
            }
            NodeKind::MapEntry(m) => {
                let exit_ok = matches!(st.nodes.get(m.exit.index()).map(|x| &x.kind), Some(NodeKind::MapExit { entry }) if st.nodes.get(entry.index()).map(|e| std::ptr::eq(e, n)).unwrap_or(false));
                if !exit_ok {
                    return Err(Error::invalid(
                        &n.path,
                        format!(
                            "map '{}' in state '{label}': its scope_exit is not its matching map exit",
                            m.label
                        ),
                    ));
                }
                // A range may use the map's earlier parameters (DaCe writes
                // `_i0 = _j0 + tid : ...`): the loops nest in parameter order.
                // GPU maps spread their parameters over the grid or the block,
                // so there the ranges must not depend on one another.
                // It may use its own dynamic inputs too (defined before its loops).
                check_dynamic_inputs(sdfg, st, NodeId(idx as u32), m, label)?;
                let mut known = scope_params(st, n.scope);
                known.extend(m.dynamic_inputs.keys().map(String::as_str));
                let gpu = matches!(m.schedule, Schedule::GpuDevice | Schedule::GpuThreadBlock);
                for (k, (r, p)) in m.range.iter().zip(&m.params).enumerate() {
                    for e in [&r.start, &r.end, &r.step] {
                        check_names_in(e, names, &known, &n.path, || {
                            format!("range of map '{}'", m.label)
                        })?;
                        let mut dependent = None;
                        e.visit_names(&mut |x| {
                            if m.params[..k].iter().any(|q| q == x) {
                                dependent = Some(x.to_string());
                            }
                        });
                        if let (true, Some(q)) = (gpu, dependent) {
                            return Err(Error::unsupported(
                                &n.path,
                                format!(
                                    "GPU map '{}': the range of '{p}' depends on its parameter '{q}'",
                                    m.label
                                ),
                            ));
                        }
                    }
                    known.push(p);
                }
            }
            NodeKind::Nested(ns) => validate_nested(ns, n, label)?,
            NodeKind::Tasklet(t) => check_callback(sdfg, st, NodeId(idx as u32), t, label)?,
            _ => {}
        }
        if let Some(s) = n.scope
            && !matches!(node(s).kind, NodeKind::MapEntry(_))
        {
            return Err(Error::invalid(
                &n.path,
                format!(
                    "node '{}' in state '{label}' has a scope entry that is not a map entry",
                    n.label
                ),
            ));
        }
    }
    for e in &st.edges {
        if let Some(d) = &e.memlet.data {
            if !sdfg.arrays.contains_key(d) {
                return Err(Error::invalid(
                    format!("{}/attributes/data/attributes/data", e.path),
                    format!("memlet in state '{label}' refers to unknown data '{d}'"),
                ));
            }
            let dims = sdfg.arrays[d].rank();
            for (what, sub) in [
                ("subset", &e.memlet.subset),
                ("other_subset", &e.memlet.other_subset),
            ] {
                if let Some(sub) = sub {
                    // Scalars are 1-D in DaCe; allow either rank for them.
                    let ok = sub.len() == dims
                        || what == "other_subset"
                        || (dims <= 1 && sub.len() <= 1);
                    if !ok {
                        return Err(Error::invalid(
                            format!("{}/attributes/data/attributes/{what}", e.path),
                            format!(
                                "memlet on '{d}' has {} dimensions, but '{d}' has {dims}",
                                sub.len()
                            ),
                        ));
                    }
                }
            }
            let scope = node(e.dst).scope.or(node(e.src).scope);
            let mut params = scope_params(st, scope);
            with_scope_params(st, e, &mut params);
            if let Some(r) = e
                .memlet
                .other_subset
                .iter()
                .flatten()
                .find(|r| r.is_tiled())
            {
                // DaCe's copy does not walk a tiled other subset as tiled (it
                // writes a contiguous run): refused rather than differ.
                return Err(Error::unsupported(
                    &e.path,
                    format!(
                        "memlet on '{d}' in state '{label}' has a tiled other subset (tile {}): only the memlet's own subset may be tiled",
                        crate::ir::cexpr::to_cpp(&r.tile)
                    ),
                ));
            }
            for sub in [&e.memlet.subset, &e.memlet.other_subset]
                .into_iter()
                .flatten()
            {
                for r in sub {
                    for x in [&r.start, &r.end, &r.step] {
                        check_names_in(x, names, &params, &e.path, || format!("memlet on '{d}'"))?;
                    }
                    // `begin:end:step:tile` selects `tile` consecutive
                    // elements at every step: copies between containers walk
                    // it (`RangeDim::index_at`). On the outer edges of a map
                    // scope it only describes what the iterations touch
                    // (propagated), and nothing is copied. A tasklet indexes
                    // it with one more index per tiled dimension (DaCe's
                    // `absolute_strides`). A library node or a nested SDFG
                    // would see it as one contiguous pointer: refused.
                    let scope_edge = matches!(node(e.dst).kind, NodeKind::MapEntry(_))
                        || matches!(node(e.src).kind, NodeKind::MapExit { .. });
                    let tasklet_edge = matches!(node(e.dst).kind, NodeKind::Tasklet(_))
                        || matches!(node(e.src).kind, NodeKind::Tasklet(_));
                    let container = |n: NodeId| match &node(n).kind {
                        NodeKind::Access(a) => sdfg
                            .arrays
                            .get(&a.data)
                            .is_some_and(|x| x.kind != DataKind::View),
                        _ => false,
                    };
                    let copy_edge = container(e.src) && container(e.dst);
                    if r.tile != Expr::Int(1) && !scope_edge && !copy_edge && !tasklet_edge {
                        return Err(Error::unsupported(
                            &e.path,
                            format!(
                                "memlet on '{d}' in state '{label}' has a tiled range (tile {}) outside a copy or tasklet: only copies between containers (not views) and tasklets take tiled subsets",
                                crate::ir::cexpr::to_cpp(&r.tile)
                            ),
                        ));
                    }
                }
            }
        }
        check_connector(st, e.src, e.src_conn.as_deref(), false, &e.path, label)?;
        check_connector(st, e.dst, e.dst_conn.as_deref(), true, &e.path, label)?;
    }
    Ok(())
}

/// A tasklet that calls a callback (DaCe's `callback` symbols): the call
/// is its whole code, as DaCe's frontend writes it, with as many arguments
/// as the callback's type takes; arrays and values the callee returns
/// through an argument are connectors with memlets; a value assigned from
/// the call is an output connector of a function that returns one scalar.
fn check_callback(sdfg: &Sdfg, st: &State, id: NodeId, t: &Tasklet, label: &str) -> Result<()> {
    let n = &st.nodes[id.index()];
    let calls = all_stmts(&t.stmts)
        .into_iter()
        .filter(|s| matches!(s, Stmt::Callback { .. }))
        .count();
    if calls == 0 {
        return Ok(());
    }
    let refuse = |what: String| {
        Err(Error::unsupported(
            &n.path,
            format!("callback tasklet '{}' in state '{label}': {what}", n.label),
        ))
    };
    let [Stmt::Callback { func, args, result }] = t.stmts.as_slice() else {
        // Calls inside expressions, hoisted by the parser: scalar functions
        // of values, at the code's top level.
        let hoisted = |s: &Stmt| match s {
            Stmt::Callback {
                func,
                args,
                result: Some(r),
            } if r.starts_with("__sdfgc_cb") => sdfg.callbacks.get(func).is_some_and(|cb| {
                matches!(cb.returns.as_slice(), [CbValue::Scalar(_)])
                    && cb.inputs.iter().all(|v| matches!(v, CbValue::Scalar(_)))
                    && cb.inputs.len() == args.len()
                    && args.iter().all(|a| matches!(a, CbArg::Value(_)))
            }),
            _ => false,
        };
        let top = t
            .stmts
            .iter()
            .filter(|s| matches!(s, Stmt::Callback { .. }))
            .count();
        if top == calls
            && t.stmts
                .iter()
                .filter(|s| matches!(s, Stmt::Callback { .. }))
                .all(hoisted)
        {
            return Ok(());
        }
        return refuse(
            "a callback call among other statements (DaCe's frontend writes a callback \
             tasklet as the call alone)"
                .into(),
        );
    };
    let Some(cb) = sdfg.callbacks.get(func) else {
        return Err(Error::invalid(
            &n.path,
            format!("'{func}' is not a callback of the SDFG"),
        ));
    };
    let params = cb.call_params();
    if params.len() != args.len() {
        return refuse(format!(
            "calls '{func}' with {} arguments; its type takes {}",
            args.len(),
            params.len()
        ));
    }
    let memlet_at = |c: &str| {
        st.edges.iter().find(|e| {
            (e.dst == id && e.dst_conn.as_deref() == Some(c))
                || (e.src == id && e.src_conn.as_deref() == Some(c))
        })
    };
    for (k, (a, (value, returned))) in args.iter().zip(&params).enumerate() {
        let by_address = matches!(value, CbValue::Array(_)) || *returned;
        let connector = match a {
            CbArg::Value(Expr::Sym(c)) => memlet_at(c).map(|e| (c, e)),
            _ => None,
        };
        match connector {
            Some((c, e)) if e.memlet.data.is_none() => {
                return refuse(format!("argument {k} ('{c}') has an empty memlet"));
            }
            None if by_address => {
                return refuse(format!(
                    "argument {k} of '{func}' is an array or a value it returns, but not a \
                     connector with a memlet"
                ));
            }
            _ => {}
        }
    }
    if let Some(r) = result {
        let Some(e) = st
            .edges
            .iter()
            .find(|e| e.src == id && e.src_conn.as_deref() == Some(r.as_str()))
        else {
            return refuse(format!(
                "assigns '{r}', which is not an output connector with a memlet"
            ));
        };
        if !cb.scalar_function() || cb.returns.is_empty() {
            return refuse(format!(
                "assigns '{r}' a call of '{func}', which returns no single value"
            ));
        }
        if e.memlet.wcr.is_some() || e.memlet.data.is_none() {
            return refuse(format!(
                "assigns the value of '{func}' to '{r}', whose memlet is empty or has \
                 write-conflict resolution"
            ));
        }
    }
    Ok(())
}

/// A nested SDFG node: every connector names a container of the inner SDFG
/// (as DaCe requires), and the inner SDFG is valid on its own.
/// The elements of a container array (pointers) are reached only through
/// views (`double* v = A[i];`): a code node or a copy that moves them is
/// refused by name.
fn check_container_arrays(sdfg: &Sdfg, st: &State, label: &str) -> Result<()> {
    let view = |id: NodeId| match &st.nodes[id.index()].kind {
        NodeKind::Access(a) => sdfg.arrays.get(&a.data).map(|d| d.kind == DataKind::View),
        _ => None,
    };
    for e in &st.edges {
        let Some(data) = e.memlet.data.as_deref() else {
            continue;
        };
        if !sdfg
            .arrays
            .get(data)
            .is_some_and(|d| matches!(d.dtype, DType::Pointer(_)))
        {
            continue;
        }
        let code = |id: NodeId| {
            matches!(
                st.nodes[id.index()].kind,
                NodeKind::Tasklet(_) | NodeKind::Nested(_) | NodeKind::Library(_)
            )
        };
        let copy = view(e.src) == Some(false) && view(e.dst) == Some(false);
        if code(e.src) || code(e.dst) || copy {
            return Err(Error::unsupported(
                &e.path,
                format!(
                    "in state '{label}': a memlet that moves the elements of container array \
                     '{data}' (pointers; only views of one element are supported)"
                ),
            ));
        }
    }
    Ok(())
}

fn validate_nested(ns: &NestedSdfg, n: &Node, label: &str) -> Result<()> {
    for (side, conns) in [("input", &ns.inputs), ("output", &ns.outputs)] {
        if let Some(c) = conns.keys().find(|c| !ns.sdfg.arrays.contains_key(*c)) {
            return Err(Error::invalid(
                &n.path,
                format!(
                    "nested SDFG '{}' in state '{label}' has {side} connector '{c}', which is not a data container of '{}'",
                    n.label, ns.sdfg.name
                ),
            ));
        }
    }
    let mapped: HashSet<&str> = ns.symbol_mapping.keys().map(String::as_str).collect();
    validate_sdfg(&ns.sdfg, &mapped)
}

/// Every map exit's `scope_entry` must be a map entry. Checked before the
/// entries, so that the error points at the exit that is wrong.
fn check_map_exits(st: &State, label: &str) -> Result<()> {
    for n in &st.nodes {
        if let NodeKind::MapExit { entry } = &n.kind
            && !matches!(
                st.nodes.get(entry.index()).map(|x| &x.kind),
                Some(NodeKind::MapEntry(_))
            )
        {
            return Err(Error::invalid(
                &n.path,
                format!(
                    "map exit '{}' in state '{label}' does not belong to a map entry",
                    n.label
                ),
            ));
        }
    }
    Ok(())
}

/// The dynamic inputs of map `m` (node `id`): each fed by exactly one
/// memlet that reads one element (a value: a dynamic input that is a
/// pointer is refused by name), and every input connector of the entry not
/// named `IN_*` is one of them.
fn check_dynamic_inputs(
    sdfg: &Sdfg,
    st: &State,
    id: NodeId,
    m: &MapEntry,
    label: &str,
) -> Result<()> {
    let path = &st.nodes[id.index()].path;
    for e in st.edges.iter().filter(|e| e.dst == id) {
        if let Some(c) = e.dst_conn.as_deref()
            && MapEntry::is_dynamic_connector(c)
            && !m.dynamic_inputs.contains_key(c)
        {
            return Err(Error::invalid(
                &e.path,
                format!(
                    "edge uses input connector '{c}', which map '{}' in state '{label}' does not have",
                    m.label
                ),
            ));
        }
    }
    for (c, t) in &m.dynamic_inputs {
        let mut feeding = st
            .edges
            .iter()
            .filter(|e| e.dst == id && e.dst_conn.as_deref() == Some(c.as_str()));
        let (Some(e), None) = (feeding.next(), feeding.next()) else {
            return Err(Error::invalid(
                path,
                format!(
                    "dynamic input '{c}' of map '{}' in state '{label}' is not fed by exactly one memlet",
                    m.label
                ),
            ));
        };
        let Some(data) = e.memlet.data.as_deref() else {
            return Err(Error::invalid(
                &e.path,
                format!(
                    "dynamic input '{c}' of map '{}' in state '{label}' is fed by an empty memlet",
                    m.label
                ),
            ));
        };
        let pointer = |why: String| {
            Err(Error::unsupported(
                &e.path,
                format!(
                    "dynamic input '{c}' of map '{}' in state '{label}' is a pointer ({why}): \
                     only dynamic inputs of one element (a value) are implemented",
                    m.label
                ),
            ))
        };
        if let ConnType::Pointer(_) = t {
            return pointer("its connector's type is a pointer".into());
        }
        // The validated memlet's container exists (checked with the edges).
        let Some(d) = sdfg.arrays.get(data) else {
            continue;
        };
        let one = match &e.memlet.subset {
            Some(sub) => single_element(sub),
            None => d.kind == DataKind::Scalar,
        };
        if !one {
            return pointer(format!("its memlet on '{data}' has more than one element"));
        }
    }
    Ok(())
}

/// Names visible inside the scope of `entry`: map parameters and dynamic
/// inputs of it and its parents.
fn scope_params(st: &State, mut entry: Option<NodeId>) -> Vec<&str> {
    let mut out = Vec::new();
    let mut guard = 0;
    while let Some(id) = entry {
        let n = &st.nodes[id.index()];
        if let NodeKind::MapEntry(m) = &n.kind {
            out.extend(m.scope_names().map(String::as_str));
        }
        entry = n.scope;
        guard += 1;
        if guard > st.nodes.len() {
            break;
        }
    }
    out
}

/// An edge out of a map entry or into a map exit sees that map's parameters.
fn with_scope_params<'a>(st: &'a State, e: &DataEdge, out: &mut Vec<&'a str>) {
    for id in [e.src, e.dst] {
        match &st.nodes[id.index()].kind {
            NodeKind::MapEntry(m) => out.extend(m.scope_names().map(String::as_str)),
            NodeKind::MapExit { entry } => {
                if let NodeKind::MapEntry(m) = &st.nodes[entry.index()].kind {
                    out.extend(m.scope_names().map(String::as_str));
                }
            }
            _ => {}
        }
    }
}

fn check_connector(
    st: &State,
    id: NodeId,
    conn: Option<&str>,
    incoming: bool,
    path: &str,
    label: &str,
) -> Result<()> {
    let Some(conn) = conn else { return Ok(()) };
    let n = &st.nodes[id.index()];
    let known = match &n.kind {
        NodeKind::Tasklet(t) => Some(if incoming {
            t.inputs.contains_key(conn)
        } else {
            t.outputs.contains_key(conn)
        }),
        NodeKind::Nested(ns) => Some(if incoming {
            ns.inputs.contains_key(conn)
        } else {
            ns.outputs.contains_key(conn)
        }),
        _ => None,
    };
    if known == Some(false) {
        let side = if incoming { "input" } else { "output" };
        return Err(Error::invalid(
            path,
            format!(
                "edge uses {side} connector '{conn}', which node '{}' in state '{label}' does not have",
                n.label
            ),
        ));
    }
    Ok(())
}
