//! Library-node expansion: every library node becomes plain maps, tasklets
//! and access nodes in its own state, before any other pass runs, so that
//! the planners and every writer see ordinary dataflow (as DaCe's pure
//! expansions do).
//!
//! Outputs are computed by a parallel map over the output elements (a GPU
//! kernel at the top of a GPU state); a reduction inside it runs in a
//! register, sequentially, per output element. A reduction to one element
//! at the top of a state on GPU data is a parallel map that combines into
//! the element atomically; elsewhere it is one sequential loop.
//!
//! One file per node family: [`blas`] (MatMul, Dot, Gemv, Gemm, Ger, Axpy,
//! BatchedMatMul), [`einsum`] (Einsum), [`linalg`] (TensorDot), [`fft`]
//! (FFT, IFFT), [`cusolver`] (Getrf, Getrs, Potrf, Cholesky, Solve of
//! implementation cuSolverDn: cuSOLVER calls), [`standard`] (Reduce,
//! Transpose, TensorTranspose),
//! [`gt4py`] (gt4py's ReduceWithSkipValues); [`build`] holds the common shape.

mod blas;
pub mod blascall;
mod build;
pub mod cusolver;
mod einsum;
mod fft;
mod gt4py;
mod linalg;
pub mod mpi;
mod standard;

use crate::diag::Result;
use crate::ir::*;
use crate::options::Blas;

use build::Builder;

/// Expands every library node of the SDFG tree in place; with `blas`, the
/// BLAS nodes become calls of that library ([`blascall`]). Returns whether
/// any such call was written.
pub fn expand(sdfg: &mut Sdfg, blas: Blas) -> Result<bool> {
    expand_for(sdfg, blas, false)
}

/// [`expand`] for a target: on a GPU target (`gpu`) MPI nodes are refused
/// (host data only; no CUDA-aware MPI).
pub fn expand_for(sdfg: &mut Sdfg, blas: Blas, gpu: bool) -> Result<bool> {
    let mut cx = Cx {
        serial: 0,
        blas,
        calls: 0,
        gpu,
        grids: mpi::declared_fields(sdfg),
        redistributions: {
            let mut r = Vec::new();
            sdfg.for_each_sdfg(&mut |s| {
                r.extend(
                    s.redistributions
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone())),
                )
            });
            r
        },
    };
    expand_sdfg(sdfg, false, &mut cx)?;
    Ok(cx.calls > 0)
}

/// What the expansion of one SDFG tree carries along.
struct Cx {
    /// Counter for unique names.
    serial: usize,
    /// The BLAS library to call, if any.
    blas: Blas,
    /// BLAS calls written.
    calls: usize,
    /// The target is a GPU (MPI nodes are refused).
    gpu: bool,
    /// The state fields the SDFG tree declares (process grids, subarrays).
    grids: Vec<String>,
    /// The redistributions of the SDFG tree and their process grids.
    redistributions: Vec<(String, (String, String))>,
}

fn expand_sdfg(sdfg: &mut Sdfg, in_map: bool, cx: &mut Cx) -> Result<()> {
    expand_region(&mut sdfg.body, &mut sdfg.arrays, in_map, cx)
}

fn expand_region(
    r: &mut Region,
    arrays: &mut NameMap<DataDesc>,
    in_map: bool,
    cx: &mut Cx,
) -> Result<()> {
    for b in &mut r.blocks {
        match &mut b.kind {
            BlockKind::State(st) => expand_state(st, arrays, in_map, cx)?,
            BlockKind::Region(inner) => expand_region(inner, arrays, in_map, cx)?,
            BlockKind::Conditional(branches) => {
                for (_, body) in branches {
                    expand_region(body, arrays, in_map, cx)?;
                }
            }
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }
    Ok(())
}

fn expand_state(
    st: &mut State,
    arrays: &mut NameMap<DataDesc>,
    in_map: bool,
    cx: &mut Cx,
) -> Result<()> {
    for n in &mut st.nodes {
        let inside = in_map || n.scope.is_some();
        if let NodeKind::Nested(ns) = &mut n.kind {
            expand_sdfg(&mut ns.sdfg, inside, cx)?;
        }
    }
    let libs: Vec<NodeId> = st
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| matches!(n.kind, NodeKind::Library(_)))
        .map(|(i, _)| NodeId(i as u32))
        .collect();
    if libs.is_empty() {
        return Ok(());
    }
    let mut dead = Vec::new();
    for &id in &libs {
        let NodeKind::Library(lib) = st.nodes[id.index()].kind.clone() else {
            continue;
        };
        if let LibraryKind::Mpi {
            call,
            op,
            grid,
            fcomm,
            fields,
            names,
            descriptors,
        } = &lib.kind
        {
            let mut b = Builder::new(st, arrays, id, in_map, cx.serial);
            cx.serial += 1;
            if cx.gpu {
                return Err(b.unsupported(format_args!(
                    "MPI {call:?} on a GPU target (MPI nodes take host data: use --target cpp)"
                )));
            }
            match mpi::call(
                &mut b,
                *call,
                op.as_deref(),
                grid.as_deref(),
                fcomm.as_deref(),
                fields,
                names,
                *descriptors,
                &cx.grids,
                &cx.redistributions,
            )? {
                Some(t) => {
                    if t.outputs.is_empty() {
                        // A Dummy: its `__out` edge and the access node it
                        // alone wrote go (the tasklet only declares fields).
                        let targets: Vec<NodeId> = st
                            .edges
                            .iter()
                            .filter(|e| e.src == id)
                            .map(|e| e.dst)
                            .collect();
                        st.edges.retain(|e| e.src != id);
                        for n in targets {
                            let isolated = !st.edges.iter().any(|e| e.src == n || e.dst == n);
                            if isolated && matches!(st.nodes[n.index()].kind, NodeKind::Access(_)) {
                                dead.push(n);
                            }
                        }
                    }
                    st.nodes[id.index()].kind = NodeKind::Tasklet(t)
                }
                // A node that calls nothing goes, with its edges.
                None => dead.push(id),
            }
            continue;
        }
        if let LibraryKind::Solver { op, lower } = lib.kind {
            let mut b = Builder::new(st, arrays, id, in_map, cx.serial);
            cx.serial += 1;
            if !cx.gpu {
                return Err(b.unsupported(
                    "cuSolverDn on a CPU target (cuSOLVER takes GPU data: use --target cuda)",
                ));
            }
            let t = cusolver::call(&mut b, op, lower)?;
            drop(b);
            st.nodes[id.index()].kind = NodeKind::Tasklet(t);
            continue;
        }
        if cx.blas != Blas::None
            && matches!(
                lib.kind,
                LibraryKind::MatMul { .. }
                    | LibraryKind::Dot
                    | LibraryKind::Gemv { .. }
                    | LibraryKind::Gemm { .. }
            )
            && !blas::is_batched_matmul(st, arrays, id)
        {
            blas_call(st, arrays, id, in_map, cx, &lib.kind)?;
            continue;
        }
        dead.push(id);
        let mut b = Builder::new(st, arrays, id, in_map, cx.serial);
        cx.serial += 1;
        match &lib.kind {
            LibraryKind::Reduce {
                axes,
                wcr,
                identity,
                block,
            } => {
                standard::reduce(&mut b, axes.as_deref(), wcr, identity.as_ref())?;
                if *block && cx.gpu {
                    b.block_wide(wcr)?;
                }
            }
            LibraryKind::Transpose => standard::transpose(&mut b)?,
            LibraryKind::TensorTranspose { axes, alpha, beta } => {
                standard::tensor_transpose(&mut b, axes, alpha, beta)?
            }
            LibraryKind::MatMul { alpha, beta } => blas::matmul(&mut b, alpha, beta)?,
            LibraryKind::Dot => blas::dot(&mut b)?,
            LibraryKind::Gemv {
                alpha,
                beta,
                trans_a,
            } => blas::gemv(&mut b, alpha, beta, *trans_a)?,
            LibraryKind::Gemm {
                alpha,
                beta,
                trans_a,
                trans_b,
            } => blas::gemm(&mut b, alpha, beta, *trans_a, *trans_b)?,
            LibraryKind::Ger { alpha } => blas::ger(&mut b, alpha)?,
            LibraryKind::Axpy { a } => blas::axpy(&mut b, a)?,
            LibraryKind::BatchedMatMul { alpha, beta } => {
                blas::batched_matmul(&mut b, alpha, beta)?
            }
            LibraryKind::Einsum { spec, alpha, beta } => einsum::einsum(&mut b, spec, alpha, beta)?,
            LibraryKind::TensorDot {
                left_axes,
                right_axes,
                permutation,
            } => linalg::tensordot(&mut b, left_axes, right_axes, permutation.as_deref())?,
            LibraryKind::Fft { inverse, factor } => fft::dft(&mut b, *inverse, factor)?,
            LibraryKind::ReduceWithSkipValues {
                wcr,
                identity,
                init,
                input_conn,
                output_conn,
                mask_conn,
            } => gt4py::reduce_with_skip_values(
                &mut b,
                wcr,
                identity,
                init,
                [input_conn, mask_conn, output_conn],
            )?,
            LibraryKind::Mpi { .. } | LibraryKind::Solver { .. } => {
                unreachable!("expanded above")
            }
        }
        b.finish()?;
    }
    st.remove_nodes(&dead);
    Ok(())
}

/// Replaces BLAS node `id` by a tasklet calling the library.
fn blas_call(
    st: &mut State,
    arrays: &mut NameMap<DataDesc>,
    id: NodeId,
    in_map: bool,
    cx: &mut Cx,
    kind: &LibraryKind,
) -> Result<()> {
    let mut b = Builder::new(st, arrays, id, in_map, cx.serial);
    cx.serial += 1;
    let call = match kind {
        LibraryKind::MatMul { alpha, beta } => blascall::matmul(&mut b, cx.blas, alpha, beta)?,
        LibraryKind::Dot => blascall::dot(&mut b, cx.blas)?,
        LibraryKind::Gemv {
            alpha,
            beta,
            trans_a,
        } => blascall::gemv(&mut b, cx.blas, alpha, beta, *trans_a)?,
        LibraryKind::Gemm {
            alpha,
            beta,
            trans_a,
            trans_b,
        } => blascall::gemm(&mut b, cx.blas, alpha, beta, *trans_a, *trans_b)?,
        _ => unreachable!("not a BLAS node"),
    };
    drop(b);
    for e in st.edges.iter_mut() {
        if e.dst == id
            && let Some((_, new)) = call
                .renamed_inputs
                .iter()
                .find(|(old, _)| e.dst_conn.as_deref() == Some(old))
        {
            e.dst_conn = Some(new.clone());
        }
        if e.src == id && call.drop_out_wcr {
            e.memlet.wcr = None;
        }
    }
    st.nodes[id.index()].kind = NodeKind::Tasklet(call.tasklet);
    cx.calls += 1;
    Ok(())
}

/// True if a tasklet of the SDFG or of an SDFG nested in it calls into the
/// DaCe library environment `env` (a dotted class name, e.g. cuBLAS's or MPI's).
pub fn environment_in(sdfg: &Sdfg, env: &str) -> bool {
    let mut found = false;
    sdfg.for_each_sdfg(&mut |s| {
        each_node(&s.body, &mut |n| {
            found |=
                matches!(&n.kind, NodeKind::Tasklet(t) if t.environments.iter().any(|e| e == env));
        })
    });
    found
}

#[cfg(test)]
mod mpi_tests;
#[cfg(test)]
mod tests;
