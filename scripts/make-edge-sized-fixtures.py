#!/usr/bin/env python3
"""Generates fixtures/corpus/edge_sized_transient/: a transient whose size
symbol is assigned by the interstate edge that reads the transient itself
(DaCe's `test_allocation_varying`: `N = tmp1[0]`). The transient must live
until that edge has read it, and must not be used at the new size; the next
transient sized by the same symbol is allocated with its new value.

States, in order (K is an input, K = [5, 2, 7, 1]):

* `start`, then an edge assigning `N = 3`;
* `fill`: T1[N] (3 elements) = 2 * K[0:3] = [10, 4, 14];
* the edge `fill -> use` assigns `N = T1[1]` (4): T1 is read there, after
  `fill`, and never again;
* `use`: T2[N, N] (4 x 4, sized with the new N) = i * N + j, copied into
  B[i * N + j] by a second map: B = 0..15;
* `done`: E[0] = N (4).

A compiler that frees T1 at the end of `fill` reads freed memory on the
edge (ASan); one that allocates T1 for the whole program, or T2 before the
edge, sizes them with the wrong N; refusing it (as sdfgc did) builds nothing.

Run with DaCe 1.0.2 (program.sdfg) and DaCe 2.x (program.v2.sdfg):
    build/venv-dace/bin/python scripts/make-edge-sized-fixtures.py
    build/venv-gt4py/bin/python scripts/make-edge-sized-fixtures.py
Each run builds the SDFG with that DaCe's own code generator and checks its
outputs against the references written here.
"""
import sys

import numpy as np
import dace
from dace import Memlet

from fixturelib import check_with_dace, corpus_case, scratch_dir, write_array_case

NAME = 'edge_sized_transient'
OUT, VARIANT = corpus_case(NAME)
I64 = dace.int64


def build():
    N = dace.symbol('N', I64)
    sdfg = dace.SDFG(NAME)
    sdfg.add_symbol('N', I64)
    sdfg.add_array('K', [4], I64)
    sdfg.add_array('B', [16], I64)
    sdfg.add_array('E', [1], I64)
    sdfg.add_transient('T1', [N], I64)
    sdfg.add_transient('T2', [N, N], I64)

    start = sdfg.add_state('start', is_start_state=True)
    fill = sdfg.add_state('fill')
    use = sdfg.add_state('use')
    done = sdfg.add_state('done')
    sdfg.add_edge(start, fill, dace.InterstateEdge(assignments={'N': '3'}))
    sdfg.add_edge(fill, use, dace.InterstateEdge(assignments={'N': 'T1[1]'}))
    sdfg.add_edge(use, done, dace.InterstateEdge())

    fill.add_mapped_tasklet('double', {'i': '0:N'}, {'k': Memlet('K[i]')}, 'o = 2 * k',
                            {'o': Memlet('T1[i]')}, external_edges=True)
    t2 = use.add_access('T2')
    use.add_mapped_tasklet('ramp', {'i': '0:N', 'j': '0:N'}, {}, 'o = i * N + j', {'o': Memlet('T2[i, j]')},
                           external_edges=True, output_nodes={'T2': t2})
    use.add_mapped_tasklet('flatten', {'i': '0:N', 'j': '0:N'}, {'t': Memlet('T2[i, j]')}, 'o = t',
                           {'o': Memlet('B[i * N + j]')}, external_edges=True, input_nodes={'T2': t2})
    t = done.add_tasklet('last_n', {}, {'o'}, 'o = N')
    done.add_edge(t, 'o', done.add_write('E'), None, Memlet('E[0]'))
    return sdfg


def main():
    scratch_dir('make-edge-sized-fixtures', venv_cmake=True)
    sdfg = build()
    sdfg.validate()
    rng = np.random.default_rng(20261206)
    starts = {'K': np.array([5, 2, 7, 1], np.int64), 'B': rng.integers(-100, 100, 16),
              'E': rng.integers(-100, 100, 1)}
    refs = {'B': np.arange(16, dtype=np.int64), 'E': np.array([4], np.int64)}
    check_with_dace(sdfg, starts, refs)
    write_array_case(OUT, VARIANT, sdfg, starts, refs, name=NAME, description=__doc__.strip().split('\n\n')[0],
                     symbols={}, features=['interstate_symbol', 'symbolic_transient', 'parallel_map'],
                     script='scripts/make-edge-sized-fixtures.py', tol=0)


if __name__ == '__main__':
    sys.exit(main())
