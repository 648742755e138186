//! Live ranges of data containers in program order.
//!
//! Every top-level dataflow node of every state (a map scope, a tasklet, an
//! access node, a nested SDFG call, a library node) gets a position, in the
//! order the writers emit them: blocks of a region in reverse postorder,
//! nested regions and branches inline, nodes of a state in topological
//! order. A container is live from its first to its last use. A container
//! used inside a loop (a `LoopRegion` or the natural loop of a back edge of a
//! state machine) is live for the whole loop, because its value may be
//! carried from one iteration to the next, unless every iteration overwrites
//! it completely before reading it: its first use in the loop is a full,
//! unconditional write (no write-conflict resolution, not dynamic, the
//! subset covers the whole shape) in a state that dominates every other block
//! of the loop that uses it, and it is not used outside the loop. Two
//! containers whose ranges are disjoint are never live at the same time in
//! any execution, because every path visits positions in increasing order
//! outside loops. A nested SDFG call is one position for everything inside it.

use std::collections::{BTreeMap, BTreeSet};

use petgraph::algo::dominators;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::ir::simplify::simplify;
use crate::ir::*;

/// A closed interval of positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Live {
    /// First position.
    pub start: u32,
    /// Last position (inclusive).
    pub end: u32,
}

impl Live {
    /// True if the two ranges share a position.
    pub fn overlaps(&self, other: &Live) -> bool {
        self.start <= other.end && other.start <= self.end
    }

    fn cover(&mut self, p: u32) {
        self.start = self.start.min(p);
        self.end = self.end.max(p);
    }
}

/// Live ranges of every container of the SDFG tree, keyed by (SDFG id, name).
pub type LiveRanges = BTreeMap<(u32, String), Live>;

/// Computes live ranges for the top-level SDFG and everything nested in it.
pub fn live_ranges(sdfg: &Sdfg) -> LiveRanges {
    let mut w = Walker::default();
    w.region(sdfg, &sdfg.body);
    let loops = std::mem::take(&mut w.loops);
    let mut ranges = w.ranges;
    let contains =
        |outer: &Live, inner: &Live| inner.start >= outer.start && inner.end <= outer.end;
    // Loops whose every iteration kills the container before reading it: the
    // container is dead at their entry and exit, so no loop around them carries it either.
    let killed: std::collections::BTreeMap<(u32, String), Vec<Live>> = ranges
        .iter()
        .map(|(key, live)| {
            let spans = loops
                .iter()
                .filter(|l| {
                    contains(&l.span, live) && l.killed_each_iteration(w.uses.get(key), *live)
                })
                .map(|l| l.span)
                .collect();
            (key.clone(), spans)
        })
        .collect();
    // Extend ranges over loops until nothing changes (extending may reach outer loops).
    let mut changed = true;
    while changed {
        changed = false;
        for (key, live) in ranges.iter_mut() {
            for l in &loops {
                let covers = live.start <= l.span.start && live.end >= l.span.end;
                if !live.overlaps(&l.span) || covers {
                    continue;
                }
                let dead_around = killed[key]
                    .iter()
                    .any(|k| contains(k, live) && contains(&l.span, k));
                if dead_around {
                    continue;
                }
                live.cover(l.span.start);
                live.cover(l.span.end);
                changed = true;
            }
        }
    }
    ranges
}

/// How a container is used at one position.
#[derive(Clone, Copy, Debug, Default)]
struct Use {
    /// Read (or read-modify-written) here.
    read: bool,
    /// Completely and unconditionally overwritten here.
    kill: bool,
}

/// A loop: its span and the blocks of the region that holds it, for dominance.
#[derive(Debug)]
struct Loop {
    span: Live,
    /// Spans of the loop's blocks (in the region whose graph has the loop).
    blocks: Vec<(BlockId, Live, bool)>,
    /// Loop entry (body start or header).
    entry: BlockId,
    /// Edges among the loop's blocks (back edges to the entry removed).
    edges: Vec<(BlockId, BlockId)>,
}

impl Loop {
    fn block_at(&self, p: u32) -> Option<(BlockId, bool)> {
        self.blocks
            .iter()
            .find(|(_, l, _)| l.start <= p && p <= l.end)
            .map(|(b, _, is_state)| (*b, *is_state))
    }

    /// True if every iteration fully overwrites the container before any read.
    fn killed_each_iteration(&self, uses: Option<&BTreeMap<u32, Use>>, live: Live) -> bool {
        let Some(uses) = uses else { return false };
        let Some((&first, u)) = uses.range(live.start..=live.end).next() else {
            return false;
        };
        if !u.kill || u.read {
            return false;
        }
        let Some((kill_block, true)) = self.block_at(first) else {
            return false;
        };
        // The kill's block must dominate every block of the loop that uses the container.
        let ids: BTreeMap<BlockId, NodeIndex> = self
            .blocks
            .iter()
            .enumerate()
            .map(|(i, (b, _, _))| (*b, NodeIndex::new(i)))
            .collect();
        let mut g: DiGraph<(), ()> = DiGraph::new();
        for _ in &self.blocks {
            g.add_node(());
        }
        for (a, b) in &self.edges {
            if let (Some(&x), Some(&y)) = (ids.get(a), ids.get(b))
                && *b != self.entry
            {
                g.add_edge(x, y, ());
            }
        }
        let Some(&root) = ids.get(&self.entry) else {
            return false;
        };
        let dom = dominators::simple_fast(&g, root);
        let kill = ids[&kill_block];
        uses.range(live.start..=live.end)
            .all(|(&p, _)| match self.block_at(p) {
                Some((b, _)) => {
                    let n = ids[&b];
                    n == kill || dom.dominators(n).is_some_and(|mut d| d.any(|x| x == kill))
                }
                None => false,
            })
    }
}

#[derive(Default)]
struct Walker {
    next: u32,
    ranges: LiveRanges,
    uses: BTreeMap<(u32, String), BTreeMap<u32, Use>>,
    loops: Vec<Loop>,
}

impl Walker {
    fn mark(&mut self, sdfg: u32, name: &str, p: u32, read: bool, kill: bool) {
        self.use_at(sdfg, name, p);
        let u = self
            .uses
            .entry((sdfg, name.to_string()))
            .or_default()
            .entry(p)
            .or_default();
        u.read |= read;
        u.kill |= kill;
    }

    fn use_at(&mut self, sdfg: u32, name: &str, p: u32) {
        self.ranges
            .entry((sdfg, name.to_string()))
            .and_modify(|l| l.cover(p))
            .or_insert(Live { start: p, end: p });
    }

    /// Marks every container of a nested SDFG (recursively) as used at `p`.
    fn whole_sdfg_at(&mut self, sdfg: &Sdfg, p: u32) {
        for (name, d) in &sdfg.arrays {
            // A nested SDFG's transients are fresh in every call.
            self.mark(sdfg.id, name, p, !d.transient, d.transient);
        }
        let mut nested = Vec::new();
        collect_nested(&sdfg.body, &mut nested);
        for n in nested {
            self.whole_sdfg_at(n, p);
        }
    }

    fn region(&mut self, sdfg: &Sdfg, r: &Region) {
        let begin = self.next;
        let Some(start) = r.start else { return };
        let order = r.program_order(start);
        let mut span: BTreeMap<BlockId, Live> = BTreeMap::new();
        for b in &order {
            let first = self.next;
            self.block(sdfg, &r.blocks[b.index()]);
            let last = self.next.saturating_sub(1).max(first);
            // Interstate edges out of the block read containers at its end.
            for e in r.edges.iter().filter(|e| e.src == *b) {
                let mut names = BTreeSet::new();
                e.condition.visit_names(&mut |n| {
                    names.insert(n.to_string());
                });
                for (_, v) in &e.assignments {
                    v.visit_names(&mut |n| {
                        names.insert(n.to_string());
                    });
                }
                for n in names.iter().filter(|n| sdfg.arrays.contains_key(*n)) {
                    self.mark(sdfg.id, n, last, true, false);
                }
            }
            span.insert(
                *b,
                Live {
                    start: first,
                    end: last,
                },
            );
            if self.next == first {
                self.next += 1;
            }
        }
        let is_state = |b: &BlockId| matches!(r.blocks[b.index()].kind, BlockKind::State(_));
        // Back edges of a state machine: natural loops.
        let rank: BTreeMap<BlockId, usize> =
            order.iter().enumerate().map(|(i, b)| (*b, i)).collect();
        for e in &r.edges {
            let (Some(&rs), Some(&rd)) = (rank.get(&e.src), rank.get(&e.dst)) else {
                continue;
            };
            if rd > rs {
                continue;
            }
            let body = r.natural_loop(e.dst, e.src);
            let mut l = span[&e.dst];
            for b in &body {
                if let Some(s) = span.get(b) {
                    l.cover(s.start);
                    l.cover(s.end);
                }
            }
            self.loops.push(Loop {
                span: l,
                blocks: body
                    .iter()
                    .filter_map(|b| span.get(b).map(|s| (*b, *s, is_state(b))))
                    .collect(),
                entry: e.dst,
                edges: r
                    .edges
                    .iter()
                    .filter(|x| body.contains(&x.src) && body.contains(&x.dst))
                    .map(|x| (x.src, x.dst))
                    .collect(),
            });
        }
        if let RegionKind::Loop(_) = r.kind {
            self.loops.push(Loop {
                span: Live {
                    start: begin,
                    end: self.next.saturating_sub(1).max(begin),
                },
                blocks: order
                    .iter()
                    .filter_map(|b| span.get(b).map(|s| (*b, *s, is_state(b))))
                    .collect(),
                entry: start,
                edges: r.edges.iter().map(|x| (x.src, x.dst)).collect(),
            });
        }
    }

    fn block(&mut self, sdfg: &Sdfg, b: &Block) {
        match &b.kind {
            BlockKind::State(st) => self.state(sdfg, st),
            BlockKind::Region(r) => self.region(sdfg, r),
            BlockKind::Conditional(brs) => {
                for (_, body) in brs {
                    self.region(sdfg, body);
                }
            }
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }

    fn state(&mut self, sdfg: &Sdfg, st: &State) {
        // Position of each top-level node, in a topological order.
        let order = st.topological_order().unwrap_or_default();
        let mut pos = vec![0u32; st.nodes.len()];
        for id in &order {
            let n = &st.nodes[id.index()];
            if n.scope.is_none() && !matches!(n.kind, NodeKind::MapExit { .. }) {
                pos[id.index()] = self.next;
                self.next += 1;
            }
        }
        // Everything inside a scope (and a map exit) takes its top-level ancestor's position.
        let top = |mut id: NodeId| {
            let mut guard = 0;
            loop {
                let n = &st.nodes[id.index()];
                let parent = match &n.kind {
                    NodeKind::MapExit { entry } => Some(*entry),
                    _ => n.scope,
                };
                match parent {
                    Some(p) if guard <= st.nodes.len() => {
                        id = p;
                        guard += 1;
                    }
                    _ => return id,
                }
            }
        };
        for (i, n) in st.nodes.iter().enumerate() {
            let here = pos[top(NodeId(i as u32)).index()];
            match &n.kind {
                NodeKind::Access(a) => self.use_at(sdfg.id, &a.data, here),
                NodeKind::Nested(ns) => self.whole_sdfg_at(&ns.sdfg, here),
                _ => {}
            }
        }
        // An access node is also live where its neighbours run: read where
        // its out-edges lead, written where its in-edges come from.
        for e in &st.edges {
            if let NodeKind::Access(acc) = &st.nodes[e.src.index()].kind {
                let p = pos[top(e.dst).index()];
                self.mark(sdfg.id, &acc.data, p, !e.memlet.is_empty(), false);
            }
            if let NodeKind::Access(acc) = &st.nodes[e.dst.index()].kind {
                let p = pos[top(e.src).index()];
                let kill = full_write(sdfg, &acc.data, &e.memlet);
                let read = e.memlet.wcr.is_some();
                self.mark(sdfg.id, &acc.data, p, read, kill);
            }
            if let Some(d) = &e.memlet.data {
                let p = pos[top(e.src).index()];
                self.use_at(sdfg.id, d, p);
            }
        }
    }
}

/// True if the memlet (written into `data`) overwrites all of it, unconditionally.
fn full_write(sdfg: &Sdfg, data: &str, m: &Memlet) -> bool {
    let Some(d) = sdfg.arrays.get(data) else {
        return false;
    };
    if m.wcr.is_some() || m.dynamic || m.data.as_deref() != Some(data) {
        return false;
    }
    match &m.subset {
        None => true,
        Some(sub) => {
            sub.len() == d.rank()
                && sub.iter().zip(&d.shape).all(|(r, n)| {
                    simplify(&r.start) == Expr::Int(0)
                        && simplify(&r.step) == Expr::Int(1)
                        && simplify(&Expr::bin(
                            BinaryOp::Sub,
                            Expr::bin(BinaryOp::Add, r.end.clone(), Expr::Int(1)),
                            n.clone(),
                        )) == Expr::Int(0)
                })
        }
    }
}

fn collect_nested<'a>(r: &'a Region, out: &mut Vec<&'a Sdfg>) {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => {
                for n in &st.nodes {
                    if let NodeKind::Nested(ns) = &n.kind {
                        out.push(&ns.sdfg);
                    }
                }
            }
            BlockKind::Region(inner) => collect_nested(inner, out),
            BlockKind::Conditional(brs) => {
                brs.iter().for_each(|(_, body)| collect_nested(body, out))
            }
            _ => {}
        }
    }
}
