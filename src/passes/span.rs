//! Where a transient lives whose size depends on a symbol that the program
//! itself assigns (an interstate edge assignment, a loop variable) and that
//! is used in more than one block.
//!
//! Such a transient cannot be allocated at function entry (the symbol has no
//! value there), at init or in the workspace. DaCe 1.0.2
//! (`determine_allocation_lifetime`) declares it at SDFG scope, allocates it
//! at the start of the first state that uses it and frees it at the end of
//! the last one (the common dominator and post-dominator when some use is not
//! reachable from the first). sdfgc does the same, on the blocks of the
//! innermost region that holds every use: it allocates at the start of the
//! block `first` that dominates every use and frees at the end of the block
//! `last` that post-dominates them, and checks that this is sound, so that
//! every visit of `first` is followed by exactly one visit of `last` before
//! the next visit of `first` and before the region is left, that no use runs
//! outside such a pair, and that no symbol of the size is assigned between
//! the two. A program that fails these checks is refused by name.

use std::collections::{BTreeSet, HashMap};

use petgraph::algo::dominators::{self, Dominators};
use petgraph::graph::{DiGraph, NodeIndex};

use crate::ir::*;

/// The blocks (JSON pointers) at whose start a transient is allocated and at
/// whose end (or start) it is freed; both are blocks of one region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSpan {
    /// Allocated at the start of this block, every time it runs.
    pub first: String,
    /// Freed at the end of this block, every time it runs.
    pub last: String,
    /// Freed on entering `last` instead: `last` itself does not use the
    /// transient, only the interstate edges into it read it.
    pub free_on_entry: bool,
}

/// Every symbol a region tree assigns: interstate edge assignments, loop
/// variables and the names loop init/update statements assign.
pub fn assigned_symbols(r: &Region, out: &mut BTreeSet<String>) {
    if let RegionKind::Loop(l) = &r.kind {
        if let Some(v) = &l.variable {
            out.insert(v.clone());
        }
        for s in l.init.iter().chain(&l.update) {
            if let Stmt::Assign {
                target: Target::Name(n),
                ..
            } = s
            {
                out.insert(n.clone());
            }
        }
    }
    for e in &r.edges {
        for (k, _) in &e.assignments {
            out.insert(k.clone());
        }
    }
    for b in &r.blocks {
        match &b.kind {
            BlockKind::Region(inner) => assigned_symbols(inner, out),
            BlockKind::Conditional(brs) => {
                brs.iter().for_each(|(_, body)| assigned_symbols(body, out))
            }
            _ => {}
        }
    }
}

/// For every block of an SDFG body (by JSON pointer), the regions and blocks
/// that lead to it from the body: `(region, block in that region)`, outermost first.
pub struct BlockChains<'a> {
    chains: HashMap<&'a str, Vec<(&'a Region, BlockId)>>,
}

impl<'a> BlockChains<'a> {
    /// Indexes every block of `body`.
    pub fn new(body: &'a Region) -> BlockChains<'a> {
        let mut chains = HashMap::new();
        let mut stack = Vec::new();
        index(body, &mut stack, &mut chains);
        BlockChains { chains }
    }
}

fn index<'a>(
    r: &'a Region,
    stack: &mut Vec<(&'a Region, BlockId)>,
    out: &mut HashMap<&'a str, Vec<(&'a Region, BlockId)>>,
) {
    for (i, b) in r.blocks.iter().enumerate() {
        stack.push((r, BlockId(i as u32)));
        out.insert(b.path.as_str(), stack.clone());
        match &b.kind {
            BlockKind::Region(inner) => index(inner, stack, out),
            BlockKind::Conditional(brs) => brs.iter().for_each(|(_, body)| index(body, stack, out)),
            _ => {}
        }
        stack.pop();
    }
}

/// The span of a transient `name` used in the blocks `sites` (JSON pointers
/// of states or other blocks) and read by the interstate edges into the
/// blocks `entered`, whose size depends on `size_syms`; `Err` says why no
/// sound span exists.
pub fn block_span(
    chains: &BlockChains,
    name: &str,
    sites: &[&str],
    entered: &[&str],
    size_syms: &BTreeSet<String>,
) -> std::result::Result<BlockSpan, String> {
    let paths: Vec<&Vec<(&Region, BlockId)>> = sites
        .iter()
        .chain(entered)
        .map(|s| {
            chains
                .chains
                .get(s)
                .ok_or_else(|| format!("block '{s}' is not in the SDFG"))
        })
        .collect::<std::result::Result<_, _>>()?;
    let Some(first) = paths.first() else {
        return Err("it is never used".to_string());
    };
    // The innermost region that holds every use.
    let mut depth = 0;
    while paths.iter().all(|c| {
        c.len() > depth + 1
            && std::ptr::eq(c[depth + 1].0, first[depth + 1].0)
            && c[depth].1 == first[depth].1
    }) {
        depth += 1;
    }
    let r: &Region = first[depth].0;
    let uses: BTreeSet<BlockId> = paths.iter().map(|c| c[depth].1).collect();
    let g = RegionGraph::new(r);
    let x = g.common_dominator(&uses)?;
    let y = g.common_post_dominator(&uses)?;
    // A last block that only edges into it use: freed before it runs, after
    // those edges have read it (and may have assigned a size symbol).
    let free_on_entry = x != y && !paths[..sites.len()].iter().any(|c| c[depth].1 == y);
    let label = |b: BlockId| format!("'{}'", r.blocks[b.index()].label);
    let jump = |b: BlockId| {
        matches!(
            r.blocks[b.index()].kind,
            BlockKind::Break | BlockKind::Continue | BlockKind::Return
        )
    };
    if jump(x) || jump(y) {
        return Err(format!(
            "its uses are bounded by a break, continue or return block ({} .. {})",
            label(x),
            label(y)
        ));
    }
    if !g.dominates(x, y) || !g.post_dominates(y, x) {
        return Err(format!(
            "no block that dominates its uses ({}) is always followed by one that post-dominates them ({})",
            label(x),
            label(y)
        ));
    }
    let mut span: BTreeSet<BlockId> = BTreeSet::from([x, y]);
    if x != y {
        let from_x = g.reach_avoiding(x, y);
        if from_x.contains(&x) {
            return Err(format!(
                "{} can run again before {} (a loop inside its uses would allocate it twice)",
                label(x),
                label(y)
            ));
        }
        let from_y = g.reach_avoiding(y, x);
        if from_y.contains(&y) || uses.iter().any(|u| from_y.contains(u)) {
            return Err(format!(
                "it is used again after {} without passing {}",
                label(y),
                label(x)
            ));
        }
        span.extend(from_x);
    }
    // No size symbol changes and nothing jumps out between allocation and free.
    for &b in &span {
        if b != y {
            for e in r.edges.iter().filter(|e| e.src == b) {
                if free_on_entry && e.dst == y {
                    // Assignments run in order: none after a size symbol's reads it.
                    let first = e
                        .assignments
                        .iter()
                        .position(|(k, _)| size_syms.contains(k));
                    let late_read = first.and_then(|i| {
                        e.assignments[i + 1..]
                            .iter()
                            .find(|(_, v)| v.mentions(name))
                            .map(|_| &e.assignments[i].0)
                    });
                    if let Some(k) = late_read {
                        return Err(format!(
                            "the interstate edge after {} reads it after assigning '{k}'",
                            label(b)
                        ));
                    }
                    continue;
                }
                if let Some((k, _)) = e.assignments.iter().find(|(k, _)| size_syms.contains(k)) {
                    return Err(format!(
                        "the interstate edge after {} assigns '{k}' while it is allocated",
                        label(b)
                    ));
                }
            }
        }
        if free_on_entry && b == y {
            continue;
        }
        let block = &r.blocks[b.index()];
        let inner: Vec<&Region> = match &block.kind {
            BlockKind::Region(inner) => vec![inner],
            BlockKind::Conditional(brs) => brs.iter().map(|(_, body)| body).collect(),
            _ => Vec::new(),
        };
        for inner in inner {
            let mut assigned = BTreeSet::new();
            assigned_symbols(inner, &mut assigned);
            if let Some(k) = assigned.intersection(size_syms).next() {
                return Err(format!("{} assigns '{k}' while it is allocated", label(b)));
            }
            if jumps_out(inner) {
                return Err(format!(
                    "{} may break, continue or return while it is allocated",
                    label(b)
                ));
            }
        }
    }
    Ok(BlockSpan {
        first: r.blocks[x.index()].path.clone(),
        last: r.blocks[y.index()].path.clone(),
        free_on_entry,
    })
}

/// True if a region (entered as one block of an outer region) may leave by a
/// return, or by a break or continue that is not inside a loop of its own.
fn jumps_out(r: &Region) -> bool {
    fn walk(r: &Region, in_loop: bool) -> bool {
        let in_loop = in_loop || matches!(r.kind, RegionKind::Loop(_));
        r.blocks.iter().any(|b| match &b.kind {
            BlockKind::Return => true,
            BlockKind::Break | BlockKind::Continue => !in_loop,
            BlockKind::Region(inner) => walk(inner, in_loop),
            BlockKind::Conditional(brs) => brs.iter().any(|(_, body)| walk(body, in_loop)),
            BlockKind::State(_) => false,
        })
    }
    // The region's own break/continue leave it only when it is not a loop.
    walk(r, false)
}

/// Dominators and post-dominators of one region's blocks.
struct RegionGraph {
    succ: Vec<Vec<BlockId>>,
    dom: Dominators<NodeIndex>,
    /// Post-dominators: dominators of the reversed graph from a virtual exit (index n).
    pdom: Dominators<NodeIndex>,
    exit: NodeIndex,
}

impl RegionGraph {
    fn new(r: &Region) -> RegionGraph {
        let n = r.blocks.len();
        let mut succ = vec![Vec::new(); n];
        let mut fwd: DiGraph<(), ()> = DiGraph::new();
        let mut rev: DiGraph<(), ()> = DiGraph::new();
        for _ in 0..n {
            fwd.add_node(());
            rev.add_node(());
        }
        let exit = rev.add_node(());
        for e in &r.edges {
            succ[e.src.index()].push(e.dst);
            fwd.add_edge(
                NodeIndex::new(e.src.index()),
                NodeIndex::new(e.dst.index()),
                (),
            );
            rev.add_edge(
                NodeIndex::new(e.dst.index()),
                NodeIndex::new(e.src.index()),
                (),
            );
        }
        for (b, s) in succ.iter().enumerate() {
            if s.is_empty() {
                rev.add_edge(exit, NodeIndex::new(b), ());
            }
        }
        let start = NodeIndex::new(r.start.map(|s| s.index()).unwrap_or(0));
        RegionGraph {
            succ,
            dom: dominators::simple_fast(&fwd, start),
            pdom: dominators::simple_fast(&rev, exit),
            exit,
        }
    }

    fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        self.dom
            .dominators(NodeIndex::new(b.index()))
            .is_some_and(|mut it| it.any(|d| d.index() == a.index()))
    }

    fn post_dominates(&self, a: BlockId, b: BlockId) -> bool {
        self.pdom
            .dominators(NodeIndex::new(b.index()))
            .is_some_and(|mut it| it.any(|d| d.index() == a.index()))
    }

    /// The nearest block that dominates (`dom`) every block of `set`.
    fn common(
        dom: &Dominators<NodeIndex>,
        set: &BTreeSet<BlockId>,
        what: &str,
    ) -> std::result::Result<NodeIndex, String> {
        let mut acc: Option<Vec<NodeIndex>> = None;
        for b in set {
            let chain: Vec<NodeIndex> = dom
                .dominators(NodeIndex::new(b.index()))
                .ok_or_else(|| format!("one of its uses is not {what}"))?
                .collect();
            acc = Some(match acc {
                None => chain,
                Some(prev) => {
                    // Keep the common suffix of the two chains (root last).
                    let keep: BTreeSet<NodeIndex> = chain.iter().copied().collect();
                    prev.into_iter().filter(|d| keep.contains(d)).collect()
                }
            });
        }
        acc.and_then(|c| c.first().copied())
            .ok_or_else(|| "it is never used".to_string())
    }

    fn common_dominator(&self, set: &BTreeSet<BlockId>) -> std::result::Result<BlockId, String> {
        Self::common(&self.dom, set, "reachable from the region's start")
            .map(|n| BlockId(n.index() as u32))
    }

    fn common_post_dominator(
        &self,
        set: &BTreeSet<BlockId>,
    ) -> std::result::Result<BlockId, String> {
        let n = Self::common(&self.pdom, set, "followed by the region's end")?;
        if n == self.exit {
            return Err("no block follows all of its uses".to_string());
        }
        Ok(BlockId(n.index() as u32))
    }

    /// Blocks reachable from `from` by at least one edge without entering `avoid`.
    fn reach_avoiding(&self, from: BlockId, avoid: BlockId) -> BTreeSet<BlockId> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<BlockId> = self.succ[from.index()].clone();
        while let Some(b) = stack.pop() {
            if b == avoid || !seen.insert(b) {
                continue;
            }
            stack.extend(self.succ[b.index()].iter().copied());
        }
        seen
    }
}
