//! DaCe's vector data types (`dace.vector`) on containers.
//!
//! A container of `vec<T, N>` elements is the same memory as one of `T`
//! with a last, contiguous dimension of N elements: sdfgc lowers it so at
//! load, and every memlet on it gets that dimension in full (`x[i]` moves
//! `x[i, 0:N]`, N elements). Tasklet connectors on such memlets become
//! vector values (`ConnType::Vector`), as DaCe infers them.

use super::*;

/// The vector length of a container's `dtype` (1 for scalar types).
pub(super) fn container_veclen(v: &Json, path: &str) -> Result<u32> {
    let ap = ptr(path, "attributes");
    // A container array's elements are pointers (`structure::container_dtype`).
    if matches!(
        v.get("type").and_then(Json::as_str),
        Some("ContainerArray" | "ContainerView")
    ) {
        return Ok(1);
    }
    match member(v.get("attributes"), "dtype") {
        Some(d) => located(|p| vdtype(d, p), || ptr(&ap, "dtype")).map(|(_, n)| n),
        None => Ok(1),
    }
}

/// Appends the vector dimension of `n` elements to `d` (its sizes and
/// strides counted in vectors until now).
pub(super) fn widen(d: &mut DataDesc, n: u32, name: &str) -> Result<()> {
    if !matches!(d.kind, DataKind::Array | DataKind::View) {
        return Err(Error::unsupported(
            &d.path,
            format!("{:?} container '{name}' of vector type", d.kind),
        ));
    }
    let n = Expr::Int(i64::from(n));
    let times = |e: &Expr| Expr::bin(BinaryOp::Mul, e.clone(), n.clone());
    d.strides = d.strides.iter().map(times).chain([Expr::Int(1)]).collect();
    d.shape.push(n.clone());
    d.offset.push(Expr::Int(0));
    d.total_size = times(&d.total_size);
    d.start_offset = times(&d.start_offset);
    Ok(())
}

/// Gives every memlet on a vector container of this SDFG (`vecs`: name,
/// element type, length) the vector dimension, and untyped tasklet
/// connectors on them the vector type. Refuses what it cannot lower.
pub(super) fn lower(body: &mut Region, vecs: &NameMap<(DType, u32)>) -> Result<()> {
    if vecs.is_empty() {
        return Ok(());
    }
    interstate_reads(body, vecs)?;
    let mut err = None;
    each_state_mut(body, &mut |st| {
        if err.is_none()
            && let Err(e) = lower_state(st, vecs)
        {
            err = Some(e);
        }
    });
    err.map_or(Ok(()), Err)
}

/// Control flow that reads a vector container (`x[i]` in a condition or
/// an assignment) is refused: its index counts vectors, the lowered
/// container elements.
fn interstate_reads(r: &Region, vecs: &NameMap<(DType, u32)>) -> Result<()> {
    let reads = |e: &Expr| {
        let mut hit = None;
        e.visit_names(&mut |n| {
            if hit.is_none() && vecs.contains_key(n) {
                hit = Some(n.to_string());
            }
        });
        hit
    };
    let refuse = |path: &str, name: String| {
        Err(Error::unsupported(
            path,
            format!("control flow reads '{name}', a container of vector type"),
        ))
    };
    for e in &r.edges {
        let exprs = std::iter::once(&e.condition).chain(e.assignments.iter().map(|(_, v)| v));
        if let Some(n) = exprs.filter_map(reads).next() {
            return refuse(&e.path, n);
        }
    }
    if let RegionKind::Loop(l) = &r.kind {
        let values = l.init.iter().chain(&l.update).filter_map(|s| match s {
            Stmt::Assign { value, .. } => Some(value),
            _ => None,
        });
        if let Some(n) = std::iter::once(&l.condition)
            .chain(values)
            .filter_map(reads)
            .next()
        {
            return refuse(&r.path, n);
        }
    }
    for b in &r.blocks {
        match &b.kind {
            BlockKind::Region(inner) => interstate_reads(inner, vecs)?,
            BlockKind::Conditional(brs) => {
                for (c, body) in brs {
                    if let Some(n) = c.as_ref().and_then(reads) {
                        return refuse(&b.path, n);
                    }
                    interstate_reads(body, vecs)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn lower_state(st: &mut State, vecs: &NameMap<(DType, u32)>) -> Result<()> {
    for ei in 0..st.edges.len() {
        let e = &st.edges[ei];
        let ends = [(e.src, &e.src_conn, false), (e.dst, &e.dst_conn, true)];
        let touches_vec = ends.iter().any(|(n, _, _)| {
            matches!(&st.nodes[n.index()].kind, NodeKind::Access(a) if vecs.contains_key(&a.data))
        });
        let Some((t, n)) = e.memlet.data.as_ref().and_then(|d| vecs.get(d)).copied() else {
            if touches_vec && e.memlet.other_subset.is_some() {
                return Err(Error::unsupported(
                    &e.path,
                    "a copy between containers of vector and scalar type",
                ));
            }
            continue;
        };
        if e.memlet.other_subset.is_some() || e.memlet.wcr.is_some() || e.memlet.dynamic {
            return Err(Error::unsupported(
                &e.path,
                "a copy, dynamic memlet or write-conflict resolution on a container of vector type",
            ));
        }
        let one = e.memlet.subset.as_deref().is_some_and(single_element);
        // The connector types DaCe infers from the memlet.
        let mut conns = Vec::new();
        for (node, conn, input) in ends {
            let Some(c) = conn else { continue };
            match &st.nodes[node.index()].kind {
                NodeKind::Tasklet(_) if one => conns.push((node, c.clone(), input)),
                NodeKind::Tasklet(_) => {
                    return Err(Error::unsupported(
                        &e.path,
                        format!("tasklet connector '{c}' on several elements of vector type"),
                    ));
                }
                NodeKind::Library(_) => {
                    return Err(Error::unsupported(
                        &st.nodes[node.index()].path,
                        format!(
                            "library node '{}' on a container of vector type",
                            st.nodes[node.index()].label
                        ),
                    ));
                }
                _ => {}
            }
        }
        let m = &mut st.edges[ei].memlet;
        m.volume = Expr::bin(BinaryOp::Mul, m.volume.clone(), Expr::Int(i64::from(n)));
        if let Some(s) = &mut m.subset {
            s.push(RangeDim {
                start: Expr::Int(0),
                end: Expr::Int(i64::from(n) - 1),
                step: Expr::Int(1),
                tile: Expr::Int(1),
            });
        }
        let path = st.edges[ei].path.clone();
        for (node, c, input) in conns {
            let NodeKind::Tasklet(tk) = &mut st.nodes[node.index()].kind else {
                continue;
            };
            let map = if input {
                &mut tk.inputs
            } else {
                &mut tk.outputs
            };
            match map.get(&c).copied() {
                None | Some(ConnType::Unknown) => {
                    map.insert(c, ConnType::Vector(t, n));
                }
                Some(ConnType::Vector(ct, cn)) if (ct, cn) == (t, n) => {}
                Some(_) => {
                    return Err(Error::unsupported(
                        &path,
                        format!("connector '{c}' of another type than its container's vector type"),
                    ));
                }
            }
        }
    }
    Ok(())
}
