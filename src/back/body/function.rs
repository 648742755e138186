//! Writes the body of one SDFG function: control flow (regions, loops,
//! conditionals, interstate edges) and the hoisted declarations.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap as HashMap;

use crate::back::emit::Emitter;
use crate::back::gpu::Dialect;
use crate::diag::{Error, Result};
use crate::ir::cexpr;
use crate::ir::simplify::simplify;
use crate::ir::*;
use crate::passes::structure::{Structured, structure};
use crate::passes::{AllocScope, Memory, Program};

/// How generated code reaches a data container.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Access {
    /// Through a pointer: `name[index]`.
    Ptr(String),
    /// As a variable: `name`.
    Value(String),
}

/// Writer state shared by every function of one program: the plan
/// ([`Program`]) stays immutable, the counters live here.
#[derive(Debug)]
pub(crate) struct WriterState {
    /// Nested SDFG functions and kernels written so far.
    pub functions: Vec<String>,
    /// Events numbered so far (0..streams-1 are the fork and join events).
    pub events: usize,
    /// Kernels written so far (round-robin stream assignment).
    pub kernels: usize,
}

impl WriterState {
    /// The state before the first function of a program with `streams` streams.
    pub fn new(streams: u32) -> WriterState {
        WriterState {
            functions: Vec::new(),
            events: streams as usize,
            kernels: 0,
        }
    }
}

/// Writes one SDFG (top level or nested) as the body of a C++ function.
pub(crate) struct FnWriter<'a> {
    pub p: &'a Program,
    pub sdfg: &'a Sdfg,
    pub out: Emitter,
    /// Declarations placed at the top of the function (before any label).
    pub decls: Emitter,
    /// Code placed at the end of the function (frees).
    pub epilogue: Emitter,
    /// How each container is accessed.
    pub access: HashMap<String, Access>,
    /// Arrays declared on the function's stack (small, of constant size):
    /// never allocated or freed.
    pub stack_arrays: BTreeSet<String>,
    /// Symbols declared as local variables (assigned by interstate edges or loops).
    pub local_symbols: BTreeMap<String, DType>,
    /// What the writers of one program share (functions written, counters).
    pub shared: &'a mut WriterState,
    /// Counter for unique labels.
    pub labels: usize,
    /// Inside a parallel (OpenMP) region.
    pub in_parallel: bool,
    /// Parameters of the parallel map of this function we are inside (None
    /// when the parallelism comes from a caller).
    pub parallel_params: Option<Vec<String>>,
    /// The entry of the parallel map of this function we are inside and the
    /// maps below it (empty when the parallelism comes from a caller).
    pub parallel_maps: BTreeSet<NodeId>,
    /// Reduction locals of the parallel map being written.
    pub reductions: Vec<crate::back::body::reduction::Reduction>,
    /// The function has a Return block (needs the exit label).
    pub needs_exit_label: bool,
    /// Names of the file-level prelude/state struct.
    pub state_type: String,
    /// Symbols that arrive as parameters (nested SDFGs: the symbol mapping keys).
    pub sym_params: BTreeSet<String>,
    /// The GPU dialect, for CUDA and HIP targets.
    pub gpu: Option<&'static Dialect>,
    /// Writing device code (a kernel body or a device function).
    pub in_kernel: bool,
    /// The stream of the device operation being written.
    pub cur_stream: u32,
    /// Arguments (nested SDFGs) bound to containers private to the calling thread.
    pub private_args: BTreeSet<String>,
    /// Pointer parameters of this (nested SDFG's) function declared
    /// `const T *`: read-only connectors fed from a constant array, or from
    /// such a parameter of the caller (DaCe's nested functions take them so).
    pub const_args: BTreeSet<String>,
    /// Inside a kernel with GPU_ThreadBlock maps: the block and its barrier state.
    pub tb: Option<crate::back::body::threadblock::BlockCtx>,
    /// Device operations of the current state: node -> (stream, event) it recorded.
    pub state_ops: std::collections::BTreeMap<NodeId, Vec<(u32, usize)>>,
    /// Streams with a device-to-host copy the host has not waited for yet
    /// (consecutive copies share one synchronisation).
    pub pending_syncs: Vec<String>,
    /// Tasklet-to-tasklet values (edges without data): the variable the
    /// source's output is kept in and its type.
    pub links: BTreeMap<String, DType>,
    /// The padded strides this function names (`sdfgc_pad_stride` calls:
    /// their C++ text, then the local constant that holds it), declared
    /// once at its top: inline, GCC neither hoisted them out of the loops
    /// that index with them nor vectorized those loops.
    pub pad_strides: RefCell<Vec<(String, String)>>,
    /// Symbols the body assigns: a padded stride that names one stays inline.
    pub assigned: BTreeSet<String>,
}

impl<'a> FnWriter<'a> {
    /// Creates a writer for `sdfg`.
    pub fn new(
        p: &'a Program,
        sdfg: &'a Sdfg,
        shared: &'a mut WriterState,
        in_parallel: bool,
    ) -> FnWriter<'a> {
        FnWriter {
            p,
            sdfg,
            out: Emitter::new(1),
            decls: Emitter::new(1),
            epilogue: Emitter::new(1),
            access: HashMap::default(),
            stack_arrays: BTreeSet::new(),
            local_symbols: BTreeMap::new(),
            shared,
            labels: 0,
            in_parallel,
            parallel_params: None,
            parallel_maps: BTreeSet::new(),
            reductions: Vec::new(),
            needs_exit_label: false,
            state_type: format!("{}_state_t", p.sdfg.name),
            gpu: p.gpu,
            in_kernel: false,
            cur_stream: 0,
            private_args: BTreeSet::new(),
            const_args: BTreeSet::new(),
            tb: None,
            state_ops: Default::default(),
            pending_syncs: Vec::new(),
            links: BTreeMap::new(),
            pad_strides: RefCell::new(Vec::new()),
            assigned: {
                let mut a = BTreeSet::new();
                crate::passes::span::assigned_symbols(&sdfg.body, &mut a);
                a
            },
            sym_params: if sdfg.id == 0 {
                p.abi.program.iter().map(|x| x.name.clone()).collect()
            } else {
                BTreeSet::new()
            },
        }
    }

    /// Prints a symbolic expression as C++.
    pub fn sym(&self, e: &Expr) -> String {
        let e = simplify(e);
        if has_pad_stride(&e) {
            cexpr::to_cpp(&self.name_pad_strides(&e))
        } else {
            cexpr::to_cpp(&e)
        }
    }

    /// `e` with each padded stride whose symbols the body does not assign
    /// replaced by its local constant ([`FnWriter::pad_strides`]), inner
    /// ones first.
    fn name_pad_strides(&self, e: &Expr) -> Expr {
        let rec = |x: &Expr| self.name_pad_strides(x);
        match e {
            Expr::Call(f, args) => {
                let call = Expr::Call(*f, args.iter().map(rec).collect());
                if *f != Func::PadStride
                    || crate::ir::simplify::free_symbols(&call)
                        .iter()
                        .any(|s| self.assigned.contains(s.as_str()))
                {
                    return call;
                }
                let text = cexpr::to_cpp(&call);
                let mut named = self.pad_strides.borrow_mut();
                let name = match named.iter().find(|(t, _)| *t == text) {
                    Some((_, n)) => n.clone(),
                    None => {
                        let n = format!("__sdfgc_pad{}", named.len());
                        named.push((text, n.clone()));
                        n
                    }
                };
                Expr::Sym(name)
            }
            Expr::Unary(op, a) => Expr::Unary(*op, Box::new(rec(a))),
            Expr::Binary(op, a, b) => Expr::Binary(*op, Box::new(rec(a)), Box::new(rec(b))),
            Expr::Ternary(c, a, b) => {
                Expr::Ternary(Box::new(rec(c)), Box::new(rec(a)), Box::new(rec(b)))
            }
            Expr::Index(n, idx) => Expr::Index(n.clone(), idx.iter().map(rec).collect()),
            Expr::Field(b, f) => Expr::Field(Box::new(rec(b)), f.clone()),
            Expr::Record(t, fs) => Expr::Record(
                t.clone(),
                fs.iter().map(|(n, v)| (n.clone(), rec(v))).collect(),
            ),
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Sym(_) => e.clone(),
        }
    }

    /// A fresh label with a readable stem.
    pub fn fresh_label(&mut self, stem: &str) -> String {
        self.labels += 1;
        let clean: String = stem
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        format!("__{}_{}", clean, self.labels)
    }

    /// Declares the function-scope transients and symbols, writes the body, returns the full text.
    pub fn write_body(mut self) -> Result<(String, Vec<String>)> {
        self.declare_containers()?;
        self.declare_symbols();
        let sdfg = self.sdfg;
        self.region(&sdfg.body, &sdfg.body.label)?;
        let mut text = Emitter::new(0);
        let mut pads = Emitter::new(1);
        for (expr, name) in self.pad_strides.borrow().iter() {
            pads.line(format!("const int64_t {name} = {expr};"));
        }
        text.append(pads);
        let decls = std::mem::take(&mut self.decls);
        text.append(decls);
        let out = std::mem::take(&mut self.out);
        text.append(out);
        if self.needs_exit_label {
            let mut e = Emitter::new(1);
            e.label("__sdfg_exit");
            text.append(e);
        }
        if sdfg.id == 0 && self.gpu.is_some() {
            // The caller's stream (and the next program sharing the workspace)
            // is ordered after all of this program's work; the host is not blocked.
            self.join_streams();
            if self.p.options.sync_on_exit {
                let g = self.gpu.expect("gpu");
                self.out.line(format!(
                    "sdfgc_gpu_check({}(__state->gpu_streams[0]), \"synchronize on exit\");",
                    g.api("StreamSynchronize")
                ));
            }
            let tail = std::mem::take(&mut self.out);
            text.append(tail);
        }
        let epi = std::mem::take(&mut self.epilogue);
        text.append(epi);
        Ok((text.finish(), Vec::new()))
    }

    fn declare_containers(&mut self) -> Result<()> {
        let sdfg = self.sdfg;
        self.bind_members();
        for (name, d) in &sdfg.arrays {
            if d.member.is_some() {
                continue;
            }
            if d.kind == DataKind::Stream {
                // The object itself (a reference parameter of a nested SDFG),
                // declared where its scope starts (`datastream`).
                self.access.insert(name.clone(), Access::Ptr(name.clone()));
                let Some(plan) = self.p.alloc.get(sdfg.id, name) else {
                    continue;
                };
                match &plan.scope {
                    _ if !d.transient => {}
                    AllocScope::Function => {
                        let decl = self.stream_decl(name, d)?;
                        self.decls.line(decl);
                    }
                    AllocScope::Blocks(..) => {
                        return Err(Error::unsupported(
                            &d.path,
                            format!("stream '{name}' sized by a symbol the program assigns"),
                        ));
                    }
                    AllocScope::State(_) | AllocScope::Map(..) => {}
                }
                continue;
            }
            if d.kind == DataKind::Reference {
                // A pointer, declared where its scope starts (states and map
                // bodies: `dataflow`), set by the edges into its `set` connector.
                self.access.insert(name.clone(), Access::Ptr(name.clone()));
                if let Some(plan) = self.p.alloc.get(sdfg.id, name)
                    && matches!(plan.scope, AllocScope::Function | AllocScope::Blocks(..))
                {
                    self.decls
                        .line(crate::back::body::dataflow::reference_decl(name, d));
                }
                continue;
            }
            if !d.transient {
                // Arguments: top-level scalars are values, everything else a pointer.
                let is_value = sdfg.id == 0 && d.kind == DataKind::Scalar;
                let acc = if is_value {
                    Access::Value(name.clone())
                } else {
                    Access::Ptr(name.clone())
                };
                self.access.insert(name.clone(), acc);
                continue;
            }
            // Transients the program never uses have no plan: not declared.
            let Some(plan) = self.p.alloc.get(sdfg.id, name).cloned() else {
                continue;
            };
            let ct = d.dtype.ctype();
            if plan.slice.is_some() {
                // The calling thread's copy, from the kernel (declared in the
                // map body when the transient lives in a map).
                self.access.insert(name.clone(), Access::Ptr(name.clone()));
                if self.in_kernel && !matches!(plan.scope, AllocScope::Map(..)) {
                    let slice = crate::passes::slices::slice_name(sdfg.id, name);
                    self.decls
                        .line(format!("{ct} * __restrict__ {name} = {slice};"));
                    if plan.zero {
                        self.zero_at_scope(&plan.scope, name, d);
                    }
                }
                continue;
            }
            if plan.memory == Memory::Local
                && d.kind != DataKind::Scalar
                && !matches!(plan.scope, AllocScope::Map(..))
                && (self.in_kernel || !self.is_device(name))
                && let Some(n) = self.const_size(d).filter(|n| *n > 1 && *n <= 4096)
            {
                // A small array of constant size (a device function's, or a
                // Register or scope-local one of the host): on the stack, as
                // DaCe declares them, not allocated each time its scope runs.
                self.access.insert(name.clone(), Access::Ptr(name.clone()));
                self.stack_arrays.insert(name.clone());
                // Value-initialised: zero for a function-scope `zero` plan;
                // states and blocks zero it where they start.
                self.decls
                    .line(format!("[[maybe_unused]] {ct} {name}[{n}] = {{}};"));
                continue;
            }
            match (&plan.memory, &plan.scope) {
                (Memory::Local, AllocScope::Map(..)) => {
                    // Declared inside the map body.
                    let acc = if d.kind == DataKind::Scalar {
                        Access::Value(name.clone())
                    } else {
                        Access::Ptr(name.clone())
                    };
                    self.access.insert(name.clone(), acc);
                }
                (Memory::Local, _)
                    if d.kind == DataKind::Scalar || self.const_size(d).is_some_and(|n| n == 1) =>
                {
                    // Value-initialised: a scalar written under one condition
                    // and read under another is not "maybe uninitialized".
                    self.decls
                        .line(format!("[[maybe_unused]] {ct} {name} = {{}};"));
                    self.access
                        .insert(name.clone(), Access::Value(name.clone()));
                    if plan.zero {
                        self.zero_at_scope(&plan.scope, name, d);
                    }
                }
                (Memory::Local, _) | (Memory::Heap, _) | (Memory::Pool, _) => {
                    self.access.insert(name.clone(), Access::Ptr(name.clone()));
                    self.decls.line(format!(
                        "[[maybe_unused]] {ct} * __restrict__ {name} = nullptr;"
                    ));
                    if plan.scope == AllocScope::Function {
                        let (alloc, free) = self.alloc_free(name, d, &plan.memory);
                        self.decls.line(alloc);
                        if plan.zero {
                            let z = self.zero_stmt(name, d);
                            self.decls.line(z);
                        }
                        self.epilogue.line(free);
                    }
                }
                (Memory::Persistent, AllocScope::Map(..))
                | (Memory::External { .. }, AllocScope::Map(..)) => {
                    // Pointed at its (thread's) slot inside the map body.
                    self.access.insert(name.clone(), Access::Ptr(name.clone()));
                }
                (Memory::Persistent, _) | (Memory::External { .. }, _) => {
                    let decl = self.slot_pointer(name, d, plan.per_thread);
                    self.decls.line(format!("[[maybe_unused]] {decl}"));
                    self.access.insert(name.clone(), Access::Ptr(name.clone()));
                    if plan.zero {
                        self.zero_at_scope(&plan.scope, name, d);
                    }
                }
                (Memory::View, _) => {
                    self.access.insert(name.clone(), Access::Ptr(name.clone()));
                }
            }
        }
        Ok(())
    }

    /// Binds the members of structure arguments to their fields, parents
    /// first: `int *A_indptr = A->indptr;` (arrays and nested structures),
    /// `float *A_D = &A->D;` (scalars); each is then a pointer like any
    /// non-transient container.
    fn bind_members(&mut self) {
        let sdfg = self.sdfg;
        let mut bound: BTreeSet<&str> = BTreeSet::new();
        loop {
            let before = bound.len();
            for (name, d) in &sdfg.arrays {
                let Some(m) = &d.member else { continue };
                // Members of a structure view are bound where it is declared.
                let parent_ready = sdfg.arrays.get(&m.parent).is_some_and(|p| {
                    (p.member.is_none() && p.kind != DataKind::View)
                        || bound.contains(m.parent.as_str())
                });
                if bound.contains(name.as_str()) || !parent_ready {
                    continue;
                }
                let ct = d.dtype.ctype();
                let (p, f) = (&m.parent, &m.field);
                self.decls.line(if d.kind == DataKind::Scalar {
                    format!("{ct} *{name} = &{p}->{f};")
                } else {
                    format!("{ct} *{name} = {p}->{f};")
                });
                self.decls.line(format!("(void){name};"));
                self.access.insert(name.clone(), Access::Ptr(name.clone()));
                bound.insert(name);
            }
            if bound.len() == before {
                break;
            }
        }
    }

    /// Binds the members of structure view `view` (and theirs, parents
    /// first) where the view is declared: `int *vcsr_indptr = vcsr->indptr;`.
    pub(crate) fn bind_members_of(&mut self, view: &str) {
        let sdfg = self.sdfg;
        let mut parents = vec![view.to_string()];
        while let Some(parent) = parents.pop() {
            for (name, d) in &sdfg.arrays {
                let Some(m) = &d.member else { continue };
                if m.parent != parent {
                    continue;
                }
                let ct = d.dtype.ctype();
                let f = &m.field;
                self.out.line(if d.kind == DataKind::Scalar {
                    format!("{ct} *{name} = &{parent}->{f};")
                } else {
                    format!("{ct} *{name} = {parent}->{f};")
                });
                self.out.line(format!("(void){name};"));
                self.access.insert(name.clone(), Access::Ptr(name.clone()));
                parents.push(name.clone());
            }
        }
    }

    /// The declaration of the pointer to a Persistent or External transient:
    /// its state member, or for a per-thread slot the calling thread's copy.
    pub fn slot_pointer(&self, name: &str, d: &DataDesc, per_thread: bool) -> String {
        let member = member_name(self.sdfg.id, name);
        // Containers that share workspace bytes hold the same address: one
        // function must not declare two such pointers `__restrict__`.
        let restrict = if self.p.shared.contains(&(self.sdfg.id, name.to_string())) {
            ""
        } else {
            " __restrict__"
        };
        let ct = d.dtype.ctype();
        if per_thread {
            format!(
                "{ct} *{restrict} {name} = __state->{member} + static_cast<size_t>(sdfgc_thread_num()) * __state->{};",
                copy_stride_name(&member)
            )
        } else {
            format!("{ct} *{restrict} {name} = __state->{member};")
        }
    }

    /// Zeroes at function start (state-scoped zeroing is done by the state writer).
    fn zero_at_scope(&mut self, scope: &AllocScope, name: &str, d: &DataDesc) {
        if *scope == AllocScope::Function {
            let stmt = self.zero_stmt(name, d);
            self.decls.line(stmt);
        }
    }

    /// `memset` (or assignment for values) that zeroes a container.
    pub fn zero_stmt(&self, name: &str, d: &DataDesc) -> String {
        let bytes = format!(
            "sizeof({}) * static_cast<size_t>({})",
            d.dtype.ctype(),
            self.sym(&d.total_size)
        );
        match (self.access.get(name), self.gpu) {
            // `= {}` value-initialises any type (a functional cast does not
            // take a two-word type such as `unsigned int`).
            (Some(Access::Value(v)), _) => format!("{v} = {{}};"),
            // Device code: the thread zeroes its own array.
            (_, Some(_)) if self.in_kernel => format!(
                "for (int64_t __z = 0; __z < static_cast<int64_t>({}); ++__z) {name}[__z] = {{}};",
                self.sym(&d.total_size),
            ),
            (_, Some(g)) if self.is_device(name) => {
                format!(
                    "sdfgc_gpu_check({}({name}, 0, {bytes}, {}), \"{}\");",
                    g.api("MemsetAsync"),
                    self.stream(),
                    g.api("MemsetAsync")
                )
            }
            _ => format!("std::memset({name}, 0, {bytes});"),
        }
    }

    /// True if the container lives in device memory.
    pub fn is_device(&self, name: &str) -> bool {
        self.p.alloc.is_device(self.sdfg.id, name)
    }

    /// The stream host code enqueues work on.
    pub fn stream(&self) -> String {
        format!("__state->gpu_streams[{}]", self.cur_stream)
    }

    /// Statements that allocate and free a transient with the given memory.
    pub fn alloc_free(&self, name: &str, d: &DataDesc, memory: &Memory) -> (String, String) {
        let ct = d.dtype.ctype();
        let elements = self.sym(&d.total_size);
        if self.in_kernel {
            return crate::back::gpu::device_heap::alloc_free(name, ct, &elements);
        }
        match (self.gpu, self.is_device(name)) {
            (Some(_), true) => {
                let bytes = format!("sizeof({ct}) * static_cast<size_t>({elements})");
                self.device_alloc_free(name, name, &bytes, *memory == Memory::Pool)
            }
            _ => (
                format!("{name} = sdfgc_alloc<{ct}>({elements});"),
                format!("sdfgc_free({name});"),
            ),
        }
    }

    /// Statements that allocate `bytes` of device memory into the pointer
    /// `var` and free it (stream-ordered on this function's stream in the
    /// pool mode); `label` names it in error messages.
    pub fn device_alloc_free(
        &self,
        var: &str,
        label: &str,
        bytes: &str,
        pool: bool,
    ) -> (String, String) {
        let g = self.gpu.expect("GPU target");
        if pool {
            let (m, f) = (g.api("MallocAsync"), g.api("FreeAsync"));
            let s = self.stream();
            (
                format!("sdfgc_gpu_check({m}((void **)&{var}, {bytes}, {s}), \"{m} {label}\");"),
                format!("sdfgc_gpu_check({f}({var}, {s}), \"{f} {label}\");"),
            )
        } else {
            let (m, f) = (g.api("Malloc"), g.api("Free"));
            (
                format!("sdfgc_gpu_check({m}((void **)&{var}, {bytes}), \"{m} {label}\");"),
                format!("sdfgc_gpu_check({f}({var}), \"{f} {label}\");"),
            )
        }
    }

    /// The number of elements if it is a compile-time constant.
    pub fn const_size(&self, d: &DataDesc) -> Option<i64> {
        crate::ir::simplify::eval_int(&d.total_size, &mut |_| None)
    }

    fn declare_symbols(&mut self) {
        let mut assigned = BTreeSet::new();
        crate::passes::span::assigned_symbols(&self.sdfg.body, &mut assigned);
        let instrumented = crate::back::body::instrument::uses(self.sdfg).any();
        let params = self.sym_params.clone();
        for name in assigned {
            if params.contains(&name) {
                continue;
            }
            // An interstate edge assigning a container's name writes that
            // container where it is a variable of the whole function; a
            // transient declared inside a state or map (DaCe's InlineSDFG
            // can leave a symbol and such a transient of one name) is not
            // visible there, so the symbol gets its own variable, of the
            // container's type as DaCe declares it.
            let container = self.sdfg.arrays.get(&name).map(|d| {
                let visible = !d.transient
                    || self.p.alloc.get(self.sdfg.id, &name).is_none_or(|plan| {
                        matches!(plan.scope, AllocScope::Function | AllocScope::Blocks(..))
                    });
                (visible, d.dtype)
            });
            if let Some((true, _)) = container {
                continue;
            }
            let t = match container {
                Some((_, dtype)) => dtype,
                None => self.sdfg.symbol_type(&name).unwrap_or(DType::Int64),
            };
            // Data instrumentation may read a symbol before its first
            // assignment (DaCe's saves of a loop's guard): then zero.
            let init = if instrumented { " = {}" } else { "" };
            self.decls
                .line(format!("[[maybe_unused]] {} {name}{init};", t.ctype()));
            self.local_symbols.insert(name, t);
        }
    }

    // ------------------------------------------------------ control flow --

    /// Writes a region.
    pub fn region(&mut self, r: &Region, _label: &str) -> Result<()> {
        let Some(start) = r.start else { return Ok(()) };
        if let Some(items) = structure(r, self.sdfg)
            && !(contains_while(&items) && has_loop_jumps(r))
        {
            return self.structured(r, &items);
        }
        let order = r.program_order(start);
        let out_edges = r.out_edge_lists();
        // A chain: every block has at most one unconditional edge, to the next block.
        let is_chain = order.iter().enumerate().all(|(k, b)| {
            let outs = &out_edges[b.index()];
            match outs.len() {
                0 => k + 1 == order.len(),
                1 => {
                    let e = &r.edges[outs[0]];
                    is_true(&e.condition) && order.get(k + 1) == Some(&e.dst)
                }
                _ => false,
            }
        });
        if is_chain {
            for b in &order {
                self.block(&r.blocks[b.index()])?;
                for &ei in &out_edges[b.index()] {
                    self.assignments(&r.edges[ei].assignments);
                }
            }
            return Ok(());
        }
        // General graph: labels and gotos. First decide which jumps exist,
        // so that only labels that are jumped to are written.
        let names: HashMap<BlockId, String> = order
            .iter()
            .map(|b| (*b, self.fresh_label(&r.blocks[b.index()].label)))
            .collect();
        let end = self.fresh_label(&format!("{}_end", r.label));
        let mut used: BTreeSet<String> = BTreeSet::new();
        for (k, b) in order.iter().enumerate() {
            let next = order.get(k + 1);
            let mut unconditional = false;
            for &ei in &out_edges[b.index()] {
                let e = &r.edges[ei];
                let target = names.get(&e.dst).cloned().unwrap_or_else(|| end.clone());
                if is_true(&e.condition) {
                    if next != Some(&e.dst) {
                        used.insert(target);
                    }
                    unconditional = true;
                    break;
                }
                used.insert(target);
            }
            if !unconditional && k + 1 != order.len() {
                used.insert(end.clone());
            }
        }
        for (k, b) in order.iter().enumerate() {
            if used.contains(&names[b]) {
                self.out.label(&names[b]);
            }
            self.block(&r.blocks[b.index()])?;
            let next = order.get(k + 1);
            let mut unconditional = false;
            for &ei in &out_edges[b.index()] {
                let e = &r.edges[ei];
                let target = names.get(&e.dst).cloned().unwrap_or_else(|| end.clone());
                if is_true(&e.condition) {
                    self.assignments(&e.assignments);
                    if next != Some(&e.dst) {
                        self.out.line(format!("goto {target};"));
                    }
                    unconditional = true;
                    break;
                }
                let c = self.cond(&e.condition);
                self.out.open(format!("if ({c})"));
                self.assignments(&e.assignments);
                self.out.line(format!("goto {target};"));
                self.out.close();
            }
            if !unconditional && k + 1 != order.len() {
                self.out.line(format!("goto {end};"));
            }
        }
        if used.contains(&end) {
            self.out.label(&end);
        }
        Ok(())
    }

    /// Writes a region recovered as while loops and if/else. A counted loop
    /// ([`counted_back_edge`]) is written as DaCe writes it, `for (init;
    /// cond; update)`, the assignments of the edge into its guard as `init`.
    fn structured(&mut self, r: &Region, items: &[Structured]) -> Result<()> {
        let mut init: Option<usize> = None;
        for (k, it) in items.iter().enumerate() {
            match it {
                Structured::Block(b) => self.block(&r.blocks[b.index()])?,
                Structured::Edge(e)
                    if items
                        .get(k + 1)
                        .and_then(|n| counted_back_edge(r, n))
                        .is_some() =>
                {
                    init = Some(*e)
                }
                Structured::Edge(e) => self.assignments(&r.edges[*e].assignments),
                Structured::While { header, cond, body }
                    if let Some(back) = counted_back_edge(r, it) =>
                {
                    let i = init
                        .take()
                        .map(|e| self.assignment_list(&r.edges[e].assignments))
                        .unwrap_or_default();
                    let u = self.assignment_list(&r.edges[back].assignments);
                    let c = self.cond(cond);
                    let hb = &r.blocks[header.index()];
                    self.out.line(format!("// loop {}", hb.label));
                    // DaCe's `for` runs its guard state's symbol
                    // instrumentation once, before the loop.
                    if let BlockKind::State(st) = &hb.kind {
                        self.symbol_instrument(st);
                    }
                    self.out.open(format!("for ({i}; {c}; {u})"));
                    self.structured(r, &body[..body.len() - 1])?;
                    self.out.close();
                }
                Structured::While { header, cond, body } => {
                    let hb = &r.blocks[header.index()];
                    let c = self.cond(cond);
                    let empty_header = matches!(&hb.kind, BlockKind::State(st)
                        if st.nodes.is_empty() && st.symbol_instrument.is_none());
                    self.out.line(format!("// loop {}", hb.label));
                    if empty_header {
                        self.out.open(format!("while ({c})"));
                    } else {
                        self.out.open("while (true)");
                        self.block(hb)?;
                        self.out.line(format!("if (!({c})) break;"));
                    }
                    self.structured(r, body)?;
                    self.out.close();
                }
                Structured::If { cond, then, els } => {
                    let c = self.cond(cond);
                    self.out.open(format!("if ({c})"));
                    self.structured(r, then)?;
                    let trivial_else = els.iter().all(
                        |x| matches!(x, Structured::Edge(e) if r.edges[*e].assignments.is_empty()),
                    );
                    if trivial_else {
                        self.out.close();
                    } else {
                        self.out.close_with(" else {");
                        self.out.indent_in();
                        self.structured(r, els)?;
                        self.out.close();
                    }
                }
            }
        }
        Ok(())
    }

    /// `a = 1, b = a + 1`: interstate assignments as one C expression.
    fn assignment_list(&self, assigns: &[(String, Expr)]) -> String {
        assigns
            .iter()
            .map(|(k, v)| format!("{k} = {}", self.cond(v)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn assignments(&mut self, assigns: &[(String, Expr)]) {
        for (k, v) in assigns {
            let value = self.cond(v);
            self.out.line(format!("{k} = {value};"));
        }
    }

    /// Prints an interstate expression (may read scalars and array elements),
    /// with DaCe's tasklet semantics for integer operators.
    pub fn cond(&self, e: &Expr) -> String {
        self.interstate_expr(e)
    }

    /// Element access with already-printed per-dimension indices.
    pub fn element_from_printed(&self, data: &str, idx: &[String]) -> String {
        let Some(d) = self.sdfg.arrays.get(data) else {
            if let Some(c) = self.constant_element(data, idx) {
                return c;
            }
            return format!("{data}[{}]", idx.join("]["));
        };
        let parts: Vec<Expr> = idx.iter().map(|s| Expr::Sym(format!("({s})"))).collect();
        self.element(data, d, &parts)
    }

    /// `data[linear index]` (or the variable for values).
    pub fn element(&self, data: &str, d: &DataDesc, idx: &[Expr]) -> String {
        match self.access.get(data) {
            Some(Access::Value(v)) => v.clone(),
            Some(Access::Ptr(p)) => format!("{p}[{}]", self.linear(d, idx)),
            None => format!("{data}[{}]", self.linear(d, idx)),
        }
    }

    /// Linear element offset of `idx` in `d`: sum of (index + offset) * stride.
    pub fn linear(&self, d: &DataDesc, idx: &[Expr]) -> String {
        let mut sum: Option<Expr> = None;
        for (k, i) in idx.iter().enumerate() {
            // Zero offsets and unit strides (the common case) add no terms.
            let term = match d.offset.get(k) {
                None | Some(Expr::Int(0)) => i.clone(),
                Some(off) => Expr::bin(BinaryOp::Add, i.clone(), off.clone()),
            };
            let term = match d.strides.get(k) {
                None | Some(Expr::Int(1)) => term,
                Some(stride) => Expr::bin(BinaryOp::Mul, term, stride.clone()),
            };
            sum = Some(match sum {
                None => term,
                Some(s) => Expr::bin(BinaryOp::Add, s, term),
            });
        }
        self.sym(&sum.unwrap_or(Expr::Int(0)))
    }

    /// Writes one block, with the allocations that start before it and the
    /// frees that end after it ([`AllocScope::Blocks`]).
    fn block(&mut self, b: &Block) -> Result<()> {
        let p = self.p;
        let id = self.sdfg.id;
        self.free_all(p.alloc.ending_before(id, &b.path));
        for name in p.alloc.starting_at(id, &b.path) {
            let (Some(plan), Some(d)) = (p.alloc.get(id, name), self.sdfg.arrays.get(name)) else {
                continue;
            };
            if !self.stack_arrays.contains(name) {
                let (alloc, _) = self.alloc_free(name, d, &plan.memory);
                self.out.line(alloc);
            }
            if plan.zero {
                let z = self.zero_stmt(name, d);
                self.out.line(z);
            }
        }
        self.block_body(b)?;
        self.free_all(p.alloc.ending_at(id, &b.path));
        Ok(())
    }

    /// Frees the block-spanning transients `names` ([`AllocScope::Blocks`]).
    fn free_all(&mut self, names: &[String]) {
        let id = self.sdfg.id;
        for name in names {
            let (Some(plan), Some(d)) = (self.p.alloc.get(id, name), self.sdfg.arrays.get(name))
            else {
                continue;
            };
            if !self.stack_arrays.contains(name) {
                let (_, free) = self.alloc_free(name, d, &plan.memory);
                self.out.line(free);
            }
        }
    }

    fn block_body(&mut self, b: &Block) -> Result<()> {
        match &b.kind {
            BlockKind::State(st) => self.state(st, b),
            BlockKind::Region(r) => match &r.kind {
                RegionKind::Plain => {
                    self.out.line(format!("// region {}", b.label));
                    self.out.open("");
                    self.region(r, &b.label)?;
                    self.out.close();
                    Ok(())
                }
                RegionKind::Loop(l) => self.loop_region(r, l, &b.label),
            },
            BlockKind::Conditional(branches) => {
                self.out.line(format!("// conditional {}", b.label));
                for (k, (c, body)) in branches.iter().enumerate() {
                    let head = match (k, c) {
                        (0, Some(c)) => format!("if ({})", self.cond(c)),
                        (_, Some(c)) => format!("else if ({})", self.cond(c)),
                        (0, None) => "if (true)".to_string(),
                        (_, None) => "else".to_string(),
                    };
                    self.out.open(head);
                    self.region(body, &body.label)?;
                    self.out.close();
                }
                Ok(())
            }
            BlockKind::Break => {
                self.out.line("break;");
                Ok(())
            }
            BlockKind::Continue => {
                self.out.line("continue;");
                Ok(())
            }
            BlockKind::Return => {
                self.needs_exit_label = true;
                self.out.line("goto __sdfg_exit;");
                Ok(())
            }
        }
    }

    fn stmts_expr(&self, stmts: &[Stmt]) -> Result<String> {
        let mut parts = Vec::new();
        for s in stmts {
            match s {
                Stmt::Assign {
                    target: Target::Name(n),
                    op,
                    value,
                } => {
                    let v = self.cond(value);
                    parts.push(match op {
                        None => format!("{n} = {v}"),
                        Some(op) => format!(
                            "{n} = {}",
                            self.cond(&Expr::bin(*op, Expr::sym(n.clone()), value.clone()))
                        ),
                    });
                }
                Stmt::Expr(e) => parts.push(self.cond(e)),
                Stmt::If { .. }
                | Stmt::For { .. }
                | Stmt::Printf { .. }
                | Stmt::Chain { .. }
                | Stmt::Callback { .. } => {
                    return Err(Error::unsupported(
                        "",
                        "'if' and 'for' blocks in loop statements",
                    ));
                }
                Stmt::Assign { .. } => {
                    return Err(Error::unsupported(
                        "",
                        "loop statements that assign array elements",
                    ));
                }
            }
        }
        Ok(parts.join(", "))
    }

    fn loop_region(&mut self, r: &Region, l: &LoopInfo, label: &str) -> Result<()> {
        let init = self.stmts_expr(&l.init)?;
        let update = self.stmts_expr(&l.update)?;
        let cond = self.cond(&l.condition);
        self.out.line(format!("// loop {label}"));
        if !l.inverted {
            self.out.open(format!("for ({init}; {cond}; {update})"));
            self.region(r, label)?;
            self.out.close();
        } else {
            if !init.is_empty() {
                self.out.line(format!("{init};"));
            }
            self.out.open("do");
            self.region(r, label)?;
            let tail = match (update.is_empty(), l.update_before_condition) {
                (true, _) => cond,
                (false, true) => format!("({update}, {cond})"),
                (false, false) => format!("({cond}) && (({update}), true)"),
            };
            self.out.close_with(&format!(" while ({tail});"));
        }
        Ok(())
    }
}

/// The state member holding the elements of one thread's copy of a per-thread slot.
pub fn copy_stride_name(member: &str) -> String {
    format!("{member}_copy")
}

/// The name of a state-struct member for a transient.
pub fn member_name(sdfg_id: u32, name: &str) -> String {
    format!("__{sdfg_id}_{name}")
}

/// Whether `e` calls `sdfgc_pad_stride` anywhere.
fn has_pad_stride(e: &Expr) -> bool {
    match e {
        Expr::Call(f, args) => *f == Func::PadStride || args.iter().any(has_pad_stride),
        Expr::Unary(_, a) | Expr::Field(a, _) => has_pad_stride(a),
        Expr::Binary(_, a, b) => has_pad_stride(a) || has_pad_stride(b),
        Expr::Ternary(c, a, b) => has_pad_stride(c) || has_pad_stride(a) || has_pad_stride(b),
        Expr::Index(_, idx) => idx.iter().any(has_pad_stride),
        Expr::Record(_, fs) => fs.iter().any(|(_, v)| has_pad_stride(v)),
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Sym(_) => false,
    }
}

fn is_true(e: &Expr) -> bool {
    matches!(e, Expr::Bool(true)) || matches!(e, Expr::Int(v) if *v != 0)
}

fn contains_while(items: &[Structured]) -> bool {
    items.iter().any(|x| match x {
        Structured::While { .. } => true,
        Structured::If { then, els, .. } => contains_while(then) || contains_while(els),
        _ => false,
    })
}

/// The back edge of a counted loop: a `while` whose guard state is empty and
/// whose back edge (the body's last item) assigns, `i = i + 1`.
fn counted_back_edge(r: &Region, it: &Structured) -> Option<usize> {
    let Structured::While { header, body, .. } = it else {
        return None;
    };
    let empty =
        matches!(&r.blocks[header.index()].kind, BlockKind::State(st) if st.nodes.is_empty());
    match body.last() {
        Some(Structured::Edge(back)) if empty && !r.edges[*back].assignments.is_empty() => {
            Some(*back)
        }
        _ => None,
    }
}

/// True if the region (outside nested loops) has break/continue blocks, which
/// must keep referring to the enclosing loop region.
fn has_loop_jumps(r: &Region) -> bool {
    r.blocks.iter().any(|b| match &b.kind {
        BlockKind::Break | BlockKind::Continue => true,
        BlockKind::Region(inner) => {
            matches!(inner.kind, RegionKind::Plain) && has_loop_jumps(inner)
        }
        BlockKind::Conditional(brs) => brs.iter().any(|(_, body)| has_loop_jumps(body)),
        _ => false,
    })
}
