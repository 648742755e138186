//! The types of symbols assigned in control flow (interstate edges and loop
//! variables), inferred as DaCe infers them.
//!
//! DaCe declares such a symbol with the type of its first assigned
//! expression (`InterstateEdge.new_symbols`, `codegen/tools/type_inference.py`
//! `infer_expr_type`, `dtypes.result_type_of`; `DaCeCodeGenerator` walks the
//! regions of one SDFG parent first and each region's edges depth first from
//! its start block). A type declared in the SDFG's `symbols` always wins; so
//! it is for the symbols a nested SDFG receives through its symbol mapping.
//! `__tmp0 = x[i]` with `x` a `float32` array declares `float __tmp0`.

use crate::ir::dtype::DType;
use crate::ir::expr::{BinaryOp, Expr, Func, Stmt, Target};
use crate::ir::sdfg::{BlockKind, NameMap, NestedSdfg, NodeKind, Region, RegionKind, Sdfg};

/// DaCe's `dtypes.result_type_of` for two types (C rules: the wider integer,
/// unsigned on a tie; any non-integer over an integer, so `bool` absorbs
/// integers; the wider of two others, the right one on a tie; complex with
/// a real type as numpy promotes them). `None` (not inferred) yields the other.
pub fn result_type_of(a: Option<DType>, b: Option<DType>) -> Option<DType> {
    let (a, b) = match (a, b) {
        (None, x) | (x, None) => return x,
        (Some(a), Some(b)) => (a, b),
    };
    if a == b {
        return Some(a);
    }
    let unsigned = |t: DType| {
        matches!(
            t,
            DType::UInt8 | DType::UInt16 | DType::UInt32 | DType::UInt64
        )
    };
    let complex = |t: DType| matches!(t, DType::Complex64 | DType::Complex128);
    Some(match (a.is_integer(), b.is_integer()) {
        (true, true) if a.size() != b.size() => {
            if a.size() > b.size() {
                a
            } else {
                b
            }
        }
        (true, true) => {
            if unsigned(a) {
                a
            } else {
                b
            }
        }
        (true, false) => b,
        (false, true) => a,
        (false, false) if complex(a) != complex(b) => {
            let (c, r) = if complex(a) { (a, b) } else { (b, a) };
            // numpy: a complex wide enough for the real side's precision.
            if c == DType::Complex64 && r == DType::Float64 {
                DType::Complex128
            } else {
                c
            }
        }
        (false, false) => {
            if a.size() > b.size() {
                a
            } else {
                b
            }
        }
    })
}

/// DaCe's `infer_expr_type` of an expression: `lookup` gives the type of a
/// name (a symbol, or a container's element type), `None` where unknown.
/// Integer literals are `int64` and floating-point ones `float64` (Python's
/// `int` and `float`); comparisons and `and`/`or` are `bool`; a unary
/// operator keeps its operand's type (`not i` too); `x ** k` for a literal
/// `k >= 0` is `result_type_of(x, uint32)`; a cast has its type; other calls
/// (math functions, `min`, `abs`, ...) have the type of their arguments.
pub fn expr_type(e: &Expr, lookup: &dyn Fn(&str) -> Option<DType>) -> Option<DType> {
    let t = |x: &Expr| expr_type(x, lookup);
    match e {
        Expr::Int(_) => Some(DType::Int64),
        Expr::Float(_) => Some(DType::Float64),
        Expr::Bool(_) => Some(DType::Bool),
        Expr::Sym(n) | Expr::Index(n, _) => lookup(n),
        Expr::Unary(_, a) => t(a),
        Expr::Binary(op, a, b) => match op {
            _ if op.yields_bool() => Some(DType::Bool),
            BinaryOp::Pow if literal_exponent(b) => result_type_of(t(a), Some(DType::UInt32)),
            _ => result_type_of(t(a), t(b)),
        },
        Expr::Call(Func::Cast(to), _) => Some(*to),
        Expr::Call(_, args) => args.iter().fold(None, |acc, x| result_type_of(acc, t(x))),
        Expr::Ternary(_, a, b) => result_type_of(t(a), t(b)),
        Expr::Field(a, f) => match t(a) {
            Some(DType::Record(r)) => r.field(f),
            _ => None,
        },
        Expr::Record(..) => None,
    }
}

/// A literal, integral, non-negative exponent (`x ** 2`, `x ** 2.0`).
fn literal_exponent(e: &Expr) -> bool {
    match e {
        Expr::Int(v) => *v >= 0,
        Expr::Float(v) => *v >= 0.0 && v.fract() == 0.0,
        _ => false,
    }
}

/// Fills [`Sdfg::assigned_types`] of `sdfg` and of every nested SDFG, outer
/// ones first. A nested SDFG's symbol that its mapping passes in but its
/// `symbols` do not declare (DaCe requires a declaration) gets the type of
/// the outer expression.
pub fn infer_tree(sdfg: &mut Sdfg) {
    let types = interstate_types(sdfg);
    sdfg.assigned_types.extend(types);
    let outer: &Sdfg = sdfg;
    let mut seeds = Vec::new();
    visit_nested(
        &outer.body,
        &mut |ns| {
            ns.symbol_mapping
                .iter()
                .filter(|(k, _)| {
                    !ns.sdfg.symbols.contains_key(*k) && !ns.sdfg.callbacks.contains_key(*k)
                })
                .filter_map(|(k, v)| Some((k.clone(), expr_type(v, &|n| outer_type(outer, n))?)))
                .collect::<Vec<_>>()
        },
        &mut seeds,
    );
    let mut seeds = seeds.into_iter();
    visit_nested_mut(&mut sdfg.body, &mut |ns| {
        ns.sdfg
            .assigned_types
            .extend(seeds.next().unwrap_or_default());
        infer_tree(&mut ns.sdfg);
    });
}

/// The type of a name in an SDFG's own scope.
fn outer_type(sdfg: &Sdfg, n: &str) -> Option<DType> {
    sdfg.symbol_type(n)
        .or_else(|| sdfg.arrays.get(n).map(|d| d.dtype))
        .or_else(|| sdfg.constants.get(n).map(|c| c.dtype))
}

/// Calls `f` on every nested SDFG node directly in `r` (not inside other
/// nested SDFGs), in a fixed order, collecting the results.
fn visit_nested<T>(r: &Region, f: &mut dyn FnMut(&NestedSdfg) -> T, out: &mut Vec<T>) {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => {
                for n in &st.nodes {
                    if let NodeKind::Nested(ns) = &n.kind {
                        out.push(f(ns));
                    }
                }
            }
            BlockKind::Region(inner) => visit_nested(inner, f, out),
            BlockKind::Conditional(branches) => branches
                .iter()
                .for_each(|(_, body)| visit_nested(body, f, out)),
            _ => {}
        }
    }
}

/// [`visit_nested`] with mutable access, in the same order.
fn visit_nested_mut(r: &mut Region, f: &mut dyn FnMut(&mut NestedSdfg)) {
    for b in &mut r.blocks {
        match &mut b.kind {
            BlockKind::State(st) => {
                for n in &mut st.nodes {
                    if let NodeKind::Nested(ns) = &mut n.kind {
                        f(ns);
                    }
                }
            }
            BlockKind::Region(inner) => visit_nested_mut(inner, f),
            BlockKind::Conditional(branches) => branches
                .iter_mut()
                .for_each(|(_, body)| visit_nested_mut(body, f)),
            _ => {}
        }
    }
}

/// The types of the symbols one SDFG (not its nested SDFGs) assigns in its
/// control flow and does not declare, in the order DaCe meets them.
///
/// Where DaCe's rules leave a type unknown only because of the order (a
/// loop variable initialised from a symbol an edge of its body assigns), the
/// type is taken from what the other assignments defined. A symbol whose
/// type stays unknown (its value names something undefined, which
/// validation refuses) is left out.
pub fn interstate_types(sdfg: &Sdfg) -> NameMap<DType> {
    let mut known = Known {
        sdfg,
        inferred: NameMap::default(),
    };
    known.region(&sdfg.body);
    // Second chance for the unknown ones, with everything the others defined.
    loop {
        let mut progress = false;
        for i in 0..known.inferred.len() {
            if known.inferred[i].dtype.is_none() {
                let t = known.value_type(&known.inferred[i].value);
                known.inferred[i].dtype = t;
                progress |= t.is_some();
            }
        }
        if !progress {
            break;
        }
    }
    known
        .inferred
        .into_iter()
        .filter_map(|(k, a)| Some((k, a.dtype?)))
        .collect()
}

/// A symbol's first assignment and its type.
struct Assigned {
    /// Inferred type (None: not yet).
    dtype: Option<DType>,
    /// What types it.
    value: Value,
}

/// What a symbol's type comes from.
#[derive(Clone)]
enum Value {
    /// An interstate edge's assigned expression.
    Expr(Expr),
    /// A loop's variable.
    Loop {
        var: String,
        init: Vec<Stmt>,
        update: Vec<Stmt>,
        condition: Expr,
    },
}

/// The types known while walking one SDFG.
struct Known<'a> {
    sdfg: &'a Sdfg,
    /// Assigned symbols, in the order met.
    inferred: NameMap<Assigned>,
}

impl Known<'_> {
    fn lookup(&self, n: &str) -> Option<DType> {
        if let Some(t) = self.sdfg.symbol_type(n) {
            return Some(t);
        }
        if let Some(d) = self.sdfg.arrays.get(n) {
            return Some(d.dtype);
        }
        if let Some(t) = self.inferred.get(n).and_then(|a| a.dtype) {
            return Some(t);
        }
        self.sdfg.constants.get(n).map(|c| c.dtype)
    }

    fn value_type(&self, v: &Value) -> Option<DType> {
        match v {
            Value::Expr(e) => expr_type(e, &|n| self.lookup(n)),
            Value::Loop {
                var,
                init,
                update,
                condition,
            } => self.loop_variable(var, init, update, condition),
        }
    }

    /// Records a type unless the name is declared or already has one.
    fn define(&mut self, name: &str, t: Option<DType>, value: Value) {
        if self.sdfg.symbol_type(name).is_some() || self.sdfg.arrays.contains_key(name) {
            return;
        }
        match self.inferred.get_mut(name) {
            Some(a) if a.dtype.is_some() => {}
            Some(a) => {
                if t.is_some() {
                    *a = Assigned { dtype: t, value };
                }
            }
            None => {
                self.inferred
                    .insert(name.to_string(), Assigned { dtype: t, value });
            }
        }
    }

    /// A region, then the regions it contains (DaCe 2's order: a loop's
    /// variable before the edges of its body).
    fn region(&mut self, r: &Region) {
        // DaCe types a loop variable only when the loop initialises it.
        if let RegionKind::Loop(l) = &r.kind
            && let Some(v) = &l.variable
            && !l.init.is_empty()
        {
            let t = self.loop_variable(v, &l.init, &l.update, &l.condition);
            let value = Value::Loop {
                var: v.clone(),
                init: l.init.clone(),
                update: l.update.clone(),
                condition: l.condition.clone(),
            };
            self.define(v, t, value);
        }
        for e in dfs_edges(r) {
            let edge = &r.edges[e];
            // Every value is typed with what was known before the edge.
            let types: Vec<Option<DType>> = edge
                .assignments
                .iter()
                .map(|(_, v)| expr_type(v, &|n| self.lookup(n)))
                .collect();
            // A symbol that an assignment of the edge (up to its own) reads is not new.
            let mut read = std::collections::BTreeSet::new();
            for ((k, v), t) in edge.assignments.iter().zip(types) {
                v.visit_names(&mut |n| {
                    read.insert(n.to_string());
                });
                if !read.contains(k) {
                    self.define(k, t, Value::Expr(v.clone()));
                }
            }
        }
        for b in &r.blocks {
            match &b.kind {
                BlockKind::Region(inner) => self.region(inner),
                BlockKind::Conditional(branches) => {
                    branches.iter().for_each(|(_, body)| self.region(body))
                }
                _ => {}
            }
        }
    }

    /// `result_type_of(start, stride, end)` of a loop (DaCe's `loop_analysis`).
    fn loop_variable(
        &self,
        var: &str,
        init: &[Stmt],
        update: &[Stmt],
        condition: &Expr,
    ) -> Option<DType> {
        let assigned = |stmts: &[Stmt]| {
            stmts.iter().find_map(|s| match s {
                Stmt::Assign {
                    target: Target::Name(n),
                    op: None,
                    value,
                } if n == var => Some(value.clone()),
                _ => None,
            })
        };
        let ty = |e: &Expr| expr_type(e, &|n| self.lookup(n));
        let start = assigned(init).and_then(|e| ty(&e));
        // The stride: `var = var + s` or `var = var - s` (`var += s` too).
        let is_var = |e: &Expr| matches!(e, Expr::Sym(n) if n == var);
        let stride = update.iter().find_map(|s| match s {
            Stmt::Assign {
                target: Target::Name(n),
                op: Some(BinaryOp::Add | BinaryOp::Sub),
                value,
            } if n == var => Some(ty(value)),
            Stmt::Assign {
                target: Target::Name(n),
                op: None,
                value: Expr::Binary(BinaryOp::Add | BinaryOp::Sub, a, b),
            } if n == var => {
                if is_var(a) {
                    Some(ty(b))
                } else if is_var(b) {
                    Some(ty(a))
                } else {
                    None
                }
            }
            _ => None,
        });
        // The end: `var < e` is `e - 1`, `var <= e` is `e` (and mirrored).
        let end = match condition {
            Expr::Binary(op, a, b) => {
                let (op, other) = if is_var(a) {
                    (Some(*op), b)
                } else if is_var(b) {
                    (mirror(*op), a)
                } else {
                    (None, a)
                };
                match op {
                    Some(BinaryOp::Lt | BinaryOp::Gt) => {
                        result_type_of(ty(other), Some(DType::Int64))
                    }
                    Some(BinaryOp::Le | BinaryOp::Ge) => ty(other),
                    _ => None,
                }
            }
            _ => None,
        };
        result_type_of(result_type_of(start, stride.flatten()), end)
    }
}

/// `b op a` written as `a op' b`.
fn mirror(op: BinaryOp) -> Option<BinaryOp> {
    Some(match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::Le => BinaryOp::Ge,
        BinaryOp::Ge => BinaryOp::Le,
        _ => return None,
    })
}

/// The edges of a region reachable from its start block, in DaCe's
/// `dfs_edges` order (each block's out-edges in edge order).
fn dfs_edges(r: &Region) -> Vec<usize> {
    let Some(start) = r.start else {
        return Vec::new();
    };
    let out_edges = r.out_edge_lists();
    let mut visited = vec![false; r.blocks.len()];
    visited[start.index()] = true;
    let mut order = Vec::with_capacity(r.edges.len());
    let mut stack = vec![(start.index(), 0usize)];
    while let Some((b, next)) = stack.last_mut() {
        let Some(&e) = out_edges[*b].get(*next) else {
            stack.pop();
            continue;
        };
        *next += 1;
        let dst = r.edges[e].dst.index();
        if !visited[dst] {
            visited[dst] = true;
            stack.push((dst, 0));
        }
        order.push(e);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::python::parse_expr;
    use DType::*;

    fn ty(src: &str) -> Option<DType> {
        let e = parse_expr(src).unwrap();
        expr_type(&e, &|n| match n {
            "x" => Some(Float32),
            "i" => Some(Int32),
            "n" => Some(Int64),
            "b" => Some(Bool),
            "u" => Some(UInt32),
            _ => None,
        })
    }

    /// Each case is what DaCe 1.0.2's `infer_expr_type` answers.
    #[test]
    fn expression_types_follow_dace() {
        for (src, want) in [
            ("x[i]", Some(Float32)),
            ("(x[i])", Some(Float32)),
            ("x[i] * 0.5", Some(Float64)),
            ("i * 2", Some(Int64)),
            ("i ** 2", Some(UInt32)),
            ("n ** 2", Some(Int64)),
            ("i / 2", Some(Int64)),
            ("i // 2", Some(Int64)),
            ("1", Some(Int64)),
            ("-1", Some(Int64)),
            ("True", Some(Bool)),
            ("b + i", Some(Bool)),
            ("i + b", Some(Bool)),
            ("1.5", Some(Float64)),
            ("min(i, n)", Some(Int64)),
            ("abs(x[i])", Some(Float32)),
            ("int(x[i])", Some(Int64)),
            ("float(i)", Some(Float64)),
            ("dace.float32(i)", Some(Float32)),
            ("bool(i)", Some(Bool)),
            ("i if b else x[i]", Some(Float32)),
            ("not i", Some(Int32)),
            ("-x[i]", Some(Float32)),
            ("i < 3", Some(Bool)),
            ("i and n", Some(Bool)),
            ("u + i", Some(UInt32)),
            ("i + u", Some(UInt32)),
            ("u * 2", Some(Int64)),
            ("x", Some(Float32)),
            ("math.floor(x[i])", Some(Float32)),
            ("i % 3", Some(Int64)),
            ("i * 1.0", Some(Float64)),
            ("x[i] > 0 and True", Some(Bool)),
            ("q", None),
            ("q + i", Some(Int32)),
        ] {
            assert_eq!(ty(src), want, "{src}");
        }
    }

    #[test]
    fn result_types_follow_dace() {
        let r = |a, b| result_type_of(Some(a), Some(b)).unwrap();
        assert_eq!(r(Int32, Int64), Int64);
        assert_eq!(r(Int64, UInt64), UInt64);
        assert_eq!(r(UInt64, Int64), UInt64);
        assert_eq!(r(Int8, Bool), Bool);
        assert_eq!(r(Bool, Float32), Float32);
        assert_eq!(r(Float64, Float32), Float64);
        assert_eq!(r(Float32, Int64), Float32);
        assert_eq!(r(Complex64, Float64), Complex128);
        assert_eq!(r(Float32, Complex64), Complex64);
        assert_eq!(result_type_of(None, Some(Int32)), Some(Int32));
    }

    /// An SDFG with states `s0 .. s{n}` in a chain whose edges carry `edges`
    /// (one assignment map each), containers `x: float32[N]` and `y: float64[N]`,
    /// extra `symbols`, and the nodes of its last state.
    fn sdfg_json(name: &str, symbols: &str, edges: &[&str], last: &str) -> String {
        let states: Vec<String> = (0..=edges.len())
            .map(|i| {
                let nodes = if i == edges.len() { last } else { "" };
                format!(
                    r#"{{"type": "SDFGState", "label": "s{i}", "id": {i}, "nodes": [{nodes}], "edges": []}}"#
                )
            })
            .collect();
        let es: Vec<String> = edges
            .iter()
            .enumerate()
            .map(|(i, a)| {
                format!(
                    r#"{{"type": "Edge", "attributes": {{"data": {{"type": "InterstateEdge", "attributes": {{"assignments": {{{a}}}}}}}}}, "src": "{i}", "dst": "{}"}}"#,
                    i + 1
                )
            })
            .collect();
        let arr = |t: &str| {
            format!(
                r#"{{"type": "Array", "attributes": {{"shape": ["N"], "strides": ["1"], "total_size": "N", "offset": ["0"], "dtype": "{t}"}}}}"#
            )
        };
        format!(
            r#"{{"type": "SDFG", "attributes": {{"name": "{name}", "_arrays": {{"x": {}, "y": {}}}, "symbols": {{"N": "int32"{symbols}}}}}, "nodes": [{}], "edges": [{}], "start_block": 0}}"#,
            arr("float32"),
            arr("float64"),
            states.join(", "),
            es.join(", ")
        )
    }

    fn types(sdfg: &Sdfg) -> Vec<(String, DType)> {
        let mut v: Vec<_> = sdfg
            .assigned_types
            .iter()
            .map(|(k, t)| (k.clone(), *t))
            .collect();
        v.sort();
        v
    }

    fn owned(v: &[(&str, DType)]) -> Vec<(String, DType)> {
        let mut v: Vec<_> = v.iter().map(|(k, t)| (k.to_string(), *t)).collect();
        v.sort();
        v
    }

    /// Edges typed in order, the first assignment wins, a declared type
    /// wins, a symbol an edge reads is not redefined by it, and the values
    /// of one edge are typed with what was known before the edge (DaCe's
    /// `new_symbols`: `u = t * 2` next to `t = x[i]` is `int64`).
    #[test]
    fn interstate_symbols_are_typed_as_dace_types_them() {
        let text = sdfg_json(
            "top",
            r#", "d": "float64""#,
            &[
                r#""i": "0", "lo": "y[0]", "d": "0""#,
                r#""t": "x[i]", "u": "t * 2", "b": "(t < lo)", "h": "(y[i] * 0.5)", "k": "N""#,
                r#""i": "(i + 1)", "v": "t * 2", "t": "1", "w": "i ** 2", "m": "min(x[i], 2)""#,
            ],
            "",
        );
        let sdfg = crate::front::json::load_str(&text).unwrap();
        assert_eq!(
            types(&sdfg),
            owned(&[
                ("i", Int64),
                ("lo", Float64),
                ("t", Float32),
                ("u", Int64),
                ("b", Bool),
                ("h", Float64),
                ("k", Int32),
                ("v", Float32),
                ("w", Int64),
                ("m", Float32),
            ])
        );
        assert_eq!(sdfg.symbol_type("d"), Some(Float64));
    }

    /// A nested SDFG's interstate symbols are typed with its own declared
    /// symbols (those its mapping passes in) and containers; a mapped symbol
    /// it does not declare gets the type of the outer expression.
    #[test]
    fn nested_sdfgs_are_typed_with_their_own_symbols() {
        let inner = sdfg_json(
            "inner",
            r#", "s": "float64""#,
            &[r#""a": "s", "b": "(x[0] * r)", "c": "(q + 1)""#],
            "",
        );
        let node = format!(
            r#"{{"type": "NestedSDFG", "label": "n", "id": 0, "scope_entry": null, "attributes": {{"sdfg": {inner}, "symbol_mapping": {{"N": "N", "s": "lo", "r": "t", "q": "N"}}, "in_connectors": {{}}, "out_connectors": {{}}}}}}"#
        );
        let text = sdfg_json("top", "", &[r#""lo": "y[0]", "t": "x[1]""#], &node);
        let sdfg = crate::front::json::load_str(&text).unwrap();
        assert_eq!(types(&sdfg), owned(&[("lo", Float64), ("t", Float32)]));
        let BlockKind::State(st) = &sdfg.body.blocks[1].kind else {
            panic!("not a state")
        };
        let NodeKind::Nested(ns) = &st.nodes[0].kind else {
            panic!("not a nested SDFG")
        };
        assert_eq!(
            types(&ns.sdfg),
            owned(&[
                ("r", Float32),
                ("q", Int32),
                ("a", Float64),
                ("b", Float32),
                ("c", Int64),
            ])
        );
    }
}
