//! The order of a region's blocks: predecessors, natural loops, and the
//! program order the writers emit blocks in and the liveness analysis
//! numbers them by.

use std::collections::BTreeSet;

use crate::ir::sdfg::{BlockId, Region};

impl Region {
    /// Each block's out-edges (indices into `edges`), in edge order.
    pub fn out_edge_lists(&self) -> Vec<Vec<usize>> {
        let mut outs = vec![Vec::new(); self.blocks.len()];
        for (i, e) in self.edges.iter().enumerate() {
            outs[e.src.index()].push(i);
        }
        outs
    }

    /// The source block of every edge into each block, by block index.
    pub fn predecessors(&self) -> Vec<Vec<BlockId>> {
        let mut preds = vec![Vec::new(); self.blocks.len()];
        for e in &self.edges {
            preds[e.dst.index()].push(e.src);
        }
        preds
    }

    /// The blocks of the natural loop of the back edge `latch -> header`;
    /// `preds` is [`Region::predecessors`], built once per region.
    pub fn natural_loop(
        &self,
        preds: &[Vec<BlockId>],
        header: BlockId,
        latch: BlockId,
    ) -> BTreeSet<BlockId> {
        let mut body = BTreeSet::from([header, latch]);
        let mut stack = vec![latch];
        while let Some(b) = stack.pop() {
            if b == header {
                continue;
            }
            for &src in &preds[b.index()] {
                if body.insert(src) {
                    stack.push(src);
                }
            }
        }
        body
    }

    /// The blocks reachable from `start` in reverse postorder of a
    /// depth-first search that follows each block's edges in their order.
    pub fn reverse_postorder(&self, start: BlockId) -> Vec<BlockId> {
        let mut succ: Vec<Vec<BlockId>> = vec![Vec::new(); self.blocks.len()];
        for e in &self.edges {
            succ[e.src.index()].push(e.dst);
        }
        let mut seen = vec![0u32; self.blocks.len()];
        let mut post = Vec::new();
        dfs_postorder(start, 1, &mut seen, |b| &succ[b.index()], &mut post);
        post.reverse();
        post
    }

    /// The blocks reachable from `start` in program order: every edge that
    /// is not a loop's back edge goes forward, and every loop's blocks are
    /// contiguous, header first, as the structured writer emits them. A
    /// plain reverse postorder may place a loop's body after everything that
    /// follows the loop (when the header's edge into the body comes before
    /// its exit edge), which would stretch the loop over unrelated blocks.
    ///
    /// Loops are the natural loops of the back edges, merged by header and
    /// nested by containment; each loop is ordered as one block at the level
    /// around it (a reverse postorder of that level's blocks and loops), then
    /// expanded in place. A region whose control flow is irreducible (some
    /// loop is entered other than through its header) keeps the plain
    /// reverse postorder.
    pub fn program_order(&self, start: BlockId) -> Vec<BlockId> {
        let rpo = self.reverse_postorder(start);
        LoopNest::new(self, start, &rpo)
            .map(|nest| nest.order(start))
            .filter(|order| order.len() == rpo.len())
            .unwrap_or(rpo)
    }
}

/// Appends the blocks reachable from `start` (through `succ`, skipping those
/// whose `seen` mark already equals `stamp`) to `post` in postorder.
fn dfs_postorder<'a>(
    start: BlockId,
    stamp: u32,
    seen: &mut [u32],
    succ: impl Fn(BlockId) -> &'a [BlockId],
    post: &mut Vec<BlockId>,
) {
    let mut stack: Vec<(BlockId, usize)> = vec![(start, 0)];
    seen[start.index()] = stamp;
    while let Some((b, i)) = stack.pop() {
        let next = succ(b);
        if i < next.len() {
            stack.push((b, i + 1));
            let n = next[i];
            if seen[n.index()] != stamp {
                seen[n.index()] = stamp;
                stack.push((n, 0));
            }
        } else {
            post.push(b);
        }
    }
}

/// The loop nesting forest of a reducible region, with the forward edges of
/// each nesting level between that level's blocks and (collapsed) loops.
struct LoopNest {
    /// Header of each loop.
    header: Vec<BlockId>,
    /// The loop directly around each loop.
    parent: Vec<Option<usize>>,
    /// Nesting depth of each loop (outermost: 1).
    depth: Vec<u32>,
    /// The innermost loop around each block, if any.
    loop_of: Vec<Option<usize>>,
    /// The loop each block heads, if any.
    heads: Vec<Option<usize>>,
    /// Successors of a header inside its own loop, by block index.
    inner_succ: Vec<Vec<BlockId>>,
    /// Successors of each block (a header: of its whole loop) at the level
    /// around it, by block index.
    item_succ: Vec<Vec<BlockId>>,
}

impl LoopNest {
    /// None if the region has no loop or its control flow is irreducible.
    fn new(r: &Region, start: BlockId, rpo: &[BlockId]) -> Option<LoopNest> {
        let n = r.blocks.len();
        let mut rank = vec![usize::MAX; n];
        for (i, b) in rpo.iter().enumerate() {
            rank[b.index()] = i;
        }
        let reachable = |b: BlockId| rank[b.index()] != usize::MAX;
        let is_back = |e: &crate::ir::sdfg::InterstateEdge| {
            reachable(e.src) && reachable(e.dst) && rank[e.dst.index()] <= rank[e.src.index()]
        };
        // Natural loops merged by header, in order of first back edge.
        let preds = r.predecessors();
        let mut heads: Vec<Option<usize>> = vec![None; n];
        let mut header = Vec::new();
        let mut bodies: Vec<BTreeSet<BlockId>> = Vec::new();
        for e in r.edges.iter().filter(|e| is_back(e)) {
            let body = r.natural_loop(&preds, e.dst, e.src);
            // A header that does not dominate its loop: irreducible.
            if e.dst != start && body.contains(&start) {
                return None;
            }
            match heads[e.dst.index()] {
                Some(l) => bodies[l].extend(body),
                None => {
                    heads[e.dst.index()] = Some(header.len());
                    header.push(e.dst);
                    bodies.push(body);
                }
            }
        }
        if header.is_empty() {
            return None;
        }
        // Outer loops first, so inner ones overwrite `loop_of`.
        let mut by_size: Vec<usize> = (0..header.len()).collect();
        by_size.sort_by_key(|&l| (std::cmp::Reverse(bodies[l].len()), header[l]));
        let mut loop_of: Vec<Option<usize>> = vec![None; n];
        let mut parent = vec![None; header.len()];
        let mut depth = vec![0u32; header.len()];
        for &l in &by_size {
            parent[l] = loop_of[header[l].index()];
            depth[l] = parent[l].map_or(1, |p| depth[p] + 1);
            for b in &bodies[l] {
                loop_of[b.index()] = Some(l);
            }
        }
        let mut nest = LoopNest {
            header,
            parent,
            depth,
            loop_of,
            heads,
            inner_succ: vec![Vec::new(); n],
            item_succ: vec![Vec::new(); n],
        };
        for e in r.edges.iter().filter(|e| !is_back(e)) {
            if !reachable(e.src) || !reachable(e.dst) {
                continue;
            }
            let (lu, lv) = (nest.loop_of[e.src.index()], nest.loop_of[e.dst.index()]);
            let level = nest.common(lu, lv);
            let (u, v) = (nest.item(e.src, level), nest.item(e.dst, level));
            if u == v {
                continue;
            }
            if level.is_some_and(|l| nest.header[l] == u) {
                nest.inner_succ[u.index()].push(v);
            } else {
                nest.item_succ[u.index()].push(v);
            }
        }
        Some(nest)
    }

    /// The innermost loop around both `a` and `b` (None: the region).
    fn common(&self, mut a: Option<usize>, mut b: Option<usize>) -> Option<usize> {
        let depth = |l: Option<usize>| l.map_or(0, |l| self.depth[l]);
        while a != b {
            if depth(a) >= depth(b) {
                a = a.and_then(|l| self.parent[l]);
            } else {
                b = b.and_then(|l| self.parent[l]);
            }
        }
        a
    }

    /// The block standing for `b` at nesting level `level`: `b` itself if
    /// its innermost loop is `level`, else the header of the loop directly
    /// inside `level` that holds it.
    fn item(&self, b: BlockId, level: Option<usize>) -> BlockId {
        let mut l = self.loop_of[b.index()];
        if l == level {
            return b;
        }
        while let Some(x) = l {
            if self.parent[x] == level {
                return self.header[x];
            }
            l = self.parent[x];
        }
        b
    }

    /// The program order from `start`: each level in reverse postorder, each
    /// loop expanded where it stands.
    fn order(&self, start: BlockId) -> Vec<BlockId> {
        let mut seen = vec![0u32; self.loop_of.len()];
        let mut stamp = 0u32;
        let mut level_order = |entry: BlockId, inner: bool| {
            stamp += 1;
            let mut post = Vec::new();
            let succ = |b: BlockId| {
                if inner && b == entry {
                    self.inner_succ[b.index()].as_slice()
                } else {
                    self.item_succ[b.index()].as_slice()
                }
            };
            dfs_postorder(entry, stamp, &mut seen, succ, &mut post);
            post.reverse();
            post
        };
        let mut out = Vec::with_capacity(self.loop_of.len());
        // (blocks of a level, next one to emit, entry of a loop level)
        let mut stack = vec![(level_order(start, false), 0usize, None)];
        while let Some((items, i, entry)) = stack.last_mut() {
            let Some(&b) = items.get(*i) else {
                stack.pop();
                continue;
            };
            *i += 1;
            if self.heads[b.index()].is_some() && *entry != Some(b) {
                stack.push((level_order(b, true), 0, Some(b)));
            } else {
                out.push(b);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::expr::Expr;
    use crate::ir::sdfg::{Block, BlockKind, InterstateEdge, RegionKind};

    /// A region of `n` empty blocks with the given edges (in this order).
    fn region(n: u32, edges: &[(u32, u32)]) -> Region {
        Region {
            label: "r".into(),
            kind: RegionKind::Plain,
            blocks: (0..n)
                .map(|i| Block {
                    label: format!("b{i}"),
                    kind: BlockKind::Break,
                    path: String::new(),
                })
                .collect(),
            edges: edges
                .iter()
                .map(|&(src, dst)| InterstateEdge {
                    src: BlockId(src),
                    dst: BlockId(dst),
                    condition: Expr::Bool(true),
                    assignments: Vec::new(),
                    path: String::new(),
                })
                .collect(),
            start: Some(BlockId(0)),
            path: String::new(),
        }
    }

    fn order(r: &Region) -> Vec<u32> {
        r.program_order(BlockId(0)).iter().map(|b| b.0).collect()
    }

    #[test]
    fn a_loop_body_follows_its_header_whatever_the_edge_order() {
        // Two for-loops as DaCe 1.0.2 writes them: init, guard, body (back
        // edge to the guard), the guard's body edge listed before its exit.
        let r = region(
            7,
            &[
                (0, 1),
                (1, 2),
                (2, 1),
                (1, 3),
                (3, 4),
                (4, 5),
                (5, 4),
                (4, 6),
            ],
        );
        assert_eq!(
            r.reverse_postorder(BlockId(0)),
            [0, 1, 3, 4, 6, 5, 2].map(BlockId)
        );
        assert_eq!(order(&r), [0, 1, 2, 3, 4, 5, 6]);
        // Exit edge first: the plain order already has the loop contiguous.
        let r = region(4, &[(0, 1), (1, 3), (1, 2), (2, 1)]);
        assert_eq!(order(&r), [0, 1, 2, 3]);
    }

    #[test]
    fn nested_loops_are_contiguous_and_forward_edges_go_forward() {
        // 1: outer header, 2: inner header, 3: inner body, 4: outer latch,
        // 5: after the outer loop; a break edge 3 -> 5 out of both loops.
        let r = region(
            6,
            &[
                (0, 1),
                (1, 2),
                (2, 3),
                (3, 2),
                (3, 5),
                (2, 4),
                (4, 1),
                (1, 5),
            ],
        );
        let o = order(&r);
        assert_eq!(o, [0, 1, 2, 3, 4, 5]);
        // The loop starting at the region's entry.
        let r = region(3, &[(0, 1), (1, 0), (0, 2)]);
        assert_eq!(order(&r), [0, 1, 2]);
        // A self loop.
        let r = region(3, &[(0, 1), (1, 1), (1, 2)]);
        assert_eq!(order(&r), [0, 1, 2]);
    }

    #[test]
    fn irreducible_control_flow_keeps_the_reverse_postorder() {
        // 1 and 2 form a cycle entered at both.
        let r = region(4, &[(0, 1), (0, 2), (1, 2), (2, 1), (2, 3)]);
        assert_eq!(r.program_order(BlockId(0)), r.reverse_postorder(BlockId(0)));
        // Unreachable blocks are left out.
        let r = region(3, &[(0, 1), (2, 1)]);
        assert_eq!(order(&r), [0, 1]);
    }
}
