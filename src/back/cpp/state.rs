//! The program's state struct: its members, and the code of
//! `__dace_init_*` and `__dace_exit_*` that sets them up and tears them
//! down.

use super::{TaskletExtras, constants, init_locations};
use crate::back::body::{copy_stride_name, instrument, member_name};
use crate::back::gpu::libs::GpuLib;
use crate::back::gpu::{Dialect, cublas};
use crate::diag::Result;
use crate::ir::cexpr;
use crate::ir::simplify::simplify;
use crate::ir::*;
use crate::passes::alloc::THREADS;
use crate::passes::{Memory, Program};

/// The state struct's member declarations with the bodies of
/// `__dace_init_*` and `__dace_exit_*`.
#[derive(Default)]
pub(super) struct StateParts {
    /// Declarations of the members, in order.
    pub members: Vec<String>,
    /// The body of `__dace_init_*`.
    pub init: String,
    /// The body of `__dace_exit_*`.
    pub exit: String,
}

/// What [`StateParts::of`] needs besides the program.
pub(super) struct StateInputs<'a> {
    /// The program's SDFGs, outermost first.
    pub all: &'a [&'a Sdfg],
    /// `__program_*`'s body and the file's functions (the device constants they name).
    pub body: &'a str,
    pub functions: &'a [String],
    /// GPU events the writer's code uses.
    pub events: usize,
    /// The GPU libraries the file calls.
    pub gpu_libs: &'a [&'static GpuLib],
    pub extras: &'a TaskletExtras,
}

impl StateParts {
    /// The state of `p`, in order: transients (persistent allocations,
    /// External pointers, streams, per-thread copy sizes), the thread
    /// count, device constants, GPU streams, events and memory pool,
    /// library handles, the SDFGs' init and exit code, the tasklets' own
    /// state fields and init and exit code. With the file-scope
    /// declarations of the device constants.
    pub fn of(p: &Program, x: &StateInputs) -> Result<(StateParts, String)> {
        let mut s = StateParts::default();
        s.transients(p, x.all);
        if p.alloc.has_per_thread() {
            s.thread_count();
        }
        let mut device_globals = String::new();
        if let Some(g) = p.gpu {
            device_globals = s.device_constants(p, g, x)?;
        }
        if s.members.is_empty() {
            s.members.push("char __unused = 0;".into());
        }
        let unused_symbols: String = p
            .abi
            .init
            .iter()
            .map(|x| format!("    (void){};\n", x.name))
            .collect();
        s.init = unused_symbols + &s.init;
        if let Some(g) = p.gpu {
            s.gpu_streams(p, g, x.events);
            s.gpu_pool(p, g);
        }
        s.library_handles(p, x.gpu_libs);
        s.data_instrumentation(p);
        s.sdfg_code(p, x.all);
        s.tasklet_code(x.extras);
        if p.cublas_calls {
            // Last: the program's streams and memory are done with it.
            s.exit.push_str(cublas::EXIT);
        }
        Ok((s, device_globals))
    }

    /// Members of the transients the state holds (persistent allocations,
    /// External pointers, data streams, per-thread copy sizes), with their
    /// allocation in init and release in exit.
    fn transients(&mut self, p: &Program, all: &[&Sdfg]) {
        for s in all {
            for (n, d) in s.arrays.iter().filter(|(_, d)| d.transient) {
                let Some(plan) = p.alloc.get(s.id, n) else {
                    continue;
                };
                let member = member_name(s.id, n);
                let ct = d.dtype.ctype();
                if d.kind == DataKind::Stream {
                    if crate::back::body::datastream::is_member(p, s.id, n) {
                        self.members.push(format!(
                            "{} {member};",
                            crate::back::body::datastream::stream_type(d)
                        ));
                    }
                    continue;
                }
                if plan.per_thread {
                    let copy = copy_stride_name(&member);
                    self.members.push(format!(
                        "size_t {copy} = 0;  // elements of one thread's copy of {member}"
                    ));
                    if let (Memory::Persistent, Some(e)) = (&plan.memory, &plan.top_elements) {
                        self.init.push_str(&format!(
                            "    __state->{copy} = static_cast<size_t>({});\n",
                            cexpr::to_cpp(e)
                        ));
                    }
                }
                match &plan.memory {
                    Memory::Persistent => {
                        self.members.push(format!("{ct} *{member} = nullptr;"));
                        let elements = plan
                            .top_elements
                            .as_ref()
                            .map(|e| {
                                if plan.per_thread {
                                    cexpr::to_cpp(&simplify(&Expr::bin(
                                        BinaryOp::Mul,
                                        Expr::Sym(THREADS.into()),
                                        e.clone(),
                                    )))
                                } else {
                                    cexpr::to_cpp(e)
                                }
                            })
                            .unwrap_or_else(|| "1".into());
                        match p.gpu {
                            Some(g) if p.alloc.is_device(s.id, n) => {
                                let (m, f) = (g.api("Malloc"), g.api("Free"));
                                self.init.push_str(&format!(
                                    "    if ({m}(reinterpret_cast<void **>(&__state->{member}), sizeof({ct}) * static_cast<size_t>({elements})) != {}) {{ delete __state; return nullptr; }}\n",
                                    g.api("Success")
                                ));
                                self.exit.push_str(&format!(
                                    "    sdfgc_gpu_check({f}(__state->{member}), \"{f} {n}\");\n"
                                ));
                            }
                            _ => {
                                self.init.push_str(&format!(
                                    "    __state->{member} = sdfgc_alloc<{ct}>({elements});\n"
                                ));
                                self.exit
                                    .push_str(&format!("    sdfgc_free(__state->{member});\n"));
                            }
                        }
                    }
                    Memory::External { .. } => self
                        .members
                        .push(format!("{ct} *{member} = nullptr;  // External")),
                    _ => {}
                }
            }
        }
    }

    /// Per-thread slots: as many copies as threads a parallel region may
    /// use, counted first thing in init.
    fn thread_count(&mut self) {
        self.members.push(format!(
            "int {THREADS} = 1;  // omp_get_max_threads() at init: copies of each per-thread slot"
        ));
        self.init = format!(
            "    __state->{THREADS} = std::max(1, sdfgc_max_threads());\n    [[maybe_unused]] const size_t {THREADS} = static_cast<size_t>(__state->{THREADS});\n{}",
            self.init
        );
    }

    /// The device constants the code names; returns their file-scope declarations.
    fn device_constants(&mut self, p: &Program, g: &Dialect, x: &StateInputs) -> Result<String> {
        let code = format!("{}\n{}", x.body, x.functions.join("\n"));
        let dc = constants::device_constants(g, x.all, &code, p.options.constant_memory)?;
        self.members.extend(dc.members);
        self.init.push_str(&dc.init);
        self.exit.push_str(&dc.exit);
        Ok(dc.globals)
    }

    /// The GPU streams beyond the default one and the events between them.
    fn gpu_streams(&mut self, p: &Program, g: &Dialect, events: usize) {
        // The default stream, until the host sets another one (`__dace_gpu_set_all_streams`).
        self.init
            .push_str("    __state->gpu_streams[0] = nullptr;\n");
        let ok = g.api("Success");
        for i in 1..p.streams {
            self.init.push_str(&format!(
                "    if ({}(&__state->gpu_owned_streams[{i}], {}) != {ok}) {{ delete __state; return nullptr; }}\n    __state->gpu_streams[{i}] = __state->gpu_owned_streams[{i}];\n",
                g.api("StreamCreateWithFlags"),
                g.api("StreamNonBlocking")
            ));
            self.exit.push_str(&format!(
                "    sdfgc_gpu_check({}(__state->gpu_owned_streams[{i}]), \"destroy stream\");\n",
                g.api("StreamDestroy")
            ));
        }
        if p.streams > 1 {
            self.init.push_str(&format!(
                "    for (int i = 0; i < {events}; ++i) {{\n        if ({}(&__state->gpu_events[i], {}) != {ok}) {{ delete __state; return nullptr; }}\n    }}\n",
                g.api("EventCreateWithFlags"),
                g.api("EventDisableTiming")
            ));
            self.exit.push_str(&format!(
                "    for (int i = 0; i < {events}; ++i) sdfgc_gpu_check({}(__state->gpu_events[i]), \"destroy event\");\n",
                g.api("EventDestroy")
            ));
            self.members.push(format!(
                "{}Stream_t gpu_owned_streams[{}] = {{}};  // created in init, destroyed in exit",
                g.prefix, p.streams
            ));
            self.members.push(format!(
                "{}Event_t gpu_events[{events}] = {{}};  // created in init, destroyed in exit",
                g.prefix
            ));
        }
    }

    /// The release threshold of the default memory pool, where the program
    /// allocates from it.
    fn gpu_pool(&mut self, p: &Program, g: &Dialect) {
        let uses_pool = p
            .alloc
            .transients
            .values()
            .any(|t| t.memory == Memory::Pool);
        if uses_pool {
            // A low release threshold lets the pool hand memory back between calls (and corrupts buffers on HIP).
            self.init.push_str(&format!(
                "    {{\n        int __device = 0;\n        {pool_t} __pool;\n        uint64_t __threshold = UINT64_MAX;\n        if ({gd}(&__device) != {ok} || {gp}(&__pool, __device) != {ok} || {sa}(__pool, {attr}, &__threshold) != {ok}) {{ delete __state; return nullptr; }}\n    }}\n",
                pool_t = g.api("MemPool_t"),
                gd = g.api("GetDevice"),
                gp = g.api("DeviceGetDefaultMemPool"),
                sa = g.api("MemPoolSetAttribute"),
                attr = g.api("MemPoolAttrReleaseThreshold"),
                ok = g.api("Success"),
            ));
        }
    }

    /// The cuBLAS handle, the other GPU libraries' handles, and MPI's
    /// initialisation.
    fn library_handles(&mut self, p: &Program, gpu_libs: &[&GpuLib]) {
        if p.cublas_calls {
            self.members.push(cublas::MEMBER.to_string());
            self.init.push_str(cublas::INIT);
        }
        self.members.extend(
            gpu_libs
                .iter()
                .filter(|l| l.env.member.is_some())
                .map(|l| l.member_decl.to_string()),
        );
        if p.mpi_calls {
            self.init.push_str(crate::passes::expand::mpi::INIT);
        }
    }

    /// The SDFGs' own init and exit code (DaCe's `init_code` and `exit_code`).
    /// The serializer of data instrumentation (DaCe's `serializer`), made
    /// at init: its report folder is stamped with the time of the init.
    fn data_instrumentation(&mut self, p: &Program) {
        let uses = instrument::uses(&p.sdfg);
        if !uses.any() {
            return;
        }
        let m = instrument::MEMBER;
        let folder = if uses.save {
            p.options
                .data_folder
                .clone()
                .unwrap_or_else(|| format!(".dacecache/{}/data", p.sdfg.name))
        } else {
            String::new()
        };
        let folder: String = folder
            .chars()
            .flat_map(|c| match c {
                '"' | '\\' => vec!['\\', c],
                c => vec![c],
            })
            .collect();
        self.members
            .push(format!("sdfgc_data_serializer *{m} = nullptr;"));
        self.init.push_str(&format!(
            "    __state->{m} = new sdfgc_data_serializer(\"{folder}\");\n"
        ));
        self.exit.push_str(&format!("    delete __state->{m};\n"));
    }

    fn sdfg_code(&mut self, p: &Program, all: &[&Sdfg]) {
        for s in all {
            for loc in init_locations(p) {
                if let Some(g) = s.init_code.get(*loc) {
                    self.init.push_str(&g.code);
                    self.init.push('\n');
                }
            }
            for loc in init_locations(p) {
                if let Some(g) = s.exit_code.get(*loc) {
                    self.exit.push_str(&g.code);
                    self.exit.push('\n');
                }
            }
        }
    }

    /// C++ tasklets' own init and exit code and state fields, after the
    /// SDFGs' (DaCe's order).
    fn tasklet_code(&mut self, extras: &TaskletExtras) {
        for c in &extras.init {
            self.init.push_str(c);
            self.init.push('\n');
        }
        for c in &extras.exit {
            self.exit.push_str(c);
            self.exit.push('\n');
        }
        self.members.extend(extras.fields.iter().cloned());
    }
}
