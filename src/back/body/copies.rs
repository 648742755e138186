//! The geometry of a copy edge between two containers, as DaCe reads it
//! (`memlet_copy_to_absolute_strides` in DaCe's `codegen/targets/cpp.py`):
//! which elements of each side it touches, how many, and in which order
//! they pair up. Every writer of a copy (host loops and `memcpy`, device
//! copies, copies split over a thread block) takes its subsets and element
//! count from here, so each side stays inside its own subset.
//!
//! * The number of elements moved is that of the memlet's own `subset` (on
//!   its `data`): DaCe's copy shape.
//! * The other side is `other_subset`; without one it starts at the other
//!   container's origin: the same extents from index 0 when the ranks agree
//!   (`a[5:15, 6:16]` into a 10x10 `b` writes `b[0:10, 0:10]`, never
//!   `b[5:15, 6:16]`), else the whole container, walked in row-major order.
//!   An edge between two nodes of one container without an other subset
//!   orders them (both ends the same subset, nothing moves).
//! * Elements pair up in row-major order of each side's non-unit
//!   dimensions. The sides are walked dimension by dimension when their
//!   non-unit extents agree pairwise, else both are flattened (one counter,
//!   each side's indices decomposed from it; the side whose subset does not
//!   set the count wraps around inside its subset rather than leave it).

use crate::ir::simplify::{probably_equal, simplify};
use crate::ir::*;

/// A copy edge resolved: each side's subset and the number of elements.
#[derive(Clone, Debug)]
pub(crate) struct CopySides {
    /// Subset of the source container.
    pub src: Subset,
    /// Subset of the destination container.
    pub dst: Subset,
    /// Elements moved (those of the memlet's own subset).
    pub count: Expr,
}

/// The full range of a container.
pub(crate) fn full_range(d: &DataDesc) -> Subset {
    d.shape
        .iter()
        .map(|s| RangeDim {
            start: Expr::Int(0),
            end: simplify(&Expr::bin(BinaryOp::Sub, s.clone(), Expr::Int(1))),
            step: Expr::Int(1),
            tile: Expr::Int(1),
        })
        .collect()
}

/// Product of the extents of `s` (1 for a scalar).
pub(crate) fn element_count(s: &Subset) -> Expr {
    simplify(
        &s.iter()
            .map(RangeDim::extent)
            .reduce(|x, y| Expr::bin(BinaryOp::Mul, x, y))
            .unwrap_or(Expr::Int(1)),
    )
}

/// Source and destination subsets and element count of a copy from `src`
/// (descriptor `sd`) to `dst` (`dd`) along memlet `m` (see the module).
pub(crate) fn copy_sides(
    m: &Memlet,
    (src, sd): (&str, &DataDesc),
    (dst, dd): (&str, &DataDesc),
) -> CopySides {
    let data_is_src = match m.is_data_src {
        Some(v) if m.data.as_deref() == Some(src) || m.data.as_deref() == Some(dst) => {
            if m.data.as_deref() == Some(src) && m.data.as_deref() == Some(dst) {
                v
            } else {
                m.data.as_deref() == Some(src)
            }
        }
        _ => m.data.as_deref() == Some(src),
    };
    let (own, other_desc) = if data_is_src { (sd, dd) } else { (dd, sd) };
    let own_sub = m.subset.clone().unwrap_or_else(|| full_range(own));
    let other_sub = match &m.other_subset {
        Some(o) => o.clone(),
        None if src == dst => own_sub.clone(),
        None if own_sub.len() == other_desc.rank() => own_sub
            .iter()
            .map(|r| RangeDim {
                start: Expr::Int(0),
                end: simplify(&Expr::bin(BinaryOp::Sub, r.extent(), Expr::Int(1))),
                step: Expr::Int(1),
                tile: Expr::Int(1),
            })
            .collect(),
        None => full_range(other_desc),
    };
    let count = element_count(&own_sub);
    let (src, dst) = if data_is_src {
        (own_sub, other_sub)
    } else {
        (other_sub, own_sub)
    };
    CopySides { src, dst, count }
}

/// Indices of the dimensions of `s` whose extent is not 1.
pub(crate) fn nonunit(s: &Subset) -> Vec<usize> {
    (0..s.len())
        .filter(|&k| s[k].extent() != Expr::Int(1))
        .collect()
}

/// The non-unit dimensions of the two sides paired in order, when there are
/// as many on each side and each pair has the same extent (the copy can be
/// walked dimension by dimension); None where both must be flattened.
pub(crate) fn paired_dims(ss: &Subset, ds: &Subset) -> Option<Vec<(usize, usize)>> {
    let (sn, dn) = (nonunit(ss), nonunit(ds));
    (sn.len() == dn.len()
        && sn
            .iter()
            .zip(&dn)
            .all(|(&a, &b)| probably_equal(&ss[a].extent(), &ds[b].extent())))
    .then(|| sn.into_iter().zip(dn).collect())
}

/// Where the subset `sub` of `d` is one contiguous run of memory: its
/// non-unit dimensions (positions among them, 0 = outermost) from the
/// innermost in memory to the outermost; None otherwise.
fn memory_order(d: &DataDesc, sub: &Subset) -> Option<Vec<usize>> {
    if sub.len() != d.rank() {
        return None;
    }
    let dims = nonunit(sub);
    if dims
        .iter()
        .any(|&k| simplify(&sub[k].step) != Expr::Int(1) || sub[k].is_tiled())
    {
        return None;
    }
    let mut left: Vec<usize> = (0..dims.len()).collect();
    let mut order = Vec::new();
    let mut expected = Expr::Int(1);
    while !left.is_empty() {
        let pos = left
            .iter()
            .position(|&p| probably_equal(&d.strides[dims[p]], &expected))?;
        let p = left.remove(pos);
        order.push(p);
        expected = simplify(&Expr::bin(BinaryOp::Mul, expected, sub[dims[p]].extent()));
    }
    Some(order)
}

/// True if the copy `sides` (source `sd`, destination `dd`) moves one
/// contiguous run onto another element for element, so one `memcpy` of
/// `count` elements does it: both subsets are contiguous, hold exactly
/// `count` elements, and are laid out in the same order (both row-major, or
/// the same order of paired dimensions of equal extents: a column-major
/// block onto a row-major one is a transposition, not a `memcpy`).
pub(crate) fn one_run(sides: &CopySides, sd: &DataDesc, dd: &DataDesc) -> bool {
    let (ss, ds) = (&sides.src, &sides.dst);
    let (Some(so), Some(dor)) = (memory_order(sd, ss), memory_order(dd, ds)) else {
        return false;
    };
    if !probably_equal(&element_count(ss), &sides.count)
        || !probably_equal(&element_count(ds), &sides.count)
    {
        return false;
    }
    let row_major = |o: &[usize]| o.iter().copied().eq((0..o.len()).rev());
    (row_major(&so) && row_major(&dor)) || (so == dor && paired_dims(ss, ds).is_some())
}

/// The run-time condition under which a copy that [`one_run`] rejects only
/// for padded rows (`passes::padding`) is one run after all: each padded
/// stride of either side equals its unpadded value (rows under the padding
/// threshold, where `sdfgc_pad_stride(n, ..)` is `n`). None where the copy
/// is not one run even unpadded, or neither side is padded.
pub(crate) fn unpadded_one_run(
    sides: &CopySides,
    sd: &DataDesc,
    dd: &DataDesc,
) -> Option<Vec<Expr>> {
    let mut pads = Vec::new();
    let unpad = |d: &DataDesc, pads: &mut Vec<Expr>| DataDesc {
        strides: d.strides.iter().map(|s| unpadded(s, pads)).collect(),
        ..d.clone()
    };
    let (su, du) = (unpad(sd, &mut pads), unpad(dd, &mut pads));
    if pads.is_empty() || !one_run(sides, &su, &du) {
        return None;
    }
    let mut conds: Vec<Expr> = Vec::new();
    for p in pads {
        let Expr::Call(_, args) = &p else {
            unreachable!("pads holds PadStride calls")
        };
        let c = Expr::bin(BinaryOp::Eq, p.clone(), args[0].clone());
        if !conds.contains(&c) {
            conds.push(c);
        }
    }
    Some(conds)
}

/// `e` with every padded stride replaced by its unpadded row (the first
/// argument of `sdfgc_pad_stride`); the calls replaced are added to `pads`.
fn unpadded(e: &Expr, pads: &mut Vec<Expr>) -> Expr {
    match e {
        Expr::Call(Func::PadStride, args) => {
            pads.push(e.clone());
            unpadded(&args[0], pads)
        }
        Expr::Call(f, args) => Expr::Call(*f, args.iter().map(|a| unpadded(a, pads)).collect()),
        Expr::Unary(op, a) => Expr::Unary(*op, Box::new(unpadded(a, pads))),
        Expr::Binary(op, a, b) => Expr::bin(*op, unpadded(a, pads), unpadded(b, pads)),
        _ => e.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::python::parse_expr;

    fn sub(s: &str) -> Subset {
        s.split(',')
            .map(|d| {
                let p: Vec<&str> = d.split(':').collect();
                let e = |x: &str| parse_expr(x.trim()).unwrap();
                let (start, end) = match p.len() {
                    1 => (e(p[0]), e(p[0])),
                    _ => (
                        e(p[0]),
                        simplify(&Expr::bin(BinaryOp::Sub, e(p[1]), Expr::Int(1))),
                    ),
                };
                let step = p.get(2).map(|x| e(x)).unwrap_or(Expr::Int(1));
                RangeDim {
                    start,
                    end,
                    step,
                    tile: Expr::Int(1),
                }
            })
            .collect()
    }

    fn desc(shape: &[i64], strides: &[i64]) -> DataDesc {
        DataDesc {
            kind: DataKind::Array,
            dtype: DType::Float64,
            shape: shape.iter().map(|&n| Expr::Int(n)).collect(),
            strides: strides.iter().map(|&n| Expr::Int(n)).collect(),
            total_size: Expr::Int(shape.iter().product()),
            offset: vec![Expr::Int(0); shape.len()],
            start_offset: Expr::Int(0),
            transient: false,
            storage: Storage::Default,
            lifetime: Lifetime::Scope,
            pool: false,
            may_alias: false,
            path: String::new(),
            member: None,
        }
    }

    fn memlet(data: &str, subset: &str, other: Option<&str>) -> Memlet {
        Memlet {
            data: Some(data.into()),
            subset: Some(sub(subset)),
            other_subset: other.map(sub),
            wcr: None,
            dynamic: false,
            volume: Expr::Int(0),
            is_data_src: None,
        }
    }

    #[test]
    fn without_other_subset_the_other_side_starts_at_its_origin() {
        let a = desc(&[20, 20], &[20, 1]);
        let b = desc(&[10, 10], &[10, 1]);
        let c = copy_sides(&memlet("a", "5:15, 6:16", None), ("a", &a), ("b", &b));
        assert_eq!(c.dst, sub("0:10, 0:10"));
        assert_eq!(c.src, sub("5:15, 6:16"));
        assert_eq!(c.count, Expr::Int(100));
        // Data on the destination: the source starts at its origin.
        let c = copy_sides(&memlet("b", "0:10, 0:10", None), ("a", &a), ("b", &b));
        assert_eq!(c.src, sub("0:10, 0:10"));
        // Another rank: the whole other container; the count is the memlet's.
        let f = desc(&[400], &[1]);
        let c = copy_sides(&memlet("f", "0:100", None), ("a", &a), ("f", &f));
        assert_eq!(c.src, sub("0:20, 0:20"));
        assert_eq!(c.count, Expr::Int(100));
        // One container, no other subset: an ordering edge.
        let c = copy_sides(&memlet("a", "1:3, 0:20", None), ("a", &a), ("a", &a));
        assert_eq!(c.src, c.dst);
    }

    #[test]
    fn pairs_dimensions_only_of_equal_extents() {
        assert_eq!(
            paired_dims(&sub("5:15, 3, 0:4"), &sub("0:10, 0:4")),
            Some(vec![(0, 0), (2, 1)])
        );
        assert_eq!(paired_dims(&sub("0:10, 0:10"), &sub("0:20, 0:5")), None);
        assert_eq!(paired_dims(&sub("0:10, 0:10"), &sub("0:100")), None);
    }

    #[test]
    fn one_memcpy_only_for_runs_in_the_same_order() {
        let rm = desc(&[3, 2], &[2, 1]);
        let cm = desc(&[3, 2], &[1, 3]);
        let whole = |a: &DataDesc, b: &DataDesc| {
            one_run(
                &copy_sides(&memlet("a", "0:3, 0:2", None), ("a", a), ("b", b)),
                a,
                b,
            )
        };
        assert!(whole(&rm, &rm));
        assert!(whole(&cm, &cm));
        assert!(!whole(&cm, &rm), "a transposition is not a memcpy");
        // A smaller destination than the source's whole range: no memcpy of it.
        let big = desc(&[400], &[1]);
        let small = desc(&[10, 10], &[10, 1]);
        let c = copy_sides(&memlet("b", "0:10, 0:10", None), ("a", &big), ("b", &small));
        assert!(!one_run(&c, &big, &small));
    }
}
