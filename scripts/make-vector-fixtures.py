#!/usr/bin/env python3
"""Generates fixtures/corpus/vector_ops/: DaCe's vector types (dace.vector) on the CPU:

* `vecarr`: arrays X, Y, Z of `vector(float64, 4)` elements; a parallel map
  computes Z[i] = 2 * X[i] + Y[i] on whole vectors (connectors untyped, as
  DaCe's pure BLAS expansions leave them);
* `veccon`: float32 arrays A, B, C; a map of step 4 with tasklet connectors
  of type `vector(float32, 4)` reads and writes 4 consecutive elements:
  C[i:i+4] = max(A, B) + A, elementwise.

Run with DaCe 1.0.2: build/venv-dace/bin/python scripts/make-vector-fixtures.py
(DaCe's own code gives the references, checked against numpy here).
"""
import os
import sys

import numpy as np
import dace
from dace import Memlet
from dace.libraries.standard.memory import aligned_ndarray

from fixturelib import merge_variant, scratch_dir

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = 'vector_ops'
OUT = os.path.join(HERE, '..', 'fixtures', 'corpus', NAME)
VARIANT = 'program.v2.sdfg' if dace.__version__.startswith('2') else 'program.sdfg'


def build():
    N, M = (dace.symbol(s, dace.int64) for s in 'NM')
    sdfg = dace.SDFG(NAME)
    v4 = dace.vector(dace.float64, 4)
    for a in 'XYZ':
        sdfg.add_array(a, [N / 4], v4)
    for a in 'ABC':
        sdfg.add_array(a, [M], dace.float32)
    s0 = sdfg.add_state('vecarr')
    s0.add_mapped_tasklet('axpy', dict(i='0:N/4'), dict(x=Memlet('X[i]'), y=Memlet('Y[i]')),
                          'z = 2.0 * x + y', dict(z=Memlet('Z[i]')), external_edges=True)
    s1 = sdfg.add_state_after(s0, 'veccon')
    t, me, mx = s1.add_mapped_tasklet('vmax', dict(i='0:M:4'), dict(a=Memlet('A[i]'), b=Memlet('B[i]')),
                                      'c = max(a, b) + a', dict(c=Memlet('C[i]')), external_edges=True)
    f4 = dace.vector(dace.float32, 4)
    t.in_connectors['a'] = f4
    t.in_connectors['b'] = f4
    t.out_connectors['c'] = f4
    return sdfg


def main():
    scratch_dir('make-vector-fixtures', venv_cmake=True)
    sdfg = build()
    sdfg.validate()
    n, m = 32, 24
    rng = np.random.default_rng(20261203)
    ins = {'X': rng.random(n), 'Y': rng.random(n),
           'A': rng.random(m).astype(np.float32), 'B': rng.random(m).astype(np.float32)}
    refs = {'Z': 2.0 * ins['X'] + ins['Y'], 'C': np.maximum(ins['A'], ins['B']) + ins['A']}
    zeros = {'Z': np.zeros(n), 'C': np.zeros(m, np.float32)}
    # DaCe's code dereferences `dace::vec *` casts: aligned arrays.
    got = {k: aligned_ndarray(v.copy(), alignment=64) for k, v in zeros.items()}
    with dace.config.set_temporary('compiler', 'allow_view_arguments', value=True):
        sdfg.compile()(**{k: aligned_ndarray(v.copy(), alignment=64) for k, v in ins.items()}, **got, N=n, M=m)
    for name, ref in refs.items():
        assert np.allclose(got[name], ref, rtol=1e-6, atol=1e-6), (name, got[name], ref)
    os.makedirs(OUT, exist_ok=True)
    sdfg.save(os.path.join(OUT, VARIANT))
    args, outputs = [], []
    for name, v in ins.items():
        v.tofile(os.path.join(OUT, f'{name}.in.bin'))
        args.append({'name': name, 'dtype': str(v.dtype), 'shape': [v.size], 'kind': 'array', 'role': 'in',
                     'file': f'{name}.in.bin'})
    for name, ref in refs.items():
        zeros[name].tofile(os.path.join(OUT, f'{name}.in.bin'))
        got[name].tofile(os.path.join(OUT, f'{name}.out.bin'))
        args.append({'name': name, 'dtype': str(ref.dtype), 'shape': [ref.size], 'kind': 'array',
                     'role': 'inout', 'file': f'{name}.in.bin', 'out_file': f'{name}.out.bin'})
        outputs.append({'name': name, 'file': f'{name}.out.bin', 'dtype': str(ref.dtype), 'shape': [ref.size],
                        'rtol': 1e-6, 'atol': 1e-6})
    merge_variant(OUT, {
        'name': NAME,
        'description': __doc__.strip().split('\n\n')[0],
        'symbols': {'N': n, 'M': m},
        'args': args,
        'outputs': outputs,
        'default_variant': 'program.sdfg',
        'features': ['vector', 'parallel_map'],
    }, VARIANT, sdfg, args, 'scripts/make-vector-fixtures.py')


if __name__ == '__main__':
    sys.exit(main())
