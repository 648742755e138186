#!/usr/bin/env python3
"""Generates fixtures/corpus/nested_transient_parallel_map/: a nested SDFG with
transient arrays sized by a program symbol (one of Default storage, one of
Register storage), called once per iteration of a parallel CPU map, which
also copies its row into a transient of the top-level SDFG that lives in one
iteration. Every thread needs its own copy of those arrays (per-thread
workspace and persistent slots); one shared copy races.

Run with DaCe 1.0.2:
    /work/venv-dace1/bin/python scripts/make-threadslot-fixtures.py
"""
import os

import numpy as np
import dace
from dace import Memlet

from fixturelib import merge_variant

HERE = os.path.dirname(os.path.abspath(__file__))

NAME = 'nested_transient_parallel_map'
OUT = os.path.join(HERE, '..', 'fixtures', 'corpus', NAME)
VARIANT = 'program.v2.sdfg' if dace.__version__.startswith('2') else 'program.sdfg'
SEQ = dace.ScheduleType.Sequential


def inner_sdfg(N):
    inner = dace.SDFG('row_work')
    inner.add_array('a', [N], dace.float64)
    inner.add_array('o', [1], dace.float64)
    inner.add_transient('tmp', [N], dace.float64)
    inner.add_transient('w', [N], dace.float64, storage=dace.StorageType.Register)
    s0 = inner.add_state('init')
    t = s0.add_tasklet('zero', {}, {'y'}, 'y = 0.0')
    s0.add_edge(t, 'y', s0.add_write('o'), None, Memlet('o[0]'))
    s1 = inner.add_state_after(s0, 'fill')
    s1.add_mapped_tasklet('sq', dict(j='0:N'), inputs=dict(x=Memlet('a[j]')), code='y = x * x + j',
                          outputs=dict(y=Memlet('tmp[j]')), external_edges=True, schedule=SEQ)
    s2 = inner.add_state_after(s1, 'half')
    s2.add_mapped_tasklet('hf', dict(j='0:N'), inputs=dict(x=Memlet('tmp[N - 1 - j]')), code='y = 0.5 * x',
                          outputs=dict(y=Memlet('w[j]')), external_edges=True, schedule=SEQ)
    s3 = inner.add_state_after(s2, 'sum')
    s3.add_mapped_tasklet('acc', dict(j='0:N'), inputs=dict(x=Memlet('w[j]')), code='y = x * (j + 1)',
                          outputs=dict(y=Memlet('o[0]', wcr='lambda a, b: a + b')), external_edges=True,
                          schedule=SEQ)
    return inner


def build():
    M, N = dace.symbol('M', dace.int64), dace.symbol('N', dace.int64)
    sdfg = dace.SDFG(NAME)
    sdfg.add_array('A', [M, N], dace.float64)
    sdfg.add_array('out', [M], dace.float64)
    st = sdfg.add_state('main')
    me, mx = st.add_map('rows', dict(i='0:M'), schedule=dace.ScheduleType.CPU_Multicore)
    ns = st.add_nested_sdfg(inner_sdfg(N), sdfg, {'a'}, {'o'}, symbol_mapping={'N': 'N'})
    # A transient of the top-level SDFG that lives in one iteration of the parallel map.
    sdfg.add_transient('row', [N], dace.float64)
    row = st.add_access('row')
    st.add_memlet_path(st.add_read('A'), me, row, memlet=Memlet('A[i, 0:N]', other_subset='0:N'))
    st.add_edge(row, None, ns, 'a', Memlet('row[0:N]'))
    st.add_memlet_path(ns, mx, st.add_write('out'), src_conn='o', memlet=Memlet('out[i]'))
    return sdfg


def main():
    sdfg = build()
    sdfg.validate()
    os.makedirs(OUT, exist_ok=True)
    sdfg.save(os.path.join(OUT, VARIANT))
    m, n = 64, 300
    rng = np.random.default_rng(20261201)
    a = rng.standard_normal((m, n))
    j = np.arange(n)
    tmp = a * a + j
    w = 0.5 * tmp[:, ::-1]
    out = (w * (j + 1)).sum(axis=1)
    a.tofile(os.path.join(OUT, 'A.in.bin'))
    out.tofile(os.path.join(OUT, 'out.out.bin'))
    args = [
        {'name': 'A', 'dtype': 'float64', 'shape': [m, n], 'kind': 'array', 'role': 'in', 'file': 'A.in.bin',
         'strides': [n, 1], 'span_elements': m * n},
        {'name': 'out', 'dtype': 'float64', 'shape': [m], 'kind': 'array', 'role': 'out', 'file': 'out.out.bin',
         'strides': [1], 'span_elements': m},
    ]
    merge_variant(OUT, {
        'name': NAME,
        'description': __doc__.strip().splitlines()[0] + ' out[i] = sum_j 0.5 * (A[i, N-1-j]^2 + N-1-j) * (j + 1).',
        'symbols': {'M': m, 'N': n},
        'args': args,
        'outputs': [{'name': 'out', 'file': 'out.out.bin', 'dtype': 'float64', 'shape': [m], 'rtol': 1e-12,
                     'atol': 1e-9}],
        'default_variant': 'program.sdfg',
        'features': ['nested_sdfg', 'parallel_map', 'thread_private_transient'],
    }, VARIANT, sdfg, args, 'scripts/make-threadslot-fixtures.py')


if __name__ == '__main__':
    main()
