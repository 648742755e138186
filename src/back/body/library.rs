//! Expansions of the library nodes sdfgc supports (Reduce, MatMul,
//! Transpose) into loops: pure expansions, no external library.

use crate::back::body::dataflow::StateCtx;
use crate::back::body::function::FnWriter;
use crate::back::cexpr;
use crate::diag::{Error, Result};
use crate::ir::simplify::simplify;
use crate::ir::*;

/// One side of a library node: container, subset and its non-unit dimensions.
struct Side {
    data: String,
    desc: DataDesc,
    sub: Subset,
    nonunit: Vec<usize>,
    wcr: Option<Wcr>,
}

fn extent(r: &RangeDim) -> Expr {
    r.extent()
}

impl Side {
    /// Index vector with loop variables placed on the given dimensions.
    fn index(&self, vars: &[(usize, &str)]) -> Vec<Expr> {
        let mut idx: Vec<Expr> = self.sub.iter().map(|r| r.start.clone()).collect();
        for (d, v) in vars {
            let r = &self.sub[*d];
            idx[*d] = simplify(&Expr::bin(
                BinaryOp::Add,
                r.start.clone(),
                Expr::bin(BinaryOp::Mul, Expr::sym(*v), r.step.clone()),
            ));
        }
        idx
    }
}

impl FnWriter<'_> {
    fn side(
        &self,
        ctx: &StateCtx,
        id: NodeId,
        conn: Option<&str>,
        incoming: bool,
        node: &Node,
    ) -> Result<Side> {
        let st = ctx.st;
        let list = if incoming {
            &ctx.adj.ins[id.index()]
        } else {
            &ctx.adj.outs[id.index()]
        };
        let edges: Vec<&DataEdge> = list
            .iter()
            .map(|&i| &st.edges[i])
            .filter(|e| !e.memlet.is_empty())
            .collect();
        let e = match conn {
            Some(c) => edges
                .iter()
                .find(|e| (if incoming { &e.dst_conn } else { &e.src_conn }).as_deref() == Some(c))
                .copied(),
            None => edges.first().copied(),
        }
        .ok_or_else(|| {
            let what = if incoming { "input" } else { "output" };
            Error::invalid(
                &node.path,
                format!(
                    "library node '{}' has no {what} {}",
                    node.label,
                    conn.unwrap_or("")
                ),
            )
        })?;
        let data = e.memlet.data.clone().unwrap_or_default();
        let desc = self.data_desc(&data, &e.path)?;
        let sub = match &e.memlet.subset {
            Some(s) if s.len() == desc.rank() => s.clone(),
            _ => desc
                .shape
                .iter()
                .map(|s| RangeDim {
                    start: Expr::Int(0),
                    end: simplify(&Expr::bin(BinaryOp::Sub, s.clone(), Expr::Int(1))),
                    step: Expr::Int(1),
                    tile: Expr::Int(1),
                })
                .collect(),
        };
        let nonunit = (0..sub.len())
            .filter(|&k| extent(&sub[k]) != Expr::Int(1))
            .collect();
        Ok(Side {
            data,
            desc: desc.clone(),
            sub,
            nonunit,
            wcr: e.memlet.wcr.clone(),
        })
    }

    /// Writes the expansion of a library node.
    pub(crate) fn library(&mut self, ctx: &StateCtx, id: NodeId, l: &LibraryNode) -> Result<()> {
        let node = &ctx.st.nodes[id.index()];
        self.out
            .line(format!("// library node {} ({})", node.label, l.classpath));
        self.out.open("");
        match &l.kind {
            LibraryKind::Reduce {
                axes,
                wcr,
                identity,
            } => {
                let input = self.side(ctx, id, None, true, node)?;
                let output = self.side(ctx, id, None, false, node)?;
                self.reduce(
                    node,
                    &input,
                    &output,
                    axes.as_deref(),
                    wcr,
                    identity.as_ref(),
                )?;
            }
            LibraryKind::MatMul { alpha, beta } => {
                let a = self.side(ctx, id, Some("_a"), true, node)?;
                let b = self.side(ctx, id, Some("_b"), true, node)?;
                let c = self.side(ctx, id, Some("_c"), false, node)?;
                self.matmul(node, &a, &b, &c, alpha, beta)?;
            }
            LibraryKind::Transpose => {
                let a = self.side(ctx, id, None, true, node)?;
                let b = self.side(ctx, id, None, false, node)?;
                if a.nonunit.len() != 2 || b.nonunit.len() != 2 {
                    return Err(Error::unsupported(
                        &node.path,
                        format!("Transpose '{}' of other than two dimensions", node.label),
                    ));
                }
                self.loops(
                    &[
                        ("__i", extent(&a.sub[a.nonunit[0]])),
                        ("__j", extent(&a.sub[a.nonunit[1]])),
                    ],
                    true,
                );
                let src = self.element(
                    &a.data,
                    &a.desc,
                    &a.index(&[(a.nonunit[0], "__i"), (a.nonunit[1], "__j")]),
                );
                let dst = self.element(
                    &b.data,
                    &b.desc,
                    &b.index(&[(b.nonunit[0], "__j"), (b.nonunit[1], "__i")]),
                );
                self.out.line(format!("{dst} = {src};"));
                self.close_loops(2);
            }
        }
        self.out.close();
        Ok(())
    }

    /// Opens loops `for (v = 0; v < n; ++v)`, parallel over all of them if allowed.
    fn loops(&mut self, vars: &[(&str, Expr)], parallel: bool) -> usize {
        if parallel && !self.in_parallel && !vars.is_empty() {
            let collapse = if vars.len() > 1 {
                format!(" collapse({})", vars.len())
            } else {
                String::new()
            };
            self.out.line(format!("#pragma omp parallel for{collapse}"));
        }
        for (v, n) in vars {
            let n = self.sym(n);
            self.out
                .open(format!("for (int64_t {v} = 0; {v} < {n}; ++{v})"));
        }
        vars.len()
    }

    fn close_loops(&mut self, n: usize) {
        for _ in 0..n {
            self.out.close();
        }
    }

    fn reduce(
        &mut self,
        node: &Node,
        input: &Side,
        output: &Side,
        axes: Option<&[i64]>,
        wcr: &Wcr,
        identity: Option<&Expr>,
    ) -> Result<()> {
        let rank = input.sub.len();
        let axes: Vec<usize> = match axes {
            None => (0..rank).collect(),
            Some(a) => a
                .iter()
                .map(|&x| if x < 0 { x + rank as i64 } else { x })
                .map(|x| {
                    usize::try_from(x)
                        .ok()
                        .filter(|&x| x < rank)
                        .ok_or_else(|| {
                            Error::invalid(&node.path, format!("Reduce axis {x} out of range"))
                        })
                })
                .collect::<Result<_>>()?,
        };
        let kept: Vec<usize> = (0..rank).filter(|d| !axes.contains(d)).collect();
        let kept_nonunit: Vec<usize> = kept
            .iter()
            .copied()
            .filter(|d| input.nonunit.contains(d))
            .collect();
        // Where the kept dimensions land in the output.
        let out_dims: Vec<usize> = if output.nonunit.len() == kept_nonunit.len() {
            output.nonunit.clone()
        } else if output.sub.len() == rank {
            kept_nonunit.clone()
        } else {
            return Err(Error::unsupported(
                &node.path,
                format!(
                    "Reduce '{}': cannot match the output shape to the kept axes",
                    node.label
                ),
            ));
        };
        let ovars: Vec<String> = (0..kept_nonunit.len()).map(|k| format!("__o{k}")).collect();
        let rvars: Vec<String> = (0..axes.len()).map(|k| format!("__r{k}")).collect();
        let outer: Vec<(&str, Expr)> = kept_nonunit
            .iter()
            .zip(&ovars)
            .map(|(&d, v)| (v.as_str(), extent(&input.sub[d])))
            .collect();
        let n_outer = self.loops(&outer, true);
        let t = output.desc.dtype;
        let ct = t.ctype();
        let mut in_vars: Vec<(usize, &str)> = kept_nonunit
            .iter()
            .zip(&ovars)
            .map(|(&d, v)| (d, v.as_str()))
            .collect();
        in_vars.extend(axes.iter().zip(&rvars).map(|(&d, v)| (d, v.as_str())));
        let value = self.element(&input.data, &input.desc, &input.index(&in_vars));
        let init = identity.map(|e| identity_literal(e, t));
        match &init {
            Some(v) => self.out.line(format!("{ct} __acc = {v};")),
            None => {
                self.out.line(format!("{ct} __acc = {ct}();"));
                self.out.line("bool __first = true;");
            }
        }
        let inner: Vec<(&str, Expr)> = axes
            .iter()
            .zip(&rvars)
            .map(|(&d, v)| (v.as_str(), extent(&input.sub[d])))
            .collect();
        let n_inner = self.loops(&inner, false);
        let update = self.wcr_update(wcr, "__acc", &value, t, false);
        if init.is_some() {
            self.out.line(update);
        } else {
            self.out.line(format!(
                "if (__first) {{ __acc = {value}; __first = false; }} else {{ {update} }}"
            ));
        }
        self.close_loops(n_inner);
        let out_vars: Vec<(usize, &str)> = out_dims
            .iter()
            .zip(&ovars)
            .map(|(&d, v)| (d, v.as_str()))
            .collect();
        let target = self.element(&output.data, &output.desc, &output.index(&out_vars));
        let store = match &output.wcr {
            None => format!("{target} = __acc;"),
            Some(w) => {
                let atomic = self.in_parallel && !self.is_private(&output.data);
                self.wcr_update(w, &target, "__acc", t, atomic)
            }
        };
        self.out.line(store);
        self.close_loops(n_outer);
        Ok(())
    }

    fn matmul(
        &mut self,
        node: &Node,
        a: &Side,
        b: &Side,
        c: &Side,
        alpha: &Expr,
        beta: &Expr,
    ) -> Result<()> {
        let (ra, rb) = (a.nonunit.len(), b.nonunit.len());
        if ra > 2 || rb > 2 || ra == 0 || rb == 0 {
            return Err(Error::unsupported(
                &node.path,
                format!("MatMul '{}' of {ra}-D by {rb}-D operands", node.label),
            ));
        }
        let k_a = a.nonunit[ra - 1];
        let k_b = b.nonunit[0];
        let mut outer: Vec<(&str, Expr)> = Vec::new();
        let mut a_vars: Vec<(usize, &str)> = vec![(k_a, "__k")];
        let mut b_vars: Vec<(usize, &str)> = vec![(k_b, "__k")];
        let mut c_loop = Vec::new();
        if ra == 2 {
            outer.push(("__i", extent(&a.sub[a.nonunit[0]])));
            a_vars.push((a.nonunit[0], "__i"));
            c_loop.push("__i");
        }
        if rb == 2 {
            outer.push(("__j", extent(&b.sub[b.nonunit[1]])));
            b_vars.push((b.nonunit[1], "__j"));
            c_loop.push("__j");
        }
        if c.nonunit.len() != c_loop.len() {
            return Err(Error::unsupported(
                &node.path,
                format!(
                    "MatMul '{}': output shape does not match the operands",
                    node.label
                ),
            ));
        }
        let c_vars: Vec<(usize, &str)> = c.nonunit.iter().copied().zip(c_loop).collect();
        let t = c.desc.dtype;
        let ct = t.ctype();
        let n_outer = self.loops(&outer, true);
        self.out.line(format!("{ct} __acc = {ct}(0);"));
        let n_inner = self.loops(&[("__k", extent(&a.sub[k_a]))], false);
        let av = self.element(&a.data, &a.desc, &a.index(&a_vars));
        let bv = self.element(&b.data, &b.desc, &b.index(&b_vars));
        self.out.line(format!("__acc += {av} * {bv};"));
        self.close_loops(n_inner);
        let target = self.element(&c.data, &c.desc, &c.index(&c_vars));
        let alpha = simplify(alpha);
        let beta = simplify(beta);
        let scaled = if alpha == Expr::Int(1) {
            "__acc".to_string()
        } else {
            format!("{} * __acc", cexpr::wrap(&self.sym(&alpha)))
        };
        let value = if beta == Expr::Int(0) || beta == Expr::Float(0.0) {
            scaled
        } else {
            format!("{scaled} + {} * {target}", cexpr::wrap(&self.sym(&beta)))
        };
        let store = match &c.wcr {
            None => format!("{target} = {value};"),
            Some(w) => {
                let atomic = self.in_parallel && !self.is_private(&c.data);
                self.wcr_update(w, &target, &value, t, atomic)
            }
        };
        self.out.line(store);
        self.close_loops(n_outer);
        Ok(())
    }
}

/// The identity of a reduction as a literal of type `t`; float infinities
/// and out-of-range values become the type's limits.
fn identity_literal(e: &Expr, t: DType) -> String {
    let ct = t.ctype();
    let v = simplify(e);
    if t.is_integer()
        && let Expr::Float(f) = v
    {
        if f <= i64::MIN as f64 || f.is_infinite() && f < 0.0 {
            return format!("std::numeric_limits<{ct}>::lowest()");
        }
        if f >= i64::MAX as f64 || f.is_infinite() {
            return format!("std::numeric_limits<{ct}>::max()");
        }
        if f < -2147483648.0 && t == DType::Int32 {
            return format!("std::numeric_limits<{ct}>::lowest()");
        }
        if f > 2147483647.0 && t == DType::Int32 {
            return format!("std::numeric_limits<{ct}>::max()");
        }
    }
    format!("{ct}({})", cexpr::to_cpp(&v))
}
