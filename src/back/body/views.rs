//! Views: which edge of a view access node leads to the data it views, and
//! where its pointer is declared.
//!
//! The rules are DaCe's (`sdutil.get_view_edge`): the edge is followed along
//! its memlet path through map entries and exits (`IN_x` / `OUT_x`
//! connectors) to the access node at its end, so a view inside a map may be
//! fed from the map entry or write out through the map exit (as gt4py's
//! lowering and DaCe's auto-optimizer place them). Such a view's offset
//! depends on the map parameters: its pointer is declared at the start of
//! the scope body that holds it, top-level views at the start of the state.

use crate::back::body::dataflow::{Adjacency, StateCtx};
use crate::back::body::function::{Access, FnWriter};
use crate::diag::{Error, Result};
use crate::ir::*;

/// The edge that defines a view and what it leads to.
#[derive(Clone, Debug)]
pub(crate) struct ViewEdge {
    /// Index of the edge adjacent to the view node.
    pub edge: usize,
    /// The viewed container (the access node at the end of the memlet path).
    pub viewed: String,
    /// The subset on the viewed container, as the adjacent edge states it
    /// (in the view's scope: it may use map parameters).
    pub subset: Option<Subset>,
}

fn is_scope(st: &State, id: NodeId) -> bool {
    matches!(
        st.nodes[id.index()].kind,
        NodeKind::MapEntry(_) | NodeKind::MapExit { .. }
    )
}

/// The memlet path of edge `ei` (DaCe's `memlet_path`): edges from its
/// source node to its sink node through scope connectors.
pub(crate) fn memlet_path(st: &State, adj: &Adjacency, ei: usize) -> Vec<usize> {
    let mut path = vec![ei];
    // Backward: a scope node's `OUT_x` is fed by its `IN_x`.
    let mut cur = ei;
    while path.len() <= st.edges.len() {
        let e = &st.edges[cur];
        let Some(conn) = e.src_conn.as_deref().and_then(|c| c.strip_prefix("OUT_")) else {
            break;
        };
        if !is_scope(st, e.src) {
            break;
        }
        let want = format!("IN_{conn}");
        match adj.ins[e.src.index()]
            .iter()
            .find(|&&i| st.edges[i].dst_conn.as_deref() == Some(want.as_str()))
        {
            Some(&i) => {
                path.insert(0, i);
                cur = i;
            }
            None => break,
        }
    }
    // Forward: a scope node's `IN_x` continues at its `OUT_x`.
    let mut cur = ei;
    while path.len() <= st.edges.len() {
        let e = &st.edges[cur];
        let Some(conn) = e.dst_conn.as_deref().and_then(|c| c.strip_prefix("IN_")) else {
            break;
        };
        if !is_scope(st, e.dst) {
            break;
        }
        let want = format!("OUT_{conn}");
        match adj.outs[e.dst.index()]
            .iter()
            .find(|&&i| st.edges[i].src_conn.as_deref() == Some(want.as_str()))
        {
            Some(&i) => {
                path.push(i);
                cur = i;
            }
            None => break,
        }
    }
    path
}

fn access_data(st: &State, id: NodeId) -> Option<&str> {
    match &st.nodes[id.index()].kind {
        NodeKind::Access(a) => Some(&a.data),
        _ => None,
    }
}

/// DaCe's `get_view_edge`: the in- or out-edge of view node `id` whose
/// memlet path leads to the viewed access node; None for an invalid view.
pub(crate) fn view_edge(st: &State, adj: &Adjacency, id: NodeId) -> Option<ViewEdge> {
    let view = access_data(st, id)?;
    let (ins, outs) = (&adj.ins[id.index()], &adj.outs[id.index()]);
    let source_is_data = |ei: usize| {
        let p = memlet_path(st, adj, ei);
        access_data(st, st.edges[p[0]].src).is_some()
    };
    let sink_is_data = |ei: usize| {
        let p = memlet_path(st, adj, ei);
        access_data(st, st.edges[*p.last().unwrap_or(&ei)].dst).is_some()
    };
    let chosen = if ins.len() == 1 && outs.len() != 1 {
        source_is_data(ins[0]).then_some(ins[0])
    } else if outs.len() == 1 && ins.len() != 1 {
        sink_is_data(outs[0]).then_some(outs[0])
    } else if ins.len() != 1 {
        None
    } else {
        let (i, o) = (ins[0], outs[0]);
        let (ie, oe) = (&st.edges[i], &st.edges[o]);
        match (source_is_data(i), sink_is_data(o)) {
            (true, false) => Some(i),
            (false, true) => Some(o),
            (false, false) => None,
            (true, true) => {
                let names = |e: &DataEdge| e.memlet.data.as_deref() == Some(view);
                if ie.dst_conn.as_deref() == Some("views") {
                    Some(i)
                } else if oe.src_conn.as_deref() == Some("views") || (names(ie) && !names(oe)) {
                    Some(o)
                } else if !names(ie) && names(oe) {
                    Some(i)
                } else if names(ie) && names(oe) {
                    None
                } else if matches!(st.nodes[ie.src.index()].kind, NodeKind::MapEntry(_)) {
                    Some(i)
                } else if matches!(st.nodes[oe.dst.index()].kind, NodeKind::MapExit { .. }) {
                    Some(o)
                } else {
                    Some(i)
                }
            }
        }
    }?;
    let path = memlet_path(st, adj, chosen);
    let e = &st.edges[chosen];
    let end = if e.dst == id {
        st.edges[path[0]].src
    } else {
        st.edges[*path.last()?].dst
    };
    let viewed = access_data(st, end)?.to_string();
    let subset = if e.memlet.data.as_deref() == Some(viewed.as_str()) {
        e.memlet.subset.clone()
    } else {
        e.memlet.other_subset.clone()
    };
    Some(ViewEdge {
        edge: chosen,
        viewed,
        subset,
    })
}

impl FnWriter<'_> {
    /// `nodes` with each view of a member of a structure view after that
    /// structure view (the member's access node was split off it at load,
    /// so no edge orders them), else in the given order.
    fn views_in_order(&self, ctx: &StateCtx, nodes: &[NodeId]) -> Vec<NodeId> {
        let st = ctx.st;
        let root_view = |id: NodeId| -> Option<String> {
            let ve = view_edge(st, &ctx.adj, id)?;
            let mut cur = ve.viewed;
            while let Some(m) = self.sdfg.arrays.get(&cur).and_then(|d| d.member.as_ref()) {
                cur = m.parent.clone();
            }
            (cur != ve_name(st, id)).then_some(cur)
        };
        fn ve_name(st: &State, id: NodeId) -> String {
            access_data(st, id).unwrap_or_default().to_string()
        }
        let names: std::collections::BTreeSet<String> =
            nodes.iter().map(|&id| ve_name(st, id)).collect();
        let mut out = Vec::with_capacity(nodes.len());
        let mut done = std::collections::BTreeSet::new();
        let mut pending: Vec<(NodeId, String)> = Vec::new();
        for &id in nodes {
            let is_view = access_data(st, id)
                .and_then(|n| self.sdfg.arrays.get(n))
                .is_some_and(|d| d.kind == DataKind::View);
            let wait = if is_view { root_view(id) } else { None };
            match wait {
                Some(r) if names.contains(&r) && !done.contains(&r) => pending.push((id, r)),
                _ => {
                    out.push(id);
                    done.insert(ve_name(st, id));
                    // Whatever waited for it.
                    while let Some(k) = pending.iter().position(|(_, r)| done.contains(r)) {
                        let (p, _) = pending.remove(k);
                        out.push(p);
                        done.insert(ve_name(st, p));
                    }
                }
            }
        }
        out.extend(pending.into_iter().map(|(p, _)| p));
        out
    }

    /// Declares the pointer of every view among `nodes` (view access nodes
    /// of one scope body, or of the state's top level).
    pub(crate) fn declare_views_of(&mut self, ctx: &StateCtx, nodes: &[NodeId]) -> Result<()> {
        let st = ctx.st;
        let mut declared = std::collections::BTreeSet::new();
        let nodes = self.views_in_order(ctx, nodes);
        for &id in &nodes {
            let Some(view) = access_data(st, id) else {
                continue;
            };
            let Some(d) = self.sdfg.arrays.get(view) else {
                continue;
            };
            if d.kind != DataKind::View || declared.contains(view) {
                continue;
            }
            let ve = view_edge(st, &ctx.adj, id).ok_or_else(|| {
                Error::unsupported(
                    &st.nodes[id.index()].path,
                    format!("view '{view}' is not connected to the data it views"),
                )
            })?;
            let vd = self.data_desc(&ve.viewed, &st.edges[ve.edge].path)?;
            let start: Vec<Expr> = match &ve.subset {
                Some(s) if s.len() == vd.rank() => s.iter().map(|r| r.start.clone()).collect(),
                _ => vec![Expr::Int(0); vd.rank()],
            };
            let ct = d.dtype.ctype();
            // A view of one element of a container array is the pointer
            // stored there (DaCe's `allocate_view`: `double* v = A[i];`,
            // `CSRMatrix* vcsr = A[b];`).
            let deref = matches!(vd.dtype, DType::Pointer(p) if p.as_str() == format!("{ct}*"));
            let pointers = |t: DType| matches!(t, DType::Pointer(_) | DType::Struct(_));
            if deref {
                let one = ve.subset.as_ref().is_some_and(|s| {
                    s.len() == vd.rank()
                        && s.iter().all(|r| r.start == r.end && r.tile == Expr::Int(1))
                });
                if !one {
                    return Err(Error::unsupported(
                        &st.edges[ve.edge].path,
                        format!(
                            "view '{view}' of container array '{}' through a subset that is \
                             not one element (only one element is a container)",
                            ve.viewed
                        ),
                    ));
                }
            } else if matches!(d.dtype, DType::Struct(_))
                || pointers(vd.dtype) && d.dtype != vd.dtype
            {
                return Err(Error::unsupported(
                    &st.edges[ve.edge].path,
                    format!(
                        "view '{view}' ({ct}) of '{}' ({}): only views of one element of a \
                         container array, or of its own type, are supported",
                        ve.viewed,
                        vd.dtype.ctype()
                    ),
                ));
            }
            let base = match self.access.get(&ve.viewed) {
                _ if deref => self.element(&ve.viewed, vd, &start),
                Some(Access::Value(v)) => format!("&{v}"),
                _ => format!("&{}", self.element(&ve.viewed, vd, &start)),
            };
            // A view with another element type reinterprets the viewed
            // bytes (numpy's `.view(dtype)`); its subset's offsets are in
            // the viewed container's elements, as DaCe's
            // `emit_memlet_reference` casts `viewed + offset`.
            let base = if d.dtype == vd.dtype || deref {
                base
            } else {
                format!("reinterpret_cast<{ct} *>({base})")
            };
            self.out.line(format!("{ct} * {view} = {base};"));
            declared.insert(view.to_string());
            // The members of a structure view, from the struct it points to.
            self.bind_members_of(view);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(data: &str) -> NodeKind {
        NodeKind::Access(AccessNode {
            data: data.into(),
            setzero: false,
            instrument: None,
        })
    }

    fn entry(exit: u32) -> NodeKind {
        NodeKind::MapEntry(MapEntry {
            label: "m".into(),
            params: vec!["i".into()],
            range: Vec::new(),
            schedule: Schedule::Default,
            collapse: 1,
            gpu_block_size: None,
            omp_num_threads: 0,
            unroll: false,
            exit: NodeId(exit),
            consume: None,
            dynamic_inputs: NameMap::default(),
        })
    }

    /// A stand-in for a code node (no scope connectors on its edges).
    fn code() -> NodeKind {
        NodeKind::MapExit { entry: NodeId(0) }
    }

    /// (source, source connector, destination, destination connector, memlet data).
    type TestEdge<'a> = (u32, Option<&'a str>, u32, Option<&'a str>, &'a str);

    fn state(nodes: Vec<NodeKind>, edges: &[TestEdge]) -> State {
        State {
            nodes: nodes
                .into_iter()
                .map(|kind| Node {
                    label: String::new(),
                    scope: None,
                    kind,
                    path: String::new(),
                })
                .collect(),
            edges: edges
                .iter()
                .map(|&(src, sc, dst, dc, data)| DataEdge {
                    src: NodeId(src),
                    src_conn: sc.map(str::to_string),
                    dst: NodeId(dst),
                    dst_conn: dc.map(str::to_string),
                    memlet: Memlet {
                        data: Some(data.to_string()),
                        subset: None,
                        other_subset: None,
                        wcr: None,
                        dynamic: false,
                        volume: Expr::Int(1),
                        is_data_src: None,
                    },
                    path: String::new(),
                })
                .collect(),
            symbol_instrument: None,
        }
    }

    fn viewed(st: &State, view: u32) -> Option<(usize, String)> {
        let adj = Adjacency::of(st);
        view_edge(st, &adj, NodeId(view)).map(|v| (v.edge, v.viewed))
    }

    #[test]
    fn fed_from_a_map_entry() {
        // A -> entry(IN_1) -> (OUT_1) -> V -> code
        let st = state(
            vec![access("A"), entry(9), access("V"), code()],
            &[
                (0, None, 1, Some("IN_1"), "A"),
                (1, Some("OUT_1"), 2, Some("views"), "A"),
                (2, None, 3, Some("x"), "V"),
            ],
        );
        assert_eq!(viewed(&st, 2), Some((1, "A".into())));
        let adj = Adjacency::of(&st);
        assert_eq!(memlet_path(&st, &adj, 1), vec![0, 1]);
    }

    #[test]
    fn written_through_map_exits() {
        // code -> V -> exit(IN_1) -> (OUT_1) exit(IN_2) -> (OUT_2) B
        let st = state(
            vec![code(), access("V"), code(), code(), access("B")],
            &[
                (0, Some("y"), 1, None, "V"),
                (1, Some("views"), 2, Some("IN_1"), "B"),
                (2, Some("OUT_1"), 3, Some("IN_2"), "B"),
                (3, Some("OUT_2"), 4, None, "B"),
            ],
        );
        assert_eq!(viewed(&st, 1), Some((1, "B".into())));
    }

    #[test]
    fn between_two_access_nodes() {
        // A -> V -> B: the `views` connector decides, else the memlet that does not name the view.
        let edges = |out_conn| [(0, None, 1, None, "V"), (1, out_conn, 2, None, "B")];
        let nodes = || vec![access("A"), access("V"), access("B")];
        assert_eq!(
            viewed(&state(nodes(), &edges(Some("views"))), 1),
            Some((1, "B".into()))
        );
        assert_eq!(
            viewed(&state(nodes(), &edges(None)), 1),
            Some((1, "B".into()))
        );
        let named_in = [(0, None, 1, None, "A"), (1, None, 2, None, "V")];
        assert_eq!(viewed(&state(nodes(), &named_in), 1), Some((0, "A".into())));
    }

    #[test]
    fn not_connected_to_data() {
        let st = state(
            vec![code(), access("V"), code()],
            &[(0, Some("y"), 1, None, "V"), (1, None, 2, Some("x"), "V")],
        );
        assert!(viewed(&st, 1).is_none());
        let lonely = state(vec![access("V")], &[]);
        assert!(viewed(&lonely, 0).is_none());
    }
}
