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
//!
//! A container whose every use lies in one state and whose first use there
//! is a full, unconditional write (not a read) is dead between visits of
//! that state, so no loop around the state extends it, whatever control
//! flow (branches, nested regions) lies between the loop and the state.
//!
//! A container viewed by a view node is live wherever the view is.
//!
//! With several GPU streams, two kernels of one state may run at the same
//! time unless the dataflow orders them. Positions then follow
//! happens-before: a container used in a state is live from the first node
//! that does not happen before all its uses there to the last node that
//! does not happen after all of them, so any container whose range is
//! disjoint from it is used strictly before or strictly after it in every
//! execution.

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

/// A map where a container may take the bytes of another one (see [`crate::passes::inplace`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InPlace {
    /// Position of the map.
    pub at: u32,
    /// SDFG id of both containers.
    pub sdfg: u32,
    /// The container read for the last time at `at`.
    pub read: String,
    /// The container first (and fully) written at `at`.
    pub written: String,
}

/// Live ranges and in-place candidates of an SDFG tree.
#[derive(Clone, Debug, Default)]
pub struct Liveness {
    /// Live range of every container, keyed by (SDFG id, name).
    pub ranges: LiveRanges,
    /// In-place pairs whose live ranges touch exactly at their map.
    pub in_place: Vec<InPlace>,
}

impl Liveness {
    /// True if `a` and `b` (of one SDFG) may share bytes although their
    /// ranges touch: one is read for the last time where the other is first
    /// written, element by element, by an in-place map.
    pub fn in_place_pair(&self, sdfg_a: u32, a: &str, sdfg_b: u32, b: &str) -> bool {
        sdfg_a == sdfg_b
            && self.in_place.iter().any(|ip| {
                ip.sdfg == sdfg_a
                    && ((ip.read == a && ip.written == b) || (ip.read == b && ip.written == a))
            })
    }
}

/// Computes live ranges for the top-level SDFG and everything nested in it.
/// `concurrent_kernels`: kernels of one state may run at the same time
/// (GPU with several streams).
pub fn live_ranges(sdfg: &Sdfg, concurrent_kernels: bool) -> Liveness {
    let mut w = Walker {
        concurrent: concurrent_kernels,
        ..Walker::default()
    };
    w.region(sdfg, &sdfg.body);
    let loops = std::mem::take(&mut w.loops);
    let mut ranges = std::mem::take(&mut w.ranges);
    let contains =
        |outer: &Live, inner: &Live| inner.start >= outer.start && inner.end <= outer.end;
    // Containers used in one state only, fully written there before any read.
    let state_local: BTreeSet<(u32, String)> = ranges
        .iter()
        .filter(|(key, live)| {
            w.states.iter().any(|s| contains(s, live))
                && w.uses
                    .get(*key)
                    .and_then(|u| u.range(live.start..=live.end).next())
                    .is_some_and(|(_, u)| u.kill && !u.read)
        })
        .map(|(key, _)| key.clone())
        .filter(|key| !w.views.iter().any(|(viewed, _)| viewed == key))
        .collect();
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
        // A viewed container is live wherever a view of it is.
        for (viewed, view) in &w.views {
            let Some(v) = ranges.get(view).copied() else {
                continue;
            };
            if let Some(x) = ranges.get_mut(viewed)
                && (v.start < x.start || v.end > x.end)
            {
                x.cover(v.start);
                x.cover(v.end);
                changed = true;
            }
        }
        for (key, live) in ranges.iter_mut() {
            if state_local.contains(key) {
                continue;
            }
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
    // In-place pairs whose ranges touch exactly at their map.
    let in_place = std::mem::take(&mut w.in_place)
        .into_iter()
        .filter(|ip| {
            let r = ranges.get(&(ip.sdfg, ip.read.clone()));
            let x = ranges.get(&(ip.sdfg, ip.written.clone()));
            matches!((r, x), (Some(r), Some(x)) if r.end == ip.at && x.start == ip.at && r.start < ip.at)
        })
        .collect();
    Liveness { ranges, in_place }
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
    /// Span of every state.
    states: Vec<Live>,
    /// In-place candidates found so far.
    in_place: Vec<InPlace>,
    /// Kernels of one state may run concurrently.
    concurrent: bool,
    /// Positions where each container is used in the state being walked.
    touched: BTreeMap<(u32, String), BTreeSet<u32>>,
    /// (viewed container, view) for every view node next to an access node.
    views: BTreeSet<((u32, String), (u32, String))>,
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
        self.touched
            .entry((sdfg, name.to_string()))
            .or_default()
            .insert(p);
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
        let first = self.next;
        let mut tops = Vec::new();
        for id in &order {
            let n = &st.nodes[id.index()];
            if n.scope.is_none() && !matches!(n.kind, NodeKind::MapExit { .. }) {
                pos[id.index()] = self.next;
                tops.push(*id);
                self.next += 1;
            }
        }
        self.states.push(Live {
            start: first,
            end: self.next.saturating_sub(1).max(first),
        });
        self.touched.clear();
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
            if let (NodeKind::Access(a), NodeKind::Access(b)) =
                (&st.nodes[e.src.index()].kind, &st.nodes[e.dst.index()].kind)
            {
                let is_view =
                    |n: &str| sdfg.arrays.get(n).is_some_and(|d| d.kind == DataKind::View);
                for (view, viewed) in [(&a.data, &b.data), (&b.data, &a.data)] {
                    if is_view(view) && view != viewed {
                        self.views
                            .insert(((sdfg.id, viewed.clone()), (sdfg.id, view.clone())));
                    }
                }
            }
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
        for c in crate::passes::inplace::candidates(sdfg, st) {
            self.in_place.push(InPlace {
                at: pos[c.map.index()],
                sdfg: sdfg.id,
                read: c.read,
                written: c.written,
            });
        }
        if self.concurrent && tops.len() > 1 {
            self.happens_before(st, &tops, &pos, &top);
        }
    }

    /// Widens the ranges of the containers used in this state so that they
    /// follow happens-before (reachability in the dataflow) instead of the
    /// emission order: see the module documentation.
    fn happens_before(
        &mut self,
        st: &State,
        tops: &[NodeId],
        pos: &[u32],
        top: &dyn Fn(NodeId) -> NodeId,
    ) {
        // Successors among top-level nodes, by position.
        let base = pos[tops[0].index()];
        let n = tops.len();
        let mut succ = vec![BTreeSet::new(); n];
        for e in &st.edges {
            let (a, b) = (pos[top(e.src).index()], pos[top(e.dst).index()]);
            if a < b {
                succ[(a - base) as usize].insert((b - base) as usize);
            }
        }
        // reach[i][j]: j is reachable from i (strictly after it).
        let mut reach = vec![vec![false; n]; n];
        for i in (0..n).rev() {
            let next: Vec<usize> = succ[i].iter().copied().collect();
            for j in next {
                let after_j = reach[j].clone();
                reach[i][j] = true;
                for (r, a) in reach[i].iter_mut().zip(after_j) {
                    *r |= a;
                }
            }
        }
        let touched = std::mem::take(&mut self.touched);
        for ((sdfg, name), at) in touched {
            let uses: Vec<usize> = at
                .iter()
                .filter(|&&p| p >= base && ((p - base) as usize) < n)
                .map(|&p| (p - base) as usize)
                .collect();
            if uses.is_empty() {
                continue;
            }
            let before_all = |i: usize| uses.iter().all(|&u| reach[i][u]);
            let after_all = |i: usize| uses.iter().all(|&u| reach[u][i]);
            let first = (0..n).find(|&i| !before_all(i));
            let last = (0..n).rev().find(|&i| !after_all(i));
            for p in first.into_iter().chain(last) {
                self.use_at(sdfg, &name, base + p as u32);
            }
        }
        self.touched.clear();
    }
}

/// True if the memlet (written into `data`) overwrites all of it, unconditionally.
pub(crate) fn full_write(sdfg: &Sdfg, data: &str, m: &Memlet) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn load(rel: &str) -> Sdfg {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
        crate::front::load_file(&p).unwrap()
    }

    /// Applies `f` to every edge of every state in the tree (top level only).
    fn edit_edges(r: &mut Region, f: &mut dyn FnMut(&State, &mut DataEdge)) {
        for b in r.blocks.iter_mut() {
            match &mut b.kind {
                BlockKind::State(st) => {
                    let snapshot = st.clone();
                    st.edges.iter_mut().for_each(|e| f(&snapshot, e));
                }
                BlockKind::Region(inner) => edit_edges(inner, f),
                BlockKind::Conditional(brs) => brs.iter_mut().for_each(|(_, b)| edit_edges(b, f)),
                _ => {}
            }
        }
    }

    fn range(l: &Liveness, name: &str) -> Live {
        l.ranges[&(0, name.to_string())]
    }

    #[test]
    fn state_local_kill_is_not_extended_over_the_loop() {
        // __tmp0 is written and read in one state inside a branch of a loop.
        let sdfg = load("fixtures/corpus/control_flow_regions/program.sdfg");
        let l = live_ranges(&sdfg, false);
        let (t0, t3) = (range(&l, "__tmp0"), range(&l, "__tmp3"));
        assert!(!t0.overlaps(&t3), "{t0:?} {t3:?}");
    }

    #[test]
    fn conditional_write_in_a_loop_keeps_the_whole_loop() {
        // The same program, but the write of __tmp0 may skip elements: its
        // value may flow from one iteration to the next.
        let mut sdfg = load("fixtures/corpus/control_flow_regions/program.sdfg");
        edit_edges(&mut sdfg.body, &mut |st, e| {
            if e.memlet.data.as_deref() == Some("__tmp0")
                && matches!(st.nodes[e.dst.index()].kind, NodeKind::Access(_))
            {
                e.memlet.dynamic = true;
            }
        });
        let l = live_ranges(&sdfg, false);
        let (t0, t3) = (range(&l, "__tmp0"), range(&l, "__tmp3"));
        assert!(t0.overlaps(&t3), "{t0:?} {t3:?}");
    }

    #[test]
    fn in_place_pairs_touch_at_their_map() {
        let sdfg = load("fixtures/corpus/seed_external_2d/program.sdfg");
        let l = live_ranges(&sdfg, false);
        assert!(l.in_place_pair(0, "t0", 0, "t1"));
        assert!(l.in_place_pair(0, "t1", 0, "t2"));
        assert!(!l.in_place_pair(0, "t0", 0, "t2"));
        for ip in &l.in_place {
            assert_eq!(range(&l, &ip.read).end, ip.at);
            assert_eq!(range(&l, &ip.written).start, ip.at);
        }
    }

    #[test]
    fn in_place_pair_is_dropped_when_the_read_container_lives_on() {
        // map_e also reads t1: t1 is not dead after map_t2, so t2 must not take its bytes.
        let mut sdfg = load("fixtures/corpus/seed_external_2d/program.sdfg");
        edit_edges(&mut sdfg.body, &mut |st, e| {
            let reads = !matches!(st.nodes[e.dst.index()].kind, NodeKind::Access(_))
                && !matches!(st.nodes[e.src.index()].kind, NodeKind::Tasklet(_));
            if e.memlet.data.as_deref() == Some("t2") && reads {
                e.memlet.data = Some("t1".into());
            }
        });
        let l = live_ranges(&sdfg, false);
        assert!(range(&l, "t1").end > range(&l, "t2").start);
        assert!(l.in_place_pair(0, "t0", 0, "t1"));
        assert!(!l.in_place_pair(0, "t1", 0, "t2"));
    }

    #[test]
    fn viewed_container_lives_as_long_as_its_view() {
        // Make t1 a view of t0: t0 must stay live while map_t2 reads t1.
        let mut sdfg = load("fixtures/corpus/seed_external_2d/program.sdfg");
        sdfg.arrays.get_mut("t1").unwrap().kind = DataKind::View;
        let before = live_ranges(&sdfg, false);
        let BlockKind::State(st) = &mut sdfg.body.blocks[0].kind else {
            panic!("state expected")
        };
        let find = |st: &State, d: &str| {
            st.nodes
                .iter()
                .position(|n| matches!(&n.kind, NodeKind::Access(a) if a.data == d))
                .unwrap()
        };
        let (t0, t1) = (find(st, "t0"), find(st, "t1"));
        st.edges.push(DataEdge {
            src: NodeId(t0 as u32),
            src_conn: None,
            dst: NodeId(t1 as u32),
            dst_conn: Some("views".into()),
            memlet: Memlet {
                data: Some("t0".into()),
                subset: None,
                other_subset: None,
                wcr: None,
                dynamic: false,
                volume: Expr::Int(24),
                is_data_src: None,
            },
            path: String::new(),
        });
        assert!(range(&before, "t0").end < range(&before, "t1").end);
        let after = live_ranges(&sdfg, false);
        assert!(range(&after, "t0").end >= range(&after, "t1").end);
    }

    #[test]
    fn concurrent_kernels_follow_happens_before() {
        // Cut the chain between map_t1 and map_t2: the two halves may run at
        // the same time on different streams.
        let mut sdfg = load("fixtures/corpus/seed_external_2d/program.sdfg");
        let mut cut = false;
        if let BlockKind::State(st) = &mut sdfg.body.blocks[0].kind {
            let is_t1_read = |st: &State, e: &DataEdge| {
                e.memlet.data.as_deref() == Some("t1")
                    && !matches!(
                        st.nodes[e.dst.index()].kind,
                        NodeKind::Access(_) | NodeKind::MapExit { .. }
                    )
            };
            let before = st.edges.len();
            let snapshot = st.clone();
            st.edges.retain(|e| !is_t1_read(&snapshot, e));
            cut = st.edges.len() < before;
        }
        assert!(cut);
        let seq = live_ranges(&sdfg, false);
        assert!(!range(&seq, "t0").overlaps(&range(&seq, "t2")));
        let par = live_ranges(&sdfg, true);
        assert!(range(&par, "t0").overlaps(&range(&par, "t2")));
    }
}
