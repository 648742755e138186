//! Writes the dataflow of one state: views, copies, maps, nested SDFG calls.

use std::collections::BTreeSet;

use crate::back::body::copies::{self, CopySides};
use crate::back::body::function::{Access, FnWriter};
use crate::back::body::{parallel_work, views};
use crate::diag::{Error, Result};
use crate::ir::simplify::{free_symbols, probably_equal, simplify};
use crate::ir::*;
use crate::passes::{AllocScope, Memory, reference};

/// Strided host copies of at least this many elements outside a parallel
/// region run as an OpenMP loop.
const PARALLEL_COPY_ELEMENTS: i64 = 16384;

/// Edges of a state indexed by node.
pub(crate) struct Adjacency {
    pub ins: Vec<Vec<usize>>,
    pub outs: Vec<Vec<usize>>,
}

impl Adjacency {
    pub(crate) fn of(st: &State) -> Adjacency {
        let mut ins = vec![Vec::new(); st.nodes.len()];
        let mut outs = vec![Vec::new(); st.nodes.len()];
        for (i, e) in st.edges.iter().enumerate() {
            outs[e.src.index()].push(i);
            ins[e.dst.index()].push(i);
        }
        Adjacency { ins, outs }
    }
}

/// The state-level context passed down while writing a state.
pub(crate) struct StateCtx<'s> {
    pub st: &'s State,
    pub path: &'s str,
    pub adj: Adjacency,
    /// Children of each scope, in topological order (index = entry node; last = top level).
    pub children: Vec<Vec<NodeId>>,
}

fn data_of(st: &State, id: NodeId) -> Option<&str> {
    match &st.nodes[id.index()].kind {
        NodeKind::Access(a) => Some(&a.data),
        _ => None,
    }
}

impl FnWriter<'_> {
    /// Writes one state.
    pub fn state(&mut self, st: &State, b: &Block) -> Result<()> {
        self.symbol_instrument(st);
        if st.nodes.is_empty() {
            return Ok(());
        }
        let adj = Adjacency::of(st);
        let order = topological_order(st, &b.path, &b.label)?;
        let top = st.nodes.len();
        let mut children = vec![Vec::new(); top + 1];
        for id in order {
            let n = &st.nodes[id.index()];
            if matches!(n.kind, NodeKind::MapExit { .. }) {
                continue;
            }
            children[n.scope.map(|s| s.index()).unwrap_or(top)].push(id);
        }
        let ctx = StateCtx {
            st,
            path: &b.path,
            adj,
            children,
        };
        self.out.line(format!("// state {}", b.label));
        self.out.open("");
        let frees = self.state_allocations(&ctx)?;
        self.declare_views(&ctx)?;
        let host = !self.in_kernel;
        if host {
            self.fork_streams();
        }
        let top_nodes = ctx.children[top].clone();
        self.scope(&ctx, &top_nodes)?;
        if host {
            self.join_streams();
        }
        for f in frees {
            self.out.line(f);
        }
        self.out.close();
        Ok(())
    }

    /// Allocates (and zeroes) what lives exactly as long as this state; returns the frees.
    fn state_allocations(&mut self, ctx: &StateCtx) -> Result<Vec<String>> {
        let sdfg = self.sdfg;
        let mut frees = Vec::new();
        let mut zeroed = BTreeSet::new();
        let p = self.p;
        // Streams after the arrays (a view's array exists before it).
        let mut streams = Vec::new();
        for name in p
            .alloc
            .in_scope(sdfg.id, AllocScope::State(ctx.path.to_string()))
        {
            let (Some(plan), Some(d)) = (p.alloc.get(sdfg.id, name), sdfg.arrays.get(name)) else {
                continue;
            };
            if d.kind == DataKind::Stream {
                streams.push((name, d));
                continue;
            }
            if d.kind == DataKind::Reference {
                self.out.line(reference_decl(name, d));
                continue;
            }
            // Device code allocates nothing (copies of the thread, stack arrays).
            let held = plan.slice.is_some() || self.stack_arrays.contains(name);
            if !held
                && (matches!(plan.memory, Memory::Heap | Memory::Pool)
                    || (plan.memory == Memory::Local
                        && matches!(self.access.get(name), Some(Access::Ptr(_)))))
            {
                let (alloc, free) = self.alloc_free(name, d, &plan.memory);
                self.out.line(alloc);
                frees.push(free);
            }
            if plan.zero && zeroed.insert(name.clone()) {
                let z = self.zero_stmt(name, d);
                self.out.line(z);
            }
        }
        for (name, d) in streams {
            let decl = self.stream_decl(name, d)?;
            self.out.line(decl);
        }
        // `setzero` access nodes: zero at the start of the state, every time it runs.
        for n in &ctx.st.nodes {
            if let NodeKind::Access(a) = &n.kind
                && a.setzero
                && sdfg
                    .arrays
                    .get(&a.data)
                    .is_some_and(|d| d.kind != DataKind::Stream)
                && zeroed.insert(a.data.clone())
                && let Some(d) = sdfg.arrays.get(&a.data)
            {
                let z = self.zero_stmt(&a.data, d);
                self.out.line(z);
            }
        }
        Ok(frees)
    }

    /// Declares the pointer of each top-level view of the state (views
    /// inside a scope are declared at the start of its body: [`Self::scope`]).
    fn declare_views(&mut self, ctx: &StateCtx) -> Result<()> {
        let st = ctx.st;
        let top: Vec<NodeId> = topological_order(st, ctx.path, "")?
            .into_iter()
            .filter(|id| st.nodes[id.index()].scope.is_none())
            .collect();
        self.declare_views_of(ctx, &top)
    }

    /// Writes the nodes of one scope, in order.
    pub(crate) fn scope(&mut self, ctx: &StateCtx, nodes: &[NodeId]) -> Result<()> {
        let scoped: Vec<NodeId> = nodes
            .iter()
            .copied()
            .filter(|id| ctx.st.nodes[id.index()].scope.is_some())
            .collect();
        self.declare_views_of(ctx, &scoped)?;
        for &id in nodes {
            let n = &ctx.st.nodes[id.index()];
            if !matches!(n.kind, NodeKind::Access(_)) {
                self.flush_host_syncs();
            }
            match &n.kind {
                NodeKind::Access(a) => {
                    self.data_instrument(a)?;
                    self.copies_from(ctx, id)?
                }
                NodeKind::MapEntry(m) if self.launches_kernel(ctx, id, m) => {
                    self.map_kernel(ctx, id, m)?
                }
                NodeKind::MapEntry(m)
                    if self.in_kernel && m.schedule == Schedule::GpuThreadBlock =>
                {
                    self.thread_block_map(ctx, id, m)?
                }
                NodeKind::MapEntry(m) if m.consume.is_some() => self.consume(ctx, id, m)?,
                NodeKind::MapEntry(m) => self.map(ctx, id, m)?,
                NodeKind::MapExit { .. } => {}
                NodeKind::Tasklet(t)
                    if self.is_library_call(t) || self.is_host_cpp_on_device(ctx, id, t) =>
                {
                    self.library_call(ctx, id, t)?
                }
                _ if self.needs_device(ctx, id) => self.single_thread_kernel(ctx, id)?,
                NodeKind::Tasklet(t) if self.at_block_level() => {
                    self.block_level_node(ctx, id, |w| w.tasklet(ctx, id, t))?
                }
                NodeKind::Nested(ns) if self.at_block_level() => {
                    self.block_level_node(ctx, id, |w| w.nested_call(ctx, id, ns))?
                }
                NodeKind::Tasklet(t) => self.tasklet(ctx, id, t)?,
                NodeKind::Nested(ns) => self.nested_call(ctx, id, ns)?,
                NodeKind::Library(_) => {
                    return Err(Error::invalid(
                        &n.path,
                        format!("library node '{}' was not expanded", n.label),
                    ));
                }
            }
        }
        self.flush_host_syncs();
        Ok(())
    }

    /// `label[i=0:N, j=...]` with exclusive ends, for comments.
    pub(crate) fn map_label(&self, m: &MapEntry) -> String {
        let ranges: Vec<String> = m
            .params
            .iter()
            .zip(&m.range)
            .map(|(p, r)| {
                format!(
                    "{p}={}:{}",
                    self.sym(&r.start),
                    self.sym(&Expr::bin(BinaryOp::Add, r.end.clone(), Expr::Int(1)))
                )
            })
            .collect();
        format!("{}[{}]", m.label, ranges.join(", "))
    }

    fn map(&mut self, ctx: &StateCtx, id: NodeId, m: &MapEntry) -> Result<()> {
        // One iteration (DaCe's `__i_unused=0:1` init maps) is not worth a
        // parallel region: it would fork and join threads for nothing.
        let one = |r: &RangeDim| {
            simplify(&Expr::bin(BinaryOp::Sub, r.end.clone(), r.start.clone())).as_int() == Some(0)
        };
        let single = m.range.iter().all(one);
        // Leading dimensions of one iteration stay outside the parallel
        // region: OpenMP shares out the first loop after the pragma, and a
        // loop of one iteration would put all the work on one thread.
        let lead = m
            .range
            .iter()
            .take_while(|r| one(r))
            .count()
            .min(m.params.len());
        let mut parallel = !self.in_parallel
            && !single
            && matches!(
                m.schedule,
                Schedule::Default
                    | Schedule::CpuMulticore
                    | Schedule::CpuPersistent
                    | Schedule::GpuDevice
                    | Schedule::GpuDefault
            );
        // The nodes of a parallel map's body (the entry too), walked once
        // (only a parallel map needs them), and their work: a map with too
        // little is no parallel region ([`parallel_work`]).
        let body: Vec<bool> = if parallel {
            (0..ctx.st.nodes.len() as u32)
                .map(|n| NodeId(n) == id || ctx.st.is_below(NodeId(n), id))
                .collect()
        } else {
            Vec::new()
        };
        let work = if parallel && self.p.options.min_parallel_work > 0 {
            parallel_work::map_work(ctx.st, id, m, &body)
        } else {
            None
        };
        if work
            .as_ref()
            .and_then(Expr::as_int)
            .is_some_and(|w| w < self.p.options.min_parallel_work)
        {
            parallel = false;
        }
        // The parameters OpenMP shares out among threads: the collapsed
        // ones, else the first; inner ones run in order within a thread.
        let mut distributed = 1;
        let mut pragma = None;
        let mut reductions = Vec::new();
        let mut body_maps = BTreeSet::new();
        let mut versioned: Option<String> = None;
        if parallel {
            let own: BTreeSet<&str> = m.params.iter().map(String::as_str).collect();
            let rectangular = m.range.iter().all(|r| {
                [&r.start, &r.end, &r.step]
                    .iter()
                    .all(|e| free_symbols(e).iter().all(|s| !own.contains(s.as_str())))
            });
            // Like DaCe: collapse only what the map asks for (`collapse` > 1). Collapsing
            // every rectangular nest turns the inner index into a division per
            // iteration and stops the compiler from vectorising the inner loop.
            let depth = usize::try_from(m.collapse)
                .unwrap_or(1)
                .min(m.params.len() - lead);
            let collapse = if rectangular && depth > 1 {
                distributed = depth;
                format!(" collapse({depth})")
            } else {
                String::new()
            };
            // No more threads than per-thread slots have copies.
            let threads = if self.p.alloc.has_per_thread() {
                " num_threads(__state->__sdfgc_threads)"
            } else {
                ""
            };
            body_maps = (0..body.len())
                .filter(|&n| body[n] && matches!(ctx.st.nodes[n].kind, NodeKind::MapEntry(_)))
                .map(|n| NodeId(n as u32))
                .collect();
            reductions = self.plan_reductions(ctx, &body);
            let clauses: String = reductions.iter().map(|r| r.clause()).collect();
            // Work known only at run time: the loops twice, the parallel
            // ones taken from the threshold on (not OpenMP's `if` clause:
            // libgomp allocates a team of one thread per region).
            if let Some(w) = work.as_ref().filter(|w| w.as_int().is_none()) {
                versioned = Some(format!(
                    "{} >= {}",
                    self.sym(w),
                    self.p.options.min_parallel_work
                ));
            }
            pragma = Some(format!(
                "#pragma omp parallel for{collapse}{threads}{clauses}"
            ));
        }
        // The reduction locals, the dynamic inputs, then the map's comment
        // right above its loops.
        self.open_reductions(&reductions);
        self.define_dynamic_inputs(ctx, id, m)?;
        let loops_from = self.out.mark();
        self.out.line(format!("// map {}", self.map_label(m)));
        for (k, (p, r)) in m.params.iter().zip(&m.range).enumerate() {
            if k == lead
                && let Some(pragma) = pragma.take()
            {
                self.out.line(pragma);
            }
            let start = self.sym(&r.start);
            let step = simplify(&r.step);
            let (cmp, end) = match step.as_int() {
                Some(s) if s < 0 => (
                    ">",
                    self.sym(&Expr::bin(BinaryOp::Sub, r.end.clone(), Expr::Int(1))),
                ),
                _ => (
                    "<",
                    self.sym(&Expr::bin(BinaryOp::Add, r.end.clone(), Expr::Int(1))),
                ),
            };
            let inc = match step.as_int() {
                Some(1) => format!("++{p}"),
                Some(-1) => format!("--{p}"),
                _ => format!("{p} += {}", self.sym(&step)),
            };
            self.out.open(format!(
                "for (int64_t {p} = {start}; {p} {cmp} {end}; {inc})"
            ));
        }
        let was = self.in_parallel;
        let was_params = self.parallel_params.clone();
        let was_reductions = std::mem::replace(&mut self.reductions, reductions.clone());
        let was_maps = self.parallel_maps.clone();
        if parallel {
            self.parallel_maps = body_maps;
            self.in_parallel = true;
            self.parallel_params =
                Some(m.params[lead..(lead + distributed).min(m.params.len())].to_vec());
        }
        let frees = self.map_locals(ctx, id)?;
        let body = ctx.children[id.index()].clone();
        self.scope(ctx, &body)?;
        for f in frees {
            self.out.line(f);
        }
        // A loop around block-level work: the next iteration must not start
        // before every thread is done with this one.
        self.block_loop_end(ctx, id);
        self.in_parallel = was;
        self.parallel_params = was_params;
        self.reductions = was_reductions;
        self.parallel_maps = was_maps;
        for _ in &m.params {
            self.out.close();
        }
        if let Some(cond) = versioned {
            self.version_loops(loops_from, &cond);
        }
        self.close_reductions(&reductions);
        Ok(())
    }

    /// Rewrites the map written since `from` (its comment, its loops and
    /// their pragma) as `if (cond) { parallel loops } else { the same loops
    /// without the pragma }`; loops holding a label stay as they are (one
    /// label, one definition).
    fn version_loops(&mut self, from: crate::back::emit::Mark, cond: &str) {
        let loops = self.out.take_since(from);
        if loops.lines().any(|l| l.trim_end().ends_with(":;")) {
            self.out.append_raw(&loops);
            return;
        }
        let mut serial = String::new();
        let mut pragma = true;
        for l in loops.lines() {
            if pragma && l.trim_start().starts_with("#pragma omp parallel for") {
                pragma = false;
                continue;
            }
            serial.push_str(l);
            serial.push('\n');
        }
        self.out.line(format!("if ({cond}) {{"));
        self.out.append_deeper(&loops);
        self.out.line("} else {");
        self.out.append_deeper(&serial);
        self.out.line("}");
    }

    /// Defines the dynamic inputs of map `id` (`const T name = element;`,
    /// as DaCe does) where its loops start: its range and its scope read them
    /// by name. A connector named like its container, a scalar, is already in
    /// scope by that name.
    pub(crate) fn define_dynamic_inputs(
        &mut self,
        ctx: &StateCtx,
        id: NodeId,
        m: &MapEntry,
    ) -> Result<()> {
        let node = &ctx.st.nodes[id.index()];
        let in_range: BTreeSet<String> = m
            .range
            .iter()
            .flat_map(|r| [&r.start, &r.end, &r.step])
            .flat_map(free_symbols)
            .collect();
        for (c, t) in &m.dynamic_inputs {
            let edge = ctx.st.dynamic_input_edge(id, c);
            let Some((e, data)) = edge.and_then(|e| Some((e, e.memlet.data.as_deref()?))) else {
                return Err(Error::invalid(
                    &node.path,
                    format!(
                        "dynamic input '{c}' of map '{}' is not fed by a memlet",
                        m.label
                    ),
                ));
            };
            let d = self.data_desc(data, &e.path)?;
            if data == c && d.kind == DataKind::Scalar && self.element(data, d, &[]) == *c {
                continue;
            }
            // Validation refused pointer-typed dynamic inputs.
            let dtype = match t {
                ConnType::Scalar(t) => *t,
                _ => d.dtype,
            };
            if data == c {
                return Err(Error::unsupported(
                    &e.path,
                    format!(
                        "dynamic input '{c}' of map '{}' has the name of the container it reads, \
                         which is not a plain value here",
                        m.label
                    ),
                ));
            }
            let starts: Vec<Expr> = match &e.memlet.subset {
                Some(sub) if sub.len() == d.rank() => sub.iter().map(|r| r.start.clone()).collect(),
                _ => vec![Expr::Int(0); d.rank()],
            };
            let value = crate::back::body::tasklet::convert(
                &self.element(data, d, &starts),
                d.dtype,
                dtype,
            );
            let unused = if in_range.contains(c) {
                ""
            } else {
                "[[maybe_unused]] "
            };
            self.out
                .line(format!("{unused}const {} {c} = {value};", dtype.ctype()));
        }
        Ok(())
    }

    /// Declares the transients that live inside one map iteration.
    pub(crate) fn map_locals(&mut self, ctx: &StateCtx, id: NodeId) -> Result<Vec<String>> {
        let sdfg = self.sdfg;
        let mut frees = Vec::new();
        let p = self.p;
        // Streams after the arrays (a view's array exists before it).
        let mut streams = Vec::new();
        for name in p
            .alloc
            .in_scope(sdfg.id, AllocScope::Map(ctx.path.to_string(), id))
        {
            let (Some(plan), Some(d)) = (p.alloc.get(sdfg.id, name), sdfg.arrays.get(name)) else {
                continue;
            };
            if d.kind == DataKind::Stream {
                streams.push((name, d));
                continue;
            }
            if d.kind == DataKind::Reference {
                self.out.line(reference_decl(name, d));
                continue;
            }
            if plan.slice.is_some() {
                // The thread's copy, which the kernel computed.
                let ct = d.dtype.ctype();
                let slice = crate::passes::slices::slice_name(sdfg.id, name);
                self.out
                    .line(format!("{ct} * __restrict__ {name} = {slice};"));
                if plan.zero {
                    let z = self.zero_stmt(name, d);
                    self.out.line(z);
                }
                continue;
            }
            if matches!(plan.memory, Memory::Persistent | Memory::External { .. }) {
                // A slot (one copy per thread in a parallel map) instead of a heap array.
                let decl = self.slot_pointer(name, d, plan.per_thread);
                self.out.line(decl);
                if plan.zero {
                    let z = self.zero_stmt(name, d);
                    self.out.line(z);
                }
                continue;
            }
            if plan.memory != Memory::Local {
                continue;
            }
            if d.storage == Storage::GpuShared {
                self.shared_array(name, d, plan.zero)?;
                continue;
            }
            let ct = d.dtype.ctype();
            let init = if plan.zero { " = {}" } else { "" };
            if d.kind == DataKind::Scalar {
                self.out
                    .line(format!("[[maybe_unused]] {ct} {name}{init};"));
            } else if let Some(n) = self.const_size(d).filter(|n| *n > 0 && *n <= 4096) {
                self.out
                    .line(format!("[[maybe_unused]] {ct} {name}[{n}]{init};"));
            } else if self.in_kernel {
                // Sized inside the thread: its own copy from the device heap.
                let size = self.sym(&d.total_size);
                let (alloc, free) = crate::back::gpu::device_heap::alloc_free(name, ct, &size);
                self.out
                    .line(format!("{ct} * __restrict__ {name} = nullptr;"));
                self.out.line(alloc);
                if plan.zero {
                    let z = self.zero_stmt(name, d);
                    self.out.line(z);
                }
                frees.push(free);
                continue;
            } else {
                let size = self.sym(&d.total_size);
                self.out.line(format!(
                    "{ct} * __restrict__ {name} = sdfgc_alloc<{ct}>({size});"
                ));
                if plan.zero {
                    self.out
                        .line(format!("std::memset({name}, 0, sizeof({ct}) * ({size}));"));
                }
                frees.push(format!("sdfgc_free({name});"));
            }
        }
        for (name, d) in streams {
            let decl = self.stream_decl(name, d)?;
            self.out.line(decl);
        }
        Ok(frees)
    }

    /// Copies along edges from access node `id` to other access nodes.
    fn copies_from(&mut self, ctx: &StateCtx, id: NodeId) -> Result<()> {
        let st = ctx.st;
        let this = data_of(st, id).unwrap_or_default().to_string();
        // The edge that defines a view moves no data: the view is a pointer into it.
        let defining = |node: NodeId| -> Option<usize> {
            let d = data_of(st, node)?;
            if self.sdfg.arrays.get(d)?.kind != DataKind::View {
                return None;
            }
            views::view_edge(st, &ctx.adj, node).map(|v| v.edge)
        };
        let own = defining(id);
        // Reads into this node through the map entry of its scope, and
        // writes out of it through the map exit: copies between this
        // container and the one the memlet names.
        // A memlet that names this node's own container (DaCe's
        // `add_edge_pair(..., Memlet(data='a', other_subset=...))`) copies
        // from or to the container at the other end of its path.
        let far_end = |ei: usize, first: bool| -> Option<String> {
            let path = views::memlet_path(st, &ctx.adj, ei);
            let e = &st.edges[if first { path[0] } else { path[path.len() - 1] }];
            data_of(st, if first { e.src } else { e.dst }).map(str::to_string)
        };
        for &ei in &ctx.adj.ins[id.index()] {
            let e = &st.edges[ei];
            let outer = match (&st.nodes[e.src.index()].kind, &e.memlet.data) {
                (NodeKind::MapEntry(_), Some(d)) if *d == this => far_end(ei, true),
                (_, d) => d.clone(),
            };
            if let (NodeKind::MapEntry(_), Some(outer)) = (&st.nodes[e.src.index()].kind, &outer)
                && *outer != this
                && own != Some(ei)
            {
                if reference::is_set(self.sdfg, st, e) {
                    self.set_reference(e, &outer.clone(), &this)?;
                    continue;
                }
                self.copy_op(ctx, id, e, &outer.clone(), &this)?;
            }
        }
        for &ei in &ctx.adj.outs[id.index()] {
            let e = &st.edges[ei];
            let outer = match (&st.nodes[e.dst.index()].kind, &e.memlet.data) {
                (NodeKind::MapExit { .. }, Some(d)) if *d == this => far_end(ei, false),
                (_, d) => d.clone(),
            };
            if let (NodeKind::MapExit { .. }, Some(outer)) = (&st.nodes[e.dst.index()].kind, &outer)
                && *outer != this
                && own != Some(ei)
            {
                self.copy_op(ctx, id, e, &this, &outer.clone())?;
            }
        }
        let src = this;
        for &ei in &ctx.adj.outs[id.index()] {
            let e = &st.edges[ei];
            let Some(dst) = data_of(st, e.dst).map(str::to_string) else {
                continue;
            };
            if e.memlet.is_empty() || (src == dst && self.identity_copy(&e.memlet, &src)) {
                continue;
            }
            if own == Some(ei) || defining(e.dst) == Some(ei) {
                continue;
            }
            if reference::is_set(self.sdfg, st, e) {
                self.set_reference(e, &src, &dst)?;
                continue;
            }
            self.copy_op(ctx, id, e, &src, &dst)?;
        }
        Ok(())
    }

    /// Points reference `r` at the first element of the set edge's subset
    /// of `src` (DaCe's `ref = src + offset;`).
    fn set_reference(&mut self, e: &DataEdge, src: &str, r: &str) -> Result<()> {
        let sd = self.data_desc(src, &e.path)?;
        let sub = if e.memlet.data.as_deref() == Some(src) {
            e.memlet.subset.as_ref()
        } else {
            e.memlet.other_subset.as_ref()
        };
        let start: Vec<Expr> = match sub {
            Some(s) if s.len() == sd.rank() => s.iter().map(|d| d.start.clone()).collect(),
            _ => vec![Expr::Int(0); sd.rank()],
        };
        let base = match self.access.get(src) {
            Some(Access::Value(v)) => format!("&{v}"),
            _ => format!("&{}", self.element(src, sd, &start)),
        };
        self.out.line(format!("{r} = {base};"));
        Ok(())
    }

    /// True if a copy edge between two access nodes of `data` moves every
    /// element onto itself (source and destination subsets are the same), so
    /// it only orders the two nodes. A copy between different parts of one
    /// container (`A[:, 0] = A[:, 1]`) is a real copy.
    fn identity_copy(&self, m: &Memlet, data: &str) -> bool {
        let (ss, ds) = self.copy_subsets(m, data, data);
        ss.len() == ds.len()
            && ss.iter().zip(&ds).all(|(a, b)| {
                simplify(&a.start) == simplify(&b.start)
                    && simplify(&a.end) == simplify(&b.end)
                    && simplify(&a.step) == simplify(&b.step)
            })
    }

    /// Source and destination subsets and element count of a copy edge
    /// (see [`copies`]).
    pub(crate) fn copy_sides(&self, m: &Memlet, src: &str, dst: &str) -> CopySides {
        copies::copy_sides(
            m,
            (src, &self.sdfg.arrays[src]),
            (dst, &self.sdfg.arrays[dst]),
        )
    }

    /// Source and destination subsets of a copy edge.
    pub(crate) fn copy_subsets(&self, m: &Memlet, src: &str, dst: &str) -> (Subset, Subset) {
        let c = self.copy_sides(m, src, dst);
        (c.src, c.dst)
    }

    /// A copy at access node `id`; device copies are stream operations.
    fn copy_op(
        &mut self,
        ctx: &StateCtx,
        id: NodeId,
        e: &DataEdge,
        src: &str,
        dst: &str,
    ) -> Result<()> {
        let stream = |n: &str| {
            self.sdfg
                .arrays
                .get(n)
                .is_some_and(|d| d.kind == DataKind::Stream)
        };
        if stream(src) || stream(dst) {
            return self.stream_copy(ctx, e, src, dst);
        }
        let device =
            self.gpu.is_some() && !self.in_kernel && (self.is_device(src) || self.is_device(dst));
        if !(device && self.is_device(src) && !self.is_device(dst)) {
            self.flush_host_syncs();
        }
        if device {
            self.op_begin(ctx, id, false);
        }
        self.copy(e, src, dst)?;
        if device {
            self.op_end(id);
        }
        Ok(())
    }

    fn copy(&mut self, e: &DataEdge, src: &str, dst: &str) -> Result<()> {
        if self.block_copy(e, src, dst)? {
            return Ok(());
        }
        if self.gpu.is_some() && !self.in_kernel && (self.is_device(src) || self.is_device(dst)) {
            return self.device_copy(e, src, dst);
        }
        let sides = self.copy_sides(&e.memlet, src, dst);
        self.out.line(format!("// copy {src} -> {dst}"));
        if self.contiguous_copy(e, src, dst, &sides, false) {
            return Ok(());
        }
        // Padded rows: one memcpy while the rows are under the padding
        // threshold (their strides unpadded), element loops beyond it.
        let (sd, dd) = (&self.sdfg.arrays[src], &self.sdfg.arrays[dst]);
        if self.memcpy_candidate(e, src, dst, &sides)
            && let Some(conds) = copies::unpadded_one_run(&sides, sd, dd)
        {
            let cond: Vec<String> = conds.iter().map(|c| self.sym(c)).collect();
            self.out.open(format!("if ({})", cond.join(" && ")));
            self.contiguous_copy(e, src, dst, &sides, true);
            self.out.close_with(" else {");
            self.out.indent_in();
            // Serial: a second parallel region in the file for one copy
            // (tests/parallel_structure.rs counts them against DaCe's).
            self.element_copy(e, src, dst, &sides, false)?;
            self.out.close();
            return Ok(());
        }
        self.element_copy(e, src, dst, &sides, true)
    }

    /// A host copy written as loops over the elements (see [`Self::copy_loops`]);
    /// `may_share`: a large one may be shared out among the threads.
    fn element_copy(
        &mut self,
        e: &DataEdge,
        src: &str,
        dst: &str,
        sides: &CopySides,
        may_share: bool,
    ) -> Result<()> {
        let sd = self.sdfg.arrays[src].clone();
        let dd = self.sdfg.arrays[dst].clone();
        // Two sides that may be one container keep the subsets' own order,
        // one element after the other.
        let may_alias = |d: &DataDesc| matches!(d.kind, DataKind::View | DataKind::Reference);
        let distinct = src != dst && !may_alias(&sd) && !may_alias(&dd);
        let (src_idx, dst_idx, loops) = self.copy_loops(sides, &sd, &dd, distinct);
        let ds = &sides.dst;
        let value = self.element(src, &sd, &src_idx);
        let target = self.element(dst, &dd, &dst_idx);
        let stmt = match &e.memlet.wcr {
            None => format!("{target} = {value};"),
            Some(w) => {
                // Threads of a parallel region meet in a shared destination
                // (a tile's partial result added into the whole): atomic, as
                // a tasklet's write-conflict resolution is.
                match self.reduction_var(dst, &dst_idx) {
                    // Each thread's own total (see `reduction`).
                    Some(red) => self.wcr_update(w, &red, &value, dd.dtype, false),
                    None => {
                        let atomic = self.in_parallel
                            && !self.is_private(dst)
                            && self.wcr_conflicts(dst, ds);
                        self.wcr_update(w, &target, &value, dd.dtype, atomic)
                    }
                }
            }
        };
        let write = |w: &mut Self, pragma: bool| {
            if pragma {
                w.out.line("#pragma omp parallel for");
            }
            for l in &loops {
                w.out.open(l);
            }
            w.out.line(&stmt);
            for _ in &loops {
                w.out.close();
            }
        };
        // A strided copy of many elements outside any parallel region is
        // shared out among the threads, as DaCe 2's code does (it turns such
        // copies into parallel maps, CopyToMap); below the threshold the
        // threads would cost more than the copy. A count known only at run
        // time picks one of two loops (not OpenMP's `if` clause: libgomp
        // allocates a team for each serialized region).
        let parallel = may_share
            && distinct
            && !loops.is_empty()
            && self.gpu.is_none()
            && !self.in_parallel
            && !self.in_kernel
            && e.memlet.wcr.is_none();
        match simplify(&sides.count) {
            Expr::Int(k) if parallel && k >= PARALLEL_COPY_ELEMENTS => write(self, true),
            Expr::Int(_) => write(self, false),
            n if parallel => {
                let n = self.sym(&n);
                self.out
                    .open(format!("if ({n} >= {PARALLEL_COPY_ELEMENTS})"));
                write(self, true);
                self.out.close_with(" else {");
                self.out.indent_in();
                write(self, false);
                self.out.close();
            }
            _ => write(self, false),
        }
        Ok(())
    }

    /// A host copy of more than one element, of one element type on both
    /// sides and without write-conflict resolution: one `memcpy` where its
    /// sides are one run.
    fn memcpy_candidate(&self, e: &DataEdge, src: &str, dst: &str, c: &CopySides) -> bool {
        !self.in_kernel
            && e.memlet.wcr.is_none()
            && self.sdfg.arrays[src].dtype == self.sdfg.arrays[dst].dtype
            && c.count != Expr::Int(1)
    }

    /// A plain host copy between two contiguous runs of the same element
    /// type laid out alike ([`copies::one_run`]), written as one
    /// `sdfgc_copy` (memcpy; `sdfgc_move` where both sides may be parts of
    /// one container). False (nothing written) for any other copy, which the
    /// caller writes as loops. `one_run`: the caller has established that
    /// the sides are one run (at run time: see `copies::unpadded_one_run`).
    fn contiguous_copy(
        &mut self,
        e: &DataEdge,
        src: &str,
        dst: &str,
        c: &CopySides,
        one_run: bool,
    ) -> bool {
        let (sd, dd) = (&self.sdfg.arrays[src], &self.sdfg.arrays[dst]);
        if !self.memcpy_candidate(e, src, dst, c) || !(one_run || copies::one_run(c, sd, dd)) {
            return false;
        }
        let may_alias = |d: &DataDesc| matches!(d.kind, DataKind::View | DataKind::Reference);
        let one_container = src == dst || may_alias(sd) || may_alias(dd);
        let f = if one_container {
            "sdfgc_move"
        } else {
            "sdfgc_copy"
        };
        let line = format!(
            "{f}({}, {}, {});",
            self.subset_pointer(dst, dd, &c.dst),
            self.subset_pointer(src, sd, &c.src),
            self.sym(&c.count)
        );
        self.out.line(line);
        true
    }

    /// Loop headers and per-side indices that walk the two subsets of a copy
    /// in step, `c.count` elements: dimension by dimension where their
    /// non-unit extents agree pairwise, else one counter with both sides
    /// flattened in row-major order (each index taken modulo its extent, so
    /// neither side leaves its subset).
    ///
    /// Paired dimensions are walked with the destination's unit-stride
    /// dimension innermost (else the source's), so that the inner loop runs
    /// through contiguous memory whatever the dimensions' order.
    fn copy_loops(
        &mut self,
        c: &CopySides,
        sd: &DataDesc,
        dd: &DataDesc,
        reorder: bool,
    ) -> (Vec<Expr>, Vec<Expr>, Vec<String>) {
        let (ss, ds) = (&c.src, &c.dst);
        let extent = RangeDim::extent;
        let at = |r: &RangeDim, i: Expr| r.index_at(i);
        let mut sidx: Vec<Expr> = ss.iter().map(|r| r.start.clone()).collect();
        let mut didx: Vec<Expr> = ds.iter().map(|r| r.start.clone()).collect();
        let mut loops = Vec::new();
        if let Some(mut pairs) = copies::paired_dims(ss, ds)
            && probably_equal(&copies::element_count(ss), &c.count)
        {
            let unit = |d: &DataDesc, sub: &Subset, k: usize| {
                sub.len() == d.rank()
                    && simplify(&sub[k].step) == Expr::Int(1)
                    && simplify(&d.strides[k]) == Expr::Int(1)
            };
            let inner = pairs
                .iter()
                .position(|&(_, b)| unit(dd, ds, b))
                .or_else(|| pairs.iter().position(|&(a, _)| unit(sd, ss, a)));
            if let Some(i) = inner.filter(|_| reorder) {
                let p = pairs.remove(i);
                pairs.push(p);
            }
            for (k, (a, b)) in pairs.into_iter().enumerate() {
                let v = format!("__c{k}");
                let n = self.sym(&extent(&ss[a]));
                loops.push(format!("for (int64_t {v} = 0; {v} < {n}; ++{v})"));
                sidx[a] = at(&ss[a], Expr::sym(v.clone()));
                didx[b] = at(&ds[b], Expr::sym(v));
            }
        } else {
            let n = self.sym(&c.count);
            loops.push(format!("for (int64_t __c = 0; __c < {n}; ++__c)"));
            let decompose = |s: &Subset, idx: &mut Vec<Expr>| {
                let mut inner = Expr::Int(1);
                for k in copies::nonunit(s).into_iter().rev() {
                    let q = Expr::bin(BinaryOp::FloorDiv, Expr::sym("__c"), inner.clone());
                    let i = Expr::bin(BinaryOp::Mod, q, extent(&s[k]));
                    idx[k] = at(&s[k], i);
                    inner = Expr::bin(BinaryOp::Mul, inner, extent(&s[k]));
                }
            };
            decompose(ss, &mut sidx);
            decompose(ds, &mut didx);
        }
        (sidx, didx, loops)
    }

    /// The container whose memory `data` is: itself, or for a view the
    /// container it views (through views of views); None where a view's
    /// nodes in this state do not all say the same.
    fn root_container(&self, ctx: &StateCtx, data: &str) -> Option<String> {
        let st = ctx.st;
        let mut name = data.to_string();
        for _ in 0..16 {
            match self.sdfg.arrays.get(&name)?.kind {
                // Points wherever its last set did.
                DataKind::Reference => return None,
                DataKind::View => {}
                _ => return Some(name),
            }
            let mut viewed: Option<String> = None;
            for (i, n) in st.nodes.iter().enumerate() {
                if matches!(&n.kind, NodeKind::Access(a) if a.data == name) {
                    let ve = crate::back::body::views::view_edge(st, &ctx.adj, NodeId(i as u32))?;
                    if viewed.as_ref().is_some_and(|v| *v != ve.viewed) {
                        return None;
                    }
                    viewed = Some(ve.viewed);
                }
            }
            name = viewed?;
        }
        None
    }

    /// Whether the data a nested SDFG's connector `c` is bound to is a part
    /// of its container that no other iteration of the enclosing parallel
    /// map touches: the connector's memlet picks such a part, or the memlet
    /// names a view (declared inside the map) whose viewed part is one.
    fn distinct_argument(
        &self,
        ctx: &StateCtx,
        id: NodeId,
        c: &str,
        data: &str,
        rank: usize,
    ) -> bool {
        if self.parallel_params.is_none() || self.reference_in_map(data) {
            return false;
        }
        let st = ctx.st;
        let ins = ctx.adj.ins[id.index()].iter().map(|&i| (i, true));
        let outs = ctx.adj.outs[id.index()].iter().map(|&i| (i, false));
        ins.chain(outs).all(|(ei, incoming)| {
            let e = &st.edges[ei];
            let conn = if incoming { &e.dst_conn } else { &e.src_conn };
            if conn.as_deref() != Some(c) {
                return true;
            }
            if e.memlet
                .subset
                .as_ref()
                .is_some_and(|s| s.len() == rank && self.distinct_per_iteration(s))
            {
                return true;
            }
            let path = crate::back::body::views::memlet_path(st, &ctx.adj, ei);
            let end = if incoming {
                path.first().map(|&k| st.edges[k].src)
            } else {
                path.last().map(|&k| st.edges[k].dst)
            };
            let Some(end) = end else { return false };
            if !matches!(&st.nodes[end.index()].kind, NodeKind::Access(a) if a.data == data)
                || self
                    .sdfg
                    .arrays
                    .get(data)
                    .is_none_or(|d| d.kind != DataKind::View)
            {
                return false;
            }
            let Some(ve) = crate::back::body::views::view_edge(st, &ctx.adj, end) else {
                return false;
            };
            let vrank = self.sdfg.arrays.get(&ve.viewed).map_or(0, |d| d.rank());
            ve.subset
                .as_ref()
                .is_some_and(|s| s.len() == vrank && self.distinct_per_iteration(s))
        })
    }

    fn nested_call(&mut self, ctx: &StateCtx, id: NodeId, ns: &NestedSdfg) -> Result<()> {
        let st = ctx.st;
        let node = &st.nodes[id.index()];
        let inner = &ns.sdfg;
        let mut conns: Vec<&String> = ns.inputs.keys().collect();
        for k in ns.outputs.keys() {
            if !ns.inputs.contains_key(k) {
                conns.push(k);
            }
        }
        // Device functions have no state pointer (nothing they use lives there).
        let (mut params, mut args) = if self.in_kernel {
            (Vec::new(), Vec::new())
        } else {
            (
                vec![format!("[[maybe_unused]] {} *__state", self.state_type)],
                vec!["__state".to_string()],
            )
        };
        let mut private = BTreeSet::new();
        let mut inner_const = BTreeSet::new();
        let mut roots: Vec<(usize, Option<String>, bool)> = Vec::new();
        for c in conns {
            let edge = ctx.adj.ins[id.index()]
                .iter()
                .map(|&i| &st.edges[i])
                .find(|e| e.dst_conn.as_deref() == Some(c.as_str()))
                .or_else(|| {
                    ctx.adj.outs[id.index()]
                        .iter()
                        .map(|&i| &st.edges[i])
                        .find(|e| e.src_conn.as_deref() == Some(c.as_str()))
                });
            let Some(edge) = edge else { continue };
            let Some(data) = edge.memlet.data.clone() else {
                continue;
            };
            let idesc = inner.arrays.get(c).ok_or_else(|| {
                Error::invalid(
                    &node.path,
                    format!(
                        "nested SDFG '{}' has connector '{c}' but no data container of that name",
                        node.label
                    ),
                )
            })?;
            let od = self
                .sdfg
                .arrays
                .get(&data)
                .ok_or_else(|| Error::invalid(&edge.path, format!("unknown data '{data}'")))?;
            if idesc.kind == DataKind::Stream || od.kind == DataKind::Stream {
                if idesc.kind != od.kind {
                    return Err(Error::unsupported(
                        &edge.path,
                        format!(
                            "nested SDFG '{}': connector '{c}' joins a stream and a container that is not one",
                            node.label
                        ),
                    ));
                }
                params.push(format!(
                    "{}& {c}",
                    crate::back::body::datastream::stream_type(idesc)
                ));
                args.push(data.clone());
                continue;
            }
            let start: Vec<Expr> = match &edge.memlet.subset {
                Some(s) if s.len() == od.rank() => s.iter().map(|r| r.start.clone()).collect(),
                _ => vec![Expr::Int(0); od.rank()],
            };
            let ptr = match self.access.get(&data) {
                Some(Access::Value(v)) => format!("&{v}"),
                _ => format!("&{}", self.element(&data, od, &start)),
            };
            let written = ns.outputs.contains_key(c.as_str());
            roots.push((params.len(), self.root_container(ctx, &data), written));
            // A read-only connector fed from a constant array (the file's
            // `static const` one) or from a `const` parameter of this
            // function is a `const` pointer, down every level (as DaCe's).
            let constant = !self.in_kernel
                && !written
                && (self.const_args.contains(&data)
                    || self
                        .sdfg
                        .constants
                        .get(&data)
                        .is_some_and(|k| !k.shape.is_empty()));
            if constant {
                inner_const.insert(c.clone());
                params.push(format!("const {} *{c}", idesc.dtype.ctype()));
            } else {
                params.push(format!("{} *{c}", idesc.dtype.ctype()));
            }
            args.push(ptr);
            // Private to the thread: its own data, or a part of shared data
            // that no other iteration of the enclosing parallel map touches
            // (write conflicts inside need no atomics, as in DaCe). CPU code;
            // GPU kernels keep their own rules.
            let distinct = !self.in_kernel && self.distinct_argument(ctx, id, c, &data, od.rank());
            if self.is_private(&data) || distinct {
                private.insert(c.clone());
            }
        }
        // `__restrict__` on the pointers to containers that no other
        // parameter points into, or that no parameter writes (as DaCe's
        // nested functions have it, but only where it holds): the compiler
        // may then keep an accumulated element in a register instead of
        // storing and reloading it every iteration. Read-only parameters
        // handed the very same pointer stay plain (g++'s -Wrestrict).
        if !self.in_kernel {
            for (k, root, _) in &roots {
                let alone = root.as_ref().is_some_and(|r| {
                    let group: Vec<_> = roots
                        .iter()
                        .filter(|(_, o, _)| o.as_ref().is_none_or(|o| o == r))
                        .collect();
                    group.len() == 1
                        || (group.iter().all(|(_, _, w)| !w)
                            && group
                                .iter()
                                .filter(|(j, _, _)| args[*j] == args[*k])
                                .count()
                                == 1)
                });
                if alone {
                    params[*k] = params[*k].replacen(" *", " * __restrict__ ", 1);
                }
            }
        }
        let mut sym_params = BTreeSet::new();
        for (k, v) in crate::passes::abi::nested_symbol_args(ns) {
            match inner.callbacks.get(k) {
                Some(cb) => params.push(cb.decl(k, DType::ctype)),
                None => {
                    let t = inner.symbol_type(k).unwrap_or(DType::Int64);
                    params.push(format!("{} {k}", t.ctype()));
                }
            }
            args.push(self.cond(v));
            sym_params.insert(k.clone());
        }
        if self.in_kernel {
            // The calling thread's copies of the transients of the SDFGs it calls.
            let mut ids = BTreeSet::new();
            inner.for_each_sdfg(&mut |s| {
                ids.insert(s.id);
            });
            for ((sid, name), t) in &self.p.alloc.transients {
                if let Some(s) = &t.slice
                    && ids.contains(sid)
                {
                    let slice = crate::passes::slices::slice_name(*sid, name);
                    params.push(format!("{} *{slice}", s.dtype.ctype()));
                    args.push(slice);
                }
            }
            // Device functions get the device copies of the constant arrays they read.
            let (p, a) = self.constant_params(&crate::back::body::constants::used_by_sdfg(inner));
            params.extend(p);
            args.extend(a);
        }
        let fname = format!("nested_{}_{}", inner.id, sanitize(&inner.name));
        let in_parallel = self.in_parallel;
        let in_kernel = self.in_kernel;
        let mut w = FnWriter::new(self.p, inner, self.shared, in_parallel);
        w.sym_params = sym_params;
        w.in_kernel = in_kernel;
        w.private_args = private;
        w.const_args = inner_const;
        let (body, _) = w.write_body()?;
        // Symbols DaCe's rules pass in that this body does not name (one
        // sizing only an unused transient, say) are marked used: -Wextra clean.
        let unused: String = unused_value_params(&body, &params);
        let body = unused + &body;
        let qualifier = if in_kernel {
            "static __device__ void"
        } else {
            "static void"
        };
        let text = format!(
            "// nested SDFG {}\n{qualifier} {fname}({}) {{\n{body}}}\n",
            inner.name,
            params.join(", ")
        );
        self.shared.functions.push(text);
        self.out.line(format!("{fname}({});", args.join(", ")));
        Ok(())
    }
}

/// `(void)x;` lines for the by-value parameters (`T x`) of `params` that
/// `body` never names.
fn unused_value_params(body: &str, params: &[String]) -> String {
    params
        .iter()
        .filter(|p| !p.contains('*'))
        .filter_map(|p| p.rsplit(' ').next())
        .filter(|n| !crate::back::cpp::uses_identifier(body, n))
        .map(|n| format!("    (void){n};\n"))
        .collect()
}

/// A C identifier made from a label.
pub(crate) fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Topological order of a state's nodes (stable: ties broken by node order).
pub(crate) fn topological_order(st: &State, path: &str, label: &str) -> Result<Vec<NodeId>> {
    st.topological_order()
        .ok_or_else(|| Error::invalid(path, format!("the dataflow of state '{label}' has a cycle")))
}

/// The declaration of reference `name`: a pointer, null until its first set.
pub(crate) fn reference_decl(name: &str, d: &DataDesc) -> String {
    format!("[[maybe_unused]] {} * {name} = nullptr;", d.dtype.ctype())
}
