//! Lifetime and allocation planning: for every transient of every SDFG in
//! the tree, which memory it uses ([`Memory`]) and where its lifetime
//! begins and ends ([`AllocScope`]). The memory mode (`--mode`) decides the
//! memory; the dataflow decides the scope.

use std::collections::{BTreeMap, BTreeSet};

use indexmap::IndexMap;

use crate::diag::{Error, ErrorKind, Result};
use crate::driver::{CompileOptions, Mode, Target};
use crate::ir::simplify::{eval_int, free_symbols, simplify, substitute};
use crate::ir::*;
use crate::passes::abi::Abi;
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
    /// symbol the program assigns (see [`crate::passes::span`]).
    Blocks(String, String),
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
}

/// One workspace slot.
#[derive(Clone, Debug)]
pub struct ExternalSlot {
    /// Id of the SDFG that owns the transient.
    pub sdfg: u32,
    /// Transient name.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Number of elements, in the top-level symbols.
    pub elements: Expr,
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
    /// Transients whose size depends on a symbol the program assigns while it
    /// runs (an interstate edge, a loop variable): no memory mode can place
    /// them at init or in the workspace, so they are allocated during the
    /// call, where that symbol has its value, in every mode.
    pub sized_in_call: BTreeSet<(u32, String)>,
}

impl AllocPlan {
    /// True if the container lives in device memory.
    pub fn is_device(&self, sdfg: u32, name: &str) -> bool {
        self.device.contains(&(sdfg, name.to_string()))
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

    /// The transients of `sdfg` freed at the end of the block at `path`.
    pub fn ending_at(&self, sdfg: u32, path: &str) -> &[String] {
        self.block_ends
            .get(&(sdfg, path.to_string()))
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
        top_symbols: &top_symbols,
        to_top: Some(&top),
        in_kernel: false,
        device_args: BTreeSet::new(),
    };
    plan_sdfg(sdfg, &cx, &mut p)?;
    for ((id, name), t) in &p.transients {
        p.by_scope
            .entry((*id, t.scope.clone()))
            .or_default()
            .push(name.clone());
        if let AllocScope::Blocks(first, last) = &t.scope {
            p.block_starts
                .entry((*id, first.clone()))
                .or_default()
                .push(name.clone());
            p.block_ends
                .entry((*id, last.clone()))
                .or_default()
                .push(name.clone());
        }
    }
    Ok(p)
}

/// Where each container is used: (block JSON pointer, innermost map scope).
/// Uses are its access nodes, the data of edges between two code nodes (a
/// value passed from one tasklet to the next, which has no access node: it
/// lives in the scope of the two nodes), and reads in interstate edges and
/// block conditions (a use of the blocks on both sides of the edge, kept
/// apart in `cf`).
type Uses = BTreeMap<String, Vec<(String, Option<NodeId>)>>;

fn collect_uses(
    r: &Region,
    uses: &mut Uses,
    cf: &mut Uses,
    wcr: &mut BTreeSet<String>,
    setzero: &mut BTreeSet<String>,
) {
    let use_in = |uses: &mut Uses, e: &Expr, path: &str| {
        e.visit_names(&mut |n| {
            uses.entry(n.to_string())
                .or_default()
                .push((path.to_string(), None));
        });
    };
    for e in &r.edges {
        let exprs = std::iter::once(&e.condition).chain(e.assignments.iter().map(|(_, v)| v));
        for x in exprs {
            use_in(cf, x, &r.blocks[e.src.index()].path);
            use_in(cf, x, &r.blocks[e.dst.index()].path);
        }
    }
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => {
                let is_code = |id: NodeId| {
                    matches!(
                        st.nodes[id.index()].kind,
                        NodeKind::Tasklet(_) | NodeKind::Nested(_) | NodeKind::Library(_)
                    )
                };
                for n in &st.nodes {
                    if let NodeKind::Access(a) = &n.kind {
                        uses.entry(a.data.clone())
                            .or_default()
                            .push((b.path.clone(), n.scope));
                        if a.setzero {
                            setzero.insert(a.data.clone());
                        }
                    }
                }
                for e in &st.edges {
                    if let (Some(d), Some(_)) = (&e.memlet.data, &e.memlet.wcr) {
                        wcr.insert(d.clone());
                    }
                    if let Some(d) = &e.memlet.data
                        && is_code(e.src)
                        && is_code(e.dst)
                    {
                        uses.entry(d.clone())
                            .or_default()
                            .push((b.path.clone(), st.nodes[e.src.index()].scope));
                    }
                }
            }
            BlockKind::Region(inner) => {
                if let RegionKind::Loop(l) = &inner.kind {
                    use_in(cf, &l.condition, &b.path);
                    for st in l.init.iter().chain(&l.update) {
                        let (Stmt::Assign { value, .. } | Stmt::Expr(value)) = st;
                        use_in(cf, value, &b.path);
                    }
                }
                collect_uses(inner, uses, cf, wcr, setzero)
            }
            BlockKind::Conditional(brs) => {
                for (c, body) in brs {
                    if let Some(c) = c {
                        use_in(cf, c, &b.path);
                    }
                    collect_uses(body, uses, cf, wcr, setzero)
                }
            }
            _ => {}
        }
    }
}

/// What the planner knows about the SDFG it is planning.
struct Ctx<'a> {
    mode: Option<Mode>,
    /// Compiling for a GPU target.
    gpu: bool,
    top_symbols: &'a BTreeSet<String>,
    /// How the SDFG's symbols map to top-level symbols (None if the SDFG runs
    /// inside a map, where nothing may live in shared memory).
    to_top: Option<&'a IndexMap<String, Expr>>,
    /// The SDFG runs inside a GPU kernel (everything is device-local).
    in_kernel: bool,
    /// Non-transients of a nested SDFG that point to device memory.
    device_args: BTreeSet<String>,
}

/// True if a transient's access nodes touch a GPU_Device map at top level
/// (then a Default-storage transient lives in device memory).
fn touches_gpu_map(r: &Region, name: &str) -> bool {
    r.blocks.iter().any(|b| match &b.kind {
        BlockKind::State(st) => st.edges.iter().any(|e| {
            let is_gpu_scope = |id: NodeId| match &st.nodes[id.index()].kind {
                NodeKind::MapEntry(m) => matches!(m.schedule, Schedule::GpuDevice | Schedule::GpuDefault),
                NodeKind::MapExit { entry } => matches!(&st.nodes[entry.index()].kind,
                    NodeKind::MapEntry(m) if matches!(m.schedule, Schedule::GpuDevice | Schedule::GpuDefault)),
                _ => false,
            };
            let is_it = |id: NodeId| matches!(&st.nodes[id.index()].kind, NodeKind::Access(a) if a.data == name);
            (is_it(e.src) && is_gpu_scope(e.dst)) || (is_it(e.dst) && is_gpu_scope(e.src))
        }),
        BlockKind::Region(inner) => touches_gpu_map(inner, name),
        BlockKind::Conditional(brs) => brs.iter().any(|(_, body)| touches_gpu_map(body, name)),
        _ => false,
    })
}

fn plan_sdfg(sdfg: &Sdfg, cx: &Ctx, p: &mut AllocPlan) -> Result<()> {
    let mut uses = Uses::new();
    let mut wcr = BTreeSet::new();
    let mut setzero = BTreeSet::new();
    let mut cf = Uses::new();
    collect_uses(&sdfg.body, &mut uses, &mut cf, &mut wcr, &mut setzero);
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
        // Reads in interstate edges and conditions keep an array alive across
        // the blocks around them; a scalar is a variable of the whole function
        // wherever it is allocated.
        let mut sites: Vec<(String, Option<NodeId>)> = uses.get(name).cloned().unwrap_or_default();
        if d.kind != DataKind::Scalar {
            sites.extend(cf.get(name).into_iter().flatten().cloned());
        }
        let sites = sites.as_slice();
        let mut scope = scope_of(sites);
        let size_syms: BTreeSet<String> = free_symbols(&d.total_size)
            .into_iter()
            .filter(|s| assigned.contains(s))
            .collect();
        if d.kind != DataKind::View && !size_syms.is_empty() {
            p.sized_in_call.insert((sdfg.id, name.clone()));
        }
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
                && touches_gpu_map(&sdfg.body, name));
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
        let mut top_size = None;
        let memory = if d.kind == DataKind::View {
            Memory::View
        } else if cx.in_kernel
            || (d.kind == DataKind::Scalar && !device)
            || d.storage == Storage::Register
            || matches!(scope, AllocScope::Map(..))
        {
            Memory::Local
        } else {
            top_size = cx
                .to_top
                .and_then(|m| in_top_symbols(&d.total_size, m, cx.top_symbols));
            let storage = if device {
                Storage::GpuGlobal
            } else {
                Storage::CpuHeap
            };
            let external = Memory::External { storage, slot: 0 };
            let scoped = if device && (cx.mode == Some(Mode::Pool) || (cx.mode.is_none() && d.pool))
            {
                Memory::Pool
            } else {
                Memory::Heap
            };
            let wanted = match cx.mode {
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
                    });
                    Memory::External {
                        storage,
                        slot: slots.len() - 1,
                    }
                }
                (Memory::Persistent, Some(_)) => Memory::Persistent,
                (Memory::External { .. }, None) | (Memory::Persistent, None) => {
                    if cx.mode.is_none() {
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
        // Sized by a symbol assigned in the program and used in several
        // blocks: from the block that dominates its uses to the one that
        // post-dominates them, not at function entry.
        let value = d.kind == DataKind::Scalar || eval_int(&d.total_size, &mut |_| None) == Some(1);
        if scope == AllocScope::Function
            && !size_syms.is_empty()
            && (matches!(memory, Memory::Heap | Memory::Pool)
                || (memory == Memory::Local && !value))
        {
            let chains = chains.get_or_insert_with(|| span::BlockChains::new(&sdfg.body));
            let mut blocks: Vec<&str> = sites.iter().map(|(b, _)| b.as_str()).collect();
            blocks.sort_unstable();
            blocks.dedup();
            let s = span::block_span(chains, &blocks, &size_syms).map_err(|why| {
                let syms: Vec<&str> = size_syms.iter().map(String::as_str).collect();
                Error::unsupported(
                    &d.path,
                    format!(
                        "transient '{name}' is sized by '{}', which the program assigns, and is used in several blocks, but {why}",
                        syms.join("', '")
                    ),
                )
            })?;
            scope = AllocScope::Blocks(s.first, s.last);
        }
        let top_elements = matches!(memory, Memory::Persistent | Memory::External { .. })
            .then_some(top_size)
            .flatten();
        p.transients.insert(
            (sdfg.id, name.clone()),
            Transient {
                memory,
                scope,
                zero,
                top_elements,
            },
        );
    }
    // Nested SDFGs.
    visit_nested(
        &sdfg.body,
        &mut |st: &State, id: NodeId, ns: &NestedSdfg, in_gpu_map: bool| {
            let node = &st.nodes[id.index()];
            let in_map = node.scope.is_some();
            let mapping = match (cx.to_top, in_map) {
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
                top_symbols: cx.top_symbols,
                to_top: mapping.as_ref(),
                in_kernel: cx.in_kernel || in_gpu_map,
                device_args,
            };
            plan_sdfg(&ns.sdfg, &inner, p)
        },
    )
}

/// Calls `f` for every nested SDFG node (state, node id, node, inside a GPU map).
fn visit_nested(
    r: &Region,
    f: &mut dyn FnMut(&State, NodeId, &NestedSdfg, bool) -> Result<()>,
) -> Result<()> {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => {
                for (i, n) in st.nodes.iter().enumerate() {
                    if let NodeKind::Nested(ns) = &n.kind {
                        f(st, NodeId(i as u32), ns, in_gpu_scope(st, n.scope))?;
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

/// True if `scope` is (inside) a GPU_Device map.
pub fn in_gpu_scope(st: &State, mut scope: Option<NodeId>) -> bool {
    let mut guard = 0;
    while let Some(s) = scope {
        if let NodeKind::MapEntry(m) = &st.nodes[s.index()].kind
            && matches!(m.schedule, Schedule::GpuDevice | Schedule::GpuDefault)
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

fn scope_of(sites: &[(String, Option<NodeId>)]) -> AllocScope {
    let Some((first_state, first_scope)) = sites.first() else {
        return AllocScope::Function;
    };
    if sites.iter().any(|(s, _)| s != first_state) {
        return AllocScope::Function;
    }
    match first_scope {
        Some(entry) if sites.iter().all(|(_, sc)| sc == &Some(*entry)) => {
            AllocScope::Map(first_state.clone(), *entry)
        }
        _ if sites.iter().all(|(_, sc)| sc.is_none()) => AllocScope::State(first_state.clone()),
        // Accessed in several map scopes of one state: keep it at state level.
        _ => AllocScope::State(first_state.clone()),
    }
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
            let AllocScope::Blocks(first, last) = &t.scope else {
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
