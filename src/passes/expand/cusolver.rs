//! DaCe's LAPACK and linalg nodes with implementation `cuSolverDn` (Getrf,
//! Getrs, Potrf, Cholesky, Solve, Inv) become one C++ tasklet of DaCe's
//! cuSolverDn environment calling cuSOLVER on device data from the host,
//! on the node's stream, with the file's handle
//! (`__state->cusolverDn_handle.Get(..)`, see `back::gpu::libs`), as
//! DaCe's expansions write them:
//!
//! * Getrf, Getrs and Potrf are DaCe's calls exactly: the row-major
//!   operand is passed as it is (cuSOLVER reads it column-major, so the
//!   call factors the transpose, as DaCe's does), its row stride the
//!   leading dimension, a workspace of `_bufferSize` elements allocated
//!   and freed around the call; `_res` receives devInfo.
//! * Cholesky and Solve are DaCe's nested expansions in one tasklet: the
//!   input is transposed into a scratch matrix (DaCe's cuBLAS Transpose
//!   nodes; here one strided 2-D copy per column), factored (Potrf, or
//!   Getrf then Getrs on the transposed right-hand sides), and the result
//!   transposed back; Cholesky then zeroes the upper triangle (DaCe's
//!   `_uzero_` map). Scratch, pivots and devInfo are device allocations of
//!   the call.
//! * Inv is DaCe's `_make_sdfg_getrs` (its only cuSolverDn expansion):
//!   the input, untransposed, factored by Getrf (in place with
//!   `overwrite_a`, else in a contiguous copy), then Getrs of the identity
//!   (DaCe's `_eye_` map) into the output (with `overwrite_a`, into a
//!   scratch matrix copied back over the input). No transposes: both calls
//!   read the row-major operands as their transposes, and the solution of
//!   `A^T X^T = I` read row-major is `A^-1`.
//!
//! Refused by name: other implementations (at the reader), nodes inside
//! maps, operands in host memory, types other than float32, float64,
//! complex64 and complex128, matrices whose rows are not contiguous, and
//! Getrf/Potrf whose output is not their input's memory (DaCe's call
//! factors the input in place).

use crate::diag::Result;
use crate::ir::cexpr::to_cpp;
use crate::ir::simplify::simplify;
use crate::ir::*;

use super::build::{Builder, Operand};

/// The DaCe library environment of cuSOLVER calls (DaCe's name).
pub const ENVIRONMENT: &str = "dace.libraries.lapack.environments.cusolverdn.cuSolverDn";

fn c(e: &Expr) -> String {
    to_cpp(&simplify(e))
}

/// The name of the node in messages and status texts.
fn op_name(op: SolverOp) -> &'static str {
    match op {
        SolverOp::Getrf => "Getrf",
        SolverOp::Getrs => "Getrs",
        SolverOp::Potrf => "Potrf",
        SolverOp::Cholesky => "Cholesky",
        SolverOp::Solve => "Solve",
        SolverOp::Inv => "Inv",
    }
}

/// A matrix or vector operand as cuSOLVER takes it.
struct Mat {
    /// The tasklet's connector (a pointer to the memlet's first element).
    conn: String,
    /// Rows and columns of the (squeezed) subset; a vector is one column.
    rows: Expr,
    cols: Expr,
    /// The stride between rows (DaCe's `strides[first non-unit dimension]`).
    ld: Expr,
    /// A one-dimensional operand.
    vector: bool,
}

/// Checks an operand and reads its shape: `dims` non-unit dimensions
/// allowed (2, or 1 and 2), rows contiguous, GPU memory.
fn mat(b: &Builder, i: usize, what: &str, vector_ok: bool) -> Result<Mat> {
    let o: &Operand = b.op(i);
    let n = o.nonunit.len();
    if !(n == 2 || (vector_ok && n == 1)) {
        return Err(b.unsupported(format_args!(
            "{what} '{}' ({}) has {n} dimensions of more than one element (cuSOLVER takes {})",
            o.conn,
            o.data,
            if vector_ok {
                "a matrix or a vector"
            } else {
                "a matrix"
            }
        )));
    }
    if !o.desc.storage.is_gpu() {
        return Err(b.unsupported(format_args!(
            "{what} '{}' ({}) is in host memory ({}); cuSOLVER needs GPU global memory",
            o.conn,
            o.data,
            o.desc.storage.dace_name()
        )));
    }
    let step = |k: usize| o.sub[o.nonunit[k]].step.clone();
    let inner = simplify(&Expr::bin(
        BinaryOp::Mul,
        o.desc.strides[o.nonunit[n - 1]].clone(),
        step(n - 1),
    ));
    if inner != Expr::Int(1) {
        return Err(b.unsupported(format_args!(
            "{what} '{}' ({}) is not contiguous along its last dimension (stride {}); cuSOLVER needs it",
            o.conn,
            o.data,
            c(&inner)
        )));
    }
    if n == 2 && step(0) != Expr::Int(1) {
        return Err(b.unsupported(format_args!(
            "{what} '{}' ({}) takes every {}-th row; cuSOLVER needs a leading dimension",
            o.conn,
            o.data,
            c(&step(0))
        )));
    }
    Ok(Mat {
        conn: o.conn.clone(),
        rows: o.extent(0),
        cols: if n == 2 { o.extent(1) } else { Expr::Int(1) },
        ld: o.desc.strides[o.nonunit[0]].clone(),
        vector: n == 1,
    })
}

/// cuSOLVER's letter and element type for a DaCe type.
fn types(b: &Builder, t: DType) -> Result<(char, &'static str)> {
    Ok(match t {
        DType::Float32 => ('S', "float"),
        DType::Float64 => ('D', "double"),
        DType::Complex64 => ('C', "cuComplex"),
        DType::Complex128 => ('Z', "cuDoubleComplex"),
        other => {
            return Err(b.unsupported(format_args!(
                "cuSOLVER has no {} routines",
                other.dace_name()
            )));
        }
    })
}

/// Checks that an int32 operand (pivots, devInfo) is in GPU memory.
fn int_operand(b: &Builder, i: usize, what: &str) -> Result<String> {
    let o = b.op(i);
    if o.desc.dtype != DType::Int32 {
        return Err(b.invalid(format_args!(
            "{what} '{}' ({}) is {}, not int32",
            o.conn,
            o.data,
            o.desc.dtype.dace_name()
        )));
    }
    if !o.desc.storage.is_gpu() {
        return Err(b.unsupported(format_args!(
            "{what} '{}' ({}) is in host memory ({}); cuSOLVER needs GPU global memory",
            o.conn,
            o.data,
            o.desc.storage.dace_name()
        )));
    }
    Ok(o.conn.clone())
}

/// The input and the output are the same memory (Getrf, Potrf factor in place).
fn in_place(b: &Builder, i: usize, o: usize) -> Result<()> {
    let (x, y) = (b.op(i), b.op(o));
    let starts =
        |op: &Operand| -> Vec<Expr> { op.sub.iter().map(|r| simplify(&r.start)).collect() };
    if x.data != y.data || starts(x) != starts(y) {
        return Err(b.unsupported(format_args!(
            "output '{}' ({}) is not the memory of input '{}' ({}); the cuSOLVER call factors its input in place",
            y.conn, y.data, x.conn, x.data
        )));
    }
    Ok(())
}

/// The square input and output matrices of Cholesky and Inv (`what`):
/// both of one type and one size, with cuSOLVER's type letter and C++ type.
fn square_in_out(
    b: &Builder,
    i: usize,
    o: usize,
    what: &str,
) -> Result<(Mat, Mat, char, &'static str)> {
    let a = mat(b, i, &format!("{what} input"), false)?;
    let out = mat(b, o, &format!("{what} output"), false)?;
    let (f, ty) = types(b, b.op(i).desc.dtype)?;
    if b.op(o).desc.dtype != b.op(i).desc.dtype {
        return Err(b.unsupported(format_args!("{what} input and output of different types")));
    }
    if a.rows != a.cols || out.rows != a.rows || out.cols != a.cols {
        return Err(b.unsupported(format_args!(
            "{what} of a {} x {} matrix into {} x {} (square matrices of one size needed)",
            c(&a.rows),
            c(&a.cols),
            c(&out.rows),
            c(&out.cols)
        )));
    }
    Ok((a, out, f, ty))
}

/// The matrix a factorization (`what`: Getrf, Potrf) overwrites: `_xin`,
/// in place as `_xout` (the output connector only names its memory), with
/// cuSOLVER's type letter and C++ type.
fn factored(b: &mut Builder, what: &str) -> Result<(Mat, char, &'static str)> {
    let xin = b.input("_xin")?;
    let xout = b.output("_xout")?;
    let x = mat(b, xin, &format!("{what} input"), false)?;
    mat(b, xout, &format!("{what} output"), false)?;
    in_place(b, xin, xout)?;
    let (f, ty) = types(b, b.op(xin).desc.dtype)?;
    Ok((x, f, ty))
}

/// Code pieces shared by the calls.
struct Code {
    s: String,
    label: String,
}

impl Code {
    fn new(b: &Builder) -> Code {
        let label: String = b
            .label
            .chars()
            .filter(|c| *c != '"' && *c != '\\')
            .collect();
        // DaCe's cuSolverDn environment's handle setup.
        let s = "const int __dace_cuda_device = -1;\n\
                 cusolverDnHandle_t &__dace_cusolverDn_handle = __state->cusolverDn_handle.Get(__dace_cuda_device);\n\
                 dace::lapack::CheckCusolverDnError(cusolverDnSetStream(__dace_cusolverDn_handle, __dace_current_stream));\n"
            .to_string();
        Code { s, label }
    }

    fn line(&mut self, l: impl AsRef<str>) {
        self.s.push_str(l.as_ref());
        self.s.push('\n');
    }

    /// A checked cuSOLVER call.
    fn call(&mut self, func: &str, args: &str) {
        self.line(format!(
            "dace::lapack::CheckCusolverDnError({func}(__dace_cusolverDn_handle, {args}));"
        ));
    }

    /// `T *name` of `count` elements of device memory.
    fn alloc(&mut self, ty: &str, name: &str, count: &str) {
        self.line(format!(
            "{ty} *{name} = nullptr;\nsdfgc_gpu_check(cudaMalloc(reinterpret_cast<void **>(&{name}), sizeof({ty}) * static_cast<size_t>({count})), \"cudaMalloc {name} ({})\");",
            self.label
        ));
    }

    fn free(&mut self, name: &str) {
        self.line(format!(
            "sdfgc_gpu_check(cudaFree({name}), \"cudaFree {name} ({})\");",
            self.label
        ));
    }

    /// `dst[j * ldd + i] = src[i * lds + j]` for `i < rows`, `j < cols`:
    /// one strided copy per `j` on the node's stream (DaCe's Transpose).
    #[allow(clippy::too_many_arguments)]
    fn transpose(
        &mut self,
        ty: &str,
        dst: &str,
        ldd: &str,
        src: &str,
        lds: &str,
        rows: &str,
        cols: &str,
    ) {
        self.line(format!(
            "for (int64_t __j = 0; __j < ({cols}); ++__j) {{\n\
             sdfgc_gpu_check(cudaMemcpy2DAsync({dst} + __j * ({ldd}), sizeof({ty}), {src} + __j, sizeof({ty}) * static_cast<size_t>({lds}), sizeof({ty}), static_cast<size_t>({rows}), cudaMemcpyDeviceToDevice, __dace_current_stream), \"transpose ({})\");\n}}",
            self.label
        ));
    }

    /// `rows` x `cols` elements from `src` (row stride `lds`) to `dst` (row
    /// stride `ldd`): one 2-D copy on the node's stream.
    #[allow(clippy::too_many_arguments)]
    fn copy_rows(
        &mut self,
        ty: &str,
        dst: &str,
        ldd: &str,
        src: &str,
        lds: &str,
        rows: &str,
        cols: &str,
    ) {
        self.line(format!(
            "sdfgc_gpu_check(cudaMemcpy2DAsync({dst}, sizeof({ty}) * static_cast<size_t>({ldd}), {src}, sizeof({ty}) * static_cast<size_t>({lds}), sizeof({ty}) * static_cast<size_t>({cols}), static_cast<size_t>({rows}), cudaMemcpyDeviceToDevice, __dace_current_stream), \"copy ({})\");",
            self.label
        ));
    }

    /// The `n` x `n` identity into `dst` (row stride `ld`), DaCe's `_eye_`
    /// map: rows zeroed, then a one copied to the first diagonal element,
    /// doubled along a scratch row of ones, and that row copied onto the
    /// diagonal.
    fn identity(&mut self, ty: &str, dst: &str, ld: &str, n: &str) {
        let label = self.label.clone();
        self.line(format!(
            "for (int64_t __i = 0; __i < ({n}); ++__i) {{\n\
             sdfgc_gpu_check(cudaMemsetAsync({dst} + __i * ({ld}), 0, sizeof({ty}) * static_cast<size_t>({n}), __dace_current_stream), \"zero ({label})\");\n}}"
        ));
        self.alloc(ty, "__ones", n);
        self.line(format!(
            "static const {ty} __one = {{1}};\n\
             sdfgc_gpu_check(cudaMemcpyAsync(__ones, &__one, sizeof({ty}), cudaMemcpyHostToDevice, __dace_current_stream), \"one ({label})\");\n\
             for (int64_t __k = 1; __k < ({n}); __k *= 2) {{\n\
             sdfgc_gpu_check(cudaMemcpyAsync(__ones + __k, __ones, sizeof({ty}) * static_cast<size_t>(2 * __k <= ({n}) ? __k : ({n}) - __k), cudaMemcpyDeviceToDevice, __dace_current_stream), \"ones ({label})\");\n}}\n\
             sdfgc_gpu_check(cudaMemcpy2DAsync({dst}, sizeof({ty}) * static_cast<size_t>(({ld}) + 1), __ones, sizeof({ty}), sizeof({ty}), static_cast<size_t>({n}), cudaMemcpyDeviceToDevice, __dace_current_stream), \"diagonal ({label})\");"
        ));
        self.free("__ones");
    }

    /// A workspace for `func` (its `_bufferSize` query with `args`).
    /// `func` called on `args` and then the workspace and `tail`, its
    /// workspace sized by `func_bufferSize` on the same `args` first (freed
    /// by the caller, in DaCe's order).
    fn call_with_workspace(&mut self, ty: &str, func: &str, args: &str, tail: &str) {
        self.workspace(ty, func, args);
        self.call(func, &format!("{args}, __dace_workspace, {tail}"));
    }

    fn workspace(&mut self, ty: &str, func: &str, args: &str) {
        self.line("int __dace_workspace_size = 0;");
        self.call(
            &format!("{func}_bufferSize"),
            &format!("{args}, &__dace_workspace_size"),
        );
        self.alloc(ty, "__dace_workspace", "__dace_workspace_size");
    }
}

/// The tasklet calling cuSOLVER for node `op`: its code, the connectors
/// being the node's (pointers to the first element of each memlet).
pub(super) fn call(b: &mut Builder, op: SolverOp, lower: bool) -> Result<Tasklet> {
    if b.in_map() {
        return Err(b.unsupported(format_args!(
            "{} (cuSolverDn) inside a map (cuSOLVER is called from the host, once per node)",
            op_name(op)
        )));
    }
    let uplo = if lower {
        "CUBLAS_FILL_MODE_LOWER"
    } else {
        "CUBLAS_FILL_MODE_UPPER"
    };
    let mut code = Code::new(b);
    match op {
        SolverOp::Getrf => {
            let (x, f, ty) = factored(b, "Getrf")?;
            let ipiv = b.output("_ipiv")?;
            let res = b.output("_res")?;
            let (ipiv, res) = (
                int_operand(b, ipiv, "pivots")?,
                int_operand(b, res, "devInfo")?,
            );
            let (rows, cols, ld) = (c(&x.rows), c(&x.cols), c(&x.ld));
            let a = format!("reinterpret_cast<{ty} *>({})", x.conn);
            code.call_with_workspace(
                ty,
                &format!("cusolverDn{f}getrf"),
                &format!("{rows}, {cols}, {a}, {ld}"),
                &format!("{ipiv}, {res}"),
            );
            code.free("__dace_workspace");
        }
        SolverOp::Getrs => {
            let a_in = b.input("_a")?;
            let rhs_in = b.input("_rhs_in")?;
            let ipiv = b.input("_ipiv")?;
            let rhs_out = b.output("_rhs_out")?;
            let res = b.output("_res")?;
            let a = mat(b, a_in, "Getrs matrix", false)?;
            let rhs = mat(b, rhs_in, "Getrs right-hand side", true)?;
            mat(b, rhs_out, "Getrs solution", true)?;
            in_place(b, rhs_in, rhs_out)?;
            let (f, ty) = types(b, b.op(a_in).desc.dtype)?;
            if b.op(rhs_in).desc.dtype != b.op(a_in).desc.dtype {
                return Err(b.unsupported("Getrs operands of different types"));
            }
            let (ipiv, res) = (
                int_operand(b, ipiv, "pivots")?,
                int_operand(b, res, "devInfo")?,
            );
            // DaCe's: a one-dimensional right-hand side has its length as
            // leading dimension; else its row stride, its columns the count.
            let (nrhs, ldb) = if rhs.vector {
                (Expr::Int(1), rhs.rows.clone())
            } else {
                (rhs.cols.clone(), rhs.ld.clone())
            };
            code.call(
                &format!("cusolverDn{f}getrs"),
                &format!(
                    "CUBLAS_OP_N, {}, {}, reinterpret_cast<{ty} *>({}), {}, {ipiv}, reinterpret_cast<{ty} *>({}), {}, {res}",
                    c(&a.rows),
                    c(&nrhs),
                    a.conn,
                    c(&a.ld),
                    rhs.conn,
                    c(&ldb)
                ),
            );
        }
        SolverOp::Potrf => {
            let (x, f, ty) = factored(b, "Potrf")?;
            let res = b.output("_res")?;
            let res = int_operand(b, res, "devInfo")?;
            let (n, ld) = (c(&x.rows), c(&x.ld));
            let a = format!("reinterpret_cast<{ty} *>({})", x.conn);
            code.call_with_workspace(
                ty,
                &format!("cusolverDn{f}potrf"),
                &format!("{uplo}, {n}, {a}, {ld}"),
                &format!("__dace_workspace_size, {res}"),
            );
            code.free("__dace_workspace");
        }
        SolverOp::Cholesky => {
            let (a_in, b_out) = (b.input("_a")?, b.output("_b")?);
            let (a, o, f, ty) = square_in_out(b, a_in, b_out, "Cholesky")?;
            let n = c(&a.rows);
            let (pa, po) = (
                format!("reinterpret_cast<{ty} *>({})", a.conn),
                format!("reinterpret_cast<{ty} *>({})", o.conn),
            );
            // DaCe's: _bt = transpose(_a); potrf(_bt); _b = transpose(_bt); upper triangle of _b zeroed.
            code.alloc(ty, "__bt", &format!("({n}) * ({n})"));
            code.alloc("int", "__info", "1");
            code.transpose(ty, "__bt", &n, &pa, &c(&a.ld), &n, &n);
            code.call_with_workspace(
                ty,
                &format!("cusolverDn{f}potrf"),
                &format!("{uplo}, {n}, __bt, {n}"),
                "__dace_workspace_size, __info",
            );
            code.transpose(ty, &po, &c(&o.ld), "__bt", &n, &n, &n);
            let zero = format!(
                "for (int64_t __i = 0; __i + 1 < ({n}); ++__i) {{\n\
                 sdfgc_gpu_check(cudaMemsetAsync({po} + __i * ({}) + __i + 1, 0, sizeof({ty}) * static_cast<size_t>(({n}) - __i - 1), __dace_current_stream), \"zero the upper triangle ({})\");\n}}",
                c(&o.ld),
                code.label
            );
            code.line(zero);
            code.free("__dace_workspace");
            code.free("__info");
            code.free("__bt");
        }
        SolverOp::Solve => {
            let a_in = b.input("_ain")?;
            let b_in = b.input("_bin")?;
            let x_out = b.output("_bout")?;
            let a = mat(b, a_in, "Solve matrix", false)?;
            let bi = mat(b, b_in, "Solve right-hand side", true)?;
            let xo = mat(b, x_out, "Solve solution", true)?;
            let (f, ty) = types(b, b.op(a_in).desc.dtype)?;
            if [b_in, x_out]
                .iter()
                .any(|&i| b.op(i).desc.dtype != b.op(a_in).desc.dtype)
            {
                return Err(b.unsupported("Solve operands of different types"));
            }
            if a.rows != a.cols || bi.rows != a.rows || xo.rows != bi.rows || xo.cols != bi.cols {
                return Err(b.unsupported(format_args!(
                    "Solve of a {} x {} matrix with {} x {} right-hand sides into {} x {}",
                    c(&a.rows),
                    c(&a.cols),
                    c(&bi.rows),
                    c(&bi.cols),
                    c(&xo.rows),
                    c(&xo.cols)
                )));
            }
            let (n, nrhs) = (c(&a.rows), c(&bi.cols));
            let ptr = |conn: &str| format!("reinterpret_cast<{ty} *>({conn})");
            // DaCe's: _ainout = transpose(_ain), _binout = transpose(_bin);
            // getrf(_ainout); getrs(_ainout, _binout); _bout = transpose(_binout).
            code.alloc(ty, "__ainout", &format!("({n}) * ({n})"));
            code.alloc(ty, "__binout", &format!("({n}) * ({nrhs})"));
            code.alloc("int", "__pivots", &n);
            code.alloc("int", "__info", "1");
            code.transpose(ty, "__ainout", &n, &ptr(&a.conn), &c(&a.ld), &n, &n);
            code.transpose(ty, "__binout", &n, &ptr(&bi.conn), &c(&bi.ld), &n, &nrhs);
            code.call_with_workspace(
                ty,
                &format!("cusolverDn{f}getrf"),
                &format!("{n}, {n}, __ainout, {n}"),
                "__pivots, __info",
            );
            code.call(
                &format!("cusolverDn{f}getrs"),
                &format!(
                    "CUBLAS_OP_N, {n}, {nrhs}, __ainout, {n}, __pivots, __binout, {n}, __info"
                ),
            );
            code.transpose(ty, &ptr(&xo.conn), &c(&xo.ld), "__binout", &n, &nrhs, &n);
            code.free("__dace_workspace");
            code.free("__info");
            code.free("__pivots");
            code.free("__binout");
            code.free("__ainout");
        }
        SolverOp::Inv => {
            let (a_in, a_out) = (b.input("_ain")?, b.output("_aout")?);
            let (a, o, f, ty) = square_in_out(b, a_in, a_out, "Inv")?;
            let n = c(&a.rows);
            let ptr = |conn: &str| format!("reinterpret_cast<{ty} *>({conn})");
            // DaCe's overwrite_a: `_aout` names `_ain`'s memory.
            let overwrite = in_place(b, a_in, a_out).is_ok();
            let (lu, ld_lu) = if overwrite {
                (ptr(&a.conn), c(&a.ld))
            } else {
                code.alloc(ty, "__ainout", &format!("({n}) * ({n})"));
                code.copy_rows(ty, "__ainout", &n, &ptr(&a.conn), &c(&a.ld), &n, &n);
                ("__ainout".to_string(), n.clone())
            };
            let (x, ld_x) = if overwrite {
                code.alloc(ty, "__b", &format!("({n}) * ({n})"));
                ("__b".to_string(), n.clone())
            } else {
                (ptr(&o.conn), c(&o.ld))
            };
            code.alloc("int", "__pivots", &n);
            code.alloc("int", "__info", "1");
            code.identity(ty, &x, &ld_x, &n);
            code.call_with_workspace(
                ty,
                &format!("cusolverDn{f}getrf"),
                &format!("{n}, {n}, {lu}, {ld_lu}"),
                "__pivots, __info",
            );
            code.call(
                &format!("cusolverDn{f}getrs"),
                &format!("CUBLAS_OP_N, {n}, {n}, {lu}, {ld_lu}, __pivots, {x}, {ld_x}, __info"),
            );
            if overwrite {
                code.copy_rows(ty, &lu, &ld_lu, &x, &ld_x, &n, &n);
            }
            code.free("__dace_workspace");
            code.free("__info");
            code.free("__pivots");
            code.free(if overwrite { "__b" } else { "__ainout" });
        }
    }
    Ok(tasklet(b, code.s))
}

fn tasklet(b: &Builder, code: String) -> Tasklet {
    let mut inputs = NameMap::default();
    let mut outputs = NameMap::default();
    for o in &b.ops {
        let ptr = ConnType::Pointer(o.desc.dtype);
        if b.is_input(o) {
            inputs.insert(o.conn.clone(), ptr);
        } else {
            outputs.insert(o.conn.clone(), ptr);
        }
    }
    Tasklet::cpp(
        code.trim_end(),
        inputs,
        outputs,
        vec![ENVIRONMENT.to_string()],
    )
}
