//! Thread-block level code inside a GPU kernel, as DaCe's CUDA generator
//! writes it: a `GPU_Device` map whose scope holds `GPU_ThreadBlock` maps
//! runs one block per point of its range, the block size being the largest
//! thread-block map range per dimension. Each thread-block map becomes
//! per-thread index math with a bounds guard (a thread-strided loop where
//! its range exceeds the block); code between thread-block scopes runs in
//! every thread of the block, copies into block-shared or global memory are
//! split over the threads, other writes to such memory happen in the
//! block's first thread only; `GPU_Shared` transients are `__shared__`
//! arrays, and `__syncthreads()` separates block-level phases that touch
//! shared or global memory.

use std::collections::BTreeSet;

use crate::back::body::dataflow::StateCtx;
use crate::back::body::function::FnWriter;
use crate::diag::{Error, Result};
use crate::ir::simplify::{eval_int, simplify};
use crate::ir::*;

/// Most threads a block may have (CUDA and HIP).
pub(crate) const MAX_THREADS: i64 = 1024;

/// What the writer knows inside a kernel that has thread-block maps.
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockCtx {
    /// Threads per block (x, y, z).
    pub block: [i64; 3],
    /// Shared or global containers that block-level work read since the last barrier.
    pub read: BTreeSet<String>,
    /// Shared or global containers that block-level work wrote since the last barrier.
    pub written: BTreeSet<String>,
    /// Writing the body of a thread-block map (per-thread code).
    pub in_tb: bool,
}

impl BlockCtx {
    /// A kernel's block context before its first statement.
    pub fn new(block: [i64; 3]) -> BlockCtx {
        BlockCtx {
            block,
            ..Default::default()
        }
    }

    /// Threads per block.
    pub fn threads(&self) -> i64 {
        self.block.iter().product()
    }

    /// True if work that reads `reads` and writes `writes` may race with the
    /// work since the last barrier (read after write, write after read or
    /// write after write, by other threads).
    fn conflicts(&self, a: &Accesses) -> bool {
        a.reads.iter().any(|d| self.written.contains(d))
            || a.writes
                .iter()
                .any(|d| self.read.contains(d) || self.written.contains(d))
    }
}

/// Shared or global containers a piece of block-level work reads and writes.
#[derive(Debug, Default)]
pub(crate) struct Accesses {
    reads: BTreeSet<String>,
    writes: BTreeSet<String>,
}

impl Accesses {
    fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty()
    }
}

/// Which parameters of a map go to which thread axis: the last parameter is
/// x, the one before y, all others are flattened into z (as DaCe does).
pub(crate) fn axis_params(n: usize) -> Vec<(usize, Vec<usize>)> {
    let mut dims = vec![(0, vec![n - 1])];
    if n >= 2 {
        dims.push((1, vec![n - 2]));
    }
    if n >= 3 {
        dims.push((2, (0..n - 2).collect()));
    }
    dims
}

const AXIS: [&str; 3] = ["x", "y", "z"];

/// The number of points of a thread-block map dimension and whether it is
/// exact: a compile-time constant, else the bound of a range that ends at
/// `min(a, b, ..)` (DaCe's over-approximation: the smallest constant extent
/// that ending at one of the arguments gives; the extent grows with the end).
fn dim_bound(r: &RangeDim) -> Option<(i64, bool)> {
    let constant = |r: &RangeDim| eval_int(&simplify(&r.extent()), &mut |_| None);
    if let Some(n) = constant(r) {
        return Some((n, true));
    }
    let Expr::Call(Func::Min, args) = simplify(&r.end) else {
        return None;
    };
    args.iter()
        .filter_map(|a| {
            constant(&RangeDim {
                end: a.clone(),
                ..r.clone()
            })
        })
        .min()
        .map(|n| (n, false))
}

/// The flat index of the calling thread in its block.
const FLAT_TID: &str =
    "((int64_t(threadIdx.z) * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x)";

/// True for the block's first thread.
const FIRST_THREAD: &str = "threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0";

impl FnWriter<'_> {
    /// The `GPU_ThreadBlock` maps in the scope of kernel map `id` (this state).
    pub(crate) fn thread_block_maps(&self, ctx: &StateCtx, id: NodeId) -> Result<Vec<NodeId>> {
        let mut out = Vec::new();
        for inner in self.scope_nodes(ctx, id) {
            let node = &ctx.st.nodes[inner.index()];
            let NodeKind::MapEntry(im) = &node.kind else {
                continue;
            };
            match im.schedule {
                Schedule::GpuThreadBlock if inner != id => {
                    if let Some(c) = im.dynamic_inputs.keys().next() {
                        return Err(Error::unsupported(
                            &node.path,
                            format!(
                                "GPU_ThreadBlock map '{}' has dynamic input '{c}': the block \
                                 size cannot depend on values in memory",
                                im.label
                            ),
                        ));
                    }
                    out.push(inner)
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// The block size of a kernel with thread-block maps: per dimension the
    /// largest thread-block map range (DaCe's rule), at most 1024 threads in
    /// all (larger ranges are walked with thread-strided loops).
    pub(crate) fn thread_block_size(
        &self,
        ctx: &StateCtx,
        kernel: &MapEntry,
        kernel_path: &str,
        tbs: &[NodeId],
    ) -> Result<[i64; 3]> {
        let mut block = [1i64; 3];
        for &t in tbs {
            let node = &ctx.st.nodes[t.index()];
            let NodeKind::MapEntry(m) = &node.kind else {
                continue;
            };
            let (size, _) = self.tb_extents(m, &node.path)?;
            for (k, s) in size.iter().enumerate() {
                block[k] = block[k].max(*s);
            }
        }
        if let Some(b) = &kernel.gpu_block_size {
            let mut given = [1i64; 3];
            for (k, v) in b.iter().enumerate() {
                given[k.min(2)] *= *v;
            }
            if given != block {
                return Err(Error::unsupported(
                    kernel_path,
                    format!(
                        "GPU map '{}' has gpu_block_size {given:?} but its GPU_ThreadBlock maps need block size {block:?}",
                        kernel.label
                    ),
                ));
            }
        }
        // Keep within the hardware limit: shrink z, then y, then x.
        for k in (0..3).rev() {
            let others: i64 = (0..3).filter(|&j| j != k).map(|j| block[j]).product();
            if block[k] * others > MAX_THREADS {
                block[k] = (MAX_THREADS / others).max(1);
            }
        }
        Ok(block)
    }

    /// Per-axis number of points of a thread-block map: a compile-time
    /// constant, or (`exact` false) a run-time number at most that constant.
    fn tb_extents(&self, m: &MapEntry, path: &str) -> Result<([i64; 3], [bool; 3])> {
        let mut size = [1i64; 3];
        let mut exact = [true; 3];
        for (a, params) in axis_params(m.params.len()) {
            for k in params {
                let (ext, known) = dim_bound(&m.range[k]).ok_or_else(|| {
                    Error::unsupported(
                        path,
                        format!(
                            "GPU_ThreadBlock map '{}' has a range whose size is not a compile-time constant ({})",
                            m.label,
                            self.sym(&m.range[k].extent())
                        ),
                    )
                })?;
                size[a] *= ext.max(0);
                exact[a] &= known;
            }
        }
        Ok((size, exact))
    }

    /// The shared or global containers the nodes read and write (edges of
    /// the nodes; thread-local containers left out).
    pub(crate) fn accesses(&self, ctx: &StateCtx, nodes: &[NodeId]) -> Accesses {
        let st = ctx.st;
        let mut a = Accesses::default();
        let data = |id: NodeId| match &st.nodes[id.index()].kind {
            NodeKind::Access(x) => Some(x.data.clone()),
            _ => None,
        };
        let writer = |id: NodeId| {
            matches!(
                st.nodes[id.index()].kind,
                NodeKind::Tasklet(_)
                    | NodeKind::Nested(_)
                    | NodeKind::Library(_)
                    | NodeKind::MapExit { .. }
            )
        };
        for e in st
            .edges
            .iter()
            .filter(|e| nodes.contains(&e.src) || nodes.contains(&e.dst))
        {
            let (mut r, mut w) = (None, None);
            match (data(e.src), data(e.dst)) {
                (Some(s), Some(d)) => (r, w) = (Some(s), Some(d)),
                _ if writer(e.src) => w = e.memlet.data.clone(),
                _ => r = e.memlet.data.clone(),
            }
            if e.memlet.wcr.is_some() && w.is_some() {
                // An update reads the old value too.
                r = r.or_else(|| w.clone());
            }
            for (set, d) in [(&mut a.reads, r), (&mut a.writes, w)] {
                if let Some(d) = d.filter(|d| !self.thread_local(d)) {
                    set.insert(d);
                }
            }
        }
        a
    }

    /// Starts a phase of block-level work: `__syncthreads()` first if it may
    /// race with the work since the last barrier.
    pub(crate) fn block_phase(&mut self, a: &Accesses) {
        let Some(b) = &mut self.tb else {
            return;
        };
        if b.conflicts(a) {
            b.read.clear();
            b.written.clear();
            self.out.line("__syncthreads();");
        }
        if let Some(b) = &mut self.tb {
            b.read.extend(a.reads.iter().cloned());
            b.written.extend(a.writes.iter().cloned());
        }
    }

    /// The end of a loop body that holds block-level work: `__syncthreads()`
    /// if what the last iteration left pending may race with the next one.
    pub(crate) fn block_loop_end(&mut self, ctx: &StateCtx, id: NodeId) {
        if !self.at_block_level() {
            return;
        }
        let body = self.accesses(ctx, &self.scope_nodes(ctx, id));
        if let Some(b) = &mut self.tb
            && b.conflicts(&body)
        {
            b.read.clear();
            b.written.clear();
            self.out.line("__syncthreads();");
        }
    }

    /// True while writing block-level code (a kernel with thread-block maps, outside them).
    pub(crate) fn at_block_level(&self) -> bool {
        self.tb.as_ref().is_some_and(|b| !b.in_tb)
    }

    /// True if the container has one copy per thread (a local variable of the kernel).
    pub(crate) fn thread_local(&self, data: &str) -> bool {
        let shared = self
            .sdfg
            .arrays
            .get(data)
            .is_some_and(|d| d.storage == Storage::GpuShared);
        !shared && self.is_private(data)
    }

    /// A `GPU_ThreadBlock` map: per-thread parameters, guard or strided loop, body.
    pub(crate) fn thread_block_map(
        &mut self,
        ctx: &StateCtx,
        id: NodeId,
        m: &MapEntry,
    ) -> Result<()> {
        let node = &ctx.st.nodes[id.index()];
        let Some(bctx) = self.tb.clone().filter(|b| !b.in_tb) else {
            let why = if self.tb.is_some() {
                "inside another GPU_ThreadBlock map"
            } else {
                "outside a GPU_Device kernel of this SDFG (nested SDFGs in kernels cannot hold thread-block maps)"
            };
            return Err(Error::unsupported(
                &node.path,
                format!("GPU_ThreadBlock map '{}' {why}", m.label),
            ));
        };
        let (size, exact) = self.tb_extents(m, &node.path)?;
        let phase = self.accesses(ctx, &self.scope_nodes(ctx, id));
        self.block_phase(&phase);
        self.out
            .line(format!("// thread-block map {}", self.map_label(m)));
        self.out.open("");
        let mut opened = 1;
        for (a, params) in axis_params(m.params.len()) {
            let ax = AXIS[a];
            let var = format!("__tb{ax}");
            let (ext, threads) = (size[a], bctx.block[a]);
            // The number of points: at most `ext`, known at run time only.
            let points = if exact[a] {
                ext.to_string()
            } else {
                params
                    .iter()
                    .map(|&k| format!("({})", self.sym(&m.range[k].extent())))
                    .collect::<Vec<_>>()
                    .join(" * ")
            };
            if ext > threads {
                self.out.open(format!(
                    "for (int64_t {var} = threadIdx.{ax}; {var} < {points}; {var} += {threads})"
                ));
                opened += 1;
            } else {
                self.out
                    .line(format!("const int64_t {var} = threadIdx.{ax};"));
                if ext < threads || !exact[a] {
                    self.out.open(format!("if ({var} < {points})"));
                    opened += 1;
                }
            }
            // Decompose the flattened index over its parameters (innermost last).
            let mut rem = var.clone();
            for (j, &k) in params.iter().rev().enumerate() {
                let r = &m.range[k];
                let e = self.sym(&r.extent());
                let idx = if j + 1 == params.len() {
                    rem.clone()
                } else {
                    format!("({rem} % ({e}))")
                };
                let start = self.sym(&r.start);
                let step = simplify(&r.step);
                let value = match step.as_int() {
                    Some(1) => format!("{start} + {idx}"),
                    _ => format!("{start} + {idx} * ({})", self.sym(&step)),
                };
                self.out.line(format!(
                    "[[maybe_unused]] const int64_t {} = {value};",
                    m.params[k]
                ));
                rem = format!("({rem} / ({e}))");
            }
        }
        // Block axes the map does not use: its iterations run once, in the
        // threads at 0 there (not once per thread of those axes).
        let used = axis_params(m.params.len()).len();
        let unused: Vec<String> = (used..3)
            .filter(|&a| bctx.block[a] > 1)
            .map(|a| format!("threadIdx.{} == 0", AXIS[a]))
            .collect();
        if !unused.is_empty() {
            self.out.open(format!("if ({})", unused.join(" && ")));
            opened += 1;
        }
        let was_params = self.parallel_params.clone();
        let mut params = was_params.clone().unwrap_or_default();
        params.extend(m.params.iter().cloned());
        self.parallel_params = Some(params);
        if let Some(b) = &mut self.tb {
            b.in_tb = true;
        }
        let r = (|| {
            let frees = self.map_locals(ctx, id)?;
            if !frees.is_empty() {
                return Err(Error::unsupported(
                    &node.path,
                    format!("heap allocation inside GPU_ThreadBlock map '{}'", m.label),
                ));
            }
            let children = ctx.children[id.index()].clone();
            self.scope(ctx, &children)
        })();
        if let Some(b) = &mut self.tb {
            b.in_tb = false;
        }
        self.parallel_params = was_params;
        r?;
        for _ in 0..opened {
            self.out.close();
        }
        Ok(())
    }

    /// A node between thread-block scopes (every thread of the block reaches
    /// it): if it writes shared or global memory it runs in the first thread
    /// only, after a barrier when earlier block-level work may conflict.
    pub(crate) fn block_level_node(
        &mut self,
        ctx: &StateCtx,
        id: NodeId,
        write: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let phase = self.accesses(ctx, &[id]);
        self.block_phase(&phase);
        if phase.writes.is_empty() {
            write(self)?;
        } else {
            self.out.open(format!("if ({FIRST_THREAD})"));
            write(self)?;
            self.out.close();
        }
        Ok(())
    }

    /// A copy at block level into shared or global memory, split over the
    /// block's threads (thread-local destinations are copied by every thread).
    pub(crate) fn block_copy(&mut self, e: &DataEdge, src: &str, dst: &str) -> Result<bool> {
        if !self.at_block_level() {
            return Ok(false);
        }
        let mut phase = Accesses::default();
        for (set, d) in [(&mut phase.reads, src), (&mut phase.writes, dst)] {
            if !self.thread_local(d) {
                set.insert(d.to_string());
            }
        }
        if phase.writes.is_empty() {
            // Every thread copies into its own container.
            if !phase.is_empty() {
                self.block_phase(&phase);
            }
            return Ok(false);
        }
        if e.memlet.wcr.is_some() {
            return Err(Error::unsupported(
                &e.path,
                format!(
                    "copy {src} -> {dst} with write-conflict resolution between GPU_ThreadBlock scopes"
                ),
            ));
        }
        let sides = self.copy_sides(&e.memlet, src, dst);
        let (ss, ds) = (&sides.src, &sides.dst);
        let total = self.sym(&sides.count);
        let sd = self.data_desc(src, &e.path)?;
        let dd = self.data_desc(dst, &e.path)?;
        let (sidx, didx) = self.flat_copy_indices(ss, ds);
        self.block_phase(&phase);
        self.out
            .line(format!("// copy {src} -> {dst} (split over the block)"));
        self.out.open(format!(
            "for (int64_t __c = {FLAT_TID}; __c < {total}; __c += {})",
            self.tb.as_ref().map(BlockCtx::threads).unwrap_or(1)
        ));
        let target = self.element(dst, dd, &didx);
        let value = self.element(src, sd, &sidx);
        self.out.line(format!("{target} = {value};"));
        self.out.close();
        Ok(true)
    }

    /// Declares a `GPU_Shared` transient: a `__shared__` array of a size known
    /// at generation time (zeroed by the block's threads when the SDFG asks).
    pub(crate) fn shared_array(&mut self, name: &str, d: &DataDesc, zero: bool) -> Result<()> {
        if self.tb.is_none() {
            return Err(Error::unsupported(
                &d.path,
                format!(
                    "GPU_Shared transient '{name}' outside a GPU kernel with GPU_ThreadBlock maps"
                ),
            ));
        }
        let Some(n) = self.const_size(d).filter(|n| *n > 0) else {
            return Err(Error::unsupported(
                &d.path,
                format!(
                    "GPU_Shared transient '{name}' has a size that is not a compile-time constant ({}); dynamic shared memory is not supported",
                    self.sym(&d.total_size)
                ),
            ));
        };
        let ct = d.dtype.ctype();
        self.out.line(format!("__shared__ {ct} {name}[{n}];"));
        if zero && !self.at_block_level() {
            return Err(Error::unsupported(
                &d.path,
                format!(
                    "GPU_Shared transient '{name}' is zeroed inside a GPU_ThreadBlock map (it must be zeroed by the whole block)"
                ),
            ));
        }
        if zero {
            let threads = self.tb.as_ref().map(BlockCtx::threads).unwrap_or(1);
            self.block_phase(&Accesses {
                reads: BTreeSet::new(),
                writes: BTreeSet::from([name.to_string()]),
            });
            self.out.open(format!(
                "for (int64_t __c = {FLAT_TID}; __c < {n}; __c += {threads})"
            ));
            self.out.line(format!("{name}[__c] = {ct}(0);"));
            self.out.close();
        }
        Ok(())
    }
}
