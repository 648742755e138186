//! The expansion leaves no library node, keeps the dataflow well formed,
//! and puts the work of every node in parallel maps (GPU kernels where the
//! data lives on the device), never in one thread whose loop grows with the
//! input.

use std::path::PathBuf;

use super::*;

fn load(case: &str) -> Sdfg {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/corpus")
        .join(case)
        .join("program.sdfg");
    crate::driver::load_valid(&p).expect("fixture loads")
}

fn states(r: &Region, out: &mut Vec<State>) {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => {
                for n in &st.nodes {
                    if let NodeKind::Nested(ns) = &n.kind {
                        states(&ns.sdfg.body, out);
                    }
                }
                out.push(st.clone());
            }
            BlockKind::Region(inner) => states(inner, out),
            BlockKind::Conditional(brs) => brs.iter().for_each(|(_, b)| states(b, out)),
            _ => {}
        }
    }
}

fn all_states(sdfg: &Sdfg) -> Vec<State> {
    let mut out = Vec::new();
    states(&sdfg.body, &mut out);
    out
}

/// Every library fixture: no library node is left, every edge and scope
/// points to a node, map entries and exits are paired, and the dataflow is
/// acyclic.
#[test]
fn every_library_fixture_expands_to_plain_dataflow() {
    for case in [
        "libnode_dot",
        "libnode_gemv",
        "libnode_gemm",
        "libnode_ger_axpy",
        "libnode_transpose",
        "libnode_reduce_ops",
        "libnode_tensordot",
        "libnode_einsum",
        "libnode_batched_matmul",
        "libnode_fft",
        "matmul_libnode",
        "reduce_libnode",
        "softmax",
        "atax",
    ] {
        let mut sdfg = load(case);
        let before = all_states(&sdfg)
            .iter()
            .flat_map(|s| s.nodes.iter())
            .filter(|n| matches!(n.kind, NodeKind::Library(_)))
            .count();
        assert!(before > 0, "{case} has library nodes");
        expand(&mut sdfg, crate::options::Blas::None).unwrap_or_else(|e| panic!("{case}: {e}"));
        for st in all_states(&sdfg) {
            let n = st.nodes.len() as u32;
            for node in &st.nodes {
                assert!(!matches!(node.kind, NodeKind::Library(_)), "{case}");
                if let Some(s) = node.scope {
                    assert!(
                        matches!(st.nodes[s.index()].kind, NodeKind::MapEntry(_)),
                        "{case}"
                    );
                }
            }
            for (i, node) in st.nodes.iter().enumerate() {
                if let NodeKind::MapEntry(m) = &node.kind {
                    assert!(
                        matches!(st.nodes[m.exit.index()].kind,
                            NodeKind::MapExit { entry } if entry.index() == i),
                        "{case}"
                    );
                }
            }
            for e in &st.edges {
                assert!(e.src.0 < n && e.dst.0 < n, "{case}");
            }
            assert!(st.topological_order().is_some(), "{case}");
        }
    }
}

/// Moves every container to GPU memory (as `apply_gpu_transformations` does).
fn on_gpu(sdfg: &mut Sdfg) {
    for d in sdfg.arrays.values_mut() {
        d.storage = Storage::GpuGlobal;
    }
}

fn maps(sdfg: &Sdfg) -> Vec<(MapEntry, Option<NodeId>)> {
    all_states(sdfg)
        .into_iter()
        .flat_map(|st| {
            st.nodes
                .into_iter()
                .filter_map(|n| match n.kind {
                    NodeKind::MapEntry(m) => Some((m, n.scope)),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// On GPU data, a top-level node's work is a parallel map over its output
/// (a kernel); reductions to one value are parallel maps that combine
/// atomically; only reductions inside such a map are sequential.
#[test]
fn on_gpu_data_the_work_is_in_parallel_maps() {
    for case in ["libnode_gemm", "libnode_gemv", "libnode_reduce_ops"] {
        let mut sdfg = load(case);
        on_gpu(&mut sdfg);
        expand(&mut sdfg, crate::options::Blas::None).unwrap();
        for (m, scope) in maps(&sdfg) {
            if scope.is_none() {
                assert_eq!(m.schedule, Schedule::GpuDevice, "{case}: {}", m.label);
            } else {
                assert_eq!(m.schedule, Schedule::Sequential, "{case}: {}", m.label);
            }
        }
    }
    // A dot product of GPU vectors: one parallel map with write-conflict resolution.
    let mut sdfg = load("libnode_dot");
    on_gpu(&mut sdfg);
    expand(&mut sdfg, crate::options::Blas::None).unwrap();
    let top: Vec<_> = maps(&sdfg)
        .into_iter()
        .filter(|(m, s)| s.is_none() && m.label.contains("reduce"))
        .collect();
    assert!(top.len() >= 3, "{top:?}");
    assert!(top.iter().all(|(m, _)| m.schedule == Schedule::GpuDevice));
}

/// On the CPU the output loops are parallel maps and the reductions inside
/// them sequential, in a register.
#[test]
fn on_the_cpu_reductions_run_in_registers() {
    let mut sdfg = load("libnode_gemm");
    expand(&mut sdfg, crate::options::Blas::None).unwrap();
    let accs: Vec<&String> = sdfg
        .arrays
        .iter()
        .filter(|(_, d)| d.storage == Storage::Register && d.kind == DataKind::Scalar)
        .map(|(k, _)| k)
        .collect();
    assert_eq!(accs.len(), 3, "{accs:?}");
    for (m, scope) in maps(&sdfg) {
        let want = if scope.is_none() {
            Schedule::Default
        } else {
            Schedule::Sequential
        };
        assert_eq!(m.schedule, want, "{}", m.label);
    }
}

#[test]
fn identities_fit_the_output_type() {
    use super::build::identity_value;
    let lowest = identity_value(&Expr::Float(-1.7976931348623157e308), DType::Int32);
    assert_eq!(lowest, Expr::Int(i32::MIN as i64));
    let highest = identity_value(&Expr::Float(f64::INFINITY), DType::UInt8);
    assert_eq!(highest, Expr::Int(255));
    assert_eq!(
        identity_value(&Expr::Float(0.0), DType::Int64),
        Expr::Int(0)
    );
    assert_eq!(
        identity_value(&Expr::Float(-3.4e38), DType::Float32),
        Expr::Float(-3.4e38)
    );
    // i64::MIN is written so that C++ reads it without overflow.
    assert_eq!(
        identity_value(&Expr::Float(-1e300), DType::Int64),
        Expr::bin(BinaryOp::Sub, Expr::Int(-i64::MAX), Expr::Int(1))
    );
}

/// What does not fit is refused by name, at the node: a batched (3-D) by
/// 2-D matrix product into a 2-D output.
#[test]
fn a_batched_matmul_without_batched_output_is_refused_at_the_node() {
    let mut sdfg = load("matmul_libnode");
    let a = sdfg.arrays.get_mut("A").unwrap();
    a.shape.insert(0, Expr::Int(2));
    a.strides.insert(0, Expr::sym("M * K"));
    a.offset.insert(0, Expr::Int(0));
    fn widen(r: &mut Region) {
        for b in &mut r.blocks {
            if let BlockKind::State(st) = &mut b.kind {
                for e in &mut st.edges {
                    if e.memlet.data.as_deref() == Some("A")
                        && let Some(s) = &mut e.memlet.subset
                    {
                        s.insert(
                            0,
                            RangeDim {
                                start: Expr::Int(0),
                                end: Expr::Int(1),
                                step: Expr::Int(1),
                                tile: Expr::Int(1),
                            },
                        );
                    }
                }
            }
        }
    }
    widen(&mut sdfg.body);
    let err = expand(&mut sdfg, crate::options::Blas::None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("batched MatMul of 3-D by 2-D operands into a 2-D output"),
        "{err}"
    );
    assert!(err.contains("/nodes/"), "{err}");
}

fn load_gt4py(case: &str, variant: &str) -> Sdfg {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/gt4py")
        .join(case)
        .join(variant);
    crate::driver::load_valid(&p).expect("fixture loads")
}

fn skip_value_nodes(sdfg: &Sdfg) -> Vec<LibraryKind> {
    all_states(sdfg)
        .into_iter()
        .flat_map(|st| st.nodes)
        .filter_map(|n| match n.kind {
            NodeKind::Library(l) => Some(l.kind),
            _ => None,
        })
        .filter(|k| matches!(k, LibraryKind::ReduceWithSkipValues { .. }))
        .collect()
}

/// gt4py's unoptimised SDFGs reduce over neighbor tables with its own
/// `ReduceWithSkipValues`: every property is read, and the expansion is a
/// sequential register loop over the (constant) neighbors inside gt4py's
/// parallel map, on the CPU and on GPU data alike.
#[test]
fn gt4py_reduce_with_skip_values_expands_inside_the_parallel_map() {
    let sdfg = load_gt4py("vertex_cell_skip_reduce", "cpu_noopt.sdfg");
    let nodes = skip_value_nodes(&sdfg);
    assert_eq!(nodes.len(), 2, "{nodes:?}");
    for k in &nodes {
        let LibraryKind::ReduceWithSkipValues {
            wcr,
            init,
            input_conn,
            output_conn,
            mask_conn,
            ..
        } = k
        else {
            unreachable!()
        };
        assert!(matches!(wcr.kind, WcrKind::Sum | WcrKind::Min), "{wcr:?}");
        assert!(!matches!(init, Expr::Sym(_)), "{init:?}");
        assert_eq!(
            (
                input_conn.as_str(),
                output_conn.as_str(),
                mask_conn.as_str()
            ),
            ("_in", "_out", "_mask")
        );
    }
    for gpu in [false, true] {
        let mut sdfg = sdfg.clone();
        if gpu {
            on_gpu(&mut sdfg);
        }
        expand(&mut sdfg, crate::options::Blas::None).unwrap();
        assert!(skip_value_nodes(&sdfg).is_empty());
        let reduce: Vec<_> = maps(&sdfg)
            .into_iter()
            .filter(|(m, _)| m.label.starts_with("reduce_with_skip_values"))
            .collect();
        assert_eq!(reduce.len(), 2, "{reduce:?}");
        for (m, scope) in reduce {
            assert!(scope.is_some(), "{}", m.label);
            assert_eq!(m.schedule, Schedule::Sequential, "{}", m.label);
        }
        for st in all_states(&sdfg) {
            assert!(st.topological_order().is_some());
        }
    }
}

/// A neighbor table whose neighbor extent is not a constant is refused at
/// the node (gt4py's own validation requires a constant).
#[test]
fn a_skip_value_reduction_over_a_symbolic_neighbor_extent_is_refused() {
    let mut sdfg = load_gt4py("vertex_cell_skip_reduce", "cpu_noopt.sdfg");
    sdfg.arrays.get_mut("gt_conn_V2C").unwrap().shape[1] = Expr::sym("N");
    let err = expand(&mut sdfg, crate::options::Blas::None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("neighbor extent is not a constant"), "{err}");
    assert!(err.contains("/nodes/"), "{err}");
}

/// The C++ code of every tasklet of the SDFG (top level).
fn tasklet_code(sdfg: &Sdfg) -> Vec<String> {
    all_states(sdfg)
        .into_iter()
        .flat_map(|st| st.nodes)
        .filter_map(|n| match n.kind {
            NodeKind::Tasklet(t) => Some(t.code.code),
            _ => None,
        })
        .collect()
}

/// `--blas openblas`: every BLAS node of the library fixtures becomes one
/// CBLAS call; transposed operands and the stored layout give the flags.
#[test]
fn blas_nodes_become_cblas_calls() {
    for (case, calls) in [
        ("libnode_gemm", 3),
        ("libnode_gemv", 3),
        ("libnode_dot", 4),
        ("matmul_libnode", 1),
        ("atax", 2),
    ] {
        let mut sdfg = load(case);
        assert!(expand(&mut sdfg, crate::options::Blas::Openblas).unwrap());
        let code = tasklet_code(&sdfg);
        let n = code.iter().filter(|c| c.contains("cblas_")).count();
        assert_eq!(n, calls, "{case}: {code:?}");
    }
    let mut sdfg = load("libnode_gemm");
    expand(&mut sdfg, crate::options::Blas::Openblas).unwrap();
    let code = tasklet_code(&sdfg).join("\n");
    // C2 = 2 A @ Bt^T + 0.5 C2; C3 += A^T @ B2 (an accumulating output: beta 1).
    assert!(
        code.contains("cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, double(2.0)"),
        "{code}"
    );
    assert!(code.contains("cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, N, M, double(1), _a, K, _b, N, double(1)"), "{code}");
}

/// What a BLAS call cannot express is refused by name: a matrix without a
/// unit stride, operands of different types, types BLAS has no routine for.
#[test]
fn blas_refuses_what_a_call_cannot_express() {
    let blas = crate::options::Blas::Openblas;
    let mut sdfg = load("libnode_gemm");
    let a = sdfg.arrays.get_mut("A").unwrap();
    a.strides = vec![
        Expr::bin(BinaryOp::Mul, Expr::Int(2), Expr::sym("K")),
        Expr::Int(2),
    ];
    let err = expand(&mut sdfg, blas).unwrap_err().to_string();
    assert!(err.contains("has no unit stride"), "{err}");
    assert!(err.contains("/nodes/"), "{err}");

    let mut sdfg = load("libnode_gemm");
    sdfg.arrays.get_mut("B").unwrap().dtype = DType::Float32;
    let err = expand(&mut sdfg, blas).unwrap_err().to_string();
    assert!(err.contains("operands of different types"), "{err}");

    let mut sdfg = load("libnode_gemm");
    for n in ["A", "B", "C1", "Bt", "C2", "B2", "C3"] {
        sdfg.arrays.get_mut(n).unwrap().dtype = DType::Int32;
    }
    let err = expand(&mut sdfg, blas).unwrap_err().to_string();
    assert!(err.contains("BLAS has no int32 routines"), "{err}");

    let mut sdfg = load("libnode_gemm");
    let err = expand(&mut sdfg, crate::options::Blas::Hipblas)
        .unwrap_err()
        .to_string();
    assert!(err.contains("--blas hipblas: not implemented"), "{err}");
}

fn load_gpu(case: &str) -> Sdfg {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/corpus")
        .join(case)
        .join("program.gpu.sdfg");
    crate::driver::load_valid(&p).expect("fixture loads")
}

/// `--blas cublas`: the BLAS nodes of GPU data become cuBLAS calls of the
/// column-major transpose (operands swapped, flags of the CBLAS call), in
/// DaCe's cuBLAS environment, with host alpha and beta.
#[test]
fn blas_nodes_on_device_data_become_cublas_calls() {
    let cublas = crate::options::Blas::Cublas;
    let mut sdfg = load_gpu("libnode_gemm");
    assert!(expand(&mut sdfg, cublas).unwrap());
    let code = tasklet_code(&sdfg).join("\n");
    // C2 = 2 A @ Bt^T + 0.5 C2 is C2^T = Bt A^T column-major: Bt's memory
    // is Bt^T there (OP_T), A's is A^T (OP_N).
    assert!(
        code.contains("cublasDgemm(__dace_cublas_handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &__alpha, _b, K, _a, K, &__beta, _c, N)"),
        "{code}"
    );
    assert!(code.contains("CUBLAS_POINTER_MODE_HOST"), "{code}");
    let envs: Vec<Vec<String>> = all_states(&sdfg)
        .into_iter()
        .flat_map(|st| st.nodes)
        .filter_map(|n| match n.kind {
            NodeKind::Tasklet(t) if t.code.code.contains("cublasDgemm") => Some(t.environments),
            _ => None,
        })
        .collect();
    assert_eq!(envs.len(), 3);
    assert!(
        envs.iter()
            .all(|e| e == &[super::blascall::CUBLAS_ENVIRONMENT.to_string()])
    );
    let mut sdfg = load_gpu("libnode_gemv");
    expand(&mut sdfg, cublas).unwrap();
    let code = tasklet_code(&sdfg).join("\n");
    assert!(
        code.contains("cublasDgemv(__dace_cublas_handle, CUBLAS_OP_T, "),
        "{code}"
    );
}

/// `--blas cublas` refuses by name host operands, BLAS nodes inside maps
/// (a call per iteration from device code) and types without s/d routines.
#[test]
fn blas_cublas_refuses_host_operands_and_nodes_in_maps() {
    let cublas = crate::options::Blas::Cublas;
    let mut sdfg = load("libnode_gemm");
    let err = expand(&mut sdfg, cublas).unwrap_err().to_string();
    assert!(err.contains("--blas cublas: operand"), "{err}");
    assert!(err.contains("is in host memory"), "{err}");
    assert!(err.contains("/nodes/"), "{err}");

    let mut sdfg = load_gpu("libnode_dot");
    let err = expand(&mut sdfg, cublas).unwrap_err().to_string();
    assert!(err.contains("inside a map"), "{err}");

    let mut sdfg = load_gpu("libnode_gemm");
    for d in sdfg.arrays.values_mut() {
        d.dtype = DType::Complex128;
    }
    let err = expand(&mut sdfg, cublas).unwrap_err().to_string();
    assert!(err.contains("complex128 operands"), "{err}");
}

fn library_kinds(sdfg: &Sdfg) -> Vec<LibraryKind> {
    all_states(sdfg)
        .iter()
        .flat_map(|s| s.nodes.iter())
        .filter_map(|n| match &n.kind {
            NodeKind::Library(l) => Some(l.kind.clone()),
            _ => None,
        })
        .collect()
}

/// Sets the alpha and beta of every Einsum node labelled `label`.
fn set_einsum(sdfg: &mut Sdfg, label: &str, a: Expr, b: Expr) {
    fn walk(r: &mut Region, label: &str, a: &Expr, b: &Expr) {
        for blk in &mut r.blocks {
            if let BlockKind::State(st) = &mut blk.kind {
                for n in &mut st.nodes {
                    if n.label == label
                        && let NodeKind::Library(l) = &mut n.kind
                        && let LibraryKind::Einsum { alpha, beta, .. } = &mut l.kind
                    {
                        *alpha = a.clone();
                        *beta = b.clone();
                    }
                }
            }
        }
    }
    walk(&mut sdfg.body, label, &a, &b);
}

#[test]
fn einsum_strings_parse_as_dace_reads_them() {
    use super::einsum::Spec;
    let s = Spec::parse("ij,jk->ik").unwrap();
    assert_eq!(s.inputs, vec![vec!['i', 'j'], vec!['j', 'k']]);
    assert_eq!(s.output, vec!['i', 'k']);
    // Without '->': the sorted indices no later term repeats.
    assert_eq!(Spec::parse("jk,ij").unwrap().output, vec!['i', 'k']);
    assert_eq!(Spec::parse("ij,ik,jl").unwrap().output, vec!['k', 'l']);
    assert_eq!(Spec::parse("i,j->ji").unwrap().bmm(), Some((false, true)));
    assert_eq!(
        Spec::parse("bik,bkj->bij").unwrap().bmm(),
        Some((true, true))
    );
    assert_eq!(Spec::parse("i,i->").unwrap().bmm(), Some((false, false)));
    assert_eq!(Spec::parse("ij,jk,kl->il").unwrap().bmm(), None);
    assert!(Spec::parse("ij,jk->ix").is_err());
    assert!(Spec::parse("i j->i").is_err());
    assert!(Spec::parse("ij->ii").is_err());
}

/// The fixture's Einsum nodes expand; where DaCe's own expansion drops
/// alpha or beta, the node is refused by name instead.
#[test]
fn einsum_refuses_what_dace_computes_otherwise() {
    let sdfg = load("libnode_einsum");
    assert!(
        library_kinds(&sdfg)
            .iter()
            .all(|k| matches!(k, LibraryKind::Einsum { .. }))
    );
    // A map without summed indices (DaCe's expansion overwrites beta * out).
    let mut s = sdfg.clone();
    set_einsum(&mut s, "diagonal", Expr::Int(1), Expr::Float(1.0));
    let err = expand(&mut s, crate::options::Blas::None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'ii->i' with beta and no summed index"),
        "{err}"
    );
    assert!(err.contains("library node 'diagonal'"), "{err}");
    // Alpha and beta on a matrix product are kept: out = 2 * A @ B + out.
    let mut s = sdfg.clone();
    set_einsum(&mut s, "outer", Expr::Float(2.0), Expr::Float(1.0));
    expand(&mut s, crate::options::Blas::None).unwrap();
}

/// A batched product with alpha or beta is refused (DaCe's pure
/// BatchedMatMul ignores them); without, it is one parallel map over the
/// batch and the output matrix with a sequential sum inside.
#[test]
fn batched_matmul_is_a_map_over_batch_and_matrix() {
    let mut sdfg = load("libnode_batched_matmul");
    expand(&mut sdfg, crate::options::Blas::None).unwrap();
    let three: Vec<_> = maps(&sdfg)
        .into_iter()
        .filter(|(m, s)| s.is_none() && m.params.len() == 3)
        .collect();
    assert!(three.len() >= 3, "{three:?}");
    // --blas openblas leaves batched products to the maps.
    let mut sdfg = load("libnode_batched_matmul");
    expand(&mut sdfg, crate::options::Blas::Openblas).unwrap();
    let mut sdfg = load("libnode_batched_matmul");
    fn scale(r: &mut Region) {
        for blk in &mut r.blocks {
            match &mut blk.kind {
                BlockKind::State(st) => {
                    for n in &mut st.nodes {
                        if let NodeKind::Library(l) = &mut n.kind
                            && let LibraryKind::MatMul { alpha, .. } = &mut l.kind
                        {
                            *alpha = Expr::Float(2.0);
                        }
                        if let NodeKind::Nested(ns) = &mut n.kind {
                            scale(&mut ns.sdfg.body);
                        }
                    }
                }
                BlockKind::Region(inner) => scale(inner),
                _ => {}
            }
        }
    }
    scale(&mut sdfg.body);
    let err = expand(&mut sdfg, crate::options::Blas::None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("alpha other than 1"), "{err}");
}

/// FFT's factor `1/N` divides in floating point (not C++'s integer `/`);
/// IFFT's twiddle has a positive sine.
#[test]
fn fft_factors_divide_in_floating_point() {
    let mut sdfg = load("libnode_fft");
    let kinds = library_kinds(&sdfg);
    assert!(
        kinds
            .iter()
            .any(|k| matches!(k, LibraryKind::Fft { inverse: true, .. }))
    );
    expand(&mut sdfg, crate::options::Blas::None).unwrap();
    let code = tasklet_code(&sdfg).join("\n");
    assert!(code.contains("sin("), "{code}");
    assert!(!code.contains("1 / N"), "{code}");
}

/// DaCe's cuSolverDn nodes (fixtures/gpu/cusolver: linalg Solve and
/// Cholesky) become one cuSOLVER tasklet each in DaCe's environment on a
/// GPU target, transposing into column-major scratch as DaCe's nested
/// expansions do; on a CPU target they are refused by name.
#[test]
fn cusolver_nodes_become_cusolver_calls_on_gpu_targets() {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/gpu/cusolver/gpu.sdfg");
    let load = || crate::driver::load_valid(&p).expect("fixture loads");
    let mut sdfg = load();
    expand_for(&mut sdfg, crate::options::Blas::None, true).unwrap();
    let mut envs = Vec::new();
    for st in all_states(&sdfg) {
        for n in &st.nodes {
            assert!(!matches!(n.kind, NodeKind::Library(_)), "{}", n.label);
            if let NodeKind::Tasklet(t) = &n.kind {
                envs.extend(t.environments.iter().cloned());
            }
        }
    }
    assert_eq!(envs, vec![cusolver::ENVIRONMENT.to_string(); 2]);
    let code = tasklet_code(&sdfg).join("\n");
    for call in [
        "cusolverDnDgetrf(__dace_cusolverDn_handle, N, N, __ainout, N, __dace_workspace, __pivots, __info)",
        "cusolverDnDgetrs(__dace_cusolverDn_handle, CUBLAS_OP_N, N, R, __ainout, N, __pivots, __binout, N, __info)",
        "cusolverDnZpotrf(__dace_cusolverDn_handle, CUBLAS_FILL_MODE_LOWER, N, __bt, N, __dace_workspace, __dace_workspace_size, __info)",
        "__state->cusolverDn_handle.Get(__dace_cuda_device)",
    ] {
        assert!(code.contains(call), "{call}\n{code}");
    }
    let err = expand(&mut load(), crate::options::Blas::None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("cuSolverDn on a CPU target"), "{err}");
}
