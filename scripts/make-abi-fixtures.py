#!/usr/bin/env python3
"""Generates fixtures/corpus/untouched_array_args/: a program whose argument
list holds an array it never touches, with symbolic strides on every array.
DaCe's `arglist()` passes the untouched array but none of its stride or shape
symbols; every other argument's position depends on getting that right.

Run once with each DaCe (the case folder collects both variants):
    /work/venv-dace1/bin/python scripts/make-abi-fixtures.py   # program.sdfg (DaCe 1.0.2)
    /work/venv-dace2/bin/python scripts/make-abi-fixtures.py   # program.v2.sdfg (DaCe 2.x)
"""
import os

import numpy as np
import dace
from dace import Memlet

from fixturelib import merge_variant

HERE = os.path.dirname(os.path.abspath(__file__))

OUT = os.path.join(HERE, '..', 'fixtures', 'corpus', 'untouched_array_args')
V2 = dace.__version__.startswith('2')
VARIANT = 'program.v2.sdfg' if V2 else 'program.sdfg'


def build():
    N, M = dace.symbol('N', dace.int64), dace.symbol('M', dace.int64)
    sa, sb, sc = (dace.symbol(s, dace.int64) for s in ('__a_stride', '__b_stride', '__c_Edge_stride'))
    sdfg = dace.SDFG('untouched_array_args')
    # `shift` sorts after the untouched array's stride symbol and is passed in
    # an integer register like it: a stray parameter before it shifts it.
    sdfg.add_symbol('shift', dace.int64)
    sdfg.add_array('a', [N], dace.float64, strides=[sa])
    sdfg.add_array('b', [N], dace.float64, strides=[sb])
    sdfg.add_array('c', [M], dace.float64, strides=[sc])  # never touched
    sdfg.add_scalar('alpha', dace.float64)
    st = sdfg.add_state('main')
    st.add_mapped_tasklet('scale', dict(i='0:N'), inputs=dict(x=Memlet('a[i]'), s=Memlet('alpha[0]')),
                          code='y = s * x + N + shift', outputs=dict(y=Memlet('b[i]')), external_edges=True)
    return sdfg


def main():
    sdfg = build()
    sdfg.validate()
    os.makedirs(OUT, exist_ok=True)
    sdfg.save(os.path.join(OUT, VARIANT))
    n, sa, sb = 37, 1, 3
    rng = np.random.default_rng(20261201)
    a = rng.standard_normal(n)
    alpha = np.float64(1.5)
    b = np.zeros(n * sb)
    b[::sb] = alpha * a + n + 11
    args = [
        {'name': 'a', 'dtype': 'float64', 'shape': [n], 'kind': 'array', 'role': 'in', 'file': 'a.in.bin',
         'strides': [sa], 'span_elements': n},
        {'name': 'b', 'dtype': 'float64', 'shape': [n], 'kind': 'array', 'role': 'out', 'file': 'b.out.bin',
         'strides': [sb], 'span_elements': n * sb},
        {'name': 'c', 'dtype': 'float64', 'shape': [5], 'kind': 'array', 'role': 'in', 'file': 'c.in.bin',
         'strides': [1], 'span_elements': 5},
        {'name': 'alpha', 'dtype': 'float64', 'shape': [], 'kind': 'scalar', 'role': 'in', 'file': 'alpha.in.bin'},
    ]
    a.tofile(os.path.join(OUT, 'a.in.bin'))
    b.tofile(os.path.join(OUT, 'b.out.bin'))
    np.full(5, 7.0).tofile(os.path.join(OUT, 'c.in.bin'))
    np.array([alpha]).tofile(os.path.join(OUT, 'alpha.in.bin'))
    merge_variant(OUT, {
        'name': 'untouched_array_args',
        'description': __doc__.strip().splitlines()[0] + ' b = alpha * a + N + shift on strided arrays; c is never used.',
        'symbols': {'N': n, 'M': 5, '__a_stride': sa, '__b_stride': sb, '__c_Edge_stride': 1, 'shift': 11},
        'args': args,
        'outputs': [{'name': 'b', 'file': 'b.out.bin', 'dtype': 'float64', 'shape': [n], 'rtol': 1e-12,
                     'atol': 1e-12}],
        'default_variant': 'program.sdfg',
        'features': ['abi', 'strides', 'untouched_argument'],
    }, VARIANT, sdfg, args, 'scripts/make-abi-fixtures.py')


if __name__ == '__main__':
    main()
