//! Live ranges of data containers in program order.
//!
//! Every top-level dataflow node of every state (a map scope, a tasklet, an
//! access node, a nested SDFG call, a library node) gets a position, in the
//! order the writers emit them: blocks of a region in program order
//! ([`Region::program_order`]: forward edges go forward, every loop's
//! blocks are contiguous), nested regions and branches inline, nodes of a state in topological
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
//! A container viewed by a view node, or pointed at by a reference (the
//! source of an edge into its `set` connector), is live wherever the view or
//! reference is.
//!
//! With several GPU streams, two kernels of one state may run at the same
//! time unless the dataflow orders them. Positions then follow
//! happens-before: a container used in a state is live from the first node
//! that does not happen before all its uses there to the last node that
//! does not happen after all of them, so any container whose range is
//! disjoint from it is used strictly before or strictly after it in every
//! execution.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap as HashMap;

use petgraph::algo::dominators::{self, Dominators};
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
    /// The states of the top-level SDFG (those in its regions and branches
    /// too) in program order: label and positions. What the workspace
    /// pictures put on their x axis.
    pub states: Vec<(String, Live)>,
    /// The span of every loop (loop regions and the natural loops of back edges).
    pub loops: Vec<Live>,
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
    let index = LoopIndex::new(&loops);
    let state_spans: Vec<(String, Live)> = w
        .state_labels
        .iter()
        .zip(&w.states)
        .map(|(l, s)| (l.to_string(), *s))
        .collect();
    let states = SpanSet::new(std::mem::take(&mut w.states));
    let mut ranges = std::mem::take(&mut w.ranges);
    let contains =
        |outer: &Live, inner: &Live| inner.start >= outer.start && inner.end <= outer.end;
    let mut viewed = vec![false; ranges.len()];
    for &(v, _) in &w.views {
        viewed[v] = true;
    }
    // Containers used in one state only, fully written there before any read.
    let state_local: Vec<bool> = (0..ranges.len())
        .map(|c| {
            let live = ranges[c];
            states.any_contains(&live)
                && !viewed[c]
                && w.uses[c]
                    .range(live.start..=live.end)
                    .next()
                    .is_some_and(|(_, u)| u.kill && !u.read)
        })
        .collect();
    // Loops whose every iteration kills the container before reading it: the
    // container is dead at their entry and exit, so no loop around them carries it either.
    let killed: Vec<Vec<Live>> = (0..ranges.len())
        .map(|c| {
            let live = ranges[c];
            index
                .containing(live.start)
                .filter(|&l| {
                    contains(&loops[l].span, &live)
                        && loops[l].killed_each_iteration(&w.uses[c], live)
                })
                .map(|l| loops[l].span)
                .collect()
        })
        .collect();
    // Extend ranges over loops until nothing changes (extending may reach outer loops).
    let mut changed = true;
    while changed {
        changed = false;
        // A viewed container is live wherever a view of it is.
        for &(viewed, view) in &w.views {
            let (v, x) = (ranges[view], &mut ranges[viewed]);
            if v.start < x.start || v.end > x.end {
                x.cover(v.start);
                x.cover(v.end);
                changed = true;
            }
        }
        for (c, live) in ranges.iter_mut().enumerate() {
            if state_local[c] {
                continue;
            }
            // A loop that overlaps the range without lying inside it holds
            // one of its ends, so only the loops around the two ends matter.
            let mut grown = true;
            while grown {
                grown = false;
                let around: Vec<usize> = index
                    .containing(live.start)
                    .chain(index.containing(live.end))
                    .collect();
                for l in around.into_iter().map(|l| loops[l].span) {
                    let covers = live.start <= l.start && live.end >= l.end;
                    if !live.overlaps(&l) || covers {
                        continue;
                    }
                    let dead_around = killed[c]
                        .iter()
                        .any(|k| contains(k, live) && contains(&l, k));
                    if dead_around {
                        continue;
                    }
                    live.cover(l.start);
                    live.cover(l.end);
                    grown = true;
                    changed = true;
                }
            }
        }
    }
    // In-place pairs whose ranges touch exactly at their map.
    let range_of = |sdfg: u32, name: &str| w.ids.get(&(sdfg, name)).map(|&c| ranges[c]);
    let in_place = std::mem::take(&mut w.in_place)
        .into_iter()
        .filter(|ip| {
            let r = range_of(ip.sdfg, &ip.read);
            let x = range_of(ip.sdfg, &ip.written);
            matches!((r, x), (Some(r), Some(x)) if r.end == ip.at && x.start == ip.at && r.start < ip.at)
        })
        .collect();
    let ranges = w
        .keys
        .iter()
        .zip(ranges)
        .map(|(&(sdfg, name), live)| ((sdfg, name.to_string()), live))
        .collect();
    Liveness {
        ranges,
        in_place,
        states: state_spans,
        loops: loops.iter().map(|l| l.span).collect(),
    }
}

/// Spans (of states) answering "does any of them contain this range?" in
/// logarithmic time, whatever their nesting.
struct SpanSet {
    /// Spans sorted by start.
    spans: Vec<Live>,
    /// `max_end[i]`: the largest end among `spans[..=i]`.
    max_end: Vec<u32>,
}

impl SpanSet {
    fn new(mut spans: Vec<Live>) -> Self {
        spans.sort_by_key(|s| s.start);
        let max_end = spans
            .iter()
            .scan(0, |m, s| {
                *m = (*m).max(s.end);
                Some(*m)
            })
            .collect();
        SpanSet { spans, max_end }
    }

    /// True if some span contains all of `live`.
    fn any_contains(&self, live: &Live) -> bool {
        let n = self.spans.partition_point(|s| s.start <= live.start);
        n > 0 && self.max_end[n - 1] >= live.end
    }
}

/// The loops containing a position. Loop spans normally nest (two loops are
/// disjoint or one holds the other): the loops around a position are then
/// the innermost one and its parents, found by a binary search and a walk
/// up the nesting. Spans that cross each other fall back to a scan.
struct LoopIndex {
    /// Loop indices sorted by (start, longest first).
    by_start: Vec<usize>,
    /// Starts, in `by_start` order.
    starts: Vec<u32>,
    /// Spans, indexed like the loops.
    spans: Vec<Live>,
    /// The smallest loop holding each loop (an index into the loops).
    parent: Vec<Option<usize>>,
    /// Every two spans are nested or disjoint.
    laminar: bool,
}

impl LoopIndex {
    fn new(loops: &[Loop]) -> Self {
        let spans: Vec<Live> = loops.iter().map(|l| l.span).collect();
        let mut by_start: Vec<usize> = (0..loops.len()).collect();
        by_start.sort_by_key(|&i| (spans[i].start, std::cmp::Reverse(spans[i].end), i));
        let mut parent = vec![None; loops.len()];
        let mut laminar = true;
        let mut stack: Vec<usize> = Vec::new();
        for &i in &by_start {
            while stack.last().is_some_and(|&t| spans[t].end < spans[i].start) {
                stack.pop();
            }
            if let Some(&t) = stack.last() {
                laminar &= spans[i].end <= spans[t].end;
                parent[i] = Some(t);
            }
            stack.push(i);
        }
        let starts = by_start.iter().map(|&i| spans[i].start).collect();
        LoopIndex {
            by_start,
            starts,
            spans,
            parent,
            laminar,
        }
    }

    /// Indices of the loops whose span contains position `p`.
    fn containing(&self, p: u32) -> Box<dyn Iterator<Item = usize> + '_> {
        let holds = move |&i: &usize| self.spans[i].start <= p && p <= self.spans[i].end;
        if !self.laminar {
            return Box::new((0..self.spans.len()).filter(holds));
        }
        let n = self.starts.partition_point(|&s| s <= p);
        let last = n.checked_sub(1).map(|k| self.by_start[k]);
        let chain = std::iter::successors(last, |&i| self.parent[i]);
        Box::new(chain.skip_while(move |i| !holds(i)))
    }
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
    /// Spans of the loop's blocks (in the region whose graph has the loop),
    /// sorted by position.
    blocks: Vec<(BlockId, Live, bool)>,
    /// Loop entry (body start or header).
    entry: BlockId,
    /// Edges among the loop's blocks (back edges to the entry removed).
    edges: Vec<(BlockId, BlockId)>,
    /// Dominators of the loop's body graph, computed on first use.
    dominators: std::cell::OnceCell<Option<Dominators<NodeIndex>>>,
}

impl Loop {
    fn new(
        span: Live,
        mut blocks: Vec<(BlockId, Live, bool)>,
        entry: BlockId,
        edges: Vec<(BlockId, BlockId)>,
    ) -> Self {
        blocks.sort_by_key(|(_, l, _)| l.start);
        Loop {
            span,
            blocks,
            entry,
            edges,
            dominators: std::cell::OnceCell::new(),
        }
    }

    /// The block (its index in `blocks`) whose span holds position `p`.
    fn block_at(&self, p: u32) -> Option<usize> {
        let n = self.blocks.partition_point(|(_, l, _)| l.start <= p);
        let i = n.checked_sub(1)?;
        (self.blocks[i].1.end >= p).then_some(i)
    }

    /// Dominators of the body graph, whose node `i` is `blocks[i]`.
    fn dominators(&self) -> Option<&Dominators<NodeIndex>> {
        self.dominators
            .get_or_init(|| {
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
                let root = *ids.get(&self.entry)?;
                Some(dominators::simple_fast(&g, root))
            })
            .as_ref()
    }

    /// True if every iteration fully overwrites the container before any read.
    fn killed_each_iteration(&self, uses: &BTreeMap<u32, Use>, live: Live) -> bool {
        let Some((&first, u)) = uses.range(live.start..=live.end).next() else {
            return false;
        };
        if !u.kill || u.read {
            return false;
        }
        let Some(kill) = self.block_at(first).filter(|&i| self.blocks[i].2) else {
            return false;
        };
        // The kill's block must dominate every block of the loop that uses the container.
        let Some(dom) = self.dominators() else {
            return false;
        };
        let kill = NodeIndex::new(kill);
        uses.range(live.start..=live.end)
            .all(|(&p, _)| match self.block_at(p) {
                Some(b) => {
                    let n = NodeIndex::new(b);
                    n == kill || dom.dominators(n).is_some_and(|mut d| d.any(|x| x == kill))
                }
                None => false,
            })
    }
}

/// Walks the SDFG tree in program order, numbering positions and recording
/// where each container is used. Containers are numbered densely in the
/// order they are first met.
#[derive(Default)]
struct Walker<'s> {
    next: u32,
    /// Number of every container met so far, by (SDFG id, name).
    ids: HashMap<(u32, &'s str), usize>,
    /// (SDFG id, name) of every container, by number.
    keys: Vec<(u32, &'s str)>,
    /// Live range of every container, by number.
    ranges: Vec<Live>,
    /// Uses of every container by position, by number.
    uses: Vec<BTreeMap<u32, Use>>,
    loops: Vec<Loop>,
    /// Span of every state.
    states: Vec<Live>,
    /// Label of every state, as `states`.
    state_labels: Vec<&'s str>,
    /// In-place candidates found so far.
    in_place: Vec<InPlace>,
    /// Kernels of one state may run concurrently.
    concurrent: bool,
    /// Positions where each container is used in the state being walked
    /// (kept only when kernels may run concurrently).
    touched: BTreeMap<usize, BTreeSet<u32>>,
    /// (viewed container, view) for every view node next to an access node.
    views: BTreeSet<(usize, usize)>,
}

impl<'s> Walker<'s> {
    /// The number of a container, numbering it at first sight.
    fn id(&mut self, sdfg: u32, name: &'s str, p: u32) -> usize {
        *self.ids.entry((sdfg, name)).or_insert_with(|| {
            self.keys.push((sdfg, name));
            self.ranges.push(Live { start: p, end: p });
            self.uses.push(BTreeMap::new());
            self.keys.len() - 1
        })
    }

    fn mark(&mut self, sdfg: u32, name: &'s str, p: u32, read: bool, kill: bool) {
        let c = self.use_at(sdfg, name, p);
        let u = self.uses[c].entry(p).or_default();
        u.read |= read;
        u.kill |= kill;
    }

    fn use_at(&mut self, sdfg: u32, name: &'s str, p: u32) -> usize {
        let c = self.id(sdfg, name, p);
        if self.concurrent {
            self.touched.entry(c).or_default().insert(p);
        }
        self.ranges[c].cover(p);
        c
    }

    /// Marks every container of a nested SDFG (recursively) as used at `p`.
    fn whole_sdfg_at(&mut self, sdfg: &'s Sdfg, p: u32) {
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

    fn region(&mut self, sdfg: &'s Sdfg, r: &'s Region) {
        let begin = self.next;
        let Some(start) = r.start else { return };
        let order = r.program_order(start);
        let mut out_edges: Vec<Vec<usize>> = vec![Vec::new(); r.blocks.len()];
        for (i, e) in r.edges.iter().enumerate() {
            out_edges[e.src.index()].push(i);
        }
        let mut span: BTreeMap<BlockId, Live> = BTreeMap::new();
        for b in &order {
            let first = self.next;
            self.block(sdfg, &r.blocks[b.index()]);
            let last = self.next.saturating_sub(1).max(first);
            // Interstate edges out of the block read containers at its end.
            for e in out_edges[b.index()].iter().map(|&i| &r.edges[i]) {
                let mut names: BTreeSet<&'s str> = BTreeSet::new();
                let mut add = |n: &str| {
                    if let Some((k, _)) = sdfg.arrays.get_key_value(n) {
                        names.insert(k.as_str());
                    }
                };
                e.condition.visit_names(&mut add);
                for (_, v) in &e.assignments {
                    v.visit_names(&mut add);
                }
                for n in names {
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
        let preds = r.predecessors();
        for e in &r.edges {
            let (Some(&rs), Some(&rd)) = (rank.get(&e.src), rank.get(&e.dst)) else {
                continue;
            };
            if rd > rs {
                continue;
            }
            let body = r.natural_loop(&preds, e.dst, e.src);
            let mut l = span[&e.dst];
            for b in &body {
                if let Some(s) = span.get(b) {
                    l.cover(s.start);
                    l.cover(s.end);
                }
            }
            self.loops.push(Loop::new(
                l,
                body.iter()
                    .filter_map(|b| span.get(b).map(|s| (*b, *s, is_state(b))))
                    .collect(),
                e.dst,
                body.iter()
                    .flat_map(|b| out_edges[b.index()].iter().map(|&i| &r.edges[i]))
                    .filter(|x| body.contains(&x.dst))
                    .map(|x| (x.src, x.dst))
                    .collect(),
            ));
        }
        if let RegionKind::Loop(_) = r.kind {
            self.loops.push(Loop::new(
                Live {
                    start: begin,
                    end: self.next.saturating_sub(1).max(begin),
                },
                order
                    .iter()
                    .filter_map(|b| span.get(b).map(|s| (*b, *s, is_state(b))))
                    .collect(),
                start,
                r.edges.iter().map(|x| (x.src, x.dst)).collect(),
            ));
        }
    }

    fn block(&mut self, sdfg: &'s Sdfg, b: &'s Block) {
        match &b.kind {
            BlockKind::State(st) => {
                self.state(sdfg, st);
                self.state_labels.push(&b.label);
            }
            BlockKind::Region(r) => self.region(sdfg, r),
            BlockKind::Conditional(brs) => {
                for (_, body) in brs {
                    self.region(sdfg, body);
                }
            }
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }

    fn state(&mut self, sdfg: &'s Sdfg, st: &'s State) {
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
                NodeKind::Access(a) => {
                    self.use_at(sdfg.id, &a.data, here);
                }
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
                // A reference is a view for this purpose: the container it
                // is set to lives as long as the reference.
                let is_view = |n: &str| {
                    sdfg.arrays
                        .get(n)
                        .is_some_and(|d| matches!(d.kind, DataKind::View | DataKind::Reference))
                };
                for (view, viewed) in [(&a.data, &b.data), (&b.data, &a.data)] {
                    if is_view(view) && view != viewed {
                        let p = pos[top(e.src).index()];
                        let pair = (self.id(sdfg.id, viewed, p), self.id(sdfg.id, view, p));
                        self.views.insert(pair);
                    }
                }
            }
            // A reference set by a tasklet's code may point into anything
            // the tasklet reads: each of those lives as long as it.
            if let (NodeKind::Tasklet(_), NodeKind::Access(r)) =
                (&st.nodes[e.src.index()].kind, &st.nodes[e.dst.index()].kind)
                && crate::passes::reference::is_set(sdfg, st, e)
            {
                let p = pos[top(e.src).index()];
                for x in st.edges.iter().filter(|x| x.dst == e.src) {
                    if let Some(v) = x.memlet.data.as_ref().filter(|v| **v != r.data) {
                        let pair = (self.id(sdfg.id, v, p), self.id(sdfg.id, &r.data, p));
                        self.views.insert(pair);
                    }
                }
            }
            // A view inside a map fed through the map's entry or exit: the
            // memlet names the viewed container.
            for (node, other) in [(e.src, e.dst), (e.dst, e.src)] {
                if let (NodeKind::Access(a), NodeKind::MapEntry(_) | NodeKind::MapExit { .. }) =
                    (&st.nodes[node.index()].kind, &st.nodes[other.index()].kind)
                    && sdfg
                        .arrays
                        .get(&a.data)
                        .is_some_and(|d| matches!(d.kind, DataKind::View | DataKind::Reference))
                    && let Some(viewed) = e.memlet.data.as_ref().filter(|d| **d != a.data)
                {
                    let p = pos[top(e.src).index()];
                    let pair = (self.id(sdfg.id, viewed, p), self.id(sdfg.id, &a.data, p));
                    self.views.insert(pair);
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
        for (c, at) in touched {
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
                let (sdfg, name) = self.keys[c];
                self.use_at(sdfg, name, base + p as u32);
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
                    let is = |e: &Expr, v: i64| {
                        matches!(e, Expr::Int(x) if *x == v) || simplify(e) == Expr::Int(v)
                    };
                    // `0:N-1` as written (the common case) needs no simplification.
                    let last_of_shape = matches!(&r.end, Expr::Binary(BinaryOp::Sub, a, b)
                        if **a == *n && **b == Expr::Int(1));
                    is(&r.start, 0)
                        && is(&r.step, 1)
                        && is(&r.tile, 1)
                        && (last_of_shape
                            || is(
                                &Expr::bin(
                                    BinaryOp::Sub,
                                    Expr::bin(BinaryOp::Add, r.end.clone(), Expr::Int(1)),
                                    n.clone(),
                                ),
                                0,
                            ))
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

    /// The loop index and the span set answer as a scan over every span
    /// would, for nested, disjoint and crossing spans.
    #[test]
    fn loop_index_and_span_set_agree_with_a_scan() {
        let live = |start, end| Live { start, end };
        let families: [Vec<Live>; 3] = [
            vec![
                live(0, 20),
                live(2, 8),
                live(3, 5),
                live(10, 18),
                live(10, 12),
                live(25, 30),
            ],
            vec![live(0, 3), live(4, 9), live(4, 9), live(12, 12)],
            vec![live(0, 10), live(5, 15), live(12, 20), live(6, 7)],
        ];
        for spans in families {
            let loops: Vec<Loop> = spans
                .iter()
                .map(|&s| Loop::new(s, Vec::new(), BlockId(0), Vec::new()))
                .collect();
            let index = LoopIndex::new(&loops);
            let set = SpanSet::new(spans.clone());
            for p in 0..32 {
                let mut got: Vec<usize> = index.containing(p).collect();
                got.sort();
                let want: Vec<usize> = (0..spans.len())
                    .filter(|&i| spans[i].start <= p && p <= spans[i].end)
                    .collect();
                assert_eq!(got, want, "position {p} in {spans:?}");
                for q in p..32 {
                    let r = live(p, q);
                    let want = spans.iter().any(|s| s.start <= p && q <= s.end);
                    assert_eq!(set.any_contains(&r), want, "{r:?} in {spans:?}");
                }
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
