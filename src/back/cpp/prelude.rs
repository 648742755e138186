//! The translation unit's prelude: the definitions its code needs (struct
//! types, complex and half numbers, data streams, vectors, numpy and DaCe
//! math helpers, MPI's communicator runtime, DaCe's type names), each only
//! where the file names it.

use super::FileText;
use super::runtime::HELPERS_MARK;
use crate::back::complex;
use crate::ir::DType;
use crate::ir::cexpr;
use crate::passes::Program;

use super::uses_identifier;

/// The prelude of a file with the struct definitions `struct_defs` and the
/// text `text`: [`cexpr::PRELUDE_BASE`], [`HELPERS_MARK`] (where the
/// helpers go), then each part the text needs.
pub(super) fn prelude(p: &Program, struct_defs: &str, text: &FileText) -> String {
    let uses = |s: &str| text.uses(s);
    let functions = text.functions;
    let members = text.members;
    let mut prelude = String::new();
    let mut add = |part: &str| {
        prelude.push('\n');
        prelude.push_str(part.trim_end());
    };
    if !struct_defs.is_empty() {
        add(struct_defs);
    }
    if complex::used_in(text.body)
        || complex::used_in(text.program_params)
        || complex::used_in(text.globals)
        || functions.iter().any(|f| complex::used_in(f))
        || members.iter().any(|m| complex::used_in(m))
    {
        add(complex::PRELUDE);
        if p.gpu.is_some() {
            add(complex::GPU_ATOMICS);
        }
    }
    let f16 = crate::back::half::used_in;
    if f16(text.body)
        || f16(text.program_params)
        || functions.iter().any(|f| f16(f))
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
    if members
        .iter()
        .any(|m| m.starts_with("sdfgc_data_serializer "))
    {
        add(crate::back::body::instrument::PRELUDE);
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
        [&text.body, &text.init, &text.exit]
            .iter()
            .map(|s| **s)
            .chain(functions.iter().map(String::as_str))
            .any(|f| uses_identifier(f, n))
    });
    if dace_math || uses("sdfgc_pow(") || members.iter().any(|m| m.contains("sdfgc_pow(")) {
        add(cexpr::PRELUDE_POW);
    }
    if dace_math {
        add(cexpr::PRELUDE_DACE_MATH);
    }
    if uses("dace::comm::") || text.init.contains("dace::comm::") {
        add(crate::passes::expand::mpi::COMM_RUNTIME);
    }
    // DaCe's `pyobject` and `string` (`char *`) as one name each, so that
    // `const T x` is a constant pointer, as in DaCe's code.
    for (t, def) in [
        (DType::PyObject, "typedef void *pyobject;"),
        (DType::Str, "typedef char *sdfgc_string;"),
    ] {
        let named = |text: &str| uses_identifier(text, t.ctype());
        if named(text.body)
            || named(text.program_params)
            || named(text.init_params)
            || functions.iter().any(|f| named(f))
            || members.iter().any(|m| named(m))
        {
            add(def);
        }
    }
    format!(
        "{}\n{HELPERS_MARK}{prelude}",
        cexpr::PRELUDE_BASE.trim_end()
    )
}
