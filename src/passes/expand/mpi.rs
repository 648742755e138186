//! The nodes of `dace.libraries.mpi` (Send, Recv, Bcast, Reduce, Allreduce,
//! Allgather, Alltoall, Scatter, Gather, Dummy) become one C++ tasklet that
//! calls MPI on `MPI_COMM_WORLD`, with DaCe's semantics (its `MPI`
//! expansions, DaCe 1.0.2):
//!
//! * a buffer is a pointer to the first element of its memlet's subset; its
//!   count is the subset's number of elements and its datatype the MPI type
//!   of its element type (`dace.libraries.mpi.utils.MPI_DDT`); a subset that
//!   is not one contiguous block is sent as an `MPI_Type_vector` (rows of a
//!   2-D subset, or elements at a stride), created, committed and freed
//!   around the call;
//! * roots, destinations, sources and tags are integer values read from
//!   their memlets;
//! * Reduce and Allreduce use the node's `op`; when the input and output are
//!   one container the call is in place (`MPI_IN_PLACE` on the root for
//!   Reduce, everywhere for Allreduce);
//! * Scatter sends `count(in) / size` elements to each rank, Gather and
//!   Allgather receive `count(out) / size` from each, Alltoall exchanges
//!   `count(in) / size` with each (DaCe's counts).
//!
//! The tasklet names DaCe's MPI environment ([`ENVIRONMENT`]): the file then
//! includes `<mpi.h>` and initialises MPI in `__dace_init_*` unless the
//! application has (see `back::cpp`).
//!
//! Process grids (`__state-><grid>_comm`, DaCe 2.x: `__state-><grid>`),
//! subarrays and redistributions use the state fields the Dummy nodes
//! declare (DaCe 2.x's descriptors: `front::json::distributed`). Refused by
//! name: a node inside a map, data in GPU memory, element types MPI has no
//! type for here, grids and subarrays no Dummy node declares.

use crate::diag::Result;
use crate::ir::cexpr::to_cpp;
use crate::ir::simplify::simplify;
use crate::ir::*;

use super::build::{Builder, Operand};

pub use crate::ir::environments::{MPI_ENVIRONMENT as ENVIRONMENT, calls_mpi};

/// The header the file includes when it calls MPI (C API only: MPI's
/// deprecated C++ bindings do not build warning-free).
pub const HEADER: &str = "#ifndef OMPI_SKIP_MPICXX\n#define OMPI_SKIP_MPICXX 1\n#endif\n#ifndef MPICH_SKIP_MPICXX\n#define MPICH_SKIP_MPICXX 1\n#endif\n#include <mpi.h>\n#include <cassert>\nstatic_assert(sizeof(MPI_Request) <= 8, \"sdfgc reserves 8 bytes per MPI_Request\");";

/// `__dace_init_*`: MPI is initialised unless the application did (the
/// application owns MPI: the library never finalises it, as in DaCe).
pub const INIT: &str = "{\n    int __sdfgc_mpi_initialized = 0;\n    MPI_Initialized(&__sdfgc_mpi_initialized);\n    if (!__sdfgc_mpi_initialized) MPI_Init(nullptr, nullptr);\n}\n";

/// True if any tasklet of the SDFG or of an SDFG nested in it calls MPI.
pub fn mpi_in(sdfg: &Sdfg) -> bool {
    super::environment_in(sdfg, ENVIRONMENT)
}

/// The MPI datatype of an element type (DaCe's `MPI_DDT`).
pub fn datatype(t: DType) -> Option<&'static str> {
    Some(match t {
        DType::Float32 => "MPI_FLOAT",
        DType::Float64 => "MPI_DOUBLE",
        DType::Complex64 => "MPI_C_FLOAT_COMPLEX",
        DType::Complex128 => "MPI_C_DOUBLE_COMPLEX",
        DType::Int16 => "MPI_SHORT",
        DType::Int32 => "MPI_INT",
        DType::Int64 => "MPI_LONG_LONG",
        DType::UInt16 => "MPI_UNSIGNED_SHORT",
        DType::UInt32 => "MPI_UNSIGNED",
        DType::UInt64 => "MPI_UNSIGNED_LONG_LONG",
        _ => return None,
    })
}

/// The predefined reduction operators a node's `op` may name.
const OPS: &[&str] = &[
    "MPI_SUM", "MPI_PROD", "MPI_MIN", "MPI_MAX", "MPI_LAND", "MPI_LOR", "MPI_LXOR", "MPI_BAND",
    "MPI_BOR", "MPI_BXOR",
];

fn c(e: &Expr) -> String {
    to_cpp(&simplify(e))
}

fn mul(a: Expr, b: Expr) -> Expr {
    simplify(&Expr::bin(BinaryOp::Mul, a, b))
}

/// Whether two sizes are equal whatever the order of their factors
/// (`Py*lNx*lNy` and `lNx*lNy*Py`): equal as written, or equal for three
/// assignments of distinct values to the names (sizes are polynomials).
fn same(a: &Expr, b: &Expr) -> bool {
    if a == b {
        return true;
    }
    if crate::ir::simplify::piecewise(a) || crate::ir::simplify::piecewise(b) {
        return false;
    }
    (0..3i64).all(|round| {
        let mut names: Vec<String> = Vec::new();
        let mut env = |n: &str| {
            let k = names.iter().position(|m| m == n).unwrap_or_else(|| {
                names.push(n.to_string());
                names.len() - 1
            });
            let k = k as i64;
            Some(1_009 + 97 * k + 13 * round * (k + 1))
        };
        let x = crate::ir::simplify::eval_int(a, &mut env);
        let y = crate::ir::simplify::eval_int(b, &mut env);
        x.is_some() && x == y
    })
}

/// Contiguous: the innermost stride is 1 and each outer stride is the
/// inner one times its extent.
fn is_contiguous(strides: &[Expr], extents: &[Expr]) -> bool {
    strides.is_empty()
        || (strides[strides.len() - 1] == Expr::Int(1)
            && (0..strides.len() - 1).all(|k| {
                same(
                    &strides[k],
                    &mul(strides[k + 1].clone(), extents[k + 1].clone()),
                )
            }))
}

/// A buffer as MPI sees it.
struct Buffer {
    /// The tasklet connector (a pointer to the first element).
    conn: String,
    /// Elements in the memlet's subset.
    elements: Expr,
    /// `(count, datatype)` of the call: `(elements, T)` for a contiguous
    /// subset, `(1, vector type)` otherwise.
    count: String,
    datatype: String,
    /// Statements creating the vector type before the call, and freeing it after.
    setup: String,
    teardown: String,
    /// The container (in-place calls).
    data: String,
}

/// The strides of the non-unit dimensions (container stride times step).
fn strides(o: &Operand) -> Vec<Expr> {
    o.nonunit
        .iter()
        .map(|&d| mul(o.desc.strides[d].clone(), o.sub[d].step.clone()))
        .collect()
}

fn buffer(b: &Builder, i: usize, what: &str) -> Result<Buffer> {
    let o = b.op(i);
    if o.desc.storage.is_gpu() {
        return Err(b.unsupported(format_args!(
            "MPI buffer '{}' ({}) is in GPU memory ({}); MPI nodes take host data",
            o.conn,
            o.data,
            o.desc.storage.dace_name()
        )));
    }
    let base = datatype(o.desc.dtype).ok_or_else(|| {
        b.unsupported(format_args!(
            "MPI buffer '{}' ({}) of type {}: no MPI datatype for it (DaCe's MPI_DDT: float32, float64, complex64, complex128, int16, int32, int64, uint16, uint32, uint64)",
            o.conn,
            o.data,
            o.desc.dtype.dace_name()
        ))
    })?;
    let extents: Vec<Expr> = (0..o.nonunit.len()).map(|k| o.extent(k)).collect();
    let elements = extents.iter().cloned().fold(Expr::Int(1), mul);
    let st = strides(o);
    let contiguous = is_contiguous(&st, &extents);
    let ty = format!("__sdfgc_{}_type", o.conn.trim_start_matches('_'));
    let (count, dt, setup, teardown) = if contiguous {
        (
            format!("static_cast<int>({})", c(&elements)),
            base.to_string(),
            String::new(),
            String::new(),
        )
    } else {
        // (blocks, block length, stride) of a vector type.
        let (blocks, len, stride) = match st.len() {
            1 => (extents[0].clone(), Expr::Int(1), st[0].clone()),
            2 if st[1] == Expr::Int(1) => (extents[0].clone(), extents[1].clone(), st[0].clone()),
            _ => {
                return Err(b.unsupported(format_args!(
                    "{what} '{}' ({}): a subset of {} non-unit dimensions that is not contiguous (DaCe's vector datatypes cover rows of a 2-D subset)",
                    o.conn,
                    o.data,
                    st.len()
                )));
            }
        };
        (
            "1".to_string(),
            ty.clone(),
            format!(
                "MPI_Datatype {ty};\nMPI_Type_vector(static_cast<int>({}), static_cast<int>({}), static_cast<int>({}), {base}, &{ty});\nMPI_Type_commit(&{ty});\n",
                c(&blocks),
                c(&len),
                c(&stride)
            ),
            format!("MPI_Type_free(&{ty});\n"),
        )
    };
    Ok(Buffer {
        conn: o.conn.clone(),
        elements,
        count,
        datatype: dt,
        setup,
        teardown,
        data: o.data.clone(),
    })
}

/// BlockScatter and BlockGather (DaCe's expansions): a subarray datatype
/// and its counts and displacements scatter the root's array over a
/// process grid (`MPI_Scatterv`; then, with `bcast_grid`, a Bcast on that
/// grid) or gather it back (`MPI_Gatherv`; with `reduce_grid`, the blocks
/// are first summed on that grid, in place in the input, as DaCe does).
fn block_call(
    b: &mut Builder,
    call: MpiCall,
    names: &[(String, String)],
    declared: &[String],
    descriptors: bool,
) -> Result<String> {
    let name = |k: &str| names.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let scatter = call == MpiCall::BlockScatter;
    let (grid_key, extra_key) = if scatter {
        ("scatter_grid", "bcast_grid")
    } else {
        ("gather_grid", "reduce_grid")
    };
    let subarray = name("subarray_type")
        .ok_or_else(|| b.invalid(format_args!("MPI {call:?} without 'subarray_type'")))?;
    let grid = name(grid_key)
        .ok_or_else(|| b.invalid(format_args!("MPI {call:?} without '{grid_key}'")))?;
    let extra = name(extra_key);
    if !declares(declared, &format!("MPI_Datatype {subarray};")) {
        return Err(b.invalid(format_args!(
            "MPI {call:?} on subarray '{subarray}', which the SDFG does not declare (no Dummy node has the field 'MPI_Datatype {subarray};')"
        )));
    }
    let mut comms = Vec::new();
    for g in std::iter::once(grid).chain(extra) {
        comms.push(communicator(b, call, Some(g), declared, descriptors)?);
    }
    let i = b.input("_inp_buffer")?;
    let o = b.output("_out_buffer")?;
    let local = if scatter { o } else { i };
    buffer(b, local, "buffer")?;
    // DaCe counts the local container's whole shape.
    let d = &b.op(local).desc;
    let n = c(&d.shape.iter().cloned().fold(Expr::Int(1), mul));
    let t = datatype(d.dtype).expect("buffer() checked the type");
    let (inp, out) = (&b.op(i).conn, &b.op(o).conn);
    let sa = format!("__state->{subarray}");
    let v = format!("__state->{grid}");
    let vc = &comms[0];
    let ec = comms.get(1).cloned().unwrap_or_default();
    Ok(if scatter {
        let mut code = format!(
            "if ({v}_valid) {{\n    MPI_Scatterv({inp}, {sa}_counts, {sa}_displs, {sa}, {out}, static_cast<int>({n}), {t}, 0, {vc});\n}}\n"
        );
        if let Some(e) = extra {
            code.push_str(&format!(
                "if (__state->{e}_valid) {{\n    MPI_Bcast({out}, static_cast<int>({n}), {t}, 0, {ec});\n}}\n"
            ));
        }
        code
    } else {
        let gather = format!(
            "MPI_Gatherv({inp}, static_cast<int>({n}), {t}, {out}, {sa}_counts, {sa}_displs, {sa}, 0, {vc});"
        );
        match extra {
            // The reduction writes the input (DaCe's expansion).
            Some(e) => format!(
                "if ({v}_valid) {{\n    MPI_Reduce(MPI_IN_PLACE, const_cast<{ct} *>({inp}), static_cast<int>({n}), {t}, MPI_SUM, __state->{e}_rank, {ec});\n    {gather}\n}} else if (__state->{e}_valid) {{\n    MPI_Reduce({inp}, const_cast<{ct} *>({inp}), static_cast<int>({n}), {t}, MPI_SUM, 0, {ec});\n}}\n",
                ct = d.dtype.ctype()
            ),
            None => format!("if ({v}_valid) {{\n    {gather}\n}}\n"),
        }
    })
}

/// Redistribute (DaCe's expansion): with the send and receive datatypes
/// the SDFG's init code derived for the redistribution, every rank of the
/// input grid sends its blocks (`MPI_Isend` on `MPI_COMM_WORLD`), every rank
/// of the output grid copies the blocks it keeps and receives the others,
/// then the sends complete.
fn redistribute(
    b: &mut Builder,
    names: &[(String, String)],
    declared: &[String],
    redistributions: &[(String, (String, String))],
    descriptors: bool,
) -> Result<String> {
    let r = names
        .iter()
        .find(|(k, _)| k == "redistr")
        .map(|(_, v)| v.clone())
        .ok_or_else(|| b.invalid(format_args!("MPI Redistribute without 'redistr'")))?;
    let (ga, gb) = redistributions
        .iter()
        .find(|(k, _)| *k == r)
        .map(|(_, g)| g.clone())
        .ok_or_else(|| {
            b.invalid(format_args!(
                "MPI Redistribute of '{r}', which the SDFG's '_rdistrarrays' does not describe"
            ))
        })?;
    if !declares(declared, &format!("MPI_Datatype* {r}_send_types;")) {
        return Err(b.invalid(format_args!(
            "MPI Redistribute of '{r}', whose state fields the SDFG does not declare (no Dummy node has 'MPI_Datatype* {r}_send_types;')"
        )));
    }
    for g in [&ga, &gb] {
        communicator(b, MpiCall::Redistribute, Some(g), declared, descriptors)?;
    }
    let i = b.input("_inp_buffer")?;
    let o = b.output("_out_buffer")?;
    buffer(b, i, "input")?;
    buffer(b, o, "output")?;
    let (x, y) = (b.op(i), b.op(o));
    if x.desc.dtype != y.desc.dtype {
        return Err(b.invalid(format_args!(
            "MPI Redistribute from {} to {}: the element types differ",
            x.desc.dtype.dace_name(),
            y.desc.dtype.dace_name()
        )));
    }
    let (ni, no) = (x.desc.shape.len(), y.desc.shape.len());
    if ni != no {
        return Err(b.unsupported(format_args!(
            "MPI Redistribute between arrays of {ni} and {no} dimensions"
        )));
    }
    let s = format!("__state->{r}");
    // The self copy: an N-dimensional block of `_self_size` elements from
    // `_self_src` in the input to `_self_dst` in the output.
    let mut copy = String::new();
    let (mut src, mut dst) = (Vec::new(), Vec::new());
    for k in 0..ni {
        copy.push_str(&format!(
            "{pad}for (int __c{k} = 0; __c{k} < {s}_self_size[__idx * {ni} + {k}]; ++__c{k})\n",
            pad = "        "
        ));
        src.push(format!(
            "({s}_self_src[__idx * {ni} + {k}] + __c{k}) * ({})",
            c(&x.desc.strides[k])
        ));
        dst.push(format!(
            "({s}_self_dst[__idx * {no} + {k}] + __c{k}) * ({})",
            c(&y.desc.strides[k])
        ));
    }
    copy.push_str(&format!(
        "            {out}[{}] = {inp}[{}];\n",
        dst.join(" + "),
        src.join(" + "),
        inp = x.conn,
        out = y.conn
    ));
    Ok(format!(
        "MPI_Request *__sdfgc_req = new MPI_Request[{s}_sends];\n\
         if (__state->{ga}_valid) {{\n\
         \x20   for (int __idx = 0; __idx < {s}_sends; ++__idx) {{\n\
         \x20       MPI_Isend({inp}, 1, {s}_send_types[__idx], {s}_dst_ranks[__idx], 0, MPI_COMM_WORLD, &__sdfgc_req[__idx]);\n\
         \x20   }}\n\
         }}\n\
         if (__state->{gb}_valid) {{\n\
         \x20   for (int __idx = 0; __idx < {s}_self_copies; ++__idx) {{\n\
         {copy}\
         \x20   }}\n\
         \x20   for (int __idx = 0; __idx < {s}_recvs; ++__idx) {{\n\
         \x20       MPI_Recv({out}, 1, {s}_recv_types[__idx], {s}_src_ranks[__idx], 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);\n\
         \x20   }}\n\
         }}\n\
         if (__state->{ga}_valid) {{\n\
         \x20   MPI_Waitall({s}_sends, __sdfgc_req, MPI_STATUSES_IGNORE);\n\
         }}\n\
         delete[] __sdfgc_req;\n",
        inp = x.conn,
        out = y.conn
    ))
}

/// DaCe's `dace::comm` helpers (its `comm.h`), which the init code of
/// redistributions calls; only in files that use them.
pub const COMM_RUNTIME: &str = "namespace dace { namespace comm {\n\
static inline int cart_rank(int grid_length, const int *grid, const int *coords) {\n\
    int rank = coords[0];\n\
    for (int i = 1; i < grid_length; ++i) {\n\
        rank *= grid[i];\n\
        rank += coords[i];\n\
    }\n\
    return rank;\n\
}\n\
static inline void cart_coords(int rank, int grid_length, const int *grid, int *coords) {\n\
    int tmp = rank;\n\
    for (int i = grid_length - 1; i > 0; --i) {\n\
        coords[i] = tmp % grid[i];\n\
        tmp /= grid[i];\n\
    }\n\
    coords[0] = tmp;\n\
}\n\
} }  // namespace dace::comm";

/// A request operand: its connector (a pointer to the first `MPI_Request`)
/// and the number of requests (contiguous elements).
fn request(b: &Builder, i: usize) -> Result<(String, String)> {
    let o = b.op(i);
    if o.desc.dtype != DType::MpiRequest {
        return Err(b.invalid(format_args!(
            "MPI request '{}' ({}) must be of type MPI_Request, not {}",
            o.conn,
            o.data,
            o.desc.dtype.dace_name()
        )));
    }
    let extents: Vec<Expr> = (0..o.nonunit.len()).map(|k| o.extent(k)).collect();
    let st = strides(o);
    if !is_contiguous(&st, &extents) {
        return Err(b.unsupported(format_args!(
            "MPI requests '{}' ({}) that are not contiguous",
            o.conn, o.data
        )));
    }
    let n = extents.into_iter().fold(Expr::Int(1), mul);
    Ok((o.conn.clone(), c(&n)))
}

/// An integer value input (root, destination, source, tag).
fn int_value(b: &Builder, i: usize) -> Result<String> {
    let o = b.op(i);
    if !o.desc.dtype.is_integer() || !o.nonunit.is_empty() {
        return Err(b.unsupported(format_args!(
            "MPI argument '{}' ({}) must be one integer element, not {} of type {}",
            o.conn,
            o.data,
            if o.nonunit.is_empty() {
                "one element"
            } else {
                "several elements"
            },
            o.desc.dtype.dace_name()
        )));
    }
    if o.desc.storage.is_gpu() {
        return Err(b.unsupported(format_args!(
            "MPI argument '{}' ({}) is in GPU memory; MPI nodes take host data",
            o.conn, o.data
        )));
    }
    Ok(format!("static_cast<int>({})", o.conn))
}

fn op_name(b: &Builder, op: Option<&str>) -> Result<String> {
    let op = op.unwrap_or("MPI_SUM");
    if OPS.contains(&op) {
        Ok(op.to_string())
    } else {
        Err(b.unsupported(format_args!(
            "reduction operator '{op}' (one of {} expected)",
            OPS.join(", ")
        )))
    }
}

/// Every state field the SDFG tree declares: MPI Dummy nodes' `fields` and
/// tasklets' `state_fields` (`MPI_Comm __pgrid_comm;`, ...).
pub fn declared_fields(sdfg: &Sdfg) -> Vec<String> {
    let mut out = Vec::new();
    sdfg.for_each_sdfg(&mut |s| {
        super::each_node(&s.body, &mut |n| match &n.kind {
            NodeKind::Library(LibraryNode {
                kind: LibraryKind::Mpi { fields, .. },
                ..
            }) => out.extend(fields.iter().map(|f| f.trim().to_string())),
            NodeKind::Tasklet(t) => out.extend(t.state_fields.iter().map(|f| f.trim().to_string())),
            _ => {}
        })
    });
    out
}

/// Whether `fields` declare `decl` (`MPI_Comm __pgrid_comm;`), spacing aside.
fn declares(fields: &[String], decl: &str) -> bool {
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let want = norm(decl);
    fields.iter().any(|f| norm(f) == want)
}

/// The communicator of a call: a process grid's (`__state-><grid>_comm` in
/// DaCe 1.0.2, `__state-><grid>` in 2.x, declared by a Dummy node of the
/// SDFG, as DaCe's frontend writes it), else `MPI_COMM_WORLD`.
fn communicator(
    b: &Builder,
    call: MpiCall,
    grid: Option<&str>,
    fields: &[String],
    descriptors: bool,
) -> Result<String> {
    let Some(g) = grid else {
        return Ok("MPI_COMM_WORLD".to_string());
    };
    let field = comm_field(g, descriptors);
    if !declares(fields, &format!("MPI_Comm {field};")) {
        return Err(b.invalid(format_args!(
            "MPI {call:?} on process grid '{g}', which the SDFG does not declare (no Dummy node has the field 'MPI_Comm {field};')"
        )));
    }
    Ok(format!("__state->{field}"))
}

/// The state field of a grid's communicator: `<grid>` for DaCe 2.x's
/// `ProcessGrid` descriptors, `<grid>_comm` for DaCe 1.0.2's grids.
fn comm_field(grid: &str, descriptors: bool) -> String {
    if descriptors {
        grid.to_string()
    } else {
        format!("{grid}_comm")
    }
}

/// The call for an MPI node; None for a node that calls nothing (Dummy
/// without fields). A Dummy with fields becomes a tasklet without code or
/// connectors that declares them as state fields (DaCe's expansion); the
/// SDFG's init code creates the grids and datatypes they hold.
#[allow(clippy::too_many_arguments)]
pub(super) fn call(
    b: &mut Builder,
    call: MpiCall,
    op: Option<&str>,
    grid: Option<&str>,
    fcomm: Option<&str>,
    fields: &[String],
    names: &[(String, String)],
    descriptors: bool,
    declared: &[String],
    redistributions: &[(String, (String, String))],
) -> Result<Option<Tasklet>> {
    if call == MpiCall::Dummy {
        if fields.is_empty() {
            return Ok(None);
        }
        let mut t = tasklet(b, String::new());
        t.inputs = NameMap::default();
        t.outputs = NameMap::default();
        t.state_fields = fields.to_vec();
        return Ok(Some(t));
    }
    if b.in_map() {
        return Err(b.unsupported(format_args!(
            "MPI {call:?} inside a map (MPI calls run once per node, outside maps)"
        )));
    }
    let mut code = String::new();
    let mut head = String::new();
    let comm = match fcomm {
        // A Fortran handle (mpi4py's `py2f()`), a symbol or scalar argument
        // of the program, converted as DaCe does.
        Some(f) if grid.is_none() => {
            if !f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(b.invalid(format_args!(
                    "MPI {call:?} on the Fortran communicator '{f}', which is not a name"
                )));
            }
            head = format!("MPI_Comm __sdfgc_comm = MPI_Comm_f2c({f});\n");
            "__sdfgc_comm".to_string()
        }
        _ => communicator(b, call, grid, declared, descriptors)?,
    };
    let world = comm.as_str();
    let mut pre = String::new();
    let mut post = String::new();
    let add = |buf: &Buffer, pre: &mut String, post: &mut String| {
        pre.push_str(&buf.setup);
        post.push_str(&buf.teardown);
    };
    let comm_size = format!("int __sdfgc_size = 1;\nMPI_Comm_size({world}, &__sdfgc_size);\n");
    match call {
        MpiCall::Send | MpiCall::Recv | MpiCall::Isend | MpiCall::Irecv => {
            let sends = matches!(call, MpiCall::Send | MpiCall::Isend);
            let (buf, peer) = if sends {
                (b.input("_buffer")?, b.input("_dest")?)
            } else {
                (b.output("_buffer")?, b.input("_src")?)
            };
            let tag = b.input("_tag")?;
            // Nonblocking: the request the call starts (a derived type may
            // be freed once the call has started; MPI keeps it until the
            // request completes).
            let last = match call {
                MpiCall::Send => String::new(),
                MpiCall::Recv => ", MPI_STATUS_IGNORE".to_string(),
                _ => {
                    let req = b.output("_request")?;
                    format!(", {}", request(b, req)?.0)
                }
            };
            let x = buffer(b, buf, "buffer")?;
            let (peer, tag) = (int_value(b, peer)?, int_value(b, tag)?);
            add(&x, &mut pre, &mut post);
            code = format!(
                "MPI_{call:?}({}, {}, {}, {peer}, {tag}, {world}{last});\n",
                x.conn, x.count, x.datatype
            );
        }
        MpiCall::Wait => {
            let req = b.input("_request")?;
            let (r, _) = request(b, req)?;
            let tag = b.output_opt("_stat_tag")?;
            let source = b.output_opt("_stat_source")?;
            // The call completes the request and resets it (an input in DaCe's node).
            code = format!(
                "MPI_Status __sdfgc_status;\nMPI_Wait(const_cast<MPI_Request *>({r}), &__sdfgc_status);\n"
            );
            for (o, field) in [(tag, "MPI_TAG"), (source, "MPI_SOURCE")] {
                if let Some(o) = o {
                    let conn = &b.op(o).conn;
                    code.push_str(&format!("{conn} = __sdfgc_status.{field};\n"));
                }
            }
        }
        MpiCall::Waitall => {
            let req = b.input("_request")?;
            let (r, n) = request(b, req)?;
            code = format!(
                "MPI_Waitall(static_cast<int>({n}), const_cast<MPI_Request *>({r}), MPI_STATUSES_IGNORE);\n"
            );
        }
        MpiCall::Bcast => {
            let i = b.input("_inbuffer")?;
            let o = b.output("_outbuffer")?;
            let r = b.input("_root")?;
            let (x, y) = (buffer(b, i, "input")?, buffer(b, o, "output")?);
            if x.data != y.data {
                return Err(b.invalid(format_args!(
                    "Bcast input '{}' and output '{}' must be the same container (as DaCe requires)",
                    x.data, y.data
                )));
            }
            let root = int_value(b, r)?;
            add(&y, &mut pre, &mut post);
            // The input is the output's memory (one container).
            code = format!(
                "(void){};\nMPI_Bcast({}, {}, {}, {root}, {world});\n",
                x.conn, y.conn, y.count, y.datatype
            );
        }
        MpiCall::Reduce | MpiCall::Allreduce => {
            let i = b.input("_inbuffer")?;
            let o = b.output("_outbuffer")?;
            let r = if call == MpiCall::Reduce {
                Some(b.input("_root")?)
            } else {
                None
            };
            let (x, y) = (buffer(b, i, "input")?, buffer(b, o, "output")?);
            let op = op_name(b, op)?;
            for z in [&x, &y] {
                if z.count == "1" {
                    return Err(b.unsupported(format_args!(
                        "MPI {call:?} of the non-contiguous buffer '{}' ({}) (a reduction needs contiguous elements)",
                        z.conn, z.data
                    )));
                }
            }
            let in_place = x.data == y.data;
            match r {
                Some(r) => {
                    let root = int_value(b, r)?;
                    code = if in_place {
                        format!(
                            "int __sdfgc_rank = 0;\nMPI_Comm_rank({world}, &__sdfgc_rank);\n\
                             if (__sdfgc_rank == {root}) {{\n\
                             MPI_Reduce(MPI_IN_PLACE, {y}, {n}, {t}, {op}, {root}, {world});\n\
                             }} else {{\n\
                             MPI_Reduce({x}, {y}, {n}, {t}, {op}, {root}, {world});\n}}\n",
                            x = x.conn,
                            y = y.conn,
                            n = y.count,
                            t = y.datatype
                        )
                    } else {
                        format!(
                            "MPI_Reduce({}, {}, {}, {}, {op}, {root}, {world});\n",
                            x.conn, y.conn, y.count, y.datatype
                        )
                    };
                }
                None => {
                    let send = if in_place { "MPI_IN_PLACE" } else { &x.conn };
                    code = format!(
                        "MPI_Allreduce({send}, {}, {}, {}, {op}, {world});\n",
                        y.conn, y.count, y.datatype
                    );
                }
            }
        }
        MpiCall::Allgather | MpiCall::Alltoall | MpiCall::Scatter | MpiCall::Gather => {
            let i = b.input("_inbuffer")?;
            let o = b.output("_outbuffer")?;
            let r = if matches!(call, MpiCall::Scatter | MpiCall::Gather) {
                Some(b.input("_root")?)
            } else {
                None
            };
            let (x, y) = (buffer(b, i, "input")?, buffer(b, o, "output")?);
            for z in [&x, &y] {
                if z.count == "1" {
                    return Err(b.unsupported(format_args!(
                        "MPI {call:?} of the non-contiguous buffer '{}' ({}) (not implemented)",
                        z.conn, z.data
                    )));
                }
            }
            let per_rank =
                |z: &Buffer| format!("static_cast<int>(({}) / __sdfgc_size)", c(&z.elements));
            code.push_str(&comm_size);
            let line = match (call, r) {
                (MpiCall::Allgather, _) => format!(
                    "MPI_Allgather({}, {}, {}, {}, {}, {}, {world});\n",
                    x.conn,
                    x.count,
                    x.datatype,
                    y.conn,
                    per_rank(&y),
                    y.datatype
                ),
                (MpiCall::Alltoall, _) => format!(
                    "MPI_Alltoall({}, {n}, {}, {}, {n}, {}, {world});\n",
                    x.conn,
                    x.datatype,
                    y.conn,
                    y.datatype,
                    n = per_rank(&x)
                ),
                (MpiCall::Scatter, Some(r)) => format!(
                    "MPI_Scatter({}, {}, {}, {}, {}, {}, {}, {world});\n",
                    x.conn,
                    per_rank(&x),
                    x.datatype,
                    y.conn,
                    y.count,
                    y.datatype,
                    int_value(b, r)?
                ),
                (_, Some(r)) => format!(
                    "MPI_Gather({}, {}, {}, {}, {}, {}, {}, {world});\n",
                    x.conn,
                    x.count,
                    x.datatype,
                    y.conn,
                    per_rank(&y),
                    y.datatype,
                    int_value(b, r)?
                ),
                _ => unreachable!("a rooted call has a root"),
            };
            code.push_str(&line);
        }
        MpiCall::BlockScatter | MpiCall::BlockGather => {
            code = block_call(b, call, names, declared, descriptors)?;
        }
        MpiCall::Redistribute => {
            code = redistribute(b, names, declared, redistributions, descriptors)?;
        }
        MpiCall::Dummy => unreachable!("handled above"),
    }
    let code = format!("{pre}{head}{code}{post}");
    Ok(Some(tasklet(b, code)))
}

fn tasklet(b: &Builder, code: String) -> Tasklet {
    let mut inputs = NameMap::default();
    let mut outputs = NameMap::default();
    for o in &b.ops {
        let is_buffer = o.conn.ends_with("buffer") || o.conn == "_request";
        let t = if is_buffer {
            ConnType::Pointer(o.desc.dtype)
        } else {
            ConnType::Scalar(o.desc.dtype)
        };
        if b.is_input(o) {
            inputs.insert(o.conn.clone(), t);
        } else {
            outputs.insert(o.conn.clone(), t);
        }
    }
    Tasklet {
        // Communication is an effect of its own (a Send writes nothing).
        side_effects: true,
        ..Tasklet::cpp(&code, inputs, outputs, vec![ENVIRONMENT.to_string()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Expr {
        Expr::Sym(s.to_string())
    }

    #[test]
    fn symbolic_strides_in_another_factor_order_are_contiguous() {
        let prod = |xs: &[&str]| xs.iter().fold(Expr::Int(1), |a, x| mul(a, n(x)));
        // A C-order (Px, Py, lNx, lNy) array, strides written as DaCe writes them.
        let strides = [
            prod(&["Py", "lNx", "lNy"]),
            prod(&["lNx", "lNy"]),
            n("lNy"),
            Expr::Int(1),
        ];
        let extents = [n("Px"), n("Py"), n("lNx"), n("lNy")];
        assert!(is_contiguous(&strides, &extents));
        // A transposed layout is not.
        let swapped = [
            prod(&["Py", "lNx", "lNy"]),
            n("lNy"),
            prod(&["Py", "lNy"]),
            Expr::Int(1),
        ];
        assert!(!is_contiguous(&swapped, &extents));
        assert!(!same(
            &prod(&["a", "b", "c", "d", "e"]),
            &prod(&["a", "b", "c", "d", "f"])
        ));
    }
}
