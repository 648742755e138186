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
//! One file per node family: [`blas`] (MatMul, Dot, Gemv, Gemm, Ger, Axpy),
//! [`standard`] (Reduce, Transpose, TensorTranspose), [`gt4py`] (gt4py's
//! ReduceWithSkipValues); [`build`] holds the common shape.

mod blas;
mod build;
mod gt4py;
mod standard;

use crate::diag::Result;
use crate::ir::*;

use build::Builder;

/// Expands every library node of the SDFG tree in place.
pub fn expand(sdfg: &mut Sdfg) -> Result<()> {
    let mut serial = 0;
    expand_sdfg(sdfg, false, &mut serial)
}

fn expand_sdfg(sdfg: &mut Sdfg, in_map: bool, serial: &mut usize) -> Result<()> {
    expand_region(&mut sdfg.body, &mut sdfg.arrays, in_map, serial)
}

fn expand_region(
    r: &mut Region,
    arrays: &mut NameMap<DataDesc>,
    in_map: bool,
    serial: &mut usize,
) -> Result<()> {
    for b in &mut r.blocks {
        match &mut b.kind {
            BlockKind::State(st) => expand_state(st, arrays, in_map, serial)?,
            BlockKind::Region(inner) => expand_region(inner, arrays, in_map, serial)?,
            BlockKind::Conditional(branches) => {
                for (_, body) in branches {
                    expand_region(body, arrays, in_map, serial)?;
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
    serial: &mut usize,
) -> Result<()> {
    for n in &mut st.nodes {
        let inside = in_map || n.scope.is_some();
        if let NodeKind::Nested(ns) = &mut n.kind {
            expand_sdfg(&mut ns.sdfg, inside, serial)?;
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
    for &id in &libs {
        let NodeKind::Library(lib) = st.nodes[id.index()].kind.clone() else {
            continue;
        };
        let mut b = Builder::new(st, arrays, id, in_map, *serial);
        *serial += 1;
        match &lib.kind {
            LibraryKind::Reduce {
                axes,
                wcr,
                identity,
            } => standard::reduce(&mut b, axes.as_deref(), wcr, identity.as_ref())?,
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
        }
        b.finish()?;
    }
    remove_nodes(st, &libs);
    Ok(())
}

/// Removes `dead` nodes and the edges that still touch them; renumbers the
/// rest (scopes, map entry/exit links, edge ends).
fn remove_nodes(st: &mut State, dead: &[NodeId]) {
    let n = st.nodes.len();
    let mut new_id = vec![None; n];
    let mut k = 0u32;
    for (i, slot) in new_id.iter_mut().enumerate() {
        if !dead.contains(&NodeId(i as u32)) {
            *slot = Some(NodeId(k));
            k += 1;
        }
    }
    let map = |id: NodeId| new_id[id.index()];
    st.edges
        .retain(|e| map(e.src).is_some() && map(e.dst).is_some());
    for e in &mut st.edges {
        e.src = map(e.src).expect("kept");
        e.dst = map(e.dst).expect("kept");
    }
    let old = std::mem::take(&mut st.nodes);
    for (i, mut node) in old.into_iter().enumerate() {
        if new_id[i].is_none() {
            continue;
        }
        node.scope = node.scope.and_then(map);
        match &mut node.kind {
            NodeKind::MapEntry(m) => m.exit = map(m.exit).unwrap_or(m.exit),
            NodeKind::MapExit { entry } => *entry = map(*entry).unwrap_or(*entry),
            _ => {}
        }
        st.nodes.push(node);
    }
}

#[cfg(test)]
mod tests;
