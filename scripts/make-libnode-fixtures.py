#!/usr/bin/env python3
"""Generates fixtures/corpus/libnode_<kind>/: SDFGs made by DaCe 1.0.2 whose
library nodes are saved UNEXPANDED (Dot, MatMul as Gemv/Gemm/Dot, Gemv, Gemm,
Ger, Axpy, Transpose, TensorTranspose, Reduce with every reduction type, with
and without identity), as program.sdfg and program.gpu.sdfg (after
apply_gpu_transformations(): the nodes run on device copies), with inputs, numpy reference outputs and a case.json in
the corpus format (fixtures/corpus/README.md).

Run with DaCe 1.0.2:  /work/venv-dace1/bin/python scripts/make-libnode-fixtures.py [OUTDIR]
(default OUTDIR: fixtures/corpus). The ABI entries are parsed from DaCe's own
generated code; every case is also built and run by DaCe itself (its pure
expansions), and must reproduce the numpy references (`dace_check`).
"""
import copy
import json
import os
import sys
import zlib

import numpy as np
import dace
from dace import Memlet
from dace.libraries import blas, standard

from fixturelib import abi_entry, array_arg, generator_info, out_dir, scratch_dir, write_json

SEED = 20261201
OUT = out_dir(os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'corpus'))


def library_classes(sdfg):
    out = set()
    for n, _ in sdfg.all_nodes_recursive():
        if isinstance(n, dace.nodes.LibraryNode):
            out.add(type(n).__name__)
    return sorted(out)


def dace_check(sdfg, symbols, values, refs, tol):
    """Builds and runs DaCe's own library (pure expansions) on the inputs."""
    s = copy.deepcopy(sdfg)
    for n, _ in s.all_nodes_recursive():
        if isinstance(n, dace.nodes.LibraryNode):
            n.implementation = 'pure' if 'pure' in n.implementations else n.implementation
    prog = s.compile()
    args = {k: v.copy() for k, v in values.items()}
    prog(**args, **symbols)
    res = {}
    for k, ref in refs.items():
        ok = bool(np.allclose(args[k], ref, rtol=tol[0], atol=tol[1]))
        res[k] = {'ok': ok, 'max_abs_err': float(np.max(np.abs(args[k].astype(np.float64) - ref)))}
        assert ok, (sdfg.name, k, args[k], ref)
    return res


def complex_aware(entry, value):
    """A complex array as the corpus stores it: interleaved (real, imag) parts,
    `dtype` of a part with a trailing dimension of 2, and `complex_dtype`."""
    if np.iscomplexobj(value):
        part = np.float64 if value.dtype == np.complex128 else np.float32
        entry.update({'dtype': np.dtype(part).name, 'shape': entry['shape'] + [2], 'complex_dtype': value.dtype.name})
    return entry


def write_case(sdfg, name, description, symbols, values, refs, tol, features, roles=None, gpu_optional=False):
    """values: every array argument (inputs; outputs with their initial contents);
    refs: expected contents of the outputs."""
    roles = roles or {}
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    sdfg.arg_names = list(values)
    sdfg.validate()
    classes = library_classes(sdfg)
    assert classes, name
    sdfg.save(os.path.join(d, 'program.sdfg'))
    args = []
    for n, v in values.items():
        role = roles.get(n, 'out' if n in refs else 'in')
        entry = complex_aware(array_arg(n, v, role), v)
        if role in ('in', 'inout'):
            entry['file'] = f'{n}.in.bin'
            v.tofile(os.path.join(d, entry['file']))
        if n in refs:
            if role == 'out':
                entry['file'] = f'{n}.out.bin'
            else:
                entry['out_file'] = f'{n}.out.bin'
        args.append(entry)
    outputs = []
    for n, ref in refs.items():
        ref.astype(values[n].dtype).tofile(os.path.join(d, f'{n}.out.bin'))
        outputs.append(complex_aware({'name': n, 'file': f'{n}.out.bin', 'dtype': str(values[n].dtype),
                                      'shape': list(ref.shape), 'rtol': tol[0], 'atol': tol[1]}, values[n]))
    # The GPU variant: apply_gpu_transformations() moves the arguments to device copies and gives
    # the library nodes a GPU schedule (DaCe's CUDA code generation checked; no GPU needed).
    abi = {'program.sdfg': abi_entry(sdfg, args, other_exports=True, expand_copy=True)}
    gpu_path = os.path.join(d, 'program.gpu.sdfg')
    try:
        gpu = copy.deepcopy(sdfg)
        gpu.apply_gpu_transformations()
        gpu.simplify()
        gpu.validate()
        gpu_classes = library_classes(gpu)
        assert gpu_classes == classes, (name, gpu_classes)
        abi['program.gpu.sdfg'] = abi_entry(gpu, args, other_exports=True, expand_copy=True)
        gpu.save(gpu_path)
        gpu_status = ('ok: apply_gpu_transformations() + simplify(), library nodes unexpanded on GPU data; '
                      'DaCe code generation checked (not compiled: no GPU)')
    except Exception as e:  # noqa: BLE001 (DaCe's own failure, recorded)
        if not gpu_optional:
            raise
        if os.path.exists(gpu_path):
            os.remove(gpu_path)
        gpu_status = f'not made: DaCe 1.0.2 cannot generate GPU code for it ({type(e).__name__}: {e})'
    case = {
        'name': name,
        'description': description,
        'symbols': symbols,
        'args': args,
        'outputs': outputs,
        'abi': abi,
        'features': ['library_node', 'unexpanded'] + features,
        'library_nodes': classes,
        'variants': {f: True for f in abi},
        'gpu_status': {'program.gpu.sdfg': gpu_status},
        'dace_check': dace_check(sdfg, symbols, values, refs, tol),
        'sdfg_name': sdfg.name,
        'generator': generator_info('scripts/make-libnode-fixtures.py', SEED),
    }
    write_json(os.path.join(d, 'case.json'), case)
    print('wrote', d, classes)


M = dace.symbol('M', dace.int32)
N = dace.symbol('N', dace.int32)
K = dace.symbol('K', dace.int32)


def libnode_dot(rng):
    """Dot products: two vectors (x @ y: MatMul specialised to Dot), strided columns of a
    matrix (np.dot: a Dot node), and a dot per row inside a parallel map (nested SDFG)."""

    @dace.program
    def libnode_dot_program(x: dace.float64[N], y: dace.float64[N], A: dace.float64[M, N], r: dace.float64[3],
                            v: dace.float64[M]):
        r[0] = x @ y
        r[1] = np.dot(A[:, 1], A[:, 2])
        r[2] = np.dot(A[M - 1, :], y)
        for i in dace.map[0:M]:
            v[i] = np.dot(A[i, :], x)

    sdfg = libnode_dot_program.to_sdfg(simplify=True)
    m, n = 23, 17
    x, y, A = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal((m, n))
    r, v = np.zeros(3), np.zeros(m)
    refs = {'r': np.array([x @ y, A[:, 1] @ A[:, 2], A[m - 1, :] @ y]), 'v': A @ x}
    write_case(sdfg, 'libnode_dot', libnode_dot.__doc__, {'M': m, 'N': n}, dict(x=x, y=y, A=A, r=r, v=v), refs,
               (1e-10, 1e-12), ['dot', 'matmul', 'strided', 'nested_sdfg'])


def libnode_gemv(rng):
    """Gemv: A @ x and x @ A (MatMul specialised to Gemv and transposed Gemv), and a Gemv node
    with alpha, beta and an input _y (y = 1.5 * A^T @ w + 0.25 * y), on a strided sub-matrix."""

    sdfg = dace.SDFG('libnode_gemv')
    sdfg.add_array('A', [M, N], dace.float64)
    sdfg.add_array('x', [N], dace.float64)
    sdfg.add_array('w', [M], dace.float64)
    sdfg.add_array('y1', [M], dace.float64)
    sdfg.add_array('y2', [N], dace.float64)
    sdfg.add_array('y3', [N], dace.float64)
    st = sdfg.add_state('matmuls')
    a = st.add_read('A')
    mm1 = blas.MatMul('matvec')
    st.add_edge(a, None, mm1, '_a', Memlet('A[0:M, 0:N]'))
    st.add_edge(st.add_read('x'), None, mm1, '_b', Memlet('x[0:N]'))
    st.add_edge(mm1, '_c', st.add_write('y1'), None, Memlet('y1[0:M]'))
    mm2 = blas.MatMul('vecmat')
    st.add_edge(st.add_read('w'), None, mm2, '_a', Memlet('w[0:M]'))
    st.add_edge(a, None, mm2, '_b', Memlet('A[0:M, 0:N]'))
    st.add_edge(mm2, '_c', st.add_write('y2'), None, Memlet('y2[0:N]'))
    st2 = sdfg.add_state_after(st, 'gemv')
    g = blas.Gemv('gemv', transA=True, alpha=1.5, beta=0.25)
    g.implementation = 'pure'
    # A[1:M, 0:N] is M-1 rows: transposed, its columns are the N outputs.
    st2.add_edge(st2.add_read('A'), None, g, '_A', Memlet('A[1:M, 0:N]'))
    st2.add_edge(st2.add_read('w'), None, g, '_x', Memlet('w[0:M-1]'))
    st2.add_edge(st2.add_read('y3'), None, g, '_y', Memlet('y3[0:N]'))
    st2.add_edge(g, '_y', st2.add_write('y3'), None, Memlet('y3[0:N]'))
    m, n = 19, 24
    A, x, w = rng.standard_normal((m, n)), rng.standard_normal(n), rng.standard_normal(m)
    y3 = rng.standard_normal(n)
    refs = {'y1': A @ x, 'y2': w @ A, 'y3': 1.5 * A[1:, :].T @ w[:m - 1] + 0.25 * y3}
    write_case(sdfg, 'libnode_gemv', libnode_gemv.__doc__, {'M': m, 'N': n},
               dict(A=A, x=x, w=w, y1=np.zeros(m), y2=np.zeros(n), y3=y3), refs, (1e-10, 1e-12),
               ['gemv', 'matmul', 'transpose', 'alpha_beta'], roles={'y3': 'inout'})


def libnode_gemm(rng):
    """Gemm: A @ B (MatMul), and Gemm nodes with transA/transB, alpha and beta: one with an input
    _cin (C2 = 2 * A @ B^T + 0.5 * C2), one accumulating into its output memlet (C3 += A^T @ B2)."""
    sdfg = dace.SDFG('libnode_gemm')
    sdfg.add_array('A', [M, K], dace.float64)
    sdfg.add_array('B', [K, N], dace.float64)
    sdfg.add_array('Bt', [N, K], dace.float64)
    sdfg.add_array('B2', [M, N], dace.float64)
    sdfg.add_array('C1', [M, N], dace.float64)
    sdfg.add_array('C2', [M, N], dace.float64)
    sdfg.add_array('C3', [K, N], dace.float64)
    st = sdfg.add_state('gemm')
    mm = blas.MatMul('matmul')
    st.add_edge(st.add_read('A'), None, mm, '_a', Memlet('A[0:M, 0:K]'))
    st.add_edge(st.add_read('B'), None, mm, '_b', Memlet('B[0:K, 0:N]'))
    st.add_edge(mm, '_c', st.add_write('C1'), None, Memlet('C1[0:M, 0:N]'))
    g = blas.Gemm('gemm_cin', transA=False, transB=True, alpha=2.0, beta=0.5)
    st.add_edge(st.add_read('A'), None, g, '_a', Memlet('A[0:M, 0:K]'))
    st.add_edge(st.add_read('Bt'), None, g, '_b', Memlet('Bt[0:N, 0:K]'))
    st.add_edge(st.add_read('C2'), None, g, '_cin', Memlet('C2[0:M, 0:N]'))
    st.add_edge(g, '_c', st.add_write('C2'), None, Memlet('C2[0:M, 0:N]'))
    st2 = sdfg.add_state_after(st, 'accumulate')
    g2 = blas.Gemm('gemm_acc', transA=True, transB=False, alpha=1.0, beta=1.0, cin=False)
    st2.add_edge(st2.add_read('A'), None, g2, '_a', Memlet('A[0:M, 0:K]'))
    st2.add_edge(st2.add_read('B2'), None, g2, '_b', Memlet('B2[0:M, 0:N]'))
    st2.add_edge(g2, '_c', st2.add_write('C3'), None, Memlet('C3[0:K, 0:N]', wcr='lambda a, b: a + b'))
    m, n, k = 13, 11, 9
    A, B = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    Bt, B2 = rng.standard_normal((n, k)), rng.standard_normal((m, n))
    C2, C3 = rng.standard_normal((m, n)), rng.standard_normal((k, n))
    refs = {'C1': A @ B, 'C2': 2.0 * A @ Bt.T + 0.5 * C2, 'C3': C3 + A.T @ B2}
    write_case(sdfg, 'libnode_gemm', libnode_gemm.__doc__, {'K': k, 'M': m, 'N': n},
               dict(A=A, B=B, Bt=Bt, B2=B2, C1=np.zeros((m, n)), C2=C2, C3=C3), refs, (1e-10, 1e-12),
               ['gemm', 'matmul', 'transpose', 'alpha_beta', 'wcr'], roles={'C2': 'inout', 'C3': 'inout'})


def libnode_ger_axpy(rng):
    """Ger (R = 0.5 * outer(x, y) + A) and Axpy (z = 3 * u + v) nodes added through the SDFG API."""
    sdfg = dace.SDFG('libnode_ger_axpy')
    sdfg.add_array('A', [M, N], dace.float32)
    sdfg.add_array('x', [M], dace.float32)
    sdfg.add_array('y', [N], dace.float32)
    sdfg.add_array('R', [M, N], dace.float32)
    sdfg.add_array('u', [N], dace.float32)
    sdfg.add_array('v', [N], dace.float32)
    sdfg.add_array('z', [N], dace.float32)
    st = sdfg.add_state('ger')
    g = blas.Ger('ger', n=N, m=M, alpha=0.5)
    st.add_edge(st.add_read('A'), None, g, '_A', Memlet('A[0:M, 0:N]'))
    st.add_edge(st.add_read('x'), None, g, '_x', Memlet('x[0:M]'))
    st.add_edge(st.add_read('y'), None, g, '_y', Memlet('y[0:N]'))
    st.add_edge(g, '_res', st.add_write('R'), None, Memlet('R[0:M, 0:N]'))
    ax = blas.Axpy('axpy', a=3, n=N)
    st.add_edge(st.add_read('u'), None, ax, '_x', Memlet('u[0:N]'))
    st.add_edge(st.add_read('v'), None, ax, '_y', Memlet('v[0:N]'))
    st.add_edge(ax, '_res', st.add_write('z'), None, Memlet('z[0:N]'))
    m, n = 14, 21
    f = np.float32
    A, x, y = (rng.standard_normal((m, n)).astype(f), rng.standard_normal(m).astype(f),
               rng.standard_normal(n).astype(f))
    u, v = rng.standard_normal(n).astype(f), rng.standard_normal(n).astype(f)
    refs = {'R': (f(0.5) * np.outer(x, y) + A).astype(f), 'z': (f(3) * u + v).astype(f)}
    write_case(sdfg, 'libnode_ger_axpy', libnode_ger_axpy.__doc__, {'M': m, 'N': n},
               dict(A=A, x=x, y=y, R=np.zeros((m, n), f), u=u, v=v, z=np.zeros(n, f)), refs, (1e-5, 1e-6),
               ['ger', 'axpy', 'float32'])


def libnode_transpose(rng):
    """np.transpose of a matrix (Transpose), of a column block (strided), and of a 3-D tensor
    with a permutation (TensorTranspose)."""

    @dace.program
    def libnode_transpose_program(A: dace.float64[M, N], T: dace.int32[M, N, 4], B: dace.float64[N, M],
                                  C: dace.float64[3, M], U: dace.int32[4, M, N]):
        B[:] = np.transpose(A)
        C[:] = np.transpose(A[:, 1:4])
        U[:] = np.transpose(T, axes=(2, 0, 1))

    sdfg = libnode_transpose_program.to_sdfg(simplify=True)
    m, n = 9, 12
    A = rng.standard_normal((m, n))
    T = rng.integers(-100, 100, size=(m, n, 4)).astype(np.int32)
    refs = {'B': A.T.copy(), 'C': A[:, 1:4].T.copy(), 'U': np.transpose(T, (2, 0, 1)).copy()}
    write_case(sdfg, 'libnode_transpose', libnode_transpose.__doc__, {'M': m, 'N': n},
               dict(A=A, T=T, B=np.zeros((n, m)), C=np.zeros((3, m)), U=np.zeros((4, m, n), np.int32)), refs,
               (0.0, 0.0), ['transpose', 'tensor_transpose', 'strided', 'int32'])


def libnode_reduce_ops(rng):
    """Reduce with every kind: sum, product, min, max over one or several axes of 3-D data,
    float32 and int64, a reduction to one value, and a Reduce node without identity that folds
    into the previous output (DaCe's pure expansion)."""

    @dace.program
    def libnode_reduce_program(A: dace.float32[M, N, K], I: dace.int64[M, N], s: dace.float32[M],
                               p: dace.float32[N, K], mn: dace.int64[N], mx: dace.int64[M], tot: dace.float32[1],
                               big: dace.int64[1]):
        s[:] = np.sum(A, axis=(1, 2))
        p[:] = dace.reduce(lambda a, b: a * b, A, axis=0, identity=1)
        mn[:] = np.min(I, axis=0)
        mx[:] = np.max(I, axis=1)
        tot[0] = np.sum(A)
        big[0] = np.max(I)

    sdfg = libnode_reduce_program.to_sdfg(simplify=True)
    # A Reduce without identity: acc = acc0, then acc[i] += sum_j I[i, j] (the output is read; the copy
    # makes the read visible to apply_gpu_transformations, which then keeps acc on the device).
    sdfg.add_array('acc0', [M], dace.int64)
    sdfg.add_array('acc', [M], dace.int64)
    init = sdfg.add_state_after(sdfg.sink_nodes()[0], 'copy_acc')
    init.add_nedge(init.add_read('acc0'), init.add_write('acc'), Memlet('acc0[0:M]'))
    st = sdfg.add_state_after(init, 'fold')
    r = standard.Reduce('fold_sum', wcr='lambda a, b: a + b', axes=[1], identity=None)
    st.add_node(r)
    st.add_edge(st.add_read('I'), None, r, None, Memlet('I[0:M, 0:N]'))
    st.add_edge(r, None, st.add_write('acc'), None, Memlet('acc[0:M]'))
    m, n, k = 6, 5, 7
    A = rng.uniform(0.5, 1.5, size=(m, n, k)).astype(np.float32)
    I = rng.integers(-1000, 1000, size=(m, n)).astype(np.int64)
    acc0 = rng.integers(-50, 50, size=m).astype(np.int64)
    refs = {'s': A.sum(axis=(1, 2)), 'p': A.prod(axis=0), 'mn': I.min(axis=0), 'mx': I.max(axis=1),
            'tot': np.array([A.sum()], np.float32), 'big': np.array([I.max()]), 'acc': acc0 + I.sum(axis=1)}
    values = dict(A=A, I=I, s=np.zeros(m, np.float32), p=np.zeros((n, k), np.float32), mn=np.zeros(n, np.int64),
                  mx=np.zeros(m, np.int64), tot=np.zeros(1, np.float32), big=np.zeros(1, np.int64), acc0=acc0,
                  acc=np.zeros(m, np.int64))
    write_case(sdfg, 'libnode_reduce_ops', libnode_reduce_ops.__doc__, {'K': k, 'M': m, 'N': n}, values, refs,
               (1e-5, 1e-5), ['reduce', 'float32', 'int64', 'no_identity'])


# ---------------------------------------------------------------------------
# Nodes added with issue 23 part 3 (TensorDot, Einsum, BatchedMatMul, FFT). Each also has a
# program.v2.sdfg: the same builder under DaCe 2.0.0a10 (run this script with DaCe 2 after
# DaCe 1.0.2; it adds the variant to the case written by DaCe 1.0.2).


def libnode_tensordot_build():
    """np.tensordot of 3-D by 3-D float32 tensors over two mode pairs given out of order, of a
    matrix by a 3-D tensor over one mode, and a TensorDot node with an output permutation
    (TensorDot with left_axes, right_axes, permutation; DaCe's pure expansion)."""
    from dace.libraries import linalg

    @dace.program
    def libnode_tensordot_program(A: dace.float32[3, M, 5], B: dace.float32[5, M, 6], C: dace.float32[3, 6],
                                  P: dace.float32[4, 5], D: dace.float32[4, M, 6]):
        C[:] = np.tensordot(A, B, axes=([1, 2], [1, 0]))
        D[:] = np.tensordot(P, B, axes=1)

    sdfg = libnode_tensordot_program.to_sdfg(simplify=True)
    sdfg.add_array('E', [6, 3], dace.float32)
    st = sdfg.add_state_after(sdfg.sink_nodes()[0], 'permuted')
    t = linalg.TensorDot('permuted_dot', left_axes=[1, 2], right_axes=[1, 0], permutation=[1, 0])
    st.add_node(t)
    st.add_edge(st.add_read('A'), None, t, '_left_tensor', Memlet('A[0:3, 0:M, 0:5]'))
    st.add_edge(st.add_read('B'), None, t, '_right_tensor', Memlet('B[0:5, 0:M, 0:6]'))
    st.add_edge(t, '_out_tensor', st.add_write('E'), None, Memlet('E[0:6, 0:3]'))
    # DaCe's configured linalg implementation is OpenBLAS, which TensorDot does not have.
    for n, _ in sdfg.all_nodes_recursive():
        if isinstance(n, linalg.TensorDot):
            n.implementation = 'pure'
    return sdfg


def libnode_tensordot_data(rng):
    m, f = 7, np.float32
    A, B = rng.standard_normal((3, m, 5)).astype(f), rng.standard_normal((5, m, 6)).astype(f)
    P = rng.standard_normal((4, 5)).astype(f)
    C = np.tensordot(A, B, axes=([1, 2], [1, 0]))
    values = dict(A=A, B=B, C=np.zeros((3, 6), f), P=P, D=np.zeros((4, m, 6), f), E=np.zeros((6, 3), f))
    refs = {'C': C, 'D': np.tensordot(P, B, axes=1), 'E': C.T.copy()}
    return {'M': m}, values, refs, (1e-4, 1e-4), ['tensordot', 'float32', 'permutation'], {}


def add_einsum(st, spec, inputs, out, alpha=1.0, beta=0.0, label='einsum'):
    """An Einsum node: inputs as (connector, memlet) in the order given (DaCe's expansion takes
    them in the order of the sorted connector names), out a memlet."""
    e = blas.Einsum(label)
    e.einsum_str, e.alpha, e.beta = spec, alpha, beta
    for conn, _ in inputs:
        e.add_in_connector(conn)
    e.add_out_connector('out')
    st.add_node(e)
    for conn, m in inputs:
        st.add_edge(st.add_read(m.split('[')[0]), None, e, conn, Memlet(m))
    st.add_edge(e, 'out', st.add_write(out.split('[')[0]), None, Memlet(out))
    return e


def libnode_einsum_build():
    """Einsum nodes (the specialize expansion): a matrix product with alpha and beta, whose
    inputs were added in the other order than their connectors sort ('ik,kj->ij': b, then a);
    a partial reduction ('ijk->ik'), an outer product into a transposed output ('i,j->ji'),
    three operands ('ij,jk,kl->il'), a diagonal ('ii->i'), a sum to one value ('ij->'), and an
    implicit output ('ij,jk' is 'ik')."""
    sdfg = dace.SDFG('libnode_einsum')
    for n, shp in dict(A=[M, K], B=[K, N], C=[M, N], T=[M, K, N], R=[M, N], x=[M], y=[N], O=[N, M],
                       S=[N, N], G=[M, N], Q=[N, N], dg=[N], s=[1], I=[M, N]).items():
        sdfg.add_array(n, shp, dace.float64)
    st = sdfg.add_state('einsum')
    add_einsum(st, 'ik,kj->ij', [('b', 'B[0:K, 0:N]'), ('a', 'A[0:M, 0:K]')], 'C[0:M, 0:N]', alpha=2.0, beta=1.0,
               label='gemm_alpha_beta')
    add_einsum(st, 'ijk->ik', [('t', 'T[0:M, 0:K, 0:N]')], 'R[0:M, 0:N]', label='reduce')
    add_einsum(st, 'i,j->ji', [('u', 'x[0:M]'), ('v', 'y[0:N]')], 'O[0:N, 0:M]', label='outer')
    add_einsum(st, 'ij,jk,kl->il', [('p', 'A[0:M, 0:K]'), ('q', 'B[0:K, 0:N]'), ('r', 'S[0:N, 0:N]')],
               'G[0:M, 0:N]', label='three')
    add_einsum(st, 'ii->i', [('d', 'Q[0:N, 0:N]')], 'dg[0:N]', label='diagonal')
    st2 = sdfg.add_state_after(st, 'after')
    add_einsum(st2, 'ij->', [('g', 'C[0:M, 0:N]')], 's[0]', label='total')
    add_einsum(st2, 'ij,jk', [('a', 'A[0:M, 0:K]'), ('b', 'B[0:K, 0:N]')], 'I[0:M, 0:N]', label='implicit')
    return sdfg


def libnode_einsum_data(rng):
    m, n, k = 6, 5, 4
    r = lambda *s: rng.standard_normal(s)
    A, B, C0, T, x, y, S, Q = r(m, k), r(k, n), r(m, n), r(m, k, n), r(m), r(n), r(n, n), r(n, n)
    C = 2.0 * A @ B + C0
    values = dict(A=A, B=B, C=C0, T=T, R=np.zeros((m, n)), x=x, y=y, O=np.zeros((n, m)), S=S, G=np.zeros((m, n)),
                  Q=Q, dg=np.zeros(n), s=np.zeros(1), I=np.zeros((m, n)))
    refs = {'C': C, 'R': T.sum(axis=1), 'O': np.outer(x, y).T.copy(), 'G': A @ B @ S, 'dg': np.diag(Q).copy(),
            's': np.array([C.sum()]), 'I': A @ B}
    return {'K': k, 'M': m, 'N': n}, values, refs, (1e-10, 1e-12), ['einsum', 'alpha_beta'], {'C': 'inout'}


def libnode_batched_matmul_build():
    """Batched matrix products (MatMul of 3-D operands, DaCe's BatchedMatMul): a @ b over a batch,
    a shared 2-D left matrix times a batch (np.matmul broadcasting), a batch of column blocks
    (a strided sub-tensor), and np.einsum('bik,bkj->bij') (a MatMul on views in a nested SDFG)."""

    @dace.program
    def libnode_batched_matmul_program(a: dace.float64[L, M, K], b: dace.float64[L, K, N], w: dace.float64[M, K],
                                       c: dace.float64[L, M, N], d: dace.float64[L, M, N], e: dace.float64[L, M, 3],
                                       f: dace.float64[L, M, N]):
        c[:] = a @ b
        d[:] = w @ b
        e[:] = a @ b[:, :, 1:4]
        f[:] = np.einsum('bik,bkj->bij', a, b)

    return libnode_batched_matmul_program.to_sdfg(simplify=True)


def libnode_batched_matmul_data(rng):
    l, m, n, k = 3, 5, 6, 4
    a, b, w = rng.standard_normal((l, m, k)), rng.standard_normal((l, k, n)), rng.standard_normal((m, k))
    values = dict(a=a, b=b, w=w, c=np.zeros((l, m, n)), d=np.zeros((l, m, n)), e=np.zeros((l, m, 3)),
                  f=np.zeros((l, m, n)))
    refs = {'c': a @ b, 'd': w @ b, 'e': a @ b[:, :, 1:4], 'f': a @ b}
    return {'K': k, 'L': l, 'M': m, 'N': n}, values, refs, (1e-10, 1e-12), ['batched_matmul', 'matmul', 'strided'], {}


def libnode_fft_build():
    """np.fft.fft of complex128 data of symbolic length, of float32 data (complex64 output),
    and np.fft.ifft with the 'ortho' and 'forward' norms (FFT/IFFT nodes with factors;
    DaCe's pure expansion, a direct DFT). The 'ortho' case is complex128 of constant length:
    DaCe 1.0.2's own library returns zeros for it in complex64."""

    @dace.program
    def libnode_fft_program(x: dace.complex128[N], r: dace.float32[12], z: dace.complex128[8], X: dace.complex128[N],
                            Rf: dace.complex64[12], Z: dace.complex128[8], W: dace.complex128[N]):
        X[:] = np.fft.fft(x)
        Rf[:] = np.fft.fft(r)
        Z[:] = np.fft.ifft(z, norm='ortho')
        W[:] = np.fft.ifft(x, norm='forward')

    return libnode_fft_program.to_sdfg(simplify=True)


def libnode_fft_data(rng):
    n, m = 21, 8
    x = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    r = rng.standard_normal(12).astype(np.float32)
    z = rng.standard_normal(m) + 1j * rng.standard_normal(m)
    values = dict(x=x, r=r, z=z, X=np.zeros(n, np.complex128), Rf=np.zeros(12, np.complex64),
                  Z=np.zeros(m, np.complex128), W=np.zeros(n, np.complex128))
    refs = {'X': np.fft.fft(x), 'Rf': np.fft.fft(r).astype(np.complex64),
            'Z': np.fft.ifft(z, norm='ortho'), 'W': np.fft.ifft(x, norm='forward')}
    return {'N': n}, values, refs, (1e-4, 1e-4), ['fft', 'complex'], {}


L = dace.symbol('L', dace.int32)
NEW_CASES = {
    'libnode_tensordot': (libnode_tensordot_build, libnode_tensordot_data),
    'libnode_einsum': (libnode_einsum_build, libnode_einsum_data),
    'libnode_batched_matmul': (libnode_batched_matmul_build, libnode_batched_matmul_data),
    'libnode_fft': (libnode_fft_build, libnode_fft_data),
}


def case_rng(name):
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


def new_case_v1(name):
    build, data = NEW_CASES[name]
    symbols, values, refs, tol, features, roles = data(case_rng(name))
    sdfg = build()
    write_case(sdfg, name, build.__doc__, symbols, values, refs, tol, features, roles, gpu_optional=True)


def new_case_v2(name):
    """DaCe 2: program.v2.sdfg, run by DaCe 2 on the stored inputs against the stored outputs."""
    build, data = NEW_CASES[name]
    symbols, values, refs, tol, _, _ = data(case_rng(name))
    d = os.path.join(OUT, name)
    cj = os.path.join(d, 'case.json')
    with open(cj) as fh:
        case = json.load(fh)
    sdfg = build()
    sdfg.arg_names = list(values)
    sdfg.validate()
    path = os.path.join(d, 'program.v2.sdfg')
    sdfg.save(path)
    loaded = dace.SDFG.from_file(path)
    args = {k: v.copy() for k, v in values.items()}
    loaded(**args, **symbols)
    check = {}
    for k, ref in refs.items():
        ok = bool(np.allclose(args[k], ref, rtol=tol[0], atol=tol[1]))
        check[k] = {'ok': ok, 'max_abs_err': float(np.max(np.abs(args[k] - ref)))}
        assert ok, (name, k)
    abi = abi_entry(dace.SDFG.from_file(path), case['args'], other_exports=True, expand_copy=True)
    case['abi']['program.v2.sdfg'] = abi
    case['variants']['program.v2.sdfg'] = True
    case['v2'] = {'dace_version': dace.__version__, 'numpy_reference_check': check,
                  'library_nodes': library_classes(loaded),
                  'abi_vs_dace1': 'identical' if abi == case['abi']['program.sdfg'] else 'differs'}
    write_json(cj, case)
    print('wrote', path, case['v2']['library_nodes'])


if __name__ == '__main__':
    scratch_dir('make-libnode-fixtures', venv_cmake=True)  # DaCe writes .dacecache/ here; the venv's cmake
    rng = np.random.default_rng(SEED)
    wanted = set(sys.argv[2:])
    if dace.__version__.startswith('1.'):
        for f in (libnode_dot, libnode_gemv, libnode_gemm, libnode_ger_axpy, libnode_transpose, libnode_reduce_ops):
            if not wanted or f.__name__ in wanted:
                f(rng)
    for name in NEW_CASES:  # each with its own random stream
        if not wanted or name in wanted:
            (new_case_v1 if dace.__version__.startswith('1.') else new_case_v2)(name)
