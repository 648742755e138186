//! GPU kernels: `GPU_Device` maps become `__global__` functions launched on
//! the state's stream; code at the top of a GPU state that touches device
//! memory runs in a one-thread kernel; copies between host and device memory
//! use the runtime's asynchronous memcpy.

use std::collections::BTreeSet;

use crate::back::body::copies;
use crate::back::body::dataflow::{StateCtx, sanitize};
use crate::back::body::function::{Access, FnWriter};
use crate::back::body::threadblock::{BlockCtx, MAX_THREADS, axis_params};
use crate::back::emit::Emitter;
use crate::diag::{Error, Result};
use crate::ir::simplify::{probably_equal, simplify};
use crate::ir::*;
use crate::passes::slices::{self, KernelSlice};
use crate::passes::{AllocScope, Memory};

/// Default block sizes (gt4py's): 1-D maps 64 threads, 2-D and more 32 x 8.
fn default_block(dims: usize) -> [i64; 3] {
    if dims <= 1 { [64, 1, 1] } else { [32, 8, 1] }
}

/// True if the node is a kernel's map or a nested SDFG with one (at any depth).
fn holds_kernels(n: &Node) -> bool {
    match &n.kind {
        NodeKind::MapEntry(m) => is_gpu_schedule(m.schedule),
        NodeKind::Nested(ns) => {
            let mut found = false;
            ns.sdfg.for_each_sdfg(&mut |s| {
                fn region(r: &Region, found: &mut bool) {
                    for b in &r.blocks {
                        match &b.kind {
                            BlockKind::State(st) => {
                                *found |= st.nodes.iter().any(|n| {
                                    matches!(&n.kind, NodeKind::MapEntry(m) if is_gpu_schedule(m.schedule))
                                })
                            }
                            BlockKind::Region(inner) => region(inner, found),
                            BlockKind::Conditional(brs) => {
                                brs.iter().for_each(|(_, body)| region(body, found))
                            }
                            _ => {}
                        }
                    }
                }
                region(&s.body, &mut found);
            });
            found
        }
        _ => false,
    }
}

/// True if code among `nodes` writes container `d` (an edge into one of its access nodes).
fn writes_container(st: &State, nodes: &[NodeId], d: &str) -> bool {
    st.edges.iter().any(|e| {
        (nodes.contains(&e.src) || nodes.contains(&e.dst))
            && matches!(&st.nodes[e.dst.index()].kind, NodeKind::Access(a) if a.data == d)
    })
}

fn is_gpu_schedule(s: Schedule) -> bool {
    matches!(
        s,
        Schedule::GpuDevice | Schedule::GpuDefault | Schedule::GpuPersistent
    )
}

/// The interface of a kernel: parameter declarations and the host arguments.
struct Interface {
    params: Vec<String>,
    args: Vec<String>,
    /// Statements at the top of the kernel (before any other code).
    prologue: String,
}

impl FnWriter<'_> {
    /// Nodes in the scope of `entry` (its exit included), or just `id` for other nodes.
    pub(crate) fn scope_nodes(&self, ctx: &StateCtx, id: NodeId) -> Vec<NodeId> {
        let st = ctx.st;
        let NodeKind::MapEntry(m) = &st.nodes[id.index()].kind else {
            return vec![id];
        };
        let mut out = vec![id, m.exit];
        for (i, n) in st.nodes.iter().enumerate() {
            let mut s = n.scope;
            let mut guard = 0;
            while let Some(x) = s {
                if x == id {
                    out.push(NodeId(i as u32));
                    break;
                }
                s = st.nodes[x.index()].scope;
                guard += 1;
                if guard > st.nodes.len() {
                    break;
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    pub(crate) fn touches_device(&self, ctx: &StateCtx, nodes: &[NodeId]) -> bool {
        ctx.st.edges.iter().any(|e| {
            (nodes.contains(&e.src) || nodes.contains(&e.dst))
                && e.memlet.data.as_deref().is_some_and(|d| self.is_device(d))
        })
    }

    /// True if the map runs as a kernel: a GPU schedule, or host code that
    /// touches device memory and launches no kernel itself (a host loop
    /// around kernels, as `--offload --host-map` makes, stays on the host).
    pub(crate) fn launches_kernel(&self, ctx: &StateCtx, id: NodeId, m: &MapEntry) -> bool {
        if self.gpu.is_none() || self.in_kernel {
            return false;
        }
        if is_gpu_schedule(m.schedule) {
            return true;
        }
        let nodes = self.scope_nodes(ctx, id);
        self.touches_device(ctx, &nodes)
            && !nodes
                .iter()
                .any(|&n| n != id && holds_kernels(&ctx.st.nodes[n.index()]))
    }

    /// True if a code node on the host touches device memory (it then runs in a one-thread kernel).
    pub(crate) fn needs_device(&self, ctx: &StateCtx, id: NodeId) -> bool {
        // Nested SDFGs stay on the host and launch their own kernels.
        self.gpu.is_some()
            && !self.in_kernel
            && !matches!(
                ctx.st.nodes[id.index()].kind,
                NodeKind::Access(_) | NodeKind::Nested(_)
            )
            && self.touches_device(ctx, &[id])
    }

    /// Parameters of a kernel over `nodes`: the containers and symbols the code uses.
    fn interface(&self, ctx: &StateCtx, nodes: &[NodeId], extra: &[&Expr]) -> Result<Interface> {
        let st = ctx.st;
        let mut data: BTreeSet<String> = BTreeSet::new();
        let mut names: BTreeSet<String> = BTreeSet::new();
        let mut bound: BTreeSet<String> = BTreeSet::new();
        let add = |e: &Expr, names: &mut BTreeSet<String>| {
            e.visit_names(&mut |n| {
                names.insert(n.to_string());
            })
        };
        for e in extra {
            add(e, &mut names);
        }
        for &id in nodes {
            let n = &st.nodes[id.index()];
            match &n.kind {
                NodeKind::Access(a) => {
                    data.insert(a.data.clone());
                }
                NodeKind::MapEntry(m) => {
                    bound.extend(m.scope_names().cloned());
                    for r in &m.range {
                        for x in [&r.start, &r.end, &r.step] {
                            add(x, &mut names);
                        }
                    }
                }
                NodeKind::Tasklet(t) => {
                    for s in all_stmts(&t.stmts) {
                        for e in s.own_exprs() {
                            add(e, &mut names);
                        }
                    }
                }
                NodeKind::Nested(ns) => {
                    for (_, v) in crate::passes::abi::nested_symbol_args(ns) {
                        add(v, &mut names);
                    }
                }
                NodeKind::Library(_) | NodeKind::MapExit { .. } => {}
            }
        }
        for e in st
            .edges
            .iter()
            .filter(|e| nodes.contains(&e.src) || nodes.contains(&e.dst))
        {
            if let Some(d) = &e.memlet.data {
                data.insert(d.clone());
                // A memlet may name the container at its other end (DaCe's
                // `add_edge_pair` into a map): the access nodes count too.
                for n in [e.src, e.dst] {
                    if let NodeKind::Access(a) = &st.nodes[n.index()].kind {
                        data.insert(a.data.clone());
                    }
                }
                if let Some(desc) = self.sdfg.arrays.get(d) {
                    // Element indices use the containers' shapes, strides and offsets.
                    for x in desc.shape.iter().chain(&desc.strides).chain(&desc.offset) {
                        add(x, &mut names);
                    }
                }
            }
            for sub in [&e.memlet.subset, &e.memlet.other_subset]
                .into_iter()
                .flatten()
            {
                for r in sub {
                    for x in [&r.start, &r.end, &r.step] {
                        add(x, &mut names);
                    }
                }
            }
        }
        let (mut params, mut args) = self.constant_params(
            &crate::back::body::constants::used_by_nodes(self.sdfg, st, nodes),
        );
        let mut prologue = String::new();
        for d in &data {
            let Some(desc) = self.sdfg.arrays.get(d) else {
                continue;
            };
            // Views inside the kernel's map are declared in its body.
            if desc.kind == DataKind::View
                && nodes.iter().any(|&id| {
                    let n = &st.nodes[id.index()];
                    matches!(&n.kind, NodeKind::Access(a) if a.data == *d)
                        && n.scope.is_some_and(|s| nodes.contains(&s))
                })
            {
                continue;
            }
            // Containers that live inside the kernel are declared there
            // (per-thread copies point into the buffer the kernel receives).
            if let Some(plan) = self.p.alloc.get(self.sdfg.id, d)
                && (plan.slice.is_some()
                    || (plan.memory == Memory::Local
                        && matches!(&plan.scope, AllocScope::Map(_, e) if nodes.contains(e))))
            {
                continue;
            }
            let ct = desc.dtype.ctype();
            match self.access.get(d) {
                Some(Access::Value(v)) => {
                    params.push(format!("{ct} {v}"));
                    args.push(v.clone());
                }
                _ if desc.kind == DataKind::Scalar
                    && !self.is_device(d)
                    && !writes_container(st, nodes, d) =>
                {
                    // A host scalar the kernel only reads goes by value (as
                    // DaCe passes it); the code reads it through a pointer to
                    // the kernel's copy.
                    params.push(format!("const {ct} __sdfgc_value_{d}"));
                    args.push(format!("*{d}"));
                    prologue.push_str(&format!(
                        "    const {ct} * __restrict__ {d} = &__sdfgc_value_{d};\n"
                    ));
                }
                _ => {
                    if !self.is_device(d) {
                        return Err(Error::unsupported(
                            &desc.path,
                            format!(
                                "GPU code reads or writes '{d}', which lives in host memory; give it GPU_Global storage or copy it to the device first"
                            ),
                        ));
                    }
                    // In-place sharing: the compiler must see that the two may alias.
                    if self.p.aliased.contains(&(self.sdfg.id, d.clone())) {
                        params.push(format!("{ct} * {d}"));
                    } else {
                        params.push(format!("{ct} * __restrict__ {d}"));
                    }
                    args.push(d.clone());
                }
            }
        }
        let abi_types: std::collections::HashMap<&str, DType> = if self.sdfg.id == 0 {
            self.p
                .abi
                .program
                .iter()
                .map(|p| (p.name.as_str(), p.dtype))
                .collect()
        } else {
            Default::default()
        };
        for n in names.difference(&bound) {
            // A container's name is no kernel argument, unless an interstate
            // edge assigns it as a symbol the code reads (a name DaCe's
            // inlining leaves as both: see `fuzz_inlined_symbol_shadow`).
            if data.contains(n)
                || self.sdfg.constants.contains_key(n)
                || (self.sdfg.arrays.contains_key(n) && !self.local_symbols.contains_key(n))
            {
                continue;
            }
            let t = if let Some(t) = self.local_symbols.get(n) {
                *t
            } else if self.sym_params.contains(n) {
                abi_types
                    .get(n.as_str())
                    .copied()
                    .or_else(|| self.sdfg.symbol_type(n))
                    .unwrap_or(DType::Int64)
            } else {
                continue;
            };
            params.push(format!("{} {n}", t.ctype()));
            args.push(n.clone());
        }
        Ok(Interface {
            params,
            args,
            prologue,
        })
    }

    /// Writes device code for `nodes` into a fresh emitter (indented one level).
    fn device_body(&mut self, f: impl FnOnce(&mut Self) -> Result<()>) -> Result<String> {
        let saved = std::mem::replace(&mut self.out, Emitter::new(1));
        let (was_kernel, was_parallel, was_params) = (
            self.in_kernel,
            self.in_parallel,
            self.parallel_params.clone(),
        );
        self.in_kernel = true;
        self.in_parallel = true;
        let r = f(self);
        let body = std::mem::replace(&mut self.out, saved).finish();
        self.in_kernel = was_kernel;
        self.in_parallel = was_parallel;
        self.parallel_params = was_params;
        r.map(|_| body)
    }

    fn kernel_name(&self, label: &str) -> String {
        format!(
            "{}_{}_{}",
            sanitize(label),
            self.sdfg.id,
            self.shared.functions.len()
        )
    }

    /// A `GPU_Device` map as a kernel and its launch.
    pub(crate) fn map_kernel(&mut self, ctx: &StateCtx, id: NodeId, m: &MapEntry) -> Result<()> {
        let g = self.gpu.expect("GPU target");
        let node = &ctx.st.nodes[id.index()];
        let n = m.params.len();
        if n == 0 {
            return Err(Error::unsupported(
                &node.path,
                format!("GPU map '{}' without parameters", m.label),
            ));
        }
        if let Some(c) = m.dynamic_inputs.keys().next() {
            return Err(Error::unsupported(
                &node.path,
                format!(
                    "GPU map '{}' has dynamic input '{c}': a kernel's grid cannot depend on \
                     values in memory (dynamic inputs of maps inside the kernel are implemented)",
                    m.label
                ),
            ));
        }
        let tbs = self.thread_block_maps(ctx, id)?;
        let tb_block = if tbs.is_empty() {
            None
        } else {
            Some(self.thread_block_size(ctx, m, &node.path, &tbs)?)
        };
        let mut block = default_block(n);
        if let Some(b) = &m.gpu_block_size
            && tbs.is_empty()
        {
            let threads: i64 = b.iter().product();
            if threads > MAX_THREADS || b.get(2).is_some_and(|&z| z > 64) {
                return Err(Error::unsupported(
                    &node.path,
                    format!(
                        "GPU map '{}' has gpu_block_size {b:?}: CUDA and HIP blocks hold at \
                         most {MAX_THREADS} threads, at most 64 in z \
                         (as DaCe, which raises a ValueError)",
                        m.label
                    ),
                ));
            }
        }
        if let Some(b) = &m.gpu_block_size {
            for (k, v) in b.iter().take(3).enumerate() {
                block[k] = *v;
            }
            for v in block.iter_mut().skip(b.len()) {
                *v = 1;
            }
        }
        if let Some(b) = tb_block {
            block = b;
        }
        let extents: Vec<Expr> = m.range.iter().map(RangeDim::extent).collect();
        let range_exprs: Vec<&Expr> = m
            .range
            .iter()
            .flat_map(|r| [&r.start, &r.end, &r.step])
            .collect();
        let nodes = self.scope_nodes(ctx, id);
        // Per-thread copies of transients too large for a thread's stack.
        let slices: Vec<(u32, String, KernelSlice)> = self
            .p
            .alloc
            .slices_of(self.sdfg.id, ctx.path, id)
            .iter()
            .filter_map(|(sid, n)| {
                let t = self.p.alloc.get(*sid, n)?;
                Some((*sid, n.clone(), t.slice.clone()?))
            })
            .collect();
        if !slices.is_empty() && tb_block.is_some() {
            return Err(Error::unsupported(
                &node.path,
                format!(
                    "GPU map '{}' has GPU_ThreadBlock maps and transients with per-thread copies",
                    m.label
                ),
            ));
        }
        let mut extra = range_exprs.clone();
        extra.extend(slices.iter().map(|(_, _, s)| &s.elements));
        let mut iface = self.interface(ctx, &nodes, &extra)?;
        for (sid, n, s) in &slices {
            let base = slices::base_name(*sid, n);
            iface
                .params
                .push(format!("{} * __restrict__ {base}", s.dtype.ctype()));
            iface.args.push(base);
        }
        let name = self.kernel_name(&m.label);
        // Thread index -> map parameters: in thread order (the parameter that
        // indexes the stride-1 dimension of the accesses last; see
        // gpu::coalesce), the last is x, the one before y, the rest z.
        let mut head = Emitter::new(1);
        let axis = ["x", "y", "z"];
        let order = if tb_block.is_some() {
            (0..n).collect()
        } else {
            crate::back::gpu::coalesce::thread_order(self.sdfg, ctx.st, id, &m.params)
        };
        let dims: Vec<(usize, Vec<usize>)> = axis_params(n)
            .into_iter()
            .map(|(a, ps)| (a, ps.into_iter().map(|k| order[k]).collect()))
            .collect();
        let mut grid = ["1".to_string(), "1".to_string(), "1".to_string()];
        let mut guards = Vec::new();
        // The flat index of the thread's map iteration: `0..iterations`.
        let (mut flat, mut below) = (Vec::new(), String::from("1"));
        for (a, params) in &dims {
            let ax = axis[*a];
            let total = params
                .iter()
                .map(|&k| extents[k].clone())
                .reduce(|x, y| Expr::bin(BinaryOp::Mul, x, y))
                .unwrap_or(Expr::Int(1));
            let total = self.sym(&total);
            guards.push(format!("({total}) > 0"));
            flat.push(format!("__t{ax} * ({below})"));
            below = format!("{below} * ({total})");
            if tb_block.is_some() {
                // One block per point of the range (DaCe's grid with thread-block maps).
                head.line(format!("const int64_t __t{ax} = blockIdx.{ax};"));
                grid[*a] = format!("static_cast<unsigned int>({total})");
            } else {
                head.line(format!(
                    "const int64_t __t{ax} = int64_t(blockIdx.{ax}) * {} + threadIdx.{ax};",
                    block[*a]
                ));
                head.line(format!("if (__t{ax} >= {total}) return;"));
                grid[*a] = format!(
                    "static_cast<unsigned int>(sdfgc_int_ceil(int64_t({total}), int64_t({})))",
                    block[*a]
                );
            }
            // Decompose the flattened index over its parameters (innermost last).
            let mut rem = format!("__t{ax}");
            for (j, &k) in params.iter().rev().enumerate() {
                let r = &m.range[k];
                let ext = self.sym(&extents[k]);
                let idx = if j + 1 == params.len() {
                    rem.clone()
                } else {
                    format!("({rem} % ({ext}))")
                };
                let start = self.sym(&r.start);
                let step = simplify(&r.step);
                let value = match step.as_int() {
                    Some(1) => format!("{start} + {idx}"),
                    _ => format!("{start} + {idx} * ({})", self.sym(&step)),
                };
                head.line(format!(
                    "[[maybe_unused]] const int64_t {} = {value};",
                    m.params[k]
                ));
                rem = format!("({rem} / ({ext}))");
            }
        }
        for (sid, n, s) in &slices {
            head.line(format!(
                "[[maybe_unused]] {} * {} = {} + static_cast<size_t>({}) * static_cast<size_t>({});",
                s.dtype.ctype(),
                slices::slice_name(*sid, n),
                slices::base_name(*sid, n),
                flat.join(" + "),
                self.sym(&s.elements)
            ));
        }
        let body = self.device_body(|w| {
            w.parallel_params = Some(m.params.clone());
            w.tb = tb_block.map(BlockCtx::new);
            let r = (|| {
                // Arrays sized inside the thread come from the device heap
                // (the only allocations device code makes), freed at the end.
                let frees = w.map_locals(ctx, id)?;
                let children = ctx.children[id.index()].clone();
                w.scope(ctx, &children)?;
                for f in frees {
                    w.out.line(f);
                }
                Ok(())
            })();
            w.tb = None;
            r
        })?;
        let threads = block[0] * block[1] * block[2];
        let head = head.finish();
        let code = format!("{}{head}{body}", iface.prologue);
        let text = format!(
            "// GPU map {}\n__global__ void __launch_bounds__({threads}) {name}({}) {{\n{code}}}\n",
            m.label,
            unused_marked(&iface.params, &code).join(", "),
        );
        self.shared.functions.push(text);
        // The launch.
        self.out.line(format!("// GPU map {}", self.map_label(m)));
        self.op_begin(ctx, id, true);
        self.out.open(format!("if ({})", guards.join(" && ")));
        let mut frees = Vec::new();
        for (sid, n, s) in &slices {
            let (decl, free) = self.slice_buffer(*sid, n, s);
            self.out.line(decl);
            frees.extend(free);
        }
        self.out.line(format!(
            "const dim3 __grid({}, {}, {});",
            grid[0], grid[1], grid[2]
        ));
        self.out.line(format!(
            "const dim3 __block({}, {}, {});",
            block[0], block[1], block[2]
        ));
        self.out.line(format!(
            "{name}<<<__grid, __block, 0, {}>>>({});",
            self.stream(),
            iface.args.join(", ")
        ));
        self.out.line(format!(
            "sdfgc_gpu_check({}(), \"launch {name}\");",
            g.api("GetLastError")
        ));
        for f in frees {
            self.out.line(f);
        }
        self.out.close();
        self.op_end(id);
        Ok(())
    }

    /// The host declaration of the buffer of a transient's per-thread copies
    /// (its persistent or workspace member, or an allocation for this
    /// launch) and the statement that frees it after the launch.
    fn slice_buffer(&self, sid: u32, name: &str, s: &KernelSlice) -> (String, Option<String>) {
        let ct = s.dtype.ctype();
        let base = slices::base_name(sid, name);
        let memory = self.p.alloc.get(sid, name).map(|t| t.memory.clone());
        if matches!(memory, Some(Memory::Persistent | Memory::External { .. })) {
            let member = crate::back::body::function::member_name(sid, name);
            return (format!("{ct} * {base} = __state->{member};"), None);
        }
        let bytes = format!(
            "sizeof({ct}) * static_cast<size_t>({}) * static_cast<size_t>({})",
            self.sym(&s.copies),
            self.sym(&s.elements)
        );
        let (alloc, free) =
            self.device_alloc_free(&base, name, &bytes, memory == Some(Memory::Pool));
        (format!("{ct} * {base} = nullptr;\n{alloc}"), Some(free))
    }

    /// A code node on the host that touches device memory: runs in one GPU thread.
    pub(crate) fn single_thread_kernel(&mut self, ctx: &StateCtx, id: NodeId) -> Result<()> {
        let g = self.gpu.expect("GPU target");
        let node = &ctx.st.nodes[id.index()];
        // A one-thread kernel cannot write host memory: its host values are
        // passed by value, and a write to one would be lost.
        for e in ctx.st.edges.iter().filter(|e| e.src == id) {
            if let Some(data) = e.memlet.data.as_deref().filter(|d| !self.is_device(d)) {
                return Err(Error::unsupported(
                    &node.path,
                    format!(
                        "'{}' reads device memory, so it runs in a one-thread GPU kernel, but it writes host data '{data}'",
                        node.label
                    ),
                ));
            }
        }
        let iface = self.interface(ctx, &[id], &[])?;
        let name = self.kernel_name(&node.label);
        let body = self.device_body(|w| w.scope(ctx, &[id]))?;
        let code = format!("{}{body}", iface.prologue);
        let text = format!(
            "// {} on the device (one thread)\n__global__ void __launch_bounds__(1) {name}({}) {{\n{code}}}\n",
            node.label,
            unused_marked(&iface.params, &code).join(", "),
        );
        self.shared.functions.push(text);
        self.out
            .line(format!("// {} on the device (one thread)", node.label));
        self.op_begin(ctx, id, true);
        self.out.line(format!(
            "{name}<<<1, 1, 0, {}>>>({});",
            self.stream(),
            iface.args.join(", ")
        ));
        self.out.line(format!(
            "sdfgc_gpu_check({}(), \"launch {name}\");",
            g.api("GetLastError")
        ));
        self.op_end(id);
        Ok(())
    }

    /// A copy between containers of which at least one is in device memory.
    pub(crate) fn device_copy(&mut self, e: &DataEdge, src: &str, dst: &str) -> Result<()> {
        let g = self.gpu.expect("GPU target");
        let sides = self.copy_sides(&e.memlet, src, dst);
        let sd = self.data_desc(src, &e.path)?;
        let dd = self.data_desc(dst, &e.path)?;
        if e.memlet.wcr.is_some() {
            return Err(Error::unsupported(
                &e.path,
                format!(
                    "copy {src} -> {dst} with write-conflict resolution between host and device"
                ),
            ));
        }
        let (hs, hd) = (self.is_device(src), self.is_device(dst));
        let kind = match (hs, hd) {
            (false, true) => "MemcpyHostToDevice",
            (true, false) => "MemcpyDeviceToHost",
            _ => "MemcpyDeviceToDevice",
        };
        let (ss, ds, count) = (&sides.src, &sides.dst, &sides.count);
        if copies::one_run(&sides, sd, dd) && sd.dtype == dd.dtype {
            let src_ptr = self.subset_pointer(src, sd, ss);
            let dst_ptr = self.subset_pointer(dst, dd, ds);
            let bytes = format!(
                "sizeof({}) * static_cast<size_t>({})",
                sd.dtype.ctype(),
                self.sym(count)
            );
            self.out.line(format!("// copy {src} -> {dst}"));
            self.out.line(format!(
                "sdfgc_gpu_check({}({dst_ptr}, {src_ptr}, {bytes}, {}, {}), \"copy {src} -> {dst}\");",
                g.api("MemcpyAsync"),
                g.api(kind),
                self.stream()
            ));
            if kind == "MemcpyDeviceToHost" {
                // Host code after this may read the result (see hostsync).
                let stream = self.stream();
                self.after_copy_to_host(stream);
            }
            return Ok(());
        }
        // The same ranges from index 0 between containers of the same strides
        // (a device twin of a strided argument): the span of elements from
        // index 0 to the last one, at once (both layouts hold the same bytes there).
        if !(hs && hd)
            && sd.dtype == dd.dtype
            && same_layout(sd, dd)
            && from_zero(ss)
            && from_zero(ds)
            && same_subset(ss, ds)
            && probably_equal(&copies::element_count(ss), count)
        {
            let span = ss
                .iter()
                .zip(&sd.strides)
                .fold(Expr::Int(1), |acc, (r, st)| {
                    Expr::bin(
                        BinaryOp::Add,
                        acc,
                        Expr::bin(BinaryOp::Mul, r.end.clone(), st.clone()),
                    )
                });
            let src_ptr = self.subset_pointer(src, sd, ss);
            let dst_ptr = self.subset_pointer(dst, dd, ds);
            let bytes = format!(
                "sizeof({}) * static_cast<size_t>({})",
                sd.dtype.ctype(),
                self.sym(&simplify(&span))
            );
            self.out.line(format!(
                "// copy {src} -> {dst} (every element, strided alike)"
            ));
            self.out.line(format!(
                "sdfgc_gpu_check({}({dst_ptr}, {src_ptr}, {bytes}, {}, {}), \"copy {src} -> {dst}\");",
                g.api("MemcpyAsync"),
                g.api(kind),
                self.stream()
            ));
            if kind == "MemcpyDeviceToHost" {
                self.out.line(format!(
                    "sdfgc_gpu_check({}({}), \"synchronize after copy\");",
                    g.api("StreamSynchronize"),
                    self.stream()
                ));
            }
            return Ok(());
        }
        if !(hs && hd) {
            return Err(Error::unsupported(
                &e.path,
                format!("copy {src} -> {dst} between host and device of a non-contiguous subset"),
            ));
        }
        // Device to device, strided: a grid-stride kernel over the flattened elements.
        let total = self.sym(count);
        let name = self.kernel_name(&format!("copy_{src}_{dst}"));
        let exprs: Vec<&Expr> = ss
            .iter()
            .chain(ds.iter())
            .flat_map(|r| [&r.start, &r.end, &r.step])
            .collect();
        let mut syms: BTreeSet<String> = BTreeSet::new();
        for x in exprs
            .iter()
            .copied()
            .chain(sd.strides.iter())
            .chain(&dd.strides)
            .chain(&sd.offset)
            .chain(&dd.offset)
        {
            x.visit_names(&mut |n| {
                syms.insert(n.to_string());
            });
        }
        // A copy within one container (`A[:, 0] = A[:, 1]`) passes it once.
        let (mut params, mut args) = if src == dst {
            (
                vec![format!("{} * {dst}", dd.dtype.ctype())],
                vec![dst.to_string()],
            )
        } else {
            (
                vec![
                    format!("{} * __restrict__ {dst}", dd.dtype.ctype()),
                    format!("const {} * __restrict__ {src}", sd.dtype.ctype()),
                ],
                vec![dst.to_string(), src.to_string()],
            )
        };
        for n in syms {
            if let Some(t) = self.local_symbols.get(&n).copied().or_else(|| {
                self.sym_params
                    .contains(&n)
                    .then(|| self.sdfg.symbol_type(&n).unwrap_or(DType::Int32))
            }) {
                params.push(format!("{} {n}", t.ctype()));
                args.push(n);
            }
        }
        let (sidx, didx) = self.flat_copy_indices(ss, ds);
        let body = format!(
            "    for (int64_t __c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; __c < {total}; __c += int64_t(blockDim.x) * gridDim.x) {{\n        {} = {};\n    }}\n",
            self.element(dst, dd, &didx),
            self.element(src, sd, &sidx)
        );
        self.shared.functions.push(format!(
            "// copy {src} -> {dst} on the device\n__global__ void {name}({}) {{\n{body}}}\n",
            params.join(", ")
        ));
        self.out
            .line(format!("// copy {src} -> {dst} (strided, on the device)"));
        self.out.open(format!("if (({total}) > 0)"));
        self.out.line(format!(
            "{name}<<<static_cast<unsigned int>(sdfgc_min(sdfgc_int_ceil(int64_t({total}), int64_t(256)), int64_t(65535))), 256, 0, {}>>>({});",
            self.stream(),
            args.join(", ")
        ));
        self.out.line(format!(
            "sdfgc_gpu_check({}(), \"launch {name}\");",
            g.api("GetLastError")
        ));
        self.out.close();
        Ok(())
    }

    /// Per-side indices of element `__c` of a copy, both sides flattened in row-major order.
    pub(crate) fn flat_copy_indices(&self, ss: &Subset, ds: &Subset) -> (Vec<Expr>, Vec<Expr>) {
        let side = |s: &Subset| {
            let mut idx: Vec<Expr> = s.iter().map(|r| r.start.clone()).collect();
            let mut inner = Expr::Int(1);
            for k in (0..s.len()).rev() {
                let ext = s[k].extent();
                if ext == Expr::Int(1) {
                    continue;
                }
                let q = Expr::bin(BinaryOp::FloorDiv, Expr::sym("__c"), inner.clone());
                let i = Expr::bin(BinaryOp::Mod, q, ext.clone());
                idx[k] = s[k].index_at(i);
                inner = Expr::bin(BinaryOp::Mul, inner, ext);
            }
            idx
        };
        (side(ss), side(ds))
    }
}

/// Same rank and strides.
fn same_layout(a: &DataDesc, b: &DataDesc) -> bool {
    a.rank() == b.rank()
        && a.strides
            .iter()
            .zip(&b.strides)
            .all(|(x, y)| crate::ir::simplify::probably_equal(x, y))
}

/// Every range starts at index 0 with step 1.
fn from_zero(sub: &Subset) -> bool {
    sub.iter()
        .all(|r| simplify(&r.start) == Expr::Int(0) && simplify(&r.step) == Expr::Int(1))
}

/// The same ranges.
fn same_subset(a: &Subset, b: &Subset) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| crate::ir::simplify::probably_equal(&x.end, &y.end))
}

/// A kernel's parameters, those its code never names `[[maybe_unused]]`
/// (a container's shape symbol that no index needs, a container only a
/// dimension of a memlet names): clean under `-Wextra`'s unused-parameter.
fn unused_marked(params: &[String], code: &str) -> Vec<String> {
    params
        .iter()
        .map(|p| {
            let name = p.rsplit(' ').next().unwrap_or_default();
            if name.is_empty() || crate::back::cpp::uses_identifier(code, name) {
                p.clone()
            } else {
                format!("[[maybe_unused]] {p}")
            }
        })
        .collect()
}
