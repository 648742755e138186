//! Lifetime and allocation planning: for every transient of every SDFG in
//! the tree, which memory it uses ([`Memory`]) and where its lifetime
//! begins and ends ([`AllocScope`]). The memory mode (`--mode`) decides the
//! memory; the dataflow decides the scope.

use std::collections::{BTreeMap, BTreeSet};

use indexmap::IndexMap;

use crate::diag::{Error, ErrorKind, Result};
use crate::ir::simplify::{eval_int, free_symbols, simplify, substitute};
use crate::ir::*;
use crate::options::{CompileOptions, Mode, Target};
use crate::passes::abi::Abi;
use crate::passes::bounds::{bound_over_loops, loop_ranges};
use crate::passes::slices::{self, KernelCtx, KernelSlice};
use crate::passes::span;

/// Where the bytes of a transient come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Memory {
    /// A local variable or stack array (scalars, registers, small arrays inside maps).
    Local,
    /// Allocated at the start of its scope and freed at its end.
    Heap,
    /// A state-struct member allocated in init and freed in exit.
    Persistent,
    /// Stream-ordered device allocation (`cudaMallocAsync`) at the start of
    /// its scope, freed (`cudaFreeAsync`) at its end.
    Pool,
    /// A state-struct member pointing into the application's workspace.
    External {
        /// Storage of the workspace.
        storage: Storage,
        /// Position in [`AllocPlan::external`].
        slot: usize,
    },
    /// A pointer into another container.
    View,
}

/// Where the lifetime of a transient begins (allocation, zero-initialisation).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AllocScope {
    /// The whole SDFG function.
    Function,
    /// One state (JSON pointer of the state).
    State(String),
    /// The body of one map (state JSON pointer, map entry).
    Map(String, NodeId),
    /// From the start of one block to the end of another block of the same
    /// region (JSON pointers), every time they run: a transient sized by a
    /// symbol the program assigns (see [`crate::passes::span`]). With `true`,
    /// freed on entering the second block instead, after the interstate
    /// edges into it have read it.
    Blocks(String, String, bool),
}

/// Plan for one transient.
#[derive(Clone, Debug)]
pub struct Transient {
    /// Memory kind.
    pub memory: Memory,
    /// Lifetime scope.
    pub scope: AllocScope,
    /// Zero it at the start of its scope (setzero, or accumulated into by WCR).
    pub zero: bool,
    /// Number of elements in the top-level symbols (Persistent and External memory).
    pub top_elements: Option<Expr>,
    /// Used inside a parallel CPU region (a parallel map, or a nested SDFG
    /// called in one): Persistent and External memory hold one copy of
    /// `top_elements` per thread ([`THREADS`] copies), and each thread uses
    /// copy `omp_get_thread_num()`.
    pub per_thread: bool,
    /// Allocated inside a GPU kernel with a size that is not a small
    /// compile-time constant: one copy per thread in a device buffer that
    /// the launching function provides (`memory` says how; see
    /// [`crate::passes::slices`]).
    pub slice: Option<KernelSlice>,
}

impl Transient {
    /// A transient that takes no bytes of its own and is never zeroed (a
    /// stream object, a reference's pointer), in `scope`.
    fn bytesless(memory: Memory, scope: AllocScope) -> Transient {
        Transient {
            memory,
            scope,
            zero: false,
            top_elements: None,
            per_thread: false,
            slice: None,
        }
    }
}

/// The symbol that stands for the number of threads a parallel region of the
/// program may use (`omp_get_max_threads()` at `__dace_init_*`, kept in the
/// state) in the sizes of per-thread slots.
pub const THREADS: &str = "__sdfgc_threads";

/// One workspace slot.
#[derive(Clone, Debug)]
pub struct ExternalSlot {
    /// Id of the SDFG that owns the transient.
    pub sdfg: u32,
    /// Transient name.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Number of elements (of one copy), in the top-level symbols.
    pub elements: Expr,
    /// One copy per thread ([`THREADS`] copies of `elements`).
    pub per_thread: bool,
}

impl ExternalSlot {
    /// Elements of all copies: `elements`, times [`THREADS`] for a per-thread slot.
    pub fn total_elements(&self) -> Expr {
        if self.per_thread {
            simplify(&Expr::bin(
                BinaryOp::Mul,
                Expr::Sym(THREADS.into()),
                self.elements.clone(),
            ))
        } else {
            self.elements.clone()
        }
    }
}

/// The allocation plan of a whole SDFG tree.
#[derive(Clone, Debug, Default)]
pub struct AllocPlan {
    /// Per (SDFG id, transient name).
    pub transients: BTreeMap<(u32, String), Transient>,
    /// Workspace slots per storage, in SDFG order.
    pub external: IndexMap<Storage, Vec<ExternalSlot>>,
    /// Containers (SDFG id, name) in device memory.
    pub device: BTreeSet<(u32, String)>,
    /// Transients per (SDFG id, allocation scope), so that writers do not
    /// scan every transient at every state and map.
    pub by_scope: std::collections::HashMap<(u32, AllocScope), Vec<String>>,
    /// Transients of [`AllocScope::Blocks`] by (SDFG id, first block's JSON pointer).
    pub block_starts: std::collections::HashMap<(u32, String), Vec<String>>,
    /// Transients of [`AllocScope::Blocks`] by (SDFG id, last block's JSON pointer).
    pub block_ends: std::collections::HashMap<(u32, String), Vec<String>>,
    /// Transients of [`AllocScope::Blocks`] freed on entering their last block.
    pub block_entries: std::collections::HashMap<(u32, String), Vec<String>>,
    /// Transients whose size depends on a symbol the program assigns while it
    /// runs (an interstate edge, a loop variable): no memory mode can place
    /// them at init or in the workspace, so they are allocated during the
    /// call, where that symbol has its value, in every mode.
    pub sized_in_call: BTreeSet<(u32, String)>,
    /// Transients (SDFG id, name) with per-thread copies, by the kernel
    /// whose launch provides them: (launching SDFG id, state JSON pointer, map entry).
    pub kernel_slices: BTreeMap<(u32, String, NodeId), Vec<(u32, String)>>,
}

impl AllocPlan {
    /// True if the container lives in device memory.
    pub fn is_device(&self, sdfg: u32, name: &str) -> bool {
        self.device.contains(&(sdfg, name.to_string()))
    }

    /// True if some transient has one copy per thread.
    pub fn has_per_thread(&self) -> bool {
        self.transients.values().any(|t| t.per_thread)
    }

    /// The transients of `sdfg` allocated at `scope`, by name.
    pub fn in_scope(&self, sdfg: u32, scope: AllocScope) -> &[String] {
        self.by_scope
            .get(&(sdfg, scope))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The transients of `sdfg` allocated at the start of the block at `path`.
    pub fn starting_at(&self, sdfg: u32, path: &str) -> &[String] {
        self.block_starts
            .get(&(sdfg, path.to_string()))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The transients of `sdfg` freed on entering the block at `path`.
    pub fn ending_before(&self, sdfg: u32, path: &str) -> &[String] {
        self.block_entries
            .get(&(sdfg, path.to_string()))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The transients of `sdfg` freed at the end of the block at `path`.
    pub fn ending_at(&self, sdfg: u32, path: &str) -> &[String] {
        self.block_ends
            .get(&(sdfg, path.to_string()))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The transients with per-thread copies in the kernel of map `entry`
    /// in state `path` of SDFG `sdfg`.
    pub fn slices_of(&self, sdfg: u32, path: &str, entry: NodeId) -> &[(u32, String)] {
        self.kernel_slices
            .get(&(sdfg, path.to_string(), entry))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The plan of a transient.
    pub fn get(&self, sdfg: u32, name: &str) -> Option<&Transient> {
        self.transients.get(&(sdfg, name.to_string()))
    }
}

/// Computes the plan.
pub fn plan(sdfg: &Sdfg, abi: &Abi, opts: &CompileOptions) -> Result<AllocPlan> {
    let top_symbols: BTreeSet<String> = abi.init.iter().map(|p| p.name.clone()).collect();
    let mut p = AllocPlan::default();
    let top = IndexMap::new();
    let cx = Ctx {
        mode: opts.mode,
        gpu: opts.target != Target::Cpp,
        offload: opts.offload,
        top_symbols: &top_symbols,
        to_top: Some(&top),
        in_kernel: false,
        device_args: BTreeSet::new(),
        per_thread: false,
        kernel: None,
    };
    plan_sdfg(sdfg, &cx, &mut p)?;
    for ((id, name), t) in &p.transients {
        if let Some(s) = &t.slice {
            p.kernel_slices
                .entry((s.host_sdfg, s.state.clone(), s.kernel))
                .or_default()
                .push((*id, name.clone()));
        }
        p.by_scope
            .entry((*id, t.scope.clone()))
            .or_default()
            .push(name.clone());
        if let AllocScope::Blocks(first, last, on_entry) = &t.scope {
            p.block_starts
                .entry((*id, first.clone()))
                .or_default()
                .push(name.clone());
            let ends = if *on_entry {
                &mut p.block_entries
            } else {
                &mut p.block_ends
            };
            ends.entry((*id, last.clone()))
                .or_default()
                .push(name.clone());
        }
    }
    Ok(p)
}

/// Where a container is used, folded over all its use sites: DaCe's
/// allocation scope (`determine_allocation_lifetime`, Scope lifetime) — the
/// innermost scope that covers every use.
#[derive(Clone, Debug)]
enum Site {
    /// Uses in one state only: their innermost common map scope (None: the
    /// state itself); whether any use is inside a GPU kernel map; whether
    /// all uses are in that very scope (not in different maps below it).
    State {
        path: String,
        scope: Option<NodeId>,
        any_in_gpu: bool,
        one_scope: bool,
    },
    /// Used in several states or by interstate code: the whole function.
    Function,
}

/// The uses of every container of an SDFG, seen two ways.
#[derive(Default)]
struct Uses {
    /// Folded into one site per container (the scope of an ordinary transient).
    sites: BTreeMap<String, Site>,
    /// The blocks (JSON pointers) that use each container, interstate code
    /// counting as a use of the blocks on both sides of its edge (or of its
    /// loop or conditional block): what [`span::block_span`] needs for a
    /// transient sized during the call.
    blocks: BTreeMap<String, BTreeSet<String>>,
    /// The blocks that interstate edges reading each container lead to.
    entered: BTreeMap<String, BTreeSet<String>>,
}

impl Uses {
    /// Records a use of `name` in state `st` (at `path`) at map scope `scope`.
    fn in_state(&mut self, st: &State, path: &str, name: &str, scope: Option<NodeId>) {
        add_use(&mut self.sites, st, path, name, scope);
        self.blocks
            .entry(name.to_string())
            .or_default()
            .insert(path.to_string());
    }

    /// Records the names read or written by interstate code run between or
    /// around the blocks `around`: in DaCe, such a container lives in the
    /// whole function.
    fn interstate(&mut self, e: &Expr, around: &[&str]) {
        e.visit_names(&mut |n| self.interstate_name(n, around));
    }

    /// Records the names read by the code of an interstate edge from block
    /// `src` to block `dst`: a use in `src`, and on entering `dst`.
    fn on_edge(&mut self, e: &Expr, src: &str, dst: &str) {
        e.visit_names(&mut |n| {
            self.interstate_name(n, &[src]);
            self.entered
                .entry(n.to_string())
                .or_default()
                .insert(dst.to_string());
        });
    }

    fn interstate_name(&mut self, name: &str, around: &[&str]) {
        self.sites.insert(name.to_string(), Site::Function);
        let blocks = self.blocks.entry(name.to_string()).or_default();
        blocks.extend(around.iter().map(|b| b.to_string()));
    }
}

/// The innermost map scope that contains both `a` and `b` (None: the state).
fn common_scope(st: &State, a: Option<NodeId>, b: Option<NodeId>) -> Option<NodeId> {
    let chain = |mut s: Option<NodeId>| {
        let mut out = Vec::new();
        while let Some(id) = s {
            if out.len() > st.nodes.len() {
                break;
            }
            out.push(id);
            s = st.nodes[id.index()].scope;
        }
        out
    };
    let ca = chain(a);
    let cb: BTreeSet<NodeId> = chain(b).into_iter().collect();
    ca.into_iter().find(|s| cb.contains(s))
}

/// Folds one use of `name` in state `path` at map scope `scope` into its site.
fn add_use(
    sites: &mut BTreeMap<String, Site>,
    st: &State,
    path: &str,
    name: &str,
    scope: Option<NodeId>,
) {
    let in_gpu = in_gpu_scope(st, scope);
    match sites.get_mut(name) {
        None => {
            sites.insert(
                name.to_string(),
                Site::State {
                    path: path.to_string(),
                    scope,
                    any_in_gpu: in_gpu,
                    one_scope: true,
                },
            );
        }
        Some(Site::Function) => {}
        Some(site @ Site::State { .. }) => {
            let Site::State {
                path: p,
                scope: s,
                any_in_gpu,
                one_scope,
            } = site
            else {
                unreachable!()
            };
            if p != path {
                *site = Site::Function;
            } else {
                *one_scope &= *s == scope;
                *s = common_scope(st, *s, scope);
                *any_in_gpu |= in_gpu;
            }
        }
    }
}

/// True for nodes that compute (DaCe's `CodeNode`): tasklets, nested SDFGs, library nodes.
fn is_code(n: &Node) -> bool {
    matches!(
        n.kind,
        NodeKind::Tasklet(_) | NodeKind::Nested(_) | NodeKind::Library(_)
    )
}

fn collect_uses(
    r: &Region,
    uses: &mut Uses,
    wcr: &mut BTreeSet<String>,
    setzero: &mut BTreeSet<String>,
) {
    for e in &r.edges {
        let (src, dst) = (
            r.blocks[e.src.index()].path.as_str(),
            r.blocks[e.dst.index()].path.as_str(),
        );
        uses.on_edge(&e.condition, src, dst);
        for (_, v) in &e.assignments {
            uses.on_edge(v, src, dst);
        }
    }
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => {
                for n in &st.nodes {
                    if let NodeKind::Access(a) = &n.kind {
                        uses.in_state(st, &b.path, &a.data, n.scope);
                        if a.setzero {
                            setzero.insert(a.data.clone());
                        }
                    }
                }
                for e in &st.edges {
                    let Some(d) = &e.memlet.data else { continue };
                    if e.memlet.wcr.is_some() {
                        wcr.insert(d.clone());
                    }
                    // Code-to-code edges (tasklet -> tasklet after map fusion)
                    // name a container that has no access node: DaCe declares
                    // it in the scope of the two nodes.
                    let (src, dst) = (&st.nodes[e.src.index()], &st.nodes[e.dst.index()]);
                    if is_code(src) && is_code(dst) {
                        uses.in_state(st, &b.path, d, src.scope);
                        uses.in_state(st, &b.path, d, dst.scope);
                    }
                }
            }
            BlockKind::Region(inner) => {
                if let RegionKind::Loop(l) = &inner.kind {
                    loop_uses(l, &b.path, uses);
                }
                collect_uses(inner, uses, wcr, setzero)
            }
            BlockKind::Conditional(brs) => {
                for (cond, body) in brs {
                    if let Some(c) = cond {
                        uses.interstate(c, &[&b.path]);
                    }
                    collect_uses(body, uses, wcr, setzero);
                }
            }
            _ => {}
        }
    }
}

/// A container a reference is set to is used wherever the reference is
/// (its bytes must outlive every access through the pointer): the uses of
/// each reference fold into those of the containers its sets point into,
/// and for a set to a view into those of the data at the view's edges
/// (twice, for a reference set to another reference).
fn referenced_live_with_references(sdfg: &Sdfg, uses: &mut Uses) {
    let mut pairs = BTreeSet::new();
    visit_states(&sdfg.body, &mut |st| {
        for (ei, e) in st.edges.iter().enumerate() {
            let NodeKind::Access(r) = &st.nodes[e.dst.index()].kind else {
                continue;
            };
            if !crate::passes::reference::is_set(sdfg, st, e) {
                continue;
            }
            // Set by a tasklet's code: it may point into any data the
            // tasklet reads.
            if matches!(st.nodes[e.src.index()].kind, NodeKind::Tasklet(_)) {
                for x in st.edges.iter().filter(|x| x.dst == e.src) {
                    if let Some(v) = x.memlet.data.as_deref().filter(|v| *v != r.data) {
                        pairs.insert((r.data.clone(), v.to_string()));
                    }
                }
                continue;
            }
            if let Some(s) = crate::passes::reference::set_source(st, ei)
                && r.data != s
            {
                pairs.insert((r.data.clone(), s.to_string()));
                // Set to a view: the data the view's edges name lives as
                // long too (every container a memlet at the view node names).
                if sdfg.arrays.get(s).is_some_and(|d| d.kind == DataKind::View) {
                    for (i, n) in st.nodes.iter().enumerate() {
                        if !matches!(&n.kind, NodeKind::Access(a) if a.data == s) {
                            continue;
                        }
                        let id = NodeId(i as u32);
                        for x in st.edges.iter().filter(|x| x.src == id || x.dst == id) {
                            if let Some(v) =
                                x.memlet.data.as_deref().filter(|v| *v != s && *v != r.data)
                            {
                                pairs.insert((r.data.clone(), v.to_string()));
                            }
                        }
                    }
                }
            }
        }
    });
    for _ in 0..2 {
        for (r, s) in &pairs {
            if let Some(blocks) = uses.blocks.get(r).cloned() {
                uses.blocks.entry(s.clone()).or_default().extend(blocks);
            }
            if let Some(blocks) = uses.entered.get(r).cloned() {
                uses.entered.entry(s.clone()).or_default().extend(blocks);
            }
            match uses.sites.get(r).cloned() {
                Some(Site::Function) => {
                    uses.sites.insert(s.clone(), Site::Function);
                }
                Some(Site::State { path, scope, .. }) => {
                    if let Some(st) = find_state(&sdfg.body, &path) {
                        add_use(&mut uses.sites, st, &path, s, scope);
                    }
                }
                None => {}
            }
        }
    }
}

fn visit_states<'a>(r: &'a Region, f: &mut dyn FnMut(&'a State)) {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => f(st),
            BlockKind::Region(inner) => visit_states(inner, f),
            BlockKind::Conditional(brs) => brs.iter().for_each(|(_, r)| visit_states(r, f)),
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }
}

/// Records the names a loop's condition, init and update statements read or
/// assign, as interstate uses of the loop block at `path`.
fn loop_uses(l: &LoopInfo, path: &str, uses: &mut Uses) {
    uses.interstate(&l.condition, &[path]);
    for s in l.init.iter().chain(&l.update) {
        match s {
            Stmt::Assign { target, value, .. } => {
                uses.interstate(value, &[path]);
                match target {
                    crate::ir::expr::Target::Name(n) => uses.interstate_name(n, &[path]),
                    crate::ir::expr::Target::Index(n, ix) => {
                        uses.interstate_name(n, &[path]);
                        ix.iter().for_each(|x| uses.interstate(x, &[path]));
                    }
                    crate::ir::expr::Target::Field(n, _) => uses.interstate_name(n, &[path]),
                }
            }
            Stmt::Expr(x) => uses.interstate(x, &[path]),
            // Blocks exist in tasklet code only; walk them all the same.
            Stmt::If { .. }
            | Stmt::For { .. }
            | Stmt::Printf { .. }
            | Stmt::Chain { .. }
            | Stmt::Callback { .. } => {
                for x in crate::ir::expr::all_stmts(std::slice::from_ref(s))
                    .into_iter()
                    .flat_map(Stmt::own_exprs)
                {
                    uses.interstate(x, &[path]);
                }
            }
        }
    }
}

/// What the planner knows about the SDFG it is planning.
struct Ctx<'a> {
    mode: Option<Mode>,
    /// Compiling for a GPU target.
    gpu: bool,
    /// The program was offloaded (`--offload`): in the default mode its
    /// device transients get the lifetime a GPU needs (see [`gpu_lifetime`]).
    offload: bool,
    top_symbols: &'a BTreeSet<String>,
    /// How the SDFG's symbols map to top-level symbols (None if the SDFG runs
    /// inside a map of a GPU target: its transients stay scoped). On CPU
    /// targets an SDFG called in a parallel map has `per_thread` slots.
    to_top: Option<&'a IndexMap<String, Expr>>,
    /// The SDFG runs inside a GPU kernel (everything is device-local).
    in_kernel: bool,
    /// Non-transients of a nested SDFG that point to device memory.
    device_args: BTreeSet<String>,
    /// The SDFG is called inside a parallel CPU region (CPU targets only):
    /// its Persistent and External transients get one copy per thread.
    per_thread: bool,
    /// The SDFG runs inside a GPU kernel: the kernel and the symbols fixed for its launch.
    kernel: Option<KernelCtx>,
}

/// True if a transient's access nodes touch a GPU_Device map at top level
/// (then a Default-storage transient lives in device memory).
/// True if a GPU map reads or writes `name` directly (only writes with
/// `writes_only`).
fn touches_gpu_map(r: &Region, name: &str, writes_only: bool) -> bool {
    r.blocks.iter().any(|b| match &b.kind {
        BlockKind::State(st) => st.edges.iter().any(|e| {
            let is_gpu_scope = |id: NodeId| match &st.nodes[id.index()].kind {
                NodeKind::MapEntry(m) => matches!(m.schedule, Schedule::GpuDevice | Schedule::GpuDefault),
                NodeKind::MapExit { entry } => matches!(&st.nodes[entry.index()].kind,
                    NodeKind::MapEntry(m) if matches!(m.schedule, Schedule::GpuDevice | Schedule::GpuDefault)),
                _ => false,
            };
            let is_it = |id: NodeId| matches!(&st.nodes[id.index()].kind, NodeKind::Access(a) if a.data == name);
            (!writes_only && is_it(e.src) && is_gpu_scope(e.dst)) || (is_it(e.dst) && is_gpu_scope(e.src))
        }),
        BlockKind::Region(inner) => touches_gpu_map(inner, name, writes_only),
        BlockKind::Conditional(brs) => {
            brs.iter().any(|(_, body)| touches_gpu_map(body, name, writes_only))
        }
        _ => false,
    })
}

fn plan_sdfg(sdfg: &Sdfg, cx: &Ctx, p: &mut AllocPlan) -> Result<()> {
    let mut uses = Uses::default();
    let mut wcr = BTreeSet::new();
    let mut setzero = BTreeSet::new();
    collect_uses(&sdfg.body, &mut uses, &mut wcr, &mut setzero);
    referenced_live_with_references(sdfg, &mut uses);
    let loops = loop_ranges(sdfg);
    // Where the non-transients live.
    for (name, d) in sdfg.arrays.iter().filter(|(_, d)| !d.transient) {
        let device = if sdfg.id == 0 {
            d.storage.is_gpu()
        } else {
            cx.in_kernel || cx.device_args.contains(name)
        };
        if device {
            if !cx.gpu {
                return Err(Error::unsupported(
                    &d.path,
                    format!(
                        "argument '{name}' has GPU storage {}; compile this SDFG with --target cuda or hip",
                        d.storage.dace_name()
                    ),
                ));
            }
            p.device.insert((sdfg.id, name.clone()));
        }
    }
    let mut assigned = BTreeSet::new();
    span::assigned_symbols(&sdfg.body, &mut assigned);
    let mut chains = None;
    for (name, d) in sdfg.arrays.iter().filter(|(_, d)| d.transient) {
        // A transient the program never uses is not allocated (as in DaCe,
        // whose allocation follows access nodes): its size may name symbols
        // that are not passed to this SDFG at all.
        if !uses.sites.contains_key(name) {
            continue;
        }
        // A transient of a constant's name is that constant (DaCe's frontend
        // makes such pairs for index lists, `A[[1, 2, 3]]`): DaCe declares
        // the constant and never allocates the transient.
        if sdfg.constants.contains_key(name) {
            if d.storage.is_gpu() {
                return Err(Error::unsupported(
                    &d.path,
                    format!(
                        "transient '{name}' in GPU memory has the name of a constant: its \
                         bytes would not hold the constant's values (keep it on the host)"
                    ),
                ));
            }
            continue;
        }
        // A stream is an object, not bytes: declared where its scope starts
        // (or a state member: see `back::body::datastream`), never in the
        // workspace and never zeroed.
        if d.kind == DataKind::Stream {
            let scope = scope_of(uses.sites.get(name), |_, _, one_scope, _| one_scope);
            p.transients.insert(
                (sdfg.id, name.clone()),
                Transient::bytesless(Memory::Local, scope),
            );
            continue;
        }
        // A reference is a pointer, declared in the innermost scope that
        // covers its uses (DaCe's `allocate_reference`); it takes no bytes.
        if d.kind == DataKind::Reference {
            let scope = scope_of(uses.sites.get(name), |_, _, _, _| true);
            p.transients.insert(
                (sdfg.id, name.clone()),
                Transient::bytesless(Memory::View, scope),
            );
            continue;
        }
        // On the stack in a map body (as the writer declares them there).
        let elements = eval_int(&d.total_size, &mut |_| None);
        let small = d.kind == DataKind::Scalar || elements.is_some_and(|n| n > 0 && n <= 4096);
        // DaCe's storage inference gives a Default-storage transient of an
        // SDFG called inside a parallel CPU map Register storage (the nearest
        // non-sequential schedule is CPU_Multicore), and its code declares a
        // Register array of constant size up to `max_stack_array_size`
        // (65536 bytes) on the stack: so does sdfgc, instead of a heap
        // allocation per call of the nested SDFG.
        let register = d.storage == Storage::Register
            || (d.storage == Storage::Default
                && cx.per_thread
                && !cx.gpu
                && d.kind == DataKind::Array
                && small
                && elements.is_some_and(|n| n.saturating_mul(d.dtype.size() as i64) <= 65536));
        let stack = small || register;
        let mut scope = scope_of(
            uses.sites.get(name),
            |path, entry, one_scope, any_in_gpu| {
                let Some(st) = find_state(&sdfg.body, path) else {
                    return false;
                };
                let in_gpu = in_gpu_scope(st, Some(entry));
                // A heap array used in different maps below a sequential one stays
                // at state level (one allocation, no thread shares it).
                // A device array used in a host map (`--host-map`) outside its
                // kernels is allocated at state level, not as a host local.
                let host_device = d.storage.is_gpu() && !in_gpu;
                // A GPU_Global array in a kernel with thread-block maps may
                // carry values between the block's threads (written in a
                // thread-block map, read by the block's code after it:
                // kernel_fusion_cudatest's fused kernels): global memory, as
                // DaCe allocates it, never one copy per thread.
                let block_shared = d.storage == Storage::GpuGlobal
                    && in_gpu
                    && kernel_has_thread_blocks(st, entry);
                (!any_in_gpu || in_gpu)
                    && !host_device
                    && !block_shared
                    && (one_scope || stack || in_gpu || in_parallel_map(st, entry))
            },
        );
        let size_syms: BTreeSet<String> = free_symbols(&d.total_size)
            .into_iter()
            .filter(|s| assigned.contains(s))
            .collect();
        let zero = wcr.contains(name) || setzero.contains(name);
        if d.storage == Storage::GpuShared
            && (cx.in_kernel || !matches!(scope, AllocScope::Map(..)))
        {
            let where_ = if cx.in_kernel {
                "in a nested SDFG inside a GPU kernel"
            } else {
                "outside a single GPU kernel map"
            };
            return Err(Error::unsupported(
                &d.path,
                format!(
                    "GPU_Shared transient '{name}' is used {where_}; block-shared memory lives in one kernel"
                ),
            ));
        }
        let device = cx.in_kernel
            || d.storage.is_gpu()
            || (cx.gpu
                && d.storage == Storage::Default
                && d.kind != DataKind::View
                && !matches!(scope, AllocScope::Map(..))
                // A scalar that kernels only read stays a host value, passed
                // to them by value (DaCe's rule); one a kernel writes lives on
                // the device.
                && touches_gpu_map(&sdfg.body, name, d.kind == DataKind::Scalar));
        if device && !cx.gpu {
            return Err(Error::new(
                ErrorKind::Unsupported,
                &d.path,
                format!(
                    "transient '{name}' has GPU storage {}; compile this SDFG with --target cuda or hip",
                    d.storage.dace_name()
                ),
            ));
        }
        if device {
            p.device.insert((sdfg.id, name.clone()));
        }
        // Inside a kernel, too large for a thread's stack: per-thread copies.
        if cx.gpu && d.kind == DataKind::Array && slices::needs_slice(d) {
            let around = match &scope {
                AllocScope::Map(path, entry) => {
                    find_state(&sdfg.body, path).map(|st| (path.as_str(), st, *entry))
                }
                _ => None,
            };
            let kctx = match (&cx.kernel, around) {
                (Some(k), _) => Some(k.clone()),
                (None, Some((path, st, entry)))
                    if !cx.in_kernel && in_gpu_scope(st, Some(entry)) =>
                {
                    slices::kernel_ctx(sdfg, st, path, Some(entry)).map(|mut k| {
                        k.to_top = cx.to_top.cloned();
                        k.loops = loops.get(path).cloned().unwrap_or_default();
                        k
                    })
                }
                _ => None,
            };
            if let Some(k) = kctx {
                let inner = around
                    .map(|(_, st, entry)| slices::params_around(st, Some(entry)))
                    .unwrap_or_default();
                // A size known only inside the thread: each thread allocates
                // its copy from the device heap in its scope (below: Local).
                if let Some(slice) = k.slice(sdfg, &assigned, &inner, name, d)? {
                    let total = simplify(&Expr::bin(
                        BinaryOp::Mul,
                        slice.copies.clone(),
                        slice.elements.clone(),
                    ));
                    let top = k.to_top.as_ref().and_then(|m| {
                        in_top_symbols(&total, m, cx.top_symbols).or_else(|| {
                            let bound = bound_over_loops(&total, &k.loops)?;
                            in_top_symbols(&bound, m, cx.top_symbols)
                        })
                    });
                    let gpu_life = gpu_lifetime(cx, d, true);
                    let memory = slice_memory(cx.mode, gpu_life, d, top.clone(), sdfg.id, name, p);
                    p.device.insert((sdfg.id, name.clone()));
                    p.transients.insert(
                        (sdfg.id, name.clone()),
                        Transient {
                            top_elements: matches!(memory, Memory::Persistent)
                                .then_some(top)
                                .flatten(),
                            memory,
                            scope,
                            zero,
                            per_thread: false,
                            slice: Some(slice),
                        },
                    );
                    continue;
                }
            }
        }
        let mut top_size = None;
        // CPU targets: a heap array that lives in one map iteration, or a
        // Register array too large for the stack, may take a workspace or
        // persistent slot (one copy per thread in a parallel region).
        let threaded = !cx.gpu && !cx.in_kernel && !device;
        let heap_local = threaded
            && !small
            && d.kind != DataKind::View
            && (matches!(scope, AllocScope::Map(..)) || register);
        let per_thread = threaded
            && (cx.per_thread
                || match &scope {
                    AllocScope::Map(path, entry) => {
                        find_state(&sdfg.body, path).is_some_and(|st| in_parallel_map(st, *entry))
                    }
                    _ => false,
                });
        let memory = if d.kind == DataKind::View {
            Memory::View
        } else if cx.in_kernel
            || (d.kind == DataKind::Scalar && !device)
            || ((matches!(scope, AllocScope::Map(..)) || register) && !heap_local)
        {
            Memory::Local
        } else {
            // In the top-level symbols; else, for a transient of one state
            // inside counted loops, its largest size over the loops.
            top_size = cx.to_top.and_then(|m| {
                in_top_symbols(&d.total_size, m, cx.top_symbols).or_else(|| {
                    let AllocScope::State(path) = &scope else {
                        return None;
                    };
                    let bound = bound_over_loops(&d.total_size, loops.get(path)?)?;
                    in_top_symbols(&bound, m, cx.top_symbols)
                })
            });
            let storage = if device {
                Storage::GpuGlobal
            } else {
                Storage::CpuHeap
            };
            let external = Memory::External { storage, slot: 0 };
            let gpu_life = gpu_lifetime(cx, d, device);
            let scoped = if heap_local {
                Memory::Local
            } else if device
                && (cx.mode == Some(Mode::Pool) || (cx.mode.is_none() && d.pool) || gpu_life)
            {
                Memory::Pool
            } else {
                Memory::Heap
            };
            let wanted = match cx.mode {
                None if gpu_life => Memory::Persistent,
                None => match d.lifetime {
                    Lifetime::Persistent | Lifetime::Global => Memory::Persistent,
                    Lifetime::External => external,
                    _ => scoped.clone(),
                },
                Some(Mode::Scoped) | Some(Mode::Pool) => scoped.clone(),
                Some(Mode::Persistent) => Memory::Persistent,
                Some(Mode::External) => external,
            };
            match (wanted, top_size.clone()) {
                (Memory::External { storage, .. }, Some(elements)) => {
                    let slots = p.external.entry(storage).or_default();
                    slots.push(ExternalSlot {
                        sdfg: sdfg.id,
                        name: name.clone(),
                        dtype: d.dtype,
                        elements: elements.clone(),
                        per_thread,
                    });
                    Memory::External {
                        storage,
                        slot: slots.len() - 1,
                    }
                }
                (Memory::Persistent, Some(_)) => Memory::Persistent,
                (Memory::External { .. }, None) | (Memory::Persistent, None) => {
                    if cx.mode.is_none() && !heap_local && !gpu_life {
                        return Err(Error::unsupported(
                            &d.path,
                            format!(
                                "transient '{name}' has lifetime {} but its size cannot be computed at init",
                                d.lifetime.dace_name()
                            ),
                        ));
                    }
                    scoped
                }
                (m, _) => m,
            }
        };
        // Sized by a symbol the program assigns, and not bounded over counted
        // loops into a workspace slot or persistent buffer: allocated during
        // the call, in every mode.
        let in_call = d.kind != DataKind::View && !size_syms.is_empty() && top_size.is_none();
        if in_call {
            p.sized_in_call.insert((sdfg.id, name.clone()));
        }
        // Such a transient used in several blocks lives from the block that
        // dominates its uses to the one that post-dominates them, not from
        // function entry (where its size has no value).
        let value = d.kind == DataKind::Scalar || eval_int(&d.total_size, &mut |_| None) == Some(1);
        if in_call
            && scope == AllocScope::Function
            && (matches!(memory, Memory::Heap | Memory::Pool)
                || (memory == Memory::Local && !value))
        {
            let chains = chains.get_or_insert_with(|| span::BlockChains::new(&sdfg.body));
            scope = blocks_scope(chains, &uses, &size_syms, name, d)?;
        }
        let slotted = matches!(memory, Memory::Persistent | Memory::External { .. });
        let top_elements = slotted.then_some(top_size).flatten();
        p.transients.insert(
            (sdfg.id, name.clone()),
            Transient {
                memory,
                scope,
                zero,
                top_elements,
                per_thread: slotted && per_thread,
                slice: None,
            },
        );
    }
    // Nested SDFGs.
    visit_nested(
        &sdfg.body,
        &mut |st: &State, path: &str, id: NodeId, ns: &NestedSdfg, in_gpu_map: bool| {
            let node = &st.nodes[id.index()];
            // Inside a kernel: the kernel and the symbols fixed for its launch.
            let kernel = match &cx.kernel {
                Some(k) => Some(k.nested(sdfg, &assigned, st, node.scope, ns)),
                None if in_gpu_map && !cx.in_kernel => {
                    slices::kernel_ctx(sdfg, st, path, node.scope).map(|k| {
                        let k = k.nested(sdfg, &assigned, st, node.scope, ns);
                        KernelCtx {
                            to_top: cx.to_top.cloned(),
                            loops: loops.get(path).cloned().unwrap_or_default(),
                            ..k
                        }
                    })
                }
                None => None,
            };
            let in_map = node.scope.is_some();
            // CPU targets: called inside a parallel map, every thread calls it
            // with its own copy of its slots; inside a sequential map one call
            // runs at a time. GPU targets keep nested SDFGs in maps scoped.
            let per_thread = !cx.gpu
                && !in_gpu_map
                && (cx.per_thread || node.scope.is_some_and(|s| in_parallel_map(st, s)));
            let mapping = match (cx.to_top, in_map && cx.gpu) {
                (Some(outer), false) => Some(
                    ns.symbol_mapping
                        .iter()
                        .map(|(k, v)| (k.clone(), substitute(v, &mut |n| outer.get(n).cloned())))
                        .collect::<IndexMap<_, _>>(),
                ),
                _ => None,
            };
            // Connectors bound to device data point to device memory.
            let device_args = st
                .edges
                .iter()
                .filter_map(|e| {
                    let (conn, data) = if e.dst == id {
                        (e.dst_conn.as_ref()?, e.memlet.data.as_ref()?)
                    } else if e.src == id {
                        (e.src_conn.as_ref()?, e.memlet.data.as_ref()?)
                    } else {
                        return None;
                    };
                    p.device
                        .contains(&(sdfg.id, data.clone()))
                        .then(|| conn.clone())
                })
                .collect();
            let inner = Ctx {
                mode: cx.mode,
                gpu: cx.gpu,
                offload: cx.offload,
                top_symbols: cx.top_symbols,
                to_top: mapping.as_ref(),
                in_kernel: cx.in_kernel || in_gpu_map,
                device_args,
                per_thread,
                kernel,
            };
            plan_sdfg(&ns.sdfg, &inner, p)
        },
    )
}

/// True if a device transient of an offloaded program (`--offload`) gets
/// the lifetime a GPU needs in the default memory mode (no `--mode`), in
/// place of the SDFG's Scope/State/SDFG lifetimes, which a CPU program had
/// and which would allocate and free device memory per call, per state or
/// per loop iteration (each `cudaFree` synchronises the device): persistent
/// (allocated in `__dace_init_*`, freed in `__dace_exit_*`) where its size
/// is known at init, else the stream-ordered pool, where its size has a
/// value. Lifetimes the SDFG asks for (Persistent, Global, External) stay.
fn gpu_lifetime(cx: &Ctx, d: &DataDesc, device: bool) -> bool {
    cx.offload
        && cx.mode.is_none()
        && device
        && !matches!(
            d.lifetime,
            Lifetime::Persistent | Lifetime::Global | Lifetime::External
        )
}

/// What [`visit_nested`] calls for each nested SDFG node: (state, its JSON
/// pointer, node id, node, inside a GPU map).
type NestedVisit<'v> = dyn FnMut(&State, &str, NodeId, &NestedSdfg, bool) -> Result<()> + 'v;

/// Calls `f` for every nested SDFG node.
fn visit_nested(r: &Region, f: &mut NestedVisit<'_>) -> Result<()> {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => {
                for (i, n) in st.nodes.iter().enumerate() {
                    if let NodeKind::Nested(ns) = &n.kind {
                        f(st, &b.path, NodeId(i as u32), ns, in_gpu_scope(st, n.scope))?;
                    }
                }
            }
            BlockKind::Region(inner) => visit_nested(inner, f)?,
            BlockKind::Conditional(brs) => {
                for (_, body) in brs {
                    visit_nested(body, f)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The memory of the per-thread copies of a transient (all copies in
/// `top` elements of the top-level symbols, when they can be counted
/// there): what the mode gives a device transient; persistent and workspace
/// memory need `top`, else the copies are allocated at each launch.
fn slice_memory(
    mode: Option<Mode>,
    gpu_life: bool,
    d: &DataDesc,
    top: Option<Expr>,
    sdfg: u32,
    name: &str,
    p: &mut AllocPlan,
) -> Memory {
    let scoped = if mode == Some(Mode::Pool) || (mode.is_none() && d.pool) || gpu_life {
        Memory::Pool
    } else {
        Memory::Heap
    };
    let wanted = match mode {
        None if gpu_life => Memory::Persistent,
        None => match d.lifetime {
            Lifetime::Persistent | Lifetime::Global => Memory::Persistent,
            Lifetime::External => Memory::External {
                storage: Storage::GpuGlobal,
                slot: 0,
            },
            _ => scoped.clone(),
        },
        Some(Mode::Scoped) | Some(Mode::Pool) => scoped.clone(),
        Some(Mode::Persistent) => Memory::Persistent,
        Some(Mode::External) => Memory::External {
            storage: Storage::GpuGlobal,
            slot: 0,
        },
    };
    match (wanted, top) {
        (Memory::External { storage, .. }, Some(elements)) => {
            let slots = p.external.entry(storage).or_default();
            slots.push(ExternalSlot {
                sdfg,
                name: name.to_string(),
                dtype: d.dtype,
                elements,
                per_thread: false,
            });
            Memory::External {
                storage,
                slot: slots.len() - 1,
            }
        }
        (Memory::Persistent, Some(_)) => Memory::Persistent,
        (Memory::External { .. } | Memory::Persistent, None) => scoped,
        (m, _) => m,
    }
}

/// The state at JSON pointer `path`.
fn find_state<'a>(r: &'a Region, path: &str) -> Option<&'a State> {
    r.blocks.iter().find_map(|b| match &b.kind {
        BlockKind::State(st) if b.path == path => Some(st),
        BlockKind::Region(inner) => find_state(inner, path),
        BlockKind::Conditional(brs) => brs.iter().find_map(|(_, body)| find_state(body, path)),
        _ => None,
    })
}

/// True if `scope` is (inside) a GPU_Device map.
pub fn in_gpu_scope(st: &State, scope: Option<NodeId>) -> bool {
    let Some(s) = scope else { return false };
    std::iter::once(s).chain(st.enclosing_scopes(s)).any(|s| {
        matches!(&st.nodes[s.index()].kind,
            NodeKind::MapEntry(m) if matches!(m.schedule, Schedule::GpuDevice | Schedule::GpuDefault))
    })
}

/// The size expression in top-level symbols, if it can be expressed there.
fn in_top_symbols(
    e: &Expr,
    to_top: &IndexMap<String, Expr>,
    top: &BTreeSet<String>,
) -> Option<Expr> {
    let mapped = simplify(&substitute(e, &mut |n| to_top.get(n).cloned()));
    free_symbols(&mapped)
        .iter()
        .all(|s| top.contains(s))
        .then_some(mapped)
}

/// The [`AllocScope::Blocks`] of a transient `name` sized by `size_syms`
/// (symbols the program assigns), from the blocks that use it (see
/// [`span::block_span`]); refused by name where no sound span exists.
fn blocks_scope(
    chains: &span::BlockChains,
    uses: &Uses,
    size_syms: &BTreeSet<String>,
    name: &str,
    d: &DataDesc,
) -> Result<AllocScope> {
    let paths = |m: &BTreeMap<String, BTreeSet<String>>| -> Vec<String> {
        m.get(name).into_iter().flatten().cloned().collect()
    };
    let (blocks, entered) = (paths(&uses.blocks), paths(&uses.entered));
    let blocks: Vec<&str> = blocks.iter().map(String::as_str).collect();
    let entered: Vec<&str> = entered.iter().map(String::as_str).collect();
    let s = span::block_span(chains, name, &blocks, &entered, size_syms).map_err(|why| {
        let syms: Vec<&str> = size_syms.iter().map(String::as_str).collect();
        Error::unsupported(
            &d.path,
            format!(
                "transient '{name}' is sized by '{}', which the program assigns, and is used in several blocks, but {why}",
                syms.join("', '")
            ),
        )
    })?;
    Ok(AllocScope::Blocks(s.first, s.last, s.free_on_entry))
}

/// The allocation scope of a container from its use site. A map scope is
/// kept where `keep_map(state path, map entry, one scope, any use in a
/// kernel)` says so (never where it would move a kernel's data to the host).
fn scope_of(
    site: Option<&Site>,
    keep_map: impl Fn(&str, NodeId, bool, bool) -> bool,
) -> AllocScope {
    match site {
        None | Some(Site::Function) => AllocScope::Function,
        Some(Site::State {
            path,
            scope: Some(entry),
            any_in_gpu,
            one_scope,
        }) if keep_map(path, *entry, *one_scope, *any_in_gpu) => {
            AllocScope::Map(path.clone(), *entry)
        }
        Some(Site::State { path, .. }) => AllocScope::State(path.clone()),
    }
}

/// True if the outermost GPU kernel map around `entry` (or `entry` itself)
/// holds a thread-block map.
fn kernel_has_thread_blocks(st: &State, entry: NodeId) -> bool {
    let kernel = std::iter::once(entry)
        .chain(st.enclosing_scopes(entry))
        .filter(|s| {
            matches!(&st.nodes[s.index()].kind,
                NodeKind::MapEntry(m) if matches!(m.schedule, Schedule::GpuDevice | Schedule::GpuDefault))
        })
        .last();
    let Some(kernel) = kernel else {
        return false;
    };
    st.nodes.iter().enumerate().any(|(i, n)| {
        matches!(&n.kind, NodeKind::MapEntry(m)
            if matches!(m.schedule, Schedule::GpuThreadBlock | Schedule::GpuThreadBlockDynamic))
            && st.is_below(NodeId(i as u32), kernel)
    })
}

/// True if `entry` is (inside) a map whose iterations run in parallel.
fn in_parallel_map(st: &State, entry: NodeId) -> bool {
    let mut scope = Some(entry);
    let mut guard = 0;
    while let Some(s) = scope {
        if let NodeKind::MapEntry(m) = &st.nodes[s.index()].kind
            && !matches!(m.schedule, Schedule::Sequential | Schedule::Unrolled)
        {
            return true;
        }
        scope = st.nodes[s.index()].scope;
        guard += 1;
        if guard > st.nodes.len() {
            break;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(rel: &str) -> Sdfg {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
        crate::front::load_file(&p).unwrap()
    }

    fn plan_in(sdfg: &Sdfg, mode: Option<Mode>) -> Result<AllocPlan> {
        let opts = CompileOptions {
            mode,
            ..CompileOptions::new(Target::Cpp)
        };
        plan(sdfg, &crate::passes::abi::compute(sdfg), &opts)
    }

    fn label_of(sdfg: &Sdfg, path: &str) -> String {
        sdfg.body
            .blocks
            .iter()
            .find(|b| b.path == path)
            .map(|b| b.label.clone())
            .unwrap()
    }

    #[test]
    fn loop_sized_transient_lives_from_dominator_to_post_dominator_in_every_mode() {
        // T has shape [k], k the loop variable; used in `fill`, `double` (a
        // conditional state) and `use`.
        let sdfg = load("fixtures/corpus/loop_sized_transient/program.sdfg");
        for mode in [
            None,
            Some(Mode::Scoped),
            Some(Mode::Persistent),
            Some(Mode::External),
        ] {
            let p = plan_in(&sdfg, mode).unwrap();
            let t = p.get(0, "T").unwrap();
            assert_eq!(t.memory, Memory::Heap, "{mode:?}");
            let AllocScope::Blocks(first, last, _) = &t.scope else {
                panic!("{mode:?}: {:?}", t.scope);
            };
            assert_eq!(label_of(&sdfg, first), "fill");
            assert_eq!(label_of(&sdfg, last), "use");
            assert!(p.sized_in_call.contains(&(0, "T".to_string())));
            assert_eq!(p.starting_at(0, first), ["T".to_string()]);
            assert_eq!(p.ending_at(0, last), ["T".to_string()]);
            assert!(p.external.is_empty(), "{mode:?}");
        }
    }

    #[test]
    fn size_symbol_assigned_between_uses_is_refused() {
        let mut sdfg = load("fixtures/corpus/loop_sized_transient/program.sdfg");
        let fill = sdfg
            .body
            .blocks
            .iter()
            .position(|b| b.label == "fill")
            .unwrap();
        for e in sdfg.body.edges.iter_mut() {
            if e.src.index() == fill {
                e.assignments.push(("k".into(), Expr::sym("k")));
            }
        }
        let err = plan_in(&sdfg, None).unwrap_err().to_string();
        assert!(err.contains("'T'") && err.contains("assigns 'k'"), "{err}");
    }

    #[test]
    fn value_between_two_tasklets_lives_in_their_map() {
        // cavity_flow's auto-optimized maps pass values from tasklet to
        // tasklet (no access node): one per iteration, not one shared by all
        // threads at function scope.
        let sdfg = load("fixtures/npbench/cavity_flow/program.autoopt.sdfg");
        let p = plan_in(&sdfg, None).unwrap();
        let t = p.get(0, "__s12_n3__out_n4IN___tmp3").unwrap();
        assert!(matches!(t.scope, AllocScope::Map(..)), "{:?}", t.scope);
        assert_eq!(t.memory, Memory::Local);
    }

    #[test]
    fn init_sized_transient_used_in_several_states_stays_at_function_scope() {
        // cavity_flow's `pn` (shape [ny, nx], used in and out of the loops).
        let sdfg = load("fixtures/npbench/cavity_flow/program.sdfg");
        let p = plan_in(&sdfg, Some(Mode::Scoped)).unwrap();
        assert_eq!(p.get(0, "pn").unwrap().scope, AllocScope::Function);
        assert!(p.sized_in_call.is_empty());
    }
}
