//! The C++ (OpenMP) writer: one self-contained translation unit per SDFG
//! plus a C header, on DaCe's C ABI.

use crate::back::gpu::{cublas, libs};
use askama::Template;

use crate::back::Outputs;
use crate::back::complex;
use crate::back::gpu::Dialect;
use crate::diag::{Error, ErrorKind, Result};
use crate::ir::cexpr;
use crate::ir::*;
use crate::passes::abi::ParamKind;
use crate::passes::{Memory, Program};

use crate::back::body::{FnWriter, WriterState, copy_stride_name, member_name};
use crate::ir::simplify::simplify;
use crate::passes::alloc::THREADS;

mod constants;
pub(crate) use constants::uses_identifier;

/// Runtime helpers (allocation, alignment, atomics), each with the names
/// that bring it into a file.
const RUNTIME: &cexpr::HelperTable = &[
    (
        &["sdfgc_alloc<", "sdfgc_free("],
        r#"// `new T[n]` like DaCe: an over-aligned operator new goes through
// memalign, which is measurably slower for the per-call allocations of scoped mode.
template <typename T>
static inline T *sdfgc_alloc(size_t n) {
    return new T[n];
}
template <typename T>
static inline void sdfgc_free(T *p) {
    delete[] p;
}"#,
    ),
    (
        &["sdfgc_align_up("],
        "static inline size_t sdfgc_align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }",
    ),
    (
        &[
            "sdfgc_atomic_update(",
            "sdfgc_atomic_min(",
            "sdfgc_atomic_max(",
        ],
        r#"template <typename T, typename F>
static inline void sdfgc_atomic_update(T *p, T v, F f) {
    T old;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    T upd = f(old, v);
    while (!__atomic_compare_exchange(p, &old, &upd, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        upd = f(old, v);
    }
}
template <typename T>
static inline void sdfgc_atomic_min(T *p, T v) {
    sdfgc_atomic_update(p, v, [](T a, T b) { return b < a ? b : a; });
}
template <typename T>
static inline void sdfgc_atomic_max(T *p, T v) {
    sdfgc_atomic_update(p, v, [](T a, T b) { return a < b ? b : a; });
}"#,
    ),
];

/// Where a file's [`cexpr::HELPERS`] and [`RUNTIME`] helpers go, until the
/// rendered file tells which it names.
const HELPERS_MARK: &str = "@@sdfgc-helpers@@";
const RUNTIME_MARK: &str = "@@sdfgc-runtime@@";

/// The [`RUNTIME`] helpers that a file's text (`named`) calls, ending in a
/// newline; empty when it calls none.
fn runtime_helpers(named: &dyn Fn(&str) -> bool) -> String {
    cexpr::pick_helpers(RUNTIME, named, "// ---- sdfgc runtime helpers ----\n", "\n")
}

/// Contiguous host copies, only in files that make them.
const RUNTIME_COPY: &str = r#"// ---- contiguous copies: memcpy like DaCe's (its large-copy path beats a
// vectorised loop); sdfgc_move where both sides are parts of one container ----
template <typename T>
static inline void sdfgc_copy(T *dst, const T *src, int64_t n) {
    if (n > 0) std::memcpy(dst, src, sizeof(T) * static_cast<size_t>(n));
}
template <typename T>
static inline void sdfgc_move(T *dst, const T *src, int64_t n) {
    if (n > 0) std::memmove(dst, src, sizeof(T) * static_cast<size_t>(n));
}"#;

/// The floating-point min and max reductions of parallel maps (see
/// `back::body::reduction`), only in files that use them.
const RUNTIME_MINMAX: &str = r#"// ---- min and max reductions: compare-and-select, identity infinity ----
#ifdef _OPENMP
#pragma omp declare reduction(sdfgc_min : float : omp_out = omp_in < omp_out ? omp_in : omp_out) initializer(omp_priv = std::numeric_limits<float>::infinity())
#pragma omp declare reduction(sdfgc_min : double : omp_out = omp_in < omp_out ? omp_in : omp_out) initializer(omp_priv = std::numeric_limits<double>::infinity())
#pragma omp declare reduction(sdfgc_max : float : omp_out = omp_out < omp_in ? omp_in : omp_out) initializer(omp_priv = -std::numeric_limits<float>::infinity())
#pragma omp declare reduction(sdfgc_max : double : omp_out = omp_out < omp_in ? omp_in : omp_out) initializer(omp_priv = -std::numeric_limits<double>::infinity())
#endif"#;

/// Error codes and messages of the checked workspace setter (only in files with a workspace).
/// Thread helpers for per-thread slots (serial fallbacks without OpenMP).
const RUNTIME_THREADS: &str = r#"// ---- threads (per-thread workspace and persistent slots) ----
#ifdef _OPENMP
#include <omp.h>
static inline int sdfgc_max_threads() { return omp_get_max_threads(); }
static inline int sdfgc_thread_num() { return omp_get_thread_num(); }
#else
static inline int sdfgc_max_threads() { return 1; }
static inline int sdfgc_thread_num() { return 0; }
#endif"#;

const RUNTIME_WORKSPACE: &str = r#"// ---- workspace checks ----
#include <cstdio>
enum {
    SDFGC_OK = 0,
    SDFGC_ERR_NULL_STATE = 1,
    SDFGC_ERR_NULL_POINTER = 2,
    SDFGC_ERR_TOO_SMALL = 3,
    SDFGC_ERR_MISALIGNED = 4,
    SDFGC_ERR_NOT_DEVICE_MEMORY = 5,
};
static thread_local size_t sdfgc_detail[2];
static thread_local char sdfgc_message[256];
__attribute__((unused)) static inline void sdfgc_last_error_detail(size_t a, size_t b) {
    sdfgc_detail[0] = a;
    sdfgc_detail[1] = b;
}
__attribute__((unused)) static inline const char *sdfgc_error_message(int code) {
    switch (code) {
    case SDFGC_OK: return "success";
    case SDFGC_ERR_NULL_STATE: return "the state pointer is null: call __dace_init_* first";
    case SDFGC_ERR_NULL_POINTER: return "the workspace pointer is null";
    case SDFGC_ERR_TOO_SMALL:
        std::snprintf(sdfgc_message, sizeof sdfgc_message,
                      "the workspace is too small: %zu bytes given, %zu bytes required", sdfgc_detail[0], sdfgc_detail[1]);
        return sdfgc_message;
    case SDFGC_ERR_MISALIGNED:
        std::snprintf(sdfgc_message, sizeof sdfgc_message,
                      "the workspace pointer is misaligned: it is %zu bytes past a multiple of the required %zu-byte alignment",
                      sdfgc_detail[0], sdfgc_detail[1]);
        return sdfgc_message;
    case SDFGC_ERR_NOT_DEVICE_MEMORY:
        return "the workspace is not device memory: copy it to the GPU first (allocate it with the GPU allocator)";
    default: return "unknown error code";
    }
}"#;

struct Slot {
    member: String,
    ctype: String,
    shelf: usize,
    /// For a per-thread slot: the state member holding one copy's elements, and their number.
    copy: Option<(String, String)>,
}

struct Shelf {
    comment: String,
    size: String,
}

/// The size and comment of a shelf: the largest of its members' distinct
/// sizes, and every member with its live range.
fn shelf(members: &[&crate::passes::layout::Placement], align: u64) -> Shelf {
    let mut sizes: Vec<String> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for pl in members {
        let size = format!(
            "sdfgc_align_up(sizeof({}) * static_cast<size_t>({}), {align})",
            pl.slot.dtype.ctype(),
            cexpr::to_cpp(&pl.slot.total_elements()),
        );
        if seen.insert(size.clone()) {
            sizes.push(size);
        }
    }
    // sdfgc_max(sdfgc_max(a, b), c), written in one pass.
    let mut size = "sdfgc_max(".repeat(sizes.len().saturating_sub(1));
    for (i, s) in sizes.iter().enumerate() {
        if i > 0 {
            size.push_str(", ");
        }
        size.push_str(s);
        if i > 0 {
            size.push(')');
        }
    }
    let names: Vec<String> = members
        .iter()
        .map(|pl| format!("{} [live {}-{}]", pl.slot.name, pl.live.start, pl.live.end))
        .collect();
    Shelf {
        comment: names.join(", "),
        size,
    }
}

struct Workspace {
    /// Code that refuses a pointer that is not device memory (GPU storage only).
    device_check: String,
    storage: String,
    /// Other storage names the workspace functions are exported under too:
    /// `Default`, when External transients of storage Default live in it
    /// (DaCe's `CompiledSDFG` asks for the storage written in the SDFG).
    aliases: Vec<&'static str>,
    align: u64,
    shelves: Vec<Shelf>,
    slots: Vec<Slot>,
}

/// What the skeleton needs for GPU targets.
struct GpuInfo {
    /// `cuda` or `hip`.
    api: &'static str,
    /// Runtime header.
    header: &'static str,
    /// Number of streams in the state.
    streams: usize,
}

#[derive(Template)]
#[template(path = "cpp/translation_unit.cpp", escape = "none")]
struct TranslationUnit<'a> {
    gpu: Option<GpuInfo>,
    build: String,
    extension: &'static str,
    name: &'a str,
    version: &'a str,
    mode: String,
    prelude: &'a str,
    runtime: String,
    globals: String,
    members: Vec<String>,
    functions: Vec<String>,
    program_params: String,
    /// [`signature_json`] of the ABI, escaped for a C string literal.
    signature: String,
    program_args: String,
    /// Checks at program entry (`--check-pointers`).
    entry_checks: String,
    body: String,
    init_params: String,
    init_params_tail: String,
    init_args_tail: String,
    /// `(void)N;` for every init symbol: a workspace layout need not use them all.
    init_unused: String,
    init_body: String,
    exit_body: String,
    workspaces: Vec<Workspace>,
    /// The program has per-thread slots (their sizes depend on the state's thread count).
    threads: bool,
    /// [`THREADS`].
    threads_symbol: &'static str,
}

#[derive(Template)]
#[template(path = "cpp/header.h", escape = "none")]
struct Header<'a> {
    name: &'a str,
    guard: String,
    version: &'a str,
    program_params: String,
    /// [`signature_json`] of the ABI.
    signature: String,
    init_params: String,
    init_params_tail: String,
    /// The header's complex typedefs, where a parameter is complex.
    complex_types: &'static str,
    /// The C structs of `Structure` containers (DaCe's declarations).
    struct_types: String,
    /// One comment line per symbol (what it means).
    symbols: Vec<String>,
    /// One comment line per program argument.
    arguments: Vec<String>,
    /// Which pointers must be device memory.
    memory: Vec<String>,
    workspaces: Vec<crate::back::sample::WorkspaceDoc>,
}

/// The C++ compiler of the host build lines: `mpicxx` (MPI's wrapper of
/// the system compiler) when the file calls MPI, else `g++`.
pub fn cxx(p: &Program) -> &'static str {
    if p.mpi_calls { "mpicxx" } else { "g++" }
}

/// The link flag of the BLAS library the file calls, if any (`--blas`, or
/// DaCe's cuBLAS calls).
pub fn blas_link(p: &Program) -> Option<&'static str> {
    if p.blas_calls {
        Some(p.options.blas.link_flags())
    } else if p.gpu.is_some() && p.cublas_calls {
        Some(cublas::LINK)
    } else {
        None
    }
}

/// The link flags of the GPU libraries other than BLAS the file calls
/// (cuSOLVER, cuSPARSE, cuFFT: [`libs`]).
pub fn gpu_lib_links(p: &Program) -> Vec<&'static str> {
    match p.gpu {
        Some(g) if g.prefix == "cuda" => libs::used(&p.sdfg).iter().map(|l| l.link).collect(),
        _ => Vec::new(),
    }
}

/// Code that DaCe's library expansions leave as calls into a library
/// environment (cuBLAS, cuSolverDn, LAPACKE, OpenBLAS, MKL) needs that
/// environment's headers, handles and link flags: not provided, refused by
/// name (the SDFG itself is valid: `sdfgc check` and its ABI are fine).
///
/// cuBLAS (DaCe's cuBLAS environment alone) is provided for CUDA
/// ([`crate::back::gpu::cublas`]).
fn refuse_environments(r: &Region, cuda: bool, members: &[String]) -> Result<()> {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => {
                for n in &st.nodes {
                    match &n.kind {
                        NodeKind::Tasklet(t)
                            if cuda && cublas::uses(t) && t.environments.len() == 1 =>
                        {
                            cublas::check(n, t)?
                        }
                        // cuSOLVER, cuSPARSE, cuFFT (back::gpu::libs).
                        NodeKind::Tasklet(t) if cuda && libs::lib_of(t).is_some() => {
                            libs::check_tasklet(n, t, members)?
                        }
                        // MPI calls (the expansion of DaCe's MPI nodes, or DaCe's
                        // own on MPI_COMM_WORLD): the file includes <mpi.h>.
                        NodeKind::Tasklet(t)
                            if !cuda
                                && crate::passes::expand::mpi::calls_mpi(t)
                                && t.environments.len() == 1
                                && undeclared_member(&t.code.code, members).is_none() => {}
                        NodeKind::Tasklet(t) => {
                            if let Some(env) = t.environments.first() {
                                let short = env.rsplit('.').next().unwrap_or(env);
                                return Err(Error::unsupported(
                                    format!("{}/attributes/environments", n.path),
                                    format!(
                                        "tasklet '{}' calls into the library environment '{short}' ({env}); \
                                         save the SDFG with the library node unexpanded or expanded to its pure implementation",
                                        n.label
                                    ),
                                ));
                            }
                        }
                        NodeKind::Nested(ns) => refuse_environments(&ns.sdfg.body, cuda, members)?,
                        _ => {}
                    }
                }
            }
            BlockKind::Region(inner) => refuse_environments(inner, cuda, members)?,
            BlockKind::Conditional(brs) => {
                for (_, body) in brs {
                    refuse_environments(body, cuda, members)?;
                }
            }
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }
    Ok(())
}

/// The names state-field declarations declare (`int __pgrid_coords[2];` ->
/// `__pgrid_coords`).
fn declared_members(fields: &[String]) -> Vec<String> {
    fields
        .iter()
        .filter_map(|f| {
            let head = f.split(['[', '=', ';']).next()?.trim_end();
            let start = head
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            let name = &head[start..];
            (!name.is_empty()).then(|| name.to_string())
        })
        .collect()
}

/// The first `__state-><member>` of `code` that no state field declares.
fn undeclared_member<'a>(code: &'a str, members: &[String]) -> Option<&'a str> {
    let mut rest = code;
    while let Some(at) = rest.find("__state->") {
        let tail = &rest[at + "__state->".len()..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let member = &tail[..end];
        if !members.iter().any(|m| m == member) {
            return Some(member);
        }
        rest = &tail[end..];
    }
    None
}

/// `["Default"]` if a transient of storage Default and lifetime External in
/// the SDFG lives in the `storage` workspace, else nothing.
fn default_storage_aliases(p: &Program, storage: Storage) -> Vec<&'static str> {
    let mut found = false;
    p.sdfg.for_each_sdfg(&mut |s| {
        found |= s.arrays.iter().any(|(name, d)| {
            d.transient
                && d.storage == Storage::Default
                && d.lifetime == Lifetime::External
                && matches!(
                    p.alloc.transients.get(&(s.id, name.clone())).map(|t| &t.memory),
                    Some(Memory::External { storage: st, .. }) if *st == storage
                )
        });
    });
    if found { vec!["Default"] } else { Vec::new() }
}

/// The exported parameter lists as one line of JSON:
/// `{"program":[["a","double *"],...],"init":[["N","int64_t"],...]}`
/// (the state pointer left out). Names and C types need no escaping.
pub fn signature_json(abi: &crate::passes::abi::Abi) -> String {
    let list = |ps: &[crate::passes::abi::Param]| -> String {
        ps.iter()
            .map(|x| {
                let ctype = match (&x.callback, x.kind) {
                    (Some(cb), _) => cb.ctype(DType::ctype),
                    (None, ParamKind::Array) => format!("{} *", x.dtype.ctype()),
                    (None, _) => x.dtype.ctype().to_string(),
                };
                format!("[\"{}\",\"{ctype}\"]", x.name)
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        "{{\"program\":[{}],\"init\":[{}]}}",
        list(&abi.program),
        list(&abi.init)
    )
}

/// Writes `<name>.cpp` and `<name>.h`.
pub fn write(p: &Program) -> Result<Outputs> {
    let sdfg = &p.sdfg;
    let name = sdfg.name.as_str();
    let version = env!("CARGO_PKG_VERSION");
    refuse_unsupported(sdfg, p.gpu)?;
    let uses_cublas = p.cublas_calls;
    let program_params: String = p
        .abi
        .program
        .iter()
        .map(|x| format!(", {}", x.c_decl(x.kind == ParamKind::Array)))
        .collect();
    let header_params: String = p
        .abi
        .program
        .iter()
        .map(|x| format!(", {}", x.header_decl()))
        .collect();
    let header_complex = p
        .abi
        .program
        .iter()
        .chain(&p.abi.init)
        .any(|x| x.dtype.is_complex());
    let program_args: String = p
        .abi
        .program
        .iter()
        .map(|x| format!(", {}", x.name))
        .collect();
    let init_list: Vec<String> = p.abi.init.iter().map(|x| x.c_decl(false)).collect();
    let init_params = if init_list.is_empty() {
        "void".to_string()
    } else {
        init_list.join(", ")
    };
    let header_init_list: Vec<String> = p.abi.init.iter().map(|x| x.header_decl()).collect();
    let header_init_params = if header_init_list.is_empty() {
        "void".to_string()
    } else {
        header_init_list.join(", ")
    };
    let header_init_tail: String = header_init_list.iter().map(|x| format!(", {x}")).collect();
    let init_params_tail: String = init_list.iter().map(|x| format!(", {x}")).collect();

    let struct_defs = {
        let mut all = Vec::new();
        collect_sdfgs(sdfg, &mut all);
        complex::refuse_wcr(&all, p.gpu.is_some())?;
        struct_definitions(&all)?
    };
    let mut shared = WriterState::new(p.streams);
    let writer = FnWriter::new(p, sdfg, &mut shared, false);
    let (body, _) = writer.write_body()?;
    // Parameters the body never names (the state, an untouched array) are
    // marked used, so the file builds warning-free under -Wall -Wextra.
    let unused: String = std::iter::once("__state")
        .chain(p.abi.program.iter().map(|x| x.name.as_str()))
        .filter(|n| !uses_identifier(&body, n))
        .map(|n| format!("    (void){n};\n"))
        .collect();
    let body = unused + &body;

    // State members, persistent allocations and workspace slots.
    let mut members = Vec::new();
    let mut init_body = String::new();
    let mut exit_body = String::new();
    let mut all = Vec::new();
    collect_sdfgs(sdfg, &mut all);
    for s in &all {
        for (n, d) in s.arrays.iter().filter(|(_, d)| d.transient) {
            let Some(plan) = p.alloc.get(s.id, n) else {
                continue;
            };
            let member = member_name(s.id, n);
            let ct = d.dtype.ctype();
            if d.kind == DataKind::Stream {
                if crate::back::body::datastream::is_member(p, s.id, n) {
                    members.push(format!(
                        "{} {member};",
                        crate::back::body::datastream::stream_type(d)
                    ));
                }
                continue;
            }
            if plan.per_thread {
                let copy = copy_stride_name(&member);
                members.push(format!(
                    "size_t {copy} = 0;  // elements of one thread's copy of {member}"
                ));
                if let (Memory::Persistent, Some(e)) = (&plan.memory, &plan.top_elements) {
                    init_body.push_str(&format!(
                        "    __state->{copy} = static_cast<size_t>({});\n",
                        cexpr::to_cpp(e)
                    ));
                }
            }
            match &plan.memory {
                Memory::Persistent => {
                    members.push(format!("{ct} *{member} = nullptr;"));
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
                            init_body.push_str(&format!(
                                "    if ({m}(reinterpret_cast<void **>(&__state->{member}), sizeof({ct}) * static_cast<size_t>({elements})) != {}) {{ delete __state; return nullptr; }}\n",
                                g.api("Success")
                            ));
                            exit_body.push_str(&format!(
                                "    sdfgc_gpu_check({f}(__state->{member}), \"{f} {n}\");\n"
                            ));
                        }
                        _ => {
                            init_body.push_str(&format!(
                                "    __state->{member} = sdfgc_alloc<{ct}>({elements});\n"
                            ));
                            exit_body.push_str(&format!("    sdfgc_free(__state->{member});\n"));
                        }
                    }
                }
                Memory::External { .. } => {
                    members.push(format!("{ct} *{member} = nullptr;  // External"))
                }
                _ => {}
            }
        }
    }
    // Per-thread slots: as many copies as threads a parallel region may use.
    let threads = p.alloc.has_per_thread();
    if threads {
        members.push(format!(
            "int {THREADS} = 1;  // omp_get_max_threads() at init: copies of each per-thread slot"
        ));
        init_body = format!(
            "    __state->{THREADS} = std::max(1, sdfgc_max_threads());\n    [[maybe_unused]] const size_t {THREADS} = static_cast<size_t>(__state->{THREADS});\n{init_body}"
        );
    }
    let mut device_globals = String::new();
    if let Some(g) = p.gpu {
        let code = format!("{body}\n{}", shared.functions.join("\n"));
        let dc = constants::device_constants(g, &all, &code, p.options.constant_memory)?;
        members.extend(dc.members);
        init_body.push_str(&dc.init);
        exit_body.push_str(&dc.exit);
        device_globals = dc.globals;
    }
    if members.is_empty() {
        members.push("char __unused = 0;".into());
    }
    let unused_symbols: String = p
        .abi
        .init
        .iter()
        .map(|x| format!("    (void){};\n", x.name))
        .collect();
    init_body = unused_symbols + &init_body;
    let mut globals = String::new();
    let mut seen = Vec::new();
    let uses_pool = p
        .alloc
        .transients
        .values()
        .any(|t| t.memory == Memory::Pool);
    if let Some(g) = p.gpu {
        let code = user_cpp_code(&all);
        for d in crate::back::gpu::foreign_names(g, code.iter().map(String::as_str)) {
            globals.push_str(&d);
            globals.push('\n');
        }
    }
    if let Some(g) = p.gpu {
        // The default stream, until the host sets another one (`__dace_gpu_set_all_streams`).
        init_body.push_str("    __state->gpu_streams[0] = nullptr;\n");
        let ok = g.api("Success");
        for i in 1..p.streams {
            init_body.push_str(&format!(
                "    if ({}(&__state->gpu_owned_streams[{i}], {}) != {ok}) {{ delete __state; return nullptr; }}\n    __state->gpu_streams[{i}] = __state->gpu_owned_streams[{i}];\n",
                g.api("StreamCreateWithFlags"),
                g.api("StreamNonBlocking")
            ));
            exit_body.push_str(&format!(
                "    sdfgc_gpu_check({}(__state->gpu_owned_streams[{i}]), \"destroy stream\");\n",
                g.api("StreamDestroy")
            ));
        }
        if p.streams > 1 {
            let events = shared.events;
            init_body.push_str(&format!(
                "    for (int i = 0; i < {events}; ++i) {{\n        if ({}(&__state->gpu_events[i], {}) != {ok}) {{ delete __state; return nullptr; }}\n    }}\n",
                g.api("EventCreateWithFlags"),
                g.api("EventDisableTiming")
            ));
            exit_body.push_str(&format!(
                "    for (int i = 0; i < {events}; ++i) sdfgc_gpu_check({}(__state->gpu_events[i]), \"destroy event\");\n",
                g.api("EventDestroy")
            ));
            members.push(format!(
                "{}Stream_t gpu_owned_streams[{}] = {{}};  // created in init, destroyed in exit",
                g.prefix, p.streams
            ));
            members.push(format!(
                "{}Event_t gpu_events[{events}] = {{}};  // created in init, destroyed in exit",
                g.prefix
            ));
        }
        if uses_pool {
            // A low release threshold lets the pool hand memory back between calls (and corrupts buffers on HIP).
            init_body.push_str(&format!(
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
    if uses_cublas {
        members.push(cublas::MEMBER.to_string());
        init_body.push_str(cublas::INIT);
    }
    let gpu_libs = if p.gpu.is_some() {
        libs::used(sdfg)
    } else {
        Vec::new()
    };
    members.extend(
        gpu_libs
            .iter()
            .filter(|l| l.member.is_some())
            .map(|l| l.member_decl.to_string()),
    );
    if p.mpi_calls {
        init_body.push_str(crate::passes::expand::mpi::INIT);
    }
    for s in &all {
        for (k, c) in &s.constants {
            if seen.contains(k) {
                continue;
            }
            seen.push(k.clone());
            globals.push_str(&constant_decl(k, c));
        }
        if s.id == 0 {
            globals.push_str(&device_globals);
            if p.mpi_calls {
                // The MPI calls of DaCe's MPI nodes.
                globals.push_str(crate::passes::expand::mpi::HEADER);
                globals.push('\n');
            }
            if p.blas_calls && p.options.blas == crate::options::Blas::Openblas {
                // The BLAS calls of --blas openblas.
                globals.push_str(crate::passes::expand::blascall::CBLAS_HEADER);
                globals.push('\n');
            }
        }
        if let Some(g) = s.global_code.get("frame") {
            globals.push_str(&g.code);
            globals.push('\n');
        }
        for loc in init_locations(p) {
            if let Some(g) = s.init_code.get(*loc) {
                init_body.push_str(&g.code);
                init_body.push('\n');
            }
        }
        for loc in init_locations(p) {
            if let Some(g) = s.exit_code.get(*loc) {
                exit_body.push_str(&g.code);
                exit_body.push('\n');
            }
        }
    }
    // C++ tasklets' own global, init and exit code and state fields, after
    // the SDFGs' (DaCe's order); identical pieces once.
    let extras = tasklet_extras(&all);
    for g in &extras.global {
        globals.push_str(g);
        globals.push('\n');
    }
    for c in &extras.init {
        init_body.push_str(c);
        init_body.push('\n');
    }
    for c in &extras.exit {
        exit_body.push_str(c);
        exit_body.push('\n');
    }
    members.extend(extras.fields);
    if uses_cublas {
        // Last: the program's streams and memory are done with it.
        exit_body.push_str(cublas::EXIT);
    }
    let workspaces: Vec<Workspace> = p
        .layouts
        .iter()
        .map(|(storage, l)| Workspace {
            device_check: match p.gpu {
                Some(g) if storage.is_gpu() => device_check(g),
                _ => String::new(),
            },
            storage: storage.dace_name().to_string(),
            aliases: default_storage_aliases(p, *storage),
            align: l.align,
            shelves: l
                .members_by_shelf()
                .iter()
                .map(|members| shelf(members, l.align))
                .collect(),
            slots: l
                .placements
                .iter()
                .map(|pl| Slot {
                    member: member_name(pl.slot.sdfg, &pl.slot.name),
                    ctype: pl.slot.dtype.ctype().to_string(),
                    shelf: pl.shelf,
                    copy: pl.slot.per_thread.then(|| {
                        (
                            copy_stride_name(&member_name(pl.slot.sdfg, &pl.slot.name)),
                            cexpr::to_cpp(&pl.slot.elements),
                        )
                    }),
                })
                .collect(),
        })
        .collect();
    let mode = match p.mode {
        None => "as stored in the SDFG".to_string(),
        Some(m) => format!("{m:?}").to_lowercase(),
    };
    // Whether the file's code (body or shared functions) names `s`.
    let uses = |s: &str| body.contains(s) || shared.functions.iter().any(|f| f.contains(s));
    let mut prelude = String::new();
    let mut add = |part: &str| {
        prelude.push('\n');
        prelude.push_str(part.trim_end());
    };
    if !struct_defs.is_empty() {
        add(&struct_defs);
    }
    if complex::used_in(&body)
        || complex::used_in(&program_params)
        || complex::used_in(&globals)
        || shared.functions.iter().any(|f| complex::used_in(f))
        || members.iter().any(|m| complex::used_in(m))
    {
        add(complex::PRELUDE);
        if p.gpu.is_some() {
            add(complex::GPU_ATOMICS);
        }
    }
    let f16 = crate::back::half::used_in;
    if f16(&body)
        || f16(&program_params)
        || shared.functions.iter().any(|f| f16(f))
        || members.iter().any(|m| f16(m))
    {
        match &p.gpu {
            // DaCe's GPU code: CUDA's or HIP's `half` (IEEE binary16).
            Some(g) => add(&crate::back::half::gpu_prelude(g.prefix)),
            None => add(crate::back::half::prelude(&p.sdfg.dace_version)),
        }
    }
    if uses("sdfgc_stream<") || members.iter().any(|m| m.contains("sdfgc_stream<")) {
        add(crate::back::body::datastream::PRELUDE);
    }
    if uses("sdfgc_device_new<") {
        add(crate::back::gpu::device_heap::PRELUDE);
    }
    if uses("sdfgc_vec<") {
        add(crate::back::body::vector::PRELUDE);
    }
    if uses("sdfgc_gvec<") {
        add(crate::back::body::vector::GPU_PRELUDE);
        if uses("sdfgc_gvec<dace::float16,") {
            add(crate::back::body::vector::GPU_HALF_PRELUDE);
        }
    }
    if cexpr::NUMPY_HELPERS.iter().any(|h| uses(h)) {
        add(cexpr::PRELUDE_NUMPY);
    }
    let dace_math = cexpr::DACE_MATH_NAMES.iter().any(|n| {
        [&body, &init_body, &exit_body]
            .iter()
            .chain(shared.functions.iter().collect::<Vec<_>>().iter())
            .any(|f| uses_identifier(f, n))
    });
    if dace_math || uses("sdfgc_pow(") || members.iter().any(|m| m.contains("sdfgc_pow(")) {
        add(cexpr::PRELUDE_POW);
    }
    if dace_math {
        add(cexpr::PRELUDE_DACE_MATH);
    }
    if uses("dace::comm::") || init_body.contains("dace::comm::") {
        add(crate::passes::expand::mpi::COMM_RUNTIME);
    }
    // DaCe's `pyobject` and `string` (`char *`) as one name each, so that
    // `const T x` is a constant pointer, as in DaCe's code.
    for (t, def) in [
        (DType::PyObject, "typedef void *pyobject;"),
        (DType::Str, "typedef char *sdfgc_string;"),
    ] {
        let named = |text: &str| uses_identifier(text, t.ctype());
        if named(&body)
            || named(&program_params)
            || named(&init_params)
            || shared.functions.iter().any(|f| named(f))
            || members.iter().any(|m| named(m))
        {
            add(def);
        }
    }
    let runtime = {
        let mut r = String::new();
        if let Some(g) = p.gpu {
            r = format!("{r}\n{}", gpu_runtime(g));
        }
        if !p.layouts.is_empty() {
            r = format!("{r}\n{RUNTIME_WORKSPACE}");
        }
        if threads || uses("sdfgc_thread_num(") || uses("sdfgc_max_threads(") {
            r = format!("{r}\n{RUNTIME_THREADS}");
        }
        if uses_cublas {
            r = format!("{r}\n{}", cublas::RUNTIME);
        }
        for l in &gpu_libs {
            r = format!("{r}\n{}", l.runtime);
        }
        if uses("sdfgc_copy(") || uses("sdfgc_move(") {
            r = format!("{r}\n{RUNTIME_COPY}");
        }
        if let Some(g) = p.gpu.filter(|_| uses("dace::warpReduce<")) {
            r = format!("{r}\n{}", crate::back::gpu::warp::runtime(g));
        }
        if p.gpu.is_some() && uses("sdfgc_block_reduce(") {
            r = format!("{r}\n{}", crate::back::gpu::warp::BLOCK_REDUCE);
        }
        if uses("reduction(sdfgc_m") {
            r = format!("{r}\n{RUNTIME_MINMAX}");
        }
        r
    };
    // The helpers come in where the rendered file names them (marks, replaced below).
    let prelude = format!(
        "{}\n{HELPERS_MARK}{prelude}",
        cexpr::PRELUDE_BASE.trim_end()
    );
    let runtime = format!("{RUNTIME_MARK}{runtime}");
    let tu = TranslationUnit {
        name,
        version,
        mode,
        prelude: &prelude,
        runtime,
        gpu: p.gpu.map(|g| GpuInfo {
            api: g.prefix,
            header: g.header,
            streams: p.streams as usize,
        }),
        build: {
            let mut b = match p.gpu {
                Some(g) => format!("{} {name}.{} -o lib{name}.so", g.build, g.extension),
                None => format!(
                    "{} -std=c++17 -O2 -fopenmp -fPIC -shared {name}.cpp -o lib{name}.so",
                    cxx(p)
                ),
            };
            if let Some(link) = blas_link(p) {
                b = format!("{b} {link}");
            }
            for link in gpu_lib_links(p) {
                b = format!("{b} {link}");
            }
            b
        },
        extension: p.gpu.map(|g| g.extension).unwrap_or("cpp"),
        globals: globals.trim_end().to_string(),
        members,
        functions: shared.functions,
        program_params,
        signature: signature_json(&p.abi).replace('"', "\\\""),
        program_args,
        entry_checks: entry_checks(p),
        body,
        init_params: init_params.clone(),
        init_params_tail: init_params_tail.clone(),
        init_args_tail: p.abi.init.iter().map(|x| format!(", {}", x.name)).collect(),
        init_unused: p
            .abi
            .init
            .iter()
            .map(|x| format!("(void){};", x.name))
            .collect::<Vec<_>>()
            .join(" "),
        init_body,
        exit_body,
        workspaces,
        threads,
        threads_symbol: THREADS,
    };
    let header = Header {
        name,
        guard: name.to_uppercase(),
        version,
        program_params: header_params,
        signature: signature_json(&p.abi),
        init_params: header_init_params,
        init_params_tail: header_init_tail,
        struct_types: struct_defs.clone(),
        complex_types: if header_complex {
            complex::HEADER_TYPES
        } else {
            ""
        },
        symbols: crate::back::sample::symbol_lines(p),
        arguments: crate::back::sample::argument_lines(p),
        memory: crate::back::sample::memory_lines(p),
        workspaces: crate::back::sample::workspace_docs(p),
    };
    let render = |r: askama::Result<String>| {
        r.map_err(|e| Error::new(ErrorKind::Io, "", format!("template: {e}")))
    };
    let ext = tu.extension;
    let cpp = render(tu.render())?;
    let named = |n: &str| cpp.contains(n);
    let (helpers, runtime) = (cexpr::helpers(&named), runtime_helpers(&named));
    let mut cpp = cpp
        .replacen(&format!("{HELPERS_MARK}\n"), &helpers, 1)
        .replacen(&format!("{RUNTIME_MARK}\n"), &runtime, 1);
    cpp.push('\n');
    let mut h = render(header.render())?;
    h.push('\n');
    Ok(vec![
        (format!("{name}.{ext}"), cpp),
        (format!("{name}.h"), h),
    ])
}

/// `--check-pointers`: GPU_Global array arguments must be device memory.
fn entry_checks(p: &Program) -> String {
    // A program called before its workspace is set stops with a message
    // naming the setter, instead of writing through a null pointer.
    let mut out = String::new();
    for (storage, l) in &p.layouts {
        if let Some(first) = l.placements.first() {
            out.push_str(&format!(
                "    if (__state->{m} == nullptr) {{\n        std::fprintf(stderr, \"sdfgc: __program_{prog} called without its {s} workspace: set it first (__sdfgc_set_workspace_{s})\\n\");\n        std::abort();\n    }}\n",
                m = member_name(first.slot.sdfg, &first.slot.name),
                prog = p.sdfg.name,
                s = storage.dace_name()
            ));
        }
    }
    let Some(g) = p.gpu.filter(|_| p.options.check_pointers) else {
        return out;
    };
    for a in p
        .abi
        .program
        .iter()
        .filter(|a| a.kind == ParamKind::Array && p.alloc.is_device(0, &a.name))
    {
        out.push_str(&format!(
            "    if (!sdfgc_on_device({n})) {{\n        std::fprintf(stderr, \"sdfgc: argument '{n}' of {prog} is not device memory: copy it to the GPU first\\n\");\n        return;\n    }}\n",
            n = a.name,
            prog = p.sdfg.name
        ));
    }
    let _ = g;
    out
}

/// Calls `f` on every tasklet of the SDFGs' own states, in order.
fn for_each_tasklet<'a>(all: &[&'a Sdfg], f: &mut impl FnMut(&'a Tasklet)) {
    fn region<'a>(r: &'a Region, f: &mut impl FnMut(&'a Tasklet)) {
        for b in &r.blocks {
            match &b.kind {
                BlockKind::State(st) => {
                    for n in &st.nodes {
                        if let NodeKind::Tasklet(t) = &n.kind {
                            f(t);
                        }
                    }
                }
                BlockKind::Region(inner) => region(inner, f),
                BlockKind::Conditional(brs) => brs.iter().for_each(|(_, body)| region(body, f)),
                _ => {}
            }
        }
    }
    for s in all {
        region(&s.body, f);
    }
}

/// The code C++ tasklets place outside their own body.
#[derive(Default)]
struct TaskletExtras {
    /// `code_global`: at file scope.
    global: Vec<String>,
    /// `code_init`: in `__dace_init_*`.
    init: Vec<String>,
    /// `code_exit`: in `__dace_exit_*`.
    exit: Vec<String>,
    /// `state_fields`: members of the state struct.
    fields: Vec<String>,
}

fn tasklet_extras(all: &[&Sdfg]) -> TaskletExtras {
    let mut x = TaskletExtras::default();
    let push = |v: &mut Vec<String>, c: &str| {
        let c = c.trim();
        if !c.is_empty() && !v.iter().any(|o| o == c) {
            v.push(c.to_string());
        }
    };
    for_each_tasklet(all, &mut |t| {
        push(&mut x.global, &t.code_global.code);
        push(&mut x.init, &t.code_init.code);
        push(&mut x.exit, &t.code_exit.code);
        for f in &t.state_fields {
            push(&mut x.fields, f);
        }
    });
    x
}

/// Every piece of user C++ code in the SDFG tree (tasklets, global/init/exit code).
fn user_cpp_code(all: &[&Sdfg]) -> Vec<String> {
    let mut out = Vec::new();
    for s in all {
        out.extend(
            s.global_code
                .values()
                .chain(s.init_code.values())
                .chain(s.exit_code.values())
                .map(|c| c.code.clone()),
        );
    }
    for_each_tasklet(all, &mut |t| {
        for c in [&t.code, &t.code_global, &t.code_init, &t.code_exit] {
            if c.language == Language::Cpp {
                out.push(c.code.clone());
            }
        }
        out.extend(t.state_fields.iter().cloned());
    });
    out
}

/// The `init_code`/`exit_code` locations a target runs: `frame`, and `cuda` on GPUs.
fn init_locations(p: &Program) -> &'static [&'static str] {
    if p.gpu.is_some() {
        &["frame", "cuda"]
    } else {
        &["frame"]
    }
}

/// Device-side helpers of GPU translation units: error checks and atomics.
fn gpu_runtime(g: &Dialect) -> String {
    let api = g.prefix;
    let device_test = device_test(g);
    format!(
        r#"// ---- GPU runtime helpers ----
__attribute__((unused)) static inline void sdfgc_gpu_check({api}Error_t e, const char *what) {{
    if (e != {api}Success) {{
        std::fprintf(stderr, "sdfgc: %s failed: %s\n", what, {api}GetErrorString(e));
    }}
}}
// True if `p` points to device (or managed) memory.
__attribute__((unused)) static inline bool sdfgc_on_device(const void *ptr) {{
{device_test}
}}
// Atomic read-modify-write of any 1-, 2-, 4- or 8-byte value with a compare-and-swap loop
// on the aligned word that holds it.
template <typename T, typename F>
__device__ inline void sdfgc_gpu_atomic_update(T *p, T v, F f) {{
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "atomic size");
    if constexpr (sizeof(T) == 8) {{
        unsigned long long *a = reinterpret_cast<unsigned long long *>(p);
        unsigned long long old = *a, assumed;
        do {{
            assumed = old;
            T cur;
            memcpy(&cur, &assumed, 8);
            T upd = f(cur, v);
            unsigned long long u;
            memcpy(&u, &upd, 8);
            old = atomicCAS(a, assumed, u);
        }} while (assumed != old);
    }} else {{
        const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
        unsigned int *a = reinterpret_cast<unsigned int *>(addr & ~uintptr_t(3));
        const unsigned int shift = static_cast<unsigned int>(addr & 3) * 8;
        unsigned int old = *a, assumed;
        do {{
            assumed = old;
            T cur;
            unsigned int word = assumed >> shift;
            memcpy(&cur, &word, sizeof(T));
            T upd = f(cur, v);
            unsigned int bits = 0;
            memcpy(&bits, &upd, sizeof(T));
            const unsigned int mask = sizeof(T) == 4 ? 0xffffffffu : ((1u << (8 * (sizeof(T) & 3))) - 1u) << shift;
            const unsigned int next = sizeof(T) == 4 ? bits : ((assumed & ~mask) | ((bits << shift) & mask));
            old = atomicCAS(a, assumed, next);
        }} while (assumed != old);
    }}
}}"#
    )
}

/// Statements that return whether `ptr` is device memory.
fn device_test(g: &Dialect) -> String {
    let api = g.prefix;
    let attrs = g.pointer_attributes;
    let field = if api == "hip" {
        "#if HIP_VERSION_MAJOR >= 6\n    return __attrs.type == hipMemoryTypeDevice;\n#else\n    return __attrs.memoryType == hipMemoryTypeDevice;\n#endif".to_string()
    } else {
        "    return __attrs.type == cudaMemoryTypeDevice || __attrs.type == cudaMemoryTypeManaged;"
            .to_string()
    };
    format!(
        "    {attrs} __attrs;\n    if ({api}PointerGetAttributes(&__attrs, ptr) != {api}Success) {{\n        (void){api}GetLastError();\n        return false;\n    }}\n{field}"
    )
}

/// The check of the checked setter that the workspace is device memory.
fn device_check(_g: &Dialect) -> String {
    "    if (!sdfgc_on_device(ptr)) return SDFGC_ERR_NOT_DEVICE_MEMORY;\n".to_string()
}

fn collect_sdfgs<'a>(s: &'a Sdfg, out: &mut Vec<&'a Sdfg>) {
    out.push(s);
    fn region<'a>(r: &'a Region, out: &mut Vec<&'a Sdfg>) {
        for b in &r.blocks {
            match &b.kind {
                BlockKind::State(st) => {
                    for n in &st.nodes {
                        if let NodeKind::Nested(ns) = &n.kind {
                            collect_sdfgs(&ns.sdfg, out);
                        }
                    }
                }
                BlockKind::Region(inner) => region(inner, out),
                BlockKind::Conditional(brs) => brs.iter().for_each(|(_, body)| region(body, out)),
                _ => {}
            }
        }
    }
    region(&s.body, out);
}

fn constant_decl(name: &str, c: &Constant) -> String {
    let ct = c.dtype.ctype();
    let lit = |v: ConstValue| {
        if c.dtype == DType::Bool {
            (if v.truthy() { "true" } else { "false" }).to_string()
        } else if c.dtype.is_integer() {
            cexpr::typed_int_literal(v.as_int().unwrap_or_default(), c.dtype)
        } else {
            cexpr::float_literal(v.as_f64())
        }
    };
    let element = |i: usize| {
        let re = lit(c.values.get(i).copied().unwrap_or(ConstValue::Int(0)));
        if c.dtype.is_complex() {
            let im = lit(ConstValue::Float(c.imag.get(i).copied().unwrap_or(0.0)));
            format!("{ct}({re}, {im})")
        } else {
            re
        }
    };
    if c.shape.is_empty() {
        // `thrust::complex` has no constexpr constructor (kernels receive
        // constants as arguments, so `const` is enough for complex ones).
        let qual = if c.dtype.is_complex() {
            "const"
        } else {
            "constexpr"
        };
        format!(
            "[[maybe_unused]] static {qual} {ct} {name} = {};\n",
            element(0)
        )
    } else {
        let vals: Vec<String> = (0..c.values.len()).map(element).collect();
        format!(
            "static const {ct} {name}[{}] = {{{}}};\n",
            c.values.len().max(1),
            vals.join(", ")
        )
    }
}

/// Refuses, by name, what the C++ writer cannot express.
/// The C definitions of the struct types of DaCe `Structure` containers in
/// all SDFGs of a file, each once, a nested type before a type pointing to
/// it (`typedef` too, so that the header is valid C).
fn struct_definitions(all: &[&Sdfg]) -> Result<String> {
    let mut types: Vec<&StructType> = Vec::new();
    for s in all {
        for t in &s.struct_types {
            match types.iter().find(|u| u.name == t.name) {
                Some(u) if *u != t => {
                    return Err(Error::unsupported(
                        &s.path,
                        format!("two different structure types named '{}'", t.name),
                    ));
                }
                Some(_) => {}
                None => types.push(t),
            }
        }
    }
    // Structs held by value (their fields are scalars), by name.
    let mut records = std::collections::BTreeMap::new();
    for s in all {
        for d in s.arrays.values() {
            if let DType::Record(r) = d.dtype {
                match records.insert(r.name(), r) {
                    Some(q) if q != r => {
                        return Err(Error::unsupported(
                            &d.path,
                            format!("two different struct types named '{}'", r.name()),
                        ));
                    }
                    _ => {}
                }
            }
        }
    }
    let record_types: Vec<StructType> = records
        .values()
        .map(|r| StructType {
            name: r.name().to_string(),
            fields: r
                .fields()
                .iter()
                .map(|(f, t)| (f.clone(), t.ctype().to_string()))
                .collect(),
            uses: Vec::new(),
        })
        .collect();
    for t in &record_types {
        if types.iter().any(|u| u.name == t.name) {
            return Err(Error::unsupported(
                &all[0].path,
                format!("a structure and a struct type both named '{}'", t.name),
            ));
        }
        types.push(t);
    }
    let mut out = String::new();
    let mut done: Vec<&str> = Vec::new();
    while done.len() < types.len() {
        let before = done.len();
        for t in &types {
            if done.contains(&t.name.as_str()) || !t.uses.iter().all(|u| done.contains(&u.as_str()))
            {
                continue;
            }
            out.push_str(&format!("typedef struct {0} {0};\nstruct {0} {{\n", t.name));
            for (f, ct) in &t.fields {
                out.push_str(&format!("    {ct} {f};\n"));
            }
            out.push_str("};\n");
            done.push(&t.name);
        }
        if done.len() == before {
            return Err(Error::unsupported(
                &all[0].path,
                "structure types that contain one another",
            ));
        }
    }
    Ok(out.trim_end().to_string())
}

fn refuse_unsupported(sdfg: &Sdfg, gpu: Option<&crate::back::gpu::Dialect>) -> Result<()> {
    let mut all = Vec::new();
    collect_sdfgs(sdfg, &mut all);
    let members = declared_members(&tasklet_extras(&all).fields);
    refuse_environments(
        &sdfg.body,
        gpu.is_some_and(|g| g.prefix == "cuda"),
        &members,
    )?;
    let gpu = gpu.is_some();
    if gpu
        && let Some((n, d)) = all
            .iter()
            .flat_map(|s| s.arrays.iter())
            .find(|(_, d)| matches!(d.dtype, DType::Record(_)))
    {
        return Err(Error::unsupported(
            &d.path,
            format!("data '{n}' of struct type '{}' on a GPU target", d.dtype),
        ));
    }
    if gpu && let Some(s) = all.iter().find(|s| !s.struct_types.is_empty()) {
        return Err(Error::unsupported(
            &s.path,
            format!(
                "structure type '{}' on a GPU target (DaCe Structures are compiled for the CPU only)",
                s.struct_types[0].name
            ),
        ));
    }
    for (n, d) in &sdfg.arrays {
        if !gpu && !d.transient && d.storage.is_gpu() {
            return Err(Error::unsupported(
                &d.path,
                format!(
                    "argument '{n}' has GPU storage {}; compile this SDFG with --target cuda or hip",
                    d.storage.dace_name()
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Complex constants are declared from both parts; real ones keep exact values.
    #[test]
    fn constant_declarations() {
        let c = |dtype, shape: Vec<usize>, values, imag| Constant {
            dtype,
            shape,
            values,
            imag,
        };
        let z = c(
            DType::Complex128,
            vec![],
            vec![ConstValue::Float(1.0)],
            vec![2.0],
        );
        let d = constant_decl("Z", &z);
        assert!(
            d.starts_with("[[maybe_unused]] static const dace::complex128 Z"),
            "{d}"
        );
        assert!(d.contains("(1.0, 2.0)"), "{d}");
        let a = c(
            DType::Complex64,
            vec![2],
            vec![ConstValue::Int(3), ConstValue::Float(-0.5)],
            vec![0.0, 4.0],
        );
        let d = constant_decl("A", &a);
        assert!(d.contains("A[2]"), "{d}");
        assert!(d.contains("(3.0, 0.0)"), "{d}");
        assert!(d.contains("(-0.5, 4.0)"), "{d}");
        let i = c(
            DType::Int64,
            vec![],
            vec![ConstValue::Int(9007199254740993)],
            vec![],
        );
        assert!(constant_decl("I", &i).contains("9007199254740993"));
    }
}
