//! `--emit-sample`: `<name>_main.cpp`, a standalone program that runs the
//! library sdfgc generates, and the description of a program's interface
//! (what each symbol means, which arguments it writes) that the sample and
//! the header comments share.
//!
//! The sample links against the library through `<name>.h` only. It takes
//! symbol (and scalar argument) values from its command line, allocates
//! every array argument with the element count of its data descriptor
//! (`total_size`, evaluated at run time from the symbols), fills them
//! deterministically, allocates each workspace with the size and alignment
//! the library reports and sets it with the checked setter, runs the program
//! `--iterations` times (restoring the inputs before each call, so every call
//! computes the same thing) and prints the mean time per call and a checksum
//! per array the program writes.

use std::collections::BTreeSet;

use crate::ir::cexpr;
use crate::ir::simplify::free_symbols;
use crate::ir::*;
use crate::passes::Program;
use crate::passes::abi::ParamKind;

/// What the sample (and the header) knows about one symbol.
#[derive(Clone, Debug)]
pub struct SymbolDoc {
    /// The symbol's name (also its C++ variable in the sample).
    pub name: String,
    /// Its C type.
    pub ctype: &'static str,
    /// Its type.
    pub dtype: DType,
    /// What it is, inferred from the arguments' data descriptors
    /// ("extent of A (dim 0)", "stride of A (dim 1, elements)", ...).
    pub roles: Vec<String>,
    /// Passed to `__dace_init_<name>` (false: only sizes arguments).
    pub in_abi: bool,
    /// `Some((array, dim))` when the symbol is exactly the stride of that
    /// dimension: the sample's default then makes the array contiguous (C order).
    pub stride_of: Option<(String, usize)>,
}

/// An array argument: its name and data descriptor.
type Arg<'a> = (&'a str, &'a DataDesc);

/// The non-transient arrays of the top-level SDFG that the program takes as
/// pointer arguments, in ABI order.
fn array_args(p: &Program) -> Vec<Arg<'_>> {
    p.abi
        .program
        .iter()
        .filter(|x| x.kind == ParamKind::Array)
        .filter_map(|x| p.sdfg.arrays.get(&x.name).map(|d| (x.name.as_str(), d)))
        .collect()
}

/// The symbols of a program: those of its ABI (init order) followed by any
/// other symbol that an argument's shape, strides or size use.
pub fn symbol_docs(p: &Program) -> Vec<SymbolDoc> {
    let sdfg = &p.sdfg;
    // Callbacks are not values (the argument lines describe them).
    let mut names: Vec<(String, bool)> = p
        .abi
        .init
        .iter()
        .filter(|x| x.callback.is_none())
        .map(|x| (x.name.clone(), true))
        .collect();
    for (_, d) in array_args(p) {
        let exprs = d
            .shape
            .iter()
            .chain(&d.strides)
            .chain(&d.offset)
            .chain([&d.total_size, &d.start_offset]);
        for e in exprs {
            for s in free_symbols(e) {
                if !names.iter().any(|(n, _)| *n == s)
                    && !sdfg.arrays.contains_key(&s)
                    && !sdfg.constants.contains_key(&s)
                {
                    names.push((s, false));
                }
            }
        }
    }
    names
        .into_iter()
        .map(|(name, in_abi)| {
            let dtype = p
                .abi
                .init
                .iter()
                .find(|x| x.name == name)
                .map(|x| x.dtype)
                .or_else(|| sdfg.symbols.get(&name).copied())
                .unwrap_or(DType::Int64);
            let mut roles = Vec::new();
            let mut stride_of = None;
            for (a, d) in array_args(p) {
                let is = |e: &Expr| matches!(e, Expr::Sym(s) if *s == name);
                let uses = |e: &Expr| free_symbols(e).contains(&name);
                for (k, e) in d.shape.iter().enumerate() {
                    if is(e) {
                        roles.push(format!("extent of {a} (dim {k})"));
                    } else if uses(e) {
                        roles.push(format!(
                            "in the extent of {a} (dim {k}): {}",
                            cexpr::to_cpp(e)
                        ));
                    }
                }
                for (k, e) in d.strides.iter().enumerate() {
                    if is(e) {
                        roles.push(format!("stride of {a} (dim {k}, in elements)"));
                        stride_of.get_or_insert((a.to_string(), k));
                    } else if uses(e) && !d.shape.iter().any(&uses) {
                        roles.push(format!(
                            "in the stride of {a} (dim {k}): {}",
                            cexpr::to_cpp(e)
                        ));
                    }
                }
                for (k, e) in d.offset.iter().enumerate() {
                    if uses(e) {
                        roles.push(format!("in the index offset of {a} (dim {k})"));
                    }
                }
            }
            // A symbol that also sizes an argument is an extent, not a free stride.
            let in_a_shape = array_args(p)
                .iter()
                .any(|(_, d)| d.shape.iter().any(|e| free_symbols(e).contains(&name)));
            if in_a_shape {
                stride_of = None;
            }
            if roles.is_empty() {
                roles.push(
                    "used by the program (loop bounds, conditions or transient sizes)".into(),
                );
            }
            SymbolDoc {
                ctype: dtype.header_ctype(),
                name,
                dtype,
                roles,
                in_abi,
                stride_of,
            }
        })
        .collect()
}

/// The array arguments the program writes: those that an access node with
/// an incoming memlet refers to in some state of the top-level SDFG (writes
/// in nested SDFGs and map scopes reach such a node too).
pub fn written_arrays(p: &Program) -> BTreeSet<String> {
    let mut out = written_containers(p);
    let args: BTreeSet<String> = array_args(p).iter().map(|(n, _)| n.to_string()).collect();
    out.retain(|n| args.contains(n));
    out
}

/// The containers of the top-level SDFG that an access node with an
/// incoming memlet refers to (members of structures included).
fn written_containers(p: &Program) -> BTreeSet<String> {
    fn region(r: &Region, out: &mut BTreeSet<String>) {
        for b in &r.blocks {
            match &b.kind {
                BlockKind::State(st) => {
                    for e in &st.edges {
                        if let NodeKind::Access(a) = &st.nodes[e.dst.index()].kind {
                            out.insert(a.data.clone());
                        }
                    }
                }
                BlockKind::Region(inner) => region(inner, out),
                BlockKind::Conditional(brs) => brs.iter().for_each(|(_, body)| region(body, out)),
                _ => {}
            }
        }
    }
    let mut out = BTreeSet::new();
    region(&p.sdfg.body, &mut out);
    out
}

/// The workspace of one storage, for the header comments.
#[derive(Clone, Debug)]
pub struct WorkspaceDoc {
    /// DaCe's storage name (`CPU_Heap`): the suffix of the workspace functions.
    pub storage: String,
    /// Alignment of the pointer and of every offset, in bytes.
    pub align: u64,
    /// Bytes sdfgc's library asks for, as a C expression in the symbols.
    pub formula: String,
    /// Bytes DaCe's own library would ask for (unaligned sum of the transients).
    pub dace_formula: String,
    /// Number of transients placed in it.
    pub transients: usize,
    /// "device" for GPU storage (the pointer must be GPU memory), else "host".
    pub memory: &'static str,
}

/// The workspace of every storage with External transients.
pub fn workspace_docs(p: &Program) -> Vec<WorkspaceDoc> {
    let formula = |e: &Expr| cexpr::to_cpp(&crate::ir::simplify::simplify(e));
    p.layouts
        .iter()
        .map(|(s, l)| WorkspaceDoc {
            storage: s.dace_name().to_string(),
            align: l.align,
            formula: comment_safe(&formula(&l.total())),
            dace_formula: comment_safe(&formula(&l.dace_total())),
            transients: l.placements.len(),
            memory: if s.is_gpu() { "device" } else { "host" },
        })
        .collect()
}

/// Comment lines for the header: which pointers must be device (GPU) memory.
pub fn memory_lines(p: &Program) -> Vec<String> {
    let (device, host): (Vec<Arg>, Vec<Arg>) = array_args(p)
        .into_iter()
        .partition(|(_, d)| d.storage.is_gpu());
    let names = |v: &[Arg]| v.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
    let gpu_workspace = p.layouts.keys().any(|s| s.is_gpu());
    if device.is_empty() && !gpu_workspace {
        vec![
            "Every pointer argument and workspace is host memory: none must be a device pointer."
                .to_string(),
        ]
    } else {
        let mut lines = vec![format!(
            "Device pointers (GPU memory): {}.",
            if device.is_empty() {
                "none".to_string()
            } else {
                names(&device)
            }
        )];
        if !host.is_empty() {
            lines.push(format!("Host pointers: {}.", names(&host)));
        }
        lines
    }
}

/// Comment lines for the header: one per symbol (`int N: extent of A (dim 0)`).
pub fn symbol_lines(p: &Program) -> Vec<String> {
    symbol_docs(p)
        .into_iter()
        .filter(|s| s.in_abi)
        .map(|s| comment_safe(&format!("{} {}: {}", s.ctype, s.name, s.roles.join("; "))))
        .collect()
}

/// The struct types held by value among the program's containers, by name.
fn records_of(p: &Program) -> Vec<crate::ir::Record> {
    let mut out: Vec<crate::ir::Record> = Vec::new();
    for d in p.sdfg.arrays.values() {
        if let DType::Record(r) = d.dtype
            && !out.contains(&r)
        {
            out.push(r);
        }
    }
    out.sort_by_key(|r| r.name());
    out
}

/// `sdfgc_fill_record` and `sdfgc_record_value` of one struct type: the
/// sample's contents and checksum, field by field (padding is never read).
fn record_helpers(r: crate::ir::Record) -> String {
    let t = r.name();
    let mut fill = Vec::new();
    let mut value = Vec::new();
    for (f, ft) in r.fields() {
        let ct = ft.ctype();
        fill.push(match ft {
            DType::Bool => format!("v.{f} = (h & 1u) != 0;"),
            _ if ft.is_integer() => format!("v.{f} = static_cast<{ct}>(h + 1u);"),
            _ => format!("v.{f} = static_cast<{ct}>(0.125 + h / 16.0);"),
        });
        value.push(format!("static_cast<double>(v.{f})"));
    }
    format!(
        "// The sample's contents and checksum of struct {t}, field by field.\n\
         static void sdfgc_fill_record({t} &v, unsigned h) {{ {} }}\n\
         static double sdfgc_record_value(const {t} &v) {{ return {}; }}",
        fill.join(" "),
        value.join(" + ")
    )
}

/// Comment lines for the header: one per program argument, with the array
/// shape and strides (in elements) and whether the program writes it.
pub fn argument_lines(p: &Program) -> Vec<String> {
    let written = written_containers(p);
    p.abi
        .program
        .iter()
        .map(|x| match (x.kind, p.sdfg.arrays.get(&x.name)) {
            (ParamKind::Array, Some(d)) if matches!(d.dtype, DType::Struct(_)) => {
                let t = x.dtype.header_ctype();
                let members: Vec<String> = written
                    .iter()
                    .filter_map(|n| member_path(p, n, &x.name))
                    .collect();
                let access = if members.is_empty() {
                    "members read only".to_string()
                } else {
                    format!("members written: {}", members.join(", "))
                };
                format!(
                    "{t} *{}: one struct {t} (declared above; arrays and nested structures are pointers in it); host memory; {access}",
                    x.name
                )
            }
            (ParamKind::Array, Some(d)) => {
                let dims: String = d
                    .shape
                    .iter()
                    .map(|e| format!("[{}]", cexpr::to_cpp(e)))
                    .collect();
                let strides: Vec<String> = d.strides.iter().map(cexpr::to_cpp).collect();
                let memory = if d.storage.is_gpu() {
                    "device memory"
                } else {
                    "host memory"
                };
                let access = if written.contains(&x.name) {
                    "written (and possibly read)"
                } else {
                    "read only"
                };
                format!(
                    "{} *{}: {}{dims}, strides ({}) elements, {} elements allocated; {memory}; {access}",
                    x.dtype.header_ctype(),
                    x.name,
                    x.dtype.header_ctype(),
                    strides.join(", "),
                    cexpr::to_cpp(&d.total_size)
                )
            }
            (ParamKind::Symbol, _) => format!("{} {}: symbol (see above)", x.dtype.header_ctype(), x.name),
            (ParamKind::Callback, _) => format!(
                "{}: callback into Python (a function pointer: DaCe's CompiledSDFG passes its trampoline)",
                x.header_decl()
            ),
            _ => format!("{} {}: scalar argument (by value)", x.dtype.header_ctype(), x.name),
        })
        .map(|l| comment_safe(&l))
        .collect()
}

/// The dotted path (`vals`, `p.w`) of the member container `name` below
/// the structure argument `root`, if it is one.
fn member_path(p: &Program, name: &str, root: &str) -> Option<String> {
    let mut path = Vec::new();
    let mut cur = name;
    while let Some(m) = p.sdfg.arrays.get(cur).and_then(|d| d.member.as_ref()) {
        path.push(m.field.as_str());
        cur = &m.parent;
    }
    (cur == root && !path.is_empty()).then(|| {
        path.reverse();
        path.join(".")
    })
}

/// Text that cannot end or nest a C comment.
pub fn comment_safe(s: &str) -> String {
    s.replace("*/", "* /").replace("/*", "/ *")
}

/// Default value (C++ literal) of a symbol or scalar argument in the sample.
fn default_value(name: &str, dtype: DType) -> &'static str {
    if dtype == DType::Bool {
        "true"
    } else if dtype.is_float() {
        "0.5"
    } else if name.ends_with("_range_0") {
        // gt4py's field domains: `__<field>_<Dim>_range_0/1` are start/stop.
        "0"
    } else {
        "16"
    }
}

/// Writes `<name>_main.cpp`: returns (file name, text).
pub fn write_sample(p: &Program) -> (String, String) {
    let name = p.sdfg.name.as_str();
    let version = env!("CARGO_PKG_VERSION");
    let callbacks: Vec<&str> = p
        .abi
        .program
        .iter()
        .filter(|x| x.callback.is_some())
        .map(|x| x.name.as_str())
        .collect();
    if !callbacks.is_empty() {
        // Function pointers into Python, which DaCe's `CompiledSDFG` passes:
        // a C++ sample has none to pass, so it says so instead of running.
        let why = format!(
            "{name} takes callbacks into Python ({}), which DaCe's CompiledSDFG passes; \
             this sample cannot run it",
            callbacks.join(", ")
        );
        let text = format!(
            "// Sample main for {name}, written by sdfgc {version}.\n// {why}.\n\
             #include <cstdio>\n\nint main() {{\n    std::fprintf(stderr, \"%s\\n\", \"{why}\");\n    \
             return 1;\n}}\n"
        );
        return (format!("{name}_main.cpp"), text);
    }
    // The BLAS library the file calls, if any (`--blas`).
    let link = crate::back::cpp::blas_link(p)
        .into_iter()
        .chain(crate::back::cpp::gpu_lib_links(p))
        .map(|l| format!(" {l}"))
        .collect::<String>();
    let cxx = crate::back::cpp::cxx(p);
    let symbols = symbol_docs(p);
    let scalars: Vec<&crate::passes::abi::Param> = p
        .abi
        .program
        .iter()
        .filter(|x| x.kind == ParamKind::Scalar)
        .collect();
    let arrays = array_args(p);
    let written = written_arrays(p);
    let init_args: Vec<String> = p.abi.init.iter().map(|x| x.name.clone()).collect();
    let init_args_tail: String = init_args.iter().map(|a| format!(", {a}")).collect();

    let mut o = String::new();
    let mut line = |s: &str| {
        o.push_str(s);
        o.push('\n');
    };
    line(&format!(
        "// {name}_main.cpp: generated by sdfgc {version} from the SDFG '{name}' (--emit-sample). Do not edit."
    ));
    line("// A standalone program that runs the library through its C header: it allocates");
    line("// every array argument (element count from its data descriptor, for the symbol");
    line("// values given), fills them deterministically, sets up each workspace with the");
    line("// size and alignment the library reports, runs the program --iterations times");
    line("// (inputs restored before every call) and prints the mean time per call and a");
    line("// checksum per array the program writes.");
    line("//");
    if let Some(g) = p.gpu {
        // The GPU library builds with its toolchain; the sample links it.
        line("// Build the library, then the program against it:");
        line(&format!(
            "//   {} {name}.{} -o lib{name}.so{link}",
            g.build, g.extension
        ));
    } else {
        line("// Build with the library's source:");
        line(&format!(
            "//   {cxx} -std=c++17 -O2 -fopenmp {name}_main.cpp {name}.cpp -o {name}_main{link}"
        ));
        line("// or against the shared library:");
        line(&format!(
            "//   {cxx} -std=c++17 -O2 -fopenmp -fPIC -shared {name}.cpp -o lib{name}.so{link}"
        ));
    }
    line(&format!(
        "//   {cxx} -std=c++17 -O2 {name}_main.cpp -L. -l{name} -Wl,-rpath,'$ORIGIN' -o {name}_main"
    ));
    line("// Run:");
    let launch = if p.mpi_calls { "mpirun -np 4 " } else { "" };
    line(&format!(
        "//   {launch}./{name}_main [--iterations N] [--SYMBOL VALUE | SYMBOL=VALUE]..."
    ));
    line(&format!("#include \"{name}.h\""));
    for h in [
        "chrono",
        "cmath",
        "cstdint",
        "cstdio",
        "cstdlib",
        "cstring",
        "limits",
        "string",
        "type_traits",
    ] {
        line(&format!("#include <{h}>"));
    }
    line("");
    line(&cexpr::prelude_all());
    for r in records_of(p) {
        line(&record_helpers(r));
    }
    line(SAMPLE_HELPERS);
    line("");
    if p.mpi_calls {
        // The application owns MPI: the library only initialises it when
        // nobody has; the sample initialises and finalises it around the run.
        line(crate::passes::expand::mpi::HEADER);
        line("");
        line("static int sdfgc_main(int sdfgc_argc, char **sdfgc_argv);");
        line("");
        line("int main(int argc, char **argv) {");
        line("    MPI_Init(&argc, &argv);");
        line("    const int sdfgc_rc = sdfgc_main(argc, argv);");
        line("    MPI_Finalize();");
        line("    return sdfgc_rc;");
        line("}");
        line("");
        line("static int sdfgc_main(int sdfgc_argc, char **sdfgc_argv) {");
    } else {
        line("int main(int sdfgc_argc, char **sdfgc_argv) {");
    }
    line("    long sdfgc_iterations = 10;");
    // Symbols and scalars with their defaults.
    for s in &symbols {
        let default = if s.stride_of.is_some() {
            "0"
        } else {
            default_value(&s.name, s.dtype)
        };
        line(&format!(
            "    {} {} = {default};  // {}",
            s.ctype,
            s.name,
            s.roles.join("; ")
        ));
        line(&format!("    bool sdfgc_given_{} = false;", s.name));
    }
    for x in &scalars {
        line(&format!(
            "    {} {} = {};  // scalar argument",
            x.dtype.header_ctype(),
            x.name,
            default_value(&x.name, x.dtype)
        ));
        line(&format!("    bool sdfgc_given_{} = false;", x.name));
    }
    // Usage text.
    let settable: Vec<(String, String)> = symbols
        .iter()
        .map(|s| {
            let default = match &s.stride_of {
                Some((a, _)) => format!("contiguous {a}"),
                None => default_value(&s.name, s.dtype).to_string(),
            };
            (
                s.name.clone(),
                format!("{} (default {default}): {}", s.ctype, s.roles.join("; ")),
            )
        })
        .chain(scalars.iter().map(|x| {
            (
                x.name.clone(),
                format!(
                    "{} (default {}): scalar argument",
                    x.dtype.header_ctype(),
                    default_value(&x.name, x.dtype)
                ),
            )
        }))
        .collect();
    let mut usage = format!(
        " [--iterations N] [--NAME VALUE | NAME=VALUE]...\\nRuns {name} and prints the time per call and a checksum per output.\\n  iterations: calls to time (default 10)\\n"
    );
    for (n, d) in &settable {
        usage.push_str(&format!("  {n}: {}\\n", c_string_body(d)));
    }
    line(&format!("    const char *sdfgc_usage = \"{}\";", usage));
    // Argument parsing.
    line("    for (int sdfgc_i = 1; sdfgc_i < sdfgc_argc; ++sdfgc_i) {");
    line("        std::string sdfgc_arg = sdfgc_argv[sdfgc_i], sdfgc_key, sdfgc_value;");
    line("        if (sdfgc_arg == \"-h\" || sdfgc_arg == \"--help\") {");
    line("            std::printf(\"usage: %s%s\", sdfgc_argv[0], sdfgc_usage);");
    line("            return 0;");
    line("        }");
    line("        size_t sdfgc_eq = sdfgc_arg.find('=');");
    line("        if (sdfgc_arg.rfind(\"--\", 0) == 0 && sdfgc_eq == std::string::npos) {");
    line("            if (sdfgc_i + 1 >= sdfgc_argc) {");
    line(
        "                std::fprintf(stderr, \"error: %s needs a value\\n\", sdfgc_arg.c_str());",
    );
    line("                return 2;");
    line("            }");
    line("            sdfgc_key = sdfgc_arg.substr(2);");
    line("            sdfgc_value = sdfgc_argv[++sdfgc_i];");
    line("        } else if (sdfgc_eq != std::string::npos) {");
    line("            size_t sdfgc_start = sdfgc_arg.rfind(\"--\", 0) == 0 ? 2 : 0;");
    line("            sdfgc_key = sdfgc_arg.substr(sdfgc_start, sdfgc_eq - sdfgc_start);");
    line("            sdfgc_value = sdfgc_arg.substr(sdfgc_eq + 1);");
    line("        } else {");
    line(
        "            std::fprintf(stderr, \"error: unexpected argument '%s'\\n\", sdfgc_arg.c_str());",
    );
    line("            std::fprintf(stderr, \"usage: %s%s\", sdfgc_argv[0], sdfgc_usage);");
    line("            return 2;");
    line("        }");
    line("        bool sdfgc_ok = false;");
    line("        if (sdfgc_key == \"iterations\") {");
    line(
        "            sdfgc_ok = sdfgc_parse(sdfgc_value.c_str(), sdfgc_iterations) && sdfgc_iterations > 0;",
    );
    for (n, _) in &settable {
        line(&format!("        }} else if (sdfgc_key == \"{n}\") {{"));
        line(&format!(
            "            sdfgc_ok = sdfgc_parse(sdfgc_value.c_str(), {n});"
        ));
        line(&format!("            sdfgc_given_{n} = true;"));
    }
    line("        } else {");
    line("            std::fprintf(stderr, \"error: unknown name '%s'\\n\", sdfgc_key.c_str());");
    line("            std::fprintf(stderr, \"usage: %s%s\", sdfgc_argv[0], sdfgc_usage);");
    line("            return 2;");
    line("        }");
    line("        if (!sdfgc_ok) {");
    line(
        "            std::fprintf(stderr, \"error: invalid value '%s' for %s\\n\", sdfgc_value.c_str(), sdfgc_key.c_str());",
    );
    line("            return 2;");
    line("        }");
    line("    }");
    // Strides that were not given make their array contiguous.
    for s in &symbols {
        if let Some((a, k)) = &s.stride_of {
            let d = &p.sdfg.arrays[a.as_str()];
            let inner: Vec<String> = d.shape[k + 1..]
                .iter()
                .map(|e| cexpr::wrap(&cexpr::to_cpp(e)))
                .collect();
            let value = if inner.is_empty() {
                "1".to_string()
            } else {
                inner.join(" * ")
            };
            line(&format!(
                "    if (!sdfgc_given_{}) {} = static_cast<{}>({value});  // contiguous {a}",
                s.name, s.name, s.ctype
            ));
        }
    }
    for n in settable.iter().map(|(n, _)| n) {
        line(&format!("    (void)sdfgc_given_{n};"));
    }
    // Print the values used.
    line(&format!("    std::printf(\"sample: {name}\\n\");"));
    for (n, _) in &settable {
        line(&format!("    sdfgc_print_value(\"{n}\", {n});"));
    }
    // Arrays.
    for (k, (a, d)) in arrays.iter().enumerate() {
        let ct = d.dtype.header_ctype();
        line(&format!(
            "    const long long sdfgc_n_{a} = static_cast<long long>({});",
            cexpr::to_cpp(&d.total_size)
        ));
        line(&format!("    if (sdfgc_n_{a} < 0) {{"));
        line(&format!(
            "        std::fprintf(stderr, \"error: {a} would have %lld elements for these symbol values\\n\", sdfgc_n_{a});"
        ));
        line("        return 2;");
        line("    }");
        line(&format!(
            "    {ct} *{a} = sdfgc_array<{ct}>(static_cast<size_t>(sdfgc_n_{a}));"
        ));
        line(&format!(
            "    {ct} *sdfgc_init_{a} = sdfgc_array<{ct}>(static_cast<size_t>(sdfgc_n_{a}));"
        ));
        line(&format!(
            "    sdfgc_fill(sdfgc_init_{a}, static_cast<size_t>(sdfgc_n_{a}), {k}u);"
        ));
    }
    // Init and workspaces.
    line(&format!(
        "    {name}_state_t *sdfgc_state = __dace_init_{name}({});",
        init_args.join(", ")
    ));
    line("    if (sdfgc_state == nullptr) {");
    line(&format!(
        "        std::fprintf(stderr, \"error: __dace_init_{name} failed\\n\");"
    ));
    line("        return 1;");
    line("    }");
    for s in p.layouts.keys() {
        let s = s.dace_name();
        line("    {");
        line(&format!(
            "        size_t sdfgc_bytes = __dace_get_external_memory_size_{s}(sdfgc_state{init_args_tail});"
        ));
        line(&format!(
            "        size_t sdfgc_align = __sdfgc_workspace_alignment_{s}();"
        ));
        line("        void *sdfgc_ws = sdfgc_aligned_bytes(sdfgc_bytes, sdfgc_align);");
        line(&format!(
            "        int sdfgc_rc = __sdfgc_set_workspace_{s}(sdfgc_state, sdfgc_ws, sdfgc_bytes{init_args_tail});"
        ));
        line("        if (sdfgc_rc != 0) {");
        line(&format!(
            "            std::fprintf(stderr, \"error: __sdfgc_set_workspace_{s}: %s\\n\", __sdfgc_error_string(sdfgc_rc));"
        ));
        line("            return 1;");
        line("        }");
        line(&format!(
            "        std::printf(\"workspace {s}: %zu bytes, alignment %zu\\n\", sdfgc_bytes, sdfgc_align);"
        ));
        line("        sdfgc_workspaces.push_back(sdfgc_ws);");
        line("    }");
    }
    // The timed loop.
    let call_args: String = p
        .abi
        .program
        .iter()
        .map(|x| format!(", {}", x.name))
        .collect();
    line("    double sdfgc_seconds = 0.0;");
    line("    for (long sdfgc_it = 0; sdfgc_it < sdfgc_iterations; ++sdfgc_it) {");
    for (a, d) in &arrays {
        line(&format!(
            "        std::memcpy({a}, sdfgc_init_{a}, static_cast<size_t>(sdfgc_n_{a}) * sizeof({}));",
            d.dtype.header_ctype()
        ));
    }
    line("        auto sdfgc_t0 = std::chrono::steady_clock::now();");
    line(&format!(
        "        __program_{name}(sdfgc_state{call_args});"
    ));
    line("        auto sdfgc_t1 = std::chrono::steady_clock::now();");
    line("        sdfgc_seconds += std::chrono::duration<double>(sdfgc_t1 - sdfgc_t0).count();");
    line("    }");
    line(
        "    std::printf(\"time per call: %.3f us (mean of %ld calls)\\n\", 1e6 * sdfgc_seconds / static_cast<double>(sdfgc_iterations), sdfgc_iterations);",
    );
    // Checksums of what the program writes (every array when nothing is found written).
    let outputs: Vec<&(&str, &DataDesc)> = if written.is_empty() {
        arrays.iter().collect()
    } else {
        arrays
            .iter()
            .filter(|(a, _)| written.contains(*a))
            .collect()
    };
    for (a, _) in outputs {
        line(&format!(
            "    std::printf(\"checksum {a}: %.17g\\n\", sdfgc_checksum({a}, static_cast<size_t>(sdfgc_n_{a})));"
        ));
    }
    line(&format!("    if (__dace_exit_{name}(sdfgc_state) != 0) {{"));
    line(&format!(
        "        std::fprintf(stderr, \"error: __dace_exit_{name} failed\\n\");"
    ));
    line("        return 1;");
    line("    }");
    for (a, _) in &arrays {
        line(&format!("    std::free({a});"));
        line(&format!("    std::free(sdfgc_init_{a});"));
    }
    line("    for (void *sdfgc_ws : sdfgc_workspaces) std::free(sdfgc_ws);");
    line("    return 0;");
    line("}");
    (format!("{name}_main.cpp"), o)
}

/// Escapes text for a C string literal.
fn c_string_body(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The sample's helper functions (file scope).
const SAMPLE_HELPERS: &str = r#"
#include <complex>
#include <vector>

// Complex arguments (the header's sdfgc_complex64 / sdfgc_complex128).
template <typename T>
struct sdfgc_is_complex : std::false_type {};
template <typename T>
struct sdfgc_is_complex<std::complex<T>> : std::true_type {};

// Workspaces to free at the end.
static std::vector<void *> sdfgc_workspaces;

// Parses a command-line value (integers accept 0x..., bools true/false/1/0).
template <typename T>
static bool sdfgc_parse(const char *s, T &v) {
    char *end = nullptr;
    if constexpr (std::is_same<T, bool>::value) {
        std::string t = s;
        if (t == "true" || t == "1") { v = true; return true; }
        if (t == "false" || t == "0") { v = false; return true; }
        return false;
    } else if constexpr (std::is_integral<T>::value) {
        long long x = std::strtoll(s, &end, 0);
        v = static_cast<T>(x);
    } else if constexpr (sdfgc_is_complex<T>::value) {
        double x = std::strtod(s, &end);  // the real part
        v = T(static_cast<typename T::value_type>(x));
    } else {
        double x = std::strtod(s, &end);
        v = static_cast<T>(x);
    }
    return end != s && *end == '\0';
}

template <typename T>
static void sdfgc_print_value(const char *name, T v) {
    if constexpr (std::is_floating_point<T>::value) {
        std::printf("  %s = %.17g\n", name, static_cast<double>(v));
    } else if constexpr (sdfgc_is_complex<T>::value) {
        std::printf("  %s = (%.17g, %.17g)\n", name, static_cast<double>(v.real()), static_cast<double>(v.imag()));
    } else {
        std::printf("  %s = %lld\n", name, static_cast<long long>(v));
    }
}

// `nbytes` (at least one) bytes at a multiple of `align`; exits on failure.
static void *sdfgc_aligned_bytes(size_t nbytes, size_t align) {
    if (align < sizeof(void *)) align = sizeof(void *);
    size_t n = (nbytes + align - 1) / align * align;
    void *p = std::aligned_alloc(align, n == 0 ? align : n);
    if (p == nullptr) {
        std::fprintf(stderr, "error: cannot allocate %zu bytes\n", nbytes);
        std::exit(1);
    }
    return p;
}

// An array of `n` elements (64-byte aligned, zeroed).
template <typename T>
static T *sdfgc_array(size_t n) {
    size_t bytes = (n == 0 ? 1 : n) * sizeof(T);
    void *p = sdfgc_aligned_bytes(bytes, 64);
    std::memset(p, 0, bytes);
    return static_cast<T *>(p);
}

// Deterministic contents: positive values in [0.125, 1.125) for floats, 1..17
// for integers (never zero, so divisors are safe), alternating for bools;
// `k` varies the pattern per argument.
template <typename T>
static void sdfgc_fill(T *a, size_t n, unsigned k) {
    for (size_t i = 0; i < n; ++i) {
        unsigned h = static_cast<unsigned>((i * 7u + k * 13u) % 17u);
        if constexpr (std::is_same<T, bool>::value) {
            a[i] = (h & 1u) != 0;
        } else if constexpr (std::is_integral<T>::value) {
            a[i] = static_cast<T>(h + 1u);
        } else if constexpr (sdfgc_is_complex<T>::value) {
            using R = typename T::value_type;
            a[i] = T(static_cast<R>(0.125 + h / 16.0), static_cast<R>(0.0625 * (1 + k % 3)));
        } else if constexpr (std::is_class<T>::value) {
            sdfgc_fill_record(a[i], h);
        } else {
            a[i] = static_cast<T>(0.125 + h / 16.0);
        }
    }
}

// Sum of the elements weighted by 1 + (index mod 7), so that values in the
// wrong place change the checksum.
template <typename T>
static double sdfgc_checksum(const T *a, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; ++i) {
        double x;
        if constexpr (sdfgc_is_complex<T>::value) {
            x = static_cast<double>(a[i].real()) + static_cast<double>(a[i].imag());
        } else if constexpr (std::is_class<T>::value) {
            x = sdfgc_record_value(a[i]);
        } else {
            x = static_cast<double>(a[i]);
        }
        s += x * static_cast<double>(1 + i % 7);
    }
    return s;
}"#;
