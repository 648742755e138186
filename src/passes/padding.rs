//! Row padding of large CPU transients.
//!
//! A transient's layout is the code generator's to choose: nothing outside
//! the program sees it. Where its rows (the extent of the unit-stride
//! dimension, then of each outer one) hold 4 KiB or more, sdfgc gives each
//! row an odd number of 64-byte lines (`sdfgc_pad_stride`). A loop that walks
//! down a column then meets every cache set in turn; unpadded, rows whose
//! size is a multiple of 4 KiB put the whole column into one L1 set (and
//! few L2 sets). ICON's grids have 20 * 4^n cells, so a vertical scan over a
//! cell-contiguous temporary of R2B4's 20,480 cells walks exactly that
//! (3.5x slower than padded in a forward-sweep kernel, 2 threads).
//!
//! Only transients whose every use sdfgc writes from the descriptor's
//! strides are padded: element accesses of tasklets and interstate code,
//! copies, and nested SDFGs whose inner strides are symbols mapped to the
//! outer strides (gt4py's nested SDFGs), whose mappings then follow the
//! padded strides. Views, references, library nodes, C++ tasklets and
//! tasklets taking more than one element keep the SDFG's layout.

use std::collections::BTreeMap;

use crate::ir::simplify::{eval_int, free_symbols, simplify};
use crate::ir::*;
use crate::options::{CompileOptions, Target};

/// Pads the rows of the transients of `sdfg` and of its nested SDFGs that
/// can be padded (CPU code only; `--row-padding`).
pub fn pad_rows(sdfg: &mut Sdfg, opts: &CompileOptions) {
    if opts.target != Target::Cpp || opts.offload {
        return;
    }
    if let Some(from) = opts.row_padding.from_bytes() {
        pad_sdfg(sdfg, from);
    }
}

fn pad_sdfg(sdfg: &mut Sdfg, from: i64) {
    each_state_mut(&mut sdfg.body, &mut |st| {
        for n in &mut st.nodes {
            if let NodeKind::Nested(ns) = &mut n.kind {
                pad_sdfg(&mut ns.sdfg, from);
            }
        }
    });
    let names: Vec<String> = sdfg
        .arrays
        .iter()
        .filter(|(_, d)| candidate(d))
        .map(|(n, _)| n.clone())
        .collect();
    for name in names {
        let d = &sdfg.arrays[&name];
        let Some(order) = packed_order(d) else {
            continue;
        };
        let bytes = d.dtype.size() as i64;
        let mut strides = d.strides.clone();
        let mut row = Expr::Int(1);
        for (k, &dim) in order.iter().enumerate() {
            if k > 0 {
                row = simplify(&Expr::Call(
                    Func::PadStride,
                    vec![row, Expr::Int(bytes), Expr::Int(from)],
                ));
            }
            strides[dim] = row.clone();
            row = simplify(&Expr::bin(BinaryOp::Mul, row, d.shape[dim].clone()));
        }
        if strides == d.strides {
            continue;
        }
        let Some(rebinds) = rebinds(sdfg, &name, &d.strides, &strides) else {
            continue;
        };
        let d = sdfg.arrays.get_mut(&name).expect("candidate");
        d.strides = strides;
        d.total_size = row;
        each_state_mut(&mut sdfg.body, &mut |st| {
            for n in &mut st.nodes {
                let (NodeKind::Nested(ns), Some(binds)) = (&mut n.kind, rebinds.get(&n.path))
                else {
                    continue;
                };
                for (sym, e) in binds {
                    ns.symbol_mapping.insert(sym.clone(), e.clone());
                }
            }
        });
    }
}

/// A transient array of two or more dimensions in CPU memory, allocated by
/// the program, of a type whose size divides a cache line.
fn candidate(d: &DataDesc) -> bool {
    d.kind == DataKind::Array
        && d.transient
        && d.rank() >= 2
        && matches!(d.storage, Storage::Default | Storage::CpuHeap)
        && d.lifetime != Lifetime::Global
        && d.member.is_none()
        && !matches!(d.dtype, DType::Struct(_))
        && d.dtype.size() > 0
        && 64 % d.dtype.size() == 0
        && simplify(&d.start_offset) == Expr::Int(0)
}

/// The dimensions from the unit-stride one outward, when the strides are the
/// packed strides of the shape in that order and the total size their
/// product (else None).
fn packed_order(d: &DataDesc) -> Option<Vec<usize>> {
    let strides: Vec<Expr> = d.strides.iter().map(simplify).collect();
    let mut order = Vec::new();
    let mut expect = Expr::Int(1);
    for _ in 0..d.rank() {
        let mut found = (0..d.rank()).filter(|i| !order.contains(i) && same(&strides[*i], &expect));
        let dim = found.next()?;
        if found.next().is_some() {
            return None;
        }
        order.push(dim);
        expect = simplify(&Expr::bin(BinaryOp::Mul, expect, d.shape[dim].clone()));
    }
    same(&d.total_size, &expect).then_some(order)
}

/// Whether two expressions are equal: structurally, or their difference
/// simplifies to 0, or they agree at four sets of symbol values (distinct
/// primes per symbol: `N**2` against `N*N`, products in other orders).
fn same(a: &Expr, b: &Expr) -> bool {
    if a == b || simplify(&Expr::bin(BinaryOp::Sub, a.clone(), b.clone())) == Expr::Int(0) {
        return true;
    }
    let mut names = free_symbols(a);
    names.extend(free_symbols(b));
    names.sort();
    names.dedup();
    const PRIMES: [i64; 16] = [3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59];
    (0..4).all(|round| {
        let mut env = |n: &str| {
            let i = names.iter().position(|m| m == n)?;
            Some(PRIMES[(i * 5 + round * 3) % PRIMES.len()] + 61 * round as i64)
        };
        let (x, y) = (eval_int(a, &mut env), eval_int(b, &mut env));
        x.is_some() && x == y
    })
}

/// Per nested SDFG node (by JSON path), the inner stride symbols to map to
/// the padded strides; None when a use of `name` reads the old layout.
fn rebinds(
    sdfg: &Sdfg,
    name: &str,
    old: &[Expr],
    new: &[Expr],
) -> Option<BTreeMap<String, Vec<(String, Expr)>>> {
    let old: Vec<Expr> = old.iter().map(simplify).collect();
    let mut out: BTreeMap<String, Vec<(String, Expr)>> = BTreeMap::new();
    let mut ok = true;
    each_state(&sdfg.body, &mut |st| {
        for e in &st.edges {
            let on_edge = e.memlet.data.as_deref() == Some(name);
            for (id, conn) in [(e.src, &e.src_conn), (e.dst, &e.dst_conn)] {
                let node = &st.nodes[id.index()];
                match &node.kind {
                    NodeKind::Access(a) if a.data != name => {
                        let viewed = sdfg.arrays.get(&a.data).is_some_and(|v| {
                            matches!(v.kind, DataKind::View | DataKind::Reference)
                        });
                        if viewed && (on_edge || touches(st, e, name)) {
                            ok = false;
                        }
                    }
                    NodeKind::Tasklet(t) if on_edge => {
                        let one = e.memlet.subset.as_deref().is_some_and(single_element);
                        if t.code.language == Language::Cpp || !one {
                            ok = false;
                        }
                    }
                    NodeKind::Library(_) if on_edge || touches(st, e, name) => ok = false,
                    NodeKind::Nested(ns) if on_edge => {
                        match conn
                            .as_deref()
                            .and_then(|c| nested_rebind(ns, c, &old, new))
                        {
                            Some(binds) => out.entry(node.path.clone()).or_default().extend(binds),
                            None => ok = false,
                        }
                    }
                    _ => {}
                }
            }
        }
    });
    // One inner symbol, one value.
    for binds in out.values_mut() {
        binds.sort_by(|a, b| a.0.cmp(&b.0));
        binds.dedup();
        if binds.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
    }
    ok.then_some(out)
}

/// True if one end of `e` is an access node of `name`.
fn touches(st: &State, e: &DataEdge, name: &str) -> bool {
    [e.src, e.dst]
        .iter()
        .any(|id| matches!(&st.nodes[id.index()].kind, NodeKind::Access(a) if a.data == name))
}

/// The inner stride symbols of connector `conn` of a nested SDFG and the
/// padded outer strides they take; None unless every inner stride but the
/// unit one is a symbol mapped to an outer stride and used nowhere else
/// inside.
fn nested_rebind(
    ns: &NestedSdfg,
    conn: &str,
    old: &[Expr],
    new: &[Expr],
) -> Option<Vec<(String, Expr)>> {
    let inner = ns.sdfg.arrays.get(conn)?;
    let mut binds = Vec::new();
    for s in &inner.strides {
        if simplify(s) == Expr::Int(1) {
            continue;
        }
        let Expr::Sym(sym) = s else {
            return None;
        };
        let outer = simplify(ns.symbol_mapping.get(sym)?);
        let mut dims = (0..old.len()).filter(|&i| same(&old[i], &outer));
        let dim = dims.next()?;
        if dims.next().is_some() {
            return None;
        }
        binds.push((sym.clone(), new[dim].clone()));
    }
    if binds.is_empty() {
        return Some(binds);
    }
    // The symbols must mean nothing else inside: with this descriptor's
    // strides taken away, the inner SDFG must not use them.
    let mut probe = (*ns.sdfg).clone();
    let d = probe.arrays.get_mut(conn).expect("inner descriptor");
    d.strides = vec![Expr::Int(1); d.strides.len()];
    d.total_size = Expr::Int(1);
    let used = crate::passes::abi::used_symbols(&probe);
    if binds.iter().any(|(s, _)| used.contains(s)) {
        return None;
    }
    Some(binds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::python::parse_expr;
    use crate::ir::simplify::pad_stride;

    #[test]
    fn rows_of_4_kib_and_more_take_an_odd_number_of_lines() {
        assert_eq!(pad_stride(511, 8, 4096), Some(511)); // under 4 KiB
        assert_eq!(pad_stride(512, 8, 4096), Some(520)); // 64 lines -> 65
        assert_eq!(pad_stride(20480, 8, 4096), Some(20488)); // R2B4's cells
        assert_eq!(pad_stride(1000, 8, 4096), Some(1000)); // 125 lines: odd already
        assert_eq!(pad_stride(1001, 8, 4096), Some(1016)); // 126 lines (rounded up) -> 127
        assert_eq!(pad_stride(3, 8, 0), Some(8)); // `always`: one line
        assert_eq!(pad_stride(3, 24, 0), Some(3)); // 24-byte elements: never
        for n in 512..3000 {
            let p = pad_stride(n, 8, 4096).unwrap();
            assert!(
                p >= n && (p * 8) % 64 == 0 && (p * 8 / 64) % 2 == 1,
                "{n} -> {p}"
            );
        }
    }

    fn desc(shape: &[&str], strides: &[&str], total: &str) -> DataDesc {
        let e = |s: &&str| parse_expr(s).unwrap();
        DataDesc {
            kind: DataKind::Array,
            dtype: DType::Float64,
            shape: shape.iter().map(e).collect(),
            strides: strides.iter().map(e).collect(),
            total_size: parse_expr(total).unwrap(),
            offset: vec![Expr::Int(0); shape.len()],
            start_offset: Expr::Int(0),
            transient: true,
            storage: Storage::Default,
            lifetime: Lifetime::Scope,
            pool: false,
            may_alias: false,
            path: String::new(),
            member: None,
        }
    }

    #[test]
    fn packed_layouts_are_recognised_in_any_dimension_order() {
        assert_eq!(
            packed_order(&desc(&["M", "N"], &["N", "1"], "M*N")),
            Some(vec![1, 0])
        );
        assert_eq!(
            packed_order(&desc(&["N", "N"], &["N", "1"], "N**2")),
            Some(vec![1, 0])
        );
        assert_eq!(
            packed_order(&desc(&["H", "K"], &["1", "H"], "K*H")),
            Some(vec![0, 1])
        );
        assert_eq!(
            packed_order(&desc(&["I", "J", "K"], &["J*K", "K", "1"], "I*J*K")),
            Some(vec![2, 1, 0])
        );
        // already padded or strided: left alone
        assert_eq!(
            packed_order(&desc(&["M", "N"], &["N + 1", "1"], "M*(N + 1)")),
            None
        );
        assert_eq!(
            packed_order(&desc(&["M", "N"], &["N", "1"], "M*N + 8")),
            None
        );
        assert_eq!(
            packed_order(&desc(&["M", "N"], &["2*N", "2"], "2*M*N")),
            None
        );
    }
}
