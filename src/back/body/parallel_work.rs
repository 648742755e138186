//! How much work a parallel CPU map holds, to decide whether it is worth a
//! parallel region.
//!
//! Forking and joining a team costs microseconds (tens of microseconds where
//! waiting threads sleep, `OMP_WAIT_POLICY=passive`); a map of a few thousand
//! additions does its work in less. Iterative kernels run such maps
//! thousands of times per call (NPBench's jacobi_1d: six maps of 3,200
//! elements per time step, 8x faster on one thread). A map whose work is
//! below the threshold (`--min-parallel-work`, 16,384 by default) runs on
//! the calling thread: it is written twice, its parallel loops taken from
//! the threshold on, or without a pragma where its work is a constant below
//! the threshold. The work is counted in tasklet executions,
//! those that call a function or divide counting [`CALL_WEIGHT`] each; a
//! map whose work cannot be counted (nested SDFGs, library calls, C++
//! tasklets, loops, ranges that depend on an outer map's parameters) stays
//! parallel, as DaCe writes it.

use crate::ir::simplify::{free_symbols, simplify};
use crate::ir::*;

/// Weight of a tasklet statement that calls a function or divides.
pub const CALL_WEIGHT: i64 = 8;

/// The work of map `id` (entry `m`) of state `st`, whose body nodes are
/// marked in `body`; None where it cannot be counted.
pub fn map_work(st: &State, id: NodeId, m: &MapEntry, body: &[bool]) -> Option<Expr> {
    let outer: Vec<&str> = m.params.iter().map(String::as_str).collect();
    let mut total: Option<Expr> = None;
    for (n, node) in st.nodes.iter().enumerate() {
        let nid = NodeId(n as u32);
        if !body[n] || nid == id {
            continue;
        }
        let cost = match &node.kind {
            NodeKind::Tasklet(t) => tasklet_cost(t)?,
            NodeKind::MapEntry(_) | NodeKind::MapExit { .. } | NodeKind::Access(_) => continue,
            _ => return None,
        };
        // Times the node runs per iteration of the map: the iterations of
        // the maps between it and the map.
        let mut times = Expr::Int(cost);
        for s in st.enclosing_scopes(nid) {
            if s == id {
                break;
            }
            let NodeKind::MapEntry(inner) = &st.nodes[s.index()].kind else {
                return None;
            };
            if !inner.dynamic_inputs.is_empty() {
                return None;
            }
            let own: Vec<&str> = inner.params.iter().map(String::as_str).collect();
            let mut params = outer.clone();
            params.extend(own);
            times = Expr::bin(BinaryOp::Mul, times, iterations(inner, &params)?);
        }
        total = Some(match total {
            None => times,
            Some(t) => Expr::bin(BinaryOp::Add, t, times),
        });
    }
    let own_iterations = iterations(m, &outer)?;
    Some(simplify(&Expr::bin(
        BinaryOp::Mul,
        own_iterations,
        total.unwrap_or(Expr::Int(0)),
    )))
}

/// The iterations of `m`'s ranges, an upper bound where a step is not 1;
/// None where a range names one of `params` (a map's own or an enclosing
/// map's parameter: a triangular nest).
fn iterations(m: &MapEntry, params: &[&str]) -> Option<Expr> {
    let mut n = Expr::Int(1);
    for r in &m.range {
        for e in [&r.start, &r.end, &r.step] {
            if free_symbols(e).iter().any(|s| params.contains(&s.as_str())) {
                return None;
            }
        }
        let len = match simplify(&r.step).as_int() {
            Some(s) if s < 0 => Expr::bin(BinaryOp::Sub, r.start.clone(), r.end.clone()),
            _ => Expr::bin(BinaryOp::Sub, r.end.clone(), r.start.clone()),
        };
        let len = Expr::bin(BinaryOp::Add, len, Expr::Int(1));
        n = Expr::bin(BinaryOp::Mul, n, len);
    }
    Some(n)
}

/// The cost of one execution of `t`: 1, plus [`CALL_WEIGHT`] for each call
/// or division in its statements; None for C++ code and loops.
fn tasklet_cost(t: &Tasklet) -> Option<i64> {
    if t.stmts.is_empty() {
        return None;
    }
    let mut cost = 1;
    for s in &t.stmts {
        cost += stmt_cost(s)?;
    }
    Some(cost)
}

fn stmt_cost(s: &Stmt) -> Option<i64> {
    Some(match s {
        Stmt::Assign { value, .. } | Stmt::Chain { value, .. } => expr_cost(value),
        Stmt::Expr(e) => expr_cost(e),
        Stmt::If {
            cond,
            then,
            otherwise,
        } => {
            let mut c = expr_cost(cond);
            for s in then.iter().chain(otherwise) {
                c += stmt_cost(s)?;
            }
            c
        }
        _ => return None,
    })
}

fn expr_cost(e: &Expr) -> i64 {
    match e {
        Expr::Call(_, args) => CALL_WEIGHT + args.iter().map(expr_cost).sum::<i64>(),
        Expr::Binary(op, a, b) => {
            let own = match op {
                BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::Mod | BinaryOp::Pow => CALL_WEIGHT,
                _ => 0,
            };
            own + expr_cost(a) + expr_cost(b)
        }
        Expr::Unary(_, a) | Expr::Field(a, _) => expr_cost(a),
        Expr::Ternary(c, a, b) => expr_cost(c) + expr_cost(a) + expr_cost(b),
        Expr::Index(_, idx) => idx.iter().map(expr_cost).sum(),
        Expr::Record(_, fs) => fs.iter().map(|(_, v)| expr_cost(v)).sum(),
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Sym(_) => 0,
    }
}
