//! Recovers structured control flow (while loops and if/else) from the
//! state machines that DaCe 1.0.2 writes with interstate edges, so that the
//! writers can emit `while`/`if` instead of gotos. Regions that do not fit
//! the patterns (breaks out of loops, irreducible flow, non-complementary
//! branch conditions) return `None` and are written with labels and gotos.

use std::collections::BTreeSet;

use petgraph::algo::dominators;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::ir::simplify::simplify;
use crate::ir::symtypes::expr_type;
use crate::ir::*;

/// A structured statement over the blocks and edges of one region.
#[derive(Clone, Debug, PartialEq)]
pub enum Structured {
    /// Run a block.
    Block(BlockId),
    /// Run the assignments of an interstate edge (index into `Region::edges`).
    Edge(usize),
    /// `while (cond) { body }`; `header` runs before each test when it has code.
    While {
        /// The loop header block (a guard state, often empty).
        header: BlockId,
        /// Condition under which the loop continues (the edge into the body).
        cond: Expr,
        /// The body, ending with the back edge's assignments.
        body: Vec<Structured>,
    },
    /// `if (cond) { then } else { els }`.
    If {
        /// Condition of the `then` edge.
        cond: Expr,
        /// Taken when `cond` holds.
        then: Vec<Structured>,
        /// Taken otherwise.
        els: Vec<Structured>,
    },
}

/// Structures a region of `sdfg`, or None if it needs gotos.
pub fn structure(r: &Region, sdfg: &Sdfg) -> Option<Vec<Structured>> {
    let start = r.start?;
    let s = Structurer::new(r, start, sdfg);
    let mut out = Vec::new();
    s.seq(start, None, None, &mut out, 0)?;
    Some(out)
}

struct Structurer<'a> {
    r: &'a Region,
    /// The SDFG whose symbols and containers the conditions name.
    sdfg: &'a Sdfg,
    outs: Vec<Vec<usize>>,
    /// Back edges (latch -> header) by edge index.
    back: BTreeSet<usize>,
    /// Back edges into each block (by block index): the loop headers have some.
    back_into: Vec<Vec<usize>>,
    /// Predecessors of each block, for natural loops.
    preds: Vec<Vec<BlockId>>,
    /// Immediate post-dominator of each block (None: the region exit).
    ipdom: Vec<Option<BlockId>>,
}

/// Whether `b` holds exactly when `a` does not: `b` is `not a` (or `a` is
/// `not b`), or the two compare the same integers the other way round
/// (`i < N` and `i >= N`, `k > 0` and `0 >= k`: DaCe 1.0.2's loop guards).
/// Comparisons of floating-point values are not complementary (NaN fails
/// both), nor are those of operands whose type is unknown.
fn negation_of(a: &Expr, b: &Expr, sdfg: &Sdfg) -> bool {
    let not = |x: &Expr| simplify(&Expr::Unary(UnaryOp::Not, Box::new(x.clone())));
    let (a, b) = (simplify(a), simplify(b));
    if b == not(&a) || a == not(&b) {
        return true;
    }
    let (Expr::Binary(oa, x1, y1), Expr::Binary(ob, x2, y2)) = (&a, &b) else {
        return false;
    };
    let complement = |op: BinaryOp| match op {
        BinaryOp::Lt => Some(BinaryOp::Ge),
        BinaryOp::Le => Some(BinaryOp::Gt),
        BinaryOp::Gt => Some(BinaryOp::Le),
        BinaryOp::Ge => Some(BinaryOp::Lt),
        _ => None,
    };
    // `x op y` is `y mirror(op) x`.
    let mirror = |op: BinaryOp| match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::Le => BinaryOp::Ge,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::Ge => BinaryOp::Le,
        other => other,
    };
    let Some(c) = complement(*oa) else {
        return false;
    };
    let same = (*ob == c && x1 == x2 && y1 == y2) || (mirror(*ob) == c && x1 == y2 && y1 == x2);
    let lookup = |n: &str| {
        sdfg.symbol_type(n)
            .or_else(|| sdfg.arrays.get(n).map(|d| d.dtype))
    };
    let integral =
        |e: &Expr| expr_type(e, &lookup).is_some_and(|t| t.is_integer() || t == DType::Bool);
    same && integral(x1) && integral(y1)
}

impl<'a> Structurer<'a> {
    fn new(r: &'a Region, start: BlockId, sdfg: &'a Sdfg) -> Structurer<'a> {
        let n = r.blocks.len();
        let outs = r.out_edge_lists();
        let order = r.program_order(start);
        let mut rank = vec![usize::MAX; n];
        for (i, b) in order.iter().enumerate() {
            rank[b.index()] = i;
        }
        let back: BTreeSet<usize> = r
            .edges
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                rank[e.dst.index()] <= rank[e.src.index()] && rank[e.src.index()] != usize::MAX
            })
            .map(|(i, _)| i)
            .collect();
        let mut back_into = vec![Vec::new(); n];
        for &i in &back {
            back_into[r.edges[i].dst.index()].push(i);
        }
        // Post-dominators: dominators of the reversed graph rooted at a virtual exit.
        let mut g: DiGraph<(), ()> = DiGraph::new();
        for _ in 0..=n {
            g.add_node(());
        }
        let exit = NodeIndex::new(n);
        for e in &r.edges {
            g.add_edge(
                NodeIndex::new(e.dst.index()),
                NodeIndex::new(e.src.index()),
                (),
            );
        }
        for (b, o) in outs.iter().enumerate() {
            if o.is_empty() {
                g.add_edge(exit, NodeIndex::new(b), ());
            }
        }
        let dom = dominators::simple_fast(&g, exit);
        let ipdom = (0..n)
            .map(|b| {
                dom.immediate_dominator(NodeIndex::new(b))
                    .filter(|d| *d != exit)
                    .map(|d| BlockId(d.index() as u32))
            })
            .collect();
        Structurer {
            r,
            sdfg,
            outs,
            back,
            back_into,
            preds: r.predecessors(),
            ipdom,
        }
    }

    /// Appends the statements from `cur` up to (not including) `stop`;
    /// `header` is the innermost loop header being structured.
    fn seq(
        &self,
        mut cur: BlockId,
        stop: Option<BlockId>,
        header: Option<BlockId>,
        out: &mut Vec<Structured>,
        depth: usize,
    ) -> Option<()> {
        if depth > 64 {
            return None;
        }
        let mut guard = 0;
        loop {
            if Some(cur) == stop {
                return Some(());
            }
            guard += 1;
            if guard > self.r.blocks.len() * 2 + 2 {
                return None;
            }
            let outs = &self.outs[cur.index()];
            let back_into = &self.back_into[cur.index()];
            let is_header = Some(cur) != header && !outs.is_empty() && !back_into.is_empty();
            if is_header {
                // while-loop: exactly two edges, one into the body, one out.
                let [a, b] = outs.as_slice() else { return None };
                let (ea, eb) = (&self.r.edges[*a], &self.r.edges[*b]);
                if !negation_of(&ea.condition, &eb.condition, self.sdfg) {
                    return None;
                }
                // The body edge stays in the natural loop, the exit edge leaves it.
                let looped: BTreeSet<BlockId> = back_into
                    .iter()
                    .flat_map(|&i| self.r.natural_loop(&self.preds, cur, self.r.edges[i].src))
                    .collect();
                let (body_e, exit_e) = match (looped.contains(&ea.dst), looped.contains(&eb.dst)) {
                    (true, false) => (*a, *b),
                    (false, true) => (*b, *a),
                    _ => return None,
                };
                let be = &self.r.edges[body_e];
                let mut body = vec![Structured::Edge(body_e)];
                self.seq(be.dst, Some(cur), Some(cur), &mut body, depth + 1)?;
                out.push(Structured::While {
                    header: cur,
                    cond: be.condition.clone(),
                    body,
                });
                out.push(Structured::Edge(exit_e));
                cur = self.r.edges[exit_e].dst;
                continue;
            }
            out.push(Structured::Block(cur));
            match outs.as_slice() {
                [] => return if stop.is_none() { Some(()) } else { None },
                [e] => {
                    let edge = &self.r.edges[*e];
                    if !matches!(edge.condition, Expr::Bool(true))
                        && !matches!(edge.condition, Expr::Int(v) if v != 0)
                    {
                        return None;
                    }
                    out.push(Structured::Edge(*e));
                    if self.back.contains(e) {
                        // The back edge of the loop being structured.
                        return if Some(edge.dst) == header && stop == header {
                            Some(())
                        } else {
                            None
                        };
                    }
                    cur = edge.dst;
                }
                [a, b] => {
                    let (ea, eb) = (&self.r.edges[*a], &self.r.edges[*b]);
                    if !negation_of(&ea.condition, &eb.condition, self.sdfg)
                        || self.back.contains(a)
                        || self.back.contains(b)
                    {
                        return None;
                    }
                    let join = self.ipdom[cur.index()];
                    // The join must lie within what we are structuring.
                    if join.is_none() && stop.is_some() {
                        return None;
                    }
                    let mut then = vec![Structured::Edge(*a)];
                    let mut els = vec![Structured::Edge(*b)];
                    self.seq(ea.dst, join, header, &mut then, depth + 1)?;
                    self.seq(eb.dst, join, header, &mut els, depth + 1)?;
                    // An empty `then` with work in `else` is written the other
                    // way round, on the other edge's condition (its negation):
                    // `if (c) {...}`, not `if (!c) {} else {...}`. Besides
                    // reading better, GCC if-converts the two shapes
                    // differently (`vmaxsd` against `vcmplesd`+`vblendvpd` for
                    // a running maximum).
                    let trivial = |s: &[Structured]| {
                        s.iter().all(|x| {
                            matches!(x, Structured::Edge(e) if self.r.edges[*e].assignments.is_empty())
                        })
                    };
                    let (cond, then, els) = if trivial(&then) && !trivial(&els) {
                        (eb.condition.clone(), els, then)
                    } else {
                        (ea.condition.clone(), then, els)
                    };
                    out.push(Structured::If { cond, then, els });
                    match join {
                        Some(j) => cur = j,
                        None => return Some(()),
                    }
                }
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::python::parse_expr;

    fn sdfg_with(symbols: &[(&str, DType)]) -> Sdfg {
        Sdfg {
            id: 0,
            name: "t".into(),
            arg_names: Vec::new(),
            arrays: NameMap::default(),
            symbols: symbols.iter().map(|(n, t)| (n.to_string(), *t)).collect(),
            callbacks: NameMap::default(),
            redistributions: NameMap::default(),
            assigned_types: NameMap::default(),
            constants: NameMap::default(),
            struct_types: Vec::new(),
            global_code: NameMap::default(),
            init_code: NameMap::default(),
            exit_code: NameMap::default(),
            body: Region {
                label: String::new(),
                kind: RegionKind::Plain,
                blocks: Vec::new(),
                edges: Vec::new(),
                start: None,
                path: String::new(),
            },
            path: String::new(),
            dace_version: String::new(),
        }
    }

    fn negation(a: &str, b: &str, sdfg: &Sdfg) -> bool {
        negation_of(&parse_expr(a).unwrap(), &parse_expr(b).unwrap(), sdfg)
    }

    #[test]
    fn complementary_comparisons_of_integers_are_negations() {
        let s = sdfg_with(&[
            ("i", DType::Int32),
            ("N", DType::Int64),
            ("x", DType::Float64),
        ]);
        assert!(negation("i < N - 1", "i >= N - 1", &s));
        assert!(negation("i < N", "N <= i", &s)); // mirrored operands
        assert!(negation(
            "k > 0",
            "k <= 0",
            &sdfg_with(&[("k", DType::Int32)])
        ));
        assert!(negation("i < N", "not (i < N)", &s));
        // not complementary: another bound, the same direction, an equality
        assert!(!negation("i < N", "i > N", &s));
        assert!(!negation("i < N", "i >= N - 1", &s));
        assert!(!negation("i < N", "i < N", &s));
        // NaN fails both `x < 1.0` and `x >= 1.0`; an unknown type may be a float
        assert!(!negation("x < 1.0", "x >= 1.0", &s));
        assert!(!negation("i < x", "i >= x", &s));
        assert!(!negation("u < 3", "u >= 3", &s));
    }
}
