//! DaCe's C ABI of a program: parameter lists of the exported functions.
//!
//! The rules are DaCe's (`SDFG.arglist`, `init_signature`, `used_symbols`),
//! applied to the SDFG as it is generated, i.e. counting the symbols that
//! expanded library nodes use.

use std::collections::BTreeSet;

use crate::ir::*;

/// One parameter of an exported function.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Name (as in the SDFG).
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// What the parameter is.
    pub kind: ParamKind,
    /// The type of a [`ParamKind::Callback`].
    pub callback: Option<Callback>,
}

/// Kinds of program parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A non-transient array: passed as a pointer.
    Array,
    /// A non-transient scalar: passed by value.
    Scalar,
    /// A used free symbol: passed by value.
    Symbol,
    /// A used callback symbol (DaCe's `callback` type): a function pointer.
    Callback,
}

/// The exported interface of one program.
#[derive(Clone, Debug)]
pub struct Abi {
    /// `<name>` in `__program_<name>` etc.
    pub name: String,
    /// Program parameters after the state pointer, in order.
    pub program: Vec<Param>,
    /// Init parameters (also of the workspace functions): the used symbols.
    pub init: Vec<Param>,
}

impl Param {
    /// The declaration in the C header (complex types as the header names them).
    pub fn header_decl(&self) -> String {
        let t = self.dtype.header_ctype();
        if let Some(cb) = &self.callback {
            return cb.decl(&self.name, DType::header_ctype);
        }
        match self.kind {
            ParamKind::Array => format!("{t} *{}", self.name),
            ParamKind::Scalar | ParamKind::Symbol | ParamKind::Callback => {
                format!("{t} {}", self.name)
            }
        }
    }

    /// The C declaration of the parameter.
    pub fn c_decl(&self, restrict: bool) -> String {
        if let Some(cb) = &self.callback {
            return cb.decl(&self.name, DType::ctype);
        }
        match self.kind {
            ParamKind::Array if restrict => {
                format!("{} * __restrict__ {}", self.dtype.ctype(), self.name)
            }
            ParamKind::Array => format!("{} *{}", self.dtype.ctype(), self.name),
            ParamKind::Scalar | ParamKind::Symbol | ParamKind::Callback => {
                format!("{} {}", self.dtype.ctype(), self.name)
            }
        }
    }
}

/// Computes the ABI of the top-level SDFG.
pub fn compute(sdfg: &Sdfg) -> Abi {
    let used = used_symbols(sdfg);
    let mut arrays: Vec<Param> = sdfg
        .arrays
        .iter()
        .filter(|(_, d)| !d.transient && d.member.is_none() && d.kind != DataKind::Scalar)
        .map(|(n, d)| Param {
            name: n.clone(),
            dtype: d.dtype,
            kind: ParamKind::Array,
            callback: None,
        })
        .collect();
    arrays.sort_by(|a, b| a.name.cmp(&b.name));
    let symbol_param = |n: &String| match sdfg.callbacks.get(n) {
        Some(cb) => Param {
            name: n.clone(),
            dtype: DType::Int32,
            kind: ParamKind::Callback,
            callback: Some(cb.clone()),
        },
        None => Param {
            name: n.clone(),
            dtype: sdfg.symbols.get(n).copied().unwrap_or(DType::Int32),
            kind: ParamKind::Symbol,
            callback: None,
        },
    };
    let mut scalars: Vec<Param> = sdfg
        .arrays
        .iter()
        .filter(|(n, d)| {
            !d.transient
                && d.member.is_none()
                && d.kind == DataKind::Scalar
                && !n.starts_with("__dace")
        })
        .map(|(n, d)| Param {
            name: n.clone(),
            dtype: d.dtype,
            kind: ParamKind::Scalar,
            callback: None,
        })
        .collect();
    scalars.extend(
        used.iter()
            .filter(|n| !sdfg.arrays.contains_key(*n))
            .map(symbol_param),
    );
    scalars.sort_by(|a, b| a.name.cmp(&b.name));
    let init = used
        .iter()
        .filter(|n| !sdfg.arrays.contains_key(*n))
        .map(symbol_param)
        .collect();
    let mut program = arrays;
    program.extend(scalars);
    Abi {
        name: sdfg.name.clone(),
        program,
        init,
    }
}

/// DaCe's `used_symbols(all_symbols=False)`, sorted by name.
pub fn used_symbols(sdfg: &Sdfg) -> BTreeSet<String> {
    let mut c = Collector::default();
    c.region(sdfg, &sdfg.body);
    // The symbols of a container count only where the program uses the
    // container: an access node in a state, or its name in an interstate
    // expression (DaCe 1.0.2: `AccessNode` descriptors and edges naming
    // arrays; 2.x: `read_and_write_sets`). An array argument the program never
    // touches adds none of its stride symbols to the signature. Strides and
    // offsets count; shapes and sizes only of transients.
    let used_containers: Vec<&DataDesc> = sdfg
        .arrays
        .iter()
        .filter(|(n, _)| c.accessed.contains(*n) || c.used.contains(*n))
        .map(|(_, d)| d)
        // A structure and the members of a structure argument add none
        // (DaCe sees one `Structure` of shape 1, whose members it never
        // looks up by name).
        .filter(|d| d.member.is_none() && !matches!(d.dtype, DType::Struct(_)))
        .collect();
    // DaCe's `Data.used_symbols(all_symbols=False)`: strides and offsets
    // always, shapes and total sizes only of transients that are no views
    // (a view's extent comes from the memlet it views through, whose range
    // starts count above; a view's shape may name anything, e.g. the
    // parameters of the map it is used in or a member extent of a
    // structure argument).
    for d in used_containers {
        for e in d.strides.iter().chain(&d.offset) {
            c.expr(e);
        }
        // DaCe's `used_symbols`: a transient's shape counts, except a view's
        // or a reference's (only its strides locate elements).
        if d.transient && d.kind != DataKind::View && d.kind != DataKind::Reference {
            for e in d.shape.iter().chain([&d.total_size]) {
                c.expr(e);
            }
        }
    }
    for code in sdfg.init_code.values().chain(sdfg.exit_code.values()) {
        c.cpp_names(&code.code);
    }
    c.used
        .into_iter()
        .filter(|n| {
            !c.defined.contains(n)
                && !sdfg.arrays.contains_key(n)
                && !sdfg.constants.contains_key(n)
                && !n.starts_with("__dace")
                && (sdfg.symbols.contains_key(n)
                    || sdfg.callbacks.contains_key(n)
                    || !c.cpp_only.contains(n))
        })
        .collect()
}

/// The names an interstate edge reads (DaCe's `InterstateEdge.used_symbols`):
/// its condition's, and its assignments' values' but for a name an earlier
/// assignment of the edge sets before anything reads it; with the strides
/// and offsets of the containers it names.
fn edge_reads(sdfg: &Sdfg, e: &InterstateEdge) -> BTreeSet<String> {
    let mut cond = BTreeSet::new();
    e.condition.visit_names(&mut |n| {
        cond.insert(n.to_string());
    });
    let mut rhs = BTreeSet::new();
    let mut lhs = BTreeSet::new();
    for (k, v) in &e.assignments {
        v.visit_names(&mut |n| {
            rhs.insert(n.to_string());
        });
        if !cond.contains(k) && !rhs.contains(k) {
            lhs.insert(k.clone());
        }
    }
    let mut read: BTreeSet<String> = cond
        .union(&rhs)
        .filter(|n| !lhs.contains(*n))
        .cloned()
        .collect();
    let data: Vec<&DataDesc> = read.iter().filter_map(|n| sdfg.arrays.get(n)).collect();
    let mut more = BTreeSet::new();
    for d in data {
        for x in d.strides.iter().chain(&d.offset) {
            x.visit_names(&mut |n| {
                more.insert(n.to_string());
            });
        }
    }
    read.extend(more);
    read
}

/// The blocks of `r` in breadth-first order from its start (`outs`: each
/// block's out-edges, in their order), then those the start does not reach,
/// in index order.
fn bfs_order(r: &Region, outs: &[Vec<usize>]) -> Vec<usize> {
    let mut seen = vec![false; r.blocks.len()];
    let mut order = Vec::with_capacity(r.blocks.len());
    let mut queue = std::collections::VecDeque::new();
    if let Some(s) = r.start {
        queue.push_back(s.index());
    }
    while let Some(b) = queue.pop_front() {
        if std::mem::replace(&mut seen[b], true) {
            continue;
        }
        order.push(b);
        for &ei in &outs[b] {
            let d = r.edges[ei].dst.index();
            if !seen[d] {
                queue.push_back(d);
            }
        }
    }
    order.extend((0..r.blocks.len()).filter(|&b| !seen[b]));
    order
}

#[derive(Default)]
struct Collector {
    used: BTreeSet<String>,
    /// Symbols interstate assignments and loops define (DaCe's
    /// `defined_syms`): not parameters.
    defined: BTreeSet<String>,
    /// Symbols an interstate edge reads before any edge met earlier in
    /// breadth-first order assigns them (DaCe's `used_before_assignment`):
    /// parameters, even where assigned later.
    used_before: BTreeSet<String>,
    /// Names seen only as identifiers in C++ code (kept only if they are symbols).
    cpp_only: BTreeSet<String>,
    /// Containers named by an access node.
    accessed: BTreeSet<String>,
}

impl Collector {
    fn expr(&mut self, e: &Expr) {
        e.visit_names(&mut |n| {
            self.used.insert(n.to_string());
        });
    }

    fn expr_minus(&mut self, e: &Expr, bound: &BTreeSet<String>) {
        e.visit_names(&mut |n| {
            if !bound.contains(n) {
                self.used.insert(n.to_string());
            }
        });
    }

    fn cpp_names(&mut self, code: &str) {
        for ident in cpp_identifiers(code) {
            if self.used.insert(ident.to_string()) {
                self.cpp_only.insert(ident.to_string());
            }
        }
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in all_stmts(stmts) {
            for e in s.own_exprs() {
                self.expr(e);
            }
            match s {
                Stmt::Assign {
                    target: Target::Name(n),
                    ..
                } => {
                    self.defined.insert(n.clone());
                }
                Stmt::For { var, .. } => {
                    self.defined.insert(var.clone());
                }
                _ => {}
            }
        }
    }

    /// Takes in what `other` collected (the names it used, which of them it
    /// saw first in C++ code, the containers it accessed).
    fn absorb(&mut self, other: Collector) {
        for n in other.used {
            if self.used.insert(n.clone()) && other.cpp_only.contains(&n) {
                self.cpp_only.insert(n);
            }
        }
        self.accessed.extend(other.accessed);
    }

    /// A region as DaCe's `_used_symbols_internal` walks it: a loop's body
    /// on its own (its variable defined), a plain region in place.
    fn region(&mut self, sdfg: &Sdfg, r: &Region) {
        let RegionKind::Loop(l) = &r.kind else {
            return self.blocks(sdfg, r);
        };
        if let Some(v) = &l.variable {
            self.defined.insert(v.clone());
        }
        self.stmts(&l.init);
        self.stmts(&l.update);
        self.expr(&l.condition);
        let outside: BTreeSet<String> = self
            .defined
            .difference(&self.used_before)
            .cloned()
            .collect();
        let mut body = Collector::default();
        body.blocks(sdfg, r);
        self.used_before.extend(
            body.used_before
                .iter()
                .filter(|n| l.variable.as_ref() != Some(*n) && !outside.contains(*n))
                .cloned(),
        );
        self.defined.extend(std::mem::take(&mut body.defined));
        self.absorb(body);
        self.forget_used_before();
    }

    fn forget_used_before(&mut self) {
        let ub = &self.used_before;
        self.defined.retain(|n| !ub.contains(n));
    }

    /// The blocks of `r` in breadth-first order from its start (then any
    /// the start does not reach), each followed by its out-edges: an
    /// assignment defines its symbol unless the edge or the block before it
    /// reads it (DaCe's `InterstateEdge.used_symbols`).
    fn blocks(&mut self, sdfg: &Sdfg, r: &Region) {
        let outs = r.out_edge_lists();
        for b in bfs_order(r, &outs) {
            let before: BTreeSet<String> = match &r.blocks[b].kind {
                BlockKind::State(st) => {
                    let mut sub = Collector::default();
                    sub.state(sdfg, st);
                    let used = sub.used.clone();
                    self.absorb(sub);
                    used
                }
                BlockKind::Region(inner) => {
                    self.region(sdfg, inner);
                    self.used.clone()
                }
                BlockKind::Conditional(brs) => {
                    for (c, body) in brs {
                        if let Some(c) = c {
                            self.expr(c);
                        }
                        self.region(sdfg, body);
                    }
                    self.forget_used_before();
                    self.used.clone()
                }
                BlockKind::Break | BlockKind::Continue | BlockKind::Return => BTreeSet::new(),
            };
            for e in outs[b].iter().map(|&i| &r.edges[i]) {
                let read = edge_reads(sdfg, e);
                for (k, _) in &e.assignments {
                    if !read.contains(k) && !before.contains(k) {
                        self.defined.insert(k.clone());
                    }
                }
                for n in read {
                    if !self.defined.contains(&n) {
                        self.used_before.insert(n.clone());
                    }
                    self.used.insert(n);
                }
            }
        }
        self.forget_used_before();
    }

    fn state(&mut self, sdfg: &Sdfg, st: &State) {
        let params: BTreeSet<String> = st
            .nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::MapEntry(m) => Some(m.scope_names().cloned()),
                _ => None,
            })
            .flatten()
            .collect();
        for (idx, n) in st.nodes.iter().enumerate() {
            match &n.kind {
                NodeKind::Access(a) => {
                    self.accessed.insert(a.data.clone());
                }
                NodeKind::MapEntry(m) => {
                    for r in &m.range {
                        for e in [&r.start, &r.end, &r.step] {
                            self.expr_minus(e, &params);
                        }
                    }
                }
                NodeKind::Nested(ns) => {
                    // Only mappings of symbols the inner SDFG uses.
                    for (_, e) in nested_symbol_args(ns) {
                        self.expr_minus(e, &params);
                    }
                }
                NodeKind::Tasklet(t) if t.code.language == Language::Python => {
                    // Names in Python code that are symbols (connectors and locals are not).
                    for st in all_stmts(&t.stmts) {
                        if let Stmt::Callback { func, .. } = st {
                            self.used.insert(func.clone());
                        }
                        for e in st.own_exprs() {
                            e.visit_names(&mut |n| {
                                if sdfg.symbols.contains_key(n)
                                    && !t.inputs.contains_key(n)
                                    && !t.outputs.contains_key(n)
                                {
                                    self.used.insert(n.to_string());
                                }
                            })
                        }
                    }
                }
                NodeKind::Tasklet(t) if t.code.language == Language::Cpp => {
                    let before = self.used.clone();
                    for ident in cpp_identifiers(&t.code.code) {
                        if sdfg.symbols.contains_key(ident) && !before.contains(ident) {
                            self.used.insert(ident.to_string());
                        }
                    }
                }
                // gt4py's expansion iterates over the mask's constant
                // neighbor extent; the strides it reads are those of the
                // containers it accesses.
                NodeKind::Library(l)
                    if matches!(l.kind, LibraryKind::ReduceWithSkipValues { .. }) => {}
                NodeKind::Library(l) => {
                    let adjacent = || {
                        st.edges
                            .iter()
                            .filter(move |e| e.src.index() == idx || e.dst.index() == idx)
                    };
                    if let Some(keep) = batched_dims(&l.kind, idx, &st.edges, &sdfg.arrays) {
                        // DaCe's pure BatchedMatMul iterates over the output's
                        // shape, `_a`'s matrix dimensions and `_b`'s columns
                        // (not over the batch extents of `_a` and `_b`).
                        for (e, dims) in keep {
                            if let Some(d) = e.memlet.data.as_ref().and_then(|d| sdfg.arrays.get(d))
                            {
                                for i in dims {
                                    if let Some(x) = d.shape.get(i) {
                                        self.expr_minus(x, &params);
                                    }
                                }
                            }
                        }
                    } else if let Some(dims) = gemm_dims(&l.kind, idx, &st.edges) {
                        // DaCe's Gemm (also a MatMul of two matrices)
                        // iterates over op(_a)'s two dimensions and
                        // op(_b)'s columns only: op(_b)'s rows must equal
                        // op(_a)'s columns, and the output's shape is
                        // (rows of op(_a), columns of op(_b)).
                        for e in adjacent() {
                            let Some(d) = e.memlet.data.as_ref().and_then(|d| sdfg.arrays.get(d))
                            else {
                                continue;
                            };
                            let keep: &[usize] = match e.dst_conn.as_deref() {
                                Some("_a") => &[0, 1],
                                Some("_b") => std::slice::from_ref(&dims.b_cols),
                                _ => &[],
                            };
                            for &i in keep {
                                if let Some(x) = d.shape.get(i) {
                                    self.expr_minus(x, &params);
                                }
                            }
                        }
                    } else {
                        // The expansion iterates over the adjacent containers' shapes.
                        for e in adjacent() {
                            if let Some(d) = e.memlet.data.as_ref().and_then(|d| sdfg.arrays.get(d))
                            {
                                for x in &d.shape {
                                    self.expr_minus(x, &params);
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        for e in &st.edges {
            // Only the leaves of memlet trees count: not the outer edges into
            // a map entry (`IN_*`) or out of a map exit (`OUT_*`).
            let src = &st.nodes[e.src.index()].kind;
            let dst = &st.nodes[e.dst.index()].kind;
            let conn_starts =
                |c: &Option<String>, p: &str| c.as_deref().is_some_and(|c| c.starts_with(p));
            if (matches!(dst, NodeKind::MapEntry(_)) && conn_starts(&e.dst_conn, "IN_"))
                || (matches!(src, NodeKind::MapExit { .. }) && conn_starts(&e.src_conn, "OUT_"))
            {
                continue;
            }
            // Edges of code nodes and view edges need only the range starts.
            let code = |k: &NodeKind| {
                matches!(
                    k,
                    NodeKind::Tasklet(_) | NodeKind::Nested(_) | NodeKind::Library(_)
                )
            };
            let starts_only = code(src)
                || code(dst)
                || (e.dst_conn.as_deref() == Some("views") && matches!(dst, NodeKind::Access(_)))
                || (e.src_conn.as_deref() == Some("views") && matches!(src, NodeKind::Access(_)));
            for sub in [&e.memlet.subset, &e.memlet.other_subset]
                .into_iter()
                .flatten()
            {
                for r in sub {
                    self.expr_minus(&r.start, &params);
                    if !starts_only {
                        self.expr_minus(&r.end, &params);
                        self.expr_minus(&r.step, &params);
                    }
                }
            }
        }
    }
}

/// The dimension of `_b` that is op(_b)'s columns, for a library node that
/// DaCe expands as a Gemm.
struct GemmDims {
    b_cols: usize,
}

/// A `Gemm` node, or a `MatMul` of two 2-D memlets (DaCe's
/// `SpecializeMatMul` makes it a Gemm; it counts the memlets' dimensions,
/// unit ones included), with container operands of two dimensions.
fn gemm_dims(kind: &LibraryKind, idx: usize, edges: &[DataEdge]) -> Option<GemmDims> {
    let operand = |conn: &str| {
        edges
            .iter()
            .find(|e| e.dst.index() == idx && e.dst_conn.as_deref() == Some(conn))
    };
    let (a, b) = (operand("_a")?, operand("_b")?);
    let two_d = |e: &DataEdge| e.memlet.subset.as_ref().is_some_and(|s| s.len() == 2);
    if !two_d(a) || !two_d(b) {
        return None;
    }
    match kind {
        LibraryKind::MatMul { .. } => Some(GemmDims { b_cols: 1 }),
        LibraryKind::Gemm { trans_b, .. } => Some(GemmDims {
            b_cols: if *trans_b { 0 } else { 1 },
        }),
        _ => None,
    }
}

/// The non-unit dimensions of a memlet's subset (the container's, without one).
fn nonunit_dims(e: &DataEdge, arrays: &NameMap<DataDesc>) -> Vec<usize> {
    let extents: Vec<Expr> = match (
        &e.memlet.subset,
        e.memlet.data.as_ref().and_then(|d| arrays.get(d)),
    ) {
        (Some(s), _) => s.iter().map(RangeDim::extent).collect(),
        (None, Some(d)) => d.shape.clone(),
        (None, None) => Vec::new(),
    };
    (0..extents.len())
        .filter(|&i| extents[i] != Expr::Int(1))
        .collect()
}

/// For a `BatchedMatMul`, or a `MatMul` that DaCe specialises to one (an
/// operand with three or more non-unit dimensions): each adjacent edge with
/// the dimensions of its container whose extents DaCe's expansion reads
/// (`_a`'s last two, `_b`'s last, all of `_c`'s).
fn batched_dims<'e>(
    kind: &LibraryKind,
    idx: usize,
    edges: &'e [DataEdge],
    arrays: &NameMap<DataDesc>,
) -> Option<Vec<(&'e DataEdge, Vec<usize>)>> {
    let adjacent = || {
        edges
            .iter()
            .filter(move |e| e.src.index() == idx || e.dst.index() == idx)
    };
    let input = |e: &DataEdge, c: &str| e.dst.index() == idx && e.dst_conn.as_deref() == Some(c);
    match kind {
        LibraryKind::BatchedMatMul { .. } => {}
        LibraryKind::MatMul { .. }
            if adjacent().any(|e| {
                (input(e, "_a") || input(e, "_b")) && nonunit_dims(e, arrays).len() >= 3
            }) => {}
        _ => return None,
    }
    Some(
        adjacent()
            .map(|e| {
                let dims = nonunit_dims(e, arrays);
                let n = dims.len();
                let keep = if input(e, "_a") {
                    dims[n.saturating_sub(2)..].to_vec()
                } else if input(e, "_b") {
                    dims[n.saturating_sub(1)..].to_vec()
                } else if e.src.index() == idx {
                    dims
                } else {
                    Vec::new()
                };
                (e, keep)
            })
            .collect(),
    )
}

/// The symbol mapping entries a nested SDFG needs: those of the symbols its
/// body uses (DaCe's `NestedSDFG.used_symbols(all_symbols=False)`). The
/// used symbols are computed once per nested SDFG, so that a deep nest is
/// walked once, not once per level.
pub fn nested_symbol_args(ns: &NestedSdfg) -> Vec<(&String, &Expr)> {
    let used = ns.used_symbols.get_or_init(|| used_symbols(&ns.sdfg));
    ns.symbol_mapping
        .iter()
        .filter(|(k, _)| used.contains(*k))
        .collect()
}

/// The identifiers of a piece of C++ code (rough lexical scan; strings and comments skipped).
pub fn cpp_identifiers(code: &str) -> Vec<&str> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < bytes.len() && bytes[i] != c {
                if bytes[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            // Skip member accesses (`x.count`) and qualified names (`std::chrono`).
            let prev = code[..start].trim_end();
            if !(prev.ends_with('.') || prev.ends_with("::") || prev.ends_with("->")) {
                out.push(&code[start..i]);
            }
        } else if c.is_ascii_digit() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}
