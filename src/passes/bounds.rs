//! Upper bounds of transient sizes over loop variables. A transient allocated
//! in a loop body whose size depends on the loop variable (`M - i`, `i + 1`:
//! the slices NPBench kernels take in `for i in range(M)`) cannot be sized
//! from the program's symbols alone; its largest size over the loop can.
//! With it, the transient gets a workspace slot (external mode) or a
//! persistent buffer (persistent mode) instead of an allocation per
//! iteration.
//!
//! A loop variable's range is known when the loop is counted: a `LoopRegion`
//! or a structured `while` (see [`structure`]) whose variable is set once
//! before the loop (`v = a`), only ever increased by a positive constant in
//! the loop (`v = v + c`), and tested as `v < b` / `v <= b` (or `b > v`,
//! `b >= v`) with no symbol of `b` assigned in the loop. Inside the body
//! `a <= v <= b - 1` (`b` for `<=`). A size that is affine in the variable
//! (or a maximum of such) is largest at an end of that range, so its bound is
//! `max(0, f(a), f(b - 1))`; sizes of any other form get no bound.

use std::collections::{BTreeSet, HashMap};

use crate::ir::simplify::{free_symbols, simplify, substitute};
use crate::ir::*;
use crate::passes::structure::{Structured, structure};

/// A counted loop around a state: variable and inclusive bounds in the body.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopRange {
    /// Loop variable.
    pub var: String,
    /// Smallest value in the body.
    pub lo: Expr,
    /// Largest value in the body.
    pub hi: Expr,
}

/// The counted loops around each state of the SDFG (by state JSON pointer),
/// outermost first. A state inside a loop that is not counted gets no entry
/// for it and for the loops outside it (their variable could be anything).
pub fn loop_ranges(sdfg: &Sdfg) -> HashMap<String, Vec<LoopRange>> {
    let mut out = HashMap::new();
    region(sdfg, &sdfg.body, &[], &mut out);
    out
}

/// The largest value of `size` over the loops in `loops` (outermost first),
/// at least 0, or None if it cannot be bounded.
pub fn bound_over_loops(size: &Expr, loops: &[LoopRange]) -> Option<Expr> {
    let mut e = size.clone();
    for l in loops.iter().rev() {
        if free_symbols(&e).contains(&l.var) {
            e = simplify(&max_over(&e, l)?);
        }
    }
    Some(simplify(&Expr::Call(Func::Max, vec![Expr::Int(0), e])))
}

/// max of `e` over `l.var` in `[l.lo, l.hi]`, for `e` affine in the variable
/// or a maximum of such expressions.
fn max_over(e: &Expr, l: &LoopRange) -> Option<Expr> {
    if let Expr::Call(Func::Max, args) = e {
        let args = args.iter().map(|a| max_over(a, l)).collect::<Option<_>>()?;
        return Some(Expr::Call(Func::Max, args));
    }
    if !affine_in(e, &l.var) {
        return None;
    }
    let at = |v: &Expr| substitute(e, &mut |n| (n == l.var).then(|| v.clone()));
    Some(Expr::Call(Func::Max, vec![at(&l.lo), at(&l.hi)]))
}

/// True if `e` is affine in `v`: sums and differences of terms, each free of
/// `v` or `v` times a factor free of `v`.
fn affine_in(e: &Expr, v: &str) -> bool {
    let free = |x: &Expr| !free_symbols(x).iter().any(|s| s == v);
    if free(e) {
        return true;
    }
    match e {
        Expr::Sym(s) => s == v,
        Expr::Unary(UnaryOp::Neg, a) => affine_in(a, v),
        Expr::Binary(BinaryOp::Add | BinaryOp::Sub, a, b) => affine_in(a, v) && affine_in(b, v),
        Expr::Binary(BinaryOp::Mul, a, b) => {
            (free(a) && affine_in(b, v)) || (free(b) && affine_in(a, v))
        }
        _ => false,
    }
}

fn region(sdfg: &Sdfg, r: &Region, outer: &[LoopRange], out: &mut HashMap<String, Vec<LoopRange>>) {
    let mut loops = outer.to_vec();
    if let RegionKind::Loop(info) = &r.kind {
        // An uncounted loop adds no range; the outer ones still hold (the
        // outer loops checked every assignment inside them).
        if let Some(l) = counted_loop_region(r, info) {
            loops.push(l);
        }
    }
    if let Some(items) = structure(r, sdfg) {
        seq(sdfg, r, &items, &loops, out);
    } else {
        // Gotos: the loops inside are not recognised (no range for their
        // variables); the outer ranges still hold.
        for b in &r.blocks {
            block(sdfg, &b.kind, &b.path, &loops, out);
        }
    }
}

fn block(
    sdfg: &Sdfg,
    kind: &BlockKind,
    path: &str,
    loops: &[LoopRange],
    out: &mut HashMap<String, Vec<LoopRange>>,
) {
    match kind {
        BlockKind::State(_) => {
            out.insert(path.to_string(), loops.to_vec());
        }
        BlockKind::Region(inner) => region(sdfg, inner, loops, out),
        BlockKind::Conditional(brs) => {
            for (_, body) in brs {
                region(sdfg, body, loops, out);
            }
        }
        _ => {}
    }
}

fn seq(
    sdfg: &Sdfg,
    r: &Region,
    items: &[Structured],
    loops: &[LoopRange],
    out: &mut HashMap<String, Vec<LoopRange>>,
) {
    // Assignments of the edges just run, by variable (the last one wins).
    let mut inits: HashMap<String, Expr> = HashMap::new();
    for item in items {
        match item {
            Structured::Block(b) => {
                let blk = &r.blocks[b.index()];
                block(sdfg, &blk.kind, &blk.path, loops, out);
                inits.clear();
            }
            Structured::Edge(i) => {
                for (k, v) in &r.edges[*i].assignments {
                    inits.insert(k.clone(), v.clone());
                }
            }
            Structured::While { header, cond, body } => {
                // The update is the back edge, the body's last item.
                let mut assigned = Vec::new();
                let mut update = None;
                match body.split_last() {
                    Some((Structured::Edge(i), rest)) => {
                        edges_in(r, rest, &mut assigned);
                        for (k, v) in &r.edges[*i].assignments {
                            if update.is_none() && free_symbols(cond).contains(k) {
                                update = Some((k.clone(), v.clone()));
                            } else {
                                assigned.push((k.clone(), v.clone()));
                            }
                        }
                    }
                    _ => edges_in(r, body, &mut assigned),
                }
                let h = &r.blocks[header.index()];
                assignments_in_block(&h.kind, &mut assigned);
                let mut inner = loops.to_vec();
                inner.extend(counted(cond, &inits, &assigned, update.as_ref()));
                // The header also runs for the failing test: outer ranges only.
                block(sdfg, &h.kind, &h.path, loops, out);
                seq(sdfg, r, body, &inner, out);
                inits.clear();
            }
            Structured::If { then, els, .. } => {
                seq(sdfg, r, then, loops, out);
                seq(sdfg, r, els, loops, out);
                inits.clear();
            }
        }
    }
}

/// Every interstate assignment made by the structured items (recursively,
/// nested regions and loop statements included).
fn edges_in(r: &Region, items: &[Structured], out: &mut Vec<(String, Expr)>) {
    for item in items {
        match item {
            Structured::Block(b) => assignments_in_block(&r.blocks[b.index()].kind, out),
            Structured::Edge(i) => out.extend(r.edges[*i].assignments.iter().cloned()),
            Structured::While { header, body, .. } => {
                assignments_in_block(&r.blocks[header.index()].kind, out);
                edges_in(r, body, out);
            }
            Structured::If { then, els, .. } => {
                edges_in(r, then, out);
                edges_in(r, els, out);
            }
        }
    }
}

fn assignments_in_block(kind: &BlockKind, out: &mut Vec<(String, Expr)>) {
    match kind {
        BlockKind::Region(inner) => assignments_in_region(inner, out),
        BlockKind::Conditional(brs) => brs.iter().for_each(|(_, b)| assignments_in_region(b, out)),
        _ => {}
    }
}

fn assignments_in_region(r: &Region, out: &mut Vec<(String, Expr)>) {
    for e in &r.edges {
        out.extend(e.assignments.iter().cloned());
    }
    if let RegionKind::Loop(info) = &r.kind {
        for s in info.init.iter().chain(&info.update) {
            match s {
                Stmt::Assign {
                    target: crate::ir::expr::Target::Name(n),
                    op,
                    value,
                } => {
                    let v = match op {
                        Some(op) => Expr::bin(*op, Expr::sym(n.clone()), value.clone()),
                        None => value.clone(),
                    };
                    out.push((n.clone(), v));
                }
                // Anything else may assign anything: poison every name it mentions.
                Stmt::Assign { value, .. } | Stmt::Expr(value) => {
                    value.visit_names(&mut |n| out.push((n.to_string(), Expr::sym("?"))));
                }
                Stmt::If { .. }
                | Stmt::For { .. }
                | Stmt::Printf { .. }
                | Stmt::Chain { .. }
                | Stmt::Callback { .. } => {
                    for x in crate::ir::expr::all_stmts(std::slice::from_ref(s))
                        .into_iter()
                        .flat_map(Stmt::own_exprs)
                    {
                        x.visit_names(&mut |n| out.push((n.to_string(), Expr::sym("?"))));
                    }
                }
            }
        }
    }
    for b in &r.blocks {
        assignments_in_block(&b.kind, out);
    }
}

fn counted_loop_region(r: &Region, info: &LoopInfo) -> Option<LoopRange> {
    let var = info.variable.as_ref()?;
    let mut inits = HashMap::new();
    for s in &info.init {
        if let Stmt::Assign {
            target: crate::ir::expr::Target::Name(n),
            op: None,
            value,
        } = s
        {
            inits.insert(n.clone(), value.clone());
        } else {
            return None;
        }
    }
    let mut assigned = Vec::new();
    let mut body = r.clone();
    body.kind = RegionKind::Plain;
    assignments_in_region(&body, &mut assigned);
    let [
        Stmt::Assign {
            target: crate::ir::expr::Target::Name(n),
            op,
            value,
        },
    ] = info.update.as_slice()
    else {
        return None;
    };
    let update = match op {
        Some(op) => Expr::bin(*op, Expr::sym(n.clone()), value.clone()),
        None => value.clone(),
    };
    if info.inverted || n != var {
        return None;
    }
    counted(
        &info.condition,
        &inits,
        &assigned,
        Some(&(n.clone(), update)),
    )
}

/// The range of a loop with condition `cond`, entered after `inits`, whose
/// body makes the `assigned` assignments before its `update` (the back edge).
fn counted(
    cond: &Expr,
    inits: &HashMap<String, Expr>,
    assigned: &[(String, Expr)],
    update: Option<&(String, Expr)>,
) -> Option<LoopRange> {
    let (var, hi) = match cond {
        Expr::Binary(op @ (BinaryOp::Lt | BinaryOp::Le), a, b) => match &**a {
            Expr::Sym(v) => (v.clone(), upper(*op == BinaryOp::Lt, b)),
            _ => return None,
        },
        Expr::Binary(op @ (BinaryOp::Gt | BinaryOp::Ge), a, b) => match &**b {
            Expr::Sym(v) => (v.clone(), upper(*op == BinaryOp::Gt, a)),
            _ => return None,
        },
        _ => return None,
    };
    let lo = inits.get(&var)?.clone();
    if free_symbols(&lo).contains(&var) {
        return None;
    }
    let bound_syms: BTreeSet<String> = free_symbols(&hi).into_iter().collect();
    if assigned
        .iter()
        .any(|(k, _)| bound_syms.contains(k) || *k == var)
    {
        return None;
    }
    match update {
        Some((k, v)) if *k == var && is_increment(v, &var) => Some(LoopRange { var, lo, hi }),
        _ => None,
    }
}

/// The largest value below (`strict`) or up to `b`.
fn upper(strict: bool, b: &Expr) -> Expr {
    if strict {
        simplify(&Expr::bin(BinaryOp::Sub, b.clone(), Expr::Int(1)))
    } else {
        b.clone()
    }
}

/// True for `v + c` / `c + v` with `c` a positive integer constant.
fn is_increment(e: &Expr, v: &str) -> bool {
    let is_v = |x: &Expr| matches!(x, Expr::Sym(s) if s == v);
    let pos = |x: &Expr| x.as_int().is_some_and(|c| c > 0);
    match e {
        Expr::Binary(BinaryOp::Add, a, b) => (is_v(a) && pos(b)) || (is_v(b) && pos(a)),
        Expr::Binary(BinaryOp::Sub, a, b) => is_v(a) && b.as_int().is_some_and(|c| c < 0),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(var: &str, lo: Expr, hi: Expr) -> LoopRange {
        LoopRange {
            var: var.into(),
            lo,
            hi,
        }
    }

    #[test]
    fn affine_sizes_are_bounded_at_the_ends() {
        // M - i over i in [0, M - 1]: max(0, M, 1).
        let l = range(
            "i",
            Expr::Int(0),
            Expr::bin(BinaryOp::Sub, Expr::sym("M"), Expr::Int(1)),
        );
        let size = Expr::bin(BinaryOp::Sub, Expr::sym("M"), Expr::sym("i"));
        let b = bound_over_loops(&size, std::slice::from_ref(&l)).unwrap();
        let eval =
            |m: i64| crate::ir::simplify::eval_int(&b, &mut |n| (n == "M").then_some(m)).unwrap();
        assert_eq!(eval(10), 10);
        assert_eq!(eval(0), 1);
        // (i + 1) * N over i, then nothing else.
        let size = Expr::bin(
            BinaryOp::Mul,
            Expr::bin(BinaryOp::Add, Expr::sym("i"), Expr::Int(1)),
            Expr::sym("N"),
        );
        assert!(bound_over_loops(&size, std::slice::from_ref(&l)).is_some());
        // i * i is not affine: no bound.
        let sq = Expr::bin(BinaryOp::Mul, Expr::sym("i"), Expr::sym("i"));
        assert!(bound_over_loops(&sq, &[l]).is_none());
    }

    #[test]
    fn inner_ranges_depending_on_outer_variables() {
        // j in [0, i], i in [0, N - 1]: size j + 1 is at most N.
        let li = range(
            "i",
            Expr::Int(0),
            Expr::bin(BinaryOp::Sub, Expr::sym("N"), Expr::Int(1)),
        );
        let lj = range("j", Expr::Int(0), Expr::sym("i"));
        let size = Expr::bin(BinaryOp::Add, Expr::sym("j"), Expr::Int(1));
        let b = bound_over_loops(&size, &[li, lj]).unwrap();
        let v = crate::ir::simplify::eval_int(&b, &mut |n| (n == "N").then_some(7)).unwrap();
        assert_eq!(v, 7);
    }

    #[test]
    fn only_counted_loops_have_ranges() {
        let inits: HashMap<String, Expr> = [("i".to_string(), Expr::Int(0))].into();
        let cond = Expr::bin(BinaryOp::Lt, Expr::sym("i"), Expr::sym("M"));
        let inc = (
            "i".to_string(),
            Expr::bin(BinaryOp::Add, Expr::sym("i"), Expr::Int(1)),
        );
        assert!(counted(&cond, &inits, &[], Some(&inc)).is_some());
        // Decreasing, or also assigned in the body: no range.
        let dec = (
            "i".to_string(),
            Expr::bin(BinaryOp::Sub, Expr::sym("i"), Expr::Int(1)),
        );
        assert!(counted(&cond, &inits, &[], Some(&dec)).is_none());
        let set = ("i".to_string(), Expr::Int(5));
        assert!(counted(&cond, &inits, &[set], Some(&inc)).is_none());
        // The bound changes in the loop.
        let m = ("M".to_string(), Expr::Int(3));
        assert!(counted(&cond, &inits, &[m], Some(&inc)).is_none());
        // No initial value, no update.
        assert!(counted(&cond, &HashMap::new(), &[], Some(&inc)).is_none());
        assert!(counted(&cond, &inits, &[], None).is_none());
    }
}
