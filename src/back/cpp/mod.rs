//! The C++ (OpenMP) writer: one self-contained translation unit per SDFG
//! plus a C header, on DaCe's C ABI.

use crate::back::gpu::{cublas, libs};
use askama::Template;

use crate::back::Outputs;
use crate::back::complex;
use crate::diag::{Error, ErrorKind, Result};
use crate::ir::*;
use crate::passes::Program;
use crate::passes::abi::ParamKind;

use crate::back::body::{FnWriter, WriterState, member_name};
use crate::passes::alloc::THREADS;

mod constants;
mod globals;
mod params;
mod prelude;
mod runtime;
mod state;
mod workspace;
pub(crate) use constants::uses_identifier;

use params::AbiLists;
use state::{StateInputs, StateParts};
use workspace::Workspace;

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
    /// Some node or state restores instrumented data: the file exports
    /// `__dace_set_instrumented_data_report`.
    data_report: bool,
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

/// The text of a translation unit that decides what else it needs (see
/// [`prelude::prelude`] and [`runtime::section`]).
struct FileText<'a> {
    /// `__program_*`'s body.
    body: &'a str,
    /// The file's other functions (kernels, nested SDFGs).
    functions: &'a [String],
    /// The state struct's members.
    members: &'a [String],
    program_params: &'a str,
    init_params: &'a str,
    /// The file-scope declarations.
    globals: &'a str,
    /// The bodies of `__dace_init_*` and `__dace_exit_*`.
    init: &'a str,
    exit: &'a str,
}

impl FileText<'_> {
    /// Whether the file's code (body or functions) names `s`.
    fn uses(&self, s: &str) -> bool {
        self.body.contains(s) || self.functions.iter().any(|f| f.contains(s))
    }
}

/// Writes `<name>.cpp` and `<name>.h`. What the writer cannot express is
/// refused before, by [`crate::valid::target::refuse_unsupported`].
pub fn write(p: &Program) -> Result<Outputs> {
    let sdfg = &p.sdfg;
    let name = sdfg.name.as_str();
    let version = env!("CARGO_PKG_VERSION");
    let abi = AbiLists::of(p);
    let mut all = Vec::new();
    collect_sdfgs(sdfg, &mut all);
    let struct_defs = struct_definitions(&all)?;
    let mut shared = WriterState::new(p.streams);
    let body = program_body(p, &mut shared)?;
    let gpu_libs = if p.gpu.is_some() {
        libs::used(sdfg)
    } else {
        Vec::new()
    };
    let extras = tasklet_extras(&all);
    let (state, device_globals) = StateParts::of(
        p,
        &StateInputs {
            all: &all,
            body: &body,
            functions: &shared.functions,
            events: shared.events,
            gpu_libs: &gpu_libs,
            extras: &extras,
        },
    )?;
    let globals = globals::globals(p, &all, &device_globals, &extras);
    let threads = p.alloc.has_per_thread();
    let text = FileText {
        body: &body,
        functions: &shared.functions,
        members: &state.members,
        program_params: &abi.program_params,
        init_params: &abi.init_params,
        globals: &globals,
        init: &state.init,
        exit: &state.exit,
    };
    let prelude = prelude::prelude(p, &struct_defs, &text);
    let runtime = runtime::section(p, &text, threads, &gpu_libs);
    let mode = match p.mode {
        None => "as stored in the SDFG".to_string(),
        Some(m) => format!("{m:?}").to_lowercase(),
    };
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
        build: build_line(p),
        extension: p.gpu.map(|g| g.extension).unwrap_or("cpp"),
        globals: globals.trim_end().to_string(),
        members: state.members,
        functions: shared.functions,
        program_params: abi.program_params,
        signature: signature_json(&p.abi).replace('"', "\\\""),
        program_args: abi.program_args,
        entry_checks: entry_checks(p),
        body,
        init_params: abi.init_params,
        init_params_tail: abi.init_params_tail,
        init_args_tail: abi.init_args_tail,
        init_unused: abi.init_unused,
        init_body: state.init,
        exit_body: state.exit,
        workspaces: workspace::workspaces(p),
        threads,
        threads_symbol: THREADS,
        data_report: crate::back::body::instrument::uses(sdfg).restore,
    };
    let header = Header {
        name,
        guard: name.to_uppercase(),
        version,
        program_params: abi.header_program_params,
        signature: signature_json(&p.abi),
        init_params: abi.header_init_params,
        init_params_tail: abi.header_init_tail,
        struct_types: struct_defs,
        complex_types: if abi.header_complex {
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
    let mut cpp = runtime::insert_helpers(&render(tu.render())?);
    cpp.push('\n');
    let mut h = render(header.render())?;
    h.push('\n');
    Ok(vec![
        (format!("{name}.{ext}"), cpp),
        (format!("{name}.h"), h),
    ])
}

/// `__program_*`'s body, written by the function writer (which collects
/// the file's other functions in `shared`). Parameters the body never
/// names (the state, an untouched array) are marked used, so the file
/// builds warning-free under -Wall -Wextra.
fn program_body(p: &Program, shared: &mut WriterState) -> Result<String> {
    let writer = FnWriter::new(p, &p.sdfg, shared, false);
    let (body, _) = writer.write_body()?;
    let unused: String = std::iter::once("__state")
        .chain(p.abi.program.iter().map(|x| x.name.as_str()))
        .filter(|n| !uses_identifier(&body, n))
        .map(|n| format!("    (void){n};\n"))
        .collect();
    Ok(unused + &body)
}

/// The build command in the file's head comment.
fn build_line(p: &Program) -> String {
    let name = &p.sdfg.name;
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
