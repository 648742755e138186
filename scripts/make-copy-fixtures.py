#!/usr/bin/env python3
"""Generates three corpus fixtures (fixtures/corpus/<case>/, format of
fixtures/corpus/README.md) for one class of bug DaCe 1.0.2's test suite found:
a copy edge whose memlet has no `other_subset` writes the other container
from its origin (DaCe's `memlet_copy_to_absolute_strides`), not at the
memlet's own indices. Reading `a[5:15, 6:16]` into a 10x10 `b` at
`b[5:15, 6:16]` ran past `b` (heap corruption).

* `copy_no_other_subset`: plain copy edges without other subset (a 2-D
  slice into a smaller array, a strided 3-D slice, a column-major source,
  the data on the destination side, a slice into an array of another rank);
  variant `cpu_copytomap.sdfg` is the same after DaCe's `CopyToMap` on the
  first and third copies (maps whose memlets index with expressions).
* `symbol_sized_copy_in_loop`: a heap transient of shape [N-3, N-1-i], `i`
  assigned on interstate edges, filled by `A[1:N-2, i+1:N]` (no other
  subset), then reduced (DaCe's symbol-dependent transients).
* `fused_reduce_transient`: two Reduce nodes expanded (`ReduceExpansion`,
  with an in-transient) and fused with a map (`MultiExpansion`,
  `SubgraphFusion`): inside the fused map `A[0:M, i]` is copied into a
  transient of shape [M, 1] (no other subset).

* `dynamic_pointer_output`: tasklets that assign an output connector by
  name under an `if` (a dynamic memlet): a pointer-typed connector of one
  element in a parallel map, and a connector whose memlet covers three
  elements (`C[2:5]`): DaCe writes the subset's first element
  (`DaCeKeywordRemover.visit_Assign`); sdfgc refused the second.

Run with DaCe 1.0.2:  /work/venv-dace1/bin/python scripts/make-copy-fixtures.py [OUTDIR]
(default OUTDIR: fixtures/corpus). Reference outputs come from numpy; DaCe's
own compiled CPU library is run on the same inputs and must reproduce them
(`dace_check` in case.json). The ABI entries are parsed from DaCe's code.
"""
import copy
import os

import numpy as np
import dace
from dace import Memlet
from dace.libraries import standard
from dace.sdfg.graph import SubgraphView
from dace.transformation.dataflow import CopyToMap, ReduceExpansion
from dace.transformation.subgraph import MultiExpansion, SubgraphFusion
import dace.transformation.subgraph.helpers as helpers

from fixturelib import abi_entry, generator_info, out_dir, output_entry, scratch_dir, write_json

SEED = 20261202
OUT = out_dir(os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'corpus'))
N = dace.symbol('N', dace.int32)
M = dace.symbol('M', dace.int32)


def write_case(name, description, variants, symbols, inputs, expected, tol, features, notes=''):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    args = []
    for n in [k for k, v in variants['program.sdfg'].arglist().items() if isinstance(v, dace.data.Array)]:
        v = inputs[n]
        v.tofile(os.path.join(d, f'{n}.in.bin'))
        a = {'name': n, 'dtype': str(v.dtype), 'shape': list(v.shape), 'kind': 'array', 'file': f'{n}.in.bin',
             'role': 'in'}
        if n in expected:
            a['role'] = 'inout'
            a['out_file'] = f'{n}.out.bin'
        args.append(a)
    for n, v in expected.items():
        v.tofile(os.path.join(d, f'{n}.out.bin'))
    abi, checks = {}, {}
    for fname, sdfg in variants.items():
        sdfg.save(os.path.join(d, fname))
        abi[fname] = abi_entry(sdfg, args, external=True, other_exports=True)
        print('  running DaCe on', name, fname, flush=True)
        vals = {n: v.copy() for n, v in inputs.items()}
        sdfg.compile()(**vals, **symbols)
        errs = {n: float(np.max(np.abs(vals[n] - expected[n]))) for n in expected}
        ok = all(np.allclose(vals[n], expected[n], rtol=tol[0], atol=tol[1]) for n in expected)
        assert ok, (fname, errs)
        checks[fname] = {'dace_compile': 'ok', 'outputs_match_numpy': ok, 'max_abs_err': errs}
    case = {
        'name': name, 'description': description, 'symbols': symbols, 'args': args,
        'outputs': [output_entry(n, v, tol) for n, v in expected.items()],
        'abi': abi, 'default_variant': 'program.sdfg', 'variants': {f: True for f in variants},
        'external_arrays': {}, 'features': features, 'notes': notes,
        'sdfg_name': variants['program.sdfg'].name, 'dace_check': checks,
        'generator': generator_info('scripts/make-copy-fixtures.py', SEED),
    }
    write_json(os.path.join(d, 'case.json'), case)
    print('wrote', d)


def make_copy_no_other_subset(rng):
    sdfg = dace.SDFG('copy_no_other_subset')
    for n, shape, strides in [('a', (20, 20), None), ('b', (10, 10), None), ('c', (8, 9, 10), None),
                              ('d', (3, 4, 5), None), ('f', (3, 2), (1, 4)), ('g', (2, 2), None),
                              ('h', (12, 12), None), ('k', (100,), None), ('p', (6, 6), None)]:
        sdfg.add_array(n, shape, dace.float64, strides=strides, total_size=12 if n == 'f' else None)
    prev = None
    for k, (src, dst, memlet) in enumerate([('a', 'b', 'a[5:15, 6:16]'),           # 2-D slice into a smaller array
                                            ('c', 'd', 'c[2:5, 1:9:2, 3:8]'),      # strided 3-D slice
                                            ('f', 'g', 'f[1:3, 0:2]'),             # column-major, padded source
                                            ('a', 'p', 'p[1:6, 0:5]'),             # data on the destination
                                            ('h', 'k', 'h[1:11, 2:12]')]):  # into another rank
        st = sdfg.add_state(f'copy{k}', is_start_block=(k == 0))
        st.add_nedge(st.add_read(src), st.add_write(dst), Memlet(memlet))
        if prev is not None:
            sdfg.add_edge(prev, st, dace.InterstateEdge())
        prev = st
    sdfg.validate()
    c2m = copy.deepcopy(sdfg)
    # CopyToMap on the copies whose meaning it keeps (DaCe 1.0.2's CopyToMap drops
    # the step of a strided slice and the offset of the side it delinearizes).
    for st in c2m.states():
        if st.label in ('copy0', 'copy2'):
            src, dst = [n for n in st.nodes() if st.out_degree(n)][0], [n for n in st.nodes() if st.in_degree(n)][0]
            CopyToMap.apply_to(c2m, options={'ignore_strides': True}, a=src, b=dst)
    c2m.validate()
    inputs = {n: rng.random(desc.total_size) if n == 'f' else rng.random(desc.shape) for n, desc in sdfg.arrays.items()}
    ref = {n: v.copy() for n, v in inputs.items()}
    ref['b'][:] = inputs['a'][5:15, 6:16]
    ref['d'][:] = inputs['c'][2:5, 1:9:2, 3:8]
    fv = np.lib.stride_tricks.as_strided(inputs['f'], (3, 2), (8, 32))
    ref['g'][:] = fv[1:3, 0:2]
    ref['p'][1:6, 0:5] = inputs['a'][0:5, 0:5]
    ref['k'][:] = inputs['h'][1:11, 2:12].reshape(100)
    write_case('copy_no_other_subset',
               'copy edges whose memlet has no other subset (a[5:15, 6:16] into a 10x10 b, a strided 3-D slice, '
               'a column-major padded source, the data on the destination side, a 2-D slice into a 1-D array): the '
               'other side is walked from its origin; cpu_copytomap.sdfg: the same after DaCe\'s CopyToMap',
               {'program.sdfg': sdfg, 'cpu_copytomap.sdfg': c2m}, {}, inputs,
               {n: ref[n] for n in ['b', 'd', 'g', 'p', 'k']}, (0, 0), ['copy', 'slices', 'strided', 'transform'])


def make_symbol_sized_copy_in_loop(rng):
    i = dace.symbol('i', dace.int32)
    sdfg = dace.SDFG('symbol_sized_copy_in_loop')
    sdfg.add_array('A', [N, N], dace.float64)
    sdfg.add_array('B', [N], dace.float64)
    _, T = sdfg.add_transient('T', [N - 3, N - 1 - i], dace.float64, storage=dace.StorageType.CPU_Heap)
    sdfg.add_transient('s', [1], dace.float64, storage=dace.StorageType.Register)
    init = sdfg.add_state('init', is_start_block=True)
    guard, fill, red, store, end = (sdfg.add_state(n) for n in ['guard', 'fill', 'red', 'store', 'end'])
    sdfg.add_edge(init, guard, dace.InterstateEdge(assignments=dict(i='0')))
    sdfg.add_edge(guard, fill, dace.InterstateEdge('i < N - 1'))
    sdfg.add_edge(guard, end, dace.InterstateEdge('i >= N - 1'))
    sdfg.add_edge(fill, red, dace.InterstateEdge())
    sdfg.add_edge(red, store, dace.InterstateEdge())
    sdfg.add_edge(store, guard, dace.InterstateEdge(assignments=dict(i='i + 1')))
    fill.add_nedge(fill.add_read('A'), fill.add_write('T'), Memlet('A[1:N-2, i+1:N]'))
    r = standard.Reduce('sum', wcr='lambda a, b: a + b', identity=0)
    red.add_node(r)
    red.add_nedge(red.add_read('T'), r, Memlet.from_array('T', T))
    red.add_nedge(r, red.add_write('s'), Memlet('s[0]'))
    store.add_nedge(store.add_read('s'), store.add_write('B'), Memlet('B[i]'))
    sdfg.validate()
    n = 12
    A = rng.random((n, n))
    B = np.zeros(n)
    ref = B.copy()
    for k in range(n - 1):
        ref[k] = A[1:n - 2, k + 1:n].sum()
    write_case('symbol_sized_copy_in_loop',
               'a heap transient of shape [N-3, N-1-i] (i assigned on interstate edges) filled by a copy '
               'A[1:N-2, i+1:N] without other subset, then reduced: the copy writes T from its origin',
               {'program.sdfg': sdfg}, {'N': n}, {'A': A, 'B': B}, {'B': ref}, (1e-12, 1e-12),
               ['loop', 'symbol_sized_transient', 'copy', 'library_node'])


@dace.program
def fused_reduce_transient(A: dace.float64[M, N], B: dace.float64[M, N], C: dace.float64[N]):
    t1 = dace.reduce(lambda a, b: max(a, b), A, identity=-1e30, axis=0)
    t2 = dace.reduce(lambda a, b: a + b, B, identity=0, axis=0)
    for i in dace.map[0:N]:
        with dace.tasklet:
            x << t1[i]
            y << t2[i]
            z >> C[i]
            z = x - 2 * y


def make_fused_reduce_transient(rng):
    sdfg = fused_reduce_transient.to_sdfg(simplify=True)
    state = sdfg.nodes()[0]
    for node in [n for n in state.nodes() if isinstance(n, standard.Reduce)]:
        r = ReduceExpansion()
        r.setup_match(sdfg, sdfg.cfg_id, sdfg.node_id(state), {ReduceExpansion.reduce: state.node_id(node)}, 0)
        r.create_in_transient = True
        r.expand(sdfg, state, node)
    expansion = MultiExpansion()
    expansion.setup_match(SubgraphView(state, state.nodes()))
    expansion.expand(sdfg, state, helpers.get_outermost_scope_maps(sdfg, state, SubgraphView(state, state.nodes())))
    fusion = SubgraphFusion()
    fusion.setup_match(SubgraphView(state, state.nodes()))
    fusion.apply(sdfg)
    sdfg.validate()
    maps = [n for n in state.nodes() if isinstance(n, dace.nodes.MapEntry) and state.entry_node(n) is None]
    assert len(maps) == 1, maps
    m, n = 9, 7
    A, B, C = rng.random((m, n)), rng.random((m, n)), np.zeros(n)
    write_case('fused_reduce_transient',
               'two reductions over axis 0 expanded with in-transients (ReduceExpansion) and fused with a map '
               '(MultiExpansion, SubgraphFusion): each iteration copies A[0:M, i] into its own [M, 1] transient',
               {'program.sdfg': sdfg}, {'M': m, 'N': n}, {'A': A, 'B': B, 'C': C},
               {'C': A.max(axis=0) - 2 * B.sum(axis=0)}, (1e-12, 1e-12),
               ['reduce', 'transform', 'copy', 'map_fusion'])


def make_dynamic_pointer_output(rng):
    sdfg = dace.SDFG('dynamic_pointer_output')
    for n in 'ABC':
        sdfg.add_array(n, [N], dace.float64)
    st = sdfg.add_state('in_map')
    me, mx = st.add_map('m', dict(i='0:N'))
    t = st.add_tasklet('t', {'a'}, {'__out'}, 'if a > 0.5:\n    __out = a * 2')
    t.out_connectors['__out'] = dace.pointer(dace.float64)
    st.add_memlet_path(st.add_read('A'), me, t, dst_conn='a', memlet=Memlet('A[i]'))
    st.add_memlet_path(t, mx, st.add_write('B'), src_conn='__out', memlet=Memlet('B[i]', dynamic=True))
    st2 = sdfg.add_state_after(st, 'three_elements')
    t2 = st2.add_tasklet('t2', {'a'}, {'__o'}, 'if a > 0.0:\n    __o = a + 1')
    st2.add_edge(st2.add_read('A'), None, t2, 'a', Memlet('A[0]'))
    st2.add_edge(t2, '__o', st2.add_write('C'), None, Memlet('C[2:5]', dynamic=True))
    sdfg.validate()
    n = 13
    A, B, C = rng.random(n), rng.random(n), rng.random(n)
    refB, refC = B.copy(), C.copy()
    refB[A > 0.5] = A[A > 0.5] * 2
    refC[2] = A[0] + 1
    write_case('dynamic_pointer_output',
               'tasklet outputs assigned by name under an if (dynamic memlets): a pointer-typed one-element '
               'connector in a parallel map, and a three-element memlet C[2:5] whose first element is written',
               {'program.sdfg': sdfg}, {'N': n}, {'A': A, 'B': B, 'C': C},
               {'B': refB, 'C': refC}, (0, 0), ['tasklet_if', 'dynamic_memlet', 'parallel_map'])


def make_tiled_copy(rng):
    """Copies whose ranges are tiled (`begin:end:step:tile`: `tile` consecutive
    elements at every step), as DaCe's strided_range_copy test writes them."""
    sdfg = dace.SDFG('tiled_copy')
    for n, shape in [('A', (2, 16, 4)), ('B', (4, )), ('C', (2, 16, 4)), ('D', (40, 40)), ('E', (6, 6)),
                     ('F', (40, 40)), ('V', [N]), ('W', [N])]:
        sdfg.add_array(n, shape, dace.float64)
    prev = None
    for k, (src, dst, memlet) in enumerate([
            ('A', 'B', 'A[1, 0:10:8:2, 3]'),  # 4 elements of a 3-D array into a 1-D one
            ('B', 'C', 'C[1, 0:10:8:2, 3]'),  # the data on the destination
            ('D', 'E', 'D[3:30:16:3, 2:29:16:3]'),  # 2-D tiles (a blocked tile pattern)
            ('E', 'F', 'F[3:30:16:3, 2:29:16:3]'),
            ('V', 'W', 'V[1:N-3:4:2]')]):  # symbolic, into W from its origin
        st = sdfg.add_state(f'copy{k}', is_start_block=(k == 0))
        st.add_nedge(st.add_read(src), st.add_write(dst), Memlet(memlet))
        if prev is not None:
            sdfg.add_edge(prev, st, dace.InterstateEdge())
        prev = st
    sdfg.validate()
    n = 22
    inputs = {k: rng.random(desc.shape if k not in 'VW' else (n, )) for k, desc in sdfg.arrays.items()}
    ref = {k: v.copy() for k, v in inputs.items()}

    def tiled(start, stop, step, tile):
        return [i for b in range(start, stop, step) for i in range(b, b + tile)]

    ref['B'][:] = inputs['A'][1, tiled(0, 10, 8, 2), 3]
    ref['C'][1, tiled(0, 10, 8, 2), 3] = ref['B']
    rows, cols = tiled(3, 30, 16, 3), tiled(2, 29, 16, 3)
    ref['E'][:] = inputs['D'][np.ix_(rows, cols)]
    ref['F'][np.ix_(rows, cols)] = ref['E']
    ref['W'][:len(tiled(1, n - 3, 4, 2))] = inputs['V'][tiled(1, n - 3, 4, 2)]
    write_case('tiled_copy',
               'copies over tiled ranges (begin:end:step:tile, `tile` consecutive elements at every step): a 3-D '
               'source into a 1-D array and back, 2-D tiles of a blocked pattern into a smaller array and back, '
               'a symbolic tiled range into an array from its origin',
               {'program.sdfg': sdfg}, {'N': n}, inputs, {k: ref[k] for k in ['B', 'C', 'E', 'F', 'W']}, (0, 0),
               ['copy', 'tiled', 'strided'])


if __name__ == '__main__':
    scratch_dir('make-copy-fixtures')  # DaCe writes .dacecache/ here
    rng = np.random.default_rng(SEED)
    make_copy_no_other_subset(rng)
    make_symbol_sized_copy_in_loop(rng)
    make_fused_reduce_transient(rng)
    make_dynamic_pointer_output(np.random.default_rng(SEED))  # its own stream: regenerating it alone gives the same files
    make_tiled_copy(np.random.default_rng(SEED + 1))
