//! Streams (DaCe's `Stream` containers) and consume scopes: what each
//! stream transient is, and what sdfgc refuses of them.
//!
//! A stream is a thread-safe FIFO queue (DaCe's `dace::Stream`), except
//! where DaCe's code generator makes it an *array stream view*
//! (`dace::ArrayStreamView`, `sdfg.utils.is_array_stream_view`): a stream
//! transient of one element used in one state, written by code or arrays
//! and read into exactly one array. Its pushes then append to that array
//! directly (a pointer and an atomic count: no queue, no heap), and its copy
//! into the array moves nothing. sdfgc makes the same decision, so that a
//! program gives DaCe's results also where they differ (an array pushed
//! into another stream after it was filled through a view pushes the
//! elements the view appended, not the memlet's count).

use std::collections::BTreeMap;

use crate::diag::{Error, Result};
use crate::ir::*;
use crate::options::{CompileOptions, Target};

/// A stream transient that is an array stream view.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayView {
    /// JSON pointer of the state it lives in.
    pub state: String,
    /// The edge from the stream's access node into the array (index in the state).
    pub edge: usize,
    /// The array its pushes append to.
    pub sink: String,
}

/// Stream decisions of a whole SDFG tree.
#[derive(Clone, Debug, Default)]
pub struct StreamPlan {
    /// Array stream views by (SDFG id, stream name).
    pub views: BTreeMap<(u32, String), ArrayView>,
    /// Any stream container or consume scope in the program.
    pub used: bool,
}

impl StreamPlan {
    /// The view a stream transient is, if it is one.
    pub fn view(&self, sdfg: u32, name: &str) -> Option<&ArrayView> {
        self.views.get(&(sdfg, name.to_string()))
    }

    /// The view stream whose sink is `array` in the state at `state`, if any
    /// (DaCe's `src` attribute of that array: a copy of the array into
    /// another stream pushes the elements the view appended).
    pub fn view_into(&self, sdfg: u32, state: &str, array: &str) -> Option<&str> {
        self.views
            .iter()
            .find(|((s, _), v)| *s == sdfg && v.state == state && v.sink == array)
            .map(|((_, n), _)| n.as_str())
    }
}

/// Plans the streams of `sdfg` and its nested SDFGs; refuses by name what
/// sdfgc does not compile.
pub fn plan(sdfg: &Sdfg, opts: &CompileOptions) -> Result<StreamPlan> {
    let mut plan = StreamPlan::default();
    let mut err = None;
    sdfg.for_each_sdfg(&mut |s| {
        if err.is_none()
            && let Err(e) = plan_sdfg(s, s.id == sdfg.id, opts, &mut plan)
        {
            err = Some(e);
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(plan),
    }
}

fn plan_sdfg(sdfg: &Sdfg, top: bool, opts: &CompileOptions, plan: &mut StreamPlan) -> Result<()> {
    for (name, d) in sdfg
        .arrays
        .iter()
        .filter(|(_, d)| d.kind == DataKind::Stream)
    {
        plan.used = true;
        let refuse = |what: &str| {
            Err(Error::unsupported(
                &d.path,
                format!("stream '{name}': {what}"),
            ))
        };
        if opts.target != Target::Cpp || d.storage.is_gpu() {
            return refuse("streams are compiled for the CPU (--target cpp) only");
        }
        if d.shape.len() != 1 || d.shape[0] != Expr::Int(1) {
            return refuse("arrays of streams are not supported");
        }
        if top && !d.transient {
            return refuse(
                "a stream argument of the program (DaCe's Python interface cannot pass one either)",
            );
        }
    }
    let mut states: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut err = None;
    each_state_with_path(&sdfg.body, &mut |st, path| {
        if err.is_some() {
            return;
        }
        for n in &st.nodes {
            if let NodeKind::Access(a) = &n.kind
                && sdfg
                    .arrays
                    .get(&a.data)
                    .is_some_and(|d| d.kind == DataKind::Stream)
            {
                let e = states.entry(a.data.as_str()).or_default();
                if !e.contains(&path) {
                    e.push(path);
                }
            }
            if let NodeKind::MapEntry(m) = &n.kind
                && let Some(c) = &m.consume
                && let Err(e) = check_consume(sdfg, st, n, m, c, opts)
            {
                err = Some(e);
                plan.used = true;
                return;
            }
            if matches!(&n.kind, NodeKind::MapEntry(m) if m.consume.is_some()) {
                plan.used = true;
            }
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    for (name, paths) in states {
        let d = &sdfg.arrays[name];
        if !d.transient || paths.len() != 1 {
            continue;
        }
        let path = paths[0];
        let Some(st) = find_state(&sdfg.body, path) else {
            continue;
        };
        for (i, n) in st.nodes.iter().enumerate() {
            if !matches!(&n.kind, NodeKind::Access(a) if a.data == name) {
                continue;
            }
            let id = NodeId(i as u32);
            let Some(sink) = array_stream_view(sdfg, st, id) else {
                continue;
            };
            let outs: Vec<usize> = (0..st.edges.len())
                .filter(|&k| st.edges[k].src == id)
                .collect();
            if outs.len() != 1 {
                return Err(Error::unsupported(
                    &n.path,
                    format!("stream '{name}' read into an array and elsewhere in one state"),
                ));
            }
            plan.views.insert(
                (sdfg.id, name.to_string()),
                ArrayView {
                    state: path.to_string(),
                    edge: outs[0],
                    sink,
                },
            );
            break;
        }
    }
    Ok(())
}

/// What sdfgc compiles of a consume scope: chunks of any size, without a
/// quiescence condition, from a stream access node, on the CPU.
fn check_consume(
    sdfg: &Sdfg,
    st: &State,
    n: &Node,
    m: &MapEntry,
    c: &Consume,
    opts: &CompileOptions,
) -> Result<()> {
    let refuse = |what: &str| {
        Err(Error::unsupported(
            &n.path,
            format!("consume scope '{}': {what}", m.label),
        ))
    };
    if opts.target != Target::Cpp {
        return refuse("consume scopes are compiled for the CPU (--target cpp) only");
    }
    if c.chunksize < 1 {
        return refuse(&format!("chunksize {} (at least 1)", c.chunksize));
    }
    if c.condition.is_some() {
        return refuse("a quiescence condition");
    }
    let id = st
        .nodes
        .iter()
        .position(|x| std::ptr::eq(x, n))
        .map(|i| NodeId(i as u32));
    match id.and_then(|id| consumed_stream(st, id)) {
        Some(s)
            if sdfg
                .arrays
                .get(s)
                .is_some_and(|d| d.kind == DataKind::Stream) =>
        {
            Ok(())
        }
        _ => refuse("its 'IN_stream' input is not an access node of a stream"),
    }
}

/// The stream a consume entry drains: the access node on its `IN_stream` edge.
pub fn consumed_stream(st: &State, entry: NodeId) -> Option<&str> {
    let e = st
        .edges
        .iter()
        .find(|e| e.dst == entry && e.dst_conn.as_deref() == Some("IN_stream"))?;
    match &st.nodes[e.src.index()].kind {
        NodeKind::Access(a) => Some(&a.data),
        _ => None,
    }
}

/// What a memlet path ends at, seen from a stream: code, an array, or neither.
#[derive(PartialEq)]
enum End<'a> {
    Code,
    Array(&'a str),
    Other,
}

/// DaCe's `is_array_stream_view` for access node `id`: the sink array if
/// something writes the stream (code or an array) and exactly one array reads it.
fn array_stream_view(sdfg: &Sdfg, st: &State, id: NodeId) -> Option<String> {
    let end = |n: NodeId| -> End {
        match &st.nodes[n.index()].kind {
            NodeKind::Tasklet(_) | NodeKind::Nested(_) | NodeKind::Library(_) => End::Code,
            NodeKind::Access(a) => match sdfg.arrays.get(&a.data) {
                Some(d) if matches!(d.kind, DataKind::Array | DataKind::View) => {
                    End::Array(&a.data)
                }
                _ => End::Other,
            },
            _ => End::Other,
        }
    };
    let sources: Vec<End> = st
        .edges
        .iter()
        .enumerate()
        .filter(|(_, e)| e.dst == id)
        .map(|(k, _)| end(path_end(st, k, false)))
        .collect();
    let sinks: Vec<&str> = st
        .edges
        .iter()
        .enumerate()
        .filter(|(_, e)| e.src == id)
        .filter_map(|(k, _)| match end(path_end(st, k, true)) {
            End::Array(a) => Some(a),
            _ => None,
        })
        .collect();
    let written = sources.iter().any(|s| *s != End::Other);
    (written && sinks.len() == 1).then(|| sinks[0].to_string())
}

/// The node a memlet path through edge `k` ends at, followed through scope
/// entries and exits by their `IN_x`/`OUT_x` connectors: downstream
/// (`forward`) or upstream.
fn path_end(st: &State, mut k: usize, forward: bool) -> NodeId {
    for _ in 0..st.nodes.len() {
        let e = &st.edges[k];
        let (node, conn) = if forward {
            (e.dst, e.dst_conn.as_deref())
        } else {
            (e.src, e.src_conn.as_deref())
        };
        let scope = matches!(
            st.nodes[node.index()].kind,
            NodeKind::MapEntry(_) | NodeKind::MapExit { .. }
        );
        let next_conn = match conn {
            Some(c) if scope && forward => c.strip_prefix("IN_").map(|s| format!("OUT_{s}")),
            Some(c) if scope => c.strip_prefix("OUT_").map(|s| format!("IN_{s}")),
            _ => None,
        };
        let Some(nc) = next_conn else { return node };
        let next = st.edges.iter().position(|x| {
            if forward {
                x.src == node && x.src_conn.as_deref() == Some(nc.as_str())
            } else {
                x.dst == node && x.dst_conn.as_deref() == Some(nc.as_str())
            }
        });
        match next {
            Some(n) => k = n,
            None => return node,
        }
    }
    st.edges[k].dst
}

/// Calls `f` on every state of the region with its JSON pointer (not inside nested SDFGs).
fn each_state_with_path<'a>(r: &'a Region, f: &mut dyn FnMut(&'a State, &'a str)) {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => f(st, &b.path),
            BlockKind::Region(inner) => each_state_with_path(inner, f),
            BlockKind::Conditional(brs) => brs.iter().for_each(|(_, r)| each_state_with_path(r, f)),
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }
}

fn find_state<'a>(r: &'a Region, path: &str) -> Option<&'a State> {
    let mut found = None;
    each_state_with_path(r, &mut |st, p| {
        if p == path {
            found = Some(st);
        }
    });
    found
}
