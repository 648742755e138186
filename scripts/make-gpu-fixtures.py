#!/usr/bin/env python3
"""Generates fixtures/gpu/<case>/: GPU SDFGs (DaCe 1.0.2) whose kernels read
constant arrays (`constants_prop`), use DaCe's GPU reduce expansion (C++
tasklets calling `dace::warpReduce`) or carry a nested SDFG's own symbol on
a kernel's outer memlets, with inputs, numpy reference outputs
and a case.json in the corpus format (see ../shared/corpus/README.md).

Run with DaCe 1.0.2:  build/venv-dace1/bin/python scripts/make-gpu-fixtures.py [OUTDIR [CASE...]]
(default OUTDIR: fixtures/gpu; CASE names the cases to write, default all). The ABI entries are parsed from DaCe's own
generated code (code generation needs no GPU).
"""
import json
import os

import numpy as np
import dace
from dace import Memlet

from fixturelib import abi_entry, generator_info, out_dir, output_entry, scratch_dir, write_array_args, write_json

SEED = 20261130
OUT = out_dir(os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'gpu'))


def write_case(sdfg, name, description, symbols, inputs, outputs, tol, features, after_gpu=None, gpu_transform=True,
               variant='program.gpu.sdfg'):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    sdfg.arg_names = list(inputs) + [n for n in outputs if n not in inputs]
    if gpu_transform:
        sdfg.apply_gpu_transformations()
        sdfg.simplify()
    if after_gpu:
        after_gpu(sdfg)
    sdfg.validate()
    sdfg.save(os.path.join(d, variant))
    # Complex arrays as the corpus stores them: real and imaginary parts in a last dimension of 2.
    cdt = {n: str(v.dtype) for n, v in {**inputs, **outputs}.items() if np.iscomplexobj(v)}
    parts = {64: np.float32, 128: np.float64}
    as_real = lambda n, v: (np.ascontiguousarray(v).view(parts[np.dtype(cdt[n]).itemsize * 8]).reshape(*np.shape(v), 2)
                            if n in cdt else v)
    inputs = {n: as_real(n, v) for n, v in inputs.items()}
    outputs = {n: as_real(n, v) for n, v in outputs.items()}
    args = write_array_args(d, sdfg.arg_names, inputs, outputs)
    for a in args:
        if a['name'] in cdt:
            a['complex_dtype'] = cdt[a['name']]
    for a in args:  # 0-d inputs are scalars, passed by value; inputs that are outputs too are inout
        if a['shape'] == []:
            a['kind'] = 'scalar'
        if a['name'] in inputs and a['name'] in outputs:
            outputs[a['name']].tofile(os.path.join(d, f"{a['name']}.out.bin"))
            a.update(role='inout', out_file=f"{a['name']}.out.bin")
    case = {
        'name': name,
        'description': description,
        'symbols': symbols,
        'args': args,
        'outputs': [dict(output_entry(n, v, tol), **({'complex_dtype': cdt[n]} if n in cdt else {}))
                    for n, v in outputs.items()],
        'abi': {variant: abi_entry(sdfg, args)},
        'default_variant': variant,
        'features': features,
        'constants': {k: {'dtype': str(np.asarray(v[1]).dtype), 'shape': list(np.shape(v[1]))}
                      for k, v in sdfg.constants_prop.items()},
        'generator': generator_info('scripts/make-gpu-fixtures.py', SEED),
    }
    write_json(os.path.join(d, 'case.json'), case)
    print('wrote', d)


def const_weights_1d(rng):
    """b[i] = SCALE * W[i % 5] * a[i]: a 1-D float64 constant array and a scalar constant."""
    N = dace.symbol('N', dace.int32)
    W = np.array([0.5, -1.25, 2.0, 0.75, 3.5])
    SCALE = 1.5
    sdfg = dace.SDFG('gpu_const_weights_1d')
    sdfg.add_array('a', [N], dace.float64)
    sdfg.add_array('b', [N], dace.float64)
    sdfg.add_constant('W', W)
    sdfg.add_constant('SCALE', SCALE)
    st = sdfg.add_state('main')
    st.add_mapped_tasklet('scale', dict(i='0:N'), inputs=dict(x=Memlet('a[i]')),
                          code='y = SCALE * W[i % 5] * x', outputs=dict(y=Memlet('b[i]')),
                          external_edges=True)
    n = 300
    a = rng.standard_normal(n)
    b = SCALE * W[np.arange(n) % 5] * a
    write_case(sdfg, 'const_weights_1d', const_weights_1d.__doc__, {'N': n},
               {'a': a}, {'b': b}, (1e-12, 1e-14), ['constants', 'constant_array', 'gpu_map'])


def const_table_2d(rng):
    """o[i, j] = C[x % 4, j % 4] + LUT[(i + j) % 8] with x = a[i, j]: a 2-D float32 table
    indexed by data and a 1-D int32 lookup table."""
    M = dace.symbol('M', dace.int32)
    N = dace.symbol('N', dace.int32)
    C = (np.arange(16, dtype=np.float32).reshape(4, 4) * np.float32(0.25) - np.float32(1.0))
    LUT = np.array([3, -1, 4, -1, 5, -9, 2, 6], dtype=np.int32)
    sdfg = dace.SDFG('gpu_const_table_2d')
    sdfg.add_array('a', [M, N], dace.int32)
    sdfg.add_array('o', [M, N], dace.float32)
    sdfg.add_constant('C', C)
    sdfg.add_constant('LUT', LUT)
    st = sdfg.add_state('main')
    st.add_mapped_tasklet('lookup', dict(i='0:M', j='0:N'), inputs=dict(x=Memlet('a[i, j]')),
                          code='y = C[x % 4, j % 4] + LUT[(i + j) % 8]', outputs=dict(y=Memlet('o[i, j]')),
                          external_edges=True)
    m, n = 37, 70
    a = rng.integers(0, 1000, size=(m, n)).astype(np.int32)
    ii, jj = np.meshgrid(np.arange(m), np.arange(n), indexing='ij')
    o = (C[a % 4, jj % 4] + LUT[(ii + jj) % 8].astype(np.float32)).astype(np.float32)
    write_case(sdfg, 'const_table_2d', const_table_2d.__doc__, {'M': m, 'N': n},
               {'a': a}, {'o': o}, (1e-6, 1e-6), ['constants', 'constant_array', 'gpu_map', 'int_index'])


def const_nested_loop(rng):
    """b[i] = sum_k WK[k % 4] * a[i, k]: a sequential loop in a nested SDFG inside a GPU map
    (the shape of gt4py's scans) reads a constant array."""
    M = dace.symbol('M', dace.int32)
    K = dace.symbol('K', dace.int32)
    WK = np.array([0.5, 1.0, -1.5, 2.0])
    inner = dace.SDFG('column')
    inner.add_array('row', [K], dace.float64)
    inner.add_array('acc', [1], dace.float64)
    inner.add_constant('WK', WK)
    init = inner.add_state('init')
    t = init.add_tasklet('zero', {}, {'o'}, 'o = 0.0')
    init.add_edge(t, 'o', init.add_write('acc'), None, Memlet('acc[0]'))
    body = inner.add_state('body')
    t = body.add_tasklet('step', {'x', 's'}, {'o'}, 'o = s + WK[k % 4] * x')
    body.add_edge(body.add_read('row'), None, t, 'x', Memlet('row[k]'))
    body.add_edge(body.add_read('acc'), None, t, 's', Memlet('acc[0]'))
    body.add_edge(t, 'o', body.add_write('acc'), None, Memlet('acc[0]'))
    after = inner.add_state('done')
    inner.add_loop(init, body, after, 'k', '0', 'k < K', 'k + 1')

    sdfg = dace.SDFG('gpu_const_nested_loop')
    sdfg.add_array('a', [M, K], dace.float64)
    sdfg.add_array('b', [M], dace.float64)
    sdfg.add_constant('WK', WK)
    st = sdfg.add_state('main')
    me, mx = st.add_map('rows', dict(i='0:M'))
    ns = st.add_nested_sdfg(inner, sdfg, {'row'}, {'acc'}, symbol_mapping={'K': 'K'})
    st.add_memlet_path(st.add_read('a'), me, ns, dst_conn='row', memlet=Memlet('a[i, 0:K]'))
    st.add_memlet_path(ns, mx, st.add_write('b'), src_conn='acc', memlet=Memlet('b[i]'))
    m, k = 45, 13
    a = rng.standard_normal((m, k))
    b = (a * WK[np.arange(k) % 4][None, :]).sum(axis=1)
    write_case(sdfg, 'const_nested_loop', const_nested_loop.__doc__, {'K': k, 'M': m},
               {'a': a}, {'b': b}, (1e-10, 1e-12), ['constants', 'constant_array', 'nested_sdfg', 'loop'])


def warp_reduce(_rng):
    """Whole-array sum, max and min of a float64 and an int32 array through
    DaCe's GPU reduce expansion (GPUAuto: 32-thread blocks, each thread a
    strided partial, `dace::warpReduce` across the warp, thread 0 resolves
    into the result)."""
    rng = np.random.default_rng(SEED + 1)  # its own stream: earlier cases stay as they are
    N = dace.symbol('N', dace.int32)

    @dace.program
    def gpu_warp_reduce(a: dace.float64[N], k: dace.int32[N], s: dace.float64[1], mx: dace.float64[1],
                        mn: dace.int32[1]):
        s[0] = np.sum(a)
        mx[0] = np.max(a)
        mn[0] = np.min(k)

    def expand_gpu_auto(sdfg):
        from dace.libraries.standard import Reduce
        found = 0
        for node, _ in sdfg.all_nodes_recursive():
            if isinstance(node, Reduce):
                node.implementation = 'GPUAuto'
                found += 1
        assert found == 3, found
        sdfg.expand_library_nodes()
        code = [n.code.as_string for n, _ in sdfg.all_nodes_recursive() if isinstance(n, dace.nodes.Tasklet)]
        assert sum('warpReduce' in c for c in code) == 3, code

    n = 1000  # not a multiple of 32 or 1024: partial warps and blocks
    a = rng.standard_normal(n)
    k = rng.integers(-1000, 1000, n).astype(np.int32)
    sdfg = gpu_warp_reduce.to_sdfg(simplify=True)
    write_case(sdfg, 'warp_reduce', warp_reduce.__doc__, {'N': n}, {'a': a, 'k': k},
               {'s': np.array([a.sum()]), 'mx': np.array([a.max()]), 'mn': np.array([k.min()], np.int32)},
               (1e-10, 1e-12), ['warp_reduce', 'reduce'], after_gpu=expand_gpu_auto)


def nested_symbol_buckets(_rng):
    """Weighted bucket sums by a nested program with its own size symbol K
    (mapped from the caller's B), called per element inside a map that the
    GPU transformation makes a kernel: DaCe propagates the nested memlet
    `sums[0:K]` out of the kernel with K unrenamed (as in NPBench's
    azimint_hist offloaded)."""
    rng = np.random.default_rng(SEED + 2)  # its own stream: earlier cases stay as they are
    N, K, B = (dace.symbol(s, dtype=dace.int64) for s in ('N', 'K', 'B'))

    @dace.program
    def bucket_of(x: dace.float64, edges: dace.float64[K + 1]):
        return dace.int64(K * (x - edges[0]) / (edges[K] - edges[0]))

    @dace.program
    def weighted_buckets(a: dace.float64[N], edges: dace.float64[K + 1], w: dace.float64[N]):
        sums = np.ndarray((K, ), dtype=np.float64)
        sums[:] = 0
        for i in dace.map[0:N]:
            b = min(bucket_of(a[i], edges), K - 1)
            sums[b] += w[i]
        return sums

    @dace.program
    def gpu_nested_symbol_buckets(a: dace.float64[N], w: dace.float64[N], edges: dace.float64[B + 1]):
        s = weighted_buckets(a, edges, w)
        return s * 2.0

    n, bins = 500, 7
    a = rng.uniform(-3.0, 5.0, n)
    w = rng.standard_normal(n)
    edges = np.linspace(a.min(), a.max(), bins + 1)
    b = np.minimum((bins * (a - edges[0]) / (edges[bins] - edges[0])).astype(np.int64), bins - 1)
    ret = np.bincount(b, weights=w, minlength=bins) * 2.0
    sdfg = gpu_nested_symbol_buckets.to_sdfg(simplify=True)
    write_case(sdfg, 'nested_symbol_buckets', nested_symbol_buckets.__doc__, {'N': n, 'B': bins},
               {'a': a, 'w': w, 'edges': edges}, {'__return': ret}, (1e-10, 1e-12),
               ['nested_sdfg', 'nested_symbol', 'wcr', 'gpu_map'])


def dynamic_row_buffer(_rng):
    """A sparse matrix (CSR) times a vector, one kernel thread per row: the
    row's entries of x are gathered into a transient whose size is the row's
    length (A_row[i + 1] - A_row[i], known only inside the thread), then
    dotted with the row's values (as NPBench's spmv offloaded)."""
    rng = np.random.default_rng(SEED + 3)
    M, N, nnz = (dace.symbol(s, dtype=dace.int64) for s in ('M', 'N', 'nnz'))

    @dace.program
    def gpu_dynamic_row_buffer(A_row: dace.uint32[M + 1], A_col: dace.uint32[nnz], A_val: dace.float64[nnz],
                               x: dace.float64[N]):
        y = np.empty(M, np.float64)
        for i in range(M):
            y[i] = A_val[A_row[i]:A_row[i + 1]] @ x[A_col[A_row[i]:A_row[i + 1]]]
        return y

    m, n = 60, 40
    lengths = rng.integers(0, 12, m)
    lengths[3] = 0  # an empty row
    a_row = np.concatenate([[0], np.cumsum(lengths)]).astype(np.uint32)
    a_col = rng.integers(0, n, int(a_row[-1])).astype(np.uint32)
    a_val = rng.standard_normal(int(a_row[-1]))
    x = rng.standard_normal(n)
    y = np.array([a_val[a_row[i]:a_row[i + 1]] @ x[a_col[a_row[i]:a_row[i + 1]]] for i in range(m)])
    sdfg = gpu_dynamic_row_buffer.to_sdfg(simplify=True)
    from dace.transformation.interstate import LoopToMap
    assert sdfg.apply_transformations_repeated(LoopToMap) == 1  # the row loop becomes the kernel's map
    write_case(sdfg, 'dynamic_row_buffer', dynamic_row_buffer.__doc__, {'M': m, 'N': n, 'nnz': int(a_row[-1])},
               {'A_row': a_row, 'A_col': a_col, 'A_val': a_val, 'x': x}, {'__return': y}, (1e-10, 1e-12),
               ['nested_sdfg', 'dynamic_size', 'device_heap', 'gpu_map'])


def block_reduce(_rng):
    """DaCe's blockreduce_cudatest: B[b] = sum(A[64 b : 64 b + 64]) for each of NB blocks. The
    GPU transformation with sequential_innermaps=False leaves the inner map of 32 points in the
    Default schedule, a GPU_ThreadBlock map by DaCe's inference; each thread copies 2 values into
    a register array and a Reduce of implementation 'CUDA (block)' (CUB's BlockReduce in DaCe's
    code) sums them over the whole block; the first thread writes the block's sum. A max over
    the same values in a second Reduce node checks a lambda other than the sum."""
    from dace.transformation.interstate import GPUTransformSDFG
    NB = dace.symbol('NB', dace.int32)
    sdfg = dace.SDFG('gpu_block_reduce')
    st = sdfg.add_state('a')
    A = st.add_array('A', (NB * 64, ), dace.float64)
    B = st.add_array('B', (NB, ), dace.float64)
    C = st.add_array('C', (NB, ), dace.float64)
    me, mx = st.add_map('blocks', dict(bi='0:NB'))
    mei, mxi = st.add_map('threads', dict(i='0:32'))
    tA = st.add_transient('tA', (2, ), dace.float64)
    outs = []
    for name, wcr, ident, arr in (('sum', 'lambda a, b: a + b', 0, B), ('max', 'lambda a, b: max(a, b)', -1e300, C)):
        red = st.add_reduce(wcr, None, ident)
        red.implementation = 'CUDA (block)'
        t = st.add_transient(f't_{name}', (1, ), dace.float64)
        w = st.add_tasklet(f'write_{name}', {'inp'}, {'out'}, 'if i == 0:\n    out = inp')
        st.add_edge(tA, None, red, None, Memlet.simple(tA, '0:2'))
        st.add_edge(red, None, t, None, Memlet.simple(t, '0'))
        st.add_edge(t, None, w, 'inp', Memlet.simple(t, '0'))
        st.add_edge(w, 'out', mxi, None, Memlet.simple(arr.data, 'bi', num_accesses=-1))
        st.add_edge(mxi, None, mx, None, Memlet.simple(arr.data, 'bi'))
        st.add_edge(mx, None, arr, None, Memlet.simple(arr.data, '0:NB'))
        outs.append(arr.data)
    st.add_edge(A, None, me, None, Memlet.simple(A, '0:NB*64'))
    st.add_edge(me, None, mei, None, Memlet.simple(A, '(64*bi):(64*bi+64)'))
    st.add_edge(mei, None, tA, None, Memlet.simple('A', '(64*bi+2*i):(64*bi+2*i+2)'))
    sdfg.fill_scope_connectors()
    sdfg.arg_names = ['A', 'B', 'C']
    sdfg.apply_transformations(GPUTransformSDFG, options={'sequential_innermaps': False})
    nb = 5
    a = np.random.default_rng(SEED).standard_normal(nb * 64)
    write_case(sdfg, 'block_reduce', block_reduce.__doc__, {'NB': nb}, {'A': a},
               {'B': a.reshape(nb, 64).sum(axis=1), 'C': a.reshape(nb, 64).max(axis=1)}, (1e-12, 1e-14),
               ['gpu_map', 'thread_block', 'reduce', 'block_reduce'], gpu_transform=False)


def host_cpp_device(_rng):
    """A C++ tasklet outside any kernel whose connectors are device memory (DaCe's
    scalar_output_cudatest and multistream_custom_cudatest): host code, as DaCe's generator
    writes it, on the node's stream `__dace_current_stream`, and `__state->gpu_context->streams[0]`
    names the state's stream. It copies the host input into a device array; a kernel doubles it
    and the result is copied back."""
    N = dace.symbol('N', dace.int32)
    sdfg = dace.SDFG('gpu_host_cpp_device')
    sdfg.add_array('a', [N], dace.float64)
    sdfg.add_array('b', [N], dace.float64)
    sdfg.add_transient('g', [N], dace.float64, storage=dace.StorageType.GPU_Global)
    sdfg.add_transient('h', [N], dace.float64, storage=dace.StorageType.GPU_Global)
    st = sdfg.add_state('main')
    t = st.add_tasklet('upload', {'src': dace.pointer(dace.float64)}, {'dst': dace.pointer(dace.float64)},
                       'cudaMemcpyAsync(dst, src, N * sizeof(double), cudaMemcpyHostToDevice, __dace_current_stream);\n'
                       'cudaStreamSynchronize(__state->gpu_context->streams[0]);',
                       language=dace.Language.CPP)
    st.add_edge(st.add_read('a'), None, t, 'src', Memlet('a[0:N]'))
    g = st.add_access('g')
    st.add_edge(t, 'dst', g, None, Memlet('g[0:N]'))
    h = st.add_access('h')
    st.add_mapped_tasklet('double', dict(i='0:N'), inputs=dict(x=Memlet('g[i]')), code='y = 2 * x',
                          outputs=dict(y=Memlet('h[i]')), schedule=dace.ScheduleType.GPU_Device,
                          input_nodes={'g': g}, output_nodes={'h': h}, external_edges=True)
    st.add_nedge(h, st.add_write('b'), Memlet('h[0:N]'))
    n = 100
    a = np.random.default_rng(SEED).standard_normal(n)
    write_case(sdfg, 'host_cpp_device', host_cpp_device.__doc__, {'N': n}, {'a': a}, {'b': 2 * a},
               (1e-14, 1e-15), ['gpu_map', 'cpp_tasklet'], gpu_transform=False)


def host_scalar_nested(_rng):
    """b[i] = s * a[i] + t[0] in a GPU_Device map inside a nested SDFG, where s is a host scalar
    argument of the program passed into the nested SDFG (a scalar of default storage there, as
    DaCe's library expansions leave it), read by the kernel: DaCe passes its value to the kernel."""
    N = dace.symbol('N', dace.int32)
    inner = dace.SDFG('scale_shift')
    inner.add_scalar('_s', dace.float64)
    inner.add_array('_a', [N], dace.float64, storage=dace.StorageType.GPU_Global)
    inner.add_array('_t', [1], dace.float64, storage=dace.StorageType.GPU_Global)
    inner.add_array('_b', [N], dace.float64, storage=dace.StorageType.GPU_Global)
    ist = inner.add_state('k')
    ist.add_mapped_tasklet('scale_shift', dict(i='0:N'),
                           inputs=dict(x=Memlet('_a[i]'), s=Memlet('_s[0]'), t=Memlet('_t[0]')),
                           code='y = s * x + t', outputs=dict(y=Memlet('_b[i]')),
                           schedule=dace.ScheduleType.GPU_Device, external_edges=True)
    sdfg = dace.SDFG('gpu_host_scalar_nested')
    sdfg.add_scalar('s', dace.float64)
    sdfg.add_array('a', [N], dace.float64)
    sdfg.add_array('t', [1], dace.float64)
    sdfg.add_array('b', [N], dace.float64)
    for n, size in (('a', N), ('t', 1), ('b', N)):
        sdfg.add_array('gpu_' + n, [size], dace.float64, storage=dace.StorageType.GPU_Global, transient=True)
    st = sdfg.add_state('main')
    ns = st.add_nested_sdfg(inner, sdfg, {'_s', '_a', '_t'}, {'_b'}, {'N': 'N'})
    st.add_edge(st.add_read('s'), None, ns, '_s', Memlet('s[0]'))
    for n in ('a', 't'):
        g = st.add_access('gpu_' + n)
        st.add_nedge(st.add_read(n), g, Memlet(f'{n}[0:{"N" if n == "a" else 1}]'))
        st.add_edge(g, None, ns, '_' + n, Memlet(f'gpu_{n}[0:{"N" if n == "a" else 1}]'))
    gb = st.add_access('gpu_b')
    st.add_edge(ns, '_b', gb, None, Memlet('gpu_b[0:N]'))
    st.add_nedge(gb, st.add_write('b'), Memlet('gpu_b[0:N]'))
    n = 70
    rng = np.random.default_rng(SEED + 11)
    a, t = rng.standard_normal(n), rng.standard_normal(1)
    s = np.float64(1.75)
    write_case(sdfg, 'host_scalar_nested', host_scalar_nested.__doc__, {'N': n}, {'s': s, 'a': a, 't': t},
               {'b': s * a + t[0]}, (1e-14, 1e-15), ['gpu_map', 'nested_sdfg', 'scalar_arg'], gpu_transform=False)


def dynamic_tb_rows(_rng):
    """Row sums and row maxima of a CSR matrix, y[i] = sum(val[j] * x[col[j]]) and
    z[i] = max(val[row[i]:row[i + 1]]), one kernel point per row, the entries of each row in
    maps of schedule GPU_ThreadBlock_Dynamic (DaCe's dynamic thread-block scheduling) whose
    ranges come from the row pointers (dynamic map inputs), written with write-conflict
    resolution."""
    M, N, nnz = (dace.symbol(s, dtype=dace.int32) for s in ('M', 'N', 'nnz'))

    @dace.program
    def gpu_dynamic_tb_rows(row: dace.int32[M + 1], col: dace.int32[nnz], val: dace.float64[nnz],
                            x: dace.float64[N], y: dace.float64[M], z: dace.float64[M]):
        for i in dace.map[0:M]:
            for j in dace.map[row[i]:row[i + 1]]:
                with dace.tasklet:
                    v << val[j]
                    xv << x[col[j]]
                    out >> y(1, lambda p, q: p + q)[i]
                    out = v * xv
            for j in dace.map[row[i]:row[i + 1]]:
                with dace.tasklet:
                    v << val[j]
                    out >> z(1, lambda p, q: max(p, q))[i]
                    out = v

    rng = np.random.default_rng(SEED + 12)
    m, n = 50, 30
    lengths = rng.integers(0, 40, m)
    lengths[7] = 0
    row = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    col = rng.integers(0, n, int(row[-1])).astype(np.int32)
    val = rng.standard_normal(int(row[-1]))
    x = rng.standard_normal(n)
    y0 = rng.standard_normal(m)
    z0 = np.full(m, -1e300)
    y = y0 + np.array([val[row[i]:row[i + 1]] @ x[col[row[i]:row[i + 1]]] for i in range(m)])
    z = np.array([max([z0[i], *val[row[i]:row[i + 1]]]) for i in range(m)])
    sdfg = gpu_dynamic_tb_rows.to_sdfg(simplify=True)

    def dynamic(sdfg):
        for node, _ in sdfg.all_nodes_recursive():
            if isinstance(node, dace.nodes.MapEntry) and node.map.schedule == dace.ScheduleType.Sequential:
                node.map.schedule = dace.ScheduleType.GPU_ThreadBlock_Dynamic

    write_case(sdfg, 'dynamic_tb_rows', dynamic_tb_rows.__doc__, {'M': m, 'N': n, 'nnz': int(row[-1])},
               {'row': row, 'col': col, 'val': val, 'x': x, 'y': y0, 'z': z0}, {'y': y, 'z': z}, (1e-10, 1e-12),
               ['gpu_map', 'dynamic_map_inputs', 'thread_block_dynamic', 'wcr'], after_gpu=dynamic)


def tb_runtime_size(_rng):
    """b[i] = 3 a[i] - i over N points, the map strip-mined by 32 into a GPU_Device map over
    the tiles and a GPU_ThreadBlock map over a tile, whose last tile is shorter: its size,
    min(N - 1, t + 31) - t + 1, is known only at run time (at most 32, DaCe's block size)."""
    from dace.transformation.dataflow import StripMining
    N = dace.symbol('N', dace.int32)
    sdfg = dace.SDFG('gpu_tb_runtime_size')
    sdfg.add_array('a', [N], dace.float64)
    sdfg.add_array('b', [N], dace.float64)
    st = sdfg.add_state('main')
    st.add_mapped_tasklet('affine', dict(i='0:N'), inputs=dict(x=Memlet('a[i]')), code='y = 3 * x - i',
                          outputs=dict(y=Memlet('b[i]')), external_edges=True)

    def tile(sdfg):
        assert sdfg.apply_transformations(StripMining, options={'tile_size': '32'}) == 1
        for state in sdfg.states():
            for node in state.nodes():
                if isinstance(node, dace.nodes.MapEntry):
                    outer = state.entry_node(node) is None
                    node.map.schedule = (dace.ScheduleType.GPU_Device if outer else dace.ScheduleType.GPU_ThreadBlock)

    n = 83
    a = np.random.default_rng(SEED + 13).standard_normal(n)
    write_case(sdfg, 'tb_runtime_size', tb_runtime_size.__doc__, {'N': n}, {'a': a}, {'b': 3 * a - np.arange(n)},
               (1e-14, 1e-15), ['gpu_map', 'thread_block'], after_gpu=tile)


def cublas_zgemm(_rng):
    """C = A^T B for complex128 matrices with DaCe's cuBLAS expansion of MatMul (cublasZgemm on
    cuDoubleComplex operands, the handle's device-memory constants as alpha and beta)."""
    M, K, N = (dace.symbol(s, dtype=dace.int32) for s in ('M', 'K', 'N'))

    @dace.program
    def gpu_cublas_zgemm(A: dace.complex128[K, M], B: dace.complex128[K, N]):
        return A.T @ B

    rng = np.random.default_rng(SEED + 14)
    m, k, n = 7, 5, 6
    a = rng.standard_normal((k, m)) + 1j * rng.standard_normal((k, m))
    b = rng.standard_normal((k, n)) + 1j * rng.standard_normal((k, n))
    sdfg = gpu_cublas_zgemm.to_sdfg(simplify=True)

    def expand(sdfg):
        from dace.libraries.blas import environments  # noqa: F401 (registers cuBLAS)
        while True:  # MatMul specializes into Gemm, whose cuBLAS expansion is the call
            libs = [(n, st) for n, st in sdfg.all_nodes_recursive() if isinstance(n, dace.nodes.LibraryNode)]
            if not libs:
                break
            for node, state in libs:
                if 'cuBLAS' in node.implementations:
                    node.implementation = 'cuBLAS'
                node.expand(state.parent, state)

    write_case(sdfg, 'cublas_zgemm', cublas_zgemm.__doc__, {'M': m, 'K': k, 'N': n}, {'A': a, 'B': b},
               {'__return': a.T @ b}, (1e-12, 1e-14), ['gpu_map', 'cublas', 'complex'], after_gpu=expand,
               variant='gpu.sdfg')  # CUDA only: HIP has no cuBLAS


def cusolver(_rng):
    """DaCe's cuSOLVER expansions (implementation cuSolverDn): X = solve(A, B)
    for a general float64 A and three right-hand sides (linalg Solve: A and B
    transposed into column-major scratch, getrf with partial pivoting, getrs,
    X transposed back) and L = cholesky(S) for a Hermitian positive definite
    complex128 S (linalg Cholesky: zpotrf of the transposed lower triangle,
    the upper triangle of L zeroed), on the GPU copies of the host arrays
    that DaCe's GPU transformation makes (as linalg_*_test do)."""
    from dace.libraries.linalg import Cholesky, Solve
    N, R = dace.symbol('N', dace.int32), dace.symbol('R', dace.int32)
    sdfg = dace.SDFG('gpu_cusolver')
    arrays = {'A': ([N, N], dace.float64), 'B': ([N, R], dace.float64), 'X': ([N, R], dace.float64),
              'S': ([N, N], dace.complex128), 'L': ([N, N], dace.complex128)}
    for name, (shape, dt) in arrays.items():
        sdfg.add_array(name, shape, dt)
    st = sdfg.add_state('solve')
    solve = Solve('solve')
    solve.implementation = 'cuSolverDn'
    chol = Cholesky('cholesky', lower=True)
    chol.implementation = 'cuSolverDn'
    whole = lambda n: Memlet.from_array(n, sdfg.arrays[n])
    st.add_edge(st.add_read('A'), None, solve, '_ain', whole('A'))
    st.add_edge(st.add_read('B'), None, solve, '_bin', whole('B'))
    st.add_edge(solve, '_bout', st.add_write('X'), None, whole('X'))
    st.add_edge(st.add_read('S'), None, chol, '_a', whole('S'))
    st.add_edge(chol, '_b', st.add_write('L'), None, whole('L'))

    rng = np.random.default_rng(SEED + 20)
    n, r = 6, 3
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, r))
    m = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    s = m @ m.conj().T + n * np.eye(n)
    write_case(sdfg, 'cusolver', cusolver.__doc__, {'N': n, 'R': r}, {'A': a, 'B': b, 'S': s},
               {'X': np.linalg.solve(a, b), 'L': np.linalg.cholesky(s)}, (1e-10, 1e-12),
               ['cusolver', 'library_node', 'complex'], variant='gpu.sdfg')


def cusolver_inv(_rng):
    """DaCe's cuSOLVER expansion of linalg Inv (implementation cuSolverDn,
    `_make_sdfg_getrs`: getrf, then getrs of the identity): Ai = inv(A[:, 1:N+1])
    for a float64 A with two extra columns (leading dimension N+2, copied
    into a contiguous scratch matrix first), and C = inv(C) in place
    (`overwrite_a`) for a complex64 C, on the GPU copies of the host arrays.
    The size symbol is `n`: DaCe 1.0.2's expansion writes its identity map
    over `0:n` whatever the matrix's size is called (another name leaves
    `n` undefined: DaCe cannot generate the code; sdfgc uses the size)."""
    from dace.libraries.linalg import Inv
    N = dace.symbol('n', dace.int32)
    sdfg = dace.SDFG('gpu_cusolver_inv')
    sdfg.add_array('A', [N, N + 2], dace.float64)
    sdfg.add_array('Ai', [N, N], dace.float64)
    sdfg.add_array('C', [N, N], dace.complex64)
    st = sdfg.add_state('inverse')
    inv = Inv('inv')
    inv.implementation = 'cuSolverDn'
    inv_c = Inv('inv_in_place', overwrite_a=True)
    inv_c.implementation = 'cuSolverDn'
    st.add_edge(st.add_read('A'), None, inv, '_ain', Memlet('A[0:n, 1:n+1]'))
    st.add_edge(inv, '_aout', st.add_write('Ai'), None, Memlet('Ai[0:n, 0:n]'))
    st.add_edge(st.add_read('C'), None, inv_c, '_ain', Memlet('C[0:n, 0:n]'))
    st.add_edge(inv_c, '_aout', st.add_write('C'), None, Memlet('C[0:n, 0:n]'))

    rng = np.random.default_rng(SEED + 23)
    n = 7
    a = rng.standard_normal((n, n + 2)) + n * np.eye(n, n + 2, 1)
    m = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)) + n * np.eye(n)).astype(np.complex64)
    write_case(sdfg, 'cusolver_inv', cusolver_inv.__doc__, {'n': n}, {'A': a, 'C': m},
               {'Ai': np.linalg.inv(a[:, 1:n + 1]), 'C': np.linalg.inv(m.astype(np.complex128)).astype(np.complex64)},
               (1e-5, 1e-6), ['cusolver', 'library_node', 'complex'], variant='gpu.sdfg')


def cusolver_lapack(_rng):
    """DaCe's cuSOLVER expansions of the LAPACK nodes (implementation
    cuSolverDn, as lapack_getrs_test and lapack_potrf_test build them):
    Getrf of a float32 A in place, then Getrs of a right-hand side vector x
    in place, and Potrf (lower) of a float64 symmetric positive definite S in
    place, pivots in a GPU transient, each devInfo an output (0), on the GPU
    copies of the host arrays. cuSOLVER reads the row-major operands as their transposes:
    x becomes solve(A^T, x), and S's upper triangle the transposed Cholesky
    factor (its strict lower triangle is left as it was)."""
    from dace.libraries.lapack import Getrf, Getrs, Potrf
    N = dace.symbol('N', dace.int32)
    sdfg = dace.SDFG('gpu_cusolver_lapack')
    sdfg.add_array('A', [N, N], dace.float32)
    sdfg.add_array('x', [N], dace.float32)
    sdfg.add_array('S', [N, N], dace.float64)
    sdfg.add_array('pivots', [N], dace.int32, storage=dace.StorageType.GPU_Global, transient=True)
    for name in ('res_getrf', 'res_getrs', 'res_potrf'):
        sdfg.add_array(name, [1], dace.int32)
    st = sdfg.add_state('factor_and_solve')
    getrf, getrs, potrf = Getrf('getrf'), Getrs('getrs'), Potrf('potrf', lower=True)
    for node in (getrf, getrs, potrf):
        node.implementation = 'cuSolverDn'
    a_in, a_lu, piv = st.add_read('A'), st.add_access('A'), st.add_access('pivots')
    st.add_edge(a_in, None, getrf, '_xin', Memlet('A[0:N, 0:N]'))
    st.add_edge(getrf, '_xout', a_lu, None, Memlet('A[0:N, 0:N]'))
    st.add_edge(getrf, '_ipiv', piv, None, Memlet('pivots[0:N]'))
    st.add_edge(getrf, '_res', st.add_write('res_getrf'), None, Memlet('res_getrf[0]'))
    st.add_edge(a_lu, None, getrs, '_a', Memlet('A[0:N, 0:N]'))
    st.add_edge(piv, None, getrs, '_ipiv', Memlet('pivots[0:N]'))
    st.add_edge(st.add_read('x'), None, getrs, '_rhs_in', Memlet('x[0:N]'))
    st.add_edge(getrs, '_rhs_out', st.add_write('x'), None, Memlet('x[0:N]'))
    st.add_edge(getrs, '_res', st.add_write('res_getrs'), None, Memlet('res_getrs[0]'))
    st.add_edge(st.add_read('S'), None, potrf, '_xin', Memlet('S[0:N, 0:N]'))
    st.add_edge(potrf, '_xout', st.add_write('S'), None, Memlet('S[0:N, 0:N]'))
    st.add_edge(potrf, '_res', st.add_write('res_potrf'), None, Memlet('res_potrf[0]'))

    rng = np.random.default_rng(SEED + 24)
    n = 6
    a = (rng.standard_normal((n, n)) + n * np.eye(n)).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    m = rng.standard_normal((n, n))
    spd = m @ m.T + n * np.eye(n)
    factor = np.linalg.cholesky(spd)
    write_case(sdfg, 'cusolver_lapack', cusolver_lapack.__doc__, {'N': n}, {'A': a, 'x': x, 'S': spd},
               {'x': np.linalg.solve(a.T.astype(np.float64), x).astype(np.float32),
                'S': np.triu(factor.T) + np.tril(spd, -1),
                **{r: np.zeros(1, np.int32) for r in ('res_getrf', 'res_getrs', 'res_potrf')}},
               (1e-4, 1e-5), ['cusolver', 'library_node'], variant='gpu.sdfg')


def cusparse_csrmv(_rng):
    """DaCe's cuSPARSE expansion of CSRMV (csrmv_test): C = 2 A B for a CSR
    float32 A on host arrays: a nested SDFG copies the operands to GPU
    transients and a C++ tasklet calls cusparseCreateCsr, cusparseSpMV with
    host-mode alpha and beta, checked by dace::sparse::CheckCusparseError,
    with DaCe's cuSPARSE handle."""
    from scipy.sparse import csr_matrix
    from dace.libraries.sparse import CSRMV
    N, M, NNZ = (dace.symbol(s, dace.int32) for s in ('N', 'M', 'NNZ'))
    sdfg = dace.SDFG('gpu_cusparse_csrmv')
    sdfg.add_array('A_val', [NNZ], dace.float32)
    sdfg.add_array('A_row', [N + 1], dace.int32)
    sdfg.add_array('A_col', [NNZ], dace.int32)
    sdfg.add_array('B', [M], dace.float32)
    sdfg.add_array('C', [N], dace.float32)
    st = sdfg.add_state('spmv')
    node = CSRMV('csrmv', alpha=2.0, beta=0.0)
    node.implementation = 'cuSPARSE'
    st.add_node(node)
    for name, conn in (('A_val', '_a_vals'), ('A_row', '_a_rows'), ('A_col', '_a_cols'), ('B', '_b')):
        st.add_edge(st.add_read(name), None, node, conn, Memlet.from_array(name, sdfg.arrays[name]))
    st.add_edge(node, '_c', st.add_write('C'), None, Memlet.from_array('C', sdfg.arrays['C']))
    sdfg.expand_library_nodes()

    rng = np.random.default_rng(SEED + 21)
    n, m = 16, 8
    dense = (rng.random((n, m)) * (rng.random((n, m)) < 0.4)).astype(np.float32)
    dense[5] = 0  # an empty row
    a = csr_matrix(dense)
    b = rng.random(m).astype(np.float32)
    c = rng.random(n).astype(np.float32)  # beta = 0: not read
    write_case(sdfg, 'cusparse_csrmv', cusparse_csrmv.__doc__, {'N': n, 'M': m, 'NNZ': int(a.nnz)},
               {'A_val': a.data.astype(np.float32), 'A_row': a.indptr.astype(np.int32),
                'A_col': a.indices.astype(np.int32), 'B': b, 'C': c},
               {'C': (2.0 * (dense.astype(np.float64) @ b.astype(np.float64))).astype(np.float32)}, (1e-5, 1e-6),
               ['cusparse', 'library_node', 'nested_sdfg'], gpu_transform=False, variant='gpu.sdfg')


def cufft(_rng):
    """DaCe's cuFFT expansions (fft_test::test_cufft_twoplans): np.fft.fft of a
    complex128 vector and np.fft.ifft(norm='forward') of a complex64 one, each
    a C++ tasklet calling cufftXtExec on a plan that is a state field, made
    (cufftMakePlan1d, Z2Z and C2C) in the tasklets' init code."""
    import dace.libraries.fft as fftlib

    @dace.program
    def gpu_cufft(x: dace.complex128[210], y: dace.complex64[19]):
        return np.fft.fft(x), np.fft.ifft(y, norm='forward')

    sdfg = gpu_cufft.to_sdfg()

    def expand(sdfg):
        fftlib.FFT.default_implementation = 'cuFFT'
        fftlib.IFFT.default_implementation = 'cuFFT'
        try:
            sdfg.expand_library_nodes()
        finally:
            fftlib.FFT.default_implementation = 'pure'
            fftlib.IFFT.default_implementation = 'pure'

    rng = np.random.default_rng(SEED + 22)
    x = rng.random(210) + 1j * rng.random(210)
    y = (rng.random(19) + 1j * rng.random(19)).astype(np.complex64)
    write_case(sdfg, 'cufft', cufft.__doc__, {}, {'x': x, 'y': y},
               {'__return_0': np.fft.fft(x), '__return_1': np.fft.ifft(y, norm='forward').astype(np.complex64)},
               (1e-5, 1e-6), ['cufft', 'library_node', 'complex'], after_gpu=expand, variant='gpu.sdfg')


def persistent_device_maps(_rng):
    """A GPU_Persistent map over an empty range holding two GPU_Device maps, t[i] = a[i]^2 then
    b[i] = t[N - 1 - i] + a[i] (the second reads what other points of the first wrote): DaCe's
    persistent kernel ignores the persistent map's range and runs the device maps inside
    grid-strided over one grid, with a grid barrier between them."""
    N = dace.symbol('N', dace.int32)
    sdfg = dace.SDFG('gpu_persistent_device_maps')
    sdfg.add_array('a', [N], dace.float64)
    sdfg.add_array('b', [N], dace.float64)
    sdfg.add_transient('t', [N], dace.float64)
    st = sdfg.add_state('main')
    pe, px = st.add_map('persistent', dict(unused='0:0'))
    a, t, b = st.add_read('a'), st.add_access('t'), st.add_write('b')
    e1, x1 = st.add_map('square', dict(i='0:N'))
    sq = st.add_tasklet('square', {'x'}, {'y'}, 'y = x * x')
    e2, x2 = st.add_map('mirror', dict(i='0:N'))
    mi = st.add_tasklet('mirror', {'u', 'v'}, {'w'}, 'w = u + v')
    st.add_memlet_path(a, pe, e1, sq, dst_conn='x', memlet=Memlet('a[i]'))
    st.add_memlet_path(sq, x1, t, src_conn='y', memlet=Memlet('t[i]'))
    st.add_memlet_path(t, e2, mi, dst_conn='u', memlet=Memlet('t[N - 1 - i]'))
    st.add_memlet_path(a, pe, e2, mi, dst_conn='v', memlet=Memlet('a[i]'))
    st.add_memlet_path(mi, x2, px, b, src_conn='w', memlet=Memlet('b[i]'))

    def schedules(sdfg):
        sdfg.arrays['t'].storage = dace.StorageType.GPU_Global  # the GPU transformation made it a register
        for state in sdfg.states():
            for node in state.nodes():
                if isinstance(node, dace.nodes.MapEntry):
                    node.map.schedule = (dace.ScheduleType.GPU_Persistent if state.entry_node(node) is None
                                         else dace.ScheduleType.GPU_Device)

    n = 90
    a = np.random.default_rng(SEED + 15).standard_normal(n)
    write_case(sdfg, 'persistent_device_maps', persistent_device_maps.__doc__, {'N': n}, {'a': a},
               {'b': (a * a)[::-1] + a}, (1e-14, 1e-15), ['gpu_map', 'gpu_persistent'], after_gpu=schedules)


def half_kernel(_rng):
    """float16 in a kernel (CUDA's half): o[i] = max(a[i] * b[i], 0) (a half
    and an int, as DaCe's math.h: the int converted to half) and
    p[i] = a[i] + b[i] if d[i] else float16(0.1) (a double literal rounded
    once to half), r[i] = a[i] stored to an int32 (toward zero); products
    and sums of halves rounded to nearest even, subnormal results included. Products and sums are separate tasklet
    statements' operands (no mul+add that nvcc may contract to an fma).
    float16 data are stored and compared as their bits (uint16)."""
    rng = np.random.default_rng(SEED + 16)
    N = dace.symbol('N', dace.int32)
    sdfg = dace.SDFG('gpu_half_kernel')
    for name in ('a', 'b', 'o', 'p'):
        sdfg.add_array(name, [N], dace.float16)
    sdfg.add_array('d', [N], dace.int32)
    sdfg.add_array('r', [N], dace.int32)
    st = sdfg.add_state('main')
    st.add_mapped_tasklet('halves', dict(i='0:N'),
                          inputs=dict(x=Memlet('a[i]'), y=Memlet('b[i]'), m=Memlet('d[i]')),
                          code='u = max(x * y, 0)\nv = (x + y) if m else dace.float16(0.1)\nw = x',
                          outputs=dict(u=Memlet('o[i]'), v=Memlet('p[i]'), w=Memlet('r[i]')),
                          external_edges=True)
    n = 200
    a = (rng.standard_normal(n) * 8).astype(np.float16)
    b = (rng.standard_normal(n) * 3).astype(np.float16)
    a[:40] = (a[:40].astype(np.float64) * 1e-3).astype(np.float16)  # products down to subnormals
    b[:40] = (b[:40].astype(np.float64) * 1e-3).astype(np.float16)
    d = rng.integers(0, 2, n).astype(np.int32)
    o = np.maximum(a * b, np.float16(0))
    p = np.where(d != 0, a + b, np.float16(0.1)).astype(np.float16)
    assert o.dtype == np.float16 and p.dtype == np.float16
    assert np.any((o != 0) & (np.abs(o) < np.float16(6.1e-5))), 'no subnormal product'
    write_case(sdfg, 'half_kernel', half_kernel.__doc__, {'N': n}, {'a': a, 'b': b, 'd': d},
               {'o': o, 'p': p, 'r': a.astype(np.int32)}, (0, 0), ['gpu_map', 'float16'])
    path = os.path.join(OUT, 'half_kernel', 'case.json')
    with open(path) as f:
        case = json.load(f)
    for entry in case['args'] + case['outputs']:
        if entry['dtype'] == 'float16':  # compared bit for bit, as uint16
            entry['dtype'] = 'uint16'
    write_json(path, case)


def half_vectors(_rng):
    """Vectors of float16 in kernels (DaCe's Vectorization to half8 and half4,
    cuda/halfvec.cuh): u[i] = a[i] * b[i] and v[i] = max(a[i] - b[i], 0) and
    w[i] = float16(0.5) + a[i] in eights (vector-vector half2 products and
    differences, a max of a vector and a half, a half broadcast to a vector
    sum), the last N % 8 points by the postamble's scalar map; z[i] = a[i] ** 3
    (two half products per lane) in fours, its tail as well. Products and sums are separate
    tasklet statements' operands (no mul+add that nvcc may contract to an
    fma); each lane rounds as the scalar half operation, bit for bit."""
    rng = np.random.default_rng(SEED + 17)
    N = dace.symbol('N', dace.int32)
    sdfg = dace.SDFG('gpu_half_vectors')
    for name in ('a', 'b', 'u', 'v', 'w', 'z'):
        sdfg.add_array(name, [N], dace.float16)
    st = sdfg.add_state('main')
    st.add_mapped_tasklet('eights', dict(i='0:N'),
                          inputs=dict(x=Memlet('a[i]'), y=Memlet('b[i]')),
                          code='p = x * y\nq = max(x - y, dace.float16(0))\nr = dace.float16(0.5) + x',
                          outputs=dict(p=Memlet('u[i]'), q=Memlet('v[i]'), r=Memlet('w[i]')),
                          external_edges=True)
    st2 = sdfg.add_state_after(st, 'cubes')
    st2.add_mapped_tasklet('fours', dict(i='0:N'),
                           inputs=dict(x=Memlet('a[i]')),
                           code='c = x ** 3',
                           outputs=dict(c=Memlet('z[i]')),
                           external_edges=True)

    def vectorize(sdfg):
        from dace.transformation.dataflow import Vectorization
        for state, veclen in ((st, 8), (st2, 4)):
            entry = next(n for n in state.nodes() if isinstance(n, dace.nodes.MapEntry))
            Vectorization.apply_to(sdfg, options=dict(vector_len=veclen, postamble=True),
                                   map_entry=entry, tasklet=state.out_edges(entry)[0].dst,
                                   map_exit=state.exit_node(entry))

    n = 203
    a = (rng.standard_normal(n) * 8).astype(np.float16)
    b = (rng.standard_normal(n) * 3).astype(np.float16)
    a[:40] = (a[:40].astype(np.float64) * 1e-3).astype(np.float16)  # products down to subnormals
    b[:40] = (b[:40].astype(np.float64) * 1e-3).astype(np.float16)
    u = a * b
    v = np.maximum(a - b, np.float16(0))
    w = np.float16(0.5) + a
    z = (a * a) * a
    assert all(x.dtype == np.float16 for x in (u, v, w, z))
    assert np.any((u != 0) & (np.abs(u) < np.float16(6.1e-5))), 'no subnormal product'
    write_case(sdfg, 'half_vectors', half_vectors.__doc__, {'N': n}, {'a': a, 'b': b},
               {'u': u, 'v': v, 'w': w, 'z': z}, (0, 0), ['gpu_map', 'float16', 'vector'], after_gpu=vectorize)


def nested_dynamic_map(_rng):
    """DaCe's test_nested_dynamic_map (sampled dense-dense product on CSR
    rows): D[j] += A[j] * B[i, k] * C[k, crd[j]] for the nonzeros j of row i;
    after MapInterchange the row's bounds A_pos[i]:A_pos[i + 1] are dynamic
    inputs of the k map (GPU_ThreadBlock_Dynamic) that the j map inside reads,
    and the subsets propagated out of the kernel's maps name them
    (A_crd[__map_b0:__map_e1]): each becomes the container's whole dimension."""
    rng = np.random.default_rng(SEED + 18)
    M, N, K = (dace.symbol(s) for s in 'MNK')
    nnz_A, nnz_D = dace.symbol('nnz_A'), dace.symbol('nnz_D')

    @dace.program
    def gpu_nested_dynamic_map(D_vals: dace.float32[nnz_D], A2_crd: dace.int32[nnz_A], A2_pos: dace.int32[M + 1],
                               A_vals: dace.float32[nnz_A], B: dace.float32[M, K], C: dace.float32[K, N]):
        for i in dace.map[0:M]:
            for j in dace.map[A2_pos[i]:A2_pos[i + 1]]:
                for k in dace.map[0:K]:
                    D_vals[j] += A_vals[j] * B[i, k] * C[k, A2_crd[j]]

    sdfg = gpu_nested_dynamic_map.to_sdfg(simplify=True)
    entries = {n.map.params[0]: n for st in sdfg.states() for n in st.nodes() if isinstance(n, dace.nodes.MapEntry)}
    from dace.transformation.dataflow import MapInterchange, TrivialTaskletElimination
    MapInterchange.apply_to(sdfg, outer_map_entry=entries['j'], inner_map_entry=entries['k'])
    sdfg.apply_transformations_repeated(TrivialTaskletElimination)

    def schedules(sdfg):
        entries['i'].map.schedule = dace.ScheduleType.GPU_Device
        entries['k'].map.schedule = dace.ScheduleType.GPU_ThreadBlock_Dynamic

    m, n, k = 20, 24, 16
    mask = rng.random((m, n)) < 0.25
    mask[3] = False  # an empty row
    pos = np.concatenate([[0], np.cumsum(mask.sum(axis=1))]).astype(np.int32)
    crd = np.nonzero(mask)[1].astype(np.int32)
    nnz = int(pos[-1])
    vals = rng.random(nnz).astype(np.float32)
    b = rng.random((m, k)).astype(np.float32)
    c = rng.random((k, n)).astype(np.float32)
    rows = np.repeat(np.arange(m), np.diff(pos))
    d = (vals.astype(np.float64) * np.einsum('jk,kj->j', b[rows].astype(np.float64), c[:, crd].astype(np.float64)))
    write_case(sdfg, 'nested_dynamic_map', nested_dynamic_map.__doc__,
               {'M': m, 'N': n, 'K': k, 'nnz_A': nnz, 'nnz_D': nnz},
               {'D_vals': np.zeros(nnz, np.float32), 'A2_crd': crd, 'A2_pos': pos, 'A_vals': vals, 'B': b, 'C': c},
               {'D_vals': d.astype(np.float32)}, (1e-5, 1e-6), ['gpu_map', 'dynamic_map', 'thread_block_dynamic'],
               after_gpu=schedules)


def fused_mixed_tb(_rng):
    """DaCe's kernel_fusion_cudatest::test_fused_mixedtb: one GPU_Device map
    over rows i holds two GPU_Device maps, the first with a thread-block map
    (tmp[i, 2j + k] = 5 * A[i, 31 - 2j - k], k over 2 threads), the second
    without (B[i, j] = tmp[i, j] + 1, the block's first thread). tmp, a
    GPU_Global transient of lifetime SDFG, carries values between the
    block's threads: global memory and a barrier between the maps, not one
    copy per thread."""
    rng = np.random.default_rng(SEED + 19)
    dims = (4, 32)
    sdfg = dace.SDFG('gpu_fused_mixed_tb')
    sdfg.add_array('hA', dims, dace.float64)
    sdfg.add_transient('A', dims, dace.float64, storage=dace.StorageType.GPU_Global)
    sdfg.add_transient('tmp', dims, dace.float64, storage=dace.StorageType.GPU_Global,
                       lifetime=dace.AllocationLifetime.SDFG)
    sdfg.add_transient('B', dims, dace.float64, storage=dace.StorageType.GPU_Global)
    sdfg.add_array('hB', dims, dace.float64)
    state = sdfg.add_state()
    fme, fmx = state.add_map('fused_kernel', dict(i='0:4'), dace.ScheduleType.GPU_Device)
    ime1, imx1 = state.add_map('kernel_a', dict(j='0:16'), dace.ScheduleType.GPU_Device)
    ime2, imx2 = state.add_map('kernel_b', dict(j='0:32'), dace.ScheduleType.GPU_Device)
    tbme, tbmx = state.add_map('block_a', dict(k='0:2'), dace.ScheduleType.GPU_ThreadBlock)
    t1 = state.add_tasklet('code_a', {'a'}, {'t'}, 't = a * 5')
    t2 = state.add_tasklet('code_b', {'t'}, {'b'}, 'b = t + 1')
    a, tmp, b = state.add_access('A'), state.add_access('tmp'), state.add_access('B')
    state.add_nedge(state.add_read('hA'), a, Memlet('A'))
    state.add_nedge(b, state.add_write('hB'), Memlet('B'))
    state.add_memlet_path(a, fme, ime1, tbme, t1, dst_conn='a', memlet=Memlet('A[i, 31 - (j*2 + k)]'))
    state.add_memlet_path(t1, tbmx, imx1, tmp, src_conn='t', memlet=Memlet('tmp[i, j*2 + k]'))
    state.add_memlet_path(tmp, ime2, t2, dst_conn='t', memlet=Memlet('tmp[i, j]'))
    state.add_memlet_path(t2, imx2, fmx, b, src_conn='b', memlet=Memlet('B[i, j]'))
    ha = rng.random(dims)
    write_case(sdfg, 'fused_mixed_tb', fused_mixed_tb.__doc__, {}, {'hA': ha}, {'hB': ha[:, ::-1] * 5 + 1},
               (1e-14, 1e-15), ['gpu_map', 'thread_block', 'nested_gpu_map'], gpu_transform=False)


CASES = [const_weights_1d, const_table_2d, const_nested_loop, warp_reduce, nested_symbol_buckets,
         dynamic_row_buffer, block_reduce, host_cpp_device, host_scalar_nested, dynamic_tb_rows,
         tb_runtime_size, cublas_zgemm, cusolver, cusolver_inv, cusolver_lapack, cusparse_csrmv, cufft, persistent_device_maps, half_kernel,
         half_vectors, nested_dynamic_map, fused_mixed_tb]

if __name__ == '__main__':
    import sys
    wanted = sys.argv[2:]
    scratch_dir('make-gpu-fixtures')  # DaCe writes .dacecache/ here
    rng = np.random.default_rng(SEED)
    for case in CASES:  # the later cases draw from their own generators
        if not wanted or case.__name__ in wanted:
            case(rng)

