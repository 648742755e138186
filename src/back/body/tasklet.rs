//! Writes tasklets: connector declarations from memlets, the translated
//! Python code (with DaCe's semantics for integer `//`, `%` and `/`), and the
//! write-back of outputs, with write-conflict resolution.

use std::collections::{BTreeMap, BTreeSet};

use crate::back::body::dataflow::StateCtx;
use crate::back::body::function::{Access, FnWriter};
use crate::back::cexpr::{self, CExprPrinter};
use crate::diag::{Error, Result};
use crate::ir::simplify::simplify;
use crate::ir::*;

/// A tasklet connector as the generated code sees it.
#[derive(Clone, Debug)]
struct Conn {
    /// C++ variable name.
    var: String,
    /// Element type.
    dtype: DType,
    /// Pointer to the first element of the memlet's subset (indexed by the code).
    pointer: Option<PointerInfo>,
}

#[derive(Clone, Debug)]
struct PointerInfo {
    /// Strides of the dimensions the code indexes.
    strides: Vec<Expr>,
}

/// Names and types visible to tasklet code.
pub(crate) struct Scope<'a> {
    conns: &'a BTreeMap<String, Conn>,
    locals: &'a BTreeMap<String, DType>,
    sdfg: &'a Sdfg,
}

impl Scope<'_> {
    fn type_of_name(&self, n: &str) -> DType {
        if let Some(c) = self.conns.get(n) {
            return c.dtype;
        }
        if let Some(t) = self.locals.get(n) {
            return *t;
        }
        if let Some(t) = self.sdfg.symbol_type(n) {
            return t;
        }
        if let Some(d) = self.sdfg.arrays.get(n) {
            return d.dtype;
        }
        if let Some(c) = self.sdfg.constants.get(n) {
            return c.dtype;
        }
        DType::Int64
    }
}

/// The type of a Python expression (C-like promotion, Python true division).
fn infer(e: &Expr, s: &Scope) -> DType {
    match e {
        Expr::Int(v) => {
            if i32::try_from(*v).is_ok() {
                DType::Int32
            } else {
                DType::Int64
            }
        }
        Expr::Float(_) => DType::Float64,
        Expr::Bool(_) => DType::Bool,
        Expr::Sym(n) => s.type_of_name(n),
        Expr::Index(n, _) => s.type_of_name(n),
        Expr::Unary(UnaryOp::Not, _) => DType::Bool,
        Expr::Unary(_, a) => DType::promote(infer(a, s), DType::Int32),
        Expr::Binary(op, a, b) => {
            let (ta, tb) = (infer(a, s), infer(b, s));
            match op {
                BinaryOp::And | BinaryOp::Or => {
                    if ta == DType::Bool && tb == DType::Bool {
                        DType::Bool
                    } else {
                        DType::promote(ta, tb)
                    }
                }
                BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge => DType::Bool,
                BinaryOp::Div if !ta.is_float() && !tb.is_float() => DType::Float64,
                _ => DType::promote(ta, tb),
            }
        }
        Expr::Call(f, args) => {
            let t0 = args.first().map(|a| infer(a, s)).unwrap_or(DType::Float64);
            match f {
                Func::Cast(t) => *t,
                Func::IsNan | Func::IsInf => DType::Bool,
                Func::Min
                | Func::Max
                | Func::IntFloor
                | Func::IntCeil
                | Func::CMod
                | Func::Fmod
                | Func::CopySign
                | Func::Atan2
                | Func::Pow => {
                    let t1 = args.get(1).map(|a| infer(a, s)).unwrap_or(t0);
                    let t = DType::promote(t0, t1);
                    match f {
                        Func::Min | Func::Max | Func::IntFloor | Func::IntCeil | Func::CMod => t,
                        _ if t == DType::Float32 => DType::Float32,
                        _ => DType::Float64,
                    }
                }
                Func::Abs => t0,
                _ => {
                    if t0 == DType::Float32 {
                        DType::Float32
                    } else {
                        DType::Float64
                    }
                }
            }
        }
        Expr::Ternary(_, a, b) => DType::promote(infer(a, s), infer(b, s)),
    }
}

/// Rewrites Python operators into the forms whose C++ printing has DaCe's
/// semantics: integer `//` and `%` are C's truncating `/` and `%` (DaCe's
/// frontend already rewrote `a % b` into `(a + b) % b` where it wanted to),
/// integer `/` is true division.
fn lower(e: &Expr, s: &Scope) -> Expr {
    let rec = |x: &Expr| lower(x, s);
    match e {
        Expr::Binary(op, a, b) => {
            let (ta, tb) = (infer(a, s), infer(b, s));
            let ints = !ta.is_float() && !tb.is_float();
            let (la, lb) = (rec(a), rec(b));
            match op {
                BinaryOp::FloorDiv if ints => Expr::bin(BinaryOp::Div, la, lb),
                BinaryOp::Mod if ints => Expr::Call(Func::CMod, vec![la, lb]),
                BinaryOp::Div if ints => Expr::bin(
                    BinaryOp::Div,
                    Expr::Call(Func::Cast(DType::Float64), vec![la]),
                    lb,
                ),
                BinaryOp::Pow if ints => match lb {
                    Expr::Int(k) if (0..=3).contains(&k) => {
                        Expr::bin(BinaryOp::Pow, la, Expr::Int(k))
                    }
                    _ => Expr::Call(
                        Func::Cast(DType::Int64),
                        vec![Expr::Call(Func::Pow, vec![la, lb])],
                    ),
                },
                _ => Expr::bin(*op, la, lb),
            }
        }
        Expr::Unary(op, a) => Expr::Unary(*op, Box::new(rec(a))),
        // DaCe's `int_floor(a, b)` is `T(a / b)` and `int_ceil(a, b)` is
        // `T((a + b - 1) / b)` with `T` the type of `a` (dace/math.h): with a
        // floating-point operand (DaCe 2 stores `float(n) / 4` as
        // `int_floor(float(n), 4)`) that is a division, not a floor.
        Expr::Call(f @ (Func::IntFloor | Func::IntCeil), args)
            if args.len() == 2 && args.iter().any(|a| infer(a, s).is_float()) =>
        {
            let (la, lb) = (rec(&args[0]), rec(&args[1]));
            let num = match f {
                Func::IntCeil => Expr::bin(
                    BinaryOp::Sub,
                    Expr::bin(BinaryOp::Add, la, lb.clone()),
                    Expr::Int(1),
                ),
                _ => la,
            };
            Expr::Call(
                Func::Cast(infer(&args[0], s)),
                vec![Expr::bin(BinaryOp::Div, num, lb)],
            )
        }
        Expr::Call(f, args) => Expr::Call(*f, args.iter().map(rec).collect()),
        Expr::Ternary(c, a, b) => {
            Expr::Ternary(Box::new(rec(c)), Box::new(rec(a)), Box::new(rec(b)))
        }
        Expr::Index(n, idx) => Expr::Index(n.clone(), idx.iter().map(rec).collect()),
        other => other.clone(),
    }
}

impl<'a> FnWriter<'a> {
    /// Writes one tasklet.
    pub(crate) fn tasklet(&mut self, ctx: &StateCtx, id: NodeId, t: &Tasklet) -> Result<()> {
        let st = ctx.st;
        let node = &st.nodes[id.index()];
        let indexed = indexed_names(&t.stmts);
        let sdfg = self.sdfg;
        let reserved = |c: &str| sdfg.arrays.contains_key(c) || sdfg.symbols.contains_key(c);
        let var_of = |c: &str| {
            if reserved(c) {
                format!("__conn_{c}")
            } else {
                c.to_string()
            }
        };
        let mut conns: BTreeMap<String, Conn> = BTreeMap::new();
        self.out.line(format!("// tasklet {}", node.label));
        self.out.open("");
        // Inputs.
        for &ei in &ctx.adj.ins[id.index()] {
            let e = &st.edges[ei];
            let (Some(c), Some(data)) = (&e.dst_conn, &e.memlet.data) else {
                continue;
            };
            let d = self.data_desc(data, &e.path)?;
            let sub: &[RangeDim] = e.memlet.subset.as_deref().unwrap_or_default();
            let (dtype, is_ptr) =
                connector_kind(t.inputs.get(c), d, sub, indexed.contains(c.as_str()));
            let var = var_of(c);
            if is_ptr {
                let ptr = self.subset_pointer(data, d, sub);
                let strides = pointer_strides(d, sub, &t.stmts, c);
                self.out
                    .line(format!("const {} * {var} = {ptr};", d.dtype.ctype()));
                conns.insert(
                    c.clone(),
                    Conn {
                        var,
                        dtype,
                        pointer: Some(PointerInfo { strides }),
                    },
                );
            } else {
                let starts: Vec<Expr> = sub.iter().map(|r| r.start.clone()).collect();
                let value = self.element(data, d, &starts);
                self.out
                    .line(format!("const {} {var} = {value};", dtype.ctype()));
                conns.insert(
                    c.clone(),
                    Conn {
                        var,
                        dtype,
                        pointer: None,
                    },
                );
            }
        }
        // Outputs.
        let mut writebacks = Vec::new();
        let mut declared_outs = BTreeSet::new();
        for &ei in &ctx.adj.outs[id.index()] {
            let e = &st.edges[ei];
            let (Some(c), Some(data)) = (&e.src_conn, &e.memlet.data) else {
                continue;
            };
            let d = self.data_desc(data, &e.path)?;
            let sub: &[RangeDim] = e.memlet.subset.as_deref().unwrap_or_default();
            let (dtype, is_ptr) =
                connector_kind(t.outputs.get(c), d, sub, indexed.contains(c.as_str()));
            let var = var_of(c);
            if is_ptr {
                if e.memlet.wcr.is_some() {
                    return Err(Error::unsupported(
                        &e.path,
                        format!(
                            "tasklet '{}': array output '{c}' with write-conflict resolution",
                            node.label
                        ),
                    ));
                }
                if declared_outs.insert(c.clone()) {
                    let ptr = self.subset_pointer(data, d, sub);
                    let strides = pointer_strides(d, sub, &t.stmts, c);
                    self.out
                        .line(format!("{} * {var} = {ptr};", d.dtype.ctype()));
                    conns.insert(
                        c.clone(),
                        Conn {
                            var,
                            dtype,
                            pointer: Some(PointerInfo { strides }),
                        },
                    );
                }
                continue;
            }
            let starts: Vec<Expr> = sub.iter().map(|r| r.start.clone()).collect();
            let target = self.element(data, d, &starts);
            if e.memlet.dynamic && e.memlet.wcr.is_none() && !conns.contains_key(c) {
                // May or may not be written: bind by reference.
                if declared_outs.insert(c.clone()) {
                    self.out
                        .line(format!("{} &{var} = {target};", d.dtype.ctype()));
                    conns.insert(
                        c.clone(),
                        Conn {
                            var,
                            dtype: d.dtype,
                            pointer: None,
                        },
                    );
                }
                continue;
            }
            if declared_outs.insert(c.clone()) && !conns.contains_key(c) {
                self.out.line(format!("{} {var};", dtype.ctype()));
                conns.insert(
                    c.clone(),
                    Conn {
                        var: var.clone(),
                        dtype,
                        pointer: None,
                    },
                );
            }
            let var = conns[c].var.clone();
            let stmt = match &e.memlet.wcr {
                None => format!("{target} = {var};"),
                Some(w) => {
                    let atomic =
                        self.in_parallel && !self.is_private(data) && self.wcr_conflicts(sub);
                    self.wcr_update(w, &target, &var, d.dtype, atomic)
                }
            };
            writebacks.push(stmt);
        }
        // Code.
        match t.code.language {
            Language::Python => {
                let mut locals = BTreeMap::new();
                for s in &t.stmts {
                    let line = self.python_stmt(s, &conns, &mut locals, node)?;
                    self.out.line(line);
                }
            }
            Language::Cpp => {
                self.out.line(t.code.code.trim_end());
            }
        }
        for w in writebacks {
            self.out.line(w);
        }
        self.out.close();
        Ok(())
    }

    pub(crate) fn data_desc(&self, data: &str, path: &str) -> Result<&'a DataDesc> {
        let sdfg: &'a Sdfg = self.sdfg;
        sdfg.arrays
            .get(data)
            .ok_or_else(|| Error::invalid(path, format!("unknown data '{data}'")))
    }

    /// `&data[start of subset]`.
    pub(crate) fn subset_pointer(&self, data: &str, d: &DataDesc, sub: &[RangeDim]) -> String {
        match self.access.get(data) {
            Some(Access::Value(v)) => format!("&{v}"),
            _ => {
                let starts: Vec<Expr> = if sub.len() == d.rank() {
                    sub.iter().map(|r| r.start.clone()).collect()
                } else {
                    vec![Expr::Int(0); d.rank()]
                };
                format!("&{}", self.element(data, d, &starts))
            }
        }
    }

    fn python_stmt(
        &self,
        s: &Stmt,
        conns: &BTreeMap<String, Conn>,
        locals: &mut BTreeMap<String, DType>,
        node: &Node,
    ) -> Result<String> {
        let scope = Scope {
            conns,
            locals,
            sdfg: self.sdfg,
        };
        Ok(match s {
            Stmt::Assign { target, op, value } => {
                let value = match op {
                    None => value.clone(),
                    Some(op) => {
                        let lhs = match target {
                            Target::Name(n) => Expr::Sym(n.clone()),
                            Target::Index(n, i) => Expr::Index(n.clone(), i.clone()),
                        };
                        Expr::bin(*op, lhs, value.clone())
                    }
                };
                let t = infer(&value, &scope);
                let rhs = self.tasklet_expr(&value, &scope);
                match target {
                    Target::Name(n) => {
                        if let Some(c) = conns.get(n) {
                            if c.pointer.is_some() {
                                return Err(Error::unsupported(
                                    &node.path,
                                    format!(
                                        "tasklet '{}' assigns the array connector '{n}' as a whole",
                                        node.label
                                    ),
                                ));
                            }
                            format!("{} = {rhs};", c.var)
                        } else if locals.contains_key(n) {
                            format!("{n} = {rhs};")
                        } else {
                            locals.insert(n.clone(), t);
                            format!("{} {n} = {rhs};", t.ctype())
                        }
                    }
                    Target::Index(n, idx) => {
                        let lhs = self.tasklet_expr(&Expr::Index(n.clone(), idx.clone()), &scope);
                        format!("{lhs} = {rhs};")
                    }
                }
            }
            Stmt::Expr(e) => format!("{};", self.tasklet_expr(e, &scope)),
        })
    }

    /// Prints tasklet code with connector names and pointer indexing.
    fn tasklet_expr(&self, e: &Expr, scope: &Scope) -> String {
        let lowered = lower(e, scope);
        let name = |n: &str| match scope.conns.get(n) {
            Some(c) => c.var.clone(),
            None => match self.access.get(n) {
                Some(Access::Value(v)) => v.clone(),
                _ => n.to_string(),
            },
        };
        let index = |n: &str, idx: &[String]| match scope.conns.get(n) {
            Some(Conn {
                var,
                pointer: Some(p),
                ..
            }) => {
                let terms: Vec<String> = idx
                    .iter()
                    .enumerate()
                    .map(|(k, i)| {
                        let stride = p.strides.get(k).cloned().unwrap_or(Expr::Int(1));
                        match simplify(&stride) {
                            Expr::Int(1) => cexpr::wrap(i),
                            s => {
                                format!("{} * {}", cexpr::wrap(i), cexpr::wrap(&cexpr::to_cpp(&s)))
                            }
                        }
                    })
                    .collect();
                format!("{var}[{}]", terms.join(" + "))
            }
            _ => self.element_from_printed(n, idx),
        };
        CExprPrinter {
            name: &name,
            index: &index,
        }
        .print(&lowered)
    }

    /// True if every thread (or call) has its own copy of the container: a
    /// transient declared inside a map body, or any transient of a nested
    /// SDFG that is allocated per call.
    pub(crate) fn is_private(&self, data: &str) -> bool {
        if self.private_args.contains(data) {
            return true;
        }
        if self
            .sdfg
            .arrays
            .get(data)
            .is_some_and(|d| d.storage == Storage::GpuShared)
        {
            // One copy per thread block.
            return false;
        }
        match self.p.alloc.get(self.sdfg.id, data) {
            Some(t) => match t.memory {
                crate::passes::Memory::Local => {
                    matches!(t.scope, crate::passes::AllocScope::Map(..)) || self.sdfg.id != 0
                }
                crate::passes::Memory::Heap | crate::passes::Memory::Pool => self.sdfg.id != 0,
                _ => false,
            },
            None => false,
        }
    }

    /// Prints an interstate expression: data containers read by value
    /// (element 0, or the indexed element), DaCe's integer semantics.
    pub(crate) fn interstate_expr(&self, e: &Expr) -> String {
        let conns = BTreeMap::new();
        let locals = BTreeMap::new();
        let scope = Scope {
            conns: &conns,
            locals: &locals,
            sdfg: self.sdfg,
        };
        let lowered = lower(e, &scope);
        let name = |n: &str| match self.access.get(n) {
            Some(Access::Value(v)) => v.clone(),
            Some(Access::Ptr(p)) => format!("{p}[0]"),
            None => n.to_string(),
        };
        let index = |n: &str, idx: &[String]| self.element_from_printed(n, idx);
        CExprPrinter {
            name: &name,
            index: &index,
        }
        .print(&simplify(&lowered))
    }

    /// Whether parallel iterations may write the same element (then the
    /// update must be atomic): unless every parameter of the parallel map
    /// indexes some dimension that no other parallel parameter touches.
    fn wcr_conflicts(&self, sub: &[RangeDim]) -> bool {
        let Some(params) = &self.parallel_params else {
            return true;
        };
        !params.iter().all(|p| {
            sub.iter().any(|r| {
                let mut names = Vec::new();
                simplify(&r.start).visit_names(&mut |n| names.push(n.to_string()));
                names.iter().any(|n| n == p) && names.iter().all(|n| n == p || !params.contains(n))
            })
        })
    }

    /// An atomic write-conflict resolution in device code.
    fn gpu_atomic(&self, w: &Wcr, target: &str, value: &str, dtype: DType) -> String {
        let ct = dtype.ctype();
        let native_add = matches!(
            dtype,
            DType::Float32 | DType::Float64 | DType::Int32 | DType::UInt32
        );
        let native_minmax = matches!(dtype, DType::Int32 | DType::UInt32);
        match w.kind {
            WcrKind::Sum if native_add => format!("atomicAdd(&{target}, {ct}({value}));"),
            WcrKind::Sum if matches!(dtype, DType::Int64 | DType::UInt64) => format!(
                "atomicAdd(reinterpret_cast<unsigned long long *>(&{target}), static_cast<unsigned long long>({ct}({value})));"
            ),
            WcrKind::Min if native_minmax => format!("atomicMin(&{target}, {ct}({value}));"),
            WcrKind::Max if native_minmax => format!("atomicMax(&{target}, {ct}({value}));"),
            WcrKind::Replace => format!("{target} = {value};"),
            _ => {
                let (a, b) = (&w.params.0, &w.params.1);
                let name = |n: &str| {
                    if n == a {
                        "__old".to_string()
                    } else if n == b {
                        "__val".to_string()
                    } else {
                        n.to_string()
                    }
                };
                let index = |n: &str, idx: &[String]| format!("{n}[{}]", idx.join("]["));
                let f = CExprPrinter {
                    name: &name,
                    index: &index,
                }
                .print(&w.body);
                format!(
                    "sdfgc_gpu_atomic_update(&{target}, {ct}({value}), []({ct} __old, {ct} __val) {{ return {ct}({f}); }});"
                )
            }
        }
    }

    /// The update statement of a write-conflict resolution.
    pub(crate) fn wcr_update(
        &self,
        w: &Wcr,
        target: &str,
        value: &str,
        dtype: DType,
        atomic: bool,
    ) -> String {
        if atomic && self.in_kernel {
            return self.gpu_atomic(w, target, value, dtype);
        }
        let op = match w.kind {
            WcrKind::Sum => Some("+="),
            WcrKind::Product => Some("*="),
            WcrKind::BitAnd => Some("&="),
            WcrKind::BitOr => Some("|="),
            WcrKind::BitXor => Some("^="),
            _ => None,
        };
        if let Some(op) = op {
            if dtype == DType::Bool && matches!(w.kind, WcrKind::Sum) {
                let body = format!("{target} = {target} || {value};");
                return if atomic {
                    format!("#pragma omp critical\n{body}")
                } else {
                    body
                };
            }
            let body = format!("{target} {op} {value};");
            return if atomic {
                format!("#pragma omp atomic\n{body}")
            } else {
                body
            };
        }
        let (a, b) = (&w.params.0, &w.params.1);
        let combine = |old: &str, new: &str| {
            let name = |n: &str| {
                if n == a {
                    old.to_string()
                } else if n == b {
                    new.to_string()
                } else {
                    n.to_string()
                }
            };
            let index = |n: &str, idx: &[String]| format!("{n}[{}]", idx.join("]["));
            CExprPrinter {
                name: &name,
                index: &index,
            }
            .print(&w.body)
        };
        match (w.kind, atomic) {
            (WcrKind::Replace, _) => format!("{target} = {value};"),
            (WcrKind::Min, true) => {
                format!("sdfgc_atomic_min(&{target}, {}({value}));", dtype.ctype())
            }
            (WcrKind::Max, true) => {
                format!("sdfgc_atomic_max(&{target}, {}({value}));", dtype.ctype())
            }
            (_, true) => {
                let f = combine("__old", "__val");
                format!(
                    "sdfgc_atomic_update(&{target}, {}({value}), [](auto __old, auto __val) {{ return {f}; }});",
                    dtype.ctype()
                )
            }
            (_, false) => format!("{target} = {};", combine(target, &cexpr::wrap(value))),
        }
    }
}

/// A connector's element type and whether the code sees it as a pointer
/// (declared so, indexed by the code, or more than one element).
fn connector_kind(
    declared: Option<&ConnType>,
    d: &DataDesc,
    sub: &[RangeDim],
    indexed: bool,
) -> (DType, bool) {
    let declared = declared.copied().unwrap_or(ConnType::Unknown);
    let dtype = match declared {
        ConnType::Scalar(x) | ConnType::Pointer(x) => x,
        ConnType::Unknown => d.dtype,
    };
    let is_ptr = matches!(declared, ConnType::Pointer(_)) || indexed || !single_element(sub);
    (dtype, is_ptr)
}

fn single_element(sub: &[RangeDim]) -> bool {
    // `i:i` as written (the common case) needs no simplification.
    sub.iter().all(|r| {
        r.end == r.start
            || simplify(&Expr::bin(BinaryOp::Sub, r.end.clone(), r.start.clone())) == Expr::Int(0)
    })
}

/// Names that tasklet code indexes (`x[i]`).
fn indexed_names(stmts: &[Stmt]) -> BTreeSet<&str> {
    fn visit<'a>(e: &'a Expr, out: &mut BTreeSet<&'a str>) {
        match e {
            Expr::Index(n, idx) => {
                out.insert(n);
                idx.iter().for_each(|i| visit(i, out));
            }
            Expr::Unary(_, a) => visit(a, out),
            Expr::Binary(_, a, b) => {
                visit(a, out);
                visit(b, out);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| visit(a, out)),
            Expr::Ternary(c, a, b) => {
                visit(c, out);
                visit(a, out);
                visit(b, out);
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    for s in stmts {
        match s {
            Stmt::Assign { target, value, .. } => {
                if let Target::Index(n, idx) = target {
                    out.insert(n.as_str());
                    idx.iter().for_each(|i| visit(i, &mut out));
                }
                visit(value, &mut out);
            }
            Stmt::Expr(e) => visit(e, &mut out),
        }
    }
    out
}

/// Strides of the dimensions a pointer connector's code indexes: all of the
/// container's dimensions if the code uses that many indices, else those of
/// the subset's non-unit dimensions.
fn pointer_strides(d: &DataDesc, sub: &[RangeDim], stmts: &[Stmt], conn: &str) -> Vec<Expr> {
    let mut arity = None;
    for s in stmts {
        let e = match s {
            Stmt::Assign { target, value, .. } => {
                if let Target::Index(n, idx) = target
                    && n == conn
                {
                    arity = Some(idx.len());
                }
                value
            }
            Stmt::Expr(e) => e,
        };
        e.visit_index(&mut |n, idx| {
            if n == conn {
                arity = Some(idx.len());
            }
        });
    }
    match arity {
        Some(k) if k == d.rank() || sub.len() != d.rank() => d.strides.clone(),
        _ => {
            let nonunit: Vec<Expr> = sub
                .iter()
                .zip(&d.strides)
                .filter(|(r, _)| {
                    simplify(&Expr::bin(BinaryOp::Sub, r.end.clone(), r.start.clone()))
                        != Expr::Int(0)
                })
                .map(|(_, s)| s.clone())
                .collect();
            if nonunit.is_empty() {
                d.strides.clone()
            } else {
                nonunit
            }
        }
    }
}
