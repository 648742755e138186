//! OpenMP reductions for a parallel map whose threads all add into one
//! element (the Dot and Reduce expansions: `_result[0] += x[i] * y[i]`).
//!
//! Without them every iteration updates the element atomically, as DaCe's
//! code does. With one, each thread sums into its own copy of a local
//! (`reduction(+: __red_N)`), and the element takes the total once after the
//! loop. Only where that is the same program: the map's scope reaches the
//! container through such updates alone (tasklet writes, or copies out of
//! the map from a container of its body; no read, no plain write, no access
//! node, no nested SDFG), each to an element that is the same in every
//! iteration, with one operator whose OpenMP identity is exact for the type.

use std::collections::BTreeSet;

use crate::back::body::dataflow::StateCtx;
use crate::back::body::function::FnWriter;
use crate::ir::simplify::simplify;
use crate::ir::*;

/// One reduction variable of a parallel map.
#[derive(Clone, Debug)]
pub(crate) struct Reduction {
    /// The container updated.
    pub data: String,
    /// Index of the element (simplified), the same in every iteration.
    pub starts: Vec<Expr>,
    /// The update, also used for the final combination.
    pub wcr: Wcr,
    /// Element type.
    pub dtype: DType,
    /// The local each thread reduces into.
    pub var: String,
}

impl Reduction {
    /// The OpenMP reduction operator of `kind` on `dtype`. Min and max of
    /// floating-point types are the file's own (`sdfgc_min`, `sdfgc_max`:
    /// compare-and-select like the atomic update, identity infinity, where
    /// OpenMP's built-in ones may start from the largest finite value).
    fn operator(kind: WcrKind, dtype: DType) -> Option<&'static str> {
        let real = matches!(dtype, DType::Float32 | DType::Float64);
        let int = dtype.is_integer();
        match kind {
            WcrKind::Sum if real || int => Some("+"),
            WcrKind::Product if real || int => Some("*"),
            WcrKind::Min if int => Some("min"),
            WcrKind::Max if int => Some("max"),
            WcrKind::Min if real => Some("sdfgc_min"),
            WcrKind::Max if real => Some("sdfgc_max"),
            WcrKind::BitAnd if int => Some("&"),
            WcrKind::BitOr if int => Some("|"),
            WcrKind::BitXor if int => Some("^"),
            _ => None,
        }
    }

    /// A word for the operator, in the local's name.
    fn stem(kind: WcrKind) -> &'static str {
        match kind {
            WcrKind::Sum => "sum",
            WcrKind::Product => "product",
            WcrKind::Min => "min",
            WcrKind::Max => "max",
            WcrKind::BitAnd => "and",
            WcrKind::BitOr => "or",
            _ => "xor",
        }
    }

    /// The identity of the operator, as the local's initial value.
    fn identity(&self) -> String {
        let t = self.dtype.ctype();
        match self.wcr.kind {
            WcrKind::Product => "1".into(),
            WcrKind::BitAnd => format!("static_cast<{t}>(~static_cast<{t}>(0))"),
            WcrKind::Min if !self.dtype.is_integer() => {
                format!("std::numeric_limits<{t}>::infinity()")
            }
            WcrKind::Max if !self.dtype.is_integer() => {
                format!("-std::numeric_limits<{t}>::infinity()")
            }
            WcrKind::Min => format!("std::numeric_limits<{t}>::max()"),
            WcrKind::Max => format!("std::numeric_limits<{t}>::lowest()"),
            _ => "0".into(),
        }
    }

    /// The clause for the parallel loop's pragma.
    pub fn clause(&self) -> String {
        let op = Self::operator(self.wcr.kind, self.dtype).expect("planned reductions have one");
        format!(" reduction({op}: {})", self.var)
    }
}

impl FnWriter<'_> {
    /// The reductions of a parallel map whose body (entry included) is the
    /// nodes marked in `body` (see the module comment).
    pub(crate) fn plan_reductions(&mut self, ctx: &StateCtx, body: &[bool]) -> Vec<Reduction> {
        let st = ctx.st;
        let inside = |n: NodeId| body[n.index()];
        let mut params: BTreeSet<&str> = BTreeSet::new();
        let mut refused: BTreeSet<&str> = BTreeSet::new();
        for (i, n) in st.nodes.iter().enumerate() {
            if !inside(NodeId(i as u32)) {
                continue;
            }
            match &n.kind {
                NodeKind::MapEntry(m) => params.extend(m.scope_names().map(String::as_str)),
                NodeKind::Access(a) => {
                    refused.insert(&a.data);
                }
                _ => {}
            }
        }
        let sdfg = self.sdfg;
        let invariant = |e: &Expr| {
            let mut ok = true;
            e.visit_names(&mut |n| {
                ok &= !params.contains(n)
                    && (sdfg.symbol_type(n).is_some() || sdfg.constants.contains_key(n));
            });
            ok
        };
        // Per element of a container: the update written into it.
        let mut found: Vec<((&str, Vec<Expr>), &Wcr)> = Vec::new();
        let mut exits: Vec<(&str, WcrKind)> = Vec::new();
        for e in st.edges.iter().filter(|e| inside(e.src)) {
            let Some(data) = e.memlet.data.as_deref() else {
                continue;
            };
            // The update and the element it targets: a tasklet's write, or a
            // copy out of the map from a container of its body (DaCe's
            // per-tile accumulator, `acc[0] += trans_acc[0]`).
            let to_exit = matches!(st.nodes[e.dst.index()].kind, NodeKind::MapExit { .. });
            let update = match (&st.nodes[e.src.index()].kind, &e.memlet.wcr) {
                (NodeKind::Tasklet(_), Some(w)) => {
                    Some((w, e.memlet.subset.clone().unwrap_or_default()))
                }
                (NodeKind::Access(a), Some(w)) if a.data != data && to_exit => {
                    Some((w, self.copy_subsets(&e.memlet, &a.data, data).1))
                }
                // The update passing out of an inner map.
                (NodeKind::MapExit { .. }, Some(w)) => {
                    exits.push((data, w.kind));
                    continue;
                }
                _ => None,
            };
            let Some((w, sub)) = update else {
                refused.insert(data);
                continue;
            };
            let one = sub.iter().all(|r| simplify(&r.extent()) == Expr::Int(1));
            let starts: Vec<Expr> = sub.iter().map(|r| simplify(&r.start)).collect();
            if !one || sub.is_empty() || !starts.iter().all(&invariant) {
                refused.insert(data);
                continue;
            }
            match found.iter().find(|((d, s), _)| *d == data && *s == starts) {
                Some((_, w0)) if w0.kind != w.kind => {
                    refused.insert(data);
                }
                Some(_) => {}
                None => found.push(((data, starts), w)),
            }
        }
        for (data, kind) in exits {
            if found.iter().any(|((d, _), w)| *d == data && w.kind != kind) {
                refused.insert(data);
            }
        }
        let mut out = Vec::new();
        for ((data, starts), w) in found {
            let Some(d) = sdfg.arrays.get(data) else {
                continue;
            };
            if refused.contains(data)
                || self.is_private(data)
                || starts.len() != d.rank()
                || Reduction::operator(w.kind, d.dtype).is_none()
            {
                continue;
            }
            let var = self.fresh_label(&format!("{data}_{}", Reduction::stem(w.kind)));
            out.push(Reduction {
                data: data.to_string(),
                starts,
                wcr: w.clone(),
                dtype: d.dtype,
                var,
            });
        }
        out
    }

    /// Declares the reduction locals (before the parallel loop).
    pub(crate) fn open_reductions(&mut self, reductions: &[Reduction]) {
        for r in reductions {
            self.out
                .line(format!("{} {} = {};", r.dtype.ctype(), r.var, r.identity()));
        }
    }

    /// Adds each reduction's total into its element (after the parallel loop).
    pub(crate) fn close_reductions(&mut self, reductions: &[Reduction]) {
        for r in reductions {
            let d = &self.sdfg.arrays[&r.data];
            let target = self.element(&r.data, d, &r.starts);
            let stmt = self.wcr_update(&r.wcr, &target, &r.var, r.dtype, false);
            self.out.line(stmt);
        }
    }

    /// The reduction local standing for element `starts` of `data` inside
    /// the parallel map being written, if it has one.
    pub(crate) fn reduction_var(&self, data: &str, starts: &[Expr]) -> Option<String> {
        let mut of_data = self.reductions.iter().filter(|r| r.data == data).peekable();
        of_data.peek()?;
        let starts: Vec<Expr> = starts.iter().map(simplify).collect();
        of_data.find(|r| r.starts == starts).map(|r| r.var.clone())
    }
}
