//! `--blas openblas|cublas`: Gemm, Gemv, Dot and the MatMul nodes that
//! specialise to them become one C++ tasklet calling CBLAS (`cblas_?gemm`,
//! `cblas_?gemv`, `cblas_?dot`) on host data, as DaCe's OpenBLAS expansions
//! do, or cuBLAS (`cublas?gemm`, `cublas?gemv`, `cublas?dot`) on device data.
//!
//! A cuBLAS call is host code on the GPU stream the writer gives the node
//! (`__dace_current_stream`), with the file's handle
//! (`__state->cublas_handle`, see `back::gpu::cublas`): the tasklet names
//! DaCe's cuBLAS environment, so the writer treats it exactly like the
//! calls DaCe's own cuBLAS expansions leave in an SDFG. cuBLAS is
//! column-major: a row-major matrix is its column-major transpose, so
//! `C = op(A) op(B)` is the call `C^T = op(B)^T op(A)^T` with the operands
//! swapped (DaCe's cuBLAS expansion does the same). alpha and beta are host
//! values (`CUBLAS_POINTER_MODE_HOST` for the call); a dot product stays in
//! device memory (`CUBLAS_POINTER_MODE_DEVICE`), the handle's mode between
//! calls, as DaCe's handles have it.
//!
//! Operands are passed as pointers to the first element of their memlet's
//! subset. A matrix is a row-major matrix with leading dimension `ld` when
//! its column stride is 1, or the transpose of one when its row stride is 1
//! (the transposition folds into the call's `Trans` flag); any other layout
//! (no unit stride) cannot be a BLAS matrix and is refused by name, as are
//! operands of different types and types BLAS does not have. Vectors may
//! have any stride (`incx`). An input accumulator (`_cin`, Gemv's `_y`)
//! that is not the output's memory is copied into the output first, and
//! `beta` then applies to it.

use crate::diag::Result;
use crate::ir::cexpr::to_cpp;
use crate::ir::simplify::simplify;
use crate::ir::*;
use crate::options::Blas;

use super::build::{Builder, Operand, is_zero};

/// The header that declares the calls (included at file scope by the writer).
pub const CBLAS_HEADER: &str = "#include <cblas.h>";

pub use crate::ir::environments::{CUBLAS_ENVIRONMENT, calls_cublas};

/// True if any tasklet of the SDFG or of an SDFG nested in it calls cuBLAS.
pub fn cublas_in(sdfg: &Sdfg) -> bool {
    super::environment_in(sdfg, CUBLAS_ENVIRONMENT)
}

/// A BLAS call replacing a library node: the tasklet and the connectors
/// to rename (input connector, new name), when an input and the output
/// share one name.
pub(super) struct Call {
    /// The tasklet that makes the call.
    pub tasklet: Tasklet,
    /// Input connectors renamed in the tasklet: (old, new).
    pub renamed_inputs: Vec<(String, String)>,
    /// Output memlets whose write-conflict resolution the call performs
    /// (beta = 1): their `wcr` is dropped.
    pub drop_out_wcr: bool,
}

fn c(e: &Expr) -> String {
    to_cpp(&simplify(e))
}

/// BLAS's letter for a type.
fn letter(b: &Builder, t: DType) -> Result<char> {
    Ok(match t {
        DType::Float32 => 's',
        DType::Float64 => 'd',
        DType::Complex64 => 'c',
        DType::Complex128 => 'z',
        other => {
            return Err(b.unsupported(format_args!(
                "--blas: BLAS has no {} routines",
                other.dace_name()
            )));
        }
    })
}

/// The stride of non-unit dimension `k` of an operand (container stride
/// times the subset's step).
fn stride(o: &Operand, k: usize) -> Expr {
    let d = o.nonunit[k];
    simplify(&Expr::bin(
        BinaryOp::Mul,
        o.desc.strides[d].clone(),
        o.sub[d].step.clone(),
    ))
}

/// A matrix operand as BLAS sees it: `(stored transposed, leading dimension)`.
fn matrix(b: &Builder, o: &Operand) -> Result<(bool, Expr)> {
    let (s0, s1) = (stride(o, 0), stride(o, 1));
    if s1 == Expr::Int(1) {
        Ok((false, s0))
    } else if s0 == Expr::Int(1) {
        Ok((true, s1))
    } else {
        Err(b.unsupported(format_args!(
            "--blas: matrix '{}' ({}) has no unit stride (strides {} and {}); BLAS needs one",
            o.conn,
            o.data,
            c(&s0),
            c(&s1)
        )))
    }
}

fn same_types(b: &Builder, ops: &[usize]) -> Result<DType> {
    let t = b.op(ops[0]).desc.dtype;
    for &i in ops {
        let o = b.op(i);
        if o.desc.dtype != t {
            return Err(b.unsupported(format_args!(
                "--blas: operands of different types ({} is {}, {} is {}); BLAS needs one type",
                b.op(ops[0]).conn,
                t.dace_name(),
                o.conn,
                o.desc.dtype.dace_name()
            )));
        }
    }
    Ok(t)
}

/// A scalar argument: by value for real types, by pointer (to a local) for complex.
fn scalar(t: DType, name: &str, e: &Expr, pre: &mut String) -> String {
    if t.is_complex() {
        pre.push_str(&format!("const {} {name} = {};\n", t.ctype(), c(e)));
        format!("&{name}")
    } else {
        format!("{}({})", t.ctype(), c(e))
    }
}

/// Copies the `rows` x `cols` input `src` (strides per non-unit dimension)
/// into `dst` unless they are the same memory.
fn copy_in(src: (&str, &Operand), dst: (&str, &Operand), dims: &[Expr]) -> String {
    let (sn, so) = src;
    let (dn, dop) = dst;
    let idx = |o: &Operand| -> String {
        (0..dims.len())
            .map(|k| format!("__i{k} * ({})", c(&stride(o, k))))
            .collect::<Vec<_>>()
            .join(" + ")
    };
    let mut s =
        format!("if (static_cast<const void *>({dn}) != static_cast<const void *>({sn})) {{\n");
    for (k, d) in dims.iter().enumerate() {
        s.push_str(&format!(
            "for (int64_t __i{k} = 0; __i{k} < ({}); ++__i{k}) ",
            c(d)
        ));
    }
    s.push_str(&format!("{dn}[{}] = {sn}[{}];\n}}\n", idx(dop), idx(so)));
    s
}

/// `"what"` for a status message: the call and the node's label.
fn what(b: &Builder, call: &str) -> String {
    let label: String = b
        .label
        .chars()
        .filter(|c| *c != '"' && *c != '\\')
        .collect();
    format!("\"{call} ({label})\"")
}

/// The start of a cuBLAS tasklet: the file's handle on the node's stream
/// (the names DaCe's cuBLAS environment uses). Only s and d routines.
fn cublas_prologue(b: &Builder, t: DType) -> Result<String> {
    if !matches!(t, DType::Float32 | DType::Float64) {
        return Err(b.unsupported(format_args!(
            "--blas cublas: {} operands (only float32 and float64 calls are implemented)",
            t.dace_name()
        )));
    }
    Ok(format!(
        "cublasHandle_t &__dace_cublas_handle = __state->cublas_handle.Get(-1);\n\
         sdfgc_cublas_check(cublasSetStream(__dace_cublas_handle, __dace_current_stream), {});\n",
        what(b, "cublasSetStream")
    ))
}

/// `__alpha` and `__beta` as host locals (real types: `scalar` gave values).
fn host_scalars(t: DType, alpha: &str, beta: &str, code: &mut String) {
    let ct = t.ctype();
    code.push_str(&format!(
        "const {ct} __alpha = {alpha};\nconst {ct} __beta = {beta};\n"
    ));
}

/// A checked cuBLAS call; with `host_scalars`, alpha and beta are host
/// values for this call (the handle goes back to device pointer mode).
fn cublas_call(b: &Builder, func: &str, args: &str, host_scalars: bool) -> String {
    let mode = |m: &str| {
        format!(
            "sdfgc_cublas_check(cublasSetPointerMode(__dace_cublas_handle, CUBLAS_POINTER_MODE_{m}), {});\n",
            what(b, "cublasSetPointerMode")
        )
    };
    let mut s = mode(if host_scalars { "HOST" } else { "DEVICE" });
    s.push_str(&format!(
        "sdfgc_cublas_check({func}(__dace_cublas_handle, {args}), {});",
        what(b, func)
    ));
    if host_scalars {
        s.push('\n');
        s.push_str(mode("DEVICE").trim_end());
    }
    s
}

/// [`copy_in`] for device memory: one 2-D copy on the node's stream (rows
/// of contiguous elements, or single elements at a stride).
fn device_copy_in(
    b: &Builder,
    src: (&str, &Operand),
    dst: (&str, &Operand),
    dims: &[Expr],
) -> Result<String> {
    let (sn, so) = src;
    let (dn, dop) = dst;
    let ct = so.desc.dtype.ctype();
    let one = Expr::Int(1);
    // (elements per row, rows, source and destination row strides)
    let (width, height, sp, dp) = match dims.len() {
        1 => (one.clone(), dims[0].clone(), stride(so, 0), stride(dop, 0)),
        _ if stride(so, 1) == one && stride(dop, 1) == one => (
            dims[1].clone(),
            dims[0].clone(),
            stride(so, 0),
            stride(dop, 0),
        ),
        _ if stride(so, 0) == one && stride(dop, 0) == one => (
            dims[0].clone(),
            dims[1].clone(),
            stride(so, 1),
            stride(dop, 1),
        ),
        _ => {
            return Err(b.unsupported(format_args!(
                "--blas cublas: input accumulator '{}' and output '{}' have different layouts (the copy between them is not implemented)",
                so.conn, dop.conn
            )));
        }
    };
    let bytes = |e: &Expr| format!("sizeof({ct}) * static_cast<size_t>({})", c(e));
    Ok(format!(
        "if (static_cast<const void *>({dn}) != static_cast<const void *>({sn})) {{\n\
         sdfgc_gpu_check(cudaMemcpy2DAsync({dn}, {}, {sn}, {}, {}, static_cast<size_t>({}), cudaMemcpyDeviceToDevice, __dace_current_stream), {});\n}}\n",
        bytes(&dp),
        bytes(&sp),
        bytes(&width),
        c(&height),
        what(b, "cudaMemcpy2DAsync")
    ))
}

fn tasklet(b: &Builder, blas: Blas, code: String, renamed: &[(String, String)]) -> Tasklet {
    let mut inputs = NameMap::default();
    let mut outputs = NameMap::default();
    for o in &b.ops {
        let ptr = ConnType::Pointer(o.desc.dtype);
        let in_edge = b.is_input(o);
        if in_edge {
            let name = renamed
                .iter()
                .find(|(old, _)| *old == o.conn)
                .map(|(_, n)| n.clone())
                .unwrap_or_else(|| o.conn.clone());
            inputs.insert(name, ptr);
        } else {
            outputs.insert(o.conn.clone(), ptr);
        }
    }
    // The file includes the header once (the writer, for `--blas`);
    // cuBLAS calls run on the host with the file's handle and stream.
    let environments = if blas == Blas::Cublas {
        vec![CUBLAS_ENVIRONMENT.to_string()]
    } else {
        Vec::new()
    };
    Tasklet::cpp(&code, inputs, outputs, environments)
}

/// Checks that the library can run here: CPU data for OpenBLAS, device
/// data outside maps for cuBLAS (called from the host), not accumulated by
/// a write-conflict resolution the call cannot perform.
fn check_place(b: &Builder, blas: Blas) -> Result<()> {
    match blas {
        Blas::Openblas => {
            for o in &b.ops {
                if o.desc.storage.is_gpu() {
                    return Err(b.unsupported(format_args!(
                        "--blas openblas: operand '{}' ({}) is in GPU memory",
                        o.conn, o.data
                    )));
                }
            }
        }
        Blas::Cublas => {
            if b.in_map() {
                return Err(b.unsupported(
                    "--blas cublas: a BLAS node inside a map (cuBLAS is called from the host, once per node)",
                ));
            }
            for o in &b.ops {
                if !o.desc.storage.is_gpu() {
                    return Err(b.unsupported(format_args!(
                        "--blas cublas: operand '{}' ({}) is in host memory ({}); cuBLAS needs GPU global memory",
                        o.conn,
                        o.data,
                        o.desc.storage.dace_name()
                    )));
                }
            }
        }
        Blas::Hipblas => {
            return Err(b.unsupported("--blas hipblas: not implemented (use --blas none)"));
        }
        Blas::None => unreachable!("no BLAS library"),
    }
    Ok(())
}

/// The output's accumulation: `Some(true)` for a sum the call performs
/// (beta = 1), an error for others.
fn out_wcr(b: &Builder, out: usize) -> Result<bool> {
    match &b.op(out).wcr {
        None => Ok(false),
        Some(w) if w.kind == WcrKind::Sum && !b.in_map() => Ok(true),
        Some(_) => Err(b.unsupported(
            "--blas: an output accumulated by a write-conflict resolution (other than a sum outside maps)",
        )),
    }
}

/// `MatMul` as a BLAS call.
pub(super) fn matmul(b: &mut Builder, blas: Blas, alpha: &Expr, beta: &Expr) -> Result<Call> {
    let a = b.input("_a")?;
    let x = b.input("_b")?;
    let out = b.output("_c")?;
    let cin = b.input_opt("_cin")?;
    check_place(b, blas)?;
    // SpecializeMatMul: an output memlet that accumulates replaces beta.
    let acc = out_wcr(b, out)?;
    let beta = if acc { Expr::Int(1) } else { beta.clone() };
    if acc && cin.is_some() {
        return Err(b.unsupported(
            "--blas: a MatMul output accumulated by a write-conflict resolution and an input accumulator",
        ));
    }
    let call = match (b.op(a).nonunit.len(), b.op(x).nonunit.len()) {
        (2, 2) => gemm_call(b, blas, [a, x, out], cin, alpha, &beta, false, false)?,
        (2, 1) => gemv_call(b, blas, [a, x, out], cin, alpha, &beta, false)?,
        (1, 2) => gemv_call(b, blas, [x, a, out], cin, alpha, &beta, true)?,
        (1, 1) => dot_call(b, blas, [a, x, out], alpha, acc)?,
        (ra, rb) => {
            return Err(b.unsupported(format_args!(
                "MatMul of {ra}-D by {rb}-D operands (batched matrix multiplication is not implemented)"
            )));
        }
    };
    Ok(Call {
        drop_out_wcr: acc,
        ..call
    })
}

/// `Dot` as a BLAS call.
pub(super) fn dot(b: &mut Builder, blas: Blas) -> Result<Call> {
    let x = b.input("_x")?;
    let y = b.input("_y")?;
    let r = b.output("_result")?;
    check_place(b, blas)?;
    let acc = out_wcr(b, r)?;
    let call = dot_call(b, blas, [x, y, r], &Expr::Int(1), acc)?;
    Ok(Call {
        drop_out_wcr: acc,
        ..call
    })
}

/// `Gemv` as a BLAS call.
pub(super) fn gemv(
    b: &mut Builder,
    blas: Blas,
    alpha: &Expr,
    beta: &Expr,
    trans: bool,
) -> Result<Call> {
    let a = b.input("_A")?;
    let x = b.input("_x")?;
    let y_in = b.input_opt("_y")?;
    let y = b.output("_y")?;
    check_place(b, blas)?;
    let (beta, acc) = accumulate(b, y, y_in, beta)?;
    let call = gemv_call(b, blas, [a, x, y], y_in, alpha, &beta, trans)?;
    Ok(Call {
        drop_out_wcr: acc,
        ..call
    })
}

/// An output accumulated by a sum (outside maps): the call adds into it
/// (beta = 1), which is what DaCe computes when beta is 0 or 1 and no
/// separate input is given; other combinations are refused.
fn accumulate(b: &Builder, out: usize, input: Option<usize>, beta: &Expr) -> Result<(Expr, bool)> {
    if !out_wcr(b, out)? {
        return Ok((beta.clone(), false));
    }
    if input.is_none() && (is_zero(beta) || crate::passes::expand::build::is_one(beta)) {
        return Ok((Expr::Int(1), true));
    }
    Err(b.unsupported(
        "--blas: an output accumulated by a write-conflict resolution together with an input accumulator or a beta other than 0 or 1",
    ))
}

/// `Gemm` as a BLAS call.
pub(super) fn gemm(
    b: &mut Builder,
    blas: Blas,
    alpha: &Expr,
    beta: &Expr,
    trans_a: bool,
    trans_b: bool,
) -> Result<Call> {
    let a = b.input("_a")?;
    let x = b.input("_b")?;
    let cin = b.input_opt("_cin")?;
    let out = b.output("_c")?;
    check_place(b, blas)?;
    let (beta, acc) = accumulate(b, out, cin, beta)?;
    let call = gemm_call(b, blas, [a, x, out], cin, alpha, &beta, trans_a, trans_b)?;
    Ok(Call {
        drop_out_wcr: acc,
        ..call
    })
}

/// The name under which an input that shares its connector with the
/// output is bound.
fn input_name(b: &Builder, i: usize, out: usize) -> String {
    if b.op(i).conn == b.op(out).conn {
        format!("{}_in", b.op(i).conn)
    } else {
        b.op(i).conn.clone()
    }
}

fn renames(b: &Builder, i: Option<usize>, out: usize) -> Vec<(String, String)> {
    match i {
        Some(i) if b.op(i).conn == b.op(out).conn => {
            vec![(b.op(i).conn.clone(), input_name(b, i, out))]
        }
        _ => Vec::new(),
    }
}

#[allow(clippy::too_many_arguments)]
fn gemm_call(
    b: &Builder,
    blas: Blas,
    [a, x, out]: [usize; 3],
    cin: Option<usize>,
    alpha: &Expr,
    beta: &Expr,
    trans_a: bool,
    trans_b: bool,
) -> Result<Call> {
    b.require_dims(a, &[2], "matrix")?;
    b.require_dims(x, &[2], "matrix")?;
    b.require_dims(out, &[2], "result matrix")?;
    let mut all = vec![a, x, out];
    all.extend(cin);
    let t = same_types(b, &all)?;
    let f = letter(b, t)?;
    let (sa_t, lda) = matrix(b, b.op(a))?;
    let (sb_t, ldb) = matrix(b, b.op(x))?;
    let (sc_t, ldc) = matrix(b, b.op(out))?;
    // Logical sizes: op(A) is M x K, op(B) is K x N.
    let ext = |o: usize, k: usize| b.op(o).extent(k);
    let (m, kk) = if trans_a {
        (ext(a, 1), ext(a, 0))
    } else {
        (ext(a, 0), ext(a, 1))
    };
    let n = if trans_b { ext(x, 0) } else { ext(x, 1) };
    // CBLAS flag of each operand: the user's transposition, flipped when
    // the operand is stored transposed.
    let (ta, tb) = (trans_a ^ sa_t, trans_b ^ sb_t);
    let flag = |t: bool| if t { "CblasTrans" } else { "CblasNoTrans" };
    let (an, bn, cn) = (&b.op(a).conn, &b.op(x).conn, &b.op(out).conn);
    let mut code = String::new();
    let renamed = renames(b, cin, out);
    if blas == Blas::Cublas {
        code.push_str(&cublas_prologue(b, t)?);
    }
    if let Some(ci) = cin
        && !is_zero(beta)
    {
        let src = (input_name(b, ci, out), b.op(ci));
        let dims = [ext(out, 0), ext(out, 1)];
        code.push_str(&if blas == Blas::Cublas {
            device_copy_in(b, (&src.0, src.1), (cn, b.op(out)), &dims)?
        } else {
            copy_in((&src.0, src.1), (cn, b.op(out)), &dims)
        });
    }
    let alpha_arg = scalar(t, "__alpha", alpha, &mut code);
    let beta_arg = scalar(t, "__beta", beta, &mut code);
    let (m, n, kk) = (c(&m), c(&n), c(&kk));
    let (lda, ldb, ldc) = (c(&lda), c(&ldb), c(&ldc));
    if blas == Blas::Cublas {
        host_scalars(t, &alpha_arg, &beta_arg, &mut code);
        // Column-major: C is C^T, A is A^T, B is B^T as cuBLAS sees them.
        let op = |t: bool| if t { "CUBLAS_OP_T" } else { "CUBLAS_OP_N" };
        let f = f.to_ascii_uppercase();
        let args = if sc_t {
            // C stored transposed is C column-major: C = op(A) op(B).
            format!(
                "{}, {}, {m}, {n}, {kk}, &__alpha, {an}, {lda}, {bn}, {ldb}, &__beta, {cn}, {ldc}",
                op(!ta),
                op(!tb)
            )
        } else {
            format!(
                "{}, {}, {n}, {m}, {kk}, &__alpha, {bn}, {ldb}, {an}, {lda}, &__beta, {cn}, {ldc}",
                op(tb),
                op(ta)
            )
        };
        code.push_str(&cublas_call(b, &format!("cublas{f}gemm"), &args, true));
        return Ok(Call {
            tasklet: tasklet(b, blas, code, &renamed),
            renamed_inputs: renamed,
            drop_out_wcr: false,
        });
    }
    code.push_str(&if sc_t {
        // C stored transposed: C^T = op(B)^T op(A)^T.
        format!(
            "cblas_{f}gemm(CblasRowMajor, {}, {}, {n}, {m}, {kk}, {alpha_arg}, {bn}, {ldb}, {an}, {lda}, {beta_arg}, {cn}, {ldc});",
            flag(!tb),
            flag(!ta)
        )
    } else {
        format!(
            "cblas_{f}gemm(CblasRowMajor, {}, {}, {m}, {n}, {kk}, {alpha_arg}, {an}, {lda}, {bn}, {ldb}, {beta_arg}, {cn}, {ldc});",
            flag(ta),
            flag(tb)
        )
    });
    Ok(Call {
        tasklet: tasklet(b, blas, code, &renamed),
        renamed_inputs: renamed,
        drop_out_wcr: false,
    })
}

#[allow(clippy::too_many_arguments)]
fn gemv_call(
    b: &Builder,
    blas: Blas,
    [a, x, y]: [usize; 3],
    y_in: Option<usize>,
    alpha: &Expr,
    beta: &Expr,
    trans: bool,
) -> Result<Call> {
    b.require_dims(a, &[2], "matrix")?;
    b.require_dims(x, &[1], "vector")?;
    b.require_dims(y, &[1], "result vector")?;
    let mut all = vec![a, x, y];
    all.extend(y_in);
    let t = same_types(b, &all)?;
    let f = letter(b, t)?;
    let (stored_t, lda) = matrix(b, b.op(a))?;
    // The stored row-major matrix is A (rows x cols) or A^T.
    let (rows, cols) = if stored_t {
        (b.op(a).extent(1), b.op(a).extent(0))
    } else {
        (b.op(a).extent(0), b.op(a).extent(1))
    };
    let flag = if trans ^ stored_t {
        "CblasTrans"
    } else {
        "CblasNoTrans"
    };
    let (an, xn, yn) = (&b.op(a).conn, &b.op(x).conn, &b.op(y).conn);
    let mut code = String::new();
    let renamed = renames(b, y_in, y);
    if blas == Blas::Cublas {
        code.push_str(&cublas_prologue(b, t)?);
    }
    if let Some(v) = y_in
        && !is_zero(beta)
    {
        let src = input_name(b, v, y);
        let dims = [b.op(y).extent(0)];
        code.push_str(&if blas == Blas::Cublas {
            device_copy_in(b, (&src, b.op(v)), (yn, b.op(y)), &dims)?
        } else {
            copy_in((&src, b.op(v)), (yn, b.op(y)), &dims)
        });
    }
    let alpha_arg = scalar(t, "__alpha", alpha, &mut code);
    let beta_arg = scalar(t, "__beta", beta, &mut code);
    let (incx, incy) = (c(&stride(b.op(x), 0)), c(&stride(b.op(y), 0)));
    if blas == Blas::Cublas {
        host_scalars(t, &alpha_arg, &beta_arg, &mut code);
        // Column-major, the stored matrix is its transpose (cols x rows).
        let op = if flag == "CblasTrans" {
            "CUBLAS_OP_N"
        } else {
            "CUBLAS_OP_T"
        };
        let args = format!(
            "{op}, {}, {}, &__alpha, {an}, {}, {xn}, {incx}, &__beta, {yn}, {incy}",
            c(&cols),
            c(&rows),
            c(&lda),
        );
        let f = f.to_ascii_uppercase();
        code.push_str(&cublas_call(b, &format!("cublas{f}gemv"), &args, true));
    } else {
        code.push_str(&format!(
            "cblas_{f}gemv(CblasRowMajor, {flag}, {}, {}, {alpha_arg}, {an}, {}, {xn}, {incx}, {beta_arg}, {yn}, {incy});",
            c(&rows),
            c(&cols),
            c(&lda),
        ));
    }
    Ok(Call {
        tasklet: tasklet(b, blas, code, &renamed),
        renamed_inputs: renamed,
        drop_out_wcr: false,
    })
}

fn dot_call(
    b: &Builder,
    blas: Blas,
    [x, y, r]: [usize; 3],
    alpha: &Expr,
    acc: bool,
) -> Result<Call> {
    b.require_dims(x, &[1], "Dot input")?;
    b.require_dims(y, &[1], "Dot input")?;
    b.require_dims(r, &[0], "Dot result")?;
    let t = same_types(b, &[x, y, r])?;
    let f = letter(b, t)?;
    let (xn, yn, rn) = (&b.op(x).conn, &b.op(y).conn, &b.op(r).conn);
    let n = c(&b.op(x).extent(0));
    let (ix, iy) = (c(&stride(b.op(x), 0)), c(&stride(b.op(y), 0)));
    if blas == Blas::Cublas {
        if acc || !crate::passes::expand::build::is_one(alpha) {
            return Err(b.unsupported(
                "--blas cublas: a dot product scaled or accumulated into its result (cuBLAS writes the result to device memory)",
            ));
        }
        let mut code = cublas_prologue(b, t)?;
        let f = f.to_ascii_uppercase();
        code.push_str(&cublas_call(
            b,
            &format!("cublas{f}dot"),
            &format!("{n}, {xn}, {ix}, {yn}, {iy}, {rn}"),
            false,
        ));
        return Ok(Call {
            tasklet: tasklet(b, blas, code, &[]),
            renamed_inputs: Vec::new(),
            drop_out_wcr: false,
        });
    }
    let value = if t.is_complex() {
        format!(
            "{} __dot;\ncblas_{f}dotu_sub({n}, {xn}, {ix}, {yn}, {iy}, &__dot);\n",
            t.ctype()
        )
    } else {
        format!(
            "const {} __dot = cblas_{f}dot({n}, {xn}, {ix}, {yn}, {iy});\n",
            t.ctype()
        )
    };
    let scaled = if crate::passes::expand::build::is_one(alpha) {
        "__dot".to_string()
    } else {
        format!("{}({}) * __dot", t.ctype(), c(alpha))
    };
    let op = if acc { "+=" } else { "=" };
    let code = format!("{value}{rn}[0] {op} {scaled};");
    Ok(Call {
        tasklet: tasklet(b, blas, code, &[]),
        renamed_inputs: Vec::new(),
        drop_out_wcr: false,
    })
}
