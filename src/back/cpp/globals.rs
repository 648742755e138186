//! The translation unit's file-scope declarations: GPU declarations of
//! names the user's code takes from DaCe's runtime, the SDFGs' constants,
//! device constants, library headers, and the SDFGs' and tasklets' global
//! code.

use super::{TaskletExtras, user_cpp_code};
use crate::ir::cexpr;
use crate::ir::*;
use crate::passes::Program;

/// The file-scope code of `p` (`all`: its SDFGs, outermost first), in
/// DaCe's order: per SDFG its constants (each name once), for the top-level
/// SDFG `device_globals` and the MPI and CBLAS headers, and its `frame`
/// global code; then the C++ tasklets' own global code.
pub(super) fn globals(
    p: &Program,
    all: &[&Sdfg],
    device_globals: &str,
    extras: &TaskletExtras,
) -> String {
    let mut globals = String::new();
    let mut seen = Vec::new();
    if let Some(g) = p.gpu {
        let code = user_cpp_code(all);
        for d in crate::back::gpu::foreign_names(g, code.iter().map(String::as_str)) {
            globals.push_str(&d);
            globals.push('\n');
        }
    }
    for s in all {
        for (k, c) in &s.constants {
            if seen.contains(k) {
                continue;
            }
            seen.push(k.clone());
            globals.push_str(&constant_decl(k, c));
        }
        if s.id == 0 {
            globals.push_str(device_globals);
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
    }
    // C++ tasklets' own global code, after the SDFGs' (DaCe's order).
    for g in &extras.global {
        globals.push_str(g);
        globals.push('\n');
    }
    globals
}

/// The declaration of an SDFG constant.
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
