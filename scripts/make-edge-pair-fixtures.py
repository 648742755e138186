#!/usr/bin/env python3
"""Generates fixtures/corpus/edge_pair_inner_data/: copies through a map's
entry and exit whose memlets name the container inside the map, not the
one outside (DaCe's `add_edge_pair(me, a, A_read, Memlet(data='a',
subset=..., other_subset=...))`): the copy goes between that container and
the one at the other end of the memlet path.

* `pairs`: in a parallel map over i, a per-iteration transient `a` (3
  elements) takes A[1:4, i] by a memlet that names `a` (other subset in A);
  `b` = 2 * a goes out to B[0:3, i] (by a memlet that names B: DaCe
  validates none through the exit that names `b`);
* `plain`: the same copies with memlets that name the outer containers
  (A, C), into C[0:3, i].

Run with DaCe 1.0.2 (program.sdfg) and DaCe 2.x (program.v2.sdfg):
    build/venv-dace/bin/python scripts/make-edge-pair-fixtures.py
    build/venv-gt4py/bin/python scripts/make-edge-pair-fixtures.py
Each run builds the SDFG with that DaCe's own code generator and checks
its outputs against the numpy references written here.
"""
import os
import sys

import numpy as np
import dace
from dace import Memlet

from fixturelib import scratch_dir, write_array_case

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = 'edge_pair_inner_data'
OUT = os.path.join(HERE, '..', 'fixtures', 'corpus', NAME)
VARIANT = 'program.v2.sdfg' if dace.__version__.startswith('2') else 'program.sdfg'
F64 = dace.float64


def through_map(sdfg, label, inner_named, out):
    """A state `label`: a map over i copies A[1:4, i] into a transient, doubles
    it into another and copies that to `out`[0:3, i]; the first copy's memlet
    names the transient (`inner_named`) or A."""
    s = sdfg.add_state(label)
    a, b = f'{label}_a', f'{label}_b'
    sdfg.add_transient(a, [3], F64)
    sdfg.add_transient(b, [3], F64)
    me, mx = s.add_map(f'{label}_map', dict(i='0:20'), schedule=dace.ScheduleType.CPU_Multicore)
    an, bn = s.add_access(a), s.add_access(b)
    if inner_named:
        into = Memlet(data=a, subset='0:3', other_subset='1:4, i')
    else:
        into = Memlet(data='A', subset='1:4, i', other_subset='0:3')
    # Out through the exit by a memlet path (DaCe's add_edge_pair would
    # give the edge outside the memlet of the edge inside).
    s.add_edge_pair(me, an, s.add_read('A'), into)
    s.add_mapped_tasklet(f'{label}_dbl', dict(j='0:3'), dict(x=Memlet(f'{a}[j]')), 'y = 2 * x',
                         dict(y=Memlet(f'{b}[j]')), input_nodes={a: an}, output_nodes={b: bn},
                         external_edges=True)
    s.add_memlet_path(bn, mx, s.add_write(out), memlet=Memlet(f'{out}[0:3, i]'))
    return s


def build():
    sdfg = dace.SDFG(NAME)
    sdfg.add_array('A', [20, 20], F64)
    sdfg.add_array('B', [3, 20], F64)
    sdfg.add_array('C', [3, 20], F64)
    s1 = through_map(sdfg, 'pairs', True, 'B')
    s2 = through_map(sdfg, 'plain', False, 'C')
    sdfg.add_edge(s1, s2, dace.InterstateEdge())
    sdfg.fill_scope_connectors()
    return sdfg


def main():
    scratch_dir('make-edge-pair-fixtures', venv_cmake=True)
    sdfg = build()
    sdfg.validate()
    rng = np.random.default_rng(20261206)
    a = rng.random((20, 20))
    refs = {'B': 2 * a[1:4, :], 'C': 2 * a[1:4, :]}
    got = {name: np.zeros(ref.shape) for name, ref in refs.items()}
    sdfg.compile()(A=a.copy(), **got)
    for name, ref in refs.items():
        assert np.allclose(got[name], ref, rtol=1e-12, atol=1e-12), (name, got[name], ref)
    starts = {'A': a, **{name: np.zeros(ref.shape) for name, ref in refs.items()}}
    write_array_case(OUT, VARIANT, sdfg, starts, refs, name=NAME, description=__doc__.strip().split('\n\n')[0],
                     symbols={}, features=['copy', 'parallel_map', 'transients', '2d'],
                     script='scripts/make-edge-pair-fixtures.py')

if __name__ == '__main__':
    sys.exit(main())
