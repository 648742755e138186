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
import os
import sys

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


def write_case(sdfg, name, description, symbols, values, refs, tol, features, roles=None):
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
        entry = array_arg(n, v, role)
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
        outputs.append({'name': n, 'file': f'{n}.out.bin', 'dtype': str(values[n].dtype), 'shape': list(ref.shape),
                        'rtol': tol[0], 'atol': tol[1]})
    # The GPU variant: apply_gpu_transformations() moves the arguments to device copies and gives
    # the library nodes a GPU schedule (DaCe's CUDA code generation checked; no GPU needed).
    gpu = copy.deepcopy(sdfg)
    gpu.apply_gpu_transformations()
    gpu.simplify()
    gpu.validate()
    gpu_classes = library_classes(gpu)
    assert gpu_classes == classes, (name, gpu_classes)
    gpu.save(os.path.join(d, 'program.gpu.sdfg'))
    case = {
        'name': name,
        'description': description,
        'symbols': symbols,
        'args': args,
        'outputs': outputs,
        'abi': {f: abi_entry(s, args, other_exports=True, expand_copy=True)
                for f, s in (('program.sdfg', sdfg), ('program.gpu.sdfg', gpu))},
        'features': ['library_node', 'unexpanded'] + features,
        'library_nodes': classes,
        'variants': {'program.sdfg': True, 'program.gpu.sdfg': True},
        'gpu_status': {'program.gpu.sdfg': 'ok: apply_gpu_transformations() + simplify(), library nodes unexpanded '
                                           'on GPU data; DaCe code generation checked (not compiled: no GPU)'},
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


if __name__ == '__main__':
    scratch_dir('make-libnode-fixtures', venv_cmake=True)  # DaCe writes .dacecache/ here; the venv's cmake
    rng = np.random.default_rng(SEED)
    wanted = set(sys.argv[2:])
    for f in (libnode_dot, libnode_gemv, libnode_gemm, libnode_ger_axpy, libnode_transpose, libnode_reduce_ops):
        if not wanted or f.__name__ in wanted:
            f(rng)
