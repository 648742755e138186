//! Data placement at a host level: which containers live on the device,
//! device twins of the program's arguments, host copies of device data the
//! host reads.

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::{Error, Result};
use crate::ir::simplify::{free_symbols, simplify};
use crate::ir::*;

use super::placement::{each_state, each_state_mut};

/// The data decisions of one host level.
#[derive(Clone, Debug, Default)]
pub(super) struct Plan {
    /// Containers (as named in the dataflow after renaming) on the device.
    pub device: BTreeSet<String>,
    /// Top level: (argument, its device twin), in declaration order.
    pub twins: Vec<(String, String)>,
    /// Twins filled from their argument at program start.
    pub copy_in: BTreeSet<String>,
    /// Twins written back to their argument at program end.
    pub copy_out: BTreeSet<String>,
    /// (device container, host container) pairs the host reads in interstate
    /// code: the host one is refreshed after every state that writes the device one.
    pub host_reads: Vec<(String, String)>,
    /// Host copies filled on entry (device arguments of a nested SDFG).
    pub fill_on_entry: BTreeSet<String>,
    /// Twins whose size the program's symbols do not give: the last index
    /// per dimension the program touches (copies cover indices 0..=end).
    pub extent: BTreeMap<String, Vec<Expr>>,
    /// `--offload=device-args`: array arguments that are device memory themselves.
    pub args_on_device: Vec<String>,
}

/// How the dataflow of a host level uses one container.
#[derive(Default)]
struct Use {
    /// Outermost map entry of every access node: (state number, entry).
    sites: BTreeSet<(usize, Option<NodeId>)>,
    /// Some edge writes it.
    written: bool,
}

/// The outermost kernel (`GPU_Device` map entry) whose scope holds `id`
/// (None on the host side: at the top, or below host maps only).
fn outermost(st: &State, id: NodeId) -> Option<NodeId> {
    let mut s = st.nodes[id.index()].scope;
    let mut found = None;
    let mut guard = 0;
    while let Some(x) = s {
        if matches!(&st.nodes[x.index()].kind, NodeKind::MapEntry(m) if super::placement::is_gpu_schedule(m.schedule))
        {
            found = Some(x);
        }
        s = st.nodes[x.index()].scope;
        guard += 1;
        if guard > st.nodes.len() {
            break;
        }
    }
    found
}

fn uses(sdfg: &Sdfg) -> BTreeMap<String, Use> {
    let mut out: BTreeMap<String, Use> = BTreeMap::new();
    let mut k = 0;
    each_state(&sdfg.body, &mut |st| {
        for (i, n) in st.nodes.iter().enumerate() {
            if let NodeKind::Access(a) = &n.kind {
                out.entry(a.data.clone())
                    .or_default()
                    .sites
                    .insert((k, outermost(st, NodeId(i as u32))));
            }
        }
        // An edge into an access node writes its container, whichever side
        // the memlet names (a copy names one of the two).
        for e in st.edges.iter().filter(|e| !e.memlet.is_empty()) {
            if let NodeKind::Access(a) = &st.nodes[e.dst.index()].kind {
                out.entry(a.data.clone()).or_default().written = true;
            }
        }
        k += 1;
    });
    out
}

/// Names the host reads in the interstate code of a region (conditions,
/// assignments, loop statements), not inside nested SDFGs; also the symbol
/// mappings of nested SDFGs called at the top of a state.
pub(super) fn interstate_names(r: &Region, out: &mut BTreeSet<String>) {
    let mut add = |e: &Expr| {
        e.visit_names(&mut |n| {
            out.insert(n.to_string());
        })
    };
    fn stmts(s: &[Stmt], add: &mut dyn FnMut(&Expr)) {
        for st in s {
            for e in st.own_exprs() {
                add(e);
            }
        }
    }
    for e in &r.edges {
        add(&e.condition);
        e.assignments.iter().for_each(|(_, v)| add(v));
    }
    if let RegionKind::Loop(l) = &r.kind {
        add(&l.condition);
        stmts(&l.init, &mut add);
        stmts(&l.update, &mut add);
    }
    for b in &r.blocks {
        match &b.kind {
            BlockKind::Region(inner) => interstate_names(inner, out),
            BlockKind::Conditional(brs) => {
                for (c, body) in brs {
                    if let Some(c) = c {
                        c.visit_names(&mut |n| {
                            out.insert(n.to_string());
                        });
                    }
                    interstate_names(body, out);
                }
            }
            BlockKind::State(st) => {
                for n in st.nodes.iter().filter(|n| n.scope.is_none()) {
                    if let NodeKind::Nested(ns) = &n.kind {
                        for v in ns.symbol_mapping.values() {
                            v.visit_names(&mut |n| {
                                out.insert(n.to_string());
                            });
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// True for a C++ or callback tasklet at the top of a state: code for the
/// host (a timer, a library call, a call back into Python), which stays
/// there; also a map or nested SDFG that stays on the host because it holds
/// a callback ([`super::host`]).
fn is_host_code(st: &State, id: NodeId) -> bool {
    let n = &st.nodes[id.index()];
    match &n.kind {
        NodeKind::Tasklet(t) => {
            n.scope.is_none() && (t.code.language == Language::Cpp || t.callback)
        }
        NodeKind::MapEntry(_) | NodeKind::MapExit { .. } => super::host::in_callback_map(st, id),
        NodeKind::Nested(ns) => {
            n.scope.is_none()
                && !super::placement::has_top_map(&ns.sdfg)
                && super::host::callback_in_sdfg(&ns.sdfg).is_some()
        }
        _ => false,
    }
}

/// Containers that only host C++ tasklets use; one that device code uses
/// too is refused by name.
fn host_code_data(sdfg: &Sdfg) -> Result<BTreeSet<String>> {
    let mut host: BTreeSet<String> = BTreeSet::new();
    let mut device: BTreeSet<String> = BTreeSet::new();
    let mut tasklet_of: BTreeMap<String, String> = BTreeMap::new();
    each_state(&sdfg.body, &mut |st| {
        for (i, n) in st.nodes.iter().enumerate() {
            let NodeKind::Access(a) = &n.kind else {
                continue;
            };
            let id = NodeId(i as u32);
            for e in st.edges.iter().filter(|e| e.src == id || e.dst == id) {
                let other_id = if e.src == id { e.dst } else { e.src };
                let other = &st.nodes[other_id.index()];
                if is_host_code(st, other_id) {
                    host.insert(a.data.clone());
                    tasklet_of.insert(a.data.clone(), other.label.clone());
                } else if !e.memlet.is_empty() {
                    device.insert(a.data.clone());
                }
            }
            if n.scope.is_some() && !super::host::in_callback_map(st, id) {
                device.insert(a.data.clone());
            }
        }
    });
    if let Some(both) = host.intersection(&device).next() {
        let d = &sdfg.arrays[both.as_str()];
        return Err(Error::unsupported(
            &d.path,
            format!(
                "--offload: '{both}' is used by the host C++ tasklet '{}' and by code that runs on the GPU",
                tasklet_of[both.as_str()]
            ),
        ));
    }
    Ok(host)
}

/// A name not yet used by the SDFG's containers or symbols.
fn fresh(sdfg: &Sdfg, base: &str) -> String {
    let mut name = base.to_string();
    let mut k = 0;
    while sdfg.arrays.contains_key(&name) || sdfg.symbols.contains_key(&name) {
        k += 1;
        name = format!("{base}_{k}");
    }
    name
}

/// Decides where the containers of a host level live and renames the
/// program's arguments to their device twins in the dataflow.
pub(super) fn place(
    sdfg: &mut Sdfg,
    top: bool,
    device_args: &BTreeSet<String>,
    available: &BTreeSet<String>,
    args_on_device: bool,
) -> Result<Plan> {
    let uses = uses(sdfg);
    let host_code = host_code_data(sdfg)?;
    let mut host_read = BTreeSet::new();
    interstate_names(&sdfg.body, &mut host_read);
    host_read.retain(|n| sdfg.arrays.contains_key(n));
    let mut plan = Plan::default();
    let mut renames: BTreeMap<String, String> = BTreeMap::new();
    let names: Vec<String> = sdfg.arrays.keys().cloned().collect();
    for name in names {
        let d = sdfg.arrays[&name].clone();
        // An argument only host C++ code uses (gt4py's timer) stays a host array.
        if args_on_device
            && !d.transient
            && d.kind != DataKind::Scalar
            && !host_code.contains(&name)
        {
            device_argument(sdfg, &name, &d, &uses, &host_read, available, &mut plan)?;
            continue;
        }
        if host_code.contains(&name) {
            // Only host C++ code uses it: it stays where it is.
            continue;
        }
        let used = uses.get(&name);
        let in_dataflow = used.is_some();
        let written = used.is_some_and(|u| u.written);
        let host_scalar =
            !d.transient && d.kind == DataKind::Scalar && !device_args.contains(&name);
        if !d.transient {
            if !in_dataflow || (host_scalar && !written) {
                continue;
            }
            if top {
                let twin = fresh(sdfg, &format!("gpu_{name}"));
                let mut desc = d.clone();
                // A size in symbols the program does not receive: the extent its uses touch.
                let missing: Vec<String> = free_symbols(&d.total_size)
                    .into_iter()
                    .filter(|s| !available.contains(s))
                    .collect();
                if !missing.is_empty() {
                    let ends = touched_ends(sdfg, &name)
                        .filter(|ends| {
                            ends.iter()
                                .chain(&d.strides)
                                .all(|e| free_symbols(e).iter().all(|s| available.contains(s)))
                        })
                        .ok_or_else(|| {
                            Error::unsupported(
                                &d.path,
                                format!(
                                    "--offload: the size of argument '{name}' depends on {}, which the program does not receive, and its uses do not bound it",
                                    missing.join(", ")
                                ),
                            )
                        })?;
                    desc.total_size = span(&ends, &d.strides);
                    plan.extent.insert(twin.clone(), ends);
                }
                desc.transient = true;
                desc.storage = Storage::GpuGlobal;
                desc.lifetime = Lifetime::Sdfg;
                desc.pool = false;
                sdfg.arrays.insert(twin.clone(), desc);
                if !dense(&d) || !written_whole_first(sdfg, &name) {
                    plan.copy_in.insert(twin.clone());
                }
                if written {
                    plan.copy_out.insert(twin.clone());
                }
                if host_read.contains(&name) && written {
                    plan.host_reads.push((twin.clone(), name.clone()));
                }
                plan.device.insert(twin.clone());
                plan.twins.push((name.clone(), twin.clone()));
                renames.insert(name.clone(), twin);
                continue;
            }
            if !device_args.contains(&name) {
                return Err(Error::unsupported(
                    &d.path,
                    format!(
                        "--offload: '{name}' of nested SDFG '{}' is {} but its outer container stays on the host",
                        sdfg.name,
                        if written { "written" } else { "an array" }
                    ),
                ));
            }
            plan.device.insert(name.clone());
            if host_read.contains(&name) {
                let host = shadow(sdfg, &name, &d);
                plan.fill_on_entry.insert(host.clone());
                plan.host_reads.push((name.clone(), host));
            }
            continue;
        }
        let Some(u) = used else { continue };
        // Used only inside one kernel: a register or local array there.
        let one_kernel = u.sites.len() == 1 && u.sites.iter().all(|(_, e)| e.is_some());
        if one_kernel && !host_read.contains(&name) {
            continue;
        }
        if let Some(desc) = sdfg.arrays.get_mut(&name) {
            desc.storage = Storage::GpuGlobal;
            desc.pool = false;
        }
        plan.device.insert(name.clone());
        if host_read.contains(&name) && u.written {
            let host = shadow(sdfg, &name, &d);
            plan.host_reads.push((name.clone(), host));
        }
    }
    if !renames.is_empty() {
        each_state_mut(&mut sdfg.body, &mut |st| {
            for n in &mut st.nodes {
                if let NodeKind::Access(a) = &mut n.kind
                    && let Some(t) = renames.get(&a.data)
                {
                    a.data = t.clone();
                }
            }
            for e in &mut st.edges {
                if let Some(d) = &mut e.memlet.data
                    && let Some(t) = renames.get(d.as_str())
                {
                    *d = t.clone();
                }
            }
        });
    }
    // The host reads its copies.
    let to_host: BTreeMap<String, String> = plan
        .host_reads
        .iter()
        .filter(|(dev, host)| !plan.twins.iter().any(|(a, t)| t == dev && a == host))
        .map(|(dev, host)| (dev.clone(), host.clone()))
        .collect();
    if !to_host.is_empty() {
        rename_interstate(&mut sdfg.body, &to_host);
    }
    Ok(plan)
}

/// `--offload=device-args`: an array argument is device memory itself
/// (`GPU_Global`, no twin, no copies; one that only host C++ code uses, as
/// gt4py's timer, stays a host array, as in gt4py's GPU programs); if the host reads it in interstate
/// code, a host copy filled at entry and refreshed after every state that
/// writes it (its size must then be known from the program's symbols).
fn device_argument(
    sdfg: &mut Sdfg,
    name: &str,
    d: &DataDesc,
    uses: &BTreeMap<String, Use>,
    host_read: &BTreeSet<String>,
    available: &BTreeSet<String>,
    plan: &mut Plan,
) -> Result<()> {
    if let Some(desc) = sdfg.arrays.get_mut(name) {
        desc.storage = Storage::GpuGlobal;
        desc.pool = false;
    }
    plan.args_on_device.push(name.to_string());
    // An argument only interstate code reads (`__tmp0 = n[0]`) still needs its host copy.
    if uses.contains_key(name) {
        plan.device.insert(name.to_string());
    } else if !host_read.contains(name) {
        return Ok(());
    }
    if host_read.contains(name) {
        let missing: Vec<String> = free_symbols(&d.total_size)
            .into_iter()
            .filter(|s| !available.contains(s))
            .collect();
        if !missing.is_empty() {
            return Err(Error::unsupported(
                &d.path,
                format!(
                    "--offload=device-args: the host reads argument '{name}' in interstate code, but its size depends on {}, which the program does not receive (its host copy cannot be sized)",
                    missing.join(", ")
                ),
            ));
        }
        let host = shadow(sdfg, name, d);
        plan.fill_on_entry.insert(host.clone());
        plan.host_reads.push((name.to_string(), host));
    }
    Ok(())
}

/// Elements from index 0 to the given last indices: `1 + sum(end_k * stride_k)`.
pub(super) fn span(ends: &[Expr], strides: &[Expr]) -> Expr {
    simplify(&ends.iter().zip(strides).fold(Expr::Int(1), |acc, (e, s)| {
        Expr::bin(
            BinaryOp::Add,
            acc,
            Expr::bin(BinaryOp::Mul, e.clone(), s.clone()),
        )
    }))
}

/// Row-major strides without gaps (a copy of its extent moves nothing else).
fn dense(d: &DataDesc) -> bool {
    let mut expected = Expr::Int(1);
    for k in (0..d.rank()).rev() {
        if !crate::ir::simplify::probably_equal(&d.strides[k], &expected) {
            return false;
        }
        expected = simplify(&Expr::bin(BinaryOp::Mul, expected, d.shape[k].clone()));
    }
    true
}

/// The largest index per dimension that the top-of-state memlets of
/// `name` touch (None if some memlet has no subset for it).
fn touched_ends(sdfg: &Sdfg, name: &str) -> Option<Vec<Expr>> {
    let rank = sdfg.arrays.get(name)?.rank();
    let mut ends: Vec<Vec<Expr>> = vec![Vec::new(); rank];
    let mut ok = true;
    each_state(&sdfg.body, &mut |st| {
        for e in &st.edges {
            let at = |id: NodeId| {
                let n = &st.nodes[id.index()];
                n.scope.is_none() && matches!(&n.kind, NodeKind::Access(a) if a.data == name)
            };
            if !(at(e.src) || at(e.dst)) || e.memlet.is_empty() {
                continue;
            }
            let sub = if e.memlet.data.as_deref() == Some(name) {
                e.memlet.subset.as_ref()
            } else {
                e.memlet.other_subset.as_ref()
            };
            match sub {
                Some(sub) if sub.len() == rank => {
                    for (k, r) in sub.iter().enumerate() {
                        if !ends[k].contains(&r.end) {
                            ends[k].push(r.end.clone());
                        }
                    }
                }
                _ => ok = false,
            }
        }
    });
    if !ok || ends.iter().any(Vec::is_empty) {
        return None;
    }
    Some(
        ends.into_iter()
            .map(|mut v| {
                if v.len() == 1 {
                    v.pop().expect("one")
                } else {
                    Expr::Call(crate::ir::Func::Max, v)
                }
            })
            .collect(),
    )
}

/// A host copy of a device container for the host's reads.
fn shadow(sdfg: &mut Sdfg, name: &str, d: &DataDesc) -> String {
    let host = fresh(sdfg, &format!("host_{name}"));
    let mut desc = d.clone();
    desc.transient = true;
    desc.storage = if d.kind == DataKind::Scalar {
        Storage::Register
    } else {
        Storage::CpuHeap
    };
    desc.kind = if d.kind == DataKind::View {
        DataKind::Array
    } else {
        d.kind
    };
    desc.lifetime = Lifetime::Sdfg;
    desc.pool = false;
    sdfg.arrays.insert(host.clone(), desc);
    host
}

/// True if a state of the top-level region writes the argument whole (no
/// WCR, no dynamic memlet) before anything in it reads it, every run of the
/// program passes through that state, and no block before it touches the
/// argument: its device twin then needs no copy-in.
fn written_whole_first(sdfg: &Sdfg, name: &str) -> bool {
    let r = &sdfg.body;
    let touches_state = |st: &State| {
        st.nodes
            .iter()
            .any(|n| matches!(&n.kind, NodeKind::Access(a) if a.data == name))
    };
    let touches = |b: &Block| -> bool {
        match &b.kind {
            BlockKind::State(st) => touches_state(st),
            BlockKind::Region(inner) => {
                let mut t = false;
                each_state(inner, &mut |st| t |= touches_state(st));
                t
            }
            BlockKind::Conditional(brs) => {
                let mut t = false;
                for (_, body) in brs {
                    each_state(body, &mut |st| t |= touches_state(st));
                }
                t
            }
            _ => false,
        }
    };
    r.blocks.iter().enumerate().any(|(w, block)| {
        let BlockKind::State(st) = &block.kind else {
            return false;
        };
        if !touches_state(st) || !state_writes_whole_first(sdfg, st, name) {
            return false;
        }
        // Blocks that run before the first visit of `w`.
        let w = BlockId(w as u32);
        let mut before = BTreeSet::new();
        let mut stack: Vec<BlockId> = r.start.into_iter().collect();
        while let Some(b) = stack.pop() {
            if b == w || !before.insert(b) {
                continue;
            }
            let blk = &r.blocks[b.index()];
            if touches(blk) || !always_continues(r, b) || has_return(blk) {
                return false;
            }
            stack.extend(r.edges.iter().filter(|e| e.src == b).map(|e| e.dst));
        }
        true
    })
}

/// True if the region leaves block `b` by some edge, whatever the values:
/// an unconditional edge, or two edges whose conditions negate each other.
fn always_continues(r: &Region, b: BlockId) -> bool {
    let conds: Vec<&Expr> = r
        .edges
        .iter()
        .filter(|e| e.src == b)
        .map(|e| &e.condition)
        .collect();
    conds.iter().any(|c| **c == Expr::Bool(true))
        || conds.iter().any(|a| conds.iter().any(|b| negates(a, b)))
}

/// `b` is `not a` (or the complementary comparison).
fn negates(a: &Expr, b: &Expr) -> bool {
    use BinaryOp::*;
    if let Expr::Unary(UnaryOp::Not, inner) = b
        && **inner == *a
    {
        return true;
    }
    match (a, b) {
        (Expr::Binary(x, a1, a2), Expr::Binary(y, b1, b2)) if a1 == b1 && a2 == b2 => matches!(
            (x, y),
            (Lt, Ge) | (Ge, Lt) | (Le, Gt) | (Gt, Le) | (Eq, Ne) | (Ne, Eq)
        ),
        _ => false,
    }
}

/// True if the block is or holds a return.
fn has_return(b: &Block) -> bool {
    fn region(r: &Region) -> bool {
        r.blocks.iter().any(has_return)
    }
    match &b.kind {
        BlockKind::Return => true,
        BlockKind::Region(inner) => region(inner),
        BlockKind::Conditional(brs) => brs.iter().any(|(_, body)| region(body)),
        _ => false,
    }
}

/// In one state: some access node of `name` is written whole, and every
/// other access node of `name` comes after it in the dataflow.
fn state_writes_whole_first(sdfg: &Sdfg, st: &State, name: &str) -> bool {
    let Some(desc) = sdfg.arrays.get(name) else {
        return false;
    };
    let nodes: Vec<NodeId> = (0..st.nodes.len())
        .map(|i| NodeId(i as u32))
        .filter(|&id| matches!(&st.nodes[id.index()].kind, NodeKind::Access(a) if a.data == name))
        .collect();
    nodes.iter().any(|&x| {
        let whole = st.edges.iter().any(|e| {
            if e.dst != x || e.memlet.is_empty() {
                return false;
            }
            if e.memlet.dynamic || e.memlet.wcr.is_some() {
                return false;
            }
            let sub = if e.memlet.data.as_deref() == Some(name) {
                e.memlet.subset.as_ref()
            } else {
                e.memlet.other_subset.as_ref()
            };
            let Some(sub) = sub else { return false };
            let full = sub.len() == desc.shape.len()
                && sub.iter().zip(&desc.shape).all(|(r, n)| {
                    simplify(&r.start) == Expr::Int(0)
                        && simplify(&r.step) == Expr::Int(1)
                        && !r.is_tiled()
                        && simplify(&Expr::bin(BinaryOp::Sub, n.clone(), r.end.clone()))
                            == Expr::Int(1)
                });
            let src = e.src;
            let exact = match &st.nodes[src.index()].kind {
                NodeKind::MapExit { .. } => st
                    .edges
                    .iter()
                    .filter(|x| x.dst == src)
                    .all(|x| !x.memlet.dynamic && x.memlet.wcr.is_none()),
                NodeKind::Tasklet(_) | NodeKind::Access(_) => true,
                _ => false,
            };
            full && exact
        });
        whole && nodes.iter().all(|&y| y == x || reachable(st, x, y))
    })
}

/// True if `to` is reachable from `from` along the state's edges.
fn reachable(st: &State, from: NodeId, to: NodeId) -> bool {
    let mut stack = vec![from];
    let mut seen = BTreeSet::new();
    while let Some(n) = stack.pop() {
        if n == to {
            return true;
        }
        if seen.insert(n) {
            stack.extend(st.edges.iter().filter(|e| e.src == n).map(|e| e.dst));
        }
    }
    false
}

/// Renames containers in the interstate code of a region (not inside nested SDFGs).
fn rename_interstate(r: &mut Region, to: &BTreeMap<String, String>) {
    for e in &mut r.edges {
        rename_expr(&mut e.condition, to);
        e.assignments
            .iter_mut()
            .for_each(|(_, v)| rename_expr(v, to));
    }
    if let RegionKind::Loop(l) = &mut r.kind {
        rename_expr(&mut l.condition, to);
        for s in l.init.iter_mut().chain(l.update.iter_mut()) {
            rename_stmt(s, to);
        }
    }
    for b in &mut r.blocks {
        match &mut b.kind {
            BlockKind::Region(inner) => rename_interstate(inner, to),
            BlockKind::Conditional(brs) => {
                for (c, body) in brs {
                    if let Some(c) = c {
                        rename_expr(c, to);
                    }
                    rename_interstate(body, to);
                }
            }
            BlockKind::State(st) => {
                for n in st.nodes.iter_mut().filter(|n| n.scope.is_none()) {
                    if let NodeKind::Nested(ns) = &mut n.kind {
                        ns.symbol_mapping
                            .values_mut()
                            .for_each(|v| rename_expr(v, to));
                    }
                }
            }
            _ => {}
        }
    }
}

fn rename_stmt(s: &mut Stmt, to: &BTreeMap<String, String>) {
    if let Stmt::Assign { value, .. } = s {
        rename_expr(value, to);
    } else if let Stmt::Expr(e) = s {
        rename_expr(e, to);
    }
}

/// Renames names (plain and indexed) in an expression.
pub(super) fn rename_expr(e: &mut Expr, to: &BTreeMap<String, String>) {
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) => {}
        Expr::Sym(s) => {
            if let Some(t) = to.get(s.as_str()) {
                *s = t.clone();
            }
        }
        Expr::Unary(_, a) => rename_expr(a, to),
        Expr::Binary(_, a, b) => {
            rename_expr(a, to);
            rename_expr(b, to);
        }
        Expr::Call(_, args) => args.iter_mut().for_each(|a| rename_expr(a, to)),
        Expr::Ternary(c, a, b) => {
            rename_expr(c, to);
            rename_expr(a, to);
            rename_expr(b, to);
        }
        Expr::Index(n, idx) => {
            if let Some(t) = to.get(n.as_str()) {
                *n = t.clone();
            }
            idx.iter_mut().for_each(|a| rename_expr(a, to));
        }
        Expr::Field(a, _) => rename_expr(a, to),
        Expr::Record(_, fields) => fields.iter_mut().for_each(|(_, a)| rename_expr(a, to)),
    }
}
