//! The MPI nodes (fixtures/mpi, saved by DaCe 1.0.2 and 2.x): each becomes one C++
//! tasklet of DaCe's MPI environment with the call, counts and datatypes of
//! DaCe's expansion; what is not implemented is refused at the node.

use std::path::PathBuf;

use super::*;

fn text(case: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/mpi")
        .join(format!("{case}.sdfg"));
    std::fs::read_to_string(p).expect("fixture reads")
}

fn load(case: &str) -> Sdfg {
    let sdfg = crate::front::json::load_str(&text(case)).expect("fixture loads");
    crate::valid::validate(&sdfg).expect("fixture is valid");
    sdfg
}

/// Every MPI tasklet's code, in program order (nested SDFGs included).
fn mpi_code(sdfg: &Sdfg) -> Vec<String> {
    let mut out = Vec::new();
    sdfg.for_each_sdfg(&mut |s| {
        each_node(&s.body, &mut |n| {
            if let NodeKind::Tasklet(t) = &n.kind
                && mpi::calls_mpi(t)
            {
                out.push(t.code.code.clone());
            }
        })
    });
    out
}

fn library_nodes(sdfg: &Sdfg) -> usize {
    let mut k = 0;
    sdfg.for_each_sdfg(&mut |s| {
        each_node(&s.body, &mut |n| {
            k += matches!(n.kind, NodeKind::Library(_)) as usize;
        })
    });
    k
}

fn expand_err(sdfg: &mut Sdfg, gpu: bool) -> String {
    expand_for(sdfg, crate::options::Blas::None, gpu)
        .unwrap_err()
        .to_string()
}

#[test]
fn every_mpi_fixture_becomes_mpi_calls() {
    for (case, calls) in [
        (
            "bcast_work",
            &["MPI_Bcast(_outbuffer, static_cast<int>(N), MPI_DOUBLE"][..],
        ),
        (
            "reduce_max",
            &["MPI_Reduce(_inbuffer, _outbuffer, static_cast<int>(N), MPI_FLOAT, MPI_MAX"][..],
        ),
        (
            "allreduce_sum",
            &["MPI_Allreduce(_inbuffer, _outbuffer, static_cast<int>(N), MPI_LONG_LONG, MPI_SUM"][..],
        ),
        (
            "scatter_gather",
            &[
                "MPI_Scatter(_inbuffer, static_cast<int>((N * size) / __sdfgc_size), MPI_DOUBLE, _outbuffer, static_cast<int>(N)",
                "MPI_Gather(_inbuffer, static_cast<int>(N), MPI_DOUBLE, _outbuffer, static_cast<int>((N * size) / __sdfgc_size)",
            ][..],
        ),
        (
            "alltoall_i32",
            &["MPI_Alltoall(_inbuffer, static_cast<int>((N * size) / __sdfgc_size), MPI_INT"][..],
        ),
        (
            "allgather_i64",
            &[
                "MPI_Allgather(_inbuffer, static_cast<int>(N), MPI_LONG_LONG, _outbuffer, static_cast<int>((N * size) / __sdfgc_size)",
            ][..],
        ),
    ] {
        let mut sdfg = load(case);
        assert!(library_nodes(&sdfg) > 0, "{case}");
        expand(&mut sdfg, crate::options::Blas::None).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(library_nodes(&sdfg), 0, "{case}");
        assert!(mpi::mpi_in(&sdfg), "{case}");
        let code = mpi_code(&sdfg).join("\n");
        for call in calls {
            assert!(code.contains(call), "{case}: no {call} in\n{code}");
        }
        assert!(code.contains("MPI_COMM_WORLD"), "{case}");
    }
}

/// A column block of a row-major matrix is one vector datatype (rows of
/// two elements at the matrix's row stride); the contiguous receive is not.
#[test]
fn a_strided_send_is_a_vector_datatype() {
    let mut sdfg = load("ring");
    expand(&mut sdfg, crate::options::Blas::None).unwrap();
    let code = mpi_code(&sdfg).join("\n");
    assert!(
        code.contains("MPI_Type_vector(static_cast<int>(M), static_cast<int>(2), static_cast<int>(N), MPI_DOUBLE"),
        "{code}"
    );
    assert!(
        code.contains("MPI_Send(_buffer, 1, __sdfgc_buffer_type"),
        "{code}"
    );
    assert!(
        code.contains("MPI_Type_free(&__sdfgc_buffer_type)"),
        "{code}"
    );
    assert!(
        code.contains("MPI_Recv(_buffer, static_cast<int>(M * 2), MPI_DOUBLE"),
        "{code}"
    );
}

/// In place (input and output one container): MPI_IN_PLACE.
#[test]
fn an_allreduce_on_one_container_is_in_place() {
    let mut sdfg = load("allreduce_sum");
    for b in &mut sdfg.body.blocks {
        if let BlockKind::State(st) = &mut b.kind {
            for e in &mut st.edges {
                if e.memlet.data.as_deref() == Some("outbuf") {
                    e.memlet.data = Some("inbuf".into());
                }
            }
        }
    }
    expand(&mut sdfg, crate::options::Blas::None).unwrap();
    let code = mpi_code(&sdfg).join("\n");
    assert!(
        code.contains("MPI_Allreduce(MPI_IN_PLACE, _outbuffer"),
        "{code}"
    );
}

#[test]
fn a_buffer_without_an_mpi_datatype_is_refused() {
    let mut sdfg = load("allreduce_sum");
    for d in ["inbuf", "outbuf"] {
        sdfg.arrays.get_mut(d).unwrap().dtype = DType::Float16;
    }
    let err = expand_err(&mut sdfg, false);
    assert!(err.contains("no MPI datatype"), "{err}");
    assert!(err.contains("float16"), "{err}");
    assert!(err.contains("/nodes/"), "{err}");
}

fn set_mpi(sdfg: &mut Sdfg, f: &dyn Fn(&mut LibraryKind)) {
    for b in &mut sdfg.body.blocks {
        if let BlockKind::State(st) = &mut b.kind {
            for n in &mut st.nodes {
                if let NodeKind::Library(l) = &mut n.kind {
                    f(&mut l.kind);
                }
            }
        }
    }
}

#[test]
fn an_unknown_grid_an_unknown_op_and_a_request_of_another_type_are_refused() {
    let mut sdfg = load("reduce_max");
    set_mpi(&mut sdfg, &|k| {
        if let LibraryKind::Mpi { grid, .. } = k {
            *grid = Some("pgrid".into());
        }
    });
    let err = expand_err(&mut sdfg, false);
    assert!(err.contains("process grid 'pgrid'"), "{err}");
    assert!(err.contains("does not declare"), "{err}");

    let mut sdfg = load("reduce_max");
    set_mpi(&mut sdfg, &|k| {
        if let LibraryKind::Mpi { op, .. } = k {
            *op = Some("MPI_SUM); abort(".into());
        }
    });
    let err = expand_err(&mut sdfg, false);
    assert!(err.contains("reduction operator"), "{err}");

    // Waitall's requests must be MPI_Request elements.
    let t = text("ring_nb").replace(r#""ctype": "MPI_Request""#, r#""ctype": "pyobject""#);
    let mut sdfg = crate::front::json::load_str(&t).expect("loads");
    let err = expand_err(&mut sdfg, false);
    assert!(err.contains("must be of type MPI_Request"), "{err}");
}

#[test]
fn mpi_nodes_on_a_gpu_target_are_refused() {
    let mut sdfg = load("allgather_i64");
    let err = expand_err(&mut sdfg, true);
    assert!(err.contains("MPI Allgather on a GPU target"), "{err}");
}

/// An MPI node class sdfgc does not know is refused by name when the SDFG
/// is read.
#[test]
fn an_unknown_mpi_node_is_refused_by_name() {
    let t = text("allgather_i64").replace(
        "dace.libraries.mpi.nodes.allgather.Allgather",
        "dace.libraries.mpi.nodes.allgather.Allgatherv",
    );
    let err = crate::front::json::load_str(&t).unwrap_err().to_string();
    assert!(err.contains("Allgatherv"), "{err}");
    assert!(err.contains("not implemented"), "{err}");
}

/// Grids, subarrays, requests and redistribution: the calls DaCe's
/// expansions make, on the grid's communicator and the state's datatypes;
/// the Dummy nodes' fields become state fields.
#[test]
fn grids_requests_subarrays_and_redistribution_become_mpi_calls() {
    for (case, calls) in [
        (
            "ring_nb",
            &[
                "MPI_Isend(_buffer, static_cast<int>(N), MPI_DOUBLE",
                "MPI_Irecv(_buffer, static_cast<int>(N), MPI_DOUBLE",
                "MPI_Waitall(static_cast<int>(2), const_cast<MPI_Request *>(_request)",
            ][..],
        ),
        (
            "grid_bcast",
            &["__state->__pgrid_comm", "__state->__pgrid_1_comm"][..],
        ),
        (
            "block_scatter_gather",
            &[
                "MPI_Scatterv(_inp_buffer, __state->__subarray_counts",
                "MPI_Gatherv(_inp_buffer",
            ][..],
        ),
        (
            "redistribute_2d",
            &["MPI_Isend(_inp_buffer, 1, __state->__rdistrarray_send_types[__idx]"][..],
        ),
    ] {
        let mut sdfg = load(case);
        expand(&mut sdfg, crate::options::Blas::None).expect("expands");
        let code = mpi_code(&sdfg).join("\n");
        for c in calls {
            assert!(code.contains(c), "{case}: no '{c}' in\n{code}");
        }
        assert_eq!(library_nodes(&sdfg), 0, "{case}");
    }
    let mut sdfg = load("grid_bcast");
    expand(&mut sdfg, crate::options::Blas::None).expect("expands");
    let fields = mpi::declared_fields(&sdfg);
    assert!(
        fields.iter().any(|f| f == "MPI_Comm __pgrid_comm;"),
        "{fields:?}"
    );
}

/// DaCe 2.x (`<case>.v2.sdfg`): process grids, subarrays and
/// redistributions are `_arrays` descriptors read on connectors; the calls
/// use the grid's communicator field `<grid>` and the same datatypes.
#[test]
fn dace_2_descriptors_become_the_same_mpi_calls() {
    for (case, descs, calls) in [
        (
            "grid_bcast.v2",
            &["grid", "rows"][..],
            &[
                "MPI_Bcast(_outbuffer, static_cast<int>(N), MPI_DOUBLE, static_cast<int>(_root), __state->grid);",
                "MPI_Bcast(_outbuffer, static_cast<int>(M), MPI_LONG_LONG, static_cast<int>(_root), __state->rows);",
            ][..],
        ),
        (
            "block_scatter_gather.v2",
            &["grid", "__tmp0", "__tmp1"][..],
            &[
                "if (__state->grid_valid) {\n    MPI_Scatterv(_inp_buffer, __state->__tmp0_counts, __state->__tmp0_displs, __state->__tmp0, _out_buffer",
                "__state->__tmp1_counts, __state->__tmp1_displs, __state->__tmp1, 0, __state->grid);",
            ][..],
        ),
        (
            "redistribute_2d.v2",
            &["a_grid", "b_grid", "a_arr", "b_arr", "__tmp0"][..],
            &[
                "MPI_Isend(_inp_buffer, 1, __state->__tmp0_send_types[__idx]",
                "if (__state->a_grid_valid)",
                "if (__state->b_grid_valid)",
            ][..],
        ),
    ] {
        let mut sdfg = load(case);
        // Descriptors are no containers: nothing to allocate or pass.
        for &d in descs {
            assert!(!sdfg.arrays.contains_key(d), "{case}: '{d}' is a container");
        }
        expand(&mut sdfg, crate::options::Blas::None).expect("expands");
        let code = mpi_code(&sdfg).join("\n");
        for c in calls {
            assert!(code.contains(c), "{case}: no '{c}' in\n{code}");
        }
        assert!(!code.contains("_comm"), "{case}: a 1.0.2 field in\n{code}");
        assert_eq!(library_nodes(&sdfg), 0, "{case}");
    }
    let sdfg = load("redistribute_2d.v2");
    assert_eq!(
        sdfg.redistributions.get("__tmp0"),
        Some(&("a_grid".to_string(), "b_grid".to_string()))
    );
}

/// A DaCe 2.x grid the Dummy nodes do not declare (`MPI_Comm <grid>;`), a
/// descriptor on a connector of another kind, and a descriptor read by
/// anything but an MPI node are refused by name.
#[test]
fn dace_2_descriptors_misused_are_refused_by_name() {
    // The grid's fields renamed: no `MPI_Comm rows;`.
    let t = text("grid_bcast.v2").replace("\"MPI_Comm rows;\"", "\"MPI_Comm rows_x;\"");
    let mut sdfg = crate::front::json::load_str(&t).expect("loads");
    let err = expand_err(&mut sdfg, false);
    assert!(err.contains("process grid 'rows'"), "{err}");
    assert!(err.contains("'MPI_Comm rows;'"), "{err}");

    // A subarray where the grid belongs.
    let t = text("block_scatter_gather.v2").replace(
        r#""dst_connector":"_subarray""#,
        r#""dst_connector":"_bcast_grid""#,
    );
    let err = crate::front::json::load_str(&t).unwrap_err().to_string();
    assert!(err.contains("subarray '__tmp"), "{err}");
    assert!(err.contains("takes a process grid"), "{err}");

    // A grid on a connector no MPI node has.
    let t =
        text("grid_bcast.v2").replace(r#""dst_connector":"_grid""#, r#""dst_connector":"_comm""#);
    let err = crate::front::json::load_str(&t).unwrap_err().to_string();
    assert!(err.contains("process grid 'grid'"), "{err}");
    assert!(err.contains("connector '_comm'"), "{err}");
    assert!(err.contains("/edges/"), "{err}");

    // A grid on a call whose DaCe 2.x expansion ignores it (Allgather).
    let t = text("grid_bcast.v2").replace(
        "dace.libraries.mpi.nodes.bcast.Bcast",
        "dace.libraries.mpi.nodes.allgather.Allgather",
    );
    let err = crate::front::json::load_str(&t).unwrap_err().to_string();
    assert!(
        err.contains("MPI Allgather '_Bcast_' on the process grid 'grid'"),
        "{err}"
    );
    assert!(err.contains("ignores '_grid'"), "{err}");
}
