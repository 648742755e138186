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
    /// Tasklet code (DaCe prints `/` unchanged: C division of integers)
    /// rather than an interstate expression.
    tasklet: bool,
}

/// Local variables of tasklet code, declared as DaCe's C++ declares them:
/// on first assignment (`auto x = ...`, here with the type that `auto`
/// deduces), scoped to the C++ block (`if`/`for` body) they are declared in.
#[derive(Default)]
struct Locals {
    /// Visible locals and their types.
    types: BTreeMap<String, DType>,
    /// Names declared in each open block (the code itself is block 0).
    blocks: Vec<Vec<String>>,
    /// Locals whose block has closed (not visible in DaCe's C++).
    gone: BTreeSet<String>,
}

impl Locals {
    fn declare(&mut self, n: &str, t: DType) {
        self.types.insert(n.to_string(), t);
        self.gone.remove(n);
        if let Some(b) = self.blocks.last_mut() {
            b.push(n.to_string());
        }
    }

    fn close_block(&mut self) {
        for n in self.blocks.pop().unwrap_or_default() {
            self.types.remove(&n);
            self.gone.insert(n);
        }
    }
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
                // Printed as C++ `&&` / `||`, which yield `bool`.
                BinaryOp::And
                | BinaryOp::Or
                | BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge => DType::Bool,
                BinaryOp::Div if !ta.is_float() && !tb.is_float() && !s.tasklet => DType::Float64,
                // DaCe's `dace::math::ifloor(a / b)`: `int` for floating operands.
                BinaryOp::FloorDiv if ta.is_float() || tb.is_float() => DType::Int32,
                _ => DType::promote(ta, tb),
            }
        }
        Expr::Call(f, args) => {
            let t0 = args.first().map(|a| infer(a, s)).unwrap_or(DType::Float64);
            match f {
                Func::Cast(t) => *t,
                Func::IsNan | Func::IsInf | Func::IsFinite | Func::SignBit => DType::Bool,
                Func::IFloor if t0.is_float() => DType::Int32,
                Func::IFloor | Func::Sign | Func::Reciprocal => t0,
                Func::Min
                | Func::Max
                | Func::IntFloor
                | Func::IntCeil
                | Func::CMod
                | Func::Fmod
                | Func::CopySign
                | Func::Atan2
                | Func::Hypot
                | Func::Fmin
                | Func::Fmax
                | Func::Remainder
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
                // `dace::math::ifloor(a / b)`: `(int)floor(a / b)`.
                BinaryOp::FloorDiv => Expr::Call(
                    Func::Cast(DType::Int32),
                    vec![Expr::Call(
                        Func::Floor,
                        vec![Expr::bin(BinaryOp::Div, la, lb)],
                    )],
                ),
                BinaryOp::Mod if ints => Expr::Call(Func::CMod, vec![la, lb]),
                BinaryOp::Div if ints && s.tasklet => Expr::bin(BinaryOp::Div, la, lb),
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
        // `dace::math::ifloor(x)`: identity on integers, `(int)floor(x)` otherwise.
        Expr::Call(Func::IFloor, args) if args.len() == 1 => {
            let a = rec(&args[0]);
            if infer(&args[0], s).is_float() {
                Expr::Call(
                    Func::Cast(DType::Int32),
                    vec![Expr::Call(Func::Floor, vec![a])],
                )
            } else {
                a
            }
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
        let assigned: BTreeSet<&str> = all_stmts(&t.stmts)
            .into_iter()
            .filter_map(|s| match s {
                Stmt::Assign {
                    target: Target::Name(n),
                    ..
                } => Some(n.as_str()),
                _ => None,
            })
            .collect();
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
                // DaCe declares input values as copies the code may assign.
                let cv = if assigned.contains(c.as_str()) {
                    ""
                } else {
                    "const "
                };
                self.out
                    .line(format!("{cv}{} {var} = {value};", dtype.ctype()));
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
                let mut locals = Locals {
                    blocks: vec![Vec::new()],
                    ..Default::default()
                };
                self.python_block(&t.stmts, &conns, &mut locals, node)?;
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

    /// Writes a block of tasklet statements; locals declared in it are
    /// scoped to it, as in DaCe's C++.
    fn python_block(
        &mut self,
        stmts: &[Stmt],
        conns: &BTreeMap<String, Conn>,
        locals: &mut Locals,
        node: &Node,
    ) -> Result<()> {
        for s in stmts {
            self.python_stmt(s, conns, locals, node)?;
        }
        Ok(())
    }

    /// Writes `{ stmts }` as a nested C++ block (the caller opened it).
    fn python_nested(
        &mut self,
        stmts: &[Stmt],
        conns: &BTreeMap<String, Conn>,
        locals: &mut Locals,
        node: &Node,
    ) -> Result<()> {
        locals.blocks.push(Vec::new());
        let r = self.python_block(stmts, conns, locals, node);
        locals.close_block();
        r
    }

    fn python_stmt(
        &mut self,
        s: &Stmt,
        conns: &BTreeMap<String, Conn>,
        locals: &mut Locals,
        node: &Node,
    ) -> Result<()> {
        let refuse = |what: String| {
            Err(Error::unsupported(
                &node.path,
                format!("tasklet '{}': {what}", node.label),
            ))
        };
        // A local whose block has closed does not exist in DaCe's C++.
        for e in s.own_exprs() {
            let mut dead = None;
            e.visit_names(&mut |n| {
                if dead.is_none() && locals.gone.contains(n) && !locals.types.contains_key(n) {
                    dead = Some(n.to_string());
                }
            });
            if let Some(n) = dead {
                return refuse(format!(
                    "local variable '{n}' is used outside the 'if'/'for' block that assigns it \
                     (DaCe declares it inside that C++ block)"
                ));
            }
        }
        let scope = Scope {
            conns,
            locals: &locals.types,
            sdfg: self.sdfg,
            tasklet: true,
        };
        match s {
            Stmt::Assign { target, op, value } => {
                let value = match op {
                    None => value.clone(),
                    Some(op) => {
                        if let Target::Name(n) = target
                            && !conns.contains_key(n)
                            && !locals.types.contains_key(n)
                        {
                            return refuse(format!(
                                "augmented assignment to '{n}' before it has a value"
                            ));
                        }
                        let lhs = match target {
                            Target::Name(n) => Expr::Sym(n.clone()),
                            Target::Index(n, i) => Expr::Index(n.clone(), i.clone()),
                        };
                        Expr::bin(*op, lhs, value.clone())
                    }
                };
                let t = infer(&value, &scope);
                let rhs = self.tasklet_expr(&value, &scope);
                let line = match target {
                    Target::Name(n) => {
                        if let Some(c) = conns.get(n) {
                            if c.pointer.is_some() {
                                return refuse(format!(
                                    "assigns the array connector '{n}' as a whole"
                                ));
                            }
                            format!("{} = {rhs};", c.var)
                        } else if locals.types.contains_key(n) {
                            format!("{n} = {rhs};")
                        } else {
                            locals.declare(n, t);
                            format!("{} {n} = {rhs};", t.ctype())
                        }
                    }
                    Target::Index(n, idx) => {
                        let lhs = self.tasklet_expr(&Expr::Index(n.clone(), idx.clone()), &scope);
                        format!("{lhs} = {rhs};")
                    }
                };
                self.out.line(line);
            }
            Stmt::Expr(e) => {
                let line = format!("{};", self.tasklet_expr(e, &scope));
                self.out.line(line);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.tasklet_expr(cond, &scope);
                self.out.open(format!("if ({c})"));
                self.python_nested(then, conns, locals, node)?;
                if otherwise.is_empty() {
                    self.out.close();
                } else {
                    // An `elif` is an `if` nested in the `else` block.
                    self.out.close_with(" else {");
                    self.out.indent_in();
                    self.python_nested(otherwise, conns, locals, node)?;
                    self.out.close();
                }
            }
            Stmt::For {
                var,
                start,
                stop,
                step,
                body,
            } => {
                if conns.contains_key(var) || locals.types.contains_key(var) {
                    return refuse(format!(
                        "'for' loop variable '{var}' is already defined \
                         (DaCe declares the loop variable in the loop)"
                    ));
                }
                // DaCe's `range` holds `int` bounds and yields `int`; bounds
                // are evaluated once, as in Python.
                let [a, b, k] = [start, stop, step].map(|e| {
                    let p = self.tasklet_expr(e, &scope);
                    if infer(e, &scope) == DType::Int32 {
                        p
                    } else {
                        format!("static_cast<int>({p})")
                    }
                });
                let (end, inc) = (format!("{var}__end"), format!("{var}__step"));
                // DaCe's loop variable is a copy of the iterator's value:
                // assigning it in the body does not change the iteration.
                let assigned = all_stmts(body)
                    .iter()
                    .any(|s| matches!(s, Stmt::Assign { target: Target::Name(n), .. } if n == var));
                let it = if assigned {
                    format!("{var}__it")
                } else {
                    var.clone()
                };
                let header = match step {
                    Expr::Int(v) if *v > 0 => {
                        format!("for (int {it} = {a}, {end} = {b}; {it} < {end}; {it} += {k})")
                    }
                    Expr::Int(v) if *v < 0 => {
                        format!("for (int {it} = {a}, {end} = {b}; {it} > {end}; {it} += {k})")
                    }
                    _ => format!(
                        "for (int {it} = {a}, {end} = {b}, {inc} = {k}; \
                         {inc} > 0 ? {it} < {end} : {it} > {end}; {it} += {inc})"
                    ),
                };
                self.out.open(header);
                if assigned {
                    self.out.line(format!("int {var} = {it};"));
                }
                locals.blocks.push(Vec::new());
                locals.declare(var, DType::Int32);
                let r = self.python_block(body, conns, locals, node);
                locals.close_block();
                r?;
                self.out.close();
            }
        }
        Ok(())
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
            tasklet: false,
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
    for s in all_stmts(stmts) {
        if let Stmt::Assign {
            target: Target::Index(n, _),
            ..
        } = s
        {
            out.insert(n.as_str());
        }
        for e in s.own_exprs() {
            visit(e, &mut out);
        }
    }
    out
}

/// Strides of the dimensions a pointer connector's code indexes: all of the
/// container's dimensions if the code uses that many indices, else those of
/// the subset's non-unit dimensions.
fn pointer_strides(d: &DataDesc, sub: &[RangeDim], stmts: &[Stmt], conn: &str) -> Vec<Expr> {
    let mut arity = None;
    for s in all_stmts(stmts) {
        if let Stmt::Assign {
            target: Target::Index(n, idx),
            ..
        } = s
            && n == conn
        {
            arity = Some(idx.len());
        }
        for e in s.own_exprs() {
            e.visit_index(&mut |n, idx| {
                if n == conn {
                    arity = Some(idx.len());
                }
            });
        }
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
