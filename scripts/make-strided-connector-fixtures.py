#!/usr/bin/env python3
"""Generates fixtures/corpus/strided_connector/: tasklets whose array
connectors have strided and tiled subsets. DaCe indexes such a connector
with `Range.absolute_strides`: index k of a dimension with step s is k * s
elements of that dimension, and a tiled range `b:e:s:t` (t consecutive
elements every s) adds one more index, the position inside the tile, after
the subset's own (unit dimensions squeezed as usual).

In a map over i = 0..3 (A is 2 x 16 x 4, C is 6 x 8, B is 16, D is 4 x 6):

* `tiles`: a << A[1, 2*i : 2*i+10 : 8 : 2, 3] (tiles of 2 every 8),
  B[4*i : 4*i+4] = 2 * [a[0, 0], a[0, 1], a[1, 0], a[1, 1]], i.e.
  A[1, 2i], A[1, 2i+1], A[1, 2i+8], A[1, 2i+9] (column 3);
* `steps`: c << C[0:6:2, i:i+4:3] (rows 0, 2, 4; columns i, i+3),
  D[i, 0:6] = c[r, k] for r < 3, k < 2: C[2r, i + 3k].

A compiler that ignores the step reads neighbouring elements, one that
treats a tiled range as contiguous reads the wrong tile, silently.

Run with DaCe 1.0.2 (program.sdfg) and DaCe 2.x (program.v2.sdfg):
    build/venv-dace/bin/python scripts/make-strided-connector-fixtures.py
    build/venv-gt4py/bin/python scripts/make-strided-connector-fixtures.py
Each run builds the SDFG with that DaCe's own code generator and checks its
outputs against the numpy references written here.
"""
import sys

import numpy as np
import dace
from dace import Memlet

from fixturelib import check_with_dace, corpus_case, scratch_dir, write_array_case

NAME = 'strided_connector'
OUT, VARIANT = corpus_case(NAME)
F64 = dace.float64


def build():
    sdfg = dace.SDFG(NAME)
    sdfg.add_array('A', [2, 16, 4], F64)
    sdfg.add_array('C', [6, 8], F64)
    sdfg.add_array('B', [16], F64)
    sdfg.add_array('D', [4, 6], F64)
    st = sdfg.add_state('s0')

    tiles = st.add_tasklet('tiles', {'a'}, {'b'}, '\n'.join(
        f'b[{k}] = a[{t}, {e}] * 2' for k, (t, e) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)])))
    me, mx = st.add_map('tile_map', dict(i='0:4'))
    st.add_memlet_path(st.add_read('A'), me, tiles, dst_conn='a', memlet=Memlet.simple('A', '1, 2*i:2*i+10:8:2, 3'))
    st.add_memlet_path(tiles, mx, st.add_write('B'), src_conn='b', memlet=Memlet.simple('B', '4*i:4*i+4'))

    steps = st.add_tasklet('steps', {'c'}, {'d'}, '\n'.join(
        f'd[{2 * r + k}] = c[{r}, {k}]' for r in range(3) for k in range(2)))
    me, mx = st.add_map('step_map', dict(i='0:4'))
    st.add_memlet_path(st.add_read('C'), me, steps, dst_conn='c', memlet=Memlet.simple('C', '0:6:2, i:i+4:3'))
    st.add_memlet_path(steps, mx, st.add_write('D'), src_conn='d', memlet=Memlet.simple('D', 'i, 0:6'))
    return sdfg


def main():
    scratch_dir('make-strided-connector-fixtures', venv_cmake=True)
    sdfg = build()
    sdfg.validate()
    rng = np.random.default_rng(20261206)
    starts = {'A': rng.random((2, 16, 4)), 'C': rng.random((6, 8)), 'B': rng.random(16), 'D': rng.random((4, 6))}
    A, C = starts['A'], starts['C']
    refs = {'B': np.zeros(16), 'D': np.zeros((4, 6))}
    for i in range(4):
        refs['B'][4 * i:4 * i + 4] = 2 * A[1, [2 * i, 2 * i + 1, 2 * i + 8, 2 * i + 9], 3]
        refs['D'][i] = [C[2 * r, i + 3 * k] for r in range(3) for k in range(2)]
    check_with_dace(sdfg, starts, refs)
    write_array_case(OUT, VARIANT, sdfg, starts, refs, name=NAME, description=__doc__.strip().split('\n\n')[0],
                     symbols={}, features=['map', 'parallel_map', 'strided_subset'], script='scripts/make-strided-connector-fixtures.py',
                     tol=0)


if __name__ == '__main__':
    sys.exit(main())
