//! Lifetime and allocation planning: for every transient of every SDFG in
//! the tree, which memory it uses ([`Memory`]) and where its lifetime
//! begins and ends ([`AllocScope`]). The memory mode (`--mode`) decides the
//! memory; the dataflow decides the scope.

use std::collections::{BTreeMap, BTreeSet};

use indexmap::IndexMap;

use crate::diag::{Error, ErrorKind, Result};
use crate::driver::{CompileOptions, Mode};
use crate::ir::simplify::{free_symbols, simplify, substitute};
use crate::ir::*;
use crate::passes::abi::Abi;

/// Where the bytes of a transient come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Memory {
    /// A local variable or stack array (scalars, registers, small arrays inside maps).
    Local,
    /// Allocated at the start of its scope and freed at its end.
    Heap,
    /// A state-struct member allocated in init and freed in exit.
    Persistent,
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllocScope {
    /// The whole SDFG function.
    Function,
    /// One state (JSON pointer of the state).
    State(String),
    /// The body of one map (state JSON pointer, map entry).
    Map(String, NodeId),
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
}

impl AllocPlan {
    /// The plan of a transient.
    pub fn get(&self, sdfg: u32, name: &str) -> Option<&Transient> {
        self.transients.get(&(sdfg, name.to_string()))
    }
}

/// Computes the plan.
pub fn plan(sdfg: &Sdfg, abi: &Abi, opts: &CompileOptions) -> Result<AllocPlan> {
    let top_symbols: BTreeSet<String> = abi.init.iter().map(|p| p.name.clone()).collect();
    let mut p = AllocPlan::default();
    plan_sdfg(
        sdfg,
        opts.mode,
        &top_symbols,
        Some(&IndexMap::new()),
        &mut p,
    )?;
    Ok(p)
}

/// Where the access nodes of each container are: (state path, innermost map scope).
type Uses = BTreeMap<String, Vec<(String, Option<NodeId>)>>;

fn collect_uses(
    r: &Region,
    uses: &mut Uses,
    wcr: &mut BTreeSet<String>,
    setzero: &mut BTreeSet<String>,
) {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => {
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
                }
            }
            BlockKind::Region(inner) => collect_uses(inner, uses, wcr, setzero),
            BlockKind::Conditional(brs) => brs
                .iter()
                .for_each(|(_, body)| collect_uses(body, uses, wcr, setzero)),
            _ => {}
        }
    }
}

/// `to_top`: how the SDFG's symbols map to top-level symbols (None if the
/// SDFG runs inside a map, where nothing may live in shared memory).
fn plan_sdfg(
    sdfg: &Sdfg,
    mode: Option<Mode>,
    top_symbols: &BTreeSet<String>,
    to_top: Option<&IndexMap<String, Expr>>,
    p: &mut AllocPlan,
) -> Result<()> {
    let mut uses = Uses::new();
    let mut wcr = BTreeSet::new();
    let mut setzero = BTreeSet::new();
    collect_uses(&sdfg.body, &mut uses, &mut wcr, &mut setzero);
    for (name, d) in sdfg.arrays.iter().filter(|(_, d)| d.transient) {
        let sites = uses.get(name).map(Vec::as_slice).unwrap_or(&[]);
        let scope = scope_of(sites);
        let zero = wcr.contains(name) || setzero.contains(name);
        let mut top_size = None;
        let memory = if d.kind == DataKind::View {
            Memory::View
        } else if d.kind == DataKind::Scalar
            || d.storage == Storage::Register
            || matches!(scope, AllocScope::Map(..))
        {
            Memory::Local
        } else if d.storage.is_gpu() {
            return Err(Error::new(
                ErrorKind::Unsupported,
                &d.path,
                format!(
                    "transient '{name}' has GPU storage {}; compile this SDFG with --target cuda or hip",
                    d.storage.dace_name()
                ),
            ));
        } else {
            top_size = to_top.and_then(|m| in_top_symbols(&d.total_size, m, top_symbols));
            let wanted = match mode {
                None => match d.lifetime {
                    Lifetime::Persistent | Lifetime::Global => Memory::Persistent,
                    Lifetime::External => Memory::External {
                        storage: Storage::CpuHeap,
                        slot: 0,
                    },
                    _ => Memory::Heap,
                },
                Some(Mode::Scoped) | Some(Mode::Pool) => Memory::Heap,
                Some(Mode::Persistent) => Memory::Persistent,
                Some(Mode::External) => Memory::External {
                    storage: Storage::CpuHeap,
                    slot: 0,
                },
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
                    if mode.is_none() {
                        return Err(Error::unsupported(
                            &d.path,
                            format!(
                                "transient '{name}' has lifetime {} but its size cannot be computed at init",
                                d.lifetime.dace_name()
                            ),
                        ));
                    }
                    Memory::Heap
                }
                (m, _) => m,
            }
        };
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
    visit_nested(&sdfg.body, &mut |ns: &NestedSdfg, in_map: bool| {
        let mapping = match (to_top, in_map) {
            (Some(outer), false) => Some(
                ns.symbol_mapping
                    .iter()
                    .map(|(k, v)| (k.clone(), substitute(v, &mut |n| outer.get(n).cloned())))
                    .collect::<IndexMap<_, _>>(),
            ),
            _ => None,
        };
        plan_sdfg(&ns.sdfg, mode, top_symbols, mapping.as_ref(), p)
    })
}

fn visit_nested(r: &Region, f: &mut dyn FnMut(&NestedSdfg, bool) -> Result<()>) -> Result<()> {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => {
                for n in &st.nodes {
                    if let NodeKind::Nested(ns) = &n.kind {
                        f(ns, n.scope.is_some())?;
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
