#!/usr/bin/env python3
"""Generates fixtures/corpus/tasklet_chain/: tasklets that hand values to
other tasklets directly, by edges whose memlet names no data (DaCe's
code->code edges: DaCe keeps each value in a variable of the scope both
tasklets share).

* `chain`: in a parallel map, t1 computes `b = 5 * a` and `b3 = b`
  (untyped) and `b2 = a + 1` (a float64 connector); t2 (`d = 2 * c`) reads
  b, t3 (a typed float input, `g = e - 1`) b3, a C++ tasklet b2
  (`h = c2 * 3;`); t2 hands d and c on to t5 (`o = d + c`), a chain of
  three (a connector has one edge out in DaCe);
* `nested`: a map k in 0:2 over a nested SDFG whose map over half the rows
  chains two tasklets (`bb = 5 * aa`, then `dd = 2 * cc`) on int32 data.

Run with DaCe 1.0.2 (program.sdfg) and DaCe 2.x (program.v2.sdfg):
    build/venv-dace/bin/python scripts/make-tasklet-chain-fixtures.py
    build/venv-gt4py/bin/python scripts/make-tasklet-chain-fixtures.py
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
NAME = 'tasklet_chain'
OUT = os.path.join(HERE, '..', 'fixtures', 'corpus', NAME)
VARIANT = 'program.v2.sdfg' if dace.__version__.startswith('2') else 'program.sdfg'
N = dace.symbol('N', dace.int32)
F64 = dace.float64


def halves():
    """A nested SDFG: rows k*N/2 + i of `a`, times 10, into `b`, through
    two chained tasklets."""
    inner = dace.SDFG('halves')
    inner.add_array('a', [N], dace.int32)
    inner.add_array('b', [N], dace.int32)
    inner.add_symbol('k', dace.int64)
    s = inner.add_state('chain')
    me, mx = s.add_map('rows', dict(i='0:N/2'))
    t1 = s.add_tasklet('times5', {'aa': None}, {'bb': None}, 'bb = 5 * aa')
    s.add_memlet_path(s.add_read('a'), me, t1, dst_conn='aa', memlet=Memlet('a[k*N/2+i]'))
    t2 = s.add_tasklet('times2', {'cc': None}, {'dd': None}, 'dd = 2 * cc')
    s.add_edge(t1, 'bb', t2, 'cc', Memlet())
    s.add_memlet_path(t2, mx, s.add_write('b'), src_conn='dd', memlet=Memlet('b[k*N/2+i]'))
    return inner


def build():
    sdfg = dace.SDFG(NAME)
    sdfg.add_array('A', [N], F64)
    for o in ('B', 'G', 'H', 'O'):
        sdfg.add_array(o, [N], F64)
    sdfg.add_array('X', [N], dace.int32)
    sdfg.add_array('Y', [N], dace.int32)

    s = sdfg.add_state('chain')
    me, mx = s.add_map('m', dict(i='0:N'), schedule=dace.ScheduleType.CPU_Multicore)
    t1 = s.add_tasklet('t1', {'a': None}, {'b': None, 'b2': F64, 'b3': None}, 'b = 5 * a\nb2 = a + 1\nb3 = b')
    s.add_memlet_path(s.add_read('A'), me, t1, dst_conn='a', memlet=Memlet('A[i]'))
    t2 = s.add_tasklet('t2', {'c': None}, {'d': None, 'd5': None, 'p': None}, 'd = 2 * c\nd5 = d\np = c')
    t3 = s.add_tasklet('t3', {'e': F64}, {'g': None}, 'g = e - 1')
    t4 = s.add_tasklet('t4', {'c2': F64}, {'h': F64}, 'h = c2 * 3;', language=dace.Language.CPP)
    t5 = s.add_tasklet('t5', {'d': None, 'c': None}, {'o': None}, 'o = d + c')
    s.add_edge(t1, 'b', t2, 'c', Memlet())
    s.add_edge(t1, 'b3', t3, 'e', Memlet())
    s.add_edge(t1, 'b2', t4, 'c2', Memlet())
    s.add_edge(t2, 'd5', t5, 'd', Memlet())
    s.add_edge(t2, 'p', t5, 'c', Memlet())
    for t, conn, out in ((t2, 'd', 'B'), (t3, 'g', 'G'), (t4, 'h', 'H'), (t5, 'o', 'O')):
        s.add_memlet_path(t, mx, s.add_write(out), src_conn=conn, memlet=Memlet(f'{out}[i]'))

    s = sdfg.add_state_after(s, 'nested')
    me, mx = s.add_map('halves', dict(k='0:2'), schedule=dace.ScheduleType.CPU_Multicore)
    if VARIANT == 'program.sdfg':
        ns = s.add_nested_sdfg(halves(), sdfg, {'a': None}, {'b': None}, symbol_mapping={'N': 'N', 'k': 'k'})
    else:  # DaCe 2 has no `parent` argument
        ns = s.add_nested_sdfg(halves(), {'a': None}, {'b': None}, symbol_mapping={'N': 'N', 'k': 'k'})
    s.add_memlet_path(s.add_read('X'), me, ns, dst_conn='a', memlet=Memlet('X[0:N]'))
    s.add_memlet_path(ns, mx, s.add_write('Y'), src_conn='b', memlet=Memlet('Y[0:N]'))
    sdfg.fill_scope_connectors()
    return sdfg


def main():
    scratch_dir('make-tasklet-chain-fixtures', venv_cmake=True)
    sdfg = build()
    sdfg.validate()
    n = 20
    rng = np.random.default_rng(20261206)
    a = rng.random(n) * 4 - 2
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    b = 5 * a
    refs = {'B': 2 * b, 'G': b - 1, 'H': (a + 1) * 3, 'O': 2 * b + b, 'Y': 10 * x}
    got = {name: np.zeros(n, ref.dtype) for name, ref in refs.items()}
    sdfg.compile()(A=a.copy(), X=x.copy(), **got, N=n)
    for name, ref in refs.items():
        assert np.allclose(got[name], ref, rtol=1e-12, atol=1e-12), (name, got[name], ref)
    starts = {'A': a, 'X': x, **{name: np.zeros(n, ref.dtype) for name, ref in refs.items()}}
    write_array_case(OUT, VARIANT, sdfg, starts, refs, name=NAME, description=__doc__.strip().split('\n\n')[0],
                     symbols={'N': n}, features=['nested_sdfg', 'parallel_map', 'explicit_tasklet', 'tasklet_chain'],
                     script='scripts/make-tasklet-chain-fixtures.py')

if __name__ == '__main__':
    sys.exit(main())
