#!/usr/bin/env python3
"""Generates fixtures/corpus/guarded_edge_read/: tasklets whose input
memlets reach past the array's end at the edge of the map (`a[i+1]`,
`a[i+2]` for i in 0:N) and whose code reads those inputs only where they
are in bounds, as DaCe's Stencil expansion and gt4py's skip-value
reductions write them: in a conditional expression (`r if i < N - 1 else
0`), behind `and`, and in an `if` block. DaCe binds inputs as references, so the read happens only
under the code's condition; a value read where the tasklet starts reads
outside the array (AddressSanitizer reports it).

Run with DaCe 1.0.2 (program.sdfg) and DaCe 2.x (program.v2.sdfg):
    build/venv-dace/bin/python scripts/make-guarded-read-fixtures.py
    build/venv-gt4py/bin/python scripts/make-guarded-read-fixtures.py
Each run builds the SDFG with that DaCe's own code generator and checks its
outputs against the numpy references written here.
"""
import os
import sys

import numpy as np
import dace
from dace import Memlet

from fixturelib import merge_variant, output_entry, scratch_dir, write_array_args

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = 'guarded_edge_read'
OUT = os.path.join(HERE, '..', 'fixtures', 'corpus', NAME)
VARIANT = 'program.v2.sdfg' if dace.__version__.startswith('2') else 'program.sdfg'


def inputs(st, a, me, t, conns):
    """The whole of `a` into the map (what DaCe's Stencil expansion
    passes), each connector's element inside it (past the end at the
    map's edge: the code reads it only where it is in bounds)."""
    me.add_in_connector('IN_a')
    me.add_out_connector('OUT_a')
    st.add_edge(a, None, me, 'IN_a', Memlet('a[0:N]'))
    for conn, idx in conns:
        st.add_edge(me, 'OUT_a', t, conn, Memlet(f'a[{idx}]'))


def build():
    sdfg = dace.SDFG(NAME)
    sdfg.add_array('a', ['N'], dace.float64)
    sdfg.add_array('s', ['N'], dace.float64)
    sdfg.add_array('t', ['N'], dace.float64)
    st = sdfg.add_state()
    a = st.add_read('a')
    me, mx = st.add_map('smooth', dict(i='0:N'), schedule=dace.ScheduleType.CPU_Multicore)
    t = st.add_tasklet('smooth', {'c', 'r', 'r2'}, {'o'},
                       'o = c + (r if i < N - 1 else 0.0) + (r2 if i < N - 2 and r > 0.0 else 0.0)')
    inputs(st, a, me, t, (('c', 'i'), ('r', 'i + 1'), ('r2', 'i + 2')))
    st.add_memlet_path(t, mx, st.add_write('s'), src_conn='o', memlet=Memlet('s[i]'))
    me, mx = st.add_map('shift', dict(i='0:N'), schedule=dace.ScheduleType.CPU_Multicore)
    t = st.add_tasklet('shift', {'c', 'r'}, {'o'},
                       'if i < N - 1:\n    o = r - c\nelse:\n    o = -c')
    inputs(st, a, me, t, (('c', 'i'), ('r', 'i + 1')))
    st.add_memlet_path(t, mx, st.add_write('t'), src_conn='o', memlet=Memlet('t[i]'))
    return sdfg


def main():
    scratch_dir('make-guarded-read-fixtures', venv_cmake=True)
    sdfg = build()
    sdfg.validate()
    n = 29
    a = np.random.default_rng(20261203).random(n)
    pad = np.concatenate([a, [0.0, 0.0]])
    refs = {'s': a + pad[1:-1] + pad[2:], 't': np.append(a[1:], 0.0) - a}
    got = {'a': a.copy(), 's': np.zeros(n), 't': np.zeros(n)}
    sdfg.compile()(**got, N=n)
    for k, ref in refs.items():
        assert np.allclose(got[k], ref), (k, got[k], ref)
    os.makedirs(OUT, exist_ok=True)
    sdfg.save(os.path.join(OUT, VARIANT))
    args = write_array_args(OUT, ['a', 's', 't'], {'a': a}, refs)
    merge_variant(OUT, {
        'name': NAME,
        'description': __doc__.strip().split('\n\n')[0],
        'symbols': {'N': n},
        'args': args,
        'outputs': [output_entry(k, v, (1e-12, 1e-12)) for k, v in refs.items()],
        'default_variant': 'program.sdfg',
        'features': ['parallel_map', 'conditional_read'],
    }, VARIANT, sdfg, args, 'scripts/make-guarded-read-fixtures.py')


if __name__ == '__main__':
    sys.exit(main())
