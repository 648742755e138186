//! Writes a callback tasklet: the call of a function pointer into Python
//! (DaCe's `callback` symbols, see [`crate::ir::callback`]) that DaCe's
//! frontend writes as `f(args)` or `out = f(args)`.
//!
//! Arguments are passed as DaCe's C type of the callback says: an array as
//! the address of its memlet's first element, a scalar argument by value, a
//! value returned through an argument (a function that returns arrays or
//! several values) as the address of the element the callee writes. The
//! connectors `__istate` / `__ostate` (DaCe's `__pystate` token, which keeps
//! callbacks in program order) carry no value: the graph's edges already
//! order the calls, so they are not read or written.

use crate::back::body::dataflow::StateCtx;
use crate::back::body::function::FnWriter;
use crate::diag::{Error, Result};
use crate::ir::*;

/// The edge of tasklet `id` at connector `c` (an input, else an output).
fn edge_at<'s>(ctx: &StateCtx<'s>, id: NodeId, c: &str) -> Option<&'s DataEdge> {
    let st = ctx.st;
    let input = ctx.adj.ins[id.index()]
        .iter()
        .map(|&ei| &st.edges[ei])
        .find(|e| e.dst_conn.as_deref() == Some(c));
    input.or_else(|| {
        ctx.adj.outs[id.index()]
            .iter()
            .map(|&ei| &st.edges[ei])
            .find(|e| e.src_conn.as_deref() == Some(c))
    })
}

impl FnWriter<'_> {
    /// Writes the callback tasklet `t` (node `id`), whose code is the one
    /// statement `[result =] func(args)`.
    pub(crate) fn callback_tasklet(
        &mut self,
        ctx: &StateCtx,
        id: NodeId,
        func: &str,
        args: &[CbArg],
        result: Option<&str>,
    ) -> Result<()> {
        let node = &ctx.st.nodes[id.index()];
        if self.in_kernel {
            return Err(Error::unsupported(
                &node.path,
                format!(
                    "callback tasklet '{}' calls '{func}' (Python) from GPU device code",
                    node.label
                ),
            ));
        }
        // Validation checked the call against the callback's type.
        let internal = |what: &str| {
            Error::invalid(
                &node.path,
                format!("callback tasklet '{}': {what}", node.label),
            )
        };
        let cb = self
            .sdfg
            .callbacks
            .get(func)
            .ok_or_else(|| internal("not a callback"))?;
        let mut printed = Vec::with_capacity(args.len());
        for (arg, (value, returned)) in args.iter().zip(cb.call_params()) {
            let text = match arg {
                // DaCe's `dace.string` is a `char *`.
                CbArg::Str(s) => format!("const_cast<char *>({})", super::tasklet::c_string(s)),
                CbArg::Null => "nullptr".to_string(),
                CbArg::Value(Expr::Sym(c)) if edge_at(ctx, id, c).is_some() => {
                    let e = edge_at(ctx, id, c).ok_or_else(|| internal("no edge"))?;
                    let (data, d, starts) = self.memlet_start(e, &internal)?;
                    match value {
                        CbValue::Scalar(_) if !returned => self.element(data, d, &starts),
                        _ => format!("&{}", self.element(data, d, &starts)),
                    }
                }
                CbArg::Value(e) => self.interstate_expr(e),
            };
            printed.push(text);
        }
        let call = format!("{func}({})", printed.join(", "));
        self.out.line(format!(
            "// tasklet {} (calls back into Python)",
            node.label
        ));
        match result {
            None => self.out.line(format!("{call};")),
            Some(r) => {
                let e = ctx.adj.outs[id.index()]
                    .iter()
                    .map(|&ei| &ctx.st.edges[ei])
                    .find(|e| e.src_conn.as_deref() == Some(r))
                    .ok_or_else(|| internal("no output edge"))?;
                let (data, d, starts) = self.memlet_start(e, &internal)?;
                let target = self.element(data, d, &starts);
                self.out.line(format!("{target} = {call};"));
            }
        }
        Ok(())
    }

    /// The container of a memlet, its descriptor and the first element of
    /// its subset.
    fn memlet_start<'e>(
        &self,
        e: &'e DataEdge,
        internal: &dyn Fn(&str) -> Error,
    ) -> Result<(&'e str, &DataDesc, Vec<Expr>)> {
        let data = e
            .memlet
            .data
            .as_deref()
            .ok_or_else(|| internal("empty memlet"))?;
        let d = self.data_desc(data, &e.path)?;
        let sub: &[RangeDim] = e.memlet.subset.as_deref().unwrap_or_default();
        let starts = if sub.len() == d.rank() {
            sub.iter().map(|r| r.start.clone()).collect()
        } else {
            vec![Expr::Int(0); d.rank()]
        };
        Ok((data, d, starts))
    }
}
